/* cli.h: the subcommands of the `sim` binary (one file each) and helpers they share. */
#pragma once

#include <glib.h>

/* Exit codes of every subcommand. */
enum { SIM_EXIT_OK = 0, SIM_EXIT_RUNTIME = 1, SIM_EXIT_USAGE = 2, SIM_EXIT_INTERRUPTED = 130 };

int sim_cmd_run(int argc, char **argv);
int sim_cmd_validate(int argc, char **argv);
int sim_cmd_models(int argc, char **argv);
int sim_cmd_bench(int argc, char **argv);
int sim_cmd_report(int argc, char **argv);
int sim_cmd_sweep(int argc, char **argv);
int sim_cmd_compare(int argc, char **argv);
int sim_cmd_replay(int argc, char **argv);
int sim_cmd_calibrate(int argc, char **argv);
int sim_cmd_bft(int argc, char **argv);
int sim_cmd_sync(int argc, char **argv);
int sim_cmd_numa(int argc, char **argv);

/* Parses `argv` with `ctx`; on a usage error prints "sim CMD: message" and a hint on stderr and returns
 * FALSE. `--help` prints on stdout and exits 0 (GOption's behaviour). */
gboolean sim_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv);

/* "sim ARGV[0] ARGV[1] ...", each argument shell-quoted where it needs it, for output headers. Call it before
 * sim_cli_parse() (which removes the options it parsed). Free with g_free(). */
char *sim_cli_command_line(int argc, char **argv);

/* Prints the header lines of a table on stdout: "# sim VERSION (GIT DESCRIBE) CMD", the library versions
 * and "# command: COMMAND_LINE". */
void sim_cli_print_header(const char *cmd, const char *command_line);

/* Parses a comma-separated list of integers ("4,7,10") in [min, max] into `out` (gint64). On a bad item
 * prints "sim CMD: OPT: 'x' is not an integer" or "sim CMD: OPT must be >= MIN UNIT (got V)" and returns
 * FALSE. */
gboolean sim_cli_parse_int_list(const char *cmd, const char *opt, const char *text, gint64 min, gint64 max,
                                const char *unit, GArray *out);

/* Log directories of vantage points from the command line: argv[1..argc-1] (named by their base names, NULL in
 * `names`), then each "NAME=DIR" of `named` (may be NULL). Fills `dirs` (pointers into argv/named) and `names`
 * (owned, free func g_free). Returns SIM_EXIT_OK, or prints a usage error for `cmd` (a malformed NAME=DIR, or
 * no directory at all) and returns SIM_EXIT_USAGE. */
int sim_cli_vantage_dirs(const char *cmd, int argc, char **argv, char **named, GPtrArray *dirs, GPtrArray *names);

/* Prints "sim CMD: message\nTry 'sim CMD --help'." on stderr and returns SIM_EXIT_USAGE. */
int sim_cli_usage_error(const char *cmd, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
