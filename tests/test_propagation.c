/* test_propagation.c: unit tests of the propagation metrics (analysis/propagation.c) and of the chain's run
 * and fork accessors, on hand-built chains and sightings with known answers. */
#include "chain.h"
#include "cunit-main.h"
#define JSON_FIXTURE_SECTION "propagation"
#include "json-fixture.h"
#include "chain-fixture.h"
#include "propagation.h"

#include <math.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

static const AnChainParams ETH = {
    .block_reward = 2.0, .uncle_base = 8, .nephew_divisor = 32, .max_height = 0};

#define NA INT64_MIN /* "no time" in the ms helpers below */
#define MS INT64_C(1000000)
#define S INT64_C(1000000000)


/* A sighting in nanoseconds (OBS_TIME_NONE for none). */
static void see_ns(AnProp *p, uint64_t block, uint32_t vantage, int64_t block_msg_ns, int64_t announce_ns) {
  ObsSighting s = {
      .block = block, .vantage = vantage, .block_msg_ns = block_msg_ns, .announce_ns = announce_ns};
  g_autoptr(GError) err = NULL;
  gboolean ok = an_prop_add(p, &s, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_prop_add: %s\n", err ? err->message : "?");
}

/* A sighting in milliseconds (NA for none). */
static void see(AnProp *p, uint64_t block, uint32_t vantage, int64_t block_msg_ms, int64_t announce_ms) {
  see_ns(p, block, vantage, block_msg_ms == NA ? OBS_TIME_NONE : block_msg_ms * MS,
         announce_ms == NA ? OBS_TIME_NONE : announce_ms * MS);
}

static void prop_finalize_ok(AnProp *p, const AnChain *c) {
  g_autoptr(GError) err = NULL;
  gboolean ok = an_prop_finalize(p, c, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_prop_finalize: %s\n", err ? err->message : "?");
}

/* The keys of an object, comma-separated, in order. */
static char *keys_of(json_t *o) {
  GString *s = g_string_new(NULL);
  for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it))
    g_string_append_printf(s, "%s%s", s->len ? "," : "", json_object_iter_key(it));
  return g_string_free(s, FALSE);
}

static void expect_str(const char *got, const char *want) {
  CU_ASSERT_STRING_EQUAL(got, want);
  if (strcmp(got, want) != 0) fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
}

/* The propagation fixture. Miners m0 (pool Gamma), m1 (Alpha), m2 (Beta); pools in order Alpha, Beta, Gamma.
 * Main chain 1 (m0) - 2 (m0) - 3 (m1) - 4 (m0, references 5) - 7 (m0, above the window of 4);
 * 6 (m1, height 2 off 1) unreferenced; 5 (m1, height 3 off 2) an uncle; 8 (m2, height 4 off 3) unseen. */
static AnChain *fixture_chain(void) {
  const AnMiner miners[3] = {{0.5, 2}, {0.3, 0}, {0.2, 1}};
  const char *names[3] = {"Alpha", "Beta", "Gamma"};
  AnChain *c = an_chain_new(miners, 3, names, 3);
  add_ok(c, mk(1, 0, 1, 0, 10 * S, 1));
  add_ok(c, mk(2, 1, 2, 0, 20 * S, 1));
  add_ok(c, mk(6, 1, 2, 1, 21 * S, 1));
  add_ok(c, mk(3, 2, 3, 1, 35 * S, 1));
  add_ok(c, mk(5, 2, 3, 1, 36 * S, 1));
  add_ref(c, mk(4, 3, 4, 0, 50 * S, 1), 5);
  add_ok(c, mk(7, 4, 5, 0, 65 * S, 1));
  add_ok(c, mk(8, 3, 4, 2, 51 * S, 1));
  AnChainParams p = ETH;
  p.max_height = 4;
  finalize_ok(c, &p);
  return c;
}

/* Observation times (ms) per block, V0 V1 V2 (first observer in brackets):
 *  1: [1000]  1005 (announce; block 1010)  1030            delays 0 5 30
 *  2: 2040    [2000]  2000 (announce; block 2010)          delays 40 0 0   (tie: V1 first, V2's 0 stays)
 *  3: [3100]  3120 (merged from 3150/3200 and 3120/3130)  3100   delays 0 20 0
 *  4: 4000    4010    -                                    not seen by all
 *  5: 3300 (announce only)  3310  [3290]                   delays 10 20 0
 *  6: [2100]  2160 (announce only)  2130                   delays 0 60 30
 *  7: seen by all, above the window: ignored. */
static AnProp *fixture_prop(const AnChain *c) {
  const char *v[3] = {"V0", "V1", "V2"};
  AnProp *p = an_prop_new(v, 3);
  see(p, 7, 0, 5000, NA);
  see(p, 7, 1, 5001, NA);
  see(p, 7, 2, 5002, NA);
  see(p, 1, 0, 1000, NA);
  see(p, 1, 1, 1010, 1005);
  see(p, 1, 2, 1030, NA);
  see(p, 2, 0, 2040, NA);
  see(p, 2, 1, 2000, NA);
  see(p, 2, 2, 2010, 2000);
  see(p, 3, 0, 3100, 3100);
  see(p, 3, 1, 3150, 3200);
  see(p, 3, 1, 3120, NA);
  see(p, 3, 1, NA, 3130);
  see(p, 3, 2, 3100, NA);
  see(p, 4, 0, 4000, NA);
  see(p, 4, 1, 4010, NA);
  see(p, 5, 0, NA, 3300);
  see(p, 5, 1, 3310, NA);
  see(p, 5, 2, 3290, NA);
  see(p, 6, 0, 2100, NA);
  see(p, 6, 1, NA, 2160);
  see(p, 6, 2, 2130, NA);
  prop_finalize_ok(p, c);
  return p;
}

static json_t *fixture_json(void) {
  g_autoptr(AnChain) c = fixture_chain();
  g_autoptr(AnProp) p = fixture_prop(c);
  json_t *j = json_object();
  an_prop_add_json(p, j);
  return j;
}

static void test_delays(void) {
  g_autoptr(json_t) j = fixture_json();
  CU_ASSERT_EQUAL(json_integer_value(jget(j, "blocks_seen_by_all")), 5);
  /* Without the first observer's zero: 0 0 5 10 20 20 30 30 40 60. Type 7: p90 at 8.1 = 40 + 0.1 * 20. */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/median"), 20.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/mean"), 21.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/p90"), 42.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/p95"), 51.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/p99"), 58.2, 1e-9);
  /* With it: seven zeros, 5 10 20 20 30 30 40 60. */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/median"), 5.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/mean"), 215.0 / 15.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/p90"), 36.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/p95"), 46.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/p99"), 57.2, 1e-9);
  /* Per vantage, zeros included: V0 0 0 0 10 40; V1 0 5 20 20 60; V2 0 0 0 30 30. */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V0/median"), 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V0/mean"), 10.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V0/p90"), 28.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V1/median"), 20.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V1/mean"), 21.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V1/p90"), 44.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V2/median"), 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V2/mean"), 12.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V2/p90"), 30.0, 1e-9);
  /* By type, first observer excluded: main (1 2 3) 0 0 5 20 30 40; uncle (5) 10 20; unreferenced (6) 30 60.
   */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/main/median"), 12.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/main/p90"), 35.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/uncle/median"), 15.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/uncle/p90"), 19.0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/unreferenced/median"), 45.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms_by_type/unreferenced/p90"), 57.0, 1e-9);
}

static void test_first_seen(void) {
  g_autoptr(json_t) j = fixture_json();
  /* V0 first on 1, 3 (tie with V2), 6; V1 on 2 (tie with V2); V2 on 5. */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V0"), 0.6, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V1"), 0.2, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V2"), 0.2, 1e-15);
  /* Gamma (m0): 1 V0, 2 V1. Alpha (m1): 3 V0, 5 V2, 6 V0. Beta has no block seen by all. */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Gamma/V0"), 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Gamma/V1"), 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Gamma/V2"), 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Alpha/V0"), 2.0 / 3.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Alpha/V1"), 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share_by_pool/Alpha/V2"), 1.0 / 3.0, 1e-15);
  CU_ASSERT_PTR_NULL(jget(j, "first_seen_share_by_pool/Beta"));
  g_autofree char *pools = keys_of(jget(j, "first_seen_share_by_pool"));
  expect_str(pools, "Alpha,Gamma"); /* pool order, not the order blocks came in */
  /* Block message no later than the announcement, over each vantage's window blocks (1-6 seen):
   * V0 all but 5 (5/6); V1 all but 1 and 6 (4/6); V2 all but 2 (4/5). */
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V0"), 5.0 / 6.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V1"), 4.0 / 6.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V2"), 0.8, 1e-15);
}

static void test_json_key_order(void) {
  g_autoptr(json_t) j = json_object();
  json_object_set_new(j, "chain", json_object());
  {
    g_autoptr(AnChain) c = fixture_chain();
    g_autoptr(AnProp) p = fixture_prop(c);
    an_prop_add_json(p, j);
  }
  g_autofree char *top = keys_of(j);
  expect_str(top, "chain,propagation");
  g_autofree char *keys = keys_of(json_object_get(j, "propagation"));
  expect_str(keys,
             "vantage_delay_ms,vantage_delay_incl_first_ms,vantage_delay_by_vantage_ms,blocks_seen_by_all,"
             "first_seen_share,first_seen_share_by_pool,seen_by_block_msg_first_share,"
             "vantage_delay_ms_by_type");
  g_autofree char *stats = keys_of(jget(j, "vantage_delay_ms"));
  expect_str(stats, "median,mean,p90,p95,p99");
  g_autofree char *stats_incl = keys_of(jget(j, "vantage_delay_incl_first_ms"));
  expect_str(stats_incl, "median,mean,p90,p95,p99");
  g_autofree char *vantages = keys_of(jget(j, "vantage_delay_by_vantage_ms"));
  expect_str(vantages, "V0,V1,V2");
  g_autofree char *vstats = keys_of(jget(j, "vantage_delay_by_vantage_ms/V1"));
  expect_str(vstats, "median,mean,p90");
  g_autofree char *first = keys_of(jget(j, "first_seen_share"));
  expect_str(first, "V0,V1,V2");
  g_autofree char *types = keys_of(jget(j, "vantage_delay_ms_by_type"));
  expect_str(types, "main,uncle,unreferenced");
  g_autofree char *tstats = keys_of(jget(j, "vantage_delay_ms_by_type/uncle"));
  expect_str(tstats, "median,p90");
}

/* Blocks 1 (seen by both) and 2 (by V0 only) on a two-block chain. */
static void test_not_seen_by_all_excluded(void) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(c, mk(1, 0, 1, 0, 1 * S, 1));
  add_ok(c, mk(2, 1, 2, 0, 2 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[2] = {"V0", "V1"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);
  see(p, 1, 0, 100, NA);
  see(p, 1, 1, 130, NA);
  see(p, 2, 0, 200, NA);
  see(p, 2, 1, NA, NA); /* a sighting with no time is no observation */
  prop_finalize_ok(p, c);
  g_autoptr(json_t) j = json_object();
  an_prop_add_json(p, j);
  CU_ASSERT_EQUAL(json_integer_value(jget(j, "blocks_seen_by_all")), 1);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/mean"), 30.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/p99"), 30.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_incl_first_ms/mean"), 15.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V0"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V0"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V1"), 1.0, 0); /* 1 of 1, not 1 of 2 */
  CU_ASSERT_PTR_NULL(jget(j, "vantage_delay_ms_by_type/uncle"));
  CU_ASSERT_PTR_NOT_NULL(jget(j, "vantage_delay_ms_by_type/main"));
}

/* Repeated sightings merge field by field keeping the earliest, whatever their order. */
static void test_dedupe(void) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(c, mk(1, 0, 1, 0, 1 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[2] = {"V0", "V1"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);
  see(p, 1, 0, NA, 450);
  see(p, 1, 0, 300, 700);
  see(p, 1, 0, 500, NA); /* merged: block 300, announce 450 */
  see(p, 1, 1, 420, 360);
  see(p, 1, 1, 380, 900); /* merged: block 380, announce 360 */
  see(p, 1, 1, 390, NA);
  prop_finalize_ok(p, c);
  g_autoptr(json_t) j = json_object();
  an_prop_add_json(p, j);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/median"), 60.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V0"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V0"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "seen_by_block_msg_first_share/V1"), 0.0, 0);
  CU_ASSERT_EQUAL(json_integer_value(jget(j, "blocks_seen_by_all")), 1);
}

/* The observation time is min(block message, announcement): here the announcement decides who is first. */
static void test_min_rule(void) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(c, mk(1, 0, 1, 0, 1 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[2] = {"V0", "V1"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);
  see(p, 1, 0, 100, 150); /* 100 */
  see(p, 1, 1, 200, 70);  /* 70: first, although its block message is the later one */
  prop_finalize_ok(p, c);
  g_autoptr(json_t) j = json_object();
  an_prop_add_json(p, j);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V1"), 1.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "first_seen_share/V0"), 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_ms/mean"), 30.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V0/mean"), 30.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(jnum(j, "vantage_delay_by_vantage_ms/V1/mean"), 0.0, 0);
}

/* Empty sample sets leave their keys out; no NaN reaches the JSON. */
static void test_empty_sets(void) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(c, mk(1, 0, 1, 0, 1 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[2] = {"V0", "V1"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);
  see(p, 1, 1, NA, 70); /* V0 never sees it */
  prop_finalize_ok(p, c);
  g_autoptr(json_t) j = json_object();
  an_prop_add_json(p, j);
  g_autofree char *s = json_dumps(json_object_get(j, "propagation"), JSON_COMPACT);
  expect_str(s, "{\"blocks_seen_by_all\":0,\"seen_by_block_msg_first_share\":{\"V1\":0.0}}");

  /* One vantage: every delay is the first observer's zero, so only the "including" statistics exist. */
  const char *one[1] = {"Solo"};
  g_autoptr(AnProp) q = an_prop_new(one, 1);
  see(q, 1, 0, 10, NA);
  prop_finalize_ok(q, c);
  g_autoptr(json_t) k = json_object();
  an_prop_add_json(q, k);
  CU_ASSERT_PTR_NULL(jget(k, "vantage_delay_ms"));
  CU_ASSERT_PTR_NULL(jget(k, "vantage_delay_ms_by_type"));
  CU_ASSERT_DOUBLE_EQUAL(jnum(k, "vantage_delay_incl_first_ms/p99"), 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(jnum(k, "first_seen_share/Solo"), 1.0, 0);
  g_autofree char *ks = json_dumps(k, JSON_COMPACT);
  CU_ASSERT_PTR_NULL(strstr(ks, "nan"));
}

static void test_errors(void) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(c, mk(1, 0, 1, 0, 1 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[2] = {"V0", "V1"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);

  ObsSighting bad = {.block = 1, .vantage = 2, .block_msg_ns = 0, .announce_ns = OBS_TIME_NONE};
  g_autoptr(GError) e1 = NULL;
  CU_ASSERT_FALSE(an_prop_add(p, &bad, &e1));
  CU_ASSERT_TRUE(g_error_matches(e1, AN_PROP_ERROR, AN_PROP_ERROR_INVALID_SIGHTING));
  if (e1)
    expect_str(e1->message, "sighting of block 0x0000000000000001: vantage 2 out of range (2 vantages)");
  ObsSighting genesis = {.block = OBS_GENESIS_ID, .vantage = 1, .block_msg_ns = 0, .announce_ns = 0};
  g_autoptr(GError) e2 = NULL;
  CU_ASSERT_FALSE(an_prop_add(p, &genesis, &e2));
  if (e2) expect_str(e2->message, "sighting of the genesis block by vantage V1");

  see(p, 1, 0, 10, NA);
  see(p, 0x99, 1, 20, NA);
  see(p, 0x98, 0, 5, NA);
  see(p, 0x99, 0, 1, NA);
  g_autoptr(GError) e3 = NULL;
  CU_ASSERT_FALSE(an_prop_finalize(p, c, &e3));
  CU_ASSERT_TRUE(g_error_matches(e3, AN_PROP_ERROR, AN_PROP_ERROR_UNKNOWN_BLOCK));
  if (e3) expect_str(e3->message, "sighting of unknown block 0x0000000000000099 by vantage V1");
  CU_ASSERT_STRING_EQUAL(g_quark_to_string(AN_PROP_ERROR), "an-prop-error-quark");
}

static char *observations_of(const AnProp *p, const AnChain *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(an_prop_write_observations_csv(p, c, f));
  fclose(f);
  return buf;
}

/* Main 1 (A) - 2 (B) - 3 (A, references 4); 4 (no miner, off 1); 5 (B, off 2) unreferenced. Vantages "EU"
 * and "US, east" (a name that needs quoting). Times rounded to the millisecond, halves away from zero. */
static void test_observations_csv(void) {
  const AnMiner miners[2] = {{0.6, 0}, {0.4, 1}};
  g_autoptr(AnChain) c = an_chain_new(miners, 2, (const char *[]){"A", "B"}, 2);
  ObsBlock b = mk(1, 0, 1, 0, 12 * S, 100.5);
  b.n_tx = 5, b.size_bytes = 1000;
  add_ok(c, b);
  b = mk(2, 1, 2, 1, 25000400000, 100);
  b.size_bytes = 2000;
  add_ok(c, b);
  add_ok(c, mk(4, 1, 2, OBS_MINER_NONE, 26 * S, 99));
  b = mk(3, 2, 3, 0, 37500000000, 100);
  b.n_tx = 7, b.size_bytes = 3000;
  add_ref(c, b, 4);
  add_ok(c, mk(5, 2, 3, 1, 38 * S, 1));
  finalize_ok(c, &ETH);

  const char *v[2] = {"EU", "US, east"};
  g_autoptr(AnProp) p = an_prop_new(v, 2);
  see_ns(p, 1, 0, 12100000000, OBS_TIME_NONE);
  see_ns(p, 1, 1, 12300000000, 12299499999);
  see_ns(p, 2, 0, 25100000000, OBS_TIME_NONE);
  see_ns(p, 2, 1, OBS_TIME_NONE, 25100000000);
  see_ns(p, 4, 1, 26000500000, OBS_TIME_NONE);
  see_ns(p, 3, 0, 37600000000, OBS_TIME_NONE);
  see_ns(p, 3, 1, 37550000000, OBS_TIME_NONE);
  see_ns(p, 5, 0, OBS_TIME_NONE, 38200000000);
  see_ns(p, 5, 1, OBS_TIME_NONE, OBS_TIME_NONE);
  prop_finalize_ok(p, c);
  g_autofree char *csv = observations_of(p, c);
  expect_str(csv, "BlockHash,Number,BlockType,EUTimeStamp,\"US, eastTimeStamp\",FirstObservation,EUDiff,"
                  "\"US, eastDiff\",MiningPool,NumTransactions,SameMinerSeqLen,PositionInsideSeq,Difficulty,"
                  "BlockSize,InterblockTime,InterblockTimePerPool\n"
                  "0x0000000000000001,1,Main,12.100,12.299,EU,0.000,0.199,A,5,1,1,100.5,1000,,\n"
                  "0x0000000000000002,2,Main,25.100,25.100,EU,0.000,0.000,B,0,1,1,100,2000,13.000,\n"
                  "0x0000000000000004,2,Recognized,,26.001,\"US, east\",,0.000,,0,,,99,0,,\n"
                  "0x0000000000000003,3,Main,37.600,37.550,\"US, east\",0.050,0.000,A,7,1,1,100,3000,12.500,"
                  "25.500\n"
                  "0x0000000000000005,3,Uncle,38.200,,EU,0.000,,B,0,,,1,0,,\n");
}

/* The fixture's table: rows for window blocks seen by someone (not 7: outside; not 8: unseen), runs of m0
 * over heights 1-2 and 4 (7 is outside the window). */
static void test_observations_csv_fixture(void) {
  g_autoptr(AnChain) c = fixture_chain();
  g_autoptr(AnProp) p = fixture_prop(c);
  g_autofree char *csv = observations_of(p, c);
  expect_str(csv, "BlockHash,Number,BlockType,V0TimeStamp,V1TimeStamp,V2TimeStamp,FirstObservation,V0Diff,"
                  "V1Diff,V2Diff,MiningPool,NumTransactions,SameMinerSeqLen,PositionInsideSeq,Difficulty,"
                  "BlockSize,InterblockTime,InterblockTimePerPool\n"
                  "0x0000000000000001,1,Main,1.000,1.005,1.030,V0,0.000,0.005,0.030,Gamma,0,2,1,1,0,,\n"
                  "0x0000000000000002,2,Main,2.040,2.000,2.000,V1,0.040,0.000,0.000,Gamma,0,2,2,1,0,10.000,"
                  "10.000\n"
                  "0x0000000000000006,2,Uncle,2.100,2.160,2.130,V0,0.000,0.060,0.030,Alpha,0,,,1,0,,\n"
                  "0x0000000000000003,3,Main,3.100,3.120,3.100,V0,0.000,0.020,0.000,Alpha,0,1,1,1,0,15.000,\n"
                  "0x0000000000000005,3,Recognized,3.300,3.310,3.290,V2,0.010,0.020,0.000,Alpha,0,,,1,0,,\n"
                  "0x0000000000000004,4,Main,4.000,4.010,,V0,0.000,0.010,,Gamma,0,1,1,1,0,15.000,30.000\n");
}

static void test_block_run(void) {
  g_autoptr(AnChain) c = fixture_chain();
  uint32_t len = 0, pos = 0;
  CU_ASSERT_TRUE(an_chain_block_run(c, 1, &len, &pos));
  CU_ASSERT_EQUAL(len, 2);
  CU_ASSERT_EQUAL(pos, 1);
  CU_ASSERT_TRUE(an_chain_block_run(c, 2, &len, &pos));
  CU_ASSERT_EQUAL(len, 2);
  CU_ASSERT_EQUAL(pos, 2);
  CU_ASSERT_TRUE(an_chain_block_run(c, 3, &len, &pos));
  CU_ASSERT_EQUAL(len, 1);
  CU_ASSERT_EQUAL(pos, 1);
  CU_ASSERT_TRUE(an_chain_block_run(c, 4, &len, NULL));
  CU_ASSERT_EQUAL(len, 1); /* not 2: block 7 (same miner) is outside the window */
  len = pos = 77;
  CU_ASSERT_FALSE(an_chain_block_run(c, 5, &len, &pos)); /* uncle */
  CU_ASSERT_FALSE(an_chain_block_run(c, 7, &len, &pos)); /* main, above the window */
  CU_ASSERT_FALSE(an_chain_block_run(c, 99, &len, &pos));
  CU_ASSERT_FALSE(an_chain_block_run(c, OBS_GENESIS_ID, &len, &pos));
  CU_ASSERT_EQUAL(len, 77);
  CU_ASSERT_EQUAL(pos, 77);

  /* Miners 0, none, 0, 0, 1, 1, 1: the unknown miner breaks the run and has none. */
  const uint32_t N = OBS_MINER_NONE, seq[7] = {0, N, 0, 0, 1, 1, 1};
  g_autoptr(AnChain) d = an_chain_new((AnMiner[]){{0.5, 0}, {0.5, 0}}, 2, (const char *[]){"P"}, 1);
  for (guint i = 0; i < 7; i++)
    add_ok(d, mk(i + 1, i, i + 1, seq[i], (int64_t)i * S, 1));
  finalize_ok(d, &ETH);
  const uint32_t want_len[7] = {1, 0, 2, 2, 3, 3, 3}, want_pos[7] = {1, 0, 1, 2, 1, 2, 3};
  for (guint i = 0; i < 7; i++) {
    len = pos = 0;
    CU_ASSERT_EQUAL(an_chain_block_run(d, i + 1, &len, &pos), want_len[i] > 0);
    CU_ASSERT_EQUAL(len, want_len[i]);
    CU_ASSERT_EQUAL(pos, want_pos[i]);
  }
}

/* Main chain 1..7 (difficulty 10 each). Side branches (difficulty 1):
 *  A: 10 (h2 off 1) with children 11 and 12 (h3)    length 2
 *  B: 20 (h3 off 2), referenced by 4 as an uncle     length 1
 *  C: 30 (h1 off the genesis block)                  length 1
 *  D: 40 (h4 off 3) - 41 (h5) - 42 (h6)              length 3, 2 in a window of 5
 *  E: 50 (h6 off 5)                                  length 1, outside a window of 5
 *  F: 60 (h5 off 4) - 61 (h6)                        length 2, 1 in a window of 5 */
static AnChain *fork_chain(uint32_t max_height) {
  g_autoptr(AnChain) c = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  for (uint32_t h = 1; h <= 7; h++) {
    if (h == 4)
      add_ref(c, mk(h, h - 1, h, 0, h * S, 10), 20);
    else
      add_ok(c, mk(h, h - 1, h, 0, h * S, 10));
    if (h == 1) add_ok(c, mk(30, 0, 1, 0, S, 1));
    if (h == 2) add_ok(c, mk(10, 1, 2, 0, 2 * S, 1));
    if (h == 3) {
      add_ok(c, mk(11, 10, 3, 0, 3 * S, 1));
      add_ok(c, mk(12, 10, 3, 0, 3 * S, 1));
      add_ok(c, mk(20, 2, 3, 0, 3 * S, 1));
    }
  }
  add_ok(c, mk(40, 3, 4, 0, 4 * S, 1));
  add_ok(c, mk(41, 40, 5, 0, 5 * S, 1));
  add_ok(c, mk(42, 41, 6, 0, 6 * S, 1));
  add_ok(c, mk(50, 5, 6, 0, 6 * S, 1));
  add_ok(c, mk(60, 4, 5, 0, 5 * S, 1));
  add_ok(c, mk(61, 60, 6, 0, 6 * S, 1));
  AnChainParams p = ETH;
  p.max_height = max_height;
  finalize_ok(c, &p);
  return g_steal_pointer(&c);
}

static void test_forks(void) {
  g_autoptr(AnChain) all = fork_chain(0);
  CU_ASSERT_EQUAL(an_chain_fork_count(all, 0), 0);
  CU_ASSERT_EQUAL(an_chain_fork_count(all, 1), 3); /* B, C, E */
  CU_ASSERT_EQUAL(an_chain_fork_count(all, 2), 2); /* A, F */
  CU_ASSERT_EQUAL(an_chain_fork_count(all, 3), 1); /* D */
  CU_ASSERT_EQUAL(an_chain_fork_count(all, 4), 0);
  CU_ASSERT_EQUAL(an_chain_fork_max(all), 3);

  g_autoptr(AnChain) win = fork_chain(5);
  CU_ASSERT_EQUAL(an_chain_fork_count(win, 1), 3); /* B, C, F */
  CU_ASSERT_EQUAL(an_chain_fork_count(win, 2), 2); /* A, D */
  CU_ASSERT_EQUAL(an_chain_fork_count(win, 3), 0);
  CU_ASSERT_EQUAL(an_chain_fork_max(win), 2);
  g_autoptr(json_t) j = json_object();
  an_chain_add_json(win, j);
  g_autofree char *forks = json_dumps(json_object_get(j, "forks"), JSON_COMPACT);
  expect_str(forks, "{\"count\":5,\"max_length\":2,\"histogram\":[[1,3],[2,2]]}");

  /* A chain without side blocks. */
  g_autoptr(AnChain) line = an_chain_new((AnMiner[]){{1.0, 0}}, 1, (const char *[]){"P"}, 1);
  add_ok(line, mk(1, 0, 1, 0, S, 1));
  finalize_ok(line, &ETH);
  CU_ASSERT_EQUAL(an_chain_fork_max(line), 0);
  g_autoptr(json_t) k = json_object();
  an_chain_add_json(line, k);
  g_autofree char *none = json_dumps(json_object_get(k, "forks"), JSON_COMPACT);
  expect_str(none, "{\"count\":0,\"max_length\":0,\"histogram\":[]}");
}

static void test_chain_accessors(void) {
  g_autoptr(AnChain) c = fixture_chain();
  CU_ASSERT_EQUAL(an_chain_n_blocks(c), 8);
  CU_ASSERT_EQUAL(an_chain_block_at(c, 2)->id, 6); /* insertion order */
  CU_ASSERT_EQUAL(an_chain_block(c, 5)->mined_ns, 36 * S);
  CU_ASSERT_PTR_NULL(an_chain_block(c, 99));
  CU_ASSERT_PTR_NULL(an_chain_block(c, OBS_GENESIS_ID));
  CU_ASSERT_TRUE(an_chain_block_in_window(c, 8));
  CU_ASSERT_FALSE(an_chain_block_in_window(c, 7));
  CU_ASSERT_FALSE(an_chain_block_in_window(c, 99));
  CU_ASSERT_EQUAL(an_chain_main_block(c, 3)->id, 3);
  CU_ASSERT_EQUAL(an_chain_main_block(c, 5)->id, 7); /* the main chain reaches past the window */
  CU_ASSERT_PTR_NULL(an_chain_main_block(c, 0));
  CU_ASSERT_PTR_NULL(an_chain_main_block(c, 6));
  CU_ASSERT_EQUAL(an_chain_miner_group(c, 0), 2);
  CU_ASSERT_EQUAL(an_chain_miner_group(c, OBS_MINER_NONE), G_MAXUINT);
  CU_ASSERT_STRING_EQUAL(an_chain_group_name(c, 2), "Gamma");
}

int register_suites(void) {
  ADD_SUITE("propagation", TEST(test_delays), TEST(test_first_seen), TEST(test_json_key_order),
            TEST(test_not_seen_by_all_excluded), TEST(test_dedupe), TEST(test_min_rule),
            TEST(test_empty_sets), TEST(test_errors), TEST(test_observations_csv),
            TEST(test_observations_csv_fixture));
  ADD_SUITE("chain-structure", TEST(test_block_run), TEST(test_forks), TEST(test_chain_accessors));
  return 0;
}
