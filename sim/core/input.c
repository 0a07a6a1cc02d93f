/* input.c: reading input files: whole files (bounded, regular files only), JSON documents, CSV records. */
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "params.h"

G_DEFINE_QUARK(sim - input - error - quark, sim_input_error)
G_DEFINE_QUARK(sim - csv - error - quark, sim_csv_error)

/* ---- Whole files ---- */

gboolean sim_input_unbounded(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

static void set_errno_problem(SimInputProblem *problem, int err_no) {
  if (problem) problem->err_no = err_no;
}

char *sim_input_read_file(const char *path, gsize max_bytes, gsize *len, SimInputProblem *problem,
                          GError **error) {
  g_return_val_if_fail(path != NULL && len != NULL, NULL);
  if (problem) memset(problem, 0, sizeof *problem);
  if (max_bytes == 0) max_bytes = SIM_INPUT_MAX_BYTES;
  *len = 0;
  /* Examined before open(): opening a FIFO would wait for a writer. */
  if (sim_input_unbounded(path)) {
    g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_NOT_REGULAR, "not a regular file");
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    set_errno_problem(problem, e);
    g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_OPEN, "cannot open: %s", g_strerror(e));
    return NULL;
  }
  struct stat st;
  /* The path may have changed between stat() and open(): what counts is what was opened. */
  if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    close(fd);
    g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_NOT_REGULAR, "not a regular file");
    return NULL;
  }
  GByteArray *buf = g_byte_array_new();
  guint8 chunk[65536];
  int read_errno = 0;
  gboolean too_large = FALSE;
  for (;;) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      read_errno = errno;
      break;
    }
    if (n == 0) break;
    if (buf->len + (gsize)n > max_bytes) {
      too_large = TRUE;
      break;
    }
    g_byte_array_append(buf, chunk, (guint)n);
  }
  close(fd);
  if (read_errno || too_large) {
    g_byte_array_unref(buf);
    if (too_large) {
      g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_TOO_LARGE, "larger than %" G_GSIZE_FORMAT " bytes",
                  max_bytes);
    } else {
      set_errno_problem(problem, read_errno);
      g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_READ, "cannot read: %s", g_strerror(read_errno));
    }
    return NULL;
  }
  *len = buf->len;
  g_byte_array_append(buf, (const guint8 *)"", 1);
  return (char *)g_byte_array_free(buf, FALSE);
}

/* ---- JSON ---- */

json_t *sim_json_parse(const char *data, gsize len, SimJsonFlags flags, SimInputProblem *problem,
                       GError **error) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  if (problem) memset(problem, 0, sizeof *problem);
  gboolean blank = TRUE;
  for (gsize i = 0; i < len && blank; i++) blank = g_ascii_isspace(data[i]);
  if (blank && !(flags & SIM_JSON_BLANK_AS_SYNTAX)) {
    if (problem) {
      problem->line = problem->column = 1;
      g_strlcpy(problem->text, "empty file (expected a JSON object)", sizeof problem->text);
    }
    g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_EMPTY, "1:1: empty file (expected a JSON object)");
    return NULL;
  }
  json_error_t err;
  json_t *doc = json_loadb(data ? data : "", len, JSON_REJECT_DUPLICATES, &err);
  if (!doc) {
    int line = MAX(err.line, 1), column = MAX(err.column, 1);
    if (problem) {
      problem->line = line;
      problem->column = column;
      g_strlcpy(problem->text, err.text, sizeof problem->text);
    }
    g_set_error(error, SIM_INPUT_ERROR, SIM_INPUT_ERROR_SYNTAX, "%d:%d: %s", line, column, err.text);
  }
  return doc;
}

json_t *sim_json_load_file(const char *path, gsize max_bytes, SimJsonFlags flags, SimInputProblem *problem,
                           GError **error) {
  gsize len = 0;
  g_autofree char *data = sim_input_read_file(path, max_bytes, &len, problem, error);
  if (!data) return NULL;
  return sim_json_parse(data, len, flags, problem, error);
}

static gboolean positioned(const GError *error) {
  return error->domain == SIM_INPUT_ERROR &&
         (error->code == SIM_INPUT_ERROR_EMPTY || error->code == SIM_INPUT_ERROR_SYNTAX);
}

char *sim_input_error_text(const char *path, const GError *error) {
  g_return_val_if_fail(path != NULL && error != NULL, NULL);
  return g_strdup_printf(positioned(error) ? "%s:%s" : "%s: %s", path, error->message);
}

void sim_diag_add_input_error(SimDiag *diag, const GError *error, const SimInputProblem *problem) {
  g_return_if_fail(diag != NULL && error != NULL);
  if (positioned(error) && problem)
    sim_diag_add_at(diag, problem->line, problem->column, "%s", problem->text);
  else
    sim_diag_add_raw(diag, "%s", error->message);
}

/* ---- CSV ---- */

/* Where the bytes come from: a stream, or memory. */
typedef struct {
  FILE *f;
  const char *d;
  gsize len, pos;
} Src;

static int src_get(Src *s) {
  if (s->f) return getc(s->f);
  return s->pos < s->len ? (unsigned char)s->d[s->pos++] : EOF;
}

/* The next byte without taking it (or EOF). */
static int src_peek(Src *s) {
  if (!s->f) return s->pos < s->len ? (unsigned char)s->d[s->pos] : EOF;
  int c = getc(s->f);
  if (c != EOF) ungetc(c, s->f);
  return c;
}

/* FALSE with `error` set when the stream failed (as opposed to ending). */
static gboolean src_ok(Src *s, GError **error) {
  if (!s->f || !ferror(s->f)) return TRUE;
  int e = errno;
  g_set_error(error, SIM_CSV_ERROR, SIM_CSV_ERROR_IO, "cannot read: %s", g_strerror(e));
  return FALSE;
}

static int csv_fail(GError **error, SimCsvError code, gboolean strict, guint line, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
static int csv_fail(GError **error, SimCsvError code, gboolean strict, guint line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (strict)
    g_set_error(error, SIM_CSV_ERROR, code, "line %u: %s", line, msg);
  else
    g_set_error_literal(error, SIM_CSV_ERROR, code, msg);
  return -1;
}

/* One record. `line` is the line where it begins (for SIM_CSV_STRICT messages); *newlines counts the line
 * breaks taken (inside quoted fields and the record's own). Returns 1, 0 at the end, -1 on an error. */
static int csv_record(Src *s, SimCsvFlags flags, GPtrArray *fields, guint line, guint *newlines,
                      GError **error) {
  const gboolean strict = (flags & SIM_CSV_STRICT) != 0;
  g_ptr_array_set_size(fields, 0);
  int c = src_get(s);
  if (c == EOF) return src_ok(s, error) ? 0 : -1;
  g_autoptr(GString) f = g_string_new(NULL);
  for (;;) {
    gboolean nul = FALSE;
    if (c == '"') {
      for (;;) {
        c = src_get(s);
        if (c == EOF) {
          if (!src_ok(s, error)) return -1;
          return csv_fail(error, SIM_CSV_ERROR_UNTERMINATED, strict, line,
                          strict ? "unterminated quoted field" : "quoted field not closed at the end of the file");
        }
        if (c == '"') {
          c = src_get(s);
          if (c != '"') break;
        } else if (c == '\n') {
          (*newlines)++;
        } else if (c == '\0') {
          if (strict) return csv_fail(error, SIM_CSV_ERROR_NUL, TRUE, line + *newlines, "NUL byte in a field");
          nul = TRUE;
        }
        g_string_append_c(f, (char)c);
      }
      if (strict) {
        if (c != ',' && c != '\n' && c != '\r' && c != EOF)
          return csv_fail(error, SIM_CSV_ERROR_AFTER_QUOTE, TRUE, line + *newlines, "text after a closing quote");
      } else if (c == '\r') {
        c = src_get(s);
        if (c != '\n') c = '\r';
      }
      if (!strict && c != ',' && c != '\n' && c != EOF)
        return csv_fail(error, SIM_CSV_ERROR_AFTER_QUOTE, FALSE, line, "text after the closing quote of field %u",
                        fields->len + 1);
    } else if (strict) {
      while (c != ',' && c != '\n' && c != '\r' && c != EOF) {
        if (c == '"') return csv_fail(error, SIM_CSV_ERROR_BARE_QUOTE, TRUE, line, "quote inside an unquoted field");
        if (c == '\0') return csv_fail(error, SIM_CSV_ERROR_NUL, TRUE, line, "NUL byte in a field");
        g_string_append_c(f, (char)c);
        c = src_get(s);
      }
    } else {
      while (c != ',' && c != '\n' && c != EOF) {
        if (c == '\0') nul = TRUE;
        g_string_append_c(f, (char)c);
        c = src_get(s);
      }
      if (c != ',' && f->len > 0 && f->str[f->len - 1] == '\r') g_string_truncate(f, f->len - 1);
    }
    /* A lone CR ends a strict record as a line break does; CR LF is one break. */
    if (strict && c == '\r') {
      if (src_peek(s) == '\n') src_get(s);
      c = '\n';
    }
    if (nul) return csv_fail(error, SIM_CSV_ERROR_NUL, FALSE, line, "NUL byte in field %u", fields->len + 1);
    g_ptr_array_add(fields, g_strndup(f->str, f->len));
    g_string_truncate(f, 0);
    if (c != ',') break;
    c = src_get(s);
  }
  if (c == '\n') (*newlines)++;
  return src_ok(s, error) ? 1 : -1;
}

gboolean sim_csv_read_record(FILE *in, GPtrArray *fields, guint *line, GError **error) {
  g_return_val_if_fail(in != NULL && fields != NULL && line != NULL, FALSE);
  Src s = {.f = in};
  guint n = 0;
  int r = csv_record(&s, SIM_CSV_DEFAULT, fields, *line + 1, &n, error);
  *line += n;
  return r > 0;
}

struct SimCsvReader {
  Src src;
  SimCsvFlags flags;
  guint line;      /* where the current record begins */
  guint next_line; /* where the next one begins */
};

SimCsvReader *sim_csv_reader_new(const char *data, gsize len, SimCsvFlags flags) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  SimCsvReader *r = g_new0(SimCsvReader, 1);
  r->src.d = data;
  r->src.len = len;
  r->flags = flags;
  r->line = r->next_line = 1;
  return r;
}

void sim_csv_reader_free(SimCsvReader *r) {
  g_free(r);
}

int sim_csv_reader_next(SimCsvReader *r, GPtrArray *fields, GError **error) {
  g_return_val_if_fail(r != NULL && fields != NULL, -1);
  guint n = 0;
  r->line = r->next_line;
  int res = csv_record(&r->src, r->flags, fields, r->line, &n, error);
  r->next_line += n;
  return res;
}

guint sim_csv_reader_line(const SimCsvReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->line;
}
