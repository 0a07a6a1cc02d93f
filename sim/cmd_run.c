/* cmd_run.c: `sim run SCENARIO`: load, run, write results, print a short report. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "output.h"
#include "tracemine.h"
#include "engine.h"
#include "numa_hw.h"
#include "output.h"
#include "params.h"
#include "run.h"
#include "scenario.h"

/* Set by the signal handler, polled by the engine. The only process-wide mutable variable in sim: a
 * signal handler can reach nothing else. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
  (void)sig;
  interrupted = 1;
}

static double num(const json_t *root, const char *obj, const char *key) {
  return json_number_value(json_object_get(json_object_get(root, obj), key));
}

static void print_report(const json_t *s, const char *dir) {
  json_t *prop = json_object_get(s, "propagation");
  json_t *tx = json_object_get(s, "tx");
  g_autofree char *wrote = sim_outdir_describe(dir);
  printf("wrote %s\n", wrote);
  printf("heights %.0f  blocks %.0f  uncles/main %.4f  stale share %.4f  mean interval %.2f s  longest run %.0f\n",
         num(s, "chain", "heights"), num(s, "chain", "blocks_total"), num(s, "chain", "uncle_rate"),
         num(s, "chain", "stale_share"), num(s, "chain", "mean_interval_s"), num(s, "runs", "max"));
  json_t *d = json_object_get(prop, "vantage_delay_ms");
  if (d)
    printf("vantage delay after first observation: median %.1f ms, p90 %.1f ms, p99 %.1f ms\n",
           json_number_value(json_object_get(d, "median")), json_number_value(json_object_get(d, "p90")),
           json_number_value(json_object_get(d, "p99")));
  json_t *tr = json_object_get(s, "trace");
  if (tr) {
    /* What the logs gave and what was used: never a silent "1 of 1" when most blocks were dropped. */
    printf("trace-driven: %.0f of %.0f logged blocks mined (%.0f left out as inconsistent, %.0f bad lines "
           "skipped); "
           "%.0f stand-ins mined for ancestors not in the logs\n",
           num(s, "trace", "mined"), num(s, "trace", "logged_blocks"), num(s, "trace", "left_out"),
           num(s, "trace", "bad_lines"), num(s, "trace", "stand_ins_mined"));
    if (num(s, "trace", "compared") > 0)
      printf("trace-driven: %.0f blocks compared; first observer agrees on %.1f%% (trace_compare.csv)\n",
             num(s, "trace", "compared"), 100 * num(s, "trace", "same_first_observer_share"));
    else
      printf("trace-driven: no block compared: %s\n",
             num(s, "trace", "vantage_points_shared") > 0
                 ? "none was seen by every vantage point the logs share with the scenario"
                 : "no log directory is named like a vantage point of the scenario");
  }
  if (tx) {
    json_t *k12 = json_object_get(json_object_get(tx, "commit_s"), "k12");
    printf("transactions %.0f created, %.0f committed, %.0f never; empty blocks %.2f%%", num(s, "tx", "created"),
           num(s, "tx", "committed"), num(s, "tx", "never_committed"), 100 * num(s, "chain", "empty_share"));
    if (k12) printf("; commit time (12 conf.) median %.1f s", json_number_value(json_object_get(k12, "median")));
    printf("\n");
  }
  printf("%.0f events in %.2f s (%.2f M events/s)\n", num(s, "sim", "events"), num(s, "sim", "wall_s"),
         num(s, "sim", "events_per_s") / 1e6);
}

/* --numa-report's summary: how the engine placed what it placed (first-touch on one node, or interleave with
 * which weights), and the process's anonymous memory per node from numa_maps, of which the rest (the relay
 * kernel's edge arrays, the transaction world, the mempools: what the models malloc) is not placed by the
 * engine but first-touched by the thread that built it. */
static void numa_how(GString *out, SimEngine *engine) {
  guint n = sim_engine_numa_report(engine, NULL, 0);
  g_autofree SimNumaPlacement *pl = g_new0(SimNumaPlacement, MAX(n, 1));
  n = MIN(n, sim_engine_numa_report(engine, pl, n));
  guint nodes = n > 0 ? pl[0].n_nodes : 1;
  gsize local[SIM_NUMA_MAX_NODES_ENGINE] = {0}, placed = 0;
  g_autoptr(GString) spread = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    placed += pl[i].bytes;
    guint top = 0;
    for (guint k = 1; k < nodes; k++)
      if (pl[i].intended[k] > pl[i].intended[top]) top = k;
    if (pl[i].bytes == 0 || pl[i].intended[top] >= (double)pl[i].bytes) {
      local[top] += pl[i].bytes;
      continue;
    }
    g_string_append_printf(spread, "numa: how: %s, %" G_GSIZE_FORMAT " bytes: weighted interleave, weights",
                           pl[i].name, pl[i].bytes);
    for (guint k = 0; k < nodes; k++)
      g_string_append_printf(spread, " %.4f", pl[i].intended[k] / (double)pl[i].bytes);
    g_string_append(spread, "\n");
  }
  for (guint k = 0; k < nodes; k++)
    if (local[k])
      g_string_append_printf(out,
                             "numa: how: %" G_GSIZE_FORMAT " bytes all on node %u (a worker's own, or one node's "
                             "share: first-touch or moved there)\n",
                             local[k], k);
  g_string_append(out, spread->str);
  gsize anon[SIM_NUMA_MAX_NODES_ENGINE] = {0}, other = 0, total = 0;
  g_autoptr(GError) e = NULL;
  if (!sim_numa_self_anon_bytes(anon, nodes, &other, &e)) {
    g_string_append_printf(out, "numa: process memory per node: unavailable (%s)\n", e->message);
    return;
  }
  g_string_append(out, "numa: process anonymous memory per node (numa_maps):");
  for (guint k = 0; k < nodes; k++) {
    g_string_append_printf(out, " node%u %" G_GSIZE_FORMAT, k, anon[k]);
    total += anon[k];
  }
  total += other;
  g_string_append_printf(out, "; total %" G_GSIZE_FORMAT "\n", total);
  g_string_append_printf(out,
                         "numa: not placed by the engine: %" G_GSIZE_FORMAT " bytes (process total - placed): "
                         "the models' own arrays (relay kernel, transaction world, mempools), first-touched by "
                         "the thread that built them\n",
                         total > placed ? total - placed : 0);
}

/* What --stats and --numa-report print, formatted while the engine still exists. */
typedef struct {
  GString *text;
  gboolean stats, numa;
} EngineReport;

static void on_engine(void *user, SimEngine *engine, const char *note) {
  EngineReport *r = user;
  if (r->stats) {
    SimEngineWindowStats ws;
    SimEngineStats st;
    sim_engine_get_window_stats(engine, &ws);
    sim_engine_get_stats(engine, &st);
    g_autofree SimWorkerStats *workers = g_new0(SimWorkerStats, MAX(ws.workers, 1));
    for (guint w = 0; w < ws.workers; w++)
      sim_engine_get_worker_stats(engine, w, &workers[w]);
    sim_output_engine_stats(r->text, &ws, workers, st.events, note);
  }
  if (r->numa) {
    sim_output_numa_report(r->text, engine);
    numa_how(r->text, engine);
  }
}

typedef struct {
  char *out_dir, *seed_str, *pools_csv, *trace_str;
  char **sets, **mining_from;
  gboolean quiet, emc_logs, strict, stats, numa_report, relay_pipeline, relay_split;
  gint threads;
} RunOpts;

static const SimOpt run_opts[] = {
    SIM_OPT_OUT(RunOpts, out_dir, "Write results into DIR (default results/<name>)", "DIR"),
    SIM_OPT_SEED(RunOpts, seed_str, "Master seed (overrides the scenario's)"),
    SIM_OPT_SET(RunOpts, sets, "Override a scenario value, e.g. stop.heights=1000", "PATH=VALUE"),
    SIM_OPT_QUIET(RunOpts, quiet, "No progress line and no report"),
    {.name = "emc-logs", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, emc_logs),
     .help = "Also write each vantage point's EMC logs (as the study's Geth did) into DIR/emc/"},
    {.name = "mining-from", .type = SIM_OPT_FILENAMES, .offset = offsetof(RunOpts, mining_from),
     .help = "Trace-driven: who mined which block when, from a vantage point's EMC logs (repeat for more; "
             "NAME=DIR names it as the scenario's vantage point)",
     .arg = "[NAME=]LOGDIR"},
    {.name = "pools", .type = SIM_OPT_FILENAME, .offset = offsetof(RunOpts, pools_csv),
     .help = "With --mining-from: coinbase -> pool map (CSV)", .arg = "CSV"},
    {.name = "strict", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, strict),
     .help = "With --mining-from: the first bad log line is fatal"},
    SIM_OPT_THREADS(RunOpts, threads,
                    "Threads: each block's relay runs on N (at most 64), the partitioned engine on up to N "
                    "workers (default: the CPUs this process may use, each block's relay on all of them or on "
                    "one, whichever is measured faster; 0: the sequential engine and a one-thread relay). At "
                    "exactly 2, successive blocks' relays run at once instead, one thread each, where the "
                    "scenario allows it (--relay-pipeline). Outputs do not depend on it"),
    {.name = "relay-pipeline", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, relay_pipeline),
     .help = "Relay successive blocks at once, each block's relay on one of the --threads (at least 2; the "
             "engine's thread among them, which runs relays while it waits): the next block's relay starts once "
             "the chain can tell it is next. The default at exactly 2 threads where the scenario allows it. "
             "Outputs do not depend on it (docs/threads.md: when it is faster)"},
    {.name = "relay-split", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, relay_split),
     .help = "Split each block's relay over the --threads (windows inside the block), also at 2 threads (the "
             "default at 3 or more). Outputs do not depend on it"},
    {.name = "stats", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, stats),
     .help = "Print the engine's partitions, windows, events per window and barrier wait per worker, and the "
             "relay's "
             "threads, groups, windows per block, steps per window, work balance and barrier wait per thread"},
    {.name = "numa-report", .type = SIM_OPT_FLAG, .offset = offsetof(RunOpts, numa_report),
     .help = "Print the bytes placed per NUMA node: intended, and reported by the kernel"},
    {.name = "trace-blocks", .type = SIM_OPT_STRING, .offset = offsetof(RunOpts, trace_str),
     .help = "Also write every node's arrival time of the blocks at these heights (at most 64; a geo network), for "
             "the journey in sim report",
     .arg = "H1,H2,..."},
};

static void run_opts_clear(RunOpts *o) {
  sim_cli_options_clear(run_opts, G_N_ELEMENTS(run_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RunOpts, run_opts_clear)

int sim_cmd_run(int argc, char **argv) {
  g_auto(RunOpts) o = {.threads = G_MININT}; /* threads not given: sim_run_default_threads(), adaptive */
  gint64 seed = -1;
  gboolean have_seed = FALSE;
  g_autoptr(GOptionContext) ctx = g_option_context_new("SCENARIO - run a scenario");
  g_option_context_set_strict_posix(ctx, FALSE);
  sim_cli_add_options(ctx, run_opts, G_N_ELEMENTS(run_opts), &o);
  /* One file a line, "NAME  CONDITION: what", CONDITION "always" or "with" and the options or scenario
   * features it needs, joined by "and"; <V> stands for each vantage point. tests/cli/test-docs.sh compares
   * this list with the files real runs write, and with sim.1 and docs/outputs.md. */
  g_option_context_set_description(
      ctx, "Files written into DIR, all or nothing (man sim, OUTPUTS; another non-empty DIR is refused):\n"
           "  .sim-result                    always: the marker of a complete result of sim\n"
           "  summary.json                   always: the header record and every metric\n"
           "  blocks.csv                     always: one row per block\n"
           "  pools.csv                      always: one row per pool\n"
           "  runs.csv                       always: runs of blocks by one miner, with the i.i.d. expectation\n"
           "  observations.csv               with vantage points: one row per block a vantage point saw\n"
           "  tx_commit.csv                  with transactions: commit time per confirmations k and vantage\n"
           "  tx_commit_samples.csv          with transactions: a deterministic sample of the commit times\n"
           "  censorship.csv                 with censoring pools: censored and uncensored waits per k\n"
           "  trace_compare.csv              with --mining-from: measured and simulated receptions per block\n"
           "  trace_nodes.csv                with --trace-blocks: every node's role, name, pool, region and city\n"
           "  trace_blocks.csv               with --trace-blocks: every node's arrival of each traced block\n"
           "  emc/pools.csv                  with --emc-logs: every miner's coinbase address and pool\n"
           "  emc/blocks-propagation-times-v3.log  with --emc-logs and four vantage points: the study's join table\n"
           "  emc/<V>/blocks.log             with --emc-logs: vantage point V's block messages\n"
           "  emc/<V>/blocksAnnouncements.log  with --emc-logs: V's block announcements\n"
           "  emc/<V>/heads.log              with --emc-logs: V's new chain heads\n"
           "  emc/<V>/txs.log                with --emc-logs and transactions: V's transactions\n"
           "  emc/<V>/txgasused.log          with --emc-logs and transactions: the gas of each block's transactions\n"
           "Vantage points: a network model that has them (geo); four vantage points: the layout of the study,\n"
           "whose scripts join exactly four; transactions: the scenario's transactions section; censoring\n"
           "pools: transactions.censor. The emc/ files use the study's 2019 names and formats (man sim).\n"
           "Exit codes: 0 ok, 1 run-time failure, 2 bad usage or input, 130 interrupted (nothing written).");
  /* GOption removes the options from argv; the output header records the whole command line. */
  g_autoptr(GPtrArray) cmdline = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(cmdline, g_strdup("sim"));
  for (int i = 0; i < argc; i++) g_ptr_array_add(cmdline, g_strdup(argv[i]));
  if (!sim_cli_parse(ctx, "run", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 2) return sim_cli_usage_error("run", argc < 2 ? "missing SCENARIO" : "expected one SCENARIO");
  gboolean threads_adaptive = o.threads == G_MININT;
  if (threads_adaptive) o.threads = (gint)sim_run_default_threads();
  if (!sim_cli_check_ranges("run", run_opts, G_N_ELEMENTS(run_opts), &o)) return SIM_EXIT_USAGE;
  const gint threads = o.threads;
  const char *out_dir = o.out_dir, *pools_csv = o.pools_csv, *seed_str = o.seed_str, *trace_str = o.trace_str;
  char **sets = o.sets, **mining_from = o.mining_from;
  const gboolean quiet = o.quiet, emc_logs = o.emc_logs, strict = o.strict, stats = o.stats,
                 numa_report = o.numa_report;
  if (o.relay_pipeline && o.relay_split)
    return sim_cli_usage_error("run", "--relay-pipeline and --relay-split: choose one");
  if (pools_csv && !mining_from) return sim_cli_usage_error("run", "--pools needs --mining-from");
  if (strict && !mining_from) return sim_cli_usage_error("run", "--strict needs --mining-from");
  if (!sim_cli_seed("run", seed_str, &seed)) return SIM_EXIT_USAGE;
  have_seed = seed_str != NULL;

  g_autoptr(GArray) trace_heights = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  if (trace_str) {
    g_auto(GStrv) parts = g_strsplit(trace_str, ",", -1);
    for (char **h = parts; *h; h++) {
      guint64 v = 0;
      if (!g_ascii_string_to_unsigned(*h, 10, 1, G_MAXUINT32, &v, NULL))
        return sim_cli_usage_error("run", "--trace-blocks: '%s' is not a height (an integer >= 1)", *h);
      uint32_t h32 = (uint32_t)v;
      g_array_append_val(trace_heights, h32);
    }
    if (trace_heights->len > POW_TRACE_MAX_HEIGHTS)
      return sim_cli_usage_error("run", "--trace-blocks: at most %d heights (got %u)", POW_TRACE_MAX_HEIGHTS,
                                 trace_heights->len);
  }

  g_autoptr(GPtrArray) all_sets = g_ptr_array_new_with_free_func(g_free);
  for (char **s = sets; s && *s; s++) g_ptr_array_add(all_sets, g_strdup(*s));
  if (have_seed) g_ptr_array_add(all_sets, g_strdup_printf("seed=%" G_GINT64_FORMAT, seed));
  g_ptr_array_add(all_sets, NULL);

  g_autoptr(SimDiag) diag = sim_diag_new(argv[1]);
  g_autoptr(SimScenario) sc = sim_scenario_load_file(argv[1], (const char *const *)all_sets->pdata, diag);
  if (!sc) {
    g_autofree char *msgs = sim_diag_join(diag);
    fprintf(stderr, "%s\n", msgs);
    return SIM_EXIT_USAGE;
  }

  g_autoptr(SimTrace) trace = NULL;
  if (mining_from) {
    g_autoptr(GPtrArray) dirs = g_ptr_array_new(), names = g_ptr_array_new_with_free_func(g_free);
    for (char **m = mining_from; *m; m++) {
      char *eq = strchr(*m, '=');
      g_ptr_array_add(names, eq && eq != *m ? g_strndup(*m, (gsize)(eq - *m)) : NULL);
      g_ptr_array_add(dirs, eq && eq != *m ? eq + 1 : *m);
    }
    SimTraceOptions to = {.dirs = (const char *const *)dirs->pdata, .names = (const char *const *)names->pdata,
                          .n = dirs->len, .pools_csv = pools_csv, .strict = strict};
    g_autoptr(GError) te = NULL;
    trace = sim_trace_load(&to, sc, &te);
    if (!trace) {
      fprintf(stderr, "sim run: --mining-from: %s\n", te->message);
      return SIM_EXIT_USAGE;
    }
  }

  struct sigaction old[3];
  sim_cli_signals_catch(on_signal, old);

  g_autoptr(GString) engine_text = g_string_new(NULL);
  EngineReport report = {.text = engine_text, .stats = stats, .numa = numa_report};
  SimRunOptions opt = {.out_dir = out_dir,
                       .progress = !quiet,
                       .cancel = (volatile const int *)&interrupted,
                       .argc = (int)cmdline->len,
                       .argv = (char **)cmdline->pdata,
                       .emc_logs = emc_logs,
                       .trace = trace,
                       .threads = (guint)threads,
                       .threads_adaptive = threads_adaptive,
                       .relay_mode = o.relay_pipeline ? SIM_RELAY_PIPELINE
                                     : o.relay_split  ? SIM_RELAY_SPLIT
                                                      : SIM_RELAY_AUTO,
                       .on_engine = (stats || numa_report) ? on_engine : NULL,
                       .on_engine_user = &report,
                       .trace_heights = (const uint32_t *)(gpointer)trace_heights->data,
                       .n_trace_heights = trace_heights->len};
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) summary = NULL;
  if (!sim_run(sc, &opt, &summary, &e)) {
    fprintf(stderr, "sim run: %s\n", e->message);
    if (e->code == SIM_RUN_ERROR_INPUT) return SIM_EXIT_USAGE;
    if (e->code == SIM_RUN_ERROR_CANCELLED) return SIM_EXIT_INTERRUPTED;
    return SIM_EXIT_RUNTIME;
  }
  if (!quiet) {
    g_autofree char *dflt = g_build_filename("results", sc->name, NULL);
    print_report(summary, out_dir ? out_dir : dflt);
  }
  fputs(engine_text->str, stdout);
  return SIM_EXIT_OK;
}
