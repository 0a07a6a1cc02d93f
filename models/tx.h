/* tx.h: the transaction world: senders emitting transactions, their propagation to pools and vantage
 * points, the pools' mempools and block templates, and the streamed transaction metrics.
 *
 * Mechanism (DESIGN.md, "Ethereum 2019 model"; every default is documented in the parameter table):
 *  - Senders. Sessions arrive as a Poisson process; each picks an account uniformly among `senders` accounts
 *    and sends transactions with the account's consecutive nonces. An ordinary session sends a geometric
 *    number (mean txs_per_sender) with exponential gaps (mean sender_gap_s) and enters the network at one
 *    node; a burst (a share burst_share of sessions) sends a geometric number (mean burst_txs) signed back to
 *    back (exponential gaps, mean burst_gap_s) and enters at burst_entry_nodes nodes, its nonces split into
 *    that many contiguous parts in order, each part at its own node (a wallet or bot that submits to several
 *    nodes, or a burst re-sent by the peers a node syncs its pool to). The session rate is rate_per_s over
 *    the mean transactions of a session, so transactions arrive at rate_per_s overall. An account's first
 *    nonce is lognormal (first_nonce_median, first_nonce_sigma; keyed by the seed and the account, so no
 *    draw of the run's streams), as accounts with a history have. The defaults are
 *    fitted to the real Rinkeby logs (docs/txorder.md, "Out-of-order transactions"). Each has a type (TX/MC/CC, shares), a gas limit (TX: 21,000; MC, CC:
 *    lognormal, cut to [21,000, block gas limit]), gas used (TX: all of it; MC, CC: used_fraction of it), a
 *    gas price drawn from classes (the study's gwei classes; within a class log-uniform, uniform from 0) and
 *    a size per type. A session enters the network at one ordinary node (uniform over nodes, so regions
 *    weigh by their node population).
 *  - Propagation (geo networks). Geth 1.8 floods a transaction to every peer that lacks it, so a node's
 *    first reception is the shortest path over the topology with the links' latency draws and transfer
 *    times. "region" (default): at start, region_samples shortest-path trees are computed from random nodes
 *    of each region (each node's links drawn from a stream of its own, keyed by tree and node, and each tree
 *    stopped once every vantage point and pool has its time: tree_stop), and a transaction of an ordinary session takes the delays to every vantage point and pool (the
 *    earliest of its gateways) of one tree of its session's region, drawn per transaction; each entry node of
 *    a burst keeps one tree (drawn from its region) for all its transactions, which therefore arrive in
 *    order along it. "flood": one shortest-path
 *    computation per transaction from its session's node (small runs). Nonce gaps: a node forwards a
 *    transaction only once it has the sender's previous one (Geth promotes a transaction to pending, and
 *    broadcasts it, only then). Per-peer broadcast (peer_fifo; Geth 1.8.23 eth/handler.go BroadcastTxs,
 *    eth/peer.go AsyncSendTransactions and broadcast): the transactions of one promotion are one list per
 *    peer; a connection sends its lists one at a time and delivers them in order (TCP). "flood" keeps each
 *    session's connection state (txw_link_send): a list starts when the previous one is sent, arrives no
 *    earlier than it, joins it when promoted at the same instant (batch_lists: a gap filled, or one message
 *    received, whose transactions arrive together), and is dropped when max_queued_lists wait
 *    (maxQueuedTxs). Then a node that is not the entry node receives a sender's transactions in nonce order
 *    unless a queue dropped: "region" (no queues) takes each target's previous reception of the session as a
 *    lower bound. peer_fifo false: a latency draw per message; "region" then bounds only at the last hop (the
 *    previous transaction's arrival minus its last hop bounds when the upstream node could forward).
 *    Networks without a topology deliver to pools after `pool_delay` and have no vantage points.
 *  - Mempools. A pool's mempool at time t holds the transactions that reached it by t, not included in its
 *    head's chain, not evicted. Pools see the same transactions within a fraction of a second, so their
 *    mempools share one price index (gas-price bins, exact price order within a bin) and differ by arrival
 *    times, the chain they build on and censorship; the index holds at most mempool_capacity transactions
 *    (Geth: 4096 + 1024 slots), evicting the cheapest (with the sender's later nonces, which cannot run;
 *    the wallet reuses the nonce). When more gas is sent than blocks hold (2019: 8.2 transactions per second
 *    seen, 7.7 included), the excess waits there and the cheapest of it is evicted: that standing backlog is
 *    what gives a block found soon after the previous one transactions to include. Like Geth's pool reset
 *    on a new head, a transaction leaves the index while a block of the heaviest chain holds it (and comes
 *    back if that block leaves the chain); a
 *    template on a parent off the heaviest chain, or behind its tip, also considers the transactions of
 *    the heaviest-chain blocks it lacks. Transactions are freed when their block is SETTLE_DEPTH deep.
 *    Every block that includes a transaction is remembered with it, so no chain holds it twice.
 *  - Templates. A block's template is built as Geth's worker does (miner/worker.go commitTransactions):
 *    by gas price, each sender's transactions in nonce order (the next nonce is executable when the
 *    previous one is in the chain or already in the block), a transaction whose gas limit exceeds the gas
 *    left drops its sender for this block, until less than 21,000 gas is left. It is built from what the
 *    pool knew at the template's time (the last refresh); two blocks on one template have the same
 *    transactions. Censoring pools skip censored senders' transactions.
 *  - Metrics. Transactions go to AnTx (analysis/txmetrics.h) as they are created (with their receptions at
 *    the vantage points), inclusions as blocks are mined, and main heights once DECLARE_DEPTH deep on the
 *    heaviest chain; memory stays bounded by what is live.
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "engine.h"
#include "net.h"
#include "obs.h"
#include "params.h"
#include "rng.h"
#include "obs_sink.h"

G_BEGIN_DECLS

#define TX_SETTLE_DEPTH 6   /* a block this deep on the heaviest chain takes its transactions out of mempools */
#define TX_DECLARE_DEPTH 64 /* a main height this deep is declared final to the metrics */
#define TX_MAX_CLASSES 16
#define TX_MAX_ENTRY_NODES 8

enum { TX_PROP_REGION = 0, TX_PROP_FLOOD = 1 };

typedef struct {
  double rate_per_s;
  double txs_per_sender;
  double sender_gap_s;
  double burst_share, burst_txs, burst_gap_s;
  int64_t burst_entry_nodes;
  double first_nonce_median, first_nonce_sigma;
  int64_t senders;
  double share_tx, share_mc, share_cc;
  double tx_gas;
  double mc_gas_median, mc_gas_sigma;
  double cc_gas_median, cc_gas_sigma;
  double used_fraction;
  double bytes_tx, bytes_mc, bytes_cc;
  int64_t mempool_capacity;
  int propagation; /* TX_PROP_* */
  int64_t region_samples;
  gboolean tree_stop;       /* region: a sampled tree stops once every target has its time (exact) */
  gboolean peer_fifo;       /* each connection delivers in order, one list at a time */
  int64_t max_queued_lists; /* flood: a connection's queue of lists (Geth 1.8: 128); 0: unbounded */
  gboolean batch_lists;     /* flood: transactions promoted together are one list (one message) */
} TxParams;

extern const SimParamSpec tx_params[];
extern const guint tx_n_params;

typedef struct {
  double min_gwei, max_gwei, share;
} TxPriceClass;

/* The scenario's "transactions" object, parsed and validated. */
typedef struct {
  TxParams p;
  TxPriceClass classes[TX_MAX_CLASSES];
  guint n_classes;
  SimModelRef pool_delay;  /* family "delay": networks without a topology */
  gboolean *censors;       /* per pool: censors the censored senders */
  double censor_share;     /* share of senders whose transactions censoring pools refuse (0: none) */
  double censor_tx_share;  /* share of transactions refused, each on its own (0: none) */
  guint64 *censor_senders; /* sender accounts refused, sorted (from "senders") */
  guint n_censor_senders;
  guint n_pools;
} TxConfig;

/* Parses `obj` (at JSON path `path`) with the scenario's pools and block gas limit; problems go to `diag`.
 * Missing keys get their defaults (so `obj` becomes the echo). Returns TRUE when valid. Free the
 * contents with tx_config_clear() either way. */
gboolean tx_config_parse(TxConfig *cfg, json_t *obj, const char *path, const char *const *pool_names, guint n_pools,
                         double block_gas_limit, SimDiag *diag);
void tx_config_clear(TxConfig *cfg);
void tx_config_describe(GString *out);

/* What the network offers the transaction world. With `topo` == NULL, transactions reach every pool after
 * the config's pool_delay and no vantage point sees them. */
typedef struct {
  const NetGeoParams *gp;
  const NetTopology *topo;
  guint n_vantages;
  const char *const *vantage_names;
  const guint32 *vantage_node;     /* n_vantages */
  guint n_pools;
  const guint32 *const *pool_gw;   /* per pool: its gateway nodes */
  const guint *pool_n_gw;
  /* A vantage point's first reception (block message or announcement) of a block, OBS_TIME_NONE if none. */
  int64_t (*reception)(gconstpointer user, guint vantage, uint64_t block);
  gconstpointer user;
} TxNetView;

/* The chain as the transaction world may read it. */
typedef const ObsBlock *(*TxBlockLookup)(gconstpointer user, uint64_t id);

typedef struct TxWorld TxWorld;

/* `miner_pool[m]` is the pool of miner m (ObsBlock.miner); `pool_share` the pools' hash shares. Observations
 * (the vantage table at once, then transactions with their receptions, inclusions and final main blocks) go
 * to `sink` (copied; what it points to must outlive the world; NULL: none). */
TxWorld *tx_world_new(const TxConfig *cfg, const TxNetView *net, double block_gas_limit, double header_bytes,
                      const double *pool_share, const guint *miner_pool, guint n_miners, uint64_t seed,
                      TxBlockLookup lookup, gconstpointer lookup_user, const ObsSink *sink, GError **error);
void tx_world_free(TxWorld *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TxWorld, tx_world_free)

/* Fills b->n_tx, gas_used and size_bytes for the block `b` of pool `pool` on `parent`, from the template
 * built at `built` (b->txset identifies the template: a second block on the same template of the same
 * pool gets the same transactions), and records its transactions. A block on the empty template
 * (b->empty on entry) gets none. On return b->empty says whether the block has no transaction, as the study
 * counted empty blocks (a full template can be empty too, when the pool's mempool is). */
void tx_world_build(TxWorld *w, guint pool, const ObsBlock *parent, SimTime built, ObsBlock *b);

/* Creates now every transaction up to time `t` that the next tx_world_build() would create first (their
 * creation is a function of time alone, in time order: only the blocks' own calls, at their finds, change
 * what it reads). Exact only when no block is found before `t`: the relay's pipeline (geo.c) calls it while
 * it waits, with a lower bound of every miner's next find, so that a find's build has less to do. */
void tx_world_advance(TxWorld *w, SimTime t);
/* Side work for another thread while the engine's runs on (pow_world_set_side_work): draws up to 16 of the
 * next transactions ahead of time (their senders, kinds, gas, prices and receptions: the generator's part,
 * a function of its own streams in creation order, so the same whoever draws them and whenever), at most
 * 1,024 ahead; the engine's thread gives them their slots, ids and nonces as it reaches their creation times.
 * Returns whether it drew any. Nothing after tx_world_finish(). `w` is a gpointer so that it is a side-work
 * function. */
gboolean tx_world_side_work(gpointer w);

/* Every mined block, right after tx_world_build() (its inclusions go to the metrics), and the heaviest
 * block whenever it changes (settles and declares heights). */
void tx_world_on_mined(TxWorld *w, const ObsBlock *b);
void tx_world_on_best(TxWorld *w, const ObsBlock *best);

/* After the run: declares the main heights up to `window` from the final chain (`main_block(main_user, h)`),
 * checking that the heights declared during the run agree with it, then the sink's finish. Call once. */
gboolean tx_world_finish(TxWorld *w, ObsMainChainFn main_block, gpointer main_user, uint32_t window,
                         GError **error);

/* Adds the world's own keys to "tx" (created there if absent; the metrics' keys come first, from the sink's
 * consumer): evicted, mempool_peak, mempool_at_end, finality_mismatches, reorgs_past_settle_depth, by_pool;
 * and, with censoring pools, "censorship" to `summary`. After tx_world_finish(). */
void tx_world_add_json(const TxWorld *w, json_t *summary, const char *const *pool_names);

/* The censorship table (k, observed, iid), after tx_world_finish(). */
gboolean tx_world_write_censorship_csv(const TxWorld *w, FILE *out);
gboolean tx_world_has_censorship(const TxWorld *w);

/* Transactions live in the world now (mempool index plus recent blocks), and created so far. */
guint64 tx_world_live(const TxWorld *w);
guint64 tx_world_created(const TxWorld *w);

/* ---- For EMC logs (sim run --emc-logs) ----
 * Keeps every transaction (fields and receptions by the vantage points) and every block's transaction ids
 * until the world is freed: memory grows with the run's transactions, so this is for runs written out as
 * logs. Call before the run. */
void tx_world_keep_for_logs(TxWorld *w);
typedef struct {
  uint64_t id, sender, nonce;
  uint8_t type;
  uint32_t gas_limit, bytes;
  double price_gwei;
  const int64_t *recv; /* per vantage point, OBS_TIME_NONE if never */
} TxLogView;
guint64 tx_world_log_n_txs(const TxWorld *w);
void tx_world_log_tx(const TxWorld *w, guint64 i, TxLogView *out);
/* The ids of block `block`'s transactions in order, NULL (and *n = 0) for a block without transactions. */
const uint64_t *tx_world_log_block_txs(const TxWorld *w, uint64_t block, guint *n);

/* ---- For tests ---- */

/* A transaction made by hand (no session): the sender's next nonce, created at `created`, reaching every pool
 * at `arrive` (no vantage point sees it). Returns its id. */
uint64_t tx_world_inject(TxWorld *w, uint32_t sender, double price_gwei, uint32_t gas_limit, uint32_t gas_used,
                         gboolean censored, SimTime created, SimTime arrive);
/* The ids of block `block`'s transactions in template order, while the block's height is not declared yet;
 * NULL if unknown. Free with g_array_unref(). */
GArray *tx_world_block_txs(const TxWorld *w, uint64_t block);
/* The nonce given to transaction `id` if it is still live, else UINT64_MAX. */
uint64_t tx_world_nonce(const TxWorld *w, uint64_t id);

G_END_DECLS
