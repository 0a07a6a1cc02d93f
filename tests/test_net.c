/* test_net.c: unit tests of the geographic network: jitter models (KS tests), geo tables parsing with
 * exact messages, topology invariants, determinism, latency means and transfer times. */
#include "net.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cunit-main.h"
#include "rdma.h"
#include "relay.h"
#include "sync.h"

/* ---- helpers ---- */

#define KS_N 20000
#define KS_CRIT (1.95 / sqrt((double)KS_N)) /* 0.001 level, large n */
#ifndef KS_SEED
#define KS_SEED 20190401
#endif

typedef double (*CdfFn)(double x, const void *ctx);

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One-sample Kolmogorov-Smirnov statistic of x[n] (sorted in place) against F. */
static double ks_stat(double *x, size_t n, CdfFn F, const void *ctx) {
  qsort(x, n, sizeof *x, cmp_double);
  double d = 0;
  for (size_t i = 0; i < n; i++) {
    double f = F(x[i], ctx);
    d = fmax(d, fmax((double)(i + 1) / n - f, f - (double)i / n));
  }
  return d;
}

static double mean_of(const double *x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++)
    s += x[i];
  return s / n;
}

/* Default params of a model (free with g_free). */
static void *model_defaults(const SimModelInfo *info) {
  void *p = g_malloc0(MAX(info->params_size, 1));
  sim_params_defaults(info->params, info->n_params, p);
  return p;
}

/* Params of a model parsed from JSON text; asserts no problem. Free with g_free. */
static void *model_params(const SimModelInfo *info, const char *text) {
  g_autoptr(json_t) obj = json_loads(text, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
  void *p = g_malloc0(MAX(info->params_size, 1));
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  CU_ASSERT_TRUE(sim_params_parse(info->params, info->n_params, obj, "$.j", NULL, p, diag));
  return p;
}

static double *draw(const NetJitterModel *m, const void *params, SimTime mean_ns, uint64_t stream) {
  SimRng rng;
  sim_rng_init(&rng, KS_SEED, stream);
  double *x = g_new(double, KS_N);
  for (size_t i = 0; i < KS_N; i++)
    x[i] = (double)m->sample(params, mean_ns, &rng);
  return x;
}

/* ---- jitter: none ---- */

static void test_jitter_none(void) {
  SimRng rng;
  sim_rng_init(&rng, 1, 2);
  const SimTime means[] = {0, 1, 5 * SIM_NS_PER_MS, 237 * SIM_NS_PER_MS};
  for (guint i = 0; i < G_N_ELEMENTS(means); i++)
    CU_ASSERT_EQUAL(net_jitter_none.sample(NULL, means[i], &rng), means[i]);
  CU_ASSERT_STRING_EQUAL(net_jitter_none.info.family, "jitter");
  CU_ASSERT_EQUAL(net_jitter_none.info.n_params, 0);
}

/* ---- jitter: pareto ---- */

typedef struct {
  double scale, shape;
} ParetoCtx;

static double pareto_cdf(double x, const void *ctx) {
  const ParetoCtx *c = ctx;
  return x <= c->scale ? 0 : 1 - pow(c->scale / x, c->shape);
}

static void check_pareto(double mean_ms, uint64_t stream) {
  g_autofree void *params = model_defaults(&net_jitter_pareto.info);
  SimTime mean_ns = (SimTime)(mean_ms * 1e6);
  g_autofree double *x = draw(&net_jitter_pareto, params, mean_ns, stream);
  ParetoCtx c = {.scale = (mean_ms - 5) * 1e6, .shape = 0.2 * mean_ms};
  double m = mean_of(x, KS_N);
  /* scale x shape / (shape - 1) is the mean exactly with floor 5 and 0.2 per ms. */
  CU_ASSERT_DOUBLE_EQUAL(c.scale * c.shape / (c.shape - 1), (double)mean_ns, 1);
  double var = c.scale * c.scale * c.shape / ((c.shape - 1) * (c.shape - 1) * (c.shape - 2));
  CU_ASSERT(fabs(m - mean_ns) < 5 * sqrt(var / KS_N));
  double d = ks_stat(x, KS_N, pareto_cdf, &c);
  CU_ASSERT(d < KS_CRIT);
  if (d >= KS_CRIT) fprintf(stderr, "\n  pareto mean %g ms: D = %g\n", mean_ms, d);
  /* The test has power: a 20% larger shape is rejected on the same draws. */
  ParetoCtx wrong = {.scale = c.scale, .shape = c.shape * 1.2};
  CU_ASSERT(ks_stat(x, KS_N, pareto_cdf, &wrong) > KS_CRIT);
  CU_ASSERT(x[0] >= c.scale - 1);
}

static void test_jitter_pareto_ks(void) {
  check_pareto(100, 11);
  check_pareto(32, 12);  /* NA-NA of SimBlock's table */
  check_pareto(237, 13); /* EU-AP */
}

/* The tables of net_neg_log2_uniform() and net_exp2_pos(), entry by entry, against long double: invc is 1/c
 * for the middle c of its subinterval of [0.6875, 1.375) rounded to a double, log2c is log2(1 / invc) and
 * the exp2 entries 2^(j/128), both rounded to the nearest double (within half an ulp, plus the long double's
 * own error). */
static void test_pareto_tables(void) {
  guint bad = 0;
  for (guint i = 0; i < NET_LOG2_TABLE_SIZE; i++) {
    double lo = i < 40 ? 0.6875 + i / 128.0 : 1 + (i - 40) / 64.0, w = i < 40 ? 1 / 128.0 : 1 / 64.0;
    long double c = (long double)lo + (long double)w / 2;
    double invc = net_log2_table[i].invc, log2c = net_log2_table[i].log2c;
    bad += fabsl((long double)invc - 1 / c) > 0.5L * (nextafter(invc, INFINITY) - invc) * 1.0001L;
    long double ref = -log2l((long double)invc);
    bad += fabsl((long double)log2c - ref) > 0.5L * fabs(nextafter(log2c, INFINITY) - log2c) * 1.0001L;
  }
  for (guint j = 0; j < NET_EXP2_TABLE_SIZE; j++) {
    double x = net_exp2_table[j];
    long double ref = exp2l((long double)j / NET_EXP2_TABLE_SIZE);
    bad += fabsl((long double)x - ref) > 0.5L * (nextafter(x, INFINITY) - x) * 1.0001L;
  }
  CU_ASSERT_EQUAL(bad, 0);
  /* Exact cases: powers of two. */
  CU_ASSERT_EQUAL(net_neg_log2_uniform(0.5), 1.0);
  CU_ASSERT_EQUAL(net_neg_log2_uniform(0x1p-54), 54.0);
  CU_ASSERT(fabs(net_neg_log2_uniform(1 - 0x1p-54) - 0x1p-54 / M_LN2) < 4e-16); /* the largest U */
  CU_ASSERT_EQUAL(net_exp2_pos(0), 1.0);
  CU_ASSERT_EQUAL(net_exp2_pos(10), 1024.0);
  CU_ASSERT_EQUAL(net_exp2_pos(54), 0x1p54);
}

/* The Pareto draw's own tables (net.h): invc within half an ulp of 1 / (1 + (i + 1/2)/64) and g within half
 * an ulp of 1 + log2(invc); a distribution's table against long double: its entries within their stated
 * error, its coefficients binom(-a, k). */
static void test_pareto_draw_tables(void) {
  guint bad = 0;
  for (guint i = 0; i < NET_PARETO_T; i++) {
    double invc = net_pareto_invc[i], g = net_pareto_g[i];
    long double c = 1 + ((long double)i + 0.5L) / 64;
    bad += fabsl((long double)invc - 1 / c) > 0.5L * (nextafter(invc, INFINITY) - invc) * 1.0001L;
    long double ref = 1 + log2l((long double)invc);
    bad += fabsl((long double)g - ref) > 0.5L * (nextafter(g, INFINITY) - g) * 1.0001L;
    bad += !(g > 0 && g <= 1);
  }
  CU_ASSERT_EQUAL(bad, 0);
  static const double shapes[] = {1.000001, 1.7, 6.4, 300};
  for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
    double scale_ns, a;
    net_pareto_factors(95, shapes[s], &scale_ns, &a);
    NetParetoTable tb;
    net_pareto_table_init(&tb, scale_ns, a);
    guint wrong = 0;
    for (guint j = 0; j < NET_PARETO_P; j++) {
      long double ref = (long double)scale_ns * exp2l((long double)a * j);
      wrong += fabsl(tb.p[j] / ref - 1) > 6e-16L + 0.8e-16L * a * j;
    }
    for (guint i = 0; i < NET_PARETO_T; i++) {
      long double ref = exp2l((long double)a * (1 + log2l((long double)net_pareto_invc[i])));
      wrong += fabsl(tb.t[i] / ref - 1) > 7e-16L;
    }
    long double ck = 1;
    for (guint k = 0; k < NET_PARETO_K; k++) {
      ck *= -((long double)a + k) / (k + 1);
      wrong += fabsl(tb.c[k] - ck) > 1e-15L * fabsl(ck);
      wrong += fabs(tb.c[k]) > 1; /* the series' tail bound needs it */
    }
    CU_ASSERT_EQUAL(wrong, 0);
  }
}

/* Both forms of the Pareto draw against the exact quantile scale / U^(1/shape) in long double, for the same
 * U: a million words (and the extreme ones, and both ends of every table subinterval) for shapes from just
 * above 1 to 300.
 *  - net_pareto_draw() (sample()): -log2(U) within 4e-16 + 2.3e-16 |log2 U|, the value within net.h's bound
 *    1.2e-15 + 4e-16 y, y = -log2(U) / shape;
 *  - the table form (net_latency_draw()): within 1.5e-15 + 0.8e-16 a j (a = 1 / shape, U in octave j), U's
 *    octave as the test computes it.
 * In ns the two forms, and libm's scale * exp(-log(U) / shape), agree but for a few draws in a million, one
 * rounding apart (at most 1 ns, or 1e-14 relative for huge ones). */
static void test_pareto_draw_accuracy(void) {
  static const double shapes[] = {1.000001, 1.5, 2, 6.4, 20, 64.4, 300};
  enum { N = 1000000 };
  NetParetoTable tb[G_N_ELEMENTS(shapes)];
  for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
    double scale_ns, inv_shape;
    net_pareto_factors(95, shapes[s], &scale_ns, &inv_shape);
    net_pareto_table_init(&tb[s], scale_ns, inv_shape);
  }
  SimRng rng;
  sim_rng_init(&rng, 7, 8);
  guint bad_log = 0, bad_draw = 0, bad_tab = 0, far = 0, differ = 0, forms = 0;
  double worst = 0, worst_tab = 0;
  for (guint i = 0; i < N; i++) {
    uint64_t w = sim_rng_u64(&rng);
    if (i < 64) w = i < 53 ? (UINT64_C(1) << (11 + i)) - 1 : (uint64_t)(i - 53) << 60; /* smallest .. 1 */
    if (i >= 64 && i < 64 + 2 * NET_PARETO_T) { /* both ends of every subinterval of [1/2, 1) */
      uint64_t k = (i - 64) / 2, odd = i % 2;
      w = ((UINT64_C(1) << 52) + (k + odd) * (UINT64_C(1) << 46) - odd) << 11;
    }
    double u = ((double)(w >> 11) + 0.5) * 0x1.0p-53; /* sim_rng_uniform_pos(): 1 for the largest word */
    long double L = -log2l((long double)u);
    double l = net_neg_log2_uniform(u);
    bad_log += fabsl((long double)l - L) > 4e-16L + 2.3e-16L * L;
    guint j = L > 0 ? (guint)(ceill(L) - 1) : 0; /* U's octave: 2^-(j+1) <= U < 2^-j */
    for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
      double scale_ms = 95, scale_ns, a;
      net_pareto_factors(scale_ms, shapes[s], &scale_ns, &a);
      long double ref = (long double)scale_ns * expl(-logl((long double)u) / shapes[s]);
      /* per call: the double before rounding */
      double x = scale_ns * net_exp2_pos(l * a);
      double rel = (double)fabsl(((long double)x - ref) / ref), y = (double)L / shapes[s];
      bad_draw += rel > 1.2e-15 + 4e-16 * y;
      worst = fmax(worst, rel / (1.2e-15 + 4e-16 * y));
      /* table form: the double before rounding, the steps of net_pareto_table_draw() (U = 1: the scale) */
      double xt = scale_ns;
      if (u < 1) {
        uint64_t jj, ii;
        double r = net_pareto_split(u, &jj, &ii);
        const double *c = tb[s].c;
        double r2 = r * r, r4 = r2 * r2;
        double q = (c[0] + r * c[1]) + r2 * (c[2] + r * c[3]) + r4 * ((c[4] + r * c[5]) + r2 * c[6]);
        double p = jj < NET_PARETO_P ? tb[s].p[jj] : scale_ns * net_exp2_pos(a * (double)jj);
        xt = (p * tb[s].t[ii]) * (1.0 + r * q);
        bad_tab += jj != j;
      }
      double rel_t = (double)fabsl(((long double)xt - ref) / ref), lim = 1.5e-15 + 0.8e-16 * a * j;
      bad_tab += rel_t > lim;
      worst_tab = fmax(worst_tab, rel_t / lim);
      /* in ns */
      SimRng one, two;
      sim_rng_init(&one, 1, 1);
      one.buf[0] = w;
      one.idx = 0;
      two = one;
      SimTime got = net_pareto_draw(scale_ns, a, &one);
      SimTime tab = net_pareto_table_draw(&tb[s], scale_ns, a, &two);
      forms += tab != got;
      far += llabs(tab - got) > 1 + 1e-14 * (double)got;
      double old_ms = scale_ms * exp(-log(u) / shapes[s]);
      SimTime old =
          old_ms < (double)SIM_DURATION_MAX / 1e6 ? (SimTime)(old_ms * 1e6 + 0.5) : SIM_DURATION_MAX;
      differ += got != old;
      far += llabs(got - old) > 1 + 1e-14 * (double)old;
    }
  }
  CU_ASSERT_EQUAL(bad_log, 0);
  CU_ASSERT_EQUAL(bad_draw, 0);
  CU_ASSERT_EQUAL(bad_tab, 0);
  CU_ASSERT_EQUAL(far, 0);
  CU_ASSERT(forms <= 100);  /* of 7 million (27 when this was written) */
  CU_ASSERT(differ <= 100); /* of 7 million (29 when this was written): mostly huge values at shape ~1 */
  if (bad_log || bad_draw || bad_tab || far || forms > 100 || differ > 100 || g_getenv("SIM_TEST_VERBOSE"))
    fprintf(stderr,
            "\n  pareto draw: %u log, %u per-call (worst %.3g of its bound), %u table (worst %.3g) beyond the "
            "bound; %u far; of %u, %u table/per-call and %u per-call/libm differ in ns\n",
            bad_log, bad_draw, worst, bad_tab, worst_tab, far, N * (guint)G_N_ELEMENTS(shapes), forms, differ);
}

/* The relay's per-class draw (net_latency_draw, the table form) has the Pareto distribution of its class:
 * log(X / scale) is exponential with rate shape, so its mean is 1 / shape (standard error 1 / (shape sqrt n))
 * and P(X <= scale x (1 - p)^(-1/shape)) = p at the quantiles p; 400,000 draws each for SimBlock's means of
 * 11, 58 and 325 ms (shapes 2.2, 11.6, 65). Both hold within 5 standard errors, and both fail on the same
 * draws for a shape 2% off (the test has the power to see a wrong method). The moments where they exist:
 * the mean scale x shape / (shape - 1), the pair mean, within 5 standard errors. */
static void test_pareto_class_draw_distribution(void) {
  enum { N = 400000 };
  static const double means_ms[] = {11, 58, 325};
  static const double ps[] = {0.01, 0.1, 0.5, 0.9, 0.99, 0.999};
  NetGeoParams gp = {0};
  gp.jitter.model = &net_jitter_pareto.info;
  gp.jitter.params = model_defaults(&net_jitter_pareto.info);
  double *x = g_new(double, N);
  for (guint m = 0; m < G_N_ELEMENTS(means_ms); m++) {
    NetLatencyDraw d;
    SimTime mean_ns = (SimTime)(means_ms[m] * 1e6);
    net_latency_draw_init(&d, &gp, mean_ns, 0);
    CU_ASSERT_EQUAL_FATAL(d.kind, NET_DRAW_PARETO);
    double scale = (means_ms[m] - 5) * 1e6, shape = 0.2 * means_ms[m];
    SimRng rng;
    sim_rng_init(&rng, KS_SEED, 500 + m);
    double sum_log = 0, sum = 0;
    for (guint i = 0; i < N; i++) {
      x[i] = (double)net_latency_draw(&d, &rng);
      sum_log += log(x[i] / scale);
      sum += x[i];
    }
    double se = 1 / (shape * sqrt((double)N));
    CU_ASSERT(fabs(sum_log / N - 1 / shape) < 5 * se);
    CU_ASSERT(fabs(sum_log / N - 1 / (1.02 * shape)) > 5 * se); /* power: 2% off is seen */
    if (shape > 2) { /* finite variance: the mean */
      double var = scale * scale * shape / ((shape - 1) * (shape - 1) * (shape - 2));
      CU_ASSERT(fabs(sum / N - (double)mean_ns) < 5 * sqrt(var / N));
    }
    qsort(x, N, sizeof *x, cmp_double);
    guint bad = 0, seen = 0;
    for (guint k = 0; k < G_N_ELEMENTS(ps); k++) {
      double sd = sqrt(ps[k] * (1 - ps[k]) / N);
      for (int wrong = 0; wrong < 2; wrong++) {
        double sh = wrong ? 1.02 * shape : shape;
        double q = scale * pow(1 - ps[k], -1 / sh);
        /* empirical CDF at q: draws are whole ns, q is not */
        size_t lo = 0, hi = N;
        while (lo < hi) {
          size_t mid = (lo + hi) / 2;
          if (x[mid] <= q) lo = mid + 1; else hi = mid;
        }
        double f = (double)lo / N;
        if (!wrong) bad += fabs(f - ps[k]) > 5 * sd;
        else seen += fabs(f - ps[k]) > 5 * sd;
      }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(seen >= 2); /* the quantiles in the body see a 2% shape error */
    CU_ASSERT(x[0] >= scale - 1);
  }
  g_free(x);
  g_free(gp.jitter.params);
}

static void test_jitter_pareto_fallback(void) {
  g_autofree void *params = model_defaults(&net_jitter_pareto.info);
  SimRng rng;
  sim_rng_init(&rng, 3, 4);
  /* shape 0.2 x 5 = 1: no finite mean, so the mean itself; 4 ms likewise; 0 stays 0. */
  CU_ASSERT_EQUAL(net_jitter_pareto.sample(params, 5 * SIM_NS_PER_MS, &rng), 5 * SIM_NS_PER_MS);
  CU_ASSERT_EQUAL(net_jitter_pareto.sample(params, 4 * SIM_NS_PER_MS, &rng), 4 * SIM_NS_PER_MS);
  CU_ASSERT_EQUAL(net_jitter_pareto.sample(params, 0, &rng), 0);
  /* Just above 5 ms it jitters. */
  gboolean varied = FALSE;
  for (int i = 0; i < 100; i++)
    varied |= net_jitter_pareto.sample(params, 6 * SIM_NS_PER_MS, &rng) != 6 * SIM_NS_PER_MS;
  CU_ASSERT_TRUE(varied);
  /* A floor above the mean would give scale <= 0: the mean again. */
  g_autofree void *high = model_params(&net_jitter_pareto.info, "{\"floor_ms\": 10}");
  CU_ASSERT_EQUAL(net_jitter_pareto.sample(high, 8 * SIM_NS_PER_MS, &rng), 8 * SIM_NS_PER_MS);
}

/* ---- jitter: lognormal ---- */

typedef struct {
  double mu, sigma;
} LognCtx;

static double logn_cdf(double x, const void *ctx) {
  const LognCtx *c = ctx;
  return x <= 0 ? 0 : gsl_cdf_lognormal_P(x, c->mu, c->sigma);
}

static void check_lognormal(const char *params_text, double sigma, double mean_ms, uint64_t stream) {
  g_autofree void *params = params_text ? model_params(&net_jitter_lognormal.info, params_text)
                                        : model_defaults(&net_jitter_lognormal.info);
  SimTime mean_ns = (SimTime)(mean_ms * 1e6);
  g_autofree double *x = draw(&net_jitter_lognormal, params, mean_ns, stream);
  LognCtx c = {.mu = log((double)mean_ns) - sigma * sigma / 2, .sigma = sigma};
  double m = mean_of(x, KS_N);
  double sd = mean_ns * sqrt(expm1(sigma * sigma));
  CU_ASSERT(fabs(m - mean_ns) < 5 * sd / sqrt(KS_N));
  double d = ks_stat(x, KS_N, logn_cdf, &c);
  CU_ASSERT(d < KS_CRIT);
  if (d >= KS_CRIT) fprintf(stderr, "\n  lognormal sigma %g: D = %g\n", sigma, d);
  /* Power: the median-preserving (not mean-preserving) variant is rejected when sigma is not tiny. */
  LognCtx wrong = {.mu = log((double)mean_ns), .sigma = sigma};
  CU_ASSERT(ks_stat(x, KS_N, logn_cdf, &wrong) > KS_CRIT);
}

static void test_jitter_lognormal_ks(void) {
  check_lognormal(NULL, 0.3, 150, 21);
  check_lognormal("{\"sigma\": 0.8}", 0.8, 40, 22);
  g_autofree void *zero = model_params(&net_jitter_lognormal.info, "{\"sigma\": 0}");
  SimRng rng;
  sim_rng_init(&rng, 5, 6);
  CU_ASSERT_EQUAL(net_jitter_lognormal.sample(zero, 77 * SIM_NS_PER_MS, &rng), 77 * SIM_NS_PER_MS);
}

/* ---- jitter: empirical ---- */

typedef struct {
  double q[6], f[6]; /* quantile function points, factors already times the mean */
} EmpCtx;

static double emp_cdf(double x, const void *ctx) {
  const EmpCtx *c = ctx;
  if (x <= c->f[0]) return 0;
  for (int i = 0; i < 5; i++)
    if (x <= c->f[i + 1]) return c->q[i] + (c->q[i + 1] - c->q[i]) * (x - c->f[i]) / (c->f[i + 1] - c->f[i]);
  return 1;
}

static void check_empirical(const char *params_text, const double fac[4], double mean_ms, uint64_t stream) {
  g_autofree void *params = params_text ? model_params(&net_jitter_empirical.info, params_text)
                                        : model_defaults(&net_jitter_empirical.info);
  SimTime mean_ns = (SimTime)(mean_ms * 1e6);
  g_autofree double *x = draw(&net_jitter_empirical, params, mean_ns, stream);
  EmpCtx c = {.q = {0, 0.1, 0.5, 0.9, 0.99, 1},
              .f = {0.5 * fac[0], fac[0], fac[1], fac[2], fac[3], 1.5 * fac[3]}};
  /* Moments of a piecewise-linear quantile function, segment by segment. */
  double e1 = 0, e2 = 0;
  for (int i = 0; i < 5; i++) {
    double w = c.q[i + 1] - c.q[i], a = c.f[i], b = c.f[i + 1];
    e1 += w * (a + b) / 2;
    e2 += w * (a * a + a * b + b * b) / 3;
  }
  for (int i = 0; i < 6; i++)
    c.f[i] *= mean_ns;
  double m = mean_of(x, KS_N);
  double sd = mean_ns * sqrt(e2 - e1 * e1);
  CU_ASSERT(fabs(m - e1 * mean_ns) < 5 * sd / sqrt(KS_N));
  double d = ks_stat(x, KS_N, emp_cdf, &c);
  CU_ASSERT(d < KS_CRIT);
  if (d >= KS_CRIT) fprintf(stderr, "\n  empirical: D = %g\n", d);
  /* Power: the same table at 10% larger factors is rejected. */
  EmpCtx wrong = c;
  for (int i = 0; i < 6; i++)
    wrong.f[i] *= 1.1;
  CU_ASSERT(ks_stat(x, KS_N, emp_cdf, &wrong) > KS_CRIT);
}

static void test_jitter_empirical_ks(void) {
  const double def[4] = {0.8, 1.0, 1.5, 3.0};
  check_empirical(NULL, def, 100, 31);
  const double other[4] = {0.5, 0.9, 2.0, 2.5};
  check_empirical("{\"p10_factor\": 0.5, \"p50_factor\": 0.9, \"p90_factor\": 2, \"p99_factor\": 2.5}", other,
                  60, 32);
}

static void test_jitter_empirical_check(void) {
  g_autofree void *ok = model_defaults(&net_jitter_empirical.info);
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  net_jitter_empirical.info.check(ok, diag, "$.network.jitter");
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  g_autofree void *bad = model_params(&net_jitter_empirical.info, "{\"p50_factor\": 1.6}");
  net_jitter_empirical.info.check(bad, diag, "$.network.jitter");
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(diag), 1);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "$.network.jitter: p10_factor, p50_factor, p90_factor, "
                                                "p99_factor must be non-decreasing (got 0.8, 1.6, 1.5, 3)");
  /* Equal neighbours are allowed (a flat stretch of the quantile function). */
  g_autofree void *flat = model_params(&net_jitter_empirical.info, "{\"p50_factor\": 1.5}");
  net_jitter_empirical.info.check(flat, diag, "$.network.jitter");
  CU_ASSERT_EQUAL(sim_diag_count(diag), 1);
}

static void test_jitter_tables(void) {
  const NetJitterModel *models[] = {&net_jitter_none, &net_jitter_pareto, &net_jitter_lognormal,
                                    &net_jitter_empirical};
  const char *names[] = {"none", "pareto", "lognormal", "empirical"};
  for (guint i = 0; i < G_N_ELEMENTS(models); i++) {
    CU_ASSERT_STRING_EQUAL(models[i]->info.name, names[i]);
    CU_ASSERT_STRING_EQUAL(models[i]->info.family, "jitter");
    CU_ASSERT_PTR_NOT_NULL(models[i]->info.help);
    for (guint k = 0; k < models[i]->info.n_params; k++)
      CU_ASSERT_PTR_NOT_NULL(models[i]->info.params[k].help);
  }
  g_autoptr(json_t) obj = json_loads("{\"sigma\": -1}", 0, NULL);
  g_autofree void *p = g_malloc0(net_jitter_lognormal.info.params_size);
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  CU_ASSERT_FALSE(sim_params_parse(net_jitter_lognormal.info.params, net_jitter_lognormal.info.n_params, obj,
                                   "$.j", NULL, p, diag));
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(diag), 1);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "$.j.sigma: must be in [0, 10] (got -1)");
}

/* ---- geo tables ---- */

static const char *const pools[] = {"Ethermine", "Sparkpool", "F2pool2", NULL};

/* Three regions, two cities, two vantage points, gateways of two pools (Ethermine twice). */
static const char *const geo_text =
    "{\"network\": {"
    " \"nodes\": 500, \"gateway_mesh\": false,"
    " \"regions\": {"
    "  \"names\": [\"NA\", \"EU\", \"AP\"],"
    "  \"latency_ms\": [[32, 124, 198], [120, 11, 237], [199, 236, 85]],"
    "  \"upload_bps\": [19200000, 20700000, 15700000],"
    "  \"download_bps\": [52000000, 40000000, 22800000],"
    "  \"node_share\": [0.3335, 0.5, 0.167]},"
    " \"cities\": {\"names\": [\"Frankfurt\", \"Tokyo\"], \"region\": [\"EU\", \"AP\"],"
    "  \"rtt_ms\": [[null, 250], [250, 2]]},"
    " \"vantage_points\": [{\"name\": \"CE\", \"city\": \"Frankfurt\", \"peers\": 120},"
    "  {\"name\": \"EA\", \"region\": \"AP\", \"comment\": \"Hong Kong\"}],"
    " \"gateways\": [{\"pool\": \"Ethermine\", \"cities\": [\"Frankfurt\", \"Tokyo\"]},"
    "  {\"pool\": \"Sparkpool\", \"cities\": [\"Tokyo\", \"Frankfurt\"], \"peers\": 30},"
    "  {\"pool\": \"Ethermine\", \"regions\": [\"NA\"]}]"
    "}}";

static const char *const geo_extra[] = {"model",    "comment", "jitter", "relay",
                                        "stratum",  "regions", "cities", "vantage_points",
                                        "gateways", "joining", NULL};

/* Parses root["network"] at "$.network" into p (scalars, then tables); returns the problem count. */
static guint parse_geo(json_t *root, NetGeoParams *p, SimDiag *diag) {
  memset(p, 0, sizeof *p);
  json_t *net = json_object_get(root, "network");
  sim_params_parse(net_geo_param_specs, net_geo_n_param_specs, net, "$.network", geo_extra, p, diag);
  net_geo_parse_tables(p, net, "$.network", pools, 3, diag);
  return sim_diag_count(diag);
}

static json_t *geo_root(void) {
  json_error_t err;
  json_t *root = json_loads(geo_text, JSON_REJECT_DUPLICATES, &err);
  if (!root) fprintf(stderr, "\n  %d:%d: %s\n", err.line, err.column, err.text);
  return root;
}

static void test_parse_valid(void) {
  g_autoptr(json_t) root = geo_root();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  NetGeoParams p;
  g_autoptr(SimDiag) diag = sim_diag_new("s.json");
  CU_ASSERT_EQUAL(parse_geo(root, &p, diag), 0);
  if (sim_diag_count(diag)) fprintf(stderr, "\n%s\n", sim_diag_join(diag));
  /* Scalars: given and defaults. */
  CU_ASSERT_EQUAL(p.nodes, 500);
  CU_ASSERT_EQUAL(p.out_peers, 8);
  CU_ASSERT_EQUAL(p.max_peers, 25);
  CU_ASSERT_DOUBLE_EQUAL(p.geo_bias, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.dc_upload_bps, 1e9, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.dc_download_bps, 1e9, 0);
  CU_ASSERT_EQUAL(p.gateway_peers, 50);
  /* Regions. */
  CU_ASSERT_EQUAL_FATAL(p.n_regions, 3);
  CU_ASSERT_STRING_EQUAL(p.region_names[2], "AP");
  CU_ASSERT_PTR_NULL(p.region_names[3]);
  CU_ASSERT_DOUBLE_EQUAL(p.latency_ms[1 * 3 + 0], 120, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.latency_ms[0 * 3 + 1], 124, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.upload_bps[1], 20.7e6, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.download_bps[2], 22.8e6, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.node_share[0], 0.3335 / 1.0005, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(p.node_share[0] + p.node_share[1] + p.node_share[2], 1, 1e-15);
  /* Cities. */
  CU_ASSERT_EQUAL_FATAL(p.n_cities, 2);
  CU_ASSERT_STRING_EQUAL(p.city_names[1], "Tokyo");
  CU_ASSERT_EQUAL(p.city_region[0], 1);
  CU_ASSERT_EQUAL(p.city_region[1], 2);
  CU_ASSERT_TRUE(isnan(p.city_rtt_ms[0]));
  CU_ASSERT_DOUBLE_EQUAL(p.city_rtt_ms[1], 250, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.city_rtt_ms[3], 2, 0);
  /* Specials: vantage points, then gateways in the order listed. */
  CU_ASSERT_EQUAL(p.n_vantages, 2);
  CU_ASSERT_EQUAL_FATAL(p.n_specials, 7);
  const struct {
    const char *name;
    NetRole role;
    guint pool;
    guint16 region, city;
    guint32 peers;
  } want[] = {
      {"CE", NET_ROLE_VANTAGE, NET_NO_POOL, 1, 0, 120},
      {"EA", NET_ROLE_VANTAGE, NET_NO_POOL, 2, NET_NO_CITY, 800},
      {"Ethermine#1", NET_ROLE_GATEWAY, 0, 1, 0, 50},
      {"Ethermine#2", NET_ROLE_GATEWAY, 0, 2, 1, 50},
      {"Sparkpool#1", NET_ROLE_GATEWAY, 1, 2, 1, 30},
      {"Sparkpool#2", NET_ROLE_GATEWAY, 1, 1, 0, 30},
      {"Ethermine#3", NET_ROLE_GATEWAY, 0, 0, NET_NO_CITY, 50},
  };
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
    const NetSpecial *s = &p.specials[i];
    CU_ASSERT_STRING_EQUAL(s->name, want[i].name);
    CU_ASSERT_EQUAL(s->role, want[i].role);
    CU_ASSERT_EQUAL(s->pool, want[i].pool);
    CU_ASSERT_EQUAL(s->region, want[i].region);
    CU_ASSERT_EQUAL(s->city, want[i].city);
    CU_ASSERT_EQUAL(s->peers, want[i].peers);
  }
  /* The echo holds the defaults. */
  json_t *net = json_object_get(root, "network");
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(net, "max_peers")), 25);
  json_t *ea = json_array_get(json_object_get(net, "vantage_points"), 1);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(ea, "peers")), 800);
  json_t *g0 = json_array_get(json_object_get(net, "gateways"), 0);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(g0, "peers")), 50);
  net_geo_clear_tables(&p);
  CU_ASSERT_PTR_NULL(p.specials);
  CU_ASSERT_EQUAL(p.n_regions, 0);
  sim_params_clear(net_geo_param_specs, net_geo_n_param_specs, &p);
}

/* Applies `sets` (--set style, relative to the root) and removes `del` ("a.b.c": last part is the key),
 * then asserts exactly the messages `expected` (NULL-terminated). */
static void expect_problems(const char *const *sets, const char *del, const char *const *expected) {
  g_autoptr(json_t) root = geo_root();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  for (guint i = 0; sets && sets[i]; i++) {
    g_autoptr(GError) err = NULL;
    CU_ASSERT_TRUE_FATAL(sim_json_set_path(root, sets[i], &err));
  }
  if (del) {
    g_auto(GStrv) parts = g_strsplit(del, ".", -1);
    json_t *o = root;
    guint n = g_strv_length(parts);
    for (guint i = 0; i + 1 < n; i++) {
      char *br = strchr(parts[i], '[');
      if (br) {
        *br = '\0';
        o = json_array_get(json_object_get(o, parts[i]), strtoul(br + 1, NULL, 10));
      } else {
        o = json_object_get(o, parts[i]);
      }
    }
    CU_ASSERT_EQUAL_FATAL(json_object_del(o, parts[n - 1]), 0);
  }
  NetGeoParams p;
  g_autoptr(SimDiag) diag = sim_diag_new("s.json");
  guint count = parse_geo(root, &p, diag);
  guint n_expected = g_strv_length((char **)expected);
  CU_ASSERT_EQUAL(count, n_expected);
  for (guint i = 0; i < MIN(count, n_expected); i++) {
    g_autofree char *full = g_strdup_printf("s.json: %s", expected[i]);
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, i), full);
    if (strcmp(sim_diag_get(diag, i), full) != 0)
      fprintf(stderr, "\n  got:      %s\n  expected: %s\n", sim_diag_get(diag, i), full);
  }
  if (count != n_expected) {
    g_autofree char *all = sim_diag_join(diag);
    fprintf(stderr, "\n  got %u problems:\n%s\n", count, all);
  }
  net_geo_clear_tables(&p);
  sim_params_clear(net_geo_param_specs, net_geo_n_param_specs, &p);
}

#define SETS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_parse_unknown_region_city(void) {
  expect_problems(SETS("network.cities.region[1]=\"XX\""), NULL,
                  WANT("$.network.cities.region[1]: unknown region \"XX\" (expected one of: NA, EU, AP)"));
}

static void test_parse_unknown_region_vantage(void) {
  expect_problems(
      SETS("network.vantage_points[1].region=\"SA\""), NULL,
      WANT("$.network.vantage_points[1].region: unknown region \"SA\" (expected one of: NA, EU, AP)"));
}

static void test_parse_latency_not_square(void) {
  expect_problems(SETS("network.regions.latency_ms[2]=[199, 236]"), NULL,
                  WANT("$.network.regions.latency_ms: must be a 3x3 matrix (row 2 has 2 entries)"));
  expect_problems(SETS("network.regions.latency_ms=[[1, 2, 3], [4, 5, 6]]"), NULL,
                  WANT("$.network.regions.latency_ms: must be a 3x3 matrix (got 2 rows)"));
}

static void test_parse_negative_latency(void) {
  expect_problems(SETS("network.regions.latency_ms[1][2]=-4"), NULL,
                  WANT("$.network.regions.latency_ms[1][2]: must be in [0, 3.6e+06] (got -4)"));
  /* At most an hour, as the delay models: 1e308 ms would saturate every draw. */
  expect_problems(SETS("network.regions.latency_ms[0][1]=1e308"), NULL,
                  WANT("$.network.regions.latency_ms[0][1]: must be in [0, 3.6e+06] (got 1e+308)"));
}

static void test_parse_bandwidth_zero(void) {
  expect_problems(SETS("network.regions.upload_bps[2]=0"), NULL,
                  WANT("$.network.regions.upload_bps[2]: must be > 0 (got 0)"));
  expect_problems(SETS("network.regions.download_bps=[1, 2]"), NULL,
                  WANT("$.network.regions.download_bps: must be an array of 3 numbers (got 2 entries)"));
}

static void test_parse_vantage_peers_zero(void) {
  expect_problems(SETS("network.vantage_points[0].peers=0"), NULL,
                  WANT("$.network.vantage_points[0].peers: must be >= 1 (got 0)"));
}

static void test_parse_vantage_no_place(void) {
  expect_problems(NULL, "network.vantage_points[0].city",
                  WANT("$.network.vantage_points[0]: must give \"region\" or \"city\""));
  expect_problems(SETS("network.vantage_points[0].region=\"EU\""), NULL,
                  WANT("$.network.vantage_points[0]: must give \"region\" or \"city\", not both"));
  expect_problems(SETS("network.vantage_points[1].name=\"CE\""), NULL,
                  WANT("$.network.vantage_points[1].name: duplicate name \"CE\""));
}

static void test_parse_unknown_pool(void) {
  expect_problems(SETS("network.gateways[1].pool=\"X\""), NULL,
                  WANT("$.network.gateways[1].pool: unknown pool \"X\""));
  expect_problems(
      SETS("network.gateways[0].cities[1]=\"Paris\""), NULL,
      WANT("$.network.gateways[0].cities[1]: unknown city \"Paris\" (expected one of: Frankfurt, Tokyo)"));
  expect_problems(
      SETS("network.gateways[2].regions=[]"), NULL,
      WANT("$.network.gateways[2].regions: must be a non-empty array of region names (got an empty array)"));
}

static void test_parse_shares_sum(void) {
  expect_problems(SETS("network.regions.node_share[1]=0.4"), NULL,
                  WANT("$.network.regions.node_share: must sum to 1 (got 0.9005)"));
}

static void test_parse_structure(void) {
  expect_problems(
      SETS("network.regions.colour=1"), NULL,
      WANT("$.network.regions.colour: unknown key (expected one of: names, latency_ms, upload_bps, "
           "download_bps, node_share, comment)"));
  expect_problems(SETS("network.regions.names[2]=\"NA\""), NULL,
                  WANT("$.network.regions.names[2]: duplicate name \"NA\""));
  expect_problems(NULL, "network.regions", WANT("$.network.regions: missing required key"));
  /* No cities table: a gateway naming a city is told so. */
  expect_problems(
      SETS("network.vantage_points[0].region=\"EU\""), "network.cities",
      WANT("$.network.vantage_points[0]: must give \"region\" or \"city\", not both",
           "$.network.gateways[0].cities[0]: unknown city \"Frankfurt\" (no cities are defined)",
           "$.network.gateways[0].cities[1]: unknown city \"Tokyo\" (no cities are defined)",
           "$.network.gateways[1].cities[0]: unknown city \"Tokyo\" (no cities are defined)",
           "$.network.gateways[1].cities[1]: unknown city \"Frankfurt\" (no cities are defined)"));
  expect_problems(SETS("network.cities.rtt_ms[0][1]=\"far\""), NULL,
                  WANT("$.network.cities.rtt_ms[0][1]: must be a number or null (got string)"));
}

/* Every problem of one input in one pass, in document order. */
static void test_parse_all_in_one_pass(void) {
  expect_problems(
      SETS("network.regions.latency_ms[1][2]=-4", "network.regions.upload_bps[2]=0",
           "network.regions.node_share[1]=0.4", "network.cities.region[1]=\"XX\"",
           "network.vantage_points[1].region=\"SA\"", "network.vantage_points[0].peers=0",
           "network.gateways[1].pool=\"X\"", "network.out_peers=0"),
      NULL,
      WANT("$.network.out_peers: must be in [1, 1000] (got 0)",
           "$.network.regions.latency_ms[1][2]: must be in [0, 3.6e+06] (got -4)",
           "$.network.regions.upload_bps[2]: must be > 0 (got 0)",
           "$.network.regions.node_share: must sum to 1 (got 0.9005)",
           "$.network.cities.region[1]: unknown region \"XX\" (expected one of: NA, EU, AP)",
           "$.network.vantage_points[0].peers: must be >= 1 (got 0)",
           "$.network.vantage_points[1].region: unknown region \"SA\" (expected one of: NA, EU, AP)",
           "$.network.gateways[1].pool: unknown pool \"X\""));
}

/* ---- topology ---- */

/* The fixture with `sets` applied, parsed; asserts success. */
static void load_geo(NetGeoParams *p, const char *const *sets) {
  g_autoptr(json_t) root = geo_root();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  for (guint i = 0; sets && sets[i]; i++)
    CU_ASSERT_TRUE_FATAL(sim_json_set_path(root, sets[i], NULL));
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  CU_ASSERT_EQUAL_FATAL(parse_geo(root, p, diag), 0);
}

static void clear_geo(NetGeoParams *p) {
  net_geo_clear_tables(p);
  sim_params_clear(net_geo_param_specs, net_geo_n_param_specs, p);
}

static guint32 degree(const NetTopology *t, guint32 u) {
  return t->adj_off[u + 1] - t->adj_off[u];
}

static void test_topology_invariants(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.vantage_points[1].peers=90"));
  g_autoptr(GError) err = NULL;
  g_autoptr(NetTopology) t = net_topology_build(&p, 42, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  const guint32 S = p.n_specials;
  CU_ASSERT_EQUAL(t->n_special, 7);
  CU_ASSERT_EQUAL_FATAL(t->n_nodes, 507);
  CU_ASSERT_EQUAL(t->n_edges, t->adj_off[t->n_nodes]);
  CU_ASSERT_EQUAL(t->n_edges % 2, 0);
  /* Exact region counts: 500 x (0.33333, 0.49975, 0.16692) by largest remainder = 167, 250, 83. */
  guint32 cnt[3] = {0};
  for (guint32 u = S; u < t->n_nodes; u++)
    cnt[t->region[u]]++;
  CU_ASSERT_EQUAL(cnt[0], 167);
  CU_ASSERT_EQUAL(cnt[1], 250);
  CU_ASSERT_EQUAL(cnt[2], 83);
  /* Node classes and bandwidths. */
  for (guint32 u = 0; u < t->n_nodes; u++) {
    if (u < S) {
      CU_ASSERT_EQUAL(t->cls[u], NET_CLASS_DATACENTER);
      CU_ASSERT_EQUAL(t->region[u], p.specials[u].region);
      CU_ASSERT_EQUAL(t->city[u], p.specials[u].city);
      CU_ASSERT_DOUBLE_EQUAL(t->up_bps[u], 1e9, 0);
    } else {
      CU_ASSERT_EQUAL(t->cls[u], NET_CLASS_HOME);
      CU_ASSERT_EQUAL(t->city[u], NET_NO_CITY);
      CU_ASSERT_DOUBLE_EQUAL(t->up_bps[u], p.upload_bps[t->region[u]], 0);
      CU_ASSERT_DOUBLE_EQUAL(t->down_bps[u], p.download_bps[t->region[u]], 0);
    }
  }
  guint bad_order = 0, bad_rev = 0, self = 0, over_cap = 0, bad_special = 0;
  for (guint32 u = 0; u < t->n_nodes; u++) {
    guint32 non_gateway = 0;
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      if (v == u) self++;
      if (e > t->adj_off[u] && t->adj[e - 1] >= v) bad_order++; /* sorted, hence no duplicates */
      if (t->rev[e] >= t->n_edges || t->adj[t->rev[e]] != u || t->rev[t->rev[e]] != e ||
          t->rev[e] < t->adj_off[v] || t->rev[e] >= t->adj_off[v + 1])
        bad_rev++;
      if (!(v < S && p.specials[v].role == NET_ROLE_GATEWAY)) non_gateway++;
    }
    if (u >= S && non_gateway > (guint32)p.max_peers) over_cap++;
    if (u < S) {
      /* Its peers plus the gateways of other pools in its city. */
      guint32 extra = 0;
      for (guint32 w = p.n_vantages; w < S && p.specials[u].role == NET_ROLE_GATEWAY; w++)
        if (w != u && p.specials[w].city != NET_NO_CITY && p.specials[w].city == p.specials[u].city &&
            p.specials[w].pool != p.specials[u].pool)
          extra++;
      if (degree(t, u) != p.specials[u].peers + extra) bad_special++;
    }
  }
  CU_ASSERT_EQUAL(self, 0);
  CU_ASSERT_EQUAL(bad_order, 0);
  CU_ASSERT_EQUAL(bad_rev, 0);
  CU_ASSERT_EQUAL(over_cap, 0);
  CU_ASSERT_EQUAL(bad_special, 0);
  CU_ASSERT_EQUAL(degree(t, 2), 51); /* Ethermine#1: 50 peers + Sparkpool#2 in Frankfurt */
  CU_ASSERT_EQUAL(degree(t, 6), 50); /* Ethermine#3: region only */
  /* Ordinary nodes got their dials: the mean degree among ordinary links is near 2 x out_peers. */
  guint64 oo = 0;
  for (guint32 u = S; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
      oo += t->adj[e] >= S;
  CU_ASSERT(oo >= 2 * 500 * 8 * 0.98 && oo <= 2 * 500 * 8);
  clear_geo(&p);
}

/* Ordinary-ordinary links are exactly the successful ordinary dials; the share inside the dialler's own
 * region is geo_bias + (1 - geo_bias) x (n_r - 1) / (N - 1) per dialler (self excluded). */
static void check_geo_share(const char *bias_set, double bias) {
  NetGeoParams p;
  load_geo(&p, SETS(bias_set, "network.nodes=2000"));
  g_autoptr(NetTopology) t = net_topology_build(&p, 7, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  const guint32 S = t->n_special, N = t->n_nodes - S;
  guint32 cnt[3] = {0};
  for (guint32 u = S; u < t->n_nodes; u++)
    cnt[t->region[u]]++;
  double expected = 0;
  for (guint r = 0; r < 3; r++)
    expected += (double)cnt[r] / N * (bias + (1 - bias) * (double)(cnt[r] - 1) / (N - 1));
  guint64 links = 0, inside = 0;
  for (guint32 u = S; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      if (v < S || v < u) continue;
      links++;
      inside += t->region[u] == t->region[v];
    }
  double share = (double)inside / links;
  double sigma = sqrt(expected * (1 - expected) / links);
  CU_ASSERT(fabs(share - expected) < 5 * sigma);
  if (!(fabs(share - expected) < 5 * sigma))
    fprintf(stderr, "\n  geo_bias %g: share %g, expected %g +- %g\n", bias, share, expected, sigma);
  clear_geo(&p);
}

static void test_topology_geo_share(void) {
  check_geo_share("network.geo_bias=0", 0);
  check_geo_share("network.geo_bias=0.5", 0.5);
  check_geo_share("network.geo_bias=0.9", 0.9);
}

static gboolean same_topology(const NetTopology *a, const NetTopology *b) {
  if (a->n_nodes != b->n_nodes || a->n_edges != b->n_edges) return FALSE;
  return memcmp(a->adj_off, b->adj_off, (a->n_nodes + 1) * sizeof(guint32)) == 0 &&
         memcmp(a->adj, b->adj, a->n_edges * sizeof(guint32)) == 0 &&
         memcmp(a->rev, b->rev, a->n_edges * sizeof(guint32)) == 0 &&
         memcmp(a->lat_mean_ns, b->lat_mean_ns, a->n_edges * sizeof(SimTime)) == 0 &&
         memcmp(a->region, b->region, a->n_nodes * sizeof(guint16)) == 0;
}

static gint64 edge_index(const NetTopology *t, guint32 u, guint32 v) {
  for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
    if (t->adj[e] == v) return e;
  return -1;
}

/* With gateway_mesh every two gateways of different pools are linked, at half their cities' RTT. */
static void test_topology_gateway_mesh(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.gateway_mesh=true"));
  g_autoptr(NetTopology) t = net_topology_build(&p, 42, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  guint pairs = 0;
  for (guint32 a = p.n_vantages; a < p.n_specials; a++)
    for (guint32 b = p.n_vantages; b < p.n_specials; b++) {
      gboolean linked = edge_index(t, a, b) >= 0;
      gboolean want = a != b && p.specials[a].pool != p.specials[b].pool;
      CU_ASSERT_EQUAL(linked, want);
      pairs += linked;
    }
  CU_ASSERT(pairs > 0);
  /* Ethermine#2 (Tokyo, 3) and Sparkpool#2 (Frankfurt, 5): RTT 250 ms, 125 ms each way. */
  gint64 e = edge_index(t, 3, 5);
  CU_ASSERT_FATAL(e >= 0);
  CU_ASSERT_EQUAL(t->lat_mean_ns[e], 125 * SIM_NS_PER_MS);
  /* Vantage points are not part of the mesh. */
  CU_ASSERT_EQUAL(edge_index(t, 0, 2), -1);
  clear_geo(&p);
}

static void test_topology_deterministic(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.vantage_points[1].peers=90"));
  g_autoptr(NetTopology) a = net_topology_build(&p, 1234, NULL);
  g_autoptr(NetTopology) b = net_topology_build(&p, 1234, NULL);
  g_autoptr(NetTopology) c = net_topology_build(&p, 1235, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_TRUE(same_topology(a, b));
  CU_ASSERT_FALSE(same_topology(a, c));
  CU_ASSERT_FALSE(memcmp(a->region, c->region, a->n_nodes * sizeof(guint16)) == 0);
  clear_geo(&p);
}


static void test_topology_latency_means(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.vantage_points[1].peers=90"));
  g_autoptr(NetTopology) t = net_topology_build(&p, 99, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  /* Ethermine#2 (3) and Sparkpool#1 (4) share Tokyo, RTT 2 ms: 1 ms each way. */
  gint64 e = edge_index(t, 3, 4);
  CU_ASSERT_FATAL(e >= 0);
  CU_ASSERT_EQUAL(t->lat_mean_ns[e], 1 * SIM_NS_PER_MS);
  CU_ASSERT_EQUAL(t->lat_mean_ns[t->rev[e]], 1 * SIM_NS_PER_MS);
  /* Ethermine#1 (2) and Sparkpool#2 (5) share Frankfurt, RTT not measured: the EU-EU entry. */
  e = edge_index(t, 2, 5);
  CU_ASSERT_FATAL(e >= 0);
  CU_ASSERT_EQUAL(t->lat_mean_ns[e], 11 * SIM_NS_PER_MS);
  /* Same pool, or different cities: no link. */
  CU_ASSERT_EQUAL(edge_index(t, 2, 3), -1);
  CU_ASSERT_EQUAL(edge_index(t, 3, 5), -1);
  CU_ASSERT_EQUAL(edge_index(t, 0, 2), -1);
  /* Every other edge: the region matrix entry [region(u)][region(v)] (asymmetric in the fixture). */
  guint bad = 0, checked_asym = 0;
  for (guint32 u = 0; u < t->n_nodes; u++)
    for (guint32 k = t->adj_off[u]; k < t->adj_off[u + 1]; k++) {
      guint32 v = t->adj[k];
      if ((u == 3 && v == 4) || (u == 4 && v == 3)) continue;
      SimTime want = (SimTime)p.latency_ms[t->region[u] * 3 + t->region[v]] * SIM_NS_PER_MS;
      if (t->lat_mean_ns[k] != want) bad++;
      if (t->region[u] == 1 && t->region[v] == 0)
        checked_asym++, bad += t->lat_mean_ns[k] != 120 * SIM_NS_PER_MS;
    }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(checked_asym > 0);
  /* Draws: none gives the mean; pareto is >= mean - 5 ms and averages to the mean. */
  SimRng rng;
  sim_rng_init(&rng, 8, 9);
  e = t->adj_off[t->n_special];
  CU_ASSERT_EQUAL(net_edge_latency(&p, t, e, &rng), t->lat_mean_ns[e]);
  p.jitter.model = &net_jitter_pareto.info;
  p.jitter.params = model_defaults(&net_jitter_pareto.info);
  /* An EU -> NA edge: mean 120 ms. */
  gint64 eu_na = -1;
  for (guint32 u = t->n_special; u < t->n_nodes && eu_na < 0; u++)
    for (guint32 k = t->adj_off[u]; k < t->adj_off[u + 1] && eu_na < 0; k++)
      if (t->region[u] == 1 && t->region[t->adj[k]] == 0 && t->adj[k] >= t->n_special) eu_na = k;
  CU_ASSERT_FATAL(eu_na >= 0);
  double sum = 0;
  SimTime lo = SIM_TIME_MAX;
  for (int i = 0; i < KS_N; i++) {
    SimTime x = net_edge_latency(&p, t, eu_na, &rng);
    sum += (double)x;
    lo = MIN(lo, x);
  }
  CU_ASSERT(lo >= 115 * SIM_NS_PER_MS);
  double shape = 24, scale = 115e6;
  double sd = scale * sqrt(shape / ((shape - 1) * (shape - 1) * (shape - 2)));
  CU_ASSERT(fabs(sum / KS_N - 120e6) < 5 * sd / sqrt(KS_N));
  g_free(p.jitter.params);
  p.jitter.model = NULL;
  p.jitter.params = NULL;
  clear_geo(&p);
}

/* net_latency_draw() (the relay's per-class draw) returns what net_edge_latency() returns, with the same
 * random numbers, for every jitter model and every edge of a topology (small means included, where pareto
 * falls back to the mean): exactly, but for pareto's table form, which may round a few draws in a million
 * one ns the other way. */
static void test_latency_draw_matches_edge(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.vantage_points[1].peers=90"));
  g_autoptr(NetTopology) t = net_topology_build(&p, 99, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  const SimModelInfo *models[] = {NULL, &net_jitter_pareto.info, &net_jitter_lognormal.info,
                                  &net_jitter_empirical.info};
  for (guint k = 0; k < G_N_ELEMENTS(models); k++) {
    p.jitter.model = models[k];
    p.jitter.params = models[k] ? model_defaults(models[k]) : NULL;
    SimRng a, b;
    sim_rng_init(&a, 3, 100 + k);
    sim_rng_init(&b, 3, 100 + k);
    guint bad = 0, apart = 0;
    for (guint64 e = 0; e < t->n_edges; e++) {
      NetLatencyDraw d;
      net_latency_draw_init(&d, &p, t->lat_mean_ns[e], 0);
      for (int r = 0; r < 3; r++) {
        SimTime x = net_edge_latency(&p, t, e, &a), y = net_latency_draw(&d, &b);
        bad += models[k] == &net_jitter_pareto.info ? llabs(x - y) > 1 : x != y;
        apart += x != y;
      }
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT(apart <= 2); /* a few in a million */
    CU_ASSERT_EQUAL(sim_rng_u64(&a), sim_rng_u64(&b)); /* the same numbers were consumed */
    g_free(p.jitter.params);
  }
  p.jitter.model = NULL;
  p.jitter.params = NULL;
  clear_geo(&p);
}

static void test_transfer_ns(void) {
  double up[3] = {19.2e6, 20.7e6, 1e9}, down[3] = {52e6, 40e6, 1e9};
  NetTopology t = {.n_nodes = 3, .up_bps = up, .down_bps = down};
  /* 20 000 bytes, NA home -> EU home: min(19.2, 40) Mb/s: 160 000 / 19.2e6 s = 8.3333 ms. */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 1, 20000), 8333333);
  /* EU -> NA: min(20.7, 52): 7.7294686 ms. */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 1, 0, 20000), 7729469);
  /* Data centre -> EU home: the home download, 40 Mb/s: exactly 4 ms. */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 2, 1, 20000), 4 * SIM_NS_PER_MS);
  /* Home -> data centre: the home upload. */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 2, 24000), 10 * SIM_NS_PER_MS);
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 1, 0), 0);
}

static void test_topology_error(void) {
  /* Two ordinary nodes with room for one link each: they take it, and the vantage point finds no peer. */
  NetGeoParams p;
  load_geo(&p, SETS("network.nodes=2", "network.max_peers=1", "network.out_peers=1", "network.gateways=[]",
                    "network.vantage_points=[{\"name\": \"WE\", \"region\": \"EU\"}]"));
  g_autoptr(GError) err = NULL;
  NetTopology *t = net_topology_build(&p, 5, &err);
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(err);
  CU_ASSERT_TRUE(g_error_matches(err, NET_ERROR, NET_ERROR_TOPOLOGY));
  CU_ASSERT_STRING_EQUAL(
      err->message,
      "vantage point \"WE\" found no peer (every ordinary node already has max_peers = 1 links)");
  net_topology_free(t);
  clear_geo(&p);
  /* A gateway ignores the cap, so the same network with a gateway instead builds. */
  load_geo(&p,
           SETS("network.nodes=2", "network.max_peers=1", "network.out_peers=1", "network.vantage_points=[]",
                "network.gateways=[{\"pool\": \"F2pool2\", \"regions\": [\"AP\"], \"peers\": 2}]"));
  g_autoptr(NetTopology) ok = net_topology_build(&p, 5, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(ok);
  CU_ASSERT_STRING_EQUAL(p.specials[0].name, "F2pool2#1");
  CU_ASSERT_EQUAL(degree(ok, 0), 2); /* min(peers, ordinary nodes) */
  CU_ASSERT_EQUAL(degree(ok, 1), 2); /* its dial + the gateway, above max_peers */
  clear_geo(&p);
}

/* ---- performance-model wire-ins: dc_stack and joining nodes ---- */

/* The static choice lists of the two options follow the models they name. */
static void test_wirein_name_lists(void) {
  const SimStackModel *const *m = sim_stack_models();
  CU_ASSERT_STRING_EQUAL(net_dc_stack_names[NET_DC_STACK_NONE], "none");
  guint i = 0;
  for (; m[i]; i++) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(net_dc_stack_names[i + 1]);
    CU_ASSERT_STRING_EQUAL(net_dc_stack_names[i + 1], m[i]->info.name);
    CU_ASSERT(sim_stack_host_overhead_ns_by_name(net_dc_stack_names[i + 1]) > 0);
  }
  CU_ASSERT_EQUAL(i, 4);
  CU_ASSERT_PTR_NULL(net_dc_stack_names[i + 1]);
  const char *const *c = sim_sync_machine_classes();
  for (i = 0; c[i]; i++) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(net_joining_machine_names[i]);
    CU_ASSERT_STRING_EQUAL(net_joining_machine_names[i], c[i]);
  }
  CU_ASSERT_EQUAL(i, 3);
  CU_ASSERT_PTR_NULL(net_joining_machine_names[i]);
  /* o_s + o_r at the defaults: tcp 2 + 3 us; rdma-channel (0.1 + 0.05/16) + (0.05 + 0.05/16) us. */
  CU_ASSERT_EQUAL(sim_stack_host_overhead_ns_by_name("tcp"), 5000);
  CU_ASSERT_EQUAL(sim_stack_host_overhead_ns_by_name("rdma-channel"), 156);
  CU_ASSERT_EQUAL(sim_stack_host_overhead_ns_by_name("ethernet"), -1);
}

static gboolean same_links(const NetTopology *a, const NetTopology *b) {
  return a->n_nodes == b->n_nodes && a->n_edges == b->n_edges &&
         memcmp(a->adj_off, b->adj_off, (a->n_nodes + 1) * sizeof(guint32)) == 0 &&
         memcmp(a->adj, b->adj, a->n_edges * sizeof(guint32)) == 0 &&
         memcmp(a->rev, b->rev, a->n_edges * sizeof(guint32)) == 0 &&
         memcmp(a->region, b->region, a->n_nodes * sizeof(guint16)) == 0 &&
         memcmp(a->tx_ns_per_byte, b->tx_ns_per_byte, a->n_edges * sizeof(double)) == 0;
}

/* dc_stack adds the stack's o_s + o_r to the mean and floor of exactly the edges between two data-centre
 * nodes (here the gateway mesh), and changes nothing else of the topology. */
static void check_dc_stack(const char *name, SimTime host) {
  NetGeoParams p, q;
  g_autofree char *set = g_strdup_printf("network.dc_stack=\"%s\"", name);
  load_geo(&p, SETS(set, "network.gateway_mesh=true"));
  load_geo(&q, SETS("network.gateway_mesh=true"));
  CU_ASSERT_STRING_EQUAL(net_dc_stack_names[p.dc_stack], name);
  CU_ASSERT_EQUAL(q.dc_stack, NET_DC_STACK_NONE);
  g_autoptr(NetTopology) a = net_topology_build(&p, 42, NULL);
  g_autoptr(NetTopology) b = net_topology_build(&q, 42, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_TRUE(same_links(a, b));
  CU_ASSERT_PTR_NULL(b->lat_host_ns);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a->lat_host_ns);
  guint dc = 0, bad = 0;
  for (guint32 u = 0; u < a->n_nodes; u++)
    for (guint32 e = a->adj_off[u]; e < a->adj_off[u + 1]; e++) {
      gboolean both = a->cls[u] == NET_CLASS_DATACENTER && a->cls[a->adj[e]] == NET_CLASS_DATACENTER;
      SimTime want = both ? host : 0;
      dc += both;
      bad += a->lat_host_ns[e] != want || a->lat_mean_ns[e] != b->lat_mean_ns[e] + want ||
             a->lat_floor_ns[e] != b->lat_floor_ns[e] + want;
      /* Only gateways of different pools are linked with each other. */
      if (both) bad += !(u >= p.n_vantages && a->adj[e] >= p.n_vantages);
    }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(dc, 2 * 6); /* the mesh: Ethermine x3 - Sparkpool x2, both ways */
  /* Draws: the jitter is drawn around the mean without the overhead, then it is added, on the same random
   * numbers; the relay's per-class draw does the same. */
  const SimModelInfo *models[] = {&net_jitter_pareto.info, &net_jitter_lognormal.info, &net_jitter_none.info};
  for (guint k = 0; k < G_N_ELEMENTS(models); k++) {
    p.jitter.model = q.jitter.model = models[k];
    p.jitter.params = q.jitter.params = model_defaults(models[k]);
    SimRng ra, rb, rc;
    sim_rng_init(&ra, 5, k);
    sim_rng_init(&rb, 5, k);
    sim_rng_init(&rc, 5, k);
    guint wrong = 0;
    for (guint64 e = 0; e < a->n_edges; e++) {
      NetLatencyDraw d;
      net_latency_draw_init(&d, &p, a->lat_mean_ns[e], a->lat_host_ns[e]);
      for (int r = 0; r < 3; r++) {
        SimTime x = net_edge_latency(&p, a, e, &ra);
        wrong += x != net_edge_latency(&q, b, e, &rb) + a->lat_host_ns[e];
        wrong += x != net_latency_draw(&d, &rc);
      }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    uint64_t next = sim_rng_u64(&ra); /* the same numbers were consumed */
    CU_ASSERT_EQUAL(next, sim_rng_u64(&rb));
    CU_ASSERT_EQUAL(next, sim_rng_u64(&rc));
    g_free(p.jitter.params);
  }
  p.jitter.model = q.jitter.model = NULL;
  p.jitter.params = q.jitter.params = NULL;
  clear_geo(&p);
  clear_geo(&q);
}

static void test_dc_stack_topology(void) {
  check_dc_stack("tcp", 5000);
  check_dc_stack("rdma-channel", 156);
  check_dc_stack("rdma-write", sim_stack_host_overhead_ns_by_name("rdma-write"));
}

/* round(share x nodes) distinct ordinary nodes join, at uniform times in the window, synced one machine
 * sync time later; from a stream of their own, so the rest of the topology is unchanged. */
static void test_joining_build(void) {
  NetGeoParams p, q;
  load_geo(&p, SETS("network.joining={\"share\": 0.5, \"window_s\": 3600, \"machine\": \"high-end\"}"));
  load_geo(&q, NULL);
  CU_ASSERT_DOUBLE_EQUAL(p.joining.share, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.joining.window_s, 3600, 0);
  CU_ASSERT_STRING_EQUAL(net_joining_machine_names[p.joining.machine], "high-end");
  CU_ASSERT_DOUBLE_EQUAL(q.joining.share, 0, 0);
  g_autoptr(NetTopology) a = net_topology_build(&p, 42, NULL);
  g_autoptr(NetTopology) a2 = net_topology_build(&p, 42, NULL);
  g_autoptr(NetTopology) c = net_topology_build(&p, 43, NULL);
  g_autoptr(NetTopology) b = net_topology_build(&q, 42, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_TRUE(same_topology(a, b));
  CU_ASSERT_EQUAL(b->n_joining, 0);
  CU_ASSERT_PTR_NULL(b->join_node);
  CU_ASSERT_EQUAL_FATAL(a->n_joining, 250);
  SimTime sync = sim_sync_class_duration("high-end", SIM_SYNC_TARGET_HEAD);
  CU_ASSERT(sync > 100 * 60 * SIM_NS_PER_S && sync < 150 * 60 * SIM_NS_PER_S); /* 126.6 min */
  g_autofree guint8 *seen = g_new0(guint8, a->n_nodes);
  guint bad = 0;
  double sum_s = 0;
  for (guint32 i = 0; i < a->n_joining; i++) {
    guint32 v = a->join_node[i];
    SimTime t = a->join_avail_ns[i];
    bad += v < a->n_special || v >= a->n_nodes || seen[v]++;
    bad += t < sync || t > sync + 3600 * SIM_NS_PER_S;
    if (i) bad += t < a->join_avail_ns[i - 1];
    sum_s += (double)(t - sync) / 1e9;
  }
  CU_ASSERT_EQUAL(bad, 0);
  /* Uniform join times: mean 1800 s, standard error 3600 / sqrt(12 x 250) = 66 s. */
  CU_ASSERT(fabs(sum_s / 250 - 1800) < 5 * 66);
  CU_ASSERT_EQUAL(a2->n_joining, 250);
  CU_ASSERT(memcmp(a->join_node, a2->join_node, 250 * sizeof(guint32)) == 0);
  CU_ASSERT(memcmp(a->join_avail_ns, a2->join_avail_ns, 250 * sizeof(SimTime)) == 0);
  CU_ASSERT_FALSE(memcmp(a->join_avail_ns, c->join_avail_ns, 250 * sizeof(SimTime)) == 0);
  clear_geo(&p);
  load_geo(&p, SETS("network.joining={\"share\": 1, \"window_s\": 0}"));
  CU_ASSERT_STRING_EQUAL(net_joining_machine_names[p.joining.machine], "mid-end"); /* the default */
  g_autoptr(NetTopology) all = net_topology_build(&p, 42, NULL);
  CU_ASSERT_EQUAL(all->n_joining, 500);
  SimTime mid = sim_sync_class_duration("mid-end", SIM_SYNC_TARGET_HEAD);
  CU_ASSERT_EQUAL(all->join_avail_ns[0], mid);
  CU_ASSERT_EQUAL(all->join_avail_ns[499], mid);
  clear_geo(&p);
  clear_geo(&q);
}

/* Every problem of the two options, with its path, in one pass. */
static void test_wirein_parse_errors(void) {
  expect_problems(
      SETS("network.joining={\"share\": 1.5, \"window_s\": -1, \"machine\": \"laptop\"}",
           "network.dc_stack=\"infiniband\""),
      NULL,
      WANT("$.network.dc_stack: must be one of: none, tcp, rdma-send, rdma-write, rdma-channel (got "
           "\"infiniband\")",
           "$.network.joining.share: must be in [0, 1] (got 1.5)",
           "$.network.joining.window_s: must be in [0, 1e+09] (got -1)",
           "$.network.joining.machine: must be one of: high-end, mid-end, old-spec (got \"laptop\")"));
  expect_problems(SETS("network.joining={\"machine\": \"old-spec\", \"nodes\": 3}"), NULL,
                  WANT("$.network.joining.nodes: unknown key (expected one of: share, window_s, machine)",
                       "$.network.joining.share: missing required key",
                       "$.network.joining.window_s: missing required key"));
  expect_problems(SETS("network.joining=0.5"), NULL, WANT("$.network.joining: must be an object"));
  expect_problems(
      SETS("network.dc_stack=1"), NULL,
      WANT("$.network.dc_stack: must be one of: none, tcp, rdma-send, rdma-write, rdma-channel (got "
           "integer)"));
}

/* Joining nodes on a built topology with share 1 and a window far longer than a run: a block spreads over
 * exactly the nodes it can reach through nodes available when it leaves. At 0 that is the gateways (over
 * their mesh), not even the vantage points, which dial only ordinary nodes; later, the synced ordinary
 * nodes join in. The same for both relay models. */
static guint32 bfs_reach(const NetTopology *t, const guint8 *ok, guint32 src, guint8 *in) {
  memset(in, 0, t->n_nodes);
  g_autofree guint32 *queue = g_new(guint32, t->n_nodes);
  guint32 head = 0, tail = 0;
  queue[tail++] = src;
  in[src] = 1;
  while (head < tail) {
    guint32 u = queue[head++];
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      if (ok[v] && !in[v]) in[v] = 1, queue[tail++] = v;
    }
  }
  return tail;
}

static void test_joining_relay(void) {
  NetGeoParams p;
  load_geo(&p, SETS("network.joining={\"share\": 1, \"window_s\": 1e8}", "network.vantage_points[1].peers=90",
                    "network.gateway_mesh=true"));
  g_autoptr(NetTopology) t = net_topology_build(&p, 42, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_EQUAL_FATAL(t->n_joining, t->n_nodes - t->n_special);
  const RelayModel *models[] = {&relay_geth, &relay_btc};
  const SimTime times[] = {0, 3 * 3600 * SIM_NS_PER_S, 20000000 * SIM_NS_PER_S, 60000000 * SIM_NS_PER_S,
                           200000000 * SIM_NS_PER_S};
  g_autofree guint8 *ok = g_new(guint8, t->n_nodes);
  g_autofree guint8 *in = g_new(guint8, t->n_nodes);
  const guint32 source = 2; /* Ethermine#1 */
  for (guint m = 0; m < G_N_ELEMENTS(models); m++) {
    g_autofree void *rp = model_defaults(&models[m]->info);
    g_autoptr(RelayWork) w = relay_work_new(t);
    guint32 last = 0;
    for (guint k = 0; k < G_N_ELEMENTS(times); k++) {
      SimTime t0 = times[k];
      memset(ok, 1, t->n_nodes);
      for (guint32 i = 0; i < t->n_joining; i++)
        ok[t->join_node[i]] = t->join_avail_ns[i] <= t0;
      guint32 want = bfs_reach(t, ok, source, in);
      RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = 20000};
      SimRng rng;
      sim_rng_init(&rng, 1, k);
      models[m]->propagate(rp, &p, t, &b, NULL, &rng, w);
      CU_ASSERT_EQUAL(relay_work_reached(w), want);
      guint bad = 0, ordinary = 0;
      for (guint32 v = 0; v < t->n_nodes; v++) {
        gboolean has = relay_work_have(w, v) != SIM_TIME_MAX;
        bad += has != (in[v] != 0);
        bad += has && !ok[v];
        ordinary += has && v >= t->n_special;
      }
      CU_ASSERT_EQUAL(bad, 0);
      if (k == 0) {
        CU_ASSERT_EQUAL(want, p.n_specials - p.n_vantages); /* the five gateways */
        CU_ASSERT_EQUAL(ordinary, 0);
        CU_ASSERT_EQUAL(relay_work_have(w, 0), SIM_TIME_MAX);
        CU_ASSERT_EQUAL(relay_work_announce(w, 1), SIM_TIME_MAX);
      }
      CU_ASSERT(want >= last); /* nodes only become available */
      last = want;
    }
    CU_ASSERT_EQUAL(last, t->n_nodes); /* all synced at the end */
  }
  clear_geo(&p);
}

int register_suites(void) {
  ADD_SUITE("jitter", TEST(test_jitter_none), TEST(test_jitter_pareto_ks), TEST(test_jitter_pareto_fallback),
            TEST(test_jitter_lognormal_ks), TEST(test_jitter_empirical_ks), TEST(test_jitter_empirical_check),
            TEST(test_jitter_tables), TEST(test_latency_draw_matches_edge), TEST(test_pareto_tables),
            TEST(test_pareto_draw_tables), TEST(test_pareto_draw_accuracy),
            TEST(test_pareto_class_draw_distribution));
  ADD_SUITE("geo-parse", TEST(test_parse_valid), TEST(test_parse_unknown_region_city),
            TEST(test_parse_unknown_region_vantage), TEST(test_parse_latency_not_square),
            TEST(test_parse_negative_latency), TEST(test_parse_bandwidth_zero),
            TEST(test_parse_vantage_peers_zero), TEST(test_parse_vantage_no_place),
            TEST(test_parse_unknown_pool), TEST(test_parse_shares_sum), TEST(test_parse_structure),
            TEST(test_parse_all_in_one_pass));
  ADD_SUITE("topology", TEST(test_topology_invariants), TEST(test_topology_geo_share),
            TEST(test_topology_deterministic), TEST(test_topology_gateway_mesh), TEST(test_topology_latency_means), TEST(test_transfer_ns),
            TEST(test_topology_error));
  ADD_SUITE("wire-in", TEST(test_wirein_name_lists), TEST(test_dc_stack_topology), TEST(test_joining_build),
            TEST(test_wirein_parse_errors), TEST(test_joining_relay));
  return 0;
}
