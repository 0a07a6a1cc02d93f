/* phold.c: PHOLD on the engine: every event makes its LP send one new event (exponential delay). */
#include "phold.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(sim-phold-error-quark, sim_phold_error)

/* Read-only run parameters, shared by all LPs. */
typedef struct {
  double remote;
  double mean_delay_ns;
  SimTime lookahead_ns;
  guint lps;
} PholdConfig;

/* The state of one LP: only its own handler touches it. */
typedef struct {
  const PholdConfig *cfg;
  guint64 checksum;
} PholdLp;

void sim_phold_params_default(SimPholdParams *p) {
  g_return_if_fail(p != NULL);
  *p = (SimPholdParams){
      .lps = 1000,
      .pending = 1000,
      .remote = 0.25,
      .mean_delay_s = 1.0,
      .events = 10000000,
      .seed = 1,
  };
}

static inline SimTime phold_delay(SimRng *rng, const PholdConfig *cfg) {
  return cfg->lookahead_ns + (SimTime)(sim_rng_exponential(rng, cfg->mean_delay_ns) + 0.5);
}

static void phold_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  PholdLp *lp = state;
  const PholdConfig *cfg = lp->cfg;
  SimRng *rng = sim_ctx_rng(ctx);
  SimEntityId self = ev->dst;
  /* Order-dependent per LP; the destination is this LP, so it is covered by the final fold. */
  lp->checksum = (lp->checksum ^ (guint64)ev->time) * UINT64_C(0x9e3779b97f4a7c15);
  SimEntityId dst = self;
  if (sim_rng_uniform(rng) < cfg->remote) {
    dst = (SimEntityId)sim_rng_below(rng, cfg->lps - 1);
    if (dst >= self) dst++;
  }
  sim_ctx_send(ctx, dst, phold_delay(rng, cfg), 0, 0, 0);
}

static const SimEntityKind phold_kind = {.name = "phold-lp", .handle = phold_handle};

static guint64 phold_mix(guint64 x) { /* splitmix64 finaliser */
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

gboolean sim_phold_run(const SimPholdParams *p, SimPholdResult *r, GError **error) {
  g_return_val_if_fail(p != NULL && r != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  if (p->lps < 1 || p->lps > SIM_ENTITY_MAX) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID, "lps: must be in [1, %u], got %u",
                (unsigned)SIM_ENTITY_MAX, p->lps);
    return FALSE;
  }
  if (p->pending < 1) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID, "pending: must be at least 1");
    return FALSE;
  }
  if (!(p->remote >= 0 && p->remote <= 1)) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID, "remote: must be in [0, 1], got %g",
                p->remote);
    return FALSE;
  }
  if (!(p->mean_delay_s > 0 && isfinite(p->mean_delay_s) && p->mean_delay_s * 1e9 < 0x1.0p53)) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID,
                "mean_delay_s: must be positive and below 2^53 ns, got %g", p->mean_delay_s);
    return FALSE;
  }

  if (!(p->lookahead_s >= 0 && p->lookahead_s * 1e9 < 0x1.0p53)) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID,
                "lookahead_s: must be >= 0 and below 2^53 ns, got %g", p->lookahead_s);
    return FALSE;
  }
  if (p->threads > SIM_ENGINE_MAX_THREADS) {
    g_set_error(error, SIM_PHOLD_ERROR, SIM_PHOLD_ERROR_INVALID, "threads: must be in [0, %d], got %u",
                SIM_ENGINE_MAX_THREADS, p->threads);
    return FALSE;
  }

  PholdConfig cfg = {.remote = p->lps >= 2 ? p->remote : 0,
                     .mean_delay_ns = p->mean_delay_s * 1e9,
                     .lookahead_ns = sim_time_from_s(p->lookahead_s),
                     .lps = p->lps};
  g_autofree PholdLp *lps = g_new(PholdLp, p->lps);
  g_autoptr(SimEngine) engine = sim_engine_new(p->seed);
  for (guint i = 0; i < p->lps; i++) {
    lps[i] = (PholdLp){.cfg = &cfg, .checksum = 0};
    SimEntityId id = sim_engine_add_entity(engine, &phold_kind, &lps[i]);
    sim_engine_set_state_bytes(engine, id, sizeof(PholdLp));
  }
  /* Every LP is a group of its own; any LP may send to any other, never less than the lookahead ahead. */
  sim_engine_declare_default_delay(engine, cfg.lookahead_ns);
  sim_engine_set_threads(engine, p->threads, p->partitioning);
  sim_engine_set_cpu_timing(engine, p->cpu_timing);
  if (!sim_engine_prepare(engine, error)) return FALSE;
  for (guint64 i = 0; i < p->pending; i++) {
    SimEntityId lp = (SimEntityId)(i % p->lps);
    SimTime t = phold_delay(sim_engine_entity_rng(engine, lp), &cfg);
    sim_engine_schedule(engine, lp, lp, t, 0, 0, 0);
  }
  sim_engine_set_max_events(engine, p->events);
  sim_engine_run(engine);

  SimEngineStats stats;
  sim_engine_get_stats(engine, &stats);
  guint64 checksum = 0;
  for (guint i = 0; i < p->lps; i++)
    checksum += phold_mix(lps[i].checksum ^ phold_mix(i));

  memset(r, 0, sizeof *r);
  r->events = stats.events;
  r->wall_s = stats.wall_s;
  r->events_per_s = stats.wall_s > 0 ? (double)stats.events / stats.wall_s : 0;
  r->peak_pending = stats.peak_pending;
  r->final_pending = sim_engine_pending(engine);
  r->end_time = stats.now;
  r->checksum = checksum;
  sim_engine_get_window_stats(engine, &r->windows);
  for (guint w = 0; w < r->windows.workers && w < SIM_ENGINE_MAX_THREADS; w++)
    sim_engine_get_worker_stats(engine, w, &r->workers[w]);
  return TRUE;
}
