/* engine_queue.c: a partition's event queue (a 4-ary min-heap of inline events), batches, and the loop that
 * processes events in order (the whole run of the sequential engine, one window of a worker). */
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine-private.h"

/* ---- Heap ---- */

/* Also the first touch of a worker's queue: every slot is written here, by the thread that calls it. */
void engine_heap_alloc(SimPart *p, guint64 cap) {
  gsize slots = HEAP_OFFSET + cap + HEAP_PAD;
  SimEvent *mem;
  gsize mapped = 0;
  if (p->node >= 0) {
    mapped = page_round(slots * sizeof(SimEvent));
    mem = engine_node_alloc(mapped, p->node);
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

G_GNUC_NO_INLINE void engine_heap_grow(SimPart *p) {
  engine_heap_alloc(p, p->cap * 2);
}

/* Builds a worker's queue from its staged events, in the worker's thread (first touch). */
void engine_part_heap_build(SimPart *p) {
  guint64 need = p->staged ? p->staged->len : 0;
  guint64 cap = HEAP_INITIAL;
  while (cap < need + need / 2)
    cap *= 2;
  p->n = 0;
  engine_heap_alloc(p, cap);
  for (guint64 i = 0; i < need; i++)
    heap_push(p, &g_array_index(p->staged, SimEvent, i));
  if (p->staged) g_array_set_size(p->staged, 0);
}

/* ---- Batches ---- */

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
  bt->use_ord = FALSE;
  /* The least and the largest time, and whether the times never decrease (then nothing to do): one pass
   * here costs fewer instructions than keeping them up to date in sim_ctx_batch_add(). */
  SimTime lo = ev[0].time, hi = ev[0].time;
  gboolean sorted = TRUE;
  for (guint32 i = 1; i < n; i++) {
    SimTime t = ev[i].time;
    sorted &= t >= hi;
    lo = MIN(lo, t);
    hi = MAX(hi, t);
  }
  if (sorted) return;
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
  for (uint64_t *q = out + 1, *end = out + n; q < end; q++) {
    uint64_t x = *q;
    if (G_LIKELY(q[-1] < x)) continue; /* in order: most keys */
    uint64_t *r = q;
    do {
      *r = r[-1];
      r--;
    } while (r > out && r[-1] > x);
    *r = x;
    uint64_t moves = (uint64_t)(q - r);
    if (G_UNLIKELY(moves > budget)) {
      qsort(out, n, sizeof *out, u64_cmp);
      return;
    }
    budget -= moves;
  }
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

/* sim_ctx_batch_add()'s uncommon cases: windows (sent event by event), misuse, a full batch, an entity's
 * sequence numbers used up. */
G_GNUC_NO_INLINE static void batch_add_slow(SimCtx *ctx, SimEntityId dst, SimTime delay) {
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
  bt->ev[bt->n++] = (SimEvent){.time = time,
                               .key = entity_next_key(ctx->ent, ctx->self),
                               .dst = dst,
                               .type = p->batch_type,
                               .aux = p->batch_aux,
                               .payload = p->batch_payload};
}

/* The common case needs no call and no saved register (a block's deliveries are ~1000 calls): anything
 * else goes to batch_add_slow(), which does the same with its checks and messages. */
void sim_ctx_batch_add(SimCtx *ctx, SimEntityId dst, SimTime delay) {
  SimPart *p = (SimPart *)ctx;
  if (G_LIKELY(!p->batch_direct && p->batch_open != BATCH_NONE)) {
    Batch *bt = &p->batch[p->batch_open];
    SimEntity *ent = ctx->ent;
    SimTime time;
    if (G_LIKELY(dst < p->n_entities && delay >= 0 && bt->n < bt->cap && ent->seq < SEQ_LIMIT &&
                 !__builtin_add_overflow(ctx->now, delay, &time))) {
      bt->ev[bt->n++] = (SimEvent){.time = time,
                                   .key = ((uint64_t)ctx->self << SEQ_BITS) | ent->seq++,
                                   .dst = dst,
                                   .type = p->batch_type,
                                   .aux = p->batch_aux,
                                   .payload = p->batch_payload};
      return;
    }
  }
  batch_add_slow(ctx, dst, delay);
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

/* ---- The sequential loop (one partition, or one window of one partition) ---- */

/* Processes events with time < `bound` until a stop condition holds or `limit` events have been processed
 * in total (then it returns SIM_STOP_EVENTS; the caller tells the budget from a progress checkpoint).
 * Reaching `bound` returns SIM_STOP_TIME. No allocation, formatting or I/O in here, and no call but the
 * handler (and heap growth, which is amortised). An event at SIM_TIME_MAX is never processed: with the
 * default stop time it means "never". */
SimStopReason engine_part_run_until(SimPart *p, uint64_t limit, SimTime bound) {
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
        const SimEvent *least = ev_less(b, a) ? b : a;
        /* nx comes first while nx->time < lim_t, or on a tie its key is smaller: one compare of times for
         * most events, where ev_ord()'s 128-bit one took several instructions. */
        const SimTime lim_t = least->time, t_check = MIN(lim_t, bound);
        const uint64_t lim_key = least->key;
        for (;;) {
          const Batch *bt = &p->batch[bslot]; /* again: a handler may have added a slot */
          if (bt->pos == bt->n) break;
          const SimEvent *nx = batch_ev(bt, bt->pos);
          if (G_UNLIKELY(nx->time >= t_check) &&
              (nx->time >= bound || nx->time > lim_t || nx->key >= lim_key))
            break;
          if (events >= limit || (cancel && *cancel)) break;
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

SimStopReason engine_run_sequential(SimEngine *engine, gint64 t0_us) {
  if (G_UNLIKELY(engine->gate != NULL)) return engine_run_gated(engine, t0_us); /* once per run */
  SimPart *p = &engine->parts[0];
  if (!p->heap_mem) engine_part_heap_build(p);
  p->stop_requested = FALSE;
  SimStopReason reason;
  for (;;) {
    uint64_t limit = engine_run_limit(engine, p);
    double t1 = mono_s();
    reason = engine_part_run_until(p, limit, engine->stop_time);
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
