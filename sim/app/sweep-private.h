/* sweep-private.h: what the files of the sweep module share (sweep.c: the sweep file and its points;
 * sweep_gen.c: the pool-share generators; sweep_table.c: the table). Not for other modules. */
#pragma once

#include "sweep.h"

/* Bounds that keep a typo from asking for billions of runs. */
#define SWEEP_MAX_RUNS 10000000u
#define SWEEP_MAX_LEVELS 10000u

struct SimSweep {
  char *name;
  char *base_file;
  uint64_t base_seed;
  guint replicates;
  GPtrArray *columns; /* char * */
  json_t *manifest;
  guint n_points;
  json_t **point_values; /* borrowed from manifest */
  char ***point_sets;    /* owned, NULL-terminated */
  char **metrics;        /* NULL: every key */
};

/* One swept dimension: a column and its levels, each a value and the overrides that realise it. */
typedef struct {
  char *column;
  GPtrArray *values; /* json_t *, owned */
  GPtrArray *sets;   /* per level: GPtrArray of char * */
} SweepDim;

void sim_sweep_dim_init(SweepDim *d, const char *column);

/* Adds a level; takes `value`. Returns the level's (empty) list of sets. */
GPtrArray *sim_sweep_dim_add(SweepDim *d, json_t *value);

/* Every key of `o` must be in `allowed` (NULL-terminated); problems go to diag. */
void sim_sweep_check_keys(json_t *o, const char *path, const char *const *allowed, SimDiag *diag);

/* A non-empty array of numbers in [min, max] (integers if `integer`) at obj[key]; NULL with problems in
 * diag otherwise. */
GArray *sim_sweep_num_list(json_t *obj, const char *key, const char *path, double min, double max,
                           gboolean min_open, gboolean max_open, gboolean integer, SimDiag *diag);

/* The shortest %g form that reads back as x (C locale). Free with g_free(). */
char *sim_sweep_fmt_num(double x);

/* A JSON value as a table cell or for a message: strings bare, numbers shortest, the rest compact JSON. Free
 * with g_free(). */
char *sim_sweep_value_text(const json_t *v);

/* The base pools, for the generators. */
typedef struct {
  json_t *pools; /* the defaulted base's pools array (borrowed) */
  guint n;
  double *share; /* normalised to sum 1 */
  guint *rank;   /* rank[r] = index of the r-th largest pool (ties: lower index first) */
} SweepBasePools;

void sim_sweep_base_pools_init(SweepBasePools *bp, json_t *pools);
void sim_sweep_base_pools_clear(SweepBasePools *bp);

/* A {"generator", ...} parameter of the sweep file at `path` as one dimension `dim` (initialised on success);
 * FALSE with the problems in diag. */
gboolean sim_sweep_gen_parse(json_t *o, const char *path, const SweepBasePools *bp, SweepDim *dim,
                             SimDiag *diag);
