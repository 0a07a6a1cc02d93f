/* pool_delay.c: the "pool-delay" network: no nodes, each block reaches every other miner after one delay. */
#include "pow.h"

#include "delay.h"

typedef struct {
  SimModelRef delay;
  SimModelRef own_work;
} PoolDelayParams;

static const SimSubmodelSpec pool_delay_submodels[] = {
    {.key = "delay", .family = "delay", .default_model = "lognormal", .offset = offsetof(PoolDelayParams, delay),
     .help = "delay from a miner finding a block to another miner working on it (drawn per receiver)"},
    {.key = "own_work", .family = "delay", .default_model = "constant", .offset = offsetof(PoolDelayParams, own_work),
     .help = "the finder's own work distribution: its miners keep mining on the old parent this long after it found "
             "a block (the geo network's stratum delay); default 0 ms: no one-miner forks"},
};

static SimTime pool_delay_own_work(const void *params, SimRng *rng) {
  const PoolDelayParams *p = params;
  return sim_delay_sample(&p->own_work, rng);
}

static void pool_delay_publish(const void *params, gpointer state, gpointer scratch, const PowWorld *w,
                               SimCtx *ctx, guint from, const ObsBlock *b) {
  const PoolDelayParams *p = params;
  (void)state, (void)scratch;
  SimRng *rng = sim_ctx_rng(ctx);
  for (guint i = 0, n = pow_world_n_miners(w); i < n; i++) {
    if (i == from) continue;
    sim_ctx_send(ctx, pow_world_miner_entity(w, i), sim_delay_sample(&p->delay, rng), POW_EV_BLOCK, 0, b->id);
  }
}

const PowNetworkModel pow_network_pool_delay = {
    .info = {.name = "pool-delay", .family = "network",
             .help = "no nodes: each block reaches every other miner after an independent draw of `delay`",
             .params = NULL, .n_params = 0, .params_size = sizeof(PoolDelayParams),
             .submodels = pool_delay_submodels, .n_submodels = G_N_ELEMENTS(pool_delay_submodels)},
    .publish = pool_delay_publish,
    .own_work_delay = pool_delay_own_work,
};
