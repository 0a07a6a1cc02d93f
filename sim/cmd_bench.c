/* cmd_bench.c: `sim bench phold`: engine benchmarks. Figures go to stdout; nothing is asserted. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "phold.h"

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

int sim_cmd_bench(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "phold") == 0) return bench_phold(argc - 1, argv + 1);
  if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: sim bench phold [OPTIONS]\n\nBenchmarks of the event engine; 'sim bench phold --help' lists "
           "its options.\nScenario benchmarks (workloads A-D of BENCH.md) come with the network model.\n");
    return SIM_EXIT_OK;
  }
  return sim_cli_usage_error("bench", argc < 2 ? "missing benchmark name (phold)" : "unknown benchmark '%s'",
                             argc < 2 ? "" : argv[1]);
}
