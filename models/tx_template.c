/* tx_template.c: block templates: a pool's transactions for a block, by price, within the gas limit, the
 * censored left out. */
#include "tx-private.h"

static gboolean in_chain(const TxWorld *w, const TxE *e, const uint64_t *anc, guint n_anc, uint32_t top_h) {
  (void)w;
  for (guint k = 0; k < MIN(e->n_incl, MAX_INCL); k++) {
    uint32_t h = e->incl_h[k];
    if (h <= top_h && top_h - h < n_anc && anc[top_h - h] == e->incl[k]) return TRUE;
  }
  for (guint k = 0; e->more && k < e->more->n; k++) {
    uint32_t h = e->more->h[k];
    if (h <= top_h && top_h - h < n_anc && anc[top_h - h] == e->more->id[k]) return TRUE;
  }
  return FALSE;
}

static void heap_push_tx(TxWorld *w, uint32_t i) {
  g_array_append_val(w->heap, i);
  uint32_t *a = (uint32_t *)w->heap->data;
  guint k = w->heap->len - 1;
  while (k > 0 && txw_better(&w->tx[a[k]], &w->tx[a[(k - 1) / 2]])) {
    uint32_t t = a[k];
    a[k] = a[(k - 1) / 2];
    a[(k - 1) / 2] = t;
    k = (k - 1) / 2;
  }
}

static uint32_t heap_pop_tx(TxWorld *w) {
  uint32_t *a = (uint32_t *)w->heap->data;
  uint32_t top = a[0];
  a[0] = a[w->heap->len - 1];
  g_array_set_size(w->heap, w->heap->len - 1);
  guint n = w->heap->len, k = 0;
  for (;;) {
    guint l = 2 * k + 1, r = l + 1, m = k;
    if (l < n && txw_better(&w->tx[a[l]], &w->tx[a[m]])) m = l;
    if (r < n && txw_better(&w->tx[a[r]], &w->tx[a[m]])) m = r;
    if (m == k) break;
    uint32_t t = a[k];
    a[k] = a[m];
    a[m] = t;
    k = m;
  }
  return top;
}

/* Geth's commitTransactions over the pool's mempool as of `built`, into w->sel. */
static void build_template(TxWorld *w, guint pool, const ObsBlock *parent, SimTime built) {
  w->gen++;
  uint64_t anc[ANC_DEPTH];
  guint n_anc = 0;
  for (const ObsBlock *a = parent; a && a->id != OBS_GENESIS_ID && n_anc < ANC_DEPTH;
       a = w->lookup(w->lookup_user, a->parent))
    anc[n_anc++] = a->id;
  uint32_t top_h = parent->height;
  gboolean censor = w->cfg.censors[pool];
  const guint P = MAX(w->n_pools, 1);
  double gas_left = w->gas_limit;
  int bin = txw_vis_bin_at_or_below(w, N_BINS - 1);
  uint32_t cur = bin >= 0 ? w->vbin_head[bin] : NONE;
  g_array_set_size(w->heap, 0);
  /* Transactions in heaviest-chain blocks are out of the index. Those of the heaviest-chain blocks that are
   * not in the parent's chain (above the fork point, or above a parent that is behind the tip) are still in
   * this pool's mempool: they join the candidates through the heap. */
  uint32_t hf = top_h > n_anc ? top_h - n_anc : 0;
  for (guint k = 0; k < n_anc; k++) {
    uint32_t h = top_h - k;
    if (h <= w->best_h && w->best_ids[h % RING] == anc[k]) {
      hf = h;
      break;
    }
  }
  for (uint32_t h = MAX(hf, w->settled_h) + 1; h <= w->best_h; h++) {
    if (w->best_h - h >= RING) continue;
    uint64_t bid = w->best_ids[h % RING];
    const BlockTxs *bt = g_hash_table_lookup(w->blocks, &bid);
    for (guint k = 0; bt && k < bt->n; k++)
      if (w->tx[bt->refs[k].idx].id == bt->refs[k].id) heap_push_tx(w, bt->refs[k].idx);
  }
  while (gas_left >= MIN_GAS) {
    while (cur == NONE && bin > 0) {
      bin = txw_vis_bin_at_or_below(w, bin - 1);
      cur = bin >= 0 ? w->vbin_head[bin] : NONE;
    }
    uint32_t pick;
    if (cur != NONE && (w->heap->len == 0 || txw_better(&w->tx[cur], &w->tx[g_array_index(w->heap, uint32_t, 0)]))) {
      pick = cur;
      cur = w->vlink[cur].next;
      if (cur != NONE) __builtin_prefetch(&w->tx[cur]); /* the walk is a chain of cache misses */
    } else if (w->heap->len) {
      pick = heap_pop_tx(w);
    } else {
      break;
    }
    TxE *e = &w->tx[pick];
    /* A candidate waiting for a predecessor (a sender's later nonces) comes here only if that predecessor is
     * in some block (the walk's index leaves out those whose predecessor is in none; they come through the
     * heap once it is picked): that test comes first, before the reception and the sender are read, and reads
     * the predecessor's state from the candidate's own line. A candidate deferred here that the tests below
     * would have dropped is the same: if its predecessor joins the block it is pushed, popped, and dropped by
     * them then (they do not change within a build, and a sender dropped for gas has no predecessor joining
     * later). */
    if (e->sprev != NONE && e->pred_sel_gen != w->gen &&
        (e->pred_clean || !in_chain(w, &w->tx[e->sprev], anc, n_anc, top_h))) {
      e->defer_gen = w->gen; /* runs once its predecessor is in this block */
      continue;
    }
    if (w->arrive[(gsize)pick * P + pool] > built || (censor && e->censored) ||
        w->senders[e->sender].skip_gen == w->gen || e->sel_gen == w->gen)
      continue;
    if (e->n_incl && in_chain(w, e, anc, n_anc, top_h)) continue;
    if (e->gas_limit > gas_left) { /* Geth: ErrGasLimitReached pops the account */
      w->senders[e->sender].skip_gen = w->gen;
      continue;
    }
    e->sel_gen = w->gen;
    gas_left -= e->gas_used;
    TxRef r = {.id = e->id, .created = e->created, .idx = pick, .gas_used = e->gas_used, .bytes = e->bytes,
               .censored = e->censored};
    g_array_append_val(w->sel, r);
    if (e->snext != NONE) {
      /* Its successor is a candidate from now: pushed if the walk deferred it already, or if the walk's index
       * leaves it out (its predecessor was in no block: this one); else the walk comes to it. */
      TxE *s = &w->tx[e->snext];
      s->pred_sel_gen = w->gen;
      if (s->defer_gen == w->gen || (s->in_index && !s->visible)) heap_push_tx(w, e->snext);
    }
  }
}

void tx_world_advance(TxWorld *w, SimTime t) { txw_advance(w, t); }

void tx_world_build(TxWorld *w, guint pool, const ObsBlock *parent, SimTime built, ObsBlock *b) {
  txw_advance(w, b->mined_ns);
  guint m = b->miner;
  g_array_set_size(w->sel, 0);
  if (!b->empty) {
    if (w->cache_txset[m] == b->txset) {
      g_array_append_vals(w->sel, w->cache[m]->data, w->cache[m]->len);
    } else {
      build_template(w, pool, parent, built);
      g_array_set_size(w->cache[m], 0);
      g_array_append_vals(w->cache[m], w->sel->data, w->sel->len);
      w->cache_txset[m] = b->txset;
    }
  }
  BlockTxs *bt = g_new(BlockTxs, 1);
  bt->block = b->id;
  bt->height = b->height;
  bt->n = w->sel->len;
  bt->refs = g_memdup2(w->sel->data, sizeof(TxRef) * w->sel->len);
  double gas = 0, bytes = w->header_bytes;
  for (guint k = 0; k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    gas += r->gas_used;
    bytes += r->bytes;
    TxE *e = &w->tx[r->idx];
    if (e->id != r->id) continue;
    if (e->n_incl < MAX_INCL) {
      e->incl_h[e->n_incl] = b->height;
      e->incl[e->n_incl] = b->id;
    } else {
      if (!e->more) e->more = g_new0(struct InclMore, 1);
      struct InclMore *x = e->more;
      if (x->n == x->cap) {
        x->cap = MAX(4, 2 * x->cap);
        x->id = g_renew(uint64_t, x->id, x->cap);
        x->h = g_renew(uint32_t, x->h, x->cap);
      }
      x->id[x->n] = b->id;
      x->h[x->n++] = b->height;
    }
    if (e->n_incl < UINT8_MAX) e->n_incl++;
    if (e->snext != NONE && w->tx[e->snext].pred_clean) {
      w->tx[e->snext].pred_clean = 0;
      txw_vis_update(w, e->snext);
    }
  }
  g_hash_table_insert(w->blocks, &bt->block, bt);
  if (w->keep && bt->n) {
    GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), bt->n);
    for (guint k = 0; k < bt->n; k++) g_array_append_val(ids, bt->refs[k].id);
    g_hash_table_insert(w->log_blocks, g_memdup2(&b->id, sizeof b->id), ids);
  }
  g_array_append_val(w->by_height[b->height % RING], b->id);
  b->n_tx = bt->n;
  b->empty = bt->n == 0; /* as the study counted empty blocks: no transactions, whatever the template */
  b->gas_used = (uint64_t)gas;
  b->size_bytes = (uint32_t)MIN(bytes, (double)UINT32_MAX);
}

void tx_world_on_mined(TxWorld *w, const ObsBlock *b) {
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &b->id);
  if (!bt) return;
  for (guint k = 0; k < bt->n; k++) {
    ObsTxInclusion in = {.tx = bt->refs[k].id, .block = b->id, .height = b->height};
    gboolean ok = !w->sink.tx_inclusion || w->sink.tx_inclusion(w->sink.user, &in, NULL);
    g_assert(ok);
  }
}
