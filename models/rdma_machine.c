/* rdma_machine.c: machine files of Rubin's hardware (models/machines/rdma/): the constants and the stored
 * fit, from a parsed document and back. The command reads the file (sim/core/input.h). */
#include "rdma-private.h"

#include <string.h>

/* ---- Machine files ---- */

typedef struct {
  double java_us, java_us_stderr, copy_ns_per_byte, copy_ns_per_byte_stderr, correlation, target_gain, sigma,
      chi2;
  int64_t dof, iterations;
} FitParams;

#define F_NUM(field, unit_, lo, hi, req, text)                                                               \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_NUMBER, .unit = unit_, .min = lo, .max = hi, .required = req,          \
    .offset = offsetof(FitParams, field), .help = text                                                       \
  }

static const SimParamSpec fit_params[] = {
    F_NUM(java_us, "us", 0, 1e3, TRUE, "fitted: Java's CPU per message at each end"),
    F_NUM(java_us_stderr, "us", 0, 1e9, FALSE, "its standard error"),
    F_NUM(copy_ns_per_byte, "ns/B", 0, 100, TRUE, "fitted: one memory copy per byte"),
    F_NUM(copy_ns_per_byte_stderr, "ns/B", 0, 1e9, FALSE, "its standard error"),
    F_NUM(correlation, "", -1, 1, FALSE, "correlation of the two estimates"),
    F_NUM(target_gain, "", -1e9, 1e9, FALSE, "the fit's target"),
    F_NUM(sigma, "", 0, 1e9, FALSE, "the target's standard deviation"),
    F_NUM(chi2, "", 0, 1e300, FALSE, "chi-square at the fitted values"),
    {.name = "dof", .type = SIM_PARAM_INT, .min = 0, .max = 1e6, .offset = offsetof(FitParams, dof),
     .help = "degrees of freedom"},
    {.name = "iterations", .type = SIM_PARAM_INT, .min = 0, .max = 1e9, .offset = offsetof(FitParams, iterations),
     .help = "solver iterations"},
};

static const char *const fit_extra_keys[] = {"sizes_bytes", "model_gain", "residuals", "method", NULL};

void sim_rubin_machine_clear(SimRubinMachine *m) {
  if (m) g_clear_pointer(&m->name, g_free);
}

gboolean sim_rubin_machine_from_json(const json_t *root, SimRubinMachine *out, SimDiag *diag) {
  g_return_val_if_fail(root != NULL && out != NULL && diag != NULL, FALSE);
  memset(out, 0, sizeof *out);
  if (!json_is_object(root)) {
    sim_diag_add(diag, "$", "must be an object (got %s)", sim_json_kind(root));
    return FALSE;
  }
  guint before = sim_diag_count(diag);
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)root, key, v) {
    if (strcmp(key, "name") && strcmp(key, "comment") && strcmp(key, "hardware") && strcmp(key, "fit")) {
      g_autofree char *kp = sim_json_child_path("$", key);
      sim_diag_add(diag, kp, "unknown key (expected one of: name, comment, hardware, fit)");
    }
  }
  json_t *name = json_object_get(root, "name");
  if (name && !json_is_string(name)) sim_diag_add(diag, "$.name", "must be a string (got %s)", sim_json_kind(name));
  out->name = g_strdup(json_is_string(name) ? json_string_value(name) : "rubin");
  sim_rubin_hw_default(&out->hw);
  json_t *hw = json_object_get(root, "hardware");
  if (!hw) {
    sim_diag_add(diag, "$", "missing key 'hardware'");
  } else if (!json_is_object(hw)) {
    sim_diag_add(diag, "$.hardware", "must be an object (got %s)", sim_json_kind(hw));
  } else {
    g_autoptr(json_t) copy = json_deep_copy(hw);
    SimRubinHw parsed;
    memset(&parsed, 0, sizeof parsed);
    guint n_hw;
    const SimParamSpec *hw_specs = sim_rubin_hw_params(&n_hw);
    if (sim_params_parse(hw_specs, n_hw, copy, "$.hardware", NULL, &parsed, diag))
      out->hw = parsed;
  }
  json_t *fit = json_object_get(root, "fit");
  if (fit && !json_is_object(fit)) {
    sim_diag_add(diag, "$.fit", "must be an object (got %s)", sim_json_kind(fit));
  } else if (fit) {
    g_autoptr(json_t) copy = json_deep_copy(fit);
    FitParams fp;
    memset(&fp, 0, sizeof fp);
    if (sim_params_parse(fit_params, G_N_ELEMENTS(fit_params), copy, "$.fit", fit_extra_keys, &fp, diag)) {
      out->has_fit = TRUE;
      out->java_us = fp.java_us;
      out->copy_ns_per_byte = fp.copy_ns_per_byte;
    }
  }
  if (sim_diag_count(diag) != before) {
    sim_rubin_machine_clear(out);
    return FALSE;
  }
  return TRUE;
}

json_t *sim_rubin_machine_to_json(const char *name, const SimRubinHw *hw, const SimRubinFit *fit) {
  json_t *doc = json_object();
  json_object_set_new(doc, "name", json_string(name));
  json_t *comment = json_array();
  static const char *const lines[] = {
      "Rubin's hardware (Schwarz-Ruesch, Messadi, Kapitza, DSN-W 2018; scenarios/data/perf-models.json "
      "rdma_vs_tcp.rubin_2018_seed): 2 servers, 4-core Xeon v2, ConnectX-3, a 10 Gb/s switch, Java stacks.",
      "hardware: the fixed constants; 'sim models' does not list them, 'sim bft rubin --help' and docs/perf-rdma.md "
      "(Performance models: RDMA vs TCP for BFT) give each one's source (published, derived, standard or "
      "assumed).",
      "fit: java_us and copy_ns_per_byte fitted by 'sim bft rubin' to one published series only, the RDMA "
      "channel's latency gain over TCP (33-43% lower, read as 38% +- 5/sqrt(3) at each size), GSL "
      "multifit_nlinear; standard errors at that sigma. Written by 'sim bft rubin --write'; do not edit.",
      NULL};
  for (const char *const *l = lines; *l; l++)
    json_array_append_new(comment, json_string(*l));
  json_object_set_new(doc, "comment", comment);
  json_t *h = json_object();
  guint n_hw;
  const SimParamSpec *hw_specs = sim_rubin_hw_params(&n_hw);
  for (guint i = 0; i < n_hw; i++) {
    const SimParamSpec *s = &hw_specs[i];
    const char *base = (const char *)hw + s->offset;
    if (s->type == SIM_PARAM_INT)
      json_object_set_new(h, s->name, json_integer(*(const int64_t *)base));
    else
      json_object_set_new(h, s->name, json_real(*(const double *)base));
  }
  json_object_set_new(doc, "hardware", h);
  if (fit) {
    json_t *f = json_object();
    json_object_set_new(f, "method", json_string("GSL multifit_nlinear (trust region, Levenberg-Marquardt), "
                                                 "finite-difference Jacobian"));
    json_object_set_new(f, "java_us", json_real(fit->java_us));
    json_object_set_new(f, "java_us_stderr", json_real(fit->java_us_se));
    json_object_set_new(f, "copy_ns_per_byte", json_real(fit->copy_ns_per_byte));
    json_object_set_new(f, "copy_ns_per_byte_stderr", json_real(fit->copy_ns_per_byte_se));
    json_object_set_new(f, "correlation", json_real(fit->correlation));
    json_object_set_new(f, "target_gain", json_real(fit->target));
    json_object_set_new(f, "sigma", json_real(fit->sigma));
    json_object_set_new(f, "chi2", json_real(fit->chi2));
    json_object_set_new(f, "dof", json_integer(fit->dof));
    json_object_set_new(f, "iterations", json_integer(fit->iterations));
    json_t *sz = json_array(), *mg = json_array(), *rs = json_array();
    for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
      json_array_append_new(sz, json_integer((json_int_t)SIM_RUBIN_FIT_SIZES[i]));
      json_array_append_new(mg, json_real(fit->model_gain[i]));
      json_array_append_new(rs, json_real(fit->residual[i]));
    }
    json_object_set_new(f, "sizes_bytes", sz);
    json_object_set_new(f, "model_gain", mg);
    json_object_set_new(f, "residuals", rs);
    json_object_set_new(doc, "fit", f);
  }
  return doc;
}
