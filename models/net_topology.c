/* net_topology.c: the peer-to-peer topology of a geo network: regions of ordinary nodes, dials, specials,
 * the gateway mesh, the CSR graph with per-edge latency and bandwidth, joining nodes; transfer times. */
#include "net.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rdma.h"
#include "sync.h"

GQuark net_error_quark(void) {
  return g_quark_from_static_string("net-error-quark");
}

static SimTime ms_to_ns(double ms) {
  return sim_duration_clamp(sim_time_from_s(ms / 1e3));
}

/* Growable neighbour list of one node while the graph is built. */
typedef struct {
  guint32 *v;
  guint32 len, cap;
} NbrList;

static gboolean is_linked(const NbrList *l, guint32 a, guint32 b) {
  const NbrList *s = l[a].len <= l[b].len ? &l[a] : &l[b];
  guint32 other = s == &l[a] ? b : a;
  for (guint32 i = 0; i < s->len; i++)
    if (s->v[i] == other) return TRUE;
  return FALSE;
}

static void nbr_push(NbrList *l, guint32 v) {
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 8;
    l->v = g_renew(guint32, l->v, l->cap);
  }
  l->v[l->len++] = v;
}

static void add_link(NbrList *l, guint32 a, guint32 b) {
  nbr_push(&l[a], b);
  nbr_push(&l[b], a);
}

static int cmp_u32(const void *a, const void *b) {
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return (x > y) - (x < y);
}

void net_topology_free(NetTopology *t) {
  if (!t) return;
  g_free(t->region);
  g_free(t->city);
  g_free(t->cls);
  g_free(t->up_bps);
  g_free(t->down_bps);
  g_free(t->adj_off);
  g_free(t->adj);
  g_free(t->rev);
  g_free(t->lat_mean_ns);
  g_free(t->lat_floor_ns);
  g_free(t->tx_ns_per_byte);
  g_free(t->out_links);
  g_free(t->lat_host_ns);
  g_free(t->join_node);
  g_free(t->join_avail_ns);
  g_free(t);
}

typedef struct {
  SimTime avail_ns;
  guint32 node;
} JoinEntry;

static int cmp_join(const void *a, const void *b) {
  const JoinEntry *x = a, *y = b;
  if (x->avail_ns != y->avail_ns) return x->avail_ns < y->avail_ns ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

void net_topology_set_joining(NetTopology *t, const guint32 *nodes, const SimTime *avail_ns, guint32 n) {
  g_return_if_fail(t != NULL && (n == 0 || (nodes != NULL && avail_ns != NULL)));
  g_clear_pointer(&t->join_node, g_free);
  g_clear_pointer(&t->join_avail_ns, g_free);
  t->n_joining = 0;
  if (n == 0) return;
  g_autofree JoinEntry *e = g_new(JoinEntry, n);
  for (guint32 i = 0; i < n; i++) {
    g_return_if_fail(nodes[i] < t->n_nodes);
    e[i] = (JoinEntry){.avail_ns = avail_ns[i], .node = nodes[i]};
  }
  qsort(e, n, sizeof *e, cmp_join);
  t->join_node = g_new(guint32, n);
  t->join_avail_ns = g_new(SimTime, n);
  for (guint32 i = 0; i < n; i++) {
    t->join_node[i] = e[i].node;
    t->join_avail_ns[i] = e[i].avail_ns;
  }
  t->n_joining = n;
}

/* The joining ordinary nodes of p->joining (see net_topology_build()). */
static void build_joining(const NetGeoParams *p, NetTopology *t, uint64_t seed) {
  const guint32 S = t->n_special, N = t->n_nodes - t->n_special;
  guint32 k = (guint32)llround(p->joining.share * (double)N);
  if (k == 0) return;
  SimTime sync_ns =
      sim_sync_class_duration(net_joining_machine_names[p->joining.machine], SIM_SYNC_TARGET_HEAD);
  g_return_if_fail(sync_ns >= 0);
  SimRng rng;
  sim_rng_init(&rng, seed, SIM_RNG_SETUP_BASE + 2);
  g_autofree guint32 *ids = g_new(guint32, N);
  for (guint32 i = 0; i < N; i++)
    ids[i] = S + i;
  g_autofree SimTime *avail = g_new(SimTime, k);
  for (guint32 i = 0; i < k; i++) {
    guint32 j = i + (guint32)sim_rng_below(&rng, (uint64_t)(N - i));
    guint32 tmp = ids[i];
    ids[i] = ids[j];
    ids[j] = tmp;
    avail[i] = sim_time_from_s(p->joining.window_s * sim_rng_uniform(&rng)) + sync_ns;
  }
  net_topology_set_joining(t, ids, avail, k);
}

/* Exact ordinary-node counts per region: largest-remainder rounding of nodes x share. */
static void region_counts(const NetGeoParams *p, guint32 n, guint32 *count) {
  g_autofree double *frac = g_new(double, p->n_regions);
  guint32 given = 0;
  for (guint r = 0; r < p->n_regions; r++) {
    double quota = (double)n * p->node_share[r];
    count[r] = (guint32)floor(quota);
    frac[r] = quota - count[r];
    given += count[r];
  }
  /* The quotas sum to n up to rounding, so few regions get one more; shares of 0 never do. */
  while (given < n) {
    guint best = G_MAXUINT;
    for (guint r = 0; r < p->n_regions; r++)
      if (p->node_share[r] > 0 && frac[r] >= 0 && (best == G_MAXUINT || frac[r] > frac[best])) best = r;
    if (best == G_MAXUINT) break;
    count[best]++;
    frac[best] = -1;
    given++;
  }
  /* Cannot happen with shares normalised to 1, but never leave nodes without a region. */
  for (guint r = 0; given < n; r = (r + 1) % p->n_regions)
    if (p->node_share[r] > 0 || r == p->n_regions - 1) count[r]++, given++;
}

/* ---- Building the topology, step by step (net_topology_build() calls them in this order; every draw
 * comes from one setup stream, so the order of the steps is part of the result) ---- */

/* The topology with its per-node arrays allocated (contents set by the steps below). */
static NetTopology *topology_alloc(const NetGeoParams *p, uint64_t seed) {
  const guint32 n = p->n_specials + (guint32)p->nodes;
  NetTopology *t = g_new0(NetTopology, 1);
  t->n_nodes = n;
  t->n_special = p->n_specials;
  t->seed = seed;
  t->inter_region_bps = p->inter_region_bps;
  t->out_links = g_new0(guint32, n);
  t->region = g_new(guint16, n);
  t->city = g_new(guint16, n);
  t->cls = g_new(guint8, n);
  t->up_bps = g_new(double, n);
  t->down_bps = g_new(double, n);
  return t;
}

/* Specials (ids 0 .. S-1): their region and city, the data-centre class and its bandwidth. */
static void place_specials(const NetGeoParams *p, NetTopology *t) {
  for (guint32 s = 0; s < t->n_special; s++) {
    t->region[s] = p->specials[s].region;
    t->city[s] = p->specials[s].city;
    t->cls[s] = NET_CLASS_DATACENTER;
    t->up_bps[s] = p->dc_upload_bps;
    t->down_bps[s] = p->dc_download_bps;
  }
}

/* Where dials look for ordinary nodes: the ordinary nodes of each region (region_pool[pool_off[r] ..
 * pool_off[r] + count[r])) and all of them (all_pool). */
typedef struct {
  guint32 *count;       /* R: ordinary nodes per region */
  guint32 *pool_off;    /* R + 1 */
  guint32 *region_pool; /* N, by region */
  guint32 *all_pool;    /* N */
} DialPools;

static void dial_pools_clear(DialPools *d) {
  g_free(d->count);
  g_free(d->pool_off);
  g_free(d->region_pool);
  g_free(d->all_pool);
}

/* Ordinary nodes (ids S ..): regions by exact counts, shuffled (Fisher-Yates), the home class with its
 * region's bandwidth; fills the dial pools. */
static void place_ordinary(const NetGeoParams *p, NetTopology *t, SimRng *rng, DialPools *d) {
  const guint32 S = t->n_special, N = t->n_nodes - t->n_special;
  const guint R = p->n_regions;
  d->count = g_new0(guint32, R);
  region_counts(p, N, d->count);
  g_autofree guint16 *label = g_new(guint16, N);
  for (guint r = 0, k = 0; r < R; r++)
    for (guint32 c = 0; c < d->count[r]; c++)
      label[k++] = (guint16)r;
  for (guint32 i = N - 1; i > 0; i--) {
    guint32 j = (guint32)sim_rng_below(rng, (uint64_t)i + 1);
    guint16 tmp = label[i];
    label[i] = label[j];
    label[j] = tmp;
  }
  for (guint32 i = 0; i < N; i++) {
    guint32 u = S + i;
    t->region[u] = label[i];
    t->city[u] = NET_NO_CITY;
    t->cls[u] = NET_CLASS_HOME;
    t->up_bps[u] = p->upload_bps[label[i]];
    t->down_bps[u] = p->download_bps[label[i]];
  }
  d->pool_off = g_new0(guint32, R + 1);
  for (guint r = 0; r < R; r++)
    d->pool_off[r + 1] = d->pool_off[r] + d->count[r];
  d->region_pool = g_new(guint32, N);
  d->all_pool = g_new(guint32, N);
  g_autofree guint32 *fill = g_memdup2(d->pool_off, sizeof(guint32) * R);
  for (guint32 i = 0; i < N; i++) {
    d->region_pool[fill[label[i]]++] = S + i;
    d->all_pool[i] = S + i;
  }
}

/* Ordinary dials, in node order. */
static void dial_ordinary(const NetGeoParams *p, NetTopology *t, const DialPools *d, SimRng *rng,
                          NbrList *lists) {
  const guint32 S = t->n_special, N = t->n_nodes - t->n_special, n = t->n_nodes;
  const guint32 max_peers = (guint32)MIN(p->max_peers, (int64_t)UINT32_MAX);
  const guint32 out_peers = (guint32)p->out_peers;
  for (guint32 u = S; u < n; u++) {
    guint r = t->region[u];
    guint32 rn = d->count[r];
    const guint32 *rp = d->region_pool + d->pool_off[r];
    guint32 dials = out_peers;
    if (p->out_degree_cdf) { /* inverse CDF; no draw without the table, so the default stream is unchanged */
      double x = sim_rng_uniform(rng);
      dials = NET_OUT_DEGREE_MAX;
      for (guint k = 0; k < NET_OUT_DEGREE_MAX; k++)
        if (x < p->out_degree_cdf[k]) {
          dials = k + 1;
          break;
        }
    }
    for (guint32 k = 0; k < dials && lists[u].len < max_peers; k++) {
      for (guint tries = 0; tries < NET_DIAL_TRIES; tries++) {
        gboolean local = sim_rng_uniform(rng) < p->geo_bias;
        guint32 v = local ? rp[sim_rng_below(rng, rn)] : S + (guint32)sim_rng_below(rng, N);
        if (v == u || lists[v].len >= max_peers || is_linked(lists, u, v)) continue;
        add_link(lists, u, v);
        t->out_links[u]++;
        break;
      }
    }
  }
}

/* Specials: draws without replacement from the two pools (swap-remove; the pools' order after one
 * special is a fine starting point for the next, and it depends only on the seed). A refused candidate
 * stays refused for this special (links and degrees only grow), so removing it is exact. */
static void dial_specials(const NetGeoParams *p, NetTopology *t, DialPools *d, SimRng *rng, NbrList *lists) {
  const guint32 S = t->n_special, N = t->n_nodes - t->n_special;
  const guint R = p->n_regions;
  const guint32 max_peers = (guint32)MIN(p->max_peers, (int64_t)UINT32_MAX);
  for (guint32 s = 0; s < S; s++) {
    const NetSpecial *sp = &p->specials[s];
    gboolean capped = sp->role != NET_ROLE_GATEWAY;
    guint32 want = MIN(sp->peers, N), got = 0;
    guint r = sp->region < R ? sp->region : 0;
    guint32 *rp = d->region_pool + d->pool_off[r];
    guint32 rn = d->count[r], an = N;
    while (got < want && (rn > 0 || an > 0)) {
      gboolean local = sim_rng_uniform(rng) < p->geo_bias;
      guint32 *pool = (local && rn > 0) || an == 0 ? rp : d->all_pool;
      guint32 *len = pool == rp ? &rn : &an;
      guint32 k = (guint32)sim_rng_below(rng, *len);
      guint32 v = pool[k];
      pool[k] = pool[*len - 1];
      pool[*len - 1] = v;
      (*len)--;
      if ((capped && lists[v].len >= max_peers) || is_linked(lists, s, v)) continue;
      add_link(lists, s, v);
      t->out_links[s]++;
      got++;
    }
  }
}

/* Gateways of different pools: all of them (gateway_mesh), or those in the same city. */
static void link_gateways(const NetGeoParams *p, NbrList *lists) {
  const guint32 S = p->n_specials;
  for (guint32 a = p->n_vantages; a < S; a++)
    for (guint32 b = a + 1; b < S; b++) {
      const NetSpecial *x = &p->specials[a], *y = &p->specials[b];
      if (x->pool == y->pool) continue;
      if (p->gateway_mesh || (x->city != NET_NO_CITY && x->city == y->city)) add_link(lists, a, b);
    }
}

/* The directed edges in *n_edges; FALSE (NET_ERROR_TOPOLOGY) when a special found no peer or the edges do
 * not fit the CSR's 32-bit offsets. */
static gboolean check_links(const NetGeoParams *p, const NbrList *lists, guint32 n, guint64 *n_edges,
                            GError **error) {
  const guint32 S = p->n_specials;
  const guint32 max_peers = (guint32)MIN(p->max_peers, (int64_t)UINT32_MAX);
  *n_edges = 0;
  for (guint32 u = 0; u < n; u++)
    *n_edges += lists[u].len;
  for (guint32 s = 0; s < S; s++)
    if (lists[s].len == 0) {
      g_set_error(error, NET_ERROR, NET_ERROR_TOPOLOGY,
                  "%s \"%s\" found no peer (every ordinary node already has max_peers = %u links)",
                  p->specials[s].role == NET_ROLE_GATEWAY ? "gateway" : "vantage point", p->specials[s].name,
                  max_peers);
      return FALSE;
    }
  if (*n_edges > UINT32_MAX) {
    g_set_error(error, NET_ERROR, NET_ERROR_TOPOLOGY, "too many links (%" G_GUINT64_FORMAT " directed edges)",
                *n_edges);
    return FALSE;
  }
  return TRUE;
}

static void nbr_lists_free(NbrList *lists, guint32 n) {
  for (guint32 u = 0; u < n; u++)
    g_free(lists[u].v);
  g_free(lists);
}

/* The CSR graph, neighbours sorted, with the per-edge arrays allocated; frees the lists. */
static void build_csr(NetTopology *t, NbrList *lists, guint64 n_edges) {
  const guint32 n = t->n_nodes;
  t->n_edges = n_edges;
  t->adj_off = g_new(guint32, n + 1);
  t->adj = g_new(guint32, MAX(n_edges, 1));
  t->rev = g_new(guint32, MAX(n_edges, 1));
  t->lat_mean_ns = g_new(SimTime, MAX(n_edges, 1));
  t->lat_floor_ns = g_new(SimTime, MAX(n_edges, 1));
  t->tx_ns_per_byte = g_new(double, MAX(n_edges, 1));
  t->adj_off[0] = 0;
  for (guint32 u = 0; u < n; u++) {
    guint32 off = t->adj_off[u];
    if (lists[u].len) memcpy(t->adj + off, lists[u].v, lists[u].len * sizeof(guint32));
    qsort(t->adj + off, lists[u].len, sizeof(guint32), cmp_u32);
    t->adj_off[u + 1] = off + lists[u].len;
  }
  nbr_lists_free(lists, n);
}

/* Per directed edge: its reverse edge, mean latency (city RTT / 2 between two known cities, else the region
 * matrix, times latency_scale), the jitter model's floor of that mean, and the time per byte. */
static void set_edges(const NetGeoParams *p, NetTopology *t) {
  const guint R = p->n_regions;
  /* x 1.0 is exact: at the default every mean, and so every output, is what it was without the scale. */
  const double scale = p->latency_scale > 0 ? p->latency_scale : 1.0;
  for (guint32 u = 0; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      const guint32 *base = t->adj + t->adj_off[v];
      const guint32 *hit = bsearch(&u, base, t->adj_off[v + 1] - t->adj_off[v], sizeof(guint32), cmp_u32);
      g_assert(hit != NULL);
      t->rev[e] = t->adj_off[v] + (guint32)(hit - base);
      double ms = NAN;
      guint16 cu = t->city[u], cv = t->city[v];
      if (cu != NET_NO_CITY && cv != NET_NO_CITY) ms = p->city_rtt_ms[(gsize)cu * p->n_cities + cv] / 2;
      if (isnan(ms)) ms = p->latency_ms[(gsize)t->region[u] * R + t->region[v]];
      t->lat_mean_ns[e] = ms_to_ns(ms * scale);
      t->lat_floor_ns[e] =
          p->jitter.model ? ((const NetJitterModel *)p->jitter.model)->floor_ns(p->jitter.params, t->lat_mean_ns[e])
                          : t->lat_mean_ns[e];
      double bps = MIN(t->up_bps[u], t->down_bps[v]);
      if (t->inter_region_bps > 0 && t->region[u] != t->region[v]) bps = MIN(bps, t->inter_region_bps);
      t->tx_ns_per_byte[e] = 8e9 / bps;
    }
}

/* Host overheads of the data-centre stack: folded into the edges' means and floors here, so that the
 * relay's link classes carry them and its loop has nothing to test. FALSE for a stack without overheads
 * (a programming error: the parameter table lists only known stacks). */
static gboolean add_host_overheads(const NetGeoParams *p, NetTopology *t) {
  SimTime host = sim_stack_host_overhead_ns_by_name(net_dc_stack_names[p->dc_stack]);
  g_return_val_if_fail(host >= 0, FALSE);
  t->lat_host_ns = g_new0(SimTime, MAX(t->n_edges, 1));
  for (guint32 u = 0; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      if (t->cls[u] != NET_CLASS_DATACENTER || t->cls[t->adj[e]] != NET_CLASS_DATACENTER) continue;
      t->lat_host_ns[e] = host;
      t->lat_mean_ns[e] += host;
      t->lat_floor_ns[e] += host;
    }
  return TRUE;
}

NetTopology *net_topology_build(const NetGeoParams *p, uint64_t seed, GError **error) {
  g_return_val_if_fail(p != NULL && p->n_regions > 0 && p->node_share && p->latency_ms, NULL);
  g_return_val_if_fail(p->nodes >= 1 && p->nodes <= UINT32_MAX / 2, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  SimRng rng;
  sim_rng_init(&rng, seed, SIM_RNG_SETUP_BASE + 1);
  g_autoptr(NetTopology) t = topology_alloc(p, seed);
  place_specials(p, t);
  DialPools pools = {0};
  place_ordinary(p, t, &rng, &pools);
  NbrList *lists = g_new0(NbrList, t->n_nodes);
  dial_ordinary(p, t, &pools, &rng, lists);
  dial_specials(p, t, &pools, &rng, lists);
  dial_pools_clear(&pools);
  link_gateways(p, lists);
  guint64 n_edges;
  if (!check_links(p, lists, t->n_nodes, &n_edges, error)) {
    nbr_lists_free(lists, t->n_nodes);
    return NULL;
  }
  build_csr(t, lists, n_edges);
  set_edges(p, t);
  if (p->dc_stack != NET_DC_STACK_NONE && !add_host_overheads(p, t)) return NULL;
  if (p->joining.share > 0) build_joining(p, t, seed);
  return g_steal_pointer(&t);
}

SimTime net_transfer_ns(const NetTopology *t, guint32 u, guint32 v, double bytes) {
  double bps = MIN(t->up_bps[u], t->down_bps[v]);
  if (t->inter_region_bps > 0 && t->region[u] != t->region[v]) bps = MIN(bps, t->inter_region_bps);
  double ns = bytes * 8e9 / bps;
  return ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
}
