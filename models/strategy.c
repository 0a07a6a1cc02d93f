/* strategy.c: the pool strategies (honest, selfish, withholding) and the pools[] entry that chooses one. */
#include "strategy.h"

#include <string.h>

#include "pow.h"
#include "registry.h"

/* ---- honest ---- */

const PowStrategyModel pow_strategy_honest = {
    .info = {.name = "honest", .family = "strategy", .help = "publish every block at once"},
};

/* ---- selfish: Eyal and Sirer, "Majority is not enough" (2014) ---- */

typedef struct {
  GArray *withheld;    /* own blocks not yet published (uint64_t ids), in height order */
  uint32_t pub_height; /* the height of the public chain as this miner sees it */
  gboolean tie;        /* a published tie race is on */
} Selfish;

static gpointer selfish_new(const void *params) {
  (void)params;
  Selfish *s = g_new0(Selfish, 1);
  s->withheld = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  return s;
}

static void selfish_free(gpointer state) {
  Selfish *s = state;
  if (!s) return;
  g_array_unref(s->withheld);
  g_free(s);
}

static uint32_t block_height(const PowMiner *m, uint64_t id) {
  return pow_world_block(pow_miner_world(m), id)->height;
}

/* Publishes the withheld blocks up to height `upto` (all of them with UINT32_MAX), oldest first. */
static void release(Selfish *s, PowMiner *m, SimCtx *ctx, uint32_t upto) {
  guint k = 0;
  while (k < s->withheld->len) {
    uint64_t id = g_array_index(s->withheld, uint64_t, k);
    if (block_height(m, id) > upto) break;
    pow_miner_publish(m, ctx, id);
    k++;
  }
  g_array_remove_range(s->withheld, 0, k);
}

static void selfish_on_mined(const void *params, gpointer state, PowMiner *m, SimCtx *ctx, const ObsBlock *b) {
  (void)params;
  Selfish *s = state;
  if (s->tie) { /* found on its own branch during a tie race: publishing wins it */
    pow_miner_publish(m, ctx, b->id);
    s->tie = FALSE;
  } else {
    g_array_append_val(s->withheld, b->id);
  }
}

static void selfish_on_published(gpointer state, const ObsBlock *b) {
  Selfish *s = state;
  if (b->height > s->pub_height) s->pub_height = b->height;
}

/* On the public chain growing to height h (a block from another miner): with a private lead of 1 before
 * it, publish (a tie race); of 2, publish everything (the private chain wins); of more, publish up to the
 * public height; with no lead, the private blocks are lost and the miner follows the public chain. Lengths
 * are heights. */
static void selfish_on_public(const void *params, gpointer state, PowMiner *m, SimCtx *ctx, const ObsBlock *b) {
  (void)params;
  Selfish *s = state;
  uint32_t h = b->height;
  if (h <= s->pub_height) return;
  uint32_t before = s->pub_height;
  s->pub_height = h;
  s->tie = FALSE;
  if (s->withheld->len == 0) return;
  uint32_t priv = block_height(m, g_array_index(s->withheld, uint64_t, s->withheld->len - 1));
  if (priv < h) { /* overtaken: the withheld blocks are wasted */
    g_array_set_size(s->withheld, 0);
    return;
  }
  uint32_t lead = priv - before;
  if (lead == 1) {
    release(s, m, ctx, UINT32_MAX);
    s->tie = TRUE;
  } else if (lead == 2) {
    release(s, m, ctx, UINT32_MAX);
  } else {
    release(s, m, ctx, h);
  }
}

const PowStrategyModel pow_strategy_selfish = {
    .info = {.name = "selfish", .family = "strategy",
             .help = "Eyal-Sirer selfish mining (withhold blocks, release them to match or overtake the public "
                     "chain)"},
    .miner_new = selfish_new,
    .miner_free = selfish_free,
    .on_mined = selfish_on_mined,
    .on_published = selfish_on_published,
    .on_public = selfish_on_public,
};

/* ---- withholding: the pool is the victim ---- */

typedef struct {
  double withhold_share;
} WithholdParams;

typedef struct {
  guint64 discarded; /* blocks its infiltrated miners found and threw away */
} Withhold;

static const SimParamSpec withhold_params[] = {
    {.name = "withhold_share", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .def = 0,
     .offset = offsetof(WithholdParams, withhold_share),
     .help = "withholding: share of the pool's found blocks discarded (the infiltrators' share of its hash power)"},
};

static gpointer withhold_new(const void *params) {
  (void)params;
  return g_new0(Withhold, 1);
}

static gboolean withhold_on_find(const void *params, gpointer state, SimCtx *ctx) {
  const WithholdParams *p = params;
  Withhold *s = state;
  if (p->withhold_share > 0 && sim_rng_uniform(sim_ctx_rng(ctx)) < p->withhold_share) {
    s->discarded++;
    return FALSE;
  }
  return TRUE;
}

static void withhold_check_pool(const void *params, gboolean chosen, SimDiag *diag, const char *path) {
  const WithholdParams *p = params;
  if (chosen == (p->withhold_share > 0)) return;
  g_autofree char *wp = g_strdup_printf("%s.withhold_share", path);
  sim_diag_add(diag, wp, "must be > 0 exactly when strategy is \"withholding\" (got %g)", p->withhold_share);
}

/* "withholding": one entry per pool that chose it, with what its miners discarded. */
static void withhold_add_json(const PowWorld *world, json_t *summary) {
  const PowConfig *cfg = pow_world_config(world);
  g_autofree guint64 *discarded = g_new0(guint64, MAX(cfg->n_pools, 1));
  for (guint k = 0; k < pow_world_n_miners(world); k++) {
    guint pool = pow_world_miner_pool(world, k, NULL);
    const Withhold *s = cfg->pools[pool].strategy.model == &pow_strategy_withholding.info
                            ? pow_world_miner_strategy(world, k)
                            : NULL;
    if (s) discarded[pool] += s->discarded;
  }
  json_t *wh = json_array();
  for (guint i = 0; i < cfg->n_pools; i++) {
    if (cfg->pools[i].strategy.model != &pow_strategy_withholding.info) continue;
    const WithholdParams *p = cfg->pools[i].strategy.params;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(cfg->pools[i].name));
    json_object_set_new(o, "withhold_share", json_real(p->withhold_share));
    json_object_set_new(o, "discarded", json_integer((json_int_t)discarded[i]));
    json_array_append_new(wh, o);
  }
  json_object_set_new(summary, "withholding", wh);
}

const PowStrategyModel pow_strategy_withholding = {
    .info = {.name = "withholding", .family = "strategy",
             .help = "the pool is the victim of a block withholding attack (infiltrated miners submit shares but "
                     "discard the blocks they find)",
             .params = withhold_params, .n_params = G_N_ELEMENTS(withhold_params),
             .params_size = sizeof(WithholdParams)},
    .miner_new = withhold_new,
    .miner_free = g_free,
    .on_find = withhold_on_find,
    .add_json = withhold_add_json,
    .check_pool = withhold_check_pool,
};

const SimModelInfo *const pow_strategy_list[] = {&pow_strategy_honest.info, &pow_strategy_selfish.info,
                                                 &pow_strategy_withholding.info, NULL};

#define N_STRATEGIES 3
static const PowStrategyModel *strategy_of(const SimModelInfo *info) { return (const PowStrategyModel *)info; }

void pow_world_add_strategy_json(const PowWorld *world, json_t *summary) {
  const PowConfig *cfg = pow_world_config(world);
  for (guint s = 0; pow_strategy_list[s]; s++) {
    const PowStrategyModel *sm = strategy_of(pow_strategy_list[s]);
    gboolean chosen = FALSE;
    for (guint i = 0; i < cfg->n_pools && !chosen; i++) chosen = cfg->pools[i].strategy.model == &sm->info;
    if (chosen && sm->add_json) sm->add_json(world, summary);
  }
}

/* ---- the pools[] entry ---- */

/* The pool's own keys; the strategies' parameters follow "strategy" (PoolTable). */
typedef struct {
  PowPoolSpec pool;
  int strategy; /* index into pow_strategy_list */
} PoolHead;

static const SimParamSpec pool_params[] = {
    {.name = "name", .type = SIM_PARAM_STRING, .required = TRUE, .offset = offsetof(PoolHead, pool.name),
     .help = "pool name (unique)"},
    {.name = "hash_share", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .min_open = TRUE, .required = TRUE,
     .offset = offsetof(PoolHead, pool.hash_share), .help = "share of total hash power; all pools sum to 1"},
    {.name = "miners", .type = SIM_PARAM_INT, .min = 1, .max = 100000, .def = 1,
     .offset = offsetof(PoolHead, pool.miners),
     .help = "independent miners this entry stands for (e.g. 'many small miners'); each forms its own runs"},
    /* choices and help from the family (PoolTable) */
    {.name = "strategy", .type = SIM_PARAM_ENUM, .def_str = "honest", .offset = offsetof(PoolHead, strategy)},
    {.name = "empty_window_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = -1, .max = 1e7, .def = -1,
     .offset = offsetof(PoolHead, pool.empty_window_ms),
     .help = "this pool's empty-template window (how long it takes to build a full template); -1: "
             "chain.empty_window_ms"},
    {.name = "coinbase", .type = SIM_PARAM_STRING, .def_str = "", .offset = offsetof(PoolHead, pool.coinbase),
     .help = "the address (0x + 40 hex digits) EMC logs (sim run --emc-logs) give as the Coinbase of this pool's "
             "blocks, e.g. its real one; only for a pool of one miner; empty: a synthetic address per miner"},
    {.name = "miner_hash_sd", .type = SIM_PARAM_NUMBER, .min = 0, .max = 10, .def = 0,
     .offset = offsetof(PoolHead, pool.miner_hash_sd),
     .help = "spread of its miners' hash power: miner j gets hash_share x w_j / sum(w), w_j = max(1 + "
             "miner_hash_sd x N(0, 1), 1 / 400000), drawn once per run from a stream of the pool's own; 0: "
             "equal shares (SimBlock: Normal(400 000, 100 000) per node, at least 1, i.e. 0.25)"},
};

/* One table for a pools[] entry: pool_params with every strategy's parameters after "strategy", their
 * offsets moved into one buffer: PoolHead, then each strategy's params struct at offset[s]. */
typedef struct {
  SimParamSpec specs[G_N_ELEMENTS(pool_params) + 16];
  guint n;
  const char *choices[N_STRATEGIES + 1];
  char *help;
  gsize offset[N_STRATEGIES];
  gsize size;
} PoolTable;

#define ALIGN16(x) (((x) + 15) & ~(gsize)15)

static void pool_table_init(PoolTable *t) {
  memset(t, 0, sizeof *t);
  GString *help = g_string_new(NULL);
  gsize at = ALIGN16(sizeof(PoolHead));
  for (guint s = 0; pow_strategy_list[s]; s++) {
    g_assert(s < N_STRATEGIES);
    t->choices[s] = pow_strategy_list[s]->name;
    g_string_append_printf(help, "%s%s: %s", s ? "; " : "", pow_strategy_list[s]->name, pow_strategy_list[s]->help);
    t->offset[s] = at;
    at += ALIGN16(pow_strategy_list[s]->params_size);
  }
  t->size = at;
  t->help = g_string_free(help, FALSE);
  for (guint i = 0; i < G_N_ELEMENTS(pool_params); i++) {
    t->specs[t->n++] = pool_params[i];
    if (strcmp(pool_params[i].name, "strategy") != 0) continue;
    t->specs[t->n - 1].choices = t->choices;
    t->specs[t->n - 1].help = t->help;
    for (guint s = 0; pow_strategy_list[s]; s++)
      for (guint k = 0; k < pow_strategy_list[s]->n_params; k++) {
        g_assert(t->n < G_N_ELEMENTS(t->specs));
        SimParamSpec sp = pow_strategy_list[s]->params[k];
        sp.offset += t->offset[s];
        t->specs[t->n++] = sp;
      }
  }
}

static void pool_table_clear(PoolTable *t) { g_free(t->help); }

gboolean pow_pool_parse(PowPoolSpec *out, json_t *obj, const char *path, const char *const *extra, SimDiag *diag) {
  PoolTable t;
  pool_table_init(&t);
  g_autofree char *buf = g_malloc0(t.size);
  gboolean ok = sim_params_parse(t.specs, t.n, obj, path, extra, buf, diag);
  PoolHead *head = (PoolHead *)buf;
  *out = head->pool;
  /* Every strategy's parameters as given, in the family's order; the chosen one is `strategy`. */
  out->all_strategies = g_new0(SimModelRef, N_STRATEGIES);
  for (guint s = 0; pow_strategy_list[s]; s++) {
    const SimModelInfo *info = pow_strategy_list[s];
    out->all_strategies[s].model = info;
    out->all_strategies[s].params = g_memdup2(buf + t.offset[s], MAX(info->params_size, 1));
  }
  if (head->strategy >= 0 && head->strategy < N_STRATEGIES) out->strategy = out->all_strategies[head->strategy];
  pool_table_clear(&t);
  return ok;
}

void pow_pool_check(const PowPoolSpec *pool, guint index, SimDiag *diag) {
  g_autofree char *path = g_strdup_printf("$.pools[%u]", index);
  for (guint s = 0; pow_strategy_list[s] && pool->all_strategies; s++) {
    const PowStrategyModel *sm = strategy_of(pow_strategy_list[s]);
    if (sm->check_pool)
      sm->check_pool(pool->all_strategies[s].params, pool->strategy.model == &sm->info, diag, path);
  }
}

void pow_pool_clear(PowPoolSpec *pool) {
  if (!pool) return;
  PoolHead head = {.pool = *pool};
  sim_params_clear(pool_params, G_N_ELEMENTS(pool_params), &head);
  for (guint s = 0; pool->all_strategies && s < N_STRATEGIES; s++) sim_model_ref_clear(&pool->all_strategies[s]);
  g_free(pool->all_strategies);
  memset(pool, 0, sizeof *pool);
}

void pow_pool_describe(int indent, GString *out) {
  PoolTable t;
  pool_table_init(&t);
  sim_params_describe(t.specs, t.n, indent, out);
  pool_table_clear(&t);
}
