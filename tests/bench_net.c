/* bench_net.c: the topology and the relay kernel of a scenario's geo network, without the rest of a run:
 * topology build time and memory, then the Geth relay of many blocks, and the jitter draw (the relay's
 * per-class form and the model's sample()) and RNG refill on their own. Built with the tests, not run as one (speed is measured here, never asserted in a test).
 *
 *   bench-net SCENARIO [--set PATH=VALUE]... [--blocks K] [--draws N] [--no-relay]
 *
 * Blocks: block i comes from all gateways of a pool drawn by hash share (stream (seed, 2^63 | i), as geo.c
 * keys a block's stream), 25,000 bytes and 4 M gas, with the relay stopping once every special node has it
 * (as geo.c does when no miner sits on ordinary nodes). A step is one of the three steps a reached node
 * takes (have, push, announce; relay.h), so steps = 3 x reached; ns per step is the relay's thread CPU
 * time over that. RNG words: 64-bit words the relay took from the block's stream (one Philox4x64-10 block
 * gives four; sim_rng_refill()). The digest sums the specials' times: it changes when any result changes.
 *
 * Times are thread CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine wall time counts the other
 * users' share too. */
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "net.h"
#include "params.h"
#include "relay.h"
#include "scenario.h"

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double peak_rss_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

/* Bytes of the topology's arrays. */
static double topo_mb(const NetTopology *t) {
  double n = t->n_nodes, e = (double)t->n_edges;
  double b = n * (2 + 2 + 1 + 8 + 8 + 4) + (n + 1) * 4 + e * (4 + 4 + 8 + 8 + 8);
  if (t->lat_host_ns) b += e * 8;
  return b / 1e6;
}

int main(int argc, char **argv) {
  g_autoptr(GPtrArray) sets = g_ptr_array_new();
  gint64 blocks = 2000, draws = 20000000;
  gboolean no_relay = FALSE;
  GOptionEntry entries[] = {
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, NULL, "override a scenario value", "PATH=VALUE"},
      {"blocks", 0, 0, G_OPTION_ARG_INT64, &blocks, "blocks to relay (default 2000)", "K"},
      {"draws", 0, 0, G_OPTION_ARG_INT64, &draws, "jitter draws and RNG words to time (default 2e7)", "N"},
      {"no-relay", 0, 0, G_OPTION_ARG_NONE, &no_relay, "build the topology only", NULL},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  char **set_arr = NULL;
  entries[0].arg_data = &set_arr;
  g_autoptr(GOptionContext) ctx = g_option_context_new("SCENARIO");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GError *err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 2) {
    fprintf(stderr, "%s\n", err ? err->message : "usage: bench-net SCENARIO [--set PATH=VALUE]...");
    return 2;
  }
  SimDiag *diag = sim_diag_new(argv[1]);
  SimScenario *sc = sim_scenario_load_file(argv[1], (const char *const *)set_arr, diag);
  if (!sc) {
    fprintf(stderr, "bench-net: %s: not a valid scenario\n", argv[1]);
    return 2;
  }
  if (strcmp(sc->pow.network.model->name, "geo") != 0) {
    fprintf(stderr, "bench-net: %s: not a geo network\n", argv[1]);
    return 2;
  }
  const NetGeoParams *p = sc->pow.network.params;

  double rss0 = peak_rss_mb();
  double c0 = cpu_s();
  NetTopology *t = net_topology_build(p, sc->seed, &err);
  double build_s = cpu_s() - c0;
  if (!t) {
    fprintf(stderr, "bench-net: %s\n", err->message);
    return 1;
  }
  printf("topology: %u nodes (%u special), %" G_GUINT64_FORMAT
         " directed edges, arrays %.1f MB, build %.3f s "
         "CPU, peak RSS %.1f MB (%.1f MB before the build)\n",
         t->n_nodes, t->n_special, t->n_edges, topo_mb(t), build_s, peak_rss_mb(), rss0);

  if (!no_relay) {
    const RelayModel *relay = (const RelayModel *)p->relay.model;
    /* Pools by hash share and their gateways. */
    guint np = sc->n_pools;
    g_autofree double *cum = g_new(double, np);
    g_autoptr(GPtrArray) gws = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; i < np; i++) {
      cum[i] = (i ? cum[i - 1] : 0) + sc->pools[i].hash_share;
      GArray *a = g_array_new(FALSE, FALSE, sizeof(guint32));
      for (guint32 s = 0; s < p->n_specials; s++)
        if (p->specials[s].role == NET_ROLE_GATEWAY && p->specials[s].pool == i) g_array_append_val(a, s);
      g_ptr_array_add(gws, a);
    }
    RelayWork *w = relay_work_new(t);
    g_autofree guint *pool_miners = g_new(guint, MAX(sc->n_pools, 1));
    for (guint i = 0; i < sc->n_pools; i++) pool_miners[i] = sc->pools[i].miners;
    g_autofree guint32 *stop_group = g_new(guint32, MAX(t->n_special, 1));
    RelayStop stop = relay_stop_specials(p, t, pool_miners, stop_group);
    guint32 max_src = 1;
    for (guint i = 0; i < np; i++)
      max_src = MAX(max_src, ((GArray *)gws->pdata[i])->len);
    g_autofree SimTime *src_t = g_new0(SimTime, max_src);
    guint64 reached = 0, messages = 0, words = 0;
    double digest = 0;
    double relay_s = 0;
    gint64 used = 0;
    for (gint64 i = 0; i < blocks; i++) {
      SimRng rng;
      sim_rng_init(&rng, sc->seed, (UINT64_C(1) << 63) | (guint64)i);
      double x = sim_rng_uniform(&rng) * cum[np - 1];
      guint pool = 0;
      while (pool + 1 < np && x >= cum[pool])
        pool++;
      GArray *a = gws->pdata[pool];
      if (a->len == 0) continue; /* a pool on ordinary nodes: not benchmarked */
      RelayBlock b = {.sources = (const guint32 *)(void *)a->data,
                      .source_t = src_t,
                      .n_sources = a->len,
                      .size_bytes = 25000,
                      .gas_used = 4e6};
      double r0 = cpu_s();
      relay->propagate(p->relay.params, p, t, &b, &stop, &rng, w);
      relay_s += cpu_s() - r0;
      used++;
      words += 4 * rng.ctr - (4 - MIN(rng.idx, 4)) - 1; /* less the word that picked the pool */
      reached += relay_work_reached(w);
      messages += relay_work_messages(w);
      for (guint32 v = 0; v < t->n_special; v++) {
        SimTime h = relay_work_have(w, v), fp = relay_work_first_push(w, v), an = relay_work_announce(w, v);
        digest += (h == SIM_TIME_MAX ? 0 : (double)h) + (fp == SIM_TIME_MAX ? 0 : (double)fp) * 1e-3 +
                  (an == SIM_TIME_MAX ? 0 : (double)an) * 1e-6;
      }
    }
    printf(
        "relay: %" G_GINT64_FORMAT " blocks, %.1f reached/block, %.1f steps/block, %.1f messages/block, "
        "%.1f RNG words/block, %.4f s CPU, %.1f ns/step, %.1f ns/message, peak RSS %.1f MB, digest %.17g\n",
        used, (double)reached / (double)used, 3.0 * (double)reached / (double)used,
        (double)messages / (double)used, (double)words / (double)used, relay_s,
        relay_s * 1e9 / (3.0 * (double)reached), relay_s * 1e9 / (double)messages, peak_rss_mb(), digest);
    relay_work_free(w);
  }

  if (draws > 0) {
    /* A Pareto link class of pools-2019 (a 100 ms pair mean) and the raw RNG. */
    NetLatencyDraw d;
    net_latency_draw_init(&d, p, 100 * 1000000, 0);
    SimRng rng;
    sim_rng_init(&rng, sc->seed, 7);
    SimTime acc = 0;
    double d0 = cpu_s();
    for (gint64 i = 0; i < draws; i++)
      acc += net_latency_draw(&d, &rng);
    double draw_s = cpu_s() - d0;
    /* The same distribution through the jitter model's sample() (for pareto: the per-call form, no table). */
    SimTime acc1 = 0;
    double sample_s = 0;
    if (p->jitter.model) {
      sim_rng_init(&rng, sc->seed, 7);
      d0 = cpu_s();
      for (gint64 i = 0; i < draws; i++)
        acc1 += net_jitter_sample(&p->jitter, 100 * 1000000, &rng);
      sample_s = cpu_s() - d0;
    }
    guint64 acc2 = 0;
    sim_rng_init(&rng, sc->seed, 7);
    d0 = cpu_s();
    for (gint64 i = 0; i < draws; i++)
      acc2 += sim_rng_u64(&rng);
    double word_s = cpu_s() - d0;
    printf("draw: kind %d, %.2f ns per latency draw (net_latency_draw), %.2f ns per sample() call, %.2f ns per "
           "RNG word (%.2f ns per 4-word refill), checks %" G_GINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT
           "\n",
           (int)d.kind, draw_s * 1e9 / (double)draws, sample_s * 1e9 / (double)draws, word_s * 1e9 / (double)draws,
           4 * word_s * 1e9 / (double)draws, acc, acc1, acc2);
  }
  net_topology_free(t);
  sim_scenario_free(sc);
  sim_diag_free(diag);
  g_strfreev(set_arr);
  return 0;
}
