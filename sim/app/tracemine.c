/* tracemine.c: trace-driven simulation from measured logs (see tracemine.h). */
#include "tracemine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"
#include "util.h"

/* One block of the trace: a logged block, or a placeholder the logs' chain needs below one ("stand-in"). */
typedef struct {
  const SimReplayBlock *rb;
  const SimReplayBlock *for_block; /* a stand-in: the logged block it was first needed below; else rb */
  int64_t first_ns;                /* when it is mined, in the logs' clock (before the lead) */
} TB;

struct SimTrace {
  SimReplayData *data;     /* the logs, read as sim replay reads them */
  guint nv;                /* log vantage points */
  const char *const *names;
  GArray *tbs;             /* TB per trace block (same order as `trace`) */
  PowTraceBlock *trace;
  guint n_trace;
  int64_t t0_ns;           /* measured clock at simulation time 0 */
  guint n_logged;          /* logged blocks in the trace (the others are stand-ins) */
};

void sim_trace_free(SimTrace *t) {
  if (!t) return;
  sim_replay_data_free(t->data);
  if (t->tbs) g_array_unref(t->tbs);
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

/* A vantage point's first observation of a logged block: the earlier of block message and announcement. */
static int64_t seen_at(const SimReplayBlock *b, guint v) {
  return MIN(b->msg_ns[v], b->ann_ns[v]);
}

static gint cmp_time(gconstpointer pa, gconstpointer pb) {
  const TB *a = pa, *b = pb;
  if (a->first_ns != b->first_ns) return a->first_ns < b->first_ns ? -1 : 1;
  if (a->rb->number != b->rb->number) return a->rb->number < b->rb->number ? -1 : 1;
  return a->rb->order < b->rb->order ? -1 : a->rb->order > b->rb->order;
}

/* The scenario miner for a coinbase: its pool by name (any case), else "Others"; -1 if neither. */
static int miner_for(const SimTrace *t, const SimScenario *sc, uint64_t coinbase, const char **why) {
  const char *name = sim_replay_data_pool_of(t->data, coinbase);
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

/* Times of the logged blocks (their first observation, and never before their parent's + 1 ms) and of the
 * stand-ins below them, spread evenly between the block below and the logged block that needed them. */
static void time_blocks(SimTrace *t) {
  guint nb = 0;
  const SimReplayBlock *const *blocks = sim_replay_data_blocks(t->data, &nb);
  g_autoptr(GHashTable) when = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  g_autoptr(GPtrArray) below = g_ptr_array_new();
  for (guint i = 0; i < nb; i++) { /* by number: parents first */
    const SimReplayBlock *c = blocks[i];
    int64_t tc = OBS_TIME_NONE;
    for (guint v = 0; v < t->nv; v++)
      tc = MIN(tc, seen_at(c, v));
    g_ptr_array_set_size(below, 0);
    uint64_t pid = c->b.parent;
    const SimReplayBlock *p = NULL;
    while (pid != OBS_GENESIS_ID && (p = sim_replay_data_block(t->data, pid)) && p->placeholder &&
           !g_hash_table_contains(when, &p->b.id)) {
      g_ptr_array_add(below, (gpointer)p);
      pid = p->b.parent;
      p = NULL;
    }
    guint k = below->len;
    int64_t *tp = pid == OBS_GENESIS_ID || !p ? NULL : g_hash_table_lookup(when, &p->b.id);
    int64_t base = tp ? *tp : tc - (int64_t)(k + 1) * 1000000000;
    int64_t prev = base;
    for (guint j = 0; j < k; j++) { /* from the lowest up */
      const SimReplayBlock *x = g_ptr_array_index(below, k - 1 - j);
      int64_t tx = base + (int64_t)((double)(tc - base) * (j + 1) / (k + 1));
      if (tp || j) tx = MAX(tx, prev + 1000000);
      TB tb = {.rb = x, .for_block = c, .first_ns = tx};
      g_array_append_val(t->tbs, tb);
      g_hash_table_insert(when, (gpointer)&x->b.id, g_memdup2(&tx, sizeof tx));
      prev = tx;
      tp = &prev;
    }
    if (tp) tc = MAX(tc, *tp + 1000000); /* a child is never mined before its parent */
    TB tb = {.rb = c, .for_block = c, .first_ns = tc};
    g_array_append_val(t->tbs, tb);
    g_hash_table_insert(when, (gpointer)&c->b.id, g_memdup2(&tc, sizeof tc));
  }
  t->n_logged = nb;
}

SimTrace *sim_trace_load(const SimTraceOptions *opt, SimScenario *sc, GError **error) {
  g_autoptr(SimTrace) t = g_new0(SimTrace, 1);
  t->nv = opt->n;
  SimReplayOptions ro = {.dirs = opt->dirs,
                         .names = opt->names,
                         .n_vantages = opt->n,
                         .pools_csv = opt->pools_csv,
                         .strict = opt->strict,
                         .skip_txs = TRUE,
                         .block_reward_eth = 2};
  GError *e = NULL;
  t->data = sim_replay_load(&ro, &e);
  if (!t->data) {
    bad_input(error, "%s", e->message);
    g_error_free(e);
    return NULL;
  }
  t->names = sim_replay_data_vantage_names(t->data);
  t->tbs = g_array_new(FALSE, FALSE, sizeof(TB));
  time_blocks(t);
  g_array_sort(t->tbs, cmp_time);
  t->n_trace = t->tbs->len;
  t->trace = g_new0(PowTraceBlock, MAX(t->n_trace, 1));
  t->t0_ns = g_array_index(t->tbs, TB, 0).first_ns - 1000000000;
  int64_t lead = (int64_t)llround(opt->lead_ms * 1e6);
  uint32_t max_h = 0;
  for (guint i = 0; i < t->n_trace; i++) {
    const TB *b = &g_array_index(t->tbs, TB, i);
    const char *name = NULL;
    int m = miner_for(t, sc, b->for_block->coinbase, &name);
    if (m < 0)
      return bad_input(error,
                       "block %" G_GUINT64_FORMAT
                       ": its pool %s%s%s is not in the scenario, which has no 'Others' pool",
                       b->for_block->number, name ? "'" : "", name ? name : "(coinbase not in the map)",
                       name ? "'" : ""),
             NULL;
    const ObsBlock *ob = &b->rb->b;
    PowTraceBlock *tb = &t->trace[i];
    tb->id = ob->id;
    tb->parent = ob->parent;
    tb->miner = (guint)m;
    tb->mined_ns = MAX(0, b->first_ns - lead - t->t0_ns);
    if (i > 0) tb->mined_ns = MAX(tb->mined_ns, t->trace[i - 1].mined_ns);
    tb->timestamp_s = ob->timestamp_s;
    tb->difficulty = ob->difficulty;
    tb->n_tx = ob->n_tx;
    tb->size_bytes = ob->size_bytes;
    tb->gas_used = ob->gas_used;
    tb->n_uncles = ob->n_uncles;
    memcpy(tb->uncles, ob->uncles, sizeof tb->uncles);
    max_h = MAX(max_h, ob->height);
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
    static const char *const cols[] = {"_measured_ms", "_simulated_ms", "_measured_delay_ms",
                                       "_simulated_delay_ms"};
    for (guint q = 0; q < G_N_ELEMENTS(cols); q++) {
      g_autofree char *col = g_strconcat(nm, cols[q], NULL);
      fputc(',', f);
      an_csv_put_field(f, col); /* a vantage name may hold a comma */
    }
  }
  fputc('\n', f);
  g_autofree GArray **dm = g_new0(GArray *, MAX(n, 1)), **ds = g_new0(GArray *, MAX(n, 1)),
                    **dd = g_new0(GArray *, MAX(n, 1));
  for (guint j = 0; j < n; j++) {
    dm[j] = g_array_new(FALSE, FALSE, sizeof(double));
    ds[j] = g_array_new(FALSE, FALSE, sizeof(double));
    dd[j] = g_array_new(FALSE, FALSE, sizeof(double));
  }
  guint64 mined = 0, stand_ins = 0, stand_ins_mined = 0, compared = 0, same_first = 0;
  g_autofree double *sum_abs = g_new0(double, MAX(n, 1));
  for (guint i = 0; i < t->n_trace; i++) {
    uint64_t sid = pow_world_trace_block(world, i);
    const SimReplayBlock *b = g_array_index(t->tbs, TB, i).rb;
    /* A stand-in has nothing measured to compare with. */
    if (b->placeholder) {
      stand_ins++;
      stand_ins_mined += sid != OBS_GENESIS_ID;
      continue;
    }
    if (sid == OBS_GENESIS_ID) continue;
    mined++;
    const int64_t *row = g_hash_table_lookup(sim_seen, &sid);
    const ObsBlock *ob = pow_world_block(world, sid);
    guint pool = pow_world_miner_pool(world, ob->miner, NULL);
    fprintf(f, "0x%016" G_GINT64_MODIFIER "x,%u,", b->b.id, ob->height);
    an_csv_put_field(f, sc->pools[pool].name);
    int64_t mfirst = OBS_TIME_NONE, sfirst = OBS_TIME_NONE;
    guint mj = 0, sj = 0;
    gboolean all = n > 0 && row;
    for (guint j = 0; j < n; j++) {
      int64_t m = seen_at(b, g_array_index(log_v, guint, j)), s = row ? row[j] : OBS_TIME_NONE;
      if (m == OBS_TIME_NONE || s == OBS_TIME_NONE) all = FALSE;
      if (m < mfirst) mfirst = m, mj = j;
      if (s < sfirst) sfirst = s, sj = j;
    }
    for (guint j = 0; j < n; j++) {
      int64_t m = seen_at(b, g_array_index(log_v, guint, j)), s = row ? row[j] : OBS_TIME_NONE;
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
  /* What was used and what was not, and why: a trace that silently lost blocks would compare little. */
  const SimReplayCounts *c = sim_replay_data_counts(t->data);
  json_object_set_new(tr, "logged_blocks", json_integer((json_int_t)(c->blocks + c->detached_blocks)));
  json_object_set_new(tr, "blocks", json_integer(t->n_logged));
  json_object_set_new(tr, "mined", json_integer((json_int_t)mined));
  json_object_set_new(tr, "left_out", json_integer((json_int_t)c->detached_blocks));
  json_object_set_new(tr, "bad_lines", json_integer((json_int_t)c->bad_lines));
  json_object_set_new(tr, "stand_ins", json_integer((json_int_t)stand_ins));
  json_object_set_new(tr, "stand_ins_mined", json_integer((json_int_t)stand_ins_mined));
  json_object_set_new(tr, "vantage_points_shared", json_integer(n));
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
