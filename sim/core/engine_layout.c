/* engine_layout.c: the partitioned engine's layout: which entities must stay together (groups) and which
 * links bound the lookahead, groups cut into partitions, and sim_engine_prepare(), which lays it out. */
#include "engine.h"

#include <string.h>

#include "engine-private.h"
#include "numa_hw.h"

/* ---- Declarations ---- */

static void uf_ensure(SimEngine *engine) {
  if (engine->uf_len == engine->n_entities) return;
  engine->uf = g_renew(guint32, engine->uf, MAX(engine->n_entities, 1));
  for (guint i = engine->uf_len; i < engine->n_entities; i++)
    engine->uf[i] = i;
  engine->uf_len = engine->n_entities;
}

static guint32 uf_find(guint32 *uf, guint32 x) {
  while (uf[x] != x) {
    uf[x] = uf[uf[x]]; /* path halving */
    x = uf[x];
  }
  return x;
}

void sim_engine_keep_together(SimEngine *engine, SimEntityId a, SimEntityId b) {
  g_return_if_fail(engine != NULL && a < engine->n_entities && b < engine->n_entities);
  uf_ensure(engine);
  guint32 ra = uf_find(engine->uf, a), rb = uf_find(engine->uf, b);
  if (ra == rb) return;
  /* The smaller id is the root: groups then do not depend on the order of the calls. */
  if (ra < rb)
    engine->uf[rb] = ra;
  else
    engine->uf[ra] = rb;
  engine->prepared = FALSE;
}

void sim_engine_keep_all_together(SimEngine *engine) {
  g_return_if_fail(engine != NULL);
  engine->all_together = TRUE;
  engine->prepared = FALSE;
}

void sim_engine_declare_link(SimEngine *engine, SimEntityId src, SimEntityId dst, SimTime min_delay) {
  g_return_if_fail(engine != NULL && src < engine->n_entities && dst < engine->n_entities);
  g_return_if_fail(min_delay >= 0);
  SimLink l = {.src = src, .dst = dst, .min_delay = min_delay};
  g_array_append_val(engine->links, l);
  engine->prepared = FALSE;
}

void sim_engine_declare_default_delay(SimEngine *engine, SimTime min_delay) {
  g_return_if_fail(engine != NULL && min_delay >= 0);
  engine->default_delay = min_delay;
  engine->prepared = FALSE;
}

void sim_engine_set_threads(SimEngine *engine, guint threads, SimPartitioning how) {
  g_return_if_fail(engine != NULL && threads <= SIM_ENGINE_MAX_THREADS);
  g_return_if_fail(how == SIM_PARTITION_BLOCKS || how == SIM_PARTITION_ROUND_ROBIN);
  engine->threads = threads;
  engine->how = how;
  engine->prepared = FALSE;
}

/* ---- Layout: groups, partitions, lookahead ---- */

/* group[i] for every entity, numbered in order of each group's first entity; returns the group count. */
static guint engine_groups(SimEngine *engine, guint32 *group) {
  guint n = engine->n_entities;
  if (engine->all_together) {
    memset(group, 0, n * sizeof *group);
    return n > 0 ? 1 : 0;
  }
  if (!engine->uf) {
    for (guint i = 0; i < n; i++)
      group[i] = i;
    return n;
  }
  uf_ensure(engine);
  guint32 *gid = g_new(guint32, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    gid[i] = UINT32_MAX;
  guint groups = 0;
  for (guint i = 0; i < n; i++) {
    guint32 r = uf_find(engine->uf, i);
    if (gid[r] == UINT32_MAX) gid[r] = groups++;
    group[i] = gid[r];
  }
  g_free(gid);
  return groups;
}

/* engine_groups()'s count without its side effects (path halving): the roots are the entities that are their own
 * parent, and those added since the last declaration are each their own group. */
guint engine_count_groups(const SimEngine *engine) {
  guint n = engine->n_entities;
  if (engine->all_together) return n > 0 ? 1 : 0;
  if (!engine->uf) return n;
  guint len = MIN(engine->uf_len, n), groups = n - len;
  for (guint i = 0; i < len; i++)
    groups += engine->uf[i] == i;
  return groups;
}

static void assign_partitions(SimEngine *engine, const guint32 *group, guint n_groups, guint n_parts) {
  guint n = engine->n_entities;
  guint16 *gp = g_new(guint16, MAX(n_groups, 1));
  if (engine->how == SIM_PARTITION_ROUND_ROBIN) {
    for (guint g = 0; g < n_groups; g++)
      gp[g] = (guint16)(g % n_parts);
  } else {
    guint *size = g_new0(guint, MAX(n_groups, 1));
    for (guint i = 0; i < n; i++)
      size[group[i]]++;
    guint64 cum = 0;
    guint part = 0;
    for (guint g = 0; g < n_groups; g++) {
      gp[g] = (guint16)part;
      cum += size[g];
      guint groups_left = n_groups - g - 1, parts_left = n_parts - part - 1;
      /* Cut at about equal sizes, and early enough that every partition gets a group. */
      if (parts_left > 0 && (cum * n_parts >= (guint64)(part + 1) * n || groups_left == parts_left)) part++;
    }
    g_free(size);
  }
  for (guint i = 0; i < n; i++)
    engine->part_of[i] = gp[group[i]];
  g_free(gp);
}

/* ---- Prepare ---- */

static uint64_t engine_peak(const SimEngine *engine) {
  return MAX(engine->peak_base, engine->windowed ? engine->peak_window : engine->parts[0].peak_pending);
}

/* Replaces the partitions by `n_parts` new ones (part_of must be set when n_parts > 1), moving every pending
 * event to its new partition. */
static void engine_relayout(SimEngine *engine, guint n_parts, gboolean windowed) {
  SimTime now = engine_now(engine);
  for (guint i = 0; i < engine->n_parts; i++)
    now = MAX(now, engine->parts[i].ctx.now);
  GArray *all = g_array_new(FALSE, FALSE, sizeof(SimEvent));
  uint64_t events = 0;
  for (guint i = 0; i < engine->n_parts; i++) {
    SimPart *p = &engine->parts[i];
    if (p->heap_mem)
      for (guint64 k = 0; k < p->n; k++) {
        const SimEvent *ev = &p->heap[k];
        if (ev->dst < BATCH_DST) {
          g_array_append_val(all, *ev);
        } else { /* a batch: every event it still holds */
          const Batch *bt = &p->batch[ev->dst - BATCH_DST];
          for (guint32 j = bt->pos; j < bt->n; j++)
            g_array_append_val(all, *batch_ev(bt, j));
        }
      }
    if (p->staged) g_array_append_vals(all, p->staged->data, p->staged->len);
    events += p->events;
  }
  if (engine->mbox)
    for (gsize i = 0; i < (gsize)engine->n_parts * engine->n_parts * 2; i++)
      g_array_append_vals(all, engine->mbox[i].ev, engine->mbox[i].n);
  engine->peak_base = engine_peak(engine);
  engine->events_base += events;
  for (guint i = 0; i < engine->n_parts; i++)
    engine_part_clear(&engine->parts[i]);
  g_aligned_free(engine->parts);
  engine_free_mailboxes(engine);
  g_aligned_free(engine->slots);
  engine->slots = NULL;

  engine->n_parts = n_parts;
  engine->windowed = windowed;
  engine->now = now;
  engine->parts = engine_parts_new(engine, n_parts);
  if (n_parts > 1) {
    engine->mbox = g_aligned_alloc0((gsize)n_parts * n_parts * 2, sizeof(Mailbox), 64);
  }
  engine->slots = g_aligned_alloc0(2 * n_parts, sizeof(Slot), 64);
  for (guint i = 0; i < n_parts; i++) {
    SimPart *p = &engine->parts[i];
    p->n_parts = n_parts;
    p->windowed = windowed;
    p->part_of = n_parts > 1 ? engine->part_of : NULL;
    p->mbox = engine->mbox;
    p->ctx.now = now;
    p->staged = g_array_new(FALSE, FALSE, sizeof(SimEvent));
  }
  for (guint i = 0; i < engine->n_entities; i++)
    engine->parts[engine->part_of ? engine->part_of[i] : 0].n_ents++;
  for (guint i = 0; i < all->len; i++)
    engine_place_event(engine, &g_array_index(all, SimEvent, i));
  g_array_unref(all);
  /* One partition without windows is the sequential engine: its queue is built here, as before. */
  if (!windowed) engine_part_heap_build(&engine->parts[0]);
}

gboolean sim_engine_prepare(SimEngine *engine, GError **error) {
  g_return_val_if_fail(engine != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  guint n = engine->n_entities;
  guint32 *group = g_new(guint32, MAX(n, 1));
  guint n_groups = engine->threads > 0 ? engine_groups(engine, group) : 0;
  SimTime la = SIM_TIME_MAX;
  SimEntityId la_src = SIM_ENTITY_NONE, la_dst = SIM_ENTITY_NONE;
  if (n_groups > 1) {
    la = engine->default_delay;
    for (guint i = 0; i < engine->links->len; i++) {
      const SimLink *l = &g_array_index(engine->links, SimLink, i);
      if (group[l->src] == group[l->dst] || l->min_delay >= la) continue;
      la = l->min_delay;
      la_src = l->src;
      la_dst = l->dst;
    }
    if (la == 0) {
      if (la_src == SIM_ENTITY_NONE)
        g_set_error(
            error, SIM_ENGINE_ERROR, SIM_ENGINE_ERROR_ZERO_LOOKAHEAD,
            "the default delay between groups is 0 ns, so the lookahead would be 0: declare a positive "
            "default delay, or keep the entities together");
      else
        g_set_error(
            error, SIM_ENGINE_ERROR, SIM_ENGINE_ERROR_ZERO_LOOKAHEAD,
            "link entity %u (%s) -> entity %u (%s) has a least delay of 0 ns between two groups, so the "
            "lookahead would be 0: keep the two entities together, or declare a positive delay",
            la_src, engine_entity(engine, la_src)->kind->name, la_dst,
            engine_entity(engine, la_dst)->kind->name);
      g_free(group);
      return FALSE;
    }
  }
  gboolean windowed = n_groups > 1;
  guint n_parts = windowed ? MIN(engine->threads, n_groups) : 1;
  engine->n_groups = n_groups;
  engine->lookahead = la;
  engine->la_src = la_src;
  engine->la_dst = la_dst;
  engine->numa_nodes = engine->threads > 0 ? sim_numa_hw_nodes() : 1;
  g_free(engine->part_of);
  engine->part_of = NULL;
  engine->part_of_len = 0;
  if (windowed) {
    engine->part_of = g_new(guint16, MAX(n, 1));
    engine->part_of_len = n;
    assign_partitions(engine, group, n_groups, n_parts);
  }
  g_free(group);
  /* The sequential layout stays as it is (no copy of the queue) when it already is one. */
  if (windowed || engine->n_parts != 1 || engine->windowed)
    engine_relayout(engine, n_parts, windowed);
  else
    engine->parts[0].n_ents = n;
  engine_numa_assign_workers(engine);
  if (engine->numa_nodes > 1 && n_parts > 1) engine_numa_move_entities(engine);
  engine_numa_place_tables(engine);
  engine->prepared = TRUE;
  return TRUE;
}

guint sim_engine_n_groups(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  return engine->n_groups;
}

guint sim_engine_n_workers(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  return engine->n_parts;
}

guint sim_engine_partition_of(const SimEngine *engine, SimEntityId id) {
  g_return_val_if_fail(engine != NULL && id < engine->n_entities, 0);
  return engine->part_of && id < engine->part_of_len ? engine->part_of[id] : 0;
}
