/* calibrate_net.c: the simulation-based fit of the geo network's latency scale to measured vantage delays
 * (see calibrate_net.h): runs, their logs read back, the moment, the grid and its refinement, the interval,
 * the goodness of fit, and the fit as JSON and as a table. */
#include "calibrate_net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gsl/gsl_cdf.h>

#include "net.h"
#include "outfile.h"
#include "rng.h"
#include "run.h"
#include "scenario.h"

/* The bootstrap's stream (the runs use streams of their own seeds). */
#define NETFIT_BOOT_STREAM UINT64_C(0x6e657466)
/* Fewer measured blocks seen by every vantage point than this and the median means little. */
#define NETFIT_MIN_ROWS 10

typedef struct {
  const SimNetFitOptions *opt;
  guint nv;
  const char *const *log_names;
  char **sc_names; /* the scenario's vantage names */
  gboolean want_txs;
  guint runs;
  guint total_runs; /* for the progress line: an estimate */
} Ctx;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median_sorted(const double *v, size_t n) {
  if (n == 0) return NAN;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* T of rows pick[0..n-1] (all rows when pick is NULL): the mean over vantage points of each one's median
 * delay (its first observations left out); scratch holds n values. NAN when a vantage point has none. */
static double moment_of(const SimCalibDelayRows *r, const size_t *pick, size_t n, double *scratch) {
  double sum = 0;
  for (guint v = 0; v < r->n_vantages; v++) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      double d = r->ms[(pick ? pick[i] : i) * r->n_vantages + v];
      if (!isnan(d)) scratch[k++] = d;
    }
    if (k == 0) return NAN;
    qsort(scratch, k, sizeof *scratch, cmp_double);
    sum += median_sorted(scratch, k);
  }
  return sum / r->n_vantages;
}

/* T of the rows and its bootstrap variance (resampling rows), from the stream (seed, stream). */
static void moment(const SimCalibDelayRows *r, uint64_t seed, uint64_t stream, double *t, double *boot_var) {
  size_t n = r->n_rows;
  g_autofree double *scratch = g_new(double, MAX(n, 1));
  g_autofree size_t *pick = g_new(size_t, MAX(n, 1));
  *t = moment_of(r, NULL, n, scratch);
  if (n < 2) {
    *boot_var = NAN;
    return;
  }
  SimRng rng;
  sim_rng_init(&rng, seed, stream);
  double sum = 0, sum2 = 0;
  guint used = 0; /* a resample where a vantage point is always first has no T: left out */
  for (guint b = 0; b < SIM_NETFIT_BOOTSTRAP; b++) {
    for (size_t i = 0; i < n; i++)
      pick[i] = (size_t)sim_rng_below(&rng, n);
    double x = moment_of(r, pick, n, scratch);
    if (isnan(x)) continue;
    sum += x;
    sum2 += x * x;
    used++;
  }
  double m = used ? sum / used : NAN;
  *boot_var = used > 1 ? MAX(0.0, (sum2 - used * m * m) / (used - 1)) : NAN;
}

static char *fmt_scale(double s) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.17g", s));
}

/* Loads the scenario with the fit's heights, `seed` and `scale` (NAN: the scenario's own). */
static SimScenario *load_scenario(const SimNetFitOptions *opt, uint64_t seed, double scale, GError **error) {
  g_autofree char *h = g_strdup_printf("stop.heights=%u", opt->heights);
  g_autofree char *sd = g_strdup_printf("seed=%" G_GUINT64_FORMAT, seed);
  g_autofree char *sv = isnan(scale) ? NULL : fmt_scale(scale);
  g_autofree char *sc_set = sv ? g_strdup_printf("network.latency_scale=%s", sv) : NULL;
  const char *sets[] = {h, sd, sc_set, NULL};
  g_autoptr(SimDiag) diag = sim_diag_new(opt->scenario);
  SimScenario *sc = sim_scenario_load_file(opt->scenario, sets, diag);
  if (!sc) {
    g_autofree char *msgs = sim_diag_join(diag);
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, "--fit-network: %s", msgs);
  }
  return sc;
}

static void progress(Ctx *c, double scale, guint seed_i) {
  if (!c->opt->progress || !isatty(STDERR_FILENO)) return;
  fprintf(stderr, "\r\033[Kfit-network: run %u of about %u (scale %.4g, seed %u of %u)", c->runs + 1,
          c->total_runs, scale, seed_i + 1, c->opt->seeds);
  fflush(stderr);
}

/* One run at `scale` with seed opt->seed + k: its logs read back into delay rows (blocks; transactions too
 * when c->want_txs). */
static gboolean simulate(Ctx *c, double scale, guint k, SimCalibDelayRows *blocks, SimCalibDelayRows *txs,
                         GError **error) {
  const SimNetFitOptions *opt = c->opt;
  if (opt->cancel && *opt->cancel) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED, "--fit-network: interrupted; no output written");
    return FALSE;
  }
  progress(c, scale, k);
  g_autoptr(SimScenario) sc = load_scenario(opt, opt->seed + k, scale, error);
  if (!sc) return FALSE;
  g_autoptr(GError) e = NULL;
  g_autofree char *tmp = g_dir_make_tmp("sim-netfit-XXXXXX", &e);
  if (!tmp) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, "--fit-network: %s", e->message);
    return FALSE;
  }
  g_autofree char *out = g_build_filename(tmp, "run", NULL);
  char *argv[] = {"sim", "calibrate", "--fit-network", (char *)opt->scenario, NULL};
  SimRunOptions ro = {.out_dir = out, .argc = 4, .argv = argv, .emc_logs = TRUE, .threads = 0, .cancel = opt->cancel};
  gboolean ok = sim_run(sc, &ro, NULL, &e);
  if (!ok && g_error_matches(e, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED, "--fit-network: interrupted; no output written");
  } else if (!ok) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME,
                "--fit-network: run at scale %g, seed %" G_GUINT64_FORMAT ": %s", scale, opt->seed + k,
                e->message);
  } else {
    g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
    for (guint v = 0; v < c->nv; v++)
      g_ptr_array_add(dirs, g_build_filename(out, "emc", c->sc_names[v], NULL));
    SimReplayOptions rop = {.dirs = (const char *const *)dirs->pdata,
                            .names = c->log_names,
                            .n_vantages = c->nv,
                            .block_reward_eth = 2.0,
                            .skip_txs = !c->want_txs};
    g_autoptr(SimReplayData) data = sim_replay_load(&rop, &e);
    if (!data) {
      g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME,
                  "--fit-network: reading the run's logs: %s", e->message);
      ok = FALSE;
    } else {
      sim_calib_delay_rows(data, FALSE, blocks);
      if (txs) sim_calib_delay_rows(data, TRUE, txs);
    }
  }
  sim_output_remove_tree(tmp);
  c->runs++;
  return ok;
}

static void point_clear(SimNetFitPoint *p) {
  g_free(p->t);
  g_free(p->boot_var);
  g_free(p->rows);
}

/* Evaluates m at `scale`: K runs. */
static gboolean eval_point(Ctx *c, double scale, SimNetFitPoint *p, GError **error) {
  guint K = c->opt->seeds;
  memset(p, 0, sizeof *p);
  p->scale = scale;
  p->t = g_new(double, K);
  p->boot_var = g_new(double, K);
  p->rows = g_new(size_t, K);
  double sum = 0, sum2 = 0;
  for (guint k = 0; k < K; k++) {
    SimCalibDelayRows r;
    if (!simulate(c, scale, k, &r, NULL, error)) return FALSE;
    p->rows[k] = r.n_rows;
    if (r.n_rows < 2) {
      sim_calib_delay_rows_clear(&r);
      g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
                  "--fit-network: the run at scale %g, seed %" G_GUINT64_FORMAT
                  " has %zu blocks that every vantage point saw (at least 2 needed: more --fit-heights?)",
                  scale, c->opt->seed + k, r.n_rows);
      return FALSE;
    }
    moment(&r, c->opt->seed + k, NETFIT_BOOT_STREAM, &p->t[k], &p->boot_var[k]);
    sim_calib_delay_rows_clear(&r);
    sum += p->t[k];
    sum2 += p->t[k] * p->t[k];
  }
  p->mean = sum / K;
  p->sd = sqrt(MAX(0.0, (sum2 - K * p->mean * p->mean) / (K - 1)));
  return TRUE;
}

static int cmp_point(const void *a, const void *b) {
  return cmp_double(&((const SimNetFitPoint *)a)->scale, &((const SimNetFitPoint *)b)->scale);
}

/* The scale where the mean curve through (points[j].scale, points[j].mean) takes `y`: the rising segment
 * holding y nearest to `near` (NAN: the first one); below (above) every point, the first (last) rising
 * segment extended, *beyond set, the result at least 0. NAN when no segment fits. */
static double curve_inverse(const SimNetFitPoint *pt, guint n, double y, double near, gboolean *beyond) {
  double best = NAN;
  *beyond = FALSE;
  for (guint j = 0; j + 1 < n; j++) {
    double y0 = pt[j].mean, y1 = pt[j + 1].mean;
    if (!(y1 > y0) || y < y0 || y > y1) continue;
    double s = pt[j].scale + (y - y0) / (y1 - y0) * (pt[j + 1].scale - pt[j].scale);
    if (isnan(best) || (!isnan(near) && fabs(s - near) < fabs(best - near))) best = s;
    if (isnan(near)) break;
  }
  gboolean below = y<pt[0].mean, above = y> pt[n - 1].mean;
  if (!isnan(best) || (!below && !above)) return best;
  for (guint i = 0; i + 1 < n; i++) {
    guint j = below ? i : n - 2 - i;
    double y0 = pt[j].mean, y1 = pt[j + 1].mean;
    if (!(y1 > y0)) continue;
    *beyond = TRUE;
    double s = pt[j].scale + (y - y0) / (y1 - y0) * (pt[j + 1].scale - pt[j].scale);
    return MAX(s, 0.0);
  }
  return NAN;
}

/* Seed k's T at scale s (its curve through the evaluated scales, linear between them). */
static double seed_at(const SimNetFitPoint *pt, guint n, guint k, double s) {
  guint j = 0;
  while (j + 2 < n && pt[j + 1].scale < s)
    j++;
  double w = (s - pt[j].scale) / (pt[j + 1].scale - pt[j].scale);
  return pt[j].t[k] + w * (pt[j + 1].t[k] - pt[j].t[k]);
}

static void gof_clear(SimNetFitGof *g, guint n) {
  for (guint v = 0; g && v < n; v++)
    g_free(g[v].name);
  g_free(g);
}

void sim_netfit_free(SimNetFit *f) {
  if (!f) return;
  g_strfreev(f->vantage_names);
  g_strfreev(f->scenario_vantages);
  for (guint i = 0; i < f->n_points; i++)
    point_clear(&f->points[i]);
  g_free(f->points);
  gof_clear(f->blocks, f->n_vantages);
  gof_clear(f->txs, f->n_vantages);
  g_free(f);
}

/* Column v of the rows (non-NAN), appended to `out`. */
static void column(const SimCalibDelayRows *r, guint v, GArray *out) {
  for (size_t i = 0; i < r->n_rows; i++) {
    double d = r->ms[i * r->n_vantages + v];
    if (!isnan(d)) g_array_append_val(out, d);
  }
}

/* Per vantage point: measured against the simulated rows of every seed. */
static SimNetFitGof *gof(const SimCalibDelayRows *measured, const SimCalibDelayRows *sim, guint K, guint nv,
                         const char *const *names) {
  SimNetFitGof *g = g_new0(SimNetFitGof, nv);
  for (guint v = 0; v < nv; v++) {
    g_autoptr(GArray) a = g_array_new(FALSE, FALSE, sizeof(double));
    g_autoptr(GArray) b = g_array_new(FALSE, FALSE, sizeof(double));
    column(measured, v, a);
    for (guint k = 0; k < K; k++)
      column(&sim[k], v, b);
    g_array_sort(a, cmp_double);
    g_array_sort(b, cmp_double);
    g[v].name = g_strdup(names[v]);
    g[v].n_measured = a->len;
    g[v].n_simulated = b->len;
    g[v].median_measured = median_sorted((const double *)(void *)a->data, a->len);
    g[v].median_simulated = median_sorted((const double *)(void *)b->data, b->len);
    if (a->len && b->len)
      g[v].ks =
          an_ks_two_sample((const double *)(void *)a->data, a->len, (const double *)(void *)b->data, b->len);
    else
      g[v].ks = (AnKs){NAN, NAN};
  }
  return g;
}

/* Checks the scenario against the logs and fills the context's names. */
static gboolean check_scenario(Ctx *c, SimNetFit *f, GError **error) {
  const SimNetFitOptions *opt = c->opt;
  g_autoptr(SimScenario) sc = load_scenario(opt, opt->seed, NAN, error);
  if (!sc) return FALSE;
  const SimModelInfo *m = sc->pow.network.model;
  if (!m || strcmp(m->name, "geo") != 0) {
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: %s: $.network.model: the fit needs a geo network (its latency_scale); got \"%s\"",
        opt->scenario, m ? m->name : "none");
    return FALSE;
  }
  const NetGeoParams *gp = sc->pow.network.params;
  if (gp->n_vantages == 0) {
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: %s: $.network.vantage_points: the fit needs the scenario's vantage points to stand "
        "for the logs' (none given)",
        opt->scenario);
    return FALSE;
  }
  if (gp->n_vantages != c->nv) {
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: %s: $.network.vantage_points: %u vantage points, but %u log directories were given "
        "(the scenario's stand for the logs' in order: give as many)",
        opt->scenario, gp->n_vantages, c->nv);
    return FALSE;
  }
  /* By name when the logs carry the scenario's names (a run's emc/<V> directories, in any order), else in
   * order. Distinct log names (sim_replay_load checks them) make the map one to one. */
  gboolean by_name = TRUE;
  for (guint v = 0; v < c->nv && by_name; v++) {
    by_name = FALSE;
    for (guint w = 0; w < c->nv; w++)
      by_name = by_name || strcmp(c->log_names[v], gp->specials[w].name) == 0;
  }
  c->sc_names = g_new0(char *, c->nv + 1);
  for (guint v = 0; v < c->nv; v++)
    c->sc_names[v] = g_strdup(by_name ? c->log_names[v] : gp->specials[v].name);
  f->scenario_vantages = g_strdupv(c->sc_names);
  c->want_txs = c->want_txs && sc->has_tx;
  return TRUE;
}

SimNetFit *sim_netfit_run(const SimReplayData *data, const SimNetFitOptions *opt, GError **error) {
  g_return_val_if_fail(data != NULL && opt != NULL && opt->scenario != NULL, NULL);
  g_return_val_if_fail(opt->seeds >= 2 && opt->grid >= 3 && opt->heights >= 1, NULL);
  g_return_val_if_fail(opt->scale_lo > 0 && opt->scale_hi > opt->scale_lo, NULL);
  guint nv = sim_replay_data_n_vantages(data);
  if (nv < 2) {
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: the logs have %u vantage point%s; delays between vantage points need two or more", nv,
        nv == 1 ? "" : "s");
    return NULL;
  }
  g_autoptr(SimNetFit) f = g_new0(SimNetFit, 1);
  f->level = opt->level;
  f->seeds = opt->seeds;
  f->heights = opt->heights;
  f->seed = opt->seed;
  f->n_vantages = nv;
  f->vantage_names = g_strdupv((char **)sim_replay_data_vantage_names(data));
  f->estimate = f->lo = f->hi = NAN;

  /* The measured moment. */
  SimCalibDelayRows mb, mt;
  sim_calib_delay_rows(data, FALSE, &mb);
  sim_calib_delay_rows(data, TRUE, &mt);
  f->measured_rows = mb.n_rows;
  f->measured_tx_rows = mt.n_rows;
  Ctx c = {.opt = opt, .nv = nv, .log_names = sim_replay_data_vantage_names(data), .want_txs = mt.n_rows > 0};
  gboolean ok = TRUE;
  if (mb.n_rows < NETFIT_MIN_ROWS) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
                "--fit-network: the logs have %zu blocks that every vantage point saw (at least %d needed)",
                mb.n_rows, NETFIT_MIN_ROWS);
    ok = FALSE;
  }
  ok = ok && check_scenario(&c, f, error);
  if (ok) {
    double var;
    moment(&mb, opt->seed, NETFIT_BOOT_STREAM, &f->t_obs, &var);
    f->se_obs = sqrt(var);
    if (isnan(f->t_obs) || isnan(var)) {
      g_set_error(
          error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
          "--fit-network: a vantage point of the logs was the first observer of every block seen by all (no "
          "delay to match)");
      ok = FALSE;
    }
  }
  c.total_runs = (opt->grid + opt->refine + 1) * opt->seeds;

  /* The grid, geometric. */
  GArray *pts = g_array_new(FALSE, TRUE, sizeof(SimNetFitPoint));
  for (guint i = 0; ok && i < opt->grid; i++) {
    double s = opt->scale_lo * pow(opt->scale_hi / opt->scale_lo, (double)i / (opt->grid - 1));
    if (i == opt->grid - 1) s = opt->scale_hi;
    SimNetFitPoint p;
    ok = eval_point(&c, s, &p, error);
    g_array_append_val(pts, p); /* cleared with the others, also on failure */
  }
  const SimNetFitPoint *P = (const SimNetFitPoint *)(void *)pts->data;
  if (ok && !(P[pts->len - 1].mean > P[0].mean)) {
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: the simulated median delays do not rise with the scale (%.1f ms at %g, %.1f ms "
        "at %g): the scenario's delays are not driven by its link latencies",
        P[0].mean, P[0].scale, P[pts->len - 1].mean, P[pts->len - 1].scale);
    ok = FALSE;
  }
  if (ok && (f->t_obs < P[0].mean || f->t_obs > P[pts->len - 1].mean)) {
    gboolean low = f->t_obs < P[0].mean;
    g_set_error(
        error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
        "--fit-network: scale bound hit: the measured mean of the vantage points' median delays, %.1f ms, is "
        "%s every simulated one (%.1f ms at scale %g); %s --scale-range",
        f->t_obs, low ? "below" : "above", low ? P[0].mean : P[pts->len - 1].mean,
        low ? P[0].scale : P[pts->len - 1].scale, low ? "lower the bottom of" : "raise the top of");
    ok = FALSE;
  }
  /* The bracket, halved in log scale. */
  double slope = NAN;
  for (guint r = 0; ok && r <= opt->refine; r++) {
    P = (const SimNetFitPoint *)(void *)pts->data;
    guint j = 0;
    gboolean found = FALSE;
    for (guint i = 0; i + 1 < pts->len && !found; i++)
      if (P[i + 1].mean > P[i].mean && P[i].mean <= f->t_obs && f->t_obs <= P[i + 1].mean) {
        j = i;
        found = TRUE;
      }
    if (!found) {
      g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT,
                  "--fit-network: no rising stretch of the simulated curve holds the measured %.1f ms",
                  f->t_obs);
      ok = FALSE;
      break;
    }
    if (r == 0) slope = (P[j + 1].mean - P[j].mean) / (P[j + 1].scale - P[j].scale);
    if (r == opt->refine) break;
    SimNetFitPoint p;
    ok = eval_point(&c, sqrt(P[j].scale * P[j + 1].scale), &p, error);
    g_array_append_val(pts, p);
    g_array_sort(pts, cmp_point);
  }
  f->n_points = pts->len;
  f->points = (SimNetFitPoint *)(void *)g_array_free(pts, FALSE);
  if (ok) {
    guint n = f->n_points, K = opt->seeds;
    const SimNetFitPoint *pt = f->points;
    gboolean inside_only; /* T_obs lies between m's ends (checked above): never extrapolated */
    f->estimate = curve_inverse(pt, n, f->t_obs, NAN, &inside_only);
    f->slope = slope;
    /* S² at ŝ from the seeds' own curves; τ² from the seeds' bootstrap variances at the nearest point. */
    double sum = 0, sum2 = 0, bv = 0;
    guint near = 0;
    for (guint i = 0; i < n; i++)
      if (fabs(log(pt[i].scale / f->estimate)) < fabs(log(pt[near].scale / f->estimate))) near = i;
    for (guint k = 0; k < K; k++) {
      double y = seed_at(pt, n, k, f->estimate);
      sum += y;
      sum2 += y * y;
      bv += pt[near].boot_var[k] / K;
    }
    double mean = sum / K;
    f->sim_var = MAX(0.0, (sum2 - K * mean * mean) / (K - 1));
    f->topo_var = MAX(0.0, f->sim_var - bv);
    f->se_t = sqrt(f->se_obs * f->se_obs + f->topo_var + f->sim_var / K);
    double z = gsl_cdf_ugaussian_Pinv(1 - (1 - opt->level) / 2);
    f->lo = curve_inverse(pt, n, f->t_obs - z * f->se_t, f->estimate, &f->lo_extrapolated);
    f->hi = curve_inverse(pt, n, f->t_obs + z * f->se_t, f->estimate, &f->hi_extrapolated);
  }
  /* Goodness of fit at ŝ. */
  if (ok) {
    guint K = opt->seeds;
    SimCalibDelayRows *sb = g_new0(SimCalibDelayRows, K), *st = g_new0(SimCalibDelayRows, K);
    for (guint k = 0; ok && k < K; k++)
      ok = simulate(&c, f->estimate, k, &sb[k], c.want_txs ? &st[k] : NULL, error);
    if (ok) {
      f->blocks = gof(&mb, sb, K, nv, (const char *const *)f->vantage_names);
      for (guint k = 0; k < K; k++)
        f->simulated_tx_rows += st[k].n_rows;
      if (c.want_txs && f->simulated_tx_rows > 0)
        f->txs = gof(&mt, st, K, nv, (const char *const *)f->vantage_names);
    }
    for (guint k = 0; k < K; k++) {
      sim_calib_delay_rows_clear(&sb[k]);
      sim_calib_delay_rows_clear(&st[k]);
    }
    g_free(sb);
    g_free(st);
  }
  if (opt->progress && isatty(STDERR_FILENO) && c.runs > 0) fprintf(stderr, "\r\033[K");
  f->runs = c.runs;
  g_strfreev(c.sc_names);
  sim_calib_delay_rows_clear(&mb);
  sim_calib_delay_rows_clear(&mt);
  return ok ? g_steal_pointer(&f) : NULL;
}

/* ---- Output ----------------------------------------------------------------------------------------- */

static json_t *num(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *gof_json(const SimNetFitGof *g, guint n) {
  json_t *a = json_array();
  for (guint v = 0; v < n; v++)
    json_array_append_new(
        a, json_pack("{s:s, s:I, s:I, s:o, s:o, s:{s:o, s:o}}", "name", g[v].name, "n_measured",
                     (json_int_t)g[v].n_measured, "n_simulated", (json_int_t)g[v].n_simulated,
                     "median_measured_ms", num(g[v].median_measured), "median_simulated_ms",
                     num(g[v].median_simulated), "ks", "d", num(g[v].ks.d), "p", num(g[v].ks.p)));
  return a;
}

json_t *sim_netfit_json(const SimNetFit *f) {
  g_return_val_if_fail(f != NULL, NULL);
  json_t *o = json_object();
  json_object_set_new(o, "parameter", json_string("network.latency_scale"));
  json_object_set_new(o, "moment",
                      json_string("mean over vantage points of each one's median block delay after "
                                  "the first observation (first observers left out)"));
  json_object_set_new(o, "level", json_real(f->level));
  json_object_set_new(o, "seeds", json_integer(f->seeds));
  json_object_set_new(o, "first_seed", json_integer((json_int_t)f->seed));
  json_object_set_new(o, "heights", json_integer(f->heights));
  json_object_set_new(o, "runs", json_integer(f->runs));
  json_t *vp = json_array();
  for (guint v = 0; v < f->n_vantages; v++)
    json_array_append_new(vp, json_pack("{s:s, s:s}", "log", f->vantage_names[v], "scenario",
                                        f->scenario_vantages ? f->scenario_vantages[v] : ""));
  json_object_set_new(o, "vantage_points", vp);
  json_object_set_new(o, "measured",
                      json_pack("{s:I, s:o, s:o}", "blocks_seen_by_all", (json_int_t)f->measured_rows,
                                "median_ms", num(f->t_obs), "se_ms", num(f->se_obs)));
  json_object_set_new(o, "latency_scale",
                      json_pack("{s:o, s:o, s:o, s:b, s:b}", "value", num(f->estimate), "lo", num(f->lo),
                                "hi", num(f->hi), "lo_extrapolated", f->lo_extrapolated, "hi_extrapolated",
                                f->hi_extrapolated));
  json_object_set_new(o, "error_ms",
                      json_pack("{s:o, s:o, s:o, s:o}", "measured_se", num(f->se_obs), "between_seeds_var",
                                num(f->sim_var), "topology_var", num(f->topo_var), "total_se", num(f->se_t)));
  json_object_set_new(o, "slope_ms_per_scale", num(f->slope));
  json_t *pts = json_array();
  for (guint i = 0; i < f->n_points; i++) {
    const SimNetFitPoint *p = &f->points[i];
    json_t *t = json_array(), *rows = json_array();
    for (guint k = 0; k < f->seeds; k++) {
      json_array_append_new(t, num(p->t[k]));
      json_array_append_new(rows, json_integer((json_int_t)p->rows[k]));
    }
    json_array_append_new(pts, json_pack("{s:o, s:o, s:o, s:o, s:o}", "scale", num(p->scale), "median_ms",
                                         num(p->mean), "sd_ms", num(p->sd), "by_seed_ms", t,
                                         "blocks_seen_by_all", rows));
  }
  json_object_set_new(o, "curve", pts);
  if (f->blocks) json_object_set_new(o, "gof_blocks", gof_json(f->blocks, f->n_vantages));
  json_object_set_new(o, "tx_rows",
                      json_pack("{s:I, s:I}", "measured", (json_int_t)f->measured_tx_rows, "simulated",
                                (json_int_t)f->simulated_tx_rows));
  if (f->txs) json_object_set_new(o, "gof_txs", gof_json(f->txs, f->n_vantages));
  return o;
}

char *sim_netfit_comment(const SimNetFit *f) {
  double dmin = 1, dmax = 0;
  for (guint v = 0; f->blocks && v < f->n_vantages; v++) {
    dmin = MIN(dmin, f->blocks[v].ks.d);
    dmax = MAX(dmax, f->blocks[v].ks.d);
  }
  return g_strdup_printf(
      "network.latency_scale: %.4g [%g%%: %.4g%s, %.4g%s] by simulated moments: the mean over "
      "vantage points of their median block delays after the first observation, measured %.1f ms (se %.1f, "
      "%zu blocks), matched "
      "by %u runs of %u heights over %u seeds; KS D per vantage point at the fit %.3f..%.3f",
      f->estimate, 100 * f->level, f->lo, f->lo_extrapolated ? " (extrapolated)" : "", f->hi,
      f->hi_extrapolated ? " (extrapolated)" : "", f->t_obs, f->se_obs, f->measured_rows, f->runs, f->heights,
      f->seeds, dmin, dmax);
}

static void print_gof(FILE *out, const char *what, const SimNetFitGof *g, guint n) {
  fprintf(out, "  %s at the fitted scale:\n  %-12s %8s %8s %12s %12s %7s %9s\n", what, "vantage", "n meas",
          "n sim", "median meas", "median sim", "KS D", "KS p");
  for (guint v = 0; v < n; v++)
    fprintf(out, "  %-12s %8zu %8zu %12.1f %12.1f %7.4f %9.3g\n", g[v].name, g[v].n_measured,
            g[v].n_simulated, g[v].median_measured, g[v].median_simulated, g[v].ks.d, g[v].ks.p);
}

void sim_netfit_print(const SimNetFit *f, FILE *out) {
  g_return_if_fail(f != NULL);
  fprintf(out,
          "\nnetwork fit (network.latency_scale by simulated moments; %u seeds from %" G_GUINT64_FORMAT
          ", %u heights, %u runs)\n",
          f->seeds, f->seed, f->heights, f->runs);
  fprintf(out,
          "  measured: mean of the vantage points' median delays %.1f ms (bootstrap se %.2f) over %zu blocks "
          "seen by all\n",
          f->t_obs, f->se_obs, f->measured_rows);
  fprintf(out, "  %-10s %14s %10s\n", "scale", "median ms", "sd ms");
  for (guint i = 0; i < f->n_points; i++)
    fprintf(out, "  %-10.4g %14.2f %10.2f\n", f->points[i].scale, f->points[i].mean, f->points[i].sd);
  fprintf(
      out,
      "  latency_scale        %.4g [%.4g%s, %.4g%s]  (%g%%; se of the moment %.2f ms: measured %.2f, layout "
      "%.2f, seeds %.2f; slope %.1f ms per unit)\n",
      f->estimate, f->lo, f->lo_extrapolated ? " extrapolated" : "", f->hi,
      f->hi_extrapolated ? " extrapolated" : "", 100 * f->level, f->se_t, f->se_obs, sqrt(f->topo_var),
      sqrt(f->sim_var / f->seeds), f->slope);
  if (f->blocks) print_gof(out, "blocks", f->blocks, f->n_vantages);
  if (f->txs)
    print_gof(out, "transactions (report only)", f->txs, f->n_vantages);
  else
    fprintf(out, "  transactions: %zu measured and %zu simulated seen by all (no comparison without both)\n",
            f->measured_tx_rows, f->simulated_tx_rows);
}
