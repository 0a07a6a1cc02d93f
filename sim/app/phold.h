/* phold.h: the classic PHOLD benchmark (Fujimoto) run on the engine, for measuring raw event throughput.
 *
 * A fixed population of events circulates among `lps` logical processes (one engine entity each). Every
 * processed event makes its LP send exactly one new event, so the number of pending events stays equal
 * to `pending` for the whole run. The destination is a uniformly random other LP with probability
 * `remote`, else the LP itself; the delay is `lookahead_s` plus an exponential with mean `mean_delay_s`
 * (classic PHOLD has no lookahead: a delay may round to 0 ns). All randomness comes from each LP's own
 * engine stream, so a run is fully determined by the parameters.
 *
 * With threads >= 1 the LPs (one group each, any LP may send to any other no less than the lookahead
 * ahead) run on the partitioned engine: the checksum is the same at every thread count and partitioning,
 * but the event budget is met at the end of a window, so a run processes at least `events` events.
 */
#pragma once

#include <glib.h>

#include "engine.h"

G_BEGIN_DECLS

#define SIM_PHOLD_ERROR (sim_phold_error_quark())
GQuark sim_phold_error_quark(void);

typedef enum {
  SIM_PHOLD_ERROR_INVALID, /* a parameter is out of its range */
} SimPholdError;

typedef struct {
  guint lps;           /* logical processes, 1 .. SIM_ENTITY_MAX */
  guint64 pending;     /* events in the system, >= 1; initially spread round-robin over the LPs */
  double remote;       /* probability in [0, 1] that the next event goes to another LP (needs lps >= 2) */
  double mean_delay_s; /* mean of the exponential delay, > 0 and finite */
  guint64 events;      /* events to process */
  guint64 seed;        /* master seed of the engine */
  double lookahead_s;  /* least delay of every event, >= 0 (0: classic PHOLD) */
  guint threads;       /* 0: the sequential engine; 1 .. SIM_ENGINE_MAX_THREADS: the partitioned engine */
  SimPartitioning partitioning;
  gboolean cpu_timing; /* measure the workers' CPU time per window (sim_engine_set_cpu_timing) */
} SimPholdParams;

typedef struct {
  guint64 events;        /* events processed (equal to params.events) */
  double wall_s;         /* wall-clock seconds of the run loop only (setup excluded) */
  double events_per_s;   /* events / wall_s */
  guint64 peak_pending;  /* largest queue length seen (equal to params.pending) */
  guint64 final_pending; /* queue length at the end (equal to params.pending) */
  SimTime end_time;      /* simulated time of the last event processed */
  guint64 checksum;      /* folds the (time, destination) of every processed event, in order per LP */
  SimEngineWindowStats windows;                   /* the engine's layout and windows */
  SimWorkerStats workers[SIM_ENGINE_MAX_THREADS]; /* per worker, windows.workers of them */
} SimPholdResult;

/* Fills `p` with the defaults: 1000 LPs, 1000 pending events, remote 0.25, mean delay 1 s, 10 M events,
 * seed 1, no lookahead, the sequential engine. */
void sim_phold_params_default(SimPholdParams *p);

/* Runs PHOLD with `p` and fills `r`. Returns FALSE with `error` set (domain SIM_PHOLD_ERROR) when a
 * parameter is out of range, SIM_ENGINE_ERROR when the engine refuses the layout (threads >= 1 without a
 * lookahead); `r` is then left untouched. Same parameters give the same `r` apart from the wall-clock
 * fields; parameters that differ only in threads >= 1 and partitioning give the same checksum, events and
 * end time. */
gboolean sim_phold_run(const SimPholdParams *p, SimPholdResult *r, GError **error);

G_END_DECLS
