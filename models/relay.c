/* relay.c: block relay over the topology: Geth 1.8.23's eth/63 push-and-announce protocol as a windowed
 * kernel over fixed groups of nodes (one or more threads, the same results): the step queue, the messages,
 * a worker's window of steps, a thread's windows and the propagation. The rest of the kernel (records in
 * relay-private.h): the result store (RelayWork) that every relay model reports through, relay_work.c; the
 * groups, relay_groups.c; the packed topology and the layout, relay_kernel.c; the threads and the window
 * barrier, relay_threads.c; the stop and pruning, relay_stop.c. */
#include "relay-private.h"

#include <math.h>
#include <sched.h>

/* ---- a thread's queue of steps ----
 * HAVE step keys. A step only creates later steps, mostly 16 ms to 2 s later (a latency, a fetch after
 * arriveTimeout), and a block is stopped with about a third of its keys never taken: a calendar queue. A
 * key goes to its bin of 2^21 ns (append only) on a ring of STEP_RING bins after the current one; when the
 * current bin is used up the next one with keys becomes current and is sorted, then taken in order from
 * `head`. A key in the current bin or below it (but above the last one taken) is inserted into the sorted
 * rest (the bins after the current one hold only larger keys). On pools-2019 this costs 0.7 M instructions
 * per block where the radix heap it replaced cost 1.4 M (its keys moved 5.5 times a pop); a 4-ary heap
 * costs fewer instructions than either but far more time (branchy pops). Narrower bins cost fewer
 * instructions still (2^18 ns: 90 k a block fewer) but spread the keys over more memory: 5 times the
 * last-level misses in cachegrind (docs/threads.md, session 8). Keys at or below the last one taken (zero
 * latency and transfer to a lower node, or an arrival from another group below a superseded key already
 * taken) and keys past the ring (over 2.1 s ahead) go to a 4-ary min-heap. PUSH and ANNOUNCE steps come a
 * fixed time after HAVE (verify; verify + import), so in HAVE order they are already sorted: two FIFO
 * queues. */

void relay_queue_init(StepQueue *q) {
  memset(q, 0, sizeof *q);
  q->bin = g_new0(StepBin, STEP_RING);
  q->occ = g_new0(guint64, STEP_RING / 64);
  q->heap_cap = 1024;
  q->heap = g_new(guint64, q->heap_cap);
  q->min = UINT64_MAX;
}

void relay_queue_clear(StepQueue *q) {
  for (guint32 b = 0; b < STEP_RING; b++)
    g_free(q->bin[b].key);
  g_free(q->bin);
  g_free(q->occ);
  g_free(q->heap);
  g_free(q->spare);
}

static void queue_reset(StepQueue *q) {
  for (guint32 w = 0; w < STEP_RING / 64; w++) {
    for (guint64 m = q->occ[w]; m; m &= m - 1)
      q->bin[w * 64 + __builtin_ctzll(m)].len = 0;
    q->occ[w] = 0;
  }
  q->bin[q->cur % STEP_RING].len = 0;
  q->cur = 0;
  q->head = q->ahead = 0;
  q->last = 0;
  q->min = UINT64_MAX;
  q->heap_len = 0;
}

static void heap_push_key(StepQueue *q, guint64 key) {
  if (q->heap_len == q->heap_cap) {
    q->heap_cap *= 2;
    q->heap = g_renew(guint64, q->heap, q->heap_cap);
  }
  gsize i = q->heap_len++;
  while (i > 0) {
    gsize p = (i - 1) / 4;
    if (q->heap[p] <= key) break;
    q->heap[i] = q->heap[p];
    i = p;
  }
  q->heap[i] = key;
}

static guint64 heap_pop(StepQueue *q) {
  guint64 top = q->heap[0];
  guint64 last = q->heap[--q->heap_len];
  gsize n = q->heap_len, i = 0;
  for (;;) {
    gsize c = 4 * i + 1;
    if (c >= n) break;
    gsize best = c;
    gsize end = MIN(c + 4, n);
    for (gsize k = c + 1; k < end; k++)
      if (q->heap[k] < q->heap[best]) best = k;
    if (q->heap[best] >= last) break;
    q->heap[i] = q->heap[best];
    i = best;
  }
  if (n) q->heap[i] = last;
  return top;
}

static inline void bin_append(StepBin *b, guint64 key) {
  if (G_UNLIKELY(b->len == b->cap)) {
    b->cap = b->cap ? 2 * b->cap : 16;
    b->key = g_renew(guint64, b->key, b->cap);
  }
  b->key[b->len++] = key;
}

/* Ascending (keys are distinct): insertion sort, fast on keys almost in order. */
static void keys_insertion_sort(guint64 *a, guint32 n) {
  for (guint32 i = 1; i < n; i++) {
    guint64 k = a[i];
    guint32 j = i;
    for (; j > 0 && a[j - 1] > k; j--)
      a[j] = a[j - 1];
    a[j] = k;
  }
}

/* Sorts bin b's keys (all in one bin: they differ below STEP_BIN_SHIFT). A comparison sort of a bin's
 * 32-127 keys (most of them on pools-2019) took a tenth of the relay in mispredicted branches; instead they
 * are dealt into about as many slices of the bin's time as there are keys (a counting sort on the top bits of
 * their time in the bin, into the spare array, which then becomes the bin's), and an insertion sort puts each
 * slice's few keys in order. */
static void bin_sort(StepQueue *q, StepBin *b) {
  guint32 n = b->len;
  if (n <= 16) {
    keys_insertion_sort(b->key, n);
    return;
  }
  guint bits = MIN(8u, 32u - (guint)__builtin_clz(n - 1)); /* 2^bits >= n, at most 256 slices */
  guint shift = STEP_BIN_SHIFT - bits;
  guint32 mask = (UINT32_C(1) << bits) - 1;
  guint32 count[257] = {0};
  const guint64 *a = b->key;
  for (guint32 i = 0; i < n; i++)
    count[((guint32)(a[i] >> shift) & mask) + 1]++;
  for (guint32 s = 1; s <= mask; s++)
    count[s] += count[s - 1];
  if (G_UNLIKELY(q->spare_cap < b->cap)) {
    g_free(q->spare);
    q->spare_cap = b->cap;
    q->spare = g_new(guint64, q->spare_cap);
  }
  guint64 *out = q->spare;
  for (guint32 i = 0; i < n; i++)
    out[count[(guint32)(a[i] >> shift) & mask]++] = a[i];
  guint64 *old = b->key;
  guint32 old_cap = b->cap;
  b->key = out;
  b->cap = q->spare_cap;
  q->spare = old;
  q->spare_cap = old_cap;
  keys_insertion_sort(out, n);
}

/* The current bin used up and keys ahead: the next bin with keys becomes current, sorted. */
static void queue_advance(StepQueue *q) {
  guint32 cs = (guint32)(q->cur % STEP_RING);
  q->bin[cs].len = 0;
  q->head = 0;
  guint32 s = (cs + 1) % STEP_RING, w = s / 64;
  guint64 bits = q->occ[w] & (~UINT64_C(0) << (s % 64));
  while (!bits) {
    w = (w + 1) % (STEP_RING / 64);
    bits = q->occ[w];
  }
  guint32 ns = w * 64 + (guint32)__builtin_ctzll(bits);
  q->occ[w] &= ~(UINT64_C(1) << (ns % 64));
  q->cur += (ns - cs) % STEP_RING;
  StepBin *b = &q->bin[ns];
  q->ahead -= b->len;
  bin_sort(q, b);
  q->min = b->key[0];
}

static inline void queue_push(StepQueue *q, guint64 key) {
  if (G_UNLIKELY(key <= q->last)) {
    heap_push_key(q, key);
    return;
  }
  guint64 bin = key >> STEP_BIN_SHIFT;
  if (G_UNLIKELY(bin <= q->cur)) {
    /* Into the current bin's sorted rest, after the keys taken (all below it). */
    StepBin *r = &q->bin[q->cur % STEP_RING];
    bin_append(r, key);
    guint32 j = r->len - 1;
    for (; j > q->head && r->key[j - 1] > key; j--)
      r->key[j] = r->key[j - 1];
    r->key[j] = key;
    q->min = r->key[q->head];
    return;
  }
  if (G_UNLIKELY(bin - q->cur >= STEP_RING)) {
    heap_push_key(q, key);
    return;
  }
  guint32 s = (guint32)(bin % STEP_RING);
  bin_append(&q->bin[s], key);
  q->occ[s / 64] |= UINT64_C(1) << (s % 64);
  q->ahead++;
  if (key < q->min) q->min = key; /* below the current bin's rest only when that is empty */
}

/* Takes q->min (the bins must not be empty) and finds the next minimum. */
static void queue_pop(StepQueue *q) {
  StepBin *r = &q->bin[q->cur % STEP_RING];
  if (q->head == r->len) {
    queue_advance(q);
    r = &q->bin[q->cur % STEP_RING];
  }
  q->last = r->key[q->head++];
  if (q->head < r->len)
    q->min = r->key[q->head];
  else if (q->ahead)
    queue_advance(q);
  else
    q->min = UINT64_MAX;
}

/* ---- Geth 1.8.23 ---- */

static const SimParamSpec geth_params[] = {
    {.name = "push_min", .type = SIM_PARAM_INT, .min = 0, .max = 100000, .def = 4,
     .offset = offsetof(GethParams, push_min),
     .help = "full-block pushes go to max(push_min, floor(sqrt(peers lacking it))) peers, capped by that count"},
    {.name = "verify_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 5,
     .offset = offsetof(GethParams, verify_ms),
     .help = "header verification before the push (fetcher.insert: verifyHeader, then broadcast)"},
    {.name = "import_base_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 10,
     .offset = offsetof(GethParams, import_base_ms), .help = "import time of an empty block (calibration knob)"},
    {.name = "import_ms_per_mgas", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 25,
     .offset = offsetof(GethParams, import_ms_per_mgas),
     .help = "import time per million gas used (calibration knob); the hash is announced after import"},
    {.name = "arrive_timeout_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e6, .def = 500,
     .offset = offsetof(GethParams, arrive_timeout_ms),
     .help = "fetcher: wait after an announcement before requesting the block (arriveTimeout)"},
    {.name = "fetch_timeout_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e7, .def = 5000,
     .offset = offsetof(GethParams, fetch_timeout_ms),
     .help = "fetcher: an unanswered request is given up after this long (fetchTimeout), then retried"},
    {.name = "fetch_fail_prob", .type = SIM_PARAM_NUMBER, .min = 0, .max = 0.99, .def = 0,
     .offset = offsetof(GethParams, fetch_fail_prob),
     .help = "probability that a fetch request goes unanswered (peer dropped or overloaded)"},
    {.name = "draw_all", .type = SIM_PARAM_BOOL, .def = 0, .offset = offsetof(GethParams, draw_all),
     .help = "draw every message's latency when it is applied, none lazily (slower; the same results: the "
             "lazy draws are exact, tests/test_relay.c compares both)"},
    {.name = "prune", .type = SIM_PARAM_BOOL, .def = 1, .offset = offsetof(GethParams, prune),
     .help = "with a stop (the run's relay), skip a node's steps once none can reach a watched value in time "
             "(relay.h; exact: tests/test_relay.c compares with and without)"},
    {.name = "prune_table_after", .type = SIM_PARAM_INT, .min = 0, .max = 1000000000, .def = 64,
     .offset = offsetof(GethParams, prune_table_after),
     .help = "skipping: build the tighter bounds of a block size class (2^(1/4) steps) once this many of its "
             "blocks were relayed, while 16 classes (and 128 MiB) have room; 0: the latency floors alone "
             "(the same results, more steps; docs/threads.md)"},
};

static SimTime ms(double v) { return sim_time_from_s(v / 1e3); }

static SimTime geth_import_ns(const void *params, double gas_used) {
  const GethParams *p = params;
  return ms(p->import_base_ms + p->import_ms_per_mgas * gas_used / 1e6);
}

/* ---- one worker's part of a block ---- */

/* The random stream of one purpose of one node or edge (the kernel's numbers) of this block: its values do
 * not depend on who draws them or when. A RelayMix (relay.h: SplitMix64) keyed by (block key, purpose,
 * id): the relay opens one per message it draws for. Jitter models other than "pareto" and "none" draw
 * through gsl from a Philox stream keyed the same way (MsgRng.slow). */
/* The stream of one message (purpose STREAM_MSG, the directed edge it crosses). */
typedef struct {
  RelayMix m;
  gboolean slow;
  SimRng r; /* slow only */
} MsgRng;

static inline void msg_rng_init(const Geth *g, MsgRng *r, const LinkClass *c, guint32 e) {
  r->slow = c->draw.kind == NET_DRAW_MODEL;
  if (G_UNLIKELY(r->slow))
    sim_rng_init(&r->r, g->key, (guint64)STREAM_MSG << 56 | e);
  else
    relay_mix_init(&r->m, g->key, STREAM_MSG, e);
}

/* Uniform in [0, 1), 53 bits. */
static inline double msg_uniform(MsgRng *r) {
  guint64 w = G_UNLIKELY(r->slow) ? sim_rng_u64(&r->r) : relay_mix_next(&r->m);
  return (double)(w >> 11) * 0x1.0p-53;
}

/* A latency of class c: net_latency_draw() with the uniform from this stream. */
static inline __attribute__((always_inline)) SimTime msg_latency(const LinkClass *c, MsgRng *r) {
  const NetLatencyDraw *d = &c->draw;
  switch (d->kind) {
  case NET_DRAW_FIXED:
    return d->fixed_ns;
  case NET_DRAW_PARETO:
    return pareto_of_u(d, relay_mix_uniform_pos(&r->m));
  default:
    return net_latency_draw(d, &r->r);
  }
}

/* The heard word of an arrival at `at`: ns after the first source, all ones when out of range (an
 * arrival before the first source wraps to a huge unsigned value, so one MIN covers both ends). */
static inline guint64 heard_rel(const Geth *g, SimTime at) {
  return MIN((guint64)(at - g->t0), EDGE_HEARD_NONE);
}

/* The smallest heard word that means "heard after `now`" (not heard counts as after everything). */
static inline guint64 heard_after(const Geth *g, SimTime now) {
  guint64 rel = (guint64)(now - g->t0);
  return rel < EDGE_HEARD_NONE ? rel + 1 : EDGE_HEARD_NONE;
}

static inline void relax_full(Geth *g, guint32 v, SimTime t) {
  if (g->nh[v].done || t >= g->nh[v].have) return;
  g->nh[v].have = t;
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) return; /* more than 18 minutes after the block left: treated as never */
  queue_push(g->q, dt << STEP_KEY_SHIFT | (guint64)v << 2 | STEP_HAVE);
}

static inline guint64 step_key(const Geth *g, SimTime t, guint32 node, guint32 kind) {
  guint64 dt = (guint64)(t - g->t0);
  if (dt > STEP_TIME_MAX) dt = STEP_TIME_MAX;
  return dt << STEP_KEY_SHIFT | (guint64)node << 2 | kind;
}

/* Records at the receiver that it hears from the sender at `at` (record `rev`: receiver -> sender). */
static inline void heard_exact(Geth *g, guint32 rev, SimTime at) {
  g->ew[rev] = (g->ew[rev] & ~(EDGE_LAZY_BIT | EDGE_HEARD_NONE)) | heard_rel(g, at);
}

/* The same with the latency not drawn: sent at `sent` over a link of least latency `floor`. Not stored when
 * the receiver has made its last decision before the message can arrive (nothing reads it then). */
static inline void heard_lazy(Geth *g, guint32 to, guint32 rev, SimTime sent, SimTime floor) {
  SimTime lb = sent + floor;
  if (g->nh[to].done && lb > g->nh[to].have + g->last_decision_after_have) return;
  g->ew[rev] = (g->ew[rev] & ~EDGE_HEARD_NONE) | EDGE_LAZY_BIT | heard_rel(g, lb);
}

/* Record e (v -> u) as v's decision at a time with heard word `after` sees it (to test, not to store back:
 * the record itself is updated here where needed): a lazy record whose bound is before then gets its
 * latency drawn (the stream of edge u -> v) and stored exact, or found by its bracket to be in by then (its
 * bound stored) or not yet (left lazy, returned as not heard); one whose bound is after then reads as not
 * heard. */
static inline __attribute__((always_inline)) guint64 edge_seen(Geth *g, guint32 e, guint64 x, guint64 after) {
  if (G_LIKELY(!(x & EDGE_LAZY_BIT))) return x;
  if ((x & EDGE_HEARD_NONE) >= after) return x; /* its lower bound is later: not heard yet */
  guint32 f = g->ec[e].rev;
  const LinkClass *c = &g->cls[g->ec[f].cls];
  SimTime sent = g->t0 + (SimTime)(x & EDGE_HEARD_NONE) - c->floor_ns;
  MsgRng r;
  msg_rng_init(g, &r, c, f);
  if (c->draw.kind == NET_DRAW_PARETO) {
    /* The latency's uniform, bracketed by its top bits: often enough to tell whether it arrived by the time
     * `after` stands for, without the logarithm. Heard: any time at or before then says so to every later
     * decision of v (they come later still), so the bound is stored. Not heard yet: left lazy. */
    RelayMix peek = r.m;
    guint j = (guint)(relay_mix_next(&peek) >> (64 - QLAT_BITS));
    SimTime d = g->t0 + (SimTime)after - 1 - sent; /* arrived by then iff latency <= d */
    const SimTime *ql = g->qlat[g->ec[f].cls].at;
    if (ql[j] != SIM_TIME_MAX && d >= ql[j] + QLAT_SLACK_NS) {
      guint64 y = (x & ~EDGE_LAZY_BIT);
      g->ew[e] = y;
      return y;
    }
    if (d < ql[j + 1] - QLAT_SLACK_NS) return x | EDGE_HEARD_NONE; /* not heard yet: no draw */
  }
  g->draws++;
  guint64 y = (x & ~(EDGE_LAZY_BIT | EDGE_HEARD_NONE)) | heard_rel(g, sent + msg_latency(c, &r));
  g->ew[e] = y;
  return y;
}

/* Speed where it cannot matter. What a message does is a minimum of values that depend on the block and
 * the edge alone: the receiver's full-block time (a push's arrival, an announcement's fetch), a special's
 * first block message and first announcement (all pushes and announcements count), and what the receiver
 * knows of the sender (the arrival). A message that cannot lower any of these minima as they stand when it
 * is applied (the receiver has the block or will sooner; the fetch cannot beat what it has; the special's
 * first message is earlier) is recorded lazily at the receiver (heard_lazy), without its draw; the draw is
 * made only if a decision of the receiver needs it, and gives the same value (edge_seen). So no result
 * depends on when or by which worker a message is applied, which is what lets a worker apply its own
 * nodes' messages at once and others' at the window's end. The message goes over edge `e` (its random
 * stream) to `to`, whose edge back is `rev`. */

/* A push whose last byte left at q. */
static inline __attribute__((always_inline)) void push_decide(Geth *g, guint32 e, guint32 to, guint32 rev,
                                                              guint32 cls, SimTime q) {
  const LinkClass *c = &g->cls[cls];
  SimTime lb = q + c->floor_ns;
  gboolean special = g->nh[to].special;
  if (!g->p->draw_all && lb >= g->nh[to].have && (!special || lb >= g->first_push[to])) {
    heard_lazy(g, to, rev, q, c->floor_ns);
    return;
  }
  MsgRng r;
  msg_rng_init(g, &r, c, e);
  g->draws++;
  SimTime arr = q + msg_latency(c, &r);
  heard_exact(g, rev, arr);
  if (special && arr < g->first_push[to]) g->first_push[to] = arr;
  relax_full(g, to, arr);
}

/* An announcement sent at `now` by a node whose upload link is free from `upload_free` (the sender's, as its
 * worker knew it: from another worker's, the message carries it, Msg). */
static inline __attribute__((always_inline)) void announce_decide(Geth *g, guint32 e, guint32 to, guint32 rev,
                                                                  guint32 cls, SimTime now, SimTime upload_free) {
  const GethParams *p = g->p;
  const LinkClass *c = &g->cls[cls];
  /* The fetch cannot complete before now + arriveTimeout and five latencies. */
  gboolean fetch = !g->nh[to].done && g->nh[to].have > now + g->wait + 4 * c->floor_ns;
  if (!fetch && !g->p->draw_all && (!g->nh[to].special || now + c->floor_ns >= g->announce[to])) {
    heard_lazy(g, to, rev, now, c->floor_ns);
    return;
  }
  MsgRng r;
  msg_rng_init(g, &r, c, e);
  g->draws++;
  SimTime lat = msg_latency(c, &r);
  SimTime a = now + lat;
  heard_exact(g, rev, a);
  if (g->nh[to].special && a < g->announce[to]) g->announce[to] = a;
  if (!fetch) return;
  /* The peer's fetcher requests the block arriveTimeout after the announcement: header request and
   * reply, body request, then the body over our upload link; an unanswered request costs fetchTimeout
   * and is retried. The latency draw is reused for the exchange's four messages. */
  SimTime req = a + g->wait;
  if (p->fetch_fail_prob > 0)
    while (msg_uniform(&r) < p->fetch_fail_prob)
      req += g->timeout;
  SimTime start = MAX(req + 3 * lat, upload_free);
  relax_full(g, to, start + g->xfer[cls] + lat);
}

/* A message over edge e (record `pr`, word `x` before it was marked sent) of kind `announce`, sent at t:
 * applied at once inside the worker, else put in the mailbox of the receiver's worker. A message to another
 * group bounds the next window (`step_lb`: the earliest step it can cause), wherever it is applied, so
 * that the windows do not depend on how the groups are shared among workers. */
static inline __attribute__((always_inline)) void send_msg(Geth *g, guint32 e, const EdgeCold *pr, guint64 x, gboolean announce, SimTime t,
                            SimTime upload_free, SimTime step_lb) {
  guint32 to = edge_to(x);
  if (x & EDGE_CROSS_BIT) {
    g->deferred++;
    if (step_lb < g->bound) g->bound = step_lb;
    guint d = g->worker_of[to];
    if (d != g->me) {
      g->posted++;
      Mailbox *mb = &g->out[d];
      mb->msg[mb->len++] = (Msg){.word = MIN((guint64)(t - g->t0), MSG_TIME_MASK) |
                                         (guint64)to << MSG_TO_SHIFT | (announce ? MSG_ANNOUNCE_BIT : 0),
                                 .rev = pr->rev,
                                 .cls = pr->cls,
                                 .upload_free = upload_free};
      return;
    }
  }
  if (announce)
    announce_decide(g, e, to, pr->rev, pr->cls, t, upload_free);
  else
    push_decide(g, e, to, pr->rev, pr->cls, t);
}

static inline __attribute__((always_inline)) void geth_push(Geth *g, guint32 v, SimTime now) {
  guint32 *scratch = g->scratch;
  guint64 *ew = g->ew;
  guint64 after = heard_after(g, now);
  /* The heard bits compared at the top of the word (shifted, not masked: no 40-bit constant to hold in a
   * register in this loop, 51 k edges a block on pools-2019). */
  const guint64 after_top = after << (64 - EDGE_HEARD_BITS);
  gsize n = 0;
  for (guint32 e = g->off[v], end = g->off[v + 1]; e < end; e++) {
    scratch[n] = e;
    n += edge_seen(g, e, ew[e], after) << (64 - EDGE_HEARD_BITS) >= after_top; /* the peer has not told us */
  }
  if (n == 0) {
    g->upload_free[v] = 0; /* nothing sent: the link was never busy */
    return;
  }
  guint64 k = (guint64)sqrt((double)n); /* exact floor for n < 2^52 */
  k = MIN(n, MAX(k, (guint64)g->p->push_min));
  RelayMix r;
  relay_mix_init(&r, g->key, STREAM_PUSH_TARGETS, v);
  /* The targets first (the draws depend on n alone), so that the loads each message starts with are in
   * flight together: the targets' edge records (random in v's row: the scan read only the words) and the
   * receivers' NodeHot, each a likely miss (docs/threads.md, session 9: prefetching the receivers' words
   * too, behind the records, and an announcement's loads a few edges ahead, paid less). */
  for (guint64 i = 0; i < k; i++) {
    guint64 j = i + relay_mix_below(&r, n - i);
    guint32 e = scratch[j];
    scratch[j] = scratch[i];
    scratch[i] = e;
    __builtin_prefetch(&g->ec[e]);
    /* Only this worker's: another worker's NodeHot is a line its core writes, and a load of it here costs
     * that core a miss at its next write (the line bounces between the cores). */
    guint32 to = edge_to(ew[e]);
    if (g->worker_of[to] == g->me) __builtin_prefetch(&g->nh[to]);
  }
  SimTime q = now;
  for (guint64 i = 0; i < k; i++) {
    guint32 e = scratch[i];
    const EdgeCold *pr = &g->ec[e];
    guint64 x = ew[e];
    const LinkClass *c = &g->cls[pr->cls];
    q += g->xfer[pr->cls];
    ew[e] = x | EDGE_SENT_BIT;
    g->messages++;
    send_msg(g, e, pr, x, FALSE, q, 0, q + c->floor_ns);
  }
  g->upload_free[v] = q;
}

/* edge_seen for the shares of a split announcement: one out-of-line copy (the step loop's inlining is left as
 * it was without them). */
static guint64 __attribute__((noinline, cold)) share_seen(Geth *g, guint32 e, guint64 after) {
  return edge_seen(g, e, g->ew[e], after);
}

/* What the out-of-line shares of a split announcement add to the step loop's local Geth: they work on a copy
 * of the worker's (whose pointers are the loop's) with the counters zeroed, so that the loop never takes its
 * local's address (which keeps it in registers) nor copies it. */
typedef struct {
  guint64 messages, deferred, draws, split;
  SimTime bound;
} ShareDelta;

static inline Geth share_geth(const Geth *proto) {
  Geth c = *proto;
  c.messages = c.deferred = c.draws = c.split = 0;
  c.bound = SIM_TIME_MAX;
  return c;
}

static inline ShareDelta share_delta(const Geth *c) {
  return (ShareDelta){.messages = c->messages, .deferred = c->deferred, .draws = c->draws, .split = c->split,
                      .bound = c->bound};
}

static inline void share_add(Geth *g, ShareDelta d) {
  g->messages += d.messages;
  g->deferred += d.deferred;
  g->draws += d.draws;
  g->split += d.split;
  if (d.bound < g->bound) g->bound = d.bound;
}

/* An announcement of a split node (SPLIT_MIN_DEGREE) over edge e (word x) to one of this worker's nodes:
 * applied at once, as send_msg does. One out-of-line copy of announce_decide for both shares. */
static void __attribute__((noinline, cold)) share_decide(Geth *g, guint32 e, guint64 x, SimTime now,
                                                         SimTime upload_free) {
  if (x & EDGE_CROSS_BIT) {
    g->deferred++;
    SimTime step_lb = now + g->step_lb_announce;
    if (step_lb < g->bound) g->bound = step_lb;
  }
  announce_decide(g, e, edge_to(x), g->ec[e].rev, g->ec[e].cls, now, upload_free);
}

/* A split announcement (SPLIT_MIN_DEGREE) by its owner: to its own peers only, the other workers take their
 * shares. Out of line: rare, and the step loop's inlining budget is better spent on the common path. */
static ShareDelta __attribute__((noinline, cold)) announce_own_share(const Geth *proto, guint32 v, SimTime now) {
  Geth c = share_geth(proto), *g = &c;
  SimTime upload_free = g->upload_free[v];
  guint64 after = heard_after(g, now);
  g->split++;
  const guint32 *so = g->slice_off + (gsize)g->split_of[v] * (g->n_workers + 1) + g->me;
  for (guint32 i = so[0]; i < so[1]; i++) {
    guint32 e = g->slice_edge[i];
    guint64 x = share_seen(g, e, after);
    if ((x & EDGE_STATE_MASK) - after >= EDGE_SENT_BIT - after) continue;
    g->ew[e] |= EDGE_SENT_BIT;
    g->messages++;
    share_decide(g, e, x, now, upload_free);
  }
  return share_delta(g);
}

static inline __attribute__((always_inline)) void geth_announce(Geth *g, guint32 v, SimTime now) {
  SimTime upload_free = g->upload_free[v];
  guint64 after = heard_after(g, now);
  for (guint32 e = g->off[v], end = g->off[v + 1]; e < end; e++) {
    guint64 x = edge_seen(g, e, g->ew[e], after);
    /* Skipped if pushed there (sent bit set) or the peer has it (heard before `after`): one range check. */
    if ((x & EDGE_STATE_MASK) - after >= EDGE_SENT_BIT - after) continue;
    g->ew[e] |= EDGE_SENT_BIT;
    g->messages++;
    /* Its fetch cannot complete before the announcement, arriveTimeout and four more messages, each at
     * least the lookahead if it crosses groups (the bound matters only then). */
    send_msg(g, e, &g->ec[e], x, TRUE, now, upload_free, now + g->step_lb_announce);
  }
}

/* Applies the messages that other workers sent to this worker's nodes in the last window (those published
 * in pub[parity]); in any order, with the same result (send_msg). Their loads are prefetched INBOX_AHEAD
 * messages ahead: on the 2-core VM this took the inbox from 0.22 to 0.15 s per thread in 1,000 blocks of
 * pools-2019 at 2 threads (docs/threads.md, session 14); a prefetch for the announcements' receivers in
 * geth_announce cost more than it gave (as in session 9). */
#define INBOX_AHEAD 8
static void __attribute__((noinline)) apply_inbox(Kernel *k, Worker *W, Geth *g, guint parity) {
  guint n = k->n_workers;
  for (guint s = 0; s < n; s++) {
    if (s == W->index) continue;
    const Mailbox *mb = &k->mb[(gsize)s * n + W->index];
    guint32 end = mb->pub[parity];
    for (guint32 i = W->read[s]; i < end; i++) {
      const Msg *m = &mb->msg[i];
      if (i + INBOX_AHEAD < end) {
        /* What a message a few ahead will touch of this worker's (its receiver's record of the edge back,
         * its word, the receiver's NodeHot): the messages come in the sender's order, so these are random. */
        const Msg *a = m + INBOX_AHEAD;
        __builtin_prefetch(&g->ec[a->rev]);
        __builtin_prefetch(&g->ew[a->rev], 1);
        __builtin_prefetch(&g->nh[(guint32)(a->word >> MSG_TO_SHIFT) & MSG_NODE_MASK], 1);
      }
      guint32 to = (guint32)(m->word >> MSG_TO_SHIFT) & MSG_NODE_MASK;
      SimTime t = g->t0 + (SimTime)(m->word & MSG_TIME_MASK);
      if (G_UNLIKELY(m->word & MSG_SLICE_BIT)) {
        /* Another worker's node: this worker's share, in key order (announce_share). */
        guint64 key = step_key(g, t, to, STEP_ANNOUNCE);
        guint32 j = W->n_share++;
        for (; j > 0 && W->share[j - 1] > key; j--)
          W->share[j] = W->share[j - 1];
        W->share[j] = key;
        continue;
      }
      guint32 e = g->ec[m->rev].rev;
      if (m->word & MSG_ANNOUNCE_BIT)
        announce_decide(g, e, to, m->rev, m->cls, t, m->upload_free);
      else
        push_decide(g, e, to, m->rev, m->cls, t);
    }
    W->read[s] = end;
  }
}

/* The sent, lazy and heard bits of the words [x, end) reset: nothing sent or heard yet. A fill of every
 * word costs less than a stamp checked on each access (a node's row reset at its first touch cost more: 78%
 * of the rows are touched on pools-2019, and the test sits on every message). Eight words at a time, in
 * vectors of four (GCC's vector extension: two SSE2 pairs in every x86-64), through pointers that nothing
 * else in the function holds (with g->ew reloaded at each pair it took 10 instructions per pair). A clone
 * for AVX2 (target_clones) took 160 k instructions a block fewer but no less CPU time (docs/threads.md,
 * session 8). */
static void __attribute__((noinline)) edge_words_reset(guint64 *x, guint64 *end) {
  typedef guint64 V4 __attribute__((vector_size(32)));
  const V4 keep = {~EDGE_RESET_MASK, ~EDGE_RESET_MASK, ~EDGE_RESET_MASK, ~EDGE_RESET_MASK};
  const V4 none = {EDGE_HEARD_NONE, EDGE_HEARD_NONE, EDGE_HEARD_NONE, EDGE_HEARD_NONE};
  for (gsize n = (gsize)(end - x) / 8; n; n--, x += 8) {
    V4 w0, w1;
    memcpy(&w0, x, sizeof w0);
    memcpy(&w1, x + 4, sizeof w1);
    w0 = (w0 & keep) | none;
    w1 = (w1 & keep) | none;
    memcpy(x, &w0, sizeof w0);
    memcpy(x + 4, &w1, sizeof w1);
  }
  for (; x < end; x++)
    *x = (*x & ~EDGE_RESET_MASK) | EDGE_HEARD_NONE;
}

/* Starts worker W on the block: its nodes and edges reset, its sources relaxed. */
static void worker_begin(Kernel *k, Worker *W) {
  const BlockSpec *b = &k->blk;
  RelayWork *w = k->w;
  W->g = (Geth){.p = b->params,
                .ew = k->ew,
                .ec = k->ec,
                .cls = k->cls,
                .qlat = k->qlat,
                .xfer = W->xfer,
                .off = k->off,
                .gid = k->gid,
                .nh = k->nh,
                .worker_of = k->worker_of,
                .split_of = k->split_of,
                .slice_off = k->slice_off,
                .slice_edge = k->slice_edge,
                .split_sched = k->split_sched,
                .n_workers = k->n_workers,
                .first_push = w->first_push,
                .announce = w->announce,
                .upload_free = k->upload_free,
                .scratch = W->scratch,
                .q = &W->q,
                .out = &k->mb[(gsize)W->index * k->n_workers],
                .key = b->key,
                .t0 = b->t0,
                .wait = b->wait,
                .timeout = b->timeout,
                .last_decision_after_have = b->last_decision_after_have,
                .step_lb_announce = b->step_lb_announce,
                .me = W->index};
  Geth *g = &W->g;
  for (guint32 c = 0; c < k->n_cls; c++) {
    double ns = b->size_bytes * k->cls[c].tx_ns_per_byte; /* net_edge_transfer_ns() */
    W->xfer[c] = ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
  }
  const guint32 lo = W->lo, hi = W->hi;
  for (guint32 v = lo; v < hi; v++) {
    g->nh[v].have = g->first_push[v] = g->announce[v] = SIM_TIME_MAX;
    g->nh[v].done = DONE_NO;
  }
  /* Nothing sent or heard yet (edge_words_reset). */
  edge_words_reset(g->ew + g->off[lo], g->ew + g->off[hi]);
  queue_reset(&W->q);
  for (guint d = 0; d < k->n_workers; d++) {
    g->out[d].len = 0;
    g->out[d].pub[0] = g->out[d].pub[1] = 0;
    W->read[d] = 0;
  }
  W->reached = W->steps = W->pruned = 0;
  W->inbox_win = 0; /* read by the others only after the first window's barrier */
  W->n_share = 0;
  const NetTopology *t = k->topo;
  if (G_UNLIKELY(t->n_joining)) {
    for (guint32 i = b->join_first; i < t->n_joining; i++) {
      guint32 v = k->loc[t->join_node[i]];
      if (v < lo || v >= hi) continue;
      g->nh[v].done = DONE_UNAVAILABLE;
      g->nh[v].have = HAVE_UNAVAILABLE;
    }
    /* A node that mined the block has it, synced or not. */
    for (guint i = 0; i < b->n_src; i++) {
      guint32 v = b->src[i];
      if (v >= lo && v < hi && g->nh[v].done == DONE_UNAVAILABLE) {
        g->nh[v].done = DONE_NO;
        g->nh[v].have = SIM_TIME_MAX;
      }
    }
  }
  if (k->seen_words) memset(W->seen, 0, k->seen_words * sizeof *W->seen);
  W->fresh = FALSE;
  for (guint i = 0; i < b->n_src; i++)
    if (b->src[i] >= lo && b->src[i] < hi) relax_full(g, b->src[i], b->src_t[i]);
  /* Each queue ends with UINT64_MAX (no step has that key), so its head needs no length check. */
  W->fifo_head[0] = W->fifo_head[1] = W->fifo_len[0] = W->fifo_len[1] = 0;
  W->fifo[0][0] = W->fifo[1][0] = UINT64_MAX;
}

/* Split node v announces at `at` (SPLIT_MIN_DEGREE): split if that is after the window (ending at `end`) of
 * its HAVE step, so that the other workers learn of it (a slice message each, applied at the window's end)
 * before they reach it. */
static void __attribute__((noinline, cold)) split_schedule(const Geth *g, guint32 v, SimTime at, SimTime end) {
  guint32 i = g->split_of[v];
  g->split_sched[i] = at >= end;
  if (!g->split_sched[i]) return;
  const guint32 *so = g->slice_off + (gsize)i * (g->n_workers + 1);
  for (guint d = 0; d < g->n_workers; d++) {
    if (d == g->me || so[d] == so[d + 1]) continue;
    Mailbox *mb = &g->out[d];
    mb->msg[mb->len++] =
        (Msg){.word = MIN((guint64)(at - g->t0), MSG_TIME_MASK) | (guint64)v << MSG_TO_SHIFT | MSG_SLICE_BIT};
  }
}

/* Whether node v's step at `now` can be skipped: for every open target, now plus v's least cost to it (the
 * block's table: Kernel.tdist for the messages of a push, tdist0 for those of an announcement) is after its
 * value (its value cannot be lowered, nor tied, by anything the step would cause). */
static inline gboolean prune_ok(const Kernel *k, guint32 v, SimTime now, const guint32 *tdist) {
  const guint32 *dv = tdist + (gsize)v * k->n_tg;
  for (guint32 i = 0; i < k->n_active; i++) {
    guint32 T = k->active[i];
    if (dv[T] != G_MAXUINT32 && now + (SimTime)dv[T] * 1000 <= k->snap[T]) return FALSE;
  }
  return TRUE;
}

/* Another worker's node v announces at `now` (SPLIT_MIN_DEGREE): this worker's share, its own nodes among v's
 * peers, once v's owner has applied this window's messages. The owner takes the step too (and counts it):
 * the same skipping test, on the same state. v's words read here are written by no one else in this window
 * (its owner wrote them applying messages sent in earlier windows; a message sent in this one arrives after
 * the announcement, and is applied after the window), and its sent bits are left alone: the announcement is
 * v's last step. */
static ShareDelta __attribute__((noinline, cold)) announce_share(Kernel *k, const Geth *proto, guint32 v, SimTime now,
                                                                 guint64 win) {
  Geth c = share_geth(proto), *g = &c;
  const Worker *O = k->workers[g->worker_of[v]];
  /* The owner applies its inbox first thing in the window: a short wait, unless the threads outnumber the
   * cores and the owner waits for this one's core (then give it up: sched_yield after 1,024 looks). */
  for (unsigned i = 0; __atomic_load_n(&O->inbox_win, __ATOMIC_ACQUIRE) <= win; i++) {
    if (i < 1024)
      sim_cpu_relax();
    else
      sched_yield();
  }
  if (k->pruning && prune_ok(k, v, now, k->tdist0)) return share_delta(g);
  SimTime upload_free = g->upload_free[v];
  guint64 after = heard_after(g, now);
  const guint32 *so = g->slice_off + (gsize)g->split_of[v] * (g->n_workers + 1) + g->me;
  for (guint32 i = so[0]; i < so[1]; i++) {
    guint32 e = g->slice_edge[i];
    guint64 x = share_seen(g, e, after);
    if ((x & EDGE_STATE_MASK) - after >= EDGE_SENT_BIT - after) continue;
    g->messages++;
    share_decide(g, e, x, now, upload_free); /* every receiver is this worker's */
  }
  return share_delta(g);
}

/* Window `win` of worker W, [start, start + window): the messages of the last window first, then every step
 * before the end. Returns a lower bound on every step W may still take or cause; adds its work to *work. */
static SimTime worker_window(Kernel *k, Worker *W, SimTime start, guint64 win, guint64 *work) {
  const BlockSpec *b = &k->blk;
  guint64 work0 = W->work0;
  /* In a local whose address no call takes, so that its counters and pointers stay in registers. */
  Geth g = W->g;
  if (k->pruning) relay_kernel_snap_part(k, W);
  const gboolean pruning = k->pruning;
  guint64 pruned = W->pruned;
  SimTime end = start < SIM_TIME_MAX - k->window ? start + k->window : SIM_TIME_MAX;
  guint64 dt_end = (guint64)(end - g.t0);
  guint64 key_end = dt_end > STEP_TIME_MAX ? UINT64_MAX : dt_end << STEP_KEY_SHIFT;
  g.bound = SIM_TIME_MAX;
  guint64 *fifo[2] = {W->fifo[0], W->fifo[1]};
  gsize fifo_head[2] = {W->fifo_head[0], W->fifo_head[1]}, fifo_len[2] = {W->fifo_len[0], W->fifo_len[1]};
  StepQueue *q = &W->q;
  guint64 reached = W->reached, steps = W->steps;
  const guint32 stop_n = b->stop_n;
  guint64 key;
  for (;;) {
    /* The smallest of the queue heads, the bins' and the heap's (q->min is UINT64_MAX when empty). */
    key = fifo[0][fifo_head[0]];
    int from = 0;
    if (fifo[1][fifo_head[1]] < key) key = fifo[1][fifo_head[1]], from = 1;
    if (q->min < key) key = q->min, from = 3;
    if (G_UNLIKELY(q->heap_len) && q->heap[0] < key) key = q->heap[0], from = 2;
    if (key == UINT64_MAX) break;
    SimTime now = g.t0 + (SimTime)(key >> STEP_KEY_SHIFT);
    guint32 v = (guint32)(key >> 2) & STEP_NODE_MASK;
    guint32 kind = (guint32)(key & 3);
    /* A superseded arrival is dropped wherever it is, so that the bound below is a live step's. */
    gboolean stale = kind == STEP_HAVE && (g.nh[v].done || now != g.nh[v].have);
    if (!stale && key >= key_end) break;
    if (from == 3)
      queue_pop(q);
    else if (from == 2)
      heap_pop(q);
    else
      fifo_head[from]++;
    if (stale) continue;
    steps++;
    switch (kind) {
    case STEP_HAVE: {
      g.nh[v].done = DONE_YES;
      reached++;
      if (G_UNLIKELY(g.gid[v] < stop_n)) {
        guint32 grp = b->stop_group ? b->stop_group[g.gid[v]] : g.gid[v];
        if (grp != RELAY_STOP_NONE) {
          W->seen[grp >> 6] |= UINT64_C(1) << (grp & 63);
          W->fresh = TRUE;
        }
      }
      /* A node whose steps cannot matter any more has the block, and does nothing with it: its push comes
       * verify after it (a source's at once), its announcement import later still, which costs no less
       * than the cheapest hop of tdist. */
      if (pruning && prune_ok(k, v, now > b->last_source_t ? now + b->verify : now, k->tdist)) {
        pruned++;
        break;
      }
      gboolean source = FALSE;
      if (now <= b->last_source_t)
        for (guint i = 0; i < b->n_src && !source; i++)
          source = b->src[i] == v && b->src_t[i] == now;
      if (source) {
        /* A miner's own block is already imported: push and announce at once (minedBroadcastLoop). Into
         * the step queue: a later source can come after other nodes' HAVE steps (it would break the FIFOs'
         * order). */
        queue_push(q, step_key(&g, now, v, STEP_PUSH));
        queue_push(q, step_key(&g, now, v, STEP_ANNOUNCE));
      } else {
        /* HAVE steps come in time order, so their PUSH and ANNOUNCE steps a fixed time later do too. */
        fifo[0][fifo_len[0]++] = step_key(&g, now + b->verify, v, STEP_PUSH);
        fifo[1][fifo_len[1]++] = step_key(&g, now + b->verify + b->import, v, STEP_ANNOUNCE);
        fifo[0][fifo_len[0]] = fifo[1][fifo_len[1]] = UINT64_MAX;
      }
      if (G_UNLIKELY(g.nh[v].special) && g.split_of && g.split_of[v] != G_MAXUINT32)
        split_schedule(&W->g, v, source ? now : now + b->verify + b->import, end);
      break;
    }
    /* A push or announcement skipped as above: the node's later steps are skipped too (the values only
     * fall and the time only grows). */
    case STEP_PUSH:
      if (pruning && prune_ok(k, v, now, k->tdist)) {
        pruned++;
        break;
      }
      geth_push(&g, v, now);
      break;
    default:
      if (pruning && prune_ok(k, v, now, k->tdist0)) {
        pruned++;
        break;
      }
      if (G_UNLIKELY(g.split_of && g.off[v + 1] - g.off[v] >= SPLIT_MIN_DEGREE) && g.split_of[v] != G_MAXUINT32 &&
          g.split_sched[g.split_of[v]]) {
        share_add(&g, announce_own_share(&W->g, v, now));
        break;
      }
      geth_announce(&g, v, now);
      break;
    }
  }
  /* The shares of other workers' announcements in this window, after this worker's steps (SPLIT_MIN_DEGREE). */
  if (G_UNLIKELY(W->n_share) && W->share[0] < key_end) {
    guint32 i = 0;
    for (; i < W->n_share && W->share[i] < key_end; i++) {
      SimTime at = g.t0 + (SimTime)(W->share[i] >> STEP_KEY_SHIFT);
      share_add(&g, announce_share(k, &W->g, (guint32)(W->share[i] >> 2) & STEP_NODE_MASK, at, win));
    }
    memmove(W->share, W->share + i, (W->n_share - i) * sizeof *W->share);
    W->n_share -= i;
  }
  for (guint d = 0; d < k->n_workers; d++)
    g.out[d].pub[win & 1] = g.out[d].len;
  W->fifo_head[0] = fifo_head[0];
  W->fifo_head[1] = fifo_head[1];
  W->fifo_len[0] = fifo_len[0];
  W->fifo_len[1] = fifo_len[1];
  W->reached = reached;
  W->steps = steps;
  W->pruned = pruned;
  W->g = g;
  *work += steps + g.messages + g.deferred - work0;
  return MIN(g.bound, key == UINT64_MAX ? SIM_TIME_MAX : g.t0 + (SimTime)(key >> STEP_KEY_SHIFT));
}
/* Thread p's part of the block (of k->n_run threads): workers p, p + n_run, ... window by window. */
void relay_kernel_thread_block(Kernel *k, guint p) {
  const guint n = k->n_workers, run = k->n_run;
  for (guint i = p; i < n; i += run)
    worker_begin(k, k->workers[i]);
  SimTime start = k->blk.t0;
  for (guint64 win = 0;; win++) {
    Slot mine = {.bound = SIM_TIME_MAX};
    /* The messages of the last window first, every worker's, then the windows: a split announcement waits
     * for its owner's (announce_share), which the calling thread alone must then have applied already. */
    for (guint i = p; i < n; i += run) {
      Worker *W = k->workers[i];
      W->work0 = W->steps + W->g.messages + W->g.deferred;
      if (win > 0) apply_inbox(k, W, &W->g, (guint)(win - 1) & 1);
      __atomic_store_n(&W->inbox_win, win + 1, __ATOMIC_RELEASE);
    }
    for (guint i = p; i < n; i += run) {
      guint64 work = 0;
      SimTime bound = worker_window(k, k->workers[i], start, win, &work);
      mine.bound = MIN(mine.bound, bound);
      mine.work += work;
      mine.work_max = MAX(mine.work_max, work);
    }
    SimTime next;
    gboolean stop;
    if (run == 1) {
      next = mine.bound;
      if (k->pruning) relay_kernel_snap_merge(k, next);
      stop = relay_kernel_stop_reached(k, next);
      k->work += mine.work;
      k->work_critical += mine.work_max;
      /* A RelayPipe's job: what is final now, for its reader (once per window, out of the step loop). */
      if (G_UNLIKELY(k->progress)) relay_progress_publish(k, stop ? SIM_TIME_MAX : next);
    } else {
      relay_kernel_barrier(k, p, &mine, &next, &stop);
    }
    if (p == 0) k->w->stats.windows++;
    if (stop) {
      /* What the last window sent still arrives (first block messages and announcements of the specials). */
      for (guint i = p; i < n; i += run) {
        Worker *W = k->workers[i];
        apply_inbox(k, W, &W->g, (guint)win & 1);
        /* The results, where RelayWork's readers find them. */
        for (guint32 v = W->lo; v < W->hi; v++) {
          k->w->have[v] = k->nh[v].have;
          k->w->done[v] = k->nh[v].done;
        }
      }
      break;
    }
    start = next;
  }
}

static void geth_propagate(const void *params, const NetGeoParams *gp, const NetTopology *t,
                           const RelayBlock *b, const RelayStop *stop, SimRng *rng, RelayWork *w) {
  const GethParams *p = params;
  g_return_if_fail(t->n_nodes < (UINT32_C(1) << EDGE_TO_BITS) && w->n_nodes == t->n_nodes);
  gint64 c0 = sim_mono_ns();
  Kernel *k = relay_kernel_get(w, gp, t);
  k->progress = w->progress;
  k->tg_forced = w->tg_forced;
  k->tg_key = w->tg_key;
  k->tg_shared = w->tg_shared;
  BlockSpec *bs = &k->blk;
  bs->key = sim_rng_u64(rng);
  if (b->n_sources == 0) {
    relay_work_reset_nodes(w);
    return;
  }
  if (b->n_sources > bs->src_cap) {
    bs->src_cap = b->n_sources;
    bs->src = g_renew(guint32, bs->src, bs->src_cap);
    bs->src_t = g_renew(SimTime, bs->src_t, bs->src_cap);
  }
  bs->params = p;
  bs->n_src = b->n_sources;
  bs->t0 = SIM_TIME_MAX;
  bs->last_source_t = INT64_MIN;
  for (guint i = 0; i < b->n_sources; i++) {
    bs->src[i] = k->loc[b->sources[i]];
    bs->src_t[i] = b->source_t[i];
    bs->t0 = MIN(bs->t0, b->source_t[i]);
    bs->last_source_t = MAX(bs->last_source_t, b->source_t[i]);
  }
  bs->verify = ms(p->verify_ms);
  bs->import = geth_import_ns(p, b->gas_used);
  bs->wait = ms(p->arrive_timeout_ms);
  bs->timeout = ms(p->fetch_timeout_ms);
  bs->last_decision_after_have = bs->verify + bs->import;
  /* arriveTimeout and five messages, each at least the lookahead (capped: a lower bound stays one). */
  bs->step_lb_announce = bs->wait + 5 * MIN(relay_groups_lookahead(w->groups, NULL, NULL), 60 * SIM_NS_PER_S);
  relay_kernel_stop_prepare(k, t, stop);
  k->pruning = p->prune && bs->stop_n > 0 &&
               (guint64)(bs->stop_groups + bs->stop_msgs) * k->n_nodes <= PRUNE_MAX_ENTRIES;
  if (k->pruning) {
    if (!k->tg_built || k->tg_group != bs->stop_group || k->tg_n != bs->stop_n || k->tg_groups != bs->stop_groups ||
        k->tg_msgs != bs->stop_msgs)
      relay_kernel_targets_build(k);
    relay_kernel_targets_select(k, b->size_bytes, geth_import_ns(p, 0), p->prune_table_after);
    /* Window 0 prunes nothing: every target open, at no value yet. */
    /* Stored only where changed, as relay_kernel_snap_merge does. */
    if (k->n_active != k->n_tg) k->n_active = k->n_tg;
    for (guint32 T = 0; T < k->n_tg; T++) {
      if (k->snap[T] != SIM_TIME_MAX) k->snap[T] = SIM_TIME_MAX;
      if (k->active[T] != T) k->active[T] = T;
    }
  }
  bs->join_first = t->n_joining ? net_joining_first_unavailable(t, bs->t0) : 0;
  bs->size_bytes = b->size_bytes;
  w->loc = k->loc;
  k->work = k->work_critical = 0;
  guint n = k->n_workers;
  k->sched.probing = FALSE;
  gboolean all = n > 1 && relay_kernel_schedule_all(w, k);
  k->n_run = all ? n : 1;
  memset(k->wait_s, 0, (gsize)n * WAIT_STRIDE * sizeof *k->wait_s);
  gint64 r0 = sim_mono_ns();
  if (all)
    relay_kernel_run_all(k);
  else
    relay_kernel_thread_block(k, 0);
  gint64 r1 = sim_mono_ns();
  if (n > 1 && k->sched.probing) {
    k->sched.ns[all] += (double)(r1 - r0);
    k->sched.work[all] += (double)k->work;
  }
  guint64 reached = 0, messages = 0;
  RelayWorkStats *st = &w->stats;
  for (guint i = 0; i < n; i++) {
    const Worker *W = k->workers[i];
    reached += W->reached;
    messages += W->g.messages;
    st->steps += W->steps;
    st->pruned += W->pruned;
    st->deferred += W->g.deferred;
    st->posted += W->g.posted;
    st->draws += W->g.draws;
    st->split += W->g.split;
    st->wait_s[i] += k->wait_s[(gsize)i * WAIT_STRIDE];
  }
  w->reached = reached;
  w->messages = messages;
  st->messages += messages;
  st->threads = n;
  st->propagations++;
  st->alone += n > 1 && !all;
  st->work += k->work;
  st->work_critical += k->work_critical;
  st->prune_tables = k->tg_cache_n;
  st->tables_built = k->tables_built;
  st->wall_s += (double)(r1 - c0) / 1e9;
}

const RelayModel relay_geth = {
    .info = {.name = "geth-1.8.23", .family = "relay",
             .help = "eth/63 as Geth 1.8.23: push to sqrt(peers lacking it) after verification, announce the hash "
                     "to the rest after import; announced blocks are fetched after arriveTimeout",
             .params = geth_params, .n_params = G_N_ELEMENTS(geth_params), .params_size = sizeof(GethParams)},
    .propagate = geth_propagate,
    .import_ns = geth_import_ns,
};
