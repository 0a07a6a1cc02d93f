/* side-thread.h: a thread that calls a side-work function (obs_async_consume, tx_world_side_work) over and
 * over until told to stop, yielding when it found nothing: the other thread of the side-work tests. */
#pragma once

#include <glib.h>

typedef struct {
  gboolean (*fn)(gpointer arg);
  gpointer arg;
  gint stop;
  GThread *thread;
} SideThread;

static gpointer side_thread_main(gpointer p) {
  SideThread *h = p;
  while (!g_atomic_int_get(&h->stop))
    if (!h->fn(h->arg)) g_thread_yield();
  return NULL;
}

static inline void side_thread_start(SideThread *h, gboolean (*fn)(gpointer), gpointer arg) {
  *h = (SideThread){.fn = fn, .arg = arg};
  h->thread = g_thread_new("side", side_thread_main, h);
}

static inline void side_thread_stop(SideThread *h) {
  g_atomic_int_set(&h->stop, 1);
  g_thread_join(h->thread);
}
