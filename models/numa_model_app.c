/* numa_model_app.c: the loaded-latency application model with memory-level parallelism ("mlp"), BWAP's
 * one-scalar on-line tuner and the offline hill-climbing oracle. */
#include "numa_model.h"

#include <math.h>
#include <string.h>

#include "numa_model-private.h"

/* ======================================================================================================
 * The application model
 * ====================================================================================================== */

static const SimParamSpec app_mlp_params[] = {
    {.name = "mlp",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 1000,
     .def = 10,
     .offset = offsetof(NumaModelAppParams, mlp),
     .help =
         "misses a thread keeps in flight when streaming (an Intel core's L1 tracks about 10-12; hardware "
         "prefetchers raise the effective figure)"},
    {.name = "latency_sensitivity",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0,
     .offset = offsetof(NumaModelAppParams, latency_sensitivity),
     .help =
         "share of misses that are dependent loads (pointer chasing), each waiting a full loaded latency"},
    {.name = "threads_per_cpu",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 16,
     .min_open = TRUE,
     .def = 1,
     .offset = offsetof(NumaModelAppParams, threads_per_cpu),
     .help = "application threads per CPU of a worker node"},
    {.name = "line_bytes",
     .type = SIM_PARAM_INT,
     .unit = "bytes",
     .min = 8,
     .max = 4096,
     .def = 64,
     .offset = offsetof(NumaModelAppParams, line_bytes),
     .help = "bytes per miss"},
    {.name = "util_flat",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.4,
     .offset = offsetof(NumaModelAppParams, util_flat),
     .help = "utilisation up to which latency stays idle"},
    {.name = "util_linear",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.8,
     .offset = offsetof(NumaModelAppParams, util_linear),
     .help = "utilisation up to which latency rises linearly (steeper beyond)"},
    {.name = "latency_factor_linear",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 100,
     .def = 1.3,
     .offset = offsetof(NumaModelAppParams, latency_factor_linear),
     .help = "loaded / idle latency at util_linear"},
    {.name = "latency_factor_saturated",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 100,
     .def = 2.0,
     .offset = offsetof(NumaModelAppParams, latency_factor_saturated),
     .help = "loaded / idle latency at saturation (utilisation 1)"},
};

static void app_mlp_check(const void *params, SimDiag *diag, const char *path) {
  const NumaModelAppParams *p = params;
  if (!(p->util_flat < p->util_linear && p->util_linear < 1)) {
    g_autofree char *a = sim_fmt_double(p->util_flat), *b = sim_fmt_double(p->util_linear);
    sim_diag_add(diag, path, "need util_flat < util_linear < 1 (got %s and %s)", a, b);
  }
  if (p->latency_factor_linear > p->latency_factor_saturated) {
    g_autofree char *a = sim_fmt_double(p->latency_factor_linear), *b = sim_fmt_double(p->latency_factor_saturated);
    sim_diag_add(diag, path, "latency_factor_linear (%s) must not exceed latency_factor_saturated (%s)", a,
                 b);
  }
}

double numa_model_latency_factor(const NumaModelAppParams *p, double u) {
  g_return_val_if_fail(p != NULL, NAN);
  u = CLAMP(u, 0, 1);
  if (u <= p->util_flat) return 1;
  if (u <= p->util_linear)
    return 1 + (p->latency_factor_linear - 1) * (u - p->util_flat) / (p->util_linear - p->util_flat);
  return p->latency_factor_linear + (p->latency_factor_saturated - p->latency_factor_linear) *
                                        (u - p->util_linear) / (1 - p->util_linear);
}

/* The smallest demand over worker nodes when each worker moves x GB/s with weights w (normalised). */
static double min_demand(const NumaModelAppParams *p, const NumaModelMachine *m, const guint *workers,
                         guint n_workers, const double *w, double x) {
  double eff_mlp = 1.0 / ((1.0 - p->latency_sensitivity) / p->mlp + p->latency_sensitivity);
  double dmin = INFINITY;
  for (guint k = 0; k < n_workers; k++) {
    guint j = workers[k];
    double lat = 0;
    for (guint i = 0; i < m->n; i++) {
      if (w[i] <= 0) continue;
      double u = MAX(n_workers * x * w[i] / m->cap[i], x * w[i] / m->bw[i * m->n + j]);
      lat += w[i] * m->lat[i * m->n + j] * numa_model_latency_factor(p, u);
    }
    double threads = p->threads_per_cpu * m->cpus[j];
    dmin = MIN(dmin, threads * eff_mlp * (double)p->line_bytes / lat); /* bytes per ns = GB/s */
  }
  return dmin;
}

static double app_mlp_throughput(const void *params, const NumaModelMachine *m, const guint *workers,
                                 guint n_workers, const double *w_in) {
  const NumaModelAppParams *p = params;
  double w[SIM_NUMA_MAX_NODES], lim[SIM_NUMA_MAX_NODES];
  g_return_val_if_fail(numa_model_normalise(w_in, m->n, w), NAN);
  numa_model_limits_gbps(m, workers, n_workers, lim);
  double hi = numa_model_per_worker_bound(lim, w, m->n);
  if (min_demand(p, m, workers, n_workers, w, hi) >= hi) return n_workers * hi;
  /* Demand falls as traffic (and so latency) rises: the crossing is unique; bisect for it. */
  double lo = 0;
  for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    if (min_demand(p, m, workers, n_workers, w, mid) >= mid)
      lo = mid;
    else
      hi = mid;
  }
  return n_workers * lo;
}

const NumaModelApp numa_model_app_mlp = {
    .info = {.name = "mlp-latency",
             .family = "numa_app",
             .help =
                 "threads with memory-level parallelism under loaded latency, capped by the bandwidth bound",
             .params = app_mlp_params,
             .n_params = G_N_ELEMENTS(app_mlp_params),
             .params_size = sizeof(NumaModelAppParams),
             .check = app_mlp_check},
    .throughput_gbps = app_mlp_throughput,
};

const SimModelInfo *const numa_model_app_list[] = {&numa_model_app_mlp.info, NULL};

/* ======================================================================================================
 * Tuning
 * ====================================================================================================== */

const SimParamSpec numa_model_tuner_params[] = {
    {.name = "step_share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .min_open = TRUE,
     .def = 0.1,
     .offset = offsetof(NumaModelTunerParams, step_share),
     .help = "tuner: change of the share of pages on worker nodes per step (BWAP: 10 points)"},
    {.name = "stop_worsening",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 0.5,
     .def = 0.001,
     .offset = offsetof(NumaModelTunerParams, stop_worsening),
     .help = "tuner: stop when the objective is this fraction below the best (BWAP: 0.1%)"},
    {.name = "oracle_min_step",
     .type = SIM_PARAM_NUMBER,
     .min = 1e-6,
     .max = 0.1,
     .def = 0.001,
     .offset = offsetof(NumaModelTunerParams, oracle_min_step),
     .help = "oracle: the smallest weight step of the hill climbing"},
};
const guint numa_model_tuner_n_params = G_N_ELEMENTS(numa_model_tuner_params);

/* The start weights with the workers' share moved to `share`, each side keeping its proportions. */
static void weights_at_share(const double *start, guint n, guint64 worker_bits, guint n_workers, double share,
                             double *out) {
  double s_w = 0;
  for (guint i = 0; i < n; i++)
    if (worker_bits & (G_GUINT64_CONSTANT(1) << i)) s_w += start[i];
  double s_n = 1 - s_w;
  for (guint i = 0; i < n; i++) {
    gboolean is_worker = (worker_bits & (G_GUINT64_CONSTANT(1) << i)) != 0;
    if (is_worker)
      out[i] = s_w > 1e-12 ? start[i] * share / s_w : share / n_workers;
    else
      out[i] = s_n > 1e-12 ? start[i] * (1 - share) / s_n : (1 - share) / (n - n_workers);
  }
}

void numa_model_tune_result_clear(NumaModelTuneResult *r) {
  if (!r) return;
  if (r->steps) g_array_unref(r->steps);
  memset(r, 0, sizeof *r);
}

void numa_model_tune(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                     const NumaModelMachine *m, const guint *workers, guint n_workers, const double *start,
                     NumaModelTuneResult *out) {
  g_return_if_fail(app && app_params && tp && m && workers && start && out);
  numa_model_check_workers(m, workers, n_workers);
  memset(out, 0, sizeof *out);
  out->steps = g_array_new(FALSE, FALSE, sizeof(NumaModelTuneStep));
  guint n = m->n;
  guint64 bits = 0;
  for (guint k = 0; k < n_workers; k++)
    bits |= G_GUINT64_CONSTANT(1) << workers[k];
  numa_model_normalise(start, n, out->start_weights);
  double s_w = 0;
  for (guint i = 0; i < n; i++)
    if (bits & (G_GUINT64_CONSTANT(1) << i)) s_w += out->start_weights[i];
  out->start_share = out->share = s_w;
  out->start_gbps = out->gbps = app->throughput_gbps(app_params, m, workers, n_workers, out->start_weights);
  out->evaluations = 1;
  memcpy(out->weights, out->start_weights, n * sizeof(double));
  g_array_append_val(out->steps, ((NumaModelTuneStep){.share = s_w, .throughput_gbps = out->start_gbps}));
  out->tunable = n_workers < n;
  if (!out->tunable) return;

  double w[SIM_NUMA_MAX_NODES];
  for (int dir = 1; dir >= -1; dir -= 2) {
    double cur = s_w;
    gboolean moved = FALSE;
    for (;;) {
      double next = CLAMP(cur + dir * tp->step_share, 0.0, 1.0);
      if (fabs(next - cur) < 1e-12) break;
      weights_at_share(out->start_weights, n, bits, n_workers, next, w);
      double v = app->throughput_gbps(app_params, m, workers, n_workers, w);
      out->evaluations++;
      g_array_append_val(out->steps, ((NumaModelTuneStep){.share = next, .throughput_gbps = v}));
      if (v < out->gbps * (1 - tp->stop_worsening)) break;
      cur = next;
      moved = TRUE;
      if (v > out->gbps) {
        out->gbps = v;
        out->share = next;
        memcpy(out->weights, w, n * sizeof(double));
      }
    }
    /* BWAP moves pages towards the workers; the other way only when that worsened at once. */
    if (moved) break;
  }
}

typedef struct {
  const NumaModelApp *app;
  const void *params;
  const NumaModelMachine *m;
  const guint *workers;
  guint n_workers;
  guint evaluations;
} Objective;

static double objective(Objective *o, const double *w) {
  o->evaluations++;
  return o->app->throughput_gbps(o->params, o->m, o->workers, o->n_workers, w);
}

/* Steepest-ascent hill climbing from w (updated in place); returns the objective there. */
static double climb(Objective *o, double *w, double step, double min_step) {
  guint n = o->m->n;
  double cur = objective(o, w);
  double cand[SIM_NUMA_MAX_NODES], best_w[SIM_NUMA_MAX_NODES];
  while (step >= min_step && o->evaluations < 2000000) {
    double best = cur;
    gboolean found = FALSE;
#define TRY()                                                                                                \
  do {                                                                                                       \
    double v_ = objective(o, cand);                                                                          \
    if (v_ > best) {                                                                                         \
      best = v_;                                                                                             \
      memcpy(best_w, cand, n * sizeof(double));                                                              \
      found = TRUE;                                                                                          \
    }                                                                                                        \
  } while (0)
    for (guint a = 0; a < n; a++) {
      if (w[a] <= 0) continue;
      double t = MIN(step, w[a]);
      for (guint b = 0; b < n; b++) { /* a step from a to b */
        if (b == a) continue;
        memcpy(cand, w, n * sizeof(double));
        cand[a] -= t;
        cand[b] += t;
        TRY();
      }
      /* a step from a to all others in proportion (evenly when they hold nothing) */
      double others = 1 - w[a];
      if (n > 1) {
        for (guint k = 0; k < n; k++)
          cand[k] = k == a ? w[a] - t : w[k] + t * (others > 1e-12 ? w[k] / others : 1.0 / (n - 1));
        TRY();
      }
    }
    for (guint b = 0; b < n; b++) { /* a step from all others to b, in proportion */
      if (w[b] >= 1) continue;
      for (guint k = 0; k < n; k++)
        cand[k] = (1 - step) * w[k] + (k == b ? step : 0);
      TRY();
    }
#undef TRY
    if (found && best > cur * (1 + 1e-12)) {
      cur = best;
      memcpy(w, best_w, n * sizeof(double));
    } else {
      step /= 2;
    }
  }
  return cur;
}

void numa_model_oracle(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                       const NumaModelMachine *m, const guint *workers, guint n_workers,
                       NumaModelOracleResult *out) {
  g_return_if_fail(app && app_params && tp && m && workers && out);
  numa_model_check_workers(m, workers, n_workers);
  memset(out, 0, sizeof *out);
  Objective o = {.app = app, .params = app_params, .m = m, .workers = workers, .n_workers = n_workers};
  const NumaModelPolicy *starts[] = {&numa_model_uniform_all, &numa_model_canonical, &numa_model_first_touch};
  out->gbps = -1;
  for (guint s = 0; s < G_N_ELEMENTS(starts); s++) {
    double w[SIM_NUMA_MAX_NODES];
    starts[s]->weights(m, workers, n_workers, w);
    double v = climb(&o, w, MAX(tp->step_share, tp->oracle_min_step), tp->oracle_min_step);
    if (v > out->gbps) {
      out->gbps = v;
      memcpy(out->weights, w, m->n * sizeof(double));
    }
  }
  out->evaluations = o.evaluations;
}
