/* uncles.c: uncle-reference rules: ethereum, no-self-uncle, none. */
#include "uncles.h"

#include <math.h>

static const SimParamSpec uncle_params[] = {
    {.name = "max_uncles", .type = SIM_PARAM_INT, .min = 0, .max = 8, .def = 2,
     .offset = offsetof(SimUncleParams, max_uncles), .help = "uncle references per block (Geth: 2)"},
    {.name = "generations", .type = SIM_PARAM_INT, .min = 2, .max = 64, .def = 7,
     .offset = offsetof(SimUncleParams, generations),
     .help = "an uncle's parent must be one of this many nearest ancestors (Geth: 7, so depth <= 6)"},
    {.name = "uncle_base", .type = SIM_PARAM_NUMBER, .min = 1, .max = INFINITY, .def = 8,
     .offset = offsetof(SimUncleParams, uncle_base),
     .help = "uncle reward (u + base - b) / base of the block reward"},
    {.name = "nephew_divisor", .type = SIM_PARAM_NUMBER, .min = 1, .max = INFINITY, .def = 32,
     .offset = offsetof(SimUncleParams, nephew_divisor),
     .help = "the including block earns block reward / divisor per uncle"},
};

static void uncle_check(const void *params, SimDiag *diag, const char *path) {
  const SimUncleParams *p = params;
  /* The deepest uncle (depth generations - 1) must not earn a negative reward. */
  if (p->generations - 1 > p->uncle_base)
    sim_diag_add(diag, path, "generations - 1 (%" G_GINT64_FORMAT ") must not exceed uncle_base (%g): "
                 "the deepest uncle would earn a negative reward", p->generations - 1, p->uncle_base);
}

static gboolean ethereum_allowed(const SimUncleParams *p, guint32 uncle_miner, guint32 main_miner) {
  (void)p, (void)uncle_miner, (void)main_miner;
  return TRUE;
}

static gboolean no_self_allowed(const SimUncleParams *p, guint32 uncle_miner, guint32 main_miner) {
  (void)p;
  return uncle_miner != main_miner;
}

static gboolean none_allowed(const SimUncleParams *p, guint32 uncle_miner, guint32 main_miner) {
  (void)p, (void)uncle_miner, (void)main_miner;
  return FALSE;
}

const SimUncleRule sim_uncle_ethereum = {
    .info = {.name = "ethereum", .family = "uncle_rule",
             .help = "Geth 1.8.23: any valid side block may be referenced",
             .params = uncle_params, .n_params = G_N_ELEMENTS(uncle_params),
             .params_size = sizeof(SimUncleParams), .check = uncle_check},
    .allowed = ethereum_allowed,
};

const SimUncleRule sim_uncle_no_self = {
    .info = {.name = "no-self-uncle", .family = "uncle_rule",
             .help = "as ethereum, but a block may not reference an uncle whose miner already has the "
                     "block at that height on the referencing chain",
             .params = uncle_params, .n_params = G_N_ELEMENTS(uncle_params),
             .params_size = sizeof(SimUncleParams), .check = uncle_check},
    .allowed = no_self_allowed,
};

const SimUncleRule sim_uncle_none = {
    .info = {.name = "none", .family = "uncle_rule", .help = "no uncles (Bitcoin-like): side blocks earn nothing",
             .params = NULL, .n_params = 0, .params_size = sizeof(SimUncleParams)},
    .allowed = none_allowed,
};
