/* engine-private.h: what the engine's files share and nothing outside sim/core may use: the entity record,
 * the partition (queue, batches, mailboxes), the engine struct, the heap's inline operations and the
 * functions one engine file calls in another.
 *
 * The engine is split by what each part does: engine.c (entities, scheduling, run control, the handler API),
 * engine_queue.c (the heap, batches and the sequential loop), engine_windows.c (the barrier, mailboxes and
 * conservative windows), engine_layout.c (groups, partitions, lookahead, prepare) and engine_numa.c (NUMA
 * placement and its report). */
#pragma once

#include <glib.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "numa_hw.h"

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

/* An event's (time, key) order as one unsigned 128-bit number (ev_ord, below). */
__extension__ typedef unsigned __int128 EvOrd;

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

  /* The gate (sim_engine_set_gate, engine_gate.c): only the sequential loop consults it. Held events live here,
   * outside any partition, so a new layout does not touch them. */
  SimGateFn gate;
  SimFlushFn flush;
  gpointer gate_user;
  guint8 *held;         /* per entity: held (held_len entries; entities beyond are not held) */
  GArray **held_ev;     /* per entity: its held events (SimEvent, unordered: the queue orders them again when they
                         * are released); created at its first hold and kept, emptied, to be reused */
  guint held_len;
  guint n_held;         /* entities held */
  uint64_t held_events; /* events in the held lists (pending) */
  uint64_t gate_changes; /* late events inserted and entities released: whether a flush changed anything */
  SimTime gate_now;      /* the latest time handled in this gated run (handling may go back in time) */
  /* Events the gate called inert (SIM_GATE_INERT), taken out of the queue but not counted yet: a binary min-heap
   * of their (time, key) orders (engine_gate.c). */
  EvOrd *inert;
  gsize n_inert, inert_cap;
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

static inline double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline gsize page_round(gsize bytes) {
  gsize ps = (gsize)sysconf(_SC_PAGESIZE);
  return (bytes + ps - 1) / ps * ps;
}

/* ---- Heap ---- */

/* (time, key) order as one unsigned 128-bit compare (time biased so negative times sort first): the
 * compiler makes it branch-free (cmp/sbb), which beats a time-then-key branch by ~15% when the heap is
 * in cache; the deep levels of large heaps get prefetches in heap_sift_down() instead of relying on
 * branch speculation to start their loads early. */
static inline EvOrd ev_ord(const SimEvent *a) {
  return ((EvOrd)((uint64_t)a->time ^ (UINT64_C(1) << 63)) << 64) | a->key;
}

static inline gboolean ev_less(const SimEvent *a, const SimEvent *b) { return ev_ord(a) < ev_ord(b); }

/* Doubles a partition's queue (engine_queue.c); out of line, as the inline push below rarely needs it. */
G_GNUC_NO_INLINE void engine_heap_grow(SimPart *p);

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

static inline void heap_push(SimPart *p, const SimEvent *ev) {
  if (G_UNLIKELY(p->n == p->cap)) engine_heap_grow(p);
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

/* Event i (in time order) of a batch. */
static inline const SimEvent *batch_ev(const Batch *bt, guint32 i) {
  return bt->use_ord ? &bt->ev[bt->ord[i] & 0xFFFFFF] : &bt->ev[i];
}

/* The event budget of the sequential loop's next stretch: the run's, or the next progress checkpoint's. */
static inline uint64_t engine_run_limit(const SimEngine *engine, const SimPart *p) {
  uint64_t limit = engine->max_events;
  if (engine->progress_fn) {
    uint64_t checkpoint = (p->events | (PROGRESS_EVERY - 1)) + 1;
    if (checkpoint < limit) limit = checkpoint;
  }
  return limit;
}

/* After batch `slot`'s event was handled: its next event takes its place in the queue (in the root's place if
 * the handler sent nothing, where it most often stays), or the slot is free again. Here for the gated
 * loop (engine_gate.c) too, which lives in a file of its own so that the compiler's inlining in the plain loop stays
 * as it was (a second caller in engine_queue.c made this and heap_pop_root() calls there: PHOLD 5-10% slower). */
static inline void batch_advance(SimPart *p, guint32 slot) {
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

/* ---- Between the engine's files ---- */

/* engine.c */
void engine_part_clear(SimPart *p);                     /* frees what a partition holds, not the partition */
SimPart *engine_parts_new(SimEngine *engine, guint n);  /* n empty partitions; free with g_aligned_free() */
SimTime engine_now(const SimEngine *engine);            /* time of the last event processed anywhere */
void engine_place_event(SimEngine *engine, const SimEvent *ev); /* into its partition, outside any handler */

/* engine_queue.c */
void engine_heap_alloc(SimPart *p, guint64 cap);        /* (re)allocates the queue: first touch */
void engine_part_heap_build(SimPart *p);                /* the queue from the staged events */
SimStopReason engine_part_run_until(SimPart *p, uint64_t limit, SimTime bound); /* the event loop */
SimStopReason engine_run_sequential(SimEngine *engine, gint64 t0_us);

/* engine_gate.c */
SimStopReason engine_part_run_gated(SimPart *p, uint64_t limit, SimTime bound, EvOrd *stop_ord); /* with a gate */
SimStopReason engine_run_gated(SimEngine *engine, gint64 t0_us); /* engine_run_sequential() with a gate */
void engine_gate_ensure(SimEngine *engine);                      /* held flags for every entity */
void engine_gate_hold(SimEngine *engine, SimEntityId id);        /* the entity becomes held */
void engine_gate_hold_event(SimEngine *engine, const SimEvent *ev); /* onto its (held) entity's list */
void engine_gate_release_all(SimEngine *engine);
void engine_gate_free(SimEngine *engine);

/* engine_layout.c */
guint engine_count_groups(const SimEngine *engine); /* the groups the next prepare will form (no side effect) */

/* engine_windows.c */
G_GNUC_NO_INLINE void engine_part_send_remote(SimPart *p, guint dp, const SimEvent *ev); /* to a mailbox */
SimStopReason engine_run_windowed(SimEngine *engine, gint64 t0_us);
void engine_free_mailboxes(SimEngine *engine);

/* engine_numa.c */
void *engine_node_alloc(gsize bytes, int node);         /* a mapping preferring `node`; free with munmap() */
void engine_placements_clear(SimEngine *engine);        /* forgets the regions of the last report */
void engine_numa_assign_workers(SimEngine *engine);     /* pins workers node by node (several nodes only) */
void engine_numa_move_entities(SimEngine *engine);      /* entity records and states to their worker's node */
void engine_numa_place_tables(SimEngine *engine);       /* spreads the shared tables with the weights */
