/* relay_work.c: the result store (RelayWork) that every relay model reports through, and the stop's
 * helpers (relay.h). */
#include "relay-private.h"

/* Every node unreached, no special heard anything, counts zero (node order). */
void relay_work_reset_nodes(RelayWork *w) {
  w->loc = NULL;
  for (guint32 v = 0; v < w->n_nodes; v++) w->have[v] = SIM_TIME_MAX;
  memset(w->done, 0, w->n_nodes);
  for (guint32 v = 0; v < w->n_special; v++) w->first_push[v] = w->announce[v] = SIM_TIME_MAX;
  w->reached = w->messages = 0;
}

RelayWork *relay_work_new(const NetTopology *t) {
  RelayWork *w = g_new0(RelayWork, 1);
  w->n_nodes = t->n_nodes;
  w->n_special = t->n_special;
  w->n_edges = t->n_edges;
  w->have = g_new(SimTime, MAX(t->n_nodes, 1));
  w->done = g_new(guint8, MAX(t->n_nodes, 1));
  w->first_push = g_new(SimTime, MAX(t->n_nodes, 1));
  w->announce = g_new(SimTime, MAX(t->n_nodes, 1));
  w->threads = 1;
  relay_work_reset_nodes(w);
  return w;
}

void relay_work_free(RelayWork *w) {
  if (!w) return;
  relay_kernel_free(w->kernel);
  relay_groups_free(w->groups);
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  g_free(w->have);
  g_free(w->done);
  g_free(w->first_push);
  g_free(w->announce);
  g_free(w);
}

static inline guint32 result_index(const RelayWork *w, guint32 v) {
  return w->loc ? w->loc[v] : v;
}

SimTime relay_work_have(const RelayWork *w, guint32 v) {
  guint32 i = result_index(w, v);
  return w->done[i] == DONE_YES ? w->have[i] : SIM_TIME_MAX;
}
SimTime relay_work_announce(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->announce[result_index(w, v)] : SIM_TIME_MAX;
}
SimTime relay_work_first_push(const RelayWork *w, guint32 v) {
  return v < w->n_special ? w->first_push[result_index(w, v)] : SIM_TIME_MAX;
}
void relay_work_copy_results(RelayWork *dst, const RelayWork *src) {
  g_return_if_fail(dst->n_nodes == src->n_nodes);
  dst->loc = src->loc; /* the kernel's node order (the topology's alone), which lives as long as its kernel */
  memcpy(dst->have, src->have, src->n_nodes * sizeof *src->have);
  memcpy(dst->done, src->done, src->n_nodes);
  for (guint32 v = 0; v < src->n_special; v++) {
    guint32 i = result_index(src, v);
    dst->first_push[i] = src->first_push[i];
    dst->announce[i] = src->announce[i];
  }
  dst->reached = src->reached;
  dst->messages = src->messages;
}

guint64 relay_work_reached(const RelayWork *w) { return w->reached; }
guint64 relay_work_messages(const RelayWork *w) { return w->messages; }

/* ---- the reporting API of relay models kept in other files ---- */

gboolean relay_stop_agree(const RelayStop *stop, const RelayWork *a, const RelayWork *b) {
  g_return_val_if_fail(a->n_nodes == b->n_nodes, FALSE);
  guint32 n = stop && stop->n_nodes ? MIN(stop->n_nodes, a->n_nodes) : a->n_nodes;
  if (!stop || !stop->n_nodes) {
    for (guint32 v = 0; v < n; v++)
      if (relay_work_have(a, v) != relay_work_have(b, v) || relay_work_first_push(a, v) != relay_work_first_push(b, v) ||
          relay_work_announce(a, v) != relay_work_announce(b, v))
        return FALSE;
    return TRUE;
  }
  g_autofree SimTime *least = g_new(SimTime, 2 * (gsize)MAX(stop->n_groups, 1));
  for (guint32 i = 0; i < 2 * stop->n_groups; i++)
    least[i] = SIM_TIME_MAX;
  for (guint32 v = 0; v < n; v++) {
    guint32 grp = stop->group ? stop->group[v] : v;
    if (grp == RELAY_STOP_NONE || grp >= stop->n_groups) continue;
    SimTime ha = relay_work_have(a, v), hb = relay_work_have(b, v); /* MIN() would call each twice */
    least[2 * grp] = MIN(least[2 * grp], ha);
    least[2 * grp + 1] = MIN(least[2 * grp + 1], hb);
  }
  for (guint32 i = 0; i < stop->n_groups; i++)
    if (least[2 * i] != least[2 * i + 1]) return FALSE;
  for (guint32 v = 0; v < MIN(stop->n_messages, n); v++) {
    SimTime pa = relay_work_first_push(a, v), aa = relay_work_announce(a, v);
    SimTime pb = relay_work_first_push(b, v), ab = relay_work_announce(b, v);
    if (stop->first_message_only ? MIN(pa, aa) != MIN(pb, ab) || (pa <= aa) != (pb <= ab) : pa != pb || aa != ab)
      return FALSE;
  }
  return TRUE;
}

RelayStop relay_stop_specials(const NetGeoParams *gp, const NetTopology *t, const guint *pool_miners,
                               guint32 *group) {
  guint32 n_pools = 0;
  for (guint32 v = 0; v < t->n_special && v < gp->n_specials; v++)
    if (gp->specials[v].pool != NET_NO_POOL) n_pools = MAX(n_pools, gp->specials[v].pool + 1);
  guint32 n_groups = n_pools;
  for (guint32 v = 0; v < t->n_special; v++) {
    guint pool = v < gp->n_specials ? gp->specials[v].pool : NET_NO_POOL;
    if (pool == NET_NO_POOL)
      group[v] = RELAY_STOP_NONE;
    else if (pool_miners && pool_miners[pool] > 1)
      group[v] = n_groups++; /* each miner of the pool mines behind one gateway of its own */
    else
      group[v] = pool;
  }
  return (RelayStop){.n_nodes = t->n_special, .group = group, .n_groups = n_groups, .n_messages = gp->n_vantages};
}

void relay_work_begin(RelayWork *w) {
  g_return_if_fail(w != NULL);
  relay_work_reset_nodes(w);
}

void relay_work_record(RelayWork *w, guint32 v, SimTime have, SimTime first_push, SimTime announce) {
  g_return_if_fail(w != NULL && v < w->n_nodes && w->loc == NULL);
  w->have[v] = have;
  w->done[v] = have != SIM_TIME_MAX ? DONE_YES : DONE_NO;
  if (v < w->n_special) {
    w->first_push[v] = first_push;
    w->announce[v] = announce;
  }
}

void relay_work_add_counts(RelayWork *w, guint64 reached, guint64 messages) {
  w->reached += reached;
  w->messages += messages;
}

gpointer relay_work_ext(const RelayWork *w, const void *owner) {
  return w->ext_owner == owner ? w->ext : NULL;
}

void relay_work_set_ext(RelayWork *w, const void *owner, gpointer ext, GDestroyNotify free_fn) {
  if (w->ext && w->ext_free) w->ext_free(w->ext);
  w->ext_owner = owner;
  w->ext = ext;
  w->ext_free = free_fn;
}

guint32 relay_work_n_nodes(const RelayWork *w) { return w->n_nodes; }

void relay_work_get_stats(const RelayWork *w, RelayWorkStats *st) {
  g_return_if_fail(w != NULL && st != NULL);
  *st = w->stats;
  if (w->groups) {
    st->groups = relay_groups_count(w->groups);
    st->largest_group = relay_groups_largest(w->groups);
    st->lookahead_ns = relay_groups_lookahead(w->groups, &st->lookahead_from, &st->lookahead_to);
  } else {
    st->lookahead_ns = SIM_TIME_MAX;
  }
}

void relay_work_set_threads(RelayWork *w, guint threads) {
  g_return_if_fail(w != NULL);
  w->threads = MAX(threads, 1);
}

void relay_work_set_idle(RelayWork *w, RelayIdleFn fn, gpointer user) {
  g_return_if_fail(w != NULL);
  relay_kernel_stop_threads(w->kernel); /* they read it unlocked: a new value only for new threads */
  w->idle = fn;
  w->idle_user = user;
}

void relay_work_set_run_mode(RelayWork *w, RelayRunMode mode) {
  g_return_if_fail(w != NULL);
  w->run = mode;
}

void relay_work_set_groups(RelayWork *w, RelayGroups *groups) {
  g_return_if_fail(w != NULL && groups != NULL && groups->n_nodes == w->n_nodes);
  relay_kernel_free(w->kernel);
  w->kernel = NULL;
  relay_groups_free(w->groups);
  w->groups = groups;
}

const RelayGroups *relay_work_groups(const RelayWork *w) {
  return w->groups;
}

guint relay_class_key_hash(gconstpointer p) {
  const RelayClassKey *k = p;
  guint64 tx;
  memcpy(&tx, &k->tx_ns_per_byte, sizeof tx);
  guint64 h = (guint64)k->mean_ns * UINT64_C(0x9E3779B97F4A7C15) ^
              (guint64)k->floor_ns * UINT64_C(0xC2B2AE3D27D4EB4F) ^ tx * UINT64_C(0x165667B19E3779F9) ^
              (guint64)k->host_ns * UINT64_C(0x27D4EB2F165667C5);
  return (guint)(h ^ h >> 32);
}

gboolean relay_class_key_equal(gconstpointer a, gconstpointer b) {
  G_STATIC_ASSERT(sizeof(RelayClassKey) == 32); /* four 8-byte fields: no padding */
  return memcmp(a, b, sizeof(RelayClassKey)) == 0;
}
