/* relay_kernel.c: the Geth kernel's layout: the topology packed in the groups' order with its link classes,
 * and the workers, mailboxes and threads for the threads asked for. */
#include "relay-private.h"

static void layout_free(Kernel *k) {
  relay_kernel_stop_threads(k);
  for (guint i = 0; i < k->n_workers; i++) {
    Worker *W = k->workers[i];
    g_free(W->seen);
    g_aligned_free(W->snap_part);
    g_aligned_free(W->snap_new);
    g_free(W->own_node);
    g_free(W->own_target);
    relay_queue_clear(&W->q);
    g_free(W->fifo[0]);
    g_free(W->fifo[1]);
    g_free(W->scratch);
    g_aligned_free(W->xfer);
    g_free(W->share);
    g_free(W->read);
    g_aligned_free(W);
    if (k->threads[i]) g_aligned_free(k->threads[i]);
  }
  for (gsize i = 0; i < (gsize)k->n_workers * k->n_workers; i++)
    g_free(k->mb[i].msg);
  g_free(k->workers);
  g_free(k->threads);
  g_aligned_free(k->mb);
  g_aligned_free(k->slots);
  g_aligned_free(k->wait_s);
  g_free(k->worker_of);
  g_free(k->split_of);
  g_free(k->slice_off);
  g_free(k->slice_edge);
  g_free(k->split_sched);
  k->split_sched = NULL;
  k->split_of = k->slice_off = k->slice_edge = NULL;
  k->n_split = 0;
  k->workers = NULL;
  k->threads = NULL;
  k->mb = NULL;
  k->slots = NULL;
  k->wait_s = NULL;
  k->worker_of = NULL;
  k->n_workers = 0;
}

/* Workers for `threads` asked for: each takes a contiguous run of groups (relay_groups_cut). */
static void layout_build(Kernel *k, guint threads) {
  const RelayGroups *gr = k->groups;
  guint n = relay_groups_threads(gr, threads);
  guint32 cut[RELAY_MAX_THREADS + 1];
  relay_groups_cut(gr, n, cut);
  k->n_workers = n;
  k->workers = g_new0(Worker *, n);
  k->threads = g_new0(Thread *, n);
  k->worker_of = g_new(guint8, MAX(k->n_nodes, 1));
  k->slots = g_aligned_alloc0(n, sizeof(Slot), 64);
  k->tg_built = FALSE; /* the workers' watched nodes change with the layout (relay_stop.c) */
  /* The stop's bitmaps are sized by the first stop that needs them (relay_stop.c). */
  g_free(k->seen_all);
  k->seen_all = NULL;
  k->seen_words = 0;
  k->wait_s = g_aligned_alloc0((gsize)n * WAIT_STRIDE, sizeof(double), 64);
  k->mb = g_aligned_alloc0((gsize)n * n, sizeof(Mailbox), 64);
  for (guint i = 0; i < n; i++) {
    Worker *W = g_aligned_alloc0(1, sizeof(Worker), 64);
    k->workers[i] = W;
    W->k = k;
    W->index = i;
    W->lo = gr->group_start[cut[i]];
    W->hi = gr->group_start[cut[i + 1]];
    relay_queue_init(&W->q);
    guint32 own = W->hi - W->lo, max_deg = 0;
    for (guint32 v = W->lo; v < W->hi; v++) {
      k->worker_of[v] = (guint8)i;
      max_deg = MAX(max_deg, k->off[v + 1] - k->off[v]);
    }
    for (int f = 0; f < 2; f++)
      W->fifo[f] = g_new(guint64, 2 * (gsize)own + 1);
    W->scratch = g_new(guint32, max_deg + 1);
    W->xfer = g_aligned_alloc(MAX(k->n_cls, 1), sizeof(SimTime), 64);
    W->read = g_new0(guint32, n);
    if (i > 0) {
      Thread *T = g_aligned_alloc0(1, sizeof(Thread), 64);
      T->k = k;
      T->index = i;
      k->threads[i] = T;
    }
  }
  for (guint32 v = 0; v < k->n_nodes; v++)
    for (guint32 e = k->off[v]; e < k->off[v + 1]; e++) {
      guint s = k->worker_of[v], d = k->worker_of[edge_to(k->ew[e])];
      if (s != d) k->mb[(gsize)s * n + d].cap++;
    }
  for (gsize i = 0; i < (gsize)n * n; i++)
    k->mb[i].msg = g_new(Msg, MAX(k->mb[i].cap, 1));
  /* The split nodes' edges by the receiving worker, each worker's in row order (SPLIT_MIN_DEGREE). A slice
   * message replaces the messages over those edges in the mailbox, which has room for one per edge. */
  if (n > 1) {
    k->split_of = g_new(guint32, MAX(k->n_nodes, 1));
    for (guint32 v = 0; v < k->n_nodes; v++) {
      k->split_of[v] = G_MAXUINT32;
      if (k->nh[v].special && k->off[v + 1] - k->off[v] >= SPLIT_MIN_DEGREE) k->split_of[v] = k->n_split++;
    }
    k->slice_off = g_new(guint32, (gsize)k->n_split * (n + 1) + 1);
    gsize total = 0;
    for (guint32 v = 0; v < k->n_nodes; v++)
      if (k->split_of[v] != G_MAXUINT32) total += k->off[v + 1] - k->off[v];
    k->slice_edge = g_new(guint32, MAX(total, 1));
    k->split_sched = g_new0(guint8, MAX(k->n_split, 1));
    for (guint i = 0; i < n; i++)
      k->workers[i]->share = g_new(guint64, MAX(k->n_split, 1));
    guint32 at = 0;
    for (guint32 v = 0; v < k->n_nodes; v++) {
      guint32 i = k->split_of[v];
      if (i == G_MAXUINT32) continue;
      for (guint d = 0; d < n; d++) {
        k->slice_off[(gsize)i * (n + 1) + d] = at;
        for (guint32 e = k->off[v]; e < k->off[v + 1]; e++)
          if (k->worker_of[edge_to(k->ew[e])] == d) k->slice_edge[at++] = e;
      }
      k->slice_off[(gsize)i * (n + 1) + n] = at;
    }
  }
  k->sched = (Schedule){.all = TRUE};
}

void relay_kernel_free(Kernel *k) {
  if (!k) return;
  layout_free(k);
  g_free(k->off);
  g_free(k->ew);
  g_free(k->ec);
  g_free(k->cls);
  g_free(k->qlat);
  g_free(k->nh);
  g_free(k->upload_free);
  g_free(k->blk.src);
  g_free(k->blk.src_t);
  g_free(k->seen_all);
  g_free(k->fin_in);
  relay_kernel_targets_free(k);
  g_free(k->snap);
  g_free(k->active);
  g_aligned_free(k);
}

/* ---- the packed topology ---- */

/* The kernel for `t` under gp's jitter model, in the groups' node order: packed edges (a node's edges in
 * the topology's order), link classes (numbered in edge order; no result depends on the numbers). */
static Kernel *kernel_new(RelayWork *w, const NetGeoParams *gp, const NetTopology *t) {
  Kernel *k = g_aligned_alloc0(1, sizeof(Kernel), 64);
  const RelayGroups *gr = w->groups;
  k->topo = t;
  k->jitter = gp->jitter.model;
  k->jitter_params = gp->jitter.params;
  k->w = w;
  k->groups = gr;
  k->n_nodes = t->n_nodes;
  k->gid = gr->order;
  k->loc = gr->loc;
  k->off = g_new(guint32, t->n_nodes + 1);
  k->off[0] = 0;
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    k->off[l + 1] = k->off[l] + (t->adj_off[v + 1] - t->adj_off[v]);
  }
  g_autofree guint32 *loc_edge = g_new(guint32, MAX(t->n_edges, 1));
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    for (guint32 j = 0; j < t->adj_off[v + 1] - t->adj_off[v]; j++)
      loc_edge[t->adj_off[v] + j] = k->off[l] + j;
  }
  k->ew = g_new(guint64, MAX(t->n_edges, 1));
  k->ec = g_new(EdgeCold, MAX(t->n_edges, 1));
  GArray *keys = g_array_new(FALSE, FALSE, sizeof(RelayClassKey));
  GHashTable *index = g_hash_table_new_full(relay_class_key_hash, relay_class_key_equal, g_free, NULL);
  for (guint32 l = 0; l < t->n_nodes; l++) {
    guint32 v = gr->order[l];
    for (guint32 te = t->adj_off[v]; te < t->adj_off[v + 1]; te++) {
      RelayClassKey ck;
      memset(&ck, 0, sizeof ck);
      ck.mean_ns = t->lat_mean_ns[te];
      ck.floor_ns = t->lat_floor_ns[te];
      ck.tx_ns_per_byte = t->tx_ns_per_byte[te];
      ck.host_ns = t->lat_host_ns ? t->lat_host_ns[te] : 0;
      gpointer hit;
      guint32 c;
      if (g_hash_table_lookup_extended(index, &ck, NULL, &hit)) {
        c = GPOINTER_TO_UINT(hit);
      } else {
        c = keys->len;
        g_array_append_val(keys, ck);
        /* A copy as the table's key: `keys` moves when it grows. */
        g_hash_table_insert(index, g_memdup2(&ck, sizeof ck), GUINT_TO_POINTER(c));
      }
      guint32 u = t->adj[te];
      guint64 cross = gr->group_of[u] != gr->group_of[v] ? EDGE_CROSS_BIT : 0;
      guint32 le = loc_edge[te];
      k->ew[le] = cross | (guint64)gr->loc[u] << EDGE_TO_SHIFT | EDGE_HEARD_NONE;
      k->ec[le] = (EdgeCold){.rev = loc_edge[t->rev[te]], .cls = c};
    }
  }
  g_hash_table_destroy(index);
  k->n_cls = keys->len;
  k->cls = g_new0(LinkClass, MAX(keys->len, 1));
  k->qlat = g_new0(QLat, MAX(keys->len, 1));
  for (guint32 c = 0; c < keys->len; c++) {
    const RelayClassKey *ck = &g_array_index(keys, RelayClassKey, c);
    k->cls[c].mean_ns = ck->mean_ns;
    k->cls[c].floor_ns = ck->floor_ns;
    k->cls[c].tx_ns_per_byte = ck->tx_ns_per_byte;
    net_latency_draw_init(&k->cls[c].draw, gp, ck->mean_ns, ck->host_ns);
    if (k->cls[c].draw.kind == NET_DRAW_PARETO) {
      k->qlat[c].at[0] = SIM_TIME_MAX;
      for (guint j = 1; j <= QLAT_STEPS; j++)
        k->qlat[c].at[j] = pareto_of_u(&k->cls[c].draw, (double)j / QLAT_STEPS);
    }
  }
  g_array_free(keys, TRUE);
  k->nh = g_new0(NodeHot, MAX(t->n_nodes, 1));
  for (guint32 l = 0; l < t->n_nodes; l++)
    k->nh[l].special = gr->order[l] < t->n_special;
  k->upload_free = g_new0(SimTime, MAX(t->n_nodes, 1));
  k->window = MIN(gr->lookahead, RELAY_WINDOW_MAX_NS);
  /* Per special: the least floor of its links into it (each of its edges' reverse). */
  k->fin_in = g_new(SimTime, MAX(t->n_special, 1));
  for (guint32 s = 0; s < t->n_special; s++) {
    guint32 l = gr->loc[s];
    SimTime f = SIM_TIME_MAX;
    for (guint32 e = k->off[l]; e < k->off[l + 1]; e++)
      f = MIN(f, k->cls[k->ec[k->ec[e].rev].cls].floor_ns);
    k->fin_in[s] = f;
  }
  return k;
}

/* The kernel for (t, gp's jitter) with w->threads, built or rebuilt as needed. */
Kernel *relay_kernel_get(RelayWork *w, const NetGeoParams *gp, const NetTopology *t) {
  Kernel *k = w->kernel;
  if (k && (k->topo != t || k->jitter != gp->jitter.model || k->jitter_params != gp->jitter.params)) {
    relay_kernel_free(k);
    k = w->kernel = NULL;
  }
  if (!w->groups) w->groups = relay_groups_new(t);
  if (!k) k = w->kernel = kernel_new(w, gp, t);
  if (k->n_workers != relay_groups_threads(w->groups, w->threads)) {
    layout_free(k);
    layout_build(k, w->threads);
  }
  return k;
}
