/* engine.h: the discrete-event engine core: time, events, entities, the event queue and run control.
 *
 * The engine knows no model, no scenario format and no output format. A simulation is a set of
 * entities (nodes, pools, vantage points, ...), each of a registered kind with one handler. The engine
 * delivers events to entities in a total order and gives each entity its own RNG stream.
 *
 * Rules that make runs reproducible (and let a later parallel engine run partitions on threads):
 *  - Time is int64 nanoseconds (SimTime), never double.
 *  - The total order of events is (time, source entity id, source sequence number). The sequence number
 *    counts the events a source entity has sent. Ties never depend on insertion order.
 *  - A handler touches only the state of the entity the event is addressed to, and talks to other
 *    entities only by sending events. It reaches its randomness through sim_ctx_rng().
 *  - Events are fixed-size 32-byte records stored inline in the queue; nothing is allocated per event.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "rng.h"

G_BEGIN_DECLS

typedef int64_t SimTime; /* nanoseconds since the simulation start */

#define SIM_NS_PER_US INT64_C(1000)
#define SIM_NS_PER_MS INT64_C(1000000)
#define SIM_NS_PER_S INT64_C(1000000000)
#define SIM_TIME_MAX INT64_MAX

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
  uint64_t peak_pending;  /* largest queue length seen */
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
void sim_engine_set_max_events(SimEngine *engine, uint64_t max_events);
void sim_engine_set_cancel_flag(SimEngine *engine, volatile const int *cancel);
void sim_engine_set_progress(SimEngine *engine, SimProgressFn fn, void *user, double interval_s);

/* Processes events in the total order until a stop condition holds. Can be called again to resume. */
SimStopReason sim_engine_run(SimEngine *engine);

void sim_engine_get_stats(const SimEngine *engine, SimEngineStats *stats);
guint64 sim_engine_pending(const SimEngine *engine);

/* --- For handlers --- */

SimTime sim_ctx_now(const SimCtx *ctx);
SimEntityId sim_ctx_self(const SimCtx *ctx);
SimRng *sim_ctx_rng(SimCtx *ctx);

/* Sends an event from the current entity to `dst`, to arrive `delay` >= 0 ns from now. */
void sim_ctx_send(SimCtx *ctx, SimEntityId dst, SimTime delay, uint16_t type, uint16_t aux, uint64_t payload);

/* Asks the engine to stop after the current event (the run returns SIM_STOP_REQUESTED). */
void sim_ctx_stop(SimCtx *ctx);

G_END_DECLS
