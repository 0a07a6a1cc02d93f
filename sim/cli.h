/* cli.h: the subcommands of the `sim` binary (one file each) and helpers they share. */
#pragma once

#include <glib.h>

/* Exit codes of every subcommand. */
enum { SIM_EXIT_OK = 0, SIM_EXIT_RUNTIME = 1, SIM_EXIT_USAGE = 2, SIM_EXIT_INTERRUPTED = 130 };

int sim_cmd_run(int argc, char **argv);
int sim_cmd_validate(int argc, char **argv);
int sim_cmd_models(int argc, char **argv);
int sim_cmd_bench(int argc, char **argv);
int sim_cmd_numa(int argc, char **argv);

/* Parses `argv` with `ctx`; on a usage error prints "sim CMD: message" and a hint on stderr and returns
 * FALSE. `--help` prints on stdout and exits 0 (GOption's behaviour). */
gboolean sim_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv);

/* Prints "sim CMD: message\nTry 'sim CMD --help'." on stderr and returns SIM_EXIT_USAGE. */
int sim_cli_usage_error(const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
