/* numa_model_policy.c: the bandwidth bound of a bandwidth-bound application on a NUMA machine, the kernel's
 * integer weights, and the placement policies (first-touch, uniform, sum rule, kernel auto, canonical). */
#include "numa_model.h"

#include <math.h>
#include <string.h>

#include "numa_model-private.h"

/* ======================================================================================================
 * The bandwidth bound
 * ====================================================================================================== */

/* See numa_model-private.h. */
void numa_model_check_workers(const NumaModelMachine *m, const guint *workers, guint n_workers) {
  g_assert(n_workers >= 1 && n_workers <= m->n);
  for (guint k = 0; k < n_workers; k++)
    g_assert(workers[k] < m->n && m->cpus[workers[k]] > 0);
}

void numa_model_limits_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers,
                            double *limits) {
  g_return_if_fail(m != NULL && workers != NULL && limits != NULL);
  numa_model_check_workers(m, workers, n_workers);
  for (guint i = 0; i < m->n; i++) {
    double lim = m->cap[i] / n_workers;
    for (guint k = 0; k < n_workers; k++)
      lim = MIN(lim, m->bw[i * m->n + workers[k]]);
    limits[i] = lim;
  }
}

/* See numa_model-private.h. */
gboolean numa_model_normalise(const double *w, guint n, double *out) {
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += w[i] > 0 ? w[i] : 0;
  if (!(sum > 0)) return FALSE;
  for (guint i = 0; i < n; i++)
    out[i] = w[i] > 0 ? w[i] / sum : 0;
  return TRUE;
}

/* See numa_model-private.h. */
double numa_model_per_worker_bound(const double *limits, const double *w, guint n) {
  double x = INFINITY;
  for (guint i = 0; i < n; i++)
    if (w[i] > 0) x = MIN(x, limits[i] / w[i]);
  return x;
}

double numa_model_predict_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers,
                               const double *w) {
  g_return_val_if_fail(m != NULL && w != NULL, NAN);
  double lim[SIM_NUMA_MAX_NODES], wn[SIM_NUMA_MAX_NODES];
  numa_model_limits_gbps(m, workers, n_workers, lim);
  g_return_val_if_fail(numa_model_normalise(w, m->n, wn), NAN);
  return n_workers * numa_model_per_worker_bound(lim, wn, m->n);
}

static guint gcd(guint a, guint b) {
  while (b) {
    guint t = a % b;
    a = b;
    b = t;
  }
  return a;
}

void numa_model_kernel_weights(const double *bw, guint n, guint *iw) {
  g_return_if_fail(bw != NULL && iw != NULL && n >= 1);
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += bw[i];
  guint g = 0;
  for (guint i = 0; i < n; i++) {
    double q = floor(32.0 * bw[i] / sum);
    iw[i] = q < 1 ? 1 : (guint)q;
    g = gcd(g, iw[i]);
  }
  for (guint i = 0; i < n; i++)
    iw[i] /= g;
}

/* ======================================================================================================
 * Policies
 * ====================================================================================================== */

static void first_touch_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  numa_model_check_workers(m, workers, n_workers);
  memset(w, 0, m->n * sizeof *w);
  w[workers[0]] = 1;
}

static void uniform_workers_weights(const NumaModelMachine *m, const guint *workers, guint n_workers,
                                    double *w) {
  numa_model_check_workers(m, workers, n_workers);
  memset(w, 0, m->n * sizeof *w);
  for (guint k = 0; k < n_workers; k++)
    w[workers[k]] = 1.0 / n_workers;
}

static void uniform_all_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  numa_model_check_workers(m, workers, n_workers);
  for (guint i = 0; i < m->n; i++)
    w[i] = 1.0 / m->n;
}

static void canonical_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  double lim[SIM_NUMA_MAX_NODES];
  numa_model_limits_gbps(m, workers, n_workers, lim);
  numa_model_normalise(lim, m->n, w);
}

static void sum_rule_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  numa_model_check_workers(m, workers, n_workers);
  double s[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++) {
    s[i] = 0;
    for (guint k = 0; k < n_workers; k++)
      s[i] += m->bw[i * m->n + workers[k]];
  }
  numa_model_normalise(s, m->n, w);
}

void numa_model_kernel_auto_integers(const NumaModelMachine *m, guint *iw) {
  g_return_if_fail(m != NULL && iw != NULL);
  double best[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++) {
    best[i] = 0;
    for (guint j = 0; j < m->n; j++)
      if (m->cpus[j]) best[i] = MAX(best[i], m->bw[i * m->n + j]);
  }
  numa_model_kernel_weights(best, m->n, iw);
}

static void kernel_auto_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  numa_model_check_workers(m, workers, n_workers);
  guint iw[SIM_NUMA_MAX_NODES];
  numa_model_kernel_auto_integers(m, iw);
  double d[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++)
    d[i] = iw[i];
  numa_model_normalise(d, m->n, w);
}

const NumaModelPolicy numa_model_first_touch = {
    .info = {.name = "first-touch", .family = "numa_policy", .help = "every page on the first worker node"},
    .weights = first_touch_weights,
};
const NumaModelPolicy numa_model_uniform_workers = {
    .info = {.name = "uniform-workers",
             .family = "numa_policy",
             .help = "equal shares on the worker nodes (numactl --interleave)"},
    .weights = uniform_workers_weights,
};
const NumaModelPolicy numa_model_uniform_all = {
    .info = {.name = "uniform-all",
             .family = "numa_policy",
             .help = "equal shares on every node (numactl --interleave=all)"},
    .weights = uniform_all_weights,
};
const NumaModelPolicy numa_model_canonical = {
    .info = {.name = "canonical",
             .family = "numa_policy",
             .help = "w_i = m_i / sum m_k with m_i = min(min_{j in W} B[i][j], C_i/|W|): the max-min optimum "
                     "(BWAP stage 1)"},
    .weights = canonical_weights,
};
const NumaModelPolicy numa_model_sum_rule = {
    .info = {.name = "sum-rule", .family = "numa_policy", .help = "w_i proportional to sum_{j in W} B[i][j]"},
    .weights = sum_rule_weights,
};
const NumaModelPolicy numa_model_kernel_auto = {
    .info = {.name = "kernel-auto",
             .family = "numa_policy",
             .help = "Linux's automatic weighted-interleave integers over every node, from each node's best "
                     "bandwidth max_j B[i][j]: max(1, floor(32 bw_i / sum bw)) divided by their gcd"},
    .weights = kernel_auto_weights,
};

const SimModelInfo *const numa_model_policy_list[] = {&numa_model_first_touch.info,
                                                      &numa_model_uniform_workers.info,
                                                      &numa_model_uniform_all.info,
                                                      &numa_model_sum_rule.info,
                                                      &numa_model_kernel_auto.info,
                                                      &numa_model_canonical.info,
                                                      NULL};

const NumaModelPolicy *numa_model_policy_find(const char *name) {
  g_return_val_if_fail(name != NULL, NULL);
  for (guint i = 0; numa_model_policy_list[i]; i++)
    if (strcmp(numa_model_policy_list[i]->name, name) == 0)
      return (const NumaModelPolicy *)numa_model_policy_list[i];
  return NULL;
}
