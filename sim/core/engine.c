/* engine.c: the engine's entities, setup and teardown, scheduling from outside, run control and statistics,
 * sim_engine_run(), and the handler API (sim_ctx_*) but for batches. The other parts live beside it (see
 * engine-private.h). */
#include "engine.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "engine-private.h"

G_DEFINE_QUARK(sim - engine - error - quark, sim_engine_error)

/* ---- Time ---- */

/* Rounds half away from zero. Saturates at SIM_TIME_MAX (also for +inf) and at INT64_MIN (also for
 * -inf); negative values are otherwise returned as they are; NaN gives 0. */
SimTime sim_time_from_s(double seconds) {
  if (isnan(seconds)) return 0;
  double ns = seconds * 1e9;
  if (ns >= 0x1.0p63) return SIM_TIME_MAX;
  if (ns <= -0x1.0p63) return INT64_MIN;
  return (SimTime)llround(ns);
}

/* ---- Setup and teardown ---- */

static void part_init(SimPart *p, SimEngine *engine, guint id) {
  memset(p, 0, sizeof *p);
  p->ctx.self = SIM_ENTITY_NONE;
  p->batch_open = BATCH_NONE;
  p->engine = engine;
  p->id = id;
  p->n_parts = 1;
  p->chunks = engine->chunks;
  p->n_entities = engine->n_entities;
  p->states = (void *const *)engine->states;
  p->cancel = engine->cancel;
  p->promise = SIM_TIME_MAX;
  p->sent_min = SIM_TIME_MAX;
  p->node = -1;
}

void engine_part_clear(SimPart *p) {
  if (p->heap_mapped)
    munmap(p->heap_mem, p->heap_mapped);
  else
    g_aligned_free(p->heap_mem);
  if (p->mbox_arena) munmap(p->mbox_arena, p->mbox_arena_len);
  if (p->staged) g_array_unref(p->staged);
  for (guint32 i = 0; i < p->n_batch; i++) {
    g_free(p->batch[i].ev);
    g_free(p->batch[i].ord);
  }
  g_free(p->batch);
  g_free(p->batch_free);
  g_free(p->sort_tmp);
  g_free(p->sort_count);
}

SimPart *engine_parts_new(SimEngine *engine, guint n) {
  SimPart *parts = g_aligned_alloc0(n, sizeof(SimPart), 128);
  for (guint i = 0; i < n; i++)
    part_init(&parts[i], engine, i);
  return parts;
}

SimEngine *sim_engine_new(uint64_t master_seed) {
  SimEngine *engine = g_new0(SimEngine, 1);
  engine->master_seed = master_seed;
  engine->stop_time = SIM_TIME_MAX;
  engine->max_events = UINT64_MAX;
  engine->default_delay = SIM_TIME_MAX;
  engine->lookahead = SIM_TIME_MAX;
  engine->la_src = engine->la_dst = SIM_ENTITY_NONE;
  engine->links = g_array_new(FALSE, FALSE, sizeof(SimLink));
  engine->numa_nodes = 1;
  engine->n_parts = 1;
  engine->parts = engine_parts_new(engine, 1);
  engine_heap_alloc(&engine->parts[0], HEAP_INITIAL);
  return engine;
}

void sim_engine_free(SimEngine *engine) {
  if (!engine) return;
  for (guint i = 0; i < engine->n_parts; i++)
    engine_part_clear(&engine->parts[i]);
  g_aligned_free(engine->parts);
  engine_free_mailboxes(engine);
  g_aligned_free(engine->slots);
  g_free(engine->part_of);
  for (guint i = 0; i < engine->n_chunks; i++) g_aligned_free(engine->chunks[i]);
  g_free(engine->chunks);
  g_free(engine->states);
  g_free(engine->uf);
  g_free(engine->state_bytes);
  g_array_unref(engine->links);
  if (engine->tables) g_ptr_array_unref(engine->tables);
  engine_placements_clear(engine);
  if (engine->placements) g_array_unref(engine->placements);
  engine_gate_free(engine);
  g_free(engine);
}

SimEntityId sim_engine_add_entity(SimEngine *engine, const SimEntityKind *kind, void *state) {
  g_return_val_if_fail(engine != NULL, SIM_ENTITY_NONE);
  g_return_val_if_fail(kind != NULL && kind->handle != NULL, SIM_ENTITY_NONE);
  g_return_val_if_fail(engine->n_entities < SIM_ENTITY_MAX, SIM_ENTITY_NONE);
  SimEntityId id = engine->n_entities;
  guint chunk = id >> ENTITY_CHUNK_SHIFT;
  if (chunk == engine->n_chunks) {
    engine->chunks = g_renew(SimEntity *, engine->chunks, engine->n_chunks + 1);
    /* Page-aligned (a chunk is 32 pages), so its pages can move to the node of their entities' worker. */
    engine->chunks[chunk] = g_aligned_alloc(ENTITY_CHUNK, sizeof(SimEntity), 4096);
    engine->n_chunks++;
  }
  SimEntity *ent = engine_entity(engine, id);
  memset(ent, 0, sizeof *ent);
  ent->handle = kind->handle;
  ent->state = state;
  ent->kind = kind;
  sim_rng_init(&ent->rng, engine->master_seed, id);
  if (id == engine->states_cap) {
    engine->states_cap = MAX(2 * engine->states_cap, 64);
    engine->states = g_renew(void *, engine->states, engine->states_cap);
  }
  engine->states[id] = state;
  engine->n_entities++;
  for (guint i = 0; i < engine->n_parts; i++) {
    engine->parts[i].chunks = engine->chunks;
    engine->parts[i].n_entities = engine->n_entities;
    engine->parts[i].states = (void *const *)engine->states;
  }
  engine->prepared = FALSE;
  return id;
}

guint sim_engine_n_entities(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  return engine->n_entities;
}

SimRng *sim_engine_entity_rng(SimEngine *engine, SimEntityId id) {
  g_return_val_if_fail(engine != NULL && id < engine->n_entities, NULL);
  return &engine_entity(engine, id)->rng;
}

SimTime engine_now(const SimEngine *engine) {
  return engine->windowed ? engine->now : engine->parts[0].ctx.now;
}

/* Puts an event into its destination's partition from outside any handler (no worker runs). */
void engine_place_event(SimEngine *engine, const SimEvent *ev) {
  /* An entity added since the last prepare has no partition yet: partition 0 holds its events until the
   * next prepare moves every pending event to its place. */
  guint part = engine->part_of && ev->dst < engine->part_of_len ? engine->part_of[ev->dst] : 0;
  SimPart *p = &engine->parts[part];
  if (!p->heap_mem) {
    if (!p->staged) p->staged = g_array_new(FALSE, FALSE, sizeof(SimEvent));
    g_array_append_val(p->staged, *ev);
  } else {
    heap_push(p, ev);
  }
}

/* `time` must not lie before the last processed event (the engine never goes back in time). */
void sim_engine_schedule(SimEngine *engine, SimEntityId src, SimEntityId dst, SimTime time, uint16_t type,
                         uint16_t aux, uint64_t payload) {
  g_return_if_fail(engine != NULL);
  g_return_if_fail(src < engine->n_entities && dst < engine->n_entities);
  g_return_if_fail(time >= engine_now(engine));
  SimEvent ev = {.time = time,
                 .key = entity_next_key(engine_entity(engine, src), src),
                 .dst = dst,
                 .type = type,
                 .aux = aux,
                 .payload = payload};
  engine_place_event(engine, &ev);
}

void sim_engine_set_stop_time(SimEngine *engine, SimTime stop_time) {
  g_return_if_fail(engine != NULL);
  engine->stop_time = stop_time;
}

SimTime sim_engine_stop_time(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, SIM_TIME_MAX);
  return engine->stop_time;
}

void sim_engine_set_max_events(SimEngine *engine, uint64_t max_events) {
  g_return_if_fail(engine != NULL);
  engine->max_events = max_events;
}

void sim_engine_set_cancel_flag(SimEngine *engine, volatile const int *cancel) {
  g_return_if_fail(engine != NULL);
  engine->cancel = cancel;
  for (guint i = 0; i < engine->n_parts; i++)
    engine->parts[i].cancel = cancel;
}

void sim_engine_set_progress(SimEngine *engine, SimProgressFn fn, void *user, double interval_s) {
  g_return_if_fail(engine != NULL);
  g_return_if_fail(interval_s >= 0);
  engine->progress_fn = fn;
  engine->progress_user = user;
  engine->progress_interval_us = interval_s >= 1e9 ? G_MAXINT64 : (gint64)(interval_s * 1e6);
}

void sim_engine_get_stats(const SimEngine *engine, SimEngineStats *stats) {
  g_return_if_fail(engine != NULL && stats != NULL);
  uint64_t events = engine->events_base;
  for (guint i = 0; i < engine->n_parts; i++)
    events += engine->parts[i].events;
  stats->events = events;
  stats->peak_pending =
      MAX(engine->peak_base, engine->windowed ? engine->peak_window : engine->parts[0].peak_pending);
  stats->now = engine_now(engine);
  stats->wall_s = engine->wall_s;
}

guint64 sim_engine_pending(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  guint64 n = 0;
  for (guint i = 0; i < engine->n_parts; i++) {
    const SimPart *p = &engine->parts[i];
    n += p->n - (p->root_free ? 1 : 0) + (p->staged ? p->staged->len : 0) + p->batch_extra;
  }
  return n + engine->held_events;
}

SimStopReason sim_engine_run(SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, SIM_STOP_EMPTY);
  /* Any change since the last layout (threads, entities, declarations) lays it out again; the sequential
   * engine's first prepare leaves its queue as it is. */
  if (!engine->prepared) {
    GError *error = NULL;
    if (!sim_engine_prepare(engine, &error)) g_error("sim engine: %s", error->message);
  }
  /* Windows never consult the gate, so nothing would release what is held (a sequential run's, before the
   * layout changed): it goes back into the queues. */
  if (G_UNLIKELY(engine->windowed && engine->n_held > 0)) engine_gate_release_all(engine);
  gint64 t0_us = g_get_monotonic_time();
  engine->progress_last_us = t0_us;
  SimStopReason reason =
      engine->windowed ? engine_run_windowed(engine, t0_us) : engine_run_sequential(engine, t0_us);
  engine->wall_s += (double)(g_get_monotonic_time() - t0_us) * 1e-6;
  return reason;
}

/* ---- For handlers ---- */

SimTime sim_ctx_now(const SimCtx *ctx) { return ctx->now; }

SimEntityId sim_ctx_self(const SimCtx *ctx) { return ctx->self; }

SimRng *sim_ctx_rng(SimCtx *ctx) { return &ctx->ent->rng; }

guint sim_ctx_worker(const SimCtx *ctx) {
  return ((const SimPart *)ctx)->id;
}

void sim_ctx_send(SimCtx *ctx, SimEntityId dst, SimTime delay, uint16_t type, uint16_t aux, uint64_t payload) {
  SimPart *p = (SimPart *)ctx;
  g_return_if_fail(dst < p->n_entities);
  g_return_if_fail(delay >= 0);
  SimTime time;
  if (G_UNLIKELY(__builtin_add_overflow(ctx->now, delay, &time))) time = SIM_TIME_MAX;
  SimEvent ev = {.time = time,
                 .key = entity_next_key(ctx->ent, ctx->self),
                 .dst = dst,
                 .type = type,
                 .aux = aux,
                 .payload = payload};
  if (G_UNLIKELY(p->part_of != NULL)) {
    guint dp = p->part_of[dst];
    if (dp != p->id) {
      engine_part_send_remote(p, dp, &ev);
      return;
    }
  }
  part_insert(p, &ev);
}

void sim_ctx_stop(SimCtx *ctx) {
  SimPart *p = (SimPart *)ctx;
  if (p->windowed)
    p->stop_window = TRUE;
  else
    p->stop_requested = TRUE;
}
