/* sweep.h: studies over many runs: the sweep file (parameters, pool-share generators, replicates), its
 * expansion into points and runs with derived seeds, flattening of run summaries, and the tidy table of
 * means, standard deviations and 95% confidence intervals per point.
 *
 * A sweep's points are the Cartesian product of its parameters, the last parameter varying fastest. Run
 * k of a sweep with R replicates is point k / R, replicate k % R; its output directory is runs/pP-rR. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"

G_BEGIN_DECLS

/* ---- Seeds ---- */

/* Vigna's splitmix64 finaliser of x + 0x9e3779b97f4a7c15 (a bijection of 64-bit words). */
uint64_t sim_sweep_splitmix64(uint64_t x);

/* The seed of replicate `replicate` of point `point` of a sweep whose base scenario has seed
 * `base_seed`: h = splitmix64(base_seed); h = splitmix64(h ^ point); h = splitmix64(h ^ replicate);
 * the result is h >> 1, so it fits the scenario's seed range [0, 2^63). */
uint64_t sim_sweep_seed(uint64_t base_seed, uint64_t point, uint64_t replicate);

/* ---- Pool-share vectors (ranked largest first where it matters) ---- */

/* Zipf shares over n >= 1 pools: out[i] ∝ 1 / (i + 1)^s, summing to 1. s >= 0 (0: equal shares). */
void sim_shares_zipf(double s, guint n, double *out);

/* The Herfindahl-Hirschman index: the sum of squared shares (shares summing to 1). */
double sim_shares_hhi(const double *shares, guint n);

/* The Nakamoto coefficient: the smallest number of pools whose shares together exceed 1/2 (by more than
 * 1e-12, so that half of an even number of equal pools is not a majority). */
guint sim_shares_nakamoto(const double *shares, guint n);

/* The Zipf exponent over n >= 2 pools whose HHI is `target`, found by bisection (to 1e-13 relative).
 * `target` must be in [1/n, 1); 1/n gives 0. */
double sim_shares_zipf_for_hhi(double target, guint n);

/* A Zipf exponent over n pools whose Nakamoto coefficient is c, 1 <= c <= n/2 + 1: the midpoint of the
 * exponents that give c (the boundaries are found by bisection on the top-c share reaching 1/2); for
 * c = 1, the exponent at which the largest pool holds 3/4. For an even n, c = n/2 + 1 gives 0 (equal
 * shares: no other exponent gives it). */
double sim_shares_zipf_for_nakamoto(guint c, guint n);

/* ---- Statistics ---- */

/* Mean, sample standard deviation (n - 1) and the half-width of the 95% Student-t confidence interval of
 * the mean (t_{0.975, n-1} · sd / √n) of x[0..n). sd and ci95 are NaN when n < 2; all three when n = 0. */
void sim_sweep_stats(const double *x, gsize n, double *mean, double *sd, double *ci95);

/* ---- Flattening a run summary ---- */

typedef struct {
  char *key;    /* "chain.uncle_rate", "pools[Ethermine].main_share", "runs.count_ge.5" */
  double value; /* booleans are 0 or 1 */
} SimFlatValue;

/* Every numeric (and boolean) leaf of `summary` in document order: nested object keys joined with '.';
 * an array of objects that have a string "name" gives KEY[NAME].child, other arrays KEY[i]. Skipped: the
 * "header" record, the wall-clock figures sim.wall_s, sim.events_per_s and sim.peak_rss_bytes, and
 * arrays of arrays (histograms of [value, count] pairs, whose bins differ between runs). Returns a
 * GArray of SimFlatValue that frees its keys; free with g_array_unref(). */
GArray *sim_summary_flatten(const json_t *summary);

/* ---- Sweeps ---- */

typedef struct SimSweep SimSweep;

/* Loads a sweep file strictly (unknown keys, wrong types, bad paths and values: "file: $.path: message",
 * every problem in one pass into `diag`, created with the file name), loads its base scenario (relative
 * to the sweep file) with the fixed sets, expands the points and loads every point's scenario to check
 * it. NULL if there was any problem. Free with sim_sweep_free(). */
SimSweep *sim_sweep_load_file(const char *path, SimDiag *diag);

/* Rebuilds a sweep from its manifest (sim_sweep_manifest(), as stored in a results directory's
 * sweep.json); `what` names the manifest in messages. Errors are G_FILE_ERROR_INVAL. */
SimSweep *sim_sweep_from_manifest(const json_t *manifest, const char *what, GError **error);

void sim_sweep_free(SimSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimSweep, sim_sweep_free)

const char *sim_sweep_name(const SimSweep *sw);
const char *sim_sweep_base_file(const SimSweep *sw);
uint64_t sim_sweep_base_seed(const SimSweep *sw);
guint sim_sweep_n_points(const SimSweep *sw);
guint sim_sweep_n_replicates(const SimSweep *sw);
/* Points × replicates. */
guint sim_sweep_n_runs(const SimSweep *sw);
/* The parameter columns: a path ("network.delay.median_ms") or a generator's ("hhi.target"). */
guint sim_sweep_n_columns(const SimSweep *sw);
const char *sim_sweep_column(const SimSweep *sw, guint i);
/* The point's value of each column (a JSON array, borrowed). */
const json_t *sim_sweep_point_values(const SimSweep *sw, guint point);
/* The point's "PATH=VALUE" overrides, NULL-terminated (borrowed): the fixed sets, then the point's. */
const char *const *sim_sweep_point_sets(const SimSweep *sw, guint point);
/* sim_sweep_seed() of this sweep's base seed. */
uint64_t sim_sweep_run_seed(const SimSweep *sw, guint point, guint replicate);
/* "p3-r1". Free with g_free(). */
char *sim_sweep_run_name(guint point, guint replicate);

/* What a results directory stores as sweep.json (borrowed): the sweep as loaded with its defaults, the
 * base scenario fully defaulted, its seed, the columns, and every point's values and sets. */
const json_t *sim_sweep_manifest(const SimSweep *sw);

/* Whether two manifests describe the same study, i.e. every run has the same scenario and seed: they
 * may differ only in name, comment, replicates, metrics and file names. */
gboolean sim_sweep_manifest_same_study(const json_t *a, const json_t *b);

/* ---- The table ---- */

typedef struct SimSweepTable SimSweepTable;

/* An empty table with one row per point of `sw` (borrowed: it must outlive the table). */
SimSweepTable *sim_sweep_table_new(const SimSweep *sw);
void sim_sweep_table_free(SimSweepTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimSweepTable, sim_sweep_table_free)

/* Adds one run's summary to its point's row. Add runs in (point, replicate) order: the statistics and
 * the metric columns (in order of first appearance, or the sweep's "metrics" order) follow it. */
void sim_sweep_table_add(SimSweepTable *t, guint point, const json_t *summary);

/* Adds every complete run (runs/pP-rR/summary.json, a regular file) with replicate < the sweep's replicates,
 * looking in each directory of `dirs` in turn (the first one that has the run wins). Sets *n_runs. FALSE
 * when a summary cannot be read or parsed (G_FILE_ERROR): bad input, as the results were written atomically. */
gboolean sim_sweep_table_collect(SimSweepTable *t, const char *const *dirs, guint n_dirs, guint *n_runs,
                                 GError **error);

/* Runs added to a point so far. */
guint sim_sweep_table_point_runs(const SimSweepTable *t, guint point);

/* Entries of the sweep's "metrics" that matched no key of any run added (NULL-terminated; g_strfreev). */
char **sim_sweep_table_unmatched_metrics(const SimSweepTable *t);

/* The CSV table: point, the parameter columns, replicates, then KEY:mean, KEY:sd, KEY:ci95 for each
 * metric. C locale, shortest round-trip numbers, empty cells where a value is undefined. */
gboolean sim_sweep_table_write_csv(const SimSweepTable *t, FILE *out);

/* The same as JSON: {"sweep", "columns", "metrics", "rows": [{"point", "parameters", "replicates",
 * "metrics": {KEY: {"n", "mean", "sd", "ci95"}}}]}. Free with json_decref(). */
json_t *sim_sweep_table_to_json(const SimSweepTable *t);

/* Writes DIR/table.csv and DIR/table.json atomically (sim_outdir). */
gboolean sim_sweep_table_write(const SimSweepTable *t, const char *dir, GError **error);

G_END_DECLS
