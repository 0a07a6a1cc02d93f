/* compare-private.h: what compare.c and compare_output.c share: the comparison's rows and sides. Private to
 * the presentation library. */
#pragma once

#include "compare.h"
#include <errno.h>
#include <glib/gstdio.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "input.h"
#include "util.h"

G_BEGIN_DECLS

#define DEFAULT_LEVEL 0.95

#define DIST_KEY "observations.vantage_delay_ms"

#define COMMIT_KEY "tx.commit_samples_ms"

struct AnCompare {
  double level;
  char *label_a, *label_b;
  GPtrArray *runs_a, *runs_b; /* char * */
  GArray *metrics;            /* AnCompareMetric, keys owned */
  GArray *only[2];            /* AnCompareOnly, keys owned */
  GArray *dists;              /* AnCompareDist, key and vantage owned */
};

int cmpo_cmp_double(const void *pa, const void *pb);
json_t *cmpo_pair(const AnEstimate *e);

G_END_DECLS
