/* main.c: the `sim` command: global options and dispatch to one subcommand. */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_version.h>
#include <jansson.h>

#include "cli.h"
#include "sim-version.h"

static const struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *help;
} commands[] = {
    {"run", sim_cmd_run, "run a scenario and write its results"},
    {"validate", sim_cmd_validate, "check scenario files without running them"},
    {"models", sim_cmd_models, "list every model and scenario section with its parameters"},
    {"report", sim_cmd_report, "turn a results directory (or a sweep's) into one self-contained HTML page"},
    {"sweep", sim_cmd_sweep, "run a study: points x replicates of a scenario, resumable, sharded; its table"},
    {"replay", sim_cmd_replay, "measured EMC logs through the same analysis as 'run' (same keys and CSVs)"},
    {"calibrate", sim_cmd_calibrate, "fit models to measured EMC logs; write them as a file scenarios include"},
    {"compare", sim_cmd_compare, "compare two result sets (runs, replicates or measured) side by side"},
    {"bench", sim_cmd_bench, "benchmarks: the engine (phold) and the workloads of BENCH.md (scenarios)"},
    {"bft", sim_cmd_bft, "PBFT ordering latency and throughput per messaging stack (TCP, RDMA)"},
    {"sync", sim_cmd_sync, "node sync time per phase from a machine description; multi-machine IBD"},
    {"numa", sim_cmd_numa, "NUMA model: predict, tune, measure this machine, place pages by weights"},
};

static void print_help(FILE *out) {
  fprintf(out,
          "Usage: sim [--version] [--help] COMMAND [ARGS...]\n\n"
          "A discrete-event simulator of proof-of-work blockchains as they really ran.\n\nCommands:\n");
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(out, "\nRun 'sim COMMAND --help' for a command's options. Exit codes: 0 ok, 1 run-time failure,\n"
               "2 bad usage or bad input, 130 interrupted.\n");
}

/* ---- Option tables ---- */

static GOptionArg opt_arg(SimOptType t) {
  switch (t) {
  case SIM_OPT_FLAG: return G_OPTION_ARG_NONE;
  case SIM_OPT_INT: return G_OPTION_ARG_INT;
  case SIM_OPT_INT64: return G_OPTION_ARG_INT64;
  case SIM_OPT_DOUBLE: return G_OPTION_ARG_DOUBLE;
  case SIM_OPT_STRING: return G_OPTION_ARG_STRING;
  case SIM_OPT_FILENAME: return G_OPTION_ARG_FILENAME;
  case SIM_OPT_STRINGS: return G_OPTION_ARG_STRING_ARRAY;
  case SIM_OPT_FILENAMES: return G_OPTION_ARG_FILENAME_ARRAY;
  }
  g_assert_not_reached();
}

void sim_cli_add_options(GOptionContext *ctx, const SimOpt *opts, gsize n, void *base) {
  g_return_if_fail(ctx != NULL && (opts != NULL || n == 0) && base != NULL);
  GOptionEntry *e = g_new0(GOptionEntry, n + 1);
  for (gsize i = 0; i < n; i++)
    e[i] = (GOptionEntry){.long_name = opts[i].name,
                          .short_name = opts[i].short_name,
                          .arg = opt_arg(opts[i].type),
                          .arg_data = (char *)base + opts[i].offset,
                          .description = opts[i].help,
                          .arg_description = opts[i].arg};
  g_option_context_add_main_entries(ctx, e, NULL);
  /* GOption copies the entries into its group (not the strings, which are the table's): ours can go. */
  g_free(e);
}

gboolean sim_cli_check_ranges(const char *cmd, const SimOpt *opts, gsize n, const void *base) {
  for (gsize i = 0; i < n; i++) {
    const SimOpt *o = &opts[i];
    if (!o->range) continue;
    const void *at = (const char *)base + o->offset;
    double v;
    g_autofree char *got = NULL;
    switch (o->type) {
    case SIM_OPT_INT:
      v = *(const gint *)at;
      got = g_strdup_printf("%d", *(const gint *)at);
      break;
    case SIM_OPT_INT64:
      v = (double)*(const gint64 *)at;
      got = g_strdup_printf("%" G_GINT64_FORMAT, *(const gint64 *)at);
      break;
    case SIM_OPT_DOUBLE:
      v = *(const double *)at;
      got = g_strdup_printf("%g", v);
      break;
    default:
      g_return_val_if_reached(FALSE);
    }
    gboolean lo = o->min_open ? v > o->min : v >= o->min, hi = o->max_open ? v < o->max : v <= o->max;
    if (!(lo && hi)) { /* NaN fails both */
      /* A one-sided bound reads "--NAME must be >= 1 (got 0)". */
      if (o->range[0] == '>' || o->range[0] == '<')
        sim_cli_usage_error(cmd, "--%s must be %s (got %s)", o->name, o->range, got);
      else
        sim_cli_usage_error(cmd, "--%s must be in %s (got %s)", o->name, o->range, got);
      return FALSE;
    }
  }
  return TRUE;
}

void sim_cli_options_clear(const SimOpt *opts, gsize n, void *base) {
  for (gsize i = 0; i < n; i++) {
    void *at = (char *)base + opts[i].offset;
    if (opts[i].type == SIM_OPT_STRING || opts[i].type == SIM_OPT_FILENAME) g_clear_pointer((char **)at, g_free);
    if (opts[i].type == SIM_OPT_STRINGS || opts[i].type == SIM_OPT_FILENAMES) g_clear_pointer((char ***)at, g_strfreev);
  }
}

gboolean sim_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv) {
  GError *e = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &e)) {
    sim_cli_usage_error(cmd, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

void sim_cli_print_header(const char *cmd, const char *command_line) {
  printf("# sim %s (%s) %s\n# libraries: glib %u.%u.%u, gsl %s, jansson %s\n# command: %s\n", SIM_VERSION,
         SIM_GIT_DESCRIBE, cmd, glib_major_version, glib_minor_version, glib_micro_version, gsl_version,
         jansson_version_str(), command_line);
}

char *sim_cli_command_line(int argc, char **argv) {
  GString *s = g_string_new("sim");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    gboolean plain = *a != '\0';
    for (const char *c = a; *c && plain; c++)
      plain = g_ascii_isalnum(*c) || strchr("-_.,/=:+@%", *c) != NULL;
    if (plain) {
      g_string_append_printf(s, " %s", a);
    } else {
      g_autofree char *q = g_shell_quote(a);
      g_string_append_printf(s, " %s", q);
    }
  }
  return g_string_free(s, FALSE);
}

void sim_cli_signals_catch(void (*handler)(int), struct sigaction old[3]) {
  struct sigaction sa = {0};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old[0]);
  sigaction(SIGTERM, &sa, &old[1]);
  sigaction(SIGHUP, &sa, &old[2]);
}

void sim_cli_signals_restore(const struct sigaction old[3]) {
  sigaction(SIGINT, &old[0], NULL);
  sigaction(SIGTERM, &old[1], NULL);
  sigaction(SIGHUP, &old[2], NULL);
}

gboolean sim_cli_seed(const char *cmd, const char *text, gint64 *seed) {
  if (!text) return TRUE;
  char *end = NULL;
  errno = 0;
  gint64 v = g_ascii_strtoll(text, &end, 10);
  if (!*text || *end || errno || v < 0) {
    sim_cli_usage_error(cmd, "--seed must be an integer >= 0");
    return FALSE;
  }
  *seed = v;
  return TRUE;
}

gboolean sim_cli_parse_int_list(const char *cmd, const char *opt, const char *text, gint64 min, gint64 max,
                                const char *unit, GArray *out) {
  g_auto(GStrv) items = g_strsplit(text, ",", -1);
  for (char **it = items; *it; it++) {
    char *end = NULL;
    errno = 0;
    gint64 v = g_ascii_strtoll(*it, &end, 10);
    if (**it == '\0' || *end != '\0' || errno != 0) {
      sim_cli_usage_error(cmd, "%s: '%s' is not an integer", opt, *it);
      return FALSE;
    }
    if (v < min) {
      sim_cli_usage_error(cmd, "%s must be >= %" G_GINT64_FORMAT "%s%s (got %" G_GINT64_FORMAT ")", opt, min,
                          *unit ? " " : "", unit, v);
      return FALSE;
    }
    if (v > max) {
      sim_cli_usage_error(cmd, "%s must be <= %" G_GINT64_FORMAT "%s%s (got %" G_GINT64_FORMAT ")", opt, max,
                          *unit ? " " : "", unit, v);
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

int sim_cli_vantage_dirs(const char *cmd, int argc, char **argv, char **named, GPtrArray *dirs, GPtrArray *names) {
  for (int i = 1; i < argc; i++) {
    g_ptr_array_add(dirs, argv[i]);
    g_ptr_array_add(names, NULL);
  }
  for (guint i = 0; named && named[i]; i++) {
    char *eq = strchr(named[i], '=');
    if (!eq || eq == named[i] || !eq[1]) return sim_cli_usage_error(cmd, "--vantage takes NAME=DIR (got '%s')", named[i]);
    g_ptr_array_add(names, g_strndup(named[i], (gsize)(eq - named[i])));
    g_ptr_array_add(dirs, eq + 1);
  }
  if (dirs->len == 0) return sim_cli_usage_error(cmd, "missing LOGDIR (or --vantage NAME=DIR)");
  return SIM_EXIT_OK;
}

int sim_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  fprintf(stderr, "sim %s: %s\nTry 'sim %s --help'.\n", cmd, msg, cmd);
  return SIM_EXIT_USAGE;
}

int main(int argc, char **argv) {
  setlocale(LC_ALL, "C");
  /* GSL aborts on errors by default; we check return codes instead. */
  gsl_set_error_handler_off();
  if (argc < 2) {
    print_help(stderr);
    return SIM_EXIT_USAGE;
  }
  const char *a = argv[1];
  if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
    printf("sim %s (%s)\n", SIM_VERSION, SIM_GIT_DESCRIBE);
    return SIM_EXIT_OK;
  }
  if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "help") == 0) {
    if (strcmp(a, "help") == 0 && argc > 2) {
      char *sub[] = {argv[2], (char *)"--help", NULL};
      for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
        if (strcmp(commands[i].name, argv[2]) == 0) return commands[i].fn(2, sub);
    }
    print_help(stdout);
    return SIM_EXIT_OK;
  }
  for (size_t i = 0; i < G_N_ELEMENTS(commands); i++)
    if (strcmp(commands[i].name, a) == 0) return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "sim: unknown command '%s'\n\n", a);
  print_help(stderr);
  return SIM_EXIT_USAGE;
}
