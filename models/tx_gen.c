/* tx_gen.c: the generator: senders, arrivals, gas and prices of new transactions and their receptions. */
#include "tx-private.h"

#include <pthread.h>

static void record(TxWorld *w, uint32_t i);

static uint32_t new_tx(TxWorld *w, uint32_t sender, SimTime created);

static void session_heap_push(TxWorld *w, Session *s) {
  g_array_append_val(w->sessions, *s);
  Session *a = (Session *)w->sessions->data;
  guint i = w->sessions->len - 1;
  while (i > 0 && a[(i - 1) / 2].t > a[i].t) {
    Session tmp = a[i];
    a[i] = a[(i - 1) / 2];
    a[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static void session_heap_fix_top(TxWorld *w) {
  Session *a = (Session *)w->sessions->data;
  guint n = w->sessions->len, i = 0;
  for (;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && a[l].t < a[m].t) m = l;
    if (r < n && a[r].t < a[m].t) m = r;
    if (m == i) break;
    Session tmp = a[i];
    a[i] = a[m];
    a[m] = tmp;
    i = m;
  }
}

void txw_acct_prop_free(gpointer p) {
  AcctProp *ap = p;
  g_free(ap->prev);
  g_free(ap->links);
  g_free(ap);
}

/* A session ends: without peer_fifo its state goes; with, the account's state retires when no session of the
 * account is live, and is freed once nothing of it can still constrain (acct_prune). */
static void acct_release(TxWorld *w, AcctProp *ap) {
  if (!ap) return;
  if (!w->cfg.p.peer_fifo) {
    txw_acct_prop_free(ap);
    return;
  }
  if (--ap->refs == 0) {
    ap->retired = TRUE;
    if (!ap->in_list) g_array_append_val(w->retired, ap);
    ap->in_list = TRUE;
  }
}

/* Frees the retired accounts' states whose receptions are all before `now`; forgets the ones live again. */
static void acct_prune(TxWorld *w, SimTime now) {
  guint k = 0;
  for (guint i = 0; i < w->retired->len; i++) {
    AcctProp *ap = g_array_index(w->retired, AcctProp *, i);
    if (!ap->retired) { /* live again: out of the list */
      ap->in_list = FALSE;
      continue;
    }
    if (ap->busy < now) {
      g_hash_table_remove(w->acct_prop, GUINT_TO_POINTER(ap->account + 1)); /* frees it */
      continue;
    }
    g_array_index(w->retired, AcctProp *, k++) = ap;
  }
  g_array_set_size(w->retired, k);
}

static AcctProp *acct_take(TxWorld *w, uint32_t account) {
  AcctProp *ap = w->cfg.p.peer_fifo ? g_hash_table_lookup(w->acct_prop, GUINT_TO_POINTER(account + 1)) : NULL;
  if (!ap) {
    ap = g_new0(AcctProp, 1);
    ap->account = account;
    ap->busy = INT64_MIN;
    if (w->cfg.p.peer_fifo) g_hash_table_insert(w->acct_prop, GUINT_TO_POINTER(account + 1), ap);
  }
  ap->refs++;
  ap->retired = FALSE;
  return ap;
}

static void session_heap_pop(TxWorld *w) {
  Session *a = (Session *)w->sessions->data;
  acct_release(w, a[0].ap);
  a[0] = a[w->sessions->len - 1];
  g_array_set_size(w->sessions, w->sessions->len - 1);
  if (w->sessions->len) session_heap_fix_top(w);
}

/* At least 1 ns, so that creation always advances; at most SIM_DURATION_MAX, so that adding it to a time
 * within the run cannot overflow (a rate of 1e-300/s draws 1e300 s). */
SimTime txw_exp_ns(SimRng *r, double mean_s) {
  return MAX(1, sim_duration_clamp(sim_time_from_s(sim_rng_exponential(r, mean_s))));
}

static double draw_price(TxWorld *w) {
  double u = sim_rng_uniform(&w->rng);
  guint c = 0;
  while (c + 1 < w->cfg.n_classes && u >= w->cum_class[c]) c++;
  const TxPriceClass *pc = &w->cfg.classes[c];
  double v = sim_rng_uniform(&w->rng);
  if (pc->max_gwei <= pc->min_gwei) return pc->min_gwei;
  if (pc->min_gwei <= 0) return v * pc->max_gwei;
  return pc->min_gwei * exp(v * log(pc->max_gwei / pc->min_gwei));
}

static double draw_gas(TxWorld *w, double median, double sigma) {
  double g = median * exp(sigma * gsl_ran_ugaussian(sim_rng_gsl(&w->rng)));
  return floor(CLAMP(g, MIN_GAS, w->gas_limit));
}

/* Whether censoring pools refuse this transaction: its sender is in the censored share or list, or the
 * transaction itself is in the censored share (keyed hashes, so the sets do not depend on draw order). */
static gboolean is_censored(const TxWorld *w, uint32_t sender, uint64_t id) {
  const TxConfig *c = &w->cfg;
  if (c->censor_share > 0 && (double)(sim_mix64(w->seed ^ sim_mix64((uint64_t)sender + 1)) >> 11) * 0x1.0p-53 < c->censor_share)
    return TRUE;
  if (c->censor_tx_share > 0 &&
      (double)(sim_mix64(~w->seed ^ sim_mix64(id)) >> 11) * 0x1.0p-53 < c->censor_tx_share)
    return TRUE;
  guint64 key = sender;
  return c->n_censor_senders && bsearch(&key, c->censor_senders, c->n_censor_senders, sizeof key, txw_cmp_u64);
}

/* The part of a burst (its entry node) that the session's next transaction belongs to. */
static guint session_part(const Session *s) {
  uint64_t i = s->total - s->left;
  return (guint)(i * s->n_entries / s->total);
}

/* Draws session s's next transaction into the ring's slot `at` (the generator's side: its streams, the
 * sessions' accounts and the propagation scratch; no slot, id or nonce yet, which txw_commit gives). */
static void gen_emit(TxWorld *w, Session *s, guint64 at) {
  const TxParams *p = &w->cfg.p;
  GenTx *g = &w->ring.tx[at % GEN_CAP];
  int64_t *arr = w->ring.arrive + (at % GEN_CAP) * MAX(w->n_pools, 1);
  int64_t *recv = w->ring.recv + (at % GEN_CAP) * MAX(w->n_vantages, 1);
  *g = (GenTx){.created = s->t, .sender = s->sender};
  double u = sim_rng_uniform(&w->rng);
  double bytes;
  if (u < p->share_tx) {
    g->type = OBS_TX_TX;
    g->gas_limit = g->gas_used = (uint32_t)p->tx_gas;
    bytes = p->bytes_tx;
  } else if (u < p->share_tx + p->share_mc) {
    g->type = OBS_TX_MC;
    g->gas_limit = (uint32_t)draw_gas(w, p->mc_gas_median, p->mc_gas_sigma);
    g->gas_used = (uint32_t)MAX(MIN_GAS, floor(g->gas_limit * p->used_fraction));
    bytes = p->bytes_mc;
  } else {
    g->type = OBS_TX_CC;
    g->gas_limit = (uint32_t)draw_gas(w, p->cc_gas_median, p->cc_gas_sigma);
    g->gas_used = (uint32_t)MAX(MIN_GAS, floor(g->gas_limit * p->used_fraction));
    bytes = p->bytes_cc;
  }
  g->bytes = (uint32_t)bytes;
  g->price = draw_price(w);
  g->bin = txw_price_bin(g->price);

  /* Receptions: vantage points first, then pools. */
  for (guint v = 0; v < w->n_vantages; v++) recv[v] = OBS_TIME_NONE;
  if (w->netc.topo) {
    guint T = w->n_targets;
    int64_t *dd = w->tdelay, *hh = w->thop;
    if (p->propagation == TX_PROP_FLOOD) {
      AcctProp *ap = s->ap;
      if (!ap->prev) {
        ap->prev = g_new(int64_t, w->netc.topo->n_nodes);
        for (guint32 n = 0; n < w->netc.topo->n_nodes; n++) ap->prev[n] = INT64_MIN / 4;
      }
      if (p->peer_fifo && !ap->links) ap->links = txw_links_new(w);
      int64_t last = txw_flood(w, &w->prop_rng, s->burst ? s->entry_node[session_part(s)] : s->node, bytes, ap->prev, s->t, ap->links);
      ap->busy = MAX(ap->busy, s->t + last);
      txw_flood_targets(w, dd, hh);
      for (guint j = 0; j < T; j++) dd[j] = dd[j] >= INT64_MAX / 4 ? INT64_MAX / 4 : dd[j] + s->t;
    } else {
      const RegionSamples *rs;
      guint k;
      if (s->burst) {
        guint part = session_part(s);
        rs = &w->regions[s->entry_region[part]];
        k = s->entry_tree[part];
      } else {
        rs = &w->regions[s->region];
        k = (guint)sim_rng_below(&w->rng, rs->n);
      }
      AcctProp *ap = s->ap;
      if (!ap->prev) ap->prev = g_new(int64_t, 2 * (gsize)T);
      int64_t *prev = ap->prev, busy = ap->busy;
      const int64_t *rd = rs->d + (gsize)k * T, *rh = rs->hop + (gsize)k * T;
      const int64_t t0 = s->t;
      const gboolean has_prev = ap->has_prev, fifo = p->peer_fifo && has_prev;
      for (guint j = 0; j < T; j++) {
        int64_t h = rh[j];
        int64_t at_j = t0 + rd[j];
        if (has_prev) {
          int64_t gap = prev[2 * j] - prev[2 * j + 1] + h;
          if (gap > at_j) at_j = gap;
          /* In-order connections and the gap hold at every node: a node that is not the entry node receives
           * a sender's transactions in nonce order (no drops in "region"). */
          if (fifo && prev[2 * j] > at_j) at_j = prev[2 * j];
        }
        prev[2 * j] = at_j;
        prev[2 * j + 1] = h;
        if (at_j < INT64_MAX / 4) busy = MAX(busy, at_j);
        dd[j] = at_j;
        hh[j] = h;
      }
      ap->busy = busy;
    }
    for (guint v = 0; v < w->n_vantages; v++) {
      recv[v] = dd[v] >= INT64_MAX / 4 ? OBS_TIME_NONE : dd[v];
      g->never += dd[v] >= INT64_MAX / 4;
    }
    for (guint q = 0; q < w->n_pools; q++) {
      arr[q] = dd[w->n_vantages + q];
      g->never += arr[q] >= INT64_MAX / 4;
    }
  } else {
    for (guint q = 0; q < w->n_pools; q++) arr[q] = s->t + sim_delay_sample(&w->cfg.pool_delay, &w->rng);
  }
  if (s->ap) s->ap->has_prev = TRUE;
}

/* The drawn transaction `at` into the world (the engine's side): a slot, an id and a nonce, then the metrics
 * and the mempools. */
static void txw_commit(TxWorld *w, guint64 at) {
  const GenTx *g = &w->ring.tx[at % GEN_CAP];
  uint32_t i = new_tx(w, g->sender, g->created);
  TxE *e = &w->tx[i];
  e->type = g->type;
  e->gas_limit = g->gas_limit;
  e->gas_used = g->gas_used;
  e->bytes = g->bytes;
  e->price = g->price;
  e->bin = g->bin;
  e->censored = w->censor_alpha > 0 && is_censored(w, g->sender, e->id);
  if (w->n_pools)
    memcpy(w->arrive + (gsize)i * w->n_pools, w->ring.arrive + (at % GEN_CAP) * w->n_pools,
           w->n_pools * sizeof *w->arrive);
  if (w->n_vantages)
    memcpy(w->recv, w->ring.recv + (at % GEN_CAP) * w->n_vantages, w->n_vantages * sizeof *w->recv);
  w->never_received += g->never;
  record(w, i);
}

/* Hands a new transaction (slot i, receptions in w->recv) to the metrics and the mempools. */
static void record(TxWorld *w, uint32_t i) {
  const TxE *e = &w->tx[i];
  ObsTx rec = {.id = e->id, .sender = e->sender, .nonce = e->nonce, .created_ns = e->created, .type = e->type,
               .gas_limit = e->gas_limit, .gas_price_wei = e->price * 1e9, .censored = e->censored};
  g_autoptr(GError) err = NULL;
  gboolean ok = !w->sink.tx_seen || w->sink.tx_seen(w->sink.user, &rec, w->n_vantages ? w->recv : NULL, &err);
  g_assert(ok);
  w->created++;
  if (w->keep) {
    LogTx l = {.id = e->id, .sender = e->sender, .nonce = e->nonce, .type = e->type, .gas_limit = e->gas_limit,
               .bytes = e->bytes, .price = e->price};
    g_array_append_val(w->log_txs, l);
    g_array_append_vals(w->log_recv, w->recv, w->n_vantages);
  }
  txw_index_insert(w, i);
  if (w->in_index > (guint64)w->cfg.p.mempool_capacity) txw_evict_one(w);
}

/* A new slot for the sender's next nonce, linked after its live transactions. */
static uint32_t new_tx(TxWorld *w, uint32_t sender, SimTime created) {
  uint32_t i = txw_slot_new(w);
  TxE *e = &w->tx[i];
  memset(e, 0, sizeof *e);
  e->id = ++w->next_id;
  e->sender = sender;
  Sender *snd = &w->senders[sender];
  e->nonce = snd->next_nonce++;
  e->created = created;
  e->sprev = snd->tail;
  e->pred_clean = snd->tail != NONE && w->tx[snd->tail].n_incl == 0;
  e->snext = NONE;
  if (snd->tail != NONE) w->tx[snd->tail].snext = i; else snd->head = i;
  snd->tail = i;
  return i;
}

uint64_t tx_world_inject(TxWorld *w, uint32_t sender, double price_gwei, uint32_t gas_limit, uint32_t gas_used,
                         gboolean censored, SimTime created, SimTime arrive) {
  g_return_val_if_fail(sender < w->cfg.p.senders, 0);
  uint32_t i = new_tx(w, sender, created);
  TxE *e = &w->tx[i];
  e->type = gas_limit == MIN_GAS ? OBS_TX_TX : OBS_TX_MC;
  e->gas_limit = gas_limit;
  e->gas_used = gas_used;
  e->bytes = 100;
  e->price = price_gwei;
  e->bin = txw_price_bin(price_gwei);
  e->censored = censored;
  for (guint q = 0; q < w->n_pools; q++) w->arrive[(gsize)i * MAX(w->n_pools, 1) + q] = arrive;
  for (guint v = 0; v < w->n_vantages; v++) w->recv[v] = OBS_TIME_NONE;
  uint64_t id = e->id;
  record(w, i);
  return id;
}

GArray *tx_world_block_txs(const TxWorld *w, uint64_t block) {
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &block);
  if (!bt) return NULL;
  GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), bt->n);
  for (guint k = 0; k < bt->n; k++) g_array_append_val(a, bt->refs[k].id);
  return a;
}

uint64_t tx_world_nonce(const TxWorld *w, uint64_t id) {
  for (uint32_t i = 0; i < w->cap; i++)
    if (w->tx[i].id == id) return w->tx[i].nonce;
  return UINT64_MAX;
}

/* Mean transactions of a session: ordinary and burst sessions mixed. */
double txw_session_txs(const TxParams *p) {
  return (1 - p->burst_share) * p->txs_per_sender + p->burst_share * p->burst_txs;
}

static void new_session(TxWorld *w, SimTime t) {
  const TxParams *p = &w->cfg.p;
  Session s = {.t = t};
  s.sender = (uint32_t)sim_rng_below(&w->rng, (uint64_t)p->senders);
  s.burst = p->burst_share > 0 && sim_rng_uniform(&w->rng) < p->burst_share;
  double q = 1.0 / (s.burst ? p->burst_txs : p->txs_per_sender); /* geometric on 1, 2, ... with that mean */
  s.left = q >= 1 ? 1 : (uint32_t)MIN(1e9, 1 + floor(log(sim_rng_uniform_pos(&w->rng)) / log1p(-q)));
  s.total = s.left;
  s.n_entries = s.burst ? (guint8)MIN((uint32_t)p->burst_entry_nodes, s.total) : 1;
  if (w->netc.topo) {
    const NetTopology *topo = w->netc.topo;
    s.node = topo->n_special + (guint32)sim_rng_below(&w->rng, topo->n_nodes - topo->n_special);
    s.region = topo->region[s.node];
    for (guint e = 0; s.burst && e < s.n_entries; e++) {
      s.entry_node[e] = e == 0 ? s.node : topo->n_special + (guint32)sim_rng_below(&w->rng, topo->n_nodes - topo->n_special);
      s.entry_region[e] = topo->region[s.entry_node[e]];
      if (p->propagation == TX_PROP_REGION) {
        const RegionSamples *rs = &w->regions[s.entry_region[e]];
        s.entry_tree[e] = (uint32_t)sim_rng_below(&w->rng, rs->n);
      }
    }
  }
  if (w->netc.topo) {
    if (p->peer_fifo) acct_prune(w, t);
    s.ap = acct_take(w, s.sender);
  }
  session_heap_push(w, &s);
}

/* The generator (under the ring's lock, with room in the ring): draws the next transaction, making the
 * sessions due before it, if it comes no later than `limit`; FALSE (nothing changed past what is due by then)
 * if it would come after. The sessions' process is one sequence whoever runs it and however far ahead. */
static gboolean gen_next(TxWorld *w, SimTime limit) {
  for (;;) {
    SimTime ts = w->sessions->len ? g_array_index(w->sessions, Session, 0).t : SIM_TIME_MAX;
    if (w->next_session <= ts) {
      if (w->next_session > limit) return FALSE;
      new_session(w, w->next_session);
      w->next_session += txw_exp_ns(&w->rng, txw_session_txs(&w->cfg.p) / w->cfg.p.rate_per_s);
      continue;
    }
    if (ts > limit) return FALSE;
    Session *s = &g_array_index(w->sessions, Session, 0);
    gen_emit(w, s, w->ring.head);
    __atomic_store_n(&w->ring.head, w->ring.head + 1, __ATOMIC_RELEASE);
    if (--s->left == 0) {
      session_heap_pop(w);
    } else {
      s->t += txw_exp_ns(&w->rng, s->burst ? w->cfg.p.burst_gap_s : w->cfg.p.sender_gap_s);
      session_heap_fix_top(w);
    }
    return TRUE;
  }
}

static void gen_lock(GenRing *r) { pthread_mutex_lock(&r->lock); }

static void gen_unlock(GenRing *r) { pthread_mutex_unlock(&r->lock); }

/* Creates every transaction up to time `t`, in time order: those drawn ahead first, then drawn here. */
void txw_advance(TxWorld *w, SimTime t) {
  GenRing *r = &w->ring;
  for (;;) {
    guint64 tail = r->tail;
    if (tail == __atomic_load_n(&r->head, __ATOMIC_ACQUIRE)) {
      gen_lock(r);
      gboolean drawn = r->head != tail || gen_next(w, t); /* another thread may have drawn it meanwhile */
      gen_unlock(r);
      if (!drawn) return;
    }
    if (r->tx[tail % GEN_CAP].created > t) return;
    txw_commit(w, tail);
    __atomic_store_n(&r->tail, tail + 1, __ATOMIC_RELEASE);
  }
}

/* Far enough ahead for any run (a time the sessions' process never needs to pass: SimTime's range / 4). */
#define GEN_AHEAD_LIMIT (SIM_TIME_MAX / 4)

gboolean tx_world_side_work(gpointer p) {
  TxWorld *w = p;
  GenRing *r = &w->ring;
  if (__atomic_load_n(&r->closed, __ATOMIC_RELAXED) ||
      __atomic_load_n(&r->head, __ATOMIC_RELAXED) - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= GEN_CAP / 2 ||
      pthread_mutex_trylock(&r->lock) != 0)
    return FALSE;
  guint n = 0;
  while (n < 16 && !r->closed && r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) < GEN_CAP &&
         gen_next(w, GEN_AHEAD_LIMIT))
    n++;
  gen_unlock(r);
  return n > 0;
}

void txw_close_ahead(TxWorld *w) {
  gen_lock(&w->ring);
  __atomic_store_n(&w->ring.closed, 1, __ATOMIC_RELAXED);
  gen_unlock(&w->ring);
}
