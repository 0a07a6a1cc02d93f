/* numa_model.h: the NUMA performance model (bandwidth-aware page placement after BWAP and Linux weighted
 * interleave): machine descriptions, placement policies as page weights, the bandwidth bound of a
 * bandwidth-bound application under each, an application model with loaded latency and memory-level
 * parallelism, BWAP's one-scalar on-line tuner and an offline hill-climbing oracle. The equations are in
 * DESIGN.md, "Performance models".
 *
 * Terms and units. A machine has n nodes (1..SIM_NUMA_MAX_NODES); every node has memory, some have CPUs.
 * B[i][j] (GB/s = 1e9 bytes/s) is the sustained bandwidth from memory node i to the threads of CPU node j;
 * C_i (GB/s) the capacity of node i's memory controller; L[i][j] (ns) the idle latency of a load from CPU
 * node j to memory node i. W, the worker set, is the CPU nodes the application's threads run on (an equal
 * share of the work on each). Weights w are the shares of the application's pages on each node (n values
 * >= 0 summing to 1). Throughputs are the application's aggregate memory traffic in GB/s.
 *
 * (The header is numa_model.h, not numa.h: an include directory with a numa.h in it would hide libnuma's.)
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "numa_hw.h"
#include "params.h"

G_BEGIN_DECLS

#define NUMA_MODEL_ERROR (numa_model_error_quark())
GQuark numa_model_error_quark(void);
typedef enum {
  NUMA_MODEL_ERROR_WORKERS, /* a worker set that does not fit the machine */
} NumaModelError;

/* ---- Machines ---- */

typedef struct NumaModelMachine NumaModelMachine;

/* A machine from a parsed machine file (JSON, borrowed, not modified; format in docs/perf-numa.md,
 * "Performance models: NUMA"; the caller reads the file with sim/core/input.h). Strict: duplicate and
 * unknown keys are errors. Problems go to `diag` as "file: $.path: message", all of them in one pass; then
 * NULL is returned. Free with numa_model_machine_free(). */
NumaModelMachine *numa_model_machine_from_json(json_t *root, SimDiag *diag);

/* A machine from arrays (copied): cpus[n], bw_gbps[n*n] and latency_ns[n*n] row-major as [mem * n + cpu]
 * (NAN in the columns of nodes without CPUs, positive elsewhere), capacity_gbps[n] positive. Programming
 * errors (bad shapes or values) are caught with g_return_val_if_fail. */
NumaModelMachine *numa_model_machine_new(const char *name, guint n, const guint *cpus, const double *bw_gbps,
                                         const double *capacity_gbps, const double *latency_ns);
void numa_model_machine_free(NumaModelMachine *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NumaModelMachine, numa_model_machine_free)

const char *numa_model_machine_name(const NumaModelMachine *m);
guint numa_model_machine_n_nodes(const NumaModelMachine *m);
guint numa_model_machine_cpus(const NumaModelMachine *m, guint node);
/* NAN when `cpu` has no CPUs. */
double numa_model_machine_bw_gbps(const NumaModelMachine *m, guint mem, guint cpu);
double numa_model_machine_capacity_gbps(const NumaModelMachine *m, guint mem);
double numa_model_machine_latency_ns(const NumaModelMachine *m, guint mem, guint cpu);
/* The file's "workers", else every node with CPUs, into workers[] (room for n); returns how many. */
guint numa_model_machine_default_workers(const NumaModelMachine *m, guint *workers);

/* The machine as a machine file (a new reference), with `comment` lines (NULL-terminated, may be NULL). */
json_t *numa_model_machine_to_json(const NumaModelMachine *m, const char *const *comment);

/* Parses a worker set: "all" (every node with CPUs) or node numbers separated by commas ("0,2"). Errors
 * (NUMA_MODEL_ERROR_WORKERS): empty, not a node number, a node the machine lacks or without CPUs, a node
 * listed twice. workers[] needs room for n entries. */
gboolean numa_model_workers_parse(const NumaModelMachine *m, const char *text, guint *workers,
                                  guint *n_workers, GError **error);

/* ---- The bandwidth bound ---- */

/* m_i = min(min_{j in W} B[i][j], C_i / |W|): what each worker can draw from node i per unit of weight. */
void numa_model_limits_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers, double *limits);

/* The bandwidth bound of symmetric workers, X(w) = |W| min_{i: w_i > 0} m_i / w_i (w is normalised here). */
double numa_model_predict_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers,
                               const double *w);

/* Linux's automatic weighted-interleave weights: iw_i = max(1, floor(32 bw_i / sum bw)), then all divided by
 * their greatest common divisor. bw[n] > 0; iw[n] receives the integers. */
void numa_model_kernel_weights(const double *bw, guint n, guint *iw);

/* ---- Placement policies (the "numa_policy" model family) ---- */

typedef struct {
  SimModelInfo info; /* no parameters */
  /* Fills w[n] (on the simplex) for the worker set. */
  void (*weights)(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w);
} NumaModelPolicy;

extern const NumaModelPolicy numa_model_first_touch;     /* every page on the first worker node */
extern const NumaModelPolicy numa_model_uniform_workers; /* equal shares on the worker nodes */
extern const NumaModelPolicy numa_model_uniform_all;     /* equal shares on every node */
extern const NumaModelPolicy numa_model_canonical;       /* w_i = m_i / sum m_k: the max-min optimum */
extern const NumaModelPolicy numa_model_sum_rule;        /* w_i proportional to sum_{j in W} B[i][j] */
extern const NumaModelPolicy numa_model_kernel_auto;     /* the kernel's integer weights over every node, from
                                                          * each node's best bandwidth max_j B[i][j] */

/* Every policy in presentation order (NULL-terminated); the registry's "numa_policy" family. */
extern const SimModelInfo *const numa_model_policy_list[];
/* A policy by name, or NULL. */
const NumaModelPolicy *numa_model_policy_find(const char *name);

/* For the kernel-auto policy: the integer weights it uses, into iw[n]. */
void numa_model_kernel_auto_integers(const NumaModelMachine *m, guint *iw);

/* ---- The application model (the "numa_app" model family) ----
 *
 * Each worker node runs threads_per_cpu x CPUs threads. A thread keeps `mlp` misses of line_bytes in flight,
 * except that a share latency_sensitivity of its misses are dependent loads that wait alone; by Little's law
 * a thread moves line_bytes / (L ((1-s)/mlp + s)) bytes per ns at mean latency L. Loaded latency: memory node
 * i's latency to CPU node j is L[i][j] f(u), u the larger of the controller's utilisation (sum of traffic to
 * i over C_i) and the link's (traffic over B[i][j]); f is 1 up to util_flat, rises linearly to
 * latency_factor_linear at util_linear and to latency_factor_saturated at u = 1. Workers run in step: each
 * moves x GB/s, the largest x at or below every node's demand and the bandwidth bound. */

typedef struct {
  double mlp;
  double latency_sensitivity;
  double threads_per_cpu;
  int64_t line_bytes;
  double util_flat;
  double util_linear;
  double latency_factor_linear;
  double latency_factor_saturated;
} NumaModelAppParams;

typedef struct {
  SimModelInfo info;
  /* The application's aggregate traffic (GB/s) with weights w. */
  double (*throughput_gbps)(const void *params, const NumaModelMachine *m, const guint *workers,
                            guint n_workers, const double *w);
} NumaModelApp;

extern const NumaModelApp numa_model_app_mlp;
/* Every application model (NULL-terminated); the registry's "numa_app" family. */
extern const SimModelInfo *const numa_model_app_list[];

/* f(u) of the application model (u clamped to [0, 1]). */
double numa_model_latency_factor(const NumaModelAppParams *p, double utilisation);

/* ---- Tuning ---- */

/* The on-line tuner's and the oracle's settings (a parameter table: numa_model_tuner_params). */
typedef struct {
  double step_share;     /* BWAP: 0.1 (10 percentage points) */
  double stop_worsening; /* BWAP: 0.001 (0.1%) */
  double oracle_min_step;
} NumaModelTunerParams;

extern const SimParamSpec numa_model_tuner_params[];
extern const guint numa_model_tuner_n_params;

typedef struct {
  double share; /* of pages on the worker nodes */
  double throughput_gbps;
} NumaModelTuneStep;

typedef struct {
  double start_weights[SIM_NUMA_MAX_NODES];
  double weights[SIM_NUMA_MAX_NODES]; /* the best found */
  double start_gbps, gbps;
  double start_share, share;
  guint evaluations; /* objective evaluations, the start included */
  gboolean tunable;  /* FALSE when every node is a worker: no scalar to move */
  GArray *steps;     /* NumaModelTuneStep, in the order tried, the start first */
} NumaModelTuneResult;

/* BWAP's second stage from `start` weights (normally canonical): moves the share of pages on worker nodes,
 * s_W + d, in steps of step_share, scaling worker weights by (s_W+d)/s_W and the others by (1-s_W-d)/s_N;
 * first towards the workers, and the other way only when the first step worsens the objective; it stops when
 * the objective is worse than the best by more than stop_worsening and keeps the best. Clear the result with
 * numa_model_tune_result_clear(). */
void numa_model_tune(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                     const NumaModelMachine *m, const guint *workers, guint n_workers, const double *start,
                     NumaModelTuneResult *out);
void numa_model_tune_result_clear(NumaModelTuneResult *r);

typedef struct {
  double weights[SIM_NUMA_MAX_NODES];
  double gbps;
  guint evaluations;
} NumaModelOracleResult;

/* The offline search over all n weights: steepest-ascent hill climbing from three starts (uniform over all
 * nodes, canonical, first-touch) with moves of a step of weight from one node to another, from all others to
 * one, and from one to all others; the step halves when nothing improves, down to oracle_min_step. */
void numa_model_oracle(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                       const NumaModelMachine *m, const guint *workers, guint n_workers,
                       NumaModelOracleResult *out);

G_END_DECLS
