/* txmetrics.c: transaction metrics over a streamed observation stream, each tx held only until its metrics
 * are final, distributions in streamed histograms. */
#include "txmetrics.h"

#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* clang-format off */
G_DEFINE_QUARK(an-tx-error-quark, an_tx_error)
/* clang-format on */

#define HEX "0x%016" PRIx64

/* ---- AnHist ------------------------------------------------------------------------------------------ */

/* Bin layout (ascending values): [0] negative overflow, [1 .. m] negative bins from the largest magnitude
 * down (index m - i holds -[min_abs g^i, min_abs g^(i+1))), [m + 1] the zero bin (-min_abs, min_abs),
 * [m + 2 + i] positive bin i, [2m + 2] positive overflow. */
struct AnHist {
  double min_abs, log_g;
  guint m; /* log bins per sign */
  uint64_t n;
  double sum, min, max;
  GArray *exact;  /* double, the samples while n <= AN_HIST_EXACT_MAX; NULL after */
  uint64_t *bins; /* 2m + 3 counts once binned; NULL before */
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

AnHist *an_hist_new(double min_abs, double max_abs) {
  g_return_val_if_fail(min_abs > 0 && max_abs > min_abs && isfinite(max_abs), NULL);
  AnHist *h = g_new0(AnHist, 1);
  h->min_abs = min_abs;
  h->log_g = log1p(AN_HIST_REL_WIDTH);
  h->m = (guint)ceil(log(max_abs / min_abs) / h->log_g);
  h->exact = g_array_new(FALSE, FALSE, sizeof(double));
  h->min = INFINITY;
  h->max = -INFINITY;
  return h;
}

void an_hist_free(AnHist *h) {
  if (!h) return;
  if (h->exact) g_array_unref(h->exact);
  g_free(h->bins);
  g_free(h);
}

static guint bin_of(const AnHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  double k = floor(log(a / h->min_abs) / h->log_g);
  if (k >= h->m) return x > 0 ? 2 * h->m + 2 : 0;
  guint i = k < 0 ? 0 : (guint)k; /* k < 0 only by rounding at min_abs */
  return x > 0 ? h->m + 2 + i : h->m - i;
}

/* The range of values bin `b` holds, clipped to the observed minimum and maximum. */
static void bin_range(const AnHist *h, guint b, double *lo, double *hi) {
  double edge_m = h->min_abs * exp(h->m * h->log_g);
  if (b == 0) {
    *lo = h->min, *hi = -edge_m;
  } else if (b <= h->m) {
    guint i = h->m - b;
    *lo = -h->min_abs * exp((i + 1) * h->log_g), *hi = -h->min_abs * exp(i * h->log_g);
  } else if (b == h->m + 1) {
    *lo = -h->min_abs, *hi = h->min_abs;
  } else if (b < 2 * h->m + 2) {
    guint i = b - h->m - 2;
    *lo = h->min_abs * exp(i * h->log_g), *hi = h->min_abs * exp((i + 1) * h->log_g);
  } else {
    *lo = edge_m, *hi = h->max;
  }
  *lo = CLAMP(*lo, h->min, h->max);
  *hi = CLAMP(*hi, h->min, h->max);
}

static void bin_add(AnHist *h, double x) {
  h->bins[bin_of(h, x)]++;
}

void an_hist_add(AnHist *h, double x) {
  g_return_if_fail(h != NULL && isfinite(x));
  h->n++;
  h->sum += x;
  h->min = MIN(h->min, x);
  h->max = MAX(h->max, x);
  if (h->exact && h->exact->len < AN_HIST_EXACT_MAX) {
    g_array_append_val(h->exact, x);
    return;
  }
  if (h->exact) {
    h->bins = g_new0(uint64_t, 2 * (gsize)h->m + 3);
    for (guint i = 0; i < h->exact->len; i++)
      bin_add(h, g_array_index(h->exact, double, i));
    g_clear_pointer(&h->exact, g_array_unref);
  }
  bin_add(h, x);
}

uint64_t an_hist_count(const AnHist *h) {
  g_return_val_if_fail(h != NULL, 0);
  return h->n;
}

double an_hist_mean(const AnHist *h) {
  g_return_val_if_fail(h != NULL, NAN);
  return h->n ? h->sum / (double)h->n : NAN;
}

gboolean an_hist_is_exact(const AnHist *h) {
  g_return_val_if_fail(h != NULL, FALSE);
  return h->exact != NULL;
}

/* Estimate of the j-th order statistic (0-based, j < n) of a binned histogram. */
static double binned_order_stat(const AnHist *h, uint64_t j) {
  if (j == 0) return h->min;
  if (j == h->n - 1) return h->max;
  uint64_t below = 0;
  for (guint b = 0; b < 2 * h->m + 3; b++) {
    uint64_t c = h->bins[b];
    if (j < below + c) {
      double lo, hi;
      bin_range(h, b, &lo, &hi);
      return lo + (hi - lo) * ((double)(j - below) + 0.5) / (double)c;
    }
    below += c;
  }
  g_assert_not_reached();
}

double an_hist_quantile(const AnHist *h, double f) {
  g_return_val_if_fail(h != NULL && f >= 0 && f <= 1, NAN);
  if (h->n == 0) return NAN;
  if (h->exact) {
    g_autofree double *x = g_memdup2(h->exact->data, h->exact->len * sizeof(double));
    qsort(x, h->exact->len, sizeof(double), cmp_double);
    return gsl_stats_quantile_from_sorted_data(x, 1, h->exact->len, f);
  }
  double d = (double)(h->n - 1) * f;
  uint64_t i = (uint64_t)floor(d);
  double lo = binned_order_stat(h, i);
  if (i + 1 >= h->n) return lo;
  double frac = d - (double)i;
  return frac == 0 ? lo : lo + frac * (binned_order_stat(h, i + 1) - lo);
}

/* ---- AnTx -------------------------------------------------------------------------------------------- */

const uint32_t AN_TX_K[AN_TX_N_K] = {0, 3, 12, 36};

#define RING (AN_TX_K_MAX + 1) /* declared heights kept: a batch at h needs heights h .. h + 36 */
#define TX_UNIQUE 1u           /* had a sighting or an inclusion */
#define TX_CENSORED 2u
/* Histogram ranges, in nanoseconds: exact zeros apart, 1 ns .. 3 years. */
#define HIST_MIN_NS 0.5
#define HIST_MAX_NS 1e17

/* One held transaction. */
typedef struct {
  uint64_t id; /* the hash table's key points here */
  uint64_t sender, nonce;
  int64_t created_ns;
  uint32_t height; /* of its main block; 0 while not committed */
  uint32_t flags;
  int64_t recv_ns[]; /* [v], OBS_TIME_NONE if not received */
} Tx;

/* Per-sender out-of-order state. */
typedef struct {
  uint64_t sender; /* key */
  uint64_t last_nonce;
  int64_t max_ns[]; /* [v] latest reception among the sender's committed txs evaluated; INT64_MIN if none */
} Sender;

typedef struct {
  uint64_t block, tx;
} Incl;

/* A declared main height. */
typedef struct {
  uint32_t height; /* 0 = slot unused */
  uint64_t block;
  int64_t mined_ns;
  GPtrArray *batch; /* Tx *, committed at this height, not yet released */
} Slot;

struct AnTx {
  char **names;
  guint n;
  gboolean finalized;
  GHashTable *txs;     /* const uint64_t *id -> Tx * (owns them; iterated only to collect, then sorted) */
  GHashTable *senders; /* const uint64_t *sender -> Sender * (owns them; never iterated) */
  GHashTable *pending; /* height -> GArray of Incl, heights above `top` */
  uint32_t top;        /* last declared height */
  Slot ring[RING];     /* [h % RING] */
  int64_t *ring_recv;  /* [(h % RING) * n + v] */
  /* Results. */
  uint64_t created, unique, committed, unmatched, nonce_violations;
  uint64_t censored_created, censored_committed;
  AnHist *commit[AN_TX_N_K];    /* all vantages, ns */
  AnHist **commit_v[AN_TX_N_K]; /* [k][v], ns */
  AnHist *prop;                 /* ns */
  AnHist *wait[2];              /* [censored], ns */
  uint64_t *ooo, *ooo_pairs;    /* [v] */
};

static AnHist *ns_hist(void) {
  return an_hist_new(HIST_MIN_NS, HIST_MAX_NS);
}

static void pending_free(gpointer p) {
  g_array_unref(p);
}

AnTx *an_tx_new(const char *const *vantage_names, guint n_vantages) {
  char **names = an_vantage_names_dup(vantage_names, n_vantages);
  if (!names) return NULL;
  AnTx *t = g_new0(AnTx, 1);
  t->n = n_vantages;
  t->names = names;
  t->txs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  t->senders = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  t->pending = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, pending_free);
  for (guint i = 0; i < RING; i++)
    t->ring[i].batch = g_ptr_array_new();
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
  return t;
}

void an_tx_free(AnTx *t) {
  if (!t) return;
  g_strfreev(t->names);
  g_hash_table_unref(t->txs); /* frees the held Tx; the batches only point at them */
  g_hash_table_unref(t->senders);
  g_hash_table_unref(t->pending);
  for (guint i = 0; i < RING; i++)
    g_ptr_array_unref(t->ring[i].batch);
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
  g_free(t);
}

gboolean an_tx_add_tx(AnTx *t, const ObsTx *r, GError **error) {
  g_return_val_if_fail(t != NULL && r != NULL && !t->finalized, FALSE);
  if (r->type > OBS_TX_CC) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD, "tx " HEX ": unknown type %u", r->id,
                (unsigned)r->type);
    return FALSE;
  }
  if (g_hash_table_contains(t->txs, &r->id)) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD, "tx " HEX " added twice", r->id);
    return FALSE;
  }
  Tx *x = g_malloc(sizeof *x + (gsize)t->n * sizeof x->recv_ns[0]);
  *x = (Tx){.id = r->id,
            .sender = r->sender,
            .nonce = r->nonce,
            .created_ns = r->created_ns,
            .flags = r->censored ? TX_CENSORED : 0};
  for (guint v = 0; v < t->n; v++)
    x->recv_ns[v] = OBS_TIME_NONE;
  g_hash_table_insert(t->txs, &x->id, x);
  t->created++;
  if (r->censored) t->censored_created++;
  return TRUE;
}

static void mark_unique(AnTx *t, Tx *x) {
  if (x->flags & TX_UNIQUE) return;
  x->flags |= TX_UNIQUE;
  t->unique++;
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
  Tx *x = g_hash_table_lookup(t->txs, &s->tx);
  if (!x) {
    t->unmatched++;
    return TRUE;
  }
  mark_unique(t, x);
  x->recv_ns[s->vantage] = MIN(x->recv_ns[s->vantage], s->seen_ns);
  return TRUE;
}

static Slot *slot_of(AnTx *t, uint32_t height) {
  Slot *sl = &t->ring[height % RING];
  g_assert(sl->height == height);
  return sl;
}

static const int64_t *slot_recv(const AnTx *t, uint32_t height) {
  return &t->ring_recv[(gsize)(height % RING) * t->n];
}

/* Commits a held tx to the declared main block at `height` (a second main inclusion is ignored). */
static void commit(AnTx *t, Tx *x, uint32_t height) {
  if (x->height != 0) return;
  x->height = height;
  t->committed++;
  if (x->flags & TX_CENSORED) t->censored_committed++;
  g_ptr_array_add(slot_of(t, height)->batch, x);
}

gboolean an_tx_add_inclusion(AnTx *t, const ObsTxInclusion *in, GError **error) {
  g_return_val_if_fail(t != NULL && in != NULL && !t->finalized, FALSE);
  if (in->block == OBS_GENESIS_ID || in->height == 0) {
    g_set_error(error, AN_TX_ERROR, AN_TX_ERROR_INVALID_RECORD,
                "inclusion of tx " HEX " in block " HEX " at height %" PRIu32 ": not a mined block", in->tx,
                in->block, in->height);
    return FALSE;
  }
  Tx *x = g_hash_table_lookup(t->txs, &in->tx);
  if (!x || (in->height <= t->top && t->top - in->height >= AN_TX_K_MAX)) {
    t->unmatched++;
    return TRUE;
  }
  mark_unique(t, x);
  if (in->height <= t->top) {
    if (slot_of(t, in->height)->block == in->block) commit(t, x, in->height);
    return TRUE;
  }
  GArray *a = g_hash_table_lookup(t->pending, GUINT_TO_POINTER(in->height));
  if (!a) {
    a = g_array_new(FALSE, FALSE, sizeof(Incl));
    g_hash_table_insert(t->pending, GUINT_TO_POINTER(in->height), a);
  }
  Incl i = {.block = in->block, .tx = in->tx};
  g_array_append_val(a, i);
  return TRUE;
}

static int cmp_sender_nonce(gconstpointer a, gconstpointer b) {
  const Tx *x = *(Tx *const *)a, *y = *(Tx *const *)b;
  if (x->sender != y->sender) return x->sender < y->sender ? -1 : 1;
  if (x->nonce != y->nonce) return x->nonce < y->nonce ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int cmp_id(gconstpointer a, gconstpointer b) {
  const Tx *x = *(Tx *const *)a, *y = *(Tx *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

/* Propagation delays of a tx every vantage received. */
static void count_propagation(AnTx *t, const Tx *x) {
  guint first = 0;
  for (guint v = 0; v < t->n; v++) {
    if (x->recv_ns[v] == OBS_TIME_NONE) return;
    if (x->recv_ns[v] < x->recv_ns[first]) first = v;
  }
  for (guint v = 0; v < t->n; v++)
    if (v != first) an_hist_add(t->prop, (double)(x->recv_ns[v] - x->recv_ns[first]));
}

static void count_out_of_order(AnTx *t, const Tx *x) {
  Sender *s = g_hash_table_lookup(t->senders, &x->sender);
  if (!s) {
    s = g_malloc(sizeof *s + (gsize)t->n * sizeof s->max_ns[0]);
    s->sender = x->sender;
    for (guint v = 0; v < t->n; v++)
      s->max_ns[v] = INT64_MIN;
    g_hash_table_insert(t->senders, &s->sender, s);
  } else if (x->nonce <= s->last_nonce) {
    t->nonce_violations++;
    return;
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

/* Evaluates a committed tx; every height it needs that is declared is still in the ring. */
static void count_committed(AnTx *t, const Tx *x) {
  for (guint k = 0; k < AN_TX_N_K; k++) {
    uint32_t hk = x->height + AN_TX_K[k];
    if (hk > t->top) break;
    const int64_t *block_ns = slot_recv(t, hk);
    for (guint v = 0; v < t->n; v++) {
      if (x->recv_ns[v] == OBS_TIME_NONE || block_ns[v] == OBS_TIME_NONE) continue;
      double d = (double)(block_ns[v] - x->recv_ns[v]);
      an_hist_add(t->commit[k], d);
      an_hist_add(t->commit_v[k][v], d);
    }
  }
  if (x->created_ns != OBS_TIME_NONE)
    an_hist_add(t->wait[(x->flags & TX_CENSORED) ? 1 : 0],
                (double)(t->ring[x->height % RING].mined_ns - x->created_ns));
  count_out_of_order(t, x);
  count_propagation(t, x);
}

/* Evaluates and drops the txs committed at `height`, by sender and nonce. */
static void release_height(AnTx *t, uint32_t height) {
  GPtrArray *batch = slot_of(t, height)->batch;
  g_ptr_array_sort(batch, cmp_sender_nonce);
  for (guint i = 0; i < batch->len; i++) {
    Tx *x = g_ptr_array_index(batch, i);
    count_committed(t, x);
    g_hash_table_remove(t->txs, &x->id);
  }
  g_ptr_array_set_size(batch, 0);
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
  g_assert(sl->batch->len == 0); /* height - RING was released when height - 1 was declared */
  sl->height = height;
  sl->block = block;
  sl->mined_ns = mined_ns;
  int64_t *r = &t->ring_recv[(gsize)(height % RING) * t->n];
  for (guint v = 0; v < t->n; v++)
    r[v] = recv_ns ? recv_ns[v] : OBS_TIME_NONE;
  t->top = height;

  GArray *a = g_hash_table_lookup(t->pending, GUINT_TO_POINTER(height));
  for (guint i = 0; a && i < a->len; i++) {
    const Incl *in = &g_array_index(a, Incl, i);
    if (in->block != block) continue;
    Tx *x = g_hash_table_lookup(t->txs, &in->tx);
    if (x) commit(t, x, height);
  }
  g_hash_table_remove(t->pending, GUINT_TO_POINTER(height));

  if (height > AN_TX_K_MAX) release_height(t, height - AN_TX_K_MAX);
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
    release_height(t, h);
  /* The rest were never committed; sort them so that sums do not depend on the hash table's order. */
  g_autoptr(GPtrArray) rest = g_ptr_array_sized_new(g_hash_table_size(t->txs));
  GHashTableIter it;
  gpointer value;
  g_hash_table_iter_init(&it, t->txs);
  while (g_hash_table_iter_next(&it, NULL, &value))
    g_ptr_array_add(rest, value);
  g_ptr_array_sort(rest, cmp_id);
  for (guint i = 0; i < rest->len; i++)
    count_propagation(t, g_ptr_array_index(rest, i));
  g_hash_table_remove_all(t->txs);
  g_hash_table_remove_all(t->pending);
  t->finalized = TRUE;
}

uint64_t an_tx_n_held(const AnTx *t) {
  g_return_val_if_fail(t != NULL, 0);
  return g_hash_table_size(t->txs);
}

/* ---- Outputs ----------------------------------------------------------------------------------------- */

typedef struct {
  const char *key;
  double f; /* quantile fraction; < 0 for the mean */
} StatKey;

static const StatKey STATS_MMP90[] = {{"median", 0.5}, {"mean", -1}, {"p90", 0.9}, {NULL, 0}};
static const StatKey STATS_PROP[] = {{"median", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {NULL, 0}};

static double stat_of(const AnHist *h, double f, double unit_ns) {
  return (f < 0 ? an_hist_mean(h) : an_hist_quantile(h, f)) / unit_ns;
}

/* Sets `key` of `parent` to the statistics `keys` of `h` in units of `unit_ns`, unless it is empty. */
static void set_stats(json_t *parent, const char *key, const AnHist *h, const StatKey *keys, double unit_ns) {
  if (an_hist_count(h) == 0) return;
  json_t *o = json_object();
  for (const StatKey *k = keys; k->key; k++)
    json_object_set_new(o, k->key, json_real(stat_of(h, k->f, unit_ns)));
  json_object_set_new(parent, key, o);
}

static void set_count(json_t *o, const char *key, uint64_t n) {
  json_object_set_new(o, key, json_integer((json_int_t)n));
}

void an_tx_add_json(const AnTx *t, json_t *summary) {
  g_return_if_fail(t != NULL && t->finalized && json_is_object(summary));
  json_t *o = json_object();
  set_count(o, "unique", t->unique);
  set_count(o, "committed", t->committed);
  set_count(o, "never_committed", t->created - t->committed);

  json_t *commit_s = json_object();
  for (guint k = 0; k < AN_TX_N_K; k++) {
    char key[16];
    g_snprintf(key, sizeof key, "k%" PRIu32, AN_TX_K[k]);
    set_stats(commit_s, key, t->commit[k], STATS_MMP90, 1e9);
  }
  an_json_set_nonempty(o, "commit_s", commit_s);

  uint64_t ooo = 0, pairs = 0;
  json_t *by_vantage = json_object();
  for (guint v = 0; v < t->n; v++) {
    ooo += t->ooo[v];
    pairs += t->ooo_pairs[v];
    if (t->ooo_pairs[v])
      json_object_set_new(by_vantage, t->names[v], json_real((double)t->ooo[v] / (double)t->ooo_pairs[v]));
  }
  if (pairs) json_object_set_new(o, "out_of_order_share", json_real((double)ooo / (double)pairs));
  an_json_set_nonempty(o, "out_of_order_share_by_vantage", by_vantage);

  set_stats(o, "propagation_ms", t->prop, STATS_PROP, 1e6);

  if (t->censored_created > 0) {
    json_t *c = json_object();
    const char *names[2] = {"censored", "uncensored"};
    for (guint i = 0; i < 2; i++) {
      json_t *w = json_object();
      set_stats(w, "wait_s", t->wait[i == 0 ? 1 : 0], STATS_MMP90, 1e9);
      an_json_set_nonempty(c, names[i], w);
    }
    set_count(c, "censored_never_committed", t->censored_created - t->censored_committed);
    json_object_set_new(o, "censorship", c);
  }

  set_count(o, "created", t->created);
  set_count(o, "unmatched_records", t->unmatched);
  set_count(o, "nonce_order_violations", t->nonce_violations);
  json_object_set_new(summary, "tx", o);
}

static void put_stats_row(FILE *out, uint32_t k, const char *vantage, const AnHist *h) {
  fprintf(out, "%" PRIu32 ",", k);
  an_csv_put_field(out, vantage);
  fprintf(out, ",%" PRIu64, an_hist_count(h));
  for (const StatKey *s = STATS_MMP90; s->key; s++) {
    fputc(',', out);
    if (an_hist_count(h)) fprintf(out, "%.17g", stat_of(h, s->f, 1e9));
  }
  fputc('\n', out);
}

gboolean an_tx_write_commit_csv(const AnTx *t, FILE *out) {
  g_return_val_if_fail(t != NULL && t->finalized && out != NULL, FALSE);
  fputs("k,vantage,pairs,median_s,mean_s,p90_s\n", out);
  for (guint k = 0; k < AN_TX_N_K; k++) {
    put_stats_row(out, AN_TX_K[k], "", t->commit[k]);
    for (guint v = 0; v < t->n; v++)
      put_stats_row(out, AN_TX_K[k], t->names[v], t->commit_v[k][v]);
  }
  return fflush(out) == 0 && !ferror(out);
}
