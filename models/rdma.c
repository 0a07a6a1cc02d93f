/* rdma.c: LogGP message costs and the "stack" model family (TCP and RDMA stacks). The PBFT ordering service
 * is in bft.c, Rubin's 2018 stacks, their fit and checks in rdma_rubin.c, the machine files in
 * rdma_machine.c; rdma.h is the contract of all four. */
#include "rdma-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- LogGP costs ---- */

uint64_t sim_loggp_chunks(const SimLogGP *lg, uint64_t bytes) {
  if (lg->chunk_bytes == 0 || bytes <= lg->chunk_bytes) return 1;
  return (bytes + lg->chunk_bytes - 1) / lg->chunk_bytes;
}

/* Serial per-byte CPU at each end (O, and Os at the sender), zero above the path switch O_max_bytes. */
static double serial_send_ns_per_byte(const SimLogGP *lg, uint64_t bytes) {
  if (lg->O_max_bytes && bytes > lg->O_max_bytes) return 0;
  return lg->O_ns_per_byte + lg->Os_ns_per_byte;
}

static double serial_recv_ns_per_byte(const SimLogGP *lg, uint64_t bytes) {
  if (lg->O_max_bytes && bytes > lg->O_max_bytes) return 0;
  return lg->O_ns_per_byte;
}

static uint64_t first_packet_bytes(const SimLogGP *lg, uint64_t bytes) {
  return MIN(bytes, MAX(lg->mtu_bytes, 1));
}

double sim_loggp_send_cpu_ns(const SimLogGP *lg, uint64_t bytes) {
  return (double)sim_loggp_chunks(lg, bytes) * lg->o_s_ns +
         (serial_send_ns_per_byte(lg, bytes) + lg->Ps_ns_per_byte) * (double)bytes;
}

double sim_loggp_recv_cpu_ns(const SimLogGP *lg, uint64_t bytes) {
  return (double)sim_loggp_chunks(lg, bytes) * lg->o_r_ns +
         (serial_recv_ns_per_byte(lg, bytes) + lg->Pr_ns_per_byte) * (double)bytes;
}

double sim_loggp_send_lead_ns(const SimLogGP *lg, uint64_t bytes) {
  return (double)sim_loggp_chunks(lg, bytes) * lg->o_s_ns + serial_send_ns_per_byte(lg, bytes) * (double)bytes +
         lg->Ps_ns_per_byte * (double)first_packet_bytes(lg, bytes);
}

double sim_loggp_recv_tail_ns(const SimLogGP *lg, uint64_t bytes) {
  return (double)sim_loggp_chunks(lg, bytes) * lg->o_r_ns + serial_recv_ns_per_byte(lg, bytes) * (double)bytes +
         lg->Pr_ns_per_byte * (double)first_packet_bytes(lg, bytes);
}

/* The rate at which the packets after the first reach the receiver's memory: the NIC's, or the sender's
 * pipelined copy where that is slower. */
static double stream_ns_per_byte(const SimLogGP *lg) {
  return MAX(sim_rdma_bottleneck_ns_per_byte(lg), lg->Ps_ns_per_byte);
}

double sim_loggp_gap_ns(const SimLogGP *lg, uint64_t bytes) {
  return MAX((double)sim_loggp_chunks(lg, bytes) * lg->g_ns, (double)bytes * sim_rdma_bottleneck_ns_per_byte(lg));
}

static double wire_first_ns(const SimLogGP *lg, uint64_t bytes) {
  return lg->L_ns + (bytes > lg->inline_bytes ? lg->dma_read_ns : 0) +
         (double)first_packet_bytes(lg, bytes) * (2 * lg->dma_ns_per_byte + lg->G_ns_per_byte);
}

double sim_loggp_wire_rest_ns(const SimLogGP *lg, uint64_t bytes) {
  return (double)(bytes - first_packet_bytes(lg, bytes)) * stream_ns_per_byte(lg);
}

double sim_loggp_wire_ns(const SimLogGP *lg, uint64_t bytes) {
  return wire_first_ns(lg, bytes) + sim_loggp_wire_rest_ns(lg, bytes);
}

/* From the first packet in the receiver's memory to the message received: the stream and the receiver's
 * last packet, or the receiver's pipelined copy where that is slower. */
static double after_first_ns(const SimLogGP *lg, uint64_t bytes) {
  return MAX(sim_loggp_wire_rest_ns(lg, bytes) + sim_loggp_recv_tail_ns(lg, bytes),
             sim_loggp_recv_cpu_ns(lg, bytes));
}

double sim_loggp_one_way_ns(const SimLogGP *lg, uint64_t bytes) {
  return sim_loggp_send_lead_ns(lg, bytes) + wire_first_ns(lg, bytes) + after_first_ns(lg, bytes);
}

double sim_loggp_one_way_copy_ns(const SimLogGP *lg, uint64_t bytes) {
  double m = (double)bytes, p = (double)first_packet_bytes(lg, bytes);
  double t = serial_send_ns_per_byte(lg, bytes) * m + lg->Ps_ns_per_byte * p;
  double rest = sim_loggp_wire_rest_ns(lg, bytes) + sim_loggp_recv_tail_ns(lg, bytes);
  if (sim_loggp_recv_cpu_ns(lg, bytes) > rest) /* the receiver's copy binds after the first packet */
    return t + (serial_recv_ns_per_byte(lg, bytes) + lg->Pr_ns_per_byte) * m;
  if (lg->Ps_ns_per_byte > sim_rdma_bottleneck_ns_per_byte(lg)) t += sim_loggp_wire_rest_ns(lg, bytes);
  return t + (serial_recv_ns_per_byte(lg, bytes) * m + lg->Pr_ns_per_byte * p);
}

double sim_loggp_phase_ns(const SimLogGP *lg, uint64_t bytes, guint k, guint q, double cv_ns) {
  g_return_val_if_fail(k >= 1, NAN);
  double spacing = MAX(sim_loggp_send_cpu_ns(lg, bytes), sim_loggp_gap_ns(lg, bytes));
  double t = sim_loggp_send_lead_ns(lg, bytes) + (double)(k - 1) * spacing + wire_first_ns(lg, bytes);
  if (q == 0) return t + sim_loggp_wire_rest_ns(lg, bytes);
  return t + after_first_ns(lg, bytes) + cv_ns + (double)(q - 1) * (sim_loggp_recv_cpu_ns(lg, bytes) + cv_ns);
}

double sim_loggp_stream_msgs_per_s(const SimLogGP *lg, uint64_t bytes) {
  double t = MAX(MAX(sim_loggp_send_cpu_ns(lg, bytes), sim_loggp_gap_ns(lg, bytes)),
                 sim_loggp_recv_cpu_ns(lg, bytes));
  return t > 0 ? 1e9 / t : INFINITY;
}

SimLoggpGain sim_loggp_gain(const SimLogGP *fast, const SimLogGP *base, uint64_t bytes) {
  return (SimLoggpGain){
      .latency = 1 - sim_loggp_one_way_ns(fast, bytes) / sim_loggp_one_way_ns(base, bytes),
      .throughput = sim_loggp_stream_msgs_per_s(fast, bytes) / sim_loggp_stream_msgs_per_s(base, bytes) - 1};
}

/* ---- The stack models ----
 * One parameter struct serves every stack; each table lists the fields its stack uses.
 *
 * Where the RDMA figures come from (ConnectX-4, 100 Gb/s, perftest ib_send_lat, half round trip:
 * 0.83 µs at 32 B, 1.58 µs at 1 KiB, 2.26 µs at 4 KiB, 4.56 µs at 32 KiB; scenarios/data/perf-models.json):
 *  - G = 0.08 ns/B is the 100 Gb/s line rate (the 4 KiB → 32 KiB slope, 0.0802 ns/B, agrees);
 *  - 1 KiB → 4 KiB is one 4 KiB packet crossing three store-and-forward stages: slope 0.2214 ns/B =
 *    2·G_dma + G, so G_dma = 0.0707 ns/B (14.1 GB/s: PCIe 3.0 x16);
 *  - 32 B (inlined): o_s + L + o_r = 0.83 − 32·0.2214e-3 = 0.8229 µs;
 *  - 1 KiB (not inlined): the NIC's DMA read of the payload adds 1.58 − 0.8229 − 1024·0.2214e-3 = 0.530 µs;
 *  - the 32 KiB point is not used: the equations give 4.554 µs for it (tests/test_rdma.c).
 * Only the sum o_s + L + o_r is measured; its split into host and NIC parts is an assumption. */

typedef struct {
  double o_s_us, o_r_us, L_us, G_ns_per_byte, g_us, O_ns_per_byte, dma_ns_per_byte, dma_read_us;
  int64_t inline_bytes, mtu_bytes;
  double post_send_us, poll_cq_us, post_recv_us, poll_mem_us, copy_ns_per_byte;
  int64_t signal_every, recv_batch, buffer_bytes;
} StackParams;

/* The ConnectX-4 constants (CX4_*) are in rdma-private.h: Rubin's hardware derives from them too. */

#define P_NUM(field, unit_, lo, hi, open, dflt, text)                                                        \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_NUMBER, .unit = unit_, .min = lo, .max = hi, .min_open = open,         \
    .def = dflt, .offset = offsetof(StackParams, field), .help = text                                        \
  }
#define P_INT(field, unit_, lo, hi, dflt, text)                                                              \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_INT, .unit = unit_, .min = lo, .max = hi, .def = dflt,                 \
    .offset = offsetof(StackParams, field), .help = text                                                     \
  }

#define FABRIC_PARAMS(L_default, L_help, mtu_default, mtu_help)                                              \
  P_NUM(L_us, "us", 0, 1e6, FALSE, L_default, L_help),                                                       \
      P_NUM(G_ns_per_byte, "ns/B", 0, 1e6, FALSE, CX4_G,                                                     \
            "wire time per byte: 100 Gb/s, the ConnectX-4 fabric of the RDMA figures (its 4-32 KiB "         \
            "ib_send_lat "                                                                                   \
            "slope is 0.0802 ns/B); 0.8 for 10 Gb/s"),                                                       \
      P_NUM(dma_ns_per_byte, "ns/B", 0, 1e6, FALSE, CX4_DMA,                                                 \
            "host memory <-> NIC per byte at each end: (ib_send_lat slope 1-4 KiB, 0.2214 ns/B, - G) / 2 = " \
            "14.1 GB/s, PCIe 3.0 x16"),                                                                      \
      P_INT(mtu_bytes, "bytes", 1, 1 << 30, mtu_default, mtu_help)

static const SimParamSpec tcp_params[] = {
    P_NUM(o_s_us, "us", 0, 1e6, FALSE, 2.0,
          "sender CPU per message (send() and the TCP/IP transmit path); with o_r and L it makes the ~10 us "
          "small-message one-way latency of kernel TCP (DESIGN.md reference point); the 2/3/5 split is an "
          "assumption"),
    P_NUM(o_r_us, "us", 0, 1e6, FALSE, 3.0,
          "receiver CPU per message (interrupt, softirq, TCP receive path, recv())"),
    P_NUM(O_ns_per_byte, "ns/B", 0, 1e6, FALSE, 0.19,
          "CPU per byte at each end (the copies): one core receives ~42 Gb/s of a long TCP flow with copying "
          "its largest cost (Cai et al., Understanding Host Network Stack Overheads, SIGCOMM 2021): 8/42"),
    FABRIC_PARAMS(5.0, "NIC, wire, switch, interrupt moderation and wake-up latency (rest of the ~10 us)",
                  1500, "Ethernet frame payload: the store-and-forward unit"),
    P_NUM(g_us, "us", 0, 1e6, FALSE, 0,
          "smallest interval between two messages at the NIC (the CPU's o_s "
          "binds first)"),
};

#define VERBS_PARAMS                                                                                         \
  P_NUM(                                                                                                     \
      post_send_us, "us", 0, 1e6, FALSE, 0.10,                                                               \
      "CPU to build a send descriptor and ring the doorbell (assumed split of the measured 0.823 us; order " \
      "of magnitude from Kalia et al., Design Guidelines for High Performance RDMA Systems, ATC 2016)"),     \
      P_NUM(poll_cq_us, "us", 0, 1e6, FALSE, 0.05,                                                           \
            "CPU to reap one completion (assumed split, as post_send_us)"),                                  \
      P_NUM(g_us, "us", 0, 1e6, FALSE, CX4_G_US,                                                             \
            "NIC message rate: 150 M messages/s (ConnectX-4 product brief)"),                                \
      P_NUM(dma_read_us, "us", 0, 1e6, FALSE, CX4_DMA_READ_US,                                               \
            "DMA read of a payload that is not inlined: ib_send_lat 1.58 us at 1 KiB - 0.823 us - 1024 B x " \
            "0.2214 ns/B"),                                                                                  \
      P_INT(inline_bytes, "bytes", 0, 1 << 20, 220,                                                          \
            "largest inlined payload (mlx5 limit; any value in [32, 1023] fits the figures)")

#define CX4_L_HELP                                                                                           \
  "NIC, wire and switch: ib_send_lat 0.83 us at 32 B (ConnectX-4, 100 Gb/s) - 32 B x 0.2214 ns/B - o_s - "   \
  "o_r"

static const SimParamSpec rdma_send_params[] = {
    VERBS_PARAMS,
    P_NUM(post_recv_us, "us", 0, 1e6, FALSE, 0.05, "CPU to re-post one receive descriptor (assumed split)"),
    FABRIC_PARAMS(CX4_L_US, CX4_L_HELP, 4096, "InfiniBand MTU"),
};

static const SimParamSpec rdma_write_params[] = {
    VERBS_PARAMS,
    P_NUM(poll_mem_us, "us", 0, 1e6, FALSE, 0.05,
          "receiver CPU to see a written message by polling its last byte (no receive descriptor, no "
          "completion; assumed like poll_cq_us)"),
    FABRIC_PARAMS(CX4_L_US, CX4_L_HELP, 4096, "InfiniBand MTU"),
};

static const SimParamSpec rdma_channel_params[] = {
    VERBS_PARAMS,
    P_NUM(post_recv_us, "us", 0, 1e6, FALSE, 0.05, "CPU to re-post one receive descriptor (assumed split)"),
    P_INT(signal_every, "", 1, 1 << 20, 16,
          "selective signalling: one send in this many asks for a completion, so poll_cq_us is paid once "
          "per this many sends"),
    P_INT(recv_batch, "", 1, 1 << 20, 16, "receive descriptors are re-posted this many at a time"),
    P_NUM(copy_ns_per_byte, "ns/B", 0, 1e6, FALSE, 0.1,
          "CPU per byte at each end to copy a message into / out of a pooled registered buffer (one memcpy "
          "at ~10 GB/s per core); pooling avoids registering memory per message"),
    P_INT(buffer_bytes, "bytes", 1, INT64_C(1) << 32, 65536,
          "size of one pooled buffer: a longer message is sent as several sends, each paying o_s, o_r and g"),
    FABRIC_PARAMS(CX4_L_US, CX4_L_HELP, 4096, "InfiniBand MTU"),
};

static void fabric_loggp(const StackParams *p, SimLogGP *out) {
  out->L_ns = p->L_us * 1e3;
  out->G_ns_per_byte = p->G_ns_per_byte;
  out->g_ns = p->g_us * 1e3;
  out->dma_ns_per_byte = p->dma_ns_per_byte;
  out->dma_read_ns = p->dma_read_us * 1e3;
  out->inline_bytes = (uint64_t)p->inline_bytes;
  out->mtu_bytes = (uint64_t)p->mtu_bytes;
}

static void tcp_loggp(const void *params, SimLogGP *out) {
  const StackParams *p = params;
  memset(out, 0, sizeof *out);
  fabric_loggp(p, out);
  out->o_s_ns = p->o_s_us * 1e3;
  out->o_r_ns = p->o_r_us * 1e3;
  out->O_ns_per_byte = p->O_ns_per_byte;
}

/* Plain send/receive as perftest runs it: every send signalled and reaped, one receive re-posted per
 * message, application buffers registered up front (zero copy). */
static void rdma_send_loggp(const void *params, SimLogGP *out) {
  const StackParams *p = params;
  memset(out, 0, sizeof *out);
  fabric_loggp(p, out);
  out->o_s_ns = (p->post_send_us + p->poll_cq_us) * 1e3;
  out->o_r_ns = (p->poll_cq_us + p->post_recv_us) * 1e3;
}

/* One-sided write into a ring at the receiver, which polls memory. */
static void rdma_write_loggp(const void *params, SimLogGP *out) {
  const StackParams *p = params;
  memset(out, 0, sizeof *out);
  fabric_loggp(p, out);
  out->o_s_ns = (p->post_send_us + p->poll_cq_us) * 1e3;
  out->o_r_ns = p->poll_mem_us * 1e3;
}

/* Send/receive (the receiver owns its buffers: what BFT needs for safety) with pooled buffers, selective
 * signalling and batched receive re-posting. */
static void rdma_channel_loggp(const void *params, SimLogGP *out) {
  const StackParams *p = params;
  memset(out, 0, sizeof *out);
  fabric_loggp(p, out);
  out->o_s_ns = (p->post_send_us + p->poll_cq_us / (double)p->signal_every) * 1e3;
  out->o_r_ns = (p->poll_cq_us + p->post_recv_us / (double)p->recv_batch) * 1e3;
  out->O_ns_per_byte = p->copy_ns_per_byte;
  out->chunk_bytes = (uint64_t)p->buffer_bytes;
}

const SimStackModel sim_stack_tcp = {
    .info = {.name = "tcp",
             .family = "stack",
             .help = "kernel TCP sockets: ~10 us small-message latency, a copy at each end",
             .params = tcp_params,
             .n_params = G_N_ELEMENTS(tcp_params),
             .params_size = sizeof(StackParams)},
    .loggp = tcp_loggp,
};

const SimStackModel sim_stack_rdma_send = {
    .info = {.name = "rdma-send",
             .family = "stack",
             .help = "RDMA send/receive as perftest's ib_send_lat runs it (ConnectX-4, 100 Gb/s): every send "
                     "signalled, one receive re-posted per message, zero copy",
             .params = rdma_send_params,
             .n_params = G_N_ELEMENTS(rdma_send_params),
             .params_size = sizeof(StackParams)},
    .loggp = rdma_send_loggp,
};

const SimStackModel sim_stack_rdma_write = {
    .info = {.name = "rdma-write",
             .family = "stack",
             .help = "one-sided RDMA write into a ring the receiver polls (ConnectX-4 figures, no receive "
                     "descriptor or completion at the receiver)",
             .params = rdma_write_params,
             .n_params = G_N_ELEMENTS(rdma_write_params),
             .params_size = sizeof(StackParams)},
    .loggp = rdma_write_loggp,
};

const SimStackModel sim_stack_rdma_channel = {
    .info = {.name = "rdma-channel",
             .family = "stack",
             .help =
                 "an RDMA channel for BFT (after Rubin): send/receive semantics, pooled registered buffers "
                 "(a copy at each end), selective signalling, batched receive re-posting",
             .params = rdma_channel_params,
             .n_params = G_N_ELEMENTS(rdma_channel_params),
             .params_size = sizeof(StackParams)},
    .loggp = rdma_channel_loggp,
};

static const SimStackModel *const stack_models[] = {&sim_stack_tcp, &sim_stack_rdma_send,
                                                    &sim_stack_rdma_write, &sim_stack_rdma_channel, NULL};

const SimStackModel *const *sim_stack_models(void) {
  return stack_models;
}

const SimStackModel *sim_stack_find(const char *name) {
  for (const SimStackModel *const *m = stack_models; *m; m++)
    if (strcmp((*m)->info.name, name) == 0) return *m;
  return NULL;
}

void sim_stack_loggp(const SimModelRef *ref, SimLogGP *out) {
  g_return_if_fail(ref != NULL && ref->model != NULL && strcmp(ref->model->family, "stack") == 0);
  ((const SimStackModel *)ref->model)->loggp(ref->params, out);
}

gboolean sim_stack_default_loggp(const char *name, SimLogGP *out) {
  const SimStackModel *m = sim_stack_find(name);
  if (!m) return FALSE;
  StackParams p;
  memset(&p, 0, sizeof p);
  sim_params_defaults(m->info.params, m->info.n_params, &p);
  m->loggp(&p, out);
  return TRUE;
}

SimTime sim_stack_message_ns(const SimModelRef *ref, uint64_t bytes) {
  SimLogGP lg;
  sim_stack_loggp(ref, &lg);
  return sim_rdma_ns_round(sim_loggp_one_way_ns(&lg, bytes));
}

SimTime sim_stack_message_ns_by_name(const char *name, uint64_t bytes) {
  SimLogGP lg;
  if (!sim_stack_default_loggp(name, &lg)) return -1;
  return sim_rdma_ns_round(sim_loggp_one_way_ns(&lg, bytes));
}

SimTime sim_stack_host_overhead_ns_by_name(const char *name) {
  SimLogGP lg;
  if (!sim_stack_default_loggp(name, &lg)) return -1;
  return sim_rdma_ns_round(lg.o_s_ns + lg.o_r_ns);
}
