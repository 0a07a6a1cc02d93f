/* geo.c: the "geo" network model: pools reach the network through gateway nodes in data centres, blocks
 * spread over the peer-to-peer topology by the relay model, vantage-point nodes log what they receive. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "delay.h"
#include "geo.h"
#include "relay.h"
#include "spinwait.h" /* sim_mono_ns: two calls per block (vDSO, about 20 ns each) */

enum { GEO_EV_SIGHT = 1 };

typedef struct {
  guint index;
  GArray *sightings; /* ObsSighting, in the order received */
  GArray **first;    /* per miner: int64 first reception of its block seq (OBS_TIME_NONE: none yet) */
  guint n_miners;
} Vantage;

typedef struct {
  RelayWork *work; /* shared scratch, see GeoState.work */
  SimTime *source_t;
  guint64 deliveries;
  gint64 relay_ns; /* wall-clock time in the relay kernel (geo_relay_wall_s) */
} GeoScratch;

typedef struct {
  const NetGeoParams *p;
  const RelayModel *relay;
  NetTopology *topo;
  guint n_miners;
  guint32 **miner_gw; /* gateway nodes of each miner */
  guint *miner_n_gw;
  guint32 *miner_gw1; /* a miner's only gateway, or G_MAXUINT32 (none, or several): geo_publish's loop */
  /* When every miner has one gateway and they do not decrease with the miner's index (miners on ordinary
   * nodes): node v's miners are node_miners[v] .. node_miners[v + 1] - 1; else NULL. */
  guint *node_miners;
  guint max_gw;
  SimEntityId *miner_entity;
  Vantage *vantages;
  SimEntityId *vantage_entity;
  guint n_vantages;
  GeoScratch **scratches; /* per miner, owned by the miners; read only after the run */
  /* The relay's working memory (about 1.5 MB for 4000 nodes). It holds nothing from one event to the next,
   * so miners share it: one copy stays in cache, where one per miner made every block a cold start (3x
   * slower). The world is one engine group, so one block's relay runs at a time; the work owns the relay's
   * own threads (relay_threads). */
  RelayWork *work;
  guint relay_threads;
  gboolean relay_adaptive;
  RelayIdleFn side_work; /* for the relay's first extra thread between blocks (pow_world_set_side_work) */
  gpointer side_user;
  uint64_t seed;
  gboolean on_nodes; /* some miners sit on ordinary nodes: every propagation runs to the end */
  /* What the rest of the simulation reads of a block's relay (relay.h): each miner's first gateway to have
   * it, the vantage points' first block message and announcement; the relay may stop once they are final. */
  RelayStop stop;
  guint32 *stop_group;
  /* For the transaction world: each pool's nodes (its miners' gateways), vantage names and nodes. */
  guint n_pools;
  guint32 **pool_gw;
  guint *pool_n_gw;
  const char **vantage_names;
  guint32 *vantage_nodes;
  /* sim run --trace-blocks (geo_trace_set): the heights, sorted; a relay work of its own, so that the
   * run's work, its statistics and its thread choice stay as without the trace; the arrival table,
   * trace_slots x n_nodes, allocated before the run; the node table's strings. */
  const PowConfig *cfg;
  uint32_t *trace_h;
  guint n_trace_h;
  RelayWork *trace_work;
  SimTime *trace_have;
  PowTracedBlock *trace_blocks;
  guint trace_slots, trace_used;
  guint8 *trace_per_h; /* blocks traced so far per height */
  guint64 trace_dropped, trace_mismatches;
  guint *node_pool;    /* per node: the pool whose miners it hosts, NET_NO_POOL if none */
  /* The pipeline (geo_pipe_*): successive blocks' relays on the pipe's threads at once, their deliveries
   * inserted into the engine as they become final. NULL: each block's relay runs inside geo_publish. */
  SimEngine *engine;
  const PowWorld *world;
  gboolean pipe_ok;    /* the model allows it (geo_pipe_possible) */
  gboolean pipe_wanted; /* sim run --relay-pipeline */
  RelayPipe *pipe;
  struct Pending *pend; /* pipe_slots records, in use or not */
  guint pipe_slots, n_pend;
  gint *entity_miner;  /* per engine entity id < n_entity_map: its miner, -1: a vantage point, -2: other */
  guint n_entity_map;
  SimTime *held_t;     /* per miner: the earliest event the engine holds for it (SIM_TIME_MAX: none) */
  SimTime *clear_until; /* per miner: it holds back no event before this (miner_clear_until; 0: unknown) */
  guint n_held;
  gboolean sightings_unsorted; /* some sightings arrived out of order (geo_vantage_sightings sorts them) */
  guint pipe_threads;
  guint64 pipe_blocks, pipe_overlapped, pipe_in_flight, gate_waits, gate_holds;
  gint64 gate_wait_ns;
  SimTime prepared; /* the next find's first work done up to here while the gate would wait */
  SimTime late_min; /* the least time of the events the gate put in the queue since its call began */
} GeoState;

static void geo_pipe_free(GeoState *g);
static gboolean geo_pipe_possible(const GeoState *g, const PowWorld *world);

static void vantage_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  Vantage *v = state;
  g_assert(ev->type == GEO_EV_SIGHT);
  ObsSighting s = {.block = ev->payload, .vantage = v->index, .block_msg_ns = OBS_TIME_NONE,
                   .announce_ns = OBS_TIME_NONE};
  if (ev->aux == 0)
    s.block_msg_ns = sim_ctx_now(ctx);
  else
    s.announce_ns = sim_ctx_now(ctx);
  g_array_append_val(v->sightings, s);
  /* The study's local time of a block: the earlier of block message and announcement. */
  uint64_t m = (s.block >> 32) - 1;
  uint32_t seq = (uint32_t)s.block;
  if (m < v->n_miners) {
    GArray *f = v->first[m];
    if (f->len <= seq) {
      guint old = f->len;
      g_array_set_size(f, seq + 1);
      for (guint i = old; i <= seq; i++) g_array_index(f, int64_t, i) = OBS_TIME_NONE;
    }
    int64_t *x = &g_array_index(f, int64_t, seq);
    if (*x == OBS_TIME_NONE || sim_ctx_now(ctx) < *x) *x = sim_ctx_now(ctx);
  }
}

static const SimEntityKind vantage_kind = {.name = "vantage", .handle = vantage_handle};

static void geo_free_state(gpointer state) {
  GeoState *g = state;
  if (!g) return;
  geo_pipe_free(g);
  relay_work_free(g->work);
  relay_work_free(g->trace_work);
  g_free(g->trace_h);
  g_free(g->trace_have);
  g_free(g->trace_blocks);
  g_free(g->trace_per_h);
  g_free(g->node_pool);
  g_free(g->stop_group);
  net_topology_free(g->topo);
  for (guint i = 0; i < g->n_miners; i++) g_free(g->miner_gw ? g->miner_gw[i] : NULL);
  g_free(g->miner_gw);
  g_free(g->miner_n_gw);
  g_free(g->miner_gw1);
  g_free(g->node_miners);
  g_free(g->miner_entity);
  for (guint i = 0; i < g->n_vantages; i++) {
    if (g->vantages[i].sightings) g_array_unref(g->vantages[i].sightings);
    for (guint m = 0; m < g->vantages[i].n_miners; m++) g_array_unref(g->vantages[i].first[m]);
    g_free(g->vantages[i].first);
  }
  for (guint p = 0; p < g->n_pools; p++) g_free(g->pool_gw[p]);
  g_free(g->pool_gw);
  g_free(g->pool_n_gw);
  g_free(g->vantage_names);
  g_free(g->vantage_nodes);
  g_free(g->vantages);
  g_free(g->vantage_entity);
  g_free(g->scratches);
  g_free(g);
}

static gpointer geo_init(const void *params, const PowWorld *world, SimEngine *engine, GError **error) {
  const NetGeoParams *p = params;
  const PowConfig *cfg = pow_world_config(world);
  GeoState *g = g_new0(GeoState, 1);
  g->p = p;
  g->relay = (const RelayModel *)p->relay.model;
  g->seed = cfg->seed;
  g->cfg = cfg;
  g->topo = net_topology_build(p, cfg->seed, error);
  if (!g->topo) {
    geo_free_state(g);
    return NULL;
  }
  /* The topology's per-edge arrays are read by every relay and never written: the engine spreads them over
   * the NUMA nodes in use (nothing happens on a machine with one node). */
  {
    NetTopology *t = g->topo;
    sim_engine_share_table(engine, "topology adj", t->adj, t->n_edges * sizeof *t->adj);
    sim_engine_share_table(engine, "topology rev", t->rev, t->n_edges * sizeof *t->rev);
    sim_engine_share_table(engine, "topology lat_mean_ns", t->lat_mean_ns,
                           t->n_edges * sizeof *t->lat_mean_ns);
    sim_engine_share_table(engine, "topology lat_floor_ns", t->lat_floor_ns,
                           t->n_edges * sizeof *t->lat_floor_ns);
    sim_engine_share_table(engine, "topology tx_ns_per_byte", t->tx_ns_per_byte,
                           t->n_edges * sizeof *t->tx_ns_per_byte);
  }
  g->n_miners = pow_world_n_miners(world);
  g->miner_gw = g_new0(guint32 *, g->n_miners);
  g->miner_n_gw = g_new0(guint, g->n_miners);
  g->miner_entity = g_new0(SimEntityId, g->n_miners);
  g->scratches = g_new0(GeoScratch *, g->n_miners);
  /* Gateways of each pool, in the order listed; a pool of several miners spreads them round-robin. A pool
   * on ordinary nodes puts its miner k of M on ordinary node floor(k N / M), spread evenly over the node
   * ids; node ids carry no region order (regions are shuffled over them), so neither does the spread.
   * SimBlock's per-node hash power ~ Normal(400 000, 100 000) is approximated by equal shares (pow.c's
   * "miners"): it changes who mines, not how blocks propagate. */
  for (guint m = 0; m < g->n_miners; m++) {
    guint member = 0, pool = pow_world_miner_pool(world, m, &member);
    const PowPoolSpec *ps = &cfg->pools[pool];
    if (p->pool_on_nodes && pool < p->n_pools && p->pool_on_nodes[pool]) {
      guint32 n_ord = g->topo->n_nodes - g->topo->n_special;
      guint32 node = g->topo->n_special + (guint32)((guint64)member * n_ord / (guint64)ps->miners);
      g->miner_gw[m] = g_new(guint32, 1);
      g->miner_gw[m][0] = node;
      g->miner_n_gw[m] = 1;
      g->max_gw = MAX(g->max_gw, 1);
      g->miner_entity[m] = pow_world_miner_entity(world, m);
      g->on_nodes = TRUE;
      continue;
    }
    GArray *gws = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 s = 0; s < p->n_specials; s++)
      if (p->specials[s].role == NET_ROLE_GATEWAY && p->specials[s].pool == pool) g_array_append_val(gws, s);
    if (gws->len == 0) {
      g_set_error(error, POW_ERROR, POW_ERROR_INVALID,
                  "$.network.gateways: pool \"%s\" has no gateway (give it an entry with its cities)", ps->name);
      g_array_unref(gws);
      geo_free_state(g);
      return NULL;
    }
    if (ps->miners > 1) {
      guint32 only = g_array_index(gws, guint32, member % gws->len);
      g_array_set_size(gws, 1);
      g_array_index(gws, guint32, 0) = only;
    }
    g->miner_n_gw[m] = gws->len;
    g->max_gw = MAX(g->max_gw, gws->len);
    g->miner_gw[m] = (guint32 *)g_array_free(gws, FALSE);
    g->miner_entity[m] = pow_world_miner_entity(world, m);
  }
  g->miner_gw1 = g_new(guint32, MAX(g->n_miners, 1));
  for (guint m = 0; m < g->n_miners; m++)
    g->miner_gw1[m] = g->miner_n_gw[m] == 1 ? g->miner_gw[m][0] : G_MAXUINT32;
  gboolean by_node = g->n_miners > 0;
  for (guint m = 0; m < g->n_miners && by_node; m++)
    by_node = g->miner_gw1[m] != G_MAXUINT32 && g->miner_gw1[m] < g->topo->n_nodes &&
              (m == 0 || g->miner_gw1[m] >= g->miner_gw1[m - 1]);
  if (by_node) {
    g->node_miners = g_new(guint, (gsize)g->topo->n_nodes + 1);
    guint m = 0;
    for (guint32 v = 0; v <= g->topo->n_nodes; v++) {
      while (m < g->n_miners && g->miner_gw1[m] < v) m++;
      g->node_miners[v] = m; /* the first miner at node v or after */
    }
  }
  /* The relay's stop: one group per miner's gateways (a pool of one miner: all its gateways; each miner of
   * a pool of several mines behind one gateway, which others of the pool may share: the same group). */
  g->stop_group = g_new(guint32, MAX(g->topo->n_special, 1));
  for (guint32 v = 0; v < g->topo->n_special; v++) g->stop_group[v] = RELAY_STOP_NONE;
  guint32 n_groups = 0;
  for (guint m = 0; m < g->n_miners; m++) {
    if (g->miner_n_gw[m] == 0 || g->miner_gw[m][0] >= g->topo->n_special) continue;
    if (g->stop_group[g->miner_gw[m][0]] != RELAY_STOP_NONE) continue;
    for (guint i = 0; i < g->miner_n_gw[m]; i++) g->stop_group[g->miner_gw[m][i]] = n_groups;
    n_groups++;
  }
  g->stop = (RelayStop){.n_nodes = g->topo->n_special,
                        .group = g->stop_group,
                        .n_groups = n_groups,
                        .n_messages = p->n_vantages,
                        .first_message_only = !cfg->vantage_all_messages};
  g->n_vantages = p->n_vantages;
  g->vantages = g_new0(Vantage, g->n_vantages);
  g->vantage_entity = g_new0(SimEntityId, g->n_vantages);
  for (guint i = 0; i < g->n_vantages; i++) {
    g->vantages[i].index = i;
    g->vantages[i].sightings = g_array_new(FALSE, FALSE, sizeof(ObsSighting));
    g->vantages[i].n_miners = g->n_miners;
    g->vantages[i].first = g_new0(GArray *, MAX(g->n_miners, 1));
    for (guint m = 0; m < g->n_miners; m++) g->vantages[i].first[m] = g_array_new(FALSE, FALSE, sizeof(int64_t));
    g->vantage_entity[i] = sim_engine_add_entity(engine, &vantage_kind, &g->vantages[i]);
  }
  g->vantage_names = g_new0(const char *, g->n_vantages + 1);
  g->vantage_nodes = g_new0(guint32, MAX(g->n_vantages, 1));
  for (guint i = 0; i < g->n_vantages; i++) {
    g->vantage_names[i] = p->specials[i].name;
    g->vantage_nodes[i] = i; /* specials come first among the node ids */
  }
  g->engine = engine;
  g->world = world;
  g->pipe_ok = geo_pipe_possible(g, world);
  g->n_pools = cfg->n_pools;
  g->pool_gw = g_new0(guint32 *, MAX(g->n_pools, 1));
  g->pool_n_gw = g_new0(guint, MAX(g->n_pools, 1));
  /* Each pool's distinct nodes in the order its miners list them: one pass over the miners (a pool on
   * ordinary nodes has one per node, so a search of the list for duplicates was quadratic: 0.3 G
   * instructions at 10 000 nodes). seen[node] is the last pool + 1 that listed the node. */
  GArray **nodes = g_new(GArray *, MAX(g->n_pools, 1));
  for (guint pool = 0; pool < g->n_pools; pool++)
    nodes[pool] = g_array_new(FALSE, FALSE, sizeof(guint32));
  g_autofree guint *seen = g_new0(guint, MAX(g->topo->n_nodes, 1));
  for (guint m = 0; m < g->n_miners; m++) {
    guint pool = pow_world_miner_pool(world, m, NULL);
    if (pool >= g->n_pools) continue;
    for (guint i = 0; i < g->miner_n_gw[m]; i++) {
      guint32 node = g->miner_gw[m][i];
      if (seen[node] == pool + 1) continue;
      /* A node listed by another pool in between is listed again if this pool had it before: check the
       * list itself then (gateways are few; pools on ordinary nodes own their nodes). */
      gboolean dup = FALSE;
      if (seen[node] != 0)
        for (guint j = 0; j < nodes[pool]->len && !dup; j++)
          dup = g_array_index(nodes[pool], guint32, j) == node;
      seen[node] = pool + 1;
      if (!dup) g_array_append_val(nodes[pool], node);
    }
  }
  for (guint pool = 0; pool < g->n_pools; pool++) {
    g->pool_n_gw[pool] = nodes[pool]->len;
    g->pool_gw[pool] = (guint32 *)g_array_free(nodes[pool], FALSE);
  }
  g_free(nodes);
  return g;
}

static int64_t geo_reception(gconstpointer user, guint vantage, uint64_t block) {
  const GeoState *g = user;
  if (vantage >= g->n_vantages) return OBS_TIME_NONE;
  const Vantage *v = &g->vantages[vantage];
  uint64_t m = (block >> 32) - 1;
  uint32_t seq = (uint32_t)block;
  if (m >= v->n_miners || seq >= v->first[m]->len) return OBS_TIME_NONE;
  return g_array_index(v->first[m], int64_t, seq);
}

static void geo_tx_view(gpointer state, const PowWorld *world, TxNetView *view) {
  GeoState *g = state;
  (void)world;
  view->gp = g->p;
  view->topo = g->topo;
  view->n_vantages = g->n_vantages;
  view->vantage_names = g->vantage_names;
  view->vantage_node = g->vantage_nodes;
  view->n_pools = g->n_pools;
  view->pool_gw = (const guint32 *const *)g->pool_gw;
  view->pool_n_gw = g->pool_n_gw;
  view->reception = geo_reception;
  view->user = g;
}

static gpointer geo_miner_scratch(gpointer state, guint miner) {
  GeoState *g = state;
  GeoScratch *s = g_new0(GeoScratch, 1);
  if (!g->work) {
    g->work = relay_work_new(g->topo);
    relay_work_set_threads(g->work, MAX(g->relay_threads, 1));
    relay_work_set_run_mode(g->work, g->relay_adaptive ? RELAY_RUN_ADAPTIVE : RELAY_RUN_ALL);
    relay_work_set_idle(g->work, g->side_work, g->side_user);
  }
  s->work = g->work;
  s->source_t = g_new0(SimTime, MAX(g->max_gw, 1));
  g->scratches[miner] = s;
  return s;
}

static void geo_free_scratch(gpointer scratch) {
  GeoScratch *s = scratch;
  g_free(s->source_t);
  g_free(s);
}


static void geo_trace_record(GeoState *g, RelayWork *run_work, const RelayBlock *rb, const ObsBlock *b, SimTime now,
                             gboolean complete);

/* ---- The pipeline: block k+1's relay while block k's is still running ----
 *
 * A block's relay is a pure function of the topology, the block and its stream, and the chain needs of it
 * only when each miner has the block. So geo_publish may start the relay as a job on the pipe's threads and
 * return; the deliveries enter the engine when they are final (sim_engine_insert_late, with the keys the
 * synchronous batch would have given them), and the engine asks geo_gate() before each event whether it may
 * be handled yet. The answer makes the run exactly the sequential one:
 *  - A miner whose delivery of a running relay is still open, and whose event comes at or after the relay's
 *    horizon plus the import time (the earliest that delivery can be), is held: its events wait, in order,
 *    until the delivery is known (then it is released and the delivery is queued among them).
 *  - Any other event at time T waits until nothing still unknown can lead to a find before T: for every
 *    miner F still open in a running relay (or held), its next find must come after T. A delivery or the
 *    end of F's own work distribution does not draw (new_work: F keeps what is left of its budget and spends
 *    it on the new work), so that find moves only with the difficulty of the work F mines on: if no switch of
 *    work can come before T (every open relay's horizon plus the import time is past T, no held delivery
 *    before T), it is F's pending find (pow_world_find_at, exact); else it is at least F's budget spent from
 *    its start at the greatest rate any work it may switch to has until T (pow_world_find_lb_switching: a
 *    child of its work, its head or a block that may reach it, each at its least difficulty by T), a
 *    fraction of a percent before the pending find. (Until session 12 a switch drew a new budget, so any
 *    open miner with a small next draw could find soon after its delivery, and the engine waited for most
 *    deliveries.) While it waits, the gate first creates the transactions the next find would create
 *    (pow_world_prepare) up to the least of those bounds, when the run ends at a find.
 *    A find is the only way a miner touches anything but its own state (the
 *    block table, the transaction world, other miners through its block's relay), so an event that passes
 *    may be handled before deliveries that come earlier in time: nothing it reads or writes depends on
 *    them, and nothing they cause can come before it. Vantage points' events wait too, so that a run
 *    stopped at a find has handled exactly the sequential run's events.
 *  - A miner's stale mining event (of a draw its work has changed since) does nothing: it is dropped at
 *    once (SIM_GATE_INERT), and the engine counts it only when the loop passes its place.
 *  - Vantage points only record: their sightings may come late and out of order; the list is sorted into
 *    the order of the sequential run when read (geo_vantage_sightings). The transaction world reads a
 *    block's receptions only 64 heights deep (TX_DECLARE_DEPTH), long after its relay ended; a find waits
 *    for a running relay whose block would be that deep.
 * Usually the next block's miner has the last block long before the relay ends (the relay runs on until
 * every pool and vantage point has it), so the next relay starts after a fraction of the last one's work
 * (docs/threads.md has the measurement). */

enum { ARRIVE_OPEN = -1, ARRIVE_NONE = -2 };

typedef struct Pending {
  RelayJob *job; /* NULL: free */
  const ObsBlock *b;
  guint from;
  SimTime t0, import;
  SimTime horizon;     /* the job's horizon when last read */
  uint64_t seq;        /* the first of the keys reserved for its events (from's entity) */
  SimTime fixed;       /* a constant work distribution delay */
  gboolean constant;
  SimTime *arrive;     /* per miner: delivery time once queued, ARRIVE_OPEN, or ARRIVE_NONE (none) */
  SimTime *stratum;    /* per miner: its work distribution delay, drawn in the synchronous batch's order */
  guint n_open;
  gint64 start_ns;
} Pending;

/* The engine's thread shares the cores with the relays it waits for: it spins only briefly, then sleeps. */
#define PIPE_SPIN_NS 5000

/* Whether the model allows the pipeline: Geth's kernel, pools behind gateways, no joining nodes, every
 * miner's gateways connected (so a relay reaches every miner unless it gives up on one after 18 minutes,
 * which pend_finish handles as geo_publish does: the work distribution delays are drawn for all of them in
 * miner order, reached or not, in both), honest miners (pow_world_pipeline_ok). */
static gboolean geo_pipe_possible(const GeoState *g, const PowWorld *world) {
  if (g->relay != &relay_geth || g->on_nodes || g->topo->n_joining || !pow_world_pipeline_ok(world)) return FALSE;
  const NetTopology *t = g->topo;
  if (g->n_miners == 0 || t->n_nodes == 0) return FALSE;
  g_autofree guint8 *seen = g_new0(guint8, t->n_nodes);
  g_autofree guint32 *stack = g_new(guint32, t->n_nodes);
  guint32 n = 0, start = g->miner_gw[0][0];
  stack[n++] = start;
  seen[start] = 1;
  while (n) {
    guint32 v = stack[--n];
    for (guint32 e = t->adj_off[v]; e < t->adj_off[v + 1]; e++)
      if (!seen[t->adj[e]]) {
        seen[t->adj[e]] = 1;
        stack[n++] = t->adj[e];
      }
  }
  for (guint m = 0; m < g->n_miners; m++)
    for (guint i = 0; i < g->miner_n_gw[m]; i++)
      if (!seen[g->miner_gw[m][i]]) return FALSE;
  return TRUE;
}

static void pend_queue_arrival(GeoState *g, Pending *r, guint m, SimTime first) {
  SimTime at = r->constant ? first + r->import + r->fixed : first + r->import + r->stratum[m];
  sim_engine_insert_late(g->engine, at, g->miner_entity[r->from], r->seq + m, g->miner_entity[m], POW_EV_BLOCK, 0,
                         r->b->id);
  r->arrive[m] = at;
  g->late_min = MIN(g->late_min, at);
  r->n_open--;
  if (g->held_t[m] != SIM_TIME_MAX) {
    g->held_t[m] = MIN(g->held_t[m], at); /* it joins the held list */
    g->clear_until[m] = 0;
  }
}

/* Miner m's first gateway to have the block, if final: all its gateways read against one horizon
 * (relay_job_first), so that a gateway not yet published cannot be passed over for a later one. */
static SimTime pend_first(const GeoState *g, const Pending *r, guint m) {
  return relay_job_first(r->job, g->miner_gw[m], g->miner_n_gw[m]);
}

static gboolean miner_blocked(const GeoState *g, guint m, SimTime t) {
  for (guint i = 0; i < g->pipe_slots; i++) {
    const Pending *r = &g->pend[i];
    if (r->job && r->arrive[m] == ARRIVE_OPEN && r->horizon + r->import <= t) return TRUE;
  }
  return FALSE;
}

static void release_held(GeoState *g) {
  if (!g->n_held) return;
  for (guint m = 0; m < g->n_miners; m++)
    if (g->held_t[m] != SIM_TIME_MAX && !miner_blocked(g, m, g->held_t[m])) {
      g->late_min = MIN(g->late_min, g->held_t[m]);
      g->held_t[m] = SIM_TIME_MAX;
      g->n_held--;
      sim_engine_release(g->engine, g->miner_entity[m]);
    }
}

/* A finished job: the deliveries still open, the vantage points' sightings, the counts; the slot is freed. */
static void pend_finish(GeoState *g, Pending *r) {
  const RelayWork *w = relay_job_work(r->job);
  for (guint m = 0; m < g->n_miners && r->n_open; m++) {
    if (r->arrive[m] != ARRIVE_OPEN) continue;
    SimTime first = pend_first(g, r, m); /* every watched time is published once the job is done */
    if (first == SIM_TIME_MAX) {
      /* Not reached (a gateway the relay gave up on: over 18 minutes), as geo_publish skips it. */
      r->arrive[m] = ARRIVE_NONE;
      r->n_open--;
      continue;
    }
    pend_queue_arrival(g, r, m, first);
  }
  SimEntityId src = g->miner_entity[r->from];
  for (guint v = 0; v < g->n_vantages; v++) {
    SimTime tp = relay_work_first_push(w, v), ta = relay_work_announce(w, v);
    if (g->stop.first_message_only) {
      if (tp <= ta) ta = SIM_TIME_MAX;
      else tp = SIM_TIME_MAX;
    }
    /* sim_ctx_send's clamp: a time past the end of time is the end of time. */
    if (tp != SIM_TIME_MAX)
      sim_engine_insert_late(g->engine, tp, src, r->seq + g->n_miners + 2 * v, g->vantage_entity[v], GEO_EV_SIGHT, 0,
                             r->b->id);
    if (ta != SIM_TIME_MAX)
      sim_engine_insert_late(g->engine, ta, src, r->seq + g->n_miners + 2 * v + 1, g->vantage_entity[v],
                             GEO_EV_SIGHT, 1, r->b->id);
  }
  g->sightings_unsorted = TRUE;
  GeoScratch *s = g->scratches[r->from];
  s->deliveries += relay_work_reached(w);
  relay_job_release(r->job);
  r->job = NULL;
  g->n_pend--;
}

/* Reads the running jobs' progress: queues the deliveries that became final, finishes the jobs that ended,
 * releases the miners no longer blocked. */
static void pend_poll(GeoState *g) {
  gboolean changed = FALSE;
  for (guint i = 0; i < g->pipe_slots; i++) {
    Pending *r = &g->pend[i];
    if (!r->job) continue;
    SimTime h = relay_job_horizon(r->job);
    if (h == r->horizon) continue;
    changed = TRUE;
    if (h == SIM_TIME_MAX) {
      pend_finish(g, r);
      continue;
    }
    r->horizon = h;
    for (guint m = 0; m < g->n_miners && r->n_open; m++) {
      if (r->arrive[m] != ARRIVE_OPEN) continue;
      SimTime first = pend_first(g, r, m);
      if (first != SIM_TIME_MAX) pend_queue_arrival(g, r, m, first);
    }
  }
  if (changed) release_held(g);
}

static void geo_flush(gpointer user, SimEngine *engine) {
  GeoState *g = user;
  (void)engine;
  for (guint i = 0; i < g->pipe_slots; i++) {
    Pending *r = &g->pend[i];
    if (!r->job) continue;
    relay_job_wait(r->job, SIM_TIME_MAX);
    pend_finish(g, r);
  }
  release_held(g);
  g_assert(g->n_held == 0);
}

/* The least time miner f can find a block, if it finds one at or before T, as far as the running relays allow
 * (see above): SIM_TIME_MAX when no relay is open for it (its next find is then behind events in the queue).
 * `open` gets the open relay that holds it back the longest. */
#define MAX_SWITCH_BLOCKS 64
static SimTime miner_lb(GeoState *g, guint f, SimTime T, Pending **open_out) {
  Pending *open = NULL;
  uint64_t blocks[MAX_SWITCH_BLOCKS];
  guint n = 0;
  gboolean sw = FALSE, all = TRUE; /* a switch of work may come before T; every block it may bring listed */
  for (guint i = 0; i < g->pipe_slots; i++) {
    Pending *r = &g->pend[i];
    if (!r->job || r->arrive[f] != ARRIVE_OPEN) continue;
    if (!open || r->horizon < open->horizon) open = r;
    if (r->horizon + r->import > T) continue; /* the delivery comes after T */
    sw = TRUE;
    if (n < MAX_SWITCH_BLOCKS) blocks[n++] = r->b->id;
    else all = FALSE;
  }
  *open_out = open;
  if (!open) return SIM_TIME_MAX; /* neither open nor held (held implies open: release_held) */
  /* Its held deliveries (of finished relays) and ends of its own work distribution switch its work too. */
  if (g->held_t[f] != SIM_TIME_MAX) {
    guint nh;
    const SimEvent *he = sim_engine_held_events(g->engine, g->miner_entity[f], &nh);
    for (guint k = 0; k < nh; k++) {
      if (he[k].time > T) continue;
      if (he[k].type == POW_EV_BLOCK) {
        sw = TRUE;
        if (n < MAX_SWITCH_BLOCKS) blocks[n++] = he[k].payload;
        else all = FALSE;
      } else if (he[k].type == POW_EV_WORK) {
        sw = TRUE; /* to its head, which the bound includes */
      }
    }
  }
  if (!sw) {
    /* No switch before T: the pending find is exact until then. */
    SimTime lb = pow_world_find_lb(g->world, f);
    return lb <= T ? pow_world_find_at(g->world, f) : lb;
  }
  if (!all) return 0; /* more blocks than listed: no bound (never with the shipped scenarios) */
  return pow_world_find_lb_switching(g->world, f, T, blocks, n);
}

/* The gate's cache of miner_lb: given miner_lb(g, f, T) > T (f holds back no event at T; `open` as it gave
 * it), a time X such that miner_lb(g, f, T') > T' for every T' < X, earlier than T or later, for as long as
 * nothing it reads changes but the relays' progress (which only raises it: fewer switches can come before
 * T'). What can lower it is cleared where it happens: f's own events handled or held (its draw, work, head,
 * orphans, held events), a new relay (a block that may reach f; the least difficulty mined), a delivery of
 * f's joining its held events. 0: none. So the gate reads most miners' bounds in one comparison instead of
 * walking their relays, held events and difficulties at every event (2.4% of the run's CPU, on the engine's
 * thread, before the cache).
 * Why X holds: below any switch of work (no delivery or held event of f can come by T'), f blocks T' only if
 * its pending find is at or before T' (miner_lb's exact branch), so X1 (find_lb when it is past T, else the
 * pending find) bounds it there. Above, miner_lb gives find_lb_switching over the blocks that may reach f by
 * T', a subset of every open relay's block and every held one, at T'; that bound falls with more blocks and
 * with a later time, so for T' <= L1 = bound(all blocks, T) it is at least L2 = bound(all blocks, L1), and
 * T' < min(L1, L2) is not held back. X = min(X1, L1, L2). */
static SimTime miner_clear_until(GeoState *g, guint f, SimTime T, const Pending *open) {
  if (!open) return SIM_TIME_MAX; /* no relay open for it: a new one clears the cache */
  SimTime lb = pow_world_find_lb(g->world, f);
  SimTime x1 = lb > T ? lb : pow_world_find_at(g->world, f);
  uint64_t blocks[MAX_SWITCH_BLOCKS];
  guint n = 0;
  for (guint i = 0; i < g->pipe_slots; i++) {
    const Pending *r = &g->pend[i];
    if (!r->job || r->arrive[f] != ARRIVE_OPEN) continue;
    if (n == MAX_SWITCH_BLOCKS) return 0;
    blocks[n++] = r->b->id;
  }
  if (g->held_t[f] != SIM_TIME_MAX) {
    guint nh;
    const SimEvent *he = sim_engine_held_events(g->engine, g->miner_entity[f], &nh);
    for (guint k = 0; k < nh; k++) {
      if (he[k].type != POW_EV_BLOCK) continue;
      if (n == MAX_SWITCH_BLOCKS) return 0;
      blocks[n++] = he[k].payload;
    }
  }
  SimTime l1 = pow_world_find_lb_switching(g->world, f, T, blocks, n);
  if (l1 <= T) return 0;
  SimTime l2 = pow_world_find_lb_switching(g->world, f, l1, blocks, n);
  return MIN(x1, MIN(l1, l2));
}

/* `who`: the event's miner, -1 a vantage point, -2 another entity (GeoState.entity_miner). */
static SimGateVerdict gate_decide(GeoState *g, SimEngine *engine, const SimEvent *ev, gint who) {
  if (!g->n_pend) return SIM_GATE_PROCESS;
  g->late_min = SIM_TIME_MAX;
  pend_poll(g);
  if (!g->n_pend) return SIM_GATE_PROCESS;
  if (who == -2) { /* not ours: the sequential order, whatever it touches */
    geo_flush(g, engine);
    return SIM_GATE_AGAIN;
  }
  /* A miner's stale event (an earlier draw's) does nothing: the engine drops it now and counts it when the
   * loop passes its place, so that a run that stops at a find still unknown now counts the sequential run's
   * events. A vantage point only records, and is never held; its events still wait for the bound below:
   * nothing may be handled after a find that comes before it, so that such a run has handled exactly the
   * events the sequential run has. */
  guint m = who >= 0 ? (guint)who : G_MAXUINT;
  if (who >= 0 && pow_world_event_inert(g->world, m, ev)) return SIM_GATE_INERT;
  if (who >= 0 && miner_blocked(g, m, ev->time)) {
    if (g->held_t[m] == SIM_TIME_MAX) g->n_held++;
    g->held_t[m] = MIN(g->held_t[m], ev->time);
    g->clear_until[m] = 0;
    g->gate_holds++;
    return SIM_GATE_HOLD;
  }
  const SimTime T = ev->time;
  /* Every miner that may find a block at or before T holds this event back. Of those, wait for the one whose
   * own business comes first (its pending find or held event; T at the latest): the sequential run's next
   * event is among them, and once that miner's delivery is known the loop can go on with it, while a wait for
   * the first of them in miner order (a far event blocked by every big pool) waited for deliveries the next
   * events do not need. */
  Pending *open = NULL;
  guint fw = 0;
  SimTime target = SIM_TIME_MAX, safe = MIN(T, g->late_min); /* what pend_poll queued before T comes first */
  for (guint f = 0; f < g->n_miners; f++) {
    if (f == m) continue; /* its own later steps come after this event */
    if (T < g->clear_until[f]) {
      safe = MIN(safe, g->clear_until[f]); /* a lower bound of its find as well */
      continue;
    }
    Pending *o;
    SimTime lb = miner_lb(g, f, T, &o);
    safe = MIN(safe, lb);
    if (lb > T) {
      g->clear_until[f] = miner_clear_until(g, f, T, o);
      continue;
    }
    /* Until F's delivery cannot come before T, its pending find or its held events. */
    SimTime fa = pow_world_find_at(g->world, f), tf = T - o->import + 1;
    if (fa <= T) tf = MIN(tf, fa - o->import + 1);
    if (g->held_t[f] != SIM_TIME_MAX) tf = MIN(tf, g->held_t[f] - o->import + 1);
    if (!open || tf + o->import < target + open->import) {
      open = o;
      fw = f;
      target = tf;
    }
  }
  if (open) {
    gint64 w0 = sim_mono_ns();
    /* First what the next find would do first: no miner finds before the least of the bounds (a miner neither
     * open nor held finds after T, its find being in the queue behind T). Only when the run ends at a find
     * (stop.heights): one stopped by time ends with the transactions up to its last find, which may come
     * before that bound. */
    if (pow_world_ends_at_find(g->world, sim_engine_stop_time(g->engine)) && safe > g->prepared) {
      pow_world_prepare(g->world, safe);
      g->prepared = safe;
      pend_poll(g);
      return SIM_GATE_AGAIN; /* the relays went on meanwhile */
    }
    /* ... or the miner's delivery is known (its first gateway has the block). */
    relay_job_wait_nodes(open->job, MAX(target, open->horizon + 1), g->miner_gw[fw],
                         MIN(g->miner_n_gw[fw], 8));
    g->gate_wait_ns += sim_mono_ns() - w0;
    g->gate_waits++;
    return SIM_GATE_AGAIN;
  }
  /* A find declares the main block TX_DECLARE_DEPTH below the new tip to the transaction metrics, which read
   * its receptions: its relay must have ended (it always has, 64 blocks later; this keeps it exact). */
  if (ev->type == POW_EV_MINE) {
    uint32_t top = pow_world_max_height(g->world) + 1;
    for (guint i = 0; i < g->pipe_slots; i++) {
      Pending *r = &g->pend[i];
      if (r->job && r->b->height + TX_DECLARE_DEPTH <= top) {
        relay_job_wait(r->job, SIM_TIME_MAX);
        pend_poll(g);
        return SIM_GATE_AGAIN;
      }
    }
  }
  return SIM_GATE_PROCESS;
}

static SimGateVerdict geo_gate(gpointer user, SimEngine *engine, const SimEvent *ev) {
  GeoState *g = user;
  gint who = ev->dst < g->n_entity_map ? g->entity_miner[ev->dst] : -2;
  SimGateVerdict v = gate_decide(g, engine, ev, who);
  if (v == SIM_GATE_PROCESS) {
    /* What the event's handler may change of miner_lb's inputs (see miner_clear_until). */
    if (who >= 0)
      g->clear_until[who] = 0;
    else if (who == -2)
      memset(g->clear_until, 0, g->n_miners * sizeof *g->clear_until);
  }
  return v;
}

/* geo_publish's pipelined path: the job starts, the keys of its events are reserved, the work distribution
 * delays are drawn (in the batch's order: every miner is reached), nothing is sent now. */
static void geo_pipe_publish(GeoState *g, SimCtx *ctx, guint from, const ObsBlock *b, SimRng *rng,
                             const RelayBlock *rb) {
  const NetGeoParams *p = g->p;
  pend_poll(g); /* frees the slots of relays that ended */
  if (g->n_pend == g->pipe_slots) { /* every slot busy: the oldest first (any would do) */
    Pending *old = NULL;
    for (guint i = 0; i < g->pipe_slots; i++)
      if (g->pend[i].job && (!old || g->pend[i].t0 < old->t0)) old = &g->pend[i];
    relay_job_wait(old->job, SIM_TIME_MAX);
    pend_finish(g, old);
    release_held(g);
  }
  Pending *r = NULL;
  for (guint i = 0; i < g->pipe_slots && !r; i++)
    if (!g->pend[i].job) r = &g->pend[i];
  r->b = b;
  r->from = from;
  r->t0 = sim_ctx_now(ctx);
  r->import = g->relay->import_ns(p->relay.params, (double)b->gas_used);
  r->horizon = r->t0;
  r->seq = sim_ctx_reserve(ctx, g->n_miners + 2 * (uint64_t)g->n_vantages);
  /* A block that may reach every miner (and the least difficulty mined): miner_lb falls. */
  memset(g->clear_until, 0, g->n_miners * sizeof *g->clear_until);
  g->pipe_blocks++;
  g->pipe_overlapped += g->n_pend > 0;
  g->pipe_in_flight += g->n_pend;
  r->job = relay_pipe_start(g->pipe, rb, &g->stop, rng);
  (void)sim_rng_u64(rng); /* what geth_propagate draws: the block's key */
  r->constant = p->stratum.model == &sim_delay_constant.info;
  r->fixed = r->constant ? sim_delay_sample(&p->stratum, rng) : 0;
  r->n_open = 0;
  for (guint m = 0; m < g->n_miners; m++) {
    if (m == from) {
      r->arrive[m] = ARRIVE_NONE;
      continue;
    }
    r->arrive[m] = ARRIVE_OPEN;
    r->n_open++;
    if (!r->constant) r->stratum[m] = sim_delay_sample(&p->stratum, rng);
  }
  g->n_pend++;
}

static void geo_pipe_free(GeoState *g) {
  if (!g->pipe) return;
  relay_pipe_free(g->pipe); /* waits for jobs still running (a run that ended early) */
  g->pipe = NULL;
  for (guint i = 0; i < g->pipe_slots; i++) {
    Pending *r = &g->pend[i];
    g_free(r->arrive);
    g_free(r->stratum);
  }
  g_clear_pointer(&g->pend, g_free);
  g_clear_pointer(&g->held_t, g_free);
  g_clear_pointer(&g->clear_until, g_free);
  g_clear_pointer(&g->entity_miner, g_free);
  g->n_pend = g->n_held = 0;
}

/* Turns the pipeline on (threads >= 2 and the model allows it) or off. */
static void geo_pipe_setup(GeoState *g, guint threads) {
  if (g->pipe) {
    geo_pipe_free(g);
    sim_engine_set_gate(g->engine, NULL, NULL, NULL);
  }
  if (!g->pipe_ok || !g->pipe_wanted || threads < 2) return;
  g->pipe_slots = threads + 1;
  g->pipe_threads = threads;
  /* threads - 1 pipe threads, and the engine's thread, which runs relays while it waits (its helper runs on
   * it): no more running threads than `threads`. */
  g->pipe = relay_pipe_new(g->relay, g->p->relay.params, g->p, g->topo, NULL, g->pipe_slots, threads - 1);
  relay_pipe_set_spin(g->pipe, PIPE_SPIN_NS);
  /* The engine's thread runs relays while it waits: the job it waits for if no pipe thread has taken it yet,
   * else another queued job, else the rest of one it ran before (relay_pipe_set_helper). One: a second helper
   * (two relays held in parts on the engine's core) was slower (8,000 heights of pools-2019: 9.2-9.6 s
   * against 7.3-8.0 s with one; its kernel's data too is the core's cache's). */
  relay_pipe_set_helper(g->pipe);
  relay_pipe_set_idle(g->pipe, g->side_work, g->side_user);
  g->pend = g_new0(Pending, g->pipe_slots);
  for (guint i = 0; i < g->pipe_slots; i++) {
    Pending *r = &g->pend[i];
    r->arrive = g_new(SimTime, g->n_miners);
    r->stratum = g_new0(SimTime, g->n_miners);
  }
  g->held_t = g_new(SimTime, g->n_miners);
  for (guint m = 0; m < g->n_miners; m++) g->held_t[m] = SIM_TIME_MAX;
  g->clear_until = g_new0(SimTime, g->n_miners);
  g->prepared = INT64_MIN;
  g->n_entity_map = sim_engine_n_entities(g->engine);
  g->entity_miner = g_new(gint, g->n_entity_map);
  for (guint e = 0; e < g->n_entity_map; e++) g->entity_miner[e] = -2;
  for (guint m = 0; m < g->n_miners; m++) g->entity_miner[g->miner_entity[m]] = (gint)m;
  for (guint v = 0; v < g->n_vantages; v++) g->entity_miner[g->vantage_entity[v]] = -1;
  sim_engine_set_gate(g->engine, geo_gate, geo_flush, g);
}

static void geo_publish(const void *params, gpointer state, gpointer scratch, const PowWorld *world, SimCtx *ctx,
                        guint from, const ObsBlock *b) {
  const NetGeoParams *p = params;
  GeoState *g = state;
  GeoScratch *s = scratch;
  (void)world;
  SimTime now = sim_ctx_now(ctx);
  /* A stream of its own per block, so a block's spread does not depend on what else the miner drew. */
  SimRng rng;
  sim_rng_init(&rng, g->seed, (UINT64_C(1) << 63) | b->id);
  for (guint i = 0; i < g->miner_n_gw[from]; i++) s->source_t[i] = now;
  RelayBlock rb = {.sources = g->miner_gw[from],
                   .source_t = s->source_t,
                   .n_sources = g->miner_n_gw[from],
                   .size_bytes = b->size_bytes,
                   .gas_used = (double)b->gas_used};
  if (g->pipe && !g->n_trace_h && sim_ctx_gated(ctx)) {
    geo_pipe_publish(g, ctx, from, b, &rng, &rb);
    return;
  }
  /* Only what g->stop watches reaches the rest of the simulation, so the relay may stop once that is final,
   * unless miners sit on ordinary nodes. */
  gint64 c0 = sim_mono_ns();
  g->relay->propagate(p->relay.params, p, g->topo, &rb, g->on_nodes ? NULL : &g->stop, &rng, s->work);
  s->relay_ns += sim_mono_ns() - c0;
  s->deliveries += relay_work_reached(s->work);
  if (g->n_trace_h) geo_trace_record(g, s->work, &rb, b, now, g->on_nodes);

  /* Each other pool mines on the block once a gateway of its has imported it and its miners got new work. */
  SimTime import = g->relay->import_ns(p->relay.params, (double)b->gas_used);
  /* A constant work distribution draws no random number: its value once per block (miners on ordinary
   * nodes make this loop one step per node). */
  gboolean constant = p->stratum.model == &sim_delay_constant.info;
  SimTime fixed = constant ? sim_delay_sample(&p->stratum, &rng) : 0;
  SimTime offset = import + fixed - now; /* a constant distribution's delay after the gateway's arrival */
  /* One batch (engine.h): the engine hands them out in time order without a queue operation each. */
  sim_ctx_batch_begin(ctx, POW_EV_BLOCK, 0, b->id);
  /* With a relay that keeps that order (bitcoin-compact) and one gateway per miner, the miners in the order their nodes had the block (by
   * time, then node, so by miner on a tie: the order the batch would be sorted into): the batch needs no
   * sort, and its events and their order are those of the loop below. */
  const guint32 *order;
  const SimTime *order_t;
  guint32 n_order;
  if (constant && g->node_miners && g->relay->have_order &&
      g->relay->have_order(s->work, &order, &order_t, &n_order)) {
    for (guint32 k = 0; k < n_order; k++) {
      guint32 v = order[k];
      for (guint m = g->node_miners[v]; m < g->node_miners[v + 1]; m++)
        if (m != from) sim_ctx_batch_add(ctx, g->miner_entity[m], order_t[k] + offset);
    }
  } else {
    for (guint m = 0; m < g->n_miners; m++) {
      if (m == from) continue;
      SimTime first = SIM_TIME_MAX;
      /* (MIN() of a call evaluates it twice: relay_work_have is out of line.) */
      if (G_LIKELY(g->miner_gw1[m] != G_MAXUINT32)) {
        first = relay_work_have(s->work, g->miner_gw1[m]);
      } else {
        for (guint i = 0; i < g->miner_n_gw[m]; i++) {
          SimTime h = relay_work_have(s->work, g->miner_gw[m][i]);
          first = MIN(first, h);
        }
      }
      /* Every miner draws its work distribution delay, in miner order, reached or not (the pipeline draws
       * them all when the block is published, geo_pipe_publish, before it knows who the relay reaches). */
      SimTime stratum = constant ? 0 : sim_delay_sample(&p->stratum, &rng);
      /* Not reached: not connected to where the block went, or the relay gave up on it (over 18 minutes). */
      if (first == SIM_TIME_MAX) continue;
      SimTime delay = constant ? first + offset : first - now + import + stratum;
      sim_ctx_batch_add(ctx, g->miner_entity[m], delay);
    }
  }
  sim_ctx_batch_end(ctx);
  /* What the vantage points log: block messages and announcements (a fetched block is not a NewBlockMsg).
   * When only the earlier of the two is needed (and exact), only it is sent: the block message on a tie. */
  for (guint v = 0; v < g->n_vantages; v++) {
    SimTime tp = relay_work_first_push(s->work, v), ta = relay_work_announce(s->work, v);
    if (g->stop.first_message_only) {
      if (tp <= ta) ta = SIM_TIME_MAX;
      else tp = SIM_TIME_MAX;
    }
    if (tp != SIM_TIME_MAX) sim_ctx_send(ctx, g->vantage_entity[v], tp - now, GEO_EV_SIGHT, 0, b->id);
    if (ta != SIM_TIME_MAX) sim_ctx_send(ctx, g->vantage_entity[v], ta - now, GEO_EV_SIGHT, 1, b->id);
  }
}

/* The index of height `h` in the sorted traced heights, or -1. */
static int geo_trace_index(const GeoState *g, uint32_t h) {
  guint lo = 0, hi = g->n_trace_h;
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (g->trace_h[mid] < h) lo = mid + 1;
    else hi = mid;
  }
  return lo < g->n_trace_h && g->trace_h[lo] == h ? (int)lo : -1;
}

/* sim run --trace-blocks: keeps every node's arrival of a traced block. The run's relay may have stopped once
 * the specials had the block (`complete` FALSE): the block is then relayed again, to the end, on the trace's
 * own work from the same per-block stream. The relay's random numbers are keyed per (block, node) and
 * (block, link), so the second relay must agree with the first at every special; a disagreement is counted
 * (PowTraceInfo.mismatches). Nothing here allocates: the table and the work exist since geo_trace_set. */
static void geo_trace_record(GeoState *g, RelayWork *run_work, const RelayBlock *rb, const ObsBlock *b, SimTime now,
                             gboolean complete) {
  int hi = geo_trace_index(g, b->height);
  if (hi < 0) return;
  if (g->trace_per_h[hi] >= POW_TRACE_PER_HEIGHT || g->trace_used >= g->trace_slots) {
    g->trace_dropped++;
    return;
  }
  g->trace_per_h[hi]++;
  const NetGeoParams *p = g->p;
  RelayWork *w = run_work;
  if (!complete) {
    SimRng rng;
    sim_rng_init(&rng, g->seed, (UINT64_C(1) << 63) | b->id); /* the stream geo_publish used */
    g->relay->propagate(p->relay.params, p, g->topo, rb, NULL, &rng, g->trace_work);
    w = g->trace_work;
    if (!relay_stop_agree(&g->stop, w, run_work)) g->trace_mismatches++;
  }
  guint slot = g->trace_used++;
  SimTime *have = g->trace_have + (gsize)slot * g->topo->n_nodes;
  for (guint32 v = 0; v < g->topo->n_nodes; v++) have[v] = relay_work_have(w, v);
  g->trace_blocks[slot] = (PowTracedBlock){.block = b->id, .height = b->height, .mined_ns = now, .have = have};
}

static int cmp_u32(gconstpointer a, gconstpointer b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

static gboolean geo_trace_set(gpointer state, const PowWorld *world, const uint32_t *heights, guint n,
                              GError **error) {
  GeoState *g = state;
  (void)world;
  if (n > POW_TRACE_MAX_HEIGHTS) {
    g_set_error(error, POW_ERROR, POW_ERROR_INVALID, "at most %d heights can be traced (got %u)",
                POW_TRACE_MAX_HEIGHTS, n);
    return FALSE;
  }
  g_free(g->trace_h);
  g->trace_h = g_memdup2(heights, n * sizeof *heights);
  qsort(g->trace_h, n, sizeof *g->trace_h, cmp_u32);
  guint k = 0;
  for (guint i = 0; i < n; i++)
    if (k == 0 || g->trace_h[k - 1] != g->trace_h[i]) g->trace_h[k++] = g->trace_h[i];
  g->n_trace_h = k;
  g->trace_slots = k * POW_TRACE_PER_HEIGHT;
  g->trace_have = g_new(SimTime, (gsize)g->trace_slots * g->topo->n_nodes);
  g->trace_blocks = g_new0(PowTracedBlock, MAX(g->trace_slots, 1));
  g->trace_per_h = g_new0(guint8, MAX(k, 1));
  if (!g->trace_work) {
    g->trace_work = relay_work_new(g->topo);
    relay_work_set_threads(g->trace_work, MAX(g->relay_threads, 1));
    relay_work_set_run_mode(g->trace_work, RELAY_RUN_CALLER);
  }
  g->node_pool = g_new(guint, g->topo->n_nodes);
  for (guint32 v = 0; v < g->topo->n_nodes; v++) g->node_pool[v] = NET_NO_POOL;
  for (guint pool = 0; pool < g->n_pools; pool++)
    for (guint i = 0; i < g->pool_n_gw[pool]; i++) g->node_pool[g->pool_gw[pool][i]] = pool;
  return TRUE;
}

static void geo_trace_info(gpointer state, PowTraceInfo *info) {
  const GeoState *g = state;
  *info = (PowTraceInfo){.n_nodes = g->topo->n_nodes, .n_blocks = g->trace_used, .dropped = g->trace_dropped,
                         .mismatches = g->trace_mismatches};
}

static void geo_trace_node(gpointer state, guint32 node, PowTraceNode *out) {
  const GeoState *g = state;
  const NetGeoParams *p = g->p;
  const NetTopology *t = g->topo;
  g_return_if_fail(node < t->n_nodes);
  gboolean special = node < t->n_special;
  const NetSpecial *sp = special ? &p->specials[node] : NULL;
  guint pool = g->node_pool ? g->node_pool[node] : NET_NO_POOL;
  *out = (PowTraceNode){
      .role = !special ? "node" : sp->role == NET_ROLE_VANTAGE ? "vantage" : "gateway",
      .name = special ? sp->name : "",
      .pool = pool < g->cfg->n_pools ? g->cfg->pools[pool].name : "",
      .region = p->region_names[t->region[node]],
      .city = t->city[node] != NET_NO_CITY ? p->city_names[t->city[node]] : ""};
}

static void geo_trace_block(gpointer state, guint i, PowTracedBlock *out) {
  const GeoState *g = state;
  g_return_if_fail(i < g->trace_used);
  *out = g->trace_blocks[i];
}

/* A pool's own miners get work on its new block after the same work distribution as everyone else's. */
static SimTime geo_own_work_delay(const void *params, SimRng *rng) {
  const NetGeoParams *p = params;
  return sim_delay_sample(&p->stratum, rng);
}

/* The least latency any directed edge can draw: every block and announcement crosses at least one edge. */
static SimTime geo_min_delay(gpointer state) {
  const GeoState *g = state;
  SimTime m = SIM_TIME_MAX;
  for (guint64 e = 0; e < g->topo->n_edges; e++)
    m = MIN(m, g->topo->lat_floor_ns[e]);
  return m == SIM_TIME_MAX ? 0 : m;
}

static guint geo_n_vantages(gpointer state) { return ((GeoState *)state)->n_vantages; }

static const char *geo_vantage_name(gpointer state, guint i) {
  GeoState *g = state;
  return g->p->specials[i].name;
}

/* The order the sequential run records sightings in: (time, key) of their events, the key being the
 * publishing miner's entity (ids follow the miners' order, as block ids do) and its sequence (an honest
 * miner publishes its blocks in order; a block message's key comes before its announcement's). */
static gint cmp_sighting(gconstpointer pa, gconstpointer pb) {
  const ObsSighting *a = pa, *b = pb;
  int64_t ta = a->block_msg_ns != OBS_TIME_NONE ? a->block_msg_ns : a->announce_ns;
  int64_t tb = b->block_msg_ns != OBS_TIME_NONE ? b->block_msg_ns : b->announce_ns;
  if (ta != tb) return ta < tb ? -1 : 1;
  if (a->block != b->block) return a->block < b->block ? -1 : 1;
  return (a->block_msg_ns == OBS_TIME_NONE) - (b->block_msg_ns == OBS_TIME_NONE);
}

static const GArray *geo_vantage_sightings(gpointer state, guint i) {
  GeoState *gs = state;
  if (gs->sightings_unsorted) {
    for (guint v = 0; v < gs->n_vantages; v++) g_array_sort(gs->vantages[v].sightings, cmp_sighting);
    gs->sightings_unsorted = FALSE;
  }
  return ((GeoState *)state)->vantages[i].sightings;
}

static guint64 geo_deliveries(gpointer state) {
  GeoState *g = state;
  guint64 n = 0;
  for (guint m = 0; m < g->n_miners; m++)
    if (g->scratches[m]) n += g->scratches[m]->deliveries;
  return n;
}

static double geo_relay_wall_s(gpointer state) {
  GeoState *g = state;
  gint64 ns = 0;
  for (guint m = 0; m < g->n_miners; m++)
    if (g->scratches[m]) ns += g->scratches[m]->relay_ns;
  double s = (double)ns / 1e9;
  if (g->pipe) {
    RelayWorkStats ps;
    relay_pipe_get_stats(g->pipe, &ps);
    s += ps.wall_s;
  }
  return s;
}

static gboolean geo_set_pipeline(gpointer state, gboolean on) {
  GeoState *g = state;
  g->pipe_wanted = on;
  geo_pipe_setup(g, g->relay_threads);
  return g->pipe_ok;
}

static void geo_set_threads(gpointer state, guint threads, gboolean adaptive) {
  GeoState *g = state;
  g->relay_threads = threads;
  g->relay_adaptive = adaptive;
  geo_pipe_setup(g, threads);
  if (g->work) {
    relay_work_set_threads(g->work, MAX(threads, 1));
    relay_work_set_run_mode(g->work, adaptive ? RELAY_RUN_ADAPTIVE : RELAY_RUN_ALL);
  }
}

static void geo_set_side_work(gpointer state, gboolean (*fn)(gpointer user), gpointer user) {
  GeoState *g = state;
  g->side_work = fn;
  g->side_user = user;
  if (g->work) relay_work_set_idle(g->work, fn, user);
  if (g->pipe) relay_pipe_set_idle(g->pipe, fn, user); /* no job runs between events */
}

G_STATIC_ASSERT(POW_RELAY_MAX_THREADS == RELAY_MAX_THREADS);

static gboolean geo_relay_stats(gpointer state, PowRelayStats *out) {
  GeoState *g = state;
  if (g->pipe) {
    RelayWorkStats ps;
    relay_pipe_get_stats(g->pipe, &ps);
    *out = (PowRelayStats){.threads = 1,
                           .blocks = ps.propagations,
                           .windows = ps.windows,
                           .steps = ps.steps,
                           .messages = ps.messages,
                           .deferred = ps.deferred,
                           .work = ps.work,
                           .work_critical = ps.work_critical,
                           .pruned = ps.pruned,
                           .prune_tables = ps.prune_tables,
                           .wall_s = ps.wall_s,
                           .lookahead_ns = SIM_TIME_MAX,
                           .pipe_threads = g->pipe_threads,
                           .pipe_helped = ps.helped,
                           .pipe_blocks = g->pipe_blocks,
                           .pipe_overlapped = g->pipe_overlapped,
                           .pipe_in_flight = g->pipe_in_flight,
                           .gate_waits = g->gate_waits,
                           .gate_holds = g->gate_holds,
                           .gate_wait_s = (double)g->gate_wait_ns / 1e9};
    return ps.propagations > 0;
  }
  if (!g->work) return FALSE;
  RelayWorkStats st;
  relay_work_get_stats(g->work, &st);
  if (st.propagations == 0) return FALSE; /* a relay model without the windowed kernel */
  *out = (PowRelayStats){.threads = st.threads,
                         .groups = st.groups,
                         .largest_group = st.largest_group,
                         .lookahead_ns = st.lookahead_ns,
                         .lookahead_from = st.lookahead_from,
                         .lookahead_to = st.lookahead_to,
                         .blocks = st.propagations,
                         .alone = st.alone,
                         .windows = st.windows,
                         .steps = st.steps,
                         .messages = st.messages,
                         .deferred = st.deferred,
                         .work = st.work,
                         .work_critical = st.work_critical,
                         .pruned = st.pruned,
                         .prune_tables = st.prune_tables,
                         .wall_s = st.wall_s};
  memcpy(out->wait_s, st.wait_s, sizeof out->wait_s);
  return TRUE;
}

static void geo_clear_extra(void *params) { net_geo_clear_tables(params); }

/* The tables (net_geo_parse_tables), then: every pool reaches the network through a gateway, or with its
 * miners on ordinary nodes (one pass over the gateways: a scan per pool was quadratic). */
static gboolean geo_parse_settings(void *params, json_t *obj, const char *path, const SimModelScope *scope,
                                   SimDiag *diag) {
  NetGeoParams *gp = params;
  if (!net_geo_parse_tables(gp, obj, path, scope->pool_names, scope->n_pools, diag)) return FALSE;
  g_autofree gboolean *has_gateway = g_new0(gboolean, MAX(scope->n_pools, 1));
  for (guint i = 0; i < gp->n_specials; i++)
    if (gp->specials[i].role == NET_ROLE_GATEWAY && gp->specials[i].pool < scope->n_pools)
      has_gateway[gp->specials[i].pool] = TRUE;
  g_autofree char *gpath = g_strdup_printf("%s.gateways", path);
  gboolean ok = TRUE;
  for (guint k = 0; k < scope->n_pools; k++) {
    if (has_gateway[k] || (gp->pool_on_nodes && gp->pool_on_nodes[k])) continue;
    sim_diag_add(diag, gpath, "pool \"%s\" has no gateway (give it an entry with its cities)", scope->pool_names[k]);
    ok = FALSE;
  }
  return ok;
}

static void geo_describe_settings(int indent, GString *out) {
  static const char *const lines[] = {
      "regions  (required) an object: names (1..64 unique strings), latency_ms (n x n one-way means, ms, >= 0), "
      "upload_bps and download_bps (n numbers > 0), node_share (n numbers >= 0 summing to 1 within 0.001, "
      "normalised)",
      "cities  (optional) an object: names (unique strings), region (a region name per city), rtt_ms (n x n "
      "round-trip times, ms, >= 0, or null where not measured)",
      "vantage_points  (optional) an array of {name (unique), region or city (not both), peers (>= 1, default "
      "800)}: the measurement nodes",
      "gateways  (optional) an array of {pool, cities or regions (a non-empty array, not both), peers (>= 1, "
      "default gateway_peers)}: one gateway node per place, named <pool>#<k>; or {pool, ordinary_nodes: true}: "
      "the pool's miners sit on ordinary nodes. Every pool needs one or the other",
      "out_degree_cdf  (optional) 20 numbers in [0, 1], non-decreasing, the last 1: entry k is P(an ordinary "
      "node dials at most k + 1 peers); absent: every node dials out_peers",
      "joining  (optional) an object: ordinary nodes that join during the run and relay nothing until synced",
  };
  for (guint i = 0; i < G_N_ELEMENTS(lines); i++) g_string_append_printf(out, "%*s%s\n", indent, "", lines[i]);
  sim_params_describe(net_geo_joining_specs, net_geo_n_joining_specs, indent + 4, out);
  g_string_append_printf(out, "%*sEvery object of these also accepts a \"comment\" key.\n", indent, "");
}

static gint64 geo_nodes(const void *params) { return ((const NetGeoParams *)params)->nodes; }

static const char *const geo_extra_keys[] = {"regions", "cities", "vantage_points", "gateways", "out_degree_cdf",
                                             "joining", NULL};

const PowNetworkModel pow_network_geo = {
    .info =
        {.name = "geo",
         .family = "network",
         .help =
             "regions, data-centre cities, a Geth-like peer-to-peer topology, pool gateways, vantage points "
             "and a relay protocol",
         .params = net_geo_param_specs,
         .n_params = NET_GEO_N_PARAMS,
         .params_size = sizeof(NetGeoParams),
         .submodels = net_geo_submodels,
         .n_submodels = NET_GEO_N_SUBMODELS,
         .extra_keys = geo_extra_keys,
         .clear_extra = geo_clear_extra,
         .parse_settings = geo_parse_settings,
         .describe_settings = geo_describe_settings},
    .init = geo_init,
    .free_state = geo_free_state,
    .miner_scratch = geo_miner_scratch,
    .free_scratch = geo_free_scratch,
    .publish = geo_publish,
    .own_work_delay = geo_own_work_delay,
    .n_vantages = geo_n_vantages,
    .vantage_name = geo_vantage_name,
    .vantage_sightings = geo_vantage_sightings,
    .deliveries = geo_deliveries,
    .tx_view = geo_tx_view,
    .min_delay = geo_min_delay,
    .relay_wall_s = geo_relay_wall_s,
    .set_threads = geo_set_threads,
    .set_side_work = geo_set_side_work,
    .set_pipeline = geo_set_pipeline,
    .relay_stats = geo_relay_stats,
    .trace_set = geo_trace_set,
    .trace_info = geo_trace_info,
    .trace_node = geo_trace_node,
    .trace_block = geo_trace_block,
    .nodes = geo_nodes,
};
