/* engine.c: the engine: 4-ary min-heaps of inline events, the entity table, the sequential run loop, and the
 * partitioned engine (groups, partitions, windows, mailboxes, the barrier, NUMA placement). */
#include "engine.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "numa_hw.h"

G_STATIC_ASSERT(SIM_NUMA_MAX_NODES_ENGINE == SIM_NUMA_MAX_NODES);
G_DEFINE_QUARK(sim - engine - error - quark, sim_engine_error)

/* ---- Time ---- */

/* Rounds half away from zero. Saturates at SIM_TIME_MAX (also for +inf) and at INT64_MIN (also for
 * -inf); negative values are otherwise returned as they are; NaN gives 0. */
SimTime sim_time_from_s(double seconds) {
  if (isnan(seconds)) return 0;
  double ns = seconds * 1e9;
  if (ns >= 0x1.0p63) return SIM_TIME_MAX;
  if (ns <= -0x1.0p63) return INT64_MIN;
  return (SimTime)llround(ns);
}

/* ---- Entities ----
 * Entities live in fixed-size chunks so that their addresses (and so the SimRng pointers handed out by
 * sim_engine_entity_rng(), whose gsl.state points into the record) never move when more are added.
 * One record is two aligned cache lines: handler, state and sequence in the first, the stream in the
 * second. */

#define ENTITY_CHUNK_SHIFT 10
#define ENTITY_CHUNK ((guint)1 << ENTITY_CHUNK_SHIFT)
#define ENTITY_CHUNK_MASK (ENTITY_CHUNK - 1)
#define SEQ_BITS 40
#define SEQ_LIMIT (UINT64_C(1) << SEQ_BITS)

typedef struct {
  _Alignas(128) SimHandlerFn handle; /* copy of kind->handle: one load less per event */
  void *state;
  uint64_t seq; /* events this entity has sent */
  const SimEntityKind *kind;
  SimRng rng;
} SimEntity;

G_STATIC_ASSERT(sizeof(SimEntity) == 128);

/* ---- Partitions ----
 *
 * A partition owns a queue and the entities of its groups; one worker thread runs it. The sequential engine
 * is one partition. A handler's SimCtx is its partition (the context is the first member), so sending needs
 * no pointer chase. */

/* Events one worker sends to another during a window. Receiver-owned: the receiver allocates (first-touches)
 * the buffers and drains them after the barrier; only its one sender appends. Two per pair (by window
 * parity), so a fast sender in the next window never writes into what a slow receiver still drains. */
typedef struct {
  _Alignas(64) SimEvent *ev;
  guint64 n;
  guint64 cap;
  gsize mapped; /* 0: g_new (one node); MAILBOX_IN_ARENA: in its receiver's arena; else its own mapping */
} Mailbox;

#define MAILBOX_IN_ARENA ((gsize)1)

/* What each worker publishes at a barrier; every worker reads them all and takes the same decision. Two
 * sets (by parity) for the same reason as the mailboxes. */
typedef struct {
  _Alignas(64) SimTime min; /* earliest event it holds or sent (SIM_TIME_MAX if none) */
  gboolean any;             /* it holds or sent an event */
  gboolean stop;            /* a handler called sim_ctx_stop() in the window */
  gboolean cancel;          /* it saw the cancel flag */
  uint64_t events;          /* events it processed so far (all runs) */
  uint64_t pending;         /* events in its queue plus those it sent in the window */
  double cpu_s;             /* thread CPU seconds of its last window */
} Slot;

/* A batch (sim_ctx_batch_begin): events of one handler call with a common type, aux and payload, sorted by
 * (time, key). The queue holds one entry for it, a copy of its next event with dst BATCH_DST | slot, so the
 * queue orders it exactly where that event belongs; each time it is handled the next one takes its place.
 * While a block's deliveries are the earliest events this costs a few comparisons per event instead of a
 * sift-down through the whole queue. Only the sequential loop (no windows) keeps batches. */
typedef struct {
  SimEvent *ev;   /* in the order they were added */
  uint64_t *ord;  /* with use_ord: (time - least time) << 24 | index into ev, ascending */
  guint32 n, pos, cap, ord_cap;
  gboolean use_ord; /* else ev itself is in time order */
  gboolean sorted;  /* while filled: the times added so far do not decrease */
  SimTime lo, hi;   /* while filled: the least and the largest time added */
} Batch;

#define BATCH_DST UINT32_C(0x80000000)
G_STATIC_ASSERT(SIM_ENTITY_MAX <= BATCH_DST);
#define BATCH_NONE G_MAXUINT32

struct SimCtx {
  SimEntity *ent; /* the entity handling the current event */
  SimEntityId self;
  SimTime now; /* time of the current (or last processed) event */
};

typedef struct SimPart SimPart;

struct SimPart {
  _Alignas(128) SimCtx ctx; /* first: a handler's ctx is its partition */
  SimEntity **chunks;       /* the engine's chunk table (copied: one load less) */
  guint n_entities;
  void *const *states;      /* the engine's dense copy of every entity's state pointer (for prefetches) */

  /* Heap: heap[0] is the minimum; children of i are 4i+1..4i+4. heap[0] sits 96 bytes into a
   * 128-byte-aligned block, so every group of four children fills exactly two aligned cache lines.
   * Slots from n up to cap + HEAP_PAD hold sentinels (larger than any event), so a child group is
   * always complete and sift-down needs no bounds check inside a group. */
  SimEvent *heap;
  void *heap_mem;
  guint64 n;   /* occupied slots, including a root hole (see root_free) */
  guint64 cap; /* usable slots */
  gsize heap_mapped; /* bytes of heap_mem's own mapping (a pinned worker on a multi-node machine), else 0 */

  /* While a handler runs, the event it handles has been copied out but still occupies heap[0]: the
   * first send of that handler overwrites the root and sifts down once, instead of a pop (sift-down)
   * followed by a push (sift-up). If the handler sends nothing, the root is popped afterwards. */
  gboolean root_free;
  gboolean stop_requested; /* sequential: stop after this event */
  gboolean windowed;       /* sim_ctx_stop() means: at the end of the window */
  gboolean stop_window;

  /* Windows (part_of == NULL: one partition, nothing ever crosses). */
  const guint16 *part_of;
  guint id;
  guint n_parts;
  guint parity;
  SimTime promise;  /* T + L: no event for another partition may be earlier */
  SimTime sent_min; /* earliest event sent to another partition in this window */
  uint64_t sent_n;
  Mailbox *mbox; /* the engine's: [(receiver * n_parts + sender) * 2 + parity] */
  volatile const int *cancel;

  uint64_t events;
  uint64_t peak_pending;

  /* Batches: slots (reused; their arrays only grow), the free ones, the one being filled, the events they
   * hold beyond the one queued for each (counted as pending), and the sort's scratch. */
  Batch *batch;
  guint32 n_batch, batch_cap;
  guint32 *batch_free;
  guint32 n_batch_free;
  guint32 batch_open;   /* BATCH_NONE: none; else the slot sim_ctx_batch_add() fills */
  gboolean batch_direct; /* the open batch is sent event by event (windows) */
  uint16_t batch_type, batch_aux;
  uint64_t batch_payload;
  uint64_t batch_extra;
  uint64_t *sort_tmp;
  guint32 *sort_count;
  guint32 sort_cap, count_cap;

  SimEngine *engine;
  GArray *staged; /* events waiting for the worker to build its queue (first touch) */
  SimStopReason reason;
  guint n_ents;
  int node; /* NUMA node it is pinned to, -1: not pinned */
  cpu_set_t pin;
  void *mbox_arena; /* its mailboxes' first buffers (pinned workers), a mapping of mbox_arena_len bytes */
  gsize mbox_arena_len;
  uint64_t sent_remote;
  double busy_s, wait_s, cpu_s;
  double window_cpu_s;
};

/* A centralised barrier: spin briefly, then sleep on a futex. The last arriver runs a hook while every
 * other worker is parked (the one point where reading all partitions' state is safe). */
typedef struct {
  _Alignas(64) unsigned count;
  _Alignas(64) unsigned gen;
  unsigned sleepers;
  unsigned n;
} Barrier;

typedef struct {
  SimEntityId src, dst;
  SimTime min_delay;
} SimLink;

typedef struct {
  char *name;
  void *buf;
  gsize len;
  double share[SIM_NUMA_MAX_NODES]; /* the weights it was spread with (node 0 alone with one node) */
} SharedTable;

typedef struct {
  char *name;
  const void *buf; /* page-aligned */
  gsize len;       /* whole pages */
  guint n_nodes;
  double intended[SIM_NUMA_MAX_NODES];
} Placement;

struct SimEngine {
  SimPart *parts; /* parts[0] always exists */
  guint n_parts;

  SimEntity **chunks;
  guint n_chunks;
  guint n_entities;
  void **states; /* entity id -> its state, as in its record: the loop prefetches the next handler's state
                  * without first loading the record (one miss instead of two in a row) */
  guint states_cap;
  uint64_t master_seed;

  SimTime stop_time;
  uint64_t max_events;
  volatile const int *cancel;

  SimProgressFn progress_fn;
  void *progress_user;
  gint64 progress_interval_us;
  gint64 progress_last_us;
  gint64 run_t0_us;

  double wall_s;

  /* Declarations. */
  guint32 *uf; /* union-find parents; NULL: every entity is its own group */
  guint uf_len;
  gboolean all_together;
  GArray *links; /* SimLink */
  SimTime default_delay;
  gsize *state_bytes; /* per entity, NULL: none declared */
  guint state_bytes_len;
  GPtrArray *tables; /* SharedTable */
  SimNumaWeightsFn weights_fn;
  void *weights_user;

  /* Layout (sim_engine_prepare). */
  guint threads;
  SimPartitioning how;
  gboolean prepared;
  guint n_groups;
  gboolean windowed;
  SimTime lookahead;
  SimEntityId la_src, la_dst;
  guint16 *part_of;
  guint part_of_len;
  Mailbox *mbox;
  Slot *slots; /* [2 * n_parts] */
  Barrier barrier;
  guint numa_nodes;
  GArray *placements; /* Placement, for the report */

  /* Totals kept when a new layout replaces the partitions. */
  uint64_t events_base;
  uint64_t peak_base;

  /* Window statistics (deterministic: taken at the barriers from the published slots). */
  uint64_t windows;
  uint64_t window_events_max;
  uint64_t window_hist[SIM_ENGINE_HIST_BUCKETS];
  uint64_t events_at_boundary;
  uint64_t peak_window;
  double critical_s;
  gboolean cpu_timing;
  guint rounds; /* barriers passed in the current run */
  SimTime now;  /* windows: time of the last event processed anywhere */
};

#define HEAP_PAD 3
#define HEAP_OFFSET 3 /* slots before heap[0] in heap_mem: puts heap[1] on a 128-byte boundary */
#define HEAP_INITIAL 64
#define HEAP_PREFETCH_MIN 1024 /* slots above ~32 KiB: prefetch below this level is just overhead */
#define PROGRESS_EVERY UINT64_C(65536)
#define MAILBOX_INITIAL 256
#define BARRIER_SPIN_NS 20000 /* spin this long before sleeping: a window often ends within it */

static const SimEvent heap_sentinel = {.time = INT64_MAX, .key = UINT64_MAX, .dst = SIM_ENTITY_NONE};

static inline SimEntity *part_entity(const SimPart *p, SimEntityId id) {
  return &p->chunks[id >> ENTITY_CHUNK_SHIFT][id & ENTITY_CHUNK_MASK];
}

static inline SimEntity *engine_entity(const SimEngine *engine, SimEntityId id) {
  return &engine->chunks[id >> ENTITY_CHUNK_SHIFT][id & ENTITY_CHUNK_MASK];
}

static inline SimTime time_add_sat(SimTime a, SimTime b) {
  SimTime t;
  if (__builtin_add_overflow(a, b, &t)) t = SIM_TIME_MAX;
  return t;
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the calling thread: unlike wall time, it does not grow while other work holds the core. */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Memory for a pinned worker on a multi-node machine: a private mapping whose pages the kernel takes from
 * `node` whichever thread touches them first. (First touch by the worker through malloc is not enough:
 * glibc hands a new thread an arena that an earlier thread, on another node, may already have touched.)
 * Best effort: the kernel falls back to other nodes when `node` is full. Free with munmap(). */
static void *node_alloc(gsize bytes, int node) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    g_error("sim engine: cannot map %" G_GSIZE_FORMAT " bytes: %s", bytes, g_strerror(errno));
  unsigned long mask[SIM_NUMA_MAX_NODES / (8 * sizeof(unsigned long))] = {0};
  mask[(guint)node / (8 * sizeof(unsigned long))] |= 1UL << ((guint)node % (8 * sizeof(unsigned long)));
  mbind(p, bytes, MPOL_PREFERRED, mask, SIM_NUMA_MAX_NODES + 1, 0);
  return p;
}

static gsize page_round(gsize bytes) {
  gsize ps = (gsize)sysconf(_SC_PAGESIZE);
  return (bytes + ps - 1) / ps * ps;
}

/* ---- Heap ---- */

/* (time, key) order as one unsigned 128-bit compare (time biased so negative times sort first): the
 * compiler makes it branch-free (cmp/sbb), which beats a time-then-key branch by ~15% when the heap is
 * in cache; the deep levels of large heaps get prefetches in heap_sift_down() instead of relying on
 * branch speculation to start their loads early. */
__extension__ typedef unsigned __int128 EvOrd;

static inline EvOrd ev_ord(const SimEvent *a) {
  return ((EvOrd)((uint64_t)a->time ^ (UINT64_C(1) << 63)) << 64) | a->key;
}

static inline gboolean ev_less(const SimEvent *a, const SimEvent *b) { return ev_ord(a) < ev_ord(b); }

/* Also the first touch of a worker's queue: every slot is written here, by the thread that calls it. */
static void heap_alloc(SimPart *p, guint64 cap) {
  gsize slots = HEAP_OFFSET + cap + HEAP_PAD;
  SimEvent *mem;
  gsize mapped = 0;
  if (p->node >= 0) {
    mapped = page_round(slots * sizeof(SimEvent));
    mem = node_alloc(mapped, p->node);
  } else {
    mem = g_aligned_alloc(slots, sizeof(SimEvent), 128);
  }
  SimEvent *heap = mem + HEAP_OFFSET;
  if (p->n) memcpy(heap, p->heap, p->n * sizeof(SimEvent));
  for (guint64 i = p->n; i < cap + HEAP_PAD; i++)
    heap[i] = heap_sentinel;
  if (p->heap_mapped)
    munmap(p->heap_mem, p->heap_mapped);
  else
    g_aligned_free(p->heap_mem);
  p->heap_mem = mem;
  p->heap_mapped = mapped;
  p->heap = heap;
  p->cap = cap;
}

/* Moves the hole at `i` down to where `ev` belongs and stores it there. */
G_ALWAYS_INLINE static inline void heap_sift_down(SimEvent *heap, guint64 n, guint64 i, const SimEvent *ev) {
  for (;;) {
    guint64 c = 4 * i + 1;
    if (c >= n) break;
    guint64 g = 4 * c + 1; /* first grandchild */
    if (g >= HEAP_PREFETCH_MIN && g + 15 < n) {
      /* Out of the caches: start loading all four grandchild groups (8 lines) now, while this level
       * is compared; the one the hole moves into is then (nearly) ready. Measured: +25% PHOLD at
       * 250 k pending, both lines of each group needed. */
      for (guint64 k = 0; k < 16; k += 4) {
        __builtin_prefetch(&heap[g + k]);
        __builtin_prefetch(&heap[g + k + 2]);
      }
    }
    guint64 m = ev_less(&heap[c + 1], &heap[c]) ? c + 1 : c;
    guint64 m2 = ev_less(&heap[c + 3], &heap[c + 2]) ? c + 3 : c + 2;
    if (ev_less(&heap[m2], &heap[m])) m = m2;
    if (!ev_less(&heap[m], ev)) break;
    heap[i] = heap[m];
    i = m;
  }
  heap[i] = *ev;
}

G_GNUC_NO_INLINE static void heap_grow(SimPart *p) {
  heap_alloc(p, p->cap * 2);
}

static inline void heap_push(SimPart *p, const SimEvent *ev) {
  if (G_UNLIKELY(p->n == p->cap)) heap_grow(p);
  SimEvent *heap = p->heap;
  guint64 i = p->n++;
  while (i > 0) {
    guint64 q = (i - 1) >> 2;
    if (!ev_less(ev, &heap[q])) break;
    heap[i] = heap[q];
    i = q;
  }
  heap[i] = *ev;
  if (p->n + p->batch_extra > p->peak_pending) p->peak_pending = p->n + p->batch_extra;
}

static inline void heap_pop_root(SimPart *p) {
  SimEvent *heap = p->heap;
  guint64 n = --p->n;
  SimEvent last = heap[n];
  heap[n] = heap_sentinel;
  if (n > 0) heap_sift_down(heap, n, 0, &last);
}

static inline void part_insert(SimPart *p, const SimEvent *ev) {
  if (p->root_free) {
    p->root_free = FALSE;
    heap_sift_down(p->heap, p->n, 0, ev);
  } else {
    heap_push(p, ev);
  }
}

static inline uint64_t entity_next_key(SimEntity *ent, SimEntityId src) {
  uint64_t seq = ent->seq++;
  if (G_UNLIKELY(seq >= SEQ_LIMIT)) g_error("sim engine: entity %u sent more than 2^40 events", src);
  return ((uint64_t)src << SEQ_BITS) | seq;
}

/* Builds a worker's queue from its staged events, in the worker's thread (first touch). */
static void part_heap_build(SimPart *p) {
  guint64 need = p->staged ? p->staged->len : 0;
  guint64 cap = HEAP_INITIAL;
  while (cap < need + need / 2)
    cap *= 2;
  p->n = 0;
  heap_alloc(p, cap);
  for (guint64 i = 0; i < need; i++)
    heap_push(p, &g_array_index(p->staged, SimEvent, i));
  if (p->staged) g_array_set_size(p->staged, 0);
}

/* ---- Public API: setup ---- */

static void part_init(SimPart *p, SimEngine *engine, guint id) {
  memset(p, 0, sizeof *p);
  p->ctx.self = SIM_ENTITY_NONE;
  p->batch_open = BATCH_NONE;
  p->engine = engine;
  p->id = id;
  p->n_parts = 1;
  p->chunks = engine->chunks;
  p->n_entities = engine->n_entities;
  p->states = (void *const *)engine->states;
  p->cancel = engine->cancel;
  p->promise = SIM_TIME_MAX;
  p->sent_min = SIM_TIME_MAX;
  p->node = -1;
}

static void part_clear(SimPart *p) {
  if (p->heap_mapped)
    munmap(p->heap_mem, p->heap_mapped);
  else
    g_aligned_free(p->heap_mem);
  if (p->mbox_arena) munmap(p->mbox_arena, p->mbox_arena_len);
  if (p->staged) g_array_unref(p->staged);
  for (guint32 i = 0; i < p->n_batch; i++) {
    g_free(p->batch[i].ev);
    g_free(p->batch[i].ord);
  }
  g_free(p->batch);
  g_free(p->batch_free);
  g_free(p->sort_tmp);
  g_free(p->sort_count);
}

static SimPart *parts_new(SimEngine *engine, guint n) {
  SimPart *parts = g_aligned_alloc0(n, sizeof(SimPart), 128);
  for (guint i = 0; i < n; i++)
    part_init(&parts[i], engine, i);
  return parts;
}

SimEngine *sim_engine_new(uint64_t master_seed) {
  SimEngine *engine = g_new0(SimEngine, 1);
  engine->master_seed = master_seed;
  engine->stop_time = SIM_TIME_MAX;
  engine->max_events = UINT64_MAX;
  engine->default_delay = SIM_TIME_MAX;
  engine->lookahead = SIM_TIME_MAX;
  engine->la_src = engine->la_dst = SIM_ENTITY_NONE;
  engine->links = g_array_new(FALSE, FALSE, sizeof(SimLink));
  engine->numa_nodes = 1;
  engine->n_parts = 1;
  engine->parts = parts_new(engine, 1);
  heap_alloc(&engine->parts[0], HEAP_INITIAL);
  return engine;
}

static void free_mailboxes(SimEngine *engine) {
  if (!engine->mbox) return;
  for (gsize i = 0; i < (gsize)engine->n_parts * engine->n_parts * 2; i++) {
    Mailbox *m = &engine->mbox[i];
    if (m->mapped == 0)
      g_free(m->ev);
    else if (m->mapped != MAILBOX_IN_ARENA)
      munmap(m->ev, m->mapped);
  }
  g_aligned_free(engine->mbox);
  engine->mbox = NULL;
}

static void table_free(gpointer data) {
  SharedTable *t = data;
  g_free(t->name);
  g_free(t);
}

static void placements_clear(SimEngine *engine) {
  if (!engine->placements) return;
  for (guint i = 0; i < engine->placements->len; i++)
    g_free(g_array_index(engine->placements, Placement, i).name);
  g_array_set_size(engine->placements, 0);
}

void sim_engine_free(SimEngine *engine) {
  if (!engine) return;
  for (guint i = 0; i < engine->n_parts; i++)
    part_clear(&engine->parts[i]);
  g_aligned_free(engine->parts);
  free_mailboxes(engine);
  g_aligned_free(engine->slots);
  g_free(engine->part_of);
  for (guint i = 0; i < engine->n_chunks; i++) g_aligned_free(engine->chunks[i]);
  g_free(engine->chunks);
  g_free(engine->states);
  g_free(engine->uf);
  g_free(engine->state_bytes);
  g_array_unref(engine->links);
  if (engine->tables) g_ptr_array_unref(engine->tables);
  placements_clear(engine);
  if (engine->placements) g_array_unref(engine->placements);
  g_free(engine);
}

SimEntityId sim_engine_add_entity(SimEngine *engine, const SimEntityKind *kind, void *state) {
  g_return_val_if_fail(engine != NULL, SIM_ENTITY_NONE);
  g_return_val_if_fail(kind != NULL && kind->handle != NULL, SIM_ENTITY_NONE);
  g_return_val_if_fail(engine->n_entities < SIM_ENTITY_MAX, SIM_ENTITY_NONE);
  SimEntityId id = engine->n_entities;
  guint chunk = id >> ENTITY_CHUNK_SHIFT;
  if (chunk == engine->n_chunks) {
    engine->chunks = g_renew(SimEntity *, engine->chunks, engine->n_chunks + 1);
    /* Page-aligned (a chunk is 32 pages), so its pages can move to the node of their entities' worker. */
    engine->chunks[chunk] = g_aligned_alloc(ENTITY_CHUNK, sizeof(SimEntity), 4096);
    engine->n_chunks++;
  }
  SimEntity *ent = engine_entity(engine, id);
  memset(ent, 0, sizeof *ent);
  ent->handle = kind->handle;
  ent->state = state;
  ent->kind = kind;
  sim_rng_init(&ent->rng, engine->master_seed, id);
  if (id == engine->states_cap) {
    engine->states_cap = MAX(2 * engine->states_cap, 64);
    engine->states = g_renew(void *, engine->states, engine->states_cap);
  }
  engine->states[id] = state;
  engine->n_entities++;
  for (guint i = 0; i < engine->n_parts; i++) {
    engine->parts[i].chunks = engine->chunks;
    engine->parts[i].n_entities = engine->n_entities;
    engine->parts[i].states = (void *const *)engine->states;
  }
  engine->prepared = FALSE;
  return id;
}

guint sim_engine_n_entities(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  return engine->n_entities;
}

SimRng *sim_engine_entity_rng(SimEngine *engine, SimEntityId id) {
  g_return_val_if_fail(engine != NULL && id < engine->n_entities, NULL);
  return &engine_entity(engine, id)->rng;
}

static SimTime engine_now(const SimEngine *engine) {
  return engine->windowed ? engine->now : engine->parts[0].ctx.now;
}

/* Puts an event into its destination's partition from outside any handler (no worker runs). */
static void engine_place_event(SimEngine *engine, const SimEvent *ev) {
  /* An entity added since the last prepare has no partition yet: partition 0 holds its events until the
   * next prepare moves every pending event to its place. */
  guint part = engine->part_of && ev->dst < engine->part_of_len ? engine->part_of[ev->dst] : 0;
  SimPart *p = &engine->parts[part];
  if (!p->heap_mem) {
    if (!p->staged) p->staged = g_array_new(FALSE, FALSE, sizeof(SimEvent));
    g_array_append_val(p->staged, *ev);
  } else {
    heap_push(p, ev);
  }
}

/* `time` must not lie before the last processed event (the engine never goes back in time). */
void sim_engine_schedule(SimEngine *engine, SimEntityId src, SimEntityId dst, SimTime time, uint16_t type,
                         uint16_t aux, uint64_t payload) {
  g_return_if_fail(engine != NULL);
  g_return_if_fail(src < engine->n_entities && dst < engine->n_entities);
  g_return_if_fail(time >= engine_now(engine));
  SimEvent ev = {.time = time,
                 .key = entity_next_key(engine_entity(engine, src), src),
                 .dst = dst,
                 .type = type,
                 .aux = aux,
                 .payload = payload};
  engine_place_event(engine, &ev);
}

void sim_engine_set_stop_time(SimEngine *engine, SimTime stop_time) {
  g_return_if_fail(engine != NULL);
  engine->stop_time = stop_time;
}

void sim_engine_set_max_events(SimEngine *engine, uint64_t max_events) {
  g_return_if_fail(engine != NULL);
  engine->max_events = max_events;
}

void sim_engine_set_cancel_flag(SimEngine *engine, volatile const int *cancel) {
  g_return_if_fail(engine != NULL);
  engine->cancel = cancel;
  for (guint i = 0; i < engine->n_parts; i++)
    engine->parts[i].cancel = cancel;
}

void sim_engine_set_progress(SimEngine *engine, SimProgressFn fn, void *user, double interval_s) {
  g_return_if_fail(engine != NULL);
  g_return_if_fail(interval_s >= 0);
  engine->progress_fn = fn;
  engine->progress_user = user;
  engine->progress_interval_us = interval_s >= 1e9 ? G_MAXINT64 : (gint64)(interval_s * 1e6);
}

void sim_engine_get_stats(const SimEngine *engine, SimEngineStats *stats) {
  g_return_if_fail(engine != NULL && stats != NULL);
  uint64_t events = engine->events_base;
  for (guint i = 0; i < engine->n_parts; i++)
    events += engine->parts[i].events;
  stats->events = events;
  stats->peak_pending =
      MAX(engine->peak_base, engine->windowed ? engine->peak_window : engine->parts[0].peak_pending);
  stats->now = engine_now(engine);
  stats->wall_s = engine->wall_s;
}

guint64 sim_engine_pending(const SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, 0);
  guint64 n = 0;
  for (guint i = 0; i < engine->n_parts; i++) {
    const SimPart *p = &engine->parts[i];
    n += p->n - (p->root_free ? 1 : 0) + (p->staged ? p->staged->len : 0) + p->batch_extra;
  }
  return n;
}

/* ---- Batches ---- */

/* Event i (in time order) of a batch. */
static inline const SimEvent *batch_ev(const Batch *bt, guint32 i) {
  return bt->use_ord ? &bt->ev[bt->ord[i] & 0xFFFFFF] : &bt->ev[i];
}

/* After batch `slot`'s event was handled: its next event takes its place in the queue (in the root's place if
 * the handler sent nothing, where it most often stays), or the slot is free again. */
static void batch_advance(SimPart *p, guint32 slot) {
  Batch *bt = &p->batch[slot];
  if (bt->pos < bt->n) {
    SimEvent next = *batch_ev(bt, bt->pos);
    next.dst = BATCH_DST | slot;
    p->batch_extra--;
    part_insert(p, &next);
  } else {
    bt->n = bt->pos = 0;
    p->batch_free[p->n_batch_free++] = slot;
  }
}

static int ev_cmp(const void *a, const void *b) {
  EvOrd x = ev_ord(a), y = ev_ord(b);
  return x < y ? -1 : x > y;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Orders a batch's events by (time, key). Keys grow in the order they were added, so this is a stable sort by
 * time: the keys (time - least time) << 24 | index go to about n buckets by their top bits (a counting sort,
 * which keeps the order of the index within a bucket), then one insertion sort over them all puts each bucket
 * in order (a key never leaves its bucket's range), into bt->ord; if that takes more than a few moves per key
 * (crowded buckets), qsort() finishes instead. A block's deliveries (spread over seconds) cost about 45
 * instructions per event this way, where an 8-bit LSD radix sort took 85. When the span or the count does not
 * fit that packing (more than 18 minutes between the first and the last), qsort() of the events themselves;
 * nothing when they were added in order. */
static void batch_sort(SimPart *p, Batch *bt) {
  guint32 n = bt->n;
  SimEvent *ev = bt->ev;
  SimTime lo = bt->lo, hi = bt->hi;
  bt->use_ord = FALSE;
  if (bt->sorted) return;
  uint64_t span = (uint64_t)hi - (uint64_t)lo;
  if (span >= (UINT64_C(1) << 40) || n >= (UINT32_C(1) << 24)) {
    qsort(ev, n, sizeof *ev, ev_cmp);
    return;
  }
  guint lg = 4;
  while ((UINT32_C(1) << lg) < n)
    lg++;
  guint32 nb = UINT32_C(1) << lg;
  guint bits = (guint)(64 - __builtin_clzll(span));
  guint sh = bits > lg ? bits - lg : 0; /* span >> sh < nb */
  if (n > p->sort_cap || nb + 1 > p->count_cap) { /* grows like the queue, then stays */
    p->sort_cap = MAX(n, 2 * p->sort_cap);
    p->sort_tmp = g_renew(uint64_t, p->sort_tmp, p->sort_cap);
    p->count_cap = MAX(nb + 1, 2 * p->count_cap);
    p->sort_count = g_renew(guint32, p->sort_count, p->count_cap);
  }
  if (bt->ord_cap < n) {
    bt->ord_cap = bt->cap;
    bt->ord = g_renew(uint64_t, bt->ord, bt->ord_cap);
  }
  bt->use_ord = TRUE;
  uint64_t *key = p->sort_tmp, *out = bt->ord;
  guint32 *count = p->sort_count;
  memset(count, 0, (nb + 1) * sizeof *count);
  for (guint32 i = 0; i < n; i++) {
    uint64_t t = (uint64_t)(ev[i].time - lo);
    key[i] = t << 24 | i;
    count[(t >> sh) + 1]++;
  }
  for (guint32 k = 1; k <= nb; k++)
    count[k] += count[k - 1]; /* count[k]: where bucket k starts */
  for (guint32 i = 0; i < n; i++)
    out[count[(key[i] >> 24) >> sh]++] = key[i]; /* now count[k]: where bucket k ends */
  uint64_t budget = 8 * (uint64_t)n; /* moves before giving up on insertion */
  for (guint32 i = 1; i < n; i++) {
    uint64_t x = out[i];
    guint32 j = i;
    for (; j > 0 && out[j - 1] > x; j--)
      out[j] = out[j - 1];
    out[j] = x;
    if (G_UNLIKELY(i - j > budget)) {
      qsort(out, n, sizeof *out, u64_cmp);
      return;
    }
    budget -= i - j;
  }
}

/* ---- The sequential loop (one partition, or one window of one partition) ---- */

/* Processes events with time < `bound` until a stop condition holds or `limit` events have been processed
 * in total (then it returns SIM_STOP_EVENTS; the caller tells the budget from a progress checkpoint).
 * Reaching `bound` returns SIM_STOP_TIME. No allocation, formatting or I/O in here, and no call but the
 * handler (and heap growth, which is amortised). An event at SIM_TIME_MAX is never processed: with the
 * default stop time it means "never". */
static SimStopReason part_run_until(SimPart *p, uint64_t limit, SimTime bound) {
  volatile const int *cancel = p->cancel;
  uint64_t events = p->events;
  SimStopReason reason;
  for (;;) {
    if (G_UNLIKELY(p->n == 0)) {
      reason = SIM_STOP_EMPTY;
      break;
    }
    const SimEvent *top = &p->heap[0];
    if (G_UNLIKELY(top->time >= bound)) {
      reason = SIM_STOP_TIME;
      break;
    }
    if (G_UNLIKELY(events >= limit)) {
      reason = SIM_STOP_EVENTS;
      break;
    }
    if (cancel && G_UNLIKELY(*cancel)) {
      reason = SIM_STOP_CANCELLED;
      break;
    }
    SimEvent ev = *top;
    guint32 bslot = BATCH_NONE;
    if (G_UNLIKELY(ev.dst >= BATCH_DST)) { /* a batch: its next event (top is never a sentinel here) */
      bslot = ev.dst - BATCH_DST;
      Batch *bt = &p->batch[bslot];
      ev = *batch_ev(bt, bt->pos++);
      if (bt->pos < bt->n) { /* most likely the next event: its entity record and state */
        SimEntityId nd = batch_ev(bt, bt->pos)->dst;
        __builtin_prefetch(part_entity(p, nd));
        __builtin_prefetch(p->states[nd]);
      }
    }
    SimEntity *ent = part_entity(p, ev.dst);
    if (bslot == BATCH_NONE) {
      /* The next event is most likely the smallest child of the root: fetch its entity record while
       * this handler runs (at large entity counts that record is a cache miss). */
      const SimEvent *h = p->heap;
      const SimEvent *a = ev_less(&h[2], &h[1]) ? &h[2] : &h[1];
      const SimEvent *b = ev_less(&h[4], &h[3]) ? &h[4] : &h[3];
      const SimEvent *next = ev_less(b, a) ? b : a;
      if (next->dst < SIM_ENTITY_MAX) { /* not a sentinel or a batch */
        const SimEntity *ne = part_entity(p, next->dst);
        __builtin_prefetch(ne);
        __builtin_prefetch((const char *)ne + 64);
        __builtin_prefetch(p->states[next->dst]); /* the first line of its state */
      }
    }
    p->root_free = TRUE;
    p->ctx.ent = ent;
    p->ctx.self = ev.dst;
    p->ctx.now = ev.time;
    ent->handle(&p->ctx, ent->state, &ev);
    events++;
    if (G_UNLIKELY(bslot != BATCH_NONE)) {
      /* The batch's next events, as long as each comes before everything else queued (the least of the
       * root's children: the queue does not change while handlers send nothing) and nothing stops the
       * loop: each is then what the queue would give next, without a queue operation. */
      if (p->root_free && !p->stop_requested) {
        const SimEvent *h = p->heap;
        const SimEvent *a = ev_less(&h[2], &h[1]) ? &h[2] : &h[1];
        const SimEvent *b = ev_less(&h[4], &h[3]) ? &h[4] : &h[3];
        const EvOrd lim = ev_ord(ev_less(b, a) ? b : a);
        for (;;) {
          const Batch *bt = &p->batch[bslot]; /* again: a handler may have added a slot */
          if (bt->pos == bt->n) break;
          const SimEvent *nx = batch_ev(bt, bt->pos);
          if (ev_ord(nx) >= lim || nx->time >= bound || events >= limit || (cancel && *cancel)) break;
          ev = *nx;
          p->batch[bslot].pos++;
          p->batch_extra--; /* as batch_advance() would, before the queue handed it out */
          ent = part_entity(p, ev.dst);
          p->ctx.ent = ent;
          p->ctx.self = ev.dst;
          p->ctx.now = ev.time;
          ent->handle(&p->ctx, ent->state, &ev);
          events++;
          if (!p->root_free || p->stop_requested) break;
        }
      }
      batch_advance(p, bslot);
    }
    if (p->root_free) {
      p->root_free = FALSE;
      heap_pop_root(p);
    }
    if (G_UNLIKELY(p->stop_requested)) {
      reason = SIM_STOP_REQUESTED;
      break;
    }
  }
  p->events = events;
  p->ctx.ent = NULL;
  p->ctx.self = SIM_ENTITY_NONE;
  return reason;
}

static SimStopReason engine_run_sequential(SimEngine *engine, gint64 t0_us) {
  SimPart *p = &engine->parts[0];
  if (!p->heap_mem) part_heap_build(p);
  p->stop_requested = FALSE;
  SimStopReason reason;
  for (;;) {
    uint64_t limit = engine->max_events;
    if (engine->progress_fn) {
      uint64_t checkpoint = (p->events | (PROGRESS_EVERY - 1)) + 1;
      if (checkpoint < limit) limit = checkpoint;
    }
    double t1 = mono_s();
    reason = part_run_until(p, limit, engine->stop_time);
    p->busy_s += mono_s() - t1;
    if (reason != SIM_STOP_EVENTS || p->events >= engine->max_events) break;
    /* A progress checkpoint. */
    gint64 now_us = g_get_monotonic_time();
    if (now_us - engine->progress_last_us >= engine->progress_interval_us) {
      engine->progress_last_us = now_us;
      SimEngineStats stats;
      sim_engine_get_stats(engine, &stats);
      stats.wall_s += (double)(now_us - t0_us) * 1e-6;
      engine->progress_fn(engine->progress_user, &stats);
    }
  }
  return reason;
}

/* ---- The barrier ---- */

static void futex_wait(unsigned *addr, unsigned val) {
  syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(unsigned *addr) {
  syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

typedef void (*BarrierHook)(SimPart *last);

static void barrier_wait(Barrier *b, BarrierHook hook, SimPart *self) {
  unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
    /* Last: everyone else has published and waits on `gen`; nobody touches `count` until it changes. */
    __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    if (hook) hook(self);
    __atomic_store_n(&b->gen, gen + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&b->sleepers, __ATOMIC_SEQ_CST)) futex_wake_all(&b->gen);
    return;
  }
  double until = mono_s() + BARRIER_SPIN_NS * 1e-9;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) != gen) return;
    cpu_relax();
    if ((i & 63) == 0 && mono_s() > until) break;
  }
  /* Sleep. The releaser stores gen then reads sleepers; we add to sleepers then read gen (both sequentially
   * consistent): one of us sees the other. */
  __atomic_add_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&b->gen, __ATOMIC_SEQ_CST) == gen)
    futex_wait(&b->gen, gen);
  __atomic_sub_fetch(&b->sleepers, 1, __ATOMIC_SEQ_CST);
}

/* ---- Windows ---- */

static void lookahead_violation(const SimPart *p, const SimEvent *ev) {
  const SimEngine *e = p->engine;
  SimEntityId src = p->ctx.self;
  g_error("sim engine: entity %u (%s) sent an event to entity %u (%s) in another partition %" G_GINT64_FORMAT
          " ns ahead, less than the lookahead of %" G_GINT64_FORMAT
          " ns: declare the link's least delay (sim_engine_declare_link) or keep the two together",
          src, engine_entity(e, src)->kind->name, ev->dst, engine_entity(e, ev->dst)->kind->name,
          ev->time - p->ctx.now, e->lookahead);
}

G_GNUC_NO_INLINE static void part_send_remote(SimPart *p, guint dp, const SimEvent *ev) {
  if (G_UNLIKELY(ev->time < p->promise)) lookahead_violation(p, ev);
  Mailbox *m = &p->mbox[((gsize)dp * p->n_parts + p->id) * 2 + p->parity];
  if (G_UNLIKELY(m->n == m->cap)) {
    guint64 cap = MAX(m->cap * 2, MAILBOX_INITIAL);
    int node = p->engine->parts[dp].node;
    if (m->mapped == 0 && node < 0) {
      m->ev = g_renew(SimEvent, m->ev, cap);
    } else { /* a pinned receiver: the new buffer on its node too */
      gsize bytes = page_round(cap * sizeof(SimEvent));
      SimEvent *buf = node_alloc(bytes, node);
      memcpy(buf, m->ev, m->n * sizeof(SimEvent));
      if (m->mapped != MAILBOX_IN_ARENA) munmap(m->ev, m->mapped);
      m->ev = buf;
      m->mapped = bytes;
    }
    m->cap = cap;
  }
  m->ev[m->n++] = *ev;
  if (ev->time < p->sent_min) p->sent_min = ev->time;
  p->sent_n++;
  p->sent_remote++;
}

static void part_drain(SimPart *p) {
  for (guint s = 0; s < p->n_parts; s++) {
    if (s == p->id) continue;
    Mailbox *m = &p->mbox[((gsize)p->id * p->n_parts + s) * 2 + p->parity];
    for (guint64 i = 0; i < m->n; i++)
      heap_push(p, &m->ev[i]);
    m->n = 0;
  }
}

/* What all workers decide from the published slots; *t receives the global minimum. */
static SimStopReason windows_decide(const SimEngine *e, const Slot *slots, SimTime *t, gboolean *go_on) {
  gboolean any = FALSE, stop = FALSE, cancel = FALSE;
  SimTime min = SIM_TIME_MAX;
  uint64_t events = e->events_base;
  for (guint i = 0; i < e->n_parts; i++) {
    any |= slots[i].any;
    stop |= slots[i].stop;
    cancel |= slots[i].cancel;
    min = MIN(min, slots[i].min);
    events += slots[i].events;
  }
  *t = min;
  *go_on = FALSE;
  if (cancel) return SIM_STOP_CANCELLED;
  if (stop) return SIM_STOP_REQUESTED;
  if (!any) return SIM_STOP_EMPTY;
  if (min >= e->stop_time) return SIM_STOP_TIME;
  if (events >= e->max_events) return SIM_STOP_EVENTS;
  *go_on = TRUE;
  return SIM_STOP_TIME;
}

/* Runs at each barrier in the last worker to arrive, everyone else parked: window statistics and progress. */
static void windows_hook(SimPart *last) {
  SimEngine *e = last->engine;
  const Slot *slots = &e->slots[(gsize)last->parity * e->n_parts];
  uint64_t events = e->events_base, pending = 0;
  for (guint i = 0; i < e->n_parts; i++) {
    events += slots[i].events;
    pending += slots[i].pending;
  }
  e->peak_window = MAX(e->peak_window, pending);
  if (e->rounds++ > 0) {
    double cpu = 0;
    for (guint i = 0; i < e->n_parts; i++)
      cpu = MAX(cpu, slots[i].cpu_s);
    e->critical_s += cpu;
    uint64_t w = events - e->events_at_boundary;
    e->windows++;
    e->window_events_max = MAX(e->window_events_max, w);
    guint b = w == 0 ? 0 : MIN((guint)(64 - __builtin_clzll(w)), SIM_ENGINE_HIST_BUCKETS - 1);
    e->window_hist[b]++;
  }
  e->events_at_boundary = events;
  if (e->progress_fn && (e->rounds & 15) == 0) {
    gint64 now_us = g_get_monotonic_time();
    if (now_us - e->progress_last_us >= e->progress_interval_us) {
      e->progress_last_us = now_us;
      SimTime now = INT64_MIN;
      for (guint i = 0; i < e->n_parts; i++)
        now = MAX(now, e->parts[i].ctx.now);
      SimEngineStats st = {.events = events,
                           .peak_pending = e->peak_window,
                           .now = now,
                           .wall_s = e->wall_s + (double)(now_us - e->run_t0_us) * 1e-6};
      e->progress_fn(e->progress_user, &st);
    }
  }
}

static void part_pin(SimPart *p) {
  if (p->node >= 0) pthread_setaffinity_np(pthread_self(), sizeof p->pin, &p->pin);
}

/* Allocates the mailboxes this worker receives into: first touched by the receiver, and on a multi-node
 * machine in one mapping on its node. */
static void part_mailboxes_init(SimPart *p) {
  if (p->node >= 0 && !p->mbox_arena) {
    p->mbox_arena_len = page_round((gsize)2 * (p->n_parts - 1) * MAILBOX_INITIAL * sizeof(SimEvent));
    p->mbox_arena = node_alloc(p->mbox_arena_len, p->node);
  }
  gsize next = 0;
  for (guint s = 0; s < p->n_parts; s++) {
    if (s == p->id) continue;
    for (guint k = 0; k < 2; k++) {
      Mailbox *m = &p->mbox[((gsize)p->id * p->n_parts + s) * 2 + k];
      if (m->ev) continue;
      m->cap = MAILBOX_INITIAL;
      if (p->mbox_arena) {
        m->ev = (SimEvent *)p->mbox_arena + next;
        m->mapped = MAILBOX_IN_ARENA;
      } else {
        m->ev = g_new(SimEvent, m->cap);
      }
      next += MAILBOX_INITIAL;
      memset(m->ev, 0, m->cap * sizeof(SimEvent));
    }
  }
}

/* One worker's whole run: publish, barrier, decide, merge, process a window; again. */
static SimStopReason part_work(SimPart *p) {
  SimEngine *e = p->engine;
  part_pin(p);
  if (!p->heap_mem) part_heap_build(p);
  if (p->n_parts > 1) part_mailboxes_init(p);
  p->parity = 0;
  p->stop_window = FALSE;
  p->sent_min = SIM_TIME_MAX;
  p->sent_n = 0;
  gboolean cancelled = FALSE;
  const gboolean cpu_timing = e->cpu_timing;
  SimStopReason reason;
  for (;;) {
    Slot *slot = &e->slots[(gsize)p->parity * e->n_parts + p->id];
    SimTime top = p->n > 0 ? p->heap[0].time : SIM_TIME_MAX;
    slot->min = MIN(top, p->sent_min);
    slot->any = p->n > 0 || p->sent_n > 0;
    slot->stop = p->stop_window;
    slot->cancel = cancelled;
    slot->events = p->events;
    slot->pending = p->n + p->sent_n;
    slot->cpu_s = p->window_cpu_s;
    double t0 = mono_s();
    barrier_wait(&e->barrier, windows_hook, p);
    p->wait_s += mono_s() - t0;
    SimTime t;
    gboolean go_on;
    reason = windows_decide(e, &e->slots[(gsize)p->parity * e->n_parts], &t, &go_on);
    part_drain(p);
    if (!go_on) break;
    p->parity ^= 1;
    p->sent_min = SIM_TIME_MAX;
    p->sent_n = 0;
    p->promise = time_add_sat(t, e->lookahead);
    double t1 = mono_s(), c1 = cpu_timing ? thread_cpu_s() : 0;
    SimStopReason r = part_run_until(p, UINT64_MAX, MIN(p->promise, e->stop_time));
    if (cpu_timing) {
      p->window_cpu_s = thread_cpu_s() - c1;
      p->cpu_s += p->window_cpu_s;
    }
    p->busy_s += mono_s() - t1;
    if (r == SIM_STOP_CANCELLED) cancelled = TRUE;
  }
  return reason;
}

static void *worker_main(void *arg) {
  SimPart *p = arg;
  p->reason = part_work(p);
  return NULL;
}

static SimStopReason engine_run_windowed(SimEngine *engine, gint64 t0_us) {
  engine->run_t0_us = t0_us;
  engine->rounds = 0;
  engine->barrier.count = 0;
  engine->barrier.sleepers = 0;
  engine->barrier.n = engine->n_parts;
  memset(engine->slots, 0, 2 * engine->n_parts * sizeof(Slot));
  for (guint i = 0; i < engine->n_parts; i++) {
    engine->parts[i].stop_requested = FALSE;
    engine->parts[i].cancel = engine->cancel;
    engine->parts[i].window_cpu_s = 0;
  }
  /* The calling thread is worker 0; pinning it is undone afterwards. */
  cpu_set_t saved;
  gboolean restore =
      engine->parts[0].node >= 0 && pthread_getaffinity_np(pthread_self(), sizeof saved, &saved) == 0;
  pthread_t *tids = g_new0(pthread_t, engine->n_parts);
  for (guint i = 1; i < engine->n_parts; i++) {
    int rc = pthread_create(&tids[i], NULL, worker_main, &engine->parts[i]);
    if (rc != 0) g_error("sim engine: cannot start worker thread %u: %s", i, g_strerror(rc));
  }
  SimStopReason reason = part_work(&engine->parts[0]);
  for (guint i = 1; i < engine->n_parts; i++)
    pthread_join(tids[i], NULL);
  g_free(tids);
  if (restore) pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  SimTime now = engine->now;
  for (guint i = 0; i < engine->n_parts; i++)
    now = MAX(now, engine->parts[i].ctx.now);
  engine->now = now;
  return reason;
}

SimStopReason sim_engine_run(SimEngine *engine) {
  g_return_val_if_fail(engine != NULL, SIM_STOP_EMPTY);
  /* Any change since the last layout (threads, entities, declarations) lays it out again; the sequential
   * engine's first prepare leaves its queue as it is. */
  if (!engine->prepared) {
    GError *error = NULL;
    if (!sim_engine_prepare(engine, &error)) g_error("sim engine: %s", error->message);
  }
  gint64 t0_us = g_get_monotonic_time();
  engine->progress_last_us = t0_us;
  SimStopReason reason =
      engine->windowed ? engine_run_windowed(engine, t0_us) : engine_run_sequential(engine, t0_us);
  engine->wall_s += (double)(g_get_monotonic_time() - t0_us) * 1e-6;
  return reason;
}

/* ---- For handlers ---- */

SimTime sim_ctx_now(const SimCtx *ctx) { return ctx->now; }

SimEntityId sim_ctx_self(const SimCtx *ctx) { return ctx->self; }

SimRng *sim_ctx_rng(SimCtx *ctx) { return &ctx->ent->rng; }

guint sim_ctx_worker(const SimCtx *ctx) {
  return ((const SimPart *)ctx)->id;
}

void sim_ctx_send(SimCtx *ctx, SimEntityId dst, SimTime delay, uint16_t type, uint16_t aux, uint64_t payload) {
  SimPart *p = (SimPart *)ctx;
  g_return_if_fail(dst < p->n_entities);
  g_return_if_fail(delay >= 0);
  SimTime time;
  if (G_UNLIKELY(__builtin_add_overflow(ctx->now, delay, &time))) time = SIM_TIME_MAX;
  SimEvent ev = {.time = time,
                 .key = entity_next_key(ctx->ent, ctx->self),
                 .dst = dst,
                 .type = type,
                 .aux = aux,
                 .payload = payload};
  if (G_UNLIKELY(p->part_of != NULL)) {
    guint dp = p->part_of[dst];
    if (dp != p->id) {
      part_send_remote(p, dp, &ev);
      return;
    }
  }
  part_insert(p, &ev);
}

void sim_ctx_batch_begin(SimCtx *ctx, uint16_t type, uint16_t aux, uint64_t payload) {
  SimPart *p = (SimPart *)ctx;
  g_return_if_fail(p->batch_open == BATCH_NONE && !p->batch_direct);
  p->batch_type = type;
  p->batch_aux = aux;
  p->batch_payload = payload;
  if (p->windowed) {
    p->batch_direct = TRUE;
    return;
  }
  guint32 slot;
  if (p->n_batch_free > 0) {
    slot = p->batch_free[--p->n_batch_free];
  } else {
    if (p->n_batch == p->batch_cap) {
      p->batch_cap = MAX(4, 2 * p->batch_cap);
      p->batch = g_renew(Batch, p->batch, p->batch_cap);
      p->batch_free = g_renew(guint32, p->batch_free, p->batch_cap);
    }
    slot = p->n_batch++;
    p->batch[slot] = (Batch){0};
  }
  p->batch_open = slot;
}

void sim_ctx_batch_add(SimCtx *ctx, SimEntityId dst, SimTime delay) {
  SimPart *p = (SimPart *)ctx;
  if (p->batch_direct) {
    sim_ctx_send(ctx, dst, delay, p->batch_type, p->batch_aux, p->batch_payload);
    return;
  }
  g_return_if_fail(p->batch_open != BATCH_NONE);
  g_return_if_fail(dst < p->n_entities);
  g_return_if_fail(delay >= 0);
  Batch *bt = &p->batch[p->batch_open];
  if (G_UNLIKELY(bt->n == bt->cap)) {
    g_return_if_fail(bt->cap < G_MAXUINT32 / 2);
    bt->cap = MAX(64, 2 * bt->cap);
    bt->ev = g_renew(SimEvent, bt->ev, bt->cap);
  }
  SimTime time;
  if (G_UNLIKELY(__builtin_add_overflow(ctx->now, delay, &time))) time = SIM_TIME_MAX;
  if (bt->n == 0) {
    bt->lo = bt->hi = time;
    bt->sorted = TRUE;
  } else {
    bt->sorted &= time >= bt->hi;
    bt->lo = MIN(bt->lo, time);
    bt->hi = MAX(bt->hi, time);
  }
  bt->ev[bt->n++] = (SimEvent){.time = time,
                               .key = entity_next_key(ctx->ent, ctx->self),
                               .dst = dst,
                               .type = p->batch_type,
                               .aux = p->batch_aux,
                               .payload = p->batch_payload};
}

void sim_ctx_batch_end(SimCtx *ctx) {
  SimPart *p = (SimPart *)ctx;
  if (p->batch_direct) {
    p->batch_direct = FALSE;
    return;
  }
  g_return_if_fail(p->batch_open != BATCH_NONE);
  guint32 slot = p->batch_open;
  p->batch_open = BATCH_NONE;
  Batch *bt = &p->batch[slot];
  if (bt->n <= 1) { /* nothing to gain: the event itself */
    if (bt->n == 1) part_insert(p, &bt->ev[0]);
    bt->n = 0;
    p->batch_free[p->n_batch_free++] = slot;
    return;
  }
  batch_sort(p, bt);
  SimEvent first = *batch_ev(bt, 0);
  first.dst = BATCH_DST | slot;
  p->batch_extra += bt->n - 1;
  bt->pos = 0;
  /* The pending count as after the same events sent one by one (the last of them a push). */
  gboolean replaced = p->root_free;
  part_insert(p, &first);
  if (replaced && p->n + p->batch_extra > p->peak_pending) p->peak_pending = p->n + p->batch_extra;
}

void sim_ctx_stop(SimCtx *ctx) {
  SimPart *p = (SimPart *)ctx;
  if (p->windowed)
    p->stop_window = TRUE;
  else
    p->stop_requested = TRUE;
}

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

void sim_engine_set_cpu_timing(SimEngine *engine, gboolean on) {
  g_return_if_fail(engine != NULL);
  engine->cpu_timing = on;
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

/* ---- NUMA ---- */

static gsize page_bytes(void) {
  return (gsize)sysconf(_SC_PAGESIZE);
}

/* Pins workers node by node: worker w gets the node of the w-th CPU this process may use, in node order,
 * and may run on every allowed CPU of that node. */
static void numa_assign_workers(SimEngine *engine) {
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
static void numa_move_entities(SimEngine *engine) {
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
static void numa_place_tables(SimEngine *engine) {
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
  placements_clear(engine);
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
    part_clear(&engine->parts[i]);
  g_aligned_free(engine->parts);
  free_mailboxes(engine);
  g_aligned_free(engine->slots);
  engine->slots = NULL;

  engine->n_parts = n_parts;
  engine->windowed = windowed;
  engine->now = now;
  engine->parts = parts_new(engine, n_parts);
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
  if (!windowed) part_heap_build(&engine->parts[0]);
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
  numa_assign_workers(engine);
  if (engine->numa_nodes > 1 && n_parts > 1) numa_move_entities(engine);
  numa_place_tables(engine);
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

void sim_engine_get_window_stats(const SimEngine *engine, SimEngineWindowStats *stats) {
  g_return_if_fail(engine != NULL && stats != NULL);
  memset(stats, 0, sizeof *stats);
  stats->threads = engine->threads;
  stats->workers = engine->n_parts;
  stats->groups = engine->n_groups;
  stats->windowed = engine->windowed;
  stats->lookahead = engine->lookahead;
  stats->lookahead_src = engine->la_src;
  stats->lookahead_dst = engine->la_dst;
  stats->windows = engine->windows;
  stats->window_events_max = engine->window_events_max;
  stats->critical_s = engine->critical_s;
  memcpy(stats->window_events_hist, engine->window_hist, sizeof stats->window_events_hist);
}

gboolean sim_engine_get_worker_stats(const SimEngine *engine, guint worker, SimWorkerStats *stats) {
  g_return_val_if_fail(engine != NULL && stats != NULL, FALSE);
  if (worker >= engine->n_parts) return FALSE;
  const SimPart *p = &engine->parts[worker];
  *stats = (SimWorkerStats){.entities = p->n_ents,
                            .node = p->node,
                            .events = p->events,
                            .sent_remote = p->sent_remote,
                            .peak_pending = p->peak_pending,
                            .busy_s = p->busy_s,
                            .wait_s = p->wait_s,
                            .cpu_s = p->cpu_s};
  return TRUE;
}
