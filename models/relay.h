/* relay.h: the "relay" model family: how one block spreads over the peer-to-peer topology.
 *
 * A relay model computes, for one block, when each node first has the full block and when it first hears
 * an announcement of it. It runs as a label-setting (Dijkstra-like) computation over the read-only
 * topology, in time order, with three kinds of steps per node: HAVE (first full block), PUSH (after header
 * verification: full block to a subset of the peers not known to have it) and ANNOUNCE (after import:
 * hash to the rest). A node's decisions use exactly what it has heard by its decision time, because every
 * message that reaches it earlier comes from a decision taken earlier, which the time order has already
 * processed. This replaces one engine event per message (about 25 per node per block) with one
 * relaxation per message inside a tight loop; only what the rest of the simulation needs (pool gateways,
 * vantage points) becomes engine events.
 *
 * Links are idle at the start of each block: blocks of different heights do not queue behind each other
 * on a node's upload link (Ethereum blocks are ~20 KB, transmitted in ~10 ms at home upload speeds). A
 * node's own uploads for one block are serial: its pushes, then its fetch replies.
 *
 * The Geth kernel runs one block's relay on several threads (relay_work_set_threads), with results that do
 * not depend on the thread count:
 *  - Fixed groups of nodes, from the topology alone (RelayGroups): links whose least latency (the jitter
 *    model's floor) is below a cutoff join their nodes into one group (pool gateways in one city, metro
 *    pairs: ~0 ms links), the cutoff as high as keeps every group within 1/RELAY_GROUPS_BALANCE of the
 *    nodes. The lookahead L is the least floor over links between groups.
 *  - Conservative windows inside each block: a window starts at a lower bound T of every pending step
 *    anywhere (and of every step a message to another group can cause) and takes every step with time
 *    < T + L (at most RELAY_WINDOW_MAX_NS). Each thread runs a worker: a fixed, contiguous run of groups. A
 *    message to a node of the same worker is applied at once; a message to another worker's node arrives
 *    at or after T + L (it crosses groups), so it waits in a mailbox until the window ends.
 *  - What a message does does not depend on when it is applied: every effect is a minimum of values that
 *    are functions of the block and the edge alone (the receiver's full-block time, a special's first block
 *    message and announcement, what the receiver knows of the sender: the arrival). The draw-skipping
 *    shortcuts skip only what cannot lower a minimum as it stands; a message whose latency was not needed
 *    is recorded at the receiver as its send time plus the link's floor, and the latency is drawn (the same
 *    value) when the receiver's own decision first needs it. So one thread applying everything at once and
 *    eight applying most of it at window ends give the same bytes.
 *  - Random numbers keyed by what they are for, never by who draws them: push targets from a stream per
 *    (block, node), a message's latency (and its fetch retries) from a stream per (block, directed edge).
 *  - A special with many peers (SPLIT_MIN_DEGREE: the vantage points and pool gateways) announces in shares:
 *    each worker sends the announcements to its own nodes, in the window of the step, so that a vantage
 *    point's ~1,400 messages are not one worker's share of one window.
 *  - The stop once what the caller watches (RelayStop) is final is taken at a window's end.
 * So a block's result depends on the topology and the block only (the groups and windows fix where the
 * stop falls): every thread count, 1 included, gives the same bytes. Threads take fixed, contiguous ranges
 * of groups of about equal work; the calling thread is one of them; the others are started once, wait at a
 * barrier between windows (spin briefly, then sleep) and sleep between blocks.
 */
#pragma once

#include <glib.h>

#include "engine.h"
#include "net.h"
#include "params.h"
#include "rng.h"

G_BEGIN_DECLS

/* The block being relayed. */
typedef struct {
  const guint32 *sources; /* nodes that have it first (the miner's gateways) */
  const SimTime *source_t; /* when each source has it (validated and imported) */
  guint n_sources;
  double size_bytes;
  double gas_used;
} RelayBlock;

/* What a propagation must compute exactly before it may stop; the rest may be left unfinished (SIM_TIME_MAX
 * or not final). The watched nodes are 0..n_nodes-1 (the topology's specials, or fewer):
 *  - their full-block times, by group: a group is final once its first node has the block (HAVE steps come
 *    in time order, so that node's time is the group's least). `group` (NULL: every watched node is its
 *    own group) gives each watched node's group, < n_groups, or RELAY_STOP_NONE (its full-block time is not
 *    needed). Pool gateways form one group per pool: a pool mines on a block once one of its gateways has
 *    it (geo_publish), so the later gateways need not be waited for;
 *  - the first block message and first announcement of nodes 0..n_messages-1 (n_messages <= n_nodes and
 *    <= the topology's specials: only specials record them), final once no message can arrive earlier
 *    than they stand: every step still to come is at or after the window's lower bound T, so a node whose
 *    values are at most T plus the least latency floor of its links into it is final. The vantage points
 *    log both (a block message or announcement after the node had the block included). With
 *    `first_message_only`, only the earlier of the two and which it was (a block message on a tie) is
 *    watched: what every output but the vantage points' logs reads.
 * A NULL stop, or n_nodes = 0, runs the propagation to its end.
 * The Geth kernel also skips the steps that cannot change what the stop watches (GethParams.prune): a step
 * of node x at time t is skipped when, for every watched value still open, t plus the least sum of latency
 * floors from x to the value's node(s) exceeds the value as it stood at the start of the last window. What
 * x would have sent, and everything it would have changed downstream (other nodes' arrivals, and what they
 * know of x, which steers their pushes), can only reach a watched node after that value: the watched
 * values are exact; the unwatched nodes' times are not (they are not final with a stop anyway). The floor
 * paths take 4 bytes per node and target (the groups and the watched messages' nodes): a stop whose targets
 * would take more than 128 MiB (32 Mi entries: 335 targets at 100,000 nodes) is not pruned. */
#define RELAY_STOP_NONE G_MAXUINT32
typedef struct {
  guint32 n_nodes;
  const guint32 *group;
  guint32 n_groups;
  guint32 n_messages;
  gboolean first_message_only;
} RelayStop;
/* What geo_publish needs of the specials of `t` (built from `gp`): each pool's first gateway to have the
 * block (one group per pool, numbered by the scenario's pools; a pool of several miners spreads them over
 * its gateways, so each of its gateways is a group of its own: `pool_miners`, per pool, NULL: one each)
 * and the vantage points' first block message and announcement. `group` has room for t->n_special entries
 * and must outlive the stop. */
RelayStop relay_stop_specials(const NetGeoParams *gp, const NetTopology *t, const guint *pool_miners,
                              guint32 *group);
/* Every watched node's full-block time final, each its own group; no messages watched. */
static inline RelayStop relay_stop_nodes(guint32 n) { return (RelayStop){.n_nodes = n, .n_groups = n}; }

/* Scratch space and results of one propagation, reusable across blocks. Owned by one entity. */
typedef struct RelayWork RelayWork;

/* ---- Fixed groups of nodes for the windowed Geth kernel ---- */

/* Groups hold at most n_nodes / RELAY_GROUPS_BALANCE nodes each, unless zero-latency links force more. */
#define RELAY_GROUPS_BALANCE 128
/* The most threads one block's relay uses (more are accepted and ignored). */
#define RELAY_MAX_THREADS 64
/* The longest window (also with no link between groups), so that the stop once the specials are final
 * comes soon after they are. */
#define RELAY_WINDOW_MAX_NS (10 * SIM_NS_PER_MS)

typedef struct RelayGroups RelayGroups;

#define RELAY_ERROR (relay_error_quark())
GQuark relay_error_quark(void);
typedef enum { RELAY_ERROR_ZERO_LOOKAHEAD } RelayError;

/* The groups of topology `t`, from its latency floors alone: sort the links by floor; join the nodes of
 * every link with floor 0, then of the links of each next floor value while no group grows above
 * max(1, n_nodes / RELAY_GROUPS_BALANCE) nodes; the floor value that stops it is the lookahead (the least
 * floor over links between groups). Free with relay_groups_free(). */
RelayGroups *relay_groups_new(const NetTopology *t);
/* Groups given by `group_of` (one id < n_groups per node; empty groups are allowed). A link between two
 * groups whose floor is 0 is refused (RELAY_ERROR_ZERO_LOOKAHEAD, naming the link's nodes and groups): its
 * ends must share a group. */
RelayGroups *relay_groups_new_assigned(const NetTopology *t, const guint32 *group_of, guint32 n_groups,
                                       GError **error);
void relay_groups_free(RelayGroups *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RelayGroups, relay_groups_free)
guint32 relay_groups_count(const RelayGroups *g);      /* non-empty groups */
guint32 relay_groups_largest(const RelayGroups *g);    /* nodes in the largest group */
guint32 relay_groups_of(const RelayGroups *g, guint32 node); /* 0 .. count - 1 */
/* The least floor over links between groups (SIM_TIME_MAX: no such link), and that link's nodes. */
SimTime relay_groups_lookahead(const RelayGroups *g, guint32 *from, guint32 *to);
/* The threads a block's relay runs on with `threads` asked for: min(threads, groups, RELAY_MAX_THREADS),
 * at least 1; and the thread that takes group `group` then. */
guint relay_groups_threads(const RelayGroups *g, guint threads);
guint relay_groups_thread_of(const RelayGroups *g, guint threads, guint32 group);

/* Threads for the Geth kernel's propagations in `w` (default 1: the calling thread alone); results do not
 * depend on it. The extra threads start at the first propagation that uses them and live until
 * relay_work_free() (sleeping between propagations). */
void relay_work_set_threads(RelayWork *w, guint threads);
/* How a propagation uses those threads. The work is always split into as many parts as threads (at most the
 * groups, RELAY_MAX_THREADS); the calling thread alone can run every part in turn, with the same result.
 *  - RELAY_RUN_ADAPTIVE (the default): all threads, or the calling thread alone: every 512 propagations
 *    start with 32 taken each way in turn, and the rest go the way that had the lower wall time per unit of
 *    work in those. On a machine busy with other work, threads that take turns on a core wait at every
 *    window's barrier for the other to be scheduled, and one thread is faster.
 *  - RELAY_RUN_ALL: always all threads (what was asked for, whatever the machine does).
 *  - RELAY_RUN_CALLER: always the calling thread alone (tests; the parts as with all threads). */
typedef enum { RELAY_RUN_ADAPTIVE = 0, RELAY_RUN_ALL, RELAY_RUN_CALLER } RelayRunMode;
void relay_work_set_run_mode(RelayWork *w, RelayRunMode mode);
/* Side work for the Geth kernel's first extra thread while it waits for the next propagation, between
 * blocks (obs_async_consume: records for the metrics, say): `fn(user)` does a little of it and returns
 * whether it did any; it is called again until it returns FALSE or a block starts (which then waits for it at
 * its first window's barrier: keep each call short). It must be safe to call from that thread while the
 * calling thread runs on. NULL: none (the default). Takes effect when the threads start (the first
 * propagation run on them); setting it stops threads already started, which the next propagation restarts. */
typedef gboolean (*RelayIdleFn)(gpointer user);
void relay_work_set_idle(RelayWork *w, RelayIdleFn fn, gpointer user);
/* Groups for the Geth kernel (default: relay_groups_new() of the topology, made at the first propagation);
 * `w` takes `groups`, made for the topology it will be used with. */
void relay_work_set_groups(RelayWork *w, RelayGroups *groups);
/* The groups in use (NULL before the first Geth propagation unless set). */
const RelayGroups *relay_work_groups(const RelayWork *w);

/* What the windowed Geth kernel did over all propagations of `w` so far. Wall-clock figures (wait_s)
 * depend on the machine; everything else does not depend on the thread count. */
typedef struct {
  guint threads;          /* threads of the last propagation, the calling thread included */
  guint32 groups;         /* fixed groups of nodes */
  guint32 largest_group;  /* nodes */
  SimTime lookahead_ns;   /* least floor between groups; SIM_TIME_MAX: none */
  guint32 lookahead_from; /* the link that sets it (node ids) */
  guint32 lookahead_to;
  guint64 propagations;   /* blocks relayed */
  guint64 alone;          /* of which run by the calling thread alone though split for several threads
                           * (RELAY_RUN_ADAPTIVE found that faster, or RELAY_RUN_CALLER) */
  guint64 windows;        /* windows, all blocks */
  guint64 steps;          /* HAVE, PUSH and ANNOUNCE steps taken (superseded arrivals not counted) */
  guint64 pruned;         /* of which skipped: they could not change what the stop watches (relay.h) */
  guint64 messages;       /* messages sent */
  guint64 deferred;       /* of which between groups */
  guint64 posted;         /* of which between workers, through mailboxes (depends on threads) */
  guint64 draws;          /* latency draws (at once or deferred to the receiver's decision; how many are
                           * deferred, and so drawn, depends on the order messages are applied: threads) */
  guint64 split;          /* announcements of nodes with many peers split among the threads (depends on
                           * threads: none on one) */
  guint64 work;           /* steps + messages sent + messages sent between groups, all threads */
  guint64 work_critical;  /* the busiest thread's work in each window, summed: work / work_critical is the
                           * speedup dedicated cores and a free barrier would give (depends on threads) */
  double wait_s[RELAY_MAX_THREADS]; /* per thread: wall seconds waiting at the window barrier */
  double wall_s;          /* wall seconds in the kernel (all propagations) */
  guint32 prune_tables;   /* block-size classes with skipping bounds of their own (prune_table_after) */
  guint32 tables_built;   /* pruning tables built (the floors alone and the size classes', over all the stops
                           * and kernels: a RelayPipe builds each once for all its threads) */
  guint64 helped;         /* a RelayPipe's: of the propagations, those its starting thread's helpers ran */
} RelayWorkStats;
void relay_work_get_stats(const RelayWork *w, RelayWorkStats *stats);

/* A work for topology `t`: pass that same topology, unchanged, to every propagation that uses the work
 * (the Geth kernel keeps a packed copy of its per-edge data, made on first use). Free with
 * relay_work_free(). */
RelayWork *relay_work_new(const NetTopology *t);
void relay_work_free(RelayWork *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RelayWork, relay_work_free)

/* Results of the last propagation, indexed by node: first full block (SIM_TIME_MAX if never), first
 * announcement (SIM_TIME_MAX if none). With a RelayStop, only what it watches is guaranteed final; the rest
 * may be SIM_TIME_MAX or not final (relay_stop_agree compares what it watches). */
SimTime relay_work_have(const RelayWork *w, guint32 node);
SimTime relay_work_announce(const RelayWork *w, guint32 node);
/* First full block received as a pushed block message (not as a fetch reply), SIM_TIME_MAX if none. */
SimTime relay_work_first_push(const RelayWork *w, guint32 node);
/* Whether two works hold the same values of everything `stop` watches: each group's least full-block time,
 * and the watched first block messages and announcements. */
gboolean relay_stop_agree(const RelayStop *stop, const RelayWork *a, const RelayWork *b);
/* Nodes that got the full block in the last propagation, and messages sent. */
guint64 relay_work_reached(const RelayWork *w);
guint64 relay_work_messages(const RelayWork *w);

typedef struct {
  SimModelInfo info;
  /* Computes the spread of `b`. With `stop` (may be NULL) the computation may stop once what it watches is
   * final. Randomness comes from `rng` only (the caller keys it by block); the Geth kernel takes one number
   * from it, the key of the block's per-node and per-edge streams. */
  void (*propagate)(const void *params, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                    const RelayStop *stop, SimRng *rng, RelayWork *w);
  /* Time from having a block to having imported it (so a pool can mine on it). */
  SimTime (*import_ns)(const void *params, double gas_used);
  /* Optional (NULL: none). After this model's last propagation on `w`: the nodes that had the block, in the
   * order the kernel processed that (by time, then node), with those times (relay_work_have's): *n of them,
   * owned by `w` and valid until its next propagation. FALSE if this model never ran on `w` or its last
   * propagation stopped early (a RelayStop). geo.c hands the miners their deliveries in this order, so that
   * the engine's batch needs no sort. */
  gboolean (*have_order)(const RelayWork *w, const guint32 **nodes, const SimTime **have, guint32 *n);
} RelayModel;

extern const RelayModel relay_geth;

/* Bitcoin Core's inv -> getdata -> block relay with BIP 152 compact blocks, as SimBlock models it (see
 * relay_btc.c for the exact rules and their departures from SimBlock). */
extern const RelayModel relay_btc;

/* ---- Relays of successive blocks at the same time (relay_pipe.c) ----
 * A block's relay is a pure function of the topology, the block and its random stream, so jobs on RelayWorks
 * of their own, on other threads, give exactly what propagate gives on the calling thread. The engine starts
 * block k + 1's relay while block k's still runs, reads each watched node's arrival as soon as it is final,
 * and the whole result once the job is done. Each slot is a RelayWork with a kernel of its own (one worker:
 * relay_work_set_threads(w, 1)): `slots` times one RelayWork's memory (relay_pipe.c says what that is). Only
 * the Geth kernel publishes progress while it runs; other models' jobs publish everything when done. */
typedef struct RelayPipe RelayPipe;
typedef struct RelayJob RelayJob;
/* `slots` RelayWorks and `threads` threads that run jobs, first started first (threads >= 1; the pipe's own,
 * distinct from a kernel's per-block threads). `groups`: what geo would give relay_work_set_groups (taken;
 * each slot gets a copy), or NULL: relay_groups_new(t) made once. params, gp and t must outlive the pipe. */
RelayPipe *relay_pipe_new(const RelayModel *model, const void *params, const NetGeoParams *gp, const NetTopology *t,
                          RelayGroups *groups, guint slots, guint threads);
/* Waits for the jobs started (running or queued) to end, then frees everything. Jobs not released are
 * freed too. */
void relay_pipe_free(RelayPipe *pipe);
/* Starts block `b`'s relay on a free slot; blocks until a slot is free if none is (a slot is free once its
 * job was released). Copies everything it needs from b (sources, source_t) and from rng (the job gets its
 * own copy of the stream as it stands; the caller's rng is not advanced: the caller advances it as
 * propagate would, one sim_rng_u64 for the Geth kernel). `stop` (may be NULL: nothing watched) must outlive
 * the job. Call the functions below from the thread that started the job (one waiter at a time). */
RelayJob *relay_pipe_start(RelayPipe *pipe, const RelayBlock *b, const RelayStop *stop, const SimRng *rng);
/* Progress, readable while the job runs (acquire): every step still to come is at or after
 * relay_job_horizon(); SIM_TIME_MAX once done (and from the relay's stop on, slightly before done). It only
 * grows; it starts at the block's first source time. */
SimTime relay_job_horizon(const RelayJob *job);
/* Watched node i (0 .. stop->n_nodes - 1: the topology's specials as the RelayStop numbers them): the time
 * it had the full block once final (its HAVE step taken, published at a window's end), else SIM_TIME_MAX. A
 * value read here is below the horizon at the time and equals relay_work_have() of the finished job; a node
 * read as SIM_TIME_MAX has a final time at or after the horizon read before. */
SimTime relay_job_have(const RelayJob *job, guint32 i);
/* The least final time of the watched nodes `nodes` (n of them), all read against one horizon: SIM_TIME_MAX
 * when none is final yet. Then every node's time is at or after it, or at or after the horizon read, so the
 * value is the least of the nodes' final times. (Reading them one by one with relay_job_have() reads each
 * against its own horizon: a node read as not final before a window's end, then a later node read as final
 * after it, gives the later one.) */
SimTime relay_job_first(const RelayJob *job, const guint32 *nodes, guint n);
/* Blocks until relay_job_horizon(job) >= at_least or the job is done: spins briefly, then sleeps; the job's
 * thread wakes a sleeper only when the horizon reaches at_least (no syscall per window otherwise). */
void relay_job_wait(RelayJob *job, SimTime at_least);
/* The same, or until one of `nodes` (n <= 8 watched nodes) is published (relay_job_have final), whichever
 * comes first. */
void relay_job_wait_nodes(RelayJob *job, SimTime at_least, const guint32 *nodes, guint n);
/* How long relay_job_wait and the waits for a job's end spin before they sleep (default SPIN_NS, 200 us): a
 * waiter that shares the cores with the jobs should spin little. */
void relay_pipe_set_spin(RelayPipe *pipe, gint64 spin_ns);
/* Gives the starting thread a helper (once; the default: none): while it waits for a job, it runs, in the
 * helper's context (a stack of its own, switched to on the starting thread), the job the helper holds, else
 * that job if it is still queued, else the oldest queued job, until the wait is over; between its waits the
 * helper's job stands still. The pipe then never has more than its threads plus one running. */
void relay_pipe_set_helper(RelayPipe *pipe);
/* Work for the waiting thread (the pipe's caller): while a wait above (and the waits for a job's end) finds
 * the relay not far enough yet, it calls `fn(user)`, which does a little work and returns whether it did any
 * (relay_work_set_idle's kind: the transaction metrics' queued records, say), and spins or sleeps only once
 * that returns FALSE. So the engine's thread does its side work while the relays it waits for run, off the
 * chain of finds and relays that bounds the pipeline. NULL: none. Call it with no job running. */
void relay_pipe_set_idle(RelayPipe *pipe, RelayIdleFn fn, gpointer user);
gboolean relay_job_done(const RelayJob *job);
/* The finished job's results (relay_work_have, relay_work_first_push, relay_work_announce,
 * relay_work_reached, ...); waits for the job to be done first. Valid until the job is released. */
const RelayWork *relay_job_work(const RelayJob *job);
/* Returns the slot, once the job is done (waits for it): after this the job pointer is invalid. */
void relay_job_release(RelayJob *job);
/* The slots' statistics summed over their finished jobs (as relay_work_get_stats; threads: the pipe's,
 * wall_s: the kernels' seconds summed over the threads). The Geth kernel's jobs use the pruning tables
 * (GethParams.prune_table_after) that one RelayWork fed the same blocks in start order would use, so they
 * skip the same steps: every result, watched or not, and these counts (prune_tables: that RelayWork's) are
 * the synchronous ones. */
void relay_pipe_get_stats(const RelayPipe *pipe, RelayWorkStats *st);

/* ---- For relay models outside relay.c: they keep their own scratch state and report through these ----
 * A kernel calls relay_work_begin() first, then records the final times of every node it reached or that
 * heard an announcement, then adds its counts. Nodes not recorded read as never reached. */

/* Starts a new propagation in `w`: every node unreached, counts zero. */
void relay_work_begin(RelayWork *w);
/* Records node `node`'s results: first full block (`have`, SIM_TIME_MAX: never; it then counts as reached
 * by relay_work_have()), first block message (`first_push`), first announcement (`announce`). */
void relay_work_record(RelayWork *w, guint32 node, SimTime have, SimTime first_push, SimTime announce);
void relay_work_add_counts(RelayWork *w, guint64 reached, guint64 messages);
/* A model's own scratch space attached to `w` (one per work, tagged by `owner`, e.g. the model's table):
 * NULL until set. relay_work_set_ext() hands `ext` over to `w`, which frees it with `free_fn` when freed or
 * when another owner's scratch replaces it. */
gpointer relay_work_ext(const RelayWork *w, const void *owner);
void relay_work_set_ext(RelayWork *w, const void *owner, gpointer ext, GDestroyNotify free_fn);
/* The topology sizes the work was made for. */
guint32 relay_work_n_nodes(const RelayWork *w);

/* ---- Shared by the relay models' kernels ---- */

/* A random stream for draws whose values must not depend on who draws them or when: SplitMix64 (Steele, Lea
 * and Flood, OOPSLA 2014: a Weyl sequence through a 64-bit finaliser; it passes BigCrush). Opening one costs
 * two mixes and a word one, where a Philox4x64-10 block of the engine's streams costs about 230
 * instructions. relay_mix_init keys it by (key, purpose, id); a kernel may also set `s` itself. */
typedef struct {
  guint64 s;
} RelayMix;

static inline void relay_mix_init(RelayMix *m, guint64 key, guint purpose, guint64 id) {
  m->s = sim_mix64(key ^ sim_mix64((guint64)purpose << 56 ^ id));
}

static inline guint64 relay_mix_next(RelayMix *m) {
  m->s += UINT64_C(0x9E3779B97F4A7C15);
  return sim_mix64(m->s);
}

/* Uniform in (0, 1): 53 bits, centred in their cell (the uniform of a latency draw). */
static inline double relay_mix_uniform_pos(RelayMix *m) {
  return ((double)(relay_mix_next(m) >> 11) + 0.5) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's method, as sim_rng_below). */
static inline guint64 relay_mix_below(RelayMix *m, guint64 n) {
  unsigned __int128 x = (unsigned __int128)relay_mix_next(m) * n;
  guint64 low = (guint64)x;
  if (G_UNLIKELY(low < n)) {
    guint64 threshold = -n % n;
    while (low < threshold) {
      x = (unsigned __int128)relay_mix_next(m) * n;
      low = (guint64)x;
    }
  }
  return (guint64)(x >> 64);
}

/* A link class: the edges with the same latency mean, floor, time per byte and host overhead share one.
 * Zero a key before filling it (equality is memcmp). For a GHashTable of keys: relay_class_key_hash,
 * relay_class_key_equal. */
typedef struct {
  SimTime mean_ns, floor_ns;
  double tx_ns_per_byte;
  SimTime host_ns;
} RelayClassKey;
guint relay_class_key_hash(gconstpointer key);
gboolean relay_class_key_equal(gconstpointer a, gconstpointer b);

G_END_DECLS
