/* scenario.c: the strict scenario loader. */
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "geo.h"
#include "registry.h"

typedef struct {
  char *name;
  int64_t seed;
} TopParams;

static const SimParamSpec top_params[] = {
    {.name = "name", .type = SIM_PARAM_STRING, .def_str = "", .offset = offsetof(TopParams, name),
     .help = "scenario name; results go to results/<name>/ by default (letters, digits, '.', '_', '-')"},
    {.name = "seed", .type = SIM_PARAM_INT, .min = 0, .max = (double)INT64_MAX, .def = 1,
     .offset = offsetof(TopParams, seed), .help = "master seed of every RNG stream"},
};
static const char *const top_sections[] = {"comment", "stop", "chain", "uncles", "network", "pools", "transactions",
                                           NULL};

static const SimParamSpec stop_params[] = {
    {.name = "heights", .type = SIM_PARAM_INT, .min = 0, .max = 1e9, .def = 0,
     .offset = offsetof(SimStopSpec, heights), .help = "stop when the chain has this many heights (0: unset)"},
    {.name = "time_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 0, .max = 1e12, .def = 0,
     .offset = offsetof(SimStopSpec, time_s), .help = "stop at this simulated time (0: unset)"},
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
    sim_params_parse(pow_pool_params, pow_pool_n_params, json_array_get(arr, i), p, pool_extra, &sc->pools[i],
                     diag);
  }
  if (sim_diag_count(diag) != before) return;
  double sum = 0;
  for (guint i = 0; i < sc->n_pools; i++) {
    sum += sc->pools[i].hash_share;
    for (guint j = 0; j < i; j++) {
      if (strcmp(sc->pools[i].name, sc->pools[j].name) == 0) {
        g_autofree char *p = g_strdup_printf("$.pools[%u].name", i);
        sim_diag_add(diag, p, "duplicate pool name \"%s\" (also $.pools[%u])", sc->pools[i].name, j);
      }
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

  guint stop_before = sim_diag_count(diag);
  sim_params_parse(stop_params, G_N_ELEMENTS(stop_params), section(root, "stop"), "$.stop", NULL, &sc->stop,
                   diag);
  if (sim_diag_count(diag) == stop_before && sc->stop.heights == 0 && sc->stop.time_s == 0 &&
      sc->stop.events == 0)
    sim_diag_add(diag, "$.stop", "set at least one of heights, time_s, events (the run would never stop)");

  static const char *const chain_extra[] = {"comment", NULL};
  sim_params_parse(pow_chain_params, pow_chain_n_params, section(root, "chain"), "$.chain", chain_extra,
                   &sc->pow.chain, diag);
  sim_model_ref_parse(&sc->pow.uncles, "uncle_rule", "ethereum", section(root, "uncles"), "$.uncles", diag);
  sim_model_ref_parse(&sc->pow.network, "network", "pool-delay", section(root, "network"), "$.network", diag);
  guint pools_before = sim_diag_count(diag);
  load_pools(sc, root, diag);
  /* The geo network's tables name pools and regions, so they are parsed once both are known. */
  if (sim_diag_count(diag) == pools_before && sc->pow.network.params && sc->pow.network.model == &pow_network_geo.info) {
    g_autofree const char **names = g_new0(const char *, sc->n_pools + 1);
    for (guint i = 0; i < sc->n_pools; i++) names[i] = sc->pools[i].name;
    const NetGeoParams *gp = sc->pow.network.params;
    if (net_geo_parse_tables(sc->pow.network.params, json_object_get(root, "network"), "$.network", names,
                             sc->n_pools, diag)) {
      /* Every pool reaches the network through a gateway, or with its miners on ordinary nodes. */
      for (guint k = 0; k < sc->n_pools; k++) {
        gboolean has = gp->pool_on_nodes && gp->pool_on_nodes[k];
        for (guint i = 0; i < gp->n_specials && !has; i++)
          has = gp->specials[i].role == NET_ROLE_GATEWAY && gp->specials[i].pool == k;
        if (!has)
          sim_diag_add(diag, "$.network.gateways", "pool \"%s\" has no gateway (give it an entry with its cities)",
                       sc->pools[k].name);
      }
    }
  }

  /* Transactions name pools (censorship) and need the block gas limit. */
  json_t *txo = json_object_get(root, "transactions");
  gboolean pools_parsed = sim_diag_count(diag) == pools_before;
  if (txo && pools_parsed) {
    g_autofree const char **names = g_new0(const char *, sc->n_pools + 1);
    for (guint i = 0; i < sc->n_pools; i++) names[i] = sc->pools[i].name;
    sc->has_tx = TRUE;
    tx_config_parse(&sc->tx, txo, "$.transactions", names, sc->n_pools, sc->pow.chain.block_gas_limit, diag);
    if (sc->pow.chain.tx_rate_per_s > 0)
      sim_diag_add(diag, "$.chain.tx_rate_per_s",
                   "must be 0 with a \"transactions\" section (which creates the transactions itself)");
  }
  for (guint i = 0; i < sc->n_pools && pools_parsed; i++) {
    const PowPoolSpec *ps = &sc->pools[i];
    if ((ps->strategy == POW_STRATEGY_WITHHOLDING) != (ps->withhold_share > 0)) {
      g_autofree char *wp = g_strdup_printf("$.pools[%u].withhold_share", i);
      sim_diag_add(diag, wp, "must be > 0 exactly when strategy is \"withholding\" (got %g)", ps->withhold_share);
    }
  }

  if (sim_diag_count(diag) != before) return NULL;
  sc->pow.tx = sc->has_tx ? &sc->tx : NULL;
  sc->pow.pools = sc->pools;
  sc->pow.seed = sc->seed;
  sc->pow.n_pools = sc->n_pools;
  if (sc->stop.heights > 0) sc->pow.stop_height = (uint32_t)(sc->stop.heights + sc->stop.settle_heights);
  return g_steal_pointer(&sc);
}

SimScenario *sim_scenario_load_data(const char *data, size_t len, const char *path, const char *const *sets,
                                    SimDiag *diag) {
  gboolean blank = TRUE;
  for (size_t i = 0; i < len && blank; i++) blank = g_ascii_isspace(data[i]);
  if (blank) {
    sim_diag_add_raw(diag, "1:1: empty file (expected a JSON object)");
    return NULL;
  }
  json_error_t err;
  g_autoptr(json_t) root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err);
  if (!root) {
    sim_diag_add_raw(diag, "%d:%d: %s", MAX(err.line, 1), MAX(err.column, 1), err.text);
    return NULL;
  }
  guint before = sim_diag_count(diag);
  for (const char *const *s = sets; s && *s; s++) {
    g_autoptr(GError) e = NULL;
    if (!sim_json_set_path(root, *s, &e)) sim_diag_add_raw(diag, "%s", e->message);
  }
  if (sim_diag_count(diag) != before) return NULL;
  return load_doc(root, path, diag);
}

SimScenario *sim_scenario_load_file(const char *path, const char *const *sets, SimDiag *diag) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    sim_diag_add_raw(diag, "cannot open: %s", g_strerror(errno));
    return NULL;
  }
  g_autoptr(GByteArray) buf = g_byte_array_new();
  guint8 chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) g_byte_array_append(buf, chunk, (guint)n);
  int read_errno = ferror(f) ? errno : 0;
  fclose(f);
  if (read_errno) {
    sim_diag_add_raw(diag, "cannot read: %s", g_strerror(read_errno));
    return NULL;
  }
  return sim_scenario_load_data((const char *)buf->data, buf->len, path, sets, diag);
}

void sim_scenario_free(SimScenario *sc) {
  if (!sc) return;
  for (guint i = 0; i < sc->n_pools; i++) sim_params_clear(pow_pool_params, pow_pool_n_params, &sc->pools[i]);
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
                       "transactions\n");
  sim_params_describe(top_params, G_N_ELEMENTS(top_params), 6, out);
  g_string_append(out, "  stop\n");
  sim_params_describe(stop_params, G_N_ELEMENTS(stop_params), 6, out);
  g_string_append(out, "  chain\n");
  sim_params_describe(pow_chain_params, pow_chain_n_params, 6, out);
  g_string_append(out, "  pools[]  (an array; hash_share values must sum to 1 within 0.001 and are normalised)\n");
  sim_params_describe(pow_pool_params, pow_pool_n_params, 6, out);
  tx_config_describe(out);
  g_string_append(out, "  uncles   an \"uncle_rule\" model (default ethereum)\n");
  g_string_append(out, "  network  a \"network\" model (default pool-delay)\n");
  g_string_append(out,
                  "  network.joining  (geo only, optional: ordinary nodes that join during the run and relay "
                  "nothing until synced)\n");
  sim_params_describe(net_geo_joining_specs, net_geo_n_joining_specs, 6, out);
}
