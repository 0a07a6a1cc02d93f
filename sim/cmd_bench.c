/* cmd_bench.c: `sim bench phold` (the engine) and `sim bench scenarios` (BENCH.md's workloads A-D). Figures
 * go to stdout; nothing is asserted. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "phold.h"
#include "run.h"
#include "scenario.h"

/* The options of `bench phold` and `bench scaling`: PHOLD's (phold_opts), and each one's own. */
typedef struct {
  gint lps;
  gint64 pending, events, seed;
  double remote, mean, lookahead;
  gint reps;
  char *partition, *seed_str;
  gint threads, threads_max; /* phold; scaling */
  char *scenario;            /* scaling */
  char **sets;               /* scaling */
} PholdOpts;

static const SimOpt phold_opts[] = {
    {.name = "lps", .type = SIM_OPT_INT, .offset = offsetof(PholdOpts, lps),
     .help = "Logical processes (entities)", .arg = "N", .range = "[1, 2147483647]", .min = 1, .max = G_MAXINT},
    {.name = "pending", .type = SIM_OPT_INT64, .offset = offsetof(PholdOpts, pending),
     .help = "Events in the system", .arg = "K", .range = "[1, 9223372036854775807]", .min = 1, .max = (double)G_MAXINT64},
    {.name = "remote", .type = SIM_OPT_DOUBLE, .offset = offsetof(PholdOpts, remote),
     .help = "Probability an event goes to another LP", .arg = "P"},
    {.name = "mean-delay", .type = SIM_OPT_DOUBLE, .offset = offsetof(PholdOpts, mean),
     .help = "Mean of the exponential delay, seconds", .arg = "S"},
    {.name = "lookahead", .type = SIM_OPT_DOUBLE, .offset = offsetof(PholdOpts, lookahead),
     .help = "Least delay of every event, seconds (the engine's lookahead; 0: classic PHOLD)", .arg = "S"},
    {.name = "partition", .type = SIM_OPT_STRING, .offset = offsetof(PholdOpts, partition),
     .help = "How LPs are dealt to workers: blocks (default) or round-robin", .arg = "HOW"},
    {.name = "events", .type = SIM_OPT_INT64, .offset = offsetof(PholdOpts, events),
     .help = "Events to process", .arg = "E", .range = "[1, 9223372036854775807]", .min = 1, .max = (double)G_MAXINT64},
    SIM_OPT_SEED(PholdOpts, seed_str, "Master seed"),
    {.name = "repeat", .type = SIM_OPT_INT, .offset = offsetof(PholdOpts, reps),
     .help = "Repetitions (the median is printed last)", .arg = "R", .range = "[1, 101]", .min = 1,
     .max = 101},
};

static const SimOpt phold_only_opts[] = {
    SIM_OPT_THREADS(PholdOpts, threads,
                    "Workers of the partitioned engine (0: the sequential engine, the default; >= 1 needs "
                    "--lookahead)"),
};

static const SimOpt scaling_opts[] = {
    {.name = "threads-max", .type = SIM_OPT_INT, .offset = offsetof(PholdOpts, threads_max),
     .help = "Largest thread count (default: the CPUs, at least 2)", .arg = "N",
     .range = "[1, " G_STRINGIFY(SIM_ENGINE_MAX_THREADS) "]", .min = 1, .max = SIM_ENGINE_MAX_THREADS},
    {.name = "scenario", .type = SIM_OPT_FILENAME, .offset = offsetof(PholdOpts, scenario),
     .help = "Run this scenario (as sim run does) instead of PHOLD", .arg = "FILE"},
    SIM_OPT_SET(PholdOpts, sets, "With --scenario: override a value, e.g. stop.heights=20000", "PATH=VALUE"),
};

static void phold_opts_clear(PholdOpts *o) {
  sim_cli_options_clear(phold_opts, G_N_ELEMENTS(phold_opts), o);
  sim_cli_options_clear(scaling_opts, G_N_ELEMENTS(scaling_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PholdOpts, phold_opts_clear)

static void phold_opts_default(PholdOpts *o) {
  SimPholdParams p;
  sim_phold_params_default(&p);
  *o = (PholdOpts){.lps = (gint)p.lps,
                   .pending = (gint64)p.pending,
                   .events = (gint64)p.events,
                   .seed = (gint64)p.seed,
                   .remote = p.remote,
                   .mean = p.mean_delay_s,
                   .lookahead = p.lookahead_s,
                   .reps = 1};
}

/* PHOLD's options, then the subcommand's own (`extra`, n_extra rows). */
static void phold_opts_add(GOptionContext *ctx, PholdOpts *o, const SimOpt *extra, gsize n_extra) {
  sim_cli_add_options(ctx, phold_opts, G_N_ELEMENTS(phold_opts), o);
  sim_cli_add_options(ctx, extra, n_extra, o);
}

/* Checks the options and fills `p` (all but threads); prints the usage error and returns FALSE if bad. */
static gboolean phold_opts_check(const char *cmd, PholdOpts *o, SimPholdParams *p) {
  if (!sim_cli_seed(cmd, o->seed_str, &o->seed) ||
      !sim_cli_check_ranges(cmd, phold_opts, G_N_ELEMENTS(phold_opts), o))
    return FALSE;
  sim_phold_params_default(p);
  p->partitioning = SIM_PARTITION_BLOCKS;
  if (o->partition && strcmp(o->partition, "round-robin") == 0) {
    p->partitioning = SIM_PARTITION_ROUND_ROBIN;
  } else if (o->partition && strcmp(o->partition, "blocks") != 0) {
    sim_cli_usage_error(cmd, "--partition must be blocks or round-robin (got '%s')", o->partition);
    return FALSE;
  }
  p->lps = (guint)o->lps;
  p->pending = (guint64)o->pending;
  p->events = (guint64)o->events;
  p->seed = (guint64)o->seed;
  p->remote = o->remote;
  p->mean_delay_s = o->mean;
  p->lookahead_s = o->lookahead;
  return TRUE;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, gint n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench_phold(int argc, char **argv) {
  g_auto(PholdOpts) o = {0};
  phold_opts_default(&o);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the PHOLD benchmark on the event engine");
  phold_opts_add(ctx, &o, phold_only_opts, G_N_ELEMENTS(phold_only_opts));
  g_option_context_set_description(ctx, "Defaults: --lps 1000 --pending 1000 --remote 0.25 --mean-delay 1 "
                                        "--lookahead 0 --events 10000000 --threads 0.\n"
                                        "Targets on a 2-core machine: >= 8 M events/s at 1 k "
                                        "pending, >= 5 M at 16 k, >= 2.5 M at 250 k.\n"
                                        "With --threads the checksum is the same at every thread count and "
                                        "partitioning; the budget is met at the end of a window.");
  if (!sim_cli_parse(ctx, "bench phold", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error("bench phold", "unexpected argument '%s'", argv[1]);
  SimPholdParams p;
  if (!phold_opts_check("bench phold", &o, &p)) return SIM_EXIT_USAGE;
  if (!sim_cli_check_ranges("bench phold", phold_only_opts, G_N_ELEMENTS(phold_only_opts), &o))
    return SIM_EXIT_USAGE;
  if (o.threads > 0 && !(o.lookahead > 0))
    return sim_cli_usage_error("bench phold",
                               "--threads needs --lookahead S > 0 (the least delay of every event is the windows' "
                               "length; with 0 the engine cannot make windows)");
  p.threads = (guint)o.threads;
  gint reps = o.reps;
  g_autofree double *rates = g_new(double, reps);
  for (gint i = 0; i < reps; i++) {
    g_autofree SimPholdResult *r = g_new(SimPholdResult, 1);
    g_autoptr(GError) e = NULL;
    if (!sim_phold_run(&p, r, &e)) return sim_cli_usage_error("bench phold", "%s", e->message);
    rates[i] = r->events_per_s;
    printf("phold lps=%u pending=%" G_GUINT64_FORMAT " remote=%g events=%" G_GUINT64_FORMAT
           " wall_s=%.3f events_per_s=%.0f peak_pending=%" G_GUINT64_FORMAT " checksum=%016" G_GINT64_MODIFIER
           "x",
           p.lps, p.pending, p.remote, r->events, r->wall_s, r->events_per_s, r->peak_pending, r->checksum);
    if (p.threads > 0)
      printf(" threads=%u workers=%u windows=%" G_GUINT64_FORMAT " events_per_window=%.1f", p.threads,
             r->windows.workers, r->windows.windows,
             r->windows.windows ? (double)r->events / (double)r->windows.windows : 0.0);
    printf("\n");
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
    {"bench-a", "peers: SimBlock 23.5-25.7 s, 307 MB (not side by side)"},
    {"bench-b", "peers: SimBlock 12.3-15.2 s wall, 300 MB, 8.0% stale (side by side: "
                "scenarios/bench/simblock-side-by-side.sh); CBlockSim 25 s, 33 MB, 4.6% stale (own topology); "
                "target >= 50x SimBlock side by side (<= 0.25 s), < 64 MB"},
    {"bench-c", "peers: SimBlock 39.5-40.2 s wall, 689 MB (side by side); CBlockSim 47 s, 558 MB (8223 nodes); "
                "target >= 100x SimBlock side by side (<= 0.4 s), < 300 MB"},
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

typedef struct {
  gint reps;
} ScenariosOpts;

static const SimOpt scenarios_opts[] = {
    {.name = "repeat", .type = SIM_OPT_INT, .offset = offsetof(ScenariosOpts, reps),
     .help = "Runs per scenario; the medians are printed", .arg = "R", .range = "[1, 101]", .min = 1,
     .max = 101},
};

static int bench_scenarios(int argc, char **argv) {
  ScenariosOpts o = {.reps = 1};
  g_autoptr(GOptionContext) ctx = g_option_context_new("[FILE...] - BENCH.md's workloads, one line each");
  sim_cli_add_options(ctx, scenarios_opts, G_N_ELEMENTS(scenarios_opts), &o);
  g_option_context_set_description(
      ctx,
      "Default files: scenarios/bench/*.json in name order (workloads A-D of BENCH.md).\n"
      "Each run goes through sim run's code path (outputs written to a temp directory, then removed), in a\n"
      "child process of its own, so CPU time and peak RSS are that run's. wall_s covers the whole run\n"
      "(world setup, simulation, metrics, output files, teardown); events/s and deliveries/s (full blocks\n"
      "reaching nodes) are per wall second. With --repeat the medians are printed (peak RSS: the largest).\n"
      "The peers' figures from BENCH.md follow on the same line. Nothing is asserted.");
  if (!sim_cli_parse(ctx, "bench scenarios", &argc, &argv)) return SIM_EXIT_USAGE;
  if (!sim_cli_check_ranges("bench scenarios", scenarios_opts, G_N_ELEMENTS(scenarios_opts), &o))
    return SIM_EXIT_USAGE;
  const gint reps = o.reps;
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
    const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
    gint64 nodes = net->nodes ? net->nodes(sc->pow.network.params) : 0;
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

/* ---- scaling: one workload at 1..N threads ---- */

typedef struct {
  guint64 iters;
  double wall_s;
} SpinArg;

static void *spin_main(void *arg) {
  SpinArg *a = arg;
  gint64 t0 = g_get_monotonic_time();
  volatile guint64 x = 88172645463325252ULL;
  for (guint64 i = 0; i < a->iters; i++) {
    guint64 v = x;
    v ^= v << 13;
    v ^= v >> 7;
    v ^= v << 17;
    x = v;
  }
  a->wall_s = (double)(g_get_monotonic_time() - t0) / 1e6;
  return NULL;
}

/* How much parallel compute the machine gives right now: k threads of the same loop, k x t(1) / t(k). On a
 * machine shared with other work this is what bounds any speedup measured just after. */
static double spin_parallelism(guint k) {
  enum { ITERS = 40000000 };
  SpinArg one = {.iters = ITERS};
  spin_main(&one);
  g_autofree SpinArg *args = g_new0(SpinArg, k);
  g_autofree pthread_t *tids = g_new0(pthread_t, k);
  gint64 t0 = g_get_monotonic_time();
  for (guint i = 0; i < k; i++) {
    args[i].iters = ITERS;
    pthread_create(&tids[i], NULL, spin_main, &args[i]);
  }
  for (guint i = 0; i < k; i++)
    pthread_join(tids[i], NULL);
  double tk = (double)(g_get_monotonic_time() - t0) / 1e6;
  return tk > 0 ? k * one.wall_s / tk : 0;
}

/* A cache line passed between two threads and back: ns per round trip (the median of 9 bursts of 2,000:
 * short, so that a burst in which the other thread lost its CPU for a while is an outlier, not the figure).
 * The relay's split pays a few of these at every window; on a VM it depends on where the host put the vCPUs
 * (docs/threads.md, session 14: 170-220 ns or 600-800 ns on the 2-core VM, changing within minutes). Both
 * threads spin, so it is measured only where the process may use 2 CPUs or more; a burst that takes over
 * half a second (the other thread not running: a busy machine) gives up, and -1 if the median did. */
typedef struct {
  _Alignas(64) unsigned ping;
  _Alignas(64) unsigned pong;
  unsigned n;
  _Alignas(64) unsigned stop;
} PingPong;

static void *pong_main(void *arg) {
  PingPong *pp = arg;
  for (unsigned i = 1; i <= pp->n; i++) {
    while (__atomic_load_n(&pp->ping, __ATOMIC_ACQUIRE) != i)
      if (__atomic_load_n(&pp->stop, __ATOMIC_RELAXED)) return NULL;
    __atomic_store_n(&pp->pong, i, __ATOMIC_RELEASE);
  }
  return NULL;
}

static double core_round_trip_ns(void) {
  enum { BURSTS = 9, N = 2000 };
  double ns[BURSTS];
  for (int b = 0; b < BURSTS; b++) {
    PingPong *pp = g_aligned_alloc0(1, sizeof *pp, 64);
    pp->n = N;
    pthread_t tid;
    if (pthread_create(&tid, NULL, pong_main, pp) != 0) {
      g_aligned_free(pp);
      return -1;
    }
    gint64 t0 = g_get_monotonic_time();
    gboolean late = FALSE;
    for (unsigned i = 1; i <= N && !late; i++) {
      __atomic_store_n(&pp->ping, i, __ATOMIC_RELEASE);
      for (unsigned spins = 1; __atomic_load_n(&pp->pong, __ATOMIC_ACQUIRE) != i; spins++)
        if ((spins & 4095) == 0 && g_get_monotonic_time() - t0 > G_USEC_PER_SEC / 2) {
          late = TRUE;
          break;
        }
    }
    ns[b] = late ? G_MAXDOUBLE : (double)(g_get_monotonic_time() - t0) * 1000.0 / N;
    __atomic_store_n(&pp->stop, 1, __ATOMIC_RELAXED);
    pthread_join(tid, NULL);
    g_aligned_free(pp);
  }
  qsort(ns, BURSTS, sizeof *ns, cmp_double);
  return ns[BURSTS / 2] == G_MAXDOUBLE ? -1 : ns[BURSTS / 2];
}

/* The round trip line (`when`: "now" or "after"), where there are 2 CPUs or more for it. */
static void print_round_trip(const char *when) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return;
  double rt = core_round_trip_ns();
  if (rt < 0)
    printf(
        "# core-to-core round trip %s: n/a (the other thread did not answer within 0.5 s: a busy machine)\n",
        when);
  else
    printf("# core-to-core round trip %s: %.0f ns%s\n", when, rt,
           strcmp(when, "now") == 0
               ? " (a cache line to another thread and back; each window of a split relay pays a few)"
               : "");
}

/* One row of the scaling table: the median run's figures. */
typedef struct {
  double wall_s, events;
  SimEngineWindowStats ws;
  SimWorkerStats workers[SIM_ENGINE_MAX_THREADS];
  PowRelayStats relay; /* scenarios: the relay's own threads */
} ScaleRow;

static void scale_row_print(const char *label, const ScaleRow *r, double base_wall, double seq_wall,
                            double base_crit) {
  g_autofree char *p50 = sim_output_window_quantile(&r->ws, 0.5);
  guint64 remote = 0;
  double cpu = 0;
  for (guint w = 0; w < r->ws.workers; w++) {
    remote += r->workers[w].sent_remote;
    cpu += r->workers[w].cpu_s;
  }
  printf("%-7s %8.3f %13.4g %8.3f %8.3f %10" G_GUINT64_FORMAT " %11.1f %12s %7.4f %8.3f %8.3f %8.3f  ", label,
         r->wall_s, r->wall_s > 0 ? r->events / r->wall_s : 0, r->wall_s > 0 ? base_wall / r->wall_s : 0,
         r->wall_s > 0 ? seq_wall / r->wall_s : 0, r->ws.windows,
         r->ws.windows ? r->events / (double)r->ws.windows : 0.0, p50,
         r->events > 0 ? remote / r->events : 0.0, cpu, r->ws.critical_s,
         r->ws.critical_s > 0 && base_crit > 0 ? base_crit / r->ws.critical_s : 0.0);
  for (guint w = 0; w < r->ws.workers; w++)
    printf("%s%.3f", w ? "," : "", r->workers[w].wait_s);
  printf("  ");
  for (guint w = 0; w < r->ws.workers; w++)
    printf("%s%.3f", w ? "," : "", r->workers[w].busy_s);
  printf("\n");
  fflush(stdout);
}

/* A scenario's row: the run, then its relay (each block's relay on its own threads; the world is one engine
 * group, so the engine's windows say nothing here). */
static void scale_row_print_relay(const char *label, const ScaleRow *r, double base_wall, double base_relay) {
  const PowRelayStats *x = &r->relay;
  double blocks = (double)MAX(x->blocks, 1), windows = (double)MAX(x->windows, 1);
  printf("%-7s %8.3f %13.4g %8.3f %8.3f %9.3f %7u %9.1f %9.1f %8.2f  ", label, r->wall_s,
         r->wall_s > 0 ? r->events / r->wall_s : 0, r->wall_s > 0 ? base_wall / r->wall_s : 0, x->wall_s,
         x->wall_s > 0 ? base_relay / x->wall_s : 0, x->threads, x->windows / blocks, x->steps / windows,
         x->work_critical ? (double)x->work / (double)x->work_critical : 1.0);
  for (guint w = 0; w < x->threads && w < POW_RELAY_MAX_THREADS; w++)
    printf("%s%.3f", w ? "," : "", x->wait_s[w]);
  printf("\n");
  fflush(stdout);
}

/* Sorts rows by wall time and returns the median one (rows[reps]). */
static const ScaleRow *scale_median(ScaleRow *rows, gint reps) {
  for (gint i = 1; i < reps; i++)
    for (gint j = i; j > 0 && rows[j - 1].wall_s > rows[j].wall_s; j--) {
      ScaleRow t = rows[j];
      rows[j] = rows[j - 1];
      rows[j - 1] = t;
    }
  return &rows[reps / 2];
}

typedef struct {
  ScaleRow *row;
} ScenarioCapture;

static void scaling_on_engine(void *user, SimEngine *engine, const char *note) {
  ScenarioCapture *c = user;
  (void)note;
  SimEngineStats st;
  sim_engine_get_stats(engine, &st);
  c->row->events = (double)st.events;
  sim_engine_get_window_stats(engine, &c->row->ws);
  for (guint w = 0; w < c->row->ws.workers && w < SIM_ENGINE_MAX_THREADS; w++)
    sim_engine_get_worker_stats(engine, w, &c->row->workers[w]);
}

static int bench_scaling(int argc, char **argv) {
  g_auto(PholdOpts) o = {0};
  phold_opts_default(&o);
  o.lps = 16000;
  o.pending = 16000;
  o.lookahead = 0.1;
  o.events = 20000000;
  o.threads_max = MAX(2, (gint)sysconf(_SC_NPROCESSORS_ONLN));
  g_autofree char *rest = sim_cli_command_line(argc, argv);
  g_autofree char *command = g_strconcat("sim bench", rest + strlen("sim"), NULL);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- one workload at 1..N worker threads");
  phold_opts_add(ctx, &o, scaling_opts, G_N_ELEMENTS(scaling_opts));
  g_option_context_set_description(
      ctx,
      "Runs PHOLD (defaults here: --lps 16000 --pending 16000 --lookahead 0.1 --events 20000000) or a "
      "scenario\n"
      "on the sequential engine (row 'seq') and on the partitioned engine with 1..N workers, --repeat times "
      "each,\n"
      "and prints the median run of each: wall seconds, events/s, speedup over 1 thread and over the "
      "sequential\n"
      "engine, windows, events per window (mean, median bucket), the share of events sent to another "
      "worker,\n"
      "and per worker the barrier wait and busy seconds. First it measures the parallelism the machine "
      "gives\n"
      "right now (k threads of a compute loop): on a shared machine that bounds every speedup below it;\n"
      "and the core-to-core round trip, before and after the table (a cache line to another thread and\n"
      "back: on a VM it depends on where the host put the vCPUs, and the split relay pays a few per window).\n"
      "cpu_s: the workers' thread CPU seconds in windows; crit_s: the critical path, the busiest worker's "
      "CPU\n"
      "time summed over windows (the windows' time on dedicated cores with a free barrier); crit_speedup:\n"
      "crit_s at 1 thread over crit_s here, the speedup dedicated cores would give before barrier costs.\n"
      "(Measuring CPU time costs two system calls per window and worker, about 1 us here; sim bench phold\n"
      "does not measure it.) With --scenario the rows are the scenario's run and its relay, whose threads\n"
      "give the speedup (the proof-of-work world is one engine group): relay_s, the wall seconds in the\n"
      "relay, and its speedup over 1 thread; the relay's threads, windows per block and steps per window;\n"
      "balance, the relay's work over the busiest thread's work per window, summed (the speedup dedicated\n"
      "cores and a free barrier would give); and the barrier wait per relay thread. These rows split each\n"
      "block's relay (sim run --relay-split); a last row, 'p2', is the relay pipeline at 2 threads\n"
      "(sim run's default at exactly 2): successive blocks' relays at once, one thread each, relay_s\n"
      "their time summed over both, no barrier. Nothing is asserted.");
  if (!sim_cli_parse(ctx, "bench scaling", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error("bench scaling", "unexpected argument '%s'", argv[1]);
  const char *scenario = o.scenario;
  char **sets = o.sets;
  const gint threads_max = o.threads_max;
  if (sets && !scenario) return sim_cli_usage_error("bench scaling", "--set needs --scenario");
  if (!sim_cli_check_ranges("bench scaling", scaling_opts, G_N_ELEMENTS(scaling_opts), &o))
    return SIM_EXIT_USAGE;
  SimPholdParams p;
  if (!phold_opts_check("bench scaling", &o, &p)) return SIM_EXIT_USAGE;
  g_autoptr(SimScenario) sc = NULL;
  if (scenario) {
    g_autoptr(SimDiag) diag = sim_diag_new(scenario);
    sc = sim_scenario_load_file(scenario, (const char *const *)sets, diag);
    if (!sc) {
      g_autofree char *msg = sim_diag_join(diag);
      fprintf(stderr, "%s\n", msg);
      return SIM_EXIT_USAGE;
    }
  }
  sim_cli_print_header("bench scaling", command);
  if (sc)
    printf("# workload: scenario %s (as sim run, outputs to a temp directory); medians of %d runs\n",
           sc->path, o.reps);
  else
    printf("# workload: PHOLD lps=%u pending=%" G_GUINT64_FORMAT " remote=%g mean_delay_s=%g lookahead_s=%g "
           "events=%" G_GUINT64_FORMAT " partition=%s; medians of %d runs\n",
           p.lps, p.pending, p.remote, p.mean_delay_s, p.lookahead_s, p.events,
           p.partitioning == SIM_PARTITION_ROUND_ROBIN ? "round-robin" : "blocks", o.reps);
  printf("# available parallelism now (k threads of a compute loop, k x t1 / tk):");
  for (gint k = 1; k <= threads_max; k++)
    printf(" %d:%.2f", k, spin_parallelism((guint)k));
  printf("\n");
  if (threads_max >= 2) print_round_trip("now");
  if (sc)
    printf("threads   wall_s  events_per_s  speedup  relay_s  relay_speedup  relay_threads  windows/block  "
           "steps/window  balance  barrier_wait_s/relay_thread\n");
  else
    printf("threads   wall_s  events_per_s  speedup   vs_seq    windows  ev/window  med_window  remote    "
           "cpu_s   crit_s "
           "crit_speedup  barrier_wait_s/worker  busy_s/worker\n");
  double base_wall = 0, seq_wall = 0, base_crit = 0, base_relay = 0;
  g_autofree ScaleRow *rows = g_new0(ScaleRow, o.reps);
  /* For a scenario, a last row "p2": the relay pipeline at 2 threads (sim run's default at exactly 2). */
  const gint n_rows = threads_max + 1 + (sc && threads_max >= 2 ? 1 : 0);
  for (gint c = 0; c < n_rows; c++) {
    const gboolean pipe = c > threads_max;
    const gint t = pipe ? 2 : c;
    for (gint k = 0; k < o.reps; k++) {
      memset(&rows[k], 0, sizeof rows[k]);
      if (sc) {
        g_autoptr(GError) e = NULL;
        g_autofree char *dir = g_dir_make_tmp("sim-scaling-XXXXXX", &e);
        if (!dir) return sim_cli_usage_error("bench scaling", "%s", e->message);
        ScenarioCapture cap = {.row = &rows[k]};
        char *av[] = {(char *)"sim", (char *)"bench", (char *)"scaling", sc->path, NULL};
        SimRunOptions opt = {.out_dir = dir,
                             .argc = 4,
                             .argv = av,
                             .threads = (guint)t,
                             .relay_mode = pipe ? SIM_RELAY_PIPELINE : SIM_RELAY_SPLIT,
                             .on_engine = scaling_on_engine,
                             .on_engine_user = &cap,
                             .relay_stats = &rows[k].relay};
        gint64 t0 = g_get_monotonic_time();
        gboolean ok = sim_run(sc, &opt, NULL, &e);
        rows[k].wall_s = (double)(g_get_monotonic_time() - t0) / 1e6;
        remove_tree(dir);
        if (!ok) {
          fprintf(stderr, "sim bench scaling: %s\n", e->message);
          return SIM_EXIT_RUNTIME;
        }
      } else {
        p.threads = (guint)t;
        p.cpu_timing = TRUE;
        g_autofree SimPholdResult *r = g_new(SimPholdResult, 1);
        g_autoptr(GError) e = NULL;
        if (!sim_phold_run(&p, r, &e)) return sim_cli_usage_error("bench scaling", "%s", e->message);
        rows[k].wall_s = r->wall_s;
        rows[k].events = (double)r->events;
        rows[k].ws = r->windows;
        memcpy(rows[k].workers, r->workers, sizeof r->workers);
      }
    }
    const ScaleRow *m = scale_median(rows, o.reps);
    if (c == 0) seq_wall = m->wall_s;
    if (c == 1) {
      base_wall = m->wall_s;
      base_crit = m->ws.critical_s;
      base_relay = m->relay.wall_s;
    }
    g_autofree char *label = pipe ? g_strdup("p2") : t == 0 ? g_strdup("seq") : g_strdup_printf("%d", t);
    if (sc)
      scale_row_print_relay(label, m, t == 0 ? m->wall_s : base_wall, t == 0 ? m->relay.wall_s : base_relay);
    else
      scale_row_print(label, m, t == 0 ? m->wall_s : base_wall, seq_wall, base_crit);
  }
  /* Again at the end: a VM's pairing of its vCPUs can change during the table. */
  if (threads_max >= 2) print_round_trip("after");
  return SIM_EXIT_OK;
}

int sim_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "phold") == 0) return bench_phold(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "scenarios") == 0) return bench_scenarios(argc - 1, argv + 1);
  if (argc >= 2 && strcmp(argv[1], "scaling") == 0) return bench_scaling(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: sim bench phold [OPTIONS]\n       sim bench scenarios [--repeat R] [FILE...]\n"
           "       sim bench scaling [OPTIONS]\n\n"
           "phold: the event engine's PHOLD benchmark. scenarios: workloads A-D of BENCH.md\n"
           "(scenarios/bench/*.json) with the peers' figures. scaling: PHOLD or a scenario at 1..N worker\n"
           "threads. 'sim bench NAME --help' lists the options.\n");
    return SIM_EXIT_OK;
  }
  return sim_cli_usage_error(
      "bench", argc < 2 ? "missing benchmark name (phold, scenarios, scaling)" : "unknown benchmark '%s'",
      argc < 2 ? "" : argv[1]);
}
