/* params.h: parameter tables (name with unit, type, bounds, default, help), validation of JSON objects
 * against them, problem collection with JSON paths, and the model-registry base type.
 *
 * Every pluggable model declares its parameters once, as a SimParamSpec table. Scenario validation,
 * defaults, `sim models` help and the configuration echo all come from that table.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stddef.h>

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

/* ---- Problems found while validating (collected, so one pass reports them all) ---- */

typedef struct SimDiag SimDiag;

/* `file` is the name printed before each message (may be NULL: then messages start at the path). */
SimDiag *sim_diag_new(const char *file);
void sim_diag_free(SimDiag *diag);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimDiag, sim_diag_free)

/* Adds "FILE: PATH: message". `path` is a JSON path such as "$.pools[3].hash_share". */
/* A number as messages quote it: %g when it round-trips, else the shortest longer form that does ("must be
 * in [0, 1] (got 1)" for 1.0000001 would be misleading). Locale-independent. Free with g_free(). */
char *sim_fmt_double(double v);

void sim_diag_add(SimDiag *diag, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
/* Adds "FILE: message" (e.g. "cannot read: File too large"). */
void sim_diag_add_raw(SimDiag *diag, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Adds "message" alone: a problem that is not in the file (a malformed command-line --set). */
void sim_diag_add_plain(SimDiag *diag, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* Adds "FILE:LINE:COLUMN: message", the form editors jump to (a syntax error; line and column are clamped to
 * at least 1, as a parser reports 0 for an empty input). */
void sim_diag_add_at(SimDiag *diag, int line, int column, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
/* Says that the value at `json_path` (a canonical path such as "$.pools[2].hash_share", as
 * sim_json_set_target() gives) came from somewhere other than the file: a problem later added at that path
 * reads "LABEL: message", and one below it "LABEL: PATH: message", instead of "FILE: PATH: message" (for
 * --set, LABEL is "--set PATH" as the user wrote it). When several attributions cover a path, the latest
 * wins, as a later --set overwrites an earlier one. */
void sim_diag_attribute(SimDiag *diag, const char *json_path, const char *label);
guint sim_diag_count(const SimDiag *diag);
/* The i-th full message, owned by diag. */
const char *sim_diag_get(const SimDiag *diag, guint i);
/* All messages, one per line (no trailing newline). Free with g_free(). */
char *sim_diag_join(const SimDiag *diag);

/* The kind of a JSON value for messages: "object", "array", "string", "integer", "real", "true", "false",
 * "null". */
const char *sim_json_kind(const json_t *v);

/* Whether v can be read as an n x n matrix (an array of n rows; otherwise reported at `path`). Rows that are
 * not arrays of n entries are reported too ("row 2 has 3 entries"), and *rows_ok is cleared, but the
 * caller still checks the entries that exist (json_array_get on a short row gives NULL past its end), so
 * that one pass reports every problem. */
gboolean sim_json_matrix_shape(const json_t *v, const char *path, guint n, gboolean *rows_ok, SimDiag *diag);

/* ---- Parameter tables ---- */

typedef enum {
  SIM_PARAM_NUMBER, /* double; JSON integer or real; finite */
  SIM_PARAM_INT,    /* int64; JSON integer (or a real with an integral value) */
  SIM_PARAM_BOOL,   /* gboolean */
  SIM_PARAM_STRING, /* char * (owned by the params struct, free with sim_params_clear) */
  SIM_PARAM_ENUM,   /* int: index into `choices`; JSON string */
} SimParamType;

typedef struct {
  const char *name;   /* JSON key, unit suffix included where one applies: "median_ms", "interval_s" */
  SimParamType type;
  const char *unit;   /* for help: "ms", "s", "bytes", "" */
  double min, max;    /* inclusive bounds for NUMBER and INT */
  gboolean min_open;  /* the lower bound is exclusive (for "must be > 0") */
  double def;         /* default for NUMBER, INT, BOOL */
  const char *def_str; /* default for STRING (NULL means "") and ENUM */
  const char *const *choices; /* ENUM: NULL-terminated names */
  gboolean required;  /* no default: the key must be present */
  size_t offset;      /* offsetof() the field in the params struct */
  const char *help;
} SimParamSpec;

/* Validates `obj` (which must be a JSON object at `path`) against the table: every key must be in the
 * table or in `extra_keys` (NULL-terminated, may be NULL: e.g. "model", "comment"), each value of the
 * right type and within bounds, each required key present. Problems go to `diag`; all are reported.
 * Missing optional keys are added to `obj` with their defaults (so `obj` becomes the echo), and every
 * value is stored into the struct at `out` (which must be zeroed by the caller beforehand).
 * Returns TRUE when no problem was found. Either way `out` may hold strings: free with sim_params_clear(). */
gboolean sim_params_parse(const SimParamSpec *specs, guint n_specs, json_t *obj, const char *path,
                          const char *const *extra_keys, void *out, SimDiag *diag);

/* Fills `out` with every default (STRING/ENUM defaults strdup'ed). */
void sim_params_defaults(const SimParamSpec *specs, guint n_specs, void *out);

/* Frees the STRING fields of `out` and zeroes them. */
void sim_params_clear(const SimParamSpec *specs, guint n_specs, void *out);

/* Appends a human-readable help listing of the table to `out` (one parameter per line, indented by
 * `indent` spaces): name, type, unit, bounds, default, help. */
void sim_params_describe(const SimParamSpec *specs, guint n_specs, int indent, GString *out);

/* The first member of every model's method table: name, family, help and the parameter table.
 * Families extend it with their own methods; instances hold a pointer to the table. */
typedef struct SimSubmodelSpec SimSubmodelSpec;
typedef struct SimModelScope SimModelScope;
typedef struct {
  const char *name;
  const char *family;
  const char *help;
  const SimParamSpec *params;
  guint n_params;
  gsize params_size;
  /* Keys whose value is itself a model choice ({"model": NAME, ...params}); may be NULL. */
  const SimSubmodelSpec *submodels;
  guint n_submodels;
  /* Further keys the generic parser must accept because a caller parses them itself (NULL-terminated). */
  const char *const *extra_keys;
  /* Frees what a caller parsed for those keys into the params struct; may be NULL. */
  void (*clear_extra)(void *params);
  /* Cross-field checks after every field passed its own; adds problems at `path`. May be NULL. */
  void (*check)(const void *params, SimDiag *diag, const char *path);
  /* Structured settings: keys (listed in extra_keys) whose values are arrays and tables, some naming other
   * parts of the scenario (a geo network's regions, cities, gateways of pools, vantage points). Called after
   * the table and submodels were parsed, once the scenario's pools are known (`scope`): stores them into
   * `params` (freed by clear_extra), adds their defaults to `obj` (the echo) and problems at paths below `path`.
   * Returns TRUE if no problem. May be NULL: the model has none. */
  gboolean (*parse_settings)(void *params, json_t *obj, const char *path, const SimModelScope *scope,
                             SimDiag *diag);
  /* Appends the help of the structured settings (for `sim models`), each line indented by `indent`. May be
   * NULL. */
  void (*describe_settings)(int indent, GString *out);
} SimModelInfo;

/* What of the rest of the scenario a model's structured settings may name. */
struct SimModelScope {
  const char *const *pool_names; /* the pools, in scenario order (NULL-terminated) */
  guint n_pools;
};

/* A nested model choice inside a model's parameters: the chosen model and its parsed params are stored
 * as a SimModelRef at `offset` in the parent's params struct. */
struct SimSubmodelSpec {
  const char *key;           /* JSON key, e.g. "delay" */
  const char *family;        /* model family to choose from */
  const char *default_model; /* used when the key is absent */
  size_t offset;             /* offsetof() a SimModelRef in the parent params */
  const char *help;
};

typedef struct {
  const SimModelInfo *model;
  void *params; /* model->params_size bytes, owned by whoever loaded the scenario */
} SimModelRef;

/* ---- Paths and overrides ---- */

/* The JSON path of member `key` under `path`: "$.a.key", or $.a["odd key"] where the dotted form would be
 * ambiguous. Free with g_free(). */
char *sim_json_child_path(const char *path, const char *key);

/* Applies `--set PATH=VALUE` to `root`: PATH is dotted with [index] for arrays ("stop.heights",
 * "pools[2].hash_share", "$.network.delay.median_ms" also accepted). VALUE is parsed as JSON when it
 * is valid JSON (numbers, true/false/null, objects, arrays, quoted strings), else taken as a string,
 * except that a VALUE starting with '{', '[' or '"' (after blanks) must be valid JSON: otherwise it is a
 * SIM_PARAMS_ERROR_SYNTAX error "--set PATH: invalid JSON value (LINE:COL: reason); ...".
 * Intermediate objects are created when missing; array indices must exist. On error returns FALSE
 * and sets `error` (domain SIM_PARAMS_ERROR) naming the path; `root` is then unchanged. */
gboolean sim_json_set_path(json_t *root, const char *assignment, GError **error);

/* The canonical JSON path that `assignment` ("PATH=VALUE", as for sim_json_set_path) assigns, in the form
 * validation messages use: "pools[02].x=1" gives "$.pools[2].x". NULL when PATH is malformed. Free with
 * g_free(). */
char *sim_json_set_target(const char *assignment);

/* The value at `path` in `root` (same path syntax as sim_json_set_path, without "=VALUE"), borrowed from
 * `root`. NULL with `error` set (domain SIM_PARAMS_ERROR) when the path is malformed or does not exist;
 * the message names the first missing part: "$.network.delay.median_mss does not exist". */
json_t *sim_json_get_path(json_t *root, const char *path, GError **error);

#define SIM_PARAMS_ERROR (sim_params_error_quark())
GQuark sim_params_error_quark(void);
typedef enum { SIM_PARAMS_ERROR_PATH, SIM_PARAMS_ERROR_SYNTAX } SimParamsError;

G_END_DECLS
