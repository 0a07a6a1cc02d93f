/* relay.c: block relay over the topology: Geth 1.8.23's eth/63 push-and-announce protocol, and the result
 * store (RelayWork) that every relay model reports through. */
#include "relay.h"

#include <math.h>
#include <string.h>

enum { STEP_HAVE = 0, STEP_PUSH = 1, STEP_ANNOUNCE = 2 };

typedef struct {
  SimTime t;
  guint32 node;
  guint32 kind;
} Step;

/* A step is one 64-bit key: time since the block's first source (40 bits of ns: 18 minutes), node (22
 * bits), kind (2 bits). Keys order steps by (time, node, kind), so ties never depend on insertion order. */
#define STEP_TIME_BITS 40
#define STEP_NODE_BITS 22
#define STEP_TIME_MAX ((UINT64_C(1) << STEP_TIME_BITS) - 1)

/* Per node, what the propagation needs (24 bytes, so 4000 nodes stay in L2), valid when epoch matches.
 * First pushes and announcements are only kept for the specials (vantage points, gateways): nobody reads
 * them for other nodes. */
typedef struct {
  SimTime have;        /* best known time of the full block; final once `done` */
  SimTime upload_free; /* when its upload link is free again */
  guint32 epoch;
  guint32 done;
} NodeState;

typedef struct {
  guint32 epoch;
  SimTime first_push; /* first full block received as a pushed block message */
  SimTime announce;   /* first announcement received */
} SpecialState;

/* Per directed edge v->u, stored in v's adjacency order so a node scans its own edges sequentially: one
 * 64-bit word: epoch (23 bits) | sent (1 bit: v sent u the block or an announcement) | when v heard from
 * u, in ns after the block's first source (40 bits; all ones: not heard). */
#define EDGE_EPOCH_BITS 23
#define EDGE_HEARD_BITS 40
#define EDGE_HEARD_NONE ((UINT64_C(1) << EDGE_HEARD_BITS) - 1)
#define EDGE_SENT_BIT (UINT64_C(1) << EDGE_HEARD_BITS)
#define EDGE_EPOCH_SHIFT (EDGE_HEARD_BITS + 1)
#define EDGE_EPOCH_MASK ((UINT64_C(1) << EDGE_EPOCH_BITS) - 1)

struct RelayWork {
  guint32 n_nodes;
  guint32 n_special;
  guint64 n_edges;
  guint32 epoch;
  NodeState *node;
  SpecialState *special;
  guint64 *edge;
  guint64 *heap; /* 4-ary min-heap of HAVE step keys */
  /* PUSH and ANNOUNCE steps come a fixed time after HAVE (verify; verify + import), so in HAVE order they
   * are already sorted: two FIFO queues of keys instead of heap entries. */
  guint64 *fifo[2];
  gsize fifo_head[2], fifo_len[2];
  gsize heap_len, heap_cap;
  SimTime t0;     /* time origin of the step keys and of edge times */
  guint64 *scratch; /* edge indices for choosing push targets */
  guint64 reached, messages;
  /* Another relay model's own scratch (relay_work_set_ext). */
  const void *ext_owner;
  gpointer ext;
  GDestroyNotify ext_free;
};

RelayWork *relay_work_new(const NetTopology *t) {
  RelayWork *w = g_new0(RelayWork, 1);
  w->n_nodes = t->n_nodes;
  w->n_special = t->n_special;
  w->n_edges = t->n_edges;
  w->node = g_new0(NodeState, t->n_nodes);
  w->special = g_new0(SpecialState, MAX(t->n_special, 1));
  w->edge = g_new0(guint64, MAX(t->n_edges, 1));
  w->heap_cap = 1024;
  w->heap = g_new(guint64, w->heap_cap);
  for (int i = 0; i < 2; i++) w->fifo[i] = g_new(guint64, 2 * (gsize)t->n_nodes + 1);
  guint32 max_deg = 0;
  for (guint32 v = 0; v < t->n_nodes; v++) max_deg = MAX(max_deg, t->adj_off[v + 1] - t->adj_off[v]);
  w->scratch = g_new(guint64, max_deg + 1);
  return w;
}

void relay_work_free(RelayWork *w) {
  if (!w) return;
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  g_free(w->node);
  g_free(w->special);
  g_free(w->edge);
  g_free(w->heap);
  g_free(w->fifo[0]);
  g_free(w->fifo[1]);
  g_free(w->scratch);
  g_free(w);
}

static inline NodeState *node_at(RelayWork *w, guint32 v) {
  NodeState *n = &w->node[v];
  if (n->epoch != w->epoch) {
    n->epoch = w->epoch;
    n->have = SIM_TIME_MAX;
    n->upload_free = 0;
    n->done = 0;
  }
  return n;
}

static inline SpecialState *special_at(RelayWork *w, guint32 v) {
  SpecialState *s = &w->special[v];
  if (s->epoch != w->epoch) {
    s->epoch = w->epoch;
    s->first_push = s->announce = SIM_TIME_MAX;
  }
  return s;
}

static inline guint64 edge_word(const RelayWork *w, guint64 e) {
  guint64 x = w->edge[e];
  return (x >> EDGE_EPOCH_SHIFT) == (w->epoch & EDGE_EPOCH_MASK) ? x : EDGE_HEARD_NONE;
}

/* Read-only views: no reset for entries not yet touched in this propagation. */
static inline SimTime edge_heard(const RelayWork *w, guint64 e) {
  guint64 rel = edge_word(w, e) & EDGE_HEARD_NONE;
  return rel == EDGE_HEARD_NONE ? SIM_TIME_MAX : w->t0 + (SimTime)rel;
}
static inline gboolean edge_sent(const RelayWork *w, guint64 e) { return (edge_word(w, e) & EDGE_SENT_BIT) != 0; }

static inline void edge_store(RelayWork *w, guint64 e, guint64 flags_and_heard) {
  w->edge[e] = (guint64)(w->epoch & EDGE_EPOCH_MASK) << EDGE_EPOCH_SHIFT | flags_and_heard;
}

static inline void mark_sent(RelayWork *w, guint64 e) { edge_store(w, e, edge_word(w, e) | EDGE_SENT_BIT); }

/* Records at the receiver that it heard from the sender of edge `e` at `t`. */
static inline void mark_heard(RelayWork *w, const NetTopology *t, guint64 e, SimTime at) {
  guint64 r = t->rev[e];
  guint64 x = edge_word(w, r);
  guint64 rel = at >= w->t0 && (guint64)(at - w->t0) < EDGE_HEARD_NONE ? (guint64)(at - w->t0) : EDGE_HEARD_NONE;
  if (rel < (x & EDGE_HEARD_NONE)) edge_store(w, r, (x & EDGE_SENT_BIT) | rel);
}

static inline const NodeState *node_peek(const RelayWork *w, guint32 v) {
  return w->node[v].epoch == w->epoch ? &w->node[v] : NULL;
}

SimTime relay_work_have(const RelayWork *w, guint32 v) {
  const NodeState *n = node_peek(w, v);
  return n && n->done ? n->have : SIM_TIME_MAX;
}
SimTime relay_work_announce(const RelayWork *w, guint32 v) {
  return v < w->n_special && w->special[v].epoch == w->epoch ? w->special[v].announce : SIM_TIME_MAX;
}
SimTime relay_work_first_push(const RelayWork *w, guint32 v) {
  return v < w->n_special && w->special[v].epoch == w->epoch ? w->special[v].first_push : SIM_TIME_MAX;
}
guint64 relay_work_reached(const RelayWork *w) { return w->reached; }
guint64 relay_work_messages(const RelayWork *w) { return w->messages; }

/* ---- the reporting API of relay models kept in other files ---- */

/* A new propagation: stamps make every old entry stale; the edge stamps have 23 bits, so all are cleared
 * once every 8 million blocks. */
static void next_epoch(RelayWork *w) {
  w->epoch++;
  if ((w->epoch & EDGE_EPOCH_MASK) == 0) {
    memset(w->node, 0, w->n_nodes * sizeof(NodeState));
    memset(w->special, 0, MAX(w->n_special, 1) * sizeof(SpecialState));
    memset(w->edge, 0, w->n_edges * sizeof(guint64));
    w->epoch++;
  }
}

void relay_work_begin(RelayWork *w) {
  g_return_if_fail(w != NULL);
  next_epoch(w);
  w->reached = w->messages = 0;
}

void relay_work_record(RelayWork *w, guint32 v, SimTime have, SimTime first_push, SimTime announce) {
  g_return_if_fail(w != NULL && v < w->n_nodes);
  NodeState *n = node_at(w, v);
  n->have = have;
  n->done = have != SIM_TIME_MAX;
  if (v < w->n_special) {
    SpecialState *sp = special_at(w, v);
    sp->first_push = first_push;
    sp->announce = announce;
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

/* ---- a 4-ary min-heap of step keys (hole-based sifting) ---- */

static void heap_push(RelayWork *w, SimTime t, guint32 node, guint32 kind) {
  guint64 dt = (guint64)(t - w->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  guint64 key = dt << (STEP_NODE_BITS + 2) | (guint64)node << 2 | kind;
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

static inline guint64 step_key(const RelayWork *w, SimTime t, guint32 node, guint32 kind) {
  guint64 dt = (guint64)(t - w->t0);
  if (dt > STEP_TIME_MAX) dt = STEP_TIME_MAX;
  return dt << (STEP_NODE_BITS + 2) | (guint64)node << 2 | kind;
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

static inline void relax_full(RelayWork *w, NodeState *n, guint32 v, SimTime t) {
  if (n->done || t >= n->have) return;
  n->have = t;
  heap_push(w, t, v, STEP_HAVE);
}

/* Exactness where it matters, speed elsewhere: a message whose arrival cannot change any node's first
 * arrival (its receiver already has the block, or an announcement whose fetch could not beat the
 * receiver's current best) only updates what the receiver knows, timed with the pair's mean latency
 * instead of a jitter draw, and is skipped when the receiver has no decision left that it could change.
 * Vantage points and gateways (the specials) always get exact draws. */
static void geth_push(const GethParams *p, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                      SimRng *rng, RelayWork *w, guint32 v, SimTime now) {
  guint64 n = 0;
  for (guint64 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++)
    if (edge_heard(w, e) > now) w->scratch[n++] = e; /* the peer has not told us it has it */
  if (n == 0) return;
  guint64 k = (guint64)sqrt((double)n); /* exact floor for n < 2^52 */
  k = MIN(n, MAX(k, (guint64)p->push_min));
  SimTime q = now;
  for (guint64 i = 0; i < k; i++) {
    guint64 j = i + sim_rng_below(rng, n - i);
    guint64 e = w->scratch[j];
    w->scratch[j] = w->scratch[i];
    w->scratch[i] = e;
    guint32 to = t->adj[e];
    NodeState *tn = node_at(w, to);
    q += net_edge_transfer_ns(t, e, b->size_bytes);
    mark_sent(w, e);
    w->messages++;
    SpecialState *sp = to < t->n_special ? special_at(w, to) : NULL;
    /* No draw when the push cannot be first: the receiver already has (or will sooner get) the block,
     * and for a vantage point, its first block message is earlier still. */
    if (q + t->lat_floor_ns[e] >= MIN(tn->have, sp ? sp->first_push : SIM_TIME_MAX)) {
      mark_heard(w, t, e, q + t->lat_mean_ns[e]);
      continue;
    }
    SimTime arr = q + net_edge_latency(gp, t, e, rng);
    mark_heard(w, t, e, arr);
    if (sp && arr < sp->first_push) sp->first_push = arr;
    relax_full(w, tn, to, arr);
  }
  node_at(w, v)->upload_free = q;
}

static void geth_announce(const GethParams *p, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                          SimRng *rng, RelayWork *w, guint32 v, SimTime now, SimTime last_decision_after_have) {
  SimTime wait = ms(p->arrive_timeout_ms), timeout = ms(p->fetch_timeout_ms);
  SimTime upload_free = node_at(w, v)->upload_free;
  for (guint64 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++) {
    if (edge_sent(w, e) || edge_heard(w, e) <= now) continue; /* pushed there, or the peer has it */
    mark_sent(w, e);
    guint32 to = t->adj[e];
    NodeState *tn = node_at(w, to);
    w->messages++;
    gboolean special = to < t->n_special;
    if (tn->done) {
      /* Only what `to` knows changes, and only if it still has a decision to take after this arrives; a
       * vantage point's first announcement is earlier than its block or it came with no push at all. */
      SimTime a = now + t->lat_mean_ns[e];
      if (a <= tn->have + last_decision_after_have) mark_heard(w, t, e, a);
      continue;
    }
    /* The fetch cannot complete before now + arriveTimeout: no draw if that cannot beat what `to` has (and,
     * for a vantage point, if this cannot be its first announcement either). */
    SpecialState *sp = special ? special_at(w, to) : NULL;
    if (tn->have <= now + wait + 4 * t->lat_floor_ns[e] &&
        (!sp || now + t->lat_floor_ns[e] >= MIN(sp->announce, sp->first_push))) {
      mark_heard(w, t, e, now + t->lat_mean_ns[e]);
      continue;
    }
    SimTime lat = net_edge_latency(gp, t, e, rng);
    SimTime a = now + lat;
    mark_heard(w, t, e, a);
    if (sp && a < sp->announce) sp->announce = a;
    if (tn->done) continue;
    /* The peer's fetcher requests the block arriveTimeout after the announcement: header request and
     * reply, body request, then the body over our upload link; an unanswered request costs fetchTimeout
     * and is retried. The latency draw is reused for the exchange's four messages. */
    SimTime req = a + wait;
    if (p->fetch_fail_prob > 0)
      while (sim_rng_uniform(rng) < p->fetch_fail_prob) req += timeout;
    SimTime start = MAX(req + 3 * lat, upload_free);
    relax_full(w, tn, to, start + net_edge_transfer_ns(t, e, b->size_bytes) + lat);
  }
}

static void geth_propagate(const void *params, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                           guint32 stop_after, SimRng *rng, RelayWork *w) {
  const GethParams *p = params;
  next_epoch(w);
  w->heap_len = 0;
  w->reached = w->messages = 0;
  w->t0 = SIM_TIME_MAX;
  for (guint i = 0; i < b->n_sources; i++) w->t0 = MIN(w->t0, b->source_t[i]);
  g_return_if_fail(t->n_nodes < (UINT32_C(1) << STEP_NODE_BITS));
  SimTime verify = ms(p->verify_ms), import = geth_import_ns(p, b->gas_used);
  guint32 remaining = stop_after;
  for (guint i = 0; i < b->n_sources; i++) relax_full(w, node_at(w, b->sources[i]), b->sources[i], b->source_t[i]);
  w->fifo_head[0] = w->fifo_head[1] = w->fifo_len[0] = w->fifo_len[1] = 0;
  for (;;) {
    /* The smallest of the heap top and the two queue heads. */
    guint64 key = UINT64_MAX;
    int from = -1;
    if (w->heap_len) key = w->heap[0], from = 2;
    for (int q = 0; q < 2; q++)
      if (w->fifo_head[q] < w->fifo_len[q] && w->fifo[q][w->fifo_head[q]] < key) key = w->fifo[q][w->fifo_head[q]], from = q;
    if (from < 0) break;
    if (from == 2)
      heap_pop(w);
    else
      w->fifo_head[from]++;
    Step s = {.t = w->t0 + (SimTime)(key >> (STEP_NODE_BITS + 2)),
              .node = (guint32)(key >> 2) & ((UINT32_C(1) << STEP_NODE_BITS) - 1),
              .kind = (guint32)(key & 3)};
    guint32 v = s.node;
    switch (s.kind) {
    case STEP_HAVE: {
      NodeState *n = node_at(w, v);
      if (n->done || s.t != n->have) break; /* superseded by an earlier arrival */
      n->done = 1;
      w->reached++;
      gboolean source = FALSE;
      for (guint i = 0; i < b->n_sources && !source; i++) source = b->sources[i] == v && b->source_t[i] == s.t;
      /* A miner's own block is already imported: push and announce at once (minedBroadcastLoop). Sources
       * are the first HAVE steps, so the queues stay sorted. */
      w->fifo[0][w->fifo_len[0]++] = step_key(w, source ? s.t : s.t + verify, v, STEP_PUSH);
      w->fifo[1][w->fifo_len[1]++] = step_key(w, source ? s.t : s.t + verify + import, v, STEP_ANNOUNCE);
      if (v < stop_after && --remaining == 0) return;
      break;
    }
    case STEP_PUSH:
      geth_push(p, gp, t, b, rng, w, v, s.t);
      break;
    case STEP_ANNOUNCE:
      geth_announce(p, gp, t, b, rng, w, v, s.t, verify + import);
      break;
    }
  }
}

const RelayModel relay_geth = {
    .info = {.name = "geth-1.8.23", .family = "relay",
             .help = "eth/63 as Geth 1.8.23: push to sqrt(peers lacking it) after verification, announce the hash "
                     "to the rest after import; announced blocks are fetched after arriveTimeout",
             .params = geth_params, .n_params = G_N_ELEMENTS(geth_params), .params_size = sizeof(GethParams)},
    .propagate = geth_propagate,
    .import_ns = geth_import_ns,
};
