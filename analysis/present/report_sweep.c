/* report_sweep.c: the report page of a sweep: its table and per-metric figures. */
#include "report-private.h"

typedef struct {
  char *name;
  int mean, sd, ci95; /* columns; sd and ci95 may be -1 */
} SweepMetric;

static void sweep_metric_free(gpointer x) {
  SweepMetric *m = x;
  g_free(m->name);
  g_free(m);
}

typedef struct {
  char *path;
  char **header;
  guint ncols;
  int n_col;          /* also the number of parameters */
  GPtrArray *rows;    /* char ** (GStrv) */
  GArray *lines;      /* guint: each row's line in the file */
  GPtrArray *metrics; /* SweepMetric * */
} Sweep;

static void sweep_free(Sweep *sw) {
  if (!sw) return;
  g_free(sw->path);
  g_strfreev(sw->header);
  if (sw->rows) g_ptr_array_unref(sw->rows);
  if (sw->lines) g_array_unref(sw->lines);
  if (sw->metrics) g_ptr_array_unref(sw->metrics);
  g_free(sw);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Sweep, sweep_free)

static Sweep *sweep_load(const char *path, GError **error) {
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return NULL;
  g_autoptr(Sweep) sw = g_new0(Sweep, 1);
  sw->path = g_strdup(path);
  sw->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  sw->lines = g_array_new(FALSE, FALSE, sizeof(guint));
  sw->metrics = g_ptr_array_new_with_free_func(sweep_metric_free);
  /* `sim sweep` writes point, the parameters, replicates, then KEY:mean, KEY:sd, KEY:ci95; the older shape
   * (parameters, n, KEY.mean ...) is read too. */
  sw->n_col = rp_csv_col(c, "replicates", FALSE, NULL);
  if (sw->n_col < 0) sw->n_col = rp_csv_col(c, "n", TRUE, error);
  if (sw->n_col < 0) return NULL;
  if (sw->n_col == 0) {
    rp_input_error(error, path, "no parameter column before 'n'");
    return NULL;
  }
  for (guint i = (guint)sw->n_col + 1; i < c->ncols; i++) {
    const char *h = c->header[i];
    const char *sep = g_str_has_suffix(h, ":mean") ? ":" : ".";
    if (!(g_str_has_suffix(h, ".mean") || g_str_has_suffix(h, ":mean")) || strlen(h) == strlen(".mean")) continue;
    SweepMetric *m = g_new0(SweepMetric, 1);
    m->name = g_strndup(h, strlen(h) - strlen(".mean"));
    m->mean = (int)i;
    g_autofree char *sd = g_strconcat(m->name, sep, "sd", NULL), *ci = g_strconcat(m->name, sep, "ci95", NULL);
    m->sd = rp_csv_col(c, sd, FALSE, NULL);
    m->ci95 = rp_csv_col(c, ci, FALSE, NULL);
    g_ptr_array_add(sw->metrics, m);
  }
  if (!sw->metrics->len) {
    rp_input_error(error, path, "no metric column (<metric>.mean) after 'n'");
    return NULL;
  }
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    double x;
    if (!rp_csv_num(c, sw->n_col, FALSE, &x, error)) return NULL;
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      if (!rp_csv_num(c, m->mean, TRUE, &x, error)) return NULL;
      if (m->sd >= 0 && !rp_csv_num(c, m->sd, TRUE, &x, error)) return NULL;
      if (m->ci95 >= 0 && !rp_csv_num(c, m->ci95, TRUE, &x, error)) return NULL;
    }
    char **row = g_new0(char *, (gsize)c->ncols + 1);
    for (guint i = 0; i < c->ncols; i++)
      row[i] = g_strdup(rp_csv_field(c, (int)i));
    g_ptr_array_add(sw->rows, row);
    g_array_append_val(sw->lines, c->line);
  }
  if (r < 0) return NULL;
  if (!sw->rows->len) {
    rp_input_error(error, path, "no data row");
    return NULL;
  }
  sw->header = g_steal_pointer(&c->header);
  sw->ncols = c->ncols;
  /* A leading point index is not a parameter: drop it so that column 0 is the first parameter. */
  if (sw->n_col > 1 && strcmp(sw->header[0], "point") == 0) {
    g_free(sw->header[0]);
    memmove(sw->header, sw->header + 1, sizeof(char *) * sw->ncols);
    for (guint k = 0; k < sw->rows->len; k++) {
      char **row = g_ptr_array_index(sw->rows, k);
      g_free(row[0]);
      memmove(row, row + 1, sizeof(char *) * sw->ncols);
    }
    sw->ncols--;
    sw->n_col--;
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      m->mean--;
      if (m->sd >= 0) m->sd--;
      if (m->ci95 >= 0) m->ci95--;
    }
  }
  return g_steal_pointer(&sw);
}

static SweepMetric *sweep_metric(const Sweep *sw, const char *name) {
  for (guint i = 0; i < sw->metrics->len; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (strcmp(m->name, name) == 0) return m;
  }
  return NULL;
}

/* The metrics to draw (SweepMetric *, not owned), as report.h says. */
static GPtrArray *sweep_choose(const Sweep *sw, const AnReportOptions *opt, GError **error) {
  GPtrArray *out = g_ptr_array_new();
  if (opt && opt->metrics && opt->metrics[0]) {
    for (const char *const *m = opt->metrics; *m; m++) {
      SweepMetric *sm = sweep_metric(sw, *m);
      if (!sm) {
        g_ptr_array_unref(out);
        rp_input_error(error, sw->path, "no metric '%s' (no column '%s.mean')", *m, *m);
        return NULL;
      }
      if (!g_ptr_array_find(out, sm, NULL)) g_ptr_array_add(out, sm); /* once: figure ids are unique */
    }
    return out;
  }
  static const char *const key[] = {"chain.uncle_rate", "chain.stale_share", "runs.max"};
  for (size_t i = 0; i < G_N_ELEMENTS(key); i++)
    if (sweep_metric(sw, key[i])) g_ptr_array_add(out, sweep_metric(sw, key[i]));
  static const char *const largest[] = {AN_REPORT_LARGEST_POOL_METRICS};
  SweepMetric *lp = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(largest) && !lp; i++)
    lp = sweep_metric(sw, largest[i]);
  /* `sim sweep` names pool metrics pools[NAME].key, in the scenario's pool order (largest first in the
   * shipped scenarios): the first pool's main share, else any pool share. */
  for (guint i = 0; i < sw->metrics->len && !lp; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (g_str_has_prefix(m->name, "pools[") && g_str_has_suffix(m->name, "].main_share")) lp = m;
  }
  for (guint i = 0; i < sw->metrics->len && !lp; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (g_str_has_prefix(m->name, "pools") && strstr(m->name, "share")) lp = m;
  }
  if (lp) g_ptr_array_add(out, lp);
  if (out->len == 0)
    for (guint j = 0; j < MIN(4u, sw->metrics->len); j++)
      g_ptr_array_add(out, g_ptr_array_index(sw->metrics, j));
  return out;
}

static double row_num(char **row, int col) {
  double v;
  return col >= 0 && rp_parse_num(row[col], &v) ? v : NAN;
}

/* A figure id from a metric name: letters, digits and '-'. */
static char *id_of(const char *name) {
  GString *s = g_string_new("sweep-");
  for (const char *q = name; *q; q++)
    g_string_append_c(s, g_ascii_isalnum(*q) ? g_ascii_tolower(*q) : '-');
  return g_string_free(s, FALSE);
}

static void sweep_figure(Page *p, const Sweep *sw, const SweepMetric *m) {
  guint nrows = sw->rows->len;
  /* x: the first parameter, numeric if every value is a number; else category indexes. */
  gboolean numeric = TRUE;
  double xmin = INFINITY, xmax = -INFINITY;
  for (guint i = 0; i < nrows; i++) {
    double v = row_num(g_ptr_array_index(sw->rows, i), 0);
    if (isnan(v)) numeric = FALSE;
    xmin = MIN(xmin, v);
    xmax = MAX(xmax, v);
  }
  g_autoptr(GPtrArray) cats = g_ptr_array_new(); /* the first parameter's values, first-seen order */
  g_autofree double *x = g_new(double, nrows);
  for (guint i = 0; i < nrows; i++) {
    char **row = g_ptr_array_index(sw->rows, i);
    if (numeric) {
      x[i] = row_num(row, 0);
      continue;
    }
    guint j = 0;
    while (j < cats->len && strcmp(g_ptr_array_index(cats, j), row[0]) != 0)
      j++;
    if (j == cats->len) g_ptr_array_add(cats, row[0]);
    x[i] = j;
  }
  /* Series: the other parameters' values. */
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
  g_autofree guint *series_of = g_new(guint, nrows);
  for (guint i = 0; i < nrows; i++) {
    char **row = g_ptr_array_index(sw->rows, i);
    g_autoptr(GString) key = g_string_new(NULL);
    for (int c = 1; c < sw->n_col; c++)
      g_string_append_printf(key, "%s%s = %s", c > 1 ? ", " : "", sw->header[c], row[c]);
    guint j = 0;
    while (j < keys->len && strcmp(g_ptr_array_index(keys, j), key->str) != 0)
      j++;
    if (j == keys->len) g_ptr_array_add(keys, g_strdup(key->str));
    series_of[i] = j;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  rp_gp_style(s);
  g_autofree guint *order = g_new(guint, nrows);
  guint drawn = 0;
  g_autoptr(GString) plot = g_string_new("plot ");
  for (guint k = 0; k < keys->len; k++) {
    /* this series' rows sorted by x (insertion sort: tables are small) */
    guint n = 0;
    for (guint i = 0; i < nrows; i++) {
      if (series_of[i] != k || isnan(row_num(g_ptr_array_index(sw->rows, i), m->mean))) continue;
      guint j = n++;
      while (j > 0 && x[order[j - 1]] > x[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    if (!n) continue;
    g_autofree char *bn = g_strdup_printf("S%u", k);
    rp_gp_block_begin(s, bn);
    for (guint j = 0; j < n; j++) {
      char **row = g_ptr_array_index(sw->rows, order[j]);
      double mean = row_num(row, m->mean), ci = row_num(row, m->ci95);
      if (isnan(ci)) ci = 0;
      rp_gp_num(s, x[order[j]]);
      g_string_append_c(s, '\t');
      rp_gp_num(s, mean);
      g_string_append_c(s, '\t');
      rp_gp_num(s, mean - ci);
      g_string_append_c(s, '\t');
      rp_gp_num(s, mean + ci);
      g_string_append_c(s, '\n');
    }
    rp_gp_block_end(s);
    guint lt = (k % 8) + 1;
    if (drawn) g_string_append(plot, ", ");
    if (m->ci95 >= 0)
      g_string_append_printf(
          plot, "$S%u using 1:3:4 with filledcurves lt %u fs transparent solid 0.2 noborder, ", k, lt);
    g_string_append_printf(plot, "$S%u using 1:2 with linespoints lt %u title ", k, lt);
    rp_gp_str(plot, keys->len > 1 ? (const char *)g_ptr_array_index(keys, k)
                               : (m->ci95 >= 0 ? "mean ± 95% CI" : "mean"));
    drawn++;
  }
  g_autofree char *title = g_strdup_printf("%s against %s", m->name, sw->header[0]);
  g_autofree char *id = id_of(m->name);
  if (!drawn) {
    rp_page_no_figure(p, id, title, "No value of this metric in table.csv: figure omitted.");
    return;
  }
  g_string_append(s, "set xlabel ");
  rp_gp_str(s, sw->header[0]);
  g_string_append(s, "\nset ylabel ");
  rp_gp_str(s, m->name);
  g_string_append(s, "\nset key outside top center horizontal\n");
  if (numeric && xmin > 0 && xmax / xmin >= 100) g_string_append(s, "set logscale x\n");
  if (numeric && xmin == xmax) {
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    double pad = xmin != 0 ? fabs(xmin) * 0.5 : 1;
    g_string_append_printf(s, "set xrange [%s:%s]\n", g_ascii_formatd(a, sizeof a, "%.17g", xmin - pad),
                           g_ascii_formatd(b, sizeof b, "%.17g", xmax + pad));
  }
  if (!numeric) {
    g_string_append_printf(s, "set xrange [-0.5:%u.5]\nset xtics (", cats->len - 1);
    for (guint j = 0; j < cats->len; j++) {
      if (j) g_string_append(s, ", ");
      rp_gp_str(s, g_ptr_array_index(cats, j));
      g_string_append_printf(s, " %u", j);
    }
    g_string_append(s, ")\n");
  }
  g_string_append_len(s, plot->str, (gssize)plot->len);
  g_string_append_c(s, '\n');
  g_autofree char *note =
      m->ci95 >= 0
          ? g_markup_printf_escaped("The mean of %s over the replicates of each point, with a band of ± its "
                                    "95%% confidence half-width (%s.ci95), from table.csv.",
                                    m->name, m->name)
          : g_markup_printf_escaped("The mean of %s over the replicates of each point, from table.csv "
                                    "(which has no %s.ci95 column).",
                                    m->name, m->name);
  rp_page_figure(p, id, title, 860, 460, s, note);
}

gboolean rp_render_sweep(Page *p, const AnReportOptions *opt, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "table.csv", NULL);
  g_autoptr(Sweep) sw = sweep_load(path, error);
  if (!sw) return FALSE;
  g_autoptr(GPtrArray) chosen = sweep_choose(sw, opt, error);
  if (!chosen) return FALSE;
  g_autofree char *base = g_path_get_basename(p->dir);
  g_autofree char *title = g_strdup_printf("sim report: %s (sweep)", base);
  rp_page_head(p->html, title, opt);
  GString *h = p->html;
  g_string_append(h, "<dl class=\"meta\">\n");
  rp_meta_item(h, "directory", p->dir);
  g_autoptr(GString) params = g_string_new(NULL);
  for (int c = 0; c < sw->n_col; c++)
    g_string_append_printf(params, "%s%s", c ? ", " : "", sw->header[c]);
  rp_meta_item(h, "parameters", params->str);
  g_autofree char *npoints = g_strdup_printf("%u", sw->rows->len);
  rp_meta_item(h, "points", npoints);
  g_string_append(h, "</dl>\n");
  if (!p->gnuplot) g_string_append(h, "<p class=\"notice\">gnuplot not found: figures omitted.</p>\n");

  g_string_append(h, "<h2 id=\"metrics\">Points (table.csv)</h2>\n");
  g_autoptr(GPtrArray) cols = g_ptr_array_new_with_free_func(g_free);
  for (int c = 0; c <= sw->n_col; c++)
    g_ptr_array_add(cols, g_strdup(sw->header[c]));
  for (guint i = 0; i < sw->metrics->len; i++)
    g_ptr_array_add(
        cols, g_strdup_printf("%s (mean ± ci95)", ((SweepMetric *)g_ptr_array_index(sw->metrics, i))->name));
  rp_table_begin(h, NULL, (const char *const *)cols->pdata, cols->len);
  for (guint r = 0; r < sw->rows->len; r++) {
    char **row = g_ptr_array_index(sw->rows, r);
    g_string_append(h, "<tr>");
    for (int c = 0; c <= sw->n_col; c++)
      rp_td_field(h, row[c]);
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      double mean = row_num(row, m->mean), ci = row_num(row, m->ci95);
      g_string_append(h, "<td class=\"num\">");
      rp_put_num(h, mean);
      if (!isnan(ci)) {
        g_string_append(h, " ± ");
        rp_put_num(h, ci);
      }
      g_string_append(h, "</td>");
    }
    g_string_append(h, "</tr>\n");
  }
  rp_table_end(h);
  g_string_append(h, "<h2 id=\"figures\">Figures</h2>\n");
  for (guint i = 0; i < chosen->len; i++)
    sweep_figure(p, sw, g_ptr_array_index(chosen, i));
  rp_page_tail(p, opt);
  return TRUE;
}
