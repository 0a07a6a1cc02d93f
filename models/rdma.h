/* rdma.h: messaging stacks for BFT ordering nodes (kernel TCP, RDMA send/receive, RDMA write, an RDMA
 * channel with buffer pools and selective signalling) as LogGP message costs, and a PBFT ordering service
 * (or a hybrid 2f+1 protocol) simulated on the event engine with those costs.
 *
 * One message of m bytes, LogGP (Alexandrov et al., SPAA 1995) with LogGOPS's per-byte CPU overhead O
 * (Hoefler et al., HPDC 2010), the NIC's store-and-forward of the first packet, and per-byte CPU work that is
 * either serial (a whole-message copy before the send or after the receive) or pipelined with the wire (a
 * copy done packet by packet as the NIC sends or as packets arrive, as the kernel's TCP copies are):
 *
 *   serial bytes  O_s = O + Os (sender), O_r = O (receiver); O, Os apply only to m <= O_max (0: all m)
 *   send CPU      s(m) = c(m)·o_s + O_s·m + Ps·m               (c(m) = chunks of at most chunk_bytes)
 *   lead          a(m) = c(m)·o_s + O_s·m + Ps·p               (CPU before the NIC can start; p = min(m, mtu))
 *   NIC gap       d(m) = max(c(m)·g, m·G_b)                    (G_b = max(G, G_dma), the NIC's bottleneck)
 *   first packet  w1(m) = L + [m > inline_bytes]·dma_read + p·(2·G_dma + G)
 *   the rest      wr(m) = (m − p)·max(G_b, Ps)                  (the sender's pipelined copy can bind)
 *   receive CPU   r(m) = c(m)·o_r + O_r·m + Pr·m, of which r_t(m) = c(m)·o_r + O_r·m + Pr·p is left after the
 *                 last packet (the receiver copies packets as they arrive)
 *   one way       T(m) = a(m) + w1(m) + max(wr(m) + r_t(m), r(m))
 *
 * Without pipelined bytes (Ps = Pr = Os = 0, the built-in stacks) T(m) = s(m) + L + ... + r(m) as in LogGP. The
 * CPUs are busy s(m) and r(m) per message whatever overlaps, so back-to-back sends from one host leave the NIC
 * max(s(m), d(m)) apart (DESIGN.md: "spaced by max(g, o_s, m·G)") and a stream of messages runs at
 * 1 / max(s(m), d(m), r(m)): the busiest of sender CPU, NIC and receiver CPU. A PBFT phase to k peers that
 * waits for a quorum of q costs
 *
 *   phase(m, k, q) = a(m) + (k − 1)·max(s(m), d(m)) + w1(m) + max(wr(m) + r_t(m), r(m)) + c_v(m)
 *                    + (q − 1)·(r(m) + c_v(m))
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
  /* Added for Rubin's Java stacks; 0 in the built-in stacks. */
  double Os_ns_per_byte;  /* sender CPU per byte, serial, on top of O (a whole-message copy before the send) */
  double Ps_ns_per_byte;  /* sender CPU per byte pipelined with the NIC (copied packet by packet) */
  double Pr_ns_per_byte;  /* receiver CPU per byte pipelined with arrival (copied packet by packet) */
  uint64_t O_max_bytes;   /* O and Os apply to messages up to this size only (a path switch); 0: to all */
} SimLogGP;

/* Number of sends a message of `bytes` takes (>= 1). */
uint64_t sim_loggp_chunks(const SimLogGP *lg, uint64_t bytes);
/* s(m) and r(m): how long each end's CPU is busy with the message (serial and pipelined work). */
double sim_loggp_send_cpu_ns(const SimLogGP *lg, uint64_t bytes);
double sim_loggp_recv_cpu_ns(const SimLogGP *lg, uint64_t bytes);
/* a(m): the sender's CPU time before the NIC can start the message (<= s(m)). */
double sim_loggp_send_lead_ns(const SimLogGP *lg, uint64_t bytes);
/* r_t(m): the receiver's CPU time left after the last byte is in memory (<= r(m)). */
double sim_loggp_recv_tail_ns(const SimLogGP *lg, uint64_t bytes);
/* How long the sending NIC is busy with the message. */
double sim_loggp_gap_ns(const SimLogGP *lg, uint64_t bytes);
/* w1(m) + wr(m): from the moment the NIC starts the message to its last byte in the receiver's memory, unloaded. */
double sim_loggp_wire_ns(const SimLogGP *lg, uint64_t bytes);
/* wr(m): the part of the wire time after the first packet is in the receiver's memory. */
double sim_loggp_wire_rest_ns(const SimLogGP *lg, uint64_t bytes);
/* T(m): the one-way time of one message on idle hosts. */
double sim_loggp_one_way_ns(const SimLogGP *lg, uint64_t bytes);
/* The part of T(m) on its critical path that is per-byte CPU work (the copies): the serial bytes, the
 * pipelined bytes of the first packet at each end, and the rest of the message where a pipelined copy rather
 * than the NIC binds. */
double sim_loggp_one_way_copy_ns(const SimLogGP *lg, uint64_t bytes);
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
  SIM_BFT_VIEW_CHANGE, /* a replica's vote to leave its view, with its prepared instances */
  SIM_BFT_NEW_VIEW,    /* the new primary's proof of 2f+1 view changes and the instances it re-proposes */
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
  /* Faults (PBFT only; any of them arms the timers below). */
  double leader_crash_us;   /* the view-0 primary crashes at this time (< 0: never) */
  double leader_delay_us;   /* a slow view-0 primary: each pre-prepare leaves this much later (0: none) */
  guint crashed_backups;    /* replicas n−1, n−2, ... crashed from the start (with a crashed leader: <= f−1) */
  double client_timeout_us; /* a client retransmits its request to every replica after this long */
  double view_timeout_us;   /* a backup holding an unexecuted request starts a view change after this long;
                               doubled for each further view while it waits for a new view */
} SimBftConfig;

/* Defaults: n 4, PBFT, 8 clients × 200 requests, batch 8, window 4, payload 1024 B, c_v = 1 µs + 0.5 ns/B
 * (HMAC-SHA-256 with SHA extensions), execution 1 µs, no trusted-counter cost; no faults, client timeout
 * 10 ms, view timeout 20 ms. */
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
  guint view;            /* the highest view a live replica reached (0 without a view change) */
  uint64_t reproposed;   /* instances re-proposed in new views (with requests; null ones not counted) */
  uint64_t retransmits;  /* client requests sent again to every replica after a timeout */
} SimBftResult;

/* TRUE when `cfg` configures a fault (then the timers run). */
gboolean sim_bft_faulty(const SimBftConfig *cfg);

/* Faults and the view change (PBFT, Castro and Liskov, OSDI 1999), when sim_bft_faulty(cfg):
 *  - a crashed host drops every event from its crash time on (sends already handed to its NIC still leave);
 *  - a client that has no f+1 replies client_timeout after sending retransmits the request to every replica
 *    (n messages) and re-arms; replies carry the view, and a client sends to the primary of the highest
 *    view it has seen;
 *  - a backup that receives a request it has not executed keeps it and starts its view timer (unless it
 *    runs); executing a request restarts it while others wait, stops it otherwise. A primary that gets a
 *    request already executed sends the reply again;
 *  - on expiry a replica multicasts VIEW-CHANGE for view v+1 (header + (2f+1) headers per prepared,
 *    unexecuted instance) and ignores normal messages until a new view; a replica that sees f+1 view changes
 *    for a higher view joins it; a waiting replica's timer (doubled) moves it on to the next view;
 *  - the primary of view v (v mod n) with 2f view changes from others and its own sends NEW-VIEW (the view
 *    changes' bytes and one header per instance) re-proposing every sequence number from the lowest executed
 *    one among those 2f+1 to the highest prepared: with its batch where one of them prepared it, empty
 *    (null) otherwise; backups prepare each as a pre-prepare of view v, and the new primary then orders the
 *    requests it holds that no re-proposed batch carries.
 * Not modelled: checkpoints (a view change carries every prepared, unexecuted instance), state transfer,
 * request forwarding by backups, signatures on view changes (c_v applies as to any message). */

/* Runs the ordering service on the event engine: replicas 0..n−1 (0 is the primary of view 0) and
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


/* ---- Rubin's question: what a stack changes in the ordering service ----
 * Each stack runs the same configuration (sim_bft_run()); its gains are over the base stack's run: latency
 * 1 − mean latency / base's (0.25: 25% lower) and throughput / base's − 1 (0.25: 25% more requests per
 * second). A gain that is near 0 has vanished: the stack's costs no longer matter beside the rest (c_v,
 * batching, the quorums' waits). */
typedef struct {
  SimBftResult result;
  double latency_gain, throughput_gain;
} SimBftStackOutcome;

/* Runs `cfg` on each of the `n_stacks` stacks into out[0..n_stacks-1], gains over stacks[base]. Deterministic.
 * FALSE with the first run's error. */
gboolean sim_bft_compare(const SimLogGP *stacks, guint n_stacks, guint base, const SimBftConfig *cfg,
                         SimBftStackOutcome *out, GError **error);

/* ---- Rubin's hardware: the stacks of 2018, their fit and the checks ----
 *
 * Rubin (Schwarz-Rüsch, Messadi, Kapitza, DSN-W 2018; perf-models.json rubin_2018_seed) compared, between two
 * 4-core Xeon v2 servers with ConnectX-3 NICs on a 10 Gb/s switch, Java stacks: Java NIO over kernel TCP, plain
 * RDMA send/receive, its optimised RDMA channel, and the Rubin framework inside a BFT stack. The four stacks here
 * are built from one set of hardware constants, SimRubinHw: fixed ones (published, derived or assumed; each
 * parameter's help says which) and two fitted ones:
 *
 *   java_us           the Java layer's CPU per message at each end (the selector loop, buffer handling,
 *                     the JNI or system-call crossing), the same in every Java stack;
 *   copy_ns_per_byte  one memory copy per byte on this CPU: the kernel's copy, Java NIO's copy between heap
 *                     and direct buffers, and the framework's copy into its registered buffers all cost it.
 *
 *   tcp-nio       o_s = tcp_o_s + java, o_r = tcp_o_r + java, L = tcp_L, Ethernet MTU; per byte: NIO's copy
 *                 from the heap into a direct buffer before write() (serial, Os = copy), the kernel's copy into
 *                 socket buffers while the NIC sends (pipelined, Ps = copy), and at the receiver the kernel's
 *                 copy and NIO's copy into the heap per chunk read as it arrives (pipelined, Pr = 2·copy). Its
 *                 CPUs are busy 2·copy per byte at each end, so it is CPU-bound above 0.4 ns/B per copy at 10 Gb/s;
 *   rdma-plain    o_s = java + post_send + poll_cq + plain_extra, o_r = java + poll_cq + post_recv + plain_extra,
 *                 zero copy, L = nic_L, RoCE MTU, DMA read of payloads above inline_bytes;
 *   rdma-channel  as rdma-plain without plain_extra, one send in signal_every signalled and receives re-posted
 *                 recv_batch at a time (Rubin's optimised channel, zero copy);
 *   rubin         rdma-channel with the framework's remaining copy into / out of its registered buffers at
 *                 each end (serial, O = copy) for messages up to fw_copy_max_bytes; larger ones zero-copy.
 *
 * The fit: the RDMA channel's latency gain over TCP, 1 − T_channel(m) / T_tcp(m), against Rubin's "33–43%
 * lower" read as 38% ± 5/√3 (a uniform over the range: the publication gives a range, not per-size values) at
 * each of the sizes SIM_RUBIN_FIT_SIZES (1 KiB to 100 KB, the sizes the in-stack figures name), by nonlinear
 * least squares (GSL multifit_nlinear). Standard errors are from the covariance at that σ, not rescaled by
 * χ²/dof. Nothing else is fitted: the checks (sim_rubin_checks()) use the fitted values as they are. */

typedef struct {
  double gbps;                                   /* link */
  double tcp_o_s_us, tcp_o_r_us, tcp_L_us;       /* kernel TCP */
  int64_t tcp_mtu_bytes;
  double nic_L_us;                               /* RDMA NIC, wire and switch, fixed part */
  double dma_ns_per_byte, dma_read_us;           /* PCIe */
  int64_t inline_bytes, roce_mtu_bytes;
  double g_us;                                   /* NIC message rate */
  double post_send_us, poll_cq_us, post_recv_us; /* verbs calls */
  int64_t signal_every, recv_batch;
  double plain_extra_us;                         /* plain send/receive's own CPU per message at each end */
  int64_t fw_copy_max_bytes;                     /* the framework copies messages up to this size */
} SimRubinHw;

/* The parameter table of SimRubinHw (name with unit, bounds, default, help with the source). */
const SimParamSpec *sim_rubin_hw_params(guint *n_params);
void sim_rubin_hw_default(SimRubinHw *hw);

typedef enum { SIM_RUBIN_TCP = 0, SIM_RUBIN_PLAIN, SIM_RUBIN_CHANNEL, SIM_RUBIN_FRAMEWORK, SIM_RUBIN_N_STACKS } SimRubinStack;
/* "tcp-nio", "rdma-plain", "rdma-channel", "rubin". */
const char *sim_rubin_stack_name(SimRubinStack s);
/* The four stacks' LogGP descriptions from the hardware and the two fitted constants. */
void sim_rubin_stacks(const SimRubinHw *hw, double java_us, double copy_ns_per_byte,
                      SimLogGP out[SIM_RUBIN_N_STACKS]);

#define SIM_RUBIN_FIT_N 6
extern const uint64_t SIM_RUBIN_FIT_SIZES[SIM_RUBIN_FIT_N]; /* 1024, 4096, 16384, 32768, 65536, 102400 */
#define SIM_RUBIN_GAIN_LO 0.33
#define SIM_RUBIN_GAIN_HI 0.43

typedef struct {
  double java_us, copy_ns_per_byte;       /* fitted values */
  double java_us_se, copy_ns_per_byte_se; /* standard errors */
  double correlation;                     /* between the two estimates */
  double target, sigma;                   /* 0.38, 0.05/√3 */
  double model_gain[SIM_RUBIN_FIT_N];     /* at the fitted values */
  double residual[SIM_RUBIN_FIT_N];       /* model − target */
  double chi2;
  guint dof, iterations;
} SimRubinFit;

/* Fits java_us and copy_ns_per_byte as above. Deterministic. FALSE with SIM_BFT_ERROR_FIT when the solver
 * fails or the estimates leave their bounds (java_us in [0, 1e3] µs, copy in [0, 100] ns/B). */
gboolean sim_rubin_fit(const SimRubinHw *hw, SimRubinFit *out, GError **error);

/* One check of a published figure against the fitted model (nothing refitted). `value` is the model's figure
 * at `bytes` (0 where no size applies); it holds when it lies in [lo, hi] (the published range; a single
 * published figure "30%" is read as [29.5, 30.5], its rounding; "> 50%" as [50, 100]). `sign_holds`: the
 * model's gain has the published sign (direction) at least; not defined for the share check. */
typedef struct {
  const char *what;      /* a short name, e.g. "channel throughput gain" */
  const char *published; /* as perf-models.json says it */
  uint64_t bytes;
  double value, lo, hi;
  gboolean holds;
  gboolean has_direction, sign_holds; /* FALSE, FALSE for a share (the direction means nothing there) */
} SimRubinCheck;

#define SIM_RUBIN_MAX_CHECKS 40
/* Computes every check with the stacks `st` (from sim_rubin_stacks()) into `out` (SIM_RUBIN_MAX_CHECKS
 * entries); returns how many. The in-BFT-stack checks run the PBFT simulation: n = 4, c_v and execution at
 * their defaults, latency of one request alone, throughput under 8 clients x 25 requests, batch 8, window 4. */
guint sim_rubin_checks(const SimLogGP st[SIM_RUBIN_N_STACKS], SimRubinCheck *out);


/* ---- Machine files (models/machines/rdma/rubin-2018.json): the hardware constants and the stored fit ----
 * {"name": ..., "comment": [...], "hardware": {SimRubinHw's parameters}, "fit": {"java_us", "java_us_stderr",
 *  "copy_ns_per_byte", "copy_ns_per_byte_stderr", "correlation", "target_gain", "sigma", "chi2", "dof",
 *  "iterations", "sizes_bytes", "model_gain", "residuals", "method"}}. Missing hardware keys take their
 * defaults; the fit needs java_us and copy_ns_per_byte. */
typedef struct {
  char *name;
  SimRubinHw hw;
  gboolean has_fit;
  double java_us, copy_ns_per_byte; /* the stored fit, when has_fit */
} SimRubinMachine;

/* Reads a parsed machine file (the command loads it through sim/core/input.h, which reports syntax errors as
 * "PATH:LINE:COL: message"); problems as "$.json.path: message" in `diag` (whose file names the file; all
 * found in one pass). FALSE on any problem. Free the name with sim_rubin_machine_clear(). */
gboolean sim_rubin_machine_from_json(const json_t *root, SimRubinMachine *out, SimDiag *diag);
void sim_rubin_machine_clear(SimRubinMachine *m);
/* The machine file of `hw` and `fit` (a new reference): what `sim bft rubin --write` stores. */
json_t *sim_rubin_machine_to_json(const char *name, const SimRubinHw *hw, const SimRubinFit *fit);

#define SIM_BFT_ERROR (sim_bft_error_quark())
GQuark sim_bft_error_quark(void);
typedef enum { SIM_BFT_ERROR_CONFIG, SIM_BFT_ERROR_FIT } SimBftError;

G_END_DECLS
