/* fit.c: maximum-likelihood fits, the empirical distribution, Kolmogorov-Smirnov, share and rate intervals.
 */
#include "fit.h"

#include <float.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_sf_gamma.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(an-fit-error-quark, an_fit_error)
/* clang-format on */

#define FIT_LEVEL 0.95
#define KS_SWITCH 1.18 /* where an_ks_q() changes series; both converge within a few terms there */

/* ---- Kolmogorov-Smirnov -------------------------------------------------------------------------------- */

double an_ks_q(double lambda) {
  if (isnan(lambda)) return NAN;
  if (lambda <= 0) return 1.0;
  double sum = 0;
  if (lambda < KS_SWITCH) {
    double c = -M_PI * M_PI / (8 * lambda * lambda);
    for (int j = 1; j < 100; j++) {
      double term = exp((double)((2 * j - 1) * (2 * j - 1)) * c);
      sum += term;
      if (term <= DBL_EPSILON * sum) break;
    }
    return 1.0 - sqrt(2 * M_PI) / lambda * sum;
  }
  double sign = 1;
  for (int j = 1; j < 100; j++, sign = -sign) {
    double term = exp(-2.0 * j * j * lambda * lambda);
    sum += sign * term;
    if (term <= DBL_EPSILON * fabs(sum)) break;
  }
  double q = 2 * sum;
  return q < 0 ? 0 : q > 1 ? 1 : q;
}

static gboolean is_sorted(const double *x, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (!(x[i - 1] <= x[i])) return FALSE;
  return TRUE;
}

AnKs an_ks_one_sample(const double *sorted, size_t n, AnCdfFunc cdf, const void *data) {
  AnKs r = {NAN, NAN};
  g_return_val_if_fail(sorted != NULL && n >= 1 && cdf != NULL, r);
  g_return_val_if_fail(is_sorted(sorted, n), r);
  double d = 0;
  for (size_t i = 0; i < n; i++) {
    double f = cdf(sorted[i], data);
    d = MAX(d, MAX((double)(i + 1) / (double)n - f, f - (double)i / (double)n));
  }
  r.d = d;
  r.p = an_ks_q(sqrt((double)n) * d);
  return r;
}

AnKs an_ks_two_sample(const double *a, size_t na, const double *b, size_t nb) {
  AnKs r = {NAN, NAN};
  g_return_val_if_fail(a != NULL && b != NULL && na >= 1 && nb >= 1, r);
  g_return_val_if_fail(is_sorted(a, na) && is_sorted(b, nb), r);
  size_t i = 0, j = 0;
  double d = 0;
  /* Step to the next distinct value x, past every copy of it in both samples, then compare F_a(x), F_b(x). */
  while (i < na && j < nb) {
    double x = MIN(a[i], b[j]);
    while (i < na && a[i] == x)
      i++;
    while (j < nb && b[j] == x)
      j++;
    d = MAX(d, fabs((double)i / (double)na - (double)j / (double)nb));
  }
  /* Past the end of one sample the distance only shrinks, so it was already reached. */
  r.d = d;
  double en = (double)na * (double)nb / ((double)na + (double)nb);
  r.p = an_ks_q(sqrt(en) * d);
  return r;
}

/* ---- Parametric fits ----------------------------------------------------------------------------------- */

/* Checks n >= 2 and every value finite and > 0 (or >= 0 with `zero_ok`). */
static gboolean check_sample(const char *family, const double *x, size_t n, gboolean zero_ok,
                             GError **error) {
  if (n < 2) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "%s fit: needs at least 2 values, got %zu",
                family, n);
    return FALSE;
  }
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i]) || x[i] < 0 || (x[i] == 0 && !zero_ok)) {
      g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "%s fit: value %zu is %g, expected %s",
                  family, i, x[i], zero_ok ? "a finite value >= 0" : "a finite value > 0");
      return FALSE;
    }
  }
  return TRUE;
}

static double z_of(double level) {
  return gsl_cdf_ugaussian_Pinv(1 - (1 - level) / 2);
}

/* ---- Quantiles that GSL's *_Pinv cannot give everywhere --------------------------------------------------
 */

/* The Cornish-Fisher expansion of a standardised quantile to second order: skewness γ, excess kurtosis κ,
 *   w = z + (z² − 1) γ/6 + (z³ − 3z) κ/24 − (2z³ − 5z) γ²/36. */
static double cornish_fisher(double z, double skew, double kurt) {
  double z2 = z * z;
  return z + (z2 - 1) * skew / 6 + (z2 * z - 3 * z) * kurt / 24 - (2 * z2 * z - 5 * z) * skew * skew / 36;
}

/* Above these parameters GSL's incomplete gamma and beta functions fail (from a shape of 1e6 where x > a +
 * √a, and from about 7e5 in both beta parameters); the approximations used instead are accurate there. */
#define GAMMA_LARGE 2e5
#define BETA_LARGE 2e5

/* The CDF of Gamma(shape, 1): GSL's, or above GAMMA_LARGE the Wilson-Hilferty approximation
 * Φ(((x/a)^{1/3} − 1 + 1/9a) · 3√a), whose absolute error there is below 1e-8. */
static double gamma_cdf(double x, double shape) {
  if (x <= 0) return 0;
  if (shape > GAMMA_LARGE)
    return gsl_cdf_ugaussian_P((cbrt(x / shape) - 1 + 1 / (9 * shape)) * 3 * sqrt(shape));
  return gsl_cdf_gamma_P(x, shape, 1);
}

/* Whether the quantile lies above x: F(x) < p, computed on the tail that keeps its precision (P for p <= 1/2,
 * else Q(x) > 1 − p). Only for shapes up to GAMMA_LARGE. */
static gboolean gamma_below(double x, double shape, double p) {
  return p <= 0.5 ? gsl_cdf_gamma_P(x, shape, 1) < p : gsl_cdf_gamma_Q(x, shape, 1) > 1 - p;
}

/* The p-quantile of Gamma(shape, 1), p in (0, 1). Up to GAMMA_LARGE: bracketed from the mean in steps of
 * √shape that double (shrinking by factors of 16 towards 0), then bisected until the bracket is a few ulps
 * wide (0 when the quantile is below the smallest normal double). Above: the Cornish-Fisher expansion with
 * γ = 2/√a, κ = 6/a (relative error below 1e-12 there). */
static double gamma_quantile(double p, double shape) {
  double sd = sqrt(shape);
  if (shape > GAMMA_LARGE) return shape + sd * cornish_fisher(gsl_cdf_ugaussian_Pinv(p), 2 / sd, 6 / shape);
  double hi = shape, lo = shape, step = sd;
  while (gamma_below(hi, shape, p) && hi < DBL_MAX / 4) {
    hi = shape + step;
    step *= 2;
  }
  for (step = sd; !gamma_below(lo, shape, p) && lo > DBL_MIN * 16;) {
    if (lo - step > lo / 16) {
      lo -= step;
      step *= 2;
    } else {
      lo /= 16;
    }
  }
  if (!gamma_below(lo, shape, p)) return 0; /* below the smallest normal double */
  for (int i = 0; i < 2000 && hi - lo > 4 * DBL_EPSILON * hi; i++) {
    double mid = lo > hi / 4 ? lo + (hi - lo) / 2 : sqrt(lo) * sqrt(hi);
    if (gamma_below(mid, shape, p))
      lo = mid;
    else
      hi = mid;
  }
  return lo + (hi - lo) / 2;
}

/* χ²_p(ν). */
static double chisq_quantile(double p, double nu) {
  return 2 * gamma_quantile(p, nu / 2);
}

/* The p-quantile of Beta(a, b), p in (0, 1). Bisection on gsl_cdf_beta_P/Q while a parameter is at most
 * BETA_LARGE; above, x = μ + σ·w with the Cornish-Fisher w for the beta's skewness and kurtosis (error below
 * 1e-12 in x there). */
static double beta_quantile(double p, double a, double b) {
  if (a > BETA_LARGE && b > BETA_LARGE) {
    double s = a + b, mu = a / s, sd = sqrt(a * b / (s * s * (s + 1)));
    double g = 2 * (b - a) * sqrt(s + 1) / ((s + 2) * sqrt(a * b));
    double k = 6 * ((a - b) * (a - b) * (s + 1) - a * b * (s + 2)) / (a * b * (s + 2) * (s + 3));
    return CLAMP(mu + sd * cornish_fisher(gsl_cdf_ugaussian_Pinv(p), g, k), 0.0, 1.0);
  }
  double lo = 0, hi = 1;
  for (int i = 0; i < 1100 && hi - lo > 4 * DBL_EPSILON * hi; i++) {
    double mid = lo + (hi - lo) / 2;
    if (p <= 0.5 ? gsl_cdf_beta_P(mid, a, b) < p : gsl_cdf_beta_Q(mid, a, b) > 1 - p)
      lo = mid;
    else
      hi = mid;
  }
  return lo + (hi - lo) / 2;
}

/* A Wald interval on the log scale: value·exp(±z·se/value). */
static void log_wald(AnEstimate *e, double z) {
  double f = exp(z * e->se / e->value);
  e->lo = e->value / f;
  e->hi = e->value * f;
}

static double fit_cdf_cb(double x, const void *data) {
  return an_fit_cdf(data, x);
}

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Fills n, the AIC and the KS test once the parameters and the log-likelihood are set. */
static void fit_finish(AnFit *fit, const double *x, size_t n) {
  fit->n = n;
  fit->aic = 2.0 * fit->n_params - 2.0 * fit->loglik;
  double *sorted = g_memdup2(x, n * sizeof *x);
  qsort(sorted, n, sizeof *sorted, cmp_double);
  fit->ks = an_ks_one_sample(sorted, n, fit_cdf_cb, fit);
  g_free(sorted);
}

gboolean an_fit_exponential(const double *x, size_t n, AnFit *out, GError **error) {
  g_return_val_if_fail(x != NULL && out != NULL, FALSE);
  if (!check_sample("exponential", x, n, TRUE, error)) return FALSE;
  double mean = gsl_stats_mean(x, 1, n);
  if (!(mean > 0)) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "exponential fit: every value is 0");
    return FALSE;
  }
  AnFit f = {.family = AN_FIT_EXPONENTIAL, .n_params = 1};
  double nu = 2.0 * (double)n;
  f.p[0].value = mean;
  f.p[0].se = mean / sqrt((double)n);
  f.p[0].lo = nu * mean / chisq_quantile(1 - (1 - FIT_LEVEL) / 2, nu);
  f.p[0].hi = nu * mean / chisq_quantile((1 - FIT_LEVEL) / 2, nu);
  f.loglik = -(double)n * log(mean) - (double)n;
  fit_finish(&f, x, n);
  *out = f;
  return TRUE;
}

gboolean an_fit_lognormal(const double *x, size_t n, AnFit *out, GError **error) {
  g_return_val_if_fail(x != NULL && out != NULL, FALSE);
  if (!check_sample("lognormal", x, n, FALSE, error)) return FALSE;
  g_autofree double *y = g_new(double, n);
  double sum_y = 0;
  for (size_t i = 0; i < n; i++) {
    y[i] = log(x[i]);
    sum_y += y[i];
  }
  double mu = gsl_stats_mean(y, 1, n);
  double sigma = sqrt(gsl_stats_variance_with_fixed_mean(y, 1, n, mu));
  if (!(sigma > 0)) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "lognormal fit: all values are equal");
    return FALSE;
  }
  double z = z_of(FIT_LEVEL), dn = (double)n;
  AnFit f = {.family = AN_FIT_LOGNORMAL, .n_params = 2};
  f.p[0].value = mu;
  f.p[0].se = sigma / sqrt(dn);
  f.p[0].lo = mu - z * f.p[0].se;
  f.p[0].hi = mu + z * f.p[0].se;
  f.p[1].value = sigma;
  f.p[1].se = sigma / sqrt(2 * dn);
  log_wald(&f.p[1], z);
  f.loglik = -sum_y - dn * log(sigma) - 0.5 * dn * log(2 * M_PI) - 0.5 * dn;
  fit_finish(&f, x, n);
  *out = f;
  return TRUE;
}

/* g(k) = log k − ψ(k) and g'(k) = 1/k − ψ'(k). From k = 20 on, the asymptotic series (Bernoulli numbers)
 *   g = 1/2k + 1/12k² − 1/120k⁴ + 1/252k⁶ − 1/240k⁸ + 1/132k¹⁰,
 *   g' = −1/2k² − 1/6k³ + 1/30k⁵ − 1/42k⁷ + 1/30k⁹ − 5/66k¹¹,
 * accurate to the last bit there, where log k − ψ(k) would cancel away its digits for large k. */
static void gamma_g(double k, double *g, double *dg) {
  if (k < 20) {
    *g = log(k) - gsl_sf_psi(k);
    *dg = 1 / k - gsl_sf_psi_1(k);
    return;
  }
  double r = 1 / k, r2 = r * r;
  *g = r / 2 + r2 * (1.0 / 12 + r2 * (-1.0 / 120 + r2 * (1.0 / 252 + r2 * (-1.0 / 240 + r2 / 132))));
  *dg = -r2 / 2 - r2 * r * (1.0 / 6 + r2 * (-1.0 / 30 + r2 * (1.0 / 42 + r2 * (-1.0 / 30 + r2 * 5.0 / 66))));
}

gboolean an_fit_gamma(const double *x, size_t n, AnFit *out, GError **error) {
  g_return_val_if_fail(x != NULL && out != NULL, FALSE);
  if (!check_sample("gamma", x, n, FALSE, error)) return FALSE;
  double dn = (double)n, sum_log = 0, mean = gsl_stats_mean(x, 1, n), s = 0;
  for (size_t i = 0; i < n; i++) {
    sum_log += log(x[i]);
    /* log x̄ − log x_i, near x̄ without the cancellation of the difference */
    double d = (x[i] - mean) / mean;
    s += fabs(d) < 0.5 ? -log1p(d) : log(mean) - log(x[i]);
  }
  s /= dn;
  if (!(s > 0)) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "gamma fit: all values are equal");
    return FALSE;
  }
  double k = (3 - s + sqrt((s - 3) * (s - 3) + 24 * s)) / (12 * s);
  gboolean converged = FALSE;
  double g, dg;
  for (int it = 0; it < 100 && !converged; it++) {
    gamma_g(k, &g, &dg);
    g -= s;
    double k_new = 1 / (1 / k + g / (k * k * dg));
    if (!(k_new > 0) || !isfinite(k_new)) break;
    converged = fabs(k_new - k) < 1e-12 * k || g == 0;
    k = k_new;
  }
  if (!converged) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_NO_CONVERGENCE,
                "gamma fit: the shape did not converge (s = log mean - mean log = %g)", s);
    return FALSE;
  }
  gamma_g(k, &g, &dg);
  /* k ψ'(k) − 1 = −k g'(k), without the cancellation for large k. */
  double theta = mean / k, tri = 1 / k - dg, det = -k * dg, z = z_of(FIT_LEVEL);
  AnFit f = {.family = AN_FIT_GAMMA, .n_params = 2};
  f.p[0].value = k;
  f.p[0].se = sqrt(k / (dn * det));
  log_wald(&f.p[0], z);
  f.p[1].value = theta;
  f.p[1].se = theta * sqrt(tri / (dn * det));
  log_wald(&f.p[1], z);
  f.loglik = (k - 1) * sum_log - dn * mean / theta - dn * k * log(theta) - dn * gsl_sf_lngamma(k);
  fit_finish(&f, x, n);
  *out = f;
  return TRUE;
}

double an_fit_cdf(const AnFit *fit, double x) {
  g_return_val_if_fail(fit != NULL, NAN);
  switch (fit->family) {
  case AN_FIT_EXPONENTIAL:
    return x <= 0 ? 0 : gsl_cdf_exponential_P(x, fit->p[0].value);
  case AN_FIT_LOGNORMAL:
    return x <= 0 ? 0 : gsl_cdf_lognormal_P(x, fit->p[0].value, fit->p[1].value);
  case AN_FIT_GAMMA:
    return gamma_cdf(x / fit->p[1].value, fit->p[0].value);
  }
  g_return_val_if_reached(NAN);
}

double an_fit_quantile(const AnFit *fit, double f) {
  g_return_val_if_fail(fit != NULL && f >= 0 && f <= 1, NAN);
  if (f == 0) return 0;
  if (f == 1) return INFINITY;
  switch (fit->family) {
  case AN_FIT_EXPONENTIAL:
    return gsl_cdf_exponential_Pinv(f, fit->p[0].value);
  case AN_FIT_LOGNORMAL:
    return gsl_cdf_lognormal_Pinv(f, fit->p[0].value, fit->p[1].value);
  case AN_FIT_GAMMA:
    return fit->p[1].value * gamma_quantile(f, fit->p[0].value);
  }
  g_return_val_if_reached(NAN);
}

const char *an_fit_family_name(AnFitFamily family) {
  switch (family) {
  case AN_FIT_EXPONENTIAL:
    return "exponential";
  case AN_FIT_LOGNORMAL:
    return "lognormal";
  case AN_FIT_GAMMA:
    return "gamma";
  }
  g_return_val_if_reached(NULL);
}

const char *an_fit_param_name(AnFitFamily family, guint i) {
  static const char *const names[][2] = {[AN_FIT_EXPONENTIAL] = {"mean", NULL},
                                         [AN_FIT_LOGNORMAL] = {"mu", "sigma"},
                                         [AN_FIT_GAMMA] = {"shape", "scale"}};
  g_return_val_if_fail((guint)family < G_N_ELEMENTS(names) && i < 2, NULL);
  return names[family][i];
}

/* A number, or null where it is not finite (JSON has no NaN). */
static json_t *json_num(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

json_t *an_fit_to_json(const AnFit *fit) {
  g_return_val_if_fail(fit != NULL, NULL);
  json_t *o = json_object();
  json_object_set_new(o, "family", json_string(an_fit_family_name(fit->family)));
  json_object_set_new(o, "n", json_integer((json_int_t)fit->n));
  json_t *params = json_object();
  for (guint i = 0; i < fit->n_params; i++) {
    json_t *p = json_object();
    json_object_set_new(p, "value", json_num(fit->p[i].value));
    json_object_set_new(p, "se", json_num(fit->p[i].se));
    json_object_set_new(p, "lo", json_num(fit->p[i].lo));
    json_object_set_new(p, "hi", json_num(fit->p[i].hi));
    json_object_set_new(params, an_fit_param_name(fit->family, i), p);
  }
  json_object_set_new(o, "params", params);
  json_object_set_new(o, "loglik", json_num(fit->loglik));
  json_object_set_new(o, "aic", json_num(fit->aic));
  json_t *ks = json_object();
  json_object_set_new(ks, "d", json_num(fit->ks.d));
  json_object_set_new(ks, "p", json_num(fit->ks.p));
  json_object_set_new(o, "ks", ks);
  return o;
}

/* ---- The empirical distribution ------------------------------------------------------------------------ */

struct AnEmpirical {
  size_t n;
  double *x; /* sorted */
};

AnEmpirical *an_empirical_new(const double *x, size_t n, GError **error) {
  g_return_val_if_fail(x != NULL || n == 0, NULL);
  if (n == 0) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "empirical distribution: no values");
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) {
      g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA,
                  "empirical distribution: value %zu is %g, expected a finite value", i, x[i]);
      return NULL;
    }
  }
  AnEmpirical *e = g_new(AnEmpirical, 1);
  e->n = n;
  e->x = g_memdup2(x, n * sizeof *x);
  qsort(e->x, n, sizeof *e->x, cmp_double);
  return e;
}

void an_empirical_free(AnEmpirical *e) {
  if (!e) return;
  g_free(e->x);
  g_free(e);
}

size_t an_empirical_n(const AnEmpirical *e) {
  g_return_val_if_fail(e != NULL, 0);
  return e->n;
}

const double *an_empirical_sorted(const AnEmpirical *e) {
  g_return_val_if_fail(e != NULL, NULL);
  return e->x;
}

double an_empirical_mean(const AnEmpirical *e) {
  g_return_val_if_fail(e != NULL, NAN);
  return gsl_stats_mean(e->x, 1, e->n);
}

double an_empirical_cdf(const AnEmpirical *e, double x) {
  g_return_val_if_fail(e != NULL, NAN);
  /* The number of values <= x: the first index whose value is > x. */
  size_t lo = 0, hi = e->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e->x[mid] <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (double)lo / (double)e->n;
}

double an_empirical_quantile(const AnEmpirical *e, double f) {
  g_return_val_if_fail(e != NULL && f >= 0 && f <= 1, NAN);
  return gsl_stats_quantile_from_sorted_data(e->x, 1, e->n, f);
}

/* The smallest m in [0, n] with P(B <= m) > q (`strict`) or >= q, B ~ Binomial(n, f), q in (0, 1): by
 * bisection on gsl_cdf_binomial_P, or, where both n·f and n·(1 − f) exceed BETA_LARGE (so that
 * gsl_cdf_binomial_P fails), from the Cornish-Fisher expansion with a continuity correction. */
static unsigned binomial_first(double q, double f, unsigned n, gboolean strict) {
  double dn = (double)n;
  if (dn * f > BETA_LARGE && dn * (1 - f) > BETA_LARGE) {
    double v = dn * f * (1 - f), sd = sqrt(v);
    double w = cornish_fisher(gsl_cdf_ugaussian_Pinv(q), (1 - 2 * f) / sd, (1 - 6 * f * (1 - f)) / v);
    return (unsigned)CLAMP(ceil(dn * f + sd * w - 0.5), 0.0, dn);
  }
  unsigned lo = 0, hi = n; /* the answer is in [lo, hi]: P(B <= n) = 1 > q */
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    double F = gsl_cdf_binomial_P(mid, f, n);
    if (strict ? F > q : F >= q)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

gboolean an_empirical_quantile_ci(const AnEmpirical *e, double f, double level, double *lo, double *hi) {
  g_return_val_if_fail(e != NULL && f > 0 && f < 1 && level > 0 && level < 1 && lo && hi, FALSE);
  g_return_val_if_fail(e->n < G_MAXUINT, FALSE);
  double a2 = (1 - level) / 2;
  unsigned n = (unsigned)e->n;
  /* With F(m) = P(B <= m): l, the largest i with F(i − 1) <= α/2, is the smallest m with F(m) > α/2;
   * u − 1 is the smallest m with F(m) >= 1 − α/2. */
  unsigned l = binomial_first(a2, f, n, TRUE);
  unsigned u = binomial_first(1 - a2, f, n, FALSE) + 1;
  if (l < 1 || u > n) return FALSE;
  *lo = e->x[l - 1];
  *hi = e->x[u - 1];
  return TRUE;
}

/* ---- Shares and rates from counts ---------------------------------------------------------------------- */

static void share_interval(uint64_t k, uint64_t n, double level, AnCiMethod method, AnEstimate *out) {
  double dn = (double)n, p = (double)k / dn, a = 1 - level;
  out->value = p;
  out->se = sqrt(p * (1 - p) / dn);
  if (method == AN_CI_CLOPPER_PEARSON) {
    out->lo = k == 0 ? 0 : beta_quantile(a / 2, (double)k, (double)(n - k) + 1);
    out->hi = k == n ? 1 : beta_quantile(1 - a / 2, (double)k + 1, (double)(n - k));
    return;
  }
  double z = z_of(level), z2 = z * z;
  double centre = (p + z2 / (2 * dn)) / (1 + z2 / dn);
  double half = z / (1 + z2 / dn) * sqrt(p * (1 - p) / dn + z2 / (4 * dn * dn));
  out->lo = k == 0 ? 0 : MAX(0.0, centre - half); /* exact ends, not rounding residues */
  out->hi = k == n ? 1 : MIN(1.0, centre + half);
}

gboolean an_share_ci(uint64_t k, uint64_t n, double level, AnCiMethod method, AnEstimate *out,
                     GError **error) {
  g_return_val_if_fail(out != NULL && k <= n && level > 0 && level < 1, FALSE);
  g_return_val_if_fail(method == AN_CI_WILSON || method == AN_CI_CLOPPER_PEARSON, FALSE);
  if (n == 0) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "share: no trials (n = 0)");
    return FALSE;
  }
  share_interval(k, n, level, method, out);
  return TRUE;
}

gboolean an_shares_ci(const uint64_t *counts, guint m, double level, AnCiMethod method, gboolean simultaneous,
                      AnEstimate *out, GError **error) {
  g_return_val_if_fail(counts != NULL && m >= 1 && out != NULL && level > 0 && level < 1, FALSE);
  g_return_val_if_fail(method == AN_CI_WILSON || method == AN_CI_CLOPPER_PEARSON, FALSE);
  uint64_t n = 0;
  for (guint i = 0; i < m; i++) {
    g_return_val_if_fail(counts[i] <= G_MAXUINT64 - n, FALSE);
    n += counts[i];
  }
  if (n == 0) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "shares: every count is 0");
    return FALSE;
  }
  double each = simultaneous ? 1 - (1 - level) / m : level;
  for (guint i = 0; i < m; i++)
    share_interval(counts[i], n, each, method, &out[i]);
  return TRUE;
}

gboolean an_poisson_rate_ci(uint64_t count, double duration, double level, AnEstimate *out, GError **error) {
  g_return_val_if_fail(out != NULL && level > 0 && level < 1, FALSE);
  if (!isfinite(duration) || !(duration > 0)) {
    g_set_error(error, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA, "Poisson rate: duration is %g, expected > 0",
                duration);
    return FALSE;
  }
  double k = (double)count, a = 1 - level;
  out->value = k / duration;
  out->se = sqrt(k) / duration;
  out->lo = count == 0 ? 0 : chisq_quantile(a / 2, 2 * k) / (2 * duration);
  out->hi = chisq_quantile(1 - a / 2, 2 * k + 2) / (2 * duration);
  return TRUE;
}
