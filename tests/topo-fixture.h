/* topo-fixture.h: hand-built topologies and a relay fixture for the relay tests (test_relay, test_relay_btc).
 * Include after cunit-main.h. */
#pragma once

#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "registry.h"
#include "relay.h"

typedef guint32 Link[2];

#define MS(x) sim_time_from_s((x) / 1e3)

static inline int fixture_cmp_u32(const void *a, const void *b) {
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return x < y ? -1 : x > y;
}

/* A topology from an edge list: every node special (so first pushes and announcements are kept), in
 * region 0, with the given bandwidths and one latency `lat_ms` on every link. Neighbour lists sorted. */
static inline NetTopology *make_topo(guint32 n, const Link *links, guint n_links, double up_bps, double down_bps,
                                     double lat_ms) {
  NetTopology *t = g_new0(NetTopology, 1);
  t->n_nodes = n;
  t->n_special = n;
  t->region = g_new0(guint16, n);
  t->city = g_new0(guint16, n);
  t->cls = g_new0(guint8, n);
  t->up_bps = g_new(double, n);
  t->down_bps = g_new(double, n);
  for (guint32 i = 0; i < n; i++) {
    t->city[i] = NET_NO_CITY;
    t->up_bps[i] = up_bps;
    t->down_bps[i] = down_bps;
  }
  t->adj_off = g_new0(guint32, n + 1);
  for (guint l = 0; l < n_links; l++) {
    t->adj_off[links[l][0] + 1]++;
    t->adj_off[links[l][1] + 1]++;
  }
  for (guint32 i = 0; i < n; i++) t->adj_off[i + 1] += t->adj_off[i];
  t->n_edges = t->adj_off[n];
  t->adj = g_new(guint32, t->n_edges);
  t->rev = g_new(guint32, t->n_edges);
  t->lat_mean_ns = g_new(SimTime, t->n_edges);
  t->lat_floor_ns = g_new(SimTime, t->n_edges);
  t->tx_ns_per_byte = g_new(double, t->n_edges);
  guint32 *fill = g_new0(guint32, n);
  for (guint l = 0; l < n_links; l++) {
    t->adj[t->adj_off[links[l][0]] + fill[links[l][0]]++] = links[l][1];
    t->adj[t->adj_off[links[l][1]] + fill[links[l][1]]++] = links[l][0];
  }
  g_free(fill);
  for (guint32 u = 0; u < n; u++) {
    qsort(t->adj + t->adj_off[u], t->adj_off[u + 1] - t->adj_off[u], sizeof(guint32), fixture_cmp_u32);
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      t->lat_mean_ns[e] = t->lat_floor_ns[e] = MS(lat_ms);
      t->tx_ns_per_byte[e] = 8e9 / MIN(up_bps, down_bps);
    }
  }
  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      const guint32 *base = t->adj + t->adj_off[v];
      const guint32 *hit = bsearch(&u, base, t->adj_off[v + 1] - t->adj_off[v], sizeof(guint32), fixture_cmp_u32);
      t->rev[e] = t->adj_off[v] + (guint32)(hit - base);
    }
  return t;
}

/* A star: node 0 linked to nodes 1..n_leaves. Free with g_free. */
static inline Link *star_links(guint n_leaves) {
  Link *links = g_new(Link, n_leaves);
  for (guint i = 0; i < n_leaves; i++) {
    links[i][0] = 0;
    links[i][1] = i + 1;
  }
  return links;
}

/* A random topology: every node 4 random links, specials 0..hubs-1 linked to every other node from 60 on
 * (hundreds of peers, like vantage points), latency means of 10-90 ms (0 among nodes below 60: groups of
 * several nodes), links of 1 Gbit/s or 20 Mbit/s. Specials 0..19 (test_relay.c, test_relay_pipe.c). */
static inline NetTopology *topo_random_hubs(guint32 n, guint64 seed, guint hubs) {
  SimRng r;
  sim_rng_init(&r, seed, 5);
  GArray *links = g_array_new(FALSE, FALSE, sizeof(Link));
  g_autofree guint8 *linked = g_new0(guint8, (gsize)n * n);
  for (guint32 h = 0; h < hubs; h++)
    for (guint32 v = 60 + h; v < n; v += 2) {
      Link l = {h, v};
      linked[(gsize)h * n + v] = linked[(gsize)v * n + h] = 1;
      g_array_append_val(links, l);
    }
  for (guint32 u = 0; u < n; u++)
    for (guint k = 0; k < 4; k++) {
      guint32 v = (guint32)sim_rng_below(&r, n);
      if (v == u || linked[(gsize)u * n + v]) continue;
      linked[(gsize)u * n + v] = linked[(gsize)v * n + u] = 1;
      Link l = {u, v};
      g_array_append_val(links, l);
    }
  NetTopology *t = make_topo(n, (const Link *)links->data, links->len, 20e6, 50e6, 10);
  g_array_unref(links);
  t->n_special = 20;
  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e], lo = MIN(u, v), hi = MAX(u, v);
      guint64 h = sim_mix64((guint64)lo << 32 | hi);
      SimTime ms = hi < 60 ? 0 : 10 + (SimTime)(h % 9) * 10;
      t->lat_mean_ns[e] = MS(ms);
      t->tx_ns_per_byte[e] = 8e9 / (h % 3 == 0 ? 1e9 : 20e6);
    }
  return t;
}

/* Adds `host_ns` of host overhead to every edge of `t`, as the geo network's dc_stack does on links between
 * data-centre nodes: into lat_host_ns, lat_mean_ns and lat_floor_ns. */
static inline void topo_add_host(NetTopology *t, SimTime host_ns) {
  t->lat_host_ns = g_new(SimTime, MAX(t->n_edges, 1));
  for (guint64 e = 0; e < t->n_edges; e++) {
    t->lat_host_ns[e] = host_ns;
    t->lat_mean_ns[e] += host_ns;
    t->lat_floor_ns[e] += host_ns;
  }
}

typedef struct {
  NetGeoParams gp;
  SimModelRef relay;
  NetTopology *t;
  RelayWork *w;
} Fixture;

/* No jitter; relay `model` with the parameters in `relay_json`. Takes ownership of `t`. */
static inline void fixture_init_model(Fixture *f, NetTopology *t, const char *model, const char *relay_json) {
  memset(f, 0, sizeof *f);
  SimDiag *d = sim_diag_new(NULL);
  json_t *jit = json_pack("{s:s}", "model", "none");
  CU_ASSERT_FATAL(sim_model_ref_parse(&f->gp.jitter, "jitter", "none", jit, "$.jitter", d));
  json_t *rel = json_loads(relay_json, 0, NULL);
  CU_ASSERT_FATAL(rel != NULL);
  json_object_set_new(rel, "model", json_string(model));
  CU_ASSERT_FATAL(sim_model_ref_parse(&f->relay, "relay", model, rel, "$.relay", d));
  json_decref(jit);
  json_decref(rel);
  sim_diag_free(d);
  f->t = t;
  f->w = relay_work_new(t);
}

/* Geth with pareto jitter (floors from the jitter model) on `t`; `relay_json` NULL: push_min 4, 10% of
 * fetches fail (test_relay.c, test_relay_pipe.c). */
static inline void fixture_pareto(Fixture *f, NetTopology *t, const char *relay_json) {
  fixture_init_model(f, t, "geth-1.8.23", relay_json ? relay_json : "{\"push_min\": 4, \"fetch_fail_prob\": 0.1}");
  sim_model_ref_clear(&f->gp.jitter);
  SimDiag *d = sim_diag_new(NULL);
  json_t *jit = json_pack("{s:s}", "model", "pareto");
  CU_ASSERT_FATAL(sim_model_ref_parse(&f->gp.jitter, "jitter", "pareto", jit, "$.jitter", d));
  json_decref(jit);
  sim_diag_free(d);
  const NetJitterModel *jm = (const NetJitterModel *)f->gp.jitter.model;
  for (guint64 e = 0; e < t->n_edges; e++)
    t->lat_floor_ns[e] = jm->floor_ns(f->gp.jitter.params, t->lat_mean_ns[e]);
}

static inline void fixture_clear(Fixture *f) {
  relay_work_free(f->w);
  net_topology_free(f->t);
  sim_model_ref_clear(&f->gp.jitter);
  sim_model_ref_clear(&f->relay);
}

/* One block from `source` at `t0` through relay model `m` (no gas), on a stream keyed by `seed`. */
static inline void fixture_propagate_at(Fixture *f, const RelayModel *m, guint32 source, SimTime t0,
                                        double bytes, guint64 seed) {
  RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = bytes};
  SimRng rng;
  sim_rng_init(&rng, seed, 99);
  m->propagate(f->relay.params, &f->gp, f->t, &b, 0, &rng, f->w);
}
