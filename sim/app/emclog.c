/* emclog.c: simulated EMC logs (see emclog.h). */
#include "emclog.h"

#include <math.h>
#include <string.h>

#include "emc.h"
#include "rng.h"

/* The coinbase address of miner `m` (a pool of several independent miners, like "Others", has one
 * address per miner, so runs stay per miner when the logs are read back): a fixed id, never zero. */
static uint64_t miner_address_id(guint m) { return sim_mix64(UINT64_C(0xC0B4A5E) + m) | 1; }

static int64_t local_ns(int64_t sim_ns) { return EMC_SIM_EPOCH_S * 1000000000 + sim_ns; }

static gboolean fail_write(GError **error, const char *path, GError *e) {
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s: %s", path, e ? e->message : "write error");
  if (e) g_error_free(e);
  return FALSE;
}

static gboolean write_pools(SimOutDir *out, const SimScenario *sc, const PowWorld *world, GError **error) {
  FILE *f = sim_outdir_create(out, "emc/pools.csv", error);
  if (!f) return FALSE;
  fputs("address,name\n", f);
  for (guint m = 0; m < pow_world_n_miners(world); m++) {
    guint p = pow_world_miner_pool(world, m, NULL);
    EmcAddress a;
    char text[EMC_ADDRESS_TEXT_BYTES];
    emc_address_from_id(miner_address_id(m), &a);
    emc_address_format(&a, text);
    /* Pool names are free text: quote them as CSV does. */
    g_autoptr(GString) name = g_string_new(NULL);
    gboolean quote = strpbrk(sc->pools[p].name, ",\"\n\r") != NULL;
    if (quote) g_string_append_c(name, '"');
    for (const char *c = sc->pools[p].name; *c; c++) {
      if (*c == '"') g_string_append_c(name, '"');
      g_string_append_c(name, *c);
    }
    if (quote) g_string_append_c(name, '"');
    fprintf(f, "%s,%s\n", text, name->str);
  }
  return !ferror(f);
}

typedef struct {
  const ObsSighting *s;
  int64_t t;
} Seen;

static gint cmp_seen(gconstpointer a, gconstpointer b) {
  const Seen *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->s->block < y->s->block ? -1 : x->s->block > y->s->block;
}

/* Total difficulty of a block (memoised over the run's blocks). */
static double total_difficulty(const PowWorld *world, GHashTable *memo, uint64_t id) {
  if (id == OBS_GENESIS_ID) return 0;
  gpointer v;
  if (g_hash_table_lookup_extended(memo, &id, NULL, &v)) return *(double *)v;
  /* Walk down to a known ancestor, then back up. */
  g_autoptr(GArray) path = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  uint64_t cur = id;
  double base = 0;
  while (cur != OBS_GENESIS_ID) {
    if (g_hash_table_lookup_extended(memo, &cur, NULL, &v)) {
      base = *(double *)v;
      break;
    }
    g_array_append_val(path, cur);
    cur = pow_world_block(world, cur)->parent;
  }
  for (guint i = path->len; i-- > 0;) {
    uint64_t b = g_array_index(path, uint64_t, i);
    base += pow_world_block(world, b)->difficulty;
    double *d = g_new(double, 1);
    *d = base;
    g_hash_table_insert(memo, g_memdup2(&b, sizeof b), d);
  }
  return base;
}

static void fill_block(const SimScenario *sc, TxWorld *txw, const ObsBlock *b, int64_t t,
                       EmcBlock *eb, GArray *txs, GArray *uncles) {
  memset(eb, 0, sizeof *eb);
  eb->local_ns = local_ns(t);
  emc_hash_from_id(b->id, &eb->hash);
  eb->number = b->height;
  eb->gas_limit = (uint64_t)sc->pow.chain.block_gas_limit;
  eb->gas_used = b->gas_used;
  emc_u256_from_u64(&eb->difficulty, (uint64_t)llround(b->difficulty));
  eb->time_s = (uint64_t)(EMC_SIM_EPOCH_S + b->timestamp_s);
  emc_address_from_id(miner_address_id(b->miner), &eb->coinbase);
  emc_hash_from_id(b->parent, &eb->parent);
  eb->size_bytes = b->size_bytes;
  g_array_set_size(txs, 0);
  guint n = 0;
  const uint64_t *ids = txw ? tx_world_log_block_txs(txw, b->id, &n) : NULL;
  if (!txw) {
    /* No transaction model: the block's count with made-up hashes, unique per block. */
    n = b->n_tx;
  }
  for (guint k = 0; k < n; k++) {
    EmcHash h;
    emc_hash_from_id(ids ? ids[k] : (sim_mix64(b->id ^ sim_mix64(k + 1)) | 1), &h);
    g_array_append_val(txs, h);
  }
  eb->n_txs = txs->len;
  eb->txs = txs->len ? (const EmcHash *)txs->data : NULL;
  g_array_set_size(uncles, 0);
  for (guint u = 0; u < b->n_uncles; u++) {
    EmcHash h;
    emc_hash_from_id(b->uncles[u], &h);
    g_array_append_val(uncles, h);
  }
  eb->n_uncles = uncles->len;
  eb->uncles = uncles->len ? (const EmcHash *)uncles->data : NULL;
}

static gint cmp_tx_time(gconstpointer a, gconstpointer b, gpointer user) {
  const int64_t *t = user;
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  if (t[x] != t[y]) return t[x] < t[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

static gboolean write_vantage(SimOutDir *out, const SimScenario *sc, const PowWorld *world, guint v,
                              const char *name, const GArray *sightings, GHashTable *td, GError **error) {
  TxWorld *txw = pow_world_tx(world);
  g_autofree char *dir = g_strdup_printf("emc/%s", name);
  g_autofree char *pb = g_strdup_printf("%s/NewBlockMsg.log", dir), *pa = g_strdup_printf("%s/NewBlockHashesMsg.log", dir),
                  *ph = g_strdup_printf("%s/NewBlockHead.log", dir), *pt = g_strdup_printf("%s/TxMsg.log", dir);
  FILE *fb = sim_outdir_create(out, pb, error);
  FILE *fa = fb ? sim_outdir_create(out, pa, error) : NULL;
  FILE *fh = fa ? sim_outdir_create(out, ph, error) : NULL;
  if (!fh) return FALSE;
  g_autoptr(EmcWriter) wb = emc_writer_new(fb, EMC_KIND_BLOCK);
  g_autoptr(EmcWriter) wa = emc_writer_new(fa, EMC_KIND_ANNOUNCEMENT);
  g_autoptr(EmcWriter) wh = emc_writer_new(fh, EMC_KIND_HEAD);
  /* Block messages and announcements in time order (the sightings were recorded as they happened). */
  g_autoptr(GArray) msgs = g_array_new(FALSE, FALSE, sizeof(Seen));
  g_autoptr(GArray) anns = g_array_new(FALSE, FALSE, sizeof(Seen));
  for (guint i = 0; i < sightings->len; i++) {
    const ObsSighting *s = &g_array_index(sightings, ObsSighting, i);
    if (s->block_msg_ns != OBS_TIME_NONE) g_array_append_val(msgs, ((Seen){s, s->block_msg_ns}));
    if (s->announce_ns != OBS_TIME_NONE) g_array_append_val(anns, ((Seen){s, s->announce_ns}));
  }
  g_array_sort(msgs, cmp_seen);
  g_array_sort(anns, cmp_seen);
  g_autoptr(GArray) txs = g_array_new(FALSE, FALSE, sizeof(EmcHash));
  g_autoptr(GArray) uncles = g_array_new(FALSE, FALSE, sizeof(EmcHash));
  g_autoptr(GHashTable) have = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  uint64_t head = OBS_GENESIS_ID;
  double head_td = 0;
  GError *e = NULL;
  for (guint i = 0; i < msgs->len; i++) {
    const Seen *m = &g_array_index(msgs, Seen, i);
    const ObsBlock *b = pow_world_block(world, m->s->block);
    EmcBlock eb;
    fill_block(sc, txw, b, m->t, &eb, txs, uncles);
    if (!emc_writer_write_block(wb, &eb, &e)) return fail_write(error, pb, e);
    g_hash_table_add(have, g_memdup2(&b->id, sizeof b->id));
    double t = total_difficulty(world, td, b->id);
    if (t > head_td && (b->parent == OBS_GENESIS_ID || g_hash_table_contains(have, &b->parent) || b->parent == head)) {
      head = b->id;
      head_td = t;
      EmcHead eh = {.local_ns = local_ns(m->t), .number = b->height};
      emc_hash_from_id(b->id, &eh.hash);
      if (!emc_writer_write_head(wh, &eh, &e)) return fail_write(error, ph, e);
    }
  }
  for (guint i = 0; i < anns->len; i++) {
    const Seen *a = &g_array_index(anns, Seen, i);
    EmcAnnouncement ea = {.local_ns = local_ns(a->t)};
    emc_hash_from_id(a->s->block, &ea.hash);
    if (!emc_writer_write_announcement(wa, &ea, &e)) return fail_write(error, pa, e);
  }
  if (!txw) return TRUE;
  FILE *ft = sim_outdir_create(out, pt, error);
  if (!ft) return FALSE;
  g_autoptr(EmcWriter) wt = emc_writer_new(ft, EMC_KIND_TX);
  guint64 n = tx_world_log_n_txs(txw);
  g_autoptr(GArray) idx = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_autofree int64_t *when = g_new(int64_t, MAX(n, 1));
  for (guint64 i = 0; i < n; i++) {
    TxLogView t;
    tx_world_log_tx(txw, i, &t);
    when[i] = t.recv ? t.recv[v] : OBS_TIME_NONE;
    if (when[i] != OBS_TIME_NONE) g_array_append_val(idx, i);
  }
  g_array_sort_with_data(idx, cmp_tx_time, when);
  EmcAddress to_fixed;
  emc_address_from_id(UINT64_C(0x7070707070707070), &to_fixed);
  for (guint k = 0; k < idx->len; k++) {
    guint64 i = g_array_index(idx, guint64, k);
    TxLogView t;
    tx_world_log_tx(txw, i, &t);
    EmcTx et;
    memset(&et, 0, sizeof et);
    et.local_ns = local_ns(when[i]);
    emc_hash_from_id(t.id, &et.hash);
    et.gas_limit = t.gas_limit;
    uint64_t price_wei = (uint64_t)llround(t.price_gwei * 1e9);
    emc_u256_from_u64(&et.gas_price_wei, price_wei);
    emc_u256_from_u64(&et.value_wei, 0);
    et.nonce = t.nonce;
    et.type = (EmcTxType)t.type;
    /* Cost = value + gas limit x price; it fits 64 bits for any price below 2.3e9 gwei at 8 M gas. */
    emc_u256_from_u64(&et.cost_wei, price_wei * (uint64_t)t.gas_limit);
    et.size_bytes = t.bytes;
    et.has_to = t.type != OBS_TX_CC;
    if (et.has_to) et.to = to_fixed;
    emc_address_from_id(t.sender + 1, &et.from);
    if (!emc_writer_write_tx(wt, &et, &e)) return fail_write(error, pt, e);
  }
  return TRUE;
}

gboolean sim_emc_write_logs(SimOutDir *out, const SimScenario *sc, const PowWorld *world, GError **error) {
  if (!write_pools(out, sc, world, error)) return FALSE;
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  gpointer state = pow_world_net_state(world);
  guint nv = net->n_vantages && state ? net->n_vantages(state) : 0;
  g_autoptr(GHashTable) td = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint v = 0; v < nv; v++)
    if (!write_vantage(out, sc, world, v, net->vantage_name(state, v), net->vantage_sightings(state, v), td, error))
      return FALSE;
  return TRUE;
}
