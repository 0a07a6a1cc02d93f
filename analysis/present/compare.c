/* compare.c: two result sets side by side: shared metrics with intervals and Welch's test, and per-vantage
 * delay distributions with two-sample Kolmogorov-Smirnov tests. */
#include "compare-private.h"

/* clang-format off */
G_DEFINE_QUARK(an-compare-error-quark, an_compare_error)
/* clang-format on */

int cmpo_cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

gboolean an_compare_mean_ci(const double *x, size_t n, double level, AnEstimate *out) {
  g_return_val_if_fail(x != NULL && out != NULL && level > 0 && level < 1, FALSE);
  if (n < 2) return FALSE;
  double mean = gsl_stats_mean(x, 1, n);
  double se = gsl_stats_sd_m(x, 1, n, mean) / sqrt((double)n);
  double t = gsl_cdf_tdist_Pinv(1 - (1 - level) / 2, (double)(n - 1));
  *out = (AnEstimate){.value = mean, .se = se, .lo = mean - t * se, .hi = mean + t * se};
  return TRUE;
}

gboolean an_compare_welch(const double *a, size_t na, const double *b, size_t nb, AnWelch *out) {
  g_return_val_if_fail(a != NULL && b != NULL && out != NULL, FALSE);
  if (na < 2 || nb < 2) return FALSE;
  double ma = gsl_stats_mean(a, 1, na), mb = gsl_stats_mean(b, 1, nb);
  double va = gsl_stats_variance_m(a, 1, na, ma) / (double)na;
  double vb = gsl_stats_variance_m(b, 1, nb, mb) / (double)nb;
  if (!(va + vb > 0)) return FALSE;
  double t = (mb - ma) / sqrt(va + vb);
  double df = (va + vb) * (va + vb) / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
  *out = (AnWelch){.t = t, .df = df, .p = MIN(1.0, 2 * gsl_cdf_tdist_Q(fabs(t), df))};
  return TRUE;
}

typedef struct {
  GArray *out;      /* AnFlatMetric */
  GHashTable *seen; /* keys in `out` (borrowed from it) */
} Flat;

static void flat_metric_clear(gpointer p) {
  g_free(((AnFlatMetric *)p)->key);
}

static void flat_add(Flat *f, const char *key, double v) {
  static const char *const wall_clock[] = {"sim.wall_s", "sim.events_per_s", "sim.peak_rss_bytes"};
  for (size_t i = 0; i < G_N_ELEMENTS(wall_clock); i++)
    if (strcmp(key, wall_clock[i]) == 0) return;
  if (g_hash_table_contains(f->seen, key)) return;
  AnFlatMetric m = {g_strdup(key), v};
  g_array_append_val(f->out, m);
  g_hash_table_add(f->seen, m.key);
}

/* Every element is an object with a string "name", and the names differ. */
static gboolean named_objects(const json_t *arr) {
  if (json_array_size(arr) == 0) return FALSE;
  g_autoptr(GHashTable) names = g_hash_table_new(g_str_hash, g_str_equal);
  size_t i;
  json_t *e;
  json_array_foreach(arr, i, e) {
    const char *name = json_string_value(json_object_get(e, "name"));
    if (!json_is_object(e) || !name || !g_hash_table_add(names, (gpointer)name)) return FALSE;
  }
  return TRUE;
}

/* Every element is an [integer, number] pair, and the first elements differ. */
static gboolean histogram_pairs(const json_t *arr) {
  if (json_array_size(arr) == 0) return FALSE;
  g_autoptr(GHashTable) firsts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  size_t i;
  json_t *e;
  json_array_foreach(arr, i, e) {
    if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_integer(json_array_get(e, 0)) ||
        !json_is_number(json_array_get(e, 1)))
      return FALSE;
    gint64 *k = g_new(gint64, 1);
    *k = json_integer_value(json_array_get(e, 0));
    if (!g_hash_table_add(firsts, k)) return FALSE;
  }
  return TRUE;
}

static void flatten_value(Flat *f, GString *key, const json_t *v);

static void flatten_member(Flat *f, GString *key, const char *member, const json_t *v) {
  size_t len = key->len;
  if (len) g_string_append_c(key, '.');
  g_string_append(key, member);
  flatten_value(f, key, v);
  g_string_truncate(key, len);
}

static void flatten_array(Flat *f, GString *key, const json_t *arr) {
  size_t len = key->len, i;
  json_t *e;
  if (named_objects(arr)) {
    json_array_foreach(arr, i, e) {
      g_string_append_printf(key, "[%s]", json_string_value(json_object_get(e, "name")));
      const char *m;
      json_t *mv;
      json_object_foreach(e, m, mv) {
        if (strcmp(m, "name") != 0) flatten_member(f, key, m, mv);
      }
      g_string_truncate(key, len);
    }
  } else if (histogram_pairs(arr)) {
    json_array_foreach(arr, i, e) {
      g_string_append_printf(key, "[%" JSON_INTEGER_FORMAT "]", json_integer_value(json_array_get(e, 0)));
      flat_add(f, key->str, json_number_value(json_array_get(e, 1)));
      g_string_truncate(key, len);
    }
  } else {
    json_array_foreach(arr, i, e) {
      g_string_append_printf(key, "[%zu]", i);
      flatten_value(f, key, e);
      g_string_truncate(key, len);
    }
  }
}

static void flatten_value(Flat *f, GString *key, const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: {
    const char *m;
    json_t *mv;
    json_object_foreach((json_t *)v, m, mv) flatten_member(f, key, m, mv);
    break;
  }
  case JSON_ARRAY:
    flatten_array(f, key, v);
    break;
  case JSON_INTEGER:
  case JSON_REAL:
    flat_add(f, key->str, json_number_value(v));
    break;
  case JSON_TRUE:
    flat_add(f, key->str, 1);
    break;
  case JSON_FALSE:
    flat_add(f, key->str, 0);
    break;
  case JSON_STRING:
  case JSON_NULL:
    break;
  }
}

GArray *an_compare_flatten(const json_t *summary) {
  g_return_val_if_fail(json_is_object(summary), NULL);
  Flat f = {g_array_new(FALSE, FALSE, sizeof(AnFlatMetric)), g_hash_table_new(g_str_hash, g_str_equal)};
  g_array_set_clear_func(f.out, flat_metric_clear);
  g_autoptr(GString) key = g_string_new(NULL);
  const char *m;
  json_t *mv;
  json_object_foreach((json_t *)summary, m, mv) {
    if (strcmp(m, "header") != 0) flatten_member(&f, key, m, mv);
  }
  g_hash_table_unref(f.seen);
  return f.out;
}

typedef struct {
  char *name;
  GArray *ms; /* double */
} Delays;

static Delays *delays_new(const char *name) {
  Delays *d = g_new(Delays, 1);
  d->name = g_strdup(name);
  d->ms = g_array_new(FALSE, FALSE, sizeof(double));
  return d;
}

static void delays_free(gpointer p) {
  Delays *d = p;
  if (!d) return;
  g_free(d->name);
  g_array_unref(d->ms);
  g_free(d);
}

static Delays *delays_find(GPtrArray *list, const char *name) {
  for (guint i = 0; i < list->len; i++) {
    Delays *d = g_ptr_array_index(list, i);
    if (strcmp(d->name, name) == 0) return d;
  }
  return NULL;
}

static gboolean fields_have(GPtrArray *fields, const char *name) {
  for (guint i = 0; i < fields->len; i++)
    if (strcmp(g_ptr_array_index(fields, i), name) == 0) return TRUE;
  return FALSE;
}

/* The column table of observations.csv: FirstObservation's index, the <V>Diff columns and their names. */
typedef struct {
  guint n_fields, first_col;
  GArray *diff_cols; /* guint */
  GPtrArray *names;  /* char *, parallel to diff_cols */
} ObsColumns;

static gboolean obs_columns(const char *path, GPtrArray *header, ObsColumns *c, GError **error) {
  c->n_fields = header->len;
  c->first_col = G_MAXUINT;
  for (guint i = 0; i < header->len; i++) {
    const char *h = g_ptr_array_index(header, i);
    if (strcmp(h, "FirstObservation") == 0 && c->first_col == G_MAXUINT) c->first_col = i;
    size_t len = strlen(h);
    if (len <= 4 || strcmp(h + len - 4, "Diff") != 0) continue;
    g_autofree char *name = g_strndup(h, len - 4);
    g_autofree char *stamp = g_strconcat(name, "TimeStamp", NULL);
    if (!fields_have(header, stamp)) continue;
    /* The name becomes a key of the JSON output, where jansson would silently leave out a non-UTF-8 one. */
    if (!g_utf8_validate(name, -1, NULL)) {
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                  "%s:1: column %u: vantage name not valid UTF-8", path, i + 1);
      return FALSE;
    }
    g_array_append_val(c->diff_cols, i);
    g_ptr_array_add(c->names, g_steal_pointer(&name));
  }
  if (c->first_col == G_MAXUINT) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                "%s:1: no FirstObservation column (not an observations.csv table)", path);
    return FALSE;
  }
  if (c->diff_cols->len == 0) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                "%s:1: no <V>Diff column with its <V>TimeStamp (not an observations.csv table)", path);
    return FALSE;
  }
  return TRUE;
}

/* Adds the delays of one row (a block) to `out` (Delays per vantage, in column order; the last one pooled).
 */
static gboolean obs_row(const char *path, guint line, GPtrArray *row, const ObsColumns *c, GPtrArray *out,
                        GError **error) {
  guint nv = c->diff_cols->len;
  g_autofree double *diff = g_new(double, nv);
  gboolean all = TRUE;
  for (guint v = 0; v < nv; v++) {
    const char *s = g_ptr_array_index(row, g_array_index(c->diff_cols, guint, v));
    if (s[0] == '\0') {
      all = FALSE;
      continue;
    }
    char *end = NULL;
    diff[v] = g_ascii_strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(diff[v])) {
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s:%u: %sDiff: not a number: '%s'", path,
                  line, (const char *)g_ptr_array_index(c->names, v), s);
      return FALSE;
    }
  }
  const char *first = g_ptr_array_index(row, c->first_col);
  guint fv = G_MAXUINT;
  for (guint v = 0; v < nv && fv == G_MAXUINT; v++)
    if (strcmp(first, g_ptr_array_index(c->names, v)) == 0) fv = v;
  if (fv == G_MAXUINT && first[0] != '\0') {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                "%s:%u: FirstObservation '%s' is not one of the vantages", path, line, first);
    return FALSE;
  }
  if (!all) return TRUE; /* only blocks seen by every vantage count */
  if (fv == G_MAXUINT) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                "%s:%u: FirstObservation is empty for a block every vantage saw", path, line);
    return FALSE;
  }
  Delays *pooled = g_ptr_array_index(out, nv);
  for (guint v = 0; v < nv; v++) {
    if (v == fv) continue;
    double ms = diff[v] * 1000.0;
    g_array_append_val(((Delays *)g_ptr_array_index(out, v))->ms, ms);
    g_array_append_val(pooled->ms, ms);
  }
  return TRUE;
}

/* Reads observations.csv into Delays per vantage (column order), then one for all vantages pooled (name "").
 */
static GPtrArray *read_observations(const char *path, GError **error) {
  if (sim_input_unbounded(path)) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: not a regular file", path);
    return NULL;
  }
  FILE *in = fopen(path, "rb");
  if (!in) {
    int e = errno;
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: cannot open: %s", path, g_strerror(e));
    return NULL;
  }
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(delays_free);
  ObsColumns c = {.diff_cols = g_array_new(FALSE, FALSE, sizeof(guint)),
                  .names = g_ptr_array_new_with_free_func(g_free)};
  guint line = 0;
  g_autoptr(GError) e = NULL;
  gboolean ok = FALSE;
  if (!sim_csv_read_record(in, fields, &line, &e)) {
    if (e)
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s:1: %s", path, e->message);
    else
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                  "%s:1: empty file (expected the observations.csv header)", path);
    goto done;
  }
  if (!obs_columns(path, fields, &c, error)) goto done;
  for (guint v = 0; v < c.names->len; v++)
    g_ptr_array_add(out, delays_new(g_ptr_array_index(c.names, v)));
  g_ptr_array_add(out, delays_new(""));
  for (;;) {
    guint start = line + 1;
    if (!sim_csv_read_record(in, fields, &line, &e)) {
      if (e) {
        g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s:%u: %s", path, start, e->message);
        goto done;
      }
      break;
    }
    if (fields->len == 1 && ((const char *)g_ptr_array_index(fields, 0))[0] == '\0')
      continue; /* blank line */
    if (fields->len != c.n_fields) {
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s:%u: %u fields, expected %u", path,
                  start, fields->len, c.n_fields);
      goto done;
    }
    if (!obs_row(path, start, fields, &c, out, error)) goto done;
  }
  ok = TRUE;
done:
  fclose(in);
  g_array_unref(c.diff_cols);
  g_ptr_array_unref(c.names);
  return ok ? g_steal_pointer(&out) : NULL;
}

typedef struct {
  char *key;
  GArray *values; /* double, one per run that has the key */
} SideMetric;

static void side_metric_free(gpointer p) {
  SideMetric *m = p;
  g_free(m->key);
  g_array_unref(m->values);
  g_free(m);
}

struct AnCompareSide {
  char *label;
  GPtrArray *run_labels; /* char * */
  GPtrArray *metrics;    /* SideMetric *, in first-seen order; owns them */
  GHashTable *index;     /* key -> SideMetric * (lookups only: never iterated) */
  guint runs_with_obs;
  GPtrArray *delays; /* Delays * per vantage name, in first-seen order */
  Delays *pooled;    /* every vantage's delays together */
  guint runs_with_commit;
  GPtrArray *commit; /* Delays * named "k<k>" (all vantages) and "k<k>[<V>]": sampled commit times, ms */
};

AnCompareSide *an_compare_side_new(const char *label) {
  g_return_val_if_fail(label != NULL, NULL);
  AnCompareSide *s = g_new0(AnCompareSide, 1);
  s->label = g_strdup(label);
  s->run_labels = g_ptr_array_new_with_free_func(g_free);
  s->metrics = g_ptr_array_new_with_free_func(side_metric_free);
  s->index = g_hash_table_new(g_str_hash, g_str_equal);
  s->delays = g_ptr_array_new_with_free_func(delays_free);
  s->pooled = delays_new("");
  s->commit = g_ptr_array_new_with_free_func(delays_free);
  return s;
}

void an_compare_side_free(AnCompareSide *s) {
  if (!s) return;
  g_free(s->label);
  g_ptr_array_unref(s->run_labels);
  g_hash_table_unref(s->index);
  g_ptr_array_unref(s->metrics);
  g_ptr_array_unref(s->delays);
  g_ptr_array_unref(s->commit);
  delays_free(s->pooled);
  g_free(s);
}

const char *an_compare_side_label(const AnCompareSide *s) {
  g_return_val_if_fail(s != NULL, NULL);
  return s->label;
}

guint an_compare_side_n_runs(const AnCompareSide *s) {
  g_return_val_if_fail(s != NULL, 0);
  return s->run_labels->len;
}

const char *an_compare_side_run_label(const AnCompareSide *s, guint i) {
  g_return_val_if_fail(s != NULL && i < s->run_labels->len, NULL);
  return g_ptr_array_index(s->run_labels, i);
}

static void append_doubles(GArray *to, const GArray *from) {
  g_array_append_vals(to, from->data, from->len);
}

gboolean an_compare_side_add_run(AnCompareSide *s, const char *run_label, const json_t *summary,
                                 const char *observations_csv, GError **error) {
  g_return_val_if_fail(s != NULL && run_label != NULL, FALSE);
  if (!json_is_object(summary)) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: not a summary (expected a JSON object)",
                run_label);
    return FALSE;
  }
  /* The label goes into the JSON output's run list: jansson would drop a non-UTF-8 one without a word. */
  if (!g_utf8_validate(run_label, -1, NULL)) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: path not valid UTF-8", run_label);
    return FALSE;
  }
  g_autoptr(GPtrArray) obs = NULL;
  if (observations_csv && !(obs = read_observations(observations_csv, error))) return FALSE;

  g_autoptr(GArray) flat = an_compare_flatten(summary);
  for (guint i = 0; i < flat->len; i++) {
    const AnFlatMetric *f = &g_array_index(flat, AnFlatMetric, i);
    SideMetric *m = g_hash_table_lookup(s->index, f->key);
    if (!m) {
      m = g_new(SideMetric, 1);
      m->key = g_strdup(f->key);
      m->values = g_array_new(FALSE, FALSE, sizeof(double));
      g_ptr_array_add(s->metrics, m);
      g_hash_table_insert(s->index, m->key, m);
    }
    g_array_append_val(m->values, f->value);
  }
  if (obs) {
    s->runs_with_obs++;
    for (guint v = 0; v + 1 < obs->len; v++) {
      const Delays *d = g_ptr_array_index(obs, v);
      Delays *to = delays_find(s->delays, d->name);
      if (!to) g_ptr_array_add(s->delays, to = delays_new(d->name));
      append_doubles(to->ms, d->ms);
    }
    append_doubles(s->pooled->ms, ((const Delays *)g_ptr_array_index(obs, obs->len - 1))->ms);
  }
  g_ptr_array_add(s->run_labels, g_strdup(run_label));
  return TRUE;
}

/* Reads a summary file and adds it as one run. */
static gboolean load_run(AnCompareSide *s, const char *summary_path, const char *obs_path, GError **error) {
  g_autoptr(GError) ie = NULL;
  json_t *root = sim_json_load_file(summary_path, 0, SIM_JSON_DEFAULT, NULL, &ie);
  if (!root) {
    g_autofree char *t = sim_input_error_text(summary_path, ie);
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s", t);
    return FALSE;
  }
  gboolean ok = an_compare_side_add_run(s, summary_path, root, obs_path, error);
  json_decref(root);
  return ok;
}

static gboolean is_file(const char *path) {
  return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

static void commit_add(GPtrArray *list, const char *name, double ms) {
  Delays *d = delays_find(list, name);
  if (!d) {
    d = delays_new(name);
    g_ptr_array_add(list, d);
  }
  g_array_append_val(d->ms, ms);
}

/* tx_commit_samples.csv (an_tx_write_commit_samples_csv(): k,vantage,commit_s) into s->commit. */
static gboolean read_commit_samples(AnCompareSide *s, const char *path, GError **error) {
  if (sim_input_unbounded(path)) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: not a regular file", path);
    return FALSE;
  }
  FILE *f = fopen(path, "r");
  if (!f) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: cannot open: %s", path, g_strerror(errno));
    return FALSE;
  }
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
  guint line = 0;
  GError *e = NULL;
  gboolean ok = sim_csv_read_record(f, fields, &line, &e) && fields->len == 3 &&
                !strcmp(g_ptr_array_index(fields, 0), "k") && !strcmp(g_ptr_array_index(fields, 2), "commit_s");
  if (!ok && !e)
    g_set_error(&e, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "1: expected the header k,vantage,commit_s");
  while (ok && sim_csv_read_record(f, fields, &line, &e)) {
    char *end = NULL;
    double x = fields->len == 3 ? g_ascii_strtod(g_ptr_array_index(fields, 2), &end) : NAN;
    if (fields->len != 3 || !end || *end || !isfinite(x)) {
      g_set_error(&e, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%u: expected k,vantage,commit_s", line);
      ok = FALSE;
      break;
    }
    if (!g_utf8_validate(g_ptr_array_index(fields, 0), -1, NULL) ||
        !g_utf8_validate(g_ptr_array_index(fields, 1), -1, NULL)) {
      g_set_error(&e, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%u: k or vantage not valid UTF-8", line);
      ok = FALSE;
      break;
    }
    g_autofree char *all = g_strdup_printf("k%s", (const char *)g_ptr_array_index(fields, 0));
    g_autofree char *per = g_strdup_printf("k%s[%s]", (const char *)g_ptr_array_index(fields, 0),
                                           (const char *)g_ptr_array_index(fields, 1));
    commit_add(s->commit, all, x * 1e3);
    commit_add(s->commit, per, x * 1e3);
  }
  fclose(f);
  if (e) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s:%s", path, e->message);
    g_error_free(e);
    return FALSE;
  }
  s->runs_with_commit++;
  return TRUE;
}

/* A results directory: summary.json and, if there, observations.csv and tx_commit_samples.csv. */
static gboolean load_results_dir(AnCompareSide *s, const char *dir, GError **error) {
  g_autofree char *summary = g_build_filename(dir, "summary.json", NULL);
  g_autofree char *obs = g_build_filename(dir, "observations.csv", NULL);
  g_autofree char *cs = g_build_filename(dir, "tx_commit_samples.csv", NULL);
  return load_run(s, summary, is_file(obs) ? obs : NULL, error) && (!is_file(cs) || read_commit_samples(s, cs, error));
}

static int cmp_str(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static gboolean load_path(AnCompareSide *s, const char *path, GError **error) {
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    int e = errno;
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: cannot open: %s", path, g_strerror(e));
    return FALSE;
  }
  if (!S_ISDIR(st.st_mode)) return load_run(s, path, NULL, error);
  g_autofree char *summary = g_build_filename(path, "summary.json", NULL);
  if (is_file(summary)) return load_results_dir(s, path, error);

  g_autoptr(GError) e = NULL;
  g_autoptr(GDir) dir = g_dir_open(path, 0, &e);
  if (!dir) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: cannot open: %s", path, e->message);
    return FALSE;
  }
  g_autoptr(GPtrArray) subdirs = g_ptr_array_new_with_free_func(g_free);
  for (const char *name; (name = g_dir_read_name(dir));) {
    g_autofree char *sub = g_build_filename(path, name, NULL);
    g_autofree char *sub_summary = g_build_filename(sub, "summary.json", NULL);
    if (g_file_test(sub, G_FILE_TEST_IS_DIR) && is_file(sub_summary))
      g_ptr_array_add(subdirs, g_steal_pointer(&sub));
  }
  if (subdirs->len == 0) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
                "%s: no summary.json in it or in its subdirectories", path);
    return FALSE;
  }
  g_ptr_array_sort(subdirs, cmp_str);
  for (guint i = 0; i < subdirs->len; i++)
    if (!load_results_dir(s, g_ptr_array_index(subdirs, i), error)) return FALSE;
  return TRUE;
}

AnCompareSide *an_compare_side_load(const char *spec, GError **error) {
  g_return_val_if_fail(spec != NULL, NULL);
  /* g_strsplit gives no element for "": the side would be empty, not an error. */
  if (*spec == '\0') {
    g_set_error_literal(
        error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT,
        "empty path (expected a summary.json, a results directory or a comma-separated list of them)");
    return NULL;
  }
  g_autoptr(AnCompareSide) s = an_compare_side_new(spec);
  g_auto(GStrv) paths = g_strsplit(spec, ",", -1);
  for (char **p = paths; *p; p++) {
    if (**p == '\0') {
      g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_INPUT, "%s: empty path in the list", spec);
      return NULL;
    }
  }
  for (char **p = paths; *p; p++)
    if (!load_path(s, *p, error)) return NULL;
  return g_steal_pointer(&s);
}

static void metric_clear(gpointer p) {
  g_free((char *)((AnCompareMetric *)p)->key);
}

static void only_clear(gpointer p) {
  g_free((char *)((AnCompareOnly *)p)->key);
}

static void dist_clear(gpointer p) {
  AnCompareDist *d = p;
  g_free((char *)d->key);
  g_free((char *)d->vantage);
}

static double mean_of(const GArray *v) {
  return gsl_stats_mean((const double *)(const void *)v->data, 1, v->len);
}

static const AnEstimate NO_ESTIMATE = {NAN, NAN, NAN, NAN};

static void compare_metric(AnCompare *c, const SideMetric *ma, const SideMetric *mb) {
  const double *xa = (const double *)(const void *)ma->values->data;
  const double *xb = (const double *)(const void *)mb->values->data;
  AnCompareMetric m = {.key = g_strdup(ma->key),
                       .n_a = ma->values->len,
                       .n_b = mb->values->len,
                       .a = mean_of(ma->values),
                       .b = mean_of(mb->values),
                       .ci_a = NO_ESTIMATE,
                       .ci_b = NO_ESTIMATE,
                       .welch_t = NAN,
                       .welch_df = NAN,
                       .welch_p = NAN};
  m.diff = m.b - m.a;
  m.rel = m.diff == 0 ? 0 : m.a != 0 ? m.diff / fabs(m.a) : NAN;
  an_compare_mean_ci(xa, m.n_a, c->level, &m.ci_a);
  an_compare_mean_ci(xb, m.n_b, c->level, &m.ci_b);
  AnWelch w;
  if (an_compare_welch(xa, m.n_a, xb, m.n_b, &w)) {
    m.welch_t = w.t;
    m.welch_df = w.df;
    m.welch_p = w.p;
  }
  g_array_append_val(c->metrics, m);
}

static void add_only(AnCompare *c, gboolean in_b, const SideMetric *m) {
  AnCompareOnly o = {.key = g_strdup(m->key), .n = m->values->len, .value = mean_of(m->values)};
  g_array_append_val(c->only[in_b ? 1 : 0], o);
}

/* A sorted copy of a sample; its median (NAN when empty). */
static double *sorted_copy(const GArray *v, double *median) {
  double *x = g_memdup2(v->data, (gsize)v->len * sizeof(double));
  if (v->len) qsort(x, v->len, sizeof(double), cmpo_cmp_double);
  *median = v->len ? gsl_stats_median_from_sorted_data(x, 1, v->len) : NAN;
  return x;
}

static void compare_dist_key(AnCompare *c, char *key, const char *vantage, const GArray *a, const GArray *b);

static void compare_dist(AnCompare *c, const char *vantage, const GArray *a, const GArray *b) {
  compare_dist_key(c, vantage ? g_strdup_printf(DIST_KEY "[%s]", vantage) : g_strdup(DIST_KEY), vantage, a, b);
}

/* Takes `key`. */
static void compare_dist_key(AnCompare *c, char *key, const char *vantage, const GArray *a, const GArray *b) {
  AnCompareDist d = {.n_a = a->len, .n_b = b->len, .ks = {NAN, NAN}};
  g_autofree double *xa = sorted_copy(a, &d.median_a_ms);
  g_autofree double *xb = sorted_copy(b, &d.median_b_ms);
  if (a->len && b->len) d.ks = an_ks_two_sample(xa, a->len, xb, b->len);
  d.key = g_steal_pointer(&key);
  d.vantage = g_strdup(vantage);
  g_array_append_val(c->dists, d);
}

static gboolean keep(const AnCompareOptions *o, const char *key) {
  return !o->filter || g_str_has_prefix(key, o->filter);
}

static GPtrArray *copy_labels(const GPtrArray *labels) {
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < labels->len; i++)
    g_ptr_array_add(out, g_strdup(g_ptr_array_index(labels, i)));
  return out;
}

AnCompare *an_compare_new(const AnCompareSide *a, const AnCompareSide *b, const AnCompareOptions *options,
                          GError **error) {
  g_return_val_if_fail(a != NULL && b != NULL, NULL);
  AnCompareOptions o = options ? *options : (AnCompareOptions){0};
  if (o.level == 0) o.level = DEFAULT_LEVEL;
  g_return_val_if_fail(o.level > 0 && o.level < 1, NULL);

  g_autoptr(AnCompare) c = g_new0(AnCompare, 1);
  c->level = o.level;
  c->label_a = g_strdup(a->label);
  c->label_b = g_strdup(b->label);
  c->runs_a = copy_labels(a->run_labels);
  c->runs_b = copy_labels(b->run_labels);
  c->metrics = g_array_new(FALSE, FALSE, sizeof(AnCompareMetric));
  g_array_set_clear_func(c->metrics, metric_clear);
  for (int i = 0; i < 2; i++) {
    c->only[i] = g_array_new(FALSE, FALSE, sizeof(AnCompareOnly));
    g_array_set_clear_func(c->only[i], only_clear);
  }
  c->dists = g_array_new(FALSE, FALSE, sizeof(AnCompareDist));
  g_array_set_clear_func(c->dists, dist_clear);

  for (guint i = 0; i < a->metrics->len; i++) {
    const SideMetric *ma = g_ptr_array_index(a->metrics, i);
    if (!keep(&o, ma->key)) continue;
    const SideMetric *mb = g_hash_table_lookup(b->index, ma->key);
    if (mb)
      compare_metric(c, ma, mb);
    else
      add_only(c, FALSE, ma);
  }
  for (guint i = 0; i < b->metrics->len; i++) {
    const SideMetric *mb = g_ptr_array_index(b->metrics, i);
    if (keep(&o, mb->key) && !g_hash_table_contains(a->index, mb->key)) add_only(c, TRUE, mb);
  }

  gboolean dists = a->runs_with_obs > 0 && a->runs_with_obs == a->run_labels->len && b->runs_with_obs > 0 &&
                   b->runs_with_obs == b->run_labels->len;
  if (dists && keep(&o, DIST_KEY)) compare_dist(c, NULL, a->pooled->ms, b->pooled->ms);
  for (guint v = 0; dists && v < a->delays->len; v++) {
    const Delays *da = g_ptr_array_index(a->delays, v);
    const Delays *db = delays_find(b->delays, da->name);
    g_autofree char *key = g_strdup_printf(DIST_KEY "[%s]", da->name);
    if (db && keep(&o, key)) compare_dist(c, da->name, da->ms, db->ms);
  }

  /* Sampled commit times, when every run of both sides has them. */
  gboolean commits = a->runs_with_commit > 0 && a->runs_with_commit == a->run_labels->len &&
                     b->runs_with_commit > 0 && b->runs_with_commit == b->run_labels->len;
  for (guint i = 0; commits && i < a->commit->len; i++) {
    const Delays *da = g_ptr_array_index(a->commit, i);
    const Delays *db = delays_find(b->commit, da->name);
    g_autofree char *key = g_strdup_printf(COMMIT_KEY "[%s]", da->name);
    if (!db || !keep(&o, key)) continue;
    const char *br = strchr(da->name, '[');
    g_autofree char *vant = br ? g_strndup(br + 1, strlen(br + 1) - 1) : NULL;
    compare_dist_key(c, g_steal_pointer(&key), vant, da->ms, db->ms);
  }

  if (c->metrics->len == 0 && c->dists->len == 0) {
    g_set_error(error, AN_COMPARE_ERROR, AN_COMPARE_ERROR_NOTHING_SHARED,
                "%s: no numeric metric shared with %s%s%s%s", b->label, a->label, o.filter ? " under '" : "",
                o.filter ? o.filter : "", o.filter ? "'" : "");
    return NULL;
  }
  return g_steal_pointer(&c);
}

void an_compare_free(AnCompare *c) {
  if (!c) return;
  g_free(c->label_a);
  g_free(c->label_b);
  if (c->runs_a) g_ptr_array_unref(c->runs_a);
  if (c->runs_b) g_ptr_array_unref(c->runs_b);
  if (c->metrics) g_array_unref(c->metrics);
  for (int i = 0; i < 2; i++)
    if (c->only[i]) g_array_unref(c->only[i]);
  if (c->dists) g_array_unref(c->dists);
  g_free(c);
}

guint an_compare_n_metrics(const AnCompare *c) {
  g_return_val_if_fail(c != NULL, 0);
  return c->metrics->len;
}

const AnCompareMetric *an_compare_metric(const AnCompare *c, guint i) {
  g_return_val_if_fail(c != NULL && i < c->metrics->len, NULL);
  return &g_array_index(c->metrics, AnCompareMetric, i);
}

const AnCompareMetric *an_compare_find(const AnCompare *c, const char *key) {
  g_return_val_if_fail(c != NULL && key != NULL, NULL);
  for (guint i = 0; i < c->metrics->len; i++) {
    const AnCompareMetric *m = &g_array_index(c->metrics, AnCompareMetric, i);
    if (strcmp(m->key, key) == 0) return m;
  }
  return NULL;
}

guint an_compare_n_only(const AnCompare *c, gboolean in_b) {
  g_return_val_if_fail(c != NULL, 0);
  return c->only[in_b ? 1 : 0]->len;
}

const AnCompareOnly *an_compare_only(const AnCompare *c, gboolean in_b, guint i) {
  g_return_val_if_fail(c != NULL && i < c->only[in_b ? 1 : 0]->len, NULL);
  return &g_array_index(c->only[in_b ? 1 : 0], AnCompareOnly, i);
}

guint an_compare_n_dists(const AnCompare *c) {
  g_return_val_if_fail(c != NULL, 0);
  return c->dists->len;
}

const AnCompareDist *an_compare_dist(const AnCompare *c, guint i) {
  g_return_val_if_fail(c != NULL && i < c->dists->len, NULL);
  return &g_array_index(c->dists, AnCompareDist, i);
}
