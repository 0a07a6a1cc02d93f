/* txmetrics.c: transaction metrics over a streamed observation stream, each tx held only until its metrics are
 * final: the tracker (records in, heights declared, commit times). */
#include "txmetrics-private.h"

/* clang-format off */
G_DEFINE_QUARK(an-tx-error-quark, an_tx_error)
/* clang-format on */

const uint32_t AN_TX_K[AN_TX_N_K] = {0, 3, 12, 36};

#define TX_UNIQUE 1u           /* had a sighting or an inclusion */

/* Histogram ranges, in nanoseconds: exact zeros apart, 1 ns .. 3 years. */
#define HIST_MIN_NS 0.5

#define HIST_MAX_NS 1e17

#define POOL_MAX (OLD_ENTRY - 1) /* entries of a pool */

#define YOUNG_MIN 65536          /* arena entries before any tx is moved out */

/* The inclusions held for a height not declared yet: a list of Incl. Free ones chained through `head`. */
typedef struct {
  uint64_t height; /* the index key */
  uint32_t head;   /* first Incl, NO_INDEX for none */
} Pending;

typedef struct {
  uint64_t block, tx;
  uint32_t entry; /* tx's pool entry when added (checked before use: it may have been released since) */
  uint32_t next;  /* next Incl of the height, or of the free list */
} Incl;

uint32_t txm_pool_append(Pool *p) {
  if (p->len == p->cap) {
    g_assert(p->cap < POOL_MAX);
    p->cap = p->cap < 64 ? 64 : p->cap > POOL_MAX / 2 ? POOL_MAX : 2 * p->cap;
    p->base = g_realloc_n(p->base, p->cap, p->size);
  }
  return p->len++;
}

static AnHist *ns_hist(void) {
  return an_hist_new(HIST_MIN_NS, HIST_MAX_NS);
}

AnTx *an_tx_new(const char *const *vantage_names, guint n_vantages) {
  char **names = an_vantage_names_dup(vantage_names, n_vantages);
  if (!names) return NULL;
  AnTx *t = g_new0(AnTx, 1);
  t->n = n_vantages;
  t->names = names;
  t->young.size = t->old.size = sizeof(Tx) + (gsize)n_vantages * sizeof(int64_t);
  txm_index_init(&t->young_index, 6);
  t->old_free = NO_INDEX;
  txm_index_init(&t->old_index, 7);
  t->senders.size = sizeof(Sender) + (gsize)n_vantages * sizeof(int64_t);
  txm_index_init(&t->sender_index, 6);
  t->pending.size = sizeof(Pending);
  t->pending_free = NO_INDEX;
  txm_index_init(&t->pending_index, 6);
  t->incls.size = sizeof(Incl);
  t->incl_free = NO_INDEX;
  t->ring_recv = g_new(int64_t, (gsize)RING * n_vantages);
  for (guint k = 0; k < AN_TX_N_K; k++) {
    t->commit[k] = ns_hist();
    t->commit_v[k] = g_new(AnHist *, n_vantages);
    for (guint v = 0; v < n_vantages; v++)
      t->commit_v[k][v] = ns_hist();
  }
  t->prop = ns_hist();
  t->wait[0] = ns_hist();
  t->wait[1] = ns_hist();
  t->ooo = g_new0(uint64_t, n_vantages);
  t->ooo_pairs = g_new0(uint64_t, n_vantages);
  t->ord_size = sizeof(OrdRec) + (gsize)n_vantages * sizeof(int64_t);
  t->ord_limit = UINT64_MAX;
  t->of.pub_ooo = g_new0(uint64_t, n_vantages);
  t->of.pub_pairs = g_new0(uint64_t, n_vantages);
  return t;
}

/* Frees what only holding txs needs (after an_tx_finalize(), or at an_tx_free()). */
void txm_release_holding(AnTx *t) {
  g_clear_pointer(&t->young.base, g_free);
  t->young.len = t->young.cap = t->cursor = 0;
  txm_index_release(&t->young_index);
  g_clear_pointer(&t->old.base, g_free);
  t->old.len = t->old.cap = 0;
  t->old_free = NO_INDEX;
  txm_index_release(&t->old_index);
  g_clear_pointer(&t->bloom, g_free);
  t->bloom_words = t->bloom_keys = 0;
  t->held = 0;
  g_clear_pointer(&t->pending.base, g_free);
  t->pending.len = t->pending.cap = 0;
  txm_index_release(&t->pending_index);
  g_clear_pointer(&t->incls.base, g_free);
  t->incls.len = t->incls.cap = 0;
  g_clear_pointer(&t->senders.base, g_free);
  t->senders.len = t->senders.cap = 0;
  txm_index_release(&t->sender_index);
  for (guint i = 0; i < RING; i++) {
    g_clear_pointer(&t->ring[i].batch, g_free);
    t->ring[i].len = t->ring[i].cap = 0;
  }
  g_clear_pointer(&t->keys, g_free);
  g_clear_pointer(&t->batch_tx, g_free);
  g_clear_pointer(&t->batch_sender, g_free);
  g_clear_pointer(&t->samples, g_free);
  t->keys_cap = 0;
}

void an_tx_free(AnTx *t) {
  if (!t) return;
  if (t->cs_hash) g_array_unref(t->cs_hash);
  if (t->cs_values) g_array_unref(t->cs_values);
  g_strfreev(t->names);
  txm_release_holding(t);
  g_free(t->ring_recv);
  for (guint k = 0; k < AN_TX_N_K; k++) {
    an_hist_free(t->commit[k]);
    for (guint v = 0; v < t->n; v++)
      an_hist_free(t->commit_v[k][v]);
    g_free(t->commit_v[k]);
  }
  an_hist_free(t->prop);
  an_hist_free(t->wait[0]);
  an_hist_free(t->wait[1]);
  g_free(t->ooo);
  g_free(t->ooo_pairs);
  g_free(t->ord);
  g_free(t->of.pub_ooo);
  g_free(t->of.pub_pairs);
  g_free(t);
}

/* Four bits of one 64-bit word per id: false positives about 0.6% at 12 bits per id, 6% at 6. The filter is
 * built at 12 and rebuilt at 6, so that it stays small enough for the caches (1.1 to 2.2 MB at 1.5 M ids). */
#define BLOOM_BUILD_BITS 12

#define BLOOM_REBUILD_BITS 6

static inline uint64_t *bloom_word(const AnTx *t, uint64_t h) {
  return &t->bloom[((h & UINT32_MAX) * t->bloom_words) >> 32];
}

static inline uint64_t bloom_bits(uint64_t h) {
  uint64_t g = h * UINT64_C(0x9e3779b97f4a7c15);
  return (UINT64_C(1) << (g >> 58)) | (UINT64_C(1) << ((g >> 52) & 63)) | (UINT64_C(1) << ((g >> 46) & 63)) |
         (UINT64_C(1) << ((g >> 40) & 63));
}

/* Rebuilds the filter from the ids held in the old pool. */
static void bloom_build(AnTx *t) {
  uint64_t words = MAX(64, (uint64_t)t->old_index.used * BLOOM_BUILD_BITS / 64 + 1);
  g_assert(words <= UINT32_MAX);
  g_free(t->bloom);
  t->bloom = g_new0(uint64_t, words);
  t->bloom_words = (uint32_t)words;
  t->bloom_keys = 0;
  for (uint32_t e = 0; e < t->old.len; e++) {
    const Tx *x = txm_pool_at(&t->old, e);
    if (!(x->flags & TX_HELD)) continue;
    uint64_t h = txm_index_hash(x->id);
    *bloom_word(t, h) |= bloom_bits(h);
    t->bloom_keys++;
  }
}

/* Adds `id`, just moved to the old pool. */
static void bloom_add(AnTx *t, uint64_t id) {
  if ((uint64_t)t->bloom_keys * BLOOM_REBUILD_BITS >= (uint64_t)t->bloom_words * 64) {
    bloom_build(t); /* `id` with the others */
    return;
  }
  uint64_t h = txm_index_hash(id);
  *bloom_word(t, h) |= bloom_bits(h);
  t->bloom_keys++;
}

/* The entry of held tx `id`, or NO_INDEX. */
static inline uint32_t tx_find(const AnTx *t, uint64_t id) {
  gssize pos = txm_index_find(&t->young_index, t->young.base, t->young.size, id);
  if (pos >= 0) return txm_index_entry(&t->young_index, pos);
  if (t->old_index.used == 0) return NO_INDEX;
  uint64_t h = txm_index_hash(id), bits = bloom_bits(h);
  if ((*bloom_word(t, h) & bits) != bits) return NO_INDEX;
  pos = txm_index_find(&t->old_index, t->old.base, t->old.size, id);
  return pos < 0 ? NO_INDEX : txm_index_entry(&t->old_index, pos) | OLD_ENTRY;
}

static gboolean check_tx(const AnTx *t, const ObsTx *r, GError **error) {
  if (r->type > OBS_TX_CC) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD, "tx " HEX ": unknown type %u", r->id,
                (unsigned)r->type);
    return FALSE;
  }
  if (tx_find(t, r->id) != NO_INDEX) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD, "tx " HEX " added twice", r->id);
    return FALSE;
  }
  return TRUE;
}

/* Moves the uncommitted tx at young entry `e` to the old pool, leaving `e` free. */
static void move_old(AnTx *t, uint32_t e) {
  uint32_t o = t->old_free;
  if (o != NO_INDEX)
    t->old_free = ((Tx *)txm_pool_at(&t->old, o))->height;
  else
    o = txm_pool_append(&t->old);
  Tx *y = txm_pool_at(&t->young, e), *x = txm_pool_at(&t->old, o);
  memcpy(x, y, t->old.size);
  txm_index_remove_at(&t->young_index, txm_index_find(&t->young_index, t->young.base, t->young.size, y->id));
  txm_index_insert(&t->old_index, x->id, o);
  bloom_add(t, x->id);
  y->flags = 0;
}

/* A free young entry for a new tx. */
static uint32_t young_take(AnTx *t) {
  for (uint32_t skipped = 0;;) {
    if (t->cursor == t->young.cap) t->cursor = 0;
    uint32_t e = t->cursor;
    Tx *y = e < t->young.cap ? txm_pool_at(&t->young, e) : NULL;
    if (y && !(y->flags & TX_HELD)) {
      t->cursor++;
      return e;
    }
    if (!y || t->young.cap < YOUNG_MIN || skipped == t->young.cap) {
      uint32_t cap = t->young.cap;
      g_assert(cap <= POOL_MAX / 2);
      t->young.cap = t->young.len = cap ? 2 * cap : 64;
      t->young.base = g_realloc_n(t->young.base, t->young.cap, t->young.size);
      for (uint32_t i = cap; i < t->young.cap; i++)
        ((Tx *)txm_pool_at(&t->young, i))->flags = 0;
      t->cursor = cap;
      continue;
    }
    t->cursor++;
    if (y->height == 0) {
      move_old(t, e);
      return e;
    }
    skipped++;
  }
}

/* Holds a new tx (checked) with no reception yet. */
static Tx *hold_tx(AnTx *t, const ObsTx *r) {
  uint32_t e = young_take(t);
  Tx *x = txm_pool_at(&t->young, e);
  *x = (Tx){.id = r->id,
            .sender = r->sender,
            .nonce = r->nonce,
            .created_ns = r->created_ns,
            .flags = TX_HELD | (r->censored ? TX_CENSORED : 0)};
  txm_index_insert(&t->young_index, r->id, e);
  t->held++;
  t->created++;
  if (r->censored) t->censored_created++;
  return x;
}

/* Stops holding the tx at `entry`. */
void txm_drop_tx(AnTx *t, uint32_t entry) {
  Tx *x = tx_at(t, entry);
  if (entry & OLD_ENTRY) {
    txm_index_remove_at(&t->old_index, txm_index_find(&t->old_index, t->old.base, t->old.size, x->id));
    x->height = t->old_free;
    t->old_free = entry & ~OLD_ENTRY;
  } else {
    txm_index_remove_at(&t->young_index, txm_index_find(&t->young_index, t->young.base, t->young.size, x->id));
  }
  x->flags = 0;
  t->held--;
}

gboolean an_tx_add_tx(AnTx *t, const ObsTx *r, GError **error) {
  g_return_val_if_fail(t != NULL && r != NULL && !t->finalized, FALSE);
  if (!check_tx(t, r, error)) return FALSE;
  Tx *x = hold_tx(t, r);
  for (guint v = 0; v < t->n; v++)
    x->recv_ns[v] = OBS_TIME_NONE;
  return TRUE;
}

static void mark_unique(AnTx *t, Tx *x) {
  if (x->flags & TX_UNIQUE) return;
  x->flags |= TX_UNIQUE;
  t->unique++;
}

gboolean an_tx_add_tx_seen(AnTx *t, const ObsTx *r, const int64_t *recv_ns, GError **error) {
  g_return_val_if_fail(t != NULL && r != NULL && !t->finalized, FALSE);
  if (!check_tx(t, r, error)) return FALSE;
  Tx *x = hold_tx(t, r);
  gboolean seen = FALSE;
  for (guint v = 0; v < t->n; v++) {
    x->recv_ns[v] = recv_ns ? recv_ns[v] : OBS_TIME_NONE;
    seen |= x->recv_ns[v] != OBS_TIME_NONE;
  }
  if (seen) mark_unique(t, x);
  return TRUE;
}

gboolean an_tx_add_sighting(AnTx *t, const ObsTxSighting *s, GError **error) {
  g_return_val_if_fail(t != NULL && s != NULL && !t->finalized, FALSE);
  if (s->vantage >= t->n) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD,
                "sighting of tx " HEX ": vantage %" PRIu32 " out of range (%u vantages)", s->tx, s->vantage,
                t->n);
    return FALSE;
  }
  if (s->seen_ns == OBS_TIME_NONE) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD,
                "sighting of tx " HEX " by vantage %s: no time", s->tx, t->names[s->vantage]);
    return FALSE;
  }
  uint32_t e = tx_find(t, s->tx);
  if (e == NO_INDEX) {
    t->unmatched++;
    return TRUE;
  }
  Tx *x = tx_at(t, e);
  mark_unique(t, x);
  x->recv_ns[s->vantage] = MIN(x->recv_ns[s->vantage], s->seen_ns);
  return TRUE;
}

Slot *txm_slot_of(AnTx *t, uint32_t height) {
  Slot *sl = &t->ring[height % RING];
  g_assert(sl->height == height);
  return sl;
}

const int64_t *txm_slot_recv(const AnTx *t, uint32_t height) {
  return &t->ring_recv[(gsize)(height % RING) * t->n];
}

/* Commits the held tx at `entry` to the declared main block at `height` (a second main inclusion is
 * ignored). */
void txm_commit(AnTx *t, uint32_t entry, uint32_t height) {
  Tx *x = tx_at(t, entry);
  if (x->height != 0) return;
  x->height = height;
  t->committed++;
  if (x->flags & TX_CENSORED) t->censored_committed++;
  Slot *sl = txm_slot_of(t, height);
  if (sl->len == sl->cap) {
    sl->cap = sl->cap ? 2 * sl->cap : 64;
    sl->batch = g_renew(uint32_t, sl->batch, sl->cap);
  }
  sl->batch[sl->len++] = entry;
}

/* Holds an inclusion of the held tx at `entry` for a height not declared yet. */
static void hold_inclusion(AnTx *t, const ObsTxInclusion *in, uint32_t entry) {
  gssize pos = txm_index_find(&t->pending_index, t->pending.base, t->pending.size, in->height);
  uint32_t pe;
  if (pos >= 0) {
    pe = txm_index_entry(&t->pending_index, pos);
  } else {
    pe = t->pending_free;
    if (pe != NO_INDEX)
      t->pending_free = ((Pending *)txm_pool_at(&t->pending, pe))->head;
    else
      pe = txm_pool_append(&t->pending);
    *(Pending *)txm_pool_at(&t->pending, pe) = (Pending){.height = in->height, .head = NO_INDEX};
    txm_index_insert(&t->pending_index, in->height, pe);
  }
  uint32_t ie = t->incl_free;
  if (ie != NO_INDEX)
    t->incl_free = ((Incl *)txm_pool_at(&t->incls, ie))->next;
  else
    ie = txm_pool_append(&t->incls);
  Pending *p = txm_pool_at(&t->pending, pe);
  *(Incl *)txm_pool_at(&t->incls, ie) = (Incl){.block = in->block, .tx = in->tx, .entry = entry, .next = p->head};
  p->head = ie;
}

gboolean an_tx_add_inclusion(AnTx *t, const ObsTxInclusion *in, GError **error) {
  g_return_val_if_fail(t != NULL && in != NULL && !t->finalized, FALSE);
  if (in->block == OBS_GENESIS_ID || in->height == 0) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD,
                "inclusion of tx " HEX " in block " HEX " at height %" PRIu32 ": not a mined block", in->tx,
                in->block, in->height);
    return FALSE;
  }
  uint32_t e = tx_find(t, in->tx);
  if (e == NO_INDEX || (in->height <= t->top && t->top - in->height >= AN_TX_K_MAX)) {
    t->unmatched++;
    return TRUE;
  }
  mark_unique(t, tx_at(t, e));
  if (in->height <= t->top) {
    if (txm_slot_of(t, in->height)->block == in->block) txm_commit(t, e, in->height);
    return TRUE;
  }
  hold_inclusion(t, in, e);
  return TRUE;
}

/* Commits the txs held as included in `block`, declared at `height`, and drops the height's inclusions.
 * Their order does not matter: txm_release_height() sorts the batch. */
void txm_settle_pending(AnTx *t, uint32_t height, uint64_t block) {
  gssize pos = txm_index_find(&t->pending_index, t->pending.base, t->pending.size, height);
  if (pos < 0) return;
  uint32_t pe = txm_index_entry(&t->pending_index, pos);
  txm_index_remove_at(&t->pending_index, pos);
  Pending *p = txm_pool_at(&t->pending, pe);
  for (uint32_t ie = p->head; ie != NO_INDEX;) { /* their misses overlap, rather than add up below */
    const Incl *in = txm_pool_at(&t->incls, ie);
    __builtin_prefetch(tx_at(t, in->entry));
    ie = in->next;
  }
  uint32_t ie = p->head;
  while (ie != NO_INDEX) {
    Incl *in = txm_pool_at(&t->incls, ie);
    if (in->block == block) {
      /* The tx it named, if still held (its entry may have been released and reused since). */
      uint32_t e = in->entry;
      const Tx *x = tx_at(t, e);
      if (!(x->flags & TX_HELD) || x->id != in->tx) e = tx_find(t, in->tx);
      if (e != NO_INDEX) txm_commit(t, e, height);
    }
    uint32_t next = in->next;
    in->next = t->incl_free;
    t->incl_free = ie;
    ie = next;
  }
  p->head = t->pending_free;
  t->pending_free = pe;
}



/* The propagation delays of a tx if every vantage received it, written to `out`; returns how many. */
guint txm_propagation_of(const AnTx *t, const Tx *x, double *out) {
  guint first = 0, n = 0;
  for (guint v = 0; v < t->n; v++) {
    if (x->recv_ns[v] == OBS_TIME_NONE) return 0;
    if (x->recv_ns[v] < x->recv_ns[first]) first = v;
  }
  for (guint v = 0; v < t->n; v++)
    if (v != first) out[n++] = (double)(x->recv_ns[v] - x->recv_ns[first]);
  return n;
}

/* Keeps the commit times of the txs of a batch whose hash falls under the limit (see struct AnTx). */
void txm_sample_batch(AnTx *t, uint32_t height, const Tx *const *xs, uint32_t n) {
  if (!t->cs_hash) {
    t->cs_hash = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    t->cs_values = g_array_new(FALSE, FALSE, sizeof(double));
    t->cs_limit = UINT64_MAX;
  }
  const guint w = AN_TX_N_K * t->n;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t hsh = txm_sample_hash(xs[i]->id);
    if (hsh >= t->cs_limit) continue;
    g_array_append_val(t->cs_hash, hsh);
    guint base = t->cs_values->len;
    g_array_set_size(t->cs_values, base + w);
    double *out = &g_array_index(t->cs_values, double, base);
    for (guint k = 0; k < AN_TX_N_K; k++) {
      const int64_t *block_ns = height + AN_TX_K[k] <= t->top ? txm_slot_recv(t, height + AN_TX_K[k]) : NULL;
      for (guint v = 0; v < t->n; v++) {
        int64_t r = xs[i]->recv_ns[v];
        out[k * t->n + v] = block_ns && r != OBS_TIME_NONE && block_ns[v] != OBS_TIME_NONE
                                ? (double)(block_ns[v] - r) / 1e9 : NAN;
      }
    }
    while (t->cs_hash->len > AN_TX_SAMPLE_CAP) { /* halve the limit, keep those still under it, in order */
      t->cs_limit /= 2;
      guint keep = 0;
      for (guint j = 0; j < t->cs_hash->len; j++) {
        if (g_array_index(t->cs_hash, uint64_t, j) >= t->cs_limit) continue;
        g_array_index(t->cs_hash, uint64_t, keep) = g_array_index(t->cs_hash, uint64_t, j);
        memmove(&g_array_index(t->cs_values, double, (gsize)keep * w),
                &g_array_index(t->cs_values, double, (gsize)j * w), sizeof(double) * w);
        keep++;
      }
      g_array_set_size(t->cs_hash, keep);
      g_array_set_size(t->cs_values, (gsize)keep * w);
    }
  }
}
