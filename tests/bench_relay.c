/* bench_relay.c: the relay kernel alone on a scenario's topology, and the cost of one random draw. Built with
 * the tests, not run as one (speed is measured here, never asserted in a test).
 *
 *   bench-relay SCENARIO [--set PATH=VALUE]... [--blocks N] [--threads N] [--run all|caller|adaptive]
 * [--draws N]
 *
 * Relays --blocks blocks (default 2000) over the scenario's topology as geo_publish does: from the gateways
 * of the pools in turn, 13 s apart, 20-26 KB, stopping as geo_publish does (once each miner's first gateway
 * and the vantage points' first block message or announcement, the earlier, or with --all-messages both, are
 * final). Prints the process CPU seconds and wall seconds per block, the relay's own statistics (windows per
 * block, steps per window, steps skipped, messages between groups, work balance, barrier wait per thread) and
 * a digest of what the stop watches, which must not depend on --threads, --run or network.relay.prune.
 * --run caller splits the work for --threads but runs it on the calling thread alone: the work balance it prints is what that many dedicated
 * cores could give, measured without them (default: all, the threads asked for). Then, with --draws > 0, the
 * cost of one draw: a word from a running stream, a word from a freshly keyed stream (sim_rng_init + the
 * first Philox block, as the kernel's per-edge streams do), and a Pareto latency (net_latency_draw) from
 * each. With --pipe N the blocks go through a RelayPipe of N slots (N blocks in flight, --threads threads of
 * the pipe's, each block's relay on one): the digest must be the one without it. Run from the source root. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net.h"
#include "relay.h"
#include "scenario.h"

static double clock_s(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Best of 5 of n draws of each kind, ns per draw. */
static void draw_costs(guint64 n, const NetGeoParams *gp) {
  NetLatencyDraw d;
  net_latency_draw_init(&d, gp, 80 * SIM_NS_PER_MS, 0); /* a transatlantic mean: a Pareto draw */
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  guint64 sink = 0;
  for (int rep = 0; rep < 5; rep++) {
    double t[5];
    SimRng run;
    sim_rng_init(&run, 42, 7);
    t[0] = clock_s(CLOCK_MONOTONIC);
    for (guint64 i = 0; i < n; i++)
      sink += sim_rng_u64(&run);
    t[1] = clock_s(CLOCK_MONOTONIC);
    for (guint64 i = 0; i < n; i++) {
      SimRng r;
      sim_rng_init(&r, 42, (UINT64_C(2) << 56) | i);
      sink += sim_rng_u64(&r);
    }
    t[2] = clock_s(CLOCK_MONOTONIC);
    for (guint64 i = 0; i < n; i++)
      sink += (guint64)net_latency_draw(&d, &run);
    t[3] = clock_s(CLOCK_MONOTONIC);
    for (guint64 i = 0; i < n; i++) {
      SimRng r;
      sim_rng_init(&r, 42, (UINT64_C(2) << 56) | i);
      sink += (guint64)net_latency_draw(&d, &r);
    }
    t[4] = clock_s(CLOCK_MONOTONIC);
    for (int k = 0; k < 4; k++)
      best[k] = MIN(best[k], (t[k + 1] - t[k]) / (double)n * 1e9);
  }
  printf("draw cost, ns (best of 5 x %" G_GUINT64_FORMAT
         "): u64 from a running stream %.1f, from a freshly keyed "
         "stream %.1f; Pareto latency from a running stream %.1f, from a freshly keyed stream %.1f (sink "
         "%" G_GUINT64_FORMAT ")\n",
         n, best[0], best[1], best[2], best[3], sink & 1);
}

int main(int argc, char **argv) {
  gint blocks = 2000, threads = 1, pipe_slots = 0;
  gint64 spin_us = -1;
  gboolean all_messages = FALSE;
  gint64 draws = 0;
  g_autofree char *run = NULL;
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
      {"blocks", 0, 0, G_OPTION_ARG_INT, &blocks, "Blocks to relay", "N"},
      {"threads", 0, 0, G_OPTION_ARG_INT, &threads, "Relay threads (with --pipe: the pipe's)", "N"},
      {"pipe", 0, 0, G_OPTION_ARG_INT, &pipe_slots,
       "Relay through a RelayPipe of N slots, N blocks in flight (one kernel thread each)", "N"},
      {"spin-us", 0, 0, G_OPTION_ARG_INT64, &spin_us,
       "With --pipe: how long the waiting thread spins before it sleeps (default: the pipe's)", "US"},
      {"draws", 0, 0, G_OPTION_ARG_INT64, &draws, "Draws per kind for the draw cost", "N"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Override a scenario value", "PATH=VALUE"},
      {"run", 0, 0, G_OPTION_ARG_STRING, &run, "all (default), caller or adaptive", "HOW"},
      {"all-messages", 0, 0, G_OPTION_ARG_NONE, &all_messages,
       "Watch both of the vantage points' first messages (sim run --emc-logs), not the earlier", NULL},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("SCENARIO - the relay kernel alone");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) e = NULL;
  gboolean parsed = g_option_context_parse(ctx, &argc, &argv, &e);
  RelayRunMode mode = RELAY_RUN_ALL;
  if (run && strcmp(run, "caller") == 0)
    mode = RELAY_RUN_CALLER;
  else if (run && strcmp(run, "adaptive") == 0)
    mode = RELAY_RUN_ADAPTIVE;
  else if (run && strcmp(run, "all") != 0)
    parsed = FALSE;
  if (!parsed || argc != 2 || blocks < 1 || threads < 1 || pipe_slots < 0) {
    fprintf(stderr,
            "usage: bench-relay SCENARIO [--blocks N] [--threads N] [--run all|caller|adaptive] [--draws "
            "N] [--all-messages] [--pipe N]%s%s\n",
            e ? ": " : "", e ? e->message : "");
    return 2;
  }
  g_autoptr(SimDiag) diag = sim_diag_new(argv[1]);
  g_autoptr(SimScenario) sc = sim_scenario_load_file(argv[1], (const char *const *)sets, diag);
  if (!sc) {
    g_autofree char *msg = sim_diag_join(diag);
    fprintf(stderr, "%s\n", msg);
    return 2;
  }
  if (strcmp(sc->pow.network.model->name, "geo") != 0) {
    fprintf(stderr, "bench-relay: %s has no topology (network model %s)\n", argv[1],
            sc->pow.network.model->name);
    return 2;
  }
  const NetGeoParams *gp = sc->pow.network.params;
  const RelayModel *m = (const RelayModel *)gp->relay.model;
  g_autoptr(NetTopology) t = net_topology_build(gp, sc->seed, &e);
  if (!t) {
    fprintf(stderr, "bench-relay: %s\n", e->message);
    return 1;
  }
  g_autoptr(RelayWork) w = relay_work_new(t);
  RelayPipe *pipe = pipe_slots ? relay_pipe_new(m, gp->relay.params, gp, t, NULL, (guint)pipe_slots, (guint)threads)
                               : NULL;
  if (pipe && spin_us >= 0) relay_pipe_set_spin(pipe, spin_us * 1000);
  RelayJob **jobs = g_new0(RelayJob *, MAX(pipe_slots, 1));
  g_autofree guint *pool_miners = g_new(guint, MAX(sc->n_pools, 1));
  for (guint i = 0; i < sc->n_pools; i++) pool_miners[i] = sc->pools[i].miners;
  g_autofree guint32 *stop_group = g_new(guint32, MAX(t->n_special, 1));
  RelayStop stop = relay_stop_specials(gp, t, pool_miners, stop_group);
  stop.first_message_only = !all_messages;
  g_autofree SimTime *group_first = g_new(SimTime, MAX(stop.n_groups, 1));
  relay_work_set_threads(w, (guint)threads);
  relay_work_set_run_mode(w, mode);
  guint32 first_gw = gp->n_vantages, n_gw = t->n_special - gp->n_vantages;
  guint64 digest = 0, reached = 0;
  double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
  /* With a pipe, block i is read when block i + pipe_slots starts (or at the end): the digest in block order. */
  for (gint i = 0, read = 0; read < blocks; i++) {
    const RelayWork *res = w;
    if (pipe) {
      if (i < blocks) {
        if (i - read == pipe_slots) {
          i--; /* read the oldest first, then start block i */
        } else {
          guint32 src = n_gw ? first_gw + (guint32)i * 7 % n_gw : (guint32)i % t->n_nodes;
          SimTime src_t = (SimTime)i * 13 * SIM_NS_PER_S;
          RelayBlock b = {.sources = &src, .source_t = &src_t, .n_sources = 1,
                          .size_bytes = 20000 + 1000 * (i % 7), .gas_used = 5e6};
          SimRng rng;
          sim_rng_init(&rng, sc->seed, (UINT64_C(1) << 63) | (guint64)i);
          jobs[i % pipe_slots] = relay_pipe_start(pipe, &b, &stop, &rng);
          continue;
        }
      }
      res = relay_job_work(jobs[read % pipe_slots]);
    } else {
      guint32 src = n_gw ? first_gw + (guint32)i * 7 % n_gw : (guint32)i % t->n_nodes;
      SimTime src_t = (SimTime)i * 13 * SIM_NS_PER_S;
      RelayBlock b = {.sources = &src,
                      .source_t = &src_t,
                      .n_sources = 1,
                      .size_bytes = 20000 + 1000 * (i % 7),
                      .gas_used = 5e6};
      SimRng rng;
      sim_rng_init(&rng, sc->seed, (UINT64_C(1) << 63) | (guint64)i);
      m->propagate(gp->relay.params, gp, t, &b, &stop, &rng, w);
    }
    reached += relay_work_reached(res);
    /* What the stop watches: each group's first full block, the vantage points' messages. */
    for (guint32 g = 0; g < stop.n_groups; g++)
      group_first[g] = SIM_TIME_MAX;
    for (guint32 v = 0; v < t->n_special; v++)
      if (stop.group[v] != RELAY_STOP_NONE)
        group_first[stop.group[v]] = MIN(group_first[stop.group[v]], relay_work_have(res, v));
    for (guint32 g = 0; g < stop.n_groups; g++)
      digest = sim_mix64(digest ^ (guint64)group_first[g]);
    for (guint32 v = 0; v < stop.n_messages; v++) {
      SimTime a = relay_work_first_push(res, v), c = relay_work_announce(res, v);
      digest = all_messages ? sim_mix64(digest ^ (guint64)a ^ (guint64)c * 3)
                            : sim_mix64(digest ^ (guint64)MIN(a, c) ^ (guint64)(a <= c));
    }
    if (pipe) relay_job_release(jobs[read % pipe_slots]);
    read++;
  }
  double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0, wall = clock_s(CLOCK_MONOTONIC) - w0;
  RelayWorkStats st;
  if (pipe)
    relay_pipe_get_stats(pipe, &st);
  else
    relay_work_get_stats(w, &st);
  printf("%s: %u nodes (%u special), %" G_GUINT64_FORMAT
         " directed edges; %d blocks split for %u relay thread%s, "
         "%" G_GUINT64_FORMAT " of them run by the calling thread alone\n",
         sc->name, t->n_nodes, t->n_special, t->n_edges, blocks, st.threads, st.threads == 1 ? "" : "s",
         st.alone);
  printf("cpu %.1f us/block, wall %.1f us/block; reached %.1f nodes/block; digest %016" G_GINT64_MODIFIER
         "x\n",
         cpu / blocks * 1e6, wall / blocks * 1e6, (double)reached / blocks, digest);
  if (st.propagations)
    printf("groups %u (largest %u nodes), lookahead %.3f ms (node %u -> node %u); windows/block %.1f, "
           "steps/block "
           "%.1f (%.1f skipped), steps/window %.1f, messages/block %.1f (%.1f%% between groups, %.1f%% between workers), draws/block "
           "%.1f; split announcements/block %.2f; work balance %.2f; barrier "
           "wait s:",
           st.groups, st.largest_group, (double)st.lookahead_ns / 1e6, st.lookahead_from, st.lookahead_to,
           (double)st.windows / st.propagations, (double)st.steps / st.propagations,
           (double)st.pruned / st.propagations, (double)st.steps / (double)MAX(st.windows, 1), (double)st.messages / st.propagations,
           100.0 * (double)st.deferred / (double)MAX(st.messages, 1),
           100.0 * (double)st.posted / (double)MAX(st.messages, 1), (double)st.draws / st.propagations,
           (double)st.split / st.propagations,
           st.work_critical ? (double)st.work / (double)st.work_critical : 1.0);
  for (guint i = 0; i < st.threads; i++)
    printf(" %.3f", st.wait_s[i]);
  printf("\n");
  if (draws > 0) draw_costs((guint64)draws, gp);
  relay_pipe_free(pipe);
  g_free(jobs);
  return 0;
}
