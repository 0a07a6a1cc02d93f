/* report_csv.c: reading the CSV files of a result (RFC 4180: quoted fields, doubled quotes, CRLF or LF). */
#include "report-private.h"

void rp_csv_free(Csv *c) {
  if (!c) return;
  g_free(c->path);
  sim_csv_reader_free(c->rd);
  g_free(c->data);
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
  g_autoptr(GError) e = NULL;
  int r = sim_csv_reader_next(c->rd, c->row, &e);
  c->line = sim_csv_reader_line(c->rd);
  if (r < 0) rp_input_error(error, c->path, "%s", e->message);
  return r;
}

/* Opens `path` and reads its header. A missing file, an empty one or a bad header is an error. */
Csv *rp_csv_open(const char *path, GError **error) {
  g_autoptr(Csv) c = g_new0(Csv, 1);
  c->path = g_strdup(path);
  c->row = g_ptr_array_new_with_free_func(g_free);
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  c->data = sim_input_read_file(path, 0, &c->len, &pb, &e);
  if (!c->data) {
    rp_input_error(error, path, "%s", e->code == SIM_INPUT_ERROR_OPEN || e->code == SIM_INPUT_ERROR_READ ? g_strerror(pb.err_no) : e->message);
    return NULL;
  }
  c->rd = sim_csv_reader_new(c->data, c->len, SIM_CSV_STRICT);
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
