/* report-private.h: what the parts of the HTML report (report*.c) share: the page, CSV reading, HTML and
 * gnuplot helpers. Private to the presentation library. */
#pragma once

#include "report.h"
#include "map.h"
#include "outfile.h"
#include "input.h"
#include "util.h"
#include <errno.h>
#include <glib/gstdio.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

#define GP_END "END_OF_SIM_DATA" /* datablock terminator: no data line can equal it (fields are numbers) */

#define CDF_EXACT_MAX 1000       /* up to this many delays the CDF is drawn exactly, else at 1000 quantiles */

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

void rp_csv_free(Csv *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Csv, rp_csv_free)

typedef struct {
  const char *dir;
  GString *html;
  char *gnuplot; /* NULL: figures omitted */
  char *tmpdir;  /* created with the first figure */
  guint n_fig;
  GPtrArray *warnings;
  AnReportStats stats;
} Page;

gboolean rp_input_error(GError **error, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
Csv *rp_csv_open(const char *path, GError **error);
int rp_csv_row(Csv *c, GError **error);
const char *rp_csv_field(const Csv *c, int col);
int rp_csv_col(const Csv *c, const char *name, gboolean required, GError **error);
gboolean rp_parse_num(const char *s, double *out);
gboolean rp_csv_num(const Csv *c, int col, gboolean allow_empty, double *out, GError **error);
void rp_put_esc(GString *s, const char *text);
void rp_put_num(GString *s, double v);
void rp_gp_num(GString *s, double v);
void rp_gp_str(GString *s, const char *text);
void rp_gp_field(GString *s, const char *text);
void rp_gp_block_begin(GString *s, const char *name);
void rp_gp_block_end(GString *s);
json_t *rp_jget(json_t *o, ...) G_GNUC_NULL_TERMINATED;
char *an_report_find_gnuplot(void);
void rp_page_warn(Page *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void rp_page_figure(Page *p, const char *id, const char *title, int width, int height,
                        const GString *body, const char *note_html);
void rp_page_no_figure(Page *p, const char *id, const char *title, const char *why);
void rp_gp_style(GString *s);
void rp_table_begin(GString *h, const char *caption, const char *const *cols, guint n);
void rp_table_end(GString *h);
void rp_td_text(GString *h, const char *text);
void rp_td_num(GString *h, double v);
void rp_td_field(GString *h, const char *field);
void rp_metric_row(GString *h, const char *label, json_t *v, const char *unit);
json_t *rp_load_summary(const char *path, GError **error);
void rp_page_head(GString *h, const char *title, const AnReportOptions *opt);
void rp_page_tail(Page *p, const AnReportOptions *opt);
void rp_meta_item(GString *h, const char *name, const char *value);
void rp_run_meta(Page *p, json_t *summary);
void rp_key_metrics(Page *p, json_t *s);
gboolean rp_fig_propagation(Page *p, json_t *summary, GError **error);
void rp_fig_first_seen(Page *p, json_t *summary);
gboolean rp_fig_runs(Page *p, GError **error);
gboolean rp_fig_commit(Page *p, GError **error);
gboolean rp_fig_pools(Page *p, GError **error);
gboolean rp_render_run(Page *p, const AnReportOptions *opt, GError **error);
gboolean rp_render_sweep(Page *p, const AnReportOptions *opt, GError **error);

G_END_DECLS
