/* test_parallel.c: unit tests of the partitioned engine: the merge order of mailboxes under ties across
 * partitions, the lookahead from declared links, the refusal of a zero lookahead, windows and their stop
 * rules, identical results at every thread count and partitioning, and NUMA placement on this machine; and
 * the relay's own threads on the pools-2019 topology: the same result for every node at every thread count.
 */
#include <math.h>
#include <numa.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cunit-main.h"
#include "engine.h"
#include "numa_hw.h"
#include "net.h"
#include "phold.h"
#include "relay.h"
#include "scenario.h"

/* ---- A chatty model: every entity logs what it receives and answers with random sends ---- */

typedef struct {
  SimTime time;
  uint64_t key;
  uint16_t type;
  uint16_t worker_ok; /* sim_ctx_worker() named the entity's partition */
} LogEntry;

typedef struct {
  SimTime lookahead;  /* every send to another entity is at least this far ahead */
  SimTime quantum;    /* extra delays are multiples of this: many exact ties */
  guint n;            /* entities */
  guint64 stop_after; /* entity 0 calls sim_ctx_stop() at its event with this payload (0: never) */
  const SimEngine *engine;
} ChatConfig;

typedef struct {
  const ChatConfig *cfg;
  GArray *log; /* LogEntry */
} ChatEntity;

static void chat_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  ChatEntity *c = state;
  const ChatConfig *cfg = c->cfg;
  SimEntityId self = sim_ctx_self(ctx);
  LogEntry e = {.time = ev->time,
                .key = ev->key,
                .type = ev->type,
                .worker_ok = sim_ctx_worker(ctx) == sim_engine_partition_of(cfg->engine, self)};
  g_array_append_val(c->log, e);
  if (cfg->stop_after && self == 0 && ev->payload == cfg->stop_after) sim_ctx_stop(ctx);
  /* One send per event, so the population stays constant; destinations and delays from the entity's own
   * stream, delays in quanta so that many events tie. */
  SimRng *rng = sim_ctx_rng(ctx);
  SimEntityId dst = (SimEntityId)sim_rng_below(rng, cfg->n);
  SimTime delay = (SimTime)sim_rng_below(rng, 4) * cfg->quantum;
  if (dst != self) delay += cfg->lookahead; /* self-sends may be immediate */
  sim_ctx_send(ctx, dst, delay, (uint16_t)(1 + sim_rng_below(rng, 3)), 0, ev->payload + 1);
}

static const SimEntityKind chat_kind = {.name = "chat", .handle = chat_handle};

typedef struct {
  ChatConfig cfg;
  ChatEntity *ents;
  SimEngine *engine;
} Chat;

/* n entities, each its own group, any pair at least `lookahead` apart; 3 starting events each. */
static void chat_init(Chat *c, guint n, guint threads, SimPartitioning how) {
  c->cfg = (ChatConfig){.lookahead = 1000, .quantum = 250, .n = n};
  c->ents = g_new0(ChatEntity, n);
  c->engine = sim_engine_new(42);
  c->cfg.engine = c->engine;
  for (guint i = 0; i < n; i++) {
    c->ents[i] = (ChatEntity){.cfg = &c->cfg, .log = g_array_new(FALSE, FALSE, sizeof(LogEntry))};
    CU_ASSERT_EQUAL(sim_engine_add_entity(c->engine, &chat_kind, &c->ents[i]), i);
  }
  sim_engine_declare_default_delay(c->engine, c->cfg.lookahead);
  for (guint i = 0; i < n; i++)
    for (guint k = 0; k < 3; k++)
      sim_engine_schedule(c->engine, i, i, (SimTime)k * 250, 0, 0, 1);
  sim_engine_set_threads(c->engine, threads, how);
}

static void chat_clear(Chat *c) {
  for (guint i = 0; i < c->cfg.n; i++)
    g_array_unref(c->ents[i].log);
  g_free(c->ents);
  sim_engine_free(c->engine);
}

/* Every entity's log equal in both runs. */
static gboolean chat_logs_equal(const Chat *a, const Chat *b) {
  if (a->cfg.n != b->cfg.n) return FALSE;
  for (guint i = 0; i < a->cfg.n; i++) {
    const GArray *x = a->ents[i].log, *y = b->ents[i].log;
    if (x->len != y->len) return FALSE;
    for (guint k = 0; k < x->len; k++) {
      const LogEntry *p = &g_array_index(x, LogEntry, k), *q = &g_array_index(y, LogEntry, k);
      if (p->time != q->time || p->key != q->key || p->type != q->type) return FALSE;
    }
  }
  return TRUE;
}

static guint64 chat_total(const Chat *c) {
  guint64 n = 0;
  for (guint i = 0; i < c->cfg.n; i++)
    n += c->ents[i].log->len;
  return n;
}

/* Each log in time order (equal times need not be in key order: an immediate self-send made while handling
 * an event can carry a smaller key), and the handler always ran on its entity's worker. */
static gboolean chat_logs_ordered(const Chat *c) {
  for (guint i = 0; i < c->cfg.n; i++) {
    const GArray *x = c->ents[i].log;
    for (guint k = 0; k < x->len; k++) {
      const LogEntry *p = &g_array_index(x, LogEntry, k);
      if (!p->worker_ok) return FALSE;
      if (k > 0 && g_array_index(x, LogEntry, k - 1).time > p->time) return FALSE;
    }
  }
  return TRUE;
}

/* ---- Determinism ---- */

/* With an exact stop (stop time), the partitioned engine at any thread count and partitioning gives every
 * entity the events of the sequential engine in the same order. */
static void test_same_as_sequential(void) {
  const SimTime stop = 60000;
  Chat ref;
  chat_init(&ref, 37, 0, SIM_PARTITION_BLOCKS);
  sim_engine_set_stop_time(ref.engine, stop);
  CU_ASSERT_EQUAL(sim_engine_run(ref.engine), SIM_STOP_TIME);
  CU_ASSERT(chat_total(&ref) > 3000);
  CU_ASSERT(chat_logs_ordered(&ref));
  struct {
    guint threads;
    SimPartitioning how;
  } cases[] = {{1, SIM_PARTITION_BLOCKS},      {2, SIM_PARTITION_BLOCKS},      {3, SIM_PARTITION_BLOCKS},
               {3, SIM_PARTITION_ROUND_ROBIN}, {5, SIM_PARTITION_ROUND_ROBIN}, {8, SIM_PARTITION_BLOCKS}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Chat c;
    chat_init(&c, 37, cases[i].threads, cases[i].how);
    g_autoptr(GError) error = NULL;
    CU_ASSERT_FATAL(sim_engine_prepare(c.engine, &error));
    CU_ASSERT_EQUAL(sim_engine_n_workers(c.engine), cases[i].threads);
    CU_ASSERT_EQUAL(sim_engine_n_groups(c.engine), 37);
    sim_engine_set_stop_time(c.engine, stop);
    CU_ASSERT_EQUAL(sim_engine_run(c.engine), SIM_STOP_TIME);
    CU_ASSERT(chat_logs_equal(&ref, &c));
    CU_ASSERT(chat_logs_ordered(&c));
    SimEngineStats a, b;
    sim_engine_get_stats(ref.engine, &a);
    sim_engine_get_stats(c.engine, &b);
    CU_ASSERT_EQUAL(a.events, b.events);
    CU_ASSERT_EQUAL(a.now, b.now);
    CU_ASSERT_EQUAL(sim_engine_pending(ref.engine), sim_engine_pending(c.engine));
    SimEngineWindowStats ws;
    sim_engine_get_window_stats(c.engine, &ws);
    CU_ASSERT(ws.windowed);
    CU_ASSERT_EQUAL(ws.lookahead, 1000);
    CU_ASSERT(ws.windows >= (guint64)(stop / 1000) / 2); /* windows of at most L, some skipped ahead */
    guint64 sum = 0, remote = 0;
    for (guint w = 0; w < ws.workers; w++) {
      SimWorkerStats st;
      CU_ASSERT(sim_engine_get_worker_stats(c.engine, w, &st));
      sum += st.events;
      remote += st.sent_remote;
      CU_ASSERT(st.entities >= 1);
    }
    CU_ASSERT_EQUAL(sum, b.events);
    if (ws.workers > 1) CU_ASSERT(remote > 0);
    chat_clear(&c);
  }
  chat_clear(&ref);
}

/* Windows are cut by the lookahead of the groups, not of the partitions: window statistics, the event
 * count under a budget and the events before a stop request are the same at every thread count. */
static void test_window_rules_thread_independent(void) {
  guint64 windows = 0, events_budget = 0, events_stop = 0, hist0 = 0;
  for (guint t = 1; t <= 4; t++) {
    Chat c;
    chat_init(&c, 23, t, t == 4 ? SIM_PARTITION_ROUND_ROBIN : SIM_PARTITION_BLOCKS);
    sim_engine_set_max_events(c.engine, 7777);
    CU_ASSERT_EQUAL(sim_engine_run(c.engine), SIM_STOP_EVENTS);
    SimEngineStats st;
    sim_engine_get_stats(c.engine, &st);
    CU_ASSERT(st.events >= 7777);
    SimEngineWindowStats ws;
    sim_engine_get_window_stats(c.engine, &ws);
    if (t == 1) {
      windows = ws.windows;
      events_budget = st.events;
      hist0 = ws.window_events_hist[3];
    }
    CU_ASSERT_EQUAL(ws.windows, windows);
    CU_ASSERT_EQUAL(st.events, events_budget);
    CU_ASSERT_EQUAL(ws.window_events_hist[3], hist0);
    chat_clear(&c);

    /* A stop request takes effect at the end of its window, everywhere. */
    chat_init(&c, 23, t, SIM_PARTITION_BLOCKS);
    c.cfg.stop_after = 6;
    CU_ASSERT_EQUAL(sim_engine_run(c.engine), SIM_STOP_REQUESTED);
    sim_engine_get_stats(c.engine, &st);
    if (t == 1) events_stop = st.events;
    CU_ASSERT_EQUAL(st.events, events_stop);
    chat_clear(&c);
  }
  /* The sequential engine stops right after the requesting event: never later than the windows. */
  Chat s;
  chat_init(&s, 23, 0, SIM_PARTITION_BLOCKS);
  s.cfg.stop_after = 6;
  CU_ASSERT_EQUAL(sim_engine_run(s.engine), SIM_STOP_REQUESTED);
  SimEngineStats st;
  sim_engine_get_stats(s.engine, &st);
  CU_ASSERT(st.events <= events_stop);
  CU_ASSERT(st.events > 0);
  chat_clear(&s);
}

/* Runs resumed after a stop time, and a new layout after adding an entity between runs, give the same logs
 * as one run. */
static void test_resume_and_relayout(void) {
  Chat one, two;
  chat_init(&one, 11, 2, SIM_PARTITION_BLOCKS);
  chat_init(&two, 11, 3, SIM_PARTITION_BLOCKS);
  sim_engine_set_stop_time(one.engine, 40000);
  CU_ASSERT_EQUAL(sim_engine_run(one.engine), SIM_STOP_TIME);
  sim_engine_set_stop_time(two.engine, 15000);
  CU_ASSERT_EQUAL(sim_engine_run(two.engine), SIM_STOP_TIME);
  SimEngineStats mid;
  sim_engine_get_stats(two.engine, &mid);
  CU_ASSERT(mid.now < 15000 && mid.now >= 14000);
  sim_engine_set_threads(two.engine, 2, SIM_PARTITION_ROUND_ROBIN); /* a new layout between runs */
  sim_engine_set_stop_time(two.engine, 40000);
  CU_ASSERT_EQUAL(sim_engine_run(two.engine), SIM_STOP_TIME);
  CU_ASSERT(chat_logs_equal(&one, &two));
  /* An entity added between runs, with an event scheduled before the next prepare: nobody sends to it
   * (destinations are drawn among the first n), so the others' logs stay the same. */
  ChatEntity extra = {.cfg = &two.cfg, .log = g_array_new(FALSE, FALSE, sizeof(LogEntry))};
  SimEntityId xid = sim_engine_add_entity(two.engine, &chat_kind, &extra);
  CU_ASSERT_EQUAL(xid, 11);
  sim_engine_schedule(two.engine, xid, xid, 45000, 0, 0, 0);
  sim_engine_schedule(one.engine, 0, 0, 45000, 0, 0, 0);
  SimEngineStats a, b;
  sim_engine_get_stats(one.engine, &a);
  sim_engine_get_stats(two.engine, &b);
  CU_ASSERT_EQUAL(a.events, b.events);
  /* Back to the sequential engine for the rest. */
  sim_engine_set_threads(two.engine, 0, SIM_PARTITION_BLOCKS);
  sim_engine_set_threads(one.engine, 0, SIM_PARTITION_BLOCKS);
  sim_engine_set_stop_time(one.engine, 50000);
  sim_engine_set_stop_time(two.engine, 50000);
  CU_ASSERT_EQUAL(sim_engine_run(one.engine), SIM_STOP_TIME);
  CU_ASSERT_EQUAL(sim_engine_run(two.engine), SIM_STOP_TIME);
  /* The extra entity got its event (and sent one on to one of the first n at 45000 + L + k quanta), and
   * entity 0 of `one` got the event scheduled for it instead. */
  CU_ASSERT_EQUAL(extra.log->len, 1);
  CU_ASSERT_EQUAL(g_array_index(extra.log, LogEntry, 0).time, 45000);
  CU_ASSERT(chat_logs_ordered(&two));
  g_array_unref(extra.log);
  chat_clear(&one);
  chat_clear(&two);
}

/* ---- Mailbox merge order under adversarial ties ---- */

/* Senders (one group each) all send to the receiver, entity 0, at exactly the same times; the receiver also
 * has its own events at those times. Whatever partition a sender is in, and in whatever order the mailboxes
 * are drained, the receiver sees (time, source, sequence) order. */
typedef struct {
  GArray *got; /* SimEvent */
  guint bursts;
} TieState;

static void tie_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  TieState *s = state;
  SimEntityId self = sim_ctx_self(ctx);
  if (self == 0) {
    g_array_append_val(s->got, *ev);
    return;
  }
  /* A sender: a burst of 5 events to the receiver at exactly now + 1000, then again in later windows. */
  for (guint i = 0; i < 5; i++)
    sim_ctx_send(ctx, 0, 1000, (uint16_t)i, 0, self);
  if (ev->payload < s->bursts) sim_ctx_send(ctx, self, 1000, 0, 0, ev->payload + 1);
}

static const SimEntityKind tie_kind = {.name = "tie", .handle = tie_handle};

static GArray *tie_run(guint threads, SimPartitioning how, guint n_senders) {
  TieState st = {.got = g_array_new(FALSE, FALSE, sizeof(SimEvent)), .bursts = 4};
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  for (guint i = 0; i <= n_senders; i++)
    sim_engine_add_entity(engine, &tie_kind, &st);
  /* Senders only talk to the receiver; declared links, no default. */
  for (guint i = 1; i <= n_senders; i++)
    sim_engine_declare_link(engine, i, 0, 1000);
  /* Senders start at 0 in reverse id order of scheduling, and the receiver has events of its own at the
   * arrival times (smaller source id: they come first among equals). */
  for (guint i = n_senders; i >= 1; i--)
    sim_engine_schedule(engine, i, i, 0, 0, 0, 1);
  for (guint k = 1; k <= 5; k++)
    sim_engine_schedule(engine, 0, 0, (SimTime)k * 1000, 7, 0, 0);
  sim_engine_set_threads(engine, threads, how);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FATAL(sim_engine_prepare(engine, &error));
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  return st.got;
}

static void test_mailbox_merge_ties(void) {
  const guint n = 9;
  g_autoptr(GArray) ref = tie_run(0, SIM_PARTITION_BLOCKS, n);
  /* 5 receiver events + n senders x 4 bursts x 5. */
  CU_ASSERT_EQUAL(ref->len, 5 + n * 4 * 5);
  for (guint k = 1; k < ref->len; k++) {
    const SimEvent *p = &g_array_index(ref, SimEvent, k - 1), *q = &g_array_index(ref, SimEvent, k);
    CU_ASSERT(p->time < q->time || (p->time == q->time && p->key < q->key));
  }
  /* At each arrival time: the receiver's own event first (source 0), then senders by id, each in send order.
   */
  const SimEvent *first = &g_array_index(ref, SimEvent, 0);
  CU_ASSERT_EQUAL(first->time, 1000);
  CU_ASSERT_EQUAL(sim_event_src(first), 0);
  CU_ASSERT_EQUAL(sim_event_src(&g_array_index(ref, SimEvent, 1)), 1);
  CU_ASSERT_EQUAL(g_array_index(ref, SimEvent, 1).type, 0);
  CU_ASSERT_EQUAL(g_array_index(ref, SimEvent, 5).type, 4);
  CU_ASSERT_EQUAL(sim_event_src(&g_array_index(ref, SimEvent, 6)), 2);
  for (guint t = 1; t <= 4; t++)
    for (guint h = 0; h < 2; h++) {
      g_autoptr(GArray) got = tie_run(t, h ? SIM_PARTITION_ROUND_ROBIN : SIM_PARTITION_BLOCKS, n);
      CU_ASSERT_EQUAL_FATAL(got->len, ref->len);
      CU_ASSERT(memcmp(got->data, ref->data, ref->len * sizeof(SimEvent)) == 0);
    }
}

/* ---- Lookahead and its refusal ---- */

static void noop_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  (void)ctx, (void)state, (void)ev;
}
static const SimEntityKind kind_a = {.name = "alpha", .handle = noop_handle};
static const SimEntityKind kind_b = {.name = "beta", .handle = noop_handle};

static SimEngine *hand_built(void) {
  SimEngine *e = sim_engine_new(1);
  for (guint i = 0; i < 8; i++)
    sim_engine_add_entity(e, i % 2 ? &kind_b : &kind_a, NULL);
  return e;
}

static void test_lookahead_hand_built(void) {
  g_autoptr(SimEngine) e = hand_built();
  g_autoptr(GError) error = NULL;
  /* Groups {0,1} {2} {3} {4,5} {6} {7}. */
  sim_engine_keep_together(e, 1, 0);
  sim_engine_keep_together(e, 5, 4);
  sim_engine_declare_link(e, 0, 1, 0); /* inside a group: never the lookahead, even at 0 */
  sim_engine_declare_link(e, 4, 5, 1);
  sim_engine_declare_link(e, 1, 2, 50);
  sim_engine_declare_link(e, 2, 3, 30);
  sim_engine_declare_link(e, 3, 2, 70);
  sim_engine_declare_link(e, 5, 6, 40);
  sim_engine_declare_link(e, 2, 3, 35); /* a second declaration of a pair: the smallest counts */
  sim_engine_set_threads(e, 2, SIM_PARTITION_BLOCKS);
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  SimEngineWindowStats ws;
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.groups, 6);
  CU_ASSERT_EQUAL(ws.workers, 2);
  CU_ASSERT(ws.windowed);
  CU_ASSERT_EQUAL(ws.lookahead, 30);
  CU_ASSERT_EQUAL(ws.lookahead_src, 2);
  CU_ASSERT_EQUAL(ws.lookahead_dst, 3);
  /* Blocks: groups in order, cut at about half the entities; a group never split. */
  CU_ASSERT_EQUAL(sim_engine_partition_of(e, 0), sim_engine_partition_of(e, 1));
  CU_ASSERT_EQUAL(sim_engine_partition_of(e, 4), sim_engine_partition_of(e, 5));
  CU_ASSERT_EQUAL(sim_engine_partition_of(e, 0), 0);
  CU_ASSERT_EQUAL(sim_engine_partition_of(e, 7), 1);
  /* Merging the two ends of the smallest link: the next smallest between groups wins. */
  sim_engine_keep_together(e, 3, 2);
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.groups, 5);
  CU_ASSERT_EQUAL(ws.lookahead, 40);
  CU_ASSERT_EQUAL(ws.lookahead_src, 5);
  /* A default delay below every link. */
  sim_engine_declare_default_delay(e, 25);
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.lookahead, 25);
  CU_ASSERT_EQUAL(ws.lookahead_src, SIM_ENTITY_NONE);
  /* Round robin deals groups in turn: groups {0,1} {2,3} {4,5} {6} {7} -> 0 1 0 1 0. */
  sim_engine_set_threads(e, 2, SIM_PARTITION_ROUND_ROBIN);
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  guint want[8] = {0, 0, 1, 1, 0, 0, 1, 0};
  for (guint i = 0; i < 8; i++)
    CU_ASSERT_EQUAL(sim_engine_partition_of(e, i), want[i]);
  /* One group: no windows, one worker, whatever the thread count. */
  sim_engine_keep_all_together(e);
  sim_engine_set_threads(e, 4, SIM_PARTITION_BLOCKS);
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.groups, 1);
  CU_ASSERT_EQUAL(ws.workers, 1);
  CU_ASSERT_FALSE(ws.windowed);
  CU_ASSERT_EQUAL(ws.lookahead, SIM_TIME_MAX);
}

/* No declared traffic between groups: the lookahead is unbounded and one window runs to the stop time. */
static void test_lookahead_unbounded(void) {
  g_autoptr(SimEngine) e = hand_built();
  for (guint i = 0; i < 8; i++)
    sim_engine_schedule(e, i, i, 100 * i, 0, 0, 0);
  sim_engine_set_threads(e, 3, SIM_PARTITION_BLOCKS);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  CU_ASSERT_EQUAL(sim_engine_run(e), SIM_STOP_EMPTY);
  SimEngineWindowStats ws;
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.lookahead, SIM_TIME_MAX);
  CU_ASSERT_EQUAL(ws.windows, 1);
  CU_ASSERT_EQUAL(ws.window_events_max, 8);
  CU_ASSERT_EQUAL(ws.window_events_hist[4], 1); /* 8 events: bucket 8..15 */
}

static void test_zero_lookahead_refused(void) {
  g_autoptr(SimEngine) e = hand_built();
  sim_engine_declare_link(e, 2, 3, 10);
  sim_engine_declare_link(e, 5, 6, 0);
  sim_engine_set_threads(e, 2, SIM_PARTITION_BLOCKS);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FALSE(sim_engine_prepare(e, &error));
  CU_ASSERT(g_error_matches(error, SIM_ENGINE_ERROR, SIM_ENGINE_ERROR_ZERO_LOOKAHEAD));
  CU_ASSERT_PTR_NOT_NULL_FATAL(error);
  CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "link entity 5 (beta) -> entity 6 (alpha)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(error->message, "0 ns"));
  g_clear_error(&error);
  /* The sequential engine does not care, and keeping the two together resolves it. */
  sim_engine_set_threads(e, 0, SIM_PARTITION_BLOCKS);
  CU_ASSERT(sim_engine_prepare(e, &error));
  sim_engine_keep_together(e, 5, 6);
  sim_engine_set_threads(e, 2, SIM_PARTITION_BLOCKS);
  CU_ASSERT(sim_engine_prepare(e, &error));
  SimEngineWindowStats ws;
  sim_engine_get_window_stats(e, &ws);
  CU_ASSERT_EQUAL(ws.lookahead, 10);
  /* A zero default delay is refused too, with its own message. */
  sim_engine_declare_default_delay(e, 0);
  CU_ASSERT_FALSE(sim_engine_prepare(e, &error));
  CU_ASSERT_PTR_NOT_NULL(error ? strstr(error->message, "default delay between groups is 0 ns") : NULL);
}

/* A send across partitions that breaks its declaration aborts, naming both entities. */
static void liar_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  (void)state, (void)ev;
  if (sim_ctx_self(ctx) == 0) sim_ctx_send(ctx, 1, 5, 0, 0, 0);
}
static const SimEntityKind liar_kind = {.name = "liar", .handle = liar_handle};

static void test_lookahead_violation_aborts(void) {
  int fds[2];
  CU_ASSERT_FATAL(pipe(fds) == 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    SimEngine *e = sim_engine_new(1);
    sim_engine_add_entity(e, &liar_kind, NULL);
    sim_engine_add_entity(e, &liar_kind, NULL);
    sim_engine_declare_link(e, 0, 1, 100);
    sim_engine_schedule(e, 0, 0, 0, 0, 0, 0);
    sim_engine_set_threads(e, 2, SIM_PARTITION_BLOCKS);
    sim_engine_run(e);
    _exit(0); /* not reached */
  }
  close(fds[1]);
  char buf[2048] = {0};
  gsize got = 0;
  ssize_t r;
  while (got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
    got += (gsize)r;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CU_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "entity 0 (liar) sent an event to entity 1 (liar)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "5 ns ahead, less than the lookahead of 100 ns"));
}

/* ---- PHOLD ---- */

static void test_phold_threads(void) {
  SimPholdParams p;
  sim_phold_params_default(&p);
  p.lps = 500;
  p.pending = 2000;
  p.events = 300000;
  p.lookahead_s = 0.05;
  g_autofree SimPholdResult *ref = g_new(SimPholdResult, 1), *r = g_new(SimPholdResult, 1);
  p.threads = 1;
  CU_ASSERT_FATAL(sim_phold_run(&p, ref, NULL));
  CU_ASSERT(ref->events >= 300000 && ref->events < 300000 + 2000);
  CU_ASSERT_EQUAL(ref->final_pending, 2000);
  CU_ASSERT(ref->windows.windows > 100);
  for (guint t = 2; t <= 4; t++)
    for (guint h = 0; h < 2; h++) {
      p.threads = t;
      p.partitioning = h ? SIM_PARTITION_ROUND_ROBIN : SIM_PARTITION_BLOCKS;
      CU_ASSERT_FATAL(sim_phold_run(&p, r, NULL));
      CU_ASSERT_EQUAL(r->checksum, ref->checksum);
      CU_ASSERT_EQUAL(r->events, ref->events);
      CU_ASSERT_EQUAL(r->end_time, ref->end_time);
      CU_ASSERT_EQUAL(r->peak_pending, ref->peak_pending);
      CU_ASSERT_EQUAL(r->windows.windows, ref->windows.windows);
      CU_ASSERT_EQUAL(r->windows.workers, t);
      guint64 remote = 0;
      for (guint w = 0; w < t; w++)
        remote += r->workers[w].sent_remote;
      /* remote 0.25, and (t-1)/t of the other LPs are elsewhere. */
      double share = (double)remote / (double)r->events, want = 0.25 * (t - 1) / t;
      CU_ASSERT(fabs(share - want) < 0.02);
    }
  /* CPU timing: the critical path is at most the workers' CPU time and at least its share per worker. */
  p.threads = 2;
  p.partitioning = SIM_PARTITION_BLOCKS;
  p.cpu_timing = TRUE;
  CU_ASSERT_FATAL(sim_phold_run(&p, r, NULL));
  CU_ASSERT_EQUAL(r->checksum, ref->checksum);
  double cpu = r->workers[0].cpu_s + r->workers[1].cpu_s;
  CU_ASSERT(r->windows.critical_s > 0);
  CU_ASSERT(r->windows.critical_s <= cpu * (1 + 1e-9));
  CU_ASSERT(r->windows.critical_s >= cpu / 2 * (1 - 1e-9));
  CU_ASSERT(ref->windows.critical_s == 0 && ref->workers[0].cpu_s == 0); /* not measured by default */
  p.cpu_timing = FALSE;
  /* Another lookahead is another workload. */
  p.threads = 2;
  p.lookahead_s = 0.1;
  CU_ASSERT_FATAL(sim_phold_run(&p, r, NULL));
  CU_ASSERT_NOT_EQUAL(r->checksum, ref->checksum);
  /* Classic PHOLD (no lookahead) cannot run on windows. */
  p.lookahead_s = 0;
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FALSE(sim_phold_run(&p, r, &error));
  CU_ASSERT(g_error_matches(error, SIM_ENGINE_ERROR, SIM_ENGINE_ERROR_ZERO_LOOKAHEAD));
}

/* ---- NUMA on this machine ---- */

/* The node of each worker by the engine's rule: worker w runs on the node of the w-th CPU this process may
 * use, in node order. */
static int expected_worker_node(guint w) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -1;
  GArray *nodes = g_array_new(FALSE, FALSE, sizeof(int));
  struct bitmask *bm = numa_allocate_cpumask();
  for (int node = 0; node <= numa_max_node(); node++) {
    if (numa_node_to_cpus(node, bm) != 0) continue;
    for (unsigned c = 0; c < bm->size && c < CPU_SETSIZE; c++)
      if (numa_bitmask_isbitset(bm, c) && CPU_ISSET(c, &allowed)) g_array_append_val(nodes, node);
  }
  numa_free_cpumask(bm);
  int r = nodes->len ? g_array_index(nodes, int, w % nodes->len) : -1;
  g_array_unref(nodes);
  return r;
}

/* What the engine placed, after a run with `threads` workers of PHOLD-like entities: the report is
 * complete and consistent; with one memory node nobody is pinned and everything is on node 0; with several,
 * workers sit node by node, their queues and mailboxes on their node, entity records on their worker's node
 * and the shared table spread evenly over the worker nodes (no weights callback: uniform). */
static void test_numa_placement(void) {
  const guint threads = 4;
  const guint nodes = sim_numa_hw_nodes();
  g_autoptr(SimEngine) e = sim_engine_new(1);
  for (guint i = 0; i < 4200; i++)
    sim_engine_add_entity(e, &kind_a, NULL);
  for (guint i = 0; i < 4200; i++)
    sim_engine_schedule(e, i, i, i, 0, 0, 0);
  gsize len = 256 * 4096;
  void *table = g_aligned_alloc(len / 4096, 4096, 4096);
  memset(table, 1, len);
  sim_engine_share_table(e, "a table", table, len);
  sim_engine_set_threads(e, threads, SIM_PARTITION_BLOCKS);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FATAL(sim_engine_prepare(e, &error));
  CU_ASSERT_EQUAL(sim_engine_run(e), SIM_STOP_EMPTY);
  guint64 worker_nodes = 0;
  for (guint w = 0; w < threads; w++) {
    SimWorkerStats st;
    CU_ASSERT_FATAL(sim_engine_get_worker_stats(e, w, &st));
    CU_ASSERT_EQUAL(st.entities, 1050);
    if (nodes == 1) {
      CU_ASSERT_EQUAL(st.node, -1);
    } else {
      CU_ASSERT_EQUAL(st.node, expected_worker_node(w));
      if (st.node >= 0) worker_nodes |= G_GUINT64_CONSTANT(1) << st.node;
    }
  }
  guint n = sim_engine_numa_report(e, NULL, 0);
  /* 5 chunks of entity records, 4 queues, 4 x 3 x 2 mailboxes, the table. */
  CU_ASSERT_EQUAL(n, 5 + 4 + 24 + 1);
  g_autofree SimNumaPlacement *pl = g_new0(SimNumaPlacement, n);
  CU_ASSERT_EQUAL(sim_engine_numa_report(e, pl, n), n);
  gboolean saw_table = FALSE;
  for (guint i = 0; i < n; i++) {
    CU_ASSERT(pl[i].bytes > 0 && pl[i].bytes % 4096 == 0);
    CU_ASSERT_EQUAL(pl[i].n_nodes, nodes);
    double intended = 0;
    gsize actual = 0;
    for (guint k = 0; k < pl[i].n_nodes; k++) {
      intended += pl[i].intended[k];
      actual += pl[i].actual[k];
    }
    CU_ASSERT(fabs(intended - (double)pl[i].bytes) < 1e-6 * (double)pl[i].bytes);
    CU_ASSERT_EQUAL(actual + pl[i].absent, pl[i].bytes);
    gboolean is_table = strcmp(pl[i].name, "a table") == 0;
    if (is_table) {
      saw_table = TRUE;
      CU_ASSERT_EQUAL(pl[i].bytes, len);
      CU_ASSERT_EQUAL(pl[i].absent, 0);
    }
    if (nodes == 1) {
      CU_ASSERT_EQUAL(pl[i].actual[0], pl[i].bytes - pl[i].absent);
      continue;
    }
    /* Several nodes: every present page where it was meant to go (the table within a page per region per
     * node: the staircase's rounding and the kernel's interleave start). */
    for (guint k = 0; k < pl[i].n_nodes; k++) {
      double want = pl[i].bytes - pl[i].absent > 0
                        ? pl[i].intended[k] * (double)(pl[i].bytes - pl[i].absent) / (double)pl[i].bytes
                        : 0;
      double slack = is_table ? 2.0 * 4096 * nodes : 0.5;
      if (fabs((double)pl[i].actual[k] - want) > slack)
        fprintf(stderr, "numa: %s node %u: %zu bytes, meant %.0f\n", pl[i].name, k, pl[i].actual[k], want);
      CU_ASSERT(fabs((double)pl[i].actual[k] - want) <= slack);
    }
    if (is_table)
      for (guint k = 0; k < nodes; k++)
        CU_ASSERT((pl[i].actual[k] > 0) == ((worker_nodes >> k) & 1));
  }
  CU_ASSERT(saw_table);
  g_aligned_free(table);
}

/* ---- The relay of one block on several threads, on the month's topology ---- */

typedef struct {
  SimTime *have, *push, *ann; /* per block and node */
  guint64 reached, messages;
  RelayWorkStats st;
} RelayRun;

enum { RELAY_BLOCKS = 12 };

/* RELAY_BLOCKS blocks from the gateways of several pools, with `threads` relay threads: stopping as
 * geo_publish does (once each miner's first gateway and the vantage points' first block message and
 * announcement are final), once every special has the block, or at the end (as with miners on ordinary
 * nodes), in turn. Every node's times are compared, the unwatched ones too: where the stop falls does not
 * depend on the threads either. */
static void relay_run(const SimScenario *sc, const NetTopology *t, guint threads, RelayRunMode mode,
                      RelayRun *out) {
  const NetGeoParams *gp = sc->pow.network.params;
  const RelayModel *m = (const RelayModel *)gp->relay.model;
  g_autoptr(RelayWork) w = relay_work_new(t);
  g_autofree guint *pool_miners = g_new(guint, MAX(sc->n_pools, 1));
  for (guint i = 0; i < sc->n_pools; i++) pool_miners[i] = sc->pools[i].miners;
  g_autofree guint32 *stop_group = g_new(guint32, MAX(t->n_special, 1));
  RelayStop stop = relay_stop_specials(gp, t, pool_miners, stop_group);
  RelayStop nodes = relay_stop_nodes(t->n_special);
  relay_work_set_threads(w, threads);
  relay_work_set_run_mode(w, mode);
  guint32 n = t->n_nodes;
  out->have = g_new(SimTime, (gsize)RELAY_BLOCKS * n);
  out->push = g_new(SimTime, (gsize)RELAY_BLOCKS * n);
  out->ann = g_new(SimTime, (gsize)RELAY_BLOCKS * n);
  out->reached = out->messages = 0;
  for (guint b = 0; b < RELAY_BLOCKS; b++) {
    guint32 src[2] = {gp->n_vantages + b % (t->n_special - gp->n_vantages),
                      gp->n_vantages + (b + 5) % (t->n_special - gp->n_vantages)};
    SimTime src_t[2] = {(SimTime)b * 13 * SIM_NS_PER_S, (SimTime)b * 13 * SIM_NS_PER_S + SIM_NS_PER_MS};
    RelayBlock blk = {.sources = src,
                      .source_t = src_t,
                      .n_sources = 1 + b % 2,
                      .size_bytes = 20000 + 500.0 * b,
                      .gas_used = 1e6 * b};
    SimRng rng;
    sim_rng_init(&rng, sc->seed, (UINT64_C(1) << 63) | b);
    m->propagate(gp->relay.params, gp, t, &blk, b % 3 == 2 ? NULL : b % 3 == 1 ? &nodes : &stop, &rng, w);
    for (guint32 v = 0; v < n; v++) {
      out->have[(gsize)b * n + v] = relay_work_have(w, v);
      out->push[(gsize)b * n + v] = relay_work_first_push(w, v);
      out->ann[(gsize)b * n + v] = relay_work_announce(w, v);
    }
    out->reached += relay_work_reached(w);
    out->messages += relay_work_messages(w);
  }
  relay_work_get_stats(w, &out->st);
}

static void relay_run_clear(RelayRun *r) {
  g_free(r->have);
  g_free(r->push);
  g_free(r->ann);
}

static void test_relay_threads_month_topology(void) {
  g_autoptr(SimDiag) d = sim_diag_new("scenarios/pools-2019.json");
  g_autoptr(SimScenario) sc = sim_scenario_load_file("scenarios/pools-2019.json", NULL, d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  GError *e = NULL;
  g_autoptr(NetTopology) t = net_topology_build(sc->pow.network.params, sc->seed, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  RelayRun ref, got;
  relay_run(sc, t, 1, RELAY_RUN_ALL, &ref);
  gsize cells = (gsize)RELAY_BLOCKS * t->n_nodes;
  /* The month's groups: the pool gateways joined by 0-ms links in their cities, everyone else alone; the
   * lookahead is the 6-ms floor of a European link (11 ms mean, Pareto floor mean - 5 ms). */
  CU_ASSERT_EQUAL(ref.st.lookahead_ns, 6 * SIM_NS_PER_MS);
  CU_ASSERT(ref.st.groups > t->n_nodes - 40 && ref.st.largest_group > 1 && ref.st.largest_group < 16);
  CU_ASSERT(ref.reached > RELAY_BLOCKS * t->n_special);
  /* 2, 3, 4 and 8 threads, and 4 parts on the calling thread alone. */
  for (guint i = 0; i < 5; i++) {
    guint threads = i < 3 ? i + 2 : i == 3 ? 8 : 4;
    relay_run(sc, t, threads, i < 4 ? RELAY_RUN_ALL : RELAY_RUN_CALLER, &got);
    CU_ASSERT_EQUAL(got.st.threads, threads);
    CU_ASSERT_EQUAL(got.st.alone, i < 4 ? 0 : RELAY_BLOCKS);
    CU_ASSERT_EQUAL(memcmp(got.have, ref.have, cells * sizeof(SimTime)), 0);
    CU_ASSERT_EQUAL(memcmp(got.push, ref.push, cells * sizeof(SimTime)), 0);
    CU_ASSERT_EQUAL(memcmp(got.ann, ref.ann, cells * sizeof(SimTime)), 0);
    CU_ASSERT_EQUAL(got.reached, ref.reached);
    CU_ASSERT_EQUAL(got.messages, ref.messages);
    CU_ASSERT_EQUAL(got.st.windows, ref.st.windows);
    CU_ASSERT_EQUAL(got.st.steps, ref.st.steps);
    CU_ASSERT_EQUAL(got.st.work, ref.st.work);
    relay_run_clear(&got);
  }
  relay_run_clear(&ref);
}

int register_suites(void) {
  ADD_SUITE("determinism", TEST(test_same_as_sequential), TEST(test_window_rules_thread_independent),
            TEST(test_resume_and_relayout), TEST(test_phold_threads));
  ADD_SUITE("merge", TEST(test_mailbox_merge_ties));
  ADD_SUITE("lookahead", TEST(test_lookahead_hand_built), TEST(test_lookahead_unbounded),
            TEST(test_zero_lookahead_refused), TEST(test_lookahead_violation_aborts));
  ADD_SUITE("numa", TEST(test_numa_placement));
  ADD_SUITE("relay-threads", TEST(test_relay_threads_month_topology));
  return 0;
}
