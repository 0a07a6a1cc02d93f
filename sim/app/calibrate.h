/* calibrate.h: fitting the simulator's models to measured data (`sim calibrate`), and the fits as a
 * "models file": a partial scenario that scenarios include ("include", scenario.h).
 *
 * The fits work on plain samples and counts (SimCalibInput), so that they can be checked on data with known
 * parameters; sim_calib_from_replay() builds that input from measured logs (replay.h). Every interval is
 * at `level` (0.95 by default), computed by analysis/fit.h (its fits' 95% intervals redone at `level` with
 * the same formulas); "n" counts the values a fit used.
 *
 * What is fitted, and how (DESIGN.md "Measurement model" for the measured quantities):
 *  - Block interval. The sample: header-time differences of consecutive main-chain blocks that a log showed
 *    (both of them; placeholders for ancestors a node synced are left out), in seconds; negative ones (a
 *    miner's clock) are dropped and counted. The mean interval is the exponential fit on every difference
 *    (zeros included: header times are whole seconds; the mean telescopes, so rounding hardly biases it).
 *    Exponential, lognormal and gamma are fitted by maximum likelihood to the positive differences (the
 *    last two need x > 0; zeros are counted) with their KS statistics; the best is the smallest AIC.
 *    chain.target_interval_s is the mean time between blocks of the whole network (main and stale), so
 *    it is the mean main-chain interval times main / all blocks logged, with the mean's interval scaled
 *    the same way (the stale ratio taken as known).
 *  - Pools. Per pool (the chain's groups: the coinbase -> pool map, else "Others"): main blocks, all its
 *    blocks, empty blocks. Its share is its main blocks / all main blocks (Wilson interval): the hash share
 *    the models file gives it. Also reported: its share of all blocks, and its empty-block propensity,
 *    empty / all its blocks (Wilson), with the matching pools[].empty_window_ms: a pool mines an empty
 *    template for w after each new head, and heads come about every mean main interval T, so a share
 *    e = 1 − exp(−w/T) of its blocks is empty: w = −T·log(1 − e) (capped at 1e7 ms).
 *  - Transactions. Arrival rate: distinct transactions / the observation span (from the earliest to the
 *    latest first reception of any block or transaction at any vantage point), with Garwood's interval.
 *    That interval holds for a Poisson process; real arrivals cluster (a sender sends several transactions
 *    in a row), so the report adds the dispersion index, variance / mean of the counts in the span's whole
 *    60 s windows (by each transaction's first reception; about 1 for a Poisson process), and the rate's
 *    interval widened by √max(1, index) (quasi-Poisson, Wald).
 *    Types TX/MC/CC: shares (Wilson); gas limit per type: n, min, median, mean, max and a lognormal fit
 *    (transactions.mc_gas_median = exp(mu), mc_gas_sigma = sigma; likewise CC; tx_gas = the median TX gas
 *    limit), each clamped to the scenario's bounds. Gas price: shares of the study's classes 0,
 *    (0, 20), [20, 25), [25, 105), >= 105 gwei (Wilson), written as transactions.gas_price_classes (the
 *    second class from the smallest positive price seen in it, else 1 gwei; the last up to the largest
 *    price seen, else 1000 gwei), and a lognormal fit of the positive prices (report only).
 *  - Delays between vantage points (two or more): for each block every vantage point saw, each point's
 *    first observation minus the earliest one, in ms, leaving out the first observer's zero (ties: the
 *    first vantage in table order). Per vantage point: lognormal and gamma fitted by maximum likelihood to
 *    its positive delays (zeros, ties at ms resolution, counted), and "empirical": the maximum-likelihood
 *    histogram density (k equal bins of width w, density n_j / (n·w) in bin j, k − 1 parameters), with w a
 *    whole number of resolution steps q (the smallest gap between two distinct values: rounded data then
 *    have as many possible values in every bin, and no bin can hold a lone point mass) and bins from the
 *    smallest value − q/2, k <= min(n, 1000) chosen by AIC. Each with log-likelihood, AIC and KS D and p (the
 *    histogram's CDF is linear within a bin); the best is the smallest AIC.
 *    Report only: no scenario key takes them directly (a lognormal gives a "delay" model's median_ms and
 *    sigma, shown in the report as "as_delay_model"). The same fits, per vantage point, of the delay after
 *    the first observation of each transaction every vantage point logged ("tx_delays_ms").
 *    Why report only: a vantage point's delay is the end of a many-hop relay (latencies of every link on
 *    the way, jitter, verification and import time, bandwidth, the topology) measured against the first of
 *    the other vantage points, not against the mining time (header times are whole seconds from the miners'
 *    clocks). A per-link latency scale, the jitter's shape and the relay's processing times all add per
 *    hop and cannot be told apart from these differences without simulating the network; a common
 *    offset of every delay cancels altogether.
 *  - Work distribution (network.stratum of a geo network, network.own_work of a pool-delay one). Not
 *    visible in the vantage points' timings, but in its effect: after a pool finds a block its own miners
 *    keep mining on the old parent for a work-distribution delay D, so it finds a second block at the same
 *    height (a one-miner fork) with probability 1 − E[exp(−λ_p D)] ≈ λ_p E[D], λ_p = s_p / T_all its rate
 *    (s_p its main share, T_all = target_interval_s, the mean time between all blocks). With K one-miner
 *    forks over N_p blocks of each pool: E[D] = K / X, X = Σ_p N_p s_p / T_all, interval Garwood's on K
 *    divided by X (the shares' and T_all's errors left out: with K in the tens they add well under a tenth).
 *    The models file writes it only where SimCalib.network says which key takes it (`sim calibrate
 *    --network`): network.stratum of a geo network or network.own_work of a pool-delay one; each of these
 *    keys is unknown to the other network, so no default can suit both.
 *    Identified: the mean only (one count), biased low by about λ E[D²] / 2E[D] (2% at 2019's shares and
 *    a lognormal of median 425 ms, sigma 1); forks between two miners of one pool (a pool of several
 *    miners, "miners" > 1) are counted too and bias it high. The models file writes it as a lognormal of
 *    that mean with sigma SIM_CALIB_WORK_SIGMA (a choice: the shape is not identified), median =
 *    mean × exp(−sigma²/2); only when K >= 1.
 *  - Empty window, all pools together: empty / all blocks e (Wilson) and w = −T·log(1 − e), its interval
 *    the same map of e's ends (T's error left out), written as chain.empty_window_ms.
 * A part without enough data (fewer than 2 values, all equal, no span) is reported with the reason and its
 * scenario keys are left out of the models file, so the including scenario's defaults apply.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "fit.h"
#include "replay.h"

G_BEGIN_DECLS

#define SIM_CALIB_N_TYPES 3         /* TX, MC, CC (OBS_TX_*) */
#define SIM_CALIB_N_PRICE_CLASSES 5 /* 0, (0,20), [20,25), [25,105), >=105 gwei */
#define SIM_CALIB_WORK_SIGMA 1.0    /* sigma of the work-distribution lognormal written (not identified) */
#define SIM_CALIB_DISPERSION_WINDOW_S 60.0 /* the windows of the transactions' dispersion index, seconds */

/* Which key of the network section takes the work-distribution delay in the models file. */
typedef enum {
  SIM_CALIB_NET_GEO = 0,    /* network.stratum */
  SIM_CALIB_NET_POOL_DELAY, /* network.own_work */
  SIM_CALIB_NET_NONE,       /* none: report only */
} SimCalibNetwork;

/* One pool's block counts. */
typedef struct {
  const char *name;
  uint64_t main_blocks; /* its main-chain blocks */
  uint64_t blocks;      /* all its blocks (main, uncles, unreferenced) */
  uint64_t empty;       /* its empty blocks among `blocks` */
  uint64_t one_miner_forks; /* heights where it has two or more blocks */
} SimCalibPoolCounts;

/* What the fits read. Arrays are borrowed for the call. */
typedef struct {
  double level; /* of every interval, in (0, 1) */
  /* Chain */
  const double *intervals_s; /* main-chain header-time differences, seconds (negative ones are dropped) */
  size_t n_intervals;
  uint64_t main_blocks, all_blocks; /* logged blocks: main, and all types (target_interval_s) */
  const SimCalibPoolCounts *pools;
  guint n_pools;
  /* Transactions: one entry per distinct transaction */
  size_t n_txs;
  const uint8_t *tx_type;      /* OBS_TX_* */
  const double *tx_gas_limit;  /* gas */
  const double *tx_price_gwei; /* gwei (wei / 1e9) */
  double span_s;               /* the observation span, seconds */
  const double *tx_arrival_s;  /* each one's first reception, seconds from the span's start; may be NULL */
  /* Delays after the first observation, per vantage point (first observer's zero left out), ms */
  guint n_vantages;
  const char *const *vantage_names;
  const double *const *delays_ms;
  const size_t *n_delays;
  uint64_t blocks_seen_by_all;
  /* The same for transactions (NULL when none) */
  const double *const *tx_delays_ms;
  const size_t *n_tx_delays;
  uint64_t txs_seen_by_all;
} SimCalibInput;

/* A maximum-likelihood fit, or why there is none. */
typedef struct {
  gboolean ok;
  AnFit fit;   /* intervals at the calibration's level */
  char *error; /* when !ok */
} SimCalibFit;

/* The histogram density ("empirical", see above). */
typedef struct {
  gboolean ok;
  char *error; /* when !ok */
  size_t n;
  guint bins;
  double lo, width;  /* bin j covers [lo + j·width, lo + (j+1)·width), the last one closed */
  double resolution; /* q, the smallest gap between two distinct values: width is a multiple of it */
  double loglik, aic;
  AnKs ks; /* against the piecewise-linear CDF of the histogram */
} SimCalibHistogram;

typedef struct {
  char *name;
  size_t n;                      /* delays (zeros included) */
  size_t zeros;                  /* delays of 0 ms, left out of the fits */
  double median, mean, p90, p99; /* of all n (NAN if none) */
  SimCalibFit lognormal, gamma;
  SimCalibHistogram empirical;
  const char *best; /* "lognormal", "gamma", "empirical", or NULL when none fitted */
} SimCalibDelay;

typedef struct {
  char *name;
  uint64_t main_blocks, blocks, empty;
  AnEstimate main_share;  /* of all main blocks; lo = hi = value = 0 when there is no main block at all */
  AnEstimate block_share; /* of all blocks */
  AnEstimate empty_share; /* empty / blocks; all NAN when blocks = 0 */
  double empty_window_ms; /* see above; NAN when unknown */
} SimCalibPool;

typedef struct {
  uint64_t n;
  AnEstimate share;              /* of all transactions */
  double min, median, mean, max; /* gas limit; NAN when n = 0 */
  SimCalibFit lognormal;         /* of the gas limits */
} SimCalibTxType;

typedef struct {
  double level;
  /* Block intervals */
  size_t n_intervals; /* differences used (negative ones dropped) */
  size_t negative_intervals;
  size_t zero_intervals;
  gboolean have_mean;
  AnEstimate mean_interval_s;   /* the exponential fit on all n_intervals */
  SimCalibFit interval_fits[3]; /* exponential, lognormal, gamma on the positive differences */
  int interval_best;            /* index into interval_fits by AIC, or -1 */
  uint64_t main_blocks, all_blocks;
  AnEstimate target_interval_s; /* valid when have_mean */
  /* Pools, in input order */
  guint n_pools;
  SimCalibPool *pools;
  uint64_t pools_main_total, pools_blocks_total;
  /* Transactions */
  size_t n_txs;
  double span_s;
  gboolean have_rate;
  AnEstimate rate_per_s;   /* Garwood (Poisson) */
  size_t dispersion_windows; /* 0 when not computed */
  double dispersion;       /* variance / mean of the counts per 60 s window (1 for a Poisson process) */
  AnEstimate rate_quasi;   /* the rate with se × √max(1, dispersion), Wald interval */
  SimCalibTxType types[SIM_CALIB_N_TYPES];
  uint64_t price_count[SIM_CALIB_N_PRICE_CLASSES];
  AnEstimate price_share[SIM_CALIB_N_PRICE_CLASSES];
  double price_min_gwei[SIM_CALIB_N_PRICE_CLASSES],
      price_max_gwei[SIM_CALIB_N_PRICE_CLASSES]; /* models file */
  size_t n_positive_prices;
  SimCalibFit price_lognormal; /* of the positive prices, gwei */
  /* Delays */
  uint64_t blocks_seen_by_all;
  guint n_vantages;
  SimCalibDelay *delays;
  uint64_t txs_seen_by_all;
  SimCalibDelay *tx_delays; /* n_vantages */
  /* Empty window, all pools */
  uint64_t empty_total;
  AnEstimate empty_share_all;   /* NAN when no block */
  AnEstimate empty_window_ms;   /* valid when have_empty_window */
  gboolean have_empty_window;
  /* Work distribution from one-miner forks */
  uint64_t one_miner_forks;
  double work_exposure_per_s;   /* X above */
  gboolean have_work_delay;
  AnEstimate work_delay_mean_ms;
  SimCalibNetwork network;      /* where the models file writes it (sim_calib_fit sets none; set it after) */
} SimCalib;

/* Fits everything `in` has data for. Fails (SIM_REPLAY_ERROR_INPUT) only when there is nothing at all:
 * no pool with a block. Free with sim_calib_free(). */
SimCalib *sim_calib_fit(const SimCalibInput *in, GError **error);

/* The same from measured logs read by sim_replay_load(). */
SimCalib *sim_calib_from_replay(const SimReplayData *data, double level, GError **error);

/* Delays after the first observation as the fits take them (see "Delays between vantage points" above): one
 * row per block (txs FALSE: the placed logged blocks in sim_replay_data_blocks() order) or per transaction
 * (txs TRUE: by id) that every vantage point saw, n_vantages entries a row, vantage v's delay in ms and
 * NAN for the row's first observer (ties: the first in table order). No rows with fewer than two vantage
 * points. Clear with sim_calib_delay_rows_clear(). */
typedef struct {
  guint n_vantages;
  size_t n_rows;
  double *ms; /* n_rows x n_vantages, row-major */
} SimCalibDelayRows;
void sim_calib_delay_rows(const SimReplayData *data, gboolean txs, SimCalibDelayRows *out);
void sim_calib_delay_rows_clear(SimCalibDelayRows *rows);

void sim_calib_free(SimCalib *calib);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimCalib, sim_calib_free)

/* The full fit report: {"level", "block_intervals", "pools", "transactions", "vantage_delays_ms", "notes"}
 * (every estimate as {"value", "se", "lo", "hi"}, every fit as an_fit_to_json(), JSON null where a number is
 * not finite). Free with json_decref(). */
json_t *sim_calib_report_json(const SimCalib *calib);

/* The models file: {"comment": [one line per fit], "chain": {"target_interval_s"}, "pools": [{"name",
 * "hash_share", "empty_window_ms"}...], "transactions": {...}, "calibration": {"header": header, ...the
 * report}}, sections without data left out. `header` (may be NULL) is stolen. It loads as a scenario
 * include. Free with json_decref(). */
json_t *sim_calib_models_json(const SimCalib *calib, json_t *header);

/* The readable table (what `sim calibrate` prints). */
void sim_calib_print(const SimCalib *calib, FILE *out);

G_END_DECLS
