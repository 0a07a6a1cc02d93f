/* relay.h: the "relay" model family: how one block spreads over the peer-to-peer topology.
 *
 * A relay model computes, for one block, when each node first has the full block and when it first hears
 * an announcement of it. It runs as a label-setting (Dijkstra-like) computation over the read-only
 * topology, in time order, with three kinds of steps per node: HAVE (first full block), PUSH (after header
 * verification: full block to a subset of the peers not known to have it) and ANNOUNCE (after import:
 * hash to the rest). A node's decisions use exactly what it has heard by its decision time, because every
 * message that reaches it earlier comes from a decision taken earlier, which the time order has already
 * processed. This replaces one engine event per message (about 25 per node per block) with one
 * relaxation per message inside a tight loop; only what the rest of the simulation needs (pool gateways,
 * vantage points) becomes engine events.
 *
 * Links are idle at the start of each block: blocks of different heights do not queue behind each other
 * on a node's upload link (Ethereum blocks are ~20 KB, transmitted in ~10 ms at home upload speeds). A
 * node's own uploads for one block are serial: its pushes, then its fetch replies.
 */
#pragma once

#include <glib.h>

#include "engine.h"
#include "net.h"
#include "params.h"
#include "rng.h"

G_BEGIN_DECLS

/* The block being relayed. */
typedef struct {
  const guint32 *sources; /* nodes that have it first (the miner's gateways) */
  const SimTime *source_t; /* when each source has it (validated and imported) */
  guint n_sources;
  double size_bytes;
  double gas_used;
} RelayBlock;

/* Scratch space and results of one propagation, reusable across blocks. Owned by one entity. */
typedef struct RelayWork RelayWork;

/* A work for topology `t`: pass that same topology, unchanged, to every propagation that uses the work
 * (the Geth kernel keeps a packed copy of its per-edge data, made on first use). Free with
 * relay_work_free(). */
RelayWork *relay_work_new(const NetTopology *t);
void relay_work_free(RelayWork *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RelayWork, relay_work_free)

/* Results of the last relay_propagate() call, indexed by node: first full block (OBS_TIME_NONE-like
 * SIM_TIME_MAX if never), first announcement (SIM_TIME_MAX if none). With `stop_after` = n, only nodes
 * 0..n-1 (the specials) are guaranteed final; others may be SIM_TIME_MAX or not final. */
SimTime relay_work_have(const RelayWork *w, guint32 node);
SimTime relay_work_announce(const RelayWork *w, guint32 node);
/* First full block received as a pushed block message (not as a fetch reply), SIM_TIME_MAX if none. */
SimTime relay_work_first_push(const RelayWork *w, guint32 node);
/* Nodes that got the full block in the last propagation, and messages sent. */
guint64 relay_work_reached(const RelayWork *w);
guint64 relay_work_messages(const RelayWork *w);

typedef struct {
  SimModelInfo info;
  /* Computes the spread of `b`. If `stop_after` > 0 the computation may stop once nodes 0..stop_after-1
   * all have the block. Randomness comes from `rng` only (the caller keys it by block). */
  void (*propagate)(const void *params, const NetGeoParams *gp, const NetTopology *t, const RelayBlock *b,
                    guint32 stop_after, SimRng *rng, RelayWork *w);
  /* Time from having a block to having imported it (so a pool can mine on it). */
  SimTime (*import_ns)(const void *params, double gas_used);
} RelayModel;

extern const RelayModel relay_geth;

/* Bitcoin Core's inv -> getdata -> block relay with BIP 152 compact blocks, as SimBlock models it (see
 * relay_btc.c for the exact rules and their departures from SimBlock). */
extern const RelayModel relay_btc;

/* ---- For relay models outside relay.c: they keep their own scratch state and report through these ----
 * A kernel calls relay_work_begin() first, then records the final times of every node it reached or that
 * heard an announcement, then adds its counts. Nodes not recorded read as never reached. */

/* Starts a new propagation in `w`: every node unreached, counts zero. */
void relay_work_begin(RelayWork *w);
/* Records node `node`'s results: first full block (`have`, SIM_TIME_MAX: never; it then counts as reached
 * by relay_work_have()), first block message (`first_push`), first announcement (`announce`). */
void relay_work_record(RelayWork *w, guint32 node, SimTime have, SimTime first_push, SimTime announce);
void relay_work_add_counts(RelayWork *w, guint64 reached, guint64 messages);
/* A model's own scratch space attached to `w` (one per work, tagged by `owner`, e.g. the model's table):
 * NULL until set. relay_work_set_ext() hands `ext` over to `w`, which frees it with `free_fn` when freed or
 * when another owner's scratch replaces it. */
gpointer relay_work_ext(const RelayWork *w, const void *owner);
void relay_work_set_ext(RelayWork *w, const void *owner, gpointer ext, GDestroyNotify free_fn);
/* The topology sizes the work was made for. */
guint32 relay_work_n_nodes(const RelayWork *w);

G_END_DECLS
