/* spinwait.h: one thread waiting for another's store to a counter: spin briefly (a window's wait often ends
 * within microseconds), then sleep on a futex (Linux). The partitioned engine's window barrier and the relay
 * kernel's threads both wait this way. */
#pragma once
#include <glib.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

G_BEGIN_DECLS

/* CLOCK_MONOTONIC in ns. */
static inline gint64 sim_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (gint64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void sim_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* After this long a spinning waiter calls sched_yield between its looks: where the threads outnumber the
 * cores (--threads 4 on 2, or a machine busy with other work) the thread it waits for may be waiting for its
 * core. The split relay at --threads 4 on 2 cores, 300 heights of pools-2019: 11.0 s with neither this nor
 * announce_share's yield, 6.3 s with that one alone, 2.2 s with both (1.2 s on one thread): each window's
 * barrier spun its 200 us while the others waited to run. */
#define SIM_SPIN_YIELD_AFTER_NS 20000

/* Waits until *addr != val: spins up to spin_ns (with sched_yield after SIM_SPIN_YIELD_AFTER_NS), then sleeps
 * on a futex, counted in *sleepers. The waker (sim_bump_and_wake) stores *addr then reads *sleepers; the
 * sleeper adds to *sleepers then reads *addr (both sequentially consistent): one of them sees the other, so
 * no wake is lost. */
static inline void sim_wait_change(unsigned *addr, unsigned val, unsigned *sleepers, gint64 spin_ns) {
  gint64 now = sim_mono_ns(), until = now + spin_ns, yield_from = now + MIN(spin_ns, SIM_SPIN_YIELD_AFTER_NS);
  gboolean yield = FALSE;
  for (unsigned i = 1;; i++) {
    if (__atomic_load_n(addr, __ATOMIC_ACQUIRE) != val) return;
    if (yield)
      sched_yield();
    else
      sim_cpu_relax();
    if ((i & 63) == 0) {
      now = sim_mono_ns();
      if (now > until) break;
      yield = now > yield_from;
    }
  }
  __atomic_add_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(addr, __ATOMIC_SEQ_CST) == val)
    syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
  __atomic_sub_fetch(sleepers, 1, __ATOMIC_SEQ_CST);
}

/* Adds one to *addr and wakes every thread sleeping on it (sim_wait_change). */
static inline void sim_bump_and_wake(unsigned *addr, unsigned *sleepers) {
  __atomic_add_fetch(addr, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(sleepers, __ATOMIC_SEQ_CST))
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

G_END_DECLS
