/* replay.h: measured logs through the same analysis as simulations (`sim replay`).
 *
 * One directory of EMC raw logs per vantage point (traces/emc.h) becomes the observation stream the
 * simulator emits, then the same AnChain / AnProp / AnTx code computes the same summary.json keys and CSVs
 * as `sim run`:
 *  - Blocks (NewBlockMsg): duplicates across lines and vantage points are merged, keeping the first line's
 *    fields; a block's id is its hash's first 8 bytes (emc_hash_id), its parent's likewise. Heights are
 *    re-based so the lowest block number seen is height 1 (its parent becomes the genesis). A block whose
 *    parent was never seen stands on a placeholder for that parent (see SimReplayBlock), and so on down to
 *    the nearest number the logs have. The mined time is the header time (the study's InterblockTime used
 *    it too); difficulty, uncles, transaction count, gas used and size come from the line; the template
 *    (txset) is a hash of the transaction list, so two blocks with the same transactions have the same one.
 *  - Lines that cannot be right, although they parse, are bad lines like those that do not parse: counted
 *    in replay.bad_lines, the first few reported on stderr as FILE:LINE: why, and with `strict` the first
 *    is fatal. On one line: a Number of 0 (the genesis is never sent), a Difficulty of 0 (proof of work and
 *    Clique both have at least 1), a block that is its own parent or lists itself or its parent as an
 *    uncle, a BlockHash whose first 8 bytes are zero (the id of the genesis here). Across lines: a later
 *    line of a block with another Number or ParentHash than its first line; and a block one number
 *    above or below its logged parent or child is not possible: of the two, the block with more such
 *    contradictions and fewer agreeing neighbours is left out (the child on a tie), with all its lines,
 *    counted in replay.detached_blocks, and its children stand on a placeholder instead. A parent hash
 *    whose first 8 bytes are zero is the genesis (simulated logs write it): its child must be Number 1.
 *    A block with no logged parent or child cannot be checked this way.
 *  - Miners: one per coinbase address; its pool from the address map (`pools_csv`: the columns `address`
 *    and a name column, as ethereum-2019-04/pool_addresses.csv; an empty name maps nothing), else
 *    "Others". A pool name must be valid UTF-8 without control characters (and without NUL bytes: the
 *    CSV reader refuses them), and so must the vantage names and the paths written to summary.json.
 *    Pools are reported in the map's order (those that mined), then "Others". Hash shares are unknown in a
 *    log and reported as each miner's share of all blocks.
 *  - Sightings: per vantage point and block, the earliest block message and the earliest announcement
 *    (NewBlockHashesMsg), as the study did.
 *  - Transactions (TxMsg): per transaction the first line's sender, nonce, type, gas limit and price, and
 *    per vantage point the earliest reception; inclusions from every block's transaction list; a
 *    transaction that no vantage point logged but a block includes is counted in
 *    replay.txs_only_in_blocks and left out of the tx metrics (its reception is unknown).
 *  - Order (docs/measured-logs.md, "Order, duplicates, clock steps and gaps"): per file, a line with the same
 *    hash and LocalTimestamp as an earlier line of that time is a duplicate (skipped); a line up to 1 s
 *    earlier than the line before is out of order (kept), more is a clock step back (kept); two block lines
 *    more than 60 s apart whose local times advanced more than 30 s beyond their header Times are a clock
 *    step forward (kept); per vantage point, a logged Number more than 1 above the one before is a gap.
 *    Counted in replay.duplicates, .reordered, .clock_steps, .gaps (.gap_heights) and per vantage point
 *    in replay.by_vantage, the first few per file reported as FILE:LINE: why; with `strict` the first
 *    reordering or clock step is fatal (duplicates and gaps are not: the real logs have both).
 * Times stay in the logs' clock (Unix ns). Memory holds the blocks and one record per distinct
 * transaction (its first receptions), never the lines: logs with every duplicate are streamed.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

#include "chain.h"
#include "obs.h"

G_BEGIN_DECLS

typedef struct {
  const char *const *dirs;  /* one per vantage point */
  const char *const *names; /* vantage names, or NULL: each directory's base name */
  guint n_vantages;
  const char *pools_csv;    /* address -> pool map, or NULL */
  gboolean strict;          /* the first bad line is fatal */
  const char *out_dir;      /* NULL: results/replay */
  double block_reward_eth;  /* rewards for the analysis (2, 8, 32 by default) */
  uint32_t heights;         /* metric window: heights 1..heights after re-basing (0: all), as stop.heights */
  int argc;
  char **argv;
  gboolean skip_txs;        /* leave the transaction logs unread (nothing needs the transactions) */
} SimReplayOptions;

#define SIM_REPLAY_ERROR (sim_replay_error_quark())
GQuark sim_replay_error_quark(void);
typedef enum { SIM_REPLAY_ERROR_INPUT = 2, SIM_REPLAY_ERROR_RUNTIME = 1 } SimReplayError;

/* Reads the logs, computes the metrics, writes summary.json, blocks.csv, pools.csv, runs.csv,
 * observations.csv and tx_commit.csv atomically into the output directory. FALSE with `error`
 * (SIM_REPLAY_ERROR_INPUT: bad input, nothing written). `summary` (may be NULL) receives the summary. */
gboolean sim_replay(const SimReplayOptions *opt, json_t **summary, GError **error);

/* ---- The logs as a dataset (what sim_replay() analyses; `sim calibrate` fits models to it) ---- */

/* One block: as logged (the first line's fields), or a placeholder for an ancestor no line showed. */
typedef struct {
  ObsBlock b;          /* height re-based (see above), miner an index into the dataset's miners, mined_ns the
                        * header time; a placeholder has miner OBS_MINER_NONE, no transactions, and its
                        * child's difficulty and time */
  uint64_t number;     /* the block number in the logs */
  uint64_t coinbase;   /* emc_address_id() of the coinbase (0 for a placeholder) */
  uint32_t n_txs;
  uint64_t *txs;       /* transaction ids in block order (n_txs of them) */
  int64_t *msg_ns;     /* per vantage point: its earliest block message, OBS_TIME_NONE if none */
  int64_t *ann_ns;     /* per vantage point: its earliest announcement, OBS_TIME_NONE if none */
  guint order;         /* first-seen order over all logs */
  gboolean placed;     /* in the chain (FALSE: detached) */
  gboolean placeholder;
  const char *file;    /* the block's first line: its file (owned by the dataset; NULL for a placeholder) */
  guint64 line;        /* ... and its line number in that file */
  guint n_lines;       /* lines that showed the block (duplicates included) */
} SimReplayBlock;

/* One distinct transaction: the first line's fields and per vantage point its earliest reception. */
typedef struct {
  ObsTx rec;           /* created_ns is OBS_TIME_NONE (a log does not know it); gas_price_wei as logged */
  int64_t recv[];      /* per vantage point, OBS_TIME_NONE if that point did not log it */
} SimReplayTx;

/* What was read. */
typedef struct {
  guint64 block_lines, announcement_lines, tx_lines; /* records read, duplicates included */
  guint64 bad_lines;          /* lines skipped, all kinds: malformed, impossible, inconsistent, and every
                               * line of a detached block */
  guint64 blocks;             /* distinct logged blocks in the chain (not placeholders, not detached) */
  uint64_t first_number;      /* the lowest block number: height 1 */
  guint64 detached_blocks;    /* logged blocks left out: their Number contradicts their parent's or child's */
  guint64 placeholder_blocks;
  guint64 announced_only;     /* hashes announced but never received as blocks */
  guint64 unknown_uncles;     /* uncle references to blocks no log showed (dropped) */
  guint64 txs;                /* distinct transactions logged */
  guint64 txs_only_in_blocks; /* transaction references in placed blocks to transactions no log showed */
  guint64 duplicates;         /* lines skipped as repeats: same hash and LocalTimestamp in one file */
  guint64 reordered;          /* lines up to 1 s earlier than the line before (kept) */
  guint64 clock_steps;        /* steps of the local clock, back (> 1 s) or forward (kept) */
  guint64 gaps, gap_heights;  /* jumps of more than 1 in a vantage point's logged Numbers, heights missing */
} SimReplayCounts;

typedef struct SimReplayData SimReplayData;

/* Reads the logs of `opt` (dirs, names, pools_csv, strict, skip_txs, block_reward_eth; the output fields are
 * not used) into memory. Bad lines are reported on stderr as they are warnings (the first few per file, then
 * how many in all; see above). In memory: blocks placed and typed by AnChain (finalized, no window), miners
 * and pools, sightings, transactions. NULL with `error` (SIM_REPLAY_ERROR_INPUT) on bad input. Free with
 * sim_replay_data_free(). */
SimReplayData *sim_replay_load(const SimReplayOptions *opt, GError **error);
void sim_replay_data_free(SimReplayData *data);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimReplayData, sim_replay_data_free)

/* Everything below is owned by `data` and valid until sim_replay_data_free(). */
guint sim_replay_data_n_vantages(const SimReplayData *data);
/* The vantage names (given, or the directories' base names), in the order of `opt->dirs`. */
const char *const *sim_replay_data_vantage_names(const SimReplayData *data);
const char *sim_replay_data_vantage_dir(const SimReplayData *data, guint vantage);
const SimReplayCounts *sim_replay_data_counts(const SimReplayData *data);
/* The chain of every placed block (logged and placeholders), finalized: block types, main chain, miners
 * (one per coinbase, in first-seen order) and their pools (an_chain_miner_group(), an_chain_pool()). */
const AnChain *sim_replay_data_chain(const SimReplayData *data);
/* The logged blocks that were placed, by number then first-seen order; `n` receives their count. */
const SimReplayBlock *const *sim_replay_data_blocks(const SimReplayData *data, guint *n);
/* A block of the chain by id (logged, or a placeholder); NULL if unknown or detached. */
const SimReplayBlock *sim_replay_data_block(const SimReplayData *data, uint64_t id);
/* The pool the address map gives the coinbase with this emc_address_id(), or NULL if the map has none. */
const char *sim_replay_data_pool_of(const SimReplayData *data, uint64_t coinbase);
/* The distinct transactions by ascending id; `n` receives their count. */
const SimReplayTx *const *sim_replay_data_txs(const SimReplayData *data, guint *n);

G_END_DECLS
