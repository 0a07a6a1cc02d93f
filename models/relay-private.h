/* relay-private.h: what the files of the Geth relay kernel share (relay.c: the step loop and the windows;
 * relay_work.c, relay_groups.c, relay_kernel.c, relay_threads.c, relay_stop.c): its records, and the
 * inline helpers that more than one of them needs. Not part of the relay's interface (relay.h). */
#pragma once

#include "relay.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "spinwait.h" /* sim_mono_ns, the threads' waits */

enum { STEP_HAVE = 0, STEP_PUSH = 1, STEP_ANNOUNCE = 2 };

/* RelayWork.done: a node's full-block time is final (YES), or it is a joining node not synced when the
 * block left (UNAVAILABLE, net_joining_first_unavailable()). Such a node is marked done with a have time
 * far in the past before the loop starts: every test the kernel already makes then treats it as a node
 * that needs nothing (a push to it is sent and lost, without a latency draw; an announcement likewise),
 * and it never takes a step, so it relays nothing; no test is added to the loop. */
enum { DONE_NO = 0, DONE_YES = 1, DONE_UNAVAILABLE = 2 };
#define HAVE_UNAVAILABLE (-(SIM_TIME_MAX / 4))

/* A step is one 64-bit key: time since the block's first source (40 bits of ns: 18 minutes), node (22
 * bits, the kernel's own numbering, see RelayGroups.order), kind (2 bits). Keys order steps by (time,
 * node, kind), so ties never depend on insertion order. */
#define STEP_TIME_BITS 40
#define STEP_NODE_BITS 22
#define STEP_KEY_SHIFT (STEP_NODE_BITS + 2)
#define STEP_TIME_MAX ((UINT64_C(1) << STEP_TIME_BITS) - 1)
#define STEP_NODE_MASK ((UINT32_C(1) << STEP_NODE_BITS) - 1)

/* Everything the Geth kernel reads and writes of directed edge e = v->u, in one 16-byte record stored in
 * v's adjacency order, so that scanning a node's edges brings in all it needs:
 *  - word: cross (bit 63: u is in another group) | u (bits 42..62) | lazy (bit 41) | sent (bit 40: v sent
 *    u the block or an announcement) | heard (bits 0..39): when v heard from u, in ns after the block's
 *    first source (all ones: not heard). u sends v at most one message per block (a push or an
 *    announcement), arriving at its send time plus a latency drawn from the stream of (block, edge u->v):
 *    a pure function of the block and the edge. Where that latency was not needed when the message was
 *    applied (the message could not be first at v), the draw is left for later: lazy is set and heard holds
 *    the send time plus the link's floor, a lower bound; v's first decision at or after that bound draws it
 *    (the same value) and stores the arrival. So what v knows is exact, whoever applied the message and
 *    whenever. The sent, lazy and heard bits are reset at the start of each propagation. Only v's worker
 *    writes the record: v's sends, and what v hears.
 *  - rev: the reverse edge u->v; cls: the link class (edges with the same latency mean, floor and
 *    bandwidth share one). */
#define EDGE_HEARD_BITS 40
#define EDGE_HEARD_NONE ((UINT64_C(1) << EDGE_HEARD_BITS) - 1)
#define EDGE_SENT_BIT (UINT64_C(1) << EDGE_HEARD_BITS)
#define EDGE_LAZY_BIT (UINT64_C(1) << (EDGE_HEARD_BITS + 1))
#define EDGE_TO_SHIFT (EDGE_HEARD_BITS + 2)
#define EDGE_TO_BITS 21
#define EDGE_TO_MASK ((UINT64_C(1) << EDGE_TO_BITS) - 1)
#define EDGE_CROSS_BIT (UINT64_C(1) << 63)
#define EDGE_STATE_MASK (EDGE_SENT_BIT | EDGE_HEARD_NONE)
#define EDGE_RESET_MASK (EDGE_LAZY_BIT | EDGE_SENT_BIT | EDGE_HEARD_NONE)

/* Pruning keeps each node's least floor path to each target (4 bytes each): a stop with more targets than
 * fit in this many entries is not pruned (its watched values are as exact, the relay just does more). */
#define PRUNE_MAX_ENTRIES (UINT64_C(32) << 20)

/* Kernel.stop_prev before the first window's end. */
#define STOP_NO_PREV INT64_MIN

/* Spin this long at a barrier, and between blocks, before sleeping on a futex. A futex wake costs tens of
 * µs on the 2-core VM, about a window's work: at 20 µs a window's wait often ended in one (the month's
 * relay ran slower on 2 threads than on 1); at 200 µs the waits end in the spin, and the gaps between
 * blocks (the side work, ~0.3 ms a block) mostly too (docs/threads.md). */
#define SPIN_NS 200000

typedef struct Kernel Kernel;
typedef struct TgShared TgShared;

/* Kernel.wait_s: one cache line per thread (each adds its own at every barrier it waits at). */
#define WAIT_STRIDE 8

/* A relay's progress, published while it runs for a reader on another thread (RelayPipe, relay_pipe.c): the
 * Geth kernel writes it at each window's end on its one-thread path (relay_kernel_thread_block), nowhere in
 * the step loop. The watched nodes are 0 .. n_watch - 1 (topology numbers: the specials a RelayStop
 * watches). */
#define RELAY_WAKE_NODES 8
typedef struct RelayProgress {
  guint32 n_watch;
  SimTime *have;     /* per watched node: its full-block time once its HAVE step was taken, else SIM_TIME_MAX
                      * (atomic stores, before the horizon's) */
  guint32 *pending;  /* the watched nodes not published yet (the writer's alone): the check at a window's end
                      * costs what is still open, not n_watch */
  guint32 n_pending;
  /* Every step still to come is at or after `horizon` (release store after the haves; SIM_TIME_MAX once the
   * relay stopped). A reader waiting for horizon >= wake_at sleeps on `seq` (sim_wait_change): the writer
   * bumps it only when the horizon crosses wake_at, so a window whose horizon wakes nobody costs no
   * syscall. */
  _Alignas(64) SimTime horizon;
  SimTime wake_at;
  /* ... or for one of these watched nodes to be published (relay_job_wait_nodes; n_wake 0: none). */
  guint32 wake_node[RELAY_WAKE_NODES];
  unsigned n_wake;
  unsigned seq, sleepers;
} RelayProgress;

struct RelayWork {
  guint32 n_nodes;
  guint32 n_special;
  guint64 n_edges;
  /* Results of the last propagation, reset by every propagation: best known time of the full block (final
   * once `done`), first block message and first announcement received. Indexed by loc[node] when `loc` is
   * set (the Geth kernel's own node order), else by node (models reporting through relay_work_record). */
  SimTime *have;
  guint8 *done;
  SimTime *first_push;
  SimTime *announce;
  const guint32 *loc;
  guint64 reached, messages;
  guint threads;       /* asked for (relay_work_set_threads) */
  RelayRunMode run;
  RelayGroups *groups; /* the Geth kernel's groups (owned) */
  Kernel *kernel;      /* the Geth kernel's state, built at its first propagation */
  RelayWorkStats stats;
  /* Progress to publish while the Geth kernel runs (NULL: none; a RelayPipe slot's), handed to the kernel at
   * each propagation. */
  RelayProgress *progress;
  /* A RelayPipe slot: the size-class table the next propagation uses is tg_key (-1: none), what a
   * synchronous kernel fed every block would use (relay_tg_plan), not this work's own history. */
  gboolean tg_forced;
  gint tg_key;
  /* A RelayPipe's thread's: the pipe's store of pruning tables, which its kernels share (not owned). */
  TgShared *tg_shared;
  /* Side work for the kernel's first extra thread between blocks (relay_work_set_idle). */
  RelayIdleFn idle;
  gpointer idle_user;
  /* Another relay model's own scratch (relay_work_set_ext). */
  const void *ext_owner;
  gpointer ext;
  GDestroyNotify ext_free;
};

/* The results of src's last propagation into dst (every node's full-block time, the specials' first
 * messages, the counts; not the statistics): a RelayPipe job's, from the thread that ran it. */
void relay_work_copy_results(RelayWork *dst, const RelayWork *src);

/* ---- fixed groups of nodes (relay_groups.c) ---- */

struct RelayGroups {
  guint32 n_nodes;
  guint32 n_groups; /* non-empty */
  guint32 largest;
  guint32 *group_of;    /* per node: the group's position in the order below */
  guint32 *order;       /* the kernel's node order: groups one after another, nodes ascending inside */
  guint32 *loc;         /* per node: its position in `order` */
  guint32 *group_start; /* n_groups + 1: where each group starts in `order` */
  guint64 *prefix;      /* n_groups + 1: work of the groups before (sum over their nodes of degree + 8) */
  SimTime lookahead;
  guint32 la_from, la_to;
};

/* ---- a thread's queue of steps (relay.c) ---- */

/* Step keys by bin (key >> STEP_BIN_SHIFT: 2^21 ns of time, 2.1 ms), on a ring of STEP_RING bins (2^31 ns,
 * 2.1 s) from the current one; the queue's workings are in relay.c. */
#define STEP_BIN_SHIFT (STEP_KEY_SHIFT + 21)
#define STEP_RING_BITS 10
#define STEP_RING (UINT32_C(1) << STEP_RING_BITS)

typedef struct {
  guint64 *key;
  guint32 len, cap;
} StepBin;

typedef struct {
  StepBin *bin;        /* STEP_RING: bin b's keys at bin[b % STEP_RING] */
  guint64 *occ;        /* STEP_RING / 64 words: bit b: a bin after the current one has keys at bin[b] */
  guint64 cur;         /* the current bin: its keys (and any pushed below it) sorted, taken from `head` on */
  guint32 head, ahead; /* ahead: keys in the bins after the current one */
  guint64 last, min;   /* the last key taken from the bins; the least key in them (UINT64_MAX: none) */
  guint64 *heap;
  gsize heap_len, heap_cap;
  guint64 *spare; /* a bin's keys are dealt into this by their time, then it becomes the bin's array */
  guint32 spare_cap;
} StepQueue;

/* ---- Geth 1.8.23 (relay.c) ---- */

typedef struct {
  int64_t push_min;
  double verify_ms;
  double import_base_ms;
  double import_ms_per_mgas;
  double arrive_timeout_ms;
  double fetch_timeout_ms;
  double fetch_fail_prob;
  gboolean draw_all;
  gboolean prune;
  int64_t prune_table_after;
} GethParams;

/* ---- the windowed kernel ---- */

/* The static part of an edge record (the word, the part a block writes, is in an array of its own, so that
 * the per-block reset and the scans that only test the word run over 8 bytes per edge). */
typedef struct {
  guint32 rev;
  guint32 cls;
} EdgeCold;

typedef struct {
  SimTime mean_ns;
  SimTime floor_ns;
  double tx_ns_per_byte; /* the block's transfer over the link: Geth.xfer */
  NetLatencyDraw draw;
} LinkClass;

/* Per link class, "pareto" only: the latency at u = j / QLAT_STEPS (j = 0: never reached, SIM_TIME_MAX),
 * which falls as u grows: a uniform's top bits bracket its latency (edge_seen). Apart from LinkClass, which
 * every message reads. */
typedef struct {
  SimTime at[65];
} QLat;

#define QLAT_BITS 6
#define QLAT_STEPS (1u << QLAT_BITS)
/* Slack for the brackets: the fast log2/exp2 are accurate to a few ulps, far below a ns at these scales. */
#define QLAT_SLACK_NS 16

/* A message to another worker, kept until the window's end, as its sender's thread wrote it: when it left
 * (a push: when its last byte left; an announcement: when it was sent), its kind and receiver, the reverse
 * edge (receiver -> sender; it gives the receiver's thread the edge's random stream and the sender), the
 * edge's class and, for an announcement, when the sender's upload link is free (final since its push, which
 * came before). The receiver's thread reads nothing of the sender's: until session 14 it read the upload
 * time in the sender's entry of Kernel.upload_free, a line the sender's core wrote, for every announcement
 * that starts a fetch (~400 a block and worker on pools-2019), a miss to the other core each. 24 bytes a
 * message where 16 did before (docs/threads.md, session 14). */
typedef struct {
  guint64 word; /* sent - t0 (bits 0..39, saturated) | receiver (bits 40..61) | announcement (bit 62) */
  guint32 rev;
  guint32 cls;
  SimTime upload_free; /* an announcement's sender's (a push: 0) */
} Msg;

#define MSG_NODE_MASK ((UINT32_C(1) << STEP_NODE_BITS) - 1)
#define MSG_TIME_MASK ((UINT64_C(1) << 40) - 1)
#define MSG_TO_SHIFT 40
#define MSG_ANNOUNCE_BIT (UINT64_C(1) << 62)
/* Not a message but a share of an announcement to take (SPLIT_MIN_DEGREE): the node in the receiver field
 * announces at the time field, and the receiving worker announces to its own nodes among its peers. */
#define MSG_SLICE_BIT (UINT64_C(1) << 63)

/* Specials (vantage points, pool gateways) with at least this many peers (on pools-2019 all of them: the
 * vantage points have 800-1500 peers, the gateways ~80; ordinary nodes at most 25, and they are never split:
 * the HAVE step tests the special flag it has at hand, not the degree) announce in shares when several
 * workers run the block:
 * each worker announces to its own nodes among the node's peers (Kernel.slice_edge), in the window of the
 * step. The owner learns the announcement's time at the node's HAVE step (verification and import later) and
 * sends the other workers a slice message then; they keep it (Worker.share) and take their share at the end
 * of the window it falls in, after their own steps (its messages arrive after the window: no step of this
 * one depends on them, nor they on one), once the owner has applied its messages of that window
 * (Worker.inbox_win), which are the last that can write the heard bits a share reads (a peer's message to the
 * node that arrives before the announcement was sent in an earlier window). Until session 8 a vantage
 * point's ~1,400 announcements were one worker's share of one window (docs/threads.md). An announcement that
 * falls in its HAVE step's window (a source's: at once) is not split. Which worker sends what changes no
 * result (send_msg). */
#define SPLIT_MIN_DEGREE 64

/* Worker s's messages to worker d (s != d). Every directed edge carries at most one message per block (a
 * node pushes at most once, and announces only over edges it did not push over), so the capacity is the
 * number of edges from s's nodes to d's. Only s appends; at the end of window k it publishes the length in
 * pub[k & 1], which d reads after the barrier (d is done with pub[(k - 1) & 1] before s can write it
 * again). */
typedef struct {
  _Alignas(64) Msg *msg;
  guint32 cap;
  guint32 len;
  guint32 pub[2];
} Mailbox;

/* What a thread publishes at the barrier: a lower bound on every step it may still take or cause, and its
 * specials still to reach. */
/* What a thread publishes at the barrier: a lower bound on every step its workers may still take or cause,
 * their specials still to reach, and their work in the window (steps, messages sent and messages sent to
 * other groups, which cost as much again to apply, wherever they are applied:
 * the sum, and the busiest worker's). */
typedef struct {
  _Alignas(64) SimTime bound;
  guint64 work, work_max;
} Slot;

enum { STREAM_PUSH_TARGETS = 1, STREAM_MSG = 2 };

/* What a message reads of its receiver, in one 16-byte record per node (kernel order): the full-block time
 * and whether it is final (copied to RelayWork.have/done after the block), and one fixed field. */
typedef struct {
  SimTime have;
  guint8 done;
  guint8 special; /* 1 for nodes 0..n_special-1 of the topology */
} NodeHot;

/* One worker's hot state during a window, in locals, so that stores into the per-edge and per-node arrays
 * do not make the compiler reload it; kept in the worker between windows. */
typedef struct {
  const GethParams *p;
  guint64 *ew;
  const EdgeCold *ec;
  const LinkClass *cls;
  const QLat *qlat;
  /* Per link class: the transfer of the block being relayed (ns), the worker's own copy (Worker.xfer):
   * read-only LinkClass lines stay in every core's cache, where a per-block store by the calling thread
   * into each class cost the others a miss per class and block. */
  const SimTime *xfer;
  const guint32 *off;
  const guint32 *gid;
  NodeHot *nh;
  const guint8 *worker_of; /* per node (kernel order), fixed for the layout: read for another worker's node
                            * instead of its NodeHot, which that worker writes (a line shared between cores) */
  const guint32 *split_of;   /* per node: its index among the split specials (SPLIT_MIN_DEGREE), or G_MAXUINT32 */
  const guint32 *slice_off;  /* split node i's edges to worker d's nodes: slice_edge[slice_off[i * (n + 1) + d]
                              * .. slice_off[i * (n + 1) + d + 1]), n workers */
  const guint32 *slice_edge;
  guint8 *split_sched; /* per split node, written by its owner: its announcement this block is split */
  guint n_workers;
  SimTime *first_push, *announce, *upload_free;
  guint32 *scratch;
  StepQueue *q;
  Mailbox *out; /* this worker's mailboxes, by receiving worker */
  guint64 key;
  SimTime t0;
  SimTime wait, timeout, last_decision_after_have;
  SimTime step_lb_announce; /* after an announcement, the least time to a step it can cause in another group */
  SimTime bound; /* least time at which a message sent this window can make a step */
  guint64 messages, deferred, posted, draws;
  guint64 split; /* announcements split among the workers (SPLIT_MIN_DEGREE) */
  guint me; /* the worker's index */
} Geth;

/* A worker: a fixed, contiguous run of groups and everything it writes. The workers are as many as the
 * threads asked for (their number fixes nothing in the results either); a thread runs one worker's window
 * or, when fewer threads run the block, several in turn. */
typedef struct {
  _Alignas(64) Kernel *k;
  guint index;
  guint32 lo, hi; /* its nodes, in the kernel's order */
  StepQueue q;
  guint64 *fifo[2];
  guint32 *scratch; /* edge indices for choosing push targets */
  SimTime *xfer;    /* Geth.xfer */
  guint32 *read;    /* per sending worker: its next message to apply */
  /* This block's state between windows. */
  Geth g;
  gsize fifo_head[2], fifo_len[2];
  guint64 reached, steps;
  /* The stop's groups this worker has seen a node of have the block (a bit each), and whether it has seen
   * one since the last window's end. */
  guint64 *seen;
  /* Pruning: this worker's part of the targets' values at the start of its window (Kernel.snap), and the
   * watched nodes it owns with their targets. */
  SimTime *snap_part;
  SimTime *snap_new; /* the worker's own scratch for snap_part (relay_kernel_snap_part) */
  guint32 *own_node, *own_target, n_own;
  guint64 pruned;
  guint64 work0; /* steps + messages sent + between groups when the window began (its messages included) */
  /* Shares of other workers' split announcements to take (SPLIT_MIN_DEGREE): step keys (time, node), sorted;
   * at most one per split node and block. */
  guint64 *share;
  guint32 n_share;
  /* Window w's messages to this worker have been applied once this is w + 1 (0 at the block's start): split
   * announcements of its nodes wait for it (SPLIT_MIN_DEGREE). Alone on its line: the others read it. */
  _Alignas(64) guint64 inbox_win;
  /* Whether the worker has seen one of the stop's groups since the last window's end (`seen`): set by the
   * worker, cleared by the reducing thread at the barrier, so on a line of its own, not among the worker's
   * other fields (which the worker writes at every window's end). */
  gboolean fresh;
} Worker;

/* A thread other than the calling one (thread p runs workers p, p + P, p + 2P, ... when P threads run a
 * block). */
typedef struct {
  _Alignas(64) Kernel *k;
  guint index;
  pthread_t tid;
  unsigned seen; /* the last block generation it looked at */
} Thread;

/* The block being relayed, set by the calling thread before the others start on it. */
typedef struct {
  const void *params;
  double size_bytes;
  SimTime t0, last_source_t;
  SimTime verify, import, wait, timeout, last_decision_after_have, step_lb_announce;
  /* The stop (RelayStop): watched nodes, their groups, the groups to see and the watched messages. */
  guint32 stop_n, stop_groups, stop_msgs;
  const guint32 *stop_group;
  gboolean stop_first; /* RelayStop.first_message_only */
  guint64 key;   /* of the block's random streams */
  guint n_src;
  guint32 *src; /* sources, the kernel's order */
  SimTime *src_t;
  guint src_cap;
  guint32 join_first; /* joining nodes from here on are unavailable */
} BlockSpec;

/* How many threads run the next block (RELAY_RUN_ADAPTIVE): all of them, or the calling thread alone
 * (running every worker's part in turn, the same result). Each cycle of SCHED_PERIOD blocks starts with
 * 2 x SCHED_PROBE blocks taken each way in turn (so that both see the same load of the machine), then
 * runs the rest the way that had the lower wall time per unit of work (steps and messages) in them. */
#define SCHED_PERIOD 512
#define SCHED_PROBE 16
typedef struct {
  double ns[2], work[2]; /* this cycle's probes: [0] the calling thread alone, [1] all threads */
  gboolean all;          /* the way chosen */
  gboolean probing;      /* the block being run is one of the probes */
  guint64 at;            /* blocks since the cycle began */
} Schedule;

/* Pruning bounds for the blocks of one size class (relay_stop.c). A message that changes what node x
 * decides (it brings x the block, or tells x that a peer has it before x chooses whom to push to) changes
 * only messages x sends at its push (each leaving at least the transfer of the block over that link after
 * it) or at its announcement (import after its push), but for the announcement back to the peer that told
 * it. So each hop x -> y of a chain that reaches a target costs its latency floor plus
 * min(transfer(x -> y), import), and for blocks of at least 2^(key/4) bytes the table built with that size
 * and the import of an empty block (import_base_ms) bounds them all from below. */
typedef struct {
  gint key;          /* size class */
  SimTime import_lo; /* the import time it was built with */
  guint32 *a;        /* [node * n_tg + target]: chains whose first hop pays min(transfer, import) too */
  guint32 *a0;       /* the same with a first hop at its floor alone */
  gboolean shared;   /* a and a0 are a TgShared store's (the kernel frees neither) */
} TgTable;
#define TG_CACHE_MAX 16
#define TG_KEYS 256
/* The size classes' tables together take at most this many bytes (pairs of n_nodes x n_tg words). */
#define TG_CACHE_BYTES (UINT64_C(128) << 20)

struct Kernel {
  /* Built for one topology and jitter model (read-only during a block but for each worker's own part). */
  const NetTopology *topo;
  const void *jitter, *jitter_params;
  RelayWork *w;
  /* The side work thread 1 does between blocks (RelayWork.idle as the threads started; NULL: none). */
  RelayIdleFn idle;
  gpointer idle_user;
  const RelayGroups *groups;
  guint32 n_nodes;
  const guint32 *gid; /* kernel order -> node */
  const guint32 *loc; /* node -> kernel order */
  guint32 *off;       /* n_nodes + 1: edges of each node, kernel order */
  guint64 *ew; /* the records' words */
  EdgeCold *ec;
  LinkClass *cls;
  QLat *qlat;
  guint32 n_cls;
  NodeHot *nh;          /* per node */
  SimTime *upload_free; /* per node: when its upload link is free again, set by its push */
  SimTime window;       /* min(lookahead, RELAY_WINDOW_MAX_NS) */
  /* Workers and threads. */
  guint n_workers;
  Worker **workers;
  guint8 *worker_of; /* per node */
  guint32 *split_of, *slice_off, *slice_edge, n_split; /* Geth.split_of (several workers only) */
  guint8 *split_sched;
  Mailbox *mb;       /* [sender * n_workers + receiver] */
  Thread **threads;  /* [1 .. n_workers - 1]; started at the first block run on them */
  gboolean started;
  guint n_run;    /* threads running this block: 1 or n_workers */
  Slot *slots;    /* per thread */
  /* The stop: groups seen by all workers (a bit each; seen_words words, also the workers' size), how many
   * are still to see, and per special the least latency floor of its links into it. */
  guint64 *seen_all;
  guint seen_words;
  guint32 groups_left;
  SimTime *fin_in;
  /* Pruning (GethParams.prune, relay.h): the targets of the stop they were built for (its groups, then the
   * nodes of its watched messages), each node's least sum of latency floors to each (us, rounded down;
   * G_MAXUINT32: cannot reach it), the targets' values as of the start of the last window (merged from the
   * workers' parts at its end), and the targets still open (value at or after the window's start). */
  gboolean pruning;
  guint32 n_tg;
  guint32 *tdist_base; /* [node * n_tg + target], kernel order: floors alone (owned) */
  /* The block's bounds (relay_kernel_targets_select): `tdist` for a message sent at a step's time or later
   * by a node that must push or announce it (each hop's sender pays its least push or import delay,
   * TgTable), `tdist0` for an announcement sent at the step's time (its first hop pays the floor alone).
   * Either the base table or a size class's. */
  const guint32 *tdist, *tdist0;
  TgTable tg_cache[TG_CACHE_MAX];
  guint tg_cache_n, tg_cache_cap;
  guint64 tg_asked[TG_KEYS]; /* blocks of each size class relayed while it was not built */
  SimTime *snap;
  guint32 *active, n_active;
  const guint32 *tg_group;
  guint32 tg_n, tg_groups, tg_msgs;
  gboolean tg_built;
  double *wait_s; /* per thread, this block: thread p's at wait_s[p * WAIT_STRIDE] (a line each) */
  BlockSpec blk;
  Schedule sched;
  /* Synchronisation: a new block (the calling thread bumps block_gen), the window barrier (the last to
   * arrive reduces the slots into bar_bound and decides bar_stop, then bumps bar_gen), the end of a block
   * (each other thread that ran it adds one to `finished`). */
  _Alignas(64) unsigned block_gen;
  unsigned park_sleepers;
  unsigned quit;
  _Alignas(64) unsigned bar_count;
  _Alignas(64) unsigned bar_gen;
  unsigned bar_sleepers;
  SimTime bar_bound;
  gboolean bar_stop;
  guint64 work, work_critical; /* this block's: all workers' work, and the busiest worker's per window */
  /* Written by the reducing thread at each window's end, so here, apart from what the step loops read (a
   * line written at every window would cost the other thread a miss on each field beside it). */
  SimTime stop_prev; /* the bound that started the current window (STOP_NO_PREV: window 0) */
  _Alignas(64) unsigned finished;
  unsigned fin_sleepers;
  /* Where to publish the block's progress (RelayWork.progress; NULL: nowhere): at each window's end on the
   * one-thread path (relay_progress_publish). */
  RelayProgress *progress;
  /* RelayWork.tg_forced, tg_key and tg_shared, copied at each propagation (relay_kernel_targets_select). */
  gboolean tg_forced;
  gint tg_key;
  TgShared *tg_shared;
  gboolean tdist_base_shared; /* tdist_base is tg_shared's (the kernel does not free it) */
  guint32 tables_built;       /* tables this kernel built itself (RelayWorkStats.tables_built) */
};

/* ---- helpers of more than one file ---- */

static inline guint32 edge_to(guint64 word) {
  return (guint32)(word >> EDGE_TO_SHIFT) & EDGE_TO_MASK;
}

/* A "pareto" latency at uniform u in (0, 1]: what net_pareto_draw() gives for that u, host overhead added. */
static inline SimTime pareto_of_u(const NetLatencyDraw *d, double u) {
  /* The table form (net.h): a third cheaper than net_pareto_of_u, the same quantile to 1.5e-15 relative. */
  return net_pareto_table_of_u(&d->pareto, d->scale_ns, d->inv_shape, u) + d->host_ns; /* in [0, MAX] */
}

/* ---- between the files ---- */

/* relay_work.c: every node unreached, no special heard anything, counts zero (node order). */
void relay_work_reset_nodes(RelayWork *w);

/* relay_groups.c: the first group of each of n threads (cut[n] = n_groups); a copy of `g` (each RelayWork
 * owns its groups). */
void relay_groups_cut(const RelayGroups *g, guint n, guint32 *cut);
RelayGroups *relay_groups_copy(const RelayGroups *g);

/* relay_pipe.c: at a window's end (the relay's only thread), the watched nodes whose HAVE step was taken
 * published, then `horizon` (every step still to come is at or after it; SIM_TIME_MAX: the relay stops),
 * waking a reader that waits for it. */
void relay_progress_publish(Kernel *k, SimTime horizon);

/* relay.c: the step queue's memory; thread p's part of the block (of k->n_run threads). */
void relay_queue_init(StepQueue *q);
void relay_queue_clear(StepQueue *q);
void relay_kernel_thread_block(Kernel *k, guint p);

/* relay_kernel.c: the kernel for (t, gp's jitter) with w->threads, built or rebuilt as needed; its end. */
Kernel *relay_kernel_get(RelayWork *w, const NetGeoParams *gp, const NetTopology *t);
void relay_kernel_free(Kernel *k);

/* relay_threads.c: the window barrier; the block on all threads (started at the first), the calling thread
 * running part 0; stopping the threads; whether the next block runs on all threads (Schedule). */
void relay_kernel_barrier(Kernel *k, guint p, const Slot *mine, SimTime *next, gboolean *stop);
void relay_kernel_run_all(Kernel *k);
void relay_kernel_stop_threads(Kernel *k);
gboolean relay_kernel_schedule_all(RelayWork *w, Kernel *k);

/* relay_stop.c: the block's stop set up; whether the block may stop at a window's end; pruning's targets,
 * a worker's part of their values at its window's start, and their merge at the window's end. */
void relay_kernel_stop_prepare(Kernel *k, const NetTopology *t, const RelayStop *stop);
gboolean relay_kernel_stop_reached(Kernel *k, SimTime next);
void relay_kernel_targets_build(Kernel *k);
void relay_kernel_targets_select(Kernel *k, double size_bytes, SimTime import_lo, int64_t after);
void relay_kernel_targets_free(Kernel *k);

/* The pruning tables (the floors alone and the size classes') of the kernels of one RelayPipe, built once by
 * the first kernel that needs one and read by all: each is a function of the topology, the kernel's node
 * order (the same groups in every kernel of a pipe), the stop and the class, so every kernel would build the
 * same. Two relays running at once then read one copy (half the cache a pair of private copies takes: the
 * tables are the relay's biggest data, read at every step), and each is built once, not once per thread.
 * Entries are keyed by the stop as well; once TG_CACHE_MAX are stored a kernel builds its own. */
TgShared *relay_tg_shared_new(void);
void relay_tg_shared_free(TgShared *s);
guint32 relay_tg_shared_built(TgShared *s); /* tables it holds (each built once) */
void relay_kernel_snap_part(Kernel *k, Worker *W);
void relay_kernel_snap_merge(Kernel *k, SimTime next);

/* A synchronous kernel's decisions about the size classes' pruning tables, replayed without the tables
 * (RelayPipe: its slots' kernels see only some of the blocks, so their own counts would choose other tables
 * than one kernel fed every block, and skip other steps: the same watched values, but other unwatched ones,
 * reached counts and statistics). */
typedef struct {
  gboolean built;
  const guint32 *group;
  guint32 n, groups, msgs;
  guint cap, n_built;
  gint key[TG_CACHE_MAX];
  SimTime import_lo[TG_CACHE_MAX];
  guint64 asked[TG_KEYS];
} TgPlan;
gint relay_tg_plan(TgPlan *pl, const GethParams *p, SimTime import_lo, const NetTopology *t, const RelayBlock *b,
                   const RelayStop *stop);
