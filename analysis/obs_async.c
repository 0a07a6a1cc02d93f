/* obs_async.c: the queued sink (obs_async.h). One producer; records applied under a lock, in queue order.
 *
 * The ring: the producer writes record `head` (mod capacity) then publishes head + 1 (release); whoever holds
 * the lock (a pthread mutex: the helper only tries it) applies record `tail` and publishes tail + 1
 * (release), which frees its slot. The producer waits
 * for room only by applying records itself. The inner sink's state is touched only under the lock (its
 * acquire and release order one applier's writes before the next one's reads), and by the producer after
 * `finish` (which took the lock last). */
#include "obs_async.h"

#include <pthread.h>
#include <string.h>

enum { REC_TX = 1, REC_INCLUSION, REC_MAIN };

typedef struct {
  guint8 kind;
  gboolean has_recv;
  union {
    ObsTx tx;
    ObsTxInclusion inclusion;
    struct {
      uint32_t height;
      uint64_t block;
      int64_t mined_ns;
    } main;
  } u;
} Rec;

struct ObsAsync {
  ObsSink inner;
  guint cap;
  guint n_recv; /* receptions per record, from the `vantages` call (0 before it) */
  Rec *rec;
  int64_t *recv; /* cap x n_recv */
  GError *error; /* the first inner failure (set under the lock, before `failed`) */
  guint64 by_helper, by_producer; /* under the lock */
  _Alignas(64) guint64 head;      /* written by the producer */
  _Alignas(64) guint64 tail;      /* written under the lock */
  _Alignas(64) pthread_mutex_t lock; /* pthreads: ThreadSanitizer sees through them */
  int failed;
};

static gboolean try_lock(ObsAsync *q) { return pthread_mutex_trylock(&q->lock) == 0; }

static void lock(ObsAsync *q) { pthread_mutex_lock(&q->lock); }

static void unlock(ObsAsync *q) { pthread_mutex_unlock(&q->lock); }

/* Applies record i (under the lock); returns its kind. After a failure the rest are dropped. */
static guint8 apply(ObsAsync *q, guint64 i) {
  const Rec *r = &q->rec[i % q->cap];
  const int64_t *recv = r->has_recv ? q->recv + (i % q->cap) * q->n_recv : NULL;
  if (q->error) return r->kind;
  GError *e = NULL;
  gboolean ok = TRUE;
  switch (r->kind) {
  case REC_TX:
    ok = q->inner.tx_seen(q->inner.user, &r->u.tx, recv, &e);
    break;
  case REC_INCLUSION:
    ok = q->inner.tx_inclusion(q->inner.user, &r->u.inclusion, &e);
    break;
  default:
    ok = q->inner.main_block(q->inner.user, r->u.main.height, r->u.main.block, r->u.main.mined_ns, recv, &e);
    break;
  }
  if (!ok) {
    q->error = e ? e : g_error_new_literal(G_FILE_ERROR, G_FILE_ERROR_FAILED, "a queued record was refused");
    __atomic_store_n(&q->failed, 1, __ATOMIC_RELEASE);
  }
  return r->kind;
}

/* The producer (under the lock): applies records up to `until`, publishing the tail after each, and counts
 * them as its own. */
static void apply_until(ObsAsync *q, guint64 until) {
  for (guint64 t = q->tail; t < until; t++) {
    apply(q, t);
    __atomic_store_n(&q->tail, t + 1, __ATOMIC_RELEASE);
    q->by_producer++;
  }
}

/* The producer: everything queued applied, the lock held on return. */
static void drain_locked(ObsAsync *q) {
  lock(q);
  apply_until(q, q->head);
}

/* The producer: the first inner failure, if any, as its own error (the records after it were dropped). */
static gboolean report(ObsAsync *q, GError **error) {
  if (!__atomic_load_n(&q->failed, __ATOMIC_ACQUIRE)) return TRUE;
  if (error) *error = g_error_copy(q->error);
  return FALSE;
}

/* The producer: the next free record, making room by applying a quarter of the queue if it is full. */
static Rec *next_rec(ObsAsync *q) {
  guint64 h = q->head;
  if (h - __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) == q->cap) {
    lock(q);
    apply_until(q, MIN(h, q->tail + MAX(q->cap / 4, 1)));
    unlock(q);
  }
  return &q->rec[h % q->cap];
}

static void publish(ObsAsync *q) { __atomic_store_n(&q->head, q->head + 1, __ATOMIC_RELEASE); }

/* Copies the receptions of the record about to be published; FALSE when they cannot be queued (no vantage
 * table yet): the caller then applies the call itself. */
static gboolean put_recv(ObsAsync *q, Rec *r, const int64_t *recv) {
  r->has_recv = recv != NULL;
  if (!recv) return TRUE;
  if (q->n_recv == 0) return FALSE;
  memcpy(q->recv + (q->head % q->cap) * q->n_recv, recv, q->n_recv * sizeof *recv);
  return TRUE;
}

static void as_vantages(gpointer user, const char *const *names, guint n) {
  ObsAsync *q = user;
  drain_locked(q);
  if (n != q->n_recv) {
    g_free(q->recv);
    q->n_recv = n;
    q->recv = n ? g_new(int64_t, (gsize)q->cap * n) : NULL;
  }
  q->inner.vantages(q->inner.user, names, n);
  unlock(q);
}

static gboolean as_block(gpointer user, const ObsBlock *block, GError **error) {
  ObsAsync *q = user;
  drain_locked(q);
  gboolean ok = report(q, error) && q->inner.block(q->inner.user, block, error);
  unlock(q);
  return ok;
}

static gboolean as_tx_seen(gpointer user, const ObsTx *tx, const int64_t *recv_ns, GError **error) {
  ObsAsync *q = user;
  if (!report(q, error)) return FALSE;
  Rec *r = next_rec(q);
  if (!put_recv(q, r, recv_ns)) {
    drain_locked(q);
    gboolean ok = report(q, error) && q->inner.tx_seen(q->inner.user, tx, recv_ns, error);
    unlock(q);
    return ok;
  }
  r->kind = REC_TX;
  r->u.tx = *tx;
  publish(q);
  return TRUE;
}

static gboolean as_tx_inclusion(gpointer user, const ObsTxInclusion *inclusion, GError **error) {
  ObsAsync *q = user;
  if (!report(q, error)) return FALSE;
  Rec *r = next_rec(q);
  r->has_recv = FALSE;
  r->kind = REC_INCLUSION;
  r->u.inclusion = *inclusion;
  publish(q);
  return TRUE;
}

static gboolean as_main_block(gpointer user, uint32_t height, uint64_t block, int64_t mined_ns,
                              const int64_t *recv_ns, GError **error) {
  ObsAsync *q = user;
  if (!report(q, error)) return FALSE;
  Rec *r = next_rec(q);
  if (!put_recv(q, r, recv_ns)) {
    drain_locked(q);
    gboolean ok = report(q, error) && q->inner.main_block(q->inner.user, height, block, mined_ns, recv_ns, error);
    unlock(q);
    return ok;
  }
  r->kind = REC_MAIN;
  r->u.main.height = height;
  r->u.main.block = block;
  r->u.main.mined_ns = mined_ns;
  publish(q);
  return TRUE;
}

static void as_finish(gpointer user) {
  ObsAsync *q = user;
  drain_locked(q);
  q->inner.finish(q->inner.user);
  unlock(q);
}

ObsAsync *obs_async_new(const ObsSink *inner, guint capacity) {
  g_return_val_if_fail(inner != NULL, NULL);
  ObsAsync *q = g_aligned_alloc0(1, sizeof *q, 64);
  q->inner = *inner;
  q->cap = capacity ? capacity : 4096;
  q->rec = g_new(Rec, q->cap);
  pthread_mutex_init(&q->lock, NULL);
  return q;
}

void obs_async_free(ObsAsync *q) {
  if (!q) return;
  drain_locked(q);
  unlock(q);
  g_free(q->rec);
  g_free(q->recv);
  g_clear_error(&q->error);
  pthread_mutex_destroy(&q->lock);
  g_aligned_free(q);
}

void obs_async_sink(ObsAsync *q, ObsSink *out) {
  g_return_if_fail(q != NULL && out != NULL);
  const ObsSink *in = &q->inner;
  *out = (ObsSink){.user = q,
                   .vantages = in->vantages ? as_vantages : NULL,
                   .block = in->block ? as_block : NULL,
                   .tx_seen = in->tx_seen ? as_tx_seen : NULL,
                   .tx_inclusion = in->tx_inclusion ? as_tx_inclusion : NULL,
                   .main_block = in->main_block ? as_main_block : NULL,
                   .finish = in->finish ? as_finish : NULL};
}

gboolean obs_async_consume(gpointer p) {
  ObsAsync *q = p;
  if (__atomic_load_n(&q->tail, __ATOMIC_RELAXED) == __atomic_load_n(&q->head, __ATOMIC_ACQUIRE)) return FALSE;
  if (!try_lock(q)) return FALSE;
  guint64 t = q->tail, h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE), n = 0;
  while (t < h && n < 64) {
    guint8 kind = apply(q, t);
    __atomic_store_n(&q->tail, ++t, __ATOMIC_RELEASE);
    n++;
    if (kind == REC_MAIN) break;
  }
  q->by_helper += n;
  unlock(q);
  return n > 0;
}

void obs_async_counts(const ObsAsync *q, guint64 *by_helper, guint64 *by_producer) {
  ObsAsync *m = (ObsAsync *)q;
  lock(m);
  if (by_helper) *by_helper = q->by_helper;
  if (by_producer) *by_producer = q->by_producer;
  unlock(m);
}
