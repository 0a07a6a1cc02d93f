/* rdma.h: messaging stacks for BFT ordering nodes (kernel TCP, RDMA send/receive, RDMA write, an RDMA
 * channel with buffer pools and selective signalling) as LogGP message costs, and a PBFT ordering service
 * (or a hybrid 2f+1 protocol) simulated on the event engine with those costs.
 *
 * One message of m bytes, LogGP (Alexandrov et al., SPAA 1995) with LogGOPS's per-byte CPU overhead O
 * (Hoefler et al., HPDC 2010) and the NIC's store-and-forward of the first packet:
 *
 *   send CPU     s(m) = c(m)·o_s + O·m                       (c(m) = chunks: sends of at most chunk_bytes)
 *   NIC gap      d(m) = max(c(m)·g, m·G_b)                    (G_b = max(G, G_dma), the pipeline's
 * bottleneck) wire         w(m) = L + [m > inline_bytes]·dma_read + p·(2·G_dma + G) + (m − p)·G_b,  p =
 * min(m, mtu) receive CPU  r(m) = c(m)·o_r + O·m one way      T(m) = s(m) + w(m) + r(m)
 *
 * The first packet crosses three store-and-forward stages (sender DMA read, wire, receiver DMA write); the
 * rest streams at the slowest stage. Back-to-back sends from one host leave the NIC max(s(m), d(m)) apart
 * (DESIGN.md: "spaced by max(g, o_s, m·G)"). A PBFT phase to k peers that waits for a quorum of q costs
 *
 *   phase(m, k, q) = s(m) + (k − 1)·max(s(m), d(m)) + w(m) + q·(r(m) + c_v(m))
 *
 * which is the equation o_s + (k−1)g + L + mG + q(o_r + c_v) of DESIGN.md with the terms above.
 * All times are nanoseconds (double in the cost functions, SimTime in the simulation), sizes bytes.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine.h"
#include "params.h"

G_BEGIN_DECLS

/* The LogGP description of one stack on one fabric. Filled by a stack model from its parameters. */
typedef struct {
  double o_s_ns;          /* sender CPU per send (per chunk) */
  double o_r_ns;          /* receiver CPU per received send (per chunk) */
  double O_ns_per_byte;   /* CPU per byte at each end (copies) */
  double L_ns;            /* fixed latency: NICs, wire, switch, interrupts and wake-ups */
  double G_ns_per_byte;   /* wire time per byte (1 / link bandwidth) */
  double g_ns;            /* smallest interval between two sends leaving the NIC (message rate) */
  double dma_ns_per_byte; /* host memory <-> NIC per byte, each end (PCIe) */
  double dma_read_ns;     /* extra latency of a send whose payload the NIC must fetch (not inlined) */
  uint64_t inline_bytes;  /* sends up to this size carry their payload in the descriptor */
  uint64_t mtu_bytes;     /* packet size: the store-and-forward unit (>= 1) */
  uint64_t chunk_bytes;   /* size of one send buffer (messages larger are split); 0: no limit */
} SimLogGP;

/* Number of sends a message of `bytes` takes (>= 1). */
uint64_t sim_loggp_chunks(const SimLogGP *lg, uint64_t bytes);
double sim_loggp_send_cpu_ns(const SimLogGP *lg, uint64_t bytes);
double sim_loggp_recv_cpu_ns(const SimLogGP *lg, uint64_t bytes);
/* How long the sending NIC is busy with the message. */
double sim_loggp_gap_ns(const SimLogGP *lg, uint64_t bytes);
/* From the moment the NIC starts the message to the last byte in the receiver's memory, unloaded. */
double sim_loggp_wire_ns(const SimLogGP *lg, uint64_t bytes);
/* Send CPU + wire + receive CPU: the one-way time of one message on idle hosts. */
double sim_loggp_one_way_ns(const SimLogGP *lg, uint64_t bytes);
/* The closed-form phase cost above; `cv_ns` is the receiver's per-message verification time. k >= 1. */
double sim_loggp_phase_ns(const SimLogGP *lg, uint64_t bytes, guint k, guint q, double cv_ns);
/* Messages per second one host can stream to one other: 1 / max(s(m), d(m), r(m)). */
double sim_loggp_stream_msgs_per_s(const SimLogGP *lg, uint64_t bytes);

/* What stack `fast` gains over stack `base` for one message of `bytes` between two idle hosts: latency
 * 1 - one_way(fast) / one_way(base) (0.4: 40% lower) and throughput stream(fast) / stream(base) - 1 (0.4:
 * 40% more messages per second). Rubin's comparison (`sim bft rubin`) is this, channel over TCP. */
typedef struct {
  double latency, throughput;
} SimLoggpGain;
SimLoggpGain sim_loggp_gain(const SimLogGP *fast, const SimLogGP *base, uint64_t bytes);

/* ---- The "stack" model family ---- */

typedef struct {
  SimModelInfo info;
  /* Fills `out` from the model's parameter struct. */
  void (*loggp)(const void *params, SimLogGP *out);
} SimStackModel;

extern const SimStackModel sim_stack_tcp;          /* "tcp" */
extern const SimStackModel sim_stack_rdma_send;    /* "rdma-send" */
extern const SimStackModel sim_stack_rdma_write;   /* "rdma-write" */
extern const SimStackModel sim_stack_rdma_channel; /* "rdma-channel" */

/* Every stack model, in a stable order, NULL-terminated. */
const SimStackModel *const *sim_stack_models(void);
/* The stack model called `name`, or NULL. */
const SimStackModel *sim_stack_find(const char *name);

/* The LogGP description of a parsed model choice (e.g. from sim_model_ref_parse() with family "stack"). */
void sim_stack_loggp(const SimModelRef *ref, SimLogGP *out);
/* The LogGP description of stack `name` with every parameter at its default. FALSE for an unknown name. */
gboolean sim_stack_default_loggp(const char *name, SimLogGP *out);

/* Wire-in hook for other models (e.g. a pool's work distribution choosing a stack): the one-way time, in
 * nanoseconds, of one message of `bytes` between two idle hosts over the stack `ref` (send CPU + wire +
 * receive CPU, sim_loggp_one_way_ns() rounded). Pure: no state, safe from any handler. */
SimTime sim_stack_message_ns(const SimModelRef *ref, uint64_t bytes);
/* The same for stack `name` at its defaults; -1 for an unknown name. */
SimTime sim_stack_message_ns_by_name(const char *name, uint64_t bytes);
/* Wire-in hook for links whose latency is already known (the geo network's dc_stack): the host overheads
 * of one message of one send on stack `name` at its defaults, o_s + o_r in ns, rounded: what the two
 * hosts' CPUs add to the wire latency (per-byte copies and the NIC's DMA left out). -1 for an unknown
 * name. */
SimTime sim_stack_host_overhead_ns_by_name(const char *name);

/* ---- The ordering service ---- */

/* Message kinds, in protocol order. For the hybrid protocol PREPREPARE is the primary's ordering message
 * (MinBFT's PREPARE) and there is no PREPARE phase. */
typedef enum {
  SIM_BFT_REQUEST = 0,
  SIM_BFT_PREPREPARE,
  SIM_BFT_PREPARE,
  SIM_BFT_COMMIT,
  SIM_BFT_REPLY,
  SIM_BFT_N_KINDS
} SimBftKind;

/* Name of a kind ("request", "pre-prepare", ...). */
const char *sim_bft_kind_name(SimBftKind kind);

/* Bytes of a protocol header (type, view, sequence number, digest, MAC). Prepares, commits and replies
 * are one header; a request is a header and its payload; a pre-prepare is a header and its requests. */
#define SIM_BFT_HEADER_BYTES 64
#define SIM_BFT_MAX_PAYLOAD_BYTES (UINT64_C(1) << 24)
#define SIM_BFT_MAX_BATCH 128
#define SIM_BFT_MAX_N 1000
/* Largest n × clients × requests: each replica keeps 5 bytes per possible instance. */
#define SIM_BFT_MAX_STATE (UINT64_C(1) << 28)

typedef struct {
  guint n;                   /* replicas */
  gboolean hybrid;           /* n = 2f+1 with a trusted counter (MinBFT-like) instead of PBFT's n = 3f+1 */
  guint clients;             /* closed-loop clients, one outstanding request each */
  guint requests;            /* requests per client */
  guint batch;               /* most requests per pre-prepare */
  guint window;              /* most instances the primary keeps in flight */
  uint64_t payload_bytes;    /* request payload */
  double verify_us;          /* c_v: CPU per received message (MAC check) ... */
  double verify_ns_per_byte; /* ... plus this per byte */
  double execute_us;         /* CPU per executed request */
  double usig_us;            /* hybrid only: trusted-counter CPU per certified send and per check */
} SimBftConfig;

/* Defaults: n 4, PBFT, 8 clients × 200 requests, batch 8, window 4, payload 1024 B, c_v = 1 µs + 0.5 ns/B
 * (HMAC-SHA-256 with SHA extensions), execution 1 µs, no trusted-counter cost. */
void sim_bft_config_default(SimBftConfig *cfg);
/* f: (n − 1)/3 for PBFT, (n − 1)/2 for the hybrid protocol. */
guint sim_bft_f(const SimBftConfig *cfg);
/* Checks a configuration; FALSE with SIM_BFT_ERROR_CONFIG and a message naming the field. */
gboolean sim_bft_config_check(const SimBftConfig *cfg, GError **error);

/* Messages of `kind` per ordering instance with one request (batch 1) and one client: PBFT request 1,
 * pre-prepare n−1, prepare (n−1)², commit n(n−1), reply n (2n² − n + 1 in all); hybrid request 1,
 * prepare n−1, commit (n−1)², reply n. */
uint64_t sim_bft_messages_per_instance(guint n, gboolean hybrid, SimBftKind kind);

typedef struct {
  uint64_t messages[SIM_BFT_N_KINDS]; /* sent over the network, per kind */
  uint64_t messages_total;
  uint64_t instances; /* ordering instances (batches) */
  uint64_t completed; /* requests whose client got f+1 replies */
  double latency_mean_us, latency_p50_us, latency_p99_us, latency_max_us;
  double throughput_rps; /* completed / makespan */
  double makespan_s;     /* time of the last completion */
  uint64_t events;       /* engine events processed */
} SimBftResult;

/* Runs the ordering service on the event engine: replicas 0..n−1 (0 is the primary, view 0, no faults) and
 * the clients, every host with one CPU (a FIFO of received messages: r(m) + c_v(m) each, then the protocol's
 * sends: s(m) each), one NIC (sends leave max(s, d) apart) and an ingress link (m·G_b per message).
 * Deterministic. FALSE with an error for a bad configuration. */
gboolean sim_bft_run(const SimLogGP *lg, const SimBftConfig *cfg, SimBftResult *out, GError **error);

/* The closed-form latency of one request on idle hosts (batch 1): the sum of the phases request (k 1, q 1),
 * pre-prepare (k n−1, q 1), prepare (k n−1, q 2f), commit (k n−1, q 2f+1), execution, reply (k 1, q f+1);
 * hybrid: request, prepare (k n−1, q 1), commit (k n−1, q f+1), execution, reply. A cross-check, not a
 * bound: it charges q receptions where a replica's own vote is free (so it runs above the simulation for
 * small n), but it ignores the receptions a CPU works through before its quorum's (so it can run below it
 * for large n and cheap receives). */
double sim_bft_closed_form_ns(const SimLogGP *lg, const SimBftConfig *cfg);

#define SIM_BFT_ERROR (sim_bft_error_quark())
GQuark sim_bft_error_quark(void);
typedef enum { SIM_BFT_ERROR_CONFIG } SimBftError;

G_END_DECLS
