/* delay.c: delay distributions (constant, exponential, lognormal, uniform) and "stack", a base delay plus
 * the one-way time of messages over a messaging stack (models/rdma.h). */
#include "delay.h"

/* No delay a pool, a link or a miner adds is an hour; larger values are typing errors, and days of delay
 * make forks so deep that a run never ends. */
#define DELAY_MAX_MS 3.6e6

#include <gsl/gsl_randist.h>
#include <math.h>

#include "rdma.h"

static SimTime ms_to_ns(double ms) { return sim_time_from_s(ms / 1e3); }

/* ---- constant ---- */
typedef struct {
  double value_ms;
} ConstantParams;

static const SimParamSpec constant_params[] = {
    {.name = "value_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .def = 0,
     .offset = offsetof(ConstantParams, value_ms), .help = "the delay"},
};
static SimTime constant_sample(const void *params, SimRng *rng) {
  (void)rng;
  return ms_to_ns(((const ConstantParams *)params)->value_ms);
}
static double constant_mean(const void *params) { return ((const ConstantParams *)params)->value_ms / 1e3; }

const SimDelayModel sim_delay_constant = {
    .info = {.name = "constant", .family = "delay", .help = "always the same delay",
             .params = constant_params, .n_params = G_N_ELEMENTS(constant_params),
             .params_size = sizeof(ConstantParams)},
    .sample = constant_sample,
    .mean_s = constant_mean,
};

/* ---- exponential ---- */
typedef struct {
  double mean_ms;
} ExponentialParams;

static const SimParamSpec exponential_params[] = {
    {.name = "mean_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .def = 100,
     .offset = offsetof(ExponentialParams, mean_ms), .help = "mean delay"},
};
static SimTime exponential_sample(const void *params, SimRng *rng) {
  return ms_to_ns(sim_rng_exponential(rng, ((const ExponentialParams *)params)->mean_ms));
}
static double exponential_mean(const void *params) {
  return ((const ExponentialParams *)params)->mean_ms / 1e3;
}

const SimDelayModel sim_delay_exponential = {
    .info = {.name = "exponential", .family = "delay", .help = "exponentially distributed delay",
             .params = exponential_params, .n_params = G_N_ELEMENTS(exponential_params),
             .params_size = sizeof(ExponentialParams)},
    .sample = exponential_sample,
    .mean_s = exponential_mean,
};

/* ---- lognormal ---- */
typedef struct {
  double median_ms;
  double sigma;
  double offset_ms;
} LognormalParams;

static const SimParamSpec lognormal_params[] = {
    {.name = "median_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .min_open = TRUE,
     .def = 100, .offset = offsetof(LognormalParams, median_ms),
     .help = "median of the lognormal part (exp(mu))"},
    {.name = "sigma", .type = SIM_PARAM_NUMBER, .unit = "", .min = 0, .max = 10, .def = 1.0,
     .offset = offsetof(LognormalParams, sigma), .help = "shape: standard deviation of log(delay)"},
    {.name = "offset_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .def = 0,
     .offset = offsetof(LognormalParams, offset_ms), .help = "fixed minimum added to every draw"},
};
static SimTime lognormal_sample(const void *params, SimRng *rng) {
  const LognormalParams *p = params;
  double z = gsl_ran_ugaussian(sim_rng_gsl(rng));
  return ms_to_ns(p->offset_ms + p->median_ms * exp(p->sigma * z));
}
static double lognormal_mean(const void *params) {
  const LognormalParams *p = params;
  return (p->offset_ms + p->median_ms * exp(p->sigma * p->sigma / 2)) / 1e3;
}

const SimDelayModel sim_delay_lognormal = {
    .info = {.name = "lognormal", .family = "delay", .help = "offset + lognormal(log(median), sigma)",
             .params = lognormal_params, .n_params = G_N_ELEMENTS(lognormal_params),
             .params_size = sizeof(LognormalParams)},
    .sample = lognormal_sample,
    .mean_s = lognormal_mean,
};

/* ---- uniform ---- */
typedef struct {
  double min_ms;
  double max_ms;
} UniformParams;

static const SimParamSpec uniform_params[] = {
    {.name = "min_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .def = 0,
     .offset = offsetof(UniformParams, min_ms), .help = "smallest delay"},
    {.name = "max_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = DELAY_MAX_MS, .def = 100,
     .offset = offsetof(UniformParams, max_ms), .help = "largest delay (>= min_ms)"},
};
static SimTime uniform_sample(const void *params, SimRng *rng) {
  const UniformParams *p = params;
  return ms_to_ns(p->min_ms + (p->max_ms - p->min_ms) * sim_rng_uniform(rng));
}
static double uniform_mean(const void *params) {
  const UniformParams *p = params;
  return (p->min_ms + p->max_ms) / 2e3;
}
static void uniform_check(const void *params, SimDiag *diag, const char *path) {
  const UniformParams *p = params;
  if (p->max_ms < p->min_ms)
    sim_diag_add(diag, path, "max_ms (%g) must not be below min_ms (%g)", p->max_ms, p->min_ms);
}

const SimDelayModel sim_delay_uniform = {
    .info = {.name = "uniform", .family = "delay", .help = "uniform between min_ms and max_ms",
             .params = uniform_params, .n_params = G_N_ELEMENTS(uniform_params),
             .params_size = sizeof(UniformParams), .check = uniform_check},
    .sample = uniform_sample,
    .mean_s = uniform_mean,
};

/* ---- stack ---- */
typedef struct {
  int64_t bytes;
  int64_t hops;
  SimModelRef base;  /* family "delay" */
  SimModelRef stack; /* family "stack" */
} StackDelayParams;

static const SimParamSpec stack_delay_params[] = {
    {.name = "bytes", .type = SIM_PARAM_INT, .unit = "bytes", .min = 0, .max = 1e9, .def = 256,
     .offset = offsetof(StackDelayParams, bytes),
     .help = "size of one message (a choice: a stratum work notification is a small JSON message, "
             "mining.notify / eth_getWork with three 32-byte hex hashes, ~200-250 bytes)"},
    {.name = "hops", .type = SIM_PARAM_INT, .unit = "", .min = 0, .max = 1000, .def = 1,
     .offset = offsetof(StackDelayParams, hops),
     .help = "stack messages in series on the path (e.g. 2 for gateway -> pool server -> miner proxy)"},
};

static const SimSubmodelSpec stack_delay_submodels[] = {
    {.key = "base", .family = "delay", .default_model = "lognormal", .offset = offsetof(StackDelayParams, base),
     .help = "the software part (pool server, template building, the miners' own network), drawn as usual"},
    {.key = "stack", .family = "stack", .default_model = "tcp", .offset = offsetof(StackDelayParams, stack),
     .help = "the messaging stack each hop uses (sim_stack_message_ns: send CPU + wire + receive CPU)"},
};

/* The stack part: a pure function of the parameters, so a draw costs the base's draw and this. */
static SimTime stack_delay_fixed_ns(const StackDelayParams *p) {
  SimTime one = sim_stack_message_ns(&p->stack, (uint64_t)p->bytes);
  return p->hops * one;
}

static SimTime stack_delay_sample(const void *params, SimRng *rng) {
  const StackDelayParams *p = params;
  return sim_delay_sample(&p->base, rng) + stack_delay_fixed_ns(p);
}

static double stack_delay_mean(const void *params) {
  const StackDelayParams *p = params;
  return sim_delay_mean_s(&p->base) + (double)stack_delay_fixed_ns(p) / 1e9;
}

const SimDelayModel sim_delay_stack = {
    .info = {.name = "stack", .family = "delay",
             .help = "base + hops x the one-way time of one message of `bytes` over a messaging stack (tcp, "
                     "rdma-send, rdma-write, rdma-channel); the base's random draws are unchanged",
             .params = stack_delay_params, .n_params = G_N_ELEMENTS(stack_delay_params),
             .params_size = sizeof(StackDelayParams), .submodels = stack_delay_submodels,
             .n_submodels = G_N_ELEMENTS(stack_delay_submodels)},
    .sample = stack_delay_sample,
    .mean_s = stack_delay_mean,
};
