/* report_run.c: the report page of one run (or replay): metrics, tables and figures. */
#include "report-private.h"

json_t *rp_load_summary(const char *path, GError **error) {
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    rp_input_error(error, path, "%s", g_strerror(ENOENT));
    return NULL;
  }
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  json_t *doc = sim_json_load_file(path, 0, SIM_JSON_BLANK_AS_SYNTAX, &pb, &e);
  if (!doc) {
    if (e->code == SIM_INPUT_ERROR_SYNTAX)
      g_set_error(error, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT, "%s:%s", path, e->message);
    else if (e->code == SIM_INPUT_ERROR_OPEN || e->code == SIM_INPUT_ERROR_READ)
      rp_input_error(error, path, "%s", g_strerror(pb.err_no));
    else
      rp_input_error(error, path, "%s", e->message);
    return NULL;
  }
  if (!json_is_object(doc)) {
    json_decref(doc);
    rp_input_error(error, path, "not a JSON object");
    return NULL;
  }
  return doc;
}

void rp_page_head(GString *h, const char *title, const AnReportOptions *opt) {
  g_string_append(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  if (opt && opt->generator) {
    g_string_append(h, "<meta name=\"generator\" content=\"");
    rp_put_esc(h, opt->generator);
    g_string_append(h, "\">\n");
  }
  g_string_append(h, "<title>");
  rp_put_esc(h, title);
  g_string_append(
      h, "</title>\n<style>\n"
         "body{font-family:sans-serif;max-width:1000px;margin:1.5em auto;padding:0 "
         "1em;color:#222;line-height:1.4}\n"
         "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\n"
         "table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}\n"
         "caption{text-align:left;font-weight:bold;padding:0.3em 0}\n"
         "th,td{border:1px solid #ccc;padding:0.2em 0.6em;text-align:left}th{background:#f3f3f3}\n"
         "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
         "figure{margin:1.5em 0}figcaption{font-weight:bold;margin-bottom:0.4em}\n"
         "figure svg{display:block;width:100%;height:auto}\n"
         ".notice{background:#fff4ce;border:1px solid #e0c36b;padding:0.5em 0.8em}\n"
         ".omitted{color:#666;font-style:italic}.note{font-size:0.9em;color:#444}\n"
         "dl.meta{display:grid;grid-template-columns:max-content auto;gap:0.1em 1em;font-size:0.9em}\n"
         "dl.meta dt{font-weight:bold}dl.meta dd{margin:0;word-break:break-all}\n"
         "footer{margin-top:3em;font-size:0.8em;color:#666}\n"
         "</style>\n</head>\n<body>\n<h1>");
  rp_put_esc(h, title);
  g_string_append(h, "</h1>\n");
}

void rp_page_tail(Page *p, const AnReportOptions *opt) {
  g_string_append(p->html, "<footer>Made by <code>sim report</code>");
  if (opt && opt->generator) {
    g_string_append(p->html, " (");
    rp_put_esc(p->html, opt->generator);
    g_string_append(p->html, ")");
  }
  g_string_append(p->html, " from <code>");
  rp_put_esc(p->html, p->dir);
  g_string_append(p->html, "</code>.</footer>\n</body>\n</html>\n");
}

void rp_meta_item(GString *h, const char *name, const char *value) {
  if (!value) return;
  g_string_append(h, "<dt>");
  rp_put_esc(h, name);
  g_string_append(h, "</dt><dd>");
  rp_put_esc(h, value);
  g_string_append(h, "</dd>\n");
}

void rp_run_meta(Page *p, json_t *summary) {
  json_t *hd = json_object_get(summary, "header");
  GString *h = p->html;
  g_string_append(h, "<dl class=\"meta\">\n");
  rp_meta_item(h, "directory", p->dir);
  rp_meta_item(h, "scenario", json_string_value(rp_jget(hd, "scenario", "name", NULL)));
  rp_meta_item(h, "scenario file", json_string_value(json_object_get(hd, "scenario_file")));
  json_t *seed = json_object_get(hd, "seed");
  if (json_is_integer(seed)) {
    g_autofree char *s = g_strdup_printf("%" JSON_INTEGER_FORMAT, json_integer_value(seed));
    rp_meta_item(h, "seed", s);
  }
  const char *ver = json_string_value(json_object_get(hd, "version"));
  const char *git = json_string_value(json_object_get(hd, "git_describe"));
  if (ver) {
    g_autofree char *s =
        g_strdup_printf("sim %s%s%s%s", ver, git ? " (" : "", git ? git : "", git ? ")" : "");
    rp_meta_item(h, "made by", s);
  }
  json_t *cmd = json_object_get(hd, "command_line");
  if (json_is_array(cmd)) {
    g_autoptr(GString) s = g_string_new(NULL);
    size_t i;
    json_t *a;
    json_array_foreach(cmd, i, a) {
      if (i) g_string_append_c(s, ' ');
      g_string_append(s, json_string_value(a) ? json_string_value(a) : "?");
    }
    rp_meta_item(h, "command line", s->str);
  }
  g_string_append(h, "</dl>\n");
}

void rp_key_metrics(Page *p, json_t *s) {
  GString *h = p->html;
  g_string_append(h, "<h2 id=\"metrics\">Key metrics</h2>\n");
  const char *cols[] = {"metric", "value", "unit"};
  rp_table_begin(h, NULL, cols, 3);
  static const struct {
    const char *key, *label, *unit;
  } chain[] = {
      {"heights", "chain.heights", "blocks"},
      {"blocks_total", "chain.blocks_total", "blocks"},
      {"main", "chain.main", "blocks"},
      {"uncles_included", "chain.uncles_included", "blocks"},
      {"forks_unreferenced", "chain.forks_unreferenced", "blocks"},
      {"uncle_rate", "chain.uncle_rate (uncles per main block)", NULL},
      {"stale_share", "chain.stale_share (non-main / all blocks)", NULL},
      {"empty_share", "chain.empty_share (empty / all blocks)", NULL},
      {"mean_interval_s", "chain.mean_interval_s", "s"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(chain); i++)
    rp_metric_row(h, chain[i].label, rp_jget(s, "chain", chain[i].key, NULL), chain[i].unit);
  rp_metric_row(h, "runs.max (longest run of one pool)", rp_jget(s, "runs", "max", NULL), "blocks");
  const char *k;
  json_t *v;
  g_autoptr(GString) ge = g_string_new(NULL);
  json_object_foreach(rp_jget(s, "runs", "count_ge", NULL), k, v) {
    g_string_append_printf(ge, "%s≥%s: ", ge->len ? ", " : "", k);
    rp_put_num(ge, json_number_value(v));
  }
  if (ge->len) {
    g_string_append(h, "<tr>");
    rp_td_text(h, "runs.count_ge (maximal runs of length ≥ k)");
    rp_td_text(h, ge->str);
    rp_td_text(h, "runs");
    g_string_append(h, "</tr>\n");
  }
  rp_metric_row(h, "one_miner_forks.count", rp_jget(s, "one_miner_forks", "count", NULL), NULL);

  json_t *prop = json_object_get(s, "propagation");
  rp_metric_row(h, "propagation.vantage_delay_ms.median (first observer excluded)",
             rp_jget(prop, "vantage_delay_ms", "median", NULL), "ms");
  rp_metric_row(h, "propagation.vantage_delay_ms.p90", rp_jget(prop, "vantage_delay_ms", "p90", NULL), "ms");
  rp_metric_row(h, "propagation.vantage_delay_incl_first_ms.median",
             rp_jget(prop, "vantage_delay_incl_first_ms", "median", NULL), "ms");
  json_object_foreach(json_object_get(prop, "vantage_delay_by_vantage_ms"), k, v) {
    g_autofree char *label = g_strdup_printf("propagation.vantage_delay_by_vantage_ms.%s.median", k);
    rp_metric_row(h, label, json_object_get(v, "median"), "ms");
  }
  rp_metric_row(h, "propagation.blocks_seen_by_all", json_object_get(prop, "blocks_seen_by_all"), "blocks");
  json_object_foreach(json_object_get(prop, "first_seen_share"), k, v) {
    g_autofree char *label = g_strdup_printf("propagation.first_seen_share.%s", k);
    rp_metric_row(h, label, v, NULL);
  }

  json_t *tx = json_object_get(s, "tx");
  static const char *const tx_counts[] = {"unique", "created", "committed", "never_committed", "evicted"};
  for (size_t i = 0; i < G_N_ELEMENTS(tx_counts); i++) {
    g_autofree char *label = g_strdup_printf("tx.%s", tx_counts[i]);
    rp_metric_row(h, label, json_object_get(tx, tx_counts[i]), "transactions");
  }
  json_object_foreach(json_object_get(tx, "commit_s"), k, v) {
    static const char *const stats[] = {"median", "mean", "p90"};
    for (size_t i = 0; i < G_N_ELEMENTS(stats); i++) {
      g_autofree char *label = g_strdup_printf("tx.commit_s.%s.%s", k, stats[i]);
      rp_metric_row(h, label, json_object_get(v, stats[i]), "s");
    }
  }
  rp_metric_row(h, "tx.out_of_order_share", json_object_get(tx, "out_of_order_share"), NULL);
  rp_metric_row(h, "tx.propagation_ms.median", rp_jget(tx, "propagation_ms", "median", NULL), "ms");
  rp_metric_row(h, "tx.propagation_ms.p90", rp_jget(tx, "propagation_ms", "p90", NULL), "ms");
  rp_metric_row(h, "sim.events", rp_jget(s, "sim", "events", NULL), NULL);
  rp_metric_row(h, "sim.wall_s (wall clock)", rp_jget(s, "sim", "wall_s", NULL), "s");
  rp_table_end(h);
}

gboolean an_report_read_delays(const char *path, GPtrArray **names_out, GPtrArray **delays_out,
                               GError **error) {
  g_return_val_if_fail(path != NULL && names_out != NULL && delays_out != NULL, FALSE);
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return FALSE;
  int first = rp_csv_col(c, "FirstObservation", TRUE, error);
  if (first < 0) return FALSE;
  int pool = rp_csv_col(c, "MiningPool", TRUE, error);
  if (pool < 0) return FALSE;
  if (pool <= first + 1)
    return rp_input_error(error, path, "no <V>Diff column between FirstObservation and MiningPool");
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) delays = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (int i = first + 1; i < pool; i++) {
    const char *h = c->header[i];
    if (!g_str_has_suffix(h, "Diff") || strlen(h) == strlen("Diff"))
      return rp_input_error(error, path,
                         "column '%s' between FirstObservation and MiningPool is not a <V>Diff column", h);
    g_ptr_array_add(names, g_strndup(h, strlen(h) - strlen("Diff")));
    g_ptr_array_add(delays, g_array_new(FALSE, FALSE, sizeof(double)));
  }
  guint nv = names->len;
  g_autofree double *d = g_new(double, nv);
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    gboolean all = TRUE;
    for (guint v = 0; v < nv; v++) {
      if (!rp_csv_num(c, first + 1 + (int)v, TRUE, &d[v], error)) return FALSE;
      if (isnan(d[v])) all = FALSE;
    }
    if (!all) continue;
    const char *fo = rp_csv_field(c, first);
    guint fv = G_MAXUINT;
    for (guint v = 0; v < nv && fv == G_MAXUINT; v++)
      if (strcmp(fo, g_ptr_array_index(names, v)) == 0) fv = v;
    if (fv == G_MAXUINT)
      return rp_input_error(error, path, "line %u: FirstObservation '%s' is not a vantage point of the header",
                         c->line, fo);
    for (guint v = 0; v < nv; v++) {
      if (v == fv) continue;
      double ms = d[v] * 1000.0;
      g_array_append_val((GArray *)g_ptr_array_index(delays, v), ms);
    }
  }
  if (r < 0) return FALSE;
  *names_out = g_steal_pointer(&names);
  *delays_out = g_steal_pointer(&delays);
  return TRUE;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The CDF of sorted `x` as a datablock: exact steps up to CDF_EXACT_MAX values, else 1000 quantiles. */
static void cdf_block(GString *s, const char *name, const double *x, size_t n) {
  rp_gp_block_begin(s, name);
  if (n <= CDF_EXACT_MAX) {
    rp_gp_num(s, x[0]);
    g_string_append(s, "\t0\n");
    for (size_t i = 0; i < n; i++) {
      rp_gp_num(s, x[i]);
      g_string_append_c(s, '\t');
      rp_gp_num(s, (double)(i + 1) / (double)n);
      g_string_append_c(s, '\n');
    }
  } else {
    for (int j = 0; j <= CDF_EXACT_MAX; j++) {
      double f = (double)j / CDF_EXACT_MAX;
      rp_gp_num(s, gsl_stats_quantile_from_sorted_data(x, 1, n, f));
      g_string_append_c(s, '\t');
      rp_gp_num(s, f);
      g_string_append_c(s, '\n');
    }
  }
  rp_gp_block_end(s);
}

static void stats_row(GString *h, const char *name, const double *x, size_t n) {
  g_string_append(h, "<tr>");
  rp_td_text(h, name);
  rp_td_num(h, (double)n);
  rp_td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.5) : NAN);
  rp_td_num(h, n ? gsl_stats_mean(x, 1, n) : NAN);
  rp_td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.9) : NAN);
  rp_td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.99) : NAN);
  g_string_append(h, "</tr>\n");
}

static const char *const TITLE_PROP =
    "Block propagation: delay after the first observation, CDF per vantage point";

static const char *const TITLE_FIRST = "First-seen shares per pool and vantage point";

static const char *const TITLE_RUNS = "Run lengths against the i.i.d. expectation";

static const char *const TITLE_COMMIT = "Commit time against confirmations k, per vantage point";

static const char *const TITLE_POOLS = "Main share against hash share and reward share, per pool";

gboolean rp_fig_propagation(Page *p, json_t *summary, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "observations.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    if (json_object_get(summary, "propagation"))
      rp_page_no_figure(p, "propagation", TITLE_PROP, "observations.csv not found: figure omitted.");
    return TRUE;
  }
  g_autoptr(GPtrArray) names = NULL, delays = NULL;
  if (!an_report_read_delays(path, &names, &delays, error)) return FALSE;
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint v = 0; v < names->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    if (a->len) qsort(a->data, a->len, sizeof(double), cmp_double);
    g_array_append_vals(all, a->data, a->len);
  }
  if (all->len) qsort(all->data, all->len, sizeof(double), cmp_double);
  if (!all->len) {
    rp_page_no_figure(p, "propagation", TITLE_PROP,
                   names->len < 2 ? "One vantage point only: no delay after the first observation."
                                  : "No block was seen by every vantage point: figure omitted.");
    return TRUE;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  rp_gp_style(s);
  g_string_append(s, "set xlabel 'delay after the first observation (ms)'\n"
                     "set ylabel 'share of the blocks seen by all'\nset yrange [0:1]\nset xrange [0:*]\n"
                     "set key bottom right\n");
  for (guint v = 0; v < names->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    if (!a->len) continue;
    g_autofree char *bn = g_strdup_printf("V%u", v);
    cdf_block(s, bn, (const double *)a->data, a->len);
  }
  g_string_append(s, "plot ");
  gboolean any = FALSE;
  for (guint v = 0; v < names->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    if (!a->len) continue;
    const double *x = (const double *)a->data;
    char med[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(med, sizeof med, "%.1f", gsl_stats_quantile_from_sorted_data(x, 1, a->len, 0.5));
    g_autofree char *label =
        g_strdup_printf("%s (n = %u, median %s ms)", (const char *)g_ptr_array_index(names, v), a->len, med);
    g_string_append_printf(s, "%s$V%u using 1:2 with %s lt %u title ", any ? ", " : "", v,
                           a->len <= CDF_EXACT_MAX ? "steps" : "lines", v + 1);
    rp_gp_str(s, label);
    any = TRUE;
  }
  g_string_append_c(s, '\n');
  rp_page_figure(
      p, "propagation", TITLE_PROP, 860, 460, s,
      "For each block every vantage point saw: each vantage point's reception time minus the earliest "
      "one, leaving out the first observer's zero (observations.csv, to the millisecond).");
  const char *cols[] = {"vantage point", "delays", "median (ms)", "mean (ms)", "p90 (ms)", "p99 (ms)"};
  rp_table_begin(p->html, "Delay after the first observation (first observer excluded)", cols, 6);
  for (guint v = 0; v < names->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    stats_row(p->html, g_ptr_array_index(names, v), (const double *)a->data, a->len);
  }
  stats_row(p->html, "all", (const double *)all->data, all->len);
  rp_table_end(p->html);
  return TRUE;
}

void rp_fig_first_seen(Page *p, json_t *summary) {
  json_t *prop = json_object_get(summary, "propagation");
  json_t *by_pool = json_object_get(prop, "first_seen_share_by_pool");
  json_t *overall = json_object_get(prop, "first_seen_share");
  if (!json_is_object(overall) || json_object_size(overall) == 0) return;
  /* Vantage points in the order of first_seen_share (the vantage table's). */
  g_autoptr(GPtrArray) vps = g_ptr_array_new();
  const char *k;
  json_t *v;
  json_object_foreach(overall, k, v) g_ptr_array_add(vps, (gpointer)k);

  g_autoptr(GString) s = g_string_new(NULL);
  rp_gp_style(s);
  rp_gp_block_begin(s, "F");
  g_autoptr(GString) rows = g_string_new(NULL);
  const char *pool;
  json_t *shares;
  json_object_foreach(by_pool, pool, shares) {
    rp_gp_field(s, pool);
    g_string_append(rows, "<tr>");
    rp_td_text(rows, pool);
    for (guint i = 0; i < vps->len; i++) {
      json_t *x = json_object_get(shares, g_ptr_array_index(vps, i));
      double d = json_is_number(x) ? json_number_value(x) : 0;
      g_string_append_c(s, '\t');
      rp_gp_num(s, d);
      if (json_is_number(x))
        rp_td_num(rows, d);
      else
        rp_td_text(rows, "");
    }
    g_string_append_c(s, '\n');
    g_string_append(rows, "</tr>\n");
  }
  rp_gp_field(s, "all blocks");
  g_string_append(rows, "<tr>");
  rp_td_text(rows, "all blocks");
  for (guint i = 0; i < vps->len; i++) {
    json_t *x = json_object_get(overall, g_ptr_array_index(vps, i));
    g_string_append_c(s, '\t');
    rp_gp_num(s, json_number_value(x));
    rp_td_num(rows, json_number_value(x));
  }
  g_string_append(rows, "</tr>\n");
  g_string_append_c(s, '\n');
  rp_gp_block_end(s);
  g_string_append(s, "set style data histograms\nset style histogram rowstacked\n"
                     "set style fill solid 0.85 border rgb '#ffffff'\nset boxwidth 0.75\nset yrange [0:1]\n"
                     "set ylabel 'share of the blocks seen by all, by first observer'\n"
                     "set xtics rotate by -40 left scale 0\nset key outside right top\nset grid noxtics\n"
                     "plot ");
  for (guint i = 0; i < vps->len; i++) {
    g_string_append_printf(s, "%s$F using %u%s lt %u title ", i ? ", " : "", i + 2, i ? "" : ":xtic(1)",
                           i + 1);
    rp_gp_str(s, g_ptr_array_index(vps, i));
  }
  g_string_append_c(s, '\n');
  rp_page_figure(p, "first-seen", TITLE_FIRST, 900, 480, s,
              "Per pool (and over all blocks): the share of its blocks seen by every vantage point that each "
              "vantage point saw first (summary.json, propagation.first_seen_share_by_pool).");
  g_autoptr(GPtrArray) cols = g_ptr_array_new();
  g_ptr_array_add(cols, (gpointer) "pool");
  for (guint i = 0; i < vps->len; i++)
    g_ptr_array_add(cols, g_ptr_array_index(vps, i));
  rp_table_begin(p->html, "First-seen shares", (const char *const *)cols->pdata, cols->len);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  rp_table_end(p->html);
}

gboolean rp_fig_runs(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "runs.csv", NULL);
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"length", "count", "count_ge", "expected_iid_ge"};
  int col[4];
  for (int i = 0; i < 4; i++)
    if ((col[i] = rp_csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GString) obs = g_string_new(NULL), iid = g_string_new(NULL), rows = g_string_new(NULL);
  double lo = INFINITY, max_len = 0;
  guint n_obs = 0, n_iid = 0;
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    double x[4];
    for (int i = 0; i < 4; i++)
      if (!rp_csv_num(c, col[i], FALSE, &x[i], error)) return FALSE;
    g_string_append(rows, "<tr>");
    for (int i = 0; i < 4; i++)
      rp_td_num(rows, x[i]);
    g_string_append(rows, "</tr>\n");
    max_len = MAX(max_len, x[0]);
    if (x[2] > 0) {
      rp_gp_num(obs, x[0]);
      g_string_append_c(obs, '\t');
      rp_gp_num(obs, x[2]);
      g_string_append_c(obs, '\n');
      lo = MIN(lo, x[2]);
      n_obs++;
    }
    if (x[3] > 0) {
      rp_gp_num(iid, x[0]);
      g_string_append_c(iid, '\t');
      rp_gp_num(iid, x[3]);
      g_string_append_c(iid, '\n');
      lo = MIN(lo, x[3]);
      n_iid++;
    }
  }
  if (r < 0) return FALSE;
  if (!n_obs && !n_iid) {
    rp_page_no_figure(p, "runs", TITLE_RUNS, "runs.csv has no run: figure omitted.");
  } else {
    g_autoptr(GString) s = g_string_new(NULL);
    rp_gp_style(s);
    double ymin = pow(10, floor(log10(MAX(lo, 1e-6))));
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(
        s,
        "set logscale y\nset format y '%%g'\nset yrange [%s:*]\n"
        "set xrange [0.5:%g]\nset xtics 1\nset xlabel 'run length k (consecutive main blocks "
        "by one pool)'\nset ylabel 'maximal runs of length >= k'\nset key top right\n",
        g_ascii_formatd(buf, sizeof buf, "%g", ymin), max_len + 0.5);
    rp_gp_block_begin(s, "OBS");
    g_string_append_len(s, obs->str, (gssize)obs->len);
    rp_gp_block_end(s);
    rp_gp_block_begin(s, "IID");
    g_string_append_len(s, iid->str, (gssize)iid->len);
    rp_gp_block_end(s);
    g_string_append(s, "plot ");
    if (n_iid) g_string_append(s, "$IID using 1:2 with lines lt 2 dt 2 title 'i.i.d. expectation'");
    if (n_obs)
      g_string_append_printf(s, "%s$OBS using 1:2 with linespoints lt 1 title 'simulated'",
                             n_iid ? ", " : "");
    g_string_append_c(s, '\n');
    rp_page_figure(
        p, "runs", TITLE_RUNS, 860, 460, s,
        "Number of maximal runs of at least k consecutive main blocks by one pool (runs.csv count_ge), "
        "and what independent mining at each pool's main share would give (expected_iid_ge). Zero counts "
        "cannot be shown on the logarithmic axis.");
  }
  const char *cols[] = {"length", "runs", "runs ≥ length", "i.i.d. expectation ≥ length"};
  rp_table_begin(p->html, "Runs of consecutive main blocks by one pool (runs.csv)", cols, 4);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  rp_table_end(p->html);
  return TRUE;
}

typedef struct {
  char *vantage;     /* "" for all */
  GArray *rows;      /* CommitRow */
  gboolean has_data; /* some row has a statistic (none has when nothing was committed) */
} CommitSeries;

typedef struct {
  double k, pairs, median, mean, p90;
} CommitRow;

static void commit_series_free(gpointer x) {
  CommitSeries *cs = x;
  g_free(cs->vantage);
  g_array_unref(cs->rows);
  g_free(cs);
}

gboolean rp_fig_commit(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "tx_commit.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) return TRUE;
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"k", "vantage", "pairs", "median_s", "mean_s", "p90_s"};
  int col[6];
  for (int i = 0; i < 6; i++)
    if ((col[i] = rp_csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(commit_series_free);
  g_autoptr(GString) rows = g_string_new(NULL);
  int r;
  double kmax = 0;
  while ((r = rp_csv_row(c, error)) > 0) {
    CommitRow cr;
    if (!rp_csv_num(c, col[0], FALSE, &cr.k, error) || !rp_csv_num(c, col[2], FALSE, &cr.pairs, error) ||
        !rp_csv_num(c, col[3], TRUE, &cr.median, error) || !rp_csv_num(c, col[4], TRUE, &cr.mean, error) ||
        !rp_csv_num(c, col[5], TRUE, &cr.p90, error))
      return FALSE;
    const char *vp = rp_csv_field(c, col[1]);
    CommitSeries *cs = NULL;
    for (guint i = 0; i < series->len && !cs; i++)
      if (strcmp(((CommitSeries *)g_ptr_array_index(series, i))->vantage, vp) == 0)
        cs = g_ptr_array_index(series, i);
    if (!cs) {
      cs = g_new0(CommitSeries, 1);
      cs->vantage = g_strdup(vp);
      cs->rows = g_array_new(FALSE, FALSE, sizeof(CommitRow));
      g_ptr_array_add(series, cs);
    }
    g_array_append_val(cs->rows, cr);
    cs->has_data |= !isnan(cr.median) || !isnan(cr.mean) || !isnan(cr.p90);
    kmax = MAX(kmax, cr.k);
    g_string_append(rows, "<tr>");
    rp_td_num(rows, cr.k);
    rp_td_text(rows, *vp ? vp : "all");
    rp_td_num(rows, cr.pairs);
    rp_td_num(rows, cr.median);
    rp_td_num(rows, cr.mean);
    rp_td_num(rows, cr.p90);
    g_string_append(rows, "</tr>\n");
  }
  if (r < 0) return FALSE;
  if (!series->len) {
    rp_page_no_figure(p, "commit", TITLE_COMMIT, "tx_commit.csv has no row: figure omitted.");
    return TRUE;
  }
  const char *cols[] = {"k", "vantage point", "pairs", "median (s)", "mean (s)", "p90 (s)"};
  gboolean any_data = FALSE;
  for (guint i = 0; i < series->len; i++)
    any_data |= ((CommitSeries *)g_ptr_array_index(series, i))->has_data;
  /* No committed transaction (a replay of logs without TxMsg.log): nothing to draw, which is no error. */
  if (!any_data) {
    rp_page_no_figure(
        p, "commit", TITLE_COMMIT,
        "tx_commit.csv has no commit time (no transaction was seen and committed): figure omitted.");
    rp_table_begin(p->html, "Commit time (tx_commit.csv)", cols, 6);
    g_string_append_len(p->html, rows->str, (gssize)rows->len);
    rp_table_end(p->html);
    return TRUE;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  rp_gp_style(s);
  for (guint i = 0; i < series->len; i++) {
    CommitSeries *cs = g_ptr_array_index(series, i);
    if (!cs->has_data) continue;
    g_autofree char *bn = g_strdup_printf("C%u", i);
    rp_gp_block_begin(s, bn);
    for (guint j = 0; j < cs->rows->len; j++) {
      CommitRow *cr = &g_array_index(cs->rows, CommitRow, j);
      double x[4] = {cr->k, cr->median, cr->mean, cr->p90};
      for (int q = 0; q < 4; q++) {
        if (q) g_string_append_c(s, '\t');
        if (isnan(x[q]))
          g_string_append(s, "NaN");
        else
          rp_gp_num(s, x[q]);
      }
      g_string_append_c(s, '\n');
    }
    rp_gp_block_end(s);
  }
  g_string_append_printf(s,
                         "set multiplot layout 1,3\nset xrange [-1:%g]\nset xlabel 'k (confirmations)'\n"
                         "set yrange [0:*]\nset key top left Left reverse\nset xtics (",
                         kmax + 1);
  /* ticks at the k values of the file */
  CommitSeries *first = g_ptr_array_index(series, 0);
  for (guint j = 0; j < first->rows->len; j++) {
    if (j) g_string_append(s, ", ");
    rp_gp_num(s, g_array_index(first->rows, CommitRow, j).k);
  }
  g_string_append(s, ")\n");
  static const char *const stat_names[] = {"median", "mean", "p90"};
  for (int q = 0; q < 3; q++) {
    g_string_append_printf(s, "set title '%s'\nset ylabel %s\n", stat_names[q],
                           q == 0 ? "'commit time (s)'" : "''");
    if (q == 1) g_string_append(s, "unset key\n");
    g_string_append(s, "plot ");
    /* the vantage points first, then all of them (black, dashed) on top */
    guint drawn = 0;
    for (int pass = 0; pass < 2; pass++)
      for (guint i = 0; i < series->len; i++) {
        CommitSeries *cs = g_ptr_array_index(series, i);
        gboolean all = !*cs->vantage;
        if (all != (pass == 1) || !cs->has_data) continue;
        g_string_append_printf(s, "%s$C%u using 1:%d with linespoints lt %u%s title ", drawn++ ? ", " : "", i,
                               q + 2, all ? 8 : (i % 7) + 1, all ? " lc rgb '#000000' dt 2 pt 6" : "");
        rp_gp_str(s, all ? "all vantage points" : cs->vantage);
      }
    g_string_append_c(s, '\n');
  }
  g_string_append(s, "unset multiplot\n");
  rp_page_figure(
      p, "commit", TITLE_COMMIT, 960, 420, s,
      "Reception of the main block at height h + k minus the first reception of the transaction, over "
      "every (committed transaction, vantage point) pair (tx_commit.csv; only these statistics are "
      "written, not the samples).");
  rp_table_begin(p->html, "Commit time (tx_commit.csv)", cols, 6);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  rp_table_end(p->html);
  return TRUE;
}

gboolean rp_fig_pools(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "pools.csv", NULL);
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"pool", "hash_share", "main_share", "reward_share"};
  int col[4];
  for (int i = 0; i < 4; i++)
    if ((col[i] = rp_csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GString) data = g_string_new(NULL), rows = g_string_new(NULL);
  guint n = 0;
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    double x[3];
    for (int i = 0; i < 3; i++)
      if (!rp_csv_num(c, col[i + 1], FALSE, &x[i], error)) return FALSE;
    rp_gp_field(data, rp_csv_field(c, col[0]));
    for (int i = 0; i < 3; i++) {
      g_string_append_c(data, '\t');
      rp_gp_num(data, x[i]);
    }
    g_string_append_c(data, '\n');
    g_string_append(rows, "<tr>");
    for (guint i = 0; i < c->ncols; i++) {
      if ((int)i == col[0])
        rp_td_text(rows, rp_csv_field(c, (int)i));
      else
        rp_td_field(rows, rp_csv_field(c, (int)i));
    }
    g_string_append(rows, "</tr>\n");
    n++;
  }
  if (r < 0) return FALSE;
  if (!n) {
    rp_page_no_figure(p, "pools", TITLE_POOLS, "pools.csv has no pool: figure omitted.");
  } else {
    g_autoptr(GString) s = g_string_new(NULL);
    rp_gp_style(s);
    rp_gp_block_begin(s, "P");
    g_string_append_len(s, data->str, (gssize)data->len);
    rp_gp_block_end(s);
    g_string_append(s, "set style data histograms\nset style histogram clustered gap 1\n"
                       "set style fill solid 0.85 border rgb '#ffffff'\nset yrange [0:*]\n"
                       "set ylabel 'share'\nset xtics rotate by -40 left scale 0\nset key top right\n"
                       "set grid noxtics\n"
                       "plot $P using 2:xtic(1) lt 8 title 'hash share', $P using 3 lt 1 title 'main share', "
                       "$P using 4 lt 3 title 'reward share'\n");
    rp_page_figure(
        p, "pools", TITLE_POOLS, 960, 460, s,
        "Per pool: its share of the hash power, of the main-chain blocks, and of all rewards (blocks, "
        "uncles and nephew bonuses), from pools.csv.");
  }
  rp_table_begin(p->html, "Pools (pools.csv)", (const char *const *)c->header, c->ncols);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  rp_table_end(p->html);
  return TRUE;
}
