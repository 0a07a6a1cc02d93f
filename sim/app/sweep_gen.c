/* sweep_gen.c: the pool-share generators of a sweep file (zipf, hhi, nakamoto, scale_top, merge_top2,
 * split): each turns its settings into one swept dimension whose levels set the base scenario's pools. */
#include "sweep-private.h"

#include <stdlib.h>
#include <string.h>


static gint cmp_rank(gconstpointer a, gconstpointer b, gpointer user) {
  const double *share = user;
  guint i = *(const guint *)a, j = *(const guint *)b;
  if (share[i] != share[j]) return share[i] > share[j] ? -1 : 1;
  return (i > j) - (i < j);
}

void sim_sweep_base_pools_init(SweepBasePools *bp, json_t *pools) {
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

void sim_sweep_base_pools_clear(SweepBasePools *bp) {
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
    g_autofree char *v = sim_sweep_fmt_num(share[i]);
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
static void level_zipf(GPtrArray *sets, const SweepBasePools *bp, double s, guint n) {
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
static gboolean gen_n(json_t *o, const char *path, const SweepBasePools *bp, guint min_n, guint *n,
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

/* Zipf shares with exponents "s" over "n" pools (default: the base's). */
static gboolean gen_zipf(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim, SimDiag *diag,
                         guint before) {
  static const char *const keys[] = {"generator", "n", "s", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
  guint n = 0;
  gboolean ok_n = gen_n(o, path, bp, 1, &n, diag);
  g_autoptr(GArray) s = sim_sweep_num_list(o, "s", path, 0, 100, FALSE, FALSE, FALSE, diag);
  if (!ok_n || !s || sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "zipf.s");
  for (guint i = 0; i < s->len; i++) {
    double e = g_array_index(s, double, i);
    level_zipf(sim_sweep_dim_add(dim, json_real(e)), bp, e, n);
  }
  return TRUE;
}

/* Zipf shares whose HHI is each of "targets", over "n" pools. */
static gboolean gen_hhi(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim, SimDiag *diag,
                        guint before) {
  static const char *const keys[] = {"generator", "n", "targets", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
  guint n = 0;
  if (!gen_n(o, path, bp, 2, &n, diag)) return FALSE;
  /* From equal shares (1/n) up to, not including, one pool with everything. */
  g_autoptr(GArray) t = sim_sweep_num_list(o, "targets", path, 1.0 / n, 1, FALSE, TRUE, FALSE, diag);
  if (!t || sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "hhi.target");
  for (guint i = 0; i < t->len; i++) {
    double target = g_array_index(t, double, i);
    level_zipf(sim_sweep_dim_add(dim, json_real(target)), bp, sim_shares_zipf_for_hhi(target, n), n);
  }
  return TRUE;
}

/* Zipf shares whose Nakamoto coefficient is each of "targets", over "n" pools. */
static gboolean gen_nakamoto(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                             SimDiag *diag, guint before) {
  static const char *const keys[] = {"generator", "n", "targets", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
  guint n = 0;
  if (!gen_n(o, path, bp, 1, &n, diag)) return FALSE;
  g_autoptr(GArray) t = sim_sweep_num_list(o, "targets", path, 1, n / 2 + 1, FALSE, FALSE, TRUE, diag);
  if (!t || sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "nakamoto.target");
  for (guint i = 0; i < t->len; i++) {
    guint c = (guint)g_array_index(t, double, i);
    level_zipf(sim_sweep_dim_add(dim, json_integer(c)), bp, sim_shares_zipf_for_nakamoto(c, n), n);
  }
  return TRUE;
}

/* The top "k" pools' shares times each of "factors", the others scaled to make up the rest. */
static gboolean gen_scale_top(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                              SimDiag *diag, guint before) {
  static const char *const keys[] = {"generator", "k", "factors", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
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
  g_autoptr(GArray) f = sim_sweep_num_list(o, "factors", path, 0, 1e6, TRUE, FALSE, FALSE, diag);
  if (!f || sim_diag_count(diag) != before) return FALSE;
  double top = 0;
  for (guint r = 0; r < k; r++)
    top += bp->share[bp->rank[r]];
  for (guint i = 0; i < f->len; i++) {
    double x = g_array_index(f, double, i);
    if (x * top >= 1) {
      g_autofree char *p = g_strdup_printf("%s.factors[%u]", path, i);
      sim_diag_add(diag, p, "the top %u pool%s would hold %g × %g = %g of the hash rate (must stay below 1)",
                   k, k == 1 ? "" : "s", x, top, x * top);
    }
  }
  if (sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "scale_top.factor");
  for (guint i = 0; i < f->len; i++) {
    double x = g_array_index(f, double, i);
    g_autofree double *share = g_memdup2(bp->share, bp->n * sizeof *share);
    double rest = (1 - x * top) / (1 - top);
    for (guint r = 0; r < bp->n; r++)
      share[bp->rank[r]] *= r < k ? x : rest;
    level_shares(sim_sweep_dim_add(dim, json_real(x)), share, bp->n);
  }
  return TRUE;
}

/* The two largest pools merged into one (level 1), and the base as it is (level 0) unless "include_base" is
 * false. */
static gboolean gen_merge_top2(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                               SimDiag *diag, guint before) {
  static const char *const keys[] = {"generator", "include_base", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
  json_t *ib = json_object_get(o, "include_base");
  if (ib && !json_is_boolean(ib)) {
    g_autofree char *p = sim_json_child_path(path, "include_base");
    sim_diag_add(diag, p, "must be a boolean");
  }
  if (bp->n < 2) sim_diag_add(diag, path, "the base scenario has 1 pool; merge_top2 needs at least 2");
  if (sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "merge_top2");
  if (!ib || json_is_true(ib)) sim_sweep_dim_add(dim, json_integer(0));
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
  level_pools(sim_sweep_dim_add(dim, json_integer(1)), pools);
  return TRUE;
}

/* The pool "pool" split into each of "k" equal parts. */
static gboolean gen_split(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim, SimDiag *diag,
                          guint before) {
  static const char *const keys[] = {"generator", "pool", "k", "comment", NULL};
  sim_sweep_check_keys(o, path, keys, diag);
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
  g_autoptr(GArray) k = sim_sweep_num_list(o, "k", path, 1, 1000, FALSE, FALSE, TRUE, diag);
  if (!k || sim_diag_count(diag) != before) return FALSE;
  sim_sweep_dim_init(dim, "split.k");
  for (guint l = 0; l < k->len; l++) {
    guint parts = (guint)g_array_index(k, double, l);
    GPtrArray *sets = sim_sweep_dim_add(dim, json_integer(parts));
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

typedef gboolean (*GenParseFn)(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                               SimDiag *diag, guint before);

static const struct {
  const char *name;
  GenParseFn parse;
} generators[] = {
    {"zipf", gen_zipf},
    {"hhi", gen_hhi},
    {"nakamoto", gen_nakamoto},
    {"scale_top", gen_scale_top},
    {"merge_top2", gen_merge_top2},
    {"split", gen_split},
};

gboolean sim_sweep_gen_parse(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                             SimDiag *diag) {
  const char *g = json_string_value(json_object_get(o, "generator"));
  guint before = sim_diag_count(diag);
  for (guint i = 0; g && i < G_N_ELEMENTS(generators); i++)
    if (strcmp(g, generators[i].name) == 0) return generators[i].parse(o, path, bp, dim, diag, before);
  g_autofree char *gp = sim_json_child_path(path, "generator");
  sim_diag_add(diag, gp, "must be one of: zipf, hhi, nakamoto, scale_top, merge_top2, split");
  return FALSE;
}
