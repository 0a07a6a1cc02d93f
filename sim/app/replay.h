/* replay.h: measured logs through the same analysis as simulations (`sim replay`).
 *
 * One directory of EMC raw logs per vantage point (traces/emc.h) becomes the observation stream the
 * simulator emits, then the same AnChain / AnProp / AnTx code computes the same summary.json keys and CSVs
 * as `sim run`:
 *  - Blocks (NewBlockMsg): duplicates across lines and vantage points are merged, keeping the first line's
 *    fields; a block's id is its hash's first 8 bytes (emc_hash_id), its parent's likewise. Heights are
 *    re-based so the lowest block number seen is height 1 (its parent becomes the genesis); a block whose
 *    parent was never seen and that is not at the lowest number cannot be placed in the chain and is
 *    counted in replay.detached_blocks. The mined time is the header time (the study's InterblockTime used
 *    it too); difficulty, uncles, transaction count, gas used and size come from the line; the template
 *    (txset) is a hash of the transaction list, so two blocks with the same transactions have the same one.
 *  - Miners: one per coinbase address; its pool from the address map (`pools_csv`: the columns `address`
 *    and a name column, as ethereum-2019-04/pool_addresses.csv), else "Others". Pools are reported in the
 *    map's order (those that mined), then "Others". Hash shares are unknown in a
 *    log and reported as each miner's share of all blocks.
 *  - Sightings: per vantage point and block, the earliest block message and the earliest announcement
 *    (NewBlockHashesMsg), as the study did.
 *  - Transactions (TxMsg): per transaction the first line's sender, nonce, type, gas limit and price, and
 *    per vantage point the earliest reception; inclusions from every block's transaction list; a
 *    transaction that no vantage point logged but a block includes is counted in
 *    replay.txs_only_in_blocks and left out of the tx metrics (its reception is unknown).
 * Times stay in the logs' clock (Unix ns). Memory holds the blocks and one record per distinct
 * transaction (its first receptions), never the lines: logs with every duplicate are streamed.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>

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
  gboolean quiet;           /* no bad-line report on stderr */
} SimReplayOptions;

#define SIM_REPLAY_ERROR (sim_replay_error_quark())
GQuark sim_replay_error_quark(void);
typedef enum { SIM_REPLAY_ERROR_INPUT = 2, SIM_REPLAY_ERROR_RUNTIME = 1 } SimReplayError;

/* Reads the logs, computes the metrics, writes summary.json, blocks.csv, pools.csv, runs.csv,
 * observations.csv and tx_commit.csv atomically into the output directory. FALSE with `error`
 * (SIM_REPLAY_ERROR_INPUT: bad input, nothing written). `summary` (may be NULL) receives the summary. */
gboolean sim_replay(const SimReplayOptions *opt, json_t **summary, GError **error);

G_END_DECLS
