/* emclog.c: simulated EMC logs (see emclog.h). */
#include "emclog.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emc.h"
#include "rng.h"

/* The synthetic coinbase of miner `m` (a pool of several independent miners, like "Others", has one
 * address per miner, so runs stay per miner when the logs are read back): a fixed id, never zero. */
static uint64_t miner_address_id(guint m) { return sim_mix64(UINT64_C(0xC0B4A5E) + m) | 1; }

/* The coinbase of miner `m`: its pool's `coinbase` (validated by the loader) or the synthetic one. */
static void miner_address(const SimScenario *sc, const PowWorld *world, guint m, EmcAddress *a) {
  const char *cb = sc->pools[pow_world_miner_pool(world, m, NULL)].coinbase;
  if (cb && *cb && emc_address_parse(cb, strlen(cb), a)) return;
  emc_address_from_id(miner_address_id(m), a);
}

/* The Number the logs give to `height` (chain.first_block_number for height 1). */
static uint64_t block_number(const SimScenario *sc, uint32_t height) {
  int64_t first = sc->pow.chain.first_block_number > 0 ? sc->pow.chain.first_block_number : 1;
  return (uint64_t)first + height - 1;
}

/* The ParentHash of a block: its parent's hash; for height 1 the genesis's, all zero (what our readers take
 * for the genesis), or, when the numbers start above 1, a stand-in for the real chain's block below the
 * first one (our readers take a zero parent hash for block 1's only). */
static void parent_hash(const SimScenario *sc, const ObsBlock *b, EmcHash *h) {
  if (b->parent == OBS_GENESIS_ID && block_number(sc, 1) > 1) {
    emc_hash_from_id(sim_mix64(UINT64_C(0x9A2E47) ^ block_number(sc, 1)) | 1, h);
    return;
  }
  emc_hash_from_id(b->parent, h);
}

/* A transaction's hash: a fixed bijective mix of its id in the first 8 bytes, so that hashes sort as
 * randomly as real ones (the study's scripts search sorted hash columns, and one of them,
 * Step-2-Set-Gas-Used.py, fails when the largest hash in txs.log is past every hash in txgasused.log, as
 * the newest, still pending transactions always were with ids in creation order). */
static void tx_hash(uint64_t id, EmcHash *h) { emc_hash_from_id(sim_mix64(id), h); }

/* UncleHash, the hash of the header's uncle list: Keccak-256 of the empty RLP list (0xc0) without uncles,
 * as every real log line shows it (0x1dcc4de8...); with uncles, whose headers the simulation does not have,
 * Keccak-256 of their hashes one after the other (a stand-in that differs per uncle set, never zero). */
static void uncle_hash(const EmcHash *uncles, guint n, EmcHash *h) {
  static const uint8_t empty_list = 0xc0;
  if (n == 0)
    emc_keccak256(&empty_list, 1, h->bytes);
  else
    emc_keccak256(uncles, n * sizeof *uncles, h->bytes);
}

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
    miner_address(sc, world, m, &a);
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

static void fill_block(const SimScenario *sc, const PowWorld *world, TxWorld *txw, const ObsBlock *b, int64_t t,
                       EmcBlock *eb, GArray *txs, GArray *uncles) {
  memset(eb, 0, sizeof *eb);
  eb->local_ns = local_ns(t);
  emc_hash_from_id(b->id, &eb->hash);
  eb->number = block_number(sc, b->height);
  eb->gas_limit = (uint64_t)sc->pow.chain.block_gas_limit;
  eb->gas_used = b->gas_used;
  emc_u256_from_u64(&eb->difficulty, (uint64_t)llround(b->difficulty));
  eb->time_s = (uint64_t)(EMC_SIM_EPOCH_S + b->timestamp_s);
  miner_address(sc, world, b->miner, &eb->coinbase);
  parent_hash(sc, b, &eb->parent);
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
    tx_hash(ids ? ids[k] : (sim_mix64(b->id ^ sim_mix64(k + 1)) | 1), &h);
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
  uncle_hash(eb->uncles, eb->n_uncles, &eb->uncle_hash);
}

static gint cmp_tx_time(gconstpointer a, gconstpointer b, gpointer user) {
  const int64_t *t = user;
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  if (t[x] != t[y]) return t[x] < t[y] ? -1 : 1;
  return x < y ? -1 : x > y;
}

static gboolean write_vantage(SimOutDir *out, const SimScenario *sc, const PowWorld *world, guint v,
                              const char *name, const GArray *sightings, GHashTable *td, GHashTable *gas,
                              GError **error) {
  TxWorld *txw = pow_world_tx(world);
  g_autofree char *pb = g_strdup_printf("emc/%s/" SIM_EMC_BLOCKS_LOG, name),
                  *pa = g_strdup_printf("emc/%s/" SIM_EMC_ANNOUNCEMENTS_LOG, name),
                  *ph = g_strdup_printf("emc/%s/" SIM_EMC_HEADS_LOG, name),
                  *pt = g_strdup_printf("emc/%s/" SIM_EMC_TXS_LOG, name),
                  *pg = g_strdup_printf("emc/%s/" SIM_EMC_TXGASUSED_LOG, name);
  FILE *fb = sim_outdir_create(out, pb, error);
  FILE *fa = fb ? sim_outdir_create(out, pa, error) : NULL;
  FILE *fh = fa ? sim_outdir_create(out, ph, error) : NULL;
  FILE *fg = fh && txw ? sim_outdir_create(out, pg, error) : NULL;
  if (!fh || (txw && !fg)) return FALSE;
  g_autoptr(EmcWriter) wb = emc_writer_new(fb, EMC_KIND_BLOCK);
  g_autoptr(EmcWriter) wa = emc_writer_new(fa, EMC_KIND_ANNOUNCEMENT);
  g_autoptr(EmcWriter) wh = emc_writer_new(fh, EMC_KIND_HEAD);
  g_autoptr(EmcWriter) wg = fg ? emc_writer_new(fg, EMC_KIND_TX_GAS_USED) : NULL;
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
    fill_block(sc, world, txw, b, m->t, &eb, txs, uncles);
    if (!emc_writer_write_block(wb, &eb, &e)) return fail_write(error, pb, e);
    /* Geth logged TxGasUsed (the tx's gas limit) for each transaction as it executed a block; here once per
     * block, at its first reception in full. */
    gboolean first = g_hash_table_add(have, g_memdup2(&b->id, sizeof b->id));
    for (guint k = 0; wg && first && k < eb.n_txs; k++) {
      uint64_t tid = emc_hash_id(&eb.txs[k]);
      gpointer gl = g_hash_table_lookup(gas, &tid);
      EmcTxGasUsed eg = {.local_ns = eb.local_ns, .block = eb.hash, .tx = eb.txs[k],
                         .gas = gl ? (uint64_t)GPOINTER_TO_SIZE(gl) : EMC_U64_NONE};
      if (!emc_writer_write_tx_gas_used(wg, &eg, &e)) return fail_write(error, pg, e);
    }
    double t = total_difficulty(world, td, b->id);
    if (t > head_td && (b->parent == OBS_GENESIS_ID || g_hash_table_contains(have, &b->parent) || b->parent == head)) {
      head = b->id;
      head_td = t;
      EmcHead eh = {.local_ns = local_ns(m->t), .number = block_number(sc, b->height)};
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
    tx_hash(t.id, &et.hash);
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

/* ---- The study's join table (emclog.h) ---- */

#define N_STUDY_VANTAGES 4

typedef struct {
  int64_t ms[N_STUDY_VANTAGES]; /* first observation as logged: Unix ms, G_MAXINT64 where never */
  guint8 full;                  /* bit v: vantage v received the block in full ("captured locally") */
} Join;

typedef struct {
  const ObsBlock *b;
  const Join *j;
  int64_t first_ms;
} Row;

static gint cmp_row(gconstpointer a, gconstpointer b) {
  const Row *x = a, *y = b;
  if (x->b->height != y->b->height) return x->b->height < y->b->height ? -1 : 1;
  return x->b->id < y->b->id ? -1 : x->b->id > y->b->id;
}

static int64_t floor_ms(int64_t ns) { return ns >= 0 ? ns / 1000000 : -((-ns + 999999) / 1000000); }

/* `x` as Python's repr() writes a float: the shortest digits that read back as `x`, in fixed notation for
 * decimal exponents -4 .. 15 ("0.013", "12.0", "13.399000000000001"), else as "1.5e+16" / "1e-05". */
static void put_py_float(GString *g, double x) {
  char buf[40];
  int p = 1;
  for (; p < 17; p++) {
    g_snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (g_ascii_strtod(buf, NULL) == x) break;
  }
  g_snprintf(buf, sizeof buf, "%.*e", p - 1, x);
  /* buf: [-]d[.ddd]e(+|-)XX */
  const char *c = buf;
  if (*c == '-') g_string_append_c(g, *c++);
  char digits[24];
  int nd = 0;
  for (; *c != 'e'; c++)
    if (*c != '.') digits[nd++] = *c;
  int e = atoi(c + 1);
  if (e >= -4 && e < 16) {
    if (e < 0) {
      g_string_append(g, "0.");
      for (int i = -1; i > e; i--) g_string_append_c(g, '0');
      g_string_append_len(g, digits, nd);
    } else {
      for (int i = 0; i <= e; i++) g_string_append_c(g, i < nd ? digits[i] : '0');
      g_string_append_c(g, '.');
      if (nd > e + 1)
        g_string_append_len(g, digits + e + 1, nd - e - 1);
      else
        g_string_append_c(g, '0');
    }
  } else {
    g_string_append_c(g, digits[0]);
    if (nd > 1) {
      g_string_append_c(g, '.');
      g_string_append_len(g, digits + 1, nd - 1);
    }
    g_string_append_printf(g, "e%c%02d", e < 0 ? '-' : '+', ABS(e));
  }
}

/* A duration of `ms` milliseconds as pandas' Timedelta.total_seconds() gives it (days * 86400 + seconds +
 * microseconds / 1e6, with seconds and microseconds the non-negative remainders), written by Python. */
static void put_seconds(GString *g, int64_t ms) {
  int64_t whole = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  int64_t us = (ms - whole * 1000) * 1000;
  put_py_float(g, (double)whole + (double)us / 1e6);
}

/* A UTC time as pandas writes a Timestamp: "2019-04-01 00:00:08.601000+00:00", no fraction on a whole second. */
static void put_pandas_time(GString *g, int64_t ms) {
  int64_t s = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
  g_autoptr(GDateTime) dt = g_date_time_new_from_unix_utc(s);
  g_autofree char *text = dt ? g_date_time_format(dt, "%Y-%m-%d %H:%M:%S") : g_strdup("");
  g_string_append(g, text);
  if (ms - s * 1000) g_string_append_printf(g, ".%03d000", (int)(ms - s * 1000));
  g_string_append(g, "+00:00");
}

static gboolean write_study_table(SimOutDir *out, const SimScenario *sc, const PowWorld *world, const AnChain *chain,
                                  guint nv, GHashTable *joins, GError **error) {
  TxWorld *txw = pow_world_tx(world);
  const AnChainSummary *cs = an_chain_summary(chain);
  /* Rows: window blocks every vantage point received in full (the study's Step 4 drops the others). */
  g_autoptr(GArray) rows = g_array_new(FALSE, FALSE, sizeof(Row));
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, joins);
  while (g_hash_table_iter_next(&it, &k, &val)) {
    const Join *j = val;
    if (j->full != (1u << nv) - 1 || !an_chain_block_in_window(chain, *(const uint64_t *)k)) continue;
    Row r = {.b = an_chain_block(chain, *(const uint64_t *)k), .j = j, .first_ms = G_MAXINT64};
    for (guint v = 0; v < nv; v++) r.first_ms = MIN(r.first_ms, j->ms[v]);
    g_array_append_val(rows, r);
  }
  g_array_sort(rows, cmp_row);
  /* Runs of one pool over the window's main chain (the study's SameMinerSeqLen, PositionInsideSeq). */
  uint32_t top = (uint32_t)cs->heights;
  g_autofree uint32_t *run_len = g_new0(uint32_t, top + 2), *run_pos = g_new0(uint32_t, top + 2);
  for (uint32_t h = 1; h <= top;) {
    const ObsBlock *m = an_chain_main_block(chain, h);
    guint g = m ? an_chain_miner_group(chain, m->miner) : G_MAXUINT;
    uint32_t e = h;
    while (e + 1 <= top) {
      const ObsBlock *n = an_chain_main_block(chain, e + 1);
      if (!n || g == G_MAXUINT || an_chain_miner_group(chain, n->miner) != g) break;
      e++;
    }
    for (uint32_t x = h; x <= e; x++) run_len[x] = e - h + 1, run_pos[x] = x - h + 1;
    h = e + 1;
  }
  /* FirstObservation of the main block at each height, where it is a row. */
  g_autofree int64_t *main_first = g_new(int64_t, top + 2);
  for (uint32_t h = 0; h <= top + 1; h++) main_first[h] = INT64_MIN;
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    AnBlockType t;
    if (an_chain_block_type(chain, r->b->id, &t) && t == AN_BLOCK_MAIN) main_first[r->b->height] = r->first_ms;
  }
  guint n_groups = an_chain_n_pools(chain);
  g_autofree int64_t *pool_prev_first = g_new0(int64_t, n_groups + 1);
  g_autofree uint32_t *pool_prev_height = g_new0(uint32_t, n_groups + 1);
  g_autofree gboolean *pool_seen = g_new0(gboolean, n_groups + 1);

  FILE *f = sim_outdir_create(out, "emc/" SIM_EMC_PROPAGATION_TABLE, error);
  if (!f) return FALSE;
  g_autoptr(GString) g = g_string_sized_new(512);
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    const ObsBlock *b = r->b;
    AnBlockType t = AN_BLOCK_UNREFERENCED;
    an_chain_block_type(chain, b->id, &t);
    g_string_truncate(g, 0);
    EmcHash h;
    char text[EMC_HASH_TEXT_BYTES];
    emc_hash_from_id(b->id, &h);
    emc_hash_format(&h, text);
    g_string_append_printf(g, "%s,%" G_GUINT64_FORMAT ",%s", text, block_number(sc, b->height),
                           t == AN_BLOCK_MAIN ? "Main" : t == AN_BLOCK_UNCLE ? "Recognized" : "Uncle");
    for (guint v = 0; v < nv; v++) {
      char tt[EMC_TIME_TEXT_BYTES];
      emc_time_format(r->j->ms[v] * 1000000, 0, tt);
      g_string_append_printf(g, ",%s", tt);
    }
    g_string_append_c(g, ',');
    put_pandas_time(g, r->first_ms);
    for (guint v = 0; v < nv; v++) {
      g_string_append_c(g, ',');
      put_seconds(g, r->j->ms[v] - r->first_ms);
    }
    guint grp = an_chain_miner_group(chain, b->miner);
    guint n_tx = b->n_tx;
    if (txw) tx_world_log_block_txs(txw, b->id, &n_tx);
    g_string_append_printf(g, ",%s,%u,", grp != G_MAXUINT ? an_chain_pool(chain, grp)->name : "", n_tx);
    if (t == AN_BLOCK_MAIN && run_len[b->height])
      g_string_append_printf(g, "%u,%u", run_len[b->height], run_pos[b->height]);
    else
      g_string_append_c(g, ',');
    g_string_append_printf(g, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", (uint64_t)llround(b->difficulty),
                           (uint64_t)b->size_bytes);
    if (b->height >= 2 && main_first[b->height - 1] != INT64_MIN) put_seconds(g, r->first_ms - main_first[b->height - 1]);
    g_string_append_c(g, ',');
    if (grp != G_MAXUINT) {
      if (pool_seen[grp] && pool_prev_height[grp] + 1 == b->height) put_seconds(g, r->first_ms - pool_prev_first[grp]);
      pool_seen[grp] = TRUE;
      pool_prev_height[grp] = b->height;
      pool_prev_first[grp] = r->first_ms;
    }
    g_string_append_c(g, '\n');
    if (fwrite(g->str, 1, g->len, f) != g->len) break;
  }
  if (ferror(f)) return fail_write(error, "emc/" SIM_EMC_PROPAGATION_TABLE, NULL);
  return TRUE;
}

gboolean sim_emc_write_logs(SimOutDir *out, const SimScenario *sc, const PowWorld *world, const AnChain *chain,
                            GError **error) {
  if (!write_pools(out, sc, world, error)) return FALSE;
  const PowNetworkModel *net = (const PowNetworkModel *)sc->pow.network.model;
  gpointer state = pow_world_net_state(world);
  guint nv = net->n_vantages && state ? net->n_vantages(state) : 0;
  g_autoptr(GHashTable) td = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  /* Gas limit by transaction id, for txgasused.log. */
  g_autoptr(GHashTable) gas = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  TxWorld *txw = pow_world_tx(world);
  for (guint64 i = 0, n = txw ? tx_world_log_n_txs(txw) : 0; i < n; i++) {
    TxLogView t;
    tx_world_log_tx(txw, i, &t);
    uint64_t key = sim_mix64(t.id); /* the id in its hash (tx_hash) */
    g_hash_table_insert(gas, g_memdup2(&key, sizeof key), GSIZE_TO_POINTER((gsize)t.gas_limit));
  }
  for (guint v = 0; v < nv; v++)
    if (!write_vantage(out, sc, world, v, net->vantage_name(state, v), net->vantage_sightings(state, v), td, gas,
                       error))
      return FALSE;
  if (nv != N_STUDY_VANTAGES || !chain) return TRUE;
  /* The four vantage points' first observations as logged (milliseconds, rounded towards the past). */
  g_autoptr(GHashTable) joins = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint v = 0; v < nv; v++) {
    const GArray *sg = net->vantage_sightings(state, v);
    for (guint i = 0; i < sg->len; i++) {
      const ObsSighting *s = &g_array_index(sg, ObsSighting, i);
      Join *j = g_hash_table_lookup(joins, &s->block);
      if (!j) {
        j = g_new(Join, 1);
        for (guint x = 0; x < N_STUDY_VANTAGES; x++) j->ms[x] = G_MAXINT64;
        j->full = 0;
        g_hash_table_insert(joins, g_memdup2(&s->block, sizeof s->block), j);
      }
      if (s->block_msg_ns != OBS_TIME_NONE) {
        j->full |= (guint8)(1u << v);
        j->ms[v] = MIN(j->ms[v], floor_ms(local_ns(s->block_msg_ns)));
      }
      if (s->announce_ns != OBS_TIME_NONE) j->ms[v] = MIN(j->ms[v], floor_ms(local_ns(s->announce_ns)));
    }
  }
  return write_study_table(out, sc, world, chain, nv, joins, error);
}
