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

/* Writes `text` and a line break to `path` atomically. FALSE after printing the error; *rc is its exit code. */
static gboolean write_atomically(const char *cmd, const char *path, const char *text, int *rc) {
  g_autoptr(GError) e = NULL;
  g_autoptr(SimOutFile) f = sim_outfile_open(path, &e);
  gboolean ok = f != NULL;
  if (ok) {
    fputs(text, sim_outfile_stream(f));
    ok = sim_outfile_commit(f, &e);
  }
  if (!ok) {
    fprintf(stderr, "sim %s: %s\n", cmd, e->message);
    *rc = g_error_matches(e, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO) ? SIM_EXIT_RUNTIME : SIM_EXIT_USAGE;
  }
  return ok;
}

/* Rubin's hardware: from --machine FILE, else built in; then --set. FALSE after printing the problem. */
static gboolean rubin_hardware(const char *cmd, const char *machine, char **sets, SimRubinMachine *m) {
  memset(m, 0, sizeof *m);
  if (machine) {
    if (!load_rubin_machine(machine, m)) return FALSE;
  } else {
    m->name = g_strdup("rubin-2018");
    sim_rubin_hw_default(&m->hw);
  }
  if (!set_rubin_hw(cmd, sets, &m->hw)) {
    sim_rubin_machine_clear(m);
    return FALSE;
  }
  return TRUE;
}

/* ---- sim bft rubin ---- */

typedef struct {
  char *machine, *write;
  char **sets;
} RubinOpts;

static const SimOpt rubin_opts[] = {
    {.name = "machine", .type = SIM_OPT_FILENAME, .offset = offsetof(RubinOpts, machine),
     .help = "Hardware constants from a machine file (default: built in, as models/machines/rdma/rubin-2018.json); its "
             "stored fit is compared with the refit",
     .arg = "FILE"},
    SIM_OPT_SET(RubinOpts, sets, "A hardware constant, e.g. nic_L_us=1.2 (before the fit)", "PARAM=VALUE"),
    {.name = "write", .type = SIM_OPT_FILENAME, .offset = offsetof(RubinOpts, write),
     .help = "Write the machine file (hardware constants and the fit) to FILE, atomically", .arg = "FILE"},
};

static void rubin_opts_clear(RubinOpts *o) {
  sim_cli_options_clear(rubin_opts, G_N_ELEMENTS(rubin_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RubinOpts, rubin_opts_clear)

/* The fit's lines: the hardware, the fitted values, the residual per size, the stored fit compared. */
static void rubin_print_fit(const char *machine, const SimRubinMachine *m, const SimRubinHw *hw,
                            const SimRubinFit *fit, const SimLogGP st[SIM_RUBIN_N_STACKS]) {
  guint n_params;
  const SimParamSpec *specs = sim_rubin_hw_params(&n_params);
  printf("# Rubin (DSN-W 2018; perf-models.json rdma_vs_tcp.rubin_2018_seed): 2 servers, 4-core Xeon v2, "
         "ConnectX-3, 10 Gb/s switch, Java stacks\n");
  printf("# hardware %s%s:", m->name, machine ? " (from the machine file)" : " (built in)");
  for (guint i = 0; i < n_params; i++) {
    const char *base = (const char *)hw + specs[i].offset;
    if (specs[i].type == SIM_PARAM_INT)
      printf(" %s %" G_GINT64_FORMAT, specs[i].name, *(const int64_t *)base);
    else
      printf(" %s %g", specs[i].name, *(const double *)base);
  }
  printf("\n");
  printf("# fit: one published series, the RDMA channel's latency gain over tcp-nio (33-43%% lower), read as "
         "%.1f%% +- %.2f%% at each size; GSL multifit_nlinear, %u iterations\n",
         fit->target * 100, fit->sigma * 100, fit->iterations);
  printf("fitted java_us          = %.4f +- %.4f us   (Java's CPU per message at each end)\n", fit->java_us,
         fit->java_us_se);
  printf("fitted copy_ns_per_byte = %.4f +- %.4f ns/B (one memory copy: %.2f GB/s)\n", fit->copy_ns_per_byte,
         fit->copy_ns_per_byte_se, 1 / fit->copy_ns_per_byte);
  printf("correlation %.3f, chi2 %.4g with %u degrees of freedom\n", fit->correlation, fit->chi2, fit->dof);
  printf("%8s %14s %18s %14s %12s %14s\n", "bytes", "tcp_one_way_us", "channel_one_way_us", "model_gain_pct",
         "target_pct", "residual_pct");
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t b = SIM_RUBIN_FIT_SIZES[i];
    printf("%8" G_GUINT64_FORMAT " %14.3f %18.3f %14.2f %12.1f %14.3f\n", b,
           sim_loggp_one_way_ns(&st[SIM_RUBIN_TCP], b) / 1e3, sim_loggp_one_way_ns(&st[SIM_RUBIN_CHANNEL], b) / 1e3,
           fit->model_gain[i] * 100, fit->target * 100, fit->residual[i] * 100);
  }
  if (machine && m->has_fit) {
    gboolean same = fabs(m->java_us - fit->java_us) <= 1e-6 * fabs(fit->java_us) &&
                    fabs(m->copy_ns_per_byte - fit->copy_ns_per_byte) <= 1e-6 * fabs(fit->copy_ns_per_byte);
    printf("# stored fit in %s: java_us %.4f, copy_ns_per_byte %.4f: %s\n", machine, m->java_us,
           m->copy_ns_per_byte, same ? "the same as the refit" : "DIFFERS from the refit (regenerate with --write)");
  }
}

/* Every check with its verdict, then one line per group saying which hold. */
static void rubin_print_checks(const SimLogGP st[SIM_RUBIN_N_STACKS]) {
  printf("# checks: the fitted constants, nothing refitted\n");
  printf("%-47s %-34s %7s %9s %17s %6s %9s\n", "check", "published", "bytes", "model_pct", "range_pct", "holds",
         "direction");
  SimRubinCheck checks[SIM_RUBIN_MAX_CHECKS];
  guint nc = sim_rubin_checks(st, checks), held = 0, sign = 0, with_dir = 0;
  for (guint i = 0; i < nc; i++) {
    const SimRubinCheck *c = &checks[i];
    g_autofree char *range = g_strdup_printf("[%.1f, %.1f]", c->lo * 100, c->hi * 100);
    printf("%-47s %-34s %7" G_GUINT64_FORMAT " %9.2f %17s %6s %9s\n", c->what, c->published, c->bytes,
           c->value * 100, range, c->holds ? "yes" : "no", !c->has_direction ? "-" : c->sign_holds ? "yes" : "no");
    held += c->holds;
    sign += c->sign_holds;
    with_dir += c->has_direction;
  }
  printf("# verdict: %u of %u checks hold (%u of the %u gains have the published direction)\n", held, nc, sign,
         with_dir);
  for (guint i = 0; i < nc;) {
    guint j = i, gh = 0, gs = 0;
    while (j < nc && strcmp(checks[j].what, checks[i].what) == 0 &&
           strcmp(checks[j].published, checks[i].published) == 0) {
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
}

/* `sim bft rubin` (argv[0] "bft", argv[1] "rubin"): fits the two Java/CPU constants of Rubin's hardware to the
 * RDMA channel's latency gain over TCP, prints them with their standard errors and residuals, then every
 * other published figure as a check with its verdict. */
static int cmd_rubin(int argc, char **argv) {
  const char *cmd = "bft rubin";
  g_auto(RubinOpts) o = {0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- Rubin's stacks: fit, residuals and the published checks");
  sim_cli_add_options(ctx, rubin_opts, G_N_ELEMENTS(rubin_opts), &o);
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
  if (!rubin_hardware(cmd, o.machine, o.sets, &m)) return SIM_EXIT_USAGE;
  SimRubinFit fit;
  g_autoptr(GError) e = NULL;
  int rc = SIM_EXIT_OK;
  if (!sim_rubin_fit(&m.hw, &fit, &e)) {
    fprintf(stderr, "sim %s: %s\n", cmd, e->message);
    rc = SIM_EXIT_RUNTIME;
  } else if (o.write) {
    g_autoptr(json_t) doc = sim_rubin_machine_to_json(m.name, &m.hw, &fit);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    g_autofree char *line = g_strdup_printf("%s\n", text);
    free(text);
    write_atomically(cmd, o.write, line, &rc);
  }
  if (rc == SIM_EXIT_OK) {
    sim_cli_print_header(cmd, command);
    SimLogGP st[SIM_RUBIN_N_STACKS];
    sim_rubin_stacks(&m.hw, fit.java_us, fit.copy_ns_per_byte, st);
    rubin_print_fit(o.machine, &m, &m.hw, &fit, st);
    rubin_print_checks(st);
  }
  sim_rubin_machine_clear(&m);
  return rc;
}

/* ---- sim bft compare-stacks: Rubin's question ---- */

typedef struct {
  char *machine, *n_list, *batch_list, *clients_list, *payload_list, *verify_list, *stacks, *out;
  gint requests, window;
  double verify_ns, exec_us;
  gboolean csv;
} CompareOpts;

static const SimOpt compare_opts[] = {
    {.name = "stacks", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, stacks),
     .help = "rubin (default: Rubin's hardware, tcp-nio, rdma-plain, rdma-channel, rubin) or builtin (tcp, rdma-send, "
             "rdma-write, rdma-channel at 100 Gb/s); the first is the base of the gains",
     .arg = "SET"},
    {.name = "machine", .type = SIM_OPT_FILENAME, .offset = offsetof(CompareOpts, machine),
     .help = "With --stacks rubin: a machine file with a fit (default: the built-in hardware, fitted now)",
     .arg = "FILE"},
    {.name = "n", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, n_list),
     .help = "Replicas, a comma-separated list (default 4,7,10,13)", .arg = "N[,N...]"},
    {.name = "batch", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, batch_list),
     .help = "Most requests per pre-prepare, a list (default 1,8,32)", .arg = "B[,B...]"},
    {.name = "clients", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, clients_list),
     .help = "Closed-loop clients (the load), a list (default 1,8,32)", .arg = "K[,K...]"},
    {.name = "payload", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, payload_list),
     .help = "Request payload in bytes, a list (default 1024)", .arg = "BYTES[,...]"},
    {.name = "verify-us", .type = SIM_OPT_STRING, .offset = offsetof(CompareOpts, verify_list),
     .help = "c_v per received message in us, a list (default 1,50: a MAC, a signature)", .arg = "US[,US...]"},
    {.name = "verify-ns-per-byte", .type = SIM_OPT_DOUBLE, .offset = offsetof(CompareOpts, verify_ns),
     .help = "c_v per byte (default 0.5)", .arg = "NS"},
    {.name = "execute-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(CompareOpts, exec_us),
     .help = "CPU per executed request (default 1)", .arg = "US"},
    {.name = "requests", .type = SIM_OPT_INT, .offset = offsetof(CompareOpts, requests),
     .help = "Requests per client (default 25)", .arg = "R", .range = ">= 1", .min = 1, .max = G_MAXINT},
    {.name = "window", .type = SIM_OPT_INT, .offset = offsetof(CompareOpts, window),
     .help = "Most instances in flight at the primary (default 4)", .arg = "W", .range = ">= 1", .min = 1,
     .max = G_MAXINT},
    SIM_OPT_CSV(CompareOpts, csv, "Comma-separated output instead of the aligned table"),
    SIM_OPT_OUT(CompareOpts, out, "Also write the table as CSV to FILE, atomically", "FILE"),
};

static void compare_opts_clear(CompareOpts *o) {
  sim_cli_options_clear(compare_opts, G_N_ELEMENTS(compare_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(CompareOpts, compare_opts_clear)

/* A comma-separated list of numbers in [0, 1e6] (c_v in µs). FALSE after printing the usage error. */
static gboolean parse_double_list(const char *cmd, const char *opt, const char *text, GArray *out) {
  g_auto(GStrv) items = g_strsplit(text, ",", -1);
  for (char **it = items; *it; it++) {
    char *end = NULL;
    double v = g_ascii_strtod(*it, &end);
    if (**it == '\0' || *end != '\0' || !(v >= 0 && v <= 1e6)) {
      sim_cli_usage_error(cmd, "%s: '%s' is not a number in [0, 1e6]", opt, *it);
      return FALSE;
    }
    g_array_append_val(out, v);
  }
  if (out->len == 0) {
    sim_cli_usage_error(cmd, "%s: empty list", opt);
    return FALSE;
  }
  return TRUE;
}

/* The stacks compared, the base first. FALSE after printing the problem. */
static gboolean compare_stacks_of(const char *cmd, const CompareOpts *o, GArray *lgs, GPtrArray *names,
                                  GString *about) {
  const char *set = o->stacks ? o->stacks : "rubin";
  if (strcmp(set, "builtin") == 0) {
    if (o->machine) {
      sim_cli_usage_error(cmd, "--machine is for --stacks rubin");
      return FALSE;
    }
    for (const SimStackModel *const *m = sim_stack_models(); *m; m++) {
      SimLogGP lg;
      sim_stack_default_loggp((*m)->info.name, &lg);
      g_array_append_val(lgs, lg);
      g_ptr_array_add(names, (gpointer)(*m)->info.name);
    }
    g_string_append(about, "the built-in stacks at their defaults (ConnectX-4, 100 Gb/s, kernel TCP)");
    return TRUE;
  }
  if (strcmp(set, "rubin") != 0) {
    sim_cli_usage_error(cmd, "--stacks must be rubin or builtin (got '%s')", set);
    return FALSE;
  }
  SimRubinMachine m;
  if (!rubin_hardware(cmd, o->machine, NULL, &m)) return FALSE;
  double java = m.java_us, copy = m.copy_ns_per_byte;
  if (o->machine && !m.has_fit) {
    sim_rubin_machine_clear(&m);
    sim_cli_usage_error(cmd, "%s: $.fit: missing (write one with 'sim bft rubin --write FILE')", o->machine);
    return FALSE;
  }
  if (!o->machine) {
    SimRubinFit fit;
    g_autoptr(GError) e = NULL;
    gboolean ok = sim_rubin_fit(&m.hw, &fit, &e);
    g_assert(ok); /* the built-in hardware fits (tests/test_rdma.c) */
    java = fit.java_us;
    copy = fit.copy_ns_per_byte;
  }
  SimLogGP st[SIM_RUBIN_N_STACKS];
  sim_rubin_stacks(&m.hw, java, copy, st);
  for (guint i = 0; i < SIM_RUBIN_N_STACKS; i++) {
    g_array_append_val(lgs, st[i]);
    g_ptr_array_add(names, (gpointer)sim_rubin_stack_name(i));
  }
  g_string_append_printf(about, "Rubin's (Java, ConnectX-3, 10 Gb/s) %s, java_us %.4f, copy_ns_per_byte %.4f",
                         o->machine ? "from the machine file's fit" : "built in, fitted now", java, copy);
  sim_rubin_machine_clear(&m);
  return TRUE;
}

/* `sim bft compare-stacks`: every combination of n, batch, clients, payload and c_v on each stack, with the
 * gains over the base stack: what a stack changes in the ordering service, and where that vanishes. */
static int cmd_compare(int argc, char **argv) {
  const char *cmd = "bft compare-stacks";
  SimBftConfig base;
  sim_bft_config_default(&base);
  g_auto(CompareOpts) o = {.requests = 25, .window = (gint)base.window, .verify_ns = base.verify_ns_per_byte,
                           .exec_us = base.execute_us};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- Rubin's question: what each stack changes in PBFT's latency and throughput");
  sim_cli_add_options(ctx, compare_opts, G_N_ELEMENTS(compare_opts), &o);
  g_option_context_set_description(
      ctx,
      "Runs the PBFT simulation of 'sim bft' for every combination of --n, --batch, --clients, --payload and\n"
      "--verify-us on each stack, and prints one row per combination and stack: mean and p99 latency,\n"
      "throughput, and the gains over the first stack (tcp-nio or tcp): lat_gain_pct = 100 (1 - latency /\n"
      "base's), tput_gain_pct = 100 (throughput / base's - 1). Where a gain is near 0 the stack no longer\n"
      "matters beside c_v (crypto), batching or the replicas' quorums. Exit 0 ok, 2 bad usage.");
  g_autofree char *command = sim_cli_command_line(argc, argv);
  argc--;
  argv++;
  if (!sim_cli_parse(ctx, cmd, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
  g_autoptr(GArray) ns = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) batches = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) clients = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) payloads = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) cvs = g_array_new(FALSE, FALSE, sizeof(double));
  if (!sim_cli_parse_int_list(cmd, "--n", o.n_list ? o.n_list : "4,7,10,13", 1, SIM_BFT_MAX_N, "", ns) ||
      !sim_cli_parse_int_list(cmd, "--batch", o.batch_list ? o.batch_list : "1,8,32", 1, SIM_BFT_MAX_BATCH, "",
                              batches) ||
      !sim_cli_parse_int_list(cmd, "--clients", o.clients_list ? o.clients_list : "1,8,32", 1, 100000, "",
                              clients) ||
      !sim_cli_parse_int_list(cmd, "--payload", o.payload_list ? o.payload_list : "1024", 0,
                              (gint64)SIM_BFT_MAX_PAYLOAD_BYTES, "bytes", payloads) ||
      !parse_double_list(cmd, "--verify-us", o.verify_list ? o.verify_list : "1,50", cvs) ||
      !sim_cli_check_ranges(cmd, compare_opts, G_N_ELEMENTS(compare_opts), &o))
    return SIM_EXIT_USAGE;
  base.requests = (guint)o.requests;
  base.window = (guint)o.window;
  base.verify_ns_per_byte = o.verify_ns;
  base.execute_us = o.exec_us;
  /* Every combination, checked before any runs. */
  g_autoptr(GArray) cfgs = g_array_new(FALSE, FALSE, sizeof(SimBftConfig));
  for (guint a = 0; a < ns->len; a++)
    for (guint b = 0; b < batches->len; b++)
      for (guint c = 0; c < clients->len; c++)
        for (guint p = 0; p < payloads->len; p++)
          for (guint v = 0; v < cvs->len; v++) {
            SimBftConfig cfg = base;
            cfg.n = (guint)g_array_index(ns, gint64, a);
            cfg.batch = (guint)g_array_index(batches, gint64, b);
            cfg.clients = (guint)g_array_index(clients, gint64, c);
            cfg.payload_bytes = (uint64_t)g_array_index(payloads, gint64, p);
            cfg.verify_us = g_array_index(cvs, double, v);
            g_autoptr(GError) e = NULL;
            if (!sim_bft_config_check(&cfg, &e)) return sim_cli_usage_error(cmd, "%s", e->message);
            g_array_append_val(cfgs, cfg);
          }
  g_autoptr(GArray) lgs = g_array_new(FALSE, FALSE, sizeof(SimLogGP));
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  g_autoptr(GString) about = g_string_new(NULL);
  if (!compare_stacks_of(cmd, &o, lgs, names, about)) return SIM_EXIT_USAGE;

  static const char *const cols[] = {"n",          "f",           "batch",          "clients",
                                     "payload_bytes", "verify_us", "stack",          "lat_mean_us",
                                     "lat_p99_us", "tput_req_per_s", "lat_gain_pct", "tput_gain_pct"};
  static const int widths[] = {3, 2, 5, 7, 13, 9, -12, 11, 10, 14, 12, 13};
  g_autoptr(GString) csv = g_string_new(NULL);
  for (guint c = 0; c < G_N_ELEMENTS(cols); c++)
    g_string_append_printf(csv, "%s%s", c ? "," : "", cols[c]);
  g_string_append_c(csv, '\n');
  sim_cli_print_header(cmd, command);
  printf("# stacks: %s; the base of the gains: %s\n", about->str, (const char *)names->pdata[0]);
  printf("# protocol: PBFT, view 0, no faults; %u requests per client, window %u; c_v per byte %g ns, execute %g "
         "us\n",
         base.requests, base.window, base.verify_ns_per_byte, base.execute_us);
  print_columns(cols, widths, G_N_ELEMENTS(cols), o.csv);
  g_autofree SimBftStackOutcome *res = g_new0(SimBftStackOutcome, lgs->len);
  for (guint k = 0; k < cfgs->len; k++) {
    const SimBftConfig *cfg = &g_array_index(cfgs, SimBftConfig, k);
    g_autoptr(GError) e = NULL;
    if (!sim_bft_compare((const SimLogGP *)(void *)lgs->data, lgs->len, 0, cfg, res, &e)) {
      fprintf(stderr, "sim %s: %s\n", cmd, e->message);
      return SIM_EXIT_RUNTIME;
    }
    for (guint i = 0; i < lgs->len; i++) {
      const SimBftResult *r = &res[i].result;
      g_autofree char *row = g_strdup_printf(
          "%u,%u,%u,%u,%" G_GUINT64_FORMAT ",%g,%s,%.3f,%.3f,%.1f,%.2f,%.2f", cfg->n, sim_bft_f(cfg), cfg->batch,
          cfg->clients, cfg->payload_bytes, cfg->verify_us, (const char *)names->pdata[i], r->latency_mean_us,
          r->latency_p99_us, r->throughput_rps, res[i].latency_gain * 100, res[i].throughput_gain * 100);
      g_string_append_printf(csv, "%s\n", row);
      if (o.csv) {
        printf("%s\n", row);
      } else {
        printf("%3u %2u %5u %7u %13" G_GUINT64_FORMAT " %9g %-12s %11.2f %10.2f %14.0f %12.2f %13.2f\n", cfg->n,
               sim_bft_f(cfg), cfg->batch, cfg->clients, cfg->payload_bytes, cfg->verify_us,
               (const char *)names->pdata[i], r->latency_mean_us, r->latency_p99_us, r->throughput_rps,
               res[i].latency_gain * 100, res[i].throughput_gain * 100);
      }
    }
  }
  int rc = SIM_EXIT_OK;
  if (o.out) write_atomically(cmd, o.out, csv->str, &rc);
  return rc;
}

/* ---- sim bft ---- */

typedef struct {
  char *stack, *n_list, *payload_list, *gbps_str, *machine;
  char **sets;
  gint clients, requests, batch, window, crashed_backups;
  gboolean hybrid, csv;
  double verify_us, verify_ns, exec_us, usig_us, crash_us, slow_us, client_to, view_to;
} BftOpts;

/* Bounds that this table checks read as before: "--clients must be >= 1 (got 0)". --n, --payload and --gbps are
 * strings, parsed where the command line is checked; --crashed-backups is checked after them. */
static const SimOpt bft_opts[] = {
    {.name = "stack", .type = SIM_OPT_STRING, .offset = offsetof(BftOpts, stack),
     .help = "tcp, rdma-send, rdma-write, rdma-channel or all (default)", .arg = "NAME"},
    {.name = "n", .type = SIM_OPT_STRING, .offset = offsetof(BftOpts, n_list),
     .help = "Replicas, or a comma-separated list (default 4)", .arg = "N[,N...]"},
    {.name = "payload", .type = SIM_OPT_STRING, .offset = offsetof(BftOpts, payload_list),
     .help = "Request payload in bytes, or a list (default 1024)", .arg = "BYTES[,...]"},
    {.name = "clients", .type = SIM_OPT_INT, .offset = offsetof(BftOpts, clients),
     .help = "Closed-loop clients (default 8)", .arg = "K", .range = ">= 1", .min = 1, .max = G_MAXINT},
    {.name = "requests", .type = SIM_OPT_INT, .offset = offsetof(BftOpts, requests),
     .help = "Requests per client (default 200)", .arg = "R", .range = ">= 1", .min = 1, .max = G_MAXINT},
    {.name = "batch", .type = SIM_OPT_INT, .offset = offsetof(BftOpts, batch),
     .help = "Most requests per pre-prepare (default 8)", .arg = "B", .range = ">= 1", .min = 1, .max = G_MAXINT},
    {.name = "window", .type = SIM_OPT_INT, .offset = offsetof(BftOpts, window),
     .help = "Most instances in flight at the primary (default 4)", .arg = "W", .range = ">= 1", .min = 1,
     .max = G_MAXINT},
    {.name = "hybrid", .type = SIM_OPT_FLAG, .offset = offsetof(BftOpts, hybrid),
     .help = "Hybrid protocol with a trusted counter: n = 2f+1"},
    {.name = "gbps", .type = SIM_OPT_STRING, .offset = offsetof(BftOpts, gbps_str),
     .help = "Link bandwidth for every stack (default: each stack's G)", .arg = "GBPS"},
    {.name = "verify-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, verify_us),
     .help = "c_v per received message (default 1)", .arg = "US"},
    {.name = "verify-ns-per-byte", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, verify_ns),
     .help = "c_v per byte (default 0.5)", .arg = "NS"},
    {.name = "execute-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, exec_us),
     .help = "CPU per executed request (default 1)", .arg = "US"},
    {.name = "usig-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, usig_us),
     .help = "Hybrid: trusted-counter CPU per use (default 0)", .arg = "US"},
    SIM_OPT_SET(BftOpts, sets, "A stack parameter, e.g. tcp.o_s_us=3 (see 'sim models stack')", "STACK.PARAM=VALUE"),
    {.name = "crash-leader-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, crash_us),
     .help = "The view-0 primary crashes at this time (default -1: never)", .arg = "US"},
    {.name = "slow-leader-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, slow_us),
     .help = "The view-0 primary holds each pre-prepare this long (default 0)", .arg = "US"},
    {.name = "crashed-backups", .type = SIM_OPT_INT, .offset = offsetof(BftOpts, crashed_backups),
     .help = "Backups n-1, n-2, ... crashed from the start (default 0)", .arg = "K"},
    {.name = "client-timeout-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, client_to),
     .help = "With faults: a client retransmits to every replica after this long (default 10000)", .arg = "US"},
    {.name = "view-timeout-us", .type = SIM_OPT_DOUBLE, .offset = offsetof(BftOpts, view_to),
     .help = "With faults: a backup holding a request starts a view change after this long (default 20000)",
     .arg = "US"},
    {.name = "machine", .type = SIM_OPT_FILENAME, .offset = offsetof(BftOpts, machine),
     .help = "Rubin's stacks from a machine file with a fit (tcp-nio, rdma-plain, rdma-channel, rubin), e.g. "
             "models/machines/rdma/rubin-2018.json",
     .arg = "FILE"},
    SIM_OPT_CSV(BftOpts, csv, "Comma-separated output instead of the aligned table"),
};

static void bft_opts_clear(BftOpts *o) {
  sim_cli_options_clear(bft_opts, G_N_ELEMENTS(bft_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(BftOpts, bft_opts_clear)

/* What the command line asks for, checked: the lists, the base configuration and the link. */
typedef struct {
  GArray *ns, *payloads; /* gint64 */
  SimBftConfig base;
  double gbps; /* NAN: each stack's own */
} BftPlan;

static void bft_plan_clear(BftPlan *p) {
  g_clear_pointer(&p->ns, g_array_unref);
  g_clear_pointer(&p->payloads, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(BftPlan, bft_plan_clear)

/* Step 1: the options' defaults, from the model's configuration. */
static void bft_defaults(BftOpts *o, SimBftConfig *base) {
  sim_bft_config_default(base);
  *o = (BftOpts){.clients = (gint)base->clients,
                 .requests = (gint)base->requests,
                 .batch = (gint)base->batch,
                 .window = (gint)base->window,
                 .verify_us = base->verify_us,
                 .verify_ns = base->verify_ns_per_byte,
                 .exec_us = base->execute_us,
                 .usig_us = base->usig_us,
                 .crash_us = base->leader_crash_us,
                 .slow_us = base->leader_delay_us,
                 .client_to = base->client_timeout_us,
                 .view_to = base->view_timeout_us};
}

/* Step 2: the plan from the parsed options, every configuration checked before any runs. Returns the exit
 * code of a usage error, or SIM_EXIT_OK. */
static int bft_plan(const BftOpts *o, BftPlan *p) {
  p->ns = g_array_new(FALSE, FALSE, sizeof(gint64));
  p->payloads = g_array_new(FALSE, FALSE, sizeof(gint64));
  p->gbps = NAN;
  if (!sim_cli_parse_int_list(CMD, "--n", o->n_list ? o->n_list : "4", 1, SIM_BFT_MAX_N, "", p->ns))
    return SIM_EXIT_USAGE;
  if (!sim_cli_parse_int_list(CMD, "--payload", o->payload_list ? o->payload_list : "1024", 0,
                              (gint64)SIM_BFT_MAX_PAYLOAD_BYTES, "bytes", p->payloads))
    return SIM_EXIT_USAGE;
  if (!sim_cli_check_ranges(CMD, bft_opts, G_N_ELEMENTS(bft_opts), o)) return SIM_EXIT_USAGE;
  if (o->gbps_str && !parse_gbps(CMD, o->gbps_str, &p->gbps)) return SIM_EXIT_USAGE;
  if (o->crashed_backups < 0)
    return sim_cli_usage_error(CMD, "--crashed-backups must be >= 0 (got %d)", o->crashed_backups);
  SimBftConfig *b = &p->base;
  b->hybrid = o->hybrid;
  b->clients = (guint)o->clients;
  b->requests = (guint)o->requests;
  b->batch = (guint)o->batch;
  b->window = (guint)o->window;
  b->verify_us = o->verify_us;
  b->verify_ns_per_byte = o->verify_ns;
  b->execute_us = o->exec_us;
  b->usig_us = o->usig_us;
  b->leader_crash_us = o->crash_us;
  b->leader_delay_us = o->slow_us;
  b->crashed_backups = (guint)o->crashed_backups;
  b->client_timeout_us = o->client_to;
  b->view_timeout_us = o->view_to;
  for (guint i = 0; i < p->ns->len; i++)
    for (guint j = 0; j < p->payloads->len; j++) {
      SimBftConfig cfg = *b;
      cfg.n = (guint)g_array_index(p->ns, gint64, i);
      cfg.payload_bytes = (uint64_t)g_array_index(p->payloads, gint64, j);
      g_autoptr(GError) e = NULL;
      if (!sim_bft_config_check(&cfg, &e)) return sim_cli_usage_error(CMD, "%s", e->message);
    }
  return SIM_EXIT_OK;
}

/* Step 3: the stacks, Rubin's from a machine file or the built-in ones with --set and --gbps. Returns the exit
 * code of a usage error, or SIM_EXIT_OK. */
static int bft_stacks(const BftOpts *o, double gbps, GArray *stacks) {
  if (!o->machine) return build_stacks(o->stack ? o->stack : "all", o->sets, gbps, stacks) ? SIM_EXIT_OK : SIM_EXIT_USAGE;
  if (o->sets) return sim_cli_usage_error(CMD, "--set changes the built-in stacks, not a --machine file's");
  SimRubinMachine m;
  if (!load_rubin_machine(o->machine, &m)) return SIM_EXIT_USAGE;
  if (!m.has_fit) {
    sim_rubin_machine_clear(&m);
    return sim_cli_usage_error(CMD, "%s: $.fit: missing (write one with 'sim bft rubin --write FILE')", o->machine);
  }
  SimLogGP era[SIM_RUBIN_N_STACKS];
  sim_rubin_stacks(&m.hw, m.java_us, m.copy_ns_per_byte, era);
  sim_rubin_machine_clear(&m);
  for (guint i = 0; i < SIM_RUBIN_N_STACKS; i++) {
    if (o->stack && strcmp(o->stack, "all") != 0 && strcmp(o->stack, sim_rubin_stack_name(i)) != 0) continue;
    Stack s = {.name = sim_rubin_stack_name(i), .lg = era[i]};
    if (!isnan(gbps)) s.lg.G_ns_per_byte = 8.0 / gbps;
    g_array_append_val(stacks, s);
  }
  if (stacks->len == 0)
    return sim_cli_usage_error(CMD, "unknown stack '%s' (expected one of: tcp-nio, rdma-plain, rdma-channel, "
                                    "rubin, all with --machine)", o->stack);
  return SIM_EXIT_OK;
}

/* Step 4: the header lines: the protocol, the faults, each stack's LogGP terms, the messages per instance. */
static void bft_print_preamble(const BftOpts *o, const BftPlan *p, const GArray *stacks) {
  const SimBftConfig *b = &p->base;
  if (o->machine) printf("# stacks: Rubin's (Java, ConnectX-3, 10 Gb/s) from %s, with its stored fit\n", o->machine);
  printf("# protocol: %s, view 0, no faults; %u clients x %u requests, batch %u, window %u; c_v %g us + %g "
         "ns/B; "
         "execute %g us\n",
         b->hybrid ? "hybrid 2f+1 (MinBFT-like: prepare, commit f+1, reply f+1)"
                   : "PBFT (pre-prepare, prepare 2f, commit 2f+1, reply f+1)",
         b->clients, b->requests, b->batch, b->window, b->verify_us, b->verify_ns_per_byte, b->execute_us);
  if (b->hybrid) printf("# trusted counter: %g us per certified send and per check\n", b->usig_us);
  if (sim_bft_faulty(b))
    printf("# faults: leader crash at %g us%s, slow leader +%g us per pre-prepare, %u crashed backups; client timeout "
           "%g us, view timeout %g us\n",
           b->leader_crash_us, b->leader_crash_us < 0 ? " (never)" : "", b->leader_delay_us, b->crashed_backups,
           b->client_timeout_us, b->view_timeout_us);
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
  for (guint i = 0; i < p->ns->len; i++) {
    guint n = (guint)g_array_index(p->ns, gint64, i);
    printf("# messages per instance of one request, n = %u:", n);
    uint64_t sum = 0;
    for (guint k = 0; k <= SIM_BFT_REPLY; k++) {
      if (b->hybrid && k == SIM_BFT_PREPARE) continue;
      uint64_t c = sim_bft_messages_per_instance(n, b->hybrid, k);
      sum += c;
      printf(" %s %" G_GUINT64_FORMAT ",", b->hybrid && k == SIM_BFT_PREPREPARE ? "prepare" : sim_bft_kind_name(k),
             c);
    }
    printf(" total %" G_GUINT64_FORMAT "\n", sum);
  }
}

/* Step 5: one row per stack, n and payload: the loaded run, the unloaded one and the closed form. */
static int bft_print_rows(const BftPlan *p, const GArray *stacks, gboolean csv) {
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
    for (guint i = 0; i < p->ns->len; i++)
      for (guint j = 0; j < p->payloads->len; j++) {
        SimBftConfig cfg = p->base;
        cfg.n = (guint)g_array_index(p->ns, gint64, i);
        cfg.payload_bytes = (uint64_t)g_array_index(p->payloads, gint64, j);
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

int sim_cmd_bft(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "rubin") == 0) return cmd_rubin(argc, argv);
  if (argc > 1 && strcmp(argv[1], "compare-stacks") == 0) return cmd_compare(argc, argv);
  g_auto(BftOpts) o = {0};
  g_auto(BftPlan) plan = {0};
  bft_defaults(&o, &plan.base);
  g_autoptr(GOptionContext) ctx = g_option_context_new("- PBFT ordering latency and throughput per messaging stack");
  sim_cli_add_options(ctx, bft_opts, G_N_ELEMENTS(bft_opts), &o);
  g_option_context_set_description(
      ctx,
      "Simulates n replicas (n = 3f+1; with --hybrid n = 2f+1) and K clients on the event engine with each\n"
      "stack's LogGP costs and prints one row per stack, n and payload: messages, latency (mean, p50, p99),\n"
      "throughput, and the unloaded latency simulated (one client, one request) beside the closed form.\n"
      "'sim bft rubin' compares the RDMA channel's gains over TCP with Rubin's published range.\n"
      "'sim bft compare-stacks' runs Rubin's stacks over n, batch, clients and c_v with the gains over TCP.\n"
      "Exit 0 ok, 2 bad usage.");
  g_autofree char *command = sim_cli_command_line(argc, argv);
  if (!sim_cli_parse(ctx, CMD, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error(CMD, "unexpected argument '%s'", argv[1]);
  int rc = bft_plan(&o, &plan);
  if (rc != SIM_EXIT_OK) return rc;
  g_autoptr(GArray) stacks = g_array_new(FALSE, FALSE, sizeof(Stack));
  g_array_set_clear_func(stacks, (GDestroyNotify)stack_clear);
  rc = bft_stacks(&o, plan.gbps, stacks);
  if (rc != SIM_EXIT_OK) return rc;
  sim_cli_print_header(CMD, command);
  bft_print_preamble(&o, &plan, stacks);
  return bft_print_rows(&plan, stacks, o.csv);
}
