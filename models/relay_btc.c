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

G_ALWAYS_INLINE static inline SimTime brng_latency(BtcRng *r, const NetLatencyDraw *d) {
  if (G_LIKELY(d->kind == NET_DRAW_PARETO))
    return net_pareto_table_of_u(&d->pareto, d->scale_ns, d->inv_shape, brng_uniform(r)) + d->host_ns;
  return net_latency_draw(d, r->slow);
}

/* The share of the block a sender sends after a failed compact block under fail_size "simblock": one
 * uniform draw of a table index, as SimBlock (the control table is constant, but its index is drawn all the
 * same, so both kinds of sender use one random number). `churn_table` is the churning sender's table
 * entry by entry (relay_btc_churn_fail_share, a search through its counts, costs ~57 instructions). */
static double simblock_fail_share(gboolean churn_sender, const double *churn_table, BtcRng *rng) {
  if (!churn_sender) {
    (void)relay_mix_below(&rng->m, BTC_CONTROL_FAIL_ENTRIES);
    return 0.01;
  }
  return churn_table[relay_mix_below(&rng->m, BTC_CHURN_FAIL_ENTRIES)];
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

/* The step queue: buckets of 2^24 ns (16.8 ms) of step time, 128 of them (a window of 2.1 s); see "a bucket
 * queue of step keys" below. */
#define Q_CSHIFT (STEP_LOW_BITS + 24)
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
  StepBucket coarse[Q_COARSE]; /* keys of the buckets after the current one, unsorted */
  guint64 q_base;               /* bucket number (key >> Q_CSHIFT) of coarse[0] */
  guint64 q_cur;                /* the current bucket, whose keys are in run (G_MAXUINT64: none) */
  StepBucket *run;              /* its keys, ascending: coarse[q_cur] itself or q_sorted */
  guint64 *rp, *re;             /* the keys of run still to pop: [rp, re) */
  StepBucket q_sorted;          /* a large current bucket's keys, counting-sorted out of coarse[q_cur] */
  guint32 *q_count;             /* the counting sort's counts, room for q_count_cap */
  guint32 q_count_cap;
  StepBucket q_over;            /* keys beyond the window of Q_COARSE buckets */
  SimTime t0;
  /* Traits cache: valid for (seed, compact_share, churn_share). */
  guint8 *trait;
  gboolean trait_valid;
  guint64 trait_seed;
  double trait_compact, trait_churn;
  /* The stop's groups seen (a bit each), room for seen_words words. */
  guint64 *seen;
  guint seen_words;
  double churn_fail[BTC_CHURN_FAIL_ENTRIES]; /* relay_btc_churn_fail_share(i), for i below the count */
  /* The nodes of the last propagation in the order they had the block, and when (relay_btc_have_order);
   * order_valid: it ran to the end. */
  guint32 *order;
  SimTime *order_t;
  guint32 n_order;
  gboolean order_valid;
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
  g_free(b->q_sorted.v);
  g_free(b->q_count);
  g_free(b->q_over.v);
  g_free(b->trait);
  g_free(b->order);
  g_free(b->order_t);
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
  b->order = g_new(guint32, MAX(t->n_nodes, 1));
  b->order_t = g_new(SimTime, MAX(t->n_nodes, 1));
  for (guint i = 0; i < BTC_CHURN_FAIL_ENTRIES; i++)
    b->churn_fail[i] = relay_btc_churn_fail_share(i);
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
 * time. Keys go to buckets of 16.8 ms of step time, in a window of Q_COARSE of them from q_base. When a pop
 * reaches a bucket its keys are sorted, ascending: a few by insertion in place, more by a counting sort on
 * their next bits (about two keys per count) into q_sorted and one insertion pass to finish (a key never
 * leaves its count's range), as the engine sorts its batches. A key for the current bucket (about 0.5% of
 * them: most steps come 15 ms or more after the step that schedules them) is inserted in order among the keys
 * not yet popped, from the end, where it most often belongs. Keys beyond the window wait in q_over until the
 * window is empty, which then moves to the smallest of them. So every pop returns the smallest key queued:
 * the order is exactly that of the keys, (time, kind, node), and does not depend on the queue.
 * Pushes append to one of a few buckets (their tails stay in cache), where one level of 8192 buckets of 262
 * us made each push a cache miss. Measured on the queue alone (callgrind, the key sequences of workloads B
 * and C replayed): 30% fewer instructions than the two levels before it, which spread a reached bucket over
 * 64 fine buckets and sorted each of those when reached. */

static inline void bucket_add(StepBucket *bk, guint64 key) {
  if (G_UNLIKELY(bk->len == bk->cap)) {
    bk->cap = bk->cap ? 2 * bk->cap : 8;
    bk->v = g_renew(guint64, bk->v, bk->cap);
  }
  bk->v[bk->len++] = key;
}

/* A key of the current bucket: in order among those still to pop. */
G_GNUC_NO_INLINE static void queue_put_current(BtcWork *b, guint64 key) {
  StepBucket *bk = b->run;
  gsize from = (gsize)(b->rp - bk->v);
  bucket_add(bk, key);
  guint64 *lo = bk->v + from, *q = bk->v + bk->len - 1;
  for (; q > lo && q[-1] > key; q--)
    *q = q[-1];
  *q = key;
  b->rp = lo;
  b->re = bk->v + bk->len;
}

static inline void queue_put(BtcWork *b, guint64 key) {
  guint64 i = (key >> Q_CSHIFT) - b->q_base;
  if (G_LIKELY(i < Q_COARSE && i != b->q_cur)) {
    bucket_add(&b->coarse[i], key);
    return;
  }
  if (i == b->q_cur)
    queue_put_current(b, key);
  else
    bucket_add(&b->q_over, key);
}

static void heap_push(BtcWork *b, SimTime t, guint kind, guint32 node) {
  guint64 dt = (guint64)(t - b->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  queue_put(b, dt << STEP_LOW_BITS | (guint64)kind << STEP_NODE_BITS | node);
}

/* Sorts keys ascending by insertion: few keys, or keys already in order but within runs of a few. Keys are
 * distinct (they name their node). */
static inline void insertion_sort_asc(guint64 *v, guint32 n) {
  for (guint64 *p = v + 1, *end = v + n; p < end; p++) {
    guint64 x = *p;
    if (G_LIKELY(p[-1] < x)) continue;
    guint64 *q = p;
    do {
      *q = q[-1];
      q--;
    } while (q > v && q[-1] > x);
    *q = x;
  }
}

/* A bucket with at most this many keys is sorted in place by insertion when reached; a larger one by
 * counting. Measured (the queue alone, as above): 8 / 16 / 24 / 32 gave workload B's keys 326.9 / 326.0 /
 * 329.5 / 334.9 M instructions and C's 302.6 / 302.6 / 303.2 / 304.4 M; a count per key instead of per two
 * keys (one insertion more for about half of them) 334.6 and 320.3 M, one per four keys 327.5 and 301.1 M. */
#define Q_SMALL 16

/* The keys of bucket cb, more than Q_SMALL, ascending into q_sorted: a counting sort on their top bits
 * below the bucket number, about two keys per count, then one insertion pass. */
static void queue_sort_large(BtcWork *b, StepBucket *cb) {
  guint32 n = cb->len;
  guint lg = 4;
  while ((UINT32_C(1) << (lg + 1)) < n)
    lg++;
  guint32 nb = UINT32_C(1) << lg, mask = nb - 1;
  guint sh = Q_CSHIFT - lg;
  if (nb > b->q_count_cap) {
    b->q_count_cap = nb;
    b->q_count = g_renew(guint32, b->q_count, nb);
  }
  StepBucket *s = &b->q_sorted;
  if (s->cap < n) {
    s->cap = MAX(n, 2 * s->cap);
    s->v = g_renew(guint64, s->v, s->cap);
  }
  guint32 *count = b->q_count;
  memset(count, 0, nb * sizeof *count);
  const guint64 *in = cb->v, *in_end = in + n;
  for (const guint64 *p = in; p < in_end; p++)
    count[(guint32)(*p >> sh) & mask]++;
  guint32 sum = 0;
  for (guint32 k = 0; k < nb; k++) {
    guint32 c = count[k];
    count[k] = sum;
    sum += c;
  }
  guint64 *out = s->v;
  for (const guint64 *p = in; p < in_end; p++) {
    guint64 x = *p;
    out[count[(guint32)(x >> sh) & mask]++] = x;
  }
  insertion_sort_asc(out, n);
  s->len = n;
  cb->len = 0;
  b->run = s;
}

/* Moves the window to the smallest key beyond it; only when every bucket is empty. */
static void queue_rebase(BtcWork *b) {
  StepBucket *o = &b->q_over;
  guint64 m = o->v[0];
  for (guint32 k = 1; k < o->len; k++)
    m = MIN(m, o->v[k]);
  b->q_base = m >> Q_CSHIFT;
  b->q_cur = G_MAXUINT64;
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

/* The current bucket is used up: makes the next non-empty one current, its keys sorted in run; FALSE when
 * no key is left. Most buckets in a block's busy span have keys, so a scan of their lengths finds the next
 * for less than a bit per bucket set at every push would cost. */
static gboolean queue_advance(BtcWork *b) {
  b->run->len = 0;
  for (;;) {
    for (guint32 c = b->q_cur == G_MAXUINT64 ? 0 : (guint32)b->q_cur + 1; c < Q_COARSE; c++) {
      StepBucket *cb = &b->coarse[c];
      if (!cb->len) continue;
      b->q_cur = c;
      if (cb->len <= Q_SMALL) {
        insertion_sort_asc(cb->v, cb->len);
        b->run = cb;
      } else {
        queue_sort_large(b, cb);
      }
      b->rp = b->run->v;
      b->re = b->rp + b->run->len;
      return TRUE;
    }
    if (b->q_over.len == 0) return FALSE;
    queue_rebase(b);
  }
}

/* The smallest key queued, into *key; FALSE when none is left. */
static inline gboolean heap_pop(BtcWork *b, guint64 *key) {
  if (G_UNLIKELY(b->rp == b->re) && !queue_advance(b)) return FALSE;
  *key = *b->rp++;
  return TRUE;
}

static void heap_clear(BtcWork *b) {
  for (guint c = 0; c < Q_COARSE; c++)
    b->coarse[c].len = 0;
  b->q_sorted.len = 0;
  b->q_over.len = 0;
  b->q_base = 0;
  b->q_cur = G_MAXUINT64;
  b->run = &b->q_sorted; /* empty */
  b->rp = b->re = b->q_sorted.v;
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
  SimTime in_message;   /* processing paid in each block message (processing_in_message), else 0 */
  gboolean until_arrival; /* p->upload_until_arrival */
  gboolean use_compact; /* the block is larger than a compact block */
  double compact_fail[2]; /* by the receiver's churn trait: p->compact_fail, p->churn_compact_fail */
  guint64 reached, messages;
} Ctx;

/* An inv from v over the edge at pp (a packed word) that may beat its head's best first inv: draw its
 * latency. Out of line: the scan below then keeps its few pointers in registers (with this inlined they were
 * reloaded from the stack for every peer). */
G_GNUC_NO_INLINE static void inv_candidate(Ctx *c, guint32 v, const guint64 *pp, SimTime send) {
  BtcWork *b = c->b;
  guint64 pe = *pp;
  guint32 u = (guint32)pe;
  guint32 ci = (guint32)((pe >> 32) & (b->narrow ? 0xFFFF : 0xFFFFFFFF));
  SimTime a = send + brng_latency(c->rng, &b->cls[ci].draw);
  if (a >= b->gate[u]) return;
  BtcNode *un = bnode(b, u);
  b->gate[u] = un->announce = a;
  un->inv_from = v;
  un->in_cls = ci;
  un->inv_cls = b->narrow ? (guint32)(pe >> 48) : b->rev_cls[pp - b->edge];
  heap_push(b, a, K_INV, u);
}

/* The head of a packed edge (its low 32 bits) by a 32-bit load, which needs no move to clear the upper half
 * before it indexes. */
static inline guint32 edge_head(const guint64 *pe) {
  guint32 u;
#if G_BYTE_ORDER == G_LITTLE_ENDIAN
  memcpy(&u, pe, sizeof u);
#else
  memcpy(&u, (const char *)pe + 4, sizeof u);
#endif
  return u;
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
  const guint64 *pp = edge + t->adj_off[v], *end = edge + t->adj_off[v + 1];
#define BTC_INV_TO(P)                                                                                        \
  do {                                                                                                       \
    guint64 pe = *(P);                                                                                       \
    guint32 u = (guint32)pe;                                                                                 \
    if (asked[u]) break;                                                                                     \
    messages++;                                                                                              \
    if (send + floor_ns[(pe >> 32) & cls_mask] >= gate[u]) break; /* cannot be its first inv: no draw */     \
    inv_candidate(c, v, (P), send);                                                                          \
  } while (0)
  /* Two peers at a time: both have asked for three pairs in four (86% of peers in workload B), and one test
   * of both bytes then costs fewer instructions than two. asked[] does not change during the scan (gate[]
   * does, so each peer's is read in turn). */
  for (const guint64 *pairs_end = pp + ((end - pp) & ~(ptrdiff_t)1); pp < pairs_end; pp += 2) {
    if (asked[edge_head(pp)] & asked[edge_head(pp + 1)]) continue;
    BTC_INV_TO(pp);
    BTC_INV_TO(pp + 1);
  }
  if (pp < end) BTC_INV_TO(pp);
#undef BTC_INV_TO
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
                       ? simblock_fail_share(b->trait[v] & TRAIT_CHURN, b->churn_fail, c->rng)
                       : p->fail_share;
    transfer = class_transfer_ns(k, c->blk->size_bytes * share);
  } else if ((b->trait[v] & b->trait[u] & TRAIT_COMPACT) && c->use_compact) {
    transfer = k->compact_ns;
    compact = TRUE;
  }
  SimTime start = MAX(now, vn->upload_free);
  SimTime sent = start + transfer + c->in_message;
  SimTime arrive = sent + brng_latency(c->rng, &k->draw);
  vn->upload_free = c->until_arrival ? arrive : sent;
  c->messages++;
  if (arrive < un->first_push) un->first_push = arrive;
  if (compact) {
    double fail = c->compact_fail[(b->trait[u] & TRAIT_CHURN) != 0];
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
           .in_message = p->processing_in_message ? ms(p->processing_ms) : 0,
           .until_arrival = p->upload_until_arrival,
           .use_compact = p->compact_bytes < blk->size_bytes,
           .compact_fail = {p->compact_fail, p->churn_compact_fail}};
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
  b->order_valid = FALSE;
  b->n_order = 0;
  guint64 key;
  for (;;) {
    if (!heap_pop(b, &key)) { /* ran to the end */
      b->order_valid = TRUE;
      break;
    }
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
      b->order[b->n_order] = v; /* each node at most once (ST_DONE) */
      b->order_t[b->n_order++] = now;
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

/* RelayModel.have_order. */
static gboolean btc_have_order(const RelayWork *w, const guint32 **nodes, const SimTime **have, guint32 *n) {
  const BtcWork *b = relay_work_ext(w, &relay_btc);
  if (!b || !b->order_valid) return FALSE;
  *nodes = b->order;
  *have = b->order_t;
  *n = b->n_order;
  return TRUE;
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
    .have_order = btc_have_order,
};
