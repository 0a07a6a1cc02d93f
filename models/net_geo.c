/* net_geo.c: the geo network's parameters: its parameter tables (scalars, "joining", submodels) and the
 * structured settings parsed by hand (regions, cities, vantage points, gateways, out_degree_cdf). */
#include "net.h"

#include <math.h>
#include <string.h>

#include "params.h" /* sim_fmt_double */

/* ======================================================================================================
 * Parameter tables
 * ====================================================================================================== */

/* clang-format off */
const SimParamSpec net_geo_param_specs[] = {
    {.name = "nodes",            .type = SIM_PARAM_INT,    .unit = "",      .min = 1, .max = 1e6,      .def = 4000,                                      .offset = offsetof(NetGeoParams, nodes),            .help = "ordinary (home) nodes"},
    {.name = "out_peers",        .type = SIM_PARAM_INT,    .unit = "",      .min = 1, .max = 1000,     .def = 8,                                         .offset = offsetof(NetGeoParams, out_peers),        .help = "peers each ordinary node dials (Geth 1.8.23: max_peers / 3)"},
    {.name = "max_peers",        .type = SIM_PARAM_INT,    .unit = "",      .min = 1, .max = 100000,   .def = 25,                                        .offset = offsetof(NetGeoParams, max_peers),        .help = "links an ordinary node accepts from ordinary nodes and vantage points (Geth default 25)"},
    {.name = "geo_bias",         .type = SIM_PARAM_NUMBER, .unit = "",      .min = 0, .max = 1,        .def = 0.5,                                       .offset = offsetof(NetGeoParams, geo_bias),         .help = "probability that a dial picks a node of the dialler's own region (else any node)"},
    {.name = "dc_upload_bps",    .type = SIM_PARAM_NUMBER, .unit = "bit/s", .min = 0, .max = INFINITY, .def = 1e9,        .min_open = TRUE,              .offset = offsetof(NetGeoParams, dc_upload_bps),    .help = "upload bandwidth of data-centre nodes (vantage points, gateways)"},
    {.name = "dc_download_bps",  .type = SIM_PARAM_NUMBER, .unit = "bit/s", .min = 0, .max = INFINITY, .def = 1e9,        .min_open = TRUE,              .offset = offsetof(NetGeoParams, dc_download_bps),  .help = "download bandwidth of data-centre nodes"},
    {.name = "gateway_peers",    .type = SIM_PARAM_INT,    .unit = "",      .min = 1, .max = 100000,   .def = 50,                                        .offset = offsetof(NetGeoParams, gateway_peers),    .help = "ordinary nodes a pool gateway dials when its entry gives no \"peers\""},
    {.name = "gateway_mesh",     .type = SIM_PARAM_BOOL,                                               .def = 1,                                         .offset = offsetof(NetGeoParams, gateway_mesh),     .help = "pools peer with each other: every two gateways of different pools are linked (latency from their cities); false: only gateways in the same city"},
    {.name = "inter_region_bps", .type = SIM_PARAM_NUMBER, .unit = "bit/s", .min = 0, .max = INFINITY, .def = 0,                                         .offset = offsetof(NetGeoParams, inter_region_bps), .help = "cap on the bandwidth of links between two different regions; 0: none (SimBlock: 6e6)"},
    {.name = "latency_scale",    .type = SIM_PARAM_NUMBER, .unit = "",      .min = 0, .max = 100,      .def = 1,          .min_open = TRUE,              .offset = offsetof(NetGeoParams, latency_scale),    .help = "multiplies every link's mean latency (region table and city RTT / 2); the jitter model's floor follows from the scaled mean; 1: the tables as they are (sim calibrate --fit-network fits it)"},
    {.name = "dc_stack",         .type = SIM_PARAM_ENUM,                                               .def_str = "none", .choices = net_dc_stack_names, .offset = offsetof(NetGeoParams, dc_stack),         .help = "messaging stack between two data-centre nodes (the gateway mesh): each message there also pays the stack's host overheads o_s + o_r (tcp 5 us, rdma-channel 0.16 us); none: nothing added"},
};
/* clang-format on */
G_STATIC_ASSERT(G_N_ELEMENTS(net_geo_param_specs) == NET_GEO_N_PARAMS);
const guint net_geo_n_param_specs = G_N_ELEMENTS(net_geo_param_specs);

/* The test suite checks these two lists against sim_stack_models() and sim_sync_machine_classes(). */
const char *const net_dc_stack_names[] = {"none", "tcp", "rdma-send", "rdma-write", "rdma-channel", NULL};
const char *const net_joining_machine_names[] = {"high-end", "mid-end", "old-spec", NULL};

/* clang-format off */
const SimParamSpec net_geo_joining_specs[] = {
    {.name = "share",    .type = SIM_PARAM_NUMBER, .unit = "",  .min = 0, .max = 1,                         .required = TRUE,                     .offset = offsetof(NetJoining, share),    .help = "share of the ordinary nodes that join during the run (round(share x nodes) of them)"},
    {.name = "window_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 0, .max = 1e9,                       .required = TRUE,                     .offset = offsetof(NetJoining, window_s), .help = "join times are uniform in [0, window_s] of simulated time"},
    {.name = "machine",  .type = SIM_PARAM_ENUM,                                      .def_str = "mid-end", .choices = net_joining_machine_names, .offset = offsetof(NetJoining, machine),  .help = "machine class of the joining nodes (sim sync): a node is unavailable until join + its snap sync time to the head (high-end 127 min, mid-end 355, old-spec 300)"},
};
/* clang-format on */
const guint net_geo_n_joining_specs = G_N_ELEMENTS(net_geo_joining_specs);

/* clang-format off */
const SimSubmodelSpec net_geo_submodels[] = {
    {.key = "jitter",  .family = "jitter", .default_model = "pareto",      .offset = offsetof(NetGeoParams, jitter),  .help = "spread of one message's latency around its pair mean"},
    {.key = "relay",   .family = "relay",  .default_model = "geth-1.8.23", .offset = offsetof(NetGeoParams, relay),   .help = "block relay protocol of the nodes"},
    {.key = "stratum", .family = "delay",  .default_model = "lognormal",   .offset = offsetof(NetGeoParams, stratum), .help = "work distribution: a pool gateway's new head -> its miners working on it"},
};
/* clang-format on */
G_STATIC_ASSERT(G_N_ELEMENTS(net_geo_submodels) == NET_GEO_N_SUBMODELS);
const guint net_geo_n_submodels = G_N_ELEMENTS(net_geo_submodels);

/* ======================================================================================================
 * Parsing the tables
 * ====================================================================================================== */

#define VANTAGE_DEFAULT_PEERS 800
/* Above this many names, "unknown ..." messages point at the list instead of quoting it. */
#define MAX_LISTED_NAMES 16

static char *key_path(const char *path, const char *key) { return sim_json_child_path(path, key); }

static char *index_path(const char *path, size_t i) {
  return g_strdup_printf("%s[%zu]", path, i);
}

/* Reports every key of `obj` that is not in `allowed` (NULL-terminated); "comment" is always allowed. */
static void check_keys(json_t *obj, const char *path, const char *const *allowed, SimDiag *diag) {
  const char *key;
  json_t *value;
  json_object_foreach(obj, key, value) {
    gboolean ok = strcmp(key, "comment") == 0;
    for (guint i = 0; !ok && allowed[i]; i++)
      ok = strcmp(allowed[i], key) == 0;
    if (ok) continue;
    GString *names = g_string_new(NULL);
    for (guint i = 0; allowed[i]; i++)
      g_string_append_printf(names, "%s, ", allowed[i]);
    g_string_append(names, "comment");
    g_autofree char *kp = key_path(path, key);
    sim_diag_add(diag, kp, "unknown key (expected one of: %s)", names->str);
    g_string_free(names, TRUE);
  }
}

/* The value of required key `key` of `obj`, or NULL after reporting it missing. */
static json_t *required_key(json_t *obj, const char *path, const char *key, SimDiag *diag) {
  json_t *v = json_object_get(obj, key);
  if (!v) {
    g_autofree char *kp = key_path(path, key);
    sim_diag_add(diag, kp, "missing required key");
  }
  return v;
}

/* BOUND_MS: a latency or round trip in ms, at most an hour (as the delay models): larger is a typing error. */
enum { BOUND_NONNEG, BOUND_POS, BOUND_MS };
#define LATENCY_MAX_MS 3.6e6

/* Checks one number (null allowed when `allow_null`: stored as NAN); reports at `path`. */
static gboolean parse_number(json_t *v, const char *path, int bound, gboolean allow_null, double *out,
                             SimDiag *diag) {
  if (allow_null && json_is_null(v)) {
    *out = NAN;
    return TRUE;
  }
  if (!json_is_number(v)) {
    sim_diag_add(diag, path, "must be a number%s (got %s)", allow_null ? " or null" : "", sim_json_kind(v));
    return FALSE;
  }
  double d = json_number_value(v);
  gboolean ok = isfinite(d) && (bound == BOUND_POS ? d > 0 : d >= 0) && (bound != BOUND_MS || d <= LATENCY_MAX_MS);
  if (!ok) {
    g_autofree char *got = sim_fmt_double(d);
    if (bound == BOUND_MS)
      sim_diag_add(diag, path, "must be in [0, %g] (got %s)", LATENCY_MAX_MS, got);
    else
      sim_diag_add(diag, path, "must be %s 0 (got %s)", bound == BOUND_POS ? ">" : ">=", got);
    return FALSE;
  }
  *out = d;
  return TRUE;
}

/* An array of exactly n numbers into out[n]. */
static gboolean parse_vector(json_t *v, const char *path, guint n, int bound, double *out, SimDiag *diag) {
  if (!json_is_array(v) || json_array_size(v) != n) {
    if (json_is_array(v))
      sim_diag_add(diag, path, "must be an array of %u numbers (got %zu entries)", n, json_array_size(v));
    else
      sim_diag_add(diag, path, "must be an array of %u numbers (got %s)", n, sim_json_kind(v));
    return FALSE;
  }
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    g_autofree char *ip = index_path(path, i);
    ok &= parse_number(json_array_get(v, i), ip, bound, FALSE, &out[i], diag);
  }
  return ok;
}

/* An n x n matrix of numbers >= 0 (or null when allow_null) into out[n * n], row-major. */
static gboolean parse_matrix(json_t *v, const char *path, guint n, gboolean allow_null, double *out,
                             SimDiag *diag) {
  gboolean ok = TRUE;
  if (!sim_json_matrix_shape(v, path, n, &ok, diag)) return FALSE;
  for (guint i = 0; i < n; i++) {
    json_t *row = json_array_get(v, i);
    if (!json_is_array(row)) continue;
    for (guint j = 0; j < n && j < json_array_size(row); j++) {
      g_autofree char *ep = g_strdup_printf("%s[%u][%u]", path, i, j);
      ok &= parse_number(json_array_get(row, j), ep, BOUND_MS, allow_null, &out[i * n + j], diag);
    }
  }
  return ok;
}

/* A list of names: its length in *n (0 when unusable), the names (NULL for bad entries) and, when all are
 * valid and unique, an index name -> position + 1 (else NULL). */
typedef struct {
  guint n;
  char **names;      /* n + 1; NULL for bad entries (so not a strv) */
  GHashTable *index; /* borrowed keys; NULL when the list has problems */
  char *path;        /* where the list is, for messages; NULL when no list was given */
} NameList;

static void parse_names(json_t *v, const char *path, guint max, const char *what, NameList *out,
                        SimDiag *diag) {
  memset(out, 0, sizeof *out);
  out->path = g_strdup(path);
  if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > max) {
    if (json_is_array(v) && json_array_size(v) > max)
      sim_diag_add(diag, path, "must have at most %u %s (got %zu)", max, what, json_array_size(v));
    else
      sim_diag_add(diag, path, "must be a non-empty array of %s (got %s)", what,
                   json_is_array(v) ? "an empty array" : sim_json_kind(v));
    return;
  }
  out->n = (guint)json_array_size(v);
  out->names = g_new0(char *, out->n + 1);
  GHashTable *index = g_hash_table_new(g_str_hash, g_str_equal);
  gboolean ok = TRUE;
  for (guint i = 0; i < out->n; i++) {
    json_t *e = json_array_get(v, i);
    g_autofree char *ip = index_path(path, i);
    if (!json_is_string(e) || json_string_length(e) == 0) {
      sim_diag_add(diag, ip, "must be a non-empty string (got %s)",
                   json_is_string(e) ? "\"\"" : sim_json_kind(e));
      ok = FALSE;
      continue;
    }
    const char *s = json_string_value(e);
    if (strlen(s) != json_string_length(e)) {
      sim_diag_add(diag, ip, "must not contain NUL characters");
      ok = FALSE;
      continue;
    }
    if (g_hash_table_contains(index, s)) {
      sim_diag_add(diag, ip, "duplicate name \"%s\"", s);
      ok = FALSE;
      continue;
    }
    out->names[i] = g_strdup(s);
    g_hash_table_insert(index, out->names[i], GUINT_TO_POINTER(i + 1));
  }
  if (ok) {
    out->index = index;
  } else {
    g_hash_table_unref(index);
  }
}

static void name_list_clear(NameList *l) {
  if (l->index) g_hash_table_unref(l->index);
  for (guint i = 0; l->names && i < l->n; i++)
    g_free(l->names[i]); /* may have holes: not g_strfreev */
  g_free(l->names);
  g_free(l->path);
  memset(l, 0, sizeof *l);
}

/* Looks up a name given at `path` (a JSON string expected) in `list`; -1 after reporting a problem. When the
 * list itself is broken nothing is reported about unknown names (the list's own problem explains them). */
static int lookup_name(const NameList *list, const char *kind, json_t *v, const char *path, SimDiag *diag) {
  if (!json_is_string(v)) {
    sim_diag_add(diag, path, "must be a %s name (got %s)", kind, sim_json_kind(v));
    return -1;
  }
  const char *s = json_string_value(v);
  if (!list->path) {
    sim_diag_add(diag, path, "unknown %s \"%s\" (no %s are defined)", kind, s,
                 strcmp(kind, "city") == 0 ? "cities" : "regions");
    return -1;
  }
  if (!list->index) return -1;
  gpointer pos = g_hash_table_lookup(list->index, s);
  if (pos) return GPOINTER_TO_INT(pos) - 1;
  if (list->n <= MAX_LISTED_NAMES) {
    g_autofree char *names = g_strjoinv(", ", list->names);
    sim_diag_add(diag, path, "unknown %s \"%s\" (expected one of: %s)", kind, s, names);
  } else {
    sim_diag_add(diag, path, "unknown %s \"%s\" (not in %s)", kind, s, list->path);
  }
  return -1;
}

/* "peers" of a special: an integer in [1, NET_MAX_SPECIAL_PEERS], `def` (added to obj) when absent. */
static gboolean parse_peers(json_t *obj, const char *opath, int64_t def, int64_t nodes, guint32 *out,
                            SimDiag *diag) {
  json_t *v = json_object_get(obj, "peers");
  if (!v) {
    json_object_set_new(obj, "peers", json_integer(def));
    *out = (guint32)def;
    return TRUE;
  }
  g_autofree char *path = key_path(opath, "peers");
  double d;
  if (json_is_integer(v)) {
    d = (double)json_integer_value(v);
  } else if (json_is_real(v) && json_real_value(v) == trunc(json_real_value(v))) {
    d = json_real_value(v);
  } else {
    sim_diag_add(diag, path, "must be an integer (got %s)", sim_json_kind(v));
    return FALSE;
  }
  g_autofree char *got = sim_fmt_double(d);
  if (d < 1) {
    sim_diag_add(diag, path, "must be >= 1 (got %s)", got);
    return FALSE;
  }
  if (d > NET_MAX_SPECIAL_PEERS) {
    sim_diag_add(diag, path, "must be <= %d (got %s)", NET_MAX_SPECIAL_PEERS, got);
    return FALSE;
  }
  if (nodes > 0 && d > (double)nodes) {
    sim_diag_add(diag, path, "must not exceed the %" G_GINT64_FORMAT " ordinary nodes (got %s)", nodes, got);
    return FALSE;
  }
  *out = (guint32)d;
  return TRUE;
}

static void parse_regions(NetGeoParams *p, json_t *regions, const char *rpath, NameList *names,
                          SimDiag *diag) {
  static const char *const keys[] = {"names", "latency_ms", "upload_bps", "download_bps", "node_share", NULL};
  if (!json_is_object(regions)) {
    sim_diag_add(diag, rpath, "must be an object (got %s)", sim_json_kind(regions));
    return;
  }
  check_keys(regions, rpath, keys, diag);
  g_autofree char *names_path = key_path(rpath, "names");
  json_t *jn = required_key(regions, rpath, "names", diag);
  if (jn) parse_names(jn, names_path, NET_MAX_REGIONS, "region names", names, diag);
  if (!names->path) names->path = g_strdup(names_path);
  guint n = names->n;
  if (n > 0) {
    p->n_regions = n;
    p->region_names = g_new0(char *, n + 1);
    for (guint i = 0; i < n; i++)
      p->region_names[i] = g_strdup(names->names[i] ? names->names[i] : "");
    p->latency_ms = g_new0(double, (gsize)n *n);
    p->upload_bps = g_new0(double, n);
    p->download_bps = g_new0(double, n);
    p->node_share = g_new0(double, n);
  }
  struct {
    const char *key;
    double *out;
    int bound;
  } vectors[] = {{"upload_bps", p->upload_bps, BOUND_POS},
                 {"download_bps", p->download_bps, BOUND_POS},
                 {"node_share", p->node_share, BOUND_NONNEG}};
  json_t *jl = required_key(regions, rpath, "latency_ms", diag);
  if (jl && n > 0) {
    g_autofree char *lp = key_path(rpath, "latency_ms");
    parse_matrix(jl, lp, n, FALSE, p->latency_ms, diag);
  }
  for (guint k = 0; k < G_N_ELEMENTS(vectors); k++) {
    json_t *jv = required_key(regions, rpath, vectors[k].key, diag);
    if (!jv || n == 0) continue;
    g_autofree char *vp = key_path(rpath, vectors[k].key);
    gboolean ok = parse_vector(jv, vp, n, vectors[k].bound, vectors[k].out, diag);
    if (ok && vectors[k].out == p->node_share) {
      double sum = 0;
      for (guint i = 0; i < n; i++)
        sum += p->node_share[i];
      if (!(fabs(sum - 1) <= 1e-3)) {
        /* A computed sum: 6 digits, not the round-trip form with its float noise. */
        char got[G_ASCII_DTOSTR_BUF_SIZE];
        g_ascii_formatd(got, sizeof got, "%.6g", sum);
        sim_diag_add(diag, vp, "must sum to 1 (got %s)", got);
      } else {
        for (guint i = 0; i < n; i++)
          p->node_share[i] /= sum;
      }
    }
  }
}

static void parse_cities(NetGeoParams *p, json_t *cities, const char *cpath, const NameList *regions,
                         NameList *names, SimDiag *diag) {
  static const char *const keys[] = {"names", "region", "rtt_ms", NULL};
  if (!json_is_object(cities)) {
    sim_diag_add(diag, cpath, "must be an object (got %s)", sim_json_kind(cities));
    return;
  }
  check_keys(cities, cpath, keys, diag);
  g_autofree char *names_path = key_path(cpath, "names");
  json_t *jn = required_key(cities, cpath, "names", diag);
  if (jn) parse_names(jn, names_path, NET_NO_CITY - 1, "city names", names, diag);
  if (!names->path) names->path = g_strdup(names_path);
  guint n = names->n;
  if (n > 0) {
    p->n_cities = n;
    p->city_names = g_new0(char *, n + 1);
    for (guint i = 0; i < n; i++)
      p->city_names[i] = g_strdup(names->names[i] ? names->names[i] : "");
    p->city_region = g_new0(guint16, n);
    p->city_rtt_ms = g_new0(double, (gsize)n *n);
  }
  json_t *jr = required_key(cities, cpath, "region", diag);
  if (jr && n > 0) {
    g_autofree char *rp = key_path(cpath, "region");
    if (!json_is_array(jr) || json_array_size(jr) != n) {
      if (json_is_array(jr))
        sim_diag_add(diag, rp, "must be an array of %u region names (got %zu entries)", n,
                     json_array_size(jr));
      else
        sim_diag_add(diag, rp, "must be an array of %u region names (got %s)", n, sim_json_kind(jr));
    } else {
      for (guint i = 0; i < n; i++) {
        g_autofree char *ip = index_path(rp, i);
        int r = lookup_name(regions, "region", json_array_get(jr, i), ip, diag);
        if (r >= 0) p->city_region[i] = (guint16)r;
      }
    }
  }
  json_t *jt = required_key(cities, cpath, "rtt_ms", diag);
  if (jt && n > 0) {
    g_autofree char *tp = key_path(cpath, "rtt_ms");
    parse_matrix(jt, tp, n, TRUE, p->city_rtt_ms, diag);
  }
}

/* Whether obj has key a or b (exactly one); reports at opath otherwise. */
static json_t *one_of(json_t *obj, const char *opath, const char *a, const char *b, const char **which,
                      SimDiag *diag) {
  json_t *va = json_object_get(obj, a), *vb = json_object_get(obj, b);
  if (va && vb) {
    sim_diag_add(diag, opath, "must give \"%s\" or \"%s\", not both", a, b);
    return NULL;
  }
  if (!va && !vb) {
    sim_diag_add(diag, opath, "must give \"%s\" or \"%s\"", a, b);
    return NULL;
  }
  *which = va ? a : b;
  return va ? va : vb;
}

static void parse_vantages(NetGeoParams *p, json_t *arr, const char *vpath, const NameList *regions,
                           const NameList *cities, GArray *out, SimDiag *diag) {
  static const char *const keys[] = {"name", "region", "city", "peers", NULL};
  if (!json_is_array(arr)) {
    sim_diag_add(diag, vpath, "must be an array of objects (got %s)", sim_json_kind(arr));
    return;
  }
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *o = json_array_get(arr, i);
    g_autofree char *op = index_path(vpath, i);
    if (!json_is_object(o)) {
      sim_diag_add(diag, op, "must be an object (got %s)", sim_json_kind(o));
      continue;
    }
    check_keys(o, op, keys, diag);
    NetSpecial s = {.role = NET_ROLE_VANTAGE, .pool = NET_NO_POOL, .city = NET_NO_CITY};
    gboolean ok = TRUE;
    json_t *jn = required_key(o, op, "name", diag);
    if (!jn) {
      ok = FALSE;
    } else {
      g_autofree char *np = key_path(op, "name");
      if (!json_is_string(jn) || json_string_length(jn) == 0 ||
          strlen(json_string_value(jn)) != json_string_length(jn)) {
        sim_diag_add(diag, np, "must be a non-empty string (got %s)",
                     json_is_string(jn) ? "\"\"" : sim_json_kind(jn));
        ok = FALSE;
      } else if (g_hash_table_contains(seen, json_string_value(jn))) {
        sim_diag_add(diag, np, "duplicate name \"%s\"", json_string_value(jn));
        ok = FALSE;
      } else {
        g_hash_table_add(seen, (gpointer)json_string_value(jn));
      }
    }
    const char *which = NULL;
    json_t *place = one_of(o, op, "region", "city", &which, diag);
    if (!place) {
      ok = FALSE;
    } else {
      g_autofree char *pp = key_path(op, which);
      if (strcmp(which, "region") == 0) {
        int r = lookup_name(regions, "region", place, pp, diag);
        if (r < 0)
          ok = FALSE;
        else
          s.region = (guint16)r;
      } else {
        int c = lookup_name(cities, "city", place, pp, diag);
        if (c < 0) {
          ok = FALSE;
        } else {
          s.city = (guint16)c;
          s.region = p->city_region[c];
        }
      }
    }
    ok &= parse_peers(o, op, VANTAGE_DEFAULT_PEERS, p->nodes, &s.peers, diag);
    if (!ok) continue;
    s.name = g_strdup(json_string_value(jn));
    g_array_append_val(out, s);
  }
}

static void parse_gateways(NetGeoParams *p, json_t *arr, const char *gpath, const NameList *regions,
                           const NameList *cities, const char *const *pool_names, guint n_pools, GArray *out,
                           SimDiag *diag) {
  static const char *const keys[] = {"pool", "cities", "regions", "peers", "ordinary_nodes", NULL};
  if (!json_is_array(arr)) {
    sim_diag_add(diag, gpath, "must be an array of objects (got %s)", sim_json_kind(arr));
    return;
  }
  g_autofree guint *per_pool = g_new0(guint, MAX(n_pools, 1));
  /* Pool name -> index + 1 (the first pool of that name): one lookup per entry, not a scan of the pools. */
  g_autoptr(GHashTable) pool_index = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint k = n_pools; k-- > 0;)
    if (pool_names[k]) g_hash_table_insert(pool_index, (gpointer)pool_names[k], GUINT_TO_POINTER(k + 1));
  for (size_t i = 0; i < json_array_size(arr); i++) {
    json_t *o = json_array_get(arr, i);
    g_autofree char *op = index_path(gpath, i);
    if (!json_is_object(o)) {
      sim_diag_add(diag, op, "must be an object (got %s)", sim_json_kind(o));
      continue;
    }
    check_keys(o, op, keys, diag);
    gboolean ok = TRUE;
    guint pool = NET_NO_POOL;
    json_t *jp = required_key(o, op, "pool", diag);
    if (!jp) {
      ok = FALSE;
    } else {
      g_autofree char *pp = key_path(op, "pool");
      if (!json_is_string(jp)) {
        sim_diag_add(diag, pp, "must be a pool name (got %s)", sim_json_kind(jp));
        ok = FALSE;
      } else {
        guint k1 = GPOINTER_TO_UINT(g_hash_table_lookup(pool_index, json_string_value(jp)));
        if (k1) pool = k1 - 1;
        if (pool == NET_NO_POOL) {
          sim_diag_add(diag, pp, "unknown pool \"%s\"", json_string_value(jp));
          ok = FALSE;
        }
      }
    }
    /* {"pool", "ordinary_nodes": true}: the pool's miners sit on ordinary nodes, it has no gateway. */
    json_t *jo = json_object_get(o, "ordinary_nodes");
    if (jo) {
      g_autofree char *np = key_path(op, "ordinary_nodes");
      if (!json_is_boolean(jo)) {
        sim_diag_add(diag, np, "must be true or false (got %s)", sim_json_kind(jo));
        continue;
      }
    }
    if (jo && json_is_true(jo)) {
      static const char *const placed[] = {"cities", "regions", "peers"};
      for (guint k = 0; k < G_N_ELEMENTS(placed); k++)
        if (json_object_get(o, placed[k])) {
          sim_diag_add(diag, op, "must not give \"%s\" with \"ordinary_nodes\": true", placed[k]);
          ok = FALSE;
        }
      if (!ok) continue;
      g_autofree char *pp = key_path(op, "pool");
      if (p->pool_on_nodes[pool])
        sim_diag_add(diag, pp, "pool \"%s\" already has an \"ordinary_nodes\" entry", pool_names[pool]);
      else if (per_pool[pool] > 0)
        sim_diag_add(diag, pp,
                     "pool \"%s\" has gateways: its miners sit on gateways or on ordinary nodes, not both",
                     pool_names[pool]);
      else
        p->pool_on_nodes[pool] = 1;
      continue;
    }
    if (pool != NET_NO_POOL && p->pool_on_nodes[pool]) {
      g_autofree char *pp = key_path(op, "pool");
      sim_diag_add(
          diag, pp,
          "pool \"%s\" sits on ordinary nodes: its miners sit on gateways or on ordinary nodes, not both",
          pool_names[pool]);
      ok = FALSE;
    }
    guint32 peers = 0;
    ok &= parse_peers(o, op, p->gateway_peers, p->nodes, &peers, diag);
    const char *which = NULL;
    json_t *places = one_of(o, op, "cities", "regions", &which, diag);
    if (!places) continue;
    gboolean by_city = strcmp(which, "cities") == 0;
    g_autofree char *lp = key_path(op, which);
    if (!json_is_array(places) || json_array_size(places) == 0) {
      sim_diag_add(diag, lp, "must be a non-empty array of %s names (got %s)", by_city ? "city" : "region",
                   json_is_array(places) ? "an empty array" : sim_json_kind(places));
      continue;
    }
    g_autoptr(GArray) found = g_array_new(FALSE, FALSE, sizeof(NetSpecial));
    for (size_t k = 0; k < json_array_size(places); k++) {
      g_autofree char *ep = index_path(lp, k);
      NetSpecial s = {.role = NET_ROLE_GATEWAY, .pool = pool, .city = NET_NO_CITY, .peers = peers};
      int idx = lookup_name(by_city ? cities : regions, by_city ? "city" : "region",
                            json_array_get(places, k), ep, diag);
      if (idx < 0) {
        ok = FALSE;
        continue;
      }
      if (by_city) {
        s.city = (guint16)idx;
        s.region = p->city_region[idx];
      } else {
        s.region = (guint16)idx;
      }
      g_array_append_val(found, s);
    }
    if (!ok) continue;
    for (guint k = 0; k < found->len; k++) {
      NetSpecial *s = &g_array_index(found, NetSpecial, k);
      s->name = g_strdup_printf("%s#%u", pool_names[pool], ++per_pool[pool]);
      g_array_append_val(out, *s);
    }
  }
}

/* "out_degree_cdf": NET_OUT_DEGREE_MAX numbers in [0, 1], non-decreasing, ending at 1. Stored only when
 * valid (a broken table must not reach the topology builder). */
static void parse_out_degree_cdf(NetGeoParams *p, json_t *v, const char *path, SimDiag *diag) {
  double cdf[NET_OUT_DEGREE_MAX];
  if (!parse_vector(v, path, NET_OUT_DEGREE_MAX, BOUND_NONNEG, cdf, diag)) return;
  gboolean ok = TRUE;
  for (guint i = 0; i < NET_OUT_DEGREE_MAX; i++) {
    g_autofree char *ip = index_path(path, i);
    g_autofree char *got = sim_fmt_double(cdf[i]);
    if (cdf[i] > 1) {
      sim_diag_add(diag, ip, "must be <= 1 (got %s)", got);
      ok = FALSE;
    } else if (i > 0 && cdf[i] < cdf[i - 1]) {
      g_autofree char *prev = sim_fmt_double(cdf[i - 1]);
      sim_diag_add(diag, ip,
                   "must not be below the entry before it (a CDF is non-decreasing; got %s after %s)", got,
                   prev);
      ok = FALSE;
    }
  }
  if (cdf[NET_OUT_DEGREE_MAX - 1] != 1) {
    g_autofree char *ip = index_path(path, NET_OUT_DEGREE_MAX - 1);
    g_autofree char *got = sim_fmt_double(cdf[NET_OUT_DEGREE_MAX - 1]);
    sim_diag_add(diag, ip, "must be 1 (the last entry of a CDF; got %s)", got);
    ok = FALSE;
  }
  if (ok) p->out_degree_cdf = g_memdup2(cdf, sizeof cdf);
}

gboolean net_geo_parse_tables(NetGeoParams *p, json_t *obj, const char *path, const char *const *pool_names,
                              guint n_pools, SimDiag *diag) {
  g_return_val_if_fail(p != NULL && path != NULL && diag != NULL, FALSE);
  g_return_val_if_fail(p->region_names == NULL && p->specials == NULL && p->city_names == NULL, FALSE);
  guint before = sim_diag_count(diag);
  if (!json_is_object(obj)) {
    sim_diag_add(diag, path, "must be an object (got %s)", sim_json_kind(obj));
    return FALSE;
  }
  /* Peer counts against the population (the scalars were parsed before the tables). */
  if (p->nodes > 0 && p->out_peers >= p->nodes) {
    g_autofree char *op = key_path(path, "out_peers");
    sim_diag_add(diag, op, "must be below nodes (got %" G_GINT64_FORMAT " with %" G_GINT64_FORMAT " nodes)",
                 p->out_peers, p->nodes);
  }
  NameList regions = {0}, cities = {0};
  json_t *jr = required_key(obj, path, "regions", diag);
  if (jr) {
    g_autofree char *rp = key_path(path, "regions");
    parse_regions(p, jr, rp, &regions, diag);
  }
  /* Without a usable regions table names cannot be checked, and its own problem says so once. */
  if (!regions.path) regions.path = g_strdup_printf("%s.regions.names", path);
  json_t *jc = json_object_get(obj, "cities");
  if (jc) {
    g_autofree char *cp = key_path(path, "cities");
    parse_cities(p, jc, cp, &regions, &cities, diag);
  }
  json_t *jd = json_object_get(obj, "out_degree_cdf");
  if (jd) {
    g_autofree char *dp = key_path(path, "out_degree_cdf");
    parse_out_degree_cdf(p, jd, dp, diag);
  }
  json_t *jj = json_object_get(obj, "joining");
  if (jj) {
    g_autofree char *jp = key_path(path, "joining");
    NetJoining joining;
    memset(&joining, 0, sizeof joining);
    if (sim_params_parse(net_geo_joining_specs, net_geo_n_joining_specs, jj, jp, NULL, &joining, diag))
      p->joining = joining;
  }
  p->n_pools = n_pools;
  p->pool_on_nodes = g_new0(guint8, MAX(n_pools, 1));
  GArray *vantages = g_array_new(FALSE, FALSE, sizeof(NetSpecial));
  GArray *gateways = g_array_new(FALSE, FALSE, sizeof(NetSpecial));
  json_t *jv = json_object_get(obj, "vantage_points");
  if (jv) {
    g_autofree char *vp = key_path(path, "vantage_points");
    parse_vantages(p, jv, vp, &regions, &cities, vantages, diag);
  }
  json_t *jg = json_object_get(obj, "gateways");
  if (jg) {
    g_autofree char *gp = key_path(path, "gateways");
    parse_gateways(p, jg, gp, &regions, &cities, pool_names, n_pools, gateways, diag);
  }
  p->n_vantages = vantages->len;
  p->n_specials = vantages->len + gateways->len;
  p->specials = g_new0(NetSpecial, MAX(p->n_specials, 1));
  if (vantages->len) memcpy(p->specials, vantages->data, vantages->len * sizeof(NetSpecial));
  if (gateways->len) memcpy(p->specials + vantages->len, gateways->data, gateways->len * sizeof(NetSpecial));
  g_array_free(vantages, TRUE); /* the names moved to p->specials */
  g_array_free(gateways, TRUE);
  name_list_clear(&regions);
  name_list_clear(&cities);
  return sim_diag_count(diag) == before;
}

void net_geo_clear_tables(NetGeoParams *p) {
  if (!p) return;
  g_strfreev(p->region_names);
  g_free(p->latency_ms);
  g_free(p->upload_bps);
  g_free(p->download_bps);
  g_free(p->node_share);
  g_strfreev(p->city_names);
  g_free(p->city_region);
  g_free(p->city_rtt_ms);
  for (guint i = 0; p->specials && i < p->n_specials; i++)
    g_free(p->specials[i].name);
  g_free(p->specials);
  g_free(p->out_degree_cdf);
  g_free(p->pool_on_nodes);
  p->out_degree_cdf = NULL;
  p->pool_on_nodes = NULL;
  p->n_pools = 0;
  memset(&p->joining, 0, sizeof p->joining);
  p->n_regions = p->n_cities = p->n_vantages = p->n_specials = 0;
  p->region_names = p->city_names = NULL;
  p->latency_ms = p->upload_bps = p->download_bps = p->node_share = p->city_rtt_ms = NULL;
  p->city_region = NULL;
  p->specials = NULL;
}
