/* tx_flood.c: flooding: a transaction reaches each node first along its fastest path (shortest paths over the
 * topology). */
#include "tx-private.h"
#include "relay.h" /* RelayMix: the trees' per-node streams */

#define DJ_NODE_BITS 22

void txw_dj_push(TxwHeap *h, int64_t t, guint32 v) {
  txw_heap_push(h, ((uint64_t)t << DJ_NODE_BITS) | v);
}

/* A new search from `src`: every node's time stale but src's (0, no last hop), the heap holding src alone. */
static void dj_start(TxWorld *w, guint32 src) {
  w->epoch++;
  w->djheap.len = 0;
  w->dist[src] = 0;
  w->hop[src] = 0;
  w->dj_epoch[src] = w->epoch;
  txw_dj_push(&w->djheap, 0, src);
}

/* Per-connection state of one session (TxPeerLinks): a directed edge's four int64s. */
enum { EL_ARR = 0, EL_END, EL_LIST_FWD, EL_LIST_ARR, EL_N };
#define EL_DROPPED INT64_MAX

int64_t *txw_links_new(const TxWorld *w) {
  guint64 n = w->netc.topo->n_edges;
  int64_t *l = g_new(int64_t, (gsize)n * EL_N);
  for (guint64 e = 0; e < n; e++) {
    l[e * EL_N + EL_ARR] = l[e * EL_N + EL_END] = INT64_MIN / 4;
    l[e * EL_N + EL_LIST_FWD] = INT64_MIN;
    l[e * EL_N + EL_LIST_ARR] = EL_DROPPED;
  }
  return l;
}

/* What a node that forwards at absolute time `fwd` sends over directed edge `e` (latency draw `lat`, transfer
 * `s`), with the session's connection state `l` (Geth 1.8.23, eth/peer.go): the lists of a connection are
 * sent one at a time in queue order (its broadcast loop), so a send starts when the previous one ends and the
 * connection delivers in order (TCP); a list is dropped when `max_q` (> 0) lists wait in the queue
 * (AsyncSendTransactions, maxQueuedTxs); with `batch`, transactions promoted at the same instant (a nonce gap
 * filled, or one received message: AddRemotes) are one list (promoteExecutables' one event), which arrives as
 * one message: its transactions arrive together, when the list's first would (the others' send time only
 * delays the connection's next list), so the node they reach promotes them together again. The lists waiting
 * when this one comes are counted as the backlog over this list's send time (exact when a session's lists have
 * one size). Returns the absolute arrival, or INT64_MAX when the list is dropped. */
int64_t txw_link_send(int64_t *l, int64_t fwd, int64_t lat, int64_t s, int64_t max_q, gboolean batch,
                      guint64 *dropped) {
  if (batch && l[EL_LIST_FWD] == fwd) { /* promoted with the previous transaction: the same list and message */
    if (l[EL_LIST_ARR] == EL_DROPPED) return INT64_MAX;
    l[EL_END] += s;
    return l[EL_LIST_ARR];
  }
  l[EL_LIST_FWD] = fwd;
  if (max_q > 0 && l[EL_END] > fwd) {
    int64_t backlog = l[EL_END] - fwd;
    int64_t waiting = s > 0 ? (backlog + s - 1) / s - 1 : 0;
    if (waiting >= max_q) {
      l[EL_LIST_ARR] = EL_DROPPED;
      if (dropped) (*dropped)++;
      return INT64_MAX;
    }
  }
  int64_t start = MAX(fwd, l[EL_END]);
  l[EL_END] = start + s;
  int64_t a = MAX(start + s + lat, l[EL_ARR]);
  l[EL_LIST_ARR] = l[EL_ARR] = a;
  return a;
}

/* Arrival times (relative to the start at `src`, time 0) at every node, into w->dist (valid where
 * dj_epoch == epoch) and the last hop's delay into w->hop. With `avail` (a session's previous transaction:
 * when each node could forward it), a node forwards only from max(own reception, avail[node]) - start
 * offset `t0` - and afterwards avail[node] becomes its own forward time. With `links` (the session's
 * connections, txw_links_new()), each send goes through txw_link_send(). Latencies are drawn from `rng`.
 * Returns the latest arrival of any send (relative). */
int64_t txw_flood(TxWorld *w, SimRng *rng, guint32 src, double bytes, int64_t *avail, int64_t t0, int64_t *links) {
  int64_t last = 0;
  const NetTopology *t = w->netc.topo;
  dj_start(w, src);
  const uint64_t mask = (UINT64_C(1) << DJ_NODE_BITS) - 1;
  while (w->djheap.len) {
    uint64_t k = txw_heap_pop(&w->djheap);
    guint32 v = (guint32)(k & mask);
    int64_t tv = (int64_t)(k >> DJ_NODE_BITS);
    if (tv != w->dist[v]) continue;
    int64_t fwd = tv;
    if (avail) {
      if (avail[v] - t0 > fwd) fwd = avail[v] - t0;
      avail[v] = fwd + t0;
    }
    for (guint32 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++) {
      guint32 u = t->adj[e];
      int64_t lat = net_edge_latency(w->netc.gp, t, e, rng), s = net_edge_transfer_ns(t, e, bytes);
      int64_t tu;
      if (links) {
        int64_t a = txw_link_send(links + (gsize)e * EL_N, fwd + t0, lat, s, w->cfg.p.max_queued_lists,
                                  w->cfg.p.batch_lists, &w->lists_dropped);
        if (a == INT64_MAX) continue;
        tu = a - t0;
      } else {
        tu = fwd + lat + s;
      }
      if (tu > last) last = tu;
      int64_t d = tu - fwd;
      if (w->dj_epoch[u] != w->epoch || tu < w->dist[u]) {
        w->dj_epoch[u] = w->epoch;
        w->dist[u] = tu;
        w->hop[u] = d;
        txw_dj_push(&w->djheap, tu, u);
      }
    }
  }
  return last;
}

/* Target j's delay and last hop from the last flood: vantage points, then pools (their earliest gateway). */
void txw_flood_targets(const TxWorld *w, int64_t *d, int64_t *hop) {
  for (guint j = 0; j < w->n_targets; j++) {
    d[j] = INT64_MAX / 4;
    hop[j] = 0;
  }
  for (guint v = 0; v < w->n_vantages; v++) {
    guint32 n = w->netc.vantage_node[v];
    if (w->dj_epoch[n] == w->epoch) {
      d[v] = w->dist[n];
      hop[v] = w->hop[n];
    }
  }
  for (guint p = 0; p < w->n_pools; p++) {
    for (guint g = 0; g < w->netc.pool_n_gw[p]; g++) {
      guint32 n = w->netc.pool_gw[p][g];
      if (w->dj_epoch[n] == w->epoch && w->dist[n] < d[w->n_vantages + p]) {
        d[w->n_vantages + p] = w->dist[n];
        hop[w->n_vantages + p] = w->hop[n];
      }
    }
  }
}

static double mean_bytes(const TxParams *p) {
  return p->share_tx * p->bytes_tx + p->share_mc * p->bytes_mc + p->share_cc * p->bytes_cc;
}

/* The region trees' latency draws: each node's out-links from a stream of its own, keyed by (the run's tree
 * key, tree, node), so that a tree's times do not depend on the order nodes are settled in, nor on where the
 * search stops. Pareto links (every link of the shipped scenarios) draw from a SplitMix64 stream (RelayMix,
 * as the relay kernels do) keyed by one word of the Philox stream (seed, SIM_RNG_SETUP_BASE + 43); other
 * jitter models from Philox streams (seed, TREE_STREAM_BASE + tree x nodes + node), ids far above the setup
 * purposes' SIM_RNG_SETUP_BASE + k. */
#define TREE_STREAM_BASE (SIM_RNG_SETUP_BASE + (UINT64_C(1) << 40))
#define TREE_MIX_PURPOSE 1

#define NO_FLOOR INT64_MIN

/* One sampled tree from `src` (tree number `tree`): Dijkstra over latency draws (edge e's from draw[ecls[e]]:
 * net_edge_latency's distribution) plus the transfer of `bytes`, stopped once every target is settled (the
 * vantage points' nodes, and one gateway per pool: a pool's first gateway to settle is its earliest; with
 * tree_stop false, run over the whole network: the same times). Its delays and last hops go into d and hop
 * (txw_flood_targets' layout: INT64_MAX / 4 and 0 for a target never reached). `toff`/`tgt` list each node's
 * targets (CSR); `done` is scratch of n_targets. lat_lo[c]: the least latency class c can draw (NO_FLOOR: its
 * draws must all be made, a model's from the Philox stream). */
static void sample_tree(TxWorld *w, guint64 key, guint64 tree, guint32 src, double bytes,
                        const NetLatencyDraw *draw, const int64_t *lat_lo, gboolean mix_only, const guint32 *ecls,
                        const guint32 *toff, const guint32 *tgt, guint8 *done, int64_t *d, int64_t *hop) {
  const NetTopology *t = w->netc.topo;
  for (guint j = 0; j < w->n_targets; j++) {
    d[j] = INT64_MAX / 4;
    hop[j] = 0;
    done[j] = 0;
  }
  /* The targets still to settle: every vantage point, every pool with a gateway. */
  guint left = w->n_vantages;
  for (guint p = 0; p < w->n_pools; p++)
    left += w->netc.pool_n_gw[p] > 0;
  dj_start(w, src);
  const uint64_t mask = (UINT64_C(1) << DJ_NODE_BITS) - 1;
  const gboolean stop = w->cfg.p.tree_stop;
  while (w->djheap.len && (left || !stop)) {
    uint64_t k = txw_heap_pop(&w->djheap);
    guint32 v = (guint32)(k & mask);
    int64_t tv = (int64_t)(k >> DJ_NODE_BITS);
    if (tv != w->dist[v]) continue; /* a stale key: v was pushed again with a shorter time */
    for (guint32 i = toff[v]; i < toff[v + 1]; i++) {
      guint j = tgt[i];
      if (done[j]) continue;
      done[j] = 1;
      d[j] = tv;
      hop[j] = w->hop[v];
      left--;
    }
    guint64 id = tree * t->n_nodes + v;
    RelayMix m;
    relay_mix_init(&m, key, TREE_MIX_PURPOSE, id);
    SimRng r;
    if (!mix_only) sim_rng_init(&r, w->seed, TREE_STREAM_BASE + id);
    for (guint32 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++) {
      guint32 u = t->adj[e];
      const NetLatencyDraw *dr = &draw[ecls[e]];
      int64_t xfer = net_edge_transfer_ns(t, e, bytes);
      /* Most edges lead to a node already reached sooner than any draw could: skip the draw (a Pareto draw
       * still takes its uniform from m, so that the next edges' draws are the same). */
      int64_t floor_ns = lat_lo[ecls[e]];
      if (floor_ns != NO_FLOOR && w->dj_epoch[u] == w->epoch && tv + xfer + floor_ns >= w->dist[u]) {
        if (dr->kind == NET_DRAW_PARETO) (void)relay_mix_next(&m);
        continue;
      }
      int64_t lat =
          dr->kind == NET_DRAW_PARETO
              ? net_pareto_table_of_u(&dr->pareto, dr->scale_ns, dr->inv_shape, relay_mix_uniform_pos(&m)) +
                    dr->host_ns
          : dr->kind == NET_DRAW_FIXED ? dr->fixed_ns
                                       : net_latency_draw(dr, &r);
      int64_t hop_ns = lat + xfer, tu = tv + hop_ns;
      if (w->dj_epoch[u] == w->epoch && tu >= w->dist[u]) continue;
      w->dj_epoch[u] = w->epoch;
      w->dist[u] = tu;
      w->hop[u] = hop_ns;
      txw_dj_push(&w->djheap, tu, u);
    }
  }
}

/* A (mean, host overhead) pair of SimTimes as a hash key. */
static guint pair_hash(gconstpointer k) {
  const SimTime *x = k;
  return (guint)sim_mix64((guint64)x[0] ^ sim_mix64((guint64)x[1]));
}
static gboolean pair_equal(gconstpointer a, gconstpointer b) {
  const SimTime *x = a, *y = b;
  return x[0] == y[0] && x[1] == y[1];
}

void txw_sample_regions(TxWorld *w) {
  guint nr = w->netc.gp->n_regions;
  const NetTopology *t = w->netc.topo;
  w->regions = g_new0(RegionSamples, nr);
  double bytes = mean_bytes(&w->cfg.p);
  /* Each node's targets: its vantage points, and the pools it is a gateway of. */
  g_autofree guint32 *toff = g_new0(guint32, (gsize)t->n_nodes + 1);
  for (guint v = 0; v < w->n_vantages; v++)
    toff[w->netc.vantage_node[v] + 1]++;
  for (guint p = 0; p < w->n_pools; p++)
    for (guint g = 0; g < w->netc.pool_n_gw[p]; g++)
      toff[w->netc.pool_gw[p][g] + 1]++;
  for (guint32 v = 0; v < t->n_nodes; v++)
    toff[v + 1] += toff[v];
  g_autofree guint32 *fill = g_memdup2(toff, ((gsize)t->n_nodes + 1) * sizeof *toff);
  g_autofree guint32 *tgt = g_new(guint32, MAX(toff[t->n_nodes], 1));
  for (guint v = 0; v < w->n_vantages; v++)
    tgt[fill[w->netc.vantage_node[v]]++] = v;
  for (guint p = 0; p < w->n_pools; p++)
    for (guint g = 0; g < w->netc.pool_n_gw[p]; g++)
      tgt[fill[w->netc.pool_gw[p][g]]++] = w->n_vantages + p;
  g_autofree guint8 *done = g_new(guint8, MAX(w->n_targets, 1));
  /* The links' latency distributions: one table per distinct (mean, host overhead) pair. */
  guint64 n_edges = t->adj_off[t->n_nodes];
  g_autofree guint32 *ecls = g_new(guint32, MAX(n_edges, 1));
  GArray *draws = g_array_new(FALSE, FALSE, sizeof(NetLatencyDraw));
  GHashTable *cls = g_hash_table_new_full(pair_hash, pair_equal, g_free, NULL);
  for (guint64 e = 0; e < n_edges; e++) {
    SimTime key[2] = {t->lat_mean_ns[e], t->lat_host_ns ? t->lat_host_ns[e] : 0};
    gpointer found;
    if (!g_hash_table_lookup_extended(cls, key, NULL, &found)) {
      NetLatencyDraw dr;
      net_latency_draw_init(&dr, w->netc.gp, key[0], key[1]);
      g_array_append_val(draws, dr);
      found = GUINT_TO_POINTER(draws->len - 1);
      g_hash_table_insert(cls, g_memdup2(key, sizeof key), found);
    }
    ecls[e] = GPOINTER_TO_UINT(found);
  }
  g_hash_table_destroy(cls);
  gboolean mix_only = TRUE; /* no link needs a Philox stream */
  g_autofree int64_t *lat_lo = g_new(int64_t, MAX(draws->len, 1));
  for (guint i = 0; i < draws->len; i++) {
    const NetLatencyDraw *dr = &g_array_index(draws, NetLatencyDraw, i);
    mix_only &= dr->kind != NET_DRAW_MODEL;
    /* A fixed latency is itself. A Pareto draw is scale / U^(1/shape) >= the scale, which the tables'
     * values are within 1e-14 relative of (net.h, "The Pareto draw"): a floor 1e-9 relative and 1 ns below
     * the scale leaves a wide margin for their error and the rounding to ns. */
    lat_lo[i] = dr->kind == NET_DRAW_FIXED                          ? dr->fixed_ns
                : dr->kind == NET_DRAW_PARETO && dr->scale_ns >= 0 ? (int64_t)(dr->scale_ns * (1 - 1e-9)) - 1 +
                                                                         dr->host_ns
                                                                   : NO_FLOOR;
  }
  SimRng keyr;
  sim_rng_init(&keyr, w->seed, SIM_RNG_SETUP_BASE + 43);
  const guint64 key = sim_rng_u64(&keyr);
  SimRng rng; /* the trees' sources (the sessions' stream, w->rng, is left as it is) */
  sim_rng_init(&rng, w->seed, SIM_RNG_SETUP_BASE + 41);
  guint64 tree = 0;
  for (guint r = 0; r < nr; r++) {
    guint32 lo = w->region_nodes_off[r], hi = w->region_nodes_off[r + 1];
    if (lo == hi) continue;
    RegionSamples *rs = &w->regions[r];
    rs->n = (guint)w->cfg.p.region_samples;
    rs->d = g_new(int64_t, (gsize)rs->n * w->n_targets);
    rs->hop = g_new(int64_t, (gsize)rs->n * w->n_targets);
    for (guint s = 0; s < rs->n; s++) {
      guint32 src = w->region_nodes[lo + sim_rng_below(&rng, hi - lo)];
      sample_tree(w, key, tree++, src, bytes, (const NetLatencyDraw *)draws->data, lat_lo, mix_only, ecls, toff,
                  tgt, done, rs->d + (gsize)s * w->n_targets, rs->hop + (gsize)s * w->n_targets);
    }
  }
  g_array_free(draws, TRUE);
}
