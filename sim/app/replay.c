/* replay.c: the chain of a replay: the logged blocks placed (inconsistent Numbers taken out, missing
 * ancestors stood for by placeholders, gaps found), miners and pools, the chain and the transactions, and
 * what a loaded replay holds. */
#include "replay-private.h"

#include <string.h>

#include "rng.h"

G_DEFINE_QUARK(sim-replay-error-quark, sim_replay_error)

static void place(Replay *r, RBlock *b) {
  b->b.height = (uint32_t)(b->number - r->min_number + 1);
  b->placed = TRUE;
  g_ptr_array_add(r->placed, b);
  if (!g_hash_table_contains(r->at_number, &b->number)) g_hash_table_insert(r->at_number, &b->number, b);
}

/* A node logs only the blocks it received as block messages; ancestors it got by syncing never appear. A
 * missing ancestor is stood for by a placeholder (no miner, no transactions, its child's difficulty and
 * time), whose parent is the first block placed one number below, or another placeholder. */
static RBlock *placeholder(Replay *r, uint64_t id, uint64_t number, const RBlock *child) {
  RBlock *x = g_new0(RBlock, 1);
  x->b.id = id;
  x->number = number;
  x->placeholder = TRUE;
  x->b.miner = OBS_MINER_NONE;
  x->b.difficulty = child->b.difficulty;
  x->b.mined_ns = child->b.mined_ns;
  x->b.timestamp_s = child->b.timestamp_s;
  x->msg_ns = g_new(int64_t, r->nv);
  x->ann_ns = g_new(int64_t, r->nv);
  for (guint k = 0; k < r->nv; k++) x->msg_ns[k] = x->ann_ns[k] = OBS_TIME_NONE;
  x->order = r->next_order++;
  g_hash_table_insert(r->blocks, &x->b.id, x);
  r->placeholders++;
  if (number == r->min_number) {
    x->b.parent = OBS_GENESIS_ID;
  } else {
    RBlock *below = g_hash_table_lookup(r->at_number, &(uint64_t){number - 1});
    if (!below) {
      uint64_t pid = sim_mix64(id) | 1;
      below = g_hash_table_lookup(r->blocks, &pid);
      if (!below) below = placeholder(r, pid, number - 1, x);
    }
    x->b.parent = below->b.id;
  }
  place(r, x);
  return x;
}

/* A child is one number above its parent: where a logged block and its logged parent say otherwise, one of
 * the two Numbers is wrong. A damaged Number contradicts every neighbour the block has in the logs, a good
 * one only the damaged neighbour, so the block with more contradictions than agreements (the larger
 * difference; the child on a tie, when nothing tells them apart) is taken out of the chain with all its
 * lines, reported at its first line; its children then stand on a placeholder. `order` holds every logged
 * block. */
static gboolean drop_inconsistent(Replay *r, GPtrArray *order, GError **error) {
  guint n = r->next_order;
  /* By RBlock.order: contradictions minus agreements; the neighbour it contradicts, if it is blamed. */
  g_autofree int *score = g_new0(int, MAX(n, 1));
  g_autofree RBlock **blamed_by = g_new0(RBlock *, MAX(n, 1));
  g_autofree gboolean *as_parent = g_new0(gboolean, MAX(n, 1)); /* blamed as the parent of blamed_by */
  g_autofree gboolean *to_genesis = g_new0(gboolean, MAX(n, 1));
  g_autofree RBlock **by_order = g_new0(RBlock *, MAX(n, 1));
  for (guint i = 0; i < order->len; i++) {
    RBlock *x = g_ptr_array_index(order, i);
    by_order[x->order] = x;
    RBlock *p = x->b.parent == OBS_GENESIS_ID ? NULL : g_hash_table_lookup(r->blocks, &x->b.parent);
    if (!p) continue;
    int d = p->number + 1 == x->number ? -1 : 1;
    score[x->order] += d;
    score[p->order] += d;
  }
  for (guint i = 0; i < order->len; i++) {
    RBlock *x = g_ptr_array_index(order, i);
    if (x->b.parent == OBS_GENESIS_ID) {
      if (x->number != 1 && !blamed_by[x->order]) blamed_by[x->order] = x, to_genesis[x->order] = TRUE;
      continue;
    }
    RBlock *p = g_hash_table_lookup(r->blocks, &x->b.parent);
    if (!p || p->number + 1 == x->number) continue;
    gboolean parent = score[p->order] > score[x->order];
    RBlock *guilty = parent ? p : x;
    if (blamed_by[guilty->order]) continue;
    blamed_by[guilty->order] = parent ? x : p;
    as_parent[guilty->order] = parent;
  }
  /* Reported in the order the lines were read. */
  for (guint k = 0; k < n; k++) {
    RBlock *b = by_order[k];
    if (!b || !blamed_by[k]) continue;
    g_autofree char *left = r->opt->strict ? g_strdup("")
                                           : g_strdup_printf(": block left out (%u line%s)", b->n_lines,
                                                             b->n_lines == 1 ? "" : "s");
    const RBlock *o = blamed_by[k];
    gboolean ok;
    if (to_genesis[k])
      ok =
          sim_replay_line_problem(r, b->n_lines, error,
                                  "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                                  " is not 1, but ParentHash is the genesis's (its first 8 bytes are zero)%s",
                                  b->file, b->line, b->number, left);
    else
      ok = sim_replay_line_problem(r, b->n_lines, error,
                                   "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                                   " does not %s its %s's (%" G_GUINT64_FORMAT " at %s:%" G_GUINT64_FORMAT
                                   ")%s",
                                   b->file, b->line, b->number, as_parent[k] ? "precede" : "follow",
                                   as_parent[k] ? "child" : "parent", o->number, o->file, o->line, left);
    if (!ok) return FALSE;
    r->detached++;
  }
  /* Out of the chain: kept (owned by `dropped`) for the order of the logged blocks, never found by id. */
  for (guint i = 0; i < order->len; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (!blamed_by[b->order]) continue;
    g_hash_table_steal(r->blocks, &b->b.id);
    g_ptr_array_add(r->dropped, b);
  }
  return TRUE;
}

static gint cmp_vnum(gconstpointer pa, gconstpointer pb) {
  const VNum *a = pa, *b = pb;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  if (a->file != b->file) return strcmp(a->file, b->file);
  return a->line < b->line ? -1 : a->line > b->line;
}

/* Heights missing in each vantage point's chain: its logged block Numbers (blocks left out as inconsistent
 * aside), where one is more than 1 above the one before. Reported at the first line of the block above the
 * gap; never fatal: a node logs only the blocks it received as block messages, so real logs have gaps
 * wherever it synced (the Rinkeby logs do). */
static void find_gaps(Replay *r) {
  for (guint v = 0; v < r->nv; v++) {
    GArray *a = r->vnums[v];
    g_array_sort(a, cmp_vnum);
    const char *where = NULL;
    uint64_t prev = 0;
    gboolean any = FALSE;
    for (guint i = 0; i < a->len; i++) {
      const VNum *x = &g_array_index(a, VNum, i);
      const RBlock *b = g_hash_table_lookup(r->blocks, &x->id);
      if (!b || b->placeholder || b->number != x->number) continue; /* left out as inconsistent */
      if (!where) where = x->file;
      if (any && x->number > prev + 1) {
        uint64_t missing = x->number - prev - 1;
        sim_replay_anomaly(r, v, AN_GAP, FALSE, NULL,
                           "%s:%" G_GUINT64_FORMAT ": gap: Number %" G_GUINT64_FORMAT
                           " follows %" G_GUINT64_FORMAT " in this vantage point's blocks (%" G_GUINT64_FORMAT
                           " height%s missing)",
                           x->file, x->line, x->number, prev, missing, missing == 1 ? "" : "s");
        r->gap_heights += missing;
        r->vgap_heights[v] += missing;
      }
      prev = x->number;
      any = TRUE;
    }
    sim_replay_flush_anomalies(r, where ? where : "");
  }
}

static gint cmp_u64(gconstpointer a, gconstpointer b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static gint cmp_rblock(gconstpointer pa, gconstpointer pb) {
  const RBlock *a = *(RBlock *const *)pa, *b = *(RBlock *const *)pb;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static void replay_clear(Replay *r) {
  if (r->at_number) g_hash_table_unref(r->at_number);
  if (r->placed) g_ptr_array_unref(r->placed);
  if (r->blocks) g_hash_table_unref(r->blocks);
  if (r->txs) g_hash_table_unref(r->txs);
  if (r->pool_of) g_hash_table_unref(r->pool_of);
  if (r->pool_order) g_ptr_array_unref(r->pool_order);
  if (r->announced_only) g_hash_table_unref(r->announced_only);
  if (r->dropped) g_ptr_array_unref(r->dropped);
  if (r->problem_msgs) g_ptr_array_unref(r->problem_msgs);
  if (r->anom_msgs) g_ptr_array_unref(r->anom_msgs);
  if (r->same_ms) g_hash_table_unref(r->same_ms);
  for (guint v = 0; r->vnums && v < r->nv; v++)
    if (r->vnums[v]) g_array_unref(r->vnums[v]);
  g_free(r->vnums);
  g_free(r->vanom);
  g_free(r->vgap_heights);
  if (r->files) g_string_chunk_free(r->files);
  memset(r, 0, sizeof *r);
}

void sim_replay_data_free(SimReplayData *d) {
  if (!d) return;
  an_chain_free(d->chain);
  if (d->txs_sorted) g_ptr_array_unref(d->txs_sorted);
  if (d->logged) g_ptr_array_unref(d->logged);
  if (d->order) g_ptr_array_unref(d->order);
  replay_clear(&d->r);
  g_strfreev(d->names);
  g_strfreev(d->dirs);
  g_free(d);
}

/* The tables of a fresh load of opt->n_vantages vantage points. */
static void replay_init(SimReplayData *d, const SimReplayOptions *opt) {
  Replay *rp = &d->r;
  *rp = (Replay){.opt = opt, .nv = opt->n_vantages};
  d->nv = opt->n_vantages;
  rp->blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, sim_replay_rblock_free);
  rp->txs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  rp->pool_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  rp->pool_order = g_ptr_array_new_with_free_func(g_free);
  rp->announced_only = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  rp->files = g_string_chunk_new(256);
  rp->dropped = g_ptr_array_new_with_free_func(sim_replay_rblock_free);
  rp->problem_msgs = g_ptr_array_new_with_free_func(g_free);
  rp->anom_msgs = g_ptr_array_new_with_free_func(g_free);
  rp->same_ms = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  rp->vanom = g_new0(guint64, (gsize)opt->n_vantages * AN_N);
  rp->vgap_heights = g_new0(guint64, opt->n_vantages);
  rp->vnums = g_new0(GArray *, opt->n_vantages);
  for (guint v = 0; v < opt->n_vantages; v++) rp->vnums[v] = g_array_new(FALSE, FALSE, sizeof(VNum));
  d->names = g_new0(char *, opt->n_vantages + 1);
  d->dirs = g_new0(char *, opt->n_vantages + 1);
}

/* The vantage points' names and directories into d->names and d->dirs, checked: names and paths go into
 * summary.json, where jansson would leave out what is not UTF-8, without a word; and two vantage points may
 * not share a name. Then the pool map's path, and the map. */
static gboolean check_vantages(SimReplayData *d, const SimReplayOptions *opt, GError **error) {
  gboolean ok = TRUE;
  char **names = d->names;
  for (guint v = 0; ok && v < opt->n_vantages; v++) {
    const char *why = sim_replay_bad_text(opt->dirs[v]);
    if (why) {
      sim_replay_input_error(error, "%s: path %s (summary.json records it)", opt->dirs[v], why);
      ok = FALSE;
      break;
    }
    d->dirs[v] = g_strdup(opt->dirs[v]);
    names[v] = opt->names && opt->names[v] ? g_strdup(opt->names[v]) : g_path_get_basename(opt->dirs[v]);
    if ((why = sim_replay_bad_text(names[v]))) {
      sim_replay_input_error(error, "vantage point name '%s' %s", names[v], why);
      ok = FALSE;
    }
    for (guint w = 0; w < v && ok; w++)
      if (strcmp(names[v], names[w]) == 0) {
        sim_replay_input_error(error, "two vantage points are named '%s' (name them with --vantage NAME=DIR)",
                               names[v]);
        ok = FALSE;
      }
  }
  const char *why = ok && opt->pools_csv ? sim_replay_bad_text(opt->pools_csv) : NULL;
  if (why) {
    sim_replay_input_error(error, "%s: path %s (summary.json records it)", opt->pools_csv, why);
    ok = FALSE;
  }
  if (ok && opt->pools_csv) ok = sim_replay_read_pools(&d->r, opt->pools_csv, error);
  return ok;
}

/* Opens every vantage point's directory into `dirs` (EmcDir *); each must have a block log. */
static gboolean open_dirs(const SimReplayOptions *opt, GPtrArray *dirs, GError **error) {
  GError *e = NULL;
  for (guint v = 0; v < opt->n_vantages; v++) {
    EmcDir *ed = emc_dir_open(opt->dirs[v], &e);
    if (!ed) {
      sim_replay_input_error(error, "%s", e->message);
      g_clear_error(&e);
      return FALSE;
    }
    g_ptr_array_add(dirs, ed);
    const char *const *bf = emc_dir_files(ed, EMC_KIND_BLOCK);
    if (!bf || !bf[0]) {
      sim_replay_input_error(error, "%s: no block log (NewBlockMsg.log or blocks.log) in it", opt->dirs[v]);
      return FALSE;
    }
  }
  return TRUE;
}

/* The logged blocks into d->order by number, then first seen; those whose Number contradicts the chain taken
 * out, the gaps found, and the lowest number of the blocks left (0: none) returned in *min_number. */
static gboolean order_blocks(SimReplayData *d, uint64_t *min_number, GError **error) {
  Replay *rp = &d->r;
  d->order = g_ptr_array_new();
  GPtrArray *order = d->order;
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, rp->blocks);
  while (g_hash_table_iter_next(&it, &k, &val)) g_ptr_array_add(order, val);
  g_ptr_array_sort(order, cmp_rblock);
  if (!drop_inconsistent(rp, order, error)) return FALSE;
  sim_replay_flush_problems(rp, NULL, "blocks in all left out as inconsistent with their neighbours");
  find_gaps(rp);
  *min_number = 0;
  for (guint i = 0; i < order->len && !*min_number; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (g_hash_table_lookup(rp->blocks, &b->b.id) == b) *min_number = b->number;
  }
  return TRUE;
}

/* Places the blocks of `order` still in the chain: heights from `min_number`, parents that were seen or
 * placeholders. Miners: one per coinbase, in first-seen order of the placed blocks (into `miners`, AnMiner,
 * with their hash shares), and their pools by name (into `pool_names`, first-seen order). */
static void place_blocks(Replay *rp, GPtrArray *order, uint64_t min_number, GArray *miners,
                         GPtrArray *pool_names) {
  rp->min_number = min_number;
  rp->at_number = g_hash_table_new(g_int64_hash, g_int64_equal);
  rp->placed = g_ptr_array_new();
  g_autoptr(GHashTable) miner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GArray) miner_blocks = g_array_new(FALSE, TRUE, sizeof(guint64));
  guint64 placed = 0;
  for (guint i = 0; i < order->len; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (g_hash_table_lookup(rp->blocks, &b->b.id) != b) continue; /* detached by drop_inconsistent() */
    if (b->number == min_number) {
      b->b.parent = OBS_GENESIS_ID;
    } else {
      RBlock *p = g_hash_table_lookup(rp->blocks, &b->b.parent);
      if (!p) p = placeholder(rp, b->b.parent, b->number - 1, b);
      /* drop_inconsistent() left only parents one number below, placed before their children */
      g_assert(p->placed && p->number + 1 == b->number);
    }
    place(rp, b);
    placed++;
    gpointer mi;
    if (!g_hash_table_lookup_extended(miner_of, &b->coinbase, NULL, &mi)) {
      const char *pool = g_hash_table_lookup(rp->pool_of, &b->coinbase);
      if (!pool) pool = "Others";
      guint g = 0;
      while (g < pool_names->len && strcmp(g_ptr_array_index(pool_names, g), pool) != 0) g++;
      if (g == pool_names->len) g_ptr_array_add(pool_names, g_strdup(pool));
      AnMiner m = {.group = g};
      g_array_append_val(miners, m);
      guint64 zero = 0;
      g_array_append_val(miner_blocks, zero);
      mi = GUINT_TO_POINTER(miners->len - 1);
      g_hash_table_insert(miner_of, g_memdup2(&b->coinbase, sizeof b->coinbase), mi);
    }
    b->b.miner = GPOINTER_TO_UINT(mi);
    g_array_index(miner_blocks, guint64, b->b.miner)++;
  }
  for (guint m = 0; m < miners->len; m++)
    g_array_index(miners, AnMiner, m).hash_share = (double)g_array_index(miner_blocks, guint64, m) / (double)placed;
}

/* Puts the pools in the map's order (those not in it after, in first-seen order), renumbering the miners'
 * groups. */
static void order_pools(const Replay *rp, GArray *miners, GPtrArray *pool_names) {
  if (!rp->pool_order->len) return;
  g_autofree guint *rank = g_new(guint, MAX(pool_names->len, 1)),
                   *remap = g_new(guint, MAX(pool_names->len, 1));
  for (guint g = 0; g < pool_names->len; g++) {
    const char *nm = g_ptr_array_index(pool_names, g);
    guint j = 0;
    while (j < rp->pool_order->len && strcmp(g_ptr_array_index(rp->pool_order, j), nm) != 0)
      j++;
    rank[g] = j < rp->pool_order->len ? j : rp->pool_order->len + g;
  }
  g_autoptr(GPtrArray) sorted = g_ptr_array_new_with_free_func(g_free);
  for (guint q = 0; q < pool_names->len; q++) {
    guint best = G_MAXUINT;
    for (guint g = 0; g < pool_names->len; g++)
      if (rank[g] != G_MAXUINT && (best == G_MAXUINT || rank[g] < rank[best])) best = g;
    remap[best] = q;
    rank[best] = G_MAXUINT;
    g_ptr_array_add(sorted, g_strdup(g_ptr_array_index(pool_names, best)));
  }
  for (guint m = 0; m < miners->len; m++) {
    AnMiner *am = &g_array_index(miners, AnMiner, m);
    am->group = remap[am->group];
  }
  g_ptr_array_set_size(pool_names, 0);
  for (guint g = 0; g < sorted->len; g++)
    g_ptr_array_add(pool_names, g_strdup(g_ptr_array_index(sorted, g)));
}

/* d->chain from the placed blocks (uncles the logs never showed dropped, counted), finalized. */
static gboolean build_chain(SimReplayData *d, const SimReplayOptions *opt, GArray *miners,
                            GPtrArray *pool_names, GError **error) {
  Replay *rp = &d->r;
  GError *e = NULL;
  gboolean ok = TRUE;
  g_ptr_array_add(pool_names, NULL);
  guint n_pools = pool_names->len - 1;

  d->chain = an_chain_new((const AnMiner *)miners->data, miners->len, (const char *const *)pool_names->pdata, n_pools);
  for (guint i = 0; ok && i < rp->placed->len; i++) {
    RBlock *b = g_ptr_array_index(rp->placed, i);
    /* Uncles the logs never showed cannot be typed: dropped (counted). */
    guint kept = 0;
    for (guint u = 0; u < b->b.n_uncles; u++) {
      RBlock *ub = g_hash_table_lookup(rp->blocks, &b->b.uncles[u]);
      if (ub && ub->placed) b->b.uncles[kept++] = b->b.uncles[u];
      else rp->unknown_uncles++;
    }
    b->b.n_uncles = kept;
    ok = an_chain_add_block(d->chain, &b->b, &e);
  }
  AnChainParams ap = {.block_reward = opt->block_reward_eth > 0 ? opt->block_reward_eth : 2.0, .uncle_base = 8,
                      .nephew_divisor = 32, .max_height = opt->heights};
  if (ok) ok = an_chain_finalize(d->chain, &ap, &e);
  if (!ok) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, "the logs' blocks do not form a chain: %s",
                e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

/* d->logged (the placed blocks of d->order) and d->txs_sorted (the transactions by id); counts the
 * transactions that are only in blocks. */
static void list_blocks_and_txs(SimReplayData *d) {
  Replay *rp = &d->r;
  d->logged = g_ptr_array_new();
  for (guint i = 0; i < d->order->len; i++) {
    RBlock *b = g_ptr_array_index(d->order, i);
    if (!b->placed) continue;
    g_ptr_array_add(d->logged, b);
    for (uint32_t j = 0; j < b->n_txs; j++)
      if (!g_hash_table_contains(rp->txs, &b->txs[j])) rp->txs_only_in_blocks++;
  }
  d->txs_sorted = g_ptr_array_sized_new(g_hash_table_size(rp->txs));
  g_autoptr(GArray) tx_order = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, rp->txs);
  while (g_hash_table_iter_next(&it, &k, &val)) g_array_append_val(tx_order, ((RTx *)val)->rec.id);
  g_array_sort(tx_order, cmp_u64);
  for (guint i = 0; i < tx_order->len; i++)
    g_ptr_array_add(d->txs_sorted, g_hash_table_lookup(rp->txs, &g_array_index(tx_order, uint64_t, i)));
}

static void fill_counts(SimReplayData *d, uint64_t min_number) {
  const Replay *rp = &d->r;
  SimReplayCounts *c = &d->counts;
  c->block_lines = rp->lines[EMC_KIND_BLOCK];
  c->announcement_lines = rp->lines[EMC_KIND_ANNOUNCEMENT];
  c->tx_lines = rp->lines[EMC_KIND_TX];
  for (guint kk = 0; kk < EMC_N_KINDS; kk++) c->bad_lines += rp->bad_lines[kk];
  c->bad_lines += rp->problem_lines;
  c->blocks = g_hash_table_size(rp->blocks) - rp->placeholders;
  c->first_number = min_number;
  c->detached_blocks = rp->detached;
  c->placeholder_blocks = rp->placeholders;
  c->announced_only = g_hash_table_size(rp->announced_only);
  c->unknown_uncles = rp->unknown_uncles;
  c->txs = g_hash_table_size(rp->txs);
  c->txs_only_in_blocks = rp->txs_only_in_blocks;
  c->duplicates = rp->anom[AN_DUP];
  c->reordered = rp->anom[AN_REORDER];
  c->clock_steps = rp->anom[AN_STEP];
  c->gaps = rp->anom[AN_GAP];
  c->gap_heights = rp->gap_heights;
}

SimReplayData *sim_replay_load(const SimReplayOptions *opt, GError **error) {
  g_return_val_if_fail(opt && opt->n_vantages > 0, NULL);
  g_autoptr(SimReplayData) d = g_new0(SimReplayData, 1);
  Replay *rp = &d->r;
  replay_init(d, opt);
  gboolean ok = check_vantages(d, opt, error);
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func((GDestroyNotify)emc_dir_free);
  if (ok) ok = open_dirs(opt, dirs, error);
  if (ok) ok = sim_replay_read_records(rp, dirs, error);
  if (ok && g_hash_table_size(rp->blocks) == 0) {
    guint64 bad = rp->bad_lines[EMC_KIND_BLOCK] + rp->problem_lines;
    sim_replay_input_error(error, "no block in the logs%s",
                           bad ? " (every block line is bad: see above)" : "");
    ok = FALSE;
  }
  if (!ok) return NULL;

  /* Place the blocks: heights from the lowest number seen, parents that were seen, once the blocks whose
   * Number contradicts the chain are out. */
  uint64_t min_number = 0;
  if (!order_blocks(d, &min_number, error)) return NULL;
  g_autoptr(GArray) miners = g_array_new(FALSE, TRUE, sizeof(AnMiner));
  g_autoptr(GPtrArray) pool_names = g_ptr_array_new_with_free_func(g_free);
  place_blocks(rp, d->order, min_number, miners, pool_names);
  order_pools(rp, miners, pool_names);
  if (!build_chain(d, opt, miners, pool_names, error)) return NULL;
  list_blocks_and_txs(d);
  fill_counts(d, min_number);
  rp->opt = NULL; /* the caller's options are not kept */
  return g_steal_pointer(&d);
}

guint sim_replay_data_n_vantages(const SimReplayData *d) { return d->nv; }
const char *const *sim_replay_data_vantage_names(const SimReplayData *d) { return (const char *const *)d->names; }
const char *sim_replay_data_vantage_dir(const SimReplayData *d, guint v) {
  g_return_val_if_fail(v < d->nv, NULL);
  return d->dirs[v];
}
const SimReplayCounts *sim_replay_data_counts(const SimReplayData *d) { return &d->counts; }
const AnChain *sim_replay_data_chain(const SimReplayData *d) { return d->chain; }
const SimReplayBlock *const *sim_replay_data_blocks(const SimReplayData *d, guint *n) {
  if (n) *n = d->logged->len;
  return (const SimReplayBlock *const *)d->logged->pdata;
}
const SimReplayBlock *sim_replay_data_block(const SimReplayData *d, uint64_t id) {
  return g_hash_table_lookup(d->r.blocks, &id);
}
const char *sim_replay_data_pool_of(const SimReplayData *d, uint64_t coinbase) {
  return g_hash_table_lookup(d->r.pool_of, &coinbase);
}
const SimReplayTx *const *sim_replay_data_txs(const SimReplayData *d, guint *n) {
  if (n) *n = d->txs_sorted->len;
  return (const SimReplayTx *const *)d->txs_sorted->pdata;
}
