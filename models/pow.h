/* pow.h: the proof-of-work chain world: pools made of miners, each mining on its own view of the head,
 * fork choice, uncle selection, and a network model that carries blocks between miners.
 *
 * Mechanism (DESIGN.md, "Ethereum 2019 model"):
 *  - Each miner finds blocks as a Poisson process at rate share / target_interval (memoryless, so one
 *    pending timer per miner is exact). A found block extends the miner's current head and references
 *    up to max_uncles side blocks it knows, chosen as Geth's worker does: its own first, then others',
 *    in random order (Geth iterates Go maps), each passing the uncle rule.
 *  - A miner adopts a block as head when its total difficulty is larger; on equal total difficulty it
 *    prefers the lower height, then keeps its own block, then switches with probability 1/2
 *    (Geth 1.8.23 core/blockchain.go, writeBlockWithState). A block whose parent is unknown waits.
 *  - The network model decides when each other miner learns of a block (that time includes the other
 *    pool's work distribution). A pool's own miners get work on its new block after its own work
 *    distribution delay (PowNetworkModel.own_work_delay): until then they mine on the old parent, which is
 *    how one-miner forks arise.
 *  - New work starts with an empty template for chain.empty_window_ms (a block found then is empty); the
 *    full template is rebuilt every chain.recommit_s, and blocks on one template share their transactions
 *    (ObsBlock.txset).
 *
 * Blocks live in append-only stores owned by the miner that mined them; ids are
 * ((miner index + 1) << 32 | sequence), so ids never depend on event interleaving. A block is immutable
 * once published, so other miners may read it after it reached them.
 */
#pragma once

#include "engine.h"
#include "tx.h"
#include "obs.h"
#include "obs_sink.h"
#include "params.h"
#include "strategy.h"
#include "uncles.h"

G_BEGIN_DECLS

typedef struct PowWorld PowWorld;
typedef struct PowMiner PowMiner;

enum { POW_DIFFICULTY_FIXED = 0, POW_DIFFICULTY_BYZANTIUM = 1 };
enum { POW_FORK_CHOICE_TD = 0, POW_FORK_CHOICE_LONGEST = 1 };

typedef struct {
  double target_interval_s;
  double block_reward_eth;
  int difficulty;             /* POW_DIFFICULTY_* */
  int fork_choice;            /* POW_FORK_CHOICE_* */
  double initial_difficulty;  /* byzantium: difficulty of the genesis (hashes per block) */
  double hashrate_hps;        /* byzantium: total hash rate of all miners */
  double tx_rate_per_s;       /* transactions waiting to be included arrive at this rate */
  double tx_gas;              /* gas of one transaction */
  double tx_bytes;            /* encoded size of one transaction */
  double header_bytes;        /* block header and framing */
  double block_gas_limit;
  double empty_window_ms;     /* after new work, miners mine an empty template until the full one is built */
  double recommit_s;          /* the full template is rebuilt with new transactions this often (Geth: 3 s) */
  int64_t first_block_number; /* the Number EMC logs give to height 1 (labels only: no model reads it) */
} PowChainParams;

extern const SimParamSpec pow_chain_params[];
extern const guint pow_chain_n_params;

/* Bounds on the mean time between blocks of the whole network, in seconds: chain.target_interval_s with
 * fixed difficulty, initial_difficulty / hashrate_hps (the first blocks' interval) with Byzantium. Time is
 * integer nanoseconds: a draw whose mean is near 1 ns rounds to 0 ns and the run stops advancing (with
 * 1e-12 every block was found at t = 0; with 1e-300 and stop.time_s the run never ended). 1 ms is 1e6 ticks,
 * so rounding moves no draw by more than 5e-7 of its mean, and it is also below any real block
 * propagation (light crosses 300 km in 1 ms): a shorter interval is not a blockchain, every block would
 * fork. The upper bound (11.6 days) keeps the first draws far from the end of the int64 clock. */
#define POW_MIN_INTERVAL_S 1e-3
#define POW_MAX_INTERVAL_S 1e6
/* Byzantium's equilibrium interval is 9 s / ln 2 = 13 s (EIP-100 without uncles, longer with them): the
 * estimate of a run's length in simulated time when it stops at a height. */
#define POW_BYZANTIUM_INTERVAL_S 13.0
/* The most blocks a run may be expected to mine (the bound of stop.heights): each block is kept in memory
 * until the end, and with the pool-delay network it costs one event per other miner. */
#define POW_MAX_BLOCKS 1e9

/* Cross-field checks of `chain` (after every field passed its own bounds), problems at `path` ("$.chain"):
 * with Byzantium, initial_difficulty / hashrate_hps must lie in [POW_MIN_INTERVAL_S, POW_MAX_INTERVAL_S] and
 * within a factor POW_EIP100_START_FACTOR of target_interval_s (below). */
void pow_chain_check(const PowChainParams *chain, SimDiag *diag, const char *path);

/* The mean interval between blocks of the whole network at the start of a run, in seconds. */
double pow_chain_first_interval_s(const PowChainParams *chain);

/* EIP-100 with a target: the rule's time step is POW_EIP100_STEP_S x target_interval_s /
 * POW_EIP100_REF_INTERVAL_S (exactly 9 s at the default 13.32 s, the mean interval 9 s gave on mainnet in
 * April 2019 at its uncle rate), so the interval it settles at scales with target_interval_s (exactly so
 * without uncles, where it is step / ln 2; uncles lengthen it by a few percent). With Byzantium,
 * initial_difficulty / hashrate_hps must lie within a factor POW_EIP100_START_FACTOR of target_interval_s
 * (pow_chain_check). */
#define POW_EIP100_STEP_S 9.0
#define POW_EIP100_REF_INTERVAL_S 13.32
#define POW_EIP100_START_FACTOR 2.0
double pow_chain_eip100_step_s(const PowChainParams *chain);

typedef struct {
  PowChainParams chain;
  SimModelRef uncles;  /* family "uncle_rule" (SimUncleRule) */
  SimModelRef network; /* family "network" (PowNetworkModel) */
  const PowPoolSpec *pools;
  guint n_pools;
  uint32_t stop_height; /* request a stop once a block of this height is mined; 0 = never */
  uint64_t seed;        /* master seed (networks key per-block streams with it) */
  const TxConfig *tx;   /* the transaction world, or NULL: block contents from chain.tx_rate_per_s */
  const ObsSink *tx_sink; /* where the transaction world's observations go (tx_world_new); NULL: nowhere */
  const struct PowTraceBlock *trace; /* trace-driven mining (below), or NULL */
  guint n_trace;
  /* The vantage points' first block message and first announcement of every block are both needed (their
   * logs, sim run --emc-logs). Otherwise only the earlier of the two (and which it was) is: every other
   * output reads no more, and a geo network's relay can stop sooner (relay.h, RelayStop). */
  gboolean vantage_all_messages;
} PowConfig;

/* Trace-driven mining (`sim run --mining-from`): who mined which block when is given; the network still
 * decides who learns of it when. Each block is mined by `miner` at `mined_ns` on the block the trace names
 * as its parent (which must come earlier in the array, or be OBS_GENESIS_ID), with the trace's difficulty,
 * contents and uncles (uncles the miner does not know are dropped). Ids are the trace's; the mined block's
 * own id is the simulator's (pow_world_trace_block() maps). No other block is mined. */
typedef struct PowTraceBlock {
  uint64_t id, parent;
  guint miner;
  int64_t mined_ns;
  int64_t timestamp_s;
  double difficulty;
  uint32_t n_tx, size_bytes;
  uint64_t gas_used;
  uint32_t n_uncles;
  uint64_t uncles[OBS_MAX_UNCLES];
} PowTraceBlock;

/* What a network's per-block relay computation did so far (sim run --stats, sim bench scaling); see relay.h
 * (RelayWorkStats) for the windowed kernel these figures describe. */
#define POW_RELAY_MAX_THREADS 64
typedef struct {
  guint threads;          /* threads one block's relay ran on, the calling thread included */
  guint32 groups;         /* fixed groups of nodes */
  guint32 largest_group;  /* nodes */
  SimTime lookahead_ns;   /* least latency floor between groups; SIM_TIME_MAX: none */
  guint32 lookahead_from; /* node ids of the link that sets it */
  guint32 lookahead_to;
  guint64 blocks;         /* blocks relayed */
  guint64 alone;          /* of which on the calling thread alone though split for several (adaptive) */
  guint64 windows;        /* windows, all blocks */
  guint64 steps;          /* label-setting steps taken */
  guint64 messages;       /* messages sent */
  guint64 deferred;       /* of which between groups, applied at window ends */
  guint64 work;           /* steps + messages sent and received between groups, all threads */
  guint64 work_critical;  /* the busiest thread's work per window, summed */
  double wall_s;          /* wall seconds in the relay */
  guint64 pruned;         /* of the steps, those skipped (they could not change what the run reads) */
  guint32 prune_tables;   /* block-size classes with skipping bounds of their own */
  double wait_s[POW_RELAY_MAX_THREADS]; /* per thread: wall seconds waiting at the window barrier */
  /* The pipeline (successive blocks' relays at once, each on one thread): */
  guint32 pipe_threads;    /* 0: no pipeline */
  guint64 pipe_helped;     /* blocks whose relay the engine's thread ran, in parts, while it waited */
  guint64 pipe_blocks;     /* blocks relayed as jobs */
  guint64 pipe_overlapped; /* ... started while an earlier block's relay still ran */
  guint64 pipe_in_flight;  /* relays running at each start, summed */
  guint64 gate_waits;      /* times the engine waited for a relay's progress */
  guint64 gate_holds;      /* times a miner's events were held until its delivery was known */
  double gate_wait_s;      /* the engine thread's wall seconds in those waits */
} PowRelayStats;

/* sim run --trace-blocks (PowNetworkModel.trace_*). */
#define POW_TRACE_MAX_HEIGHTS 64 /* heights one run may trace */
#define POW_TRACE_PER_HEIGHT 2   /* blocks traced per height (a fork's second block); later ones are dropped */
typedef struct {
  guint32 n_nodes;      /* nodes of the network: rows of the node table */
  guint n_blocks;       /* blocks traced, in mining order */
  guint64 dropped;      /* blocks of a traced height beyond POW_TRACE_PER_HEIGHT: not traced */
  guint64 mismatches;   /* traced blocks whose relay to the end disagreed with the run's own relay at a vantage
                         * point or gateway (0 unless something is wrong: the trace must not change the run) */
} PowTraceInfo;
typedef struct {
  const char *role;   /* "vantage", "gateway" or "node" */
  const char *name;   /* vantage or gateway name; "" for an ordinary node */
  const char *pool;   /* gateways and nodes that host a pool's miners: the pool; else "" */
  const char *region; /* region name */
  const char *city;   /* city name, "" where the node has none */
} PowTraceNode;
typedef struct {
  uint64_t block;       /* ObsBlock.id */
  uint32_t height;
  SimTime mined_ns;     /* when it was mined (its relay's start) */
  const SimTime *have;  /* per node: when it first had the full block, SIM_TIME_MAX if never */
} PowTracedBlock;

/* The "network" model family: how a block found by one miner reaches the others. */
typedef struct {
  SimModelInfo info;
  /* Builds the network's own state once the miners exist (may add entities to `engine`); NULL + error on
   * failure. May be NULL: the network needs no state. */
  gpointer (*init)(const void *params, const PowWorld *world, SimEngine *engine, GError **error);
  void (*free_state)(gpointer state);
  /* Per-miner scratch space (owned by that miner's entity), or NULL. */
  gpointer (*miner_scratch)(gpointer state, guint miner);
  void (*free_scratch)(gpointer scratch);
  /* Called in the handler of miner `from`, right after it mined `b`: arrange for every other miner to
   * receive a POW_EV_BLOCK event carrying b->id when it has imported the block and given its miners work
   * on it. Each other miner receives each block at most once (miners rely on it). */
  void (*publish)(const void *params, gpointer state, gpointer scratch, const PowWorld *world, SimCtx *ctx,
                  guint from, const ObsBlock *b);
  /* How long a pool's own miners keep working on the old parent after the pool found a block (its work
   * distribution to itself); NULL or 0: at once. Drawn from the miner's stream. */
  SimTime (*own_work_delay)(const void *params, SimRng *rng);
  /* Vantage points (names and their sightings), for the propagation metrics; NULL when the network has
   * none. `sightings` is a GArray of ObsSighting owned by the network state. */
  guint (*n_vantages)(gpointer state);
  const char *(*vantage_name)(gpointer state, guint i);
  const GArray *(*vantage_sightings)(gpointer state, guint i);
  /* Node-block deliveries made so far (full blocks reaching nodes), for benchmarks; may be NULL. */
  guint64 (*deliveries)(gpointer state);
  /* What the transaction world needs (topology, vantage and gateway nodes, block receptions); NULL: the
   * network has no topology (transactions reach pools after the transactions' pool_delay). */
  void (*tx_view)(gpointer state, const PowWorld *world, TxNetView *view);
  /* The least delay, over the instantiated network, from a miner's handler to any other entity receiving
   * what it sends (the lookahead a split of the world could have); NULL: 0 (no positive lower bound). */
  SimTime (*min_delay)(gpointer state);
  /* Wall-clock seconds spent so far in the network's per-block relay computation (inside `publish`), for
   * `sim run --stats`; NULL: not measured. Never part of any output file. */
  double (*relay_wall_s)(gpointer state);
  /* Threads for the network's own per-block computation (the relay of one block); its results must not
   * depend on the number. `adaptive`: it may run a block on fewer threads when that has been faster (a
   * machine busy with other work); else it uses them all. NULL: it has none. */
  void (*set_threads)(gpointer state, guint threads, gboolean adaptive);
  /* Side work (pow_world_set_side_work) for a thread of the network's own that waits between blocks; NULL: it
   * has no such thread (the work is then done where it was queued). */
  void (*set_side_work)(gpointer state, gboolean (*fn)(gpointer user), gpointer user);
  /* Successive blocks' relays at once on the relay's threads, each on one (sim run --relay-pipeline): TRUE if
   * the network can (it then needs threads >= 2 and the sequential engine); NULL: it cannot. */
  gboolean (*set_pipeline)(gpointer state, gboolean on);
  /* Fills `stats` with what its per-block relay did so far; FALSE (or NULL): nothing to report. */
  gboolean (*relay_stats)(gpointer state, PowRelayStats *stats);
  /* `sim run --trace-blocks`: every node's arrival time of the blocks of chosen heights (NULL: a network
   * without nodes). trace_set is called once before the run; it preallocates room for POW_TRACE_PER_HEIGHT
   * blocks per height (more at one height are counted in PowTraceInfo.dropped) and must not change any
   * other output. trace_node and trace_block read the result after the run. */
  gboolean (*trace_set)(gpointer state, const PowWorld *world, const uint32_t *heights, guint n, GError **error);
  void (*trace_info)(gpointer state, PowTraceInfo *info);
  void (*trace_node)(gpointer state, guint32 node, PowTraceNode *node_out);
  void (*trace_block)(gpointer state, guint i, PowTracedBlock *block_out);
  /* The nodes of the network its parameters describe (sim bench's line); NULL: a network without nodes. */
  gint64 (*nodes)(const void *params);
} PowNetworkModel;

extern const PowNetworkModel pow_network_pool_delay;

/* Event types of a miner entity. */
enum { POW_EV_MINE = 1, POW_EV_BLOCK = 2, POW_EV_WORK = 3 };


#define POW_ERROR (pow_error_quark())
GQuark pow_error_quark(void);
typedef enum { POW_ERROR_INVALID } PowError;

/* Builds the world into `engine`: one entity per miner (ids in pool order), first mining timers
 * scheduled. `cfg` (and what it points to) must outlive the world. Free with pow_world_free().
 *
 * Partitioning: every entity of the world (miners and the network's entities) is declared one group
 * (sim_engine_keep_together), so the world always runs sequentially, at any thread count; see
 * pow_world_partition_note() for why. */
PowWorld *pow_world_new(const PowConfig *cfg, SimEngine *engine, GError **error);
void pow_world_free(PowWorld *world);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PowWorld, pow_world_free)

guint pow_world_n_miners(const PowWorld *world);
/* The pool (scenario entry) of a miner, and its index among that pool's miners. */
guint pow_world_miner_pool(const PowWorld *world, guint miner, guint *member);
const PowConfig *pow_world_config(const PowWorld *world);
/* The network's state (what its init returned). */
gpointer pow_world_net_state(const PowWorld *world);
SimEntityId pow_world_miner_entity(const PowWorld *world, guint miner);
/* Highest block height mined so far (any miner). */
uint32_t pow_world_max_height(const PowWorld *world);
uint64_t pow_world_n_blocks(const PowWorld *world);
/* The transaction world (NULL without a "transactions" section). */
TxWorld *pow_world_tx(const PowWorld *world);
/* Trace-driven mining: the simulator's id of trace block `i` (in PowConfig.trace), OBS_GENESIS_ID if it was
 * not mined (its parent was not). */
uint64_t pow_world_trace_block(const PowWorld *world, guint i);

/* Why the world is one group, for `sim run --stats`: one line naming what ties its entities together in
 * this configuration, and the lookahead a split would have. With the run's wall-clock seconds `run_wall_s`
 * (> 0) and a network that measures its relay (relay_wall_s), it adds the relay's share of the run; with a
 * relay that reports (relay_stats), a second line, "relay: ...", on how each block's relay ran on its own
 * threads (groups, lookahead, windows per block, steps per window, the work balance and barrier waits).
 * Free with g_free(). */
char *pow_world_partition_note(const PowWorld *world, double run_wall_s);

/* Threads for the network's per-block computation (PowNetworkModel.set_threads): the world's events stay one
 * group on the engine; each block's relay runs on up to `threads` threads (`adaptive`: on the calling thread
 * alone when that has been measured faster). Outputs do not depend on either. */
void pow_world_set_threads(PowWorld *world, guint threads, gboolean adaptive);
/* Work that a thread of the network's own may do while it waits between blocks (PowNetworkModel.
 * set_side_work; the relay's first extra thread, relay_work_set_idle): `fn(user)` does a little of it and
 * returns whether it did any, safe to call from that thread while the engine runs on (obs_async_consume, the
 * transaction metrics' queue). Outputs must not depend on who does it. With it (fn NULL too) that thread
 * also draws the transaction world's next transactions ahead (tx_world_side_work). */
void pow_world_set_side_work(PowWorld *world, gboolean (*fn)(gpointer user), gpointer user);
/* sim run --relay-pipeline (PowNetworkModel.set_pipeline): FALSE when the network cannot pipeline its relay
 * (another relay model, miners on ordinary nodes, joining nodes, a strategy other than the honest one, or
 * trace-driven mining). */
gboolean pow_world_set_relay_pipeline(PowWorld *world, gboolean on);
/* What the network's relay did (PowNetworkModel.relay_stats); FALSE if it reports nothing. */
gboolean pow_world_relay_stats(const PowWorld *world, PowRelayStats *stats);

/* The block with this id (OBS_GENESIS_ID gives the genesis), or NULL. Owned by the world. */
const ObsBlock *pow_world_block(const PowWorld *world, uint64_t id);

/* A miner's share of the total hash power. */
double pow_world_miner_share(const PowWorld *world, guint miner);

/* Sends every block to `sink` (its block member) in mining order (time, height, id). */
/* The relay's pipeline (net_geo's publish, one block ahead on other threads) asks what a miner can still do
 * before a block reaches it. TRUE when every miner's strategy is the honest one (no hooks) and mining is not
 * trace-driven: then a delivery changes only the receiver's own state and its next find. */
gboolean pow_world_pipeline_ok(const PowWorld *w);
/* When the miner's current draw ends in a find (the event a POW_EV_MINE of its current generation leads to);
 * SIM_TIME_MAX if none is drawn. */
SimTime pow_world_find_at(const PowWorld *w, guint miner);
/* TRUE when `ev`, an event to the miner, would do nothing when handled, now or later: a POW_EV_MINE of an
 * earlier draw (its work changed since; generations only grow). The relay's pipeline drops it without waiting
 * (SIM_GATE_INERT). */
gboolean pow_world_event_inert(const PowWorld *w, guint miner, const SimEvent *ev);
/* A lower bound on it, without the walk over the difficulty's steps. */
SimTime pow_world_find_lb(const PowWorld *w, guint miner);
/* Work that the next find would do first, done now: the transactions created up to `t` (tx_world_advance).
 * The caller knows that no miner finds a block before `t`, and that the run ends at a find at or after `t`
 * (pow_world_ends_at_find): the transactions a run creates are those up to its last find. */
void pow_world_prepare(const PowWorld *w, SimTime t);
/* TRUE when a run of the world can only end at a find (stop.heights), given the engine's stop time (SIM_TIME_MAX:
 * none): not at a stop time after its last find. */
gboolean pow_world_ends_at_find(const PowWorld *w, SimTime stop_time);
/* A lower bound on the miner's next find, if it comes at or before `until`, when its work may switch before
 * then to a child of any of the `n` blocks `blocks` (ids of blocks mined; a switch keeps the budget left,
 * new_work): the budget spent at the greatest rate any of that work can have until then. SIM_TIME_MAX when
 * the budget cannot end. */
SimTime pow_world_find_lb_switching(const PowWorld *w, guint miner, SimTime until, const uint64_t *blocks, guint n);
gboolean pow_world_feed(const PowWorld *world, const ObsSink *sink, GError **error);

G_END_DECLS
