/* scenario.c: the strict scenario loader. */
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emc.h"
#include "input.h"
#include "net.h"
#include "registry.h"

typedef struct {
  char *name;
  int64_t seed;
} TopParams;

/* stop.time_s: above 1 ns (a shorter stop rounds to 0 ns) and far inside the int64 ns clock (292 years), so
 * that time plus any model duration (SIM_DURATION_MAX, 2.3 years) still fits. */
#define STOP_TIME_MIN_S 1e-9
#define STOP_TIME_MAX_S 1e9
/* Transactions a run may be expected to create (the 2019 month had 22 M): each is drawn, queued and
 * tracked, so 1e9 is already hours of work. */
#define TX_MAX_EXPECTED 1e9

static const SimParamSpec top_params[] = {
    {.name = "name", .type = SIM_PARAM_STRING, .def_str = "", .offset = offsetof(TopParams, name),
     .help = "scenario name; results go to results/<name>/ by default (letters, digits, '.', '_', '-')"},
    {.name = "seed", .type = SIM_PARAM_INT, .min = 0, .max = (double)INT64_MAX, .def = 1,
     .offset = offsetof(TopParams, seed), .help = "master seed of every RNG stream"},
};
/* "include" is resolved and removed before validation (listed so that messages name it). "calibration" is the
 * fit report that models files written by `sim calibrate` carry; the loader only checks that it is an object. */
static const char *const top_sections[] = {"comment", "stop",         "chain",   "uncles",      "network",
                                           "pools",   "transactions", "include", "calibration", NULL};

static const SimParamSpec stop_params[] = {
    {.name = "heights", .type = SIM_PARAM_INT, .min = 0, .max = 1e9, .def = 0,
     .offset = offsetof(SimStopSpec, heights), .help = "stop when the chain has this many heights (0: unset)"},
    {.name = "time_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 0, .max = STOP_TIME_MAX_S, .def = 0,
     .offset = offsetof(SimStopSpec, time_s),
     .help = "stop at this simulated time (0: unset; else at least 1 ns, the clock's tick; at most 31.7 years, "
             "as the int64 ns clock ends at 292)"},
    {.name = "events", .type = SIM_PARAM_INT, .min = 0, .max = 1e15, .def = 0,
     .offset = offsetof(SimStopSpec, events), .help = "stop after this many events (0: unset)"},
    {.name = "settle_heights", .type = SIM_PARAM_INT, .min = 0, .max = 1000, .def = 7,
     .offset = offsetof(SimStopSpec, settle_heights),
     .help = "with heights: heights mined past the window so its last blocks can still become uncles"},
};

static gboolean valid_name(const char *s) {
  if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return FALSE;
  for (; *s; s++)
    if (!g_ascii_isalnum(*s) && *s != '.' && *s != '_' && *s != '-') return FALSE;
  return TRUE;
}

static json_t *section(json_t *root, const char *key) {
  json_t *o = json_object_get(root, key);
  if (!o) {
    o = json_object();
    json_object_set_new(root, key, o);
  }
  return o;
}

static void check_comment(json_t *root, SimDiag *diag) {
  json_t *c = json_object_get(root, "comment");
  if (!c || json_is_string(c)) return;
  if (json_is_array(c)) {
    size_t i;
    json_t *v;
    json_array_foreach(c, i, v) {
      if (!json_is_string(v)) {
        g_autofree char *p = g_strdup_printf("$.comment[%zu]", i);
        sim_diag_add(diag, p, "must be a string");
      }
    }
    return;
  }
  sim_diag_add(diag, "$.comment", "must be a string or an array of strings");
}

static void load_pools(SimScenario *sc, json_t *root, SimDiag *diag) {
  json_t *arr = json_object_get(root, "pools");
  if (!arr) {
    sim_diag_add(diag, "$.pools", "missing required key");
    return;
  }
  if (!json_is_array(arr) || json_array_size(arr) == 0) {
    sim_diag_add(diag, "$.pools", "must be a non-empty array of pool objects");
    return;
  }
  guint before = sim_diag_count(diag);
  sc->n_pools = (guint)json_array_size(arr);
  sc->pools = g_new0(PowPoolSpec, sc->n_pools);
  static const char *const pool_extra[] = {"comment", NULL};
  for (guint i = 0; i < sc->n_pools; i++) {
    g_autofree char *p = g_strdup_printf("$.pools[%u]", i);
    pow_pool_parse(&sc->pools[i], json_array_get(arr, i), p, pool_extra, diag);
  }
  if (sim_diag_count(diag) != before) return;
  double sum = 0;
  /* Name -> index of its first use: linear in the number of pools (pairwise comparison took 16 s for
   * 10,000 pools). Each duplicate names the first use, as before. */
  g_autoptr(GHashTable) first = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < sc->n_pools; i++) {
    sum += sc->pools[i].hash_share;
    gpointer j;
    if (g_hash_table_lookup_extended(first, sc->pools[i].name, NULL, &j)) {
      g_autofree char *p = g_strdup_printf("$.pools[%u].name", i);
      sim_diag_add(diag, p, "duplicate pool name \"%s\" (also $.pools[%u])", sc->pools[i].name,
                   GPOINTER_TO_UINT(j));
    } else {
      g_hash_table_insert(first, sc->pools[i].name, GUINT_TO_POINTER(i));
    }
  }
  /* Coinbase addresses: the logs name a block's miner by it, so it must be an address, belong to one
   * miner (a pool of several stands for independent miners, whose runs must stay apart when the logs are
   * read back) and to one pool only. Compared as bytes: hex digits of either case are the same address. */
  g_autoptr(GHashTable) addr_first = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
  for (guint i = 0; i < sc->n_pools; i++) {
    const char *cb = sc->pools[i].coinbase;
    if (!cb || !*cb) continue;
    g_autofree char *p = g_strdup_printf("$.pools[%u].coinbase", i);
    EmcAddress a;
    if (!emc_address_parse(cb, strlen(cb), &a)) {
      sim_diag_add(diag, p, "must be an address: 0x followed by 40 hex digits (got \"%s\")", cb);
      continue;
    }
    if (sc->pools[i].miners != 1) {
      sim_diag_add(diag, p,
                   "a pool of %" G_GINT64_FORMAT " independent miners has one synthetic address per miner; "
                   "coinbase is for a pool of one miner",
                   sc->pools[i].miners);
      continue;
    }
    GBytes *key = g_bytes_new(a.bytes, sizeof a.bytes);
    gpointer j;
    if (g_hash_table_lookup_extended(addr_first, key, NULL, &j)) {
      sim_diag_add(diag, p, "the same address as $.pools[%u].coinbase (a block names one pool)", GPOINTER_TO_UINT(j));
      g_bytes_unref(key);
    } else {
      g_hash_table_insert(addr_first, key, GUINT_TO_POINTER(i));
    }
  }
  /* Published shares are rounded (the 2019 table sums to 1.0001): accept that, then normalise. */
  if (fabs(sum - 1.0) > 1e-3) {
    sim_diag_add(diag, "$.pools", "hash_share values must sum to 1 (within 0.001), got %.6g", sum);
    return;
  }
  if (sum != 1.0)
    for (guint i = 0; i < sc->n_pools; i++) sc->pools[i].hash_share /= sum;
}

/* A run stopped by time alone mines about time / interval blocks: refuse a count no run could hold
 * (POW_MAX_BLOCKS, the bound of stop.heights), which an interval at its lower bound reaches in 11.6 days. */
static void check_blocks(const SimScenario *sc, SimDiag *diag) {
  if (sc->stop.heights > 0 || sc->stop.events > 0 || sc->stop.time_s == 0) return;
  if (sc->pow.chain.difficulty != POW_DIFFICULTY_FIXED) return; /* EIP-100 holds ~13 s: 1e9 s is 8e7 blocks */
  double blocks = sc->stop.time_s / sc->pow.chain.target_interval_s;
  if (blocks > POW_MAX_BLOCKS)
    sim_diag_add(diag, "$.chain.target_interval_s",
                 "with stop.time_s %g s the run would mine about %.3g blocks, more than %g (the bound of "
                 "stop.heights): raise the interval, lower stop.time_s or set stop.heights",
                 sc->stop.time_s, blocks, POW_MAX_BLOCKS);
}

/* The transactions a run creates: rate x its length in simulated time (stop.time_s, or the heights at the
 * mean interval), bounded by TX_MAX_EXPECTED. A run stopped by events alone is bounded by its events. */
static void check_tx_count(const SimScenario *sc, SimDiag *diag) {
  double length_s = INFINITY;
  if (sc->stop.time_s > 0) length_s = sc->stop.time_s;
  if (sc->stop.heights > 0) {
    double interval = sc->pow.chain.difficulty == POW_DIFFICULTY_FIXED ? sc->pow.chain.target_interval_s
                                                                       : POW_BYZANTIUM_INTERVAL_S;
    length_s = MIN(length_s, (double)(sc->stop.heights + sc->stop.settle_heights) * interval);
  }
  if (!isfinite(length_s)) return;
  double n = sc->tx.p.rate_per_s * length_s;
  if (n > TX_MAX_EXPECTED)
    sim_diag_add(
        diag, "$.transactions.rate_per_s",
        "%g per second over a run of about %.3g s would create about %.3g transactions, more than %g: "
        "lower the rate or stop the run earlier",
        sc->tx.p.rate_per_s, length_s, n, TX_MAX_EXPECTED);
}

static SimScenario *load_doc(json_t *root, const char *path, SimDiag *diag) {
  g_autoptr(SimScenario) sc = g_new0(SimScenario, 1);
  sc->path = g_strdup(path);
  sc->doc = json_incref(root);
  guint before = sim_diag_count(diag);

  if (!json_is_object(root)) {
    sim_diag_add(diag, "$", "must be an object");
    return NULL;
  }
  /* The name defaults to the file's base name without its extension. */
  if (!json_object_get(root, "name")) {
    g_autofree char *base = g_path_get_basename(path);
    char *dot = strrchr(base, '.');
    if (dot && dot != base) *dot = '\0';
    json_object_set_new(root, "name", json_string(base));
  }
  TopParams top = {0};
  sim_params_parse(top_params, G_N_ELEMENTS(top_params), root, "$", top_sections, &top, diag);
  sc->name = g_steal_pointer(&top.name);
  sc->seed = (uint64_t)top.seed;
  if (sc->name && !valid_name(sc->name))
    sim_diag_add(diag, "$.name", "must be made of letters, digits, '.', '_' and '-' (got \"%s\")", sc->name);
  check_comment(root, diag);
  json_t *cal = json_object_get(root, "calibration");
  if (cal && !json_is_object(cal)) sim_diag_add(diag, "$.calibration", "must be an object (a fit report, not read)");

  guint stop_before = sim_diag_count(diag);
  sim_params_parse(stop_params, G_N_ELEMENTS(stop_params), section(root, "stop"), "$.stop", NULL, &sc->stop,
                   diag);
  if (sim_diag_count(diag) == stop_before && sc->stop.heights == 0 && sc->stop.time_s == 0 &&
      sc->stop.events == 0)
    sim_diag_add(diag, "$.stop", "set at least one of heights, time_s, events (the run would never stop)");
  if (sc->stop.time_s > 0 && sc->stop.time_s < STOP_TIME_MIN_S)
    sim_diag_add(diag, "$.stop.time_s",
                 "must be 0 (unset) or at least %g s, one tick of the ns clock (got %g)", STOP_TIME_MIN_S,
                 sc->stop.time_s);
  gboolean stop_ok = sim_diag_count(diag) == stop_before;

  static const char *const chain_extra[] = {"comment", NULL};
  guint chain_before = sim_diag_count(diag);
  if (sim_params_parse(pow_chain_params, pow_chain_n_params, section(root, "chain"), "$.chain", chain_extra,
                       &sc->pow.chain, diag))
    pow_chain_check(&sc->pow.chain, diag, "$.chain");
  gboolean chain_ok = sim_diag_count(diag) == chain_before;
  if (stop_ok && chain_ok) check_blocks(sc, diag);
  sim_model_ref_parse(&sc->pow.uncles, "uncle_rule", "ethereum", section(root, "uncles"), "$.uncles", diag);
  sim_model_ref_parse(&sc->pow.network, "network", "pool-delay", section(root, "network"), "$.network", diag);
  guint pools_before = sim_diag_count(diag);
  load_pools(sc, root, diag);
  /* Structured settings name pools (a geo network's gateways), so they are parsed once the pools are known. */
  if (sim_diag_count(diag) == pools_before) {
    g_autofree const char **names = g_new0(const char *, sc->n_pools + 1);
    for (guint i = 0; i < sc->n_pools; i++) names[i] = sc->pools[i].name;
    SimModelScope scope = {.pool_names = names, .n_pools = sc->n_pools};
    sim_model_ref_parse_settings(&sc->pow.uncles, json_object_get(root, "uncles"), "$.uncles", &scope, diag);
    sim_model_ref_parse_settings(&sc->pow.network, json_object_get(root, "network"), "$.network", &scope, diag);
  }

  /* Transactions name pools (censorship) and need the block gas limit. */
  json_t *txo = json_object_get(root, "transactions");
  gboolean pools_parsed = sim_diag_count(diag) == pools_before;
  if (txo && pools_parsed) {
    g_autofree const char **names = g_new0(const char *, sc->n_pools + 1);
    for (guint i = 0; i < sc->n_pools; i++) names[i] = sc->pools[i].name;
    sc->has_tx = TRUE;
    guint tx_before = sim_diag_count(diag);
    tx_config_parse(&sc->tx, txo, "$.transactions", names, sc->n_pools, sc->pow.chain.block_gas_limit, diag);
    if (stop_ok && chain_ok && sim_diag_count(diag) == tx_before) check_tx_count(sc, diag);
    if (sc->pow.chain.tx_rate_per_s > 0)
      sim_diag_add(diag, "$.chain.tx_rate_per_s",
                   "must be 0 with a \"transactions\" section (which creates the transactions itself)");
  }
  for (guint i = 0; i < sc->n_pools && pools_parsed; i++) pow_pool_check(&sc->pools[i], i, diag);

  if (sim_diag_count(diag) != before) return NULL;
  sc->pow.tx = sc->has_tx ? &sc->tx : NULL;
  sc->pow.pools = sc->pools;
  sc->pow.seed = sc->seed;
  sc->pow.n_pools = sc->n_pools;
  if (sc->stop.heights > 0) sc->pow.stop_height = (uint32_t)(sc->stop.heights + sc->stop.settle_heights);
  return g_steal_pointer(&sc);
}

/* ---- Includes ---- */

#define INCLUDE_MAX_DEPTH 16
/* A file included several times is read each time, so without a cap on the includes in all, 16 levels of
 * files that each include the next one 8 times would read 8^16 files. */
#define INCLUDE_MAX_READS 256

/* A problem found while resolving the includes of one file: a JSON path in that file and a message. */
typedef struct {
  char *path;
  char *message;
} IncProblem;

static void inc_problem_free(gpointer p) {
  IncProblem *x = p;
  g_free(x->path);
  g_free(x->message);
  g_free(x);
}

static void inc_problem(GPtrArray *problems, const char *path, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void inc_problem(GPtrArray *problems, const char *path, const char *fmt, ...) {
  IncProblem *x = g_new(IncProblem, 1);
  va_list ap;
  va_start(ap, fmt);
  x->message = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  x->path = g_strdup(path);
  g_ptr_array_add(problems, x);
}

/* Adds every key of `src` that `dst` lacks (deep copies), recursing where both hold objects: `dst` wins, and
 * arrays and other values are never merged, only taken whole from one side. */
static void merge_under(json_t *dst, const json_t *src) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)src, k, v) {
    json_t *d = json_object_get(dst, k);
    if (!d) json_object_set_new(dst, k, json_deep_copy(v));
    else if (json_is_object(d) && json_is_object(v)) merge_under(d, v);
  }
}

/* The file an include names: relative to the including file's directory. */
static char *include_resolve(const char *including, const char *name) {
  if (g_path_is_absolute(name)) return g_strdup(name);
  g_autofree char *dir = g_path_get_dirname(including);
  if (strcmp(dir, ".") == 0) return g_strdup(name);
  return g_build_filename(dir, name, NULL);
}

/* What identifies a file on the include stack: its real path where it exists (symbolic links followed). */
static char *include_key(const char *file) {
  char *real = realpath(file, NULL);
  if (real) {
    char *k = g_strdup(real);
    free(real);
    return k;
  }
  return g_canonicalize_filename(file, NULL);
}

static void resolve_includes(json_t *root, const char *file, GPtrArray *stack, GPtrArray *shown, guint *reads,
                             GPtrArray *problems);

/* Loads the include `name` of `file` (at JSON path `jpath`) with its own includes resolved, counting the
 * includes met in *reads. NULL with problems added at `jpath`, except past INCLUDE_MAX_READS, where only the
 * first refused include reports (the scenario fails all the same). */
static json_t *include_load(const char *file, const char *name, const char *jpath, GPtrArray *stack,
                            GPtrArray *shown, guint *reads, GPtrArray *problems) {
  g_autofree char *inc = include_resolve(file, name);
  if (++*reads > INCLUDE_MAX_READS) {
    if (*reads == INCLUDE_MAX_READS + 1)
      inc_problem(problems, jpath, "%s: more than %d includes in all (a file included again counts again)", inc,
                  INCLUDE_MAX_READS);
    return NULL;
  }
  g_autofree char *key = include_key(inc);
  for (guint i = 0; i < stack->len; i++) {
    if (strcmp(g_ptr_array_index(stack, i), key) != 0) continue;
    GString *chain = g_string_new(NULL);
    for (guint j = i; j < shown->len; j++) g_string_append_printf(chain, "%s -> ", (const char *)g_ptr_array_index(shown, j));
    g_string_append(chain, inc);
    inc_problem(problems, jpath, "include cycle: %s", chain->str);
    g_string_free(chain, TRUE);
    return NULL;
  }
  if (stack->len >= INCLUDE_MAX_DEPTH) {
    inc_problem(problems, jpath, "%s: includes nested more than %d deep", inc, INCLUDE_MAX_DEPTH);
    return NULL;
  }
  SimInputProblem pb;
  g_autoptr(GError) ie = NULL;
  json_t *doc = sim_json_load_file(inc, 0, SIM_JSON_DEFAULT, &pb, &ie);
  if (!doc) {
    if (ie->code == SIM_INPUT_ERROR_OPEN || ie->code == SIM_INPUT_ERROR_READ) {
      inc_problem(problems, jpath, "cannot %s %s: %s", ie->code == SIM_INPUT_ERROR_OPEN ? "open" : "read", inc,
                  g_strerror(pb.err_no));
    } else {
      g_autofree char *t = sim_input_error_text(inc, ie);
      inc_problem(problems, jpath, "%s", t);
    }
    return NULL;
  }
  if (!json_is_object(doc)) {
    inc_problem(problems, jpath, "%s: $: must be an object (a partial scenario)", inc);
    json_decref(doc);
    return NULL;
  }
  g_ptr_array_add(stack, g_steal_pointer(&key));
  g_ptr_array_add(shown, g_strdup(inc));
  g_autoptr(GPtrArray) inner = g_ptr_array_new_with_free_func(inc_problem_free);
  resolve_includes(doc, inc, stack, shown, reads, inner);
  g_ptr_array_remove_index(stack, stack->len - 1);
  g_ptr_array_remove_index(shown, shown->len - 1);
  /* Problems inside the included file name that file and their path in it. */
  for (guint i = 0; i < inner->len; i++) {
    const IncProblem *x = g_ptr_array_index(inner, i);
    inc_problem(problems, jpath, "%s: %s: %s", inc, x->path, x->message);
  }
  if (inner->len) {
    json_decref(doc);
    return NULL;
  }
  return doc;
}

/* Replaces root's "include" by the content of the files it names (recursively), merged under root: later
 * includes win over earlier ones, root over all. Problems go to `problems` with their path in `file`. */
static void resolve_includes(json_t *root, const char *file, GPtrArray *stack, GPtrArray *shown, guint *reads,
                             GPtrArray *problems) {
  json_t *list = json_object_get(root, "include");
  if (!list) return;
  gboolean is_list = json_is_array(list);
  g_autoptr(json_t) names = is_list ? json_incref(list) : json_pack("[O]", list);
  json_object_del(root, "include");
  if (!is_list && !json_is_string(list)) {
    inc_problem(problems, "$.include", "must be a file name or an array of file names");
    return;
  }
  g_autoptr(json_t) acc = json_object();
  guint before = problems->len;
  size_t i;
  json_t *v;
  json_array_foreach(names, i, v) {
    g_autofree char *jp = is_list ? g_strdup_printf("$.include[%zu]", i) : g_strdup("$.include");
    if (!json_is_string(v) || !*json_string_value(v)) {
      inc_problem(problems, jp, "must be a file name (a non-empty string)");
      continue;
    }
    json_t *doc = include_load(file, json_string_value(v), jp, stack, shown, reads, problems);
    if (!doc) continue;
    merge_under(doc, acc);
    json_decref(acc);
    acc = doc;
  }
  if (problems->len == before) merge_under(root, acc);
}

/* The model a `--set SECTION.model=NAME` replaces: the current string at that path, or NULL when the set assigns
 * something else. Free with g_free(). */
static char *model_at(json_t *root, const char *assignment) {
  g_autofree char *target = sim_json_set_target(assignment);
  if (!target || !g_str_has_suffix(target, ".model")) return NULL;
  json_t *cur = sim_json_get_path(root, target, NULL);
  return json_is_string(cur) ? g_strdup(json_string_value(cur)) : NULL;
}

/* A model switch by --set resets its section: the old model's parameters mean nothing to the new one (and
 * would be refused as unknown keys), so the section keeps only "model" and "comment", and the new model's
 * defaults apply. Parameters of the new model are set by later --set options. */
static void reset_switched_model(json_t *root, const char *assignment, const char *old_model) {
  g_autofree char *target = sim_json_set_target(assignment);
  json_t *now = sim_json_get_path(root, target, NULL);
  if (!json_is_string(now) || strcmp(json_string_value(now), old_model) == 0) return;
  g_autofree char *section = g_strndup(target, strlen(target) - strlen(".model"));
  json_t *obj = sim_json_get_path(root, section, NULL);
  if (!json_is_object(obj)) return;
  const char *key;
  json_t *v;
  void *tmp;
  json_object_foreach_safe(obj, tmp, key, v) {
    if (strcmp(key, "model") != 0 && strcmp(key, "comment") != 0) json_object_del(obj, key);
  }
}

/* `own_sets`: the sets are the user's --set options, so problems they cause are reported against them. */
static SimScenario *load_data(const char *data, size_t len, const char *path, const char *const *sets,
                              gboolean own_sets, SimDiag *diag) {
  SimInputProblem pb;
  g_autoptr(GError) ie = NULL;
  g_autoptr(json_t) root = sim_json_parse(data, len, SIM_JSON_DEFAULT, &pb, &ie);
  if (!root) {
    sim_diag_add_input_error(diag, ie, &pb);
    return NULL;
  }
  guint before = sim_diag_count(diag);
  if (json_is_object(root)) {
    g_autoptr(GPtrArray) stack = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) shown = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) problems = g_ptr_array_new_with_free_func(inc_problem_free);
    g_ptr_array_add(stack, include_key(path));
    g_ptr_array_add(shown, g_strdup(path));
    guint reads = 0;
    resolve_includes(root, path, stack, shown, &reads, problems);
    for (guint i = 0; i < problems->len; i++) {
      const IncProblem *x = g_ptr_array_index(problems, i);
      sim_diag_add(diag, x->path, "%s", x->message);
    }
    if (sim_diag_count(diag) != before) return NULL;
  }
  for (const char *const *s = sets; s && *s; s++) {
    g_autoptr(GError) e = NULL;
    g_autofree char *old_model = model_at(root, *s);
    if (!sim_json_set_path(root, *s, &e)) {
      /* A malformed path or value is wrong whatever the file; a path the file lacks is not. */
      if (own_sets && g_error_matches(e, SIM_PARAMS_ERROR, SIM_PARAMS_ERROR_SYNTAX))
        sim_diag_add_plain(diag, "%s", e->message);
      else
        sim_diag_add_raw(diag, "%s", e->message);
      continue;
    }
    if (old_model) reset_switched_model(root, *s, old_model);
    if (own_sets) {
      g_autofree char *target = sim_json_set_target(*s);
      g_autofree char *label = g_strdup_printf("--set %.*s", (int)(strchr(*s, '=') - *s), *s);
      sim_diag_attribute(diag, target, label);
    }
  }
  if (json_is_object(root) && json_object_get(root, "include"))
    sim_diag_add(diag, "$.include", "cannot be set with --set (includes are read before the overrides)");
  if (sim_diag_count(diag) != before) return NULL;
  return load_doc(root, path, diag);
}

SimScenario *sim_scenario_load_file(const char *path, const char *const *sets, SimDiag *diag) {
  gsize len = 0;
  g_autoptr(GError) ie = NULL;
  g_autofree char *data = sim_input_read_file(path, 0, &len, NULL, &ie);
  if (!data) {
    sim_diag_add_input_error(diag, ie, NULL);
    return NULL;
  }
  return load_data(data, len, path, sets, TRUE, diag);
}

SimScenario *sim_scenario_load_data(const char *data, size_t len, const char *path, const char *const *sets,
                                    SimDiag *diag) {
  return load_data(data, len, path, sets, FALSE, diag);
}

void sim_scenario_free(SimScenario *sc) {
  if (!sc) return;
  for (guint i = 0; i < sc->n_pools; i++) pow_pool_clear(&sc->pools[i]);
  g_free(sc->pools);
  sim_model_ref_clear(&sc->pow.uncles);
  sim_model_ref_clear(&sc->pow.network);
  tx_config_clear(&sc->tx);
  json_decref(sc->doc);
  g_free(sc->name);
  g_free(sc->path);
  g_free(sc);
}

void sim_scenario_describe(GString *out) {
  g_string_append(out, "  (top level)  also: comment (string or array of strings), stop, chain, uncles, network, pools, "
                       "transactions,\n"
                       "      include (file names, relative to this file: partial scenarios merged under this one,\n"
                       "      objects deep-merged, this file's keys winning, later includes over earlier ones),\n"
                       "      calibration (an object: the fit report of 'sim calibrate', not read)\n");
  sim_params_describe(top_params, G_N_ELEMENTS(top_params), 6, out);
  g_string_append(out, "  stop\n");
  sim_params_describe(stop_params, G_N_ELEMENTS(stop_params), 6, out);
  g_string_append(out, "  chain\n");
  sim_params_describe(pow_chain_params, pow_chain_n_params, 6, out);
  g_string_append(out, "  pools[]  (an array; hash_share values must sum to 1 within 0.001 and are normalised)\n");
  pow_pool_describe(6, out);
  tx_config_describe(out);
  g_string_append(out, "  uncles   an \"uncle_rule\" model (default ethereum)\n");
  g_string_append(out, "  network  a \"network\" model (default pool-delay)\n");
  g_string_append(out,
                  "  network.joining  (geo only, optional: ordinary nodes that join during the run and relay "
                  "nothing until synced)\n");
  sim_params_describe(net_geo_joining_specs, net_geo_n_joining_specs, 6, out);
}
