/* sweep_table.c: a run summary flattened to keys and numbers, and the tidy table of a sweep: per point the
 * mean, standard deviation and 95% interval of every metric, as CSV and JSON. */
#include "sweep-private.h"

#include <math.h>
#include <string.h>

#include "input.h"
#include "output.h"
#include "util.h"

/* Also for NULL: rows of the table hold NULL where a run lacked a key. */
static void array_free0(gpointer p) {
  if (p) g_array_unref(p);
}

/* ---- Flattening ---- */

static void flat_clear(gpointer p) {
  g_free(((SimFlatValue *)p)->key);
}

static gboolean all_arrays(const json_t *arr) {
  size_t i;
  const json_t *v;
  if (json_array_size(arr) == 0) return FALSE;
  json_array_foreach(arr, i, v) if (!json_is_array(v)) return FALSE;
  return TRUE;
}

static void flatten(const char *prefix, const json_t *v, GArray *out) {
  if (json_is_number(v) || json_is_boolean(v)) {
    static const char *const wall[] = {"sim.wall_s", "sim.events_per_s", "sim.peak_rss_bytes"};
    for (guint i = 0; i < G_N_ELEMENTS(wall); i++)
      if (strcmp(prefix, wall[i]) == 0) return;
    SimFlatValue f = {.key = g_strdup(prefix),
                      .value = json_is_number(v) ? json_number_value(v)
                               : json_is_true(v) ? 1.0
                                                 : 0.0};
    g_array_append_val(out, f);
    return;
  }
  if (json_is_object(v)) {
    const char *k;
    const json_t *c;
    json_object_foreach((json_t *)v, k, c) {
      if (!*prefix && strcmp(k, "header") == 0) continue;
      g_autofree char *p = *prefix ? g_strdup_printf("%s.%s", prefix, k) : g_strdup(k);
      flatten(p, c, out);
    }
    return;
  }
  if (json_is_array(v) && !all_arrays(v)) {
    size_t i;
    const json_t *c;
    json_array_foreach(v, i, c) {
      const json_t *name = json_object_get(c, "name");
      g_autofree char *p = json_is_string(name) ? g_strdup_printf("%s[%s]", prefix, json_string_value(name))
                                                : g_strdup_printf("%s[%zu]", prefix, i);
      flatten(p, c, out);
    }
  }
}

GArray *sim_summary_flatten(const json_t *summary) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(SimFlatValue));
  g_array_set_clear_func(out, flat_clear);
  if (summary) flatten("", summary, out);
  return out;
}

/* ---- The table ---- */

struct SimSweepTable {
  const SimSweep *sw;
  GPtrArray *keys;       /* char *, order of first appearance */
  GHashTable *key_index; /* key -> index + 1 */
  GPtrArray **cells;     /* per point: per key index, GArray of double (or NULL) */
  guint *runs;           /* per point */
};

SimSweepTable *sim_sweep_table_new(const SimSweep *sw) {
  g_return_val_if_fail(sw != NULL, NULL);
  SimSweepTable *t = g_new0(SimSweepTable, 1);
  t->sw = sw;
  t->keys = g_ptr_array_new_with_free_func(g_free);
  t->key_index = g_hash_table_new(g_str_hash, g_str_equal);
  t->cells = g_new0(GPtrArray *, sw->n_points);
  for (guint p = 0; p < sw->n_points; p++)
    t->cells[p] = g_ptr_array_new_with_free_func(array_free0);
  t->runs = g_new0(guint, sw->n_points);
  return t;
}

void sim_sweep_table_free(SimSweepTable *t) {
  if (!t) return;
  for (guint p = 0; p < t->sw->n_points; p++)
    g_ptr_array_unref(t->cells[p]);
  g_free(t->cells);
  g_free(t->runs);
  g_hash_table_unref(t->key_index);
  g_ptr_array_unref(t->keys);
  g_free(t);
}

/* Whether `key` is selected by the metrics entry `m`: equal, or m is a prefix ending at '.' or '['. */
static gboolean metric_matches(const char *m, const char *key) {
  gsize n = strlen(m);
  return strncmp(m, key, n) == 0 && (key[n] == '\0' || key[n] == '.' || key[n] == '[');
}

static gboolean selected(const SimSweepTable *t, const char *key) {
  if (!t->sw->metrics) return TRUE;
  for (char **m = t->sw->metrics; *m; m++)
    if (metric_matches(*m, key)) return TRUE;
  return FALSE;
}

void sim_sweep_table_add(SimSweepTable *t, guint point, const json_t *summary) {
  g_return_if_fail(t != NULL && point < t->sw->n_points);
  g_autoptr(GArray) flat = sim_summary_flatten(summary);
  GPtrArray *row = t->cells[point];
  for (guint i = 0; i < flat->len; i++) {
    const SimFlatValue *f = &g_array_index(flat, SimFlatValue, i);
    if (!selected(t, f->key)) continue;
    guint k = GPOINTER_TO_UINT(g_hash_table_lookup(t->key_index, f->key));
    if (!k) {
      char *key = g_strdup(f->key);
      g_ptr_array_add(t->keys, key);
      k = t->keys->len;
      g_hash_table_insert(t->key_index, key, GUINT_TO_POINTER(k));
    }
    if (row->len < k) g_ptr_array_set_size(row, (gint)k);
    GArray *vals = g_ptr_array_index(row, k - 1);
    if (!vals) {
      vals = g_array_new(FALSE, FALSE, sizeof(double));
      g_ptr_array_index(row, k - 1) = vals;
    }
    g_array_append_val(vals, f->value);
  }
  t->runs[point]++;
}

gboolean sim_sweep_table_collect(SimSweepTable *t, const char *const *dirs, guint n_dirs, guint *n_runs,
                                 GError **error) {
  *n_runs = 0;
  for (guint p = 0; p < t->sw->n_points; p++)
    for (guint r = 0; r < t->sw->replicates; r++) {
      g_autofree char *name = sim_sweep_run_name(p, r);
      for (guint d = 0; d < n_dirs; d++) {
        g_autofree char *file = g_build_filename(dirs[d], "runs", name, "summary.json", NULL);
        if (!g_file_test(file, G_FILE_TEST_IS_REGULAR)) continue; /* as resume: not a complete run */
        g_autoptr(GError) ie = NULL;
        g_autoptr(json_t) s = sim_json_load_file(file, 0, SIM_JSON_BLANK_AS_SYNTAX, NULL, &ie);
        if (!s) {
          g_autofree char *why = sim_input_error_text(file, ie);
          g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "cannot read %s", why);
          return FALSE;
        }
        sim_sweep_table_add(t, p, s);
        (*n_runs)++;
        break;
      }
    }
  return TRUE;
}

guint sim_sweep_table_point_runs(const SimSweepTable *t, guint point) {
  g_return_val_if_fail(point < t->sw->n_points, 0);
  return t->runs[point];
}

/* The metric columns in output order: the sweep's "metrics" order (then first appearance), or first
 * appearance. Indices into t->keys. */
static GArray *key_order(const SimSweepTable *t) {
  GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
  if (!t->sw->metrics) {
    for (guint k = 0; k < t->keys->len; k++)
      g_array_append_val(order, k);
    return order;
  }
  g_autofree gboolean *used = g_new0(gboolean, t->keys->len + 1);
  for (char **m = t->sw->metrics; *m; m++)
    for (guint k = 0; k < t->keys->len; k++)
      if (!used[k] && metric_matches(*m, g_ptr_array_index(t->keys, k))) {
        used[k] = TRUE;
        g_array_append_val(order, k);
      }
  return order;
}

char **sim_sweep_table_unmatched_metrics(const SimSweepTable *t) {
  GPtrArray *out = g_ptr_array_new();
  for (char **m = t->sw->metrics; m && *m; m++) {
    gboolean any = FALSE;
    for (guint k = 0; k < t->keys->len && !any; k++)
      any = metric_matches(*m, g_ptr_array_index(t->keys, k));
    if (!any) g_ptr_array_add(out, g_strdup(*m));
  }
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

static const GArray *cell(const SimSweepTable *t, guint point, guint k) {
  GPtrArray *row = t->cells[point];
  return k < row->len ? g_ptr_array_index(row, k) : NULL;
}

static void cell_stats(const SimSweepTable *t, guint point, guint k, gsize *n, double st[3]) {
  const GArray *v = cell(t, point, k);
  *n = v ? v->len : 0;
  sim_sweep_stats(v ? (const double *)v->data : NULL, *n, &st[0], &st[1], &st[2]);
}

static void put_num(FILE *out, double x) {
  fputc(',', out);
  if (isnan(x)) return;
  g_autofree char *s = sim_sweep_fmt_num(x);
  fputs(s, out);
}

gboolean sim_sweep_table_write_csv(const SimSweepTable *t, FILE *out) {
  static const char *const stat_names[] = {"mean", "sd", "ci95"};
  g_autoptr(GArray) order = key_order(t);
  fputs("point", out);
  for (guint c = 0; c < t->sw->columns->len; c++) {
    fputc(',', out);
    an_csv_put_field(out, g_ptr_array_index(t->sw->columns, c));
  }
  fputs(",replicates", out);
  for (guint i = 0; i < order->len; i++)
    for (guint s = 0; s < 3; s++) {
      g_autofree char *h = g_strdup_printf(
          "%s:%s", (char *)g_ptr_array_index(t->keys, g_array_index(order, guint, i)), stat_names[s]);
      fputc(',', out);
      an_csv_put_field(out, h);
    }
  fputc('\n', out);
  for (guint p = 0; p < t->sw->n_points; p++) {
    fprintf(out, "%u", p);
    for (guint c = 0; c < t->sw->columns->len; c++) {
      g_autofree char *v = sim_sweep_value_text(json_array_get(t->sw->point_values[p], c));
      fputc(',', out);
      an_csv_put_field(out, v);
    }
    fprintf(out, ",%u", t->runs[p]);
    for (guint i = 0; i < order->len; i++) {
      gsize n;
      double st[3];
      cell_stats(t, p, g_array_index(order, guint, i), &n, st);
      for (guint s = 0; s < 3; s++)
        put_num(out, st[s]);
    }
    fputc('\n', out);
  }
  return !ferror(out);
}

static json_t *num_or_null(double x) {
  return isnan(x) ? json_null() : json_real(x);
}

json_t *sim_sweep_table_to_json(const SimSweepTable *t) {
  g_autoptr(GArray) order = key_order(t);
  json_t *cols = json_array(), *keys = json_array(), *rows = json_array();
  for (guint c = 0; c < t->sw->columns->len; c++)
    json_array_append_new(cols, json_string(g_ptr_array_index(t->sw->columns, c)));
  for (guint i = 0; i < order->len; i++)
    json_array_append_new(keys, json_string(g_ptr_array_index(t->keys, g_array_index(order, guint, i))));
  for (guint p = 0; p < t->sw->n_points; p++) {
    json_t *params = json_object(), *metrics = json_object();
    for (guint c = 0; c < t->sw->columns->len; c++)
      json_object_set(params, g_ptr_array_index(t->sw->columns, c),
                      json_array_get(t->sw->point_values[p], c));
    for (guint i = 0; i < order->len; i++) {
      guint k = g_array_index(order, guint, i);
      gsize n;
      double st[3];
      cell_stats(t, p, k, &n, st);
      if (n == 0) continue;
      json_object_set_new(metrics, g_ptr_array_index(t->keys, k),
                          json_pack("{s:I, s:o, s:o, s:o}", "n", (json_int_t)n, "mean", num_or_null(st[0]),
                                    "sd", num_or_null(st[1]), "ci95", num_or_null(st[2])));
    }
    json_array_append_new(rows, json_pack("{s:I, s:o, s:I, s:o}", "point", (json_int_t)p, "parameters",
                                          params, "replicates", (json_int_t)t->runs[p], "metrics", metrics));
  }
  return json_pack("{s:s, s:I, s:o, s:o, s:o}", "sweep", t->sw->name, "replicates",
                   (json_int_t)t->sw->replicates, "columns", cols, "metrics", keys, "rows", rows);
}

gboolean sim_sweep_table_write(const SimSweepTable *t, const char *dir, GError **error) {
  /* Both files are complete before either replaces its old one; they are then renamed one after the other. */
  g_autofree char *csv_path = g_build_filename(dir, "table.csv", NULL);
  g_autofree char *json_path = g_build_filename(dir, "table.json", NULL);
  g_autoptr(SimOutFile) csv = sim_outfile_open(csv_path, error);
  if (!csv) return FALSE;
  if (!sim_sweep_table_write_csv(t, sim_outfile_stream(csv))) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s", csv_path);
    return FALSE;
  }
  g_autoptr(SimOutFile) js = sim_outfile_open(json_path, error);
  if (!js) return FALSE;
  g_autoptr(json_t) doc = sim_sweep_table_to_json(t);
  if (!sim_output_dump_json(sim_outfile_stream(js), doc)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s", json_path);
    return FALSE;
  }
  return sim_outfile_commit(csv, error) && sim_outfile_commit(js, error);
}
