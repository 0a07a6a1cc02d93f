/* numa_model.c: NUMA machines: descriptions (cpus, bandwidth, controller capacity and latency matrices),
 * machine files (loading with every problem reported in one pass, writing), and worker sets. The
 * placement policies and the bandwidth bound are in numa_model_policy.c, the application model, the tuner
 * and the oracle in numa_model_app.c. */
#include "numa_model.h"
#include "input.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "numa_model-private.h"

G_DEFINE_QUARK(numa - model - error - quark, numa_model_error)

/* ======================================================================================================
 * Machines
 * ====================================================================================================== */

void numa_model_machine_free(NumaModelMachine *m) {
  if (!m) return;
  g_free(m->name);
  g_free(m->cpus);
  g_free(m->bw);
  g_free(m->cap);
  g_free(m->lat);
  g_free(m->workers);
  g_free(m);
}

static NumaModelMachine *machine_alloc(const char *name, guint n) {
  NumaModelMachine *m = g_new0(NumaModelMachine, 1);
  m->name = g_strdup(name ? name : "");
  m->n = n;
  m->cpus = g_new0(guint, n);
  m->bw = g_new(double, (gsize)n *n);
  m->cap = g_new(double, n);
  m->lat = g_new(double, (gsize)n *n);
  for (gsize k = 0; k < (gsize)n * n; k++)
    m->bw[k] = m->lat[k] = NAN;
  return m;
}

NumaModelMachine *numa_model_machine_new(const char *name, guint n, const guint *cpus, const double *bw_gbps,
                                         const double *capacity_gbps, const double *latency_ns) {
  g_return_val_if_fail(n >= 1 && n <= SIM_NUMA_MAX_NODES, NULL);
  g_return_val_if_fail(cpus && bw_gbps && capacity_gbps && latency_ns, NULL);
  guint with_cpus = 0;
  for (guint i = 0; i < n; i++) {
    g_return_val_if_fail(isfinite(capacity_gbps[i]) && capacity_gbps[i] > 0, NULL);
    with_cpus += cpus[i] > 0;
    for (guint j = 0; j < n; j++) {
      gboolean has = cpus[j] > 0;
      g_return_val_if_fail(
          has ? (isfinite(bw_gbps[i * n + j]) && bw_gbps[i * n + j] > 0) : isnan(bw_gbps[i * n + j]), NULL);
      g_return_val_if_fail(has ? (isfinite(latency_ns[i * n + j]) && latency_ns[i * n + j] > 0)
                               : isnan(latency_ns[i * n + j]),
                           NULL);
    }
  }
  g_return_val_if_fail(with_cpus > 0, NULL);
  NumaModelMachine *m = machine_alloc(name, n);
  memcpy(m->cpus, cpus, n * sizeof *cpus);
  memcpy(m->bw, bw_gbps, (gsize)n * n * sizeof *bw_gbps);
  memcpy(m->cap, capacity_gbps, n * sizeof *capacity_gbps);
  memcpy(m->lat, latency_ns, (gsize)n * n * sizeof *latency_ns);
  return m;
}

const char *numa_model_machine_name(const NumaModelMachine *m) {
  g_return_val_if_fail(m != NULL, NULL);
  return m->name;
}
guint numa_model_machine_n_nodes(const NumaModelMachine *m) {
  g_return_val_if_fail(m != NULL, 0);
  return m->n;
}
guint numa_model_machine_cpus(const NumaModelMachine *m, guint node) {
  g_return_val_if_fail(m != NULL && node < m->n, 0);
  return m->cpus[node];
}
double numa_model_machine_bw_gbps(const NumaModelMachine *m, guint mem, guint cpu) {
  g_return_val_if_fail(m != NULL && mem < m->n && cpu < m->n, NAN);
  return m->bw[mem * m->n + cpu];
}
double numa_model_machine_capacity_gbps(const NumaModelMachine *m, guint mem) {
  g_return_val_if_fail(m != NULL && mem < m->n, NAN);
  return m->cap[mem];
}
double numa_model_machine_latency_ns(const NumaModelMachine *m, guint mem, guint cpu) {
  g_return_val_if_fail(m != NULL && mem < m->n && cpu < m->n, NAN);
  return m->lat[mem * m->n + cpu];
}

guint numa_model_machine_default_workers(const NumaModelMachine *m, guint *workers) {
  g_return_val_if_fail(m != NULL && workers != NULL, 0);
  if (m->n_workers) {
    memcpy(workers, m->workers, m->n_workers * sizeof *workers);
    return m->n_workers;
  }
  guint k = 0;
  for (guint i = 0; i < m->n; i++)
    if (m->cpus[i]) workers[k++] = i;
  return k;
}

/* ---- Loading ---- */

typedef struct {
  char *name;
  int64_t nodes;
} MachineTop;

static const SimParamSpec machine_top_params[] = {
    {.name = "name",
     .type = SIM_PARAM_STRING,
     .required = TRUE,
     .offset = offsetof(MachineTop, name),
     .help = "what the machine is, for outputs"},
    {.name = "nodes",
     .type = SIM_PARAM_INT,
     .min = 1,
     .max = SIM_NUMA_MAX_NODES,
     .required = TRUE,
     .offset = offsetof(MachineTop, nodes),
     .help = "NUMA nodes (each has memory; some have CPUs)"},
};
static const char *const machine_extra_keys[] = {
    "comment", "cpus_per_node", "bandwidth_gbps", "capacity_gbps", "latency_ns", "workers", NULL};

static json_t *required(json_t *root, const char *key, SimDiag *diag) {
  json_t *v = json_object_get(root, key);
  if (!v) {
    g_autofree char *p = sim_json_child_path("$", key);
    sim_diag_add(diag, p, "missing required key");
  }
  return v;
}

/* A positive finite number, or (when `null_column`) null; reports at `path`. */
static gboolean parse_entry(json_t *v, const char *path, gboolean null_column, guint column, double *out,
                            SimDiag *diag) {
  if (null_column) {
    if (json_is_null(v)) {
      *out = NAN;
      return TRUE;
    }
    if (json_is_number(v)) {
      g_autofree char *got = sim_fmt_double(json_number_value(v));
      sim_diag_add(diag, path, "must be null: node %u has no CPUs (got %s)", column, got);
    } else {
      sim_diag_add(diag, path, "must be null: node %u has no CPUs (got %s)", column, sim_json_kind(v));
    }
    return FALSE;
  }
  if (!json_is_number(v)) {
    sim_diag_add(diag, path, "must be a number > 0 (got %s)", sim_json_kind(v));
    return FALSE;
  }
  double d = json_number_value(v);
  if (!(isfinite(d) && d > 0)) {
    g_autofree char *got = sim_fmt_double(d);
    sim_diag_add(diag, path, "must be > 0 (got %s)", got);
    return FALSE;
  }
  *out = d;
  return TRUE;
}

/* An n x n matrix; columns of CPU-less nodes (cpus known) must be null. Shape problems and every entry that
 * exists are reported in one pass. */
static gboolean parse_matrix(json_t *v, const char *path, guint n, const guint *cpus, double *out,
                             SimDiag *diag) {
  gboolean ok = TRUE;
  if (!sim_json_matrix_shape(v, path, n, &ok, diag)) return FALSE;
  for (guint i = 0; i < n; i++) {
    json_t *row = json_array_get(v, i);
    if (!json_is_array(row)) continue;
    for (guint j = 0; j < n && j < json_array_size(row); j++) {
      g_autofree char *ep = g_strdup_printf("%s[%u][%u]", path, i, j);
      gboolean null_column = cpus && cpus[j] == 0;
      json_t *e = json_array_get(row, j);
      if (!cpus && json_is_null(e)) continue; /* unknown CPUs: null may be right */
      ok &= parse_entry(e, ep, null_column, j, &out[i * n + j], diag);
    }
  }
  return ok;
}

static gboolean parse_comment(json_t *v, SimDiag *diag) {
  if (json_is_string(v)) return TRUE;
  gboolean ok = json_is_array(v);
  for (size_t i = 0; ok && i < json_array_size(v); i++)
    ok = json_is_string(json_array_get(v, i));
  if (!ok) sim_diag_add(diag, "$.comment", "must be a string or an array of strings");
  return ok;
}

/* cpus_per_node: n integers >= 0, at least one positive. */
static gboolean parse_cpus(json_t *v, guint n, guint *cpus, SimDiag *diag) {
  const char *path = "$.cpus_per_node";
  if (!json_is_array(v) || json_array_size(v) != n) {
    if (json_is_array(v))
      sim_diag_add(diag, path, "must be an array of %u integers >= 0 (got %zu entries)", n,
                   json_array_size(v));
    else
      sim_diag_add(diag, path, "must be an array of %u integers >= 0 (got %s)", n, sim_json_kind(v));
    return FALSE;
  }
  gboolean ok = TRUE;
  guint with_cpus = 0;
  for (guint i = 0; i < n; i++) {
    json_t *e = json_array_get(v, i);
    g_autofree char *ep = g_strdup_printf("%s[%u]", path, i);
    if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 1000000) {
      if (json_is_integer(e))
        sim_diag_add(diag, ep, "must be in [0, 1000000] (got %" JSON_INTEGER_FORMAT ")",
                     json_integer_value(e));
      else
        sim_diag_add(diag, ep, "must be an integer >= 0 (got %s)", sim_json_kind(e));
      ok = FALSE;
      continue;
    }
    cpus[i] = (guint)json_integer_value(e);
    with_cpus += cpus[i] > 0;
  }
  if (ok && with_cpus == 0) {
    sim_diag_add(diag, path, "at least one node must have CPUs");
    ok = FALSE;
  }
  return ok;
}

static gboolean parse_capacity(json_t *v, guint n, double *cap, SimDiag *diag) {
  const char *path = "$.capacity_gbps";
  if (!json_is_array(v) || json_array_size(v) != n) {
    if (json_is_array(v))
      sim_diag_add(diag, path, "must be an array of %u numbers > 0 (got %zu entries)", n, json_array_size(v));
    else
      sim_diag_add(diag, path, "must be an array of %u numbers > 0 (got %s)", n, sim_json_kind(v));
    return FALSE;
  }
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    g_autofree char *ep = g_strdup_printf("%s[%u]", path, i);
    ok &= parse_entry(json_array_get(v, i), ep, FALSE, 0, &cap[i], diag);
  }
  return ok;
}

/* workers: a non-empty array of distinct nodes with CPUs. */
static gboolean parse_workers(json_t *v, guint n, const guint *cpus, NumaModelMachine *m, SimDiag *diag) {
  const char *path = "$.workers";
  if (!json_is_array(v) || json_array_size(v) == 0) {
    sim_diag_add(diag, path, "must be a non-empty array of node numbers (got %s)",
                 json_is_array(v) ? "an empty array" : sim_json_kind(v));
    return FALSE;
  }
  gboolean ok = TRUE;
  guint64 seen = 0;
  m->n_workers = (guint)json_array_size(v);
  m->workers = g_new0(guint, m->n_workers);
  for (guint k = 0; k < m->n_workers; k++) {
    json_t *e = json_array_get(v, k);
    g_autofree char *ep = g_strdup_printf("%s[%u]", path, k);
    if (!json_is_integer(e)) {
      sim_diag_add(diag, ep, "must be a node number (got %s)", sim_json_kind(e));
      ok = FALSE;
      continue;
    }
    json_int_t node = json_integer_value(e);
    if (node < 0 || node >= n) {
      sim_diag_add(diag, ep, "node %" JSON_INTEGER_FORMAT " does not exist (the machine has %u node%s)", node,
                   n, n == 1 ? "" : "s");
      ok = FALSE;
      continue;
    }
    if (cpus && cpus[node] == 0) {
      sim_diag_add(diag, ep, "node %" JSON_INTEGER_FORMAT " has no CPUs", node);
      ok = FALSE;
      continue;
    }
    if (seen & (G_GUINT64_CONSTANT(1) << node)) {
      sim_diag_add(diag, ep, "node %" JSON_INTEGER_FORMAT " is listed twice", node);
      ok = FALSE;
      continue;
    }
    seen |= G_GUINT64_CONSTANT(1) << node;
    m->workers[k] = (guint)node;
  }
  return ok;
}

NumaModelMachine *numa_model_machine_from_json(json_t *root, SimDiag *diag) {
  g_return_val_if_fail(root != NULL && diag != NULL, NULL);
  guint before = sim_diag_count(diag);
  if (!json_is_object(root)) {
    sim_diag_add(diag, "$", "must be an object (got %s)", sim_json_kind(root));
    return NULL;
  }
  MachineTop top = {0};
  gboolean top_ok = sim_params_parse(machine_top_params, G_N_ELEMENTS(machine_top_params), root, "$",
                                     machine_extra_keys, &top, diag);
  guint n = top_ok || (top.nodes >= 1 && top.nodes <= SIM_NUMA_MAX_NODES) ? (guint)top.nodes : 0;
  g_autoptr(NumaModelMachine) m = machine_alloc(top.name, MAX(n, 1));
  sim_params_clear(machine_top_params, G_N_ELEMENTS(machine_top_params), &top);

  json_t *jc = json_object_get(root, "comment");
  if (jc) parse_comment(jc, diag);
  json_t *jcpus = required(root, "cpus_per_node", diag);
  json_t *jbw = required(root, "bandwidth_gbps", diag);
  json_t *jcap = required(root, "capacity_gbps", diag);
  json_t *jlat = required(root, "latency_ns", diag);
  json_t *jw = json_object_get(root, "workers");
  if (n == 0) return NULL; /* nothing has a shape without the node count */
  gboolean cpus_ok = jcpus && parse_cpus(jcpus, n, m->cpus, diag);
  const guint *cpus = cpus_ok ? m->cpus : NULL;
  if (jbw) parse_matrix(jbw, "$.bandwidth_gbps", n, cpus, m->bw, diag);
  if (jcap) parse_capacity(jcap, n, m->cap, diag);
  if (jlat) parse_matrix(jlat, "$.latency_ns", n, cpus, m->lat, diag);
  if (jw) parse_workers(jw, n, cpus, m, diag);
  if (sim_diag_count(diag) != before) return NULL;
  return g_steal_pointer(&m);
}

static json_t *matrix_json(const double *a, guint n) {
  json_t *rows = json_array();
  for (guint i = 0; i < n; i++) {
    json_t *row = json_array();
    for (guint j = 0; j < n; j++) {
      double v = a[i * n + j];
      json_array_append_new(row, isnan(v) ? json_null() : json_real(v));
    }
    json_array_append_new(rows, row);
  }
  return rows;
}

json_t *numa_model_machine_to_json(const NumaModelMachine *m, const char *const *comment) {
  g_return_val_if_fail(m != NULL, NULL);
  json_t *doc = json_object();
  json_object_set_new(doc, "name", json_string(m->name));
  if (comment && comment[0]) {
    json_t *c = json_array();
    for (guint i = 0; comment[i]; i++)
      json_array_append_new(c, json_string(comment[i]));
    json_object_set_new(doc, "comment", c);
  }
  json_object_set_new(doc, "nodes", json_integer(m->n));
  json_t *cpus = json_array(), *cap = json_array();
  for (guint i = 0; i < m->n; i++) {
    json_array_append_new(cpus, json_integer(m->cpus[i]));
    json_array_append_new(cap, json_real(m->cap[i]));
  }
  json_object_set_new(doc, "cpus_per_node", cpus);
  json_object_set_new(doc, "bandwidth_gbps", matrix_json(m->bw, m->n));
  json_object_set_new(doc, "capacity_gbps", cap);
  json_object_set_new(doc, "latency_ns", matrix_json(m->lat, m->n));
  if (m->n_workers) {
    json_t *w = json_array();
    for (guint k = 0; k < m->n_workers; k++)
      json_array_append_new(w, json_integer(m->workers[k]));
    json_object_set_new(doc, "workers", w);
  }
  return doc;
}

gboolean numa_model_workers_parse(const NumaModelMachine *m, const char *text, guint *workers,
                                  guint *n_workers, GError **error) {
  g_return_val_if_fail(m != NULL && text != NULL && workers != NULL && n_workers != NULL, FALSE);
  *n_workers = 0;
  g_autofree char *trimmed = g_strstrip(g_strdup(text));
  if (trimmed[0] == '\0') {
    g_set_error(error, NUMA_MODEL_ERROR, NUMA_MODEL_ERROR_WORKERS, "empty worker set");
    return FALSE;
  }
  if (strcmp(trimmed, "all") == 0) {
    for (guint i = 0; i < m->n; i++)
      if (m->cpus[i]) workers[(*n_workers)++] = i;
    return TRUE;
  }
  g_auto(GStrv) parts = g_strsplit(trimmed, ",", -1);
  guint64 seen = 0;
  for (guint k = 0; parts[k]; k++) {
    const char *p = g_strstrip(parts[k]);
    guint64 node = 0;
    g_autoptr(GError) e = NULL;
    if (!g_ascii_string_to_unsigned(p, 10, 0, G_MAXUINT32, &node, &e)) {
      g_set_error(error, NUMA_MODEL_ERROR, NUMA_MODEL_ERROR_WORKERS, "'%s' is not a node number", p);
      return FALSE;
    }
    if (node >= m->n) {
      g_set_error(error, NUMA_MODEL_ERROR, NUMA_MODEL_ERROR_WORKERS,
                  "node %" G_GUINT64_FORMAT " does not exist (the machine has %u node%s)", node, m->n,
                  m->n == 1 ? "" : "s");
      return FALSE;
    }
    if (m->cpus[node] == 0) {
      g_set_error(error, NUMA_MODEL_ERROR, NUMA_MODEL_ERROR_WORKERS, "node %" G_GUINT64_FORMAT " has no CPUs",
                  node);
      return FALSE;
    }
    if (seen & (G_GUINT64_CONSTANT(1) << node)) {
      g_set_error(error, NUMA_MODEL_ERROR, NUMA_MODEL_ERROR_WORKERS,
                  "node %" G_GUINT64_FORMAT " is listed twice", node);
      return FALSE;
    }
    seen |= G_GUINT64_CONSTANT(1) << node;
    workers[(*n_workers)++] = (guint)node;
  }
  return TRUE;
}
