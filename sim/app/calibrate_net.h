/* calibrate_net.h: fitting the geo network's link-latency scale to measured logs by simulation
 * (`sim calibrate --fit-network SCENARIO`): the method of simulated moments on the vantage points' delays.
 *
 * The logs identify no link latency directly (calibrate.h, "Delays between vantage points"): a vantage
 * point's delay after the first observation is the end of a many-hop relay. So the scenario is simulated at
 * candidate values of network.latency_scale (models/net.h: it multiplies every link's mean latency) and the
 * simulated delays are compared with the measured ones, measured the same way: each run writes its vantage
 * points' EMC logs (emclog.h, as `sim run --emc-logs`), they are read back with sim_replay_load() and
 * reduced by sim_calib_delay_rows(), the rule the calibration applies to the measured logs. The scenario's
 * vantage points stand for the logs': by name when every log name is one of the scenario's (a run's own
 * emc/<V> directories), else in order (the first for the first LOGDIR, ...); their counts must agree.
 *
 * The moment: T, the mean over vantage points of each one's median block delay after the first observation
 * (first observers left out), over the blocks every point saw. It grows with the scale (each hop's latency
 * does), while a common offset of all delays cancels. (Each point's median sits where its delays are dense;
 * the median of all points pooled fell between their modes and was about three times less precise.)
 *  - Measured: T_obs, with its sampling error se_obs from B bootstrap resamples of the blocks (rows: a
 *    block's delays at the several points are correlated, so blocks are resampled, not delays).
 *  - Simulated: K seeds (seed, seed + 1, ...; the same seeds at every scale, so that the curves are smooth
 *    in the scale: common random numbers), `heights` heights each, at a geometric grid of `grid` scales over
 *    [scale_lo, scale_hi]. m(s) is the mean over seeds of T_k(s). The grid's bracket of T_obs is then halved
 *    `refine` times (in log scale).
 *  - Estimate: m(ŝ) = T_obs by linear interpolation of m between the evaluated scales (m must rise across
 *    the bracket). If T_obs is below m at scale_lo or above it at scale_hi, the fit fails (a bound was hit).
 *  - Interval: T_obs ± z·se_T mapped through m's inverse (piecewise linear; beyond the evaluated scales the
 *    end segment extended, flagged), with se_T² = se_obs² + τ² + S²/K: S² the variance over seeds of T_k(ŝ)
 *    (each seed's curve interpolated at ŝ), the simulation's noise in m(ŝ); τ² = max(0, S² − mean of the
 *    seeds' own bootstrap variances), the part of S² that comes from the network's random layout (the
 *    topology differs per seed), which the measured network, one such layout, carries too.
 *  - Goodness of fit: K runs at ŝ, each vantage point's delays pooled over them against the measured ones:
 *    medians and the two-sample Kolmogorov–Smirnov D and p (an_ks_two_sample). The same for transactions
 *    where both the logs and the scenario have them (report only: the fit uses blocks).
 * Every run is seeded from `seed`, so the fit is deterministic; it runs the sequential engine.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "calibrate.h"
#include "fit.h"
#include "replay.h"

G_BEGIN_DECLS

#define SIM_NETFIT_BOOTSTRAP 400 /* bootstrap resamples of the measured blocks */

typedef struct {
  const char *scenario;      /* a scenario with a geo network and as many vantage points as the logs */
  guint heights;             /* stop.heights of each run (settle heights as the scenario says) */
  guint seeds;               /* K >= 2 */
  uint64_t seed;             /* the first seed */
  double scale_lo, scale_hi; /* 0 < lo < hi <= 100 */
  guint grid;                /* >= 3 */
  guint refine;              /* bisections of the bracket */
  double level;              /* of the interval, in (0, 1) */
  gboolean progress;         /* a progress line on stderr (only when it is a terminal) */
  volatile const int *cancel; /* polled by each run and between runs (a signal handler's flag); may be NULL:
                               * set, sim_netfit_run stops, removes its runs' files and fails with
                               * SIM_RUN_ERROR_CANCELLED */
} SimNetFitOptions;

/* One evaluated scale. */
typedef struct {
  double scale;
  double mean;      /* m(s): the mean of T over the seeds, ms */
  double sd;        /* the standard deviation over the seeds, ms */
  double *t;        /* per seed: T_k(s), ms */
  double *boot_var; /* per seed: the bootstrap variance of T_k(s), ms² */
  size_t *rows;     /* per seed: blocks every vantage point saw */
} SimNetFitPoint;

/* Goodness of fit of one vantage point at the fitted scale. */
typedef struct {
  char *name;
  size_t n_measured, n_simulated;
  double median_measured, median_simulated; /* ms; NAN without values */
  AnKs ks;                                  /* NAN when either side has no value */
} SimNetFitGof;

typedef struct {
  double level;
  guint seeds, heights;
  uint64_t seed;
  guint n_vantages;
  char **vantage_names;     /* the logs' names (the scenario's vantage points stand for them in order) */
  char **scenario_vantages; /* the scenario's names */
  size_t measured_rows;     /* blocks every vantage point saw in the logs */
  double t_obs, se_obs;     /* T measured and its bootstrap standard error, ms */
  guint n_points;
  SimNetFitPoint *points; /* by scale, ascending */
  double estimate;        /* ŝ */
  double lo, hi;          /* the interval at `level` */
  gboolean lo_extrapolated, hi_extrapolated;
  double sim_var, topo_var, se_t; /* S², τ², se_T (ms², ms², ms) */
  double slope;                   /* dm/ds at ŝ, ms per unit of scale */
  SimNetFitGof *blocks;           /* n_vantages, at ŝ */
  size_t measured_tx_rows, simulated_tx_rows;
  SimNetFitGof *txs; /* n_vantages, or NULL when either side has no transaction every point saw */
  guint runs;        /* simulations run in all */
} SimNetFit;

/* Fits network.latency_scale of `opt->scenario` to the logs in `data`. FALSE with `error`
 * (SIM_REPLAY_ERROR_INPUT: the scenario is bad or not a geo network, has no or other-counted vantage points,
 * the logs have fewer than two vantage points or too few blocks every point saw, a bound was hit, or the
 * delays do not rise with the scale; SIM_REPLAY_ERROR_RUNTIME: a run failed). Free with sim_netfit_free(). */
SimNetFit *sim_netfit_run(const SimReplayData *data, const SimNetFitOptions *opt, GError **error);
void sim_netfit_free(SimNetFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimNetFit, sim_netfit_free)

/* The fit as JSON (the models file's calibration.network_fit). Free with json_decref(). */
json_t *sim_netfit_json(const SimNetFit *fit);
/* The models file's comment line for network.latency_scale (free with g_free()). */
char *sim_netfit_comment(const SimNetFit *fit);
/* The readable table. */
void sim_netfit_print(const SimNetFit *fit, FILE *out);

G_END_DECLS
