/* sweep.c: the sweep file: its top-level keys, the base scenario, the swept dimensions and their expansion
 * into points (each checked), the manifest, and what a sweep is made of. */
#include "sweep-private.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "output.h"
#include "scenario.h"
#include "util.h"

/* ---- Formatting ---- */

/* The shortest %g form that reads back as x (C locale). Free with g_free(). */
char *sim_sweep_fmt_num(double x) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    g_snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (g_ascii_strtod(buf, NULL) == x) break;
  }
  return g_strdup(buf);
}

/* A JSON value as the VALUE of a --set: JSON text, reals in their shortest form, and strings bare where
 * --set would take them as strings anyway (they are not JSON text themselves). */
static char *value_json_text(const json_t *v) {
  if (json_is_real(v)) return sim_sweep_fmt_num(json_real_value(v));
  if (json_is_string(v)) {
    json_t *as_json = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
    if (!as_json && *json_string_value(v)) return g_strdup(json_string_value(v));
    json_decref(as_json);
  }
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  char *r = g_strdup(s);
  free(s);
  return r;
}

/* A JSON value as a table cell or for a message: strings bare, numbers shortest, the rest compact JSON. */
char *sim_sweep_value_text(const json_t *v) {
  if (json_is_string(v)) return g_strdup(json_string_value(v));
  return value_json_text(v);
}

/* ---- Sweep files ---- */

typedef struct {
  char *name;
  char *base;
  int64_t replicates;
} SweepTop;

static const SimParamSpec sweep_params[] = {
    {.name = "name",
     .type = SIM_PARAM_STRING,
     .def_str = "",
     .offset = offsetof(SweepTop, name),
     .help = "the sweep's name: results/<name>/ by default (the file name if absent)"},
    {.name = "base",
     .type = SIM_PARAM_STRING,
     .required = TRUE,
     .offset = offsetof(SweepTop, base),
     .help = "the base scenario, relative to the sweep file"},
    {.name = "replicates",
     .type = SIM_PARAM_INT,
     .min = 1,
     .max = 100000,
     .def = 1,
     .offset = offsetof(SweepTop, replicates),
     .help = "runs per point, each with its own derived seed"},
};
static const char *const sweep_extra[] = {"comment", "parameters", "sets", "metrics", NULL};

static void json_free(gpointer p) {
  json_decref(p);
}

static void ptr_array_free(gpointer p) {
  g_ptr_array_unref(p);
}

static void dim_clear(SweepDim *d) {
  g_free(d->column);
  if (d->values) g_ptr_array_unref(d->values);
  if (d->sets) g_ptr_array_unref(d->sets);
}

void sim_sweep_dim_init(SweepDim *d, const char *column) {
  d->column = g_strdup(column);
  d->values = g_ptr_array_new_with_free_func(json_free);
  d->sets = g_ptr_array_new_with_free_func(ptr_array_free);
}

/* Adds a level; takes `value`. Returns the level's (empty) list of sets. */
GPtrArray *sim_sweep_dim_add(SweepDim *d, json_t *value) {
  g_ptr_array_add(d->values, value);
  GPtrArray *s = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(d->sets, s);
  return s;
}

/* Every key of `o` must be in `allowed` (NULL-terminated); problems go to diag. */
void sim_sweep_check_keys(json_t *o, const char *path, const char *const *allowed, SimDiag *diag) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    gboolean known = FALSE;
    for (const char *const *a = allowed; *a && !known; a++)
      known = strcmp(*a, k) == 0;
    if (known) continue;
    g_autofree char *kp = sim_json_child_path(path, k);
    g_autofree char *list = g_strjoinv(", ", (char **)allowed);
    sim_diag_add(diag, kp, "unknown key (expected one of: %s)", list);
  }
}

/* A non-empty array of numbers in [min, max] (integers if `integer`) at obj[key]; NULL with problems in
 * diag otherwise. */
GArray *sim_sweep_num_list(json_t *obj, const char *key, const char *path, double min, double max,
                           gboolean min_open, gboolean max_open, gboolean integer, SimDiag *diag) {
  g_autofree char *p = sim_json_child_path(path, key);
  json_t *arr = json_object_get(obj, key);
  if (!arr) {
    sim_diag_add(diag, p, "missing required key");
    return NULL;
  }
  if (!json_is_array(arr) || json_array_size(arr) == 0) {
    sim_diag_add(diag, p, "must be a non-empty array of %s", integer ? "integers" : "numbers");
    return NULL;
  }
  if (json_array_size(arr) > SWEEP_MAX_LEVELS) {
    sim_diag_add(diag, p, "at most %u values", SWEEP_MAX_LEVELS);
    return NULL;
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    g_autofree char *ip = g_strdup_printf("%s[%zu]", p, i);
    if (integer ? !json_is_integer(v) : !json_is_number(v)) {
      sim_diag_add(diag, ip, "must be %s", integer ? "an integer" : "a number");
      ok = FALSE;
      continue;
    }
    double x = json_number_value(v);
    if (!isfinite(x) || (min_open ? x <= min : x < min) || (max_open ? x >= max : x > max)) {
      g_autofree char *a = sim_sweep_fmt_num(min), *b = sim_sweep_fmt_num(max), *got = sim_sweep_fmt_num(x);
      sim_diag_add(diag, ip, "must be in %s%s, %s%s (got %s)", min_open ? "(" : "[", a, b,
                   max_open ? ")" : "]", got);
      ok = FALSE;
      continue;
    }
    for (guint j = 0; j < out->len; j++)
      if (g_array_index(out, double, j) == x) {
        sim_diag_add(diag, ip, "repeats %s[%u]", p, j);
        ok = FALSE;
      }
    g_array_append_val(out, x);
  }
  if (!ok) g_clear_pointer(&out, g_array_unref);
  return out;
}

/* {"path", "values" | "range"}: one level per value. */
static gboolean path_param_parse(json_t *o, const char *path, json_t *base_doc, const char *base_file,
                                 SweepDim *dim, SimDiag *diag) {
  static const char *const keys[] = {"path", "values", "range", "comment", NULL};
  guint before = sim_diag_count(diag);
  sim_sweep_check_keys(o, path, keys, diag);
  g_autofree char *pp = sim_json_child_path(path, "path");
  const char *target = json_string_value(json_object_get(o, "path"));
  if (!target) {
    sim_diag_add(diag, pp, "must be a string such as \"network.delay.median_ms\"");
  } else {
    const char *bare = g_str_has_prefix(target, "$.") ? target + 2 : target;
    g_autoptr(GError) e = NULL;
    if (strcmp(bare, "seed") == 0)
      sim_diag_add(diag, pp, "the seed is derived for each run; sweep replicates instead");
    else if (!sim_json_get_path(base_doc, target, &e))
      sim_diag_add(diag, pp, "not in the base scenario %s (with its defaults): %s", base_file, e->message);
  }
  json_t *values = json_object_get(o, "values"), *range = json_object_get(o, "range");
  g_autofree char *vp = sim_json_child_path(path, "values");
  g_autofree char *rp = sim_json_child_path(path, "range");
  if (!values == !range) sim_diag_add(diag, path, "give exactly one of \"values\" and \"range\"");
  g_autoptr(GPtrArray) levels = g_ptr_array_new_with_free_func(json_free);
  if (values) {
    if (!json_is_array(values) || json_array_size(values) == 0) {
      sim_diag_add(diag, vp, "must be a non-empty array");
    } else if (json_array_size(values) > SWEEP_MAX_LEVELS) {
      sim_diag_add(diag, vp, "at most %u values", SWEEP_MAX_LEVELS);
    } else {
      size_t i;
      json_t *v;
      json_array_foreach(values, i, v) {
        for (guint j = 0; j < levels->len; j++)
          if (json_equal(v, g_ptr_array_index(levels, j))) {
            g_autofree char *ip = g_strdup_printf("%s[%zu]", vp, i);
            sim_diag_add(diag, ip, "repeats %s[%u]", vp, j);
          }
        g_ptr_array_add(levels, json_incref(v));
      }
    }
  } else if (range) {
    static const char *const rkeys[] = {"from", "to", "step", NULL};
    if (!json_is_object(range)) {
      sim_diag_add(diag, rp, "must be an object {\"from\", \"to\", \"step\"}");
    } else {
      guint rb = sim_diag_count(diag);
      sim_sweep_check_keys(range, rp, rkeys, diag);
      double x[3] = {0};
      json_int_t xi[3] = {0}; /* exact when all three are integers (doubles round past 2^53) */
      gboolean ints = TRUE;
      for (guint i = 0; i < 3; i++) {
        json_t *v = json_object_get(range, rkeys[i]);
        g_autofree char *kp = sim_json_child_path(rp, rkeys[i]);
        if (!v)
          sim_diag_add(diag, kp, "missing required key");
        else if (!json_is_number(v))
          sim_diag_add(diag, kp, "must be a number");
        else {
          x[i] = json_number_value(v);
          ints = ints && json_is_integer(v);
          if (json_is_integer(v)) xi[i] = json_integer_value(v);
        }
      }
      if (sim_diag_count(diag) == rb) {
        g_autofree char *sp = sim_json_child_path(rp, "step");
        g_autofree char *tp = sim_json_child_path(rp, "to");
        gboolean step_ok = ints ? xi[2] > 0 : x[2] > 0;
        gboolean order_ok = ints ? xi[1] >= xi[0] : x[1] >= x[0];
        /* In unsigned arithmetic the span of two int64 values cannot overflow. */
        double count = !step_ok || !order_ok ? 0
                       : ints ? (double)(((guint64)xi[1] - (guint64)xi[0]) / (guint64)xi[2]) + 1
                              : floor((x[1] - x[0]) / x[2] + 1e-9) + 1;
        if (!step_ok)
          sim_diag_add(diag, sp, "must be > 0");
        else if (!order_ok)
          sim_diag_add(diag, tp, "must be >= from");
        else if (count > SWEEP_MAX_LEVELS)
          sim_diag_add(diag, rp, count < 1e15 ? "gives %.0f values; at most %u" : "gives %.3g values; at most %u",
                       count, SWEEP_MAX_LEVELS);
        else
          for (guint k = 0; k < (guint)count; k++) {
            if (ints) {
              /* from + k·step <= to: exact, no overflow. */
              g_ptr_array_add(levels,
                              json_integer((json_int_t)((guint64)xi[0] + (guint64)k * (guint64)xi[2])));
            } else {
              /* from + k·step, rounded to 12 significant digits so 0.1 steps stay 0.3, not
               * 0.30000000000000004. */
              char buf[40];
              g_snprintf(buf, sizeof buf, "%.12g", x[0] + k * x[2]);
              g_ptr_array_add(levels, json_real(g_ascii_strtod(buf, NULL)));
            }
          }
      }
    }
  }
  if (sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, g_str_has_prefix(target, "$.") ? target + 2 : target);
  for (guint i = 0; i < levels->len; i++) {
    json_t *v = g_ptr_array_index(levels, i);
    g_autofree char *text = value_json_text(v);
    g_ptr_array_add(sim_sweep_dim_add(dim, json_incref(v)), g_strdup_printf("%s=%s", dim->column, text));
  }
  return TRUE;
}

void sim_sweep_free(SimSweep *sw) {
  if (!sw) return;
  for (guint p = 0; sw->point_sets && p < sw->n_points; p++)
    g_strfreev(sw->point_sets[p]);
  g_free(sw->point_sets);
  g_free(sw->point_values);
  g_strfreev(sw->metrics);
  if (sw->columns) g_ptr_array_unref(sw->columns);
  json_decref(sw->manifest);
  g_free(sw->base_file);
  g_free(sw->name);
  g_free(sw);
}

/* A string array at obj[key] (NULL if absent), or FALSE with a message. */
static gboolean string_list(const json_t *obj, const char *key, gboolean need_eq, GPtrArray **out,
                            char **msg) {
  json_t *a = json_object_get(obj, key);
  *out = NULL;
  if (!a) return TRUE;
  if (!json_is_array(a)) {
    *msg = g_strdup_printf("$.%s: must be an array of strings", key);
    return FALSE;
  }
  GPtrArray *r = g_ptr_array_new_with_free_func(g_free);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    if (!json_is_string(v) || (need_eq && !strchr(json_string_value(v), '='))) {
      *msg = g_strdup_printf("$.%s[%zu]: must be a string%s", key, i, need_eq ? " PATH=VALUE" : "");
      g_ptr_array_unref(r);
      return FALSE;
    }
    g_ptr_array_add(r, g_strdup(json_string_value(v)));
  }
  *out = r;
  return TRUE;
}

SimSweep *sim_sweep_from_manifest(const json_t *manifest, const char *what, GError **error) {
  g_return_val_if_fail(manifest != NULL && what != NULL, NULL);
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    g_autofree char *m_ = g_strdup_printf(__VA_ARGS__);                                                      \
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a sweep manifest (%s)", what, m_);         \
    return NULL;                                                                                             \
  } while (0)
  const json_t *sweep = json_object_get(manifest, "sweep");
  const json_t *columns = json_object_get(manifest, "columns");
  const json_t *points = json_object_get(manifest, "points");
  const json_t *seed = json_object_get(manifest, "base_seed");
  const char *base = json_string_value(json_object_get(manifest, "base_file"));
  if (!json_is_object(manifest) || !json_is_object(sweep) || !json_is_array(columns) ||
      !json_is_array(points) || !json_is_integer(seed) || json_integer_value(seed) < 0 || !base ||
      !json_is_object(json_object_get(manifest, "base_scenario")))
    BAD("needs sweep, base_file, base_seed, base_scenario, columns and points");
  const char *name = json_string_value(json_object_get(sweep, "name"));
  json_t *reps = json_object_get(sweep, "replicates");
  if (!name || !json_is_integer(reps) || json_integer_value(reps) < 1 || json_integer_value(reps) > 100000)
    BAD("$.sweep needs a name and replicates in [1, 100000]");
  g_autoptr(SimSweep) sw = g_new0(SimSweep, 1);
  sw->name = g_strdup(name);
  sw->base_file = g_strdup(base);
  sw->base_seed = (uint64_t)json_integer_value(seed);
  sw->replicates = (guint)json_integer_value(reps);
  sw->manifest = json_incref((json_t *)manifest);
  g_autofree char *msg = NULL;
  g_autoptr(GPtrArray) fixed = NULL, metrics = NULL;
  if (!string_list(sweep, "sets", TRUE, &fixed, &msg) ||
      !string_list(sweep, "metrics", FALSE, &metrics, &msg))
    BAD("$.sweep%s", msg + 1);
  if (metrics) {
    g_ptr_array_add(metrics, NULL);
    sw->metrics = (char **)g_ptr_array_free(g_steal_pointer(&metrics), FALSE);
  }
  sw->columns = g_ptr_array_new_with_free_func(g_free);
  size_t i;
  json_t *v;
  json_array_foreach(columns, i, v) {
    if (!json_is_string(v)) BAD("$.columns[%zu] must be a string", i);
    g_ptr_array_add(sw->columns, g_strdup(json_string_value(v)));
  }
  sw->n_points = (guint)json_array_size(points);
  if (sw->n_points == 0 || (guint64)sw->n_points * sw->replicates > SWEEP_MAX_RUNS)
    BAD("$.points: between 1 and %u runs", SWEEP_MAX_RUNS);
  sw->point_values = g_new0(json_t *, sw->n_points);
  sw->point_sets = g_new0(char **, sw->n_points);
  json_array_foreach(points, i, v) {
    json_t *vals = json_object_get(v, "values");
    g_autoptr(GPtrArray) own = NULL;
    g_autofree char *m = NULL;
    if (!json_is_array(vals) || json_array_size(vals) != sw->columns->len)
      BAD("$.points[%zu].values must be an array of %u values", i, sw->columns->len);
    if (!json_is_array(json_object_get(v, "sets")) || !string_list(v, "sets", TRUE, &own, &m))
      BAD("$.points[%zu].sets must be an array of PATH=VALUE strings", i);
    GPtrArray *all = g_ptr_array_new();
    for (guint k = 0; fixed && k < fixed->len; k++)
      g_ptr_array_add(all, g_strdup(g_ptr_array_index(fixed, k)));
    for (guint k = 0; k < own->len; k++)
      g_ptr_array_add(all, g_strdup(g_ptr_array_index(own, k)));
    g_ptr_array_add(all, NULL);
    sw->point_values[i] = vals;
    sw->point_sets[i] = (char **)g_ptr_array_free(all, FALSE);
  }
#undef BAD
  return g_steal_pointer(&sw);
}

/* "col=value, col=value" for messages. */
static char *point_desc(GPtrArray *dims, const guint *level) {
  GString *s = g_string_new(NULL);
  for (guint d = 0; d < dims->len; d++) {
    SweepDim *dim = g_ptr_array_index(dims, d);
    g_autofree char *t = sim_sweep_value_text(g_ptr_array_index(dim->values, level[d]));
    g_string_append_printf(s, "%s%s=%s", d ? ", " : "", dim->column, t);
  }
  return g_string_free(s, FALSE);
}

static void dim_free(gpointer p) {
  dim_clear(p);
  g_free(p);
}

/* Copies every message of `from` into `to` under `path`, prefixed by `what`. */
static void diag_copy(SimDiag *to, const SimDiag *from, const char *path, const char *what) {
  for (guint i = 0; i < sim_diag_count(from); i++)
    sim_diag_add(to, path, "%s%s", what ? what : "", sim_diag_get(from, i));
}

/* Why `path` could not be read, in the words of g_file_get_contents(), which this reader used (a missing file:
 * the system's words alone). */
static char *glib_words(const char *path, const GError *e, const SimInputProblem *pb) {
  if (e->code == SIM_INPUT_ERROR_OPEN && pb->err_no == ENOENT) return g_strdup(g_strerror(ENOENT));
  if (e->code == SIM_INPUT_ERROR_OPEN) return g_strdup_printf("Failed to open file \u201c%s\u201d: %s", path, g_strerror(pb->err_no));
  if (e->code == SIM_INPUT_ERROR_READ) return g_strdup_printf("Error reading file \u201c%s\u201d: %s", path, g_strerror(pb->err_no));
  return g_strdup(e->message);
}

/* The sweep file as a JSON object, or NULL with the problem in diag. */
static json_t *read_sweep_doc(const char *path, SimDiag *diag) {
  gsize len = 0;
  SimInputProblem pb;
  g_autoptr(GError) ge = NULL;
  g_autofree char *data = sim_input_read_file(path, 0, &len, &pb, &ge);
  if (!data) {
    if (ge->code == SIM_INPUT_ERROR_NOT_REGULAR) {
      sim_diag_add_raw(diag, "%s", ge->message);
    } else {
      g_autofree char *why = glib_words(path, ge, &pb);
      sim_diag_add_raw(diag, "cannot open: %s", why);
    }
    return NULL;
  }
  g_autoptr(json_t) doc = sim_json_parse(data, len, SIM_JSON_BLANK_AS_SYNTAX, &pb, &ge);
  if (!doc) {
    sim_diag_add_input_error(diag, ge, &pb);
    return NULL;
  }
  if (!json_is_object(doc)) {
    sim_diag_add(diag, "$", "must be an object");
    return NULL;
  }
  return g_steal_pointer(&doc);
}

/* The top-level keys of the sweep file `doc` (read from `path`): name (the file's base name if absent), base
 * and replicates into `top` (strings owned), comment, the fixed sets (appended to `fixed`), metrics, and that
 * parameters is an array. Problems go to diag. */
static void check_top(json_t *doc, const char *path, SweepTop *top, GPtrArray *fixed, SimDiag *diag) {
  if (!json_object_get(doc, "name")) {
    g_autofree char *bn = g_path_get_basename(path);
    char *dot = strrchr(bn, '.');
    if (dot && dot != bn) *dot = '\0';
    json_object_set_new(doc, "name", json_string(bn));
  }
  sim_params_parse(sweep_params, G_N_ELEMENTS(sweep_params), doc, "$", sweep_extra, top, diag);
  const char *name = top->name;
  /* The name becomes a directory name (results/<name>/). */
  gboolean name_ok = name && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
  for (const char *q = name; name_ok && *q; q++)
    name_ok = g_ascii_isalnum(*q) || strchr("._-", *q);
  if (name && !name_ok)
    sim_diag_add(diag, "$.name", "must be made of letters, digits, '.', '_' and '-' (got \"%s\")", name);
  json_t *c = json_object_get(doc, "comment");
  if (c && !json_is_string(c)) {
    gboolean ok = json_is_array(c);
    size_t i;
    json_t *v;
    if (ok) json_array_foreach(c, i, v) ok = ok && json_is_string(v);
    if (!ok) sim_diag_add(diag, "$.comment", "must be a string or an array of strings");
  }
  json_t *sets = json_object_get(doc, "sets");
  if (sets && !json_is_array(sets))
    sim_diag_add(diag, "$.sets", "must be an array of \"PATH=VALUE\" strings");
  if (json_is_array(sets)) {
    size_t i;
    json_t *v;
    json_array_foreach(sets, i, v) {
      g_autofree char *ip = g_strdup_printf("$.sets[%zu]", i);
      if (!json_is_string(v) || !strchr(json_string_value(v), '='))
        sim_diag_add(diag, ip, "must be a string PATH=VALUE");
      else
        g_ptr_array_add(fixed, g_strdup(json_string_value(v)));
    }
  }
  json_t *metrics = json_object_get(doc, "metrics");
  if (metrics) {
    gboolean ok = json_is_array(metrics) && json_array_size(metrics) > 0;
    size_t i;
    json_t *v;
    if (ok) json_array_foreach(metrics, i, v) ok = ok && json_is_string(v) && *json_string_value(v);
    if (!ok)
      sim_diag_add(diag, "$.metrics",
                   "must be a non-empty array of summary keys such as \"chain.uncle_rate\"");
  }
  json_t *params = json_object_get(doc, "parameters");
  if (params && !json_is_array(params)) sim_diag_add(diag, "$.parameters", "must be an array");
}

/* The base scenario, first as it is, then with the fixed sets, so each problem is blamed on its key. Returns
 * it with the fixed sets, and the file's text in *data (free with g_free()) and *len; NULL with the problems
 * in diag. */
static SimScenario *load_base(const char *base_file, GPtrArray *fixed, char **data, gsize *len,
                              SimDiag *diag) {
  SimInputProblem pb;
  g_autoptr(GError) ge = NULL;
  g_autofree char *base_data = sim_input_read_file(base_file, 0, len, &pb, &ge);
  if (!base_data) {
    if (ge->code == SIM_INPUT_ERROR_NOT_REGULAR) {
      sim_diag_add(diag, "$.base", "%s: %s", base_file, ge->message);
    } else {
      g_autofree char *why = glib_words(base_file, ge, &pb);
      sim_diag_add(diag, "$.base", "cannot open %s: %s", base_file, why);
    }
    return NULL;
  }
  {
    g_autoptr(SimDiag) bd = sim_diag_new(base_file);
    g_autoptr(SimScenario) plain = sim_scenario_load_data(base_data, *len, base_file, NULL, bd);
    if (!plain) {
      diag_copy(diag, bd, "$.base", NULL);
      return NULL;
    }
  }
  g_ptr_array_add(fixed, NULL);
  g_autoptr(SimDiag) bd = sim_diag_new(base_file);
  g_autoptr(SimScenario) bsc =
      sim_scenario_load_data(base_data, *len, base_file, (const char *const *)fixed->pdata, bd);
  g_ptr_array_remove_index(fixed, fixed->len - 1);
  if (!bsc) {
    diag_copy(diag, bd, "$.sets", NULL);
    return NULL;
  }
  *data = g_steal_pointer(&base_data);
  return g_steal_pointer(&bsc);
}

/* The dimensions of $.parameters `params` (paths, and at most one generator) over the base scenario `bsc`
 * (with the fixed sets). Problems go to diag; the dimensions parsed without problems are returned (free with
 * g_ptr_array_unref()). */
static GPtrArray *parse_dims(json_t *params, const SimScenario *bsc, const char *base_file, SimDiag *diag) {
  GPtrArray *dims = g_ptr_array_new_with_free_func(dim_free);
  SweepBasePools bp = {0};
  sim_sweep_base_pools_init(&bp, json_object_get(bsc->doc, "pools"));
  int generator_at = -1;
  size_t i;
  json_t *po;
  json_array_foreach(params, i, po) {
    g_autofree char *pp = g_strdup_printf("$.parameters[%zu]", i);
    if (!json_is_object(po)) {
      sim_diag_add(diag, pp,
                   "must be an object: {\"path\", \"values\" or \"range\"} or {\"generator\", ...}");
      continue;
    }
    SweepDim *dim = g_new0(SweepDim, 1);
    gboolean ok;
    if (json_object_get(po, "generator")) {
      if (generator_at >= 0) {
        sim_diag_add(diag, pp, "only one generator per sweep (another is at $.parameters[%d])", generator_at);
        g_free(dim);
        continue;
      }
      generator_at = (int)i;
      ok = sim_sweep_gen_parse(po, pp, &bp, dim, diag);
    } else if (json_object_get(po, "path")) {
      ok = path_param_parse(po, pp, bsc->doc, base_file, dim, diag);
    } else {
      sim_diag_add(diag, pp, "needs \"path\" (with \"values\" or \"range\") or \"generator\"");
      ok = FALSE;
    }
    if (!ok) {
      dim_free(dim);
      continue;
    }
    for (guint d = 0; d < dims->len; d++)
      if (strcmp(((SweepDim *)g_ptr_array_index(dims, d))->column, dim->column) == 0)
        sim_diag_add(diag, pp, "sweeps %s again (also $.parameters[%u])", dim->column, d);
    g_ptr_array_add(dims, dim);
  }
  sim_sweep_base_pools_clear(&bp);
  return dims;
}

/* The number of points (the product of the dimensions' levels) in *n_points; FALSE, with the problem in diag,
 * when points × replicates pass SWEEP_MAX_RUNS. */
static gboolean count_points(GPtrArray *dims, int64_t replicates, guint64 *n_points, SimDiag *diag) {
  *n_points = 1;
  for (guint d = 0; d < dims->len; d++) {
    *n_points *= ((SweepDim *)g_ptr_array_index(dims, d))->values->len;
    if (*n_points * (guint64)replicates > SWEEP_MAX_RUNS) {
      sim_diag_add(diag, "$.parameters", "more than %u runs (points × replicates)", SWEEP_MAX_RUNS);
      return FALSE;
    }
  }
  return TRUE;
}

/* The manifest's points, last dimension fastest: per point {"values", "sets"} (the dimensions' sets, after
 * the fixed ones on the command line of its runs). Each point's scenario is loaded to check it; its problems
 * go to diag under $.parameters. */
static json_t *expand_points(GPtrArray *dims, guint64 n_points, GPtrArray *fixed, const char *base_data,
                             gsize base_len, const char *base_file, SimDiag *diag) {
  json_t *jpoints = json_array();
  g_autofree guint *level = g_new0(guint, dims->len + 1);
  for (guint64 p = 0; p < n_points; p++) {
    guint64 rem = p;
    for (guint d = dims->len; d-- > 0;) {
      guint nl = ((SweepDim *)g_ptr_array_index(dims, d))->values->len;
      level[d] = (guint)(rem % nl);
      rem /= nl;
    }
    json_t *vals = json_array(), *own = json_array();
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    for (guint k = 0; k < fixed->len; k++)
      g_ptr_array_add(all, g_ptr_array_index(fixed, k));
    for (guint d = 0; d < dims->len; d++) {
      SweepDim *dim = g_ptr_array_index(dims, d);
      json_array_append(vals, g_ptr_array_index(dim->values, level[d]));
      GPtrArray *ls = g_ptr_array_index(dim->sets, level[d]);
      for (guint k = 0; k < ls->len; k++) {
        json_array_append_new(own, json_string(g_ptr_array_index(ls, k)));
        g_ptr_array_add(all, g_ptr_array_index(ls, k));
      }
    }
    g_ptr_array_add(all, NULL);
    g_autoptr(SimDiag) pd = sim_diag_new(base_file);
    g_autoptr(SimScenario) psc =
        sim_scenario_load_data(base_data, base_len, base_file, (const char *const *)all->pdata, pd);
    if (!psc) {
      g_autofree char *desc = point_desc(dims, level);
      g_autofree char *what = g_strdup_printf("point %" G_GUINT64_FORMAT " (%s): ", p, desc);
      diag_copy(diag, pd, "$.parameters", what);
    }
    json_array_append_new(jpoints, json_pack("{s:o, s:o}", "values", vals, "sets", own));
  }
  return jpoints;
}

SimSweep *sim_sweep_load_file(const char *path, SimDiag *diag) {
  g_return_val_if_fail(path != NULL && diag != NULL, NULL);
  g_autoptr(json_t) doc = read_sweep_doc(path, diag);
  if (!doc) return NULL;
  guint before = sim_diag_count(diag);
  SweepTop top = {0};
  g_autoptr(GPtrArray) fixed = g_ptr_array_new_with_free_func(g_free);
  check_top(doc, path, &top, fixed, diag);
  g_clear_pointer(&top.name, g_free); /* checked, not kept */
  g_autofree char *base = g_steal_pointer(&top.base);
  if (sim_diag_count(diag) != before || !base) return NULL;

  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base_file =
      g_path_is_absolute(base) || strcmp(dir, ".") == 0 ? g_strdup(base) : g_build_filename(dir, base, NULL);
  gsize base_len = 0;
  g_autofree char *base_data = NULL;
  g_autoptr(SimScenario) bsc = load_base(base_file, fixed, &base_data, &base_len, diag);
  if (!bsc) return NULL;

  g_autoptr(GPtrArray) dims = parse_dims(json_object_get(doc, "parameters"), bsc, base_file, diag);
  guint64 n_points = 0;
  if (sim_diag_count(diag) != before || !count_points(dims, top.replicates, &n_points, diag)) return NULL;
  json_t *jpoints = expand_points(dims, n_points, fixed, base_data, base_len, base_file, diag);
  if (sim_diag_count(diag) != before) {
    json_decref(jpoints);
    return NULL;
  }

  json_t *columns = json_array();
  for (guint d = 0; d < dims->len; d++)
    json_array_append_new(columns, json_string(((SweepDim *)g_ptr_array_index(dims, d))->column));
  g_autoptr(json_t) manifest =
      json_pack("{s:s, s:s, s:O, s:s, s:I, s:O, s:o, s:o}", "tool", "sim sweep", "sweep_file", path, "sweep",
                doc, "base_file", base_file, "base_seed", (json_int_t)bsc->seed, "base_scenario", bsc->doc,
                "columns", columns, "points", jpoints);
  g_autoptr(GError) me = NULL;
  SimSweep *sw = sim_sweep_from_manifest(manifest, path, &me);
  if (!sw) sim_diag_add_raw(diag, "%s", me->message); /* cannot happen: the manifest was just built */
  return sw;
}

const char *sim_sweep_name(const SimSweep *sw) {
  return sw->name;
}
const char *sim_sweep_base_file(const SimSweep *sw) {
  return sw->base_file;
}
uint64_t sim_sweep_base_seed(const SimSweep *sw) {
  return sw->base_seed;
}
guint sim_sweep_n_points(const SimSweep *sw) {
  return sw->n_points;
}
guint sim_sweep_n_replicates(const SimSweep *sw) {
  return sw->replicates;
}
guint sim_sweep_n_runs(const SimSweep *sw) {
  return sw->n_points * sw->replicates;
}
guint sim_sweep_n_columns(const SimSweep *sw) {
  return sw->columns->len;
}
const json_t *sim_sweep_manifest(const SimSweep *sw) {
  return sw->manifest;
}

const char *sim_sweep_column(const SimSweep *sw, guint i) {
  g_return_val_if_fail(i < sw->columns->len, NULL);
  return g_ptr_array_index(sw->columns, i);
}

const json_t *sim_sweep_point_values(const SimSweep *sw, guint point) {
  g_return_val_if_fail(point < sw->n_points, NULL);
  return sw->point_values[point];
}

const char *const *sim_sweep_point_sets(const SimSweep *sw, guint point) {
  g_return_val_if_fail(point < sw->n_points, NULL);
  return (const char *const *)sw->point_sets[point];
}

uint64_t sim_sweep_run_seed(const SimSweep *sw, guint point, guint replicate) {
  return sim_sweep_seed(sw->base_seed, point, replicate);
}

char *sim_sweep_run_name(guint point, guint replicate) {
  return g_strdup_printf("p%u-r%u", point, replicate);
}

gboolean sim_sweep_manifest_same_study(const json_t *a, const json_t *b) {
  static const char *const same[] = {"base_seed", "base_scenario", "columns", "points"};
  for (guint i = 0; i < G_N_ELEMENTS(same); i++) {
    const json_t *x = json_object_get(a, same[i]), *y = json_object_get(b, same[i]);
    if (!x || !y || !json_equal((json_t *)x, (json_t *)y)) return FALSE;
  }
  /* The sweep itself, less what changes no run. */
  g_autoptr(json_t) sa = json_deep_copy(json_object_get(a, "sweep"));
  g_autoptr(json_t) sb = json_deep_copy(json_object_get(b, "sweep"));
  if (!json_is_object(sa) || !json_is_object(sb)) return FALSE;
  static const char *const free_keys[] = {"name", "comment", "replicates", "metrics", "base"};
  for (guint i = 0; i < G_N_ELEMENTS(free_keys); i++) {
    json_object_del(sa, free_keys[i]);
    json_object_del(sb, free_keys[i]);
  }
  return json_equal(sa, sb);
}
