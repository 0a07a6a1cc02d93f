/* cmd_sync.c: `sim sync MACHINE.json` (snap-sync phase times), `sim sync threshold` (healing's "never catches
 * up" disk IOPS), `sim sync ibd` (multi-machine IBD speedup) and `sim sync describe` (the files' keys). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "sync.h"

#define CMD "sync"
/* IBD on one machine takes at least 0.06 s (--ibd-min) and a link carries at least 1 kbit/s (--mbps). */
#define IBD_MIN_MIN 1e-3
#define IBD_MIN_MBPS 1e-3

static void print_header(const char *command) {
  sim_cli_print_header(CMD, command);
}

/* "7:03" for 423 minutes; "never" for +inf (healing that does not converge). In doubles: the bounds of the
 * machine and chain files keep every other time finite and >= 0, but not within a long (a time can reach
 * 1e48 minutes, and lround overflowed to a negative h:mm). */
static char *hmm(double minutes) {
  if (isinf(minutes) && minutes > 0) return g_strdup("never");
  g_return_val_if_fail(isfinite(minutes) && minutes >= 0, g_strdup("?"));
  double m = round(minutes);
  double rest = fmod(m, 60.0);
  return g_strdup_printf("%.0f:%02.0f", (m - rest) / 60, rest);
}

/* The model's error against a published time in percent: "" without one, against 0, or for "never". */
static char *error_pct(double time_min, double published_min) {
  if (isnan(published_min) || published_min == 0 || !isfinite(time_min)) return g_strdup("");
  return g_strdup_printf("%+.1f", (time_min / published_min - 1) * 100);
}

static void row(gboolean csv, const char *name, const SimSyncPhaseTime *t, double time_s,
                double published_min) {
  g_autofree char *hm = hmm(time_s / 60);
  g_autofree char *pub = isnan(published_min) ? g_strdup("") : g_strdup_printf("%.0f", published_min);
  g_autofree char *err = error_pct(time_s / 60, published_min);
  if (csv) {
    if (t)
      printf("%s,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%s,%s,%s\n", name, t->net_s / 60, t->read_s / 60,
             t->write_s / 60, t->cpu_s / 60, time_s / 60, hm, sim_sync_bound_name(t->bound), pub, err);
    else
      printf("%s,,,,,%.3f,%s,,%s,%s\n", name, time_s / 60, hm, pub, err);
  } else if (t) {
    printf("%-13s %11.1f %9.1f %10.1f %8.1f %9.1f %8s %-8s %13s %9s\n", name, t->net_s / 60, t->read_s / 60,
           t->write_s / 60, t->cpu_s / 60, time_s / 60, hm, sim_sync_bound_name(t->bound), pub, err);
  } else {
    printf("%-13s %11s %9s %10s %8s %9.1f %8s %-8s %13s %9s\n", name, "", "", "", "", time_s / 60, hm, "",
           pub, err);
  }
}

/* Reads a whole file with sim's one input loader (sim/core/input.h): the model parses what it is given. */
static char *read_file(const char *path, size_t *len, SimDiag *diag) {
  g_autoptr(GError) e = NULL;
  gsize n = 0;
  char *data = sim_input_read_file(path, 0, &n, NULL, &e);
  if (!data) sim_diag_add_input_error(diag, e, NULL);
  *len = n;
  return data;
}

static SimSyncMachine *machine_load_file(const char *path, SimDiag *diag) {
  size_t len = 0;
  g_autofree char *data = read_file(path, &len, diag);
  return data ? sim_sync_machine_load_data(data, len, diag) : NULL;
}

static SimSyncChain *chain_load_file(const char *path, SimDiag *diag) {
  size_t len = 0;
  g_autofree char *data = read_file(path, &len, diag);
  return data ? sim_sync_chain_load_data(data, len, diag) : NULL;
}

/* Loads a machine and a chain (the built-in one without --chain), problems on stderr. */
static gboolean load_pair(const char *machine_path, const char *chain_path, SimSyncMachine **m,
                          SimSyncChain **chain) {
  g_autoptr(SimDiag) mdiag = sim_diag_new(machine_path);
  g_autoptr(SimDiag) cdiag = sim_diag_new(chain_path);
  *m = machine_load_file(machine_path, mdiag);
  *chain = chain_path ? chain_load_file(chain_path, cdiag) : sim_sync_chain_new_default();
  if (*m && *chain) return TRUE;
  for (SimDiag *d = mdiag; d; d = d == mdiag ? cdiag : NULL)
    if (sim_diag_count(d)) {
      g_autofree char *msgs = sim_diag_join(d);
      fprintf(stderr, "%s\n", msgs);
    }
  g_clear_pointer(m, sim_sync_machine_free);
  g_clear_pointer(chain, sim_sync_chain_free);
  return FALSE;
}

typedef struct {
  char *chain;
  gboolean csv;
} MachineOpts;

static const SimOpt machine_opts[] = {
    {.name = "chain", .type = SIM_OPT_FILENAME, .offset = offsetof(MachineOpts, chain),
     .help = "Chain description (default: the built-in mainnet)", .arg = "FILE"},
    SIM_OPT_CSV(MachineOpts, csv, "Comma-separated output instead of the aligned table"),
};

static void machine_opts_clear(MachineOpts *o) {
  sim_cli_options_clear(machine_opts, G_N_ELEMENTS(machine_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MachineOpts, machine_opts_clear)

static int sync_machine(int argc, char **argv, const char *command) {
  g_auto(MachineOpts) o = {0};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("MACHINE.json | threshold | ibd | describe - node sync time");
  sim_cli_add_options(ctx, machine_opts, G_N_ELEMENTS(machine_opts), &o);
  g_option_context_set_description(
      ctx,
      "sim sync MACHINE.json [--chain FILE]   per-phase snap-sync times on a machine\n"
      "sim sync threshold MACHINE.json        disk IOPS below which healing never converges "
      "('sim sync threshold --help')\n"
      "sim sync ibd [--machines 1,2,4,8]      out-of-order IBD across machines ('sim sync ibd --help')\n"
      "sim sync describe                      the keys of machine and chain files\n\n"
      "Phase time = max(network, reads, writes, cpu); healing's reads = a x T_snap / (R - a), never when\n"
      "R <= a; head = snap + healing; full = max(head, old_headers) + old_bodies + old_receipts. Bad files: "
      "'FILE:line:col: message' or 'FILE: $.path: message', exit 2.\n"
      "Shipped machines: scenarios/sync/{high-end,mid-end,old-spec}.json; chain: "
      "scenarios/sync/mainnet-2023.json.");
  if (!sim_cli_parse(ctx, CMD, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2)
    return sim_cli_usage_error(CMD, "missing MACHINE (a JSON file), 'threshold', 'ibd' or 'describe'");
  if (argc > 2) return sim_cli_usage_error(CMD, "unexpected argument '%s'", argv[2]);

  g_autoptr(SimSyncMachine) m = NULL;
  g_autoptr(SimSyncChain) chain = NULL;
  if (!load_pair(argv[1], o.chain, &m, &chain)) return SIM_EXIT_USAGE;

  SimSyncResult r;
  sim_sync_run(m, chain, &r);
  print_header(command);
  printf("# machine: %s: %" G_GINT64_FORMAT
         " vCPU, disk %.10g IOPS (%.10g per reader thread), writes %.10g MB/s, "
         "network %.10g Mb/s\n",
         m->name && *m->name ? m->name : argv[1], m->vcpus, m->disk_iops, m->single_thread_iops,
         m->disk_write_mbps, m->net_mbps);
  printf("# chain: %s\n", chain->name && *chain->name ? chain->name : o.chain);
  printf("# phase time = max(network, reads, writes, cpu) in minutes; head = snap + healing (published: "
         "attestation); full = max(head, old_headers) + old_bodies + old_receipts\n");
  if (r.heal_change_reads_per_s > 0)
    printf(
        "# healing: %.6g M reads left by snap, repaired at R = %.6g reads/s while the chain adds a = %.6g/s: "
        "reads = W0 / (R - a)%s\n",
        r.heal_work_mreads, r.heal_repair_iops, r.heal_change_reads_per_s,
        r.heal_repair_iops > r.heal_change_reads_per_s ? "" : ": R <= a, never converges");
  const double *pub = m->published_min;
  gboolean all_pub = TRUE;
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    all_pub &= !isnan(pub[p]);
  if (all_pub && !isnan(pub[SIM_SYNC_PUB_FULL])) {
    double full = MAX(pub[SIM_SYNC_SNAP] + pub[SIM_SYNC_HEALING], pub[SIM_SYNC_OLD_HEADERS]) +
                  pub[SIM_SYNC_OLD_BODIES] + pub[SIM_SYNC_OLD_RECEIPTS];
    g_autofree char *err = error_pct(full, pub[SIM_SYNC_PUB_FULL]);
    printf("# pipeline on the published phase times: full = %.0f min (published %.0f%s%s%s)\n", full,
           pub[SIM_SYNC_PUB_FULL], *err ? ", " : "", err, *err ? "%" : "");
  }
  if (o.csv)
    printf(
        "phase,network_min,reads_min,writes_min,cpu_min,time_min,time_hmm,bound,published_min,error_pct\n");
  else
    printf("%-13s %11s %9s %10s %8s %9s %8s %-8s %13s %9s\n", "phase", "network_min", "reads_min",
           "writes_min", "cpu_min", "time_min", "time_hmm", "bound", "published_min", "error_pct");
  for (guint p = 0; p < SIM_SYNC_N_PHASES; p++)
    row(o.csv, sim_sync_phase_name(p), &r.phase[p], r.phase[p].time_s, pub[p]);
  row(o.csv, "head", NULL, r.head_s, pub[SIM_SYNC_PUB_ATTESTATION]);
  row(o.csv, "full", NULL, r.full_s, pub[SIM_SYNC_PUB_FULL]);
  return SIM_EXIT_OK;
}

typedef struct {
  char *chain, *iops;
  gint64 readers;
  gboolean csv;
} ThresholdOpts;

/* --readers is checked by hand: -1 (not given) lies outside its bounds. */
static const SimOpt threshold_opts[] = {
    {.name = "chain", .type = SIM_OPT_FILENAME, .offset = offsetof(ThresholdOpts, chain),
     .help = "Chain description (default: the built-in mainnet)", .arg = "FILE"},
    {.name = "iops", .type = SIM_OPT_STRING, .offset = offsetof(ThresholdOpts, iops),
     .help = "Disk IOPS to tabulate (default 1000,2000,2250,2300,2500,3000,5000,10000,20000,40000,100000)",
     .arg = "N[,N...]"},
    {.name = "readers", .type = SIM_OPT_INT64, .offset = offsetof(ThresholdOpts, readers),
     .help = "Healing's reader threads (default: the chain's; 1: reads behind one lock, 0: one per vCPU)",
     .arg = "N"},
    SIM_OPT_CSV(ThresholdOpts, csv, "Comma-separated output"),
};

static void threshold_opts_clear(ThresholdOpts *o) {
  sim_cli_options_clear(threshold_opts, G_N_ELEMENTS(threshold_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ThresholdOpts, threshold_opts_clear)

static int sync_threshold(int argc, char **argv, const char *command) {
  g_auto(ThresholdOpts) o = {.readers = -1};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("MACHINE.json - the disk IOPS below which snap sync never catches up");
  sim_cli_add_options(ctx, threshold_opts, G_N_ELEMENTS(threshold_opts), &o);
  g_option_context_set_description(
      ctx,
      "For each disk IOPS, the machine's snap and healing times and whether healing converges:\n"
      "T_heal = W0 / (R - a), W0 = a x T_snap (what changed during snap), R = min(disk IOPS, readers x\n"
      "single-thread IOPS) the repair rate, a the chain's change_reads_per_s. Below R = a it never does.");
  if (!sim_cli_parse(ctx, "sync threshold", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2) return sim_cli_usage_error("sync threshold", "missing MACHINE (a JSON file)");
  if (argc > 2) return sim_cli_usage_error("sync threshold", "unexpected argument '%s'", argv[2]);
  if (o.readers != -1 && !(o.readers >= 0 && o.readers <= 1000000))
    return sim_cli_usage_error("sync threshold",
                               "--readers must be in [0, 1000000] (got %" G_GINT64_FORMAT ")", o.readers);
  g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (!sim_cli_parse_int_list("sync threshold", "--iops",
                              o.iops ? o.iops
                                       : "1000,2000,2250,2300,2500,3000,"
                                         "5000,10000,20000,40000,100000",
                              1, 1000000000, "", list))
    return SIM_EXIT_USAGE;
  g_autoptr(SimSyncMachine) m = NULL;
  g_autoptr(SimSyncChain) chain = NULL;
  if (!load_pair(argv[1], o.chain, &m, &chain)) return SIM_EXIT_USAGE;
  if (o.readers >= 0) chain->phase[SIM_SYNC_HEALING].readers = o.readers;
  const SimSyncWork *h = &chain->phase[SIM_SYNC_HEALING];
  double thr = sim_sync_heal_threshold_iops(m, chain);
  double readers_iops = (double)(h->readers > 0 ? h->readers : m->vcpus) * m->single_thread_iops;

  print_header(command);
  printf("# machine: %s: %" G_GINT64_FORMAT
         " vCPU, %.10g IOPS per reader thread; healing readers: %" G_GINT64_FORMAT
         " (%.10g reads/s at most)\n",
         m->name && *m->name ? m->name : argv[1], m->vcpus, m->single_thread_iops,
         h->readers > 0 ? h->readers : m->vcpus, readers_iops);
  printf("# chain: %s: healing's change rate a = %.10g trie-node reads/s\n",
         chain->name && *chain->name ? chain->name : o.chain, h->change_reads_per_s);
  if (isinf(thr))
    printf("# threshold: never catches up at any disk IOPS (the readers' %.10g reads/s <= a)\n",
           readers_iops);
  else
    printf("# threshold: healing never converges below %.10g disk IOPS\n", thr);
  if (o.csv)
    printf("disk_iops,repair_iops,snap_min,healing_min,head_min,head_hmm,catches_up\n");
  else
    printf("%10s %12s %10s %12s %10s %9s %s\n", "disk_iops", "repair_iops", "snap_min", "healing_min",
           "head_min", "head_hmm", "catches_up");
  for (guint i = 0; i < list->len; i++) {
    m->disk_iops = (double)g_array_index(list, gint64, i);
    SimSyncResult r;
    sim_sync_run(m, chain, &r);
    g_autofree char *hm = hmm(r.head_s / 60);
    const char *ok = isfinite(r.head_s) ? "yes" : "no";
    if (o.csv)
      printf("%.10g,%.10g,%.3f,%.3f,%.3f,%s,%s\n", m->disk_iops, r.heal_repair_iops,
             r.phase[SIM_SYNC_SNAP].time_s / 60, r.phase[SIM_SYNC_HEALING].time_s / 60, r.head_s / 60, hm,
             ok);
    else
      printf("%10.10g %12.10g %10.1f %12.1f %10.1f %9s %s\n", m->disk_iops, r.heal_repair_iops,
             r.phase[SIM_SYNC_SNAP].time_s / 60, r.phase[SIM_SYNC_HEALING].time_s / 60, r.head_s / 60, hm,
             ok);
  }
  return SIM_EXIT_OK;
}

typedef struct {
  char *machines;
  double ibd_min, serial_s, gb, mbps;
  gboolean csv;
} IbdOpts;

/* Physical lower bounds rather than "> 0": a time or a rate of 1e-300 made the times and speedups inf. The
 * bounds are checked in table order; --serial-s's depends on --ibd-min and is checked by hand between them. */
static const SimOpt ibd_opts[] = {
    {.name = "machines", .type = SIM_OPT_STRING, .offset = offsetof(IbdOpts, machines),
     .help = "Machine counts (default 1,2,4,8,16,32)", .arg = "N[,N...]"},
    {.name = "ibd-min", .type = SIM_OPT_DOUBLE, .offset = offsetof(IbdOpts, ibd_min),
     .help = "IBD time on one machine (default 426, Utreexo)", .arg = "MIN", .range = "[0.001, 1e9)",
     .min = IBD_MIN_MIN, .max = 1e9, .max_open = TRUE},
    {.name = "serial-s", .type = SIM_OPT_DOUBLE, .offset = offsetof(IbdOpts, serial_s),
     .help = "Serial part: header download (default 4.403)", .arg = "S"},
    {.name = "gb", .type = SIM_OPT_DOUBLE, .offset = offsetof(IbdOpts, gb),
     .help = "Blocks + proofs to download (default 500)", .arg = "GB", .range = "[0, 1e9)", .min = 0, .max = 1e9,
     .max_open = TRUE},
    {.name = "mbps", .type = SIM_OPT_DOUBLE, .offset = offsetof(IbdOpts, mbps),
     .help = "Each machine's link (default 1000)", .arg = "MBPS", .range = "[0.001, 1e9)", .min = IBD_MIN_MBPS,
     .max = 1e9, .max_open = TRUE},
    SIM_OPT_CSV(IbdOpts, csv, "Comma-separated output"),
};

static void ibd_opts_clear(IbdOpts *o) {
  sim_cli_options_clear(ibd_opts, G_N_ELEMENTS(ibd_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(IbdOpts, ibd_opts_clear)

static int sync_ibd(int argc, char **argv, const char *command) {
  SimIbdParams p;
  sim_ibd_params_default(&p);
  g_auto(IbdOpts) o = {.ibd_min = p.single_s / 60, .serial_s = p.serial_s, .gb = p.bytes / 1e9,
                       .mbps = p.link_bps / 1e6};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- out-of-order IBD over N machines (Utreexo)");
  sim_cli_add_options(ctx, ibd_opts, G_N_ELEMENTS(ibd_opts), &o);
  g_option_context_set_description(
      ctx, "T(N) = max(T(1)*(s + (1-s)/N), bytes*8/(N*link)), s = serial / T(1).\n"
           "Defaults: the Utreexo report (426 min with full signature checks, 4.403 s "
           "of headers, 450-500 GB with the proof cache).");
  if (!sim_cli_parse(ctx, "sync ibd", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error("sync ibd", "unexpected argument '%s'", argv[1]);
  g_autoptr(GArray) ns = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (!sim_cli_parse_int_list("sync ibd", "--machines", o.machines ? o.machines : "1,2,4,8,16,32", 1, 1000000, "",
                              ns))
    return SIM_EXIT_USAGE;
  if (!sim_cli_check_ranges("sync ibd", &ibd_opts[1], 1, &o)) return SIM_EXIT_USAGE;
  if (!(o.serial_s >= 0 && o.serial_s <= o.ibd_min * 60))
    return sim_cli_usage_error("sync ibd", "--serial-s must be in [0, --ibd-min x 60] (got %g)", o.serial_s);
  if (!sim_cli_check_ranges("sync ibd", &ibd_opts[3], 2, &o)) return SIM_EXIT_USAGE;
  p.single_s = o.ibd_min * 60;
  p.serial_s = o.serial_s;
  p.bytes = o.gb * 1e9;
  p.link_bps = o.mbps * 1e6;

  double s = p.serial_s / p.single_s;
  print_header(command);
  printf("# serial part %g s of %g min: s = %.6g, parallel fraction %.6f (Utreexo report: 0.99982)\n",
         p.serial_s, o.ibd_min, s, 1 - s);
  printf("# bandwidth floor: %g GB (blocks + proofs) over N x %g Mb/s\n", o.gb, o.mbps);
  if (o.csv)
    printf("machines,time_min,speedup,amdahl_speedup,efficiency,floor_min,bound\n");
  else
    printf("%8s %9s %8s %14s %10s %9s %s\n", "machines", "time_min", "speedup", "amdahl_speedup",
           "efficiency", "floor_min", "bound");
  for (guint i = 0; i < ns->len; i++) {
    SimIbdPoint pt;
    sim_ibd_point(&p, (guint)g_array_index(ns, gint64, i), &pt);
    const char *bound = pt.bandwidth_bound ? "bandwidth" : "amdahl";
    if (o.csv)
      printf("%u,%.3f,%.4f,%.4f,%.4f,%.3f,%s\n", pt.machines, pt.time_s / 60, pt.speedup, pt.amdahl_speedup,
             pt.speedup / pt.machines, pt.floor_s / 60, bound);
    else
      printf("%8u %9.2f %8.3f %14.3f %10.4f %9.2f %s\n", pt.machines, pt.time_s / 60, pt.speedup,
             pt.amdahl_speedup, pt.speedup / pt.machines, pt.floor_s / 60, bound);
  }
  return SIM_EXIT_OK;
}

int sim_cmd_sync(int argc, char **argv) {
  g_autofree char *command = sim_cli_command_line(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "ibd") == 0) return sync_ibd(argc - 1, argv + 1, command);
  if (argc >= 2 && strcmp(argv[1], "threshold") == 0) return sync_threshold(argc - 1, argv + 1, command);
  if (argc >= 2 && strcmp(argv[1], "describe") == 0) {
    if (argc > 2) return sim_cli_usage_error(CMD, "describe takes no arguments");
    g_autoptr(GString) out = g_string_new(NULL);
    sim_sync_describe(out);
    fputs(out->str, stdout);
    return SIM_EXIT_OK;
  }
  return sync_machine(argc, argv, command);
}
