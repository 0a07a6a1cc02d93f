/* test_engine.c: unit tests of the event engine (total order, run control, statistics) and of PHOLD. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cunit-main.h"
#include "engine.h"
#include "phold.h"

/* ---- Helpers ---- */

/* Records every delivered event and checks the context against it. Shared by all entities of a test
 * (fine in a test: the engine runs handlers one at a time). */
typedef struct {
  GArray *events;  /* SimEvent, in delivery order */
  guint ctx_wrong; /* deliveries whose ctx disagreed with the event */
  guint64 stop_at_payload;
  guint64 cancel_at_payload;
  volatile int *cancel;
} Recorder;

static void recorder_init(Recorder *rec) {
  memset(rec, 0, sizeof *rec);
  rec->events = g_array_new(FALSE, FALSE, sizeof(SimEvent));
  rec->stop_at_payload = UINT64_MAX;
  rec->cancel_at_payload = UINT64_MAX;
}

static void recorder_clear(Recorder *rec) { g_array_unref(rec->events); }

static void record_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Recorder *rec = state;
  if (sim_ctx_self(ctx) != ev->dst || sim_ctx_now(ctx) != ev->time) rec->ctx_wrong++;
  g_array_append_val(rec->events, *ev);
  if (ev->payload == rec->stop_at_payload) sim_ctx_stop(ctx);
  if (ev->payload == rec->cancel_at_payload) *rec->cancel = 1;
}

static const SimEntityKind record_kind = {.name = "record", .handle = record_handle};

static SimEngine *engine_with_recorders(guint n, Recorder *rec) {
  SimEngine *engine = sim_engine_new(1);
  for (guint i = 0; i < n; i++) CU_ASSERT_EQUAL(sim_engine_add_entity(engine, &record_kind, rec), i);
  CU_ASSERT_EQUAL(sim_engine_n_entities(engine), n);
  return engine;
}

static int event_cmp(const void *pa, const void *pb) {
  const SimEvent *a = pa, *b = pb;
  if (a->time != b->time) return a->time < b->time ? -1 : 1;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return 0;
}

static gboolean event_equal(const SimEvent *a, const SimEvent *b) {
  return a->time == b->time && a->key == b->key && a->dst == b->dst && a->type == b->type && a->aux == b->aux &&
         a->payload == b->payload;
}

static uint64_t make_key(SimEntityId src, uint64_t seq) { return ((uint64_t)src << 40) | seq; }

/* ---- Order ---- */

/* Events at one time come out by (source, source sequence), whatever order they were scheduled in. */
static void test_equal_times_by_src_seq(void) {
  enum { SRCS = 20, PER_SRC = 5 };
  Recorder rec;
  recorder_init(&rec);
  g_autoptr(SimEngine) engine = engine_with_recorders(SRCS, &rec);
  /* A shuffled list of sources, each PER_SRC times: scheduling order interleaves the sources. */
  SimEntityId order[SRCS * PER_SRC];
  for (int i = 0; i < SRCS * PER_SRC; i++) order[i] = (SimEntityId)(i % SRCS);
  g_autoptr(GRand) rand = g_rand_new_with_seed(5);
  for (int i = SRCS * PER_SRC - 1; i > 0; i--) {
    int j = g_rand_int_range(rand, 0, i + 1);
    SimEntityId t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  CU_ASSERT_NOT_EQUAL(order[0], 0); /* the shuffle did shuffle (fixed seed) */
  guint count[SRCS] = {0};
  for (int i = 0; i < SRCS * PER_SRC; i++) {
    SimEntityId src = order[i];
    SimEntityId dst = (SimEntityId)g_rand_int_range(rand, 0, SRCS);
    sim_engine_schedule(engine, src, dst, 1000, 0, 0, src * 100u + count[src]++);
  }
  CU_ASSERT_EQUAL(sim_engine_pending(engine), SRCS * PER_SRC);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL_FATAL(rec.events->len, SRCS * PER_SRC);
  guint wrong = 0;
  for (guint i = 0; i < rec.events->len; i++) {
    const SimEvent *ev = &g_array_index(rec.events, SimEvent, i);
    SimEntityId src = i / PER_SRC;
    uint64_t seq = i % PER_SRC;
    if (ev->payload != src * 100u + seq || ev->key != make_key(src, seq) || sim_event_src(ev) != src ||
        ev->time != 1000)
      wrong++;
  }
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(rec.ctx_wrong, 0);
  recorder_clear(&rec);
}

/* Many random events (with many equal times) come out exactly as qsort by (time, key) orders them. */
static void test_random_events_sorted(void) {
  enum { N = 20000, ENTITIES = 37 };
  Recorder rec;
  recorder_init(&rec);
  g_autoptr(SimEngine) engine = engine_with_recorders(ENTITIES, &rec);
  g_autoptr(GRand) rand = g_rand_new_with_seed(11);
  SimEvent *expect = g_new(SimEvent, N);
  uint64_t seq[ENTITIES] = {0};
  for (int i = 0; i < N; i++) {
    SimEntityId src = (SimEntityId)g_rand_int_range(rand, 0, ENTITIES);
    SimEntityId dst = (SimEntityId)g_rand_int_range(rand, 0, ENTITIES);
    SimTime t = g_rand_int_range(rand, 0, 500);
    uint16_t type = (uint16_t)g_rand_int_range(rand, 0, 65536), aux = (uint16_t)(i & 0xffff);
    expect[i] = (SimEvent){.time = t, .key = make_key(src, seq[src]++), .dst = dst, .type = type, .aux = aux,
                           .payload = (uint64_t)i};
    sim_engine_schedule(engine, src, dst, t, type, aux, (uint64_t)i);
  }
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.peak_pending, N);
  qsort(expect, N, sizeof *expect, event_cmp);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL_FATAL(rec.events->len, N);
  guint mismatches = 0;
  for (int i = 0; i < N; i++) mismatches += !event_equal(&g_array_index(rec.events, SimEvent, i), &expect[i]);
  CU_ASSERT_EQUAL(mismatches, 0);
  CU_ASSERT_EQUAL(rec.ctx_wrong, 0);
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.events, N);
  CU_ASSERT_EQUAL(stats.now, expect[N - 1].time);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 0);
  g_free(expect);
  recorder_clear(&rec);
}

/* Handlers that send 0..3 events each (delay >= 1 ns, so every new event sorts after the current one):
 * the delivery sequence must be strictly increasing in (time, key), every key must follow its source's
 * sequence, and nothing may be lost. Exercises the root replacement and plain pushes mixed. */
typedef struct {
  GArray *events;
  uint64_t budget; /* sends left */
  uint64_t sent;
  guint n_entities;
} Spawner;

static void spawn_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Spawner *sp = state;
  g_array_append_val(sp->events, *ev);
  SimRng *rng = sim_ctx_rng(ctx);
  /* Mean 1.5 sends per event while the budget lasts, so the queue grows and then drains. */
  uint64_t k = sim_rng_below(rng, 4);
  for (uint64_t i = 0; i < k && sp->budget > 0; i++, sp->budget--, sp->sent++) {
    SimEntityId dst = (SimEntityId)sim_rng_below(rng, sp->n_entities);
    SimTime delay = 1 + (SimTime)sim_rng_below(rng, 50);
    sim_ctx_send(ctx, dst, delay, (uint16_t)k, 0, ev->payload + 1);
  }
}

static const SimEntityKind spawn_kind = {.name = "spawn", .handle = spawn_handle};

static void test_handler_sends_order(void) {
  enum { ENTITIES = 50, INITIAL = 100 };
  Spawner sp = {.events = g_array_new(FALSE, FALSE, sizeof(SimEvent)), .budget = 200000, .n_entities = ENTITIES};
  g_autoptr(SimEngine) engine = sim_engine_new(3);
  for (guint i = 0; i < ENTITIES; i++) sim_engine_add_entity(engine, &spawn_kind, &sp);
  for (guint i = 0; i < INITIAL; i++) sim_engine_schedule(engine, i % ENTITIES, (i * 7) % ENTITIES, i % 13, 0, 0, 0);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL(sp.budget, 0);
  CU_ASSERT_EQUAL_FATAL(sp.events->len, INITIAL + sp.sent);
  guint out_of_order = 0;
  for (guint i = 1; i < sp.events->len; i++)
    out_of_order += event_cmp(&g_array_index(sp.events, SimEvent, i - 1), &g_array_index(sp.events, SimEvent, i)) >= 0;
  CU_ASSERT_EQUAL(out_of_order, 0);
  /* Every source's sequence numbers 0..k-1 each appear exactly once. */
  uint64_t seq_sum[ENTITIES] = {0}, seq_n[ENTITIES] = {0};
  guint bad = 0;
  for (guint i = 0; i < sp.events->len; i++) {
    const SimEvent *ev = &g_array_index(sp.events, SimEvent, i);
    SimEntityId src = sim_event_src(ev);
    if (src >= ENTITIES) {
      bad++;
      continue;
    }
    seq_sum[src] += ev->key & ((UINT64_C(1) << 40) - 1);
    seq_n[src]++;
  }
  for (guint s = 0; s < ENTITIES; s++) bad += seq_sum[s] != seq_n[s] * (seq_n[s] - 1) / 2;
  CU_ASSERT_EQUAL(bad, 0);
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.events, sp.events->len);
  CU_ASSERT(stats.peak_pending > INITIAL);
  g_array_unref(sp.events);
}

/* Zero-delay sends happen at the current time and take their place in the (time, src, seq) order: after
 * the lower sources' events at that time, before the higher ones'. */
typedef struct {
  GArray *log;      /* SimEvent */
  guint chain_left; /* zero-delay self-sends still to make */
} ZeroDelay;

static void zero_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  ZeroDelay *z = state;
  g_array_append_val(z->log, *ev);
  if (sim_ctx_self(ctx) == 1 && z->chain_left > 0) {
    z->chain_left--;
    sim_ctx_send(ctx, 1, 0, 0, 0, 1000 + z->chain_left);
  }
}

static const SimEntityKind zero_kind = {.name = "zero", .handle = zero_handle};

static void test_zero_delay_self_sends(void) {
  ZeroDelay z = {.log = g_array_new(FALSE, FALSE, sizeof(SimEvent)), .chain_left = 3};
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  for (int i = 0; i < 3; i++) sim_engine_add_entity(engine, &zero_kind, &z);
  sim_engine_schedule(engine, 2, 0, 100, 0, 0, 20); /* (100, src 2) */
  sim_engine_schedule(engine, 0, 1, 100, 0, 0, 1);  /* (100, src 0, seq 0): starts the chain */
  sim_engine_schedule(engine, 0, 0, 100, 0, 0, 2);  /* (100, src 0, seq 1) */
  sim_engine_schedule(engine, 0, 0, 101, 0, 0, 3);  /* later */
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  const uint64_t expect[] = {1, 2, 1002, 1001, 1000, 20, 3};
  CU_ASSERT_EQUAL_FATAL(z.log->len, G_N_ELEMENTS(expect));
  for (guint i = 0; i < G_N_ELEMENTS(expect); i++) {
    const SimEvent *ev = &g_array_index(z.log, SimEvent, i);
    CU_ASSERT_EQUAL(ev->payload, expect[i]);
    CU_ASSERT_EQUAL(ev->time, i + 1 < G_N_ELEMENTS(expect) ? 100 : 101);
  }
  /* The chain's keys are entity 1's sequence 0, 1, 2. */
  CU_ASSERT_EQUAL(g_array_index(z.log, SimEvent, 2).key, make_key(1, 0));
  CU_ASSERT_EQUAL(g_array_index(z.log, SimEvent, 4).key, make_key(1, 2));
  g_array_unref(z.log);
}

/* ---- Run control ---- */

static void test_stop_time_resume(void) {
  Recorder rec;
  recorder_init(&rec);
  g_autoptr(SimEngine) engine = engine_with_recorders(2, &rec);
  const SimTime times[] = {40, 10, 30, 20, 25};
  for (guint i = 0; i < G_N_ELEMENTS(times); i++) sim_engine_schedule(engine, 0, 1, times[i], 0, 0, (uint64_t)times[i]);
  sim_engine_set_stop_time(engine, 25);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_TIME);
  CU_ASSERT_EQUAL(rec.events->len, 2); /* 10, 20; 25 is at the stop time and stays */
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 3);
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.now, 20);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_TIME); /* nothing new below 25 */
  CU_ASSERT_EQUAL(rec.events->len, 2);
  sim_engine_set_stop_time(engine, 35);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_TIME);
  CU_ASSERT_EQUAL(rec.events->len, 4);
  sim_engine_set_stop_time(engine, SIM_TIME_MAX);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL_FATAL(rec.events->len, 5);
  const uint64_t order[] = {10, 20, 25, 30, 40};
  for (guint i = 0; i < 5; i++) CU_ASSERT_EQUAL(g_array_index(rec.events, SimEvent, i).payload, order[i]);
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.events, 5);
  CU_ASSERT_EQUAL(stats.now, 40);
  CU_ASSERT(stats.wall_s >= 0);
  recorder_clear(&rec);
}

/* An entity that sends itself the next tick, forever. */
typedef struct {
  guint64 ticks;
} Ticker;

static void tick_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Ticker *t = state;
  t->ticks++;
  sim_ctx_send(ctx, sim_ctx_self(ctx), 10, 0, 0, ev->payload + 1);
}

static const SimEntityKind tick_kind = {.name = "tick", .handle = tick_handle};

static SimEngine *ticker_engine(Ticker *t, guint n) {
  SimEngine *engine = sim_engine_new(1);
  for (guint i = 0; i < n; i++) {
    sim_engine_add_entity(engine, &tick_kind, t);
    sim_engine_schedule(engine, i, i, i, 0, 0, 0);
  }
  return engine;
}

static void test_max_events_exact(void) {
  Ticker t = {0};
  g_autoptr(SimEngine) engine = ticker_engine(&t, 3);
  sim_engine_set_max_events(engine, 0);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(t.ticks, 0);
  sim_engine_set_max_events(engine, 1000);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(t.ticks, 1000);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 3);
  sim_engine_set_max_events(engine, 1500); /* a total, not an increment */
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(t.ticks, 1500);
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.events, 1500);
  CU_ASSERT_EQUAL(stats.peak_pending, 3);
  /* 1500 events over 3 tickers at 0, 1, 2 + 10 k: the last is entity 2's 500th tick. */
  CU_ASSERT_EQUAL(stats.now, 2 + 10 * 499);
}

static void test_ctx_stop(void) {
  Recorder rec;
  recorder_init(&rec);
  rec.stop_at_payload = 7;
  g_autoptr(SimEngine) engine = engine_with_recorders(1, &rec);
  for (uint64_t i = 0; i < 10; i++) sim_engine_schedule(engine, 0, 0, (SimTime)i, 0, 0, i);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_REQUESTED);
  CU_ASSERT_EQUAL(rec.events->len, 8); /* 0..7: the event that asked is finished */
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 2);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY); /* a new run resumes */
  CU_ASSERT_EQUAL(rec.events->len, 10);
  recorder_clear(&rec);
}

static void test_cancel_flag(void) {
  volatile int cancel = 0;
  Recorder rec;
  recorder_init(&rec);
  rec.cancel = &cancel;
  rec.cancel_at_payload = 5;
  g_autoptr(SimEngine) engine = engine_with_recorders(1, &rec);
  for (uint64_t i = 0; i < 10; i++) sim_engine_schedule(engine, 0, 0, (SimTime)i, 0, 0, i);
  sim_engine_set_cancel_flag(engine, &cancel);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_CANCELLED);
  CU_ASSERT_EQUAL(rec.events->len, 6); /* polled before every event */
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_CANCELLED); /* still set: nothing runs */
  CU_ASSERT_EQUAL(rec.events->len, 6);
  cancel = 0;
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL(rec.events->len, 10);
  recorder_clear(&rec);
}

/* The first event fans out 7 more: 10 scheduled, one handled (9 left), 7 added: peak 16. */
static void fan_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  (void)state;
  if (ev->payload == 0)
    for (int i = 0; i < 7; i++) sim_ctx_send(ctx, 0, 100 + i, 0, 0, 99);
}

static const SimEntityKind fan_kind = {.name = "fan", .handle = fan_handle};

static void test_peak_pending(void) {
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  sim_engine_add_entity(engine, &fan_kind, NULL);
  for (uint64_t i = 0; i < 10; i++) sim_engine_schedule(engine, 0, 0, (SimTime)i, 0, 0, i);
  sim_engine_set_max_events(engine, 1);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 16);
  sim_engine_set_max_events(engine, UINT64_MAX);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.peak_pending, 16);
  CU_ASSERT_EQUAL(stats.events, 17);
  CU_ASSERT_EQUAL(stats.now, 106);
}

typedef struct {
  guint calls;
  guint64 last_events;
  gboolean increasing;
} Progress;

static void on_progress(void *user, const SimEngineStats *stats) {
  Progress *p = user;
  p->calls++;
  if (stats->events <= p->last_events || stats->wall_s < 0) p->increasing = FALSE;
  p->last_events = stats->events;
}

static void test_progress_callback(void) {
  Ticker t = {0};
  g_autoptr(SimEngine) engine = ticker_engine(&t, 4);
  Progress p = {.increasing = TRUE};
  sim_engine_set_progress(engine, on_progress, &p, 0);
  sim_engine_set_max_events(engine, 300000);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(t.ticks, 300000);
  /* Checked every 65536 events: 4 checkpoints below 300000, each one due at interval 0. */
  CU_ASSERT_EQUAL(p.calls, 300000 / 65536);
  CU_ASSERT(p.increasing);
  CU_ASSERT_EQUAL(p.last_events % 65536, 0);
  /* A long interval: no call. */
  Progress q = {.increasing = TRUE};
  sim_engine_set_progress(engine, on_progress, &q, 3600);
  sim_engine_set_max_events(engine, 600000);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(t.ticks, 600000);
  CU_ASSERT_EQUAL(q.calls, 0);
}

/* ---- Entities, time, programming errors ---- */

static void test_entity_rngs(void) {
  g_autoptr(SimEngine) engine = sim_engine_new(1234);
  Ticker t = {0};
  for (int i = 0; i < 3; i++) sim_engine_add_entity(engine, &tick_kind, &t);
  SimRng *r2 = sim_engine_entity_rng(engine, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
  CU_ASSERT_PTR_NOT_EQUAL(r2, sim_engine_entity_rng(engine, 1));
  /* The stream is (master seed, entity id). */
  SimRng ref;
  sim_rng_init(&ref, 1234, 2);
  uint64_t first = sim_rng_u64(r2);
  CU_ASSERT_EQUAL(first, sim_rng_u64(&ref));
  /* Adding many more entities does not move a stream (it embeds a pointer to itself). */
  for (int i = 0; i < 5000; i++) sim_engine_add_entity(engine, &tick_kind, &t);
  CU_ASSERT_PTR_EQUAL(sim_engine_entity_rng(engine, 2), r2);
  CU_ASSERT_PTR_EQUAL(sim_rng_gsl(r2)->state, r2);
  CU_ASSERT_EQUAL(sim_rng_u64(r2), sim_rng_u64(&ref));
  CU_ASSERT_EQUAL(sim_engine_n_entities(engine), 5003);
  sim_rng_init(&ref, 1234, 5002);
  CU_ASSERT_EQUAL(sim_rng_u64(sim_engine_entity_rng(engine, 5002)), sim_rng_u64(&ref));
}

/* sim_ctx_rng() in a handler is the same stream as sim_engine_entity_rng() for that entity. */
static void rng_probe_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  (void)ev;
  *(SimRng **)state = sim_ctx_rng(ctx);
}

static const SimEntityKind rng_probe_kind = {.name = "rng-probe", .handle = rng_probe_handle};

static void test_ctx_rng(void) {
  g_autoptr(SimEngine) engine = sim_engine_new(9);
  SimRng *seen[2] = {NULL, NULL};
  sim_engine_add_entity(engine, &rng_probe_kind, &seen[0]);
  sim_engine_add_entity(engine, &rng_probe_kind, &seen[1]);
  sim_engine_schedule(engine, 0, 1, 5, 0, 0, 0);
  sim_engine_schedule(engine, 1, 0, 6, 0, 0, 0);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_PTR_EQUAL(seen[0], sim_engine_entity_rng(engine, 0));
  CU_ASSERT_PTR_EQUAL(seen[1], sim_engine_entity_rng(engine, 1));
}

static void test_time_from_s(void) {
  CU_ASSERT_EQUAL(sim_time_from_s(0), 0);
  CU_ASSERT_EQUAL(sim_time_from_s(1.5), INT64_C(1500000000));
  CU_ASSERT_EQUAL(sim_time_from_s(0.1), INT64_C(100000000));
  CU_ASSERT_EQUAL(sim_time_from_s(1e-9), 1);
  CU_ASSERT_EQUAL(sim_time_from_s(0.4e-9), 0);
  CU_ASSERT_EQUAL(sim_time_from_s(0.6e-9), 1);
  CU_ASSERT_EQUAL(sim_time_from_s(-1.25), INT64_C(-1250000000));
  CU_ASSERT_EQUAL(sim_time_from_s(1e300), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(sim_time_from_s(9.3e9), SIM_TIME_MAX); /* just above 2^63 ns */
  CU_ASSERT_EQUAL(sim_time_from_s(INFINITY), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(sim_time_from_s(-INFINITY), INT64_MIN);
  CU_ASSERT_EQUAL(sim_time_from_s(NAN), 0);
  CU_ASSERT_EQUAL(sim_time_from_s(86400.0 * 31), INT64_C(2678400000000000));
  CU_ASSERT_DOUBLE_EQUAL(sim_time_to_s(INT64_C(2500000000)), 2.5, 1e-15);
}

static guint criticals;

static void count_critical(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
  (void)domain, (void)message, (void)user;
  if (level & G_LOG_LEVEL_CRITICAL) criticals++;
}

/* Sending to an unregistered id or into the past is refused (g_return_if_fail) and queues nothing. */
static void bad_send_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  (void)state, (void)ev;
  sim_ctx_send(ctx, 5, 1, 0, 0, 0);  /* no entity 5 */
  sim_ctx_send(ctx, 0, -1, 0, 0, 0); /* negative delay */
  sim_ctx_send(ctx, SIM_ENTITY_NONE, 1, 0, 0, 0);
}

static const SimEntityKind bad_send_kind = {.name = "bad-send", .handle = bad_send_handle};

static void test_bad_sends_refused(void) {
  /* The default handler, so whatever G_LOG_DOMAIN the library is built with is caught. */
  GLogFunc old = g_log_set_default_handler(count_critical, NULL);
  criticals = 0;
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  sim_engine_add_entity(engine, &bad_send_kind, NULL);
  sim_engine_schedule(engine, 0, 3, 1, 0, 0, 0); /* no entity 3: refused */
  CU_ASSERT_EQUAL(criticals, 1);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 0);
  sim_engine_schedule(engine, 0, 0, 1, 0, 0, 0);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL(criticals, 4);
  sim_engine_schedule(engine, 0, 0, 0, 0, 0, 0); /* before the last processed event (time 1) */
  CU_ASSERT_EQUAL(criticals, 5);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 0);
  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  CU_ASSERT_EQUAL(stats.events, 1);
  g_log_set_default_handler(old, NULL);
}

static void test_free_null(void) {
  sim_engine_free(NULL);
  g_autoptr(SimEngine) engine = sim_engine_new(0);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 0);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
}

/* ---- PHOLD ---- */

static void phold_small(SimPholdParams *p, guint64 seed) {
  sim_phold_params_default(p);
  p->lps = 64;
  p->pending = 256;
  p->events = 200000;
  p->seed = seed;
}

static void test_phold_deterministic(void) {
  SimPholdParams p;
  phold_small(&p, 7);
  SimPholdResult a, b, c;
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FATAL(sim_phold_run(&p, &a, &error));
  CU_ASSERT_FATAL(sim_phold_run(&p, &b, &error));
  CU_ASSERT_EQUAL(a.checksum, b.checksum);
  CU_ASSERT_EQUAL(a.end_time, b.end_time);
  CU_ASSERT_EQUAL(a.events, 200000);
  CU_ASSERT_EQUAL(a.peak_pending, 256);
  CU_ASSERT_EQUAL(a.final_pending, 256);
  CU_ASSERT(a.end_time > 0);
  CU_ASSERT(a.wall_s > 0 && a.events_per_s > 0);
  /* Mean delay 1 s and 4 events per LP: about 200000 / 256 s of simulated time. */
  double expect_s = 200000.0 / 256;
  CU_ASSERT(fabs(sim_time_to_s(a.end_time) - expect_s) < 0.1 * expect_s);
  p.seed = 8;
  CU_ASSERT_FATAL(sim_phold_run(&p, &c, &error));
  CU_ASSERT_NOT_EQUAL(a.checksum, c.checksum);
  CU_ASSERT_NOT_EQUAL(a.end_time, c.end_time);
  CU_ASSERT_EQUAL(c.events, 200000);
  CU_ASSERT_EQUAL(c.final_pending, 256);
}

/* The remote share changes the run (and a single LP works: everything stays local). */
static void test_phold_variants(void) {
  SimPholdParams p;
  phold_small(&p, 7);
  SimPholdResult a, b;
  CU_ASSERT_FATAL(sim_phold_run(&p, &a, NULL));
  p.remote = 0.9;
  CU_ASSERT_FATAL(sim_phold_run(&p, &b, NULL));
  CU_ASSERT_NOT_EQUAL(a.checksum, b.checksum);
  p.lps = 1;
  p.pending = 10;
  p.events = 1000;
  CU_ASSERT_FATAL(sim_phold_run(&p, &a, NULL));
  CU_ASSERT_EQUAL(a.events, 1000);
  CU_ASSERT_EQUAL(a.final_pending, 10);
}

static void test_phold_bad_params(void) {
  SimPholdParams p;
  SimPholdResult r = {.events = 12345};
  sim_phold_params_default(&p);
  CU_ASSERT_EQUAL(p.lps, 1000);
  CU_ASSERT_EQUAL(p.pending, 1000);
  CU_ASSERT_EQUAL(p.events, 10000000);
  CU_ASSERT_DOUBLE_EQUAL(p.remote, 0.25, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.mean_delay_s, 1.0, 0);
  SimPholdParams bad[5];
  for (int i = 0; i < 5; i++) bad[i] = p;
  bad[0].lps = 0;
  bad[1].pending = 0;
  bad[2].remote = 1.5;
  bad[3].remote = NAN;
  bad[4].mean_delay_s = 0;
  for (int i = 0; i < 5; i++) {
    g_autoptr(GError) error = NULL;
    CU_ASSERT_FALSE(sim_phold_run(&bad[i], &r, &error));
    CU_ASSERT(g_error_matches(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID));
  }
  CU_ASSERT_EQUAL(r.events, 12345); /* untouched */
}

/* ---- Batches ---- */

/* Each event fans out: a batch of up to 40 events to random entities with random delays (ties included), with
 * single sends mixed in between the batch's events, until the entity's budget of sends is spent. `batch`
 * FALSE sends everything with sim_ctx_send(): the engine must deliver the same events in the same order
 * either way. One state per entity (with windows, entities run on several threads). */
enum { FAN_ENTITIES = 60 };

typedef struct {
  GArray *log; /* SimEvent, in delivery order */
  guint64 budget;
  gboolean batch;
  SimTime min_delay;
  guint ctx_wrong;
} Fan;

static void fanout_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Fan *f = state;
  if (sim_ctx_self(ctx) != ev->dst || sim_ctx_now(ctx) != ev->time) f->ctx_wrong++;
  g_array_append_val(f->log, *ev);
  SimRng *rng = sim_ctx_rng(ctx);
  guint k = (guint)sim_rng_below(rng, 41);
  if (k > f->budget) k = (guint)f->budget;
  f->budget -= k;
  uint64_t payload = ev->payload * 31 + k;
  if (f->batch) sim_ctx_batch_begin(ctx, 7, 3, payload);
  for (guint i = 0; i < k; i++) {
    SimEntityId dst = (SimEntityId)sim_rng_below(rng, FAN_ENTITIES);
    SimTime delay = f->min_delay + (SimTime)sim_rng_below(rng, 30);
    if (f->batch)
      sim_ctx_batch_add(ctx, dst, delay);
    else
      sim_ctx_send(ctx, dst, delay, 7, 3, payload);
    if (sim_rng_below(rng, 8) == 0 && f->budget > 0) { /* a single send in between */
      f->budget--;
      sim_ctx_send(ctx, dst, f->min_delay + (SimTime)sim_rng_below(rng, 30), 1, 0, payload + 1);
    }
  }
  if (f->batch) sim_ctx_batch_end(ctx);
}

static const SimEntityKind fanout_kind = {.name = "fanout", .handle = fanout_handle};

static SimEngine *fan_engine(Fan *f, gboolean batch, SimTime min_delay) {
  SimEngine *engine = sim_engine_new(11);
  for (guint i = 0; i < FAN_ENTITIES; i++) {
    f[i] = (Fan){.log = g_array_new(FALSE, FALSE, sizeof(SimEvent)), .budget = 4000, .batch = batch,
                 .min_delay = min_delay};
    sim_engine_add_entity(engine, &fanout_kind, &f[i]);
  }
  for (guint i = 0; i < 20; i++) sim_engine_schedule(engine, i, (i * 7) % FAN_ENTITIES, i % 3, 0, 0, i);
  return engine;
}

/* Events delivered differently (G_MAXUINT: a different count), over all entities; frees the logs. */
static guint fan_compare(Fan *a, Fan *b, guint64 *delivered) {
  guint d = 0;
  *delivered = 0;
  for (guint e = 0; e < FAN_ENTITIES; e++) {
    if (a[e].log->len != b[e].log->len || a[e].ctx_wrong || b[e].ctx_wrong) d = G_MAXUINT;
    for (guint i = 0; d != G_MAXUINT && i < a[e].log->len; i++)
      d += !event_equal(&g_array_index(a[e].log, SimEvent, i), &g_array_index(b[e].log, SimEvent, i));
    *delivered += a[e].log->len;
    g_array_unref(a[e].log);
    g_array_unref(b[e].log);
  }
  return d;
}

/* Same deliveries (time, key, destination, contents, in the same order), events and peak pending as
 * single sends, also across stops by event budget in the middle of batches and resumes. */
static void test_batch_same_as_sends(void) {
  Fan ref[FAN_ENTITIES], bat[FAN_ENTITIES];
  g_autoptr(SimEngine) e_ref = fan_engine(ref, FALSE, 0);
  g_autoptr(SimEngine) e_bat = fan_engine(bat, TRUE, 0);
  /* Budgets early (most handlers send) and late (budgets spent: handlers send nothing, so batches drain
   * without queue operations), then stop times, then the rest. */
  const uint64_t stops[] = {1000, 1001, 5017, 20000, 200000, 235001, 239999, UINT64_MAX};
  for (guint s = 0; s < G_N_ELEMENTS(stops); s++) {
    sim_engine_set_max_events(e_ref, stops[s]);
    sim_engine_set_max_events(e_bat, stops[s]);
    SimStopReason r1 = sim_engine_run(e_ref), r2 = sim_engine_run(e_bat);
    CU_ASSERT_EQUAL(r1, r2);
    CU_ASSERT_EQUAL(sim_engine_pending(e_ref), sim_engine_pending(e_bat));
    if (s == 4 || s == 5) { /* stop times, one ns apart, in the late phases */
      sim_engine_set_max_events(e_ref, UINT64_MAX);
      sim_engine_set_max_events(e_bat, UINT64_MAX);
      for (int k = 1; k <= 2; k++) {
        SimEngineStats st;
        sim_engine_get_stats(e_ref, &st);
        sim_engine_set_stop_time(e_ref, st.now + 1);
        sim_engine_set_stop_time(e_bat, st.now + 1);
        SimStopReason why = sim_engine_run(e_ref);
        CU_ASSERT_EQUAL(why, SIM_STOP_TIME);
        CU_ASSERT_EQUAL(sim_engine_run(e_bat), why);
        CU_ASSERT_EQUAL(sim_engine_pending(e_ref), sim_engine_pending(e_bat));
      }
      sim_engine_set_stop_time(e_ref, SIM_TIME_MAX);
      sim_engine_set_stop_time(e_bat, SIM_TIME_MAX);
    }
  }
  SimEngineStats s1, s2;
  sim_engine_get_stats(e_ref, &s1);
  sim_engine_get_stats(e_bat, &s2);
  CU_ASSERT_EQUAL(s1.events, s2.events);
  CU_ASSERT_EQUAL(s1.peak_pending, s2.peak_pending);
  CU_ASSERT(s1.peak_pending > 1000);
  CU_ASSERT_EQUAL(s1.now, s2.now);
  guint64 delivered;
  CU_ASSERT_EQUAL(fan_compare(ref, bat, &delivered), 0);
  CU_ASSERT(delivered > 239999);
  CU_ASSERT_EQUAL(delivered, s1.events);
}

/* Batches pending when the engine is laid out again (sequential -> windows on 3 workers) are moved as their
 * events; with windows a batch is sent one by one. Each entity gets what it got sequentially. */
static void test_batch_across_relayout(void) {
  Fan ref[FAN_ENTITIES], bat[FAN_ENTITIES];
  g_autoptr(SimEngine) e_ref = fan_engine(ref, FALSE, 5);
  g_autoptr(SimEngine) e_bat = fan_engine(bat, TRUE, 5);
  sim_engine_set_max_events(e_bat, 3001);
  CU_ASSERT_EQUAL(sim_engine_run(e_bat), SIM_STOP_EVENTS);
  guint64 pending = sim_engine_pending(e_bat);
  CU_ASSERT(pending > 1000);
  sim_engine_declare_default_delay(e_bat, 5);
  sim_engine_set_threads(e_bat, 3, SIM_PARTITION_ROUND_ROBIN);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_TRUE_FATAL(sim_engine_prepare(e_bat, &error));
  CU_ASSERT(sim_engine_n_workers(e_bat) == 3);
  CU_ASSERT_EQUAL(sim_engine_pending(e_bat), pending);
  sim_engine_set_max_events(e_bat, UINT64_MAX);
  CU_ASSERT_EQUAL(sim_engine_run(e_bat), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL(sim_engine_run(e_ref), SIM_STOP_EMPTY);
  guint64 delivered;
  CU_ASSERT_EQUAL(fan_compare(ref, bat, &delivered), 0);
  CU_ASSERT(delivered > 200000);
}

/* A batch whose events are the only ones left: a stop time, an event budget and sim_ctx_stop() in the
 * middle of it stop exactly where single events would (the loop hands a batch's events out without the
 * queue while nothing else comes first). */
static void burst_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Recorder *rec = state;
  g_array_append_val(rec->events, *ev);
  if (ev->payload == 0) { /* the burst: delays 10, 9, ..., 1 to entity 1 */
    sim_ctx_batch_begin(ctx, 0, 0, 1);
    for (SimTime d = 10; d >= 1; d--) sim_ctx_batch_add(ctx, 1, d);
    sim_ctx_batch_end(ctx);
  }
  if (sim_ctx_now(ctx) == 107) sim_ctx_stop(ctx);
}

static const SimEntityKind burst_kind = {.name = "burst", .handle = burst_handle};

static void test_batch_stops(void) {
  Recorder rec;
  recorder_init(&rec);
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  sim_engine_add_entity(engine, &burst_kind, &rec);
  sim_engine_add_entity(engine, &burst_kind, &rec);
  sim_engine_schedule(engine, 0, 0, 100, 0, 0, 0);
  sim_engine_set_stop_time(engine, 104); /* the burst and events at 101, 102, 103 */
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_TIME);
  CU_ASSERT_EQUAL(rec.events->len, 4);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 7);
  sim_engine_set_stop_time(engine, SIM_TIME_MAX);
  sim_engine_set_max_events(engine, 6); /* 104, 105 */
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EVENTS);
  CU_ASSERT_EQUAL(rec.events->len, 6);
  CU_ASSERT_EQUAL(sim_engine_pending(engine), 5);
  sim_engine_set_max_events(engine, UINT64_MAX);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_REQUESTED); /* after 107 */
  CU_ASSERT_EQUAL(rec.events->len, 8);
  CU_ASSERT_EQUAL(sim_engine_run(engine), SIM_STOP_EMPTY);
  CU_ASSERT_EQUAL_FATAL(rec.events->len, 11);
  for (guint i = 1; i < 11; i++) {
    const SimEvent *e = &g_array_index(rec.events, SimEvent, i);
    CU_ASSERT_EQUAL(e->time, 100 + (SimTime)i);
    CU_ASSERT_EQUAL(e->key, make_key(0, 11 - i)); /* added (10 - i)-th, after the scheduled one: delay i */
  }
  SimEngineStats st;
  sim_engine_get_stats(engine, &st);
  CU_ASSERT_EQUAL(st.peak_pending, 10);
  recorder_clear(&rec);
}

int register_suites(void) {
  ADD_SUITE("order", TEST(test_equal_times_by_src_seq), TEST(test_random_events_sorted),
            TEST(test_handler_sends_order), TEST(test_zero_delay_self_sends));
  ADD_SUITE("run-control", TEST(test_stop_time_resume), TEST(test_max_events_exact), TEST(test_ctx_stop),
            TEST(test_cancel_flag), TEST(test_peak_pending), TEST(test_progress_callback));
  ADD_SUITE("entities", TEST(test_entity_rngs), TEST(test_ctx_rng), TEST(test_time_from_s),
            TEST(test_bad_sends_refused), TEST(test_free_null));
  ADD_SUITE("batches", TEST(test_batch_same_as_sends), TEST(test_batch_across_relayout), TEST(test_batch_stops));
  ADD_SUITE("phold", TEST(test_phold_deterministic), TEST(test_phold_variants), TEST(test_phold_bad_params));
  return 0;
}
