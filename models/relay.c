/* relay.c: block relay over the topology: Geth 1.8.23's eth/63 push-and-announce protocol, and the result
 * store (RelayWork) that every relay model reports through. */
#include "relay.h"

#include <math.h>
#include <string.h>

enum { STEP_HAVE = 0, STEP_PUSH = 1, STEP_ANNOUNCE = 2 };

/* RelayWork.done: a node's full-block time is final (YES), or it is a joining node not synced when the
 * block left (UNAVAILABLE, net_joining_first_unavailable()). Such a node is marked done with a have time
 * far in the past before the loop starts: every test the kernel already makes then treats it as a node
 * that needs nothing (a push to it is sent and lost, without a latency draw; an announcement likewise),
 * and it never takes a step, so it relays nothing; no test is added to the loop. */
enum { DONE_NO = 0, DONE_YES = 1, DONE_UNAVAILABLE = 2 };
#define HAVE_UNAVAILABLE (-(SIM_TIME_MAX / 4))

/* A step is one 64-bit key: time since the block's first source (40 bits of ns: 18 minutes), node (22
 * bits), kind (2 bits). Keys order steps by (time, node, kind), so ties never depend on insertion order. */
#define STEP_TIME_BITS 40
#define STEP_NODE_BITS 22
#define STEP_TIME_MAX ((UINT64_C(1) << STEP_TIME_BITS) - 1)

/* Everything the Geth kernel reads and writes of directed edge e = v->u, in one 16-byte record stored in
 * v's adjacency order, so that scanning a node's edges brings in all it needs (read from the topology's
 * five per-edge arrays plus a state array, the working set of pools-2019 was 1.8 MB and missed a 1 MB
 * cache 80 times as often; packed it is 0.7 MB):
 *  - word: u (bits 41..62; node ids have 22 bits) | sent (bit 40: v sent u the block or an announcement) |
 *    when v heard from u, in ns after the block's first source (bits 0..39; all ones: not heard). The
 *    sent and heard bits are reset at the start of each propagation.
 *  - rev: the reverse edge u->v; cls: the link class (edges with the same latency mean, floor and
 *    bandwidth share one). */
#define EDGE_HEARD_BITS 40
#define EDGE_HEARD_NONE ((UINT64_C(1) << EDGE_HEARD_BITS) - 1)
#define EDGE_SENT_BIT (UINT64_C(1) << EDGE_HEARD_BITS)
#define EDGE_TO_SHIFT (EDGE_HEARD_BITS + 1)
#define EDGE_STATE_MASK (EDGE_SENT_BIT | EDGE_HEARD_NONE)

typedef struct {
  guint64 word;
  guint32 rev;
  guint32 cls;
} PackedEdge;

typedef struct {
  SimTime mean_ns;
  SimTime floor_ns;
  SimTime transfer_ns; /* of the block being relayed */
  double tx_ns_per_byte;
  NetLatencyDraw draw;
} LinkClass;

typedef struct {
  guint64 *key;
  guint32 len, cap;
} RadixBucket;

struct RelayWork {
  guint32 n_nodes;
  guint32 n_special;
  guint64 n_edges;
  /* Per node, reset by every propagation: best known time of the full block (final once `done`). First
   * pushes and announcements are only kept for the specials (vantage points, gateways): nobody reads them
   * for other nodes. When a node's upload link is free again is set by its push, which always comes
   * before its announcement, the only reader. */
  SimTime *have;
  guint8 *done;
  SimTime *upload_free;
  SimTime *first_push; /* first full block received as a pushed block message */
  SimTime *announce;   /* first announcement received */
  /* HAVE step keys. A step only creates later steps, so keys mostly arrive above the last one taken: a
   * radix heap (bucket b > 0 holds the keys whose highest bit differing from `radix_last` is bit b - 1;
   * the keys of the lowest bucket are spread over lower ones when it is taken) with its minimum kept up to
   * date; faster here than a 4-ary heap (branchy pops) or a calendar queue (bursts of equal-time
   * fetches). The rare key at or below the last one taken (zero latency and transfer to a lower node id)
   * goes to a 4-ary min-heap. */
  RadixBucket bucket[65];
  guint64 bucket_mask; /* bit b - 1: bucket b not empty */
  guint64 radix_last, radix_min;
  guint64 *heap;
  /* PUSH and ANNOUNCE steps come a fixed time after HAVE (verify; verify + import), so in HAVE order they
   * are already sorted: two FIFO queues of keys instead of heap entries. */
  guint64 *fifo[2];
  gsize heap_len, heap_cap;
  guint32 *scratch; /* edge indices for choosing push targets */
  guint64 reached, messages;
  /* The Geth kernel's packed view of the topology and jitter model it was last used with (built on first
   * use: the topology is read-only once built). */
  const NetTopology *packed_topo;
  const void *packed_jitter, *packed_jitter_params;
  PackedEdge *packed;
  LinkClass *cls;
  guint32 n_cls;
  /* Another relay model's own scratch (relay_work_set_ext). */
  const void *ext_owner;
  gpointer ext;
  GDestroyNotify ext_free;
};

/* Every node unreached, no special heard anything, counts zero. */
static void reset_nodes(RelayWork *w) {
  for (guint32 v = 0; v < w->n_nodes; v++) w->have[v] = SIM_TIME_MAX;
  memset(w->done, 0, w->n_nodes);
  for (guint32 v = 0; v < w->n_special; v++) w->first_push[v] = w->announce[v] = SIM_TIME_MAX;
  w->reached = w->messages = 0;
}

RelayWork *relay_work_new(const NetTopology *t) {
  RelayWork *w = g_new0(RelayWork, 1);
  w->n_nodes = t->n_nodes;
  w->n_special = t->n_special;
  w->n_edges = t->n_edges;
  w->have = g_new(SimTime, MAX(t->n_nodes, 1));
  w->done = g_new(guint8, MAX(t->n_nodes, 1));
  w->upload_free = g_new0(SimTime, MAX(t->n_nodes, 1));
  w->first_push = g_new(SimTime, MAX(t->n_special, 1));
  w->announce = g_new(SimTime, MAX(t->n_special, 1));
  w->heap_cap = 1024;
  w->heap = g_new(guint64, w->heap_cap);
  for (int i = 0; i < 2; i++) w->fifo[i] = g_new(guint64, 2 * (gsize)t->n_nodes + 1);
  guint32 max_deg = 0;
  for (guint32 v = 0; v < t->n_nodes; v++) max_deg = MAX(max_deg, t->adj_off[v + 1] - t->adj_off[v]);
  w->scratch = g_new(guint32, max_deg + 1);
  reset_nodes(w);
  return w;
}

void relay_work_free(RelayWork *w) {
  if (!w) return;
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  g_free(w->have);
  g_free(w->done);
  g_free(w->upload_free);
  g_free(w->first_push);
  g_free(w->announce);
  g_free(w->heap);
  for (int b = 0; b < 65; b++) g_free(w->bucket[b].key);
  g_free(w->fifo[0]);
  g_free(w->fifo[1]);
  g_free(w->scratch);
  g_free(w->packed);
  g_free(w->cls);
  g_free(w);
}

SimTime relay_work_have(const RelayWork *w, guint32 v) {
  return w->done[v] == DONE_YES ? w->have[v] : SIM_TIME_MAX;
}
SimTime relay_work_announce(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->announce[v] : SIM_TIME_MAX;
}
SimTime relay_work_first_push(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->first_push[v] : SIM_TIME_MAX;
}
guint64 relay_work_reached(const RelayWork *w) { return w->reached; }
guint64 relay_work_messages(const RelayWork *w) { return w->messages; }

/* ---- the reporting API of relay models kept in other files ---- */

void relay_work_begin(RelayWork *w) {
  g_return_if_fail(w != NULL);
  reset_nodes(w);
}

void relay_work_record(RelayWork *w, guint32 v, SimTime have, SimTime first_push, SimTime announce) {
  g_return_if_fail(w != NULL && v < w->n_nodes);
  w->have[v] = have;
  w->done[v] = have != SIM_TIME_MAX ? DONE_YES : DONE_NO;
  if (v < w->n_special) {
    w->first_push[v] = first_push;
    w->announce[v] = announce;
  }
}

void relay_work_add_counts(RelayWork *w, guint64 reached, guint64 messages) {
  w->reached += reached;
  w->messages += messages;
}

gpointer relay_work_ext(const RelayWork *w, const void *owner) {
  return w->ext_owner == owner ? w->ext : NULL;
}

void relay_work_set_ext(RelayWork *w, const void *owner, gpointer ext, GDestroyNotify free_fn) {
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  w->ext_owner = owner;
  w->ext = ext;
  w->ext_free = free_fn;
}

guint32 relay_work_n_nodes(const RelayWork *w) { return w->n_nodes; }

/* ---- the packed topology ---- */

typedef struct {
  SimTime mean_ns, floor_ns;
  double tx_ns_per_byte;
  SimTime host_ns;
} ClassKey;

static guint class_key_hash(gconstpointer p) {
  const ClassKey *k = p;
  guint64 tx;
  memcpy(&tx, &k->tx_ns_per_byte, sizeof tx);
  guint64 h = (guint64)k->mean_ns * UINT64_C(0x9E3779B97F4A7C15) ^
              (guint64)k->floor_ns * UINT64_C(0xC2B2AE3D27D4EB4F) ^ tx * UINT64_C(0x165667B19E3779F9) ^
              (guint64)k->host_ns * UINT64_C(0x27D4EB2F165667C5);
  return (guint)(h ^ h >> 32);
}

static gboolean class_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(ClassKey)) == 0; /* keys are zeroed before they are filled: no padding garbage */
}

/* Builds w's packed edges and link classes for `t` under gp's jitter model, unless already built for them
 * (a work serves one topology, read-only once built; see relay_work_new()). Class numbers follow the
 * edges' order; no result depends on them. */
static void pack_topology(RelayWork *w, const NetGeoParams *gp, const NetTopology *t) {
  if (w->packed_topo == t && w->packed_jitter == gp->jitter.model &&
      w->packed_jitter_params == gp->jitter.params)
    return;
  g_free(w->packed);
  g_free(w->cls);
  w->packed = g_new(PackedEdge, MAX(t->n_edges, 1));
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(ClassKey));
  GHashTable *index = g_hash_table_new_full(class_key_hash, class_key_equal, g_free, NULL);
  for (guint64 e = 0; e < t->n_edges; e++) {
    ClassKey k;
    memset(&k, 0, sizeof k);
    k.mean_ns = t->lat_mean_ns[e];
    k.floor_ns = t->lat_floor_ns[e];
    k.tx_ns_per_byte = t->tx_ns_per_byte[e];
    k.host_ns = t->lat_host_ns ? t->lat_host_ns[e] : 0;
    gpointer hit;
    guint32 c;
    if (g_hash_table_lookup_extended(index, &k, NULL, &hit)) {
      c = GPOINTER_TO_UINT(hit);
    } else {
      c = keys->len;
      g_array_append_val(keys, k);
      /* A copy as the table's key: `keys` moves when it grows. */
      g_hash_table_insert(index, g_memdup2(&k, sizeof k), GUINT_TO_POINTER(c));
    }
    w->packed[e] = (PackedEdge){.word = (guint64)t->adj[e] << EDGE_TO_SHIFT, .rev = t->rev[e], .cls = c};
  }
  g_hash_table_destroy(index);
  w->n_cls = keys->len;
  w->cls = g_new0(LinkClass, MAX(keys->len, 1));
  for (guint32 c = 0; c < keys->len; c++) {
    const ClassKey *k = &g_array_index(keys, ClassKey, c);
    w->cls[c].mean_ns = k->mean_ns;
    w->cls[c].floor_ns = k->floor_ns;
    w->cls[c].tx_ns_per_byte = k->tx_ns_per_byte;
    net_latency_draw_init(&w->cls[c].draw, gp, k->mean_ns, k->host_ns);
  }
  g_array_free(keys, TRUE);
  w->packed_topo = t;
  w->packed_jitter = gp->jitter.model;
  w->packed_jitter_params = gp->jitter.params;
}

/* ---- a 4-ary min-heap of step keys (hole-based sifting) ---- */

static void heap_push_key(RelayWork *w, guint64 key) {
  if (w->heap_len == w->heap_cap) {
    w->heap_cap *= 2;
    w->heap = g_renew(guint64, w->heap, w->heap_cap);
  }
  gsize i = w->heap_len++;
  while (i > 0) {
    gsize p = (i - 1) / 4;
    if (w->heap[p] <= key) break;
    w->heap[i] = w->heap[p];
    i = p;
  }
  w->heap[i] = key;
}

/* ---- the radix heap ---- */

static void radix_reset(RelayWork *w) {
  for (guint64 m = w->bucket_mask; m; m &= m - 1) w->bucket[__builtin_ctzll(m) + 1].len = 0;
  w->bucket_mask = 0;
  w->radix_last = 0;
  w->radix_min = UINT64_MAX;
}

static inline void bucket_append(RelayWork *w, int b, guint64 key) {
  RadixBucket *k = &w->bucket[b];
  if (G_UNLIKELY(k->len == k->cap)) {
    k->cap = k->cap ? 2 * k->cap : 64;
    k->key = g_renew(guint64, k->key, k->cap);
  }
  k->key[k->len++] = key;
  w->bucket_mask |= UINT64_C(1) << (b - 1);
}

static inline void radix_push(RelayWork *w, guint64 key) {
  if (G_UNLIKELY(key <= w->radix_last)) {
    heap_push_key(w, key);
    return;
  }
  bucket_append(w, 64 - __builtin_clzll(key ^ w->radix_last), key);
  if (key < w->radix_min) w->radix_min = key;
}

/* Takes radix_min (the heap must not be empty) and finds the next minimum. */
static void radix_pop(RelayWork *w) {
  guint64 m = w->radix_min;
  int i = __builtin_ctzll(w->bucket_mask) + 1; /* the minimum is in the lowest bucket */
  RadixBucket *src = &w->bucket[i];
  const guint64 *keys = src->key;
  guint32 len = src->len;
  src->len = 0;
  /* In locals: the key stores below could otherwise alias them. */
  guint64 mask = w->bucket_mask & ~(UINT64_C(1) << (i - 1));
  w->radix_last = m;
  guint64 next = UINT64_MAX;
  /* Every other key of bucket i differs from m below bit i - 1: it moves to a lower bucket, all of which
   * are empty, so the next minimum is among the moved keys. */
  for (guint32 j = 0; j < len; j++) {
    guint64 k = keys[j];
    if (k == m) continue;
    int b = 64 - __builtin_clzll(k ^ m);
    RadixBucket *d = &w->bucket[b];
    if (G_UNLIKELY(d->len == d->cap)) {
      d->cap = d->cap ? 2 * d->cap : 64;
      d->key = g_renew(guint64, d->key, d->cap);
    }
    d->key[d->len++] = k;
    mask |= UINT64_C(1) << (b - 1);
    next = MIN(next, k);
  }
  w->bucket_mask = mask;
  if (next == UINT64_MAX && mask) {
    const RadixBucket *low = &w->bucket[__builtin_ctzll(w->bucket_mask) + 1];
    for (guint32 j = 0; j < low->len; j++)
      if (low->key[j] < next) next = low->key[j];
  }
  w->radix_min = next;
}

static guint64 heap_pop(RelayWork *w) {
  guint64 top = w->heap[0];
  guint64 last = w->heap[--w->heap_len];
  gsize n = w->heap_len, i = 0;
  for (;;) {
    gsize c = 4 * i + 1;
    if (c >= n) break;
    gsize best = c;
    gsize end = MIN(c + 4, n);
    for (gsize k = c + 1; k < end; k++)
      if (w->heap[k] < w->heap[best]) best = k;
    if (w->heap[best] >= last) break;
    w->heap[i] = w->heap[best];
    i = best;
  }
  if (n) w->heap[i] = last;
  return top;
}

/* ---- Geth 1.8.23 ---- */

typedef struct {
  int64_t push_min;
  double verify_ms;
  double import_base_ms;
  double import_ms_per_mgas;
  double arrive_timeout_ms;
  double fetch_timeout_ms;
  double fetch_fail_prob;
} GethParams;

static const SimParamSpec geth_params[] = {
    {.name = "push_min", .type = SIM_PARAM_INT, .min = 0, .max = 100000, .def = 4,
     .offset = offsetof(GethParams, push_min),
     .help = "full-block pushes go to max(push_min, floor(sqrt(peers lacking it))) peers, capped by that count"},
    {.name = "verify_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 5,
     .offset = offsetof(GethParams, verify_ms),
     .help = "header verification before the push (fetcher.insert: verifyHeader, then broadcast)"},
    {.name = "import_base_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 10,
     .offset = offsetof(GethParams, import_base_ms), .help = "import time of an empty block (calibration knob)"},
    {.name = "import_ms_per_mgas", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 25,
     .offset = offsetof(GethParams, import_ms_per_mgas),
     .help = "import time per million gas used (calibration knob); the hash is announced after import"},
    {.name = "arrive_timeout_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 500,
     .offset = offsetof(GethParams, arrive_timeout_ms),
     .help = "fetcher: wait after an announcement before requesting the block (arriveTimeout)"},
    {.name = "fetch_timeout_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e7, .def = 5000,
     .offset = offsetof(GethParams, fetch_timeout_ms),
     .help = "fetcher: an unanswered request is given up after this long (fetchTimeout), then retried"},
    {.name = "fetch_fail_prob", .type = SIM_PARAM_NUMBER, .min = 0, .max = 0.99, .def = 0,
     .offset = offsetof(GethParams, fetch_fail_prob),
     .help = "probability that a fetch request goes unanswered (peer dropped or overloaded)"},
};

static SimTime ms(double v) { return sim_time_from_s(v / 1e3); }

static SimTime geth_import_ns(const void *params, double gas_used) {
  const GethParams *p = params;
  return ms(p->import_base_ms + p->import_ms_per_mgas * gas_used / 1e6);
}

/* One propagation's hot state in locals, so that stores into the per-edge and per-node arrays do not make
 * the compiler reload it. */
typedef struct {
  const GethParams *p;
  PackedEdge *pe;
  const LinkClass *cls;
  const guint32 *adj_off;
  SimTime *have;
  guint8 *done;
  SimTime *first_push, *announce;
  guint32 *scratch;
  SimRng *rng;
  RelayWork *w;
  SimTime t0;
  SimTime wait, timeout, last_decision_after_have;
  guint32 n_special;
  guint64 messages;
} Geth;

/* The heard word of an arrival at `at`: ns after the first source, all ones when out of range (an
 * arrival before the first source wraps to a huge unsigned value, so one MIN covers both ends). */
static inline guint64 heard_rel(const Geth *g, SimTime at) {
  return MIN((guint64)(at - g->t0), EDGE_HEARD_NONE);
}

/* The smallest heard word that means "heard after `now`" (not heard counts as after everything). */
static inline guint64 heard_after(const Geth *g, SimTime now) {
  guint64 rel = (guint64)(now - g->t0);
  return rel < EDGE_HEARD_NONE ? rel + 1 : EDGE_HEARD_NONE;
}

/* Records at the receiver that it heard from the sender of edge `e` at `at`. */
static inline void mark_heard(Geth *g, guint32 e, SimTime at) {
  PackedEdge *r = &g->pe[g->pe[e].rev];
  guint64 x = r->word;
  guint64 rel = heard_rel(g, at);
  if (rel < (x & EDGE_HEARD_NONE)) r->word = (x & ~EDGE_HEARD_NONE) | rel;
}

static inline void relax_full(Geth *g, guint32 v, SimTime t) {
  if (g->done[v] || t >= g->have[v]) return;
  g->have[v] = t;
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  radix_push(g->w, dt << (STEP_NODE_BITS + 2) | (guint64)v << 2 | STEP_HAVE);
}

static inline guint64 step_key(const Geth *g, SimTime t, guint32 node, guint32 kind) {
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) dt = STEP_TIME_MAX;
  return dt << (STEP_NODE_BITS + 2) | (guint64)node << 2 | kind;
}

/* Exactness where it matters, speed elsewhere: a message whose arrival cannot change any node's first
 * arrival (its receiver already has the block, or an announcement whose fetch could not beat the
 * receiver's current best) only updates what the receiver knows, timed with the pair's mean latency
 * instead of a jitter draw, and is skipped when the receiver has no decision left that it could change.
 * Vantage points and gateways (the specials) always get exact draws. */
static inline void geth_push(Geth *g, guint32 v, SimTime now) {
  guint32 *scratch = g->scratch;
  const PackedEdge *pe = g->pe;
  guint64 after = heard_after(g, now);
  guint32 n = 0;
  for (guint32 e = g->adj_off[v], end = g->adj_off[v + 1]; e < end; e++) {
    scratch[n] = e;
    n += (pe[e].word & EDGE_HEARD_NONE) >= after; /* the peer has not told us it has it */
  }
  if (n == 0) {
    g->w->upload_free[v] = 0; /* nothing sent: the link was never busy */
    return;
  }
  guint64 k = (guint64)sqrt((double)n); /* exact floor for n < 2^52 */
  k = MIN(n, MAX(k, (guint64)g->p->push_min));
  SimTime q = now;
  for (guint64 i = 0; i < k; i++) {
    guint64 j = i + sim_rng_below(g->rng, n - i);
    guint32 e = scratch[j];
    scratch[j] = scratch[i];
    scratch[i] = e;
    PackedEdge *pr = &g->pe[e];
    guint64 x = pr->word;
    guint32 to = (guint32)(x >> EDGE_TO_SHIFT);
    const LinkClass *c = &g->cls[pr->cls];
    q += c->transfer_ns;
    pr->word = x | EDGE_SENT_BIT;
    g->messages++;
    gboolean special = to < g->n_special;
    /* No draw when the push cannot be first: the receiver already has (or will sooner get) the block,
     * and for a vantage point, its first block message is earlier still. */
    if (q + c->floor_ns >= MIN(g->have[to], special ? g->first_push[to] : SIM_TIME_MAX)) {
      mark_heard(g, e, q + c->mean_ns);
      continue;
    }
    SimTime arr = q + net_latency_draw(&c->draw, g->rng);
    mark_heard(g, e, arr);
    if (special && arr < g->first_push[to]) g->first_push[to] = arr;
    relax_full(g, to, arr);
  }
  g->w->upload_free[v] = q;
}

static inline void geth_announce(Geth *g, guint32 v, SimTime now) {
  const GethParams *p = g->p;
  SimTime wait = g->wait, timeout = g->timeout;
  SimTime upload_free = g->w->upload_free[v];
  guint64 after = heard_after(g, now);
  for (guint32 e = g->adj_off[v], end = g->adj_off[v + 1]; e < end; e++) {
    PackedEdge *pr = &g->pe[e];
    guint64 x = pr->word;
    /* Skipped if pushed there (sent bit set) or the peer has it (heard before `after`): one range check. */
    if ((x & EDGE_STATE_MASK) - after >= EDGE_SENT_BIT - after) continue;
    pr->word = x | EDGE_SENT_BIT;
    guint32 to = (guint32)(x >> EDGE_TO_SHIFT);
    const LinkClass *c = &g->cls[pr->cls];
    g->messages++;
    if (g->done[to]) {
      /* Only what `to` knows changes, and only if it still has a decision to take after this arrives; a
       * vantage point's first announcement is earlier than its block or it came with no push at all. */
      SimTime a = now + c->mean_ns;
      if (a <= g->have[to] + g->last_decision_after_have) mark_heard(g, e, a);
      continue;
    }
    /* The fetch cannot complete before now + arriveTimeout: no draw if that cannot beat what `to` has (and,
     * for a vantage point, if this cannot be its first announcement either). */
    gboolean special = to < g->n_special;
    if (g->have[to] <= now + wait + 4 * c->floor_ns &&
        (!special || now + c->floor_ns >= MIN(g->announce[to], g->first_push[to]))) {
      mark_heard(g, e, now + c->mean_ns);
      continue;
    }
    SimTime lat = net_latency_draw(&c->draw, g->rng);
    SimTime a = now + lat;
    mark_heard(g, e, a);
    if (special && a < g->announce[to]) g->announce[to] = a;
    /* The peer's fetcher requests the block arriveTimeout after the announcement: header request and
     * reply, body request, then the body over our upload link; an unanswered request costs fetchTimeout
     * and is retried. The latency draw is reused for the exchange's four messages. */
    SimTime req = a + wait;
    if (p->fetch_fail_prob > 0)
      while (sim_rng_uniform(g->rng) < p->fetch_fail_prob) req += timeout;
    SimTime start = MAX(req + 3 * lat, upload_free);
    relax_full(g, to, start + c->transfer_ns + lat);
  }
}

static void geth_propagate(const void *params, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                           guint32 stop_after, SimRng *rng, RelayWork *w) {
  const GethParams *p = params;
  reset_nodes(w);
  g_return_if_fail(t->n_nodes < (UINT32_C(1) << STEP_NODE_BITS));
  pack_topology(w, gp, t);
  /* Nothing sent or heard yet. A fill of every record costs less than a stamp checked on each access. */
  for (guint64 e = 0; e < w->n_edges; e++)
    w->packed[e].word = (w->packed[e].word & ~EDGE_STATE_MASK) | EDGE_HEARD_NONE;
  for (guint32 c = 0; c < w->n_cls; c++) {
    double ns = b->size_bytes * w->cls[c].tx_ns_per_byte; /* net_edge_transfer_ns() */
    w->cls[c].transfer_ns = ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
  }
  w->heap_len = 0;
  radix_reset(w);
  SimTime verify = ms(p->verify_ms), import = geth_import_ns(p, b->gas_used);
  Geth g = {.p = p,
            .pe = w->packed,
            .cls = w->cls,
            .adj_off = t->adj_off,
            .have = w->have,
            .done = w->done,
            .first_push = w->first_push,
            .announce = w->announce,
            .scratch = w->scratch,
            .rng = rng,
            .w = w,
            .t0 = SIM_TIME_MAX,
            .wait = ms(p->arrive_timeout_ms),
            .timeout = ms(p->fetch_timeout_ms),
            .last_decision_after_have = verify + import,
            .n_special = t->n_special};
  for (guint i = 0; i < b->n_sources; i++) g.t0 = MIN(g.t0, b->source_t[i]);
  if (G_UNLIKELY(t->n_joining)) {
    for (guint32 i = net_joining_first_unavailable(t, g.t0); i < t->n_joining; i++) {
      guint32 v = t->join_node[i];
      g.done[v] = DONE_UNAVAILABLE;
      g.have[v] = HAVE_UNAVAILABLE;
    }
    /* A node that mined the block has it, synced or not. */
    for (guint i = 0; i < b->n_sources; i++)
      if (g.done[b->sources[i]] == DONE_UNAVAILABLE) {
        g.done[b->sources[i]] = DONE_NO;
        g.have[b->sources[i]] = SIM_TIME_MAX;
      }
  }
  guint32 remaining = stop_after;
  guint64 reached = 0;
  for (guint i = 0; i < b->n_sources; i++) relax_full(&g, b->sources[i], b->source_t[i]);
  SimTime last_source_t = g.t0;
  for (guint i = 0; i < b->n_sources; i++) last_source_t = MAX(last_source_t, b->source_t[i]);
  /* Each queue ends with UINT64_MAX (no step has that key), so its head needs no length check. */
  guint64 *fifo[2] = {w->fifo[0], w->fifo[1]};
  gsize fifo_head[2] = {0, 0}, fifo_len[2] = {0, 0};
  fifo[0][0] = fifo[1][0] = UINT64_MAX;
  for (;;) {
    /* The smallest of the queue heads and the heaps' tops (radix_min is UINT64_MAX when empty). */
    guint64 key = fifo[0][fifo_head[0]];
    int from = 0;
    if (fifo[1][fifo_head[1]] < key) key = fifo[1][fifo_head[1]], from = 1;
    if (w->radix_min < key) key = w->radix_min, from = 3;
    if (G_UNLIKELY(w->heap_len) && w->heap[0] < key) key = w->heap[0], from = 2;
    if (key == UINT64_MAX) break;
    if (from == 3)
      radix_pop(w);
    else if (from == 2)
      heap_pop(w);
    else
      fifo_head[from]++;
    SimTime now = g.t0 + (SimTime)(key >> (STEP_NODE_BITS + 2));
    guint32 v = (guint32)(key >> 2) & ((UINT32_C(1) << STEP_NODE_BITS) - 1);
    switch ((guint32)(key & 3)) {
    case STEP_HAVE: {
      if (g.done[v] || now != g.have[v]) break; /* superseded by an earlier arrival */
      g.done[v] = DONE_YES;
      reached++;
      gboolean source = FALSE;
      if (now <= last_source_t)
        for (guint i = 0; i < b->n_sources && !source; i++)
          source = b->sources[i] == v && b->source_t[i] == now;
      /* A miner's own block is already imported: push and announce at once (minedBroadcastLoop). Sources
       * are the first HAVE steps, so the queues stay sorted. */
      fifo[0][fifo_len[0]++] = step_key(&g, source ? now : now + verify, v, STEP_PUSH);
      fifo[1][fifo_len[1]++] = step_key(&g, source ? now : now + verify + import, v, STEP_ANNOUNCE);
      fifo[0][fifo_len[0]] = fifo[1][fifo_len[1]] = UINT64_MAX;
      if (v < stop_after && --remaining == 0) goto out;
      break;
    }
    case STEP_PUSH:
      geth_push(&g, v, now);
      break;
    case STEP_ANNOUNCE:
      geth_announce(&g, v, now);
      break;
    }
  }
out:
  w->reached = reached;
  w->messages = g.messages;
}

const RelayModel relay_geth = {
    .info = {.name = "geth-1.8.23", .family = "relay",
             .help = "eth/63 as Geth 1.8.23: push to sqrt(peers lacking it) after verification, announce the hash "
                     "to the rest after import; announced blocks are fetched after arriveTimeout",
             .params = geth_params, .n_params = G_N_ELEMENTS(geth_params), .params_size = sizeof(GethParams)},
    .propagate = geth_propagate,
    .import_ns = geth_import_ns,
};
