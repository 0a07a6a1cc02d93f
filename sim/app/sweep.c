/* sweep.c: sweep files, points and seeds, pool-share generators, summary flattening and the tidy table. */
#include "sweep.h"

#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "output.h"
#include "scenario.h"
#include "util.h"

/* Bounds that keep a typo from asking for billions of runs. */
#define SWEEP_MAX_RUNS 10000000u
#define SWEEP_MAX_LEVELS 10000u

/* ---- Seeds ---- */

uint64_t sim_sweep_splitmix64(uint64_t x) {
  uint64_t z = x + UINT64_C(0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

uint64_t sim_sweep_seed(uint64_t base_seed, uint64_t point, uint64_t replicate) {
  uint64_t h = sim_sweep_splitmix64(base_seed);
  h = sim_sweep_splitmix64(h ^ point);
  h = sim_sweep_splitmix64(h ^ replicate);
  return h >> 1;
}

/* ---- Pool-share vectors ---- */

void sim_shares_zipf(double s, guint n, double *out) {
  g_return_if_fail(n >= 1 && s >= 0);
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += out[i] = pow((double)(i + 1), -s);
  for (guint i = 0; i < n; i++)
    out[i] /= sum;
}

double sim_shares_hhi(const double *shares, guint n) {
  double h = 0;
  for (guint i = 0; i < n; i++)
    h += shares[i] * shares[i];
  return h;
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

guint sim_shares_nakamoto(const double *shares, guint n) {
  g_autofree double *s = g_memdup2(shares, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_desc);
  double cum = 0;
  for (guint i = 0; i < n; i++) {
    cum += s[i];
    /* "More than half", with room for rounding: n/2 equal shares of an even n sum to 1/2, not more. */
    if (cum > 0.5 + 1e-12) return i + 1;
  }
  return n;
}

static double zipf_hhi(double s, guint n) {
  g_autofree double *v = g_new(double, n);
  sim_shares_zipf(s, n, v);
  return sim_shares_hhi(v, n);
}

/* The share of the c largest of n Zipf(s) pools. */
static double zipf_top(double s, guint c, guint n) {
  g_autofree double *v = g_new(double, n);
  sim_shares_zipf(s, n, v);
  double t = 0;
  for (guint i = 0; i < c && i < n; i++)
    t += v[i];
  return t;
}

/* The s where the increasing function f(s) crosses `target`, for f(0) <= target < f(∞). */
static double bisect_up(double (*f)(double s, guint a, guint b), guint a, guint b, double target) {
  double lo = 0, hi = 1;
  while (f(hi, a, b) < target && hi < 1e6) {
    lo = hi;
    hi *= 2;
  }
  for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
    double mid = (lo + hi) / 2;
    if (f(mid, a, b) < target)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

static double zipf_hhi2(double s, guint n, guint unused) {
  (void)unused;
  return zipf_hhi(s, n);
}

static double zipf_top2(double s, guint c, guint n) {
  return zipf_top(s, c, n);
}

double sim_shares_zipf_for_hhi(double target, guint n) {
  g_return_val_if_fail(n >= 2 && target >= 1.0 / n && target < 1, NAN);
  if (target <= 1.0 / n) return 0;
  return bisect_up(zipf_hhi2, n, 0, target);
}

/* The exponent from which on the c largest pools hold more than 1/2 (0 if they hold at least 1/2 with
 * equal shares). */
static double nakamoto_boundary(guint c, guint n) {
  if (zipf_top(0, c, n) >= 0.5 - 1e-12) return 0;
  return bisect_up(zipf_top2, c, n, 0.5);
}

double sim_shares_zipf_for_nakamoto(guint c, guint n) {
  g_return_val_if_fail(n >= 1 && c >= 1 && c <= n / 2 + 1, NAN);
  if (n == 1) return 0;
  if (c == 1) return bisect_up(zipf_top2, 1, n, 0.75);
  return (nakamoto_boundary(c, n) + nakamoto_boundary(c - 1, n)) / 2;
}

/* ---- Statistics ---- */

void sim_sweep_stats(const double *x, gsize n, double *mean, double *sd, double *ci95) {
  *mean = *sd = *ci95 = NAN;
  if (n == 0) return;
  *mean = gsl_stats_mean(x, 1, n);
  if (n < 2) return;
  *sd = gsl_stats_sd_m(x, 1, n, *mean);
  *ci95 = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * *sd / sqrt((double)n);
}

/* ---- Formatting ---- */

/* The shortest %g form that reads back as x (C locale). Free with g_free(). */
static char *fmt_num(double x) {
  char buf[40];
  for (int prec = 1; prec <= 17; prec++) {
    g_snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (g_ascii_strtod(buf, NULL) == x) break;
  }
  return g_strdup(buf);
}

/* A JSON value as the VALUE of a --set: JSON text, reals in their shortest form, and strings bare where
 * --set would take them as strings anyway (they are not JSON text themselves). */
static char *value_json_text(const json_t *v) {
  if (json_is_real(v)) return fmt_num(json_real_value(v));
  if (json_is_string(v)) {
    json_t *as_json = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
    if (!as_json && *json_string_value(v)) return g_strdup(json_string_value(v));
    json_decref(as_json);
  }
  char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  char *r = g_strdup(s);
  free(s);
  return r;
}

/* A JSON value as a table cell or for a message: strings bare, numbers shortest, the rest compact JSON. */
static char *value_text(const json_t *v) {
  if (json_is_string(v)) return g_strdup(json_string_value(v));
  return value_json_text(v);
}

/* ---- Flattening ---- */

static void flat_clear(gpointer p) {
  g_free(((SimFlatValue *)p)->key);
}

static gboolean all_arrays(const json_t *arr) {
  size_t i;
  const json_t *v;
  if (json_array_size(arr) == 0) return FALSE;
  json_array_foreach(arr, i, v) if (!json_is_array(v)) return FALSE;
  return TRUE;
}

static void flatten(const char *prefix, const json_t *v, GArray *out) {
  if (json_is_number(v) || json_is_boolean(v)) {
    static const char *const wall[] = {"sim.wall_s", "sim.events_per_s", "sim.peak_rss_bytes"};
    for (guint i = 0; i < G_N_ELEMENTS(wall); i++)
      if (strcmp(prefix, wall[i]) == 0) return;
    SimFlatValue f = {.key = g_strdup(prefix),
                      .value = json_is_number(v) ? json_number_value(v)
                               : json_is_true(v) ? 1.0
                                                 : 0.0};
    g_array_append_val(out, f);
    return;
  }
  if (json_is_object(v)) {
    const char *k;
    const json_t *c;
    json_object_foreach((json_t *)v, k, c) {
      if (!*prefix && strcmp(k, "header") == 0) continue;
      g_autofree char *p = *prefix ? g_strdup_printf("%s.%s", prefix, k) : g_strdup(k);
      flatten(p, c, out);
    }
    return;
  }
  if (json_is_array(v) && !all_arrays(v)) {
    size_t i;
    const json_t *c;
    json_array_foreach(v, i, c) {
      const json_t *name = json_object_get(c, "name");
      g_autofree char *p = json_is_string(name) ? g_strdup_printf("%s[%s]", prefix, json_string_value(name))
                                                : g_strdup_printf("%s[%zu]", prefix, i);
      flatten(p, c, out);
    }
  }
}

GArray *sim_summary_flatten(const json_t *summary) {
  GArray *out = g_array_new(FALSE, TRUE, sizeof(SimFlatValue));
  g_array_set_clear_func(out, flat_clear);
  if (summary) flatten("", summary, out);
  return out;
}

/* ---- Sweep files ---- */

typedef struct {
  char *name;
  char *base;
  int64_t replicates;
} SweepTop;

static const SimParamSpec sweep_params[] = {
    {.name = "name",
     .type = SIM_PARAM_STRING,
     .def_str = "",
     .offset = offsetof(SweepTop, name),
     .help = "the sweep's name: results/<name>/ by default (the file name if absent)"},
    {.name = "base",
     .type = SIM_PARAM_STRING,
     .required = TRUE,
     .offset = offsetof(SweepTop, base),
     .help = "the base scenario, relative to the sweep file"},
    {.name = "replicates",
     .type = SIM_PARAM_INT,
     .min = 1,
     .max = 100000,
     .def = 1,
     .offset = offsetof(SweepTop, replicates),
     .help = "runs per point, each with its own derived seed"},
};
static const char *const sweep_extra[] = {"comment", "parameters", "sets", "metrics", NULL};

/* One swept dimension: a column and its levels, each a value and the overrides that realise it. */
typedef struct {
  char *column;
  GPtrArray *values; /* json_t *, owned */
  GPtrArray *sets;   /* per level: GPtrArray of char * */
} Dim;

static void json_free(gpointer p) {
  json_decref(p);
}

static void ptr_array_free(gpointer p) {
  g_ptr_array_unref(p);
}

/* Also for NULL: rows of the table hold NULL where a run lacked a key. */
static void array_free0(gpointer p) {
  if (p) g_array_unref(p);
}

static void dim_clear(Dim *d) {
  g_free(d->column);
  if (d->values) g_ptr_array_unref(d->values);
  if (d->sets) g_ptr_array_unref(d->sets);
}

static void dim_init(Dim *d, const char *column) {
  d->column = g_strdup(column);
  d->values = g_ptr_array_new_with_free_func(json_free);
  d->sets = g_ptr_array_new_with_free_func(ptr_array_free);
}

/* Adds a level; takes `value`. Returns the level's (empty) list of sets. */
static GPtrArray *dim_add(Dim *d, json_t *value) {
  g_ptr_array_add(d->values, value);
  GPtrArray *s = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(d->sets, s);
  return s;
}

/* Every key of `o` must be in `allowed` (NULL-terminated); problems go to diag. */
static void check_keys(json_t *o, const char *path, const char *const *allowed, SimDiag *diag) {
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    gboolean known = FALSE;
    for (const char *const *a = allowed; *a && !known; a++)
      known = strcmp(*a, k) == 0;
    if (known) continue;
    g_autofree char *kp = sim_json_child_path(path, k);
    g_autofree char *list = g_strjoinv(", ", (char **)allowed);
    sim_diag_add(diag, kp, "unknown key (expected one of: %s)", list);
  }
}

/* A non-empty array of numbers in [min, max] (integers if `integer`) at obj[key]; NULL with problems in
 * diag otherwise. */
static GArray *num_list(json_t *obj, const char *key, const char *path, double min, double max,
                        gboolean min_open, gboolean max_open, gboolean integer, SimDiag *diag) {
  g_autofree char *p = sim_json_child_path(path, key);
  json_t *arr = json_object_get(obj, key);
  if (!arr) {
    sim_diag_add(diag, p, "missing required key");
    return NULL;
  }
  if (!json_is_array(arr) || json_array_size(arr) == 0) {
    sim_diag_add(diag, p, "must be a non-empty array of %s", integer ? "integers" : "numbers");
    return NULL;
  }
  if (json_array_size(arr) > SWEEP_MAX_LEVELS) {
    sim_diag_add(diag, p, "at most %u values", SWEEP_MAX_LEVELS);
    return NULL;
  }
  GArray *out = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    g_autofree char *ip = g_strdup_printf("%s[%zu]", p, i);
    if (integer ? !json_is_integer(v) : !json_is_number(v)) {
      sim_diag_add(diag, ip, "must be %s", integer ? "an integer" : "a number");
      ok = FALSE;
      continue;
    }
    double x = json_number_value(v);
    if (!isfinite(x) || (min_open ? x <= min : x < min) || (max_open ? x >= max : x > max)) {
      g_autofree char *a = fmt_num(min), *b = fmt_num(max), *got = fmt_num(x);
      sim_diag_add(diag, ip, "must be in %s%s, %s%s (got %s)", min_open ? "(" : "[", a, b,
                   max_open ? ")" : "]", got);
      ok = FALSE;
      continue;
    }
    for (guint j = 0; j < out->len; j++)
      if (g_array_index(out, double, j) == x) {
        sim_diag_add(diag, ip, "repeats %s[%u]", p, j);
        ok = FALSE;
      }
    g_array_append_val(out, x);
  }
  if (!ok) g_clear_pointer(&out, g_array_unref);
  return out;
}

/* The base pools, for the generators. */
typedef struct {
  json_t *pools; /* the defaulted base's pools array (borrowed) */
  guint n;
  double *share; /* normalised to sum 1 */
  guint *rank;   /* rank[r] = index of the r-th largest pool (ties: lower index first) */
} BasePools;

static gint cmp_rank(gconstpointer a, gconstpointer b, gpointer user) {
  const double *share = user;
  guint i = *(const guint *)a, j = *(const guint *)b;
  if (share[i] != share[j]) return share[i] > share[j] ? -1 : 1;
  return (i > j) - (i < j);
}

static void base_pools_init(BasePools *bp, json_t *pools) {
  bp->pools = pools;
  bp->n = (guint)json_array_size(pools);
  bp->share = g_new0(double, bp->n);
  double sum = 0;
  for (guint i = 0; i < bp->n; i++)
    sum += bp->share[i] = json_number_value(json_object_get(json_array_get(pools, i), "hash_share"));
  GArray *rank = g_array_sized_new(FALSE, FALSE, sizeof(guint), bp->n);
  for (guint i = 0; i < bp->n; i++) {
    bp->share[i] /= sum;
    g_array_append_val(rank, i);
  }
  g_array_sort_with_data(rank, cmp_rank, bp->share);
  bp->rank = (guint *)(void *)g_array_free(rank, FALSE);
}

static void base_pools_clear(BasePools *bp) {
  g_free(bp->share);
  g_free(bp->rank);
}

static void normalise(double *v, guint n) {
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += v[i];
  for (guint i = 0; i < n; i++)
    v[i] /= sum;
}

/* A level that keeps the base pools and sets their shares (`share` by base index, renormalised). */
static void level_shares(GPtrArray *sets, double *share, guint n) {
  normalise(share, n);
  for (guint i = 0; i < n; i++) {
    g_autofree char *v = fmt_num(share[i]);
    g_ptr_array_add(sets, g_strdup_printf("pools[%u].hash_share=%s", i, v));
  }
}

/* A level that replaces the pools array (takes `pools`); shares are renormalised. */
static void level_pools(GPtrArray *sets, json_t *pools) {
  guint n = (guint)json_array_size(pools);
  g_autofree double *share = g_new(double, n);
  for (guint i = 0; i < n; i++)
    share[i] = json_number_value(json_object_get(json_array_get(pools, i), "hash_share"));
  normalise(share, n);
  for (guint i = 0; i < n; i++)
    json_object_set_new(json_array_get(pools, i), "hash_share", json_real(share[i]));
  char *s = json_dumps(pools, JSON_COMPACT | JSON_PRESERVE_ORDER);
  g_ptr_array_add(sets, g_strdup_printf("pools=%s", s));
  free(s);
  json_decref(pools);
}

/* Zipf shares over n pools as a level: onto the base pools by rank when n is the base's count, else n
 * new pools P1..Pn. */
static void level_zipf(GPtrArray *sets, const BasePools *bp, double s, guint n) {
  g_autofree double *z = g_new(double, n);
  sim_shares_zipf(s, n, z);
  if (n == bp->n) {
    g_autofree double *share = g_new(double, n);
    for (guint r = 0; r < n; r++)
      share[bp->rank[r]] = z[r];
    level_shares(sets, share, n);
    return;
  }
  json_t *pools = json_array();
  for (guint i = 0; i < n; i++) {
    g_autofree char *name = g_strdup_printf("P%u", i + 1);
    json_array_append_new(pools, json_pack("{s:s, s:f}", "name", name, "hash_share", z[i]));
  }
  level_pools(sets, pools);
}

/* The optional pool count "n" of a Zipf-based generator (default: the base's). */
static gboolean gen_n(json_t *o, const char *path, const BasePools *bp, guint min_n, guint *n,
                      SimDiag *diag) {
  *n = bp->n;
  json_t *v = json_object_get(o, "n");
  if (!v) {
    if (*n < min_n) {
      sim_diag_add(diag, path, "the base scenario has %u pool%s; this generator needs n >= %u (set \"n\")",
                   *n, *n == 1 ? "" : "s", min_n);
      return FALSE;
    }
    return TRUE;
  }
  g_autofree char *p = sim_json_child_path(path, "n");
  if (!json_is_integer(v) || json_integer_value(v) < min_n || json_integer_value(v) > 100000) {
    sim_diag_add(diag, p, "must be an integer in [%u, 100000]", min_n);
    return FALSE;
  }
  *n = (guint)json_integer_value(v);
  return TRUE;
}

static gboolean gen_parse(json_t *o, const char *path, const BasePools *bp, Dim *dim, SimDiag *diag) {
  const char *g = json_string_value(json_object_get(o, "generator"));
  guint before = sim_diag_count(diag);
  if (g && strcmp(g, "zipf") == 0) {
    static const char *const keys[] = {"generator", "n", "s", "comment", NULL};
    check_keys(o, path, keys, diag);
    guint n = 0;
    gboolean ok_n = gen_n(o, path, bp, 1, &n, diag);
    g_autoptr(GArray) s = num_list(o, "s", path, 0, 100, FALSE, FALSE, FALSE, diag);
    if (!ok_n || !s || sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "zipf.s");
    for (guint i = 0; i < s->len; i++) {
      double e = g_array_index(s, double, i);
      level_zipf(dim_add(dim, json_real(e)), bp, e, n);
    }
    return TRUE;
  }
  if (g && strcmp(g, "hhi") == 0) {
    static const char *const keys[] = {"generator", "n", "targets", "comment", NULL};
    check_keys(o, path, keys, diag);
    guint n = 0;
    if (!gen_n(o, path, bp, 2, &n, diag)) return FALSE;
    /* From equal shares (1/n) up to, not including, one pool with everything. */
    g_autoptr(GArray) t = num_list(o, "targets", path, 1.0 / n, 1, FALSE, TRUE, FALSE, diag);
    if (!t || sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "hhi.target");
    for (guint i = 0; i < t->len; i++) {
      double target = g_array_index(t, double, i);
      level_zipf(dim_add(dim, json_real(target)), bp, sim_shares_zipf_for_hhi(target, n), n);
    }
    return TRUE;
  }
  if (g && strcmp(g, "nakamoto") == 0) {
    static const char *const keys[] = {"generator", "n", "targets", "comment", NULL};
    check_keys(o, path, keys, diag);
    guint n = 0;
    if (!gen_n(o, path, bp, 1, &n, diag)) return FALSE;
    g_autoptr(GArray) t = num_list(o, "targets", path, 1, n / 2 + 1, FALSE, FALSE, TRUE, diag);
    if (!t || sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "nakamoto.target");
    for (guint i = 0; i < t->len; i++) {
      guint c = (guint)g_array_index(t, double, i);
      level_zipf(dim_add(dim, json_integer(c)), bp, sim_shares_zipf_for_nakamoto(c, n), n);
    }
    return TRUE;
  }
  if (g && strcmp(g, "scale_top") == 0) {
    static const char *const keys[] = {"generator", "k", "factors", "comment", NULL};
    check_keys(o, path, keys, diag);
    json_t *kv = json_object_get(o, "k");
    guint k = 1;
    if (kv) {
      g_autofree char *kp = sim_json_child_path(path, "k");
      if (!json_is_integer(kv) || json_integer_value(kv) < 1 || json_integer_value(kv) >= (json_int_t)bp->n) {
        sim_diag_add(diag, kp, "must be an integer in [1, %u] (fewer than the base's %u pools)", bp->n - 1,
                     bp->n);
        return FALSE;
      }
      k = (guint)json_integer_value(kv);
    } else if (bp->n < 2) {
      sim_diag_add(diag, path, "the base scenario has 1 pool; scale_top needs at least 2");
      return FALSE;
    }
    g_autoptr(GArray) f = num_list(o, "factors", path, 0, 1e6, TRUE, FALSE, FALSE, diag);
    if (!f || sim_diag_count(diag) != before) return FALSE;
    double top = 0;
    for (guint r = 0; r < k; r++)
      top += bp->share[bp->rank[r]];
    for (guint i = 0; i < f->len; i++) {
      double x = g_array_index(f, double, i);
      if (x * top >= 1) {
        g_autofree char *p = g_strdup_printf("%s.factors[%u]", path, i);
        sim_diag_add(diag, p,
                     "the top %u pool%s would hold %g × %g = %g of the hash rate (must stay below 1)", k,
                     k == 1 ? "" : "s", x, top, x * top);
      }
    }
    if (sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "scale_top.factor");
    for (guint i = 0; i < f->len; i++) {
      double x = g_array_index(f, double, i);
      g_autofree double *share = g_memdup2(bp->share, bp->n * sizeof *share);
      double rest = (1 - x * top) / (1 - top);
      for (guint r = 0; r < bp->n; r++)
        share[bp->rank[r]] *= r < k ? x : rest;
      level_shares(dim_add(dim, json_real(x)), share, bp->n);
    }
    return TRUE;
  }
  if (g && strcmp(g, "merge_top2") == 0) {
    static const char *const keys[] = {"generator", "include_base", "comment", NULL};
    check_keys(o, path, keys, diag);
    json_t *ib = json_object_get(o, "include_base");
    if (ib && !json_is_boolean(ib)) {
      g_autofree char *p = sim_json_child_path(path, "include_base");
      sim_diag_add(diag, p, "must be a boolean");
    }
    if (bp->n < 2) sim_diag_add(diag, path, "the base scenario has 1 pool; merge_top2 needs at least 2");
    if (sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "merge_top2");
    if (!ib || json_is_true(ib)) dim_add(dim, json_integer(0));
    guint a = bp->rank[0], b = bp->rank[1];
    json_t *pools = json_array();
    for (guint i = 0; i < bp->n; i++) {
      if (i == b) continue;
      json_t *p = json_deep_copy(json_array_get(bp->pools, i));
      json_object_set_new(p, "hash_share", json_real(bp->share[i] + (i == a ? bp->share[b] : 0)));
      if (i == a) {
        g_autofree char *name =
            g_strdup_printf("%s+%s", json_string_value(json_object_get(p, "name")),
                            json_string_value(json_object_get(json_array_get(bp->pools, b), "name")));
        json_object_set_new(p, "name", json_string(name));
      }
      json_array_append_new(pools, p);
    }
    level_pools(dim_add(dim, json_integer(1)), pools);
    return TRUE;
  }
  if (g && strcmp(g, "split") == 0) {
    static const char *const keys[] = {"generator", "pool", "k", "comment", NULL};
    check_keys(o, path, keys, diag);
    g_autofree char *pp = sim_json_child_path(path, "pool");
    const char *pool = json_string_value(json_object_get(o, "pool"));
    guint which = bp->n;
    if (!json_object_get(o, "pool"))
      sim_diag_add(diag, pp, "missing required key");
    else if (!pool)
      sim_diag_add(diag, pp, "must be a string");
    else {
      for (guint i = 0; i < bp->n; i++)
        if (g_strcmp0(json_string_value(json_object_get(json_array_get(bp->pools, i), "name")), pool) == 0)
          which = i;
      if (which == bp->n) sim_diag_add(diag, pp, "no pool \"%s\" in the base scenario", pool);
    }
    g_autoptr(GArray) k = num_list(o, "k", path, 1, 1000, FALSE, FALSE, TRUE, diag);
    if (!k || sim_diag_count(diag) != before) return FALSE;
    dim_init(dim, "split.k");
    for (guint l = 0; l < k->len; l++) {
      guint parts = (guint)g_array_index(k, double, l);
      GPtrArray *sets = dim_add(dim, json_integer(parts));
      if (parts == 1) continue;
      json_t *pools = json_array();
      for (guint i = 0; i < bp->n; i++) {
        if (i != which) {
          json_t *p = json_deep_copy(json_array_get(bp->pools, i));
          json_object_set_new(p, "hash_share", json_real(bp->share[i]));
          json_array_append_new(pools, p);
          continue;
        }
        for (guint j = 0; j < parts; j++) {
          json_t *p = json_deep_copy(json_array_get(bp->pools, i));
          g_autofree char *name = g_strdup_printf("%s.%u", pool, j + 1);
          json_object_set_new(p, "name", json_string(name));
          json_object_set_new(p, "hash_share", json_real(bp->share[i] / parts));
          json_array_append_new(pools, p);
        }
      }
      level_pools(sets, pools);
    }
    return TRUE;
  }
  g_autofree char *gp = sim_json_child_path(path, "generator");
  sim_diag_add(diag, gp, "must be one of: zipf, hhi, nakamoto, scale_top, merge_top2, split");
  return FALSE;
}

/* {"path", "values" | "range"}: one level per value. */
static gboolean path_param_parse(json_t *o, const char *path, json_t *base_doc, const char *base_file,
                                 Dim *dim, SimDiag *diag) {
  static const char *const keys[] = {"path", "values", "range", "comment", NULL};
  guint before = sim_diag_count(diag);
  check_keys(o, path, keys, diag);
  g_autofree char *pp = sim_json_child_path(path, "path");
  const char *target = json_string_value(json_object_get(o, "path"));
  if (!target) {
    sim_diag_add(diag, pp, "must be a string such as \"network.delay.median_ms\"");
  } else {
    const char *bare = g_str_has_prefix(target, "$.") ? target + 2 : target;
    g_autoptr(GError) e = NULL;
    if (strcmp(bare, "seed") == 0)
      sim_diag_add(diag, pp, "the seed is derived for each run; sweep replicates instead");
    else if (!sim_json_get_path(base_doc, target, &e))
      sim_diag_add(diag, pp, "not in the base scenario %s (with its defaults): %s", base_file, e->message);
  }
  json_t *values = json_object_get(o, "values"), *range = json_object_get(o, "range");
  g_autofree char *vp = sim_json_child_path(path, "values");
  g_autofree char *rp = sim_json_child_path(path, "range");
  if (!values == !range) sim_diag_add(diag, path, "give exactly one of \"values\" and \"range\"");
  g_autoptr(GPtrArray) levels = g_ptr_array_new_with_free_func(json_free);
  if (values) {
    if (!json_is_array(values) || json_array_size(values) == 0) {
      sim_diag_add(diag, vp, "must be a non-empty array");
    } else if (json_array_size(values) > SWEEP_MAX_LEVELS) {
      sim_diag_add(diag, vp, "at most %u values", SWEEP_MAX_LEVELS);
    } else {
      size_t i;
      json_t *v;
      json_array_foreach(values, i, v) {
        for (guint j = 0; j < levels->len; j++)
          if (json_equal(v, g_ptr_array_index(levels, j))) {
            g_autofree char *ip = g_strdup_printf("%s[%zu]", vp, i);
            sim_diag_add(diag, ip, "repeats %s[%u]", vp, j);
          }
        g_ptr_array_add(levels, json_incref(v));
      }
    }
  } else if (range) {
    static const char *const rkeys[] = {"from", "to", "step", NULL};
    if (!json_is_object(range)) {
      sim_diag_add(diag, rp, "must be an object {\"from\", \"to\", \"step\"}");
    } else {
      guint rb = sim_diag_count(diag);
      check_keys(range, rp, rkeys, diag);
      double x[3] = {0};
      json_int_t xi[3] = {0}; /* exact when all three are integers (doubles round past 2^53) */
      gboolean ints = TRUE;
      for (guint i = 0; i < 3; i++) {
        json_t *v = json_object_get(range, rkeys[i]);
        g_autofree char *kp = sim_json_child_path(rp, rkeys[i]);
        if (!v)
          sim_diag_add(diag, kp, "missing required key");
        else if (!json_is_number(v))
          sim_diag_add(diag, kp, "must be a number");
        else {
          x[i] = json_number_value(v);
          ints = ints && json_is_integer(v);
          if (json_is_integer(v)) xi[i] = json_integer_value(v);
        }
      }
      if (sim_diag_count(diag) == rb) {
        g_autofree char *sp = sim_json_child_path(rp, "step");
        g_autofree char *tp = sim_json_child_path(rp, "to");
        gboolean step_ok = ints ? xi[2] > 0 : x[2] > 0;
        gboolean order_ok = ints ? xi[1] >= xi[0] : x[1] >= x[0];
        /* In unsigned arithmetic the span of two int64 values cannot overflow. */
        double count = !step_ok || !order_ok ? 0
                       : ints ? (double)(((guint64)xi[1] - (guint64)xi[0]) / (guint64)xi[2]) + 1
                              : floor((x[1] - x[0]) / x[2] + 1e-9) + 1;
        if (!step_ok)
          sim_diag_add(diag, sp, "must be > 0");
        else if (!order_ok)
          sim_diag_add(diag, tp, "must be >= from");
        else if (count > SWEEP_MAX_LEVELS)
          sim_diag_add(diag, rp, count < 1e15 ? "gives %.0f values; at most %u" : "gives %.3g values; at most %u",
                       count, SWEEP_MAX_LEVELS);
        else
          for (guint k = 0; k < (guint)count; k++) {
            if (ints) {
              /* from + k·step <= to: exact, no overflow. */
              g_ptr_array_add(levels,
                              json_integer((json_int_t)((guint64)xi[0] + (guint64)k * (guint64)xi[2])));
            } else {
              /* from + k·step, rounded to 12 significant digits so 0.1 steps stay 0.3, not
               * 0.30000000000000004. */
              char buf[40];
              g_snprintf(buf, sizeof buf, "%.12g", x[0] + k * x[2]);
              g_ptr_array_add(levels, json_real(g_ascii_strtod(buf, NULL)));
            }
          }
      }
    }
  }
  if (sim_diag_count(diag) != before) return FALSE;
  dim_init(dim, g_str_has_prefix(target, "$.") ? target + 2 : target);
  for (guint i = 0; i < levels->len; i++) {
    json_t *v = g_ptr_array_index(levels, i);
    g_autofree char *text = value_json_text(v);
    g_ptr_array_add(dim_add(dim, json_incref(v)), g_strdup_printf("%s=%s", dim->column, text));
  }
  return TRUE;
}

struct SimSweep {
  char *name;
  char *base_file;
  uint64_t base_seed;
  guint replicates;
  GPtrArray *columns; /* char * */
  json_t *manifest;
  guint n_points;
  json_t **point_values; /* borrowed from manifest */
  char ***point_sets;    /* owned, NULL-terminated */
  char **metrics;        /* NULL: every key */
};

void sim_sweep_free(SimSweep *sw) {
  if (!sw) return;
  for (guint p = 0; sw->point_sets && p < sw->n_points; p++)
    g_strfreev(sw->point_sets[p]);
  g_free(sw->point_sets);
  g_free(sw->point_values);
  g_strfreev(sw->metrics);
  if (sw->columns) g_ptr_array_unref(sw->columns);
  json_decref(sw->manifest);
  g_free(sw->base_file);
  g_free(sw->name);
  g_free(sw);
}

/* A string array at obj[key] (NULL if absent), or FALSE with a message. */
static gboolean string_list(const json_t *obj, const char *key, gboolean need_eq, GPtrArray **out,
                            char **msg) {
  json_t *a = json_object_get(obj, key);
  *out = NULL;
  if (!a) return TRUE;
  if (!json_is_array(a)) {
    *msg = g_strdup_printf("$.%s: must be an array of strings", key);
    return FALSE;
  }
  GPtrArray *r = g_ptr_array_new_with_free_func(g_free);
  size_t i;
  json_t *v;
  json_array_foreach(a, i, v) {
    if (!json_is_string(v) || (need_eq && !strchr(json_string_value(v), '='))) {
      *msg = g_strdup_printf("$.%s[%zu]: must be a string%s", key, i, need_eq ? " PATH=VALUE" : "");
      g_ptr_array_unref(r);
      return FALSE;
    }
    g_ptr_array_add(r, g_strdup(json_string_value(v)));
  }
  *out = r;
  return TRUE;
}

SimSweep *sim_sweep_from_manifest(const json_t *manifest, const char *what, GError **error) {
  g_return_val_if_fail(manifest != NULL && what != NULL, NULL);
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    g_autofree char *m_ = g_strdup_printf(__VA_ARGS__);                                                      \
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: not a sweep manifest (%s)", what, m_);         \
    return NULL;                                                                                             \
  } while (0)
  const json_t *sweep = json_object_get(manifest, "sweep");
  const json_t *columns = json_object_get(manifest, "columns");
  const json_t *points = json_object_get(manifest, "points");
  const json_t *seed = json_object_get(manifest, "base_seed");
  const char *base = json_string_value(json_object_get(manifest, "base_file"));
  if (!json_is_object(manifest) || !json_is_object(sweep) || !json_is_array(columns) ||
      !json_is_array(points) || !json_is_integer(seed) || json_integer_value(seed) < 0 || !base ||
      !json_is_object(json_object_get(manifest, "base_scenario")))
    BAD("needs sweep, base_file, base_seed, base_scenario, columns and points");
  const char *name = json_string_value(json_object_get(sweep, "name"));
  json_t *reps = json_object_get(sweep, "replicates");
  if (!name || !json_is_integer(reps) || json_integer_value(reps) < 1 || json_integer_value(reps) > 100000)
    BAD("$.sweep needs a name and replicates in [1, 100000]");
  g_autoptr(SimSweep) sw = g_new0(SimSweep, 1);
  sw->name = g_strdup(name);
  sw->base_file = g_strdup(base);
  sw->base_seed = (uint64_t)json_integer_value(seed);
  sw->replicates = (guint)json_integer_value(reps);
  sw->manifest = json_incref((json_t *)manifest);
  g_autofree char *msg = NULL;
  g_autoptr(GPtrArray) fixed = NULL, metrics = NULL;
  if (!string_list(sweep, "sets", TRUE, &fixed, &msg) ||
      !string_list(sweep, "metrics", FALSE, &metrics, &msg))
    BAD("$.sweep%s", msg + 1);
  if (metrics) {
    g_ptr_array_add(metrics, NULL);
    sw->metrics = (char **)g_ptr_array_free(g_steal_pointer(&metrics), FALSE);
  }
  sw->columns = g_ptr_array_new_with_free_func(g_free);
  size_t i;
  json_t *v;
  json_array_foreach(columns, i, v) {
    if (!json_is_string(v)) BAD("$.columns[%zu] must be a string", i);
    g_ptr_array_add(sw->columns, g_strdup(json_string_value(v)));
  }
  sw->n_points = (guint)json_array_size(points);
  if (sw->n_points == 0 || (guint64)sw->n_points * sw->replicates > SWEEP_MAX_RUNS)
    BAD("$.points: between 1 and %u runs", SWEEP_MAX_RUNS);
  sw->point_values = g_new0(json_t *, sw->n_points);
  sw->point_sets = g_new0(char **, sw->n_points);
  json_array_foreach(points, i, v) {
    json_t *vals = json_object_get(v, "values");
    g_autoptr(GPtrArray) own = NULL;
    g_autofree char *m = NULL;
    if (!json_is_array(vals) || json_array_size(vals) != sw->columns->len)
      BAD("$.points[%zu].values must be an array of %u values", i, sw->columns->len);
    if (!json_is_array(json_object_get(v, "sets")) || !string_list(v, "sets", TRUE, &own, &m))
      BAD("$.points[%zu].sets must be an array of PATH=VALUE strings", i);
    GPtrArray *all = g_ptr_array_new();
    for (guint k = 0; fixed && k < fixed->len; k++)
      g_ptr_array_add(all, g_strdup(g_ptr_array_index(fixed, k)));
    for (guint k = 0; k < own->len; k++)
      g_ptr_array_add(all, g_strdup(g_ptr_array_index(own, k)));
    g_ptr_array_add(all, NULL);
    sw->point_values[i] = vals;
    sw->point_sets[i] = (char **)g_ptr_array_free(all, FALSE);
  }
#undef BAD
  return g_steal_pointer(&sw);
}

/* "col=value, col=value" for messages. */
static char *point_desc(GPtrArray *dims, const guint *level) {
  GString *s = g_string_new(NULL);
  for (guint d = 0; d < dims->len; d++) {
    Dim *dim = g_ptr_array_index(dims, d);
    g_autofree char *t = value_text(g_ptr_array_index(dim->values, level[d]));
    g_string_append_printf(s, "%s%s=%s", d ? ", " : "", dim->column, t);
  }
  return g_string_free(s, FALSE);
}

static void dim_free(gpointer p) {
  dim_clear(p);
  g_free(p);
}

/* Copies every message of `from` into `to` under `path`, prefixed by `what`. */
static void diag_copy(SimDiag *to, const SimDiag *from, const char *path, const char *what) {
  for (guint i = 0; i < sim_diag_count(from); i++)
    sim_diag_add(to, path, "%s%s", what ? what : "", sim_diag_get(from, i));
}

/* Why `path` could not be read, in the words of g_file_get_contents(), which this reader used (a missing file:
 * the system's words alone). */
static char *glib_words(const char *path, const GError *e, const SimInputProblem *pb) {
  if (e->code == SIM_INPUT_ERROR_OPEN && pb->err_no == ENOENT) return g_strdup(g_strerror(ENOENT));
  if (e->code == SIM_INPUT_ERROR_OPEN) return g_strdup_printf("Failed to open file \u201c%s\u201d: %s", path, g_strerror(pb->err_no));
  if (e->code == SIM_INPUT_ERROR_READ) return g_strdup_printf("Error reading file \u201c%s\u201d: %s", path, g_strerror(pb->err_no));
  return g_strdup(e->message);
}

SimSweep *sim_sweep_load_file(const char *path, SimDiag *diag) {
  g_return_val_if_fail(path != NULL && diag != NULL, NULL);
  gsize len = 0;
  SimInputProblem pb;
  g_autoptr(GError) ge = NULL;
  g_autofree char *data = sim_input_read_file(path, 0, &len, &pb, &ge);
  if (!data) {
    if (ge->code == SIM_INPUT_ERROR_NOT_REGULAR) {
      sim_diag_add_raw(diag, "%s", ge->message);
    } else {
      g_autofree char *why = glib_words(path, ge, &pb);
      sim_diag_add_raw(diag, "cannot open: %s", why);
    }
    return NULL;
  }
  g_autoptr(json_t) doc = sim_json_parse(data, len, SIM_JSON_BLANK_AS_SYNTAX, &pb, &ge);
  if (!doc) {
    sim_diag_add_input_error(diag, ge, &pb);
    return NULL;
  }
  if (!json_is_object(doc)) {
    sim_diag_add(diag, "$", "must be an object");
    return NULL;
  }
  guint before = sim_diag_count(diag);
  if (!json_object_get(doc, "name")) {
    g_autofree char *bn = g_path_get_basename(path);
    char *dot = strrchr(bn, '.');
    if (dot && dot != bn) *dot = '\0';
    json_object_set_new(doc, "name", json_string(bn));
  }
  SweepTop top = {0};
  sim_params_parse(sweep_params, G_N_ELEMENTS(sweep_params), doc, "$", sweep_extra, &top, diag);
  g_autofree char *name = g_steal_pointer(&top.name);
  g_autofree char *base = g_steal_pointer(&top.base);
  /* The name becomes a directory name (results/<name>/). */
  gboolean name_ok = name && *name && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
  for (const char *q = name; name_ok && *q; q++)
    name_ok = g_ascii_isalnum(*q) || strchr("._-", *q);
  if (name && !name_ok)
    sim_diag_add(diag, "$.name", "must be made of letters, digits, '.', '_' and '-' (got \"%s\")", name);
  json_t *c = json_object_get(doc, "comment");
  if (c && !json_is_string(c)) {
    gboolean ok = json_is_array(c);
    size_t i;
    json_t *v;
    if (ok) json_array_foreach(c, i, v) ok = ok && json_is_string(v);
    if (!ok) sim_diag_add(diag, "$.comment", "must be a string or an array of strings");
  }
  g_autoptr(GPtrArray) fixed = g_ptr_array_new_with_free_func(g_free);
  json_t *sets = json_object_get(doc, "sets");
  if (sets && !json_is_array(sets))
    sim_diag_add(diag, "$.sets", "must be an array of \"PATH=VALUE\" strings");
  if (json_is_array(sets)) {
    size_t i;
    json_t *v;
    json_array_foreach(sets, i, v) {
      g_autofree char *ip = g_strdup_printf("$.sets[%zu]", i);
      if (!json_is_string(v) || !strchr(json_string_value(v), '='))
        sim_diag_add(diag, ip, "must be a string PATH=VALUE");
      else
        g_ptr_array_add(fixed, g_strdup(json_string_value(v)));
    }
  }
  json_t *metrics = json_object_get(doc, "metrics");
  if (metrics) {
    gboolean ok = json_is_array(metrics) && json_array_size(metrics) > 0;
    size_t i;
    json_t *v;
    if (ok) json_array_foreach(metrics, i, v) ok = ok && json_is_string(v) && *json_string_value(v);
    if (!ok)
      sim_diag_add(diag, "$.metrics",
                   "must be a non-empty array of summary keys such as \"chain.uncle_rate\"");
  }
  json_t *params = json_object_get(doc, "parameters");
  if (params && !json_is_array(params)) sim_diag_add(diag, "$.parameters", "must be an array");
  if (sim_diag_count(diag) != before || !base) return NULL;

  /* The base scenario, first as it is, then with the fixed sets, so each problem is blamed on its key. */
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base_file =
      g_path_is_absolute(base) || strcmp(dir, ".") == 0 ? g_strdup(base) : g_build_filename(dir, base, NULL);
  gsize base_len = 0;
  g_clear_error(&ge);
  g_autofree char *base_data = sim_input_read_file(base_file, 0, &base_len, &pb, &ge);
  if (!base_data) {
    if (ge->code == SIM_INPUT_ERROR_NOT_REGULAR) {
      sim_diag_add(diag, "$.base", "%s: %s", base_file, ge->message);
    } else {
      g_autofree char *why = glib_words(base_file, ge, &pb);
      sim_diag_add(diag, "$.base", "cannot open %s: %s", base_file, why);
    }
    return NULL;
  }
  {
    g_autoptr(SimDiag) bd = sim_diag_new(base_file);
    g_autoptr(SimScenario) plain = sim_scenario_load_data(base_data, base_len, base_file, NULL, bd);
    if (!plain) {
      diag_copy(diag, bd, "$.base", NULL);
      return NULL;
    }
  }
  g_ptr_array_add(fixed, NULL);
  g_autoptr(SimDiag) bd = sim_diag_new(base_file);
  g_autoptr(SimScenario) bsc =
      sim_scenario_load_data(base_data, base_len, base_file, (const char *const *)fixed->pdata, bd);
  g_ptr_array_remove_index(fixed, fixed->len - 1);
  if (!bsc) {
    diag_copy(diag, bd, "$.sets", NULL);
    return NULL;
  }

  /* The dimensions. */
  g_autoptr(GPtrArray) dims = g_ptr_array_new_with_free_func(dim_free);
  BasePools bp = {0};
  base_pools_init(&bp, json_object_get(bsc->doc, "pools"));
  int generator_at = -1;
  size_t i;
  json_t *po;
  json_array_foreach(params, i, po) {
    g_autofree char *pp = g_strdup_printf("$.parameters[%zu]", i);
    if (!json_is_object(po)) {
      sim_diag_add(diag, pp,
                   "must be an object: {\"path\", \"values\" or \"range\"} or {\"generator\", ...}");
      continue;
    }
    Dim *dim = g_new0(Dim, 1);
    gboolean ok;
    if (json_object_get(po, "generator")) {
      if (generator_at >= 0) {
        sim_diag_add(diag, pp, "only one generator per sweep (another is at $.parameters[%d])", generator_at);
        g_free(dim);
        continue;
      }
      generator_at = (int)i;
      ok = gen_parse(po, pp, &bp, dim, diag);
    } else if (json_object_get(po, "path")) {
      ok = path_param_parse(po, pp, bsc->doc, base_file, dim, diag);
    } else {
      sim_diag_add(diag, pp, "needs \"path\" (with \"values\" or \"range\") or \"generator\"");
      ok = FALSE;
    }
    if (!ok) {
      dim_free(dim);
      continue;
    }
    for (guint d = 0; d < dims->len; d++)
      if (strcmp(((Dim *)g_ptr_array_index(dims, d))->column, dim->column) == 0)
        sim_diag_add(diag, pp, "sweeps %s again (also $.parameters[%u])", dim->column, d);
    g_ptr_array_add(dims, dim);
  }
  base_pools_clear(&bp);
  if (sim_diag_count(diag) != before) return NULL;

  guint64 n_points = 1;
  for (guint d = 0; d < dims->len; d++) {
    n_points *= ((Dim *)g_ptr_array_index(dims, d))->values->len;
    if (n_points * (guint64)top.replicates > SWEEP_MAX_RUNS) {
      sim_diag_add(diag, "$.parameters", "more than %u runs (points × replicates)", SWEEP_MAX_RUNS);
      return NULL;
    }
  }

  /* Expand (last dimension fastest) and load every point's scenario to check it. */
  json_t *jpoints = json_array();
  g_autofree guint *level = g_new0(guint, dims->len + 1);
  for (guint64 p = 0; p < n_points; p++) {
    guint64 rem = p;
    for (guint d = dims->len; d-- > 0;) {
      guint nl = ((Dim *)g_ptr_array_index(dims, d))->values->len;
      level[d] = (guint)(rem % nl);
      rem /= nl;
    }
    json_t *vals = json_array(), *own = json_array();
    g_autoptr(GPtrArray) all = g_ptr_array_new();
    for (guint k = 0; k < fixed->len; k++)
      g_ptr_array_add(all, g_ptr_array_index(fixed, k));
    for (guint d = 0; d < dims->len; d++) {
      Dim *dim = g_ptr_array_index(dims, d);
      json_array_append(vals, g_ptr_array_index(dim->values, level[d]));
      GPtrArray *ls = g_ptr_array_index(dim->sets, level[d]);
      for (guint k = 0; k < ls->len; k++) {
        json_array_append_new(own, json_string(g_ptr_array_index(ls, k)));
        g_ptr_array_add(all, g_ptr_array_index(ls, k));
      }
    }
    g_ptr_array_add(all, NULL);
    g_autoptr(SimDiag) pd = sim_diag_new(base_file);
    g_autoptr(SimScenario) psc =
        sim_scenario_load_data(base_data, base_len, base_file, (const char *const *)all->pdata, pd);
    if (!psc) {
      g_autofree char *desc = point_desc(dims, level);
      g_autofree char *what = g_strdup_printf("point %" G_GUINT64_FORMAT " (%s): ", p, desc);
      diag_copy(diag, pd, "$.parameters", what);
    }
    json_array_append_new(jpoints, json_pack("{s:o, s:o}", "values", vals, "sets", own));
  }
  if (sim_diag_count(diag) != before) {
    json_decref(jpoints);
    return NULL;
  }

  json_t *columns = json_array();
  for (guint d = 0; d < dims->len; d++)
    json_array_append_new(columns, json_string(((Dim *)g_ptr_array_index(dims, d))->column));
  g_autoptr(json_t) manifest =
      json_pack("{s:s, s:s, s:O, s:s, s:I, s:O, s:o, s:o}", "tool", "sim sweep", "sweep_file", path, "sweep",
                doc, "base_file", base_file, "base_seed", (json_int_t)bsc->seed, "base_scenario", bsc->doc,
                "columns", columns, "points", jpoints);
  g_autoptr(GError) me = NULL;
  SimSweep *sw = sim_sweep_from_manifest(manifest, path, &me);
  if (!sw) sim_diag_add_raw(diag, "%s", me->message); /* cannot happen: the manifest was just built */
  return sw;
}

const char *sim_sweep_name(const SimSweep *sw) {
  return sw->name;
}
const char *sim_sweep_base_file(const SimSweep *sw) {
  return sw->base_file;
}
uint64_t sim_sweep_base_seed(const SimSweep *sw) {
  return sw->base_seed;
}
guint sim_sweep_n_points(const SimSweep *sw) {
  return sw->n_points;
}
guint sim_sweep_n_replicates(const SimSweep *sw) {
  return sw->replicates;
}
guint sim_sweep_n_runs(const SimSweep *sw) {
  return sw->n_points * sw->replicates;
}
guint sim_sweep_n_columns(const SimSweep *sw) {
  return sw->columns->len;
}
const json_t *sim_sweep_manifest(const SimSweep *sw) {
  return sw->manifest;
}

const char *sim_sweep_column(const SimSweep *sw, guint i) {
  g_return_val_if_fail(i < sw->columns->len, NULL);
  return g_ptr_array_index(sw->columns, i);
}

const json_t *sim_sweep_point_values(const SimSweep *sw, guint point) {
  g_return_val_if_fail(point < sw->n_points, NULL);
  return sw->point_values[point];
}

const char *const *sim_sweep_point_sets(const SimSweep *sw, guint point) {
  g_return_val_if_fail(point < sw->n_points, NULL);
  return (const char *const *)sw->point_sets[point];
}

uint64_t sim_sweep_run_seed(const SimSweep *sw, guint point, guint replicate) {
  return sim_sweep_seed(sw->base_seed, point, replicate);
}

char *sim_sweep_run_name(guint point, guint replicate) {
  return g_strdup_printf("p%u-r%u", point, replicate);
}

gboolean sim_sweep_manifest_same_study(const json_t *a, const json_t *b) {
  static const char *const same[] = {"base_seed", "base_scenario", "columns", "points"};
  for (guint i = 0; i < G_N_ELEMENTS(same); i++) {
    const json_t *x = json_object_get(a, same[i]), *y = json_object_get(b, same[i]);
    if (!x || !y || !json_equal((json_t *)x, (json_t *)y)) return FALSE;
  }
  /* The sweep itself, less what changes no run. */
  g_autoptr(json_t) sa = json_deep_copy(json_object_get(a, "sweep"));
  g_autoptr(json_t) sb = json_deep_copy(json_object_get(b, "sweep"));
  if (!json_is_object(sa) || !json_is_object(sb)) return FALSE;
  static const char *const free_keys[] = {"name", "comment", "replicates", "metrics", "base"};
  for (guint i = 0; i < G_N_ELEMENTS(free_keys); i++) {
    json_object_del(sa, free_keys[i]);
    json_object_del(sb, free_keys[i]);
  }
  return json_equal(sa, sb);
}

/* ---- The table ---- */

struct SimSweepTable {
  const SimSweep *sw;
  GPtrArray *keys;       /* char *, order of first appearance */
  GHashTable *key_index; /* key -> index + 1 */
  GPtrArray **cells;     /* per point: per key index, GArray of double (or NULL) */
  guint *runs;           /* per point */
};

SimSweepTable *sim_sweep_table_new(const SimSweep *sw) {
  g_return_val_if_fail(sw != NULL, NULL);
  SimSweepTable *t = g_new0(SimSweepTable, 1);
  t->sw = sw;
  t->keys = g_ptr_array_new_with_free_func(g_free);
  t->key_index = g_hash_table_new(g_str_hash, g_str_equal);
  t->cells = g_new0(GPtrArray *, sw->n_points);
  for (guint p = 0; p < sw->n_points; p++)
    t->cells[p] = g_ptr_array_new_with_free_func(array_free0);
  t->runs = g_new0(guint, sw->n_points);
  return t;
}

void sim_sweep_table_free(SimSweepTable *t) {
  if (!t) return;
  for (guint p = 0; p < t->sw->n_points; p++)
    g_ptr_array_unref(t->cells[p]);
  g_free(t->cells);
  g_free(t->runs);
  g_hash_table_unref(t->key_index);
  g_ptr_array_unref(t->keys);
  g_free(t);
}

/* Whether `key` is selected by the metrics entry `m`: equal, or m is a prefix ending at '.' or '['. */
static gboolean metric_matches(const char *m, const char *key) {
  gsize n = strlen(m);
  return strncmp(m, key, n) == 0 && (key[n] == '\0' || key[n] == '.' || key[n] == '[');
}

static gboolean selected(const SimSweepTable *t, const char *key) {
  if (!t->sw->metrics) return TRUE;
  for (char **m = t->sw->metrics; *m; m++)
    if (metric_matches(*m, key)) return TRUE;
  return FALSE;
}

void sim_sweep_table_add(SimSweepTable *t, guint point, const json_t *summary) {
  g_return_if_fail(t != NULL && point < t->sw->n_points);
  g_autoptr(GArray) flat = sim_summary_flatten(summary);
  GPtrArray *row = t->cells[point];
  for (guint i = 0; i < flat->len; i++) {
    const SimFlatValue *f = &g_array_index(flat, SimFlatValue, i);
    if (!selected(t, f->key)) continue;
    guint k = GPOINTER_TO_UINT(g_hash_table_lookup(t->key_index, f->key));
    if (!k) {
      char *key = g_strdup(f->key);
      g_ptr_array_add(t->keys, key);
      k = t->keys->len;
      g_hash_table_insert(t->key_index, key, GUINT_TO_POINTER(k));
    }
    if (row->len < k) g_ptr_array_set_size(row, (gint)k);
    GArray *vals = g_ptr_array_index(row, k - 1);
    if (!vals) {
      vals = g_array_new(FALSE, FALSE, sizeof(double));
      g_ptr_array_index(row, k - 1) = vals;
    }
    g_array_append_val(vals, f->value);
  }
  t->runs[point]++;
}

gboolean sim_sweep_table_collect(SimSweepTable *t, const char *const *dirs, guint n_dirs, guint *n_runs,
                                 GError **error) {
  *n_runs = 0;
  for (guint p = 0; p < t->sw->n_points; p++)
    for (guint r = 0; r < t->sw->replicates; r++) {
      g_autofree char *name = sim_sweep_run_name(p, r);
      for (guint d = 0; d < n_dirs; d++) {
        g_autofree char *file = g_build_filename(dirs[d], "runs", name, "summary.json", NULL);
        if (!g_file_test(file, G_FILE_TEST_IS_REGULAR)) continue; /* as resume: not a complete run */
        g_autoptr(GError) ie = NULL;
        g_autoptr(json_t) s = sim_json_load_file(file, 0, SIM_JSON_BLANK_AS_SYNTAX, NULL, &ie);
        if (!s) {
          g_autofree char *why = sim_input_error_text(file, ie);
          g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "cannot read %s", why);
          return FALSE;
        }
        sim_sweep_table_add(t, p, s);
        (*n_runs)++;
        break;
      }
    }
  return TRUE;
}

guint sim_sweep_table_point_runs(const SimSweepTable *t, guint point) {
  g_return_val_if_fail(point < t->sw->n_points, 0);
  return t->runs[point];
}

/* The metric columns in output order: the sweep's "metrics" order (then first appearance), or first
 * appearance. Indices into t->keys. */
static GArray *key_order(const SimSweepTable *t) {
  GArray *order = g_array_new(FALSE, FALSE, sizeof(guint));
  if (!t->sw->metrics) {
    for (guint k = 0; k < t->keys->len; k++)
      g_array_append_val(order, k);
    return order;
  }
  g_autofree gboolean *used = g_new0(gboolean, t->keys->len + 1);
  for (char **m = t->sw->metrics; *m; m++)
    for (guint k = 0; k < t->keys->len; k++)
      if (!used[k] && metric_matches(*m, g_ptr_array_index(t->keys, k))) {
        used[k] = TRUE;
        g_array_append_val(order, k);
      }
  return order;
}

char **sim_sweep_table_unmatched_metrics(const SimSweepTable *t) {
  GPtrArray *out = g_ptr_array_new();
  for (char **m = t->sw->metrics; m && *m; m++) {
    gboolean any = FALSE;
    for (guint k = 0; k < t->keys->len && !any; k++)
      any = metric_matches(*m, g_ptr_array_index(t->keys, k));
    if (!any) g_ptr_array_add(out, g_strdup(*m));
  }
  g_ptr_array_add(out, NULL);
  return (char **)g_ptr_array_free(out, FALSE);
}

static const GArray *cell(const SimSweepTable *t, guint point, guint k) {
  GPtrArray *row = t->cells[point];
  return k < row->len ? g_ptr_array_index(row, k) : NULL;
}

static void cell_stats(const SimSweepTable *t, guint point, guint k, gsize *n, double st[3]) {
  const GArray *v = cell(t, point, k);
  *n = v ? v->len : 0;
  sim_sweep_stats(v ? (const double *)v->data : NULL, *n, &st[0], &st[1], &st[2]);
}

static void put_num(FILE *out, double x) {
  fputc(',', out);
  if (isnan(x)) return;
  g_autofree char *s = fmt_num(x);
  fputs(s, out);
}

gboolean sim_sweep_table_write_csv(const SimSweepTable *t, FILE *out) {
  static const char *const stat_names[] = {"mean", "sd", "ci95"};
  g_autoptr(GArray) order = key_order(t);
  fputs("point", out);
  for (guint c = 0; c < t->sw->columns->len; c++) {
    fputc(',', out);
    an_csv_put_field(out, g_ptr_array_index(t->sw->columns, c));
  }
  fputs(",replicates", out);
  for (guint i = 0; i < order->len; i++)
    for (guint s = 0; s < 3; s++) {
      g_autofree char *h = g_strdup_printf(
          "%s:%s", (char *)g_ptr_array_index(t->keys, g_array_index(order, guint, i)), stat_names[s]);
      fputc(',', out);
      an_csv_put_field(out, h);
    }
  fputc('\n', out);
  for (guint p = 0; p < t->sw->n_points; p++) {
    fprintf(out, "%u", p);
    for (guint c = 0; c < t->sw->columns->len; c++) {
      g_autofree char *v = value_text(json_array_get(t->sw->point_values[p], c));
      fputc(',', out);
      an_csv_put_field(out, v);
    }
    fprintf(out, ",%u", t->runs[p]);
    for (guint i = 0; i < order->len; i++) {
      gsize n;
      double st[3];
      cell_stats(t, p, g_array_index(order, guint, i), &n, st);
      for (guint s = 0; s < 3; s++)
        put_num(out, st[s]);
    }
    fputc('\n', out);
  }
  return !ferror(out);
}

static json_t *num_or_null(double x) {
  return isnan(x) ? json_null() : json_real(x);
}

json_t *sim_sweep_table_to_json(const SimSweepTable *t) {
  g_autoptr(GArray) order = key_order(t);
  json_t *cols = json_array(), *keys = json_array(), *rows = json_array();
  for (guint c = 0; c < t->sw->columns->len; c++)
    json_array_append_new(cols, json_string(g_ptr_array_index(t->sw->columns, c)));
  for (guint i = 0; i < order->len; i++)
    json_array_append_new(keys, json_string(g_ptr_array_index(t->keys, g_array_index(order, guint, i))));
  for (guint p = 0; p < t->sw->n_points; p++) {
    json_t *params = json_object(), *metrics = json_object();
    for (guint c = 0; c < t->sw->columns->len; c++)
      json_object_set(params, g_ptr_array_index(t->sw->columns, c),
                      json_array_get(t->sw->point_values[p], c));
    for (guint i = 0; i < order->len; i++) {
      guint k = g_array_index(order, guint, i);
      gsize n;
      double st[3];
      cell_stats(t, p, k, &n, st);
      if (n == 0) continue;
      json_object_set_new(metrics, g_ptr_array_index(t->keys, k),
                          json_pack("{s:I, s:o, s:o, s:o}", "n", (json_int_t)n, "mean", num_or_null(st[0]),
                                    "sd", num_or_null(st[1]), "ci95", num_or_null(st[2])));
    }
    json_array_append_new(rows, json_pack("{s:I, s:o, s:I, s:o}", "point", (json_int_t)p, "parameters",
                                          params, "replicates", (json_int_t)t->runs[p], "metrics", metrics));
  }
  return json_pack("{s:s, s:I, s:o, s:o, s:o}", "sweep", t->sw->name, "replicates",
                   (json_int_t)t->sw->replicates, "columns", cols, "metrics", keys, "rows", rows);
}

gboolean sim_sweep_table_write(const SimSweepTable *t, const char *dir, GError **error) {
  /* Both files are complete before either replaces its old one; they are then renamed one after the other. */
  g_autofree char *csv_path = g_build_filename(dir, "table.csv", NULL);
  g_autofree char *json_path = g_build_filename(dir, "table.json", NULL);
  g_autoptr(SimOutFile) csv = sim_outfile_open(csv_path, error);
  if (!csv) return FALSE;
  if (!sim_sweep_table_write_csv(t, sim_outfile_stream(csv))) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s", csv_path);
    return FALSE;
  }
  g_autoptr(SimOutFile) js = sim_outfile_open(json_path, error);
  if (!js) return FALSE;
  g_autoptr(json_t) doc = sim_sweep_table_to_json(t);
  if (!sim_output_dump_json(sim_outfile_stream(js), doc)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s", json_path);
    return FALSE;
  }
  return sim_outfile_commit(csv, error) && sim_outfile_commit(js, error);
}
