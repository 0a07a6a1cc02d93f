/* engine_gate.c: the gate of the sequential loop (sim_engine_set_gate): held entities and their events, late
 * events with explicit keys, and the run that calls the flush whenever the loop would end (engine_run_gated,
 * which engine_run_sequential() hands over to when a gate is set) with its own loop. */
#include "engine.h"

#include <string.h>

#include "engine-private.h"

/* ---- Held entities ---- */

void engine_gate_ensure(SimEngine *engine) {
  guint n = engine->n_entities;
  if (engine->held_len >= n) return;
  engine->held = g_renew(guint8, engine->held, n);
  engine->held_ev = g_renew(GArray *, engine->held_ev, n);
  memset(engine->held + engine->held_len, 0, n - engine->held_len);
  memset(engine->held_ev + engine->held_len, 0, (n - engine->held_len) * sizeof(GArray *));
  engine->held_len = n;
}

void engine_gate_hold(SimEngine *engine, SimEntityId id) {
  engine_gate_ensure(engine);
  if (engine->held[id]) return;
  engine->held[id] = 1;
  engine->n_held++;
  if (!engine->held_ev[id]) engine->held_ev[id] = g_array_new(FALSE, FALSE, sizeof(SimEvent));
}

void engine_gate_hold_event(SimEngine *engine, const SimEvent *ev) {
  g_array_append_val(engine->held_ev[ev->dst], *ev); /* the array only grows: no allocation once it is large */
  engine->held_events++;
}

/* Into the queue it belongs to: the sequential queue (filling the root's hole if a handler runs, as a send
 * does), or before the queue exists or with windows the partition engine_place_event() picks. */
static void gate_put(SimEngine *engine, const SimEvent *ev) {
  SimPart *p = &engine->parts[0];
  if (!engine->windowed && p->heap_mem)
    part_insert(p, ev);
  else
    engine_place_event(engine, ev);
}

void sim_engine_release(SimEngine *engine, SimEntityId id) {
  g_return_if_fail(engine != NULL && id < engine->n_entities);
  if (id >= engine->held_len || !engine->held[id]) return;
  GArray *a = engine->held_ev[id];
  /* The queue orders them again by (time, key): the order of the list does not matter. */
  for (guint i = 0; i < a->len; i++)
    gate_put(engine, &g_array_index(a, SimEvent, i));
  engine->held_events -= a->len;
  g_array_set_size(a, 0);
  engine->held[id] = 0;
  engine->n_held--;
  engine->gate_changes++;
}

void engine_gate_release_all(SimEngine *engine) {
  for (guint id = 0; id < engine->held_len && engine->n_held > 0; id++)
    if (engine->held[id]) sim_engine_release(engine, id);
}

const SimEvent *sim_engine_held_events(const SimEngine *engine, SimEntityId id, guint *n) {
  g_return_val_if_fail(engine != NULL && n != NULL, NULL);
  if (id >= engine->held_len || !engine->held[id]) {
    *n = 0;
    return NULL;
  }
  *n = engine->held_ev[id]->len;
  return (const SimEvent *)engine->held_ev[id]->data;
}

gboolean sim_engine_is_held(const SimEngine *engine, SimEntityId id) {
  g_return_val_if_fail(engine != NULL, FALSE);
  return id < engine->held_len && engine->held[id];
}

/* ---- Inert events (SIM_GATE_INERT): dropped at once, counted in order ---- */

static void inert_push(SimEngine *e, EvOrd o) {
  if (e->n_inert == e->inert_cap) { /* grows to the model's steady state, then never again */
    e->inert_cap = MAX(e->inert_cap * 2, 256);
    e->inert = g_renew(EvOrd, e->inert, e->inert_cap);
  }
  gsize i = e->n_inert++;
  while (i > 0 && e->inert[(i - 1) / 2] > o) {
    e->inert[i] = e->inert[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  e->inert[i] = o;
}

static void inert_pop(SimEngine *e) {
  EvOrd last = e->inert[--e->n_inert];
  gsize n = e->n_inert, i = 0;
  for (;;) {
    gsize c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && e->inert[c + 1] < e->inert[c]) c++;
    if (last <= e->inert[c]) break;
    e->inert[i] = e->inert[c];
    i = c;
  }
  if (n) e->inert[i] = last;
}

/* Counts as handled the inert events before `upto` in (time, key) order (the sequential loop would have handled
 * them by now). */
static void inert_count(SimPart *p, EvOrd upto) {
  SimEngine *e = p->engine;
  while (e->n_inert && e->inert[0] < upto) {
    SimTime t = (SimTime)((uint64_t)(e->inert[0] >> 64) ^ (UINT64_C(1) << 63));
    if (t > e->gate_now) e->gate_now = t;
    p->events++;
    inert_pop(e);
  }
}

void engine_gate_free(SimEngine *engine) {
  g_free(engine->inert);
  for (guint i = 0; i < engine->held_len; i++)
    if (engine->held_ev[i]) g_array_unref(engine->held_ev[i]);
  g_free(engine->held_ev);
  g_free(engine->held);
}

/* ---- The API ---- */

void sim_engine_set_gate(SimEngine *engine, SimGateFn gate, SimFlushFn flush, gpointer user) {
  g_return_if_fail(engine != NULL);
  if (!gate) engine_gate_release_all(engine); /* nothing would ever release them */
  engine->gate = gate;
  engine->flush = gate ? flush : NULL;
  engine->gate_user = gate ? user : NULL;
}

gboolean sim_ctx_gated(const SimCtx *ctx) {
  const SimPart *p = (const SimPart *)ctx;
  return !p->windowed && p->engine->gate != NULL;
}

gboolean sim_engine_gated(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, FALSE);
  if (!engine->gate) return FALSE;
  if (engine->prepared) return !engine->windowed;
  /* What sim_engine_prepare() will decide: windows with threads and more than one group. */
  return engine->threads == 0 || engine_count_groups(engine) <= 1;
}

void sim_engine_insert_late(SimEngine *engine, SimTime time, SimEntityId src, uint64_t seq, SimEntityId dst,
                            uint16_t type, uint16_t aux, uint64_t payload) {
  g_return_if_fail(engine != NULL);
  g_return_if_fail(src < engine->n_entities && dst < engine->n_entities);
  /* A number src has not used up yet would be handed out again by its next send: two events, one key. */
  g_return_if_fail(seq < engine_entity(engine, src)->seq);
  g_return_if_fail(!engine->windowed); /* workers own their queues during a windowed run */
  SimEvent ev = {.time = time,
                 .key = ((uint64_t)src << SEQ_BITS) | seq,
                 .dst = dst,
                 .type = type,
                 .aux = aux,
                 .payload = payload};
  engine->gate_changes++;
  if (dst < engine->held_len && engine->held[dst])
    engine_gate_hold_event(engine, &ev);
  else
    gate_put(engine, &ev);
}

uint64_t sim_ctx_reserve(SimCtx *ctx, uint64_t n) {
  SimEntity *ent = ctx->ent;
  uint64_t first = ent->seq;
  if (G_UNLIKELY(n > SEQ_LIMIT - first)) g_error("sim engine: entity %u sent more than 2^40 events", ctx->self);
  ent->seq = first + n;
  return first;
}

/* ---- The sequential loop with a gate (sim_engine_set_gate) ----
 *
 * A loop of its own, in a file of its own, so that the one in engine_queue.c stays exactly as it was without a
 * gate (the same machine code). Each event is first looked at where it lies (the root, or a batch's next event),
 * not taken: if its entity is held it moves to the held list without a question; else the gate decides, and may
 * change the queue meanwhile. No batch fast path here: every event of a batch needs the same two questions.
 * Handling may go back in time (a late event), which nothing here relies on; the latest time handled is kept for
 * engine_now() at the end of the run. Returns SIM_STOP_REQUESTED both when a handler called sim_ctx_stop()
 * (p->stop_requested, and *stop_ord is lowered to that event) and when the first event is at or after *stop_ord. */

/* The event first in the queue (a batch's next one), and its batch slot or BATCH_NONE; the queue is not empty. */
static inline SimEvent part_first(const SimPart *p, guint32 *bslot) {
  SimEvent ev = p->heap[0];
  *bslot = BATCH_NONE;
  if (ev.dst >= BATCH_DST) {
    *bslot = ev.dst - BATCH_DST;
    const Batch *bt = &p->batch[*bslot];
    ev = *batch_ev(bt, bt->pos);
  }
  return ev;
}

/* Takes the first event out of the queue without handling it (what the loop does around a handler that sends
 * nothing). */
static void part_drop_first(SimPart *p, guint32 bslot) {
  p->root_free = TRUE;
  if (bslot != BATCH_NONE) {
    p->batch[bslot].pos++;
    batch_advance(p, bslot);
  }
  if (p->root_free) {
    p->root_free = FALSE;
    heap_pop_root(p);
  }
}

SimStopReason engine_part_run_gated(SimPart *p, uint64_t limit, SimTime bound, EvOrd *stop_ord) {
  SimEngine *e = p->engine;
  volatile const int *cancel = p->cancel;
  SimStopReason reason;
  for (;;) {
    if (p->n == 0) {
      reason = SIM_STOP_EMPTY;
      break;
    }
    const SimEvent *top = &p->heap[0];
    if (top->time >= bound) {
      reason = SIM_STOP_TIME;
      break;
    }
    if (ev_ord(top) >= *stop_ord) { /* a batch's entry has the (time, key) of its next event */
      reason = SIM_STOP_REQUESTED;
      break;
    }
    if (p->events >= limit) {
      reason = SIM_STOP_EVENTS;
      break;
    }
    if (cancel && *cancel) {
      reason = SIM_STOP_CANCELLED;
      break;
    }
    guint32 bslot;
    SimEvent ev = part_first(p, &bslot);
    if (ev.dst < e->held_len && e->held[ev.dst]) {
      part_drop_first(p, bslot);
      engine_gate_hold_event(e, &ev);
      continue;
    }
    SimGateVerdict v = e->gate(e->gate_user, e, &ev);
    if (v != SIM_GATE_PROCESS && v != SIM_GATE_INERT) {
      /* HOLD: the event moves to the held list on the next turn, if it is still first then (the gate may have
       * inserted an earlier one). */
      if (v == SIM_GATE_HOLD) engine_gate_hold(e, ev.dst);
      continue;
    }
    if (p->n == 0) continue;
    {
      /* PROCESS or INERT, but the gate changed the queue and another event is first now: ask about that one. */
      guint32 b2;
      SimEvent now_first = part_first(p, &b2);
      if (now_first.key != ev.key || now_first.time != ev.time || now_first.dst != ev.dst) continue;
      bslot = b2;
    }
    if (v == SIM_GATE_INERT) {
      part_drop_first(p, bslot);
      inert_push(e, ev_ord(&ev));
      continue;
    }
    if (bslot != BATCH_NONE) p->batch[bslot].pos++;
    SimEntity *ent = part_entity(p, ev.dst);
    p->root_free = TRUE;
    p->ctx.ent = ent;
    p->ctx.self = ev.dst;
    p->ctx.now = ev.time;
    ent->handle(&p->ctx, ent->state, &ev);
    if (G_UNLIKELY(e->n_inert)) inert_count(p, ev_ord(&ev));
    p->events++;
    if (ev.time > e->gate_now) e->gate_now = ev.time;
    if (bslot != BATCH_NONE) batch_advance(p, bslot);
    if (p->root_free) {
      p->root_free = FALSE;
      heap_pop_root(p);
    }
    if (p->stop_requested) {
      if (ev_ord(&ev) < *stop_ord) *stop_ord = ev_ord(&ev);
      reason = SIM_STOP_REQUESTED;
      break;
    }
  }
  p->ctx.ent = NULL;
  p->ctx.self = SIM_ENTITY_NONE;
  return reason;
}

/* ---- The run ---- */

/* engine_run_sequential() with a gate: the same progress checkpoints, and the flush wherever the loop would
 * end (see SimFlushFn in engine.h for what follows in each case). */
SimStopReason engine_run_gated(SimEngine *engine, gint64 t0_us) {
  SimPart *p = &engine->parts[0];
  if (!p->heap_mem) engine_part_heap_build(p);
  engine_gate_ensure(engine);
  p->stop_requested = FALSE;
  engine->gate_now = p->ctx.now;
  EvOrd stop_ord = ~(EvOrd)0; /* after sim_ctx_stop(): only events before the stopping one */
  gboolean stopping = FALSE;
  SimStopReason reason;
  for (;;) {
    uint64_t limit = engine_run_limit(engine, p);
    double t1 = mono_s();
    reason = engine_part_run_gated(p, limit, engine->stop_time, &stop_ord);
    p->busy_s += mono_s() - t1;
    if (reason == SIM_STOP_EVENTS && p->events < engine->max_events) {
      /* A progress checkpoint: no flush. */
      gint64 now_us = g_get_monotonic_time();
      if (now_us - engine->progress_last_us >= engine->progress_interval_us) {
        engine->progress_last_us = now_us;
        SimEngineStats stats;
        sim_engine_get_stats(engine, &stats);
        stats.now = engine->gate_now;
        stats.wall_s += (double)(now_us - t0_us) * 1e-6;
        engine->progress_fn(engine->progress_user, &stats);
      }
      continue;
    }
    if (p->stop_requested) { /* a handler's; stop_ord is now its event */
      p->stop_requested = FALSE;
      stopping = TRUE;
    }
    uint64_t changes = engine->gate_changes;
    if (engine->flush) engine->flush(engine->gate_user, engine);
    /* The event budget and the cancel flag end the run here whatever the flush did. */
    if (engine->gate_changes != changes && reason != SIM_STOP_EVENTS && reason != SIM_STOP_CANCELLED) continue;
    if (engine->n_held > 0 && engine->flush)
      g_critical("sim engine: the flush left %u entities held (%" G_GUINT64_FORMAT " events)", engine->n_held,
                 engine->held_events);
    break;
  }
  if (stopping && reason != SIM_STOP_EVENTS && reason != SIM_STOP_CANCELLED) reason = SIM_STOP_REQUESTED;
  /* The inert events the sequential run would have handled before it ended: every one (the queue ran empty or
   * reached the stop time: each was in the queue before the stop time), or those before the stopping event. With
   * the event budget or the cancel flag the run ends where it is. */
  if (reason == SIM_STOP_EMPTY || reason == SIM_STOP_TIME)
    inert_count(p, ~(EvOrd)0);
  else if (reason == SIM_STOP_REQUESTED)
    inert_count(p, stop_ord);
  engine->n_inert = 0;
  p->ctx.now = engine->gate_now; /* engine_now(): the latest time handled, not the last event's */
  return reason;
}
