/* txorder.c: the order sample: out-of-order transactions per sender, intended and as published. */
#include "txmetrics-private.h"

static inline gboolean batch_less(const BatchKey *a, const BatchKey *b) {
  if (a->sender != b->sender) return a->sender < b->sender;
  if (a->nonce != b->nonce) return a->nonce < b->nonce;
  return a->id < b->id;
}

static inline gboolean id_less(const IdKey *a, const IdKey *b) {
  return a->id < b->id;
}

static int cmp_batch(const void *a, const void *b) {
  return batch_less(a, b) ? -1 : batch_less(b, a) ? 1 : 0;
}

static int cmp_id(const void *a, const void *b) {
  return id_less(a, b) ? -1 : id_less(b, a) ? 1 : 0;
}

/* Quicksort (median of three, insertion sort below 16) into ascending LESS order; keys are distinct, so the
 * result is the same as any sort's. Past a depth of 2 log2 n, qsort() takes over (never seen in practice). */
#define DEFINE_SORT(name, T, less, cmp)                                                                      \
  static void name##_rec(T *a, gsize n, guint depth) {                                                       \
    while (n > 16) {                                                                                         \
      if (depth-- == 0) {                                                                                    \
        qsort(a, n, sizeof(T), cmp);                                                                         \
        return;                                                                                              \
      }                                                                                                      \
      gsize mid = n / 2;                                                                                     \
      T tmp;                                                                                                 \
      if (less(&a[mid], &a[0])) tmp = a[mid], a[mid] = a[0], a[0] = tmp;                                     \
      if (less(&a[n - 1], &a[mid])) {                                                                        \
        tmp = a[n - 1], a[n - 1] = a[mid], a[mid] = tmp;                                                     \
        if (less(&a[mid], &a[0])) tmp = a[mid], a[mid] = a[0], a[0] = tmp;                                   \
      }                                                                                                      \
      T p = a[mid];                                                                                          \
      gsize i = 0, j = n - 1;                                                                                \
      for (;;) { /* Hoare: a[0..j] <= p <= a[j+1..n-1] */                                                    \
        while (less(&a[i], &p))                                                                              \
          i++;                                                                                               \
        while (less(&p, &a[j]))                                                                              \
          j--;                                                                                               \
        if (i >= j) break;                                                                                   \
        tmp = a[i], a[i] = a[j], a[j] = tmp;                                                                 \
        i++, j--;                                                                                            \
      }                                                                                                      \
      gsize left = j + 1;                                                                                    \
      if (left < n - left) {                                                                                 \
        name##_rec(a, left, depth);                                                                          \
        a += left, n -= left;                                                                                \
      } else {                                                                                               \
        name##_rec(a + left, n - left, depth);                                                               \
        n = left;                                                                                            \
      }                                                                                                      \
    }                                                                                                        \
    for (gsize i = 1; i < n; i++) {                                                                          \
      T v = a[i];                                                                                            \
      gsize j = i;                                                                                           \
      for (; j > 0 && less(&v, &a[j - 1]); j--)                                                              \
        a[j] = a[j - 1];                                                                                     \
      a[j] = v;                                                                                              \
    }                                                                                                        \
  }                                                                                                          \
  static void name(T *a, gsize n) {                                                                          \
    name##_rec(a, n, 2 * (guint)g_bit_storage(n));                                                           \
  }

DEFINE_SORT(sort_batch, BatchKey, batch_less, cmp_batch)

DEFINE_SORT(sort_ids, IdKey, id_less, cmp_id)

/* A key of the order sample's sorts: (sender, text key, digits, nonce, id), the text key and digits 0 for the
 * numeric order; then the record's position, so that equal keys keep their order (as qsort's merge sort). */
typedef struct {
  uint64_t sender, text, nonce, id;
  uint32_t digits, pos;
} OrdKey;

static inline gboolean ordkey_less(const OrdKey *a, const OrdKey *b) {
  if (a->sender != b->sender) return a->sender < b->sender;
  if (a->text != b->text) return a->text < b->text;
  if (a->digits != b->digits) return a->digits < b->digits;
  if (a->nonce != b->nonce) return a->nonce < b->nonce;
  if (a->id != b->id) return a->id < b->id;
  return a->pos < b->pos;
}

static int cmp_ordkey(const void *a, const void *b) {
  return ordkey_less(a, b) ? -1 : ordkey_less(b, a) ? 1 : 0;
}

DEFINE_SORT(sort_ordkeys, OrdKey, ordkey_less, cmp_ordkey)

static inline OrdRec *ord_at(const AnTx *t, uint32_t i) {
  return (OrdRec *)(t->ord + (gsize)i * t->ord_size);
}

static void ord_add(AnTx *t, const Tx *x, gboolean committed) {
  gboolean seen = FALSE;
  for (guint v = 0; v < t->n; v++) seen |= x->recv_ns[v] != OBS_TIME_NONE;
  if (!seen || txm_sample_hash(x->sender ^ UINT64_C(0x5e4de7)) >= t->ord_limit) return;
  if (t->ord_len == t->ord_cap) {
    t->ord_cap = t->ord_cap ? 2 * t->ord_cap : 256;
    t->ord = g_realloc_n(t->ord, t->ord_cap, t->ord_size);
  }
  OrdRec *r = ord_at(t, t->ord_len++);
  r->sender = x->sender;
  r->nonce = x->nonce;
  r->id = x->id;
  r->committed = committed;
  r->pad = 0;
  memcpy(r->recv_ns, x->recv_ns, sizeof(int64_t) * t->n);
  while (t->ord_len > AN_TX_ORDER_CAP) { /* halve the limit, keep the senders still under it, in order */
    t->ord_limit /= 2;
    uint32_t keep = 0;
    for (uint32_t j = 0; j < t->ord_len; j++) {
      if (txm_sample_hash(ord_at(t, j)->sender ^ UINT64_C(0x5e4de7)) >= t->ord_limit) continue;
      if (keep != j) memcpy(ord_at(t, keep), ord_at(t, j), t->ord_size);
      keep++;
    }
    t->ord_len = keep;
  }
}

/* A nonce as its decimal text sorts: its first 19 digits padded on the right with zeros, then its length (a
 * prefix sorts first), then its 20th digit. */
static uint64_t nonce_text_key(uint64_t nonce, guint *digits) {
  guint d = 1;
  for (uint64_t x = nonce; x >= 10; x /= 10) d++;
  *digits = d;
  if (d == 20) return nonce / 10;
  uint64_t p = nonce;
  for (guint i = d; i < 19; i++) p *= 10;
  return p;
}

int an_tx_nonce_text_cmp(uint64_t a, uint64_t b) {
  guint da, db;
  uint64_t ka = nonce_text_key(a, &da), kb = nonce_text_key(b, &db);
  if (ka != kb) return ka < kb ? -1 : 1;
  if (da != db) return da < db ? -1 : 1;
  return a < b ? -1 : a > b; /* both 20 digits: the last one */
}

int64_t an_tx_floor_ms(int64_t ns) {
  return ns >= 0 ? ns / 1000000 : -((-(ns + 1)) / 1000000) - 1;
}

/* Out-of-order counts over the records (sorted by sender, then nonce in the order that defines "lower") of
 * vantage v: a tx is out of order if its time (milliseconds with `ms`, else ns) is earlier than that of a tx
 * of the same sender with a lower nonce (equal nonces, i.e. replacements, are not lower: a group of equal
 * nonces is compared with the maximum before it). Only committed records with `committed_only`. */
static void ord_count(const AnTx *t, guint v, gboolean committed_only, gboolean ms, uint64_t *ooo,
                      uint64_t *pairs) {
  uint32_t i = 0;
  while (i < t->ord_len) {
    uint64_t sender = ord_at(t, i)->sender;
    int64_t max = INT64_MIN;
    while (i < t->ord_len && ord_at(t, i)->sender == sender) {
      uint32_t j = i;
      int64_t group_max = INT64_MIN;
      for (; j < t->ord_len && ord_at(t, j)->sender == sender && ord_at(t, j)->nonce == ord_at(t, i)->nonce; j++) {
        const OrdRec *r = ord_at(t, j);
        int64_t x = r->recv_ns[v];
        if (x == OBS_TIME_NONE || (committed_only && !r->committed)) continue;
        if (ms) x = an_tx_floor_ms(x);
        (*pairs)++;
        if (x < max) (*ooo)++;
        group_max = MAX(group_max, x);
      }
      max = MAX(max, group_max);
      i = j;
    }
  }
}

/* Sorts the order sample by sender, then nonce (numerically, or as its decimal text sorts with `text`), then
 * id (an_tx_nonce_text_cmp()'s order is (text key, digits, nonce)), by sorting small keys and moving each
 * record once, in place; qsort() over the records, comparing with that order, took 2.5 times the
 * instructions. */
static void ord_sort(AnTx *t, gboolean text) {
  g_autofree OrdKey *keys = g_new(OrdKey, t->ord_len);
  for (uint32_t i = 0; i < t->ord_len; i++) {
    const OrdRec *r = ord_at(t, i);
    guint digits = 0;
    uint64_t tk = text ? nonce_text_key(r->nonce, &digits) : 0;
    keys[i] = (OrdKey){.sender = r->sender, .text = tk, .nonce = r->nonce, .id = r->id, .digits = digits,
                       .pos = i};
  }
  sort_ordkeys(keys, t->ord_len);
  /* In place, cycle by cycle (no second copy of the sample): place i takes the record at keys[i].pos. */
  g_autofree char *tmp = g_malloc(t->ord_size);
  for (uint32_t i = 0; i < t->ord_len; i++) {
    if (keys[i].pos == UINT32_MAX) continue;
    memcpy(tmp, ord_at(t, i), t->ord_size);
    for (uint32_t j = i;;) {
      uint32_t src = keys[j].pos;
      keys[j].pos = UINT32_MAX;
      if (src == i) {
        memcpy(ord_at(t, j), tmp, t->ord_size);
        break;
      }
      memcpy(ord_at(t, j), ord_at(t, src), t->ord_size);
      j = src;
    }
  }
}

static void ord_finalize(AnTx *t) {
  OrderFigures *f = &t->of;
  f->sender_share = (double)t->ord_limit / 0x1p64;
  if (t->ord_limit == UINT64_MAX) f->sender_share = 1;
  if (!t->ord_len) return;
  ord_sort(t, FALSE);
  for (uint32_t i = 0; i < t->ord_len; i++)
    if (i == 0 || ord_at(t, i)->sender != ord_at(t, i - 1)->sender) f->senders_kept++;
  uint64_t dummy = 0;
  for (guint v = 0; v < t->n; v++) {
    ord_count(t, v, FALSE, FALSE, &f->seen_ooo, &f->seen_pairs);
    /* arrival figures, per (sender, vantage): txs received; pairs of consecutive nonces both received (a
     * nonce's reception: the earliest of its txs, replacements included), and those in the same millisecond */
    uint32_t i = 0;
    while (i < t->ord_len) {
      uint64_t sender = ord_at(t, i)->sender, n_recv = 0, prev_nonce = 0;
      int64_t prev = OBS_TIME_NONE;
      while (i < t->ord_len && ord_at(t, i)->sender == sender) {
        uint64_t nonce = ord_at(t, i)->nonce;
        int64_t first = OBS_TIME_NONE;
        for (; i < t->ord_len && ord_at(t, i)->sender == sender && ord_at(t, i)->nonce == nonce; i++) {
          int64_t x = ord_at(t, i)->recv_ns[v];
          if (x == OBS_TIME_NONE) continue;
          n_recv++;
          first = first == OBS_TIME_NONE ? x : MIN(first, x);
        }
        if (first != OBS_TIME_NONE && prev != OBS_TIME_NONE && nonce == prev_nonce + 1) {
          f->consec_pairs++;
          f->consec_same_ms += an_tx_floor_ms(first) == an_tx_floor_ms(prev);
        }
        prev = first;
        prev_nonce = nonce;
      }
      if (n_recv) {
        f->sender_pairs++;
        f->sender_single += n_recv == 1;
      }
    }
  }
  ord_sort(t, TRUE);
  for (guint v = 0; v < t->n; v++) {
    ord_count(t, v, TRUE, TRUE, &f->pub_ooo[v], &f->pub_pairs[v]);
    ord_count(t, v, FALSE, TRUE, &f->seen_pub_ooo, &dummy);
  }
  g_clear_pointer(&t->ord, g_free);
  t->ord_len = t->ord_cap = 0;
}

/* Appends `s` to `g` as an_csv_put_field() writes it. */
static void csv_field_append(GString *g, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    g_string_append(g, s);
    return;
  }
  g_string_append_c(g, '"');
  for (; *s; s++) {
    if (*s == '"') g_string_append_c(g, '"');
    g_string_append_c(g, *s);
  }
  g_string_append_c(g, '"');
}

/* Rows "k,vantage,commit_s" with commit_s as "%.9f" (an_fmt_fixed9), assembled in a buffer written in large
 * pieces; the same bytes as one fprintf per row. */
gboolean an_tx_write_commit_samples_csv(const AnTx *t, FILE *out) {
  g_return_val_if_fail(t != NULL && t->finalized && out != NULL, FALSE);
  fputs("k,vantage,commit_s\n", out);
  guint kept = t->cs_hash ? t->cs_hash->len : 0;
  enum { BUF = 1 << 16 };
  g_autofree char *buf = g_malloc(BUF);
  gsize len = 0;
  g_autoptr(GString) prefix = g_string_new(NULL);
  for (guint k = 0; k < AN_TX_N_K && kept; k++)
    for (guint v = 0; v < t->n; v++) {
      g_string_printf(prefix, "%u,", AN_TX_K[k]);
      csv_field_append(prefix, t->names[v]);
      g_string_append_c(prefix, ',');
      const double *x = &g_array_index(t->cs_values, double, (gsize)k * t->n + v);
      const gsize stride = (gsize)AN_TX_N_K * t->n;
      for (guint j = 0; j < kept; j++, x += stride) {
        if (isnan(*x)) continue;
        if (len + prefix->len + AN_FIXED9_MAX + 1 > BUF) {
          if (len) fwrite(buf, 1, len, out);
          len = 0;
          if (prefix->len + AN_FIXED9_MAX + 1 > BUF) { /* a name of 64 KiB */
            fwrite(prefix->str, 1, prefix->len, out);
            len = an_fmt_fixed9(buf, *x);
            buf[len++] = '\n';
            continue;
          }
        }
        memcpy(buf + len, prefix->str, prefix->len);
        len += prefix->len;
        len += an_fmt_fixed9(buf + len, *x);
        buf[len++] = '\n';
      }
    }
  if (len) fwrite(buf, 1, len, out);
  return fflush(out) == 0 && !ferror(out);
}

/* `sender_entry`: probably x's Sender (checked here), or NO_INDEX. */
static void count_out_of_order(AnTx *t, const Tx *x, uint32_t sender_entry) {
  if (sender_entry == NO_INDEX || ((const Sender *)txm_pool_at(&t->senders, sender_entry))->sender != x->sender) {
    gssize pos = txm_index_find(&t->sender_index, t->senders.base, t->senders.size, x->sender);
    sender_entry = pos < 0 ? NO_INDEX : txm_index_entry(&t->sender_index, pos);
  }
  Sender *s;
  if (sender_entry == NO_INDEX) {
    uint32_t e = txm_pool_append(&t->senders);
    s = txm_pool_at(&t->senders, e);
    s->sender = x->sender;
    for (guint v = 0; v < t->n; v++)
      s->max_ns[v] = INT64_MIN;
    txm_index_insert(&t->sender_index, x->sender, e);
  } else {
    s = txm_pool_at(&t->senders, sender_entry);
    if (x->nonce <= s->last_nonce) {
      t->nonce_violations++;
      return;
    }
  }
  s->last_nonce = x->nonce;
  for (guint v = 0; v < t->n; v++) {
    int64_t r = x->recv_ns[v];
    if (r == OBS_TIME_NONE) continue;
    t->ooo_pairs[v]++;
    if (r < s->max_ns[v]) t->ooo[v]++;
    s->max_ns[v] = MAX(s->max_ns[v], r);
  }
}

/* Evaluates the txs `xs` committed at `height`, in this order; every height they need that is declared is
 * still in the ring. One histogram at a time, each given its samples in the order that evaluating one tx at a
 * time would give them (commit[k] all of a tx's vantages, tx by tx). commit[k] gets only its count, its sum
 * (in that order) and its first samples here; txm_hist_merge() does the rest. */
static void count_batch(AnTx *t, uint32_t height, const Tx *const *xs, const uint32_t *sender_entry,
                        uint32_t n) {
  double *d = t->samples;
  for (guint k = 0; k < AN_TX_N_K && height + AN_TX_K[k] <= t->top; k++) {
    const int64_t *block_ns = txm_slot_recv(t, height + AN_TX_K[k]);
    AnHist *all = t->commit[k];
    double sum = all->sum;
    uint64_t count = all->n;
    for (uint32_t i = 0; i < n; i++) {
      const int64_t *r = xs[i]->recv_ns;
      for (guint v = 0; v < t->n; v++)
        if (r[v] != OBS_TIME_NONE && block_ns[v] != OBS_TIME_NONE) {
          double x = (double)(block_ns[v] - r[v]);
          sum += x;
          if (G_UNLIKELY(count++ < AN_HIST_EXACT_MAX)) txm_hist_keep(all, x);
        }
    }
    all->sum = sum;
    all->n = count;
    for (guint v = 0; v < t->n; v++) {
      if (block_ns[v] == OBS_TIME_NONE) continue;
      AnHist *h = t->commit_v[k][v];
      if (G_LIKELY(h->bins)) { /* txm_hist_add_run(), without the copy */
        double hsum = h->sum, min = h->min, max = h->max;
        uint64_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
          if (xs[i]->recv_ns[v] == OBS_TIME_NONE) continue;
          double x = (double)(block_ns[v] - xs[i]->recv_ns[v]);
          hsum += x;
          min = MIN(min, x);
          max = MAX(max, x);
          h->bins[txm_bin_of(h, x)]++;
          m++;
        }
        h->n += m;
        h->sum = hsum;
        h->min = min;
        h->max = max;
      } else {
        gsize m = 0;
        for (uint32_t i = 0; i < n; i++)
          if (xs[i]->recv_ns[v] != OBS_TIME_NONE) d[m++] = (double)(block_ns[v] - xs[i]->recv_ns[v]);
        txm_hist_add_run(h, d, m);
      }
    }
  }
  int64_t mined_ns = t->ring[height % RING].mined_ns;
  for (guint c = 0; c < 2; c++) {
    gsize m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (xs[i]->created_ns != OBS_TIME_NONE && ((xs[i]->flags & TX_CENSORED) != 0) == c)
        d[m++] = (double)(mined_ns - xs[i]->created_ns);
    txm_hist_add_run(t->wait[c], d, m);
  }
  gsize m = 0;
  for (uint32_t i = 0; i < n; i++)
    m += txm_propagation_of(t, xs[i], d + m);
  txm_hist_add_run(t->prop, d, m);
  for (uint32_t i = 0; i < n; i++)
    count_out_of_order(t, xs[i], sender_entry[i]);
  for (uint32_t i = 0; i < n; i++)
    ord_add(t, xs[i], TRUE);
  txm_sample_batch(t, height, xs, n);
}

static inline void prefetch_range(const void *p, gsize size) {
  __builtin_prefetch(p);
  __builtin_prefetch((const char *)p + size - 1);
}

static inline void prefetch_home(const Index *ix, uint64_t key) {
  __builtin_prefetch(&ix->slot[txm_index_hash(key) >> (64 - ix->bits)]);
}

/* Evaluates and drops the txs committed at `height`, by sender and nonce. The senders and the index slots
 * are spread over memory at random: each pass below asks for all the cache lines the next one needs first,
 * so that their misses overlap rather than come one after the other. */
void txm_release_height(AnTx *t, uint32_t height) {
  Slot *sl = txm_slot_of(t, height);
  uint32_t n = sl->len;
  if (n == 0) return;
  if (n > t->keys_cap) {
    t->keys_cap = MAX(n, 2 * t->keys_cap);
    t->keys = g_renew(BatchKey, t->keys, t->keys_cap);
    t->batch_tx = g_renew(const Tx *, t->batch_tx, t->keys_cap);
    t->batch_sender = g_renew(uint32_t, t->batch_sender, t->keys_cap);
    t->samples = g_renew(double, t->samples, t->keys_cap * t->n);
  }
  for (uint32_t i = 0; i < n; i++)
    prefetch_range(tx_at(t, sl->batch[i]), t->young.size);
  for (uint32_t i = 0; i < n; i++) {
    const Tx *x = tx_at(t, sl->batch[i]);
    t->keys[i] = (BatchKey){.sender = x->sender, .nonce = x->nonce, .id = x->id, .entry = sl->batch[i]};
    prefetch_home(&t->sender_index, x->sender);
    prefetch_home(sl->batch[i] & OLD_ENTRY ? &t->old_index : &t->young_index, x->id);
  }
  sort_batch(t->keys, n);
  for (uint32_t i = 0; i < n; i++) {
    t->batch_tx[i] = tx_at(t, t->keys[i].entry);
    uint32_t se = t->batch_sender[i] = txm_index_guess(&t->sender_index, t->keys[i].sender);
    if (se != NO_INDEX) prefetch_range(txm_pool_at(&t->senders, se), t->senders.size);
  }
  count_batch(t, height, t->batch_tx, t->batch_sender, n);
  for (uint32_t i = 0; i < n; i++)
    txm_drop_tx(t, t->keys[i].entry);
  sl->len = 0;
}

gboolean an_tx_add_main_block(AnTx *t, uint32_t height, uint64_t block, int64_t mined_ns,
                              const int64_t *recv_ns, GError **error) {
  g_return_val_if_fail(t != NULL && !t->finalized, FALSE);
  if (height != t->top + 1) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_ORDER,
                "main block " HEX " declared at height %" PRIu32 " after height %" PRIu32, block, height,
                t->top);
    return FALSE;
  }
  if (block == OBS_GENESIS_ID) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD,
                "main block at height %" PRIu32 ": genesis id", height);
    return FALSE;
  }
  Slot *sl = &t->ring[height % RING];
  g_assert(sl->len == 0); /* height - RING was released when height - 1 was declared */
  sl->height = height;
  sl->block = block;
  sl->mined_ns = mined_ns;
  int64_t *r = &t->ring_recv[(gsize)(height % RING) * t->n];
  for (guint v = 0; v < t->n; v++)
    r[v] = recv_ns ? recv_ns[v] : OBS_TIME_NONE;
  t->top = height;
  txm_settle_pending(t, height, block);
  if (height > AN_TX_K_MAX) txm_release_height(t, height - AN_TX_K_MAX);
  return TRUE;
}

static uint32_t main_tip(const AnChain *chain) {
  uint32_t h = (uint32_t)an_chain_summary(chain)->heights;
  while (an_chain_main_block(chain, h + 1))
    h++;
  return h;
}

gboolean an_tx_add_main_chain(AnTx *t, const AnChain *chain, uint32_t max_height,
                              const int64_t *const *recv_ns_by_vantage, uint32_t n_heights, GError **error) {
  g_return_val_if_fail(t != NULL && chain != NULL && !t->finalized, FALSE);
  g_return_val_if_fail(an_chain_summary(chain) != NULL, FALSE);
  uint32_t tip = main_tip(chain);
  if (max_height == 0 || max_height > tip) max_height = tip;
  g_autofree int64_t *r = g_new(int64_t, t->n);
  for (uint32_t h = t->top + 1; h <= max_height; h++) {
    const ObsBlock *b = an_chain_main_block(chain, h);
    for (guint v = 0; v < t->n; v++)
      r[v] = recv_ns_by_vantage && h < n_heights ? recv_ns_by_vantage[v][h] : OBS_TIME_NONE;
    if (!an_tx_add_main_block(t, h, b->id, b->mined_ns, r, error)) return FALSE;
  }
  return TRUE;
}

int64_t *an_tx_main_receptions(const AnChain *chain, const ObsSighting *sightings, gsize n_sightings,
                               uint32_t vantage, uint32_t *n_heights) {
  g_return_val_if_fail(chain != NULL && an_chain_summary(chain) != NULL, NULL);
  g_return_val_if_fail(n_heights != NULL && (sightings != NULL || n_sightings == 0), NULL);
  uint32_t len = main_tip(chain) + 1;
  int64_t *r = g_new(int64_t, len);
  for (uint32_t h = 0; h < len; h++)
    r[h] = OBS_TIME_NONE;
  for (gsize i = 0; i < n_sightings; i++) {
    const ObsSighting *s = &sightings[i];
    if (s->vantage != vantage) continue;
    const ObsBlock *b = an_chain_block(chain, s->block);
    if (!b || an_chain_main_block(chain, b->height) != b) continue;
    r[b->height] = MIN(r[b->height], MIN(s->block_msg_ns, s->announce_ns));
  }
  *n_heights = len;
  return r;
}

void an_tx_finalize(AnTx *t) {
  g_return_if_fail(t != NULL && !t->finalized);
  uint32_t from = t->top > AN_TX_K_MAX ? t->top - AN_TX_K_MAX + 1 : 1;
  for (uint32_t h = from; h <= t->top; h++)
    txm_release_height(t, h);
  /* The rest were never committed; by id, so that sums do not depend on where they were held. The index
   * goes first: it is not needed any more, and the keys take its place. */
  txm_index_release(&t->young_index);
  txm_index_release(&t->old_index);
  g_autofree IdKey *rest = g_new(IdKey, MAX(t->held, 1));
  uint32_t n = 0;
  for (uint32_t e = 0; e < t->young.len; e++) {
    const Tx *x = tx_at(t, e);
    if (x->flags & TX_HELD) rest[n++] = (IdKey){.id = x->id, .entry = e};
  }
  for (uint32_t e = 0; e < t->old.len; e++) {
    const Tx *x = tx_at(t, e | OLD_ENTRY);
    if (x->flags & TX_HELD) rest[n++] = (IdKey){.id = x->id, .entry = e | OLD_ENTRY};
  }
  g_assert(n == t->held);
  sort_ids(rest, n);
  g_autofree double *d = g_new(double, 1024 * (gsize)t->n);
  for (uint32_t i = 0; i < n;) {
    gsize m = 0;
    for (uint32_t end = MIN(n, i + 1024); i < end; i++)
      m += txm_propagation_of(t, tx_at(t, rest[i].entry), d + m);
    txm_hist_add_run(t->prop, d, m);
  }
  for (uint32_t i = 0; i < n; i++)
    ord_add(t, tx_at(t, rest[i].entry), FALSE);
  ord_finalize(t);
  txm_release_holding(t);
  for (guint k = 0; k < AN_TX_N_K; k++)
    txm_hist_merge(t->commit[k], t->commit_v[k], t->n);
  t->finalized = TRUE;
}

uint64_t an_tx_n_held(const AnTx *t) {
  g_return_val_if_fail(t != NULL, 0);
  return t->held;
}
