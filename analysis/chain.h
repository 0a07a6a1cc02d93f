/* chain.h: chain metrics over a stream of blocks: main chain, block types, uncles, rewards, per-pool
 * shares and runs of consecutive main blocks by one miner.
 *
 * Usage: an_chain_new() with the miner table, an_chain_add_block() for every block (any order in which
 * each block comes after its parent is fine), an_chain_finalize(), then read the results with the
 * accessors or write them with an_chain_add_json() / an_chain_write_*_csv().
 *
 * Definitions (DESIGN.md, "Measurement model"):
 *  - Main chain: the chain ending at the block with the largest total difficulty (sum of `difficulty`
 *    from height 1; with AnChainParams.longest_chain, the largest height); ties go to the earliest mined,
 *    then to the smaller id.
 *  - Wasted work: the share of the window's work (sum of difficulty) spent on blocks that earn nothing
 *    (unreferenced forks; under a rule without uncle rewards, every non-main block).
 *  - Small and large pools (JSON "rewards"): pools with a hash share of at least 10% are large; for each
 *    class the summed hash, main and reward shares and reward share / hash share.
 *  - Block types: main; uncle (a non-main block referenced as an uncle by a main block: "recognized");
 *    unreferenced (a non-main block no main block references: "unrecognized fork").
 *  - Window: when `max_height` > 0 only blocks with height <= max_height are counted (so a run that
 *    mines a few heights past the window lets the last window blocks be referenced as uncles). Main
 *    blocks above the window still count as referencing blocks, and their uncles' rewards are counted
 *    for uncles inside the window; their own rewards are not.
 *  - Rewards: a main block earns block_reward plus block_reward / nephew_divisor per uncle it
 *    references; an uncle at height u referenced by a main block at height b earns
 *    (u + uncle_base - b) / uncle_base * block_reward (Ethereum: base 8, divisor 32, reward 2 ETH).
 *  - Runs: maximal sequences of consecutive main blocks (by height) mined by the same miner. Runs are per
 *    miner; pools made of several independent miners report the longest run of any member.
 *  - Forks: a fork is a maximal connected set of non-main blocks hanging off the main chain (a side
 *    branch); its first block is the one whose parent is a main-chain block (or the genesis block). Its
 *    length is its depth: the longest path of non-main blocks from that main-chain block. Only window
 *    blocks count: a fork counts if its first block is in the window, and its length is the depth reached
 *    by its window blocks.
 *  - One-miner forks: a pool with two or more blocks at one height (a second block found on the old parent
 *    before its own miners got work on its new block, or racing gateways). Same transaction set when all
 *    of them carry the same nonzero ObsBlock.txset.
 *  - i.i.d. expectation of maximal runs of length >= k by a miner with main share p over n main blocks:
 *    p^k (1 + (n - k)(1 - p)) for n >= k, else 0 (about n (1 - p) p^k).
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

#include "obs.h"
#include "obs_sink.h"

G_BEGIN_DECLS

/* One mining entity (the unit of runs). `group` is the index of the reporting row (pool) it belongs to. */
typedef struct {
  double hash_share; /* share of total hash power, for reporting */
  guint group;
} AnMiner;

typedef struct {
  double block_reward;   /* ETH */
  double uncle_base;     /* 8 */
  double nephew_divisor; /* 32 */
  uint32_t max_height;   /* 0 = no window */
  gboolean longest_chain; /* fork choice by height (each block weighs 1) instead of total difficulty */
} AnChainParams;

typedef enum { AN_BLOCK_MAIN = 0, AN_BLOCK_UNCLE, AN_BLOCK_UNREFERENCED } AnBlockType;

#define AN_RUNS_KMIN 5
#define AN_RUNS_KMAX 14

typedef struct {
  uint64_t heights;            /* main blocks in the window (= height of the window's last main block) */
  uint64_t blocks_total;       /* all blocks in the window */
  uint64_t main;
  uint64_t uncles_included;    /* window blocks of type uncle */
  uint64_t forks_unreferenced; /* window blocks of type unreferenced */
  double uncle_rate;           /* uncles_included / main */
  double stale_share;          /* (blocks_total - main) / blocks_total */
  double empty_share;          /* empty blocks / blocks_total */
  double mean_interval_s;      /* (mined time of last main - first main) / (main - 1); 0 if main < 2 */
  double wasted_work_share;    /* difficulty of window blocks that earn nothing / difficulty of all of them */
  double omf_reward_eth;       /* rewards earned by the side blocks of one-miner forks (as uncles) */
  uint64_t runs_max;           /* longest run of any miner */
  uint64_t runs_count_ge[AN_RUNS_KMAX + 1]; /* [k] = maximal runs of length >= k, all miners, k <= KMAX */
  /* One-miner forks: (pool, height) pairs in the window where one pool has two or more blocks. */
  uint64_t omf_count;
  uint64_t omf_same_txset;   /* ... whose blocks all carry the same transaction set (ObsBlock.txset) */
  uint64_t omf_blocks;       /* the non-main blocks of those pairs (all but one if none is main) */
  uint64_t omf_ref_self;     /* ... referenced as uncles by a main block of the same pool */
  uint64_t omf_ref_other;    /* ... referenced by another pool's main block */
  /* Why runs outnumber the i.i.d. expectation: the main block at window height h + 1 by the miner of the main
   * block at h, after heights where another window block competed with the main one (a fork race) and after
   * the rest. [0]: contested heights, [1]: uncontested. `next_expected` sums the miner's main share over those
   * heights (what independent winners would give). */
  uint64_t next_heights[2];
  uint64_t next_same[2];
  double next_expected[2];
} AnChainSummary;

typedef struct {
  const char *name;
  double hash_share;   /* sum over its miners */
  double main_share;   /* its main blocks / all main blocks */
  uint64_t blocks;     /* all its blocks in the window */
  uint64_t main;
  uint64_t uncles;     /* its blocks of type uncle */
  uint64_t unreferenced;
  uint64_t empty;
  uint64_t max_run;    /* longest run of any one of its miners */
  double reward_eth;
  double reward_share; /* its reward / all rewards paid for window blocks */
  uint64_t one_miner_forks; /* heights in the window where it has two or more blocks */
} AnPoolResult;

typedef struct AnChain AnChain;

/* `miners` and `group_names` are copied. Every miner's group must be < n_groups. */
AnChain *an_chain_new(const AnMiner *miners, guint n_miners, const char *const *group_names, guint n_groups);
void an_chain_free(AnChain *chain);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(AnChain, an_chain_free)

/* Copies `block` in. Returns FALSE and sets `error` (domain AN_CHAIN_ERROR) for a duplicate id, an unknown
 * parent, a height that is not parent + 1, a miner index out of range, or more than OBS_MAX_UNCLES uncles. */
gboolean an_chain_add_block(AnChain *chain, const ObsBlock *block, GError **error);

/* Computes everything. Uncle references to unknown ids are an error. Call once. */
gboolean an_chain_finalize(AnChain *chain, const AnChainParams *params, GError **error);

const AnChainSummary *an_chain_summary(const AnChain *chain);
guint an_chain_n_pools(const AnChain *chain);
const AnPoolResult *an_chain_pool(const AnChain *chain, guint group);
/* Type of a block by id; FALSE if unknown. */
gboolean an_chain_block_type(const AnChain *chain, uint64_t id, AnBlockType *type);
const char *an_block_type_name(AnBlockType type); /* "main", "uncle", "unreferenced" */

/* Number of maximal runs of exactly `len` (all miners), and the longest length with a nonzero count. */
uint64_t an_chain_runs_of_length(const AnChain *chain, uint64_t len);

/* The run (see "Runs" above) that main block `id` belongs to: its length, and the block's 1-based position
 * in it. Returns FALSE, leaving the outputs alone, if `id` is unknown, not a main block, outside the
 * window, or mined by no known miner. Either output may be NULL. */
gboolean an_chain_block_run(const AnChain *chain, uint64_t id, uint32_t *run_len, uint32_t *position);

/* Number of forks (see "Forks" above) of exactly `length` blocks, and the longest fork length (0 if none). */
uint64_t an_chain_fork_count(const AnChain *chain, uint32_t length);
uint32_t an_chain_fork_max(const AnChain *chain);

/* Access to the blocks, for metrics that join other records with the chain (analysis/propagation.h).
 * Returned pointers are owned by the chain and valid until an_chain_free(). Blocks are numbered
 * 0 .. an_chain_n_blocks() - 1 in insertion order, the only order in which outputs list them; the genesis
 * block is not stored. */
guint an_chain_n_blocks(const AnChain *chain);
const ObsBlock *an_chain_block_at(const AnChain *chain, guint index);
/* The block with id `id`, or NULL if it is unknown or the genesis block. */
const ObsBlock *an_chain_block(const AnChain *chain, uint64_t id);
/* Whether a stored block of id `id` exists and lies in the window (FALSE for the genesis block). */
gboolean an_chain_block_in_window(const AnChain *chain, uint64_t id);
/* The main-chain block at `height`, or NULL for height 0 (genesis) or above the main chain's tip. The main
 * chain may reach past the window. */
const ObsBlock *an_chain_main_block(const AnChain *chain, uint32_t height);

/* A sink whose blocks go to an_chain_add_block(chain) (the other members are NULL). */
void an_chain_sink_init(ObsSink *sink, AnChain *chain);
/* an_chain_main_block() as an ObsMainChainFn; `user` is the AnChain. */
const ObsBlock *an_chain_main_block_fn(gpointer user, uint32_t height);
/* The group (pool) of `miner`, or G_MAXUINT for OBS_MINER_NONE or an index out of range. Its name is
 * an_chain_pool(chain, group)->name, or an_chain_group_name() before an_chain_finalize(). */
guint an_chain_miner_group(const AnChain *chain, uint32_t miner);
const char *an_chain_group_name(const AnChain *chain, guint group);

/* Maximal runs of length >= k (1 <= k <= AN_RUNS_KMAX) by the miners of pool `group`, and their i.i.d.
 * expectation (the sum over its miners, each at its own main share). */
uint64_t an_chain_pool_runs_ge(const AnChain *chain, guint group, unsigned k);
double an_chain_pool_runs_expected_iid(const AnChain *chain, guint group, unsigned k);

/* Expected maximal runs of length >= k for share p over n trials (formula above). */
double an_runs_expected_iid(double p, uint64_t n, unsigned k);

/* Adds "chain", "pools", "runs" and "forks" objects to `summary` (keys as in DESIGN.md "Outputs"); "forks"
 * is {"count": forks, "max_length": longest, "histogram": [[length, forks of that length], ...]} with
 * only nonzero lengths, ascending. */
void an_chain_add_json(const AnChain *chain, json_t *summary);

/* CSV tables (C locale, stable column order, header row first). Return FALSE on a write error.
 * blocks.csv: id,height,parent,miner,pool,mined_s,type,difficulty,n_uncles,uncles,n_tx,gas_used,
 * size_bytes,empty; one row per window block in insertion order. */
gboolean an_chain_write_blocks_csv(const AnChain *chain, FILE *out);
gboolean an_chain_write_pools_csv(const AnChain *chain, FILE *out);
gboolean an_chain_write_runs_csv(const AnChain *chain, FILE *out);

#define AN_CHAIN_ERROR (an_chain_error_quark())
GQuark an_chain_error_quark(void);

/* Error codes of AN_CHAIN_ERROR. Messages name the offending block as 0x%016 hex, e.g.
 * "block 0x00000000000000a1: unknown parent 0x00000000000000a0". */
typedef enum {
  AN_CHAIN_ERROR_INVALID_BLOCK, /* an_chain_add_block(): the block itself is inconsistent with the stream */
  AN_CHAIN_ERROR_INVALID_UNCLE, /* an_chain_finalize(): an uncle reference that cannot be resolved or paid:
                                 * unknown id, a main-chain block, referenced twice by the main chain, or
                                 * not below the referencing block's height */
} AnChainErrorCode;

G_END_DECLS
