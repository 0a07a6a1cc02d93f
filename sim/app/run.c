/* run.c: builds the world from a scenario, runs the engine, computes the metrics, writes the outputs. */
#include "run.h"

#include <math.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "emclog.h"
#include "tracemine.h"
#include "engine.h"
#include "numa_hw.h"
#include "numa_model.h"
#include "output.h"
#include "pow.h"
#include "propagation.h"
#include "util.h"

G_DEFINE_QUARK(sim-run-error-quark, sim_run_error)

typedef struct {
  const PowWorld *world;
  uint32_t target_height;
  SimTime stop_time;
  uint64_t stop_events;
  gboolean printed;
} Progress;

static void format_duration(GString *s, double secs) {
  if (secs < 0 || secs > 1e9) {
    g_string_append(s, "--");
    return;
  }
  guint64 t = (guint64)secs;
  if (t >= 86400) g_string_append_printf(s, "%" G_GUINT64_FORMAT "d", t / 86400);
  g_string_append_printf(s, "%02u:%02u:%02u", (unsigned)(t % 86400 / 3600), (unsigned)(t % 3600 / 60),
                         (unsigned)(t % 60));
}

/* Called by the engine at most 10 times a second; runs only when stderr is a terminal. */
static void on_progress(void *user, const SimEngineStats *st) {
  Progress *p = user;
  double frac = 0;
  uint32_t h = pow_world_max_height(p->world);
  if (p->target_height) frac = MAX(frac, (double)h / p->target_height);
  if (p->stop_time < SIM_TIME_MAX && p->stop_time > 0) frac = MAX(frac, (double)st->now / (double)p->stop_time);
  if (p->stop_events) frac = MAX(frac, (double)st->events / (double)p->stop_events);
  frac = MIN(frac, 1.0);
  g_autoptr(GString) s = g_string_new("\r\033[K[sim] t=");
  format_duration(s, sim_time_to_s(st->now));
  g_string_append_printf(s, "  height %u", h);
  if (p->target_height) g_string_append_printf(s, "/%u", p->target_height);
  g_string_append_printf(s, "  %.2f M ev/s  ETA ", st->wall_s > 0 ? st->events / st->wall_s / 1e6 : 0.0);
  format_duration(s, frac > 0 ? st->wall_s * (1 - frac) / frac : -1);
  fputs(s->str, stderr);
  fflush(stderr);
  p->printed = TRUE;
}

static const char *stop_reason_name(SimStopReason r) {
  switch (r) {
  case SIM_STOP_EMPTY: return "empty";
  case SIM_STOP_TIME: return "time";
  case SIM_STOP_EVENTS: return "events";
  case SIM_STOP_REQUESTED: return "height";
  case SIM_STOP_CANCELLED: return "cancelled";
  }
  return "unknown";
}

typedef gboolean (*CsvWriter)(const AnChain *chain, FILE *out);

static gboolean write_csv(SimOutDir *out, const char *name, CsvWriter fn, const AnChain *chain, GError **error) {
  FILE *f = sim_outdir_create(out, name, error);
  if (!f) return FALSE;
  if (!fn(chain, f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/%s", sim_outdir_path(out), name);
    return FALSE;
  }
  return TRUE;
}

static gboolean write_observations(SimOutDir *out, const AnProp *prop, const AnChain *chain, GError **error) {
  FILE *f = sim_outdir_create(out, "observations.csv", error);
  if (!f) return FALSE;
  if (!an_prop_write_observations_csv(prop, chain, f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/observations.csv", sim_outdir_path(out));
    return FALSE;
  }
  return TRUE;
}

typedef gboolean (*TxCsvWriter)(const TxWorld *w, FILE *out);

static gboolean write_tx_csv(SimOutDir *out, const char *name, TxCsvWriter fn, const TxWorld *w, GError **error) {
  FILE *f = sim_outdir_create(out, name, error);
  if (!f) return FALSE;
  if (!fn(w, f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/%s", sim_outdir_path(out), name);
    return FALSE;
  }
  return TRUE;
}

/* --trace-blocks: the node table and every node's arrival of each traced block (sim report's journey). */
static gboolean write_trace_nodes(SimOutDir *out, const PowNetworkModel *net, gpointer state, GError **error) {
  FILE *f = sim_outdir_create(out, "trace_nodes.csv", error);
  if (!f) return FALSE;
  PowTraceInfo info;
  net->trace_info(state, &info);
  fputs("node,role,name,pool,region,city\n", f);
  for (guint32 v = 0; v < info.n_nodes && !ferror(f); v++) {
    PowTraceNode n;
    net->trace_node(state, v, &n);
    fprintf(f, "%" G_GUINT32_FORMAT ",%s,", v, n.role);
    an_csv_put_field(f, n.name);
    fputc(',', f);
    an_csv_put_field(f, n.pool);
    fputc(',', f);
    an_csv_put_field(f, n.region);
    fputc(',', f);
    an_csv_put_field(f, n.city);
    fputc('\n', f);
  }
  if (fflush(f) != 0 || ferror(f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/trace_nodes.csv", sim_outdir_path(out));
    return FALSE;
  }
  return TRUE;
}

static gboolean write_trace_blocks(SimOutDir *out, const PowNetworkModel *net, gpointer state, GError **error) {
  FILE *f = sim_outdir_create(out, "trace_blocks.csv", error);
  if (!f) return FALSE;
  PowTraceInfo info;
  net->trace_info(state, &info);
  fputs("block,height,node,arrive_s\n", f);
  for (guint i = 0; i < info.n_blocks && !ferror(f); i++) {
    PowTracedBlock b;
    net->trace_block(state, i, &b);
    for (guint32 v = 0; v < info.n_nodes; v++) {
      if (b.have[v] == SIM_TIME_MAX) continue;
      SimTime d = b.have[v] - b.mined_ns; /* >= 0: no node has a block before it is mined */
      fprintf(f, "0x%016" G_GINT64_MODIFIER "x,%" G_GUINT32_FORMAT ",%" G_GUINT32_FORMAT ",%" G_GINT64_FORMAT
                 ".%09" G_GINT64_FORMAT "\n",
              (guint64)b.block, b.height, v, (gint64)(d / SIM_NS_PER_S), (gint64)(d % SIM_NS_PER_S));
    }
  }
  if (fflush(f) != 0 || ferror(f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/trace_blocks.csv", sim_outdir_path(out));
    return FALSE;
  }
  return TRUE;
}

/* Warnings on what --trace-blocks could not trace (stderr; the outputs hold what was traced). */
static void warn_trace(const SimRunOptions *opt, const PowNetworkModel *net, gpointer state, uint32_t top) {
  PowTraceInfo info;
  net->trace_info(state, &info);
  for (guint h = 0; h < opt->n_trace_heights; h++) {
    gboolean found = FALSE;
    for (guint i = 0; i < info.n_blocks && !found; i++) {
      PowTracedBlock b;
      net->trace_block(state, i, &b);
      found = b.height == opt->trace_heights[h];
    }
    if (!found)
      fprintf(stderr, "sim run: warning: --trace-blocks: no block at height %" G_GUINT32_FORMAT
                      " (the run's highest is %" G_GUINT32_FORMAT ")\n", opt->trace_heights[h], top);
  }
  if (info.dropped)
    fprintf(stderr, "sim run: warning: --trace-blocks: %" G_GUINT64_FORMAT " more blocks at traced heights than "
                    "the %d per height traced; not traced\n", info.dropped, POW_TRACE_PER_HEIGHT);
  if (info.mismatches)
    fprintf(stderr, "sim run: warning: --trace-blocks: %" G_GUINT64_FORMAT " traced blocks relayed to the end "
                    "disagreed with the run's relay at a vantage point or gateway (a bug: please report it)\n",
            info.mismatches);
}

/* This host as a NUMA machine model, from libnuma: CPUs per node, and the distance table (ACPI SLIT, 10 =
 * local) as bandwidth 100 GB/s x 10 / distance, capacity the local bandwidth and latency 10 ns x distance.
 * Only the ratios matter to the canonical weights; a measured machine file (sim numa measure) would be
 * better, and this is the fallback that needs nothing. NULL without NUMA. */
static SimNumaMachine *numa_machine_detect(void) {
  if (numa_available() < 0) return NULL;
  guint n = MIN((guint)numa_max_node() + 1, SIM_NUMA_MAX_NODES);
  guint cpus[SIM_NUMA_MAX_NODES];
  g_autofree double *bw = g_new(double, n *n), *lat = g_new(double, n *n), *cap = g_new(double, n);
  struct bitmask *bm = numa_allocate_cpumask();
  guint with_cpus = 0;
  for (guint j = 0; j < n; j++) {
    cpus[j] = numa_node_to_cpus((int)j, bm) == 0 ? numa_bitmask_weight(bm) : 0;
    with_cpus += cpus[j] > 0;
  }
  numa_free_cpumask(bm);
  if (with_cpus == 0) return NULL;
  for (guint i = 0; i < n; i++) {
    int dl = numa_distance((int)i, (int)i);
    cap[i] = 100.0 * 10.0 / (dl > 0 ? dl : 10);
    for (guint j = 0; j < n; j++) {
      int d = numa_distance((int)i, (int)j);
      if (d <= 0) d = i == j ? 10 : 20;
      bw[i * n + j] = cpus[j] > 0 ? 100.0 * 10.0 / d : NAN;
      lat[i * n + j] = cpus[j] > 0 ? 10.0 * d : NAN;
    }
  }
  return sim_numa_machine_new("this host (libnuma distances)", n, cpus, bw, cap, lat);
}

/* The NUMA model's canonical weights for the worker nodes (SimNumaWeightsFn); `user` is the machine. */
static void canonical_weights(void *user, const guint *workers, guint n_workers, double *w, guint n_nodes) {
  const SimNumaMachine *m = user;
  guint uniq[SIM_NUMA_MAX_NODES], nu = 0;
  for (guint i = 0; i < n_workers; i++) {
    gboolean seen = FALSE;
    for (guint k = 0; k < nu && !seen; k++)
      seen = uniq[k] == workers[i];
    if (!seen && workers[i] < sim_numa_machine_n_nodes(m) && sim_numa_machine_cpus(m, workers[i]) > 0)
      uniq[nu++] = workers[i];
  }
  memset(w, 0, n_nodes * sizeof *w);
  if (nu == 0 || sim_numa_machine_n_nodes(m) != n_nodes) {
    w[0] = 1;
    return;
  }
  sim_numa_canonical.weights(m, uniq, nu, w);
}

guint sim_run_default_threads(void) {
  return MIN(MAX(g_get_num_processors(), 1), SIM_ENGINE_MAX_THREADS);
}

gboolean sim_run(const SimScenario *sc, const SimRunOptions *opt, json_t **summary_out, GError **error) {
  g_autofree char *default_dir = g_build_filename("results", sc->name, NULL);
  const char *dir = opt->out_dir ? opt->out_dir : default_dir;
  GError *e = NULL;

  /* Check the output directory before spending any time on the run. */
  g_autoptr(SimOutDir) out = sim_outdir_open(dir, "run", &e);
  if (!out) {
    g_set_error_literal(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT, e->message);
    g_error_free(e);
    return FALSE;
  }

  g_autoptr(SimEngine) engine = sim_engine_new(sc->seed);
  g_autoptr(PowWorld) world = pow_world_new(&sc->pow, engine, &e);
  if (!world) {
    g_set_error_literal(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT, e->message);
    g_error_free(e);
    return FALSE;
  }
  sim_engine_set_threads(engine, opt->threads, SIM_PARTITION_BLOCKS);
  /* The world is one engine group; each block's relay runs on the network's own threads. */
  pow_world_set_threads(world, MAX(opt->threads, 1), opt->threads_adaptive);
  sim_engine_set_cpu_timing(engine, opt->on_engine != NULL);
  g_autoptr(SimNumaMachine) numa_machine = NULL;
  if (opt->threads > 0 && sim_numa_hw_nodes() > 1) {
    numa_machine = numa_machine_detect();
    if (numa_machine) sim_engine_set_numa_weights(engine, canonical_weights, numa_machine);
  }
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  if (opt->n_trace_heights > 0) {
    if (!net->trace_set || !pow_world_net_state(world)) {
      g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT,
                  "--trace-blocks: the \"%s\" network has no nodes to trace (a \"geo\" network has)",
                  net->info.name);
      return FALSE;
    }
    if (!net->trace_set(pow_world_net_state(world), world, opt->trace_heights, opt->n_trace_heights, &e)) {
      g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT, "--trace-blocks: %s", e->message);
      g_error_free(e);
      return FALSE;
    }
  }
  if (!sim_engine_prepare(engine, &e)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  if (sc->stop.time_s > 0) sim_engine_set_stop_time(engine, sim_time_from_s(sc->stop.time_s));
  if (sc->stop.events > 0) sim_engine_set_max_events(engine, (uint64_t)sc->stop.events);
  if (opt->cancel) sim_engine_set_cancel_flag(engine, opt->cancel);
  Progress prog = {.world = world,
                   .target_height = sc->pow.stop_height,
                   .stop_time = sc->stop.time_s > 0 ? sim_time_from_s(sc->stop.time_s) : SIM_TIME_MAX,
                   .stop_events = (uint64_t)sc->stop.events};
  if (opt->progress && isatty(STDERR_FILENO)) sim_engine_set_progress(engine, on_progress, &prog, 0.1);

  if (opt->emc_logs && pow_world_tx(world)) tx_world_keep_for_logs(pow_world_tx(world));
  SimStopReason why = sim_engine_run(engine);
  if (prog.printed) fputc('\n', stderr);
  if (why == SIM_STOP_CANCELLED) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED, "interrupted; no output written");
    return FALSE;
  }
  SimEngineStats st;
  sim_engine_get_stats(engine, &st);
  if (opt->on_engine) {
    g_autofree char *note = pow_world_partition_note(world, st.wall_s);
    opt->on_engine(opt->on_engine_user, engine, note);
  }
  if (opt->relay_stats) pow_world_relay_stats(world, opt->relay_stats);

  /* The metric window: the requested heights, or (stopped by time or events) everything but the last
   * settle_heights heights, whose uncle status is still open. */
  uint32_t top = pow_world_max_height(world);
  uint32_t window = sc->stop.heights > 0 ? (uint32_t)MIN((uint64_t)sc->stop.heights, top)
                    : top > (uint32_t)sc->stop.settle_heights ? top - (uint32_t)sc->stop.settle_heights
                                                              : top;
  guint n_miners = 0;
  g_autofree AnMiner *miners = pow_world_an_miners(world, &n_miners);
  g_autofree const char **names = g_new0(const char *, sc->n_pools + 1);
  for (guint i = 0; i < sc->n_pools; i++) names[i] = sc->pools[i].name;
  g_autoptr(AnChain) chain = an_chain_new(miners, n_miners, names, sc->n_pools);
  AnChainParams ap;
  pow_world_an_params(world, window, &ap);
  if (!pow_world_feed(world, chain, &e) || !an_chain_finalize(chain, &ap, &e)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "analysis failed: %s", e->message);
    g_error_free(e);
    return FALSE;
  }

  /* Vantage points, when the network has them: the study's propagation metrics and its per-block join. */
  gpointer net_state = pow_world_net_state(world);
  g_autoptr(AnProp) prop = NULL;
  guint n_vantages = net->n_vantages && net_state ? net->n_vantages(net_state) : 0;
  if (n_vantages > 0) {
    g_autofree const char **vnames = g_new0(const char *, n_vantages + 1);
    for (guint i = 0; i < n_vantages; i++) vnames[i] = net->vantage_name(net_state, i);
    prop = an_prop_new(vnames, n_vantages);
    for (guint i = 0; i < n_vantages && !e; i++) {
      const GArray *sg = net->vantage_sightings(net_state, i);
      for (guint j = 0; j < sg->len; j++)
        if (!an_prop_add(prop, &g_array_index(sg, ObsSighting, j), &e)) break;
    }
    if (e || !an_prop_finalize(prop, chain, &e)) {
      g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "propagation analysis failed: %s", e->message);
      g_error_free(e);
      return FALSE;
    }
  }

  /* Transactions: the heights still open are declared from the final chain. */
  TxWorld *txw = pow_world_tx(world);
  if (txw && !tx_world_finish(txw, chain, window, &e)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "transaction analysis failed: %s", e->message);
    g_error_free(e);
    return FALSE;
  }

  g_autoptr(json_t) summary = json_object();
  json_object_set_new(
      summary, "header",
      sim_output_header(sc->seed, MAX(opt->threads, 1), opt->argc, opt->argv, sc->path, sc->doc));
  json_t *sim = json_object();
  json_object_set_new(sim, "events", json_integer((json_int_t)st.events));
  json_object_set_new(sim, "entities", json_integer(sim_engine_n_entities(engine)));
  json_object_set_new(sim, "peak_pending", json_integer((json_int_t)st.peak_pending));
  json_object_set_new(sim, "end_time_s", json_real(sim_time_to_s(st.now)));
  json_object_set_new(sim, "stop_reason", json_string(stop_reason_name(why)));
  json_object_set_new(sim, "window_heights", json_integer(window));
  if (net->deliveries && net_state)
    json_object_set_new(sim, "node_block_deliveries", json_integer((json_int_t)net->deliveries(net_state)));
  /* Wall-clock figures: the only fields that differ between runs with the same seed. */
  json_object_set_new(sim, "wall_s", json_real(st.wall_s));
  json_object_set_new(sim, "events_per_s", json_real(st.wall_s > 0 ? st.events / st.wall_s : 0));
  json_object_set_new(sim, "peak_rss_bytes", json_integer((json_int_t)sim_peak_rss_bytes()));
  json_object_set_new(summary, "sim", sim);
  an_chain_add_json(chain, summary);
  if (prop) an_prop_add_json(prop, summary);
  if (txw) tx_world_add_json(txw, summary, names);
  if (opt->trace && !sim_trace_compare(opt->trace, sc, world, summary, out, &e)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "trace comparison failed: %s", e ? e->message : "");
    g_clear_error(&e);
    return FALSE;
  }
  pow_world_add_strategy_json(world, summary);

  if (!sim_outdir_write_json(out, "summary.json", summary, &e) ||
      !write_csv(out, "blocks.csv", an_chain_write_blocks_csv, chain, &e) ||
      !write_csv(out, "pools.csv", an_chain_write_pools_csv, chain, &e) ||
      !write_csv(out, "runs.csv", an_chain_write_runs_csv, chain, &e) ||
      (prop && !write_observations(out, prop, chain, &e)) ||
      (txw && !write_tx_csv(out, "tx_commit.csv", tx_world_write_commit_csv, txw, &e)) ||
      (txw && !write_tx_csv(out, "tx_commit_samples.csv", tx_world_write_commit_samples_csv, txw, &e)) ||
      (txw && tx_world_has_censorship(txw) &&
       !write_tx_csv(out, "censorship.csv", tx_world_write_censorship_csv, txw, &e)) ||
      (opt->emc_logs && !sim_emc_write_logs(out, sc, world, chain, &e)) ||
      (opt->n_trace_heights && !write_trace_nodes(out, net, net_state, &e)) ||
      (opt->n_trace_heights && !write_trace_blocks(out, net, net_state, &e)) || !sim_outdir_commit(out, &e)) {
    g_set_error_literal(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, e->message);
    g_error_free(e);
    return FALSE;
  }
  if (opt->n_trace_heights) warn_trace(opt, net, net_state, top);
  if (summary_out) *summary_out = g_steal_pointer(&summary);
  return TRUE;
}
