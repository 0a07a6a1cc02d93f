/* map.h: the network on a world map, and one block's journey across it, for `sim report` (report.h reads
 * the files; this module only draws).
 *
 * The map is an equirectangular projection (longitude -180..180, latitude -58..78) of Natural Earth's
 * 1:110m land (scenarios/data/natural-earth/, public domain), drawn as inline SVG, 1000 x 378 units.
 *
 * Where nodes go. The simulator knows a node's region and, for vantage points and pool gateways, its city;
 * it knows no coordinates. This module holds a small table of places (an_map_place): the cities the
 * shipped scenarios name, a few more, and for each of SimBlock's regions (NA, EU, SA, AP, JP, AU) a list
 * of weighted anchor cities. Positions are for display only:
 *  - a node with a known city sits on it; several specials in one city are spread on a small ring around it
 *    (the first vantage point in the middle);
 *  - an ordinary node, the k-th of its region in node order, sits near one of the region's anchors, chosen
 *    with the anchors' weights by a hash of (region name, k), plus a deterministic jitter of up to +-2.5
 *    degrees of longitude and +-1.5 of latitude from the same hash. So the same region counts give the same
 *    picture, with or without the node table of `sim run --trace-blocks`;
 *  - a city or region the table does not know goes to its region's first anchor, or, for an unknown
 *    region, to a spot on a row at latitude -50; the map's notes name each such place.
 * With more than AN_MAP_MAX_DOTS nodes, ordinary nodes are drawn in groups: the region's nodes in node
 * order, ceil(n / AN_MAP_MAX_DOTS) to a dot (its area grows with the count); a group's arrival time in the
 * journey is the median of its nodes' (unreached nodes counted as latest; never when more than half are).
 *
 * Everything is deterministic: the same input gives the same bytes. Numbers are written in the C locale.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define AN_MAP_MAX_DOTS 12000
#define AN_MAP_FRAMES 121 /* journey animation: frames at times 0 .. t_end, evenly spaced */

typedef enum { AN_MAP_NODE = 0, AN_MAP_VANTAGE, AN_MAP_GATEWAY } AnMapRole;

/* One node of the network. Strings are borrowed; pool and city may be NULL or "". */
typedef struct {
  AnMapRole role;
  const char *name; /* vantage or gateway name */
  const char *pool; /* a gateway's pool (or the pool whose miners an ordinary node hosts) */
  const char *region;
  const char *city;
} AnMapNode;

/* The network to draw. */
typedef struct {
  const char *const *regions; /* region names in the scenario's order */
  const double *region_share; /* per region: its share of the ordinary nodes (for the shading); may be NULL */
  guint n_regions;
  const AnMapNode *nodes; /* every node: the specials first, then ordinary nodes */
  guint32 n_nodes;
  const guint32 *links; /* n_links pairs of node indices: gateway-to-gateway links */
  guint n_links;
  gboolean from_trace; /* the node table is the run's own (trace_nodes.csv), else derived from the scenario */
} AnMapNet;

/* A block's journey. Times in ms; NAN: never. */
typedef struct {
  const char *caption;       /* what block it is (HTML-escaped by the module) */
  const double *arrive_ms;   /* per node of the AnMapNet: after mining; NULL for a measured journey */
  const char *const *vantages;
  const double *vantage_ms;  /* per vantage point: its first observation after the first vantage point's */
  guint n_vantages;
  double first_obs_ms;       /* simulated: the first vantage point's observation after mining; else NAN */
} AnJourney;

/* Longitude and latitude of a place (city or region name, case-insensitive) in the table; FALSE if unknown. */
gboolean an_map_place(const char *name, double *lon, double *lat);

/* Display position of the k-th ordinary node of region `region` (see above). FALSE (and the unknown-region
 * spot) if the region is not in the table; `unknown_index` picks that spot. */
gboolean an_map_region_spot(const char *region, guint k, guint unknown_index, double *lon, double *lat);

/* Appends the static map figure (<figure id="fig-map">): land, region shading by node share, the nodes,
 * pool gateways and vantage points marked and labelled, gateway-to-gateway links and each pool's
 * gateways linked (two checkboxes show or hide them, by CSS alone), and a gateways-per-city table.
 * Notes on places without coordinates are appended to `notes` (char *, g_free) when it is not NULL. */
void an_map_figure(GString *html, const AnMapNet *net, GPtrArray *notes);

/* Appends the pools-only panel of a network without geography (pool-delay): one disc per pool, its area
 * the hash share. */
void an_map_pools_figure(GString *html, const char *const *pools, const double *hash_share, guint n_pools);

/* Appends the journey section (<figure id="fig-journey">): with `sim` (and `net`), the map whose nodes the
 * arrival times colour, a slider over AN_MAP_FRAMES frames, play/pause, the share of nodes reached over
 * time and the vantage points' first observations on the time axis; with `measured`, the vantage points'
 * first observations of a measured block on an axis beside the simulated ones (both after the first
 * observation). Either may be NULL, not both. The map part clones the nodes of an_map_figure()'s map (call
 * that first). The page's script is appended here: plain JavaScript, no external resource. With the URL
 * fragment #selftest the script moves the slider to the first and last frames and steps every frame,
 * and writes what it saw into <pre id="journey-selftest"> (JSON) for tests. */
void an_map_journey(GString *html, const AnMapNet *net, const AnJourney *sim, const AnJourney *measured);

G_END_DECLS
