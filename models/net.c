/* net.c: the geographic network substrate: jitter models, geo tables parsing, topology building. */
#include "net.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rdma.h"
#include "sync.h"

GQuark net_error_quark(void) {
  return g_quark_from_static_string("net-error-quark");
}

static SimTime ms_to_ns(double ms) {
  return sim_duration_clamp(sim_time_from_s(ms / 1e3));
}

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

/* ======================================================================================================
 * The "jitter" family
 * ====================================================================================================== */

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

static const SimParamSpec pareto_params[] = {
    {.name = "floor_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "ms",
     .min = 0,
     .max = INFINITY,
     .def = 5,
     .offset = offsetof(ParetoParams, floor_ms),
     .help = "scale = mean - floor_ms (SimBlock: 5)"},
    {.name = "shape_per_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "1/ms",
     .min = 0,
     .max = INFINITY,
     .min_open = TRUE,
     .def = 0.2,
     .offset = offsetof(ParetoParams, shape_per_ms),
     .help = "shape = shape_per_ms x mean in ms (SimBlock: 0.2)"},
};

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

static const SimParamSpec lognormal_params[] = {
    {.name = "sigma",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = 10,
     .def = 0.3,
     .offset = offsetof(LognormalJitterParams, sigma),
     .help = "standard deviation of log(latency)"},
};

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

static const SimParamSpec empirical_params[] = {
    {.name = "p10_factor",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = INFINITY,
     .def = 0.8,
     .offset = offsetof(EmpiricalParams, p10_factor),
     .help = "10th percentile of latency / pair mean"},
    {.name = "p50_factor",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = INFINITY,
     .def = 1.0,
     .offset = offsetof(EmpiricalParams, p50_factor),
     .help = "median of latency / pair mean"},
    {.name = "p90_factor",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = INFINITY,
     .def = 1.5,
     .offset = offsetof(EmpiricalParams, p90_factor),
     .help = "90th percentile of latency / pair mean"},
    {.name = "p99_factor",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = INFINITY,
     .def = 3.0,
     .offset = offsetof(EmpiricalParams, p99_factor),
     .help = "99th percentile of latency / pair mean"},
};

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
    g_autofree char *a = fmt_num(p->p10_factor), *b = fmt_num(p->p50_factor);
    g_autofree char *c = fmt_num(p->p90_factor), *d = fmt_num(p->p99_factor);
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

/* ======================================================================================================
 * Geo parameters
 * ====================================================================================================== */

const SimParamSpec net_geo_param_specs[] = {
    {.name = "nodes",
     .type = SIM_PARAM_INT,
     .unit = "",
     .min = 1,
     .max = 1e6,
     .def = 4000,
     .offset = offsetof(NetGeoParams, nodes),
     .help = "ordinary (home) nodes"},
    {.name = "out_peers",
     .type = SIM_PARAM_INT,
     .unit = "",
     .min = 1,
     .max = 1000,
     .def = 8,
     .offset = offsetof(NetGeoParams, out_peers),
     .help = "peers each ordinary node dials (Geth 1.8.23: max_peers / 3)"},
    {.name = "max_peers",
     .type = SIM_PARAM_INT,
     .unit = "",
     .min = 1,
     .max = 100000,
     .def = 25,
     .offset = offsetof(NetGeoParams, max_peers),
     .help = "links an ordinary node accepts from ordinary nodes and vantage points (Geth default 25)"},
    {.name = "geo_bias",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = 1,
     .def = 0.5,
     .offset = offsetof(NetGeoParams, geo_bias),
     .help = "probability that a dial picks a node of the dialler's own region (else any node)"},
    {.name = "dc_upload_bps",
     .type = SIM_PARAM_NUMBER,
     .unit = "bit/s",
     .min = 0,
     .max = INFINITY,
     .min_open = TRUE,
     .def = 1e9,
     .offset = offsetof(NetGeoParams, dc_upload_bps),
     .help = "upload bandwidth of data-centre nodes (vantage points, gateways)"},
    {.name = "dc_download_bps",
     .type = SIM_PARAM_NUMBER,
     .unit = "bit/s",
     .min = 0,
     .max = INFINITY,
     .min_open = TRUE,
     .def = 1e9,
     .offset = offsetof(NetGeoParams, dc_download_bps),
     .help = "download bandwidth of data-centre nodes"},
    {.name = "gateway_peers",
     .type = SIM_PARAM_INT,
     .unit = "",
     .min = 1,
     .max = 100000,
     .def = 50,
     .offset = offsetof(NetGeoParams, gateway_peers),
     .help = "ordinary nodes a pool gateway dials when its entry gives no \"peers\""},
    {.name = "gateway_mesh",
     .type = SIM_PARAM_BOOL,
     .def = 1,
     .offset = offsetof(NetGeoParams, gateway_mesh),
     .help =
         "pools peer with each other: every two gateways of different pools are linked (latency from their "
         "cities); false: only gateways in the same city"},
    {.name = "inter_region_bps",
     .type = SIM_PARAM_NUMBER,
     .unit = "bit/s",
     .min = 0,
     .max = INFINITY,
     .def = 0,
     .offset = offsetof(NetGeoParams, inter_region_bps),
     .help = "cap on the bandwidth of links between two different regions; 0: none (SimBlock: 6e6)"},
    {.name = "dc_stack",
     .type = SIM_PARAM_ENUM,
     .def_str = "none",
     .choices = net_dc_stack_names,
     .offset = offsetof(NetGeoParams, dc_stack),
     .help =
         "messaging stack between two data-centre nodes (the gateway mesh): each message there also "
         "pays the stack's host overheads o_s + o_r (tcp 5 us, rdma-channel 0.16 us); none: nothing added"},
};
G_STATIC_ASSERT(G_N_ELEMENTS(net_geo_param_specs) == NET_GEO_N_PARAMS);
const guint net_geo_n_param_specs = G_N_ELEMENTS(net_geo_param_specs);

/* The test suite checks these two lists against sim_stack_models() and sim_sync_machine_classes(). */
const char *const net_dc_stack_names[] = {"none", "tcp", "rdma-send", "rdma-write", "rdma-channel", NULL};
const char *const net_joining_machine_names[] = {"high-end", "mid-end", "old-spec", NULL};

const SimParamSpec net_geo_joining_specs[] = {
    {.name = "share",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = 1,
     .required = TRUE,
     .offset = offsetof(NetJoining, share),
     .help = "share of the ordinary nodes that join during the run (round(share x nodes) of them)"},
    {.name = "window_s",
     .type = SIM_PARAM_NUMBER,
     .unit = "s",
     .min = 0,
     .max = 1e9,
     .required = TRUE,
     .offset = offsetof(NetJoining, window_s),
     .help = "join times are uniform in [0, window_s] of simulated time"},
    {.name = "machine",
     .type = SIM_PARAM_ENUM,
     .def_str = "mid-end",
     .choices = net_joining_machine_names,
     .offset = offsetof(NetJoining, machine),
     .help = "machine class of the joining nodes (sim sync): a node is unavailable until join + its snap "
             "sync time to the head (high-end 127 min, mid-end 355, old-spec 300)"},
};
const guint net_geo_n_joining_specs = G_N_ELEMENTS(net_geo_joining_specs);

const SimSubmodelSpec net_geo_submodels[] = {
    {.key = "jitter",
     .family = "jitter",
     .default_model = "pareto",
     .offset = offsetof(NetGeoParams, jitter),
     .help = "spread of one message's latency around its pair mean"},
    {.key = "relay",
     .family = "relay",
     .default_model = "geth-1.8.23",
     .offset = offsetof(NetGeoParams, relay),
     .help = "block relay protocol of the nodes"},
    {.key = "stratum",
     .family = "delay",
     .default_model = "lognormal",
     .offset = offsetof(NetGeoParams, stratum),
     .help = "work distribution: a pool gateway's new head -> its miners working on it"},
};
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
    g_autofree char *got = fmt_num(d);
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
  if (!json_is_array(v)) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %s)", n, n, sim_json_kind(v));
    return FALSE;
  }
  if (json_array_size(v) != n) {
    sim_diag_add(diag, path, "must be a %ux%u matrix (got %zu rows)", n, n, json_array_size(v));
    return FALSE;
  }
  /* Shape problems are reported, and the entries that exist are still checked, all in one pass. */
  gboolean ok = TRUE;
  for (guint i = 0; i < n; i++) {
    json_t *row = json_array_get(v, i);
    if (!json_is_array(row)) {
      sim_diag_add(diag, path, "must be a %ux%u matrix (row %u is %s %s)", n, n, i,
                   strchr("aeiou", sim_json_kind(row)[0]) ? "an" : "a", sim_json_kind(row));
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
  g_autofree char *got = fmt_num(d);
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
    g_autofree char *got = fmt_num(cdf[i]);
    if (cdf[i] > 1) {
      sim_diag_add(diag, ip, "must be <= 1 (got %s)", got);
      ok = FALSE;
    } else if (i > 0 && cdf[i] < cdf[i - 1]) {
      g_autofree char *prev = fmt_num(cdf[i - 1]);
      sim_diag_add(diag, ip,
                   "must not be below the entry before it (a CDF is non-decreasing; got %s after %s)", got,
                   prev);
      ok = FALSE;
    }
  }
  if (cdf[NET_OUT_DEGREE_MAX - 1] != 1) {
    g_autofree char *ip = index_path(path, NET_OUT_DEGREE_MAX - 1);
    g_autofree char *got = fmt_num(cdf[NET_OUT_DEGREE_MAX - 1]);
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

/* ======================================================================================================
 * Topology
 * ====================================================================================================== */

/* Growable neighbour list of one node while the graph is built. */
typedef struct {
  guint32 *v;
  guint32 len, cap;
} NbrList;

static gboolean is_linked(const NbrList *l, guint32 a, guint32 b) {
  const NbrList *s = l[a].len <= l[b].len ? &l[a] : &l[b];
  guint32 other = s == &l[a] ? b : a;
  for (guint32 i = 0; i < s->len; i++)
    if (s->v[i] == other) return TRUE;
  return FALSE;
}

static void nbr_push(NbrList *l, guint32 v) {
  if (l->len == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 8;
    l->v = g_renew(guint32, l->v, l->cap);
  }
  l->v[l->len++] = v;
}

static void add_link(NbrList *l, guint32 a, guint32 b) {
  nbr_push(&l[a], b);
  nbr_push(&l[b], a);
}

static int cmp_u32(const void *a, const void *b) {
  guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
  return (x > y) - (x < y);
}

void net_topology_free(NetTopology *t) {
  if (!t) return;
  g_free(t->region);
  g_free(t->city);
  g_free(t->cls);
  g_free(t->up_bps);
  g_free(t->down_bps);
  g_free(t->adj_off);
  g_free(t->adj);
  g_free(t->rev);
  g_free(t->lat_mean_ns);
  g_free(t->lat_floor_ns);
  g_free(t->tx_ns_per_byte);
  g_free(t->out_links);
  g_free(t->lat_host_ns);
  g_free(t->join_node);
  g_free(t->join_avail_ns);
  g_free(t);
}

typedef struct {
  SimTime avail_ns;
  guint32 node;
} JoinEntry;

static int cmp_join(const void *a, const void *b) {
  const JoinEntry *x = a, *y = b;
  if (x->avail_ns != y->avail_ns) return x->avail_ns < y->avail_ns ? -1 : 1;
  return (x->node > y->node) - (x->node < y->node);
}

void net_topology_set_joining(NetTopology *t, const guint32 *nodes, const SimTime *avail_ns, guint32 n) {
  g_return_if_fail(t != NULL && (n == 0 || (nodes != NULL && avail_ns != NULL)));
  g_clear_pointer(&t->join_node, g_free);
  g_clear_pointer(&t->join_avail_ns, g_free);
  t->n_joining = 0;
  if (n == 0) return;
  g_autofree JoinEntry *e = g_new(JoinEntry, n);
  for (guint32 i = 0; i < n; i++) {
    g_return_if_fail(nodes[i] < t->n_nodes);
    e[i] = (JoinEntry){.avail_ns = avail_ns[i], .node = nodes[i]};
  }
  qsort(e, n, sizeof *e, cmp_join);
  t->join_node = g_new(guint32, n);
  t->join_avail_ns = g_new(SimTime, n);
  for (guint32 i = 0; i < n; i++) {
    t->join_node[i] = e[i].node;
    t->join_avail_ns[i] = e[i].avail_ns;
  }
  t->n_joining = n;
}

/* The joining ordinary nodes of p->joining (see net_topology_build()). */
static void build_joining(const NetGeoParams *p, NetTopology *t, uint64_t seed) {
  const guint32 S = t->n_special, N = t->n_nodes - t->n_special;
  guint32 k = (guint32)llround(p->joining.share * (double)N);
  if (k == 0) return;
  SimTime sync_ns =
      sim_sync_class_duration(net_joining_machine_names[p->joining.machine], SIM_SYNC_TARGET_HEAD);
  g_return_if_fail(sync_ns >= 0);
  SimRng rng;
  sim_rng_init(&rng, seed, SIM_RNG_SETUP_BASE + 2);
  g_autofree guint32 *ids = g_new(guint32, N);
  for (guint32 i = 0; i < N; i++)
    ids[i] = S + i;
  g_autofree SimTime *avail = g_new(SimTime, k);
  for (guint32 i = 0; i < k; i++) {
    guint32 j = i + (guint32)sim_rng_below(&rng, (uint64_t)(N - i));
    guint32 tmp = ids[i];
    ids[i] = ids[j];
    ids[j] = tmp;
    avail[i] = sim_time_from_s(p->joining.window_s * sim_rng_uniform(&rng)) + sync_ns;
  }
  net_topology_set_joining(t, ids, avail, k);
}

/* Exact ordinary-node counts per region: largest-remainder rounding of nodes x share. */
static void region_counts(const NetGeoParams *p, guint32 n, guint32 *count) {
  g_autofree double *frac = g_new(double, p->n_regions);
  guint32 given = 0;
  for (guint r = 0; r < p->n_regions; r++) {
    double quota = (double)n * p->node_share[r];
    count[r] = (guint32)floor(quota);
    frac[r] = quota - count[r];
    given += count[r];
  }
  /* The quotas sum to n up to rounding, so few regions get one more; shares of 0 never do. */
  while (given < n) {
    guint best = G_MAXUINT;
    for (guint r = 0; r < p->n_regions; r++)
      if (p->node_share[r] > 0 && frac[r] >= 0 && (best == G_MAXUINT || frac[r] > frac[best])) best = r;
    if (best == G_MAXUINT) break;
    count[best]++;
    frac[best] = -1;
    given++;
  }
  /* Cannot happen with shares normalised to 1, but never leave nodes without a region. */
  for (guint r = 0; given < n; r = (r + 1) % p->n_regions)
    if (p->node_share[r] > 0 || r == p->n_regions - 1) count[r]++, given++;
}

NetTopology *net_topology_build(const NetGeoParams *p, uint64_t seed, GError **error) {
  g_return_val_if_fail(p != NULL && p->n_regions > 0 && p->node_share && p->latency_ms, NULL);
  g_return_val_if_fail(p->nodes >= 1 && p->nodes <= UINT32_MAX / 2, NULL);
  g_return_val_if_fail(error == NULL || *error == NULL, NULL);

  const guint32 S = p->n_specials, N = (guint32)p->nodes, n = S + N;
  const guint R = p->n_regions;
  SimRng rng;
  sim_rng_init(&rng, seed, SIM_RNG_SETUP_BASE + 1);

  g_autoptr(NetTopology) t = g_new0(NetTopology, 1);
  t->n_nodes = n;
  t->n_special = S;
  t->seed = seed;
  t->inter_region_bps = p->inter_region_bps;
  t->out_links = g_new0(guint32, n);
  t->region = g_new(guint16, n);
  t->city = g_new(guint16, n);
  t->cls = g_new(guint8, n);
  t->up_bps = g_new(double, n);
  t->down_bps = g_new(double, n);

  for (guint32 s = 0; s < S; s++) {
    t->region[s] = p->specials[s].region;
    t->city[s] = p->specials[s].city;
    t->cls[s] = NET_CLASS_DATACENTER;
    t->up_bps[s] = p->dc_upload_bps;
    t->down_bps[s] = p->dc_download_bps;
  }

  /* Regions of ordinary nodes: exact counts, shuffled (Fisher-Yates). */
  g_autofree guint32 *count = g_new0(guint32, R);
  region_counts(p, N, count);
  g_autofree guint16 *label = g_new(guint16, N);
  for (guint r = 0, k = 0; r < R; r++)
    for (guint32 c = 0; c < count[r]; c++)
      label[k++] = (guint16)r;
  for (guint32 i = N - 1; i > 0; i--) {
    guint32 j = (guint32)sim_rng_below(&rng, (uint64_t)i + 1);
    guint16 tmp = label[i];
    label[i] = label[j];
    label[j] = tmp;
  }
  for (guint32 i = 0; i < N; i++) {
    guint32 u = S + i;
    t->region[u] = label[i];
    t->city[u] = NET_NO_CITY;
    t->cls[u] = NET_CLASS_HOME;
    t->up_bps[u] = p->upload_bps[label[i]];
    t->down_bps[u] = p->download_bps[label[i]];
  }

  /* Candidate pools: ordinary nodes per region (pool_off by region) and all ordinary nodes. */
  g_autofree guint32 *pool_off = g_new0(guint32, R + 1);
  for (guint r = 0; r < R; r++)
    pool_off[r + 1] = pool_off[r] + count[r];
  g_autofree guint32 *region_pool = g_new(guint32, N);
  g_autofree guint32 *all_pool = g_new(guint32, N);
  {
    g_autofree guint32 *fill = g_memdup2(pool_off, sizeof(guint32) * R);
    for (guint32 i = 0; i < N; i++) {
      region_pool[fill[label[i]]++] = S + i;
      all_pool[i] = S + i;
    }
  }

  NbrList *lists = g_new0(NbrList, n);
  const guint32 max_peers = (guint32)MIN(p->max_peers, (int64_t)UINT32_MAX);
  const guint32 out_peers = (guint32)p->out_peers;

  /* Ordinary dials, in node order. */
  for (guint32 u = S; u < n; u++) {
    guint r = t->region[u];
    guint32 rn = count[r];
    const guint32 *rp = region_pool + pool_off[r];
    guint32 dials = out_peers;
    if (p->out_degree_cdf) { /* inverse CDF; no draw without the table, so the default stream is unchanged */
      double x = sim_rng_uniform(&rng);
      dials = NET_OUT_DEGREE_MAX;
      for (guint k = 0; k < NET_OUT_DEGREE_MAX; k++)
        if (x < p->out_degree_cdf[k]) {
          dials = k + 1;
          break;
        }
    }
    for (guint32 d = 0; d < dials && lists[u].len < max_peers; d++) {
      for (guint tries = 0; tries < NET_DIAL_TRIES; tries++) {
        gboolean local = sim_rng_uniform(&rng) < p->geo_bias;
        guint32 v = local ? rp[sim_rng_below(&rng, rn)] : S + (guint32)sim_rng_below(&rng, N);
        if (v == u || lists[v].len >= max_peers || is_linked(lists, u, v)) continue;
        add_link(lists, u, v);
        t->out_links[u]++;
        break;
      }
    }
  }

  /* Specials: draws without replacement from the two pools (swap-remove; the pools' order after one
   * special is a fine starting point for the next, and it depends only on the seed). A refused candidate
   * stays refused for this special (links and degrees only grow), so removing it is exact. */
  for (guint32 s = 0; s < S; s++) {
    const NetSpecial *sp = &p->specials[s];
    gboolean capped = sp->role != NET_ROLE_GATEWAY;
    guint32 want = MIN(sp->peers, N), got = 0;
    guint r = sp->region < R ? sp->region : 0;
    guint32 *rp = region_pool + pool_off[r];
    guint32 rn = count[r], an = N;
    while (got < want && (rn > 0 || an > 0)) {
      gboolean local = sim_rng_uniform(&rng) < p->geo_bias;
      guint32 *pool = (local && rn > 0) || an == 0 ? rp : all_pool;
      guint32 *len = pool == rp ? &rn : &an;
      guint32 k = (guint32)sim_rng_below(&rng, *len);
      guint32 v = pool[k];
      pool[k] = pool[*len - 1];
      pool[*len - 1] = v;
      (*len)--;
      if ((capped && lists[v].len >= max_peers) || is_linked(lists, s, v)) continue;
      add_link(lists, s, v);
      t->out_links[s]++;
      got++;
    }
  }

  /* Gateways of different pools: all of them (gateway_mesh), or those in the same city. */
  for (guint32 a = p->n_vantages; a < S; a++)
    for (guint32 b = a + 1; b < S; b++) {
      const NetSpecial *x = &p->specials[a], *y = &p->specials[b];
      if (x->pool == y->pool) continue;
      if (p->gateway_mesh || (x->city != NET_NO_CITY && x->city == y->city)) add_link(lists, a, b);
    }

  GError *err = NULL;
  guint64 n_edges = 0;
  for (guint32 u = 0; u < n; u++)
    n_edges += lists[u].len;
  for (guint32 s = 0; s < S && !err; s++)
    if (lists[s].len == 0)
      g_set_error(&err, NET_ERROR, NET_ERROR_TOPOLOGY,
                  "%s \"%s\" found no peer (every ordinary node already has max_peers = %u links)",
                  p->specials[s].role == NET_ROLE_GATEWAY ? "gateway" : "vantage point", p->specials[s].name,
                  max_peers);
  if (!err && n_edges > UINT32_MAX)
    g_set_error(&err, NET_ERROR, NET_ERROR_TOPOLOGY, "too many links (%" G_GUINT64_FORMAT " directed edges)",
                n_edges);
  if (err) {
    for (guint32 u = 0; u < n; u++)
      g_free(lists[u].v);
    g_free(lists);
    g_propagate_error(error, err);
    return NULL;
  }

  /* CSR, neighbours sorted. */
  t->n_edges = n_edges;
  t->adj_off = g_new(guint32, n + 1);
  t->adj = g_new(guint32, MAX(n_edges, 1));
  t->rev = g_new(guint32, MAX(n_edges, 1));
  t->lat_mean_ns = g_new(SimTime, MAX(n_edges, 1));
  t->lat_floor_ns = g_new(SimTime, MAX(n_edges, 1));
  t->tx_ns_per_byte = g_new(double, MAX(n_edges, 1));
  t->adj_off[0] = 0;
  for (guint32 u = 0; u < n; u++) {
    guint32 off = t->adj_off[u];
    if (lists[u].len) memcpy(t->adj + off, lists[u].v, lists[u].len * sizeof(guint32));
    qsort(t->adj + off, lists[u].len, sizeof(guint32), cmp_u32);
    t->adj_off[u + 1] = off + lists[u].len;
    g_free(lists[u].v);
  }
  g_free(lists);

  for (guint32 u = 0; u < n; u++)
    for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
      guint32 v = t->adj[e];
      const guint32 *base = t->adj + t->adj_off[v];
      const guint32 *hit = bsearch(&u, base, t->adj_off[v + 1] - t->adj_off[v], sizeof(guint32), cmp_u32);
      g_assert(hit != NULL);
      t->rev[e] = t->adj_off[v] + (guint32)(hit - base);
      double ms = NAN;
      guint16 cu = t->city[u], cv = t->city[v];
      if (cu != NET_NO_CITY && cv != NET_NO_CITY) ms = p->city_rtt_ms[(gsize)cu * p->n_cities + cv] / 2;
      if (isnan(ms)) ms = p->latency_ms[(gsize)t->region[u] * R + t->region[v]];
      t->lat_mean_ns[e] = ms_to_ns(ms);
      t->lat_floor_ns[e] =
          p->jitter.model ? ((const NetJitterModel *)p->jitter.model)->floor_ns(p->jitter.params, t->lat_mean_ns[e])
                          : t->lat_mean_ns[e];
      double bps = MIN(t->up_bps[u], t->down_bps[v]);
      if (t->inter_region_bps > 0 && t->region[u] != t->region[v]) bps = MIN(bps, t->inter_region_bps);
      t->tx_ns_per_byte[e] = 8e9 / bps;
    }

  /* Host overheads of the data-centre stack: folded into the edges' means and floors here, so that the
   * relay's link classes carry them and its loop has nothing to test. */
  if (p->dc_stack != NET_DC_STACK_NONE) {
    SimTime host = sim_stack_host_overhead_ns_by_name(net_dc_stack_names[p->dc_stack]);
    g_return_val_if_fail(host >= 0, NULL);
    t->lat_host_ns = g_new0(SimTime, MAX(n_edges, 1));
    for (guint32 u = 0; u < n; u++)
      for (guint32 e = t->adj_off[u]; e < t->adj_off[u + 1]; e++) {
        if (t->cls[u] != NET_CLASS_DATACENTER || t->cls[t->adj[e]] != NET_CLASS_DATACENTER) continue;
        t->lat_host_ns[e] = host;
        t->lat_mean_ns[e] += host;
        t->lat_floor_ns[e] += host;
      }
  }
  if (p->joining.share > 0) build_joining(p, t, seed);
  return g_steal_pointer(&t);
}

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

SimTime net_transfer_ns(const NetTopology *t, guint32 u, guint32 v, double bytes) {
  double bps = MIN(t->up_bps[u], t->down_bps[v]);
  if (t->inter_region_bps > 0 && t->region[u] != t->region[v]) bps = MIN(bps, t->inter_region_bps);
  double ns = bytes * 8e9 / bps;
  return ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
}
