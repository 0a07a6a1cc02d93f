/* test_report.c: the HTML report (analysis/report.c) on a real run of scenarios/geo-small.json with
 * transactions, on hand-written fixtures (tests/data/report/), without gnuplot, and on bad inputs. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "params.h"
#include "report.h"
#include "run.h"
#include "scenario.h"

static char *tmp_dir;   /* everything this program writes */
static char *run_dir;   /* tmp_dir/run: the outputs of one run */
static json_t *summary; /* its summary.json */
static gboolean have_gnuplot;

static const struct {
  const char *id, *title;
} RUN_FIGURES[] = {
    {"propagation", "Block propagation: delay after the first observation, CDF per vantage point"},
    {"first-seen", "First-seen shares per pool and vantage point"},
    {"runs", "Run lengths against the i.i.d. expectation"},
    {"commit", "Commit time against confirmations k, per vantage point"},
    {"pools", "Main share against hash share and reward share, per pool"},
};

/* geo-small with the transaction model: every input of a run report (observations.csv, tx_commit.csv). */
static int suite_init(void) {
  g_unsetenv("SIM_GNUPLOT");
  g_autofree char *gp = an_report_find_gnuplot();
  have_gnuplot = gp != NULL;
  if (!have_gnuplot) fprintf(stderr, "\ngnuplot not found: figure checks reduced to the no-gnuplot page\n");
  tmp_dir = g_dir_make_tmp("sim-report-test-XXXXXX", NULL);
  if (!tmp_dir) return 1;
  run_dir = g_build_filename(tmp_dir, "run", NULL);
  const char *sets[] = {"chain.tx_rate_per_s=0",
                        "transactions={\"rate_per_s\":8.2,\"propagation\":\"region\"}", NULL};
  g_autoptr(SimDiag) d = sim_diag_new("scenarios/geo-small.json");
  g_autoptr(SimScenario) sc = sim_scenario_load_file("scenarios/geo-small.json", sets, d);
  if (!sc) {
    g_autofree char *msg = sim_diag_join(d);
    fprintf(stderr, "%s\n", msg);
    return 1;
  }
  char *argv[] = {(char *)"test-report"};
  SimRunOptions opt = {.out_dir = run_dir, .argc = 1, .argv = argv};
  g_autoptr(GError) e = NULL;
  if (!sim_run(sc, &opt, &summary, &e)) {
    fprintf(stderr, "sim_run: %s\n", e->message);
    return 1;
  }
  return 0;
}

static void rm_rf(const char *path) {
  if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
    GDir *dir = g_dir_open(path, 0, NULL);
    if (dir) {
      for (const char *n = g_dir_read_name(dir); n; n = g_dir_read_name(dir)) {
        g_autofree char *p = g_build_filename(path, n, NULL);
        rm_rf(p);
      }
      g_dir_close(dir);
    }
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

static int suite_clean(void) {
  if (tmp_dir) rm_rf(tmp_dir);
  g_clear_pointer(&tmp_dir, g_free);
  g_clear_pointer(&run_dir, g_free);
  g_clear_pointer(&summary, json_decref);
  return 0;
}

/* ---- Checks on a page --------------------------------------------------------------------------------- */

static guint count(const char *hay, const char *needle) {
  guint n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + strlen(needle), needle))
    n++;
  return n;
}

/* One document, balanced elements of the kinds we write, nothing that reaches outside the page. */
static void check_well_formed(const char *html) {
  CU_ASSERT_TRUE(g_str_has_prefix(html, "<!DOCTYPE html>\n<html lang=\"en\">"));
  CU_ASSERT_TRUE(g_str_has_suffix(html, "</html>\n"));
  CU_ASSERT_EQUAL(count(html, "<html"), 1);
  CU_ASSERT_EQUAL(count(html, "</html>"), 1);
  CU_ASSERT_EQUAL(count(html, "<body>"), 1);
  CU_ASSERT_EQUAL(count(html, "<svg"), count(html, "</svg>"));
  CU_ASSERT_EQUAL(count(html, "<figure"), count(html, "</figure>"));
  CU_ASSERT_EQUAL(count(html, "<table>"), count(html, "</table>"));
  CU_ASSERT_EQUAL(count(html, "<tr>"), count(html, "</tr>"));
  /* the only URI is the SVG namespace, once per figure */
  CU_ASSERT_EQUAL(count(html, "http://") + count(html, "https://"),
                  count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CU_ASSERT_EQUAL(count(html, "<svg"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CU_ASSERT_EQUAL(count(html, "xlink"), 0);
  /* scripts only inline (the journey's, with a trace): none loads anything */
  CU_ASSERT_EQUAL(count(html, "<script"),
                  count(html, "<script>") + count(html, "<script type=\"application/json\" id=\"journey-data\">"));
  CU_ASSERT_EQUAL(count(html, "<link"), 0);
  CU_ASSERT_EQUAL(count(html, "<img"), 0);
  CU_ASSERT_EQUAL(count(html, "src="), 0);
  CU_ASSERT_EQUAL(count(html, "<?xml"), 0);

  /* ids are unique and every internal reference has its target */
  g_autoptr(GHashTable) ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  static const char *const id_starts[] = {" id='", " id=\""};
  for (size_t k = 0; k < G_N_ELEMENTS(id_starts); k++)
    for (const char *p = strstr(html, id_starts[k]); p; p = strstr(p + 1, id_starts[k])) {
      const char *v = p + strlen(id_starts[k]);
      char *id = g_strndup(v, strcspn(v, "'\""));
      if (g_hash_table_contains(ids, id)) {
        fprintf(stderr, "duplicate id %s\n", id);
        CU_FAIL("duplicate id");
        g_free(id);
      } else {
        g_hash_table_add(ids, id);
      }
    }
  static const char *const ref_starts[] = {"href='#", "href=\"#", "url(#"};
  guint refs = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(ref_starts); k++)
    for (const char *p = strstr(html, ref_starts[k]); p; p = strstr(p + 1, ref_starts[k])) {
      const char *v = p + strlen(ref_starts[k]);
      g_autofree char *id = g_strndup(v, strcspn(v, "'\")"));
      CU_ASSERT_TRUE(g_hash_table_contains(ids, id));
      refs++;
    }
  CU_ASSERT_EQUAL(count(html, "href="), count(html, "href='#") + count(html, "href=\"#"));
  /* gnuplot's point symbols are <use> references (the map's SVG, drawn without gnuplot, has none) */
  if (count(html, "<svg") > count(html, "<svg id=\"map-svg\"")) CU_ASSERT_TRUE(refs > 0);
}

/* The figure `id` holds an inline <svg> whose first child element is <title>`title`</title>. */
static void check_figure(const char *html, const char *id, const char *title) {
  g_autofree char *start = g_strdup_printf("<figure id=\"fig-%s\">", id);
  const char *fig = strstr(html, start);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fig);
  const char *end = strstr(fig, "</figure>");
  CU_ASSERT_PTR_NOT_NULL_FATAL(end);
  const char *svg = strstr(fig, "<svg");
  CU_ASSERT_TRUE_FATAL(svg != NULL && svg < end);
  const char *svg_end = strstr(svg, "</svg>");
  CU_ASSERT_TRUE(svg_end != NULL && svg_end < end);
  g_autofree char *esc = g_markup_escape_text(title, -1);
  g_autofree char *t = g_strdup_printf("<title>%s</title>", esc);
  const char *tp = strstr(svg, "<title>");
  CU_ASSERT_TRUE(tp != NULL && tp < svg_end && strncmp(tp, t, strlen(t)) == 0);
  if (!(tp && strncmp(tp, t, strlen(t)) == 0)) fprintf(stderr, "figure %s: expected %s\n", id, t);
  CU_ASSERT_EQUAL(count(html, start), 1);
}

static char *render(const char *dir, const AnReportOptions *opt, AnReportStats *stats, GPtrArray *warnings) {
  g_autoptr(GError) e = NULL;
  char *html = an_report_render(dir, opt, warnings, stats, &e);
  if (!html) fprintf(stderr, "an_report_render(%s): %s\n", dir, e->message);
  return html;
}

/* ---- Tests -------------------------------------------------------------------------------------------- */

static void test_run_page(void) {
  AnReportStats st;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *html = render(run_dir, NULL, &st, warnings);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  check_well_formed(html);
  CU_ASSERT_FALSE(st.sweep);
  CU_ASSERT_EQUAL(st.figures_failed, 0);
  CU_ASSERT_TRUE(strstr(html, "<title>sim report: geo-small</title>") != NULL);
  for (size_t i = 0; i < G_N_ELEMENTS(RUN_FIGURES); i++) {
    g_autofree char *cap =
        g_strdup_printf("<figure id=\"fig-%s\">\n<figcaption>Figure %zu. ", RUN_FIGURES[i].id, i + 1);
    CU_ASSERT_TRUE(strstr(html, cap) != NULL);
    if (have_gnuplot) check_figure(html, RUN_FIGURES[i].id, RUN_FIGURES[i].title);
  }
  if (have_gnuplot) {
    CU_ASSERT_TRUE(st.gnuplot_found);
    CU_ASSERT_EQUAL(st.figures, G_N_ELEMENTS(RUN_FIGURES));
    /* the figures and the network map (geo-small; no journey without --trace-blocks) */
    CU_ASSERT_EQUAL(count(html, "<svg"), G_N_ELEMENTS(RUN_FIGURES) + 1);
    CU_ASSERT_EQUAL(count(html, "<svg id=\"map-svg\""), 1);
    CU_ASSERT_EQUAL(count(html, "id=\"journey-howto\""), 1);
    CU_ASSERT_EQUAL(warnings->len, 0);
    CU_ASSERT_EQUAL(count(html, "gnuplot not found"), 0);
    /* the data reached the figures: vantage point and pool names in the SVG text */
    CU_ASSERT_TRUE(strstr(html, ">WE (n = ") != NULL);
    CU_ASSERT_TRUE(strstr(html, ">Ethermine<") != NULL);
    CU_ASSERT_TRUE(strstr(html, ">i.i.d. expectation<") != NULL);
  }
  /* key metrics from summary.json, as the page formats them (4 significant digits) */
  char want[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(want, sizeof want, "%.4g",
                  json_number_value(json_object_get(json_object_get(summary, "chain"), "uncle_rate")));
  g_autofree char *row =
      g_strdup_printf("<td>chain.uncle_rate (uncles per main block)</td><td class=\"num\">%s</td>", want);
  CU_ASSERT_TRUE(strstr(html, row) != NULL);
  g_autofree char *k12 = g_strdup_printf(
      "<td>tx.commit_s.k12.median</td><td class=\"num\">%s</td>",
      g_ascii_formatd(want, sizeof want, "%.4g",
                      json_number_value(json_object_get(
                          json_object_get(json_object_get(json_object_get(summary, "tx"), "commit_s"), "k12"),
                          "median"))));
  CU_ASSERT_TRUE(strstr(html, k12) != NULL);
  CU_ASSERT_TRUE(strstr(html, "<caption>Pools (pools.csv)</caption>") != NULL);
  CU_ASSERT_TRUE(strstr(html, "<caption>Commit time (tx_commit.csv)</caption>") != NULL);
}

/* The CDF's sample is the summary's vantage_delay_ms sample, to the millisecond of observations.csv: the
 * same count, and quantiles within 0.5 ms (each value moves by at most 0.5 ms, so do order statistics and
 * their interpolations). */
static void test_delays_match_summary(void) {
  g_autofree char *path = g_build_filename(run_dir, "observations.csv", NULL);
  g_autoptr(GPtrArray) names = NULL, delays = NULL;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(an_report_read_delays(path, &names, &delays, &e));
  json_t *prop = json_object_get(summary, "propagation");
  CU_ASSERT_EQUAL(names->len, json_object_size(json_object_get(prop, "first_seen_share")));
  CU_ASSERT_STRING_EQUAL(g_ptr_array_index(names, 0), "WE");
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint v = 0; v < delays->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    g_array_append_vals(all, a->data, a->len);
    for (guint i = 0; i < a->len; i++)
      CU_ASSERT_TRUE(g_array_index(a, double, i) >= 0);
  }
  double seen = json_number_value(json_object_get(prop, "blocks_seen_by_all"));
  CU_ASSERT_EQUAL(all->len, (guint)seen * (names->len - 1));
}

static int cmp_double(gconstpointer a, gconstpointer b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quantile(GArray *sorted, double f) {
  double d = (sorted->len - 1) * f;
  guint i = (guint)floor(d);
  double lo = g_array_index(sorted, double, i);
  return i + 1 < sorted->len ? lo + (d - i) * (g_array_index(sorted, double, i + 1) - lo) : lo;
}

static void test_delay_quantiles(void) {
  g_autofree char *path = g_build_filename(run_dir, "observations.csv", NULL);
  g_autoptr(GPtrArray) names = NULL, delays = NULL;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE_FATAL(an_report_read_delays(path, &names, &delays, &e));
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint v = 0; v < delays->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    g_array_append_vals(all, a->data, a->len);
  }
  CU_ASSERT_TRUE_FATAL(all->len > 100);
  g_array_sort(all, cmp_double);
  json_t *d = json_object_get(json_object_get(summary, "propagation"), "vantage_delay_ms");
  static const struct {
    const char *key;
    double f;
  } q[] = {{"median", 0.5}, {"p90", 0.9}, {"p99", 0.99}};
  for (size_t i = 0; i < G_N_ELEMENTS(q); i++)
    CU_ASSERT_DOUBLE_EQUAL(quantile(all, q[i].f), json_number_value(json_object_get(d, q[i].key)),
                           0.5 + 1e-9);
}

/* Written where asked, atomically (no temp file left), byte-identical for the same inputs. */
static void test_write(void) {
  g_autoptr(GError) e = NULL;
  AnReportStats st;
  CU_ASSERT_TRUE_FATAL(an_report_write(run_dir, NULL, NULL, NULL, &st, &e));
  g_autofree char *dflt = g_build_filename(run_dir, "report.html", NULL);
  g_autofree char *a = NULL;
  CU_ASSERT_TRUE_FATAL(g_file_get_contents(dflt, &a, NULL, NULL));
  g_autofree char *other = g_build_filename(tmp_dir, "sub", "dir", "r.html", NULL);
  CU_ASSERT_TRUE_FATAL(an_report_write(run_dir, other, NULL, NULL, &st, &e));
  g_autofree char *b = NULL;
  CU_ASSERT_TRUE_FATAL(g_file_get_contents(other, &b, NULL, NULL));
  CU_ASSERT_STRING_EQUAL(a, b);
  GDir *dir = g_dir_open(run_dir, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
  for (const char *n = g_dir_read_name(dir); n; n = g_dir_read_name(dir))
    CU_ASSERT_TRUE(strcmp(n, ".sim-result") == 0 || (n[0] != '.' && (g_str_has_suffix(n, ".csv") || g_str_has_suffix(n, ".json") ||
                                   strcmp(n, "report.html") == 0)));
  g_dir_close(dir);
  g_unlink(dflt);
}

/* SIM_GNUPLOT naming no program: the page still has every table and figure slot, and says why. */
static void test_no_gnuplot(void) {
  g_setenv("SIM_GNUPLOT", "/nonexistent/gnuplot", TRUE);
  g_autofree char *gp = an_report_find_gnuplot();
  CU_ASSERT_PTR_NULL(gp);
  AnReportStats st;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *html = render(run_dir, NULL, &st, warnings);
  g_setenv("SIM_GNUPLOT", "", TRUE); /* empty: none either */
  g_autofree char *gp2 = an_report_find_gnuplot();
  CU_ASSERT_PTR_NULL(gp2);
  g_unsetenv("SIM_GNUPLOT");
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  check_well_formed(html);
  CU_ASSERT_FALSE(st.gnuplot_found);
  CU_ASSERT_EQUAL(st.figures, 0);
  CU_ASSERT_EQUAL(st.figures_failed, 0);
  CU_ASSERT_EQUAL(count(html, "<svg"), 1); /* the network map needs no gnuplot */
  CU_ASSERT_EQUAL(count(html, "<svg id=\"map-svg\""), 1);
  CU_ASSERT_EQUAL(count(html, "<p class=\"notice\">gnuplot not found: figures omitted.</p>"), 1);
  CU_ASSERT_EQUAL(count(html, "Figure omitted: gnuplot not found."), G_N_ELEMENTS(RUN_FIGURES));
  CU_ASSERT_EQUAL_FATAL(warnings->len, 1);
  CU_ASSERT_STRING_EQUAL(g_ptr_array_index(warnings, 0), "gnuplot not found: figures omitted");
  CU_ASSERT_TRUE(strstr(html, "<caption>Pools (pools.csv)</caption>") != NULL);
  CU_ASSERT_TRUE(strstr(html, "<caption>Runs of consecutive main blocks by one pool (runs.csv)</caption>") !=
                 NULL);
  CU_ASSERT_TRUE(
      strstr(html, "<caption>Delay after the first observation (first observer excluded)</caption>") != NULL);
}

/* A gnuplot that fails: the figure is replaced by its message, counted, and named in a warning. */
static void test_gnuplot_fails(void) {
  g_setenv("SIM_GNUPLOT", "false", TRUE);
  g_autofree char *gp = an_report_find_gnuplot();
  if (!gp) {
    g_unsetenv("SIM_GNUPLOT");
    CU_FAIL("no 'false' on PATH");
    return;
  }
  AnReportStats st;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *html = render("tests/data/report/run-min", NULL, &st, warnings);
  g_unsetenv("SIM_GNUPLOT");
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT_TRUE(st.gnuplot_found);
  CU_ASSERT_EQUAL(st.figures, 0);
  CU_ASSERT_EQUAL(st.figures_failed, 2);
  CU_ASSERT_EQUAL_FATAL(warnings->len, 2);
  CU_ASSERT_STRING_EQUAL(
      g_ptr_array_index(warnings, 0),
      "figure 1 (Run lengths against the i.i.d. expectation): gnuplot failed: Child process "
      "exited with code 1");
  CU_ASSERT_EQUAL(count(html, "<p class=\"notice\">Figure omitted: gnuplot failed: "), 2);
}

/* The least run directory: no propagation, no transactions; names that need CSV quoting and HTML escapes. */
static void test_run_min(void) {
  AnReportStats st;
  g_autofree char *html = render("tests/data/report/run-min", NULL, &st, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  check_well_formed(html);
  CU_ASSERT_EQUAL(count(html, "<figure"), 2);
  CU_ASSERT_EQUAL(count(html, "fig-propagation"), 0);
  CU_ASSERT_EQUAL(count(html, "fig-commit"), 0);
  CU_ASSERT_TRUE(strstr(html, "<td>Pool &quot;A&quot;, Ltd</td>") != NULL);
  CU_ASSERT_TRUE(strstr(html, "<td>B &amp; &lt;C&gt;</td>") != NULL);
  CU_ASSERT_EQUAL(count(html, "<C>"), 0);
  if (have_gnuplot) {
    CU_ASSERT_EQUAL(st.figures, 2);
    check_figure(html, "runs", "Run lengths against the i.i.d. expectation");
    check_figure(html, "pools", "Main share against hash share and reward share, per pool");
  }
}

static void test_sweep(void) {
  AnReportStats st;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *html = render("tests/data/report/sweep", NULL, &st, warnings);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  check_well_formed(html);
  CU_ASSERT_TRUE(st.sweep);
  CU_ASSERT_TRUE(strstr(html, "<title>sim report: sweep (sweep)</title>") != NULL);
  /* the key metrics, in this order; sim.wall_s (not a key metric) in the table only */
  static const char *const ids[] = {"sweep-chain-uncle-rate", "sweep-chain-stale-share", "sweep-runs-max",
                                    "sweep-pools-largest-main-share"};
  static const char *const titles[] = {
      "chain.uncle_rate against pools.top_share", "chain.stale_share against pools.top_share",
      "runs.max against pools.top_share", "pools.largest_main_share against pools.top_share"};
  CU_ASSERT_EQUAL(count(html, "<figure"), 4);
  const char *prev = html;
  for (size_t i = 0; i < G_N_ELEMENTS(ids); i++) {
    g_autofree char *fig = g_strdup_printf("<figure id=\"fig-%s\">", ids[i]);
    const char *at = strstr(html, fig);
    CU_ASSERT_TRUE(at != NULL && at > prev);
    if (at) prev = at;
    if (have_gnuplot) check_figure(html, ids[i], titles[i]);
  }
  CU_ASSERT_EQUAL(count(html, "fig-sweep-sim-wall-s"), 0);
  CU_ASSERT_TRUE(strstr(html, "<th>sim.wall_s (mean ± ci95)</th>") != NULL);
  CU_ASSERT_TRUE(strstr(html, "<td class=\"num\">0.074 ± 0.001753</td>") != NULL);
  if (have_gnuplot) {
    CU_ASSERT_EQUAL(st.figures, 4);
    /* one series per value of the second parameter, with its band */
    CU_ASSERT_TRUE(strstr(html, ">uncles.model = ethereum<") != NULL);
    CU_ASSERT_TRUE(strstr(html, ">uncles.model = no-self-uncle<") != NULL);
    CU_ASSERT_TRUE(strstr(html, "fill-opacity") != NULL || strstr(html, "opacity") != NULL);
  }

  /* chosen metrics */
  const char *only[] = {"sim.wall_s", NULL};
  AnReportOptions opt = {.metrics = only};
  g_autofree char *one = render("tests/data/report/sweep", &opt, &st, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(one);
  CU_ASSERT_EQUAL(count(one, "<figure"), 1);
  CU_ASSERT_EQUAL(count(one, "<figure id=\"fig-sweep-sim-wall-s\">"), 1);
  const char *none[] = {"chain.nope", NULL};
  opt.metrics = none;
  g_autoptr(GError) e = NULL;
  g_autofree char *bad = an_report_render("tests/data/report/sweep", &opt, NULL, NULL, &e);
  CU_ASSERT_PTR_NULL(bad);
  CU_ASSERT_TRUE_FATAL(e != NULL);
  CU_ASSERT_STRING_EQUAL(e->message, "tests/data/report/sweep/table.csv: no metric 'chain.nope' (no column "
                                     "'chain.nope.mean')");
}

/* Writes `text` as DIR/name. */
static void put(const char *dir, const char *name, const char *text) {
  g_autofree char *p = g_build_filename(dir, name, NULL);
  CU_ASSERT_TRUE(g_file_set_contents(p, text, -1, NULL));
}

/* A copy of the fixture run-min in tmp_dir/NAME (returned; g_free). */
static char *copy_min(const char *name) {
  char *dir = g_build_filename(tmp_dir, name, NULL);
  g_mkdir_with_parents(dir, 0777);
  static const char *const files[] = {"summary.json", "pools.csv", "runs.csv"};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *src = g_build_filename("tests/data/report/run-min", files[i], NULL);
    g_autofree char *text = NULL;
    CU_ASSERT_TRUE(g_file_get_contents(src, &text, NULL, NULL));
    put(dir, files[i], text);
  }
  return dir;
}

/* `dir`'s report fails with exactly "dir/<expected>" (or `expected` alone when it starts with '/'). */
static void expect_error(const char *dir, const char *expected) {
  g_autoptr(GError) e = NULL;
  g_autofree char *out = g_build_filename(tmp_dir, "never.html", NULL);
  gboolean ok = an_report_write(dir, out, NULL, NULL, NULL, &e);
  CU_ASSERT_FALSE(ok);
  CU_ASSERT_FALSE(g_file_test(out, G_FILE_TEST_EXISTS));
  if (!e) {
    CU_FAIL("no error");
    return;
  }
  CU_ASSERT_TRUE(g_error_matches(e, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT));
  g_autofree char *want = expected[0] == '/' ? g_strdup(expected) : g_build_filename(dir, expected, NULL);
  CU_ASSERT_STRING_EQUAL(e->message, want);
  if (strcmp(e->message, want) != 0) fprintf(stderr, "got  %s\nwant %s\n", e->message, want);
}

/* A CSV can hold any bytes: invalid UTF-8 in a pool name reaches the page as U+FFFD, in the table and the
 * figure, and the page stays well formed. */
static void test_invalid_utf8(void) {
  g_autofree char *dir = copy_min("utf8");
  put(dir, "pools.csv",
      "pool,hash_share,main_share,reward_share\nP\xff\xfe,0.5,0.5,0.5\nQ\xc3,0.5,0.5,0.5\n");
  AnReportStats st;
  g_autofree char *html = render(dir, NULL, &st, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT_TRUE(g_utf8_validate(html, -1, NULL));
  check_well_formed(html);
  CU_ASSERT_TRUE(strstr(html, "<td>P\xef\xbf\xbd\xef\xbf\xbd</td>") != NULL);
  CU_ASSERT_TRUE(strstr(html, "<td>Q\xef\xbf\xbd</td>") != NULL);
  if (have_gnuplot) {
    CU_ASSERT_EQUAL(st.figures, 2);
    CU_ASSERT_EQUAL(st.figures_failed, 0);
  }
}

/* A replay of logs without TxMsg.log writes tx_commit.csv with no pair and no statistic: no figure to draw,
 * which is no failure (gnuplot refused the all-undefined plot and the report exited 1). A series without
 * data beside one with data is left out of the plot, not drawn empty. */
static void test_commit_without_data(void) {
  g_autofree char *dir = copy_min("commit-empty");
  put(dir, "tx_commit.csv", "k,vantage,pairs,median_s,mean_s,p90_s\n0,,0,,,\n0,A,0,,,\n3,,0,,,\n3,A,0,,,\n");
  AnReportStats st;
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *html = render(dir, NULL, &st, warnings);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  check_well_formed(html);
  CU_ASSERT_EQUAL(st.figures_failed, 0);
  CU_ASSERT_EQUAL(warnings->len, have_gnuplot ? 0 : 1); /* "gnuplot not found" only */
  CU_ASSERT_EQUAL(count(html,
                        "<figure id=\"fig-commit\">\n<figcaption>Figure 2. Commit time against "
                        "confirmations k, per vantage point</figcaption>\n<p class=\"omitted\">tx_commit.csv "
                        "has no commit time (no transaction was seen and committed): figure omitted.</p>"),
                  1);
  CU_ASSERT_EQUAL(count(html, "<caption>Commit time (tx_commit.csv)</caption>"), 1);
  if (have_gnuplot) CU_ASSERT_EQUAL(st.figures, 2);

  g_autofree char *dir2 = copy_min("commit-half");
  put(dir2, "tx_commit.csv",
      "k,vantage,pairs,median_s,mean_s,p90_s\n0,,2,10,11,12\n0,A,2,10,11,12\n0,B,0,,,\n3,,1,40,40,40\n"
      "3,A,1,40,40,40\n3,B,0,,,\n");
  g_autofree char *html2 = render(dir2, NULL, &st, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html2);
  CU_ASSERT_EQUAL(st.figures_failed, 0);
  if (have_gnuplot) {
    CU_ASSERT_EQUAL(st.figures, 3);
    check_figure(html2, "commit", "Commit time against confirmations k, per vantage point");
  }
}

static void test_bad_inputs(void) {
  g_autofree char *missing = g_build_filename(tmp_dir, "missing", NULL);
  g_autofree char *m1 = g_strdup_printf("%s: No such file or directory", missing);
  expect_error(missing, m1);
  g_autofree char *empty = g_build_filename(tmp_dir, "empty", NULL);
  g_mkdir(empty, 0777);
  expect_error(empty, "summary.json: No such file or directory");
  g_autofree char *file = g_build_filename(empty, "plain", NULL);
  put(empty, "plain", "x");
  g_autofree char *m2 = g_strdup_printf("%s: not a directory", file);
  expect_error(file, m2);
  expect_error("tests/data/report/bad-runs", "runs.csv: line 3: 3 fields, expected 4 (as in the header)");

  static const struct {
    const char *file, *text, *error;
  } cases[] = {
      {"summary.json", "{\"chain\": {\"heights\": 3,}}",
       "summary.json:1:25: string or '}' expected near '}'"},
      {"summary.json", "{\"a\": 1, \"a\": 2}",
       "summary.json:1:12: duplicate object key near '\"a\"'"},
      {"summary.json", "[1]", "summary.json: not a JSON object"},
      {"runs.csv", "", "runs.csv: empty file, expected a header line"},
      {"runs.csv", "length,count,count_ge\n1,2,3\n", "runs.csv: missing column 'expected_iid_ge'"},
      {"runs.csv", "length,count,count_ge,expected_iid_ge\n1,2,x,4\n",
       "runs.csv: line 2: column 'count_ge': not a number: 'x'"},
      {"runs.csv", "length,count,count_ge,expected_iid_ge\n1,2,3,\n",
       "runs.csv: line 2: column 'expected_iid_ge': not a number: ''"},
      {"runs.csv", "length,count,count_ge,expected_iid_ge\r\n1,2,3,4\r\n2,\"1\n",
       "runs.csv: line 3: unterminated quoted field"},
      {"runs.csv", "length,count,count_ge,expected_iid_ge\n1,2,3,4\"\n",
       "runs.csv: line 2: quote inside an unquoted field"},
      {"runs.csv", "length,count,count_ge,expected_iid_ge\n\"1\"2,2,3,4\n",
       "runs.csv: line 2: text after a closing quote"},
      {"runs.csv", "length,,count_ge,expected_iid_ge\n", "runs.csv: line 1: empty column name (column 2)"},
      {"pools.csv", "pool,hash_share,main_share,reward_share\nA,0.5,0.5,nan\n",
       "pools.csv: line 2: column 'reward_share': not a number: 'nan'"},
      {"observations.csv",
       "BlockHash,Number,FirstObservation,ADiff,BDiff,MiningPool\n0x1,1,C,0.000,0.010,P\n",
       "observations.csv: line 2: FirstObservation 'C' is not a vantage point of the header"},
      {"observations.csv", "BlockHash,FirstObservation,ADiff,Bdelay,MiningPool\n",
       "observations.csv: column 'Bdelay' between FirstObservation and MiningPool is not a <V>Diff column"},
      {"observations.csv", "BlockHash,Number,FirstObservation,ADiff,BDiff,MiningPool\n0x1,1,A,0.000,1e,P\n",
       "observations.csv: line 2: column 'BDiff': not a number: '1e'"},
      {"tx_commit.csv", "k,vantage,pairs,median_s,mean_s\n", "tx_commit.csv: missing column 'p90_s'"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *name = g_strdup_printf("bad%zu", i);
    g_autofree char *dir = copy_min(name);
    put(dir, cases[i].file, cases[i].text);
    expect_error(dir, cases[i].error);
  }

  /* an output that cannot be written */
  g_autoptr(GError) e = NULL;
  g_autofree char *out = g_build_filename(file, "sub", "r.html", NULL);
  CU_ASSERT_FALSE(an_report_write("tests/data/report/run-min", out, NULL, NULL, NULL, &e));
  CU_ASSERT_TRUE_FATAL(e != NULL);
  CU_ASSERT_TRUE(g_error_matches(e, AN_REPORT_ERROR, AN_REPORT_ERROR_OUTPUT));
  g_autofree char *want = g_strdup_printf("cannot create output directory %s/sub: Not a directory", file);
  CU_ASSERT_STRING_EQUAL(e->message, want);
}

int register_suites(void) {
  CU_pSuite s = CU_add_suite("report", suite_init, suite_clean);
  if (!s) return 1;
  static const struct {
    const char *n;
    CU_TestFunc f;
  } t[] = {TEST(test_run_page),        TEST(test_delays_match_summary),
           TEST(test_delay_quantiles), TEST(test_write),
           TEST(test_no_gnuplot),      TEST(test_gnuplot_fails),
           TEST(test_run_min),         TEST(test_invalid_utf8),
           TEST(test_sweep),           TEST(test_commit_without_data),
           TEST(test_bad_inputs)};
  for (size_t i = 0; i < G_N_ELEMENTS(t); i++)
    if (!CU_add_test(s, t[i].n, t[i].f)) return 1;
  return 0;
}
