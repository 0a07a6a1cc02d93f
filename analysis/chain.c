/* chain.c: chain metrics (main chain by total difficulty, block types, rewards, pool shares, runs). */
#include "chain.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util.h"

/* clang-format off */
G_DEFINE_QUARK(an-chain-error-quark, an_chain_error)
/* clang-format on */

#define NO_INDEX G_MAXUINT /* parent / referencing index of "none" (the genesis block is not stored) */
#define KEY_CHUNK 4096     /* ids live in fixed chunks so the hash table's key pointers stay valid */
#define HEX "0x%016" PRIx64

typedef struct {
  ObsBlock b;
  guint parent;  /* index, NO_INDEX for the genesis block */
  guint ref_by;  /* index of the main block referencing it as an uncle, NO_INDEX if none */
  double td;     /* total difficulty */
  double reward; /* ETH, only for window blocks */
  AnBlockType type;
} Rec;

struct AnChain {
  AnMiner *miners;
  guint n_miners;
  char **group_names;
  guint n_groups;
  /* The miners of group g, ascending: group_miners[group_first[g] .. group_first[g + 1]) (so per-pool tallies
   * cost the pool's miners, not all miners: a scan per pool was quadratic in the number of pools). */
  guint *group_first;
  guint *group_miners;
  GArray *blocks;        /* Rec, insertion order: the only order that reaches an output */
  GHashTable *index;     /* const uint64_t *id -> GUINT_TO_POINTER(index + 1) */
  GPtrArray *key_chunks; /* uint64_t[KEY_CHUNK], id of block i at chunk i / KEY_CHUNK */
  gboolean finalized;
  AnChainParams params;
  GArray *main_by_height; /* guint block index; [0] = NO_INDEX (genesis) */
  AnChainSummary summary;
  AnPoolResult *pools;
  uint64_t *miner_main;    /* main blocks in the window per miner */
  uint64_t *miner_max_run; /* longest run per miner */
  uint64_t *miner_runs_ge; /* [m * (AN_RUNS_KMAX + 1) + k] = maximal runs of length >= k by miner m */
  GArray *run_hist;        /* uint64_t, [len] = maximal runs of exactly len */
  double total_reward;
  uint32_t *run_len;   /* [h] = length of the run holding the main block at window height h (0: no miner) */
  uint32_t *run_pos;   /* [h] = its 1-based position in that run */
  GArray *fork_hist;   /* uint64_t, [len] = forks of exactly len blocks */
  uint32_t fork_max;
};

AnChain *an_chain_new(const AnMiner *miners, guint n_miners, const char *const *group_names, guint n_groups) {
  g_return_val_if_fail(n_miners == 0 || miners != NULL, NULL);
  g_return_val_if_fail(n_groups == 0 || group_names != NULL, NULL);
  for (guint i = 0; i < n_miners; i++)
    g_return_val_if_fail(miners[i].group < n_groups, NULL);

  AnChain *c = g_new0(AnChain, 1);
  c->miners = g_memdup2(miners, (gsize)n_miners * sizeof *miners);
  c->n_miners = n_miners;
  c->group_names = g_new0(char *, (gsize)n_groups + 1);
  for (guint g = 0; g < n_groups; g++)
    c->group_names[g] = g_strdup(group_names[g] ? group_names[g] : "");
  c->n_groups = n_groups;
  c->group_first = g_new0(guint, (gsize)n_groups + 1);
  c->group_miners = g_new(guint, n_miners ? n_miners : 1);
  for (guint m = 0; m < n_miners; m++)
    c->group_first[miners[m].group + 1]++;
  for (guint g = 0; g < n_groups; g++)
    c->group_first[g + 1] += c->group_first[g];
  g_autofree guint *fill = g_memdup2(c->group_first, ((gsize)n_groups + 1) * sizeof(guint));
  for (guint m = 0; m < n_miners; m++)
    c->group_miners[fill[miners[m].group]++] = m;
  c->blocks = g_array_new(FALSE, FALSE, sizeof(Rec));
  c->index = g_hash_table_new(an_id_hash, g_int64_equal);
  c->key_chunks = g_ptr_array_new_with_free_func(g_free);
  c->main_by_height = g_array_new(FALSE, FALSE, sizeof(guint));
  c->pools = g_new0(AnPoolResult, n_groups ? n_groups : 1);
  c->miner_main = g_new0(uint64_t, n_miners ? n_miners : 1);
  c->miner_max_run = g_new0(uint64_t, n_miners ? n_miners : 1);
  c->miner_runs_ge = g_new0(uint64_t, (gsize)(n_miners ? n_miners : 1) * (AN_RUNS_KMAX + 1));
  c->run_hist = g_array_new(FALSE, TRUE, sizeof(uint64_t));
  c->fork_hist = g_array_new(FALSE, TRUE, sizeof(uint64_t));
  return c;
}

void an_chain_free(AnChain *c) {
  if (!c) return;
  g_free(c->miners);
  g_strfreev(c->group_names);
  g_free(c->group_first);
  g_free(c->group_miners);
  g_array_unref(c->blocks);
  g_hash_table_unref(c->index);
  g_ptr_array_unref(c->key_chunks);
  g_array_unref(c->main_by_height);
  g_free(c->pools);
  g_free(c->miner_main);
  g_free(c->miner_max_run);
  g_free(c->miner_runs_ge);
  g_array_unref(c->run_hist);
  g_free(c->run_len);
  g_free(c->run_pos);
  g_array_unref(c->fork_hist);
  g_free(c);
}

static inline Rec *rec_at(const AnChain *c, guint i) {
  return &g_array_index(c->blocks, Rec, i);
}

/* Index of `id`; NO_INDEX for the genesis block; FALSE if unknown. */
static gboolean lookup(const AnChain *c, uint64_t id, guint *idx) {
  if (id == OBS_GENESIS_ID) {
    *idx = NO_INDEX;
    return TRUE;
  }
  gpointer v = g_hash_table_lookup(c->index, &id);
  if (!v) return FALSE;
  *idx = GPOINTER_TO_UINT(v) - 1;
  return TRUE;
}

static uint32_t height_of(const AnChain *c, guint idx) {
  return idx == NO_INDEX ? 0 : rec_at(c, idx)->b.height;
}

gboolean an_chain_add_block(AnChain *c, const ObsBlock *block, GError **error) {
  g_return_val_if_fail(c != NULL && block != NULL, FALSE);
  g_return_val_if_fail(!c->finalized, FALSE);
  g_return_val_if_fail(c->blocks->len < NO_INDEX - 1, FALSE);

  guint dummy, parent;
  if (lookup(c, block->id, &dummy)) {
    g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK, "block " HEX ": duplicate id",
                block->id);
    return FALSE;
  }
  if (!lookup(c, block->parent, &parent)) {
    g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK, "block " HEX ": unknown parent " HEX,
                block->id, block->parent);
    return FALSE;
  }
  uint64_t parent_height = height_of(c, parent);
  if ((uint64_t)block->height != parent_height + 1) {
    g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK,
                "block " HEX ": height %" PRIu32 " is not its parent's height %" PRIu64 " + 1", block->id,
                block->height, parent_height);
    return FALSE;
  }
  if (block->miner != OBS_MINER_NONE && block->miner >= c->n_miners) {
    g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK,
                "block " HEX ": miner %" PRIu32 " out of range (%u miners)", block->id, block->miner,
                c->n_miners);
    return FALSE;
  }
  if (block->n_uncles > OBS_MAX_UNCLES) {
    g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK,
                "block " HEX ": %" PRIu32 " uncles (at most %d)", block->id, block->n_uncles, OBS_MAX_UNCLES);
    return FALSE;
  }

  guint idx = c->blocks->len;
  if (idx / KEY_CHUNK == c->key_chunks->len) g_ptr_array_add(c->key_chunks, g_new(uint64_t, KEY_CHUNK));
  uint64_t *key = (uint64_t *)g_ptr_array_index(c->key_chunks, idx / KEY_CHUNK) + idx % KEY_CHUNK;
  *key = block->id;

  Rec r = {.b = *block, .parent = parent, .ref_by = NO_INDEX, .type = AN_BLOCK_UNREFERENCED};
  /* Unused uncle slots are not part of the block: keep them zero so copies compare and print cleanly. */
  memset(r.b.uncles + r.b.n_uncles, 0, (OBS_MAX_UNCLES - r.b.n_uncles) * sizeof r.b.uncles[0]);
  g_array_append_val(c->blocks, r);
  g_hash_table_insert(c->index, key, GUINT_TO_POINTER(idx + 1));
  return TRUE;
}

/* Does block a make a better tip than block b: more total difficulty, then mined earlier, then smaller id. */
static gboolean better_tip(const Rec *a, const Rec *b) {
  if (a->td != b->td) return a->td > b->td;
  if (a->b.mined_ns != b->b.mined_ns) return a->b.mined_ns < b->b.mined_ns;
  return a->b.id < b->b.id;
}

static gboolean in_window(const AnChain *c, uint32_t height) {
  return c->params.max_height == 0 || height <= c->params.max_height;
}

static gboolean mark_uncles(AnChain *c, GError **error) {
  guint n = c->blocks->len, dummy;
  /* Every reference must resolve, whichever block carries it (in insertion order, for a stable report). */
  for (guint i = 0; i < n; i++) {
    const Rec *r = rec_at(c, i);
    for (guint u = 0; u < r->b.n_uncles; u++)
      if (!lookup(c, r->b.uncles[u], &dummy)) {
        g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_UNCLE, "block " HEX ": unknown uncle " HEX,
                    r->b.id, r->b.uncles[u]);
        return FALSE;
      }
  }
  for (guint h = 1; h < c->main_by_height->len; h++) {
    guint ni = g_array_index(c->main_by_height, guint, h);
    const Rec *nephew = rec_at(c, ni);
    for (guint u = 0; u < nephew->b.n_uncles; u++) {
      uint64_t uid = nephew->b.uncles[u];
      guint ui = NO_INDEX;
      lookup(c, uid, &ui);
      if (ui == NO_INDEX || rec_at(c, ui)->type == AN_BLOCK_MAIN) {
        g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_UNCLE,
                    "block " HEX ": uncle " HEX " is a main-chain block", nephew->b.id, uid);
        return FALSE;
      }
      Rec *uncle = rec_at(c, ui);
      if (uncle->ref_by != NO_INDEX) {
        g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_UNCLE,
                    "block " HEX ": uncle " HEX " is already referenced by block " HEX, nephew->b.id, uid,
                    rec_at(c, uncle->ref_by)->b.id);
        return FALSE;
      }
      if (uncle->b.height >= nephew->b.height) {
        g_set_error(error, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_UNCLE,
                    "block " HEX ": uncle " HEX " at height %" PRIu32 " is not below height %" PRIu32,
                    nephew->b.id, uid, uncle->b.height, nephew->b.height);
        return FALSE;
      }
      uncle->ref_by = ni;
      uncle->type = AN_BLOCK_UNCLE;
    }
  }
  return TRUE;
}

static void close_run(AnChain *c, uint32_t miner, uint64_t len) {
  if (miner == OBS_MINER_NONE || len == 0) return;
  if (len >= c->run_hist->len) g_array_set_size(c->run_hist, (guint)len + 1);
  g_array_index(c->run_hist, uint64_t, len)++;
  if (len > c->summary.runs_max) c->summary.runs_max = len;
  if (len > c->miner_max_run[miner]) c->miner_max_run[miner] = len;
  for (uint64_t k = 1; k <= MIN(len, (uint64_t)AN_RUNS_KMAX); k++)
    c->miner_runs_ge[(gsize)miner * (AN_RUNS_KMAX + 1) + k]++;
}

static void count_runs(AnChain *c) {
  uint32_t cur = OBS_MINER_NONE;
  uint64_t len = 0;
  for (uint64_t h = 1; h <= c->summary.heights; h++) {
    uint32_t m = rec_at(c, g_array_index(c->main_by_height, guint, h))->b.miner;
    if (m != OBS_MINER_NONE && m == cur) {
      len++;
      continue;
    }
    close_run(c, cur, len);
    cur = m;
    len = 1;
  }
  close_run(c, cur, len);

  uint64_t ge = 0;
  for (guint len_i = c->run_hist->len; len_i-- > 1;) {
    ge += g_array_index(c->run_hist, uint64_t, len_i);
    if (len_i <= AN_RUNS_KMAX) c->summary.runs_count_ge[len_i] = ge;
  }
  for (guint k = c->run_hist->len; k <= AN_RUNS_KMAX; k++)
    c->summary.runs_count_ge[k] = 0;
  c->summary.runs_count_ge[0] = c->summary.runs_count_ge[1]; /* every run has length >= 0 */
}

/* Whether a height's main block is followed by one of the same miner, split by whether a fork race was run at
 * that height (another window block at the same height), beside the i.i.d. expectation (the miner's main share).
 * A pool mines on its own block first, so it wins more races than its share: the excess runs come from here. */
static void count_next_same(AnChain *c) {
  AnChainSummary *s = &c->summary;
  guint n = (guint)s->heights;
  g_autofree guint8 *contested = g_new0(guint8, (gsize)n + 2);
  for (guint i = 0; i < c->blocks->len; i++) {
    const Rec *r = rec_at(c, i);
    if (r->type != AN_BLOCK_MAIN && in_window(c, r->b.height) && r->b.height <= n) contested[r->b.height] = 1;
  }
  for (int k = 0; k < 2; k++) s->next_heights[k] = s->next_same[k] = 0, s->next_expected[k] = 0;
  for (guint h = 1; h < n; h++) {
    uint32_t m = rec_at(c, g_array_index(c->main_by_height, guint, h))->b.miner;
    uint32_t next = rec_at(c, g_array_index(c->main_by_height, guint, h + 1))->b.miner;
    if (m == OBS_MINER_NONE) continue;
    int k = contested[h] ? 0 : 1;
    s->next_heights[k]++;
    s->next_same[k] += next == m;
    s->next_expected[k] += (double)c->miner_main[m] / (double)s->main;
  }
}

/* Per window height, the run its main block belongs to (same boundaries as count_runs()). */
static void index_runs(AnChain *c) {
  guint n = (guint)c->summary.heights;
  g_free(c->run_len);
  g_free(c->run_pos);
  c->run_len = g_new0(uint32_t, (gsize)n + 1);
  c->run_pos = g_new0(uint32_t, (gsize)n + 1);
  for (guint start = 1, end; start <= n; start = end) {
    uint32_t m = rec_at(c, g_array_index(c->main_by_height, guint, start))->b.miner;
    for (end = start + 1; end <= n && m != OBS_MINER_NONE; end++)
      if (rec_at(c, g_array_index(c->main_by_height, guint, end))->b.miner != m) break;
    if (m == OBS_MINER_NONE) continue;
    for (guint h = start; h < end; h++) {
      c->run_len[h] = end - start;
      c->run_pos[h] = h - start + 1;
    }
  }
}

/* Forks: every non-main block belongs to the fork of its first non-main ancestor-or-self whose parent is
 * main (parents precede children in the array, so one pass labels them all); a fork's length is the
 * deepest window block in it. */
static void count_forks(AnChain *c) {
  guint n = c->blocks->len;
  guint *root = g_new(guint, n ? n : 1);
  uint32_t *depth = g_new0(uint32_t, n ? n : 1), *len = g_new0(uint32_t, n ? n : 1);
  g_array_set_size(c->fork_hist, 0);
  c->fork_max = 0;
  for (guint i = 0; i < n; i++) {
    const Rec *r = rec_at(c, i);
    if (r->type == AN_BLOCK_MAIN) continue;
    if (r->parent == NO_INDEX || rec_at(c, r->parent)->type == AN_BLOCK_MAIN) {
      root[i] = i;
      depth[i] = 1;
    } else {
      root[i] = root[r->parent];
      depth[i] = depth[r->parent] + 1;
    }
    if (in_window(c, r->b.height) && depth[i] > len[root[i]]) len[root[i]] = depth[i];
  }
  for (guint i = 0; i < n; i++) {
    if (len[i] == 0) continue; /* not a fork's first block, or outside the window */
    if (len[i] >= c->fork_hist->len) g_array_set_size(c->fork_hist, len[i] + 1);
    g_array_index(c->fork_hist, uint64_t, len[i])++;
    if (len[i] > c->fork_max) c->fork_max = len[i];
  }
  g_free(root);
  g_free(depth);
  g_free(len);
}

/* One-miner forks: window blocks grouped by (pool, height). Only counts reach the output, never the hash
 * table's order. */
static void count_one_miner_forks(AnChain *c) {
  typedef struct {
    guint first;
    guint n;
    gboolean same;
  } Group;
  AnChainSummary *s = &c->summary;
  s->omf_count = s->omf_same_txset = s->omf_blocks = s->omf_ref_self = s->omf_ref_other = 0;
  s->omf_reward_eth = 0;
  g_autoptr(GHashTable) groups = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint i = 0; i < c->blocks->len; i++) {
    const Rec *r = rec_at(c, i);
    if (!in_window(c, r->b.height) || r->b.miner == OBS_MINER_NONE) continue;
    gint64 key = (gint64)r->b.height << 24 | c->miners[r->b.miner].group;
    Group *g = g_hash_table_lookup(groups, &key);
    if (!g) {
      g = g_new0(Group, 1);
      g->first = i;
      g->same = r->b.txset != 0;
      g_hash_table_insert(groups, g_memdup2(&key, sizeof key), g);
    } else if (r->b.txset == 0 || r->b.txset != rec_at(c, g->first)->b.txset) {
      g->same = FALSE;
    }
    g->n++;
  }
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, groups);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    const Group *g = v;
    if (g->n < 2) continue;
    s->omf_count++;
    s->omf_same_txset += g->same;
    c->pools[c->miners[rec_at(c, g->first)->b.miner].group].one_miner_forks++;
  }
  for (guint i = 0; i < c->blocks->len; i++) {
    const Rec *r = rec_at(c, i);
    if (!in_window(c, r->b.height) || r->b.miner == OBS_MINER_NONE || r->type == AN_BLOCK_MAIN) continue;
    guint grp = c->miners[r->b.miner].group;
    gint64 key = (gint64)r->b.height << 24 | grp;
    const Group *g = g_hash_table_lookup(groups, &key);
    if (!g || g->n < 2) continue;
    s->omf_blocks++;
    s->omf_reward_eth += r->reward;
    if (r->type == AN_BLOCK_UNCLE && r->ref_by != NO_INDEX) {
      const Rec *nephew = rec_at(c, r->ref_by);
      if (nephew->b.miner != OBS_MINER_NONE && c->miners[nephew->b.miner].group == grp)
        s->omf_ref_self++;
      else
        s->omf_ref_other++;
    }
  }
}

gboolean an_chain_finalize(AnChain *c, const AnChainParams *params, GError **error) {
  g_return_val_if_fail(c != NULL && params != NULL, FALSE);
  g_return_val_if_fail(!c->finalized, FALSE);
  g_return_val_if_fail(params->uncle_base > 0 && params->nephew_divisor > 0, FALSE);
  c->params = *params;
  guint n = c->blocks->len;

  /* Parents precede children in the array, so one pass gives every total difficulty. */
  guint tip = NO_INDEX;
  for (guint i = 0; i < n; i++) {
    Rec *r = rec_at(c, i);
    r->td = (r->parent == NO_INDEX ? 0.0 : rec_at(c, r->parent)->td) + (params->longest_chain ? 1.0 : r->b.difficulty);
    r->type = AN_BLOCK_UNREFERENCED;
    r->ref_by = NO_INDEX;
    r->reward = 0;
    if (tip == NO_INDEX || better_tip(r, rec_at(c, tip))) tip = i;
  }

  g_array_set_size(c->main_by_height, height_of(c, tip) + 1);
  g_array_index(c->main_by_height, guint, 0) = NO_INDEX;
  for (guint i = tip; i != NO_INDEX; i = rec_at(c, i)->parent) {
    Rec *r = rec_at(c, i);
    r->type = AN_BLOCK_MAIN;
    g_array_index(c->main_by_height, guint, r->b.height) = i;
  }
  if (!mark_uncles(c, error)) return FALSE;

  AnChainSummary *s = &c->summary;
  memset(s, 0, sizeof *s);
  memset(c->pools, 0, (c->n_groups ? c->n_groups : 1) * sizeof *c->pools);
  memset(c->miner_main, 0, (c->n_miners ? c->n_miners : 1) * sizeof *c->miner_main);
  memset(c->miner_max_run, 0, (c->n_miners ? c->n_miners : 1) * sizeof *c->miner_max_run);
  memset(c->miner_runs_ge, 0, (gsize)(c->n_miners ? c->n_miners : 1) * (AN_RUNS_KMAX + 1) * sizeof(uint64_t));
  g_array_set_size(c->run_hist, 0);
  c->total_reward = 0;
  for (guint g = 0; g < c->n_groups; g++)
    c->pools[g].name = c->group_names[g];
  for (guint m = 0; m < c->n_miners; m++)
    c->pools[c->miners[m].group].hash_share += c->miners[m].hash_share;

  uint64_t empty = 0;
  double work = 0, wasted = 0;
  const double R = params->block_reward;
  for (guint i = 0; i < n; i++) {
    Rec *r = rec_at(c, i);
    if (!in_window(c, r->b.height)) continue;
    s->blocks_total++;
    if (r->b.empty) empty++;
    work += r->b.difficulty;
    switch (r->type) {
    case AN_BLOCK_MAIN:
      s->main++;
      r->reward = R + r->b.n_uncles * (R / params->nephew_divisor);
      break;
    case AN_BLOCK_UNCLE: {
      double b = rec_at(c, r->ref_by)->b.height;
      s->uncles_included++;
      r->reward = ((double)r->b.height + params->uncle_base - b) / params->uncle_base * R;
      break;
    }
    case AN_BLOCK_UNREFERENCED:
      s->forks_unreferenced++;
      break;
    }
    c->total_reward += r->reward;
    if (r->reward == 0) wasted += r->b.difficulty;
    if (r->b.miner == OBS_MINER_NONE) continue;
    AnPoolResult *p = &c->pools[c->miners[r->b.miner].group];
    p->blocks++;
    p->empty += r->b.empty ? 1 : 0;
    p->reward_eth += r->reward;
    switch (r->type) {
    case AN_BLOCK_MAIN:
      p->main++;
      c->miner_main[r->b.miner]++;
      break;
    case AN_BLOCK_UNCLE:
      p->uncles++;
      break;
    case AN_BLOCK_UNREFERENCED:
      p->unreferenced++;
      break;
    }
  }
  s->heights = s->main;
  s->uncle_rate = s->main ? (double)s->uncles_included / (double)s->main : 0.0;
  s->stale_share = s->blocks_total ? (double)(s->blocks_total - s->main) / (double)s->blocks_total : 0.0;
  s->empty_share = s->blocks_total ? (double)empty / (double)s->blocks_total : 0.0;
  s->wasted_work_share = work > 0 ? wasted / work : 0.0;
  if (s->main >= 2) {
    int64_t first = rec_at(c, g_array_index(c->main_by_height, guint, 1))->b.mined_ns;
    int64_t last = rec_at(c, g_array_index(c->main_by_height, guint, (guint)s->main))->b.mined_ns;
    s->mean_interval_s = (double)(last - first) / 1e9 / (double)(s->main - 1);
  }

  count_runs(c);
  count_next_same(c);
  index_runs(c);
  count_forks(c);
  count_one_miner_forks(c);
  for (guint m = 0; m < c->n_miners; m++) {
    AnPoolResult *p = &c->pools[c->miners[m].group];
    if (c->miner_max_run[m] > p->max_run) p->max_run = c->miner_max_run[m];
  }
  for (guint g = 0; g < c->n_groups; g++) {
    AnPoolResult *p = &c->pools[g];
    p->main_share = s->main ? (double)p->main / (double)s->main : 0.0;
    p->reward_share = c->total_reward != 0 ? p->reward_eth / c->total_reward : 0.0;
  }
  c->finalized = TRUE;
  return TRUE;
}

const AnChainSummary *an_chain_summary(const AnChain *c) {
  g_return_val_if_fail(c != NULL && c->finalized, NULL);
  return &c->summary;
}

guint an_chain_n_pools(const AnChain *c) {
  g_return_val_if_fail(c != NULL, 0);
  return c->n_groups;
}

const AnPoolResult *an_chain_pool(const AnChain *c, guint group) {
  g_return_val_if_fail(c != NULL && c->finalized && group < c->n_groups, NULL);
  return &c->pools[group];
}

gboolean an_chain_block_type(const AnChain *c, uint64_t id, AnBlockType *type) {
  g_return_val_if_fail(c != NULL && c->finalized, FALSE);
  guint i;
  if (!lookup(c, id, &i)) return FALSE;
  AnBlockType t = i == NO_INDEX ? AN_BLOCK_MAIN : rec_at(c, i)->type;
  if (type) *type = t;
  return TRUE;
}

const char *an_block_type_name(AnBlockType type) {
  switch (type) {
  case AN_BLOCK_MAIN:
    return "main";
  case AN_BLOCK_UNCLE:
    return "uncle";
  case AN_BLOCK_UNREFERENCED:
    return "unreferenced";
  }
  return "unknown";
}

gboolean an_chain_block_run(const AnChain *c, uint64_t id, uint32_t *run_len, uint32_t *position) {
  g_return_val_if_fail(c != NULL && c->finalized, FALSE);
  guint i;
  if (!lookup(c, id, &i) || i == NO_INDEX) return FALSE;
  const Rec *r = rec_at(c, i);
  if (r->type != AN_BLOCK_MAIN || !in_window(c, r->b.height) || r->b.height > c->summary.heights)
    return FALSE;
  if (c->run_len[r->b.height] == 0) return FALSE;
  if (run_len) *run_len = c->run_len[r->b.height];
  if (position) *position = c->run_pos[r->b.height];
  return TRUE;
}

uint64_t an_chain_fork_count(const AnChain *c, uint32_t length) {
  g_return_val_if_fail(c != NULL && c->finalized, 0);
  return length < c->fork_hist->len ? g_array_index(c->fork_hist, uint64_t, length) : 0;
}

uint32_t an_chain_fork_max(const AnChain *c) {
  g_return_val_if_fail(c != NULL && c->finalized, 0);
  return c->fork_max;
}

guint an_chain_n_blocks(const AnChain *c) {
  g_return_val_if_fail(c != NULL, 0);
  return c->blocks->len;
}

const ObsBlock *an_chain_block_at(const AnChain *c, guint index) {
  g_return_val_if_fail(c != NULL && index < c->blocks->len, NULL);
  return &rec_at(c, index)->b;
}

const ObsBlock *an_chain_block(const AnChain *c, uint64_t id) {
  g_return_val_if_fail(c != NULL, NULL);
  guint i;
  if (!lookup(c, id, &i) || i == NO_INDEX) return NULL;
  return &rec_at(c, i)->b;
}

gboolean an_chain_block_in_window(const AnChain *c, uint64_t id) {
  g_return_val_if_fail(c != NULL && c->finalized, FALSE);
  const ObsBlock *b = an_chain_block(c, id);
  return b != NULL && in_window(c, b->height);
}

const ObsBlock *an_chain_main_block(const AnChain *c, uint32_t height) {
  g_return_val_if_fail(c != NULL && c->finalized, NULL);
  if (height == 0 || height >= c->main_by_height->len) return NULL;
  return &rec_at(c, g_array_index(c->main_by_height, guint, height))->b;
}

guint an_chain_miner_group(const AnChain *c, uint32_t miner) {
  g_return_val_if_fail(c != NULL, G_MAXUINT);
  return miner < c->n_miners ? c->miners[miner].group : G_MAXUINT;
}

const char *an_chain_group_name(const AnChain *c, guint group) {
  g_return_val_if_fail(c != NULL && group < c->n_groups, NULL);
  return c->group_names[group];
}

uint64_t an_chain_runs_of_length(const AnChain *c, uint64_t len) {
  g_return_val_if_fail(c != NULL && c->finalized, 0);
  return len < c->run_hist->len ? g_array_index(c->run_hist, uint64_t, len) : 0;
}

double an_runs_expected_iid(double p, uint64_t n, unsigned k) {
  if (n < k) return 0.0;
  return pow(p, (double)k) * (1.0 + (double)(n - k) * (1.0 - p));
}

static double expected_iid_ge(const AnChain *c, unsigned k) {
  double e = 0;
  uint64_t n = c->summary.main;
  if (n == 0) return 0.0;
  for (guint m = 0; m < c->n_miners; m++)
    e += an_runs_expected_iid((double)c->miner_main[m] / (double)n, n, k);
  return e;
}

uint64_t an_chain_pool_runs_ge(const AnChain *c, guint group, unsigned k) {
  g_return_val_if_fail(c != NULL && c->finalized && group < c->n_groups && k >= 1 && k <= AN_RUNS_KMAX, 0);
  uint64_t n = 0;
  for (guint i = c->group_first[group]; i < c->group_first[group + 1]; i++)
    n += c->miner_runs_ge[(gsize)c->group_miners[i] * (AN_RUNS_KMAX + 1) + k];
  return n;
}

double an_chain_pool_runs_expected_iid(const AnChain *c, guint group, unsigned k) {
  g_return_val_if_fail(c != NULL && c->finalized && group < c->n_groups, 0.0);
  uint64_t n = c->summary.main;
  double e = 0;
  for (guint i = c->group_first[group]; n > 0 && i < c->group_first[group + 1]; i++) {
    guint m = c->group_miners[i];
    e += an_runs_expected_iid((double)c->miner_main[m] / (double)n, n, k);
  }
  return e;
}

static void set_int(json_t *o, const char *key, uint64_t v) {
  json_object_set_new(o, key, json_integer((json_int_t)v));
}
static void set_real(json_t *o, const char *key, double v) {
  json_object_set_new(o, key, json_real(v));
}

void an_chain_add_json(const AnChain *c, json_t *summary) {
  g_return_if_fail(c != NULL && c->finalized && json_is_object(summary));
  const AnChainSummary *s = &c->summary;

  json_t *chain = json_object();
  set_int(chain, "heights", s->heights);
  set_int(chain, "blocks_total", s->blocks_total);
  set_int(chain, "main", s->main);
  set_int(chain, "uncles_included", s->uncles_included);
  set_int(chain, "forks_unreferenced", s->forks_unreferenced);
  set_real(chain, "uncle_rate", s->uncle_rate);
  set_real(chain, "stale_share", s->stale_share);
  set_real(chain, "empty_share", s->empty_share);
  set_real(chain, "mean_interval_s", s->mean_interval_s);
  set_real(chain, "wasted_work_share", s->wasted_work_share);
  json_object_set_new(summary, "chain", chain);

  /* Small vs large pools (large: hash share >= 10%). */
  json_t *rewards = json_object();
  static const char *const cls[] = {"large_pools", "small_pools"};
  for (guint k = 0; k < 2; k++) {
    double hs = 0, ms = 0, rs = 0;
    uint64_t n = 0;
    for (guint g = 0; g < c->n_groups; g++) {
      const AnPoolResult *p = &c->pools[g];
      if ((p->hash_share >= 0.1) != (k == 0)) continue;
      n++;
      hs += p->hash_share;
      ms += p->main_share;
      rs += p->reward_share;
    }
    json_t *o = json_object();
    set_int(o, "pools", n);
    set_real(o, "hash_share", hs);
    set_real(o, "main_share", ms);
    set_real(o, "reward_share", rs);
    if (hs > 0) set_real(o, "reward_per_hash", rs / hs);
    json_object_set_new(rewards, cls[k], o);
  }
  json_object_set_new(summary, "rewards", rewards);

  json_t *pools = json_array();
  for (guint g = 0; g < c->n_groups; g++) {
    const AnPoolResult *p = &c->pools[g];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    set_real(o, "hash_share", p->hash_share);
    set_real(o, "main_share", p->main_share);
    set_int(o, "blocks", p->blocks);
    set_int(o, "main", p->main);
    set_int(o, "uncles", p->uncles);
    set_int(o, "unreferenced", p->unreferenced);
    set_int(o, "empty", p->empty);
    set_int(o, "max_run", p->max_run);
    set_int(o, "one_miner_forks", p->one_miner_forks);
    set_real(o, "reward_eth", p->reward_eth);
    set_real(o, "reward_share", p->reward_share);
    json_array_append_new(pools, o);
  }
  json_object_set_new(summary, "pools", pools);

  json_t *runs = json_object();
  set_int(runs, "max", s->runs_max);
  json_t *ge = json_object(), *exp = json_object();
  for (unsigned k = AN_RUNS_KMIN; k <= AN_RUNS_KMAX; k++) {
    char key[16];
    g_snprintf(key, sizeof key, "%u", k);
    set_int(ge, key, s->runs_count_ge[k]);
    set_real(exp, key, expected_iid_ge(c, k));
  }
  json_object_set_new(runs, "count_ge", ge);
  json_object_set_new(runs, "expected_iid_ge", exp);
  json_t *hist = json_array();
  for (guint len = 1; len < c->run_hist->len; len++) {
    uint64_t n = g_array_index(c->run_hist, uint64_t, len);
    if (n) json_array_append_new(hist, json_pack("[II]", (json_int_t)len, (json_int_t)n));
  }
  json_object_set_new(runs, "histogram", hist);
  /* After a fork race the race's winner tends to mine the next block too (it mined on its own block first): the
   * mechanism behind runs above the i.i.d. expectation. */
  json_t *next = json_object();
  static const char *const next_keys[2] = {"after_fork_race", "after_no_race"};
  for (int k = 0; k < 2; k++) {
    json_t *o = json_object();
    set_int(o, "heights", s->next_heights[k]);
    set_int(o, "same_miner", s->next_same[k]);
    set_real(o, "expected_iid", s->next_expected[k]);
    set_real(o, "ratio", s->next_expected[k] > 0 ? (double)s->next_same[k] / s->next_expected[k] : 0.0);
    json_object_set_new(next, next_keys[k], o);
  }
  json_object_set_new(runs, "next_same_miner", next);
  /* The security view: per pool, runs of k consecutive main blocks for k up to 14, the i.i.d. expectation,
   * and the probability over the window that the pool alone mined the k blocks following some block (it
   * could have reverted a transaction with k confirmations), for k = 6 and 12: observed (0 or 1) and
   * i.i.d. (1 - exp(-expected runs >= k), runs being rare events). */
  json_t *by_pool = json_array();
  for (guint g = 0; g < c->n_groups; g++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->pools[g].name));
    json_t *pge = json_object(), *pexp = json_object(), *prev = json_object();
    for (unsigned k = 1; k <= AN_RUNS_KMAX; k++) {
      char key[16];
      g_snprintf(key, sizeof key, "%u", k);
      set_int(pge, key, an_chain_pool_runs_ge(c, g, k));
      set_real(pexp, key, an_chain_pool_runs_expected_iid(c, g, k));
    }
    static const unsigned conf[] = {6, 12};
    for (guint i = 0; i < G_N_ELEMENTS(conf); i++) {
      char key[16];
      g_snprintf(key, sizeof key, "%u", conf[i]);
      json_t *r = json_object();
      set_int(r, "observed", an_chain_pool_runs_ge(c, g, conf[i]) > 0);
      set_real(r, "iid", -expm1(-an_chain_pool_runs_expected_iid(c, g, conf[i])));
      json_object_set_new(prev, key, r);
    }
    json_object_set_new(o, "count_ge", pge);
    json_object_set_new(o, "expected_iid_ge", pexp);
    json_object_set_new(o, "revert_possible", prev);
    json_array_append_new(by_pool, o);
  }
  json_object_set_new(runs, "by_pool", by_pool);
  json_object_set_new(summary, "runs", runs);

  json_t *forks = json_object();
  uint64_t n_forks = 0;
  json_t *fork_hist = json_array();
  for (guint len = 1; len < c->fork_hist->len; len++) {
    uint64_t n = g_array_index(c->fork_hist, uint64_t, len);
    n_forks += n;
    if (n) json_array_append_new(fork_hist, json_pack("[II]", (json_int_t)len, (json_int_t)n));
  }
  set_int(forks, "count", n_forks);
  set_int(forks, "max_length", c->fork_max);
  json_object_set_new(forks, "histogram", fork_hist);
  json_object_set_new(summary, "forks", forks);

  json_t *omf = json_object();
  set_int(omf, "count", s->omf_count);
  if (s->omf_count) set_real(omf, "same_txset_share", (double)s->omf_same_txset / (double)s->omf_count);
  set_int(omf, "side_blocks", s->omf_blocks);
  set_int(omf, "referenced_by_same_pool", s->omf_ref_self);
  set_int(omf, "referenced_by_other_pools", s->omf_ref_other);
  set_int(omf, "unreferenced", s->omf_blocks - s->omf_ref_self - s->omf_ref_other);
  set_real(omf, "reward_eth", s->omf_reward_eth);
  json_object_set_new(summary, "one_miner_forks", omf);
}

/* Nanoseconds as seconds with 9 decimals, exactly (a double would round large times). */
static void put_seconds(FILE *out, int64_t ns) {
  uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
  fprintf(out, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", a / 1000000000u, a % 1000000000u);
}

static gboolean finish_csv(FILE *out) {
  return fflush(out) == 0 && !ferror(out);
}

gboolean an_chain_write_blocks_csv(const AnChain *c, FILE *out) {
  g_return_val_if_fail(c != NULL && c->finalized && out != NULL, FALSE);
  fputs("id,height,parent,miner,pool,mined_s,type,difficulty,n_uncles,uncles,n_tx,gas_used,size_bytes,"
        "empty\n",
        out);
  for (guint i = 0; i < c->blocks->len && !ferror(out); i++) {
    const Rec *r = rec_at(c, i);
    const ObsBlock *b = &r->b;
    if (!in_window(c, b->height)) continue;
    fprintf(out, HEX ",%" PRIu32 "," HEX ",", b->id, b->height, b->parent);
    if (b->miner != OBS_MINER_NONE) {
      fprintf(out, "%" PRIu32 ",", b->miner);
      an_csv_put_field(out, c->group_names[c->miners[b->miner].group]);
    } else {
      fputc(',', out);
    }
    fputc(',', out);
    put_seconds(out, b->mined_ns);
    fprintf(out, ",%s,%.17g,%" PRIu32 ",", an_block_type_name(r->type), b->difficulty, b->n_uncles);
    for (guint u = 0; u < b->n_uncles; u++)
      fprintf(out, "%s" HEX, u ? ";" : "", b->uncles[u]);
    fprintf(out, ",%" PRIu32 ",%" PRIu64 ",%" PRIu32 ",%d\n", b->n_tx, b->gas_used, b->size_bytes,
            b->empty ? 1 : 0);
  }
  return finish_csv(out);
}

gboolean an_chain_write_pools_csv(const AnChain *c, FILE *out) {
  g_return_val_if_fail(c != NULL && c->finalized && out != NULL, FALSE);
  fputs("pool,hash_share,main_share,blocks,main,uncles,unreferenced,empty,max_run,reward_eth,reward_share\n",
        out);
  for (guint g = 0; g < c->n_groups; g++) {
    const AnPoolResult *p = &c->pools[g];
    an_csv_put_field(out, p->name);
    fprintf(out,
            ",%.17g,%.17g,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
            ",%.17g,%.17g\n",
            p->hash_share, p->main_share, p->blocks, p->main, p->uncles, p->unreferenced, p->empty,
            p->max_run, p->reward_eth, p->reward_share);
  }
  return finish_csv(out);
}

gboolean an_chain_write_runs_csv(const AnChain *c, FILE *out) {
  g_return_val_if_fail(c != NULL && c->finalized && out != NULL, FALSE);
  fputs("length,count,count_ge,expected_iid_ge\n", out);
  uint64_t last = MAX(c->summary.runs_max, (uint64_t)AN_RUNS_KMAX);
  uint64_t ge = c->summary.runs_count_ge[1]; /* runs of length >= len, kept by subtraction: one pass */
  for (uint64_t len = 1; len <= last && !ferror(out); len++) {
    uint64_t count = an_chain_runs_of_length(c, len);
    fprintf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.17g\n", len, count, ge,
            expected_iid_ge(c, (unsigned)len));
    ge -= count;
  }
  return finish_csv(out);
}

static gboolean chain_sink_block(gpointer user, const ObsBlock *block, GError **error) {
  return an_chain_add_block(user, block, error);
}

void an_chain_sink_init(ObsSink *sink, AnChain *chain) {
  *sink = (ObsSink){.user = chain, .block = chain_sink_block};
}

const ObsBlock *an_chain_main_block_fn(gpointer user, uint32_t height) { return an_chain_main_block(user, height); }
