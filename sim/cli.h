/* cli.h: the subcommands of the `sim` binary (one file each) and helpers they share. */
#pragma once

#include <glib.h>
#include <signal.h>
#include <stddef.h>

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

/* ---- Option tables ----
 *
 * Each subcommand declares its options once, as a const table of SimOpt rows: name, short name, type, where
 * the value goes (an offset into the subcommand's options struct), help, argument name and, for numbers,
 * bounds. The GOption entries (and so --help) and the range checks come from the table. The options that
 * several subcommands share are defined once below (SIM_OPT_SET(), SIM_OPT_QUIET(), ...); a subcommand gives
 * its own help line, as what they do differs in detail (--set overrides a scenario value or a stack
 * parameter). */

typedef enum {
  SIM_OPT_FLAG,      /* gboolean */
  SIM_OPT_INT,       /* gint */
  SIM_OPT_INT64,     /* gint64 */
  SIM_OPT_DOUBLE,    /* double */
  SIM_OPT_STRING,    /* char * (free with g_free) */
  SIM_OPT_FILENAME,  /* char * (free with g_free) */
  SIM_OPT_STRINGS,   /* GStrv (free with g_strfreev): the option may be repeated */
  SIM_OPT_FILENAMES, /* GStrv */
} SimOptType;

typedef struct {
  const char *name;
  char short_name;
  SimOptType type;
  gsize offset;    /* offsetof() the value in the subcommand's options struct */
  const char *help;
  const char *arg; /* the argument's name in --help ("N", "FILE"), NULL for flags */
  /* Bounds of INT, INT64 and DOUBLE, checked by sim_cli_check_ranges() when `range` is not NULL; `range` is
   * how the message shows them: "--NAME must be in RANGE (got VALUE)", e.g. "[0, 1e9]" or "(0, 1e6] ETH"; a
   * one-sided RANGE starting with '>' or '<' reads "--NAME must be RANGE (got VALUE)", e.g. ">= 1". */
  const char *range;
  double min, max;
  gboolean min_open, max_open;
} SimOpt;

/* The shared options: one definition each. `T` is the subcommand's options struct; `field` the member. */
#define SIM_OPT_SET(T, field, help_, arg_) \
  {.name = "set", .type = SIM_OPT_STRINGS, .offset = offsetof(T, field), .help = help_, .arg = arg_}
#define SIM_OPT_QUIET(T, field, help_) \
  {.name = "quiet", .short_name = 'q', .type = SIM_OPT_FLAG, .offset = offsetof(T, field), .help = help_}
#define SIM_OPT_CSV(T, field, help_) \
  {.name = "csv", .type = SIM_OPT_FLAG, .offset = offsetof(T, field), .help = help_}
#define SIM_OPT_OUT(T, field, help_, arg_) \
  {.name = "out", .short_name = 'o', .type = SIM_OPT_FILENAME, .offset = offsetof(T, field), .help = help_, \
   .arg = arg_}
/* --seed N: the master seed, read one way by every subcommand: as text (so that "not given" stays apart from
 * every seed), then by sim_cli_seed(). */
#define SIM_OPT_SEED(T, field, help_) \
  {.name = "seed", .type = SIM_OPT_STRING, .offset = offsetof(T, field), .help = help_, .arg = "N"}
/* --threads N (-t): threads in [0, SIM_ENGINE_MAX_THREADS] (engine.h, which the user of the macro includes);
 * what they run on, and what 0 means, is the subcommand's help. */
#define SIM_OPT_THREADS(T, field, help_) \
  {.name = "threads", .short_name = 't', .type = SIM_OPT_INT, .offset = offsetof(T, field), .help = help_, \
   .arg = "N", .range = "[0, " G_STRINGIFY(SIM_ENGINE_MAX_THREADS) "]", .min = 0, \
   .max = SIM_ENGINE_MAX_THREADS}
/* --vantage NAME=DIR, the named log directories of replay and calibrate (see sim_cli_vantage_dirs()). */
#define SIM_OPT_VANTAGE(T, field) \
  {.name = "vantage", .type = SIM_OPT_FILENAMES, .offset = offsetof(T, field), \
   .help = "A vantage point's log directory, named", .arg = "NAME=DIR"}

/* --pools CSV and --strict of the readers of EMC logs (replay, calibrate). */
#define SIM_OPT_POOLS_MAP(T, field) \
  {.name = "pools", .type = SIM_OPT_FILENAME, .offset = offsetof(T, field), \
   .help = "Coinbase address -> pool map (CSV with 'address' and a name column)", .arg = "CSV"}
#define SIM_OPT_STRICT(T, field) \
  {.name = "strict", .type = SIM_OPT_FLAG, .offset = offsetof(T, field), .help = "The first bad line is fatal (exit 2)"}

/* Adds the table's options (values in `base`, a struct the table's offsets point into, holding the defaults)
 * to `ctx` as its main entries. The entries stay valid as long as `ctx`. */
void sim_cli_add_options(GOptionContext *ctx, const SimOpt *opts, gsize n, void *base);

/* Checks every bounded option of the table in table order; at the first value out of its bounds prints
 * "sim CMD: --NAME must be in RANGE (got VALUE)" (VALUE as %d, %" G_GINT64_FORMAT " or %g) and a hint, and
 * returns FALSE. Subcommands call it where their other checks of the command line run, so that the first
 * problem reported stays the same. */
gboolean sim_cli_check_ranges(const char *cmd, const SimOpt *opts, gsize n, const void *base);

/* Frees the strings and string arrays of the table's values in `base` (and NULLs them). */
void sim_cli_options_clear(const SimOpt *opts, gsize n, void *base);

/* Parses `argv` with `ctx`; on a usage error prints "sim CMD: message" and a hint on stderr and returns
 * FALSE. `--help` prints on stdout and exits 0 (GOption's behaviour). */
gboolean sim_cli_parse(GOptionContext *ctx, const char *cmd, int *argc, char ***argv);

/* "sim ARGV[0] ARGV[1] ...", each argument shell-quoted where it needs it, for output headers. Call it before
 * sim_cli_parse() (which removes the options it parsed). Free with g_free(). */
char *sim_cli_command_line(int argc, char **argv);

/* Prints the header lines of a table on stdout: "# sim VERSION (GIT DESCRIBE) CMD", the library versions
 * and "# command: COMMAND_LINE". */
void sim_cli_print_header(const char *cmd, const char *command_line);

/* SIGINT, SIGTERM and SIGHUP to `handler` (no SA_RESTART: a blocking wait returns on them), the previous
 * actions saved in old[0..2] for sim_cli_signals_restore(). For long commands that stop cleanly. */
void sim_cli_signals_catch(void (*handler)(int), struct sigaction old[3]);
void sim_cli_signals_restore(const struct sigaction old[3]);

/* The value of --seed (SIM_OPT_SEED()): `text` is a decimal integer in [0, 2^63 - 1] (g_ascii_strtoll:
 * leading blanks and a sign are allowed), stored in *seed. NULL (not given) leaves *seed as it is. Otherwise
 * prints "sim CMD: --seed must be an integer >= 0" and the hint and returns FALSE. */
gboolean sim_cli_seed(const char *cmd, const char *text, gint64 *seed);

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
