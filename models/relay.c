/* relay.c: block relay over the topology: Geth 1.8.23's eth/63 push-and-announce protocol as a windowed
 * kernel over fixed groups of nodes (one or more threads, the same results), and the result store
 * (RelayWork) that every relay model reports through. */
#include "relay.h"

#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

G_DEFINE_QUARK(relay-error-quark, relay_error)

enum { STEP_HAVE = 0, STEP_PUSH = 1, STEP_ANNOUNCE = 2 };

/* RelayWork.done: a node's full-block time is final (YES), or it is a joining node not synced when the
 * block left (UNAVAILABLE, net_joining_first_unavailable()). Such a node is marked done with a have time
 * far in the past before the loop starts: every test the kernel already makes then treats it as a node
 * that needs nothing (a push to it is sent and lost, without a latency draw; an announcement likewise),
 * and it never takes a step, so it relays nothing; no test is added to the loop. */
enum { DONE_NO = 0, DONE_YES = 1, DONE_UNAVAILABLE = 2 };
#define HAVE_UNAVAILABLE (-(SIM_TIME_MAX / 4))

/* A step is one 64-bit key: time since the block's first source (40 bits of ns: 18 minutes), node (22
 * bits, the kernel's own numbering, see RelayGroups.order), kind (2 bits). Keys order steps by (time,
 * node, kind), so ties never depend on insertion order. */
#define STEP_TIME_BITS 40
#define STEP_NODE_BITS 22
#define STEP_KEY_SHIFT (STEP_NODE_BITS + 2)
#define STEP_TIME_MAX ((UINT64_C(1) << STEP_TIME_BITS) - 1)
#define STEP_NODE_MASK ((UINT32_C(1) << STEP_NODE_BITS) - 1)

/* Everything the Geth kernel reads and writes of directed edge e = v->u, in one 16-byte record stored in
 * v's adjacency order, so that scanning a node's edges brings in all it needs:
 *  - word: cross (bit 63: u is in another group) | u (bits 42..62) | lazy (bit 41) | sent (bit 40: v sent
 *    u the block or an announcement) | heard (bits 0..39): when v heard from u, in ns after the block's
 *    first source (all ones: not heard). u sends v at most one message per block (a push or an
 *    announcement), arriving at its send time plus a latency drawn from the stream of (block, edge u->v):
 *    a pure function of the block and the edge. Where that latency was not needed when the message was
 *    applied (the message could not be first at v), the draw is left for later: lazy is set and heard holds
 *    the send time plus the link's floor, a lower bound; v's first decision at or after that bound draws it
 *    (the same value) and stores the arrival. So what v knows is exact, whoever applied the message and
 *    whenever. The sent, lazy and heard bits are reset at the start of each propagation. Only v's worker
 *    writes the record: v's sends, and what v hears.
 *  - rev: the reverse edge u->v; cls: the link class (edges with the same latency mean, floor and
 *    bandwidth share one). */
#define EDGE_HEARD_BITS 40
#define EDGE_HEARD_NONE ((UINT64_C(1) << EDGE_HEARD_BITS) - 1)
#define EDGE_SENT_BIT (UINT64_C(1) << EDGE_HEARD_BITS)
#define EDGE_LAZY_BIT (UINT64_C(1) << (EDGE_HEARD_BITS + 1))
#define EDGE_TO_SHIFT (EDGE_HEARD_BITS + 2)
#define EDGE_TO_BITS 21
#define EDGE_TO_MASK ((UINT64_C(1) << EDGE_TO_BITS) - 1)
#define EDGE_CROSS_BIT (UINT64_C(1) << 63)
#define EDGE_STATE_MASK (EDGE_SENT_BIT | EDGE_HEARD_NONE)
#define EDGE_RESET_MASK (EDGE_LAZY_BIT | EDGE_SENT_BIT | EDGE_HEARD_NONE)

/* Pruning keeps each node's least floor path to each target (4 bytes each): a stop with more targets than
 * fit in this many entries is not pruned (its watched values are as exact, the relay just does more). */
#define PRUNE_MAX_ENTRIES (UINT64_C(32) << 20)

/* Kernel.stop_prev before the first window's end. */
#define STOP_NO_PREV INT64_MIN

/* Spin this long at a barrier, and between blocks, before sleeping on a futex. */
#define SPIN_NS 20000

typedef struct Kernel Kernel;

struct RelayWork {
  guint32 n_nodes;
  guint32 n_special;
  guint64 n_edges;
  /* Results of the last propagation, reset by every propagation: best known time of the full block (final
   * once `done`), first block message and first announcement received. Indexed by loc[node] when `loc` is
   * set (the Geth kernel's own node order), else by node (models reporting through relay_work_record). */
  SimTime *have;
  guint8 *done;
  SimTime *first_push;
  SimTime *announce;
  const guint32 *loc;
  guint64 reached, messages;
  guint threads;       /* asked for (relay_work_set_threads) */
  RelayRunMode run;
  RelayGroups *groups; /* the Geth kernel's groups (owned) */
  Kernel *kernel;      /* the Geth kernel's state, built at its first propagation */
  RelayWorkStats stats;
  /* Another relay model's own scratch (relay_work_set_ext). */
  const void *ext_owner;
  gpointer ext;
  GDestroyNotify ext_free;
};

static void kernel_free(Kernel *k);

/* Every node unreached, no special heard anything, counts zero (node order). */
static void reset_nodes(RelayWork *w) {
  w->loc = NULL;
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
  w->first_push = g_new(SimTime, MAX(t->n_nodes, 1));
  w->announce = g_new(SimTime, MAX(t->n_nodes, 1));
  w->threads = 1;
  reset_nodes(w);
  return w;
}

void relay_work_free(RelayWork *w) {
  if (!w) return;
  kernel_free(w->kernel);
  relay_groups_free(w->groups);
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  g_free(w->have);
  g_free(w->done);
  g_free(w->first_push);
  g_free(w->announce);
  g_free(w);
}

static inline guint32 result_index(const RelayWork *w, guint32 v) {
  return w->loc ? w->loc[v] : v;
}

SimTime relay_work_have(const RelayWork *w, guint32 v) {
  guint32 i = result_index(w, v);
  return w->done[i] == DONE_YES ? w->have[i] : SIM_TIME_MAX;
}
SimTime relay_work_announce(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->announce[result_index(w, v)] : SIM_TIME_MAX;
}
SimTime relay_work_first_push(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->first_push[result_index(w, v)] : SIM_TIME_MAX;
}
guint64 relay_work_reached(const RelayWork *w) { return w->reached; }
guint64 relay_work_messages(const RelayWork *w) { return w->messages; }

/* ---- the reporting API of relay models kept in other files ---- */

gboolean relay_stop_agree(const RelayStop *stop, const RelayWork *a, const RelayWork *b) {
  g_return_val_if_fail(a->n_nodes == b->n_nodes, FALSE);
  guint32 n = stop && stop->n_nodes ? MIN(stop->n_nodes, a->n_nodes) : a->n_nodes;
  if (!stop || !stop->n_nodes) {
    for (guint32 v = 0; v < n; v++)
      if (relay_work_have(a, v) != relay_work_have(b, v) || relay_work_first_push(a, v) != relay_work_first_push(b, v) ||
          relay_work_announce(a, v) != relay_work_announce(b, v))
        return FALSE;
    return TRUE;
  }
  g_autofree SimTime *least = g_new(SimTime, 2 * (gsize)MAX(stop->n_groups, 1));
  for (guint32 i = 0; i < 2 * stop->n_groups; i++)
    least[i] = SIM_TIME_MAX;
  for (guint32 v = 0; v < n; v++) {
    guint32 grp = stop->group ? stop->group[v] : v;
    if (grp == RELAY_STOP_NONE || grp >= stop->n_groups) continue;
    least[2 * grp] = MIN(least[2 * grp], relay_work_have(a, v));
    least[2 * grp + 1] = MIN(least[2 * grp + 1], relay_work_have(b, v));
  }
  for (guint32 i = 0; i < stop->n_groups; i++)
    if (least[2 * i] != least[2 * i + 1]) return FALSE;
  for (guint32 v = 0; v < MIN(stop->n_messages, n); v++) {
    SimTime pa = relay_work_first_push(a, v), aa = relay_work_announce(a, v);
    SimTime pb = relay_work_first_push(b, v), ab = relay_work_announce(b, v);
    if (stop->first_message_only ? MIN(pa, aa) != MIN(pb, ab) || (pa <= aa) != (pb <= ab) : pa != pb || aa != ab)
      return FALSE;
  }
  return TRUE;
}

RelayStop relay_stop_specials(const NetGeoParams *gp, const NetTopology *t, const guint *pool_miners,
                               guint32 *group) {
  guint32 n_pools = 0;
  for (guint32 v = 0; v < t->n_special && v < gp->n_specials; v++)
    if (gp->specials[v].pool != NET_NO_POOL) n_pools = MAX(n_pools, gp->specials[v].pool + 1);
  guint32 n_groups = n_pools;
  for (guint32 v = 0; v < t->n_special; v++) {
    guint pool = v < gp->n_specials ? gp->specials[v].pool : NET_NO_POOL;
    if (pool == NET_NO_POOL)
      group[v] = RELAY_STOP_NONE;
    else if (pool_miners && pool_miners[pool] > 1)
      group[v] = n_groups++; /* each miner of the pool mines behind one gateway of its own */
    else
      group[v] = pool;
  }
  return (RelayStop){.n_nodes = t->n_special, .group = group, .n_groups = n_groups, .n_messages = gp->n_vantages};
}

void relay_work_begin(RelayWork *w) {
  g_return_if_fail(w != NULL);
  reset_nodes(w);
}

void relay_work_record(RelayWork *w, guint32 v, SimTime have, SimTime first_push, SimTime announce) {
  g_return_if_fail(w != NULL && v < w->n_nodes && w->loc == NULL);
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

void relay_work_get_stats(const RelayWork *w, RelayWorkStats *st) {
  g_return_if_fail(w != NULL && st != NULL);
  *st = w->stats;
  if (w->groups) {
    st->groups = relay_groups_count(w->groups);
    st->largest_group = relay_groups_largest(w->groups);
    st->lookahead_ns = relay_groups_lookahead(w->groups, &st->lookahead_from, &st->lookahead_to);
  } else {
    st->lookahead_ns = SIM_TIME_MAX;
  }
}

/* ---- fixed groups of nodes ---- */

struct RelayGroups {
  guint32 n_nodes;
  guint32 n_groups; /* non-empty */
  guint32 largest;
  guint32 *group_of;    /* per node: the group's position in the order below */
  guint32 *order;       /* the kernel's node order: groups one after another, nodes ascending inside */
  guint32 *loc;         /* per node: its position in `order` */
  guint32 *group_start; /* n_groups + 1: where each group starts in `order` */
  guint64 *prefix;      /* n_groups + 1: work of the groups before (sum over their nodes of degree + 8) */
  SimTime lookahead;
  guint32 la_from, la_to;
};

void relay_groups_free(RelayGroups *g) {
  if (!g) return;
  g_free(g->group_of);
  g_free(g->order);
  g_free(g->loc);
  g_free(g->group_start);
  g_free(g->prefix);
  g_free(g);
}

guint32 relay_groups_count(const RelayGroups *g) {
  return g->n_groups;
}
guint32 relay_groups_largest(const RelayGroups *g) {
  return g->largest;
}
guint32 relay_groups_of(const RelayGroups *g, guint32 node) {
  g_return_val_if_fail(node < g->n_nodes, 0);
  return g->group_of[node];
}
SimTime relay_groups_lookahead(const RelayGroups *g, guint32 *from, guint32 *to) {
  if (from) *from = g->la_from;
  if (to) *to = g->la_to;
  return g->lookahead;
}

guint relay_groups_threads(const RelayGroups *g, guint threads) {
  return MAX(1, MIN(MIN(threads, g->n_groups), RELAY_MAX_THREADS));
}

/* The first group of each of n threads (cut[n] = n_groups): contiguous runs of about equal work, each
 * with at least one group. Depends on the groups and n only. */
static void groups_cut(const RelayGroups *g, guint n, guint32 *cut) {
  cut[0] = 0;
  cut[n] = g->n_groups;
  guint64 total = g->prefix[g->n_groups];
  guint32 at = 0;
  for (guint i = 1; i < n; i++) {
    guint64 target = (guint64)((unsigned __int128)total * i / n);
    while (at < g->n_groups && g->prefix[at] < target)
      at++;
    at = MAX(at, cut[i - 1] + 1);
    at = MIN(at, g->n_groups - (n - i));
    cut[i] = at;
  }
}

guint relay_groups_thread_of(const RelayGroups *g, guint threads, guint32 group) {
  g_return_val_if_fail(group < g->n_groups, 0);
  guint n = relay_groups_threads(g, threads);
  guint32 cut[RELAY_MAX_THREADS + 1];
  groups_cut(g, n, cut);
  guint i = 0;
  while (i + 1 < n && cut[i + 1] <= group)
    i++;
  return i;
}

static guint32 uf_find(guint32 *p, guint32 x) {
  while (p[x] != x) {
    p[x] = p[p[x]];
    x = p[x];
  }
  return x;
}

/* Joins the groups of a and b; returns the size of the joined group. */
static guint32 uf_union(guint32 *p, guint32 *size, guint32 a, guint32 b) {
  a = uf_find(p, a);
  b = uf_find(p, b);
  if (a == b) return size[a];
  if (size[a] < size[b]) {
    guint32 x = a;
    a = b;
    b = x;
  }
  p[b] = a;
  size[a] += size[b];
  return size[a];
}

typedef struct {
  guint64 key;
  guint32 group;
} GroupKey;

static int group_key_cmp(const void *a, const void *b) {
  const GroupKey *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* Builds the order, positions, sizes, work prefix and lookahead from a grouping (`rep[v]`: any id per group,
 * < n_nodes). Groups are laid out in a pseudo-random order of their least node id (so that contiguous runs
 * of groups, a thread's share, mix the regions), their nodes ascending. */
static RelayGroups *groups_build(const NetTopology *t, const guint32 *rep) {
  guint32 n = t->n_nodes;
  RelayGroups *g = g_new0(RelayGroups, 1);
  g->n_nodes = n;
  g->group_of = g_new(guint32, MAX(n, 1));
  g->order = g_new(guint32, MAX(n, 1));
  g->loc = g_new(guint32, MAX(n, 1));
  g_autofree guint32 *first = g_new(guint32, MAX(n, 1)); /* per rep: least node, or UINT32_MAX */
  g_autofree guint32 *count = g_new0(guint32, MAX(n, 1));
  for (guint32 v = 0; v < n; v++)
    first[v] = UINT32_MAX;
  for (guint32 v = 0; v < n; v++) {
    if (first[rep[v]] == UINT32_MAX) first[rep[v]] = v;
    count[rep[v]]++;
  }
  g_autofree GroupKey *keys = g_new(GroupKey, MAX(n, 1));
  guint32 ng = 0;
  for (guint32 r = 0; r < n; r++)
    if (first[r] != UINT32_MAX)
      keys[ng++] = (GroupKey){.key = sim_mix64(first[r] ^ UINT64_C(0x5851F42D4C957F2D)), .group = r};
  qsort(keys, ng, sizeof *keys, group_key_cmp);
  g->n_groups = ng;
  g->group_start = g_new(guint32, ng + 1);
  g->prefix = g_new(guint64, ng + 1);
  g_autofree guint32 *pos = g_new(guint32, MAX(n, 1)); /* per rep: its position */
  guint32 at = 0;
  for (guint32 i = 0; i < ng; i++) {
    pos[keys[i].group] = i;
    g->group_start[i] = at;
    at += count[keys[i].group];
    g->largest = MAX(g->largest, count[keys[i].group]);
  }
  g->group_start[ng] = at;
  g_autofree guint32 *fill = g_new0(guint32, ng + 1);
  for (guint32 v = 0; v < n; v++) { /* ascending: nodes ascending inside each group */
    guint32 p = pos[rep[v]];
    g->group_of[v] = p;
    guint32 l = g->group_start[p] + fill[p]++;
    g->order[l] = v;
    g->loc[v] = l;
  }
  g->prefix[0] = 0;
  for (guint32 i = 0; i < ng; i++) {
    guint64 w = 0;
    for (guint32 l = g->group_start[i]; l < g->group_start[i + 1]; l++) {
      guint32 v = g->order[l];
      w += t->adj_off[v + 1] - t->adj_off[v] + 8;
    }
    g->prefix[i + 1] = g->prefix[i] + w;
  }
  g->lookahead = SIM_TIME_MAX;
  g->la_from = g->la_to = 0;
  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
      if (g->group_of[u] != g->group_of[t->adj[e]] && t->lat_floor_ns[e] < g->lookahead) {
        g->lookahead = t->lat_floor_ns[e];
        g->la_from = u;
        g->la_to = t->adj[e];
      }
  return g;
}

static int edge_floor_cmp(const void *a, const void *b, void *user) {
  const SimTime *f = user;
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  if (f[x] != f[y]) return f[x] < f[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

RelayGroups *relay_groups_new(const NetTopology *t) {
  guint32 n = t->n_nodes;
  guint32 cap = MAX(1, n / RELAY_GROUPS_BALANCE);
  g_autofree guint32 *edges = g_new(guint32, MAX(t->n_edges, 1));
  for (guint64 e = 0; e < t->n_edges; e++)
    edges[e] = (guint32)e;
  g_qsort_with_data(edges, (gint)t->n_edges, sizeof *edges, edge_floor_cmp, t->lat_floor_ns);
  g_autofree guint32 *src = g_new(guint32, MAX(t->n_edges, 1));
  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
      src[e] = u;
  /* First pass: the floor value whose links would make a group too big (links of floor 0 always join). */
  g_autofree guint32 *p = g_new(guint32, MAX(n, 1));
  g_autofree guint32 *size = g_new(guint32, MAX(n, 1));
  for (guint32 v = 0; v < n; v++)
    p[v] = v, size[v] = 1;
  SimTime cutoff = SIM_TIME_MAX;
  for (guint64 i = 0; i < t->n_edges;) {
    SimTime f = t->lat_floor_ns[edges[i]];
    guint32 largest = 0;
    guint64 j = i;
    for (; j < t->n_edges && t->lat_floor_ns[edges[j]] == f; j++)
      largest = MAX(largest, uf_union(p, size, src[edges[j]], t->adj[edges[j]]));
    if (f > 0 && largest > cap) {
      cutoff = f;
      break;
    }
    i = j;
  }
  /* Second pass: join the links below the cutoff. */
  for (guint32 v = 0; v < n; v++)
    p[v] = v, size[v] = 1;
  for (guint64 i = 0; i < t->n_edges && t->lat_floor_ns[edges[i]] < cutoff; i++)
    uf_union(p, size, src[edges[i]], t->adj[edges[i]]);
  for (guint32 v = 0; v < n; v++)
    p[v] = uf_find(p, v);
  return groups_build(t, p);
}

RelayGroups *relay_groups_new_assigned(const NetTopology *t, const guint32 *group_of, guint32 n_groups,
                                       GError **error) {
  for (guint32 v = 0; v < t->n_nodes; v++)
    g_return_val_if_fail(group_of[v] < n_groups, NULL);
  for (guint32 u = 0; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      if (group_of[u] != group_of[v] && t->lat_floor_ns[e] <= 0) {
        g_set_error(error, RELAY_ERROR, RELAY_ERROR_ZERO_LOOKAHEAD,
                    "relay groups: the link from node %u (group %u) to node %u (group %u) has a least "
                    "latency of 0 ns: a link between two groups needs a positive one (put both nodes in one "
                    "group)",
                    u, group_of[u], v, group_of[v]);
        return NULL;
      }
    }
  /* A representative node per group id: the first node that has it. */
  g_autofree guint32 *first = g_new(guint32, MAX(n_groups, 1));
  for (guint32 i = 0; i < n_groups; i++)
    first[i] = UINT32_MAX;
  g_autofree guint32 *rep = g_new(guint32, MAX(t->n_nodes, 1));
  for (guint32 v = 0; v < t->n_nodes; v++) {
    if (first[group_of[v]] == UINT32_MAX) first[group_of[v]] = v;
    rep[v] = first[group_of[v]];
  }
  return groups_build(t, rep);
}

/* ---- a thread's queue of steps ----
 * HAVE step keys. A step only creates later steps, so keys mostly arrive above the last one taken: a radix
 * heap (bucket b > 0 holds the keys whose highest bit differing from `radix_last` is bit b - 1; the keys of
 * the lowest bucket are spread over lower ones when it is taken) with its minimum kept up to date; faster
 * here than a 4-ary heap (branchy pops) or a calendar queue (bursts of equal-time fetches). The rare key at
 * or below the last one taken (zero latency and transfer to a lower node, or an arrival from another group
 * below a superseded key already taken) goes to a 4-ary min-heap. PUSH and ANNOUNCE steps come a fixed time
 * after HAVE (verify; verify + import), so in HAVE order they are already sorted: two FIFO queues. */

typedef struct {
  guint64 *key;
  guint32 len, cap;
} RadixBucket;

typedef struct {
  RadixBucket bucket[65];
  guint64 bucket_mask; /* bit b - 1: bucket b not empty */
  guint64 radix_last, radix_min;
  guint64 *heap;
  gsize heap_len, heap_cap;
} StepQueue;

static void queue_init(StepQueue *q) {
  memset(q, 0, sizeof *q);
  q->heap_cap = 1024;
  q->heap = g_new(guint64, q->heap_cap);
  q->radix_min = UINT64_MAX;
}

static void queue_clear(StepQueue *q) {
  for (int b = 0; b < 65; b++)
    g_free(q->bucket[b].key);
  g_free(q->heap);
}

static void queue_reset(StepQueue *q) {
  for (guint64 m = q->bucket_mask; m; m &= m - 1)
    q->bucket[__builtin_ctzll(m) + 1].len = 0;
  q->bucket_mask = 0;
  q->radix_last = 0;
  q->radix_min = UINT64_MAX;
  q->heap_len = 0;
}

static void heap_push_key(StepQueue *q, guint64 key) {
  if (q->heap_len == q->heap_cap) {
    q->heap_cap *= 2;
    q->heap = g_renew(guint64, q->heap, q->heap_cap);
  }
  gsize i = q->heap_len++;
  while (i > 0) {
    gsize p = (i - 1) / 4;
    if (q->heap[p] <= key) break;
    q->heap[i] = q->heap[p];
    i = p;
  }
  q->heap[i] = key;
}

static guint64 heap_pop(StepQueue *q) {
  guint64 top = q->heap[0];
  guint64 last = q->heap[--q->heap_len];
  gsize n = q->heap_len, i = 0;
  for (;;) {
    gsize c = 4 * i + 1;
    if (c >= n) break;
    gsize best = c;
    gsize end = MIN(c + 4, n);
    for (gsize k = c + 1; k < end; k++)
      if (q->heap[k] < q->heap[best]) best = k;
    if (q->heap[best] >= last) break;
    q->heap[i] = q->heap[best];
    i = best;
  }
  if (n) q->heap[i] = last;
  return top;
}

static inline void bucket_append(StepQueue *q, int b, guint64 key) {
  RadixBucket *k = &q->bucket[b];
  if (G_UNLIKELY(k->len == k->cap)) {
    k->cap = k->cap ? 2 * k->cap : 64;
    k->key = g_renew(guint64, k->key, k->cap);
  }
  k->key[k->len++] = key;
  q->bucket_mask |= UINT64_C(1) << (b - 1);
}

static inline void radix_push(StepQueue *q, guint64 key) {
  if (G_UNLIKELY(key <= q->radix_last)) {
    heap_push_key(q, key);
    return;
  }
  bucket_append(q, 64 - __builtin_clzll(key ^ q->radix_last), key);
  if (key < q->radix_min) q->radix_min = key;
}

/* Takes radix_min (the radix heap must not be empty) and finds the next minimum. */
static void radix_pop(StepQueue *q) {
  guint64 m = q->radix_min;
  int i = __builtin_ctzll(q->bucket_mask) + 1; /* the minimum is in the lowest bucket */
  RadixBucket *src = &q->bucket[i];
  const guint64 *keys = src->key;
  guint32 len = src->len;
  src->len = 0;
  /* In locals: the key stores below could otherwise alias them. */
  guint64 mask = q->bucket_mask & ~(UINT64_C(1) << (i - 1));
  q->radix_last = m;
  guint64 next = UINT64_MAX;
  /* Every other key of bucket i differs from m below bit i - 1: it moves to a lower bucket, all of which
   * are empty, so the next minimum is among the moved keys. */
  for (guint32 j = 0; j < len; j++) {
    guint64 k = keys[j];
    if (k == m) continue;
    int b = 64 - __builtin_clzll(k ^ m);
    RadixBucket *d = &q->bucket[b];
    if (G_UNLIKELY(d->len == d->cap)) {
      d->cap = d->cap ? 2 * d->cap : 64;
      d->key = g_renew(guint64, d->key, d->cap);
    }
    d->key[d->len++] = k;
    mask |= UINT64_C(1) << (b - 1);
    next = MIN(next, k);
  }
  q->bucket_mask = mask;
  if (next == UINT64_MAX && mask) {
    const RadixBucket *low = &q->bucket[__builtin_ctzll(q->bucket_mask) + 1];
    for (guint32 j = 0; j < low->len; j++)
      if (low->key[j] < next) next = low->key[j];
  }
  q->radix_min = next;
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
  gboolean draw_all;
  gboolean prune;
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
    {.name = "draw_all", .type = SIM_PARAM_BOOL, .def = 0, .offset = offsetof(GethParams, draw_all),
     .help = "draw every message's latency when it is applied, none lazily (slower; the same results: the "
             "lazy draws are exact, tests/test_relay.c compares both)"},
    {.name = "prune", .type = SIM_PARAM_BOOL, .def = 1, .offset = offsetof(GethParams, prune),
     .help = "with a stop (the run's relay), skip a node's steps once none can reach a watched value in time "
             "(relay.h; exact: tests/test_relay.c compares with and without)"},
};

static SimTime ms(double v) { return sim_time_from_s(v / 1e3); }

static SimTime geth_import_ns(const void *params, double gas_used) {
  const GethParams *p = params;
  return ms(p->import_base_ms + p->import_ms_per_mgas * gas_used / 1e6);
}

/* ---- the windowed kernel ---- */

/* The static part of an edge record (the word, the part a block writes, is in an array of its own, so that
 * the per-block reset and the scans that only test the word run over 8 bytes per edge). */
typedef struct {
  guint32 rev;
  guint32 cls;
} EdgeCold;

typedef struct {
  SimTime mean_ns;
  SimTime floor_ns;
  SimTime transfer_ns; /* of the block being relayed */
  double tx_ns_per_byte;
  NetLatencyDraw draw;
} LinkClass;

/* Per link class, "pareto" only: the latency at u = j / QLAT_STEPS (j = 0: never reached, SIM_TIME_MAX),
 * which falls as u grows: a uniform's top bits bracket its latency (edge_seen). Apart from LinkClass, which
 * every message reads. */
typedef struct {
  SimTime at[65];
} QLat;

#define QLAT_BITS 6
#define QLAT_STEPS (1u << QLAT_BITS)
/* Slack for the brackets: the fast log2/exp2 are accurate to a few ulps, far below a ns at these scales. */
#define QLAT_SLACK_NS 16

/* A message to another worker, kept until the window's end, as its sender's thread wrote it: when it left
 * (a push: when its last byte left; an announcement: when it was sent), its kind and receiver, the reverse
 * edge (receiver -> sender; it gives the receiver's thread the edge's random stream and the sender) and
 * the edge's class: the receiver's thread reads nothing else of the sender's but, for an announcement, when
 * the sender's upload link is free (set by its push, before). */
typedef struct {
  guint64 word; /* sent - t0 (bits 0..39, saturated) | receiver (bits 40..61) | announcement (bit 62) */
  guint32 rev;
  guint32 cls;
} Msg;

#define MSG_NODE_MASK ((UINT32_C(1) << STEP_NODE_BITS) - 1)
#define MSG_TIME_MASK ((UINT64_C(1) << 40) - 1)
#define MSG_TO_SHIFT 40
#define MSG_ANNOUNCE_BIT (UINT64_C(1) << 62)

/* Worker s's messages to worker d (s != d). Every directed edge carries at most one message per block (a
 * node pushes at most once, and announces only over edges it did not push over), so the capacity is the
 * number of edges from s's nodes to d's. Only s appends; at the end of window k it publishes the length in
 * pub[k & 1], which d reads after the barrier (d is done with pub[(k - 1) & 1] before s can write it
 * again). */
typedef struct {
  _Alignas(64) Msg *msg;
  guint32 cap;
  guint32 len;
  guint32 pub[2];
} Mailbox;

/* What a thread publishes at the barrier: a lower bound on every step it may still take or cause, and its
 * specials still to reach. */
/* What a thread publishes at the barrier: a lower bound on every step its workers may still take or cause,
 * their specials still to reach, and their work in the window (steps, messages sent and messages sent to
 * other groups, which cost as much again to apply, wherever they are applied:
 * the sum, and the busiest worker's). */
typedef struct {
  _Alignas(64) SimTime bound;
  guint64 work, work_max;
} Slot;

enum { STREAM_PUSH_TARGETS = 1, STREAM_MSG = 2 };

/* What a message reads of its receiver, in one 16-byte record per node (kernel order): the full-block time
 * and whether it is final (copied to RelayWork.have/done after the block), and two fixed fields. */
typedef struct {
  SimTime have;
  guint8 done;
  guint8 special; /* 1 for nodes 0..n_special-1 of the topology */
  guint8 worker;  /* the worker that owns it */
} NodeHot;

/* One worker's hot state during a window, in locals, so that stores into the per-edge and per-node arrays
 * do not make the compiler reload it; kept in the worker between windows. */
typedef struct {
  const GethParams *p;
  guint64 *ew;
  const EdgeCold *ec;
  const LinkClass *cls;
  const QLat *qlat;
  const guint32 *off;
  const guint32 *gid;
  NodeHot *nh;
  SimTime *first_push, *announce, *upload_free;
  guint32 *scratch;
  StepQueue *q;
  Mailbox *out; /* this worker's mailboxes, by receiving worker */
  guint64 key;
  SimTime t0;
  SimTime wait, timeout, last_decision_after_have;
  SimTime step_lb_announce; /* after an announcement, the least time to a step it can cause in another group */
  SimTime bound; /* least time at which a message sent this window can make a step */
  guint64 messages, deferred, posted, draws;
  guint me; /* the worker's index */
} Geth;

/* A worker: a fixed, contiguous run of groups and everything it writes. The workers are as many as the
 * threads asked for (their number fixes nothing in the results either); a thread runs one worker's window
 * or, when fewer threads run the block, several in turn. */
typedef struct {
  _Alignas(64) Kernel *k;
  guint index;
  guint32 lo, hi; /* its nodes, in the kernel's order */
  StepQueue q;
  guint64 *fifo[2];
  guint32 *scratch; /* edge indices for choosing push targets */
  guint32 *read;    /* per sending worker: its next message to apply */
  /* This block's state between windows. */
  Geth g;
  gsize fifo_head[2], fifo_len[2];
  guint64 reached, steps;
  /* The stop's groups this worker has seen a node of have the block (a bit each), and whether it has seen
   * one since the last window's end. */
  guint64 *seen;
  gboolean fresh;
  /* Pruning: this worker's part of the targets' values at the start of its window (Kernel.snap), and the
   * watched nodes it owns with their targets. */
  SimTime *snap_part;
  guint32 *own_node, *own_target, n_own;
  guint64 pruned;
} Worker;

/* A thread other than the calling one (thread p runs workers p, p + P, p + 2P, ... when P threads run a
 * block). */
typedef struct {
  _Alignas(64) Kernel *k;
  guint index;
  pthread_t tid;
  unsigned seen; /* the last block generation it looked at */
} Thread;

/* The block being relayed, set by the calling thread before the others start on it. */
typedef struct {
  const void *params;
  SimTime t0, last_source_t;
  SimTime verify, import, wait, timeout, last_decision_after_have, step_lb_announce;
  /* The stop (RelayStop): watched nodes, their groups, the groups to see and the watched messages. */
  guint32 stop_n, stop_groups, stop_msgs;
  const guint32 *stop_group;
  gboolean stop_first; /* RelayStop.first_message_only */
  guint64 key;   /* of the block's random streams */
  guint n_src;
  guint32 *src; /* sources, the kernel's order */
  SimTime *src_t;
  guint src_cap;
  guint32 join_first; /* joining nodes from here on are unavailable */
} BlockSpec;

/* How many threads run the next block (RELAY_RUN_ADAPTIVE): all of them, or the calling thread alone
 * (running every worker's part in turn, the same result). Each cycle of SCHED_PERIOD blocks starts with
 * 2 x SCHED_PROBE blocks taken each way in turn (so that both see the same load of the machine), then
 * runs the rest the way that had the lower wall time per unit of work (steps and messages) in them. */
#define SCHED_PERIOD 512
#define SCHED_PROBE 16
typedef struct {
  double ns[2], work[2]; /* this cycle's probes: [0] the calling thread alone, [1] all threads */
  gboolean all;          /* the way chosen */
  gboolean probing;      /* the block being run is one of the probes */
  guint64 at;            /* blocks since the cycle began */
} Schedule;

struct Kernel {
  /* Built for one topology and jitter model (read-only during a block but for each worker's own part). */
  const NetTopology *topo;
  const void *jitter, *jitter_params;
  RelayWork *w;
  const RelayGroups *groups;
  guint32 n_nodes;
  const guint32 *gid; /* kernel order -> node */
  const guint32 *loc; /* node -> kernel order */
  guint32 *off;       /* n_nodes + 1: edges of each node, kernel order */
  guint64 *ew; /* the records' words */
  EdgeCold *ec;
  LinkClass *cls;
  QLat *qlat;
  guint32 n_cls;
  NodeHot *nh;          /* per node */
  SimTime *upload_free; /* per node: when its upload link is free again, set by its push */
  SimTime window;       /* min(lookahead, RELAY_WINDOW_MAX_NS) */
  /* Workers and threads. */
  guint n_workers;
  Worker **workers;
  guint8 *worker_of; /* per node */
  Mailbox *mb;       /* [sender * n_workers + receiver] */
  Thread **threads;  /* [1 .. n_workers - 1]; started at the first block run on them */
  gboolean started;
  guint n_run;    /* threads running this block: 1 or n_workers */
  Slot *slots;    /* per thread */
  /* The stop: groups seen by all workers (a bit each; seen_words words, also the workers' size), how many
   * are still to see, and per special the least latency floor of its links into it. */
  guint64 *seen_all;
  guint seen_words;
  guint32 groups_left;
  SimTime *fin_in;
  SimTime stop_prev; /* the bound that started the current window (STOP_NO_PREV: window 0) */
  /* Pruning (GethParams.prune, relay.h): the targets of the stop they were built for (its groups, then the
   * nodes of its watched messages), each node's least sum of latency floors to each (us, rounded down;
   * G_MAXUINT32: cannot reach it), the targets' values as of the start of the last window (merged from the
   * workers' parts at its end), and the targets still open (value at or after the window's start). */
  gboolean pruning;
  guint32 n_tg;
  guint32 *tdist; /* [node * n_tg + target], kernel order */
  SimTime *snap;
  guint32 *active, n_active;
  const guint32 *tg_group;
  guint32 tg_n, tg_groups, tg_msgs;
  gboolean tg_built;
  double *wait_s; /* per thread, this block */
  BlockSpec blk;
  Schedule sched;
  /* Synchronisation: a new block (the calling thread bumps block_gen), the window barrier (the last to
   * arrive reduces the slots into bar_bound and decides bar_stop, then bumps bar_gen), the end of a block
   * (each other thread that ran it adds one to `finished`). */
  _Alignas(64) unsigned block_gen;
  unsigned park_sleepers;
  unsigned quit;
  _Alignas(64) unsigned bar_count;
  _Alignas(64) unsigned bar_gen;
  unsigned bar_sleepers;
  SimTime bar_bound;
  gboolean bar_stop;
  guint64 work, work_critical; /* this block's: all workers' work, and the busiest worker's per window */
  _Alignas(64) unsigned finished;
  unsigned fin_sleepers;
};

/* ---- waiting: spin briefly, then sleep on a futex ---- */

static gint64 mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (gint64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void futex_wait(unsigned *addr, unsigned val) {
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(unsigned *addr) {
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Waits until *addr != val. The waker stores *addr then reads *sleepers; we add to *sleepers then read
 * *addr (both sequentially consistent): one of us sees the other. */
static void wait_change(unsigned *addr, unsigned val, unsigned *sleepers) {
  gint64 until = mono_ns() + SPIN_NS;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != val) return;
    cpu_relax();
    if ((i & 63) == 0 && mono_ns() > until) break;
  }
  __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(addr, __ATOMIC_SEQ_CST) == val)
    futex_wait(addr, val);
  __atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
}

static void bump_and_wake(unsigned *addr, unsigned *sleepers) {
  __atomic_add_fetch(addr, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST)) futex_wake_all(addr);
}

static gboolean stop_reached(Kernel *k, SimTime next);
static void snap_merge(Kernel *k, SimTime next);

/* The window barrier: publishes thread p's slot, returns everyone's least bound and whether to stop. */
static void barrier_reduce(Kernel *k, guint p, const Slot *mine, SimTime *next, gboolean *stop) {
  Slot *s = &k->slots[p];
  s->bound = mine->bound;
  s->work = mine->work;
  s->work_max = mine->work_max;
  unsigned gen = __atomic_load_n(&k->bar_gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&k->bar_count, 1, __ATOMIC_ACQ_REL) == k->n_run) {
    __atomic_store_n(&k->bar_count, 0, __ATOMIC_RELAXED);
    SimTime b = SIM_TIME_MAX;
    guint64 most = 0;
    for (guint i = 0; i < k->n_run; i++) {
      b = MIN(b, k->slots[i].bound);
      k->work += k->slots[i].work;
      most = MAX(most, k->slots[i].work_max);
    }
    k->work_critical += most;
    k->bar_bound = b;
    if (k->pruning) snap_merge(k, b);
    k->bar_stop = stop_reached(k, b);
    bump_and_wake(&k->bar_gen, &k->bar_sleepers);
  } else {
    gint64 t0 = mono_ns();
    wait_change(&k->bar_gen, gen, &k->bar_sleepers);
    k->wait_s[p] += (double)(mono_ns() - t0) / 1e9;
  }
  *next = k->bar_bound;
  *stop = k->bar_stop;
}

/* ---- one worker's part of a block ---- */

/* The random stream of one purpose of one node or edge (the kernel's numbers) of this block: its values do
 * not depend on who draws them or when. SplitMix64 (Steele, Lea and Flood, OOPSLA 2014: a Weyl sequence
 * through a 64-bit finaliser; it passes BigCrush) seeded from (block key, purpose, id) through the same
 * finaliser: a stream costs two mixes to open and one per word, where a Philox4x64-10 block costs about
 * 230 instructions, and the relay opens one per message it draws for. Jitter models other than "pareto"
 * and "none" draw through gsl from a Philox stream keyed the same way (MsgRng.slow). */
typedef struct {
  guint64 s;
} Mix;

static inline void mix_init(Mix *m, guint64 key, guint purpose, guint64 id) {
  m->s = sim_mix64(key ^ sim_mix64((guint64)purpose << 56 ^ id));
}

static inline guint64 mix_next(Mix *m) {
  m->s += UINT64_C(0x9E3779B97F4A7C15);
  return sim_mix64(m->s);
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's method, as sim_rng_below). */
static inline guint64 mix_below(Mix *m, guint64 n) {
  unsigned __int128 x = (unsigned __int128)mix_next(m) * n;
  guint64 low = (guint64)x;
  if (G_UNLIKELY(low < n)) {
    guint64 threshold = -n % n;
    while (low < threshold) {
      x = (unsigned __int128)mix_next(m) * n;
      low = (guint64)x;
    }
  }
  return (guint64)(x >> 64);
}

/* The stream of one message (purpose STREAM_MSG, the directed edge it crosses). */
typedef struct {
  Mix m;
  gboolean slow;
  SimRng r; /* slow only */
} MsgRng;

static inline void msg_rng_init(const Geth *g, MsgRng *r, const LinkClass *c, guint32 e) {
  r->slow = c->draw.kind == NET_DRAW_MODEL;
  if (G_UNLIKELY(r->slow))
    sim_rng_init(&r->r, g->key, (guint64)STREAM_MSG << 56 | e);
  else
    mix_init(&r->m, g->key, STREAM_MSG, e);
}

/* Uniform in [0, 1), 53 bits. */
static inline double msg_uniform(MsgRng *r) {
  guint64 w = G_UNLIKELY(r->slow) ? sim_rng_u64(&r->r) : mix_next(&r->m);
  return (double)(w >> 11) * 0x1.0p-53;
}

/* A "pareto" latency at uniform u in (0, 1]: what net_pareto_draw() gives for that u, host overhead added. */
static inline SimTime pareto_of_u(const NetLatencyDraw *d, double u) {
  /* The table form (net.h): a third cheaper than net_pareto_of_u, the same quantile to 1.5e-15 relative. */
  return net_pareto_table_of_u(&d->pareto, d->scale_ns, d->inv_shape, u) + d->host_ns; /* in [0, MAX] */
}

/* A latency of class c: net_latency_draw() with the uniform from this stream. */
static inline SimTime msg_latency(const LinkClass *c, MsgRng *r) {
  const NetLatencyDraw *d = &c->draw;
  switch (d->kind) {
  case NET_DRAW_FIXED:
    return d->fixed_ns;
  case NET_DRAW_PARETO:
    return pareto_of_u(d, ((double)(mix_next(&r->m) >> 11) + 0.5) * 0x1.0p-53);
  default:
    return net_latency_draw(d, &r->r);
  }
}

static inline guint32 edge_to(guint64 word) {
  return (guint32)(word >> EDGE_TO_SHIFT) & EDGE_TO_MASK;
}

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

static inline void relax_full(Geth *g, guint32 v, SimTime t) {
  if (g->nh[v].done || t >= g->nh[v].have) return;
  g->nh[v].have = t;
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  radix_push(g->q, dt << STEP_KEY_SHIFT | (guint64)v << 2 | STEP_HAVE);
}

static inline guint64 step_key(const Geth *g, SimTime t, guint32 node, guint32 kind) {
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) dt = STEP_TIME_MAX;
  return dt << STEP_KEY_SHIFT | (guint64)node << 2 | kind;
}

/* Records at the receiver that it hears from the sender at `at` (record `rev`: receiver -> sender). */
static inline void heard_exact(Geth *g, guint32 rev, SimTime at) {
  g->ew[rev] = (g->ew[rev] & ~(EDGE_LAZY_BIT | EDGE_HEARD_NONE)) | heard_rel(g, at);
}

/* The same with the latency not drawn: sent at `sent` over a link of least latency `floor`. Not stored when
 * the receiver has made its last decision before the message can arrive (nothing reads it then). */
static inline void heard_lazy(Geth *g, guint32 to, guint32 rev, SimTime sent, SimTime floor) {
  SimTime lb = sent + floor;
  if (g->nh[to].done && lb > g->nh[to].have + g->last_decision_after_have) return;
  g->ew[rev] = (g->ew[rev] & ~EDGE_HEARD_NONE) | EDGE_LAZY_BIT | heard_rel(g, lb);
}

/* Record e (v -> u) as v's decision at a time with heard word `after` sees it (to test, not to store back:
 * the record itself is updated here where needed): a lazy record whose bound is before then gets its
 * latency drawn (the stream of edge u -> v) and stored exact, or found by its bracket to be in by then (its
 * bound stored) or not yet (left lazy, returned as not heard); one whose bound is after then reads as not
 * heard. */
static inline guint64 edge_seen(Geth *g, guint32 e, guint64 x, guint64 after) {
  if (G_LIKELY(!(x & EDGE_LAZY_BIT))) return x;
  if ((x & EDGE_HEARD_NONE) >= after) return x; /* its lower bound is later: not heard yet */
  guint32 f = g->ec[e].rev;
  const LinkClass *c = &g->cls[g->ec[f].cls];
  SimTime sent = g->t0 + (SimTime)(x & EDGE_HEARD_NONE) - c->floor_ns;
  MsgRng r;
  msg_rng_init(g, &r, c, f);
  if (c->draw.kind == NET_DRAW_PARETO) {
    /* The latency's uniform, bracketed by its top bits: often enough to tell whether it arrived by the time
     * `after` stands for, without the logarithm. Heard: any time at or before then says so to every later
     * decision of v (they come later still), so the bound is stored. Not heard yet: left lazy. */
    Mix peek = r.m;
    guint j = (guint)(mix_next(&peek) >> (64 - QLAT_BITS));
    SimTime d = g->t0 + (SimTime)after - 1 - sent; /* arrived by then iff latency <= d */
    const SimTime *ql = g->qlat[g->ec[f].cls].at;
    if (ql[j] != SIM_TIME_MAX && d >= ql[j] + QLAT_SLACK_NS) {
      guint64 y = (x & ~EDGE_LAZY_BIT);
      g->ew[e] = y;
      return y;
    }
    if (d < ql[j + 1] - QLAT_SLACK_NS) return x | EDGE_HEARD_NONE; /* not heard yet: no draw */
  }
  g->draws++;
  guint64 y = (x & ~(EDGE_LAZY_BIT | EDGE_HEARD_NONE)) | heard_rel(g, sent + msg_latency(c, &r));
  g->ew[e] = y;
  return y;
}

/* Speed where it cannot matter. What a message does is a minimum of values that depend on the block and
 * the edge alone: the receiver's full-block time (a push's arrival, an announcement's fetch), a special's
 * first block message and first announcement (all pushes and announcements count), and what the receiver
 * knows of the sender (the arrival). A message that cannot lower any of these minima as they stand when it
 * is applied (the receiver has the block or will sooner; the fetch cannot beat what it has; the special's
 * first message is earlier) is recorded lazily at the receiver (heard_lazy), without its draw; the draw is
 * made only if a decision of the receiver needs it, and gives the same value (edge_seen). So no result
 * depends on when or by which worker a message is applied, which is what lets a worker apply its own
 * nodes' messages at once and others' at the window's end. The message goes over edge `e` (its random
 * stream) to `to`, whose edge back is `rev`. */

/* A push whose last byte left at q. */
static inline __attribute__((always_inline)) void push_decide(Geth *g, guint32 e, guint32 to, guint32 rev,
                                                              guint32 cls, SimTime q) {
  const LinkClass *c = &g->cls[cls];
  SimTime lb = q + c->floor_ns;
  gboolean special = g->nh[to].special;
  if (!g->p->draw_all && lb >= g->nh[to].have && (!special || lb >= g->first_push[to])) {
    heard_lazy(g, to, rev, q, c->floor_ns);
    return;
  }
  MsgRng r;
  msg_rng_init(g, &r, c, e);
  g->draws++;
  SimTime arr = q + msg_latency(c, &r);
  heard_exact(g, rev, arr);
  if (special && arr < g->first_push[to]) g->first_push[to] = arr;
  relax_full(g, to, arr);
}

/* An announcement sent at `now` by a node whose upload link is free from `upload_free`. */
static inline __attribute__((always_inline)) void announce_decide(Geth *g, guint32 e, guint32 to, guint32 rev,
                                                                  guint32 cls, SimTime now,
                                                                  SimTime upload_free) {
  const GethParams *p = g->p;
  const LinkClass *c = &g->cls[cls];
  /* The fetch cannot complete before now + arriveTimeout and five latencies. */
  gboolean fetch = !g->nh[to].done && g->nh[to].have > now + g->wait + 4 * c->floor_ns;
  if (!fetch && !g->p->draw_all && (!g->nh[to].special || now + c->floor_ns >= g->announce[to])) {
    heard_lazy(g, to, rev, now, c->floor_ns);
    return;
  }
  MsgRng r;
  msg_rng_init(g, &r, c, e);
  g->draws++;
  SimTime lat = msg_latency(c, &r);
  SimTime a = now + lat;
  heard_exact(g, rev, a);
  if (g->nh[to].special && a < g->announce[to]) g->announce[to] = a;
  if (!fetch) return;
  /* The peer's fetcher requests the block arriveTimeout after the announcement: header request and
   * reply, body request, then the body over our upload link; an unanswered request costs fetchTimeout
   * and is retried. The latency draw is reused for the exchange's four messages. */
  SimTime req = a + g->wait;
  if (p->fetch_fail_prob > 0)
    while (msg_uniform(&r) < p->fetch_fail_prob)
      req += g->timeout;
  SimTime start = MAX(req + 3 * lat, upload_free);
  relax_full(g, to, start + c->transfer_ns + lat);
}

/* A message over edge e (record `pr`, word `x` before it was marked sent) of kind `announce`, sent at t:
 * applied at once inside the worker, else put in the mailbox of the receiver's worker. A message to another
 * group bounds the next window (`step_lb`: the earliest step it can cause), wherever it is applied, so
 * that the windows do not depend on how the groups are shared among workers. */
static inline void send_msg(Geth *g, guint32 e, const EdgeCold *pr, guint64 x, gboolean announce, SimTime t,
                            SimTime upload_free, SimTime step_lb) {
  guint32 to = edge_to(x);
  if (x & EDGE_CROSS_BIT) {
    g->deferred++;
    if (step_lb < g->bound) g->bound = step_lb;
    guint d = g->nh[to].worker;
    if (d != g->me) {
      g->posted++;
      Mailbox *mb = &g->out[d];
      mb->msg[mb->len++] = (Msg){.word = MIN((guint64)(t - g->t0), MSG_TIME_MASK) |
                                         (guint64)to << MSG_TO_SHIFT | (announce ? MSG_ANNOUNCE_BIT : 0),
                                 .rev = pr->rev,
                                 .cls = pr->cls};
      return;
    }
  }
  if (announce)
    announce_decide(g, e, to, pr->rev, pr->cls, t, upload_free);
  else
    push_decide(g, e, to, pr->rev, pr->cls, t);
}

static inline void geth_push(Geth *g, guint32 v, SimTime now) {
  guint32 *scratch = g->scratch;
  guint64 *ew = g->ew;
  guint64 after = heard_after(g, now);
  guint32 n = 0;
  for (guint32 e = g->off[v], end = g->off[v + 1]; e < end; e++) {
    scratch[n] = e;
    n += (edge_seen(g, e, ew[e], after) & EDGE_HEARD_NONE) >= after; /* the peer has not told us */
  }
  if (n == 0) {
    g->upload_free[v] = 0; /* nothing sent: the link was never busy */
    return;
  }
  guint64 k = (guint64)sqrt((double)n); /* exact floor for n < 2^52 */
  k = MIN(n, MAX(k, (guint64)g->p->push_min));
  Mix r;
  mix_init(&r, g->key, STREAM_PUSH_TARGETS, v);
  SimTime q = now;
  for (guint64 i = 0; i < k; i++) {
    guint64 j = i + mix_below(&r, n - i);
    guint32 e = scratch[j];
    scratch[j] = scratch[i];
    scratch[i] = e;
    const EdgeCold *pr = &g->ec[e];
    guint64 x = ew[e];
    const LinkClass *c = &g->cls[pr->cls];
    q += c->transfer_ns;
    ew[e] = x | EDGE_SENT_BIT;
    g->messages++;
    send_msg(g, e, pr, x, FALSE, q, 0, q + c->floor_ns);
  }
  g->upload_free[v] = q;
}

static inline void geth_announce(Geth *g, guint32 v, SimTime now) {
  SimTime upload_free = g->upload_free[v];
  guint64 after = heard_after(g, now);
  for (guint32 e = g->off[v], end = g->off[v + 1]; e < end; e++) {
    guint64 x = edge_seen(g, e, g->ew[e], after);
    /* Skipped if pushed there (sent bit set) or the peer has it (heard before `after`): one range check. */
    if ((x & EDGE_STATE_MASK) - after >= EDGE_SENT_BIT - after) continue;
    g->ew[e] |= EDGE_SENT_BIT;
    g->messages++;
    /* Its fetch cannot complete before the announcement, arriveTimeout and four more messages, each at
     * least the lookahead if it crosses groups (the bound matters only then). */
    send_msg(g, e, &g->ec[e], x, TRUE, now, upload_free, now + g->step_lb_announce);
  }
}

/* Applies the messages that other workers sent to this worker's nodes in the last window (those published
 * in pub[parity]); in any order, with the same result (send_msg). */
static void apply_inbox(Kernel *k, Worker *W, Geth *g, guint parity) {
  guint n = k->n_workers;
  for (guint s = 0; s < n; s++) {
    if (s == W->index) continue;
    const Mailbox *mb = &k->mb[(gsize)s * n + W->index];
    guint32 end = mb->pub[parity];
    for (guint32 i = W->read[s]; i < end; i++) {
      const Msg *m = &mb->msg[i];
      guint32 to = (guint32)(m->word >> MSG_TO_SHIFT) & MSG_NODE_MASK;
      SimTime t = g->t0 + (SimTime)(m->word & MSG_TIME_MASK);
      guint32 e = g->ec[m->rev].rev;
      if (m->word & MSG_ANNOUNCE_BIT)
        announce_decide(g, e, to, m->rev, m->cls, t, g->upload_free[edge_to(g->ew[m->rev])]);
      else
        push_decide(g, e, to, m->rev, m->cls, t);
    }
    W->read[s] = end;
  }
}

/* Starts worker W on the block: its nodes and edges reset, its sources relaxed. */
static void worker_begin(Kernel *k, Worker *W) {
  const BlockSpec *b = &k->blk;
  RelayWork *w = k->w;
  W->g = (Geth){.p = b->params,
                .ew = k->ew,
                .ec = k->ec,
                .cls = k->cls,
                .qlat = k->qlat,
                .off = k->off,
                .gid = k->gid,
                .nh = k->nh,
                .first_push = w->first_push,
                .announce = w->announce,
                .upload_free = k->upload_free,
                .scratch = W->scratch,
                .q = &W->q,
                .out = &k->mb[(gsize)W->index * k->n_workers],
                .key = b->key,
                .t0 = b->t0,
                .wait = b->wait,
                .timeout = b->timeout,
                .last_decision_after_have = b->last_decision_after_have,
                .step_lb_announce = b->step_lb_announce,
                .me = W->index};
  Geth *g = &W->g;
  const guint32 lo = W->lo, hi = W->hi;
  for (guint32 v = lo; v < hi; v++) {
    g->nh[v].have = g->first_push[v] = g->announce[v] = SIM_TIME_MAX;
    g->nh[v].done = DONE_NO;
  }
  /* Nothing sent or heard yet. A fill of every record costs less than a stamp checked on each access; two
   * words at a time (SSE2, in every x86-64; GCC's vector extension elsewhere). */
  {
    typedef guint64 V2 __attribute__((vector_size(16)));
    const V2 keep = {~EDGE_RESET_MASK, ~EDGE_RESET_MASK}, none = {EDGE_HEARD_NONE, EDGE_HEARD_NONE};
    guint32 e = g->off[lo], end = g->off[hi];
    for (; e + 2 <= end; e += 2) {
      V2 x;
      memcpy(&x, &g->ew[e], sizeof x);
      x = (x & keep) | none;
      memcpy(&g->ew[e], &x, sizeof x);
    }
    if (e < end) g->ew[e] = (g->ew[e] & ~EDGE_RESET_MASK) | EDGE_HEARD_NONE;
  }
  queue_reset(&W->q);
  for (guint d = 0; d < k->n_workers; d++) {
    g->out[d].len = 0;
    g->out[d].pub[0] = g->out[d].pub[1] = 0;
    W->read[d] = 0;
  }
  W->reached = W->steps = W->pruned = 0;
  const NetTopology *t = k->topo;
  if (G_UNLIKELY(t->n_joining)) {
    for (guint32 i = b->join_first; i < t->n_joining; i++) {
      guint32 v = k->loc[t->join_node[i]];
      if (v < lo || v >= hi) continue;
      g->nh[v].done = DONE_UNAVAILABLE;
      g->nh[v].have = HAVE_UNAVAILABLE;
    }
    /* A node that mined the block has it, synced or not. */
    for (guint i = 0; i < b->n_src; i++) {
      guint32 v = b->src[i];
      if (v >= lo && v < hi && g->nh[v].done == DONE_UNAVAILABLE) {
        g->nh[v].done = DONE_NO;
        g->nh[v].have = SIM_TIME_MAX;
      }
    }
  }
  if (k->seen_words) memset(W->seen, 0, k->seen_words * sizeof *W->seen);
  W->fresh = FALSE;
  for (guint i = 0; i < b->n_src; i++)
    if (b->src[i] >= lo && b->src[i] < hi) relax_full(g, b->src[i], b->src_t[i]);
  /* Each queue ends with UINT64_MAX (no step has that key), so its head needs no length check. */
  W->fifo_head[0] = W->fifo_head[1] = W->fifo_len[0] = W->fifo_len[1] = 0;
  W->fifo[0][0] = W->fifo[1][0] = UINT64_MAX;
}

/* ---- pruning (relay.h) ---- */

/* A watched value of target T as it stands: a group's least full-block time; a watched node's first block
 * message and announcement, the later of the two (both watched) or the earlier (first_message_only). */
static inline SimTime target_value(const Kernel *k, guint32 T, guint32 l) {
  if (T < k->blk.stop_groups) return k->nh[l].have;
  SimTime fp = k->w->first_push[l], an = k->w->announce[l];
  return k->blk.stop_first ? MIN(fp, an) : MAX(fp, an);
}

/* Worker W's part of the targets' values at the start of its window, after the last window's messages:
 * the same state in every split (every message sent before this window has been applied). */
static void snap_part(Kernel *k, Worker *W) {
  for (guint32 T = 0; T < k->n_tg; T++)
    W->snap_part[T] = SIM_TIME_MAX;
  for (guint32 i = 0; i < W->n_own; i++) {
    guint32 T = W->own_target[i];
    W->snap_part[T] = MIN(W->snap_part[T], target_value(k, T, W->own_node[i]));
  }
}

/* At a window's end (the reducing thread, every worker at the barrier): the targets' values as they stood
 * at the start of the window just ended, for the next window (starting at `next`), and the targets still
 * open then (a value before `next` cannot be lowered by any step from `next` on). */
static void snap_merge(Kernel *k, SimTime next) {
  k->n_active = 0;
  for (guint32 T = 0; T < k->n_tg; T++) {
    SimTime v = SIM_TIME_MAX;
    for (guint i = 0; i < k->n_workers; i++)
      v = MIN(v, k->workers[i]->snap_part[T]);
    k->snap[T] = v;
    if (v >= next) k->active[k->n_active++] = T;
  }
}

/* Whether node v's step at `now` can be skipped: for every open target, now plus v's least floor path to it
 * is after its value (its value cannot be lowered, nor tied, by anything the step would cause). */
static inline gboolean prune_ok(const Kernel *k, guint32 v, SimTime now) {
  const guint32 *dv = k->tdist + (gsize)v * k->n_tg;
  for (guint32 i = 0; i < k->n_active; i++) {
    guint32 T = k->active[i];
    if (dv[T] != G_MAXUINT32 && now + (SimTime)dv[T] * 1000 <= k->snap[T]) return FALSE;
  }
  return TRUE;
}

/* The targets of the block's stop and each node's least sum of latency floors to each (Dijkstra from the
 * target's nodes over the links reversed), and each worker's watched nodes; once per stop and layout. */
static void targets_build(Kernel *k) {
  const BlockSpec *b = &k->blk;
  guint32 ng = b->stop_groups, nt = ng + b->stop_msgs, n = k->n_nodes;
  g_free(k->tdist);
  g_free(k->snap);
  g_free(k->active);
  k->n_tg = nt;
  k->tdist = g_new(guint32, MAX((gsize)nt * n, 1));
  k->snap = g_new(SimTime, MAX(nt, 1));
  k->active = g_new(guint32, MAX(nt, 1));
  g_autofree SimTime *d = g_new(SimTime, MAX(n, 1));
  g_autofree guint64 *heap = g_new(guint64, MAX(k->off[n], 1) + n + 1);
  for (guint32 T = 0; T < nt; T++) {
    gsize len = 0;
    for (guint32 v = 0; v < n; v++)
      d[v] = SIM_TIME_MAX;
    for (guint32 id = 0; id < b->stop_n; id++) {
      gboolean in = T < ng ? (b->stop_group ? b->stop_group[id] : id) == T : id == T - ng;
      if (!in) continue;
      guint32 l = k->loc[id];
      d[l] = 0;
      heap[len++] = l; /* key: distance (ns) << 22 | node; distance 0 */
    }
    /* A binary min-heap of keys; entries made stale by a shorter distance are skipped when popped. */
    while (len) {
      guint64 top = heap[0];
      heap[0] = heap[--len];
      for (gsize i = 0;;) {
        gsize c = 2 * i + 1;
        if (c >= len) break;
        if (c + 1 < len && heap[c + 1] < heap[c]) c++;
        if (heap[i] <= heap[c]) break;
        guint64 x = heap[i];
        heap[i] = heap[c];
        heap[c] = x;
        i = c;
      }
      guint32 y = (guint32)(top & STEP_NODE_MASK);
      SimTime dy = (SimTime)(top >> STEP_NODE_BITS);
      if (dy != d[y]) continue;
      for (guint32 e = k->off[y]; e < k->off[y + 1]; e++) {
        guint32 z = edge_to(k->ew[e]);
        SimTime dz = dy + k->cls[k->ec[k->ec[e].rev].cls].floor_ns; /* link z -> y */
        if (dz >= d[z] || dz >= (SimTime)(UINT64_C(1) << (63 - STEP_NODE_BITS))) continue;
        d[z] = dz;
        gsize i = len++;
        heap[i] = (guint64)dz << STEP_NODE_BITS | z;
        while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
          guint64 x = heap[i];
          heap[i] = heap[(i - 1) / 2];
          heap[(i - 1) / 2] = x;
          i = (i - 1) / 2;
        }
      }
    }
    for (guint32 v = 0; v < n; v++)
      k->tdist[(gsize)v * nt + T] = d[v] == SIM_TIME_MAX ? G_MAXUINT32 : (guint32)MIN(d[v] / 1000, G_MAXUINT32 - 1);
  }
  for (guint i = 0; i < k->n_workers; i++) {
    Worker *W = k->workers[i];
    g_free(W->snap_part);
    g_free(W->own_node);
    g_free(W->own_target);
    W->snap_part = g_new(SimTime, MAX(nt, 1));
    W->own_node = g_new(guint32, 2 * (gsize)MAX(b->stop_n, 1));
    W->own_target = g_new(guint32, 2 * (gsize)MAX(b->stop_n, 1));
    W->n_own = 0;
    for (guint32 id = 0; id < b->stop_n; id++) {
      guint32 l = k->loc[id];
      if (l < W->lo || l >= W->hi) continue;
      guint32 grp = b->stop_group ? b->stop_group[id] : id;
      if (grp != RELAY_STOP_NONE) {
        W->own_node[W->n_own] = l;
        W->own_target[W->n_own++] = grp;
      }
      if (id < b->stop_msgs) {
        W->own_node[W->n_own] = l;
        W->own_target[W->n_own++] = ng + id;
      }
    }
  }
  k->tg_group = b->stop_group;
  k->tg_n = b->stop_n;
  k->tg_groups = b->stop_groups;
  k->tg_msgs = b->stop_msgs;
  k->tg_built = TRUE;
}

/* Window `win` of worker W, [start, start + window): the messages of the last window first, then every step
 * before the end. Returns a lower bound on every step W may still take or cause; adds its work to *work. */
static SimTime worker_window(Kernel *k, Worker *W, SimTime start, guint64 win, guint64 *work) {
  const BlockSpec *b = &k->blk;
  Geth g = W->g;
  guint64 work0 = W->steps + g.messages + g.deferred;
  if (win > 0) apply_inbox(k, W, &g, (guint)(win - 1) & 1);
  if (k->pruning) snap_part(k, W);
  const gboolean pruning = k->pruning;
  guint64 pruned = W->pruned;
  SimTime end = start < SIM_TIME_MAX - k->window ? start + k->window : SIM_TIME_MAX;
  guint64 dt_end = (guint64)(end - g.t0);
  guint64 key_end = dt_end > STEP_TIME_MAX ? UINT64_MAX : dt_end << STEP_KEY_SHIFT;
  g.bound = SIM_TIME_MAX;
  guint64 *fifo[2] = {W->fifo[0], W->fifo[1]};
  gsize fifo_head[2] = {W->fifo_head[0], W->fifo_head[1]}, fifo_len[2] = {W->fifo_len[0], W->fifo_len[1]};
  StepQueue *q = &W->q;
  guint64 reached = W->reached, steps = W->steps;
  const guint32 stop_n = b->stop_n;
  guint64 key;
  for (;;) {
    /* The smallest of the queue heads and the heaps' tops (radix_min is UINT64_MAX when empty). */
    key = fifo[0][fifo_head[0]];
    int from = 0;
    if (fifo[1][fifo_head[1]] < key) key = fifo[1][fifo_head[1]], from = 1;
    if (q->radix_min < key) key = q->radix_min, from = 3;
    if (G_UNLIKELY(q->heap_len) && q->heap[0] < key) key = q->heap[0], from = 2;
    if (key == UINT64_MAX) break;
    SimTime now = g.t0 + (SimTime)(key >> STEP_KEY_SHIFT);
    guint32 v = (guint32)(key >> 2) & STEP_NODE_MASK;
    guint32 kind = (guint32)(key & 3);
    /* A superseded arrival is dropped wherever it is, so that the bound below is a live step's. */
    gboolean stale = kind == STEP_HAVE && (g.nh[v].done || now != g.nh[v].have);
    if (!stale && key >= key_end) break;
    if (from == 3)
      radix_pop(q);
    else if (from == 2)
      heap_pop(q);
    else
      fifo_head[from]++;
    if (stale) continue;
    steps++;
    switch (kind) {
    case STEP_HAVE: {
      g.nh[v].done = DONE_YES;
      reached++;
      if (G_UNLIKELY(g.gid[v] < stop_n)) {
        guint32 grp = b->stop_group ? b->stop_group[g.gid[v]] : g.gid[v];
        if (grp != RELAY_STOP_NONE) {
          W->seen[grp >> 6] |= UINT64_C(1) << (grp & 63);
          W->fresh = TRUE;
        }
      }
      /* A node whose steps cannot matter any more has the block, and does nothing with it. */
      if (pruning && prune_ok(k, v, now)) {
        pruned++;
        break;
      }
      gboolean source = FALSE;
      if (now <= b->last_source_t)
        for (guint i = 0; i < b->n_src && !source; i++)
          source = b->src[i] == v && b->src_t[i] == now;
      if (source) {
        /* A miner's own block is already imported: push and announce at once (minedBroadcastLoop). Into
         * the heap: a later source can come after other nodes' HAVE steps (it would break the FIFOs' order).
         */
        radix_push(q, step_key(&g, now, v, STEP_PUSH));
        radix_push(q, step_key(&g, now, v, STEP_ANNOUNCE));
      } else {
        /* HAVE steps come in time order, so their PUSH and ANNOUNCE steps a fixed time later do too. */
        fifo[0][fifo_len[0]++] = step_key(&g, now + b->verify, v, STEP_PUSH);
        fifo[1][fifo_len[1]++] = step_key(&g, now + b->verify + b->import, v, STEP_ANNOUNCE);
        fifo[0][fifo_len[0]] = fifo[1][fifo_len[1]] = UINT64_MAX;
      }
      break;
    }
    /* A push or announcement skipped as above: the node's later steps are skipped too (the values only
     * fall and the time only grows). */
    case STEP_PUSH:
      if (pruning && prune_ok(k, v, now)) {
        pruned++;
        break;
      }
      geth_push(&g, v, now);
      break;
    default:
      if (pruning && prune_ok(k, v, now)) {
        pruned++;
        break;
      }
      geth_announce(&g, v, now);
      break;
    }
  }
  for (guint d = 0; d < k->n_workers; d++)
    g.out[d].pub[win & 1] = g.out[d].len;
  W->fifo_head[0] = fifo_head[0];
  W->fifo_head[1] = fifo_head[1];
  W->fifo_len[0] = fifo_len[0];
  W->fifo_len[1] = fifo_len[1];
  W->reached = reached;
  W->steps = steps;
  W->pruned = pruned;
  W->g = g;
  *work += steps + g.messages + g.deferred - work0;
  return MIN(g.bound, key == UINT64_MAX ? SIM_TIME_MAX : g.t0 + (SimTime)(key >> STEP_KEY_SHIFT));
}

/* Whether the block may stop at the end of window w, whose successor would start at `next` (a lower bound of
 * every step still to come, SIM_TIME_MAX: none), with every worker at the barrier: nothing left, or what
 * the stop watches final, decided from what does not depend on how the groups are split among workers
 * (so the windows, and what the unwatched nodes hold, are the same at every thread count).
 *  - The groups: the workers' newly seen ones are merged here (only the reducing thread runs this, while
 *    the others wait). The steps of window w are the same in every split.
 *  - Each watched node's first block message and announcement, against the bound P that started window w:
 *    every message sent before window w has been applied in every split (a window starts by applying what
 *    the last one sent); one sent in window w or later is sent at a step at or after P and arrives at or
 *    after P plus the least floor of the node's links into it. So a value below that is final, and
 *    whether a value is below it does not depend on which of window w's messages have been applied (they
 *    cannot bring a value below it). */
static gboolean stop_reached(Kernel *k, SimTime next) {
  if (next == SIM_TIME_MAX) return TRUE;
  const BlockSpec *b = &k->blk;
  SimTime prev = k->stop_prev;
  k->stop_prev = next;
  if (!b->stop_n) return FALSE;
  if (k->groups_left) {
    for (guint i = 0; i < k->n_workers; i++) {
      Worker *W = k->workers[i];
      if (!W->fresh) continue;
      W->fresh = FALSE;
      for (guint j = 0; j < k->seen_words; j++) {
        guint64 add = W->seen[j] & ~k->seen_all[j];
        k->seen_all[j] |= add;
        k->groups_left -= (guint32)__builtin_popcountll(add);
      }
    }
    if (k->groups_left) return FALSE;
  }
  for (guint32 m = 0; m < b->stop_msgs; m++) {
    if (prev == STOP_NO_PREV) return FALSE; /* window 0: no bound before it */
    guint32 l = k->loc[m];
    SimTime fin = k->fin_in[m];
    SimTime lim = prev > SIM_TIME_MAX - fin ? SIM_TIME_MAX : prev + fin;
    SimTime fp = k->w->first_push[l], an = k->w->announce[l];
    if (b->stop_first ? MIN(fp, an) >= lim : (fp >= lim || an >= lim)) return FALSE;
  }
  return TRUE;
}

/* Thread p's part of the block (of k->n_run threads): workers p, p + n_run, ... window by window. */
static void thread_block(Kernel *k, guint p) {
  const guint n = k->n_workers, run = k->n_run;
  for (guint i = p; i < n; i += run)
    worker_begin(k, k->workers[i]);
  SimTime start = k->blk.t0;
  for (guint64 win = 0;; win++) {
    Slot mine = {.bound = SIM_TIME_MAX};
    for (guint i = p; i < n; i += run) {
      guint64 work = 0;
      SimTime bound = worker_window(k, k->workers[i], start, win, &work);
      mine.bound = MIN(mine.bound, bound);
      mine.work += work;
      mine.work_max = MAX(mine.work_max, work);
    }
    SimTime next;
    gboolean stop;
    if (run == 1) {
      next = mine.bound;
      if (k->pruning) snap_merge(k, next);
      stop = stop_reached(k, next);
      k->work += mine.work;
      k->work_critical += mine.work_max;
    } else {
      barrier_reduce(k, p, &mine, &next, &stop);
    }
    if (p == 0) k->w->stats.windows++;
    if (stop) {
      /* What the last window sent still arrives (first block messages and announcements of the specials). */
      for (guint i = p; i < n; i += run) {
        Worker *W = k->workers[i];
        apply_inbox(k, W, &W->g, (guint)win & 1);
        /* The results, where RelayWork's readers find them. */
        for (guint32 v = W->lo; v < W->hi; v++) {
          k->w->have[v] = k->nh[v].have;
          k->w->done[v] = k->nh[v].done;
        }
      }
      break;
    }
    start = next;
  }
}

/* ---- threads ---- */

static void *thread_main(void *arg) {
  Thread *T = arg;
  Kernel *k = T->k;
  for (;;) {
    wait_change(&k->block_gen, T->seen, &k->park_sleepers);
    T->seen = __atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&k->quit, __ATOMIC_ACQUIRE)) return NULL;
    if (T->index >= k->n_run) continue; /* this block runs on fewer threads */
    thread_block(k, T->index);
    bump_and_wake(&k->finished, &k->fin_sleepers);
  }
}

static void kernel_stop_threads(Kernel *k) {
  if (!k || !k->started) return;
  __atomic_store_n(&k->quit, 1, __ATOMIC_RELEASE);
  bump_and_wake(&k->block_gen, &k->park_sleepers);
  for (guint i = 1; i < k->n_workers; i++)
    pthread_join(k->threads[i]->tid, NULL);
  k->started = FALSE;
  __atomic_store_n(&k->quit, 0, __ATOMIC_RELEASE);
}

static void kernel_start_threads(Kernel *k) {
  /* Signals go to the calling thread: the others block them all. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (guint i = 1; i < k->n_workers; i++) {
    Thread *T = k->threads[i];
    T->seen = __atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE);
    int rc = pthread_create(&T->tid, NULL, thread_main, T);
    if (rc != 0) g_error("relay: cannot start a thread: %s", g_strerror(rc));
  }
  k->started = TRUE;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void layout_free(Kernel *k) {
  kernel_stop_threads(k);
  for (guint i = 0; i < k->n_workers; i++) {
    Worker *W = k->workers[i];
    g_free(W->seen);
    g_free(W->snap_part);
    g_free(W->own_node);
    g_free(W->own_target);
    queue_clear(&W->q);
    g_free(W->fifo[0]);
    g_free(W->fifo[1]);
    g_free(W->scratch);
    g_free(W->read);
    g_aligned_free(W);
    if (k->threads[i]) g_aligned_free(k->threads[i]);
  }
  for (gsize i = 0; i < (gsize)k->n_workers * k->n_workers; i++)
    g_free(k->mb[i].msg);
  g_free(k->workers);
  g_free(k->threads);
  g_aligned_free(k->mb);
  g_aligned_free(k->slots);
  g_free(k->wait_s);
  g_free(k->worker_of);
  k->workers = NULL;
  k->threads = NULL;
  k->mb = NULL;
  k->slots = NULL;
  k->wait_s = NULL;
  k->worker_of = NULL;
  k->n_workers = 0;
}

/* Workers for `threads` asked for: each takes a contiguous run of groups (groups_cut). */
static void layout_build(Kernel *k, guint threads) {
  const RelayGroups *gr = k->groups;
  guint n = relay_groups_threads(gr, threads);
  guint32 cut[RELAY_MAX_THREADS + 1];
  groups_cut(gr, n, cut);
  k->n_workers = n;
  k->workers = g_new0(Worker *, n);
  k->threads = g_new0(Thread *, n);
  k->worker_of = g_new(guint8, MAX(k->n_nodes, 1));
  k->slots = g_aligned_alloc0(n, sizeof(Slot), 64);
  k->tg_built = FALSE; /* the workers' watched nodes change with the layout (targets_build) */
  /* The stop's bitmaps are sized by the first stop that needs them (stop_prepare). */
  g_free(k->seen_all);
  k->seen_all = NULL;
  k->seen_words = 0;
  k->wait_s = g_new0(double, n);
  k->mb = g_aligned_alloc0((gsize)n * n, sizeof(Mailbox), 64);
  for (guint i = 0; i < n; i++) {
    Worker *W = g_aligned_alloc0(1, sizeof(Worker), 64);
    k->workers[i] = W;
    W->k = k;
    W->index = i;
    W->lo = gr->group_start[cut[i]];
    W->hi = gr->group_start[cut[i + 1]];
    queue_init(&W->q);
    guint32 own = W->hi - W->lo, max_deg = 0;
    for (guint32 v = W->lo; v < W->hi; v++) {
      k->worker_of[v] = (guint8)i;
      k->nh[v].worker = (guint8)i;
      max_deg = MAX(max_deg, k->off[v + 1] - k->off[v]);
    }
    for (int f = 0; f < 2; f++)
      W->fifo[f] = g_new(guint64, 2 * (gsize)own + 1);
    W->scratch = g_new(guint32, max_deg + 1);
    W->read = g_new0(guint32, n);
    if (i > 0) {
      Thread *T = g_aligned_alloc0(1, sizeof(Thread), 64);
      T->k = k;
      T->index = i;
      k->threads[i] = T;
    }
  }
  for (guint32 v = 0; v < k->n_nodes; v++)
    for (guint32 e = k->off[v]; e < k->off[v + 1]; e++) {
      guint s = k->worker_of[v], d = k->worker_of[edge_to(k->ew[e])];
      if (s != d) k->mb[(gsize)s * n + d].cap++;
    }
  for (gsize i = 0; i < (gsize)n * n; i++)
    k->mb[i].msg = g_new(Msg, MAX(k->mb[i].cap, 1));
  k->sched = (Schedule){.all = TRUE};
}

static void kernel_free(Kernel *k) {
  if (!k) return;
  layout_free(k);
  g_free(k->off);
  g_free(k->ew);
  g_free(k->ec);
  g_free(k->cls);
  g_free(k->qlat);
  g_free(k->nh);
  g_free(k->upload_free);
  g_free(k->blk.src);
  g_free(k->blk.src_t);
  g_free(k->seen_all);
  g_free(k->fin_in);
  g_free(k->tdist);
  g_free(k->snap);
  g_free(k->active);
  g_aligned_free(k);
}

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

/* The kernel for `t` under gp's jitter model, in the groups' node order: packed edges (a node's edges in
 * the topology's order), link classes (numbered in edge order; no result depends on the numbers). */
static Kernel *kernel_new(RelayWork *w, const NetGeoParams *gp, const NetTopology *t) {
  Kernel *k = g_aligned_alloc0(1, sizeof(Kernel), 64);
  const RelayGroups *gr = w->groups;
  k->topo = t;
  k->jitter = gp->jitter.model;
  k->jitter_params = gp->jitter.params;
  k->w = w;
  k->groups = gr;
  k->n_nodes = t->n_nodes;
  k->gid = gr->order;
  k->loc = gr->loc;
  k->off = g_new(guint32, t->n_nodes + 1);
  k->off[0] = 0;
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    k->off[l + 1] = k->off[l] + (t->adj_off[v + 1] - t->adj_off[v]);
  }
  g_autofree guint32 *loc_edge = g_new(guint32, MAX(t->n_edges, 1));
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    for (guint32 j = 0; j < t->adj_off[v + 1] - t->adj_off[v]; j++)
      loc_edge[t->adj_off[v] + j] = k->off[l] + j;
  }
  k->ew = g_new(guint64, MAX(t->n_edges, 1));
  k->ec = g_new(EdgeCold, MAX(t->n_edges, 1));
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(ClassKey));
  GHashTable *index = g_hash_table_new_full(class_key_hash, class_key_equal, g_free, NULL);
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    for (guint32 te = t->adj_off[v]; te < t->adj_off[v + 1]; te++) {
      ClassKey ck;
      memset(&ck, 0, sizeof ck);
      ck.mean_ns = t->lat_mean_ns[te];
      ck.floor_ns = t->lat_floor_ns[te];
      ck.tx_ns_per_byte = t->tx_ns_per_byte[te];
      ck.host_ns = t->lat_host_ns ? t->lat_host_ns[te] : 0;
      gpointer hit;
      guint32 c;
      if (g_hash_table_lookup_extended(index, &ck, NULL, &hit)) {
        c = GPOINTER_TO_UINT(hit);
      } else {
        c = keys->len;
        g_array_append_val(keys, ck);
        /* A copy as the table's key: `keys` moves when it grows. */
        g_hash_table_insert(index, g_memdup2(&ck, sizeof ck), GUINT_TO_POINTER(c));
      }
      guint32 u = t->adj[te];
      guint64 cross = gr->group_of[u] != gr->group_of[v] ? EDGE_CROSS_BIT : 0;
      guint32 le = loc_edge[te];
      k->ew[le] = cross | (guint64)gr->loc[u] << EDGE_TO_SHIFT | EDGE_HEARD_NONE;
      k->ec[le] = (EdgeCold){.rev = loc_edge[t->rev[te]], .cls = c};
    }
  }
  g_hash_table_destroy(index);
  k->n_cls = keys->len;
  k->cls = g_new0(LinkClass, MAX(keys->len, 1));
  k->qlat = g_new0(QLat, MAX(keys->len, 1));
  for (guint32 c = 0; c < keys->len; c++) {
    const ClassKey *ck = &g_array_index(keys, ClassKey, c);
    k->cls[c].mean_ns = ck->mean_ns;
    k->cls[c].floor_ns = ck->floor_ns;
    k->cls[c].tx_ns_per_byte = ck->tx_ns_per_byte;
    net_latency_draw_init(&k->cls[c].draw, gp, ck->mean_ns, ck->host_ns);
    if (k->cls[c].draw.kind == NET_DRAW_PARETO) {
      k->qlat[c].at[0] = SIM_TIME_MAX;
      for (guint j = 1; j <= QLAT_STEPS; j++)
        k->qlat[c].at[j] = pareto_of_u(&k->cls[c].draw, (double)j / QLAT_STEPS);
    }
  }
  g_array_free(keys, TRUE);
  k->nh = g_new0(NodeHot, MAX(t->n_nodes, 1));
  for (guint32 l = 0; l < t->n_nodes; l++)
    k->nh[l].special = gr->order[l] < t->n_special;
  k->upload_free = g_new0(SimTime, MAX(t->n_nodes, 1));
  k->window = MIN(gr->lookahead, RELAY_WINDOW_MAX_NS);
  /* Per special: the least floor of its links into it (each of its edges' reverse). */
  k->fin_in = g_new(SimTime, MAX(t->n_special, 1));
  for (guint32 s = 0; s < t->n_special; s++) {
    guint32 l = gr->loc[s];
    SimTime f = SIM_TIME_MAX;
    for (guint32 e = k->off[l]; e < k->off[l + 1]; e++)
      f = MIN(f, k->cls[k->ec[k->ec[e].rev].cls].floor_ns);
    k->fin_in[s] = f;
  }
  return k;
}

void relay_work_set_threads(RelayWork *w, guint threads) {
  g_return_if_fail(w != NULL);
  w->threads = MAX(threads, 1);
}

void relay_work_set_run_mode(RelayWork *w, RelayRunMode mode) {
  g_return_if_fail(w != NULL);
  w->run = mode;
}

void relay_work_set_groups(RelayWork *w, RelayGroups *groups) {
  g_return_if_fail(w != NULL && groups != NULL && groups->n_nodes == w->n_nodes);
  kernel_free(w->kernel);
  w->kernel = NULL;
  relay_groups_free(w->groups);
  w->groups = groups;
}

const RelayGroups *relay_work_groups(const RelayWork *w) {
  return w->groups;
}

/* The kernel for (t, gp's jitter) with w->threads, built or rebuilt as needed. */
static Kernel *kernel_get(RelayWork *w, const NetGeoParams *gp, const NetTopology *t) {
  Kernel *k = w->kernel;
  if (k && (k->topo != t || k->jitter != gp->jitter.model || k->jitter_params != gp->jitter.params)) {
    kernel_free(k);
    k = w->kernel = NULL;
  }
  if (!w->groups) w->groups = relay_groups_new(t);
  if (!k) k = w->kernel = kernel_new(w, gp, t);
  if (k->n_workers != relay_groups_threads(w->groups, w->threads)) {
    layout_free(k);
    layout_build(k, w->threads);
  }
  return k;
}

/* Whether the next block runs on all threads (see Schedule). */
static gboolean schedule_all(RelayWork *w, Kernel *k) {
  if (w->run == RELAY_RUN_ALL) return TRUE;
  if (w->run == RELAY_RUN_CALLER) return FALSE;
  Schedule *sc = &k->sched;
  guint64 at = sc->at++;
  if (at == 0) sc->ns[0] = sc->ns[1] = sc->work[0] = sc->work[1] = 0;
  sc->probing = at < 2 * SCHED_PROBE;
  if (sc->probing) return at & 1; /* alone, all, alone, ... */
  if (at == 2 * SCHED_PROBE && sc->work[0] > 0 && sc->work[1] > 0)
    sc->all = sc->ns[1] / sc->work[1] < sc->ns[0] / sc->work[0];
  if (sc->at >= SCHED_PERIOD) sc->at = 0;
  return sc->all;
}

/* Sets the block's stop from `stop` (NULL: none): the bitmaps sized for its groups, no group seen yet, and
 * the groups it watches counted (those of no watched node are never waited for). */
static void stop_prepare(Kernel *k, const NetTopology *t, const RelayStop *stop) {
  BlockSpec *bs = &k->blk;
  bs->stop_n = stop ? MIN(stop->n_nodes, t->n_nodes) : 0;
  bs->stop_group = bs->stop_n ? stop->group : NULL;
  bs->stop_groups = bs->stop_n ? stop->n_groups : 0;
  bs->stop_msgs = bs->stop_n ? MIN(MIN(stop->n_messages, bs->stop_n), t->n_special) : 0;
  bs->stop_first = bs->stop_n && stop->first_message_only;
  guint words = (bs->stop_groups + 63) / 64;
  if (words > k->seen_words) {
    k->seen_all = g_renew(guint64, k->seen_all, words);
    for (guint i = 0; i < k->n_workers; i++)
      k->workers[i]->seen = g_renew(guint64, k->workers[i]->seen, words);
    k->seen_words = words;
  }
  if (k->seen_words) memset(k->seen_all, 0, k->seen_words * sizeof *k->seen_all);
  k->groups_left = 0;
  k->stop_prev = STOP_NO_PREV;
  for (guint32 v = 0; v < bs->stop_n; v++) {
    guint32 grp = bs->stop_group ? bs->stop_group[v] : v;
    if (grp == RELAY_STOP_NONE) continue;
    if (grp >= bs->stop_groups) {
      g_critical("relay stop: node %u's group %u is not below n_groups %u: the relay runs to its end", v, grp,
                 bs->stop_groups);
      bs->stop_n = bs->stop_msgs = 0;
      return;
    }
    if (!(k->seen_all[grp >> 6] & UINT64_C(1) << (grp & 63))) k->groups_left++;
    k->seen_all[grp >> 6] |= UINT64_C(1) << (grp & 63);
  }
  if (k->seen_words) memset(k->seen_all, 0, k->seen_words * sizeof *k->seen_all);
}

static void geth_propagate(const void *params, const NetGeoParams *gp, const NetTopology *t,
                           const RelayBlock *b, const RelayStop *stop, SimRng *rng, RelayWork *w) {
  const GethParams *p = params;
  g_return_if_fail(t->n_nodes < (UINT32_C(1) << EDGE_TO_BITS) && w->n_nodes == t->n_nodes);
  gint64 c0 = mono_ns();
  Kernel *k = kernel_get(w, gp, t);
  BlockSpec *bs = &k->blk;
  bs->key = sim_rng_u64(rng);
  if (b->n_sources == 0) {
    reset_nodes(w);
    return;
  }
  if (b->n_sources > bs->src_cap) {
    bs->src_cap = b->n_sources;
    bs->src = g_renew(guint32, bs->src, bs->src_cap);
    bs->src_t = g_renew(SimTime, bs->src_t, bs->src_cap);
  }
  bs->params = p;
  bs->n_src = b->n_sources;
  bs->t0 = SIM_TIME_MAX;
  bs->last_source_t = INT64_MIN;
  for (guint i = 0; i < b->n_sources; i++) {
    bs->src[i] = k->loc[b->sources[i]];
    bs->src_t[i] = b->source_t[i];
    bs->t0 = MIN(bs->t0, b->source_t[i]);
    bs->last_source_t = MAX(bs->last_source_t, b->source_t[i]);
  }
  bs->verify = ms(p->verify_ms);
  bs->import = geth_import_ns(p, b->gas_used);
  bs->wait = ms(p->arrive_timeout_ms);
  bs->timeout = ms(p->fetch_timeout_ms);
  bs->last_decision_after_have = bs->verify + bs->import;
  /* arriveTimeout and five messages, each at least the lookahead (capped: a lower bound stays one). */
  bs->step_lb_announce = bs->wait + 5 * MIN(relay_groups_lookahead(w->groups, NULL, NULL), 60 * SIM_NS_PER_S);
  stop_prepare(k, t, stop);
  k->pruning = p->prune && bs->stop_n > 0 &&
               (guint64)(bs->stop_groups + bs->stop_msgs) * k->n_nodes <= PRUNE_MAX_ENTRIES;
  if (k->pruning) {
    if (!k->tg_built || k->tg_group != bs->stop_group || k->tg_n != bs->stop_n || k->tg_groups != bs->stop_groups ||
        k->tg_msgs != bs->stop_msgs)
      targets_build(k);
    /* Window 0 prunes nothing: every target open, at no value yet. */
    k->n_active = k->n_tg;
    for (guint32 T = 0; T < k->n_tg; T++) {
      k->snap[T] = SIM_TIME_MAX;
      k->active[T] = T;
    }
  }
  bs->join_first = t->n_joining ? net_joining_first_unavailable(t, bs->t0) : 0;
  for (guint32 c = 0; c < k->n_cls; c++) {
    double ns = b->size_bytes * k->cls[c].tx_ns_per_byte; /* net_edge_transfer_ns() */
    k->cls[c].transfer_ns = ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
  }
  w->loc = k->loc;
  k->work = k->work_critical = 0;
  guint n = k->n_workers;
  k->sched.probing = FALSE;
  gboolean all = n > 1 && schedule_all(w, k);
  k->n_run = all ? n : 1;
  memset(k->wait_s, 0, n * sizeof *k->wait_s);
  gint64 r0 = mono_ns();
  if (all) {
    if (!k->started) kernel_start_threads(k);
    __atomic_store_n(&k->finished, 0, __ATOMIC_RELAXED);
    bump_and_wake(&k->block_gen, &k->park_sleepers); /* publishes the block (sequentially consistent) */
    thread_block(k, 0);
    for (;;) {
      unsigned f = __atomic_load_n(&k->finished, __ATOMIC_ACQUIRE);
      if (f == n - 1) break;
      wait_change(&k->finished, f, &k->fin_sleepers);
    }
  } else {
    thread_block(k, 0);
  }
  gint64 r1 = mono_ns();
  if (n > 1 && k->sched.probing) {
    k->sched.ns[all] += (double)(r1 - r0);
    k->sched.work[all] += (double)k->work;
  }
  guint64 reached = 0, messages = 0;
  RelayWorkStats *st = &w->stats;
  for (guint i = 0; i < n; i++) {
    const Worker *W = k->workers[i];
    reached += W->reached;
    messages += W->g.messages;
    st->steps += W->steps;
    st->pruned += W->pruned;
    st->deferred += W->g.deferred;
    st->posted += W->g.posted;
    st->draws += W->g.draws;
    st->wait_s[i] += k->wait_s[i];
  }
  w->reached = reached;
  w->messages = messages;
  st->messages += messages;
  st->threads = n;
  st->propagations++;
  st->alone += n > 1 && !all;
  st->work += k->work;
  st->work_critical += k->work_critical;
  st->wall_s += (double)(r1 - c0) / 1e9;
}

const RelayModel relay_geth = {
    .info = {.name = "geth-1.8.23", .family = "relay",
             .help = "eth/63 as Geth 1.8.23: push to sqrt(peers lacking it) after verification, announce the hash "
                     "to the rest after import; announced blocks are fetched after arriveTimeout",
             .params = geth_params, .n_params = G_N_ELEMENTS(geth_params), .params_size = sizeof(GethParams)},
    .propagate = geth_propagate,
    .import_ns = geth_import_ns,
};
