/* test_relay_btc.c: the bitcoin-compact relay on hand-built topologies with hand-computed arrival times,
 * SimBlock's failure-size table, and the SimBlock-style geo options (out-degree CDF, inter-region bandwidth
 * cap, miners on ordinary nodes). */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "topo-fixture.h"
#include "geo.h"
#include "net.h"
#include "registry.h"
#include "relay.h"

/* Sets the latency of the link between u and v (both directions). */
static void set_link_latency(NetTopology *t, guint32 u, guint32 v, double lat_ms) {
  for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++)
    if (t->adj[e] == v)
      t->lat_mean_ns[e] = t->lat_floor_ns[e] = t->lat_mean_ns[t->rev[e]] = t->lat_floor_ns[t->rev[e]] =
          MS(lat_ms);
}

static void fixture_init(Fixture *f, NetTopology *t, const char *relay_json) {
  fixture_init_model(f, t, "bitcoin-compact", relay_json);
  CU_ASSERT_PTR_EQUAL_FATAL(f->relay.model, &relay_btc.info);
}

static void propagate(Fixture *f, guint32 source, double bytes, guint64 seed) {
  SimTime t0 = 0;
  RelayBlock b = {.sources = &source, .source_t = &t0, .n_sources = 1, .size_bytes = bytes};
  SimRng rng;
  sim_rng_init(&rng, seed, 99);
  relay_btc.propagate(f->relay.params, &f->gp, f->t, &b, NULL, &rng, f->w);
}

/* ---- hand-computed timing ---- */

/* A -- B -- C, full blocks only. 20 000 bytes at min(16, 40) Mb/s = 10 ms; latency 50 ms; processing 2 ms.
 * B: inv at 50, getdata reaches A at 100, block 100 + 10 + 50 = 160. C: B relays after processing, inv at
 * 162 + 50 = 212, getdata at B 262, block 262 + 10 + 50 = 322. */
static void test_line_timing(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50), "{\"compact_share\": 0}");
  propagate(&f, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 0), 0);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), MS(50));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(160));
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 1), MS(160));
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 2), MS(212));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(322));
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 2), MS(322));
  /* The source hears nothing back: everyone knows it has the block. */
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 0), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 0), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 3);
  /* inv, getdata, block per hop; nobody invs a peer that already asked. */
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 6);
  /* The model's import time is its processing time. */
  CU_ASSERT_EQUAL(relay_btc.import_ns(f.relay.params, 0), MS(2));
  fixture_clear(&f);
}

/* The same line with SimBlock's 10 ms on each inv and getdata and 5 ms processing: B inv 60, getdata at A
 * 120, block 180; C inv 180 + 5 + 10 + 50 = 245, getdata at B 305, block 365. */
static void test_line_message_ms(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50),
               "{\"compact_share\": 0, \"message_ms\": 10, \"processing_ms\": 5}");
  propagate(&f, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), MS(60));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(180));
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 2), MS(245));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(365));
  fixture_clear(&f);
}

/* Compact blocks between two compact nodes: 100 000-byte block (50 ms at 16 Mb/s) sent as 10 000 bytes
 * (5 ms). B: inv 50, getdata 100, compact block 100 + 5 + 50 = 155. */
static void test_compact(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50),
               "{\"compact_share\": 1, \"compact_fail\": 0, \"compact_bytes\": 10000}");
  propagate(&f, 0, 100000, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(155));
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 1), MS(155));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(155 + 2 + 50 + 50 + 5 + 50));
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 6);
  fixture_clear(&f);

  /* A block no larger than a compact block goes whole. */
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50),
               "{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000}");
  propagate(&f, 0, 10000, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(155));
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 6); /* no failure, no getblocktxn */
  fixture_clear(&f);
}

/* Every reconstruction fails: the compact block arrives at 155 (B's first block message), getblocktxn
 * reaches A at 205, A's link is free again since 155 (the compact block arrived), the full block takes
 * 50 ms: B has it at 205 + 50 + 50 = 305. With fail_share 0.5 the rest is 25 ms: 280. */
static void test_compact_failure(void) {
  static const guint32 links[][2] = {{0, 1}};
  const struct {
    const char *json;
    double have_ms;
  } cases[] = {
      {"{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000}", 305},
      {"{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000, \"fail_share\": 0.5}", 280},
      /* Churning receivers fail at their own rate. */
      {"{\"compact_share\": 1, \"compact_fail\": 0, \"churn_share\": 1, \"churn_compact_fail\": 1, "
       "\"compact_bytes\": 10000}",
       305},
      /* The link is held only while sending: the same here, as nothing else is queued. */
      {"{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000, \"upload_until_arrival\": "
       "false}",
       305},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    Fixture f;
    fixture_init(&f, make_topo(2, links, 1, 16e6, 40e6, 50), cases[i].json);
    propagate(&f, 0, 100000, 1);
    CU_ASSERT_EQUAL(relay_work_first_push(f.w, 1), MS(155));
    CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(cases[i].have_ms));
    if (relay_work_have(f.w, 1) != MS(cases[i].have_ms))
      fprintf(stderr, "\n  case %u: have %.3f ms\n", i, (double)relay_work_have(f.w, 1) / 1e6);
    /* inv, getdata, compact block, getblocktxn, block */
    CU_ASSERT_EQUAL(relay_work_messages(f.w), 5);
    fixture_clear(&f);
  }
}

/* SimBlock's rule for processing (processing_in_message): it is part of each block message's delay at the
 * sender and the receiver relays at once. The line of test_line_message_ms (10 ms per inv and getdata, 5 ms
 * processing, 10 ms transfer, 50 ms latency): B inv 60, getdata at A 120, block 120 + 10 + 5 + 50 = 185;
 * C inv 185 + 10 + 50 = 245 (no processing before the invs), getdata at B 305, block 305 + 65 = 370. A miner
 * mines on the block at once: the import time is 0. */
static void test_processing_in_message(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  fixture_init(
      &f, make_topo(3, links, 2, 16e6, 40e6, 50),
      "{\"compact_share\": 0, \"message_ms\": 10, \"processing_ms\": 5, \"processing_in_message\": true}");
  propagate(&f, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), MS(60));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(185));
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 2), MS(245));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(370));
  CU_ASSERT_EQUAL(relay_btc.import_ns(f.relay.params, 0), 0);
  fixture_clear(&f);

  /* The processing holds the upload link (until arrival) and a failed compact block pays it twice: A - B,
   * 100 000-byte block as a 10 000-byte compact block (5 ms) that fails: compact block at 100 + 5 + 5 + 50 =
   * 160, getblocktxn at A 210, the rest (fail_share 0.5: 25 ms) at 210 + 25 + 5 + 50 = 290. */
  fixture_init(&f, make_topo(2, links, 1, 16e6, 40e6, 50),
               "{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000, \"fail_share\": 0.5, "
               "\"processing_ms\": 5, \"processing_in_message\": true}");
  propagate(&f, 0, 100000, 1);
  CU_ASSERT_EQUAL(relay_work_first_push(f.w, 1), MS(160));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(290));
  fixture_clear(&f);

  /* Two leaves of a star, latencies 10 and 20 ms: getdatas at 20 and 40; the first upload holds the link
   * for 50 + 5 + 10 ms (100 000 bytes at 16 Mb/s, processing, latency): leaf 1 at 85, leaf 2's block leaves
   * at 85 and arrives 85 + 50 + 5 + 20 = 160. */
  static const guint32 star[][2] = {{0, 1}, {0, 2}};
  NetTopology *t = make_topo(3, star, 2, 16e6, 16e6, 0);
  set_link_latency(t, 0, 1, 10);
  set_link_latency(t, 0, 2, 20);
  fixture_init(&f, t, "{\"compact_share\": 0, \"processing_ms\": 5, \"processing_in_message\": true}");
  propagate(&f, 0, 100000, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(85));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(160));
  fixture_clear(&f);
}

/* ---- SimBlock's failure-size table (fail_size "simblock") ----
 * A - B with every compact block failing: B's block is complete at getblocktxn + share x the full block's
 * transfer + latency. A 1.6 MB block at 16 Mb/s takes 800 ms whole; its compact block (10 000 bytes) 5 ms.
 * The compact block arrives at 100 + 5 + 50 = 155, getblocktxn reaches A at 205, so B has the block at
 * 205 + 800 x share + 50 ms: the share can be read back from B's time. */
#define FAIL_BYTES 1600000.0
static double failed_share(Fixture *f, guint32 from, guint64 seed) {
  fixture_propagate_at(f, &relay_btc, from, 0, FAIL_BYTES, seed);
  guint32 to = 1 - from;
  return (double)(relay_work_have(f->w, to) - MS(255)) / (double)MS(800);
}

/* SimBlock's churn-node table, as counts of each hundredth 0.01 .. 0.96 (945 entries). */
static const guint churn_table_counts[96] = {
    546, 66, 39, 27, 21, 17, 14, 12, 11, 10, 9, 8, 7, 7, 6, 6, 5, 5, 5, 4, 4, 4, 4, 4,
    3,   3,  3,  3,  3,  3,  3,  3,  2,  2,  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* A control (non-churning) sender always sends 0.01 of the block: 8 ms here. */
static void test_fail_size_control(void) {
  static const guint32 links[][2] = {{0, 1}};
  Fixture f;
  fixture_init(&f, make_topo(2, links, 1, 16e6, 40e6, 50),
               "{\"compact_share\": 1, \"compact_fail\": 1, \"compact_bytes\": 10000, \"churn_share\": 0, "
               "\"fail_size\": \"simblock\"}");
  for (guint64 seed = 1; seed <= 50; seed++) {
    fixture_propagate_at(&f, &relay_btc, 0, 0, FAIL_BYTES, seed);
    CU_ASSERT_EQUAL(relay_work_first_push(f.w, 1), MS(155));
    CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(205 + 8 + 50));
  }
  /* fail_share is not read with "simblock" (its default 1 would give 1055 ms). */
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 5);
  fixture_clear(&f);
}

/* A churning sender draws from the 945-entry table: every share is a whole hundredth in [0.01, 0.96], and
 * the counts agree with the table (chi-square at the 0.1% level over bins grouped to >= 20 expected; the
 * draws are fixed by the seeds). */
static void test_fail_size_churn_table(void) {
  static const guint32 links[][2] = {{0, 1}};
  Fixture f;
  fixture_init(&f, make_topo(2, links, 1, 16e6, 40e6, 50),
               "{\"compact_share\": 1, \"compact_fail\": 0, \"churn_share\": 1, \"churn_compact_fail\": 1, "
               "\"compact_bytes\": 10000, \"fail_size\": \"simblock\"}");
  const guint n = 6000;
  guint count[97] = {0};
  guint bad = 0;
  double sum = 0;
  for (guint i = 0; i < n; i++) {
    double share = failed_share(&f, 0, 1000 + i);
    double h = share * 100;
    long k = lround(h);
    if (fabs(h - (double)k) > 1e-6 || k < 1 || k > 96) {
      bad++;
      continue;
    }
    count[k]++;
    sum += share;
  }
  CU_ASSERT_EQUAL(bad, 0);
  double chi2 = 0;
  guint df = 0;
  double obs = 0, exp_ = 0;
  for (guint k = 1; k <= 96; k++) {
    obs += count[k];
    exp_ += n * churn_table_counts[k - 1] / 945.0;
    if (exp_ >= 20 || k == 96) {
      chi2 += (obs - exp_) * (obs - exp_) / exp_;
      df++;
      obs = exp_ = 0;
    }
  }
  double crit = gsl_cdf_chisq_Qinv(0.001, df - 1);
  CU_ASSERT(chi2 < crit);
  if (chi2 >= crit) fprintf(stderr, "\n  chi2 %g >= %g (df %u)\n", chi2, crit, df - 1);
  /* The table's mean is 8243 / 94500 = 0.0872; the draws' sd is about 0.16, so 5 sigma over 6000 is 0.01. */
  CU_ASSERT(fabs(sum / n - 8243.0 / 94500) < 0.01);
  /* The commonest share, 0.01, is 546 / 945 of the draws (5 sigma). */
  CU_ASSERT(fabs(count[1] - n * 546.0 / 945) < 5 * sqrt(n * (546.0 / 945) * (399.0 / 945)));
  fixture_clear(&f);
}

/* The sender's churn trait picks the table (Node.getFailedBlockSize runs on the sender), the receiver's
 * picks the failure rate. With half the nodes churning, compact_fail 0 and churn_compact_fail 1, a block
 * fails exactly when its receiver churns, which reveals each node's trait; then a churning receiver of a
 * control sender always gets 0.01, and one of a churning sender does not (P(50 x 0.01) = 1e-12). */
static void test_fail_size_by_sender(void) {
  static const guint32 links[][2] = {{0, 1}};
  guint pairs_checked[2] = {0, 0};
  for (guint64 topo_seed = 1; topo_seed <= 40; topo_seed++) {
    NetTopology *t = make_topo(2, links, 1, 16e6, 40e6, 50);
    t->seed = topo_seed;
    Fixture f;
    fixture_init(
        &f, t,
        "{\"compact_share\": 1, \"compact_fail\": 0, \"churn_share\": 0.5, \"churn_compact_fail\": 1, "
        "\"compact_bytes\": 10000, \"fail_size\": \"simblock\"}");
    gboolean churn[2];
    for (guint32 v = 0; v < 2; v++) {
      fixture_propagate_at(&f, &relay_btc, 1 - v, 0, FAIL_BYTES, 1);
      churn[v] = relay_work_have(f.w, v) != relay_work_first_push(f.w, v);
    }
    for (guint32 s = 0; s < 2; s++) {
      if (!churn[1 - s]) continue; /* the receiver must churn for a failure */
      guint not_one = 0;
      for (guint64 seed = 1; seed <= 50; seed++)
        not_one += fabs(failed_share(&f, s, seed) - 0.01) > 1e-9;
      if (churn[s]) {
        CU_ASSERT(not_one > 0);
      } else {
        CU_ASSERT_EQUAL(not_one, 0);
      }
      pairs_checked[churn[s]]++;
    }
    fixture_clear(&f);
  }
  /* Both kinds of pair occur among the 40 fixed topology seeds. */
  CU_ASSERT(pairs_checked[0] > 0 && pairs_checked[1] > 0);
}

/* With compact_fail 0.5 about half the compact blocks of a star fail (5 sigma over 400 leaves). */
static void test_compact_failure_rate(void) {
  const guint n = 400;
  g_autofree Link *links = star_links(n);
  Fixture f;
  fixture_init(&f, make_topo(n + 1, (const guint32(*)[2])links, n, 1e9, 1e9, 10),
               "{\"compact_share\": 1, \"compact_fail\": 0.5, \"upload_until_arrival\": false}");
  propagate(&f, 0, 100000, 11);
  guint failed = 0;
  for (guint32 v = 1; v <= n; v++) {
    CU_ASSERT(relay_work_have(f.w, v) >= relay_work_first_push(f.w, v));
    failed += relay_work_have(f.w, v) > relay_work_first_push(f.w, v);
  }
  CU_ASSERT(fabs(failed - n * 0.5) < 5 * sqrt(n * 0.25));
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 3 * n + 2 * failed);
  fixture_clear(&f);
}

/* One upload at a time, first come first served. Star 0 - {1, 2, 3, 4} with latencies 40, 10, 30, 20 ms:
 * getdatas reach the centre at 80, 20, 60, 40, so it serves 2, 4, 3, 1. A 100 000-byte block takes 50 ms
 * (16 Mb/s).
 *  - Link held until arrival (SimBlock): 2: 20 + 50 + 10 = 80; 4: 80 + 50 + 20 = 150; 3: 150 + 50 + 30 =
 *    230; 1: 230 + 50 + 40 = 320.
 *  - Held while sending: 2: 20 -> sent 70, +10 = 80; 4: 70 -> 120, +20 = 140; 3: 120 -> 170, +30 = 200;
 *    1: 170 -> 220, +40 = 260. */
static void test_serial_uploads(void) {
  static const guint32 links[][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}};
  const double lat[] = {0, 40, 10, 30, 20};
  const struct {
    const char *json;
    double have_ms[5];
  } cases[] = {
      {"{\"compact_share\": 0}", {0, 320, 80, 230, 150}},
      {"{\"compact_share\": 0, \"upload_until_arrival\": false}", {0, 260, 80, 200, 140}},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    NetTopology *t = make_topo(5, links, 4, 16e6, 16e6, 0);
    for (guint32 v = 1; v <= 4; v++)
      set_link_latency(t, 0, v, lat[v]);
    Fixture f;
    fixture_init(&f, t, cases[c].json);
    propagate(&f, 0, 100000, 3);
    for (guint32 v = 1; v <= 4; v++) {
      CU_ASSERT_EQUAL(relay_work_announce(f.w, v), MS(lat[v]));
      CU_ASSERT_EQUAL(relay_work_have(f.w, v), MS(cases[c].have_ms[v]));
    }
    CU_ASSERT_EQUAL(relay_work_messages(f.w), 12);
    fixture_clear(&f);
  }
}

/* Equal arrival times: a star of 30 leaves, all getdatas reach the centre at 40 ms; the uploads still go
 * one at a time, 30 ms apart (10 ms transfer + 20 ms latency while the link is held). */
static void test_serial_uploads_star(void) {
  const guint n = 30;
  g_autofree Link *links = star_links(n);
  Fixture f;
  fixture_init(&f, make_topo(n + 1, (const guint32(*)[2])links, n, 8e6, 8e6, 20), "{\"compact_share\": 0}");
  propagate(&f, 0, 10000, 5);
  g_autofree gboolean *seen = g_new0(gboolean, n + 1);
  for (guint32 v = 1; v <= n; v++) {
    SimTime h = relay_work_have(f.w, v);
    CU_ASSERT((h - MS(40)) % MS(30) == 0);
    gint64 k = (h - MS(40)) / MS(30); /* position in the queue, 1..n */
    CU_ASSERT_FATAL(k >= 1 && k <= (gint64)n);
    CU_ASSERT_FALSE(seen[k]);
    seen[k] = TRUE;
  }
  CU_ASSERT_EQUAL(relay_work_reached(f.w), n + 1);
  fixture_clear(&f);
}

/* Who uses compact blocks is a trait of the node: the same in every block of a run, changing with the
 * topology's seed, about compact_share of the nodes. A star with no latency: every getdata reaches the centre
 * at 0 and its uploads go back to back, a full block in 1 ms and a compact one in 0.1 ms, so the last
 * arrival, n_full x 1 + n_compact x 0.1 ms, counts the compact leaves (none when the centre is not one). */
static void test_compact_traits(void) {
  const guint n = 2000;
  g_autofree Link *links = star_links(n);
  guint seeds_with_compact = 0;
  for (guint64 seed = 1; seed <= 12; seed++) {
    NetTopology *t = make_topo(n + 1, (const guint32(*)[2])links, n, 8e7, 8e7, 0);
    t->seed = seed;
    Fixture f;
    fixture_init(&f, t,
                 "{\"compact_share\": 0.5, \"compact_fail\": 0, \"compact_bytes\": 1000, "
                 "\"upload_until_arrival\": false}");
    g_autofree SimTime *first = g_new(SimTime, n + 1);
    propagate(&f, 0, 10000, 100);
    SimTime last = 0;
    for (guint32 v = 1; v <= n; v++) {
      first[v] = relay_work_have(f.w, v);
      last = MAX(last, first[v]);
    }
    propagate(&f, 0, 10000, 101); /* another block: the same traits, so (no jitter) the same times */
    guint same = 0;
    for (guint32 v = 1; v <= n; v++)
      same += relay_work_have(f.w, v) == first[v];
    CU_ASSERT_EQUAL(same, n);
    double k = (n - (double)last / 1e6) / 0.9;
    guint compact = (guint)llround(k);
    CU_ASSERT(fabs(k - compact) < 1e-3);
    if (compact > 0) {
      seeds_with_compact++;
      CU_ASSERT(fabs(compact - n * 0.5) < 5 * sqrt(n * 0.25));
    }
    fixture_clear(&f);
  }
  /* The centre itself is compact for about half the seeds (12 seeds: P(0 or 12) = 5e-4; fixed seeds). */
  CU_ASSERT(seeds_with_compact >= 1 && seeds_with_compact <= 11);
}

/* Steps far apart in time (the kernel's step queue holds 2.1 s in buckets, later steps aside): a line of
 * four with 20 s links, and a hub whose leaves are 10 ms and 30 s away. Line: B inv 20 s, getdata at A
 * 40 s, block 40 s + 10 ms + 20 s; each further hop adds 60.012 s (2 ms processing). Hub: the near leaves
 * are served first, one at a time (10 ms transfer + 10 ms latency each, getdatas all at 20 ms); the far
 * leaf's getdata reaches the hub at 60 s, when its link is long free. */
static void test_far_steps(void) {
  static const guint32 line[][2] = {{0, 1}, {1, 2}, {2, 3}};
  Fixture f;
  fixture_init(&f, make_topo(4, line, 3, 16e6, 40e6, 20000), "{\"compact_share\": 0}");
  propagate(&f, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(60010));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(60010 + 60012));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 3), MS(60010 + 2 * 60012));
  fixture_clear(&f);

  const guint n = 5;
  g_autofree Link *links = star_links(n);
  NetTopology *t = make_topo(n + 1, links, n, 16e6, 16e6, 10);
  set_link_latency(t, 0, n, 30000);
  fixture_init(&f, t, "{\"compact_share\": 0}");
  propagate(&f, 0, 20000, 2);
  g_autofree gboolean *seen = g_new0(gboolean, n);
  for (guint32 v = 1; v < n; v++) {
    SimTime h = relay_work_have(f.w, v);
    gint64 k = (h - MS(20)) / MS(20); /* position in the hub's queue, 1..n-1 */
    CU_ASSERT((h - MS(20)) % MS(20) == 0);
    CU_ASSERT_FATAL(k >= 1 && k < (gint64)n);
    CU_ASSERT_FALSE(seen[k]);
    seen[k] = TRUE;
  }
  CU_ASSERT_EQUAL(relay_work_have(f.w, n), MS(60000 + 10 + 30000));
  CU_ASSERT_EQUAL(relay_work_reached(f.w), n + 1);
  fixture_clear(&f);
}

/* ---- stop_after and results through the RelayWork API ---- */

static void test_stop_after(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}, {2, 3}};
  Fixture f;
  fixture_init(&f, make_topo(4, links, 3, 16e6, 40e6, 50), "{\"compact_share\": 0}");
  SimTime t0 = 0;
  guint32 src = 0;
  RelayBlock b = {.sources = &src, .source_t = &t0, .n_sources = 1, .size_bytes = 20000};
  SimRng rng;
  sim_rng_init(&rng, 1, 2);
  RelayStop stop = relay_stop_nodes(2);
  relay_btc.propagate(f.relay.params, &f.gp, f.t, &b, &stop, &rng, f.w);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(160));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 3), SIM_TIME_MAX); /* stopped before the end of the line */
  /* The next block starts afresh in the same work. */
  propagate(&f, 3, 20000, 2);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 3), 0);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(160));
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 4);
  fixture_clear(&f);
}

/* ---- geo options: parsing ---- */

static const char *const pools[] = {"Nodes", "Pool", NULL};

static const char *const geo_text =
    "{\"network\": {"
    " \"nodes\": 400, \"geo_bias\": 0, \"max_peers\": 1000, \"inter_region_bps\": 6e6,"
    " \"regions\": {\"names\": [\"NA\", \"EU\"], \"latency_ms\": [[32, 124], [124, 11]],"
    "  \"upload_bps\": [19200000, 20700000], \"download_bps\": [52000000, 40000000],"
    "  \"node_share\": [0.4, 0.6]},"
    " \"out_degree_cdf\": [0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95,"
    "  0.97, 0.97, 0.98, 0.99, 0.995, 1],"
    " \"gateways\": [{\"pool\": \"Nodes\", \"ordinary_nodes\": true}, {\"pool\": \"Pool\", \"regions\": "
    "[\"EU\"]}]"
    "}}";

static const char *const geo_extra[] = {"model",    "comment",        "jitter", "relay",
                                        "stratum",  "regions",        "cities", "vantage_points",
                                        "gateways", "out_degree_cdf", NULL};

/* Parses the fixture with `sets` applied; returns the problems (free with sim_diag_free). */
static SimDiag *parse_geo(NetGeoParams *p, const char *const *sets) {
  g_autoptr(json_t) root = json_loads(geo_text, JSON_REJECT_DUPLICATES, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  for (guint i = 0; sets && sets[i]; i++) {
    if (sets[i][0] == '-') { /* "-key": remove network.key */
      CU_ASSERT_EQUAL_FATAL(json_object_del(json_object_get(root, "network"), sets[i] + 1), 0);
    } else {
      CU_ASSERT_TRUE_FATAL(sim_json_set_path(root, sets[i], NULL));
    }
  }
  memset(p, 0, sizeof *p);
  SimDiag *diag = sim_diag_new("s.json");
  json_t *net = json_object_get(root, "network");
  sim_params_parse(net_geo_param_specs, net_geo_n_param_specs, net, "$.network", geo_extra, p, diag);
  net_geo_parse_tables(p, net, "$.network", pools, 2, diag);
  return diag;
}

static void clear_geo(NetGeoParams *p) {
  net_geo_clear_tables(p);
  sim_params_clear(net_geo_param_specs, net_geo_n_param_specs, p);
}

#define SETS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define WANT(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect_problems(const char *const *sets, const char *const *expected) {
  NetGeoParams p;
  g_autoptr(SimDiag) diag = parse_geo(&p, sets);
  guint n = g_strv_length((char **)expected), count = sim_diag_count(diag);
  CU_ASSERT_EQUAL(count, n);
  for (guint i = 0; i < MIN(count, n); i++) {
    g_autofree char *full = g_strdup_printf("s.json: %s", expected[i]);
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, i), full);
  }
  if (count != n) {
    g_autofree char *all = sim_diag_join(diag);
    fprintf(stderr, "\n  got %u problems:\n%s\n", count, all);
  }
  /* A broken table never reaches the topology builder. */
  if (strstr(expected[0], "out_degree_cdf")) CU_ASSERT_PTR_NULL(p.out_degree_cdf);
  clear_geo(&p);
}

static void test_parse_valid(void) {
  NetGeoParams p;
  g_autoptr(SimDiag) diag = parse_geo(&p, NULL);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.inter_region_bps, 6e6, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.out_degree_cdf);
  CU_ASSERT_DOUBLE_EQUAL(p.out_degree_cdf[0], 0.025, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.out_degree_cdf[NET_OUT_DEGREE_MAX - 1], 1, 0);
  CU_ASSERT_EQUAL_FATAL(p.n_pools, 2);
  CU_ASSERT_EQUAL(p.pool_on_nodes[0], 1);
  CU_ASSERT_EQUAL(p.pool_on_nodes[1], 0);
  CU_ASSERT_EQUAL(p.n_specials, 1); /* only Pool's gateway */
  CU_ASSERT_STRING_EQUAL(p.specials[0].name, "Pool#1");
  clear_geo(&p);
  /* Defaults: no cap, no table. */
  g_autoptr(SimDiag) d2 = parse_geo(&p, SETS("-out_degree_cdf", "-inter_region_bps"));
  CU_ASSERT_EQUAL(sim_diag_count(d2), 0);
  CU_ASSERT_PTR_NULL(p.out_degree_cdf);
  CU_ASSERT_DOUBLE_EQUAL(p.inter_region_bps, 0, 0);
  clear_geo(&p);
}

static void test_parse_cdf_not_monotone(void) {
  expect_problems(SETS("network.out_degree_cdf[5]=0.15"),
                  WANT("$.network.out_degree_cdf[5]: must not be below the entry before it (a CDF is "
                       "non-decreasing; got 0.15 after 0.2)"));
}

static void test_parse_cdf_length(void) {
  expect_problems(SETS("network.out_degree_cdf=[0.5, 1]"),
                  WANT("$.network.out_degree_cdf: must be an array of 20 numbers (got 2 entries)"));
  expect_problems(SETS("network.out_degree_cdf=\"simblock\""),
                  WANT("$.network.out_degree_cdf: must be an array of 20 numbers (got string)"));
}

static void test_parse_cdf_last(void) {
  expect_problems(SETS("network.out_degree_cdf[19]=0.999"),
                  WANT("$.network.out_degree_cdf[19]: must be 1 (the last entry of a CDF; got 0.999)"));
  expect_problems(SETS("network.out_degree_cdf[3]=-0.1", "network.out_degree_cdf[19]=1.5"),
                  WANT("$.network.out_degree_cdf[3]: must be >= 0 (got -0.1)"));
  expect_problems(SETS("network.out_degree_cdf[19]=1.5"),
                  WANT("$.network.out_degree_cdf[19]: must be <= 1 (got 1.5)",
                       "$.network.out_degree_cdf[19]: must be 1 (the last entry of a CDF; got 1.5)"));
}

static void test_parse_inter_region(void) {
  expect_problems(SETS("network.inter_region_bps=-1"),
                  WANT("$.network.inter_region_bps: must be >= 0 (got -1)"));
}

static void test_parse_ordinary_nodes(void) {
  expect_problems(SETS("network.gateways[0].regions=[\"NA\"]"),
                  WANT("$.network.gateways[0]: must not give \"regions\" with \"ordinary_nodes\": true"));
  expect_problems(SETS("network.gateways[1]={\"pool\": \"Nodes\", \"ordinary_nodes\": true}"),
                  WANT("$.network.gateways[1].pool: pool \"Nodes\" already has an \"ordinary_nodes\" entry"));
  expect_problems(SETS("network.gateways[1]={\"pool\": \"Nodes\", \"regions\": [\"EU\"]}"),
                  WANT("$.network.gateways[1].pool: pool \"Nodes\" sits on ordinary nodes: its miners sit on "
                       "gateways or on ordinary nodes, not both"));
  expect_problems(SETS("network.gateways[0].ordinary_nodes=1"),
                  WANT("$.network.gateways[0].ordinary_nodes: must be true or false (got integer)"));
  expect_problems(SETS("network.gateways[0]={\"pool\": \"Pool\", \"ordinary_nodes\": true}"),
                  WANT("$.network.gateways[1].pool: pool \"Pool\" sits on ordinary nodes: its miners sit on "
                       "gateways or on ordinary nodes, not both"));
  expect_problems(SETS("network.gateways[0].pool=\"Nobody\""),
                  WANT("$.network.gateways[0].pool: unknown pool \"Nobody\""));
}

/* ---- geo options: topology ---- */

static NetTopology *build(NetGeoParams *p, const char *const *sets, guint64 seed) {
  g_autoptr(SimDiag) diag = parse_geo(p, sets);
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(diag), 0);
  g_autoptr(GError) err = NULL;
  NetTopology *t = net_topology_build(p, seed, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  return t;
}

/* Dial counts of the ordinary nodes follow the CDF: chi-square over the bins with a positive probability
 * (0.1% level), bins of probability 0 stay empty, and every ordinary node's dials all succeed. */
static void check_cdf_topology(const char *const *sets, const double *cdf, guint64 seed) {
  NetGeoParams p;
  g_autoptr(NetTopology) t = build(&p, sets, seed);
  const guint32 S = t->n_special, N = t->n_nodes - S;
  guint count[NET_OUT_DEGREE_MAX + 1] = {0};
  guint bad = 0;
  for (guint32 u = S; u < t->n_nodes; u++) {
    guint32 k = t->out_links[u];
    if (k < 1 || k > NET_OUT_DEGREE_MAX)
      bad++;
    else
      count[k]++;
  }
  CU_ASSERT_EQUAL(bad, 0);
  double chi2 = 0;
  guint df = 0;
  for (guint k = 1; k <= NET_OUT_DEGREE_MAX; k++) {
    double pk = cdf[k - 1] - (k > 1 ? cdf[k - 2] : 0);
    if (pk <= 0) {
      CU_ASSERT_EQUAL(count[k], 0);
      continue;
    }
    double e = pk * N;
    chi2 += (count[k] - e) * (count[k] - e) / e;
    df++;
  }
  double crit = gsl_cdf_chisq_Qinv(0.001, df - 1);
  CU_ASSERT(chi2 < crit);
  if (chi2 >= crit) fprintf(stderr, "\n  chi2 %g >= %g (df %u)\n", chi2, crit, df - 1);
  /* Links are bidirectional: the degree sum is twice the links, dials included. */
  guint64 dialled = 0;
  for (guint32 u = 0; u < t->n_nodes; u++)
    dialled += t->out_links[u];
  CU_ASSERT_EQUAL(t->n_edges, 2 * dialled);
  clear_geo(&p);
}

static void test_topology_cdf(void) {
  static const double simblock[NET_OUT_DEGREE_MAX] = {0.025, 0.05, 0.075, 0.1,  0.2,   0.3, 0.4,
                                                      0.5,   0.6,  0.7,   0.8,  0.85,  0.9, 0.95,
                                                      0.97,  0.97, 0.98,  0.99, 0.995, 1};
  check_cdf_topology(SETS("network.nodes=5000"), simblock, 20190401);
  static const double two_to_six[NET_OUT_DEGREE_MAX] = {0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1, 1,
                                                        1, 1,   1,   1,   1,   1, 1, 1, 1, 1};
  check_cdf_topology(
      SETS("network.nodes=3000",
           "network.out_degree_cdf=[0, 0.2, 0.4, 0.6, 0.8, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
           "1, 1]"),
      two_to_six, 7);
}

/* Without the table every ordinary node dials out_peers, as before the option existed. */
static void test_topology_without_cdf(void) {
  NetGeoParams p;
  g_autoptr(NetTopology) t = build(&p, SETS("-out_degree_cdf", "network.out_peers=6"), 3);
  guint not_six = 0;
  for (guint32 u = t->n_special; u < t->n_nodes; u++)
    not_six += t->out_links[u] != 6;
  CU_ASSERT_EQUAL(not_six, 0);
  CU_ASSERT_DOUBLE_EQUAL(t->inter_region_bps, 6e6, 0);
  CU_ASSERT_EQUAL(t->seed, 3);
  clear_geo(&p);
}

/* The inter-region cap applies between regions only, and only below the endpoints' own bandwidth. */
static void test_inter_region_cap(void) {
  NetTopology t = {0};
  guint16 region[3] = {0, 1, 0};
  double up[3] = {20e6, 20e6, 4e6}, down[3] = {50e6, 50e6, 50e6};
  t.region = region;
  t.up_bps = up;
  t.down_bps = down;
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 1, 50000), 20 * SIM_NS_PER_MS); /* no cap: 20 Mb/s */
  t.inter_region_bps = 8e6;
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 1, 50000), 50 * SIM_NS_PER_MS);  /* capped at 8 Mb/s */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 0, 2, 50000), 20 * SIM_NS_PER_MS);  /* same region */
  CU_ASSERT_EQUAL(net_transfer_ns(&t, 2, 1, 50000), 100 * SIM_NS_PER_MS); /* 4 Mb/s upload is lower */
}

/* ---- performance-model wire-ins: joining nodes and host overhead ---- */

/* A -- B -- C with B not synced before 10 s: a block at 0 stays at A (B ignores its inv and relays
 * nothing); one at 10 s reaches C at 322 ms as in test_line_timing. */
static void test_joining_line(void) {
  static const guint32 links[][2] = {{0, 1}, {1, 2}};
  Fixture f;
  fixture_init(&f, make_topo(3, links, 2, 16e6, 40e6, 50), "{\"compact_share\": 0}");
  const guint32 b = 1;
  const SimTime ten = 10 * SIM_NS_PER_S;
  net_topology_set_joining(f.t, &b, &ten, 1);
  fixture_propagate_at(&f, &relay_btc, 0, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 1);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), SIM_TIME_MAX);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), SIM_TIME_MAX);
  fixture_propagate_at(&f, &relay_btc, 0, ten, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 3);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), ten + MS(160));
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), ten + MS(322));
  CU_ASSERT_EQUAL(relay_work_messages(f.w), 6);
  /* A source that is not synced still has and relays its own block. */
  const guint32 a = 0;
  net_topology_set_joining(f.t, &a, &ten, 1);
  fixture_propagate_at(&f, &relay_btc, 0, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_reached(f.w), 3);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 2), MS(322));
  fixture_clear(&f);
}

/* A star whose leaf k is synced at k s: a block from the hub at t0 reaches the hub and the leaves synced by
 * then, with inv, getdata and block for each of them and nothing for the others. */
static void test_joining_star(void) {
  const guint n = 8;
  g_autofree Link *links = star_links(n);
  Fixture f;
  fixture_init(&f, make_topo(n + 1, links, n, 1e9, 1e9, 20), "{\"compact_share\": 0}");
  guint32 nodes[8];
  SimTime avail[8];
  for (guint k = 1; k <= n; k++) {
    nodes[k - 1] = k;
    avail[k - 1] = (SimTime)k * SIM_NS_PER_S;
  }
  net_topology_set_joining(f.t, nodes, avail, n);
  for (guint s = 0; s <= n + 1; s++) {
    SimTime t0 = (SimTime)s * SIM_NS_PER_S;
    fixture_propagate_at(&f, &relay_btc, 0, t0, 1000, 3);
    guint synced = MIN(s, n);
    CU_ASSERT_EQUAL(relay_work_reached(f.w), 1 + synced);
    CU_ASSERT_EQUAL(relay_work_messages(f.w), 3 * synced);
    for (guint32 k = 1; k <= n; k++)
      CU_ASSERT_EQUAL(relay_work_have(f.w, k) != SIM_TIME_MAX, k <= s);
  }
  fixture_clear(&f);
}

/* Host overhead on the link (dc_stack): inv, getdata and block pay it once each. */
static void test_host_overhead(void) {
  static const guint32 links[][2] = {{0, 1}};
  const SimTime host = 156;
  NetTopology *t = make_topo(2, links, 1, 16e6, 40e6, 50);
  topo_add_host(t, host);
  Fixture f;
  fixture_init(&f, t, "{\"compact_share\": 0}");
  fixture_propagate_at(&f, &relay_btc, 0, 0, 20000, 1);
  CU_ASSERT_EQUAL(relay_work_announce(f.w, 1), MS(50) + host);
  CU_ASSERT_EQUAL(relay_work_have(f.w, 1), MS(160) + 3 * host);
  fixture_clear(&f);
}

int register_suites(void) {
  ADD_SUITE("relay-btc-wire-in", TEST(test_joining_line), TEST(test_joining_star), TEST(test_host_overhead));
  ADD_SUITE("relay-btc", TEST(test_line_timing), TEST(test_line_message_ms), TEST(test_compact),
            TEST(test_compact_failure), TEST(test_compact_failure_rate), TEST(test_serial_uploads),
            TEST(test_serial_uploads_star), TEST(test_compact_traits), TEST(test_stop_after),
            TEST(test_processing_in_message), TEST(test_fail_size_control), TEST(test_fail_size_churn_table),
            TEST(test_fail_size_by_sender), TEST(test_far_steps));
  ADD_SUITE("geo-simblock", TEST(test_parse_valid), TEST(test_parse_cdf_not_monotone),
            TEST(test_parse_cdf_length), TEST(test_parse_cdf_last), TEST(test_parse_inter_region),
            TEST(test_parse_ordinary_nodes), TEST(test_topology_cdf), TEST(test_topology_without_cdf),
            TEST(test_inter_region_cap));
  return 0;
}
