/* engine_numa.c: the engine's NUMA placement: memory on a worker's node, pinning workers node by node,
 * moving entity records and states to their worker's node, spreading shared tables with weights, and the
 * report of where each placed region is. */
#include "engine.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine-private.h"
#include "numa_hw.h"

G_STATIC_ASSERT(SIM_NUMA_MAX_NODES_ENGINE == SIM_NUMA_MAX_NODES);

/* Memory for a pinned worker on a multi-node machine: a private mapping whose pages the kernel takes from
 * `node` whichever thread touches them first. (First touch by the worker through malloc is not enough:
 * glibc hands a new thread an arena that an earlier thread, on another node, may already have touched.)
 * Best effort: the kernel falls back to other nodes when `node` is full. Free with munmap(). */
void *engine_node_alloc(gsize bytes, int node) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    g_error("sim engine: cannot map %" G_GSIZE_FORMAT " bytes: %s", bytes, g_strerror(errno));
  unsigned long mask[SIM_NUMA_MAX_NODES / (8 * sizeof(unsigned long))] = {0};
  mask[(guint)node / (8 * sizeof(unsigned long))] |= 1UL << ((guint)node % (8 * sizeof(unsigned long)));
  mbind(p, bytes, MPOL_PREFERRED, mask, SIM_NUMA_MAX_NODES + 1, 0);
  return p;
}

static void table_free(gpointer data) {
  SharedTable *t = data;
  g_free(t->name);
  g_free(t);
}

void engine_placements_clear(SimEngine *engine) {
  if (!engine->placements) return;
  for (guint i = 0; i < engine->placements->len; i++)
    g_free(g_array_index(engine->placements, Placement, i).name);
  g_array_set_size(engine->placements, 0);
}

void sim_engine_set_numa_weights(SimEngine *engine, SimNumaWeightsFn fn, void *user) {
  g_return_if_fail(engine != NULL);
  engine->weights_fn = fn;
  engine->weights_user = user;
}

void sim_engine_set_state_bytes(SimEngine *engine, SimEntityId id, gsize bytes) {
  g_return_if_fail(engine != NULL && id < engine->n_entities);
  if (engine->state_bytes_len < engine->n_entities) {
    engine->state_bytes = g_renew(gsize, engine->state_bytes, engine->n_entities);
    memset(engine->state_bytes + engine->state_bytes_len, 0,
           (engine->n_entities - engine->state_bytes_len) * sizeof(gsize));
    engine->state_bytes_len = engine->n_entities;
  }
  engine->state_bytes[id] = bytes;
}

void sim_engine_share_table(SimEngine *engine, const char *name, void *buf, gsize len) {
  g_return_if_fail(engine != NULL && name != NULL && (buf != NULL || len == 0));
  if (!engine->tables) engine->tables = g_ptr_array_new_with_free_func(table_free);
  SharedTable *t = g_new0(SharedTable, 1);
  t->name = g_strdup(name);
  t->buf = buf;
  t->len = len;
  g_ptr_array_add(engine->tables, t);
  engine->prepared = FALSE;
}

/* ---- NUMA ---- */

static gsize page_bytes(void) {
  return (gsize)sysconf(_SC_PAGESIZE);
}

/* Pins workers node by node: worker w gets the node of the w-th CPU this process may use, in node order,
 * and may run on every allowed CPU of that node. */
void engine_numa_assign_workers(SimEngine *engine) {
  for (guint i = 0; i < engine->n_parts; i++)
    engine->parts[i].node = -1;
  if (engine->numa_nodes <= 1 || engine->n_parts < 2 || numa_available() < 0) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  GArray *cpu_node = g_array_new(FALSE, FALSE, sizeof(int));
  struct bitmask *bm = numa_allocate_cpumask();
  for (guint node = 0; node < engine->numa_nodes; node++) {
    if (numa_node_to_cpus((int)node, bm) != 0) continue;
    for (unsigned c = 0; c < bm->size && c < CPU_SETSIZE; c++)
      if (numa_bitmask_isbitset(bm, c) && CPU_ISSET(c, &allowed)) {
        int nd = (int)node;
        g_array_append_val(cpu_node, nd);
      }
  }
  if (cpu_node->len > 0) {
    for (guint w = 0; w < engine->n_parts; w++) {
      SimPart *p = &engine->parts[w];
      p->node = g_array_index(cpu_node, int, w % cpu_node->len);
      CPU_ZERO(&p->pin);
      if (numa_node_to_cpus(p->node, bm) == 0)
        for (unsigned c = 0; c < bm->size && c < CPU_SETSIZE; c++)
          if (numa_bitmask_isbitset(bm, c) && CPU_ISSET(c, &allowed)) CPU_SET(c, &p->pin);
    }
  }
  numa_free_cpumask(bm);
  g_array_unref(cpu_node);
}

static void placement_add(SimEngine *engine, const char *name, const void *buf, gsize len,
                          const double *share) {
  gsize ps = page_bytes();
  uintptr_t lo = (uintptr_t)buf / ps * ps, hi = ((uintptr_t)buf + len + ps - 1) / ps * ps;
  if (len == 0) return;
  Placement pl = {
      .name = g_strdup(name), .buf = (const void *)lo, .len = hi - lo, .n_nodes = engine->numa_nodes};
  for (guint i = 0; i < pl.n_nodes; i++)
    pl.intended[i] = share[i] * (double)pl.len;
  if (!engine->placements) engine->placements = g_array_new(FALSE, FALSE, sizeof(Placement));
  g_array_append_val(engine->placements, pl);
}

/* Moves whole pages to nodes with move_pages(2) (no policy change, no split mappings). `node_of_page` gives
 * each page's node, -1 to leave it. */
static void move_pages_to(void *const *pages, const int *nodes, gsize n) {
  enum { CHUNK = 1024 };
  int status[CHUNK];
  for (gsize i = 0; i < n; i += CHUNK) {
    gsize m = MIN((gsize)CHUNK, n - i);
    /* Best effort: a page that cannot move (EPERM, busy) stays where it is; the report shows it. */
    if (move_pages(0, m, (void **)(pages + i), nodes + i, status, MPOL_MF_MOVE) != 0) return;
  }
}

/* Moves the entity records and declared entity states to their worker's node. */
void engine_numa_move_entities(SimEngine *engine) {
  gsize ps = page_bytes();
  GArray *pages = g_array_new(FALSE, FALSE, sizeof(void *));
  GArray *nodes = g_array_new(FALSE, FALSE, sizeof(int));
  /* Entity records: a page holds ps / 128 consecutive entities; the first one's worker takes it. */
  for (guint c = 0; c < engine->n_chunks; c++) {
    guint per_page = (guint)(ps / sizeof(SimEntity));
    for (guint k = 0; k < ENTITY_CHUNK; k += per_page) {
      SimEntityId id = (c << ENTITY_CHUNK_SHIFT) + k;
      if (id >= engine->n_entities) break;
      void *pg = &engine->chunks[c][k];
      int nd = engine->parts[engine->part_of[id]].node;
      g_array_append_val(pages, pg);
      g_array_append_val(nodes, nd);
    }
  }
  /* Declared states: each whole or partial page goes to the worker of the first entity that reaches it. */
  uintptr_t last_page = 0;
  for (guint i = 0; i < engine->state_bytes_len && i < engine->n_entities; i++) {
    gsize len = engine->state_bytes[i];
    if (len == 0) continue;
    uintptr_t lo = (uintptr_t)engine_entity(engine, i)->state / ps * ps;
    uintptr_t hi = ((uintptr_t)engine_entity(engine, i)->state + len + ps - 1) / ps * ps;
    int nd = engine->parts[engine->part_of[i]].node;
    for (uintptr_t a = lo; a < hi; a += ps) {
      if (a == last_page) continue;
      void *pg = (void *)a;
      g_array_append_val(pages, pg);
      g_array_append_val(nodes, nd);
      last_page = a;
    }
  }
  move_pages_to((void *const *)pages->data, (const int *)nodes->data, pages->len);
  g_array_unref(pages);
  g_array_unref(nodes);
}

/* Spreads the registered tables with the weights for the worker nodes (one memory node: nothing to do). */
void engine_numa_place_tables(SimEngine *engine) {
  if (!engine->tables) return;
  guint n = engine->numa_nodes;
  double w[SIM_NUMA_MAX_NODES] = {0};
  if (n <= 1) {
    w[0] = 1;
  } else {
    guint workers[SIM_ENGINE_MAX_THREADS];
    guint nw = 0;
    for (guint i = 0; i < engine->n_parts; i++)
      if (engine->parts[i].node >= 0) workers[nw++] = (guint)engine->parts[i].node;
    if (nw == 0) { /* one worker, not pinned: the node it runs on now */
      int cpu = sched_getcpu();
      int node = cpu >= 0 ? numa_node_of_cpu(cpu) : 0;
      workers[nw++] = node >= 0 ? (guint)node : 0;
    }
    if (engine->weights_fn) {
      engine->weights_fn(engine->weights_user, workers, nw, w, n);
    } else {
      for (guint i = 0; i < nw; i++)
        w[workers[i]] += 1.0 / nw;
    }
  }
  gsize ps = page_bytes();
  for (guint t = 0; t < engine->tables->len; t++) {
    SharedTable *tb = g_ptr_array_index(engine->tables, t);
    memcpy(tb->share, w, sizeof w);
    if (n <= 1) continue;
    uintptr_t lo = ((uintptr_t)tb->buf + ps - 1) / ps * ps, hi = ((uintptr_t)tb->buf + tb->len) / ps * ps;
    if (hi <= lo) continue;
    g_autoptr(GError) e = NULL;
    /* The table is built already: its pages must move, not just get a policy. */
    if (!sim_numa_move_weighted((void *)lo, hi - lo, w, n, NULL, &e))
      g_warning("sim engine: cannot spread table %s: %s", tb->name, e->message);
  }
}

guint sim_engine_numa_report(SimEngine *engine, SimNumaPlacement *out, guint max) {
  g_return_val_if_fail(engine != NULL && (out != NULL || max == 0), 0);
  engine_placements_clear(engine);
  gsize ps = page_bytes();
  guint n_nodes = MAX(engine->numa_nodes, 1);
  double share[SIM_NUMA_MAX_NODES];
  /* Entity records, per chunk: each page goes to the worker of its first entity. */
  guint per_page = (guint)MAX(ps / sizeof(SimEntity), 1);
  for (guint c = 0; c < engine->n_chunks; c++) {
    memset(share, 0, sizeof share);
    guint pages = 0;
    for (guint k = 0; k < ENTITY_CHUNK; k += per_page) {
      SimEntityId id = (c << ENTITY_CHUNK_SHIFT) + k;
      if (id >= engine->n_entities) break;
      int nd = engine->part_of ? engine->parts[engine->part_of[id]].node : -1;
      share[nd >= 0 ? nd : 0] += 1;
      pages++;
    }
    for (guint i = 0; i < n_nodes; i++)
      share[i] /= MAX(pages, 1);
    g_autofree char *name = g_strdup_printf("entity records %u-%u", c << ENTITY_CHUNK_SHIFT,
                                            MIN((c + 1) << ENTITY_CHUNK_SHIFT, engine->n_entities) - 1);
    placement_add(engine, name, engine->chunks[c], (gsize)pages * per_page * sizeof(SimEntity), share);
  }
  /* What the workers first-touched: their queues and the mailboxes they receive into. */
  for (guint i = 0; i < engine->n_parts; i++) {
    SimPart *p = &engine->parts[i];
    memset(share, 0, sizeof share);
    share[p->node >= 0 ? p->node : 0] = 1;
    g_autofree char *qname = g_strdup_printf("worker %u queue", i);
    if (p->heap_mem)
      placement_add(engine, qname, p->heap_mem, (HEAP_OFFSET + p->cap + HEAP_PAD) * sizeof(SimEvent), share);
    if (!engine->mbox) continue;
    for (guint s = 0; s < engine->n_parts; s++)
      for (guint k = 0; k < 2; k++) {
        Mailbox *m = &engine->mbox[((gsize)i * engine->n_parts + s) * 2 + k];
        if (!m->ev) continue;
        g_autofree char *mname = g_strdup_printf("worker %u mailbox from %u (parity %u)", i, s, k);
        placement_add(engine, mname, m->ev, m->cap * sizeof(SimEvent), share);
      }
  }
  /* Shared tables: the whole pages inside each, with the weights they were spread with. */
  for (guint t = 0; engine->tables && t < engine->tables->len; t++) {
    SharedTable *tb = g_ptr_array_index(engine->tables, t);
    uintptr_t lo = ((uintptr_t)tb->buf + ps - 1) / ps * ps, hi = ((uintptr_t)tb->buf + tb->len) / ps * ps;
    if (hi > lo) placement_add(engine, tb->name, (const void *)lo, hi - lo, tb->share);
  }
  guint n = engine->placements ? engine->placements->len : 0;
  for (guint i = 0; i < n && i < max; i++) {
    const Placement *pl = &g_array_index(engine->placements, Placement, i);
    SimNumaPlacement *o = &out[i];
    memset(o, 0, sizeof *o);
    o->name = pl->name;
    o->bytes = pl->len;
    o->n_nodes = pl->n_nodes;
    for (guint k = 0; k < pl->n_nodes; k++)
      o->intended[k] = pl->intended[k];
    gsize counts[SIM_NUMA_MAX_NODES] = {0}, absent = 0;
    if (sim_numa_count_pages(pl->buf, pl->len, counts, pl->n_nodes, &absent, NULL)) {
      for (guint k = 0; k < pl->n_nodes; k++)
        o->actual[k] = counts[k] * ps;
      o->absent = absent * ps;
    } else {
      o->absent = pl->len;
    }
  }
  return n;
}
