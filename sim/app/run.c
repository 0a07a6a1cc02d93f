/* run.c: builds the world from a scenario, runs the engine, computes the metrics, writes the outputs. */
#include "run.h"

#include <math.h>
#include <numa.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "txmetrics.h"
#include "uncles.h"
#include "emclog.h"
#include "tracemine.h"
#include "engine.h"
#include "numa_hw.h"
#include "numa_model.h"
#include "obs_async.h"
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
static NumaModelMachine *numa_machine_detect(void) {
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
  return numa_model_machine_new("this host (libnuma distances)", n, cpus, bw, cap, lat);
}

/* The NUMA model's canonical weights for the worker nodes (SimNumaWeightsFn); `user` is the machine. */
static void canonical_weights(void *user, const guint *workers, guint n_workers, double *w, guint n_nodes) {
  const NumaModelMachine *m = user;
  guint uniq[SIM_NUMA_MAX_NODES], nu = 0;
  for (guint i = 0; i < n_workers; i++) {
    gboolean seen = FALSE;
    for (guint k = 0; k < nu && !seen; k++)
      seen = uniq[k] == workers[i];
    if (!seen && workers[i] < numa_model_machine_n_nodes(m) && numa_model_machine_cpus(m, workers[i]) > 0)
      uniq[nu++] = workers[i];
  }
  memset(w, 0, n_nodes * sizeof *w);
  if (nu == 0 || numa_model_machine_n_nodes(m) != n_nodes) {
    w[0] = 1;
    return;
  }
  numa_model_canonical.weights(m, uniq, nu, w);
}

guint sim_run_default_threads(void) {
  return MIN(MAX(g_get_num_processors(), 1), SIM_ENGINE_MAX_THREADS);
}

AnMiner *sim_run_an_miners(const PowWorld *world, guint *n_miners) {
  guint n = pow_world_n_miners(world);
  AnMiner *a = g_new0(AnMiner, MAX(n, 1));
  for (guint i = 0; i < n; i++) {
    a[i].hash_share = pow_world_miner_share(world, i);
    a[i].group = pow_world_miner_pool(world, i, NULL);
  }
  *n_miners = n;
  return a;
}

void sim_run_an_params(const PowConfig *cfg, uint32_t max_height, AnChainParams *params) {
  const SimUncleParams *up = cfg->uncles.params;
  memset(params, 0, sizeof *params);
  params->block_reward = cfg->chain.block_reward_eth;
  params->uncle_base = up->uncle_base > 0 ? up->uncle_base : 8;
  params->nephew_divisor = up->nephew_divisor > 0 ? up->nephew_divisor : 32;
  params->max_height = max_height;
  params->longest_chain = cfg->chain.fork_choice == POW_FORK_CHOICE_LONGEST;
}

/* What a run computed after the engine stopped: the analyses and the figures the summary reports. */
typedef struct {
  SimEngineStats st;
  SimStopReason why;
  uint32_t top;    /* the highest height mined */
  uint32_t window; /* the metric window */
  const char **names; /* pool names (NULL-terminated), borrowed from the scenario */
  AnChain *chain;
  AnProp *prop;    /* NULL: the network has no vantage points */
  AnTx *antx;      /* the transaction metrics (the world's sink fills it); NULL: no transactions */
} RunResults;

static void run_results_clear(RunResults *r) {
  an_chain_free(r->chain);
  an_prop_free(r->prop);
  an_tx_free(r->antx);
  g_free(r->names);
}

/* Sets `error` from `e` (freed) with `code`, prefixed by `what` (may be NULL). */
static gboolean fail(GError **error, int code, const char *what, GError *e) {
  if (what)
    g_set_error(error, SIM_RUN_ERROR, code, "%s: %s", what, e ? e->message : "");
  else
    g_set_error_literal(error, SIM_RUN_ERROR, code, e ? e->message : "");
  g_clear_error(&e);
  return FALSE;
}

/* Threads (*pipeline: whether the relay is pipelined), NUMA weights, --trace-blocks and the stop conditions,
 * before the engine runs. */
static gboolean run_prepare(const SimScenario *sc, const SimRunOptions *opt, SimEngine *engine,
                            PowWorld *world, NumaModelMachine **numa_machine, gboolean *pipeline,
                            GError **error) {
  GError *e = NULL;
  sim_engine_set_threads(engine, opt->threads, SIM_PARTITION_BLOCKS);
  /* The world is one engine group; each block's relay runs on the network's own threads. */
  pow_world_set_threads(world, MAX(opt->threads, 1), opt->threads_adaptive);
  *pipeline = FALSE;
  if (opt->relay_mode == SIM_RELAY_AUTO) {
    /* The pipeline where it is exact and measured faster (2 threads: docs/threads.md, session 15). */
    if (opt->threads == 2 && sc->stop.events <= 0 && opt->n_trace_heights == 0)
      *pipeline = pow_world_set_relay_pipeline(world, TRUE);
  } else if (opt->relay_mode == SIM_RELAY_PIPELINE && sc->stop.events > 0) {
    /* The budget counts events in the order the run handles them, which the pipeline changes (engine.h). */
    g_printerr("sim: --relay-pipeline: not with stop.events (the event budget counts events in the order the "
               "run handles them, and the pipeline handles some later than the sequential run does); the run "
               "goes on without it\n");
  } else if (opt->relay_mode == SIM_RELAY_PIPELINE && opt->n_trace_heights > 0) {
    /* A traced block is relayed again to its end, on the run's own relay (geo_publish). */
    g_printerr(
        "sim: --relay-pipeline: not with --trace-blocks (the network relays each block on its own when "
        "it traces blocks); the run goes on without it\n");
  } else if (opt->relay_mode == SIM_RELAY_PIPELINE) {
    gboolean allowed = pow_world_set_relay_pipeline(world, TRUE);
    *pipeline = allowed && opt->threads >= 2;
    if (!allowed)
      g_printerr("sim: --relay-pipeline: this scenario's network relays each block on its own (another relay "
                 "model, miners on ordinary nodes, joining nodes, a strategy that is not the honest one, or "
                 "trace-driven mining)\n");
    else if (opt->threads < 2)
      g_printerr("sim: --relay-pipeline: needs --threads 2 or more (the sequential engine, and a thread per "
                 "block in flight)\n");
  }
  sim_engine_set_cpu_timing(engine, opt->on_engine != NULL);
  if (opt->threads > 0 && sim_numa_hw_nodes() > 1) {
    *numa_machine = numa_machine_detect();
    if (*numa_machine) sim_engine_set_numa_weights(engine, canonical_weights, *numa_machine);
  }
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  if (opt->n_trace_heights > 0) {
    if (!net->trace_set || !pow_world_net_state(world)) {
      g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_INPUT,
                  "--trace-blocks: the \"%s\" network has no nodes to trace (a \"geo\" network has)",
                  net->info.name);
      return FALSE;
    }
    if (!net->trace_set(pow_world_net_state(world), world, opt->trace_heights, opt->n_trace_heights, &e))
      return fail(error, SIM_RUN_ERROR_INPUT, "--trace-blocks", e);
  }
  if (!sim_engine_prepare(engine, &e)) return fail(error, SIM_RUN_ERROR_INPUT, NULL, e);
  if (sc->stop.time_s > 0) sim_engine_set_stop_time(engine, sim_time_from_s(sc->stop.time_s));
  if (sc->stop.events > 0) sim_engine_set_max_events(engine, (uint64_t)sc->stop.events);
  if (opt->cancel) sim_engine_set_cancel_flag(engine, opt->cancel);
  return TRUE;
}

/* The chain, the vantage points' propagation and the transactions, over the metric window. */
static gboolean run_analyse(const SimScenario *sc, const PowWorld *world, RunResults *r, GError **error) {
  GError *e = NULL;
  /* The metric window: the requested heights, or (stopped by time or events) everything but the last
   * settle_heights heights, whose uncle status is still open. */
  r->top = pow_world_max_height(world);
  r->window = sc->stop.heights > 0 ? (uint32_t)MIN((uint64_t)sc->stop.heights, r->top)
              : r->top > (uint32_t)sc->stop.settle_heights ? r->top - (uint32_t)sc->stop.settle_heights
                                                           : r->top;
  guint n_miners = 0;
  g_autofree AnMiner *miners = sim_run_an_miners(world, &n_miners);
  r->names = g_new0(const char *, sc->n_pools + 1);
  for (guint i = 0; i < sc->n_pools; i++) r->names[i] = sc->pools[i].name;
  r->chain = an_chain_new(miners, n_miners, r->names, sc->n_pools);
  AnChainParams ap;
  sim_run_an_params(&sc->pow, r->window, &ap);
  ObsSink chain_sink;
  an_chain_sink_init(&chain_sink, r->chain);
  if (!pow_world_feed(world, &chain_sink, &e) || !an_chain_finalize(r->chain, &ap, &e))
    return fail(error, SIM_RUN_ERROR_RUNTIME, "analysis failed", e);

  /* Vantage points, when the network has them: the study's propagation metrics and its per-block join. */
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  gpointer net_state = pow_world_net_state(world);
  guint n_vantages = net->n_vantages && net_state ? net->n_vantages(net_state) : 0;
  if (n_vantages > 0) {
    g_autofree const char **vnames = g_new0(const char *, n_vantages + 1);
    for (guint i = 0; i < n_vantages; i++) vnames[i] = net->vantage_name(net_state, i);
    r->prop = an_prop_new(vnames, n_vantages);
    for (guint i = 0; i < n_vantages && !e; i++) {
      const GArray *sg = net->vantage_sightings(net_state, i);
      for (guint j = 0; j < sg->len; j++)
        if (!an_prop_add(r->prop, &g_array_index(sg, ObsSighting, j), &e)) break;
    }
    if (e || !an_prop_finalize(r->prop, r->chain, &e))
      return fail(error, SIM_RUN_ERROR_RUNTIME, "propagation analysis failed", e);
  }

  /* Transactions: the heights still open are declared from the final chain. */
  TxWorld *txw = pow_world_tx(world);
  if (txw && !tx_world_finish(txw, an_chain_main_block_fn, r->chain, r->window, &e))
    return fail(error, SIM_RUN_ERROR_RUNTIME, "transaction analysis failed", e);
  return TRUE;
}

/* "sim": the engine's figures (the wall-clock ones last: the only fields that differ between runs with the
 * same seed). */
static json_t *sim_json(const SimEngine *engine, const PowWorld *world, const RunResults *r) {
  json_t *sim = json_object();
  json_object_set_new(sim, "events", json_integer((json_int_t)r->st.events));
  json_object_set_new(sim, "entities", json_integer(sim_engine_n_entities(engine)));
  json_object_set_new(sim, "peak_pending", json_integer((json_int_t)r->st.peak_pending));
  json_object_set_new(sim, "end_time_s", json_real(sim_time_to_s(r->st.now)));
  json_object_set_new(sim, "stop_reason", json_string(stop_reason_name(r->why)));
  json_object_set_new(sim, "window_heights", json_integer(r->window));
  const PowNetworkModel *net = (const PowNetworkModel *)pow_world_config(world)->network.model;
  gpointer net_state = pow_world_net_state(world);
  if (net->deliveries && net_state)
    json_object_set_new(sim, "node_block_deliveries", json_integer((json_int_t)net->deliveries(net_state)));
  json_object_set_new(sim, "wall_s", json_real(r->st.wall_s));
  json_object_set_new(sim, "events_per_s", json_real(r->st.wall_s > 0 ? r->st.events / r->st.wall_s : 0));
  json_object_set_new(sim, "peak_rss_bytes", json_integer((json_int_t)sim_peak_rss_bytes()));
  return sim;
}

/* The summary: the header, then each component adds its own keys (the engine, the chain, the vantage points,
 * the transactions' metrics and the world's own, a trace comparison, the pools' strategies). */
static json_t *run_summary(const SimScenario *sc, const SimRunOptions *opt, const SimEngine *engine,
                           const PowWorld *world, const RunResults *r, SimOutDir *out, GError **error) {
  g_autoptr(json_t) summary = json_object();
  json_object_set_new(
      summary, "header",
      sim_output_header(sc->seed, MAX(opt->threads, 1), opt->argc, opt->argv, sc->path, sc->doc));
  json_object_set_new(summary, "sim", sim_json(engine, world, r));
  an_chain_add_json(r->chain, summary);
  if (r->prop) an_prop_add_json(r->prop, summary);
  TxWorld *txw = pow_world_tx(world);
  if (txw) {
    if (r->antx) an_tx_add_json(r->antx, summary);
    tx_world_add_json(txw, summary, r->names);
  }
  GError *e = NULL;
  if (opt->trace && !sim_trace_compare(opt->trace, sc, world, summary, out, &e)) {
    fail(error, SIM_RUN_ERROR_RUNTIME, "trace comparison failed", e);
    return NULL;
  }
  pow_world_add_strategy_json(world, summary);
  return g_steal_pointer(&summary);
}

typedef gboolean (*AnTxCsvWriter)(const AnTx *t, FILE *out);

static gboolean write_antx_csv(SimOutDir *out, const char *name, AnTxCsvWriter fn, const AnTx *t, GError **error) {
  FILE *f = sim_outdir_create(out, name, error);
  if (!f) return FALSE;
  if (!fn(t, f)) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_RUNTIME, "cannot write %s/%s", sim_outdir_path(out), name);
    return FALSE;
  }
  return TRUE;
}

/* Every output file, then the commit of the directory. */
static gboolean run_write(const SimScenario *sc, const SimRunOptions *opt, const PowWorld *world,
                          const RunResults *r, json_t *summary, SimOutDir *out, GError **error) {
  GError *e = NULL;
  TxWorld *txw = pow_world_tx(world);
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  gpointer net_state = pow_world_net_state(world);
  if (!sim_outdir_write_json(out, "summary.json", summary, &e) ||
      !write_csv(out, "blocks.csv", an_chain_write_blocks_csv, r->chain, &e) ||
      !write_csv(out, "pools.csv", an_chain_write_pools_csv, r->chain, &e) ||
      !write_csv(out, "runs.csv", an_chain_write_runs_csv, r->chain, &e) ||
      (r->prop && !write_observations(out, r->prop, r->chain, &e)) ||
      (txw && r->antx && !write_antx_csv(out, "tx_commit.csv", an_tx_write_commit_csv, r->antx, &e)) ||
      (txw && r->antx &&
       !write_antx_csv(out, "tx_commit_samples.csv", an_tx_write_commit_samples_csv, r->antx, &e)) ||
      (txw && tx_world_has_censorship(txw) &&
       !write_tx_csv(out, "censorship.csv", tx_world_write_censorship_csv, txw, &e)) ||
      (opt->emc_logs && !sim_emc_write_logs(out, sc, world, r->chain, &e)) ||
      (opt->n_trace_heights && !write_trace_nodes(out, net, net_state, &e)) ||
      (opt->n_trace_heights && !write_trace_blocks(out, net, net_state, &e)) || !sim_outdir_commit(out, &e))
    return fail(error, SIM_RUN_ERROR_RUNTIME, NULL, e);
  return TRUE;
}

gboolean sim_run(const SimScenario *sc, const SimRunOptions *opt, json_t **summary_out, GError **error) {
  g_autofree char *default_dir = g_build_filename("results", sc->name, NULL);
  const char *dir = opt->out_dir ? opt->out_dir : default_dir;
  GError *e = NULL;

  /* Check the output directory before spending any time on the run. */
  g_autoptr(SimOutDir) out = sim_outdir_open(dir, "run", &e);
  if (!out) return fail(error, SIM_RUN_ERROR_INPUT, NULL, e);

  /* The transaction world's observations go to the metrics (an AnTx made when it names its vantages). */
  RunResults r = {0};
  ObsSink tx_sink, tx_queued;
  an_tx_sink_init(&tx_sink, &r.antx);
  PowConfig cfg = sc->pow;
  cfg.tx_sink = &tx_sink;
  /* With threads for the relay, the metrics' records wait in a queue that is applied in order (obs_async.h)
   * off the chain of blocks: by the relay's second thread between blocks, or with the pipeline (whose threads
   * are busy with relays) by the engine's thread while it waits for a relay's progress. The same results.
   * Freed after the world (whose relay threads may still look at it). */
  ObsAsync *tx_queue = NULL;
  if (opt->threads >= 2) {
    tx_queue = obs_async_new(&tx_sink, 0);
    obs_async_sink(tx_queue, &tx_queued);
    cfg.tx_sink = &tx_queued;
  }
  cfg.vantage_all_messages = opt->emc_logs;
  gboolean ok = FALSE;
  g_autoptr(json_t) summary = NULL;
  g_autoptr(SimEngine) engine = sim_engine_new(sc->seed);
  g_autoptr(NumaModelMachine) numa_machine = NULL;
  PowWorld *world = pow_world_new(&cfg, engine, &e);
  if (!world) {
    fail(error, SIM_RUN_ERROR_INPUT, NULL, e);
    goto done;
  }
  gboolean pipeline = FALSE;
  if (!run_prepare(sc, opt, engine, world, &numa_machine, &pipeline, error)) goto done;
  if (tx_queue) pow_world_set_side_work(world, obs_async_consume, tx_queue);
  Progress prog = {.world = world,
                   .target_height = sc->pow.stop_height,
                   .stop_time = sc->stop.time_s > 0 ? sim_time_from_s(sc->stop.time_s) : SIM_TIME_MAX,
                   .stop_events = (uint64_t)sc->stop.events};
  if (opt->progress && isatty(STDERR_FILENO)) sim_engine_set_progress(engine, on_progress, &prog, 0.1);

  if (opt->emc_logs && pow_world_tx(world)) tx_world_keep_for_logs(pow_world_tx(world));
  r.why = sim_engine_run(engine);
  if (prog.printed) fputc('\n', stderr);
  if (r.why == SIM_STOP_CANCELLED) {
    g_set_error(error, SIM_RUN_ERROR, SIM_RUN_ERROR_CANCELLED, "interrupted; no output written");
    goto done;
  }
  sim_engine_get_stats(engine, &r.st);
  if (opt->on_engine) {
    g_autofree char *note = pow_world_partition_note(world, r.st.wall_s);
    if (tx_queue) {
      guint64 helper = 0, producer = 0;
      obs_async_counts(tx_queue, &helper, &producer);
      char *more = g_strdup_printf("%s\nside work: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                   " transaction-metric records applied %s "
                                   "(the rest %s, where the queue was full or drained)",
                                   note ? note : "", helper, helper + producer,
                                   pipeline ? "by the engine's thread while it waited for a relay"
                                            : "by the relay's second thread between blocks",
                                   pipeline ? "as the records came" : "by the engine's");
      g_free(note);
      note = more;
    }
    opt->on_engine(opt->on_engine_user, engine, note);
  }
  if (opt->relay_stats) pow_world_relay_stats(world, opt->relay_stats);

  if (!run_analyse(sc, world, &r, error)) goto done;
  summary = run_summary(sc, opt, engine, world, &r, out, error);
  if (!summary || !run_write(sc, opt, world, &r, summary, out, error)) goto done;
  if (opt->n_trace_heights)
    warn_trace(opt, (const PowNetworkModel *)sc->pow.network.model, pow_world_net_state(world), r.top);
  if (summary_out) *summary_out = g_steal_pointer(&summary);
  ok = TRUE;
done:
  /* The world first: its transaction world holds the sink, whose AnTx is in r. */
  pow_world_free(world);
  obs_async_free(tx_queue);
  run_results_clear(&r);
  return ok;
}
