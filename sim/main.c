/* main.c: the `sim` command: global options and dispatch to one subcommand. */
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

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
    {"bench", sim_cmd_bench, "benchmarks: the engine (phold) and the workloads of BENCH.md (scenarios)"},
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

gboolean sim_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv) {
  GError *e = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &e)) {
    sim_cli_usage_error(cmd, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
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
