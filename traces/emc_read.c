/* emc_read.c: the streaming EMC reader: lines from zfile, fields, headers, values, bad-line bookkeeping. */
#include "emc-private.h"
#include "zfile.h"

#include <math.h>
#include <string.h>

/* Fields stored per line; a header may have at most this many columns, a data line more only to be
 * counted and rejected. Bounds the per-line memory independently of the line. */
#define MAX_FIELDS 256

typedef struct {
  char *p; /* the field's text as written (inside the quotes when quoted), not NUL-terminated */
  size_t len;
  gboolean quoted;
} Field;

/* What happened to one line. */
typedef enum { LINE_RECORD, LINE_SKIPPED, LINE_FATAL } LineResult;

struct EmcReader {
  EmcKind kind;
  EmcReaderFlags flags;
  char **paths; /* the parts, or NULL for a memory reader */
  guint n_parts, part;
  const void *mem;
  size_t mem_len;
  char *cur_name;
  TrZFile *zf; /* the open part, NULL between parts */
  TrZFileFormat cur_format;
  size_t max_line;
  guint64 line_no;
  gboolean done;

  /* Layout of the current file. */
  gboolean layout_known; /* a non-empty line of this file was seen */
  gboolean has_header;
  guint n_header_fields;
  int map[EMC_MAX_COLS];   /* column -> field index, -1 when absent */
  GPtrArray *vnames;       /* EMC_KIND_PROPAGATION: vantage names of this file */
  GPtrArray *first_vnames; /* ... of the first file, which all parts must repeat */
  GArray *vts, *vdiff;     /* field index of each vantage's TimeStamp / Diff column (-1 when absent) */
  GArray *seen, *diff;     /* record arrays, one entry per vantage */

  /* The current line. */
  Field fields[MAX_FIELDS];
  guint n_fields;       /* stored */
  guint n_fields_total; /* counted */
  gboolean truncated;   /* the line has no '\n' (last line) */
  GArray *lists[3];     /* EmcHash scratch: txs / uncles / in_uncle_blocks */
  GString *why;         /* reason the current line is bad */

  guint64 n_records, n_bad;
  char *bad_msgs[EMC_BAD_LINES_KEPT + 1];
  guint n_bad_kept;
};

/* ---- Opening ------------------------------------------------------------------------------------------ */

static EmcReader *reader_new(EmcKind kind, EmcReaderFlags flags) {
  EmcReader *r = g_new0(EmcReader, 1);
  r->kind = kind;
  r->flags = flags;
  r->max_line = EMC_MAX_LINE_BYTES;
  r->vnames = g_ptr_array_new_with_free_func(g_free);
  r->vts = g_array_new(FALSE, FALSE, sizeof(int));
  r->vdiff = g_array_new(FALSE, FALSE, sizeof(int));
  r->seen = g_array_new(FALSE, FALSE, sizeof(int64_t));
  r->diff = g_array_new(FALSE, FALSE, sizeof(double));
  for (int i = 0; i < 3; i++)
    r->lists[i] = g_array_new(FALSE, FALSE, sizeof(EmcHash));
  r->why = g_string_new(NULL);
  return r;
}

static void reset_layout(EmcReader *r) {
  r->line_no = 0;
  r->layout_known = FALSE;
  r->has_header = FALSE;
  r->n_header_fields = 0;
  for (int i = 0; i < EMC_MAX_COLS; i++)
    r->map[i] = -1;
  g_ptr_array_set_size(r->vnames, 0);
  g_array_set_size(r->vts, 0);
  g_array_set_size(r->vdiff, 0);
}

static void set_zfile_error(GError **error, GError *zerr) {
  int code = zerr->code == TR_ZFILE_ERROR_CORRUPT ? EMC_ERROR_COMPRESSION : EMC_ERROR_IO;
  g_set_error_literal(error, EMC_ERROR, code, zerr->message);
  g_error_free(zerr);
}

/* Opens part r->part. FALSE with `error` set if it cannot be opened. */
static gboolean open_part(EmcReader *r, GError **error) {
  reset_layout(r);
  if (r->paths) {
    GError *zerr = NULL;
    r->zf = tr_zfile_open(r->paths[r->part], &zerr);
    if (!r->zf) {
      set_zfile_error(error, zerr);
      return FALSE;
    }
    g_free(r->cur_name);
    r->cur_name = g_strdup(r->paths[r->part]);
  } else {
    r->zf = tr_zfile_new_from_bytes(r->mem, r->mem_len, r->cur_name);
  }
  tr_zfile_set_max_line(r->zf, r->max_line);
  r->cur_format = tr_zfile_format(r->zf);
  return TRUE;
}

EmcReader *emc_reader_open_parts(const char *const *paths, EmcKind kind, EmcReaderFlags flags,
                                 GError **error) {
  g_return_val_if_fail(paths != NULL && paths[0] != NULL, NULL);
  g_return_val_if_fail((unsigned)kind < EMC_N_KINDS, NULL);
  g_autoptr(EmcReader) r = reader_new(kind, flags);
  r->paths = g_strdupv((char **)paths);
  r->n_parts = g_strv_length(r->paths);
  if (!open_part(r, error)) return NULL;
  return g_steal_pointer(&r);
}

EmcReader *emc_reader_open(const char *path, EmcKind kind, EmcReaderFlags flags, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  const char *paths[2] = {path, NULL};
  return emc_reader_open_parts(paths, kind, flags, error);
}

EmcReader *emc_reader_new_from_bytes(const void *data, size_t len, const char *name, EmcKind kind,
                                     EmcReaderFlags flags) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  g_return_val_if_fail((unsigned)kind < EMC_N_KINDS, NULL);
  EmcReader *r = reader_new(kind, flags);
  r->mem = data;
  r->mem_len = len;
  r->n_parts = 1;
  r->cur_name = g_strdup(name ? name : "<memory>");
  open_part(r, NULL);
  return r;
}

void emc_reader_set_max_line_bytes(EmcReader *r, size_t max_bytes) {
  g_return_if_fail(r != NULL && max_bytes >= 64);
  r->max_line = max_bytes;
  if (r->zf) tr_zfile_set_max_line(r->zf, max_bytes);
}

void emc_reader_free(EmcReader *r) {
  if (!r) return;
  tr_zfile_free(r->zf);
  g_strfreev(r->paths);
  g_free(r->cur_name);
  g_ptr_array_unref(r->vnames);
  if (r->first_vnames) g_ptr_array_unref(r->first_vnames);
  g_array_unref(r->vts);
  g_array_unref(r->vdiff);
  g_array_unref(r->seen);
  g_array_unref(r->diff);
  for (int i = 0; i < 3; i++)
    g_array_unref(r->lists[i]);
  g_string_free(r->why, TRUE);
  for (guint i = 0; i < r->n_bad_kept; i++)
    g_free(r->bad_msgs[i]);
  g_free(r);
}

/* ---- Fields ------------------------------------------------------------------------------------------- */

/* Splits text[0..len) at commas outside quotes. FALSE with r->why set on a quoting error. */
static gboolean split(EmcReader *r, char *text, size_t len) {
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
static const char *field_text(Field *f) {
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

static gboolean field_is(const Field *f, const char *s) {
  size_t n = strlen(s);
  return !f->quoted && f->len == n && memcmp(f->p, s, n) == 0;
}

static gboolean field_is_none(const Field *f) {
  return !f->quoted && (f->len == 0 || field_is(f, "nil"));
}

/* ---- Layout ------------------------------------------------------------------------------------------- */

static const EmcKindColumns *kcols(const EmcReader *r) {
  return &emc_kind_columns[r->kind];
}

static int column_by_name(const EmcReader *r, const char *name) {
  const EmcKindColumns *kc = kcols(r);
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
  return g_strstrip((char *)field_text(&r->fields[i]));
}

static gboolean is_header(EmcReader *r) {
  Field f0 = r->fields[0]; /* a copy: decoding it in place must not disturb a data line */
  char buf[64];
  if (f0.len >= sizeof buf) return FALSE;
  memcpy(buf, f0.p, f0.len);
  buf[f0.len] = '\0';
  f0.p = buf;
  const char *name = g_strstrip((char *)field_text(&f0));
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
static gboolean setup_header(EmcReader *r, GError **error) {
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
      if (r->map[c] >= 0) return header_error(r, error, "column %s appears twice", kcols(r)->cols[c].name);
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
  const EmcKindColumns *kc = kcols(r);
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
static gboolean setup_positional(EmcReader *r, GError **error) {
  const EmcKindColumns *kc = kcols(r);
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
static gboolean set_propagation_positions(EmcReader *r) {
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

/* ---- Values ------------------------------------------------------------------------------------------- */

/* Sets r->why to "field N (Name): what" and returns FALSE. */
static gboolean fail_at(EmcReader *r, int fi, const char *name, const char *what) {
  g_string_printf(r->why, "field %d (%s): %s", fi + 1, name, what);
  return FALSE;
}

static gboolean fail(EmcReader *r, int col, const char *what) {
  return fail_at(r, r->map[col], kcols(r)->cols[col].name, what);
}

static Field *get(EmcReader *r, int col) {
  return r->map[col] >= 0 ? &r->fields[r->map[col]] : NULL;
}

static gboolean parse_time(EmcReader *r, Field *f, int64_t *out) {
  return r->has_header ? emc_time_parse_lenient(f->p, f->len, out) : emc_time_parse(f->p, f->len, out);
}

#define TIME_WHAT "not a timestamp like 2006-01-02T15:04:05.000-0700"

static gboolean conv_time(EmcReader *r, int col, int64_t *out) {
  Field *f = get(r, col);
  if (!f) {
    *out = OBS_TIME_NONE;
    return TRUE;
  }
  if (!kcols(r)->cols[col].required && field_is_none(f)) {
    *out = OBS_TIME_NONE;
    return TRUE;
  }
  return parse_time(r, f, out) || fail(r, col, TIME_WHAT);
}

static gboolean conv_hash(EmcReader *r, int col, EmcHash *out) {
  Field *f = get(r, col);
  return emc_hash_parse(f->p, f->len, out) || fail(r, col, "not a 0x-prefixed 32-byte hex hash");
}

static gboolean conv_opt_hash(EmcReader *r, int col, gboolean *has, EmcHash *out) {
  Field *f = get(r, col);
  memset(out, 0, sizeof *out);
  *has = FALSE;
  if (!f || field_is_none(f)) return TRUE;
  *has = TRUE;
  return emc_hash_parse(f->p, f->len, out) || fail(r, col, "not a 0x-prefixed 32-byte hex hash");
}

#define ADDRESS_WHAT "not a 0x-prefixed 20-byte hex address"

static gboolean conv_address(EmcReader *r, int col, EmcAddress *out) {
  Field *f = get(r, col);
  return emc_address_parse(f->p, f->len, out) || fail(r, col, ADDRESS_WHAT);
}

/* Digits, or in header mode also digits followed by '.' and zeros (pandas float columns). Returns the
 * length of the integer part, or 0 if the text is not of that form. */
static size_t integer_digits(const EmcReader *r, const Field *f) {
  size_t n = 0;
  while (n < f->len && f->p[n] >= '0' && f->p[n] <= '9')
    n++;
  if (n == 0) return 0;
  if (n == f->len) return n;
  if (!r->has_header || f->p[n] != '.') return 0;
  for (size_t i = n + 1; i < f->len; i++)
    if (f->p[i] != '0') return 0;
  return n;
}

static gboolean parse_u64(const char *s, size_t n, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return FALSE;
    v = v * 10 + d;
  }
  *out = v;
  return TRUE;
}

static gboolean conv_u64_field(EmcReader *r, Field *f, int fi, const char *name, uint64_t *out) {
  size_t n = integer_digits(r, f);
  if (n == 0) return fail_at(r, fi, name, "not an unsigned decimal integer");
  return parse_u64(f->p, n, out) || fail_at(r, fi, name, "out of range (above 2^64-1)");
}

static gboolean conv_u64(EmcReader *r, int col, uint64_t *out) {
  Field *f = get(r, col);
  if (!f || (!kcols(r)->cols[col].required && field_is_none(f))) {
    *out = EMC_U64_NONE;
    return TRUE;
  }
  return conv_u64_field(r, f, r->map[col], kcols(r)->cols[col].name, out);
}

static gboolean conv_u256(EmcReader *r, int col, EmcU256 *out) {
  Field *f = get(r, col);
  size_t n = integer_digits(r, f);
  if (n == 0) return fail(r, col, "not an unsigned decimal integer");
  return emc_u256_parse(f->p, n, out) || fail(r, col, "out of range (2^256 or more)");
}

/* Free text: unquoted nil is NULL; anything else decoded. Optional columns: empty is NULL too. */
static const char *conv_string(EmcReader *r, int col) {
  Field *f = get(r, col);
  if (!f || field_is(f, "nil")) return NULL;
  if (!kcols(r)->cols[col].required && field_is_none(f)) return NULL;
  return field_text(f);
}

static gboolean conv_list(EmcReader *r, int col, GArray *scratch, uint32_t *n, const EmcHash **out) {
  Field *f = get(r, col);
  g_array_set_size(scratch, 0);
  *n = 0;
  *out = NULL;
  if (!f || f->len == 0 || field_is_none(f)) return TRUE;
  if (f->p[f->len - 1] != ';') return fail(r, col, "list does not end with ';'");
  size_t i = 0;
  while (i < f->len) {
    const char *semi = memchr(f->p + i, ';', f->len - i);
    size_t j = (size_t)(semi - f->p);
    EmcHash h;
    if (!emc_hash_parse(f->p + i, j - i, &h)) {
      g_autofree char *what =
          g_strdup_printf("item %u: not a 0x-prefixed 32-byte hex hash", (unsigned)scratch->len + 1);
      return fail(r, col, what);
    }
    g_array_append_val(scratch, h);
    i = j + 1;
  }
  *n = scratch->len;
  *out = (const EmcHash *)(void *)scratch->data;
  return TRUE;
}

static gboolean conv_flag(EmcReader *r, int col, EmcFlag *out) {
  Field *f = get(r, col);
  *out = EMC_FLAG_NONE;
  if (!f || field_is_none(f)) return TRUE;
  const char *s = field_text(f);
  if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
    *out = EMC_FLAG_TRUE;
  else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
    *out = EMC_FLAG_FALSE;
  else
    return fail(r, col, "not True or False");
  return TRUE;
}

static gboolean conv_double_field(EmcReader *r, Field *f, int fi, const char *name, double *out) {
  *out = NAN;
  if (field_is_none(f)) return TRUE;
  const char *s = field_text(f);
  if (g_ascii_strcasecmp(s, "nan") == 0) return TRUE;
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v)) return fail_at(r, fi, name, "not a number");
  *out = v;
  return TRUE;
}

static gboolean conv_double(EmcReader *r, int col, double *out) {
  Field *f = get(r, col);
  if (!f) {
    *out = NAN;
    return TRUE;
  }
  return conv_double_field(r, f, r->map[col], kcols(r)->cols[col].name, out);
}

static void conv_block_type(EmcReader *r, int col, EmcBlockType *type, const char **text) {
  Field *f = get(r, col);
  *type = EMC_BLOCK_TYPE_NONE;
  *text = NULL;
  if (!f || field_is_none(f)) return;
  *text = field_text(f);
  if (strcmp(*text, "Main") == 0)
    *type = EMC_BLOCK_TYPE_MAIN;
  else if (strcmp(*text, "Recognized") == 0)
    *type = EMC_BLOCK_TYPE_RECOGNIZED;
  else if (strcmp(*text, "Uncle") == 0)
    *type = EMC_BLOCK_TYPE_UNCLE;
  else
    *type = EMC_BLOCK_TYPE_OTHER;
}

/* ---- Records ------------------------------------------------------------------------------------------ */

static gboolean parse_block(EmcReader *r, EmcBlock *b) {
  memset(b, 0, sizeof *b);
  if (!conv_time(r, EMC_B_TS, &b->local_ns) || !conv_hash(r, EMC_B_HASH, &b->hash) ||
      !conv_u64(r, EMC_B_NUMBER, &b->number) || !conv_u64(r, EMC_B_GAS_LIMIT, &b->gas_limit) ||
      !conv_u64(r, EMC_B_GAS_USED, &b->gas_used) || !conv_u256(r, EMC_B_DIFFICULTY, &b->difficulty) ||
      !conv_u64(r, EMC_B_TIME, &b->time_s) || !conv_address(r, EMC_B_COINBASE, &b->coinbase) ||
      !conv_hash(r, EMC_B_PARENT, &b->parent) || !conv_hash(r, EMC_B_UNCLE_HASH, &b->uncle_hash) ||
      !conv_u64(r, EMC_B_SIZE, &b->size_bytes) || !conv_list(r, EMC_B_TXS, r->lists[0], &b->n_txs, &b->txs) ||
      !conv_list(r, EMC_B_UNCLES, r->lists[1], &b->n_uncles, &b->uncles) ||
      !conv_flag(r, EMC_B_CAPTURED, &b->stage.captured_locally) ||
      !conv_u64(r, EMC_B_FORK_LENGTH, &b->stage.fork_length))
    return FALSE;
  if (b->time_s > EMC_TIME_S_MAX)
    return fail(r, EMC_B_TIME, "out of range (after 2262: not representable in ns)");
  conv_block_type(r, EMC_B_TYPE, &b->stage.type, &b->stage.type_text);
  return TRUE;
}

static gboolean parse_tx(EmcReader *r, EmcTx *t) {
  memset(t, 0, sizeof *t);
  if (!conv_time(r, EMC_T_TS, &t->local_ns) || !conv_hash(r, EMC_T_HASH, &t->hash) ||
      !conv_u64(r, EMC_T_GAS_LIMIT, &t->gas_limit) || !conv_u256(r, EMC_T_GAS_PRICE, &t->gas_price_wei) ||
      !conv_u256(r, EMC_T_VALUE, &t->value_wei) || !conv_u64(r, EMC_T_NONCE, &t->nonce))
    return FALSE;
  Field *ty = get(r, EMC_T_TYPE);
  if (field_is(ty, "TX"))
    t->type = EMC_TX_TYPE_TX;
  else if (field_is(ty, "MC"))
    t->type = EMC_TX_TYPE_MC;
  else if (field_is(ty, "CC"))
    t->type = EMC_TX_TYPE_CC;
  else
    return fail(r, EMC_T_TYPE, "not TX, MC or CC");
  if (!conv_u256(r, EMC_T_COST, &t->cost_wei) || !conv_u64(r, EMC_T_SIZE, &t->size_bytes)) return FALSE;
  Field *to = get(r, EMC_T_TO);
  if (field_is(to, "nil")) {
    t->has_to = FALSE;
  } else {
    t->has_to = TRUE;
    if (!conv_address(r, EMC_T_TO, &t->to)) return FALSE;
  }
  if (!conv_address(r, EMC_T_FROM, &t->from)) return FALSE;
  t->validity_err = conv_string(r, EMC_T_ERR);

  EmcTxStage *s = &t->stage;
  if (!conv_flag(r, EMC_T_CAPTURED, &s->captured_locally) || !conv_u64(r, EMC_T_GAS_USED, &s->gas_used) ||
      !conv_opt_hash(r, EMC_T_IN_MAIN, &s->has_in_main_block, &s->in_main_block) ||
      !conv_list(r, EMC_T_IN_UNCLES, r->lists[2], &s->n_in_uncle_blocks, &s->in_uncle_blocks) ||
      !conv_flag(r, EMC_T_IN_ORDER, &s->in_order) || !conv_time(r, EMC_T_REMOTE_TS, &s->remote_ns))
    return FALSE;
  s->never_committing = conv_string(r, EMC_T_NEVER);
  static const int commit_cols[EMC_N_COMMIT_DEPTHS] = {EMC_T_COMMIT0, EMC_T_COMMIT3, EMC_T_COMMIT12,
                                                       EMC_T_COMMIT36};
  for (int k = 0; k < EMC_N_COMMIT_DEPTHS; k++)
    if (!conv_double(r, commit_cols[k], &s->commit_s[k])) return FALSE;
  return TRUE;
}

static gboolean parse_peer(EmcReader *r, EmcPeer *p) {
  memset(p, 0, sizeof *p);
  if (!conv_time(r, EMC_P_TS, &p->local_ns)) return FALSE;
  Field *ty = get(r, EMC_P_TYPE);
  if (field_is(ty, "Add"))
    p->type = EMC_PEER_ADD;
  else if (field_is(ty, "Remove"))
    p->type = EMC_PEER_REMOVE;
  else
    return fail(r, EMC_P_TYPE, "not Add or Remove");
  if (!conv_u64(r, EMC_P_PEERS, &p->peers) || !conv_u64(r, EMC_P_INBOUND, &p->inbound)) return FALSE;
  p->id = conv_string(r, EMC_P_ID);
  const char *p1 = conv_string(r, EMC_P_PARAM1), *p2 = conv_string(r, EMC_P_PARAM2);
  p->duration_ns = -1;
  if (p->type == EMC_PEER_ADD) {
    p->client = p1;
    p->addr = p2;
  } else {
    p->duration = p1;
    p->error = p2;
    if (p1 && !emc_go_duration_parse(p1, &p->duration_ns)) p->duration_ns = -1;
  }
  return TRUE;
}

static gboolean parse_propagation(EmcReader *r, EmcPropagation *p) {
  memset(p, 0, sizeof *p);
  if (!r->has_header && !set_propagation_positions(r)) return FALSE;
  if (!conv_hash(r, EMC_R_HASH, &p->hash) || !conv_u64(r, EMC_R_NUMBER, &p->number) ||
      !conv_time(r, EMC_R_FIRST, &p->first_ns))
    return FALSE;
  conv_block_type(r, EMC_R_TYPE, &p->type, &p->type_text);
  p->n_vantages = r->vnames->len;
  int64_t *seen = (int64_t *)(void *)r->seen->data;
  double *diff = (double *)(void *)r->diff->data;
  for (guint v = 0; v < r->vnames->len; v++) {
    const char *vn = g_ptr_array_index(r->vnames, v);
    int ts = g_array_index(r->vts, int, v), df = g_array_index(r->vdiff, int, v);
    Field *f = &r->fields[ts];
    seen[v] = OBS_TIME_NONE;
    if (!field_is_none(f) && !parse_time(r, f, &seen[v])) {
      g_autofree char *name = g_strconcat(vn, "TimeStamp", NULL);
      return fail_at(r, ts, name, TIME_WHAT);
    }
    diff[v] = NAN;
    if (df >= 0) {
      g_autofree char *name = g_strconcat(vn, "Diff", NULL);
      if (!conv_double_field(r, &r->fields[df], df, name, &diff[v])) return FALSE;
    }
  }
  p->seen_ns = seen;
  p->diff_s = diff;
  p->mining_pool = conv_string(r, EMC_R_POOL);
  return conv_u64(r, EMC_R_NUM_TXS, &p->num_txs) && conv_u64(r, EMC_R_SEQ_LEN, &p->same_miner_seq_len) &&
         conv_u64(r, EMC_R_SEQ_POS, &p->position_inside_seq) &&
         conv_double(r, EMC_R_DIFFICULTY, &p->difficulty) && conv_u64(r, EMC_R_SIZE, &p->size_bytes) &&
         conv_double(r, EMC_R_INTERBLOCK, &p->interblock_s) &&
         conv_double(r, EMC_R_INTERBLOCK_POOL, &p->interblock_per_pool_s);
}

/* Checks the field count of a data line. */
static gboolean check_count(EmcReader *r) {
  guint n = r->n_fields_total;
  if (r->has_header) {
    if (n == r->n_header_fields) return TRUE;
    g_string_printf(r->why, "expected %u fields (as in the header), found %u", r->n_header_fields, n);
    return FALSE;
  }
  switch (r->kind) {
  case EMC_KIND_PROPAGATION:
    return TRUE; /* per layout, in parse_propagation */
  case EMC_KIND_PEER:
    if (n == 6 || n == 7) {
      r->map[EMC_P_INBOUND] = n == 7 ? EMC_P_INBOUND : -1;
      return TRUE;
    }
    g_string_printf(r->why, "expected 6 or 7 fields, found %u", n);
    return FALSE;
  default: {
    guint want = kcols(r)->n_raw;
    if (n == want) return TRUE;
    g_string_printf(r->why, "expected %u fields, found %u", want, n);
    return FALSE;
  }
  }
}

static gboolean parse_fields(EmcReader *r, EmcRecord *rec) {
  if (!check_count(r)) return FALSE;
  rec->kind = r->kind;
  switch (r->kind) {
  case EMC_KIND_BLOCK:
    return parse_block(r, &rec->u.block);
  case EMC_KIND_ANNOUNCEMENT: {
    EmcAnnouncement *a = &rec->u.announcement;
    return conv_time(r, EMC_A_TS, &a->local_ns) && conv_hash(r, EMC_A_HASH, &a->hash);
  }
  case EMC_KIND_TX:
    return parse_tx(r, &rec->u.tx);
  case EMC_KIND_HEAD: {
    EmcHead *h = &rec->u.head;
    return conv_time(r, EMC_H_TS, &h->local_ns) && conv_hash(r, EMC_H_HASH, &h->hash) &&
           conv_u64(r, EMC_H_NUMBER, &h->number);
  }
  case EMC_KIND_TX_GAS_USED: {
    EmcTxGasUsed *g = &rec->u.gas;
    if (!conv_time(r, EMC_G_TS, &g->local_ns) || !conv_hash(r, EMC_G_BLOCK, &g->block) ||
        !conv_hash(r, EMC_G_TX, &g->tx))
      return FALSE;
    Field *f = get(r, EMC_G_GAS);
    g->gas = EMC_U64_NONE; /* Geth wrote an empty field for a failed tx */
    return field_is_none(f) || conv_u64(r, EMC_G_GAS, &g->gas);
  }
  case EMC_KIND_INVALID_MSG: {
    EmcInvalidMsg *m = &rec->u.invalid;
    uint64_t cause;
    if (!conv_time(r, EMC_I_TS, &m->local_ns) || !conv_u64(r, EMC_I_CAUSE, &cause)) return FALSE;
    if (cause > 999) return fail(r, EMC_I_CAUSE, "out of range (above 999)");
    m->cause = (uint32_t)cause;
    m->msg_type = conv_string(r, EMC_I_TYPE);
    return TRUE;
  }
  case EMC_KIND_PEER:
    return parse_peer(r, &rec->u.peer);
  case EMC_KIND_PROPAGATION:
    return parse_propagation(r, &rec->u.propagation);
  case EMC_N_KINDS:
    break;
  }
  g_assert_not_reached();
}

/* ---- Lines -------------------------------------------------------------------------------------------- */

static LineResult bad_line(EmcReader *r, GError **error) {
  g_autofree char *msg =
      g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s%s", r->cur_name, r->line_no,
                      r->truncated ? "truncated last line (no newline): " : "", r->why->str);
  if (r->flags & EMC_READER_STRICT) {
    g_set_error_literal(error, EMC_ERROR, EMC_ERROR_BAD_LINE, msg);
    r->done = TRUE;
    return LINE_FATAL;
  }
  r->n_bad++;
  if (r->n_bad_kept < EMC_BAD_LINES_KEPT) r->bad_msgs[r->n_bad_kept++] = g_steal_pointer(&msg);
  return LINE_SKIPPED;
}

static LineResult process_line(EmcReader *r, TrZLine *line, EmcRecord *rec, GError **error) {
  char *text = line->text;
  size_t len = line->len;
  r->truncated = !line->terminated;
  if (line->too_long) {
    r->truncated = FALSE;
    g_string_printf(r->why, "line longer than %zu bytes", r->max_line);
    return bad_line(r, error);
  }
  if (r->line_no == 1 && len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) { /* UTF-8 byte-order mark */
    text += 3;
    len -= 3;
  }
  if (len > 0 && text[len - 1] == '\r') text[--len] = '\0';
  if (len == 0) return LINE_SKIPPED;
  if (memchr(text, '\0', len)) {
    g_string_assign(r->why, "NUL byte in the line");
    return bad_line(r, error);
  }
  if (!split(r, text, len)) return bad_line(r, error);
  if (!r->layout_known) {
    r->layout_known = TRUE;
    if (is_header(r)) return setup_header(r, error) ? LINE_SKIPPED : LINE_FATAL;
    if (!setup_positional(r, error)) return LINE_FATAL;
  }
  if (!parse_fields(r, rec)) return bad_line(r, error);
  r->n_records++;
  return LINE_RECORD;
}

gboolean emc_reader_next(EmcReader *r, EmcRecord *rec, GError **error) {
  g_return_val_if_fail(r != NULL && rec != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  while (!r->done) {
    if (!r->zf) {
      if (r->part >= r->n_parts) break;
      if (!open_part(r, error)) {
        r->done = TRUE;
        return FALSE;
      }
    }
    TrZLine line;
    GError *zerr = NULL;
    if (!tr_zfile_read_line(r->zf, &line, &zerr)) {
      if (zerr) {
        set_zfile_error(error, zerr);
        r->done = TRUE;
        return FALSE;
      }
      tr_zfile_free(r->zf);
      r->zf = NULL;
      r->part++;
      continue;
    }
    r->line_no++;
    switch (process_line(r, &line, rec, error)) {
    case LINE_RECORD:
      return TRUE;
    case LINE_SKIPPED:
      continue;
    case LINE_FATAL:
      return FALSE;
    }
  }
  r->done = TRUE;
  return FALSE;
}

#define NEXT_KIND(fn, type, KIND, member)                                                                    \
  gboolean fn(EmcReader *r, type *out, GError **error) {                                                     \
    g_return_val_if_fail(r != NULL && out != NULL && r->kind == KIND, FALSE);                                \
    EmcRecord rec;                                                                                           \
    if (!emc_reader_next(r, &rec, error)) return FALSE;                                                      \
    *out = rec.u.member;                                                                                     \
    return TRUE;                                                                                             \
  }

NEXT_KIND(emc_reader_next_block, EmcBlock, EMC_KIND_BLOCK, block)
NEXT_KIND(emc_reader_next_announcement, EmcAnnouncement, EMC_KIND_ANNOUNCEMENT, announcement)
NEXT_KIND(emc_reader_next_tx, EmcTx, EMC_KIND_TX, tx)
NEXT_KIND(emc_reader_next_head, EmcHead, EMC_KIND_HEAD, head)
NEXT_KIND(emc_reader_next_tx_gas_used, EmcTxGasUsed, EMC_KIND_TX_GAS_USED, gas)
NEXT_KIND(emc_reader_next_invalid_msg, EmcInvalidMsg, EMC_KIND_INVALID_MSG, invalid)
NEXT_KIND(emc_reader_next_peer, EmcPeer, EMC_KIND_PEER, peer)
NEXT_KIND(emc_reader_next_propagation, EmcPropagation, EMC_KIND_PROPAGATION, propagation)

/* ---- Accessors ---------------------------------------------------------------------------------------- */

EmcKind emc_reader_kind(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, EMC_KIND_BLOCK);
  return r->kind;
}

guint64 emc_reader_bad_lines(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->n_bad;
}

const char *const *emc_reader_bad_line_messages(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return (const char *const *)r->bad_msgs;
}

guint64 emc_reader_records(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->n_records;
}

const char *emc_reader_file(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return r->cur_name;
}

guint64 emc_reader_line(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->line_no;
}

const char *emc_reader_compression(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return tr_zfile_format_name(r->cur_format);
}

gboolean emc_reader_has_header(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, FALSE);
  return r->has_header;
}

guint emc_reader_n_vantages(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->vnames->len;
}

const char *emc_reader_vantage_name(const EmcReader *r, guint i) {
  g_return_val_if_fail(r != NULL && i < r->vnames->len, NULL);
  return g_ptr_array_index(r->vnames, i);
}
