/* cmd_validate.c: `sim validate FILE...`: load each scenario strictly, report every problem, run nothing. */
#include <stdio.h>

#include "cli.h"
#include "params.h"
#include "scenario.h"

typedef struct {
  char **sets;
  gboolean quiet;
} ValidateOpts;

static const SimOpt validate_opts[] = {
    SIM_OPT_SET(ValidateOpts, sets, "Apply an override first, as 'sim run' would", "PATH=VALUE"),
    SIM_OPT_QUIET(ValidateOpts, quiet, "Print only problems"),
};

static void validate_opts_clear(ValidateOpts *o) {
  sim_cli_options_clear(validate_opts, G_N_ELEMENTS(validate_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ValidateOpts, validate_opts_clear)

int sim_cmd_validate(int argc, char **argv) {
  g_auto(ValidateOpts) o = {0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE... - check scenario files");
  sim_cli_add_options(ctx, validate_opts, G_N_ELEMENTS(validate_opts), &o);
  g_option_context_set_description(ctx, "Prints 'FILE: ok' for each valid file on stdout and every problem on "
                                         "stderr\n(file:line:col for syntax, file: $.path for content). "
                                         "Exit 0 if all are valid, else 2.");
  if (!sim_cli_parse(ctx, "validate", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2) return sim_cli_usage_error("validate", "missing FILE");
  int rc = SIM_EXIT_OK;
  for (int i = 1; i < argc; i++) {
    g_autoptr(SimDiag) diag = sim_diag_new(argv[i]);
    g_autoptr(SimScenario) sc = sim_scenario_load_file(argv[i], (const char *const *)o.sets, diag);
    if (sc) {
      if (!o.quiet) printf("%s: ok\n", argv[i]);
    } else {
      g_autofree char *msgs = sim_diag_join(diag);
      fprintf(stderr, "%s\n", msgs);
      rc = SIM_EXIT_USAGE;
    }
  }
  return rc;
}
