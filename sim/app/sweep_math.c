/* sweep_math.c: the numbers of a study: derived seeds, pool-share vectors (Zipf, HHI, Nakamoto) and the
 * statistics of a table cell. */
#include "sweep.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

/* ---- Seeds ---- */

uint64_t sim_sweep_splitmix64(uint64_t x) {
  uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

uint64_t sim_sweep_seed(uint64_t base_seed, uint64_t point, uint64_t replicate) {
  uint64_t h = sim_sweep_splitmix64(base_seed);
  h = sim_sweep_splitmix64(h ^ point);
  h = sim_sweep_splitmix64(h ^ replicate);
  return h >> 1;
}

/* ---- Pool-share vectors ---- */

void sim_shares_zipf(double s, guint n, double *out) {
  g_return_if_fail(n >= 1 && s >= 0);
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += out[i] = pow((double)(i + 1), -s);
  for (guint i = 0; i < n; i++)
    out[i] /= sum;
}

double sim_shares_hhi(const double *shares, guint n) {
  double h = 0;
  for (guint i = 0; i < n; i++)
    h += shares[i] * shares[i];
  return h;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

guint sim_shares_nakamoto(const double *shares, guint n) {
  g_autofree double *s = g_memdup2(shares, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_desc);
  double cum = 0;
  for (guint i = 0; i < n; i++) {
    cum += s[i];
    /* "More than half", with room for rounding: n/2 equal shares of an even n sum to 1/2, not more. */
    if (cum > 0.5 + 1e-12) return i + 1;
  }
  return n;
}

static double zipf_hhi(double s, guint n) {
  g_autofree double *v = g_new(double, n);
  sim_shares_zipf(s, n, v);
  return sim_shares_hhi(v, n);
}

/* The share of the c largest of n Zipf(s) pools. */
static double zipf_top(double s, guint c, guint n) {
  g_autofree double *v = g_new(double, n);
  sim_shares_zipf(s, n, v);
  double t = 0;
  for (guint i = 0; i < c && i < n; i++)
    t += v[i];
  return t;
}

/* The s where the increasing function f(s) crosses `target`, for f(0) <= target < f(∞). */
static double bisect_up(double (*f)(double s, guint a, guint b), guint a, guint b, double target) {
  double lo = 0, hi = 1;
  while (f(hi, a, b) < target && hi < 1e6) {
    lo = hi;
    hi *= 2;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
    double mid = (lo + hi) / 2;
    if (f(mid, a, b) < target)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

static double zipf_hhi2(double s, guint n, guint unused) {
  (void)unused;
  return zipf_hhi(s, n);
}

static double zipf_top2(double s, guint c, guint n) {
  return zipf_top(s, c, n);
}

double sim_shares_zipf_for_hhi(double target, guint n) {
  g_return_val_if_fail(n >= 2 && target >= 1.0 / n && target < 1, NAN);
  if (target <= 1.0 / n) return 0;
  return bisect_up(zipf_hhi2, n, 0, target);
}

/* The exponent from which on the c largest pools hold more than 1/2 (0 if they hold at least 1/2 with
 * equal shares). */
static double nakamoto_boundary(guint c, guint n) {
  if (zipf_top(0, c, n) >= 0.5 - 1e-12) return 0;
  return bisect_up(zipf_top2, c, n, 0.5);
}

double sim_shares_zipf_for_nakamoto(guint c, guint n) {
  g_return_val_if_fail(n >= 1 && c >= 1 && c <= n / 2 + 1, NAN);
  if (n == 1) return 0;
  if (c == 1) return bisect_up(zipf_top2, 1, n, 0.75);
  return (nakamoto_boundary(c, n) + nakamoto_boundary(c - 1, n)) / 2;
}

/* ---- Statistics ---- */

void sim_sweep_stats(const double *x, gsize n, double *mean, double *sd, double *ci95) {
  *mean = *sd = *ci95 = NAN;
  if (n == 0) return;
  *mean = gsl_stats_mean(x, 1, n);
  if (n < 2) return;
  *sd = gsl_stats_sd_m(x, 1, n, *mean);
  *ci95 = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * *sd / sqrt((double)n);
}
