/* cmd_bft.c: `sim bft`: a PBFT (or hybrid 2f+1) ordering service on each messaging stack, simulated on the
 * event engine, with latency and throughput per stack, n and payload size beside the closed form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "outfile.h"
#include "rdma.h"
#include "registry.h"

#define CMD "bft"

static char *stack_names(gboolean with_all) {
  GString *s = g_string_new(NULL);
  for (const SimStackModel *const *m = sim_stack_models(); *m; m++)
    g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*m)->info.name);
  if (with_all) g_string_append(s, ", all");
  return g_string_free(s, FALSE);
}

typedef struct {
  const char *name;
  SimModelRef ref;
  SimLogGP lg;
} Stack;

static void stack_clear(Stack *s) {
  sim_model_ref_clear(&s->ref);
}

/* Builds the chosen stacks with their parameters: defaults, then `--set STACK.PARAM=VALUE`, then `--gbps`.
 * Problems are printed as "sim bft: $.STACK.PARAM: message". */
static gboolean build_stacks(const char *which, char **sets, double gbps, GArray *stacks) {
  g_autoptr(json_t) root = json_object();
  for (const SimStackModel *const *m = sim_stack_models(); *m; m++)
    json_object_set_new(root, (*m)->info.name, json_pack("{ss}", "model", (*m)->info.name));
  for (char **s = sets; s && *s; s++) {
    const char *dot = strchr(*s, '.');
    g_autofree char *stack = dot ? g_strndup(*s, (gsize)(dot - *s)) : g_strdup(*s);
    if (!sim_stack_find(stack)) {
      g_autofree char *names = stack_names(FALSE);
      sim_cli_usage_error(CMD, "--set %s: unknown stack '%s' (expected one of: %s)", *s, stack, names);
      return FALSE;
    }
    if (dot && g_str_has_prefix(dot + 1, "model")) {
      sim_cli_usage_error(CMD, "--set %s: a stack's model cannot be changed (choose stacks with --stack)",
                          *s);
      return FALSE;
    }
    g_autoptr(GError) e = NULL;
    if (!sim_json_set_path(root, *s, &e)) {
      sim_cli_usage_error(CMD, "--set: %s", e->message);
      return FALSE;
    }
  }
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  gboolean any = FALSE;
  for (const SimStackModel *const *m = sim_stack_models(); *m; m++) {
    if (strcmp(which, "all") != 0 && strcmp(which, (*m)->info.name) != 0) continue;
    any = TRUE;
    Stack s = {.name = (*m)->info.name};
    g_autofree char *path = g_strdup_printf("$.%s", s.name);
    if (sim_model_ref_parse(&s.ref, "stack", s.name, json_object_get(root, s.name), path, diag)) {
      sim_stack_loggp(&s.ref, &s.lg);
      if (!isnan(gbps)) s.lg.G_ns_per_byte = 8.0 / gbps;
      g_array_append_val(stacks, s);
    } else {
      sim_model_ref_clear(&s.ref);
    }
  }
  if (!any) {
    g_autofree char *names = stack_names(TRUE);
    sim_cli_usage_error(CMD, "unknown stack '%s' (expected one of: %s)", which, names);
    return FALSE;
  }
  if (sim_diag_count(diag) > 0) {
    for (guint i = 0; i < sim_diag_count(diag); i++)
      fprintf(stderr, "sim %s: %s\n", CMD, sim_diag_get(diag, i));
    fprintf(stderr, "Try 'sim %s --help'.\n", CMD);
    return FALSE;
  }
  return TRUE;
}

/* A table's header line: comma-separated, or each name right-aligned to its width (negative: left). */
static void print_columns(const char *const *cols, const int *widths, guint n, gboolean csv) {
  for (guint c = 0; c < n; c++) {
    if (csv)
      printf("%s%s", c ? "," : "", cols[c]);
    else
      printf("%s%*s", c ? " " : "", widths[c], cols[c]);
  }
  printf("\n");
}

/* --gbps, read as a string (G_OPTION_ARG_DOUBLE would accept "nan"). The lower bound keeps G = 8/gbps within
 * the stack parameter's own bound (G_ns_per_byte <= 1e6). FALSE after printing the usage error. */
static gboolean parse_gbps(const char *cmd, const char *text, double *gbps) {
  char *end = NULL;
  double v = g_ascii_strtod(text, &end);
  if (!*text || *end || !(v >= 8e-6 && v <= 1e6)) {
    sim_cli_usage_error(cmd, "--gbps must be in [8e-6, 1e6] (got %s)", text);
    return FALSE;
  }
  *gbps = v;
  return TRUE;
}

/* Loads a machine file through the one input layer (sim/core/input.h) and reads it; problems on stderr, each
 * "FILE:LINE:COL: message" or "FILE: $.path: message". FALSE after printing them. */
static gboolean load_rubin_machine(const char *path, SimRubinMachine *m) {
  g_autoptr(SimDiag) diag = sim_diag_new(path);
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) root = sim_json_load_file(path, 0, SIM_JSON_BLANK_AS_SYNTAX, &pb, &e);
  memset(m, 0, sizeof *m);
  if (root && sim_rubin_machine_from_json(root, m, diag)) return TRUE;
  if (!root) sim_diag_add_input_error(diag, e, &pb);
  g_autofree char *msgs = sim_diag_join(diag);
  fprintf(stderr, "%s\n", msgs);
  return FALSE;
}

/* Applies `--set PARAM=VALUE` to the hardware constants. FALSE after printing the usage error. */
static gboolean set_rubin_hw(const char *cmd, char **sets, SimRubinHw *hw) {
  if (!sets || !*sets) return TRUE;
  guint n_params;
  const SimParamSpec *specs = sim_rubin_hw_params(&n_params);
  g_autoptr(json_t) obj = json_object();
  for (guint i = 0; i < n_params; i++) {
    const char *base = (const char *)hw + specs[i].offset;
    json_object_set_new(obj, specs[i].name,
                        specs[i].type == SIM_PARAM_INT ? json_integer(*(const int64_t *)base)
                                                       : json_real(*(const double *)base));
  }
  g_autoptr(json_t) root = json_pack("{sO}", "hardware", obj);
  for (char **s = sets; *s; s++) {
    g_autofree char *full = g_strdup_printf("hardware.%s", *s);
    g_autoptr(GError) e = NULL;
    if (!sim_json_set_path(root, full, &e)) {
      sim_cli_usage_error(cmd, "--set: %s", e->message);
      return FALSE;
    }
  }
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  SimRubinHw parsed;
  memset(&parsed, 0, sizeof parsed);
  if (!sim_params_parse(specs, n_params, json_object_get(root, "hardware"), "$.hardware", NULL, &parsed, diag)) {
    for (guint i = 0; i < sim_diag_count(diag); i++)
      fprintf(stderr, "sim %s: --set: %s\n", cmd, sim_diag_get(diag, i));
    fprintf(stderr, "Try 'sim %s --help'.\n", cmd);
    return FALSE;
  }
  *hw = parsed;
  return TRUE;
}

/* `sim bft rubin` (argv[0] "bft", argv[1] "rubin"): fits the two Java/CPU constants of Rubin's hardware to the
 * RDMA channel's latency gain over TCP, prints them with their standard errors and residuals, then every
 * other published figure as a check with its verdict. */
static int cmd_rubin(int argc, char **argv) {
  const char *cmd = "bft rubin";
  g_autofree char *machine = NULL, *write = NULL;
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
      {"machine", 0, 0, G_OPTION_ARG_FILENAME, &machine,
       "Hardware constants from a machine file (default: built in, as models/machines/rdma/rubin-2018.json); its "
       "stored fit is compared with the refit",
       "FILE"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "A hardware constant, e.g. nic_L_us=1.2 (before the fit)",
       "PARAM=VALUE"},
      {"write", 0, 0, G_OPTION_ARG_FILENAME, &write,
       "Write the machine file (hardware constants and the fit) to FILE, atomically", "FILE"},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- Rubin's stacks: fit, residuals and the published checks");
  g_option_context_add_main_entries(ctx, entries, NULL);
  GString *desc = g_string_new(
      "Rubin (DSN-W 2018) measured Java stacks on 2 Xeon v2 servers, ConnectX-3, a 10 Gb/s switch. Two\n"
      "constants are fitted to one published series only, the RDMA channel's latency gain over TCP (33-43%\n"
      "lower, read as 38% +- 5/sqrt(3) at 1 KiB..100 KB): java_us (Java's CPU per message at each end) and\n"
      "copy_ns_per_byte (one memory copy: NIO's heap/direct copy, serial at the sender and pipelined at the\n"
      "receiver; the kernel's, pipelined with the NIC; the framework's, serial up to fw_copy_max_bytes). tcp-nio\n"
      "is CPU-bound when its two copies per byte at an end outlast the wire. Printed: the fitted values with\n"
      "standard errors, the residuals, and every other published figure as a check computed with those values,\n"
      "nothing refitted, with its verdict (the copies' share: per-byte CPU on tcp-nio's critical path).\n"
      "Exit 0 ok (whatever the verdicts), 1 the fit failed, 2 bad usage or a bad machine file.\n"
      "Hardware constants (--set PARAM=VALUE):\n");
  guint n_params;
  const SimParamSpec *specs = sim_rubin_hw_params(&n_params);
  sim_params_describe(specs, n_params, 2, desc);
  g_option_context_set_description(ctx, desc->str);
  g_string_free(desc, TRUE);
  g_autofree char *command = sim_cli_command_line(argc, argv); /* argv: "bft", "rubin", options */
  argc--;
  argv++;
  if (!sim_cli_parse(ctx, cmd, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);

  SimRubinMachine m;
  memset(&m, 0, sizeof m);
  if (machine) {
    if (!load_rubin_machine(machine, &m)) return SIM_EXIT_USAGE;
  } else {
    m.name = g_strdup("rubin-2018");
    sim_rubin_hw_default(&m.hw);
  }
  SimRubinHw hw = m.hw;
  if (!set_rubin_hw(cmd, sets, &hw)) {
    sim_rubin_machine_clear(&m);
    return SIM_EXIT_USAGE;
  }
  SimRubinFit fit;
  g_autoptr(GError) e = NULL;
  if (!sim_rubin_fit(&hw, &fit, &e)) {
    fprintf(stderr, "sim %s: %s\n", cmd, e->message);
    sim_rubin_machine_clear(&m);
    return SIM_EXIT_RUNTIME;
  }
  if (write) {
    g_autoptr(json_t) doc = sim_rubin_machine_to_json(m.name, &hw, &fit);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    SimOutFile *f = sim_outfile_open(write, &e);
    gboolean ok = f != NULL;
    if (ok) {
      fprintf(sim_outfile_stream(f), "%s\n", text);
      ok = sim_outfile_commit(f, &e);
    }
    sim_outfile_free(f);
    free(text);
    if (!ok) {
      fprintf(stderr, "sim %s: %s\n", cmd, e->message);
      sim_rubin_machine_clear(&m);
      return g_error_matches(e, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO) ? SIM_EXIT_RUNTIME : SIM_EXIT_USAGE;
    }
  }

  sim_cli_print_header(cmd, command);
  printf("# Rubin (DSN-W 2018; perf-models.json rdma_vs_tcp.rubin_2018_seed): 2 servers, 4-core Xeon v2, "
         "ConnectX-3, 10 Gb/s switch, Java stacks\n");
  printf("# hardware %s%s:", m.name, machine ? " (from the machine file)" : " (built in)");
  for (guint i = 0; i < n_params; i++) {
    const char *base = (const char *)&hw + specs[i].offset;
    if (specs[i].type == SIM_PARAM_INT)
      printf(" %s %" G_GINT64_FORMAT, specs[i].name, *(const int64_t *)base);
    else
      printf(" %s %g", specs[i].name, *(const double *)base);
  }
  printf("\n");
  printf("# fit: one published series, the RDMA channel's latency gain over tcp-nio (33-43%% lower), read as "
         "%.1f%% +- %.2f%% at each size; GSL multifit_nlinear, %u iterations\n",
         fit.target * 100, fit.sigma * 100, fit.iterations);
  printf("fitted java_us          = %.4f +- %.4f us   (Java's CPU per message at each end)\n", fit.java_us,
         fit.java_us_se);
  printf("fitted copy_ns_per_byte = %.4f +- %.4f ns/B (one memory copy: %.2f GB/s)\n", fit.copy_ns_per_byte,
         fit.copy_ns_per_byte_se, 1 / fit.copy_ns_per_byte);
  printf("correlation %.3f, chi2 %.4g with %u degrees of freedom\n", fit.correlation, fit.chi2, fit.dof);
  SimLogGP st[SIM_RUBIN_N_STACKS];
  sim_rubin_stacks(&hw, fit.java_us, fit.copy_ns_per_byte, st);
  printf("%8s %14s %18s %14s %12s %14s\n", "bytes", "tcp_one_way_us", "channel_one_way_us", "model_gain_pct",
         "target_pct", "residual_pct");
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t b = SIM_RUBIN_FIT_SIZES[i];
    printf("%8" G_GUINT64_FORMAT " %14.3f %18.3f %14.2f %12.1f %14.3f\n", b,
           sim_loggp_one_way_ns(&st[SIM_RUBIN_TCP], b) / 1e3, sim_loggp_one_way_ns(&st[SIM_RUBIN_CHANNEL], b) / 1e3,
           fit.model_gain[i] * 100, fit.target * 100, fit.residual[i] * 100);
  }
  if (machine && m.has_fit) {
    gboolean same = fabs(m.java_us - fit.java_us) <= 1e-6 * fabs(fit.java_us) &&
                    fabs(m.copy_ns_per_byte - fit.copy_ns_per_byte) <= 1e-6 * fabs(fit.copy_ns_per_byte);
    printf("# stored fit in %s: java_us %.4f, copy_ns_per_byte %.4f: %s\n", machine, m.java_us,
           m.copy_ns_per_byte, same ? "the same as the refit" : "DIFFERS from the refit (regenerate with --write)");
  }
  printf("# checks: the fitted constants, nothing refitted\n");
  printf("%-47s %-34s %7s %9s %17s %6s %9s\n", "check", "published", "bytes", "model_pct", "range_pct", "holds",
         "direction");
  SimRubinCheck checks[SIM_RUBIN_MAX_CHECKS];
  guint nc = sim_rubin_checks(st, checks), held = 0, sign = 0;
  for (guint i = 0; i < nc; i++) {
    const SimRubinCheck *c = &checks[i];
    g_autofree char *range = g_strdup_printf("[%.1f, %.1f]", c->lo * 100, c->hi * 100);
    printf("%-47s %-34s %7" G_GUINT64_FORMAT " %9.2f %17s %6s %9s\n", c->what, c->published, c->bytes,
           c->value * 100, range, c->holds ? "yes" : "no", !c->has_direction ? "-" : c->sign_holds ? "yes" : "no");
    held += c->holds;
    sign += c->sign_holds;
  }
  /* One line per group: which checks hold. */
  guint with_dir = 0;
  for (guint i = 0; i < nc; i++)
    with_dir += checks[i].has_direction;
  printf("# verdict: %u of %u checks hold (%u of the %u gains have the published direction)\n", held, nc, sign,
         with_dir);
  for (guint i = 0; i < nc;) {
    guint j = i, gh = 0, gs = 0;
    while (j < nc && strcmp(checks[j].what, checks[i].what) == 0 && strcmp(checks[j].published, checks[i].published) == 0) {
      gh += checks[j].holds;
      gs += checks[j].sign_holds;
      j++;
    }
    printf("# %s (%s): %s (%u of %u sizes", checks[i].what, checks[i].published,
           gh == j - i ? "HOLDS" : gh == 0 ? "DOES NOT HOLD" : "holds in part", gh, j - i);
    if (checks[i].has_direction) printf("; direction right at %u", gs);
    printf(")\n");
    i = j;
  }
  sim_rubin_machine_clear(&m);
  return SIM_EXIT_OK;
}

int sim_cmd_bft(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "rubin") == 0) return cmd_rubin(argc, argv);
  SimBftConfig base;
  sim_bft_config_default(&base);
  g_autofree char *stack = NULL, *n_list = NULL, *payload_list = NULL, *gbps_str = NULL, *machine = NULL;
  g_auto(GStrv) sets = NULL;
  gint clients = (gint)base.clients, requests = (gint)base.requests, batch = (gint)base.batch,
       window = (gint)base.window;
  gboolean hybrid = FALSE, csv = FALSE;
  double gbps = NAN, verify_us = base.verify_us, verify_ns = base.verify_ns_per_byte,
         exec_us = base.execute_us, usig_us = base.usig_us, crash_us = base.leader_crash_us,
         slow_us = base.leader_delay_us, client_to = base.client_timeout_us, view_to = base.view_timeout_us;
  gint crashed_backups = 0;
  GOptionEntry entries[] = {
      {"stack", 0, 0, G_OPTION_ARG_STRING, &stack,
       "tcp, rdma-send, rdma-write, rdma-channel or all (default)", "NAME"},
      {"n", 0, 0, G_OPTION_ARG_STRING, &n_list, "Replicas, or a comma-separated list (default 4)",
       "N[,N...]"},
      {"payload", 0, 0, G_OPTION_ARG_STRING, &payload_list,
       "Request payload in bytes, or a list (default 1024)", "BYTES[,...]"},
      {"clients", 0, 0, G_OPTION_ARG_INT, &clients, "Closed-loop clients (default 8)", "K"},
      {"requests", 0, 0, G_OPTION_ARG_INT, &requests, "Requests per client (default 200)", "R"},
      {"batch", 0, 0, G_OPTION_ARG_INT, &batch, "Most requests per pre-prepare (default 8)", "B"},
      {"window", 0, 0, G_OPTION_ARG_INT, &window, "Most instances in flight at the primary (default 4)", "W"},
      {"hybrid", 0, 0, G_OPTION_ARG_NONE, &hybrid, "Hybrid protocol with a trusted counter: n = 2f+1", NULL},
      {"gbps", 0, 0, G_OPTION_ARG_STRING, &gbps_str,
       "Link bandwidth for every stack (default: each stack's G)", "GBPS"},
      {"verify-us", 0, 0, G_OPTION_ARG_DOUBLE, &verify_us, "c_v per received message (default 1)", "US"},
      {"verify-ns-per-byte", 0, 0, G_OPTION_ARG_DOUBLE, &verify_ns, "c_v per byte (default 0.5)", "NS"},
      {"execute-us", 0, 0, G_OPTION_ARG_DOUBLE, &exec_us, "CPU per executed request (default 1)", "US"},
      {"usig-us", 0, 0, G_OPTION_ARG_DOUBLE, &usig_us, "Hybrid: trusted-counter CPU per use (default 0)",
       "US"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "A stack parameter, e.g. tcp.o_s_us=3 (see 'sim models "
       "stack')",
       "STACK.PARAM=VALUE"},
      {"crash-leader-us", 0, 0, G_OPTION_ARG_DOUBLE, &crash_us,
       "The view-0 primary crashes at this time (default -1: never)", "US"},
      {"slow-leader-us", 0, 0, G_OPTION_ARG_DOUBLE, &slow_us,
       "The view-0 primary holds each pre-prepare this long (default 0)", "US"},
      {"crashed-backups", 0, 0, G_OPTION_ARG_INT, &crashed_backups,
       "Backups n-1, n-2, ... crashed from the start (default 0)", "K"},
      {"client-timeout-us", 0, 0, G_OPTION_ARG_DOUBLE, &client_to,
       "With faults: a client retransmits to every replica after this long (default 10000)", "US"},
      {"view-timeout-us", 0, 0, G_OPTION_ARG_DOUBLE, &view_to,
       "With faults: a backup holding a request starts a view change after this long (default 20000)", "US"},
      {"machine", 0, 0, G_OPTION_ARG_FILENAME, &machine,
       "Rubin's stacks from a machine file with a fit (tcp-nio, rdma-plain, rdma-channel, rubin), e.g. "
       "models/machines/rdma/rubin-2018.json",
       "FILE"},
      {"csv", 0, 0, G_OPTION_ARG_NONE, &csv, "Comma-separated output instead of the aligned table", NULL},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- PBFT ordering latency and throughput per messaging stack");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx,
      "Simulates n replicas (n = 3f+1; with --hybrid n = 2f+1) and K clients on the event engine with each\n"
      "stack's LogGP costs and prints one row per stack, n and payload: messages, latency (mean, p50, p99),\n"
      "throughput, and the unloaded latency simulated (one client, one request) beside the closed form.\n"
      "'sim bft rubin' compares the RDMA channel's gains over TCP with Rubin's published range.\n"
      "Exit 0 ok, 2 bad usage.");
  g_autofree char *command = sim_cli_command_line(argc, argv);
  if (!sim_cli_parse(ctx, CMD, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error(CMD, "unexpected argument '%s'", argv[1]);

  g_autoptr(GArray) ns = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) payloads = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (!sim_cli_parse_int_list(CMD, "--n", n_list ? n_list : "4", 1, SIM_BFT_MAX_N, "", ns))
    return SIM_EXIT_USAGE;
  if (!sim_cli_parse_int_list(CMD, "--payload", payload_list ? payload_list : "1024", 0,
                              (gint64)SIM_BFT_MAX_PAYLOAD_BYTES, "bytes", payloads))
    return SIM_EXIT_USAGE;
  if (clients < 1) return sim_cli_usage_error(CMD, "--clients must be >= 1 (got %d)", clients);
  if (requests < 1) return sim_cli_usage_error(CMD, "--requests must be >= 1 (got %d)", requests);
  if (batch < 1) return sim_cli_usage_error(CMD, "--batch must be >= 1 (got %d)", batch);
  if (window < 1) return sim_cli_usage_error(CMD, "--window must be >= 1 (got %d)", window);
  if (gbps_str && !parse_gbps(CMD, gbps_str, &gbps)) return SIM_EXIT_USAGE;

  base.hybrid = hybrid;
  base.clients = (guint)clients;
  base.requests = (guint)requests;
  base.batch = (guint)batch;
  base.window = (guint)window;
  base.verify_us = verify_us;
  base.verify_ns_per_byte = verify_ns;
  base.execute_us = exec_us;
  base.usig_us = usig_us;
  if (crashed_backups < 0) return sim_cli_usage_error(CMD, "--crashed-backups must be >= 0 (got %d)", crashed_backups);
  base.leader_crash_us = crash_us;
  base.leader_delay_us = slow_us;
  base.crashed_backups = (guint)crashed_backups;
  base.client_timeout_us = client_to;
  base.view_timeout_us = view_to;
  /* Check every configuration before running any. */
  for (guint i = 0; i < ns->len; i++)
    for (guint j = 0; j < payloads->len; j++) {
      SimBftConfig cfg = base;
      cfg.n = (guint)g_array_index(ns, gint64, i);
      cfg.payload_bytes = (uint64_t)g_array_index(payloads, gint64, j);
      g_autoptr(GError) e = NULL;
      if (!sim_bft_config_check(&cfg, &e)) return sim_cli_usage_error(CMD, "%s", e->message);
    }

  g_autoptr(GArray) stacks = g_array_new(FALSE, FALSE, sizeof(Stack));
  g_array_set_clear_func(stacks, (GDestroyNotify)stack_clear);
  if (machine) {
    if (sets) return sim_cli_usage_error(CMD, "--set changes the built-in stacks, not a --machine file's");
    SimRubinMachine m;
    if (!load_rubin_machine(machine, &m)) return SIM_EXIT_USAGE;
    if (!m.has_fit) {
      sim_rubin_machine_clear(&m);
      return sim_cli_usage_error(CMD, "%s: $.fit: missing (write one with 'sim bft rubin --write FILE')",
                                 machine);
    }
    SimLogGP era[SIM_RUBIN_N_STACKS];
    sim_rubin_stacks(&m.hw, m.java_us, m.copy_ns_per_byte, era);
    sim_rubin_machine_clear(&m);
    for (guint i = 0; i < SIM_RUBIN_N_STACKS; i++) {
      if (stack && strcmp(stack, "all") != 0 && strcmp(stack, sim_rubin_stack_name(i)) != 0) continue;
      Stack s = {.name = sim_rubin_stack_name(i), .lg = era[i]};
      if (!isnan(gbps)) s.lg.G_ns_per_byte = 8.0 / gbps;
      g_array_append_val(stacks, s);
    }
    if (stacks->len == 0)
      return sim_cli_usage_error(CMD, "unknown stack '%s' (expected one of: tcp-nio, rdma-plain, rdma-channel, "
                                      "rubin, all with --machine)", stack);
  } else if (!build_stacks(stack ? stack : "all", sets, gbps, stacks)) {
    return SIM_EXIT_USAGE;
  }

  sim_cli_print_header(CMD, command);
  if (machine) printf("# stacks: Rubin's (Java, ConnectX-3, 10 Gb/s) from %s, with its stored fit\n", machine);
  printf("# protocol: %s, view 0, no faults; %u clients x %u requests, batch %u, window %u; c_v %g us + %g "
         "ns/B; "
         "execute %g us\n",
         hybrid ? "hybrid 2f+1 (MinBFT-like: prepare, commit f+1, reply f+1)"
                : "PBFT (pre-prepare, prepare 2f, commit 2f+1, reply f+1)",
         base.clients, base.requests, base.batch, base.window, base.verify_us, base.verify_ns_per_byte,
         base.execute_us);
  if (hybrid) printf("# trusted counter: %g us per certified send and per check\n", base.usig_us);
  if (sim_bft_faulty(&base))
    printf("# faults: leader crash at %g us%s, slow leader +%g us per pre-prepare, %u crashed backups; client timeout "
           "%g us, view timeout %g us\n",
           base.leader_crash_us, base.leader_crash_us < 0 ? " (never)" : "", base.leader_delay_us,
           base.crashed_backups, base.client_timeout_us, base.view_timeout_us);
  for (guint i = 0; i < stacks->len; i++) {
    const Stack *s = &g_array_index(stacks, Stack, i);
    printf("# %s: o_s %.4g us, o_r %.4g us, O %.4g ns/B, L %.4g us, G %.4g ns/B (%.4g Gb/s), g %.4g us, DMA "
           "%.4g ns/B, DMA read %.4g us, inline %" G_GUINT64_FORMAT " B, MTU %" G_GUINT64_FORMAT " B",
           s->name, s->lg.o_s_ns / 1e3, s->lg.o_r_ns / 1e3, s->lg.O_ns_per_byte, s->lg.L_ns / 1e3,
           s->lg.G_ns_per_byte, s->lg.G_ns_per_byte > 0 ? 8 / s->lg.G_ns_per_byte : 0, s->lg.g_ns / 1e3,
           s->lg.dma_ns_per_byte, s->lg.dma_read_ns / 1e3, s->lg.inline_bytes, s->lg.mtu_bytes);
    if (s->lg.chunk_bytes) printf(", buffer %" G_GUINT64_FORMAT " B", s->lg.chunk_bytes);
    if (s->lg.Os_ns_per_byte > 0 || s->lg.Ps_ns_per_byte > 0 || s->lg.Pr_ns_per_byte > 0)
      printf(", sender serial +%.4g ns/B, pipelined %.4g ns/B (sender) %.4g ns/B (receiver)", s->lg.Os_ns_per_byte,
             s->lg.Ps_ns_per_byte, s->lg.Pr_ns_per_byte);
    if (s->lg.O_max_bytes) printf(", O up to %" G_GUINT64_FORMAT " B", s->lg.O_max_bytes);
    printf("\n");
  }
  for (guint i = 0; i < ns->len; i++) {
    guint n = (guint)g_array_index(ns, gint64, i);
    printf("# messages per instance of one request, n = %u:", n);
    uint64_t sum = 0;
    for (guint k = 0; k <= SIM_BFT_REPLY; k++) {
      if (hybrid && k == SIM_BFT_PREPARE) continue;
      uint64_t c = sim_bft_messages_per_instance(n, hybrid, k);
      sum += c;
      printf(" %s %" G_GUINT64_FORMAT ",",
             hybrid && k == SIM_BFT_PREPREPARE ? "prepare" : sim_bft_kind_name(k), c);
    }
    printf(" total %" G_GUINT64_FORMAT "\n", sum);
  }

  static const char *const cols[] = {"stack",       "n",
                                     "f",           "payload_bytes",
                                     "requests",    "instances",
                                     "messages",    "msgs_per_req",
                                     "lat_mean_us", "lat_p50_us",
                                     "lat_p99_us",  "tput_req_per_s",
                                     "unloaded_us", "closed_form_us",
                                     "one_way_us",  "lat_max_us",
                                     "view",        "reproposed",
                                     "retransmits"};
  static const int widths[] = {-12, 4, 3, 13, 8, 9, 9, 12, 11, 10, 10, 14, 11, 14, 10, 10, 4, 10, 11};
  print_columns(cols, widths, G_N_ELEMENTS(cols), csv);
  for (guint si = 0; si < stacks->len; si++) {
    const Stack *s = &g_array_index(stacks, Stack, si);
    for (guint i = 0; i < ns->len; i++)
      for (guint j = 0; j < payloads->len; j++) {
        SimBftConfig cfg = base;
        cfg.n = (guint)g_array_index(ns, gint64, i);
        cfg.payload_bytes = (uint64_t)g_array_index(payloads, gint64, j);
        SimBftResult r, u;
        g_autoptr(GError) e = NULL;
        SimBftConfig one = cfg;
        one.clients = one.requests = one.batch = 1;
        if (!sim_bft_run(&s->lg, &cfg, &r, &e) || !sim_bft_run(&s->lg, &one, &u, &e)) {
          fprintf(stderr, "sim %s: %s\n", CMD, e->message);
          return SIM_EXIT_RUNTIME;
        }
        double closed = sim_bft_closed_form_ns(&s->lg, &cfg) / 1e3;
        double one_way = sim_loggp_one_way_ns(&s->lg, SIM_BFT_HEADER_BYTES + cfg.payload_bytes) / 1e3;
        if (csv) {
          printf("%s,%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                 ",%" G_GUINT64_FORMAT ",%.4f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%.3f,%.3f,%u,%" G_GUINT64_FORMAT
                 ",%" G_GUINT64_FORMAT "\n",
                 s->name, cfg.n, sim_bft_f(&cfg), cfg.payload_bytes, r.completed, r.instances,
                 r.messages_total, (double)r.messages_total / (double)r.completed, r.latency_mean_us,
                 r.latency_p50_us, r.latency_p99_us, r.throughput_rps, u.latency_mean_us, closed, one_way,
                 r.latency_max_us, r.view, r.reproposed, r.retransmits);
        } else {
          printf("%-12s %4u %3u %13" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
                 " %9" G_GUINT64_FORMAT " %12.2f %11.2f %10.2f %10.2f %14.0f %11.2f %14.2f %10.3f %10.2f %4u %10"
                 G_GUINT64_FORMAT " %11" G_GUINT64_FORMAT "\n",
                 s->name, cfg.n, sim_bft_f(&cfg), cfg.payload_bytes, r.completed, r.instances,
                 r.messages_total, (double)r.messages_total / (double)r.completed, r.latency_mean_us,
                 r.latency_p50_us, r.latency_p99_us, r.throughput_rps, u.latency_mean_us, closed, one_way,
                 r.latency_max_us, r.view, r.reproposed, r.retransmits);
        }
      }
  }
  return SIM_EXIT_OK;
}
