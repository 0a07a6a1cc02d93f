/* txhist.c: the streamed histogram (AnHist): log-spaced bins, exact zeros, quantiles from the bins. */
#include "txmetrics-private.h"

#define HIST_SAFE 1e-9

#define HIST_MAX_KEYS (1u << 20) /* buckets; wider ranges go without the tables */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

AnHist *an_hist_new(double min_abs, double max_abs) {
  g_return_val_if_fail(min_abs > 0 && max_abs > min_abs && isfinite(max_abs), NULL);
  AnHist *h = g_new0(AnHist, 1);
  h->min_abs = min_abs;
  h->log_g = log1p(AN_HIST_REL_WIDTH);
  h->m = (guint)ceil(log(max_abs / min_abs) / h->log_g);
  h->min = INFINITY;
  h->max = -INFINITY;
  return h;
}

void an_hist_free(AnHist *h) {
  if (!h) return;
  g_free(h->exact);
  g_free(h->bins);
  g_free(h->bucket);
  g_free(h->safe);
  g_free(h);
}

guint txm_bin_of_exact(const AnHist *h, double x) {
  double a = fabs(x);
  if (a < h->min_abs) return h->m + 1;
  double k = floor(log(a / h->min_abs) / h->log_g);
  if (k >= h->m) return x > 0 ? 2 * h->m + 2 : 0;
  guint i = k < 0 ? 0 : (guint)k; /* k < 0 only by rounding at min_abs */
  return x > 0 ? h->m + 2 + i : h->m - i;
}

static double from_key(uint64_t key) {
  uint64_t b = key << (52 - HIST_SUB_BITS);
  double a;
  memcpy(&a, &b, sizeof a);
  return a;
}

static void hist_build_tables(AnHist *h) {
  if (h->m + 1 >= HIST_CHECK) return;
  g_autofree double *edge = g_new(double, h->m + 1);
  for (guint i = 0; i <= h->m; i++)
    edge[i] = h->min_abs * exp(i * h->log_g); /* as bin_range() */
  double over = edge[h->m] * (1 + HIST_SAFE);
  uint64_t key0 = txm_hist_key(h->min_abs);
  if (!isfinite(over) || txm_hist_key(over) - key0 >= HIST_MAX_KEYS) return;
  double(*safe)[2] = g_malloc_n(h->m + 1, sizeof safe[0]);
  for (guint i = 0; i < h->m; i++) {
    safe[i][0] = edge[i] * (1 + HIST_SAFE);
    safe[i][1] = edge[i + 1] * (1 - HIST_SAFE);
  }
  safe[h->m][0] = safe[h->m][1] = INFINITY;
  gsize n_keys = txm_hist_key(over) - key0 + 1;
  uint16_t *bucket = g_new(uint16_t, n_keys);
  guint i = 0; /* the bin of the bucket's start (0 below min_abs, m from edge m on) */
  for (gsize c = 0; c < n_keys; c++) {
    double start = from_key(key0 + c), end = from_key(key0 + c + 1);
    while (i < h->m && edge[i + 1] <= start)
      i++;
    gboolean whole = i < h->m && start >= safe[i][0] && end <= safe[i][1];
    bucket[c] = (uint16_t)(whole ? i : i | HIST_CHECK);
  }
  h->safe = safe;
  h->bucket = bucket;
  h->key0 = key0;
  h->over_abs = over;
}

/* The range of values bin `b` holds, clipped to the observed minimum and maximum. */
static void bin_range(const AnHist *h, guint b, double *lo, double *hi) {
  double edge_m = h->min_abs * exp(h->m * h->log_g);
  if (b == 0) {
    *lo = h->min, *hi = -edge_m;
  } else if (b <= h->m) {
    guint i = h->m - b;
    *lo = -h->min_abs * exp((i + 1) * h->log_g), *hi = -h->min_abs * exp(i * h->log_g);
  } else if (b == h->m + 1) {
    *lo = -h->min_abs, *hi = h->min_abs;
  } else if (b < 2 * h->m + 2) {
    guint i = b - h->m - 2;
    *lo = h->min_abs * exp(i * h->log_g), *hi = h->min_abs * exp((i + 1) * h->log_g);
  } else {
    *lo = edge_m, *hi = h->max;
  }
  *lo = CLAMP(*lo, h->min, h->max);
  *hi = CLAMP(*hi, h->min, h->max);
}

/* The first sample past AN_HIST_EXACT_MAX: bins from now on, the kept samples moved into them. */
static G_GNUC_NO_INLINE void hist_start_bins(AnHist *h) {
  hist_build_tables(h);
  h->bins = g_new0(uint64_t, 2 * (gsize)h->m + 3);
  for (guint i = 0; i < h->n_exact; i++)
    h->bins[txm_bin_of(h, h->exact[i])]++;
  g_clear_pointer(&h->exact, g_free);
  h->n_exact = h->cap_exact = 0;
}

G_GNUC_NO_INLINE void txm_hist_keep(AnHist *h, double x) {
  if (h->n_exact == h->cap_exact) {
    h->cap_exact = h->cap_exact ? 2 * h->cap_exact : 64;
    h->exact = g_renew(double, h->exact, h->cap_exact);
  }
  h->exact[h->n_exact++] = x;
}

/* an_hist_add() of x[0], ..., x[n - 1] (finite), in this order. The loops keep the running totals in
 * registers. */
void txm_hist_add_run(AnHist *h, const double *x, gsize n) {
  double sum = h->sum, min = h->min, max = h->max;
  gsize i = 0;
  for (; i < n && h->n + i < AN_HIST_EXACT_MAX; i++) {
    sum += x[i];
    min = MIN(min, x[i]);
    max = MAX(max, x[i]);
    txm_hist_keep(h, x[i]);
  }
  if (i < n && !h->bins) hist_start_bins(h);
  for (; i < n; i++) {
    sum += x[i];
    min = MIN(min, x[i]);
    max = MAX(max, x[i]);
    h->bins[txm_bin_of(h, x[i])]++;
  }
  h->n += n;
  h->sum = sum;
  h->min = min;
  h->max = max;
}

/* Completes `h`, given only the count and the running sum of its samples, and those samples while they
 * were AN_HIST_EXACT_MAX or fewer, from `parts` (same range) which together hold the same samples: the
 * minimum, the maximum and, if the samples were too many to keep, the bins. */
void txm_hist_merge(AnHist *h, AnHist *const *parts, guint n_parts) {
  uint64_t n = 0;
  for (guint p = 0; p < n_parts; p++) {
    const AnHist *q = parts[p];
    g_assert(q->m == h->m && q->min_abs == h->min_abs);
    n += q->n;
    h->min = MIN(h->min, q->min);
    h->max = MAX(h->max, q->max);
  }
  g_assert(n == h->n);
  if (h->n <= AN_HIST_EXACT_MAX) return;
  h->bins = g_new0(uint64_t, 2 * (gsize)h->m + 3);
  for (guint p = 0; p < n_parts; p++) {
    const AnHist *q = parts[p];
    if (q->bins) {
      for (gsize b = 0; b < 2 * (gsize)h->m + 3; b++)
        h->bins[b] += q->bins[b];
    } else {
      for (guint i = 0; i < q->n_exact; i++)
        h->bins[txm_bin_of_exact(h, q->exact[i])]++;
    }
  }
  g_clear_pointer(&h->exact, g_free);
  h->n_exact = h->cap_exact = 0;
}

void an_hist_add(AnHist *h, double x) {
  g_return_if_fail(h != NULL && isfinite(x));
  txm_hist_add_run(h, &x, 1);
}

uint64_t an_hist_count(const AnHist *h) {
  g_return_val_if_fail(h != NULL, 0);
  return h->n;
}

double an_hist_mean(const AnHist *h) {
  g_return_val_if_fail(h != NULL, NAN);
  return h->n ? h->sum / (double)h->n : NAN;
}

gboolean an_hist_is_exact(const AnHist *h) {
  g_return_val_if_fail(h != NULL, FALSE);
  return h->bins == NULL;
}

/* Estimate of the j-th order statistic (0-based, j < n) of a binned histogram. */
static double binned_order_stat(const AnHist *h, uint64_t j) {
  if (j == 0) return h->min;
  if (j == h->n - 1) return h->max;
  uint64_t below = 0;
  for (guint b = 0; b < 2 * h->m + 3; b++) {
    uint64_t c = h->bins[b];
    if (j < below + c) {
      double lo, hi;
      bin_range(h, b, &lo, &hi);
      return lo + (hi - lo) * ((double)(j - below) + 0.5) / (double)c;
    }
    below += c;
  }
  g_assert_not_reached();
}

double an_hist_quantile(const AnHist *h, double f) {
  g_return_val_if_fail(h != NULL && f >= 0 && f <= 1, NAN);
  if (h->n == 0) return NAN;
  if (!h->bins) {
    g_autofree double *x = g_memdup2(h->exact, h->n_exact * sizeof(double));
    qsort(x, h->n_exact, sizeof(double), cmp_double);
    return gsl_stats_quantile_from_sorted_data(x, 1, h->n_exact, f);
  }
  double d = (double)(h->n - 1) * f;
  uint64_t i = (uint64_t)floor(d);
  double lo = binned_order_stat(h, i);
  if (i + 1 >= h->n) return lo;
  double frac = d - (double)i;
  return frac == 0 ? lo : lo + frac * (binned_order_stat(h, i + 1) - lo);
}
