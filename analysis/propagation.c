/* propagation.c: block propagation metrics (delays after first observation, first observers) and the
 * study's per-block observations table. */
#include "propagation.h"

#include <gsl/gsl_statistics_double.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* clang-format off */
G_DEFINE_QUARK(an-prop-error-quark, an_prop_error)
/* clang-format on */

#define HEX "0x%016" PRIx64
#define NO_GROUP G_MAXUINT
#define N_TYPES 3 /* AnBlockType values */

/* The merged sightings of one block: t[v] the earliest block message of vantage v, t[n + v] its earliest
 * announcement. */
typedef struct {
  uint64_t id;            /* the hash table's key points here */
  uint32_t first_vantage; /* of the first sighting added, to name it in an error */
  int64_t t[];
} Entry;

struct AnProp {
  char **names;
  guint n;
  GHashTable *index;  /* const uint64_t *id -> Entry * (lookups only: never iterated) */
  GPtrArray *entries; /* Entry *, in the order first sighted; owns them */
  gboolean finalized;
  const AnChain *chain;
  GPtrArray *rows; /* const Entry *, window blocks seen by someone, chain insertion order */
  /* Results; the GArrays of double are sorted. */
  GArray *delay_excl, *delay_incl, **delay_by_vantage, *delay_by_type[N_TYPES];
  uint64_t seen_by_all;
  uint64_t *first_count; /* [v] */
  guint n_groups;
  uint64_t *group_seen_by_all; /* [g] */
  uint64_t *group_first_count; /* [g * n + v] */
  uint64_t *observed;          /* [v] window blocks it saw */
  uint64_t *block_msg_first;   /* [v] of those, seen by block message no later than by announcement */
};

static GArray *doubles_new(void) {
  return g_array_new(FALSE, FALSE, sizeof(double));
}

AnProp *an_prop_new(const char *const *vantage_names, guint n_vantages) {
  char **names = an_vantage_names_dup(vantage_names, n_vantages);
  if (!names) return NULL;
  AnProp *p = g_new0(AnProp, 1);
  p->n = n_vantages;
  p->names = names;
  p->index = g_hash_table_new(an_id_hash, g_int64_equal);
  p->entries = g_ptr_array_new_with_free_func(g_free);
  p->rows = g_ptr_array_new();
  p->delay_excl = doubles_new();
  p->delay_incl = doubles_new();
  p->delay_by_vantage = g_new(GArray *, n_vantages);
  for (guint v = 0; v < n_vantages; v++)
    p->delay_by_vantage[v] = doubles_new();
  for (guint t = 0; t < N_TYPES; t++)
    p->delay_by_type[t] = doubles_new();
  p->first_count = g_new0(uint64_t, n_vantages);
  p->observed = g_new0(uint64_t, n_vantages);
  p->block_msg_first = g_new0(uint64_t, n_vantages);
  return p;
}

void an_prop_free(AnProp *p) {
  if (!p) return;
  g_strfreev(p->names);
  g_hash_table_unref(p->index);
  g_ptr_array_unref(p->entries);
  g_ptr_array_unref(p->rows);
  g_array_unref(p->delay_excl);
  g_array_unref(p->delay_incl);
  for (guint v = 0; v < p->n; v++)
    g_array_unref(p->delay_by_vantage[v]);
  g_free(p->delay_by_vantage);
  for (guint t = 0; t < N_TYPES; t++)
    g_array_unref(p->delay_by_type[t]);
  g_free(p->first_count);
  g_free(p->group_seen_by_all);
  g_free(p->group_first_count);
  g_free(p->observed);
  g_free(p->block_msg_first);
  g_free(p);
}

gboolean an_prop_add(AnProp *p, const ObsSighting *s, GError **error) {
  g_return_val_if_fail(p != NULL && s != NULL, FALSE);
  g_return_val_if_fail(!p->finalized, FALSE);
  if (s->vantage >= p->n) {
    g_set_error(error, AN_PROP_ERROR, AN_PROP_ERROR_INVALID_SIGHTING,
                "sighting of block " HEX ": vantage %" PRIu32 " out of range (%u vantages)", s->block,
                s->vantage, p->n);
    return FALSE;
  }
  if (s->block == OBS_GENESIS_ID) {
    g_set_error(error, AN_PROP_ERROR, AN_PROP_ERROR_INVALID_SIGHTING,
                "sighting of the genesis block by vantage %s", p->names[s->vantage]);
    return FALSE;
  }
  Entry *e = g_hash_table_lookup(p->index, &s->block);
  if (!e) {
    e = g_malloc(sizeof *e + 2 * (gsize)p->n * sizeof e->t[0]);
    e->id = s->block;
    e->first_vantage = s->vantage;
    for (guint i = 0; i < 2 * p->n; i++)
      e->t[i] = OBS_TIME_NONE;
    g_ptr_array_add(p->entries, e);
    g_hash_table_insert(p->index, &e->id, e);
  }
  /* OBS_TIME_NONE is the largest time, so "keep the earliest" also keeps a real time over a missing one. */
  e->t[s->vantage] = MIN(e->t[s->vantage], s->block_msg_ns);
  e->t[p->n + s->vantage] = MIN(e->t[p->n + s->vantage], s->announce_ns);
  return TRUE;
}

static int64_t obs_time(const AnProp *p, const Entry *e, guint v) {
  return MIN(e->t[v], e->t[p->n + v]);
}

/* The first observer (ties: the lower index) and the number of vantages that saw the block. */
static guint first_observer(const AnProp *p, const Entry *e, guint *first) {
  guint seen = 0;
  *first = G_MAXUINT;
  for (guint v = 0; v < p->n; v++) {
    int64_t t = obs_time(p, e, v);
    if (t == OBS_TIME_NONE) continue;
    seen++;
    if (*first == G_MAXUINT || t < obs_time(p, e, *first)) *first = v;
  }
  return seen;
}

static double delay_ms(int64_t t, int64_t t0) {
  return (double)(t - t0) / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void sort_doubles(GArray *a) {
  if (a->len) qsort(a->data, a->len, sizeof(double), cmp_double);
}

static guint group_of(const AnChain *chain, const ObsBlock *b) {
  return b->miner == OBS_MINER_NONE ? NO_GROUP : an_chain_miner_group(chain, b->miner);
}

/* Adds one block seen by every vantage to the delay and first-observer statistics. */
static void count_seen_by_all(AnProp *p, const Entry *e, guint first, AnBlockType type, guint group) {
  int64_t t0 = obs_time(p, e, first);
  p->seen_by_all++;
  p->first_count[first]++;
  if (group != NO_GROUP) {
    p->group_seen_by_all[group]++;
    p->group_first_count[(gsize)group * p->n + first]++;
  }
  for (guint v = 0; v < p->n; v++) {
    double d = delay_ms(obs_time(p, e, v), t0);
    g_array_append_val(p->delay_incl, d);
    g_array_append_val(p->delay_by_vantage[v], d);
    if (v == first) continue;
    g_array_append_val(p->delay_excl, d);
    g_array_append_val(p->delay_by_type[type], d);
  }
}

gboolean an_prop_finalize(AnProp *p, const AnChain *chain, GError **error) {
  g_return_val_if_fail(p != NULL && chain != NULL, FALSE);
  g_return_val_if_fail(!p->finalized, FALSE);
  g_return_val_if_fail(an_chain_summary(chain) != NULL, FALSE); /* the chain is finalized */

  for (guint i = 0; i < p->entries->len; i++) {
    const Entry *e = g_ptr_array_index(p->entries, i);
    if (!an_chain_block(chain, e->id)) {
      g_set_error(error, AN_PROP_ERROR, AN_PROP_ERROR_UNKNOWN_BLOCK,
                  "sighting of unknown block " HEX " by vantage %s", e->id, p->names[e->first_vantage]);
      return FALSE;
    }
  }

  p->chain = chain;
  p->n_groups = an_chain_n_pools(chain);
  p->group_seen_by_all = g_new0(uint64_t, p->n_groups ? p->n_groups : 1);
  p->group_first_count = g_new0(uint64_t, (gsize)(p->n_groups ? p->n_groups : 1) * p->n);
  /* Walk the chain, not the hash table, so every list comes out in the chain's insertion order. */
  guint n_blocks = an_chain_n_blocks(chain);
  for (guint i = 0; i < n_blocks; i++) {
    const ObsBlock *b = an_chain_block_at(chain, i);
    const Entry *e = g_hash_table_lookup(p->index, &b->id);
    if (!e || !an_chain_block_in_window(chain, b->id)) continue;
    guint first, seen = first_observer(p, e, &first);
    if (seen == 0) continue;
    g_ptr_array_add(p->rows, (gpointer)e);
    for (guint v = 0; v < p->n; v++) {
      if (obs_time(p, e, v) == OBS_TIME_NONE) continue;
      p->observed[v]++;
      if (e->t[v] != OBS_TIME_NONE && e->t[v] <= e->t[p->n + v]) p->block_msg_first[v]++;
    }
    if (seen < p->n) continue;
    AnBlockType type = AN_BLOCK_MAIN;
    an_chain_block_type(chain, b->id, &type);
    count_seen_by_all(p, e, first, type, group_of(chain, b));
  }

  sort_doubles(p->delay_excl);
  sort_doubles(p->delay_incl);
  for (guint v = 0; v < p->n; v++)
    sort_doubles(p->delay_by_vantage[v]);
  for (guint t = 0; t < N_TYPES; t++)
    sort_doubles(p->delay_by_type[t]);
  p->finalized = TRUE;
  return TRUE;
}

/* Statistics of a sorted, non-empty sample, by key. */
static double stat_of(const GArray *sorted, const char *key) {
  const double *x = (const double *)(const void *)sorted->data;
  if (strcmp(key, "mean") == 0) return gsl_stats_mean(x, 1, sorted->len);
  double f = strcmp(key, "median") == 0 ? 0.5
             : strcmp(key, "p90") == 0  ? 0.90
             : strcmp(key, "p95") == 0  ? 0.95
                                        : 0.99;
  g_assert(f == 0.5 || key[0] == 'p');
  return gsl_stats_quantile_from_sorted_data(x, 1, sorted->len, f);
}

static const char *const STATS_ALL[] = {"median", "mean", "p90", "p95", "p99", NULL};
static const char *const STATS_VANTAGE[] = {"median", "mean", "p90", NULL};
static const char *const STATS_TYPE[] = {"median", "p90", NULL};

/* Sets `key` of `parent` to the statistics `keys` of `sorted`, unless the sample is empty. */
static void set_stats(json_t *parent, const char *key, const GArray *sorted, const char *const *keys) {
  if (sorted->len == 0) return;
  json_t *o = json_object();
  for (const char *const *k = keys; *k; k++)
    json_object_set_new(o, *k, json_real(stat_of(sorted, *k)));
  json_object_set_new(parent, key, o);
}

void an_prop_add_json(const AnProp *p, json_t *summary) {
  g_return_if_fail(p != NULL && p->finalized && json_is_object(summary));
  json_t *prop = json_object();
  set_stats(prop, "vantage_delay_ms", p->delay_excl, STATS_ALL);
  set_stats(prop, "vantage_delay_incl_first_ms", p->delay_incl, STATS_ALL);

  json_t *by_vantage = json_object();
  for (guint v = 0; v < p->n; v++)
    set_stats(by_vantage, p->names[v], p->delay_by_vantage[v], STATS_VANTAGE);
  an_json_set_nonempty(prop, "vantage_delay_by_vantage_ms", by_vantage);

  json_object_set_new(prop, "blocks_seen_by_all", json_integer((json_int_t)p->seen_by_all));

  json_t *first = json_object();
  for (guint v = 0; v < p->n && p->seen_by_all > 0; v++)
    json_object_set_new(first, p->names[v], json_real((double)p->first_count[v] / (double)p->seen_by_all));
  an_json_set_nonempty(prop, "first_seen_share", first);

  json_t *by_pool = json_object();
  for (guint g = 0; g < p->n_groups; g++) {
    uint64_t n = p->group_seen_by_all[g];
    if (n == 0) continue;
    json_t *o = json_object();
    for (guint v = 0; v < p->n; v++)
      json_object_set_new(o, p->names[v],
                          json_real((double)p->group_first_count[(gsize)g * p->n + v] / (double)n));
    json_object_set_new(by_pool, an_chain_group_name(p->chain, g), o);
  }
  an_json_set_nonempty(prop, "first_seen_share_by_pool", by_pool);

  json_t *bm_first = json_object();
  for (guint v = 0; v < p->n; v++)
    if (p->observed[v] > 0)
      json_object_set_new(bm_first, p->names[v],
                          json_real((double)p->block_msg_first[v] / (double)p->observed[v]));
  an_json_set_nonempty(prop, "seen_by_block_msg_first_share", bm_first);

  json_t *by_type = json_object();
  for (guint t = 0; t < N_TYPES; t++)
    set_stats(by_type, an_block_type_name((AnBlockType)t), p->delay_by_type[t], STATS_TYPE);
  an_json_set_nonempty(prop, "vantage_delay_ms_by_type", by_type);

  json_object_set_new(summary, "propagation", prop);
}

/* A header field made of a vantage name and a suffix, quoted as one field. */
static void put_csv_name(FILE *out, const char *name, const char *suffix) {
  g_autofree char *s = g_strconcat(name, suffix, NULL);
  fputc(',', out);
  an_csv_put_field(out, s);
}

/* Nanoseconds as seconds with 3 decimals, rounded to the nearest millisecond (halves away from zero) in
 * integers: printing a double with %.3f would round ties by their binary approximation. */
static void put_seconds_ms(FILE *out, int64_t ns) {
  uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
  uint64_t ms = a / 1000000u + (a % 1000000u >= 500000u ? 1 : 0);
  fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 && ms > 0 ? "-" : "", ms / 1000u, ms % 1000u);
}

static const char *study_type_name(AnBlockType t) {
  switch (t) {
  case AN_BLOCK_MAIN:
    return "Main";
  case AN_BLOCK_UNCLE:
    return "Recognized";
  case AN_BLOCK_UNREFERENCED:
    return "Uncle";
  }
  return "";
}

gboolean an_prop_write_observations_csv(const AnProp *p, const AnChain *chain, FILE *out) {
  g_return_val_if_fail(p != NULL && p->finalized && out != NULL, FALSE);
  g_return_val_if_fail(chain == p->chain, FALSE);

  fputs("BlockHash,Number,BlockType", out);
  for (guint v = 0; v < p->n; v++)
    put_csv_name(out, p->names[v], "TimeStamp");
  fputs(",FirstObservation", out);
  for (guint v = 0; v < p->n; v++)
    put_csv_name(out, p->names[v], "Diff");
  fputs(",MiningPool,NumTransactions,SameMinerSeqLen,PositionInsideSeq,Difficulty,BlockSize,InterblockTime,"
        "InterblockTimePerPool\n",
        out);

  /* [h] = mined time of the previous main block of the same pool as the main block at window height h. */
  guint heights = (guint)an_chain_summary(chain)->heights;
  int64_t *prev_same_pool = g_new(int64_t, (gsize)heights + 1);
  int64_t *last_of_pool = g_new(int64_t, p->n_groups ? p->n_groups : 1);
  for (guint g = 0; g < p->n_groups; g++)
    last_of_pool[g] = OBS_TIME_NONE;
  for (guint h = 1; h <= heights; h++) {
    const ObsBlock *b = an_chain_main_block(chain, h);
    guint g = group_of(chain, b);
    prev_same_pool[h] = g == NO_GROUP ? OBS_TIME_NONE : last_of_pool[g];
    if (g != NO_GROUP) last_of_pool[g] = b->mined_ns;
  }

  for (guint r = 0; r < p->rows->len && !ferror(out); r++) {
    const Entry *e = g_ptr_array_index(p->rows, r);
    const ObsBlock *b = an_chain_block(chain, e->id);
    AnBlockType type = AN_BLOCK_MAIN;
    an_chain_block_type(chain, b->id, &type);
    guint first;
    first_observer(p, e, &first);
    int64_t t0 = obs_time(p, e, first);

    fprintf(out, HEX ",%" PRIu32 ",%s", b->id, b->height, study_type_name(type));
    for (guint v = 0; v < p->n; v++) {
      fputc(',', out);
      if (obs_time(p, e, v) != OBS_TIME_NONE) put_seconds_ms(out, obs_time(p, e, v));
    }
    fputc(',', out);
    an_csv_put_field(out, p->names[first]);
    for (guint v = 0; v < p->n; v++) {
      fputc(',', out);
      if (obs_time(p, e, v) != OBS_TIME_NONE) put_seconds_ms(out, obs_time(p, e, v) - t0);
    }
    fputc(',', out);
    guint g = group_of(chain, b);
    if (g != NO_GROUP) an_csv_put_field(out, an_chain_group_name(chain, g));
    fprintf(out, ",%" PRIu32 ",", b->n_tx);
    uint32_t run_len, position;
    if (an_chain_block_run(chain, b->id, &run_len, &position))
      fprintf(out, "%" PRIu32 ",%" PRIu32, run_len, position);
    else
      fputc(',', out);
    fprintf(out, ",%.17g,%" PRIu32 ",", b->difficulty, b->size_bytes);
    if (type == AN_BLOCK_MAIN && b->height > 1)
      put_seconds_ms(out, b->mined_ns - an_chain_main_block(chain, b->height - 1)->mined_ns);
    fputc(',', out);
    if (type == AN_BLOCK_MAIN && prev_same_pool[b->height] != OBS_TIME_NONE)
      put_seconds_ms(out, b->mined_ns - prev_same_pool[b->height]);
    fputc('\n', out);
  }
  g_free(prev_same_pool);
  g_free(last_of_pool);
  return fflush(out) == 0 && !ferror(out);
}
