/* test_compare.c: unit tests of analysis/compare.c: flattening, shared and one-sided keys, the Student-t
 * interval and Welch's test on known data, the delays read from observations.csv (the study's definition)
 * and their two-sample KS tests, loading sides from files and directories with every error message, and the
 * JSON and text outputs; and of the CSV record reader of analysis/util.c.
 *
 * Reference values marked "mpmath" were computed by tests/data/stats-reference.py (python3, mpmath 1.3.0,
 * 40 digits), independently of GSL: t quantiles and p-values from the regularised incomplete beta function
 * (root finding for the quantile), the Kolmogorov series summed to convergence. */
#include "compare.h"
#include "cunit-main.h"
#include "input.h"
#include "util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

#define CLOSE(a, b, tol) CU_ASSERT_DOUBLE_EQUAL((a), (b), (tol))

static json_t *J(const char *text) {
  json_error_t e;
  json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
  if (!j) fprintf(stderr, "bad test JSON: %s\n", e.text);
  g_assert(j);
  return j;
}

/* A side of one run per JSON text. */
static AnCompareSide *side_of(const char *label, const char *const *texts, guint n) {
  AnCompareSide *s = an_compare_side_new(label);
  for (guint i = 0; i < n; i++) {
    g_autoptr(json_t) j = J(texts[i]);
    g_autofree char *run = g_strdup_printf("%s#%u", label, i);
    g_autoptr(GError) e = NULL;
    CU_ASSERT_TRUE(an_compare_side_add_run(s, run, j, NULL, &e));
  }
  return s;
}

static char *tmp_dir(void) {
  g_autoptr(GError) e = NULL;
  char *d = g_dir_make_tmp("sim-test-compare-XXXXXX", &e);
  g_assert(d);
  return d;
}

static void put_file(const char *dir, const char *name, const char *text) {
  g_autofree char *p = g_build_filename(dir, name, NULL);
  g_autofree char *parent = g_path_get_dirname(p);
  g_mkdir_with_parents(parent, 0777);
  g_assert(g_file_set_contents(p, text, -1, NULL));
}

/* Removes a directory tree made by a test. */
static void rm_tree(const char *path) {
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    GDir *d = g_dir_open(path, 0, NULL);
    for (const char *n; d && (n = g_dir_read_name(d));) {
      g_autofree char *p = g_build_filename(path, n, NULL);
      rm_tree(p);
    }
    if (d) g_dir_close(d);
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

/* ---- Flattening ---------------------------------------------------------------------------------------- */

static void test_flatten(void) {
  g_autoptr(json_t) j = J("{\"header\": {\"seed\": 7, \"x\": 1},"
                          " \"sim\": {\"events\": 10, \"wall_s\": 0.5, \"events_per_s\": 20.0,"
                          "           \"peak_rss_bytes\": 100, \"stop_reason\": \"height\"},"
                          " \"chain\": {\"uncle_rate\": 0.25, \"ok\": true, \"bad\": false, \"none\": null},"
                          " \"pools\": [{\"name\": \"A\", \"main_share\": 0.6, \"blocks\": 3},"
                          "             {\"name\": \"B\", \"main_share\": 0.4, \"blocks\": 2}],"
                          " \"runs\": {\"histogram\": [[1, 5], [3, 2.5]]},"
                          " \"list\": [1.5, {\"k\": 2}],"
                          " \"dup\": [{\"name\": \"X\", \"v\": 1}, {\"name\": \"X\", \"v\": 2}],"
                          " \"propagation\": {\"vantage_delay_ms\": {\"median\": 70.5}}}");
  static const struct {
    const char *key;
    double v;
  } want[] = {
      {"sim.events", 10},
      {"chain.uncle_rate", 0.25},
      {"chain.ok", 1},
      {"chain.bad", 0},
      {"pools[A].main_share", 0.6},
      {"pools[A].blocks", 3},
      {"pools[B].main_share", 0.4},
      {"pools[B].blocks", 2},
      {"runs.histogram[1]", 5},
      {"runs.histogram[3]", 2.5},
      {"list[0]", 1.5},
      {"list[1].k", 2},
      {"dup[0].v", 1},
      {"dup[1].v", 2},
      {"propagation.vantage_delay_ms.median", 70.5},
  };
  g_autoptr(GArray) f = an_compare_flatten(j);
  CU_ASSERT_EQUAL_FATAL(f->len, G_N_ELEMENTS(want));
  for (guint i = 0; i < f->len; i++) {
    const AnFlatMetric *m = &g_array_index(f, AnFlatMetric, i);
    if (strcmp(m->key, want[i].key) != 0)
      fprintf(stderr, "key %u: %s, expected %s\n", i, m->key, want[i].key);
    CU_ASSERT_STRING_EQUAL(m->key, want[i].key);
    CU_ASSERT_EQUAL(m->value, want[i].v);
  }
  /* Not a histogram: first elements repeated, or not integers; they are indexed instead. */
  g_autoptr(json_t) h = J("{\"a\": [[1, 5], [1, 6]], \"b\": [[0.5, 1]]}");
  g_autoptr(GArray) g = an_compare_flatten(h);
  CU_ASSERT_EQUAL_FATAL(g->len, 6);
  CU_ASSERT_STRING_EQUAL(g_array_index(g, AnFlatMetric, 0).key, "a[0][0]");
  CU_ASSERT_STRING_EQUAL(g_array_index(g, AnFlatMetric, 3).key, "a[1][1]");
  CU_ASSERT_EQUAL(g_array_index(g, AnFlatMetric, 3).value, 6);
  CU_ASSERT_STRING_EQUAL(g_array_index(g, AnFlatMetric, 4).key, "b[0][0]");
}

/* ---- Shared and one-sided metrics ---------------------------------------------------------------------- */

static void test_shared_and_unshared(void) {
  const char *ta[] = {"{\"chain\": {\"x\": 1, \"y\": 0, \"z\": 5, \"zero\": 0}, \"only_a\": 3}"};
  const char *tb[] = {"{\"chain\": {\"w\": 1, \"zero\": 2, \"x\": 3, \"y\": 0}, \"label\": \"text\"}"};
  g_autoptr(AnCompareSide) a = side_of("A", ta, 1);
  g_autoptr(AnCompareSide) b = side_of("B", tb, 1);
  g_autoptr(GError) e = NULL;
  g_autoptr(AnCompare) c = an_compare_new(a, b, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  /* Shared, in A's order. */
  CU_ASSERT_EQUAL_FATAL(an_compare_n_metrics(c), 3);
  CU_ASSERT_STRING_EQUAL(an_compare_metric(c, 0)->key, "chain.x");
  CU_ASSERT_STRING_EQUAL(an_compare_metric(c, 1)->key, "chain.y");
  CU_ASSERT_STRING_EQUAL(an_compare_metric(c, 2)->key, "chain.zero");
  const AnCompareMetric *x = an_compare_find(c, "chain.x");
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  CU_ASSERT(x->a == 1 && x->b == 3 && x->diff == 2 && x->rel == 2 && x->n_a == 1 && x->n_b == 1);
  CU_ASSERT(isnan(x->ci_a.lo) && isnan(x->ci_b.hi) && isnan(x->welch_p));
  CU_ASSERT_EQUAL(an_compare_find(c, "chain.y")->rel, 0.0); /* equal zeros: no change */
  CU_ASSERT(isnan(an_compare_find(c, "chain.zero")->rel));  /* from 0 to 2: undefined */
  CU_ASSERT_PTR_NULL(an_compare_find(c, "chain.w"));
  /* One side only, each in its side's order. */
  CU_ASSERT_EQUAL_FATAL(an_compare_n_only(c, FALSE), 2);
  CU_ASSERT_STRING_EQUAL(an_compare_only(c, FALSE, 0)->key, "chain.z");
  CU_ASSERT_EQUAL(an_compare_only(c, FALSE, 0)->value, 5);
  CU_ASSERT_STRING_EQUAL(an_compare_only(c, FALSE, 1)->key, "only_a");
  CU_ASSERT_EQUAL_FATAL(an_compare_n_only(c, TRUE), 1);
  CU_ASSERT_STRING_EQUAL(an_compare_only(c, TRUE, 0)->key, "chain.w");
  CU_ASSERT_EQUAL(an_compare_n_dists(c), 0);

  /* A filter keeps the keys with its prefix, on both lists. */
  AnCompareOptions o = {.filter = "chain.z"};
  g_autoptr(AnCompare) f = an_compare_new(a, b, &o, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(an_compare_n_metrics(f), 1);
  CU_ASSERT_STRING_EQUAL(an_compare_metric(f, 0)->key, "chain.zero");
  CU_ASSERT_EQUAL(an_compare_n_only(f, FALSE), 1);
  CU_ASSERT_EQUAL(an_compare_n_only(f, TRUE), 0);

  /* Nothing shared: the exact messages. */
  o.filter = "pools[";
  CU_ASSERT_PTR_NULL(an_compare_new(a, b, &o, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT(g_error_matches(e, AN_COMPARE_ERROR, AN_COMPARE_ERROR_NOTHING_SHARED));
  CU_ASSERT_STRING_EQUAL(e->message, "B: no numeric metric shared with A under 'pools['");
  g_clear_error(&e);
  const char *tc[] = {"{\"other\": 1}"};
  g_autoptr(AnCompareSide) d = side_of("C", tc, 1);
  CU_ASSERT_PTR_NULL(an_compare_new(a, d, NULL, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "C: no numeric metric shared with A");
  g_clear_error(&e);

  /* A summary that is not an object. */
  g_autoptr(json_t) arr = J("[1, 2]");
  CU_ASSERT_FALSE(an_compare_side_add_run(d, "arr.json", arr, NULL, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "arr.json: not a summary (expected a JSON object)");
  CU_ASSERT_EQUAL(an_compare_side_n_runs(d), 1);
}

/* ---- Statistics ---------------------------------------------------------------------------------------- */

/* a = {1..5}: mean 3, s = √2.5, t_{0.975}(4) = 2.7764451051977944, interval [1.0367568385224423,
 * 4.9632431614775577] (mpmath). With b = {2, 4, ..., 12}: Welch t = 2.3763541031440183,
 * ν = 6.9722557297949337, p = 0.049284338206730521 (mpmath). */
#define CI_LO 1.0367568385224423
#define CI_HI 4.9632431614775577
#define W_T 2.3763541031440183
#define W_DF 6.9722557297949337
#define W_P 0.049284338206730521

static void test_mean_ci_and_welch(void) {
  const double a[] = {1, 2, 3, 4, 5}, b[] = {2, 4, 6, 8, 10, 12};
  AnEstimate ci;
  CU_ASSERT_TRUE_FATAL(an_compare_mean_ci(a, 5, 0.95, &ci));
  CLOSE(ci.value, 3, 1e-15);
  CLOSE(ci.se, sqrt(2.5 / 5), 1e-15);
  CLOSE(ci.lo, CI_LO, 1e-10);
  CLOSE(ci.hi, CI_HI, 1e-10);
  AnWelch w;
  CU_ASSERT_TRUE_FATAL(an_compare_welch(a, 5, b, 6, &w));
  CLOSE(w.t, W_T, 1e-12);
  CLOSE(w.df, W_DF, 1e-12);
  CLOSE(w.p, W_P, 1e-10);
  /* Swapping the sides flips t only. */
  AnWelch s;
  CU_ASSERT_TRUE_FATAL(an_compare_welch(b, 6, a, 5, &s));
  CLOSE(s.t, -W_T, 1e-12);
  CLOSE(s.p, W_P, 1e-12);
  /* Undefined cases. */
  const double k[] = {4, 4, 4};
  CU_ASSERT_FALSE(an_compare_mean_ci(a, 1, 0.95, &ci));
  CU_ASSERT_FALSE(an_compare_welch(a, 1, b, 6, &w));
  CU_ASSERT_FALSE(an_compare_welch(k, 3, k, 2, &w));
  /* One constant side: ν = n_other − 1. */
  CU_ASSERT_TRUE(an_compare_welch(k, 3, a, 5, &w));
  CLOSE(w.df, 4, 1e-12);
}

/* The same data as replicates: five runs on A, six on B. */
static void test_replicates(void) {
  const char *ta[] = {"{\"m\": 1, \"c\": 7}", "{\"m\": 2, \"c\": 7}", "{\"m\": 3, \"c\": 7}",
                      "{\"m\": 4, \"c\": 7}", "{\"m\": 5, \"c\": 7, \"rare\": 1}"};
  const char *tb[] = {"{\"m\": 2, \"c\": 7}", "{\"m\": 4, \"c\": 7}",  "{\"m\": 6, \"c\": 7}",
                      "{\"m\": 8, \"c\": 7}", "{\"m\": 10, \"c\": 7}", "{\"m\": 12, \"c\": 7, \"rare\": 3}"};
  g_autoptr(AnCompareSide) a = side_of("A", ta, 5);
  g_autoptr(AnCompareSide) b = side_of("B", tb, 6);
  CU_ASSERT_EQUAL(an_compare_side_n_runs(a), 5);
  CU_ASSERT_STRING_EQUAL(an_compare_side_run_label(a, 4), "A#4");
  g_autoptr(AnCompare) c = an_compare_new(a, b, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  const AnCompareMetric *m = an_compare_find(c, "m");
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(m->n_a == 5 && m->n_b == 6);
  CLOSE(m->a, 3, 1e-15);
  CLOSE(m->b, 7, 1e-15);
  CLOSE(m->ci_a.lo, CI_LO, 1e-10);
  CLOSE(m->ci_a.hi, CI_HI, 1e-10);
  CLOSE(m->welch_t, W_T, 1e-12);
  CLOSE(m->welch_df, W_DF, 1e-12);
  CLOSE(m->welch_p, W_P, 1e-10);
  /* A constant metric: a zero-width interval and no Welch test. */
  const AnCompareMetric *k = an_compare_find(c, "c");
  CU_ASSERT(k->ci_a.lo == 7 && k->ci_a.hi == 7 && isnan(k->welch_p));
  /* A key in one run per side: the mean of those runs, n = 1, no interval. */
  const AnCompareMetric *r = an_compare_find(c, "rare");
  CU_ASSERT(r->n_a == 1 && r->n_b == 1 && r->a == 1 && r->b == 3 && isnan(r->ci_a.lo));

  g_autoptr(json_t) root = json_object();
  an_compare_add_json(c, root);
  json_t *jm = json_object_get(json_object_get(root, "metrics"), "m");
  CU_ASSERT_PTR_NOT_NULL_FATAL(jm);
  CLOSE(json_real_value(json_object_get(json_object_get(jm, "welch"), "p")), W_P, 1e-10);
  CLOSE(json_real_value(json_array_get(json_object_get(jm, "ci_a"), 0)), CI_LO, 1e-10);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(jm, "n_b")), 6);
  json_t *jr = json_object_get(json_object_get(root, "metrics"), "rare");
  CU_ASSERT_PTR_NULL(json_object_get(jr, "ci_a"));
  CU_ASSERT_PTR_NULL(json_object_get(jr, "welch"));
  CU_ASSERT_PTR_NULL(json_object_get(json_object_get(json_object_get(root, "metrics"), "c"), "welch"));
  CU_ASSERT_EQUAL(json_array_size(json_object_get(json_object_get(root, "b"), "runs")), 6);
  CU_ASSERT_PTR_NULL(json_object_get(root, "only_a"));
  CU_ASSERT_PTR_NULL(json_object_get(root, "distributions"));
}

/* ---- observations.csv and the delay distributions ------------------------------------------------------ */

#define OBS_HEADER                                                                                           \
  "BlockHash,Number,BlockType,PTimeStamp,QTimeStamp,RTimeStamp,FirstObservation,PDiff,QDiff,RDiff,"          \
  "MiningPool,"                                                                                              \
  "NumTransactions,SameMinerSeqLen,PositionInsideSeq,Difficulty,BlockSize,InterblockTime,"                   \
  "InterblockTimePerPool\n"

/* A: block 1 first seen by P (Q +10 ms, R +20 ms); block 2 first seen by Q with R tied (P +5 ms, R keeps its
 * 0); block 3 not seen by R (left out). So P = {5}, Q = {10}, R = {20, 0}, all = {10, 20, 5, 0}. */
static const char OBS_A[] =
    OBS_HEADER "0x01,1,Main,1.000,1.010,1.020,P,0.000,0.010,0.020,\"Pool, Inc.\",3,1,1,100,500,,\n"
               "0x02,2,Main,2.005,2.000,2.000,Q,0.005,0.000,0.000,Other,0,1,1,100,500,1.000,\n"
               "0x03,2,Uncle,3.000,3.030,,P,0.000,0.030,,Other,0,,,100,500,,\n";
/* B: P = {40}, Q = {50, 1}, R = {2}, all = {40, 50, 1, 2}. CRLF line ends. */
static const char OBS_B[] =
    OBS_HEADER "0x01,1,Main,1.040,1.050,1.000,R,0.040,0.050,0.000,X,1,1,1,100,500,,\r\n"
               "0x02,2,Main,2.000,2.001,2.002,P,0.000,0.001,0.002,X,1,1,1,100,500,1.000,\r\n";

static void test_observations_ks(void) {
  g_autofree char *dir = tmp_dir();
  put_file(dir, "a/summary.json", "{\"chain\": {\"main\": 2}}");
  put_file(dir, "a/observations.csv", OBS_A);
  put_file(dir, "b/summary.json", "{\"chain\": {\"main\": 2}}");
  put_file(dir, "b/observations.csv", OBS_B);
  g_autofree char *pa = g_build_filename(dir, "a", NULL);
  g_autofree char *pb = g_build_filename(dir, "b", NULL);
  g_autoptr(GError) e = NULL;
  g_autoptr(AnCompareSide) a = an_compare_side_load(pa, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  g_autoptr(AnCompareSide) b = an_compare_side_load(pb, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  g_autoptr(AnCompare) c = an_compare_new(a, b, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL_FATAL(an_compare_n_dists(c), 4);

  /* Pooled: A = {0, 5, 10, 20}, B = {1, 2, 40, 50}. F_A − F_B at 0, 1, 2, 5, 10, 20, 40, 50: 1/4, 0, −1/4,
   * 0, 1/4, 1/2, 1/4, 0, so D = 1/2; p = Q_KS(√2/2) = 0.69937419913101563 (mpmath). Medians 7.5 and 21. */
  const AnCompareDist *all = an_compare_dist(c, 0);
  CU_ASSERT_STRING_EQUAL(all->key, "observations.vantage_delay_ms");
  CU_ASSERT_PTR_NULL(all->vantage);
  CU_ASSERT(all->n_a == 4 && all->n_b == 4);
  CLOSE(all->median_a_ms, 7.5, 1e-9);
  CLOSE(all->median_b_ms, 21, 1e-9);
  CLOSE(all->ks.d, 0.5, 1e-15);
  CLOSE(all->ks.p, 0.69937419913101563, 1e-13);
  /* Per vantage, in A's column order. */
  const AnCompareDist *p = an_compare_dist(c, 1), *q = an_compare_dist(c, 2), *r = an_compare_dist(c, 3);
  CU_ASSERT_STRING_EQUAL(p->key, "observations.vantage_delay_ms[P]");
  CU_ASSERT_STRING_EQUAL(p->vantage, "P");
  CU_ASSERT(p->n_a == 1 && p->n_b == 1 && p->median_a_ms == 5 && p->median_b_ms == 40 && p->ks.d == 1);
  CU_ASSERT(q->n_a == 1 && q->n_b == 2);
  CLOSE(q->median_b_ms, 25.5, 1e-9);
  /* R: A = {0, 20}, B = {2}: F_A − F_B = 1/2 at 0, −1/2 at 2, 0 at 20: D = 1/2;
   * p = Q_KS(√(2/3)/2) = 0.99625519237939879 (mpmath). */
  CU_ASSERT(r->n_a == 2 && r->n_b == 1);
  CLOSE(r->ks.d, 0.5, 1e-15);
  CLOSE(r->ks.p, 0.99625519237939879, 1e-13);

  /* The filter applies to distribution keys too. */
  AnCompareOptions o = {.filter = "observations.vantage_delay_ms["};
  g_autoptr(AnCompare) f = an_compare_new(a, b, &o, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(an_compare_n_dists(f), 3);
  CU_ASSERT_EQUAL(an_compare_n_metrics(f), 0);

  /* A side given as its summary file has no observations: no distributions. */
  g_autofree char *sa = g_build_filename(pa, "summary.json", NULL);
  g_autoptr(AnCompareSide) a_file = an_compare_side_load(sa, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a_file);
  g_autoptr(AnCompare) g = an_compare_new(a_file, b, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(an_compare_n_dists(g), 0);
  CU_ASSERT_EQUAL(an_compare_n_metrics(g), 1);

  g_autoptr(json_t) root = json_object();
  an_compare_add_json(c, root);
  json_t *jd = json_object_get(root, "distributions");
  CU_ASSERT_EQUAL(json_object_size(jd), 4);
  CU_ASSERT_PTR_NULL(json_object_get(json_object_get(jd, "observations.vantage_delay_ms"), "vantage"));
  CU_ASSERT_STRING_EQUAL(
      json_string_value(json_object_get(json_object_get(jd, "observations.vantage_delay_ms[R]"), "vantage")),
      "R");
  CLOSE(json_real_value(json_object_get(json_object_get(jd, "observations.vantage_delay_ms[R]"), "ks_d")),
        0.5, 0);
  rm_tree(dir);
}

/* Loads `csv` as the observations of a run and checks the error message (with "<path>" replaced). */
static void expect_obs_error(const char *dir, const char *csv, const char *want_after_path) {
  put_file(dir, "bad.csv", csv);
  g_autofree char *path = g_build_filename(dir, "bad.csv", NULL);
  g_autoptr(AnCompareSide) s = an_compare_side_new("S");
  g_autoptr(json_t) j = J("{\"x\": 1}");
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(an_compare_side_add_run(s, "run", j, path, &e));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  g_autofree char *want = g_strconcat(path, want_after_path, NULL);
  if (strcmp(e->message, want) != 0) fprintf(stderr, "got '%s', expected '%s'\n", e->message, want);
  CU_ASSERT_STRING_EQUAL(e->message, want);
  CU_ASSERT_EQUAL(an_compare_side_n_runs(s), 0); /* unchanged */
}

static void test_observations_errors(void) {
  g_autofree char *dir = tmp_dir();
  expect_obs_error(dir, "", ":1: empty file (expected the observations.csv header)");
  expect_obs_error(dir, "a,b\n1,2\n", ":1: no FirstObservation column (not an observations.csv table)");
  expect_obs_error(dir, "FirstObservation,PDiff\nP,0\n",
                   ":1: no <V>Diff column with its <V>TimeStamp (not an observations.csv table)");
  expect_obs_error(dir, OBS_HEADER "0x01,1,Main\n", ":2: 3 fields, expected 18");
  expect_obs_error(dir, OBS_HEADER "0x01,1,Main,1,1,1,P,0,abc,0,X,1,1,1,100,500,,\n",
                   ":2: QDiff: not a number: 'abc'");
  expect_obs_error(
      dir,
      OBS_HEADER "0x01,1,Main,1,1,1,P,0,0,0,X,1,1,1,100,500,,\n0x02,1,Main,1,1,1,Z,0,0,0,X,1,1,1,100,500,,\n",
      ":3: FirstObservation 'Z' is not one of the vantages");
  expect_obs_error(dir, OBS_HEADER "0x01,1,Main,1,1,1,P,0,0,0,\"X,1,1,1,100,500,,\n",
                   ":2: quoted field not closed at the end of the file");
  expect_obs_error(dir, OBS_HEADER "0x01,1,Main,1,1,1,P,0,0,0,\"X\"y,1,1,1,100,500,,\n",
                   ":2: text after the closing quote of field 11");
  g_autofree char *missing = g_build_filename(dir, "none.csv", NULL);
  g_autoptr(AnCompareSide) s = an_compare_side_new("S");
  g_autoptr(json_t) j = J("{\"x\": 1}");
  g_autoptr(GError) e = NULL;
  CU_ASSERT_FALSE(an_compare_side_add_run(s, "run", j, missing, &e));
  g_autofree char *want = g_strconcat(missing, ": cannot open: No such file or directory", NULL);
  CU_ASSERT_STRING_EQUAL(e ? e->message : "", want);
  rm_tree(dir);
}

/* ---- Loading sides ------------------------------------------------------------------------------------- */

static void expect_load_error(const char *spec, const char *want) {
  g_autoptr(GError) e = NULL;
  g_autoptr(AnCompareSide) s = an_compare_side_load(spec, &e);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT(g_error_matches(e, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT));
  if (strcmp(e->message, want) != 0) fprintf(stderr, "got '%s', expected '%s'\n", e->message, want);
  CU_ASSERT_STRING_EQUAL(e->message, want);
}

static void test_load_errors(void) {
  g_autofree char *dir = tmp_dir();
  put_file(dir, "text.json", "this is not json\n");
  put_file(dir, "empty.json", " \n");
  put_file(dir, "array.json", "[1]");
  put_file(dir, "dup.json", "{\"a\": 1,\n \"a\": 2}");
  put_file(dir, "ok.json", "{\"a\": 1}");
  put_file(dir, "nothing/notes.txt", "x");
  g_autofree char *missing = g_build_filename(dir, "nope", NULL);
  g_autofree char *text = g_build_filename(dir, "text.json", NULL);
  g_autofree char *empty = g_build_filename(dir, "empty.json", NULL);
  g_autofree char *array = g_build_filename(dir, "array.json", NULL);
  g_autofree char *dup = g_build_filename(dir, "dup.json", NULL);
  g_autofree char *ok = g_build_filename(dir, "ok.json", NULL);
  g_autofree char *nothing = g_build_filename(dir, "nothing", NULL);
  g_autofree char *m1 = g_strconcat(missing, ": cannot open: No such file or directory", NULL);
  g_autofree char *m2 = g_strconcat(text, ":1:4: '[' or '{' expected near 'this'", NULL);
  g_autofree char *m3 = g_strconcat(empty, ":1:1: empty file (expected a JSON object)", NULL);
  g_autofree char *m4 = g_strconcat(array, ": not a summary (expected a JSON object)", NULL);
  g_autofree char *m5 = g_strconcat(dup, ":2:4: duplicate object key near '\"a\"'", NULL);
  g_autofree char *m6 = g_strconcat(nothing, ": no summary.json in it or in its subdirectories", NULL);
  expect_load_error(missing, m1);
  expect_load_error(text, m2);
  expect_load_error(empty, m3);
  expect_load_error(array, m4);
  expect_load_error(dup, m5);
  expect_load_error(nothing, m6);
  /* In a list, the first bad path is named. */
  g_autofree char *list = g_strconcat(ok, ",", missing, NULL);
  expect_load_error(list, m1);
  g_autofree char *holes = g_strconcat(ok, ",,", ok, NULL);
  g_autofree char *m7 = g_strconcat(holes, ": empty path in the list", NULL);
  expect_load_error(holes, m7);
  rm_tree(dir);
}

static void test_load_replicates(void) {
  g_autofree char *dir = tmp_dir();
  put_file(dir, "reps/r2/summary.json", "{\"m\": 2}");
  put_file(dir, "reps/r1/summary.json", "{\"m\": 1}");
  put_file(dir, "reps/r10/summary.json", "{\"m\": 10}");
  put_file(dir, "reps/junk/notes.txt", "not a run");
  put_file(dir, "reps/README", "not a run either");
  g_autofree char *reps = g_build_filename(dir, "reps", NULL);
  g_autoptr(GError) e = NULL;
  g_autoptr(AnCompareSide) s = an_compare_side_load(reps, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_STRING_EQUAL(an_compare_side_label(s), reps);
  CU_ASSERT_EQUAL_FATAL(an_compare_side_n_runs(s), 3);
  /* Name order (strcmp), whatever the directory's order. */
  g_autofree char *r1 = g_build_filename(reps, "r1", "summary.json", NULL);
  g_autofree char *r10 = g_build_filename(reps, "r10", "summary.json", NULL);
  CU_ASSERT_STRING_EQUAL(an_compare_side_run_label(s, 0), r1);
  CU_ASSERT_STRING_EQUAL(an_compare_side_run_label(s, 1), r10);
  /* A comma-separated list of a summary file and a results directory. */
  g_autofree char *r2dir = g_build_filename(reps, "r2", NULL);
  g_autofree char *spec = g_strconcat(r1, ",", r2dir, NULL);
  g_autoptr(AnCompareSide) l = an_compare_side_load(spec, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(l);
  CU_ASSERT_EQUAL(an_compare_side_n_runs(l), 2);
  g_autoptr(AnCompare) c = an_compare_new(s, l, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  const AnCompareMetric *m = an_compare_find(c, "m");
  CLOSE(m->a, 13.0 / 3, 1e-12);
  CLOSE(m->b, 1.5, 1e-15);
  rm_tree(dir);
}

/* ---- Text output --------------------------------------------------------------------------------------- */

static void test_print_table(void) {
  const char *ta[] = {"{\"chain\": {\"uncle_rate\": 0.05, \"zero\": 0}, \"a_only\": 1}"};
  const char *tb[] = {"{\"chain\": {\"uncle_rate\": 0.1, \"zero\": 3}}"};
  g_autoptr(AnCompareSide) a = side_of("runs/a", ta, 1);
  g_autoptr(AnCompareSide) b = side_of("runs/b", tb, 1);
  g_autoptr(AnCompare) c = an_compare_new(a, b, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  an_compare_print_table(c, f);
  fclose(f);
  const char *want = "A: runs/a (1 run)\n"
                     "B: runs/b (1 run)\n"
                     "\n"
                     "shared metrics (2):\n"
                     "metric               A    B   B-A       rel\n"
                     "chain.uncle_rate  0.05  0.1  0.05  +100.00%\n"
                     "chain.zero           0    3     3         -\n"
                     "\n"
                     "only in A (1):\n"
                     "metric  A  n\n"
                     "a_only  1  1\n";
  if (strcmp(buf, want) != 0) fprintf(stderr, "table:\n%s", buf);
  CU_ASSERT_STRING_EQUAL(buf, want);
  free(buf);
}

/* ---- The CSV record reader (analysis/util.c) ----------------------------------------------------------- */

static void test_csv_reader(void) {
  const char text[] = "a,\"b,c\",\"say \"\"hi\"\"\"\r\n"
                      "\"two\nlines\",,end\n"
                      "last,no newline";
  FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
  g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func(g_free);
  guint line = 0;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_EQUAL_FATAL(r->len, 3);
  CU_ASSERT_STRING_EQUAL(r->pdata[0], "a");
  CU_ASSERT_STRING_EQUAL(r->pdata[1], "b,c");
  CU_ASSERT_STRING_EQUAL(r->pdata[2], "say \"hi\"");
  CU_ASSERT_EQUAL(line, 1);
  CU_ASSERT_TRUE_FATAL(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_EQUAL_FATAL(r->len, 3);
  CU_ASSERT_STRING_EQUAL(r->pdata[0], "two\nlines");
  CU_ASSERT_STRING_EQUAL(r->pdata[1], "");
  CU_ASSERT_STRING_EQUAL(r->pdata[2], "end");
  CU_ASSERT_EQUAL(line, 3);
  CU_ASSERT_TRUE_FATAL(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_EQUAL_FATAL(r->len, 2);
  CU_ASSERT_STRING_EQUAL(r->pdata[1], "no newline");
  CU_ASSERT_FALSE(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_PTR_NULL(e);
  CU_ASSERT_EQUAL(r->len, 0);
  fclose(f);
}

/* A NUL byte would cut its field short without a word (a pool name "Nul\0Pool" read as "Nul"): an error, in
 * a quoted field or a plain one, naming the field. */
static void test_csv_reader_nul(void) {
  static const char plain[] = "address,name\n0x00,Nul\0Pool\n", quoted[] = "a,\"b\0c\"\n";
  const struct {
    const char *text;
    size_t len;
    guint records_before, line;
    const char *message;
  } cases[] = {{plain, sizeof plain - 1, 1, 1, "NUL byte in field 2"},
               {quoted, sizeof quoted - 1, 0, 0, "NUL byte in field 2"}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    FILE *f = fmemopen((void *)cases[i].text, cases[i].len, "r");
    g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func(g_free);
    guint line = 0;
    g_autoptr(GError) e = NULL;
    for (guint k = 0; k < cases[i].records_before; k++)
      CU_ASSERT_TRUE(sim_csv_read_record(f, r, &line, &e));
    CU_ASSERT_FALSE(sim_csv_read_record(f, r, &line, &e));
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE(g_error_matches(e, SIM_CSV_ERROR, SIM_CSV_ERROR_NUL));
    CU_ASSERT_STRING_EQUAL(e->message, cases[i].message);
    CU_ASSERT_EQUAL(line, cases[i].line);
    fclose(f);
  }
}

int register_suites(void) {
  ADD_SUITE("flatten", TEST(test_flatten), TEST(test_shared_and_unshared));
  ADD_SUITE("statistics", TEST(test_mean_ci_and_welch), TEST(test_replicates));
  ADD_SUITE("observations", TEST(test_observations_ks), TEST(test_observations_errors));
  ADD_SUITE("load", TEST(test_load_errors), TEST(test_load_replicates));
  ADD_SUITE("output", TEST(test_print_table), TEST(test_csv_reader), TEST(test_csv_reader_nul));
  return 0;
}
