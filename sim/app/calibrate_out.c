/* calibrate_out.c: what a calibration gives (see calibrate.h): the report as JSON, the models file that
 * scenarios include, and the table printed. */
#include "calibrate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "obs.h"

/* Scenario bounds of the keys the models file writes (models/tx.c). */
#define GAS_MIN 21000.0
#define GAS_MAX 1e9
#define SIGMA_MAX 10.0

static const char *const type_names[SIM_CALIB_N_TYPES] = {"TX", "MC", "CC"};
static const char *const class_labels[SIM_CALIB_N_PRICE_CLASSES] = {"0", "(0,20)", "[20,25)", "[25,105)",
                                                                    ">=105"};
static const char *const interval_families[3] = {"exponential", "lognormal", "gamma"};

/* ---- JSON --------------------------------------------------------------------------------------------- */

static json_t *num(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *est_json(const AnEstimate *e) {
  return json_pack("{s:o, s:o, s:o, s:o}", "value", num(e->value), "se", num(e->se), "lo", num(e->lo), "hi",
                   num(e->hi));
}

static json_t *fit_json(const SimCalibFit *f) {
  if (f->ok) return an_fit_to_json(&f->fit);
  return json_pack("{s:s}", "error", f->error ? f->error : "no fit");
}

static json_t *hist_json(const SimCalibHistogram *h) {
  if (!h->ok) return json_pack("{s:s, s:s}", "family", "empirical", "error", h->error ? h->error : "no fit");
  return json_pack("{s:s, s:I, s:i, s:o, s:o, s:o, s:o, s:o, s:{s:o, s:o}}", "family", "empirical", "n",
                   (json_int_t)h->n, "bins", (int)h->bins, "lo", num(h->lo), "width", num(h->width),
                   "resolution", num(h->resolution), "loglik", num(h->loglik), "aic", num(h->aic), "ks", "d",
                   num(h->ks.d), "p", num(h->ks.p));
}

static json_t *delays_json(const SimCalibDelay *ds, guint n) {
  json_t *byv = json_array();
  for (guint v = 0; v < n; v++) {
    const SimCalibDelay *d = &ds[v];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "n", json_integer((json_int_t)d->n));
    json_object_set_new(o, "zeros", json_integer((json_int_t)d->zeros));
    json_object_set_new(o, "median", num(d->median));
    json_object_set_new(o, "mean", num(d->mean));
    json_object_set_new(o, "p90", num(d->p90));
    json_object_set_new(o, "p99", num(d->p99));
    json_t *f = json_object();
    json_object_set_new(f, "lognormal", fit_json(&d->lognormal));
    json_object_set_new(f, "gamma", fit_json(&d->gamma));
    json_object_set_new(f, "empirical", hist_json(&d->empirical));
    json_object_set_new(o, "fits", f);
    json_object_set_new(o, "best", d->best ? json_string(d->best) : json_null());
    if (d->lognormal.ok)
      json_object_set_new(o, "as_delay_model",
                          json_pack("{s:s, s:o, s:o}", "model", "lognormal", "median_ms",
                                    num(exp(d->lognormal.fit.p[0].value)), "sigma",
                                    num(d->lognormal.fit.p[1].value)));
    json_array_append_new(byv, o);
  }
  return byv;
}

json_t *sim_calib_report_json(const SimCalib *c) {
  g_return_val_if_fail(c != NULL, NULL);
  json_t *r = json_object();
  json_t *notes = json_array();
  json_object_set_new(r, "level", json_real(c->level));

  json_t *bi = json_object();
  json_object_set_new(bi, "n", json_integer((json_int_t)c->n_intervals));
  json_object_set_new(bi, "negative", json_integer((json_int_t)c->negative_intervals));
  json_object_set_new(bi, "zeros", json_integer((json_int_t)c->zero_intervals));
  if (c->have_mean) {
    json_object_set_new(bi, "mean_s", est_json(&c->mean_interval_s));
  } else {
    json_array_append_new(notes, json_sprintf("block intervals: %s", c->interval_fits[0].error));
  }
  json_t *fits = json_object();
  for (int f = 0; f < 3; f++)
    json_object_set_new(fits, interval_families[f], fit_json(&c->interval_fits[f]));
  json_object_set_new(bi, "fits", fits);
  json_object_set_new(bi, "best",
                      c->interval_best >= 0 ? json_string(interval_families[c->interval_best]) : json_null());
  json_object_set_new(bi, "main_blocks", json_integer((json_int_t)c->main_blocks));
  json_object_set_new(bi, "all_blocks", json_integer((json_int_t)c->all_blocks));
  if (c->have_mean) json_object_set_new(bi, "target_interval_s", est_json(&c->target_interval_s));
  json_object_set_new(r, "block_intervals", bi);

  json_t *pools = json_array();
  for (guint i = 0; i < c->n_pools; i++) {
    const SimCalibPool *p = &c->pools[i];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_object_set_new(o, "main_blocks", json_integer((json_int_t)p->main_blocks));
    json_object_set_new(o, "blocks", json_integer((json_int_t)p->blocks));
    json_object_set_new(o, "empty", json_integer((json_int_t)p->empty));
    json_object_set_new(o, "main_share", est_json(&p->main_share));
    json_object_set_new(o, "block_share", est_json(&p->block_share));
    json_object_set_new(o, "empty_share", est_json(&p->empty_share));
    json_object_set_new(o, "empty_window_ms", num(p->empty_window_ms));
    json_array_append_new(pools, o);
  }
  json_object_set_new(r, "pools", pools);

  json_t *tx = json_object();
  json_object_set_new(tx, "n", json_integer((json_int_t)c->n_txs));
  json_object_set_new(tx, "span_s", num(c->span_s));
  if (c->have_rate) {
    json_object_set_new(tx, "rate_per_s", est_json(&c->rate_per_s));
    if (c->dispersion_windows) {
      json_object_set_new(tx, "dispersion",
                          json_pack("{s:f, s:I, s:o}", "window_s", SIM_CALIB_DISPERSION_WINDOW_S, "windows",
                                    (json_int_t)c->dispersion_windows, "index", num(c->dispersion)));
      json_object_set_new(tx, "rate_per_s_overdispersed", est_json(&c->rate_quasi));
    }
  }
  else
    json_array_append_new(notes, json_string("transaction rate: no transaction or no observation span"));
  json_t *types = json_object();
  for (int t = 0; t < SIM_CALIB_N_TYPES; t++) {
    const SimCalibTxType *ty = &c->types[t];
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)ty->n));
    json_object_set_new(o, "share", est_json(&ty->share));
    json_object_set_new(o, "gas_limit",
                        json_pack("{s:o, s:o, s:o, s:o, s:o}", "min", num(ty->min), "median", num(ty->median),
                                  "mean", num(ty->mean), "max", num(ty->max), "lognormal",
                                  fit_json(&ty->lognormal)));
    json_object_set_new(types, type_names[t], o);
  }
  json_object_set_new(tx, "types", types);
  json_t *classes = json_array();
  for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++)
    json_array_append_new(
        classes, json_pack("{s:s, s:I, s:o, s:o, s:o}", "class_gwei", class_labels[k], "n",
                           (json_int_t)c->price_count[k], "share", est_json(&c->price_share[k]), "min_gwei",
                           num(c->price_min_gwei[k]), "max_gwei", num(c->price_max_gwei[k])));
  json_object_set_new(tx, "gas_price_gwei",
                      json_pack("{s:o, s:I, s:o}", "classes", classes, "positive",
                                (json_int_t)c->n_positive_prices, "lognormal",
                                fit_json(&c->price_lognormal)));
  json_object_set_new(r, "transactions", tx);

  json_t *dl = json_object();
  json_object_set_new(dl, "blocks_seen_by_all", json_integer((json_int_t)c->blocks_seen_by_all));
  json_object_set_new(dl, "by_vantage", delays_json(c->delays, c->n_vantages));
  json_object_set_new(r, "vantage_delays_ms", dl);
  json_t *tdl = json_object();
  json_object_set_new(tdl, "txs_seen_by_all", json_integer((json_int_t)c->txs_seen_by_all));
  json_object_set_new(tdl, "by_vantage", delays_json(c->tx_delays, c->n_vantages));
  json_object_set_new(r, "tx_delays_ms", tdl);
  if (c->n_vantages == 0)
    json_array_append_new(notes,
                          json_string("vantage delays: they need the logs of two or more vantage points"));

  json_t *wk = json_object();
  json_object_set_new(wk, "blocks", json_integer((json_int_t)c->pools_blocks_total));
  json_object_set_new(wk, "empty", json_integer((json_int_t)c->empty_total));
  json_object_set_new(wk, "empty_share", est_json(&c->empty_share_all));
  json_object_set_new(wk, "empty_window_ms", est_json(&c->empty_window_ms));
  json_object_set_new(wk, "one_miner_forks", json_integer((json_int_t)c->one_miner_forks));
  json_object_set_new(wk, "exposure_per_s", num(c->work_exposure_per_s));
  json_object_set_new(wk, "work_delay_mean_ms", est_json(&c->work_delay_mean_ms));
  json_object_set_new(r, "work_distribution", wk);
  if (!c->have_work_delay)
    json_array_append_new(notes, json_string("work distribution: not fitted (no mean interval or no main block)"));
  else if (c->one_miner_forks == 0)
    json_array_append_new(notes, json_string("work distribution: no one-miner fork, so only an upper bound on "
                                             "its mean; not written to the models file"));
  json_object_set_new(r, "notes", notes);
  return r;
}

/* ---- The models file ---------------------------------------------------------------------------------- */

/* A hash share can only be > 0: pools without a main block are left out of the models file. */
static gboolean pool_in_models(const SimCalib *c, guint i) {
  return c->pools[i].main_blocks > 0 && c->pools_main_total > 0;
}

static gboolean have_txs(const SimCalib *c) {
  return c->have_rate;
}

static void comment_add(json_t *arr, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void comment_add(json_t *arr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  json_array_append_new(arr, json_string(s));
}

static const char *fit_summary(const SimCalibFit *f, char *buf, size_t len) {
  if (!f->ok) {
    g_snprintf(buf, len, "-");
    return buf;
  }
  g_snprintf(buf, len, "AIC %.1f, KS D %.3f p %.3g", f->fit.aic, f->fit.ks.d, f->fit.ks.p);
  return buf;
}

static const char *work_delay_key(const SimCalib *c) {
  switch (c->network) {
  case SIM_CALIB_NET_GEO:
    return "stratum";
  case SIM_CALIB_NET_POOL_DELAY:
    return "own_work";
  case SIM_CALIB_NET_NONE:
    break;
  }
  return NULL;
}

/* The models file's "comment": what was fitted, with its interval, and what was not. */
static json_t *models_comment(const SimCalib *c) {
  json_t *cm = json_array();
  comment_add(cm, "Models fitted to measured logs by 'sim calibrate' (a partial scenario: include it with "
                  "\"include\": [\"this file\"]; the including scenario's own keys win).");
  comment_add(
      cm,
      "Intervals are %g%% confidence intervals; \"calibration\" holds every fit with standard errors, "
      "log-likelihood, AIC and Kolmogorov-Smirnov statistics.",
      c->level * 100);
  char b1[96], b2[96], b3[96];
  if (c->have_mean) {
    comment_add(
        cm,
        "chain.target_interval_s: %.4g s [%g%%: %.4g, %.4g] = mean main-chain interval %.4g s [%.4g, %.4g] "
        "over %zu intervals x main/all blocks %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
        c->target_interval_s.value, 100 * c->level, c->target_interval_s.lo, c->target_interval_s.hi,
        c->mean_interval_s.value, c->mean_interval_s.lo, c->mean_interval_s.hi, c->n_intervals,
        c->main_blocks, c->all_blocks);
    comment_add(cm, "block intervals (%zu positive): exponential %s; lognormal %s; gamma %s; best by AIC: %s",
                c->n_intervals - c->zero_intervals, fit_summary(&c->interval_fits[0], b1, sizeof b1),
                fit_summary(&c->interval_fits[1], b2, sizeof b2),
                fit_summary(&c->interval_fits[2], b3, sizeof b3),
                c->interval_best >= 0 ? interval_families[c->interval_best] : "none");
  } else {
    comment_add(cm, "chain.target_interval_s: not fitted (%s)", c->interval_fits[0].error);
  }
  for (guint i = 0; i < c->n_pools; i++) {
    const SimCalibPool *p = &c->pools[i];
    if (!pool_in_models(c, i)) {
      comment_add(cm, "pool %s: no main block (%" G_GUINT64_FORMAT " blocks): left out", p->name, p->blocks);
      continue;
    }
    comment_add(cm,
                "pools[%s].hash_share: %.4g [%.4g, %.4g] (%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                " main blocks); empty blocks %.4g [%.4g, %.4g] (%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ")",
                p->name, p->main_share.value, p->main_share.lo, p->main_share.hi, p->main_blocks,
                c->pools_main_total, p->empty_share.value, p->empty_share.lo, p->empty_share.hi, p->empty,
                p->blocks);
  }
  if (have_txs(c)) {
    comment_add(cm, "transactions.rate_per_s: %.4g [%.4g, %.4g] (%zu distinct over %.1f s, Poisson)", c->rate_per_s.value,
                c->rate_per_s.lo, c->rate_per_s.hi, c->n_txs, c->span_s);
    if (c->dispersion_windows)
      comment_add(cm, "arrivals: dispersion index %.3g over %zu windows of 60 s; overdispersed interval [%.4g, %.4g]",
                  c->dispersion, c->dispersion_windows, c->rate_quasi.lo, c->rate_quasi.hi);
    for (int t = 0; t < SIM_CALIB_N_TYPES; t++) {
      const SimCalibTxType *ty = &c->types[t];
      if (ty->lognormal.ok)
        comment_add(cm, "%s: share %.4g [%.4g, %.4g]; gas limit lognormal median %.6g, sigma %.4g (%s)",
                    type_names[t], ty->share.value, ty->share.lo, ty->share.hi,
                    exp(ty->lognormal.fit.p[0].value), ty->lognormal.fit.p[1].value,
                    fit_summary(&ty->lognormal, b1, sizeof b1));
      else
        comment_add(cm, "%s: share %.4g [%.4g, %.4g]; gas limit median %.6g (no lognormal: %s)",
                    type_names[t], ty->share.value, ty->share.lo, ty->share.hi, ty->median,
                    ty->lognormal.error ? ty->lognormal.error : "-");
    }
    GString *s = g_string_new("gas price classes (gwei):");
    for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++)
      g_string_append_printf(s, " %s %.4g [%.4g, %.4g]%s", class_labels[k], c->price_share[k].value,
                             c->price_share[k].lo, c->price_share[k].hi,
                             k + 1 < SIM_CALIB_N_PRICE_CLASSES ? ";" : "");
    json_array_append_new(cm, json_string(s->str));
    g_string_free(s, TRUE);
  } else {
    comment_add(cm, "transactions: not fitted (no transaction or no observation span)");
  }
  for (guint v = 0; v < c->n_vantages; v++) {
    const SimCalibDelay *d = &c->delays[v];
    comment_add(
        cm, "delay after first observation at %s (%zu, %zu zeros): lognormal %s; gamma %s; best by AIC: %s",
        d->name, d->n, d->zeros, fit_summary(&d->lognormal, b1, sizeof b1),
        fit_summary(&d->gamma, b2, sizeof b2), d->best ? d->best : "none");
  }
  if (c->have_empty_window)
    comment_add(cm, "chain.empty_window_ms: %.4g ms [%.4g, %.4g] from %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                    " empty blocks (all pools) and the mean main-chain interval",
                c->empty_window_ms.value, c->empty_window_ms.lo, c->empty_window_ms.hi, c->empty_total,
                c->pools_blocks_total);
  const char *work_key = work_delay_key(c);
  if (c->have_work_delay && c->one_miner_forks > 0)
    comment_add(cm,
                "work distribution: mean %.4g ms [%.4g, %.4g] from %" G_GUINT64_FORMAT
                " one-miner forks over %.4g expected per second of delay; %s%s%s",
                c->work_delay_mean_ms.value, c->work_delay_mean_ms.lo, c->work_delay_mean_ms.hi,
                c->one_miner_forks, c->work_exposure_per_s, work_key ? "written as network." : "not written",
                work_key ? work_key : " (--network none)",
                work_key ? ", a lognormal of that mean with sigma 1 (a choice: only the mean is identified)" : "");
  else if (c->have_work_delay)
    comment_add(cm, "work distribution: no one-miner fork; mean below %.4g ms (upper end of the interval), not written",
                c->work_delay_mean_ms.hi);
  comment_add(cm, "network link latencies, jitter and relay times: not identifiable from the vantage points' "
                  "delays without simulating the network (see calibration.vantage_delays_ms); not written");
  return cm;
}

/* The models file's "transactions" section (have_txs(c)), each value inside its scenario bounds. */
static json_t *models_transactions(const SimCalib *c) {
  json_t *t = json_object();
  json_object_set_new(t, "rate_per_s", json_real(c->rate_per_s.value));
  static const char *const share_keys[] = {"share_tx", "share_mc", "share_cc"};
  for (int k = 0; k < SIM_CALIB_N_TYPES; k++)
    json_object_set_new(t, share_keys[k], num(c->types[k].share.value));
  if (c->types[OBS_TX_TX].n > 0)
    json_object_set_new(t, "tx_gas", json_real(CLAMP(c->types[OBS_TX_TX].median, GAS_MIN, GAS_MAX)));
  static const char *const med_keys[] = {NULL, "mc_gas_median", "cc_gas_median"};
  static const char *const sig_keys[] = {NULL, "mc_gas_sigma", "cc_gas_sigma"};
  for (int k = OBS_TX_MC; k <= OBS_TX_CC; k++) {
    const SimCalibFit *f = &c->types[k].lognormal;
    if (!f->ok) continue;
    json_object_set_new(t, med_keys[k], json_real(CLAMP(exp(f->fit.p[0].value), GAS_MIN, GAS_MAX)));
    json_object_set_new(t, sig_keys[k], json_real(CLAMP(f->fit.p[1].value, 0, SIGMA_MAX)));
  }
  json_t *classes = json_array();
  for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++)
    json_array_append_new(classes, json_pack("{s:o, s:o, s:o}", "min_gwei", json_real(c->price_min_gwei[k]),
                                             "max_gwei", json_real(c->price_max_gwei[k]), "share",
                                             num(c->price_share[k].value)));
  json_object_set_new(t, "gas_price_classes", classes);
  return t;
}

json_t *sim_calib_models_json(const SimCalib *c, json_t *header) {
  g_return_val_if_fail(c != NULL, NULL);
  json_t *m = json_object();
  json_object_set_new(m, "comment", models_comment(c));
  const char *work_key = work_delay_key(c);
  if (c->have_mean) {
    json_t *ch = json_pack("{s:o}", "target_interval_s", num(c->target_interval_s.value));
    if (c->have_empty_window) json_object_set_new(ch, "empty_window_ms", json_real(c->empty_window_ms.value));
    json_object_set_new(m, "chain", ch);
  }
  if (work_key && c->have_work_delay && c->one_miner_forks > 0) {
    double sigma = SIM_CALIB_WORK_SIGMA, median = c->work_delay_mean_ms.value * exp(-sigma * sigma / 2);
    json_object_set_new(m, "network",
                        json_pack("{s:{s:s, s:f, s:f}}", work_key, "model", "lognormal", "median_ms",
                                  CLAMP(median, 1e-6, 1e7), "sigma", sigma));
  }
  json_t *pools = json_array();
  for (guint i = 0; i < c->n_pools; i++) {
    if (!pool_in_models(c, i)) continue;
    const SimCalibPool *p = &c->pools[i];
    json_t *o = json_pack("{s:s, s:o}", "name", p->name, "hash_share", num(p->main_share.value));
    if (isfinite(p->empty_window_ms))
      json_object_set_new(o, "empty_window_ms", json_real(p->empty_window_ms));
    json_array_append_new(pools, o);
  }
  json_object_set_new(m, "pools", pools);
  if (have_txs(c)) json_object_set_new(m, "transactions", models_transactions(c));
  json_t *cal = json_object();
  if (header) json_object_set_new(cal, "header", header);
  json_t *report = sim_calib_report_json(c);
  json_object_update(cal, report);
  json_decref(report);
  json_object_set_new(m, "calibration", cal);
  return m;
}

/* ---- The table ---------------------------------------------------------------------------------------- */

static void print_fit_row(FILE *out, const char *label, const SimCalibFit *f, gboolean best) {
  if (!f->ok) {
    fprintf(out, "  %-12s (%s)\n", label, f->error ? f->error : "no fit");
    return;
  }
  const AnFit *a = &f->fit;
  GString *ps = g_string_new(NULL);
  for (guint i = 0; i < a->n_params; i++)
    g_string_append_printf(ps, "%s%s %.4g [%.4g, %.4g]", i ? ", " : "", an_fit_param_name(a->family, i),
                           a->p[i].value, a->p[i].lo, a->p[i].hi);
  fprintf(out, "  %-12s %-52s %12.2f %7.4f %8.3g%s\n", label, ps->str, a->aic, a->ks.d, a->ks.p,
          best ? "  best" : "");
  g_string_free(ps, TRUE);
}

static void print_est(FILE *out, const AnEstimate *e) {
  fprintf(out, "%10.4g [%.4g, %.4g]", e->value, e->lo, e->hi);
}

static void print_txs(const SimCalib *c, FILE *out) {
  fprintf(out, "\ntransactions: %zu distinct over %.1f s\n", c->n_txs, c->span_s);
  if (c->have_rate) {
    fprintf(out, "  rate per s           ");
    print_est(out, &c->rate_per_s);
    fprintf(out, "   (Poisson)\n");
    if (c->dispersion_windows) {
      fprintf(out, "  overdispersed        ");
      print_est(out, &c->rate_quasi);
      fprintf(out, "   (dispersion index %.3g over %zu windows of 60 s)\n", c->dispersion, c->dispersion_windows);
    }
  }
  fprintf(out, "  %-4s %8s %-34s %10s %10s  %s\n", "type", "n", "share", "gas median", "gas mean",
          "gas limit lognormal");
  for (int t = 0; t < SIM_CALIB_N_TYPES; t++) {
    const SimCalibTxType *ty = &c->types[t];
    g_autofree char *sh = g_strdup_printf("%.4f [%.4f, %.4f]", ty->share.value, ty->share.lo, ty->share.hi);
    fprintf(out, "  %-4s %8" G_GUINT64_FORMAT " %-34s %10.6g %10.6g  ", type_names[t], ty->n, sh, ty->median,
            ty->mean);
    if (ty->lognormal.ok)
      fprintf(out, "median %.6g, sigma %.4g (KS D %.3f)\n", exp(ty->lognormal.fit.p[0].value),
              ty->lognormal.fit.p[1].value, ty->lognormal.fit.ks.d);
    else
      fprintf(out, "(%s)\n", ty->lognormal.error ? ty->lognormal.error : "no fit");
  }
  fprintf(out, "  %-10s %8s %s\n", "price gwei", "n", "share");
  for (int k = 0; k < SIM_CALIB_N_PRICE_CLASSES; k++)
    fprintf(out, "  %-10s %8" G_GUINT64_FORMAT " %.4f [%.4f, %.4f]\n", class_labels[k], c->price_count[k],
            c->price_share[k].value, c->price_share[k].lo, c->price_share[k].hi);
  if (c->price_lognormal.ok)
    fprintf(out, "  positive prices: lognormal median %.4g gwei, sigma %.4g (KS D %.3f)\n",
            exp(c->price_lognormal.fit.p[0].value), c->price_lognormal.fit.p[1].value,
            c->price_lognormal.fit.ks.d);
}

static void print_delays(FILE *out, const char *what, uint64_t seen, const SimCalibDelay *ds, guint n);

void sim_calib_print(const SimCalib *c, FILE *out) {
  g_return_if_fail(c != NULL);
  fprintf(out, "block intervals: %zu main-chain header-time differences (%zu zero, %zu negative dropped)\n",
          c->n_intervals, c->zero_intervals, c->negative_intervals);
  if (c->have_mean) {
    fprintf(out, "  mean interval s      ");
    print_est(out, &c->mean_interval_s);
    fprintf(out, "\n  target_interval_s    ");
    print_est(out, &c->target_interval_s);
    fprintf(out, "   (x main/all blocks %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT ")\n", c->main_blocks,
            c->all_blocks);
  }
  fprintf(out, "  %-12s %-52s %12s %7s %8s\n", "family", "parameters (positive differences)", "AIC", "KS D",
          "KS p");
  for (int f = 0; f < 3; f++)
    print_fit_row(out, interval_families[f], &c->interval_fits[f], f == c->interval_best);

  fprintf(out, "\npools (%g%% intervals; %" G_GUINT64_FORMAT " main blocks, %" G_GUINT64_FORMAT " blocks)\n",
          100 * c->level, c->pools_main_total, c->pools_blocks_total);
  fprintf(out, "  %-20s %6s %-34s %6s %6s %-34s %10s\n", "pool", "main", "main share", "blocks", "empty",
          "empty share", "window ms");
  for (guint i = 0; i < c->n_pools; i++) {
    const SimCalibPool *p = &c->pools[i];
    fprintf(out, "  %-20s %6" G_GUINT64_FORMAT " ", p->name, p->main_blocks);
    g_autofree char *ms =
        g_strdup_printf("%.4f [%.4f, %.4f]", p->main_share.value, p->main_share.lo, p->main_share.hi);
    g_autofree char *es =
        g_strdup_printf("%.4f [%.4f, %.4f]", p->empty_share.value, p->empty_share.lo, p->empty_share.hi);
    fprintf(out, "%-34s %6" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT " %-34s %10.1f\n", ms, p->blocks,
            p->empty, es, p->empty_window_ms);
  }

  if (c->n_txs == 0) {
    fprintf(out, "\ntransactions: none logged\n");
  } else {
    print_txs(c, out);
  }
  fprintf(out, "\nwork distribution and empty templates (all pools)\n");
  if (c->have_empty_window) {
    fprintf(out, "  empty window ms      ");
    print_est(out, &c->empty_window_ms);
    fprintf(out, "   (%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " empty blocks)\n", c->empty_total,
            c->pools_blocks_total);
  }
  if (c->have_work_delay) {
    fprintf(out, "  work delay mean ms   ");
    print_est(out, &c->work_delay_mean_ms);
    fprintf(out, "   (%" G_GUINT64_FORMAT " one-miner forks, %.4g expected per s of delay)\n", c->one_miner_forks,
            c->work_exposure_per_s);
  }
  if (c->n_vantages == 0) {
    fprintf(out, "\nvantage delays: one vantage point (the delays need two or more)\n");
    return;
  }
  print_delays(out, "blocks", c->blocks_seen_by_all, c->delays, c->n_vantages);
  print_delays(out, "transactions", c->txs_seen_by_all, c->tx_delays, c->n_vantages);
}

static void print_delays(FILE *out, const char *what, uint64_t seen, const SimCalibDelay *ds, guint n) {
  fprintf(out,
          "\n%s: delay after first observation, ms (%" G_GUINT64_FORMAT
          " seen by all; first observer left out)\n",
          what, seen);
  for (guint v = 0; v < n; v++) {
    const SimCalibDelay *d = &ds[v];
    fprintf(out, "  %s: n %zu (%zu zero), median %.1f, mean %.1f, p90 %.1f, p99 %.1f\n", d->name, d->n,
            d->zeros, d->median, d->mean, d->p90, d->p99);
    print_fit_row(out, "lognormal", &d->lognormal, d->best && strcmp(d->best, "lognormal") == 0);
    print_fit_row(out, "gamma", &d->gamma, d->best && strcmp(d->best, "gamma") == 0);
    const SimCalibHistogram *h = &d->empirical;
    if (h->ok) {
      g_autofree char *ps = g_strdup_printf("%u bins of %.4g from %.4g", h->bins, h->width, h->lo);
      fprintf(out, "  %-12s %-52s %12.2f %7.4f %8.3g%s\n", "empirical", ps, h->aic, h->ks.d, h->ks.p,
              d->best && strcmp(d->best, "empirical") == 0 ? "  best" : "");
    } else {
      fprintf(out, "  %-12s (%s)\n", "empirical", h->error);
    }
  }
}

