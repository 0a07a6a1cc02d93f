/* scenario.h: loading a scenario JSON file strictly: syntax errors as file:line:col, semantic errors as
 * file: $.json.path, every problem in one pass, --set overrides, defaults filled in for the echo. */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "params.h"
#include "pow.h"

G_BEGIN_DECLS

typedef struct {
  int64_t heights;        /* stop once the main chain reaches this many heights past genesis; 0 = unset */
  double time_s;          /* stop at this simulated time; 0 = unset */
  int64_t events;         /* stop after this many events; 0 = unset */
  int64_t settle_heights; /* with `heights`: mine this many more so the last window blocks can become uncles */
} SimStopSpec;

typedef struct {
  char *path;    /* as given */
  char *name;    /* scenario name: default output directory results/<name> */
  json_t *doc;   /* the fully defaulted scenario (the echo written into every output header) */
  uint64_t seed;
  SimStopSpec stop;
  PowConfig pow; /* pools point into `pools` */
  PowPoolSpec *pools;
  guint n_pools;
  gboolean has_tx; /* a "transactions" section: pow.tx points at `tx` */
  TxConfig tx;
} SimScenario;

/* Loads and validates `path`, applying each "PATH=VALUE" of `sets` (NULL-terminated, may be NULL) before
 * validation. Every problem goes to `diag` (which should be created with the file name). `sets` are the
 * user's --set options: a problem at or below a path one of them assigned reads "--set PATH: message" (the
 * value came from the command line, not the file), and a malformed set "--set PATH: ..." without the file
 * name; a set whose path the file lacks keeps it ("FILE: --set PATH: index 9 out of range ..."). Returns NULL
 * if there was any problem. Free with sim_scenario_free(). */
SimScenario *sim_scenario_load_file(const char *path, const char *const *sets, SimDiag *diag);

/* The same from memory (`len` bytes, need not be NUL-terminated); `path` is only used in messages. Here
 * `sets` are a caller's own (a sweep's points): every problem is reported against `path` as usual. */
SimScenario *sim_scenario_load_data(const char *data, size_t len, const char *path, const char *const *sets,
                                    SimDiag *diag);

void sim_scenario_free(SimScenario *sc);

/* Appends the parameter tables of the scenario's own sections (top level, stop, chain, pools[]) to `out`. */
void sim_scenario_describe(GString *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimScenario, sim_scenario_free)

G_END_DECLS
