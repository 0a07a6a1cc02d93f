/* run.h: one simulation run of a scenario, from the loaded scenario to the output files. */
#pragma once

#include <glib.h>

#include <jansson.h>

#include "engine.h"
#include "chain.h"
#include "scenario.h"

G_BEGIN_DECLS

/* Called after the simulation, before anything is freed, with the engine (for its window, worker and NUMA
 * statistics) and the model's note on its partitioning (see pow_world_partition_note). */
typedef void (*SimRunEngineFn)(void *user, SimEngine *engine, const char *partition_note);

/* How a run's relay uses its threads. The outputs are the same bytes in every mode. */
typedef enum {
  SIM_RELAY_SPLIT = 0, /* each block's relay split over the threads (windows inside the block) */
  SIM_RELAY_PIPELINE,  /* successive blocks' relays at once, one thread each (pow_world_set_relay_pipeline);
                        * with a note on standard error where it cannot be (and the split instead) */
  SIM_RELAY_AUTO,      /* sim run's default: the pipeline at exactly 2 threads where the scenario allows it
                        * (silently the split otherwise); the split at 3 or more (docs/threads.md, session 15) */
} SimRelayMode;

typedef struct {
  const char *out_dir;        /* NULL: results/<scenario name> */
  gboolean progress;          /* print a progress line on stderr (only when it is a terminal) */
  volatile const int *cancel; /* polled by the engine; may be NULL */
  int argc;                   /* the command line, for the output header */
  char **argv;
  gboolean emc_logs;          /* also write the vantage points' EMC logs into DIR/emc/ (emclog.h) */
  const struct SimTrace *trace; /* trace-driven mining (tracemine.h; sim_trace_load() already applied to the
                                 * scenario): adds its comparison to the outputs */
  /* 0: the sequential engine; 1 .. SIM_ENGINE_MAX_THREADS: the partitioned engine with at most that many
   * workers. Each block's relay runs on max(threads, 1) threads (pow_world_set_threads). The outputs do not
   * depend on it (the header records max(threads, 1)). */
  guint threads;
  SimRelayMode relay_mode; /* how the relay uses the threads (SimRelayMode); 0 (zeroed options): the split */
  gboolean threads_adaptive; /* the relay may run a block on the calling thread alone when that has been
                              * faster (pow_world_set_threads); FALSE: all `threads` */
  SimRunEngineFn on_engine; /* may be NULL; when set, the engine also measures CPU time per window */
  void *on_engine_user;
  PowRelayStats *relay_stats; /* may be NULL; when set, receives what the network's relay did (zeroed if it
                               * reports nothing: pow_world_relay_stats) */
  const uint32_t *trace_heights; /* --trace-blocks: write trace_nodes.csv and trace_blocks.csv, every node's
                                  * arrival of the blocks of these heights (a network with nodes only) */
  guint n_trace_heights;
} SimRunOptions;

/* What happened, for the caller's exit code. */
typedef enum {
  SIM_RUN_ERROR_INPUT,     /* bad input or an unusable output directory: exit 2 */
  SIM_RUN_ERROR_RUNTIME,   /* failed while running or writing: exit 1 */
  SIM_RUN_ERROR_CANCELLED, /* interrupted: nothing was written; exit 130 */
} SimRunError;
#define SIM_RUN_ERROR (sim_run_error_quark())
GQuark sim_run_error_quark(void);

/* The default of `sim run --threads`: the CPUs this process may run on (its affinity mask), at most
 * SIM_ENGINE_MAX_THREADS. */
guint sim_run_default_threads(void);

/* Runs `sc` and writes summary.json, blocks.csv, pools.csv and runs.csv into the output directory.
 * Prints nothing on stdout. If `summary` is not NULL it receives the summary document (json_decref it). */
gboolean sim_run(const SimScenario *sc, const SimRunOptions *opt, json_t **summary, GError **error);

/* The analysis' miner table for the world (one AnMiner per miner, group = pool index). Free with g_free(). */
AnMiner *sim_run_an_miners(const PowWorld *world, guint *n_miners);
/* The analysis parameters that match the configuration (rewards, window = `max_height`). */
void sim_run_an_params(const PowConfig *cfg, uint32_t max_height, AnChainParams *params);

G_END_DECLS
