/* registry.c: every model family and its models, and parsing of model choices from scenarios. */
#include "registry.h"

#include <string.h>

#include "delay.h"
#include "pow.h"
#include "rdma.h"
#include "geo.h"
#include "numa_model.h"
#include "relay.h"
#include "strategy.h"
#include "uncles.h"

static const SimModelInfo *const delay_models[] = {
    &sim_delay_lognormal.info, &sim_delay_exponential.info, &sim_delay_constant.info, &sim_delay_uniform.info,
    &sim_delay_stack.info, NULL};
static const SimModelInfo *const uncle_models[] = {
    &sim_uncle_ethereum.info, &sim_uncle_no_self.info, &sim_uncle_none.info, NULL};
static const SimModelInfo *const network_models[] = {&pow_network_pool_delay.info, &pow_network_geo.info, NULL};
static const SimModelInfo *const relay_models[] = {&relay_geth.info, &relay_btc.info, NULL};
static const SimModelInfo *const jitter_models[] = {&net_jitter_none.info, &net_jitter_pareto.info,
                                                    &net_jitter_lognormal.info, &net_jitter_empirical.info, NULL};

static const SimModelInfo *const stack_models[] = {&sim_stack_tcp.info, &sim_stack_rdma_send.info,
                                                  &sim_stack_rdma_write.info, &sim_stack_rdma_channel.info,
                                                  NULL};

/* The families, once: X(name, models) in the order `sim models` lists them. */
#define SIM_MODEL_FAMILIES(X)                                                                                   \
  X("network", network_models)                                                                                  \
  X("uncle_rule", uncle_models)                                                                                 \
  X("delay", delay_models)                                                                                      \
  X("relay", relay_models)                                                                                      \
  X("jitter", jitter_models)                                                                                    \
  X("stack", stack_models)                                                                                      \
  X("numa_policy", numa_model_policy_list)                                                                      \
  X("numa_app", numa_model_app_list)                                                                            \
  X("strategy", pow_strategy_list)

#define FAMILY_ROW(name, list) {name, list},
#define FAMILY_NAME(name, list) name,
static const struct {
  const char *family;
  const SimModelInfo *const *models;
} families[] = {SIM_MODEL_FAMILIES(FAMILY_ROW)};
static const char *const family_names[] = {SIM_MODEL_FAMILIES(FAMILY_NAME) NULL};
#undef FAMILY_ROW
#undef FAMILY_NAME

const SimModelInfo *const *sim_models_family(const char *family) {
  for (guint i = 0; i < G_N_ELEMENTS(families); i++)
    if (strcmp(families[i].family, family) == 0) return families[i].models;
  return NULL;
}

const SimModelInfo *sim_models_find(const char *family, const char *name) {
  const SimModelInfo *const *m = sim_models_family(family);
  for (; m && *m; m++)
    if (strcmp((*m)->name, name) == 0) return *m;
  return NULL;
}

const char *const *sim_models_families(void) { return family_names; }

static char *model_names(const char *family) {
  GString *s = g_string_new(NULL);
  for (const SimModelInfo *const *m = sim_models_family(family); m && *m; m++)
    g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*m)->name);
  return g_string_free(s, FALSE);
}

gboolean sim_model_ref_parse(SimModelRef *ref, const char *family, const char *default_model, json_t *obj,
                             const char *path, SimDiag *diag) {
  memset(ref, 0, sizeof *ref);
  guint before = sim_diag_count(diag);
  if (!json_is_object(obj)) {
    sim_diag_add(diag, path, "must be an object with a \"model\" key");
    return FALSE;
  }
  json_t *jm = json_object_get(obj, "model");
  const char *name = default_model;
  if (jm) {
    if (!json_is_string(jm)) {
      sim_diag_add(diag, path, "\"model\" must be a string");
      return FALSE;
    }
    name = json_string_value(jm);
  } else {
    json_object_set_new(obj, "model", json_string(default_model));
  }
  const SimModelInfo *info = sim_models_find(family, name);
  if (!info) {
    g_autofree char *names = model_names(family);
    g_autofree char *p = g_strdup_printf("%s.model", path);
    sim_diag_add(diag, p, "unknown %s model \"%s\" (expected one of: %s)", family, name, names);
    return FALSE;
  }
  ref->model = info;
  ref->params = g_malloc0(MAX(info->params_size, 1));

  /* Keys of submodels are parsed below; the generic parser must accept them. */
  const char *extra[16] = {"model", "comment"};
  guint n_extra = 2;
  for (guint i = 0; i < info->n_submodels && n_extra < G_N_ELEMENTS(extra) - 1; i++)
    extra[n_extra++] = info->submodels[i].key;
  for (const char *const *k = info->extra_keys; k && *k && n_extra < G_N_ELEMENTS(extra) - 1; k++)
    extra[n_extra++] = *k;
  extra[n_extra] = NULL;
  sim_params_parse(info->params, info->n_params, obj, path, extra, ref->params, diag);

  for (guint i = 0; i < info->n_submodels; i++) {
    const SimSubmodelSpec *s = &info->submodels[i];
    g_autofree char *p = g_strdup_printf("%s.%s", path, s->key);
    json_t *sub = json_object_get(obj, s->key);
    if (!sub) {
      sub = json_object();
      json_object_set_new(obj, s->key, sub);
    }
    sim_model_ref_parse((SimModelRef *)((char *)ref->params + s->offset), s->family, s->default_model, sub, p,
                        diag);
  }
  if (sim_diag_count(diag) == before && info->check) info->check(ref->params, diag, path);
  return sim_diag_count(diag) == before;
}

gboolean sim_model_ref_parse_settings(SimModelRef *ref, json_t *obj, const char *path, const SimModelScope *scope,
                                      SimDiag *diag) {
  if (!ref->model || !ref->params || !ref->model->parse_settings) return TRUE;
  return ref->model->parse_settings(ref->params, obj, path, scope, diag);
}

void sim_model_describe(const SimModelInfo *m, GString *out) {
  g_string_append_printf(out, "  %s: %s\n", m->name, m->help);
  if (m->n_params) sim_params_describe(m->params, m->n_params, 6, out);
  for (guint i = 0; i < m->n_submodels; i++)
    g_string_append_printf(out, "      %s  a \"%s\" model (default %s): %s\n", m->submodels[i].key,
                           m->submodels[i].family, m->submodels[i].default_model, m->submodels[i].help);
  if (m->describe_settings) m->describe_settings(6, out);
  if (!m->n_params && !m->n_submodels && !m->describe_settings) g_string_append(out, "      (no parameters)\n");
}

void sim_model_ref_clear(SimModelRef *ref) {
  if (!ref || !ref->model) return;
  const SimModelInfo *info = ref->model;
  if (ref->params) {
    for (guint i = 0; i < info->n_submodels; i++)
      sim_model_ref_clear((SimModelRef *)((char *)ref->params + info->submodels[i].offset));
    if (info->clear_extra) info->clear_extra(ref->params);
    sim_params_clear(info->params, info->n_params, ref->params);
    g_free(ref->params);
  }
  memset(ref, 0, sizeof *ref);
}
