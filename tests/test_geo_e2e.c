/* test_geo_e2e.c: scenarios/geo-small.json end to end (400 nodes, 300 heights): outputs that physics
 * bounds widely, checked without any number fitted to them. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "params.h"
#include "run.h"
#include "scenario.h"

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

/* A geo run writes exactly these five files and leaves no temp file behind; then the directory goes. */
static void test_outputs_then_cleanup(void) {
  run_once();
  static const char *const names[] = {"blocks.csv", "observations.csv", "pools.csv", "runs.csv", "summary.json"};
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

int register_suites(void) {
  ADD_SUITE("geo-e2e", TEST(test_uncle_rate_band), TEST(test_interval), TEST(test_propagation_band),
            TEST(test_geography), TEST(test_observations_written), TEST(test_outputs_then_cleanup));
  return 0;
}
