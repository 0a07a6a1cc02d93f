/* emc_read_layout.c: a line of an EMC log split into fields, and the layout of a file: a header's columns
 * (and vantage points, for the propagation table) or the raw positions. */
#include "emc-read-private.h"

#include <string.h>

/* ---- Fields ------------------------------------------------------------------------------------------- */

/* Splits text[0..len) at commas outside quotes. FALSE with r->why set on a quoting error. */
gboolean emc_read_split(EmcReader *r, char *text, size_t len) {
  r->n_fields = r->n_fields_total = 0;
  size_t i = 0;
  for (;;) {
    Field f;
    if (i < len && text[i] == '"') {
      size_t j = i + 1;
      for (;;) {
        if (j >= len) {
          g_string_printf(r->why, "field %u: unterminated quoted field", r->n_fields_total + 1);
          return FALSE;
        }
        if (text[j] == '\\') {
          j += 2; /* an escape; a backslash last on the line leaves the quote unterminated */
        } else if (text[j] == '"') {
          if (j + 1 < len && text[j + 1] == '"')
            j += 2; /* RFC 4180 "" */
          else
            break;
        } else {
          j++;
        }
      }
      f = (Field){text + i + 1, j - i - 1, TRUE};
      i = j + 1;
      if (i < len && text[i] != ',') {
        g_string_printf(r->why, "field %u: text after the closing quote", r->n_fields_total + 1);
        return FALSE;
      }
    } else {
      const char *c = memchr(text + i, ',', len - i);
      size_t j = c ? (size_t)(c - text) : len;
      f = (Field){text + i, j - i, FALSE};
      i = j;
    }
    if (r->n_fields < MAX_FIELDS) r->fields[r->n_fields++] = f;
    r->n_fields_total++;
    if (i >= len) return TRUE;
    i++;            /* the comma */
    if (i == len) { /* a trailing comma: one more, empty field */
      if (r->n_fields < MAX_FIELDS) r->fields[r->n_fields++] = (Field){text + len, 0, FALSE};
      r->n_fields_total++;
      return TRUE;
    }
  }
}

/* Decodes escapes in place and NUL-terminates (the byte after a field is its quote, comma or the line's
 * NUL, so there is room). Returns the decoded text. */
const char *emc_read_field_text(Field *f) {
  char *p = f->p;
  size_t o = 0;
  for (size_t i = 0; i < f->len; i++) {
    char c = p[i];
    if (c == '\\' && i + 1 < f->len) {
      char n = p[i + 1];
      if (n == '\\') {
        i++;
      } else if (f->quoted) {
        switch (n) {
        case '"':
          c = '"', i++;
          break;
        case 'n':
          c = '\n', i++;
          break;
        case 'r':
          c = '\r', i++;
          break;
        case 't':
          c = '\t', i++;
          break;
        default:
          break; /* any other backslash is kept */
        }
      }
    } else if (c == '"' && f->quoted && i + 1 < f->len && p[i + 1] == '"') {
      i++;
    }
    p[o++] = c;
  }
  p[o] = '\0';
  f->len = o;
  return p;
}

gboolean emc_read_field_is(const Field *f, const char *s) {
  size_t n = strlen(s);
  return !f->quoted && f->len == n && memcmp(f->p, s, n) == 0;
}

gboolean emc_read_field_is_none(const Field *f) {
  return !f->quoted && (f->len == 0 || emc_read_field_is(f, "nil"));
}

/* ---- Layout ------------------------------------------------------------------------------------------- */

const EmcKindColumns *emc_read_kcols(const EmcReader *r) {
  return &emc_kind_columns[r->kind];
}

static int column_by_name(const EmcReader *r, const char *name) {
  const EmcKindColumns *kc = emc_read_kcols(r);
  for (guint c = 0; c < kc->n_cols; c++)
    if (g_ascii_strcasecmp(name, kc->cols[c].name) == 0 ||
        (kc->cols[c].alias && g_ascii_strcasecmp(name, kc->cols[c].alias) == 0))
      return (int)c;
  return -1;
}

static gboolean has_suffix_ci(const char *s, const char *suffix, size_t *prefix_len) {
  size_t n = strlen(s), m = strlen(suffix);
  if (n <= m || g_ascii_strcasecmp(s + n - m, suffix) != 0) return FALSE;
  *prefix_len = n - m;
  return TRUE;
}

/* The header name of field `i` with surrounding spaces removed (decoded in place). */
static const char *header_name(EmcReader *r, guint i) {
  return g_strstrip((char *)emc_read_field_text(&r->fields[i]));
}

gboolean emc_read_is_header(EmcReader *r) {
  Field f0 = r->fields[0]; /* a copy: decoding it in place must not disturb a data line */
  char buf[64];
  if (f0.len >= sizeof buf) return FALSE;
  memcpy(buf, f0.p, f0.len);
  buf[f0.len] = '\0';
  f0.p = buf;
  const char *name = g_strstrip((char *)emc_read_field_text(&f0));
  size_t pl;
  if (column_by_name(r, name) >= 0) return TRUE;
  return r->kind == EMC_KIND_PROPAGATION && has_suffix_ci(name, "TimeStamp", &pl);
}

static gboolean header_error(EmcReader *r, GError **error, const char *fmt, const char *arg) {
  g_autofree char *what = g_strdup_printf(fmt, arg);
  g_set_error(error, EMC_ERROR, EMC_ERROR_HEADER, "%s:%" G_GUINT64_FORMAT ": %s", r->cur_name, r->line_no,
              what);
  r->done = TRUE;
  return FALSE;
}

static gboolean same_vantages(GPtrArray *a, GPtrArray *b) {
  if (a->len != b->len) return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (strcmp(g_ptr_array_index(a, i), g_ptr_array_index(b, i)) != 0) return FALSE;
  return TRUE;
}

static void vantages_done(EmcReader *r) {
  g_array_set_size(r->seen, r->vnames->len);
  g_array_set_size(r->diff, r->vnames->len);
}

/* Builds the column map from the header in r->fields. FALSE with `error` set on a file-level error. */
gboolean emc_read_setup_header(EmcReader *r, GError **error) {
  if (r->n_fields_total > MAX_FIELDS)
    return header_error(r, error, "more than %s columns", G_STRINGIFY(MAX_FIELDS));
  r->has_header = TRUE;
  r->n_header_fields = r->n_fields_total;
  g_autoptr(GPtrArray) diff_names = g_ptr_array_new();
  g_autoptr(GArray) diff_cols = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < r->n_fields; i++) {
    const char *name = header_name(r, i);
    int c = column_by_name(r, name);
    size_t pl;
    if (c >= 0) {
      if (r->map[c] >= 0)
        return header_error(r, error, "column %s appears twice", emc_read_kcols(r)->cols[c].name);
      r->map[c] = (int)i;
    } else if (r->kind == EMC_KIND_PROPAGATION && has_suffix_ci(name, "TimeStamp", &pl)) {
      char *v = g_strndup(name, pl);
      for (guint k = 0; k < r->vnames->len; k++)
        if (g_ascii_strcasecmp(g_ptr_array_index(r->vnames, k), v) == 0) {
          g_free(v);
          return header_error(r, error, "column %s appears twice", name);
        }
      g_ptr_array_add(r->vnames, v);
      int fi = (int)i, none = -1;
      g_array_append_val(r->vts, fi);
      g_array_append_val(r->vdiff, none);
    } else if (r->kind == EMC_KIND_PROPAGATION && has_suffix_ci(name, "Diff", &pl)) {
      g_ptr_array_add(diff_names, (char *)name);
      int fi = (int)i;
      g_array_append_val(diff_cols, fi);
    }
  }
  for (guint d = 0; d < diff_names->len; d++) {
    const char *dn = g_ptr_array_index(diff_names, d);
    for (guint v = 0; v < r->vnames->len; v++) {
      const char *vn = g_ptr_array_index(r->vnames, v);
      size_t n = strlen(vn);
      if (g_ascii_strncasecmp(dn, vn, n) == 0 && g_ascii_strcasecmp(dn + n, "Diff") == 0)
        g_array_index(r->vdiff, int, v) = g_array_index(diff_cols, int, d);
    }
  }
  const EmcKindColumns *kc = emc_read_kcols(r);
  for (guint c = 0; c < kc->n_cols; c++)
    if (kc->cols[c].required && r->map[c] < 0)
      return header_error(r, error, "missing required column %s", kc->cols[c].name);
  if (r->kind == EMC_KIND_PROPAGATION) {
    if (r->vnames->len == 0) return header_error(r, error, "%s", "no <vantage>TimeStamp column");
    if (!r->first_vnames) {
      r->first_vnames = g_ptr_array_new_with_free_func(g_free);
      for (guint v = 0; v < r->vnames->len; v++)
        g_ptr_array_add(r->first_vnames, g_strdup(g_ptr_array_index(r->vnames, v)));
    } else if (!same_vantages(r->vnames, r->first_vnames)) {
      return header_error(r, error, "%s", "the vantage points differ from those of the first file");
    }
    vantages_done(r);
  }
  return TRUE;
}

/* Headerless: raw positions. Propagation tables get their layout per line (set_propagation_positions). */
gboolean emc_read_setup_positional(EmcReader *r, GError **error) {
  const EmcKindColumns *kc = emc_read_kcols(r);
  if (r->kind == EMC_KIND_PROPAGATION) {
    g_ptr_array_set_size(r->vnames, 0);
    for (int v = 0; v < EMC_LEGACY_VANTAGES; v++)
      g_ptr_array_add(r->vnames, g_strdup(emc_legacy_vantages[v]));
    if (r->first_vnames && !same_vantages(r->vnames, r->first_vnames))
      return header_error(r, error, "%s", "the vantage points differ from those of the first file");
    if (!r->first_vnames) {
      r->first_vnames = g_ptr_array_new_with_free_func(g_free);
      for (int v = 0; v < EMC_LEGACY_VANTAGES; v++)
        g_ptr_array_add(r->first_vnames, g_strdup(emc_legacy_vantages[v]));
    }
    g_array_set_size(r->vts, EMC_LEGACY_VANTAGES);
    g_array_set_size(r->vdiff, EMC_LEGACY_VANTAGES);
    vantages_done(r);
    return TRUE;
  }
  for (guint c = 0; c < kc->n_raw; c++)
    r->map[c] = (int)c;
  return TRUE;
}

/* Headerless propagation: the plain (12 fields), v2 (18) and v3 (20) layouts. */
gboolean emc_read_set_propagation_positions(EmcReader *r) {
  guint n = r->n_fields_total;
  if (n != 12 && n != 18 && n != 20) {
    g_string_printf(r->why, "expected 12, 18 or 20 fields, found %u", n);
    return FALSE;
  }
  for (int i = 0; i < EMC_MAX_COLS; i++)
    r->map[i] = -1;
  r->map[EMC_R_HASH] = 0;
  r->map[EMC_R_NUMBER] = 1;
  r->map[EMC_R_TYPE] = 2;
  r->map[EMC_R_FIRST] = 7;
  for (int v = 0; v < EMC_LEGACY_VANTAGES; v++) {
    g_array_index(r->vts, int, v) = 3 + v;
    g_array_index(r->vdiff, int, v) = 8 + v;
  }
  if (n >= 18)
    for (int c = EMC_R_POOL; c <= EMC_R_SIZE; c++)
      r->map[c] = 12 + (c - EMC_R_POOL);
  if (n == 20) {
    r->map[EMC_R_INTERBLOCK] = 18;
    r->map[EMC_R_INTERBLOCK_POOL] = 19;
  }
  return TRUE;
}
