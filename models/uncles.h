/* uncles.h: the "uncle_rule" model family: which side blocks a new block may reference as uncles, how
 * many, how deep, and the reward schedule (Ethereum: up to 2 uncles whose parent is one of the block's 7
 * nearest ancestors other than its own parent; uncle reward (u + 8 - b) / 8, nephew 1/32 per uncle). */
#pragma once

#include "params.h"

G_BEGIN_DECLS

/* The parameters every rule shares. A rule without a parameter table ("none") leaves them zero. */
typedef struct {
  int64_t max_uncles;    /* references per block */
  int64_t generations;   /* an uncle's parent must be among this many nearest ancestors: depth <= generations - 1 */
  double uncle_base;     /* uncle reward = (u + uncle_base - b) / uncle_base * block reward */
  double nephew_divisor; /* nephew reward = block reward / nephew_divisor per uncle */
} SimUncleParams;

typedef struct {
  SimModelInfo info;
  /* May a block reference a side block mined by `uncle_miner` at a height where the referencing block's
   * own chain has a block mined by `main_miner`? (Depth and count limits are checked by the caller.) */
  gboolean (*allowed)(const SimUncleParams *params, guint32 uncle_miner, guint32 main_miner);
} SimUncleRule;

extern const SimUncleRule sim_uncle_ethereum;
extern const SimUncleRule sim_uncle_no_self;
extern const SimUncleRule sim_uncle_none;

G_END_DECLS
