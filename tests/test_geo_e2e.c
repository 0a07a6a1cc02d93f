/* test_geo_e2e.c: scenarios/geo-small.json end to end (400 nodes, 300 heights): outputs that physics
 * bounds widely, checked without any number fitted to them. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "params.h"
#include "run.h"
#include "scenario.h"
#include "sync.h"

static json_t *summary;

static gint cmp_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}
static char *out_dir;

static double num(const char *a, const char *b, const char *c) {
  json_t *v = json_object_get(summary, a);
  if (b) v = json_object_get(v, b);
  if (c) v = json_object_get(v, c);
  CU_ASSERT_PTR_NOT_NULL(v);
  return json_number_value(v);
}

static void run_once(void) {
  if (summary) return;
  SimDiag *d = sim_diag_new("scenarios/geo-small.json");
  SimScenario *sc = sim_scenario_load_file("scenarios/geo-small.json", NULL, d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  out_dir = g_dir_make_tmp("sim-geo-XXXXXX", NULL);
  char *argv[] = {(char *)"test"};
  SimRunOptions opt = {.out_dir = out_dir, .argc = 1, .argv = argv};
  GError *e = NULL;
  gboolean ok = sim_run(sc, &opt, &summary, &e);
  if (!ok) fprintf(stderr, "%s\n", e->message);
  CU_ASSERT_TRUE_FATAL(ok);
  sim_scenario_free(sc);
  sim_diag_free(d);
}

/* A block reaches the other pools after about d = 0.1-0.5 s of relay plus a stratum delay of median
 * 0.4 s: stale probability about 1 - exp(-d / 13 s), between 0.4% and 20% for d in [0.05 s, 3 s]. With 300
 * heights the sampling error is about 1.5 points; the band stays wide on purpose. */
static void test_uncle_rate_band(void) {
  run_once();
  double stale = num("chain", "stale_share", NULL);
  CU_ASSERT(stale > 0.002 && stale < 0.25);
  CU_ASSERT(num("chain", "uncles_included", NULL) + num("chain", "forks_unreferenced", NULL) > 0);
}

/* Difficulty starts at 2088.5 TH with 164 TH/s: 12.7 s per block, adjusted by EIP-100 towards 13-14 s. */
static void test_interval(void) {
  run_once();
  double m = num("chain", "mean_interval_s", NULL);
  CU_ASSERT(m > 10 && m < 17);
}

/* Vantage delays: differences of arrival times over a network whose one-way latencies are at most 322 ms
 * (SA-AU) and whose relay adds a few hops, without fetch timeouts: the median between 1 ms and 1 s, the
 * 99th percentile below the 5 s fetch timeout. */
static void test_propagation_band(void) {
  run_once();
  double med = num("propagation", "vantage_delay_ms", "median");
  double p99 = num("propagation", "vantage_delay_ms", "p99");
  CU_ASSERT(med > 1 && med < 1000);
  CU_ASSERT(p99 >= med && p99 < 5000);
  CU_ASSERT(num("propagation", "vantage_delay_incl_first_ms", "median") <= med);
  double seen = num("propagation", "blocks_seen_by_all", NULL), total = num("chain", "blocks_total", NULL);
  CU_ASSERT(seen >= 0.95 * total && seen <= total);
  json_t *fs = json_object_get(json_object_get(summary, "propagation"), "first_seen_share");
  double sum = 0;
  const char *k;
  json_t *v;
  json_object_foreach(fs, k, v) sum += json_number_value(v);
  CU_ASSERT_DOUBLE_EQUAL(sum, 1.0, 1e-9);
}

/* Geography shows: the vantage point in Shanghai is first for blocks of the pools whose gateways are all in
 * China more often than for those of the European-run pools (gateways in Frankfurt, New York, Singapore,
 * Amsterdam, Moscow), whose blocks reach Lisbon and Prague long before Shanghai. Pools are pooled (weighted
 * by their blocks) so that the comparison rests on hundreds of blocks. */
static double ea_first_share(const char *const *pools) {
  json_t *by = json_object_get(json_object_get(summary, "propagation"), "first_seen_share_by_pool");
  json_t *rows = json_object_get(summary, "pools");
  double first = 0, blocks = 0;
  for (const char *const *p = pools; *p; p++) {
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
      if (strcmp(json_string_value(json_object_get(row, "name")), *p) != 0) continue;
      double n = json_number_value(json_object_get(row, "blocks"));
      first += n * json_number_value(json_object_get(json_object_get(by, *p), "EA"));
      blocks += n;
    }
  }
  CU_ASSERT(blocks > 50);
  return blocks > 0 ? first / blocks : 0;
}

static void test_geography(void) {
  run_once();
  static const char *const chinese[] = {"Sparkpool", "F2pool2", "HuoBi.pro", "Pandapool", "Xnpool", "Uupool",
                                        "Zhizhu", "Firepool", "MiningExpress", NULL};
  static const char *const european[] = {"Ethermine", "Nanopool", "DwarfPool", "Minerall", "Hiveon", NULL};
  CU_ASSERT(ea_first_share(chinese) > ea_first_share(european));
}

static void test_observations_written(void) {
  run_once();
  char *path = g_build_filename(out_dir, "observations.csv", NULL);
  char *text = NULL;
  CU_ASSERT_TRUE_FATAL(g_file_get_contents(path, &text, NULL, NULL));
  CU_ASSERT(g_str_has_prefix(text, "BlockHash,Number,BlockType,WETimeStamp,CETimeStamp,NATimeStamp,EATimeStamp,"
                                   "FirstObservation,WEDiff,CEDiff,NADiff,EADiff,MiningPool,"));
  guint lines = 0;
  for (const char *c = text; *c; c++) lines += *c == '\n';
  CU_ASSERT(lines > 300);
  g_free(text);
  g_free(path);
}

/* A geo run writes exactly these five files and the marker of a complete result, and leaves no temp file behind;
 * then the directory goes. */
static void test_outputs_then_cleanup(void) {
  run_once();
  static const char *const names[] = {".sim-result", "blocks.csv", "observations.csv", "pools.csv", "runs.csv", "summary.json"};
  GPtrArray *found = g_ptr_array_new_with_free_func(g_free);
  GDir *dir = g_dir_open(out_dir, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  const char *n;
  while ((n = g_dir_read_name(dir))) g_ptr_array_add(found, g_strdup(n));
  g_dir_close(dir);
  g_ptr_array_sort(found, cmp_names);
  CU_ASSERT_EQUAL_FATAL(found->len, G_N_ELEMENTS(names));
  for (guint i = 0; i < found->len; i++) {
    CU_ASSERT_STRING_EQUAL(g_ptr_array_index(found, i), names[i]);
    char *p = g_build_filename(out_dir, g_ptr_array_index(found, i), NULL);
    g_unlink(p);
    g_free(p);
  }
  g_ptr_array_unref(found);
  CU_ASSERT_EQUAL(g_rmdir(out_dir), 0);
  g_free(out_dir);
  out_dir = NULL;
  json_decref(summary);
  summary = NULL;
}

/* Joining nodes end to end: every ordinary node joins at 0 on a high-end machine (synced after 126.6 min),
 * and the vantage points dial only ordinary nodes. So no vantage point sees any block mined before the
 * sync time, while the pools still see each other's blocks over the gateway mesh; the blocks mined after it
 * are seen as usual. */
static void test_joining_e2e(void) {
  static const char *const sets[] = {
      "stop.heights=800", "network.joining={\"share\": 1, \"window_s\": 0, \"machine\": \"high-end\"}", NULL};
  g_autoptr(SimDiag) d = sim_diag_new("scenarios/geo-small.json");
  SimScenario *sc = sim_scenario_load_file("scenarios/geo-small.json", sets, d);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  g_autofree char *dir = g_dir_make_tmp("sim-geo-join-XXXXXX", NULL);
  char *argv[] = {(char *)"test"};
  SimRunOptions opt = {.out_dir = dir, .argc = 1, .argv = argv};
  json_t *sum = NULL;
  GError *e = NULL;
  gboolean ok = sim_run(sc, &opt, &sum, &e);
  if (!ok) fprintf(stderr, "%s\n", e->message);
  CU_ASSERT_TRUE_FATAL(ok);
  sim_scenario_free(sc);
  const double sync_s = (double)sim_sync_class_duration("high-end", SIM_SYNC_TARGET_HEAD) / 1e9;
  /* Mining times of the blocks. */
  g_autofree char *bpath = g_build_filename(dir, "blocks.csv", NULL),
                  *opath = g_build_filename(dir, "observations.csv", NULL);
  g_autofree char *btext = NULL, *otext = NULL;
  CU_ASSERT_TRUE_FATAL(g_file_get_contents(bpath, &btext, NULL, NULL));
  CU_ASSERT_TRUE_FATAL(g_file_get_contents(opath, &otext, NULL, NULL));
  GHashTable *mined = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_auto(GStrv) blines = g_strsplit(btext, "\n", -1);
  guint before = 0, after = 0;
  for (guint i = 1; blines[i] && *blines[i]; i++) {
    g_auto(GStrv) f = g_strsplit(blines[i], ",", -1);
    double t = g_ascii_strtod(f[5], NULL);
    before += t < sync_s;
    after += t >= sync_s;
    g_hash_table_insert(mined, g_strdup(f[0]), g_memdup2(&t, sizeof t));
  }
  CU_ASSERT(before > 400 && after > 100);
  g_auto(GStrv) olines = g_strsplit(otext, "\n", -1);
  guint rows = 0, early = 0, early_seen = 0;
  for (guint i = 1; olines[i] && *olines[i]; i++) {
    g_auto(GStrv) f = g_strsplit(olines[i], ",", -1);
    const double *t = g_hash_table_lookup(mined, f[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    rows++;
    early += *t < sync_s;
    for (guint c = 3; c <= 6; c++)
      early_seen += *f[c] && g_ascii_strtod(f[c], NULL) < sync_s;
  }
  CU_ASSERT_EQUAL(early, 0);
  CU_ASSERT_EQUAL(early_seen, 0);
  CU_ASSERT_EQUAL(rows, after); /* every block mined after the sync time is seen */
  /* The pools kept mining on each other's blocks: the chain is whole and its stale share is ordinary. */
  json_t *chain = json_object_get(sum, "chain");
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(chain, "main")), 800);
  CU_ASSERT(json_number_value(json_object_get(chain, "stale_share")) < 0.25);
  g_hash_table_destroy(mined);
  json_decref(sum);
  const char *names[] = {".sim-result", "blocks.csv", "observations.csv", "pools.csv", "runs.csv", "summary.json"};
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *path = g_build_filename(dir, names[i], NULL);
    g_unlink(path);
  }
  CU_ASSERT_EQUAL(g_rmdir(dir), 0);
}

int register_suites(void) {
  ADD_SUITE("geo-e2e", TEST(test_uncle_rate_band), TEST(test_interval), TEST(test_propagation_band),
            TEST(test_geography), TEST(test_observations_written), TEST(test_outputs_then_cleanup),
            TEST(test_joining_e2e));
  return 0;
}
