/* report_html.c: HTML and number formatting, and HTML tables, for the report. */
#include "report-private.h"

/* `text` escaped for HTML; invalid UTF-8 (a CSV can hold anything) becomes U+FFFD first. */
void rp_put_esc(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  g_autofree char *e = g_markup_escape_text(valid, -1);
  g_string_append(s, e);
}

/* A number for people: integers in full, else 4 significant digits (C locale, whatever the process's). */
void rp_put_num(GString *s, double v) {
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
void rp_gp_num(GString *s, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(s, g_ascii_formatd(buf, sizeof buf, "%.17g", v));
}

/* A gnuplot string literal: single quotes (no escapes inside), a quote doubled, line breaks as spaces. */
void rp_gp_str(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  g_string_append_c(s, '\'');
  for (const char *p = valid; *p; p++) {
    if (*p == '\'') g_string_append_c(s, '\'');
    g_string_append_c(s, (*p == '\n' || *p == '\r') ? ' ' : *p);
  }
  g_string_append_c(s, '\'');
}

/* A string field of a datablock (tab-separated): no tab, line break or double quote. */
void rp_gp_field(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text, -1);
  if (!*valid) g_string_append_c(s, '-');
  for (const char *p = valid; *p; p++)
    g_string_append_c(s, (*p == '\t' || *p == '\n' || *p == '\r' || *p == '"') ? ' ' : *p);
}

void rp_gp_block_begin(GString *s, const char *name) {
  g_string_append_printf(s, "$%s << " GP_END "\n", name);
}

void rp_gp_block_end(GString *s) {
  g_string_append(s, GP_END "\n");
}

json_t *rp_jget(json_t *o, ...) {
  va_list ap;
  va_start(ap, o);
  for (const char *k = va_arg(ap, const char *); k && o; k = va_arg(ap, const char *))
    o = json_object_get(o, k);
  va_end(ap);
  return o;
}

void rp_table_begin(GString *h, const char *caption, const char *const *cols, guint n) {
  g_string_append(h, "<table>\n");
  if (caption) {
    g_string_append(h, "<caption>");
    rp_put_esc(h, caption);
    g_string_append(h, "</caption>\n");
  }
  g_string_append(h, "<thead><tr>");
  for (guint i = 0; i < n; i++) {
    g_string_append(h, "<th>");
    rp_put_esc(h, cols[i]);
    g_string_append(h, "</th>");
  }
  g_string_append(h, "</tr></thead>\n<tbody>\n");
}

void rp_table_end(GString *h) {
  g_string_append(h, "</tbody>\n</table>\n");
}

void rp_td_text(GString *h, const char *text) {
  g_string_append(h, "<td>");
  rp_put_esc(h, text);
  g_string_append(h, "</td>");
}

void rp_td_num(GString *h, double v) {
  g_string_append(h, "<td class=\"num\">");
  rp_put_num(h, v);
  g_string_append(h, "</td>");
}

/* A CSV field in a table: numbers formatted, anything else as text. */
void rp_td_field(GString *h, const char *field) {
  double v;
  if (rp_parse_num(field, &v))
    rp_td_num(h, v);
  else
    rp_td_text(h, field);
}

/* One row of the key metrics table, if `v` is a number. */
void rp_metric_row(GString *h, const char *label, json_t *v, const char *unit) {
  if (!json_is_number(v)) return;
  g_string_append(h, "<tr>");
  rp_td_text(h, label);
  rp_td_num(h, json_number_value(v));
  rp_td_text(h, unit ? unit : "");
  g_string_append(h, "</tr>\n");
}
