/* test_relay.c: the Geth 1.8.23 relay on hand-built topologies with hand-computed arrival times. */
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "topo-fixture.h"
#include "net.h"
#include "registry.h"
#include "relay.h"

static void fixture_init(Fixture *f, NetTopology *t, const char *relay_json) {
  fixture_init_model(f, t, "geth-1.8.23", relay_json);
}

static void propagate(Fixture *f, guint32 source, double bytes, double gas, guint64 seed) {
  SimTime t0 = 0;
  RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = bytes, .gas_used = gas};
  SimRng rng;
  sim_rng_init(&rng, seed, 99);
  relay_geth.propagate(f->relay.params, &f->gp, f->t, &b, 0, &rng, f->w);
}


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
  fixture_init(&f, make_topo(n_leaves + 1, links, n_leaves, 8e6, 8e6, 20), "{}");
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
  fixture_init(&f, make_topo(n + 1, links, n, 1e9, 1e9, 10), "{\"fetch_fail_prob\": 0.5}");
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

/* ---- performance-model wire-ins: joining nodes and host overhead ---- */

/* A star whose leaf k joins and is synced at k s. A block from the hub at t0 reaches the hub and exactly
 * the leaves synced by t0, each when it would without joining nodes; the hub still sends to every leaf
 * (what reaches an unsynced one is lost). */
static void test_joining_star(void) {
  const guint n = 8;
  g_autofree Link *links = star_links(n);
  Fixture plain, f;
  fixture_init(&plain, make_topo(n + 1, links, n, 1e9, 1e9, 20), "{}");
  fixture_init(&f, make_topo(n + 1, links, n, 1e9, 1e9, 20), "{}");
  guint32 nodes[8];
  SimTime avail[8];
  for (guint k = 1; k <= n; k++) {
    nodes[k - 1] = k;
    avail[k - 1] = (SimTime)k * SIM_NS_PER_S;
  }
  net_topology_set_joining(f.t, nodes, avail, n);
  CU_ASSERT_EQUAL(f.t->n_joining, n);
  for (guint s = 0; s <= n + 1; s++) {
    SimTime t0 = (SimTime)s * SIM_NS_PER_S;
    fixture_propagate_at(&plain, &relay_geth, 0, t0, 1000, 3);
    fixture_propagate_at(&f, &relay_geth, 0, t0, 1000, 3);
    guint synced = MIN(s, n);
    CU_ASSERT_EQUAL(relay_work_reached(f.w), 1 + synced);
    CU_ASSERT_EQUAL(relay_work_reached(plain.w), 1 + n);
    CU_ASSERT_EQUAL(relay_work_messages(f.w), n); /* 4 pushes and 4 announcements, lost or not */
    CU_ASSERT_EQUAL(relay_work_have(f.w, 0), t0);
    for (guint32 k = 1; k <= n; k++)
      CU_ASSERT_EQUAL(relay_work_have(f.w, k), k <= s ? relay_work_have(plain.w, k) : SIM_TIME_MAX);
  }
  fixture_clear(&plain);
  fixture_clear(&f);
}

/* A -- B -- C -- D with C not synced before 10 s: a block at 0 stops at B, because C relays nothing; one at
 * 10 s reaches D when it does without joining nodes: 60, 125, 190 ms after the source (test_line_timing). */
static void test_joining_line(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}, {2, 3}};
  Fixture f;
  fixture_init(&f, make_topo(4, links, 3, 16e6, 40e6, 50), "{\"verify_ms\": 5}");
  const guint32 c = 2;
  const SimTime ten = 10 * SIM_NS_PER_S;
  net_topology_set_joining(f.t, &c, &ten, 1);
  fixture_propagate_at(&f, &relay_geth, 0, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 2);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(60));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 3), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 3), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 2); /* B still pushes to C */
  fixture_propagate_at(&f, &relay_geth, 0, ten, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 4);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), ten + MS(125));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 3), ten + MS(190));
  /* Synced 1 ns after the block left: not yet for this block. */
  fixture_propagate_at(&f, &relay_geth, 0, ten - 1, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 2);
  fixture_clear(&f);
}

/* A node that mined the block has it, synced or not; an unsynced receiver does not. */
static void test_joining_source(void) {
  static const guint32 links[][2] = {{0, 1}};
  Fixture f;
  fixture_init(&f, make_topo(2, links, 1, 1e9, 1e9, 10), "{}");
  const SimTime later = 100 * SIM_NS_PER_S;
  guint32 node = 0;
  net_topology_set_joining(f.t, &node, &later, 1);
  fixture_propagate_at(&f, &relay_geth, 0, 0, 1000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 2);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 0), 0);
  CU_ASSERT_NOT_EQUAL(relay_work_have(f.w, 1), SIM_TIME_MAX);
  node = 1;
  net_topology_set_joining(f.t, &node, &later, 1);
  fixture_propagate_at(&f, &relay_geth, 0, 0, 1000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), SIM_TIME_MAX);
  net_topology_set_joining(f.t, NULL, NULL, 0);
  CU_ASSERT_PTR_NULL(f.t->join_node);
  fixture_propagate_at(&f, &relay_geth, 0, 0, 1000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 2);
  fixture_clear(&f);
}

/* Host overhead on every link (dc_stack): a pushed block pays it once, an announced and fetched one five
 * times (announcement, header request, header, body request, body). Star of 8 leaves, 20 ms, 10 ms per
 * push: pushed leaves at 10 i + 20 ms, fetched ones at 20 + 500 + 3 x 20 + 10 + 20 = 610 ms. */
static void test_host_overhead(void) {
  const guint n = 8;
  const SimTime host = 5000;
  g_autofree Link *links = star_links(n);
  Fixture plain, f;
  fixture_init(&plain, make_topo(n + 1, links, n, 8e6, 8e6, 20), "{}");
  NetTopology *t = make_topo(n + 1, links, n, 8e6, 8e6, 20);
  topo_add_host(t, host);
  fixture_init(&f, t, "{}");
  fixture_propagate_at(&plain, &relay_geth, 0, 0, 10000, 7);
  fixture_propagate_at(&f, &relay_geth, 0, 0, 10000, 7);
  guint pushed = 0, bad = 0;
  for (guint32 k = 1; k <= n; k++) {
    gboolean push = relay_work_first_push(plain.w, k) != SIM_TIME_MAX;
    pushed += push;
    SimTime d = relay_work_have(f.w, k) - relay_work_have(plain.w, k);
    bad += d != (push ? host : 5 * host);
    if (!push) bad += relay_work_have(plain.w, k) != MS(610);
    bad += (relay_work_first_push(f.w, k) != SIM_TIME_MAX) != push;
  }
  CU_ASSERT_EQUAL(pushed, 4);
  CU_ASSERT_EQUAL(bad, 0);
  fixture_clear(&plain);
  fixture_clear(&f);
}

int register_suites(void) {
  ADD_SUITE("relay", TEST(test_line_timing), TEST(test_sqrt_push), TEST(test_fetch_timeout_retry),
            TEST(test_known_peers), TEST(test_import_grows_with_gas));
  ADD_SUITE("relay-wire-in", TEST(test_joining_star), TEST(test_joining_line), TEST(test_joining_source),
            TEST(test_host_overhead));
  return 0;
}
