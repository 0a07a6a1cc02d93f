/* pow.c: miners, blocks, fork choice and uncle selection of the proof-of-work world (its chain section:
 * pow_chain.c; the pool-delay network: pool_delay.c; pool strategies: strategy.c). */
#include "pow.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "delay.h"

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CANDIDATES 64

typedef struct {
  ObsBlock obs;
  unsigned __int128 td; /* total difficulty, exact */
} PowBlock;


struct PowMiner {
  /* What every block delivery reads or writes, together in the first cache line (a miner's record is a
   * cache miss per delivery when miners sit on a thousand nodes). */
  const PowWorld *world;
  guint index;
  const PowStrategyModel *strategy; /* the pool's */
  const PowBlock *head;
  const PowBlock *work;    /* the parent its miners work on: the head, or after its own block for a while the
                            * old parent (one-miner forks come from that window) */
  SimTime full_at;         /* before this the miners have only the empty template of `work` */
  SimTime empty_window_ns; /* the pool's empty-template window, as a duration */
  uint32_t max_known_height;
  guint n_orphan_parents;  /* the size of `orphans`, kept here: the table's own field is another miss */

  guint group;
  SimEntityId entity;
  double share;           /* own share of the total hash power */
  double mean_interval_s; /* fixed difficulty: target interval / own share */
  double hashrate_hps;    /* byzantium: own share of the total hash rate */
  guint32 pool_member;    /* index among its pool's miners */
  guint64 mine_gen;       /* a POW_EV_MINE whose payload differs is stale (the work changed) */
  /* The find the current mine_gen leads to: exact once find_known (computed on demand, pow_world_find_at:
   * the segment walk costs ~150 steps for a small pool), else at least find_lb; from the draw's start, budget
   * and parent. SIM_TIME_MAX: none drawn. */
  SimTime find_at, find_lb, draw_now;
  gboolean find_known;
  double draw_t, draw_e;
  const PowBlock *draw_parent;
  gpointer net_scratch;   /* the network's per-miner space */

  /* Own blocks: append-only chunks so published blocks never move. Beside each chunk, the blocks'
   * known-by bitmaps: for block s, words [s * known_words, (s + 1) * known_words), bit v = miner v knows
   * it. Bit v is miner v's own state, stored with the block rather than with miner v so that a block's
   * spread (every miner checking and setting its bit in turn) stays in cache: one bitmap per viewer made
   * each delivery a cache miss. Bits are set with atomic OR, so miners on different threads may share a
   * word. */
  PowBlock **chunks;
  guint64 **known_chunks;
  guint n_chunks;
  uint32_t n_blocks;

  const void *strategy_params;
  gpointer strategy_state; /* what strategy->miner_new gave */
  double empty_window_ms;  /* the pool's empty-template window */
  GArray *recent;        /* ids of known blocks near the head: uncle candidates */
  GHashTable *orphans;   /* parent id -> GArray of ids waiting for it */
  GArray *ready;         /* scratch stack for connecting orphans */
  GArray *trace_next;    /* trace-driven mining: indices of its trace blocks, in time order */
  guint trace_pos;
};

struct PowWorld {
  const PowConfig *cfg;
  /* Side work for the network's waiting thread (pow_world_set_side_work): the caller's, then drawing the
   * transaction world's next transactions ahead (tx_world_side_work). */
  gboolean (*side_fn)(gpointer user);
  gpointer side_user;
  gboolean side_set;
  const SimUncleRule *rule;
  const SimUncleParams *uncle_params;
  const PowNetworkModel *net;
  gpointer net_state;
  PowBlock genesis;
  PowMiner *miners;
  guint n_miners;
  guint known_words; /* 64-bit words of one known-by bitmap: ceil(n_miners / 64) */
  TxWorld *txw;      /* transactions, or NULL */
  struct PowMut *mut;
  double eip100_step_s; /* pow_chain_eip100_step_s() */
};

/* What miners change in the world (the world itself is const to them). */
struct PowMut {
  const PowBlock *best; /* the heaviest block mined so far (first mined on ties) */
  double min_difficulty; /* the least difficulty of any block mined so far (pow_world_find_lb_switching) */
  uint64_t *trace_sim;  /* trace-driven mining: simulator id of each trace block (OBS_GENESIS_ID: not yet) */
  GHashTable *trace_index; /* trace id -> index + 1 */
  guint *miner_pool;
  double *pool_share;
};

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

static const ObsBlock *lookup_block(gconstpointer user, uint64_t id) {
  const PowBlock *b = world_block(user, id);
  return b ? &b->obs : NULL;
}

static PowBlock *miner_new_block(PowMiner *m) {
  uint32_t seq = m->n_blocks;
  guint chunk = seq >> CHUNK_BITS;
  if (chunk >= m->n_chunks) {
    /* Amortised: one allocation per CHUNK_SIZE blocks. */
    m->chunks = g_renew(PowBlock *, m->chunks, m->n_chunks + 1);
    m->known_chunks = g_renew(guint64 *, m->known_chunks, m->n_chunks + 1);
    m->chunks[m->n_chunks] = g_new0(PowBlock, CHUNK_SIZE);
    m->known_chunks[m->n_chunks++] = g_new0(guint64, (gsize)CHUNK_SIZE * m->world->known_words);
  }
  PowBlock *b = &m->chunks[chunk][seq & (CHUNK_SIZE - 1)];
  memset(b, 0, sizeof *b);
  b->obs.id = block_id(m->index, seq);
  m->n_blocks++;
  return b;
}

/* ---- what a miner knows ---- */

static inline guint64 *known_word(const PowMiner *m, uint64_t id) {
  const PowWorld *w = m->world;
  const PowMiner *owner = &w->miners[(id >> 32) - 1];
  uint32_t seq = (uint32_t)id;
  return &owner->known_chunks[seq >> CHUNK_BITS][(gsize)(seq & (CHUNK_SIZE - 1)) * w->known_words + m->index / 64];
}

static gboolean known(const PowMiner *m, uint64_t id) {
  if (id == OBS_GENESIS_ID) return TRUE;
  return (__atomic_load_n(known_word(m, id), __ATOMIC_RELAXED) >> (m->index % 64)) & 1;
}

static void mark_known(PowMiner *m, uint64_t id) {
  __atomic_fetch_or(known_word(m, id), G_GUINT64_CONSTANT(1) << (m->index % 64), __ATOMIC_RELAXED);
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

static inline void accept_block(PowMiner *m, SimCtx *ctx, const PowBlock *b) {
  mark_known(m, b->obs.id);
  if (m->world->uncle_params->max_uncles > 0)
    add_recent(m, b);
  else if (b->obs.height > m->max_known_height) /* no block ever references an uncle: no candidates kept */
    m->max_known_height = b->obs.height;
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

/* EIP-100's ⌊(ts − parent ts) / 9⌋ with the world's step (9 s at the default target_interval_s); dt >= 0. */
static int64_t eip100_steps(const PowWorld *w, int64_t dt) {
  return (int64_t)floor((double)dt / w->eip100_step_s);
}

/* The first header-time gap after `dt` at which eip100_steps() grows (at least dt + 1, so time moves). */
static int64_t eip100_next_gap(const PowWorld *w, int64_t dt) {
  int64_t j = eip100_steps(w, dt);
  int64_t c = MAX(dt + 1, (int64_t)ceil(w->eip100_step_s * (double)(j + 1)));
  while (eip100_steps(w, c) <= j) c++;
  return c;
}

/* EIP-100 (Byzantium, kept by Constantinople): the difficulty of a block with timestamp `ts` on `parent`.
 * The difficulty bomb is left out: delayed by 5 M blocks in Constantinople it adds 2^23 at block 7.5 M,
 * 4e-9 of the difficulty. */
/* EIP-100's adjustment of a parent's difficulty `pd` by x steps of pd / 2048 (x at least -99, the floor), at
 * least the minimum difficulty. */
static double eip100_adjust(double pd, int64_t x) {
  if (x < -99) x = -99;
  return MAX(131072.0, pd + floor(pd / 2048) * (double)x);
}

/* At most the least difficulty a child of a block of difficulty `d` can have (the adjustment's floor, -99 steps,
 * rounded so as to stay below). */
static double eip100_floor_lb(double d) { return MAX(131072.0, d - 99 * ceil(d / 2048)); }

static double byzantium_difficulty(const PowWorld *w, const PowBlock *parent, int64_t ts) {
  if (parent->obs.height == 0) return w->cfg->chain.initial_difficulty;
  return eip100_adjust(parent->obs.difficulty,
                       (parent->obs.n_uncles ? 2 : 1) - eip100_steps(w, ts - parent->obs.timestamp_s));
}

static int64_t header_time(const PowBlock *parent, double t_s) {
  int64_t ts = (int64_t)floor(t_s);
  return parent->obs.height == 0 ? ts : MAX(ts, parent->obs.timestamp_s + 1);
}

/* New work for the miners: the current head, an empty template first, the full one after the window.
 * The caller draws the next find where the rate changed. */
static void switch_work(PowMiner *m, SimCtx *ctx) {
  m->work = m->head;
  m->full_at = sim_ctx_now(ctx) + m->empty_window_ns;
}

static void publish(PowMiner *m, SimCtx *ctx, const PowBlock *b) {
  const PowWorld *w = m->world;
  w->net->publish(w->cfg->network.params, w->net_state, m->net_scratch, w, ctx, m->index, &b->obs);
  if (m->strategy->on_published) m->strategy->on_published(m->strategy_state, &b->obs);
}

void pow_miner_publish(PowMiner *m, SimCtx *ctx, uint64_t id) { publish(m, ctx, world_block(m->world, id)); }

const PowWorld *pow_miner_world(const PowMiner *m) { return m->world; }

static void mine(PowMiner *m, SimCtx *ctx) {
  const PowWorld *w = m->world;
  const PowChainParams *cp = &w->cfg->chain;
  const PowBlock *parent = m->work;
  PowBlock *b = miner_new_block(m);
  SimTime now = sim_ctx_now(ctx);
  b->obs.parent = parent->obs.id;
  b->obs.height = parent->obs.height + 1;
  b->obs.miner = m->index;
  b->obs.mined_ns = now;
  b->obs.timestamp_s = header_time(parent, sim_time_to_s(now));
  b->obs.difficulty =
      cp->difficulty == POW_DIFFICULTY_BYZANTIUM ? byzantium_difficulty(w, parent, b->obs.timestamp_s) : 1.0;
  /* The fork-choice weight: total difficulty, or the height under the longest-chain rule. */
  b->td = parent->td + (cp->fork_choice == POW_FORK_CHOICE_LONGEST ? 1 : (unsigned __int128)b->obs.difficulty);
  w->mut->min_difficulty = MIN(w->mut->min_difficulty, b->obs.difficulty);
  /* The template: empty until full_at, then rebuilt every recommit_s. Two blocks on one template (a
   * one-miner fork before the template changed) carry the same transactions, so the contents are drawn
   * from a stream keyed by the template. */
  b->obs.empty = now < m->full_at;
  uint64_t k = b->obs.empty ? UINT64_MAX : (uint64_t)floor(sim_time_to_s(now - m->full_at) / cp->recommit_s);
  b->obs.txset = sim_mix64(sim_mix64(sim_mix64((uint64_t)m->index + 1) ^ parent->obs.id) ^ k) | 1;
  if (w->txw) {
    SimTime built = b->obs.empty ? now : m->full_at + sim_time_from_s((double)k * cp->recommit_s);
    tx_world_build(w->txw, m->group, &parent->obs, built, &b->obs);
  } else if (cp->tx_rate_per_s > 0 && !b->obs.empty) {
    SimTime built = m->full_at + sim_time_from_s((double)k * cp->recommit_s);
    double waiting = cp->tx_rate_per_s * sim_time_to_s(MAX(0, built - parent->obs.mined_ns));
    SimRng tr;
    sim_rng_init(&tr, w->cfg->seed, (UINT64_C(1) << 62) | (b->obs.txset >> 2));
    unsigned n = gsl_ran_poisson(sim_rng_gsl(&tr), waiting);
    unsigned cap = (unsigned)floor(cp->block_gas_limit / cp->tx_gas);
    b->obs.n_tx = MIN(n, cap);
  }
  if (!w->txw) {
    b->obs.gas_used = (uint64_t)(b->obs.n_tx * cp->tx_gas);
    b->obs.size_bytes = (uint32_t)MIN(cp->header_bytes + b->obs.n_tx * cp->tx_bytes, (double)UINT32_MAX);
  }
  choose_uncles(m, ctx, parent, b);
  accept_block(m, ctx, b);
  /* Published before the transaction world hears of it: the relay needs only the block (its size and gas),
   * and with the relay pipeline the block's relay then starts while this thread updates the transactions
   * (their index and commit-time metrics are no input of the relay, the network or the strategies). */
  if (m->strategy->on_mined)
    m->strategy->on_mined(m->strategy_params, m->strategy_state, m, ctx, &b->obs);
  else
    publish(m, ctx, b);
  if (w->txw) {
    tx_world_on_mined(w->txw, &b->obs);
    if (b->td > w->mut->best->td) {
      w->mut->best = b;
      tx_world_on_best(w->txw, &b->obs);
    }
  }
  /* The pool's own miners get work on the new block after its work distribution delay; until then they
   * keep mining on the old parent. */
  SimTime d = w->net->own_work_delay ? w->net->own_work_delay(w->cfg->network.params, sim_ctx_rng(ctx)) : 0;
  if (d > 0)
    sim_ctx_send(ctx, m->entity, d, POW_EV_WORK, 0, b->obs.id);
  else if (m->head != m->work)
    switch_work(m, ctx);
  if (w->cfg->stop_height && b->obs.height >= w->cfg->stop_height) sim_ctx_stop(ctx);
}

/* Mining is a Poisson process at rate (own hash rate / difficulty of the block worked on). With fixed
 * difficulty the rate is constant: one exponential draw. With Byzantium the difficulty steps every EIP-100 step of
 * header time, so the rate is piecewise constant and one Exp(1) budget is spent segment by segment (exact
 * for a Poisson process with a varying rate; find_time). spend() handles the current segment: a budget that
 * ends there is a find event at once. One that outlasts it gets a check event (MINE_CONTINUE) at find_lb, a
 * lower bound of its find (the budget spent at the adjustment floor's rate, at most 5% early), but at most
 * CHECK_MAX_NS ahead; the check schedules the find (the walk, pow_world_find_at) once find_lb is that near,
 * else another check. When find_lb falls within the current segment the find is near and is computed at
 * once. Most budgets move to other work long before their check (every block a miner switches to starts
 * its remaining budget again there, new_work), so a check seldom walks the up to 101 segments before the
 * floor. A continuation at every segment's end instead made about one event per miner and block (each step
 * is 9 s of header time), each of which the relay's pipeline had to hold until no unknown find could come
 * before it (geo.c): three fifths of its waits. The cap keeps the checks of moved budgets (stale, dropped when
 * their time comes) from piling up in the queue. The
 * finds, their times and every other event's order are the same either way: only the miner's own, fewer,
 * events change (keys are ordered by source first, so the shifted sequence numbers of its later events order
 * them as before). */
enum { MINE_FIND = 0, MINE_CONTINUE = 1 };
#define CHECK_MAX_NS ((SimTime)60 * SIM_NS_PER_S)

/* The difficulty segment of header time `t` (seconds) on `parent`: the rate there and where it ends. */
static double segment(const PowMiner *m, const PowBlock *parent, double t, double *next) {
  const PowWorld *w = m->world;
  int64_t ts = header_time(parent, t);
  /* The difficulty changes when the header time crosses the next multiple of the step after the parent's; at
   * the floor of the adjustment (-99) and on the genesis it no longer does. */
  *next = INFINITY;
  if (parent->obs.height > 0 && eip100_steps(w, ts - parent->obs.timestamp_s) < 101)
    *next = (double)(parent->obs.timestamp_s + eip100_next_gap(w, ts - parent->obs.timestamp_s));
  return m->hashrate_hps / byzantium_difficulty(w, parent, ts);
}

/* When a budget `e` spent from `t` (seconds) on `parent` ends in a find, as the chain of events spend()
 * schedules from an event at `now` would deliver it (each continuation at the rounded step time, the find
 * at the rounded end, none before its predecessor). Pure: for find_at and the relay's pipeline. */
static SimTime find_time(const PowMiner *m, const PowBlock *parent, SimTime now, double t, double e) {
  for (;;) {
    double next;
    double rate = segment(m, parent, t, &next);
    if (t + e / rate <= next) return now + MAX(0, sim_time_from_s(t + e / rate) - now);
    e = e - (next - t) * rate;
    t = next;
    now = now + MAX(0, sim_time_from_s(next) - now);
  }
}

/* The current draw's next event: its find when `near` (the walk, pow_world_find_at, which comes no earlier than
 * now), else a check at find_lb, at most CHECK_MAX_NS ahead. */
static void mine_next(PowMiner *m, SimCtx *ctx, gboolean near) {
  SimTime now = sim_ctx_now(ctx);
  if (near) {
    SimTime at = pow_world_find_at(m->world, m->index);
    g_assert(at >= now);
    sim_ctx_send(ctx, m->entity, at - now, POW_EV_MINE, MINE_FIND, m->mine_gen);
  } else {
    sim_ctx_send(ctx, m->entity, MIN(m->find_lb - now, CHECK_MAX_NS), POW_EV_MINE, MINE_CONTINUE, m->mine_gen);
  }
}

/* The draw's first event (above): the find when the budget ends in the current segment, or when find_lb falls
 * in it (the floor's rate is at most 5% above this one: the walk is a step or two, and a check would come at
 * the step, before the find); else a check. */
static void spend(PowMiner *m, SimCtx *ctx, double t, double e) {
  double next;
  double rate = segment(m, m->work, t, &next);
  SimTime now = sim_ctx_now(ctx);
  SimTime step = now + MAX(0, sim_time_from_s(next) - now); /* find_time's first step: at most the find */
  mine_next(m, ctx, t + e / rate <= next || m->find_lb <= step);
}

/* The budget a draw spent from header time t0 to t1 (seconds) on `parent`: the rate's integral over the
 * difficulty's segments (the walk find_time takes). */
static double spent(const PowMiner *m, const PowBlock *parent, double t0, double t1) {
  double e = 0;
  while (t0 < t1) {
    double next;
    double rate = segment(m, parent, t0, &next);
    double end = MIN(next, t1);
    e += (end - t0) * rate;
    t0 = end;
  }
  return e;
}

/* Mines budget `e` on the current work from now: a new generation, its lower bound, its first event. */
static void start_budget(PowMiner *m, SimCtx *ctx, double e) {
  m->mine_gen++;
  double t = sim_time_to_s(sim_ctx_now(ctx));
  m->draw_now = sim_ctx_now(ctx);
  m->draw_t = t;
  m->draw_e = e;
  m->draw_parent = m->work;
  m->find_known = FALSE;
  /* At most the rate at the adjustment's floor on this parent. */
  const PowBlock *p = m->work;
  double d = eip100_floor_lb(p->obs.height == 0 ? m->world->cfg->chain.initial_difficulty : p->obs.difficulty);
  double lb = e / (m->hashrate_hps / d) * 1e9;
  /* Less 16 ns: the rounding of times in seconds held in doubles. */
  m->find_lb = m->draw_now + (lb >= (double)SIM_DURATION_MAX ? SIM_DURATION_MAX : MAX(0, (SimTime)lb - 16));
  spend(m, ctx, t, e);
}

/* A new draw: after a find, and at the start. */
static void schedule_mining(PowMiner *m, SimCtx *ctx) {
  SimRng *rng = sim_ctx_rng(ctx);
  if (m->world->cfg->chain.difficulty == POW_DIFFICULTY_FIXED) {
    m->mine_gen++;
    SimTime dt = sim_time_from_s(sim_rng_exponential(rng, m->mean_interval_s));
    sim_ctx_send(ctx, m->entity, dt, POW_EV_MINE, MINE_FIND, m->mine_gen);
    m->find_at = m->find_lb = sim_ctx_now(ctx) + dt;
    m->find_known = TRUE;
    return;
  }
  start_budget(m, ctx, sim_rng_exponential(rng, 1.0));
}

/* Work switched outside a find. Hashing goes on: the miner keeps what is left of its budget and spends it on
 * the new work from now, whose rate differs with the parent's difficulty (a Poisson process with a rate that
 * changes: exact, and the same law as drawing again, the process being memoryless). Drawing nothing here
 * makes a miner's next find depend on when blocks reach it only through the difficulty (a fraction of a
 * percent over seconds), which the relay's pipeline (geo.c) bounds without waiting for the delivery. */
static void new_work(PowMiner *m, SimCtx *ctx) {
  switch_work(m, ctx);
  if (m->world->cfg->trace) return; /* trace-driven: the trace says when blocks are found */
  if (m->world->cfg->chain.difficulty == POW_DIFFICULTY_FIXED) return; /* the rate does not change */
  double e = m->draw_e - spent(m, m->draw_parent, m->draw_t, sim_time_to_s(sim_ctx_now(ctx)));
  start_budget(m, ctx, MAX(0.0, e));
}

/* Networks deliver each block to each other miner exactly once (PowNetworkModel.publish), so neither the
 * block nor a waiting orphan can already be known here: one lookup (the parent) per delivery. */
static void receive_block(PowMiner *m, SimCtx *ctx, uint64_t id) {
  const PowWorld *w = m->world;
  const PowBlock *b = world_block(w, id);
  if (!known(m, b->obs.parent)) {
    GArray *waiting = g_hash_table_lookup(m->orphans, &b->obs.parent);
    if (!waiting) {
      waiting = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      g_hash_table_insert(m->orphans, g_memdup2(&b->obs.parent, sizeof(uint64_t)), waiting);
      m->n_orphan_parents++;
    }
    g_array_append_val(waiting, id);
    return;
  }
  /* Accept it, then every orphan that was waiting for it (depth first). Without orphans (nearly always) that
   * is the block alone. */
  if (m->n_orphan_parents == 0) {
    accept_block(m, ctx, b);
    return;
  }
  g_array_set_size(m->ready, 0);
  g_array_append_val(m->ready, id);
  while (m->ready->len > 0) {
    uint64_t next = g_array_index(m->ready, uint64_t, m->ready->len - 1);
    g_array_set_size(m->ready, m->ready->len - 1);
    accept_block(m, ctx, world_block(w, next));
    if (m->n_orphan_parents == 0) continue;
    GArray *waiting = g_hash_table_lookup(m->orphans, &next);
    if (waiting) {
      g_array_append_vals(m->ready, waiting->data, waiting->len);
      g_hash_table_remove(m->orphans, &next);
      m->n_orphan_parents--;
    }
  }
}

enum { MINE_TRACE = 2 };

static void schedule_trace(PowMiner *m, SimCtx *ctx) {
  if (!m->trace_next || m->trace_pos >= m->trace_next->len) return;
  const PowTraceBlock *tb = &m->world->cfg->trace[g_array_index(m->trace_next, guint, m->trace_pos)];
  sim_ctx_send(ctx, m->entity, MAX(0, tb->mined_ns - sim_ctx_now(ctx)), POW_EV_MINE, MINE_TRACE, 0);
}

/* Mines the next trace block of this miner on the parent the trace names. */
static void mine_trace(PowMiner *m, SimCtx *ctx) {
  const PowWorld *w = m->world;
  guint i = g_array_index(m->trace_next, guint, m->trace_pos++);
  const PowTraceBlock *tb = &w->cfg->trace[i];
  const PowBlock *parent = &w->genesis;
  if (tb->parent != OBS_GENESIS_ID) {
    gpointer pi = g_hash_table_lookup(w->mut->trace_index, &tb->parent);
    uint64_t pid = pi ? w->mut->trace_sim[GPOINTER_TO_UINT(pi) - 1] : OBS_GENESIS_ID;
    if (pid == OBS_GENESIS_ID) { /* the parent was not mined: neither is this block */
      schedule_trace(m, ctx);
      return;
    }
    parent = world_block(w, pid);
  }
  PowBlock *b = miner_new_block(m);
  b->obs.parent = parent->obs.id;
  b->obs.height = parent->obs.height + 1;
  b->obs.miner = m->index;
  b->obs.mined_ns = sim_ctx_now(ctx);
  b->obs.timestamp_s = tb->timestamp_s;
  b->obs.difficulty = tb->difficulty;
  b->td = parent->td + (w->cfg->chain.fork_choice == POW_FORK_CHOICE_LONGEST ? 1 : (unsigned __int128)tb->difficulty);
  b->obs.n_tx = tb->n_tx;
  b->obs.empty = tb->n_tx == 0;
  b->obs.gas_used = tb->gas_used;
  b->obs.size_bytes = tb->size_bytes;
  b->obs.txset = 0;
  for (guint u = 0; u < tb->n_uncles; u++) {
    gpointer ui = g_hash_table_lookup(w->mut->trace_index, &tb->uncles[u]);
    uint64_t uid = ui ? w->mut->trace_sim[GPOINTER_TO_UINT(ui) - 1] : OBS_GENESIS_ID;
    if (uid != OBS_GENESIS_ID && known(m, uid) && b->obs.n_uncles < OBS_MAX_UNCLES) b->obs.uncles[b->obs.n_uncles++] = uid;
  }
  w->mut->trace_sim[i] = b->obs.id;
  accept_block(m, ctx, b);
  publish(m, ctx, b);
  if (w->cfg->stop_height && b->obs.height >= w->cfg->stop_height) sim_ctx_stop(ctx);
  schedule_trace(m, ctx);
}

static void miner_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  PowMiner *m = state;
  switch (ev->type) {
  case POW_EV_MINE:
    if (ev->aux == MINE_TRACE) {
      mine_trace(m, ctx);
      break;
    }
    if (ev->payload != m->mine_gen) break; /* the work changed since this was drawn */
    if (ev->aux == MINE_CONTINUE) {
      /* The check: the find once find_lb is that near, else another check. */
      mine_next(m, ctx, m->find_lb - sim_ctx_now(ctx) <= CHECK_MAX_NS);
      break;
    }
    /* find_at predicts this event exactly (the relay's pipeline relies on it). */
    g_assert(sim_ctx_now(ctx) == pow_world_find_at(m->world, m->index));
    /* The strategy may lose the find (block withholding: an infiltrated miner throws the block away). */
    if (!m->strategy->on_find || m->strategy->on_find(m->strategy_params, m->strategy_state, ctx)) mine(m, ctx);
    schedule_mining(m, ctx);
    break;
  case POW_EV_BLOCK: {
    const PowBlock *before = m->head;
    receive_block(m, ctx, ev->payload);
    if (m->strategy->on_public)
      m->strategy->on_public(m->strategy_params, m->strategy_state, m, ctx, &world_block(m->world, ev->payload)->obs);
    /* A block from elsewhere arrives when the pool's miners got work on it (the network includes the
     * work distribution): new work at once. */
    if (m->head != before) new_work(m, ctx);
    break;
  }
  case POW_EV_WORK:
    if (m->work != m->head) new_work(m, ctx);
    break;
  default:
    g_assert_not_reached();
  }
}

static const SimEntityKind miner_kind = {.name = "miner", .handle = miner_handle};

/* ---- the world ---- */

G_DEFINE_QUARK(pow-error-quark, pow_error)

PowWorld *pow_world_new(const PowConfig *cfg, SimEngine *engine, GError **error) {
  g_return_val_if_fail(cfg && engine, NULL);
  if (cfg->n_pools == 0) {
    g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "no pools");
    return NULL;
  }
  /* The scenario loader refuses these already; a world built otherwise must not stall at one timestamp. */
  double first = pow_chain_first_interval_s(&cfg->chain);
  if (!cfg->trace && !(first >= POW_MIN_INTERVAL_S && first <= POW_MAX_INTERVAL_S)) {
    g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "mean block interval %.3g s out of [%g, %g] s", first,
                POW_MIN_INTERVAL_S, POW_MAX_INTERVAL_S);
    return NULL;
  }
  PowWorld *w = g_new0(PowWorld, 1);
  w->cfg = cfg;
  w->eip100_step_s = pow_chain_eip100_step_s(&cfg->chain);
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
  w->known_words = (w->n_miners + 63) / 64;
  SimEntityId first_entity = sim_engine_n_entities(engine);
  w->mut = g_new0(struct PowMut, 1);
  w->mut->best = &w->genesis;
  w->mut->min_difficulty = INFINITY;
  w->mut->miner_pool = g_new0(guint, MAX(w->n_miners, 1));
  w->mut->pool_share = g_new0(double, MAX(cfg->n_pools, 1));
  w->miners = g_new0(PowMiner, w->n_miners);
  guint k = 0;
  for (guint p = 0; p < cfg->n_pools; p++) {
    /* Each miner's share of the pool: equal, or drawn weights normalised to the pool's share. */
    const int64_t pm = cfg->pools[p].miners;
    const double sd = cfg->pools[p].miner_hash_sd;
    g_autofree double *weight = NULL;
    double total = 0;
    if (sd > 0) {
      SimRng wr;
      sim_rng_init(&wr, cfg->seed, SIM_RNG_SETUP_BASE + 0x10000 + p);
      weight = g_new(double, pm);
      for (int64_t j = 0; j < pm; j++) {
        double x = 1 + sd * gsl_ran_ugaussian(sim_rng_gsl(&wr));
        total += weight[j] = MAX(x, 1.0 / 400000);
      }
    }
    for (int64_t j = 0; j < pm; j++, k++) {
      double share =
          weight ? cfg->pools[p].hash_share * (weight[j] / total) : cfg->pools[p].hash_share / (double)pm;
      PowMiner *m = &w->miners[k];
      m->world = w;
      m->index = k;
      m->group = p;
      m->share = share;
      m->mean_interval_s = cfg->chain.target_interval_s / share;
      m->hashrate_hps = cfg->chain.hashrate_hps * share;
      m->pool_member = (guint32)j;
      m->strategy = (const PowStrategyModel *)cfg->pools[p].strategy.model;
      m->strategy_params = cfg->pools[p].strategy.params;
      m->strategy_state = m->strategy->miner_new ? m->strategy->miner_new(m->strategy_params) : NULL;
      m->empty_window_ms =
          cfg->pools[p].empty_window_ms >= 0 ? cfg->pools[p].empty_window_ms : cfg->chain.empty_window_ms;
      m->empty_window_ns = sim_time_from_s(m->empty_window_ms / 1e3);
      w->mut->miner_pool[k] = p;
      m->head = m->work = &w->genesis;
      m->recent = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      m->orphans = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
      m->ready = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      m->entity = sim_engine_add_entity(engine, &miner_kind, m);
    }
  }
  if (cfg->trace) {
    w->mut->trace_sim = g_new0(uint64_t, MAX(cfg->n_trace, 1));
    w->mut->trace_index = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < cfg->n_trace; i++) {
      const PowTraceBlock *tb = &cfg->trace[i];
      if (tb->miner >= w->n_miners || (i > 0 && tb->mined_ns < cfg->trace[i - 1].mined_ns)) {
        g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "trace block %u: miner out of range or time out of order", i);
        pow_world_free(w);
        return NULL;
      }
      g_hash_table_insert(w->mut->trace_index, (gpointer)&tb->id, GUINT_TO_POINTER(i + 1));
      PowMiner *m = &w->miners[tb->miner];
      if (!m->trace_next) m->trace_next = g_array_new(FALSE, FALSE, sizeof(guint));
      g_array_append_val(m->trace_next, i);
    }
  }
  if (w->net->init) {
    w->net_state = w->net->init(cfg->network.params, w, engine, error);
    if (!w->net_state) {
      pow_world_free(w);
      return NULL;
    }
  }
  if (cfg->tx) {
    TxNetView view = {.n_pools = cfg->n_pools};
    if (w->net->tx_view) w->net->tx_view(w->net_state, w, &view);
    for (guint p = 0; p < cfg->n_pools; p++) w->mut->pool_share[p] = cfg->pools[p].hash_share;
    w->txw = tx_world_new(cfg->tx, &view, cfg->chain.block_gas_limit, cfg->chain.header_bytes, w->mut->pool_share,
                          w->mut->miner_pool, w->n_miners, cfg->seed, lookup_block, w, cfg->tx_sink, error);
    if (!w->txw) {
      pow_world_free(w);
      return NULL;
    }
  }
  /* One group for the whole world (pow_world_partition_note says why): it runs sequentially whatever the
   * thread count, so its outputs stay those of the sequential engine. */
  for (guint i = first_entity + 1; i < sim_engine_n_entities(engine); i++)
    sim_engine_keep_together(engine, first_entity, i);
  for (guint i = 0; i < w->n_miners; i++) {
    PowMiner *m = &w->miners[i];
    if (w->net->miner_scratch) m->net_scratch = w->net->miner_scratch(w->net_state, i);
    if (cfg->trace) {
      if (m->trace_next && m->trace_next->len) {
        const PowTraceBlock *tb = &cfg->trace[g_array_index(m->trace_next, guint, 0)];
        sim_engine_schedule(engine, m->entity, m->entity, MAX(0, tb->mined_ns), POW_EV_MINE, MINE_TRACE, 0);
      }
      continue;
    }
    /* The first work is on the genesis: draw as a handler would, from the miner's own stream (with Byzantium a
     * budget, which a switch of work before the first find spends on, new_work). */
    double dt;
    if (cfg->chain.difficulty == POW_DIFFICULTY_FIXED) {
      dt = sim_rng_exponential(sim_engine_entity_rng(engine, m->entity), m->mean_interval_s);
    } else {
      m->draw_e = sim_rng_exponential(sim_engine_entity_rng(engine, m->entity), 1.0);
      m->draw_now = 0;
      m->draw_t = 0;
      m->draw_parent = &w->genesis;
      dt = m->draw_e * cfg->chain.initial_difficulty / m->hashrate_hps;
    }
    m->mine_gen = 1;
    m->find_at = m->find_lb = sim_time_from_s(dt);
    m->find_known = TRUE;
    sim_engine_schedule(engine, m->entity, m->entity, sim_time_from_s(dt), POW_EV_MINE, 0, m->mine_gen);
  }
  return w;
}

/* ---- What the relay's pipeline (geo.c) asks of the miners ---- */

gboolean pow_world_pipeline_ok(const PowWorld *w) {
  if (w->cfg->trace) return FALSE;
  for (guint i = 0; i < w->n_miners; i++) {
    const PowStrategyModel *s = w->miners[i].strategy;
    if (s->on_find || s->on_mined || s->on_public || s->on_published) return FALSE;
  }
  return TRUE;
}

SimTime pow_world_find_at(const PowWorld *w, guint miner) {
  /* Computed once per draw (memoised in the miner's record: the world is const for its readers). */
  PowMiner *m = (PowMiner *)&w->miners[miner];
  if (!m->find_known) {
    m->find_at = find_time(m, m->draw_parent, m->draw_now, m->draw_t, m->draw_e);
    m->find_known = TRUE;
  }
  return m->find_at;
}

gboolean pow_world_event_inert(const PowWorld *w, guint miner, const SimEvent *ev) {
  const PowMiner *m = &w->miners[miner];
  /* mine_gen only grows: stale now, stale when its turn comes (miner_handle drops it). */
  return ev->type == POW_EV_MINE && ev->aux != MINE_TRACE && ev->payload != m->mine_gen;
}

SimTime pow_world_find_lb(const PowWorld *w, guint miner) { return w->miners[miner].find_lb; }

gboolean pow_world_ends_at_find(const PowWorld *w, SimTime stop_time) {
  return w->cfg->stop_height > 0 && stop_time == SIM_TIME_MAX;
}

void pow_world_prepare(const PowWorld *w, SimTime t) {
  /* The transaction world is the miners' (the world is const for its readers, as in find_at). */
  if (w->txw) tx_world_advance(w->txw, t);
}

/* The least difficulty of a child of `p` found at or before `until` (header times at most its header time
 * then): EIP-100 lowers it by one 1/2048 step per step of header time past the parent's (the floor at -99),
 * an uncle raises it. */
static double child_difficulty_min(const PowWorld *w, const PowBlock *p, SimTime until) {
  if (p->obs.height == 0) return w->cfg->chain.initial_difficulty;
  int64_t ts = MAX((int64_t)floor(sim_time_to_s(until)), p->obs.timestamp_s + 1);
  return eip100_adjust(p->obs.difficulty, 1 - eip100_steps(w, ts - p->obs.timestamp_s));
}

SimTime pow_world_find_lb_switching(const PowWorld *w, guint miner, SimTime until, const uint64_t *blocks, guint n) {
  const PowMiner *m = &w->miners[miner];
  /* Fixed difficulty: a switch changes nothing (new_work). */
  if (w->cfg->chain.difficulty == POW_DIFFICULTY_FIXED) return m->find_at;
  /* The budget is spent at most at the greatest rate of any work the miner may mine on until then: its
   * work, its head (its own work distribution switches to it), the blocks that may reach it. */
  double d = child_difficulty_min(w, m->work, until);
  double dh = child_difficulty_min(w, m->head, until);
  d = MIN(d, dh);
  for (guint i = 0; i < n; i++) {
    double db = child_difficulty_min(w, world_block(w, blocks[i]), until);
    d = MIN(d, db);
  }
  if (m->n_orphan_parents) {
    /* A delivery may accept blocks that wait for their parent, any block mined so far: the adjustment's floor
     * under the least difficulty mined. */
    double dm = eip100_floor_lb(MIN(w->mut->min_difficulty, w->cfg->chain.initial_difficulty));
    d = MIN(d, dm);
  }
  double s = m->draw_e / (m->hashrate_hps / d) * 1e9;
  if (s >= (double)SIM_DURATION_MAX) return SIM_TIME_MAX;
  return m->draw_now + MAX(0, (SimTime)s - 16); /* less the rounding */
}

void pow_world_free(PowWorld *w) {
  if (!w) return;
  /* The network's thread may be drawing transactions ahead: stopped before the transaction world goes. */
  if (w->side_set) w->net->set_side_work(w->net_state, NULL, NULL);
  for (guint i = 0; i < w->n_miners; i++) {
    PowMiner *m = &w->miners[i];
    for (guint c = 0; c < m->n_chunks; c++) {
      g_free(m->chunks[c]);
      g_free(m->known_chunks[c]);
    }
    g_free(m->chunks);
    g_free(m->known_chunks);
    g_array_unref(m->recent);
    g_hash_table_unref(m->orphans);
    g_array_unref(m->ready);
    if (m->strategy_state && m->strategy->miner_free) m->strategy->miner_free(m->strategy_state);
    if (m->trace_next) g_array_unref(m->trace_next);
    if (m->net_scratch && w->net->free_scratch) w->net->free_scratch(m->net_scratch);
  }
  tx_world_free(w->txw);
  if (w->net_state && w->net->free_state) w->net->free_state(w->net_state);
  if (w->mut) {
    g_free(w->mut->miner_pool);
    g_free(w->mut->pool_share);
    g_free(w->mut->trace_sim);
    if (w->mut->trace_index) g_hash_table_unref(w->mut->trace_index);
    g_free(w->mut);
  }
  g_free(w->miners);
  g_free(w);
}

char *pow_world_partition_note(const PowWorld *w, double run_wall_s) {
  /* Each reason alone forces one group; the shipped scenarios all have the first. */
  GString *s = g_string_new("pow: one group of all miners and network entities:");
  if (w->cfg->stop_height)
    g_string_append(s, " the stop at stop.heights must come right after the block's event (windows would "
                       "stop at the window's end and change the outputs);");
  if (w->txw)
    g_string_append(s, " the transaction world is changed by every miner's handler and reads the vantage "
                       "points' receptions;");
  g_string_append(s,
                  " miners read each other's block stores (which their owners grow) and set bits in shared "
                  "known-by bitmaps;");
  if (w->net->miner_scratch) g_string_append(s, " the network's relay scratch is shared;");
  SimTime la = w->net->min_delay ? w->net->min_delay(w->net_state) : 0;
  if (la > 0)
    g_string_append_printf(s,
                           " a split would have a lookahead of %.3f ms (least link latency) against a mean "
                           "block interval of %.2f s, so at most one block (the expensive event) per window.",
                           (double)la / 1e6, w->cfg->chain.target_interval_s);
  else
    g_string_append_printf(s, " a split would have no lookahead: the network's delays have no positive lower "
                              "bound.");
  double relay_s = w->net->relay_wall_s ? w->net->relay_wall_s(w->net_state) : -1;
  if (relay_s >= 0 && run_wall_s > 0) {
    /* Without the pipeline the relay of one block runs inside one handler, and the next block cannot be built
     * before the pools have heard this one: only the relay's own threads (below) run in parallel. With it,
     * this is the relay threads' time, which overlaps the run's. */
    double r = MIN(1.0, relay_s / run_wall_s);
    g_string_append_printf(s,
                           " The relay kernel took %.3f s of the run's %.3f s (%.1f%%), one block at a time.",
                           relay_s, run_wall_s, 100 * r);
  }
  PowRelayStats rs;
  if (pow_world_relay_stats(w, &rs) && rs.pipe_threads) {
    double jobs = (double)MAX(rs.pipe_blocks, 1);
    g_string_append_printf(
        s,
        "\nrelay: pipelined on %u threads (the engine's among them: it runs relays while it waits), each "
        "block's relay on one: %" G_GUINT64_FORMAT " blocks (%" G_GUINT64_FORMAT " of them run in parts on "
        "the engine's thread), %.1f%% of them started while an earlier block's relay still ran (%.2f relays "
        "running at a start, on average); the engine waited %" G_GUINT64_FORMAT " times for a relay's "
        "progress (%.3f s, running relays meanwhile) and held a miner's events %" G_GUINT64_FORMAT
        " times until its delivery was known; %.1f steps per block (%.1f%% skipped).",
        rs.pipe_threads, rs.pipe_blocks, rs.pipe_helped, 100.0 * (double)rs.pipe_overlapped / jobs,
        (double)rs.pipe_in_flight / jobs, rs.gate_waits, rs.gate_wait_s, rs.gate_holds,
        (double)rs.steps / (double)MAX(rs.blocks, 1),
        rs.steps ? 100.0 * (double)rs.pruned / (double)rs.steps : 0.0);
  } else if (pow_world_relay_stats(w, &rs)) {
    double blocks = (double)MAX(rs.blocks, 1), windows = (double)MAX(rs.windows, 1);
    g_string_append_printf(
        s, "\nrelay: each block's relay on %u thread%s over %u fixed groups (largest %u nodes), ", rs.threads,
        rs.threads == 1 ? "" : "s", rs.groups, rs.largest_group);
    if (rs.alone)
      g_string_append_printf(s,
                             "%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " blocks on the calling thread "
                             "alone (measured faster then: a machine busy with other work), ",
                             rs.alone, rs.blocks);
    if (rs.lookahead_ns == SIM_TIME_MAX)
      g_string_append(s, "no link between groups;");
    else
      g_string_append_printf(s, "lookahead %.3f ms (link node %u -> node %u);", (double)rs.lookahead_ns / 1e6,
                             rs.lookahead_from, rs.lookahead_to);
    g_string_append_printf(
        s,
        " %.1f windows per block, %.1f steps per window (%.1f%% skipped: they could not change what the run "
        "reads; %u block-size classes with bounds of their own), %.1f%% of messages between groups; "
        "work balance %.2f (work / the busiest thread's work per window: the speedup over 1 "
        "thread that dedicated cores and a free barrier would give); barrier wait s per thread:",
        rs.windows / blocks, rs.steps / windows, rs.steps ? 100.0 * (double)rs.pruned / (double)rs.steps : 0.0,
        rs.prune_tables, rs.messages ? 100.0 * (double)rs.deferred / (double)rs.messages : 0.0,
        rs.work_critical ? (double)rs.work / (double)rs.work_critical : 1.0);
    for (guint i = 0; i < rs.threads && i < POW_RELAY_MAX_THREADS; i++)
      g_string_append_printf(s, "%s%.3f", i ? "," : " ", rs.wait_s[i]);
  }
  return g_string_free(s, FALSE);
}

void pow_world_set_threads(PowWorld *w, guint threads, gboolean adaptive) {
  g_return_if_fail(w != NULL);
  if (w->net->set_threads && w->net_state) w->net->set_threads(w->net_state, threads, adaptive);
}

/* The network thread's side work: the caller's first (its records wait in memory), else the transactions
 * drawn ahead. */
static gboolean pow_side_work(gpointer p) {
  PowWorld *w = p;
  if (w->side_fn && w->side_fn(w->side_user)) return TRUE;
  return w->txw && tx_world_side_work(w->txw);
}

void pow_world_set_side_work(PowWorld *w, gboolean (*fn)(gpointer user), gpointer user) {
  g_return_if_fail(w != NULL);
  if (!w->net->set_side_work || !w->net_state) return;
  w->net->set_side_work(w->net_state, NULL, NULL); /* stops the thread before the fields change */
  w->side_fn = fn;
  w->side_user = user;
  w->side_set = TRUE;
  w->net->set_side_work(w->net_state, pow_side_work, w);
}

gboolean pow_world_set_relay_pipeline(PowWorld *w, gboolean on) {
  g_return_val_if_fail(w != NULL, FALSE);
  return w->net->set_pipeline && w->net_state && w->net->set_pipeline(w->net_state, on);
}

gboolean pow_world_relay_stats(const PowWorld *w, PowRelayStats *stats) {
  g_return_val_if_fail(w != NULL && stats != NULL, FALSE);
  memset(stats, 0, sizeof *stats);
  return w->net->relay_stats && w->net_state && w->net->relay_stats(w->net_state, stats);
}

guint pow_world_n_miners(const PowWorld *w) { return w->n_miners; }

TxWorld *pow_world_tx(const PowWorld *w) { return w->txw; }

uint64_t pow_world_trace_block(const PowWorld *w, guint i) {
  return w->cfg->trace && i < w->cfg->n_trace ? w->mut->trace_sim[i] : OBS_GENESIS_ID;
}

gpointer pow_world_miner_strategy(const PowWorld *w, guint miner) {
  return miner < w->n_miners ? w->miners[miner].strategy_state : NULL;
}

guint pow_world_miner_pool(const PowWorld *w, guint miner, guint *member) {
  g_return_val_if_fail(miner < w->n_miners, 0);
  if (member) *member = w->miners[miner].pool_member;
  return w->miners[miner].group;
}

const PowConfig *pow_world_config(const PowWorld *w) { return w->cfg; }

gpointer pow_world_net_state(const PowWorld *w) { return w->net_state; }

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

double pow_world_miner_share(const PowWorld *w, guint miner) {
  g_return_val_if_fail(miner < w->n_miners, 0);
  return w->miners[miner].share;
}

static gint cmp_mined(gconstpointer pa, gconstpointer pb) {
  const ObsBlock *a = *(const ObsBlock *const *)pa, *b = *(const ObsBlock *const *)pb;
  if (a->mined_ns != b->mined_ns) return a->mined_ns < b->mined_ns ? -1 : 1;
  if (a->height != b->height) return a->height < b->height ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

gboolean pow_world_feed(const PowWorld *w, const ObsSink *sink, GError **error) {
  g_autoptr(GPtrArray) all = g_ptr_array_sized_new((guint)pow_world_n_blocks(w));
  for (guint i = 0; i < w->n_miners; i++) {
    const PowMiner *m = &w->miners[i];
    for (uint32_t s = 0; s < m->n_blocks; s++)
      g_ptr_array_add(all, &m->chunks[s >> CHUNK_BITS][s & (CHUNK_SIZE - 1)].obs);
  }
  g_ptr_array_sort(all, cmp_mined);
  for (guint i = 0; i < all->len; i++)
    if (sink->block && !sink->block(sink->user, g_ptr_array_index(all, i), error)) return FALSE;
  return TRUE;
}

