/* test_calibrate.c: unit tests of the calibration (sim/app/calibrate*.c): self-consistency on data drawn in
 * memory with known parameters at fixed seeds (every parameter recovered inside its interval), the choice
 * of family by AIC, the histogram density, hand-worked cases, the models file loaded through a scenario's
 * "include", and the real Rinkeby logs through sim_replay_load(). */
#include "calibrate.h"
#include "calibrate_net.h"
#include "cunit-main.h"
#include "params.h"
#include "replay.h"
#include "scenario.h"

#include <glib/gstdio.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_rng, gsl_rng_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_ran_discrete_t, gsl_ran_discrete_free)

/* 0.999 for every interval: about 30 parameters are checked per data set, so the chance that a correct
 * calibration fails one check is at most about 3% (Bonferroni) for a new seed; the seeds are fixed. */
#define LEVEL 0.999

static gsl_rng *rng_new(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  return r;
}

static gboolean within_(const AnEstimate *e, double truth, const char *what) {
  gboolean ok = e->lo <= truth && truth <= e->hi;
  if (!ok)
    fprintf(stderr, "\n%s: %.6g not in [%.6g, %.6g] (estimate %.6g)\n", what, truth, e->lo, e->hi, e->value);
  return ok;
}
#define WITHIN(e, truth, what) CU_ASSERT(within_((e), (truth), (what)))

/* A file or folder of the repository's test data, tests/data/DIR[/FILE] (g_free), from the source root:
 * meson sets SIM_SOURCE_ROOT and runs the tests there. FILE may be NULL. */
static char *test_data(const char *dir, const char *file) {
  const char *root = g_getenv("SIM_SOURCE_ROOT");
  return g_build_filename(root ? root : ".", "tests", "data", dir, file, NULL);
}

/* ---- A synthetic world with known parameters ---------------------------------------------------------- */

#define N_POOLS 5
#define N_MAIN 3000
#define MEAN_INTERVAL_S 13.0
#define STALE_PER_MAIN 0.07 /* stale blocks per main block */
#define TX_RATE 3.5
#define SPAN_S 4000.0
#define EMPTY_WINDOW_MS 200.0

static const double pool_share[N_POOLS] = {0.4, 0.25, 0.2, 0.1, 0.05};
static const char *const pool_name[N_POOLS] = {"A", "B", "C", "D", "E"};
static const double type_share[3] = {0.5, 0.45, 0.05};
static const double mc_median = 60000, mc_sigma = 1.0, cc_median = 1.5e6, cc_sigma = 0.7;
static const double class_share[SIM_CALIB_N_PRICE_CLASSES] = {0.01, 0.62, 0.25, 0.10, 0.02};
static const double class_lo[SIM_CALIB_N_PRICE_CLASSES] = {0, 1, 20, 25, 105};
static const double class_hi[SIM_CALIB_N_PRICE_CLASSES] = {0, 20, 25, 105, 1000};

typedef struct {
  GArray *intervals;
  SimCalibPoolCounts pools[N_POOLS];
  uint64_t main_blocks, all_blocks;
  GArray *arrival, *type, *gas, *price;
  double delay_truth[3][2];
  GArray *delays[3];
  const double *dp[3];
  size_t dn[3];
  SimCalibInput in;
} World;

static void world_free(World *w) {
  g_array_unref(w->intervals);
  g_array_unref(w->arrival);
  g_array_unref(w->type);
  g_array_unref(w->gas);
  g_array_unref(w->price);
  for (int v = 0; v < 3; v++)
    g_array_unref(w->delays[v]);
  g_free(w);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(World, world_free)

static const char *const vantage_names[3] = {"LN", "GA", "BI"};

/* Exponential main-chain intervals; pools by a multinomial draw of the main blocks (and of the stale ones);
 * empty blocks binomial at the share the empty window implies; Poisson arrivals of transactions over SPAN_S,
 * with types by a multinomial draw, lognormal MC/CC gas limits and prices from the classes; delays per
 * vantage: lognormal (median 50 ms, sigma 0.7), gamma (shape 2, scale 40 ms), and a two-mode mixture. */
static World *world_new(unsigned long seed) {
  g_autoptr(gsl_rng) r = rng_new(seed);
  World *w = g_new0(World, 1);
  w->intervals = g_array_new(FALSE, FALSE, sizeof(double));
  for (int i = 0; i < N_MAIN - 1; i++) {
    double x = gsl_ran_exponential(r, MEAN_INTERVAL_S);
    g_array_append_val(w->intervals, x);
  }
  unsigned main_n[N_POOLS], stale_n[N_POOLS];
  unsigned n_stale = (unsigned)lround(N_MAIN * STALE_PER_MAIN);
  gsl_ran_multinomial(r, N_POOLS, N_MAIN, pool_share, main_n);
  gsl_ran_multinomial(r, N_POOLS, n_stale, pool_share, stale_n);
  double e = 1 - exp(-EMPTY_WINDOW_MS / 1e3 / MEAN_INTERVAL_S);
  for (int p = 0; p < N_POOLS; p++) {
    uint64_t blocks = main_n[p] + stale_n[p];
    w->pools[p] =
        (SimCalibPoolCounts){pool_name[p], main_n[p], blocks, gsl_ran_binomial(r, e, (unsigned)blocks), 0};
  }
  w->main_blocks = N_MAIN;
  w->all_blocks = N_MAIN + n_stale;
  w->arrival = g_array_new(FALSE, FALSE, sizeof(double));
  w->type = g_array_new(FALSE, FALSE, sizeof(uint8_t));
  w->gas = g_array_new(FALSE, FALSE, sizeof(double));
  w->price = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(gsl_ran_discrete_t) types = gsl_ran_discrete_preproc(3, type_share);
  g_autoptr(gsl_ran_discrete_t) classes = gsl_ran_discrete_preproc(SIM_CALIB_N_PRICE_CLASSES, class_share);
  for (double t = gsl_ran_exponential(r, 1 / TX_RATE); t < SPAN_S; t += gsl_ran_exponential(r, 1 / TX_RATE)) {
    uint8_t ty = (uint8_t)gsl_ran_discrete(r, types);
    double gas = ty == OBS_TX_TX   ? 21000
                 : ty == OBS_TX_MC ? gsl_ran_lognormal(r, log(mc_median), mc_sigma)
                                   : gsl_ran_lognormal(r, log(cc_median), cc_sigma);
    size_t k = gsl_ran_discrete(r, classes);
    double price =
        class_lo[k] == class_hi[k] ? class_lo[k] : exp(gsl_ran_flat(r, log(class_lo[k]), log(class_hi[k])));
    g_array_append_val(w->arrival, t);
    g_array_append_val(w->type, ty);
    g_array_append_val(w->gas, gas);
    g_array_append_val(w->price, price);
  }
  w->delay_truth[0][0] = log(50);
  w->delay_truth[0][1] = 0.7;
  w->delay_truth[1][0] = 2;
  w->delay_truth[1][1] = 40;
  for (int v = 0; v < 3; v++) {
    w->delays[v] = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; i < 1500; i++) {
      double d = v == 0   ? gsl_ran_lognormal(r, w->delay_truth[0][0], w->delay_truth[0][1])
                 : v == 1 ? gsl_ran_gamma(r, w->delay_truth[1][0], w->delay_truth[1][1])
                          : gsl_ran_lognormal(r, gsl_rng_uniform(r) < 0.5 ? log(20) : log(200), 0.2);
      g_array_append_val(w->delays[v], d);
    }
    /* Ties with the first observer at ms resolution: zeros, left out of the fits. */
    double zero = 0;
    for (int i = 0; i < 7 * (v + 1); i++)
      g_array_append_val(w->delays[v], zero);
    w->dp[v] = (const double *)w->delays[v]->data;
    w->dn[v] = w->delays[v]->len;
  }
  w->in = (SimCalibInput){.level = LEVEL,
                          .intervals_s = (const double *)w->intervals->data,
                          .n_intervals = w->intervals->len,
                          .main_blocks = w->main_blocks,
                          .all_blocks = w->all_blocks,
                          .pools = w->pools,
                          .n_pools = N_POOLS,
                          .n_txs = w->type->len,
                          .tx_type = (const uint8_t *)w->type->data,
                          .tx_gas_limit = (const double *)w->gas->data,
                          .tx_price_gwei = (const double *)w->price->data,
                          .tx_arrival_s = (const double *)w->arrival->data,
                          .span_s = SPAN_S,
                          .n_vantages = 3,
                          .vantage_names = vantage_names,
                          .delays_ms = w->dp,
                          .n_delays = w->dn,
                          .blocks_seen_by_all = 1500};
  return w;
}

/* Every known parameter inside its interval, for three seeds. */
static void test_self_consistency(void) {
  static const unsigned long seeds[] = {1, 2, 3};
  for (size_t s = 0; s < G_N_ELEMENTS(seeds); s++) {
    g_autoptr(World) w = world_new(seeds[s]);
    g_autoptr(GError) e = NULL;
    g_autoptr(SimCalib) c = sim_calib_fit(&w->in, &e);
    CU_ASSERT_FATAL(c != NULL);
    /* Block interval: the mean, and the target (all blocks) = mean × main / all. */
    CU_ASSERT_TRUE(c->have_mean);
    CU_ASSERT_EQUAL(c->n_intervals, N_MAIN - 1);
    WITHIN(&c->mean_interval_s, MEAN_INTERVAL_S, "mean interval");
    WITHIN(&c->target_interval_s, MEAN_INTERVAL_S * N_MAIN / (double)w->all_blocks, "target interval");
    CU_ASSERT_TRUE(c->interval_fits[0].ok);
    WITHIN(&c->interval_fits[0].fit.p[0], MEAN_INTERVAL_S, "exponential mean (positive intervals)");
    /* Pools: hash shares from main blocks, empty shares and the window they imply. */
    double e_true = 1 - exp(-EMPTY_WINDOW_MS / 1e3 / MEAN_INTERVAL_S);
    for (int p = 0; p < N_POOLS; p++) {
      const SimCalibPool *cp = &c->pools[p];
      CU_ASSERT_STRING_EQUAL(cp->name, pool_name[p]);
      WITHIN(&cp->main_share, pool_share[p], "pool main share");
      WITHIN(&cp->block_share, pool_share[p], "pool block share");
      WITHIN(&cp->empty_share, e_true, "pool empty share");
      /* The window is a monotone function of the empty share: inside the image of its interval. */
      double T = c->mean_interval_s.value * 1e3;
      double wlo = -T * log1p(-cp->empty_share.lo), whi = -T * log1p(-cp->empty_share.hi);
      CU_ASSERT(wlo <= cp->empty_window_ms && cp->empty_window_ms <= whi);
    }
    /* Transactions: the Poisson rate, type shares, gas limits, price classes. */
    CU_ASSERT_TRUE_FATAL(c->have_rate);
    WITHIN(&c->rate_per_s, TX_RATE, "tx rate");
    /* Poisson counts in 66 windows: (W − 1)·index ~ χ²(65) roughly, so the index lies in
     * [χ²_0.0005(65), χ²_0.9995(65)] / 65 = [0.521, 1.679] with probability 0.999 (gsl_cdf_chisq_Pinv). */
    CU_ASSERT_EQUAL(c->dispersion_windows, 66);
    CU_ASSERT(c->dispersion > 0.521 && c->dispersion < 1.679);
    CU_ASSERT(c->rate_quasi.lo <= TX_RATE && TX_RATE <= c->rate_quasi.hi);
    for (int t = 0; t < 3; t++)
      WITHIN(&c->types[t].share, type_share[t], "type share");
    CU_ASSERT_EQUAL(c->types[OBS_TX_TX].median, 21000);
    CU_ASSERT_TRUE_FATAL(c->types[OBS_TX_MC].lognormal.ok && c->types[OBS_TX_CC].lognormal.ok);
    WITHIN(&c->types[OBS_TX_MC].lognormal.fit.p[0], log(mc_median), "MC gas mu");
    WITHIN(&c->types[OBS_TX_MC].lognormal.fit.p[1], mc_sigma, "MC gas sigma");
    WITHIN(&c->types[OBS_TX_CC].lognormal.fit.p[0], log(cc_median), "CC gas mu");
    WITHIN(&c->types[OBS_TX_CC].lognormal.fit.p[1], cc_sigma, "CC gas sigma");
    uint64_t sum = 0;
    for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++) {
      WITHIN(&c->price_share[k], class_share[k], "price class share");
      sum += c->price_count[k];
    }
    CU_ASSERT_EQUAL(sum, c->n_txs);
    CU_ASSERT(c->price_min_gwei[1] >= 1 && c->price_min_gwei[1] < 1.01);
    CU_ASSERT(c->price_max_gwei[4] > 900 && c->price_max_gwei[4] <= 1000);
    /* Delays: the lognormal and gamma parameters, zeros counted and left out. */
    for (int v = 0; v < 3; v++) {
      CU_ASSERT_STRING_EQUAL(c->delays[v].name, vantage_names[v]);
      CU_ASSERT_EQUAL(c->delays[v].zeros, (size_t)(7 * (v + 1)));
      CU_ASSERT_EQUAL(c->delays[v].n, 1500 + (size_t)(7 * (v + 1)));
      CU_ASSERT_EQUAL(c->delays[v].lognormal.fit.n, 1500);
    }
    WITHIN(&c->delays[0].lognormal.fit.p[0], w->delay_truth[0][0], "delay lognormal mu");
    WITHIN(&c->delays[0].lognormal.fit.p[1], w->delay_truth[0][1], "delay lognormal sigma");
    WITHIN(&c->delays[1].gamma.fit.p[0], w->delay_truth[1][0], "delay gamma shape");
    WITHIN(&c->delays[1].gamma.fit.p[1], w->delay_truth[1][1], "delay gamma scale");
  }
}

/* The family that generated a sample wins by AIC, the histogram where no family fits (two modes); for
 * exponential data, the exponential is within 2 of the best AIC (gamma nests it with one more parameter). */
static void test_best_by_aic(void) {
  g_autoptr(World) w = world_new(11);
  g_autoptr(SimCalib) c = sim_calib_fit(&w->in, NULL);
  CU_ASSERT_FATAL(c != NULL);
  CU_ASSERT_STRING_EQUAL(c->delays[0].best, "lognormal");
  CU_ASSERT_STRING_EQUAL(c->delays[1].best, "gamma");
  CU_ASSERT_STRING_EQUAL(c->delays[2].best, "empirical");
  CU_ASSERT(c->delays[2].empirical.aic < c->delays[2].lognormal.fit.aic - 100);
  CU_ASSERT(c->delays[2].empirical.ks.d < 0.02);
  CU_ASSERT(c->delays[2].lognormal.fit.ks.p < 1e-6);
  CU_ASSERT(c->interval_fits[0].fit.aic <= c->interval_fits[c->interval_best].fit.aic + 2);
  CU_ASSERT(c->interval_fits[0].fit.ks.p > 0.01);

  /* Gamma (shape 3) and lognormal intervals. */
  g_autoptr(gsl_rng) r = rng_new(5);
  double x[2][2000];
  for (int i = 0; i < 2000; i++) {
    x[0][i] = gsl_ran_gamma(r, 3, 4);
    x[1][i] = gsl_ran_lognormal(r, log(12), 0.5);
  }
  static const char *const want[] = {"gamma", "lognormal"};
  static const int want_i[] = {2, 1};
  for (int k = 0; k < 2; k++) {
    SimCalibPoolCounts pc = {"P", 2001, 2001, 0, 0};
    SimCalibInput in = {.level = 0.95,
                        .intervals_s = x[k],
                        .n_intervals = 2000,
                        .main_blocks = 2001,
                        .all_blocks = 2001,
                        .pools = &pc,
                        .n_pools = 1};
    g_autoptr(SimCalib) ci = sim_calib_fit(&in, NULL);
    CU_ASSERT_FATAL(ci != NULL);
    if (ci->interval_best != want_i[k]) fprintf(stderr, "\nbest %d, want %s\n", ci->interval_best, want[k]);
    CU_ASSERT_EQUAL(ci->interval_best, want_i[k]);
  }
}

/* Arrivals in bursts of 3 (a sender's transactions, here at one instant): the dispersion index is about
 * 3 (a compound Poisson process with bursts of N has index E[N²]/E[N] over windows much longer than a burst),
 * and the widened interval is √3 times as wide. */
static void test_dispersion(void) {
  g_autoptr(gsl_rng) r = rng_new(9);
  g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
  for (double x = gsl_ran_exponential(r, 1.0); x < 6000; x += gsl_ran_exponential(r, 1.0))
    for (int k = 0; k < 3; k++) g_array_append_val(t, x);
  size_t n = t->len;
  g_autofree uint8_t *type = g_new0(uint8_t, n);
  g_autofree double *gas = g_new(double, n);
  g_autofree double *price = g_new(double, n);
  for (size_t i = 0; i < n; i++) gas[i] = 21000, price[i] = 10;
  SimCalibPoolCounts pc = {"P", 1, 1, 0, 0};
  SimCalibInput in = {.level = 0.95, .pools = &pc, .n_pools = 1, .n_txs = n, .tx_type = type, .tx_gas_limit = gas,
                      .tx_price_gwei = price, .span_s = 6000, .tx_arrival_s = (const double *)t->data};
  g_autoptr(SimCalib) c = sim_calib_fit(&in, NULL);
  CU_ASSERT_FATAL(c != NULL);
  CU_ASSERT_EQUAL(c->dispersion_windows, 100);
  /* Counts are 3 × Poisson: (W − 1)·index/3 ~ χ²(99) roughly, so the index lies in
   * 3·[χ²_0.0005(99), χ²_0.9995(99)] / 99 = [1.792, 4.604] with probability 0.999. */
  CU_ASSERT(c->dispersion > 1.792 && c->dispersion < 4.604);
  CU_ASSERT_DOUBLE_EQUAL(c->rate_quasi.se, c->rate_per_s.se * sqrt(c->dispersion), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c->rate_quasi.hi - c->rate_quasi.value, 1.959964 * c->rate_quasi.se, 1e-5 * c->rate_quasi.se);
  /* Without arrival times: no index. */
  in.tx_arrival_s = NULL;
  g_autoptr(SimCalib) c2 = sim_calib_fit(&in, NULL);
  CU_ASSERT_EQUAL(c2->dispersion_windows, 0);
  CU_ASSERT(isnan(c2->dispersion));
}

/* Hand-worked: every interval 10 s, main 90 of 100 blocks, one pool with 10 empty of 100 blocks. */
static void test_hand_worked(void) {
  double iv[] = {10, 10, 10, 10, 0, 20, -3}; /* mean of the 6 non-negative: 10; the negative one dropped */
  SimCalibPoolCounts pc[] = {{"X", 60, 70, 10, 0}, {"Y", 30, 30, 0, 0}, {"Z", 0, 2, 0, 0}};
  SimCalibInput in = {.level = 0.95,
                      .intervals_s = iv,
                      .n_intervals = G_N_ELEMENTS(iv),
                      .main_blocks = 90,
                      .all_blocks = 100,
                      .pools = pc,
                      .n_pools = 3};
  g_autoptr(SimCalib) c = sim_calib_fit(&in, NULL);
  CU_ASSERT_FATAL(c != NULL);
  CU_ASSERT_EQUAL(c->n_intervals, 6);
  CU_ASSERT_EQUAL(c->negative_intervals, 1);
  CU_ASSERT_EQUAL(c->zero_intervals, 1);
  CU_ASSERT_DOUBLE_EQUAL(c->mean_interval_s.value, 10, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c->target_interval_s.value, 9, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c->target_interval_s.lo, c->mean_interval_s.lo * 0.9, 1e-12);
  CU_ASSERT_EQUAL(c->interval_fits[0].fit.n, 5); /* the positive ones */
  CU_ASSERT_DOUBLE_EQUAL(c->interval_fits[0].fit.p[0].value, 12, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c->pools[0].main_share.value, 60.0 / 90, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(c->pools[0].block_share.value, 70.0 / 102, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(c->pools[0].empty_share.value, 1.0 / 7, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(c->pools[0].empty_window_ms, -10000 * log(6.0 / 7), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c->pools[1].empty_window_ms, 0, 0);
  CU_ASSERT_EQUAL(c->pools[2].main_share.value, 0);
  /* No transactions, no vantage points: those parts are left out, with a note. */
  CU_ASSERT_FALSE(c->have_rate);
  g_autoptr(json_t) m = sim_calib_models_json(c, NULL);
  CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(json_object_get(m, "chain"), "target_interval_s")),
                         9, 1e-12);
  CU_ASSERT_PTR_NULL(json_object_get(m, "transactions"));
  json_t *pools = json_object_get(m, "pools");
  CU_ASSERT_EQUAL(json_array_size(pools), 2); /* Z has no main block: a hash share must be > 0 */
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(pools, 1), "name")), "Y");
  json_t *notes = json_object_get(json_object_get(m, "calibration"), "notes");
  CU_ASSERT_EQUAL(json_array_size(notes), 3);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(notes, 0)),
                         "transaction rate: no transaction or no observation span");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(notes, 2)),
                         "work distribution: no one-miner fork, so only an upper bound on its mean; not written to "
                         "the models file");

  /* Too few intervals: no chain section. No block at all: an error. */
  SimCalibInput one = in;
  one.n_intervals = 1;
  g_autoptr(SimCalib) c1 = sim_calib_fit(&one, NULL);
  CU_ASSERT_FALSE(c1->have_mean);
  g_autoptr(json_t) m1 = sim_calib_models_json(c1, NULL);
  CU_ASSERT_PTR_NULL(json_object_get(m1, "chain"));
  CU_ASSERT(isnan(c1->pools[0].empty_window_ms));
  CU_ASSERT_PTR_NULL(json_object_get(json_array_get(json_object_get(m1, "pools"), 0), "empty_window_ms"));
  SimCalibPoolCounts none = {"N", 0, 0, 0, 0};
  SimCalibInput empty = {.level = 0.95, .pools = &none, .n_pools = 1};
  g_autoptr(GError) e = NULL;
  CU_ASSERT_PTR_NULL(sim_calib_fit(&empty, &e));
  CU_ASSERT_STRING_EQUAL(e ? e->message : "", "no block of a known miner to fit");
}

/* The histogram density on hand-made samples.
 * a = {1, 1, 1, 1.5, 1.5, 4, 6, 9}: resolution q = 0.5, the range spans P = 17 steps; k = 1..8 give widths of
 * m = ceil(17/k) = 17, 9, 6, 5, 4, 3 steps (ceil(17/m) = 1..6 bins) from 0.75,
 * AIC 34.24, 35.06, 35.98, 37.84, 36.27, 33.66 (ℓ by hand from the counts): 6 bins of 1.5 holding 5, 0, 1, 1,
 * 0, 1, so ℓ = 5·log(5/12) + 3·log(1/12). The CDF is linear within a bin: F(1.5) = 5/8·(0.75/1.5) = 5/16
 * where the empirical CDF reaches 5/8, so KS D = 5/16. b = {1, 1, 1, 1, 3, 3, 3, 3}: q = 2, P = 2: one bin of
 * 4 from 0 (ℓ = 8·log(1/4)) or two of 2 (the same ℓ, one more parameter): one bin; bins narrower than q would
 * hold the point masses and ℓ would grow without bound. KS D = 1/4 (F(1) = 1/4 against 1/2). */
/* The empty window of all pools and the work-distribution mean from one-miner forks, worked by hand (see
 * calibrate.h): main 60 + 40 of 100, blocks 64 + 42 = 106, target = 10 s x 100/106; exposure
 * X = (64 x 0.6 + 42 x 0.4) / target = 55.2 / 9.434 per s; K = 3 + 1 = 4 forks, Garwood 95% [1.0899, 10.2416]. */
static void test_work_distribution(void) {
  double iv[] = {10, 10, 10, 10};
  SimCalibPoolCounts pc[] = {{"A", 60, 64, 4, 3}, {"B", 40, 42, 0, 1}};
  SimCalibInput in = {.level = 0.95, .intervals_s = iv, .n_intervals = 4, .main_blocks = 100, .all_blocks = 106,
                      .pools = pc, .n_pools = 2};
  g_autoptr(SimCalib) c = sim_calib_fit(&in, NULL);
  CU_ASSERT_FATAL(c != NULL);
  double target = 10.0 * 100 / 106, x = 55.2 / target;
  CU_ASSERT_EQUAL(c->one_miner_forks, 4);
  CU_ASSERT_DOUBLE_EQUAL(c->work_exposure_per_s, x, 1e-12);
  CU_ASSERT_TRUE(c->have_work_delay);
  CU_ASSERT_DOUBLE_EQUAL(c->work_delay_mean_ms.value, 4e3 / x, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c->work_delay_mean_ms.lo, 1.0899e3 / x, 0.0001e3 / x);
  CU_ASSERT_DOUBLE_EQUAL(c->work_delay_mean_ms.hi, 10.2416e3 / x, 0.0001e3 / x);
  CU_ASSERT_EQUAL(c->empty_total, 4);
  CU_ASSERT_DOUBLE_EQUAL(c->empty_share_all.value, 4.0 / 106, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(c->empty_window_ms.value, -1e4 * log1p(-4.0 / 106), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c->empty_window_ms.lo, -1e4 * log1p(-c->empty_share_all.lo), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(c->empty_window_ms.hi, -1e4 * log1p(-c->empty_share_all.hi), 1e-9);
  /* The models file: nothing about the network by default; network.stratum with --network geo; own_work with
   * pool-delay; chain.empty_window_ms always. */
  g_autoptr(json_t) m0 = sim_calib_models_json(c, NULL);
  CU_ASSERT_PTR_NULL(json_object_get(m0, "network"));
  CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(json_object_get(m0, "chain"), "empty_window_ms")),
                         c->empty_window_ms.value, 0);
  c->network = SIM_CALIB_NET_GEO;
  g_autoptr(json_t) m1 = sim_calib_models_json(c, NULL);
  json_t *st = json_object_get(json_object_get(m1, "network"), "stratum");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st, "model")), "lognormal");
  CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(st, "median_ms")), 4e3 / x * exp(-0.5), 1e-9);
  c->network = SIM_CALIB_NET_POOL_DELAY;
  g_autoptr(json_t) m2 = sim_calib_models_json(c, NULL);
  CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(m2, "network"), "own_work"));
  CU_ASSERT_PTR_NULL(json_object_get(json_object_get(m2, "network"), "stratum"));
}

static void test_histogram(void) {
  double a[] = {1.5, 9, 1, 4, 1, 6, 1.5, 1};
  double b[] = {1, 1, 1, 1, 3, 3, 3, 3};
  SimCalibPoolCounts pc = {"P", 1, 1, 0, 0};
  const double *dp[] = {a, b};
  size_t dn[] = {8, 8};
  const char *names[] = {"a", "b"};
  SimCalibInput in = {.level = 0.95,
                      .pools = &pc,
                      .n_pools = 1,
                      .n_vantages = 2,
                      .vantage_names = names,
                      .delays_ms = dp,
                      .n_delays = dn};
  g_autoptr(SimCalib) c = sim_calib_fit(&in, NULL);
  const SimCalibHistogram *h = &c->delays[0].empirical;
  CU_ASSERT_TRUE_FATAL(h->ok);
  CU_ASSERT_EQUAL(h->bins, 6);
  CU_ASSERT_DOUBLE_EQUAL(h->lo, 0.75, 0);
  CU_ASSERT_DOUBLE_EQUAL(h->width, 1.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(h->resolution, 0.5, 0);
  double ll = 5 * log(5.0 / 12) + 3 * log(1.0 / 12);
  CU_ASSERT_DOUBLE_EQUAL(h->loglik, ll, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h->aic, 2 * 5 - 2 * ll, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h->ks.d, 5.0 / 16, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(c->delays[0].median, 1.5, 1e-12);
  const SimCalibHistogram *h1 = &c->delays[1].empirical;
  CU_ASSERT_TRUE_FATAL(h1->ok);
  CU_ASSERT_EQUAL(h1->bins, 1);
  CU_ASSERT_DOUBLE_EQUAL(h1->resolution, 2, 0);
  CU_ASSERT_DOUBLE_EQUAL(h1->width, 4, 0);
  CU_ASSERT_DOUBLE_EQUAL(h1->loglik, 8 * log(0.25), 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(h1->ks.d, 0.25, 1e-15);
}

/* Intervals at another level: the same formulas as fit.h's 95% ones (checked against them at 0.95). */
static void test_level(void) {
  g_autoptr(gsl_rng) r = rng_new(3);
  double x[400], y[400];
  for (int i = 0; i < 400; i++) {
    x[i] = gsl_ran_exponential(r, 7);
    y[i] = gsl_ran_gamma(r, 2.5, 3);
  }
  SimCalibPoolCounts pc = {"P", 1, 1, 0, 0};
  const double *dp[] = {y, y};
  size_t dn[] = {400, 400};
  const char *names[] = {"a", "b"};
  SimCalibInput in = {.level = 0.95,
                      .intervals_s = x,
                      .n_intervals = 400,
                      .pools = &pc,
                      .n_pools = 1,
                      .n_vantages = 2,
                      .vantage_names = names,
                      .delays_ms = dp,
                      .n_delays = dn};
  g_autoptr(SimCalib) c95 = sim_calib_fit(&in, NULL);
  in.level = 0.95 + 1e-13; /* through the level code, nearly at 95% */
  g_autoptr(SimCalib) c = sim_calib_fit(&in, NULL);
  const AnFit *pairs[][2] = {{&c95->interval_fits[0].fit, &c->interval_fits[0].fit},
                             {&c95->interval_fits[1].fit, &c->interval_fits[1].fit},
                             {&c95->delays[0].gamma.fit, &c->delays[0].gamma.fit},
                             {&c95->delays[0].lognormal.fit, &c->delays[0].lognormal.fit}};
  for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
    for (guint k = 0; k < pairs[i][0]->n_params; k++) {
      CU_ASSERT_DOUBLE_EQUAL(pairs[i][0]->p[k].lo, pairs[i][1]->p[k].lo, 1e-8 * fabs(pairs[i][0]->p[k].lo));
      CU_ASSERT_DOUBLE_EQUAL(pairs[i][0]->p[k].hi, pairs[i][1]->p[k].hi, 1e-8 * fabs(pairs[i][0]->p[k].hi));
    }
  CU_ASSERT_DOUBLE_EQUAL(c95->mean_interval_s.lo, c->mean_interval_s.lo, 1e-8);
  /* Wider at 99.9%, same estimate. */
  in.level = 0.999;
  g_autoptr(SimCalib) c999 = sim_calib_fit(&in, NULL);
  CU_ASSERT_EQUAL(c999->mean_interval_s.value, c95->mean_interval_s.value);
  CU_ASSERT(c999->mean_interval_s.lo < c95->mean_interval_s.lo &&
            c999->mean_interval_s.hi > c95->mean_interval_s.hi);
  CU_ASSERT(c999->delays[0].gamma.fit.p[0].lo < c95->delays[0].gamma.fit.p[0].lo);
}

/* ---- The models file through a scenario's include ---------------------------------------------------- */

static char *write_tmp(const char *dir, const char *name, const char *text) {
  char *p = g_build_filename(dir, name, NULL);
  CU_ASSERT_FATAL(g_file_set_contents(p, text, -1, NULL));
  return p;
}

static void rm_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, n, NULL);
    g_remove(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}

static void test_models_file_includes(void) {
  g_autoptr(World) w = world_new(7);
  g_autoptr(SimCalib) c = sim_calib_fit(&w->in, NULL);
  CU_ASSERT_FATAL(c != NULL);
  g_autoptr(json_t) m = sim_calib_models_json(c, json_pack("{s:s}", "tool", "sim"));
  g_autofree char *dir = g_dir_make_tmp("calib-XXXXXX", NULL);
  g_autofree char *text = json_dumps(m, JSON_INDENT(2));
  g_autofree char *mf = write_tmp(dir, "calibrated.json", text);
  /* The scenario's own seed and stop; everything else from the models file. */
  g_autofree char *sf = write_tmp(
      dir, "s.json", "{\"seed\": 3, \"stop\": {\"heights\": 10}, \"include\": [\"calibrated.json\"]}");
  g_autoptr(SimDiag) diag = sim_diag_new(sf);
  g_autoptr(SimScenario) sc = sim_scenario_load_file(sf, NULL, diag);
  if (!sc) {
    g_autofree char *msg = sim_diag_join(diag);
    fprintf(stderr, "\n%s\n", msg);
  }
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_EQUAL(sc->seed, 3);
  CU_ASSERT_EQUAL(sc->n_pools, N_POOLS);
  double sum = 0;
  for (guint i = 0; i < sc->n_pools; i++) {
    CU_ASSERT_STRING_EQUAL(sc->pools[i].name, pool_name[i]);
    CU_ASSERT_DOUBLE_EQUAL(sc->pools[i].hash_share, c->pools[i].main_share.value, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(sc->pools[i].empty_window_ms, c->pools[i].empty_window_ms, 1e-9);
    sum += sc->pools[i].hash_share;
  }
  CU_ASSERT_DOUBLE_EQUAL(sum, 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sc->pow.chain.target_interval_s, c->target_interval_s.value, 1e-12);
  CU_ASSERT_TRUE_FATAL(sc->has_tx);
  CU_ASSERT_DOUBLE_EQUAL(sc->tx.p.rate_per_s, c->rate_per_s.value, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sc->tx.p.mc_gas_median, exp(c->types[OBS_TX_MC].lognormal.fit.p[0].value), 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(sc->tx.p.cc_gas_sigma, c->types[OBS_TX_CC].lognormal.fit.p[1].value, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sc->tx.p.share_tx, c->types[OBS_TX_TX].share.value, 1e-15);
  CU_ASSERT_EQUAL(sc->tx.n_classes, SIM_CALIB_N_PRICE_CLASSES);
  CU_ASSERT_DOUBLE_EQUAL(sc->tx.classes[1].share, c->price_share[1].value, 1e-15);
  /* The fit report travels in the echo, and "include" does not. */
  CU_ASSERT(json_is_object(json_object_get(json_object_get(sc->doc, "calibration"), "block_intervals")));
  CU_ASSERT_PTR_NULL(json_object_get(sc->doc, "include"));

  /* The scenario's keys win, objects merge, arrays are replaced whole. */
  g_autofree char *sf2 = write_tmp(dir, "s2.json",
                                   "{\"stop\": {\"heights\": 10}, \"include\": \"calibrated.json\","
                                   " \"chain\": {\"block_reward_eth\": 3},"
                                   " \"transactions\": {\"rate_per_s\": 1.5},"
                                   " \"pools\": [{\"name\": \"Solo\", \"hash_share\": 1}]}");
  g_autoptr(SimDiag) d2 = sim_diag_new(sf2);
  g_autoptr(SimScenario) sc2 = sim_scenario_load_file(sf2, NULL, d2);
  CU_ASSERT_FATAL(sc2 != NULL);
  CU_ASSERT_DOUBLE_EQUAL(sc2->pow.chain.block_reward_eth, 3, 0);
  CU_ASSERT_DOUBLE_EQUAL(sc2->pow.chain.target_interval_s, c->target_interval_s.value, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sc2->tx.p.rate_per_s, 1.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(sc2->tx.p.mc_gas_median, exp(c->types[OBS_TX_MC].lognormal.fit.p[0].value), 1e-6);
  CU_ASSERT_EQUAL(sc2->n_pools, 1);
  CU_ASSERT_STRING_EQUAL(sc2->pools[0].name, "Solo");
  rm_tree(dir);
}

/* ---- The real Rinkeby logs ----------------------------------------------------------------------------- */

/* Clique signs a block every 15 s, so every logged main-chain interval is exactly 15 s; 29 of the 37 logged
 * blocks are main (8 unreferenced), all of coinbase 0x0 ("Others", no pool map); 2548 distinct transactions
 * (tests/test_traces.c counts them); one vantage point, so no delays. */
static void test_rinkeby(void) {
  g_autofree char *dir = test_data("emc-rinkeby-2018-09", NULL);
  const char *dirs[] = {dir, NULL};
  SimReplayOptions opt = {.dirs = dirs, .n_vantages = 1, .block_reward_eth = 2};
  g_autoptr(GError) e = NULL;
  g_autoptr(SimReplayData) data = sim_replay_load(&opt, &e);
  if (!data) fprintf(stderr, "\n%s\n", e->message);
  CU_ASSERT_FATAL(data != NULL);
  const SimReplayCounts *n = sim_replay_data_counts(data);
  CU_ASSERT_EQUAL(n->blocks, 37);
  CU_ASSERT_EQUAL(n->txs, 2548);
  CU_ASSERT_EQUAL(n->txs_only_in_blocks, 33);
  guint nb = 0, nt = 0;
  const SimReplayBlock *const *blocks = sim_replay_data_blocks(data, &nb);
  sim_replay_data_txs(data, &nt);
  CU_ASSERT_EQUAL(nb, 37);
  CU_ASSERT_EQUAL(nt, 2548);
  for (guint i = 1; i < nb; i++)
    CU_ASSERT(blocks[i - 1]->number <= blocks[i]->number);
  CU_ASSERT_PTR_EQUAL(sim_replay_data_block(data, blocks[3]->b.id), blocks[3]);
  g_autoptr(SimCalib) c = sim_calib_from_replay(data, 0.95, &e);
  CU_ASSERT_FATAL(c != NULL);
  CU_ASSERT_EQUAL(c->main_blocks, 29);
  CU_ASSERT_EQUAL(c->all_blocks, 37);
  CU_ASSERT(c->n_intervals > 20);
  CU_ASSERT_DOUBLE_EQUAL(c->mean_interval_s.value, 15, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(c->target_interval_s.value, 15.0 * 29 / 37, 1e-12);
  CU_ASSERT_FALSE(c->interval_fits[1].ok); /* all equal: no lognormal */
  CU_ASSERT_EQUAL(c->n_pools, 1);
  CU_ASSERT_STRING_EQUAL(c->pools[0].name, "Others");
  CU_ASSERT_EQUAL(c->pools[0].main_blocks, 29);
  CU_ASSERT_EQUAL(c->pools[0].blocks, 37);
  CU_ASSERT_EQUAL(c->n_txs, 2548);
  CU_ASSERT_EQUAL(c->types[0].n + c->types[1].n + c->types[2].n, 2548);
  CU_ASSERT_EQUAL(c->types[OBS_TX_TX].median, 21000);
  CU_ASSERT(c->have_rate && c->span_s > 300 && c->span_s < 600);
  CU_ASSERT_EQUAL(c->n_vantages, 0);

  /* Included from a small scenario, it loads. */
  g_autoptr(json_t) m = sim_calib_models_json(c, NULL);
  g_autofree char *tmp = g_dir_make_tmp("calib-XXXXXX", NULL);
  g_autofree char *text = json_dumps(m, JSON_INDENT(2));
  g_autofree char *mf = write_tmp(tmp, "rinkeby.json", text);
  g_autofree char *sf =
      write_tmp(tmp, "small.json", "{\"stop\": {\"heights\": 20}, \"include\": [\"rinkeby.json\"]}");
  g_autoptr(SimDiag) diag = sim_diag_new(sf);
  g_autoptr(SimScenario) sc = sim_scenario_load_file(sf, NULL, diag);
  if (!sc) {
    g_autofree char *msg = sim_diag_join(diag);
    fprintf(stderr, "\n%s\n", msg);
  }
  CU_ASSERT(sc != NULL);
  rm_tree(tmp);

  /* The same directory as two vantage points: every delay is 0 ms, so nothing to fit. */
  const char *names[] = {"A", "B"};
  const char *dirs2[] = {dir, dir, NULL};
  SimReplayOptions opt2 = {.dirs = dirs2, .names = names, .n_vantages = 2};
  g_autoptr(SimReplayData) d2 = sim_replay_load(&opt2, NULL);
  CU_ASSERT_FATAL(d2 != NULL);
  g_autoptr(SimCalib) c2 = sim_calib_from_replay(d2, 0.95, NULL);
  CU_ASSERT_FATAL(c2 != NULL);
  CU_ASSERT_EQUAL(c2->n_vantages, 2);
  CU_ASSERT_EQUAL(c2->blocks_seen_by_all, 37);
  CU_ASSERT_EQUAL(c2->delays[0].n, 0); /* A is the first observer of every block (ties: table order) */
  CU_ASSERT_EQUAL(c2->delays[1].n, 37);
  CU_ASSERT_EQUAL(c2->delays[1].zeros, 37);
  CU_ASSERT_FALSE(c2->delays[1].lognormal.ok);
  CU_ASSERT_PTR_NULL(c2->delays[1].best);
}

/* The delay rows both the fits and the network fit read, and the network fit's refusals that need no run. */
static void test_delay_rows(void) {
  g_autofree char *dir = test_data("emc-rinkeby-2018-09", NULL);
  const char *names[] = {"A", "B"};
  const char *dirs2[] = {dir, dir, NULL};
  SimReplayOptions opt2 = {.dirs = dirs2, .names = names, .n_vantages = 2};
  g_autoptr(SimReplayData) d2 = sim_replay_load(&opt2, NULL);
  CU_ASSERT_FATAL(d2 != NULL);
  SimCalibDelayRows r, t;
  sim_calib_delay_rows(d2, FALSE, &r);
  sim_calib_delay_rows(d2, TRUE, &t);
  CU_ASSERT_EQUAL(r.n_vantages, 2);
  CU_ASSERT_EQUAL(r.n_rows, 37);
  CU_ASSERT_EQUAL(t.n_rows, 2548);
  gboolean pattern = TRUE; /* A first on every tie: [NAN, 0] */
  for (size_t i = 0; i < r.n_rows; i++)
    pattern = pattern && isnan(r.ms[2 * i]) && r.ms[2 * i + 1] == 0;
  for (size_t i = 0; i < t.n_rows; i++)
    pattern = pattern && isnan(t.ms[2 * i]) && t.ms[2 * i + 1] == 0;
  CU_ASSERT(pattern);
  sim_calib_delay_rows_clear(&r);
  sim_calib_delay_rows_clear(&t);

  g_autofree char *geo = g_build_filename(g_getenv("SIM_SOURCE_ROOT") ? g_getenv("SIM_SOURCE_ROOT") : ".",
                                          "scenarios", "geo-small.json", NULL);
  SimNetFitOptions no = {.scenario = geo, .heights = 50, .seeds = 2, .seed = 1, .scale_lo = 0.5, .scale_hi = 2,
                         .grid = 3, .level = 0.95};
  g_autoptr(GError) e = NULL;
  g_autoptr(SimNetFit) f = sim_netfit_run(d2, &no, &e);
  CU_ASSERT_PTR_NULL(f);
  CU_ASSERT(e && e->code == SIM_REPLAY_ERROR_INPUT && strstr(e->message, "4 vantage points, but 2 log directories"));
  g_clear_error(&e);
  const char *dirs1[] = {dir, NULL};
  SimReplayOptions opt1 = {.dirs = dirs1, .n_vantages = 1};
  g_autoptr(SimReplayData) d1 = sim_replay_load(&opt1, NULL);
  CU_ASSERT_FATAL(d1 != NULL);
  g_autoptr(SimNetFit) f1 = sim_netfit_run(d1, &no, &e);
  CU_ASSERT_PTR_NULL(f1);
  CU_ASSERT(e && e->code == SIM_REPLAY_ERROR_INPUT && strstr(e->message, "the logs have 1 vantage point"));
}

int register_suites(void) {
  ADD_SUITE("calibrate", TEST(test_self_consistency), TEST(test_best_by_aic), TEST(test_dispersion), TEST(test_hand_worked),
            TEST(test_work_distribution), TEST(test_histogram), TEST(test_level), TEST(test_models_file_includes), TEST(test_rinkeby),
            TEST(test_delay_rows));
  return 0;
}
