/* test_fit.c: unit tests of analysis/fit.c: the Kolmogorov distribution and KS statistics on hand-computed
 * examples, closed-form maximum-likelihood fits, recovery of known parameters from samples drawn with GSL at
 * fixed seeds (within 5 standard errors), interval coverage, the empirical distribution, and share and rate
 * intervals against reference values.
 *
 * Reference values marked "mpmath" were computed by tests/data/stats-reference.py (python3, mpmath 1.3.0,
 * 40 digits), independently of GSL, from the formulas written beside each check: the Kolmogorov series summed
 * to convergence, quantiles by root finding or bisection on the regularised incomplete gamma and beta
 * functions (exact Poisson and binomial sums for large counts), the gamma shape by root finding on
 * log k − ψ(k) = s. */
#include "cunit-main.h"
#include "fit.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_psi.h>
#include <gsl/gsl_sort.h>
#include <float.h>
#include <math.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_rng, gsl_rng_free)

#define CLOSE(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

/* ---- Kolmogorov-Smirnov -------------------------------------------------------------------------------- */

/* Q_KS(λ) = 2 Σ (−1)^{j−1} exp(−2j²λ²), summed by mpmath to convergence (the theta-function form agrees to
 * every printed digit), on both sides of the switch between the two series at 1.18. */
static void test_ks_q_known(void) {
  static const struct {
    double lambda, q;
  } ref[] = {
      {0.3, 0.99999069419866543},     {0.5, 0.96394524366487509},     {0.8, 0.54414241157419815},
      {1.0, 0.26999967167735452},     {1.17, 0.12939004218561879},    {1.19, 0.11774229287977165},
      {1.3581, 0.049999630431667436}, {1.6276, 0.010001537333060768}, {2.0, 0.00067092525577969535},
      {3.0, 3.0459959489425257e-8},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ref); i++) {
    double q = an_ks_q(ref[i].lambda);
    if (!(fabs(q - ref[i].q) <= 1e-13 * ref[i].q + 1e-16))
      fprintf(stderr, "Q_KS(%g) = %.17g, expected %.17g\n", ref[i].lambda, q, ref[i].q);
    CU_ASSERT(fabs(q - ref[i].q) <= 1e-13 * ref[i].q + 1e-16);
  }
  CU_ASSERT_EQUAL(an_ks_q(0), 1.0);
  CU_ASSERT_EQUAL(an_ks_q(-1), 1.0);
  CU_ASSERT_EQUAL(an_ks_q(40), 0.0);
  CU_ASSERT(isnan(an_ks_q(NAN)));
  /* Monotone across the switch. */
  CU_ASSERT(an_ks_q(1.18 - 1e-9) >= an_ks_q(1.18));
  CU_ASSERT_DOUBLE_EQUAL(an_ks_q(1.18 - 1e-12), an_ks_q(1.18), 1e-12);
}

static double cdf_uniform01(double x, const void *data) {
  (void)data;
  return x <= 0 ? 0 : x >= 1 ? 1 : x;
}

/* {0.1, 0.4, 0.7} against U(0, 1): the gaps i/n − F are 0.2333, 0.2667, 0.3 and F − (i−1)/n are 0.1,
 * 0.0667, 0.0333, so D = 0.3; p = Q_KS(√3 · 0.3) = 0.94999619135745398 (mpmath). */
static void test_ks_one_sample_hand(void) {
  const double x[] = {0.1, 0.4, 0.7};
  AnKs r = an_ks_one_sample(x, 3, cdf_uniform01, NULL);
  CLOSE(r.d, 0.3, 1e-15);
  CLOSE(r.p, 0.94999619135745398, 1e-13);
  /* One value at the median: D = 0.5. */
  const double m[] = {0.5};
  CLOSE(an_ks_one_sample(m, 1, cdf_uniform01, NULL).d, 0.5, 1e-15);
}

/* a = {1, 2, 3, 4}, b = {2.5, 3, 5}. F_a − F_b at the distinct values 1, 2, 2.5, 3, 4, 5:
 * 1/4, 2/4, 2/4 − 1/3, 3/4 − 2/3, 1 − 2/3, 0: D = 1/2; p = Q_KS(√(12/7)/2) = 0.78476980592280181 (mpmath). */
static void test_ks_two_sample_hand(void) {
  const double a[] = {1, 2, 3, 4}, b[] = {2.5, 3, 5};
  AnKs r = an_ks_two_sample(a, 4, b, 3);
  CLOSE(r.d, 0.5, 1e-15);
  CLOSE(r.p, 0.78476980592280181, 1e-13);
  AnKs s = an_ks_two_sample(b, 3, a, 4);
  CU_ASSERT_EQUAL(s.d, r.d);
  CU_ASSERT_EQUAL(s.p, r.p);
  /* Ties across the samples are stepped over together: a = {1, 1, 2}, b = {1, 2, 2} differ by 2/3 − 1/3 at
   * 1 and by 0 at 2, so D = 1/3 (comparing one value at a time would find 2/3 after the two 1s of a).
   * p = Q_KS(√(9/6)/3) = 0.99625519237939879 (mpmath). */
  const double ta[] = {1, 1, 2}, tb[] = {1, 2, 2};
  AnKs t = an_ks_two_sample(ta, 3, tb, 3);
  CLOSE(t.d, 1.0 / 3, 1e-15);
  CLOSE(t.p, 0.99625519237939879, 1e-13);
  /* Identical samples: D = 0, p = 1; disjoint ones: D = 1. */
  AnKs same = an_ks_two_sample(a, 4, a, 4);
  CU_ASSERT_EQUAL(same.d, 0.0);
  CU_ASSERT_EQUAL(same.p, 1.0);
  const double lo[] = {1, 2}, hi[] = {3, 4, 5};
  CU_ASSERT_EQUAL(an_ks_two_sample(lo, 2, hi, 3).d, 1.0);
}

/* Two samples from one distribution: p-values spread over (0, 1); from two distributions: tiny p. */
static void test_ks_two_sample_power(void) {
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 20190401);
  enum { N = 2000 };
  double *a = g_new(double, N), *b = g_new(double, N), *c = g_new(double, N);
  for (int i = 0; i < N; i++) {
    a[i] = gsl_ran_exponential(r, 100);
    b[i] = gsl_ran_exponential(r, 100);
    c[i] = gsl_ran_exponential(r, 150);
  }
  gsl_sort(a, 1, N);
  gsl_sort(b, 1, N);
  gsl_sort(c, 1, N);
  AnKs same = an_ks_two_sample(a, N, b, N), diff = an_ks_two_sample(a, N, c, N);
  /* Under the null, √(N/2)·D follows the Kolmogorov law: D < 0.07 means λ < 2.2 (probability 0.9999). */
  CU_ASSERT(same.d < 0.07);
  CU_ASSERT(same.p > 1e-3);
  /* Means 100 and 150: the CDFs differ by e^{−x/150} − e^{−x/100}, at most 0.148 (at x = 300·ln 1.5), that
   * is λ ≈ 4.7, far above the noise. */
  CU_ASSERT(diff.d > 0.1);
  CU_ASSERT(diff.p < 1e-6);
  g_free(a);
  g_free(b);
  g_free(c);
}

/* ---- Fits: closed forms and known values --------------------------------------------------------------- */

/* x = {1, 2, 3, 4, 10}: μ̂ = 4, se = 4/√5, ℓ = −5 log 4 − 5; the exact interval 40/χ²_{.975}(10),
 * 40/χ²_{.025}(10) = [1.952822031217891, 12.319167023347302] (mpmath). */
static void test_fit_exponential_closed_form(void) {
  const double x[] = {1, 2, 3, 4, 10};
  AnFit f;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(x, 5, &f, &e));
  CU_ASSERT_EQUAL(f.family, AN_FIT_EXPONENTIAL);
  CU_ASSERT_EQUAL(f.n_params, 1);
  CU_ASSERT_EQUAL(f.n, 5);
  CLOSE(f.p[0].value, 4, 1e-15);
  CLOSE(f.p[0].se, 4 / sqrt(5), 1e-15);
  CLOSE(f.p[0].lo, 1.952822031217891, 1e-9);
  CLOSE(f.p[0].hi, 12.319167023347302, 1e-8);
  CLOSE(f.loglik, -11.931471805599453, 1e-12);
  CLOSE(f.aic, 2 + 2 * 11.931471805599453, 1e-12);
  /* KS against 1 − exp(−x/4), by hand: F(x_(i)) = 0.2212, 0.3935, 0.5276, 0.6321, 0.9179; i/n − F: −0.0212,
   * 0.0065, 0.0724, 0.1679, 0.0821; F − (i−1)/n: 0.2212, 0.1935, 0.1276, 0.0321, 0.1179. So D = F(1). */
  CLOSE(f.ks.d, 1 - exp(-0.25), 1e-15);
  CLOSE(f.ks.p, an_ks_q(sqrt(5) * (1 - exp(-0.25))), 1e-15);
  CLOSE(an_fit_cdf(&f, 4), 1 - exp(-1), 1e-15);
  CLOSE(an_fit_quantile(&f, 0.5), 4 * log(2), 1e-12);
  CU_ASSERT_STRING_EQUAL(an_fit_family_name(f.family), "exponential");
  CU_ASSERT_STRING_EQUAL(an_fit_param_name(f.family, 0), "mean");
}

/* x = e^{0,1,2,3}: logs 0..3, μ̂ = 1.5, σ̂² = 5/4 (divisor n), ℓ = −6 − 4 log σ̂ − 2 log 2π − 2
 * = −12.12204123544711 (mpmath). */
static void test_fit_lognormal_closed_form(void) {
  const double x[] = {1, exp(1), exp(2), exp(3)};
  AnFit f;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(an_fit_lognormal(x, 4, &f, &e));
  double sigma = sqrt(1.25), z = 1.9599639845400542;
  CLOSE(f.p[0].value, 1.5, 1e-14);
  CLOSE(f.p[1].value, sigma, 1e-14);
  CLOSE(f.p[0].se, sigma / 2, 1e-14);
  CLOSE(f.p[1].se, sigma / sqrt(8), 1e-14);
  CLOSE(f.p[0].lo, 1.5 - z * sigma / 2, 1e-12);
  CLOSE(f.p[0].hi, 1.5 + z * sigma / 2, 1e-12);
  CLOSE(f.p[1].lo, sigma * exp(-z / sqrt(8)), 1e-12);
  CLOSE(f.p[1].hi, sigma * exp(z / sqrt(8)), 1e-12);
  CLOSE(f.loglik, -12.12204123544711, 1e-12);
  CLOSE(f.aic, 4 + 2 * 12.12204123544711, 1e-12);
  CLOSE(an_fit_cdf(&f, exp(1.5)), 0.5, 1e-14);
  CLOSE(an_fit_quantile(&f, 0.5), exp(1.5), 1e-10);
}

/* x = {1, 2, 3, 4, 10}: k̂ = 1.8726098439573355, θ̂ = 2.136056270828369, ℓ = −11.44437858928052 (mpmath,
 * root of log k − ψ(k) = log x̄ − mean log x). */
static void test_fit_gamma_known(void) {
  const double x[] = {1, 2, 3, 4, 10};
  AnFit f;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(x, 5, &f, &e));
  CLOSE(f.p[0].value, 1.8726098439573355, 1e-10);
  CLOSE(f.p[1].value, 2.136056270828369, 1e-10);
  CLOSE(f.p[0].value * f.p[1].value, 4, 1e-12); /* θ̂ = x̄/k̂ */
  CLOSE(f.loglik, -11.44437858928052, 1e-10);
  /* The score equation holds at the estimate. */
  double s = log(4) - (log(2) + log(3) + log(4) + log(10)) / 5;
  CLOSE(log(f.p[0].value) - gsl_sf_psi(f.p[0].value), s, 1e-12);
  /* Standard errors from the inverted Fisher information, written out. */
  double k = f.p[0].value, th = f.p[1].value, tri = gsl_sf_psi_1(k);
  CLOSE(f.p[0].se, sqrt(k / (5 * (k * tri - 1))), 1e-12);
  CLOSE(f.p[1].se, th * sqrt(tri / (5 * (k * tri - 1))), 1e-12);
  CU_ASSERT(f.p[0].lo < k && k < f.p[0].hi && f.p[1].lo < th && th < f.p[1].hi);
  /* The gamma nests the exponential: its likelihood is at least as high. */
  AnFit ex;
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(x, 5, &ex, NULL));
  CU_ASSERT(f.loglik >= ex.loglik);
  json_t *j = an_fit_to_json(&f);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "family")), "gamma");
  CLOSE(json_real_value(json_object_get(json_object_get(json_object_get(j, "params"), "shape"), "value")), k,
        0);
  CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(j, "ks"), "p"));
  json_decref(j);
}

static void expect_fit_error(gboolean (*fit)(const double *, size_t, AnFit *, GError **), const double *x,
                             size_t n, const char *msg) {
  AnFit f;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(fit(x, n, &f, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT(g_error_matches(e, AN_FIT_ERROR, AN_FIT_ERROR_INVALID_DATA));
  if (strcmp(e->message, msg) != 0) fprintf(stderr, "got '%s', expected '%s'\n", e->message, msg);
  CU_ASSERT_STRING_EQUAL(e->message, msg);
}

static void test_fit_errors(void) {
  const double one[] = {3}, neg[] = {1, -2, 3}, zero[] = {0, 1}, zeros[] = {0, 0}, same[] = {2, 2, 2},
               nan_[] = {1, NAN};
  expect_fit_error(an_fit_exponential, one, 1, "exponential fit: needs at least 2 values, got 1");
  expect_fit_error(an_fit_exponential, neg, 3,
                   "exponential fit: value 1 is -2, expected a finite value >= 0");
  expect_fit_error(an_fit_exponential, zeros, 2, "exponential fit: every value is 0");
  expect_fit_error(an_fit_exponential, nan_, 2,
                   "exponential fit: value 1 is nan, expected a finite value >= 0");
  expect_fit_error(an_fit_lognormal, zero, 2, "lognormal fit: value 0 is 0, expected a finite value > 0");
  expect_fit_error(an_fit_lognormal, same, 3, "lognormal fit: all values are equal");
  expect_fit_error(an_fit_gamma, same, 3, "gamma fit: all values are equal");
  expect_fit_error(an_fit_gamma, one, 1, "gamma fit: needs at least 2 values, got 1");
  /* Zeros are fine for the exponential. */
  AnFit f;
  CU_ASSERT_TRUE(an_fit_exponential(zero, 2, &f, NULL));
  CLOSE(f.p[0].value, 0.5, 0);
}

/* ---- Fits: recovery from samples with known parameters ------------------------------------------------ */

#define N_DRAW 2000

static double *draw(unsigned long seed, int family, double p0, double p1) {
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  double *x = g_new(double, N_DRAW);
  for (int i = 0; i < N_DRAW; i++)
    x[i] = family == AN_FIT_EXPONENTIAL ? gsl_ran_exponential(r, p0)
           : family == AN_FIT_LOGNORMAL ? gsl_ran_lognormal(r, p0, p1)
                                        : gsl_ran_gamma(r, p0, p1);
  return x;
}

/* |estimate − truth| < 5 standard errors, and the interval is ordered around the estimate. */
static void expect_recovered(const AnEstimate *e, double truth, const char *what) {
  if (!(fabs(e->value - truth) < 5 * e->se))
    fprintf(stderr, "%s: %g (se %g), truth %g\n", what, e->value, e->se, truth);
  CU_ASSERT(fabs(e->value - truth) < 5 * e->se);
  CU_ASSERT(e->lo < e->value && e->value < e->hi);
  CU_ASSERT(e->se > 0 && e->se < 0.2 * fabs(e->value) + 0.2);
}

static void test_fit_recovers_parameters(void) {
  AnFit ex, ln, ga, other;
  g_autoptr(GError) e = NULL;

  g_autofree double *xe = draw(101, AN_FIT_EXPONENTIAL, 50, 0);
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(xe, N_DRAW, &ex, &e));
  expect_recovered(&ex.p[0], 50, "exponential mean");
  CU_ASSERT(ex.ks.p > 1e-3);

  g_autofree double *xl = draw(202, AN_FIT_LOGNORMAL, 4.0, 0.8);
  CU_ASSERT_TRUE_FATAL(an_fit_lognormal(xl, N_DRAW, &ln, &e));
  expect_recovered(&ln.p[0], 4.0, "lognormal mu");
  expect_recovered(&ln.p[1], 0.8, "lognormal sigma");
  CU_ASSERT(ln.ks.p > 1e-3);
  /* The wrong families fit lognormal data worse: higher AIC, and the exponential is rejected by KS. */
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xl, N_DRAW, &other, &e));
  CU_ASSERT(other.aic > ln.aic);
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(xl, N_DRAW, &other, &e));
  CU_ASSERT(other.aic > ln.aic);
  CU_ASSERT(other.ks.p < 1e-6);

  g_autofree double *xg = draw(303, AN_FIT_GAMMA, 2.5, 30);
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xg, N_DRAW, &ga, &e));
  expect_recovered(&ga.p[0], 2.5, "gamma shape");
  expect_recovered(&ga.p[1], 30, "gamma scale");
  CU_ASSERT(ga.ks.p > 1e-3);
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(xg, N_DRAW, &other, &e));
  CU_ASSERT(other.aic > ga.aic);

  /* A shape far from 1 on either side still converges. */
  g_autofree double *xs = draw(404, AN_FIT_GAMMA, 0.2, 1);
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xs, N_DRAW, &ga, &e));
  expect_recovered(&ga.p[0], 0.2, "gamma shape 0.2");
  g_autofree double *xb = draw(505, AN_FIT_GAMMA, 200, 0.01);
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xb, N_DRAW, &ga, &e));
  expect_recovered(&ga.p[0], 200, "gamma shape 200");
  /* A nearly constant sample (coefficient of variation 1e-4): log k − ψ(k) = s ≈ 5e-9 must not cancel away.
   */
  g_autofree double *xc = draw(606, AN_FIT_GAMMA, 1e8, 1e-5);
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xc, N_DRAW, &ga, &e));
  expect_recovered(&ga.p[0], 1e8, "gamma shape 1e8");
  expect_recovered(&ga.p[1], 1e-5, "gamma scale 1e-5");
  CU_ASSERT(ga.ks.p > 1e-3);
  /* A shape far below 1: values down to 1e-100 and less. */
  g_autofree double *xt = draw(707, AN_FIT_GAMMA, 0.02, 1);
  for (int i = 0; i < N_DRAW; i++)
    xt[i] = MAX(xt[i], 1e-300);
  CU_ASSERT_TRUE_FATAL(an_fit_gamma(xt, N_DRAW, &ga, &e));
  expect_recovered(&ga.p[0], 0.02, "gamma shape 0.02");
}

/* Over R independent samples of size 100 the 95% intervals cover the truth in a share c of them: with
 * R = 400, c's standard deviation is √(0.95·0.05/400) = 0.011; 5 of them allow [0.89, 1]. */
static void test_fit_interval_coverage(void) {
  enum { R = 400, N = 100 };
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 77);
  double x[N];
  int cover_exp = 0, cover_sigma = 0, cover_shape = 0;
  for (int rep = 0; rep < R; rep++) {
    AnFit f;
    for (int i = 0; i < N; i++)
      x[i] = gsl_ran_exponential(r, 3);
    CU_ASSERT_TRUE_FATAL(an_fit_exponential(x, N, &f, NULL));
    cover_exp += f.p[0].lo <= 3 && 3 <= f.p[0].hi;
    for (int i = 0; i < N; i++)
      x[i] = gsl_ran_lognormal(r, 1, 0.5);
    CU_ASSERT_TRUE_FATAL(an_fit_lognormal(x, N, &f, NULL));
    cover_sigma += f.p[1].lo <= 0.5 && 0.5 <= f.p[1].hi;
    for (int i = 0; i < N; i++)
      x[i] = gsl_ran_gamma(r, 3, 2);
    CU_ASSERT_TRUE_FATAL(an_fit_gamma(x, N, &f, NULL));
    cover_shape += f.p[0].lo <= 3 && 3 <= f.p[0].hi;
  }
  double lo = 0.95 - 5 * sqrt(0.95 * 0.05 / R);
  CU_ASSERT((double)cover_exp / R > lo);
  CU_ASSERT((double)cover_sigma / R > lo);
  CU_ASSERT((double)cover_shape / R > lo);
  /* And they are not trivially wide: some intervals miss. */
  CU_ASSERT(cover_exp < R && cover_sigma < R && cover_shape < R);
}

/* ---- The empirical distribution ------------------------------------------------------------------------ */

static void test_empirical(void) {
  const double x[] = {4, 1, 3, 2};
  g_autoptr(GError) e = NULL;
  g_autoptr(AnEmpirical) emp = an_empirical_new(x, 4, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(emp);
  CU_ASSERT_EQUAL(an_empirical_n(emp), 4);
  const double *s = an_empirical_sorted(emp);
  CU_ASSERT(s[0] == 1 && s[1] == 2 && s[2] == 3 && s[3] == 4);
  CLOSE(an_empirical_mean(emp), 2.5, 0);
  /* Type 7: d = 3f; f = 0.5 -> 2.5, f = 0.9 -> d = 2.7 -> 3.7, f = 0 -> 1, f = 1 -> 4. */
  CLOSE(an_empirical_quantile(emp, 0.5), 2.5, 1e-15);
  CLOSE(an_empirical_quantile(emp, 0.9), 3.7, 1e-15);
  CLOSE(an_empirical_quantile(emp, 0), 1, 0);
  CLOSE(an_empirical_quantile(emp, 1), 4, 0);
  CLOSE(an_empirical_cdf(emp, 0), 0, 0);
  CLOSE(an_empirical_cdf(emp, 2), 0.5, 0);
  CLOSE(an_empirical_cdf(emp, 2.5), 0.5, 0);
  CLOSE(an_empirical_cdf(emp, 4), 1, 0);
  double lo = -1, hi = -1;
  CU_ASSERT_FALSE(an_empirical_quantile_ci(emp, 0.5, 0.95, &lo, &hi)); /* n = 4 is too small */
  CU_ASSERT_EQUAL(lo, -1);

  /* The median of n = 20: with B ~ Bin(20, 1/2), P(B <= 5) = 0.0207 <= 0.025 < P(B <= 6) = 0.0577 and
   * P(B <= 13) = 0.9423 < 0.975 <= P(B <= 14) = 0.9793, so the interval is [x_(6), x_(15)] (the textbook
   * answer for n = 20). */
  double y[20];
  for (int i = 0; i < 20; i++)
    y[i] = 20 - i;
  g_autoptr(AnEmpirical) e20 = an_empirical_new(y, 20, NULL);
  CU_ASSERT_TRUE(an_empirical_quantile_ci(e20, 0.5, 0.95, &lo, &hi));
  CLOSE(lo, 6, 0);
  CLOSE(hi, 15, 0);

  const double bad[] = {1, INFINITY};
  g_autoptr(GError) e2 = NULL;
  CU_ASSERT_PTR_NULL(an_empirical_new(bad, 2, &e2));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e2);
  CU_ASSERT_STRING_EQUAL(e2->message, "empirical distribution: value 1 is inf, expected a finite value");
  g_autoptr(GError) e3 = NULL;
  CU_ASSERT_PTR_NULL(an_empirical_new(bad, 0, &e3));
  CU_ASSERT_PTR_NOT_NULL(e3);
}

/* ---- Shares and rates ---------------------------------------------------------------------------------- */

/* Reference intervals (mpmath): Wilson from the formula in fit.h with z = 1.9599639845400542;
 * Clopper-Pearson by bisection on the regularised incomplete beta function; k = 0 and k = n in closed form
 * (1 − 0.025^{1/n} and 0.025^{1/n}). The CP 5/10 interval [0.1871, 0.8129] is the textbook one. */
static void test_share_intervals(void) {
  static const struct {
    uint64_t k, n;
    AnCiMethod m;
    double lo, hi;
  } ref[] = {
      {5, 10, AN_CI_WILSON, 0.23659309051256398, 0.76340690948743602},
      {81, 263, AN_CI_WILSON, 0.25528851987827423, 0.36620957698280007},
      {0, 10, AN_CI_WILSON, 0.0, 0.27753279986288925},
      {5, 10, AN_CI_CLOPPER_PEARSON, 0.18708602844739853, 0.81291397155260147},
      {81, 263, AN_CI_CLOPPER_PEARSON, 0.25273674558527116, 0.36762192260135136},
      {0, 10, AN_CI_CLOPPER_PEARSON, 0.0, 0.30849710781876082},
      {10, 10, AN_CI_CLOPPER_PEARSON, 0.69150289218123918, 1.0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ref); i++) {
    AnEstimate s;
    g_autoptr(GError) e = NULL;
    CU_ASSERT_TRUE_FATAL(an_share_ci(ref[i].k, ref[i].n, 0.95, ref[i].m, &s, &e));
    double p = (double)ref[i].k / (double)ref[i].n;
    CLOSE(s.value, p, 1e-15);
    CLOSE(s.se, sqrt(p * (1 - p) / (double)ref[i].n), 1e-15);
    if (fabs(s.lo - ref[i].lo) > 1e-9 || fabs(s.hi - ref[i].hi) > 1e-9)
      fprintf(stderr, "share %d/%d: [%.17g, %.17g]\n", (int)ref[i].k, (int)ref[i].n, s.lo, s.hi);
    CLOSE(s.lo, ref[i].lo, 1e-9);
    CLOSE(s.hi, ref[i].hi, 1e-9);
  }
  AnEstimate s;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(an_share_ci(0, 0, 0.95, AN_CI_WILSON, &s, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "share: no trials (n = 0)");
}

/* Pool shares 50/30/20 of 100 blocks: each interval is the binomial one; simultaneous ones are Bonferroni
 * at 1 − 0.05/3: for 50/100, Wilson [0.38359033754341687, 0.61640966245658313] (mpmath, z = Φ⁻¹(1 − 0.05/6)).
 */
static void test_multinomial_shares(void) {
  const uint64_t counts[] = {50, 30, 20};
  AnEstimate each[3], sim[3], one;
  CU_ASSERT_TRUE_FATAL(an_shares_ci(counts, 3, 0.95, AN_CI_WILSON, FALSE, each, NULL));
  CU_ASSERT_TRUE_FATAL(an_shares_ci(counts, 3, 0.95, AN_CI_WILSON, TRUE, sim, NULL));
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_TRUE(an_share_ci(counts[i], 100, 0.95, AN_CI_WILSON, &one, NULL));
    CLOSE(each[i].lo, one.lo, 0);
    CLOSE(each[i].hi, one.hi, 0);
    CU_ASSERT(sim[i].lo < each[i].lo && sim[i].hi > each[i].hi);
  }
  CLOSE(sim[0].lo, 0.38359033754341687, 1e-9);
  CLOSE(sim[0].hi, 0.61640966245658313, 1e-9);
  const uint64_t none[] = {0, 0};
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(an_shares_ci(none, 2, 0.95, AN_CI_CLOPPER_PEARSON, FALSE, each, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "shares: every count is 0");
}

/* Garwood's interval: 0 events in 1 unit: [0, −ln 0.025 = 3.6888794541139363]; 10 events in 2 units:
 * [χ²_{.025}(20)/4, χ²_{.975}(22)/4] = [2.3976943480662168, 9.1951780210088894] (mpmath; the textbook
 * interval for 10 events is [4.7954, 18.3904]). */
static void test_poisson_rate(void) {
  AnEstimate r;
  CU_ASSERT_TRUE_FATAL(an_poisson_rate_ci(0, 1, 0.95, &r, NULL));
  CLOSE(r.value, 0, 0);
  CLOSE(r.lo, 0, 0);
  CLOSE(r.hi, 3.6888794541139363, 1e-10);
  CU_ASSERT_TRUE_FATAL(an_poisson_rate_ci(10, 2, 0.95, &r, NULL));
  CLOSE(r.value, 5, 0);
  CLOSE(r.se, sqrt(10) / 2, 1e-15);
  CLOSE(r.lo, 2.3976943480662168, 1e-9);
  CLOSE(r.hi, 9.1951780210088894, 1e-9);
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(an_poisson_rate_ci(3, 0, 0.95, &r, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "Poisson rate: duration is 0, expected > 0");
}

/* ---- Large counts, where GSL's own quantile functions fail -------------------------------------------- */

/* References (mpmath, 40 digits) from exact sums around the mode: P(χ²_{2k} <= x) = P(Poisson(x/2) >= k) and
 * I_x(k, n − k + 1) = P(Binomial(n, x) >= k), inverted by bisection. They agree with the normal
 * approximations p ± 1.96·sd to the digits those give. GSL's gsl_cdf_chisq_Pinv fails from ν ≈ 27 000 and
 * gsl_cdf_beta_P from about 7e5 in both parameters. */
static void test_large_counts(void) {
  AnEstimate r;
  CU_ASSERT_TRUE_FATAL(an_poisson_rate_ci(1000000, 1000, 0.95, &r, NULL));
  CLOSE(r.lo, 998.0409833402939, 1e-9);
  CLOSE(r.hi, 1001.9619119454322, 1e-9);
  static const struct {
    uint64_t k, n;
    double lo, hi;
  } cp[] = {
      {300000, 1000000, 0.29910191193358215, 0.30089924664225374}, /* Cornish-Fisher on both ends */
      {200000, 1000000, 0.19921638409556685, 0.2007853539549399},  /* bisection below, Cornish-Fisher above */
      {5000000, 20000000, 0.24981023849779943, 0.25018983387249302}, /* where gsl_cdf_beta_P gives NaN */
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cp); i++) {
    CU_ASSERT_TRUE_FATAL(an_share_ci(cp[i].k, cp[i].n, 0.95, AN_CI_CLOPPER_PEARSON, &r, NULL));
    if (fabs(r.lo - cp[i].lo) > 1e-11 || fabs(r.hi - cp[i].hi) > 1e-11)
      fprintf(stderr, "CP %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ": [%.17g, %.17g]\n", cp[i].k, cp[i].n,
              r.lo, r.hi);
    CLOSE(r.lo, cp[i].lo, 1e-11);
    CLOSE(r.hi, cp[i].hi, 1e-11);
  }
  /* The exponential's exact interval for n = 100 000: μ̂·[0.99383087790199513, 1.0062270090421383]. */
  enum { N = 100000 };
  g_autoptr(gsl_rng) g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 9);
  double *x = g_new(double, N);
  for (int i = 0; i < N; i++)
    x[i] = gsl_ran_exponential(g, 2);
  AnFit f;
  CU_ASSERT_TRUE_FATAL(an_fit_exponential(x, N, &f, NULL));
  CLOSE(f.p[0].lo / f.p[0].value, 0.99383087790199513, 1e-12);
  CLOSE(f.p[0].hi / f.p[0].value, 1.0062270090421383, 1e-12);
  /* The median of 1 000 000 values: order statistics n/2 ∓ 1.96·√n/2 = 500 000 ∓ 980 (within two). */
  for (int i = 0; i < N; i++)
    x[i] = i + 1;
  g_autoptr(AnEmpirical) small = an_empirical_new(x, N, NULL);
  double lo, hi;
  CU_ASSERT_TRUE(an_empirical_quantile_ci(small, 0.5, 0.95, &lo, &hi)); /* exact branch */
  CU_ASSERT(fabs(lo - (50000 - 309.9)) <= 2 && fabs(hi - (50001 + 309.9)) <= 2);
  g_free(x);
  enum { M = 1000000 };
  x = g_new(double, M);
  for (int i = 0; i < M; i++)
    x[i] = i + 1;
  g_autoptr(AnEmpirical) big = an_empirical_new(x, M, NULL);
  CU_ASSERT_TRUE(an_empirical_quantile_ci(big, 0.5, 0.95, &lo, &hi)); /* Cornish-Fisher branch */
  CU_ASSERT(fabs(lo - (500000 - 980)) <= 2 && fabs(hi - (500001 + 980)) <= 2);
  g_free(x);
}

/* The gamma quantile inverts the CDF for shapes from 0.01 to 1e7, where gsl_cdf_gamma_Pinv fails at both
 * ends: to 1e-9 (relative) up to 1e4, where both are computed exactly; to 1e-8 (absolute) above 2e5, where
 * the CDF is Wilson-Hilferty's and the quantile Cornish-Fisher's. For shape 0.01 the median is
 * 4.4655350189103487e-31 (mpmath: root of P(0.01, x) = 1/2). */
static void test_gamma_quantile(void) {
  const double shapes[] = {0.01, 0.1, 1, 10, 1e4, 1e7};
  const double ps[] = {1e-10, 0.025, 0.5, 0.975, 1 - 1e-10};
  for (size_t i = 0; i < G_N_ELEMENTS(shapes); i++) {
    AnFit f = {.family = AN_FIT_GAMMA, .n_params = 2, .p = {{.value = shapes[i]}, {.value = 3}}};
    for (size_t j = 0; j < G_N_ELEMENTS(ps); j++) {
      double q = an_fit_quantile(&f, ps[j]);
      if (q == 0) { /* a quantile below the smallest double: F(DBL_MIN) is already above p */
        CU_ASSERT(shapes[i] < 1 && ps[j] < 0.5 && an_fit_cdf(&f, DBL_MIN) > ps[j]);
        continue;
      }
      double back = ps[j] <= 0.5 ? an_fit_cdf(&f, q) : 1 - an_fit_cdf(&f, q);
      double want = ps[j] <= 0.5 ? ps[j] : 1 - ps[j];
      double tol = shapes[i] > 2e5 ? 1e-8 : 1e-9 * want;
      if (!(fabs(back - want) <= tol))
        fprintf(stderr, "gamma(%g) quantile %g: %g -> %g\n", shapes[i], ps[j], q, back);
      CU_ASSERT(q > 0 && isfinite(q));
      CU_ASSERT(fabs(back - want) <= tol);
    }
  }
  AnFit f = {.family = AN_FIT_GAMMA, .n_params = 2, .p = {{.value = 0.01}, {.value = 1}}};
  double m = an_fit_quantile(&f, 0.5);
  CLOSE(m / 4.4655350189103487e-31, 1, 1e-9);
}

int register_suites(void) {
  ADD_SUITE("ks", TEST(test_ks_q_known), TEST(test_ks_one_sample_hand), TEST(test_ks_two_sample_hand),
            TEST(test_ks_two_sample_power));
  ADD_SUITE("fit", TEST(test_fit_exponential_closed_form), TEST(test_fit_lognormal_closed_form),
            TEST(test_fit_gamma_known), TEST(test_fit_errors), TEST(test_fit_recovers_parameters),
            TEST(test_fit_interval_coverage));
  ADD_SUITE("empirical", TEST(test_empirical));
  ADD_SUITE("counts", TEST(test_share_intervals), TEST(test_multinomial_shares), TEST(test_poisson_rate));
  ADD_SUITE("large", TEST(test_large_counts), TEST(test_gamma_quantile));
  return 0;
}
