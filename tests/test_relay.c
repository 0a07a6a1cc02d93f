/* test_relay.c: the Geth 1.8.23 relay on hand-built topologies with hand-computed arrival times. */
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "net.h"
#include "registry.h"
#include "relay.h"

/* A topology from an edge list; every node home class with the given bandwidths, latency `lat_ms`. */
static NetTopology *make_topo(guint32 n, const guint32 (*links)[2], guint n_links, double up_bps, double down_bps,
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
  /* Sorted neighbour lists: insert links in order of (node, neighbour). */
  for (guint32 u = 0; u < n; u++)
    for (guint32 v = 0; v < n; v++)
      for (guint l = 0; l < n_links; l++)
        if ((links[l][0] == u && links[l][1] == v) || (links[l][1] == u && links[l][0] == v)) {
          guint32 e = t->adj_off[u] + fill[u]++;
          t->adj[e] = v;
          t->lat_mean_ns[e] = t->lat_floor_ns[e] = sim_time_from_s(lat_ms / 1e3);
          t->tx_ns_per_byte[e] = 8e9 / MIN(up_bps, down_bps);
        }
  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      for (guint32 f = t->adj_off[v]; f < t->adj_off[v + 1]; f++)
        if (t->adj[f] == u) t->rev[e] = f;
    }
  g_free(fill);
  return t;
}

typedef struct {
  NetGeoParams gp;
  SimModelRef relay;
  NetTopology *t;
  RelayWork *w;
} Fixture;

static void fixture_init(Fixture *f, NetTopology *t, const char *relay_json) {
  memset(f, 0, sizeof *f);
  SimDiag *d = sim_diag_new(NULL);
  json_t *jit = json_pack("{s:s}", "model", "none");
  CU_ASSERT_FATAL(sim_model_ref_parse(&f->gp.jitter, "jitter", "none", jit, "$.jitter", d));
  json_t *rel = json_loads(relay_json, 0, NULL);
  CU_ASSERT_FATAL(rel != NULL);
  CU_ASSERT_FATAL(sim_model_ref_parse(&f->relay, "relay", "geth-1.8.23", rel, "$.relay", d));
  json_decref(jit);
  json_decref(rel);
  sim_diag_free(d);
  f->t = t;
  f->w = relay_work_new(t);
}

static void fixture_clear(Fixture *f) {
  relay_work_free(f->w);
  net_topology_free(f->t);
  sim_model_ref_clear(&f->gp.jitter);
  sim_model_ref_clear(&f->relay);
}

static void propagate(Fixture *f, guint32 source, double bytes, double gas, guint64 seed) {
  SimTime t0 = 0;
  RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = bytes, .gas_used = gas};
  SimRng rng;
  sim_rng_init(&rng, seed, 99);
  relay_geth.propagate(f->relay.params, &f->gp, f->t, &b, 0, &rng, f->w);
}

typedef guint32 Link[2];

#define MS(x) sim_time_from_s((x) / 1e3)

/* A -- B -- C: B gets A's push, C gets B's push after B's header check; nobody announces back. */
static void test_line_timing(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  /* 20 000 bytes at 16 Mb/s = 10 ms; latency 50 ms; verify 5 ms. */
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50), "{\"verify_ms\": 5}");
  propagate(&f, 0, 20000, 0, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 0), 0);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(10 + 50));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(60 + 5 + 10 + 50));
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 2), MS(125));
  /* A pushed to its only peer and B only to C: no announcements anywhere. */
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 2), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 3);
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 2);
  fixture_clear(&f);
}

/* A star of n leaves: the centre pushes to max(4, floor(sqrt(n))) leaves one after another over its upload
 * link and announces to the rest, which fetch after the arrive timeout. */
static void check_star(guint n_leaves, guint expect_push) {
  Link *links = g_new(Link, n_leaves);
  for (guint i = 0; i < n_leaves; i++) {
    links[i][0] = 0;
    links[i][1] = i + 1;
  }
  Fixture f;
  /* 10 000 bytes at 8 Mb/s = 10 ms per push; latency 20 ms; import 10 + 25/Mgas (gas 2 M -> 60 ms). */
  fixture_init(&f, make_topo(n_leaves + 1, (const guint32(*)[2])links, n_leaves, 8e6, 8e6, 20), "{}");
  propagate(&f, 0, 10000, 2e6, 7);
  guint pushed = 0, announced = 0;
  GArray *push_times = g_array_new(FALSE, FALSE, sizeof(SimTime));
  for (guint32 v = 1; v <= n_leaves; v++) {
    SimTime p = relay_work_first_push(f.w, v), a = relay_work_announce(f.w, v);
    if (p != SIM_TIME_MAX) {
      pushed++;
      g_array_append_val(push_times, p);
      CU_ASSERT_EQUAL(a, SIM_TIME_MAX); /* known to have it: never announced to */
    } else {
      announced++;
      /* The source's own block: announced at once (t = 0), arriving after 20 ms. Fetch: +500 ms, header
       * request and reply, body request (3 x 20 ms), then the body after the pushes left the link, + 20 ms. */
      CU_ASSERT_EQUAL(a, MS(20));
      SimTime body_start = MAX(MS(20 + 500 + 60), MS(10.0 * expect_push));
      CU_ASSERT_EQUAL(relay_work_have(f.w, v), body_start + MS(10) + MS(20));
    }
  }
  CU_ASSERT_EQUAL(pushed, expect_push);
  CU_ASSERT_EQUAL(announced, n_leaves - expect_push);
  /* Pushes leave one after another: arrivals 10 ms apart. */
  for (guint i = 0; i < push_times->len; i++) {
    gboolean found = FALSE;
    for (guint j = 0; j < push_times->len; j++) found |= g_array_index(push_times, SimTime, j) == MS(10.0 * (i + 1) + 20);
    CU_ASSERT(found);
  }
  g_array_unref(push_times);
  g_free(links);
  fixture_clear(&f);
}

static void test_sqrt_push(void) {
  check_star(3, 3);    /* fewer lacking peers than the minimum of 4: all of them */
  check_star(16, 4);   /* sqrt(16) = 4 */
  check_star(100, 10); /* sqrt(100) = 10 */
  check_star(50, 7);   /* floor(sqrt(50)) = 7 */
}

/* An unanswered fetch costs the 5 s timeout, then the request is repeated. */
static void test_fetch_timeout_retry(void) {
  const guint n = 200;
  Link *links = g_new(Link, n);
  for (guint i = 0; i < n; i++) {
    links[i][0] = 0;
    links[i][1] = i + 1;
  }
  Fixture f;
  fixture_init(&f, make_topo(n + 1, (const guint32(*)[2])links, n, 1e9, 1e9, 10), "{\"fetch_fail_prob\": 0.5}");
  propagate(&f, 0, 1000, 0, 3);
  SimTime base = MS(10 + 500 + 30) + net_transfer_ns(f.t, 0, 1, 1000) + MS(10);
  guint retried = 0, first_try = 0;
  for (guint32 v = 1; v <= n; v++) {
    if (relay_work_first_push(f.w, v) != SIM_TIME_MAX) continue;
    SimTime extra = relay_work_have(f.w, v) - base;
    CU_ASSERT(extra >= 0);
    CU_ASSERT_EQUAL(extra % MS(5000), 0); /* whole timeouts only */
    if (extra == 0) first_try++;
    else retried++;
  }
  /* With p = 0.5, about half the fetches fail at least once (186 announced leaves: 5-sigma band). */
  CU_ASSERT(first_try > 60 && first_try < 126);
  CU_ASSERT(retried > 60 && retried < 126);
  g_free(links);
  fixture_clear(&f);
}

/* Nothing is sent back to the peer a block came from, and an announcement goes only to peers that have
 * not already told us they have the block. */
static void test_known_peers(void) {
  /* Triangle 0-1-2, plus 2-3. */
  static const guint32 links[][2] = {{0, 1}, {0, 2}, {1, 2}, {2, 3}};
  Fixture f;
  fixture_init(&f, make_topo(4, links, 4, 1e9, 1e9, 10), "{\"push_min\": 0}");
  propagate(&f, 0, 1000, 0, 5);
  /* 0 pushes to floor(sqrt(2)) = 1 of its two peers and announces to the other. */
  guint pushed = (relay_work_first_push(f.w, 1) != SIM_TIME_MAX) + (relay_work_first_push(f.w, 2) != SIM_TIME_MAX);
  CU_ASSERT_EQUAL(pushed, 2); /* one by 0, the other by the first receiver (the third corner) */
  /* Node 3 hears of the block only through 2. */
  CU_ASSERT(relay_work_have(f.w, 3) > relay_work_have(f.w, 2));
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 4);
  /* 0 never receives anything back: it is the source and everyone knows it has the block. */
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 0), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 0), SIM_TIME_MAX);
  fixture_clear(&f);
}

/* Import time grows with gas: later announcements, so later fetched blocks. */
static void test_import_grows_with_gas(void) {
  Fixture f;
  static const guint32 links[][2] = {{0, 1}};
  fixture_init(&f, make_topo(2, links, 1, 1e9, 1e9, 10), "{\"import_base_ms\": 10, \"import_ms_per_mgas\": 25}");
  CU_ASSERT_EQUAL(relay_geth.import_ns(f.relay.params, 0), MS(10));
  CU_ASSERT_EQUAL(relay_geth.import_ns(f.relay.params, 8e6), MS(210));
  fixture_clear(&f);
}

int register_suites(void) {
  ADD_SUITE("relay", TEST(test_line_timing), TEST(test_sqrt_push), TEST(test_fetch_timeout_retry),
            TEST(test_known_peers), TEST(test_import_grows_with_gas));
  return 0;
}
