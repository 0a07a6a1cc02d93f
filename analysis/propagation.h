/* propagation.h: block propagation metrics over what the vantage points logged (ObsSighting), joined with
 * the chain (AnChain), as the measurement study computed them.
 *
 * Usage: an_prop_new() with the vantage table, an_prop_add() for every sighting (any order),
 * an_prop_finalize() with a finalized chain, then an_prop_add_json() / an_prop_write_observations_csv().
 *
 * Definitions (DESIGN.md, "Measurement model"):
 *  - Sightings: several sightings of the same block by the same vantage are merged, keeping the earliest
 *    block message and the earliest announcement (the study's dedupe keeps the earliest line).
 *  - Observation time of a block by a vantage: min(block_msg_ns, announce_ns); a vantage with both fields
 *    OBS_TIME_NONE has not seen the block. Times are in the simulation's clock, 0 = simulation start.
 *  - Only window blocks count (AnChainParams.max_height); sightings of other stored blocks are ignored.
 *  - First observer of a block: the vantage with the earliest observation time; ties go to the vantage
 *    earlier in the vantage table.
 *  - Delay after first observation: only blocks seen by every vantage count; for each such block, each
 *    vantage's time minus the first observer's, in milliseconds. "vantage_delay_ms" leaves out one zero
 *    per block (the first observer's; other vantages tied with it keep their zeros),
 *    "vantage_delay_incl_first_ms" keeps it. The per-type statistics use the delays without the first
 *    observer's zero.
 *  - Block message first: a vantage's observation of a block counts as "block message first" when the
 *    block message came no later than the announcement (or there was no announcement).
 *  - Statistics: the mean, and quantiles of the sorted values with gsl_stats_quantile_from_sorted_data(),
 *    which interpolates linearly between order statistics (Hyndman and Fan type 7, R's default): for
 *    n sorted values x[0..n-1] and fraction f, x[i] + (d - i)(x[i+1] - x[i]) with d = (n - 1) f, i =
 * floor(d). A statistic of an empty set is not reported (its key is left out; JSON never holds NaN).
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

#include "chain.h"
#include "obs.h"

G_BEGIN_DECLS

typedef struct AnProp AnProp;

/* `vantage_names` (n_vantages >= 1 distinct, non-empty names, in table order: ObsSighting.vantage indexes
 * it) are copied. Free with an_prop_free(). */
AnProp *an_prop_new(const char *const *vantage_names, guint n_vantages);
void an_prop_free(AnProp *prop);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnProp, an_prop_free)

/* Merges one sighting in (see "Sightings" above). Returns FALSE and sets `error` (domain AN_PROP_ERROR,
 * code AN_PROP_ERROR_INVALID_SIGHTING) for a vantage index out of range or a sighting of the genesis block.
 * Only before an_prop_finalize(). */
gboolean an_prop_add(AnProp *prop, const ObsSighting *sighting, GError **error);

/* Joins the sightings with `chain` (finalized, and kept alive and unchanged while `prop` is used) and
 * computes everything. A sighting of a block the chain does not know is an error (code
 * AN_PROP_ERROR_UNKNOWN_BLOCK, "sighting of unknown block 0x%016" PRIx64 " by vantage <name>", the first such
 * sighting in the order they were added); sightings of blocks outside the window are ignored. Call once. */
gboolean an_prop_finalize(AnProp *prop, const AnChain *chain, GError **error);

/* Adds a "propagation" object to `summary`, keys in this order (names as given; statistics objects hold
 * "median", "mean", "p90", "p95", "p99" unless said otherwise; see "Definitions" above):
 *   vantage_delay_ms, vantage_delay_incl_first_ms,
 *   vantage_delay_by_vantage_ms.<vantage>.{median,mean,p90}   (its delays, its zeros included, over the
 *                                                               blocks seen by all),
 *   blocks_seen_by_all,
 *   first_seen_share.<vantage>                                 (share of blocks seen by all it saw first),
 *   first_seen_share_by_pool.<pool>.<vantage>                  (the same among the blocks of one pool's
 *                                                               miners; pools with such blocks, pool order),
 *   seen_by_block_msg_first_share.<vantage>                    (share of its observations of window blocks),
 *   vantage_delay_ms_by_type.{main,uncle,unreferenced}.{median,p90}.
 * Keys whose sample set is empty are left out, and so is an object left with no keys. Pools are the chain's
 * groups; two pools with the same name would share a key. */
void an_prop_add_json(const AnProp *prop, json_t *summary);

/* Writes observations.csv, sim's per-block join of the vantage points with the columns of the study's
 * blocks-propagation-times-v3.csv (the study's own format, headerless and by its definitions, is written by
 * sim/app/emclog.c): one row per window block seen by at least one vantage, in the chain's insertion order,
 * columns
 *   BlockHash,Number,BlockType,<V>TimeStamp...,FirstObservation,<V>Diff...,MiningPool,NumTransactions,
 *   SameMinerSeqLen,PositionInsideSeq,Difficulty,BlockSize,InterblockTime,InterblockTimePerPool
 * with <V> the vantage names in table order. BlockHash is 0x%016 hex of the id, Number the height,
 * BlockType Main / Recognized (an uncle) / Uncle (an unreferenced fork block), as the study named them.
 * Times are seconds with 3 decimals, rounded exactly to the nearest millisecond (halves away from zero):
 * <V>TimeStamp the vantage's observation time since the simulation start, <V>Diff that minus the first
 * observation (both empty where the vantage did not see the block); FirstObservation the first observer's
 * name. MiningPool is the miner's pool (empty if unknown); SameMinerSeqLen and PositionInsideSeq come from
 * an_chain_block_run() (empty where it returns FALSE); Difficulty is %.17g; BlockSize is size_bytes.
 * InterblockTime is, for a main block, its mined time minus the previous main block's (empty at height 1
 * and for other blocks); InterblockTimePerPool the mined time minus that of the previous main block of the
 * same pool (empty if none, for a block of no known miner, and for non-main blocks). `chain` must be the
 * one given to an_prop_finalize(). C locale; returns FALSE on a write error. */
gboolean an_prop_write_observations_csv(const AnProp *prop, const AnChain *chain, FILE *out);

#define AN_PROP_ERROR (an_prop_error_quark())
GQuark an_prop_error_quark(void);

typedef enum {
  AN_PROP_ERROR_INVALID_SIGHTING, /* an_prop_add(): the sighting itself is invalid */
  AN_PROP_ERROR_UNKNOWN_BLOCK,    /* an_prop_finalize(): a sighting of a block the chain does not know */
} AnPropErrorCode;

G_END_DECLS
