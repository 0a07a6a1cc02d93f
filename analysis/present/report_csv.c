/* report_csv.c: reading the CSV files of a result (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
#include "report-private.h"

void rp_csv_free(Csv *c) {
  if (!c) return;
  g_free(c->path);
  g_free(c->data);
  g_string_free(c->buf, TRUE);
  g_array_unref(c->starts);
  g_ptr_array_unref(c->row);
  g_strfreev(c->header);
  g_free(c);
}

static int csv_syntax(const Csv *c, GError **error, guint line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);

static int csv_syntax(const Csv *c, GError **error, guint line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  rp_input_error(error, c->path, "line %u: %s", line, msg);
  return -1;
}

/* Reads the next record into c->row. Returns 1, 0 at the end of the file, -1 on a syntax error. */
static int csv_next(Csv *c, GError **error) {
  if (c->pos >= c->len) return 0;
  g_string_truncate(c->buf, 0);
  g_array_set_size(c->starts, 0);
  c->line = c->next_line;
  const char *d = c->data;
  for (;;) {
    gsize start = c->buf->len;
    g_array_append_val(c->starts, start);
    if (c->pos < c->len && d[c->pos] == '"') {
      c->pos++;
      for (;;) {
        if (c->pos >= c->len) return csv_syntax(c, error, c->line, "unterminated quoted field");
        char ch = d[c->pos++];
        if (ch == '"') {
          if (c->pos < c->len && d[c->pos] == '"') {
            g_string_append_c(c->buf, '"');
            c->pos++;
          } else {
            break;
          }
        } else {
          if (ch == '\0') return csv_syntax(c, error, c->next_line, "NUL byte in a field");
          if (ch == '\n') c->next_line++;
          g_string_append_c(c->buf, ch);
        }
      }
      if (c->pos < c->len && d[c->pos] != ',' && d[c->pos] != '\n' && d[c->pos] != '\r')
        return csv_syntax(c, error, c->next_line, "text after a closing quote");
    } else {
      while (c->pos < c->len && d[c->pos] != ',' && d[c->pos] != '\n' && d[c->pos] != '\r') {
        char ch = d[c->pos++];
        if (ch == '"') return csv_syntax(c, error, c->line, "quote inside an unquoted field");
        if (ch == '\0') return csv_syntax(c, error, c->line, "NUL byte in a field");
        g_string_append_c(c->buf, ch);
      }
    }
    g_string_append_c(c->buf, '\0');
    if (c->pos >= c->len) break;
    if (d[c->pos] == ',') {
      c->pos++;
      continue;
    }
    if (d[c->pos] == '\r') c->pos++;
    if (c->pos < c->len && d[c->pos] == '\n') c->pos++;
    c->next_line++;
    break;
  }
  g_ptr_array_set_size(c->row, 0);
  for (guint i = 0; i < c->starts->len; i++)
    g_ptr_array_add(c->row, c->buf->str + g_array_index(c->starts, gsize, i));
  return 1;
}

/* Opens `path` and reads its header. A missing file, an empty one or a bad header is an error. */
Csv *rp_csv_open(const char *path, GError **error) {
  g_autoptr(Csv) c = g_new0(Csv, 1);
  c->path = g_strdup(path);
  c->buf = g_string_new(NULL);
  c->starts = g_array_new(FALSE, FALSE, sizeof(gsize));
  c->row = g_ptr_array_new();
  c->next_line = 1;
  g_autoptr(GError) e = NULL;
  if (sim_input_unbounded(path)) {
    rp_input_error(error, path, "not a regular file");
    return NULL;
  }
  if (!g_file_get_contents(path, &c->data, &c->len, &e)) {
    rp_input_error(error, path, "%s", g_strerror(rp_errno_from_file_error(e)));
    return NULL;
  }
  int r = csv_next(c, error);
  if (r < 0) return NULL;
  if (r == 0) {
    rp_input_error(error, path, "empty file, expected a header line");
    return NULL;
  }
  c->ncols = c->row->len;
  c->header = g_new0(char *, (gsize)c->ncols + 1);
  for (guint i = 0; i < c->ncols; i++) {
    const char *h = g_ptr_array_index(c->row, i);
    if (!*h) {
      rp_input_error(error, path, "line 1: empty column name (column %u)", i + 1);
      return NULL;
    }
    c->header[i] = g_strdup(h);
  }
  return g_steal_pointer(&c);
}

/* The next data record, with as many fields as the header. Returns 1, 0 at the end, -1 on an error. */
int rp_csv_row(Csv *c, GError **error) {
  int r = csv_next(c, error);
  if (r <= 0) return r;
  if (c->row->len != c->ncols)
    return csv_syntax(c, error, c->line, "%u fields, expected %u (as in the header)", c->row->len, c->ncols);
  return 1;
}

const char *rp_csv_field(const Csv *c, int col) {
  return g_ptr_array_index(c->row, (guint)col);
}

/* The index of column `name`, or -1 (and an error when `required`). */
int rp_csv_col(const Csv *c, const char *name, gboolean required, GError **error) {
  for (guint i = 0; i < c->ncols; i++)
    if (strcmp(c->header[i], name) == 0) return (int)i;
  if (required) rp_input_error(error, c->path, "missing column '%s'", name);
  return -1;
}

/* A whole field as a finite number. */
gboolean rp_parse_num(const char *s, double *out) {
  if (!*s) return FALSE;
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (*end || !isfinite(v)) return FALSE;
  *out = v;
  return TRUE;
}

/* Field `col` of the current row as a number; an empty field is NAN when `allow_empty`. */
gboolean rp_csv_num(const Csv *c, int col, gboolean allow_empty, double *out, GError **error) {
  const char *s = rp_csv_field(c, col);
  if (!*s && allow_empty) {
    *out = NAN;
    return TRUE;
  }
  if (rp_parse_num(s, out)) return TRUE;
  return rp_input_error(error, c->path, "line %u: column '%s': not a number: '%s'", c->line, c->header[col], s);
}
