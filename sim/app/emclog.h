/* emclog.h: simulated vantage points write the logs the study's instrumented Geth ("EMC") wrote
 * (`sim run --emc-logs`), so the study's own processing, `sim replay` and `sim calibrate` can read them.
 *
 * Into DIR/emc/<vantage>/, through the output directory (atomic, like every output):
 *  - NewBlockMsg.log: one line per block the vantage point received in full (its first reception; Geth
 *    logged one line per message from every peer, the study kept the earliest, so this is what the study's
 *    first processing stage leaves);
 *  - NewBlockHashesMsg.log: its first announcement of each block;
 *  - TxMsg.log (with a "transactions" section): its first reception of each transaction;
 *  - NewBlockHead.log: each new head, replayed from its receptions (a block whose total difficulty exceeds
 *    the head's becomes the head when it is received in full and its parent is known to the vantage point).
 * And DIR/emc/pools.csv (address,name): the coinbase address written for each miner, with its pool.
 * Clock: the simulation's time 0 is 2019-04-01T00:00:00Z (EMC_SIM_EPOCH_S); times are written in UTC with
 * millisecond precision, as Geth did. Hashes and addresses carry the simulator's ids in their first 8 bytes
 * (emc_hash_from_id), so reading the logs back gives the same ids. Not written: txgasused.log, peers.log,
 * InvalidMessages.csv (nothing in the model produces them). Fields the model does not have: a transaction's
 * value (0), recipient (a fixed address, none for creations), cost (gas limit x price).
 */
#pragma once

#include <glib.h>

#include "chain.h"
#include "output.h"
#include "pow.h"
#include "scenario.h"

G_BEGIN_DECLS

#define EMC_SIM_EPOCH_S INT64_C(1554076800) /* 2019-04-01T00:00:00Z */

/* Writes the logs of every vantage point of the run's network (none: only pools.csv). `chain` is the
 * finalized analysis of the run (for heads). FALSE with `error` on a write failure. */
gboolean sim_emc_write_logs(SimOutDir *out, const SimScenario *sc, const PowWorld *world, GError **error);

G_END_DECLS
