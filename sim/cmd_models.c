/* cmd_models.c: `sim models [FAMILY]`: every scenario section and model with its parameter table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "registry.h"
#include "scenario.h"

int sim_cmd_models(int argc, char **argv) {
  g_autoptr(GOptionContext) ctx = g_option_context_new("[FAMILY] - list models and their parameters");
  /* The families from the registry, which keeps the list once. */
  g_autoptr(GString) desc = g_string_new("Families: ");
  for (const char *const *f = sim_models_families(); *f; f++)
    g_string_append_printf(desc, "%s%s", f == sim_models_families() ? "" : ", ", *f);
  g_string_append(desc, "; 'scenario' lists the scenario's own sections.");
  g_option_context_set_description(ctx, desc->str);
  if (!sim_cli_parse(ctx, "models", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc > 2) return sim_cli_usage_error("models", "expected at most one FAMILY");
  const char *only = argc == 2 ? argv[1] : NULL;
  if (only && strcmp(only, "scenario") != 0 && !sim_models_family(only)) {
    g_autoptr(GString) known = g_string_new("scenario");
    for (const char *const *f = sim_models_families(); *f; f++) g_string_append_printf(known, ", %s", *f);
    return sim_cli_usage_error("models", "unknown family '%s' (expected one of: %s)", only, known->str);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  if (!only || strcmp(only, "scenario") == 0) {
    g_string_append(out, "scenario sections:\n");
    sim_scenario_describe(out);
  }
  for (const char *const *f = sim_models_families(); *f; f++) {
    if (only && strcmp(only, *f) != 0) continue;
    g_string_append_printf(out, "%sfamily %s:\n", out->len ? "\n" : "", *f);
    for (const SimModelInfo *const *m = sim_models_family(*f); *m; m++) sim_model_describe(*m, out);
  }
  fputs(out->str, stdout);
  return SIM_EXIT_OK;
}
