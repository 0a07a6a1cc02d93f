/* tx.c: the transaction world (see tx.h for the mechanism): its state, construction, finality and results. */
#include "tx-private.h"

TxWorld *tx_world_new(const TxConfig *cfg, const TxNetView *net, double block_gas_limit, double header_bytes,
                      const double *pool_share, const guint *miner_pool, guint n_miners, uint64_t seed,
                      TxBlockLookup lookup, gconstpointer lookup_user, const ObsSink *sink, GError **error) {
  (void)error;
  TxWorld *w = g_new0(TxWorld, 1);
  w->cfg = *cfg;
  w->netc = *net;
  w->gas_limit = block_gas_limit;
  w->header_bytes = header_bytes;
  w->n_pools = net->n_pools;
  w->n_vantages = net->topo ? net->n_vantages : 0;
  w->n_targets = w->n_vantages + w->n_pools;
  w->miner_pool = miner_pool;
  w->n_miners = n_miners;
  w->lookup = lookup;
  w->lookup_user = lookup_user;
  w->seed = seed;
  for (guint p = 0; p < w->n_pools; p++)
    if (cfg->censors[p]) w->censor_alpha += pool_share[p];
  double c = 0;
  for (guint k = 0; k < cfg->n_classes; k++) w->cum_class[k] = (c += cfg->classes[k].share);
  w->senders = g_new(Sender, cfg->p.senders);
  for (int64_t s = 0; s < cfg->p.senders; s++) w->senders[s] = (Sender){.head = NONE, .tail = NONE};
  if (cfg->p.first_nonce_median > 0)
    for (int64_t s = 0; s < cfg->p.senders; s++) { /* keyed, so that no stream of the run moves */
      double u = ((double)(sim_mix64(seed ^ sim_mix64((uint64_t)s + UINT64_C(0x6e6f6e6365))) >> 11) + 0.5) * 0x1.0p-53;
      double n = cfg->p.first_nonce_median * exp(cfg->p.first_nonce_sigma * gsl_cdf_ugaussian_Pinv(u));
      w->senders[s].next_nonce = (uint64_t)MIN(n, 1e15);
    }
  w->free_head = NONE;
  for (guint b = 0; b < N_BINS; b++)
    w->bin_head[b] = w->bin_tail[b] = w->vbin_head[b] = w->vbin_tail[b] = NONE;
  w->sessions = g_array_new(FALSE, FALSE, sizeof(Session));
  w->acct_prop = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, txw_acct_prop_free);
  w->retired = g_array_new(FALSE, FALSE, sizeof(AcctProp *));
  w->heap = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  w->sel = g_array_new(FALSE, FALSE, sizeof(TxRef));
  w->joined = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  w->cache_txset = g_new0(uint64_t, n_miners);
  w->cache = g_new0(GArray *, n_miners);
  for (guint m = 0; m < n_miners; m++) w->cache[m] = g_array_new(FALSE, FALSE, sizeof(TxRef));
  w->blocks = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint r = 0; r < RING; r++) w->by_height[r] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  w->declared = g_array_new(FALSE, TRUE, sizeof(uint64_t));
  g_array_set_size(w->declared, 1);
  w->recv = g_new(int64_t, MAX(w->n_vantages, 1));
  pthread_mutex_init(&w->ring.lock, NULL);
  w->ring.tx = g_new(GenTx, GEN_CAP);
  w->ring.arrive = g_new(int64_t, (gsize)GEN_CAP * MAX(w->n_pools, 1));
  w->ring.recv = g_new(int64_t, (gsize)GEN_CAP * MAX(w->n_vantages, 1));
  w->tdelay = g_new(int64_t, MAX(w->n_targets, 1));
  w->thop = g_new(int64_t, MAX(w->n_targets, 1));
  w->pool_included = g_new0(guint64, MAX(w->n_pools, 1));
  w->pool_censored_included = g_new0(guint64, MAX(w->n_pools, 1));
  w->pool_blocks = g_new0(guint64, MAX(w->n_pools, 1));
  for (guint r = 0; r < RING; r++) w->best_ids[r] = OBS_GENESIS_ID;

  if (sink) w->sink = *sink;
  if (!w->sink.vantages) {
  } else if (w->n_vantages) {
    w->sink.vantages(w->sink.user, net->vantage_names, w->n_vantages);
  } else {
    static const char *const none[] = {"none"};
    w->sink.vantages(w->sink.user, none, 1);
  }
  if (net->topo) {
    const NetTopology *t = net->topo;
    w->dist = g_new(int64_t, t->n_nodes);
    w->hop = g_new(int64_t, t->n_nodes);
    w->dj_epoch = g_new0(guint32, t->n_nodes);
    guint nr = net->gp->n_regions;
    w->region_nodes_off = g_new0(guint32, nr + 1);
    for (guint32 n = t->n_special; n < t->n_nodes; n++) w->region_nodes_off[t->region[n] + 1]++;
    for (guint r = 0; r < nr; r++) w->region_nodes_off[r + 1] += w->region_nodes_off[r];
    w->region_nodes = g_new(guint32, MAX(t->n_nodes - t->n_special, 1));
    g_autofree guint32 *fill = g_memdup2(w->region_nodes_off, sizeof(guint32) * (nr + 1));
    for (guint32 n = t->n_special; n < t->n_nodes; n++) w->region_nodes[fill[t->region[n]]++] = n;
    if (cfg->p.propagation == TX_PROP_REGION) txw_sample_regions(w);
  }
  sim_rng_init(&w->rng, seed, SIM_RNG_SETUP_BASE + 40);
  sim_rng_init(&w->prop_rng, seed, SIM_RNG_SETUP_BASE + 42);
  w->next_session = txw_exp_ns(&w->rng, txw_session_txs(&cfg->p) / cfg->p.rate_per_s);
  return w;
}

void tx_world_keep_for_logs(TxWorld *w) {
  if (w->keep) return;
  w->keep = TRUE;
  w->log_txs = g_array_new(FALSE, FALSE, sizeof(LogTx));
  w->log_recv = g_array_new(FALSE, FALSE, sizeof(int64_t));
  w->log_blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
}

guint64 tx_world_log_n_txs(const TxWorld *w) { return w->keep ? w->log_txs->len : 0; }

void tx_world_log_tx(const TxWorld *w, guint64 i, TxLogView *out) {
  const LogTx *l = &g_array_index(w->log_txs, LogTx, i);
  *out = (TxLogView){.id = l->id, .sender = l->sender, .nonce = l->nonce, .type = l->type,
                     .gas_limit = l->gas_limit, .bytes = l->bytes, .price_gwei = l->price,
                     .recv = w->n_vantages ? &g_array_index(w->log_recv, int64_t, i * w->n_vantages) : NULL};
}

const uint64_t *tx_world_log_block_txs(const TxWorld *w, uint64_t block, guint *n) {
  const GArray *ids = w->keep ? g_hash_table_lookup(w->log_blocks, &block) : NULL;
  *n = ids ? ids->len : 0;
  return ids ? (const uint64_t *)ids->data : NULL;
}

void tx_world_free(TxWorld *w) {
  if (!w) return;
  if (w->keep) {
    g_array_unref(w->log_txs);
    g_array_unref(w->log_recv);
    g_hash_table_unref(w->log_blocks);
  }
  if (!w->cfg.p.peer_fifo)
    for (guint i = 0; i < w->sessions->len; i++) txw_acct_prop_free(g_array_index(w->sessions, Session, i).ap);
  g_hash_table_unref(w->acct_prop); /* frees every account's state (peer_fifo) */
  g_array_unref(w->retired);
  g_array_free(w->sessions, TRUE);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, w->blocks);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    BlockTxs *bt = v;
    g_free(bt->refs);
    g_free(bt);
  }
  g_hash_table_unref(w->blocks);
  for (guint r = 0; r < RING; r++) g_array_free(w->by_height[r], TRUE);
  for (guint m = 0; m < w->n_miners; m++) g_array_free(w->cache[m], TRUE);
  g_free(w->cache);
  g_free(w->cache_txset);
  g_array_free(w->heap, TRUE);
  g_array_free(w->sel, TRUE);
  g_array_free(w->joined, TRUE);
  g_array_free(w->declared, TRUE);
  if (w->regions) {
    for (guint r = 0; r < w->netc.gp->n_regions; r++) {
      g_free(w->regions[r].d);
      g_free(w->regions[r].hop);
    }
    g_free(w->regions);
  }
  g_free(w->djheap.a);
  g_free(w->dist);
  g_free(w->hop);
  g_free(w->dj_epoch);
  g_free(w->region_nodes_off);
  g_free(w->region_nodes);
  g_free(w->recv);
  pthread_mutex_destroy(&w->ring.lock);
  g_free(w->ring.tx);
  g_free(w->ring.arrive);
  g_free(w->ring.recv);
  g_free(w->tdelay);
  g_free(w->thop);
  g_free(w->pool_included);
  g_free(w->pool_censored_included);
  g_free(w->pool_blocks);
  g_free(w->senders);
  for (uint32_t i = 0; i < w->cap; i++)
    if (w->tx[i].id) txw_slot_free(w, i);
  g_aligned_free(w->tx);
  g_free(w->arrive);
  g_free(w->free_next);
  g_free(w->vlink);
  g_free(w);
}

static void settle_block(TxWorld *w, uint64_t id) {
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  if (!bt) return;
  for (guint k = 0; k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    if (w->tx[r->idx].id != r->id) continue;
    txw_index_remove(w, r->idx);
    txw_sender_unlink(w, r->idx);
    txw_slot_free(w, r->idx);
  }
}

static void declare_block(TxWorld *w, uint32_t h, uint64_t id) {
  const ObsBlock *b = w->lookup(w->lookup_user, id);
  for (guint v = 0; v < w->n_vantages; v++) w->recv[v] = w->netc.reception(w->netc.user, v, id);
  g_autoptr(GError) err = NULL;
  gboolean ok = !w->sink.main_block ||
                w->sink.main_block(w->sink.user, h, id, b->mined_ns, w->n_vantages ? w->recv : NULL, &err);
  g_assert(ok);
  g_array_set_size(w->declared, h + 1);
  g_array_index(w->declared, uint64_t, h) = id;
  guint pool = w->miner_pool[b->miner];
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  for (guint k = 0; bt && k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    w->pool_included[pool]++;
    /* Main blocks mined after the transaction was created and before its block, by censoring pools (for a
     * censored one) or by anyone. */
    guint skipped = 0, waited = 0;
    for (uint32_t hh = h - 1; hh >= 1 && h - hh < DECL_RING && w->decl_mined[hh % DECL_RING] > r->created; hh--) {
      waited++;
      if (w->cfg.censors[w->decl_pool[hh % DECL_RING]]) skipped++;
    }
    if (r->censored) {
      w->pool_censored_included[pool]++;
      w->censored_skip[MIN(skipped, CENSOR_K)]++;
      w->censored_committed++;
    } else {
      w->uncensored_wait_blocks[MIN(waited, CENSOR_K)]++;
      w->uncensored_committed++;
    }
  }
  w->decl_mined[h % DECL_RING] = b->mined_ns;
  w->decl_pool[h % DECL_RING] = pool;
  /* Every block list at this height is done with (heights above stay below h + RING). */
  GArray *ids = w->by_height[h % RING];
  for (guint k = 0; k < ids->len; k++) {
    uint64_t bid = g_array_index(ids, uint64_t, k);
    BlockTxs *x = g_hash_table_lookup(w->blocks, &bid);
    if (!x || x->height != h) continue;
    g_hash_table_remove(w->blocks, &bid);
    g_free(x->refs);
    g_free(x);
  }
  g_array_set_size(ids, 0);
}

/* A block leaves the heaviest chain: its transactions are back in the mempools (unless settled). */
static void leave_best(TxWorld *w, uint32_t h, uint64_t id) {
  if (h <= w->declared_h) w->finality_mismatches++;
  else if (h <= w->settled_h) w->deep_reorgs++;
  if (h <= w->settled_h) return;
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  for (guint k = 0; bt && k < bt->n; k++) {
    uint32_t i = bt->refs[k].idx;
    if (w->tx[i].id == bt->refs[k].id && !w->tx[i].in_index) txw_index_insert(w, i);
  }
}

void tx_world_on_best(TxWorld *w, const ObsBlock *best) {
  uint32_t old_h = w->best_h;
  /* Heights above the new tip leave the heaviest chain (a heavier but shorter branch). */
  for (uint32_t h = best->height + 1; h <= old_h; h++) {
    if (old_h - h >= RING) continue;
    leave_best(w, h, w->best_ids[h % RING]);
    w->best_ids[h % RING] = OBS_GENESIS_ID;
  }
  uint64_t id = best->id;
  uint32_t h = best->height;
  g_array_set_size(w->joined, 0);
  for (guint k = 0; k < RING && h > 0; k++) {
    if (h <= old_h && w->best_ids[h % RING] == id) break;
    if (h <= old_h) leave_best(w, h, w->best_ids[h % RING]);
    g_array_append_val(w->joined, id);
    w->best_ids[h % RING] = id;
    const ObsBlock *b = w->lookup(w->lookup_user, id);
    id = b->parent;
    h--;
  }
  /* The blocks that joined take their transactions out of the index (after the others put theirs back:
   * a transaction in both stays out). */
  for (guint j = 0; j < w->joined->len; j++) {
    uint64_t bid = g_array_index(w->joined, uint64_t, j);
    const BlockTxs *bt = g_hash_table_lookup(w->blocks, &bid);
    for (guint k = 0; bt && k < bt->n; k++)
      if (w->tx[bt->refs[k].idx].id == bt->refs[k].id) txw_index_remove(w, bt->refs[k].idx);
  }
  w->best_h = best->height;
  while (w->settled_h + TX_SETTLE_DEPTH < w->best_h) {
    w->settled_h++;
    settle_block(w, w->best_ids[w->settled_h % RING]);
  }
  while (w->declared_h + TX_DECLARE_DEPTH < w->best_h) {
    w->declared_h++;
    declare_block(w, w->declared_h, w->best_ids[w->declared_h % RING]);
  }
}

gboolean tx_world_finish(TxWorld *w, ObsMainChainFn main_block, gpointer main_user, uint32_t window,
                         GError **error) {
  g_return_val_if_fail(!w->finished, FALSE);
  w->finished = TRUE;
  txw_close_ahead(w);
  for (uint32_t h = 1; h <= w->declared_h; h++) {
    const ObsBlock *m = main_block(main_user, h);
    if (!m || m->id != g_array_index(w->declared, uint64_t, h)) w->finality_mismatches++;
  }
  for (uint32_t h = w->declared_h + 1; h <= window; h++) {
    const ObsBlock *m = main_block(main_user, h);
    if (!m) break;
    declare_block(w, h, m->id);
    w->declared_h = h;
  }
  (void)error;
  if (w->sink.finish) w->sink.finish(w->sink.user);
  return TRUE;
}

static guint64 sum_from(const guint64 *a, guint k) {
  guint64 s = 0;
  for (guint i = k; i <= CENSOR_K; i++) s += a[i];
  return s;
}

gboolean tx_world_has_censorship(const TxWorld *w) { return w->censor_alpha > 0; }

void tx_world_add_json(const TxWorld *w, json_t *summary, const char *const *pool_names) {
  json_t *tx = json_object_get(summary, "tx");
  if (!tx) {
    tx = json_object();
    json_object_set_new(summary, "tx", tx);
  }
  json_object_set_new(tx, "evicted", json_integer((json_int_t)w->evicted));
  json_object_set_new(tx, "mempool_peak", json_integer((json_int_t)w->index_peak));
  json_object_set_new(tx, "mempool_at_end", json_integer((json_int_t)w->in_index));
  json_object_set_new(tx, "finality_mismatches", json_integer((json_int_t)w->finality_mismatches));
  json_object_set_new(tx, "reorgs_past_settle_depth", json_integer((json_int_t)w->deep_reorgs));
  json_object_set_new(tx, "lists_dropped", json_integer((json_int_t)w->lists_dropped));
  json_object_set_new(tx, "never_received", json_integer((json_int_t)w->never_received));
  json_t *by_pool = json_array();
  for (guint p = 0; p < w->n_pools; p++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(pool_names[p]));
    json_object_set_new(o, "committed", json_integer((json_int_t)w->pool_included[p]));
    json_object_set_new(o, "censors", json_boolean(w->cfg.censors[p]));
    json_object_set_new(o, "censored_committed", json_integer((json_int_t)w->pool_censored_included[p]));
    json_array_append_new(by_pool, o);
  }
  json_object_set_new(tx, "by_pool", by_pool);
  if (w->censor_alpha <= 0) return;
  json_t *c = json_object_get(tx, "censorship");
  if (!c) {
    c = json_object();
    json_object_set_new(tx, "censorship", c);
  }
  json_t *names = json_array();
  for (guint p = 0; p < w->n_pools; p++)
    if (w->cfg.censors[p]) json_array_append_new(names, json_string(pool_names[p]));
  json_object_set_new(c, "pools", names);
  if (w->cfg.censor_share > 0) json_object_set_new(c, "sender_share", json_real(w->cfg.censor_share));
  if (w->cfg.censor_tx_share > 0) json_object_set_new(c, "tx_share", json_real(w->cfg.censor_tx_share));
  if (w->cfg.n_censor_senders) json_object_set_new(c, "senders", json_integer(w->cfg.n_censor_senders));
  json_object_set_new(c, "hash_share", json_real(w->censor_alpha));
  json_object_set_new(c, "expected_wait_ratio_iid", json_real(1.0 / (1.0 - MIN(w->censor_alpha, 1 - 1e-12))));
  json_object_set_new(c, "committed_in_declared", json_integer((json_int_t)w->censored_committed));
  json_t *ge = json_object(), *iid = json_object();
  for (guint k = 1; k < CENSOR_K; k++) {
    char key[8];
    g_snprintf(key, sizeof key, "%u", k);
    if (w->censored_committed)
      json_object_set_new(ge, key, json_real((double)sum_from(w->censored_skip, k) / (double)w->censored_committed));
    json_object_set_new(iid, key, json_real(pow(w->censor_alpha, k)));
  }
  json_object_set_new(c, "skipped_ge", ge);
  json_object_set_new(c, "skipped_ge_iid", iid);
}

gboolean tx_world_write_censorship_csv(const TxWorld *w, FILE *out) {
  fputs("k,censored_committed,censored_skipped_ge_k,censored_share_ge_k,iid_share_ge_k,uncensored_committed,"
        "uncensored_waited_ge_k,uncensored_share_ge_k\n",
        out);
  for (guint k = 0; k < CENSOR_K; k++) {
    guint64 c = sum_from(w->censored_skip, k), u = sum_from(w->uncensored_wait_blocks, k);
    fprintf(out, "%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.17g,%.17g,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                 ",%.17g\n",
            k, w->censored_committed, c, w->censored_committed ? (double)c / (double)w->censored_committed : 0.0,
            pow(w->censor_alpha, k), w->uncensored_committed, u,
            w->uncensored_committed ? (double)u / (double)w->uncensored_committed : 0.0);
  }
  return !ferror(out);
}

guint64 tx_world_live(const TxWorld *w) { return w->live; }

guint64 tx_world_created(const TxWorld *w) { return w->created; }
