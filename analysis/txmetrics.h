/* txmetrics.h: transaction metrics (commit times, out-of-order arrival, propagation, never-committed
 * transactions, censorship waits) over a stream of transaction records joined with the main chain, in
 * memory bounded by the transactions still open rather than by all transactions of the run.
 *
 * Usage: an_tx_new() with the vantage table; then, in any interleaving that respects "Order and memory"
 * below, an_tx_add_tx() for every transaction, an_tx_add_sighting() and an_tx_add_inclusion() for what was
 * seen and mined, and an_tx_add_main_block() for each main-chain height once it is final (or, after a run,
 * an_tx_add_main_chain() with a finalized AnChain and the tables an_tx_main_receptions() builds);
 * an_tx_finalize(); then an_tx_add_json() / an_tx_write_commit_csv().
 *
 * Definitions (DESIGN.md, "Measurement model"). Times are in the simulation's clock, 0 = its start.
 *  - Reception of a tx by a vantage: the earliest ObsTxSighting.seen_ns of that tx and vantage.
 *  - Reception of a main block by a vantage: what the caller declares for its height (an_tx_main_receptions()
 *    takes min(block_msg_ns, announce_ns) over the vantage's sightings of the block, as the study did).
 *  - Committed: the tx is in a declared main block (an ObsTxInclusion naming the block declared at that
 *    height). Its height h is that block's height. Inclusions in other blocks never count.
 *  - Commit time for k confirmations (k = 0, 3, 12, 36), per vantage: reception of the main block at height
 *    h + k minus reception of the tx, in seconds. Reported over all (committed tx, vantage) pairs where both
 *    times exist; it is negative where the vantage had the block before the tx.
 *  - Out-of-order, per vantage: a committed tx the vantage received is in order if its reception is not
 *    earlier than that of every lower-nonce committed tx of the same sender that the vantage received (ties
 *    are in order), out of order otherwise. Share = out of order / committed txs the vantage received; the
 *    overall share pools the (tx, vantage) pairs of all vantages.
 *    Evaluated per sender in nonce order, which must be the order of commit heights (as in Ethereum, where a
 *    nonce can only be mined after the lower ones). A committed tx whose nonce is not above the highest
 *    nonce already evaluated for its sender is left out of the out-of-order counts and counted in
 *    nonce_order_violations.
 *  - Out-of-order as published: the study's own computation (Step-7-Set-In-Order.py in its tool repository),
 *    which reads Nonce as text and sorts (From, Nonce) as strings, so nonce 10 sorts between 1 and 2, and
 *    compares millisecond times (a tie is in order). Same as above otherwise: per vantage, committed txs, in
 *    order if not earlier than every committed tx of the sender that sorts before it; here the times are
 *    floored to the millisecond (an_tx_floor_ms()) and "before" is an_tx_nonce_text_cmp()'s order.
 *  - Out-of-order over every received tx (out_of_order_seen_share): both definitions again, over all txs a
 *    vantage received, committed or not (what a log shows before any join with blocks). Equal nonces
 *    (replacements) are not lower than each other in any of these definitions.
 *  - Arrival figures (arrival.*), per (sender, vantage) over the txs the vantage received: txs per sender
 *    (mean), the share of senders with one tx, and, over pairs of consecutive nonces both received (a
 *    nonce's reception is the earliest of its txs), the share whose receptions fall in the same millisecond.
 *    These are the figures a sender model is fitted to.
 *    The last three groups come from the order sample ("Order and memory"): exact while the run has at most
 *    AN_TX_ORDER_CAP received txs, otherwise over a deterministic sample of senders (order_sample_sender_share).
 *  - Propagation delay, like blocks': for each tx every vantage received, each vantage's reception minus the
 *    earliest, in milliseconds, leaving out the first observer's zero (the first observer is the earliest;
 *    ties go to the lower vantage index; other vantages tied with it keep their zeros).
 *  - unique: txs with at least one sighting or inclusion (in any block); created: an_tx_add_tx() records;
 *    committed: see above; never_committed: created - committed (txs seen or created, never in a main
 *    block).
 *  - Censorship: wait of a committed tx = mined time of its main block minus its created_ns (txs with
 *    created_ns OBS_TIME_NONE have none), in seconds, split by ObsTx.censored; censored_never_committed =
 *    censored txs created - censored txs committed.
 *  - Statistics: the exact mean, and type-7 quantiles (propagation.h) estimated by AnHist below: exact up to
 *    AN_HIST_EXACT_MAX samples, within 1% relative error above. A statistic of an empty set is not reported.
 *
 * Order and memory. A transaction's state (40 + 8 * n_vantages bytes, plus 9 to 21 bytes of hash index) is
 * kept from an_tx_add_tx() until its metrics are final, then evaluated and dropped ("released"):
 *  - a committed tx at height h is released when height h + 36 is declared (or at an_tx_finalize());
 *  - a tx never committed is released at an_tx_finalize().
 * Records about a tx must therefore come after its an_tx_add_tx(), and before it is released: sightings or
 * inclusions of a tx not held (never added, or released) cannot be told apart and are ignored and counted
 * in unmatched_records. An inclusion at a height already declared commits its tx at once if it names that
 * height's main block and the height is less than 36 below the last declared one (an older height is
 * counted in unmatched_records); one naming another block is ignored. Inclusions at heights not yet
 * declared are held (24 bytes each) until their height is declared, then dropped. Per sender, the evaluation
 * keeps 16 + 8 * n_vantages bytes (plus 11 to 21 of index) for the whole run; per height, only the last 37
 * declared. Memory then stays proportional to the transactions open (pending, or committed in the last 36
 * heights) plus the senders, if the caller feeds records in simulation-time order and declares each main
 * height as soon as it is final. A caller that feeds every record first and declares the main chain last
 * holds every transaction until then: correct, but O(transactions). The newest 65 536 transactions' states
 * take a fixed place once that many have been added (40 + 8 * n_vantages bytes each, 4.5 MiB with four
 * vantages), and the transactions held longer a filter of 6 to 12 bits each. The distributions take a fixed
 * amount: 4 (n_vantages + 1) + 3 AnHist, each at most 32 KiB while exact, about 250 KiB once binned.
 * The order sample keeps one record (32 + 8 * n_vantages bytes) per received tx of the senders whose hash
 * is below a limit, which halves (dropping the senders above it) whenever more than AN_TX_ORDER_CAP are
 * kept: 16 MiB of records with four vantages (32 MiB of capacity at most), evaluated at an_tx_finalize().
 *
 * Speed. Each record costs a few hash lookups in memory that is reused (storage grows by doubling and is
 * never allocated per record); the work on a committed transaction (its 4 n_vantages commit times,
 * propagation, out-of-order check) is done at its release, a height's transactions together.
 * tests/bench_txmetrics.c times a synthetic month of Ethereum (22 M transactions, 4 vantages).
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

#include "chain.h"
#include "obs.h"
#include "obs_sink.h"

G_BEGIN_DECLS

/* ---- Streamed histogram ------------------------------------------------------------------------------ */

/* A distribution in bounded memory. The first AN_HIST_EXACT_MAX samples are kept, and statistics of up to
 * that many are exact. Beyond, all samples go to log-spaced bins: one bin for |x| < min_abs, bins
 * [min_abs g^i, min_abs g^(i+1)) with g = 1 + AN_HIST_REL_WIDTH for each sign up to max_abs (about 8000
 * counters, 64 KiB, for 0.5 .. 1e17), and one overflow bin per sign. The j-th order statistic (0-based) is
 * estimated by linear interpolation within its bin, at position (j - samples in lower bins + 0.5) / (samples
 * in its bin), the bin's range clipped to the exact minimum and maximum (which are themselves the estimates
 * of the first and last order statistics); quantiles then interpolate between order statistics as type 7
 * does. An order statistic's estimate lies in the same bin as its true value, so its relative error is below
 * AN_HIST_REL_WIDTH for min_abs <= |x| < max_abs (absolute error below min_abs in the zero bin; unbounded in
 * the overflow bins), and so is a quantile's between two order statistics of one sign. The mean is exact
 * (running sum, in the order samples were added). Binning also takes tables that find a sample's bin without
 * a logarithm (about 180 KiB for 0.5 .. 1e17); the bins are those the definition above gives. */
#define AN_HIST_EXACT_MAX 4096
#define AN_HIST_REL_WIDTH 0.01

typedef struct AnHist AnHist;

/* 0 < min_abs < max_abs. Free with an_hist_free(). */
AnHist *an_hist_new(double min_abs, double max_abs);
void an_hist_free(AnHist *hist);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnHist, an_hist_free)
/* `x` must be finite. */
void an_hist_add(AnHist *hist, double x);
uint64_t an_hist_count(const AnHist *hist);
/* NaN for an empty histogram. */
double an_hist_mean(const AnHist *hist);
/* Type-7 quantile at fraction f in [0, 1] (see above); NaN for an empty histogram. */
double an_hist_quantile(const AnHist *hist, double f);
/* Whether the samples are still kept exactly (count <= AN_HIST_EXACT_MAX). */
gboolean an_hist_is_exact(const AnHist *hist);

/* ---- Transaction metrics ----------------------------------------------------------------------------- */

#define AN_TX_N_K 4 /* confirmation depths of the commit time: 0, 3, 12, 36 (AN_TX_K[]) */
#define AN_TX_K_MAX 36
extern const uint32_t AN_TX_K[AN_TX_N_K];

typedef struct AnTx AnTx;

/* `vantage_names` (n_vantages >= 1 distinct, non-empty names, in table order: ObsTxSighting.vantage and the
 * reception tables index it) are copied. Free with an_tx_free(). */
AnTx *an_tx_new(const char *const *vantage_names, guint n_vantages);
void an_tx_free(AnTx *tx);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnTx, an_tx_free)

/* Starts holding a transaction. Returns FALSE and sets `error` (domain AN_TX_ERROR, code
 * AN_TX_ERROR_INVALID_RECORD) for an id held already, or a type other than OBS_TX_TX/MC/CC. */
gboolean an_tx_add_tx(AnTx *tx, const ObsTx *record, GError **error);

/* The bulk form of an_tx_add_tx() followed by one an_tx_add_sighting() per vantage v with recv_ns[v] !=
 * OBS_TIME_NONE, seen at recv_ns[v] (`recv_ns` has n_vantages values; NULL = no sightings): the way to feed
 * a tx whose receptions are known when it is added. Same validation and errors as an_tx_add_tx(); on error
 * nothing is recorded (in particular no sighting is merged into a tx held under the same id). */
gboolean an_tx_add_tx_seen(AnTx *tx, const ObsTx *record, const int64_t *recv_ns, GError **error);

/* Merges a first reception in (the earliest per vantage counts). FALSE with AN_TX_ERROR_INVALID_RECORD for a
 * vantage index out of range or seen_ns OBS_TIME_NONE. A tx not held is counted in unmatched_records. */
gboolean an_tx_add_sighting(AnTx *tx, const ObsTxSighting *sighting, GError **error);

/* Notes that a tx is in a block (see "Order and memory" above). FALSE with AN_TX_ERROR_INVALID_RECORD for
 * the genesis block or height 0. */
gboolean an_tx_add_inclusion(AnTx *tx, const ObsTxInclusion *inclusion, GError **error);

/* Declares the main block at `height`: heights 1, 2, 3, ... each once, in order. `block` is its id,
 * `mined_ns` its mined time, `recv_ns[v]` (n_vantages values; NULL = all unknown) its reception by vantage v,
 * OBS_TIME_NONE where that vantage never had it. Commits the txs held as included in it and releases those
 * committed at height - 36. FALSE with AN_TX_ERROR_ORDER for a height that is not the last declared + 1, and
 * AN_TX_ERROR_INVALID_RECORD for the genesis id. */
gboolean an_tx_add_main_block(AnTx *tx, uint32_t height, uint64_t block, int64_t mined_ns,
                              const int64_t *recv_ns, GError **error);

/* Declares the main blocks of `chain` (finalized) from the last declared height + 1 up to `max_height`
 * (0 = the main chain's tip, which may lie above the chain's window; pass the window's height to count only
 * window blocks). recv_ns_by_vantage[v][h] (h < n_heights) is vantage v's reception of the main block at
 * height h; heights >= n_heights, and all of them if recv_ns_by_vantage is NULL, are unknown. Errors as
 * an_tx_add_main_block(). */
gboolean an_tx_add_main_chain(AnTx *tx, const AnChain *chain, uint32_t max_height,
                              const int64_t *const *recv_ns_by_vantage, uint32_t n_heights, GError **error);

/* One vantage's reception table for an_tx_add_main_chain(): [h] = min(block_msg_ns, announce_ns) over the
 * sightings in `sightings` by `vantage` of the main block at height h (`chain` finalized), OBS_TIME_NONE if
 * none; [0] is OBS_TIME_NONE. Sightings of other vantages and of non-main or unknown blocks are skipped.
 * Sets *n_heights to the length, the main tip's height + 1. Free with g_free(). */
int64_t *an_tx_main_receptions(const AnChain *chain, const ObsSighting *sightings, gsize n_sightings,
                               uint32_t vantage, uint32_t *n_heights);

/* Releases every tx still held (committed ones in height order, then the others by id) and completes the
 * results. Pending inclusions above the last declared height are dropped. Call once; nothing may be added
 * after. */
void an_tx_finalize(AnTx *tx);

/* A sink that builds an AnTx: `vantages` creates *out (an_tx_new; free it with an_tx_free), the transaction
 * records go to it (an_tx_add_tx_seen, an_tx_add_inclusion, an_tx_add_main_block) and `finish` finalizes it. */
void an_tx_sink_init(ObsSink *sink, AnTx **out);

/* Transactions held now (for monitoring the memory bound, and tests). */
uint64_t an_tx_n_held(const AnTx *tx);

/* Adds a "tx" object to `summary` (after an_tx_finalize()), keys in this order (see "Definitions"):
 *   unique, committed, never_committed,
 *   commit_s.{k0,k3,k12,k36}.{median,mean,p90},
 *   out_of_order_share, out_of_order_share_by_vantage.<vantage>,
 *   out_of_order_share_as_published, out_of_order_share_as_published_by_vantage.<vantage>,
 *   out_of_order_seen_share.{intended,as_published}, arrival.{same_ms_share,txs_per_sender_mean,
 *   one_tx_sender_share}, order_sample_sender_share,
 *   propagation_ms.{median,p90,p95},
 *   censorship.{censored,uncensored}.wait_s.{median,mean,p90}, censorship.censored_never_committed
 *                                                     (the object only if some tx was flagged censored),
 *   created, unmatched_records, nonce_order_violations.
 * Statistics and shares whose sample set is empty are left out, and so is an object left with no keys. */
void an_tx_add_json(const AnTx *tx, json_t *summary);

/* Writes the commit-time table: header k,vantage,pairs,median_s,mean_s,p90_s; for each k (ascending) one row
 * over all vantages (vantage empty) then one per vantage in table order; statistics empty where pairs is 0.
 * Numbers %.17g, C locale. Returns FALSE on a write error. */
gboolean an_tx_write_commit_csv(const AnTx *tx, FILE *out);

/* A deterministic sample of commit times, for distribution tests (sim compare's two-sample KS): the committed
 * txs whose id hash (SplitMix64's finaliser) falls below a limit that halves whenever more than
 * AN_TX_SAMPLE_CAP txs are kept, so between AN_TX_SAMPLE_CAP / 2 and AN_TX_SAMPLE_CAP txs of any run, chosen
 * without regard to their values. Header k,vantage,commit_s; one row per (k, vantage, sampled tx) with both
 * times known, in seconds (%.9f). After an_tx_finalize(). */
#define AN_TX_SAMPLE_CAP 20000
gboolean an_tx_write_commit_samples_csv(const AnTx *tx, FILE *out);

/* Records the order sample keeps before it halves its share of senders (see "Order and memory"). */
#define AN_TX_ORDER_CAP (1u << 18)

/* The order of two nonces written as decimal text (as the study's script sorted them): <0, 0, >0. */
int an_tx_nonce_text_cmp(uint64_t a, uint64_t b);
/* A time in ns floored to whole milliseconds (towards the past, as the logs' clock was read). */
int64_t an_tx_floor_ms(int64_t ns);

#define AN_TX_ERROR (an_tx_error_quark())
GQuark an_tx_error_quark(void);

typedef enum {
  AN_TX_ERROR_INVALID_RECORD, /* a record that is inconsistent in itself or with the txs held */
  AN_TX_ERROR_ORDER,          /* a main height declared out of order */
} AnTxErrorCode;

G_END_DECLS
