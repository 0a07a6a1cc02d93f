/* engine.h: the discrete-event engine core: time, events, entities, the event queue and run control.
 *
 * The engine knows no model, no scenario format and no output format. A simulation is a set of
 * entities (nodes, pools, vantage points, ...), each of a registered kind with one handler. The engine
 * delivers events to entities in a total order and gives each entity its own RNG stream.
 *
 * Rules that make runs reproducible, and that let the engine run partitions of the entities on threads:
 *  - Time is int64 nanoseconds (SimTime), never double.
 *  - The total order of events is (time, source entity id, source sequence number). The sequence number
 *    counts the events a source entity has sent. Ties never depend on insertion order.
 *  - A handler touches only the state of the entity the event is addressed to, and talks to other
 *    entities only by sending events. It reaches its randomness through sim_ctx_rng(). Entities that do
 *    share mutable state must be declared a group (sim_engine_keep_together): a group never spans two
 *    partitions.
 *  - Events are fixed-size 32-byte records stored inline in the queue; nothing is allocated per event.
 *
 * Two ways to run. The sequential engine (the default, sim_engine_set_threads(engine, 0)) processes every
 * event in the total order on the calling thread. The partitioned engine (threads >= 1) splits the groups
 * into min(threads, groups) partitions, one worker thread each, and runs conservative windows: with
 * lookahead L (the least delay of any declared link between two groups, or the default delay), every
 * worker processes its events with time < T + L, where T is the earliest pending event anywhere; events
 * for another partition go to that partition's mailbox; after a barrier each worker merges its mailboxes
 * into its queue (the queue orders by (time, key), so the merge order cannot matter) and the next window
 * starts at the new global minimum. Each entity sees the same events in the same order as in the
 * sequential engine, so a run's results do not depend on the thread count or the partitioning.
 * With a single group the partitioned engine is the sequential engine (no windows, no threads).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "rng.h"

#define SIM_NUMA_MAX_NODES_ENGINE 64 /* = SIM_NUMA_MAX_NODES of numa_hw.h */

G_BEGIN_DECLS

typedef int64_t SimTime; /* nanoseconds since the simulation start */

#define SIM_NS_PER_US INT64_C(1000)
#define SIM_NS_PER_MS INT64_C(1000000)
#define SIM_NS_PER_S INT64_C(1000000000)
#define SIM_TIME_MAX INT64_MAX

/* The longest duration a model hands out (a delay, a latency, a transfer time): 2^56 ns, about 2.3 years.
 * Heavy-tailed draws and extreme parameters saturate here, not at SIM_TIME_MAX, so that a time plus a sum
 * of durations (a relay adds several per hop) cannot overflow. */
#define SIM_DURATION_MAX (INT64_C(1) << 56)
static inline SimTime sim_duration_clamp(SimTime d) { return d < SIM_DURATION_MAX ? d : SIM_DURATION_MAX; }

/* Seconds (double) to SimTime, rounded to the nearest nanosecond and saturated at SIM_TIME_MAX. */
SimTime sim_time_from_s(double seconds);
static inline double sim_time_to_s(SimTime t) { return (double)t / 1e9; }

typedef uint32_t SimEntityId;
#define SIM_ENTITY_NONE UINT32_MAX
/* Entity ids must stay below this: the tie-break key packs the source id into 24 bits. */
#define SIM_ENTITY_MAX (UINT32_C(1) << 24)

/* One event. `key` is (source entity << 40 | source sequence), so (time, key) is the total order.
 * `type` is the receiving kind's own event code; `aux` and `payload` are free for the model. */
typedef struct {
  SimTime time;
  uint64_t key;
  SimEntityId dst;
  uint16_t type;
  uint16_t aux;
  uint64_t payload;
} SimEvent;

G_STATIC_ASSERT(sizeof(SimEvent) == 32);

static inline SimEntityId sim_event_src(const SimEvent *ev) { return (SimEntityId)(ev->key >> 40); }

typedef struct SimEngine SimEngine;

/* The handle a handler gets: who it is, the current time, and how to send. Valid only during the call. */
typedef struct SimCtx SimCtx;

/* A kind of entity: one handler for all its events. `state` is the entity's own state pointer. */
typedef void (*SimHandlerFn)(SimCtx *ctx, void *state, const SimEvent *ev);

typedef struct {
  const char *name; /* for statistics and error messages */
  SimHandlerFn handle;
} SimEntityKind;

/* Why sim_engine_run() returned. */
typedef enum {
  SIM_STOP_EMPTY = 0,   /* no events left */
  SIM_STOP_TIME,        /* the next event is at or after the stop time */
  SIM_STOP_EVENTS,      /* the event budget was used up */
  SIM_STOP_REQUESTED,   /* a handler called sim_ctx_stop() */
  SIM_STOP_CANCELLED,   /* *cancel became non-zero (e.g. SIGINT) */
} SimStopReason;

typedef struct {
  uint64_t events;        /* events processed */
  uint64_t peak_pending;  /* largest queue length seen (windows: the largest total at a window boundary) */
  SimTime now;            /* time of the last event processed */
  double wall_s;          /* wall-clock seconds spent in sim_engine_run() (all calls) */
} SimEngineStats;

/* Progress callback, called from sim_engine_run() at most about every `progress_interval_s`. */
typedef void (*SimProgressFn)(void *user, const SimEngineStats *stats);

/* Creates an engine whose entity RNG streams derive from `master_seed`. Free with sim_engine_free(). */
SimEngine *sim_engine_new(uint64_t master_seed);
void sim_engine_free(SimEngine *engine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimEngine, sim_engine_free)

/* Registers an entity of `kind` (which must outlive the engine) with its state (owned by the caller,
 * not freed by the engine). Entities get ids 0, 1, 2, ... in the order they are added. */
SimEntityId sim_engine_add_entity(SimEngine *engine, const SimEntityKind *kind, void *state);
guint sim_engine_n_entities(const SimEngine *engine);

/* The RNG stream of an entity, for setup code (e.g. scheduling first events). Owned by the engine. */
SimRng *sim_engine_entity_rng(SimEngine *engine, SimEntityId id);

/* Schedules an event from outside any handler (setup, or between two sim_engine_run() calls), as if sent
 * by entity `src` with that entity's next sequence number. `time` is absolute and must not be earlier
 * than the last event processed. */
void sim_engine_schedule(SimEngine *engine, SimEntityId src, SimEntityId dst, SimTime time, uint16_t type,
                         uint16_t aux, uint64_t payload);

/* Run control. Any limit may be left unset (the defaults): stop time SIM_TIME_MAX, events UINT64_MAX.
 * `cancel`, if not NULL, is polled between events (a flag a signal handler sets). */
void sim_engine_set_stop_time(SimEngine *engine, SimTime stop_time);
/* The stop time set (SIM_TIME_MAX: none). */
SimTime sim_engine_stop_time(const SimEngine *engine);
void sim_engine_set_max_events(SimEngine *engine, uint64_t max_events);
void sim_engine_set_cancel_flag(SimEngine *engine, volatile const int *cancel);
void sim_engine_set_progress(SimEngine *engine, SimProgressFn fn, void *user, double interval_s);

/* Processes events in the total order until a stop condition holds. Can be called again to resume.
 * With windows (partitioned engine, several groups) a stop request (sim_ctx_stop) and the event budget take
 * effect at the end of the window in which they happen: every partition finishes that window, so what was
 * processed still does not depend on the thread count, but it can be more than the sequential engine
 * would have processed. Stop time and cancellation are exact (cancelled runs are not meant to be used).
 * The partitioned engine calls sim_engine_prepare() first if needed and aborts if it fails: call it
 * yourself to get its error. */
SimStopReason sim_engine_run(SimEngine *engine);

void sim_engine_get_stats(const SimEngine *engine, SimEngineStats *stats);
guint64 sim_engine_pending(const SimEngine *engine);

/* --- For handlers --- */

SimTime sim_ctx_now(const SimCtx *ctx);
SimEntityId sim_ctx_self(const SimCtx *ctx);
SimRng *sim_ctx_rng(SimCtx *ctx);

/* Sends an event from the current entity to `dst`, to arrive `delay` >= 0 ns from now. */
void sim_ctx_send(SimCtx *ctx, SimEntityId dst, SimTime delay, uint16_t type, uint16_t aux, uint64_t payload);

/* A batch: the same as one sim_ctx_send(ctx, dst, delay, type, aux, payload) per sim_ctx_batch_add() between
 * sim_ctx_batch_begin() and sim_ctx_batch_end() (same keys, same order of delivery, same statistics), for a
 * handler that sends many events with a common type, aux and payload (a block's deliveries to every miner).
 * The sequential loop keeps them as one sorted run with a single entry in the queue, which the next of
 * them replaces each time one is handled; with windows they are sent one by one. One batch at a time per
 * handler call; sim_ctx_send() may be called in between. */
void sim_ctx_batch_begin(SimCtx *ctx, uint16_t type, uint16_t aux, uint64_t payload);
void sim_ctx_batch_add(SimCtx *ctx, SimEntityId dst, SimTime delay);
void sim_ctx_batch_end(SimCtx *ctx);

/* Asks the engine to stop after the current event (the run returns SIM_STOP_REQUESTED). With windows: at
 * the end of the current window (see sim_engine_run). */
void sim_ctx_stop(SimCtx *ctx);

/* The worker (0 .. sim_engine_n_workers() - 1) running the current handler: an index for scratch space
 * that holds nothing from one event to the next. */
guint sim_ctx_worker(const SimCtx *ctx);

/* ---- A gate in the sequential loop: held entities, late events ----
 *
 * For a model that computes some events on another thread and inserts them later ("late"), possibly at times
 * earlier than events the loop has already handled. The model must know (by its own reasoning) that nothing
 * already handled depends on them; the engine then lets it decide, per event, whether the event may be
 * handled now, hold back every event of an entity whose inputs are not known yet, and insert the late events
 * with the keys they would have had (reserved with sim_ctx_reserve). Each entity then sees the same events in
 * the same (time, key) order as if the late events had been sent normally; across entities the order of
 * handling (and so sim_ctx_now() from one event to the next) may go back in time.
 *
 * Only the sequential loop consults the gate: sim_engine_set_threads(engine, 0), or a partitioned engine whose
 * entities form one group (one partition, no windows). With windows the gate is never consulted, nothing is
 * held (sim_engine_run() first puts every held event back), and sim_ctx_gated() is FALSE. Without a gate the
 * loop is exactly the one above: same order, same speed. */

typedef enum { SIM_GATE_PROCESS = 0, SIM_GATE_HOLD = 1, SIM_GATE_AGAIN = 2, SIM_GATE_INERT = 3 } SimGateVerdict;

/* Asked before each event of the sequential loop whose entity is not held (`ev` is that event; it is still
 * queued). PROCESS: handle it now (if the gate changed the queue so that another event is now first, the loop
 * asks again about that one instead). HOLD: hold its entity: this event and every later one to it wait, in
 * (time, key) order, until sim_engine_release(). AGAIN: the gate changed the queue (sim_engine_insert_late,
 * sim_engine_release) or waited; the loop asks again about whatever event is now first. INERT: the gate vouches
 * that handling it would change nothing but the engine's own counts (a model's event made stale by a later
 * change of its entity's state): the loop takes it out of the queue without handling it, now, and counts it
 * as handled (events, the latest time) only once it handles an event after it in (time, key) order, or the
 * run ends where the sequential run would have handled it (the queue empty, the stop time, a sim_ctx_stop()
 * at a later event): so the counts equal the sequential run's even when a stop comes from an event that was
 * still unknown when this one was dropped. The gate may block. Events of a held entity go to its held list
 * without asking the gate. */
typedef SimGateVerdict (*SimGateFn)(gpointer user, SimEngine *engine, const SimEvent *ev);

/* Called when the loop would end or return: the queue is empty (but for held events); the next event is at or
 * after the stop time; a handler called sim_ctx_stop(); the event budget is used up; the cancel flag is set. Not
 * at a progress checkpoint. It must insert every late event the model still owes and release every held entity
 * (it may block until its threads finish). If it changed the queue (inserted or released anything), the loop
 * goes on as if those events had always been queued:
 *  - stop time: it handles the events before the stop time, and calls the flush again when it would end;
 *  - sim_ctx_stop() at event E: it handles the queued events that come before E in (time, key) order (asking
 *    the gate as usual; a later sim_ctx_stop() at an earlier event moves the bound there) and none after,
 *    calls the flush again when it would end, and returns SIM_STOP_REQUESTED once a flush changed nothing.
 *    Nothing handled is undone: if E's entity was held, other entities may have handled events after E
 *    before E itself, and those stay handled. The run equals the sequential one when E's entity is never
 *    held behind the others (e.g. the stop comes from an entity the gate never holds);
 *  - event budget and cancel flag: the run returns right after the flush (SIM_STOP_EVENTS, SIM_STOP_CANCELLED)
 *    and handles nothing more. The first max_events events handled with a gate need not be the first
 *    max_events of the sequential order (held entities' events come later), so a run with a gate and an event
 *    budget is not equivalent to one without.
 * A flush that changes nothing while entities are still held is a bug of the model (g_critical); the run then
 * returns with them held (counted by sim_engine_pending). */
typedef void (*SimFlushFn)(gpointer user, SimEngine *engine);

/* Installs the gate (NULL: none, the default; the engine first releases every held entity). `flush` may be
 * NULL. `user` is passed to both. */
void sim_engine_set_gate(SimEngine *engine, SimGateFn gate, SimFlushFn flush, gpointer user);

/* TRUE when the run in progress (or about to start) consults the gate: a gate is set and the run is the
 * sequential loop (sim_engine_set_threads 0, or a partitioned engine that ended up with one partition and no
 * windows). Models call it from handlers to decide whether they may defer work. With windows the gate is never
 * consulted and both are FALSE. sim_engine_gated() tells the same from outside a run: for the layout of the last
 * sim_engine_prepare(), or if something changed since, for the one the next run will lay out. */
gboolean sim_ctx_gated(const SimCtx *ctx);
gboolean sim_engine_gated(const SimEngine *engine);

/* Inserts an event with an explicit key: source `src`, sequence `seq` (from sim_ctx_reserve, or any number src
 * has already used up and not sent). Its time may be earlier than events already handled. Only from a gate or
 * flush callback, or from a handler, of the sequential loop (or between runs). An event for a held entity goes
 * straight to its held list. */
void sim_engine_insert_late(SimEngine *engine, SimTime time, SimEntityId src, uint64_t seq, SimEntityId dst,
                            uint16_t type, uint16_t aux, uint64_t payload);

/* Takes n sequence numbers of the current entity (as n sim_ctx_send calls would, so later sends get the same
 * keys as after those calls) and returns the first. */
uint64_t sim_ctx_reserve(SimCtx *ctx, uint64_t n);

/* Puts every held event of `id` back into the queue (their keys unchanged) and ends the hold; nothing if `id`
 * is not held. From a gate or flush callback, a handler of the sequential loop, or between runs. */
void sim_engine_release(SimEngine *engine, SimEntityId id);
gboolean sim_engine_is_held(const SimEngine *engine, SimEntityId id);
/* The events the engine holds for `id` (in no particular order; valid until the queue changes), and their
 * number in *n (0 when it is not held). */
const SimEvent *sim_engine_held_events(const SimEngine *engine, SimEntityId id, guint *n);

/* ---- Partitions, threads and windows ----
 *
 * Models declare, while they build their entities: which entities must share a partition (they share
 * mutable state, or their order of events must stay the sequential one), and the least delay of the events
 * one entity sends to another (links). The engine computes the lookahead from these declarations alone,
 * over pairs in different groups (not partitions), so the windows are the same at every thread count. */

#define SIM_ENGINE_MAX_THREADS 256

#define SIM_ENGINE_ERROR (sim_engine_error_quark())
GQuark sim_engine_error_quark(void);
typedef enum {
  SIM_ENGINE_ERROR_ZERO_LOOKAHEAD, /* a link between two groups has no positive least delay */
  SIM_ENGINE_ERROR_THREADS,        /* threads could not be started */
} SimEngineError;

/* Entities a and b (and everything already grouped with either) go in the same partition. */
void sim_engine_keep_together(SimEngine *engine, SimEntityId a, SimEntityId b);
/* Every entity, including those added later, goes in one partition: the run is sequential. */
void sim_engine_keep_all_together(SimEngine *engine);

/* Entity `src` may send events to `dst`, never less than `min_delay` (>= 0) ns ahead. Several declarations
 * of one pair keep the smallest. Within a group links need no declaration. */
void sim_engine_declare_link(SimEngine *engine, SimEntityId src, SimEntityId dst, SimTime min_delay);
/* The least delay of events between any two entities of different groups that have no declared link;
 * SIM_TIME_MAX (the default): such pairs exchange no events. A send that breaks a declaration is caught
 * when it crosses partitions (the process aborts, naming both entities). */
void sim_engine_declare_default_delay(SimEngine *engine, SimTime min_delay);

typedef enum {
  SIM_PARTITION_BLOCKS = 0,  /* groups in order of their first entity, cut into runs of about equal size */
  SIM_PARTITION_ROUND_ROBIN, /* groups dealt to partitions in turn */
} SimPartitioning;

/* 0 (the default): the sequential engine. 1 .. SIM_ENGINE_MAX_THREADS: the partitioned engine with that
 * many workers at most (one partition each; never more partitions than groups). */
void sim_engine_set_threads(SimEngine *engine, guint threads, SimPartitioning how);

/* Groups the entities, places them into partitions, computes the lookahead and checks the declarations.
 * Fails (SIM_ENGINE_ERROR_ZERO_LOOKAHEAD) when a link between two groups has a least delay of 0: the message
 * names the link ("entity 3 (miner) -> entity 7 (vantage)"), as such a pair must be kept together. Called by
 * sim_engine_run() when needed; call it again after adding entities or declarations. */
gboolean sim_engine_prepare(SimEngine *engine, GError **error);

/* After sim_engine_prepare(): the number of groups and of partitions (= workers), and an entity's. */
guint sim_engine_n_groups(const SimEngine *engine);
guint sim_engine_n_workers(const SimEngine *engine);
guint sim_engine_partition_of(const SimEngine *engine, SimEntityId id);

#define SIM_ENGINE_HIST_BUCKETS 40

typedef struct {
  guint threads;             /* requested (0: the sequential engine) */
  guint workers;             /* partitions, one worker thread each */
  guint groups;              /* groups of entities (0 before sim_engine_prepare) */
  gboolean windowed;         /* conservative windows (several groups) */
  SimTime lookahead;         /* SIM_TIME_MAX: none (no windows, or no traffic between groups) */
  SimEntityId lookahead_src; /* the link that set it; SIM_ENTITY_NONE: the default delay */
  SimEntityId lookahead_dst;
  uint64_t windows; /* windows run (all sim_engine_run calls) */
  uint64_t window_events_max;
  /* Windows by events processed: bucket 0 holds windows with 0 events, bucket k >= 1 those with
   * 2^(k-1) .. 2^k - 1 events (the last bucket also holds everything above). */
  uint64_t window_events_hist[SIM_ENGINE_HIST_BUCKETS];
  /* The sum over windows of the largest worker's thread CPU time in that window: how long the windows would
   * take on dedicated cores with a free barrier. On a machine shared with other work it is the figure to
   * compare with one worker's CPU time, as wall time there also counts the time workers wait for a core. */
  double critical_s;
} SimEngineWindowStats;

typedef struct {
  guint entities;        /* entities of its partition */
  int node;              /* NUMA node it runs on (-1: not pinned, one node) */
  uint64_t events;       /* events it processed */
  uint64_t sent_remote;  /* events it sent to other partitions */
  uint64_t peak_pending; /* largest length of its own queue */
  double busy_s;         /* wall seconds processing windows */
  double wait_s;         /* wall seconds waiting at the barrier */
  double cpu_s;          /* thread CPU seconds processing windows (0 without sim_engine_set_cpu_timing) */
} SimWorkerStats;

/* Measures each worker's thread CPU time per window (SimWorkerStats.cpu_s, SimEngineWindowStats.critical_s).
 * Off by default: it costs two system calls per window and worker (about 1 us here). */
void sim_engine_set_cpu_timing(SimEngine *engine, gboolean on);

void sim_engine_get_window_stats(const SimEngine *engine, SimEngineWindowStats *stats);
/* Statistics of worker `worker` (< sim_engine_n_workers()); FALSE if there is no such worker. */
gboolean sim_engine_get_worker_stats(const SimEngine *engine, guint worker, SimWorkerStats *stats);

/* ---- NUMA placement ----
 *
 * With several memory nodes the partitioned engine pins worker w to the CPUs of one node, filling the nodes
 * this process may run on in order (node by node), and each worker first-touches its own queue and
 * mailboxes; the engine's entity records, and the entity states whose size the model declared, move to
 * their worker's node. Shared tables that a model registers are spread over the nodes by weighted
 * interleave (the staircase of sim_numa_place_weighted), with weights from the callback the caller sets,
 * normally the NUMA model's canonical weights for the worker nodes. With one memory node none of this
 * happens: no system call, no pinning, nothing changes. */

/* Fills w[n_nodes] (sum 1) for the worker nodes workers[n_workers] (node numbers, possibly repeated). */
typedef void (*SimNumaWeightsFn)(void *user, const guint *workers, guint n_workers, double *w, guint n_nodes);
void sim_engine_set_numa_weights(SimEngine *engine, SimNumaWeightsFn fn, void *user);

/* Declares that `bytes` of state of entity `id` start at its state pointer (for moving them to its worker's
 * node). */
void sim_engine_set_state_bytes(SimEngine *engine, SimEntityId id, gsize bytes);

/* Registers a large read-mostly table (`name` is copied) to spread over the nodes at the next prepare. Only
 * the whole pages inside [buf, buf + len) move. The buffer must outlive the engine's runs and reports. */
void sim_engine_share_table(SimEngine *engine, const char *name, void *buf, gsize len);

/* One placed memory region for --numa-report: what the engine meant to put where and what the kernel
 * reports now (pages of 4 KiB or the system's size). */
typedef struct {
  const char *name; /* "worker 0 queue", "mailboxes of worker 1", "entity records", a table's name ... */
  gsize bytes;      /* whole pages considered */
  guint n_nodes;
  double intended[SIM_NUMA_MAX_NODES_ENGINE]; /* bytes meant for each node */
  gsize actual[SIM_NUMA_MAX_NODES_ENGINE];    /* bytes the kernel reports on each node */
  gsize absent;                               /* bytes not yet backed by a page */
} SimNumaPlacement;

/* Fills out[] (room for `max`) with the regions placed by the last prepare/run, querying the kernel now;
 * returns how many regions there are (possibly more than max). */
guint sim_engine_numa_report(SimEngine *engine, SimNumaPlacement *out, guint max);

G_END_DECLS
