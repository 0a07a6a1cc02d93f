/* test_chain_model.c: the proof-of-work world: analytic checks of runs and shares, uncle-rule invariants,
 * reproducibility. Statistical tolerances are derived from the sampling error (5 sigma). */
#include <math.h>
#include <string.h>

#include "chain.h"
#include "cunit-main.h"
#include "engine.h"
#include "params.h"
#include "pow.h"
#include "run.h"
#include "scenario.h"

#ifdef SIM_LONG_TESTS
#define N_SEEDS 40
#else
#define N_SEEDS 8
#endif

typedef struct {
  SimScenario *sc;
  SimEngine *engine;
  PowWorld *world;
  AnChain *chain;
} Run;

static SimScenario *load(const char *json, const char *const *sets) {
  SimDiag *diag = sim_diag_new("inline.json");
  SimScenario *sc = sim_scenario_load_data(json, strlen(json), "inline.json", sets, diag);
  if (!sc) {
    char *m = sim_diag_join(diag);
    fprintf(stderr, "%s\n", m);
    g_free(m);
  }
  sim_diag_free(diag);
  return sc;
}

static gboolean run_scenario(Run *r, const char *json, const char *const *sets) {
  memset(r, 0, sizeof *r);
  r->sc = load(json, sets);
  if (!r->sc) return FALSE;
  r->engine = sim_engine_new(r->sc->seed);
  r->world = pow_world_new(&r->sc->pow, r->engine, NULL);
  if (!r->world) return FALSE;
  sim_engine_run(r->engine);
  guint n = 0;
  AnMiner *miners = sim_run_an_miners(r->world, &n);
  const char **names = g_new0(const char *, r->sc->n_pools + 1);
  for (guint i = 0; i < r->sc->n_pools; i++) names[i] = r->sc->pools[i].name;
  r->chain = an_chain_new(miners, n, names, r->sc->n_pools);
  g_free(miners);
  g_free(names);
  AnChainParams ap;
  sim_run_an_params(&r->sc->pow, (uint32_t)r->sc->stop.heights, &ap);
  GError *e = NULL;
  ObsSink sink;
  an_chain_sink_init(&sink, r->chain);
  gboolean ok = pow_world_feed(r->world, &sink, &e) && an_chain_finalize(r->chain, &ap, &e);
  if (!ok) {
    fprintf(stderr, "analysis: %s\n", e->message);
    g_error_free(e);
  }
  return ok;
}

static void run_clear(Run *r) {
  an_chain_free(r->chain);
  pow_world_free(r->world);
  sim_engine_free(r->engine);
  sim_scenario_free(r->sc);
  memset(r, 0, sizeof *r);
}

/* Three pools, blocks known to everyone at once: winners are i.i.d. with the hash shares. */
static const char *const instant_json =
    "{\"name\": \"instant\", \"stop\": {\"heights\": 20000, \"settle_heights\": 0},"
    " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
    " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5}, {\"name\": \"B\", \"hash_share\": 0.3},"
    "            {\"name\": \"C\", \"hash_share\": 0.2}]}";

/* Maximal runs of length >= k per miner, counted from the main chain directly. */
static void count_runs(const Run *r, guint n_miners, uint64_t counts[][16], uint64_t *n_main) {
  /* Main blocks by height, from the world's own blocks and the analysis' block types. */
  GArray *main_miner = g_array_new(FALSE, TRUE, sizeof(guint32));
  uint64_t total = 0;
  for (guint m = 0; m < n_miners; m++) {
    for (uint32_t s = 0;; s++) {
      const ObsBlock *b = pow_world_block(r->world, ((uint64_t)(m + 1) << 32) | s);
      if (!b) break;
      AnBlockType t;
      CU_ASSERT_FATAL(an_chain_block_type(r->chain, b->id, &t));
      if (t != AN_BLOCK_MAIN) continue;
      if (main_miner->len <= b->height) g_array_set_size(main_miner, b->height + 1);
      g_array_index(main_miner, guint32, b->height) = b->miner + 1;
      total++;
    }
  }
  uint32_t len = 0;
  guint32 prev = 0;
  for (guint h = 1; h <= main_miner->len; h++) {
    guint32 cur = h < main_miner->len ? g_array_index(main_miner, guint32, h) : 0;
    if (cur && cur == prev) {
      len++;
      continue;
    }
    if (prev)
      for (uint32_t k = 1; k <= MIN(len, 15u); k++) counts[prev - 1][k]++;
    prev = cur;
    len = 1;
  }
  *n_main = total;
  g_array_unref(main_miner);
}

static void test_instant_runs_match_iid(void) {
  uint64_t counts[3][16] = {{0}};
  uint64_t n_main = 0, uncles = 0, main_by[3] = {0};
  double interval_sum = 0;
  for (int s = 0; s < N_SEEDS; s++) {
    char seed[32];
    g_snprintf(seed, sizeof seed, "seed=%d", 100 + s);
    const char *sets[] = {seed, NULL};
    Run r;
    CU_ASSERT_FATAL(run_scenario(&r, instant_json, sets));
    uint64_t c[3][16] = {{0}}, n = 0;
    count_runs(&r, 3, c, &n);
    for (int m = 0; m < 3; m++)
      for (int k = 0; k < 16; k++) counts[m][k] += c[m][k];
    n_main += n;
    const AnChainSummary *sum = an_chain_summary(r.chain);
    uncles += sum->uncles_included + sum->forks_unreferenced;
    interval_sum += sum->mean_interval_s;
    for (guint g = 0; g < 3; g++) main_by[g] += an_chain_pool(r.chain, g)->main;
    /* The library's per-chain and per-pool counts agree with the independent count. */
    uint64_t ge3 = c[0][3] + c[1][3] + c[2][3];
    CU_ASSERT_EQUAL(sum->runs_count_ge[3], ge3);
    for (guint g = 0; g < 3; g++)
      for (unsigned k = 1; k <= 8; k++) CU_ASSERT_EQUAL(an_chain_pool_runs_ge(r.chain, g, k), c[g][k]);
    run_clear(&r);
  }
  /* No delay, no forks. */
  CU_ASSERT_EQUAL(uncles, 0);
  const double share[3] = {0.5, 0.3, 0.2};
  uint64_t per_seed = n_main / N_SEEDS;
  for (int m = 0; m < 3; m++) {
    /* Main share is binomial. */
    double p = share[m], n = (double)n_main;
    CU_ASSERT(fabs(main_by[m] - p * n) <= 5 * sqrt(n * p * (1 - p)));
    for (unsigned k = 1; k <= 8; k++) {
      double e = N_SEEDS * an_runs_expected_iid(p, per_seed, k);
      if (e < 5) continue;
      double tol = 5 * sqrt(e) + 1;
      if (fabs((double)counts[m][k] - e) > tol)
        fprintf(stderr, "miner %d k=%u: observed %" G_GUINT64_FORMAT ", expected %.1f\n", m, k, counts[m][k], e);
      CU_ASSERT(fabs((double)counts[m][k] - e) <= tol);
    }
  }
  /* Without forks the main chain's mean interval is the target interval (sd of a mean of n exponentials). */
  double mean = interval_sum / N_SEEDS;
  CU_ASSERT(fabs(mean - 13.32) <= 5 * 13.32 / sqrt((double)n_main));
}

/* A network with delays: forks happen, and every uncle reference obeys the Ethereum rules. */
static const char *const delayed_json =
    "{\"name\": \"delayed\", \"seed\": 3, \"stop\": {\"heights\": 3000},"
    " \"network\": {\"delay\": {\"model\": \"lognormal\", \"median_ms\": 1500, \"sigma\": 1.0}},"
    " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.4}, {\"name\": \"B\", \"hash_share\": 0.35},"
    "            {\"name\": \"C\", \"hash_share\": 0.25}]}";

static const ObsBlock *ancestor_at(const PowWorld *w, const ObsBlock *b, uint32_t height) {
  while (b && b->height > height) b = pow_world_block(w, b->parent);
  return b;
}

typedef struct {
  uint64_t refs, self_refs;
} RuleStats;

static RuleStats check_uncle_invariants(const Run *r, guint n_miners, gboolean forbid_self) {
  RuleStats st = {0};
  GHashTable *referenced = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  for (guint m = 0; m < n_miners; m++) {
    for (uint32_t s = 0;; s++) {
      const ObsBlock *b = pow_world_block(r->world, ((uint64_t)(m + 1) << 32) | s);
      if (!b) break;
      CU_ASSERT(b->n_uncles <= 2);
      for (uint32_t i = 0; i < b->n_uncles; i++) {
        const ObsBlock *u = pow_world_block(r->world, b->uncles[i]);
        CU_ASSERT_FATAL(u != NULL);
        uint32_t depth = b->height - u->height;
        CU_ASSERT(depth >= 1 && depth <= 6);
        const ObsBlock *same_height = ancestor_at(r->world, b, u->height);
        const ObsBlock *parent_height = ancestor_at(r->world, b, u->height - 1);
        CU_ASSERT(same_height->id != u->id);     /* not an ancestor */
        CU_ASSERT(parent_height->id == u->parent); /* its parent is an ancestor */
        for (uint32_t j = 0; j < i; j++) CU_ASSERT(b->uncles[j] != u->id);
        st.refs++;
        if (same_height->miner == u->miner) st.self_refs++;
        if (forbid_self) CU_ASSERT(same_height->miner != u->miner);
        /* Within one chain an uncle is referenced once: check along main blocks only. */
        AnBlockType t;
        an_chain_block_type(r->chain, b->id, &t);
        if (t == AN_BLOCK_MAIN) {
          CU_ASSERT(!g_hash_table_contains(referenced, &u->id));
          g_hash_table_add(referenced, g_memdup2(&u->id, sizeof u->id));
        }
      }
    }
  }
  g_hash_table_unref(referenced);
  return st;
}

static void test_uncle_rules(void) {
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r, delayed_json, NULL));
  const AnChainSummary *s = an_chain_summary(r.chain);
  CU_ASSERT(s->uncles_included > 50); /* about 10% forks at 1.5 s median delay */
  RuleStats eth = check_uncle_invariants(&r, 3, FALSE);
  /* A miner always extends its own newest block, so it never has two blocks at one height: without
   * one-miner forks there is nothing for no-self-uncle to forbid. */
  CU_ASSERT(eth.refs > 50);
  CU_ASSERT_EQUAL(eth.self_refs, 0);
  run_clear(&r);

  const char *no_self[] = {"uncles.model=no-self-uncle", NULL};
  CU_ASSERT_FATAL(run_scenario(&r, delayed_json, no_self));
  RuleStats ns = check_uncle_invariants(&r, 3, TRUE);
  CU_ASSERT(ns.refs > 0);
  CU_ASSERT_EQUAL(ns.self_refs, 0);
  run_clear(&r);

  const char *none[] = {"uncles={\"model\": \"none\"}", NULL};
  CU_ASSERT_FATAL(run_scenario(&r, delayed_json, none));
  s = an_chain_summary(r.chain);
  CU_ASSERT_EQUAL(s->uncles_included, 0);
  CU_ASSERT(s->forks_unreferenced > 50);
  CU_ASSERT_EQUAL(s->blocks_total, s->main + s->forks_unreferenced);
  /* Without uncles all rewards go to main blocks: 2 ETH each. */
  double total = 0;
  for (guint g = 0; g < an_chain_n_pools(r.chain); g++) total += an_chain_pool(r.chain, g)->reward_eth;
  CU_ASSERT_DOUBLE_EQUAL(total, 2.0 * (double)s->main, 1e-9);
  run_clear(&r);
}

/* Slower propagation means more forks (a physical argument, no fitted number). */
static void test_delay_raises_stale_share(void) {
  double stale[3];
  const char *medians[] = {"network.delay.median_ms=100", "network.delay.median_ms=1000",
                           "network.delay.median_ms=4000"};
  for (int i = 0; i < 3; i++) {
    const char *sets[] = {medians[i], NULL};
    Run r;
    CU_ASSERT_FATAL(run_scenario(&r, delayed_json, sets));
    stale[i] = an_chain_summary(r.chain)->stale_share;
    run_clear(&r);
  }
  CU_ASSERT(stale[0] < stale[1]);
  CU_ASSERT(stale[1] < stale[2]);
  /* A block is at risk for about the mean delay: stale share is below 1 - exp(-mean/T) (T = 13.32 s). */
  double mean_4000 = 4.0 * exp(0.5);
  CU_ASSERT(stale[2] < 1 - exp(-mean_4000 / 13.32));
  CU_ASSERT(stale[0] < 0.02);
}

/* The rules themselves, on the case the no-self-uncle proposal is about. */
static void test_rule_predicates(void) {
  SimUncleParams p = {.max_uncles = 2, .generations = 7, .uncle_base = 8, .nephew_divisor = 32};
  CU_ASSERT_TRUE(sim_uncle_ethereum.allowed(&p, 3, 3));
  CU_ASSERT_TRUE(sim_uncle_ethereum.allowed(&p, 3, 4));
  CU_ASSERT_FALSE(sim_uncle_no_self.allowed(&p, 3, 3));
  CU_ASSERT_TRUE(sim_uncle_no_self.allowed(&p, 3, 4));
  CU_ASSERT_FALSE(sim_uncle_none.allowed(&p, 3, 4));
}

/* Byzantium difficulty (EIP-100) on every block of a run: from the parent's difficulty, whether the parent
 * has uncles, and the two header timestamps; the first block gets the initial difficulty. */
static void test_byzantium_difficulty(void) {
  const char *sets[] = {"chain.difficulty=byzantium", "chain.initial_difficulty=1e12", "chain.hashrate_hps=8e10",
                        NULL};
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r, delayed_json, sets));
  guint checked = 0, slower = 0, faster = 0;
  for (guint m = 0; m < 3; m++)
    for (uint32_t s = 0;; s++) {
      const ObsBlock *b = pow_world_block(r.world, ((uint64_t)(m + 1) << 32) | s);
      if (!b) break;
      const ObsBlock *p = pow_world_block(r.world, b->parent);
      if (p->height == 0) {
        CU_ASSERT_DOUBLE_EQUAL(b->difficulty, 1e12, 0);
        continue;
      }
      CU_ASSERT(b->timestamp_s > p->timestamp_s);
      CU_ASSERT(b->timestamp_s == MAX(b->mined_ns / 1000000000, p->timestamp_s + 1));
      int64_t x = (p->n_uncles ? 2 : 1) - (b->timestamp_s - p->timestamp_s) / 9;
      if (x < -99) x = -99;
      double want = p->difficulty + floor(p->difficulty / 2048) * (double)x;
      CU_ASSERT_DOUBLE_EQUAL(b->difficulty, want, 0);
      checked++;
      slower += b->difficulty < p->difficulty;
      faster += b->difficulty > p->difficulty;
    }
  CU_ASSERT(checked > 2000);
  CU_ASSERT(slower > 0 && faster > 0);
  /* 12.5 s per block at the start; the rule steers the main chain to where blocks within 9 s and blocks
   * after 9-18 s balance out (about 13-14 s with these uncle rates): the mean stays within [11, 16] s. */
  double mean = an_chain_summary(r.chain)->mean_interval_s;
  CU_ASSERT(mean > 11 && mean < 16);
  run_clear(&r);
}

/* Pool behaviour on the geo network (scenarios/geo-small.json, 1500 heights): a pool's own miners keep the
 * old parent for a while after its block, so it sometimes mines a second block at the same height; two such
 * blocks on one template carry the same transactions; blocks mined on the empty template carry none. */
static void test_one_miner_forks_and_empty_blocks(void) {
  gchar *json = NULL;
  CU_ASSERT_FATAL(g_file_get_contents("scenarios/geo-small.json", &json, NULL, NULL));
  const char *sets[] = {"stop.heights=1500", NULL};
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r, json, sets));
  g_free(json);
  guint n = pow_world_n_miners(r.world);
  guint pairs = 0, same = 0, empty = 0, total = 0;
  for (guint m = 0; m < n; m++) {
    const ObsBlock *prev = NULL;
    for (uint32_t s = 0;; s++) {
      const ObsBlock *b = pow_world_block(r.world, ((uint64_t)(m + 1) << 32) | s);
      if (!b) break;
      total++;
      CU_ASSERT(b->txset != 0);
      if (b->empty) {
        empty++;
        CU_ASSERT_EQUAL(b->n_tx, 0);
        CU_ASSERT_EQUAL(b->gas_used, 0);
      }
      /* A miner's blocks are in mining order: a one-miner fork is a block at its previous block's height. */
      if (prev && prev->height == b->height && prev->parent == b->parent) {
        pairs++;
        if (prev->txset == b->txset) {
          same++;
          CU_ASSERT_EQUAL(prev->n_tx, b->n_tx);
          CU_ASSERT_EQUAL(prev->empty, b->empty);
        }
      }
      prev = b;
    }
  }
  CU_ASSERT(pairs > 0);
  CU_ASSERT(same > 0 && same < pairs);
  CU_ASSERT(empty > 0 && empty < total / 10);
  CU_ASSERT_EQUAL(an_chain_summary(r.chain)->omf_count >= 1, TRUE);
  run_clear(&r);
}

/* Selfish mining (Eyal-Sirer) by a pool of 40% against many small honest miners, blocks known at once. A
 * selfish pool above 1/3 of the hash power gains more than its share whatever the tie-breaking gamma:
 * Eyal and Sirer's relative revenue at alpha = 0.4 is 0.484 for gamma = 0 and 0.567 for gamma = 1. Honest,
 * the same pool gets its share (binomial, 5 sigma). */
static double selfish_share(const char *strategy) {
  char set[64];
  g_snprintf(set, sizeof set, "pools[0].strategy=%s", strategy);
  const char *sets[] = {set, NULL};
  const char *json = "{\"name\": \"selfish\", \"seed\": 5, \"stop\": {\"heights\": 40000},"
                     " \"uncles\": {\"model\": \"none\"},"
                     " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
                     " \"pools\": [{\"name\": \"S\", \"hash_share\": 0.4},"
                     "            {\"name\": \"H\", \"hash_share\": 0.6, \"miners\": 20}]}";
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r, json, sets));
  double share = an_chain_pool(r.chain, 0)->main_share;
  if (strcmp(strategy, "selfish") == 0) {
    /* It withheld blocks, some of which were overtaken and never published: wasted work. */
    CU_ASSERT(an_chain_summary(r.chain)->forks_unreferenced > 100);
  }
  run_clear(&r);
  return share;
}

static void test_selfish_mining(void) {
  double honest = selfish_share("honest"), selfish = selfish_share("selfish");
  CU_ASSERT(fabs(honest - 0.4) < 5 * sqrt(0.4 * 0.6 / 40000));
  CU_ASSERT(selfish > 0.484 - 5 * sqrt(0.25 / 40000) && selfish < 0.567 + 5 * sqrt(0.25 / 40000));
  if (!(selfish > 0.47 && selfish < 0.58)) fprintf(stderr, "selfish main share %.4f\n", selfish);
}

static uint64_t chain_digest(const Run *r, guint n_miners) {
  uint64_t h = 1469598103934665603ull;
  for (guint m = 0; m < n_miners; m++)
    for (uint32_t s = 0;; s++) {
      const ObsBlock *b = pow_world_block(r->world, ((uint64_t)(m + 1) << 32) | s);
      if (!b) break;
      uint64_t v[4] = {b->id, b->parent, (uint64_t)b->mined_ns, b->n_uncles ? b->uncles[0] : 0};
      for (int i = 0; i < 4; i++) h = (h ^ v[i]) * 1099511628211ull;
    }
  return h;
}

static void test_reproducible(void) {
  Run a, b, c;
  CU_ASSERT_FATAL(run_scenario(&a, delayed_json, NULL));
  CU_ASSERT_FATAL(run_scenario(&b, delayed_json, NULL));
  const char *other[] = {"seed=4", NULL};
  CU_ASSERT_FATAL(run_scenario(&c, delayed_json, other));
  CU_ASSERT_EQUAL(chain_digest(&a, 3), chain_digest(&b, 3));
  CU_ASSERT_NOT_EQUAL(chain_digest(&a, 3), chain_digest(&c, 3));
  CU_ASSERT_EQUAL(pow_world_n_blocks(a.world), pow_world_n_blocks(b.world));
  run_clear(&a);
  run_clear(&b);
  run_clear(&c);
}

/* A pool that stands for several independent miners: its members never form runs together. */
static void test_split_pool(void) {
  const char *json = "{\"name\": \"split\", \"seed\": 9, \"stop\": {\"heights\": 5000},"
                     " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
                     " \"pools\": [{\"name\": \"Big\", \"hash_share\": 0.2},"
                     "            {\"name\": \"Many\", \"hash_share\": 0.8, \"miners\": 20}]}";
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r, json, NULL));
  CU_ASSERT_EQUAL(pow_world_n_miners(r.world), 21);
  const AnPoolResult *many = an_chain_pool(r.chain, 1);
  /* 20 miners of 4% each: a run of 5 by one of them has expectation 20 * 5000 * 0.96 * 0.04^5 = 0.01. */
  CU_ASSERT(many->max_run <= 4);
  CU_ASSERT(many->main > 3500);
  run_clear(&r);
}

/* miner_hash_sd: per-miner hash power max(1 + sd x N(0, 1), 1/400000), normalised to the pool's share
 * (SimBlock's Normal(400 000, 100 000) per node is sd 0.25). The shares sum to the pool's, their spread is
 * the sd (the sample sd of 4000 draws is within 0.25 +- 5 x 0.25 / sqrt(8000)), a pool without it stays
 * equal, and the blocks follow the drawn shares (chi-square at the 0.1% level over 8 miners). */
static void test_miner_hash_sd(void) {
  const char *json =
      "{\"name\": \"spread\", \"seed\": 5, \"stop\": {\"heights\": 1},"
      " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
      " \"pools\": [{\"name\": \"Nodes\", \"hash_share\": 0.6, \"miners\": 4000, \"miner_hash_sd\": 0.25},"
      "            {\"name\": \"Flat\", \"hash_share\": 0.4, \"miners\": 10}]}";
  g_autoptr(SimScenario) sc = load(json, NULL);
  CU_ASSERT_FATAL(sc != NULL);
  g_autoptr(SimEngine) engine = sim_engine_new(sc->seed);
  PowWorld *w = pow_world_new(&sc->pow, engine, NULL);
  CU_ASSERT_FATAL(w != NULL);
  guint n = 0;
  g_autofree AnMiner *a = sim_run_an_miners(w, &n);
  CU_ASSERT_EQUAL_FATAL(n, 4010);
  double sum = 0, sum2 = 0, flat = 0;
  for (guint i = 0; i < 4000; i++) {
    double x = a[i].hash_share / 0.6 * 4000; /* relative to an equal share */
    sum += x;
    sum2 += x * x;
  }
  for (guint i = 4000; i < n; i++) {
    CU_ASSERT_EQUAL(a[i].hash_share, 0.4 / 10);
    flat += a[i].hash_share;
  }
  CU_ASSERT_DOUBLE_EQUAL(sum, 4000, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(flat, 0.4, 1e-12);
  double sd = sqrt(sum2 / 4000 - 1);
  CU_ASSERT(fabs(sd - 0.25) < 5 * 0.25 / sqrt(8000));
  pow_world_free(w);

  /* 8 miners of one pool with a wide spread, 20 000 blocks known to all at once: wins ~ shares. */
  Run r;
  CU_ASSERT_FATAL(run_scenario(
      &r,
      "{\"name\": \"wins\", \"seed\": 3, \"stop\": {\"heights\": 20000, \"settle_heights\": 0},"
      " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
      " \"pools\": [{\"name\": \"P\", \"hash_share\": 1, \"miners\": 8, \"miner_hash_sd\": 0.5}]}",
      NULL));
  guint nm = 0;
  g_autofree AnMiner *m = sim_run_an_miners(r.world, &nm);
  CU_ASSERT_EQUAL_FATAL(nm, 8);
  guint64 wins[8] = {0}, total = 0;
  double lo = 1, hi = 0;
  for (guint i = 0; i < an_chain_n_blocks(r.chain); i++) {
    const ObsBlock *b = an_chain_block_at(r.chain, i);
    AnBlockType type;
    if (b->id == OBS_GENESIS_ID || !an_chain_block_type(r.chain, b->id, &type) || type != AN_BLOCK_MAIN)
      continue;
    wins[b->miner]++;
    total++;
  }
  double chi2 = 0;
  for (guint i = 0; i < 8; i++) {
    double e = m[i].hash_share * (double)total;
    chi2 += ((double)wins[i] - e) * ((double)wins[i] - e) / e;
    lo = MIN(lo, m[i].hash_share);
    hi = MAX(hi, m[i].hash_share);
  }
  CU_ASSERT(total > 19000);
  CU_ASSERT(chi2 < 24.32);  /* chi-square, 7 degrees of freedom, 0.1% */
  CU_ASSERT(hi > 1.5 * lo); /* the spread is there to be detected */
  run_clear(&r);
}

/* A world whose blocks would come faster than 1 ms (a mean that rounds to 0 ns stops the clock) or slower
 * than 1e6 s is refused even when built without the scenario loader, which refuses such values first. */
static void test_interval_bounds(void) {
  const char *json = "{\"stop\": {\"heights\": 10}, \"pools\": [{\"name\": \"A\", \"hash_share\": 1}]}";
  const double bad[] = {1e-12, 9.99e-4, 1.01e6};
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(SimScenario) sc = load(json, NULL);
    CU_ASSERT_FATAL(sc != NULL);
    sc->pow.chain.target_interval_s = bad[i];
    g_autoptr(SimEngine) engine = sim_engine_new(1);
    g_autoptr(GError) e = NULL;
    PowWorld *w = pow_world_new(&sc->pow, engine, &e);
    CU_ASSERT_PTR_NULL(w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    g_autofree char *want = g_strdup_printf("mean block interval %.3g s out of [0.001, 1e+06] s", bad[i]);
    CU_ASSERT_STRING_EQUAL(e->message, want);
    pow_world_free(w);
  }
  /* Byzantium: the first interval is initial_difficulty / hashrate_hps. */
  g_autoptr(SimScenario) sc = load(json, (const char *const[]){"chain.difficulty=byzantium", NULL});
  CU_ASSERT_FATAL(sc != NULL);
  sc->pow.chain.hashrate_hps = 1e30;
  g_autoptr(SimEngine) engine = sim_engine_new(1);
  g_autoptr(GError) e = NULL;
  CU_ASSERT_PTR_NULL(pow_world_new(&sc->pow, engine, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "mean block interval 2.09e-15 s out of [0.001, 1e+06] s");
  /* At the bound the clock moves: 2000 heights at 1 ms take about 2 s of simulated time, not 0. */
  Run r;
  CU_ASSERT_FATAL(run_scenario(&r,
                               "{\"stop\": {\"heights\": 2000}, \"chain\": {\"target_interval_s\": 0.001},"
                               " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
                               " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5},"
                               " {\"name\": \"B\", \"hash_share\": 0.5}]}",
                               NULL));
  double mean = an_chain_summary(r.chain)->mean_interval_s;
  /* 2000 exponential intervals of mean 1 ms: the sample mean is within 5 sigma = 5 x 1 ms / sqrt(2000). */
  CU_ASSERT(fabs(mean - 1e-3) < 5 * 1e-3 / sqrt(2000));
  CU_ASSERT(an_chain_pool(r.chain, 0)->main > 0 && an_chain_pool(r.chain, 1)->main > 0);
  run_clear(&r);
}

int register_suites(void) {
  ADD_SUITE("chain-model", TEST(test_instant_runs_match_iid), TEST(test_uncle_rules),
            TEST(test_rule_predicates), TEST(test_byzantium_difficulty),
            TEST(test_one_miner_forks_and_empty_blocks), TEST(test_selfish_mining),
            TEST(test_delay_raises_stale_share), TEST(test_reproducible), TEST(test_split_pool),
            TEST(test_interval_bounds), TEST(test_miner_hash_sd));
  return 0;
}
