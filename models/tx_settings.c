/* tx_settings.c: the transactions section of a scenario: its parameter tables, parsing and help. */
#include "tx-private.h"

static const char *const prop_choices[] = {"region", "flood", NULL};

const SimParamSpec tx_params[] = {
    {.name = "rate_per_s", .type = SIM_PARAM_NUMBER, .unit = "1/s", .min = 0, .max = 1e6, .min_open = TRUE,
     .def = 8.2, .offset = offsetof(TxParams, rate_per_s),
     .help = "transactions created per second (2019: 21.96 M unique seen / 31 days = 8.2)"},
    {.name = "txs_per_sender", .type = SIM_PARAM_NUMBER, .min = 1, .max = 1e6, .def = 2.5,
     .offset = offsetof(TxParams, txs_per_sender),
     .help = "mean transactions of an ordinary sender session, geometric (fitted: 2.49 per ordinary sender in "
             "the Rinkeby logs' 7.4 minutes)"},
    {.name = "sender_gap_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 1e-3, .max = 1e6, .def = 48,
     .offset = offsetof(TxParams, sender_gap_s),
     .help = "mean gap between an ordinary session's consecutive transactions, exponential (fitted: 48 s between "
             "first receptions in the Rinkeby logs); at least 1 ms: far above the 1 ns tick, which shorter gaps "
             "round to"},
    {.name = "burst_share", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .def = 0.058,
     .offset = offsetof(TxParams, burst_share),
     .help = "share of sessions that are bursts (fitted: 7 of the Rinkeby logs' 120 senders had most consecutive "
             "nonces in the same millisecond)"},
    {.name = "burst_txs", .type = SIM_PARAM_NUMBER, .min = 1, .max = 1e6, .def = 324,
     .offset = offsetof(TxParams, burst_txs),
     .help = "mean transactions of a burst, geometric (fitted: the Rinkeby burst senders' mean, 324)"},
    {.name = "burst_gap_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 1e-6, .max = 1e6, .def = 1e-4,
     .offset = offsetof(TxParams, burst_gap_s),
     .help = "mean gap between a burst's consecutive transactions, exponential (signed back to back; the logs' "
             "millisecond bounds it: 0.1 ms is a choice)"},
    {.name = "burst_entry_nodes", .type = SIM_PARAM_INT, .min = 1, .max = TX_MAX_ENTRY_NODES, .def = 2,
     .offset = offsetof(TxParams, burst_entry_nodes),
     .help = "nodes a burst enters at, its nonces split into that many contiguous parts (fitted: the median "
             "number of distinct arrival milliseconds of a Rinkeby burst sender, 2)"},
    {.name = "first_nonce_median", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1e12, .def = 251,
     .offset = offsetof(TxParams, first_nonce_median),
     .help = "median of an account's first nonce, lognormal (fitted: the Rinkeby logs' lowest nonce per sender, "
             "geometric mean 251); 0: every account starts at nonce 0"},
    {.name = "first_nonce_sigma", .type = SIM_PARAM_NUMBER, .min = 0, .max = 10, .def = 2.96,
     .offset = offsetof(TxParams, first_nonce_sigma),
     .help = "sigma of the accounts' log first nonce (fitted: 2.96 in the Rinkeby logs)"},
    {.name = "senders", .type = SIM_PARAM_INT, .min = 1, .max = 1e8, .def = 200000,
     .offset = offsetof(TxParams, senders),
     .help = "accounts that sessions pick from uniformly; each keeps its nonce across sessions (a choice)"},
    {.name = "share_tx", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .def = 0.5,
     .offset = offsetof(TxParams, share_tx), .help = "share of plain transfers (TX); the three shares sum to 1 (a choice)"},
    {.name = "share_mc", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .def = 0.49,
     .offset = offsetof(TxParams, share_mc), .help = "share of message calls (MC) (a choice)"},
    {.name = "share_cc", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .def = 0.01,
     .offset = offsetof(TxParams, share_cc), .help = "share of contract creations (CC) (a choice)"},
    {.name = "tx_gas", .type = SIM_PARAM_NUMBER, .unit = "gas", .min = 21000, .max = 1e9, .def = 21000,
     .offset = offsetof(TxParams, tx_gas), .help = "gas limit (and use) of a plain transfer (Ethereum: 21,000)"},
    {.name = "mc_gas_median", .type = SIM_PARAM_NUMBER, .unit = "gas", .min = 21000, .max = 1e9, .def = 60000,
     .offset = offsetof(TxParams, mc_gas_median),
     .help = "median gas limit of a message call, lognormal (a choice; pools-2019.json calibrates it to the "
             "published included rate, 7.7/s)"},
    {.name = "mc_gas_sigma", .type = SIM_PARAM_NUMBER, .min = 0, .max = 10, .def = 1.0,
     .offset = offsetof(TxParams, mc_gas_sigma), .help = "sigma of the message calls' log gas limit (a choice)"},
    {.name = "cc_gas_median", .type = SIM_PARAM_NUMBER, .unit = "gas", .min = 21000, .max = 1e9, .def = 1500000,
     .offset = offsetof(TxParams, cc_gas_median),
     .help = "median gas limit of a contract creation, lognormal (a choice)"},
    {.name = "cc_gas_sigma", .type = SIM_PARAM_NUMBER, .min = 0, .max = 10, .def = 0.7,
     .offset = offsetof(TxParams, cc_gas_sigma), .help = "sigma of the creations' log gas limit (a choice)"},
    {.name = "used_fraction", .type = SIM_PARAM_NUMBER, .min = 0, .max = 1, .min_open = TRUE, .def = 0.7,
     .offset = offsetof(TxParams, used_fraction),
     .help = "gas used / gas limit of message calls and creations (wallets over-provision; a choice)"},
    {.name = "bytes_tx", .type = SIM_PARAM_NUMBER, .unit = "bytes", .min = 1, .max = 1e7, .def = 110,
     .offset = offsetof(TxParams, bytes_tx), .help = "encoded size of a transfer (RLP of a signed transfer: ~110)"},
    {.name = "bytes_mc", .type = SIM_PARAM_NUMBER, .unit = "bytes", .min = 1, .max = 1e7, .def = 200,
     .offset = offsetof(TxParams, bytes_mc), .help = "encoded size of a message call (a choice)"},
    {.name = "bytes_cc", .type = SIM_PARAM_NUMBER, .unit = "bytes", .min = 1, .max = 1e7, .def = 3000,
     .offset = offsetof(TxParams, bytes_cc), .help = "encoded size of a contract creation (a choice)"},
    {.name = "mempool_capacity", .type = SIM_PARAM_INT, .min = 1, .max = 1e8, .def = 5120,
     .offset = offsetof(TxParams, mempool_capacity),
     .help = "transactions a mempool holds before evicting the cheapest (Geth 1.8: 4096 + 1024 slots)"},
    {.name = "propagation", .type = SIM_PARAM_ENUM, .choices = prop_choices, .def_str = "region",
     .offset = offsetof(TxParams, propagation),
     .help = "region: delays from shortest-path trees sampled per region at start; flood: one shortest-path "
             "flood per transaction (small runs)"},
    {.name = "region_samples", .type = SIM_PARAM_INT, .min = 1, .max = 100000, .def = 64,
     .offset = offsetof(TxParams, region_samples), .help = "region: trees sampled per region"},
    {.name = "tree_stop", .type = SIM_PARAM_BOOL, .def = 1, .offset = offsetof(TxParams, tree_stop),
     .help = "region: a sampled tree stops once every vantage point and pool has its time (exact: each node's "
             "link draws have their own stream; false: every tree spans the network, for checking)"},
    {.name = "peer_fifo", .type = SIM_PARAM_BOOL, .def = 1, .offset = offsetof(TxParams, peer_fifo),
     .help = "each connection delivers a sender's transactions in order, one list at a time (Geth 1.8.23 "
             "eth/peer.go: one broadcast loop per peer over TCP); with the gap hold, a node receives a sender's "
             "transactions in nonce order unless a queue drops; false: every message has its own latency draw"},
    {.name = "max_queued_lists", .type = SIM_PARAM_INT, .min = 0, .max = 1e9, .def = 128,
     .offset = offsetof(TxParams, max_queued_lists),
     .help = "flood with peer_fifo: lists of transactions a connection queues before it drops new ones (Geth "
             "1.8.23 eth/peer.go maxQueuedTxs = 128, AsyncSendTransactions); 0: never drops"},
    {.name = "batch_lists", .type = SIM_PARAM_BOOL, .def = 1, .offset = offsetof(TxParams, batch_lists),
     .help = "flood with peer_fifo: transactions a node promotes at one instant (a nonce gap filled, or one "
             "received message) go to each peer as one list and arrive together (Geth 1.8.23: AddRemotes, "
             "promoteExecutables' one NewTxsEvent, BroadcastTxs); false: one list per transaction"},
};

const guint tx_n_params = G_N_ELEMENTS(tx_params);

/* The study's gas price classes (ethereum-2019.json: 0, (0,20), [20,25), [25,105), >=105 gwei). Shares are
 * not published: these are choices (20 gwei was a common wallet default in 2019). */
static const TxPriceClass default_classes[] = {
    {0, 0, 0.01}, {1, 20, 0.62}, {20, 25, 0.25}, {25, 105, 0.10}, {105, 1000, 0.02},
};

static json_t *class_json(const TxPriceClass *c) {
  return json_pack("{s:f, s:f, s:f}", "min_gwei", c->min_gwei, "max_gwei", c->max_gwei, "share", c->share);
}

static gboolean parse_number(json_t *o, const char *key, const char *path, double *out, SimDiag *diag) {
  json_t *v = json_object_get(o, key);
  if (!v) {
    sim_diag_add(diag, path, "missing required key \"%s\"", key);
    return FALSE;
  }
  if (!json_is_number(v) || !isfinite(json_number_value(v))) {
    g_autofree char *p = g_strdup_printf("%s.%s", path, key);
    sim_diag_add(diag, p, "must be a number");
    return FALSE;
  }
  *out = json_number_value(v);
  return TRUE;
}

static void parse_classes(TxConfig *cfg, json_t *obj, const char *path, SimDiag *diag) {
  json_t *arr = json_object_get(obj, "gas_price_classes");
  g_autofree char *ap = g_strdup_printf("%s.gas_price_classes", path);
  if (!arr) {
    arr = json_array();
    for (guint i = 0; i < G_N_ELEMENTS(default_classes); i++) json_array_append_new(arr, class_json(&default_classes[i]));
    json_object_set_new(obj, "gas_price_classes", arr);
  }
  if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > TX_MAX_CLASSES) {
    sim_diag_add(diag, ap, "must be an array of 1 to %d objects {min_gwei, max_gwei, share}", TX_MAX_CLASSES);
    return;
  }
  double sum = 0;
  gboolean ok = TRUE;
  for (guint i = 0; i < json_array_size(arr); i++) {
    json_t *c = json_array_get(arr, i);
    g_autofree char *cp = g_strdup_printf("%s[%u]", ap, i);
    if (!json_is_object(c)) {
      sim_diag_add(diag, cp, "must be an object {min_gwei, max_gwei, share}");
      ok = FALSE;
      continue;
    }
    const char *k;
    json_t *v;
    json_object_foreach(c, k, v) {
      if (strcmp(k, "min_gwei") && strcmp(k, "max_gwei") && strcmp(k, "share")) {
        g_autofree char *kp = g_strdup_printf("%s.%s", cp, k);
        sim_diag_add(diag, kp, "unknown key (expected min_gwei, max_gwei, share)");
        ok = FALSE;
      }
    }
    TxPriceClass *pc = &cfg->classes[i];
    if (!parse_number(c, "min_gwei", cp, &pc->min_gwei, diag) || !parse_number(c, "max_gwei", cp, &pc->max_gwei, diag) ||
        !parse_number(c, "share", cp, &pc->share, diag)) {
      ok = FALSE;
      continue;
    }
    if (pc->min_gwei < 0) {
      g_autofree char *kp = g_strdup_printf("%s.min_gwei", cp);
      sim_diag_add(diag, kp, "a gas price cannot be negative (got %g)", pc->min_gwei);
      ok = FALSE;
    }
    if (pc->max_gwei < pc->min_gwei || pc->max_gwei > 1e6) {
      g_autofree char *kp = g_strdup_printf("%s.max_gwei", cp);
      sim_diag_add(diag, kp, "must be at least min_gwei and at most 1e6 (got %g)", pc->max_gwei);
      ok = FALSE;
    }
    if (pc->share < 0 || pc->share > 1) {
      g_autofree char *kp = g_strdup_printf("%s.share", cp);
      sim_diag_add(diag, kp, "must be in [0, 1] (got %g)", pc->share);
      ok = FALSE;
    }
    sum += pc->share;
  }
  cfg->n_classes = (guint)json_array_size(arr);
  if (ok && fabs(sum - 1) > 1e-6) sim_diag_add(diag, ap, "shares must sum to 1 (got %.6g)", sum);
}

int txw_cmp_u64(const void *a, const void *b) {
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static void parse_censor(TxConfig *cfg, json_t *obj, const char *path, const char *const *pool_names, guint n_pools,
                         SimDiag *diag) {
  cfg->censors = g_new0(gboolean, MAX(n_pools, 1));
  cfg->n_pools = n_pools;
  json_t *c = json_object_get(obj, "censor");
  if (!c) return;
  g_autofree char *cp = g_strdup_printf("%s.censor", path);
  if (!json_is_object(c)) {
    sim_diag_add(diag, cp, "must be an object {pools: [names], sender_share | tx_share | senders}");
    return;
  }
  const char *k;
  json_t *v;
  json_object_foreach(c, k, v) {
    if (strcmp(k, "pools") && strcmp(k, "sender_share") && strcmp(k, "tx_share") && strcmp(k, "senders")) {
      g_autofree char *kp = g_strdup_printf("%s.%s", cp, k);
      sim_diag_add(diag, kp, "unknown key (expected pools, sender_share, tx_share, senders)");
    }
  }
  json_t *pools = json_object_get(c, "pools");
  g_autofree char *pp = g_strdup_printf("%s.pools", cp);
  if (!json_is_array(pools) || json_array_size(pools) == 0) {
    sim_diag_add(diag, pp, "must be a non-empty array of pool names");
  } else {
    /* Pool name -> index + 1 (the first of that name): one lookup per entry, not a scan of the pools. */
    g_autoptr(GHashTable) pool_index = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint j = n_pools; j-- > 0;)
      g_hash_table_insert(pool_index, (gpointer)pool_names[j], GUINT_TO_POINTER(j + 1));
    for (guint i = 0; i < json_array_size(pools); i++) {
      json_t *n = json_array_get(pools, i);
      g_autofree char *ip = g_strdup_printf("%s[%u]", pp, i);
      if (!json_is_string(n)) {
        sim_diag_add(diag, ip, "must be a pool name");
        continue;
      }
      guint j1 = GPOINTER_TO_UINT(g_hash_table_lookup(pool_index, json_string_value(n)));
      if (j1 == 0)
        sim_diag_add(diag, ip, "no pool named \"%s\" in $.pools", json_string_value(n));
      else
        cfg->censors[j1 - 1] = TRUE;
    }
  }
  gboolean any = FALSE;
  static const char *const share_keys[] = {"sender_share", "tx_share"};
  double *shares[] = {&cfg->censor_share, &cfg->censor_tx_share};
  for (guint i = 0; i < 2; i++) {
    if (!json_object_get(c, share_keys[i])) continue;
    any = TRUE;
    g_autofree char *sp = g_strdup_printf("%s.%s", cp, share_keys[i]);
    if (!parse_number(c, share_keys[i], cp, shares[i], diag)) continue;
    if (!(*shares[i] > 0 && *shares[i] <= 1)) sim_diag_add(diag, sp, "must be in (0, 1] (got %g)", *shares[i]);
  }
  json_t *snd = json_object_get(c, "senders");
  if (snd) {
    any = TRUE;
    g_autofree char *sp = g_strdup_printf("%s.senders", cp);
    if (!json_is_array(snd) || json_array_size(snd) == 0) {
      sim_diag_add(diag, sp, "must be a non-empty array of sender account numbers (0 .. senders - 1)");
    } else {
      cfg->n_censor_senders = (guint)json_array_size(snd);
      cfg->censor_senders = g_new0(guint64, cfg->n_censor_senders);
      for (guint i = 0; i < cfg->n_censor_senders; i++) {
        json_t *x = json_array_get(snd, i);
        if (!json_is_integer(x) || json_integer_value(x) < 0) {
          g_autofree char *xp = g_strdup_printf("%s[%u]", sp, i);
          sim_diag_add(diag, xp, "must be a sender account number (an integer >= 0)");
          continue;
        }
        cfg->censor_senders[i] = (guint64)json_integer_value(x);
      }
      qsort(cfg->censor_senders, cfg->n_censor_senders, sizeof(guint64), txw_cmp_u64);
    }
  }
  if (!any) sim_diag_add(diag, cp, "give the censored transactions: sender_share, tx_share or senders");
}

gboolean tx_config_parse(TxConfig *cfg, json_t *obj, const char *path, const char *const *pool_names, guint n_pools,
                         double block_gas_limit, SimDiag *diag) {
  guint before = sim_diag_count(diag);
  if (!json_is_object(obj)) {
    sim_diag_add(diag, path, "must be an object");
    return FALSE;
  }
  static const char *const extra[] = {"comment", "gas_price_classes", "censor", "pool_delay", NULL};
  sim_params_parse(tx_params, tx_n_params, obj, path, extra, &cfg->p, diag);
  parse_classes(cfg, obj, path, diag);
  parse_censor(cfg, obj, path, pool_names, n_pools, diag);
  json_t *pd = json_object_get(obj, "pool_delay");
  if (!pd) {
    pd = json_object();
    json_object_set_new(obj, "pool_delay", pd);
  }
  g_autofree char *pdp = g_strdup_printf("%s.pool_delay", path);
  sim_model_ref_parse(&cfg->pool_delay, "delay", "constant", pd, pdp, diag);
  if (sim_diag_count(diag) != before) return FALSE;
  const TxParams *p = &cfg->p;
  if (fabs(p->share_tx + p->share_mc + p->share_cc - 1) > 1e-6)
    sim_diag_add(diag, path, "share_tx + share_mc + share_cc must be 1 (got %.6g)", p->share_tx + p->share_mc + p->share_cc);
  static const char *const gas_keys[] = {"tx_gas", "mc_gas_median", "cc_gas_median"};
  const double gas[] = {p->tx_gas, p->mc_gas_median, p->cc_gas_median};
  for (guint i = 0; i < 3; i++) {
    if (gas[i] > block_gas_limit) {
      g_autofree char *gp = g_strdup_printf("%s.%s", path, gas_keys[i]);
      sim_diag_add(diag, gp, "gas limit %.17g is above the block gas limit ($.chain.block_gas_limit = %.17g)", gas[i],
                   block_gas_limit);
    }
  }
  return sim_diag_count(diag) == before;
}

void tx_config_clear(TxConfig *cfg) {
  sim_params_clear(tx_params, tx_n_params, &cfg->p);
  sim_model_ref_clear(&cfg->pool_delay);
  g_free(cfg->censors);
  cfg->censors = NULL;
  g_free(cfg->censor_senders);
  cfg->censor_senders = NULL;
}

void tx_config_describe(GString *out) {
  g_string_append(out, "  transactions  (optional; replaces chain.tx_rate_per_s: senders, mempools, tx metrics)\n");
  sim_params_describe(tx_params, tx_n_params, 6, out);
  g_string_append(out, "      gas_price_classes  array of {min_gwei, max_gwei, share}; shares sum to 1; a price is\n"
                       "                         log-uniform in [min, max) (uniform from 0; exactly min if equal)\n"
                       "                         default: 0 (1%), [1,20) (62%), [20,25) (25%), [25,105) (10%),\n"
                       "                         [105,1000) (2%): the study's classes, shares are choices\n"
                       "      censor             {pools: [names], sender_share, tx_share, senders}: these pools\n"
                       "                         never include the transactions of a share of the senders, a\n"
                       "                         share of the transactions, or of the listed sender accounts\n"
                       "      pool_delay         a \"delay\" model: tx delay to pools on networks without a\n"
                       "                         topology (default constant 0)\n");
}
