/* emclog.h: simulated vantage points write the logs the study's instrumented Geth ("EMC") wrote
 * (`sim run --emc-logs`), so the study's own processing scripts, `sim replay` and `sim calibrate` can read
 * them.
 *
 * Into DIR/emc/<vantage>/, through the output directory (atomic, like every output), under the names of the
 * study's 2019 logging configuration (its rsyslog.conf; the 2018 names NewBlockMsg.log, NewBlockHashesMsg.log,
 * TxMsg.log and NewBlockHead.log are read too, see traces/emc.h):
 *  - blocks.log: one line per block the vantage point received in full (its first reception; Geth logged one
 *    line per message from every peer, the study kept the earliest, so this is what the study's first
 *    processing stage leaves);
 *  - blocksAnnouncements.log: its first announcement of each block;
 *  - heads.log: each new head, replayed from its receptions (a block whose total difficulty exceeds the
 *    head's becomes the head when it is received in full and its parent is known to the vantage point);
 *  - txs.log (with a "transactions" section): its first reception of each transaction;
 *  - txgasused.log (with a "transactions" section): each transaction of each block it received in full, at
 *    that reception, with its gas limit (what Geth's TxGasUsed field held), once per block (Geth logged the
 *    lines when it executed a block, again after a reorganisation).
 * And DIR/emc/pools.csv (address,name): the coinbase address written for each miner, with its pool; and,
 * when the network has exactly four vantage points (the study's layout), DIR/emc/blocks-propagation-times-v3.log,
 * the study's join of the four (below).
 *
 * Fields as in the real logs (tests/data/emc-rinkeby-2018-09): Number is the height plus
 * chain.first_block_number - 1; Coinbase the pool's `coinbase` where the scenario gives one, else a synthetic
 * address per miner; UncleHash Keccak-256 of the empty RLP list (0x1dcc4de8...) for a block without uncles
 * and, for one with uncles (whose headers the simulation does not have), Keccak-256 of their hashes; the
 * ParentHash of height 1 is zero (the genesis, as our readers expect) when numbers start at 1, else a fixed
 * stand-in for the real chain's block below. Clock: the simulation's time 0 is 2019-04-01T00:00:00Z
 * (EMC_SIM_EPOCH_S); times are written in UTC with millisecond precision (rounded towards the past), as Geth
 * did. Block hashes and synthetic addresses carry the simulator's ids in their first 8 bytes and zeros after
 * (emc_hash_from_id): reading the logs back gives the same ids, and no one mistakes them for mainnet's.
 * Transaction hashes carry a fixed bijective mix of the id (sim_mix64) instead, so that they sort as randomly
 * as real hashes, which the study's scripts rely on (emclog.c, tx_hash).
 * Fields the model does not have: a transaction's value (0), recipient (a fixed address, nil for
 * creations), cost (gas limit x price). Not written: peers.log, invalidmsgs.log (nothing in the model
 * produces them).
 *
 * blocks-propagation-times-v3.log is what the study's scripts (log-pre-processing/blocks/
 * Step-4-Propagation-Delays.py, then post-thesis/blcks-propag-delays-updated.py and -updated-2.py) make of
 * these logs, over the run's window, with the run's block types: one headerless line per window block that all
 * four vantage points received in full, in Number order (then by hash), with the 20 columns of
 * tests/data/emc-stage-templates/blocks-propagation-times-v3.csv; the four vantage points in the network's
 * order take the places of the study's Angainor, Falcon, S1US and S2CN. Formats are those pandas wrote:
 * <V>TimeStamp as logged (the earlier of block message and announcement), FirstObservation as a pandas
 * Timestamp ("2019-04-01 00:00:08.601000+00:00", no fraction on a whole second), seconds as Python floats
 * ("0.013", "0.0"), missing values empty. Definitions are the scripts': <V>Diff = <V>TimeStamp -
 * FirstObservation; MiningPool the pool's name; SameMinerSeqLen and PositionInsideSeq (main blocks) the run
 * of consecutive window main blocks of one pool (a pool of several miners is one name, as the study's "all
 * other miners" was); InterblockTime = FirstObservation - that of the main block one Number below when it
 * is in the table; InterblockTimePerPool = FirstObservation - that of the pool's previous row when that row
 * is one Number below (rows of every type, in table order; the study computed it for its 22 named pools
 * only).
 */
#pragma once

#include <glib.h>

#include "chain.h"
#include "output.h"
#include "pow.h"
#include "scenario.h"

G_BEGIN_DECLS

#define EMC_SIM_EPOCH_S INT64_C(1554076800) /* 2019-04-01T00:00:00Z */

/* File names under emc/<vantage>/. */
#define SIM_EMC_BLOCKS_LOG "blocks.log"
#define SIM_EMC_ANNOUNCEMENTS_LOG "blocksAnnouncements.log"
#define SIM_EMC_HEADS_LOG "heads.log"
#define SIM_EMC_TXS_LOG "txs.log"
#define SIM_EMC_TXGASUSED_LOG "txgasused.log"
/* Under emc/. */
#define SIM_EMC_PROPAGATION_TABLE "blocks-propagation-times-v3.log"

/* Writes the logs of every vantage point of the run's network (none: only pools.csv) and the study's join
 * table. `chain` is the finalized analysis of the run (its window and block types). FALSE with `error` on a
 * write failure. */
gboolean sim_emc_write_logs(SimOutDir *out, const SimScenario *sc, const PowWorld *world, const AnChain *chain,
                            GError **error);

G_END_DECLS
