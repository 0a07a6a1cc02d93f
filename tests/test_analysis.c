/* test_analysis.c: unit tests of the chain metrics (analysis/chain.c) on hand-built chains with known
 * answers. */
#include "chain.h"
#include "cunit-main.h"
#include "chain-fixture.h"
#include "util.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

static const AnChainParams ETH = {
    .block_reward = 2.0, .uncle_base = 8, .nephew_divisor = 32, .max_height = 0};


static int type_of(const AnChain *c, uint64_t id) {
  AnBlockType t;
  return an_chain_block_type(c, id, &t) ? (int)t : -1;
}

/* n miners, each its own group "g0", "g1", ... */
static AnChain *chain_one_per_group(guint n) {
  AnMiner miners[16];
  const char *names[16] = {"g0", "g1", "g2",  "g3",  "g4",  "g5",  "g6",  "g7",
                           "g8", "g9", "g10", "g11", "g12", "g13", "g14", "g15"};
  g_assert(n <= 16);
  for (guint i = 0; i < n; i++)
    miners[i] = (AnMiner){.hash_share = 1.0 / n, .group = i};
  return an_chain_new(miners, n, names, n);
}

static void test_heavier_branch_wins(void) {
  g_autoptr(AnChain) c = chain_one_per_group(2);
  add_ok(c, mk(1, 0, 1, 0, 10, 1.0));
  add_ok(c, mk(2, 1, 2, 0, 20, 1.0)); /* longer branch: TD 3 */
  add_ok(c, mk(3, 2, 3, 0, 30, 1.0));
  add_ok(c, mk(4, 1, 2, 1, 25, 3.0)); /* shorter but heavier: TD 4 */
  finalize_ok(c, &ETH);
  CU_ASSERT_EQUAL(type_of(c, 1), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 4), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 2), AN_BLOCK_UNREFERENCED);
  CU_ASSERT_EQUAL(type_of(c, 3), AN_BLOCK_UNREFERENCED);
  CU_ASSERT_EQUAL(type_of(c, 0), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 99), -1);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->heights, 2);
  CU_ASSERT_EQUAL(s->main, 2);
  CU_ASSERT_EQUAL(s->blocks_total, 4);
  CU_ASSERT_EQUAL(s->forks_unreferenced, 2);
  CU_ASSERT_EQUAL(s->uncles_included, 0);
  CU_ASSERT_DOUBLE_EQUAL(s->stale_share, 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(s->mean_interval_s, 15e-9, 1e-20);
  /* The unreferenced blocks 2 and 3 carry 2 of the 6 units of work. */
  CU_ASSERT_DOUBLE_EQUAL(s->wasted_work_share, 2.0 / 6.0, 1e-15);
}

/* The same blocks under the longest-chain rule: the longer branch wins whatever its difficulty. */
static void test_longest_chain(void) {
  g_autoptr(AnChain) c = chain_one_per_group(2);
  add_ok(c, mk(1, 0, 1, 0, 10, 1.0));
  add_ok(c, mk(2, 1, 2, 0, 20, 1.0));
  add_ok(c, mk(3, 2, 3, 0, 30, 1.0));
  add_ok(c, mk(4, 1, 2, 1, 25, 3.0));
  AnChainParams p = ETH;
  p.longest_chain = TRUE;
  finalize_ok(c, &p);
  CU_ASSERT_EQUAL(type_of(c, 2), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 3), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 4), AN_BLOCK_UNREFERENCED);
  CU_ASSERT_EQUAL(an_chain_summary(c)->heights, 3);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_summary(c)->wasted_work_share, 3.0 / 6.0, 1e-15);
}

static void test_tie_breaks(void) {
  /* Equal TD: the earlier mined wins, whatever the insertion order. */
  g_autoptr(AnChain) c = chain_one_per_group(1);
  add_ok(c, mk(1, 0, 1, 0, 10, 1.0));
  add_ok(c, mk(2, 1, 2, 0, 21, 1.0));
  add_ok(c, mk(3, 1, 2, 0, 20, 1.0));
  finalize_ok(c, &ETH);
  CU_ASSERT_EQUAL(type_of(c, 3), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(c, 2), AN_BLOCK_UNREFERENCED);

  /* Equal TD and time: the smaller id wins. */
  g_autoptr(AnChain) d = chain_one_per_group(1);
  add_ok(d, mk(1, 0, 1, 0, 10, 1.0));
  add_ok(d, mk(9, 1, 2, 0, 20, 1.0));
  add_ok(d, mk(8, 1, 2, 0, 20, 1.0));
  finalize_ok(d, &ETH);
  CU_ASSERT_EQUAL(type_of(d, 8), AN_BLOCK_MAIN);
  CU_ASSERT_EQUAL(type_of(d, 9), AN_BLOCK_UNREFERENCED);
}

/* Main chain 101..112 by g0; uncles at depth d = 1..6 by group g<d>, each referenced by the main block at
 * height 2d; an unreferenced fork at height 7 by g7. */
static void test_types_and_rewards(void) {
  g_autoptr(AnChain) c = chain_one_per_group(8);
  for (uint32_t h = 1; h <= 12; h++) {
    ObsBlock b = mk(100 + h, h == 1 ? 0 : 100 + h - 1, h, 0, h * 1000000000LL, 1.0);
    if (h % 2 == 0) {
      uint32_t d = h / 2, u = h - d;
      add_ok(c, mk(200 + d, u == 1 ? 0 : 100 + u - 1, u, d, 0, 1.0));
      add_ref(c, b, 200 + d);
    } else {
      add_ok(c, b);
    }
  }
  add_ok(c, mk(300, 106, 7, 7, 0, 1.0));
  finalize_ok(c, &ETH);

  for (uint32_t h = 1; h <= 12; h++)
    CU_ASSERT_EQUAL(type_of(c, 100 + h), AN_BLOCK_MAIN);
  for (uint32_t d = 1; d <= 6; d++)
    CU_ASSERT_EQUAL(type_of(c, 200 + d), AN_BLOCK_UNCLE);
  CU_ASSERT_EQUAL(type_of(c, 300), AN_BLOCK_UNREFERENCED);
  CU_ASSERT_STRING_EQUAL(an_block_type_name(AN_BLOCK_MAIN), "main");
  CU_ASSERT_STRING_EQUAL(an_block_type_name(AN_BLOCK_UNCLE), "uncle");
  CU_ASSERT_STRING_EQUAL(an_block_type_name(AN_BLOCK_UNREFERENCED), "unreferenced");

  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->heights, 12);
  CU_ASSERT_EQUAL(s->blocks_total, 19);
  CU_ASSERT_EQUAL(s->uncles_included, 6);
  CU_ASSERT_EQUAL(s->forks_unreferenced, 1);
  CU_ASSERT_DOUBLE_EQUAL(s->uncle_rate, 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(s->stale_share, 7.0 / 19.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(s->mean_interval_s, 1.0, 1e-15);

  /* 12 main blocks at 2 ETH plus 6 nephew bonuses of 2/32; uncles (u + 8 - b) / 8 * 2. */
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->reward_eth, 24.375);
  const double uncle_eth[7] = {0, 1.75, 1.5, 1.25, 1.0, 0.75, 0.5};
  double share_sum = 0;
  for (guint d = 1; d <= 6; d++) {
    CU_ASSERT_EQUAL(an_chain_pool(c, d)->reward_eth, uncle_eth[d]);
    CU_ASSERT_EQUAL(an_chain_pool(c, d)->uncles, 1);
    CU_ASSERT_EQUAL(an_chain_pool(c, d)->main, 0);
  }
  CU_ASSERT_EQUAL(an_chain_pool(c, 7)->reward_eth, 0.0);
  CU_ASSERT_EQUAL(an_chain_pool(c, 7)->unreferenced, 1);
  for (guint g = 0; g < 8; g++)
    share_sum += an_chain_pool(c, g)->reward_share;
  CU_ASSERT_DOUBLE_EQUAL(share_sum, 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->reward_share, 24.375 / 31.125, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->main_share, 1.0, 0);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->blocks, 12);
}

/* Window 4: an uncle at 4 referenced by the main block at 5 (above) counts and is paid; the referencing block
 * and everything above 4 do not count. */
static void test_window(void) {
  g_autoptr(AnChain) c = chain_one_per_group(3);
  for (uint32_t h = 1; h <= 6; h++) {
    ObsBlock b = mk(h, h - 1, h, 0, h * 1000000000LL, 1.0);
    if (h == 4) add_ok(c, mk(40, 3, 4, 1, 0, 1.0));
    if (h == 5) add_ok(c, mk(50, 4, 5, 2, 0, 1.0));
    if (h == 5)
      add_ref(c, b, 40);
    else if (h == 6)
      add_ref(c, b, 50);
    else
      add_ok(c, b);
  }
  AnChainParams p = ETH;
  p.max_height = 4;
  finalize_ok(c, &p);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->heights, 4);
  CU_ASSERT_EQUAL(s->main, 4);
  CU_ASSERT_EQUAL(s->blocks_total, 5);
  CU_ASSERT_EQUAL(s->uncles_included, 1);
  CU_ASSERT_EQUAL(s->forks_unreferenced, 0);
  CU_ASSERT_DOUBLE_EQUAL(s->mean_interval_s, 1.0, 1e-15);
  CU_ASSERT_EQUAL(type_of(c, 40), AN_BLOCK_UNCLE);
  CU_ASSERT_EQUAL(type_of(c, 50), AN_BLOCK_UNCLE);       /* typed, but outside the window */
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->reward_eth, 8.0); /* no nephew bonus: the nephew is outside */
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->main, 4);
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->reward_eth, 1.75);
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->uncles, 1);
  CU_ASSERT_EQUAL(an_chain_pool(c, 2)->reward_eth, 0.0);
  CU_ASSERT_EQUAL(an_chain_pool(c, 2)->blocks, 0);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->reward_share + an_chain_pool(c, 1)->reward_share, 1.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 1)->reward_share, 1.75 / 9.75, 1e-15);
}

/* A linear chain with the given miner per height. */
static void add_linear(AnChain *c, const uint32_t *miners, guint n) {
  guint added = 0;
  for (guint i = 0; i < n; i++) {
    ObsBlock b = mk(i + 1, i, i + 1, miners[i], (int64_t)i * 13000000000LL, 1.0);
    added += an_chain_add_block(c, &b, NULL) ? 1 : 0;
  }
  CU_ASSERT_EQUAL(added, n);
}

static void test_runs(void) {
  /* A A B A A A C C: A and B share group 0. */
  const AnMiner miners[3] = {{0.4, 0}, {0.3, 0}, {0.3, 1}};
  const char *names[2] = {"AB", "C"};
  g_autoptr(AnChain) c = an_chain_new(miners, 3, names, 2);
  const uint32_t seq[8] = {0, 0, 1, 0, 0, 0, 2, 2};
  add_linear(c, seq, 8);
  finalize_ok(c, &ETH);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->runs_max, 3);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 0), 0);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 1), 1);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 2), 2);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 3), 1);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 4), 0);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 1000), 0);
  const uint64_t ge[AN_RUNS_KMAX + 1] = {4, 4, 3, 1};
  for (unsigned k = 1; k <= AN_RUNS_KMAX; k++)
    CU_ASSERT_EQUAL(s->runs_count_ge[k], ge[k]);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->max_run, 3); /* not 6: runs are per miner */
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->max_run, 2);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->main, 6);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->hash_share, 0.7, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->main_share, 0.75, 1e-15);

  g_autoptr(json_t) j = json_object();
  an_chain_add_json(c, j);
  g_autofree char *runs = json_dumps(json_object_get(j, "runs"), JSON_COMPACT);
  /* Miner shares 5/8, 1/8, 2/8 over n = 8: expected_iid_ge[5] = sum of p^5 (1 + 3 (1 - p)). */
  double e5 = an_runs_expected_iid(5.0 / 8, 8, 5) + an_runs_expected_iid(1.0 / 8, 8, 5) +
              an_runs_expected_iid(2.0 / 8, 8, 5);
  CU_ASSERT_DOUBLE_EQUAL(
      json_real_value(json_object_get(json_object_get(json_object_get(j, "runs"), "expected_iid_ge"), "5")),
      e5, 1e-15);
  const char *want_prefix =
      "{\"max\":3,\"count_ge\":{\"5\":0,\"6\":0,\"7\":0,\"8\":0,\"9\":0,\"10\":0,\"11\":0,"
      "\"12\":0,\"13\":0,\"14\":0},\"expected_iid_ge\":{\"5\":";
  CU_ASSERT_EQUAL(strncmp(runs, want_prefix, strlen(want_prefix)), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(runs, "},\"histogram\":[[1,1],[2,2],[3,1]],\"next_same_miner\":{"));
  CU_ASSERT_PTR_NOT_NULL(strstr(runs, "}},\"by_pool\":[{\"name\":\"AB\","));
  /* The security view per pool: AB's miners (0 and 1) made runs 2, 1, 3: >= 1: 3, >= 2: 2, >= 3: 1; C one
   * run of 2. No run of 6: nobody could have reverted a transaction with 6 confirmations. */
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 1), 3);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 2), 2);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 3), 1);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 4), 0);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 2), 1);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 3), 0);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool_runs_expected_iid(c, 0, 5),
                         an_runs_expected_iid(5.0 / 8, 8, 5) + an_runs_expected_iid(1.0 / 8, 8, 5), 1e-15);
  json_t *ab = json_array_get(json_object_get(json_object_get(j, "runs"), "by_pool"), 0);
  json_t *r6 = json_object_get(json_object_get(ab, "revert_possible"), "6");
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(r6, "observed")), 0);
  CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(r6, "iid")),
                         1 - exp(-an_chain_pool_runs_expected_iid(c, 0, 6)), 1e-15);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(ab, "count_ge"), "3")), 1);
}

/* runs.next_same_miner: main blocks A A B A B B with competing blocks at heights 1 and 4 (by B). After the two
 * contested heights the next main block is A's once (h 1 -> 2) and B's once (h 4 -> 5); after the three others
 * (h 2, 3, 5) the same miner follows once (h 5 -> 6). Main shares 1/2 each: 1.0 and 1.5 expected. */
static void test_runs_next_same_miner(void) {
  const AnMiner miners[2] = {{0.5, 0}, {0.5, 1}};
  const char *names[2] = {"A", "B"};
  g_autoptr(AnChain) c = an_chain_new(miners, 2, names, 2);
  const uint32_t seq[6] = {0, 0, 1, 0, 1, 1};
  add_linear(c, seq, 6);
  add_ok(c, mk(10, 0, 1, 1, 1, 1.0));
  add_ok(c, mk(40, 3, 4, 1, 3 * 13000000000LL + 1, 1.0));
  finalize_ok(c, &ETH);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->main, 6);
  CU_ASSERT_EQUAL(s->next_heights[0], 2);
  CU_ASSERT_EQUAL(s->next_same[0], 1);
  CU_ASSERT_DOUBLE_EQUAL(s->next_expected[0], 1.0, 1e-15);
  CU_ASSERT_EQUAL(s->next_heights[1], 3);
  CU_ASSERT_EQUAL(s->next_same[1], 1);
  CU_ASSERT_DOUBLE_EQUAL(s->next_expected[1], 1.5, 1e-15);
  g_autoptr(json_t) j = json_object();
  an_chain_add_json(c, j);
  g_autofree char *next = json_dumps(json_object_get(json_object_get(j, "runs"), "next_same_miner"), JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(next, "{\"after_fork_race\":{\"heights\":2,\"same_miner\":1,\"expected_iid\":1.0,"
                               "\"ratio\":1.0},\"after_no_race\":{\"heights\":3,\"same_miner\":1,"
                               "\"expected_iid\":1.5,\"ratio\":0.66666666666666663}}");
}

/* Per-pool tallies go through each pool's own miners: with the groups interleaved (miners 0 and 2 in pool
 * "X", 1 in "Y"), each pool still gets exactly its miners' runs and i.i.d. expectations. */
static void test_runs_interleaved_groups(void) {
  const AnMiner miners[3] = {{0.3, 1}, {0.4, 0}, {0.3, 1}};
  const char *names[2] = {"Y", "X"};
  g_autoptr(AnChain) c = an_chain_new(miners, 3, names, 2);
  const uint32_t seq[7] = {0, 0, 2, 1, 2, 2, 2}; /* X's miners: runs 2, 1, 3; Y's: one run of 1 */
  add_linear(c, seq, 7);
  finalize_ok(c, &ETH);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 1), 3);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 2), 2);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 3), 1);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 1, 4), 0);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 1), 1);
  CU_ASSERT_EQUAL(an_chain_pool_runs_ge(c, 0, 2), 0);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool_runs_expected_iid(c, 1, 2),
                         an_runs_expected_iid(2.0 / 7, 7, 2) + an_runs_expected_iid(4.0 / 7, 7, 2), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool_runs_expected_iid(c, 0, 2), an_runs_expected_iid(1.0 / 7, 7, 2),
                         1e-15);
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->max_run, 3);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->max_run, 1);
}

static void test_runs_miner_none(void) {
  const uint32_t N = OBS_MINER_NONE;
  g_autoptr(AnChain) c = chain_one_per_group(2);
  const uint32_t seq[9] = {0, 0, N, 0, 0, N, N, 1, N};
  add_linear(c, seq, 9);
  finalize_ok(c, &ETH);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->runs_max, 2);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 1), 1);
  CU_ASSERT_EQUAL(an_chain_runs_of_length(c, 2), 2);
  CU_ASSERT_EQUAL(s->runs_count_ge[1], 3);
  CU_ASSERT_EQUAL(s->runs_count_ge[2], 2);
  CU_ASSERT_EQUAL(s->runs_count_ge[3], 0);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->max_run, 2);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->main, 4);
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->max_run, 1);
  CU_ASSERT_EQUAL(s->main, 9);
  /* Blocks of no miner are paid but belong to no pool. */
  CU_ASSERT_DOUBLE_EQUAL(an_chain_pool(c, 0)->reward_share, 4.0 / 9.0, 1e-15);
}

static void expect_add_error(AnChain *c, ObsBlock b, const char *msg) {
  g_autoptr(GError) err = NULL;
  CU_ASSERT_FALSE(an_chain_add_block(c, &b, &err));
  CU_ASSERT_TRUE(g_error_matches(err, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_BLOCK));
  if (err) {
    CU_ASSERT_STRING_EQUAL(err->message, msg);
    if (strcmp(err->message, msg) != 0) fprintf(stderr, "got: %s\nwant: %s\n", err->message, msg);
  }
}

static void test_add_errors(void) {
  g_autoptr(AnChain) c = chain_one_per_group(2);
  add_ok(c, mk(0xa1, 0, 1, 0, 0, 1.0));
  expect_add_error(c, mk(0xa1, 0, 1, 1, 0, 1.0), "block 0x00000000000000a1: duplicate id");
  expect_add_error(c, mk(0, 0, 1, 1, 0, 1.0), "block 0x0000000000000000: duplicate id");
  expect_add_error(c, mk(0xa3, 0xa2, 2, 0, 0, 1.0),
                   "block 0x00000000000000a3: unknown parent 0x00000000000000a2");
  expect_add_error(c, mk(0xa2, 0xa1, 3, 0, 0, 1.0),
                   "block 0x00000000000000a2: height 3 is not its parent's height 1 + 1");
  expect_add_error(c, mk(0xa2, 0xa1, 2, 2, 0, 1.0),
                   "block 0x00000000000000a2: miner 2 out of range (2 miners)");
  ObsBlock many = mk(0xa2, 0xa1, 2, 0, 0, 1.0);
  many.n_uncles = OBS_MAX_UNCLES + 1;
  expect_add_error(c, many, "block 0x00000000000000a2: 9 uncles (at most 8)");
  CU_ASSERT_STRING_EQUAL(g_quark_to_string(AN_CHAIN_ERROR), "an-chain-error-quark");
  /* Rejected blocks left nothing behind. */
  add_ok(c, mk(0xa2, 0xa1, 2, 0, 0, 1.0));
  finalize_ok(c, &ETH);
  CU_ASSERT_EQUAL(an_chain_summary(c)->blocks_total, 2);
}

/* Main chain 1-2-3 (3 may reference `ref3`), fork 10 at height 1 referenced by `ref2` from block 2. */
static void expect_finalize_error(uint64_t ref2, uint64_t ref3, const char *msg) {
  g_autoptr(AnChain) c = chain_one_per_group(1);
  add_ok(c, mk(1, 0, 1, 0, 0, 1.0));
  add_ok(c, mk(10, 0, 1, 0, 1, 1.0));
  ObsBlock b2 = mk(2, 1, 2, 0, 0, 1.0), b3 = mk(3, 2, 3, 0, 0, 1.0);
  if (ref2) b2.uncles[b2.n_uncles++] = ref2;
  if (ref3) b3.uncles[b3.n_uncles++] = ref3;
  add_ok(c, b2);
  add_ok(c, b3);
  g_autoptr(GError) err = NULL;
  CU_ASSERT_FALSE(an_chain_finalize(c, &ETH, &err));
  CU_ASSERT_TRUE(g_error_matches(err, AN_CHAIN_ERROR, AN_CHAIN_ERROR_INVALID_UNCLE));
  if (err) {
    CU_ASSERT_STRING_EQUAL(err->message, msg);
    if (strcmp(err->message, msg) != 0) fprintf(stderr, "got: %s\nwant: %s\n", err->message, msg);
  }
}

static void test_finalize_errors(void) {
  expect_finalize_error(0, 0x77, "block 0x0000000000000003: unknown uncle 0x0000000000000077");
  expect_finalize_error(0, 1, "block 0x0000000000000003: uncle 0x0000000000000001 is a main-chain block");
  expect_finalize_error(10, 10,
                        "block 0x0000000000000003: uncle 0x000000000000000a is already referenced by block "
                        "0x0000000000000002");

  /* An uncle not below its nephew. */
  g_autoptr(AnChain) c = chain_one_per_group(1);
  add_ok(c, mk(1, 0, 1, 0, 0, 1.0));
  add_ok(c, mk(20, 1, 2, 0, 5, 1.0));
  add_ref(c, mk(2, 1, 2, 0, 0, 1.0), 20);
  g_autoptr(GError) err = NULL;
  CU_ASSERT_FALSE(an_chain_finalize(c, &ETH, &err));
  if (err)
    CU_ASSERT_STRING_EQUAL(
        err->message, "block 0x0000000000000002: uncle 0x0000000000000014 at height 2 is not below height 2");

  /* An unknown reference from a fork block is an error too (every reference must resolve). */
  g_autoptr(AnChain) d = chain_one_per_group(1);
  add_ok(d, mk(1, 0, 1, 0, 0, 2.0));
  add_ref(d, mk(2, 0, 1, 0, 0, 1.0), 0x99);
  g_autoptr(GError) err2 = NULL;
  CU_ASSERT_FALSE(an_chain_finalize(d, &ETH, &err2));
  if (err2)
    CU_ASSERT_STRING_EQUAL(err2->message, "block 0x0000000000000002: unknown uncle 0x0000000000000099");
}

/* Probability-weighted count of maximal runs of length >= k of the marked outcome, by enumerating all 2^n
 * sequences. */
static double brute_expected(double p, unsigned n, unsigned k) {
  double e = 0;
  for (unsigned mask = 0; mask < (1u << n); mask++) {
    double w = 1;
    unsigned runs = 0, len = 0;
    for (unsigned i = 0; i < n; i++) {
      gboolean x = (mask >> i) & 1;
      w *= x ? p : 1 - p;
      if (x) len++;
      if (!x || i == n - 1) {
        if (len >= k && len > 0) runs++;
        len = 0;
      }
    }
    e += w * runs;
  }
  return e;
}

static void test_expected_iid(void) {
  CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(0.5, 1, 1), 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(0.5, 3, 2), 0.375, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(0.5, 4, 2), 0.5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(1.0, 5, 3), 1.0, 1e-15);
  CU_ASSERT_EQUAL(an_runs_expected_iid(0.5, 2, 3), 0.0);
  CU_ASSERT_EQUAL(an_runs_expected_iid(0.0, 10, 1), 0.0);
  for (unsigned n = 1; n <= 10; n++)
    for (unsigned k = 1; k <= n + 1; k++) {
      CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(0.3, n, k), brute_expected(0.3, n, k), 1e-12);
      CU_ASSERT_DOUBLE_EQUAL(an_runs_expected_iid(0.75, n, k), brute_expected(0.75, n, k), 1e-12);
    }
}

/* 200000 i.i.d. winners (shares 0.5, 0.3, 0.2): runs agree with the exact expectation within 5 sd (runs
 * counts are close to Poisson, so sd ~ sqrt(mean)) and the library's counts equal an independent count. */
static void test_runs_statistical(void) {
  enum { N = 200000, M = 3 };
  const double share[M] = {0.5, 0.3, 0.2};
  g_autoptr(AnChain) c = chain_one_per_group(M);
  uint32_t *seq = g_new(uint32_t, N);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 42);
  for (guint i = 0; i < N; i++) {
    double u = gsl_rng_uniform(rng);
    seq[i] = u < 0.5 ? 0 : u < 0.8 ? 1 : 2;
  }
  gsl_rng_free(rng);
  add_linear(c, seq, N);
  finalize_ok(c, &ETH);

  uint64_t ge[M][AN_RUNS_KMAX + 1] = {{0}}, max_run[M] = {0}, mains[M] = {0};
  for (guint i = 0, len = 0; i < N; i++) {
    len++;
    mains[seq[i]]++;
    if (i + 1 == N || seq[i + 1] != seq[i]) {
      for (guint k = 1; k <= MIN(len, (guint)AN_RUNS_KMAX); k++)
        ge[seq[i]][k]++;
      max_run[seq[i]] = MAX(max_run[seq[i]], len);
      len = 0;
    }
  }
  g_free(seq);

  const AnChainSummary *s = an_chain_summary(c);
  for (unsigned k = 1; k <= AN_RUNS_KMAX; k++)
    CU_ASSERT_EQUAL(s->runs_count_ge[k], ge[0][k] + ge[1][k] + ge[2][k]);
  for (guint m = 0; m < M; m++)
    CU_ASSERT_EQUAL(an_chain_pool(c, m)->max_run, max_run[m]);
  for (unsigned k = 2; k <= 8; k++) {
    double e0 = an_runs_expected_iid(share[0], N, k), e_all = 0;
    for (guint m = 0; m < M; m++)
      e_all += an_runs_expected_iid(share[m], N, k);
    if (g_getenv("TEST_VERBOSE"))
      fprintf(stderr, "k=%u miner0 %" G_GUINT64_FORMAT " vs %.1f, all %" G_GUINT64_FORMAT " vs %.1f\n", k,
              ge[0][k], e0, s->runs_count_ge[k], e_all);
    CU_ASSERT_TRUE(fabs((double)ge[0][k] - e0) <= 5 * sqrt(e0) + 1);
    CU_ASSERT_TRUE(fabs((double)s->runs_count_ge[k] - e_all) <= 5 * sqrt(e_all) + 1);
  }

  /* The JSON expectation uses the observed main shares. */
  g_autoptr(json_t) j = json_object();
  an_chain_add_json(c, j);
  json_t *exp = json_object_get(json_object_get(j, "runs"), "expected_iid_ge");
  for (unsigned k = AN_RUNS_KMIN; k <= AN_RUNS_KMAX; k++) {
    char key[8];
    g_snprintf(key, sizeof key, "%u", k);
    double want = 0;
    for (guint m = 0; m < M; m++)
      want += an_runs_expected_iid((double)mains[m] / N, N, k);
    CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(exp, key)), want, 1e-9 * want);
  }
}

/* The tiny chain of the output tests: 1 <- 2 <- 4 main; 3 (no miner) and 5 uncles of 4. */
static AnChain *tiny_chain(void) {
  const AnMiner miners[2] = {{0.6, 0}, {0.4, 1}};
  const char *names[2] = {"A, Inc.", "B \"x\""};
  AnChain *c = an_chain_new(miners, 2, names, 2);
  ObsBlock b = mk(1, 0, 1, 0, 13500000000LL, 1000);
  b.n_tx = 3, b.gas_used = 63000, b.size_bytes = 1234;
  add_ok(c, b);
  b = mk(2, 1, 2, 1, 27000000000LL, 1000.5);
  b.empty = TRUE;
  add_ok(c, b);
  b = mk(3, 1, 2, OBS_MINER_NONE, 28000000001LL, 999);
  b.n_tx = 1, b.gas_used = 21000;
  add_ok(c, b);
  add_ok(c, mk(5, 1, 2, 1, 29000000000LL, 1));
  b = mk(4, 2, 3, 0, 40000000000LL, 1001);
  b.n_tx = 2, b.gas_used = 42000, b.size_bytes = 4000000000u;
  b.n_uncles = 2, b.uncles[0] = 3, b.uncles[1] = 5;
  add_ok(c, b);
  finalize_ok(c, &ETH);
  return c;
}

/* One-miner forks: pool A mines two blocks at height 2 (same template), pool B two at height 3 (different
 * templates); A's side block is referenced by A's own next main block, B's by nobody. */
static void test_one_miner_forks(void) {
  AnMiner miners[] = {{.hash_share = 0.5, .group = 0}, {.hash_share = 0.5, .group = 1}};
  const char *names[] = {"A", "B"};
  g_autoptr(AnChain) c = an_chain_new(miners, 2, names, 2);
  const int64_t S = INT64_C(1000000000);
  ObsBlock b1 = mk(1, 0, 1, 0, 1 * S, 1);
  ObsBlock b2 = mk(2, 1, 2, 0, 2 * S, 1), b2x = mk(3, 1, 2, 0, 3 * S, 1);
  b2.txset = b2x.txset = 77;
  ObsBlock b3 = mk(4, 2, 3, 1, 4 * S, 1), b3x = mk(5, 2, 3, 1, 5 * S, 1);
  b3.txset = 8;
  b3x.txset = 9;
  add_ok(c, b1);
  add_ok(c, b2);
  add_ok(c, b2x);
  add_ok(c, b3);
  add_ok(c, b3x);
  add_ref(c, mk(6, 4, 4, 0, 6 * S, 1), 3); /* A's next block takes A's own side block */
  finalize_ok(c, &ETH);
  const AnChainSummary *s = an_chain_summary(c);
  CU_ASSERT_EQUAL(s->omf_count, 2);
  CU_ASSERT_EQUAL(s->omf_same_txset, 1);
  CU_ASSERT_EQUAL(s->omf_blocks, 2);
  CU_ASSERT_EQUAL(s->omf_ref_self, 1);
  CU_ASSERT_EQUAL(s->omf_ref_other, 0);
  CU_ASSERT_EQUAL(an_chain_pool(c, 0)->one_miner_forks, 1);
  CU_ASSERT_EQUAL(an_chain_pool(c, 1)->one_miner_forks, 1);
}

static void test_json(void) {
  g_autoptr(AnChain) c = tiny_chain();
  g_autoptr(json_t) j = json_object();
  an_chain_add_json(c, j);
  g_autofree char *keys = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
  CU_ASSERT_EQUAL(strncmp(keys, "{\"chain\":", 9), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(keys, "},\"pools\":[{"));
  CU_ASSERT_PTR_NOT_NULL(strstr(keys, "}],\"runs\":{"));
  /* Uncles 3 and 5 each branch off main block 1: two forks of one block. B's blocks 2 and 5 share height
   * 2: a one-miner fork (templates unknown), its side block referenced by A. */
  const char *forks_suffix = "},\"forks\":{\"count\":2,\"max_length\":1,\"histogram\":[[1,2]]},"
                             "\"one_miner_forks\":{\"count\":1,\"same_txset_share\":0.0,\"side_blocks\":1,"
                             "\"referenced_by_same_pool\":0,\"referenced_by_other_pools\":1,\"unreferenced\":0,"
                             "\"reward_eth\":1.75}}"; /* the uncle at height 2 under height 3: (2 + 8 - 3) / 8 * 2 */
  CU_ASSERT_STRING_EQUAL(keys + strlen(keys) - strlen(forks_suffix), forks_suffix);
  g_autofree char *chain = json_dumps(json_object_get(j, "chain"), JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(chain, "{\"heights\":3,\"blocks_total\":5,\"main\":3,\"uncles_included\":2,"
                                "\"forks_unreferenced\":0,\"uncle_rate\":0.66666666666666663,"
                                "\"stale_share\":0.40000000000000002,\"empty_share\":0.20000000000000001,"
                                "\"mean_interval_s\":13.25,\"wasted_work_share\":0.0}");
  /* Both pools hold at least 10%: all large. */
  g_autofree char *rew = json_dumps(json_object_get(j, "rewards"), JSON_COMPACT);
  /* Rewards 2 + 2 + 2.125 (two nephew bonuses) + 1.75 + 1.75 (uncles) = 9.625 ETH, of which 1.75 went to the
   * unknown miner of block 3: the pools hold 4.125 / 9.625 + 3.75 / 9.625 (summed in double). */
  CU_ASSERT_STRING_EQUAL(rew, "{\"large_pools\":{\"pools\":2,\"hash_share\":1.0,\"main_share\":1.0,"
                              "\"reward_share\":0.81818181818181812,\"reward_per_hash\":0.81818181818181812},"
                              "\"small_pools\":{\"pools\":0,"
                              "\"hash_share\":0.0,\"main_share\":0.0,\"reward_share\":0.0}}");
  g_autofree char *pool = json_dumps(json_array_get(json_object_get(j, "pools"), 1), JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(pool, "{\"name\":\"B \\\"x\\\"\",\"hash_share\":0.40000000000000002,"
                               "\"main_share\":0.33333333333333331,\"blocks\":2,\"main\":1,\"uncles\":1,"
                               "\"unreferenced\":0,\"empty\":1,\"max_run\":1,\"one_miner_forks\":1,"
                               "\"reward_eth\":3.75,\"reward_share\":0.38961038961038963}");
  CU_ASSERT_EQUAL(json_array_size(json_object_get(j, "pools")), 2);
}

static char *csv_of(const AnChain *c, gboolean (*write)(const AnChain *, FILE *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(write(c, f));
  fclose(f);
  return buf;
}

static void test_csv(void) {
  g_autoptr(AnChain) c = tiny_chain();
  g_autofree char *blocks = csv_of(c, an_chain_write_blocks_csv);
  CU_ASSERT_STRING_EQUAL(
      blocks,
      "id,height,parent,miner,pool,mined_s,type,difficulty,n_uncles,uncles,n_tx,gas_used,size_bytes,empty\n"
      "0x0000000000000001,1,0x0000000000000000,0,\"A, Inc.\",13.500000000,main,1000,0,,3,63000,1234,0\n"
      "0x0000000000000002,2,0x0000000000000001,1,\"B \"\"x\"\"\",27.000000000,main,1000.5,0,,0,0,0,1\n"
      "0x0000000000000003,2,0x0000000000000001,,,28.000000001,uncle,999,0,,1,21000,0,0\n"
      "0x0000000000000005,2,0x0000000000000001,1,\"B \"\"x\"\"\",29.000000000,uncle,1,0,,0,0,0,0\n"
      "0x0000000000000004,3,0x0000000000000002,0,\"A, Inc.\",40.000000000,main,1001,2,"
      "0x0000000000000003;0x0000000000000005,2,42000,4000000000,0\n");
  /* A: 2 + 2 + 2 * 2/32 = 4.125; B: 2 + uncle 1.75; the minerless uncle 1.75; total 9.625. */
  g_autofree char *pools = csv_of(c, an_chain_write_pools_csv);
  CU_ASSERT_STRING_EQUAL(
      pools,
      "pool,hash_share,main_share,blocks,main,uncles,unreferenced,empty,max_run,reward_eth,reward_share\n"
      "\"A, Inc.\",0.59999999999999998,0.66666666666666663,2,2,0,0,0,1,4.125,0.42857142857142855\n"
      "\"B \"\"x\"\"\",0.40000000000000002,0.33333333333333331,2,1,1,0,1,1,3.75,0.38961038961038963\n");
  /* Main sequence 0 1 0: three runs of 1; expectations with shares 2/3 and 1/3 over n = 3. */
  g_autofree char *runs = csv_of(c, an_chain_write_runs_csv);
  GString *want = g_string_new("length,count,count_ge,expected_iid_ge\n");
  const double exact[4] = {0, 17.0 / 9.0, 7.0 / 9.0, 1.0 / 3.0};
  for (unsigned k = 1; k <= 3; k++) {
    /* Summed in miner order, as the library does; the sum is the exact fraction up to rounding. */
    double e = an_runs_expected_iid(2.0 / 3.0, 3, k) + an_runs_expected_iid(1.0 / 3.0, 3, k);
    CU_ASSERT_DOUBLE_EQUAL(e, exact[k], 1e-15);
    g_string_append_printf(want, "%u,%d,%d,%.17g\n", k, k == 1 ? 3 : 0, k == 1 ? 3 : 0, e);
  }
  for (int k = 4; k <= AN_RUNS_KMAX; k++)
    g_string_append_printf(want, "%d,0,0,0\n", k);
  CU_ASSERT_STRING_EQUAL(runs, want->str);
  if (strcmp(runs, want->str) != 0) fprintf(stderr, "got:\n%s\nwant:\n%s\n", runs, want->str);
  g_string_free(want, TRUE);
}

/* A single miner: one run as long as the chain; runs.csv goes past AN_RUNS_KMAX. */
static void test_runs_csv_long(void) {
  g_autoptr(AnChain) c = chain_one_per_group(1);
  const uint32_t seq[20] = {0};
  add_linear(c, seq, 20);
  finalize_ok(c, &ETH);
  CU_ASSERT_EQUAL(an_chain_summary(c)->runs_max, 20);
  CU_ASSERT_EQUAL(an_chain_summary(c)->runs_count_ge[AN_RUNS_KMAX], 1);
  g_autofree char *runs = csv_of(c, an_chain_write_runs_csv);
  CU_ASSERT_PTR_NOT_NULL(strstr(runs, "\n19,0,1,1\n20,1,1,1\n"));
  CU_ASSERT_PTR_NULL(strstr(runs, "\n21,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(runs, "\n1,0,1,1\n"));
}

/* Block ids of a thousand miners' first blocks ((miner + 1) << 32 | 0) differ only in their high 32 bits:
 * an_id_hash gives them distinct hash values and spreads them over the low bits a table of 2048 slots uses
 * (GLib 2.74's g_int64_hash gives them all 0). */
static void test_id_hash(void) {
  g_autoptr(GHashTable) values = g_hash_table_new(g_direct_hash, g_direct_equal);
  guint slots[2048] = {0}, max_slot = 0;
  for (guint64 m = 0; m < 1000; m++) {
    guint64 id = (m + 1) << 32;
    guint h = an_id_hash(&id);
    g_hash_table_add(values, GUINT_TO_POINTER(h));
    max_slot = MAX(max_slot, ++slots[h & 2047]);
    guint64 again = id;
    CU_ASSERT_EQUAL(an_id_hash(&again), h);
  }
  CU_ASSERT_EQUAL(g_hash_table_size(values), 1000);
  CU_ASSERT(max_slot <= 6); /* 1000 keys in 2048 slots: a fuller slot than 6 has probability ~1e-4 */
}

int register_suites(void) {
  ADD_SUITE("chain", TEST(test_heavier_branch_wins), TEST(test_longest_chain), TEST(test_tie_breaks), TEST(test_types_and_rewards),
            TEST(test_window), TEST(test_add_errors), TEST(test_finalize_errors));
  ADD_SUITE("runs", TEST(test_runs), TEST(test_runs_next_same_miner), TEST(test_runs_interleaved_groups), TEST(test_runs_miner_none),
            TEST(test_expected_iid), TEST(test_runs_statistical), TEST(test_runs_csv_long));
  ADD_SUITE("outputs", TEST(test_one_miner_forks), TEST(test_json), TEST(test_csv), TEST(test_id_hash));
  return 0;
}
