/* relay_btc.c: Bitcoin Core's inv -> getdata -> block relay with compact blocks (BIP 152), as SimBlock
 * models it, computed label-setting like relay_geth (relay.h). Its settings and SimBlock's failure-size tables
 * are in relay_btc_tables.c.
 *
 * Rules (SimBlock's Node.receiveMessage / sendNextBlockMessage, dsg-titech/simblock; BENCH.md):
 *  - A node that has the block validates it for `processing_ms`, then sends an inv to every peer that has
 *    not yet asked for it (a peer that has asked, or the miner, ignores invs: SimBlock's downloadingBlocks
 *    check). A miner sends its own block's invs at once. With `processing_in_message` (SimBlock) the
 *    processing is instead part of each block message's delay at the sender, and the receiver relays at once.
 *  - The first inv a node receives makes it send getdata back to that peer; later invs are ignored.
 *  - Each node uploads one block message at a time, in the order the requests arrived (a FIFO queue). A
 *    message to u takes bytes * 8 / min(up, down) (net_transfer_ns, with the inter-region cap if the
 *    scenario sets one; SimBlock has none) plus the latency; with `upload_until_arrival` the next upload
 *    starts only when it has arrived (SimBlock starts the next one in BlockMessageTask.run, at arrival),
 *    else when it has left.
 *  - Between two compact-block nodes the message is a compact block of `compact_bytes`; the receiver fails
 *    to reconstruct it with probability `compact_fail` (`churn_compact_fail` for churning receivers), asks
 *    for the missing part (getblocktxn, one more latency) and the sender queues the rest: `fail_share` x the
 *    block, or with `fail_size` "simblock" the block x a share drawn from SimBlock's failure-size table of
 *    the sender (mostly 0.01; see simblock_fail_share).
 *  - inv, getdata and getblocktxn take the latency plus `message_ms` (SimBlock adds 10 ms to each).
 *
 * Departures from SimBlock, all deliberate: links are idle at the start of each block (relay.h), where
 * SimBlock's queues carry over between blocks; every block spreads to every node, where SimBlock's nodes
 * relay only a block that becomes their head (a competing block of the same height stops one hop after the
 * nodes that had the other first); times are in ns, where SimBlock rounds latencies and transfers to whole
 * ms; a source ignores invs that arrive before its own time. With the defaults (`processing_in_message`
 * false, `fail_size` "share" with `fail_share` 1) processing is paid once per hop and the whole block
 * follows a failed compact block; the bench scenarios set SimBlock's rules.
 *
 * Who uses compact blocks, and who churns, is a trait of the node for the whole run (as SimBlock draws
 * useCBR and isChurnNode once per node): a SplitMix64 hash of (topology seed, node, trait) compared with
 * the share, so it does not depend on the blocks or on the order of anything. Reconstruction failures are
 * drawn from the block's stream, in the order of the label-setting steps.
 *
 * Label setting: steps (time, kind, node) in a bucket queue: HAVE (the node has the block), INV (the node's
 * best first inv so far; stale entries are skipped) and REQ (the node's getdata or getblocktxn reaches the
 * sender of its first inv). Every step schedules only later steps, so processing them in time order gives
 * each node exactly what it knew by then, and the REQ steps at one uploader come in arrival order: its FIFO.
 * An inv that cannot beat the receiver's best first inv even at the jitter model's floor is not drawn.
 *
 * Joining nodes (net.h) that are not synced when the block leaves its first source take no part: their
 * gate starts at GATE_ASKED, so invs to them are neither counted nor drawn.
 */
#include <math.h>
#include <string.h>

#include "relay_btc-private.h"

static SimTime ms(double v) {
  return sim_time_from_s(v / 1e3);
}

static SimTime btc_import_ns(const void *params, double gas_used) {
  const BtcParams *p = params;
  (void)gas_used;
  return p->processing_in_message ? 0 : ms(p->processing_ms);
}

/* The block's random numbers: a RelayMix stream (relay.h: SplitMix64) keyed by one word of the block's
 * stream. One word costs a few instructions where the block stream's Philox4x64-10 costs about 60 (13% of
 * workload B went to its refills). Jitter models other than "pareto", "none" and fixed delays draw from the
 * block stream itself. */
typedef struct {
  RelayMix m;
  SimRng *slow;
} BtcRng;

static inline double brng_uniform(BtcRng *r) {
  return relay_mix_uniform_pos(&r->m);
}

static inline SimTime brng_latency(BtcRng *r, const NetLatencyDraw *d) {
  if (G_LIKELY(d->kind == NET_DRAW_PARETO))
    return net_pareto_table_of_u(&d->pareto, d->scale_ns, d->inv_shape, brng_uniform(r)) + d->host_ns;
  return net_latency_draw(d, r->slow);
}

/* The share of the block a sender sends after a failed compact block under fail_size "simblock": one
 * uniform draw of a table index, as SimBlock (the control table is constant, but its index is drawn all the
 * same, so both kinds of sender use one random number). */
static double simblock_fail_share(gboolean churn_sender, BtcRng *rng) {
  if (!churn_sender) {
    (void)relay_mix_below(&rng->m, BTC_CONTROL_FAIL_ENTRIES);
    return 0.01;
  }
  return relay_btc_churn_fail_share(relay_mix_below(&rng->m, BTC_CHURN_FAIL_ENTRIES));
}

/* ---- per-node traits: a stable hash of (seed, node, trait) ---- */

enum { TRAIT_COMPACT = 1, TRAIT_CHURN = 2 };

static inline guint64 splitmix64(guint64 x) {
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

static double trait_uniform(guint64 seed, guint32 node, guint64 trait) {
  guint64 h = splitmix64(seed ^ splitmix64(((guint64)node << 8) | trait));
  return (double)(h >> 11) * 0x1.0p-53;
}

/* ---- working state ---- */

enum { ST_ASKED = 1, ST_DONE = 2, ST_SOURCE = 4, ST_RETRY = 8 };
#define GATE_ASKED G_MININT64

typedef struct { /* reset for each block (btc_propagate) */
  guint32 flags;       /* ST_*: ASKED (requested the block, or a source: ignores invs), DONE (HAVE processed),
                        * RETRY (its pending request is a getblocktxn) */
  guint32 inv_from;    /* sender of its best first inv so far */
  guint32 in_cls;      /* link class of the edge inv_from -> node (the block comes this way) */
  guint32 inv_cls;     /* link class of the edge node -> inv_from (getdata goes this way) */
  SimTime have;        /* the block is complete here (full block arrived or compact block rebuilt) */
  SimTime first_push;  /* first block or compact block message */
  SimTime announce;    /* best first inv so far; final once ASKED */
  SimTime upload_free; /* its upload link takes the next queued message from then on */
} BtcNode;

/* A step is one 64-bit key, as in relay.c: time since the block's first source (40 bits of ns: 18 minutes;
 * later steps are dropped, as never), kind (2 bits), node (22 bits). A REQ step is named by the requesting
 * node: it has one request in flight at a time, to the sender of its first inv. Keys order steps by
 * (time, kind, node), so ties never depend on insertion order. */
enum { K_HAVE = 0, K_INV = 1, K_REQ = 2 };
#define STEP_NODE_BITS 22
#define STEP_LOW_BITS (STEP_NODE_BITS + 2)
#define STEP_TIME_MAX ((UINT64_C(1) << 40) - 1)

typedef struct {
  guint64 *v;
  guint32 len, cap;
} StepBucket;

/* The step queue: fine buckets of 2^18 ns (262 us) of step time, grouped by 64 into coarse buckets (16.8
 * ms), 128 of those (a window of 2.1 s). Wider fine buckets hold more keys to sort when reached (2.1 ms
 * ones cost workload C 14% more instructions). */
#define Q_WIDTH_BITS 18
#define Q_SHIFT (STEP_LOW_BITS + Q_WIDTH_BITS)
#define Q_FINE 64
#define Q_CSHIFT (Q_SHIFT + 6)
#define Q_COARSE 128

/* Edges with the same latency mean, floor, host overhead and bandwidth form a link class (SimBlock's
 * topologies have 36, one per region pair): latency draws then need no per-edge work beyond the class
 * (net_latency_draw() gives exactly what net_edge_latency() gives, from the same random numbers), and the
 * transfer times of the block and of its compact form are computed once per class and block. */
typedef struct {
  SimTime floor_ns;
  double tx_ns_per_byte; /* net_edge_transfer_ns()'s factor */
  SimTime full_ns;       /* transfer of the block being relayed, and of its compact block */
  SimTime compact_ns;
  NetLatencyDraw draw;
} BtcClass;

typedef struct {
  guint32 n_nodes;
  guint64 n_edges;
  BtcNode *node;
  /* The topology packed for the kernel (built on first use for a topology and jitter model): per edge its
   * head, its class and its reverse edge's class in one word, to | cls << 32 | rev_cls << 48, when there
   * are at most 2^16 classes (`narrow`; SimBlock's topologies have 36); else to | cls << 32, and the
   * reverse classes in rev_cls. */
  const NetTopology *packed_topo;
  const void *packed_jitter, *packed_jitter_params;
  guint64 *edge;
  guint32 *rev_cls;
  gboolean narrow;
  BtcClass *cls;
  SimTime *cls_floor; /* cls[c].floor_ns, dense: the inv scan reads it for most peers */
  guint32 n_cls;
  /* Per node, what an inv sender must beat: SIM_TIME_MAX (no inv yet), the best first inv so far, or
   * GATE_ASKED (asked or a source: ignores invs). A dense copy of the two fields every inv scan reads, so
   * the scan touches 8 bytes per peer; reset for each block. */
  SimTime *gate;
  /* asked[u] != 0: node u ignores invs (gate[u] == GATE_ASKED). Most peers a node scans (86% in workload B)
   * have asked already, and this byte array (10 KB at 10 000 nodes) answers that from L1 where gate[] (80
   * KB) does not; a byte test is two instructions fewer per peer than the bitmap it replaced. */
  guint8 *asked;
  /* The step queue (see "a bucket queue of step keys" below). */
  StepBucket coarse[Q_COARSE]; /* keys of the coarse buckets after the current one, unsorted */
  guint64 cmask[Q_COARSE / 64]; /* bit i: coarse[i] has keys */
  guint64 q_base;               /* coarse bucket number (key >> Q_CSHIFT) of coarse[0] */
  guint32 q_cur_c;              /* the current coarse bucket (valid with q_has_cur) */
  gboolean q_has_cur;           /* its keys are in the fine buckets */
  StepBucket fine[Q_FINE];      /* the current coarse bucket's keys, by fine bucket */
  guint64 fmask;                /* bit i: fine[i] has keys */
  guint32 q_cur_f;              /* the current fine bucket: every earlier one is empty */
  gboolean q_cur_sorted;        /* fine[q_cur_f] is sorted, largest first */
  gboolean q_whole;             /* the current coarse bucket is sorted as a whole in coarse[q_cur_c] */
  StepBucket *run;              /* the sorted keys being popped (largest first): fine[q_cur_f] or that */
  StepBucket q_over;            /* keys beyond the window of Q_COARSE coarse buckets */
  SimTime t0;
  /* Traits cache: valid for (seed, compact_share, churn_share). */
  guint8 *trait;
  gboolean trait_valid;
  guint64 trait_seed;
  double trait_compact, trait_churn;
  /* The stop's groups seen (a bit each), room for seen_words words. */
  guint64 *seen;
  guint seen_words;
} BtcWork;

static void btc_work_free(gpointer data) {
  BtcWork *b = data;
  if (!b) return;
  g_free(b->node);
  g_free(b->gate);
  g_free(b->asked);
  g_free(b->seen);
  g_free(b->edge);
  g_free(b->rev_cls);
  g_free(b->cls);
  g_free(b->cls_floor);
  for (guint i = 0; i < Q_COARSE; i++)
    g_free(b->coarse[i].v);
  for (guint i = 0; i < Q_FINE; i++)
    g_free(b->fine[i].v);
  g_free(b->q_over.v);
  g_free(b->trait);
  g_free(b);
}

static BtcWork *btc_work(RelayWork *w, const NetTopology *t) {
  BtcWork *b = relay_work_ext(w, &relay_btc);
  if (b && b->n_nodes == t->n_nodes && b->n_edges == t->n_edges) return b;
  b = g_new0(BtcWork, 1);
  b->n_nodes = t->n_nodes;
  b->n_edges = t->n_edges;
  b->node = g_new0(BtcNode, MAX(t->n_nodes, 1));
  b->gate = g_new(SimTime, MAX(t->n_nodes, 1));
  b->asked = g_new0(guint8, MAX(t->n_nodes, 1));
  b->trait = g_new0(guint8, MAX(t->n_nodes, 1));
  relay_work_set_ext(w, &relay_btc, b, btc_work_free);
  return b;
}

static void update_traits(BtcWork *b, const BtcParams *p, const NetTopology *t) {
  if (b->trait_valid && b->trait_seed == t->seed && b->trait_compact == p->compact_share &&
      b->trait_churn == p->churn_share)
    return;
  for (guint32 v = 0; v < t->n_nodes; v++)
    b->trait[v] = (trait_uniform(t->seed, v, TRAIT_COMPACT) < p->compact_share ? TRAIT_COMPACT : 0) |
                  (trait_uniform(t->seed, v, TRAIT_CHURN) < p->churn_share ? TRAIT_CHURN : 0);
  b->trait_valid = TRUE;
  b->trait_seed = t->seed;
  b->trait_compact = p->compact_share;
  b->trait_churn = p->churn_share;
}

/* Packs `t` into b's edge and class tables for gp's jitter model, unless already done for them. */
static void pack_topology(BtcWork *b, const NetGeoParams *gp, const NetTopology *t) {
  if (b->packed_topo == t && b->packed_jitter == gp->jitter.model &&
      b->packed_jitter_params == gp->jitter.params)
    return;
  g_free(b->edge);
  g_free(b->rev_cls);
  g_free(b->cls);
  b->edge = g_new(guint64, MAX(t->n_edges, 1));
  b->rev_cls = g_new(guint32, MAX(t->n_edges, 1));
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(RelayClassKey));
  GHashTable *index = g_hash_table_new_full(relay_class_key_hash, relay_class_key_equal, g_free, NULL);
  for (guint64 e = 0; e < t->n_edges; e++) {
    RelayClassKey k = {.mean_ns = t->lat_mean_ns[e],
                     .floor_ns = t->lat_floor_ns[e],
                     .host_ns = t->lat_host_ns ? t->lat_host_ns[e] : 0,
                     .tx_ns_per_byte = t->tx_ns_per_byte[e]};
    gpointer hit;
    guint32 c;
    if (g_hash_table_lookup_extended(index, &k, NULL, &hit)) {
      c = GPOINTER_TO_UINT(hit);
    } else {
      c = keys->len;
      g_array_append_val(keys, k);
      g_hash_table_insert(index, g_memdup2(&k, sizeof k), GUINT_TO_POINTER(c));
    }
    b->edge[e] = (guint64)t->adj[e] | (guint64)c << 32;
  }
  g_hash_table_destroy(index);
  for (guint64 e = 0; e < t->n_edges; e++)
    b->rev_cls[e] = (guint32)(b->edge[t->rev[e]] >> 32);
  b->narrow = keys->len <= (1u << 16);
  if (b->narrow)
    for (guint64 e = 0; e < t->n_edges; e++)
      b->edge[e] |= (guint64)b->rev_cls[e] << 48;
  b->n_cls = keys->len;
  g_free(b->cls_floor);
  b->cls = g_new0(BtcClass, MAX(keys->len, 1));
  b->cls_floor = g_new0(SimTime, MAX(keys->len, 1));
  for (guint32 c = 0; c < keys->len; c++) {
    const RelayClassKey *k = &g_array_index(keys, RelayClassKey, c);
    b->cls[c].floor_ns = b->cls_floor[c] = k->floor_ns;
    b->cls[c].tx_ns_per_byte = k->tx_ns_per_byte;
    net_latency_draw_init(&b->cls[c].draw, gp, k->mean_ns, k->host_ns);
  }
  g_array_free(keys, TRUE);
  b->packed_topo = t;
  b->packed_jitter = gp->jitter.model;
  b->packed_jitter_params = gp->jitter.params;
}

/* Transfer time of `bytes` at a class's bandwidth: net_edge_transfer_ns() for any edge of the class. */
static inline SimTime class_transfer_ns(const BtcClass *k, double bytes) {
  double ns = bytes * k->tx_ns_per_byte;
  return ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
}

static inline BtcNode *bnode(BtcWork *b, guint32 v) {
  return &b->node[v];
}

/* ---- a bucket queue of step keys ----
 * Label setting pops the smallest pending key, and every step only schedules steps at or after its own
 * time. Keys go to coarse buckets of 16.8 ms of step time, in a window of Q_COARSE of them from q_base;
 * when a pop reaches a coarse bucket its keys are spread over 64 fine buckets of 262 us, and each fine
 * bucket is sorted when reached (a few keys: the latency jitter spreads the steps). A key for the current
 * coarse bucket goes straight to its fine bucket, in order if that is the current one. Keys beyond the
 * window wait in q_over until the window is empty, which then moves to the smallest of them. So every pop
 * returns the smallest key queued: the order is exactly that of the keys, (time, kind, node), and does not
 * depend on the queue. Pushes append to one of a few coarse buckets (their tails stay in cache), where one
 * level of 8192 fine buckets made each push a cache miss; and it takes a fraction of the instructions of the
 * radix heap before it, whose keys moved down buckets and were scanned for minima repeatedly. */

static inline void bucket_add(StepBucket *bk, guint64 key) {
  if (G_UNLIKELY(bk->len == bk->cap)) {
    bk->cap = bk->cap ? 2 * bk->cap : 8;
    bk->v = g_renew(guint64, bk->v, bk->cap);
  }
  bk->v[bk->len++] = key;
}

/* A key into the sorted run being popped, in order (largest first). */
static inline void run_insert(StepBucket *bk, guint64 key) {
  bucket_add(bk, key);
  guint32 j = bk->len - 1;
  for (; j > 0 && bk->v[j - 1] < key; j--)
    bk->v[j] = bk->v[j - 1];
  bk->v[j] = key;
}

/* A key of the current coarse bucket into its fine bucket. */
static inline void fine_put(BtcWork *b, guint64 key) {
  guint32 f = (guint32)(key >> Q_SHIFT) & (Q_FINE - 1); /* never below q_cur_f: steps do not go back */
  StepBucket *bk = &b->fine[f];
  bucket_add(bk, key);
  if (G_UNLIKELY(f == b->q_cur_f && b->q_cur_sorted)) { /* the bucket being popped: in order, largest first */
    guint32 j = bk->len - 1;
    for (; j > 0 && bk->v[j - 1] < key; j--)
      bk->v[j] = bk->v[j - 1];
    bk->v[j] = key;
    return;
  }
  b->fmask |= UINT64_C(1) << f;
}

/* A coarse bucket with at most this many keys is sorted as a whole when reached (and popped from there),
 * not spread over the fine buckets: for the small ones one sort costs less than the spreading and the many
 * small sorts. Measured (callgrind, all of a run): 16.8 ms buckets of up to 24 / 32 / 48 / 96 / 200 keys
 * whole gave workload B 2.101 / 2.098 / 2.101 / 2.119 / 2.164 G instructions (2.137 with none) and C 2.165 /
 * 2.161 / 2.162 / 2.166 / 2.172 G. */
#define Q_WHOLE_MAX 32

static inline void queue_put(BtcWork *b, guint64 key) {
  guint64 i = (key >> Q_CSHIFT) - b->q_base;
  if (b->q_has_cur && i == b->q_cur_c) {
    if (b->q_whole)
      run_insert(b->run, key);
    else
      fine_put(b, key);
    return;
  }
  if (G_UNLIKELY(i >= Q_COARSE)) {
    bucket_add(&b->q_over, key);
    return;
  }
  bucket_add(&b->coarse[i], key);
  b->cmask[i >> 6] |= UINT64_C(1) << (i & 63);
}

static void heap_push(BtcWork *b, SimTime t, guint kind, guint32 node) {
  guint64 dt = (guint64)(t - b->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  queue_put(b, dt << STEP_LOW_BITS | (guint64)kind << STEP_NODE_BITS | node);
}

static inline void insertion_sort_desc(guint64 *v, guint32 n) {
  for (guint32 i = 1; i < n; i++) {
    guint64 x = v[i];
    guint32 j = i;
    for (; j > 0 && v[j - 1] < x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

/* Sorts keys largest first: insertion sort for a few, else quicksort (median of three; recursion on the
 * smaller part, so the depth stays logarithmic) down to runs of a few. Inline comparisons: qsort()'s
 * callback made the large buckets of workload C cost several times more. Keys are distinct (they name their
 * node). */
static void sort_desc(guint64 *v, guint32 n) {
  while (n > 24) {
    guint64 a = v[0], b = v[n / 2], c = v[n - 1];
    guint64 pivot = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    guint32 i = 0, j = n - 1;
    for (;;) { /* Hoare partition: v[0..j] >= pivot >= v[j+1..n-1] */
      while (v[i] > pivot)
        i++;
      while (v[j] < pivot)
        j--;
      if (i >= j) break;
      guint64 t = v[i];
      v[i++] = v[j];
      v[j--] = t;
    }
    guint32 left = j + 1;
    if (left < n - left) {
      sort_desc(v, left);
      v += left;
      n -= left;
    } else {
      sort_desc(v + left, n - left);
      n = left;
    }
  }
  insertion_sort_desc(v, n);
}

/* Moves the window to the smallest key beyond it; only when every bucket is empty. */
static void queue_rebase(BtcWork *b) {
  StepBucket *o = &b->q_over;
  guint64 m = o->v[0];
  for (guint32 k = 1; k < o->len; k++)
    m = MIN(m, o->v[k]);
  b->q_base = m >> Q_CSHIFT;
  b->q_has_cur = FALSE;
  guint32 keep = 0, n = o->len;
  o->len = 0;
  for (guint32 k = 0; k < n; k++) {
    guint64 key = o->v[k];
    if ((key >> Q_CSHIFT) - b->q_base < Q_COARSE)
      queue_put(b, key);
    else
      o->v[keep++] = key;
  }
  o->len = keep;
}

/* Makes the next non-empty coarse bucket after the current one current, its keys spread over the fine
 * buckets; FALSE if there is none in the window. */
static gboolean queue_next_coarse(BtcWork *b) {
  guint32 from = b->q_has_cur ? b->q_cur_c + 1 : 0;
  for (guint32 w = from >> 6; w < Q_COARSE / 64; w++) {
    guint64 bits = w == from >> 6 ? b->cmask[w] >> (from & 63) << (from & 63) : b->cmask[w];
    if (!bits) continue;
    guint32 c = w * 64 + (guint32)__builtin_ctzll(bits);
    b->q_cur_c = c;
    b->q_has_cur = TRUE;
    b->cmask[w] &= ~(UINT64_C(1) << (c & 63));
    StepBucket *cb = &b->coarse[c];
    if (cb->len <= Q_WHOLE_MAX) {
      if (cb->len <= 24)
        insertion_sort_desc(cb->v, cb->len);
      else
        sort_desc(cb->v, cb->len);
      b->q_whole = TRUE;
      b->run = cb;
      return TRUE;
    }
    b->q_whole = FALSE;
    b->q_cur_f = 0;
    b->q_cur_sorted = FALSE;
    for (guint32 k = 0; k < cb->len; k++)
      fine_put(b, cb->v[k]);
    cb->len = 0;
    return TRUE;
  }
  return FALSE;
}

/* The current fine bucket is empty (or none is current): makes the next non-empty one current, sorted
 * largest first, so that the kernel's loop pops its keys from the end (heap_pop); FALSE when no key is left.
 * The current bucket has no bit in fmask (fine_put inserts into it in order instead). */
static gboolean queue_advance(BtcWork *b) {
  for (;;) {
    if (b->fmask) { /* the next non-empty fine bucket (empty ones have no bit; none while q_whole) */
      guint32 f = (guint32)__builtin_ctzll(b->fmask);
      StepBucket *bk = &b->fine[f];
      if (bk->len <= 24)
        insertion_sort_desc(bk->v, bk->len);
      else
        sort_desc(bk->v, bk->len);
      b->fmask &= ~(UINT64_C(1) << f);
      b->q_cur_f = f;
      b->q_cur_sorted = TRUE;
      b->run = bk;
      return TRUE;
    }
    if (queue_next_coarse(b)) { /* else the keys beyond the window, if any */
      if (b->q_whole) return TRUE; /* never empty: it had a bit in cmask */
      continue;
    }
    if (b->q_over.len == 0) return FALSE;
    queue_rebase(b);
  }
}

/* The smallest key queued, into *key; FALSE when none is left. */
static inline gboolean heap_pop(BtcWork *b, guint64 *key) {
  StepBucket *bk = b->run;
  if (G_UNLIKELY(bk->len == 0)) {
    if (!queue_advance(b)) return FALSE;
    bk = b->run;
  }
  *key = bk->v[--bk->len];
  return TRUE;
}

static void heap_clear(BtcWork *b) {
  for (guint w = 0; w < Q_COARSE / 64; w++) {
    for (guint64 m = b->cmask[w]; m; m &= m - 1)
      b->coarse[w * 64 + (guint)__builtin_ctzll(m)].len = 0;
    b->cmask[w] = 0;
  }
  for (guint64 m = b->fmask; m; m &= m - 1)
    b->fine[__builtin_ctzll(m)].len = 0;
  b->fine[b->q_cur_f].len = 0; /* the current ones have no bit */
  b->coarse[b->q_cur_c].len = 0;
  b->fmask = 0;
  b->q_over.len = 0;
  b->q_base = 0;
  b->q_has_cur = FALSE;
  b->q_cur_c = 0;
  b->q_cur_f = 0;
  b->q_cur_sorted = FALSE;
  b->q_whole = FALSE;
  b->run = &b->fine[0]; /* empty */
}

/* ---- the kernel ---- */

typedef struct {
  const BtcParams *p;
  const NetGeoParams *gp;
  const NetTopology *t;
  const RelayBlock *blk;
  BtcRng *rng;
  BtcWork *b;
  SimTime processing, message;
  gboolean use_compact; /* the block is larger than a compact block */
  guint64 reached, messages;
} Ctx;

/* An inv from v over edge e (packed word pe) to u that may beat u's best first inv: draw its latency. Out of
 * line: the scan below then keeps its few pointers in registers (with this inlined they were reloaded from
 * the stack for every peer). */
G_GNUC_NO_INLINE static void inv_candidate(Ctx *c, guint32 v, guint32 u, guint64 pe, guint64 e, SimTime send) {
  BtcWork *b = c->b;
  guint32 ci = (guint32)((pe >> 32) & (b->narrow ? 0xFFFF : 0xFFFFFFFF));
  SimTime a = send + brng_latency(c->rng, &b->cls[ci].draw);
  if (a >= b->gate[u]) return;
  BtcNode *un = bnode(b, u);
  b->gate[u] = un->announce = a;
  un->inv_from = v;
  un->in_cls = ci;
  un->inv_cls = b->narrow ? (guint32)(pe >> 48) : b->rev_cls[e];
  heap_push(b, a, K_INV, u);
}

/* v has the block at `now`: invs to every peer that has not asked for it yet. */
static void on_have(Ctx *c, guint32 v, BtcNode *n, SimTime now) {
  const NetTopology *t = c->t;
  const BtcWork *b = c->b;
  SimTime send =
      (n->flags & ST_SOURCE || c->p->processing_in_message ? now : now + c->processing) + c->message;
  const SimTime *gate = b->gate;
  const SimTime *floor_ns = b->cls_floor;
  const guint8 *asked = b->asked;
  const guint64 cls_mask = b->narrow ? 0xFFFF : 0xFFFFFFFF;
  const guint64 *edge = b->edge;
  guint64 messages = 0;
  for (const guint64 *pp = edge + t->adj_off[v], *end = edge + t->adj_off[v + 1]; pp < end; pp++) {
    guint64 pe = *pp;
    guint32 u = (guint32)pe;
    if (asked[u]) continue;
    messages++;
    if (send + floor_ns[(pe >> 32) & cls_mask] >= gate[u]) continue; /* cannot be its first inv: no draw */
    inv_candidate(c, v, u, pe, (guint64)(pp - edge), send);
  }
  c->messages += messages;
}

/* u's first inv: getdata back to its sender, queued there when it arrives. */
static void on_inv(Ctx *c, guint32 u, BtcNode *un, SimTime now) {
  un->flags |= ST_ASKED;
  c->b->gate[u] = GATE_ASKED;
  c->b->asked[u] = 1;
  c->messages++;
  SimTime g = now + c->message + brng_latency(c->rng, &c->b->cls[un->inv_cls].draw);
  heap_push(c->b, g, K_REQ, u);
}

/* u's request (getdata, or getblocktxn with ST_RETRY) reaches the sender v of its first inv: the block
 * message leaves when v's upload link is free. */
static void on_request(Ctx *c, guint32 u, BtcNode *un, SimTime now) {
  const BtcParams *p = c->p;
  BtcWork *b = c->b;
  const BtcClass *k = &b->cls[un->in_cls];
  guint32 v = un->inv_from;
  BtcNode *vn = bnode(b, v);
  SimTime transfer = k->full_ns;
  gboolean compact = FALSE;
  if (un->flags & ST_RETRY) {
    double share = p->fail_size == BTC_FAIL_SIZE_SIMBLOCK
                       ? simblock_fail_share(b->trait[v] & TRAIT_CHURN, c->rng)
                       : p->fail_share;
    transfer = class_transfer_ns(k, c->blk->size_bytes * share);
  } else if ((b->trait[v] & b->trait[u] & TRAIT_COMPACT) && c->use_compact) {
    transfer = k->compact_ns;
    compact = TRUE;
  }
  SimTime start = MAX(now, vn->upload_free);
  SimTime sent = start + transfer + (p->processing_in_message ? c->processing : 0);
  SimTime arrive = sent + brng_latency(c->rng, &k->draw);
  vn->upload_free = p->upload_until_arrival ? arrive : sent;
  c->messages++;
  if (arrive < un->first_push) un->first_push = arrive;
  if (compact) {
    double fail = b->trait[u] & TRAIT_CHURN ? p->churn_compact_fail : p->compact_fail;
    if (fail > 0 && brng_uniform(c->rng) < fail) {
      /* getblocktxn back to v, which queues the rest of the block. */
      c->messages++;
      un->flags |= ST_RETRY;
      heap_push(b, arrive + c->message + brng_latency(c->rng, &b->cls[un->inv_cls].draw), K_REQ, u);
      return;
    }
  }
  if (arrive < un->have) {
    un->have = arrive;
    heap_push(b, arrive, K_HAVE, u);
  }
}

static void btc_propagate(const void *params, const NetGeoParams *gp, const NetTopology *t,
                          const RelayBlock *blk, const RelayStop *stop, SimRng *rng, RelayWork *w) {
  const BtcParams *p = params;
  g_return_if_fail(relay_work_n_nodes(w) == t->n_nodes);
  g_return_if_fail(t->n_nodes < (UINT32_C(1) << STEP_NODE_BITS));
  BtcWork *b = btc_work(w, t);
  update_traits(b, p, t);
  pack_topology(b, gp, t);
  for (guint32 k = 0; k < b->n_cls; k++) {
    b->cls[k].full_ns = class_transfer_ns(&b->cls[k], blk->size_bytes);
    b->cls[k].compact_ns = class_transfer_ns(&b->cls[k], p->compact_bytes);
  }
  heap_clear(b);
  /* Every node's state is reset here, in one pass: a block reaches (nearly) every node, and this costs a
   * few stores per node where an epoch check on every access cost 47 instructions per node and block. */
  static const BtcNode fresh = {.have = SIM_TIME_MAX, .first_push = SIM_TIME_MAX, .announce = SIM_TIME_MAX};
  for (guint32 v = 0; v < t->n_nodes; v++) {
    b->node[v] = fresh;
    b->gate[v] = SIM_TIME_MAX;
  }
  memset(b->asked, 0, t->n_nodes);
  b->t0 = SIM_TIME_MAX;
  for (guint i = 0; i < blk->n_sources; i++)
    b->t0 = MIN(b->t0, blk->source_t[i]);
  /* Joining nodes not synced when the block leaves ignore every inv (as a node that has asked does), so
   * they never request, have or relay it; a source among them still has its own block (below). */
  for (guint32 i = net_joining_first_unavailable(t, b->t0); i < t->n_joining; i++)
  {
    guint32 j = t->join_node[i];
    b->gate[j] = GATE_ASKED;
    b->asked[j] = 1;
  }
  /* The block's stream gives one word: the key of this propagation's own stream (BtcRng). */
  BtcRng brng = {.m = {.s = sim_mix64(sim_rng_u64(rng))}, .slow = rng};
  Ctx c = {.p = p,
           .gp = gp,
           .t = t,
           .blk = blk,
           .rng = &brng,
           .b = b,
           .processing = ms(p->processing_ms),
           .message = ms(p->message_ms),
           .use_compact = p->compact_bytes < blk->size_bytes};
  for (guint i = 0; i < blk->n_sources; i++) {
    guint32 s = blk->sources[i];
    BtcNode *n = bnode(b, s);
    n->flags |= ST_ASKED | ST_SOURCE;
    b->gate[s] = GATE_ASKED;
    b->asked[s] = 1;
    if (blk->source_t[i] < n->have) {
      n->have = blk->source_t[i];
      heap_push(b, n->have, K_HAVE, s);
    }
  }
  /* The stop (relay.h): the groups still to see a node of have the block, then the watched messages, final
   * once every one is at or before the step being taken (every later message is sent at or after it). */
  const guint32 stop_n = stop ? MIN(stop->n_nodes, t->n_nodes) : 0;
  const guint32 stop_msgs = stop_n ? MIN(stop->n_messages, stop_n) : 0;
  guint32 groups_left = 0;
  if (stop_n) {
    guint words = (stop->n_groups + 63) / 64;
    if (words > b->seen_words) {
      b->seen = g_renew(guint64, b->seen, words);
      b->seen_words = words;
    }
    memset(b->seen, 0, words * sizeof *b->seen);
    for (guint32 v = 0; v < stop_n; v++) {
      guint32 grp = stop->group ? stop->group[v] : v;
      if (grp == RELAY_STOP_NONE || grp >= stop->n_groups) continue;
      if (!(b->seen[grp >> 6] & UINT64_C(1) << (grp & 63))) groups_left++;
      b->seen[grp >> 6] |= UINT64_C(1) << (grp & 63);
    }
    memset(b->seen, 0, words * sizeof *b->seen);
  }
  gboolean watching_messages = stop_n && groups_left == 0 && stop_msgs > 0;
  const guint32 node_mask = (UINT32_C(1) << STEP_NODE_BITS) - 1;
  guint64 key;
  while (heap_pop(b, &key)) {
    SimTime now = b->t0 + (SimTime)(key >> STEP_LOW_BITS);
    guint kind = (guint)(key >> STEP_NODE_BITS) & 3;
    guint32 v = (guint32)key & node_mask;
    BtcNode *n = bnode(b, v);
    if (G_UNLIKELY(watching_messages)) {
      gboolean final = TRUE;
      for (guint32 m = 0; m < stop_msgs && final; m++)
        final = stop->first_message_only ? MIN(b->node[m].first_push, b->node[m].announce) < now
                                         : b->node[m].first_push <= now && b->node[m].announce <= now;
      if (final) break;
    }
    if (kind == K_HAVE) {
      if ((n->flags & ST_DONE) || now != n->have) continue; /* superseded (a source listed twice) */
      n->flags |= ST_DONE;
      c.reached++;
      if (G_UNLIKELY(v < stop_n)) {
        guint32 grp = stop->group ? stop->group[v] : v;
        if (grp != RELAY_STOP_NONE && grp < stop->n_groups && !(b->seen[grp >> 6] & UINT64_C(1) << (grp & 63))) {
          b->seen[grp >> 6] |= UINT64_C(1) << (grp & 63);
          if (--groups_left == 0) {
            if (stop_msgs == 0) break;
            watching_messages = TRUE;
          }
        }
      }
      on_have(&c, v, n, now);
    } else if (kind == K_INV) {
      if ((n->flags & ST_ASKED) || now != n->announce) continue; /* superseded by an earlier inv */
      on_inv(&c, v, n, now);
    } else {
      on_request(&c, v, n, now);
    }
  }

  relay_work_begin(w);
  for (guint32 v = 0; v < t->n_nodes; v++) {
    const BtcNode *n = &b->node[v];
    SimTime have = n->flags & ST_DONE ? n->have : SIM_TIME_MAX;
    if (have == SIM_TIME_MAX && n->first_push == SIM_TIME_MAX && n->announce == SIM_TIME_MAX) continue;
    relay_work_record(w, v, have, n->first_push, n->announce);
  }
  relay_work_add_counts(w, c.reached, c.messages);
}

const RelayModel relay_btc = {
    .info = {.name = "bitcoin-compact",
             .family = "relay",
             .help =
                 "Bitcoin Core as SimBlock models it: inv to every peer, getdata to the first announcer, one "
                 "block upload at a time per node, compact blocks between compact nodes with a failure "
                 "rate (then the rest of the block)",
             .params = relay_btc_params,
             .n_params = G_N_ELEMENTS(relay_btc_params),
             .params_size = sizeof(BtcParams)},
    .propagate = btc_propagate,
    .import_ns = btc_import_ns,
};
