/* test_sweep.c: unit tests of sim/app/sweep*.c: seed derivation, point expansion, the pool-share
 * generators, confidence intervals against independently computed values, summary flattening, the
 * table and the manifest identity. */
#include "cunit-main.h"
#include "scenario.h"
#include "sweep.h"

#include <glib/gstdio.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLOSE(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

/* ---- Helpers ------------------------------------------------------------------------------------------ */

static char *tmp_dir;

static char *base_tiny(void) {
  const char *root = g_getenv("SIM_SOURCE_ROOT");
  g_autofree char *cwd = g_get_current_dir();
  return g_build_filename(root ? root : cwd, "scenarios", "tiny.json", NULL);
}

/* Writes a sweep file whose "base" is scenarios/tiny.json and whose other members are `members` (JSON
 * text without braces); returns its path (g_free). */
static char *sweep_file(const char *name, const char *members) {
  g_autofree char *base = base_tiny();
  g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
  g_autofree char *text = g_strdup_printf("{\"base\": \"%s\", %s}", base, members);
  g_assert(g_file_set_contents(path, text, -1, NULL));
  return g_steal_pointer(&path);
}

/* Loads a sweep made by sweep_file(); on failure prints the problems and returns NULL. */
static SimSweep *load(const char *name, const char *members) {
  g_autofree char *path = sweep_file(name, members);
  g_autoptr(SimDiag) diag = sim_diag_new(name);
  SimSweep *sw = sim_sweep_load_file(path, diag);
  if (!sw) {
    g_autofree char *m = sim_diag_join(diag);
    fprintf(stderr, "%s\n", m);
  }
  return sw;
}

/* The problems of a sweep that must not load, joined by newlines (g_free); the sweep file path is
 * replaced by its base name so messages can be compared. */
static char *problems(const char *name, const char *members) {
  g_autofree char *path = sweep_file(name, members);
  g_autoptr(SimDiag) diag = sim_diag_new(name);
  g_autoptr(SimSweep) sw = sim_sweep_load_file(path, diag);
  CU_ASSERT_PTR_NULL(sw);
  return sim_diag_join(diag);
}

/* The scenario of a point, loaded as `sim run` would (shares normalised by the loader). */
static SimScenario *point_scenario(const SimSweep *sw, guint p) {
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  SimScenario *sc = sim_scenario_load_file(sim_sweep_base_file(sw), sim_sweep_point_sets(sw, p), diag);
  CU_ASSERT_PTR_NOT_NULL(sc);
  return sc;
}

static void point_shares(const SimSweep *sw, guint p, double *share, guint *n) {
  g_autoptr(SimScenario) sc = point_scenario(sw, p);
  *n = sc ? sc->n_pools : 0;
  for (guint i = 0; i < *n; i++)
    share[i] = sc->pools[i].hash_share;
}

static double sum(const double *v, guint n) {
  double s = 0;
  for (guint i = 0; i < n; i++)
    s += v[i];
  return s;
}

/* ---- Seeds -------------------------------------------------------------------------------------------- */

static void test_splitmix_reference(void) {
  /* The first two outputs of Vigna's splitmix64 seeded with 0 and 1 (splitmix64.c, published). */
  CU_ASSERT_EQUAL(sim_sweep_splitmix64(0), UINT64_C(0xe220a8397b1dcdaf));
  CU_ASSERT_EQUAL(sim_sweep_splitmix64(1), UINT64_C(0x910a2dec89025cc1));
}

static void test_seed_known_values(void) {
  /* Computed independently in Python (arbitrary-precision integers masked to 64 bits). */
  CU_ASSERT_EQUAL(sim_sweep_seed(7, 0, 0), UINT64_C(5620672417314516668));
  CU_ASSERT_EQUAL(sim_sweep_seed(7, 0, 1), UINT64_C(8885351339813208944));
  CU_ASSERT_EQUAL(sim_sweep_seed(7, 1, 0), UINT64_C(4037586493124842486));
  CU_ASSERT_EQUAL(sim_sweep_seed(1, 3, 4), UINT64_C(7757980187565429414));
  CU_ASSERT_EQUAL(sim_sweep_seed(0, 0, 0), UINT64_C(1279368494785126216));
}

static void test_seed_distinct(void) {
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  guint n = 0;
  for (uint64_t b = 0; b < 3; b++)
    for (uint64_t p = 0; p < 100; p++)
      for (uint64_t r = 0; r < 20; r++) {
        uint64_t s = sim_sweep_seed(b, p, r);
        CU_ASSERT(s <= (uint64_t)INT64_MAX);
        gint64 *k = g_new(gint64, 1);
        *k = (gint64)s;
        CU_ASSERT_FALSE(g_hash_table_contains(seen, k));
        g_hash_table_add(seen, k);
        n++;
      }
  CU_ASSERT_EQUAL(g_hash_table_size(seen), n);
  /* (point, replicate) and (replicate, point) differ: the mix is not symmetric. */
  CU_ASSERT_NOT_EQUAL(sim_sweep_seed(7, 1, 2), sim_sweep_seed(7, 2, 1));
}

/* ---- Shares ------------------------------------------------------------------------------------------- */

static void test_zipf(void) {
  double v[4];
  sim_shares_zipf(1, 4, v); /* 1, 1/2, 1/3, 1/4 over 25/12 */
  CLOSE(v[0], 0.48, 1e-15);
  CLOSE(v[1], 0.24, 1e-15);
  CLOSE(v[2], 0.16, 1e-15);
  CLOSE(v[3], 0.12, 1e-15);
  CLOSE(sim_shares_hhi(v, 4), 0.328, 1e-15);
  CU_ASSERT_EQUAL(sim_shares_nakamoto(v, 4), 2);
  sim_shares_zipf(0, 4, v);
  for (guint i = 0; i < 4; i++)
    CLOSE(v[i], 0.25, 0);
  CU_ASSERT_EQUAL(sim_shares_nakamoto(v, 4), 3); /* two of four equal pools are not a majority */
}

static void test_hhi_bisection(void) {
  const guint ns[] = {2, 4, 16, 55};
  const double targets[] = {0.08, 0.1, 0.15, 0.25, 0.5, 0.9, 0.99};
  for (guint a = 0; a < G_N_ELEMENTS(ns); a++)
    for (guint b = 0; b < G_N_ELEMENTS(targets); b++) {
      guint n = ns[a];
      if (targets[b] < 1.0 / n) continue;
      double s = sim_shares_zipf_for_hhi(targets[b], n);
      g_autofree double *v = g_new(double, n);
      sim_shares_zipf(s, n, v);
      CLOSE(sim_shares_hhi(v, n), targets[b], 1e-10);
    }
  CU_ASSERT_EQUAL(sim_shares_zipf_for_hhi(0.25, 4), 0.0);
}

static void test_nakamoto_targets(void) {
  const guint ns[] = {1, 2, 3, 4, 5, 10, 16, 55};
  for (guint a = 0; a < G_N_ELEMENTS(ns); a++) {
    guint n = ns[a];
    g_autofree double *v = g_new(double, n);
    for (guint c = 1; c <= n / 2 + 1 && c <= n; c++) {
      double s = sim_shares_zipf_for_nakamoto(c, n);
      sim_shares_zipf(s, n, v);
      if (sim_shares_nakamoto(v, n) != c)
        fprintf(stderr, "n=%u c=%u s=%g -> %u\n", n, c, s, sim_shares_nakamoto(v, n));
      CU_ASSERT_EQUAL(sim_shares_nakamoto(v, n), c);
    }
  }
  /* c = 1: the largest pool holds 3/4. */
  double v[16];
  sim_shares_zipf(sim_shares_zipf_for_nakamoto(1, 16), 16, v);
  CLOSE(v[0], 0.75, 1e-10);
}

/* ---- Generators through the sweep loader (the point's scenario as `sim run` loads it) ----------------- */

static void test_gen_hhi(void) {
  g_autoptr(SimSweep) sw =
      load("hhi.json", "\"parameters\": [{\"generator\": \"hhi\", \"targets\": [0.25, 0.3, 0.5]}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
  CU_ASSERT_EQUAL(sim_sweep_n_points(sw), 3);
  CU_ASSERT_STRING_EQUAL(sim_sweep_column(sw, 0), "hhi.target");
  const double want[] = {0.25, 0.3, 0.5};
  for (guint p = 0; p < 3; p++) {
    double s[8];
    guint n;
    point_shares(sw, p, s, &n);
    CU_ASSERT_EQUAL(n, 4);
    CLOSE(sum(s, n), 1, 1e-12);
    CLOSE(sim_shares_hhi(s, n), want[p], 1e-9);
    CLOSE(json_real_value(json_array_get(sim_sweep_point_values(sw, p), 0)), want[p], 0);
    /* The base's ranking is kept: A (40%) stays the largest, Small (10%) the smallest. */
    CU_ASSERT(s[0] >= s[1] && s[1] >= s[2] && s[2] >= s[3]);
  }
}

static void test_gen_nakamoto(void) {
  g_autoptr(SimSweep) sw = load(
      "nak.json", "\"parameters\": [{\"generator\": \"nakamoto\", \"n\": 9, \"targets\": [1, 2, 3, 4, 5]}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
  for (guint p = 0; p < 5; p++) {
    double s[16];
    guint n;
    point_shares(sw, p, s, &n);
    CU_ASSERT_EQUAL(n, 9); /* n differs from the base's 4: pools P1..P9 */
    CLOSE(sum(s, n), 1, 1e-12);
    CU_ASSERT_EQUAL(sim_shares_nakamoto(s, n), p + 1);
    g_autoptr(SimScenario) sc = point_scenario(sw, p);
    CU_ASSERT_STRING_EQUAL(sc->pools[0].name, "P1");
    CU_ASSERT_STRING_EQUAL(sc->pools[8].name, "P9");
  }
}

static void test_gen_zipf_scale_merge_split(void) {
  double s[16];
  guint n;
  {
    g_autoptr(SimSweep) sw = load("zipf.json", "\"parameters\": [{\"generator\": \"zipf\", \"s\": [0, 1]}]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    point_shares(sw, 1, s, &n);
    CU_ASSERT_EQUAL(n, 4);
    CLOSE(s[0], 0.48, 1e-15);
    CLOSE(s[3], 0.12, 1e-15);
    point_shares(sw, 0, s, &n);
    CLOSE(s[2], 0.25, 1e-15);
  }
  {
    /* Top 2 (A 0.4, B 0.3 = 0.7) × 0.5 = 0.35; the rest (0.3) scaled to 0.65. */
    g_autoptr(SimSweep) sw = load(
        "scale.json", "\"parameters\": [{\"generator\": \"scale_top\", \"k\": 2, \"factors\": [0.5, 1.2]}]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    point_shares(sw, 0, s, &n);
    CLOSE(s[0], 0.2, 1e-12);
    CLOSE(s[1], 0.15, 1e-12);
    CLOSE(s[2], 0.2 * 0.65 / 0.3, 1e-12);
    CLOSE(s[3], 0.1 * 0.65 / 0.3, 1e-12);
    CLOSE(sum(s, n), 1, 1e-12);
    point_shares(sw, 1, s, &n);
    CLOSE(s[0], 0.48, 1e-12);
    CLOSE(s[3], 0.1 * (1 - 0.84) / 0.3, 1e-12);
  }
  {
    g_autoptr(SimSweep) sw = load("merge.json", "\"parameters\": [{\"generator\": \"merge_top2\"}]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    CU_ASSERT_EQUAL(sim_sweep_n_points(sw), 2);
    point_shares(sw, 0, s, &n);
    CU_ASSERT_EQUAL(n, 4);
    g_autoptr(SimScenario) sc = point_scenario(sw, 1);
    CU_ASSERT_EQUAL_FATAL(sc->n_pools, 3);
    CU_ASSERT_STRING_EQUAL(sc->pools[0].name, "A+B");
    CLOSE(sc->pools[0].hash_share, 0.7, 1e-12);
    CU_ASSERT_STRING_EQUAL(sc->pools[2].name, "Small");
    CU_ASSERT_EQUAL(sc->pools[2].miners, 5); /* other attributes are kept */
  }
  {
    g_autoptr(SimSweep) sw =
        load("split.json", "\"parameters\": [{\"generator\": \"split\", \"pool\": \"B\", \"k\": [1, 3]}]");
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    g_autoptr(SimScenario) sc = point_scenario(sw, 1);
    CU_ASSERT_EQUAL_FATAL(sc->n_pools, 6);
    CU_ASSERT_STRING_EQUAL(sc->pools[1].name, "B.1");
    CU_ASSERT_STRING_EQUAL(sc->pools[3].name, "B.3");
    CLOSE(sc->pools[2].hash_share, 0.1, 1e-12);
    CLOSE(sc->pools[4].hash_share, 0.2, 1e-12);
    point_shares(sw, 0, s, &n);
    CU_ASSERT_EQUAL(n, 4);
  }
}

/* ---- Points ------------------------------------------------------------------------------------------- */

static void test_expansion_order(void) {
  g_autoptr(SimSweep) sw = load(
      "grid.json", "\"replicates\": 3, \"sets\": [\"stop.heights=200\"], \"parameters\": ["
                   "{\"path\": \"network.delay.median_ms\", \"values\": [300, 900]},"
                   "{\"path\": \"uncles.model\", \"values\": [\"ethereum\", \"no-self-uncle\", \"none\"]}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
  CU_ASSERT_EQUAL(sim_sweep_n_points(sw), 6);
  CU_ASSERT_EQUAL(sim_sweep_n_runs(sw), 18);
  CU_ASSERT_EQUAL(sim_sweep_base_seed(sw), 7);
  CU_ASSERT_STRING_EQUAL(sim_sweep_column(sw, 0), "network.delay.median_ms");
  CU_ASSERT_STRING_EQUAL(sim_sweep_column(sw, 1), "uncles.model");
  const char *models[] = {"ethereum", "no-self-uncle", "none"};
  for (guint p = 0; p < 6; p++) {
    const json_t *v = sim_sweep_point_values(sw, p);
    CU_ASSERT_EQUAL(json_integer_value(json_array_get(v, 0)),
                    p < 3 ? 300 : 900); /* the last varies fastest */
    CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(v, 1)), models[p % 3]);
    const char *const *sets = sim_sweep_point_sets(sw, p);
    CU_ASSERT_STRING_EQUAL(sets[0], "stop.heights=200");
    g_autofree char *d = g_strdup_printf("network.delay.median_ms=%d", p < 3 ? 300 : 900);
    g_autofree char *u = g_strdup_printf("uncles.model=%s", models[p % 3]);
    CU_ASSERT_STRING_EQUAL(sets[1], d);
    CU_ASSERT_STRING_EQUAL(sets[2], u);
    CU_ASSERT_PTR_NULL(sets[3]);
    for (guint r = 0; r < 3; r++)
      CU_ASSERT_EQUAL(sim_sweep_run_seed(sw, p, r), sim_sweep_seed(7, p, r));
  }
  g_autofree char *name = sim_sweep_run_name(12, 3);
  CU_ASSERT_STRING_EQUAL(name, "p12-r3");
}

static void test_range(void) {
  g_autoptr(SimSweep) sw = load(
      "range.json", "\"parameters\": [{\"path\": \"network.delay.sigma\", \"range\": {\"from\": 0.1, \"to\": "
                    "0.5, \"step\": 0.1}},"
                    "{\"path\": \"stop.heights\", \"range\": {\"from\": 100, \"to\": 300, \"step\": 100}}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
  CU_ASSERT_EQUAL(sim_sweep_n_points(sw), 15);
  /* 0.1 + 2 × 0.1 is 0.30000000000000004 in binary; values are rounded to 12 digits. */
  CU_ASSERT_STRING_EQUAL(sim_sweep_point_sets(sw, 6)[0], "network.delay.sigma=0.3");
  CU_ASSERT_STRING_EQUAL(sim_sweep_point_sets(sw, 14)[1], "stop.heights=300");
  CU_ASSERT(json_is_integer(json_array_get(sim_sweep_point_values(sw, 0), 1)));
}

static void test_bad_inputs(void) {
  struct {
    const char *members, *want;
  } cases[] = {
      {"\"parameters\": [{\"path\": \"network.delay.median_mss\", \"values\": [1]}]",
       "bad.json: $.parameters[0].path: not in the base scenario BASE (with its defaults): "
       "$.network.delay.median_mss does not exist"},
      {"\"parameters\": [{\"path\": \"pools[4].hash_share\", \"values\": [0.1]}]",
       "bad.json: $.parameters[0].path: not in the base scenario BASE (with its defaults): "
       "$.pools[4] does not exist (the array has 4 elements)"},
      {"\"parameters\": [{\"path\": \"stop.heights\", \"values\": []}]",
       "bad.json: $.parameters[0].values: must be a non-empty array"},
      {"\"replicates\": 0", "bad.json: $.replicates: must be in [1, 100000] (got 0)"},
      {"\"replicate\": 2",
       "bad.json: $.replicate: unknown key (expected one of: name, base, replicates, comment, "
       "parameters, sets, metrics)"},
      {"\"parameters\": [{\"path\": \"network.delay.median_ms\", \"values\": [100, -5]}]",
       "bad.json: $.parameters: point 1 (network.delay.median_ms=-5): BASE: $.network.delay.median_ms: must "
       "be in (0, 3.6e+06] (got -5)"},
      {"\"parameters\": [{\"generator\": \"hhi\", \"targets\": [0.2, 1]}]",
       "bad.json: $.parameters[0].targets[0]: must be in [0.25, 1) (got 0.2)\n"
       "bad.json: $.parameters[0].targets[1]: must be in [0.25, 1) (got 1)"},
      {"\"parameters\": [{\"generator\": \"nakamoto\", \"targets\": [4]}]",
       "bad.json: $.parameters[0].targets[0]: must be in [1, 3] (got 4)"},
      {"\"parameters\": [{\"generator\": \"scale_top\", \"factors\": [3]}]",
       "bad.json: $.parameters[0].factors[0]: the top 1 pool would hold 3 × 0.4 = 1.2 of the hash rate (must "
       "stay "
       "below 1)"},
      {"\"parameters\": [{\"generator\": \"split\", \"pool\": \"Z\", \"k\": [2]}]",
       "bad.json: $.parameters[0].pool: no pool \"Z\" in the base scenario"},
      {"\"parameters\": [{\"path\": \"seed\", \"values\": [1, 2]}]",
       "bad.json: $.parameters[0].path: the seed is derived for each run; sweep replicates instead"},
  };
  g_autofree char *base = base_tiny();
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *got = problems("bad.json", cases[i].members);
    GString *want = g_string_new(cases[i].want);
    g_string_replace(want, "BASE", base, 0);
    if (g_strcmp0(got, want->str) != 0)
      fprintf(stderr, "\ncase %u:\n got: %s\nwant: %s\n", i, got, want->str);
    CU_ASSERT_STRING_EQUAL(got, want->str);
    g_string_free(want, TRUE);
  }
}

/* ---- Statistics --------------------------------------------------------------------------------------- */

static void test_stats(void) {
  /* t quantiles 0.975 by Simpson integration of the Student density and bisection (Python, math module
   * only): df 1 12.706204736172541, df 2 4.302652729749203, df 4 2.776445105197803. */
  CLOSE(gsl_cdf_tdist_Pinv(0.975, 1), 12.706204736172541, 1e-9);
  CLOSE(gsl_cdf_tdist_Pinv(0.975, 2), 4.302652729749203, 1e-9);
  CLOSE(gsl_cdf_tdist_Pinv(0.975, 4), 2.776445105197803, 1e-9);
  double m, sd, ci;
  const double x[] = {1, 2, 3, 4, 5}; /* sd √2.5; ci 2.776445105197803 × √2.5 / √5 */
  sim_sweep_stats(x, 5, &m, &sd, &ci);
  CLOSE(m, 3, 1e-15);
  CLOSE(sd, 1.5811388300841898, 1e-15);
  CLOSE(ci, 1.963243161477564, 1e-9);
  const double y[] = {0.07, 0.0825, 0.061}; /* Python statistics.mean/stdev, t(2) as above */
  sim_sweep_stats(y, 3, &m, &sd, &ci);
  CLOSE(m, 0.07116666666666667, 1e-15);
  CLOSE(sd, 0.010797376224497014, 1e-15);
  CLOSE(ci, 0.02682216946722782, 1e-11);
  sim_sweep_stats(y, 1, &m, &sd, &ci);
  CLOSE(m, 0.07, 0);
  CU_ASSERT(isnan(sd) && isnan(ci));
  sim_sweep_stats(NULL, 0, &m, &sd, &ci);
  CU_ASSERT(isnan(m) && isnan(sd) && isnan(ci));
}

/* ---- Flattening --------------------------------------------------------------------------------------- */

static void test_flatten(void) {
  g_autoptr(json_t) s = json_loads(
      "{\"header\": {\"seed\": 7, \"threads\": 1},"
      " \"sim\": {\"events\": 10, \"wall_s\": 0.5, \"events_per_s\": 20, \"peak_rss_bytes\": 1, "
      "\"stop_reason\": \"height\"},"
      " \"chain\": {\"uncle_rate\": 0.07, \"ok\": true},"
      " \"pools\": [{\"name\": \"A\", \"main_share\": 0.6}, {\"name\": \"B.x\", \"main_share\": 0.4}],"
      " \"runs\": {\"histogram\": [[1, 9], [2, 3]], \"count_ge\": {\"5\": 2}},"
      " \"list\": [3, {\"v\": 4}], \"nothing\": null}",
      0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  g_autoptr(GArray) f = sim_summary_flatten(s);
  const char *keys[] = {
      "sim.events",      "chain.uncle_rate", "chain.ok", "pools[A].main_share", "pools[B.x].main_share",
      "runs.count_ge.5", "list[0]",          "list[1].v"};
  const double vals[] = {10, 0.07, 1, 0.6, 0.4, 2, 3, 4};
  CU_ASSERT_EQUAL_FATAL(f->len, G_N_ELEMENTS(keys));
  for (guint i = 0; i < f->len; i++) {
    CU_ASSERT_STRING_EQUAL(g_array_index(f, SimFlatValue, i).key, keys[i]);
    CLOSE(g_array_index(f, SimFlatValue, i).value, vals[i], 0);
  }
}

/* ---- Table -------------------------------------------------------------------------------------------- */

static json_t *fake_summary(double uncle_rate, double a_share) {
  return json_pack("{s:{s:i}, s:{s:f, s:f}, s:[{s:s, s:f}]}", "sim", "events", 5, "chain", "uncle_rate",
                   uncle_rate, "stale_share", uncle_rate / 2, "pools", "name", "A", "main_share", a_share);
}

static void test_table(void) {
  g_autoptr(SimSweep) sw = load(
      "table.json", "\"replicates\": 3, \"metrics\": [\"pools\", \"chain.uncle_rate\", \"tx\"],"
                    "\"parameters\": [{\"path\": \"uncles.model\", \"values\": [\"ethereum\", \"none\"]}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
  g_autoptr(SimSweepTable) t = sim_sweep_table_new(sw);
  const double rates[] = {0.07, 0.0825, 0.061};
  for (guint r = 0; r < 3; r++) {
    g_autoptr(json_t) s = fake_summary(rates[r], 0.5 + r * 0.1);
    sim_sweep_table_add(t, 0, s);
  }
  g_autoptr(json_t) one = fake_summary(0.01, 0.5);
  sim_sweep_table_add(t, 1, one);
  CU_ASSERT_EQUAL(sim_sweep_table_point_runs(t, 0), 3);
  CU_ASSERT_EQUAL(sim_sweep_table_point_runs(t, 1), 1);
  g_auto(GStrv) unmatched = sim_sweep_table_unmatched_metrics(t);
  CU_ASSERT_EQUAL_FATAL(g_strv_length(unmatched), 1);
  CU_ASSERT_STRING_EQUAL(unmatched[0], "tx");

  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_TRUE(sim_sweep_table_write_csv(t, f));
  fclose(f);
  g_auto(GStrv) lines = g_strsplit(buf, "\n", -1);
  free(buf);
  CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), 4); /* header, 2 rows, "" after the last newline */
  /* The "metrics" order, not the summary's: pools first. */
  CU_ASSERT_STRING_EQUAL(lines[0],
                         "point,uncles.model,replicates,pools[A].main_share:mean,pools[A].main_share:sd,"
                         "pools[A].main_share:ci95,chain.uncle_rate:mean,chain.uncle_rate:sd,"
                         "chain.uncle_rate:ci95");
  g_auto(GStrv) c = g_strsplit(lines[1], ",", -1);
  CU_ASSERT_EQUAL_FATAL(g_strv_length(c), 9);
  CU_ASSERT_STRING_EQUAL(c[0], "0");
  CU_ASSERT_STRING_EQUAL(c[1], "ethereum");
  CU_ASSERT_STRING_EQUAL(c[2], "3");
  CLOSE(g_ascii_strtod(c[3], NULL), 0.6, 1e-15);
  CLOSE(g_ascii_strtod(c[4], NULL), 0.1, 1e-15);
  CLOSE(g_ascii_strtod(c[5], NULL), 4.302652729749203 * 0.1 / sqrt(3), 1e-10);
  CLOSE(g_ascii_strtod(c[6], NULL), 0.07116666666666667, 1e-15);
  CLOSE(g_ascii_strtod(c[7], NULL), 0.010797376224497014, 1e-15);
  CLOSE(g_ascii_strtod(c[8], NULL), 0.02682216946722782, 1e-11);
  /* One replicate: a mean, no spread. */
  CU_ASSERT_STRING_EQUAL(lines[2], "1,none,1,0.5,,,0.01,,");

  g_autoptr(json_t) j = sim_sweep_table_to_json(t);
  json_t *row1 = json_array_get(json_object_get(j, "rows"), 1);
  CU_ASSERT_STRING_EQUAL(
      json_string_value(json_object_get(json_object_get(row1, "parameters"), "uncles.model")), "none");
  json_t *m = json_object_get(json_object_get(row1, "metrics"), "chain.uncle_rate");
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(m, "n")), 1);
  CU_ASSERT(json_is_null(json_object_get(m, "sd")));
}

static void test_manifest_identity(void) {
  const char *grid = "\"parameters\": [{\"path\": \"network.delay.median_ms\", \"values\": [300, 900]}]";
  g_autoptr(SimSweep) a = load("id-a.json", grid);
  g_autofree char *more =
      g_strdup_printf("\"name\": \"other\", \"replicates\": 7, \"metrics\": [\"chain\"], %s", grid);
  g_autoptr(SimSweep) b = load("id-b.json", more);
  g_autoptr(SimSweep) c =
      load("id-c.json", "\"parameters\": [{\"path\": \"network.delay.median_ms\", \"values\": [300, 901]}]");
  g_autoptr(SimSweep) d = load("id-d.json", "\"sets\": [\"seed=8\"], \"parameters\": [{\"path\": "
                                            "\"network.delay.median_ms\", \"values\": [300, 900]}]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT_TRUE(sim_sweep_manifest_same_study(sim_sweep_manifest(a), sim_sweep_manifest(b)));
  CU_ASSERT_FALSE(sim_sweep_manifest_same_study(sim_sweep_manifest(a), sim_sweep_manifest(c)));
  CU_ASSERT_FALSE(sim_sweep_manifest_same_study(sim_sweep_manifest(a), sim_sweep_manifest(d)));
  CU_ASSERT_EQUAL(sim_sweep_base_seed(d), 8);
  /* The manifest rebuilds the same sweep. */
  g_autoptr(GError) e = NULL;
  g_autoptr(SimSweep) r = sim_sweep_from_manifest(sim_sweep_manifest(b), "m", &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(sim_sweep_n_replicates(r), 7);
  CU_ASSERT_STRING_EQUAL(sim_sweep_name(r), "other");
  CU_ASSERT_STRING_EQUAL(sim_sweep_point_sets(r, 1)[0], "network.delay.median_ms=900");
  g_autoptr(json_t) broken = json_deep_copy(sim_sweep_manifest(a));
  json_object_del(broken, "points");
  g_autoptr(SimSweep) none = sim_sweep_from_manifest(broken, "m", &e);
  CU_ASSERT_PTR_NULL(none);
}

/* The shipped studies load, have the documented sizes, and the centralization study meets its HHI targets
 * on the pools of the 2019 month. */
static void test_shipped_studies(void) {
  const char *root = g_getenv("SIM_SOURCE_ROOT");
  struct {
    const char *file;
    guint points, replicates;
  } studies[] = {{"centralization.json", 5, 5}, {"uncle-rules.json", 3, 5}};
  for (guint i = 0; i < G_N_ELEMENTS(studies); i++) {
    g_autofree char *path =
        g_build_filename(root ? root : ".", "scenarios", "studies", studies[i].file, NULL);
    g_autoptr(SimDiag) diag = sim_diag_new(path);
    g_autoptr(SimSweep) sw = sim_sweep_load_file(path, diag);
    if (!sw) {
      g_autofree char *m = sim_diag_join(diag);
      fprintf(stderr, "%s\n", m);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(sw);
    CU_ASSERT_EQUAL(sim_sweep_n_points(sw), studies[i].points);
    CU_ASSERT_EQUAL(sim_sweep_n_replicates(sw), studies[i].replicates);
    if (i != 0) continue;
    for (guint p = 0; p < sim_sweep_n_points(sw); p++) {
      double sh[64];
      guint n;
      point_shares(sw, p, sh, &n);
      CU_ASSERT_EQUAL(n, 16);
      CLOSE(sim_shares_hhi(sh, n), json_real_value(json_array_get(sim_sweep_point_values(sw, p), 0)), 1e-9);
    }
  }
}

static int suite_init(void) {
  tmp_dir = g_dir_make_tmp("sim-test-sweep-XXXXXX", NULL);
  return tmp_dir ? 0 : 1;
}

static int suite_clean(void) {
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(tmp_dir, n, NULL);
    g_unlink(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return 0;
}

int register_suites(void) {
  ADD_SUITE("seeds", TEST(test_splitmix_reference), TEST(test_seed_known_values), TEST(test_seed_distinct));
  ADD_SUITE("shares", TEST(test_zipf), TEST(test_hhi_bisection), TEST(test_nakamoto_targets));
  ADD_SUITE("stats", TEST(test_stats), TEST(test_flatten));
  CU_pSuite s = CU_add_suite("sweep files", suite_init, suite_clean);
  if (!s) return 1;
  struct {
    const char *n;
    CU_TestFunc f;
  } t[] = {TEST(test_gen_hhi),
           TEST(test_gen_nakamoto),
           TEST(test_gen_zipf_scale_merge_split),
           TEST(test_expansion_order),
           TEST(test_range),
           TEST(test_bad_inputs),
           TEST(test_table),
           TEST(test_manifest_identity),
           TEST(test_shipped_studies)};
  for (size_t i = 0; i < G_N_ELEMENTS(t); i++)
    if (!CU_add_test(s, t[i].n, t[i].f)) return 1;
  return 0;
}
