/* report.h: one self-contained HTML page from a results directory of `sim run` (or of a sweep), with
 * tables of the key metrics and figures drawn by gnuplot, embedded as inline SVG.
 *
 * Inputs of a run directory (what `sim run` writes; docs/outputs.md "Outputs"):
 *  - summary.json (required): the key metrics table, the first-seen shares per pool and vantage point;
 *  - pools.csv (required; columns pool, hash_share, main_share, reward_share and any others): the pools
 *    table and the figure of main share beside hash share and reward share;
 *  - runs.csv (required; length, count, count_ge, expected_iid_ge): the run-length figure, log y-axis;
 *  - observations.csv (optional, with vantage points): the propagation CDF per vantage point;
 *  - tx_commit.csv (optional, with transactions; k, vantage, pairs, median_s, mean_s, p90_s): commit time
 *    against k per vantage point (only these statistics are written, not per-transaction samples).
 * blocks.csv is not read: every figure comes from the files above.
 *
 * A sweep directory is one that holds table.csv: one row per point. As `sim sweep` writes it: `point`, the
 * swept parameters, `replicates`, then per metric `<metric>:mean`, `<metric>:sd`, `<metric>:ci95`; the
 * shape without `point`, with `n` for the replicates and `.mean` / `.sd` / `.ci95` suffixes is read too (sd
 * and ci95 may be missing or empty). It gets the table and, per chosen metric, the mean against the first
 * parameter with a band of mean ± ci95, one line per combination of the other parameters' values. A first
 * parameter whose values are all numbers is a numeric axis (logarithmic when all are positive and span a
 * factor of 100 or more); otherwise the points are placed in row order and labelled with their values.
 *
 * Propagation CDF (figure 1): the study's "delay after first observation" (DESIGN.md, "Measurement
 * model"): over the blocks every vantage point saw (every `<V>Diff` filled), each vantage point's
 * `<V>Diff` (seconds, shown in milliseconds), leaving out the first observer's zero (the vantage named in
 * FirstObservation; other vantages tied with it keep their zeros). This is the sample of
 * summary.json's propagation.vantage_delay_ms, split by vantage point, to the millisecond of the CSV.
 *
 * gnuplot: the program named by the environment variable SIM_GNUPLOT (a path, or a name looked up in
 * PATH; empty means none), else `gnuplot` on the PATH. Each figure is one child process run on a script
 * in a temporary directory (data inline as datablocks), with `set terminal svg`; its standard output is
 * embedded after removing the XML declaration, renaming xlink:href to href (so the only URI left is the
 * SVG namespace), prefixing every id with the figure's, and giving the SVG the figure's <title>. Without
 * gnuplot the page carries the notice "gnuplot not found: figures omitted" and everything else.
 *
 * Runs of a geo network also get the map of map.h (from the scenario in summary.json, or trace_nodes.csv),
 * and with trace_blocks.csv (sim run --trace-blocks) a block's journey (AnReportOptions.block_height, else
 * the median-delay block of those traced); replays get their vantage points' view of a block (map.h).
 *
 * The page references nothing outside itself (no fonts, images or links; its only script is the journey's,
 * inline) and is byte-identical
 * for the same inputs and the same gnuplot.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  const char *generator;      /* e.g. "sim 0.1.0 (v0.1-3-gabc)": a <meta> and the page footer; NULL: none */
  const char *const *metrics; /* sweep: the metrics to draw, NULL-terminated; NULL or empty: see below */
  guint32 block_height;       /* run or replay: the block whose journey is shown (0: the median-delay block) */
  const char *measured_dir;   /* run or replay: a replay's results directory whose median-delay block's vantage
                               * observations are shown beside (NULL: none) */
} AnReportOptions;

/* Without AnReportOptions.metrics a sweep report draws, of those present in table.csv: chain.uncle_rate,
 * chain.stale_share, runs.max, and the share of the largest pool (the first present of
 * AN_REPORT_LARGEST_POOL_METRICS, else the first metric whose name starts with "pools" and contains
 * "share"); if none of these is present, the first four metrics. */
#define AN_REPORT_LARGEST_POOL_METRICS                                                                       \
  "pools.largest_main_share", "pools.max_main_share", "pools.largest_share", "pools.max_share",              \
      "pools.top_share", "pools[0].main_share"

/* What happened, beyond success or failure. */
typedef struct {
  gboolean sweep;         /* the directory was a sweep (table.csv) */
  gboolean gnuplot_found; /* FALSE: figures omitted, the page says so */
  guint figures;          /* figures embedded as SVG */
  guint figures_failed;   /* figures gnuplot failed to draw (each named in a warning and on the page) */
} AnReportStats;

/* Builds the page for directory `dir`. Returns it (free with g_free), or NULL and sets `error`: domain
 * AN_REPORT_ERROR, code AN_REPORT_ERROR_INPUT, message "path: message" naming the file (a missing or
 * unreadable directory or file, a JSON syntax error as "path: line L, column C: message", a malformed
 * CSV as "path: line N: message", a missing column as "path: missing column 'name'"). Warnings (gnuplot
 * not found, a figure that failed) are appended to `warnings` (char *, g_free) when it is not NULL;
 * `stats` may be NULL. `opt` may be NULL. */
char *an_report_render(const char *dir, const AnReportOptions *opt, GPtrArray *warnings, AnReportStats *stats,
                       GError **error);

/* an_report_render(), then writes the page to `out_path` (NULL: DIR/report.html) atomically: a temp file
 * beside it, renamed into place; the parent directories are created. A write failure is code
 * AN_REPORT_ERROR_OUTPUT ("path: message"). */
gboolean an_report_write(const char *dir, const char *out_path, const AnReportOptions *opt,
                         GPtrArray *warnings, AnReportStats *stats, GError **error);

/* The gnuplot program as described above (free with g_free), or NULL when there is none. */
char *an_report_find_gnuplot(void);

/* Reads an observations.csv (the format of an_prop_write_observations_csv()) and returns the delays after
 * first observation in milliseconds as defined above: `names` receives the vantage names (char *, in
 * column order) and `delays_ms` one GArray of double per vantage (in row order), both owning their
 * contents (free with g_ptr_array_unref). Errors as for an_report_render(). */
gboolean an_report_read_delays(const char *path, GPtrArray **names, GPtrArray **delays_ms, GError **error);

#define AN_REPORT_ERROR (an_report_error_quark())
GQuark an_report_error_quark(void);

typedef enum {
  AN_REPORT_ERROR_INPUT,  /* the directory or one of its files is missing or malformed: exit 2 */
  AN_REPORT_ERROR_OUTPUT, /* the page cannot be written: exit 2 (as sim run's unwritable directory) */
} AnReportErrorCode;

G_END_DECLS
