/* obs_async.h: an ObsSink whose records another thread may apply (ObsAsync). The producer's calls are queued
 * in order and applied to the inner sink in that same order, each under one lock, by whichever thread gets
 * to them first: a helper that has nothing else to do (obs_async_consume, from a thread that would otherwise
 * wait), or the producer itself when the queue is full and at every call that is not a record (`vantages`,
 * `block`, `finish`: the queue is drained first). So the inner sink sees exactly the calls, in exactly the
 * order, that it would have seen directly: its results do not depend on who applied what, nor when.
 *
 * Queued: tx_seen, tx_inclusion, main_block (their arguments copied, receptions included). An inner call that
 * fails is reported by the producer's next call (the same error), and the records after it are dropped. */
#pragma once

#include <glib.h>

#include "obs_sink.h"

G_BEGIN_DECLS

typedef struct ObsAsync ObsAsync;

/* A queue in front of `inner` (copied; its `user` must outlive the queue) of `capacity` records (0: a default
 * of 4096). */
ObsAsync *obs_async_new(const ObsSink *inner, guint capacity);
/* Drains what is queued (in order, on the calling thread), then frees the queue. */
void obs_async_free(ObsAsync *q);
/* The sink the producer calls: its members are set where the inner sink's are. */
void obs_async_sink(ObsAsync *q, ObsSink *out);
/* From a thread other than the producer's, with nothing else to do: applies a few queued records (at most
 * one main_block, the costly kind, and at most 64 records in all) if no other thread is applying them now.
 * Returns whether it applied any. Cheap when the queue is empty: two loads. `q` is a gpointer so that this is
 * a SimIdleFn. */
gboolean obs_async_consume(gpointer q);
/* Records applied by each side so far: by obs_async_consume, and by the producer (full queue or a drain). */
void obs_async_counts(const ObsAsync *q, guint64 *by_helper, guint64 *by_producer);

G_END_DECLS
