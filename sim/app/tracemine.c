/* tracemine.c: trace-driven simulation from measured logs (see tracemine.h). */
#include "tracemine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emc.h"
#include "util.h"

typedef struct {
  uint64_t id, parent, number, coinbase;
  int64_t time_s;
  double difficulty;
  uint32_t n_tx, size;
  uint64_t gas;
  uint32_t n_uncles;
  uint64_t uncles[OBS_MAX_UNCLES];
  int64_t first_ns; /* earliest observation, any vantage point */
  int64_t *seen;    /* per log vantage point: min(block message, announcement) */
  gboolean placed;
  guint order;
} TB;

struct SimTrace {
  guint nv;                /* log vantage points */
  char **names;
  GHashTable *blocks;      /* id -> TB* */
  GPtrArray *trace_tb;     /* TB* per trace block (same order as `trace`) */
  PowTraceBlock *trace;
  guint n_trace;
  int64_t t0_ns;           /* measured clock at simulation time 0 */
  guint64 left_out;
  GHashTable *pool_of;     /* coinbase id -> name */
};

static void tb_free(gpointer p) {
  TB *b = p;
  g_free(b->seen);
  g_free(b);
}

void sim_trace_free(SimTrace *t) {
  if (!t) return;
  g_strfreev(t->names);
  if (t->blocks) g_hash_table_unref(t->blocks);
  if (t->trace_tb) g_ptr_array_unref(t->trace_tb);
  if (t->pool_of) g_hash_table_unref(t->pool_of);
  g_free(t->trace);
  g_free(t);
}

static gboolean bad_input(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean bad_input(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *m = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, m);
  return FALSE;
}

static gboolean read_map(SimTrace *t, const char *path, GError **error) {
  if (an_input_unbounded(path)) return bad_input(error, "%s: not a regular file", path);
  FILE *f = fopen(path, "r");
  if (!f) return bad_input(error, "%s: cannot open: %s", path, g_strerror(errno));
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
  guint line = 0;
  GError *e = NULL;
  int ac = -1, nc = -1;
  /* The same checks and messages as sim replay's reader of the map (replay.c). */
  if (!an_csv_read_record(f, fields, &line, &e)) {
    fclose(f);
    bad_input(error, "%s: %s", path, e ? e->message : "empty file (expected a header with 'address')");
    g_clear_error(&e);
    return FALSE;
  }
  for (guint i = 0; i < fields->len; i++) {
    const char *h = g_ptr_array_index(fields, i);
    if (!strcmp(h, "address")) ac = (int)i;
    if (!strcmp(h, "name") || (nc < 0 && !strcmp(h, "name_in_dsn2020_scripts"))) nc = (int)i;
  }
  if (nc < 0 && fields->len >= 2) nc = ac == 1 ? 0 : 1;
  if (ac < 0 || nc < 0) {
    fclose(f);
    return bad_input(error, "%s:1: the header needs an 'address' column and a pool name column", path);
  }
  while (an_csv_read_record(f, fields, &line, &e)) {
    if (fields->len == 1 && !*(const char *)g_ptr_array_index(fields, 0)) continue;
    if ((int)fields->len <= MAX(ac, nc)) {
      fclose(f);
      return bad_input(error, "%s:%u: %u fields, expected at least %d", path, line, fields->len,
                       MAX(ac, nc) + 1);
    }
    EmcAddress a;
    const char *txt = g_ptr_array_index(fields, ac);
    if (!emc_address_parse(txt, strlen(txt), &a)) {
      fclose(f);
      return bad_input(error, "%s:%u: not an address: '%s'", path, line, txt);
    }
    uint64_t id = emc_address_id(&a);
    const char *name = g_ptr_array_index(fields, nc), *had = g_hash_table_lookup(t->pool_of, &id);
    if (had && strcmp(had, name) != 0) {
      fclose(f);
      return bad_input(error, "%s:%u: address %s is already mapped to pool '%s'", path, line, txt, had);
    }
    uint64_t *k = g_new(uint64_t, 1);
    *k = id;
    g_hash_table_replace(t->pool_of, k, g_strdup(name));
  }
  fclose(f);
  if (e) {
    bad_input(error, "%s:%u: %s", path, line, e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

static gboolean read_dir(SimTrace *t, guint v, const char *dir, gboolean strict, guint *order, GError **error) {
  GError *e = NULL;
  g_autoptr(EmcDir) d = emc_dir_open(dir, &e);
  if (!d) {
    bad_input(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  EmcReaderFlags fl = strict ? EMC_READER_STRICT : EMC_READER_DEFAULT;
  g_autoptr(EmcReader) rb = emc_dir_open_reader(d, EMC_KIND_BLOCK, fl, &e);
  if (!rb) {
    bad_input(error, "%s: no block log: %s", dir, e->message);
    g_error_free(e);
    return FALSE;
  }
  EmcBlock eb;
  while (emc_reader_next_block(rb, &eb, &e)) {
    uint64_t id = emc_hash_id(&eb.hash);
    TB *b = g_hash_table_lookup(t->blocks, &id);
    if (!b) {
      b = g_new0(TB, 1);
      b->id = id;
      b->parent = emc_hash_id(&eb.parent);
      b->number = eb.number;
      b->coinbase = emc_address_id(&eb.coinbase);
      b->time_s = (int64_t)eb.time_s;
      b->difficulty = emc_u256_to_double(&eb.difficulty);
      b->n_tx = eb.n_txs;
      b->size = (uint32_t)MIN(eb.size_bytes, UINT32_MAX);
      b->gas = eb.gas_used;
      b->n_uncles = MIN(eb.n_uncles, OBS_MAX_UNCLES);
      for (guint u = 0; u < b->n_uncles; u++) b->uncles[u] = emc_hash_id(&eb.uncles[u]);
      b->seen = g_new(int64_t, t->nv);
      for (guint k = 0; k < t->nv; k++) b->seen[k] = OBS_TIME_NONE;
      b->order = (*order)++;
      g_hash_table_insert(t->blocks, &b->id, b);
    }
    b->seen[v] = MIN(b->seen[v], eb.local_ns);
  }
  if (e) {
    bad_input(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autoptr(EmcReader) ra = emc_dir_open_reader(d, EMC_KIND_ANNOUNCEMENT, fl, NULL);
  EmcAnnouncement ea;
  while (ra && emc_reader_next_announcement(ra, &ea, &e)) {
    uint64_t id = emc_hash_id(&ea.hash);
    TB *b = g_hash_table_lookup(t->blocks, &id);
    if (b) b->seen[v] = MIN(b->seen[v], ea.local_ns);
  }
  if (e) {
    bad_input(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

static gint cmp_number(gconstpointer pa, gconstpointer pb) {
  const TB *a = *(TB *const *)pa, *b = *(TB *const *)pb;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

static gint cmp_time(gconstpointer pa, gconstpointer pb) {
  const TB *a = *(TB *const *)pa, *b = *(TB *const *)pb;
  if (a->first_ns != b->first_ns) return a->first_ns < b->first_ns ? -1 : 1;
  return cmp_number(pa, pb);
}

/* The scenario miner for a coinbase: its pool by name (any case), else "Others"; -1 if neither. */
static int miner_for(const SimTrace *t, const SimScenario *sc, uint64_t coinbase, const char **why) {
  const char *name = g_hash_table_lookup(t->pool_of, &coinbase);
  int pool = -1, others = -1;
  for (guint p = 0; p < sc->n_pools; p++) {
    if (name && g_ascii_strcasecmp(sc->pools[p].name, name) == 0) pool = (int)p;
    if (g_ascii_strcasecmp(sc->pools[p].name, "Others") == 0) others = (int)p;
  }
  if (pool < 0) pool = others;
  *why = name;
  if (pool < 0) return -1;
  int first = 0;
  for (int p = 0; p < pool; p++) first += (int)sc->pools[p].miners;
  return first + (int)(coinbase % (uint64_t)sc->pools[pool].miners);
}

SimTrace *sim_trace_load(const SimTraceOptions *opt, SimScenario *sc, GError **error) {
  g_autoptr(SimTrace) t = g_new0(SimTrace, 1);
  t->nv = opt->n;
  t->names = g_new0(char *, opt->n + 1);
  for (guint v = 0; v < opt->n; v++)
    t->names[v] = opt->names && opt->names[v] ? g_strdup(opt->names[v]) : g_path_get_basename(opt->dirs[v]);
  t->blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, tb_free);
  t->pool_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  if (opt->pools_csv && !read_map(t, opt->pools_csv, error)) return NULL;
  guint order = 0;
  for (guint v = 0; v < opt->n; v++)
    if (!read_dir(t, v, opt->dirs[v], opt->strict, &order, error)) return NULL;
  if (!g_hash_table_size(t->blocks)) {
    bad_input(error, "no block in the logs");
    return NULL;
  }
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, t->blocks);
  while (g_hash_table_iter_next(&it, &k, &val)) g_ptr_array_add(all, val);
  g_ptr_array_sort(all, cmp_number);
  uint64_t min_number = ((TB *)g_ptr_array_index(all, 0))->number;
  t->trace_tb = g_ptr_array_new();
  for (guint i = 0; i < all->len; i++) {
    TB *b = g_ptr_array_index(all, i);
    b->first_ns = OBS_TIME_NONE;
    for (guint v = 0; v < t->nv; v++) b->first_ns = MIN(b->first_ns, b->seen[v]);
    if (b->number != min_number) {
      TB *p = g_hash_table_lookup(t->blocks, &b->parent);
      if (!p || !p->placed || p->number + 1 != b->number) {
        t->left_out++;
        continue;
      }
      /* A child is never mined before its parent. */
      b->first_ns = MAX(b->first_ns, p->first_ns + 1000000);
    }
    b->placed = TRUE;
    g_ptr_array_add(t->trace_tb, b);
  }
  g_ptr_array_sort(t->trace_tb, cmp_time);
  t->n_trace = t->trace_tb->len;
  t->trace = g_new0(PowTraceBlock, MAX(t->n_trace, 1));
  t->t0_ns = ((TB *)g_ptr_array_index(t->trace_tb, 0))->first_ns - 1000000000;
  int64_t lead = (int64_t)llround(opt->lead_ms * 1e6);
  uint32_t max_h = 0;
  for (guint i = 0; i < t->n_trace; i++) {
    const TB *b = g_ptr_array_index(t->trace_tb, i);
    const char *name = NULL;
    int m = miner_for(t, sc, b->coinbase, &name);
    if (m < 0)
      return bad_input(error, "block %" G_GUINT64_FORMAT ": its pool %s%s%s is not in the scenario, which has no 'Others' pool",
                       b->number, name ? "'" : "", name ? name : "(coinbase not in the map)", name ? "'" : ""),
             NULL;
    PowTraceBlock *tb = &t->trace[i];
    tb->id = b->id;
    tb->parent = b->number == min_number ? OBS_GENESIS_ID : b->parent;
    tb->miner = (guint)m;
    tb->mined_ns = MAX(0, b->first_ns - lead - t->t0_ns);
    if (i > 0) tb->mined_ns = MAX(tb->mined_ns, t->trace[i - 1].mined_ns);
    tb->timestamp_s = b->time_s;
    tb->difficulty = b->difficulty > 0 ? b->difficulty : 1;
    tb->n_tx = b->n_tx;
    tb->size_bytes = b->size;
    tb->gas_used = b->gas;
    tb->n_uncles = b->n_uncles;
    memcpy(tb->uncles, b->uncles, sizeof tb->uncles);
    max_h = MAX(max_h, (uint32_t)(b->number - min_number + 1));
  }
  sc->pow.trace = t->trace;
  sc->pow.n_trace = t->n_trace;
  sc->pow.tx = NULL;
  sc->stop.heights = max_h;
  sc->stop.settle_heights = 0;
  sc->stop.time_s = 0;
  sc->stop.events = 0;
  sc->pow.stop_height = 0; /* run until every trace block has spread */
  return g_steal_pointer(&t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(GArray *a) {
  if (!a->len) return NAN;
  qsort(a->data, a->len, sizeof(double), cmp_double);
  const double *x = (const double *)a->data;
  return a->len % 2 ? x[a->len / 2] : (x[a->len / 2 - 1] + x[a->len / 2]) / 2;
}

gboolean sim_trace_compare(const SimTrace *t, const SimScenario *sc, const PowWorld *world, json_t *summary,
                           SimOutDir *out, GError **error) {
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  gpointer state = pow_world_net_state(world);
  guint snv = net->n_vantages && state ? net->n_vantages(state) : 0;
  /* Shared vantage points: (simulated index, log index). */
  g_autoptr(GArray) sim_v = g_array_new(FALSE, FALSE, sizeof(guint)), log_v = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint s = 0; s < snv; s++)
    for (guint l = 0; l < t->nv; l++)
      if (!strcmp(net->vantage_name(state, s), t->names[l])) {
        g_array_append_val(sim_v, s);
        g_array_append_val(log_v, l);
      }
  guint n = sim_v->len;
  /* Simulated first receptions per shared vantage point, by simulator block id. */
  g_autoptr(GHashTable) sim_seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint j = 0; j < n; j++) {
    const GArray *sg = net->vantage_sightings(state, g_array_index(sim_v, guint, j));
    for (guint i = 0; i < sg->len; i++) {
      const ObsSighting *s = &g_array_index(sg, ObsSighting, i);
      int64_t *row = g_hash_table_lookup(sim_seen, &s->block);
      if (!row) {
        row = g_new(int64_t, MAX(n, 1));
        for (guint q = 0; q < n; q++) row[q] = OBS_TIME_NONE;
        g_hash_table_insert(sim_seen, g_memdup2(&s->block, sizeof s->block), row);
      }
      row[j] = MIN(row[j], MIN(s->block_msg_ns, s->announce_ns));
    }
  }
  FILE *f = sim_outdir_create(out, "trace_compare.csv", error);
  if (!f) return FALSE;
  fputs("block,height,pool", f);
  for (guint j = 0; j < n; j++) {
    const char *nm = t->names[g_array_index(log_v, guint, j)];
    fprintf(f, ",%s_measured_ms,%s_simulated_ms,%s_measured_delay_ms,%s_simulated_delay_ms", nm, nm, nm, nm);
  }
  fputc('\n', f);
  g_autofree GArray **dm = g_new0(GArray *, MAX(n, 1)), **ds = g_new0(GArray *, MAX(n, 1)),
                    **dd = g_new0(GArray *, MAX(n, 1));
  for (guint j = 0; j < n; j++) {
    dm[j] = g_array_new(FALSE, FALSE, sizeof(double));
    ds[j] = g_array_new(FALSE, FALSE, sizeof(double));
    dd[j] = g_array_new(FALSE, FALSE, sizeof(double));
  }
  guint64 mined = 0, compared = 0, same_first = 0;
  g_autofree double *sum_abs = g_new0(double, MAX(n, 1));
  for (guint i = 0; i < t->n_trace; i++) {
    uint64_t sid = pow_world_trace_block(world, i);
    const TB *b = g_ptr_array_index(t->trace_tb, i);
    if (sid == OBS_GENESIS_ID) continue;
    mined++;
    const int64_t *row = g_hash_table_lookup(sim_seen, &sid);
    const ObsBlock *ob = pow_world_block(world, sid);
    guint pool = pow_world_miner_pool(world, ob->miner, NULL);
    fprintf(f, "0x%016" G_GINT64_MODIFIER "x,%u,", b->id, ob->height);
    an_csv_put_field(f, sc->pools[pool].name);
    int64_t mfirst = OBS_TIME_NONE, sfirst = OBS_TIME_NONE;
    guint mj = 0, sj = 0;
    gboolean all = n > 0 && row;
    for (guint j = 0; j < n; j++) {
      int64_t m = b->seen[g_array_index(log_v, guint, j)], s = row ? row[j] : OBS_TIME_NONE;
      if (m == OBS_TIME_NONE || s == OBS_TIME_NONE) all = FALSE;
      if (m < mfirst) mfirst = m, mj = j;
      if (s < sfirst) sfirst = s, sj = j;
    }
    for (guint j = 0; j < n; j++) {
      int64_t m = b->seen[g_array_index(log_v, guint, j)], s = row ? row[j] : OBS_TIME_NONE;
      fputc(',', f);
      if (m != OBS_TIME_NONE) fprintf(f, "%.3f", (double)m / 1e6);
      fputc(',', f);
      if (s != OBS_TIME_NONE) fprintf(f, "%.3f", (double)(s + t->t0_ns) / 1e6);
      fputc(',', f);
      if (all) fprintf(f, "%.3f", (double)(m - mfirst) / 1e6);
      fputc(',', f);
      if (all) fprintf(f, "%.3f", (double)(s - sfirst) / 1e6);
      if (all) {
        double a = (double)(m - mfirst) / 1e6, c = (double)(s - sfirst) / 1e6;
        g_array_append_val(dm[j], a);
        g_array_append_val(ds[j], c);
        double d = fabs(c - a);
        g_array_append_val(dd[j], d);
        sum_abs[j] += d;
      }
    }
    if (all) {
      compared++;
      same_first += mj == sj;
    }
    fputc('\n', f);
  }
  json_t *tr = json_object();
  json_object_set_new(tr, "blocks", json_integer(t->n_trace));
  json_object_set_new(tr, "mined", json_integer((json_int_t)mined));
  json_object_set_new(tr, "left_out", json_integer((json_int_t)t->left_out));
  json_object_set_new(tr, "compared", json_integer((json_int_t)compared));
  if (compared) json_object_set_new(tr, "same_first_observer_share", json_real((double)same_first / (double)compared));
  json_t *by = json_object();
  for (guint j = 0; j < n; j++) {
    json_t *o = json_object();
    guint cnt = dd[j]->len;
    if (cnt) {
      json_object_set_new(o, "measured_delay_ms_median", json_real(median(dm[j])));
      json_object_set_new(o, "simulated_delay_ms_median", json_real(median(ds[j])));
      json_object_set_new(o, "abs_diff_ms_median", json_real(median(dd[j])));
      json_object_set_new(o, "abs_diff_ms_mean", json_real(sum_abs[j] / cnt));
    }
    json_object_set_new(by, t->names[g_array_index(log_v, guint, j)], o);
    g_array_unref(dm[j]);
    g_array_unref(ds[j]);
    g_array_unref(dd[j]);
  }
  json_object_set_new(tr, "by_vantage", by);
  json_object_set_new(summary, "trace", tr);
  return !ferror(f);
}
