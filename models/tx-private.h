/* tx-private.h: what the parts of the transaction world (tx.c, tx_settings.c, tx_mempool.c, tx_flood.c,
 * tx_gen.c, tx_template.c) share: the TxWorld structure and its helpers. Private to the models library. */
#pragma once

#include "tx.h"
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include "delay.h"
#include "registry.h"

G_BEGIN_DECLS

#define NONE UINT32_MAX

#define N_BINS 1024

#define BIN_WORDS (N_BINS / 64)

#define MAX_INCL 3      /* inclusions stored inline per transaction; more go to a heap array */

#define ANC_DEPTH (TX_SETTLE_DEPTH + 4) /* ancestors checked for inclusion: beyond, txs left the index */

#define RING 128        /* heights kept for the heaviest chain and for block lists (> DECLARE_DEPTH + 2) */

#define DECL_RING 4096  /* declared heights kept for the censorship waits */

#define CENSOR_K 15     /* censorship table: k = 0 .. 14 blocks skipped */

#define MIN_GAS 21000.0

struct InclMore {
  guint n, cap;
  uint64_t *id;
  uint32_t *h;
};

/* 128 bytes, the slab 64-byte aligned: what the template walk and the price index read (id to pred_clean) is
 * one cache line, the rest the other. */
typedef struct {
  uint64_t id; /* 0: free slot */
  double price; /* gwei */
  uint32_t bprev, bnext; /* price bin list */
  uint32_t sprev, snext; /* the sender's live transactions in nonce order */
  uint32_t sender;
  uint32_t gas_limit;
  uint32_t defer_gen, sel_gen;
  uint32_t gas_used;
  /* What the template walk needs of the predecessor (sprev), kept here so that it need not read that one's
   * entry: the build that selected it (its sel_gen, set when it is selected), and, in pred_clean below,
   * whether it is in no block (n_incl 0), which leaves this one out of the walk's index (visible). */
  uint32_t pred_sel_gen;
  uint16_t bin;
  uint8_t type, censored, in_index, n_incl;
  uint8_t pred_clean; /* sprev != NONE and its n_incl is 0 */
  uint8_t visible;    /* in the template walk's index (VisLink): in_index and not pred_clean */
  uint64_t nonce;
  int64_t created;
  uint64_t incl[MAX_INCL]; /* blocks that include it (every one: a missing one would let a pool include it twice) */
  uint32_t incl_h[MAX_INCL];
  uint32_t bytes;
  struct InclMore *more;   /* beyond MAX_INCL (forks of forks, selfish branches): rare */
} TxE;

G_STATIC_ASSERT(sizeof(TxE) == 128);

typedef struct {
  uint32_t prev, next;
} VisLink;

typedef struct {
  uint64_t next_nonce;
  uint32_t head, tail;
  uint32_t skip_gen;
} Sender;

typedef struct {
  uint64_t id;
  int64_t created;
  uint32_t idx;
  uint32_t gas_used;
  uint32_t bytes;
  uint8_t censored;
} TxRef;

typedef struct {
  uint64_t block;
  uint32_t height;
  guint n;
  TxRef *refs;
} BlockTxs;

typedef struct {
  SimTime t;       /* next transaction */
  uint32_t sender;
  uint32_t left;
  uint32_t total;  /* transactions of the session */
  uint32_t node;   /* entry node (a burst: of its first part) */
  guint16 region;
  guint8 burst, n_entries;
  uint32_t entry_node[TX_MAX_ENTRY_NODES]; /* a burst's entry nodes, their regions and trees */
  guint16 entry_region[TX_MAX_ENTRY_NODES];
  uint32_t entry_tree[TX_MAX_ENTRY_NODES];
  struct AcctProp *ap; /* the propagation state its transactions follow */
} Session;

/* The propagation state of an account's transactions: with peer_fifo, one per account (Geth holds a nonce gap
 * per account, whichever session sent the previous nonce), kept while a session of the account is live or a
 * reception of its transactions may still be ahead (`busy`); without, one per session (the earlier model). */
typedef struct AcctProp {
  int64_t *prev;   /* region: per target previous reception and last hop (2 T); flood: per node availability */
  int64_t *links;  /* flood with peer_fifo: the connections (txw_links_new) */
  int64_t busy;    /* the latest reception or arrival its transactions have so far */
  uint32_t account;
  guint refs;      /* live sessions using it */
  gboolean has_prev, retired, in_list; /* in_list: in w->retired */
} AcctProp;

typedef struct {
  int64_t *d;      /* region_samples x T delays */
  int64_t *hop;    /* last hops */
  guint n;
} RegionSamples;

/* The shortest-path searches' priority queue (tx_flood.c): a 4-ary min-heap of uint64 keys in a plain array
 * (half the depth of a binary heap, the four children adjacent: 32 bytes; inline, no call per push or pop).
 * The searches' keys are distinct (time << 22 | node), so any correct min-queue pops them in the same order. */
typedef struct {
  uint64_t *a;
  guint len, cap;
} TxwHeap;

static inline void txw_heap_push(TxwHeap *h, uint64_t key) {
  if (G_UNLIKELY(h->len == h->cap)) {
    h->cap = MAX(64, 2 * h->cap);
    h->a = g_renew(uint64_t, h->a, h->cap);
  }
  uint64_t *a = h->a;
  guint i = h->len++;
  while (i > 0 && a[(i - 1) / 4] > key) { /* move the hole up */
    a[i] = a[(i - 1) / 4];
    i = (i - 1) / 4;
  }
  a[i] = key;
}

/* The least key, removed; the heap must not be empty. */
static inline uint64_t txw_heap_pop(TxwHeap *h) {
  uint64_t *a = h->a;
  uint64_t top = a[0], x = a[--h->len];
  guint n = h->len, i = 0;
  for (;;) { /* move the hole at i down to where the last key goes */
    guint c = 4 * i + 1;
    if (c >= n) break;
    guint m = c;
    guint end = MIN(c + 4, n);
    for (guint k = c + 1; k < end; k++)
      if (a[k] < a[m]) m = k;
    if (a[m] >= x) break;
    a[i] = a[m];
    i = m;
  }
  if (n) a[i] = x;
  return top;
}

/* A transaction as the generator drew it (tx_gen.c), before it takes a slot, an id and a nonce: its
 * receptions are in the ring's arrays beside it (n_pools arrivals, n_vantages receptions). */
typedef struct {
  SimTime created;
  double price;
  uint32_t sender, gas_limit, gas_used, bytes;
  uint16_t bin;
  uint8_t type;
  uint32_t never; /* receptions that never happen (every path dropped) */
} GenTx;

/* Transactions drawn ahead of the engine (tx_world_side_work), in creation order: the generator's state
 * (sessions, streams, accounts' propagation, flood scratch) is touched only under `lock`, by whoever draws the
 * next one; only the engine's thread takes them (txw_advance). */
#define GEN_CAP 1024
typedef struct {
  GenTx *tx;
  int64_t *arrive, *recv; /* GEN_CAP x n_pools, GEN_CAP x n_vantages */
  _Alignas(64) guint64 head; /* drawn (release, under the lock) */
  _Alignas(64) guint64 tail; /* taken (release, the engine's thread) */
  _Alignas(64) pthread_mutex_t lock; /* pthreads: ThreadSanitizer sees through them */
  int closed; /* tx_world_finish: no drawing ahead any more (under the lock) */
} GenRing;

struct TxWorld {
  TxConfig cfg; /* shallow copy; cfg->censors points into the scenario's */
  const TxNetView *net;
  TxNetView netc;
  double gas_limit, header_bytes;
  guint n_pools, n_vantages, n_targets;
  const guint *miner_pool;
  guint n_miners;
  double censor_alpha;
  TxBlockLookup lookup;
  gconstpointer lookup_user;
  SimRng rng;
  SimRng prop_rng; /* flood: the per-transaction floods' latency draws (their own stream, so that the sessions
                    * do not depend on how the transactions propagate) */
  uint64_t seed;
  ObsSink sink; /* where the observations go (members NULL: dropped) */

  /* generator */
  GenRing ring;
  SimTime next_session;
  GArray *sessions;     /* Session; a binary heap by t */
  uint64_t next_id;
  uint64_t created;
  double cum_class[TX_MAX_CLASSES];
  Sender *senders;

  /* slab */
  TxE *tx;
  int64_t *arrive; /* per slot: n_pools arrival times */
  uint32_t cap, free_head;
  uint32_t *free_next;
  guint64 live;

  /* price index: every transaction in the mempool (in_index), by bin, in txw_better order within a bin
   * (eviction walks it; the template walks the index below) */
  uint32_t bin_head[N_BINS], bin_tail[N_BINS];
  uint64_t bin_used[BIN_WORDS];
  guint64 in_index, index_peak, evicted;
  /* The template walk's index: the same order, only the transactions that can be candidates before their
   * predecessor is picked (TxE.visible: no predecessor, or one included in some block). The others (94% of
   * the walk's candidates on pools-2019, each a cache miss) join the candidates when their predecessor is
   * picked (build_template). Links per slot, apart from the slab. */
  VisLink *vlink;
  uint32_t vbin_head[N_BINS], vbin_tail[N_BINS];
  uint64_t vbin_used[BIN_WORDS];

  /* building */
  uint32_t gen;
  GArray *heap;    /* uint32 slab idx, local max-heap by price */
  GArray *sel;     /* TxRef of the block being built */
  GArray *joined;  /* uint64 ids: blocks that joined the heaviest chain (scratch) */
  uint64_t *cache_txset; /* per miner: last template */
  GArray **cache;  /* per miner: TxRef */
  GHashTable *blocks; /* block id -> BlockTxs* */
  GArray *by_height[RING]; /* block ids per height % RING */

  /* heaviest chain */
  uint64_t best_ids[RING];
  uint32_t best_h;
  uint32_t settled_h, declared_h;
  GArray *declared; /* uint64 id per declared height (index = height) */
  int64_t decl_mined[DECL_RING];
  guint decl_pool[DECL_RING];
  int64_t *recv;    /* n_vantages scratch */
  int64_t *tdelay, *thop; /* n_targets scratch */

  /* propagation */
  RegionSamples *regions;
  guint32 *region_nodes_off, *region_nodes;
  int64_t *dist, *hop;
  guint32 *dj_epoch;
  guint32 epoch;
  TxwHeap djheap;   /* uint64 keys: time << 22 | node ... see txw_dj_push */
  GHashTable *acct_prop; /* peer_fifo: account + 1 -> AcctProp* */
  GArray *retired;       /* AcctProp* without live sessions, freed once `busy` is past */
  guint64 lists_dropped; /* flood: lists dropped at a full per-peer queue */
  guint64 never_received; /* receptions (vantage points and pools) that never happen (every path dropped) */

  /* results */
  guint64 *pool_included, *pool_censored_included, *pool_blocks;
  guint64 censored_skip[CENSOR_K + 1], censored_committed;
  guint64 uncensored_wait_blocks[CENSOR_K + 1], uncensored_committed;
  guint64 finality_mismatches, deep_reorgs;
  gboolean finished;
  /* EMC logs (tx_world_keep_for_logs) */
  gboolean keep;
  GArray *log_txs;     /* LogTx */
  GArray *log_recv;    /* int64 x n_vantages per LogTx */
  GHashTable *log_blocks; /* uint64 block id -> GArray of uint64 tx ids */
};

typedef struct {
  uint64_t id, sender, nonce;
  uint8_t type;
  uint32_t gas_limit, bytes;
  double price;
} LogTx;

int txw_cmp_u64(const void *a, const void *b);
uint32_t txw_slot_new(TxWorld *w);
void txw_slot_free(TxWorld *w, uint32_t i);
guint16 txw_price_bin(double gwei);
void txw_index_insert(TxWorld *w, uint32_t i);
void txw_index_remove(TxWorld *w, uint32_t i);
void txw_sender_unlink(TxWorld *w, uint32_t i);
/* Puts slot i in the template walk's index, or takes it out, as TxE.visible should now be. */
void txw_vis_update(TxWorld *w, uint32_t i);
int txw_vis_bin_at_or_below(const TxWorld *w, int b);
void txw_evict_one(TxWorld *w);
void txw_dj_push(TxwHeap *h, int64_t t, guint32 v);
int64_t txw_flood(TxWorld *w, SimRng *rng, guint32 src, double bytes, int64_t *avail, int64_t t0, int64_t *links);
int64_t *txw_links_new(const TxWorld *w);
void txw_acct_prop_free(gpointer ap);
/* tx_world_finish: no drawing ahead from now on (waits for a draw in progress). */
void txw_close_ahead(TxWorld *w);
int64_t txw_link_send(int64_t *l, int64_t fwd, int64_t lat, int64_t s, int64_t max_q, gboolean batch,
                      guint64 *dropped);
void txw_flood_targets(const TxWorld *w, int64_t *d, int64_t *hop);
void txw_sample_regions(TxWorld *w);
SimTime txw_exp_ns(SimRng *r, double mean_s);
double txw_session_txs(const TxParams *p);
void txw_advance(TxWorld *w, SimTime t);

static inline gboolean txw_better(const TxE *a, const TxE *b) {
  return a->price > b->price || (a->price == b->price && a->id < b->id);
}

G_END_DECLS
