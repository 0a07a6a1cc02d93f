/* engine_windows.c: the partitioned engine's conservative windows: the barrier, the mailboxes between
 * workers, what every worker decides at a barrier, the worker threads, and the window statistics. */
#include "engine.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine-private.h"
#include "spinwait.h"

/* CPU time of the calling thread: unlike wall time, it does not grow while other work holds the core. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- The barrier ---- */

typedef void (*BarrierHook)(SimPart *last);

static void barrier_wait(Barrier *b, BarrierHook hook, SimPart *self) {
  unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
    /* Last: everyone else has published and waits on `gen`; nobody touches `count` until it changes. */
    __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    if (hook) hook(self);
    sim_bump_and_wake(&b->gen, &b->sleepers); /* only the last one changes gen */
    return;
  }
  sim_wait_change(&b->gen, gen, &b->sleepers, BARRIER_SPIN_NS);
}

/* ---- Windows ---- */

static void lookahead_violation(const SimPart *p, const SimEvent *ev) {
  const SimEngine *e = p->engine;
  SimEntityId src = p->ctx.self;
  g_error("sim engine: entity %u (%s) sent an event to entity %u (%s) in another partition %" G_GINT64_FORMAT
          " ns ahead, less than the lookahead of %" G_GINT64_FORMAT
          " ns: declare the link's least delay (sim_engine_declare_link) or keep the two together",
          src, engine_entity(e, src)->kind->name, ev->dst, engine_entity(e, ev->dst)->kind->name,
          ev->time - p->ctx.now, e->lookahead);
}

G_GNUC_NO_INLINE void engine_part_send_remote(SimPart *p, guint dp, const SimEvent *ev) {
  if (G_UNLIKELY(ev->time < p->promise)) lookahead_violation(p, ev);
  Mailbox *m = &p->mbox[((gsize)dp * p->n_parts + p->id) * 2 + p->parity];
  if (G_UNLIKELY(m->n == m->cap)) {
    guint64 cap = MAX(m->cap * 2, MAILBOX_INITIAL);
    int node = p->engine->parts[dp].node;
    if (m->mapped == 0 && node < 0) {
      m->ev = g_renew(SimEvent, m->ev, cap);
    } else { /* a pinned receiver: the new buffer on its node too */
      gsize bytes = page_round(cap * sizeof(SimEvent));
      SimEvent *buf = engine_node_alloc(bytes, node);
      memcpy(buf, m->ev, m->n * sizeof(SimEvent));
      if (m->mapped != MAILBOX_IN_ARENA) munmap(m->ev, m->mapped);
      m->ev = buf;
      m->mapped = bytes;
    }
    m->cap = cap;
  }
  m->ev[m->n++] = *ev;
  if (ev->time < p->sent_min) p->sent_min = ev->time;
  p->sent_n++;
  p->sent_remote++;
}

static void part_drain(SimPart *p) {
  for (guint s = 0; s < p->n_parts; s++) {
    if (s == p->id) continue;
    Mailbox *m = &p->mbox[((gsize)p->id * p->n_parts + s) * 2 + p->parity];
    for (guint64 i = 0; i < m->n; i++)
      heap_push(p, &m->ev[i]);
    m->n = 0;
  }
}

void engine_free_mailboxes(SimEngine *engine) {
  if (!engine->mbox) return;
  for (gsize i = 0; i < (gsize)engine->n_parts * engine->n_parts * 2; i++) {
    Mailbox *m = &engine->mbox[i];
    if (m->mapped == 0)
      g_free(m->ev);
    else if (m->mapped != MAILBOX_IN_ARENA)
      munmap(m->ev, m->mapped);
  }
  g_aligned_free(engine->mbox);
  engine->mbox = NULL;
}

/* What all workers decide from the published slots; *t receives the global minimum. */
static SimStopReason windows_decide(const SimEngine *e, const Slot *slots, SimTime *t, gboolean *go_on) {
  gboolean any = FALSE, stop = FALSE, cancel = FALSE;
  SimTime min = SIM_TIME_MAX;
  uint64_t events = e->events_base;
  for (guint i = 0; i < e->n_parts; i++) {
    any |= slots[i].any;
    stop |= slots[i].stop;
    cancel |= slots[i].cancel;
    min = MIN(min, slots[i].min);
    events += slots[i].events;
  }
  *t = min;
  *go_on = FALSE;
  if (cancel) return SIM_STOP_CANCELLED;
  if (stop) return SIM_STOP_REQUESTED;
  if (!any) return SIM_STOP_EMPTY;
  if (min >= e->stop_time) return SIM_STOP_TIME;
  if (events >= e->max_events) return SIM_STOP_EVENTS;
  *go_on = TRUE;
  return SIM_STOP_TIME;
}

/* Runs at each barrier in the last worker to arrive, everyone else parked: window statistics and progress. */
static void windows_hook(SimPart *last) {
  SimEngine *e = last->engine;
  const Slot *slots = &e->slots[(gsize)last->parity * e->n_parts];
  uint64_t events = e->events_base, pending = 0;
  for (guint i = 0; i < e->n_parts; i++) {
    events += slots[i].events;
    pending += slots[i].pending;
  }
  e->peak_window = MAX(e->peak_window, pending);
  if (e->rounds++ > 0) {
    double cpu = 0;
    for (guint i = 0; i < e->n_parts; i++)
      cpu = MAX(cpu, slots[i].cpu_s);
    e->critical_s += cpu;
    uint64_t w = events - e->events_at_boundary;
    e->windows++;
    e->window_events_max = MAX(e->window_events_max, w);
    guint b = w == 0 ? 0 : MIN((guint)(64 - __builtin_clzll(w)), SIM_ENGINE_HIST_BUCKETS - 1);
    e->window_hist[b]++;
  }
  e->events_at_boundary = events;
  if (e->progress_fn && (e->rounds & 15) == 0) {
    gint64 now_us = g_get_monotonic_time();
    if (now_us - e->progress_last_us >= e->progress_interval_us) {
      e->progress_last_us = now_us;
      SimTime now = INT64_MIN;
      for (guint i = 0; i < e->n_parts; i++)
        now = MAX(now, e->parts[i].ctx.now);
      SimEngineStats st = {.events = events,
                           .peak_pending = e->peak_window,
                           .now = now,
                           .wall_s = e->wall_s + (double)(now_us - e->run_t0_us) * 1e-6};
      e->progress_fn(e->progress_user, &st);
    }
  }
}

static void part_pin(SimPart *p) {
  if (p->node >= 0) pthread_setaffinity_np(pthread_self(), sizeof p->pin, &p->pin);
}

/* Allocates the mailboxes this worker receives into: first touched by the receiver, and on a multi-node
 * machine in one mapping on its node. */
static void part_mailboxes_init(SimPart *p) {
  if (p->node >= 0 && !p->mbox_arena) {
    p->mbox_arena_len = page_round((gsize)2 * (p->n_parts - 1) * MAILBOX_INITIAL * sizeof(SimEvent));
    p->mbox_arena = engine_node_alloc(p->mbox_arena_len, p->node);
  }
  gsize next = 0;
  for (guint s = 0; s < p->n_parts; s++) {
    if (s == p->id) continue;
    for (guint k = 0; k < 2; k++) {
      Mailbox *m = &p->mbox[((gsize)p->id * p->n_parts + s) * 2 + k];
      if (m->ev) continue;
      m->cap = MAILBOX_INITIAL;
      if (p->mbox_arena) {
        m->ev = (SimEvent *)p->mbox_arena + next;
        m->mapped = MAILBOX_IN_ARENA;
      } else {
        m->ev = g_new(SimEvent, m->cap);
      }
      next += MAILBOX_INITIAL;
      memset(m->ev, 0, m->cap * sizeof(SimEvent));
    }
  }
}

/* One worker's whole run: publish, barrier, decide, merge, process a window; again. */
static SimStopReason part_work(SimPart *p) {
  SimEngine *e = p->engine;
  part_pin(p);
  if (!p->heap_mem) engine_part_heap_build(p);
  if (p->n_parts > 1) part_mailboxes_init(p);
  p->parity = 0;
  p->stop_window = FALSE;
  p->sent_min = SIM_TIME_MAX;
  p->sent_n = 0;
  gboolean cancelled = FALSE;
  const gboolean cpu_timing = e->cpu_timing;
  SimStopReason reason;
  for (;;) {
    Slot *slot = &e->slots[(gsize)p->parity * e->n_parts + p->id];
    SimTime top = p->n > 0 ? p->heap[0].time : SIM_TIME_MAX;
    slot->min = MIN(top, p->sent_min);
    slot->any = p->n > 0 || p->sent_n > 0;
    slot->stop = p->stop_window;
    slot->cancel = cancelled;
    slot->events = p->events;
    slot->pending = p->n + p->sent_n;
    slot->cpu_s = p->window_cpu_s;
    double t0 = mono_s();
    barrier_wait(&e->barrier, windows_hook, p);
    p->wait_s += mono_s() - t0;
    SimTime t;
    gboolean go_on;
    reason = windows_decide(e, &e->slots[(gsize)p->parity * e->n_parts], &t, &go_on);
    part_drain(p);
    if (!go_on) break;
    p->parity ^= 1;
    p->sent_min = SIM_TIME_MAX;
    p->sent_n = 0;
    p->promise = time_add_sat(t, e->lookahead);
    double t1 = mono_s(), c1 = cpu_timing ? thread_cpu_s() : 0;
    SimStopReason r = engine_part_run_until(p, UINT64_MAX, MIN(p->promise, e->stop_time));
    if (cpu_timing) {
      p->window_cpu_s = thread_cpu_s() - c1;
      p->cpu_s += p->window_cpu_s;
    }
    p->busy_s += mono_s() - t1;
    if (r == SIM_STOP_CANCELLED) cancelled = TRUE;
  }
  return reason;
}

static void *worker_main(void *arg) {
  SimPart *p = arg;
  p->reason = part_work(p);
  return NULL;
}

SimStopReason engine_run_windowed(SimEngine *engine, gint64 t0_us) {
  engine->run_t0_us = t0_us;
  engine->rounds = 0;
  engine->barrier.count = 0;
  engine->barrier.sleepers = 0;
  engine->barrier.n = engine->n_parts;
  memset(engine->slots, 0, 2 * engine->n_parts * sizeof(Slot));
  for (guint i = 0; i < engine->n_parts; i++) {
    engine->parts[i].stop_requested = FALSE;
    engine->parts[i].cancel = engine->cancel;
    engine->parts[i].window_cpu_s = 0;
  }
  /* The calling thread is worker 0; pinning it is undone afterwards. */
  cpu_set_t saved;
  gboolean restore =
      engine->parts[0].node >= 0 && pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  pthread_t *tids = g_new0(pthread_t, engine->n_parts);
  for (guint i = 1; i < engine->n_parts; i++) {
    int rc = pthread_create(&tids[i], NULL, worker_main, &engine->parts[i]);
    if (rc != 0) g_error("sim engine: cannot start worker thread %u: %s", i, g_strerror(rc));
  }
  SimStopReason reason = part_work(&engine->parts[0]);
  for (guint i = 1; i < engine->n_parts; i++)
    pthread_join(tids[i], NULL);
  g_free(tids);
  if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  SimTime now = engine->now;
  for (guint i = 0; i < engine->n_parts; i++)
    now = MAX(now, engine->parts[i].ctx.now);
  engine->now = now;
  return reason;
}

void sim_engine_set_cpu_timing(SimEngine *engine, gboolean on) {
  g_return_if_fail(engine != NULL);
  engine->cpu_timing = on;
}

void sim_engine_get_window_stats(const SimEngine *engine, SimEngineWindowStats *stats) {
  g_return_if_fail(engine != NULL && stats != NULL);
  memset(stats, 0, sizeof *stats);
  stats->threads = engine->threads;
  stats->workers = engine->n_parts;
  stats->groups = engine->n_groups;
  stats->windowed = engine->windowed;
  stats->lookahead = engine->lookahead;
  stats->lookahead_src = engine->la_src;
  stats->lookahead_dst = engine->la_dst;
  stats->windows = engine->windows;
  stats->window_events_max = engine->window_events_max;
  stats->critical_s = engine->critical_s;
  memcpy(stats->window_events_hist, engine->window_hist, sizeof stats->window_events_hist);
}

gboolean sim_engine_get_worker_stats(const SimEngine *engine, guint worker, SimWorkerStats *stats) {
  g_return_val_if_fail(engine != NULL && stats != NULL, FALSE);
  if (worker >= engine->n_parts) return FALSE;
  const SimPart *p = &engine->parts[worker];
  *stats = (SimWorkerStats){.entities = p->n_ents,
                            .node = p->node,
                            .events = p->events,
                            .sent_remote = p->sent_remote,
                            .peak_pending = p->peak_pending,
                            .busy_s = p->busy_s,
                            .wait_s = p->wait_s,
                            .cpu_s = p->cpu_s};
  return TRUE;
}
