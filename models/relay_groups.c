/* relay_groups.c: the fixed groups of nodes that the Geth kernel runs in windows (relay.h): built from the
 * links' least latencies, or as assigned; their order, work and lookahead. */
#include "relay-private.h"

G_DEFINE_QUARK(relay-error-quark, relay_error)

void relay_groups_free(RelayGroups *g) {
  if (!g) return;
  g_free(g->group_of);
  g_free(g->order);
  g_free(g->loc);
  g_free(g->group_start);
  g_free(g->prefix);
  g_free(g);
}

RelayGroups *relay_groups_copy(const RelayGroups *g) {
  RelayGroups *c = g_memdup2(g, sizeof *g);
  gsize n = MAX(g->n_nodes, 1);
  c->group_of = g_memdup2(g->group_of, n * sizeof *g->group_of);
  c->order = g_memdup2(g->order, n * sizeof *g->order);
  c->loc = g_memdup2(g->loc, n * sizeof *g->loc);
  c->group_start = g_memdup2(g->group_start, ((gsize)g->n_groups + 1) * sizeof *g->group_start);
  c->prefix = g_memdup2(g->prefix, ((gsize)g->n_groups + 1) * sizeof *g->prefix);
  return c;
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
void relay_groups_cut(const RelayGroups *g, guint n, guint32 *cut) {
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
  relay_groups_cut(g, n, cut);
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
