/* sync.c: node sync time: snap-sync phases bounded by network, disk and CPU; in-order and multi-machine IBD.
 */
#include "sync.h"
#include "input.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const phase_names[SIM_SYNC_N_PHASES] = {"snap", "healing", "old_headers", "old_bodies",
                                                           "old_receipts"};
static const char *const published_names[SIM_SYNC_N_PUB] = {
    "snap", "healing", "old_headers", "old_bodies", "old_receipts", "attestation", "full"};
static const char *const bound_names[] = {"network", "reads", "writes", "cpu"};

const char *sim_sync_phase_name(SimSyncPhase phase) {
  g_return_val_if_fail(phase < SIM_SYNC_N_PHASES, "?");
  return phase_names[phase];
}

const char *sim_sync_published_name(guint i) {
  g_return_val_if_fail(i < SIM_SYNC_N_PUB, "?");
  return published_names[i];
}

const char *sim_sync_bound_name(SimSyncBound bound) {
  g_return_val_if_fail(bound <= SIM_SYNC_BOUND_CPU, "?");
  return bound_names[bound];
}

/* ---- Parameter tables ----
 * Rates have physical lower bounds, not just "> 0": every phase time divides work by a rate, and a rate of
 * 1e-300 made it inf (printed as inf and a negative h:mm). With work at most 1e9 (GB, M reads, core-h) and
 * rates at least these, every phase but healing stays below 1e16 s: finite, however absurd. Healing is +inf
 * exactly when its repair rate does not exceed the chain's change rate (it never converges: the model's
 * answer, not an overflow); otherwise W0 / (R − a) with R − a at least one ulp of 1e9 stays below 1e50 s. */
#define SYNC_MIN_IOPS 1.0   /* 1 random read per second: slower than any disk ever sold */
#define SYNC_MIN_MBPS 0.001 /* 1 kbit/s or 1 kB/s: slower than a 1990s modem */

static const SimParamSpec machine_params[] = {
    {.name = "name",
     .type = SIM_PARAM_STRING,
     .unit = "",
     .offset = offsetof(SimSyncMachine, name),
     .help = "name of the machine (class)"},
    {.name = "vcpus",
     .type = SIM_PARAM_INT,
     .unit = "",
     .min = 1,
     .max = 1e6,
     .required = TRUE,
     .offset = offsetof(SimSyncMachine, vcpus),
     .help = "virtual CPUs"},
    {.name = "disk_iops",
     .type = SIM_PARAM_NUMBER,
     .unit = "1/s",
     .min = SYNC_MIN_IOPS,
     .max = 1e9,
     .required = TRUE,
     .offset = offsetof(SimSyncMachine, disk_iops),
     .help = "random 4 KiB reads per second with enough parallel readers (at least 1: slower is no disk, and "
             "the times would overflow to inf)"},
    {.name = "single_thread_iops",
     .type = SIM_PARAM_NUMBER,
     .unit = "1/s",
     .min = SYNC_MIN_IOPS,
     .max = 1e9,
     .def = 12500,
     .offset = offsetof(SimSyncMachine, single_thread_iops),
     .help = "what one reader thread reaches (12.5 k on an SSD: Nethermind's sync talk; at least 1)"},
    {.name = "disk_write_mbps",
     .type = SIM_PARAM_NUMBER,
     .unit = "MB/s",
     .min = SYNC_MIN_MBPS,
     .max = 1e7,
     .def = 500,
     .offset = offsetof(SimSyncMachine, disk_write_mbps),
     .help = "sequential write bandwidth (not published for Nethermind's machines: an assumption; at least 1 "
             "kB/s, below any disk, so that times stay finite)"},
    {.name = "net_mbps",
     .type = SIM_PARAM_NUMBER,
     .unit = "Mb/s",
     .min = SYNC_MIN_MBPS,
     .max = 1e7,
     .def = 1000,
     .offset = offsetof(SimSyncMachine, net_mbps),
     .help = "network link (not published for Nethermind's machines: an assumption; at least 1 kbit/s, "
             "below any modem, so that times stay finite)"},
};

static const char *const machine_extra[] = {"comment", "published_min", NULL};

static const SimParamSpec chain_top_params[] = {
    {.name = "name",
     .type = SIM_PARAM_STRING,
     .unit = "",
     .offset = offsetof(SimSyncChain, name),
     .help = "name of the chain description"},
};
static const char *const chain_extra[] = {"comment", "phases", NULL};

/* Built-in mainnet work, calibrated from Nethermind 1.21's table (perf-models.json) as sim_sync_calibrate()
 * does: download volumes from Nethermind's talk (80 GB of state in the first phase, 500 GB in all: blocks
 * 300, receipts 100, the rest headers), peer rates = volume / high-end's time, random reads = mid-end's time
 * × 10 k IOPS (healing's per minute of mid-end's snap), CPU = old-spec's time × 2 vCPUs. */
#define MIN_S 60.0
#define HIGH_NET(gb, min) ((gb)*8000.0 / ((min)*MIN_S))
#define MID_READS(min) ((min)*MIN_S * 10000.0 / 1e6)
#define OLD_CPU(min) ((min)*MIN_S * 2.0 / 3600.0)

#define WORK_ROWS(gb, peer, reads, cpu, net_help, reads_help, cpu_help)                                                \
  {.name = "download_gb",                                                                                    \
   .type = SIM_PARAM_NUMBER,                                                                                 \
   .unit = "GB",                                                                                             \
   .min = 0,                                                                                                 \
   .max = 1e9,                                                                                               \
   .def = gb,                                                                                                \
   .offset = offsetof(SimSyncWork, download_gb),                                                             \
   .help = "bytes to download"},                                                                             \
      {.name = "peer_mbps",                                                                                  \
       .type = SIM_PARAM_NUMBER,                                                                             \
       .unit = "Mb/s",                                                                                       \
       .min = SYNC_MIN_MBPS,                                                                                 \
       .max = 1e9,                                                                                           \
       .def = peer,                                                                                          \
       .offset = offsetof(SimSyncWork, peer_mbps),                                                           \
       .help = net_help},                                                                                    \
      {.name = "read_mops",                                                                                  \
       .type = SIM_PARAM_NUMBER,                                                                             \
       .unit = "M",                                                                                          \
       .min = 0,                                                                                             \
       .max = 1e9,                                                                                           \
       .def = reads,                                                                                         \
       .offset = offsetof(SimSyncWork, read_mops),                                                           \
       .help = reads_help},                                                                                  \
      {.name = "readers",                                                                                    \
       .type = SIM_PARAM_INT,                                                                                \
       .unit = "",                                                                                           \
       .min = 0,                                                                                             \
       .max = 1e6,                                                                                           \
       .def = 0,                                                                                             \
       .offset = offsetof(SimSyncWork, readers),                                                             \
       .help = "reader threads (0: one per vCPU)"},                                                          \
      {.name = "write_gb",                                                                                   \
       .type = SIM_PARAM_NUMBER,                                                                             \
       .unit = "GB",                                                                                         \
       .min = 0,                                                                                             \
       .max = 1e9,                                                                                           \
       .def = gb,                                                                                            \
       .offset = offsetof(SimSyncWork, write_gb),                                                            \
       .help = "bytes to write (the downloaded volume)"},                                                    \
      {.name = "cpu_core_h",                                                                                 \
       .type = SIM_PARAM_NUMBER,                                                                             \
       .unit = "core-h",                                                                                     \
       .min = 0,                                                                                             \
       .max = 1e9,                                                                                           \
       .def = cpu,                                                                                           \
       .offset = offsetof(SimSyncWork, cpu_core_h),                                                          \
       .help = cpu_help},                                                                                    \
  {                                                                                                          \
    .name = "threads", .type = SIM_PARAM_INT, .unit = "", .min = 0, .max = 1e6, .def = 0,                    \
    .offset = offsetof(SimSyncWork, threads), .help = "CPU parallelism (0: all vCPUs)"                       \
  }

#define READS_HELP "random reads, millions (calibrated: mid-end's time x 10 k IOPS)"
#define CPU_HELP "CPU work (calibrated: old-spec's time x 2 vCPUs)"
#define WORK_TABLE(ident, gb, peer, reads, cpu, net_help)                                                    \
  static const SimParamSpec ident[] = {WORK_ROWS(gb, peer, reads, cpu, net_help, READS_HELP, CPU_HELP)}

/* Healing's one fitted constant, from mid-end alone (10 k IOPS, 8 readers: R = 10 k; snap 4:35, healing 1:20):
 * T_heal = a T_s / (R − a) solved for a = R T_heal / (T_s + T_heal) = 10000 x 80 / 355 = 2253.5 reads/s. */
#define MID_HEAL_CHANGE_RATE (10000.0 * 80 / (275 + 80))

WORK_TABLE(snap_params, 80, HIGH_NET(80, 118), MID_READS(275), OLD_CPU(269),
           "rate peers serve it (calibrated: 80 GB in high-end's 1:58)");
static const SimParamSpec healing_params[] = {
    WORK_ROWS(0, 1000, 0, 0, "rate peers serve it (healing's download is not published: 0 GB)",
              "random reads, millions, to repair besides what changed during snap (0: all of it did)",
              "CPU work (0: healing is modelled by its reads alone)"),
    {.name = "change_reads_per_s",
     .type = SIM_PARAM_NUMBER,
     .unit = "1/s",
     .min = 0,
     .max = 1e9,
     .def = MID_HEAL_CHANGE_RATE,
     .offset = offsetof(SimSyncWork, change_reads_per_s),
     .help = "trie-node reads per second of chain time that the state changes cause: state changes per "
             "second x trie nodes per change, only the product matters (fitted on mid-end alone: 10 k IOPS "
             "x 1:20 of healing / (4:35 of snap + 1:20) = 2253.5); healing never ends when its read rate is "
             "at or below this"},
};
WORK_TABLE(headers_params, 20, HIGH_NET(20, 87), MID_READS(103), OLD_CPU(87),
           "rate peers serve it (calibrated: 20 GB in high-end's 1:27)");
WORK_TABLE(bodies_params, 300, HIGH_NET(300, 115), MID_READS(133), OLD_CPU(219),
           "rate peers serve it (calibrated: 300 GB in high-end's 1:55)");
WORK_TABLE(receipts_params, 100, HIGH_NET(100, 182), MID_READS(268), OLD_CPU(483),
           "rate peers serve it (calibrated: 100 GB in high-end's 3:02)");

static const SimParamSpec *const work_tables[SIM_SYNC_N_PHASES] = {
    snap_params, healing_params, headers_params, bodies_params, receipts_params};
static const guint work_n[SIM_SYNC_N_PHASES] = {G_N_ELEMENTS(snap_params), G_N_ELEMENTS(healing_params),
                                                G_N_ELEMENTS(headers_params), G_N_ELEMENTS(bodies_params),
                                                G_N_ELEMENTS(receipts_params)};

void sim_sync_describe(GString *out) {
  g_string_append(out, "machine (JSON object; also: comment, published_min: {snap, healing, old_headers, "
                       "old_bodies, old_receipts, attestation, full} in minutes)\n");
  sim_params_describe(machine_params, G_N_ELEMENTS(machine_params), 6, out);
  g_string_append(out,
                  "chain (JSON object; also: comment, phases: {PHASE: work}; absent phases and keys take "
                  "the built-in mainnet values)\n");
  sim_params_describe(chain_top_params, G_N_ELEMENTS(chain_top_params), 6, out);
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
    g_string_append_printf(out, "  phases.%s\n", phase_names[p]);
    sim_params_describe(work_tables[p], work_n[p], 6, out);
  }
}

/* ---- Built-in descriptions ---- */

SimSyncChain *sim_sync_chain_new_default(void) {
  SimSyncChain *c = g_new0(SimSyncChain, 1);
  c->name = g_strdup("ethereum-mainnet-2023-09 (built in)");
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    sim_params_defaults(work_tables[p], work_n[p], &c->phase[p]);
  return c;
}

void sim_sync_chain_clear(SimSyncChain *chain) {
  if (!chain) return;
  g_clear_pointer(&chain->name, g_free);
}

void sim_sync_chain_free(SimSyncChain *chain) {
  if (!chain) return;
  sim_sync_chain_clear(chain);
  g_free(chain);
}

void sim_sync_machine_free(SimSyncMachine *machine) {
  if (!machine) return;
  g_free(machine->name);
  g_free(machine);
}

/* Nethermind 1.21 docs, "sync" (perf-models.json: nethermind_v1_21_mainnet_hmm), h:mm as minutes. */
static const struct {
  const char *name;
  int64_t vcpus;
  double iops;
  double published_min[SIM_SYNC_N_PUB];
} machine_classes[] = {
    {"high-end", 16, 40000, {118, 4, 87, 115, 182, 123, 423}},
    {"mid-end", 8, 10000, {275, 80, 103, 133, 268, 355, 757}},
    {"old-spec", 2, 44000, {269, 25, 87, 219, 483, 355, 1021}},
};
static const char *const class_names[] = {"high-end", "mid-end", "old-spec", NULL};

const char *const *sim_sync_machine_classes(void) {
  return class_names;
}

SimSyncMachine *sim_sync_machine_new_class(const char *name) {
  for (guint i = 0; i < G_N_ELEMENTS(machine_classes); i++) {
    if (strcmp(machine_classes[i].name, name) != 0) continue;
    SimSyncMachine *m = g_new0(SimSyncMachine, 1);
    sim_params_defaults(machine_params, G_N_ELEMENTS(machine_params), m);
    g_free(m->name);
    m->name = g_strdup(name);
    m->vcpus = machine_classes[i].vcpus;
    m->disk_iops = machine_classes[i].iops;
    memcpy(m->published_min, machine_classes[i].published_min, sizeof m->published_min);
    return m;
  }
  return NULL;
}

/* ---- Loading ---- */

static json_t *parse_root(const char *data, size_t len, SimDiag *diag) {
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  json_t *root = sim_json_parse(data, len, SIM_JSON_DEFAULT, &pb, &e);
  if (!root) {
    sim_diag_add_input_error(diag, e, &pb);
    return NULL;
  }
  if (!json_is_object(root)) {
    sim_diag_add(diag, "$", "must be an object");
    json_decref(root);
    return NULL;
  }
  return root;
}

static void check_comment(json_t *root, SimDiag *diag) {
  json_t *c = json_object_get(root, "comment");
  if (!c || json_is_string(c)) return;
  gboolean ok = json_is_array(c);
  size_t i;
  json_t *v;
  json_array_foreach(c, i, v) ok &= json_is_string(v);
  if (!ok) sim_diag_add(diag, "$.comment", "must be a string or an array of strings");
}

static void parse_published(json_t *root, SimSyncMachine *m, SimDiag *diag) {
  for (guint i = 0; i < SIM_SYNC_N_PUB; i++)
    m->published_min[i] = NAN;
  json_t *pub = json_object_get(root, "published_min");
  if (!pub) return;
  if (!json_is_object(pub)) {
    sim_diag_add(diag, "$.published_min", "must be an object");
    return;
  }
  const char *key;
  json_t *v;
  json_object_foreach(pub, key, v) {
    g_autofree char *path = sim_json_child_path("$.published_min", key);
    guint i = 0;
    while (i < SIM_SYNC_N_PUB && strcmp(published_names[i], key) != 0)
      i++;
    if (i == SIM_SYNC_N_PUB) {
      sim_diag_add(diag, path,
                   "unknown key (expected one of: snap, healing, old_headers, old_bodies, old_receipts, "
                   "attestation, full)");
      continue;
    }
    if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v))) {
      sim_diag_add(diag, path, "must be a number of minutes >= 0");
      continue;
    }
    m->published_min[i] = json_number_value(v);
  }
}

SimSyncMachine *sim_sync_machine_load_data(const char *data, size_t len, SimDiag *diag) {
  g_autoptr(json_t) root = parse_root(data, len, diag);
  if (!root) return NULL;
  g_autoptr(SimSyncMachine) m = g_new0(SimSyncMachine, 1);
  guint before = sim_diag_count(diag);
  sim_params_parse(machine_params, G_N_ELEMENTS(machine_params), root, "$", machine_extra, m, diag);
  check_comment(root, diag);
  parse_published(root, m, diag);
  if (sim_diag_count(diag) != before) return NULL;
  return g_steal_pointer(&m);
}

SimSyncChain *sim_sync_chain_load_data(const char *data, size_t len, SimDiag *diag) {
  g_autoptr(json_t) root = parse_root(data, len, diag);
  if (!root) return NULL;
  g_autoptr(SimSyncChain) c = g_new0(SimSyncChain, 1);
  guint before = sim_diag_count(diag);
  sim_params_parse(chain_top_params, G_N_ELEMENTS(chain_top_params), root, "$", chain_extra, c, diag);
  check_comment(root, diag);
  gboolean seen[SIM_SYNC_N_PHASES] = {FALSE};
  json_t *phases = json_object_get(root, "phases");
  if (phases && !json_is_object(phases)) {
    sim_diag_add(diag, "$.phases", "must be an object");
  } else if (phases) {
    const char *key;
    json_t *v;
    json_object_foreach(phases, key, v) {
      g_autofree char *path = sim_json_child_path("$.phases", key);
      guint p = 0;
      while (p < SIM_SYNC_N_PHASES && strcmp(phase_names[p], key) != 0)
        p++;
      if (p == SIM_SYNC_N_PHASES) {
        sim_diag_add(diag, path,
                     "unknown phase (expected one of: snap, healing, old_headers, old_bodies, "
                     "old_receipts)");
        continue;
      }
      seen[p] = TRUE;
      sim_params_parse(work_tables[p], work_n[p], v, path, (const char *const[]){"comment", NULL},
                       &c->phase[p], diag);
    }
  }
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    if (!seen[p]) sim_params_defaults(work_tables[p], work_n[p], &c->phase[p]);
  if (sim_diag_count(diag) != before) return NULL;
  return g_steal_pointer(&c);
}

/* ---- The model ---- */

static double iops_effective(const SimSyncMachine *m, int64_t readers) {
  double r = (double)(readers > 0 ? readers : m->vcpus);
  return MIN(m->disk_iops, r * m->single_thread_iops);
}

double sim_sync_heal_s(double w0_reads, double change_reads_per_s, double repair_iops) {
  if (!(w0_reads > 0)) return 0;
  /* The geometric series sum_k (a/R)^k converges only for a < R. */
  if (!(repair_iops > change_reads_per_s)) return INFINITY;
  return w0_reads / (repair_iops - change_reads_per_s);
}

double sim_sync_heal_threshold_iops(const SimSyncMachine *m, const SimSyncChain *chain) {
  const SimSyncWork *w = &chain->phase[SIM_SYNC_HEALING];
  double a = w->change_reads_per_s;
  if (!(a > 0)) return 0;
  double r = (double)(w->readers > 0 ? w->readers : m->vcpus);
  return r * m->single_thread_iops > a ? a : INFINITY;
}

void sim_sync_phase_time(const SimSyncMachine *m, const SimSyncWork *w, double changing_s,
                         SimSyncPhaseTime *out) {
  double net_bps = MIN(w->peer_mbps, m->net_mbps) * 1e6;
  out->net_s = w->download_gb > 0 ? w->download_gb * 8e9 / net_bps : 0;
  double iops = iops_effective(m, w->readers);
  if (w->change_reads_per_s > 0)
    out->read_s =
        sim_sync_heal_s(w->read_mops * 1e6 + w->change_reads_per_s * changing_s, w->change_reads_per_s, iops);
  else
    out->read_s = w->read_mops * 1e6 / iops;
  out->write_s = w->write_gb * 1e9 / (m->disk_write_mbps * 1e6);
  double cores = (double)(w->threads > 0 ? MIN(w->threads, m->vcpus) : m->vcpus);
  out->cpu_s = w->cpu_core_h * 3600 / cores;
  const double t[] = {out->net_s, out->read_s, out->write_s, out->cpu_s};
  out->bound = SIM_SYNC_BOUND_NET;
  out->time_s = t[0];
  for (guint i = 1; i < G_N_ELEMENTS(t); i++)
    if (t[i] > out->time_s) {
      out->time_s = t[i];
      out->bound = (SimSyncBound)i;
    }
}

void sim_sync_run(const SimSyncMachine *machine, const SimSyncChain *chain, SimSyncResult *out) {
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
    /* Healing repairs what changed during snap; the other phases (after the head) do not depend on it. */
    double changing_s = p == SIM_SYNC_HEALING ? out->phase[SIM_SYNC_SNAP].time_s : 0;
    sim_sync_phase_time(machine, &chain->phase[p], changing_s, &out->phase[p]);
  }
  const SimSyncWork *h = &chain->phase[SIM_SYNC_HEALING];
  out->heal_repair_iops = iops_effective(machine, h->readers);
  out->heal_change_reads_per_s = h->change_reads_per_s;
  out->heal_work_mreads = h->read_mops + h->change_reads_per_s * out->phase[SIM_SYNC_SNAP].time_s / 1e6;
  out->head_s = out->phase[SIM_SYNC_SNAP].time_s + out->phase[SIM_SYNC_HEALING].time_s;
  out->full_s = MAX(out->head_s, out->phase[SIM_SYNC_OLD_HEADERS].time_s) +
                out->phase[SIM_SYNC_OLD_BODIES].time_s + out->phase[SIM_SYNC_OLD_RECEIPTS].time_s;
}

double sim_sync_duration_s(const SimSyncMachine *machine, const SimSyncChain *chain, SimSyncTarget target) {
  g_return_val_if_fail(machine != NULL, NAN);
  g_autoptr(SimSyncChain) own = chain ? NULL : sim_sync_chain_new_default();
  SimSyncResult r;
  sim_sync_run(machine, chain ? chain : own, &r);
  return target == SIM_SYNC_TARGET_HEAD ? r.head_s : r.full_s;
}

SimTime sim_sync_class_duration(const char *machine_class, SimSyncTarget target) {
  g_autoptr(SimSyncMachine) m = sim_sync_machine_new_class(machine_class);
  if (!m) return -1;
  return sim_time_from_s(sim_sync_duration_s(m, NULL, target));
}

void sim_sync_calibrate(const SimSyncMachine *net_ref, const SimSyncMachine *read_ref,
                        const SimSyncMachine *cpu_ref, const double download_gb[SIM_SYNC_N_PHASES],
                        SimSyncChain *out) {
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
    SimSyncWork *w = &out->phase[p];
    memset(w, 0, sizeof *w);
    w->download_gb = download_gb[p];
    w->write_gb = download_gb[p];
    w->peer_mbps = download_gb[p] > 0 ? download_gb[p] * 8000 / (net_ref->published_min[p] * 60) : 1000;
    w->read_mops = read_ref->published_min[p] * 60 * iops_effective(read_ref, 0) / 1e6;
    w->cpu_core_h = cpu_ref->published_min[p] * 60 * (double)cpu_ref->vcpus / 3600;
    if (p == SIM_SYNC_HEALING) {
      /* One constant, from read_ref alone: R T_heal = a (T_s + T_heal). */
      double ts = read_ref->published_min[SIM_SYNC_SNAP], th = read_ref->published_min[SIM_SYNC_HEALING];
      w->change_reads_per_s = iops_effective(read_ref, 0) * th / (ts + th);
      w->read_mops = 0;
      w->cpu_core_h = 0;
    }
  }
}

/* ---- IBD ---- */

double sim_sync_pipeline_s(uint64_t n_items, const double *stage_s, guint n_stages) {
  if (n_items == 0 || n_stages == 0) return 0;
  double sum = 0, slowest = 0;
  for (guint i = 0; i < n_stages; i++) {
    sum += stage_s[i];
    slowest = MAX(slowest, stage_s[i]);
  }
  return sum + (double)(n_items - 1) * slowest;
}

double sim_sync_amdahl_speedup(double serial_fraction, double n) {
  return 1.0 / (serial_fraction + (1.0 - serial_fraction) / n);
}

void sim_ibd_params_default(SimIbdParams *p) {
  *p = (SimIbdParams){.single_s = 426 * 60.0, .serial_s = 4.403, .bytes = 500e9, .link_bps = 1e9};
}

void sim_ibd_point(const SimIbdParams *p, guint machines, SimIbdPoint *out) {
  g_return_if_fail(machines >= 1);
  double s = p->serial_s / p->single_s;
  double cpu_s = p->single_s * (s + (1 - s) / machines);
  out->machines = machines;
  out->amdahl_speedup = sim_sync_amdahl_speedup(s, machines);
  out->floor_s = p->bytes * 8 / ((double)machines * p->link_bps);
  out->bandwidth_bound = out->floor_s > cpu_s;
  out->time_s = MAX(cpu_s, out->floor_s);
  out->speedup = p->single_s / out->time_s;
}
