/* calibrate.c: fits of the simulator's models to measured data (see calibrate.h): intervals, pools,
 * transactions, delays and work, from the inputs given or from a loaded replay. The report, the models file
 * and the table are calibrate_out.c's. */
#include "calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "chain.h"
#include "obs.h"

/* Scenario bounds of the keys the fits produce (models/tx.c, models/pow.c), and the histogram's size. */
#define PRICE_MAX_GWEI 1e6
#define EMPTY_WINDOW_MAX_MS 1e7
#define HIST_MAX_BINS 1000

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void fit_clear(SimCalibFit *f) {
  g_free(f->error);
  f->error = NULL;
}

/* fit.h's intervals are at 95%: the same formulas at `level` (see calibrate.h). The exponential's exact
 * interval [2S/χ²_{1−α/2}(2n), 2S/χ²_{α/2}(2n)] (S the sum) is Garwood's rate interval turned over: its
 * lower end for n events and its upper end for n − 1 events over S have exactly those quantiles. */
static void fit_at_level(AnFit *f, double level) {
  if (level == 0.95) return;
  double z = gsl_cdf_ugaussian_Pinv(1 - (1 - level) / 2), n = (double)f->n;
  AnEstimate *p = f->p;
  switch (f->family) {
  case AN_FIT_EXPONENTIAL: {
    double sum = p[0].value * n;
    AnEstimate lo_n, hi_n;
    if (an_poisson_rate_ci(f->n, sum, level, &lo_n, NULL) &&
        an_poisson_rate_ci(f->n - 1, sum, level, &hi_n, NULL)) {
      p[0].lo = 1 / hi_n.hi;
      p[0].hi = lo_n.lo > 0 ? 1 / lo_n.lo : INFINITY;
    }
    break;
  }
  case AN_FIT_LOGNORMAL:
    p[0].lo = p[0].value - z * p[0].se;
    p[0].hi = p[0].value + z * p[0].se;
    p[1].lo = p[1].value * exp(-z / sqrt(2 * n));
    p[1].hi = p[1].value * exp(z / sqrt(2 * n));
    break;
  case AN_FIT_GAMMA:
    for (int i = 0; i < 2; i++) {
      p[i].lo = p[i].value * exp(-z * p[i].se / p[i].value);
      p[i].hi = p[i].value * exp(z * p[i].se / p[i].value);
    }
    break;
  }
}

static void fit_one(AnFitFamily family, const double *x, size_t n, double level, SimCalibFit *out) {
  g_autoptr(GError) e = NULL;
  gboolean ok = FALSE;
  switch (family) {
  case AN_FIT_EXPONENTIAL:
    ok = an_fit_exponential(x, n, &out->fit, &e);
    break;
  case AN_FIT_LOGNORMAL:
    ok = an_fit_lognormal(x, n, &out->fit, &e);
    break;
  case AN_FIT_GAMMA:
    ok = an_fit_gamma(x, n, &out->fit, &e);
    break;
  }
  out->ok = ok;
  if (ok)
    fit_at_level(&out->fit, level);
  else
    out->error = g_strdup(e ? e->message : "no fit");
}

static AnEstimate nan_estimate(void) {
  return (AnEstimate){NAN, NAN, NAN, NAN};
}

/* Wilson share; an empty denominator gives NANs. */
static AnEstimate share(uint64_t k, uint64_t n, double level) {
  AnEstimate e = nan_estimate();
  if (n > 0) {
    gboolean ok = an_share_ci(k, n, level, AN_CI_WILSON, &e, NULL);
    g_assert(ok);
  }
  return e;
}

/* The positive values of x, sorted. */
static double *positive_sorted(const double *x, size_t n, size_t *n_pos, size_t *zeros) {
  double *p = g_new(double, MAX(n, 1));
  size_t k = 0, z = 0;
  for (size_t i = 0; i < n; i++) {
    if (x[i] > 0)
      p[k++] = x[i];
    else if (x[i] == 0)
      z++;
  }
  qsort(p, k, sizeof(double), cmp_double);
  *n_pos = k;
  if (zeros) *zeros = z;
  return p;
}

/* ---- The histogram density ---------------------------------------------------------------------------- */

typedef struct {
  const SimCalibHistogram *h;
  const guint64 *cum; /* cum[j] = values in bins < j */
} HistCdf;

/* The histogram's CDF at x: linear within a bin. */
static double hist_cdf(double x, const void *data) {
  const HistCdf *c = data;
  const SimCalibHistogram *h = c->h;
  double t = (x - h->lo) / h->width;
  if (t <= 0) return 0;
  if (t >= h->bins) return 1;
  guint j = (guint)t;
  double in_bin = (double)(c->cum[j + 1] - c->cum[j]);
  return ((double)c->cum[j] + in_bin * (t - j)) / (double)h->n;
}

/* cum[0..k]: values of `x` (sorted) below each of the k bins' lower edges; the last bin is closed. */
static void hist_counts(const double *x, size_t n, double lo, double w, guint k, guint64 *cum) {
  cum[0] = 0;
  size_t i = 0;
  for (guint j = 1; j < k; j++) {
    double edge = lo + j * w;
    size_t a = i, b = n; /* the first index with x >= edge, by bisection */
    while (a < b) {
      size_t mid = a + (b - a) / 2;
      if (x[mid] < edge)
        a = mid + 1;
      else
        b = mid;
    }
    i = a;
    cum[j] = i;
  }
  cum[k] = n;
}

static double hist_loglik(const guint64 *cum, guint k, size_t n, double w) {
  double ll = 0;
  for (guint j = 0; j < k; j++) {
    double c = (double)(cum[j + 1] - cum[j]);
    if (c > 0) ll += c * log(c / ((double)n * w));
  }
  return ll;
}

/* The maximum-likelihood histogram density (see calibrate.h): equal bins whose width is a whole number m of
 * resolution steps q, from lo − q/2, so that rounded data (delays in whole milliseconds, intervals in whole
 * seconds) put the same number of possible values in every bin; narrower bins would hold point masses and
 * let the likelihood grow without bound. For each k = 1 .. min(n, 1000): m = ceil(P/k) with P the number of
 * steps the range spans plus one, then ceil(P/m) bins; the least AIC wins (the fewer bins on a tie). */
static void fit_histogram(const double *sorted, size_t n, SimCalibHistogram *h) {
  memset(h, 0, sizeof *h);
  h->n = n;
  if (n < 2 || sorted[0] == sorted[n - 1]) {
    h->error = g_strdup(n < 2 ? "needs at least 2 values" : "all values are equal");
    return;
  }
  double range = sorted[n - 1] - sorted[0], q = INFINITY;
  for (size_t i = 1; i < n; i++)
    if (sorted[i] > sorted[i - 1]) q = MIN(q, sorted[i] - sorted[i - 1]);
  h->resolution = q;
  double steps = floor(range / q + 0.5) + 1, lo = sorted[0] - q / 2;
  guint kmax = (guint)MIN((double)n, (double)HIST_MAX_BINS);
  g_autofree guint64 *cum = g_new0(guint64, kmax + 1);
  guint best_k = 0, last_k = 0;
  double best_aic = INFINITY, best_ll = 0, best_w = 0;
  for (guint k = 1; k <= kmax; k++) {
    double m = ceil(steps / k), w = m * q;
    guint kk = (guint)ceil(steps / m);
    if (kk == last_k) continue;
    last_k = kk;
    hist_counts(sorted, n, lo, w, kk, cum);
    double ll = hist_loglik(cum, kk, n, w);
    double aic = 2.0 * (kk - 1) - 2 * ll;
    if (aic < best_aic) best_aic = aic, best_ll = ll, best_k = kk, best_w = w;
  }
  h->bins = best_k;
  h->lo = lo;
  h->width = best_w;
  h->loglik = best_ll;
  h->aic = best_aic;
  hist_counts(sorted, n, lo, h->width, best_k, cum);
  HistCdf hc = {h, cum};
  h->ks = an_ks_one_sample(sorted, n, hist_cdf, &hc);
  h->ok = TRUE;
}

/* ---- The fits ------------------------------------------------------------------------------------------ */

static void fit_intervals(const SimCalibInput *in, SimCalib *c) {
  g_autofree double *all = g_new(double, MAX(in->n_intervals, 1));
  size_t n = 0;
  for (size_t i = 0; i < in->n_intervals; i++) {
    if (in->intervals_s[i] < 0 || !isfinite(in->intervals_s[i]))
      c->negative_intervals++;
    else
      all[n++] = in->intervals_s[i];
  }
  c->n_intervals = n;
  c->main_blocks = in->main_blocks;
  c->all_blocks = in->all_blocks;
  c->interval_best = -1;
  c->mean_interval_s = c->target_interval_s = nan_estimate();
  SimCalibFit mean = {0};
  fit_one(AN_FIT_EXPONENTIAL, all, n, in->level, &mean);
  if (mean.ok) {
    c->have_mean = TRUE;
    c->mean_interval_s = mean.fit.p[0];
    double ratio =
        in->all_blocks > 0 && in->main_blocks > 0 ? (double)in->main_blocks / (double)in->all_blocks : 1.0;
    AnEstimate t = c->mean_interval_s;
    c->target_interval_s = (AnEstimate){t.value * ratio, t.se * ratio, t.lo * ratio, t.hi * ratio};
  }
  fit_clear(&mean);
  size_t n_pos = 0;
  g_autofree double *pos = positive_sorted(all, n, &n_pos, &c->zero_intervals);
  static const AnFitFamily fam[3] = {AN_FIT_EXPONENTIAL, AN_FIT_LOGNORMAL, AN_FIT_GAMMA};
  for (int f = 0; f < 3; f++) {
    fit_one(fam[f], pos, n_pos, in->level, &c->interval_fits[f]);
    if (c->interval_fits[f].ok &&
        (c->interval_best < 0 || c->interval_fits[f].fit.aic < c->interval_fits[c->interval_best].fit.aic))
      c->interval_best = f;
  }
}

/* The window w = −T·log(1 − e) for an empty share e and mean main interval T (s), in ms, capped. */
static double empty_window_of(double e, double mean_s) {
  if (!(e >= 0)) return NAN;
  double w = e >= 1 ? EMPTY_WINDOW_MAX_MS : -mean_s * 1e3 * log1p(-e);
  return MIN(w, EMPTY_WINDOW_MAX_MS);
}

static void fit_pools(const SimCalibInput *in, SimCalib *c) {
  c->n_pools = in->n_pools;
  c->pools = g_new0(SimCalibPool, MAX(in->n_pools, 1));
  for (guint i = 0; i < in->n_pools; i++) {
    c->pools_main_total += in->pools[i].main_blocks;
    c->pools_blocks_total += in->pools[i].blocks;
  }
  for (guint i = 0; i < in->n_pools; i++) {
    const SimCalibPoolCounts *pc = &in->pools[i];
    SimCalibPool *p = &c->pools[i];
    p->name = g_strdup(pc->name);
    p->main_blocks = pc->main_blocks;
    p->blocks = pc->blocks;
    p->empty = pc->empty;
    p->main_share = share(pc->main_blocks, c->pools_main_total, in->level);
    p->block_share = share(pc->blocks, c->pools_blocks_total, in->level);
    p->empty_share = share(pc->empty, pc->blocks, in->level);
    p->empty_window_ms = NAN;
    if (c->have_mean && pc->blocks > 0) p->empty_window_ms = empty_window_of(p->empty_share.value, c->mean_interval_s.value);
  }
}

static int price_class(double gwei) {
  if (gwei <= 0) return 0;
  if (gwei < 20) return 1;
  if (gwei < 25) return 2;
  if (gwei < 105) return 3;
  return 4;
}

static void fit_txs(const SimCalibInput *in, SimCalib *c) {
  size_t n = in->n_txs;
  c->n_txs = n;
  c->span_s = in->span_s;
  c->rate_per_s = nan_estimate();
  if (n > 0 && isfinite(in->span_s) && in->span_s > 0)
    c->have_rate = an_poisson_rate_ci(n, in->span_s, in->level, &c->rate_per_s, NULL);
  /* Dispersion: counts in whole windows of SIM_CALIB_DISPERSION_WINDOW_S from the span's start. */
  c->dispersion = NAN;
  c->rate_quasi = nan_estimate();
  size_t windows =
      c->have_rate && in->tx_arrival_s ? (size_t)floor(in->span_s / SIM_CALIB_DISPERSION_WINDOW_S) : 0;
  if (windows >= 2) {
    g_autofree double *count = g_new0(double, windows);
    for (size_t i = 0; i < n; i++) {
      double t = in->tx_arrival_s[i];
      if (!(t >= 0)) continue;
      size_t w = (size_t)(t / SIM_CALIB_DISPERSION_WINDOW_S);
      if (w < windows) count[w]++;
    }
    double mean = 0, var = 0;
    for (size_t w = 0; w < windows; w++) mean += count[w];
    mean /= (double)windows;
    for (size_t w = 0; w < windows; w++) var += (count[w] - mean) * (count[w] - mean);
    var /= (double)(windows - 1);
    if (mean > 0) {
      c->dispersion_windows = windows;
      c->dispersion = var / mean;
      double z = gsl_cdf_ugaussian_Pinv(1 - (1 - in->level) / 2), se = c->rate_per_s.se * sqrt(MAX(c->dispersion, 1));
      c->rate_quasi = (AnEstimate){c->rate_per_s.value, se, MAX(c->rate_per_s.value - z * se, 0),
                                   c->rate_per_s.value + z * se};
    }
  }
  /* Types and gas limits */
  for (int t = 0; t < SIM_CALIB_N_TYPES; t++) {
    SimCalibTxType *ty = &c->types[t];
    g_autofree double *gas = g_new(double, MAX(n, 1));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
      if (in->tx_type[i] == t) gas[k++] = in->tx_gas_limit[i];
    ty->n = k;
    ty->share = share(k, n, in->level);
    ty->min = ty->median = ty->mean = ty->max = NAN;
    if (k > 0) {
      g_autoptr(AnEmpirical) emp = an_empirical_new(gas, k, NULL);
      if (emp) {
        ty->min = an_empirical_quantile(emp, 0);
        ty->median = an_empirical_quantile(emp, 0.5);
        ty->max = an_empirical_quantile(emp, 1);
        ty->mean = an_empirical_mean(emp);
      }
    }
    fit_one(AN_FIT_LOGNORMAL, gas, k, in->level, &ty->lognormal);
  }
  /* Gas prices */
  double min_low = INFINITY, max_top = -INFINITY;
  g_autofree double *prices = g_new(double, MAX(n, 1));
  for (size_t i = 0; i < n; i++) {
    double g = in->tx_price_gwei[i];
    int k = price_class(g);
    c->price_count[k]++;
    if (k == 1) min_low = MIN(min_low, g);
    if (k == 4) max_top = MAX(max_top, g);
    prices[i] = g;
  }
  for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++)
    c->price_share[k] = share(c->price_count[k], n, in->level);
  static const double lo[] = {0, 1, 20, 25, 105}, hi[] = {0, 20, 25, 105, 1000};
  for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++) {
    c->price_min_gwei[k] = lo[k];
    c->price_max_gwei[k] = hi[k];
  }
  if (isfinite(min_low)) c->price_min_gwei[1] = min_low;
  if (isfinite(max_top)) c->price_max_gwei[4] = MIN(max_top, PRICE_MAX_GWEI);
  g_autofree double *pos = positive_sorted(prices, n, &c->n_positive_prices, NULL);
  fit_one(AN_FIT_LOGNORMAL, pos, c->n_positive_prices, in->level, &c->price_lognormal);
}

static void fit_delay_one(const char *name, const double *x, size_t n, double level, SimCalibDelay *d) {
  d->name = g_strdup(name);
  d->n = n;
  d->median = d->mean = d->p90 = d->p99 = NAN;
  if (d->n > 0) {
    g_autoptr(AnEmpirical) emp = an_empirical_new(x, d->n, NULL);
    if (emp) {
      d->median = an_empirical_quantile(emp, 0.5);
      d->mean = an_empirical_mean(emp);
      d->p90 = an_empirical_quantile(emp, 0.9);
      d->p99 = an_empirical_quantile(emp, 0.99);
    }
  }
  size_t n_pos = 0;
  g_autofree double *pos = positive_sorted(x, d->n, &n_pos, &d->zeros);
  fit_one(AN_FIT_LOGNORMAL, pos, n_pos, level, &d->lognormal);
  fit_one(AN_FIT_GAMMA, pos, n_pos, level, &d->gamma);
  fit_histogram(pos, n_pos, &d->empirical);
  double best = INFINITY;
  if (d->lognormal.ok && d->lognormal.fit.aic < best) best = d->lognormal.fit.aic, d->best = "lognormal";
  if (d->gamma.ok && d->gamma.fit.aic < best) best = d->gamma.fit.aic, d->best = "gamma";
  if (d->empirical.ok && d->empirical.aic < best) best = d->empirical.aic, d->best = "empirical";
}

static void fit_delays(const SimCalibInput *in, SimCalib *c) {
  c->blocks_seen_by_all = in->blocks_seen_by_all;
  c->txs_seen_by_all = in->txs_seen_by_all;
  c->n_vantages = in->n_vantages;
  c->delays = g_new0(SimCalibDelay, MAX(in->n_vantages, 1));
  c->tx_delays = g_new0(SimCalibDelay, MAX(in->n_vantages, 1));
  for (guint v = 0; v < in->n_vantages; v++) {
    fit_delay_one(in->vantage_names[v], in->delays_ms[v], in->n_delays[v], in->level, &c->delays[v]);
    fit_delay_one(in->vantage_names[v], in->tx_delays_ms ? in->tx_delays_ms[v] : NULL,
                  in->tx_delays_ms ? in->n_tx_delays[v] : 0, in->level, &c->tx_delays[v]);
  }
}

/* The empty window of all pools together and the mean work-distribution delay from one-miner forks (see
 * calibrate.h). */
static void fit_work(const SimCalibInput *in, SimCalib *c) {
  c->empty_share_all = c->empty_window_ms = c->work_delay_mean_ms = nan_estimate();
  c->network = SIM_CALIB_NET_NONE;
  double exposure = 0;
  for (guint i = 0; i < in->n_pools; i++) {
    c->empty_total += in->pools[i].empty;
    c->one_miner_forks += in->pools[i].one_miner_forks;
    if (c->pools_main_total > 0)
      exposure += (double)in->pools[i].blocks * (double)in->pools[i].main_blocks / (double)c->pools_main_total;
  }
  c->empty_share_all = share(c->empty_total, c->pools_blocks_total, in->level);
  if (c->have_mean && c->pools_blocks_total > 0) {
    const AnEstimate *e = &c->empty_share_all;
    double t = c->mean_interval_s.value;
    /* The map is increasing, so the ends map to the ends; se by the delta method, dw/de = T / (1 − e). */
    c->empty_window_ms = (AnEstimate){empty_window_of(e->value, t),
                                      e->value < 1 ? t * 1e3 * e->se / (1 - e->value) : NAN,
                                      empty_window_of(e->lo, t), empty_window_of(e->hi, t)};
    c->have_empty_window = isfinite(c->empty_window_ms.value);
  }
  if (!c->have_mean || !(c->target_interval_s.value > 0) || !(exposure > 0)) return;
  c->work_exposure_per_s = exposure / c->target_interval_s.value;
  AnEstimate k;
  /* Garwood's interval of the count K (the rate over a duration of 1). */
  if (!an_poisson_rate_ci(c->one_miner_forks, 1.0, in->level, &k, NULL)) return;
  double f = 1e3 / c->work_exposure_per_s;
  c->work_delay_mean_ms = (AnEstimate){k.value * f, k.se * f, k.lo * f, k.hi * f};
  c->have_work_delay = TRUE;
}

SimCalib *sim_calib_fit(const SimCalibInput *in, GError **error) {
  g_return_val_if_fail(in != NULL && in->level > 0 && in->level < 1, NULL);
  g_return_val_if_fail(in->n_txs == 0 || (in->tx_type && in->tx_gas_limit && in->tx_price_gwei), NULL);
  uint64_t blocks = 0;
  for (guint i = 0; i < in->n_pools; i++)
    blocks += in->pools[i].blocks;
  if (blocks == 0) {
    g_set_error_literal(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, "no block of a known miner to fit");
    return NULL;
  }
  SimCalib *c = g_new0(SimCalib, 1);
  c->level = in->level;
  fit_intervals(in, c);
  fit_pools(in, c);
  fit_txs(in, c);
  fit_delays(in, c);
  fit_work(in, c);
  return c;
}

void sim_calib_free(SimCalib *c) {
  if (!c) return;
  for (int f = 0; f < 3; f++)
    fit_clear(&c->interval_fits[f]);
  for (guint i = 0; i < c->n_pools; i++)
    g_free(c->pools[i].name);
  g_free(c->pools);
  for (int t = 0; t < SIM_CALIB_N_TYPES; t++)
    fit_clear(&c->types[t].lognormal);
  fit_clear(&c->price_lognormal);
  for (guint v = 0; v < c->n_vantages; v++) {
    SimCalibDelay *ds[2] = {&c->delays[v], &c->tx_delays[v]};
    for (int k = 0; k < 2; k++) {
      g_free(ds[k]->name);
      fit_clear(&ds[k]->lognormal);
      fit_clear(&ds[k]->gamma);
      g_free(ds[k]->empirical.error);
    }
  }
  g_free(c->delays);
  g_free(c->tx_delays);
  g_free(c);
}

/* ---- From measured logs ------------------------------------------------------------------------------- */

static int64_t first_seen(const SimReplayBlock *b, guint v) {
  return MIN(b->msg_ns[v], b->ann_ns[v]);
}

void sim_calib_delay_rows(const SimReplayData *data, gboolean txs, SimCalibDelayRows *out) {
  g_return_if_fail(data != NULL && out != NULL);
  guint nv = sim_replay_data_n_vantages(data), n = 0;
  GArray *ms = g_array_new(FALSE, FALSE, sizeof(double));
  memset(out, 0, sizeof *out);
  out->n_vantages = nv;
  const SimReplayBlock *const *blocks = txs ? NULL : sim_replay_data_blocks(data, &n);
  const SimReplayTx *const *tx = txs ? sim_replay_data_txs(data, &n) : NULL;
  g_autofree int64_t *t = g_new(int64_t, MAX(nv, 1));
  for (guint i = 0; nv >= 2 && i < n; i++) {
    guint first = 0;
    gboolean all = TRUE;
    for (guint v = 0; v < nv && all; v++) {
      t[v] = txs ? tx[i]->recv[v] : first_seen(blocks[i], v);
      all = t[v] != OBS_TIME_NONE;
      if (all && t[v] < t[first]) first = v; /* ties: the first vantage in table order */
    }
    if (!all) continue;
    out->n_rows++;
    for (guint v = 0; v < nv; v++) {
      double d = v == first ? NAN : (double)(t[v] - t[first]) / 1e6;
      g_array_append_val(ms, d);
    }
  }
  out->ms = (double *)(void *)g_array_free(ms, FALSE);
}

void sim_calib_delay_rows_clear(SimCalibDelayRows *rows) {
  if (!rows) return;
  g_free(rows->ms);
  memset(rows, 0, sizeof *rows);
}

SimCalib *sim_calib_from_replay(const SimReplayData *data, double level, GError **error) {
  g_return_val_if_fail(data != NULL, NULL);
  const AnChain *chain = sim_replay_data_chain(data);
  guint nv = sim_replay_data_n_vantages(data);
  guint n_blocks = 0, n_txs = 0;
  const SimReplayBlock *const *blocks = sim_replay_data_blocks(data, &n_blocks);
  const SimReplayTx *const *txs = sim_replay_data_txs(data, &n_txs);
  SimCalibInput in = {.level = level, .n_vantages = nv, .vantage_names = sim_replay_data_vantage_names(data)};

  /* Intervals between consecutive logged main blocks. */
  g_autoptr(GArray) iv = g_array_new(FALSE, FALSE, sizeof(double));
  uint64_t heights = an_chain_summary(chain)->heights;
  for (uint32_t h = 1; h < heights; h++) {
    const ObsBlock *a = an_chain_main_block(chain, h), *b = an_chain_main_block(chain, h + 1);
    const SimReplayBlock *ra = a ? sim_replay_data_block(data, a->id) : NULL;
    const SimReplayBlock *rb = b ? sim_replay_data_block(data, b->id) : NULL;
    if (!ra || !rb || ra->placeholder || rb->placeholder) continue;
    double d = (double)(rb->b.mined_ns - ra->b.mined_ns) / 1e9;
    g_array_append_val(iv, d);
  }
  in.intervals_s = (const double *)iv->data;
  in.n_intervals = iv->len;
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (guint i = 0; i < n_blocks; i++) {
    const SimReplayBlock *b = blocks[i];
    AnBlockType type;
    if (!an_chain_block_type(chain, b->b.id, &type)) continue;
    in.all_blocks++;
    if (type == AN_BLOCK_MAIN) in.main_blocks++;
    for (guint v = 0; v < nv; v++) {
      int64_t t = first_seen(b, v);
      if (t == OBS_TIME_NONE) continue;
      t0 = MIN(t0, t);
      t1 = MAX(t1, t);
    }
  }

  /* Pools: the chain's groups (placeholders belong to none). */
  guint np = an_chain_n_pools(chain);
  g_autofree SimCalibPoolCounts *pools = g_new0(SimCalibPoolCounts, MAX(np, 1));
  for (guint g = 0; g < np; g++) {
    const AnPoolResult *pr = an_chain_pool(chain, g);
    pools[g] = (SimCalibPoolCounts){pr->name, pr->main, pr->blocks, pr->empty, pr->one_miner_forks};
  }
  in.pools = pools;
  in.n_pools = np;

  /* Transactions */
  g_autofree uint8_t *type = g_new(uint8_t, MAX(n_txs, 1));
  g_autofree double *gas = g_new(double, MAX(n_txs, 1));
  g_autofree double *price = g_new(double, MAX(n_txs, 1));
  for (guint i = 0; i < n_txs; i++) {
    const SimReplayTx *t = txs[i];
    type[i] = t->rec.type;
    gas[i] = (double)t->rec.gas_limit;
    price[i] = t->rec.gas_price_wei / 1e9;
    for (guint v = 0; v < nv; v++) {
      if (t->recv[v] == OBS_TIME_NONE) continue;
      t0 = MIN(t0, t->recv[v]);
      t1 = MAX(t1, t->recv[v]);
    }
  }
  in.n_txs = n_txs;
  in.tx_type = type;
  in.tx_gas_limit = gas;
  in.tx_price_gwei = price;
  in.span_s = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0;
  g_autofree double *arrival = g_new(double, MAX(n_txs, 1));
  for (guint i = 0; i < n_txs; i++) {
    int64_t first = OBS_TIME_NONE;
    for (guint v = 0; v < nv; v++) first = MIN(first, txs[i]->recv[v]);
    arrival[i] = first == OBS_TIME_NONE ? NAN : (double)(first - t0) / 1e9;
  }
  in.tx_arrival_s = arrival;

  /* Delays after the first observation, over the blocks (transactions) every vantage point saw. */
  SimCalibDelayRows brows, trows;
  sim_calib_delay_rows(data, FALSE, &brows);
  sim_calib_delay_rows(data, TRUE, &trows);
  in.blocks_seen_by_all = brows.n_rows;
  in.txs_seen_by_all = trows.n_rows;
  g_autofree GArray **dl = g_new0(GArray *, MAX(nv, 1));
  g_autofree GArray **tl = g_new0(GArray *, MAX(nv, 1));
  for (guint v = 0; v < nv; v++) {
    dl[v] = g_array_new(FALSE, FALSE, sizeof(double));
    tl[v] = g_array_new(FALSE, FALSE, sizeof(double));
  }
  for (size_t r = 0; r < brows.n_rows; r++)
    for (guint v = 0; v < nv; v++)
      if (!isnan(brows.ms[r * nv + v])) g_array_append_val(dl[v], brows.ms[r * nv + v]);
  for (size_t r = 0; r < trows.n_rows; r++)
    for (guint v = 0; v < nv; v++)
      if (!isnan(trows.ms[r * nv + v])) g_array_append_val(tl[v], trows.ms[r * nv + v]);
  sim_calib_delay_rows_clear(&brows);
  sim_calib_delay_rows_clear(&trows);
  g_autofree const double **dp = g_new0(const double *, MAX(nv, 1));
  g_autofree size_t *dn = g_new0(size_t, MAX(nv, 1));
  g_autofree const double **tp = g_new0(const double *, MAX(nv, 1));
  g_autofree size_t *tn = g_new0(size_t, MAX(nv, 1));
  for (guint v = 0; v < nv; v++) {
    dp[v] = (const double *)dl[v]->data;
    dn[v] = dl[v]->len;
    tp[v] = (const double *)tl[v]->data;
    tn[v] = tl[v]->len;
  }
  in.delays_ms = dp;
  in.n_delays = dn;
  in.tx_delays_ms = tp;
  in.n_tx_delays = tn;
  if (nv < 2) in.n_vantages = 0; /* one vantage point: no delays between points */
  SimCalib *c = sim_calib_fit(&in, error);
  for (guint v = 0; v < nv; v++) {
    g_array_unref(dl[v]);
    g_array_unref(tl[v]);
  }
  return c;
}
