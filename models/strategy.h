/* strategy.h: the "strategy" model family: how a pool's miners treat the blocks they find and the blocks they
 * hear of (honest, Eyal-Sirer selfish mining, the victim of block withholding), and the pools[] entry that
 * chooses one.
 *
 * A pools[] entry is flat: "strategy": NAME beside the pool's own keys, and the parameters of every strategy
 * beside those (each with its default, so the echo is the same whichever strategy a --set picks). Only the
 * chosen strategy's parameters may differ from their defaults: each strategy's check_pool says so for its
 * own parameters, with the pool's path.
 */
#pragma once

#include <glib.h>
#include <jansson.h>

#include "engine.h"
#include "obs.h"
#include "params.h"

G_BEGIN_DECLS

typedef struct PowWorld PowWorld;
typedef struct PowMiner PowMiner;

typedef struct {
  SimModelInfo info; /* family "strategy"; info.help is the text after "NAME: " in the pools[] help */
  /* The strategy's own state for one miner of a pool that chose it (owned by that miner's entity); NULL: none. */
  gpointer (*miner_new)(const void *params);
  void (*miner_free)(gpointer state);
  /* A find of the miner fired: TRUE to mine the block, FALSE when it is lost. May draw from the miner's
   * stream (sim_ctx_rng). NULL: always mine. */
  gboolean (*on_find)(const void *params, gpointer state, SimCtx *ctx);
  /* The miner mined `b`: publish it now (pow_miner_publish) or later. NULL: publish at once. */
  void (*on_mined)(const void *params, gpointer state, PowMiner *m, SimCtx *ctx, const ObsBlock *b);
  /* The miner published `b` (its own block). May be NULL. */
  void (*on_published)(gpointer state, const ObsBlock *b);
  /* A block of another miner reached the miner (after its fork choice). May be NULL. */
  void (*on_public)(const void *params, gpointer state, PowMiner *m, SimCtx *ctx, const ObsBlock *b);
  /* Adds the strategy's summary keys; called once after the run when a pool chose it. May be NULL. */
  void (*add_json)(const PowWorld *world, json_t *summary);
  /* Checks the strategy's parameters in a pools[] entry at `path` ("$.pools[3]"), `chosen` telling whether
   * the pool chose this strategy (its parameters must then be meaningful, else keep their defaults). May be
   * NULL. */
  void (*check_pool)(const void *params, gboolean chosen, SimDiag *diag, const char *path);
} PowStrategyModel;

extern const PowStrategyModel pow_strategy_honest, pow_strategy_selfish, pow_strategy_withholding;

/* The family's models in registration order (NULL-terminated). */
extern const SimModelInfo *const pow_strategy_list[];

/* One entry of the scenario's "pools" array. */
typedef struct {
  char *name;
  double hash_share;    /* normalised by the loader so that all pools sum to 1 */
  int64_t miners;       /* independent miners this entry stands for (each gets hash_share / miners) */
  SimModelRef strategy; /* family "strategy" (PowStrategyModel) and its parameters (borrowed from all_strategies) */
  double empty_window_ms; /* its own empty-template window; < 0: chain.empty_window_ms */
  char *coinbase;         /* "0x" + 40 hex digits written as its blocks' Coinbase in EMC logs; "" = synthetic */
  double miner_hash_sd;   /* relative spread of its miners' hash power (0: equal; see pow_pool_describe) */
  SimModelRef *all_strategies; /* every strategy's parameters as the entry gave them, in the family's order */
} PowPoolSpec;

/* Parses the pools[] entry `obj` at `path` into `out` (zeroed by the caller): its own keys and every
 * strategy's parameters (unknown keys refused, defaults filled into `obj`, problems to `diag`); `extra` are
 * further keys to accept (NULL-terminated, may be NULL). Either way free with pow_pool_clear(). */
gboolean pow_pool_parse(PowPoolSpec *out, json_t *obj, const char *path, const char *const *extra, SimDiag *diag);

/* Each strategy's check_pool on pool `pool` (at "$.pools[INDEX]"). */
void pow_pool_check(const PowPoolSpec *pool, guint index, SimDiag *diag);

/* Frees what pow_pool_parse stored (NULL accepted) and zeroes `pool`. */
void pow_pool_clear(PowPoolSpec *pool);

/* The parameter table of a pools[] entry for help (sim_params_describe's format). */
void pow_pool_describe(int indent, GString *out);

/* The strategy state of miner `miner` (what its strategy's miner_new gave), or NULL. */
gpointer pow_world_miner_strategy(const PowWorld *world, guint miner);

/* Publishes block `id`, which the miner mined, to the network (a strategy's on_mined or on_public). */
void pow_miner_publish(PowMiner *m, SimCtx *ctx, uint64_t id);
const PowWorld *pow_miner_world(const PowMiner *m);

/* Every chosen strategy's add_json, in the family's order. */
void pow_world_add_strategy_json(const PowWorld *world, json_t *summary);

G_END_DECLS
