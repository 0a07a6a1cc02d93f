/* relay_threads.c: the Geth kernel's threads: spinning then futex waits, the window barrier, starting and
 * stopping the threads, and the choice of how many run a block. */
#include "relay-private.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* Waiting: spin up to SPIN_NS, then sleep on a futex (sim/core/spinwait.h). */
static void wait_change(unsigned *addr, unsigned val, unsigned *sleepers) {
  sim_wait_change(addr, val, sleepers, SPIN_NS);
}

/* The window barrier: publishes thread p's slot, returns everyone's least bound and whether to stop. */
void relay_kernel_barrier(Kernel *k, guint p, const Slot *mine, SimTime *next, gboolean *stop) {
  Slot *s = &k->slots[p];
  s->bound = mine->bound;
  s->work = mine->work;
  s->work_max = mine->work_max;
  unsigned gen = __atomic_load_n(&k->bar_gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&k->bar_count, 1, __ATOMIC_ACQ_REL) == k->n_run) {
    __atomic_store_n(&k->bar_count, 0, __ATOMIC_RELAXED);
    SimTime b = SIM_TIME_MAX;
    guint64 most = 0;
    for (guint i = 0; i < k->n_run; i++) {
      b = MIN(b, k->slots[i].bound);
      k->work += k->slots[i].work;
      most = MAX(most, k->slots[i].work_max);
    }
    k->work_critical += most;
    k->bar_bound = b;
    if (k->pruning) relay_kernel_snap_merge(k, b);
    k->bar_stop = relay_kernel_stop_reached(k, b);
    sim_bump_and_wake(&k->bar_gen, &k->bar_sleepers);
  } else {
    gint64 t0 = sim_mono_ns();
    wait_change(&k->bar_gen, gen, &k->bar_sleepers);
    k->wait_s[(gsize)p * WAIT_STRIDE] += (double)(sim_mono_ns() - t0) / 1e9;
  }
  *next = k->bar_bound;
  *stop = k->bar_stop;
}

/* ---- threads ---- */

/* Thread 1's naps between looks for side work once its spin is over (the blocks may run on the calling thread
 * alone for a while: RELAY_RUN_ADAPTIVE): a wake-up costs a few µs, a thousand a second while it waits. */
#define IDLE_NAP_NS 1000000

/* Side work until there is none or a block starts (TRUE: a block started). */
static gboolean side_work(Kernel *k, Thread *T) {
  for (;;) {
    if (__atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE) != T->seen) return TRUE;
    if (!k->idle(k->idle_user)) return FALSE;
  }
}

/* Thread T's wait for the next block. Thread 1 does the side work meanwhile (relay_work_set_idle): it spins
 * SPIN_NS past the last of it, then naps IDLE_NAP_NS at a time on the block's futex, looking for side work
 * after each nap. */
static void wait_block(Kernel *k, Thread *T) {
  if (T->index != 1 || !k->idle) {
    wait_change(&k->block_gen, T->seen, &k->park_sleepers);
    return;
  }
  gint64 until = sim_mono_ns() + SPIN_NS;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE) != T->seen) return;
    if ((i & 15) == 0 && k->idle(k->idle_user)) {
      until = sim_mono_ns() + SPIN_NS;
      continue;
    }
    sim_cpu_relax();
    if ((i & 63) == 0 && sim_mono_ns() > until) break;
  }
  const struct timespec nap = {0, IDLE_NAP_NS};
  for (;;) {
    /* As sim_wait_change sleeps (counted in park_sleepers, so that the next block's bump wakes it), but for a
     * nap at most. */
    __atomic_add_fetch(&k->park_sleepers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&k->block_gen, __ATOMIC_SEQ_CST) == T->seen)
      syscall(SYS_futex, &k->block_gen, FUTEX_WAIT_PRIVATE, T->seen, &nap, NULL, 0);
    __atomic_sub_fetch(&k->park_sleepers, 1, __ATOMIC_SEQ_CST);
    if (side_work(k, T)) return;
  }
}

static void *thread_main(void *arg) {
  Thread *T = arg;
  Kernel *k = T->k;
  for (;;) {
    wait_block(k, T);
    T->seen = __atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&k->quit, __ATOMIC_ACQUIRE)) return NULL;
    if (T->index >= k->n_run) continue; /* this block runs on fewer threads */
    relay_kernel_thread_block(k, T->index);
    sim_bump_and_wake(&k->finished, &k->fin_sleepers);
  }
}

void relay_kernel_stop_threads(Kernel *k) {
  if (!k || !k->started) return;
  __atomic_store_n(&k->quit, 1, __ATOMIC_RELEASE);
  sim_bump_and_wake(&k->block_gen, &k->park_sleepers);
  for (guint i = 1; i < k->n_workers; i++)
    pthread_join(k->threads[i]->tid, NULL);
  k->started = FALSE;
  __atomic_store_n(&k->quit, 0, __ATOMIC_RELEASE);
}

static void kernel_start_threads(Kernel *k) {
  k->idle = k->w->idle;
  k->idle_user = k->w->idle_user;
  /* Signals go to the calling thread: the others block them all. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (guint i = 1; i < k->n_workers; i++) {
    Thread *T = k->threads[i];
    T->seen = __atomic_load_n(&k->block_gen, __ATOMIC_ACQUIRE);
    int rc = pthread_create(&T->tid, NULL, thread_main, T);
    if (rc != 0) g_error("relay: cannot start a thread: %s", g_strerror(rc));
  }
  k->started = TRUE;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void relay_kernel_run_all(Kernel *k) {
  guint n = k->n_workers;
  if (!k->started) kernel_start_threads(k);
  __atomic_store_n(&k->finished, 0, __ATOMIC_RELAXED);
  sim_bump_and_wake(&k->block_gen, &k->park_sleepers); /* publishes the block (sequentially consistent) */
  relay_kernel_thread_block(k, 0);
  for (;;) {
    unsigned f = __atomic_load_n(&k->finished, __ATOMIC_ACQUIRE);
    if (f == n - 1) break;
    wait_change(&k->finished, f, &k->fin_sleepers);
  }
}

/* Whether the next block runs on all threads (see Schedule). */
gboolean relay_kernel_schedule_all(RelayWork *w, Kernel *k) {
  if (w->run == RELAY_RUN_ALL) return TRUE;
  if (w->run == RELAY_RUN_CALLER) return FALSE;
  Schedule *sc = &k->sched;
  guint64 at = sc->at++;
  if (at == 0) sc->ns[0] = sc->ns[1] = sc->work[0] = sc->work[1] = 0;
  sc->probing = at < 2 * SCHED_PROBE;
  if (sc->probing) return at & 1; /* alone, all, alone, ... */
  if (at == 2 * SCHED_PROBE && sc->work[0] > 0 && sc->work[1] > 0)
    sc->all = sc->ns[1] / sc->work[1] < sc->ns[0] / sc->work[0];
  if (sc->at >= SCHED_PERIOD) sc->at = 0;
  return sc->all;
}
