/* params.c: parameter tables, their validation against JSON objects, problem collection and --set. */
#include "params.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

G_DEFINE_QUARK(sim - params - error - quark, sim_params_error)

/* ---- SimDiag ---- */

struct SimDiag {
  char *file;
  GPtrArray *messages; /* char *, full text, insertion order */
  GPtrArray *owners;   /* char *, pairs (JSON path, label) from sim_diag_attribute(), in call order */
};

SimDiag *sim_diag_new(const char *file) {
  SimDiag *diag = g_new0(SimDiag, 1);
  diag->file = g_strdup(file);
  diag->messages = g_ptr_array_new_with_free_func(g_free);
  diag->owners = g_ptr_array_new_with_free_func(g_free);
  return diag;
}

void sim_diag_free(SimDiag *diag) {
  if (!diag) return;
  g_ptr_array_unref(diag->messages);
  g_ptr_array_unref(diag->owners);
  g_free(diag->file);
  g_free(diag);
}

static void diag_addv(SimDiag *diag, const char *path, const char *fmt, va_list ap) G_GNUC_PRINTF(3, 0);

/* Whether `path` is `prefix` or lies below it ("$.a.b" and "$.a[0]" lie below "$.a"; "$.ab" does not). */
static gboolean path_within(const char *path, const char *prefix) {
  gsize n = strlen(prefix);
  return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '.' || path[n] == '[');
}

static void diag_addv(SimDiag *diag, const char *path, const char *fmt, va_list ap) {
  GString *s = g_string_new(NULL);
  const char *label = NULL, *owned = NULL;
  /* The latest attribution wins: a later --set replaced what an earlier one wrote. */
  for (guint i = diag->owners->len; path && !label && i >= 2; i -= 2) {
    owned = g_ptr_array_index(diag->owners, i - 2);
    if (path_within(path, owned)) label = g_ptr_array_index(diag->owners, i - 1);
  }
  if (label) {
    g_string_append_printf(s, "%s: ", label);
    if (strcmp(path, owned) != 0) g_string_append_printf(s, "%s: ", path);
  } else {
    if (diag->file) g_string_append_printf(s, "%s: ", diag->file);
    if (path) g_string_append_printf(s, "%s: ", path);
  }
  g_string_append_vprintf(s, fmt, ap);
  g_ptr_array_add(diag->messages, g_string_free(s, FALSE));
}

void sim_diag_add(SimDiag *diag, const char *path, const char *fmt, ...) {
  g_return_if_fail(diag != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  diag_addv(diag, path, fmt, ap);
  va_end(ap);
}

void sim_diag_add_raw(SimDiag *diag, const char *fmt, ...) {
  g_return_if_fail(diag != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  diag_addv(diag, NULL, fmt, ap);
  va_end(ap);
}

void sim_diag_add_plain(SimDiag *diag, const char *fmt, ...) {
  g_return_if_fail(diag != NULL && fmt != NULL);
  va_list ap;
  va_start(ap, fmt);
  g_ptr_array_add(diag->messages, g_strdup_vprintf(fmt, ap));
  va_end(ap);
}

void sim_diag_add_at(SimDiag *diag, int line, int column, const char *fmt, ...) {
  g_return_if_fail(diag != NULL && fmt != NULL);
  GString *s = g_string_new(NULL);
  if (diag->file) g_string_append_printf(s, "%s:", diag->file);
  g_string_append_printf(s, "%d:%d: ", MAX(line, 1), MAX(column, 1));
  va_list ap;
  va_start(ap, fmt);
  g_string_append_vprintf(s, fmt, ap);
  va_end(ap);
  g_ptr_array_add(diag->messages, g_string_free(s, FALSE));
}

void sim_diag_attribute(SimDiag *diag, const char *json_path, const char *label) {
  g_return_if_fail(diag != NULL && json_path != NULL && label != NULL);
  g_ptr_array_add(diag->owners, g_strdup(json_path));
  g_ptr_array_add(diag->owners, g_strdup(label));
}

guint sim_diag_count(const SimDiag *diag) {
  g_return_val_if_fail(diag != NULL, 0);
  return diag->messages->len;
}

const char *sim_diag_get(const SimDiag *diag, guint i) {
  g_return_val_if_fail(diag != NULL, NULL);
  g_return_val_if_fail(i < diag->messages->len, NULL);
  return g_ptr_array_index(diag->messages, i);
}

char *sim_diag_join(const SimDiag *diag) {
  g_return_val_if_fail(diag != NULL, NULL);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < diag->messages->len; i++) {
    if (i) g_string_append_c(s, '\n');
    g_string_append(s, g_ptr_array_index(diag->messages, i));
  }
  return g_string_free(s, FALSE);
}

/* ---- Formatting helpers ---- */

/* See params.h. */
char *sim_fmt_double(double v) {
  if (isnan(v)) return g_strdup("nan");
  if (isinf(v)) return g_strdup(v > 0 ? "inf" : "-inf");
  char fmt[8];
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 6; prec <= 17; prec++) {
    g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
    g_ascii_formatd(buf, sizeof buf, fmt, v);
    if (g_ascii_strtod(buf, NULL) == v) break;
  }
  return g_strdup(buf);
}

/* Whether v is integral and fits in int64 (2^63 is exactly representable; INT64_MAX is not). */
static gboolean double_is_int64(double v) {
  return isfinite(v) && v == trunc(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
}

/* A number belonging to a spec: integers for INT specs, fmt_double otherwise. Free with g_free(). */
static char *fmt_spec_number(const SimParamSpec *spec, double v) {
  if (spec->type == SIM_PARAM_INT && double_is_int64(v))
    return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)v);
  return sim_fmt_double(v);
}

/* "[0, 1]", "(0, 1]", "> 0", ">= 0", "<= 5"; NULL when unbounded or not numeric. */
static char *range_text(const SimParamSpec *spec, gboolean *both) {
  if (spec->type != SIM_PARAM_NUMBER && spec->type != SIM_PARAM_INT) return NULL;
  gboolean lo = spec->min > -INFINITY, hi = spec->max < INFINITY;
  if (both) *both = lo && hi;
  if (!lo && !hi) return NULL;
  g_autofree char *min = fmt_spec_number(spec, spec->min);
  g_autofree char *max = fmt_spec_number(spec, spec->max);
  if (lo && hi) return g_strdup_printf("%c%s, %s]", spec->min_open ? '(' : '[', min, max);
  if (lo) return g_strdup_printf("%s %s", spec->min_open ? ">" : ">=", min);
  return g_strdup_printf("<= %s", max);
}

static const char *type_name(const SimParamSpec *spec) {
  switch (spec->type) {
  case SIM_PARAM_NUMBER:
    return "number";
  case SIM_PARAM_INT:
    return "integer";
  case SIM_PARAM_BOOL:
    return "boolean";
  case SIM_PARAM_STRING:
    return "string";
  case SIM_PARAM_ENUM:
    return "one of";
  }
  return "?";
}

const char *sim_json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "object";
  case JSON_ARRAY:
    return "array";
  case JSON_STRING:
    return "string";
  case JSON_INTEGER:
    return "integer";
  case JSON_REAL:
    return "real";
  case JSON_TRUE:
    return "true";
  case JSON_FALSE:
    return "false";
  case JSON_NULL:
    return "null";
  }
  return "?";
}

/* See params.h. */
gboolean sim_json_matrix_shape(const json_t *v, const char *path, guint n, gboolean *rows_ok, SimDiag *diag) {
  if (!json_is_array(v)) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %s)", n, n, sim_json_kind(v));
    return FALSE;
  }
  if (json_array_size(v) != n) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %zu rows)", n, n, json_array_size(v));
    return FALSE;
  }
  for (guint i = 0; i < n; i++) {
    const json_t *row = json_array_get(v, i);
    const char *kind = sim_json_kind(row);
    if (!json_is_array(row)) {
      sim_diag_add(diag, path, "must be a %ux%u matrix (row %u is %s %s)", n, n, i,
                   strchr("aeiou", kind[0]) ? "an" : "a", kind);
      *rows_ok = FALSE;
    } else if (json_array_size(row) != n) {
      sim_diag_add(diag, path, "must be a %ux%u matrix (row %u has %zu entries)", n, n, i, json_array_size(row));
      *rows_ok = FALSE;
    }
  }
  return TRUE;
}

/* What a JSON value is, for "(got ...)": its kind, and a real's value. Free with g_free(). */
static char *json_what(const json_t *v) {
  if (json_is_real(v)) {
    g_autofree char *num = sim_fmt_double(json_real_value(v));
    return g_strdup_printf("real %s", num);
  }
  return g_strdup(sim_json_kind(v));
}

static char *choices_text(const char *const *choices, const char *sep) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; choices && choices[i]; i++) {
    if (i) g_string_append(s, sep);
    g_string_append(s, choices[i]);
  }
  return g_string_free(s, FALSE);
}

static int enum_index(const SimParamSpec *spec, const char *value) {
  for (int i = 0; spec->choices && spec->choices[i]; i++)
    if (strcmp(spec->choices[i], value) == 0) return i;
  return -1;
}

static int enum_default(const SimParamSpec *spec) {
  int idx = enum_index(spec, spec->def_str ? spec->def_str : "");
  if (idx < 0)
    g_error("parameter %s: default \"%s\" is not one of its choices", spec->name,
            spec->def_str ? spec->def_str : "(null)");
  return idx;
}

/* A missing STRING default reads as "", so that the echo re-parses to the same struct. */
static const char *string_default(const SimParamSpec *spec) {
  return spec->def_str ? spec->def_str : "";
}

char *sim_json_child_path(const char *path, const char *key) {
  gboolean plain = key[0] != '\0';
  for (const char *c = key; *c; c++)
    if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-') plain = FALSE;
  if (plain) return g_strdup_printf("%s.%s", path, key);
  json_t *s = json_string(key);
  char *quoted = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
  json_decref(s);
  char *res = g_strdup_printf("%s[%s]", path, quoted ? quoted : "?");
  free(quoted);
  return res;
}

/* ---- Storing ---- */

static void store_default(const SimParamSpec *spec, void *out) {
  void *slot = G_STRUCT_MEMBER_P(out, spec->offset);
  switch (spec->type) {
  case SIM_PARAM_NUMBER:
    *(double *)slot = spec->def;
    break;
  case SIM_PARAM_INT:
    *(int64_t *)slot = (int64_t)spec->def;
    break;
  case SIM_PARAM_BOOL:
    *(gboolean *)slot = spec->def != 0;
    break;
  case SIM_PARAM_STRING:
    *(char **)slot = g_strdup(string_default(spec));
    break;
  case SIM_PARAM_ENUM:
    *(int *)slot = enum_default(spec);
    break;
  }
}

static json_t *default_json(const SimParamSpec *spec) {
  switch (spec->type) {
  case SIM_PARAM_NUMBER:
    return json_real(spec->def);
  case SIM_PARAM_INT:
    return json_integer((json_int_t)spec->def);
  case SIM_PARAM_BOOL:
    return json_boolean(spec->def != 0);
  case SIM_PARAM_STRING:
    return json_string(string_default(spec));
  case SIM_PARAM_ENUM:
    return json_string(spec->choices[enum_default(spec)]);
  }
  return NULL;
}

/* ---- Validation ---- */

static gboolean in_bounds(const SimParamSpec *spec, double v) {
  if (spec->min_open ? !(v > spec->min) : !(v >= spec->min)) return FALSE;
  return v <= spec->max;
}

static void report_bounds(const SimParamSpec *spec, const char *path, const char *got, SimDiag *diag) {
  gboolean both = FALSE;
  g_autofree char *range = range_text(spec, &both);
  sim_diag_add(diag, path, "must be %s%s (got %s)", both ? "in " : "", range, got);
}

/* Checks one value and stores it; reports and returns FALSE on a problem. */
static gboolean parse_value(const SimParamSpec *spec, json_t *v, const char *path, void *out, SimDiag *diag) {
  void *slot = G_STRUCT_MEMBER_P(out, spec->offset);
  g_autofree char *what = json_what(v);
  switch (spec->type) {
  case SIM_PARAM_NUMBER: {
    if (!json_is_number(v)) {
      sim_diag_add(diag, path, "must be a number (got %s)", what);
      return FALSE;
    }
    double d = json_number_value(v);
    if (!isfinite(d)) {
      sim_diag_add(diag, path, "must be finite (got %s)", what);
      return FALSE;
    }
    if (!in_bounds(spec, d)) {
      g_autofree char *got = sim_fmt_double(d);
      report_bounds(spec, path, got, diag);
      return FALSE;
    }
    *(double *)slot = d;
    return TRUE;
  }
  case SIM_PARAM_INT: {
    gint64 i;
    if (json_is_integer(v)) {
      i = json_integer_value(v);
      if (!in_bounds(spec, (double)i)) {
        g_autofree char *got = g_strdup_printf("%" G_GINT64_FORMAT, i);
        report_bounds(spec, path, got, diag);
        return FALSE;
      }
    } else if (json_is_real(v) && isfinite(json_real_value(v)) &&
               json_real_value(v) == trunc(json_real_value(v))) {
      double d = json_real_value(v);
      if (!in_bounds(spec, d)) {
        g_autofree char *got = fmt_spec_number(spec, d);
        report_bounds(spec, path, got, diag);
        return FALSE;
      }
      if (!double_is_int64(d)) {
        sim_diag_add(diag, path, "must be a 64-bit integer (got %s)", what);
        return FALSE;
      }
      i = (gint64)d;
    } else {
      sim_diag_add(diag, path, "must be an integer (got %s)", what);
      return FALSE;
    }
    *(int64_t *)slot = i;
    return TRUE;
  }
  case SIM_PARAM_BOOL:
    if (!json_is_boolean(v)) {
      sim_diag_add(diag, path, "must be a boolean (got %s)", what);
      return FALSE;
    }
    *(gboolean *)slot = json_is_true(v);
    return TRUE;
  case SIM_PARAM_STRING: {
    if (!json_is_string(v)) {
      sim_diag_add(diag, path, "must be a string (got %s)", what);
      return FALSE;
    }
    char **s = slot;
    g_free(*s); /* out starts zeroed, so this only matters when a caller parses twice */
    *s = g_strdup(json_string_value(v));
    return TRUE;
  }
  case SIM_PARAM_ENUM: {
    int idx = json_is_string(v) ? enum_index(spec, json_string_value(v)) : -1;
    if (idx < 0) {
      g_autofree char *choices = choices_text(spec->choices, ", ");
      char *quoted = json_is_string(v) ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
      sim_diag_add(diag, path, "must be one of: %s (got %s)", choices, quoted ? quoted : what);
      free(quoted);
      return FALSE;
    }
    *(int *)slot = idx;
    return TRUE;
  }
  }
  return FALSE;
}

static const SimParamSpec *find_spec(const SimParamSpec *specs, guint n_specs, const char *key) {
  for (guint i = 0; i < n_specs; i++)
    if (strcmp(specs[i].name, key) == 0) return &specs[i];
  return NULL;
}

static gboolean is_extra(const char *const *extra_keys, const char *key) {
  for (guint i = 0; extra_keys && extra_keys[i]; i++)
    if (strcmp(extra_keys[i], key) == 0) return TRUE;
  return FALSE;
}

gboolean sim_params_parse(const SimParamSpec *specs, guint n_specs, json_t *obj, const char *path,
                          const char *const *extra_keys, void *out, SimDiag *diag) {
  g_return_val_if_fail(specs != NULL || n_specs == 0, FALSE);
  g_return_val_if_fail(path != NULL && out != NULL && diag != NULL, FALSE);

  if (!json_is_object(obj)) {
    sim_diag_add(diag, path, "must be an object");
    return FALSE;
  }
  gboolean ok = TRUE;
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    g_autofree char *kpath = sim_json_child_path(path, key);
    const SimParamSpec *spec = find_spec(specs, n_specs, key);
    if (spec) {
      ok &= parse_value(spec, value, kpath, out, diag);
    } else if (!is_extra(extra_keys, key)) {
      GString *names = g_string_new(NULL);
      for (guint i = 0; i < n_specs; i++)
        g_string_append_printf(names, "%s%s", names->len ? ", " : "", specs[i].name);
      for (guint i = 0; extra_keys && extra_keys[i]; i++)
        g_string_append_printf(names, "%s%s", names->len ? ", " : "", extra_keys[i]);
      if (names->len)
        sim_diag_add(diag, kpath, "unknown key (expected one of: %s)", names->str);
      else
        sim_diag_add(diag, kpath, "unknown key (this object takes no keys)");
      g_string_free(names, TRUE);
      ok = FALSE;
    }
  }
  /* Defaults are added after the walk: jansson objects must not change while being iterated. */
  for (guint i = 0; i < n_specs; i++) {
    const SimParamSpec *spec = &specs[i];
    if (json_object_get(obj, spec->name)) continue;
    if (spec->required) {
      g_autofree char *kpath = sim_json_child_path(path, spec->name);
      sim_diag_add(diag, kpath, "missing required key");
      ok = FALSE;
      continue;
    }
    json_object_set_new(obj, spec->name, default_json(spec));
    store_default(spec, out);
  }
  return ok;
}

void sim_params_defaults(const SimParamSpec *specs, guint n_specs, void *out) {
  g_return_if_fail(out != NULL);
  for (guint i = 0; i < n_specs; i++)
    store_default(&specs[i], out);
}

void sim_params_clear(const SimParamSpec *specs, guint n_specs, void *out) {
  if (!out) return;
  for (guint i = 0; i < n_specs; i++) {
    if (specs[i].type != SIM_PARAM_STRING) continue;
    g_clear_pointer((char **)G_STRUCT_MEMBER_P(out, specs[i].offset), g_free);
  }
}

/* ---- Help ---- */

enum { COL_NAME, COL_TYPE, COL_UNIT, COL_RANGE, COL_DEFAULT, COL_HELP, N_COLS };

void sim_params_describe(const SimParamSpec *specs, guint n_specs, int indent, GString *out) {
  g_return_if_fail(out != NULL);
  if (n_specs == 0) return;
  char **cells = g_new0(char *, (gsize)n_specs *N_COLS);
  glong width[N_COLS] = {0};
  for (guint i = 0; i < n_specs; i++) {
    const SimParamSpec *spec = &specs[i];
    char **row = cells + (gsize)i * N_COLS;
    row[COL_NAME] = g_strdup(spec->name);
    if (spec->type == SIM_PARAM_ENUM) {
      g_autofree char *choices = choices_text(spec->choices, "|");
      row[COL_TYPE] = g_strdup_printf("one of %s", choices);
    } else {
      row[COL_TYPE] = g_strdup(type_name(spec));
    }
    row[COL_UNIT] = spec->unit && spec->unit[0] ? g_strdup_printf("[%s]", spec->unit) : g_strdup("");
    char *range = range_text(spec, NULL);
    row[COL_RANGE] = range ? range : g_strdup("");
    if (spec->required) {
      row[COL_DEFAULT] = g_strdup("required");
    } else {
      g_autofree char *def = NULL;
      switch (spec->type) {
      case SIM_PARAM_NUMBER:
      case SIM_PARAM_INT:
        def = fmt_spec_number(spec, spec->def);
        break;
      case SIM_PARAM_BOOL:
        def = g_strdup(spec->def != 0 ? "true" : "false");
        break;
      case SIM_PARAM_STRING:
        def = g_strdup_printf("\"%s\"", string_default(spec));
        break;
      case SIM_PARAM_ENUM:
        def = g_strdup(spec->def_str ? spec->def_str : "");
        break;
      }
      row[COL_DEFAULT] = g_strdup_printf("default %s", def);
    }
    row[COL_HELP] = g_strdup(spec->help ? spec->help : "");
    for (int c = 0; c < N_COLS; c++)
      width[c] = MAX(width[c], g_utf8_strlen(row[c], -1));
  }
  for (guint i = 0; i < n_specs; i++) {
    char **row = cells + (gsize)i * N_COLS;
    gsize start = out->len;
    for (int k = 0; k < indent; k++)
      g_string_append_c(out, ' ');
    gboolean first = TRUE;
    for (int c = 0; c < N_COLS; c++) {
      if (width[c] == 0) continue; /* a column no row uses (e.g. no units at all) */
      if (!first) g_string_append(out, "  ");
      first = FALSE;
      g_string_append(out, row[c]);
      for (glong k = g_utf8_strlen(row[c], -1); k < width[c]; k++)
        g_string_append_c(out, ' ');
    }
    while (out->len > start && out->str[out->len - 1] == ' ')
      g_string_truncate(out, out->len - 1);
    g_string_append_c(out, '\n');
  }
  for (gsize k = 0; k < (gsize)n_specs * N_COLS; k++)
    g_free(cells[k]);
  g_free(cells);
}

/* ---- --set PATH=VALUE ---- */

typedef struct {
  gboolean is_index;
  char *name;  /* member name, when !is_index */
  gsize index; /* when is_index */
  gsize start; /* offset of the segment in the stripped path (for naming its container) */
} PathSeg;

static void path_seg_clear(gpointer p) {
  g_free(((PathSeg *)p)->name);
}

static gboolean is_name_char(char c) {
  return g_ascii_isalnum(c) || c == '_' || c == '-';
}

/* Splits a stripped path into segments; FALSE with a syntax error message in *msg. */
static gboolean path_split(const char *s, GArray *segs, char **msg) {
  gsize i = 0;
  gboolean want_name = FALSE; /* after a '.', a member name must follow */
  while (s[i]) {
    PathSeg seg = {.start = i};
    if (s[i] == '[' && !want_name) {
      gsize j = i + 1, idx = 0;
      if (!g_ascii_isdigit(s[j])) {
        *msg = g_strdup_printf("expected an index at \"%s\"", s + j);
        return FALSE;
      }
      for (; g_ascii_isdigit(s[j]); j++) {
        if (idx > (G_MAXSIZE - 9) / 10) {
          *msg = g_strdup_printf("index too large at \"%s\"", s + i);
          return FALSE;
        }
        idx = idx * 10 + (gsize)(s[j] - '0');
      }
      if (s[j] != ']') {
        *msg = g_strdup_printf("expected ']' at \"%s\"", s + j);
        return FALSE;
      }
      seg.is_index = TRUE;
      seg.index = idx;
      i = j + 1;
    } else {
      gsize j = i;
      while (is_name_char(s[j]))
        j++;
      if (j == i) {
        *msg = g_strdup_printf("expected a member name at \"%s\"", s + i);
        return FALSE;
      }
      seg.name = g_strndup(s + i, j - i);
      i = j;
    }
    g_array_append_val(segs, seg);
    want_name = FALSE;
    if (s[i] == '.') {
      i++;
      want_name = TRUE;
      if (!s[i]) {
        *msg = g_strdup("expected a member name at the end of the path");
        return FALSE;
      }
    } else if (s[i] && s[i] != '[') {
      *msg = g_strdup_printf("expected '.' or '[' at \"%s\"", s + i);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean sim_json_set_path(json_t *root, const char *assignment, GError **error) {
  g_return_val_if_fail(root != NULL && assignment != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

  const char *eq = strchr(assignment, '=');
  if (!eq) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX,
                "--set %s: missing '=' (expected PATH=VALUE)", assignment);
    return FALSE;
  }
  g_autofree char *path = g_strndup(assignment, (gsize)(eq - assignment));
  const char *text = eq + 1;
  const char *s = path;
  if (g_str_has_prefix(s, "$."))
    s += 2;
  else if (s[0] == '$')
    s += 1;
  if (!s[0]) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX,
                "--set %s: empty path (expected PATH=VALUE)", path);
    return FALSE;
  }

  g_autoptr(GArray) segs = g_array_new(FALSE, TRUE, sizeof(PathSeg));
  g_array_set_clear_func(segs, path_seg_clear);
  g_autofree char *msg = NULL;
  if (!path_split(s, segs, &msg)) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX, "--set %s: %s", path, msg);
    return FALSE;
  }

  /* Parse the value before touching root, so that a failure changes nothing. A value that is not JSON is a
   * string (so that name=fast needs no quotes), unless it starts as JSON text does: then it was meant as
   * JSON, and taking `[{"name":1` as a string would hide the typing error behind a type error or, at a key
   * that takes strings, behind nothing at all. */
  json_error_t jerr;
  g_autoptr(json_t) value = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
  if (!value) {
    const char *t = text;
    while (g_ascii_isspace(*t))
      t++;
    if (*t == '{' || *t == '[' || *t == '"') {
      g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX,
                  "--set %s: invalid JSON value (%d:%d: %s); a value that starts with '{', '[' or '\"' must "
                  "be valid JSON",
                  path, MAX(jerr.line, 1), MAX(jerr.column, 1), jerr.text);
      return FALSE;
    }
    value = json_string(text);
  }
  if (!value) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX,
                "--set %s: the value is neither JSON nor a valid UTF-8 string", path);
    return FALSE;
  }

  /* Walk as far as the path exists; note where objects must be created (from `create_from` on, all
   * segments are names, checked before anything is created). */
  json_t *cur = root;
  guint n = segs->len;
  for (guint k = 0; k < n; k++) {
    const PathSeg *seg = &g_array_index(segs, PathSeg, k);
    /* The container's path: the text before this segment, without its trailing '.'. */
    gsize clen = seg->start;
    if (clen && s[clen - 1] == '.') clen--;
    g_autofree char *container = clen ? g_strndup(s, clen) : g_strdup("$");
    gboolean last = k + 1 == n;
    if (seg->is_index) {
      if (!json_is_array(cur)) {
        g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH, "--set %s: %s is not an array", path,
                    container);
        return FALSE;
      }
      gsize size = json_array_size(cur);
      if (seg->index >= size) {
        g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH,
                    "--set %s: index %" G_GSIZE_FORMAT " out of range (array has %" G_GSIZE_FORMAT
                    " element%s)",
                    path, seg->index, size, size == 1 ? "" : "s");
        return FALSE;
      }
      if (last) {
        json_array_set(cur, seg->index, value);
        return TRUE;
      }
      cur = json_array_get(cur, seg->index);
      continue;
    }
    if (!json_is_object(cur)) {
      g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH, "--set %s: %s is not an object", path,
                  container);
      return FALSE;
    }
    if (last) {
      json_object_set(cur, seg->name, value);
      return TRUE;
    }
    json_t *child = json_object_get(cur, seg->name);
    if (child) {
      cur = child;
      continue;
    }
    /* Missing: only objects can be created, so no index may follow. */
    for (guint m = k + 1; m < n; m++) {
      const PathSeg *later = &g_array_index(segs, PathSeg, m);
      if (later->is_index) {
        g_autofree char *missing = g_strndup(s, later->start);
        g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH,
                    "--set %s: %s does not exist (arrays are not created)", path, missing);
        return FALSE;
      }
    }
    for (guint m = k; m + 1 < n; m++) {
      json_t *obj = json_object();
      json_object_set_new(cur, g_array_index(segs, PathSeg, m).name, obj);
      cur = obj;
    }
    json_object_set(cur, g_array_index(segs, PathSeg, n - 1).name, value);
    return TRUE;
  }
  g_assert_not_reached();
}

char *sim_json_set_target(const char *assignment) {
  g_return_val_if_fail(assignment != NULL, NULL);
  const char *eq = strchr(assignment, '=');
  if (!eq) return NULL;
  g_autofree char *path = g_strndup(assignment, (gsize)(eq - assignment));
  const char *s = path;
  if (g_str_has_prefix(s, "$."))
    s += 2;
  else if (s[0] == '$')
    s += 1;
  g_autoptr(GArray) segs = g_array_new(FALSE, TRUE, sizeof(PathSeg));
  g_array_set_clear_func(segs, path_seg_clear);
  g_autofree char *msg = NULL;
  if (!s[0] || !path_split(s, segs, &msg)) return NULL;
  GString *out = g_string_new("$");
  for (guint k = 0; k < segs->len; k++) {
    const PathSeg *seg = &g_array_index(segs, PathSeg, k);
    if (seg->is_index)
      g_string_append_printf(out, "[%" G_GSIZE_FORMAT "]", seg->index);
    else
      g_string_append_printf(out, ".%s", seg->name); /* names are made of [A-Za-z0-9_-]: never quoted */
  }
  return g_string_free(out, FALSE);
}

json_t *sim_json_get_path(json_t *root, const char *path, GError **error) {
  g_return_val_if_fail(root != NULL && path != NULL, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);
  const char *s = path;
  if (g_str_has_prefix(s, "$."))
    s += 2;
  else if (s[0] == '$')
    s += 1;
  if (!s[0]) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX, "empty path");
    return NULL;
  }
  g_autoptr(GArray) segs = g_array_new(FALSE, TRUE, sizeof(PathSeg));
  g_array_set_clear_func(segs, path_seg_clear);
  g_autofree char *msg = NULL;
  if (!path_split(s, segs, &msg)) {
    g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX, "bad path \"%s\": %s", path, msg);
    return NULL;
  }
  json_t *cur = root;
  for (guint k = 0; k < segs->len; k++) {
    const PathSeg *seg = &g_array_index(segs, PathSeg, k);
    gsize clen = seg->start;
    if (clen && s[clen - 1] == '.') clen--;
    /* The path up to and including this segment, and its container's, for messages. */
    const PathSeg *next = k + 1 < segs->len ? &g_array_index(segs, PathSeg, k + 1) : NULL;
    gsize end = next ? next->start : strlen(s);
    if (end && s[end - 1] == '.') end--;
    g_autofree char *here = g_strdup_printf("$.%.*s", (int)end, s);
    g_autofree char *container = clen ? g_strdup_printf("$.%.*s", (int)clen, s) : g_strdup("$");
    if (seg->is_index) {
      if (!json_is_array(cur)) {
        g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH, "%s is not an array", container);
        return NULL;
      }
      gsize size = json_array_size(cur);
      if (seg->index >= size) {
        g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH,
                    "%s does not exist (the array has %" G_GSIZE_FORMAT " element%s)", here, size,
                    size == 1 ? "" : "s");
        return NULL;
      }
      cur = json_array_get(cur, seg->index);
      continue;
    }
    if (!json_is_object(cur)) {
      g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH, "%s is not an object", container);
      return NULL;
    }
    cur = json_object_get(cur, seg->name);
    if (!cur) {
      g_set_error(error, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_PATH, "%s does not exist", here);
      return NULL;
    }
  }
  return cur;
}
