/* relay_pipe.c: successive blocks' relays run at the same time (RelayPipe, relay.h). A block's relay is a
 * pure function of the topology, the block and its random stream, so a job that runs it on a RelayWork of
 * its own, on another thread, gives exactly what geo_publish's synchronous propagate gives; the caller reads
 * each watched node's arrival as soon as the kernel has made it final (RelayProgress, published at each
 * window's end by relay_kernel_thread_block) and the whole result once the job is done.
 *
 * Memory: each thread (the pipe's and the helper) has a RelayWork with a Geth kernel of its own, built at its
 * first job: 32 bytes per node of results, the packed edges (16 bytes per directed edge), 16 + 8 + 4 bytes
 * per node of node state and offsets, the step queue and FIFOs (about 16 bytes per node); each slot holds a
 * job's results (32 bytes per node). The pruning tables (4 bytes per node and stop target for the floors
 * alone, twice that per size class, at most TG_CACHE_BYTES) are the pipe's, built once by the first kernel
 * that needs one and read by all (TgShared): two relays running at once then read one copy, which on
 * pools-2019 at 2 threads (8,000 heights, 4 interleaved rounds) made the run 5% faster and its peak RSS
 * 112 MB against 129 with a copy per kernel. The edges' static halves and link classes are still per
 * kernel (sharing them measured no faster).
 *
 * One thing a block's relay does depend on besides its inputs: which size class's pruning table the Geth
 * kernel has built (prune_table_after counts the blocks of each class it relayed). A slot sees only some of
 * the blocks, so the pipe replays one kernel's decisions over all of them in start order (relay_tg_plan)
 * and has each job use that table: the same skipped steps, so the same unwatched times, reached counts
 * and statistics as the synchronous relay, not just the same watched values. */
#include "relay-private.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

/* AddressSanitizer must be told of a switch between stacks (else it reports the other stack's frames as
 * overflows); a no-op without it. */
#if defined(__SANITIZE_ADDRESS__)
#define HELPER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HELPER_ASAN 1
#endif
#endif

typedef enum { JOB_FREE = 0, JOB_QUEUED, JOB_RUNNING, JOB_DONE } JobState;

/* A slot and the job it holds. The starting thread fills the inputs while the slot is free; the pipe's
 * thread that takes it runs it; the starting thread reads the progress meanwhile and the work once done. */
struct RelayJob {
  RelayPipe *pipe;
  guint index;
  RelayWork *work; /* the results, copied from the running thread's work at the end (no kernel of its own) */
  gint tg_key;     /* the size-class table the relay uses (relay_tg_plan), -1: none */
  /* The block, copied: the caller's arrays and stream may change once relay_pipe_start returns. */
  RelayBlock b;
  guint32 *sources;
  SimTime *source_t;
  guint src_cap;
  guint32 watch_cap;
  const RelayStop *stop;
  SimRng rng;
  JobState state;        /* under pipe->lock */
  struct Helper *helper; /* the helper that runs it (the starting thread's, see "helpers"), else NULL */

  /* Written by the job's thread once the results are in `work` (after the last publication). */
  _Alignas(64) unsigned done;
  RelayProgress prog;
};

typedef struct PipeThread {
  RelayPipe *pipe;
  RelayWork *work;
  RelayWorkStats stats; /* its work's statistics as of its last finished job (under pipe->lock) */
} PipeThread;

/* A helper runs a job for the starting thread, and only while that thread waits (see "helpers" below): a
 * relay the starting thread runs in parts, in a context of its own (a stack of its own, switched to and from
 * on the starting thread) so that the kernel's window loop need not return between the parts. */
typedef struct Helper {
  RelayPipe *pipe;
  RelayWork *work;
  RelayWorkStats stats; /* as PipeThread's (under pipe->lock) */
  RelayJob *job;        /* the job it holds, not done (the starting thread's field) */
  ucontext_t self;      /* where the helper goes on */
  ucontext_t caller;    /* where the starting thread goes on once the helper switches back */
  void *stack;          /* the helper's stack (HELPER_STACK bytes above a guard page) */
  /* AddressSanitizer's view of the switches (see helper_switch). */
  void *fake_self, *fake_caller;
  const void *caller_bottom;
  size_t caller_size;
#ifdef HELPER_ASAN
  int (*swap)(ucontext_t *, const ucontext_t *); /* the C library's swapcontext (see libc_swapcontext) */
#endif
} Helper;

struct RelayPipe {
  const RelayModel *model;
  const void *params;
  const NetGeoParams *gp;
  const NetTopology *t;
  guint n_slots, n_threads;
  /* Each thread's own work and kernel (one worker), which stays warm in its core's cache: a kernel per slot
   * made each job start cold (+25% per block with two slots on one thread). */
  struct PipeThread *thr;
  gint64 spin_ns; /* how long a waiter spins before it sleeps (relay_pipe_set_spin) */
  RelayIdleFn idle; /* the waiter's side work (relay_pipe_set_idle) */
  gpointer idle_user;
  RelayJob **slots;
  pthread_t *threads;
  /* pthreads rather than GMutex/GCond: GLib's are futexes that ThreadSanitizer cannot see through. */
  pthread_mutex_t lock;
  pthread_cond_t work_cond; /* a job was queued, or quit */
  pthread_cond_t free_cond; /* a slot was released */
  GQueue queue;    /* jobs to run, first started first */
  unsigned n_queued; /* its length (written under the lock; read without it by a thread looking for work) */
  guint32 *free_slot, n_free;
  gboolean quit;
  /* The Geth kernel's pruning tables as one kernel fed every block in start order would choose them (under
   * the lock): each job's kernel uses that table, so that it skips the steps the synchronous relay skips. */
  TgPlan plan;
  TgShared *tg_shared; /* the tables themselves, built once for all the threads' kernels */
  /* The starting thread's helper (relay_pipe_set_helper; NULL: none), which runs on the starting thread (so
   * the pipe never has more running threads than the pipe threads plus one), and the starting thread's wait,
   * for the helper to check at its windows' ends: */
  Helper *help;
  const RelayJob *cond_job;
  SimTime cond_at;
  guint32 cond_nodes[RELAY_WAKE_NODES];
  guint cond_n;
  gboolean cond_done;
};

/* ---- helpers ---- */

static gboolean job_reached(const RelayJob *job, SimTime at_least);
static gboolean any_published(const RelayJob *job, const guint32 *nodes, guint n);

/* Whether the starting thread's wait (the cond_* fields, written before it switched to the helper) is over.
 */
static gboolean cond_met(const RelayPipe *pp) {
  const RelayJob *j = pp->cond_job;
  if (__atomic_load_n(&j->done, __ATOMIC_SEQ_CST)) return TRUE;
  return !pp->cond_done && (job_reached(j, pp->cond_at) || any_published(j, pp->cond_nodes, pp->cond_n));
}

/* The helper's stack: the Geth kernel's window loop and what it calls (no deep recursion, no large arrays on
 * the stack); mapped lazily, so only the pages it touches take memory. */
#define HELPER_STACK (8u << 20)
#define HELPER_GUARD 4096u

#ifdef HELPER_ASAN
#include <dlfcn.h>
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>

/* GCC 12's AddressSanitizer intercepts swapcontext to clear the new stack's shadow and warns on stderr, once
 * a process, that it "doesn't fully support" it (a warning the CLI's tests read as a failed run). The
 * switches are annotated here (the fiber calls below), the way ASan documents, so the helper calls the C
 * library's own swapcontext, found in libc itself rather than through the interceptor. */
typedef int (*SwapFn)(ucontext_t *, const ucontext_t *);
static SwapFn libc_swapcontext(void) {
  SwapFn fn = NULL;
  void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  if (libc) {
    *(void **)&fn = dlsym(libc, "swapcontext");
    dlclose(libc);
  }
  return fn ? fn : swapcontext;
}
#endif

/* From the starting thread into the helper (to_helper) or back. A switch is a register swap and the signal
 * mask's syscall (swapcontext), where a handover between two threads took a futex wake and a wait each way
 * (a mean 7 us a direction on this VM, 12,000 of them in an 8,000-height run). */
static void helper_switch(Helper *H, gboolean to_helper) {
#ifdef HELPER_ASAN
  if (to_helper) {
    __sanitizer_start_switch_fiber(&H->fake_caller, (char *)H->stack, HELPER_STACK);
    H->swap(&H->caller, &H->self);
    __sanitizer_finish_switch_fiber(H->fake_caller, NULL, NULL);
  } else {
    __sanitizer_start_switch_fiber(&H->fake_self, H->caller_bottom, H->caller_size);
    H->swap(&H->self, &H->caller);
    __sanitizer_finish_switch_fiber(H->fake_self, &H->caller_bottom, &H->caller_size);
  }
#else
  if (to_helper)
    swapcontext(&H->caller, &H->self);
  else
    swapcontext(&H->self, &H->caller);
#endif
}

/* At a window's end of a helper's job: back to the starting thread once its wait is over. */
static void helper_checkpoint(Helper *H) {
  if (cond_met(H->pipe)) helper_switch(H, FALSE);
}

static void job_finish(RelayJob *job, RelayWork *w, RelayWorkStats *stats);
static void job_run(RelayJob *job, RelayWork *w);
static void job_wait_done(RelayJob *job);

/* The helper's context: each job it is handed, to its end, switching back to the starting thread's at its
 * windows' ends once the wait is over (helper_checkpoint) and at the job's end. makecontext passes ints: the
 * Helper's address in two halves. */
static void helper_main(unsigned lo, unsigned hi) {
  Helper *H = (Helper *)(((uintptr_t)hi << 32) | lo);
#ifdef HELPER_ASAN
  __sanitizer_finish_switch_fiber(NULL, &H->caller_bottom, &H->caller_size);
#endif
  for (;;) {
    RelayJob *job = H->job;
    job_run(job, H->work);
    job_finish(job, H->work, &H->stats);
    helper_switch(H, FALSE);
  }
}

/* The starting thread, waiting for `job` (until done, or until at_least or one of `nodes` as
 * relay_job_wait_nodes), runs helper H until its wait is over or H's job is done. */
static void helper_run(RelayPipe *pp, Helper *H, const RelayJob *job, gboolean done, SimTime at_least,
                       const guint32 *nodes, guint n) {
  pp->cond_job = job;
  pp->cond_done = done;
  pp->cond_at = at_least;
  pp->cond_n = n;
  for (guint i = 0; i < n; i++)
    pp->cond_nodes[i] = nodes[i];
  helper_switch(H, TRUE);
  if (H->job && __atomic_load_n(&H->job->done, __ATOMIC_SEQ_CST)) {
    H->job->helper = NULL;
    H->job = NULL;
  }
}

/* Whether the helper has something to run while the starting thread waits for `job`: the job it holds (that
 * one, or the rest of another it ran before); else `job` if it is still queued, or the oldest job queued,
 * which it then takes. FALSE: nothing (the starting thread waits as without a helper). */
static gboolean helper_pick(RelayPipe *pp, RelayJob *job) {
  Helper *H = pp->help;
  if (!H) return FALSE;
  if (H->job) return TRUE;
  if (!__atomic_load_n(&pp->n_queued, __ATOMIC_RELAXED)) return FALSE;
  pthread_mutex_lock(&pp->lock);
  RelayJob *take = job->state == JOB_QUEUED ? job : g_queue_peek_head(&pp->queue);
  if (take) {
    g_queue_remove(&pp->queue, take);
    __atomic_store_n(&pp->n_queued, pp->queue.length, __ATOMIC_RELAXED);
    take->state = JOB_RUNNING;
    take->helper = H;
    H->job = take;
  }
  pthread_mutex_unlock(&pp->lock);
  return take != NULL;
}

/* ---- progress (relay-private.h) ---- */

void relay_progress_publish(Kernel *k, SimTime horizon) {
  RelayProgress *p = k->progress;
  guint32 n = p->n_pending;
  for (guint32 i = 0; i < n;) {
    guint32 v = p->pending[i];
    const NodeHot *h = &k->nh[k->loc[v]];
    if (h->done == DONE_YES) {
      /* Its HAVE step was taken: the time is final (relax_full never lowers a done node's). */
      __atomic_store_n(&p->have[v], h->have, __ATOMIC_RELAXED);
      p->pending[i] = p->pending[--n];
    } else {
      i++;
    }
  }
  p->n_pending = n;
  /* Sequentially consistent (a release, and ordered before the load of wake_at, against the waiter's store
   * of wake_at then load of the horizon: one of the two sees the other). */
  __atomic_store_n(&p->horizon, horizon, __ATOMIC_SEQ_CST);
  /* After the horizon (sequentially consistent, against the waiter's store of n_wake then load of the
   * horizon: one of the two sees the other): a waiter for nodes published by now. */
  gboolean wake = horizon >= __atomic_load_n(&p->wake_at, __ATOMIC_SEQ_CST);
  unsigned n_wake = __atomic_load_n(&p->n_wake, __ATOMIC_SEQ_CST);
  for (unsigned j = 0; j < n_wake && !wake; j++) {
    guint32 v = __atomic_load_n(&p->wake_node[j], __ATOMIC_RELAXED);
    wake = v < p->n_watch && p->have[v] != SIM_TIME_MAX;
  }
  if (wake) sim_bump_and_wake(&p->seq, &p->sleepers);
  RelayJob *job = (RelayJob *)((char *)p - offsetof(RelayJob, prog));
  if (job->helper && horizon != SIM_TIME_MAX) helper_checkpoint(job->helper);
}

/* ---- the pipe's threads ---- */

/* How long a pipe thread with nothing to do looks for a job, giving its core to any other thread that wants
 * it (sched_yield), before it sleeps on the condition variable. A sleeping thread took a median 80 us to
 * start a job once queued (a halted vCPU woken by the futex: 8,000 heights of pools-2019 at 2 threads, the
 * queue to the start), on the chain that bounds the pipeline; yielding instead took the run from 8.8 to 7.9 s
 * (4 interleaved rounds; 0.3, 2 and 10 ms all helped, the longer the more). A spin without the yield would
 * take the core from the engine's thread, the third on two cores. */
#define YIELD_NS 5000000

/* Until *addr != val, *quit is set, or YIELD_NS have passed. */
static void yield_until(const unsigned *addr, unsigned val, const gboolean *quit) {
  gint64 until = sim_mono_ns() + YIELD_NS;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != val || __atomic_load_n(quit, __ATOMIC_RELAXED)) return;
    sched_yield();
    if ((i & 15) == 0 && sim_mono_ns() > until) return;
  }
}

/* The job's block through the model, then what the windows did not publish (a relay that stopped, a model
 * that publishes nothing while it runs, a block without sources) from the results. */
static void job_run(RelayJob *job, RelayWork *w) {
  const RelayPipe *pp = job->pipe;
  w->progress = &job->prog;
  w->tg_forced = pp->model == &relay_geth;
  w->tg_key = job->tg_key;
  pp->model->propagate(pp->params, pp->gp, pp->t, &job->b, job->stop, &job->rng, w);
  relay_work_copy_results(job->work, w);
  w->progress = NULL;
  RelayProgress *p = &job->prog;
  for (guint32 i = 0; i < p->n_pending; i++) {
    guint32 v = p->pending[i];
    __atomic_store_n(&p->have[v], relay_work_have(job->work, v), __ATOMIC_RELAXED);
  }
  p->n_pending = 0;
  __atomic_store_n(&p->horizon, SIM_TIME_MAX, __ATOMIC_SEQ_CST);
}

/* The job's end, on the thread that ran it. */
static void job_finish(RelayJob *job, RelayWork *w, RelayWorkStats *stats) {
  RelayPipe *pp = job->pipe;
  pthread_mutex_lock(&pp->lock);
  relay_work_get_stats(w, stats);
  job->state = JOB_DONE;
  pthread_mutex_unlock(&pp->lock);
  /* After this the starting thread may release the slot and start another job on it: only the counters
   * below are touched still, which a new job never resets (a late bump is a spurious wake-up). */
  __atomic_store_n(&job->done, 1, __ATOMIC_SEQ_CST);
  sim_bump_and_wake(&job->prog.seq, &job->prog.sleepers);
}

static void *pipe_thread(void *arg) {
  PipeThread *T = arg;
  RelayPipe *pp = T->pipe;
  pthread_mutex_lock(&pp->lock);
  for (;;) {
    if (!pp->quit && g_queue_is_empty(&pp->queue)) {
      pthread_mutex_unlock(&pp->lock);
      yield_until(&pp->n_queued, 0, &pp->quit);
      pthread_mutex_lock(&pp->lock);
    }
    while (!pp->quit && g_queue_is_empty(&pp->queue))
      pthread_cond_wait(&pp->work_cond, &pp->lock);
    RelayJob *job = g_queue_pop_head(&pp->queue);
    if (!job) break; /* quit, and nothing left to run */
    __atomic_store_n(&pp->n_queued, pp->queue.length, __ATOMIC_RELAXED);
    job->state = JOB_RUNNING;
    pthread_mutex_unlock(&pp->lock);
    job_run(job, T->work);
    job_finish(job, T->work, &T->stats);
    pthread_mutex_lock(&pp->lock);
  }
  pthread_mutex_unlock(&pp->lock);
  return NULL;
}

/* ---- the pipe ---- */

/* A pipe thread's or the helper's work: one worker (a job's relay runs on one thread), the groups given
 * (owned), the pipe's pruning tables. */
static RelayWork *thread_work(const RelayPipe *pp, RelayGroups *groups) {
  RelayWork *w = relay_work_new(pp->t);
  relay_work_set_threads(w, 1);
  w->tg_shared = pp->tg_shared;
  if (groups) relay_work_set_groups(w, groups);
  return w;
}

RelayPipe *relay_pipe_new(const RelayModel *model, const void *params, const NetGeoParams *gp, const NetTopology *t,
                          RelayGroups *groups, guint slots, guint threads) {
  g_return_val_if_fail(model != NULL && gp != NULL && t != NULL && slots >= 1 && threads >= 1, NULL);
  RelayPipe *pp = g_new0(RelayPipe, 1);
  pp->model = model;
  pp->params = params;
  pp->gp = gp;
  pp->t = t;
  pp->n_slots = slots;
  pp->n_threads = threads;
  pp->spin_ns = SPIN_NS;
  pp->tg_shared = relay_tg_shared_new();
  pthread_mutex_init(&pp->lock, NULL);
  pthread_cond_init(&pp->work_cond, NULL);
  pthread_cond_init(&pp->free_cond, NULL);
  g_queue_init(&pp->queue);
  /* The Geth kernel's groups, made once (what each work would make at its first propagation), each slot a
   * copy: a work owns its groups. */
  if (!groups && model == &relay_geth) groups = relay_groups_new(t);
  pp->slots = g_new0(RelayJob *, slots);
  pp->free_slot = g_new(guint32, slots);
  for (guint s = 0; s < slots; s++) {
    RelayJob *job = g_aligned_alloc0(1, sizeof(RelayJob), 64);
    job->pipe = pp;
    job->index = s;
    job->work = relay_work_new(t);
    job->prog.horizon = SIM_TIME_MAX;
    job->prog.wake_at = SIM_TIME_MAX;
    job->done = 1;
    pp->slots[s] = job;
    pp->free_slot[pp->n_free++] = slots - 1 - s; /* slot 0 first */
  }
  /* Signals go to the calling thread: the pipe's threads block them all (as the kernel's do). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pp->threads = g_new0(pthread_t, threads);
  pp->thr = g_new0(PipeThread, threads);
  for (guint i = 0; i < threads; i++) {
    PipeThread *T = &pp->thr[i];
    T->pipe = pp;
    T->work = thread_work(pp, groups && i + 1 < threads ? relay_groups_copy(groups) : groups);
  }
  for (guint i = 0; i < threads; i++) {
    int rc = pthread_create(&pp->threads[i], NULL, pipe_thread, &pp->thr[i]);
    if (rc != 0) g_error("relay pipe: cannot start a thread: %s", g_strerror(rc));
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return pp;
}

void relay_pipe_free(RelayPipe *pp) {
  if (!pp) return;
  /* The helper's job first (only the starting thread moves it on), then the helper: its context, left at the
   * switch after its last job's end, is dropped with its stack. */
  Helper *H = pp->help;
  if (H) {
    if (H->job) job_wait_done(H->job);
#ifdef HELPER_ASAN
    __asan_unpoison_memory_region(H->stack, HELPER_STACK); /* the frames it left: not for the next mapping */
#endif
    munmap((char *)H->stack - HELPER_GUARD, HELPER_STACK + HELPER_GUARD);
    relay_work_free(H->work);
    g_free(H);
  }
  pthread_mutex_lock(&pp->lock);
  __atomic_store_n(&pp->quit, TRUE, __ATOMIC_RELAXED); /* under the lock; read without it by yield_until */
  pthread_cond_broadcast(&pp->work_cond);
  pthread_mutex_unlock(&pp->lock);
  for (guint i = 0; i < pp->n_threads; i++)
    pthread_join(pp->threads[i], NULL); /* each runs what is queued before it ends */
  for (guint i = 0; i < pp->n_threads; i++) relay_work_free(pp->thr[i].work);
  g_free(pp->thr);
  for (guint s = 0; s < pp->n_slots; s++) {
    RelayJob *job = pp->slots[s];
    relay_work_free(job->work);
    g_free(job->sources);
    g_free(job->source_t);
    g_free(job->prog.have);
    g_free(job->prog.pending);
    g_aligned_free(job);
  }
  g_queue_clear(&pp->queue);
  pthread_cond_destroy(&pp->work_cond);
  pthread_cond_destroy(&pp->free_cond);
  pthread_mutex_destroy(&pp->lock);
  g_free(pp->threads);
  g_free(pp->slots);
  g_free(pp->free_slot);
  relay_tg_shared_free(pp->tg_shared); /* after every kernel that read it */
  g_free(pp);
}

RelayJob *relay_pipe_start(RelayPipe *pp, const RelayBlock *b, const RelayStop *stop, const SimRng *rng) {
  g_return_val_if_fail(pp != NULL && b != NULL && rng != NULL, NULL);
  pthread_mutex_lock(&pp->lock);
  while (pp->n_free == 0)
    pthread_cond_wait(&pp->free_cond, &pp->lock);
  RelayJob *job = pp->slots[pp->free_slot[--pp->n_free]];
  job->tg_key = pp->model == &relay_geth
                    ? relay_tg_plan(&pp->plan, pp->params, pp->model->import_ns(pp->params, 0), pp->t, b, stop)
                    : -1;
  pthread_mutex_unlock(&pp->lock);
  /* The slot is ours alone until it is queued (its last job's thread touches only prog.seq/sleepers). */
  if (b->n_sources > job->src_cap) {
    job->src_cap = b->n_sources;
    job->sources = g_renew(guint32, job->sources, job->src_cap);
    job->source_t = g_renew(SimTime, job->source_t, job->src_cap);
  }
  SimTime t0 = SIM_TIME_MAX;
  for (guint i = 0; i < b->n_sources; i++) {
    job->sources[i] = b->sources[i];
    job->source_t[i] = b->source_t[i];
    t0 = MIN(t0, b->source_t[i]);
  }
  job->b = (RelayBlock){.sources = job->sources,
                        .source_t = job->source_t,
                        .n_sources = b->n_sources,
                        .size_bytes = b->size_bytes,
                        .gas_used = b->gas_used};
  job->stop = stop;
  sim_rng_copy(&job->rng, rng);
  RelayProgress *p = &job->prog;
  p->n_watch = stop ? MIN(stop->n_nodes, pp->t->n_nodes) : 0;
  if (p->n_watch > job->watch_cap) {
    job->watch_cap = p->n_watch;
    p->have = g_renew(SimTime, p->have, job->watch_cap);
    p->pending = g_renew(guint32, p->pending, job->watch_cap);
  }
  for (guint32 i = 0; i < p->n_watch; i++) {
    p->have[i] = SIM_TIME_MAX;
    p->pending[i] = i;
  }
  p->n_pending = p->n_watch;
  /* No step comes before the first source has the block. */
  p->horizon = t0;
  p->wake_at = SIM_TIME_MAX;
  job->helper = NULL;
  job->done = 0;
  pthread_mutex_lock(&pp->lock);
  job->state = JOB_QUEUED;
  g_queue_push_tail(&pp->queue, job); /* the lock publishes everything above to the thread that takes it */
  __atomic_store_n(&pp->n_queued, pp->queue.length, __ATOMIC_RELAXED);
  pthread_cond_signal(&pp->work_cond);
  pthread_mutex_unlock(&pp->lock);
  return job;
}

SimTime relay_job_horizon(const RelayJob *job) {
  return __atomic_load_n(&job->prog.horizon, __ATOMIC_ACQUIRE);
}

SimTime relay_job_have(const RelayJob *job, guint32 i) {
  const RelayProgress *p = &job->prog;
  if (i >= p->n_watch) return SIM_TIME_MAX;
  /* The horizon first: it was stored after the haves it covers. A have stored after it (the next window's,
   * not yet published) is at or after it, and reads as not yet final, so a value read here is always below
   * the horizon read with it. */
  SimTime h = __atomic_load_n(&p->horizon, __ATOMIC_ACQUIRE);
  SimTime v = __atomic_load_n(&p->have[i], __ATOMIC_RELAXED);
  return v < h ? v : SIM_TIME_MAX;
}

SimTime relay_job_first(const RelayJob *job, const guint32 *nodes, guint n) {
  const RelayProgress *p = &job->prog;
  SimTime h = __atomic_load_n(&p->horizon, __ATOMIC_ACQUIRE), first = SIM_TIME_MAX;
  for (guint k = 0; k < n; k++) {
    if (nodes[k] >= p->n_watch) continue;
    SimTime v = __atomic_load_n(&p->have[nodes[k]], __ATOMIC_RELAXED);
    if (v < h && v < first) first = v;
  }
  return first;
}

gboolean relay_job_done(const RelayJob *job) {
  return __atomic_load_n(&job->done, __ATOMIC_ACQUIRE) != 0;
}

static gboolean job_reached(const RelayJob *job, SimTime at_least) {
  return __atomic_load_n(&job->prog.horizon, __ATOMIC_SEQ_CST) >= at_least ||
         __atomic_load_n(&job->done, __ATOMIC_SEQ_CST);
}

void relay_pipe_set_spin(RelayPipe *pipe, gint64 spin_ns) { pipe->spin_ns = MAX(0, spin_ns); }

void relay_pipe_set_helper(RelayPipe *pp) {
  g_return_if_fail(pp != NULL && pp->help == NULL);
  Helper *H = g_new0(Helper, 1);
  H->pipe = pp;
  const RelayGroups *groups = pp->thr[0].work->groups;
  H->work = thread_work(pp, groups ? relay_groups_copy(groups) : NULL);
  /* The stack above a guard page: an overflow faults rather than writes over other memory. */
  char *map = mmap(NULL, HELPER_STACK + HELPER_GUARD, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED || mprotect(map, HELPER_GUARD, PROT_NONE) != 0)
    g_error("relay pipe: cannot map the helper's stack: %s", g_strerror(errno));
  H->stack = map + HELPER_GUARD;
#ifdef HELPER_ASAN
  H->swap = libc_swapcontext();
#endif
  if (getcontext(&H->self) != 0) g_error("relay pipe: getcontext: %s", g_strerror(errno));
  H->self.uc_stack.ss_sp = H->stack;
  H->self.uc_stack.ss_size = HELPER_STACK;
  H->self.uc_link = NULL; /* helper_main never returns */
  uintptr_t a = (uintptr_t)H;
  makecontext(&H->self, (void (*)(void))helper_main, 2, (unsigned)(a & 0xffffffffu), (unsigned)(a >> 32));
  pp->help = H;
}

void relay_pipe_set_idle(RelayPipe *pipe, RelayIdleFn fn, gpointer user) {
  g_return_if_fail(pipe != NULL);
  pipe->idle = fn;
  pipe->idle_user = user;
}

/* The waiter, its condition not met as of `seq` == s: a little side work if there is any (then the caller
 * looks again), else a spin or sleep until the job's thread bumps seq. */
static void wait_or_work(RelayJob *job, unsigned s) {
  const RelayPipe *pp = job->pipe;
  if (pp->idle && pp->idle(pp->idle_user)) return;
  sim_wait_change(&job->prog.seq, s, &job->prog.sleepers, pp->spin_ns);
}

/* Whether one of the nodes is published (relay_job_have() final). */
static gboolean any_published(const RelayJob *job, const guint32 *nodes, guint n) {
  for (guint i = 0; i < n; i++)
    if (relay_job_have(job, nodes[i]) != SIM_TIME_MAX) return TRUE;
  return FALSE;
}

void relay_job_wait_nodes(RelayJob *job, SimTime at_least, const guint32 *nodes, guint n) {
  g_return_if_fail(job != NULL && n <= RELAY_WAKE_NODES);
  RelayProgress *p = &job->prog;
  if (job_reached(job, at_least) || any_published(job, nodes, n)) return;
  /* The writer bumps `seq` once a horizon it publishes reaches wake_at, or one of the nodes is published
   * (and once the job is done). */
  for (guint i = 0; i < n; i++) __atomic_store_n(&p->wake_node[i], nodes[i], __ATOMIC_RELAXED);
  __atomic_store_n(&p->n_wake, n, __ATOMIC_SEQ_CST);
  __atomic_store_n(&p->wake_at, at_least, __ATOMIC_SEQ_CST);
  RelayPipe *pp = job->pipe;
  for (;;) {
    unsigned s = __atomic_load_n(&p->seq, __ATOMIC_SEQ_CST);
    if (job_reached(job, at_least) || any_published(job, nodes, n)) break;
    if (helper_pick(pp, job)) {
      helper_run(pp, pp->help, job, FALSE, at_least, nodes, n);
      continue;
    }
    wait_or_work(job, s);
  }
  /* No more bumps for this wait (the stop's SIM_TIME_MAX still bumps once: harmless). */
  __atomic_store_n(&p->wake_at, SIM_TIME_MAX, __ATOMIC_SEQ_CST);
  __atomic_store_n(&p->n_wake, 0, __ATOMIC_SEQ_CST);
}

void relay_job_wait(RelayJob *job, SimTime at_least) { relay_job_wait_nodes(job, at_least, NULL, 0); }

/* Until the job is done (the bump after `done` wakes a sleeper). */
static void job_wait_done(RelayJob *job) {
  RelayProgress *p = &job->prog;
  RelayPipe *pp = job->pipe;
  for (;;) {
    unsigned s = __atomic_load_n(&p->seq, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&job->done, __ATOMIC_SEQ_CST)) break;
    if (helper_pick(pp, job)) {
      helper_run(pp, pp->help, job, TRUE, 0, NULL, 0);
      continue;
    }
    wait_or_work(job, s);
  }
}

const RelayWork *relay_job_work(const RelayJob *job) {
  g_return_val_if_fail(job != NULL, NULL);
  /* Only the counters the waits use are written (the job is the caller's). */
  job_wait_done((RelayJob *)job);
  return job->work;
}

void relay_job_release(RelayJob *job) {
  g_return_if_fail(job != NULL);
  job_wait_done(job);
  RelayPipe *pp = job->pipe;
  pthread_mutex_lock(&pp->lock);
  g_warn_if_fail(job->state == JOB_DONE);
  job->state = JOB_FREE;
  pp->free_slot[pp->n_free++] = job->index;
  pthread_cond_signal(&pp->free_cond);
  pthread_mutex_unlock(&pp->lock);
}

void relay_pipe_get_stats(const RelayPipe *pp, RelayWorkStats *st) {
  g_return_if_fail(pp != NULL && st != NULL);
  memset(st, 0, sizeof *st);
  st->lookahead_ns = SIM_TIME_MAX;
  RelayPipe *mut = (RelayPipe *)pp; /* the lock only */
  pthread_mutex_lock(&mut->lock);
  gboolean first = TRUE;
  guint n_run = pp->n_threads + (pp->help != NULL);
  for (guint s = 0; s < n_run; s++) {
    const RelayWorkStats *x = s < pp->n_threads ? &pp->thr[s].stats : &pp->help->stats;
    if (x->propagations == 0) continue;
    if (first) {
      /* The same groups in every slot. */
      st->groups = x->groups;
      st->largest_group = x->largest_group;
      st->lookahead_ns = x->lookahead_ns;
      st->lookahead_from = x->lookahead_from;
      st->lookahead_to = x->lookahead_to;
      first = FALSE;
    }
    st->propagations += x->propagations;
    st->alone += x->alone;
    st->windows += x->windows;
    st->steps += x->steps;
    st->pruned += x->pruned;
    st->messages += x->messages;
    st->deferred += x->deferred;
    st->posted += x->posted;
    st->draws += x->draws;
    st->split += x->split;
    st->work += x->work;
    st->work_critical += x->work_critical;
    st->tables_built += x->tables_built;
    for (guint i = 0; i < RELAY_MAX_THREADS; i++)
      st->wait_s[i] += x->wait_s[i];
    st->wall_s += x->wall_s;
    if (s >= pp->n_threads) st->helped += x->propagations;
  }
  /* The tables one kernel fed every block would have built (each slot builds those of them it uses). */
  st->prune_tables = pp->plan.n_built;
  st->tables_built += relay_tg_shared_built(pp->tg_shared);
  pthread_mutex_unlock(&mut->lock);
  st->threads = n_run; /* jobs running at once; each job's relay runs on one */
}
