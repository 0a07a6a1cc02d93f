/* txoutput.c: the transaction metrics' outputs (the summary's tx keys, the commit CSVs) and the sink that
 * feeds them. */
#include "txmetrics-private.h"

typedef struct {
  const char *key;
  double f; /* quantile fraction; < 0 for the mean */
} StatKey;

static const StatKey STATS_MMP90[] = {{"median", 0.5}, {"mean", -1}, {"p90", 0.9}, {NULL, 0}};

static const StatKey STATS_PROP[] = {{"median", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {NULL, 0}};

static double stat_of(const AnHist *h, double f, double unit_ns) {
  return (f < 0 ? an_hist_mean(h) : an_hist_quantile(h, f)) / unit_ns;
}

/* Sets `key` of `parent` to the statistics `keys` of `h` in units of `unit_ns`, unless it is empty. */
static void set_stats(json_t *parent, const char *key, const AnHist *h, const StatKey *keys, double unit_ns) {
  if (an_hist_count(h) == 0) return;
  json_t *o = json_object();
  for (const StatKey *k = keys; k->key; k++)
    json_object_set_new(o, k->key, json_real(stat_of(h, k->f, unit_ns)));
  json_object_set_new(parent, key, o);
}

static void set_count(json_t *o, const char *key, uint64_t n) {
  json_object_set_new(o, key, json_integer((json_int_t)n));
}

void an_tx_add_json(const AnTx *t, json_t *summary) {
  g_return_if_fail(t != NULL && t->finalized && json_is_object(summary));
  json_t *o = json_object();
  set_count(o, "unique", t->unique);
  set_count(o, "committed", t->committed);
  set_count(o, "never_committed", t->created - t->committed);

  json_t *commit_s = json_object();
  for (guint k = 0; k < AN_TX_N_K; k++) {
    char key[16];
    g_snprintf(key, sizeof key, "k%" PRIu32, AN_TX_K[k]);
    set_stats(commit_s, key, t->commit[k], STATS_MMP90, 1e9);
  }
  an_json_set_nonempty(o, "commit_s", commit_s);

  uint64_t ooo = 0, pairs = 0;
  json_t *by_vantage = json_object();
  for (guint v = 0; v < t->n; v++) {
    ooo += t->ooo[v];
    pairs += t->ooo_pairs[v];
    if (t->ooo_pairs[v])
      json_object_set_new(by_vantage, t->names[v], json_real((double)t->ooo[v] / (double)t->ooo_pairs[v]));
  }
  if (pairs) json_object_set_new(o, "out_of_order_share", json_real((double)ooo / (double)pairs));
  an_json_set_nonempty(o, "out_of_order_share_by_vantage", by_vantage);
  const OrderFigures *f = &t->of;
  uint64_t pub = 0, pub_pairs = 0;
  json_t *pub_by_vantage = json_object();
  for (guint v = 0; v < t->n; v++) {
    pub += f->pub_ooo[v];
    pub_pairs += f->pub_pairs[v];
    if (f->pub_pairs[v])
      json_object_set_new(pub_by_vantage, t->names[v], json_real((double)f->pub_ooo[v] / (double)f->pub_pairs[v]));
  }
  if (pub_pairs) json_object_set_new(o, "out_of_order_share_as_published", json_real((double)pub / (double)pub_pairs));
  an_json_set_nonempty(o, "out_of_order_share_as_published_by_vantage", pub_by_vantage);
  if (f->seen_pairs) {
    json_t *seen = json_object();
    json_object_set_new(seen, "intended", json_real((double)f->seen_ooo / (double)f->seen_pairs));
    json_object_set_new(seen, "as_published", json_real((double)f->seen_pub_ooo / (double)f->seen_pairs));
    json_object_set_new(o, "out_of_order_seen_share", seen);
  }
  if (f->sender_pairs) {
    json_t *arr = json_object();
    if (f->consec_pairs)
      json_object_set_new(arr, "same_ms_share", json_real((double)f->consec_same_ms / (double)f->consec_pairs));
    json_object_set_new(arr, "txs_per_sender_mean", json_real((double)f->seen_pairs / (double)f->sender_pairs));
    json_object_set_new(arr, "one_tx_sender_share", json_real((double)f->sender_single / (double)f->sender_pairs));
    json_object_set_new(o, "arrival", arr);
  }
  if (f->seen_pairs) json_object_set_new(o, "order_sample_sender_share", json_real(f->sender_share));

  set_stats(o, "propagation_ms", t->prop, STATS_PROP, 1e6);

  if (t->censored_created > 0) {
    json_t *c = json_object();
    const char *names[2] = {"censored", "uncensored"};
    for (guint i = 0; i < 2; i++) {
      json_t *w = json_object();
      set_stats(w, "wait_s", t->wait[i == 0 ? 1 : 0], STATS_MMP90, 1e9);
      an_json_set_nonempty(c, names[i], w);
    }
    set_count(c, "censored_never_committed", t->censored_created - t->censored_committed);
    json_object_set_new(o, "censorship", c);
  }

  set_count(o, "created", t->created);
  set_count(o, "unmatched_records", t->unmatched);
  set_count(o, "nonce_order_violations", t->nonce_violations);
  json_object_set_new(summary, "tx", o);
}

static void put_stats_row(FILE *out, uint32_t k, const char *vantage, const AnHist *h) {
  fprintf(out, "%" PRIu32 ",", k);
  an_csv_put_field(out, vantage);
  fprintf(out, ",%" PRIu64, an_hist_count(h));
  for (const StatKey *s = STATS_MMP90; s->key; s++) {
    fputc(',', out);
    if (an_hist_count(h)) fprintf(out, "%.17g", stat_of(h, s->f, 1e9));
  }
  fputc('\n', out);
}

gboolean an_tx_write_commit_csv(const AnTx *t, FILE *out) {
  g_return_val_if_fail(t != NULL && t->finalized && out != NULL, FALSE);
  fputs("k,vantage,pairs,median_s,mean_s,p90_s\n", out);
  for (guint k = 0; k < AN_TX_N_K; k++) {
    put_stats_row(out, AN_TX_K[k], "", t->commit[k]);
    for (guint v = 0; v < t->n; v++)
      put_stats_row(out, AN_TX_K[k], t->names[v], t->commit_v[k][v]);
  }
  return fflush(out) == 0 && !ferror(out);
}

static void tx_sink_vantages(gpointer user, const char *const *names, guint n) {
  AnTx **out = user;
  an_tx_free(*out);
  *out = an_tx_new(names, n);
}

static gboolean tx_sink_seen(gpointer user, const ObsTx *tx, const int64_t *recv_ns, GError **error) {
  return an_tx_add_tx_seen(*(AnTx **)user, tx, recv_ns, error);
}

static gboolean tx_sink_inclusion(gpointer user, const ObsTxInclusion *inclusion, GError **error) {
  return an_tx_add_inclusion(*(AnTx **)user, inclusion, error);
}

static gboolean tx_sink_main(gpointer user, uint32_t height, uint64_t block, int64_t mined_ns, const int64_t *recv_ns,
                             GError **error) {
  return an_tx_add_main_block(*(AnTx **)user, height, block, mined_ns, recv_ns, error);
}

static void tx_sink_finish(gpointer user) { an_tx_finalize(*(AnTx **)user); }

void an_tx_sink_init(ObsSink *sink, AnTx **out) {
  *sink = (ObsSink){.user = out,
                    .vantages = tx_sink_vantages,
                    .tx_seen = tx_sink_seen,
                    .tx_inclusion = tx_sink_inclusion,
                    .main_block = tx_sink_main,
                    .finish = tx_sink_finish};
}
