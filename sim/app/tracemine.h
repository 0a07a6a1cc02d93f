/* tracemine.h: trace-driven simulation (`sim run SCENARIO --mining-from LOGDIR...`): who mined which block
 * when comes from measured EMC logs, the scenario's network propagates the blocks, and the simulated
 * arrivals at the vantage points are put beside the measured ones block by block.
 *
 *  - Blocks: the logs are read as `sim replay` reads them (sim_replay_load(), without the transactions):
 *    every distinct block of the NewBlockMsg files on its parent, the lowest number seen at height 1, bad
 *    lines and blocks whose Number contradicts the chain reported on stderr and left out (fatal with
 *    `strict`). A node logs only the blocks it received as block messages: an ancestor that the logs lack
 *    is mined as a stand-in (the replay's placeholder: no transactions, its child's difficulty), by the
 *    miner of the logged block it was first needed below, at times spread evenly between the block below
 *    and that logged block. Its miner: the coinbase's pool from the address map (pool names matched to the
 *    scenario's without regard to case; a coinbase not in the map, or a pool the scenario lacks, goes to
 *    the scenario's "Others" pool when it has one, else it is an error), and within a pool of several
 *    miners the one chosen by the coinbase. Contents (transactions, gas, size), difficulty and uncles are
 *    the logged ones.
 *  - Mined time: the block's first observation by any of the logs' vantage points (never earlier than 1 ms
 *    after its parent's), minus `lead_ms` (default 0: the comparison is about delays after the first
 *    observation, which a shift does not change). Simulation time 0 is one second before the first
 *    block's.
 *  - Comparison, for every vantage point whose name the scenario and the logs share (a log directory's
 *    name is its base name, or NAME from --vantage NAME=DIR): per block, the measured and simulated
 *    first reception (the earlier of block message and announcement) and the delay after the first
 *    observation among the shared vantage points, in trace_compare.csv (logged blocks only); in summary.json
 *    "trace": logged_blocks (distinct blocks in the logs), blocks (those in the trace), mined, left_out
 *    (blocks whose Number contradicts the chain), bad_lines (as replay.bad_lines), stand_ins and
 *    stand_ins_mined, vantage_points_shared, compared (blocks every shared vantage point saw, measured and
 *    simulated), and per vantage point the median simulated and measured delay, the median and mean
 *    absolute difference, and the share of blocks both saw first at the same vantage point.
 * The scenario's transactions section is ignored (block contents come from the logs).
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "output.h"
#include "pow.h"
#include "scenario.h"

G_BEGIN_DECLS

typedef struct SimTrace SimTrace;

typedef struct {
  const char *const *dirs;
  const char *const *names; /* or NULL entries: base names */
  guint n;
  const char *pools_csv;    /* coinbase -> pool, or NULL (every block goes to "Others") */
  gboolean strict;
  double lead_ms;
} SimTraceOptions;

/* Reads the logs and builds the trace for `sc` (its pools); sets sc->pow.trace / n_trace, clears
 * sc->pow.tx and sets the stop height to the trace's. FALSE with `error` (bad input: exit 2). */
SimTrace *sim_trace_load(const SimTraceOptions *opt, SimScenario *sc, GError **error);
void sim_trace_free(SimTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimTrace, sim_trace_free)

/* After the run: adds "trace" to `summary` and writes trace_compare.csv into `out`. */
gboolean sim_trace_compare(const SimTrace *t, const SimScenario *sc, const PowWorld *world, json_t *summary,
                           SimOutDir *out, GError **error);

G_END_DECLS
