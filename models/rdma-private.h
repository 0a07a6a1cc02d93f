/* rdma-private.h: what the parts of the stacks and the ordering service (rdma.c, bft.c, rdma_rubin.c,
 * rdma_machine.c) share. Private to the models library. */
#pragma once

#include <math.h>

#include "rdma.h"

G_BEGIN_DECLS

/* ConnectX-4's figures (ib_send_lat, docs/perf-rdma.md): the built-in RDMA stacks' defaults, and the source of
 * Rubin's NIC constants (rdma_rubin.c). */
#define CX4_G 0.08
#define CX4_DMA 0.0707
#define CX4_DMA_READ_US 0.530
#define CX4_L_US 0.573 /* 0.8229 − post_send − poll_cq (o_s) − poll_cq − post_recv (o_r) */
#define CX4_G_US 0.0067

/* A cost in ns, rounded to the engine's time; SIM_TIME_MAX past 2^62 ns. */
static inline SimTime sim_rdma_ns_round(double ns) {
  return ns >= 0x1.0p62 ? SIM_TIME_MAX : (SimTime)llround(ns);
}

/* The NIC's bottleneck per byte: the wire or the DMA, whichever is slower (G_b). */
static inline double sim_rdma_bottleneck_ns_per_byte(const SimLogGP *lg) {
  return MAX(lg->G_ns_per_byte, lg->dma_ns_per_byte);
}

G_END_DECLS
