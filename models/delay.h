/* delay.h: the "delay" model family: distributions of a non-negative delay (message latency, jitter,
 * work-distribution delay), sampled from an entity's own RNG stream. */
#pragma once

#include "engine.h"
#include "params.h"

G_BEGIN_DECLS

typedef struct {
  SimModelInfo info;
  /* One draw, in nanoseconds, >= 0 (sim_delay_sample() caps it at SIM_DURATION_MAX). */
  SimTime (*sample)(const void *params, SimRng *rng);
  /* The distribution's mean in seconds (for reports and checks). */
  double (*mean_s)(const void *params);
} SimDelayModel;

extern const SimDelayModel sim_delay_constant;
extern const SimDelayModel sim_delay_exponential;
extern const SimDelayModel sim_delay_lognormal;
extern const SimDelayModel sim_delay_uniform;
/* "stack": a draw of the submodel `base` (a delay) plus `hops` x sim_stack_message_ns(`stack`, `bytes`), the
 * one-way time of one message over a messaging stack of models/rdma.h (send CPU + wire + receive CPU, on
 * idle hosts). It consumes exactly the base's random numbers, so swapping a delay for a "stack" around it
 * changes no other draw of a run. For a pool's work distribution (network.stratum): the notifications
 * are small JSON messages and the pool software dominates, so the stack adds microseconds (tcp about
 * 10 us per hop at 256 bytes, rdma-channel about 1 us) to a base of hundreds of milliseconds. */
extern const SimDelayModel sim_delay_stack;

static inline SimTime sim_delay_sample(const SimModelRef *ref, SimRng *rng) {
  return sim_duration_clamp(((const SimDelayModel *)ref->model)->sample(ref->params, rng));
}
static inline double sim_delay_mean_s(const SimModelRef *ref) {
  return ((const SimDelayModel *)ref->model)->mean_s(ref->params);
}

G_END_DECLS
