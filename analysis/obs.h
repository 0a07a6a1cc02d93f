/* obs.h: the observation stream: what a simulation emits and what measured logs are turned into.
 *
 * The analysis code reads only these types, never the engine or the models, so simulated and measured
 * data go through exactly the same metric code.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define OBS_GENESIS_ID UINT64_C(0) /* the id of the genesis block (height 0, no miner) */
#define OBS_MAX_UNCLES 8           /* the most uncle references a block may carry in any rule */
#define OBS_MINER_NONE UINT32_MAX

/* A block as mined (or as first parsed from a log). Immutable once emitted. */
typedef struct {
  uint64_t id;          /* unique, never OBS_GENESIS_ID */
  uint64_t parent;      /* OBS_GENESIS_ID for height 1 */
  uint32_t height;      /* parent's height + 1 (genesis is 0) */
  uint32_t miner;       /* index into the analysis' miner table, or OBS_MINER_NONE if unknown */
  int64_t mined_ns;     /* when it was mined (simulation time, or header time in a log) */
  int64_t timestamp_s;  /* header timestamp, whole seconds (0 where the model has none) */
  double difficulty;    /* its own difficulty; total difficulty is the sum along the chain */
  uint32_t n_uncles;
  uint64_t uncles[OBS_MAX_UNCLES]; /* ids of the blocks it references as uncles */
  uint32_t n_tx;        /* transactions included */
  uint64_t gas_used;
  uint32_t size_bytes;  /* encoded block size */
  gboolean empty;       /* mined on an empty template (no transactions) */
  uint64_t txset;       /* identifies the template's transaction set: equal for two blocks with the same
                         * transactions; 0 = unknown */
} ObsBlock;

#define OBS_TIME_NONE INT64_MAX

/* What one vantage point logged about one block: its first local reception of the full block (block
 * message, or the reply to its own fetch) and of a hash announcement. Either may be OBS_TIME_NONE. */
typedef struct {
  uint64_t block;       /* ObsBlock.id */
  uint32_t vantage;     /* index into the analysis' vantage table */
  int64_t block_msg_ns; /* first full-block reception (local clock) */
  int64_t announce_ns;  /* first announcement reception (local clock) */
} ObsSighting;

/* Transaction kinds, as the study classified them (ObsTx.type). */
enum {
  OBS_TX_TX = 0, /* a plain value transfer */
  OBS_TX_MC = 1, /* a message call to a contract */
  OBS_TX_CC = 2, /* a contract creation */
};

/* A transaction as created (or as first parsed from a log). Immutable once emitted. */
typedef struct {
  uint64_t id;          /* unique */
  uint64_t sender;      /* account that signed it */
  uint64_t nonce;       /* the sender's sequence number */
  int64_t created_ns;   /* when it was created (OBS_TIME_NONE where unknown, as in a measured log) */
  uint8_t type;         /* OBS_TX_TX, OBS_TX_MC or OBS_TX_CC */
  uint64_t gas_limit;
  double gas_price_wei;
  gboolean censored;    /* belongs to the set a censoring pool refuses to include */
} ObsTx;

/* One vantage point's first local reception of a transaction (the earlier of its transaction message and
 * its hash announcement). Repeats are allowed; the earliest counts. */
typedef struct {
  uint64_t tx;          /* ObsTx.id */
  uint32_t vantage;     /* index into the analysis' vantage table */
  int64_t seen_ns;      /* local clock */
} ObsTxSighting;

/* A transaction is in a block. A transaction may be in several blocks on different branches; only its
 * main-chain block counts as its inclusion. */
typedef struct {
  uint64_t tx;          /* ObsTx.id */
  uint64_t block;       /* ObsBlock.id, never OBS_GENESIS_ID */
  uint32_t height;      /* that block's height (>= 1), so that branches can be settled height by height */
} ObsTxInclusion;

G_END_DECLS
