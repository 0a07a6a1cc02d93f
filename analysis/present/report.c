/* report.c: the HTML report of a results directory (a run, a replay or a sweep): the entry points. */
#include "report-private.h"

/* clang-format off */
G_DEFINE_QUARK(an-report-error-quark, an_report_error)
/* clang-format on */

gboolean rp_input_error(GError **error, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT, "%s: %s", path, msg);
  return FALSE;
}

static void remove_tmpdir(const char *dir) {
  if (!dir) return;
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    for (const char *n = g_dir_read_name(d); n; n = g_dir_read_name(d)) {
      g_autofree char *f = g_build_filename(dir, n, NULL);
      g_unlink(f);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

char *an_report_render(const char *dir, const AnReportOptions *opt, GPtrArray *warnings, AnReportStats *stats,
                       GError **error) {
  g_return_val_if_fail(dir != NULL, NULL);
  if (!g_file_test(dir, G_FILE_TEST_EXISTS)) {
    rp_input_error(error, dir, "%s", g_strerror(ENOENT));
    return NULL;
  }
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    rp_input_error(error, dir, "not a directory");
    return NULL;
  }
  Page p = {.dir = dir, .html = g_string_sized_new(1 << 16), .warnings = warnings};
  p.gnuplot = an_report_find_gnuplot();
  p.stats.gnuplot_found = p.gnuplot != NULL;
  if (!p.gnuplot) rp_page_warn(&p, "gnuplot not found: figures omitted");
  g_autofree char *table = g_build_filename(dir, "table.csv", NULL);
  p.stats.sweep = g_file_test(table, G_FILE_TEST_EXISTS);
  gboolean ok = p.stats.sweep ? rp_render_sweep(&p, opt, error) : rp_render_run(&p, opt, error);
  remove_tmpdir(p.tmpdir);
  g_free(p.tmpdir);
  g_free(p.gnuplot);
  if (stats) *stats = p.stats;
  if (!ok) {
    g_string_free(p.html, TRUE);
    return NULL;
  }
  return g_string_free(p.html, FALSE);
}

gboolean an_report_write(const char *dir, const char *out_path, const AnReportOptions *opt,
                         GPtrArray *warnings, AnReportStats *stats, GError **error) {
  g_return_val_if_fail(dir != NULL, FALSE);
  g_autofree char *html = an_report_render(dir, opt, warnings, stats, error);
  if (!html) return FALSE;
  g_autofree char *dflt = g_build_filename(dir, "report.html", NULL);
  const char *path = out_path ? out_path : dflt;
  g_autoptr(GError) e = NULL;
  if (!sim_output_write_file(path, html, -1, &e)) {
    g_set_error_literal(error, AN_REPORT_ERROR, AN_REPORT_ERROR_OUTPUT, e->message);
    return FALSE;
  }
  return TRUE;
}
