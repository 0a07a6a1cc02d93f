/* registry.h: the name-keyed registry of every model family and model, built from const tables. */
#pragma once

#include <glib.h>

#include "params.h"

G_BEGIN_DECLS

/* The model `name` of `family`, or NULL. */
const SimModelInfo *sim_models_find(const char *family, const char *name);

/* All models of a family in registration order (NULL-terminated), or NULL for an unknown family. */
const SimModelInfo *const *sim_models_family(const char *family);

/* All family names (NULL-terminated), in a stable order. */
const char *const *sim_models_families(void);

/* Parses a model choice `{"model": NAME, ...params}` at `path` into `ref`, recursing into submodels.
 * Missing "model" uses `default_model`; defaults are filled into `obj`. Problems go to `diag`.
 * On success ref->params is allocated (free with sim_model_ref_clear). Returns TRUE if no problem. */
gboolean sim_model_ref_parse(SimModelRef *ref, const char *family, const char *default_model, json_t *obj,
                             const char *path, SimDiag *diag);

/* The structured settings of the model chosen in `ref` (SimModelInfo.parse_settings) from `obj` at `path`,
 * once the scenario's `scope` is known. TRUE if the model has none or no problem was found. */
gboolean sim_model_ref_parse_settings(SimModelRef *ref, json_t *obj, const char *path, const SimModelScope *scope,
                                      SimDiag *diag);

/* Appends the help of one model (name, help, parameter table, submodels, structured settings) as `sim models`
 * lists it. */
void sim_model_describe(const SimModelInfo *m, GString *out);

/* Frees ref->params (and nested submodel params) and zeroes `ref`. */
void sim_model_ref_clear(SimModelRef *ref);

G_END_DECLS
