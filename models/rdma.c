/* rdma.c: the "stack" model family (LogGP costs of TCP and RDMA stacks) and the PBFT / hybrid ordering
 * service simulated on the event engine. */
#include "rdma.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sim - bft - error - quark, sim_bft_error)

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

static double bottleneck_ns_per_byte(const SimLogGP *lg) {
  return MAX(lg->G_ns_per_byte, lg->dma_ns_per_byte);
}

/* The rate at which the packets after the first reach the receiver's memory: the NIC's, or the sender's
 * pipelined copy where that is slower. */
static double stream_ns_per_byte(const SimLogGP *lg) {
  return MAX(bottleneck_ns_per_byte(lg), lg->Ps_ns_per_byte);
}

double sim_loggp_gap_ns(const SimLogGP *lg, uint64_t bytes) {
  return MAX((double)sim_loggp_chunks(lg, bytes) * lg->g_ns, (double)bytes * bottleneck_ns_per_byte(lg));
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
  if (lg->Ps_ns_per_byte > bottleneck_ns_per_byte(lg)) t += sim_loggp_wire_rest_ns(lg, bytes);
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

#define CX4_G 0.08
#define CX4_DMA 0.0707
#define CX4_DMA_READ_US 0.530
#define CX4_L_US 0.573 /* 0.8229 − post_send − poll_cq (o_s) − poll_cq − post_recv (o_r) */
#define CX4_G_US 0.0067

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

static SimTime ns_round(double ns) {
  return ns >= 0x1.0p62 ? SIM_TIME_MAX : (SimTime)llround(ns);
}

SimTime sim_stack_message_ns(const SimModelRef *ref, uint64_t bytes) {
  SimLogGP lg;
  sim_stack_loggp(ref, &lg);
  return ns_round(sim_loggp_one_way_ns(&lg, bytes));
}

SimTime sim_stack_message_ns_by_name(const char *name, uint64_t bytes) {
  SimLogGP lg;
  if (!sim_stack_default_loggp(name, &lg)) return -1;
  return ns_round(sim_loggp_one_way_ns(&lg, bytes));
}

SimTime sim_stack_host_overhead_ns_by_name(const char *name) {
  SimLogGP lg;
  if (!sim_stack_default_loggp(name, &lg)) return -1;
  return ns_round(lg.o_s_ns + lg.o_r_ns);
}

/* ---- The ordering service: configuration ---- */

static const char *const kind_names[SIM_BFT_N_KINDS] = {"request", "pre-prepare", "prepare", "commit",
                                                        "reply",   "view-change", "new-view"};

const char *sim_bft_kind_name(SimBftKind kind) {
  g_return_val_if_fail(kind < SIM_BFT_N_KINDS, "?");
  return kind_names[kind];
}

void sim_bft_config_default(SimBftConfig *cfg) {
  *cfg = (SimBftConfig){.n = 4,
                        .hybrid = FALSE,
                        .clients = 8,
                        .requests = 200,
                        .batch = 8,
                        .window = 4,
                        .payload_bytes = 1024,
                        .verify_us = 1.0,
                        .verify_ns_per_byte = 0.5,
                        .execute_us = 1.0,
                        .usig_us = 0,
                        .leader_crash_us = -1,
                        .leader_delay_us = 0,
                        .crashed_backups = 0,
                        .client_timeout_us = 10000,
                        .view_timeout_us = 20000};
}

gboolean sim_bft_faulty(const SimBftConfig *cfg) {
  return cfg->leader_crash_us >= 0 || cfg->leader_delay_us > 0 || cfg->crashed_backups > 0;
}

guint sim_bft_f(const SimBftConfig *cfg) {
  return cfg->hybrid ? (cfg->n - 1) / 2 : (cfg->n - 1) / 3;
}

gboolean sim_bft_config_check(const SimBftConfig *cfg, GError **error) {
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_CONFIG, __VA_ARGS__);                                    \
    return FALSE;                                                                                            \
  } while (0)
  if (cfg->hybrid) {
    if (cfg->n < 3 || cfg->n % 2 == 0)
      BAD("n must be 2f+1 >= 3 for the hybrid protocol: 3, 5, 7, ... (got %u)", cfg->n);
  } else {
    if (cfg->n < 4) BAD("n must be >= 4 for PBFT (n = 3f+1 with f >= 1) (got %u)", cfg->n);
    if (cfg->n % 3 != 1)
      BAD("n must be 3f+1 for PBFT: 4, 7, 10, ... (got %u); the hybrid protocol takes n = 2f+1", cfg->n);
  }
  if (cfg->n > SIM_BFT_MAX_N) BAD("n must be <= %u (got %u)", SIM_BFT_MAX_N, cfg->n);
  if (cfg->clients < 1 || cfg->clients > 100000) BAD("clients must be in [1, 100000] (got %u)", cfg->clients);
  if (cfg->requests < 1) BAD("requests must be >= 1 (got %u)", cfg->requests);
  uint64_t state = (uint64_t)cfg->n * cfg->clients * cfg->requests;
  if (state > SIM_BFT_MAX_STATE)
    BAD("n x clients x requests must be <= %" G_GUINT64_FORMAT " (got %" G_GUINT64_FORMAT ")",
        SIM_BFT_MAX_STATE, state);
  if (cfg->batch < 1 || cfg->batch > SIM_BFT_MAX_BATCH)
    BAD("batch must be in [1, %u] (got %u)", SIM_BFT_MAX_BATCH, cfg->batch);
  if (cfg->window < 1 || cfg->window > 100000) BAD("window must be in [1, 100000] (got %u)", cfg->window);
  if (cfg->payload_bytes > SIM_BFT_MAX_PAYLOAD_BYTES)
    BAD("payload must be <= %" G_GUINT64_FORMAT " bytes (got %" G_GUINT64_FORMAT ")",
        SIM_BFT_MAX_PAYLOAD_BYTES, cfg->payload_bytes);
  const double costs[] = {cfg->verify_us, cfg->verify_ns_per_byte, cfg->execute_us, cfg->usig_us};
  const char *const cost_names[] = {"verify_us", "verify_ns_per_byte", "execute_us", "usig_us"};
  for (guint i = 0; i < G_N_ELEMENTS(costs); i++)
    if (!(costs[i] >= 0 && costs[i] <= 1e9)) BAD("%s must be in [0, 1e9] (got %g)", cost_names[i], costs[i]);
  if (!(cfg->leader_crash_us < 0 || cfg->leader_crash_us <= 1e9))
    BAD("leader_crash_us must be < 0 (no crash) or <= 1e9 (got %g)", cfg->leader_crash_us);
  if (!(cfg->leader_delay_us >= 0 && cfg->leader_delay_us <= 1e9))
    BAD("leader_delay_us must be in [0, 1e9] (got %g)", cfg->leader_delay_us);
  if (!(cfg->client_timeout_us > 0 && cfg->client_timeout_us <= 1e9))
    BAD("client_timeout_us must be in (0, 1e9] (got %g)", cfg->client_timeout_us);
  if (!(cfg->view_timeout_us > 0 && cfg->view_timeout_us <= 1e9))
    BAD("view_timeout_us must be in (0, 1e9] (got %g)", cfg->view_timeout_us);
  if (sim_bft_faulty(cfg) && cfg->hybrid) BAD("faults and view changes are modelled for PBFT only, not --hybrid");
  guint f = sim_bft_f(cfg), crashed = cfg->crashed_backups + (cfg->leader_crash_us >= 0 ? 1 : 0);
  if (crashed > f)
    BAD("at most f = %u replicas may crash (got %u crashed backups%s)", f, cfg->crashed_backups,
        cfg->leader_crash_us >= 0 ? " and a crashed leader" : "");
  return TRUE;
#undef BAD
}

uint64_t sim_bft_messages_per_instance(guint n, gboolean hybrid, SimBftKind kind) {
  uint64_t N = n;
  switch (kind) {
  case SIM_BFT_REQUEST:
    return 1;
  case SIM_BFT_PREPREPARE:
    return N - 1;
  case SIM_BFT_PREPARE:
    return hybrid ? 0 : (N - 1) * (N - 1);
  case SIM_BFT_COMMIT:
    return hybrid ? (N - 1) * (N - 1) : N * (N - 1);
  case SIM_BFT_REPLY:
    return N;
  case SIM_BFT_VIEW_CHANGE:
  case SIM_BFT_NEW_VIEW:
    return 0;
  case SIM_BFT_N_KINDS:
    break;
  }
  g_return_val_if_reached(0);
}

static uint64_t request_bytes(const SimBftConfig *cfg) {
  return SIM_BFT_HEADER_BYTES + cfg->payload_bytes;
}

static double verify_ns(const SimBftConfig *cfg, uint64_t bytes) {
  return cfg->verify_us * 1e3 + cfg->verify_ns_per_byte * (double)bytes;
}

double sim_bft_closed_form_ns(const SimLogGP *lg, const SimBftConfig *cfg) {
  guint n = cfg->n, f = sim_bft_f(cfg);
  uint64_t req = request_bytes(cfg), pp = SIM_BFT_HEADER_BYTES + req, hdr = SIM_BFT_HEADER_BYTES;
  double usig = cfg->hybrid ? cfg->usig_us * 1e3 : 0;
  double t = sim_loggp_phase_ns(lg, req, 1, 1, verify_ns(cfg, req));
  t += usig + sim_loggp_phase_ns(lg, pp, n - 1, 1, verify_ns(cfg, pp) + usig);
  if (!cfg->hybrid) {
    t += sim_loggp_phase_ns(lg, hdr, n - 1, 2 * f, verify_ns(cfg, hdr));
    t += sim_loggp_phase_ns(lg, hdr, n - 1, 2 * f + 1, verify_ns(cfg, hdr));
  } else {
    t += usig + sim_loggp_phase_ns(lg, hdr, n - 1, f + 1, verify_ns(cfg, hdr) + usig);
  }
  t += cfg->execute_us * 1e3;
  t += sim_loggp_phase_ns(lg, hdr, 1, f + 1, verify_ns(cfg, hdr));
  return t;
}

/* ---- The ordering service: simulation ----
 *
 * Every host (replica or client) is one entity with one CPU, one NIC and one ingress link:
 *  - a message reaching a host's ingress at t (last byte, unloaded) is in memory at
 *    max(t, previous + m·G_b) and joins the CPU's FIFO;
 *  - the CPU takes messages in that order: r(m) + c_v(m), then the protocol's reaction, whose sends cost
 *    s(m) each on the same CPU;
 *  - a send leaves the NIC at max(end of its CPU work, NIC free) and occupies the NIC for d(m).
 * Events: NET (a message at a host's ingress), CPU (the CPU finished receiving the head of its FIFO), START
 * (a client's first request). A message is (kind in aux, tag << 32 | bytes in payload), the tag being the
 * sequence number or the request number. Batches (which requests a sequence number orders) are written by
 * the primary into a table before the pre-prepare is sent and only read afterwards: the payload pool of
 * DESIGN.md's event records. */

enum { EV_NET = 1, EV_CPU, EV_START, EV_TIMER };

enum { INST_PP = 1, INST_PREPARED = 2, INST_COMMITTED = 4, INST_EXECUTED = 8 };

/* Timers travel through the CPU's FIFO as items of these kinds (no receive cost). */
enum { ITEM_TIMER_CLIENT = SIM_BFT_N_KINDS, ITEM_TIMER_VIEW };

/* The kind and the view share an event's aux: kind in the low 4 bits. */
#define AUX_KIND(aux) ((guint)(aux) & 0xfu)
#define AUX_VIEW(aux) ((guint)(aux) >> 4)
#define SIM_BFT_MAX_VIEWS 4000

typedef struct {
  SimEntityId src;
  uint16_t kind;
  uint16_t view;
  uint64_t payload;
  SimTime ready; /* in memory, waiting for the CPU */
  SimTime first; /* its first packet in memory: a pipelined receive copy may start then (<= ready) */
} QItem;

typedef struct {
  uint32_t client, request;
} BatchEntry;

typedef struct BftRun BftRun;

/* What a replica's latest VIEW-CHANGE carries, written by it before sending (the payload pool). */
typedef struct {
  guint view;
  uint32_t executed; /* its highest executed sequence number */
  GArray *prepared;  /* uint32_t: prepared, unexecuted sequence numbers */
} VcRecord;

typedef struct {
  BftRun *run;
  guint index; /* replica number, or client number */
  gboolean is_client;
  SimTime crash_at; /* SIM_TIME_MAX: never */
  SimTime cpu_free, nic_free, rx_free;
  gboolean cpu_busy;
  QItem *q;
  guint q_head, q_len, q_cap;
  uint64_t sent[SIM_BFT_N_KINDS];
  guint view; /* clients: the highest view seen in a reply */
  /* replica */
  uint16_t *prepares, *commits;
  uint8_t *flags;
  uint32_t next_exec; /* lowest sequence number not executed */
  guint vc_target;    /* > view while a view change is under way */
  guint *vc_count;    /* view changes received from others, per view */
  gboolean nv_sent;   /* for vc_target, as its primary */
  uint32_t *seen, *executed, *held; /* per client: highest request known, executed, held for a new view */
  guint n_held;
  uint32_t view_gen;
  gboolean view_timer;
  /* primary */
  BatchEntry *pending;
  guint pend_head, pend_len, pend_cap;
  uint32_t next_seq;
  guint in_flight;
  /* client */
  uint32_t request; /* current request number, from 1 */
  guint replies;
  SimTime sent_at;
  double *latency_ns;
  guint done;
  SimTime last_done;
} BftHost;

struct BftRun {
  const SimLogGP *lg;
  const SimBftConfig *cfg;
  gboolean faulty;
  guint f, prepare_quorum, commit_quorum, reply_quorum;
  uint32_t max_seq;
  /* the batch table: written only by the primary of the view, sequence numbers from 1 */
  uint32_t *batch_start, *batch_count;
  BatchEntry *batch_entries;
  uint32_t n_entries, entries_cap;
  VcRecord *vc;                /* per replica */
  guint nv_view;               /* the latest NEW-VIEW, written by its primary before sending */
  uint32_t nv_lo, nv_hi;       /* it re-proposes sequence numbers nv_lo..nv_hi */
  uint64_t reproposed, retransmits;
  BftHost *hosts;
  SimEntityId n_hosts;
};

static inline uint64_t msg_pack(uint32_t tag, uint64_t bytes) {
  return (uint64_t)tag << 32 | (bytes & 0xffffffffu);
}
static inline uint32_t msg_tag(uint64_t payload) {
  return (uint32_t)(payload >> 32);
}
static inline uint64_t msg_bytes(uint64_t payload) {
  return payload & 0xffffffffu;
}

static SimTime cost_ns(double ns) {
  return ns_round(ns);
}

static guint primary_of(const BftRun *run, guint view) {
  return view % run->cfg->n;
}

/* Sends one message: the CPU pays s(m) from *t_cpu on, the NIC takes it when both are ready (a slow view-0
 * primary holds its pre-prepares leader_delay longer). */
static void host_send(SimCtx *ctx, BftHost *h, SimTime *t_cpu, SimEntityId dst, SimBftKind kind, uint32_t tag,
                      uint64_t bytes) {
  const SimLogGP *lg = h->run->lg;
  /* The NIC may start once the serial work and the first packet's pipelined copy are done; the CPU stays
   * busy with the rest of the copy (the same as s(m) without pipelined bytes). */
  SimTime ready = *t_cpu + cost_ns(sim_loggp_send_lead_ns(lg, bytes));
  *t_cpu += cost_ns(sim_loggp_send_cpu_ns(lg, bytes));
  if (kind == SIM_BFT_PREPREPARE && h->view == 0 && !h->is_client && h->index == 0)
    ready += cost_ns(h->run->cfg->leader_delay_us * 1e3);
  SimTime inject = MAX(ready, h->nic_free);
  h->nic_free = inject + cost_ns(sim_loggp_gap_ns(lg, bytes));
  SimTime arrive = inject + cost_ns(sim_loggp_wire_ns(lg, bytes));
  uint16_t aux = (uint16_t)((guint)kind | (h->view << 4));
  sim_ctx_send(ctx, dst, arrive - sim_ctx_now(ctx), EV_NET, aux, msg_pack(tag, bytes));
  h->sent[kind]++;
}

static void multicast(SimCtx *ctx, BftHost *h, SimTime *t_cpu, SimBftKind kind, uint32_t tag,
                      uint64_t bytes) {
  for (guint r = 0; r < h->run->cfg->n; r++)
    if (r != h->index) host_send(ctx, h, t_cpu, r, kind, tag, bytes);
}

static uint64_t preprepare_bytes(const BftRun *run, uint32_t seq) {
  return SIM_BFT_HEADER_BYTES + (uint64_t)run->batch_count[seq] * request_bytes(run->cfg);
}

static void timer_arm(SimCtx *ctx, SimTime at, guint item, uint32_t tag) {
  sim_ctx_send(ctx, sim_ctx_self(ctx), at - sim_ctx_now(ctx), EV_TIMER, (uint16_t)item, tag);
}

/* The backup's view timer: (re)started at *t_cpu, or stopped. */
static void view_timer_start(SimCtx *ctx, BftHost *h, SimTime t, guint attempt) {
  if (!h->run->faulty) return;
  h->view_gen++;
  h->view_timer = TRUE;
  double us = h->run->cfg->view_timeout_us * (double)(1u << MIN(attempt, 20u));
  timer_arm(ctx, t + cost_ns(us * 1e3), ITEM_TIMER_VIEW, h->view_gen);
}

static void view_timer_stop(BftHost *h) {
  h->view_gen++;
  h->view_timer = FALSE;
}

static void try_propose(SimCtx *ctx, BftHost *h, SimTime *t_cpu);

static void try_execute(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  gboolean any = FALSE;
  while (h->next_exec <= run->max_seq && (h->flags[h->next_exec] & INST_COMMITTED)) {
    uint32_t seq = h->next_exec++;
    h->flags[seq] |= INST_EXECUTED;
    for (uint32_t i = 0; i < run->batch_count[seq]; i++) {
      const BatchEntry *e = &run->batch_entries[run->batch_start[seq] + i];
      *t_cpu += cost_ns(run->cfg->execute_us * 1e3);
      h->executed[e->client] = MAX(h->executed[e->client], e->request);
      h->seen[e->client] = MAX(h->seen[e->client], e->request);
      if (h->held[e->client] && h->held[e->client] <= e->request) {
        h->held[e->client] = 0;
        h->n_held--;
      }
      any = TRUE;
      host_send(ctx, h, t_cpu, run->cfg->n + e->client, SIM_BFT_REPLY, e->request, SIM_BFT_HEADER_BYTES);
    }
    if (h->index == primary_of(run, h->view) && h->vc_target == h->view) {
      h->in_flight--;
      try_propose(ctx, h, t_cpu);
    }
  }
  if (any && h->view_timer) {
    if (h->n_held > 0)
      view_timer_start(ctx, h, *t_cpu, 0);
    else
      view_timer_stop(h);
  }
}

static void check_committed(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  uint8_t fl = h->flags[seq];
  gboolean ready = h->run->cfg->hybrid ? (fl & INST_PP) : (fl & INST_PREPARED);
  if (ready && !(fl & INST_COMMITTED) && h->commits[seq] >= h->run->commit_quorum) {
    h->flags[seq] |= INST_COMMITTED;
    try_execute(ctx, h, t_cpu);
  }
}

/* PBFT: prepared = the pre-prepare and 2f prepares (a backup's own counts); then commit to all. */
static void check_prepared(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  uint8_t fl = h->flags[seq];
  if ((fl & INST_PP) && !(fl & INST_PREPARED) && h->prepares[seq] >= h->run->prepare_quorum) {
    h->flags[seq] |= INST_PREPARED;
    h->commits[seq]++; /* its own */
    multicast(ctx, h, t_cpu, SIM_BFT_COMMIT, seq, SIM_BFT_HEADER_BYTES);
    check_committed(ctx, h, t_cpu, seq);
  }
}

static void try_propose(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  const SimBftConfig *cfg = run->cfg;
  while (h->pend_len > 0 && h->in_flight < cfg->window) {
    uint32_t seq = ++h->next_seq;
    g_assert(seq <= run->max_seq);
    guint take = MIN(h->pend_len, cfg->batch);
    g_assert(run->n_entries + take <= run->entries_cap);
    run->batch_start[seq] = run->n_entries;
    run->batch_count[seq] = take;
    for (guint i = 0; i < take; i++) {
      run->batch_entries[run->n_entries++] = h->pending[h->pend_head];
      h->pend_head = (h->pend_head + 1) % h->pend_cap;
      h->pend_len--;
    }
    h->in_flight++;
    h->flags[seq] |= INST_PP;
    if (cfg->hybrid) {
      *t_cpu += cost_ns(cfg->usig_us * 1e3);
      h->commits[seq]++; /* the primary's prepare is its commit */
    }
    multicast(ctx, h, t_cpu, SIM_BFT_PREPREPARE, seq, preprepare_bytes(run, seq));
    check_committed(ctx, h, t_cpu, seq); /* hybrid with f = 0 never happens (n >= 3), but keep it exact */
  }
}

static void pend_push(BftHost *h, uint32_t client, uint32_t request) {
  g_assert(h->pend_len < h->pend_cap);
  h->pending[(h->pend_head + h->pend_len) % h->pend_cap] = (BatchEntry){.client = client, .request = request};
  h->pend_len++;
}

/* Enters view v: forget the instances of the old view that were not executed. */
static void enter_view(BftHost *h, guint v) {
  BftRun *run = h->run;
  h->view = v;
  h->vc_target = v;
  for (uint32_t s = h->next_exec; s <= run->max_seq; s++) {
    h->prepares[s] = h->commits[s] = 0;
    h->flags[s] &= INST_EXECUTED;
  }
}

/* A backup accepts re-proposed instance `seq` of its new view as a pre-prepare. */
static void accept_reproposal(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  h->flags[seq] |= INST_PP;
  h->prepares[seq]++; /* its own */
  multicast(ctx, h, t_cpu, SIM_BFT_PREPARE, seq, SIM_BFT_HEADER_BYTES);
  check_prepared(ctx, h, t_cpu, seq);
}

/* The primary of view v with 2f view changes from others and its own: NEW-VIEW, re-proposals, then the
 * requests it holds. */
static void try_new_view(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  guint v = h->vc_target;
  if (h->nv_sent || v == h->view || primary_of(run, v) != h->index || h->vc_count[v] < 2 * run->f) return;
  h->nv_sent = TRUE;
  /* The 2f+1 records: its own and the first 2f of the others for this view, in replica order. */
  uint32_t lo = UINT32_MAX, hi = 0;
  uint64_t bytes = SIM_BFT_HEADER_BYTES;
  guint used = 0;
  gboolean *in = g_new0(gboolean, run->cfg->n);
  for (guint r = 0; r < run->cfg->n && used < 2 * run->f + 1; r++) {
    const VcRecord *rec = &run->vc[r];
    if (rec->view != v || run->hosts[r].crash_at <= sim_ctx_now(ctx)) continue;
    if (r != h->index && used == 2 * run->f) continue;
    in[r] = TRUE;
    used++;
    lo = MIN(lo, rec->executed);
    for (guint i = 0; i < rec->prepared->len; i++)
      hi = MAX(hi, g_array_index(rec->prepared, uint32_t, i));
    bytes += SIM_BFT_HEADER_BYTES * (1 + (uint64_t)rec->prepared->len * (2 * run->f + 1));
  }
  if (hi < lo + 1) hi = lo; /* nothing to re-propose */
  run->nv_view = v;
  run->nv_lo = lo + 1;
  run->nv_hi = hi;
  for (uint32_t s = lo + 1; s <= hi; s++) {
    gboolean prepared = FALSE;
    for (guint r = 0; r < run->cfg->n && !prepared; r++) {
      if (!in[r]) continue;
      const GArray *p = run->vc[r].prepared;
      for (guint i = 0; i < p->len && !prepared; i++)
        prepared = g_array_index(p, uint32_t, i) == s;
    }
    if (!prepared) run->batch_count[s] = 0; /* a null request: nothing committed can be dropped this way */
    else run->reproposed++;
    bytes += SIM_BFT_HEADER_BYTES;
  }
  g_free(in);
  enter_view(h, v);
  multicast(ctx, h, t_cpu, SIM_BFT_NEW_VIEW, v, bytes);
  /* As primary: the re-proposed instances are its pre-prepares. */
  h->next_seq = MAX(hi, h->next_exec - 1);
  h->in_flight = 0;
  for (uint32_t s = lo + 1; s <= hi; s++) {
    if (s < h->next_exec) continue;
    h->flags[s] |= INST_PP;
    h->in_flight++;
  }
  /* The requests it holds that no re-proposed batch carries, in client order. */
  h->pend_head = h->pend_len = 0;
  for (guint c = 0; c < run->cfg->clients; c++) {
    uint32_t r = h->held[c];
    if (!r || r <= h->executed[c]) continue;
    gboolean carried = FALSE;
    for (uint32_t s = lo + 1; s <= hi && !carried; s++)
      for (uint32_t i = 0; i < run->batch_count[s] && !carried; i++) {
        const BatchEntry *e = &run->batch_entries[run->batch_start[s] + i];
        carried = e->client == c && e->request == r;
      }
    if (!carried) pend_push(h, c, r);
  }
  view_timer_stop(h);
  try_propose(ctx, h, t_cpu);
  try_execute(ctx, h, t_cpu);
}

/* Multicasts this replica's VIEW-CHANGE for view v and waits for the new view. */
static void start_view_change(SimCtx *ctx, BftHost *h, SimTime *t_cpu, guint v) {
  BftRun *run = h->run;
  if (v >= SIM_BFT_MAX_VIEWS) return; /* gives up: the run reports fewer completions */
  guint attempt = v - h->view;
  h->vc_target = v;
  h->nv_sent = FALSE;
  VcRecord *rec = &run->vc[h->index];
  rec->view = v;
  rec->executed = h->next_exec - 1;
  g_array_set_size(rec->prepared, 0);
  for (uint32_t s = h->next_exec; s <= run->max_seq; s++)
    if (h->flags[s] & INST_PREPARED) g_array_append_val(rec->prepared, s);
  uint64_t bytes = SIM_BFT_HEADER_BYTES * (1 + (uint64_t)rec->prepared->len * (2 * run->f + 1));
  multicast(ctx, h, t_cpu, SIM_BFT_VIEW_CHANGE, v, bytes);
  view_timer_start(ctx, h, *t_cpu, attempt);
  try_new_view(ctx, h, t_cpu);
}

static void replica_request(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  uint32_t c = m->src - run->cfg->n, r = msg_tag(m->payload);
  if (r <= h->executed[c]) { /* executed: the reply again */
    if (r == h->executed[c])
      host_send(ctx, h, t_cpu, m->src, SIM_BFT_REPLY, r, SIM_BFT_HEADER_BYTES);
    return;
  }
  if (r <= h->seen[c] && h->index == primary_of(run, h->view) && h->vc_target == h->view) return;
  if (r > h->seen[c]) h->seen[c] = r;
  if (h->held[c] != r) {
    if (!h->held[c]) h->n_held++;
    h->held[c] = r;
  }
  if (h->index == primary_of(run, h->view) && h->vc_target == h->view) {
    /* Already ordered by this primary? (a retransmission after a slow instance) */
    for (guint i = 0; i < h->pend_len; i++)
      if (h->pending[(h->pend_head + i) % h->pend_cap].client == c) return;
    for (uint32_t s = h->next_exec; s <= h->next_seq; s++)
      for (uint32_t i = 0; i < run->batch_count[s]; i++) {
        const BatchEntry *e = &run->batch_entries[run->batch_start[s] + i];
        if (e->client == c && e->request == r) return;
      }
    pend_push(h, c, r);
    try_propose(ctx, h, t_cpu);
  } else if (run->faulty && !h->view_timer) {
    view_timer_start(ctx, h, *t_cpu, h->vc_target - h->view);
  }
}

static void replica_receive(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  const SimBftConfig *cfg = run->cfg;
  uint32_t tag = msg_tag(m->payload);
  gboolean normal = m->view == h->view && h->vc_target == h->view;
  switch (m->kind) {
  case SIM_BFT_REQUEST:
    replica_request(ctx, h, m, t_cpu);
    break;
  case SIM_BFT_PREPREPARE:
    if (!normal) break;
    h->flags[tag] |= INST_PP;
    if (cfg->hybrid) {
      *t_cpu += cost_ns(cfg->usig_us * 1e3);
      h->commits[tag] += 2; /* the primary's prepare and its own commit */
      multicast(ctx, h, t_cpu, SIM_BFT_COMMIT, tag, SIM_BFT_HEADER_BYTES);
      check_committed(ctx, h, t_cpu, tag);
    } else {
      h->prepares[tag]++; /* its own */
      multicast(ctx, h, t_cpu, SIM_BFT_PREPARE, tag, SIM_BFT_HEADER_BYTES);
      check_prepared(ctx, h, t_cpu, tag);
    }
    break;
  case SIM_BFT_PREPARE:
    if (!normal) break;
    h->prepares[tag]++;
    check_prepared(ctx, h, t_cpu, tag);
    break;
  case SIM_BFT_COMMIT:
    if (!normal) break;
    h->commits[tag]++;
    check_committed(ctx, h, t_cpu, tag);
    break;
  case SIM_BFT_VIEW_CHANGE: {
    guint v = tag;
    if (v <= h->view || v >= SIM_BFT_MAX_VIEWS) break;
    h->vc_count[v]++;
    /* f+1 replicas want view v: join them. */
    if (v > h->vc_target && h->vc_count[v] >= run->f + 1) start_view_change(ctx, h, t_cpu, v);
    else if (v == h->vc_target) try_new_view(ctx, h, t_cpu);
    break;
  }
  case SIM_BFT_NEW_VIEW: {
    guint v = tag;
    if (v < h->vc_target || v <= h->view || run->nv_view != v) break;
    enter_view(h, v);
    if (h->n_held > 0) view_timer_start(ctx, h, *t_cpu, 0);
    else view_timer_stop(h);
    for (uint32_t s = run->nv_lo; s <= run->nv_hi; s++)
      accept_reproposal(ctx, h, t_cpu, s);
    break;
  }
  case ITEM_TIMER_VIEW:
    if (tag != h->view_gen) break; /* stopped or restarted since */
    h->view_timer = FALSE;
    start_view_change(ctx, h, t_cpu, h->vc_target + 1);
    break;
  default:
    g_assert_not_reached();
  }
}

static void client_send_request(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  h->request++;
  h->replies = 0;
  h->sent_at = *t_cpu;
  host_send(ctx, h, t_cpu, primary_of(run, h->view), SIM_BFT_REQUEST, h->request, request_bytes(run->cfg));
  if (run->faulty) timer_arm(ctx, *t_cpu + cost_ns(run->cfg->client_timeout_us * 1e3), ITEM_TIMER_CLIENT, h->request);
}

static void client_receive(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  if (m->kind == ITEM_TIMER_CLIENT) {
    if (msg_tag(m->payload) != h->request || h->done >= h->request) return; /* answered */
    for (guint r = 0; r < run->cfg->n; r++)
      host_send(ctx, h, t_cpu, r, SIM_BFT_REQUEST, h->request, request_bytes(run->cfg));
    run->retransmits++;
    timer_arm(ctx, *t_cpu + cost_ns(run->cfg->client_timeout_us * 1e3), ITEM_TIMER_CLIENT, h->request);
    return;
  }
  g_assert(m->kind == SIM_BFT_REPLY);
  h->view = MAX(h->view, m->view);
  if (msg_tag(m->payload) != h->request || h->replies >= run->reply_quorum) return; /* a late reply */
  if (++h->replies < run->reply_quorum) return;
  h->latency_ns[h->done++] = (double)(*t_cpu - h->sent_at);
  h->last_done = *t_cpu;
  if (h->done < run->cfg->requests) client_send_request(ctx, h, t_cpu);
}

/* The CPU's work for a received item: r(m) + c_v(m) (and the trusted counter); *tail_ns gets what of it is
 * left after the last byte is in memory (r_t(m) + c_v(m) ...). */
static double receive_cost_ns(const BftHost *h, const QItem *m, double *tail_ns) {
  const SimBftConfig *cfg = h->run->cfg;
  *tail_ns = 0;
  if (m->kind >= SIM_BFT_N_KINDS) return 0; /* a timer */
  uint64_t bytes = msg_bytes(m->payload);
  double after = verify_ns(cfg, bytes);
  if (cfg->hybrid && (m->kind == SIM_BFT_PREPREPARE || m->kind == SIM_BFT_COMMIT)) after += cfg->usig_us * 1e3;
  *tail_ns = sim_loggp_recv_tail_ns(h->run->lg, bytes) + after;
  return sim_loggp_recv_cpu_ns(h->run->lg, bytes) + after;
}

/* Schedules the CPU event for the head of the FIFO. A pipelined receive copy starts with the first packet;
 * without one (first == ready, tail == full) this is max(ready, cpu_free) + r(m) + c_v(m). */
static void cpu_start(SimCtx *ctx, BftHost *h) {
  const QItem *head = &h->q[h->q_head];
  double tail = 0, full = receive_cost_ns(h, head, &tail);
  SimTime start = MAX(head->first, h->cpu_free);
  SimTime done = MAX(start + cost_ns(full), MAX(head->ready, h->cpu_free) + cost_ns(tail));
  h->cpu_busy = TRUE;
  sim_ctx_send(ctx, sim_ctx_self(ctx), done - sim_ctx_now(ctx), EV_CPU, 0, 0);
}

static void enqueue(SimCtx *ctx, BftHost *h, QItem item) {
  if (h->q_len == h->q_cap) {
    guint cap = MAX(16, h->q_cap * 2);
    QItem *q = g_new(QItem, cap);
    for (guint i = 0; i < h->q_len; i++)
      q[i] = h->q[(h->q_head + i) % h->q_cap];
    g_free(h->q);
    h->q = q;
    h->q_head = 0;
    h->q_cap = cap;
  }
  h->q[(h->q_head + h->q_len) % h->q_cap] = item;
  h->q_len++;
  if (!h->cpu_busy) cpu_start(ctx, h);
}

static void host_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  BftHost *h = state;
  SimTime now = sim_ctx_now(ctx);
  if (now >= h->crash_at) return; /* crashed: drops everything */
  switch (ev->type) {
  case EV_NET: {
    uint64_t bytes = msg_bytes(ev->payload);
    SimTime ready = MAX(now, h->rx_free + cost_ns((double)bytes * bottleneck_ns_per_byte(h->run->lg)));
    h->rx_free = ready;
    enqueue(ctx, h,
            (QItem){.src = sim_event_src(ev),
                    .kind = (uint16_t)AUX_KIND(ev->aux),
                    .view = (uint16_t)AUX_VIEW(ev->aux),
                    .payload = ev->payload,
                    .ready = ready,
                    .first = ready - MIN(ready, cost_ns(sim_loggp_wire_rest_ns(h->run->lg, bytes)))});
    break;
  }
  case EV_TIMER:
    enqueue(ctx, h, (QItem){.src = sim_ctx_self(ctx), .kind = ev->aux, .payload = msg_pack((uint32_t)ev->payload, 0), .ready = now, .first = now});
    break;
  case EV_CPU: {
    QItem m = h->q[h->q_head];
    h->q_head = (h->q_head + 1) % h->q_cap;
    h->q_len--;
    SimTime t_cpu = now;
    if (h->is_client)
      client_receive(ctx, h, &m, &t_cpu);
    else
      replica_receive(ctx, h, &m, &t_cpu);
    h->cpu_free = t_cpu;
    h->cpu_busy = FALSE;
    if (h->q_len > 0) cpu_start(ctx, h);
    break;
  }
  case EV_START: {
    SimTime t_cpu = MAX(now, h->cpu_free);
    client_send_request(ctx, h, &t_cpu);
    h->cpu_free = t_cpu;
    break;
  }
  default:
    g_assert_not_reached();
  }
}

static const SimEntityKind host_kind = {.name = "bft-host", .handle = host_handle};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

gboolean sim_bft_run(const SimLogGP *lg, const SimBftConfig *cfg, SimBftResult *out, GError **error) {
  g_return_val_if_fail(lg != NULL && cfg != NULL && out != NULL, FALSE);
  if (!sim_bft_config_check(cfg, error)) return FALSE;
  memset(out, 0, sizeof *out);

  BftRun run = {.lg = lg, .cfg = cfg, .f = sim_bft_f(cfg), .faulty = sim_bft_faulty(cfg)};
  run.prepare_quorum = 2 * run.f;
  run.commit_quorum = cfg->hybrid ? run.f + 1 : 2 * run.f + 1;
  run.reply_quorum = run.f + 1;
  uint64_t total = (uint64_t)cfg->clients * cfg->requests;
  /* At least one request per batch; view changes may add null instances and order a request again. */
  run.max_seq = (uint32_t)(run.faulty ? 2 * total + 64 : total);
  run.entries_cap = (uint32_t)(run.faulty ? 2 * total + 64 : total);
  run.batch_start = g_new0(uint32_t, run.max_seq + 1);
  run.batch_count = g_new0(uint32_t, run.max_seq + 1);
  run.batch_entries = g_new0(BatchEntry, run.entries_cap);
  run.vc = g_new0(VcRecord, cfg->n);
  for (guint r = 0; r < cfg->n; r++)
    run.vc[r].prepared = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  run.n_hosts = cfg->n + cfg->clients;
  run.hosts = g_new0(BftHost, run.n_hosts);

  g_autoptr(SimEngine) engine = sim_engine_new(0);
  for (SimEntityId i = 0; i < run.n_hosts; i++) {
    BftHost *h = &run.hosts[i];
    h->run = &run;
    h->is_client = i >= cfg->n;
    h->index = h->is_client ? i - cfg->n : i;
    h->crash_at = SIM_TIME_MAX;
    if (!h->is_client) {
      if (i == 0 && cfg->leader_crash_us >= 0) h->crash_at = cost_ns(cfg->leader_crash_us * 1e3);
      if (i + cfg->crashed_backups >= cfg->n) h->crash_at = 0;
      h->prepares = g_new0(uint16_t, run.max_seq + 1);
      h->commits = g_new0(uint16_t, run.max_seq + 1);
      h->flags = g_new0(uint8_t, run.max_seq + 1);
      h->next_exec = 1;
      h->vc_count = run.faulty ? g_new0(guint, SIM_BFT_MAX_VIEWS) : NULL;
      h->seen = g_new0(uint32_t, cfg->clients);
      h->executed = g_new0(uint32_t, cfg->clients);
      h->held = g_new0(uint32_t, cfg->clients);
      h->pend_cap = cfg->clients; /* one outstanding request per client */
      h->pending = g_new(BatchEntry, h->pend_cap);
    } else {
      h->latency_ns = g_new0(double, cfg->requests);
    }
    SimEntityId id = sim_engine_add_entity(engine, &host_kind, h);
    g_assert(id == i);
  }
  for (guint c = 0; c < cfg->clients; c++)
    sim_engine_schedule(engine, cfg->n + c, cfg->n + c, 0, EV_START, 0, 0);
  sim_engine_run(engine);

  SimEngineStats st;
  sim_engine_get_stats(engine, &st);
  out->events = st.events;
  for (SimEntityId i = 0; i < run.n_hosts; i++)
    for (guint k = 0; k < SIM_BFT_N_KINDS; k++)
      out->messages[k] += run.hosts[i].sent[k];
  for (guint k = 0; k < SIM_BFT_N_KINDS; k++)
    out->messages_total += out->messages[k];
  for (guint r = 0; r < cfg->n; r++)
    if (run.hosts[r].crash_at == SIM_TIME_MAX) {
      out->view = MAX(out->view, run.hosts[r].view);
      out->instances = MAX(out->instances, run.hosts[r].next_exec - 1);
    }
  out->reproposed = run.reproposed;
  out->retransmits = run.retransmits;

  g_autofree double *lat = g_new(double, total);
  uint64_t n_lat = 0;
  for (guint c = 0; c < cfg->clients; c++) {
    const BftHost *h = &run.hosts[cfg->n + c];
    for (guint r = 0; r < h->done; r++)
      lat[n_lat++] = h->latency_ns[r];
  }
  out->completed = n_lat;
  SimTime last_done = 0;
  for (guint c = 0; c < cfg->clients; c++)
    last_done = MAX(last_done, run.hosts[cfg->n + c].last_done);
  gboolean ok = TRUE;
  if (n_lat != total) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_CONFIG,
                "only %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " requests completed", n_lat, total);
    ok = FALSE;
  } else {
    qsort(lat, n_lat, sizeof *lat, cmp_double);
    double sum = 0;
    for (uint64_t i = 0; i < n_lat; i++)
      sum += lat[i];
    out->latency_mean_us = sum / (double)n_lat / 1e3;
    out->latency_p50_us = gsl_stats_quantile_from_sorted_data(lat, 1, n_lat, 0.5) / 1e3;
    out->latency_p99_us = gsl_stats_quantile_from_sorted_data(lat, 1, n_lat, 0.99) / 1e3;
    out->latency_max_us = lat[n_lat - 1] / 1e3;
    out->makespan_s = sim_time_to_s(last_done);
    out->throughput_rps = out->makespan_s > 0 ? (double)n_lat / out->makespan_s : 0;
  }

  for (SimEntityId i = 0; i < run.n_hosts; i++) {
    BftHost *h = &run.hosts[i];
    g_free(h->q);
    g_free(h->prepares);
    g_free(h->commits);
    g_free(h->flags);
    g_free(h->vc_count);
    g_free(h->seen);
    g_free(h->executed);
    g_free(h->held);
    g_free(h->pending);
    g_free(h->latency_ns);
  }
  for (guint r = 0; r < cfg->n; r++)
    g_array_free(run.vc[r].prepared, TRUE);
  g_free(run.vc);
  g_free(run.hosts);
  g_free(run.batch_start);
  g_free(run.batch_count);
  g_free(run.batch_entries);
  return ok;
}

/* ---- Rubin's hardware (rdma.h): the 2018 stacks, their fit and the checks ---- */

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>

#define H_NUM(field, unit_, lo, hi, dflt, text)                                                              \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_NUMBER, .unit = unit_, .min = lo, .max = hi, .def = dflt,              \
    .offset = offsetof(SimRubinHw, field), .help = text                                                      \
  }
#define H_INT(field, unit_, lo, hi, dflt, text)                                                              \
  {                                                                                                          \
    .name = #field, .type = SIM_PARAM_INT, .unit = unit_, .min = lo, .max = hi, .def = dflt,                 \
    .offset = offsetof(SimRubinHw, field), .help = text                                                      \
  }

static const SimParamSpec rubin_hw_params[] = {
    H_NUM(gbps, "Gb/s", 1e-3, 1e6, 10, "published: Rubin's 10 Gb/s switch (rubin_2018_seed.setup)"),
    H_NUM(tcp_o_s_us, "us", 0, 1e6, 2.0,
          "assumed: kernel TCP send path; with tcp_o_r_us and tcp_L_us the ~10 us small-message one-way "
          "latency of kernel TCP (DESIGN.md reference point), split 2/3/5 as the tcp stack"),
    H_NUM(tcp_o_r_us, "us", 0, 1e6, 3.0, "assumed: kernel TCP receive path (interrupt, softirq, recv())"),
    H_NUM(tcp_L_us, "us", 0, 1e6, 5.0, "assumed: NIC, wire, switch and wake-up latency of kernel TCP"),
    H_INT(tcp_mtu_bytes, "bytes", 1, 1 << 30, 1500, "standard: Ethernet frame payload"),
    H_NUM(nic_L_us, "us", 0, 1e6, CX4_L_US,
          "derived (the NIC's per-message cost): ConnectX-4's 0.573 us (ib_send_lat 0.83 us at 32 B less "
          "the assumed verbs split); the inputs publish no ConnectX-3 figure, so the newer card's is used"),
    H_NUM(dma_ns_per_byte, "ns/B", 0, 1e6, 2 * CX4_DMA,
          "derived: ConnectX-3 is a PCIe 3.0 x8 card, half the x16 rate derived from ConnectX-4's "
          "ib_send_lat slope (14.1 GB/s), so 2 x 0.0707 ns/B"),
    H_NUM(dma_read_us, "us", 0, 1e6, CX4_DMA_READ_US,
          "derived: DMA read of a payload that is not inlined, from ConnectX-4's ib_send_lat (1.58 us at "
          "1 KiB)"),
    H_INT(inline_bytes, "bytes", 0, 1 << 20, 220, "assumed: largest inlined payload (as the rdma stacks)"),
    H_INT(roce_mtu_bytes, "bytes", 1, 1 << 30, 1024,
          "standard: RoCE on a 1500-byte Ethernet carries the largest InfiniBand MTU that fits, 1024"),
    H_NUM(g_us, "us", 0, 1e6, CX4_G_US, "published (ConnectX-4 product brief, 150 M messages/s); never binds here"),
    H_NUM(post_send_us, "us", 0, 1e6, 0.10, "assumed: CPU to post a send (as the rdma stacks)"),
    H_NUM(poll_cq_us, "us", 0, 1e6, 0.05, "assumed: CPU to reap a completion (as the rdma stacks)"),
    H_NUM(post_recv_us, "us", 0, 1e6, 0.05, "assumed: CPU to re-post a receive (as the rdma stacks)"),
    H_INT(signal_every, "", 1, 1 << 20, 16, "assumed: the channel signals one send in this many"),
    H_INT(recv_batch, "", 1, 1 << 20, 16, "assumed: the channel re-posts receives this many at a time"),
    H_NUM(plain_extra_us, "us", 0, 1e6, 0,
          "not given: CPU per message at each end that plain send/receive pays and the optimised channel does "
          "not (per-message registration, event-driven completions); the inputs name none of Rubin's "
          "optimisations and the fit's series has no plain stack, so 0"),
    H_INT(fw_copy_max_bytes, "bytes", 0, INT64_C(1) << 32, 90000,
          "bracketed by the published figures: the framework copies messages up to this size into its "
          "registered buffers and sends larger ones zero-copy (0: no copy at all); the published gain changes sign between 80 KB "
          "(copy) and 100 KB (none), the middle of that bracket"),
};

const SimParamSpec *sim_rubin_hw_params(guint *n_params) {
  if (n_params) *n_params = G_N_ELEMENTS(rubin_hw_params);
  return rubin_hw_params;
}

void sim_rubin_hw_default(SimRubinHw *hw) {
  memset(hw, 0, sizeof *hw);
  sim_params_defaults(rubin_hw_params, G_N_ELEMENTS(rubin_hw_params), hw);
}

static const char *const rubin_stack_names[SIM_RUBIN_N_STACKS] = {"tcp-nio", "rdma-plain", "rdma-channel",
                                                                  "rubin"};

const char *sim_rubin_stack_name(SimRubinStack s) {
  g_return_val_if_fail(s < SIM_RUBIN_N_STACKS, "?");
  return rubin_stack_names[s];
}

void sim_rubin_stacks(const SimRubinHw *hw, double java_us, double copy_ns_per_byte,
                      SimLogGP out[SIM_RUBIN_N_STACKS]) {
  double G = 8.0 / hw->gbps, java = java_us * 1e3;
  SimLogGP rdma = {.L_ns = hw->nic_L_us * 1e3,
                   .G_ns_per_byte = G,
                   .g_ns = hw->g_us * 1e3,
                   .dma_ns_per_byte = hw->dma_ns_per_byte,
                   .dma_read_ns = hw->dma_read_us * 1e3,
                   .inline_bytes = (uint64_t)hw->inline_bytes,
                   .mtu_bytes = (uint64_t)hw->roce_mtu_bytes};
  /* Java NIO over kernel TCP. The sender's NIO copies the whole heap buffer into a direct buffer before the
   * write() system call (serial); the kernel then copies it into socket buffers segment by segment while the
   * NIC sends (pipelined). The receiver's read loop copies each arriving chunk from the kernel into a direct
   * buffer and NIO copies it on into the heap (both pipelined with arrival, on one thread). */
  out[SIM_RUBIN_TCP] = (SimLogGP){.o_s_ns = hw->tcp_o_s_us * 1e3 + java,
                                  .o_r_ns = hw->tcp_o_r_us * 1e3 + java,
                                  .Os_ns_per_byte = copy_ns_per_byte,
                                  .Ps_ns_per_byte = copy_ns_per_byte,
                                  .Pr_ns_per_byte = 2 * copy_ns_per_byte,
                                  .L_ns = hw->tcp_L_us * 1e3,
                                  .G_ns_per_byte = G,
                                  .dma_ns_per_byte = hw->dma_ns_per_byte,
                                  .mtu_bytes = (uint64_t)hw->tcp_mtu_bytes};
  SimLogGP plain = rdma;
  plain.o_s_ns = java + (hw->post_send_us + hw->poll_cq_us + hw->plain_extra_us) * 1e3;
  plain.o_r_ns = java + (hw->poll_cq_us + hw->post_recv_us + hw->plain_extra_us) * 1e3;
  out[SIM_RUBIN_PLAIN] = plain;
  SimLogGP ch = rdma;
  ch.o_s_ns = java + (hw->post_send_us + hw->poll_cq_us / (double)hw->signal_every) * 1e3;
  ch.o_r_ns = java + (hw->poll_cq_us + hw->post_recv_us / (double)hw->recv_batch) * 1e3;
  out[SIM_RUBIN_CHANNEL] = ch;
  /* The framework copies a message into / out of its registered buffers at each end (serial), up to its
   * path switch; larger messages go zero-copy as on the channel. */
  ch.O_ns_per_byte = hw->fw_copy_max_bytes > 0 ? copy_ns_per_byte : 0; /* 0: no copy at any size */
  ch.O_max_bytes = (uint64_t)hw->fw_copy_max_bytes;
  out[SIM_RUBIN_FRAMEWORK] = ch;
}

const uint64_t SIM_RUBIN_FIT_SIZES[SIM_RUBIN_FIT_N] = {1024, 4096, 16384, 32768, 65536, 102400};

static double rubin_channel_gain(const SimRubinHw *hw, double java_us, double copy, uint64_t bytes) {
  SimLogGP st[SIM_RUBIN_N_STACKS];
  sim_rubin_stacks(hw, java_us, copy, st);
  return 1 - sim_loggp_one_way_ns(&st[SIM_RUBIN_CHANNEL], bytes) / sim_loggp_one_way_ns(&st[SIM_RUBIN_TCP], bytes);
}

typedef struct {
  const SimRubinHw *hw;
  double target, sigma;
} RubinFitData;

static int rubin_fit_f(const gsl_vector *x, void *data, gsl_vector *f) {
  const RubinFitData *d = data;
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    double g = rubin_channel_gain(d->hw, gsl_vector_get(x, 0), gsl_vector_get(x, 1), SIM_RUBIN_FIT_SIZES[i]);
    gsl_vector_set(f, i, (g - d->target) / d->sigma);
  }
  return GSL_SUCCESS;
}

gboolean sim_rubin_fit(const SimRubinHw *hw, SimRubinFit *out, GError **error) {
  g_return_val_if_fail(hw != NULL && out != NULL, FALSE);
  memset(out, 0, sizeof *out);
  RubinFitData d = {.hw = hw,
                    .target = (SIM_RUBIN_GAIN_LO + SIM_RUBIN_GAIN_HI) / 2,
                    .sigma = (SIM_RUBIN_GAIN_HI - SIM_RUBIN_GAIN_LO) / 2 / sqrt(3)};
  gsl_multifit_nlinear_fdf fdf = {.f = rubin_fit_f, .df = NULL, .fvv = NULL, .n = SIM_RUBIN_FIT_N, .p = 2,
                                  .params = &d};
  gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, SIM_RUBIN_FIT_N, 2);
  double x0_data[2] = {1.0, 0.1}; /* 1 µs, 0.1 ns/B: a start, not an answer */
  gsl_vector_view x0 = gsl_vector_view_array(x0_data, 2);
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int info = 0;
  int status = gsl_multifit_nlinear_init(&x0.vector, &fdf, w);
  if (status == GSL_SUCCESS) status = gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
  gboolean ok = status == GSL_SUCCESS;
  if (ok) {
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    out->java_us = gsl_vector_get(w->x, 0);
    out->copy_ns_per_byte = gsl_vector_get(w->x, 1);
    out->java_us_se = sqrt(gsl_matrix_get(cov, 0, 0));
    out->copy_ns_per_byte_se = sqrt(gsl_matrix_get(cov, 1, 1));
    out->correlation = gsl_matrix_get(cov, 0, 1) / (out->java_us_se * out->copy_ns_per_byte_se);
    gsl_matrix_free(cov);
    out->iterations = (guint)gsl_multifit_nlinear_niter(w);
  }
  gsl_set_error_handler(old);
  gsl_multifit_nlinear_free(w);
  if (!ok) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_FIT, "the fit did not converge: %s", gsl_strerror(status));
    return FALSE;
  }
  if (!(out->java_us >= 0 && out->java_us <= 1e3 && out->copy_ns_per_byte >= 0 && out->copy_ns_per_byte <= 100)) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_FIT,
                "the fit left its bounds: java_us %g (expected [0, 1000]), copy_ns_per_byte %g (expected [0, 100])",
                out->java_us, out->copy_ns_per_byte);
    return FALSE;
  }
  out->target = d.target;
  out->sigma = d.sigma;
  out->dof = SIM_RUBIN_FIT_N - 2;
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    out->model_gain[i] = rubin_channel_gain(hw, out->java_us, out->copy_ns_per_byte, SIM_RUBIN_FIT_SIZES[i]);
    out->residual[i] = out->model_gain[i] - d.target;
    out->chi2 += (out->residual[i] / d.sigma) * (out->residual[i] / d.sigma);
  }
  return TRUE;
}

static void add_check(SimRubinCheck *out, guint *n, const char *what, const char *published, uint64_t bytes,
                      double value, double lo, double hi) {
  g_assert(*n < SIM_RUBIN_MAX_CHECKS);
  double mid = (lo + hi) / 2;
  out[(*n)++] = (SimRubinCheck){.what = what,
                                .published = published,
                                .bytes = bytes,
                                .value = value,
                                .lo = lo,
                                .hi = hi,
                                .holds = value >= lo && value <= hi,
                                .has_direction = hi < 1,
                                .sign_holds = hi < 1 && (mid > 0 ? value > 0 : value < 0)};
}

/* One request alone on n = 4 (latency, µs) or 8 clients under load (throughput, requests per second). */
static double rubin_bft(const SimLogGP *lg, uint64_t payload, gboolean loaded) {
  SimBftConfig cfg;
  sim_bft_config_default(&cfg);
  cfg.payload_bytes = payload;
  if (loaded) {
    cfg.requests = 25;
  } else {
    cfg.clients = cfg.requests = cfg.batch = 1;
  }
  SimBftResult r;
  gboolean ok = sim_bft_run(lg, &cfg, &r, NULL);
  g_assert(ok);
  return loaded ? r.throughput_rps : r.latency_mean_us;
}

guint sim_rubin_checks(const SimLogGP st[SIM_RUBIN_N_STACKS], SimRubinCheck *out) {
  guint n = 0;
  const SimLogGP *tcp = &st[SIM_RUBIN_TCP], *plain = &st[SIM_RUBIN_PLAIN], *ch = &st[SIM_RUBIN_CHANNEL],
                 *fw = &st[SIM_RUBIN_FRAMEWORK];
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t m = SIM_RUBIN_FIT_SIZES[i];
    add_check(out, &n, "channel vs tcp-nio, throughput gain", "33-43% higher", m,
              sim_loggp_gain(ch, tcp, m).throughput, SIM_RUBIN_GAIN_LO, SIM_RUBIN_GAIN_HI);
  }
  static const uint64_t small[] = {1024, 4096, 8192};
  for (guint i = 0; i < G_N_ELEMENTS(small); i++)
    add_check(out, &n, "channel vs rdma-plain, latency gain", "30% lower for messages < 16 KB", small[i],
              sim_loggp_gain(ch, plain, small[i]).latency, 0.295, 0.305);
  for (guint i = 0; i < G_N_ELEMENTS(small); i++)
    add_check(out, &n, "channel vs rdma-plain, throughput gain", "30% higher", small[i],
              sim_loggp_gain(ch, plain, small[i]).throughput, 0.295, 0.305);
  static const uint64_t fw_sizes[] = {1000, 100000, 20000, 40000, 60000, 80000};
  for (guint i = 0; i < G_N_ELEMENTS(fw_sizes); i++) {
    uint64_t m = fw_sizes[i];
    gboolean mid = m >= 20000 && m <= 80000;
    double gain = 1 - rubin_bft(fw, m, FALSE) / rubin_bft(tcp, m, FALSE);
    if (mid)
      add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), latency gain", "20% higher latency at 20-80 KB", m,
                gain, -0.205, -0.195);
    else
      add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), latency gain", "19-20% lower at 1 KB and 100 KB", m,
                gain, 0.19, 0.20);
  }
  static const uint64_t tp_sizes[] = {1000, 100000};
  for (guint i = 0; i < G_N_ELEMENTS(tp_sizes); i++)
    add_check(out, &n, "rubin vs tcp-nio in PBFT (n 4), throughput gain", "25-38% higher", tp_sizes[i],
              rubin_bft(fw, tp_sizes[i], TRUE) / rubin_bft(tcp, tp_sizes[i], TRUE) - 1, 0.25, 0.38);
  for (guint i = 0; i < SIM_RUBIN_FIT_N; i++) {
    uint64_t m = SIM_RUBIN_FIT_SIZES[i];
    add_check(out, &n, "tcp-nio: copies' share of one-way latency", "> 50% (Frey et al. ICDCS'09)", m,
              sim_loggp_one_way_copy_ns(tcp, m) / sim_loggp_one_way_ns(tcp, m), 0.5, 1.0);
  }
  return n;
}

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

gboolean sim_rubin_machine_load(const char *path, SimRubinMachine *out, SimDiag *diag) {
  g_return_val_if_fail(path != NULL && out != NULL && diag != NULL, FALSE);
  memset(out, 0, sizeof *out);
  g_autofree char *data = NULL;
  gsize len = 0;
  g_autoptr(GError) e = NULL;
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    sim_diag_add_raw(diag, "cannot open: Is a directory");
    return FALSE;
  }
  if (!g_file_get_contents(path, &data, &len, &e)) {
    sim_diag_add_raw(diag, "cannot open: %s",
                     e->domain == G_FILE_ERROR && e->code == G_FILE_ERROR_NOENT ? "No such file or directory"
                                                                                : e->message);
    return FALSE;
  }
  json_error_t err;
  g_autoptr(json_t) root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &err);
  if (!root) {
    sim_diag_add_at(diag, err.line, err.column, "%s", err.text);
    return FALSE;
  }
  if (!json_is_object(root)) {
    sim_diag_add(diag, "$", "must be an object (got %s)", sim_json_kind(root));
    return FALSE;
  }
  guint before = sim_diag_count(diag);
  const char *key;
  json_t *v;
  json_object_foreach(root, key, v) {
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
    if (sim_params_parse(rubin_hw_params, G_N_ELEMENTS(rubin_hw_params), copy, "$.hardware", NULL, &parsed, diag))
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
  for (guint i = 0; i < G_N_ELEMENTS(rubin_hw_params); i++) {
    const SimParamSpec *s = &rubin_hw_params[i];
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
