/* tx.c: the transaction world (see tx.h for the mechanism). */
#include "tx.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "delay.h"
#include "registry.h"

#define NONE UINT32_MAX
#define N_BINS 1024
#define BIN_WORDS (N_BINS / 64)
#define MAX_INCL 3      /* inclusions stored inline per transaction; more go to a heap array */
#define ANC_DEPTH (TX_SETTLE_DEPTH + 4) /* ancestors checked for inclusion: beyond, txs left the index */
#define RING 128        /* heights kept for the heaviest chain and for block lists (> DECLARE_DEPTH + 2) */
#define DECL_RING 4096  /* declared heights kept for the censorship waits */
#define CENSOR_K 15     /* censorship table: k = 0 .. 14 blocks skipped */
#define MIN_GAS 21000.0

/* ---- parameters ---- */

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
     .offset = offsetof(TxParams, mc_gas_median), .help = "median gas limit of a message call, lognormal (a choice)"},
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

static int cmp_u64(const void *a, const void *b) {
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
      qsort(cfg->censor_senders, cfg->n_censor_senders, sizeof(guint64), cmp_u64);
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

/* ---- the world ---- */

struct InclMore {
  guint n, cap;
  uint64_t *id;
  uint32_t *h;
};

typedef struct {
  uint64_t id; /* 0: free slot */
  uint64_t nonce;
  int64_t created;
  double price; /* gwei */
  uint64_t incl[MAX_INCL]; /* blocks that include it (every one: a missing one would let a pool include it twice) */
  uint32_t incl_h[MAX_INCL];
  struct InclMore *more;   /* beyond MAX_INCL (forks of forks, selfish branches): rare */
  uint32_t sender;
  uint32_t gas_limit, gas_used, bytes;
  uint32_t bprev, bnext; /* price bin list */
  uint32_t sprev, snext; /* the sender's live transactions in nonce order */
  uint32_t defer_gen, sel_gen;
  uint16_t bin;
  uint8_t type, censored, in_index, n_incl;
} TxE;

typedef struct {
  uint64_t next_nonce;
  uint32_t head, tail;
  uint32_t skip_gen;
} Sender;

typedef struct {
  uint64_t id;
  int64_t created;
  uint32_t idx;
  uint32_t gas_used;
  uint32_t bytes;
  uint8_t censored;
} TxRef;

typedef struct {
  uint64_t block;
  uint32_t height;
  guint n;
  TxRef *refs;
} BlockTxs;

typedef struct {
  SimTime t;       /* next transaction */
  uint32_t sender;
  uint32_t left;
  uint32_t total;  /* transactions of the session */
  uint32_t node;   /* entry node (a burst: of its first part) */
  guint16 region;
  guint8 burst, n_entries;
  uint32_t entry_node[TX_MAX_ENTRY_NODES]; /* a burst's entry nodes, their regions and trees */
  guint16 entry_region[TX_MAX_ENTRY_NODES];
  uint32_t entry_tree[TX_MAX_ENTRY_NODES];
  gboolean has_prev;
  int64_t *prev;   /* region: per target previous reception and last hop (2 T); flood: per node availability */
} Session;

typedef struct {
  int64_t *d;      /* region_samples x T delays */
  int64_t *hop;    /* last hops */
  guint n;
} RegionSamples;

struct TxWorld {
  TxConfig cfg; /* shallow copy; cfg->censors points into the scenario's */
  const TxNetView *net;
  TxNetView netc;
  double gas_limit, header_bytes;
  guint n_pools, n_vantages, n_targets;
  const guint *miner_pool;
  guint n_miners;
  double censor_alpha;
  TxBlockLookup lookup;
  gconstpointer lookup_user;
  SimRng rng;
  uint64_t seed;
  ObsSink sink; /* where the observations go (members NULL: dropped) */

  /* generator */
  SimTime next_session;
  GArray *sessions;     /* Session; a binary heap by t */
  uint64_t next_id;
  uint64_t created;
  double cum_class[TX_MAX_CLASSES];
  Sender *senders;

  /* slab */
  TxE *tx;
  int64_t *arrive; /* per slot: n_pools arrival times */
  uint32_t cap, free_head;
  uint32_t *free_next;
  guint64 live;

  /* price index */
  uint32_t bin_head[N_BINS], bin_tail[N_BINS];
  uint64_t bin_used[BIN_WORDS];
  guint64 in_index, index_peak, evicted;

  /* building */
  uint32_t gen;
  GArray *heap;    /* uint32 slab idx, local max-heap by price */
  GArray *sel;     /* TxRef of the block being built */
  GArray *joined;  /* uint64 ids: blocks that joined the heaviest chain (scratch) */
  uint64_t *cache_txset; /* per miner: last template */
  GArray **cache;  /* per miner: TxRef */
  GHashTable *blocks; /* block id -> BlockTxs* */
  GArray *by_height[RING]; /* block ids per height % RING */

  /* heaviest chain */
  uint64_t best_ids[RING];
  uint32_t best_h;
  uint32_t settled_h, declared_h;
  GArray *declared; /* uint64 id per declared height (index = height) */
  int64_t decl_mined[DECL_RING];
  guint decl_pool[DECL_RING];
  int64_t *recv;    /* n_vantages scratch */
  int64_t *tdelay, *thop; /* n_targets scratch */

  /* propagation */
  RegionSamples *regions;
  guint32 *region_nodes_off, *region_nodes;
  int64_t *dist, *hop;
  guint32 *dj_epoch;
  guint32 epoch;
  GArray *djheap;   /* uint64 keys: time << 22 | node ... see dj_push */

  /* results */
  guint64 *pool_included, *pool_censored_included, *pool_blocks;
  guint64 censored_skip[CENSOR_K + 1], censored_committed;
  guint64 uncensored_wait_blocks[CENSOR_K + 1], uncensored_committed;
  guint64 finality_mismatches, deep_reorgs;
  gboolean finished;
  /* EMC logs (tx_world_keep_for_logs) */
  gboolean keep;
  GArray *log_txs;     /* LogTx */
  GArray *log_recv;    /* int64 x n_vantages per LogTx */
  GHashTable *log_blocks; /* uint64 block id -> GArray of uint64 tx ids */
};

typedef struct {
  uint64_t id, sender, nonce;
  uint8_t type;
  uint32_t gas_limit, bytes;
  double price;
} LogTx;

/* ---- slab ---- */

static uint32_t slot_new(TxWorld *w) {
  if (w->free_head == NONE) {
    uint32_t old = w->cap, cap = MAX(1024u, old * 2);
    w->tx = g_renew(TxE, w->tx, cap);
    w->arrive = g_renew(int64_t, w->arrive, (gsize)cap * MAX(w->n_pools, 1));
    w->free_next = g_renew(uint32_t, w->free_next, cap);
    for (uint32_t i = old; i < cap; i++) {
      w->tx[i].id = 0;
      w->free_next[i] = i + 1 < cap ? i + 1 : NONE;
    }
    w->free_head = old;
    w->cap = cap;
  }
  uint32_t i = w->free_head;
  w->free_head = w->free_next[i];
  w->live++;
  return i;
}

static void slot_free(TxWorld *w, uint32_t i) {
  if (w->tx[i].more) {
    g_free(w->tx[i].more->id);
    g_free(w->tx[i].more->h);
    g_free(w->tx[i].more);
    w->tx[i].more = NULL;
  }
  w->tx[i].id = 0;
  w->free_next[i] = w->free_head;
  w->free_head = i;
  w->live--;
}

/* ---- price index: bins of 2% width, each sorted by price (descending) then id ---- */

static guint16 price_bin(double gwei) {
  if (gwei <= 0) return 0;
  double b = 1 + floor(log(gwei / 1e-3) / log(1.02));
  return (guint16)CLAMP(b, 1, N_BINS - 1);
}

static inline gboolean better(const TxE *a, const TxE *b) {
  return a->price > b->price || (a->price == b->price && a->id < b->id);
}

static void index_insert(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  guint16 b = e->bin;
  uint32_t after = w->bin_tail[b];
  while (after != NONE && better(e, &w->tx[after])) after = w->tx[after].bprev;
  e->bprev = after;
  e->bnext = after == NONE ? w->bin_head[b] : w->tx[after].bnext;
  if (e->bnext != NONE) w->tx[e->bnext].bprev = i; else w->bin_tail[b] = i;
  if (after != NONE) w->tx[after].bnext = i; else w->bin_head[b] = i;
  w->bin_used[b / 64] |= UINT64_C(1) << (b % 64);
  e->in_index = 1;
  w->in_index++;
  w->index_peak = MAX(w->index_peak, w->in_index);
}

static void index_remove(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  if (!e->in_index) return;
  guint16 b = e->bin;
  if (e->bprev != NONE) w->tx[e->bprev].bnext = e->bnext; else w->bin_head[b] = e->bnext;
  if (e->bnext != NONE) w->tx[e->bnext].bprev = e->bprev; else w->bin_tail[b] = e->bprev;
  if (w->bin_head[b] == NONE) w->bin_used[b / 64] &= ~(UINT64_C(1) << (b % 64));
  e->in_index = 0;
  w->in_index--;
}

/* The highest non-empty bin at or below `b`, or -1. */
static int bin_at_or_below(const TxWorld *w, int b) {
  while (b >= 0) {
    uint64_t word = w->bin_used[b / 64] & (b % 64 == 63 ? ~UINT64_C(0) : ((UINT64_C(1) << (b % 64 + 1)) - 1));
    if (word) return (b / 64) * 64 + 63 - __builtin_clzll(word);
    b = (b / 64) * 64 - 1;
  }
  return -1;
}

static void sender_unlink(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  Sender *s = &w->senders[e->sender];
  if (e->sprev != NONE) w->tx[e->sprev].snext = e->snext; else s->head = e->snext;
  if (e->snext != NONE) w->tx[e->snext].sprev = e->sprev; else s->tail = e->sprev;
  e->sprev = e->snext = NONE;
}

/* Evicts the cheapest transaction not in any block, with its sender's later ones (they cannot run); the
 * sender's wallet then reuses the freed nonces. */
static void evict_one(TxWorld *w) {
  for (int b = 0; b < N_BINS; b++) {
    if (!(w->bin_used[b / 64] & (UINT64_C(1) << (b % 64)))) continue;
    for (uint32_t i = w->bin_tail[b]; i != NONE; i = w->tx[i].bprev) {
      if (w->tx[i].n_incl) continue;
      Sender *s = &w->senders[w->tx[i].sender];
      s->next_nonce = w->tx[i].nonce;
      uint32_t j = i;
      while (j != NONE) {
        uint32_t nx = w->tx[j].snext;
        index_remove(w, j);
        sender_unlink(w, j);
        slot_free(w, j);
        w->evicted++;
        j = nx;
      }
      return;
    }
  }
}

/* ---- shortest paths (a transaction flood reaches each node first along its fastest path) ---- */

#define DJ_NODE_BITS 22
static void dj_push(GArray *h, int64_t t, guint32 v) {
  uint64_t key = ((uint64_t)t << DJ_NODE_BITS) | v;
  g_array_append_val(h, key);
  uint64_t *a = (uint64_t *)h->data;
  guint i = h->len - 1;
  while (i > 0 && a[(i - 1) / 2] > a[i]) {
    uint64_t tmp = a[i];
    a[i] = a[(i - 1) / 2];
    a[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static uint64_t dj_pop(GArray *h) {
  uint64_t *a = (uint64_t *)h->data;
  uint64_t top = a[0];
  a[0] = a[h->len - 1];
  g_array_set_size(h, h->len - 1);
  guint n = h->len, i = 0;
  for (;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && a[l] < a[m]) m = l;
    if (r < n && a[r] < a[m]) m = r;
    if (m == i) break;
    uint64_t tmp = a[i];
    a[i] = a[m];
    a[m] = tmp;
    i = m;
  }
  return top;
}

/* Arrival times (relative to the start at `src`, time 0) at every node, into w->dist (valid where
 * dj_epoch == epoch) and the last hop's delay into w->hop. With `avail` (a session's previous transaction:
 * when each node could forward it), a node forwards only from max(own reception, avail[node]) - start
 * offset `t0` - and afterwards avail[node] becomes its own forward time. */
static void flood(TxWorld *w, guint32 src, double bytes, int64_t *avail, int64_t t0) {
  const NetTopology *t = w->netc.topo;
  w->epoch++;
  g_array_set_size(w->djheap, 0);
  w->dist[src] = 0;
  w->hop[src] = 0;
  w->dj_epoch[src] = w->epoch;
  dj_push(w->djheap, 0, src);
  const uint64_t mask = (UINT64_C(1) << DJ_NODE_BITS) - 1;
  while (w->djheap->len) {
    uint64_t k = dj_pop(w->djheap);
    guint32 v = (guint32)(k & mask);
    int64_t tv = (int64_t)(k >> DJ_NODE_BITS);
    if (tv != w->dist[v]) continue;
    int64_t fwd = tv;
    if (avail) {
      if (avail[v] - t0 > fwd) fwd = avail[v] - t0;
      avail[v] = fwd + t0;
    }
    for (guint32 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++) {
      guint32 u = t->adj[e];
      int64_t d = net_edge_latency(w->netc.gp, t, e, &w->rng) + net_edge_transfer_ns(t, e, bytes);
      int64_t tu = fwd + d;
      if (w->dj_epoch[u] != w->epoch || tu < w->dist[u]) {
        w->dj_epoch[u] = w->epoch;
        w->dist[u] = tu;
        w->hop[u] = d;
        dj_push(w->djheap, tu, u);
      }
    }
  }
}

/* Target j's delay and last hop from the last flood: vantage points, then pools (their earliest gateway). */
static void flood_targets(const TxWorld *w, int64_t *d, int64_t *hop) {
  for (guint j = 0; j < w->n_targets; j++) {
    d[j] = INT64_MAX / 4;
    hop[j] = 0;
  }
  for (guint v = 0; v < w->n_vantages; v++) {
    guint32 n = w->netc.vantage_node[v];
    if (w->dj_epoch[n] == w->epoch) {
      d[v] = w->dist[n];
      hop[v] = w->hop[n];
    }
  }
  for (guint p = 0; p < w->n_pools; p++) {
    for (guint g = 0; g < w->netc.pool_n_gw[p]; g++) {
      guint32 n = w->netc.pool_gw[p][g];
      if (w->dj_epoch[n] == w->epoch && w->dist[n] < d[w->n_vantages + p]) {
        d[w->n_vantages + p] = w->dist[n];
        hop[w->n_vantages + p] = w->hop[n];
      }
    }
  }
}

static double mean_bytes(const TxParams *p) {
  return p->share_tx * p->bytes_tx + p->share_mc * p->bytes_mc + p->share_cc * p->bytes_cc;
}

static void sample_regions(TxWorld *w) {
  guint nr = w->netc.gp->n_regions;
  w->regions = g_new0(RegionSamples, nr);
  double bytes = mean_bytes(&w->cfg.p);
  sim_rng_init(&w->rng, w->seed, SIM_RNG_SETUP_BASE + 41); /* the trees' own stream */
  for (guint r = 0; r < nr; r++) {
    guint32 lo = w->region_nodes_off[r], hi = w->region_nodes_off[r + 1];
    if (lo == hi) continue;
    RegionSamples *rs = &w->regions[r];
    rs->n = (guint)w->cfg.p.region_samples;
    rs->d = g_new(int64_t, (gsize)rs->n * w->n_targets);
    rs->hop = g_new(int64_t, (gsize)rs->n * w->n_targets);
    for (guint s = 0; s < rs->n; s++) {
      guint32 src = w->region_nodes[lo + sim_rng_below(&w->rng, hi - lo)];
      flood(w, src, bytes, NULL, 0);
      flood_targets(w, rs->d + (gsize)s * w->n_targets, rs->hop + (gsize)s * w->n_targets);
    }
  }
}

/* ---- generator ---- */

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

static void session_heap_pop(TxWorld *w) {
  Session *a = (Session *)w->sessions->data;
  g_free(a[0].prev);
  a[0] = a[w->sessions->len - 1];
  g_array_set_size(w->sessions, w->sessions->len - 1);
  if (w->sessions->len) session_heap_fix_top(w);
}

/* At least 1 ns, so that creation always advances; at most SIM_DURATION_MAX, so that adding it to a time
 * within the run cannot overflow (a rate of 1e-300/s draws 1e300 s). */
static SimTime exp_ns(SimRng *r, double mean_s) {
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
  return c->n_censor_senders && bsearch(&key, c->censor_senders, c->n_censor_senders, sizeof key, cmp_u64);
}

/* The part of a burst (its entry node) that the session's next transaction belongs to. */
static guint session_part(const Session *s) {
  uint64_t i = s->total - s->left;
  return (guint)(i * s->n_entries / s->total);
}

static void emit(TxWorld *w, Session *s) {
  const TxParams *p = &w->cfg.p;
  uint32_t i = new_tx(w, s->sender, s->t);
  TxE *e = &w->tx[i];
  double u = sim_rng_uniform(&w->rng);
  double bytes;
  if (u < p->share_tx) {
    e->type = OBS_TX_TX;
    e->gas_limit = e->gas_used = (uint32_t)p->tx_gas;
    bytes = p->bytes_tx;
  } else if (u < p->share_tx + p->share_mc) {
    e->type = OBS_TX_MC;
    e->gas_limit = (uint32_t)draw_gas(w, p->mc_gas_median, p->mc_gas_sigma);
    e->gas_used = (uint32_t)MAX(MIN_GAS, floor(e->gas_limit * p->used_fraction));
    bytes = p->bytes_mc;
  } else {
    e->type = OBS_TX_CC;
    e->gas_limit = (uint32_t)draw_gas(w, p->cc_gas_median, p->cc_gas_sigma);
    e->gas_used = (uint32_t)MAX(MIN_GAS, floor(e->gas_limit * p->used_fraction));
    bytes = p->bytes_cc;
  }
  e->bytes = (uint32_t)bytes;
  e->price = draw_price(w);
  e->bin = price_bin(e->price);
  e->censored = w->censor_alpha > 0 && is_censored(w, s->sender, e->id);

  /* Receptions: vantage points first, then pools. */
  int64_t *arr = w->arrive + (gsize)i * MAX(w->n_pools, 1);
  for (guint v = 0; v < w->n_vantages; v++) w->recv[v] = OBS_TIME_NONE;
  if (w->netc.topo) {
    guint T = w->n_targets;
    int64_t *dd = w->tdelay, *hh = w->thop;
    if (p->propagation == TX_PROP_FLOOD) {
      if (!s->prev) {
        s->prev = g_new(int64_t, w->netc.topo->n_nodes);
        for (guint32 n = 0; n < w->netc.topo->n_nodes; n++) s->prev[n] = INT64_MIN / 4;
      }
      flood(w, s->burst ? s->entry_node[session_part(s)] : s->node, bytes, s->prev, s->t);
      flood_targets(w, dd, hh);
      for (guint j = 0; j < T; j++) dd[j] += s->t;
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
      if (!s->prev) s->prev = g_new(int64_t, 2 * (gsize)T);
      for (guint j = 0; j < T; j++) {
        int64_t d = rs->d[(gsize)k * T + j], h = rs->hop[(gsize)k * T + j];
        int64_t at = s->t + d;
        if (s->has_prev && s->prev[2 * j] - s->prev[2 * j + 1] + h > at) at = s->prev[2 * j] - s->prev[2 * j + 1] + h;
        s->prev[2 * j] = at;
        s->prev[2 * j + 1] = h;
        dd[j] = at;
        hh[j] = h;
      }
    }
    for (guint v = 0; v < w->n_vantages; v++) w->recv[v] = dd[v];
    for (guint q = 0; q < w->n_pools; q++) arr[q] = dd[w->n_vantages + q];
  } else {
    for (guint q = 0; q < w->n_pools; q++) arr[q] = s->t + sim_delay_sample(&w->cfg.pool_delay, &w->rng);
  }
  s->has_prev = TRUE;

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
  index_insert(w, i);
  if (w->in_index > (guint64)w->cfg.p.mempool_capacity) evict_one(w);
}

/* A new slot for the sender's next nonce, linked after its live transactions. */
static uint32_t new_tx(TxWorld *w, uint32_t sender, SimTime created) {
  uint32_t i = slot_new(w);
  TxE *e = &w->tx[i];
  memset(e, 0, sizeof *e);
  e->id = ++w->next_id;
  e->sender = sender;
  Sender *snd = &w->senders[sender];
  e->nonce = snd->next_nonce++;
  e->created = created;
  e->sprev = snd->tail;
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
  e->bin = price_bin(price_gwei);
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
static double session_txs(const TxParams *p) {
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
  session_heap_push(w, &s);
}

/* Creates every transaction up to time `t`, in time order. */
static void advance(TxWorld *w, SimTime t) {
  for (;;) {
    SimTime ts = w->sessions->len ? g_array_index(w->sessions, Session, 0).t : SIM_TIME_MAX;
    if (w->next_session <= ts) {
      if (w->next_session > t) return;
      new_session(w, w->next_session);
      w->next_session += exp_ns(&w->rng, session_txs(&w->cfg.p) / w->cfg.p.rate_per_s);
      continue;
    }
    if (ts > t) return;
    Session *s = &g_array_index(w->sessions, Session, 0);
    emit(w, s);
    if (--s->left == 0) {
      session_heap_pop(w);
    } else {
      s->t += exp_ns(&w->rng, s->burst ? w->cfg.p.burst_gap_s : w->cfg.p.sender_gap_s);
      session_heap_fix_top(w);
    }
  }
}

/* ---- construction ---- */

TxWorld *tx_world_new(const TxConfig *cfg, const TxNetView *net, double block_gas_limit, double header_bytes,
                      const double *pool_share, const guint *miner_pool, guint n_miners, uint64_t seed,
                      TxBlockLookup lookup, gconstpointer lookup_user, const ObsSink *sink, GError **error) {
  (void)error;
  TxWorld *w = g_new0(TxWorld, 1);
  w->cfg = *cfg;
  w->netc = *net;
  w->gas_limit = block_gas_limit;
  w->header_bytes = header_bytes;
  w->n_pools = net->n_pools;
  w->n_vantages = net->topo ? net->n_vantages : 0;
  w->n_targets = w->n_vantages + w->n_pools;
  w->miner_pool = miner_pool;
  w->n_miners = n_miners;
  w->lookup = lookup;
  w->lookup_user = lookup_user;
  w->seed = seed;
  for (guint p = 0; p < w->n_pools; p++)
    if (cfg->censors[p]) w->censor_alpha += pool_share[p];
  double c = 0;
  for (guint k = 0; k < cfg->n_classes; k++) w->cum_class[k] = (c += cfg->classes[k].share);
  w->senders = g_new(Sender, cfg->p.senders);
  for (int64_t s = 0; s < cfg->p.senders; s++) w->senders[s] = (Sender){.head = NONE, .tail = NONE};
  if (cfg->p.first_nonce_median > 0)
    for (int64_t s = 0; s < cfg->p.senders; s++) { /* keyed, so that no stream of the run moves */
      double u = ((double)(sim_mix64(seed ^ sim_mix64((uint64_t)s + UINT64_C(0x6e6f6e6365))) >> 11) + 0.5) * 0x1.0p-53;
      double n = cfg->p.first_nonce_median * exp(cfg->p.first_nonce_sigma * gsl_cdf_ugaussian_Pinv(u));
      w->senders[s].next_nonce = (uint64_t)MIN(n, 1e15);
    }
  w->free_head = NONE;
  for (guint b = 0; b < N_BINS; b++) w->bin_head[b] = w->bin_tail[b] = NONE;
  w->sessions = g_array_new(FALSE, FALSE, sizeof(Session));
  w->heap = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  w->sel = g_array_new(FALSE, FALSE, sizeof(TxRef));
  w->joined = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  w->cache_txset = g_new0(uint64_t, n_miners);
  w->cache = g_new0(GArray *, n_miners);
  for (guint m = 0; m < n_miners; m++) w->cache[m] = g_array_new(FALSE, FALSE, sizeof(TxRef));
  w->blocks = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (guint r = 0; r < RING; r++) w->by_height[r] = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  w->declared = g_array_new(FALSE, TRUE, sizeof(uint64_t));
  g_array_set_size(w->declared, 1);
  w->recv = g_new(int64_t, MAX(w->n_vantages, 1));
  w->tdelay = g_new(int64_t, MAX(w->n_targets, 1));
  w->thop = g_new(int64_t, MAX(w->n_targets, 1));
  w->pool_included = g_new0(guint64, MAX(w->n_pools, 1));
  w->pool_censored_included = g_new0(guint64, MAX(w->n_pools, 1));
  w->pool_blocks = g_new0(guint64, MAX(w->n_pools, 1));
  for (guint r = 0; r < RING; r++) w->best_ids[r] = OBS_GENESIS_ID;

  if (sink) w->sink = *sink;
  if (!w->sink.vantages) {
  } else if (w->n_vantages) {
    w->sink.vantages(w->sink.user, net->vantage_names, w->n_vantages);
  } else {
    static const char *const none[] = {"none"};
    w->sink.vantages(w->sink.user, none, 1);
  }
  if (net->topo) {
    const NetTopology *t = net->topo;
    w->dist = g_new(int64_t, t->n_nodes);
    w->hop = g_new(int64_t, t->n_nodes);
    w->dj_epoch = g_new0(guint32, t->n_nodes);
    w->djheap = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    guint nr = net->gp->n_regions;
    w->region_nodes_off = g_new0(guint32, nr + 1);
    for (guint32 n = t->n_special; n < t->n_nodes; n++) w->region_nodes_off[t->region[n] + 1]++;
    for (guint r = 0; r < nr; r++) w->region_nodes_off[r + 1] += w->region_nodes_off[r];
    w->region_nodes = g_new(guint32, MAX(t->n_nodes - t->n_special, 1));
    g_autofree guint32 *fill = g_memdup2(w->region_nodes_off, sizeof(guint32) * (nr + 1));
    for (guint32 n = t->n_special; n < t->n_nodes; n++) w->region_nodes[fill[t->region[n]]++] = n;
    if (cfg->p.propagation == TX_PROP_REGION) sample_regions(w);
  }
  sim_rng_init(&w->rng, seed, SIM_RNG_SETUP_BASE + 40);
  w->next_session = exp_ns(&w->rng, session_txs(&cfg->p) / cfg->p.rate_per_s);
  return w;
}

void tx_world_keep_for_logs(TxWorld *w) {
  if (w->keep) return;
  w->keep = TRUE;
  w->log_txs = g_array_new(FALSE, FALSE, sizeof(LogTx));
  w->log_recv = g_array_new(FALSE, FALSE, sizeof(int64_t));
  w->log_blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_array_unref);
}

guint64 tx_world_log_n_txs(const TxWorld *w) { return w->keep ? w->log_txs->len : 0; }

void tx_world_log_tx(const TxWorld *w, guint64 i, TxLogView *out) {
  const LogTx *l = &g_array_index(w->log_txs, LogTx, i);
  *out = (TxLogView){.id = l->id, .sender = l->sender, .nonce = l->nonce, .type = l->type,
                     .gas_limit = l->gas_limit, .bytes = l->bytes, .price_gwei = l->price,
                     .recv = w->n_vantages ? &g_array_index(w->log_recv, int64_t, i * w->n_vantages) : NULL};
}

const uint64_t *tx_world_log_block_txs(const TxWorld *w, uint64_t block, guint *n) {
  const GArray *ids = w->keep ? g_hash_table_lookup(w->log_blocks, &block) : NULL;
  *n = ids ? ids->len : 0;
  return ids ? (const uint64_t *)ids->data : NULL;
}

void tx_world_free(TxWorld *w) {
  if (!w) return;
  if (w->keep) {
    g_array_unref(w->log_txs);
    g_array_unref(w->log_recv);
    g_hash_table_unref(w->log_blocks);
  }
  for (guint i = 0; i < w->sessions->len; i++) g_free(g_array_index(w->sessions, Session, i).prev);
  g_array_free(w->sessions, TRUE);
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init(&it, w->blocks);
  while (g_hash_table_iter_next(&it, &k, &v)) {
    BlockTxs *bt = v;
    g_free(bt->refs);
    g_free(bt);
  }
  g_hash_table_unref(w->blocks);
  for (guint r = 0; r < RING; r++) g_array_free(w->by_height[r], TRUE);
  for (guint m = 0; m < w->n_miners; m++) g_array_free(w->cache[m], TRUE);
  g_free(w->cache);
  g_free(w->cache_txset);
  g_array_free(w->heap, TRUE);
  g_array_free(w->sel, TRUE);
  g_array_free(w->joined, TRUE);
  g_array_free(w->declared, TRUE);
  if (w->regions) {
    for (guint r = 0; r < w->netc.gp->n_regions; r++) {
      g_free(w->regions[r].d);
      g_free(w->regions[r].hop);
    }
    g_free(w->regions);
  }
  if (w->djheap) g_array_free(w->djheap, TRUE);
  g_free(w->dist);
  g_free(w->hop);
  g_free(w->dj_epoch);
  g_free(w->region_nodes_off);
  g_free(w->region_nodes);
  g_free(w->recv);
  g_free(w->tdelay);
  g_free(w->thop);
  g_free(w->pool_included);
  g_free(w->pool_censored_included);
  g_free(w->pool_blocks);
  g_free(w->senders);
  for (uint32_t i = 0; i < w->cap; i++)
    if (w->tx[i].id) slot_free(w, i);
  g_free(w->tx);
  g_free(w->arrive);
  g_free(w->free_next);
  g_free(w);
}

/* ---- templates ---- */

static gboolean in_chain(const TxWorld *w, const TxE *e, const uint64_t *anc, guint n_anc, uint32_t top_h) {
  (void)w;
  for (guint k = 0; k < MIN(e->n_incl, MAX_INCL); k++) {
    uint32_t h = e->incl_h[k];
    if (h <= top_h && top_h - h < n_anc && anc[top_h - h] == e->incl[k]) return TRUE;
  }
  for (guint k = 0; e->more && k < e->more->n; k++) {
    uint32_t h = e->more->h[k];
    if (h <= top_h && top_h - h < n_anc && anc[top_h - h] == e->more->id[k]) return TRUE;
  }
  return FALSE;
}

static void heap_push_tx(TxWorld *w, uint32_t i) {
  g_array_append_val(w->heap, i);
  uint32_t *a = (uint32_t *)w->heap->data;
  guint k = w->heap->len - 1;
  while (k > 0 && better(&w->tx[a[k]], &w->tx[a[(k - 1) / 2]])) {
    uint32_t t = a[k];
    a[k] = a[(k - 1) / 2];
    a[(k - 1) / 2] = t;
    k = (k - 1) / 2;
  }
}

static uint32_t heap_pop_tx(TxWorld *w) {
  uint32_t *a = (uint32_t *)w->heap->data;
  uint32_t top = a[0];
  a[0] = a[w->heap->len - 1];
  g_array_set_size(w->heap, w->heap->len - 1);
  guint n = w->heap->len, k = 0;
  for (;;) {
    guint l = 2 * k + 1, r = l + 1, m = k;
    if (l < n && better(&w->tx[a[l]], &w->tx[a[m]])) m = l;
    if (r < n && better(&w->tx[a[r]], &w->tx[a[m]])) m = r;
    if (m == k) break;
    uint32_t t = a[k];
    a[k] = a[m];
    a[m] = t;
    k = m;
  }
  return top;
}

/* Geth's commitTransactions over the pool's mempool as of `built`, into w->sel. */
static void build_template(TxWorld *w, guint pool, const ObsBlock *parent, SimTime built) {
  w->gen++;
  uint64_t anc[ANC_DEPTH];
  guint n_anc = 0;
  for (const ObsBlock *a = parent; a && a->id != OBS_GENESIS_ID && n_anc < ANC_DEPTH;
       a = w->lookup(w->lookup_user, a->parent))
    anc[n_anc++] = a->id;
  uint32_t top_h = parent->height;
  gboolean censor = w->cfg.censors[pool];
  const guint P = MAX(w->n_pools, 1);
  double gas_left = w->gas_limit;
  int bin = bin_at_or_below(w, N_BINS - 1);
  uint32_t cur = bin >= 0 ? w->bin_head[bin] : NONE;
  g_array_set_size(w->heap, 0);
  /* Transactions in heaviest-chain blocks are out of the index. Those of the heaviest-chain blocks that are
   * not in the parent's chain (above the fork point, or above a parent that is behind the tip) are still in
   * this pool's mempool: they join the candidates through the heap. */
  uint32_t hf = top_h > n_anc ? top_h - n_anc : 0;
  for (guint k = 0; k < n_anc; k++) {
    uint32_t h = top_h - k;
    if (h <= w->best_h && w->best_ids[h % RING] == anc[k]) {
      hf = h;
      break;
    }
  }
  for (uint32_t h = MAX(hf, w->settled_h) + 1; h <= w->best_h; h++) {
    if (w->best_h - h >= RING) continue;
    uint64_t bid = w->best_ids[h % RING];
    const BlockTxs *bt = g_hash_table_lookup(w->blocks, &bid);
    for (guint k = 0; bt && k < bt->n; k++)
      if (w->tx[bt->refs[k].idx].id == bt->refs[k].id) heap_push_tx(w, bt->refs[k].idx);
  }
  while (gas_left >= MIN_GAS) {
    while (cur == NONE && bin > 0) {
      bin = bin_at_or_below(w, bin - 1);
      cur = bin >= 0 ? w->bin_head[bin] : NONE;
    }
    uint32_t pick;
    if (cur != NONE && (w->heap->len == 0 || better(&w->tx[cur], &w->tx[g_array_index(w->heap, uint32_t, 0)]))) {
      pick = cur;
      cur = w->tx[cur].bnext;
    } else if (w->heap->len) {
      pick = heap_pop_tx(w);
    } else {
      break;
    }
    TxE *e = &w->tx[pick];
    if (w->arrive[(gsize)pick * P + pool] > built || (censor && e->censored) ||
        w->senders[e->sender].skip_gen == w->gen || e->sel_gen == w->gen)
      continue;
    if (e->n_incl && in_chain(w, e, anc, n_anc, top_h)) continue;
    if (e->sprev != NONE && w->tx[e->sprev].sel_gen != w->gen && !in_chain(w, &w->tx[e->sprev], anc, n_anc, top_h)) {
      e->defer_gen = w->gen; /* runs once its predecessor is in this block */
      continue;
    }
    if (e->gas_limit > gas_left) { /* Geth: ErrGasLimitReached pops the account */
      w->senders[e->sender].skip_gen = w->gen;
      continue;
    }
    e->sel_gen = w->gen;
    gas_left -= e->gas_used;
    TxRef r = {.id = e->id, .created = e->created, .idx = pick, .gas_used = e->gas_used, .bytes = e->bytes,
               .censored = e->censored};
    g_array_append_val(w->sel, r);
    if (e->snext != NONE && w->tx[e->snext].defer_gen == w->gen) heap_push_tx(w, e->snext);
  }
}

void tx_world_build(TxWorld *w, guint pool, const ObsBlock *parent, SimTime built, ObsBlock *b) {
  advance(w, b->mined_ns);
  guint m = b->miner;
  g_array_set_size(w->sel, 0);
  if (!b->empty) {
    if (w->cache_txset[m] == b->txset) {
      g_array_append_vals(w->sel, w->cache[m]->data, w->cache[m]->len);
    } else {
      build_template(w, pool, parent, built);
      g_array_set_size(w->cache[m], 0);
      g_array_append_vals(w->cache[m], w->sel->data, w->sel->len);
      w->cache_txset[m] = b->txset;
    }
  }
  BlockTxs *bt = g_new(BlockTxs, 1);
  bt->block = b->id;
  bt->height = b->height;
  bt->n = w->sel->len;
  bt->refs = g_memdup2(w->sel->data, sizeof(TxRef) * w->sel->len);
  double gas = 0, bytes = w->header_bytes;
  for (guint k = 0; k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    gas += r->gas_used;
    bytes += r->bytes;
    TxE *e = &w->tx[r->idx];
    if (e->id != r->id) continue;
    if (e->n_incl < MAX_INCL) {
      e->incl_h[e->n_incl] = b->height;
      e->incl[e->n_incl] = b->id;
    } else {
      if (!e->more) e->more = g_new0(struct InclMore, 1);
      struct InclMore *x = e->more;
      if (x->n == x->cap) {
        x->cap = MAX(4, 2 * x->cap);
        x->id = g_renew(uint64_t, x->id, x->cap);
        x->h = g_renew(uint32_t, x->h, x->cap);
      }
      x->id[x->n] = b->id;
      x->h[x->n++] = b->height;
    }
    if (e->n_incl < UINT8_MAX) e->n_incl++;
  }
  g_hash_table_insert(w->blocks, &bt->block, bt);
  if (w->keep && bt->n) {
    GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), bt->n);
    for (guint k = 0; k < bt->n; k++) g_array_append_val(ids, bt->refs[k].id);
    g_hash_table_insert(w->log_blocks, g_memdup2(&b->id, sizeof b->id), ids);
  }
  g_array_append_val(w->by_height[b->height % RING], b->id);
  b->n_tx = bt->n;
  b->empty = bt->n == 0; /* as the study counted empty blocks: no transactions, whatever the template */
  b->gas_used = (uint64_t)gas;
  b->size_bytes = (uint32_t)MIN(bytes, (double)UINT32_MAX);
}

void tx_world_on_mined(TxWorld *w, const ObsBlock *b) {
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &b->id);
  if (!bt) return;
  for (guint k = 0; k < bt->n; k++) {
    ObsTxInclusion in = {.tx = bt->refs[k].id, .block = b->id, .height = b->height};
    gboolean ok = !w->sink.tx_inclusion || w->sink.tx_inclusion(w->sink.user, &in, NULL);
    g_assert(ok);
  }
}

/* ---- finality ---- */

static void settle_block(TxWorld *w, uint64_t id) {
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  if (!bt) return;
  for (guint k = 0; k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    if (w->tx[r->idx].id != r->id) continue;
    index_remove(w, r->idx);
    sender_unlink(w, r->idx);
    slot_free(w, r->idx);
  }
}

static void declare_block(TxWorld *w, uint32_t h, uint64_t id) {
  const ObsBlock *b = w->lookup(w->lookup_user, id);
  for (guint v = 0; v < w->n_vantages; v++) w->recv[v] = w->netc.reception(w->netc.user, v, id);
  g_autoptr(GError) err = NULL;
  gboolean ok = !w->sink.main_block ||
                w->sink.main_block(w->sink.user, h, id, b->mined_ns, w->n_vantages ? w->recv : NULL, &err);
  g_assert(ok);
  g_array_set_size(w->declared, h + 1);
  g_array_index(w->declared, uint64_t, h) = id;
  guint pool = w->miner_pool[b->miner];
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  for (guint k = 0; bt && k < bt->n; k++) {
    const TxRef *r = &bt->refs[k];
    w->pool_included[pool]++;
    /* Main blocks mined after the transaction was created and before its block, by censoring pools (for a
     * censored one) or by anyone. */
    guint skipped = 0, waited = 0;
    for (uint32_t hh = h - 1; hh >= 1 && h - hh < DECL_RING && w->decl_mined[hh % DECL_RING] > r->created; hh--) {
      waited++;
      if (w->cfg.censors[w->decl_pool[hh % DECL_RING]]) skipped++;
    }
    if (r->censored) {
      w->pool_censored_included[pool]++;
      w->censored_skip[MIN(skipped, CENSOR_K)]++;
      w->censored_committed++;
    } else {
      w->uncensored_wait_blocks[MIN(waited, CENSOR_K)]++;
      w->uncensored_committed++;
    }
  }
  w->decl_mined[h % DECL_RING] = b->mined_ns;
  w->decl_pool[h % DECL_RING] = pool;
  /* Every block list at this height is done with (heights above stay below h + RING). */
  GArray *ids = w->by_height[h % RING];
  for (guint k = 0; k < ids->len; k++) {
    uint64_t bid = g_array_index(ids, uint64_t, k);
    BlockTxs *x = g_hash_table_lookup(w->blocks, &bid);
    if (!x || x->height != h) continue;
    g_hash_table_remove(w->blocks, &bid);
    g_free(x->refs);
    g_free(x);
  }
  g_array_set_size(ids, 0);
}

/* A block leaves the heaviest chain: its transactions are back in the mempools (unless settled). */
static void leave_best(TxWorld *w, uint32_t h, uint64_t id) {
  if (h <= w->declared_h) w->finality_mismatches++;
  else if (h <= w->settled_h) w->deep_reorgs++;
  if (h <= w->settled_h) return;
  const BlockTxs *bt = g_hash_table_lookup(w->blocks, &id);
  for (guint k = 0; bt && k < bt->n; k++) {
    uint32_t i = bt->refs[k].idx;
    if (w->tx[i].id == bt->refs[k].id && !w->tx[i].in_index) index_insert(w, i);
  }
}

void tx_world_on_best(TxWorld *w, const ObsBlock *best) {
  uint32_t old_h = w->best_h;
  /* Heights above the new tip leave the heaviest chain (a heavier but shorter branch). */
  for (uint32_t h = best->height + 1; h <= old_h; h++) {
    if (old_h - h >= RING) continue;
    leave_best(w, h, w->best_ids[h % RING]);
    w->best_ids[h % RING] = OBS_GENESIS_ID;
  }
  uint64_t id = best->id;
  uint32_t h = best->height;
  g_array_set_size(w->joined, 0);
  for (guint k = 0; k < RING && h > 0; k++) {
    if (h <= old_h && w->best_ids[h % RING] == id) break;
    if (h <= old_h) leave_best(w, h, w->best_ids[h % RING]);
    g_array_append_val(w->joined, id);
    w->best_ids[h % RING] = id;
    const ObsBlock *b = w->lookup(w->lookup_user, id);
    id = b->parent;
    h--;
  }
  /* The blocks that joined take their transactions out of the index (after the others put theirs back:
   * a transaction in both stays out). */
  for (guint j = 0; j < w->joined->len; j++) {
    uint64_t bid = g_array_index(w->joined, uint64_t, j);
    const BlockTxs *bt = g_hash_table_lookup(w->blocks, &bid);
    for (guint k = 0; bt && k < bt->n; k++)
      if (w->tx[bt->refs[k].idx].id == bt->refs[k].id) index_remove(w, bt->refs[k].idx);
  }
  w->best_h = best->height;
  while (w->settled_h + TX_SETTLE_DEPTH < w->best_h) {
    w->settled_h++;
    settle_block(w, w->best_ids[w->settled_h % RING]);
  }
  while (w->declared_h + TX_DECLARE_DEPTH < w->best_h) {
    w->declared_h++;
    declare_block(w, w->declared_h, w->best_ids[w->declared_h % RING]);
  }
}

gboolean tx_world_finish(TxWorld *w, ObsMainChainFn main_block, gpointer main_user, uint32_t window,
                         GError **error) {
  g_return_val_if_fail(!w->finished, FALSE);
  w->finished = TRUE;
  for (uint32_t h = 1; h <= w->declared_h; h++) {
    const ObsBlock *m = main_block(main_user, h);
    if (!m || m->id != g_array_index(w->declared, uint64_t, h)) w->finality_mismatches++;
  }
  for (uint32_t h = w->declared_h + 1; h <= window; h++) {
    const ObsBlock *m = main_block(main_user, h);
    if (!m) break;
    declare_block(w, h, m->id);
    w->declared_h = h;
  }
  (void)error;
  if (w->sink.finish) w->sink.finish(w->sink.user);
  return TRUE;
}

/* ---- results ---- */

static guint64 sum_from(const guint64 *a, guint k) {
  guint64 s = 0;
  for (guint i = k; i <= CENSOR_K; i++) s += a[i];
  return s;
}

gboolean tx_world_has_censorship(const TxWorld *w) { return w->censor_alpha > 0; }

void tx_world_add_json(const TxWorld *w, json_t *summary, const char *const *pool_names) {
  json_t *tx = json_object_get(summary, "tx");
  if (!tx) {
    tx = json_object();
    json_object_set_new(summary, "tx", tx);
  }
  json_object_set_new(tx, "evicted", json_integer((json_int_t)w->evicted));
  json_object_set_new(tx, "mempool_peak", json_integer((json_int_t)w->index_peak));
  json_object_set_new(tx, "mempool_at_end", json_integer((json_int_t)w->in_index));
  json_object_set_new(tx, "finality_mismatches", json_integer((json_int_t)w->finality_mismatches));
  json_object_set_new(tx, "reorgs_past_settle_depth", json_integer((json_int_t)w->deep_reorgs));
  json_t *by_pool = json_array();
  for (guint p = 0; p < w->n_pools; p++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(pool_names[p]));
    json_object_set_new(o, "committed", json_integer((json_int_t)w->pool_included[p]));
    json_object_set_new(o, "censors", json_boolean(w->cfg.censors[p]));
    json_object_set_new(o, "censored_committed", json_integer((json_int_t)w->pool_censored_included[p]));
    json_array_append_new(by_pool, o);
  }
  json_object_set_new(tx, "by_pool", by_pool);
  if (w->censor_alpha <= 0) return;
  json_t *c = json_object_get(tx, "censorship");
  if (!c) {
    c = json_object();
    json_object_set_new(tx, "censorship", c);
  }
  json_t *names = json_array();
  for (guint p = 0; p < w->n_pools; p++)
    if (w->cfg.censors[p]) json_array_append_new(names, json_string(pool_names[p]));
  json_object_set_new(c, "pools", names);
  if (w->cfg.censor_share > 0) json_object_set_new(c, "sender_share", json_real(w->cfg.censor_share));
  if (w->cfg.censor_tx_share > 0) json_object_set_new(c, "tx_share", json_real(w->cfg.censor_tx_share));
  if (w->cfg.n_censor_senders) json_object_set_new(c, "senders", json_integer(w->cfg.n_censor_senders));
  json_object_set_new(c, "hash_share", json_real(w->censor_alpha));
  json_object_set_new(c, "expected_wait_ratio_iid", json_real(1.0 / (1.0 - MIN(w->censor_alpha, 1 - 1e-12))));
  json_object_set_new(c, "committed_in_declared", json_integer((json_int_t)w->censored_committed));
  json_t *ge = json_object(), *iid = json_object();
  for (guint k = 1; k < CENSOR_K; k++) {
    char key[8];
    g_snprintf(key, sizeof key, "%u", k);
    if (w->censored_committed)
      json_object_set_new(ge, key, json_real((double)sum_from(w->censored_skip, k) / (double)w->censored_committed));
    json_object_set_new(iid, key, json_real(pow(w->censor_alpha, k)));
  }
  json_object_set_new(c, "skipped_ge", ge);
  json_object_set_new(c, "skipped_ge_iid", iid);
}


gboolean tx_world_write_censorship_csv(const TxWorld *w, FILE *out) {
  fputs("k,censored_committed,censored_skipped_ge_k,censored_share_ge_k,iid_share_ge_k,uncensored_committed,"
        "uncensored_waited_ge_k,uncensored_share_ge_k\n",
        out);
  for (guint k = 0; k < CENSOR_K; k++) {
    guint64 c = sum_from(w->censored_skip, k), u = sum_from(w->uncensored_wait_blocks, k);
    fprintf(out, "%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.17g,%.17g,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                 ",%.17g\n",
            k, w->censored_committed, c, w->censored_committed ? (double)c / (double)w->censored_committed : 0.0,
            pow(w->censor_alpha, k), w->uncensored_committed, u,
            w->uncensored_committed ? (double)u / (double)w->uncensored_committed : 0.0);
  }
  return !ferror(out);
}

guint64 tx_world_live(const TxWorld *w) { return w->live; }
guint64 tx_world_created(const TxWorld *w) { return w->created; }
