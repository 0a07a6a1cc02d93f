/* cmd_report.c: `sim report DIR`: one self-contained HTML page (tables, gnuplot figures) from results. */
#include <stdio.h>

#include "cli.h"
#include "report.h"
#include "sim-version.h"

typedef struct {
  char *out, *block_str, *measured;
  char **metrics;
  gboolean quiet;
} ReportOpts;

static const SimOpt report_opts[] = {
    SIM_OPT_OUT(ReportOpts, out, "Write the page to FILE (default DIR/report.html)", "FILE"),
    {.name = "metric", .type = SIM_OPT_STRINGS, .offset = offsetof(ReportOpts, metrics),
     .help = "Sweep: draw this metric of table.csv (repeatable; default: the key metrics)", .arg = "NAME"},
    {.name = "block", .type = SIM_OPT_STRING, .offset = offsetof(ReportOpts, block_str),
     .help = "Run: show the journey of the block at this height (traced with sim run --trace-blocks; "
             "default: the median-delay block of those traced); replay: of this height",
     .arg = "HEIGHT"},
    {.name = "measured", .type = SIM_OPT_FILENAME, .offset = offsetof(ReportOpts, measured),
     .help = "Show beside the journey what the vantage points of this replay directory (sim replay) saw of "
             "its median-delay block",
     .arg = "DIR"},
    SIM_OPT_QUIET(ReportOpts, quiet, "Print nothing on success but warnings"),
};

static void report_opts_clear(ReportOpts *o) {
  sim_cli_options_clear(report_opts, G_N_ELEMENTS(report_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ReportOpts, report_opts_clear)

int sim_cmd_report(int argc, char **argv) {
  g_auto(ReportOpts) o = {0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("DIR - make an HTML report of a results directory");
  g_option_context_set_strict_posix(ctx, FALSE);
  sim_cli_add_options(ctx, report_opts, G_N_ELEMENTS(report_opts), &o);
  g_option_context_set_description(
      ctx,
      "DIR is an output directory of 'sim run' (summary.json, pools.csv, runs.csv, and observations.csv\n"
      "and tx_commit.csv when present) or of a sweep (table.csv). The page has the key metrics and\n"
      "tables, and figures drawn by gnuplot as inline SVG; it needs no network. A run of a geo network\n"
      "also gets a world map of its nodes, gateways and vantage points, and, with trace_blocks.csv\n"
      "(sim run --trace-blocks), a block's journey: an animation with a slider (a small inline script).\n"
      "A replay gets its vantage points' view of a block. gnuplot is $SIM_GNUPLOT\n"
      "(a path or a name on PATH) or else 'gnuplot' on PATH; without it the page says\n"
      "\"gnuplot not found: figures omitted\" and the command warns on stderr.\n"
      "The page is written atomically (temp file, then rename).\n"
      "Exit codes: 0 ok (also without gnuplot), 1 a figure failed (the page is written without it),\n"
      "2 bad usage, bad or missing input, or an unwritable FILE.");
  if (!sim_cli_parse(ctx, "report", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 2) return sim_cli_usage_error("report", argc < 2 ? "missing DIR" : "expected one DIR");

  const char *out = o.out, *block_str = o.block_str;
  guint64 block = 0;
  if (block_str && !g_ascii_string_to_unsigned(block_str, 10, 1, G_MAXUINT32, &block, NULL))
    return sim_cli_usage_error("report", "--block: '%s' is not a height (an integer >= 1)", block_str);

  g_autofree char *generator = g_strdup_printf("sim %s (%s)", SIM_VERSION, SIM_GIT_DESCRIBE);
  AnReportOptions opt = {.generator = generator,
                         .metrics = (const char *const *)o.metrics,
                         .block_height = (guint32)block,
                         .measured_dir = o.measured};
  g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
  AnReportStats stats = {0};
  g_autoptr(GError) e = NULL;
  gboolean ok = an_report_write(argv[1], out, &opt, warnings, &stats, &e);
  for (guint i = 0; i < warnings->len; i++)
    fprintf(stderr, "sim report: warning: %s\n", (const char *)g_ptr_array_index(warnings, i));
  if (!ok) {
    fprintf(stderr, "%s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  if (!o.quiet) {
    g_autofree char *dflt = g_build_filename(argv[1], "report.html", NULL);
    printf("wrote %s (%s, %u figure%s%s)\n", out ? out : dflt, stats.sweep ? "sweep" : "run", stats.figures,
           stats.figures == 1 ? "" : "s", stats.gnuplot_found ? "" : "; gnuplot not found");
  }
  if (stats.figures_failed) {
    fprintf(stderr, "sim report: %u figure%s failed\n", stats.figures_failed,
            stats.figures_failed == 1 ? "" : "s");
    return SIM_EXIT_RUNTIME;
  }
  return SIM_EXIT_OK;
}
