/* numa_model.c: machine files, placement policies, the bandwidth bound, the loaded-latency application
 * model, BWAP's one-scalar tuner and the hill-climbing oracle.
 * Over 900 lines on purpose, for now: its split (machines / policies / application model and tuner) waits
 * for the renaming of its sim_numa_* prefix, which it shares with the engine's NUMA code (sim/core/numa_hw.h),
 * so that both happen in one change. */
#include "numa_model.h"
#include "input.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK(numa - model - error - quark, numa_model_error)

struct NumaModelMachine {
  char *name;
  guint n;
  guint *cpus;     /* [n] */
  double *bw;      /* [mem * n + cpu], NAN in CPU-less columns */
  double *cap;     /* [n] */
  double *lat;     /* [mem * n + cpu], NAN in CPU-less columns */
  guint n_workers; /* the file's default worker set; 0: every node with CPUs */
  guint *workers;
};

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

/* %g when it round-trips, else the shortest longer form that does. Free with g_free(). */
static char *fmt_num(double v) {
  if (isnan(v)) return g_strdup("nan");
  if (isinf(v)) return g_strdup(v > 0 ? "inf" : "-inf");
  char fmt[8], buf[G_ASCII_DTOSTR_BUF_SIZE];
  for (int prec = 6; prec <= 17; prec++) {
    g_snprintf(fmt, sizeof fmt, "%%.%dg", prec);
    g_ascii_formatd(buf, sizeof buf, fmt, v);
    if (g_ascii_strtod(buf, NULL) == v) break;
  }
  return g_strdup(buf);
}

static const char *article(const char *word) {
  return strchr("aeiou", word[0]) ? "an" : "a";
}

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
      g_autofree char *got = fmt_num(json_number_value(v));
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
    g_autofree char *got = fmt_num(d);
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
  if (!json_is_array(v)) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %s)", n, n, sim_json_kind(v));
    return FALSE;
  }
  if (json_array_size(v) != n) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %zu rows)", n, n, json_array_size(v));
    return FALSE;
  }
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    json_t *row = json_array_get(v, i);
    if (!json_is_array(row)) {
      sim_diag_add(diag, path, "must be a %ux%u matrix (row %u is %s %s)", n, n, i, article(sim_json_kind(row)),
                   sim_json_kind(row));
      ok = FALSE;
    } else if (json_array_size(row) != n) {
      sim_diag_add(diag, path, "must be a %ux%u matrix (row %u has %zu entries)", n, n, i,
                   json_array_size(row));
      ok = FALSE;
    }
  }
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

NumaModelMachine *numa_model_machine_load_file(const char *path, SimDiag *diag) {
  g_return_val_if_fail(path != NULL && diag != NULL, NULL);
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) root = sim_json_load_file(path, 0, SIM_JSON_DEFAULT, &pb, &e);
  if (!root) {
    /* A directory cannot be opened as a machine file (the words this reader always used). */
    if (e->code == SIM_INPUT_ERROR_READ && pb.err_no == EISDIR)
      sim_diag_add_raw(diag, "cannot open: %s", g_strerror(EISDIR));
    else
      sim_diag_add_input_error(diag, e, &pb);
    return NULL;
  }
  return numa_model_machine_from_json(root, diag);
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

/* ======================================================================================================
 * The bandwidth bound
 * ====================================================================================================== */

static void check_workers(const NumaModelMachine *m, const guint *workers, guint n_workers) {
  g_assert(n_workers >= 1 && n_workers <= m->n);
  for (guint k = 0; k < n_workers; k++)
    g_assert(workers[k] < m->n && m->cpus[workers[k]] > 0);
}

void numa_model_limits_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers,
                            double *limits) {
  g_return_if_fail(m != NULL && workers != NULL && limits != NULL);
  check_workers(m, workers, n_workers);
  for (guint i = 0; i < m->n; i++) {
    double lim = m->cap[i] / n_workers;
    for (guint k = 0; k < n_workers; k++)
      lim = MIN(lim, m->bw[i * m->n + workers[k]]);
    limits[i] = lim;
  }
}

/* w normalised into out; returns FALSE when w has no positive sum. */
static gboolean normalise(const double *w, guint n, double *out) {
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += w[i] > 0 ? w[i] : 0;
  if (!(sum > 0)) return FALSE;
  for (guint i = 0; i < n; i++)
    out[i] = w[i] > 0 ? w[i] / sum : 0;
  return TRUE;
}

/* The per-worker bandwidth bound min_{w_i > 0} m_i / w_i for normalised w. */
static double per_worker_bound(const double *limits, const double *w, guint n) {
  double x = INFINITY;
  for (guint i = 0; i < n; i++)
    if (w[i] > 0) x = MIN(x, limits[i] / w[i]);
  return x;
}

double numa_model_predict_gbps(const NumaModelMachine *m, const guint *workers, guint n_workers,
                               const double *w) {
  g_return_val_if_fail(m != NULL && w != NULL, NAN);
  double lim[SIM_NUMA_MAX_NODES], wn[SIM_NUMA_MAX_NODES];
  numa_model_limits_gbps(m, workers, n_workers, lim);
  g_return_val_if_fail(normalise(w, m->n, wn), NAN);
  return n_workers * per_worker_bound(lim, wn, m->n);
}

static guint gcd(guint a, guint b) {
  while (b) {
    guint t = a % b;
    a = b;
    b = t;
  }
  return a;
}

void numa_model_kernel_weights(const double *bw, guint n, guint *iw) {
  g_return_if_fail(bw != NULL && iw != NULL && n >= 1);
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += bw[i];
  guint g = 0;
  for (guint i = 0; i < n; i++) {
    double q = floor(32.0 * bw[i] / sum);
    iw[i] = q < 1 ? 1 : (guint)q;
    g = gcd(g, iw[i]);
  }
  for (guint i = 0; i < n; i++)
    iw[i] /= g;
}

/* ======================================================================================================
 * Policies
 * ====================================================================================================== */

static void first_touch_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  check_workers(m, workers, n_workers);
  memset(w, 0, m->n * sizeof *w);
  w[workers[0]] = 1;
}

static void uniform_workers_weights(const NumaModelMachine *m, const guint *workers, guint n_workers,
                                    double *w) {
  check_workers(m, workers, n_workers);
  memset(w, 0, m->n * sizeof *w);
  for (guint k = 0; k < n_workers; k++)
    w[workers[k]] = 1.0 / n_workers;
}

static void uniform_all_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  check_workers(m, workers, n_workers);
  for (guint i = 0; i < m->n; i++)
    w[i] = 1.0 / m->n;
}

static void canonical_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  double lim[SIM_NUMA_MAX_NODES];
  numa_model_limits_gbps(m, workers, n_workers, lim);
  normalise(lim, m->n, w);
}

static void sum_rule_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  check_workers(m, workers, n_workers);
  double s[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++) {
    s[i] = 0;
    for (guint k = 0; k < n_workers; k++)
      s[i] += m->bw[i * m->n + workers[k]];
  }
  normalise(s, m->n, w);
}

void numa_model_kernel_auto_integers(const NumaModelMachine *m, guint *iw) {
  g_return_if_fail(m != NULL && iw != NULL);
  double best[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++) {
    best[i] = 0;
    for (guint j = 0; j < m->n; j++)
      if (m->cpus[j]) best[i] = MAX(best[i], m->bw[i * m->n + j]);
  }
  numa_model_kernel_weights(best, m->n, iw);
}

static void kernel_auto_weights(const NumaModelMachine *m, const guint *workers, guint n_workers, double *w) {
  check_workers(m, workers, n_workers);
  guint iw[SIM_NUMA_MAX_NODES];
  numa_model_kernel_auto_integers(m, iw);
  double d[SIM_NUMA_MAX_NODES];
  for (guint i = 0; i < m->n; i++)
    d[i] = iw[i];
  normalise(d, m->n, w);
}

const NumaModelPolicy numa_model_first_touch = {
    .info = {.name = "first-touch", .family = "numa_policy", .help = "every page on the first worker node"},
    .weights = first_touch_weights,
};
const NumaModelPolicy numa_model_uniform_workers = {
    .info = {.name = "uniform-workers",
             .family = "numa_policy",
             .help = "equal shares on the worker nodes (numactl --interleave)"},
    .weights = uniform_workers_weights,
};
const NumaModelPolicy numa_model_uniform_all = {
    .info = {.name = "uniform-all",
             .family = "numa_policy",
             .help = "equal shares on every node (numactl --interleave=all)"},
    .weights = uniform_all_weights,
};
const NumaModelPolicy numa_model_canonical = {
    .info = {.name = "canonical",
             .family = "numa_policy",
             .help = "w_i = m_i / sum m_k with m_i = min(min_{j in W} B[i][j], C_i/|W|): the max-min optimum "
                     "(BWAP stage 1)"},
    .weights = canonical_weights,
};
const NumaModelPolicy numa_model_sum_rule = {
    .info = {.name = "sum-rule", .family = "numa_policy", .help = "w_i proportional to sum_{j in W} B[i][j]"},
    .weights = sum_rule_weights,
};
const NumaModelPolicy numa_model_kernel_auto = {
    .info = {.name = "kernel-auto",
             .family = "numa_policy",
             .help = "Linux's automatic weighted-interleave integers over every node, from each node's best "
                     "bandwidth max_j B[i][j]: max(1, floor(32 bw_i / sum bw)) divided by their gcd"},
    .weights = kernel_auto_weights,
};

const SimModelInfo *const numa_model_policy_list[] = {&numa_model_first_touch.info,
                                                      &numa_model_uniform_workers.info,
                                                      &numa_model_uniform_all.info,
                                                      &numa_model_sum_rule.info,
                                                      &numa_model_kernel_auto.info,
                                                      &numa_model_canonical.info,
                                                      NULL};

const NumaModelPolicy *numa_model_policy_find(const char *name) {
  g_return_val_if_fail(name != NULL, NULL);
  for (guint i = 0; numa_model_policy_list[i]; i++)
    if (strcmp(numa_model_policy_list[i]->name, name) == 0)
      return (const NumaModelPolicy *)numa_model_policy_list[i];
  return NULL;
}

/* ======================================================================================================
 * The application model
 * ====================================================================================================== */

static const SimParamSpec app_mlp_params[] = {
    {.name = "mlp",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 1000,
     .def = 10,
     .offset = offsetof(NumaModelAppParams, mlp),
     .help =
         "misses a thread keeps in flight when streaming (an Intel core's L1 tracks about 10-12; hardware "
         "prefetchers raise the effective figure)"},
    {.name = "latency_sensitivity",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0,
     .offset = offsetof(NumaModelAppParams, latency_sensitivity),
     .help =
         "share of misses that are dependent loads (pointer chasing), each waiting a full loaded latency"},
    {.name = "threads_per_cpu",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 16,
     .min_open = TRUE,
     .def = 1,
     .offset = offsetof(NumaModelAppParams, threads_per_cpu),
     .help = "application threads per CPU of a worker node"},
    {.name = "line_bytes",
     .type = SIM_PARAM_INT,
     .unit = "bytes",
     .min = 8,
     .max = 4096,
     .def = 64,
     .offset = offsetof(NumaModelAppParams, line_bytes),
     .help = "bytes per miss"},
    {.name = "util_flat",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.4,
     .offset = offsetof(NumaModelAppParams, util_flat),
     .help = "utilisation up to which latency stays idle"},
    {.name = "util_linear",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.8,
     .offset = offsetof(NumaModelAppParams, util_linear),
     .help = "utilisation up to which latency rises linearly (steeper beyond)"},
    {.name = "latency_factor_linear",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 100,
     .def = 1.3,
     .offset = offsetof(NumaModelAppParams, latency_factor_linear),
     .help = "loaded / idle latency at util_linear"},
    {.name = "latency_factor_saturated",
     .type = SIM_PARAM_NUMBER,
     .min = 1,
     .max = 100,
     .def = 2.0,
     .offset = offsetof(NumaModelAppParams, latency_factor_saturated),
     .help = "loaded / idle latency at saturation (utilisation 1)"},
};

static void app_mlp_check(const void *params, SimDiag *diag, const char *path) {
  const NumaModelAppParams *p = params;
  if (!(p->util_flat < p->util_linear && p->util_linear < 1)) {
    g_autofree char *a = fmt_num(p->util_flat), *b = fmt_num(p->util_linear);
    sim_diag_add(diag, path, "need util_flat < util_linear < 1 (got %s and %s)", a, b);
  }
  if (p->latency_factor_linear > p->latency_factor_saturated) {
    g_autofree char *a = fmt_num(p->latency_factor_linear), *b = fmt_num(p->latency_factor_saturated);
    sim_diag_add(diag, path, "latency_factor_linear (%s) must not exceed latency_factor_saturated (%s)", a,
                 b);
  }
}

double numa_model_latency_factor(const NumaModelAppParams *p, double u) {
  g_return_val_if_fail(p != NULL, NAN);
  u = CLAMP(u, 0, 1);
  if (u <= p->util_flat) return 1;
  if (u <= p->util_linear)
    return 1 + (p->latency_factor_linear - 1) * (u - p->util_flat) / (p->util_linear - p->util_flat);
  return p->latency_factor_linear + (p->latency_factor_saturated - p->latency_factor_linear) *
                                        (u - p->util_linear) / (1 - p->util_linear);
}

/* The smallest demand over worker nodes when each worker moves x GB/s with weights w (normalised). */
static double min_demand(const NumaModelAppParams *p, const NumaModelMachine *m, const guint *workers,
                         guint n_workers, const double *w, double x) {
  double eff_mlp = 1.0 / ((1.0 - p->latency_sensitivity) / p->mlp + p->latency_sensitivity);
  double dmin = INFINITY;
  for (guint k = 0; k < n_workers; k++) {
    guint j = workers[k];
    double lat = 0;
    for (guint i = 0; i < m->n; i++) {
      if (w[i] <= 0) continue;
      double u = MAX(n_workers * x * w[i] / m->cap[i], x * w[i] / m->bw[i * m->n + j]);
      lat += w[i] * m->lat[i * m->n + j] * numa_model_latency_factor(p, u);
    }
    double threads = p->threads_per_cpu * m->cpus[j];
    dmin = MIN(dmin, threads * eff_mlp * (double)p->line_bytes / lat); /* bytes per ns = GB/s */
  }
  return dmin;
}

static double app_mlp_throughput(const void *params, const NumaModelMachine *m, const guint *workers,
                                 guint n_workers, const double *w_in) {
  const NumaModelAppParams *p = params;
  double w[SIM_NUMA_MAX_NODES], lim[SIM_NUMA_MAX_NODES];
  g_return_val_if_fail(normalise(w_in, m->n, w), NAN);
  numa_model_limits_gbps(m, workers, n_workers, lim);
  double hi = per_worker_bound(lim, w, m->n);
  if (min_demand(p, m, workers, n_workers, w, hi) >= hi) return n_workers * hi;
  /* Demand falls as traffic (and so latency) rises: the crossing is unique; bisect for it. */
  double lo = 0;
  for (int it = 0; it < 100 && hi - lo > 1e-12 * hi; it++) {
    double mid = 0.5 * (lo + hi);
    if (min_demand(p, m, workers, n_workers, w, mid) >= mid)
      lo = mid;
    else
      hi = mid;
  }
  return n_workers * lo;
}

const NumaModelApp numa_model_app_mlp = {
    .info = {.name = "mlp-latency",
             .family = "numa_app",
             .help =
                 "threads with memory-level parallelism under loaded latency, capped by the bandwidth bound",
             .params = app_mlp_params,
             .n_params = G_N_ELEMENTS(app_mlp_params),
             .params_size = sizeof(NumaModelAppParams),
             .check = app_mlp_check},
    .throughput_gbps = app_mlp_throughput,
};

const SimModelInfo *const numa_model_app_list[] = {&numa_model_app_mlp.info, NULL};

/* ======================================================================================================
 * Tuning
 * ====================================================================================================== */

const SimParamSpec numa_model_tuner_params[] = {
    {.name = "step_share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .min_open = TRUE,
     .def = 0.1,
     .offset = offsetof(NumaModelTunerParams, step_share),
     .help = "tuner: change of the share of pages on worker nodes per step (BWAP: 10 points)"},
    {.name = "stop_worsening",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 0.5,
     .def = 0.001,
     .offset = offsetof(NumaModelTunerParams, stop_worsening),
     .help = "tuner: stop when the objective is this fraction below the best (BWAP: 0.1%)"},
    {.name = "oracle_min_step",
     .type = SIM_PARAM_NUMBER,
     .min = 1e-6,
     .max = 0.1,
     .def = 0.001,
     .offset = offsetof(NumaModelTunerParams, oracle_min_step),
     .help = "oracle: the smallest weight step of the hill climbing"},
};
const guint numa_model_tuner_n_params = G_N_ELEMENTS(numa_model_tuner_params);

/* The start weights with the workers' share moved to `share`, each side keeping its proportions. */
static void weights_at_share(const double *start, guint n, guint64 worker_bits, guint n_workers, double share,
                             double *out) {
  double s_w = 0;
  for (guint i = 0; i < n; i++)
    if (worker_bits & (G_GUINT64_CONSTANT(1) << i)) s_w += start[i];
  double s_n = 1 - s_w;
  for (guint i = 0; i < n; i++) {
    gboolean is_worker = (worker_bits & (G_GUINT64_CONSTANT(1) << i)) != 0;
    if (is_worker)
      out[i] = s_w > 1e-12 ? start[i] * share / s_w : share / n_workers;
    else
      out[i] = s_n > 1e-12 ? start[i] * (1 - share) / s_n : (1 - share) / (n - n_workers);
  }
}

void numa_model_tune_result_clear(NumaModelTuneResult *r) {
  if (!r) return;
  if (r->steps) g_array_unref(r->steps);
  memset(r, 0, sizeof *r);
}

void numa_model_tune(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                     const NumaModelMachine *m, const guint *workers, guint n_workers, const double *start,
                     NumaModelTuneResult *out) {
  g_return_if_fail(app && app_params && tp && m && workers && start && out);
  check_workers(m, workers, n_workers);
  memset(out, 0, sizeof *out);
  out->steps = g_array_new(FALSE, FALSE, sizeof(NumaModelTuneStep));
  guint n = m->n;
  guint64 bits = 0;
  for (guint k = 0; k < n_workers; k++)
    bits |= G_GUINT64_CONSTANT(1) << workers[k];
  normalise(start, n, out->start_weights);
  double s_w = 0;
  for (guint i = 0; i < n; i++)
    if (bits & (G_GUINT64_CONSTANT(1) << i)) s_w += out->start_weights[i];
  out->start_share = out->share = s_w;
  out->start_gbps = out->gbps = app->throughput_gbps(app_params, m, workers, n_workers, out->start_weights);
  out->evaluations = 1;
  memcpy(out->weights, out->start_weights, n * sizeof(double));
  g_array_append_val(out->steps, ((NumaModelTuneStep){.share = s_w, .throughput_gbps = out->start_gbps}));
  out->tunable = n_workers < n;
  if (!out->tunable) return;

  double w[SIM_NUMA_MAX_NODES];
  for (int dir = 1; dir >= -1; dir -= 2) {
    double cur = s_w;
    gboolean moved = FALSE;
    for (;;) {
      double next = CLAMP(cur + dir * tp->step_share, 0.0, 1.0);
      if (fabs(next - cur) < 1e-12) break;
      weights_at_share(out->start_weights, n, bits, n_workers, next, w);
      double v = app->throughput_gbps(app_params, m, workers, n_workers, w);
      out->evaluations++;
      g_array_append_val(out->steps, ((NumaModelTuneStep){.share = next, .throughput_gbps = v}));
      if (v < out->gbps * (1 - tp->stop_worsening)) break;
      cur = next;
      moved = TRUE;
      if (v > out->gbps) {
        out->gbps = v;
        out->share = next;
        memcpy(out->weights, w, n * sizeof(double));
      }
    }
    /* BWAP moves pages towards the workers; the other way only when that worsened at once. */
    if (moved) break;
  }
}

typedef struct {
  const NumaModelApp *app;
  const void *params;
  const NumaModelMachine *m;
  const guint *workers;
  guint n_workers;
  guint evaluations;
} Objective;

static double objective(Objective *o, const double *w) {
  o->evaluations++;
  return o->app->throughput_gbps(o->params, o->m, o->workers, o->n_workers, w);
}

/* Steepest-ascent hill climbing from w (updated in place); returns the objective there. */
static double climb(Objective *o, double *w, double step, double min_step) {
  guint n = o->m->n;
  double cur = objective(o, w);
  double cand[SIM_NUMA_MAX_NODES], best_w[SIM_NUMA_MAX_NODES];
  while (step >= min_step && o->evaluations < 2000000) {
    double best = cur;
    gboolean found = FALSE;
#define TRY()                                                                                                \
  do {                                                                                                       \
    double v_ = objective(o, cand);                                                                          \
    if (v_ > best) {                                                                                         \
      best = v_;                                                                                             \
      memcpy(best_w, cand, n * sizeof(double));                                                              \
      found = TRUE;                                                                                          \
    }                                                                                                        \
  } while (0)
    for (guint a = 0; a < n; a++) {
      if (w[a] <= 0) continue;
      double t = MIN(step, w[a]);
      for (guint b = 0; b < n; b++) { /* a step from a to b */
        if (b == a) continue;
        memcpy(cand, w, n * sizeof(double));
        cand[a] -= t;
        cand[b] += t;
        TRY();
      }
      /* a step from a to all others in proportion (evenly when they hold nothing) */
      double others = 1 - w[a];
      if (n > 1) {
        for (guint k = 0; k < n; k++)
          cand[k] = k == a ? w[a] - t : w[k] + t * (others > 1e-12 ? w[k] / others : 1.0 / (n - 1));
        TRY();
      }
    }
    for (guint b = 0; b < n; b++) { /* a step from all others to b, in proportion */
      if (w[b] >= 1) continue;
      for (guint k = 0; k < n; k++)
        cand[k] = (1 - step) * w[k] + (k == b ? step : 0);
      TRY();
    }
#undef TRY
    if (found && best > cur * (1 + 1e-12)) {
      cur = best;
      memcpy(w, best_w, n * sizeof(double));
    } else {
      step /= 2;
    }
  }
  return cur;
}

void numa_model_oracle(const NumaModelApp *app, const void *app_params, const NumaModelTunerParams *tp,
                       const NumaModelMachine *m, const guint *workers, guint n_workers,
                       NumaModelOracleResult *out) {
  g_return_if_fail(app && app_params && tp && m && workers && out);
  check_workers(m, workers, n_workers);
  memset(out, 0, sizeof *out);
  Objective o = {.app = app, .params = app_params, .m = m, .workers = workers, .n_workers = n_workers};
  const NumaModelPolicy *starts[] = {&numa_model_uniform_all, &numa_model_canonical, &numa_model_first_touch};
  out->gbps = -1;
  for (guint s = 0; s < G_N_ELEMENTS(starts); s++) {
    double w[SIM_NUMA_MAX_NODES];
    starts[s]->weights(m, workers, n_workers, w);
    double v = climb(&o, w, MAX(tp->step_share, tp->oracle_min_step), tp->oracle_min_step);
    if (v > out->gbps) {
      out->gbps = v;
      memcpy(out->weights, w, m->n * sizeof(double));
    }
  }
  out->evaluations = o.evaluations;
}
