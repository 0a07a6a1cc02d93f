/* net_jitter.c: the "jitter" model family (none, pareto, lognormal, empirical), the Pareto draw's tables, and
 * one edge's latency draw (net_edge_latency, net_latency_draw_init). */
#include "net.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "params.h" /* sim_fmt_double */

/* ---- none ---- */
static SimTime none_sample(const void *params, SimTime mean_ns, SimRng *rng) {
  (void)params;
  (void)rng;
  return mean_ns;
}

static SimTime none_floor(const void *params, SimTime mean_ns) {
  (void)params;
  return mean_ns;
}

const NetJitterModel net_jitter_none = {
    .info = {.name = "none", .family = "jitter", .help = "no jitter: every message takes the pair mean"},
    .sample = none_sample,
    .floor_ns = none_floor,
};

/* ---- pareto ---- */
typedef struct {
  double floor_ms;
  double shape_per_ms;
} ParetoParams;

/* clang-format off */
static const SimParamSpec pareto_params[] = {
    {.name = "floor_ms",     .type = SIM_PARAM_NUMBER, .unit = "ms",   .min = 0, .max = INFINITY, .def = 5,                     .offset = offsetof(ParetoParams, floor_ms),     .help = "scale = mean - floor_ms (SimBlock: 5)"},
    {.name = "shape_per_ms", .type = SIM_PARAM_NUMBER, .unit = "1/ms", .min = 0, .max = INFINITY, .def = 0.2, .min_open = TRUE, .offset = offsetof(ParetoParams, shape_per_ms), .help = "shape = shape_per_ms x mean in ms (SimBlock: 0.2)"},
};
/* clang-format on */

/* The distribution for pair mean `mean_ns`; FALSE where it is degenerate and the mean itself is used
 * (shape <= 1 has no finite mean and scale <= 0 degenerates to 0: both would distort the pair mean). */
static gboolean pareto_shape(const ParetoParams *p, SimTime mean_ns, double *scale_ms, double *shape) {
  double mean_ms = (double)mean_ns / 1e6;
  *scale_ms = mean_ms - p->floor_ms;
  *shape = p->shape_per_ms * mean_ms;
  return *shape > 1 && *scale_ms > 0;
}

static SimTime pareto_sample(const void *params, SimTime mean_ns, SimRng *rng) {
  double scale_ms, shape;
  if (!pareto_shape(params, mean_ns, &scale_ms, &shape)) return mean_ns;
  double scale_ns, inv_shape;
  net_pareto_factors(scale_ms, shape, &scale_ns, &inv_shape);
  return net_pareto_draw(scale_ns, inv_shape, rng);
}

static SimTime pareto_floor(const void *params, SimTime mean_ns) {
  const ParetoParams *p = params;
  double mean_ms = (double)mean_ns / 1e6;
  double scale_ms = mean_ms - p->floor_ms;
  if (!(p->shape_per_ms * mean_ms > 1) || !(scale_ms > 0)) return mean_ns;
  return (SimTime)floor(scale_ms * 1e6); /* draws are scale x (a factor >= 1), rounded */
}

const NetJitterModel net_jitter_pareto = {
    .info = {.name = "pareto",
             .family = "jitter",
             .help =
                 "SimBlock: scale / U^(1/shape), scale = mean - floor_ms, shape = shape_per_ms x mean(ms); "
                 "the mean itself where shape <= 1",
             .params = pareto_params,
             .n_params = G_N_ELEMENTS(pareto_params),
             .params_size = sizeof(ParetoParams)},
    .sample = pareto_sample,
    .floor_ns = pareto_floor,
};

/* The Pareto draw's tables (net.h), computed with 70 digits (Python's decimal module) and rounded to the
 * nearest double: invc = 1 / (1 + (i + 1/2)/64) (IEEE division of exact operands) and g = 1 + log2(invc) of
 * that rounded invc. tests/test_net.c checks every entry against long double. */
const double net_pareto_invc[NET_PARETO_T] = {
    0x1.fc07f01fc07f0p-1, 0x1.f44659e4a4271p-1, 0x1.ecc07b301ecc0p-1, 0x1.e573ac901e574p-1,
    0x1.de5d6e3f8868ap-1, 0x1.d77b654b82c34p-1, 0x1.d0cb58f6ec074p-1, 0x1.ca4b3055ee191p-1,
    0x1.c3f8f01c3f8f0p-1, 0x1.bdd2b899406f7p-1, 0x1.b7d6c3dda338bp-1, 0x1.b2036406c80d9p-1,
    0x1.ac5701ac5701bp-1, 0x1.a6d01a6d01a6dp-1, 0x1.a16d3f97a4b02p-1, 0x1.9c2d14ee4a102p-1,
    0x1.970e4f80cb872p-1, 0x1.920fb49d0e229p-1, 0x1.8d3018d3018d3p-1, 0x1.886e5f0abb04ap-1,
    0x1.83c977ab2beddp-1, 0x1.7f405fd017f40p-1, 0x1.7ad2208e0ecc3p-1, 0x1.767dce434a9b1p-1,
    0x1.724287f46debcp-1, 0x1.6e1f76b4337c7p-1, 0x1.6a13cd1537290p-1, 0x1.661ec6a5122f9p-1,
    0x1.623fa77016240p-1, 0x1.5e75bb8d015e7p-1, 0x1.5ac056b015ac0p-1, 0x1.571ed3c506b3ap-1,
    0x1.5390948f40febp-1, 0x1.5015015015015p-1, 0x1.4cab88725af6ep-1, 0x1.49539e3b2d067p-1,
    0x1.460cbc7f5cf9ap-1, 0x1.42d6625d51f87p-1, 0x1.3fb013fb013fbp-1, 0x1.3c995a47babe7p-1,
    0x1.3991c2c187f63p-1, 0x1.3698df3de0748p-1, 0x1.33ae45b57bcb2p-1, 0x1.30d190130d190p-1,
    0x1.2e025c04b8097p-1, 0x1.2b404ad012b40p-1, 0x1.288b01288b013p-1, 0x1.25e22708092f1p-1,
    0x1.23456789abcdfp-1, 0x1.20b470c67c0d9p-1, 0x1.1e2ef3b3fb874p-1, 0x1.1bb4a4046ed29p-1,
    0x1.19453808ca29cp-1, 0x1.16e0689427379p-1, 0x1.1485f0e0acd3bp-1, 0x1.12358e75d3033p-1,
    0x1.0fef010fef011p-1, 0x1.0db20a88f4696p-1, 0x1.0b7e6ec259dc8p-1, 0x1.0953f39010954p-1,
    0x1.073260a47f7c6p-1, 0x1.05197f7d73404p-1, 0x1.03091b51f5e1ap-1, 0x1.0101010101010p-1,
};
const double net_pareto_g[NET_PARETO_T] = {
    0x1.fa406bd2443dfp-1, 0x1.eee32e2aeccbep-1, 0x1.e3b20546f5549p-1, 0x1.d8aba045b01c8p-1,
    0x1.cdcebd2373994p-1, 0x1.c31a27dd00b4ap-1, 0x1.b88cb9a2ab521p-1, 0x1.ae255819f022dp-1,
    0x1.a3e2f4ac43f60p-1, 0x1.99c48be2063c8p-1, 0x1.8fc924c89ac84p-1, 0x1.85efd062c656dp-1,
    0x1.7c37a9227e7fcp-1, 0x1.729fd26b707c8p-1, 0x1.6927781d932a9p-1, 0x1.5fcdce2727ddcp-1,
    0x1.5692101d9b4a5p-1, 0x1.4d7380dcc422dp-1, 0x1.44716a2c08262p-1, 0x1.3b8b1c68fa6eep-1,
    0x1.32bfee370ee68p-1, 0x1.2a0f3c340705bp-1, 0x1.217868b0c37e7p-1, 0x1.18fadb6e2d3c2p-1,
    0x1.1096015dee4dap-1, 0x1.08494c66b8ef0p-1, 0x1.0014332be0032p-1, 0x1.efec61b011f85p-2,
    0x1.dfdd89d586e2cp-2, 0x1.cffae611ad12ap-2, 0x1.c043859e2fdb2p-2, 0x1.b0b67f4f46812p-2,
    0x1.a152f142981b5p-2, 0x1.921800924dd3bp-2, 0x1.8304d90c11fd1p-2, 0x1.7418acebbf18fp-2,
    0x1.6552b49986277p-2, 0x1.56b22e6b578e5p-2, 0x1.48365e695d797p-2, 0x1.39de8e1559f6ep-2,
    0x1.2baa0c34be1ebp-2, 0x1.1d982c9d5270ap-2, 0x1.0fa848044b352p-2, 0x1.01d9bbcfa61d4p-2,
    0x1.e857d3d361368p-3, 0x1.cd3c712d31106p-3, 0x1.b2602497d534ap-3, 0x1.97c1cb13c7ec0p-3,
    0x1.7d60496cfbb4cp-3, 0x1.633a8bf437ce6p-3, 0x1.494f863b8df32p-3, 0x1.2f9e32d5bfdd1p-3,
    0x1.162593186da70p-3, 0x1.f9c95dc1d1167p-4, 0x1.c7b528b70f1bcp-4, 0x1.960caf9abb7c1p-4,
    0x1.64ce26c067157p-4, 0x1.33f7cde14cf63p-4, 0x1.0387efbca86a7p-4, 0x1.a6f9c377dd31dp-5,
    0x1.47aa07357703cp-5, 0x1.d23afc49139f1p-6, 0x1.16a21e20a0a29p-6, 0x1.720d9c06a8348p-8,
};

/* The tables of net_neg_log2_uniform() and net_exp2_pos() (net.h), computed with 60 digits (Python's
 * decimal module) and rounded to the nearest double: c is the middle of subinterval i of [0.6875, 1.375)
 * (i < 40: [0.6875 + i/128, + 1/128); else [1 + (i - 40)/64, + 1/64): the split that the bits of
 * z - 0.6875 give), invc = 1/c, log2c = -log2(invc) of that rounded invc, and 2^(j/128).
 * tests/test_net.c checks every entry against long double. */
const NetLog2Entry net_log2_table[NET_LOG2_TABLE_SIZE] = {
    {0x1.724287f46debcp+0, -0x1.1096015dee4dap-1}, {0x1.6e1f76b4337c7p+0, -0x1.08494c66b8ef0p-1},
    {0x1.6a13cd1537290p+0, -0x1.0014332be0032p-1}, {0x1.661ec6a5122f9p+0, -0x1.efec61b011f85p-2},
    {0x1.623fa77016240p+0, -0x1.dfdd89d586e2cp-2}, {0x1.5e75bb8d015e7p+0, -0x1.cffae611ad12ap-2},
    {0x1.5ac056b015ac0p+0, -0x1.c043859e2fdb2p-2}, {0x1.571ed3c506b3ap+0, -0x1.b0b67f4f46812p-2},
    {0x1.5390948f40febp+0, -0x1.a152f142981b5p-2}, {0x1.5015015015015p+0, -0x1.921800924dd3bp-2},
    {0x1.4cab88725af6ep+0, -0x1.8304d90c11fd1p-2}, {0x1.49539e3b2d067p+0, -0x1.7418acebbf18fp-2},
    {0x1.460cbc7f5cf9ap+0, -0x1.6552b49986277p-2}, {0x1.42d6625d51f87p+0, -0x1.56b22e6b578e5p-2},
    {0x1.3fb013fb013fbp+0, -0x1.48365e695d797p-2}, {0x1.3c995a47babe7p+0, -0x1.39de8e1559f6ep-2},
    {0x1.3991c2c187f63p+0, -0x1.2baa0c34be1ebp-2}, {0x1.3698df3de0748p+0, -0x1.1d982c9d5270ap-2},
    {0x1.33ae45b57bcb2p+0, -0x1.0fa848044b352p-2}, {0x1.30d190130d190p+0, -0x1.01d9bbcfa61d4p-2},
    {0x1.2e025c04b8097p+0, -0x1.e857d3d361368p-3}, {0x1.2b404ad012b40p+0, -0x1.cd3c712d31106p-3},
    {0x1.288b01288b013p+0, -0x1.b2602497d534ap-3}, {0x1.25e22708092f1p+0, -0x1.97c1cb13c7ec0p-3},
    {0x1.23456789abcdfp+0, -0x1.7d60496cfbb4cp-3}, {0x1.20b470c67c0d9p+0, -0x1.633a8bf437ce6p-3},
    {0x1.1e2ef3b3fb874p+0, -0x1.494f863b8df32p-3}, {0x1.1bb4a4046ed29p+0, -0x1.2f9e32d5bfdd1p-3},
    {0x1.19453808ca29cp+0, -0x1.162593186da70p-3}, {0x1.16e0689427379p+0, -0x1.f9c95dc1d1167p-4},
    {0x1.1485f0e0acd3bp+0, -0x1.c7b528b70f1bcp-4}, {0x1.12358e75d3033p+0, -0x1.960caf9abb7c1p-4},
    {0x1.0fef010fef011p+0, -0x1.64ce26c067157p-4}, {0x1.0db20a88f4696p+0, -0x1.33f7cde14cf63p-4},
    {0x1.0b7e6ec259dc8p+0, -0x1.0387efbca86a7p-4}, {0x1.0953f39010954p+0, -0x1.a6f9c377dd31dp-5},
    {0x1.073260a47f7c6p+0, -0x1.47aa07357703cp-5}, {0x1.05197f7d73404p+0, -0x1.d23afc49139f1p-6},
    {0x1.03091b51f5e1ap+0, -0x1.16a21e20a0a29p-6}, {0x1.0101010101010p+0, -0x1.720d9c06a8348p-8},
    {0x1.fc07f01fc07f0p-1, 0x1.6fe50b6ef085dp-7},  {0x1.f44659e4a4271p-1, 0x1.11cd1d513341bp-5},
    {0x1.ecc07b301ecc0p-1, 0x1.c4dfab90aab6ap-5},  {0x1.e573ac901e574p-1, 0x1.3aa2fdd27f1bfp-4},
    {0x1.de5d6e3f8868ap-1, 0x1.918a16e46335ep-4},  {0x1.d77b654b82c34p-1, 0x1.e72ec117fa5adp-4},
    {0x1.d0cb58f6ec074p-1, 0x1.1dcd197552b7dp-3},  {0x1.ca4b3055ee191p-1, 0x1.476a9f983f74dp-3},
    {0x1.c3f8f01c3f8f0p-1, 0x1.70742d4ef0280p-3},  {0x1.bdd2b899406f7p-1, 0x1.98edd077e70e1p-3},
    {0x1.b7d6c3dda338bp-1, 0x1.c0db6cdd94defp-3},  {0x1.b2036406c80d9p-1, 0x1.e840be74e6a4dp-3},
    {0x1.ac5701ac5701bp-1, 0x1.0790adbb03009p-2},  {0x1.a6d01a6d01a6dp-1, 0x1.1ac05b291f070p-2},
    {0x1.a16d3f97a4b02p-1, 0x1.2db10fc4d9aaep-2},  {0x1.9c2d14ee4a102p-1, 0x1.406463b1b0448p-2},
    {0x1.970e4f80cb872p-1, 0x1.52dbdfc4c96b5p-2},  {0x1.920fb49d0e229p-1, 0x1.6518fe4677ba6p-2},
    {0x1.8d3018d3018d3p-1, 0x1.771d2ba7efb3cp-2},  {0x1.886e5f0abb04ap-1, 0x1.88e9c72e0b224p-2},
    {0x1.83c977ab2beddp-1, 0x1.9a802391e2330p-2},  {0x1.7f405fd017f40p-1, 0x1.abe18797f1f4ap-2},
    {0x1.7ad2208e0ecc3p-1, 0x1.bd0f2e9e79032p-2},  {0x1.767dce434a9b1p-1, 0x1.ce0a4923a587dp-2},
};
const double net_exp2_table[NET_EXP2_TABLE_SIZE] = {
    0x1.0000000000000p+0, 0x1.0163da9fb3335p+0, 0x1.02c9a3e778061p+0, 0x1.04315e86e7f85p+0,
    0x1.059b0d3158574p+0, 0x1.0706b29ddf6dep+0, 0x1.0874518759bc8p+0, 0x1.09e3ecac6f383p+0,
    0x1.0b5586cf9890fp+0, 0x1.0cc922b7247f7p+0, 0x1.0e3ec32d3d1a2p+0, 0x1.0fb66affed31bp+0,
    0x1.11301d0125b51p+0, 0x1.12abdc06c31ccp+0, 0x1.1429aaea92de0p+0, 0x1.15a98c8a58e51p+0,
    0x1.172b83c7d517bp+0, 0x1.18af9388c8deap+0, 0x1.1a35beb6fcb75p+0, 0x1.1bbe084045cd4p+0,
    0x1.1d4873168b9aap+0, 0x1.1ed5022fcd91dp+0, 0x1.2063b88628cd6p+0, 0x1.21f49917ddc96p+0,
    0x1.2387a6e756238p+0, 0x1.251ce4fb2a63fp+0, 0x1.26b4565e27cddp+0, 0x1.284dfe1f56381p+0,
    0x1.29e9df51fdee1p+0, 0x1.2b87fd0dad990p+0, 0x1.2d285a6e4030bp+0, 0x1.2ecafa93e2f56p+0,
    0x1.306fe0a31b715p+0, 0x1.32170fc4cd831p+0, 0x1.33c08b26416ffp+0, 0x1.356c55f929ff1p+0,
    0x1.371a7373aa9cbp+0, 0x1.38cae6d05d866p+0, 0x1.3a7db34e59ff7p+0, 0x1.3c32dc313a8e5p+0,
    0x1.3dea64c123422p+0, 0x1.3fa4504ac801cp+0, 0x1.4160a21f72e2ap+0, 0x1.431f5d950a897p+0,
    0x1.44e086061892dp+0, 0x1.46a41ed1d0057p+0, 0x1.486a2b5c13cd0p+0, 0x1.4a32af0d7d3dep+0,
    0x1.4bfdad5362a27p+0, 0x1.4dcb299fddd0dp+0, 0x1.4f9b2769d2ca7p+0, 0x1.516daa2cf6642p+0,
    0x1.5342b569d4f82p+0, 0x1.551a4ca5d920fp+0, 0x1.56f4736b527dap+0, 0x1.58d12d497c7fdp+0,
    0x1.5ab07dd485429p+0, 0x1.5c9268a5946b7p+0, 0x1.5e76f15ad2148p+0, 0x1.605e1b976dc09p+0,
    0x1.6247eb03a5585p+0, 0x1.6434634ccc320p+0, 0x1.6623882552225p+0, 0x1.68155d44ca973p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6c012750bdabfp+0, 0x1.6dfb23c651a2fp+0, 0x1.6ff7df9519484p+0,
    0x1.71f75e8ec5f74p+0, 0x1.73f9a48a58174p+0, 0x1.75feb564267c9p+0, 0x1.780694fde5d3fp+0,
    0x1.7a11473eb0187p+0, 0x1.7c1ed0130c132p+0, 0x1.7e2f336cf4e62p+0, 0x1.80427543e1a12p+0,
    0x1.82589994cce13p+0, 0x1.8471a4623c7adp+0, 0x1.868d99b4492edp+0, 0x1.88ac7d98a6699p+0,
    0x1.8ace5422aa0dbp+0, 0x1.8cf3216b5448cp+0, 0x1.8f1ae99157736p+0, 0x1.9145b0b91ffc6p+0,
    0x1.93737b0cdc5e5p+0, 0x1.95a44cbc8520fp+0, 0x1.97d829fde4e50p+0, 0x1.9a0f170ca07bap+0,
    0x1.9c49182a3f090p+0, 0x1.9e86319e32323p+0, 0x1.a0c667b5de565p+0, 0x1.a309bec4a2d33p+0,
    0x1.a5503b23e255dp+0, 0x1.a799e1330b358p+0, 0x1.a9e6b5579fdbfp+0, 0x1.ac36bbfd3f37ap+0,
    0x1.ae89f995ad3adp+0, 0x1.b0e07298db666p+0, 0x1.b33a2b84f15fbp+0, 0x1.b59728de5593ap+0,
    0x1.b7f76f2fb5e47p+0, 0x1.ba5b030a1064ap+0, 0x1.bcc1e904bc1d2p+0, 0x1.bf2c25bd71e09p+0,
    0x1.c199bdd85529cp+0, 0x1.c40ab5fffd07ap+0, 0x1.c67f12e57d14bp+0, 0x1.c8f6d9406e7b5p+0,
    0x1.cb720dcef9069p+0, 0x1.cdf0b555dc3fap+0, 0x1.d072d4a07897cp+0, 0x1.d2f87080d89f2p+0,
    0x1.d5818dcfba487p+0, 0x1.d80e316c98398p+0, 0x1.da9e603db3285p+0, 0x1.dd321f301b460p+0,
    0x1.dfc97337b9b5fp+0, 0x1.e264614f5a129p+0, 0x1.e502ee78b3ff6p+0, 0x1.e7a51fbc74c83p+0,
    0x1.ea4afa2a490dap+0, 0x1.ecf482d8e67f1p+0, 0x1.efa1bee615a27p+0, 0x1.f252b376bba97p+0,
    0x1.f50765b6e4540p+0, 0x1.f7bfdad9cbe14p+0, 0x1.fa7c1819e90d8p+0, 0x1.fd3c22b8f71f1p+0,
};

/* ---- lognormal ---- */
typedef struct {
  double sigma;
} LognormalJitterParams;

/* clang-format off */
static const SimParamSpec lognormal_params[] = {
    {.name = "sigma", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = 10, .def = 0.3, .offset = offsetof(LognormalJitterParams, sigma), .help = "standard deviation of log(latency)"},
};
/* clang-format on */

static SimTime lognormal_sample(const void *params, SimTime mean_ns, SimRng *rng) {
  const LognormalJitterParams *p = params;
  if (mean_ns <= 0) return 0;
  double z = gsl_ran_ugaussian(sim_rng_gsl(rng));
  return sim_time_from_s((double)mean_ns / 1e9 * exp(p->sigma * z - p->sigma * p->sigma / 2));
}

static SimTime zero_floor(const void *params, SimTime mean_ns) {
  (void)params, (void)mean_ns;
  return 0;
}

const NetJitterModel net_jitter_lognormal = {
    .info = {.name = "lognormal",
             .family = "jitter",
             .help = "lognormal with the pair mean: mu = ln(mean) - sigma^2/2",
             .params = lognormal_params,
             .n_params = G_N_ELEMENTS(lognormal_params),
             .params_size = sizeof(LognormalJitterParams)},
    .sample = lognormal_sample,
    .floor_ns = zero_floor,
};

/* ---- empirical ---- */
typedef struct {
  double p10_factor;
  double p50_factor;
  double p90_factor;
  double p99_factor;
} EmpiricalParams;

/* clang-format off */
static const SimParamSpec empirical_params[] = {
    {.name = "p10_factor", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = INFINITY, .def = 0.8, .offset = offsetof(EmpiricalParams, p10_factor), .help = "10th percentile of latency / pair mean"},
    {.name = "p50_factor", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = INFINITY, .def = 1.0, .offset = offsetof(EmpiricalParams, p50_factor), .help = "median of latency / pair mean"},
    {.name = "p90_factor", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = INFINITY, .def = 1.5, .offset = offsetof(EmpiricalParams, p90_factor), .help = "90th percentile of latency / pair mean"},
    {.name = "p99_factor", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = INFINITY, .def = 3.0, .offset = offsetof(EmpiricalParams, p99_factor), .help = "99th percentile of latency / pair mean"},
};
/* clang-format on */

#define EMPIRICAL_POINTS 6
static void empirical_points(const EmpiricalParams *p, double q[EMPIRICAL_POINTS],
                             double f[EMPIRICAL_POINTS]) {
  static const double qs[EMPIRICAL_POINTS] = {0, 0.1, 0.5, 0.9, 0.99, 1};
  memcpy(q, qs, sizeof qs);
  f[0] = 0.5 * p->p10_factor;
  f[1] = p->p10_factor;
  f[2] = p->p50_factor;
  f[3] = p->p90_factor;
  f[4] = p->p99_factor;
  f[5] = 1.5 * p->p99_factor;
}

static SimTime empirical_sample(const void *params, SimTime mean_ns, SimRng *rng) {
  double q[EMPIRICAL_POINTS], f[EMPIRICAL_POINTS];
  empirical_points(params, q, f);
  double u = sim_rng_uniform(rng);
  guint i = 0;
  while (i + 2 < EMPIRICAL_POINTS && u >= q[i + 1])
    i++;
  double factor = f[i] + (f[i + 1] - f[i]) * (u - q[i]) / (q[i + 1] - q[i]);
  return sim_time_from_s((double)mean_ns / 1e9 * factor);
}

static SimTime empirical_floor(const void *params, SimTime mean_ns) {
  double q[EMPIRICAL_POINTS], f[EMPIRICAL_POINTS];
  empirical_points(params, q, f);
  return (SimTime)floor((double)mean_ns * MIN(f[0], f[1]) * (1 - 1e-12));
}

static void empirical_check(const void *params, SimDiag *diag, const char *path) {
  const EmpiricalParams *p = params;
  if (p->p10_factor > p->p50_factor || p->p50_factor > p->p90_factor || p->p90_factor > p->p99_factor) {
    g_autofree char *a = sim_fmt_double(p->p10_factor), *b = sim_fmt_double(p->p50_factor);
    g_autofree char *c = sim_fmt_double(p->p90_factor), *d = sim_fmt_double(p->p99_factor);
    sim_diag_add(diag, path,
                 "p10_factor, p50_factor, p90_factor, p99_factor must be non-decreasing (got %s, %s, %s, %s)",
                 a, b, c, d);
  }
}

const NetJitterModel net_jitter_empirical = {
    .info = {.name = "empirical",
             .family = "jitter",
             .help = "pair mean x a factor interpolated from its percentiles (0: 0.5 p10, 1: 1.5 p99)",
             .params = empirical_params,
             .n_params = G_N_ELEMENTS(empirical_params),
             .params_size = sizeof(EmpiricalParams),
             .check = empirical_check},
    .sample = empirical_sample,
    .floor_ns = empirical_floor,
};

/* ---- One edge's latency ---- */

SimTime net_edge_latency(const NetGeoParams *p, const NetTopology *t, guint64 e, SimRng *rng) {
  SimTime mean = t->lat_mean_ns[e];
  if (!p->jitter.model) return mean;
  SimTime host = t->lat_host_ns ? t->lat_host_ns[e] : 0;
  SimTime x = net_jitter_sample(&p->jitter, mean - host, rng);
  return (x < 0 ? 0 : sim_duration_clamp(x)) + host;
}

void net_latency_draw_init(NetLatencyDraw *d, const NetGeoParams *p, SimTime mean_ns, SimTime host_ns) {
  memset(d, 0, sizeof *d);
  SimTime wire = mean_ns - host_ns;
  d->mean_ns = wire;
  d->host_ns = host_ns;
  if (!p->jitter.model) { /* net_edge_latency() returns the mean as it is */
    d->kind = NET_DRAW_FIXED;
    d->fixed_ns = mean_ns;
    return;
  }
  const NetJitterModel *m = (const NetJitterModel *)p->jitter.model;
  if (m == &net_jitter_none) {
    d->kind = NET_DRAW_FIXED;
    d->fixed_ns = (wire < 0 ? 0 : wire) + host_ns;
    return;
  }
  if (m == &net_jitter_pareto) { /* pareto_sample() split in two */
    if (!pareto_shape(p->jitter.params, wire, &d->scale_ms, &d->shape)) {
      d->kind = NET_DRAW_FIXED;
      d->fixed_ns = (wire < 0 ? 0 : wire) + host_ns;
      return;
    }
    d->kind = NET_DRAW_PARETO;
    net_pareto_factors(d->scale_ms, d->shape, &d->scale_ns, &d->inv_shape);
    net_pareto_table_init(&d->pareto, d->scale_ns, d->inv_shape);
    return;
  }
  d->kind = NET_DRAW_MODEL;
  d->model = m;
  d->params = p->jitter.params;
}
