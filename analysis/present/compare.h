/* compare.h: comparing two result sets (simulated or measured, one run or replicates each): every shared
 * metric side by side with differences, confidence intervals and Welch's test, and the distributions of
 * block delays per vantage point with two-sample Kolmogorov-Smirnov tests. `sim compare` prints this.
 *
 * Usage: two sides, each from an_compare_side_load() (files) or an_compare_side_new() +
 * an_compare_side_add_run() (summaries in memory); an_compare_new() with both; then the accessors,
 * an_compare_print_table() or an_compare_add_json().
 *
 * Definitions:
 *  - A side is one or more runs (replicates). A run is a summary (the JSON object `sim run` writes as
 *    summary.json, or one with the same layout from measured data) and, optionally, its observations.csv.
 *  - Flattening a summary into metrics (key -> number), in the summary's key order:
 *      - the top-level "header" object is skipped, and so are the wall-clock fields sim.wall_s,
 *        sim.events_per_s and sim.peak_rss_bytes (they differ between runs of one seed);
 *      - an object's members get the key "<parent>.<member>" ("<member>" at the top level);
 *      - an array whose elements are all objects with a string "name", all different, gives
 *        "<parent>[<name>].<member>" for the other members (pools[Ethermine].main_share);
 *      - an array whose elements are all [integer, number] pairs with distinct first elements (a histogram)
 *        gives "<parent>[<first>]" = second (runs.histogram[3]);
 *      - any other array gives "<parent>[<index>]" for element index (0-based), recursively;
 *      - numbers are metrics; true and false are 1 and 0; strings and null are skipped.
 *  - On a side, a metric's value is the mean over the runs that have it (n of them). With n >= 2 it also has
 *    the sample standard deviation s (divisor n − 1) and the Student-t interval
 *      mean ± t_{1−α/2}(n − 1) · s/√n,   α = 1 − level,   t⁻¹ from gsl_cdf_tdist_Pinv.
 *  - A metric is shared when both sides have it; it is compared as diff = B − A and rel = (B − A)/|A|
 *    (0 when B = A, undefined when A = 0 ≠ B). With n >= 2 runs on each side, Welch's test of equal means:
 *      t = (m_B − m_A) / √(s_A²/n_A + s_B²/n_B),
 *      ν = (s_A²/n_A + s_B²/n_B)² / ((s_A²/n_A)²/(n_A − 1) + (s_B²/n_B)²/(n_B − 1))  (Welch-Satterthwaite),
 *      p = 2·Q_t(|t|; ν)  (two-sided, gsl_cdf_tdist_Q);
 *    undefined when both standard deviations are 0.
 *  - Distributions: when every run of both sides has an observations.csv (the table of
 *    an_prop_write_observations_csv(): `<V>Diff` columns in seconds after the first observation, empty
 *    where V did not see the block, and `FirstObservation` naming the first observer), the delays follow
 *    the study's definition used for propagation.vantage_delay_ms: only blocks seen by every vantage of the
 *    table count, and each such block gives every vantage except its first observer one delay (other
 *    vantages tied with the first observer keep their zeros). Delays are in milliseconds (seconds × 1000),
 *    pooled over the runs of a side. For each vantage named on both sides, and for all vantages pooled,
 *    an_ks_two_sample() gives D and the asymptotic p-value; the medians (type 7) are given beside them.
 *    Their keys are "observations.vantage_delay_ms" (pooled) and "observations.vantage_delay_ms[<V>]".
 *  - A filter keeps only the metric and distribution keys that start with it (a plain string prefix).
 *  - Nothing depends on hash-table order: metrics come in A's key order (keys first seen in A's first run,
 *    then those first seen in its later runs), keys of B only in B's order, vantages in A's column order.
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

#include "fit.h"

G_BEGIN_DECLS

/* ---- Statistics ---------------------------------------------------------------------------------------- */

/* The mean of n >= 2 values with its Student-t interval at `level` (e.g. 0.95): out->value the mean,
 * out->se = s/√n, out->lo/hi = mean ∓ t_{1−α/2}(n−1)·se. FALSE (out untouched) when n < 2. */
gboolean an_compare_mean_ci(const double *x, size_t n, double level, AnEstimate *out);

/* Welch's two-sided test of equal means (formulas above). */
typedef struct {
  double t;  /* the statistic, positive when b's mean is larger */
  double df; /* the Welch-Satterthwaite degrees of freedom */
  double p;  /* the two-sided p-value */
} AnWelch;

/* FALSE (out untouched) when na < 2, nb < 2, or both samples have zero variance. */
gboolean an_compare_welch(const double *a, size_t na, const double *b, size_t nb, AnWelch *out);

/* ---- Flattening ---------------------------------------------------------------------------------------- */

typedef struct {
  char *key;
  double value;
} AnFlatMetric;

/* The metrics of `summary` (a JSON object), flattened as said above, in order. Returns a GArray of
 * AnFlatMetric that frees its keys; free with g_array_unref(). A key repeated (possible only through names
 * that contain '.', '[' or ']') keeps its first value. */
GArray *an_compare_flatten(const json_t *summary);

/* ---- Sides --------------------------------------------------------------------------------------------- */

typedef struct AnCompareSide AnCompareSide;

/* An empty side called `label` (used in messages and output; copied). Free with an_compare_side_free(). */
AnCompareSide *an_compare_side_new(const char *label);
void an_compare_side_free(AnCompareSide *side);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnCompareSide, an_compare_side_free)

/* Adds one run: its summary (flattened now; not kept) called `run_label`, and the path of its
 * observations.csv or NULL. A summary that is not a JSON object, and an observations file that cannot be read
 * or is not such a table, are errors (domain AN_COMPARE_ERROR, code AN_COMPARE_ERROR_INPUT), with messages
 *   "<run_label>: not a summary (expected a JSON object)",
 *   "<run_label>: path not valid UTF-8" (the label goes into the JSON output),
 *   "<csv>: cannot open: <strerror>",
 *   "<csv>:<line>: <problem>" (no FirstObservation column, no <V>Diff column with its <V>TimeStamp, a
 *   vantage name that is not valid UTF-8, a row with the wrong number of fields, a delay that is not a
 *   number, an unknown first observer).
 * The side is unchanged on error. */
gboolean an_compare_side_add_run(AnCompareSide *side, const char *run_label, const json_t *summary,
                                 const char *observations_csv, GError **error);

/* Loads a side from `spec`: a comma-separated list of one or more paths, each
 *   - a summary file (JSON; its directory is not searched for observations.csv), or
 *   - a results directory holding summary.json (and, if present, observations.csv), or
 *   - a directory without summary.json whose immediate subdirectories hold results directories: each of
 *     those (in name order; subdirectories without summary.json are skipped) is a replicate.
 * The side is labelled `spec`; each run by its summary's path. Errors (AN_COMPARE_ERROR_INPUT), with the
 * path first:
 *   "<path>: cannot open: <strerror>"                        (a missing path or an unreadable file)
 *   "<path>:<line>:<column>: <jansson's message>"             (not JSON; "<path>:1:1: empty file (expected a
 *                                                             JSON object)" for an empty one)
 *   "<path>: not a summary (expected a JSON object)"
 *   "<dir>: no summary.json in it or in its subdirectories"
 *   "<spec>: empty path in the list"
 * and those of an_compare_side_add_run(). */
AnCompareSide *an_compare_side_load(const char *spec, GError **error);

const char *an_compare_side_label(const AnCompareSide *side);
guint an_compare_side_n_runs(const AnCompareSide *side);
/* The label of run i (its summary's path when loaded from files). */
const char *an_compare_side_run_label(const AnCompareSide *side, guint i);

/* ---- Comparison ---------------------------------------------------------------------------------------- */

typedef struct {
  const char *filter; /* a key prefix, or NULL for every key */
  double level;       /* of the confidence intervals; 0 means 0.95 */
} AnCompareOptions;

typedef struct AnCompare AnCompare;

/* One metric on both sides. NAN marks what is undefined. */
typedef struct {
  const char *key;
  guint n_a, n_b;   /* runs that have it */
  double a, b;      /* the means */
  double diff, rel; /* b − a; (b − a)/|a| (0 when b = a, NAN when a = 0 != b) */
  AnEstimate ci_a;  /* with n_a >= 2: value = a, se, lo, hi; else all NAN */
  AnEstimate ci_b;
  double welch_t, welch_df, welch_p; /* NAN unless an_compare_welch() is defined */
} AnCompareMetric;

/* A metric of one side only. */
typedef struct {
  const char *key;
  guint n;
  double value; /* the mean */
} AnCompareOnly;

/* A distribution on both sides: block delays after the first observation (from observations.csv), or the
 * sampled commit times of tx_commit_samples.csv (an_tx_write_commit_samples_csv(); keys
 * "tx.commit_samples_ms[k<k>]" for all vantage points and "tx.commit_samples_ms[k<k>[<V>]]" per vantage point,
 * compared when every run of both sides has the file). Values in ms. The all-vantage commit sample holds each
 * transaction once per vantage point: those values are correlated, so its p-value is optimistic; the
 * per-vantage rows are the ones to test with. */
typedef struct {
  const char *key;     /* "observations.vantage_delay_ms" or "observations.vantage_delay_ms[<V>]", or as above */
  const char *vantage; /* NULL for all vantages pooled */
  size_t n_a, n_b;
  double median_a_ms, median_b_ms; /* NAN for an empty sample */
  AnKs ks;                         /* NAN when a sample is empty */
} AnCompareDist;

/* Compares `a` with `b` (neither is kept). Neither a shared metric nor a distribution to compare (after the
 * filter) is an error: code AN_COMPARE_ERROR_NOTHING_SHARED, "<label B>: no numeric metric shared with
 * <label A>" (with " under 'PREFIX'" appended when filtered). Free with an_compare_free(). */
AnCompare *an_compare_new(const AnCompareSide *a, const AnCompareSide *b, const AnCompareOptions *options,
                          GError **error);
void an_compare_free(AnCompare *cmp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnCompare, an_compare_free)

guint an_compare_n_metrics(const AnCompare *cmp);
const AnCompareMetric *an_compare_metric(const AnCompare *cmp, guint i);
/* The metric with this key, or NULL. */
const AnCompareMetric *an_compare_find(const AnCompare *cmp, const char *key);
guint an_compare_n_only(const AnCompare *cmp, gboolean in_b);
const AnCompareOnly *an_compare_only(const AnCompare *cmp, gboolean in_b, guint i);
guint an_compare_n_dists(const AnCompare *cmp);
const AnCompareDist *an_compare_dist(const AnCompare *cmp, guint i);

/* Prints the comparison as aligned text tables: the sides, the shared metrics (A, B, B−A, rel, and with
 * replicates the intervals, n and Welch's p), the metrics of one side only, and the distributions. Numbers
 * use %.6g, relative differences %+.2f%%, "-" where undefined. C locale. */
void an_compare_print_table(const AnCompare *cmp, FILE *out);

/* Adds to `root` (a JSON object), in this order:
 *   "level": the confidence level,
 *   "a", "b": {"label", "runs": [run labels]},
 *   "metrics": {<key>: {"a", "b", "diff", "rel", "n_a", "n_b", "ci_a": [lo, hi], "ci_b": [lo, hi],
 *                        "welch": {"t", "df", "p"}}},
 *   "only_a", "only_b": {<key>: {"value", "n"}},
 *   "distributions": {<key>: {"vantage", "n_a", "n_b", "median_a_ms", "median_b_ms", "ks_d", "ks_p"}}.
 * Undefined values are left out (JSON has no NaN): rel when a = 0 != b, ci_* with fewer than 2 runs, welch
 * unless defined; "vantage" is left out for the pooled row; empty objects are left out. */
void an_compare_add_json(const AnCompare *cmp, json_t *root);

#define AN_COMPARE_ERROR (an_compare_error_quark())
GQuark an_compare_error_quark(void);

typedef enum {
  AN_COMPARE_ERROR_INPUT,          /* a result set cannot be read or is not one */
  AN_COMPARE_ERROR_NOTHING_SHARED, /* an_compare_new(): nothing to compare */
} AnCompareErrorCode;

G_END_DECLS
