/* relay_stop.c: the Geth kernel's stop (relay.h): when a block may end before every node has it, and the
 * pruning of the steps that cannot change what it watches (targets, each node's floor distance to them,
 * their values at each window's start). */
#include "relay-private.h"

#include <math.h>

/* Sets the block's stop from `stop` (NULL: none): the bitmaps sized for its groups, no group seen yet, and
 * the groups it watches counted (those of no watched node are never waited for). */
void relay_kernel_stop_prepare(Kernel *k, const NetTopology *t, const RelayStop *stop) {
  BlockSpec *bs = &k->blk;
  bs->stop_n = stop ? MIN(stop->n_nodes, t->n_nodes) : 0;
  bs->stop_group = bs->stop_n ? stop->group : NULL;
  bs->stop_groups = bs->stop_n ? stop->n_groups : 0;
  bs->stop_msgs = bs->stop_n ? MIN(MIN(stop->n_messages, bs->stop_n), t->n_special) : 0;
  bs->stop_first = bs->stop_n && stop->first_message_only;
  guint words = (bs->stop_groups + 63) / 64;
  if (words > k->seen_words) {
    k->seen_all = g_renew(guint64, k->seen_all, words);
    for (guint i = 0; i < k->n_workers; i++)
      k->workers[i]->seen = g_renew(guint64, k->workers[i]->seen, words);
    k->seen_words = words;
  }
  if (k->seen_words) memset(k->seen_all, 0, k->seen_words * sizeof *k->seen_all);
  k->groups_left = 0;
  k->stop_prev = STOP_NO_PREV;
  for (guint32 v = 0; v < bs->stop_n; v++) {
    guint32 grp = bs->stop_group ? bs->stop_group[v] : v;
    if (grp == RELAY_STOP_NONE) continue;
    if (grp >= bs->stop_groups) {
      g_critical("relay stop: node %u's group %u is not below n_groups %u: the relay runs to its end", v, grp,
                 bs->stop_groups);
      bs->stop_n = bs->stop_msgs = 0;
      return;
    }
    if (!(k->seen_all[grp >> 6] & UINT64_C(1) << (grp & 63))) k->groups_left++;
    k->seen_all[grp >> 6] |= UINT64_C(1) << (grp & 63);
  }
  if (k->seen_words) memset(k->seen_all, 0, k->seen_words * sizeof *k->seen_all);
}

/* ---- pruning (relay.h) ---- */

/* A watched value of target T as it stands: a group's least full-block time; a watched node's first block
 * message and announcement, the later of the two (both watched) or the earlier (first_message_only). */
static inline SimTime target_value(const Kernel *k, guint32 T, guint32 l) {
  if (T < k->blk.stop_groups) return k->nh[l].have;
  SimTime fp = k->w->first_push[l], an = k->w->announce[l];
  return k->blk.stop_first ? MIN(fp, an) : MAX(fp, an);
}

/* Worker W's part of the targets' values at the start of its window, after the last window's messages:
 * the same state in every split (every message sent before this window has been applied). */
void relay_kernel_snap_part(Kernel *k, Worker *W) {
  /* Computed in snap_new (the worker's alone), stored into snap_part (which the reducing thread reads) only
   * where it changed: a store into a line the other core has read costs a miss there and here, at every
   * window, and the values change a few times a block. A target none of W's nodes watch stays SIM_TIME_MAX
   * (relay_kernel_targets_build). */
  SimTime *nw = W->snap_new;
  for (guint32 i = 0; i < W->n_own; i++)
    nw[W->own_target[i]] = SIM_TIME_MAX;
  for (guint32 i = 0; i < W->n_own; i++) {
    guint32 T = W->own_target[i];
    nw[T] = MIN(nw[T], target_value(k, T, W->own_node[i]));
  }
  for (guint32 i = 0; i < W->n_own; i++) {
    guint32 T = W->own_target[i];
    if (W->snap_part[T] != nw[T]) W->snap_part[T] = nw[T];
  }
}

/* At a window's end (the reducing thread, every worker at the barrier): the targets' values as they stood
 * at the start of the window just ended, for the next window (starting at `next`), and the targets still
 * open then (a value before `next` cannot be lowered by any step from `next` on). */
void relay_kernel_snap_merge(Kernel *k, SimTime next) {
  /* Stored only where changed (the step loops of every thread read these lines: see snap_part). */
  guint32 n = 0;
  for (guint32 T = 0; T < k->n_tg; T++) {
    SimTime v = SIM_TIME_MAX;
    for (guint i = 0; i < k->n_workers; i++)
      v = MIN(v, k->workers[i]->snap_part[T]);
    if (k->snap[T] != v) k->snap[T] = v;
    if (v >= next) {
      if (k->active[n] != T) k->active[n] = T;
      n++;
    }
  }
  if (k->n_active != n) k->n_active = n;
}

/* Each node's least cost to each target (ns; kernel order) into out[node * n_tg + target] in us, rounded
 * down (G_MAXUINT32: cannot reach it): Dijkstra from the target's nodes over the links reversed, a hop
 * x -> y costing its latency floor plus min(size_lo * x's transfer time per byte to y, import_lo) (both 0:
 * the floors alone). With out0, also the cost with a first hop at its floor alone. */
static void targets_dijkstra(const Kernel *k, double size_lo, SimTime import_lo, guint32 *out, guint32 *out0) {
  const BlockSpec *b = &k->blk;
  guint32 ng = b->stop_groups, nt = k->n_tg, n = k->n_nodes;
  g_autofree SimTime *d = g_new(SimTime, MAX(n, 1));
  g_autofree guint64 *heap = g_new(guint64, MAX(k->off[n], 1) + n + 1);
  for (guint32 T = 0; T < nt; T++) {
    gsize len = 0;
    for (guint32 v = 0; v < n; v++)
      d[v] = SIM_TIME_MAX;
    for (guint32 id = 0; id < b->stop_n; id++) {
      gboolean in = T < ng ? (b->stop_group ? b->stop_group[id] : id) == T : id == T - ng;
      if (!in) continue;
      guint32 l = k->loc[id];
      d[l] = 0;
      heap[len++] = l; /* key: distance (ns) << 22 | node; distance 0 */
    }
    /* A binary min-heap of keys; entries made stale by a shorter distance are skipped when popped. */
    while (len) {
      guint64 top = heap[0];
      heap[0] = heap[--len];
      for (gsize i = 0;;) {
        gsize c = 2 * i + 1;
        if (c >= len) break;
        if (c + 1 < len && heap[c + 1] < heap[c]) c++;
        if (heap[i] <= heap[c]) break;
        guint64 x = heap[i];
        heap[i] = heap[c];
        heap[c] = x;
        i = c;
      }
      guint32 y = (guint32)(top & STEP_NODE_MASK);
      SimTime dy = (SimTime)(top >> STEP_NODE_BITS);
      if (dy != d[y]) continue;
      for (guint32 e = k->off[y]; e < k->off[y + 1]; e++) {
        guint32 z = edge_to(k->ew[e]);
        const LinkClass *c = &k->cls[k->ec[k->ec[e].rev].cls]; /* link z -> y */
        SimTime hop = c->floor_ns;
        if (size_lo > 0) {
          /* Rounded down, as a bound must be. */
          double tr = size_lo * c->tx_ns_per_byte;
          hop += tr < (double)import_lo ? (SimTime)tr : import_lo;
        }
        SimTime dz = dy + hop;
        if (dz >= d[z] || dz >= (SimTime)(UINT64_C(1) << (63 - STEP_NODE_BITS))) continue;
        d[z] = dz;
        gsize i = len++;
        heap[i] = (guint64)dz << STEP_NODE_BITS | z;
        while (i > 0 && heap[(i - 1) / 2] > heap[i]) {
          guint64 x = heap[i];
          heap[i] = heap[(i - 1) / 2];
          heap[(i - 1) / 2] = x;
          i = (i - 1) / 2;
        }
      }
    }
    for (guint32 v = 0; v < n; v++)
      out[(gsize)v * nt + T] = d[v] == SIM_TIME_MAX ? G_MAXUINT32 : (guint32)MIN(d[v] / 1000, G_MAXUINT32 - 1);
    if (!out0) continue;
    /* The first hop at its floor: a target's own node 0, else the least floor plus the rest over its links. */
    for (guint32 v = 0; v < n; v++) {
      SimTime best = d[v];
      if (best != 0)
        for (guint32 e = k->off[v]; e < k->off[v + 1]; e++) {
          SimTime dc = d[edge_to(k->ew[e])];
          if (dc != SIM_TIME_MAX) best = MIN(best, dc + k->cls[k->ec[e].cls].floor_ns);
        }
      out0[(gsize)v * nt + T] = best == SIM_TIME_MAX ? G_MAXUINT32 : (guint32)MIN(best / 1000, G_MAXUINT32 - 1);
    }
  }
}

/* ---- the tables a pipe's kernels share (TgShared, relay-private.h) ---- */

/* One table of the store: key -1 is the floors alone (tdist_base; a0 NULL). */
typedef struct {
  gint key;
  SimTime import_lo;
  const guint32 *group; /* the stop it was built for, as Kernel.tg_group .. tg_msgs */
  guint32 n, groups, msgs;
  guint32 *a, *a0;
} TgEntry;

struct TgShared {
  GMutex lock; /* held while a table is looked up or built (a second kernel that needs it waits) */
  guint n;
  TgEntry e[TG_CACHE_MAX];
};

TgShared *relay_tg_shared_new(void) {
  TgShared *s = g_new0(TgShared, 1);
  g_mutex_init(&s->lock);
  return s;
}

guint32 relay_tg_shared_built(TgShared *s) {
  g_mutex_lock(&s->lock);
  guint32 n = s->n;
  g_mutex_unlock(&s->lock);
  return n;
}

void relay_tg_shared_free(TgShared *s) {
  if (!s) return;
  for (guint i = 0; i < s->n; i++) {
    g_free(s->e[i].a);
    g_free(s->e[i].a0);
  }
  g_mutex_clear(&s->lock);
  g_free(s);
}

/* A new table of class `key` (-1: the floors alone, and no a0) for blocks whose import takes at least
 * import_lo, for the kernel's stop: what each of the kernel's own tables and the store's holds. */
static void table_compute(const Kernel *k, gint key, SimTime import_lo, guint32 **a, guint32 **a0) {
  gsize cells = MAX((gsize)k->n_tg * k->n_nodes, 1);
  *a = g_new(guint32, cells);
  *a0 = key < 0 ? NULL : g_new(guint32, cells);
  targets_dijkstra(k, key < 0 ? 0 : exp2(key / 4.0), import_lo, *a, *a0);
}

/* The store's table of class `key` (-1: the floors alone) for the kernel's stop, built now if missing; NULL
 * when it is missing and the store is full (the caller builds its own). */
static const TgEntry *tg_shared_get(Kernel *k, gint key, SimTime import_lo) {
  TgShared *s = k->tg_shared;
  const BlockSpec *b = &k->blk;
  const TgEntry *hit = NULL;
  g_mutex_lock(&s->lock);
  for (guint i = 0; i < s->n && !hit; i++) {
    const TgEntry *e = &s->e[i];
    if (e->key == key && e->import_lo == import_lo && e->group == b->stop_group && e->n == b->stop_n &&
        e->groups == b->stop_groups && e->msgs == b->stop_msgs)
      hit = e;
  }
  if (!hit && s->n < TG_CACHE_MAX) {
    TgEntry *e = &s->e[s->n++];
    *e = (TgEntry){.key = key, .import_lo = import_lo, .group = b->stop_group, .n = b->stop_n,
                   .groups = b->stop_groups, .msgs = b->stop_msgs};
    table_compute(k, key, import_lo, &e->a, &e->a0);
    hit = e;
  }
  g_mutex_unlock(&s->lock);
  return hit;
}

/* The kernel's own size classes' tables freed (the store's are only let go). */
static void tg_cache_clear(Kernel *k) {
  for (guint i = 0; i < k->tg_cache_n; i++) {
    if (k->tg_cache[i].shared) continue;
    g_free(k->tg_cache[i].a);
    g_free(k->tg_cache[i].a0);
  }
  k->tg_cache_n = 0;
}

void relay_kernel_targets_free(Kernel *k) {
  tg_cache_clear(k);
  memset(k->tg_asked, 0, sizeof k->tg_asked);
  if (!k->tdist_base_shared) g_free(k->tdist_base);
  k->tdist_base = NULL;
  k->tdist_base_shared = FALSE;
  k->tdist = k->tdist0 = NULL;
}

/* The targets of the block's stop and each node's least sum of latency floors to each, and each worker's
 * watched nodes; once per stop and layout. The size classes' tables are dropped (built again as asked). */
void relay_kernel_targets_build(Kernel *k) {
  const BlockSpec *b = &k->blk;
  guint32 ng = b->stop_groups, nt = ng + b->stop_msgs, n = k->n_nodes;
  relay_kernel_targets_free(k);
  g_free(k->snap);
  g_free(k->active);
  k->n_tg = nt;
  const TgEntry *base = k->tg_shared ? tg_shared_get(k, -1, 0) : NULL;
  if (base) {
    k->tdist_base = base->a;
    k->tdist_base_shared = TRUE;
  } else {
    guint32 *none;
    table_compute(k, -1, 0, &k->tdist_base, &none);
    k->tables_built++;
  }
  k->tdist = k->tdist0 = k->tdist_base;
  k->snap = g_new(SimTime, MAX(nt, 1));
  k->active = g_new(guint32, MAX(nt, 1));
  guint64 pair = 2 * (guint64)MAX((gsize)nt * n, 1) * sizeof(guint32);
  k->tg_cache_cap = (guint)MIN((guint64)TG_CACHE_MAX, TG_CACHE_BYTES / pair);
  for (guint i = 0; i < k->n_workers; i++) {
    Worker *W = k->workers[i];
    g_aligned_free(W->snap_part);
    g_aligned_free(W->snap_new);
    g_free(W->own_node);
    g_free(W->own_target);
    /* Each on lines of its own (64-byte aligned, whole lines): snap_part is read by the reducing thread. */
    gsize lines = ((gsize)MAX(nt, 1) * sizeof(SimTime) + 63) / 64;
    W->snap_part = g_aligned_alloc(lines, 64, 64);
    W->snap_new = g_aligned_alloc(lines, 64, 64);
    for (guint32 T = 0; T < nt; T++)
      W->snap_part[T] = SIM_TIME_MAX;
    W->own_node = g_new(guint32, 2 * (gsize)MAX(b->stop_n, 1));
    W->own_target = g_new(guint32, 2 * (gsize)MAX(b->stop_n, 1));
    W->n_own = 0;
    for (guint32 id = 0; id < b->stop_n; id++) {
      guint32 l = k->loc[id];
      if (l < W->lo || l >= W->hi) continue;
      guint32 grp = b->stop_group ? b->stop_group[id] : id;
      if (grp != RELAY_STOP_NONE) {
        W->own_node[W->n_own] = l;
        W->own_target[W->n_own++] = grp;
      }
      if (id < b->stop_msgs) {
        W->own_node[W->n_own] = l;
        W->own_target[W->n_own++] = ng + id;
      }
    }
  }
  k->tg_group = b->stop_group;
  k->tg_n = b->stop_n;
  k->tg_groups = b->stop_groups;
  k->tg_msgs = b->stop_msgs;
  k->tg_built = TRUE;
}

/* Whether the block may stop at the end of window w, whose successor would start at `next` (a lower bound of
 * every step still to come, SIM_TIME_MAX: none), with every worker at the barrier: nothing left, or what
 * the stop watches final, decided from what does not depend on how the groups are split among workers
 * (so the windows, and what the unwatched nodes hold, are the same at every thread count).
 *  - The groups: the workers' newly seen ones are merged here (only the reducing thread runs this, while
 *    the others wait). The steps of window w are the same in every split.
 *  - Each watched node's first block message and announcement, against the bound P that started window w:
 *    every message sent before window w has been applied in every split (a window starts by applying what
 *    the last one sent); one sent in window w or later is sent at a step at or after P and arrives at or
 *    after P plus the least floor of the node's links into it. So a value below that is final, and
 *    whether a value is below it does not depend on which of window w's messages have been applied (they
 *    cannot bring a value below it). */
gboolean relay_kernel_stop_reached(Kernel *k, SimTime next) {
  if (next == SIM_TIME_MAX) return TRUE;
  const BlockSpec *b = &k->blk;
  SimTime prev = k->stop_prev;
  k->stop_prev = next;
  if (!b->stop_n) return FALSE;
  if (k->groups_left) {
    for (guint i = 0; i < k->n_workers; i++) {
      Worker *W = k->workers[i];
      if (!W->fresh) continue;
      W->fresh = FALSE;
      for (guint j = 0; j < k->seen_words; j++) {
        guint64 add = W->seen[j] & ~k->seen_all[j];
        k->seen_all[j] |= add;
        k->groups_left -= (guint32)__builtin_popcountll(add);
      }
    }
    if (k->groups_left) return FALSE;
  }
  for (guint32 m = 0; m < b->stop_msgs; m++) {
    if (prev == STOP_NO_PREV) return FALSE; /* window 0: no bound before it */
    guint32 l = k->loc[m];
    SimTime fin = k->fin_in[m];
    SimTime lim = prev > SIM_TIME_MAX - fin ? SIM_TIME_MAX : prev + fin;
    SimTime fp = k->w->first_push[l], an = k->w->announce[l];
    if (b->stop_first ? MIN(fp, an) >= lim : (fp >= lim || an >= lim)) return FALSE;
  }
  return TRUE;
}

/* The size class of a block: floor(4 log2(size)), so that its least size 2^(key/4) is at most the block's. */
/* Size class `key`'s table for blocks whose import takes at least `import_lo`, built into the cache's next
 * entry (the caller made room). */
static TgTable *tg_build(Kernel *k, gint key, SimTime import_lo) {
  TgTable *t = &k->tg_cache[k->tg_cache_n++];
  *t = (TgTable){.key = key, .import_lo = import_lo};
  table_compute(k, key, import_lo, &t->a, &t->a0);
  k->tables_built++;
  return t;
}

static gint size_key(double size_bytes) {
  if (!(size_bytes >= 1)) return -1;
  gint key = (gint)floor(4 * log2(size_bytes));
  while (key > 0 && exp2(key / 4.0) > size_bytes)
    key--;
  return MIN(key, TG_KEYS - 1);
}

/* A RelayPipe slot (RelayWork.tg_forced): the table a synchronous kernel would have used (relay_tg_plan),
 * k->tg_key (-1: the floors alone), built here if this kernel has not built it yet. The slot never builds
 * a table the synchronous kernel would not have, so its cache holds at most what that one's does; one whose
 * stop changed in between may hold older classes too: dropped when the cache is full. */
static void targets_select_forced(Kernel *k, SimTime import_lo) {
  gint key = k->tg_key;
  if (key < 0) return;
  const TgTable *hit = NULL;
  for (guint i = 0; i < k->tg_cache_n && !hit; i++)
    if (k->tg_cache[i].key == key && k->tg_cache[i].import_lo == import_lo) hit = &k->tg_cache[i];
  if (!hit) {
    if (k->tg_cache_n == TG_CACHE_MAX) tg_cache_clear(k);
    const TgEntry *e = k->tg_shared ? tg_shared_get(k, key, import_lo) : NULL;
    if (e) {
      TgTable *t = &k->tg_cache[k->tg_cache_n++];
      *t = (TgTable){.key = key, .import_lo = import_lo, .a = e->a, .a0 = e->a0, .shared = TRUE};
      hit = t;
    } else {
      hit = tg_build(k, key, import_lo);
    }
  }
  k->tdist = hit->a;
  k->tdist0 = hit->a0;
}

/* Sets the block's bounds (Kernel.tdist, tdist0) for a block of `size_bytes` whose import takes at least
 * `import_lo` (that of an empty block): its size class's table if built; else, once `after` (> 0) blocks
 * have asked for it and while the cache has room, builds it (no table is dropped: one costs about as much
 * as relaying 20 of the month's blocks, and a run's block sizes keep their distribution, so the common
 * classes fill the cache first); else the largest smaller class built (its
 * bounds hold for bigger blocks: no hop costs less), or the floors alone. Which table a block uses changes
 * how many steps it skips, never its watched values; the choice depends on the blocks relayed before, so on
 * no thread count. */
void relay_kernel_targets_select(Kernel *k, double size_bytes, SimTime import_lo, int64_t after) {
  k->tdist = k->tdist0 = k->tdist_base;
  if (G_UNLIKELY(k->tg_forced)) {
    targets_select_forced(k, import_lo);
    return;
  }
  gint key = size_key(size_bytes);
  if (key < 0 || k->tg_cache_cap == 0 || after <= 0) return;
  const TgTable *best = NULL;
  for (guint i = 0; i < k->tg_cache_n; i++) {
    const TgTable *t = &k->tg_cache[i];
    if (t->import_lo == import_lo && t->key <= key && (!best || t->key > best->key)) best = t;
  }
  if ((!best || best->key != key) && k->tg_cache_n < k->tg_cache_cap && ++k->tg_asked[key] >= (guint64)after) {
    best = tg_build(k, key, import_lo);
  }
  if (!best) return;
  k->tdist = best->a;
  k->tdist0 = best->a0;
}

/* What a synchronous kernel fed the same blocks in the same order would decide about the size classes'
 * tables (geth_propagate, relay_kernel_stop_prepare, relay_kernel_targets_build and _select, step for step:
 * keep them in step), without building any: the class whose table block `b` would use, or -1 (the floors
 * alone, or no pruning at all). */
gint relay_tg_plan(TgPlan *pl, const GethParams *p, SimTime import_lo, const NetTopology *t, const RelayBlock *b,
                   const RelayStop *stop) {
  if (b->n_sources == 0) return -1; /* geth_propagate returns before the stop */
  guint32 stop_n = stop ? MIN(stop->n_nodes, t->n_nodes) : 0;
  const guint32 *group = stop_n ? stop->group : NULL;
  guint32 groups = stop_n ? stop->n_groups : 0;
  guint32 msgs = stop_n ? MIN(MIN(stop->n_messages, stop_n), t->n_special) : 0;
  for (guint32 v = 0; v < stop_n; v++) {
    guint32 grp = group ? group[v] : v;
    if (grp != RELAY_STOP_NONE && grp >= groups) {
      stop_n = msgs = 0;
      break;
    }
  }
  gboolean pruning = p->prune && stop_n > 0 && (guint64)(groups + msgs) * t->n_nodes <= PRUNE_MAX_ENTRIES;
  if (!pruning) return -1;
  if (!pl->built || pl->group != group || pl->n != stop_n || pl->groups != groups || pl->msgs != msgs) {
    pl->built = TRUE;
    pl->group = group;
    pl->n = stop_n;
    pl->groups = groups;
    pl->msgs = msgs;
    pl->n_built = 0;
    memset(pl->asked, 0, sizeof pl->asked);
    guint64 pair = 2 * (guint64)MAX((gsize)(groups + msgs) * t->n_nodes, 1) * sizeof(guint32);
    pl->cap = (guint)MIN((guint64)TG_CACHE_MAX, TG_CACHE_BYTES / pair);
  }
  gint key = size_key(b->size_bytes);
  if (key < 0 || pl->cap == 0 || p->prune_table_after <= 0) return -1;
  gint best = -1;
  for (guint i = 0; i < pl->n_built; i++)
    if (pl->import_lo[i] == import_lo && pl->key[i] <= key && pl->key[i] > best) best = pl->key[i];
  if (best != key && pl->n_built < pl->cap && ++pl->asked[key] >= (guint64)p->prune_table_after) {
    pl->key[pl->n_built] = key;
    pl->import_lo[pl->n_built++] = import_lo;
    best = key;
  }
  return best;
}
