/* tx_flood.c: flooding: a transaction reaches each node first along its fastest path (shortest paths over the
 * topology). */
#include "tx-private.h"

#define DJ_NODE_BITS 22

void txw_dj_push(GArray *h, int64_t t, guint32 v) {
  uint64_t key = ((uint64_t)t << DJ_NODE_BITS) | v;
  g_array_append_val(h, key);
  uint64_t *a = (uint64_t *)h->data;
  guint i = h->len - 1;
  while (i > 0 && a[(i - 1) / 2] > a[i]) {
    uint64_t tmp = a[i];
    a[i] = a[(i - 1) / 2];
    a[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static uint64_t dj_pop(GArray *h) {
  uint64_t *a = (uint64_t *)h->data;
  uint64_t top = a[0];
  a[0] = a[h->len - 1];
  g_array_set_size(h, h->len - 1);
  guint n = h->len, i = 0;
  for (;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && a[l] < a[m]) m = l;
    if (r < n && a[r] < a[m]) m = r;
    if (m == i) break;
    uint64_t tmp = a[i];
    a[i] = a[m];
    a[m] = tmp;
    i = m;
  }
  return top;
}

/* Arrival times (relative to the start at `src`, time 0) at every node, into w->dist (valid where
 * dj_epoch == epoch) and the last hop's delay into w->hop. With `avail` (a session's previous transaction:
 * when each node could forward it), a node forwards only from max(own reception, avail[node]) - start
 * offset `t0` - and afterwards avail[node] becomes its own forward time. */
void txw_flood(TxWorld *w, guint32 src, double bytes, int64_t *avail, int64_t t0) {
  const NetTopology *t = w->netc.topo;
  w->epoch++;
  g_array_set_size(w->djheap, 0);
  w->dist[src] = 0;
  w->hop[src] = 0;
  w->dj_epoch[src] = w->epoch;
  txw_dj_push(w->djheap, 0, src);
  const uint64_t mask = (UINT64_C(1) << DJ_NODE_BITS) - 1;
  while (w->djheap->len) {
    uint64_t k = dj_pop(w->djheap);
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
      int64_t d = net_edge_latency(w->netc.gp, t, e, &w->rng) + net_edge_transfer_ns(t, e, bytes);
      int64_t tu = fwd + d;
      if (w->dj_epoch[u] != w->epoch || tu < w->dist[u]) {
        w->dj_epoch[u] = w->epoch;
        w->dist[u] = tu;
        w->hop[u] = d;
        txw_dj_push(w->djheap, tu, u);
      }
    }
  }
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

void txw_sample_regions(TxWorld *w) {
  guint nr = w->netc.gp->n_regions;
  w->regions = g_new0(RegionSamples, nr);
  double bytes = mean_bytes(&w->cfg.p);
  sim_rng_init(&w->rng, w->seed, SIM_RNG_SETUP_BASE + 41); /* the trees' own stream */
  for (guint r = 0; r < nr; r++) {
    guint32 lo = w->region_nodes_off[r], hi = w->region_nodes_off[r + 1];
    if (lo == hi) continue;
    RegionSamples *rs = &w->regions[r];
    rs->n = (guint)w->cfg.p.region_samples;
    rs->d = g_new(int64_t, (gsize)rs->n * w->n_targets);
    rs->hop = g_new(int64_t, (gsize)rs->n * w->n_targets);
    for (guint s = 0; s < rs->n; s++) {
      guint32 src = w->region_nodes[lo + sim_rng_below(&w->rng, hi - lo)];
      txw_flood(w, src, bytes, NULL, 0);
      txw_flood_targets(w, rs->d + (gsize)s * w->n_targets, rs->hop + (gsize)s * w->n_targets);
    }
  }
}
