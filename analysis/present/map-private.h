/* map-private.h: what map.c and map_journey.c share: the map's geometry, layout and SVG helpers. Private to
 * the presentation library. */
#pragma once

#include "map.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

G_BEGIN_DECLS

#define MAP_W 1000.0

#define MAP_H 378.0 /* MAP_W x (78 + 58) / 360, rounded */

typedef struct {
  double *x, *y;     /* per node: display position (SVG units) */
  guint32 *dot_of;   /* per node: its dot */
  guint32 n_dots;
  double *dot_x, *dot_y;
  guint32 *dot_count; /* nodes per dot */
  guint32 *dot_first; /* a node of each dot (its first) */
  GPtrArray *regions; /* char *: the regions drawn: the net's, then any node names that are not among them */
  guint32 *region_nodes; /* ordinary nodes per region (same order) */
  guint *node_region;    /* per node: index into regions */
} Layout;

void mp_layout_free(Layout *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Layout, mp_layout_free)

void mp_put_f(GString *s, double v);
void mp_put_esc(GString *s, const char *text);
void mp_put_json_str(GString *s, const char *text);
Layout *mp_layout_new(const AnMapNet *net, GPtrArray *notes);
void mp_svg_line(GString *h, double x1, double y1, double x2, double y2, const char *stroke);
void mp_svg_text(GString *h, double x, double y, const char *cls, const char *anchor, const char *text);
void mp_map_toggles(GString *h, const char *prefix, guint n_links, guint n_pool_links, gboolean pool_checked);
guint mp_count_pool_links(const AnMapNet *net);

G_END_DECLS
