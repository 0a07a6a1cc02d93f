/* numa_model-private.h: what the NUMA model's files (numa_model.c, numa_model_policy.c, numa_model_app.c)
 * share and nothing else uses: the machine's struct and a few helpers. */
#pragma once

#include <glib.h>

#include "numa_model.h"

G_BEGIN_DECLS

struct NumaModelMachine {
  char *name;
  guint n;
  guint *cpus;     /* [n] */
  double *bw;      /* [mem * n + cpu], NAN in CPU-less columns */
  double *cap;     /* [n] */
  double *lat;     /* [mem * n + cpu], NAN in CPU-less columns */
  guint n_workers; /* the file's default worker set; 0: every node with CPUs */
  guint *workers;
};

/* Asserts that workers[n_workers] is a valid worker set of m (programming errors: callers check input). */
void numa_model_check_workers(const NumaModelMachine *m, const guint *workers, guint n_workers);

/* w normalised into out; returns FALSE when w has no positive sum. */
gboolean numa_model_normalise(const double *w, guint n, double *out);

/* The per-worker bandwidth bound min_{w_i > 0} m_i / w_i for normalised w. */
double numa_model_per_worker_bound(const double *limits, const double *w, guint n);

G_END_DECLS
