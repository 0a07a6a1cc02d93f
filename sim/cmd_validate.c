/* cmd_validate.c: `sim validate FILE...`: load each scenario strictly, report every problem, run nothing. */
#include <stdio.h>

#include "cli.h"
#include "params.h"
#include "scenario.h"

int sim_cmd_validate(int argc, char **argv) {
  g_auto(GStrv) sets = NULL;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "Apply an override first, as 'sim run' would", "PATH=VALUE"},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Print only problems", NULL},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE... - check scenario files");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx, "Prints 'FILE: ok' for each valid file on stdout and every problem on "
                                         "stderr\n(file:line:col for syntax, file: $.path for content). "
                                         "Exit 0 if all are valid, else 2.");
  if (!sim_cli_parse(ctx, "validate", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2) return sim_cli_usage_error("validate", "missing FILE");
  int rc = SIM_EXIT_OK;
  for (int i = 1; i < argc; i++) {
    g_autoptr(SimDiag) diag = sim_diag_new(argv[i]);
    g_autoptr(SimScenario) sc = sim_scenario_load_file(argv[i], (const char *const *)sets, diag);
    if (sc) {
      if (!quiet) printf("%s: ok\n", argv[i]);
    } else {
      g_autofree char *msgs = sim_diag_join(diag);
      fprintf(stderr, "%s\n", msgs);
      rc = SIM_EXIT_USAGE;
    }
  }
  return rc;
}
