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
 * [m + 2 + i] positive bin i, [2m + 2] positive overflow.
 *
 * A sample's bin is defined by bin_of_exact() (a log per sample). bin_of() gets the same answer without it.
 * The magnitudes are cut into buckets by the top bits of |x| (exponent and HIST_SUB_BITS of mantissa, a key
 * monotonic in |x|), each spanning a ratio of at most 1 + 2^-HIST_SUB_BITS, a tenth of a bin. A table gives,
 * per bucket, its bin if the whole bucket lies in that bin's safe range [edge_i (1 + HIST_SAFE), edge_i+1
 * (1 - HIST_SAFE)) (nine buckets in ten), else the bin i of the bucket's start and HIST_CHECK: then |x| is in
 * bin i or i + 1 (a bucket holds one edge at most), and is given that bin if it lies in its safe range.
 * bin_of_exact()'s rounding errors (a few ulps of the log, relative 1e-13 at worst in |x|) and the edges' own
 * (below 1e-13) are far inside the margin, so in a safe range both give the same bin. Samples within the
 * margin of an edge (about 2e-7 of them) take the log. */
#define HIST_SUB_BITS 10
#define HIST_SAFE 1e-9
#define HIST_CHECK 0x8000u       /* in a bucket's table entry: compare with the safe ranges */
#define HIST_MAX_KEYS (1u << 20) /* buckets; wider ranges go without the tables */

struct AnHist {
  double min_abs, log_g;
  guint m; /* log bins per sign */
  uint64_t n;
  double sum, min, max;
  double *exact; /* the samples while binning has not started (n <= AN_HIST_EXACT_MAX) */
  guint n_exact, cap_exact;
  uint64_t *bins; /* 2m + 3 counts once binned; NULL before */
  /* bin_of()'s tables, built when binning starts; NULL if the range is too wide for them. */
  uint16_t *bucket;  /* [key(|x|) - key0]: a bin, or the bin of the bucket's start | HIST_CHECK */
  double (*safe)[2]; /* [i]: bin i's safe range (lower bound, upper bound); [m]: empty */
  uint64_t key0;     /* key(min_abs) */
  double over_abs;   /* from here on: the overflow bins */
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
  h->min = INFINITY;
  h->max = -INFINITY;
  return h;
}

void an_hist_free(AnHist *h) {
  if (!h) return;
  g_free(h->exact);
  g_free(h->bins);
  g_free(h->bucket);
  g_free(h->safe);
  g_free(h);
}

static inline uint64_t hist_key(double a) {
  uint64_t b;
  memcpy(&b, &a, sizeof b);
  return b >> (52 - HIST_SUB_BITS);
}

static guint bin_of_exact(const AnHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  double k = floor(log(a / h->min_abs) / h->log_g);
  if (k >= h->m) return x > 0 ? 2 * h->m + 2 : 0;
  guint i = k < 0 ? 0 : (guint)k; /* k < 0 only by rounding at min_abs */
  return x > 0 ? h->m + 2 + i : h->m - i;
}

/* bin_of_exact(), fast (see the bin layout above). */
static inline guint bin_of(const AnHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  if (h->bucket) {
    if (a >= h->over_abs) return x > 0 ? 2 * h->m + 2 : 0;
    guint i = h->bucket[hist_key(a) - h->key0];
    if (G_UNLIKELY(i & HIST_CHECK)) {
      i &= ~HIST_CHECK;
      i += a >= h->safe[i][1];
      if (!(a >= h->safe[i][0] && a < h->safe[i][1])) return bin_of_exact(h, x);
    }
    return x > 0 ? h->m + 2 + i : h->m - i;
  }
  return bin_of_exact(h, x);
}

static double from_key(uint64_t key) {
  uint64_t b = key << (52 - HIST_SUB_BITS);
  double a;
  memcpy(&a, &b, sizeof a);
  return a;
}

static void hist_build_tables(AnHist *h) {
  if (h->m + 1 >= HIST_CHECK) return;
  g_autofree double *edge = g_new(double, h->m + 1);
  for (guint i = 0; i <= h->m; i++)
    edge[i] = h->min_abs * exp(i * h->log_g); /* as bin_range() */
  double over = edge[h->m] * (1 + HIST_SAFE);
  uint64_t key0 = hist_key(h->min_abs);
  if (!isfinite(over) || hist_key(over) - key0 >= HIST_MAX_KEYS) return;
  double(*safe)[2] = g_malloc_n(h->m + 1, sizeof safe[0]);
  for (guint i = 0; i < h->m; i++) {
    safe[i][0] = edge[i] * (1 + HIST_SAFE);
    safe[i][1] = edge[i + 1] * (1 - HIST_SAFE);
  }
  safe[h->m][0] = safe[h->m][1] = INFINITY;
  gsize n_keys = hist_key(over) - key0 + 1;
  uint16_t *bucket = g_new(uint16_t, n_keys);
  guint i = 0; /* the bin of the bucket's start (0 below min_abs, m from edge m on) */
  for (gsize c = 0; c < n_keys; c++) {
    double start = from_key(key0 + c), end = from_key(key0 + c + 1);
    while (i < h->m && edge[i + 1] <= start)
      i++;
    gboolean whole = i < h->m && start >= safe[i][0] && end <= safe[i][1];
    bucket[c] = (uint16_t)(whole ? i : i | HIST_CHECK);
  }
  h->safe = safe;
  h->bucket = bucket;
  h->key0 = key0;
  h->over_abs = over;
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

/* The first sample past AN_HIST_EXACT_MAX: bins from now on, the kept samples moved into them. */
static G_GNUC_NO_INLINE void hist_start_bins(AnHist *h) {
  hist_build_tables(h);
  h->bins = g_new0(uint64_t, 2 * (gsize)h->m + 3);
  for (guint i = 0; i < h->n_exact; i++)
    h->bins[bin_of(h, h->exact[i])]++;
  g_clear_pointer(&h->exact, g_free);
  h->n_exact = h->cap_exact = 0;
}

static G_GNUC_NO_INLINE void hist_keep(AnHist *h, double x) {
  if (h->n_exact == h->cap_exact) {
    h->cap_exact = h->cap_exact ? 2 * h->cap_exact : 64;
    h->exact = g_renew(double, h->exact, h->cap_exact);
  }
  h->exact[h->n_exact++] = x;
}

/* an_hist_add() of x[0], ..., x[n - 1] (finite), in this order. The loops keep the running totals in
 * registers. */
static void hist_add_run(AnHist *h, const double *x, gsize n) {
  double sum = h->sum, min = h->min, max = h->max;
  gsize i = 0;
  for (; i < n && h->n + i < AN_HIST_EXACT_MAX; i++) {
    sum += x[i];
    min = MIN(min, x[i]);
    max = MAX(max, x[i]);
    hist_keep(h, x[i]);
  }
  if (i < n && !h->bins) hist_start_bins(h);
  for (; i < n; i++) {
    sum += x[i];
    min = MIN(min, x[i]);
    max = MAX(max, x[i]);
    h->bins[bin_of(h, x[i])]++;
  }
  h->n += n;
  h->sum = sum;
  h->min = min;
  h->max = max;
}

/* Completes `h`, given only the count and the running sum of its samples, and those samples while they
 * were AN_HIST_EXACT_MAX or fewer, from `parts` (same range) which together hold the same samples: the
 * minimum, the maximum and, if the samples were too many to keep, the bins. */
static void hist_merge(AnHist *h, AnHist *const *parts, guint n_parts) {
  uint64_t n = 0;
  for (guint p = 0; p < n_parts; p++) {
    const AnHist *q = parts[p];
    g_assert(q->m == h->m && q->min_abs == h->min_abs);
    n += q->n;
    h->min = MIN(h->min, q->min);
    h->max = MAX(h->max, q->max);
  }
  g_assert(n == h->n);
  if (h->n <= AN_HIST_EXACT_MAX) return;
  h->bins = g_new0(uint64_t, 2 * (gsize)h->m + 3);
  for (guint p = 0; p < n_parts; p++) {
    const AnHist *q = parts[p];
    if (q->bins) {
      for (gsize b = 0; b < 2 * (gsize)h->m + 3; b++)
        h->bins[b] += q->bins[b];
    } else {
      for (guint i = 0; i < q->n_exact; i++)
        h->bins[bin_of_exact(h, q->exact[i])]++;
    }
  }
  g_clear_pointer(&h->exact, g_free);
  h->n_exact = h->cap_exact = 0;
}

void an_hist_add(AnHist *h, double x) {
  g_return_if_fail(h != NULL && isfinite(x));
  hist_add_run(h, &x, 1);
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
  return h->bins == NULL;
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
  if (!h->bins) {
    g_autofree double *x = g_memdup2(h->exact, h->n_exact * sizeof(double));
    qsort(x, h->n_exact, sizeof(double), cmp_double);
    return gsl_stats_quantile_from_sorted_data(x, 1, h->n_exact, f);
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
#define TX_HELD 4u /* the pool entry is a held tx (else it is free) */
/* Histogram ranges, in nanoseconds: exact zeros apart, 1 ns .. 3 years. */
#define HIST_MIN_NS 0.5
#define HIST_MAX_NS 1e17
#define NO_INDEX UINT32_MAX
#define OLD_ENTRY 0x80000000u    /* a Tx entry with this bit is in the old pool */
#define POOL_MAX (OLD_ENTRY - 1) /* entries of a pool */
#define YOUNG_MIN 65536          /* arena entries before any tx is moved out */

/* ---- Index: a 64-bit key to a pool entry, open addressing -------------------------------------------- */

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

#define INDEX_MIN_BITS 4

static inline uint64_t index_hash(uint64_t key) { /* splitmix64's finalizer */
  key = (key ^ (key >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  key = (key ^ (key >> 27)) * UINT64_C(0x94d049bb133111eb);
  return key ^ (key >> 31);
}

static void index_init(Index *ix, guint full) {
  ix->full = full;
  ix->bits = INDEX_MIN_BITS;
  ix->slot = g_new0(uint64_t, (gsize)1 << ix->bits);
  ix->used = 0;
}

static void index_release(Index *ix) {
  g_clear_pointer(&ix->slot, g_free);
  ix->used = 0;
}

static inline gsize index_mask(const Index *ix) {
  return ((gsize)1 << ix->bits) - 1;
}

static inline gsize index_home(guint bits, uint64_t slot) {
  return (gsize)((uint32_t)(slot >> 32) >> (32 - bits));
}

/* The slot position of `key`, or -1. */
static inline gssize index_find(const Index *ix, const char *base, gsize stride, uint64_t key) {
  uint64_t h = index_hash(key), tag = h >> 32;
  gsize mask = index_mask(ix);
  for (gsize i = (gsize)(h >> (64 - ix->bits));; i = (i + 1) & mask) {
    uint64_t s = ix->slot[i];
    if (!s) return -1;
    if ((s >> 32) == tag &&
        *(const uint64_t *)(const void *)(base + (gsize)((uint32_t)s - 1) * stride) == key)
      return (gssize)i;
  }
}

static inline uint32_t index_entry(const Index *ix, gssize pos) {
  return (uint32_t)ix->slot[pos] - 1;
}

/* The entry of the first slot on `key`'s probe run whose hash bits match, without reading any entry's key:
 * almost always key's entry if key is present (check it), NO_INDEX if none matches. */
static inline uint32_t index_guess(const Index *ix, uint64_t key) {
  uint64_t h = index_hash(key), tag = h >> 32;
  gsize mask = index_mask(ix);
  for (gsize i = (gsize)(h >> (64 - ix->bits));; i = (i + 1) & mask) {
    uint64_t s = ix->slot[i];
    if (!s) return NO_INDEX;
    if ((s >> 32) == tag) return (uint32_t)s - 1;
  }
}

static void index_place(uint64_t *slot, guint bits, uint64_t s) {
  gsize mask = ((gsize)1 << bits) - 1, i = index_home(bits, s);
  while (slot[i])
    i = (i + 1) & mask;
  slot[i] = s;
}

/* Maps `key` (absent) to `entry`. */
static void index_insert(Index *ix, uint64_t key, uint32_t entry) {
  if (((gsize)ix->used + 1) * 8 > (gsize)ix->full << ix->bits) {
    guint bits = ix->bits + 1;
    g_assert(bits <= 32);
    uint64_t *slot = g_new0(uint64_t, (gsize)1 << bits);
    for (gsize i = 0; i <= index_mask(ix); i++)
      if (ix->slot[i]) index_place(slot, bits, ix->slot[i]);
    g_free(ix->slot);
    ix->slot = slot;
    ix->bits = bits;
  }
  index_place(ix->slot, ix->bits, (index_hash(key) & ~(uint64_t)UINT32_MAX) | ((uint64_t)entry + 1));
  ix->used++;
}

/* Empties slot `pos`, moving later slots of the probe run back so that no lookup stops short. */
static void index_remove_at(Index *ix, gssize pos) {
  gsize mask = index_mask(ix), i = (gsize)pos;
  for (gsize j = (i + 1) & mask; ix->slot[j]; j = (j + 1) & mask) {
    gsize home = index_home(ix->bits, ix->slot[j]);
    if (((j - home) & mask) >= ((j - i) & mask)) { /* i lies on the way from its home to j */
      ix->slot[i] = ix->slot[j];
      i = j;
    }
  }
  ix->slot[i] = 0;
  ix->used--;
}

/* ---- Records ----------------------------------------------------------------------------------------- */

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

/* A growable array of equal entries, named by their index (the array moves when it grows). Free lists of
 * entries, where there are any, are kept by the owner. */
typedef struct {
  char *base;
  gsize size;        /* bytes per entry */
  uint32_t len, cap; /* entries in use or free, allocated */
} Pool;

static uint32_t pool_append(Pool *p) {
  if (p->len == p->cap) {
    g_assert(p->cap < POOL_MAX);
    p->cap = p->cap < 64 ? 64 : p->cap > POOL_MAX / 2 ? POOL_MAX : 2 * p->cap;
    p->base = g_realloc_n(p->base, p->cap, p->size);
  }
  return p->len++;
}

static inline void *pool_at(const Pool *p, uint32_t i) {
  return p->base + (gsize)i * p->size;
}

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
  BatchKey *keys;     /* release_height()'s buffers */
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
  index_init(&t->young_index, 6);
  t->old_free = NO_INDEX;
  index_init(&t->old_index, 7);
  t->senders.size = sizeof(Sender) + (gsize)n_vantages * sizeof(int64_t);
  index_init(&t->sender_index, 6);
  t->pending.size = sizeof(Pending);
  t->pending_free = NO_INDEX;
  index_init(&t->pending_index, 6);
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
static void release_holding(AnTx *t) {
  g_clear_pointer(&t->young.base, g_free);
  t->young.len = t->young.cap = t->cursor = 0;
  index_release(&t->young_index);
  g_clear_pointer(&t->old.base, g_free);
  t->old.len = t->old.cap = 0;
  t->old_free = NO_INDEX;
  index_release(&t->old_index);
  g_clear_pointer(&t->bloom, g_free);
  t->bloom_words = t->bloom_keys = 0;
  t->held = 0;
  g_clear_pointer(&t->pending.base, g_free);
  t->pending.len = t->pending.cap = 0;
  index_release(&t->pending_index);
  g_clear_pointer(&t->incls.base, g_free);
  t->incls.len = t->incls.cap = 0;
  g_clear_pointer(&t->senders.base, g_free);
  t->senders.len = t->senders.cap = 0;
  index_release(&t->sender_index);
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
  release_holding(t);
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

static inline Tx *tx_at(const AnTx *t, uint32_t entry) {
  return entry & OLD_ENTRY ? pool_at(&t->old, entry & ~OLD_ENTRY) : pool_at(&t->young, entry);
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
    const Tx *x = pool_at(&t->old, e);
    if (!(x->flags & TX_HELD)) continue;
    uint64_t h = index_hash(x->id);
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
  uint64_t h = index_hash(id);
  *bloom_word(t, h) |= bloom_bits(h);
  t->bloom_keys++;
}

/* The entry of held tx `id`, or NO_INDEX. */
static inline uint32_t tx_find(const AnTx *t, uint64_t id) {
  gssize pos = index_find(&t->young_index, t->young.base, t->young.size, id);
  if (pos >= 0) return index_entry(&t->young_index, pos);
  if (t->old_index.used == 0) return NO_INDEX;
  uint64_t h = index_hash(id), bits = bloom_bits(h);
  if ((*bloom_word(t, h) & bits) != bits) return NO_INDEX;
  pos = index_find(&t->old_index, t->old.base, t->old.size, id);
  return pos < 0 ? NO_INDEX : index_entry(&t->old_index, pos) | OLD_ENTRY;
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
    t->old_free = ((Tx *)pool_at(&t->old, o))->height;
  else
    o = pool_append(&t->old);
  Tx *y = pool_at(&t->young, e), *x = pool_at(&t->old, o);
  memcpy(x, y, t->old.size);
  index_remove_at(&t->young_index, index_find(&t->young_index, t->young.base, t->young.size, y->id));
  index_insert(&t->old_index, x->id, o);
  bloom_add(t, x->id);
  y->flags = 0;
}

/* A free young entry for a new tx. */
static uint32_t young_take(AnTx *t) {
  for (uint32_t skipped = 0;;) {
    if (t->cursor == t->young.cap) t->cursor = 0;
    uint32_t e = t->cursor;
    Tx *y = e < t->young.cap ? pool_at(&t->young, e) : NULL;
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
        ((Tx *)pool_at(&t->young, i))->flags = 0;
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
  Tx *x = pool_at(&t->young, e);
  *x = (Tx){.id = r->id,
            .sender = r->sender,
            .nonce = r->nonce,
            .created_ns = r->created_ns,
            .flags = TX_HELD | (r->censored ? TX_CENSORED : 0)};
  index_insert(&t->young_index, r->id, e);
  t->held++;
  t->created++;
  if (r->censored) t->censored_created++;
  return x;
}

/* Stops holding the tx at `entry`. */
static void drop_tx(AnTx *t, uint32_t entry) {
  Tx *x = tx_at(t, entry);
  if (entry & OLD_ENTRY) {
    index_remove_at(&t->old_index, index_find(&t->old_index, t->old.base, t->old.size, x->id));
    x->height = t->old_free;
    t->old_free = entry & ~OLD_ENTRY;
  } else {
    index_remove_at(&t->young_index, index_find(&t->young_index, t->young.base, t->young.size, x->id));
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

static Slot *slot_of(AnTx *t, uint32_t height) {
  Slot *sl = &t->ring[height % RING];
  g_assert(sl->height == height);
  return sl;
}

static const int64_t *slot_recv(const AnTx *t, uint32_t height) {
  return &t->ring_recv[(gsize)(height % RING) * t->n];
}

/* Commits the held tx at `entry` to the declared main block at `height` (a second main inclusion is
 * ignored). */
static void commit(AnTx *t, uint32_t entry, uint32_t height) {
  Tx *x = tx_at(t, entry);
  if (x->height != 0) return;
  x->height = height;
  t->committed++;
  if (x->flags & TX_CENSORED) t->censored_committed++;
  Slot *sl = slot_of(t, height);
  if (sl->len == sl->cap) {
    sl->cap = sl->cap ? 2 * sl->cap : 64;
    sl->batch = g_renew(uint32_t, sl->batch, sl->cap);
  }
  sl->batch[sl->len++] = entry;
}

/* Holds an inclusion of the held tx at `entry` for a height not declared yet. */
static void hold_inclusion(AnTx *t, const ObsTxInclusion *in, uint32_t entry) {
  gssize pos = index_find(&t->pending_index, t->pending.base, t->pending.size, in->height);
  uint32_t pe;
  if (pos >= 0) {
    pe = index_entry(&t->pending_index, pos);
  } else {
    pe = t->pending_free;
    if (pe != NO_INDEX)
      t->pending_free = ((Pending *)pool_at(&t->pending, pe))->head;
    else
      pe = pool_append(&t->pending);
    *(Pending *)pool_at(&t->pending, pe) = (Pending){.height = in->height, .head = NO_INDEX};
    index_insert(&t->pending_index, in->height, pe);
  }
  uint32_t ie = t->incl_free;
  if (ie != NO_INDEX)
    t->incl_free = ((Incl *)pool_at(&t->incls, ie))->next;
  else
    ie = pool_append(&t->incls);
  Pending *p = pool_at(&t->pending, pe);
  *(Incl *)pool_at(&t->incls, ie) = (Incl){.block = in->block, .tx = in->tx, .entry = entry, .next = p->head};
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
    if (slot_of(t, in->height)->block == in->block) commit(t, e, in->height);
    return TRUE;
  }
  hold_inclusion(t, in, e);
  return TRUE;
}

/* Commits the txs held as included in `block`, declared at `height`, and drops the height's inclusions.
 * Their order does not matter: release_height() sorts the batch. */
static void settle_pending(AnTx *t, uint32_t height, uint64_t block) {
  gssize pos = index_find(&t->pending_index, t->pending.base, t->pending.size, height);
  if (pos < 0) return;
  uint32_t pe = index_entry(&t->pending_index, pos);
  index_remove_at(&t->pending_index, pos);
  Pending *p = pool_at(&t->pending, pe);
  for (uint32_t ie = p->head; ie != NO_INDEX;) { /* their misses overlap, rather than add up below */
    const Incl *in = pool_at(&t->incls, ie);
    __builtin_prefetch(tx_at(t, in->entry));
    ie = in->next;
  }
  uint32_t ie = p->head;
  while (ie != NO_INDEX) {
    Incl *in = pool_at(&t->incls, ie);
    if (in->block == block) {
      /* The tx it named, if still held (its entry may have been released and reused since). */
      uint32_t e = in->entry;
      const Tx *x = tx_at(t, e);
      if (!(x->flags & TX_HELD) || x->id != in->tx) e = tx_find(t, in->tx);
      if (e != NO_INDEX) commit(t, e, height);
    }
    uint32_t next = in->next;
    in->next = t->incl_free;
    t->incl_free = ie;
    ie = next;
  }
  p->head = t->pending_free;
  t->pending_free = pe;
}

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

/* The propagation delays of a tx if every vantage received it, written to `out`; returns how many. */
static guint propagation_of(const AnTx *t, const Tx *x, double *out) {
  guint first = 0, n = 0;
  for (guint v = 0; v < t->n; v++) {
    if (x->recv_ns[v] == OBS_TIME_NONE) return 0;
    if (x->recv_ns[v] < x->recv_ns[first]) first = v;
  }
  for (guint v = 0; v < t->n; v++)
    if (v != first) out[n++] = (double)(x->recv_ns[v] - x->recv_ns[first]);
  return n;
}

static inline uint64_t sample_hash(uint64_t id) {
  id ^= id >> 30;
  id *= UINT64_C(0xbf58476d1ce4e5b9);
  id ^= id >> 27;
  id *= UINT64_C(0x94d049bb133111eb);
  return id ^ (id >> 31);
}

/* Keeps the commit times of the txs of a batch whose hash falls under the limit (see struct AnTx). */
static void sample_batch(AnTx *t, uint32_t height, const Tx *const *xs, uint32_t n) {
  if (!t->cs_hash) {
    t->cs_hash = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    t->cs_values = g_array_new(FALSE, FALSE, sizeof(double));
    t->cs_limit = UINT64_MAX;
  }
  const guint w = AN_TX_N_K * t->n;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t hsh = sample_hash(xs[i]->id);
    if (hsh >= t->cs_limit) continue;
    g_array_append_val(t->cs_hash, hsh);
    guint base = t->cs_values->len;
    g_array_set_size(t->cs_values, base + w);
    double *out = &g_array_index(t->cs_values, double, base);
    for (guint k = 0; k < AN_TX_N_K; k++) {
      const int64_t *block_ns = height + AN_TX_K[k] <= t->top ? slot_recv(t, height + AN_TX_K[k]) : NULL;
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

/* ---- Order sample --------------------------------------------------------------------------------------
 * The out-of-order figures beyond the streamed one (the study's computation as published, and over every
 * received tx) and the senders' arrival figures need all of a sender's txs at once: under text order "10"
 * sorts before "2", so a tx's verdict can change with any later nonce of its sender. They are computed at
 * an_tx_finalize() from a record of each tx (32 + 8 n bytes) of the senders whose hash falls below a limit;
 * the limit halves, dropping the senders above it, whenever more than AN_TX_ORDER_CAP records are kept. A run
 * of up to AN_TX_ORDER_CAP txs keeps every sender (exact figures); beyond, a deterministic sample of senders,
 * chosen without regard to their txs, whose share is reported (order_sample_sender_share). */

static inline OrdRec *ord_at(const AnTx *t, uint32_t i) {
  return (OrdRec *)(t->ord + (gsize)i * t->ord_size);
}

static void ord_add(AnTx *t, const Tx *x, gboolean committed) {
  gboolean seen = FALSE;
  for (guint v = 0; v < t->n; v++) seen |= x->recv_ns[v] != OBS_TIME_NONE;
  if (!seen || sample_hash(x->sender ^ UINT64_C(0x5e4de7)) >= t->ord_limit) return;
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
      if (sample_hash(ord_at(t, j)->sender ^ UINT64_C(0x5e4de7)) >= t->ord_limit) continue;
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

static int ord_cmp_numeric(const void *pa, const void *pb) {
  const OrdRec *a = pa, *b = pb;
  if (a->sender != b->sender) return a->sender < b->sender ? -1 : 1;
  if (a->nonce != b->nonce) return a->nonce < b->nonce ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static int ord_cmp_text(const void *pa, const void *pb) {
  const OrdRec *a = pa, *b = pb;
  if (a->sender != b->sender) return a->sender < b->sender ? -1 : 1;
  int c = an_tx_nonce_text_cmp(a->nonce, b->nonce);
  if (c) return c;
  return a->id < b->id ? -1 : a->id > b->id;
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

static void ord_finalize(AnTx *t) {
  OrderFigures *f = &t->of;
  f->sender_share = (double)t->ord_limit / 0x1p64;
  if (t->ord_limit == UINT64_MAX) f->sender_share = 1;
  if (!t->ord_len) return;
  qsort(t->ord, t->ord_len, t->ord_size, ord_cmp_numeric);
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
  qsort(t->ord, t->ord_len, t->ord_size, ord_cmp_text);
  for (guint v = 0; v < t->n; v++) {
    ord_count(t, v, TRUE, TRUE, &f->pub_ooo[v], &f->pub_pairs[v]);
    ord_count(t, v, FALSE, TRUE, &f->seen_pub_ooo, &dummy);
  }
  g_clear_pointer(&t->ord, g_free);
  t->ord_len = t->ord_cap = 0;
}

gboolean an_tx_write_commit_samples_csv(const AnTx *t, FILE *out) {
  g_return_val_if_fail(t != NULL && t->finalized && out != NULL, FALSE);
  fputs("k,vantage,commit_s\n", out);
  guint kept = t->cs_hash ? t->cs_hash->len : 0;
  for (guint k = 0; k < AN_TX_N_K; k++)
    for (guint v = 0; v < t->n; v++)
      for (guint j = 0; j < kept; j++) {
        double x = g_array_index(t->cs_values, double, ((gsize)j * AN_TX_N_K + k) * t->n + v);
        if (isnan(x)) continue;
        fprintf(out, "%u,", AN_TX_K[k]);
        an_csv_put_field(out, t->names[v]);
        fprintf(out, ",%.9f\n", x);
      }
  return fflush(out) == 0 && !ferror(out);
}

/* `sender_entry`: probably x's Sender (checked here), or NO_INDEX. */
static void count_out_of_order(AnTx *t, const Tx *x, uint32_t sender_entry) {
  if (sender_entry == NO_INDEX || ((const Sender *)pool_at(&t->senders, sender_entry))->sender != x->sender) {
    gssize pos = index_find(&t->sender_index, t->senders.base, t->senders.size, x->sender);
    sender_entry = pos < 0 ? NO_INDEX : index_entry(&t->sender_index, pos);
  }
  Sender *s;
  if (sender_entry == NO_INDEX) {
    uint32_t e = pool_append(&t->senders);
    s = pool_at(&t->senders, e);
    s->sender = x->sender;
    for (guint v = 0; v < t->n; v++)
      s->max_ns[v] = INT64_MIN;
    index_insert(&t->sender_index, x->sender, e);
  } else {
    s = pool_at(&t->senders, sender_entry);
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
 * (in that order) and its first samples here; hist_merge() does the rest. */
static void count_batch(AnTx *t, uint32_t height, const Tx *const *xs, const uint32_t *sender_entry,
                        uint32_t n) {
  double *d = t->samples;
  for (guint k = 0; k < AN_TX_N_K && height + AN_TX_K[k] <= t->top; k++) {
    const int64_t *block_ns = slot_recv(t, height + AN_TX_K[k]);
    AnHist *all = t->commit[k];
    double sum = all->sum;
    uint64_t count = all->n;
    for (uint32_t i = 0; i < n; i++) {
      const int64_t *r = xs[i]->recv_ns;
      for (guint v = 0; v < t->n; v++)
        if (r[v] != OBS_TIME_NONE && block_ns[v] != OBS_TIME_NONE) {
          double x = (double)(block_ns[v] - r[v]);
          sum += x;
          if (G_UNLIKELY(count++ < AN_HIST_EXACT_MAX)) hist_keep(all, x);
        }
    }
    all->sum = sum;
    all->n = count;
    for (guint v = 0; v < t->n; v++) {
      if (block_ns[v] == OBS_TIME_NONE) continue;
      AnHist *h = t->commit_v[k][v];
      if (G_LIKELY(h->bins)) { /* hist_add_run(), without the copy */
        double hsum = h->sum, min = h->min, max = h->max;
        uint64_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
          if (xs[i]->recv_ns[v] == OBS_TIME_NONE) continue;
          double x = (double)(block_ns[v] - xs[i]->recv_ns[v]);
          hsum += x;
          min = MIN(min, x);
          max = MAX(max, x);
          h->bins[bin_of(h, x)]++;
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
        hist_add_run(h, d, m);
      }
    }
  }
  int64_t mined_ns = t->ring[height % RING].mined_ns;
  for (guint c = 0; c < 2; c++) {
    gsize m = 0;
    for (uint32_t i = 0; i < n; i++)
      if (xs[i]->created_ns != OBS_TIME_NONE && ((xs[i]->flags & TX_CENSORED) != 0) == c)
        d[m++] = (double)(mined_ns - xs[i]->created_ns);
    hist_add_run(t->wait[c], d, m);
  }
  gsize m = 0;
  for (uint32_t i = 0; i < n; i++)
    m += propagation_of(t, xs[i], d + m);
  hist_add_run(t->prop, d, m);
  for (uint32_t i = 0; i < n; i++)
    count_out_of_order(t, xs[i], sender_entry[i]);
  for (uint32_t i = 0; i < n; i++)
    ord_add(t, xs[i], TRUE);
  sample_batch(t, height, xs, n);
}

static inline void prefetch_range(const void *p, gsize size) {
  __builtin_prefetch(p);
  __builtin_prefetch((const char *)p + size - 1);
}

static inline void prefetch_home(const Index *ix, uint64_t key) {
  __builtin_prefetch(&ix->slot[index_hash(key) >> (64 - ix->bits)]);
}

/* Evaluates and drops the txs committed at `height`, by sender and nonce. The senders and the index slots
 * are spread over memory at random: each pass below asks for all the cache lines the next one needs first,
 * so that their misses overlap rather than come one after the other. */
static void release_height(AnTx *t, uint32_t height) {
  Slot *sl = slot_of(t, height);
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
    uint32_t se = t->batch_sender[i] = index_guess(&t->sender_index, t->keys[i].sender);
    if (se != NO_INDEX) prefetch_range(pool_at(&t->senders, se), t->senders.size);
  }
  count_batch(t, height, t->batch_tx, t->batch_sender, n);
  for (uint32_t i = 0; i < n; i++)
    drop_tx(t, t->keys[i].entry);
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
  settle_pending(t, height, block);
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
  /* The rest were never committed; by id, so that sums do not depend on where they were held. The index
   * goes first: it is not needed any more, and the keys take its place. */
  index_release(&t->young_index);
  index_release(&t->old_index);
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
      m += propagation_of(t, tx_at(t, rest[i].entry), d + m);
    hist_add_run(t->prop, d, m);
  }
  for (uint32_t i = 0; i < n; i++)
    ord_add(t, tx_at(t, rest[i].entry), FALSE);
  ord_finalize(t);
  release_holding(t);
  for (guint k = 0; k < AN_TX_N_K; k++)
    hist_merge(t->commit[k], t->commit_v[k], t->n);
  t->finalized = TRUE;
}

uint64_t an_tx_n_held(const AnTx *t) {
  g_return_val_if_fail(t != NULL, 0);
  return t->held;
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
  const OrderFigures *f = &t->of;
  uint64_t pub = 0, pub_pairs = 0;
  json_t *pub_by_vantage = json_object();
  for (guint v = 0; v < t->n; v++) {
    pub += f->pub_ooo[v];
    pub_pairs += f->pub_pairs[v];
    if (f->pub_pairs[v])
      json_object_set_new(pub_by_vantage, t->names[v], json_real((double)f->pub_ooo[v] / (double)f->pub_pairs[v]));
  }
  if (pub_pairs) json_object_set_new(o, "out_of_order_share_as_published", json_real((double)pub / (double)pub_pairs));
  an_json_set_nonempty(o, "out_of_order_share_as_published_by_vantage", pub_by_vantage);
  if (f->seen_pairs) {
    json_t *seen = json_object();
    json_object_set_new(seen, "intended", json_real((double)f->seen_ooo / (double)f->seen_pairs));
    json_object_set_new(seen, "as_published", json_real((double)f->seen_pub_ooo / (double)f->seen_pairs));
    json_object_set_new(o, "out_of_order_seen_share", seen);
  }
  if (f->sender_pairs) {
    json_t *arr = json_object();
    if (f->consec_pairs)
      json_object_set_new(arr, "same_ms_share", json_real((double)f->consec_same_ms / (double)f->consec_pairs));
    json_object_set_new(arr, "txs_per_sender_mean", json_real((double)f->seen_pairs / (double)f->sender_pairs));
    json_object_set_new(arr, "one_tx_sender_share", json_real((double)f->sender_single / (double)f->sender_pairs));
    json_object_set_new(o, "arrival", arr);
  }
  if (f->seen_pairs) json_object_set_new(o, "order_sample_sender_share", json_real(f->sender_share));

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

/* ---- Sink ---- */

static void tx_sink_vantages(gpointer user, const char *const *names, guint n) {
  AnTx **out = user;
  an_tx_free(*out);
  *out = an_tx_new(names, n);
}

static gboolean tx_sink_seen(gpointer user, const ObsTx *tx, const int64_t *recv_ns, GError **error) {
  return an_tx_add_tx_seen(*(AnTx **)user, tx, recv_ns, error);
}

static gboolean tx_sink_inclusion(gpointer user, const ObsTxInclusion *inclusion, GError **error) {
  return an_tx_add_inclusion(*(AnTx **)user, inclusion, error);
}

static gboolean tx_sink_main(gpointer user, uint32_t height, uint64_t block, int64_t mined_ns, const int64_t *recv_ns,
                             GError **error) {
  return an_tx_add_main_block(*(AnTx **)user, height, block, mined_ns, recv_ns, error);
}

static void tx_sink_finish(gpointer user) { an_tx_finalize(*(AnTx **)user); }

void an_tx_sink_init(ObsSink *sink, AnTx **out) {
  *sink = (ObsSink){.user = out,
                    .vantages = tx_sink_vantages,
                    .tx_seen = tx_sink_seen,
                    .tx_inclusion = tx_sink_inclusion,
                    .main_block = tx_sink_main,
                    .finish = tx_sink_finish};
}
