/* cmd_calibrate.c: `sim calibrate LOGDIR... -o FILE`: fits the simulator's models to measured EMC logs and
 * writes them as a models file that scenarios include (sim/app/calibrate.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calibrate.h"
#include "calibrate_net.h"
#include "cli.h"
#include "output.h"
#include "params.h"
#include "replay.h"
#include "run.h"

/* Set by the signal handler while --fit-network runs, polled by its runs (as sim run's). */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

/* Writes `doc` to a new output file for `path` (sim/core/outfile.h), not yet committed. */
static gboolean stage_json(const char *path, const json_t *doc, SimOutFile **out, GError **error) {
  *out = sim_outfile_open(path, error);
  if (*out && !sim_output_dump_json(sim_outfile_stream(*out), doc)) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO, "cannot write %s", path);
    return FALSE;
  }
  return *out != NULL;
}

static json_t *counts_json(const SimReplayCounts *c) {
  return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "block_lines",
                   (json_int_t)c->block_lines, "announcement_lines", (json_int_t)c->announcement_lines,
                   "tx_lines", (json_int_t)c->tx_lines, "bad_lines", (json_int_t)c->bad_lines, "blocks",
                   (json_int_t)c->blocks, "first_number", (json_int_t)c->first_number, "detached_blocks",
                   (json_int_t)c->detached_blocks, "placeholder_blocks", (json_int_t)c->placeholder_blocks,
                   "announced_only", (json_int_t)c->announced_only, "unknown_uncles",
                   (json_int_t)c->unknown_uncles, "txs", (json_int_t)c->txs, "txs_only_in_blocks",
                   (json_int_t)c->txs_only_in_blocks);
}

typedef struct {
  char **vantages;
  char *out, *pools, *report, *network;
  gboolean strict, quiet;
  double level;
  char *fit_network, *seed_str, *scale_range;
  gint fit_heights, seeds, grid, refine;
} CalibrateOpts;

static const SimOpt calibrate_opts[] = {
    SIM_OPT_VANTAGE(CalibrateOpts, vantages),
    SIM_OPT_OUT(CalibrateOpts, out, "The models file to write (required)", "FILE"),
    SIM_OPT_POOLS_MAP(CalibrateOpts, pools),
    {.name = "report", .type = SIM_OPT_FILENAME, .offset = offsetof(CalibrateOpts, report),
     .help = "Also write the fit report alone as JSON", .arg = "FILE"},
    {.name = "network", .type = SIM_OPT_STRING, .offset = offsetof(CalibrateOpts, network),
     .help = "Which key takes the fitted work-distribution delay: geo (network.stratum), pool-delay "
             "(network.own_work) or none (default: report only)",
     .arg = "MODEL"},
    {.name = "level", .type = SIM_OPT_DOUBLE, .offset = offsetof(CalibrateOpts, level),
     .help = "Confidence level of every interval (default 0.95)", .arg = "L", .range = "(0, 1)", .min = 0,
     .min_open = TRUE, .max = 1, .max_open = TRUE},
    {.name = "fit-network", .type = SIM_OPT_FILENAME, .offset = offsetof(CalibrateOpts, fit_network),
     .help = "Also fit network.latency_scale of this geo scenario by simulation: its vantage points stand for the "
             "LOGDIRs (by name where the names agree, else in order)",
     .arg = "SCENARIO"},
    {.name = "fit-heights", .type = SIM_OPT_INT, .offset = offsetof(CalibrateOpts, fit_heights),
     .help = "With --fit-network: heights of each run (default 300)", .arg = "N", .range = "[10, 1000000]",
     .min = 10, .max = 1000000},
    {.name = "seeds", .type = SIM_OPT_INT, .offset = offsetof(CalibrateOpts, seeds),
     .help = "With --fit-network: runs per scale, seeds N, N+1, ... (default 3)", .arg = "K", .range = "[2, 1000]",
     .min = 2, .max = 1000},
    SIM_OPT_SEED(CalibrateOpts, seed_str, "With --fit-network: the first seed of the runs (default 1)"),
    {.name = "scale-range", .type = SIM_OPT_STRING, .offset = offsetof(CalibrateOpts, scale_range),
     .help = "With --fit-network: the scales searched, LO,HI with 0 < LO < HI <= 100 (default 0.25,4)",
     .arg = "LO,HI"},
    {.name = "grid", .type = SIM_OPT_INT, .offset = offsetof(CalibrateOpts, grid),
     .help = "With --fit-network: scales of the first, geometric grid (default 7)", .arg = "N", .range = "[3, 100]",
     .min = 3, .max = 100},
    {.name = "refine", .type = SIM_OPT_INT, .offset = offsetof(CalibrateOpts, refine),
     .help = "With --fit-network: halvings of the grid's bracket of the measured value (default 3)", .arg = "N",
     .range = "[0, 20]", .min = 0, .max = 20},
    SIM_OPT_STRICT(CalibrateOpts, strict),
    SIM_OPT_QUIET(CalibrateOpts, quiet, "No table (warnings such as bad log lines still go to stderr)"),
};

static void calibrate_opts_clear(CalibrateOpts *o) {
  sim_cli_options_clear(calibrate_opts, G_N_ELEMENTS(calibrate_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CalibrateOpts, calibrate_opts_clear)

int sim_cmd_calibrate(int argc, char **argv) {
  g_auto(CalibrateOpts) o = {.level = 0.95, .fit_heights = 300, .seeds = 3, .grid = 7, .refine = 3};
  /* The header records the command line as given (parsing removes the options). */
  g_auto(GStrv) argv_all = g_strdupv(argv);
  int argc_all = argc;
  g_autofree char *command_line = sim_cli_command_line(argc, argv);
  g_autoptr(GOptionContext) ctx = g_option_context_new("[LOGDIR...] -o FILE - fit models to measured logs");
  sim_cli_add_options(ctx, calibrate_opts, G_N_ELEMENTS(calibrate_opts), &o);
  g_option_context_set_description(
      ctx,
      "Reads the EMC logs as 'sim replay' does (one LOGDIR per vantage point, named by its base name or\n"
      "--vantage NAME=DIR) and fits by maximum likelihood: the block interval (exponential, lognormal,\n"
      "gamma), pool shares and empty-block shares, the transaction rate, types, gas limits and gas price\n"
      "classes, the delays between vantage points of blocks and of transactions (lognormal, gamma,\n"
      "empirical; best by AIC), the empty-template window and the mean work-distribution delay (from\n"
      "one-miner forks; written where --network says). Writes a\n"
      "models file, a partial scenario that a scenario includes with \"include\": [\"FILE\"] (its own keys\n"
      "win), holding every fit under \"calibration\", and prints the fits as a table.\n"
      "\n"
      "--fit-network SCENARIO also fits the link latencies, which the logs do not identify by themselves:\n"
      "it runs the geo scenario (--fit-heights, --seeds per scale) at a geometric grid of\n"
      "network.latency_scale values (--scale-range, --grid), halves the bracket of the measured value\n"
      "(--refine), reads each run's EMC logs back as the measured ones are read, and matches the mean of\n"
      "the vantage points' median block delays after the first observation. The interval (--level) adds\n"
      "the measured sample's bootstrap error, the network layout's and the seeds' noise; the goodness of\n"
      "fit is a two-sample KS test per vantage point at the fitted scale (transactions too where both\n"
      "sides have them). It writes network.latency_scale with a comment line and the fit under\n"
      "calibration.network_fit. A scenario without a geo network or vantage points, another count of them\n"
      "than of LOGDIRs, logs of one vantage point and a measured value outside the simulated range (a scale\n"
      "bound hit) exit 2.");
  if (!sim_cli_parse(ctx, "calibrate", &argc, &argv)) return SIM_EXIT_USAGE;
  g_autoptr(GPtrArray) dirs = g_ptr_array_new();
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  if (sim_cli_vantage_dirs("calibrate", argc, argv, o.vantages, dirs, names) != SIM_EXIT_OK) return SIM_EXIT_USAGE;
  if (!o.out) return sim_cli_usage_error("calibrate", "missing -o FILE (the models file to write)");
  if (!sim_cli_check_ranges("calibrate", calibrate_opts, G_N_ELEMENTS(calibrate_opts), &o)) return SIM_EXIT_USAGE;
  const char *network = o.network, *out = o.out, *pools = o.pools, *report = o.report;
  gboolean strict = o.strict, quiet = o.quiet;
  double level = o.level;
  SimCalibNetwork net = SIM_CALIB_NET_NONE;
  if (network && strcmp(network, "geo") == 0)
    net = SIM_CALIB_NET_GEO;
  else if (network && strcmp(network, "pool-delay") == 0)
    net = SIM_CALIB_NET_POOL_DELAY;
  else if (network && strcmp(network, "none") != 0)
    return sim_cli_usage_error("calibrate", "--network must be geo, pool-delay or none (got '%s')", network);

  if (!o.fit_network && (o.seed_str || o.scale_range || o.fit_heights != 300 || o.seeds != 3 || o.grid != 7 ||
                         o.refine != 3))
    return sim_cli_usage_error("calibrate",
                               "--fit-heights, --seeds, --seed, --scale-range, --grid and --refine need --fit-network");
  gint64 first_seed = 1;
  if (!sim_cli_seed("calibrate", o.seed_str, &first_seed)) return SIM_EXIT_USAGE;
  double scale_lo = 0.25, scale_hi = 4;
  if (o.scale_range) {
    char *end = NULL;
    scale_lo = g_ascii_strtod(o.scale_range, &end);
    gboolean good = end != o.scale_range && *end == ',';
    if (good) {
      const char *b = end + 1;
      scale_hi = g_ascii_strtod(b, &end);
      good = end != b && *end == '\0';
    }
    if (!good || !(scale_lo > 0) || !(scale_hi > scale_lo) || !(scale_hi <= 100))
      return sim_cli_usage_error("calibrate", "--scale-range must be LO,HI with 0 < LO < HI <= 100 (got '%s')",
                                 o.scale_range);
  }

  SimReplayOptions opt = {.dirs = (const char *const *)dirs->pdata,
                          .names = (const char *const *)names->pdata,
                          .n_vantages = dirs->len,
                          .pools_csv = pools,
                          .strict = strict,
                          .block_reward_eth = 2.0};
  g_autoptr(GError) e = NULL;
  g_autoptr(SimReplayData) data = sim_replay_load(&opt, &e);
  if (!data) {
    fprintf(stderr, "sim calibrate: %s\n", e->message);
    return e->code == SIM_REPLAY_ERROR_INPUT ? SIM_EXIT_USAGE : SIM_EXIT_RUNTIME;
  }
  g_autoptr(SimCalib) calib = sim_calib_from_replay(data, level, &e);
  if (!calib) {
    fprintf(stderr, "sim calibrate: %s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  calib->network = net;
  g_autoptr(SimNetFit) netfit = NULL;
  if (o.fit_network) {
    SimNetFitOptions no = {.scenario = o.fit_network,
                           .heights = (guint)o.fit_heights,
                           .seeds = (guint)o.seeds,
                           .seed = (uint64_t)first_seed,
                           .scale_lo = scale_lo,
                           .scale_hi = scale_hi,
                           .grid = (guint)o.grid,
                           .refine = (guint)o.refine,
                           .level = level,
                           .progress = !quiet,
                           .cancel = (volatile const int *)&interrupted};
    /* An interrupt stops the runs, whose files (in a temporary directory) are removed: exit 130. */
    struct sigaction old[3];
    sim_cli_signals_catch(on_signal, old);
    netfit = sim_netfit_run(data, &no, &e);
    sim_cli_signals_restore(old);
    if (!netfit) {
      if (!quiet && isatty(STDERR_FILENO)) fputc('\n', stderr); /* after the progress line */
      fprintf(stderr, "sim calibrate: %s\n", e->message);
      if (g_error_matches(e, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED)) return SIM_EXIT_INTERRUPTED;
      return e->code == SIM_REPLAY_ERROR_INPUT ? SIM_EXIT_USAGE : SIM_EXIT_RUNTIME;
    }
  }

  json_t *header = sim_output_header(0, 1, argc_all, argv_all, NULL, NULL);
  json_t *doc = json_object();
  json_t *vs = json_array();
  const char *const *vn = sim_replay_data_vantage_names(data);
  for (guint v = 0; v < sim_replay_data_n_vantages(data); v++)
    json_array_append_new(
        vs, json_pack("{s:s, s:s}", "name", vn[v], "dir", sim_replay_data_vantage_dir(data, v)));
  json_object_set_new(doc, "vantage_points", vs);
  if (pools) json_object_set_new(doc, "pools_csv", json_string(pools));
  json_object_set_new(doc, "strict", json_boolean(strict));
  json_object_set_new(doc, "level", json_real(level));
  json_object_set_new(doc, "network", json_string(network ? network : "none"));
  json_object_set_new(doc, "logs", counts_json(sim_replay_data_counts(data)));
  if (netfit) json_object_set_new(doc, "fit_network", json_string(o.fit_network));
  json_object_set_new(header, "calibrate", doc);
  g_autoptr(json_t) models = sim_calib_models_json(calib, json_deep_copy(header));
  if (netfit) {
    /* network.latency_scale next to any work-distribution key, its comment line, the fit in the report. */
    json_t *nw = json_object_get(models, "network");
    if (!nw) {
      nw = json_object();
      json_object_set_new(models, "network", nw);
    }
    json_object_set_new(nw, "latency_scale", json_real(netfit->estimate));
    g_autofree char *line = sim_netfit_comment(netfit);
    json_array_append_new(json_object_get(models, "comment"), json_string(line));
    json_object_set_new(json_object_get(models, "calibration"), "network_fit", sim_netfit_json(netfit));
  }
  g_autoptr(json_t) rep = NULL;
  if (report) {
    rep = json_object();
    json_object_set_new(rep, "header", json_incref(header));
    json_t *body = sim_calib_report_json(calib);
    json_object_update(rep, body);
    json_decref(body);
    if (netfit) json_object_set_new(rep, "network_fit", sim_netfit_json(netfit));
  }
  json_decref(header);
  /* Both files are complete before either is renamed into place. */
  g_autoptr(SimOutFile) out_models = NULL;
  g_autoptr(SimOutFile) out_report = NULL;
  if (!stage_json(out, models, &out_models, &e) || (report && !stage_json(report, rep, &out_report, &e)) ||
      !sim_outfile_commit(out_models, &e) || (report && !sim_outfile_commit(out_report, &e))) {
    fprintf(stderr, "sim calibrate: %s\n", e->message);
    return SIM_EXIT_USAGE;
  }
  if (!quiet) {
    sim_cli_print_header("calibrate", command_line);
    sim_calib_print(calib, stdout);
    if (netfit) sim_netfit_print(netfit, stdout);
    printf("\nwrote %s%s%s\n", out, report ? " and " : "", report ? report : "");
  }
  return SIM_EXIT_OK;
}
