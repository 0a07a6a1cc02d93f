/* fuzz_scenario.c: libFuzzer target: the scenario loader must never crash or leak on any input. */
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SimDiag *diag = sim_diag_new("fuzz.json");
  SimScenario *sc = sim_scenario_load_data((const char *)data, size, "fuzz.json", NULL, diag);
  /* Either a scenario or at least one message, never neither. */
  if (!sc && sim_diag_count(diag) == 0) __builtin_trap();
  sim_scenario_free(sc);
  sim_diag_free(diag);
  return 0;
}
