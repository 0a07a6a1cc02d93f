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
} GeoState;

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
      if (first == SIM_TIME_MAX) continue; /* not connected to where the block went */
      SimTime delay = constant ? first + offset : first - now + import + sim_delay_sample(&p->stratum, &rng);
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

static const GArray *geo_vantage_sightings(gpointer state, guint i) {
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
  return (double)ns / 1e9;
}

static void geo_set_threads(gpointer state, guint threads, gboolean adaptive) {
  GeoState *g = state;
  g->relay_threads = threads;
  g->relay_adaptive = adaptive;
  if (g->work) {
    relay_work_set_threads(g->work, MAX(threads, 1));
    relay_work_set_run_mode(g->work, adaptive ? RELAY_RUN_ADAPTIVE : RELAY_RUN_ALL);
  }
}

G_STATIC_ASSERT(POW_RELAY_MAX_THREADS == RELAY_MAX_THREADS);

static gboolean geo_relay_stats(gpointer state, PowRelayStats *out) {
  GeoState *g = state;
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
    .relay_stats = geo_relay_stats,
    .trace_set = geo_trace_set,
    .trace_info = geo_trace_info,
    .trace_node = geo_trace_node,
    .trace_block = geo_trace_block,
    .nodes = geo_nodes,
};
