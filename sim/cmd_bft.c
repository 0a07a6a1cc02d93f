/* cmd_bft.c: `sim bft`: a PBFT (or hybrid 2f+1) ordering service on each messaging stack, simulated on the
 * event engine, with latency and throughput per stack, n and payload size beside the closed form. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

/* Rubin (Schwarz-Rüsch, Messadi, Kapitza, DSN-W 2018; perf-models.json rubin_2018_seed): its RDMA channel
 * against kernel TCP between two servers on a 10 Gb/s switch, 33-43% lower latency and 33-43% more
 * throughput. */
#define RUBIN_GAIN_LO 0.33
#define RUBIN_GAIN_HI 0.43

/* `sim bft rubin` (argv[0] "bft", argv[1] "rubin"): the model's gains of the rdma-channel stack over tcp
 * against Rubin's published range, per message size: one-way latency on idle hosts and messages per second
 * one host streams to another. */
static int cmd_rubin(int argc, char **argv) {
  const char *cmd = "bft rubin";
  g_autofree char *sizes_list = NULL, *gbps_str = NULL;
  g_auto(GStrv) sets = NULL;
  gboolean csv = FALSE;
  GOptionEntry entries[] = {
      {"payload", 0, 0, G_OPTION_ARG_STRING, &sizes_list,
       "Message sizes in bytes (default 1024,4096,16384,32768,65536,102400)", "BYTES[,...]"},
      {"gbps", 0, 0, G_OPTION_ARG_STRING, &gbps_str, "Link bandwidth of both stacks (default 10, Rubin's switch)",
       "GBPS"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "A stack parameter, e.g. tcp.o_s_us=3 (see 'sim models stack')",
       "STACK.PARAM=VALUE"},
      {"csv", 0, 0, G_OPTION_ARG_NONE, &csv, "Comma-separated output instead of the aligned table", NULL},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- the RDMA channel's gains over TCP against Rubin's");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx,
      "Rubin measured its RDMA channel against TCP on 2 servers with a 10 Gb/s switch: 33-43% lower latency,\n"
      "33-43% higher throughput. Per message size this prints the model's one-way latency and streaming\n"
      "rate of the tcp and rdma-channel stacks (parameters from ConnectX-4 and kernel-TCP figures, not\n"
      "fitted to Rubin), their gains, and whether each gain is inside Rubin's range. Exit 0 ok, 2 bad usage.");
  g_autofree char *command = sim_cli_command_line(argc, argv); /* argv: "bft", "rubin", options */
  argc--;
  argv++;
  if (!sim_cli_parse(ctx, cmd, &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc != 1) return sim_cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
  g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (!sim_cli_parse_int_list(cmd, "--payload", sizes_list ? sizes_list : "1024,4096,16384,32768,65536,102400",
                              1, (gint64)SIM_BFT_MAX_PAYLOAD_BYTES, "bytes", sizes))
    return SIM_EXIT_USAGE;
  double gbps = 10;
  if (gbps_str && !parse_gbps(cmd, gbps_str, &gbps)) return SIM_EXIT_USAGE;
  g_autoptr(GArray) stacks = g_array_new(FALSE, FALSE, sizeof(Stack));
  g_array_set_clear_func(stacks, (GDestroyNotify)stack_clear);
  if (!build_stacks("all", sets, gbps, stacks)) return SIM_EXIT_USAGE;
  const SimLogGP *tcp = NULL, *ch = NULL;
  for (guint i = 0; i < stacks->len; i++) {
    const Stack *s = &g_array_index(stacks, Stack, i);
    if (strcmp(s->name, "tcp") == 0) tcp = &s->lg;
    if (strcmp(s->name, "rdma-channel") == 0) ch = &s->lg;
  }
  g_return_val_if_fail(tcp && ch, SIM_EXIT_RUNTIME);

  sim_cli_print_header(cmd, command);
  printf("# Rubin (DSN-W 2018, perf-models.json rubin_2018_seed): RDMA channel vs TCP, 2 servers, 10 Gb/s: "
         "latency %.0f-%.0f%% lower, throughput %.0f-%.0f%% higher\n",
         RUBIN_GAIN_LO * 100, RUBIN_GAIN_HI * 100, RUBIN_GAIN_LO * 100, RUBIN_GAIN_HI * 100);
  printf("# model: rdma-channel vs tcp at %g Gb/s (G = %.4g ns/B); latency: one way on idle hosts; throughput: "
         "messages per second one host streams to another\n",
         gbps, 8 / gbps);
  static const char *const cols[] = {"bytes",          "tcp_one_way_us",   "channel_one_way_us",
                                     "latency_gain_pct", "latency_in_range", "tcp_msgs_per_s",
                                     "channel_msgs_per_s", "tput_gain_pct",  "tput_in_range"};
  static const int widths[] = {8, 14, 18, 16, 16, 14, 18, 13, 13};
  print_columns(cols, widths, G_N_ELEMENTS(cols), csv);
  guint lat_in = 0, tput_in = 0;
  for (guint i = 0; i < sizes->len; i++) {
    uint64_t bytes = (uint64_t)g_array_index(sizes, gint64, i);
    SimLoggpGain g = sim_loggp_gain(ch, tcp, bytes);
    gboolean li = g.latency >= RUBIN_GAIN_LO && g.latency <= RUBIN_GAIN_HI,
             ti = g.throughput >= RUBIN_GAIN_LO && g.throughput <= RUBIN_GAIN_HI;
    lat_in += li;
    tput_in += ti;
    double lt = sim_loggp_one_way_ns(tcp, bytes) / 1e3, lc = sim_loggp_one_way_ns(ch, bytes) / 1e3;
    double rt = sim_loggp_stream_msgs_per_s(tcp, bytes), rc = sim_loggp_stream_msgs_per_s(ch, bytes);
    if (csv)
      printf("%" G_GUINT64_FORMAT ",%.4f,%.4f,%.2f,%s,%.0f,%.0f,%.2f,%s\n", bytes, lt, lc, g.latency * 100,
             li ? "yes" : "no", rt, rc, g.throughput * 100, ti ? "yes" : "no");
    else
      printf("%8" G_GUINT64_FORMAT " %14.3f %18.3f %16.1f %16s %14.0f %18.0f %13.1f %13s\n", bytes, lt, lc,
             g.latency * 100, li ? "yes" : "no", rt, rc, g.throughput * 100, ti ? "yes" : "no");
  }
  printf("# inside Rubin's range: latency gain at %u of %u sizes, throughput gain at %u of %u: the check %s\n",
         lat_in, sizes->len, tput_in, sizes->len,
         lat_in == sizes->len && tput_in == sizes->len ? "holds" : "does not hold at every size");
  return SIM_EXIT_OK;
}

int sim_cmd_bft(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "rubin") == 0) return cmd_rubin(argc, argv);
  SimBftConfig base;
  sim_bft_config_default(&base);
  g_autofree char *stack = NULL, *n_list = NULL, *payload_list = NULL, *gbps_str = NULL;
  g_auto(GStrv) sets = NULL;
  gint clients = (gint)base.clients, requests = (gint)base.requests, batch = (gint)base.batch,
       window = (gint)base.window;
  gboolean hybrid = FALSE, csv = FALSE;
  double gbps = NAN, verify_us = base.verify_us, verify_ns = base.verify_ns_per_byte,
         exec_us = base.execute_us, usig_us = base.usig_us;
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
  if (!build_stacks(stack ? stack : "all", sets, gbps, stacks)) return SIM_EXIT_USAGE;

  sim_cli_print_header(CMD, command);
  printf("# protocol: %s, view 0, no faults; %u clients x %u requests, batch %u, window %u; c_v %g us + %g "
         "ns/B; "
         "execute %g us\n",
         hybrid ? "hybrid 2f+1 (MinBFT-like: prepare, commit f+1, reply f+1)"
                : "PBFT (pre-prepare, prepare 2f, commit 2f+1, reply f+1)",
         base.clients, base.requests, base.batch, base.window, base.verify_us, base.verify_ns_per_byte,
         base.execute_us);
  if (hybrid) printf("# trusted counter: %g us per certified send and per check\n", base.usig_us);
  for (guint i = 0; i < stacks->len; i++) {
    const Stack *s = &g_array_index(stacks, Stack, i);
    printf("# %s: o_s %.4g us, o_r %.4g us, O %.4g ns/B, L %.4g us, G %.4g ns/B (%.4g Gb/s), g %.4g us, DMA "
           "%.4g ns/B, DMA read %.4g us, inline %" G_GUINT64_FORMAT " B, MTU %" G_GUINT64_FORMAT " B",
           s->name, s->lg.o_s_ns / 1e3, s->lg.o_r_ns / 1e3, s->lg.O_ns_per_byte, s->lg.L_ns / 1e3,
           s->lg.G_ns_per_byte, s->lg.G_ns_per_byte > 0 ? 8 / s->lg.G_ns_per_byte : 0, s->lg.g_ns / 1e3,
           s->lg.dma_ns_per_byte, s->lg.dma_read_ns / 1e3, s->lg.inline_bytes, s->lg.mtu_bytes);
    if (s->lg.chunk_bytes) printf(", buffer %" G_GUINT64_FORMAT " B", s->lg.chunk_bytes);
    printf("\n");
  }
  for (guint i = 0; i < ns->len; i++) {
    guint n = (guint)g_array_index(ns, gint64, i);
    printf("# messages per instance of one request, n = %u:", n);
    uint64_t sum = 0;
    for (guint k = 0; k < SIM_BFT_N_KINDS; k++) {
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
                                     "one_way_us"};
  static const int widths[] = {-12, 4, 3, 13, 8, 9, 9, 12, 11, 10, 10, 14, 11, 14, 10};
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
                 ",%" G_GUINT64_FORMAT ",%.4f,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%.3f\n",
                 s->name, cfg.n, sim_bft_f(&cfg), cfg.payload_bytes, r.completed, r.instances,
                 r.messages_total, (double)r.messages_total / (double)r.completed, r.latency_mean_us,
                 r.latency_p50_us, r.latency_p99_us, r.throughput_rps, u.latency_mean_us, closed, one_way);
        } else {
          printf("%-12s %4u %3u %13" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %9" G_GUINT64_FORMAT
                 " %9" G_GUINT64_FORMAT " %12.2f %11.2f %10.2f %10.2f %14.0f %11.2f %14.2f %10.3f\n",
                 s->name, cfg.n, sim_bft_f(&cfg), cfg.payload_bytes, r.completed, r.instances,
                 r.messages_total, (double)r.messages_total / (double)r.completed, r.latency_mean_us,
                 r.latency_p50_us, r.latency_p99_us, r.throughput_rps, u.latency_mean_us, closed, one_way);
        }
      }
  }
  return SIM_EXIT_OK;
}
