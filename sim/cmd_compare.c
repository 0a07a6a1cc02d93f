/* cmd_compare.c: `sim compare A B`: two result sets side by side (analysis/compare.h) as a table, and JSON.
 */
#include <stdio.h>

#include "cli.h"
#include "compare.h"
#include "output.h"
#include "sim-version.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

/* The header record of the JSON output: what made it and from what. */
static json_t *compare_header(GPtrArray *cmdline) {
  json_t *h = json_object();
  json_object_set_new(h, "tool", json_string("sim"));
  json_object_set_new(h, "version", json_string(SIM_VERSION));
  json_object_set_new(h, "git_describe", json_string(SIM_GIT_DESCRIBE));
  json_object_set_new(h, "command", json_string("compare"));
  json_t *cmd = json_array();
  for (guint i = 0; i < cmdline->len; i++)
    json_array_append_new(cmd, json_string(g_ptr_array_index(cmdline, i)));
  json_object_set_new(h, "command_line", cmd);
  return h;
}

/* Writes `doc` to `path` as sim/core/outfile.h puts files: replaced whole, or written through when a device. */
static gboolean write_json_atomic(const char *path, const json_t *doc, GError **error) {
  g_autoptr(SimOutFile) f = sim_outfile_open(path, error);
  if (f && !sim_output_dump_json(sim_outfile_stream(f), doc)) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO, "cannot write %s", path);
    return FALSE;
  }
  return f && sim_outfile_commit(f, error);
}

typedef struct {
  char *json_path, *filter;
} CompareOpts;

static const SimOpt compare_opts[] = {
    {.name = "json", .type = SIM_OPT_FILENAME, .offset = offsetof(CompareOpts, json_path),
     .help = "Also write the comparison as JSON to FILE (atomically)", .arg = "FILE"},
    {.name = "filter", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, filter),
     .help = "Only keys that start with PREFIX (e.g. chain. or pools[)", .arg = "PREFIX"},
};

static void compare_opts_clear(CompareOpts *o) {
  sim_cli_options_clear(compare_opts, G_N_ELEMENTS(compare_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CompareOpts, compare_opts_clear)

int sim_cmd_compare(int argc, char **argv) {
  g_auto(CompareOpts) o = {0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("A B - compare two result sets");
  sim_cli_add_options(ctx, compare_opts, G_N_ELEMENTS(compare_opts), &o);
  g_option_context_set_description(
      ctx,
      "A and B are each a summary.json, a results directory of 'sim run' (summary.json, observations.csv),\n"
      "a directory whose subdirectories are such results (replicates), or a comma-separated list of these.\n"
      "Prints every numeric metric both sides share (nested keys flattened: chain.uncle_rate,\n"
      "pools[Ethermine].main_share; the header and wall-clock fields left out) with A, B, B-A and the\n"
      "relative difference; with replicates, the mean and its 95% Student-t interval per side and Welch's\n"
      "p-value. Metrics of one side only are listed apart. When both sides have observations.csv, the\n"
      "block delays after the first observation (first observer excluded) are compared per vantage with a\n"
      "two-sample Kolmogorov-Smirnov test.\n"
      "Exit codes: 0 ok (even when the sides differ), 2 bad usage or input (nothing written).");
  g_autoptr(GPtrArray) cmdline = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(cmdline, g_strdup("sim"));
  for (int i = 0; i < argc; i++)
    g_ptr_array_add(cmdline, g_strdup(argv[i]));
  if (!sim_cli_parse(ctx, "compare", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 3) return sim_cli_usage_error("compare", "expected two result sets A and B");
  if (argc > 3) return sim_cli_usage_error("compare", "unexpected argument '%s'", argv[3]);
  const char *json_path = o.json_path, *filter = o.filter;
  if (filter && filter[0] == '\0') return sim_cli_usage_error("compare", "--filter must not be empty");

  g_autoptr(GError) e = NULL;
  g_autoptr(AnCompareSide) a = an_compare_side_load(argv[1], &e);
  g_autoptr(AnCompareSide) b = a ? an_compare_side_load(argv[2], &e) : NULL;
  AnCompareOptions opt = {.filter = filter, .level = 0.95};
  g_autoptr(AnCompare) cmp = b ? an_compare_new(a, b, &opt, &e) : NULL;
  if (!cmp) {
    fprintf(stderr, "%s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  if (json_path) {
    g_autoptr(json_t) doc = json_object();
    json_object_set_new(doc, "header", compare_header(cmdline));
    an_compare_add_json(cmp, doc);
    if (!write_json_atomic(json_path, doc, &e)) {
      fprintf(stderr, "sim compare: %s\n", e->message);
      return SIM_EXIT_USAGE;
    }
  }
  an_compare_print_table(cmp, stdout);
  return fflush(stdout) == 0 ? SIM_EXIT_OK : SIM_EXIT_RUNTIME;
}
