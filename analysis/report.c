/* report.c: the HTML report of a results directory: tables from summary.json and the CSV files, figures
 * drawn by a gnuplot child process and embedded as inline SVG. */
#include "report.h"

#include "input.h"
#include "map.h"
#include "outfile.h"
#include "util.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(an-report-error-quark, an_report_error)
/* clang-format on */

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

#define GP_END "END_OF_SIM_DATA" /* datablock terminator: no data line can equal it (fields are numbers) */
#define CDF_EXACT_MAX 1000       /* up to this many delays the CDF is drawn exactly, else at 1000 quantiles */

static gboolean input_error(GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static gboolean input_error(GError **error, const char *path, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT, "%s: %s", path, msg);
  return FALSE;
}

/* ---- CSV reading (RFC 4180: quoted fields, doubled quotes, CRLF or LF) -------------------------------- */

typedef struct {
  char *path;
  char *data;
  gsize len;
  SimCsvReader *rd; /* sim's one CSV reader (sim/core/input.h), in its strict dialect */
  guint line;      /* line where the current record starts (1-based) */
  GPtrArray *row;  /* char *, owned: the current record */
  char **header;   /* the first record */
  guint ncols;
} Csv;

static void csv_free(Csv *c) {
  if (!c) return;
  g_free(c->path);
  sim_csv_reader_free(c->rd);
  g_free(c->data);
  g_ptr_array_unref(c->row);
  g_strfreev(c->header);
  g_free(c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Csv, csv_free)

static int csv_syntax(const Csv *c, GError **error, guint line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static int csv_syntax(const Csv *c, GError **error, guint line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  input_error(error, c->path, "line %u: %s", line, msg);
  return -1;
}

/* Reads the next record into c->row. Returns 1, 0 at the end of the file, -1 on a syntax error. */
static int csv_next(Csv *c, GError **error) {
  g_autoptr(GError) e = NULL;
  int r = sim_csv_reader_next(c->rd, c->row, &e);
  c->line = sim_csv_reader_line(c->rd);
  if (r < 0) input_error(error, c->path, "%s", e->message);
  return r;
}

/* Opens `path` and reads its header. A missing file, an empty one or a bad header is an error. */
static Csv *csv_open(const char *path, GError **error) {
  g_autoptr(Csv) c = g_new0(Csv, 1);
  c->path = g_strdup(path);
  c->row = g_ptr_array_new_with_free_func(g_free);
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  c->data = sim_input_read_file(path, 0, &c->len, &pb, &e);
  if (!c->data) {
    input_error(error, path, "%s", e->code == SIM_INPUT_ERROR_OPEN || e->code == SIM_INPUT_ERROR_READ ? g_strerror(pb.err_no) : e->message);
    return NULL;
  }
  c->rd = sim_csv_reader_new(c->data, c->len, SIM_CSV_STRICT);
  int r = csv_next(c, error);
  if (r < 0) return NULL;
  if (r == 0) {
    input_error(error, path, "empty file, expected a header line");
    return NULL;
  }
  c->ncols = c->row->len;
  c->header = g_new0(char *, (gsize)c->ncols + 1);
  for (guint i = 0; i < c->ncols; i++) {
    const char *h = g_ptr_array_index(c->row, i);
    if (!*h) {
      input_error(error, path, "line 1: empty column name (column %u)", i + 1);
      return NULL;
    }
    c->header[i] = g_strdup(h);
  }
  return g_steal_pointer(&c);
}

/* The next data record, with as many fields as the header. Returns 1, 0 at the end, -1 on an error. */
static int csv_row(Csv *c, GError **error) {
  int r = csv_next(c, error);
  if (r <= 0) return r;
  if (c->row->len != c->ncols)
    return csv_syntax(c, error, c->line, "%u fields, expected %u (as in the header)", c->row->len, c->ncols);
  return 1;
}

static const char *csv_field(const Csv *c, int col) {
  return g_ptr_array_index(c->row, (guint)col);
}

/* The index of column `name`, or -1 (and an error when `required`). */
static int csv_col(const Csv *c, const char *name, gboolean required, GError **error) {
  for (guint i = 0; i < c->ncols; i++)
    if (strcmp(c->header[i], name) == 0) return (int)i;
  if (required) input_error(error, c->path, "missing column '%s'", name);
  return -1;
}

/* A whole field as a finite number. */
static gboolean parse_num(const char *s, double *out) {
  if (!*s) return FALSE;
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (*end || !isfinite(v)) return FALSE;
  *out = v;
  return TRUE;
}

/* Field `col` of the current row as a number; an empty field is NAN when `allow_empty`. */
static gboolean csv_num(const Csv *c, int col, gboolean allow_empty, double *out, GError **error) {
  const char *s = csv_field(c, col);
  if (!*s && allow_empty) {
    *out = NAN;
    return TRUE;
  }
  if (parse_num(s, out)) return TRUE;
  return input_error(error, c->path, "line %u: column '%s': not a number: '%s'", c->line, c->header[col], s);
}

/* ---- HTML and number formatting ----------------------------------------------------------------------- */

/* `text` escaped for HTML; invalid UTF-8 (a CSV can hold anything) becomes U+FFFD first. */
static void put_esc(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  g_autofree char *e = g_markup_escape_text(valid, -1);
  g_string_append(s, e);
}

/* A number for people: integers in full, else 4 significant digits (C locale, whatever the process's). */
static void put_num(GString *s, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  if (isnan(v))
    g_string_append(s, "–");
  else if (fabs(v) < 1e15 && v == floor(v))
    g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.0f", v));
  else if (fabs(v) >= 1e4)
    g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.0f", v));
  else
    g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.4g", v));
}

/* A number for gnuplot: exact. */
static void gp_num(GString *s, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

/* A gnuplot string literal: single quotes (no escapes inside), a quote doubled, line breaks as spaces. */
static void gp_str(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  g_string_append_c(s, '\'');
  for (const char *p = valid; *p; p++) {
    if (*p == '\'') g_string_append_c(s, '\'');
    g_string_append_c(s, (*p == '\n' || *p == '\r') ? ' ' : *p);
  }
  g_string_append_c(s, '\'');
}

/* A string field of a datablock (tab-separated): no tab, line break or double quote. */
static void gp_field(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  if (!*valid) g_string_append_c(s, '-');
  for (const char *p = valid; *p; p++)
    g_string_append_c(s, (*p == '\t' || *p == '\n' || *p == '\r' || *p == '"') ? ' ' : *p);
}

static void gp_block_begin(GString *s, const char *name) {
  g_string_append_printf(s, "$%s << " GP_END "\n", name);
}
static void gp_block_end(GString *s) {
  g_string_append(s, GP_END "\n");
}

static json_t *jget(json_t *o, ...) G_GNUC_NULL_TERMINATED;
static json_t *jget(json_t *o, ...) {
  va_list ap;
  va_start(ap, o);
  for (const char *k = va_arg(ap, const char *); k && o; k = va_arg(ap, const char *))
    o = json_object_get(o, k);
  va_end(ap);
  return o;
}

/* ---- gnuplot ------------------------------------------------------------------------------------------ */

char *an_report_find_gnuplot(void) {
  const char *env = g_getenv("SIM_GNUPLOT");
  const char *prog = env ? env : "gnuplot";
  if (!*prog) return NULL;
  if (strchr(prog, '/'))
    return g_file_test(prog, G_FILE_TEST_IS_REGULAR) && g_file_test(prog, G_FILE_TEST_IS_EXECUTABLE)
               ? g_strdup(prog)
               : NULL;
  return g_find_program_in_path(prog);
}

typedef struct {
  const char *dir;
  GString *html;
  char *gnuplot; /* NULL: figures omitted */
  char *tmpdir;  /* created with the first figure */
  guint n_fig;
  GPtrArray *warnings;
  AnReportStats stats;
} Page;

static void page_warn(Page *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void page_warn(Page *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (p->warnings)
    g_ptr_array_add(p->warnings, msg);
  else
    g_free(msg);
}

/* Whether `tag` (a start tag's text) holds attribute `attr` (e.g. "id=") at `i`, after white space. */
static gboolean attr_at(const GString *tag, gsize i, const char *attr) {
  return i > 0 && g_ascii_isspace(tag->str[i - 1]) && strncmp(tag->str + i, attr, strlen(attr)) == 0;
}

/* Rewrites one tag of gnuplot's SVG (see report.h): ids and references to them prefixed, xlink gone. */
static void svg_tag(GString *out, const char *tag, gsize len, const char *prefix) {
  g_autoptr(GString) t = g_string_new_len(tag, (gssize)len);
  g_autoptr(GString) r = g_string_sized_new(len + 16);
  for (gsize i = 0; i < t->len;) {
    if (attr_at(t, i, "xmlns:xlink=")) {
      gsize j = i + strlen("xmlns:xlink=");
      char q = t->str[j];
      if (q == '"' || q == '\'') {
        const char *close = strchr(t->str + j + 1, q);
        if (close) {
          i = (gsize)(close - t->str) + 1;
          continue;
        }
      }
    }
    gsize skip = attr_at(t, i, "xlink:href=") ? strlen("xlink:") : 0; /* SVG 2's href, no namespace */
    if (skip || attr_at(t, i, "href=")) {
      i += skip;
      g_string_append(r, "href=");
      i += strlen("href=");
      if (i + 1 < t->len && (t->str[i] == '\'' || t->str[i] == '"') && t->str[i + 1] == '#') {
        g_string_append_len(r, t->str + i, 2);
        g_string_append_printf(r, "%s-", prefix);
        i += 2;
      }
      continue;
    }
    if (attr_at(t, i, "id='") || attr_at(t, i, "id=\"")) {
      g_string_append_len(r, t->str + i, 4);
      g_string_append_printf(r, "%s-", prefix);
      i += 4;
      continue;
    }
    if (strncmp(t->str + i, "url(#", 5) == 0) {
      g_string_append_printf(r, "url(#%s-", prefix);
      i += 5;
      continue;
    }
    g_string_append_c(r, t->str[i++]);
  }
  g_string_append_len(out, r->str, (gssize)r->len);
}

/* gnuplot's SVG document made fit to sit inline in the page, or NULL if it holds no <svg> element. */
static char *svg_inline(const char *raw, const char *prefix, const char *title) {
  const char *p = strstr(raw, "<svg");
  if (!p) return NULL;
  g_autoptr(GString) out = g_string_sized_new(strlen(p) + 256);
  gboolean titled = FALSE;
  while (*p) {
    if (*p != '<') {
      const char *lt = strchr(p, '<');
      gsize n = lt ? (gsize)(lt - p) : strlen(p);
      g_string_append_len(out, p, (gssize)n);
      p += n;
      continue;
    }
    if (!titled && strncmp(p, "<title>", 7) == 0) {
      const char *end = strstr(p, "</title>");
      if (end) {
        g_string_append(out, "<title>");
        put_esc(out, title);
        g_string_append(out, "</title>");
        p = end + strlen("</title>");
        titled = TRUE;
        continue;
      }
    }
    if (titled && strncmp(p, "<title>gnuplot_plot_", 20) == 0 && strstr(p, "</title>")) {
      p = strstr(p, "</title>") + strlen("</title>"); /* a tooltip "gnuplot_plot_1" says nothing */
      continue;
    }
    const char *q = p + 1;
    char quote = 0;
    for (; *q && (quote || *q != '>'); q++) {
      if (quote && *q == quote)
        quote = 0;
      else if (!quote && (*q == '"' || *q == '\''))
        quote = *q;
    }
    if (*q == '>') q++;
    svg_tag(out, p, (gsize)(q - p), prefix);
    p = q;
  }
  while (out->len && g_ascii_isspace(out->str[out->len - 1]))
    g_string_truncate(out, out->len - 1);
  return g_string_free(g_steal_pointer(&out), FALSE);
}

/* The last non-empty line of `text` (for a one-line error message), or NULL. */
static char *last_line(const char *text) {
  g_auto(GStrv) lines = g_strsplit(text ? text : "", "\n", -1);
  for (guint i = g_strv_length(lines); i > 0; i--) {
    g_strstrip(lines[i - 1]);
    if (*lines[i - 1]) return g_strdup(lines[i - 1]);
  }
  return NULL;
}

/* Runs gnuplot on `body` with the SVG terminal of width x height; returns its standard output. */
static char *gnuplot_run(Page *p, const char *id, int width, int height, const GString *body,
                         GError **error) {
  if (!p->tmpdir) {
    p->tmpdir = g_dir_make_tmp("sim-report-XXXXXX", error);
    if (!p->tmpdir) return NULL;
  }
  g_autofree char *name = g_strdup_printf("%s.gp", id);
  g_autofree char *script = g_build_filename(p->tmpdir, name, NULL);
  g_autoptr(GString) s = g_string_new("set encoding utf8\n");
  g_string_append_printf(s,
                         "set terminal svg size %d,%d dynamic noenhanced font 'sans-serif,12' "
                         "background '#ffffff'\nset output\nset datafile separator '\\t'\n",
                         width, height);
  g_string_append_len(s, body->str, (gssize)body->len);
  if (!g_file_set_contents(script, s->str, (gssize)s->len, error)) return NULL;
  char *argv[] = {p->gnuplot, (char *)"-d", script, NULL};
  g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "LC_ALL", "C", TRUE);
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  gboolean ok =
      g_spawn_sync(NULL, argv, env, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL, &out, &err, &status, error);
  g_unlink(script);
  if (!ok) return NULL;
  g_autoptr(GError) wait_error = NULL;
  if (!g_spawn_check_wait_status(status, &wait_error)) {
    g_autofree char *line = last_line(err);
    g_set_error(error, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT, "%s", line ? line : wait_error->message);
    return NULL;
  }
  return g_steal_pointer(&out);
}

/* One <figure>: gnuplot's drawing of `body` (or why there is none), then `note_html` if any. */
static void page_figure(Page *p, const char *id, const char *title, int width, int height,
                        const GString *body, const char *note_html) {
  GString *h = p->html;
  p->n_fig++;
  g_string_append_printf(h, "<figure id=\"fig-%s\">\n<figcaption>Figure %u. ", id, p->n_fig);
  put_esc(h, title);
  g_string_append(h, "</figcaption>\n");
  if (!p->gnuplot) {
    g_string_append(h, "<p class=\"omitted\">Figure omitted: gnuplot not found.</p>\n");
  } else {
    g_autoptr(GError) e = NULL;
    g_autofree char *raw = gnuplot_run(p, id, width, height, body, &e);
    g_autofree char *prefix = g_strdup_printf("fig-%s", id);
    g_autofree char *svg = raw ? svg_inline(raw, prefix, title) : NULL;
    if (svg) {
      g_string_append(h, svg);
      g_string_append_c(h, '\n');
      p->stats.figures++;
    } else {
      const char *why = e ? e->message : "no SVG in its output";
      p->stats.figures_failed++;
      page_warn(p, "figure %u (%s): gnuplot failed: %s", p->n_fig, title, why);
      g_string_append(h, "<p class=\"notice\">Figure omitted: gnuplot failed: ");
      put_esc(h, why);
      g_string_append(h, "</p>\n");
    }
  }
  if (note_html) g_string_append_printf(h, "<p class=\"note\">%s</p>\n", note_html);
  g_string_append(h, "</figure>\n");
}

/* A figure that cannot be drawn from these inputs. */
static void page_no_figure(Page *p, const char *id, const char *title, const char *why) {
  p->n_fig++;
  g_string_append_printf(p->html, "<figure id=\"fig-%s\">\n<figcaption>Figure %u. ", id, p->n_fig);
  put_esc(p->html, title);
  g_string_append(p->html, "</figcaption>\n<p class=\"omitted\">");
  put_esc(p->html, why);
  g_string_append(p->html, "</p>\n</figure>\n");
}

/* Common gnuplot settings of the figures. */
static void gp_style(GString *s) {
  g_string_append(s, "set grid lc rgb '#dddddd'\nset border lc rgb '#555555'\nset key noautotitle\n"
                     "set linetype 1 lc rgb '#1f77b4' lw 2 pt 7\nset linetype 2 lc rgb '#d62728' lw 2 pt 5\n"
                     "set linetype 3 lc rgb '#2ca02c' lw 2 pt 9\nset linetype 4 lc rgb '#ff7f0e' lw 2 pt 11\n"
                     "set linetype 5 lc rgb '#9467bd' lw 2 pt 13\nset linetype 6 lc rgb '#8c564b' lw 2 pt 7\n"
                     "set linetype 7 lc rgb '#e377c2' lw 2 pt 5\nset linetype 8 lc rgb '#7f7f7f' lw 2 pt 9\n"
                     "set linetype cycle 8\n");
}

/* ---- Tables ------------------------------------------------------------------------------------------- */

static void table_begin(GString *h, const char *caption, const char *const *cols, guint n) {
  g_string_append(h, "<table>\n");
  if (caption) {
    g_string_append(h, "<caption>");
    put_esc(h, caption);
    g_string_append(h, "</caption>\n");
  }
  g_string_append(h, "<thead><tr>");
  for (guint i = 0; i < n; i++) {
    g_string_append(h, "<th>");
    put_esc(h, cols[i]);
    g_string_append(h, "</th>");
  }
  g_string_append(h, "</tr></thead>\n<tbody>\n");
}

static void table_end(GString *h) {
  g_string_append(h, "</tbody>\n</table>\n");
}

static void td_text(GString *h, const char *text) {
  g_string_append(h, "<td>");
  put_esc(h, text);
  g_string_append(h, "</td>");
}

static void td_num(GString *h, double v) {
  g_string_append(h, "<td class=\"num\">");
  put_num(h, v);
  g_string_append(h, "</td>");
}

/* A CSV field in a table: numbers formatted, anything else as text. */
static void td_field(GString *h, const char *field) {
  double v;
  if (parse_num(field, &v))
    td_num(h, v);
  else
    td_text(h, field);
}

/* One row of the key metrics table, if `v` is a number. */
static void metric_row(GString *h, const char *label, json_t *v, const char *unit) {
  if (!json_is_number(v)) return;
  g_string_append(h, "<tr>");
  td_text(h, label);
  td_num(h, json_number_value(v));
  td_text(h, unit ? unit : "");
  g_string_append(h, "</tr>\n");
}

/* ---- The run page ------------------------------------------------------------------------------------- */

static json_t *load_summary(const char *path, GError **error) {
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    input_error(error, path, "%s", g_strerror(ENOENT));
    return NULL;
  }
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  json_t *doc = sim_json_load_file(path, 0, SIM_JSON_BLANK_AS_SYNTAX, &pb, &e);
  if (!doc) {
    if (e->code == SIM_INPUT_ERROR_SYNTAX)
      g_set_error(error, AN_REPORT_ERROR, AN_REPORT_ERROR_INPUT, "%s:%s", path, e->message);
    else if (e->code == SIM_INPUT_ERROR_OPEN || e->code == SIM_INPUT_ERROR_READ)
      input_error(error, path, "%s", g_strerror(pb.err_no));
    else
      input_error(error, path, "%s", e->message);
    return NULL;
  }
  if (!json_is_object(doc)) {
    json_decref(doc);
    input_error(error, path, "not a JSON object");
    return NULL;
  }
  return doc;
}

static void page_head(GString *h, const char *title, const AnReportOptions *opt) {
  g_string_append(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
  if (opt && opt->generator) {
    g_string_append(h, "<meta name=\"generator\" content=\"");
    put_esc(h, opt->generator);
    g_string_append(h, "\">\n");
  }
  g_string_append(h, "<title>");
  put_esc(h, title);
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
  put_esc(h, title);
  g_string_append(h, "</h1>\n");
}

static void page_tail(Page *p, const AnReportOptions *opt) {
  g_string_append(p->html, "<footer>Made by <code>sim report</code>");
  if (opt && opt->generator) {
    g_string_append(p->html, " (");
    put_esc(p->html, opt->generator);
    g_string_append(p->html, ")");
  }
  g_string_append(p->html, " from <code>");
  put_esc(p->html, p->dir);
  g_string_append(p->html, "</code>.</footer>\n</body>\n</html>\n");
}

static void meta_item(GString *h, const char *name, const char *value) {
  if (!value) return;
  g_string_append(h, "<dt>");
  put_esc(h, name);
  g_string_append(h, "</dt><dd>");
  put_esc(h, value);
  g_string_append(h, "</dd>\n");
}

static void run_meta(Page *p, json_t *summary) {
  json_t *hd = json_object_get(summary, "header");
  GString *h = p->html;
  g_string_append(h, "<dl class=\"meta\">\n");
  meta_item(h, "directory", p->dir);
  meta_item(h, "scenario", json_string_value(jget(hd, "scenario", "name", NULL)));
  meta_item(h, "scenario file", json_string_value(json_object_get(hd, "scenario_file")));
  json_t *seed = json_object_get(hd, "seed");
  if (json_is_integer(seed)) {
    g_autofree char *s = g_strdup_printf("%" JSON_INTEGER_FORMAT, json_integer_value(seed));
    meta_item(h, "seed", s);
  }
  const char *ver = json_string_value(json_object_get(hd, "version"));
  const char *git = json_string_value(json_object_get(hd, "git_describe"));
  if (ver) {
    g_autofree char *s =
        g_strdup_printf("sim %s%s%s%s", ver, git ? " (" : "", git ? git : "", git ? ")" : "");
    meta_item(h, "made by", s);
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
    meta_item(h, "command line", s->str);
  }
  g_string_append(h, "</dl>\n");
}

static void key_metrics(Page *p, json_t *s) {
  GString *h = p->html;
  g_string_append(h, "<h2 id=\"metrics\">Key metrics</h2>\n");
  const char *cols[] = {"metric", "value", "unit"};
  table_begin(h, NULL, cols, 3);
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
    metric_row(h, chain[i].label, jget(s, "chain", chain[i].key, NULL), chain[i].unit);
  metric_row(h, "runs.max (longest run of one pool)", jget(s, "runs", "max", NULL), "blocks");
  const char *k;
  json_t *v;
  g_autoptr(GString) ge = g_string_new(NULL);
  json_object_foreach(jget(s, "runs", "count_ge", NULL), k, v) {
    g_string_append_printf(ge, "%s≥%s: ", ge->len ? ", " : "", k);
    put_num(ge, json_number_value(v));
  }
  if (ge->len) {
    g_string_append(h, "<tr>");
    td_text(h, "runs.count_ge (maximal runs of length ≥ k)");
    td_text(h, ge->str);
    td_text(h, "runs");
    g_string_append(h, "</tr>\n");
  }
  metric_row(h, "one_miner_forks.count", jget(s, "one_miner_forks", "count", NULL), NULL);

  json_t *prop = json_object_get(s, "propagation");
  metric_row(h, "propagation.vantage_delay_ms.median (first observer excluded)",
             jget(prop, "vantage_delay_ms", "median", NULL), "ms");
  metric_row(h, "propagation.vantage_delay_ms.p90", jget(prop, "vantage_delay_ms", "p90", NULL), "ms");
  metric_row(h, "propagation.vantage_delay_incl_first_ms.median",
             jget(prop, "vantage_delay_incl_first_ms", "median", NULL), "ms");
  json_object_foreach(json_object_get(prop, "vantage_delay_by_vantage_ms"), k, v) {
    g_autofree char *label = g_strdup_printf("propagation.vantage_delay_by_vantage_ms.%s.median", k);
    metric_row(h, label, json_object_get(v, "median"), "ms");
  }
  metric_row(h, "propagation.blocks_seen_by_all", json_object_get(prop, "blocks_seen_by_all"), "blocks");
  json_object_foreach(json_object_get(prop, "first_seen_share"), k, v) {
    g_autofree char *label = g_strdup_printf("propagation.first_seen_share.%s", k);
    metric_row(h, label, v, NULL);
  }

  json_t *tx = json_object_get(s, "tx");
  static const char *const tx_counts[] = {"unique", "created", "committed", "never_committed", "evicted"};
  for (size_t i = 0; i < G_N_ELEMENTS(tx_counts); i++) {
    g_autofree char *label = g_strdup_printf("tx.%s", tx_counts[i]);
    metric_row(h, label, json_object_get(tx, tx_counts[i]), "transactions");
  }
  json_object_foreach(json_object_get(tx, "commit_s"), k, v) {
    static const char *const stats[] = {"median", "mean", "p90"};
    for (size_t i = 0; i < G_N_ELEMENTS(stats); i++) {
      g_autofree char *label = g_strdup_printf("tx.commit_s.%s.%s", k, stats[i]);
      metric_row(h, label, json_object_get(v, stats[i]), "s");
    }
  }
  metric_row(h, "tx.out_of_order_share", json_object_get(tx, "out_of_order_share"), NULL);
  metric_row(h, "tx.propagation_ms.median", jget(tx, "propagation_ms", "median", NULL), "ms");
  metric_row(h, "tx.propagation_ms.p90", jget(tx, "propagation_ms", "p90", NULL), "ms");
  metric_row(h, "sim.events", jget(s, "sim", "events", NULL), NULL);
  metric_row(h, "sim.wall_s (wall clock)", jget(s, "sim", "wall_s", NULL), "s");
  table_end(h);
}

/* -- Figure 1: propagation CDF -- */

gboolean an_report_read_delays(const char *path, GPtrArray **names_out, GPtrArray **delays_out,
                               GError **error) {
  g_return_val_if_fail(path != NULL && names_out != NULL && delays_out != NULL, FALSE);
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return FALSE;
  int first = csv_col(c, "FirstObservation", TRUE, error);
  if (first < 0) return FALSE;
  int pool = csv_col(c, "MiningPool", TRUE, error);
  if (pool < 0) return FALSE;
  if (pool <= first + 1)
    return input_error(error, path, "no <V>Diff column between FirstObservation and MiningPool");
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) delays = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  for (int i = first + 1; i < pool; i++) {
    const char *h = c->header[i];
    if (!g_str_has_suffix(h, "Diff") || strlen(h) == strlen("Diff"))
      return input_error(error, path,
                         "column '%s' between FirstObservation and MiningPool is not a <V>Diff column", h);
    g_ptr_array_add(names, g_strndup(h, strlen(h) - strlen("Diff")));
    g_ptr_array_add(delays, g_array_new(FALSE, FALSE, sizeof(double)));
  }
  guint nv = names->len;
  g_autofree double *d = g_new(double, nv);
  int r;
  while ((r = csv_row(c, error)) > 0) {
    gboolean all = TRUE;
    for (guint v = 0; v < nv; v++) {
      if (!csv_num(c, first + 1 + (int)v, TRUE, &d[v], error)) return FALSE;
      if (isnan(d[v])) all = FALSE;
    }
    if (!all) continue;
    const char *fo = csv_field(c, first);
    guint fv = G_MAXUINT;
    for (guint v = 0; v < nv && fv == G_MAXUINT; v++)
      if (strcmp(fo, g_ptr_array_index(names, v)) == 0) fv = v;
    if (fv == G_MAXUINT)
      return input_error(error, path, "line %u: FirstObservation '%s' is not a vantage point of the header",
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
  gp_block_begin(s, name);
  if (n <= CDF_EXACT_MAX) {
    gp_num(s, x[0]);
    g_string_append(s, "\t0\n");
    for (size_t i = 0; i < n; i++) {
      gp_num(s, x[i]);
      g_string_append_c(s, '\t');
      gp_num(s, (double)(i + 1) / (double)n);
      g_string_append_c(s, '\n');
    }
  } else {
    for (int j = 0; j <= CDF_EXACT_MAX; j++) {
      double f = (double)j / CDF_EXACT_MAX;
      gp_num(s, gsl_stats_quantile_from_sorted_data(x, 1, n, f));
      g_string_append_c(s, '\t');
      gp_num(s, f);
      g_string_append_c(s, '\n');
    }
  }
  gp_block_end(s);
}

static void stats_row(GString *h, const char *name, const double *x, size_t n) {
  g_string_append(h, "<tr>");
  td_text(h, name);
  td_num(h, (double)n);
  td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.5) : NAN);
  td_num(h, n ? gsl_stats_mean(x, 1, n) : NAN);
  td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.9) : NAN);
  td_num(h, n ? gsl_stats_quantile_from_sorted_data(x, 1, n, 0.99) : NAN);
  g_string_append(h, "</tr>\n");
}

static const char *const TITLE_PROP =
    "Block propagation: delay after the first observation, CDF per vantage point";
static const char *const TITLE_FIRST = "First-seen shares per pool and vantage point";
static const char *const TITLE_RUNS = "Run lengths against the i.i.d. expectation";
static const char *const TITLE_COMMIT = "Commit time against confirmations k, per vantage point";
static const char *const TITLE_POOLS = "Main share against hash share and reward share, per pool";

static gboolean fig_propagation(Page *p, json_t *summary, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "observations.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    if (json_object_get(summary, "propagation"))
      page_no_figure(p, "propagation", TITLE_PROP, "observations.csv not found: figure omitted.");
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
    page_no_figure(p, "propagation", TITLE_PROP,
                   names->len < 2 ? "One vantage point only: no delay after the first observation."
                                  : "No block was seen by every vantage point: figure omitted.");
    return TRUE;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  gp_style(s);
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
    gp_str(s, label);
    any = TRUE;
  }
  g_string_append_c(s, '\n');
  page_figure(
      p, "propagation", TITLE_PROP, 860, 460, s,
      "For each block every vantage point saw: each vantage point's reception time minus the earliest "
      "one, leaving out the first observer's zero (observations.csv, to the millisecond).");
  const char *cols[] = {"vantage point", "delays", "median (ms)", "mean (ms)", "p90 (ms)", "p99 (ms)"};
  table_begin(p->html, "Delay after the first observation (first observer excluded)", cols, 6);
  for (guint v = 0; v < names->len; v++) {
    GArray *a = g_ptr_array_index(delays, v);
    stats_row(p->html, g_ptr_array_index(names, v), (const double *)a->data, a->len);
  }
  stats_row(p->html, "all", (const double *)all->data, all->len);
  table_end(p->html);
  return TRUE;
}

/* -- Figure 2: first-seen shares -- */

static void fig_first_seen(Page *p, json_t *summary) {
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
  gp_style(s);
  gp_block_begin(s, "F");
  g_autoptr(GString) rows = g_string_new(NULL);
  const char *pool;
  json_t *shares;
  json_object_foreach(by_pool, pool, shares) {
    gp_field(s, pool);
    g_string_append(rows, "<tr>");
    td_text(rows, pool);
    for (guint i = 0; i < vps->len; i++) {
      json_t *x = json_object_get(shares, g_ptr_array_index(vps, i));
      double d = json_is_number(x) ? json_number_value(x) : 0;
      g_string_append_c(s, '\t');
      gp_num(s, d);
      if (json_is_number(x))
        td_num(rows, d);
      else
        td_text(rows, "");
    }
    g_string_append_c(s, '\n');
    g_string_append(rows, "</tr>\n");
  }
  gp_field(s, "all blocks");
  g_string_append(rows, "<tr>");
  td_text(rows, "all blocks");
  for (guint i = 0; i < vps->len; i++) {
    json_t *x = json_object_get(overall, g_ptr_array_index(vps, i));
    g_string_append_c(s, '\t');
    gp_num(s, json_number_value(x));
    td_num(rows, json_number_value(x));
  }
  g_string_append(rows, "</tr>\n");
  g_string_append_c(s, '\n');
  gp_block_end(s);
  g_string_append(s, "set style data histograms\nset style histogram rowstacked\n"
                     "set style fill solid 0.85 border rgb '#ffffff'\nset boxwidth 0.75\nset yrange [0:1]\n"
                     "set ylabel 'share of the blocks seen by all, by first observer'\n"
                     "set xtics rotate by -40 left scale 0\nset key outside right top\nset grid noxtics\n"
                     "plot ");
  for (guint i = 0; i < vps->len; i++) {
    g_string_append_printf(s, "%s$F using %u%s lt %u title ", i ? ", " : "", i + 2, i ? "" : ":xtic(1)",
                           i + 1);
    gp_str(s, g_ptr_array_index(vps, i));
  }
  g_string_append_c(s, '\n');
  page_figure(p, "first-seen", TITLE_FIRST, 900, 480, s,
              "Per pool (and over all blocks): the share of its blocks seen by every vantage point that each "
              "vantage point saw first (summary.json, propagation.first_seen_share_by_pool).");
  g_autoptr(GPtrArray) cols = g_ptr_array_new();
  g_ptr_array_add(cols, (gpointer) "pool");
  for (guint i = 0; i < vps->len; i++)
    g_ptr_array_add(cols, g_ptr_array_index(vps, i));
  table_begin(p->html, "First-seen shares", (const char *const *)cols->pdata, cols->len);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  table_end(p->html);
}

/* -- Figure 3: runs -- */

static gboolean fig_runs(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "runs.csv", NULL);
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"length", "count", "count_ge", "expected_iid_ge"};
  int col[4];
  for (int i = 0; i < 4; i++)
    if ((col[i] = csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GString) obs = g_string_new(NULL), iid = g_string_new(NULL), rows = g_string_new(NULL);
  double lo = INFINITY, max_len = 0;
  guint n_obs = 0, n_iid = 0;
  int r;
  while ((r = csv_row(c, error)) > 0) {
    double x[4];
    for (int i = 0; i < 4; i++)
      if (!csv_num(c, col[i], FALSE, &x[i], error)) return FALSE;
    g_string_append(rows, "<tr>");
    for (int i = 0; i < 4; i++)
      td_num(rows, x[i]);
    g_string_append(rows, "</tr>\n");
    max_len = MAX(max_len, x[0]);
    if (x[2] > 0) {
      gp_num(obs, x[0]);
      g_string_append_c(obs, '\t');
      gp_num(obs, x[2]);
      g_string_append_c(obs, '\n');
      lo = MIN(lo, x[2]);
      n_obs++;
    }
    if (x[3] > 0) {
      gp_num(iid, x[0]);
      g_string_append_c(iid, '\t');
      gp_num(iid, x[3]);
      g_string_append_c(iid, '\n');
      lo = MIN(lo, x[3]);
      n_iid++;
    }
  }
  if (r < 0) return FALSE;
  if (!n_obs && !n_iid) {
    page_no_figure(p, "runs", TITLE_RUNS, "runs.csv has no run: figure omitted.");
  } else {
    g_autoptr(GString) s = g_string_new(NULL);
    gp_style(s);
    double ymin = pow(10, floor(log10(MAX(lo, 1e-6))));
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_printf(
        s,
        "set logscale y\nset format y '%%g'\nset yrange [%s:*]\n"
        "set xrange [0.5:%g]\nset xtics 1\nset xlabel 'run length k (consecutive main blocks "
        "by one pool)'\nset ylabel 'maximal runs of length >= k'\nset key top right\n",
        g_ascii_formatd(buf, sizeof buf, "%g", ymin), max_len + 0.5);
    gp_block_begin(s, "OBS");
    g_string_append_len(s, obs->str, (gssize)obs->len);
    gp_block_end(s);
    gp_block_begin(s, "IID");
    g_string_append_len(s, iid->str, (gssize)iid->len);
    gp_block_end(s);
    g_string_append(s, "plot ");
    if (n_iid) g_string_append(s, "$IID using 1:2 with lines lt 2 dt 2 title 'i.i.d. expectation'");
    if (n_obs)
      g_string_append_printf(s, "%s$OBS using 1:2 with linespoints lt 1 title 'simulated'",
                             n_iid ? ", " : "");
    g_string_append_c(s, '\n');
    page_figure(
        p, "runs", TITLE_RUNS, 860, 460, s,
        "Number of maximal runs of at least k consecutive main blocks by one pool (runs.csv count_ge), "
        "and what independent mining at each pool's main share would give (expected_iid_ge). Zero counts "
        "cannot be shown on the logarithmic axis.");
  }
  const char *cols[] = {"length", "runs", "runs ≥ length", "i.i.d. expectation ≥ length"};
  table_begin(p->html, "Runs of consecutive main blocks by one pool (runs.csv)", cols, 4);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  table_end(p->html);
  return TRUE;
}

/* -- Figure 4: commit time -- */

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

static gboolean fig_commit(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "tx_commit.csv", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) return TRUE;
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"k", "vantage", "pairs", "median_s", "mean_s", "p90_s"};
  int col[6];
  for (int i = 0; i < 6; i++)
    if ((col[i] = csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(commit_series_free);
  g_autoptr(GString) rows = g_string_new(NULL);
  int r;
  double kmax = 0;
  while ((r = csv_row(c, error)) > 0) {
    CommitRow cr;
    if (!csv_num(c, col[0], FALSE, &cr.k, error) || !csv_num(c, col[2], FALSE, &cr.pairs, error) ||
        !csv_num(c, col[3], TRUE, &cr.median, error) || !csv_num(c, col[4], TRUE, &cr.mean, error) ||
        !csv_num(c, col[5], TRUE, &cr.p90, error))
      return FALSE;
    const char *vp = csv_field(c, col[1]);
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
    td_num(rows, cr.k);
    td_text(rows, *vp ? vp : "all");
    td_num(rows, cr.pairs);
    td_num(rows, cr.median);
    td_num(rows, cr.mean);
    td_num(rows, cr.p90);
    g_string_append(rows, "</tr>\n");
  }
  if (r < 0) return FALSE;
  if (!series->len) {
    page_no_figure(p, "commit", TITLE_COMMIT, "tx_commit.csv has no row: figure omitted.");
    return TRUE;
  }
  const char *cols[] = {"k", "vantage point", "pairs", "median (s)", "mean (s)", "p90 (s)"};
  gboolean any_data = FALSE;
  for (guint i = 0; i < series->len; i++)
    any_data |= ((CommitSeries *)g_ptr_array_index(series, i))->has_data;
  /* No committed transaction (a replay of logs without TxMsg.log): nothing to draw, which is no error. */
  if (!any_data) {
    page_no_figure(
        p, "commit", TITLE_COMMIT,
        "tx_commit.csv has no commit time (no transaction was seen and committed): figure omitted.");
    table_begin(p->html, "Commit time (tx_commit.csv)", cols, 6);
    g_string_append_len(p->html, rows->str, (gssize)rows->len);
    table_end(p->html);
    return TRUE;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  gp_style(s);
  for (guint i = 0; i < series->len; i++) {
    CommitSeries *cs = g_ptr_array_index(series, i);
    if (!cs->has_data) continue;
    g_autofree char *bn = g_strdup_printf("C%u", i);
    gp_block_begin(s, bn);
    for (guint j = 0; j < cs->rows->len; j++) {
      CommitRow *cr = &g_array_index(cs->rows, CommitRow, j);
      double x[4] = {cr->k, cr->median, cr->mean, cr->p90};
      for (int q = 0; q < 4; q++) {
        if (q) g_string_append_c(s, '\t');
        if (isnan(x[q]))
          g_string_append(s, "NaN");
        else
          gp_num(s, x[q]);
      }
      g_string_append_c(s, '\n');
    }
    gp_block_end(s);
  }
  g_string_append_printf(s,
                         "set multiplot layout 1,3\nset xrange [-1:%g]\nset xlabel 'k (confirmations)'\n"
                         "set yrange [0:*]\nset key top left Left reverse\nset xtics (",
                         kmax + 1);
  /* ticks at the k values of the file */
  CommitSeries *first = g_ptr_array_index(series, 0);
  for (guint j = 0; j < first->rows->len; j++) {
    if (j) g_string_append(s, ", ");
    gp_num(s, g_array_index(first->rows, CommitRow, j).k);
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
        gp_str(s, all ? "all vantage points" : cs->vantage);
      }
    g_string_append_c(s, '\n');
  }
  g_string_append(s, "unset multiplot\n");
  page_figure(
      p, "commit", TITLE_COMMIT, 960, 420, s,
      "Reception of the main block at height h + k minus the first reception of the transaction, over "
      "every (committed transaction, vantage point) pair (tx_commit.csv; only these statistics are "
      "written, not the samples).");
  table_begin(p->html, "Commit time (tx_commit.csv)", cols, 6);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  table_end(p->html);
  return TRUE;
}

/* -- Figure 5: pools -- */

static gboolean fig_pools(Page *p, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "pools.csv", NULL);
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return FALSE;
  static const char *const need[] = {"pool", "hash_share", "main_share", "reward_share"};
  int col[4];
  for (int i = 0; i < 4; i++)
    if ((col[i] = csv_col(c, need[i], TRUE, error)) < 0) return FALSE;
  g_autoptr(GString) data = g_string_new(NULL), rows = g_string_new(NULL);
  guint n = 0;
  int r;
  while ((r = csv_row(c, error)) > 0) {
    double x[3];
    for (int i = 0; i < 3; i++)
      if (!csv_num(c, col[i + 1], FALSE, &x[i], error)) return FALSE;
    gp_field(data, csv_field(c, col[0]));
    for (int i = 0; i < 3; i++) {
      g_string_append_c(data, '\t');
      gp_num(data, x[i]);
    }
    g_string_append_c(data, '\n');
    g_string_append(rows, "<tr>");
    for (guint i = 0; i < c->ncols; i++) {
      if ((int)i == col[0])
        td_text(rows, csv_field(c, (int)i));
      else
        td_field(rows, csv_field(c, (int)i));
    }
    g_string_append(rows, "</tr>\n");
    n++;
  }
  if (r < 0) return FALSE;
  if (!n) {
    page_no_figure(p, "pools", TITLE_POOLS, "pools.csv has no pool: figure omitted.");
  } else {
    g_autoptr(GString) s = g_string_new(NULL);
    gp_style(s);
    gp_block_begin(s, "P");
    g_string_append_len(s, data->str, (gssize)data->len);
    gp_block_end(s);
    g_string_append(s, "set style data histograms\nset style histogram clustered gap 1\n"
                       "set style fill solid 0.85 border rgb '#ffffff'\nset yrange [0:*]\n"
                       "set ylabel 'share'\nset xtics rotate by -40 left scale 0\nset key top right\n"
                       "set grid noxtics\n"
                       "plot $P using 2:xtic(1) lt 8 title 'hash share', $P using 3 lt 1 title 'main share', "
                       "$P using 4 lt 3 title 'reward share'\n");
    page_figure(
        p, "pools", TITLE_POOLS, 960, 460, s,
        "Per pool: its share of the hash power, of the main-chain blocks, and of all rewards (blocks, "
        "uncles and nephew bonuses), from pools.csv.");
  }
  table_begin(p->html, "Pools (pools.csv)", (const char *const *)c->header, c->ncols);
  g_string_append_len(p->html, rows->str, (gssize)rows->len);
  table_end(p->html);
  return TRUE;
}


/* ---- The network map and a block's journey (map.h draws them) ----------------------------------------- */

/* Nodes, regions and links for the map, from the scenario echo in summary.json or from trace_nodes.csv. */
typedef struct {
  GStringChunk *str;
  GArray *nodes;     /* AnMapNode, strings in str */
  GPtrArray *regions; /* const char *, in str */
  GArray *share;     /* double per region */
  GArray *links;     /* guint32 pairs */
  gboolean from_trace;
} NetData;

static void net_data_free(NetData *d) {
  if (!d) return;
  g_string_chunk_free(d->str);
  g_array_unref(d->nodes);
  g_ptr_array_unref(d->regions);
  g_array_unref(d->share);
  g_array_unref(d->links);
  g_free(d);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NetData, net_data_free)

static NetData *net_data_new(void) {
  NetData *d = g_new0(NetData, 1);
  d->str = g_string_chunk_new(4096);
  d->nodes = g_array_new(FALSE, TRUE, sizeof(AnMapNode));
  d->regions = g_ptr_array_new();
  d->share = g_array_new(FALSE, TRUE, sizeof(double));
  d->links = g_array_new(FALSE, FALSE, sizeof(guint32));
  return d;
}

static const char *nd_str(NetData *d, const char *s) { return g_string_chunk_insert_const(d->str, s ? s : ""); }

static void nd_add(NetData *d, AnMapRole role, const char *name, const char *pool, const char *region,
                   const char *city) {
  AnMapNode n = {.role = role, .name = nd_str(d, name), .pool = nd_str(d, pool), .region = nd_str(d, region),
                 .city = nd_str(d, city)};
  g_array_append_val(d->nodes, n);
}

/* Gateways of different pools are linked: all of them with gateway_mesh, else those in one city (net.h). */
static void nd_links(NetData *d, gboolean mesh) {
  for (guint a = 0; a < d->nodes->len; a++) {
    const AnMapNode *x = &g_array_index(d->nodes, AnMapNode, a);
    if (x->role != AN_MAP_GATEWAY) continue;
    for (guint b = a + 1; b < d->nodes->len; b++) {
      const AnMapNode *y = &g_array_index(d->nodes, AnMapNode, b);
      if (y->role != AN_MAP_GATEWAY || strcmp(x->pool, y->pool) == 0) continue;
      if (mesh || (*x->city && strcmp(x->city, y->city) == 0)) {
        guint32 ab[2] = {a, b};
        g_array_append_vals(d->links, ab, 2);
      }
    }
  }
}

static const char *city_region(json_t *net, const char *city) {
  json_t *names = jget(net, "cities", "names", NULL), *reg = jget(net, "cities", "region", NULL);
  for (size_t i = 0; i < json_array_size(names); i++)
    if (g_strcmp0(json_string_value(json_array_get(names, i)), city) == 0)
      return json_string_value(json_array_get(reg, i));
  return NULL;
}

/* The geo network as the scenario describes it: the specials in net.c's order (vantage points, then each
 * gateway entry's places), then the ordinary nodes per region by largest-remainder rounding of nodes x
 * node_share (ties to the lower region), as net_topology_build() counts them. */
static NetData *net_from_scenario(json_t *net) {
  NetData *d = net_data_new();
  json_t *names = jget(net, "regions", "names", NULL), *share = jget(net, "regions", "node_share", NULL);
  size_t nr = json_array_size(names);
  double sum = 0;
  for (size_t r = 0; r < nr; r++) sum += json_number_value(json_array_get(share, r));
  for (size_t r = 0; r < nr; r++) {
    g_ptr_array_add(d->regions, (gpointer)nd_str(d, json_string_value(json_array_get(names, r))));
    double x = sum > 0 ? json_number_value(json_array_get(share, r)) / sum : 0;
    g_array_append_val(d->share, x);
  }
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(net, "vantage_points"), i, v) {
    const char *city = json_string_value(json_object_get(v, "city"));
    const char *region = json_string_value(json_object_get(v, "region"));
    nd_add(d, AN_MAP_VANTAGE, json_string_value(json_object_get(v, "name")), NULL,
           city ? city_region(net, city) : region, city);
  }
  g_autoptr(GHashTable) k_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  json_array_foreach(json_object_get(net, "gateways"), i, v) {
    const char *pool = json_string_value(json_object_get(v, "pool"));
    if (!pool) continue;
    json_t *cities = json_object_get(v, "cities"), *regions = json_object_get(v, "regions");
    json_t *places = cities ? cities : regions;
    size_t j;
    json_t *pl;
    json_array_foreach(places, j, pl) {
      guint k = GPOINTER_TO_UINT(g_hash_table_lookup(k_of, pool)) + 1;
      g_hash_table_insert(k_of, g_strdup(pool), GUINT_TO_POINTER(k));
      g_autofree char *name = g_strdup_printf("%s#%u", pool, k);
      const char *place = json_string_value(pl);
      nd_add(d, AN_MAP_GATEWAY, name, pool, cities ? city_region(net, place) : place, cities ? place : NULL);
    }
  }
  double nodes = json_number_value(json_object_get(net, "nodes"));
  guint64 n = nodes > 0 && nodes < 1e9 ? (guint64)nodes : 0, given = 0;
  g_autofree guint64 *count = g_new0(guint64, MAX(nr, 1));
  g_autofree double *rem = g_new0(double, MAX(nr, 1));
  for (size_t r = 0; r < nr; r++) {
    double x = (double)n * g_array_index(d->share, double, r);
    count[r] = (guint64)floor(x);
    rem[r] = x - floor(x);
    given += count[r];
  }
  while (given < n && nr > 0) {
    size_t best = 0;
    for (size_t r = 1; r < nr; r++)
      if (rem[r] > rem[best]) best = r;
    count[best]++;
    rem[best] = -1;
    given++;
  }
  for (size_t r = 0; r < nr; r++)
    for (guint64 k = 0; k < count[r]; k++) nd_add(d, AN_MAP_NODE, NULL, NULL, g_ptr_array_index(d->regions, r), NULL);
  json_t *mesh = json_object_get(net, "gateway_mesh");
  nd_links(d, !mesh || json_is_true(mesh));
  return d;
}

/* The run's own node table (sim run --trace-blocks). */
static NetData *net_from_trace(const char *path, json_t *net, GError **error) {
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return NULL;
  int cn = csv_col(c, "node", TRUE, error), cr = cn < 0 ? -1 : csv_col(c, "role", TRUE, error),
      cm = cr < 0 ? -1 : csv_col(c, "name", TRUE, error), cp = cm < 0 ? -1 : csv_col(c, "pool", TRUE, error),
      cg = cp < 0 ? -1 : csv_col(c, "region", TRUE, error), cc = cg < 0 ? -1 : csv_col(c, "city", TRUE, error);
  if (cc < 0) return NULL;
  g_autoptr(NetData) d = net_data_new();
  json_t *names = jget(net, "regions", "names", NULL), *share = jget(net, "regions", "node_share", NULL);
  for (size_t r = 0; r < json_array_size(names); r++) {
    g_ptr_array_add(d->regions, (gpointer)nd_str(d, json_string_value(json_array_get(names, r))));
    double x = json_number_value(json_array_get(share, r));
    g_array_append_val(d->share, x);
  }
  int r;
  while ((r = csv_row(c, error)) > 0) {
    double id;
    if (!csv_num(c, cn, FALSE, &id, error)) return NULL;
    if (id != (double)d->nodes->len)
      return input_error(error, path, "line %u: node %s out of order (expected %u)", c->line, csv_field(c, cn),
                         d->nodes->len),
             NULL;
    const char *role = csv_field(c, cr);
    AnMapRole ro = strcmp(role, "vantage") == 0 ? AN_MAP_VANTAGE : strcmp(role, "gateway") == 0 ? AN_MAP_GATEWAY
                   : strcmp(role, "node") == 0                                      ? AN_MAP_NODE
                                                                                    : (AnMapRole)-1;
    if ((int)ro < 0) return input_error(error, path, "line %u: unknown role '%s'", c->line, role), NULL;
    nd_add(d, ro, csv_field(c, cm), csv_field(c, cp), csv_field(c, cg), csv_field(c, cc));
  }
  if (r < 0) return NULL;
  d->from_trace = TRUE;
  json_t *mesh = json_object_get(net, "gateway_mesh");
  nd_links(d, !mesh || json_is_true(mesh));
  return g_steal_pointer(&d);
}

static void net_map(const NetData *d, AnMapNet *m) {
  *m = (AnMapNet){.regions = (const char *const *)d->regions->pdata,
                  .region_share = (const double *)(gpointer)d->share->data,
                  .n_regions = d->regions->len,
                  .nodes = (const AnMapNode *)(gpointer)d->nodes->data,
                  .n_nodes = d->nodes->len,
                  .links = (const guint32 *)(gpointer)d->links->data,
                  .n_links = d->links->len / 2,
                  .from_trace = d->from_trace};
}

/* One block as observations.csv has it: vantage points' first observations (s since the start). */
typedef struct {
  char *hash;
  guint32 height;
  char *type;
  double *ts; /* per vantage, NAN: not seen */
  double delay_ms; /* mean over the vantage points of the delay after the first; NAN unless all saw it */
} ObsRow;

typedef struct {
  GPtrArray *vantages; /* char * */
  GPtrArray *rows;     /* ObsRow * */
} Obs;

static void obs_row_free(gpointer x) {
  ObsRow *r = x;
  g_free(r->hash);
  g_free(r->type);
  g_free(r->ts);
  g_free(r);
}

static void obs_free(Obs *o) {
  if (!o) return;
  g_ptr_array_unref(o->vantages);
  g_ptr_array_unref(o->rows);
  g_free(o);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Obs, obs_free)

/* observations.csv of `dir`, or NULL without one (an error only for a malformed file). */
static Obs *obs_load(const char *dir, gboolean *bad, GError **error) {
  g_autofree char *path = g_build_filename(dir, "observations.csv", NULL);
  *bad = FALSE;
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) return NULL;
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return *bad = TRUE, NULL;
  int ch = csv_col(c, "BlockHash", TRUE, error), cn = ch < 0 ? -1 : csv_col(c, "Number", TRUE, error),
      ct = cn < 0 ? -1 : csv_col(c, "BlockType", TRUE, error);
  if (ct < 0) return *bad = TRUE, NULL;
  g_autoptr(Obs) o = g_new0(Obs, 1);
  o->vantages = g_ptr_array_new_with_free_func(g_free);
  o->rows = g_ptr_array_new_with_free_func(obs_row_free);
  g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < c->ncols; i++)
    if (g_str_has_suffix(c->header[i], "TimeStamp") && strlen(c->header[i]) > strlen("TimeStamp")) {
      g_ptr_array_add(o->vantages, g_strndup(c->header[i], strlen(c->header[i]) - strlen("TimeStamp")));
      int col = (int)i;
      g_array_append_val(cols, col);
    }
  int r;
  while ((r = csv_row(c, error)) > 0) {
    ObsRow *row = g_new0(ObsRow, 1);
    g_ptr_array_add(o->rows, row);
    row->hash = g_strdup(csv_field(c, ch));
    row->type = g_strdup(csv_field(c, ct));
    double h;
    if (!csv_num(c, cn, FALSE, &h, error)) return *bad = TRUE, NULL;
    row->height = h >= 0 && h < 4e9 ? (guint32)h : 0;
    row->ts = g_new(double, MAX(cols->len, 1));
    double first = INFINITY, sum = 0;
    gboolean all = cols->len > 0;
    for (guint v = 0; v < cols->len; v++) {
      if (!csv_num(c, g_array_index(cols, int, v), TRUE, &row->ts[v], error)) return *bad = TRUE, NULL;
      if (isnan(row->ts[v])) all = FALSE;
      else first = MIN(first, row->ts[v]);
    }
    for (guint v = 0; v < cols->len && all; v++) sum += (row->ts[v] - first) * 1e3;
    row->delay_ms = all ? sum / cols->len : NAN;
  }
  if (r < 0) return *bad = TRUE, NULL;
  return g_steal_pointer(&o);
}

static const ObsRow *obs_find(const Obs *o, const char *hash) {
  for (guint i = 0; o && i < o->rows->len; i++) {
    const ObsRow *r = g_ptr_array_index(o->rows, i);
    if (g_ascii_strcasecmp(r->hash, hash) == 0) return r;
  }
  return NULL;
}

static int cmp_obs_delay(const void *a, const void *b) {
  const ObsRow *x = *(const ObsRow *const *)a, *y = *(const ObsRow *const *)b;
  if (x->delay_ms != y->delay_ms) return x->delay_ms < y->delay_ms ? -1 : 1;
  return (x->height > y->height) - (x->height < y->height);
}

/* The median-delay block: of the blocks every vantage point saw, the one whose mean delay after the first
 * observation is the median (the lower middle one of an even count; ties by height). With `height` > 0 the
 * main block at that height (else its first block) instead. NULL: none. */
static const ObsRow *obs_choose(const Obs *o, guint32 height) {
  if (!o) return NULL;
  if (height > 0) {
    const ObsRow *any = NULL;
    for (guint i = 0; i < o->rows->len; i++) {
      const ObsRow *r = g_ptr_array_index(o->rows, i);
      if (r->height != height) continue;
      if (g_ascii_strcasecmp(r->type, "Main") == 0) return r;
      if (!any) any = r;
    }
    return any;
  }
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  for (guint i = 0; i < o->rows->len; i++) {
    ObsRow *r = g_ptr_array_index(o->rows, i);
    if (!isnan(r->delay_ms)) g_ptr_array_add(all, r);
  }
  if (all->len == 0) return NULL;
  qsort(all->pdata, all->len, sizeof(gpointer), cmp_obs_delay);
  return g_ptr_array_index(all, (all->len - 1) / 2);
}

/* A vantage journey of an observations row: delays after the first observation, in ms. */
static void obs_journey(const Obs *o, const ObsRow *r, AnJourney *j, double *ms) {
  double first = INFINITY;
  for (guint v = 0; v < o->vantages->len; v++)
    if (!isnan(r->ts[v])) first = MIN(first, r->ts[v]);
  for (guint v = 0; v < o->vantages->len; v++) ms[v] = isnan(r->ts[v]) ? NAN : (r->ts[v] - first) * 1e3;
  j->vantages = (const char *const *)o->vantages->pdata;
  j->vantage_ms = ms;
  j->n_vantages = o->vantages->len;
  j->first_obs_ms = NAN;
}

/* A traced block of trace_blocks.csv. */
typedef struct {
  char *block;
  guint32 height;
  double *arrive_ms; /* per node, NAN: never */
  double median_ms;  /* median arrival over the nodes (unreached as latest) */
} Traced;

static void traced_free(gpointer x) {
  Traced *t = x;
  g_free(t->block);
  g_free(t->arrive_ms);
  g_free(t);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static GPtrArray *traced_load(const char *path, guint32 n_nodes, GError **error) {
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return NULL;
  int cb = csv_col(c, "block", TRUE, error), ch = cb < 0 ? -1 : csv_col(c, "height", TRUE, error),
      cn = ch < 0 ? -1 : csv_col(c, "node", TRUE, error), ca = cn < 0 ? -1 : csv_col(c, "arrive_s", TRUE, error);
  if (ca < 0) return NULL;
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(traced_free);
  Traced *cur = NULL;
  int r;
  while ((r = csv_row(c, error)) > 0) {
    const char *b = csv_field(c, cb);
    double h, node, a;
    if (!csv_num(c, ch, FALSE, &h, error) || !csv_num(c, cn, FALSE, &node, error) ||
        !csv_num(c, ca, FALSE, &a, error))
      return NULL;
    if (node < 0 || node >= n_nodes || node != floor(node))
      return input_error(error, path, "line %u: node %s not in trace_nodes.csv (%u nodes)", c->line,
                         csv_field(c, cn), n_nodes),
             NULL;
    if (!cur || strcmp(cur->block, b) != 0) {
      cur = NULL;
      for (guint i = 0; i < out->len && !cur; i++)
        if (strcmp(((Traced *)g_ptr_array_index(out, i))->block, b) == 0) cur = g_ptr_array_index(out, i);
      if (!cur) {
        cur = g_new0(Traced, 1);
        cur->block = g_strdup(b);
        cur->height = h >= 0 && h < 4e9 ? (guint32)h : 0;
        cur->arrive_ms = g_new(double, MAX(n_nodes, 1));
        for (guint32 v = 0; v < n_nodes; v++) cur->arrive_ms[v] = NAN;
        g_ptr_array_add(out, cur);
      }
    }
    cur->arrive_ms[(guint32)node] = a * 1e3;
  }
  if (r < 0) return NULL;
  g_autofree double *tmp = g_new(double, MAX(n_nodes, 1));
  for (guint i = 0; i < out->len; i++) {
    Traced *t = g_ptr_array_index(out, i);
    for (guint32 v = 0; v < n_nodes; v++) tmp[v] = isnan(t->arrive_ms[v]) ? INFINITY : t->arrive_ms[v];
    qsort(tmp, n_nodes, sizeof *tmp, cmp_dbl);
    t->median_ms = n_nodes ? tmp[(n_nodes - 1) / 2] : NAN;
  }
  return g_steal_pointer(&out);
}

/* blocks.csv: a block's type and pool (for the caption), and its mining time in s. FALSE if not found. */
static gboolean block_info(const char *dir, const char *id, char **type, char **pool, double *mined_s) {
  g_autofree char *path = g_build_filename(dir, "blocks.csv", NULL);
  g_autoptr(GError) e = NULL;
  g_autoptr(Csv) c = csv_open(path, &e);
  if (!c) return FALSE;
  int ci = csv_col(c, "id", FALSE, NULL), ct = csv_col(c, "type", FALSE, NULL), cp = csv_col(c, "pool", FALSE, NULL),
      cm = csv_col(c, "mined_s", FALSE, NULL);
  if (ci < 0 || ct < 0 || cp < 0 || cm < 0) return FALSE;
  while (csv_row(c, &e) > 0)
    if (g_ascii_strcasecmp(csv_field(c, ci), id) == 0) {
      *type = g_strdup(csv_field(c, ct));
      *pool = g_strdup(csv_field(c, cp));
      return parse_num(csv_field(c, cm), mined_s);
    }
  return FALSE;
}

/* The measured block shown beside (AnReportOptions.measured_dir): its median-delay block. */
static gboolean measured_journey(Page *p, const char *mdir, Obs **mo_out, const ObsRow **row_out, GError **error) {
  gboolean bad = FALSE;
  if (!g_file_test(mdir, G_FILE_TEST_IS_DIR)) return input_error(error, mdir, "not a directory");
  Obs *mo = obs_load(mdir, &bad, error);
  if (bad) return FALSE;
  if (!mo) {
    g_autofree char *path = g_build_filename(mdir, "observations.csv", NULL);
    return input_error(error, path, "%s", g_strerror(ENOENT));
  }
  const ObsRow *r = obs_choose(mo, 0);
  if (!r) {
    page_warn(p, "%s: no block seen by every vantage point: nothing to show beside", mdir);
    obs_free(mo);
    return TRUE;
  }
  *mo_out = mo;
  *row_out = r;
  return TRUE;
}

static void height_list(GString *s, const GPtrArray *traced) {
  for (guint i = 0; i < traced->len; i++) {
    guint32 h = ((const Traced *)g_ptr_array_index(traced, i))->height;
    gboolean dup = FALSE;
    for (guint j = 0; j < i && !dup; j++) dup = ((const Traced *)g_ptr_array_index(traced, j))->height == h;
    if (!dup) g_string_append_printf(s, "%s%u", s->len ? ", " : "", h);
  }
}

static gboolean section_network(Page *p, json_t *summary, const AnReportOptions *opt, GError **error) {
  json_t *net = jget(summary, "header", "scenario", "network", NULL);
  const char *model = json_string_value(json_object_get(net, "model"));
  guint32 want = opt ? opt->block_height : 0;
  const char *mdir = opt ? opt->measured_dir : NULL;
  gboolean bad = FALSE;
  g_autoptr(Obs) obs = obs_load(p->dir, &bad, error);
  if (bad) return FALSE;
  g_autoptr(Obs) mobs = NULL;
  const ObsRow *mrow = NULL;
  if (mdir && !measured_journey(p, mdir, &mobs, &mrow, error)) return FALSE;
  g_autofree double *mms = mobs ? g_new(double, MAX(mobs->vantages->len, 1)) : NULL;
  AnJourney mj = {0};
  g_autofree char *mcap = NULL;
  if (mrow) {
    obs_journey(mobs, mrow, &mj, mms);
    g_autofree char *base = g_path_get_basename(mdir);
    mcap = g_strdup_printf("measured: block %s at number %u (%s) in %s, its vantage points' median-delay block",
                           mrow->hash, mrow->height, mrow->type, base);
    mj.caption = mcap;
  }

  if (!net || !model) {
    /* A replay: no network, the vantage points' view only. */
    if (!obs) return TRUE;
    g_string_append(p->html, "<h2 id=\"journey\">A block's journey, as the vantage points saw it</h2>\n");
    const ObsRow *r = obs_choose(obs, want);
    if (!r) {
      if (want) return input_error(error, p->dir, "--block %u: no block at that height in observations.csv", want);
      g_string_append(p->html, "<p class=\"omitted\">No block was seen by every vantage point.</p>\n");
      return TRUE;
    }
    g_autofree double *ms = g_new(double, MAX(obs->vantages->len, 1));
    AnJourney j = {0};
    obs_journey(obs, r, &j, ms);
    g_autofree char *cap = g_strdup_printf("Block %s at number %u (%s)%s: first observations by the vantage points",
                                           r->hash, r->height, r->type, want ? "" : ", the median-delay block");
    j.caption = cap;
    g_string_append(p->html, "<p class=\"note\">Measured logs have no node positions: the page shows when each "
                             "vantage point first observed the block, after the first of them.</p>\n");
    an_map_journey(p->html, NULL, &j, mrow ? &mj : NULL);
    return TRUE;
  }

  g_string_append(p->html, "<h2 id=\"network\">The network</h2>\n");
  if (strcmp(model, "geo") != 0) {
    json_t *pools = jget(summary, "header", "scenario", "pools", NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    g_autoptr(GArray) share = g_array_new(FALSE, FALSE, sizeof(double));
    double sum = 0;
    size_t i;
    json_t *v;
    json_array_foreach(pools, i, v) sum += json_number_value(json_object_get(v, "hash_share"));
    json_array_foreach(pools, i, v) {
      const char *n = json_string_value(json_object_get(v, "name"));
      g_ptr_array_add(names, (gpointer)(n ? n : "?"));
      double x = sum > 0 ? json_number_value(json_object_get(v, "hash_share")) / sum : 0;
      g_array_append_val(share, x);
    }
    an_map_pools_figure(p->html, (const char *const *)names->pdata, (const double *)(gpointer)share->data,
                        names->len);
    if (want) return input_error(error, p->dir, "--block %u: the \"%s\" network has no per-node journey", want, model);
    return TRUE;
  }

  g_autofree char *npath = g_build_filename(p->dir, "trace_nodes.csv", NULL);
  g_autofree char *bpath = g_build_filename(p->dir, "trace_blocks.csv", NULL);
  gboolean traced = g_file_test(npath, G_FILE_TEST_EXISTS) && g_file_test(bpath, G_FILE_TEST_EXISTS);
  g_autoptr(NetData) nd = traced ? net_from_trace(npath, net, error) : net_from_scenario(net);
  if (!nd) return FALSE;
  AnMapNet m;
  net_map(nd, &m);
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  an_map_figure(p->html, &m, notes);
  for (guint i = 0; i < notes->len; i++) {
    g_string_append(p->html, "<p class=\"note\">");
    put_esc(p->html, g_ptr_array_index(notes, i));
    g_string_append(p->html, "</p>\n");
  }

  g_string_append(p->html, "<h2 id=\"journey\">A block's journey</h2>\n");
  if (!traced) {
    if (want) return input_error(error, p->dir, "--block %u: this run has no trace_blocks.csv (run it with --trace-blocks)", want);
    const ObsRow *r = obs_choose(obs, 0);
    g_string_append(p->html, "<p class=\"notice\" id=\"journey-howto\">No journey: this run was made without "
                             "<code>--trace-blocks</code>. To watch a block cross the network, run it again with "
                             "the same scenario and seed and <code>--trace-blocks HEIGHT</code>");
    if (r)
      g_string_append_printf(p->html, " (the median-delay block of this run is at height %u, so "
                                      "<code>--trace-blocks %u</code>)", r->height, r->height);
    g_string_append(p->html, ", then make the report again. The other outputs stay the same.</p>\n");
    if (mrow) an_map_journey(p->html, NULL, &mj, NULL);
    return TRUE;
  }
  g_autoptr(GPtrArray) tr = traced_load(bpath, m.n_nodes, error);
  if (!tr) return FALSE;
  const Traced *pick = NULL;
  if (want) {
    for (guint i = 0; i < tr->len; i++) {
      const Traced *t = g_ptr_array_index(tr, i);
      if (t->height != want) continue;
      const ObsRow *orow = obs_find(obs, t->block);
      if (!pick || (orow && g_ascii_strcasecmp(orow->type, "Main") == 0)) pick = t;
    }
    if (!pick) {
      g_autoptr(GString) hs = g_string_new(NULL);
      height_list(hs, tr);
      return input_error(error, bpath, "--block %u: not traced (traced heights: %s)", want,
                         hs->len ? hs->str : "none");
    }
  } else if (tr->len > 0) {
    /* the median-delay block of the traced ones: by the vantage points' mean delay where every vantage point
     * saw them all, else by the median node arrival */
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    gboolean by_obs = obs != NULL;
    for (guint i = 0; i < tr->len; i++) {
      Traced *t = g_ptr_array_index(tr, i);
      const ObsRow *orow = obs_find(obs, t->block);
      if (!orow || isnan(orow->delay_ms)) by_obs = FALSE;
      g_ptr_array_add(order, t);
    }
    for (guint i = 1; i < order->len; i++)
      for (guint j = i; j > 0; j--) {
        Traced *a = g_ptr_array_index(order, j - 1), *b = g_ptr_array_index(order, j);
        double ka = by_obs ? obs_find(obs, a->block)->delay_ms : a->median_ms;
        double kb = by_obs ? obs_find(obs, b->block)->delay_ms : b->median_ms;
        if (ka < kb || (ka == kb && a->height <= b->height)) break;
        order->pdata[j - 1] = b;
        order->pdata[j] = a;
      }
    pick = g_ptr_array_index(order, (order->len - 1) / 2);
  }
  if (!pick) {
    g_string_append(p->html, "<p class=\"omitted\">trace_blocks.csv holds no block.</p>\n");
    return TRUE;
  }
  g_autofree char *type = NULL, *pool = NULL;
  double mined_s = NAN;
  gboolean have_info = block_info(p->dir, pick->block, &type, &pool, &mined_s);
  const ObsRow *orow = obs_find(obs, pick->block);
  AnJourney j = {.arrive_ms = pick->arrive_ms, .first_obs_ms = NAN};
  g_autofree double *ms = NULL;
  if (orow) {
    ms = g_new(double, MAX(obs->vantages->len, 1));
    obs_journey(obs, orow, &j, ms);
    double first = INFINITY;
    for (guint v = 0; v < obs->vantages->len; v++)
      if (!isnan(orow->ts[v])) first = MIN(first, orow->ts[v]);
    if (have_info && isfinite(first)) j.first_obs_ms = (first - mined_s) * 1e3;
  }
  guint32 reached = 0;
  for (guint32 v = 0; v < m.n_nodes; v++) reached += !isnan(pick->arrive_ms[v]);
  g_autoptr(GString) hs = g_string_new(NULL);
  height_list(hs, tr);
  g_autofree char *cap = g_strdup_printf(
      "Block %s at height %u%s%s%s%s%s: %u of %u nodes reached%s", pick->block, pick->height,
      have_info ? " (" : "", have_info ? type : "", have_info && pool && *pool ? ", mined by " : "",
      have_info && pool ? pool : "", have_info ? ")" : "", reached, m.n_nodes,
      want ? "" : "; the median-delay block of those traced");
  j.caption = cap;
  g_string_append(p->html, "<p class=\"note\">Traced heights (trace_blocks.csv): ");
  put_esc(p->html, hs->str);
  g_string_append(p->html, ". <code>sim report --block HEIGHT</code> shows another.</p>\n");
  an_map_journey(p->html, &m, &j, mrow ? &mj : NULL);
  return TRUE;
}

static gboolean render_run(Page *p, const AnReportOptions *opt, GError **error) {
  g_autofree char *spath = g_build_filename(p->dir, "summary.json", NULL);
  g_autoptr(json_t) summary = load_summary(spath, error);
  if (!summary) return FALSE;
  const char *name = json_string_value(jget(summary, "header", "scenario", "name", NULL));
  g_autofree char *base = g_path_get_basename(p->dir);
  g_autofree char *title = g_strdup_printf("sim report: %s", name ? name : base);
  page_head(p->html, title, opt);
  run_meta(p, summary);
  if (!p->gnuplot) g_string_append(p->html, "<p class=\"notice\">gnuplot not found: figures omitted.</p>\n");
  key_metrics(p, summary);
  g_string_append(p->html, "<h2 id=\"figures\">Figures</h2>\n");
  if (!fig_propagation(p, summary, error)) return FALSE;
  fig_first_seen(p, summary);
  if (!fig_runs(p, error)) return FALSE;
  if (!fig_commit(p, error)) return FALSE;
  if (!fig_pools(p, error)) return FALSE;
  if (!section_network(p, summary, opt, error)) return FALSE;
  page_tail(p, opt);
  return TRUE;
}

/* ---- The sweep page ----------------------------------------------------------------------------------- */

typedef struct {
  char *name;
  int mean, sd, ci95; /* columns; sd and ci95 may be -1 */
} SweepMetric;

static void sweep_metric_free(gpointer x) {
  SweepMetric *m = x;
  g_free(m->name);
  g_free(m);
}

typedef struct {
  char *path;
  char **header;
  guint ncols;
  int n_col;          /* also the number of parameters */
  GPtrArray *rows;    /* char ** (GStrv) */
  GArray *lines;      /* guint: each row's line in the file */
  GPtrArray *metrics; /* SweepMetric * */
} Sweep;

static void sweep_free(Sweep *sw) {
  if (!sw) return;
  g_free(sw->path);
  g_strfreev(sw->header);
  if (sw->rows) g_ptr_array_unref(sw->rows);
  if (sw->lines) g_array_unref(sw->lines);
  if (sw->metrics) g_ptr_array_unref(sw->metrics);
  g_free(sw);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Sweep, sweep_free)

static Sweep *sweep_load(const char *path, GError **error) {
  g_autoptr(Csv) c = csv_open(path, error);
  if (!c) return NULL;
  g_autoptr(Sweep) sw = g_new0(Sweep, 1);
  sw->path = g_strdup(path);
  sw->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  sw->lines = g_array_new(FALSE, FALSE, sizeof(guint));
  sw->metrics = g_ptr_array_new_with_free_func(sweep_metric_free);
  /* `sim sweep` writes point, the parameters, replicates, then KEY:mean, KEY:sd, KEY:ci95; the older shape
   * (parameters, n, KEY.mean ...) is read too. */
  sw->n_col = csv_col(c, "replicates", FALSE, NULL);
  if (sw->n_col < 0) sw->n_col = csv_col(c, "n", TRUE, error);
  if (sw->n_col < 0) return NULL;
  if (sw->n_col == 0) {
    input_error(error, path, "no parameter column before 'n'");
    return NULL;
  }
  for (guint i = (guint)sw->n_col + 1; i < c->ncols; i++) {
    const char *h = c->header[i];
    const char *sep = g_str_has_suffix(h, ":mean") ? ":" : ".";
    if (!(g_str_has_suffix(h, ".mean") || g_str_has_suffix(h, ":mean")) || strlen(h) == strlen(".mean")) continue;
    SweepMetric *m = g_new0(SweepMetric, 1);
    m->name = g_strndup(h, strlen(h) - strlen(".mean"));
    m->mean = (int)i;
    g_autofree char *sd = g_strconcat(m->name, sep, "sd", NULL), *ci = g_strconcat(m->name, sep, "ci95", NULL);
    m->sd = csv_col(c, sd, FALSE, NULL);
    m->ci95 = csv_col(c, ci, FALSE, NULL);
    g_ptr_array_add(sw->metrics, m);
  }
  if (!sw->metrics->len) {
    input_error(error, path, "no metric column (<metric>.mean) after 'n'");
    return NULL;
  }
  int r;
  while ((r = csv_row(c, error)) > 0) {
    double x;
    if (!csv_num(c, sw->n_col, FALSE, &x, error)) return NULL;
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      if (!csv_num(c, m->mean, TRUE, &x, error)) return NULL;
      if (m->sd >= 0 && !csv_num(c, m->sd, TRUE, &x, error)) return NULL;
      if (m->ci95 >= 0 && !csv_num(c, m->ci95, TRUE, &x, error)) return NULL;
    }
    char **row = g_new0(char *, (gsize)c->ncols + 1);
    for (guint i = 0; i < c->ncols; i++)
      row[i] = g_strdup(csv_field(c, (int)i));
    g_ptr_array_add(sw->rows, row);
    g_array_append_val(sw->lines, c->line);
  }
  if (r < 0) return NULL;
  if (!sw->rows->len) {
    input_error(error, path, "no data row");
    return NULL;
  }
  sw->header = g_steal_pointer(&c->header);
  sw->ncols = c->ncols;
  /* A leading point index is not a parameter: drop it so that column 0 is the first parameter. */
  if (sw->n_col > 1 && strcmp(sw->header[0], "point") == 0) {
    g_free(sw->header[0]);
    memmove(sw->header, sw->header + 1, sizeof(char *) * sw->ncols);
    for (guint k = 0; k < sw->rows->len; k++) {
      char **row = g_ptr_array_index(sw->rows, k);
      g_free(row[0]);
      memmove(row, row + 1, sizeof(char *) * sw->ncols);
    }
    sw->ncols--;
    sw->n_col--;
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      m->mean--;
      if (m->sd >= 0) m->sd--;
      if (m->ci95 >= 0) m->ci95--;
    }
  }
  return g_steal_pointer(&sw);
}

static SweepMetric *sweep_metric(const Sweep *sw, const char *name) {
  for (guint i = 0; i < sw->metrics->len; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (strcmp(m->name, name) == 0) return m;
  }
  return NULL;
}

/* The metrics to draw (SweepMetric *, not owned), as report.h says. */
static GPtrArray *sweep_choose(const Sweep *sw, const AnReportOptions *opt, GError **error) {
  GPtrArray *out = g_ptr_array_new();
  if (opt && opt->metrics && opt->metrics[0]) {
    for (const char *const *m = opt->metrics; *m; m++) {
      SweepMetric *sm = sweep_metric(sw, *m);
      if (!sm) {
        g_ptr_array_unref(out);
        input_error(error, sw->path, "no metric '%s' (no column '%s.mean')", *m, *m);
        return NULL;
      }
      if (!g_ptr_array_find(out, sm, NULL)) g_ptr_array_add(out, sm); /* once: figure ids are unique */
    }
    return out;
  }
  static const char *const key[] = {"chain.uncle_rate", "chain.stale_share", "runs.max"};
  for (size_t i = 0; i < G_N_ELEMENTS(key); i++)
    if (sweep_metric(sw, key[i])) g_ptr_array_add(out, sweep_metric(sw, key[i]));
  static const char *const largest[] = {AN_REPORT_LARGEST_POOL_METRICS};
  SweepMetric *lp = NULL;
  for (size_t i = 0; i < G_N_ELEMENTS(largest) && !lp; i++)
    lp = sweep_metric(sw, largest[i]);
  /* `sim sweep` names pool metrics pools[NAME].key, in the scenario's pool order (largest first in the
   * shipped scenarios): the first pool's main share, else any pool share. */
  for (guint i = 0; i < sw->metrics->len && !lp; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (g_str_has_prefix(m->name, "pools[") && g_str_has_suffix(m->name, "].main_share")) lp = m;
  }
  for (guint i = 0; i < sw->metrics->len && !lp; i++) {
    SweepMetric *m = g_ptr_array_index(sw->metrics, i);
    if (g_str_has_prefix(m->name, "pools") && strstr(m->name, "share")) lp = m;
  }
  if (lp) g_ptr_array_add(out, lp);
  if (out->len == 0)
    for (guint j = 0; j < MIN(4u, sw->metrics->len); j++)
      g_ptr_array_add(out, g_ptr_array_index(sw->metrics, j));
  return out;
}

static double row_num(char **row, int col) {
  double v;
  return col >= 0 && parse_num(row[col], &v) ? v : NAN;
}

/* A figure id from a metric name: letters, digits and '-'. */
static char *id_of(const char *name) {
  GString *s = g_string_new("sweep-");
  for (const char *q = name; *q; q++)
    g_string_append_c(s, g_ascii_isalnum(*q) ? g_ascii_tolower(*q) : '-');
  return g_string_free(s, FALSE);
}

static void sweep_figure(Page *p, const Sweep *sw, const SweepMetric *m) {
  guint nrows = sw->rows->len;
  /* x: the first parameter, numeric if every value is a number; else category indexes. */
  gboolean numeric = TRUE;
  double xmin = INFINITY, xmax = -INFINITY;
  for (guint i = 0; i < nrows; i++) {
    double v = row_num(g_ptr_array_index(sw->rows, i), 0);
    if (isnan(v)) numeric = FALSE;
    xmin = MIN(xmin, v);
    xmax = MAX(xmax, v);
  }
  g_autoptr(GPtrArray) cats = g_ptr_array_new(); /* the first parameter's values, first-seen order */
  g_autofree double *x = g_new(double, nrows);
  for (guint i = 0; i < nrows; i++) {
    char **row = g_ptr_array_index(sw->rows, i);
    if (numeric) {
      x[i] = row_num(row, 0);
      continue;
    }
    guint j = 0;
    while (j < cats->len && strcmp(g_ptr_array_index(cats, j), row[0]) != 0)
      j++;
    if (j == cats->len) g_ptr_array_add(cats, row[0]);
    x[i] = j;
  }
  /* Series: the other parameters' values. */
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
  g_autofree guint *series_of = g_new(guint, nrows);
  for (guint i = 0; i < nrows; i++) {
    char **row = g_ptr_array_index(sw->rows, i);
    g_autoptr(GString) key = g_string_new(NULL);
    for (int c = 1; c < sw->n_col; c++)
      g_string_append_printf(key, "%s%s = %s", c > 1 ? ", " : "", sw->header[c], row[c]);
    guint j = 0;
    while (j < keys->len && strcmp(g_ptr_array_index(keys, j), key->str) != 0)
      j++;
    if (j == keys->len) g_ptr_array_add(keys, g_strdup(key->str));
    series_of[i] = j;
  }
  g_autoptr(GString) s = g_string_new(NULL);
  gp_style(s);
  g_autofree guint *order = g_new(guint, nrows);
  guint drawn = 0;
  g_autoptr(GString) plot = g_string_new("plot ");
  for (guint k = 0; k < keys->len; k++) {
    /* this series' rows sorted by x (insertion sort: tables are small) */
    guint n = 0;
    for (guint i = 0; i < nrows; i++) {
      if (series_of[i] != k || isnan(row_num(g_ptr_array_index(sw->rows, i), m->mean))) continue;
      guint j = n++;
      while (j > 0 && x[order[j - 1]] > x[i]) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    if (!n) continue;
    g_autofree char *bn = g_strdup_printf("S%u", k);
    gp_block_begin(s, bn);
    for (guint j = 0; j < n; j++) {
      char **row = g_ptr_array_index(sw->rows, order[j]);
      double mean = row_num(row, m->mean), ci = row_num(row, m->ci95);
      if (isnan(ci)) ci = 0;
      gp_num(s, x[order[j]]);
      g_string_append_c(s, '\t');
      gp_num(s, mean);
      g_string_append_c(s, '\t');
      gp_num(s, mean - ci);
      g_string_append_c(s, '\t');
      gp_num(s, mean + ci);
      g_string_append_c(s, '\n');
    }
    gp_block_end(s);
    guint lt = (k % 8) + 1;
    if (drawn) g_string_append(plot, ", ");
    if (m->ci95 >= 0)
      g_string_append_printf(
          plot, "$S%u using 1:3:4 with filledcurves lt %u fs transparent solid 0.2 noborder, ", k, lt);
    g_string_append_printf(plot, "$S%u using 1:2 with linespoints lt %u title ", k, lt);
    gp_str(plot, keys->len > 1 ? (const char *)g_ptr_array_index(keys, k)
                               : (m->ci95 >= 0 ? "mean ± 95% CI" : "mean"));
    drawn++;
  }
  g_autofree char *title = g_strdup_printf("%s against %s", m->name, sw->header[0]);
  g_autofree char *id = id_of(m->name);
  if (!drawn) {
    page_no_figure(p, id, title, "No value of this metric in table.csv: figure omitted.");
    return;
  }
  g_string_append(s, "set xlabel ");
  gp_str(s, sw->header[0]);
  g_string_append(s, "\nset ylabel ");
  gp_str(s, m->name);
  g_string_append(s, "\nset key outside top center horizontal\n");
  if (numeric && xmin > 0 && xmax / xmin >= 100) g_string_append(s, "set logscale x\n");
  if (numeric && xmin == xmax) {
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    double pad = xmin != 0 ? fabs(xmin) * 0.5 : 1;
    g_string_append_printf(s, "set xrange [%s:%s]\n", g_ascii_formatd(a, sizeof a, "%.17g", xmin - pad),
                           g_ascii_formatd(b, sizeof b, "%.17g", xmax + pad));
  }
  if (!numeric) {
    g_string_append_printf(s, "set xrange [-0.5:%u.5]\nset xtics (", cats->len - 1);
    for (guint j = 0; j < cats->len; j++) {
      if (j) g_string_append(s, ", ");
      gp_str(s, g_ptr_array_index(cats, j));
      g_string_append_printf(s, " %u", j);
    }
    g_string_append(s, ")\n");
  }
  g_string_append_len(s, plot->str, (gssize)plot->len);
  g_string_append_c(s, '\n');
  g_autofree char *note =
      m->ci95 >= 0
          ? g_markup_printf_escaped("The mean of %s over the replicates of each point, with a band of ± its "
                                    "95%% confidence half-width (%s.ci95), from table.csv.",
                                    m->name, m->name)
          : g_markup_printf_escaped("The mean of %s over the replicates of each point, from table.csv "
                                    "(which has no %s.ci95 column).",
                                    m->name, m->name);
  page_figure(p, id, title, 860, 460, s, note);
}

static gboolean render_sweep(Page *p, const AnReportOptions *opt, GError **error) {
  g_autofree char *path = g_build_filename(p->dir, "table.csv", NULL);
  g_autoptr(Sweep) sw = sweep_load(path, error);
  if (!sw) return FALSE;
  g_autoptr(GPtrArray) chosen = sweep_choose(sw, opt, error);
  if (!chosen) return FALSE;
  g_autofree char *base = g_path_get_basename(p->dir);
  g_autofree char *title = g_strdup_printf("sim report: %s (sweep)", base);
  page_head(p->html, title, opt);
  GString *h = p->html;
  g_string_append(h, "<dl class=\"meta\">\n");
  meta_item(h, "directory", p->dir);
  g_autoptr(GString) params = g_string_new(NULL);
  for (int c = 0; c < sw->n_col; c++)
    g_string_append_printf(params, "%s%s", c ? ", " : "", sw->header[c]);
  meta_item(h, "parameters", params->str);
  g_autofree char *npoints = g_strdup_printf("%u", sw->rows->len);
  meta_item(h, "points", npoints);
  g_string_append(h, "</dl>\n");
  if (!p->gnuplot) g_string_append(h, "<p class=\"notice\">gnuplot not found: figures omitted.</p>\n");

  g_string_append(h, "<h2 id=\"metrics\">Points (table.csv)</h2>\n");
  g_autoptr(GPtrArray) cols = g_ptr_array_new_with_free_func(g_free);
  for (int c = 0; c <= sw->n_col; c++)
    g_ptr_array_add(cols, g_strdup(sw->header[c]));
  for (guint i = 0; i < sw->metrics->len; i++)
    g_ptr_array_add(
        cols, g_strdup_printf("%s (mean ± ci95)", ((SweepMetric *)g_ptr_array_index(sw->metrics, i))->name));
  table_begin(h, NULL, (const char *const *)cols->pdata, cols->len);
  for (guint r = 0; r < sw->rows->len; r++) {
    char **row = g_ptr_array_index(sw->rows, r);
    g_string_append(h, "<tr>");
    for (int c = 0; c <= sw->n_col; c++)
      td_field(h, row[c]);
    for (guint i = 0; i < sw->metrics->len; i++) {
      SweepMetric *m = g_ptr_array_index(sw->metrics, i);
      double mean = row_num(row, m->mean), ci = row_num(row, m->ci95);
      g_string_append(h, "<td class=\"num\">");
      put_num(h, mean);
      if (!isnan(ci)) {
        g_string_append(h, " ± ");
        put_num(h, ci);
      }
      g_string_append(h, "</td>");
    }
    g_string_append(h, "</tr>\n");
  }
  table_end(h);
  g_string_append(h, "<h2 id=\"figures\">Figures</h2>\n");
  for (guint i = 0; i < chosen->len; i++)
    sweep_figure(p, sw, g_ptr_array_index(chosen, i));
  page_tail(p, opt);
  return TRUE;
}

/* ---- Entry points ------------------------------------------------------------------------------------- */

static void remove_tmpdir(const char *dir) {
  if (!dir) return;
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    for (const char *n = g_dir_read_name(d); n; n = g_dir_read_name(d)) {
      g_autofree char *f = g_build_filename(dir, n, NULL);
      g_unlink(f);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

char *an_report_render(const char *dir, const AnReportOptions *opt, GPtrArray *warnings, AnReportStats *stats,
                       GError **error) {
  g_return_val_if_fail(dir != NULL, NULL);
  if (!g_file_test(dir, G_FILE_TEST_EXISTS)) {
    input_error(error, dir, "%s", g_strerror(ENOENT));
    return NULL;
  }
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    input_error(error, dir, "not a directory");
    return NULL;
  }
  Page p = {.dir = dir, .html = g_string_sized_new(1 << 16), .warnings = warnings};
  p.gnuplot = an_report_find_gnuplot();
  p.stats.gnuplot_found = p.gnuplot != NULL;
  if (!p.gnuplot) page_warn(&p, "gnuplot not found: figures omitted");
  g_autofree char *table = g_build_filename(dir, "table.csv", NULL);
  p.stats.sweep = g_file_test(table, G_FILE_TEST_EXISTS);
  gboolean ok = p.stats.sweep ? render_sweep(&p, opt, error) : render_run(&p, opt, error);
  remove_tmpdir(p.tmpdir);
  g_free(p.tmpdir);
  g_free(p.gnuplot);
  if (stats) *stats = p.stats;
  if (!ok) {
    g_string_free(p.html, TRUE);
    return NULL;
  }
  return g_string_free(p.html, FALSE);
}

gboolean an_report_write(const char *dir, const char *out_path, const AnReportOptions *opt,
                         GPtrArray *warnings, AnReportStats *stats, GError **error) {
  g_return_val_if_fail(dir != NULL, FALSE);
  g_autofree char *html = an_report_render(dir, opt, warnings, stats, error);
  if (!html) return FALSE;
  g_autofree char *dflt = g_build_filename(dir, "report.html", NULL);
  const char *path = out_path ? out_path : dflt;
  g_autoptr(GError) e = NULL;
  if (!sim_output_write_file(path, html, -1, &e)) {
    g_set_error_literal(error, AN_REPORT_ERROR, AN_REPORT_ERROR_OUTPUT, e->message);
    return FALSE;
  }
  return TRUE;
}
