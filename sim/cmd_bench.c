/* cmd_bench.c: `sim bench phold` (the engine) and `sim bench scenarios` (BENCH.md's workloads A-D). Figures
 * go to stdout; nothing is asserted. */
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "geo.h"
#include "phold.h"
#include "run.h"
#include "scenario.h"

static int bench_phold(int argc, char **argv) {
  SimPholdParams p;
  sim_phold_params_default(&p);
  gint lps = (gint)p.lps;
  gint64 pending = (gint64)p.pending, events = (gint64)p.events, seed = (gint64)p.seed;
  double remote = p.remote, mean = p.mean_delay_s;
  gint reps = 1;
  GOptionEntry entries[] = {
      {"lps", 0, 0, G_OPTION_ARG_INT, &lps, "Logical processes (entities)", "N"},
      {"pending", 0, 0, G_OPTION_ARG_INT64, &pending, "Events in the system", "K"},
      {"remote", 0, 0, G_OPTION_ARG_DOUBLE, &remote, "Probability an event goes to another LP", "P"},
      {"mean-delay", 0, 0, G_OPTION_ARG_DOUBLE, &mean, "Mean of the exponential delay, seconds", "S"},
      {"events", 0, 0, G_OPTION_ARG_INT64, &events, "Events to process", "E"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "Master seed", "N"},
      {"repeat", 0, 0, G_OPTION_ARG_INT, &reps, "Repetitions (the median is printed last)", "R"},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the PHOLD benchmark on the event engine");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx, "Defaults: --lps 1000 --pending 1000 --remote 0.25 --mean-delay 1 "
                                         "--events 10000000.\nTargets on a 2-core machine: >= 8 M events/s at 1 k "
                                         "pending, >= 5 M at 16 k, >= 2.5 M at 250 k.");
  if (!sim_cli_parse(ctx, "bench phold", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error("bench phold", "unexpected argument '%s'", argv[1]);
  if (lps < 1 || pending < 1 || events < 1 || seed < 0 || reps < 1 || reps > 101)
    return sim_cli_usage_error("bench phold", "--lps, --pending, --events must be >= 1, --seed >= 0, "
                                              "--repeat in [1, 101]");
  p.lps = (guint)lps;
  p.pending = (guint64)pending;
  p.events = (guint64)events;
  p.seed = (guint64)seed;
  p.remote = remote;
  p.mean_delay_s = mean;
  g_autofree double *rates = g_new(double, reps);
  for (gint i = 0; i < reps; i++) {
    SimPholdResult r;
    g_autoptr(GError) e = NULL;
    if (!sim_phold_run(&p, &r, &e)) return sim_cli_usage_error("bench phold", "%s", e->message);
    rates[i] = r.events_per_s;
    printf("phold lps=%u pending=%" G_GUINT64_FORMAT " remote=%g events=%" G_GUINT64_FORMAT
           " wall_s=%.3f events_per_s=%.0f peak_pending=%" G_GUINT64_FORMAT " checksum=%016" G_GINT64_MODIFIER
           "x\n",
           p.lps, p.pending, p.remote, r.events, r.wall_s, r.events_per_s, r.peak_pending, r.checksum);
  }
  if (reps > 1) {
    for (gint i = 1; i < reps; i++)
      for (gint j = i; j > 0 && rates[j - 1] > rates[j]; j--) {
        double t = rates[j];
        rates[j] = rates[j - 1];
        rates[j - 1] = t;
      }
    printf("phold median events_per_s=%.0f over %d runs\n", rates[reps / 2], reps);
  }
  return SIM_EXIT_OK;
}

/* ---- scenarios: BENCH.md's workloads, each run through sim_run() as `sim run` does ---- */

/* The peer figures of BENCH.md (2-core AMD EPYC VM), printed beside ours; keyed by scenario name. */
static const struct {
  const char *name;
  const char *peers;
} bench_peers[] = {
    {"bench-a", "peers: SimBlock 23.5-25.7 s, 307 MB"},
    {"bench-b", "peers: SimBlock 28 s, 301 MB, 8.0% stale; CBlockSim 25 s, 33 MB, 4.6% stale (own topology); "
                "target >= 50x SimBlock (<= 0.56 s), < 64 MB"},
    {"bench-c", "peers: SimBlock 119 s wall (86 s CPU), 709 MB; CBlockSim 47 s, 558 MB (8223 nodes); "
                "target < 3 s, < 300 MB"},
    {"bench-d", "peers: RBlockSim 1 worker 105 s wall (52 s CPU), 606 MB; target >= 30x (<= 3.5 s)"},
};

/* What one run reports back from the child process. */
typedef struct {
  int ok;
  double wall_s;
  double events, deliveries, blocks, stale_share;
  char error[512];
} BenchRun;

/* Removes the files of a temp output directory, then the directory. */
static void remove_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (d) {
    const char *name;
    while ((name = g_dir_read_name(d))) {
      g_autofree char *path = g_build_filename(dir, name, NULL);
      g_remove(path);
    }
    g_dir_close(d);
  }
  g_rmdir(dir);
}

static void bench_one(const SimScenario *sc, const char *out_dir, BenchRun *r) {
  memset(r, 0, sizeof *r);
  char *argv[] = {(char *)"sim", (char *)"bench", (char *)"scenarios", sc->path, NULL};
  SimRunOptions opt = {.out_dir = out_dir, .progress = FALSE, .argc = 4, .argv = argv};
  json_t *summary = NULL;
  GError *e = NULL;
  gint64 t0 = g_get_monotonic_time();
  gboolean ok = sim_run(sc, &opt, &summary, &e);
  r->wall_s = (double)(g_get_monotonic_time() - t0) / 1e6;
  if (!ok) {
    g_strlcpy(r->error, e->message, sizeof r->error);
    g_error_free(e);
    return;
  }
  json_t *sim = json_object_get(summary, "sim"), *chain = json_object_get(summary, "chain");
  r->events = json_number_value(json_object_get(sim, "events"));
  r->deliveries = json_number_value(json_object_get(sim, "node_block_deliveries"));
  r->blocks = json_number_value(json_object_get(chain, "blocks_total"));
  r->stale_share = json_number_value(json_object_get(chain, "stale_share"));
  r->ok = 1;
  json_decref(summary);
}

/* One run in a child process, so that its CPU time and peak RSS are its own (wait4's rusage), not the
 * peak of every scenario run so far. */
static gboolean bench_fork(const SimScenario *sc, BenchRun *r, double *cpu_s, double *rss_mb) {
  g_autoptr(GError) e = NULL;
  g_autofree char *dir = g_dir_make_tmp("sim-bench-XXXXXX", &e);
  if (!dir) {
    g_strlcpy(r->error, e->message, sizeof r->error);
    return FALSE;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    g_strlcpy(r->error, g_strerror(errno), sizeof r->error);
    remove_tree(dir);
    return FALSE;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    g_strlcpy(r->error, g_strerror(errno), sizeof r->error);
    close(fds[0]);
    close(fds[1]);
    remove_tree(dir);
    return FALSE;
  }
  if (pid == 0) {
    close(fds[0]);
    BenchRun cr;
    bench_one(sc, dir, &cr);
    ssize_t n = write(fds[1], &cr, sizeof cr);
    _exit(n == (ssize_t)sizeof cr ? 0 : 1);
  }
  close(fds[1]);
  gsize got = 0;
  while (got < sizeof *r) {
    ssize_t n = read(fds[0], (char *)r + got, sizeof *r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (gsize)n;
  }
  close(fds[0]);
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  remove_tree(dir);
  if (got != sizeof *r) {
    memset(r, 0, sizeof *r);
    g_snprintf(r->error, sizeof r->error, "the benchmark process ended abnormally (status %d)", status);
    return FALSE;
  }
  *cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
  *rss_mb = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
  return r->ok != 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, gint n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The .json files of scenarios/bench, in name order. */
static gint cmp_path(gconstpointer a, gconstpointer b) {
  /* g_ptr_array_sort passes pointers to the elements. */
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static GPtrArray *default_bench_files(void) {
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  GDir *d = g_dir_open("scenarios/bench", 0, NULL);
  if (!d) return files;
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, ".json"))
      g_ptr_array_add(files, g_build_filename("scenarios/bench", name, NULL));
  g_dir_close(d);
  g_ptr_array_sort(files, cmp_path);
  return files;
}

static int bench_scenarios(int argc, char **argv) {
  gint reps = 1;
  GOptionEntry entries[] = {
      {"repeat", 0, 0, G_OPTION_ARG_INT, &reps, "Runs per scenario; the medians are printed", "R"},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("[FILE...] - BENCH.md's workloads, one line each");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx,
      "Default files: scenarios/bench/*.json in name order (workloads A-D of BENCH.md).\n"
      "Each run goes through sim run's code path (outputs written to a temp directory, then removed), in a\n"
      "child process of its own, so CPU time and peak RSS are that run's. wall_s covers the whole run\n"
      "(world setup, simulation, metrics, output files, teardown); events/s and deliveries/s (full blocks\n"
      "reaching nodes) are per wall second. With --repeat the medians are printed (peak RSS: the largest).\n"
      "The peers' figures from BENCH.md follow on the same line. Nothing is asserted.");
  if (!sim_cli_parse(ctx, "bench scenarios", &argc, &argv)) return SIM_EXIT_USAGE;
  if (reps < 1 || reps > 101) return sim_cli_usage_error("bench scenarios", "--repeat must be in [1, 101]");
  g_autoptr(GPtrArray) files = NULL;
  if (argc > 1) {
    files = g_ptr_array_new_with_free_func(g_free);
    for (int i = 1; i < argc; i++)
      g_ptr_array_add(files, g_strdup(argv[i]));
  } else {
    files = default_bench_files();
    if (files->len == 0)
      return sim_cli_usage_error("bench scenarios",
                                 "no scenarios/bench/*.json here (run from the source root or "
                                 "name the files)");
  }
  /* Load every file first: a bad one is reported before any time is spent. */
  g_autoptr(GPtrArray) scs = g_ptr_array_new_with_free_func((GDestroyNotify)sim_scenario_free);
  gboolean bad = FALSE;
  for (guint i = 0; i < files->len; i++) {
    const char *path = g_ptr_array_index(files, i);
    g_autoptr(SimDiag) diag = sim_diag_new(path);
    SimScenario *sc = sim_scenario_load_file(path, NULL, diag);
    if (!sc) {
      g_autofree char *msg = sim_diag_join(diag);
      fprintf(stderr, "%s\n", msg);
      bad = TRUE;
    }
    g_ptr_array_add(scs, sc);
  }
  if (bad) return SIM_EXIT_USAGE;
  int rc = SIM_EXIT_OK;
  for (guint i = 0; i < scs->len; i++) {
    const SimScenario *sc = g_ptr_array_index(scs, i);
    g_autofree double *wall = g_new(double, reps), *cpu = g_new(double, reps);
    g_autofree double *evs = g_new(double, reps), *dps = g_new(double, reps);
    double rss = 0;
    BenchRun r = {0};
    gboolean ok = TRUE;
    for (gint k = 0; k < reps && ok; k++) {
      double c = 0, m = 0;
      ok = bench_fork(sc, &r, &c, &m);
      wall[k] = r.wall_s;
      cpu[k] = c;
      evs[k] = r.wall_s > 0 ? r.events / r.wall_s : 0;
      dps[k] = r.wall_s > 0 ? r.deliveries / r.wall_s : 0;
      rss = MAX(rss, m);
    }
    if (!ok) {
      fprintf(stderr, "sim bench scenarios: %s: %s\n", sc->path, r.error);
      rc = SIM_EXIT_RUNTIME;
      continue;
    }
    gint64 nodes = 0;
    if (sc->pow.network.model == &pow_network_geo.info)
      nodes = ((const NetGeoParams *)sc->pow.network.params)->nodes;
    const char *peers = "";
    for (guint k = 0; k < G_N_ELEMENTS(bench_peers); k++)
      if (strcmp(bench_peers[k].name, sc->name) == 0) peers = bench_peers[k].peers;
    printf("%-8s nodes=%" G_GINT64_FORMAT
           " blocks=%.0f wall_s=%.3f cpu_s=%.3f peak_rss_mb=%.1f events_per_s=%.3g "
           "deliveries_per_s=%.3g stale_share=%.4f runs=%d%s%s\n",
           sc->name, nodes, r.blocks, median(wall, reps), median(cpu, reps), rss, median(evs, reps),
           median(dps, reps), r.stale_share, reps, *peers ? " | " : "", peers);
    fflush(stdout);
  }
  return rc;
}

int sim_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "phold") == 0) return bench_phold(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "scenarios") == 0) return bench_scenarios(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: sim bench phold [OPTIONS]\n       sim bench scenarios [--repeat R] [FILE...]\n\n"
           "phold: the event engine's PHOLD benchmark. scenarios: workloads A-D of BENCH.md\n"
           "(scenarios/bench/*.json) with the peers' figures. 'sim bench NAME --help' lists the options.\n");
    return SIM_EXIT_OK;
  }
  return sim_cli_usage_error(
      "bench", argc < 2 ? "missing benchmark name (phold, scenarios)" : "unknown benchmark '%s'",
      argc < 2 ? "" : argv[1]);
}
