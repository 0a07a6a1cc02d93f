/* test_txmetrics.c: unit tests of the transaction metrics (analysis/txmetrics.c) on hand-built observation
 * streams with known answers, and of the streamed histogram against exact quantiles. */
#include "chain.h"
#include "cunit-main.h"
#define JSON_FIXTURE_SECTION "tx"
#include "json-fixture.h"
#include "chain-fixture.h"
#include "txmetrics.h"
#include "util.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(gsl_rng, gsl_rng_free)

static const AnChainParams ETH = {
    .block_reward = 2.0, .uncle_base = 8, .nephew_divisor = 32, .max_height = 0};

#define NA INT64_MIN /* "no time" in the ms helpers below */
#define MS INT64_C(1000000)
#define S INT64_C(1000000000)
#define EPS 1e-9

/* ---- Helpers ------------------------------------------------------------------------------------------ */

static void tx_full(AnTx *t, uint64_t id, uint64_t sender, uint64_t nonce, int64_t created_ns,
                    gboolean censored) {
  ObsTx r = {.id = id,
             .sender = sender,
             .nonce = nonce,
             .created_ns = created_ns,
             .type = OBS_TX_TX,
             .gas_limit = 21000,
             .gas_price_wei = 2e10,
             .censored = censored};
  g_autoptr(GError) err = NULL;
  gboolean ok = an_tx_add_tx(t, &r, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_tx_add_tx: %s\n", err ? err->message : "?");
}

/* A tx of its own sender (nonce 0), created at 0. */
static void tx(AnTx *t, uint64_t id) {
  tx_full(t, id, 1000 + id, 0, 0, FALSE);
}

static void see(AnTx *t, uint64_t id, uint32_t vantage, int64_t ms) {
  ObsTxSighting s = {.tx = id, .vantage = vantage, .seen_ns = ms * MS};
  g_autoptr(GError) err = NULL;
  gboolean ok = an_tx_add_sighting(t, &s, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_tx_add_sighting: %s\n", err ? err->message : "?");
}

static void incl(AnTx *t, uint64_t id, uint64_t block, uint32_t height) {
  ObsTxInclusion in = {.tx = id, .block = block, .height = height};
  g_autoptr(GError) err = NULL;
  gboolean ok = an_tx_add_inclusion(t, &in, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_tx_add_inclusion: %s\n", err ? err->message : "?");
}

/* Declares a main block; recv_ms[v] in milliseconds (NA for none), NULL for all unknown. */
static void main_block(AnTx *t, uint32_t height, uint64_t block, int64_t mined_ns, const int64_t *recv_ms,
                       guint n) {
  int64_t r[8];
  g_assert(n <= 8);
  for (guint v = 0; v < n; v++)
    r[v] = !recv_ms || recv_ms[v] == NA ? OBS_TIME_NONE : recv_ms[v] * MS;
  g_autoptr(GError) err = NULL;
  gboolean ok = an_tx_add_main_block(t, height, block, mined_ns, r, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_tx_add_main_block: %s\n", err ? err->message : "?");
}

/* A block sighting in milliseconds (NA for none). */
static ObsSighting bsee(uint64_t block, uint32_t vantage, int64_t block_msg_ms, int64_t announce_ms) {
  ObsSighting s = {.block = block,
                   .vantage = vantage,
                   .block_msg_ns = block_msg_ms == NA ? OBS_TIME_NONE : block_msg_ms * MS,
                   .announce_ns = announce_ms == NA ? OBS_TIME_NONE : announce_ms * MS};
  return s;
}

/* Declares the whole main chain of `c` with the reception tables built from `sightings`. */
static void declare_chain(AnTx *t, const AnChain *c, const ObsSighting *sightings, gsize n_sightings,
                          guint n_vantages) {
  int64_t *tables[8] = {NULL};
  uint32_t n_heights = 0;
  g_assert(n_vantages <= 8);
  for (guint v = 0; v < n_vantages; v++)
    tables[v] = an_tx_main_receptions(c, sightings, n_sightings, v, &n_heights);
  g_autoptr(GError) err = NULL;
  gboolean ok = an_tx_add_main_chain(t, c, 0, (const int64_t *const *)tables, n_heights, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "an_tx_add_main_chain: %s\n", err ? err->message : "?");
  for (guint v = 0; v < n_vantages; v++)
    g_free(tables[v]);
}

static json_t *to_json(AnTx *t) {
  an_tx_finalize(t);
  json_t *j = json_object();
  an_tx_add_json(t, j);
  return j;
}

static json_int_t jint(json_t *summary, const char *path) {
  json_t *v = jget(summary, path);
  CU_ASSERT_PTR_NOT_NULL(v);
  CU_ASSERT_TRUE(json_is_integer(v));
  if (!v) fprintf(stderr, "missing key %s\n", path);
  return v ? json_integer_value(v) : -1;
}

/* The keys of an object, comma-separated, in order. */
static char *keys_of(json_t *o) {
  GString *s = g_string_new(NULL);
  for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it))
    g_string_append_printf(s, "%s%s", s->len ? "," : "", json_object_iter_key(it));
  return g_string_free(s, FALSE);
}

static void expect_keys(json_t *o, const char *want) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  g_autofree char *got = keys_of(o);
  CU_ASSERT_STRING_EQUAL(got, want);
  if (strcmp(got, want) != 0) fprintf(stderr, "keys got:  %s\nkeys want: %s\n", got, want);
}

static void expect_num(json_t *j, const char *path, double want) {
  double got = jnum(j, path);
  CU_ASSERT_DOUBLE_EQUAL(got, want, EPS);
  if (!(fabs(got - want) <= EPS)) fprintf(stderr, "%s: got %.17g, want %.17g\n", path, got, want);
}

static const char *const V2[2] = {"A", "B"};
static const char *const V3[3] = {"V0", "V1", "V2"};

/* ---- Commit times ---------------------------------------------------------------------------------------
 */

/* Main chain 1-2-3-4 (one miner), fork block 9 at height 2 (mined after 2, same difficulty).
 * Main-block receptions (ms):   h1      h2     h3     h4
 *   A                            9990*  20000  30000  40500      (* announcement 9990, block message 10000)
 *   B                            11000  21000  31000  41000**    (** announcement only)
 * Fork block 9 seen earlier than anything (must not count).
 * Txs: 1 in block 1, A 8000 (8200 first, then 8000), B 9500  -> k0 A 1.99 B 1.5; k3 A 32.5 B 31.5
 *      2 in blocks 9 and 2, A 15000, B none                  -> k0 A 5; k3 needs h5: none
 *      3 in block 3, seen by none                             -> nothing */
static AnChain *commit_chain(void) {
  const AnMiner miners[1] = {{1.0, 0}};
  const char *pools[1] = {"P"};
  AnChain *c = an_chain_new(miners, 1, pools, 1);
  add_ok(c, mk(1, 0, 1, 0, 9 * S, 1));
  add_ok(c, mk(2, 1, 2, 0, 19 * S, 1));
  add_ok(c, mk(9, 1, 2, 0, 19 * S + 1, 1));
  add_ok(c, mk(3, 2, 3, 0, 29 * S, 1));
  add_ok(c, mk(4, 3, 4, 0, 39 * S, 1));
  finalize_ok(c, &ETH);
  return c;
}

static AnTx *commit_fixture(void) {
  g_autoptr(AnChain) c = commit_chain();
  ObsSighting bs[] = {
      bsee(1, 0, 10000, 9990), bsee(2, 0, 20000, NA), bsee(3, 0, 30000, NA), bsee(4, 0, 40500, NA),
      bsee(1, 1, 11000, NA),   bsee(2, 1, 21000, NA), bsee(3, 1, 31000, NA), bsee(4, 1, NA, 41000),
      bsee(9, 0, 100, 100),    bsee(9, 1, 100, NA),
  };
  AnTx *t = an_tx_new(V2, 2);
  tx(t, 1);
  tx(t, 2);
  tx(t, 3);
  see(t, 1, 0, 8200);
  see(t, 1, 0, 8000);
  see(t, 1, 1, 9500);
  see(t, 1, 0, 8500);
  see(t, 2, 0, 15000);
  incl(t, 1, 1, 1);
  incl(t, 2, 9, 2);
  incl(t, 2, 2, 2);
  incl(t, 3, 3, 3);
  declare_chain(t, c, bs, G_N_ELEMENTS(bs), 2);
  an_tx_finalize(t);
  return t;
}

/* The sink a producer writes to (obs_sink.h) builds the same AnTx as direct calls: the vantage table creates
 * it, the records and the final main block reach it, finish finalizes it; a refused record comes back. */
static void test_sink(void) {
  AnTx *t = NULL;
  ObsSink sink;
  an_tx_sink_init(&sink, &t);
  static const char *const names[] = {"A", "B"};
  sink.vantages(sink.user, names, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  int64_t recv[2] = {10 * MS, 40 * MS};
  ObsTx x = {.id = 1, .sender = 7, .nonce = 0, .created_ns = 0, .type = OBS_TX_TX};
  GError *e = NULL;
  CU_ASSERT_TRUE(sink.tx_seen(sink.user, &x, recv, &e));
  CU_ASSERT_FALSE(sink.tx_seen(sink.user, &x, recv, &e)); /* added twice */
  CU_ASSERT_PTR_NOT_NULL(e);
  g_clear_error(&e);
  ObsTxInclusion in = {.tx = 1, .block = 100, .height = 1};
  CU_ASSERT_TRUE(sink.tx_inclusion(sink.user, &in, &e));
  int64_t brecv[2] = {2 * S, 3 * S};
  CU_ASSERT_TRUE(sink.main_block(sink.user, 1, 100, 1 * S, brecv, &e));
  sink.finish(sink.user);
  json_t *j = json_object();
  an_tx_add_json(t, j);
  CU_ASSERT_EQUAL(jint(j, "unique"), 1);
  CU_ASSERT_EQUAL(jint(j, "committed"), 1);
  json_decref(j);
  an_tx_free(t);
}

static void test_commit_times(void) {
  g_autoptr(AnTx) t = commit_fixture();
  g_autoptr(json_t) j = json_object();
  an_tx_add_json(t, j);
  CU_ASSERT_EQUAL(jint(j, "committed"), 3);
  /* k0: {1.99, 1.5, 5} */
  expect_num(j, "commit_s/k0/median", 1.99);
  expect_num(j, "commit_s/k0/mean", (1.99 + 1.5 + 5) / 3);
  expect_num(j, "commit_s/k0/p90", 1.99 + 0.8 * (5 - 1.99));
  /* k3: {32.5, 31.5} */
  expect_num(j, "commit_s/k3/median", 32.0);
  expect_num(j, "commit_s/k3/mean", 32.0);
  expect_num(j, "commit_s/k3/p90", 31.5 + 0.9 * 1.0);
  CU_ASSERT_PTR_NULL(jget(j, "commit_s/k12"));
  CU_ASSERT_PTR_NULL(jget(j, "commit_s/k36"));
  expect_keys(jget(j, "commit_s"), "k0,k3");
}

static void test_commit_csv(void) {
  g_autoptr(AnTx) t = commit_fixture();
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(an_tx_write_commit_csv(t, f));
  fclose(f);
  g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
  free(buf);
  CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 1 + 4 * 3 + 1); /* header, 4 k x (all, A, B), trailing "" */
  CU_ASSERT_STRING_EQUAL(lines[0], "k,vantage,pairs,median_s,mean_s,p90_s");
  /* k0 at A: {1.99, 5}; at B: {1.5}; k12 has no pairs. */
  g_autofree char *a0 =
      g_strdup_printf("0,A,2,%.17g,%.17g,%.17g", (1.99 + 5) / 2, (1.99 + 5) / 2, 1.99 + 0.9 * (5 - 1.99));
  CU_ASSERT_STRING_EQUAL(lines[2], a0);
  if (strcmp(lines[2], a0) != 0) fprintf(stderr, "got %s\nwant %s\n", lines[2], a0);
  CU_ASSERT_STRING_EQUAL(lines[3], "0,B,1,1.5,1.5,1.5");
  CU_ASSERT_STRING_EQUAL(lines[7], "12,,0,,,");
  CU_ASSERT_STRING_EQUAL(lines[12], "36,B,0,,,");
}

/* ---- Out of order ---------------------------------------------------------------------------------------
 */

/* Sender 7, nonces 0..3 (ids 13..10, so that id order is not nonce order): 0 and 1 at height 1, 2 and 3 at
 * height 2.
 *   A receives nonce 0 at 1 s, 1 at 4 s, 2 at 2 s, 3 at 3 s: 2 and 3 arrived before the lower nonce 1, so
 *     both are out of order (2 of 4; reading it as "1 is late" would give 1 of 4).
 *   B receives 0 at 1 s, 2 at 2 s, 1 at 3 s, never 3: nonce 2 out of order (1 of 3).
 * Sender 8: nonce 0 (id 20) committed, seen by B only (in order); nonce 1 (id 21) seen by B at 0.5 s but
 *   never committed: it does not count.
 * Sender 9: nonce 5 (id 30) at height 1, nonce 4 (id 31) at height 2: 31 breaks nonce order and is left out;
 *   30 is in order at A.
 * A: 2 of 5, B: 1 of 4, all: 3 of 9. */
static void test_out_of_order(void) {
  g_autoptr(AnTx) t = an_tx_new(V2, 2);
  for (uint64_t n = 0; n < 4; n++)
    tx_full(t, 13 - n, 7, n, 0, FALSE); /* nonce n is id 13 - n */
  tx_full(t, 20, 8, 0, 0, FALSE);
  tx_full(t, 21, 8, 1, 0, FALSE);
  tx_full(t, 30, 9, 5, 0, FALSE);
  tx_full(t, 31, 9, 4, 0, FALSE);
  see(t, 13, 0, 1000); /* nonce 0 */
  see(t, 12, 0, 4000); /* nonce 1 */
  see(t, 11, 0, 2000); /* nonce 2 */
  see(t, 10, 0, 3000); /* nonce 3 */
  see(t, 13, 1, 1000);
  see(t, 11, 1, 2000);
  see(t, 12, 1, 3000);
  see(t, 20, 1, 100);
  see(t, 21, 1, 500);
  see(t, 30, 0, 1000);
  see(t, 31, 0, 500);
  incl(t, 12, 101, 1);
  incl(t, 13, 101, 1);
  incl(t, 30, 101, 1);
  incl(t, 20, 101, 1);
  incl(t, 10, 102, 2);
  incl(t, 11, 102, 2);
  incl(t, 31, 102, 2);
  main_block(t, 1, 101, 10 * S, NULL, 2);
  main_block(t, 2, 102, 20 * S, NULL, 2);
  g_autoptr(json_t) j = to_json(t);
  expect_num(j, "out_of_order_share", 3.0 / 9);
  expect_num(j, "out_of_order_share_by_vantage/A", 2.0 / 5);
  expect_num(j, "out_of_order_share_by_vantage/B", 1.0 / 4);
  CU_ASSERT_EQUAL(jint(j, "nonce_order_violations"), 1);
  CU_ASSERT_EQUAL(jint(j, "committed"), 7);
  CU_ASSERT_EQUAL(jint(j, "never_committed"), 1);
}

/* The study's computation as published (text-sorted nonces, millisecond times) beside the intended one
 * (numeric nonces, ns times). One vantage, everything committed at height 1 except nonce 11 of sender 1.
 *   sender 1: nonces 1, 2, 10 at 1000, 2000, 3000 ms; 11 at 500 ms, never committed.
 *             intended: in order. As text 1, 10, 2: nonce 2 (2000) after 10 (3000) -> out of order.
 *   sender 2: nonce 3 at 5000.5 ms, nonce 4 at 5000.1 ms: intended out of order; the same millisecond as
 *             published -> in order (ties are in order).
 *   sender 3: nonces 9, 10 at 100, 200 ms: in order; as text 10 then 9 -> 9 out of order.
 * Committed: intended 1/7 (sender 2's 4), as published 2/7 (sender 1's 2, sender 3's 9).
 * Every received tx: intended 2/8 (also 11 at 500 < 3000); as published 3/8 (text 1, 10, 11, 2: 11 and 2).
 * Arrival: consecutive pairs (1,2) (10,11) (3,4) (9,10), one in the same ms -> 1/4; 8 txs / 3 senders. */
static void test_out_of_order_as_published(void) {
  const char *v[1] = {"V"};
  g_autoptr(AnTx) t = an_tx_new(v, 1);
  const struct {
    uint64_t id, sender, nonce;
    int64_t ns;
    gboolean committed;
  } x[] = {{1, 1, 1, 1000 * MS, TRUE},       {2, 1, 2, 2000 * MS, TRUE},      {3, 1, 10, 3000 * MS, TRUE},
           {8, 1, 11, 500 * MS, FALSE},      {4, 2, 3, 5000 * MS + 500000, TRUE}, {5, 2, 4, 5000 * MS + 100000, TRUE},
           {6, 3, 9, 100 * MS, TRUE},        {7, 3, 10, 200 * MS, TRUE}};
  for (guint i = 0; i < G_N_ELEMENTS(x); i++) {
    tx_full(t, x[i].id, x[i].sender, x[i].nonce, 0, FALSE);
    ObsTxSighting s = {.tx = x[i].id, .vantage = 0, .seen_ns = x[i].ns};
    CU_ASSERT_TRUE(an_tx_add_sighting(t, &s, NULL));
    if (x[i].committed) incl(t, x[i].id, 101, 1);
  }
  main_block(t, 1, 101, 10 * S, NULL, 1);
  g_autoptr(json_t) j = to_json(t);
  expect_num(j, "out_of_order_share", 1.0 / 7);
  expect_num(j, "out_of_order_share_as_published", 2.0 / 7);
  expect_num(j, "out_of_order_share_as_published_by_vantage/V", 2.0 / 7);
  expect_num(j, "out_of_order_seen_share/intended", 2.0 / 8);
  expect_num(j, "out_of_order_seen_share/as_published", 3.0 / 8);
  expect_num(j, "arrival/same_ms_share", 1.0 / 4);
  expect_num(j, "arrival/txs_per_sender_mean", 8.0 / 3);
  expect_num(j, "arrival/one_tx_sender_share", 0);
  expect_num(j, "order_sample_sender_share", 1);
}

/* Text order of nonces and the millisecond floor, at their edges. */
static void test_nonce_text_order(void) {
  const uint64_t sorted[] = {0,  1,  10, 100, 1000000000000000000u, 10000000000000000000u, 11, 1844674407370955161u,
                             18446744073709551615u, 19, 2, 9, 90, 99};
  for (guint i = 0; i < G_N_ELEMENTS(sorted); i++)
    for (guint k = 0; k < G_N_ELEMENTS(sorted); k++) {
      int c = an_tx_nonce_text_cmp(sorted[i], sorted[k]);
      int want = i < k ? -1 : i > k;
      CU_ASSERT_EQUAL(c < 0 ? -1 : c > 0, want);
      /* the same as comparing the decimal strings */
      char a[24], b[24];
      g_snprintf(a, sizeof a, "%" PRIu64, sorted[i]);
      g_snprintf(b, sizeof b, "%" PRIu64, sorted[k]);
      int sc = strcmp(a, b);
      CU_ASSERT_EQUAL(sc < 0 ? -1 : sc > 0, want);
    }
  CU_ASSERT_EQUAL(an_tx_floor_ms(0), 0);
  CU_ASSERT_EQUAL(an_tx_floor_ms(999999), 0);
  CU_ASSERT_EQUAL(an_tx_floor_ms(1000000), 1);
  CU_ASSERT_EQUAL(an_tx_floor_ms(-1), -1);
  CU_ASSERT_EQUAL(an_tx_floor_ms(-1000000), -1);
  CU_ASSERT_EQUAL(an_tx_floor_ms(-1000001), -2);
}

/* Past AN_TX_ORDER_CAP received txs the order figures come from a sample of senders. 150,000 senders with
 * nonces 0 and 1, none committed; every fourth sender's nonce 1 arrives first, so one tx in eight is out of
 * order over all senders (37,500 of 300,000). The 300,000 records halve the sample once (sender share 1/2,
 * about 75,000 senders kept): the estimate's sd is about sqrt(1/4 * 3/4 / 75,000) / 2 = 0.0008; the test
 * allows 5 sd. */
static void test_order_sample(void) {
  const char *v[1] = {"V"};
  g_autoptr(AnTx) t = an_tx_new(v, 1);
  const uint64_t senders = 150000;
  for (uint64_t s = 0; s < senders; s++)
    for (uint64_t n = 0; n < 2; n++) {
      ObsTx r = {.id = 2 * s + n + 1, .sender = s, .nonce = n, .created_ns = 0, .type = OBS_TX_TX,
                 .gas_limit = 21000, .gas_price_wei = 1e9};
      int64_t ns = s % 4 == 0 ? (int64_t)(2 - n) * S : (int64_t)(1 + n) * S;
      CU_ASSERT_TRUE_FATAL(an_tx_add_tx_seen(t, &r, &ns, NULL));
    }
  g_autoptr(json_t) j = to_json(t);
  expect_num(j, "order_sample_sender_share", 0.5);
  double got = jnum(j, "out_of_order_seen_share/intended");
  CU_ASSERT_DOUBLE_EQUAL(got, 1.0 / 8, 0.004);
  expect_num(j, "arrival/txs_per_sender_mean", 2);
  expect_num(j, "arrival/same_ms_share", 0);
}

/* ---- Never committed --------------------------------------------------------------------------------- */

/* Main 1-2, block 5 at height 2 off 1 (mined later: a fork). One vantage.
 *  tx 1: only in fork block 5          -> never committed, unique
 *  tx 2: created, never seen or mined  -> never committed, not unique
 *  tx 3: in 5 and in main block 2      -> committed
 *  tx 4: seen only                     -> never committed, unique
 *  tx 5: in main block 2, told after height 2 was declared -> committed
 *  tx 6: in fork block 5, told after height 2 was declared -> never committed, unique */
static void test_never_committed(void) {
  const AnMiner miners[2] = {{0.5, 0}, {0.5, 0}};
  const char *pools[1] = {"P"};
  g_autoptr(AnChain) c = an_chain_new(miners, 2, pools, 1);
  add_ok(c, mk(1, 0, 1, 0, 10 * S, 1));
  add_ok(c, mk(2, 1, 2, 0, 20 * S, 1));
  add_ok(c, mk(5, 1, 2, 1, 21 * S, 1));
  finalize_ok(c, &ETH);
  const char *v[1] = {"V"};
  g_autoptr(AnTx) t = an_tx_new(v, 1);
  for (uint64_t id = 1; id <= 6; id++)
    tx(t, id);
  incl(t, 1, 5, 2);
  incl(t, 3, 5, 2);
  incl(t, 3, 2, 2);
  see(t, 4, 0, 1000);
  g_autoptr(GError) err = NULL;
  CU_ASSERT_TRUE(an_tx_add_main_chain(t, c, 0, NULL, 0, &err));
  CU_ASSERT_EQUAL(an_tx_n_held(t), 6); /* committed at heights 1..2 are held until height 38 or the end */
  incl(t, 5, 2, 2);
  incl(t, 6, 5, 2);
  g_autoptr(json_t) j = to_json(t);
  CU_ASSERT_EQUAL(an_tx_n_held(t), 0);
  CU_ASSERT_EQUAL(jint(j, "created"), 6);
  CU_ASSERT_EQUAL(jint(j, "unique"), 5);
  CU_ASSERT_EQUAL(jint(j, "committed"), 2);
  CU_ASSERT_EQUAL(jint(j, "never_committed"), 4);
  CU_ASSERT_EQUAL(jint(j, "unmatched_records"), 0);
  CU_ASSERT_PTR_NULL(jget(j, "commit_s")); /* no receptions declared */
}

/* ---- Propagation -----------------------------------------------------------------------------------------
 */

/* Three vantages (ms):   V0   V1   V2
 *   tx 1                 100  140  100    first V0 (tie with V2, lower index): delays 40 (V1), 0 (V2)
 *   tx 2                 50   40   70     first V1: delays 10, 30
 *   tx 3                 10   -    20     not seen by all
 * Delays without the first observer: {0, 10, 30, 40}: median 20, p90 37, p95 38.5 (with it, the median
 * would be 5). Neither tx is committed: propagation counts every tx. */
static void test_propagation(void) {
  g_autoptr(AnTx) t = an_tx_new(V3, 3);
  tx(t, 1);
  tx(t, 2);
  tx(t, 3);
  see(t, 1, 0, 100);
  see(t, 1, 1, 140);
  see(t, 1, 2, 100);
  see(t, 2, 0, 50);
  see(t, 2, 1, 40);
  see(t, 2, 2, 70);
  see(t, 3, 0, 10);
  see(t, 3, 2, 20);
  g_autoptr(json_t) j = to_json(t);
  expect_num(j, "propagation_ms/median", 20);
  expect_num(j, "propagation_ms/p90", 37);
  expect_num(j, "propagation_ms/p95", 38.5);
  expect_keys(jget(j, "propagation_ms"), "median,p90,p95");
}

/* ---- Censorship ---------------------------------------------------------------------------------------- */

/* Pools Fair (miner 0) and Censor (miner 1). Main: h1 Censor at 12 s, h2 Fair 30 s, h3 Censor 45 s,
 * h4 Fair 60 s.
 *   censored:   c1 created 0 s in h2 -> 30; c2 created 5 s in h4 -> 55; c3 never committed
 *   uncensored: u1 created 0 s in h1 -> 12; u2 created 10 s in h3 -> 35; u3 created 20 s in h2 -> 10;
 *               u4 creation unknown, in h1 -> no wait
 * censored {30, 55}: median 42.5, mean 42.5, p90 52.5; uncensored {10, 12, 35}: median 12, mean 19, p90 30.4.
 * Two vantages also see the blocks and some txs, so that every key of the output is present. */
static AnTx *censor_fixture(void) {
  const AnMiner miners[2] = {{0.6, 0}, {0.4, 1}};
  const char *pools[2] = {"Fair", "Censor"};
  g_autoptr(AnChain) c = an_chain_new(miners, 2, pools, 2);
  add_ok(c, mk(1, 0, 1, 1, 12 * S, 1));
  add_ok(c, mk(2, 1, 2, 0, 30 * S, 1));
  add_ok(c, mk(3, 2, 3, 1, 45 * S, 1));
  add_ok(c, mk(4, 3, 4, 0, 60 * S, 1));
  finalize_ok(c, &ETH);
  ObsSighting bs[] = {bsee(1, 0, 12100, NA), bsee(1, 1, 12200, NA), bsee(2, 0, 30100, NA),
                      bsee(2, 1, 30300, NA), bsee(4, 0, 60100, NA)};
  AnTx *t = an_tx_new(V2, 2);
  tx_full(t, 1, 1, 0, 0, TRUE);              /* c1 */
  tx_full(t, 2, 2, 0, 5 * S, TRUE);          /* c2 */
  tx_full(t, 3, 3, 0, 7 * S, TRUE);          /* c3 */
  tx_full(t, 4, 4, 0, 0, FALSE);             /* u1 */
  tx_full(t, 5, 5, 0, 10 * S, FALSE);        /* u2 */
  tx_full(t, 6, 6, 0, 20 * S, FALSE);        /* u3 */
  tx_full(t, 7, 7, 0, OBS_TIME_NONE, FALSE); /* u4 */
  see(t, 4, 0, 100);
  see(t, 4, 1, 150);
  see(t, 1, 0, 200);
  see(t, 1, 1, 180);
  incl(t, 1, 2, 2);
  incl(t, 2, 4, 4);
  incl(t, 4, 1, 1);
  incl(t, 5, 3, 3);
  incl(t, 6, 2, 2);
  incl(t, 7, 1, 1);
  declare_chain(t, c, bs, G_N_ELEMENTS(bs), 2);
  return t;
}

static void test_censorship(void) {
  g_autoptr(AnTx) t = censor_fixture();
  g_autoptr(json_t) j = to_json(t);
  expect_num(j, "censorship/censored/wait_s/median", 42.5);
  expect_num(j, "censorship/censored/wait_s/mean", 42.5);
  expect_num(j, "censorship/censored/wait_s/p90", 52.5);
  expect_num(j, "censorship/uncensored/wait_s/median", 12);
  expect_num(j, "censorship/uncensored/wait_s/mean", 19);
  expect_num(j, "censorship/uncensored/wait_s/p90", 30.4);
  CU_ASSERT_EQUAL(jint(j, "censorship/censored_never_committed"), 1);
  CU_ASSERT_EQUAL(jint(j, "committed"), 6);
}

/* ---- Key order, empty input -----------------------------------------------------------------------------
 */

static void test_json_key_order(void) {
  g_autoptr(AnTx) t = censor_fixture();
  g_autoptr(json_t) j = to_json(t);
  expect_keys(json_object_get(j, "tx"), "unique,committed,never_committed,commit_s,out_of_order_share,"
                                        "out_of_order_share_by_vantage,out_of_order_share_as_published,"
                                        "out_of_order_share_as_published_by_vantage,out_of_order_seen_share,"
                                        "arrival,order_sample_sender_share,propagation_ms,censorship,created,"
                                        "unmatched_records,nonce_order_violations");
  expect_keys(jget(j, "commit_s"), "k0,k3");
  expect_keys(jget(j, "commit_s/k0"), "median,mean,p90");
  expect_keys(jget(j, "out_of_order_share_by_vantage"), "A,B");
  expect_keys(jget(j, "propagation_ms"), "median,p90,p95");
  expect_keys(jget(j, "censorship"), "censored,uncensored,censored_never_committed");
  expect_keys(jget(j, "censorship/uncensored/wait_s"), "median,mean,p90");
  /* k0: u1 at A 12.1 - 0.1 = 12, at B 12.2 - 0.15 = 12.05; c1 at A 30.1 - 0.2 = 29.9, at B 30.3 - 0.18. */
  expect_num(j, "commit_s/k0/mean", (12 + 12.05 + 29.9 + 30.12) / 4);
  /* k3: u1 (h4, A only) 60.1 - 0.1. */
  expect_num(j, "commit_s/k3/median", 60);
}

static void test_empty(void) {
  g_autoptr(AnTx) t = an_tx_new(V2, 2);
  g_autoptr(json_t) j = to_json(t);
  expect_keys(json_object_get(j, "tx"),
              "unique,committed,never_committed,created,unmatched_records,nonce_order_violations");
  CU_ASSERT_EQUAL(jint(j, "unique"), 0);
  g_autofree char *s = json_dumps(j, 0);
  CU_ASSERT_PTR_NOT_NULL(s); /* jansson refuses NaN and infinities */
}

/* ---- Streaming: release after 36 heights ----------------------------------------------------------------
 */

/* One vantage; at height h (1..100) tx h is created, seen at 10h - 1 s and mined in block 1000 + h, which
 * the vantage receives at 10h s; heights are declared as they come. Commit times: k -> 10k + 1 s. */
static void test_streaming_release(void) {
  const char *v[1] = {"V"};
  g_autoptr(AnTx) t = an_tx_new(v, 1);
  for (uint32_t h = 1; h <= 100; h++) {
    tx(t, h);
    see(t, h, 0, (10 * (int64_t)h - 1) * 1000);
    incl(t, h, 1000 + h, h);
    incl(t, h, 5000 + h, h); /* a fork block at the same height */
    int64_t recv = 10 * (int64_t)h * 1000;
    main_block(t, h, 1000 + h, 10 * h * S, &recv, 1);
    CU_ASSERT_EQUAL(an_tx_n_held(t), MIN(h, 36u));
    if (h == 60) {
      see(t, 5, 0, 1);       /* released at height 41: unmatched, and does not count */
      incl(t, 10, 1010, 10); /* a height released: unmatched */
      tx(t, 7000);
      incl(t, 7000, 1025, 25); /* 35 below the top: commits at once */
      incl(t, 7000, 1026, 26); /* already committed: ignored */
      incl(t, 7000, 5025, 25); /* a fork block of a declared height: ignored */
      CU_ASSERT_EQUAL(an_tx_n_held(t), 37);
    }
  }
  g_autoptr(json_t) j = to_json(t);
  CU_ASSERT_EQUAL(an_tx_n_held(t), 0);
  CU_ASSERT_EQUAL(jint(j, "committed"), 101);
  CU_ASSERT_EQUAL(jint(j, "unmatched_records"), 2);
  expect_num(j, "commit_s/k0/median", 1);
  expect_num(j, "commit_s/k0/mean", 1);
  expect_num(j, "commit_s/k3/p90", 31);
  expect_num(j, "commit_s/k12/mean", 121);
  expect_num(j, "commit_s/k36/median", 361);
  expect_num(j, "commit_s/k36/mean", 361);
  /* One sender per tx, all in order; tx 7000 was seen by no vantage. */
  expect_num(j, "out_of_order_share", 0);
}

/* ---- Errors ---------------------------------------------------------------------------------------------
 */

static void expect_error(gboolean ok, GError *const *err, int code) {
  CU_ASSERT_FALSE(ok);
  CU_ASSERT_PTR_NOT_NULL_FATAL(*err);
  CU_ASSERT_TRUE(g_error_matches(*err, AN_TX_ERROR, code));
}

static void test_errors(void) {
  g_autoptr(AnTx) t = an_tx_new(V2, 2);
  tx(t, 1);
  GError *err = NULL;
  ObsTx dup = {.id = 1};
  expect_error(an_tx_add_tx(t, &dup, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  CU_ASSERT_STRING_EQUAL(err->message, "tx 0x0000000000000001 added twice");
  g_clear_error(&err);
  ObsTx bad_type = {.id = 2, .type = 3};
  expect_error(an_tx_add_tx(t, &bad_type, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  ObsTxSighting far = {.tx = 1, .vantage = 2, .seen_ns = 0};
  expect_error(an_tx_add_sighting(t, &far, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  ObsTxSighting none = {.tx = 1, .vantage = 0, .seen_ns = OBS_TIME_NONE};
  expect_error(an_tx_add_sighting(t, &none, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  ObsTxInclusion genesis = {.tx = 1, .block = OBS_GENESIS_ID, .height = 1};
  expect_error(an_tx_add_inclusion(t, &genesis, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  ObsTxInclusion h0 = {.tx = 1, .block = 5, .height = 0};
  expect_error(an_tx_add_inclusion(t, &h0, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  expect_error(an_tx_add_main_block(t, 2, 5, 0, NULL, &err), &err, AN_TX_ERROR_ORDER);
  CU_ASSERT_STRING_EQUAL(err->message, "main block 0x0000000000000005 declared at height 2 after height 0");
  g_clear_error(&err);
  expect_error(an_tx_add_main_block(t, 1, OBS_GENESIS_ID, 0, NULL, &err), &err, AN_TX_ERROR_INVALID_RECORD);
  g_clear_error(&err);
  /* Nothing above was counted. */
  g_autoptr(json_t) j = to_json(t);
  CU_ASSERT_EQUAL(jint(j, "created"), 1);
  CU_ASSERT_EQUAL(jint(j, "unique"), 0);
}

/* ---- Histogram ---------------------------------------------------------------------------------------- */

static const double FRACS[] = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Largest relative error of the histogram's quantiles at FRACS against the exact type-7 ones of `x`
 * (sorted here). */
static double worst_rel_error(const AnHist *h, double *x, size_t n) {
  qsort(x, n, sizeof x[0], cmp_double);
  double worst = 0;
  for (size_t i = 0; i < G_N_ELEMENTS(FRACS); i++) {
    double want = gsl_stats_quantile_from_sorted_data(x, 1, n, FRACS[i]);
    double got = an_hist_quantile(h, FRACS[i]);
    double rel = fabs(got - want) / fabs(want);
    if (rel >= AN_HIST_REL_WIDTH) fprintf(stderr, "f=%g: got %.17g want %.17g\n", FRACS[i], got, want);
    worst = MAX(worst, rel);
  }
  return worst;
}

/* 100 000 lognormal samples (fixed seed): binned, every quantile within 1%, the mean exact. */
static void test_hist_lognormal(void) {
  enum { N = 100000 };
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 20240917);
  g_autoptr(AnHist) h = an_hist_new(1e-9, 1e9);
  g_autofree double *x = g_new(double, N);
  for (size_t i = 0; i < N; i++) {
    x[i] = gsl_ran_lognormal(r, 0.0, 1.0);
    an_hist_add(h, x[i]);
  }
  CU_ASSERT_FALSE(an_hist_is_exact(h));
  CU_ASSERT_EQUAL(an_hist_count(h), N);
  double mean = gsl_stats_mean(x, 1, N);
  CU_ASSERT_DOUBLE_EQUAL(an_hist_mean(h), mean, 1e-12 * mean);
  double worst = worst_rel_error(h, x, N);
  CU_ASSERT_TRUE(worst < AN_HIST_REL_WIDTH);
  CU_ASSERT_TRUE(worst > 0);                               /* binned, not exact */
  CU_ASSERT_DOUBLE_EQUAL(an_hist_quantile(h, 0), x[0], 0); /* the extremes are kept exactly */
  CU_ASSERT_DOUBLE_EQUAL(an_hist_quantile(h, 1), x[N - 1], 0);
}

/* Signed samples with a block of exact zeros: binned quantiles away from zero within 1%, the median (in the
 * zeros) within the zero bin. */
static void test_hist_signed(void) {
  enum { N = 20000, ZEROS = 2000 };
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  g_autoptr(AnHist) h = an_hist_new(1e-6, 1e6);
  g_autofree double *x = g_new(double, N + ZEROS);
  for (size_t i = 0; i < N + ZEROS; i++) {
    x[i] = i < N ? gsl_ran_gaussian(r, 3.0) : 0.0;
    an_hist_add(h, x[i]);
  }
  qsort(x, N + ZEROS, sizeof x[0], cmp_double);
  const double f[] = {0.01, 0.1, 0.3, 0.7, 0.9, 0.99};
  for (size_t i = 0; i < G_N_ELEMENTS(f); i++) {
    double want = gsl_stats_quantile_from_sorted_data(x, 1, N + ZEROS, f[i]);
    double got = an_hist_quantile(h, f[i]);
    CU_ASSERT_TRUE(fabs(got - want) < AN_HIST_REL_WIDTH * fabs(want));
    CU_ASSERT_TRUE(got * want > 0); /* same sign */
  }
  CU_ASSERT_TRUE(fabs(an_hist_quantile(h, 0.5)) < 1e-6);
}

/* Up to AN_HIST_EXACT_MAX samples the statistics are exact; one more switches to bins. */
static void test_hist_exact_small(void) {
  g_autoptr(AnHist) h = an_hist_new(0.5, 1e17);
  CU_ASSERT_TRUE(isnan(an_hist_quantile(h, 0.5)));
  CU_ASSERT_TRUE(isnan(an_hist_mean(h)));
  double x[AN_HIST_EXACT_MAX];
  for (guint i = 0; i < AN_HIST_EXACT_MAX; i++) {
    x[i] = (double)((i * 7919u) % 1000u) * 1.37 - 300; /* includes negative values and zeros */
    an_hist_add(h, x[i]);
  }
  qsort(x, AN_HIST_EXACT_MAX, sizeof x[0], cmp_double);
  CU_ASSERT_TRUE(an_hist_is_exact(h));
  for (size_t i = 0; i < G_N_ELEMENTS(FRACS); i++)
    CU_ASSERT_EQUAL(an_hist_quantile(h, FRACS[i]),
                    gsl_stats_quantile_from_sorted_data(x, 1, AN_HIST_EXACT_MAX, FRACS[i]));
  an_hist_add(h, 1e4);
  CU_ASSERT_FALSE(an_hist_is_exact(h));
  CU_ASSERT_EQUAL(an_hist_count(h), AN_HIST_EXACT_MAX + 1);
  CU_ASSERT_DOUBLE_EQUAL(an_hist_quantile(h, 1), 1e4, 0);
}

/* ---- Bulk entry point ---------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t z) { /* a bijection: distinct ids that are not in order */
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

/* The summary JSON (17 digits) and the commit CSV of a finalized AnTx, as one string. */
static char *outputs_of(AnTx *t) {
  g_autoptr(json_t) j = to_json(t);
  char *js = json_dumps(j, JSON_REAL_PRECISION(17));
  char *csv = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&csv, &len);
  CU_ASSERT_TRUE(an_tx_write_commit_csv(t, f));
  fclose(f);
  char *all = g_strconcat(js, "\n", csv, NULL);
  free(js);
  free(csv);
  return all;
}

/* 600 txs of 40 senders, three vantages (10% of receptions missing, some txs seen by none), mined 1-4
 * heights after creation in main or fork blocks or never, heights declared two behind: an_tx_add_tx_seen()
 * and an_tx_add_tx() + an_tx_add_sighting() give the same outputs, byte for byte. */
static void feed_small(AnTx *t, gboolean bulk) {
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 99);
  uint64_t nonce[40] = {0};
  GArray *ahead[8];
  for (guint i = 0; i < 8; i++)
    ahead[i] = g_array_new(FALSE, FALSE, sizeof(ObsTxInclusion));
  uint64_t n = 0;
  for (uint32_t h = 1; h <= 60; h++) {
    for (guint j = 0; j < 10; j++, n++) {
      uint64_t s = gsl_rng_uniform_int(r, 40);
      int64_t created = (int64_t)h * 10 * S + (int64_t)j * 100 * MS;
      ObsTx x = {.id = mix64(n + 1),
                 .sender = s + 1,
                 .nonce = nonce[s]++,
                 .created_ns = created,
                 .type = OBS_TX_MC,
                 .censored = gsl_rng_uniform(r) < 0.2};
      int64_t recv[3];
      gboolean none = gsl_rng_uniform(r) < 0.05;
      for (guint v = 0; v < 3; v++)
        recv[v] = none || gsl_rng_uniform(r) < 0.1 ? OBS_TIME_NONE
                                                   : created + (int64_t)gsl_rng_uniform_int(r, 3000) * MS;
      g_autoptr(GError) err = NULL;
      if (bulk) {
        CU_ASSERT_TRUE(an_tx_add_tx_seen(t, &x, none && j % 2 ? NULL : recv, &err));
      } else {
        CU_ASSERT_TRUE(an_tx_add_tx(t, &x, &err));
        for (guint v = 0; v < 3; v++)
          if (recv[v] != OBS_TIME_NONE) see(t, x.id, v, (recv[v] - created) / MS + created / MS);
      }
      double u = gsl_rng_uniform(r);
      uint32_t hi = h + 1 + (uint32_t)gsl_rng_uniform_int(r, 4);
      if (u < 0.85) {
        ObsTxInclusion in = {.tx = x.id, .block = (u < 0.8 ? 1000 : 2000) + hi, .height = hi};
        g_array_append_val(ahead[hi % 8], in);
      }
    }
    GArray *a = ahead[h % 8];
    for (guint i = 0; i < a->len; i++) {
      const ObsTxInclusion *in = &g_array_index(a, ObsTxInclusion, i);
      incl(t, in->tx, in->block, in->height);
    }
    g_array_set_size(a, 0);
    if (h > 2) {
      int64_t recv_ms[3] = {(h - 2) * 10000 + 500, (h - 2) * 10000 + 900, h % 5 ? (h - 2) * 10000 + 700 : NA};
      main_block(t, h - 2, 1000 + h - 2, (int64_t)(h - 2) * 10 * S, recv_ms, 3);
    }
  }
  for (guint i = 0; i < 8; i++)
    g_array_unref(ahead[i]);
}

static void test_add_tx_seen_same_outputs(void) {
  g_autoptr(AnTx) a = an_tx_new(V3, 3);
  g_autoptr(AnTx) b = an_tx_new(V3, 3);
  feed_small(a, FALSE);
  feed_small(b, TRUE);
  CU_ASSERT_EQUAL(an_tx_n_held(a), an_tx_n_held(b));
  g_autofree char *out_a = outputs_of(a);
  g_autofree char *out_b = outputs_of(b);
  CU_ASSERT_STRING_EQUAL(out_a, out_b);
  if (strcmp(out_a, out_b) != 0) fprintf(stderr, "split:\n%s\nbulk:\n%s\n", out_a, out_b);
  CU_ASSERT_PTR_NOT_NULL(strstr(out_a, "\"out_of_order_share\"")); /* the stream exercises the metrics */
  CU_ASSERT_PTR_NOT_NULL(strstr(out_a, "\"censorship\""));
}

/* Errors as an_tx_add_tx(); nothing recorded on error, not even the sightings. */
static void test_add_tx_seen_errors(void) {
  g_autoptr(AnTx) t = an_tx_new(V2, 2);
  int64_t r1[2] = {100 * MS, 160 * MS};
  ObsTx x = {.id = 1, .sender = 5, .type = OBS_TX_TX};
  g_autoptr(GError) err = NULL;
  CU_ASSERT_TRUE(an_tx_add_tx_seen(t, &x, r1, &err));
  int64_t r2[2] = {10 * MS, 20 * MS};
  GError *e = NULL;
  expect_error(an_tx_add_tx_seen(t, &x, r2, &e), &e, AN_TX_ERROR_INVALID_RECORD);
  CU_ASSERT_STRING_EQUAL(e->message, "tx 0x0000000000000001 added twice");
  g_clear_error(&e);
  ObsTx bad = {.id = 2, .type = 3};
  expect_error(an_tx_add_tx_seen(t, &bad, r2, &e), &e, AN_TX_ERROR_INVALID_RECORD);
  CU_ASSERT_STRING_EQUAL(e->message, "tx 0x0000000000000002: unknown type 3");
  g_clear_error(&e);
  CU_ASSERT_EQUAL(an_tx_n_held(t), 1);
  ObsTx unseen = {.id = 3, .type = OBS_TX_CC};
  CU_ASSERT_TRUE(an_tx_add_tx_seen(t, &unseen, NULL, &err)); /* NULL: no sightings */
  int64_t none[2] = {OBS_TIME_NONE, OBS_TIME_NONE};
  ObsTx unseen2 = {.id = 4, .type = OBS_TX_TX};
  CU_ASSERT_TRUE(an_tx_add_tx_seen(t, &unseen2, none, &err));
  g_autoptr(json_t) j = to_json(t);
  CU_ASSERT_EQUAL(jint(j, "created"), 3);
  CU_ASSERT_EQUAL(jint(j, "unique"), 1);      /* txs 3 and 4 were never seen */
  expect_num(j, "propagation_ms/median", 60); /* the first sightings, not the refused ones */
}

/* ---- A long stream against a direct evaluation of the definitions ------------------------------------- */

/* 85 000 txs (50 per height, 1700 heights, heights declared 3 behind) of 400 senders, three vantages.
 * Besides txs mined 1-5 heights after creation (some below a lower nonce of the same sender, some repeating
 * a nonce), in fork blocks or never: txs whose inclusion is told when it is mined 1500 heights (75 000 txs)
 * later, or told at once for a height 1500 ahead, and txs included at a height already declared (up to 30
 * below the top). That spans more txs than the held txs' arena keeps young, so txs are held, seen, committed
 * and released from the old pool too, and some commit-time histograms bin while others of the same k are
 * still exact. The outputs must equal those of the definitions evaluated directly, with every tx in memory.
 */
#define REF_V 3
#define REF_B 50
#define REF_H 1700u
#define REF_LAG 3u
#define REF_FAR 1500u

enum { INCL_NONE, INCL_MAIN, INCL_FORK, INCL_LATE, INCL_FAR, INCL_NOW };

typedef struct {
  uint64_t id, sender, nonce;
  int64_t created_ns;
  gboolean censored;
  int64_t recv[REF_V];
  int kind;
  uint32_t incl_h; /* the inclusion's height */
  uint32_t committed_h;
} RefTx;

static int cmp_release(const void *a, const void *b) {
  const RefTx *x = *(RefTx *const *)a, *y = *(RefTx *const *)b;
  if (x->committed_h != y->committed_h) return x->committed_h < y->committed_h ? -1 : 1;
  if (x->sender != y->sender) return x->sender < y->sender ? -1 : 1;
  if (x->nonce != y->nonce) return x->nonce < y->nonce ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int cmp_ref_id(const void *a, const void *b) {
  const RefTx *x = *(RefTx *const *)a, *y = *(RefTx *const *)b;
  return (x->id > y->id) - (x->id < y->id);
}

static void ref_propagation(AnHist *prop, const RefTx *x) {
  guint first = 0;
  for (guint v = 0; v < REF_V; v++) {
    if (x->recv[v] == OBS_TIME_NONE) return;
    if (x->recv[v] < x->recv[first]) first = v;
  }
  for (guint v = 0; v < REF_V; v++)
    if (v != first) an_hist_add(prop, (double)(x->recv[v] - x->recv[first]));
}

static void put_ref_row(GString *s, uint32_t k, const char *vantage, const AnHist *h) {
  g_string_append_printf(s, "%" PRIu32 ",%s,%" PRIu64, k, vantage, an_hist_count(h));
  const double f[3] = {0.5, -1, 0.9};
  for (guint i = 0; i < 3; i++) {
    g_string_append_c(s, ',');
    if (an_hist_count(h))
      g_string_append_printf(s, "%.17g", (f[i] < 0 ? an_hist_mean(h) : an_hist_quantile(h, f[i])) / 1e9);
  }
  g_string_append_c(s, '\n');
}

static void expect_exact(json_t *j, const char *path, double want) {
  double got = jnum(j, path);
  CU_ASSERT_EQUAL(got, want);
  if (got != want) fprintf(stderr, "%s: got %.17g, want %.17g\n", path, got, want);
}

static void test_reference_stream(void) {
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 2024);
  const uint32_t n = REF_B * REF_H, top_end = REF_H - REF_LAG;
  g_autofree RefTx *txs = g_new0(RefTx, n);
  g_autofree int64_t *mined = g_new(int64_t, REF_H + REF_FAR + 8);
  g_autofree int64_t(*brecv)[REF_V] = g_malloc_n(REF_H + REF_FAR + 8, sizeof brecv[0]);
  uint64_t nonce[400] = {0};
  for (uint32_t h = 0; h < REF_H + REF_FAR + 8; h++) {
    mined[h] = (int64_t)h * 13 * S + (int64_t)gsl_rng_uniform_int(r, 1000) * MS;
    for (guint v = 0; v < REF_V; v++) /* V2 hardly ever has a block: its commit times stay exact */
      brecv[h][v] = gsl_rng_uniform(r) < (v == 2 ? 0.98 : 0.05)
                        ? OBS_TIME_NONE
                        : mined[h] + (int64_t)gsl_rng_uniform_int(r, 2000) * MS;
  }
  /* Per height, the txs whose inclusion is told then. */
  GArray **told = g_new0(GArray *, REF_H + 1);
  for (uint32_t h = 0; h <= REF_H; h++)
    told[h] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) {
    RefTx *x = &txs[i];
    uint32_t h = i / REF_B + 1; /* created while height h is mined */
    uint64_t s = gsl_rng_uniform_int(r, 400);
    uint64_t nc = nonce[s] > 0 && gsl_rng_uniform(r) < 0.05 ? nonce[s] - 1 : nonce[s]++; /* some repeat */
    *x = (RefTx){.id = mix64(i + 7),
                 .sender = mix64(s + 1000000),
                 .nonce = nc,
                 .created_ns = gsl_rng_uniform(r) < 0.02 ? OBS_TIME_NONE
                                                         : mined[h - 1] + (int64_t)(i % REF_B) * 200 * MS,
                 .censored = gsl_rng_uniform(r) < 0.1};
    for (guint v = 0; v < REF_V; v++)
      x->recv[v] = gsl_rng_uniform(r) < 0.1 ? OBS_TIME_NONE
                                            : mined[h - 1] + (int64_t)gsl_rng_uniform_int(r, 20000) * MS;
    double u = gsl_rng_uniform(r);
    x->kind = u < 0.75   ? INCL_MAIN
              : u < 0.8  ? INCL_FORK
              : u < 0.81 ? INCL_LATE
              : u < 0.82 ? INCL_FAR
              : u < 0.84 ? INCL_NOW
                         : INCL_NONE;
    if (x->kind == INCL_MAIN || x->kind == INCL_FORK) x->incl_h = h + (uint32_t)gsl_rng_uniform_int(r, 5);
    if (x->kind == INCL_LATE || x->kind == INCL_FAR) x->incl_h = h + REF_FAR;
    if (x->kind == INCL_NOW && h > REF_LAG + 1)
      x->incl_h = h - REF_LAG - (uint32_t)gsl_rng_uniform_int(r, MIN(31, h - REF_LAG));
    if (x->kind == INCL_NOW && x->incl_h == 0) x->kind = INCL_NONE;
    uint32_t when = x->kind == INCL_FAR || x->kind == INCL_NOW ? h : x->incl_h;
    if (x->kind != INCL_NONE && when <= REF_H) g_array_append_val(told[when], i);
    if (x->kind != INCL_NONE && x->kind != INCL_FORK && when <= REF_H && x->incl_h <= top_end)
      x->committed_h = x->incl_h;
  }

  /* The stream, in time order. */
  g_autoptr(AnTx) t = an_tx_new(V3, REF_V);
  g_autoptr(GError) err = NULL;
  for (uint32_t h = 1; h <= REF_H; h++) {
    for (uint32_t i = (h - 1) * REF_B; i < h * REF_B; i++) {
      const RefTx *x = &txs[i];
      ObsTx o = {.id = x->id,
                 .sender = x->sender,
                 .nonce = x->nonce,
                 .created_ns = x->created_ns,
                 .type = OBS_TX_TX,
                 .censored = x->censored};
      if (i % 2) {
        CU_ASSERT_TRUE_FATAL(an_tx_add_tx_seen(t, &o, x->recv, &err));
      } else { /* the other half the long way, sightings twice (the later one must not count) */
        CU_ASSERT_TRUE_FATAL(an_tx_add_tx(t, &o, &err));
        for (guint v = 0; v < REF_V; v++) {
          if (x->recv[v] == OBS_TIME_NONE) continue;
          ObsTxSighting a = {.tx = x->id, .vantage = v, .seen_ns = x->recv[v] + 5 * MS};
          ObsTxSighting b = {.tx = x->id, .vantage = v, .seen_ns = x->recv[v]};
          CU_ASSERT_TRUE(an_tx_add_sighting(t, &b, &err));
          CU_ASSERT_TRUE(an_tx_add_sighting(t, &a, &err));
        }
      }
    }
    for (guint j = 0; j < told[h]->len; j++) {
      const RefTx *x = &txs[g_array_index(told[h], uint32_t, j)];
      if (x->kind == INCL_NOW) continue; /* after the declaration below */
      incl(t, x->id, (x->kind == INCL_FORK ? 2000000 : 1000000) + x->incl_h, x->incl_h);
    }
    if (h > REF_LAG) {
      uint32_t d = h - REF_LAG;
      CU_ASSERT_TRUE(an_tx_add_main_block(t, d, 1000000 + d, mined[d], brecv[d], &err));
    }
    for (guint j = 0; j < told[h]->len; j++) {
      const RefTx *x = &txs[g_array_index(told[h], uint32_t, j)];
      if (x->kind == INCL_NOW) incl(t, x->id, 1000000 + x->incl_h, x->incl_h);
    }
    if (h % 100 == 0) { /* records of txs never added */
      ObsTxSighting s = {.tx = 42, .vantage = 1, .seen_ns = 0};
      CU_ASSERT_TRUE(an_tx_add_sighting(t, &s, &err));
      incl(t, 43, 1000000 + h, h);
    }
    if (h == REF_H - 10) { /* txs added twice: one held since the start (in the old pool), one young */
      uint32_t first = 0;
      while (txs[first].kind != INCL_NONE && txs[first].kind != INCL_FORK)
        first++;
      ObsTx o = {.id = txs[first].id};
      GError *e = NULL;
      expect_error(an_tx_add_tx(t, &o, &e), &e, AN_TX_ERROR_INVALID_RECORD);
      g_clear_error(&e);
      int64_t some[REF_V] = {0, 0, 0};
      o.id = txs[h * REF_B - 10].id;
      expect_error(an_tx_add_tx_seen(t, &o, some, &e), &e, AN_TX_ERROR_INVALID_RECORD);
      g_clear_error(&e);
    }
  }
  g_autofree char *out = outputs_of(t);
  g_autoptr(json_t) j = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);

  /* The definitions, with every tx at hand. */
  g_autoptr(GPtrArray) committed = g_ptr_array_new(), rest = g_ptr_array_new();
  uint64_t unique = 0, censored = 0, censored_committed = 0, late = 0;
  for (uint32_t i = 0; i < n; i++) {
    RefTx *x = &txs[i];
    gboolean seen = x->recv[0] != OBS_TIME_NONE || x->recv[1] != OBS_TIME_NONE || x->recv[2] != OBS_TIME_NONE;
    uint32_t when = x->kind == INCL_FAR || x->kind == INCL_NOW ? i / REF_B + 1 : x->incl_h;
    unique += seen || (x->kind != INCL_NONE && when <= REF_H);
    censored += x->censored;
    g_ptr_array_add(x->committed_h ? committed : rest, x);
    censored_committed += x->censored && x->committed_h;
    late += x->committed_h && (x->kind == INCL_LATE || x->kind == INCL_FAR);
  }
  CU_ASSERT_TRUE(late > 100);
  g_ptr_array_sort(committed, cmp_release);
  g_ptr_array_sort(rest, cmp_ref_id);
  AnHist *all[AN_TX_N_K], *per[AN_TX_N_K][REF_V];
  for (guint k = 0; k < AN_TX_N_K; k++) {
    all[k] = an_hist_new(0.5, 1e17);
    for (guint v = 0; v < REF_V; v++)
      per[k][v] = an_hist_new(0.5, 1e17);
  }
  g_autoptr(AnHist) prop = an_hist_new(0.5, 1e17);
  g_autoptr(AnHist) wait0 = an_hist_new(0.5, 1e17);
  g_autoptr(AnHist) wait1 = an_hist_new(0.5, 1e17);
  g_autoptr(GHashTable) senders = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  uint64_t ooo[REF_V] = {0}, pairs[REF_V] = {0}, violations = 0;
  for (guint i = 0; i < committed->len; i++) {
    const RefTx *x = g_ptr_array_index(committed, i);
    for (guint k = 0; k < AN_TX_N_K && x->committed_h + AN_TX_K[k] <= top_end; k++)
      for (guint v = 0; v < REF_V; v++) {
        int64_t b = brecv[x->committed_h + AN_TX_K[k]][v];
        if (x->recv[v] == OBS_TIME_NONE || b == OBS_TIME_NONE) continue;
        an_hist_add(all[k], (double)(b - x->recv[v]));
        an_hist_add(per[k][v], (double)(b - x->recv[v]));
      }
    if (x->created_ns != OBS_TIME_NONE)
      an_hist_add(x->censored ? wait1 : wait0, (double)(mined[x->committed_h] - x->created_ns));
    int64_t *st = g_hash_table_lookup(senders, &x->sender); /* [0] last nonce, [1 + v] latest reception */
    if (!st) {
      st = g_new(int64_t, 1 + REF_V);
      for (guint v = 0; v < REF_V; v++)
        st[1 + v] = INT64_MIN;
      g_hash_table_insert(senders, g_memdup2(&x->sender, sizeof x->sender), st);
    } else if (x->nonce <= (uint64_t)st[0]) {
      violations++;
      goto prop;
    }
    st[0] = (int64_t)x->nonce;
    for (guint v = 0; v < REF_V; v++) {
      if (x->recv[v] == OBS_TIME_NONE) continue;
      pairs[v]++;
      if (x->recv[v] < st[1 + v]) ooo[v]++;
      st[1 + v] = MAX(st[1 + v], x->recv[v]);
    }
  prop:
    ref_propagation(prop, x);
  }
  for (guint i = 0; i < rest->len; i++)
    ref_propagation(prop, g_ptr_array_index(rest, i));

  CU_ASSERT_EQUAL(jint(j, "created"), n);
  CU_ASSERT_EQUAL(jint(j, "committed"), committed->len);
  CU_ASSERT_EQUAL(jint(j, "unique"), unique);
  CU_ASSERT_EQUAL(jint(j, "unmatched_records"), 2 * (REF_H / 100));
  CU_ASSERT_EQUAL(jint(j, "nonce_order_violations"), violations);
  CU_ASSERT_TRUE(violations > 0);
  CU_ASSERT_EQUAL(jint(j, "censorship/censored_never_committed"), censored - censored_committed);
  expect_exact(j, "out_of_order_share",
               (double)(ooo[0] + ooo[1] + ooo[2]) / (double)(pairs[0] + pairs[1] + pairs[2]));
  expect_exact(j, "out_of_order_share_by_vantage/V1", (double)ooo[1] / (double)pairs[1]);
  expect_exact(j, "propagation_ms/median", an_hist_quantile(prop, 0.5) / 1e6);
  expect_exact(j, "propagation_ms/p95", an_hist_quantile(prop, 0.95) / 1e6);
  expect_exact(j, "censorship/censored/wait_s/mean", an_hist_mean(wait1) / 1e9);
  expect_exact(j, "censorship/uncensored/wait_s/p90", an_hist_quantile(wait0, 0.9) / 1e9);
  CU_ASSERT_FALSE(an_hist_is_exact(prop));
  for (guint k = 0; k < AN_TX_N_K; k++) {
    CU_ASSERT_FALSE(an_hist_is_exact(all[k]));
    CU_ASSERT_FALSE(an_hist_is_exact(per[k][0]));
    CU_ASSERT_TRUE(an_hist_is_exact(per[k][2]) && an_hist_count(per[k][2]) > 0);
  }
  g_autoptr(GString) csv = g_string_new("k,vantage,pairs,median_s,mean_s,p90_s\n");
  for (guint k = 0; k < AN_TX_N_K; k++) {
    put_ref_row(csv, AN_TX_K[k], "", all[k]);
    for (guint v = 0; v < REF_V; v++)
      put_ref_row(csv, AN_TX_K[k], V3[v], per[k][v]);
  }
  const char *got_csv = strchr(out, '\n') + 1;
  CU_ASSERT_STRING_EQUAL(got_csv, csv->str);
  if (strcmp(got_csv, csv->str) != 0) fprintf(stderr, "CSV got:\n%s\nwant:\n%s\n", got_csv, csv->str);
  for (guint k = 0; k < AN_TX_N_K; k++) {
    an_hist_free(all[k]);
    for (guint v = 0; v < REF_V; v++)
      an_hist_free(per[k][v]);
  }
  for (uint32_t h = 0; h <= REF_H; h++)
    g_array_unref(told[h]);
  g_free(told);
}

/* ---- Histogram bins at their edges --------------------------------------------------------------------- */

/* The bin of x as the layout in txmetrics.h defines it (a log per sample), and the estimates that follow
 * from the bin counts: the histogram's faster binning must give exactly these. */
typedef struct {
  double min_abs, log_g, min, max;
  guint m;
  uint64_t n, *bins;
} RefHist;

static guint ref_bin(const RefHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  double k = floor(log(a / h->min_abs) / h->log_g);
  if (k >= h->m) return x > 0 ? 2 * h->m + 2 : 0;
  guint i = k < 0 ? 0 : (guint)k;
  return x > 0 ? h->m + 2 + i : h->m - i;
}

static double ref_order_stat(const RefHist *h, uint64_t j) {
  if (j == 0) return h->min;
  if (j == h->n - 1) return h->max;
  uint64_t below = 0;
  for (guint b = 0; b < 2 * h->m + 3; b++) {
    uint64_t c = h->bins[b];
    if (j < below + c) {
      double edge_m = h->min_abs * exp(h->m * h->log_g), lo, hi;
      if (b == 0) {
        lo = h->min, hi = -edge_m;
      } else if (b <= h->m) {
        lo = -h->min_abs * exp((h->m - b + 1) * h->log_g), hi = -h->min_abs * exp((h->m - b) * h->log_g);
      } else if (b == h->m + 1) {
        lo = -h->min_abs, hi = h->min_abs;
      } else if (b < 2 * h->m + 2) {
        lo = h->min_abs * exp((b - h->m - 2) * h->log_g), hi = h->min_abs * exp((b - h->m - 1) * h->log_g);
      } else {
        lo = edge_m, hi = h->max;
      }
      lo = CLAMP(lo, h->min, h->max);
      hi = CLAMP(hi, h->min, h->max);
      return lo + (hi - lo) * ((double)(j - below) + 0.5) / (double)c;
    }
    below += c;
  }
  g_assert_not_reached();
}

static void check_edges(double min_abs, double max_abs) {
  RefHist ref = {.min_abs = min_abs, .log_g = log1p(AN_HIST_REL_WIDTH), .min = INFINITY, .max = -INFINITY};
  ref.m = (guint)ceil(log(max_abs / min_abs) / ref.log_g);
  ref.bins = g_new0(uint64_t, 2 * ref.m + 3);
  g_autoptr(AnHist) h = an_hist_new(min_abs, max_abs);
  g_autoptr(GArray) x = g_array_new(FALSE, FALSE, sizeof(double));
  /* Around the edges of every 7th bin (and the last ones): the edge as the histogram computes it, the
   * neighbouring doubles, and values within and just outside the safe margin; both signs. */
  for (guint i = 0; i <= ref.m; i += (i + 7 > ref.m && i < ref.m ? ref.m - i : 7)) {
    double e = min_abs * exp(i * ref.log_g);
    double near[] = {e,
                     e * (1 + 1e-14),
                     e * (1 - 1e-14),
                     e * (1 + 1e-12),
                     e * (1 - 1e-12),
                     e * (1 + 1e-10),
                     e * (1 - 1e-10),
                     e * (1 + 1.1e-9),
                     e * (1 - 1.1e-9),
                     e * (1 + 1e-6)};
    for (guint k = 0; k < G_N_ELEMENTS(near); k++) {
      double y = near[k];
      for (int u = 0; u < 3; u++, y = nextafter(y, INFINITY)) {
        g_array_append_val(x, y);
        double neg = -y;
        g_array_append_val(x, neg);
      }
    }
  }
  g_autoptr(gsl_rng) r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 5);
  for (guint i = 0; i < 20000; i++) { /* anywhere in the range, beyond, and below min_abs */
    double y = exp(log(min_abs) - 3 + gsl_rng_uniform(r) * (log(max_abs / min_abs) + 6));
    if (i % 3 == 0) y = -y;
    g_array_append_val(x, y);
  }
  double z = 0;
  g_array_append_val(x, z);
  for (guint i = 0; i < x->len; i++) {
    double y = g_array_index(x, double, i);
    an_hist_add(h, y);
    ref.bins[ref_bin(&ref, y)]++;
    ref.n++;
    ref.min = MIN(ref.min, y);
    ref.max = MAX(ref.max, y);
  }
  CU_ASSERT_FALSE(an_hist_is_exact(h));
  guint bad = 0;
  for (uint64_t j = 0; j < ref.n; j++) { /* every order statistic: a quantile at j / (n - 1) */
    double f = (double)j / (double)(ref.n - 1);
    double d = (double)(ref.n - 1) * f;
    uint64_t i = (uint64_t)floor(d);
    double lo = ref_order_stat(&ref, i), want = lo;
    if (i + 1 < ref.n && d - (double)i != 0) want = lo + (d - (double)i) * (ref_order_stat(&ref, i + 1) - lo);
    double got = an_hist_quantile(h, f);
    if (got != want && bad++ < 5)
      fprintf(stderr, "range %g..%g, f = %.17g: got %.17g want %.17g\n", min_abs, max_abs, f, got, want);
  }
  CU_ASSERT_EQUAL(bad, 0);
  g_free(ref.bins);
}

static void test_hist_bins_at_edges(void) {
  check_edges(0.5, 1e17); /* the transaction metrics' range: min_abs a power of 2 */
  check_edges(1e-9, 1e9);
  check_edges(3e-3, 7.5);
}

/* an_fmt_fixed9: byte for byte printf's "%.9f" (tx_commit_samples.csv), ties and signs included. */
static void check_fixed9(double x, int *bad) {
  char got[AN_FIXED9_MAX + 1], want[AN_FIXED9_MAX + 1];
  gsize n = an_fmt_fixed9(got, x);
  got[n] = 0;
  snprintf(want, sizeof want, "%.9f", x);
  if (strcmp(got, want) && (*bad)++ < 5) fprintf(stderr, "%a: got %s want %s\n", x, got, want);
}

static void test_fixed9(void) {
  int bad = 0;
  const double special[] = {0.0, -0.0, 1e-12, -1e-12, 5e-10, -5e-10, 1.5e-9, 2.5e-9, 0x1p-10, -0x1p-10,
                            0.9999999995, 999999999.9999999, -999999999.9999999, 1e9, -1e9, 1e300, INFINITY,
                            -INFINITY, NAN, 4.9406564584124654e-324, 12.000000000499999};
  for (gsize i = 0; i < G_N_ELEMENTS(special); i++) check_fixed9(special[i], &bad);
  uint64_t r = 88172645463325252u;
  for (int i = 0; i < 300000; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    double x;
    switch (i % 4) {
    case 0: x = (double)(int64_t)(r % 4000000000000000u - 2000000000000000u) / 1e9; break; /* ns / 1e9 */
    case 1: x = ldexp((double)(r >> 11), -(int)(r % 90)) * (r & 1 ? -1 : 1); break;       /* ties */
    case 2: x = (double)(int64_t)(r >> 24) * 0x1p-10; break;
    default: x = ((double)(r >> 20) + 0.5) * 1e-9; break;
    }
    check_fixed9(x, &bad);
  }
  for (int k = -20000; k < 20000; k++) check_fixed9(k * 0x1p-11, &bad);
  CU_ASSERT_EQUAL(bad, 0);
}

int register_suites(void) {
  ADD_SUITE("txmetrics", TEST(test_commit_times), TEST(test_commit_csv), TEST(test_out_of_order), TEST(test_out_of_order_as_published), TEST(test_nonce_text_order),
            TEST(test_order_sample),
            TEST(test_never_committed), TEST(test_propagation), TEST(test_censorship),
            TEST(test_json_key_order), TEST(test_empty), TEST(test_streaming_release), TEST(test_errors),
            TEST(test_add_tx_seen_same_outputs), TEST(test_add_tx_seen_errors), TEST(test_reference_stream), TEST(test_sink));
  ADD_SUITE("histogram", TEST(test_hist_lognormal), TEST(test_hist_signed), TEST(test_hist_exact_small),
            TEST(test_hist_bins_at_edges));
  ADD_SUITE("format", TEST(test_fixed9));
  return 0;
}
