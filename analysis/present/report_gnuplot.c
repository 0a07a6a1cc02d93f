/* report_gnuplot.c: the report's figures: a gnuplot child process, its script and data blocks, SVG embedded. */
#include "report-private.h"

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

void rp_page_warn(Page *p, const char *fmt, ...) {
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
        rp_put_esc(out, title);
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
void rp_page_figure(Page *p, const char *id, const char *title, int width, int height,
                        const GString *body, const char *note_html) {
  GString *h = p->html;
  p->n_fig++;
  g_string_append_printf(h, "<figure id=\"fig-%s\">\n<figcaption>Figure %u. ", id, p->n_fig);
  rp_put_esc(h, title);
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
      rp_page_warn(p, "figure %u (%s): gnuplot failed: %s", p->n_fig, title, why);
      g_string_append(h, "<p class=\"notice\">Figure omitted: gnuplot failed: ");
      rp_put_esc(h, why);
      g_string_append(h, "</p>\n");
    }
  }
  if (note_html) g_string_append_printf(h, "<p class=\"note\">%s</p>\n", note_html);
  g_string_append(h, "</figure>\n");
}

/* A figure that cannot be drawn from these inputs. */
void rp_page_no_figure(Page *p, const char *id, const char *title, const char *why) {
  p->n_fig++;
  g_string_append_printf(p->html, "<figure id=\"fig-%s\">\n<figcaption>Figure %u. ", id, p->n_fig);
  rp_put_esc(p->html, title);
  g_string_append(p->html, "</figcaption>\n<p class=\"omitted\">");
  rp_put_esc(p->html, why);
  g_string_append(p->html, "</p>\n</figure>\n");
}

/* Common gnuplot settings of the figures. */
void rp_gp_style(GString *s) {
  g_string_append(s, "set grid lc rgb '#dddddd'\nset border lc rgb '#555555'\nset key noautotitle\n"
                     "set linetype 1 lc rgb '#1f77b4' lw 2 pt 7\nset linetype 2 lc rgb '#d62728' lw 2 pt 5\n"
                     "set linetype 3 lc rgb '#2ca02c' lw 2 pt 9\nset linetype 4 lc rgb '#ff7f0e' lw 2 pt 11\n"
                     "set linetype 5 lc rgb '#9467bd' lw 2 pt 13\nset linetype 6 lc rgb '#8c564b' lw 2 pt 7\n"
                     "set linetype 7 lc rgb '#e377c2' lw 2 pt 5\nset linetype 8 lc rgb '#7f7f7f' lw 2 pt 9\n"
                     "set linetype cycle 8\n");
}
