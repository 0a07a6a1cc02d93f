/* cmd_numa.c: `sim numa predict|tune|measure|place`: the NUMA performance model on machine files, and this
 * machine's own matrix and page placement.
 *
 * Why one file of about 910 lines: the four subcommands share the header, machine loading, worker and weight
 * parsing and printing helpers (the first 330 lines), and each is its option table, checks and output
 * (predict 160, tune 135, measure 150, place 95); split by subcommand, each file would need most of the
 * helpers through a header for no gain in reading. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "input.h"
#include "outfile.h"
#include "numa_hw.h"
#include "numa_model.h"
#include "output.h"
#include "sim-version.h"

/* The full command line for headers: "sim numa SUB ARGS...". */
typedef struct {
  int argc;
  char **argv;
} CmdLine;

static json_t *numa_header(const CmdLine *cl, const char *machine_path) {
  json_t *h = sim_output_header(0, 1, cl->argc, cl->argv, NULL, NULL);
  /* The model draws no random numbers. */
  json_object_del(h, "rng");
  json_object_del(h, "seed");
  if (machine_path) json_object_set_new(h, "machine_file", json_string(machine_path));
  return h;
}

static void print_text_header(const CmdLine *cl) {
  printf("# sim %s (%s):", SIM_VERSION, SIM_GIT_DESCRIBE);
  for (int i = 0; i < cl->argc; i++)
    printf(" %s", cl->argv[i]);
  printf("\n");
}

static void print_json(json_t *doc) {
  char *s = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  printf("%s\n", s);
  free(s);
}

/* MACHINE.json through sim's one input loader (sim/core/input.h); the model parses the document. */
static NumaModelMachine *machine_load_file(const char *path, SimDiag *diag) {
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

/* Loads MACHINE.json; problems on stderr. */
static NumaModelMachine *load_machine(const char *path) {
  g_autoptr(SimDiag) diag = sim_diag_new(path);
  NumaModelMachine *m = machine_load_file(path, diag);
  if (!m) {
    g_autofree char *msgs = sim_diag_join(diag);
    fprintf(stderr, "%s\n", msgs);
  }
  return m;
}

static gboolean parse_workers(const char *cmd, const NumaModelMachine *m, const char *text, guint *workers,
                              guint *n_workers) {
  if (!text) {
    *n_workers = numa_model_machine_default_workers(m, workers);
    return TRUE;
  }
  g_autoptr(GError) e = NULL;
  if (!numa_model_workers_parse(m, text, workers, n_workers, &e)) {
    sim_cli_usage_error(cmd, "--workers: %s", e->message);
    return FALSE;
  }
  return TRUE;
}

static char *workers_text(const guint *workers, guint n) {
  GString *s = g_string_new(NULL);
  for (guint k = 0; k < n; k++)
    g_string_append_printf(s, "%s%u", k ? "," : "", workers[k]);
  return g_string_free(s, FALSE);
}

static char *weights_text(const double *w, guint n) {
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(s, "%s%.3f", i ? " " : "", w[i]);
  return g_string_free(s, FALSE);
}

static json_t *weights_json(const double *w, guint n) {
  json_t *a = json_array();
  for (guint i = 0; i < n; i++)
    json_array_append_new(a, json_real(w[i]));
  return a;
}

/* The workers' mean idle latency (ns) under weights w. */
static double mean_idle_latency_ns(const NumaModelMachine *m, const guint *workers, guint n_workers,
                                   const double *w) {
  double sum = 0;
  guint n = numa_model_machine_n_nodes(m);
  for (guint k = 0; k < n_workers; k++)
    for (guint i = 0; i < n; i++)
      if (w[i] > 0) sum += w[i] * numa_model_machine_latency_ns(m, i, workers[k]);
  return sum / n_workers;
}

static void print_machine_line(const NumaModelMachine *m, const char *path, const guint *workers,
                               guint n_workers) {
  guint n = numa_model_machine_n_nodes(m);
  printf("machine: %s (%s): %u node%s, CPUs", numa_model_machine_name(m), path, n, n == 1 ? "" : "s");
  for (guint i = 0; i < n; i++)
    printf(" %u", numa_model_machine_cpus(m, i));
  g_autofree char *wt = workers_text(workers, n_workers);
  printf("; workers %s\n", wt);
}

static char *policy_names(void) {
  GString *s = g_string_new(NULL);
  for (const SimModelInfo *const *p = numa_model_policy_list; *p; p++)
    g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*p)->name);
  return g_string_free(s, FALSE);
}

/* ---- the application model and tuner settings, from options ---- */

static const SimParamSpec *find_spec(const SimParamSpec *specs, guint n, const char *name) {
  for (guint i = 0; i < n; i++)
    if (strcmp(specs[i].name, name) == 0) return &specs[i];
  return NULL;
}

/* Applies "NAME=VALUE" to the object of the table that has NAME. */
static gboolean apply_set(const char *cmd, const char *assignment, json_t *app, json_t *tuner) {
  const char *eq = strchr(assignment, '=');
  g_autofree char *name = g_strndup(assignment, eq ? (gsize)(eq - assignment) : strlen(assignment));
  const SimModelInfo *ai = &numa_model_app_mlp.info;
  json_t *target = find_spec(ai->params, ai->n_params, name)                         ? app
                   : find_spec(numa_model_tuner_params, numa_model_tuner_n_params, name) ? tuner
                                                                                     : NULL;
  if (!eq || !target) {
    GString *known = g_string_new(NULL);
    for (guint i = 0; i < ai->n_params; i++)
      g_string_append_printf(known, "%s%s", i ? ", " : "", ai->params[i].name);
    for (guint i = 0; i < numa_model_tuner_n_params; i++)
      g_string_append_printf(known, ", %s", numa_model_tuner_params[i].name);
    if (!eq)
      sim_cli_usage_error(cmd, "--set %s: expected NAME=VALUE", assignment);
    else
      sim_cli_usage_error(cmd, "--set %s: unknown parameter '%s' (expected one of: %s)", assignment, name,
                          known->str);
    g_string_free(known, TRUE);
    return FALSE;
  }
  g_autoptr(GError) e = NULL;
  if (!sim_json_set_path(target, assignment, &e)) {
    sim_cli_usage_error(cmd, "--set %s: %s", assignment, e->message);
    return FALSE;
  }
  return TRUE;
}

typedef struct {
  json_t *app_obj; /* the echo, defaults filled */
  json_t *tuner_obj;
  NumaModelAppParams app;
  NumaModelTunerParams tp;
} ModelOpts;

static void model_opts_clear(ModelOpts *o) {
  sim_params_clear(numa_model_app_mlp.info.params, numa_model_app_mlp.info.n_params, &o->app);
  g_clear_pointer(&o->app_obj, json_decref);
  g_clear_pointer(&o->tuner_obj, json_decref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ModelOpts, model_opts_clear)

/* --mlp, --latency-sensitivity and --set NAME=VALUE, validated by the parameter tables (bounds, types,
 * cross-field checks), all problems reported. */
static gboolean model_opts_parse(const char *cmd, const char *mlp, const char *sens, char **sets,
                                 ModelOpts *o) {
  memset(o, 0, sizeof *o);
  o->app_obj = json_object();
  o->tuner_obj = json_object();
  if (mlp) {
    g_autofree char *a = g_strdup_printf("mlp=%s", mlp);
    if (!apply_set(cmd, a, o->app_obj, o->tuner_obj)) return FALSE;
  }
  if (sens) {
    g_autofree char *a = g_strdup_printf("latency_sensitivity=%s", sens);
    if (!apply_set(cmd, a, o->app_obj, o->tuner_obj)) return FALSE;
  }
  for (guint i = 0; sets && sets[i]; i++)
    if (!apply_set(cmd, sets[i], o->app_obj, o->tuner_obj)) return FALSE;
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  const SimModelInfo *ai = &numa_model_app_mlp.info;
  if (sim_params_parse(ai->params, ai->n_params, o->app_obj, "app", NULL, &o->app, diag))
    ai->check(&o->app, diag, "app");
  sim_params_parse(numa_model_tuner_params, numa_model_tuner_n_params, o->tuner_obj, "tuner", NULL, &o->tp, diag);
  for (guint i = 0; i < sim_diag_count(diag); i++)
    fprintf(stderr, "sim %s: %s\n", cmd, sim_diag_get(diag, i));
  return sim_diag_count(diag) == 0;
}

/* Weights from "W0,W1,..." for an n-node machine. */
static gboolean parse_weights(const char *cmd, const char *text, guint n_max, double *w, guint *n) {
  g_auto(GStrv) parts = g_strsplit(text, ",", -1);
  *n = g_strv_length(parts);
  if (*n > n_max) {
    sim_cli_usage_error(cmd, "--weights: at most %u weights (got %u)", n_max, *n);
    return FALSE;
  }
  for (guint i = 0; i < *n; i++) {
    const char *p = g_strstrip(parts[i]);
    char *end = NULL;
    errno = 0;
    w[i] = g_ascii_strtod(p, &end);
    if (p[0] == '\0' || *end != '\0' || errno) {
      sim_cli_usage_error(cmd, "--weights: '%s' is not a number", p);
      return FALSE;
    }
  }
  g_autoptr(GError) e = NULL;
  if (!sim_numa_weights_check(w, *n, &e)) {
    sim_cli_usage_error(cmd, "--weights: %s", e->message);
    return FALSE;
  }
  return TRUE;
}

/* ---- predict ---- */

/* One row of the predict table. */
typedef struct {
  const char *name;
  double w[SIM_NUMA_MAX_NODES];
  gboolean kernel_integers;
} PredictRow;

/* The simulator's own access mix (docs/threads.md, "The simulator's own memory"), from the relay's counts per
 * block: 3,742 steps, each one miss that depends on the last (heap, then the node), and about 17,000 messages,
 * each one independent miss (the receiver's state): latency sensitivity 3742 / 20742 = 0.18 and mlp
 * 17000 / 3742 = 4.5; 8 relay threads (where the relay stops scaling) per worker node. Assumptions from the
 * mechanism, not measurements. */
#define SIM_MIX_MLP "4.5"
#define SIM_MIX_SENSITIVITY "0.18"
#define SIM_MIX_RELAY_THREADS 8.0
#define SIM_MIX_ABOUT                                                                                      \
  "mlp 4.5, latency sensitivity 0.18, 8 relay threads per worker node (threads_per_cpu = min(1, 8 / the "  \
  "largest worker node's CPUs)), before --mlp, --latency-sensitivity and --set"

typedef struct {
  char *workers, *policy, *weights, *mlp, *sens, *mix;
  char **sets;
  gboolean json;
} PredictOpts;

static const SimOpt predict_opts[] = {
    {.name = "workers", .short_name = 'w', .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, workers),
     .help = "Worker nodes: 'all' or a list like 0,1 (default: the file's workers, else every node with CPUs)",
     .arg = "LIST"},
    {.name = "policy", .short_name = 'p', .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, policy),
     .help = "One policy, or 'all' (default)", .arg = "NAME"},
    {.name = "weights", .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, weights),
     .help = "Also predict these weights (normalised)", .arg = "W0,W1,..."},
    {.name = "mlp", .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, mlp),
     .help = "Add the application model's column, with this mlp", .arg = "X"},
    {.name = "latency-sensitivity", .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, sens),
     .help = "... and this latency sensitivity", .arg = "Y"},
    SIM_OPT_SET(PredictOpts, sets, "... and this parameter ('sim numa tune --help')", "NAME=VALUE"),
    {.name = "mix", .type = SIM_OPT_STRING, .offset = offsetof(PredictOpts, mix),
     .help = "An application mix by name: 'sim', the simulator's own (" SIM_MIX_ABOUT "; docs/threads.md)",
     .arg = "NAME"},
    {.name = "json", .type = SIM_OPT_FLAG, .offset = offsetof(PredictOpts, json),
     .help = "Print JSON (with the header record) instead of a table"},
};

static void predict_opts_clear(PredictOpts *o) {
  sim_cli_options_clear(predict_opts, G_N_ELEMENTS(predict_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PredictOpts, predict_opts_clear)

/* The pick: the policies (not --weights' row) with the best application throughput, ties within rounding,
 * into `text` ("a, b") and `names`; returns that throughput. */
static double predict_pick(const GArray *rows, const ModelOpts *mo, const NumaModelMachine *m, const guint *workers,
                           guint n_workers, GString *text, json_t *names) {
  double best = 0;
  for (guint k = 0; k < rows->len; k++) {
    const PredictRow *r = &g_array_index(rows, PredictRow, k);
    if (strcmp(r->name, "weights") != 0)
      best = MAX(best, numa_model_app_mlp.throughput_gbps(&mo->app, m, workers, n_workers, r->w));
  }
  for (guint k = 0; k < rows->len; k++) {
    const PredictRow *r = &g_array_index(rows, PredictRow, k);
    if (strcmp(r->name, "weights") == 0 ||
        numa_model_app_mlp.throughput_gbps(&mo->app, m, workers, n_workers, r->w) < best * (1 - 1e-12))
      continue;
    g_string_append_printf(text, "%s%s", text->len ? ", " : "", r->name);
    json_array_append_new(names, json_string(r->name));
  }
  return best;
}

/* --mix sim: the mix's parameters, then --mlp, --latency-sensitivity and --set over them. */
static gboolean sim_mix_model_parse(const PredictOpts *o, const NumaModelMachine *m, const guint *workers,
                                    guint n_workers, ModelOpts *mo) {
  guint cpus = 1;
  for (guint k = 0; k < n_workers; k++)
    cpus = MAX(cpus, numa_model_machine_cpus(m, workers[k]));
  char tpc[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_dtostr(tpc, sizeof tpc, MIN(1.0, SIM_MIX_RELAY_THREADS / cpus));
  g_autoptr(GPtrArray) sets = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(sets, g_strdup("mlp=" SIM_MIX_MLP));
  g_ptr_array_add(sets, g_strdup("latency_sensitivity=" SIM_MIX_SENSITIVITY));
  g_ptr_array_add(sets, g_strdup_printf("threads_per_cpu=%s", tpc));
  if (o->mlp) g_ptr_array_add(sets, g_strdup_printf("mlp=%s", o->mlp));
  if (o->sens) g_ptr_array_add(sets, g_strdup_printf("latency_sensitivity=%s", o->sens));
  for (guint i = 0; o->sets && o->sets[i]; i++)
    g_ptr_array_add(sets, g_strdup(o->sets[i]));
  g_ptr_array_add(sets, NULL);
  return model_opts_parse("numa predict", NULL, NULL, (char **)sets->pdata, mo);
}

static int numa_predict(const CmdLine *cl, int argc, char **argv) {
  g_auto(PredictOpts) o = {0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("MACHINE.json - predicted throughput of each policy");
  sim_cli_add_options(ctx, predict_opts, G_N_ELEMENTS(predict_opts), &o);
  g_autofree char *names = policy_names();
  g_autofree char *desc = g_strdup_printf(
      "Prints, for each page-placement policy, its weights and the bandwidth bound of a bandwidth-bound\n"
      "application on the worker nodes: X(w) = |W| min_i m_i / w_i, m_i = min(min_{j in W} B[i][j], "
      "C_i/|W|);\n"
      "its ratio to the canonical weights' X; and the workers' mean idle latency. With --mlp,\n"
      "--latency-sensitivity or --set, also the application model's throughput (column app).\n"
      "Policies: %s ('sim models numa_policy' describes them).",
      names);
  g_option_context_set_description(ctx, desc);
  if (!sim_cli_parse(ctx, "numa predict", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2) return sim_cli_usage_error("numa predict", "missing MACHINE.json");
  if (argc > 2) return sim_cli_usage_error("numa predict", "unexpected argument '%s'", argv[2]);
  const NumaModelPolicy *only = NULL;
  if (o.policy && strcmp(o.policy, "all") != 0) {
    only = numa_model_policy_find(o.policy);
    if (!only)
      return sim_cli_usage_error("numa predict", "unknown policy '%s' (expected one of: all, %s)", o.policy,
                                 names);
  }
  if (o.mix && strcmp(o.mix, "sim") != 0)
    return sim_cli_usage_error("numa predict", "--mix: unknown mix '%s' (expected: sim)", o.mix);
  gboolean with_app = o.mlp || o.sens || o.sets || o.mix;
  g_auto(ModelOpts) mo = {0};
  /* A mix depends on the machine's CPUs: its model is parsed once the machine and workers are known. */
  if (!o.mix && !model_opts_parse("numa predict", o.mlp, o.sens, o.sets, &mo)) return SIM_EXIT_USAGE;
  const char *path = argv[1];
  g_autoptr(NumaModelMachine) m = load_machine(path);
  if (!m) return SIM_EXIT_USAGE;
  guint n = numa_model_machine_n_nodes(m);
  guint workers[SIM_NUMA_MAX_NODES], n_workers = 0;
  if (!parse_workers("numa predict", m, o.workers, workers, &n_workers)) return SIM_EXIT_USAGE;
  if (o.mix && !sim_mix_model_parse(&o, m, workers, n_workers, &mo)) return SIM_EXIT_USAGE;

  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(PredictRow));
  for (const SimModelInfo *const *pi = numa_model_policy_list; *pi; pi++) {
    const NumaModelPolicy *p = (const NumaModelPolicy *)*pi;
    if (only && p != only) continue;
    PredictRow r = {.name = p->info.name, .kernel_integers = p == &numa_model_kernel_auto};
    p->weights(m, workers, n_workers, r.w);
    g_array_append_val(rows, r);
  }
  if (o.weights) {
    PredictRow r = {.name = "weights"};
    guint nw = 0;
    if (!parse_weights("numa predict", o.weights, n, r.w, &nw)) return SIM_EXIT_USAGE;
    if (nw != n)
      return sim_cli_usage_error("numa predict", "--weights: the machine has %u nodes (got %u weights)", n,
                                 nw);
    double sum = 0;
    for (guint i = 0; i < n; i++)
      sum += r.w[i];
    for (guint i = 0; i < n; i++)
      r.w[i] /= sum;
    g_array_append_val(rows, r);
  }

  double lim[SIM_NUMA_MAX_NODES], wc[SIM_NUMA_MAX_NODES];
  numa_model_limits_gbps(m, workers, n_workers, lim);
  numa_model_canonical.weights(m, workers, n_workers, wc);
  double canonical = numa_model_predict_gbps(m, workers, n_workers, wc);
  guint iw[SIM_NUMA_MAX_NODES];
  numa_model_kernel_auto_integers(m, iw);

  g_autoptr(json_t) jrows = json_array();
  if (!o.json) {
    print_text_header(cl);
    print_machine_line(m, path, workers, n_workers);
    g_autofree char *lt = weights_text(lim, n);
    printf("limits m_i (GB/s): %s\n", lt);
    if (with_app) {
      g_autofree char *aj =
          json_dumps(mo.app_obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
      printf("app: mlp-latency %s\n", aj);
      if (o.mix) printf("mix: sim, the simulator's own access mix (docs/threads.md): %s\n", SIM_MIX_ABOUT);
    }
    printf("%-16s %9s %9s %9s", "policy", "GB/s", "/canon", "idle_ns");
    if (with_app) printf(" %9s", "app_GB/s");
    printf("  %s\n", "weights");
  }
  for (guint k = 0; k < rows->len; k++) {
    const PredictRow *r = &g_array_index(rows, PredictRow, k);
    double x = numa_model_predict_gbps(m, workers, n_workers, r->w);
    double lat = mean_idle_latency_ns(m, workers, n_workers, r->w);
    double app = with_app ? numa_model_app_mlp.throughput_gbps(&mo.app, m, workers, n_workers, r->w) : NAN;
    if (o.json) {
      json_t *row = json_object();
      json_object_set_new(row, "policy", json_string(r->name));
      json_object_set_new(row, "weights", weights_json(r->w, n));
      json_object_set_new(row, "gbps", json_real(x));
      json_object_set_new(row, "vs_canonical", json_real(x / canonical));
      json_object_set_new(row, "mean_idle_latency_ns", json_real(lat));
      if (with_app) json_object_set_new(row, "app_gbps", json_real(app));
      if (r->kernel_integers) {
        json_t *ints = json_array();
        for (guint i = 0; i < n; i++)
          json_array_append_new(ints, json_integer(iw[i]));
        json_object_set_new(row, "integer_weights", ints);
      }
      json_array_append_new(jrows, row);
      continue;
    }
    g_autofree char *wt = weights_text(r->w, n);
    printf("%-16s %9.2f %9.3f %9.1f", r->name, x, x / canonical, lat);
    if (with_app) printf(" %9.2f", app);
    printf("  %s", wt);
    if (r->kernel_integers) {
      printf("  (");
      for (guint i = 0; i < n; i++)
        printf("%s%u", i ? ":" : "", iw[i]);
      printf(")");
    }
    printf("\n");
  }
  g_autoptr(GString) pick = g_string_new(NULL);
  g_autoptr(json_t) jpick = json_array();
  if (with_app) {
    double best = predict_pick(rows, &mo, m, workers, n_workers, pick, jpick);
    if (!o.json) printf("pick: %s (%.2f GB/s, the best application throughput)\n", pick->str, best);
  }
  if (o.json) {
    g_autoptr(json_t) doc = json_object();
    json_object_set_new(doc, "header", numa_header(cl, path));
    json_object_set_new(doc, "machine", numa_model_machine_to_json(m, NULL));
    json_t *wj = json_array();
    for (guint k = 0; k < n_workers; k++)
      json_array_append_new(wj, json_integer(workers[k]));
    json_object_set_new(doc, "workers", wj);
    if (with_app) json_object_set_new(doc, "pick", json_incref(jpick));
    if (with_app) json_object_set_new(doc, "app", json_incref(mo.app_obj));
    if (o.mix) json_object_set_new(doc, "mix", json_string("sim"));
    json_object_set_new(doc, "limits_gbps", weights_json(lim, n));
    json_object_set_new(doc, "policies", json_incref(jrows));
    print_json(doc);
  }
  return SIM_EXIT_OK;
}

typedef struct {
  char *workers, *mlp, *sens, *start;
  char **sets;
  gboolean json;
} TuneOpts;

static const SimOpt tune_opts[] = {
    {.name = "workers", .short_name = 'w', .type = SIM_OPT_STRING, .offset = offsetof(TuneOpts, workers),
     .help = "Worker nodes: 'all' or a list like 0,1", .arg = "LIST"},
    {.name = "mlp", .type = SIM_OPT_STRING, .offset = offsetof(TuneOpts, mlp),
     .help = "Misses in flight per thread (--set mlp=X)", .arg = "X"},
    {.name = "latency-sensitivity", .type = SIM_OPT_STRING, .offset = offsetof(TuneOpts, sens),
     .help = "Share of misses that are dependent loads, 0..1 (--set latency_sensitivity=Y)", .arg = "Y"},
    {.name = "start", .type = SIM_OPT_STRING, .offset = offsetof(TuneOpts, start),
     .help = "Policy the tuner starts from (default canonical)", .arg = "NAME"},
    SIM_OPT_SET(TuneOpts, sets, "Any parameter below", "NAME=VALUE"),
    {.name = "json", .type = SIM_OPT_FLAG, .offset = offsetof(TuneOpts, json),
     .help = "Print JSON (with the header record) instead of text"},
};

static void tune_opts_clear(TuneOpts *o) {
  sim_cli_options_clear(tune_opts, G_N_ELEMENTS(tune_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(TuneOpts, tune_opts_clear)

static int numa_tune(const CmdLine *cl, int argc, char **argv) {
  g_auto(TuneOpts) o = {0};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("MACHINE.json - BWAP's on-line tuner against the oracle");
  sim_cli_add_options(ctx, tune_opts, G_N_ELEMENTS(tune_opts), &o);
  g_autoptr(GString) desc = g_string_new(
      "Starts from the canonical weights and moves the share of pages on the worker nodes in steps\n"
      "(BWAP's second stage), with the objective given by the application model; then searches all\n"
      "weights by hill climbing (the oracle) and reports how close the tuner came and at what cost.\n\n"
      "Application model (numa_app mlp-latency):\n");
  sim_params_describe(numa_model_app_mlp.info.params, numa_model_app_mlp.info.n_params, 2, desc);
  g_string_append(desc, "Tuner and oracle:\n");
  sim_params_describe(numa_model_tuner_params, numa_model_tuner_n_params, 2, desc);
  g_option_context_set_description(ctx, desc->str);
  if (!sim_cli_parse(ctx, "numa tune", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc < 2) return sim_cli_usage_error("numa tune", "missing MACHINE.json");
  if (argc > 2) return sim_cli_usage_error("numa tune", "unexpected argument '%s'", argv[2]);
  const NumaModelPolicy *start_policy = &numa_model_canonical;
  if (o.start) {
    start_policy = numa_model_policy_find(o.start);
    if (!start_policy) {
      g_autofree char *names = policy_names();
      return sim_cli_usage_error("numa tune", "unknown policy '%s' (expected one of: %s)", o.start, names);
    }
  }
  g_auto(ModelOpts) mo = {0};
  if (!model_opts_parse("numa tune", o.mlp, o.sens, o.sets, &mo)) return SIM_EXIT_USAGE;

  const char *path = argv[1];
  g_autoptr(NumaModelMachine) m = load_machine(path);
  if (!m) return SIM_EXIT_USAGE;
  guint n = numa_model_machine_n_nodes(m);
  guint workers[SIM_NUMA_MAX_NODES], n_workers = 0;
  if (!parse_workers("numa tune", m, o.workers, workers, &n_workers)) return SIM_EXIT_USAGE;

  double start[SIM_NUMA_MAX_NODES];
  start_policy->weights(m, workers, n_workers, start);
  NumaModelTuneResult tr;
  numa_model_tune(&numa_model_app_mlp, &mo.app, &mo.tp, m, workers, n_workers, start, &tr);
  NumaModelOracleResult orc;
  numa_model_oracle(&numa_model_app_mlp, &mo.app, &mo.tp, m, workers, n_workers, &orc);
  double bw_start = numa_model_predict_gbps(m, workers, n_workers, start);

  if (o.json) {
    g_autoptr(json_t) doc = json_object();
    json_object_set_new(doc, "header", numa_header(cl, path));
    json_object_set_new(doc, "machine", numa_model_machine_to_json(m, NULL));
    json_t *wj = json_array();
    for (guint k = 0; k < n_workers; k++)
      json_array_append_new(wj, json_integer(workers[k]));
    json_object_set_new(doc, "workers", wj);
    json_object_set_new(doc, "app", json_incref(mo.app_obj));
    json_object_set_new(doc, "tuner_params", json_incref(mo.tuner_obj));
    json_t *t = json_object();
    json_object_set_new(t, "start_policy", json_string(start_policy->info.name));
    json_object_set_new(t, "start_weights", weights_json(tr.start_weights, n));
    json_object_set_new(t, "start_share", json_real(tr.start_share));
    json_object_set_new(t, "start_gbps", json_real(tr.start_gbps));
    json_object_set_new(t, "tunable", json_boolean(tr.tunable));
    json_t *steps = json_array();
    for (guint s = 0; s < tr.steps->len; s++) {
      NumaModelTuneStep *st = &g_array_index(tr.steps, NumaModelTuneStep, s);
      json_t *step = json_object();
      json_object_set_new(step, "share", json_real(st->share));
      json_object_set_new(step, "gbps", json_real(st->throughput_gbps));
      json_array_append_new(steps, step);
    }
    json_object_set_new(t, "steps", steps);
    json_object_set_new(t, "share", json_real(tr.share));
    json_object_set_new(t, "weights", weights_json(tr.weights, n));
    json_object_set_new(t, "gbps", json_real(tr.gbps));
    json_object_set_new(t, "evaluations", json_integer(tr.evaluations));
    json_object_set_new(doc, "tuner", t);
    json_t *orc_json = json_object();
    json_object_set_new(orc_json, "weights", weights_json(orc.weights, n));
    json_object_set_new(orc_json, "gbps", json_real(orc.gbps));
    json_object_set_new(orc_json, "evaluations", json_integer(orc.evaluations));
    json_object_set_new(doc, "oracle", orc_json);
    json_object_set_new(doc, "tuner_vs_oracle", json_real(tr.gbps / orc.gbps));
    print_json(doc);
  } else {
    print_text_header(cl);
    print_machine_line(m, path, workers, n_workers);
    g_autofree char *aj =
        json_dumps(mo.app_obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    g_autofree char *tj =
        json_dumps(mo.tuner_obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    printf("app: mlp-latency %s\ntuner: %s\n", aj, tj);
    g_autofree char *sw = weights_text(tr.start_weights, n);
    printf("start (%s): share on workers %.3f, %.2f GB/s (bandwidth bound %.2f), weights %s\n",
           start_policy->info.name, tr.start_share, tr.start_gbps, bw_start, sw);
    if (!tr.tunable) printf("every node is a worker: the share on workers is 1, nothing to tune\n");
    if (tr.steps->len > 1) {
      printf("%-5s %7s %9s %9s\n", "step", "share", "GB/s", "vs_start");
      for (guint s = 0; s < tr.steps->len; s++) {
        NumaModelTuneStep *st = &g_array_index(tr.steps, NumaModelTuneStep, s);
        printf("%-5u %7.3f %9.2f %+8.2f%%\n", s, st->share, st->throughput_gbps,
               100 * (st->throughput_gbps / tr.start_gbps - 1));
      }
    }
    g_autofree char *tw = weights_text(tr.weights, n);
    g_autofree char *ow = weights_text(orc.weights, n);
    printf("tuner:  share %.3f, %.2f GB/s (%+.2f%% over the start), %u evaluations, weights %s\n", tr.share,
           tr.gbps, 100 * (tr.gbps / tr.start_gbps - 1), tr.evaluations, tw);
    printf("oracle: %.2f GB/s, %u evaluations, weights %s\n", orc.gbps, orc.evaluations, ow);
    printf("the tuner reaches %.1f%% of the oracle with %.2f%% of its evaluations\n",
           100 * tr.gbps / orc.gbps, 100.0 * tr.evaluations / orc.evaluations);
  }
  numa_model_tune_result_clear(&tr);
  return SIM_EXIT_OK;
}

/* ---- measure ---- */

typedef struct {
  char *out, *name;
  gint64 size_mb, loads;
  gint repeat, threads;
} MeasureOpts;

/* The bounds are checked together, by hand: one message names them all. */
static const SimOpt measure_opts[] = {
    SIM_OPT_OUT(MeasureOpts, out, "Write the machine file here (atomically) instead of printing it", "FILE"),
    {.name = "size", .type = SIM_OPT_INT64, .offset = offsetof(MeasureOpts, size_mb),
     .help = "MiB for the three triad arrays together (default 96)", .arg = "MB"},
    {.name = "repeat", .type = SIM_OPT_INT, .offset = offsetof(MeasureOpts, repeat),
     .help = "Triad passes; the best counts (default 5)", .arg = "N"},
    {.name = "threads", .type = SIM_OPT_INT, .offset = offsetof(MeasureOpts, threads),
     .help = "Threads per CPU node (default: all its CPUs)", .arg = "N"},
    {.name = "loads", .type = SIM_OPT_INT64, .offset = offsetof(MeasureOpts, loads),
     .help = "Dependent loads per latency figure (default 2097152)", .arg = "N"},
    {.name = "name", .type = SIM_OPT_STRING, .offset = offsetof(MeasureOpts, name),
     .help = "The machine's name in the file (default 'measured')", .arg = "NAME"},
};

static void measure_opts_clear(MeasureOpts *o) {
  sim_cli_options_clear(measure_opts, G_N_ELEMENTS(measure_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(MeasureOpts, measure_opts_clear)

static int numa_measure(const CmdLine *cl, int argc, char **argv) {
  SimNumaMeasureOptions opt;
  sim_numa_measure_options_default(&opt);
  g_auto(MeasureOpts) o = {.size_mb = (gint64)(opt.size_bytes >> 20), .loads = (gint64)opt.chase_loads,
                           .repeat = (gint)opt.repeat};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- measure this machine's bandwidth and latency matrix");
  sim_cli_add_options(ctx, measure_opts, G_N_ELEMENTS(measure_opts), &o);
  g_option_context_set_description(
      ctx,
      "For each memory node i and CPU node j: a STREAM-triad-like kernel (a = b + 3c, 24 bytes per element)\n"
      "with threads pinned to node j (numa_run_on_node) on arrays on node i (numa_alloc_onnode), best of\n"
      "the passes; each node's controller capacity with every CPU node streaming from it at once; and the\n"
      "idle latency by pointer chasing. Writes a machine file for 'sim numa predict' and 'tune'. Wall-clock\n"
      "figures: they change from run to run. A one-node machine takes about a second by default.");
  if (!sim_cli_parse(ctx, "numa measure", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc > 1) return sim_cli_usage_error("numa measure", "unexpected argument '%s'", argv[1]);
  if (o.size_mb < 1 || o.size_mb > 65536 || o.repeat < 1 || o.repeat > 1000 || o.threads < 0 || o.threads > 4096 ||
      o.loads < 1000 || o.loads > (G_GINT64_CONSTANT(1) << 34))
    return sim_cli_usage_error("numa measure",
                               "--size must be in [1, 65536], --repeat in [1, 1000], --threads in "
                               "[0, 4096], --loads in [1000, 2^34]");
  if (o.out) {
    /* Fail before measuring, not after. */
    g_autofree char *dir = g_path_get_dirname(o.out);
    struct stat st;
    int err = 0;
    if (stat(dir, &st) != 0)
      err = errno;
    else if (!S_ISDIR(st.st_mode))
      err = ENOTDIR;
    else if (access(dir, W_OK) != 0)
      err = errno;
    else if (g_file_test(o.out, G_FILE_TEST_IS_DIR))
      err = EISDIR;
    if (err) {
      fprintf(stderr, "sim numa measure: cannot write %s: %s\n", o.out, g_strerror(err));
      return SIM_EXIT_USAGE;
    }
  }
  opt.size_bytes = (gsize)o.size_mb << 20;
  opt.repeat = (guint)o.repeat;
  opt.threads_per_node = (guint)o.threads;
  opt.chase_loads = (guint64)o.loads;
  SimNumaMeasurement r;
  g_autoptr(GError) e = NULL;
  if (!sim_numa_measure(&opt, &r, &e)) {
    fprintf(stderr, "sim numa measure: %s\n", e->message);
    return SIM_EXIT_RUNTIME;
  }
  guint n = r.n_nodes;
  for (guint k = 0; k < (gsize)n * n; k++)
    if ((!isnan(r.bw_gbps[k]) && !(r.bw_gbps[k] > 0 && isfinite(r.bw_gbps[k]))) ||
        (!isnan(r.latency_ns[k]) && !(r.latency_ns[k] > 0 && isfinite(r.latency_ns[k])))) {
      fprintf(stderr,
              "sim numa measure: a measurement came out non-positive or infinite; try a larger --size\n");
      sim_numa_measurement_clear(&r);
      return SIM_EXIT_RUNTIME;
    }
  for (guint i = 0; i < n; i++)
    if (isnan(r.capacity_gbps[i])) {
      /* No CPU node at all could stream (should not happen): fall back to the best single one. */
      double best = 0;
      for (guint j = 0; j < n; j++)
        if (!isnan(r.bw_gbps[i * n + j])) best = MAX(best, r.bw_gbps[i * n + j]);
      r.capacity_gbps[i] = best;
    }
  g_autoptr(NumaModelMachine) m =
      numa_model_machine_new(o.name ? o.name : "measured", n, r.cpus, r.bw_gbps, r.capacity_gbps, r.latency_ns);
  if (!m) {
    fprintf(stderr, "sim numa measure: the measurement does not form a machine (no node with CPUs?)\n");
    sim_numa_measurement_clear(&r);
    return SIM_EXIT_RUNTIME;
  }
  g_autofree char *host = g_strdup(g_get_host_name());
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  g_autofree char *when = g_date_time_format_iso8601(now);
  GString *cmd = g_string_new("sim");
  for (int i = 1; i < cl->argc; i++)
    g_string_append_printf(cmd, " %s", cl->argv[i]);
  char *comment[8];
  comment[0] =
      g_strdup_printf("Measured by '%s' (sim %s, %s) on %s at %s; %.1f s in all. Wall-clock figures: "
                      "they vary from run to run.",
                      cmd->str, SIM_VERSION, SIM_GIT_DESCRIBE, host, when, r.wall_s);
  comment[1] = g_strdup_printf(
      "bandwidth_gbps[i][j]: triad a = b + 3c, three arrays of %.1f MiB in all on memory node i "
      "(numa_alloc_onnode), all CPUs of node j this process may use (at most %u threads per measurement) "
      "pinned with numa_run_on_node, best of %u passes, 24 bytes per element as STREAM counts, 1e9 bytes/s.",
      (double)opt.size_bytes / 1048576.0, r.threads_max, opt.repeat);
  comment[2] =
      g_strdup(n == 1 ? "capacity_gbps: one node, so the local triad figure."
                      : "capacity_gbps[i]: the same triad with every CPU node's threads streaming from "
                        "node i at once.");
  comment[3] =
      g_strdup_printf("latency_ns[i][j]: one thread on node j, %" G_GUINT64_FORMAT
                      " dependent loads over a random cycle of the 64-byte lines of %.1f MiB on node i, "
                      "4 KiB pages (TLB misses included).",
                      opt.chase_loads, (double)opt.size_bytes / 1048576.0);
  comment[4] = NULL;
  g_string_free(cmd, TRUE);
  g_autoptr(json_t) doc = numa_model_machine_to_json(m, (const char *const *)comment);
  for (guint i = 0; comment[i]; i++)
    g_free(comment[i]);
  sim_numa_measurement_clear(&r);
  char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  g_autofree char *with_nl = g_strdup_printf("%s\n", text);
  free(text);
  if (!o.out) {
    fputs(with_nl, stdout);
    return SIM_EXIT_OK;
  }
  if (!sim_output_write_file(o.out, with_nl, -1, &e)) {
    fprintf(stderr, "sim numa measure: %s\n", e->message);
    return g_error_matches(e, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO) ? SIM_EXIT_RUNTIME : SIM_EXIT_USAGE;
  }
  print_text_header(cl);
  printf("wrote %s: %u node%s\n", o.out, n, n == 1 ? "" : "s");
  for (guint i = 0; i < n; i++) {
    printf("memory node %u: capacity %.1f GB/s; from CPU nodes:", i, numa_model_machine_capacity_gbps(m, i));
    for (guint j = 0; j < n; j++) {
      if (!numa_model_machine_cpus(m, j)) continue;
      printf("  %u: %.1f GB/s %.0f ns", j, numa_model_machine_bw_gbps(m, i, j),
             numa_model_machine_latency_ns(m, i, j));
    }
    printf("\n");
  }
  return SIM_EXIT_OK;
}

/* ---- place ---- */

typedef struct {
  char *weights;
  gint64 size_mb;
} PlaceOpts;

static const SimOpt place_opts[] = {
    {.name = "weights", .short_name = 'w', .type = SIM_OPT_STRING, .offset = offsetof(PlaceOpts, weights),
     .help = "Page shares of nodes 0, 1, ... (normalised)", .arg = "W0,W1,..."},
    {.name = "size", .type = SIM_OPT_INT64, .offset = offsetof(PlaceOpts, size_mb), .help = "MiB of buffer (default 64)",
     .arg = "MB"},
};

static void place_opts_clear(PlaceOpts *o) {
  sim_cli_options_clear(place_opts, G_N_ELEMENTS(place_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlaceOpts, place_opts_clear)

static int numa_place(const CmdLine *cl, int argc, char **argv) {
  g_auto(PlaceOpts) o = {.size_mb = 64};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("- place a buffer's pages by weights and check where they went");
  sim_cli_add_options(ctx, place_opts, G_N_ELEMENTS(place_opts), &o);
  g_option_context_set_description(
      ctx,
      "Applies the weights with the staircase of plain interleaved regions (mbind MPOL_INTERLEAVE; the\n"
      "kernel's weighted interleave only where it has it and its sysfs weights already match), touches "
      "every\n"
      "page, and compares the intended pages per node with where move_pages(2) finds them. With one memory\n"
      "node nothing is done and every page is on node 0.");
  if (!sim_cli_parse(ctx, "numa place", &argc, &argv)) return SIM_EXIT_USAGE;
  if (argc > 1) return sim_cli_usage_error("numa place", "unexpected argument '%s'", argv[1]);
  if (!o.weights) return sim_cli_usage_error("numa place", "missing --weights");
  if (o.size_mb < 1 || o.size_mb > 1048576)
    return sim_cli_usage_error("numa place", "--size must be in [1, 1048576]");
  double w[SIM_NUMA_MAX_NODES];
  guint n = 0;
  if (!parse_weights("numa place", o.weights, SIM_NUMA_MAX_NODES, w, &n)) return SIM_EXIT_USAGE;
  g_autoptr(GError) e = NULL;
  guint nodes = sim_numa_hw_nodes();
  for (guint i = 0; i < n; i++)
    if (w[i] > 0 && i >= nodes)
      return sim_cli_usage_error("numa place",
                                 "--weights: node %u has weight %g but this machine has %u node%s", i, w[i],
                                 nodes, nodes == 1 ? "" : "s");
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += w[i];

  gsize ps = (gsize)sysconf(_SC_PAGESIZE);
  gsize len = (gsize)o.size_mb << 20;
  gsize pages = (len + ps - 1) / ps;
  void *buf = mmap(NULL, pages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) {
    fprintf(stderr, "sim numa place: cannot map %zu bytes: %s\n", pages * ps, g_strerror(errno));
    return SIM_EXIT_RUNTIME;
  }
  SimNumaPlaceMethod method;
  if (!sim_numa_place_weighted(buf, pages * ps, w, n, &method, &e)) {
    fprintf(stderr, "sim numa place: %s\n", e->message);
    munmap(buf, pages * ps);
    return SIM_EXIT_RUNTIME;
  }
  for (gsize k = 0; k < pages; k++)
    ((volatile char *)buf)[k * ps] = 1;
  guint n_count = MAX(n, nodes);
  gsize actual[SIM_NUMA_MAX_NODES] = {0}, absent = 0;
  gboolean counted = sim_numa_count_pages(buf, pages * ps, actual, n_count, &absent, &e);
  munmap(buf, pages * ps);
  if (!counted) {
    fprintf(stderr, "sim numa place: %s\n", e->message);
    return SIM_EXIT_RUNTIME;
  }
  SimNumaRegion regions[SIM_NUMA_MAX_NODES];
  guint nr = sim_numa_staircase_plan(w, n, pages, regions);
  gsize planned[SIM_NUMA_MAX_NODES] = {0};
  sim_numa_staircase_pages(regions, nr, n, planned);

  print_text_header(cl);
  printf("machine: %u node%s; kernel weighted interleave (mode 6): %s", nodes, nodes == 1 ? "" : "s",
         sim_numa_kernel_weighted_available() ? "available" : "not available");
  guint iw[SIM_NUMA_MAX_NODES];
  if (sim_numa_kernel_weights_read(iw, nodes)) {
    printf(", sysfs weights");
    for (guint i = 0; i < nodes; i++)
      printf(" %u", iw[i]);
  }
  printf("\nmethod: %s%s\n", sim_numa_place_method_name(method),
         method == SIM_NUMA_PLACE_NONE ? " (one memory node: no system call, every page on node 0)" : "");
  printf("%zu pages of %zu bytes; staircase plan, %u region%s:\n", pages, ps, nr, nr == 1 ? "" : "s");
  printf("  %-6s %10s %10s  %s\n", "region", "first", "pages", "nodes");
  for (guint r = 0; r < nr; r++) {
    printf("  %-6u %10zu %10zu  ", r, regions[r].first_page, regions[r].n_pages);
    gboolean first = TRUE;
    for (guint i = 0; i < n; i++)
      if (regions[r].nodes & (G_GUINT64_CONSTANT(1) << i)) {
        printf("%s%u", first ? "" : ",", i);
        first = FALSE;
      }
    printf("\n");
  }
  printf("%-5s %7s %12s %9s %9s %9s\n", "node", "weight", "intended", "planned", "actual", "diff");
  for (guint i = 0; i < n_count; i++) {
    double wi = i < n ? w[i] / sum : 0;
    double intended = wi * (double)pages;
    printf("%-5u %7.4f %12.1f %9zu %9zu %+9.1f\n", i, wi, intended, i < n ? planned[i] : 0, actual[i],
           (double)actual[i] - intended);
  }
  if (absent) printf("pages not found on nodes 0..%u: %zu\n", n_count - 1, absent);
  return SIM_EXIT_OK;
}

int sim_cmd_numa(int argc, char **argv) {
  static const char *const usage = "sim numa predict|tune|measure|place [OPTIONS]";
  if (argc < 2) return sim_cli_usage_error("numa", "missing subcommand (predict, tune, measure, place)");
  const char *sub = argv[1];
  if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
    printf("Usage: %s\n\n"
           "The NUMA performance model (bandwidth-aware page placement, after BWAP and Linux weighted "
           "interleave):\n"
           "  predict MACHINE.json   throughput of each placement policy for a worker set\n"
           "  tune MACHINE.json      BWAP's on-line tuner against the hill-climbing oracle\n"
           "  measure                this machine's bandwidth and latency matrix, as a machine file\n"
           "  place --weights W,...  apply weights to a buffer and check where its pages went\n\n"
           "Run 'sim numa SUBCOMMAND --help' for its options. Machine files: models/machines/.\n",
           usage);
    return SIM_EXIT_OK;
  }
  /* The header's command line: "sim numa SUB ARGS...". */
  g_autofree char **full = g_new0(char *, argc + 2);
  full[0] = (char *)"sim";
  for (int i = 0; i < argc; i++)
    full[i + 1] = argv[i];
  CmdLine cl = {.argc = argc + 1, .argv = full};
  if (strcmp(sub, "predict") == 0) return numa_predict(&cl, argc - 1, argv + 1);
  if (strcmp(sub, "tune") == 0) return numa_tune(&cl, argc - 1, argv + 1);
  if (strcmp(sub, "measure") == 0) return numa_measure(&cl, argc - 1, argv + 1);
  if (strcmp(sub, "place") == 0) return numa_place(&cl, argc - 1, argv + 1);
  return sim_cli_usage_error("numa", "unknown subcommand '%s' (expected predict, tune, measure, place)", sub);
}
