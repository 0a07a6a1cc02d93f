/* pow.c: miners, blocks, fork choice and uncle selection of the proof-of-work world; the pool-delay network. */
#include "pow.h"

#include <math.h>
#include <string.h>

#include "delay.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CANDIDATES 64

typedef struct {
  ObsBlock obs;
  double td; /* total difficulty */
} PowBlock;

/* A growable bitmap of the blocks of one miner that a viewer knows. */
typedef struct {
  guint64 *words;
  guint n_words;
} Bitmap;

struct PowMiner {
  const PowWorld *world;
  guint index;
  guint group;
  SimEntityId entity;
  double mean_interval_s; /* target interval / own share */

  /* Own blocks: append-only chunks so published blocks never move. */
  PowBlock **chunks;
  guint n_chunks;
  uint32_t n_blocks;

  /* Own view of the chain. */
  const PowBlock *head;
  Bitmap *known;         /* one per miner (by the mining miner's index) */
  GArray *recent;        /* ids of known blocks near the head: uncle candidates */
  uint32_t max_known_height;
  GHashTable *orphans;   /* parent id -> GArray of ids waiting for it */
  GArray *ready;         /* scratch stack for connecting orphans */
};

struct PowWorld {
  const PowConfig *cfg;
  const SimUncleRule *rule;
  const SimUncleParams *uncle_params;
  const PowNetworkModel *net;
  PowBlock genesis;
  PowMiner *miners;
  guint n_miners;
};

/* ---- parameter tables ---- */

static const char *const difficulty_choices[] = {"fixed", NULL};

const SimParamSpec pow_chain_params[] = {
    {.name = "target_interval_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 0, .max = 1e6, .min_open = TRUE,
     .def = 13.32, .offset = offsetof(PowChainParams, target_interval_s),
     .help = "mean time between blocks of the whole network (13.32 s: 31 days / 201,086 heights)"},
    {.name = "block_reward_eth", .type = SIM_PARAM_NUMBER, .unit = "ETH", .min = 0, .max = INFINITY, .def = 2.0,
     .offset = offsetof(PowChainParams, block_reward_eth), .help = "static block reward (Constantinople: 2)"},
    {.name = "difficulty", .type = SIM_PARAM_ENUM, .choices = difficulty_choices, .def_str = "fixed",
     .offset = offsetof(PowChainParams, difficulty),
     .help = "fixed: every block has difficulty 1, total difficulty = height"},
};
const guint pow_chain_n_params = G_N_ELEMENTS(pow_chain_params);

const SimParamSpec pow_pool_params[] = {
    {.name = "name", .type = SIM_PARAM_STRING, .required = TRUE, .offset = offsetof(PowPoolSpec, name),
     .help = "pool name (unique)"},
    {.name = "hash_share", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .min_open = TRUE, .required = TRUE,
     .offset = offsetof(PowPoolSpec, hash_share), .help = "share of total hash power; all pools sum to 1"},
    {.name = "miners", .type = SIM_PARAM_INT, .min = 1, .max = 100000, .def = 1,
     .offset = offsetof(PowPoolSpec, miners),
     .help = "independent miners this entry stands for (e.g. 'many small miners'); each forms its own runs"},
};
const guint pow_pool_n_params = G_N_ELEMENTS(pow_pool_params);

/* ---- blocks ---- */

static inline uint64_t block_id(guint miner, uint32_t seq) { return ((uint64_t)(miner + 1) << 32) | seq; }

static const PowBlock *world_block(const PowWorld *w, uint64_t id) {
  if (id == OBS_GENESIS_ID) return &w->genesis;
  uint64_t m = (id >> 32) - 1;
  uint32_t seq = (uint32_t)id;
  if (m >= w->n_miners) return NULL;
  const PowMiner *mi = &w->miners[m];
  if (seq >= mi->n_blocks) return NULL;
  return &mi->chunks[seq >> CHUNK_BITS][seq & (CHUNK_SIZE - 1)];
}

static PowBlock *miner_new_block(PowMiner *m) {
  uint32_t seq = m->n_blocks;
  guint chunk = seq >> CHUNK_BITS;
  if (chunk >= m->n_chunks) {
    /* Amortised: one allocation per CHUNK_SIZE blocks. */
    m->chunks = g_renew(PowBlock *, m->chunks, m->n_chunks + 1);
    m->chunks[m->n_chunks++] = g_new0(PowBlock, CHUNK_SIZE);
  }
  PowBlock *b = &m->chunks[chunk][seq & (CHUNK_SIZE - 1)];
  memset(b, 0, sizeof *b);
  b->obs.id = block_id(m->index, seq);
  m->n_blocks++;
  return b;
}

/* ---- what a miner knows ---- */

static gboolean known(const PowMiner *m, uint64_t id) {
  if (id == OBS_GENESIS_ID) return TRUE;
  const Bitmap *bm = &m->known[(id >> 32) - 1];
  uint32_t seq = (uint32_t)id;
  guint w = seq / 64;
  return w < bm->n_words && (bm->words[w] >> (seq % 64)) & 1;
}

static void mark_known(PowMiner *m, uint64_t id) {
  Bitmap *bm = &m->known[(id >> 32) - 1];
  uint32_t seq = (uint32_t)id;
  guint w = seq / 64;
  if (w >= bm->n_words) {
    guint n = MAX(w + 1, bm->n_words * 2);
    bm->words = g_renew(guint64, bm->words, n);
    memset(bm->words + bm->n_words, 0, (n - bm->n_words) * sizeof(guint64));
    bm->n_words = n;
  }
  bm->words[w] |= G_GUINT64_CONSTANT(1) << (seq % 64);
}

/* Keeps `recent` to the blocks that can still be referenced as uncles. */
static void add_recent(PowMiner *m, const PowBlock *b) {
  const PowWorld *w = m->world;
  g_array_append_val(m->recent, b->obs.id);
  if (b->obs.height > m->max_known_height) {
    m->max_known_height = b->obs.height;
    uint32_t keep_from = m->max_known_height > (uint32_t)w->uncle_params->generations
                             ? m->max_known_height - (uint32_t)w->uncle_params->generations
                             : 0;
    guint j = 0;
    for (guint i = 0; i < m->recent->len; i++) {
      uint64_t id = g_array_index(m->recent, uint64_t, i);
      if (world_block(w, id)->obs.height >= keep_from) g_array_index(m->recent, uint64_t, j++) = id;
    }
    g_array_set_size(m->recent, j);
  }
}

/* Fork choice of Geth 1.8.23 (writeBlockWithState) with local-block preservation. */
static void consider_head(PowMiner *m, SimCtx *ctx, const PowBlock *b) {
  const PowBlock *h = m->head;
  gboolean take;
  if (b->td != h->td) {
    take = b->td > h->td;
  } else if (b->obs.height != h->obs.height) {
    take = b->obs.height < h->obs.height;
  } else {
    gboolean cur_local = h->obs.miner == m->index;
    gboolean new_local = b->obs.miner == m->index;
    take = !cur_local && (new_local || sim_rng_uniform(sim_ctx_rng(ctx)) < 0.5);
  }
  if (take) m->head = b;
}

static void accept_block(PowMiner *m, SimCtx *ctx, const PowBlock *b) {
  mark_known(m, b->obs.id);
  add_recent(m, b);
  consider_head(m, ctx, b);
}

/* ---- mining ---- */

/* Chooses uncles for a block extending `parent`, as Geth's worker: own side blocks first, then others',
 * each group in random order, each checked against the rule. */
static void choose_uncles(PowMiner *m, SimCtx *ctx, const PowBlock *parent, PowBlock *nb) {
  const PowWorld *w = m->world;
  const SimUncleParams *up = w->uncle_params;
  if (up->max_uncles <= 0) return;
  const uint32_t gens = (uint32_t)up->generations;
  const uint32_t h = parent->obs.height + 1;

  /* The ancestors at heights h-1 .. h-gens and the uncles they already reference. */
  const PowBlock *anc[65];
  uint64_t family[65 * OBS_MAX_UNCLES];
  guint n_anc = 0, n_family = 0;
  for (const PowBlock *a = parent; n_anc < gens; a = world_block(w, a->obs.parent)) {
    anc[n_anc++] = a;
    for (guint u = 0; u < a->obs.n_uncles; u++) family[n_family++] = a->obs.uncles[u];
    if (a->obs.height == 0) break;
  }

  uint64_t own[MAX_CANDIDATES], other[MAX_CANDIDATES];
  guint n_own = 0, n_other = 0;
  for (guint i = 0; i < m->recent->len; i++) {
    const PowBlock *c = world_block(w, g_array_index(m->recent, uint64_t, i));
    uint32_t ch = c->obs.height;
    if (ch + gens <= h || ch >= h) continue; /* depth must be in [1, gens - 1] */
    guint depth_anc = h - 1 - ch;            /* index of the ancestor at the candidate's height */
    if (depth_anc + 1 >= n_anc) continue;    /* its parent is not among the known ancestors */
    if (anc[depth_anc] == c) continue;       /* on our own chain */
    if (anc[depth_anc + 1]->obs.id != c->obs.parent) continue; /* parent not an ancestor */
    gboolean used = FALSE;
    for (guint f = 0; f < n_family && !used; f++) used = family[f] == c->obs.id;
    if (used) continue;
    if (!w->rule->allowed(up, c->obs.miner, anc[depth_anc]->obs.miner)) continue;
    if (c->obs.miner == m->index) {
      if (n_own < MAX_CANDIDATES) own[n_own++] = c->obs.id;
    } else if (n_other < MAX_CANDIDATES) {
      other[n_other++] = c->obs.id;
    }
  }
  SimRng *rng = sim_ctx_rng(ctx);
  uint64_t *groups[2] = {own, other};
  guint sizes[2] = {n_own, n_other};
  for (guint g = 0; g < 2; g++) {
    uint64_t *a = groups[g];
    for (guint i = 0; i < sizes[g] && nb->obs.n_uncles < (uint32_t)up->max_uncles; i++) {
      /* Fisher-Yates step: pick a random remaining candidate. */
      guint j = i + (guint)sim_rng_below(rng, sizes[g] - i);
      uint64_t t = a[i];
      a[i] = a[j];
      a[j] = t;
      nb->obs.uncles[nb->obs.n_uncles++] = a[i];
    }
  }
}

static void mine(PowMiner *m, SimCtx *ctx) {
  const PowWorld *w = m->world;
  const PowBlock *parent = m->head;
  PowBlock *b = miner_new_block(m);
  b->obs.parent = parent->obs.id;
  b->obs.height = parent->obs.height + 1;
  b->obs.miner = m->index;
  b->obs.mined_ns = sim_ctx_now(ctx);
  b->obs.difficulty = 1.0;
  b->td = parent->td + b->obs.difficulty;
  choose_uncles(m, ctx, parent, b);
  accept_block(m, ctx, b);
  w->net->publish(w->cfg->network.params, w, ctx, m->index, b->obs.id);
  if (w->cfg->stop_height && b->obs.height >= w->cfg->stop_height) sim_ctx_stop(ctx);
}

static void schedule_mining(PowMiner *m, SimCtx *ctx) {
  SimTime dt = sim_time_from_s(sim_rng_exponential(sim_ctx_rng(ctx), m->mean_interval_s));
  sim_ctx_send(ctx, m->entity, dt, POW_EV_MINE, 0, 0);
}

static void receive_block(PowMiner *m, SimCtx *ctx, uint64_t id) {
  const PowWorld *w = m->world;
  if (known(m, id)) return;
  const PowBlock *b = world_block(w, id);
  if (!known(m, b->obs.parent)) {
    GArray *waiting = g_hash_table_lookup(m->orphans, &b->obs.parent);
    if (!waiting) {
      waiting = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      g_hash_table_insert(m->orphans, g_memdup2(&b->obs.parent, sizeof(uint64_t)), waiting);
    }
    for (guint i = 0; i < waiting->len; i++)
      if (g_array_index(waiting, uint64_t, i) == id) return;
    g_array_append_val(waiting, id);
    return;
  }
  /* Accept it, then every orphan that was waiting for it (depth first). */
  g_array_set_size(m->ready, 0);
  g_array_append_val(m->ready, id);
  while (m->ready->len > 0) {
    uint64_t next = g_array_index(m->ready, uint64_t, m->ready->len - 1);
    g_array_set_size(m->ready, m->ready->len - 1);
    if (known(m, next)) continue;
    accept_block(m, ctx, world_block(w, next));
    if (g_hash_table_size(m->orphans) == 0) continue;
    GArray *waiting = g_hash_table_lookup(m->orphans, &next);
    if (waiting) {
      g_array_append_vals(m->ready, waiting->data, waiting->len);
      g_hash_table_remove(m->orphans, &next);
    }
  }
}

static void miner_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  PowMiner *m = state;
  switch (ev->type) {
  case POW_EV_MINE:
    mine(m, ctx);
    schedule_mining(m, ctx);
    break;
  case POW_EV_BLOCK:
    receive_block(m, ctx, ev->payload);
    break;
  default:
    g_assert_not_reached();
  }
}

static const SimEntityKind miner_kind = {.name = "miner", .handle = miner_handle};

/* ---- the pool-delay network ---- */

typedef struct {
  SimModelRef delay;
} PoolDelayParams;

static const SimSubmodelSpec pool_delay_submodels[] = {
    {.key = "delay", .family = "delay", .default_model = "lognormal", .offset = offsetof(PoolDelayParams, delay),
     .help = "delay from a miner finding a block to another miner working on it (drawn per receiver)"},
};

static void pool_delay_publish(const void *params, const PowWorld *w, SimCtx *ctx, guint from, uint64_t id) {
  const PoolDelayParams *p = params;
  SimRng *rng = sim_ctx_rng(ctx);
  for (guint i = 0; i < w->n_miners; i++) {
    if (i == from) continue;
    sim_ctx_send(ctx, w->miners[i].entity, sim_delay_sample(&p->delay, rng), POW_EV_BLOCK, 0, id);
  }
}

const PowNetworkModel pow_network_pool_delay = {
    .info = {.name = "pool-delay", .family = "network",
             .help = "no nodes: each block reaches every other miner after an independent draw of `delay`",
             .params = NULL, .n_params = 0, .params_size = sizeof(PoolDelayParams),
             .submodels = pool_delay_submodels, .n_submodels = G_N_ELEMENTS(pool_delay_submodels)},
    .publish = pool_delay_publish,
};

/* ---- the world ---- */

G_DEFINE_QUARK(pow-error-quark, pow_error)

PowWorld *pow_world_new(const PowConfig *cfg, SimEngine *engine, GError **error) {
  g_return_val_if_fail(cfg && engine, NULL);
  if (cfg->n_pools == 0) {
    g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "no pools");
    return NULL;
  }
  PowWorld *w = g_new0(PowWorld, 1);
  w->cfg = cfg;
  w->rule = (const SimUncleRule *)cfg->uncles.model;
  w->uncle_params = cfg->uncles.params;
  w->net = (const PowNetworkModel *)cfg->network.model;
  w->genesis.obs.id = OBS_GENESIS_ID;
  w->genesis.obs.miner = OBS_MINER_NONE;

  guint64 n = 0;
  for (guint p = 0; p < cfg->n_pools; p++) n += (guint64)cfg->pools[p].miners;
  if (n + sim_engine_n_entities(engine) >= SIM_ENTITY_MAX) {
    g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "too many miners (%" G_GUINT64_FORMAT ")", n);
    g_free(w);
    return NULL;
  }
  w->n_miners = (guint)n;
  w->miners = g_new0(PowMiner, w->n_miners);
  guint k = 0;
  for (guint p = 0; p < cfg->n_pools; p++) {
    double share = cfg->pools[p].hash_share / (double)cfg->pools[p].miners;
    for (int64_t j = 0; j < cfg->pools[p].miners; j++, k++) {
      PowMiner *m = &w->miners[k];
      m->world = w;
      m->index = k;
      m->group = p;
      m->mean_interval_s = cfg->chain.target_interval_s / share;
      m->head = &w->genesis;
      m->known = g_new0(Bitmap, w->n_miners);
      m->recent = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      m->orphans = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
      m->ready = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      m->entity = sim_engine_add_entity(engine, &miner_kind, m);
    }
  }
  for (guint i = 0; i < w->n_miners; i++) {
    PowMiner *m = &w->miners[i];
    SimTime dt = sim_time_from_s(sim_rng_exponential(sim_engine_entity_rng(engine, m->entity), m->mean_interval_s));
    sim_engine_schedule(engine, m->entity, m->entity, dt, POW_EV_MINE, 0, 0);
  }
  return w;
}

void pow_world_free(PowWorld *w) {
  if (!w) return;
  for (guint i = 0; i < w->n_miners; i++) {
    PowMiner *m = &w->miners[i];
    for (guint c = 0; c < m->n_chunks; c++) g_free(m->chunks[c]);
    g_free(m->chunks);
    for (guint j = 0; j < w->n_miners; j++) g_free(m->known[j].words);
    g_free(m->known);
    g_array_unref(m->recent);
    g_hash_table_unref(m->orphans);
    g_array_unref(m->ready);
  }
  g_free(w->miners);
  g_free(w);
}

guint pow_world_n_miners(const PowWorld *w) { return w->n_miners; }

SimEntityId pow_world_miner_entity(const PowWorld *w, guint miner) {
  g_return_val_if_fail(miner < w->n_miners, SIM_ENTITY_NONE);
  return w->miners[miner].entity;
}

uint32_t pow_world_max_height(const PowWorld *w) {
  uint32_t h = 0;
  for (guint i = 0; i < w->n_miners; i++) h = MAX(h, w->miners[i].max_known_height);
  return h;
}

uint64_t pow_world_n_blocks(const PowWorld *w) {
  uint64_t n = 0;
  for (guint i = 0; i < w->n_miners; i++) n += w->miners[i].n_blocks;
  return n;
}

const ObsBlock *pow_world_block(const PowWorld *w, uint64_t id) {
  const PowBlock *b = world_block(w, id);
  return b ? &b->obs : NULL;
}

AnMiner *pow_world_an_miners(const PowWorld *w, guint *n_miners) {
  AnMiner *a = g_new0(AnMiner, w->n_miners);
  for (guint i = 0; i < w->n_miners; i++) {
    const PowPoolSpec *p = &w->cfg->pools[w->miners[i].group];
    a[i].hash_share = p->hash_share / (double)p->miners;
    a[i].group = w->miners[i].group;
  }
  *n_miners = w->n_miners;
  return a;
}

static gint cmp_mined(gconstpointer pa, gconstpointer pb) {
  const ObsBlock *a = *(const ObsBlock *const *)pa, *b = *(const ObsBlock *const *)pb;
  if (a->mined_ns != b->mined_ns) return a->mined_ns < b->mined_ns ? -1 : 1;
  if (a->height != b->height) return a->height < b->height ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

gboolean pow_world_feed(const PowWorld *w, AnChain *chain, GError **error) {
  g_autoptr(GPtrArray) all = g_ptr_array_sized_new((guint)pow_world_n_blocks(w));
  for (guint i = 0; i < w->n_miners; i++) {
    const PowMiner *m = &w->miners[i];
    for (uint32_t s = 0; s < m->n_blocks; s++)
      g_ptr_array_add(all, &m->chunks[s >> CHUNK_BITS][s & (CHUNK_SIZE - 1)].obs);
  }
  g_ptr_array_sort(all, cmp_mined);
  for (guint i = 0; i < all->len; i++)
    if (!an_chain_add_block(chain, g_ptr_array_index(all, i), error)) return FALSE;
  return TRUE;
}

void pow_world_an_params(const PowWorld *w, uint32_t max_height, AnChainParams *params) {
  memset(params, 0, sizeof *params);
  params->block_reward = w->cfg->chain.block_reward_eth;
  params->uncle_base = w->uncle_params->uncle_base > 0 ? w->uncle_params->uncle_base : 8;
  params->nephew_divisor = w->uncle_params->nephew_divisor > 0 ? w->uncle_params->nephew_divisor : 32;
  params->max_height = max_height;
}
