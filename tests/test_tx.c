/* test_tx.c: the transaction world: Geth's template order (gas price, nonces, gas limit), what a pool's
 * mempool holds (arrival, its chain, censorship), template reuse, settlement; and, end to end, the
 * censorship wait and the empty blocks below and above block capacity on two-pool toys where the answers
 * are analytic. */
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "run.h"
#include "scenario.h"
#include "tx.h"
#include "side-thread.h"
#include "tx-private.h" /* txw_link_send: one connection of the per-peer broadcast, exact values below */

#define S(x) ((SimTime)((x) * 1e9))

/* A hand-built chain for the world to read. */
typedef struct {
  ObsBlock blocks[64];
  guint n;
} Chain;

static const ObsBlock *chain_lookup(gconstpointer user, uint64_t id) {
  const Chain *c = user;
  for (guint i = 0; i < c->n; i++)
    if (c->blocks[i].id == id) return &c->blocks[i];
  return NULL;
}

static ObsBlock *chain_add(Chain *c, uint64_t id, const ObsBlock *parent, guint miner, double t_s, uint64_t txset) {
  ObsBlock *b = &c->blocks[c->n++];
  memset(b, 0, sizeof *b);
  b->id = id;
  b->parent = parent->id;
  b->height = parent->height + 1;
  b->miner = miner;
  b->mined_ns = S(t_s);
  b->txset = txset;
  return b;
}

typedef struct {
  TxConfig cfg;
  TxWorld *w;
  Chain chain;
  guint miner_pool[2];
  double share[2];
} Fixture;

/* Two pools (one miner each); pool 1 censors when `censor`. No sessions in the test's time span; accounts start
 * at nonce 0. */
static void fixture_init(Fixture *f, double gas_limit, gboolean censor) {
  memset(f, 0, sizeof *f);
  const char *json = censor ? "{\"rate_per_s\": 1e-9, \"mc_gas_median\": 21000, \"cc_gas_median\": 21000, \"senders\": 10, \"first_nonce_median\": 0, \"censor\": {\"pools\": [\"B\"], \"sender_share\": 0.5}}"
                            : "{\"rate_per_s\": 1e-9, \"mc_gas_median\": 21000, \"cc_gas_median\": 21000, \"senders\": 10, \"first_nonce_median\": 0}";
  json_t *o = json_loads(json, 0, NULL);
  static const char *const names[] = {"A", "B"};
  SimDiag *d = sim_diag_new("test");
  CU_ASSERT_FATAL(tx_config_parse(&f->cfg, o, "$.transactions", names, 2, gas_limit, d));
  sim_diag_free(d);
  json_decref(o);
  f->miner_pool[0] = 0;
  f->miner_pool[1] = 1;
  f->share[0] = f->share[1] = 0.5;
  TxNetView view = {.n_pools = 2};
  ObsBlock *g = &f->chain.blocks[f->chain.n++];
  memset(g, 0, sizeof *g);
  g->id = OBS_GENESIS_ID;
  f->w = tx_world_new(&f->cfg, &view, gas_limit, 500, f->share, f->miner_pool, 2, 7, chain_lookup, &f->chain, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f->w);
}

static void fixture_clear(Fixture *f) {
  tx_world_free(f->w);
  tx_config_clear(&f->cfg);
}

/* Builds block `id` of `miner` on `parent` (template built at `built_s`, mined at `mined_s`) and checks
 * its transactions are `want` (n ids) in that order. */
static ObsBlock *build_expect(Fixture *f, uint64_t id, const ObsBlock *parent, guint miner, double built_s,
                              double mined_s, uint64_t txset, const uint64_t *want, guint n) {
  ObsBlock *b = chain_add(&f->chain, id, parent, miner, mined_s, txset);
  tx_world_build(f->w, f->miner_pool[miner], parent, S(built_s), b);
  tx_world_on_mined(f->w, b);
  GArray *got = tx_world_block_txs(f->w, id);
  CU_ASSERT_PTR_NOT_NULL_FATAL(got);
  CU_ASSERT_EQUAL(got->len, n);
  for (guint i = 0; i < MIN(got->len, n); i++) CU_ASSERT_EQUAL(g_array_index(got, uint64_t, i), want[i]);
  CU_ASSERT_EQUAL(b->n_tx, n);
  g_array_unref(got);
  return b;
}

/* Gas price first, each sender in nonce order: A's expensive second transaction waits for its cheap first
 * one, and then runs at once (Geth's price-and-nonce heap). Nonces count per sender. */
static void test_price_and_nonce_order(void) {
  Fixture f;
  fixture_init(&f, 8e6, FALSE);
  uint64_t a0 = tx_world_inject(f.w, 0, 1, 21000, 21000, FALSE, 0, 0);
  uint64_t a1 = tx_world_inject(f.w, 0, 100, 21000, 21000, FALSE, 0, 0);
  uint64_t b0 = tx_world_inject(f.w, 1, 50, 21000, 21000, FALSE, 0, 0);
  uint64_t c0 = tx_world_inject(f.w, 2, 10, 21000, 21000, FALSE, 0, 0);
  CU_ASSERT_EQUAL(tx_world_nonce(f.w, a0), 0);
  CU_ASSERT_EQUAL(tx_world_nonce(f.w, a1), 1);
  CU_ASSERT_EQUAL(tx_world_nonce(f.w, b0), 0);
  const uint64_t want[] = {b0, c0, a0, a1};
  ObsBlock *b = build_expect(&f, 100, &f.chain.blocks[0], 0, 1, 2, 11, want, 4);
  CU_ASSERT_EQUAL(b->gas_used, 4 * 21000);
  CU_ASSERT_EQUAL(b->size_bytes, 500 + 4 * 100);
  fixture_clear(&f);
}

/* A transaction whose gas limit exceeds the gas left drops its sender for the block (ErrGasLimitReached),
 * cheaper senders still fill in; the block stops when less than 21,000 gas is left. */
static void test_gas_limit(void) {
  Fixture f;
  fixture_init(&f, 100000, FALSE);
  uint64_t x0 = tx_world_inject(f.w, 0, 10, 60000, 60000, FALSE, 0, 0);
  tx_world_inject(f.w, 1, 9, 50000, 30000, FALSE, 0, 0);  /* 50,000 > 40,000 left: sender 1 out */
  tx_world_inject(f.w, 1, 8, 21000, 21000, FALSE, 0, 0);  /* its next nonce too */
  uint64_t z0 = tx_world_inject(f.w, 2, 7, 21000, 21000, FALSE, 0, 0);
  tx_world_inject(f.w, 3, 6, 21000, 21000, FALSE, 0, 0);  /* 19,000 left: the block is closed */
  const uint64_t want[] = {x0, z0};
  ObsBlock *b = build_expect(&f, 100, &f.chain.blocks[0], 0, 1, 2, 11, want, 2);
  CU_ASSERT_EQUAL(b->gas_used, 81000);
  fixture_clear(&f);
}

/* A template holds what reached the pool by its build time and is not in the chain it extends; a fork
 * sibling may include the same transactions; a second block on the same template repeats it; censoring
 * pools skip censored senders. */
static void test_mempool_view(void) {
  Fixture f;
  fixture_init(&f, 8e6, TRUE);
  uint64_t t1 = tx_world_inject(f.w, 0, 5, 21000, 21000, FALSE, 0, S(0.5));
  uint64_t t2 = tx_world_inject(f.w, 1, 4, 21000, 21000, FALSE, 0, S(3));  /* arrives after the template */
  uint64_t t3 = tx_world_inject(f.w, 2, 3, 21000, 21000, TRUE, 0, S(0.5)); /* censored */
  const uint64_t want1[] = {t1, t3};
  ObsBlock *b1 = build_expect(&f, 100, &f.chain.blocks[0], 0, 1, 2, 11, want1, 2);
  /* Pool B on the genesis: censors t3 and does not see t2 yet. */
  const uint64_t want_b[] = {t1};
  build_expect(&f, 200, &f.chain.blocks[0], 1, 1, 2.1, 21, want_b, 1);
  /* Pool A again on the genesis, same template: same transactions even though t2 has arrived by now. */
  build_expect(&f, 101, &f.chain.blocks[0], 0, 1, 4, 11, want1, 2);
  /* On b1 (a new template): only t2 is left. */
  const uint64_t want2[] = {t2};
  build_expect(&f, 102, b1, 0, 5, 6, 12, want2, 1);
  fixture_clear(&f);
}

/* A later nonce never overtakes an earlier one that is missing from the pool (nonce gap): it waits. */
static void test_nonce_gap(void) {
  Fixture f;
  fixture_init(&f, 8e6, FALSE);
  uint64_t n0 = tx_world_inject(f.w, 4, 1, 21000, 21000, FALSE, 0, S(10)); /* late */
  uint64_t n1 = tx_world_inject(f.w, 4, 9, 21000, 21000, FALSE, 0, 0);
  build_expect(&f, 100, &f.chain.blocks[0], 0, 1, 2, 11, NULL, 0);
  const uint64_t want[] = {n0, n1};
  build_expect(&f, 101, &f.chain.blocks[1], 0, 11, 12, 12, want, 2);
  fixture_clear(&f);
}

/* A transaction in many sibling blocks (forks of forks) is never included twice on one chain, whichever
 * sibling the chain goes through. */
static void test_many_inclusions(void) {
  Fixture f;
  fixture_init(&f, 8e6, FALSE);
  uint64_t t = tx_world_inject(f.w, 0, 5, 21000, 21000, FALSE, 0, 0);
  const uint64_t want[] = {t};
  ObsBlock *last = NULL;
  for (guint k = 0; k < 7; k++) last = build_expect(&f, 100 + k, &f.chain.blocks[0], k % 2, 1, 2 + k, 11 + k, want, 1);
  build_expect(&f, 200, last, 0, 10, 11, 30, NULL, 0);
  fixture_clear(&f);
}

/* Blocks SETTLE_DEPTH deep on the heaviest chain take their transactions out of the world. */
static void test_settlement(void) {
  Fixture f;
  fixture_init(&f, 8e6, FALSE);
  tx_world_inject(f.w, 0, 5, 21000, 21000, FALSE, 0, 0);
  tx_world_inject(f.w, 1, 5, 21000, 21000, FALSE, 0, 0);
  CU_ASSERT_EQUAL(tx_world_live(f.w), 2);
  const ObsBlock *parent = &f.chain.blocks[0];
  for (guint h = 1; h <= TX_SETTLE_DEPTH + 1; h++) {
    ObsBlock *b = chain_add(&f.chain, 100 + h, parent, 0, h, 1000 + h);
    tx_world_build(f.w, 0, parent, S(h - 0.5), b);
    tx_world_on_mined(f.w, b);
    tx_world_on_best(f.w, b);
    CU_ASSERT_EQUAL(b->n_tx, h == 1 ? 2 : 0);
    CU_ASSERT_EQUAL(tx_world_live(f.w), h <= TX_SETTLE_DEPTH ? 2 : 0);
    parent = b;
  }
  fixture_clear(&f);
}

/* Two pools, blocks known to both at once, fixed difficulty (mean interval T), blocks never full, templates
 * refreshed every 10 ms. An uncensored transaction goes into the next block: its wait is the residual of a
 * Poisson process, mean T. A censoring pool with share a refuses half the senders: their transactions wait
 * for the first block of the other pool, mean T / (1 - a); the number of censoring blocks they wait through
 * is geometric, P(>= k) = a^k. */
static const char *const toy_json =
    "{\"name\": \"censor-toy\", \"stop\": {\"heights\": 40000, \"settle_heights\": 0},"
    " \"chain\": {\"target_interval_s\": 10, \"empty_window_ms\": 0, \"recommit_s\": 0.01},"
    " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
    " \"transactions\": {\"rate_per_s\": 0.2, \"txs_per_sender\": 1, \"burst_share\": 0, \"senders\": 1000000,"
    "                    \"censor\": {\"pools\": [\"C\"], \"sender_share\": 0.5}},"
    " \"pools\": [{\"name\": \"C\", \"hash_share\": 0.4}, {\"name\": \"H\", \"hash_share\": 0.6}]}";

static double get(json_t *root, const char *path) {
  json_t *v = root;
  g_auto(GStrv) parts = g_strsplit(path, ".", -1);
  for (guint i = 0; parts[i] && v; i++) v = json_object_get(v, parts[i]);
  CU_ASSERT_PTR_NOT_NULL(v);
  return v ? json_number_value(v) : NAN;
}

/* Runs an inline scenario with sim_run into a temp directory (removed after) and returns its summary, with
 * "test_has_censorship_csv" added (whether the run wrote censorship.csv). */
static json_t *run_inline(const char *json, const char *name) {
  SimDiag *d = sim_diag_new(name);
  SimScenario *sc = sim_scenario_load_data(json, strlen(json), name, NULL, d);
  sim_diag_free(d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  g_autofree char *dir = g_dir_make_tmp("sim-tx-test-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  SimRunOptions opt = {.out_dir = out};
  json_t *sum = NULL;
  gboolean ok = sim_run(sc, &opt, &sum, NULL);
  CU_ASSERT(ok);
  if (ok) {
    g_autofree char *csv = g_build_filename(out, "censorship.csv", NULL);
    json_object_set_new(sum, "test_has_censorship_csv", json_boolean(g_file_test(csv, G_FILE_TEST_EXISTS)));
  }
  sim_scenario_free(sc);
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
  CU_ASSERT_EQUAL(system(rm), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sum);
  return sum;
}

static void test_censorship_toy(void) {
  json_t *sum = run_inline(toy_json, "toy.json");
  double unc = get(sum, "tx.censorship.uncensored.wait_s.mean");
  double cen = get(sum, "tx.censorship.censored.wait_s.mean");
  double alpha = get(sum, "tx.censorship.hash_share");
  double p1 = get(sum, "tx.censorship.skipped_ge.1"), p2 = get(sum, "tx.censorship.skipped_ge.2");
  /* ~20,000 waits each, correlated through ~40,000 blocks: the standard error of a mean is about 1.5%. */
  CU_ASSERT_DOUBLE_EQUAL(alpha, 0.4, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(unc, 10.0, 10.0 * 0.06);
  CU_ASSERT_DOUBLE_EQUAL(cen, 10.0 / 0.6, 10.0 / 0.6 * 0.06);
  CU_ASSERT_DOUBLE_EQUAL(p1, 0.4, 0.03);
  CU_ASSERT_DOUBLE_EQUAL(p2, 0.16, 0.03);
  CU_ASSERT_EQUAL(get(sum, "tx.finality_mismatches"), 0);
  /* Nothing waits for capacity: every transaction but the last few is committed. */
  CU_ASSERT(get(sum, "tx.never_committed") < 0.01 * get(sum, "tx.created"));
  CU_ASSERT(json_is_true(json_object_get(sum, "test_has_censorship_csv")));
  json_decref(sum);
}

/* Block withholding: a pool whose infiltrated miners discard half its blocks keeps half its rate; on a
 * network where blocks reach everyone at once its main share is 0.5 * 0.5 / (0.5 * 0.5 + 0.5) = 1/3. */
static const char *const withhold_json =
    "{\"name\": \"withhold\", \"stop\": {\"heights\": 20000, \"settle_heights\": 0},"
    " \"chain\": {\"target_interval_s\": 10},"
    " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
    " \"pools\": [{\"name\": \"V\", \"hash_share\": 0.5, \"strategy\": \"withholding\", \"withhold_share\": 0.5},"
    "            {\"name\": \"O\", \"hash_share\": 0.5}]}";

static void test_withholding(void) {
  json_t *sum = run_inline(withhold_json, "withhold.json");
  json_t *v = json_array_get(json_object_get(sum, "pools"), 0);
  double share = json_number_value(json_object_get(v, "main_share"));
  double blocks = json_number_value(json_object_get(v, "blocks"));
  double discarded = json_number_value(json_object_get(json_array_get(json_object_get(sum, "withholding"), 0), "discarded"));
  /* Binomial over 20,000 heights: sd of the share 0.0033; 5 sigma. */
  CU_ASSERT_DOUBLE_EQUAL(share, 1.0 / 3.0, 0.017);
  /* Each find is discarded with probability 1/2: discarded ~ blocks (sd ~ sqrt(2 * 6,700) = 116). */
  CU_ASSERT_DOUBLE_EQUAL(discarded, blocks, 600);
  json_decref(sum);
}

/* Empty templates: every block reaches everyone at once, so every miner gets new work at each block; a pool
 * whose full template takes w to build mines an empty block when its find comes less than w after the last
 * block, which happens with probability 1 - exp(-w / T) (inter-block times are Exp(T)). Pool E: w = 2 s,
 * T = 10 s: 0.1813; pool F keeps the chain's window, 0: never empty. */
static const char *const empty_json =
    "{\"name\": \"empty\", \"stop\": {\"heights\": 20000, \"settle_heights\": 0},"
    " \"chain\": {\"target_interval_s\": 10, \"empty_window_ms\": 0},"
    " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
    " \"pools\": [{\"name\": \"E\", \"hash_share\": 0.5, \"empty_window_ms\": 2000},"
    "            {\"name\": \"F\", \"hash_share\": 0.5}]}";

static void test_empty_window(void) {
  json_t *sum = run_inline(empty_json, "empty.json");
  json_t *e = json_array_get(json_object_get(sum, "pools"), 0), *f = json_array_get(json_object_get(sum, "pools"), 1);
  double blocks = json_number_value(json_object_get(e, "blocks"));
  double share = json_number_value(json_object_get(e, "empty")) / blocks;
  double want = 1 - exp(-0.2);
  /* Binomial over ~10,000 blocks: sd 0.0039; 5 sigma. */
  CU_ASSERT_DOUBLE_EQUAL(share, want, 5 * sqrt(want * (1 - want) / blocks));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(f, "empty")), 0);
  json_decref(sum);
}

/* Why blocks are empty without an empty template, and why a backlog ends it. Every block reaches everyone at
 * once, templates are refreshed every 10 ms, transfers only (21,000 gas), one per session, arrivals Poisson at
 * rate r. Below capacity every transaction goes into the next block, so a block is empty when nothing arrived
 * since the previous one: probability E[exp(-r X)] = 1 / (1 + r T) over intervals X ~ Exp(T). At r = 0.05/s,
 * T = 10 s: 2/3 of the blocks are empty, with no empty template at all. Above capacity (10 transfers fit, 20
 * arrive per interval), the excess waits, the cheapest beyond the mempool's 200 slots are dropped, and every
 * block is full: 10 transactions each, none empty, the included rate the capacity, 1 per second. */
static const char *const supply_json_fmt =
    "{\"name\": \"supply\", \"stop\": {\"heights\": %d, \"settle_heights\": 0},"
    " \"chain\": {\"target_interval_s\": 10, \"empty_window_ms\": 0, \"recommit_s\": 0.01,"
    "             \"block_gas_limit\": 210000},"
    " \"network\": {\"delay\": {\"model\": \"constant\", \"value_ms\": 0}},"
    " \"transactions\": {\"rate_per_s\": %g, \"txs_per_sender\": 1, \"burst_share\": 0, \"senders\": 1000000,"
    "                    \"share_tx\": 1, \"share_mc\": 0, \"share_cc\": 0, \"mc_gas_median\": 21000,"
    "                    \"cc_gas_median\": 21000, \"mempool_capacity\": 200},"
    " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5}, {\"name\": \"B\", \"hash_share\": 0.5}]}";

static void test_supply_and_capacity(void) {
  g_autofree char *below = g_strdup_printf(supply_json_fmt, 20000, 0.05);
  json_t *sum = run_inline(below, "below.json");
  double blocks = get(sum, "chain.blocks_total"), empty = get(sum, "chain.empty_share");
  double want = 1.0 / (1.0 + 0.05 * 10.0);
  /* Binomial over 20,000 blocks (each block's emptiness depends on its own interval only): sd 0.0033; 5 sigma. */
  CU_ASSERT_DOUBLE_EQUAL(empty, want, 5 * sqrt(want * (1 - want) / blocks));
  CU_ASSERT_EQUAL(get(sum, "tx.evicted"), 0);
  json_decref(sum);

  g_autofree char *above = g_strdup_printf(supply_json_fmt, 2000, 2.0);
  sum = run_inline(above, "above.json");
  double heights = get(sum, "chain.heights"), committed = get(sum, "tx.committed");
  CU_ASSERT_EQUAL(get(sum, "chain.empty_share"), 0);
  /* Full blocks: 10 transactions at every height but the first few, while the backlog builds (20 arrive per
   * interval on average). */
  CU_ASSERT(committed <= 10 * heights);
  CU_ASSERT(committed >= 10 * (heights - 5));
  /* The included rate is the capacity, 10 per 10-s interval, not the 2 per second sent (the mean of 2,000
   * intervals has a relative sd of 2.2%; 5 sigma). */
  CU_ASSERT_DOUBLE_EQUAL(committed / (heights * get(sum, "chain.mean_interval_s")), 1.0, 0.11);
  /* The other half waits and is dropped: the mempool stays full. */
  CU_ASSERT(get(sum, "tx.evicted") > 0.4 * get(sum, "tx.created"));
  CU_ASSERT(get(sum, "tx.mempool_at_end") >= 150); /* a standing backlog: 15 blocks of it */
  json_decref(sum);
}

/* One connection's lists (Geth 1.8.23 eth/peer.go: a queue of lists, one broadcast loop, TCP in order), by
 * hand: send time s = 10 ns, latencies as given. */
static void test_link_fifo_and_lists(void) {
  int64_t l[4] = {INT64_MIN / 4, INT64_MIN / 4, INT64_MIN, INT64_MAX};
  guint64 dropped = 0;
  /* forwarded at 0, latency 100: sent 0..10, arrives 110 */
  CU_ASSERT_EQUAL(txw_link_send(l, 0, 100, 10, 0, TRUE, &dropped), 110);
  /* forwarded at 1 with latency 5: waits for the first send (10..20), and TCP delivers it after the first: 110,
   * not 25 */
  CU_ASSERT_EQUAL(txw_link_send(l, 1, 5, 10, 0, TRUE, &dropped), 110);
  /* promoted at the same instant (forwarded at 1 again): the same list and message, arriving with it; 10 ns
   * more to send */
  CU_ASSERT_EQUAL(txw_link_send(l, 1, 999, 10, 0, TRUE, &dropped), 110);
  CU_ASSERT_EQUAL(l[1], 30); /* the connection is busy until 30 */
  /* forwarded at 500, latency 7: the connection is idle, nothing before it in flight: 517 */
  CU_ASSERT_EQUAL(txw_link_send(l, 500, 7, 10, 0, TRUE, &dropped), 517);
  CU_ASSERT_EQUAL(dropped, 0);
  /* without batches, a second transaction forwarded at 500 is a list of its own: sent 510..520, arrives 527 */
  CU_ASSERT_EQUAL(txw_link_send(l, 500, 7, 10, 0, FALSE, &dropped), 527);
  CU_ASSERT_EQUAL(l[1], 520);
}

static void test_link_queue_drops(void) {
  int64_t l[4] = {INT64_MIN / 4, INT64_MIN / 4, INT64_MIN, INT64_MAX};
  guint64 dropped = 0;
  /* at most 2 lists waiting; lists forwarded at 100, 101, 102, 103 with s = 10 */
  CU_ASSERT_EQUAL(txw_link_send(l, 100, 50, 10, 2, TRUE, &dropped), 160); /* sent 100..110 */
  CU_ASSERT_EQUAL(txw_link_send(l, 101, 50, 10, 2, TRUE, &dropped), 170); /* 0 waiting (backlog 9): sent 110..120 */
  CU_ASSERT_EQUAL(txw_link_send(l, 102, 50, 10, 2, TRUE, &dropped), 180); /* 1 waiting (backlog 18): 120..130 */
  CU_ASSERT_EQUAL(txw_link_send(l, 103, 50, 10, 2, TRUE, &dropped), INT64_MAX); /* 2 waiting (backlog 27): dropped */
  CU_ASSERT_EQUAL(dropped, 1);
  /* promoted with the dropped list: dropped with it (not counted again: one list) */
  CU_ASSERT_EQUAL(txw_link_send(l, 103, 50, 10, 2, TRUE, &dropped), INT64_MAX);
  CU_ASSERT_EQUAL(dropped, 1);
  /* at 111: backlog 19, 1 waiting: sent 130..140, arrives 140 + 1 but after 180 (in order): 180 */
  CU_ASSERT_EQUAL(txw_link_send(l, 111, 1, 10, 2, TRUE, &dropped), 180);
  /* unbounded queue (0): never drops, whatever the backlog */
  int64_t m[4] = {INT64_MIN / 4, INT64_MIN / 4, INT64_MIN, INT64_MAX};
  for (int i = 0; i < 1000; i++) CU_ASSERT_NOT_EQUAL(txw_link_send(m, i, 0, 10, 0, TRUE, &dropped), INT64_MAX);
  CU_ASSERT_EQUAL(m[1], 10000);
  CU_ASSERT_EQUAL(dropped, 1);
}

/* The shortest-path searches' 4-ary heap: each pop is the least key present, with pops interleaved with the
 * pushes (as a search's), against a linear scan of the keys present; reused after emptying. */
static void test_dj_heap(void) {
  TxwHeap h = {0};
  SimRng r;
  sim_rng_init(&r, 7, 1);
  for (int round = 0; round < 3; round++) {
    guint n = round == 0 ? 1 : round == 1 ? 5 : 3000;
    g_autofree uint64_t *present = g_new(uint64_t, n);
    guint np = 0, pops = 0;
    for (guint i = 0; i < n; i++) {
      /* distinct keys, as the searches': a random high part, the index below */
      uint64_t k = (sim_rng_u64(&r) >> 40 << 22) | i;
      txw_heap_push(&h, k);
      present[np++] = k;
      /* pop one in three pushes while pushing, then drain */
      guint want = i == n - 1 ? np : i % 3 == 2 ? 1 : 0;
      for (guint q = 0; q < want; q++) {
        guint m = 0;
        for (guint j = 1; j < np; j++)
          if (present[j] < present[m]) m = j;
        CU_ASSERT_EQUAL(txw_heap_pop(&h), present[m]);
        present[m] = present[--np];
        pops++;
      }
      CU_ASSERT_EQUAL(h.len, np);
    }
    CU_ASSERT_EQUAL(pops, n);
  }
  /* pushes only, then pops: the sorted order exactly */
  uint64_t keys[] = {9, 3, 7, 1, 8, 2, 6, 4, 5, 0, 12, 11, 10};
  for (guint i = 0; i < G_N_ELEMENTS(keys); i++) txw_heap_push(&h, keys[i]);
  for (uint64_t k = 0; k < G_N_ELEMENTS(keys); k++) CU_ASSERT_EQUAL(txw_heap_pop(&h), k);
  CU_ASSERT_EQUAL(h.len, 0);
  g_free(h.a);
}

/* Transactions drawn ahead on another thread (tx_world_side_work) are the ones the engine's thread would
 * have drawn: the same ids, senders, nonces and creation times reach the sink in the same order, and a
 * template built at the end takes the same transactions (their arrivals at the pools are the same). */
static gboolean log_tx_seen(gpointer user, const ObsTx *tx, const int64_t *recv, GError **error) {
  (void)recv;
  (void)error;
  g_string_append_printf(user, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT "\n",
                         tx->id, tx->sender, tx->nonce, tx->created_ns);
  return TRUE;
}

static void test_draw_ahead(void) {
  GString *log[2] = {g_string_new(NULL), g_string_new(NULL)};
  GArray *txs[2];
  for (int ahead = 0; ahead < 2; ahead++) {
    TxConfig cfg = {0}; /* tx_config_parse fills only what it reads; tx_config_clear frees the rest */
    json_t *o = json_loads("{\"rate_per_s\": 20, \"senders\": 50, \"first_nonce_median\": 0}", 0, NULL);
    static const char *const names[] = {"A", "B"};
    SimDiag *d = sim_diag_new("test");
    CU_ASSERT_FATAL(tx_config_parse(&cfg, o, "$.transactions", names, 2, 8e6, d));
    sim_diag_free(d);
    json_decref(o);
    Chain chain = {.n = 1};
    chain.blocks[0].id = OBS_GENESIS_ID;
    guint miner_pool[2] = {0, 1};
    double share[2] = {0.5, 0.5};
    TxNetView view = {.n_pools = 2};
    ObsSink sink = {.user = log[ahead], .tx_seen = log_tx_seen};
    TxWorld *w = tx_world_new(&cfg, &view, 8e6, 500, share, miner_pool, 2, 7, chain_lookup, &chain, &sink, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    SideThread h;
    if (ahead) side_thread_start(&h, tx_world_side_work, w);
    for (int t = 1; t <= 100; t++) {
      if (ahead && t == 50) {
        /* The helper draws ahead while this thread waits: at least 100 transactions (up to 30 s). */
        guint64 drawn = 0;
        for (int ms = 0; ms < 30000 && drawn < 100; ms++) {
          drawn = __atomic_load_n(&w->ring.head, __ATOMIC_ACQUIRE) - w->ring.tail;
          if (drawn < 100) g_usleep(1000);
        }
        CU_ASSERT(drawn >= 100);
      }
      tx_world_advance(w, S(t));
    }
    if (ahead) side_thread_stop(&h);
    ObsBlock *b = chain_add(&chain, 2, &chain.blocks[0], 0, 100, 1);
    tx_world_build(w, 0, &chain.blocks[0], S(100), b);
    tx_world_on_mined(w, b);
    txs[ahead] = tx_world_block_txs(w, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(txs[ahead]);
    tx_world_free(w);
    tx_config_clear(&cfg);
  }
  CU_ASSERT(log[0]->len > 1000 * 10); /* ~2,000 transactions */
  CU_ASSERT_STRING_EQUAL(log[0]->str, log[1]->str);
  CU_ASSERT(txs[0]->len > 10);
  CU_ASSERT_EQUAL(txs[0]->len, txs[1]->len);
  CU_ASSERT(txs[0]->len == txs[1]->len && memcmp(txs[0]->data, txs[1]->data, txs[0]->len * sizeof(uint64_t)) == 0);
  for (int i = 0; i < 2; i++) {
    g_string_free(log[i], TRUE);
    g_array_unref(txs[i]);
  }
}

/* Geth's price-and-nonce order against a direct reference, on mempools where most transactions wait for a
 * predecessor: each sender's transactions run in nonce order from the first one its chain has not included,
 * stop at the first one that has not reached the pool, and leave the block (the sender with them) when one
 * does not fit the gas left; the best price (then the lower id) of the senders' next ones goes first. The
 * world's walk leaves out of its index the transactions whose predecessor is in no block and takes each one
 * in when its predecessor is picked: on a chain of blocks, with a sibling that includes some of them off
 * the chain, with and without the heaviest chain's blocks out of the index. */
typedef struct {
  uint64_t id;
  guint sender, nonce;
  double price;
  guint32 gas_limit, gas_used;
  double arrive_s;
} RefTx;

static guint ref_template(const RefTx *tx, guint n, const uint64_t *in_chain, guint n_chain, double built_s,
                          double gas_limit, uint64_t *out) {
  guint next[10] = {0};
  gboolean dropped[10] = {FALSE};
  for (guint k = 0; k < n_chain; k++)
    for (guint i = 0; i < n; i++)
      if (tx[i].id == in_chain[k]) next[tx[i].sender] = MAX(next[tx[i].sender], tx[i].nonce + 1);
  double gas_left = gas_limit;
  guint m = 0;
  while (gas_left >= 21000) {
    const RefTx *best = NULL;
    for (guint i = 0; i < n; i++) {
      const RefTx *t = &tx[i];
      if (dropped[t->sender] || t->nonce != next[t->sender] || t->arrive_s > built_s) continue;
      if (!best || t->price > best->price || (t->price == best->price && t->id < best->id)) best = t;
    }
    if (!best) break;
    if (best->gas_limit > gas_left) {
      dropped[best->sender] = TRUE;
      continue;
    }
    out[m++] = best->id;
    gas_left -= best->gas_used;
    next[best->sender]++;
  }
  return m;
}

static void test_template_against_reference(void) {
  for (guint variant = 0; variant < 8; variant++) {
    gboolean best_out = variant & 1;
    const double gas_limit = 25 * 21000.0;
    Fixture f;
    fixture_init(&f, gas_limit, FALSE);
    GRand *r = g_rand_new_with_seed(40 + variant);
    RefTx tx[120];
    guint n = 0, nonce[10] = {0};
    while (n < G_N_ELEMENTS(tx)) {
      guint s = (guint)g_rand_int_range(r, 0, 10);
      RefTx *t = &tx[n++];
      t->sender = s;
      t->nonce = nonce[s]++;
      t->price = g_rand_int_range(r, 1, 7); /* ties: the id decides */
      t->gas_used = g_rand_boolean(r) ? 21000 : 50000;
      t->gas_limit = g_rand_int_range(r, 0, 10) == 0 ? 200000 : t->gas_used;
      t->arrive_s = g_rand_int_range(r, 0, 8) == 0 ? g_rand_int_range(r, 1, 6) + 0.5 : 0;
      t->id = tx_world_inject(f.w, s, t->price, t->gas_limit, t->gas_used, FALSE, 0, S(t->arrive_s));
      CU_ASSERT_EQUAL(tx_world_nonce(f.w, t->id), t->nonce);
    }
    uint64_t chain_ids[G_N_ELEMENTS(tx)], want[G_N_ELEMENTS(tx)];
    guint n_chain = 0;
    const ObsBlock *parent = &f.chain.blocks[0];
    for (guint h = 1; h <= 6; h++) {
      if (h == 3) {
        /* A sibling of the next block, off the chain: what it includes stays a candidate. */
        guint m = ref_template(tx, n, chain_ids, n_chain, h - 0.25, gas_limit, want);
        build_expect(&f, 1000 + h, parent, 1, h - 0.25, h - 0.2, 500 + h, want, m);
      }
      guint m = ref_template(tx, n, chain_ids, n_chain, h, gas_limit, want);
      CU_ASSERT(m > 0 || h > 4);
      ObsBlock *b = build_expect(&f, 100 + h, parent, 0, h, h + 0.5, 10 + h, want, m);
      if (best_out) tx_world_on_best(f.w, b);
      for (guint k = 0; k < m; k++)
        chain_ids[n_chain++] = want[k];
      parent = b;
    }
    CU_ASSERT(n_chain > 60); /* most of them went in, through long nonce chains */
    g_rand_free(r);
    fixture_clear(&f);
  }
}

int register_suites(void) {
  ADD_SUITE("tx", TEST(test_price_and_nonce_order), TEST(test_template_against_reference),
            TEST(test_gas_limit), TEST(test_mempool_view), TEST(test_nonce_gap), TEST(test_many_inclusions),
            TEST(test_settlement), TEST(test_censorship_toy), TEST(test_withholding), TEST(test_empty_window),
            TEST(test_supply_and_capacity), TEST(test_link_fifo_and_lists), TEST(test_link_queue_drops),
            TEST(test_dj_heap), TEST(test_draw_ahead));
  return 0;
}
