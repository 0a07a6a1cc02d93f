/* test_relay.c: the Geth 1.8.23 relay on hand-built topologies with hand-computed arrival times. */
#include <math.h>
#include <pthread.h>
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
  relay_geth.propagate(f->relay.params, &f->gp, f->t, &b, NULL, &rng, f->w);
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

/* ---- the windowed kernel: groups, windows, threads ---- */

/* Six nodes in three pairs joined by 0-ms links (which must share a group), the pairs linked at 20 ms and
 * 50 ms; no jitter, no transfer time (1 PB/s) and pushes to every peer lacking the block (push_min 10), so
 * nothing is random and no announcement is sent. The block reaches, from node 0 at t = 0 (a source pushes at
 * once, everyone else after the 5 ms header check): 1 at 0 (0 ms link); 2 at 0 + 5 + 20 = 25; 3 at 25 + 5 =
 * 30; 4 at 50 straight from 0 (3's push, 30 + 5 + 20 = 55, comes later and only tells 4 that 3 has it); 5 at
 * 50 + 5 = 55. One push per link: 0->1, 0->4, 1->2, 2->3, 3->4, 4->5. The sequential kernel this one replaced
 * (commit ac87a6d) gave exactly these times, first pushes and counts: without jitter a draw equals the mean,
 * so deciding a message at a window's end instead of when it is sent changes nothing here. */
static const guint32 pairs_links[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}, {4, 5}};

static NetTopology *make_pairs(void) {
  NetTopology *t = make_topo(6, pairs_links, G_N_ELEMENTS(pairs_links), 1e15, 1e15, 20);
  for (guint32 u = 0; u < t->n_nodes; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e], lo = MIN(u, v), hi = MAX(u, v);
      SimTime ms = (lo == 0 && hi == 1) || (lo == 2 && hi == 3) || (lo == 4 && hi == 5) ? 0
                   : lo == 0                                                            ? 50
                                                                                        : 20;
      t->lat_mean_ns[e] = t->lat_floor_ns[e] = MS(ms);
    }
  return t;
}

static void test_windows_hand_checked(void) {
  static const SimTime want[6] = {0, 0, 25, 30, 50, 55};
  for (guint threads = 1; threads <= 4; threads++) {
    Fixture f;
    fixture_init(&f, make_pairs(), "{\"push_min\": 10, \"verify_ms\": 5}");
    relay_work_set_threads(f.w, threads);
    propagate(&f, 0, 1000, 0, 1);
    for (guint32 v = 0; v < 6; v++) {
      CU_ASSERT_EQUAL(relay_work_have(f.w, v), MS(want[v]));
      CU_ASSERT_EQUAL(relay_work_first_push(f.w, v), v == 0 ? SIM_TIME_MAX : MS(want[v]));
      CU_ASSERT_EQUAL(relay_work_announce(f.w, v), SIM_TIME_MAX);
    }
    CU_ASSERT_EQUAL(relay_work_reached(f.w), 6);
    CU_ASSERT_EQUAL(relay_work_messages(f.w), 6);
    /* Groups {0,1}, {2,3}, {4,5}; the lookahead is the 20 ms link 1 -> 2 (the first found in node order). */
    const RelayGroups *g = relay_work_groups(f.w);
    CU_ASSERT_EQUAL(relay_groups_count(g), 3);
    CU_ASSERT_EQUAL(relay_groups_largest(g), 2);
    CU_ASSERT_EQUAL(relay_groups_of(g, 0), relay_groups_of(g, 1));
    CU_ASSERT_EQUAL(relay_groups_of(g, 2), relay_groups_of(g, 3));
    CU_ASSERT_EQUAL(relay_groups_of(g, 4), relay_groups_of(g, 5));
    CU_ASSERT_NOT_EQUAL(relay_groups_of(g, 0), relay_groups_of(g, 2));
    CU_ASSERT_NOT_EQUAL(relay_groups_of(g, 2), relay_groups_of(g, 4));
    guint32 from = 99, to = 99;
    CU_ASSERT_EQUAL(relay_groups_lookahead(g, &from, &to), MS(20));
    CU_ASSERT_EQUAL(from, 1);
    CU_ASSERT_EQUAL(to, 2);
    RelayWorkStats st;
    relay_work_get_stats(f.w, &st);
    CU_ASSERT_EQUAL(st.threads, MIN(threads, 3)); /* never more threads than groups */
    CU_ASSERT_EQUAL(st.propagations, 1);
    CU_ASSERT_EQUAL(st.messages, 6);
    CU_ASSERT_EQUAL(st.deferred, 3); /* 1->2, 0->4 and 3->4 cross groups */
    CU_ASSERT_EQUAL(st.steps, 18);   /* HAVE, PUSH and ANNOUNCE of each node */
    /* Windows of min(20, RELAY_WINDOW_MAX_NS = 10) ms, each from the least time at which a step is pending or
     * can be caused: [0, 10) takes 0 (HAVE, PUSH, ANNOUNCE at 0), 1's HAVE and PUSH (5; to 2, at 25 or
     * later); [15, 25) 1's ANNOUNCE; [25, 35) 2's HAVE and PUSH, 3's HAVE; [35, 45) 3's PUSH, 2's ANNOUNCE;
     * [45, 55) 3's ANNOUNCE, 4's HAVE; [55, 65) 4's PUSH, 5's HAVE and PUSH; [65, 75) 4's and 5's ANNOUNCE.
     */
    CU_ASSERT_EQUAL(st.windows, 7);
    fixture_clear(&f);
  }
}

/* Nodes 0 and 1 share a 0-ms link: they cannot be in two groups; the refusal names the link. */
static void test_zero_delay_link_refused(void) {
  NetTopology *t = make_pairs();
  static const guint32 split[6] = {0, 1, 1, 1, 2, 2};
  GError *e = NULL;
  RelayGroups *g = relay_groups_new_assigned(t, split, 3, &e);
  CU_ASSERT_PTR_NULL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_TRUE(g_error_matches(e, RELAY_ERROR, RELAY_ERROR_ZERO_LOOKAHEAD));
  CU_ASSERT_STRING_EQUAL(e->message,
                         "relay groups: the link from node 0 (group 0) to node 1 (group 1) has a least "
                         "latency of 0 ns: a link between two groups needs a positive one (put both "
                         "nodes in one group)");
  g_clear_error(&e);
  /* With 2 and 3 together it is accepted, and the least link between groups sets the lookahead. */
  static const guint32 ok[6] = {0, 0, 1, 1, 2, 2};
  g = relay_groups_new_assigned(t, ok, 3, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(relay_groups_count(g), 3);
  CU_ASSERT_EQUAL(relay_groups_lookahead(g, NULL, NULL), MS(20));
  relay_groups_free(g);
  net_topology_free(t);
}

/* A random graph of 600 nodes (the first 20 special), latencies from 0 to 90 ms in a few classes (0-ms
 * "metro" links among nodes 0..59), uneven bandwidths, and the SimBlock Pareto jitter; 40 blocks from two
 * sources each, 0, 3 or 6 ms apart: the windowed kernel on 1, 2, 3, 4 and 8 threads, and with 4 parts on the
 * calling thread alone or adaptively (which runs the first 16 blocks alone, the next 16 on all threads),
 * gives the same times for every node, the same counts and the same windows; the groups do not depend on the
 * thread count. */
/* topo_random_hubs (topo-fixture.h): specials 0 .. hubs - 1 are linked to every other node from 60 on (270 peers
 * and more at 600 nodes: their announcements are split among the threads, SPLIT_MIN_DEGREE; no other node has
 * 64 peers). */
static NetTopology *make_random(guint32 n, guint64 seed) { return topo_random_hubs(n, seed, 0); }


/* make_random, or (by_upload) with each link as slow as its sender's upload: 1 Gbit/s for the specials, else
 * 5, 10 or 20 Mbit/s by node. */
static NetTopology *make_random_upload(guint32 n, guint64 seed, gboolean by_upload) {
  NetTopology *t = make_random(n, seed);
  if (by_upload)
    for (guint32 u = 0; u < n; u++)
      for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
        t->tx_ns_per_byte[e] = 8e9 / (u < t->n_special ? 1e9 : 5e6 * (double)(1u << (sim_mix64(u) % 3)));
  return t;
}


typedef struct {
  SimTime have[600], push[600], ann[600];
  guint64 reached, messages;
  RelayWorkStats st;
  guint32 group[600];
} RunResult;

/* The stops the random topology's tests use: none, every special's full block (each its own group), and
 * one like geo_publish's (watch_stop). */
enum { STOP_NONE, STOP_NODES, STOP_WATCH, STOP_MESSAGES };

/* Specials 0..19 of the random topology as geo_publish watches them: 0..4 are vantage points (their first
 * block message and announcement), 5..19 gateways of five pools of three (the first of each to have the
 * block), but for 17..19 whose times nobody reads. */
static const guint32 watch_group[20] = {RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                        RELAY_STOP_NONE, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3,
                                        RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE};
static RelayStop make_stop(int kind) {
  if (kind == STOP_NODES) return relay_stop_nodes(20);
  if (kind == STOP_WATCH) return (RelayStop){.n_nodes = 20, .group = watch_group, .n_groups = 4, .n_messages = 5};
  /* The vantage points' first block message and announcement, and no full block: the messages decide. */
  static const guint32 no_group[20] = {RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                       RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                       RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                       RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                       RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE};
  if (kind == STOP_MESSAGES) return (RelayStop){.n_nodes = 20, .group = no_group, .n_groups = 0, .n_messages = 5};
  return (RelayStop){0};
}

static void run_random_topo(guint threads, RelayRunMode mode, int stop_kind, const char *relay_json, guint hubs,
                            RunResult *out) {
  Fixture f;
  fixture_pareto(&f, topo_random_hubs(600, 3, hubs), relay_json);
  relay_work_set_threads(f.w, threads);
  relay_work_set_run_mode(f.w, mode);
  memset(out, 0, sizeof *out);
  for (guint blk = 0; blk < 40; blk++) {
    guint32 sources[2] = {blk * 7 % 600, 100 + blk};
    SimTime t0[2] = {MS(1000.0 * blk), MS(1000.0 * blk + 3 * (blk % 3))};
    RelayBlock b = {.sources = sources, .source_t = t0, .n_sources = 2, .size_bytes = 20000, .gas_used = 4e6};
    SimRng rng;
    sim_rng_init(&rng, 77, blk);
    RelayStop stop = make_stop(stop_kind);
    relay_geth.propagate(f.relay.params, &f.gp, f.t, &b, stop_kind == STOP_NONE ? NULL : &stop, &rng, f.w);
    /* The stream is the block's: the kernel takes exactly one number from it. */
    SimRng ref;
    sim_rng_init(&ref, 77, blk);
    sim_rng_u64(&ref);
    CU_ASSERT_EQUAL(sim_rng_u64(&rng), sim_rng_u64(&ref));
    for (guint32 v = 0; v < 600; v++) {
      out->have[v] += relay_work_have(f.w, v) == SIM_TIME_MAX ? 1 : relay_work_have(f.w, v) * 3 + blk;
      out->push[v] += relay_work_first_push(f.w, v) == SIM_TIME_MAX ? 1 : relay_work_first_push(f.w, v);
      out->ann[v] += relay_work_announce(f.w, v) == SIM_TIME_MAX ? 1 : relay_work_announce(f.w, v);
    }
    out->reached += relay_work_reached(f.w);
    out->messages += relay_work_messages(f.w);
  }
  relay_work_get_stats(f.w, &out->st);
  for (guint32 v = 0; v < 600; v++)
    out->group[v] = relay_groups_of(relay_work_groups(f.w), v);
  fixture_clear(&f);
}

static void run_random_with(guint threads, RelayRunMode mode, int stop_kind, const char *relay_json,
                            RunResult *out) {
  run_random_topo(threads, mode, stop_kind, relay_json, 0, out);
}

static void run_random(guint threads, RelayRunMode mode, int stop_kind, RunResult *out) {
  run_random_with(threads, mode, stop_kind, NULL, out);
}

/* Two runs of the random topology gave every node the same times and first messages, with the same counts,
 * steps (and skipped ones) and windows. */
static void assert_same_run(const RunResult *got, const RunResult *ref) {
  CU_ASSERT_EQUAL(memcmp(got->have, ref->have, sizeof ref->have), 0);
  CU_ASSERT_EQUAL(memcmp(got->push, ref->push, sizeof ref->push), 0);
  CU_ASSERT_EQUAL(memcmp(got->ann, ref->ann, sizeof ref->ann), 0);
  CU_ASSERT_EQUAL(got->reached, ref->reached);
  CU_ASSERT_EQUAL(got->messages, ref->messages);
  CU_ASSERT_EQUAL(got->st.windows, ref->st.windows);
  CU_ASSERT_EQUAL(got->st.steps, ref->st.steps);
  CU_ASSERT_EQUAL(got->st.pruned, ref->st.pruned);
  CU_ASSERT_EQUAL(got->st.deferred, ref->st.deferred);
}

/* The lazy draws are exact: drawing every message's latency when it is applied (draw_all) gives the same
 * times, first messages and counts, at 1 and 3 threads, with and without the stop; only the draws differ. */
static void test_lazy_draws_exact(void) {
  RunResult *lazy = g_new(RunResult, 1), *all = g_new(RunResult, 1);
  static const char *eager = "{\"push_min\": 4, \"fetch_fail_prob\": 0.1, \"draw_all\": true}";
  for (int stop = STOP_NONE; stop <= STOP_MESSAGES; stop++)
    for (guint threads = 1; threads <= 3; threads += 2) {
      run_random_with(threads, RELAY_RUN_ALL, stop, NULL, lazy);
      run_random_with(threads, RELAY_RUN_ALL, stop, eager, all);
      assert_same_run(all, lazy);
      /* It is the lazy path that was taken: it drew fewer latencies. */
      CU_ASSERT(lazy->st.draws < all->st.draws);
      CU_ASSERT_EQUAL(all->st.draws, all->messages); /* every message drew, once */
    }
  g_free(lazy);
  g_free(all);
}

static void check_thread_counts(int stop_kind) {
  static const guint counts[] = {1, 2, 3, 4, 8, 4, 4};
  static const RelayRunMode modes[] = {RELAY_RUN_ALL, RELAY_RUN_ALL,    RELAY_RUN_ALL,     RELAY_RUN_ALL,
                                       RELAY_RUN_ALL, RELAY_RUN_CALLER, RELAY_RUN_ADAPTIVE};
  RunResult *ref = g_new(RunResult, 1), *got = g_new(RunResult, 1);
  run_random(1, RELAY_RUN_ALL, stop_kind, ref);
  /* It did something: most nodes reached, messages within and between groups, several windows. */
  CU_ASSERT(ref->reached > 40 * (stop_kind != STOP_NONE ? 20 : 500));
  CU_ASSERT(ref->st.deferred > 0 && ref->st.deferred < ref->st.messages);
  CU_ASSERT(ref->st.windows > 40 * 5);
  CU_ASSERT_EQUAL(ref->st.lookahead_ns, 5 * SIM_NS_PER_MS); /* 10-ms links: Pareto floor 10 - 5 ms */
  CU_ASSERT_EQUAL(ref->st.work, ref->st.work_critical);     /* one thread */
  CU_ASSERT_EQUAL(ref->st.alone, 0);
  for (guint i = 1; i < G_N_ELEMENTS(counts); i++) {
    run_random(counts[i], modes[i], stop_kind, got);
    CU_ASSERT_EQUAL(got->st.threads, counts[i]);
    if (modes[i] == RELAY_RUN_ADAPTIVE) { /* 16 alone, 16 on all threads, the last 8 whichever was faster */
      CU_ASSERT(got->st.alone == 16 || got->st.alone == 24);
    } else {
      CU_ASSERT_EQUAL(got->st.alone, modes[i] == RELAY_RUN_ALL ? 0 : 40);
    }
    assert_same_run(got, ref);
    CU_ASSERT_EQUAL(memcmp(got->group, ref->group, sizeof ref->group), 0);
    CU_ASSERT_EQUAL(got->st.work, ref->st.work);
    /* Split over threads, the busiest thread's share of each window is less than all of it. */
    CU_ASSERT(got->st.work_critical < ref->st.work_critical);
  }
  g_free(ref);
  g_free(got);
}

static void test_thread_counts_full(void) {
  check_thread_counts(STOP_NONE);
}
static void test_thread_counts_stop(void) {
  check_thread_counts(STOP_NODES);
}
/* With the vantage points' messages watched, where the stop falls does not depend on the threads either
 * (every node's times above are compared, the unwatched ones too). */
static void test_thread_counts_watch(void) {
  check_thread_counts(STOP_WATCH);
  check_thread_counts(STOP_MESSAGES);
}

/* Specials with many peers announce in shares, each thread to its own nodes (SPLIT_MIN_DEGREE): with four hubs
 * of 270-ish peers, every node's times, the first messages, counts, steps and windows are those of one
 * thread, at 2, 3, 4 and 8 threads and with the parts run by the calling thread in turn (where a share waits
 * for its owner's messages of the window: applied first), with and without the stop; and the announcements
 * were split (none on one thread). */
static void test_split_announcements(void) {
  static const guint counts[] = {2, 3, 4, 8, 3};
  static const RelayRunMode modes[] = {RELAY_RUN_ALL, RELAY_RUN_ALL, RELAY_RUN_ALL, RELAY_RUN_ALL, RELAY_RUN_CALLER};
  RunResult *ref = g_new(RunResult, 1), *got = g_new(RunResult, 1);
  for (int stop = STOP_NONE; stop <= STOP_WATCH; stop += STOP_WATCH - STOP_NONE) {
    run_random_topo(1, RELAY_RUN_ALL, stop, NULL, 4, ref);
    CU_ASSERT_EQUAL(ref->st.split, 0);
    CU_ASSERT(ref->reached > 40 * 20);
    for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
      run_random_topo(counts[i], modes[i], stop, NULL, 4, got);
      /* Each hub announces once a block, unless it got the block too late to split (its HAVE step's window). */
      CU_ASSERT(got->st.split > 40 * 2);
      CU_ASSERT(got->st.split <= 40 * 4);
      assert_same_run(got, ref);
    }
  }
  g_free(ref);
  g_free(got);
}

/* The stop gives exactly what it watches: on 40 blocks of the random topology, at 1 and 3 threads, for the
 * stop geo_publish uses (with both vantage messages, and with the earlier only), and one watching the
 * vantage points' messages alone, the watched values (each group's first full block, the vantage points'
 * first block message and announcement, or the earlier and which) are those of the relay run to its end,
 * with the skipping of steps that cannot matter (prune, the default) and without; skipping skips steps and
 * sends fewer messages, and the stop does less than the full relay. A stop on the specials' full blocks
 * alone (what geo_publish used before) loses some vantage points' announcements, which arrive after they had
 * the block: the watch is needed. */
static void stop_watched_exact(gboolean by_upload, double size_bytes, double verify_ms) {
  RelayStop nodes = make_stop(STOP_NODES);
  /* The size classes' tables built at each class's first block, so that every block but the first of its
   * class uses them; `floors` skips by the latency floors alone. */
  g_autofree char *prune = g_strdup_printf(
      "{\"push_min\": 4, \"fetch_fail_prob\": 0.1, \"verify_ms\": %g, \"prune_table_after\": 1}", verify_ms);
  g_autofree char *prune_floors = g_strdup_printf(
      "{\"push_min\": 4, \"fetch_fail_prob\": 0.1, \"verify_ms\": %g, \"prune_table_after\": 0}", verify_ms);
  g_autofree char *no_prune =
      g_strdup_printf("{\"push_min\": 4, \"fetch_fail_prob\": 0.1, \"verify_ms\": %g, \"prune\": false}", verify_ms);
  for (guint run = 0; run < 6; run++) {
    guint threads = run & 1 ? 3 : 1;
    RelayStop watch = make_stop(run < 4 ? STOP_WATCH : STOP_MESSAGES);
    watch.first_message_only = run >= 2 && run < 4;
    Fixture full, part, plain, have_only, floors;
    fixture_pareto(&full, make_random_upload(600, 3, by_upload), prune);
    fixture_pareto(&floors, make_random_upload(600, 3, by_upload), prune_floors);
    fixture_pareto(&part, make_random_upload(600, 3, by_upload), prune);
    fixture_pareto(&plain, make_random_upload(600, 3, by_upload), no_prune);
    fixture_pareto(&have_only, make_random_upload(600, 3, by_upload), prune);
    relay_work_set_threads(part.w, threads);
    relay_work_set_run_mode(part.w, RELAY_RUN_ALL);
    guint lost = 0, announced_after_have = 0;
    for (guint blk = 0; blk < 40; blk++) {
      guint32 sources[2] = {5 + blk % 15, 100 + blk};
      SimTime t0[2] = {MS(1000.0 * blk), MS(1000.0 * blk + 3 * (blk % 3))};
      RelayBlock b = {.sources = sources, .source_t = t0, .n_sources = 1 + blk % 2,
                      .size_bytes = size_bytes * (1 + blk % 3), .gas_used = 4e6};
      SimRng r1, r2, r3, r4, r5;
      sim_rng_init(&r5, 77, blk);
      sim_rng_init(&r1, 77, blk);
      sim_rng_init(&r2, 77, blk);
      sim_rng_init(&r3, 77, blk);
      sim_rng_init(&r4, 77, blk);
      relay_geth.propagate(full.relay.params, &full.gp, full.t, &b, NULL, &r1, full.w);
      relay_geth.propagate(part.relay.params, &part.gp, part.t, &b, &watch, &r2, part.w);
      relay_geth.propagate(plain.relay.params, &plain.gp, plain.t, &b, &watch, &r3, plain.w);
      relay_geth.propagate(have_only.relay.params, &have_only.gp, have_only.t, &b, &nodes, &r4, have_only.w);
      relay_geth.propagate(floors.relay.params, &floors.gp, floors.t, &b, &watch, &r5, floors.w);
      CU_ASSERT(relay_stop_agree(&watch, full.w, floors.w));
      CU_ASSERT(relay_stop_agree(&watch, full.w, part.w));
      CU_ASSERT(relay_stop_agree(&watch, full.w, plain.w));
      RelayStop both = watch;
      both.first_message_only = FALSE;
      lost += !relay_stop_agree(&both, full.w, have_only.w);
      CU_ASSERT(relay_stop_agree(&nodes, full.w, have_only.w)); /* what that one watches, it has */
      for (guint32 v = 0; v < 5; v++)
        announced_after_have += relay_work_announce(full.w, v) != SIM_TIME_MAX &&
                                relay_work_announce(full.w, v) > relay_work_have(full.w, v);
    }
    RelayWorkStats sf, sp, sl, sfl;
    relay_work_get_stats(floors.w, &sfl);
    relay_work_get_stats(full.w, &sf);
    relay_work_get_stats(part.w, &sp);
    relay_work_get_stats(plain.w, &sl);
    CU_ASSERT(announced_after_have > 0);
    CU_ASSERT(lost > 0 || run >= 4);
    CU_ASSERT_EQUAL(sf.pruned, 0); /* no stop: nothing to skip for */
    CU_ASSERT_EQUAL(sl.pruned, 0);
    CU_ASSERT(sp.pruned > 0);
    CU_ASSERT(sp.messages < sl.messages);
    CU_ASSERT(sl.steps < sf.steps);
    /* The size classes' bounds skip more than the floors alone. */
    CU_ASSERT(sp.messages < sfl.messages);
    fixture_clear(&floors);
    fixture_clear(&full);
    fixture_clear(&part);
    fixture_clear(&plain);
    fixture_clear(&have_only);
  }
}

static void test_stop_watched_exact(void) {
  stop_watched_exact(FALSE, 20000, 5);
}

/* The same where every node's links are as slow as its upload (as in a geo topology: 5, 10 or 20 Mbit/s;
 * the specials 1 Gbit/s), with blocks of 40-120 kB, so that a hop's transfer is longer than an empty
 * block's import: the size classes' bounds add min(transfer, import) to each hop's floor, and the floor
 * alone to an announcement's first hop. Adding the transfer alone, or the transfer to an announcement's
 * first hop, or verification to every hop skips steps that matter here, and this fails (docs/threads.md). */
static void test_stop_watched_exact_upload(void) {
  stop_watched_exact(TRUE, 40000, 5);
}

/* relay_stop_agree compares what it watches and only that. */
static void test_stop_agree(void) {
  Fixture a, b;
  fixture_pareto(&a, make_random(600, 3), NULL);
  fixture_pareto(&b, make_random(600, 3), NULL);
  RelayStop watch = make_stop(STOP_WATCH);
  guint32 src = 5;
  SimTime t0 = 0;
  RelayBlock blk = {.sources = &src, .source_t = &t0, .n_sources = 1, .size_bytes = 20000, .gas_used = 4e6};
  SimRng r1, r2;
  sim_rng_init(&r1, 1, 1);
  sim_rng_init(&r2, 1, 2); /* another block key: other times */
  relay_geth.propagate(a.relay.params, &a.gp, a.t, &blk, NULL, &r1, a.w);
  relay_geth.propagate(b.relay.params, &b.gp, b.t, &blk, NULL, &r2, b.w);
  CU_ASSERT(relay_stop_agree(&watch, a.w, a.w));
  CU_ASSERT(!relay_stop_agree(&watch, a.w, b.w));
  CU_ASSERT(!relay_stop_agree(NULL, a.w, b.w));
  /* Only unwatched specials (17..19) and ordinary nodes differ: agreed. Source 5 is group 0's first, the
   * same in both; a stop watching just that group agrees. */
  RelayStop g0 = {.n_nodes = 20, .group = watch_group, .n_groups = 1, .n_messages = 0};
  static const guint32 only0[20] = {RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                    RELAY_STOP_NONE, 0, 0, 0, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                    RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                    RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE, RELAY_STOP_NONE,
                                    RELAY_STOP_NONE};
  g0.group = only0;
  CU_ASSERT(relay_stop_agree(&g0, a.w, b.w));
  fixture_clear(&a);
  fixture_clear(&b);
}

/* The groups come from the topology alone: links of floor 0 always join (nodes 0..59 here), links of the
 * next floors join while no group passes n / RELAY_GROUPS_BALANCE nodes; the threads take contiguous runs of
 * groups of about equal work, at any count. */
static void test_groups(void) {
  Fixture f;
  fixture_pareto(&f, make_random(600, 3), NULL);
  g_autoptr(RelayGroups) g = relay_groups_new(f.t);
  /* 0-ms links join nodes 0..59 that they connect; everything else is above the cap (600 / 128 = 4 nodes)
   * at the first positive floor (5 ms: every 10-ms link), so it stays apart. */
  guint32 in_first = 0;
  for (guint32 v = 0; v < 600; v++)
    for (guint32 e = f.t->adj_off[v]; e < f.t->adj_off[v + 1]; e++) {
      gboolean same = relay_groups_of(g, v) == relay_groups_of(g, f.t->adj[e]);
      CU_ASSERT_EQUAL(same, f.t->lat_floor_ns[e] == 0);
      in_first += same;
    }
  CU_ASSERT(in_first > 0);
  CU_ASSERT_EQUAL(relay_groups_lookahead(g, NULL, NULL), 5 * SIM_NS_PER_MS);
  CU_ASSERT(relay_groups_count(g) > 540);
  for (guint threads = 1; threads <= 70; threads++) {
    guint n = relay_groups_threads(g, threads);
    CU_ASSERT_EQUAL(n, MIN(threads, RELAY_MAX_THREADS));
    guint last = 0;
    guint64 *work = g_new0(guint64, n);
    for (guint32 i = 0; i < relay_groups_count(g); i++) {
      guint th = relay_groups_thread_of(g, threads, i);
      CU_ASSERT(th >= last && th <= last + 1); /* contiguous runs, in order, none empty */
      last = th;
    }
    CU_ASSERT_EQUAL(last, n - 1);
    for (guint32 v = 0; v < 600; v++)
      work[relay_groups_thread_of(g, threads, relay_groups_of(g, v))] +=
          f.t->adj_off[v + 1] - f.t->adj_off[v] + 8;
    guint64 most = 0, total = 0;
    for (guint i = 0; i < n; i++) {
      most = MAX(most, work[i]);
      total += work[i];
    }
    /* Within one group's work (at most the largest group: a few nodes of degree < 40) of an equal share. */
    CU_ASSERT(most * n <= total + n * 400);
    g_free(work);
  }
  fixture_clear(&f);
}

/* Side work (relay_work_set_idle): the kernel's second thread takes it between blocks, until it says there is
 * no more; the relay's results are those without it. */
typedef struct {
  pthread_t caller;
  gint left, calls, foreign;
} SideWork;

static gboolean side_work_fn(gpointer p) {
  SideWork *d = p;
  g_atomic_int_inc(&d->calls);
  if (!pthread_equal(pthread_self(), d->caller)) g_atomic_int_set(&d->foreign, 1);
  for (;;) {
    gint left = g_atomic_int_get(&d->left);
    if (left <= 0) return FALSE;
    if (g_atomic_int_compare_and_exchange(&d->left, left, left - 1)) return TRUE;
  }
}

static void test_side_work(void) {
  SideWork d = {.caller = pthread_self()};
  Fixture with, without;
  fixture_pareto(&with, topo_random_hubs(600, 3, 0), "{}");
  fixture_pareto(&without, topo_random_hubs(600, 3, 0), "{}");
  relay_work_set_threads(with.w, 2);
  relay_work_set_threads(without.w, 2);
  relay_work_set_run_mode(with.w, RELAY_RUN_ALL);
  relay_work_set_idle(with.w, side_work_fn, &d);
  gboolean taken[2] = {FALSE, FALSE}; /* before and after the threads' restart */
  for (guint blk = 0; blk < 100; blk++) {
    guint32 source = blk * 7 % 600;
    SimTime t0 = MS(1000.0 * blk);
    RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = 20000, .gas_used = 4e6};
    SimRng r1, r2;
    sim_rng_init(&r1, 77, blk);
    sim_rng_init(&r2, 77, blk);
    if (blk == 50) relay_work_set_idle(with.w, side_work_fn, &d); /* again, with the threads running: restarted */
    g_atomic_int_set(&d.left, 3);
    relay_geth.propagate(with.relay.params, &with.gp, with.t, &b, NULL, &r1, with.w);
    relay_geth.propagate(without.relay.params, &without.gp, without.t, &b, NULL, &r2, without.w);
    for (guint32 v = 0; v < 600; v++) {
      CU_ASSERT_EQUAL(relay_work_have(with.w, v), relay_work_have(without.w, v));
      CU_ASSERT_EQUAL(relay_work_announce(with.w, v), relay_work_announce(without.w, v));
    }
    /* Between blocks the second thread spins (then sleeps): the three units go within its spin unless the
     * machine keeps it off a core that long; fifty tries each side of the restart. */
    gboolean *t = &taken[blk >= 50];
    for (int ms = 0; ms < 100 && !*t; ms++) {
      *t = g_atomic_int_get(&d.left) == 0;
      if (!*t) g_usleep(1000);
    }
  }
  CU_ASSERT_TRUE(taken[0]);
  CU_ASSERT_TRUE(taken[1]);
  /* Long after the last block (its spin over, the thread napping): work that comes now is still taken, at
   * its next look (every IDLE_NAP_NS). */
  g_usleep(20000);
  g_atomic_int_set(&d.left, 3);
  gboolean late = FALSE;
  for (int ms = 0; ms < 2000 && !late; ms++) {
    late = g_atomic_int_get(&d.left) == 0;
    if (!late) g_usleep(1000);
  }
  CU_ASSERT_TRUE(late);
  CU_ASSERT_TRUE(g_atomic_int_get(&d.foreign));
  CU_ASSERT(g_atomic_int_get(&d.calls) >= 4); /* three units and the call that found none */
  relay_work_set_idle(with.w, NULL, NULL);
  fixture_clear(&with);
  fixture_clear(&without);
}

int register_suites(void) {
  ADD_SUITE("relay", TEST(test_line_timing), TEST(test_sqrt_push), TEST(test_fetch_timeout_retry),
            TEST(test_known_peers), TEST(test_import_grows_with_gas));
  ADD_SUITE("relay-windows", TEST(test_windows_hand_checked), TEST(test_zero_delay_link_refused),
            TEST(test_thread_counts_full), TEST(test_thread_counts_stop), TEST(test_thread_counts_watch),
            TEST(test_stop_watched_exact), TEST(test_stop_watched_exact_upload), TEST(test_stop_agree), TEST(test_lazy_draws_exact),
            TEST(test_split_announcements), TEST(test_groups), TEST(test_side_work));
  ADD_SUITE("relay-wire-in", TEST(test_joining_star), TEST(test_joining_line), TEST(test_joining_source),
            TEST(test_host_overhead));
  return 0;
}
