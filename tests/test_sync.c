/* test_sync.c: unit tests of the sync model (models/sync.c): phase times and the pipeline on hand-worked
 * numbers, strict loading of machine and chain files with exact messages, the calibration, and the checks
 * against Nethermind's published sync times and the Utreexo report. */
#include "cunit-main.h"
#include "input.h"
#include "params.h"
#include "sync.h"

#include <math.h>
#include <string.h>

static json_t *perf_models(void) {
  /* The published figures ship in scenarios/data/; meson sets SIM_SOURCE_ROOT and runs the tests there. */
  const char *src = g_getenv("SIM_SOURCE_ROOT");
  g_autofree char *path = g_build_filename(src ? src : ".", "scenarios", "data", "perf-models.json", NULL);
  json_error_t err;
  json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
  if (!root) fprintf(stderr, "%s: %s\n", path, err.text);
  return root;
}

/* "7:03" -> 423. */
static double hmm_min(const char *s) {
  unsigned h = 0, m = 0;
  CU_ASSERT_EQUAL(sscanf(s, "%u:%u", &h, &m), 2);
  return h * 60.0 + m;
}

/* The published row of machine `key` in perf-models.json, in minutes, in SIM_SYNC_N_PUB order. */
static void published_row(json_t *root, const char *key, double out[SIM_SYNC_N_PUB]) {
  json_t *nm = json_object_get(json_object_get(root, "sync"), "nethermind_v1_21_mainnet_hmm");
  json_t *cols = json_object_get(nm, "columns"), *row = json_object_get(nm, key);
  CU_ASSERT_EQUAL_FATAL(json_array_size(row), json_array_size(cols));
  const char *names[SIM_SYNC_N_PUB] = {"snap",         "state_sync",  "old_headers", "old_bodies",
                                       "old_receipts", "attestation", "full"};
  for (guint i = 0; i < SIM_SYNC_N_PUB; i++) {
    out[i] = NAN;
    for (size_t c = 0; c < json_array_size(cols); c++)
      if (strcmp(json_string_value(json_array_get(cols, c)), names[i]) == 0)
        out[i] = hmm_min(json_string_value(json_array_get(row, c)));
    CU_ASSERT_FALSE(isnan(out[i]));
  }
}

static const struct {
  const char *cls, *key, *file;
} MACHINES[] = {
    {"high-end", "high_end_16vcpu_40k_iops", "scenarios/sync/high-end.json"},
    {"mid-end", "mid_end_8vcpu_10k_iops", "scenarios/sync/mid-end.json"},
    {"old-spec", "old_spec_2vcpu_44k_iops", "scenarios/sync/old-spec.json"},
};

/* ---- Hand-worked numbers ---- */

static void test_phase_time_hand(void) {
  SimSyncMachine m = {
      .vcpus = 4, .disk_iops = 20000, .single_thread_iops = 10000, .disk_write_mbps = 200, .net_mbps = 400};
  /* network: 10 GB at min(800, 400) Mb/s = 200 s; reads: 6 M at min(20 k, 4 × 10 k) = 300 s;
   * writes: 50 GB at 200 MB/s = 250 s; CPU: 0.5 core-h on 4 cores = 450 s. */
  SimSyncWork w = {.download_gb = 10, .peer_mbps = 800, .read_mops = 6, .write_gb = 50, .cpu_core_h = 0.5};
  SimSyncPhaseTime t;
  sim_sync_phase_time(&m, &w, 0, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.net_s, 200, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(t.read_s, 300, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(t.write_s, 250, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(t.cpu_s, 450, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 450, 1e-9);
  CU_ASSERT_EQUAL(t.bound, SIM_SYNC_BOUND_CPU);
  /* One reader thread: 10 k IOPS however fast the disk (Nethermind's healing before its lock change). */
  w.readers = 1;
  sim_sync_phase_time(&m, &w, 0, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.read_s, 600, 1e-9);
  CU_ASSERT_EQUAL(t.bound, SIM_SYNC_BOUND_READS);
  /* Two CPU threads: 900 s. */
  w.threads = 2;
  sim_sync_phase_time(&m, &w, 0, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.cpu_s, 900, 1e-9);
  /* Peers faster than the link: the link binds. */
  w = (SimSyncWork){.download_gb = 10, .peer_mbps = 100};
  sim_sync_phase_time(&m, &w, 0, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 800, 1e-9);
  CU_ASSERT_EQUAL(t.bound, SIM_SYNC_BOUND_NET);
}

/* head = snap + healing, full = max(head, old_headers) + old_bodies + old_receipts; healing's reads grow
 * with the snap time. */
static void test_pipeline_hand(void) {
  SimSyncMachine m = {
      .vcpus = 1, .disk_iops = 1e6, .single_thread_iops = 1e6, .disk_write_mbps = 1e6, .net_mbps = 1e6};
  SimSyncChain c = {.name = NULL};
  const double cpu_min[SIM_SYNC_N_PHASES] = {100, 10, 150, 40, 60};
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    c.phase[p].cpu_core_h = cpu_min[p] / 60;
  SimSyncResult r;
  sim_sync_run(&m, &c, &r);
  CU_ASSERT_DOUBLE_EQUAL(r.head_s, 110 * 60, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(r.full_s, (150 + 40 + 60) * 60, 1e-6); /* old_headers longer than head */
  c.phase[SIM_SYNC_OLD_HEADERS].cpu_core_h = 1;
  sim_sync_run(&m, &c, &r);
  CU_ASSERT_DOUBLE_EQUAL(r.full_s, (110 + 40 + 60) * 60, 1e-6);
  /* The chain changes 5 k trie nodes a second; 100 min of snap leave W0 = 5000 x 6000 = 30 M reads, repaired
   * at R = 1 M/s while 5 k/s more change: 30e6 / (1e6 - 5e3) = 30.150754 s, below healing's 600 s of CPU. */
  c.phase[SIM_SYNC_HEALING].change_reads_per_s = 5000;
  sim_sync_run(&m, &c, &r);
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_HEALING].read_s, 30e6 / 995e3, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_HEALING].time_s, 600, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r.heal_work_mreads, 30, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r.heal_repair_iops, 1e6, 0);
  /* 500 k/s: W0 = 3e9, 3e9 / 5e5 = 6000 s, twice the naive 3000 s without the feedback. */
  c.phase[SIM_SYNC_HEALING].change_reads_per_s = 5e5;
  sim_sync_run(&m, &c, &r);
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_HEALING].time_s, 6000, 1e-9);
  CU_ASSERT_EQUAL(r.phase[SIM_SYNC_HEALING].bound, SIM_SYNC_BOUND_READS);
  CU_ASSERT_DOUBLE_EQUAL(r.head_s, 12000, 1e-9);
  /* At R = a it never converges: healing, head and full are +inf; the other phases are unchanged. */
  c.phase[SIM_SYNC_HEALING].change_reads_per_s = 1e6;
  sim_sync_run(&m, &c, &r);
  CU_ASSERT_TRUE(isinf(r.phase[SIM_SYNC_HEALING].time_s) && r.phase[SIM_SYNC_HEALING].time_s > 0);
  CU_ASSERT_EQUAL(r.phase[SIM_SYNC_HEALING].bound, SIM_SYNC_BOUND_READS);
  CU_ASSERT_TRUE(isinf(r.head_s) && isinf(r.full_s));
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_OLD_BODIES].time_s, 40 * 60, 1e-9);
}

/* The closed form W0 / (R - a) is the sum of the repair rounds: round 0 repairs W0 in W0/R, meanwhile a W0/R
 * more change, and so on. Summed here round by round (an independent derivation) and compared. */
static void test_heal_series(void) {
  const double cases[][3] = {{3e7, 5000, 1e6}, {1.2e9, 2253.5, 10000}, {5e8, 9000, 10000}, {1, 0.5, 1}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    double w0 = cases[i][0], a = cases[i][1], r = cases[i][2];
    double total = 0, left = w0;
    for (guint k = 0; k < 100000 && left > 1e-9 * w0; k++) {
      double t = left / r;
      total += t;
      left = a * t;
    }
    CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_s(w0, a, r) / total, 1, 1e-9);
  }
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_s(0, 5, 1), 0, 0); /* nothing to repair, even with R <= a */
  CU_ASSERT_TRUE(isinf(sim_sync_heal_s(1, 1, 1)));
  CU_ASSERT_TRUE(isinf(sim_sync_heal_s(1, 2, 1)));
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_s(1e6, 0, 1e3), 1000, 1e-12);
  /* Thresholds: mid-end with the built-in chain: a itself (8 readers x 12.5 k is far above a); one reader of
   * 2000 IOPS cannot keep up at any disk speed; no change rate, no threshold. */
  g_autoptr(SimSyncChain) chain = sim_sync_chain_new_default();
  g_autoptr(SimSyncMachine) mid = sim_sync_machine_new_class("mid-end");
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_threshold_iops(mid, chain), 10000.0 * 80 / 355, 1e-9);
  mid->single_thread_iops = 2000;
  chain->phase[SIM_SYNC_HEALING].readers = 1;
  CU_ASSERT_TRUE(isinf(sim_sync_heal_threshold_iops(mid, chain)));
  chain->phase[SIM_SYNC_HEALING].readers = 2; /* 4000 reads/s > 2253.5 */
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_threshold_iops(mid, chain), 10000.0 * 80 / 355, 1e-9);
  chain->phase[SIM_SYNC_HEALING].change_reads_per_s = 0;
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_heal_threshold_iops(mid, chain), 0, 0);
}

/* The "never catches up" curve on mid-end (8 vCPU) with the built-in chain, by disk IOPS. Expected values
 * from this independent python3 snippet (snap = max(network 80 GB at 90.395 Mb/s = 118 min, reads 165 M / R,
 * writes 80 GB at 500 MB/s, CPU 8.966667 core-h / 8); healing = a snap / (R - a), a = 10000 x 80 / 355):
 *   a = 10000 * 80 / 355
 *   for I in (2250, 2300, 3000, 5000, 20000, 100000):
 *       R = min(I, 8 * 12500); snap = max(118 * 60, 165e6 / R, 160, 269 * 120 / 8)
 *       heal = a * snap / (R - a) if R > a else float("inf"); print(I, snap / 60, heal / 60)
 * 2250: 1222.2222 inf; 2300: 1195.6522 57971.0145; 3000: 916.6667 2767.2956; 5000: 550 451.2821;
 * 20000: 137.5 17.4603; 100000: 118 2.7205 (network-bound snap; R capped at 8 x 12.5 k). */
static void test_heal_threshold_curve(void) {
  g_autoptr(SimSyncChain) chain = sim_sync_chain_new_default();
  g_autoptr(SimSyncMachine) m = sim_sync_machine_new_class("mid-end");
  const double want[][3] = {{2250, 1222.2222222, INFINITY},    {2300, 1195.6521739, 57971.0144928},
                            {3000, 916.6666667, 2767.2955975}, {5000, 550, 451.2820513},
                            {20000, 137.5, 17.4603175},        {100000, 118, 2.7204611}};
  for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
    m->disk_iops = want[i][0];
    SimSyncResult r;
    sim_sync_run(m, chain, &r);
    CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_SNAP].time_s / 60, want[i][1], 1e-6);
    if (isinf(want[i][2])) {
      CU_ASSERT_TRUE(isinf(r.phase[SIM_SYNC_HEALING].time_s));
    } else {
      CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_HEALING].time_s / 60, want[i][2], 1e-6);
    }
  }
}

static void test_ibd_hand(void) {
  const double stages[] = {1, 2, 3};
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_pipeline_s(3, stages, 3), 6 + 2 * 3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_pipeline_s(1, stages, 3), 6, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_pipeline_s(0, stages, 3), 0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_amdahl_speedup(0.5, 2), 4.0 / 3, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_amdahl_speedup(0, 8), 8, 1e-12);
  /* 1000 s on one machine, 100 s serial, 100 GB over 4 × 1 Gb/s = 200 s floor; Amdahl gives 325 s. */
  SimIbdParams p = {.single_s = 1000, .serial_s = 100, .bytes = 100e9, .link_bps = 1e9};
  SimIbdPoint pt;
  sim_ibd_point(&p, 4, &pt);
  CU_ASSERT_DOUBLE_EQUAL(pt.time_s, 325, 1e-9);
  CU_ASSERT_FALSE(pt.bandwidth_bound);
  CU_ASSERT_DOUBLE_EQUAL(pt.floor_s, 200, 1e-9);
  p.link_bps = 0.25e9; /* floor 800 s */
  sim_ibd_point(&p, 4, &pt);
  CU_ASSERT_DOUBLE_EQUAL(pt.time_s, 800, 1e-9);
  CU_ASSERT_TRUE(pt.bandwidth_bound);
  CU_ASSERT_DOUBLE_EQUAL(pt.speedup, 1.25, 1e-12);
}

/* ---- Files ---- */

static void expect_machine_error(const char *json, const char *const *messages, guint n) {
  g_autoptr(SimDiag) diag = sim_diag_new("m.json");
  g_autoptr(SimSyncMachine) m = sim_sync_machine_load_data(json, strlen(json), diag);
  CU_ASSERT_PTR_NULL(m);
  CU_ASSERT_EQUAL(sim_diag_count(diag), n);
  for (guint i = 0; i < n && i < sim_diag_count(diag); i++) {
    if (strcmp(sim_diag_get(diag, i), messages[i]) != 0)
      printf("\n  got: %s\n  expected: %s\n", sim_diag_get(diag, i), messages[i]);
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, i), messages[i]);
  }
}

static void test_machine_errors(void) {
  expect_machine_error("{\"vcpus\": 4, \"disk_iops\": 0}",
                       (const char *[]){"m.json: $.disk_iops: must be in [1, 1e+09] (got 0)"}, 1);
  expect_machine_error("{\"vcpus\": 4, \"disk_iops\": 100, \"net_mbps\": -10, \"disk_write_mbps\": -1}",
                       (const char *[]){"m.json: $.net_mbps: must be in [0.001, 1e+07] (got -10)",
                                        "m.json: $.disk_write_mbps: must be in [0.001, 1e+07] (got -1)"},
                       2);
  expect_machine_error("{\"disk_iops\": 100}", (const char *[]){"m.json: $.vcpus: missing required key"}, 1);
  expect_machine_error(
      "{\"vcpus\": 2, \"disk_iops\": 1, \"cpus\": 3}",
      (const char *[]){"m.json: $.cpus: unknown key (expected one of: name, vcpus, disk_iops, "
                       "single_thread_iops, disk_write_mbps, net_mbps, comment, published_min)"},
      1);
  expect_machine_error("{\"vcpus\": 2,\n \"disk_iops\": 1,\n \"vcpus\": 3}",
                       (const char *[]){"m.json:3:8: duplicate object key near '\"vcpus\"'"}, 1);
  expect_machine_error("  \n", (const char *[]){"m.json:1:1: empty file (expected a JSON object)"}, 1);
  expect_machine_error("[1]", (const char *[]){"m.json: $: must be an object"}, 1);
  expect_machine_error(
      "{\"vcpus\": 2, \"disk_iops\": 1, \"published_min\": {\"snap\": -1, \"warp\": 2}}",
      (const char *[]){"m.json: $.published_min.snap: must be a number of minutes >= 0",
                       "m.json: $.published_min.warp: unknown key (expected one of: snap, healing, "
                       "old_headers, old_bodies, old_receipts, attestation, full)"},
      2);
  /* A missing file is the input layer's (sim sync's message for it: tests/cli/test-cli.sh). */
}

/* Rates have physical lower bounds: at the slowest machine and the heaviest chain the files allow, every
 * time is still finite and positive (1e-300 Mb/s gave inf, and a negative h:mm in the table). */
static void test_extremes_finite(void) {
  /* The heaviest chain's change rate (1e9/s) is above the slowest machine's repair rate (1/s): healing, head
   * and full are +inf, the model's "never catches up". Then 0.5/s, below it: finite again. */
  const char *mj = "{\"vcpus\": 1, \"disk_iops\": 1, \"single_thread_iops\": 1, \"disk_write_mbps\": 0.001,"
                   " \"net_mbps\": 0.001}";
  GString *cj = g_string_new("{\"phases\": {");
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    g_string_append_printf(cj,
                           "%s\"%s\": {\"download_gb\": 1e9, \"peer_mbps\": 0.001, \"read_mops\": 1e9, "
                           "\"write_gb\": 1e9, \"cpu_core_h\": 1e9, \"readers\": 1, \"threads\": 1%s}",
                           p ? ", " : "", sim_sync_phase_name(p),
                           p == SIM_SYNC_HEALING ? ", \"change_reads_per_s\": 1e9" : "");
  g_string_append(cj, "}}");
  g_autoptr(SimDiag) diag = sim_diag_new("x.json");
  g_autoptr(SimSyncMachine) m = sim_sync_machine_load_data(mj, strlen(mj), diag);
  g_autoptr(SimSyncChain) c = sim_sync_chain_load_data(cj->str, cj->len, diag);
  g_string_free(cj, TRUE);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  SimSyncResult r;
  sim_sync_run(m, c, &r);
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
    const SimSyncPhaseTime *t = &r.phase[p];
    const double v[] = {t->net_s, t->read_s, t->write_s, t->cpu_s, t->time_s};
    for (guint i = 0; i < G_N_ELEMENTS(v); i++) {
      if (p == SIM_SYNC_HEALING && (i == 1 || i == 4)) {
        CU_ASSERT(isinf(v[i]) && v[i] > 0);
      } else {
        CU_ASSERT(isfinite(v[i]) && v[i] > 0);
      }
    }
  }
  CU_ASSERT(isinf(r.head_s) && isinf(r.full_s));
  /* 1e9 GB at 1 kbit/s: 8e15 s of snap. */
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_SNAP].time_s, 8e15, 1);
  /* a = 0.5: W0 = 1e15 + 0.5 x 8e15 = 5e15 reads, at 1 - 0.5 per second: 1e16 s, finite. */
  c->phase[SIM_SYNC_HEALING].change_reads_per_s = 0.5;
  sim_sync_run(m, c, &r);
  CU_ASSERT_DOUBLE_EQUAL(r.phase[SIM_SYNC_HEALING].read_s / 1e16, 1, 1e-12);
  CU_ASSERT(isfinite(r.head_s) && r.head_s > 0);
  CU_ASSERT(isfinite(r.full_s) && r.full_s >= r.head_s);
  /* Just below each bound: refused, naming the key. */
  const char *slow =
      "{\"vcpus\": 1, \"disk_iops\": 0.5, \"single_thread_iops\": 1e-300, \"disk_write_mbps\": 0.0009,"
      " \"net_mbps\": 5e-324}";
  expect_machine_error(slow,
                       (const char *[]){"m.json: $.disk_iops: must be in [1, 1e+09] (got 0.5)",
                                        "m.json: $.single_thread_iops: must be in [1, 1e+09] (got 1e-300)",
                                        "m.json: $.disk_write_mbps: must be in [0.001, 1e+07] (got 0.0009)",
                                        "m.json: $.net_mbps: must be in [0.001, 1e+07] (got 4.94066e-324)"},
                       4);
  g_autoptr(SimDiag) cd = sim_diag_new("c.json");
  const char *peer = "{\"phases\": {\"snap\": {\"peer_mbps\": 1e-300}}}";
  CU_ASSERT_PTR_NULL(sim_sync_chain_load_data(peer, strlen(peer), cd));
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(cd), 1);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(cd, 0),
                         "c.json: $.phases.snap.peer_mbps: must be in [0.001, 1e+09] (got 1e-300)");
}

static void test_chain_files(void) {
  const char *json = "{\"name\": \"x\", \"phases\": {\"snap\": {\"download_gb\": 40}, \"old_bodies\": "
                     "{\"cpu_core_h\": -1}, \"warp\": {}}}";
  g_autoptr(SimDiag) diag = sim_diag_new("c.json");
  CU_ASSERT_PTR_NULL(sim_sync_chain_load_data(json, strlen(json), diag));
  CU_ASSERT_EQUAL(sim_diag_count(diag), 2);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0),
                         "c.json: $.phases.old_bodies.cpu_core_h: must be in [0, 1e+09] (got -1)");
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 1),
                         "c.json: $.phases.warp: unknown phase (expected one of: snap, healing, "
                         "old_headers, old_bodies, old_receipts)");
  /* Partial files: what is absent is the built-in chain's. */
  const char *part = "{\"phases\": {\"snap\": {\"download_gb\": 40}}}";
  g_autoptr(SimDiag) d2 = sim_diag_new("c.json");
  g_autoptr(SimSyncChain) c = sim_sync_chain_load_data(part, strlen(part), d2);
  g_autoptr(SimSyncChain) def = sim_sync_chain_new_default();
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_DOUBLE_EQUAL(c->phase[SIM_SYNC_SNAP].download_gb, 40, 0);
  CU_ASSERT_DOUBLE_EQUAL(c->phase[SIM_SYNC_SNAP].read_mops, def->phase[SIM_SYNC_SNAP].read_mops, 0);
  CU_ASSERT_EQUAL(memcmp(&c->phase[SIM_SYNC_HEALING], &def->phase[SIM_SYNC_HEALING], sizeof(SimSyncWork)), 0);
  /* The shipped chain file is the built-in chain written out (6 decimals). */
  g_autoptr(SimDiag) d3 = sim_diag_new("mainnet");
  gsize clen = 0;
  g_autofree char *cdata = sim_input_read_file("scenarios/sync/mainnet-2023.json", 0, &clen, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(cdata);
  g_autoptr(SimSyncChain) shipped = sim_sync_chain_load_data(cdata, clen, d3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(shipped);
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
    const SimSyncWork *a = &shipped->phase[p], *b = &def->phase[p];
    CU_ASSERT_DOUBLE_EQUAL(a->download_gb, b->download_gb, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(a->peer_mbps, b->peer_mbps, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(a->read_mops, b->read_mops, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(a->change_reads_per_s, b->change_reads_per_s, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(a->write_gb, b->write_gb, 1e-6);
    CU_ASSERT_DOUBLE_EQUAL(a->cpu_core_h, b->cpu_core_h, 1e-6);
    CU_ASSERT_EQUAL(a->readers, b->readers);
    CU_ASSERT_EQUAL(a->threads, b->threads);
  }
}

/* The shipped machine files are the built-in classes, and both carry the published row. */
static void test_machine_files(void) {
  g_autoptr(json_t) root = perf_models();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  for (guint i = 0; i < G_N_ELEMENTS(MACHINES); i++) {
    g_autoptr(SimDiag) diag = sim_diag_new(MACHINES[i].file);
    gsize mlen = 0;
    g_autofree char *mdata = sim_input_read_file(MACHINES[i].file, 0, &mlen, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mdata);
    g_autoptr(SimSyncMachine) f = sim_sync_machine_load_data(mdata, mlen, diag);
    g_autoptr(SimSyncMachine) c = sim_sync_machine_new_class(MACHINES[i].cls);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_STRING_EQUAL(f->name, c->name);
    CU_ASSERT_EQUAL(f->vcpus, c->vcpus);
    CU_ASSERT_DOUBLE_EQUAL(f->disk_iops, c->disk_iops, 0);
    CU_ASSERT_DOUBLE_EQUAL(f->single_thread_iops, c->single_thread_iops, 0);
    CU_ASSERT_DOUBLE_EQUAL(f->disk_write_mbps, c->disk_write_mbps, 0);
    CU_ASSERT_DOUBLE_EQUAL(f->net_mbps, c->net_mbps, 0);
    double pub[SIM_SYNC_N_PUB];
    published_row(root, MACHINES[i].key, pub);
    for (guint k = 0; k < SIM_SYNC_N_PUB; k++) {
      CU_ASSERT_DOUBLE_EQUAL(f->published_min[k], pub[k], 0);
      CU_ASSERT_DOUBLE_EQUAL(c->published_min[k], pub[k], 0);
    }
  }
  CU_ASSERT_PTR_NULL(sim_sync_machine_new_class("laptop"));
}

/* ---- Calibration and the published checks ---- */

/* The built-in chain is what sim_sync_calibrate() makes from the three machines' published rows. */
static void test_calibration(void) {
  g_autoptr(SimSyncMachine) high = sim_sync_machine_new_class("high-end");
  g_autoptr(SimSyncMachine) mid = sim_sync_machine_new_class("mid-end");
  g_autoptr(SimSyncMachine) old = sim_sync_machine_new_class("old-spec");
  const double gb[SIM_SYNC_N_PHASES] = {80, 0, 20, 300, 100};
  SimSyncChain cal = {.name = NULL};
  sim_sync_calibrate(high, mid, old, gb, &cal);
  g_autoptr(SimSyncChain) def = sim_sync_chain_new_default();
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    CU_ASSERT_EQUAL(memcmp(&cal.phase[p], &def->phase[p], sizeof(SimSyncWork)), 0);
  /* Healing's one fitted constant: mid-end's R x T_heal / (T_snap + T_heal), and nothing else. */
  CU_ASSERT_DOUBLE_EQUAL(cal.phase[SIM_SYNC_HEALING].change_reads_per_s, 2253.5211268, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(cal.phase[SIM_SYNC_HEALING].read_mops, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(cal.phase[SIM_SYNC_HEALING].cpu_core_h, 0, 0);
  /* The volumes add up to the talk's 500 GB and its first phase's 80 GB. */
  g_autoptr(json_t) root = perf_models();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  json_t *talk = json_object_get(json_object_get(root, "sync"), "nethermind_talk_seed");
  double sum = 0;
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    sum += gb[p];
  CU_ASSERT_DOUBLE_EQUAL(sum, json_number_value(json_object_get(talk, "total_download_gb")), 0);
  CU_ASSERT_DOUBLE_EQUAL(gb[SIM_SYNC_SNAP],
                         json_number_value(json_object_get(talk, "first_phase_download_gb")), 0);
  CU_ASSERT_DOUBLE_EQUAL(gb[SIM_SYNC_OLD_BODIES], json_number_value(json_object_get(talk, "blocks_db_gb")),
                         0);
  CU_ASSERT_DOUBLE_EQUAL(gb[SIM_SYNC_OLD_RECEIPTS],
                         json_number_value(json_object_get(talk, "receipts_db_gb")), 0);
  CU_ASSERT_DOUBLE_EQUAL(high->single_thread_iops,
                         json_number_value(json_object_get(talk, "single_thread_ssd_iops")), 0);
}

/* Checks against Nethermind 1.21's table (docs/perf-sync.md lists which numbers are inputs):
 *  1. the pipeline on the published phase times gives the published full sync within 5% (no model);
 *  2. the model (calibrated chain) gives the published full sync within 5% on every machine;
 *  3. phases whose binding resource was calibrated on that machine come back exactly; healing is fitted on
 *     mid-end only and predicted on the other two. Its predictions are pinned to the values of this
 *     independent python3 snippet (errors +76.1% on high-end and +6.6% on old-spec: printed, not hidden):
 *       a = 10000 * 80 / 355
 *       for name, snap, R in (("high", 118, 40000), ("old", 269, min(44000, 2 * 12500))):
 *           print(name, a * snap / (R - a))       # high 7.0447761, old 26.6501548
 *     head = snap + healing: 125.0447761 and 295.6501548; full = head + bodies + receipts: 422.0447761 and
 *     997.6501548 (old headers are shorter than head on both). */
static void test_nethermind(void) {
  g_autoptr(json_t) root = perf_models();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  g_autoptr(SimSyncChain) chain = sim_sync_chain_new_default();
  printf("\n  machine    pipeline(pub)  model full  published  | model head  attestation\n");
  for (guint i = 0; i < G_N_ELEMENTS(MACHINES); i++) {
    double pub[SIM_SYNC_N_PUB];
    published_row(root, MACHINES[i].key, pub);
    double pipeline = MAX(pub[SIM_SYNC_SNAP] + pub[SIM_SYNC_HEALING], pub[SIM_SYNC_OLD_HEADERS]) +
                      pub[SIM_SYNC_OLD_BODIES] + pub[SIM_SYNC_OLD_RECEIPTS];
    CU_ASSERT_DOUBLE_EQUAL(pipeline / pub[SIM_SYNC_PUB_FULL], 1, 0.05);
    g_autoptr(SimSyncMachine) m = sim_sync_machine_new_class(MACHINES[i].cls);
    SimSyncResult r;
    sim_sync_run(m, chain, &r);
    double full = r.full_s / 60, head = r.head_s / 60;
    printf("  %-9s %8.0f (%+.1f%%) %7.1f (%+.1f%%) %6.0f  | %7.1f (%+.1f%%) %6.0f\n", MACHINES[i].cls,
           pipeline, (pipeline / pub[SIM_SYNC_PUB_FULL] - 1) * 100, full,
           (full / pub[SIM_SYNC_PUB_FULL] - 1) * 100, pub[SIM_SYNC_PUB_FULL], head,
           (head / pub[SIM_SYNC_PUB_ATTESTATION] - 1) * 100, pub[SIM_SYNC_PUB_ATTESTATION]);
    CU_ASSERT_DOUBLE_EQUAL(full / pub[SIM_SYNC_PUB_FULL], 1, 0.05);
    for (guint p = 0; p < SIM_SYNC_N_PHASES; p++) {
      double t = r.phase[p].time_s / 60;
      if (p == SIM_SYNC_HEALING) {
        printf("  %-9s healing: model %.1f min, published %.0f min (%+.1f%%)\n", MACHINES[i].cls, t, pub[p],
               (t / pub[p] - 1) * 100);
        const double want_heal[] = {7.0447761, 80, 26.6501548}, want_full[] = {422.0447761, 756, 997.6501548};
        CU_ASSERT_DOUBLE_EQUAL(t, want_heal[i], 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(head, pub[SIM_SYNC_SNAP] + want_heal[i], 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(full, want_full[i], 1e-6);
        continue;
      }
      CU_ASSERT_DOUBLE_EQUAL(t, pub[p], 1e-6);
    }
  }
  /* Which resource binds: network on high-end, reads on mid-end, CPU on old-spec's snap/bodies/receipts. */
  g_autoptr(SimSyncMachine) old = sim_sync_machine_new_class("old-spec");
  SimSyncResult r;
  sim_sync_run(old, chain, &r);
  CU_ASSERT_EQUAL(r.phase[SIM_SYNC_OLD_RECEIPTS].bound, SIM_SYNC_BOUND_CPU);
  /* The hook: a built-in class to a join delay. */
  CU_ASSERT_EQUAL(sim_sync_class_duration("mid-end", SIM_SYNC_TARGET_HEAD), sim_time_from_s(355 * 60.0));
  CU_ASSERT_EQUAL(sim_sync_class_duration("mid-end", SIM_SYNC_TARGET_FULL), sim_time_from_s(756 * 60.0));
  CU_ASSERT_EQUAL(sim_sync_class_duration("laptop", SIM_SYNC_TARGET_HEAD), -1);
  CU_ASSERT_DOUBLE_EQUAL(sim_sync_duration_s(old, NULL, SIM_SYNC_TARGET_FULL), r.full_s, 1e-9);
}

/* Utreexo: 4.403 s of header download in a 426 min IBD is the serial part: parallel fraction 0.99982; the
 * speedup curve is Amdahl's with that fraction while bandwidth does not bind. */
static void test_utreexo(void) {
  g_autoptr(json_t) root = perf_models();
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  json_t *u = json_object_get(json_object_get(root, "sync"), "utreexo_seed");
  double ibd_min = json_number_value(json_object_get(u, "ibd_minutes_full_sig_checks"));
  double header_s = json_number_value(json_object_get(u, "header_download_s"));
  double published = json_number_value(json_object_get(u, "parallel_fraction"));
  SimIbdParams p;
  sim_ibd_params_default(&p);
  CU_ASSERT_DOUBLE_EQUAL(p.single_s, ibd_min * 60, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.serial_s, header_s, 0);
  double s = p.serial_s / p.single_s;
  printf("\n  parallel fraction: computed %.6f, published %.5f\n", 1 - s, published);
  CU_ASSERT_DOUBLE_EQUAL(1 - s, published, 1e-5);
  printf("  machines  speedup  Amdahl(published fraction)\n");
  const guint ns[] = {1, 2, 4, 8, 16, 32, 64};
  for (guint i = 0; i < G_N_ELEMENTS(ns); i++) {
    SimIbdPoint pt;
    sim_ibd_point(&p, ns[i], &pt);
    double ref = sim_sync_amdahl_speedup(1 - published, ns[i]);
    printf("  %8u  %7.3f  %7.3f\n", ns[i], pt.speedup, ref);
    CU_ASSERT_FALSE(pt.bandwidth_bound);
    CU_ASSERT_DOUBLE_EQUAL(pt.speedup / ref, 1, 1e-3);
    CU_ASSERT_TRUE(pt.speedup <= ns[i]);
    if (ns[i] <= 8) CU_ASSERT_TRUE(pt.speedup > 0.99 * ns[i]);
  }
  /* The bytes (500 GB with the proof cache, the report's 450-500 GB) bind once the links are slow enough:
   * at 100 Mb/s one machine needs 667 min > 426. */
  json_t *cache = json_object_get(u, "download_gb_with_proof_cache");
  CU_ASSERT_DOUBLE_EQUAL(p.bytes / 1e9, json_number_value(json_array_get(cache, 1)), 0);
  p.link_bps = 100e6;
  SimIbdPoint pt;
  sim_ibd_point(&p, 8, &pt);
  CU_ASSERT_TRUE(pt.bandwidth_bound);
  CU_ASSERT_DOUBLE_EQUAL(pt.time_s, 500e9 * 8 / (8 * 100e6), 1e-6);
  /* Without the proof cache (900 GB) the floor doubles. */
  p.bytes = json_number_value(json_object_get(u, "download_gb_without_proof_cache")) * 1e9;
  SimIbdPoint pt2;
  sim_ibd_point(&p, 8, &pt2);
  CU_ASSERT_DOUBLE_EQUAL(pt2.time_s / pt.time_s, 900.0 / 500, 1e-9);
}

int register_suites(void) {
  ADD_SUITE("sync-model", TEST(test_phase_time_hand), TEST(test_pipeline_hand), TEST(test_heal_series),
            TEST(test_heal_threshold_curve), TEST(test_ibd_hand));
  ADD_SUITE("sync-files", TEST(test_machine_errors), TEST(test_extremes_finite), TEST(test_chain_files),
            TEST(test_machine_files));
  ADD_SUITE("sync-published", TEST(test_calibration), TEST(test_nethermind), TEST(test_utreexo));
  return 0;
}
