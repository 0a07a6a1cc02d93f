/* txmetrics-private.h: what the parts of the transaction metrics (txmetrics.c, txhist.c, txindex.c, txorder.c,
 * txoutput.c) share: the AnTx structure, its pools and index. Private to the analysis library. */
#pragma once

#include "txmetrics.h"
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

G_BEGIN_DECLS

#define HEX "0x%016" PRIx64

/* Bin layout (ascending values): [0] negative overflow, [1 .. m] negative bins from the largest magnitude
 * down (index m - i holds -[min_abs g^i, min_abs g^(i+1))), [m + 1] the zero bin (-min_abs, min_abs),
 * [m + 2 + i] positive bin i, [2m + 2] positive overflow.
 *
 * A sample's bin is defined by txm_bin_of_exact() (a log per sample). txm_bin_of() gets the same answer without it.
 * The magnitudes are cut into buckets by the top bits of |x| (exponent and HIST_SUB_BITS of mantissa, a key
 * monotonic in |x|), each spanning a ratio of at most 1 + 2^-HIST_SUB_BITS, a tenth of a bin. A table gives,
 * per bucket, its bin if the whole bucket lies in that bin's safe range [edge_i (1 + HIST_SAFE), edge_i+1
 * (1 - HIST_SAFE)) (nine buckets in ten), else the bin i of the bucket's start and HIST_CHECK: then |x| is in
 * bin i or i + 1 (a bucket holds one edge at most), and is given that bin if it lies in its safe range.
 * txm_bin_of_exact()'s rounding errors (a few ulps of the log, relative 1e-13 at worst in |x|) and the edges' own
 * (below 1e-13) are far inside the margin, so in a safe range both give the same bin. Samples within the
 * margin of an edge (about 2e-7 of them) take the log. */
#define HIST_SUB_BITS 10

#define HIST_CHECK 0x8000u       /* in a bucket's table entry: compare with the safe ranges */

struct AnHist {
  double min_abs, log_g;
  guint m; /* log bins per sign */
  uint64_t n;
  double sum, min, max;
  double *exact; /* the samples while binning has not started (n <= AN_HIST_EXACT_MAX) */
  guint n_exact, cap_exact;
  uint64_t *bins; /* 2m + 3 counts once binned; NULL before */
  /* txm_bin_of()'s tables, built when binning starts; NULL if the range is too wide for them. */
  uint16_t *bucket;  /* [key(|x|) - key0]: a bin, or the bin of the bucket's start | HIST_CHECK */
  double (*safe)[2]; /* [i]: bin i's safe range (lower bound, upper bound); [m]: empty */
  uint64_t key0;     /* key(min_abs) */
  double over_abs;   /* from here on: the overflow bins */
};

#define RING (AN_TX_K_MAX + 1) /* declared heights kept: a batch at h needs heights h .. h + 36 */

#define TX_CENSORED 2u

#define TX_HELD 4u /* the pool entry is a held tx (else it is free) */

#define NO_INDEX UINT32_MAX

#define OLD_ENTRY 0x80000000u    /* a Tx entry with this bit is in the old pool */

/* Linear probing over 64-bit slots: 0 = empty, else (hash >> 32) << 32 | (entry + 1). The key is the first
 * member (uint64_t) of the pool entry, at base + entry * stride; a probe reads it only when the slot's 32
 * hash bits match. The home slot is the top `bits` bits of the hash, so growth and backward-shift deletion
 * work from the slots alone. At most `full` eighths full: 3/4 (11 to 21 bytes per entry) where lookups are
 * many, 7/8 (9 to 18 bytes) for the old pool's, which is large and rarely looked up. */
typedef struct {
  uint64_t *slot;
  guint bits; /* 2^bits slots */
  guint full; /* the most slots used, in eighths */
  uint32_t used;
} Index;

/* One held transaction (entries of 40 + 8 n bytes). Free entries of the old pool are chained through
 * `height`. */
typedef struct {
  uint64_t id; /* the index key */
  uint64_t sender, nonce;
  int64_t created_ns;
  uint32_t height; /* of its main block; 0 while not committed (next free entry if free) */
  uint32_t flags;
  int64_t recv_ns[]; /* [v], OBS_TIME_NONE if not received */
} Tx;

/* One tx of the order sample (entries of 32 + 8 n bytes). */
typedef struct {
  uint64_t sender, nonce, id;
  uint32_t committed, pad;
  int64_t recv_ns[]; /* [v] */
} OrdRec;

/* Per-sender out-of-order state (entries of 16 + 8 n bytes), kept for the whole run. */
typedef struct {
  uint64_t sender; /* the index key */
  uint64_t last_nonce;
  int64_t max_ns[]; /* [v] latest reception among the sender's committed txs evaluated; INT64_MIN if none */
} Sender;

/* A growable array of equal entries, named by their index (the array moves when it grows). Free lists of
 * entries, where there are any, are kept by the owner. */
typedef struct {
  char *base;
  gsize size;        /* bytes per entry */
  uint32_t len, cap; /* entries in use or free, allocated */
} Pool;

/* A declared main height. */
typedef struct {
  uint32_t height; /* 0 = slot unused */
  uint64_t block;
  int64_t mined_ns;
  uint32_t *batch; /* pool entries of the txs committed at this height, not yet released */
  uint32_t len, cap;
} Slot;

typedef struct {
  uint64_t sender, nonce, id;
  uint32_t entry; /* the Tx */
} BatchKey;

typedef struct {
  uint64_t id;
  uint32_t entry;
} IdKey;

/* What the order sample gives (counts of (tx, vantage) pairs; [v] per vantage, pooled where no [v]). */
typedef struct {
  uint64_t *pub_ooo, *pub_pairs;      /* [v] committed, as published: text-sorted nonces, millisecond times */
  uint64_t seen_ooo, seen_pub_ooo, seen_pairs; /* every received tx: intended; as published */
  uint64_t consec_pairs, consec_same_ms;       /* consecutive nonces both received; in the same millisecond */
  uint64_t sender_pairs, sender_single;        /* (sender, vantage) with a reception; with exactly one */
  uint64_t senders_kept;                       /* distinct senders in the sample */
  double sender_share;                         /* share of senders kept: 1 = every one (exact) */
} OrderFigures;

struct AnTx {
  char **names;
  guint n;
  gboolean finalized;
  /* Held txs. New ones go to the young arena, whose entries are taken in turn: a tx still uncommitted when
   * its entry comes round again (YOUNG_MIN txs later at least) moves to the old pool, and one committed is
   * left alone (if all are, the arena doubles). The txs whose records still come (sightings, inclusions,
   * commits, releases) are thus in a few MB, young_index and the arena, that the caches keep, and the txs
   * that linger (never committed, until an_tx_finalize()) out of their way. A Tx entry has OLD_ENTRY set in
   * the old pool. */
  Pool young;        /* Tx, len == cap */
  uint32_t cursor;   /* the arena's next entry */
  Index young_index; /* id -> young entry */
  Pool old;          /* Tx */
  uint32_t old_free; /* first free old entry, NO_INDEX for none */
  Index old_index;   /* id -> old entry */
  uint64_t *bloom;   /* a filter of the ids in the old pool (and of some that left it): most lookups of ids
                      * not held (every new tx) then skip old_index, whose slots would rarely be cached */
  uint32_t bloom_words;
  uint32_t bloom_keys; /* added since bloom_build() */
  uint32_t held;       /* txs in both */
  Pool senders;        /* Sender */
  Index sender_index;  /* sender -> Sender entry */
  Pool pending;        /* Pending */
  uint32_t pending_free;
  Index pending_index; /* height -> Pending entry: heights above `top` */
  Pool incls;          /* Incl */
  uint32_t incl_free;
  uint32_t top;       /* last declared height */
  Slot ring[RING];    /* [h % RING] */
  int64_t *ring_recv; /* [(h % RING) * n + v] */
  BatchKey *keys;     /* txm_release_height()'s buffers */
  const Tx **batch_tx;
  uint32_t *batch_sender;
  double *samples; /* keys_cap * n */
  /* Commit-time sample (an_tx_write_commit_samples_csv): committed txs whose id hash is below cs_limit, with
   * their commit times [k][v] (NAN where none); the limit halves whenever more than AN_TX_SAMPLE_CAP are kept. */
  GArray *cs_hash;   /* uint64 */
  GArray *cs_values; /* double, AN_TX_N_K * n per kept tx */
  uint64_t cs_limit;
  gsize keys_cap;
  /* Results. */
  uint64_t created, unique, committed, unmatched, nonce_violations;
  uint64_t censored_created, censored_committed;
  AnHist *commit[AN_TX_N_K];    /* all vantages, ns */
  AnHist **commit_v[AN_TX_N_K]; /* [k][v], ns */
  AnHist *prop;                 /* ns */
  AnHist *wait[2];              /* [censored], ns */
  uint64_t *ooo, *ooo_pairs;    /* [v] */
  /* Order sample (see "Order sample" below): records of the txs of the senders whose hash is below ord_limit. */
  char *ord;          /* OrdRec entries of ord_size bytes */
  gsize ord_size;
  uint32_t ord_len, ord_cap;
  uint64_t ord_limit;
  OrderFigures of;    /* after an_tx_finalize() */
};

AnHist *an_hist_new(double min_abs, double max_abs);
void an_hist_free(AnHist *h);
guint txm_bin_of_exact(const AnHist *h, double x);
G_GNUC_NO_INLINE void txm_hist_keep(AnHist *h, double x);
void txm_hist_add_run(AnHist *h, const double *x, gsize n);
void txm_hist_merge(AnHist *h, AnHist *const *parts, guint n_parts);
uint64_t an_hist_count(const AnHist *h);
double an_hist_mean(const AnHist *h);
double an_hist_quantile(const AnHist *h, double f);
void txm_index_init(Index *ix, guint full);
void txm_index_release(Index *ix);
void txm_index_insert(Index *ix, uint64_t key, uint32_t entry);
void txm_index_remove_at(Index *ix, gssize pos);
uint32_t txm_pool_append(Pool *p);
AnTx *an_tx_new(const char *const *vantage_names, guint n_vantages);
void txm_release_holding(AnTx *t);
void an_tx_free(AnTx *t);
void txm_drop_tx(AnTx *t, uint32_t entry);
gboolean an_tx_add_tx_seen(AnTx *t, const ObsTx *r, const int64_t *recv_ns, GError **error);
Slot *txm_slot_of(AnTx *t, uint32_t height);
const int64_t *txm_slot_recv(const AnTx *t, uint32_t height);
void txm_commit(AnTx *t, uint32_t entry, uint32_t height);
gboolean an_tx_add_inclusion(AnTx *t, const ObsTxInclusion *in, GError **error);
void txm_settle_pending(AnTx *t, uint32_t height, uint64_t block);
guint txm_propagation_of(const AnTx *t, const Tx *x, double *out);
void txm_sample_batch(AnTx *t, uint32_t height, const Tx *const *xs, uint32_t n);
gboolean an_tx_write_commit_samples_csv(const AnTx *t, FILE *out);
void txm_release_height(AnTx *t, uint32_t height);
gboolean an_tx_add_main_block(AnTx *t, uint32_t height, uint64_t block, int64_t mined_ns,
                              const int64_t *recv_ns, GError **error);
void an_tx_finalize(AnTx *t);

static inline uint64_t txm_hist_key(double a) {
  uint64_t b;
  memcpy(&b, &a, sizeof b);
  return b >> (52 - HIST_SUB_BITS);
}

/* txm_bin_of_exact(), fast (see the bin layout above). */
static inline guint txm_bin_of(const AnHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  if (h->bucket) {
    if (a >= h->over_abs) return x > 0 ? 2 * h->m + 2 : 0;
    guint i = h->bucket[txm_hist_key(a) - h->key0];
    if (G_UNLIKELY(i & HIST_CHECK)) {
      i &= ~HIST_CHECK;
      i += a >= h->safe[i][1];
      if (!(a >= h->safe[i][0] && a < h->safe[i][1])) return txm_bin_of_exact(h, x);
    }
    return x > 0 ? h->m + 2 + i : h->m - i;
  }
  return txm_bin_of_exact(h, x);
}

static inline uint64_t txm_index_hash(uint64_t key) { /* splitmix64's finalizer */
  key = (key ^ (key >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  key = (key ^ (key >> 27)) * UINT64_C(0x94d049bb133111eb);
  return key ^ (key >> 31);
}

static inline gsize txm_index_mask(const Index *ix) {
  return ((gsize)1 << ix->bits) - 1;
}

/* The slot position of `key`, or -1. */
static inline gssize txm_index_find(const Index *ix, const char *base, gsize stride, uint64_t key) {
  uint64_t h = txm_index_hash(key), tag = h >> 32;
  gsize mask = txm_index_mask(ix);
  for (gsize i = (gsize)(h >> (64 - ix->bits));; i = (i + 1) & mask) {
    uint64_t s = ix->slot[i];
    if (!s) return -1;
    if ((s >> 32) == tag &&
        *(const uint64_t *)(const void *)(base + (gsize)((uint32_t)s - 1) * stride) == key)
      return (gssize)i;
  }
}

static inline uint32_t txm_index_entry(const Index *ix, gssize pos) {
  return (uint32_t)ix->slot[pos] - 1;
}

/* The entry of the first slot on `key`'s probe run whose hash bits match, without reading any entry's key:
 * almost always key's entry if key is present (check it), NO_INDEX if none matches. */
static inline uint32_t txm_index_guess(const Index *ix, uint64_t key) {
  uint64_t h = txm_index_hash(key), tag = h >> 32;
  gsize mask = txm_index_mask(ix);
  for (gsize i = (gsize)(h >> (64 - ix->bits));; i = (i + 1) & mask) {
    uint64_t s = ix->slot[i];
    if (!s) return NO_INDEX;
    if ((s >> 32) == tag) return (uint32_t)s - 1;
  }
}

static inline void *txm_pool_at(const Pool *p, uint32_t i) {
  return p->base + (gsize)i * p->size;
}

static inline Tx *tx_at(const AnTx *t, uint32_t entry) {
  return entry & OLD_ENTRY ? txm_pool_at(&t->old, entry & ~OLD_ENTRY) : txm_pool_at(&t->young, entry);
}

static inline uint64_t txm_sample_hash(uint64_t id) {
  id ^= id >> 30;
  id *= UINT64_C(0xbf58476d1ce4e5b9);
  id ^= id >> 27;
  id *= UINT64_C(0x94d049bb133111eb);
  return id ^ (id >> 31);
}

G_END_DECLS
