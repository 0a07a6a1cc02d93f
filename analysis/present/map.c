/* map.c: the network on a world map (places, layout, the static map), as inline SVG. */
#include "map-private.h"

/* Natural Earth 1:110m land: per ring its point count, then x,y in tenths of a degree; 0 ends. */
static const gint16 land_110m[] = {
#include "land-110m.inc"
};

#define MAP_LAT_TOP 78.0

#define MAP_LAT_BOTTOM -58.0

static double map_x(double lon) { return (lon + 180.0) * MAP_W / 360.0; }

static double map_y(double lat) { return (MAP_LAT_TOP - lat) * MAP_W / 360.0; }

typedef struct {
  const char *name;
  double lat, lon;
} Place;

/* Cities (data-centre cities of the scenarios and a few more), coordinates rounded to 0.1 degree. */
static const Place cities[] = {
    {"Lisbon", 38.7, -9.1},       {"Prague", 50.1, 14.4},       {"Frankfurt", 50.1, 8.7},
    {"Amsterdam", 52.4, 4.9},     {"Moscow", 55.8, 37.6},       {"Warsaw", 52.2, 21.0},
    {"New York", 40.7, -74.0},    {"Washington", 38.9, -77.0},  {"Los Angeles", 34.1, -118.2},
    {"Chicago", 41.9, -87.6},     {"Shanghai", 31.2, 121.5},    {"Hangzhou", 30.3, 120.2},
    {"Shenzhen", 22.5, 114.1},    {"Hong Kong", 22.3, 114.2},   {"Singapore", 1.4, 103.8},
    {"Seoul", 37.6, 127.0},       {"Tokyo", 35.7, 139.7},       {"London", 51.5, -0.1},
    {"Paris", 48.9, 2.4},         {"Berlin", 52.5, 13.4},       {"Stockholm", 59.3, 18.1},
    {"Helsinki", 60.2, 24.9},     {"Dublin", 53.3, -6.3},       {"Madrid", 40.4, -3.7},
    {"Zurich", 47.4, 8.5},        {"Vienna", 48.2, 16.4},       {"Milan", 45.5, 9.2},
    {"San Francisco", 37.8, -122.4}, {"Seattle", 47.6, -122.3}, {"Dallas", 32.8, -96.8},
    {"Atlanta", 33.7, -84.4},     {"Miami", 25.8, -80.2},       {"Denver", 39.7, -105.0},
    {"Toronto", 43.7, -79.4},     {"Montreal", 45.5, -73.6},    {"Sao Paulo", -23.5, -46.6},
    {"Buenos Aires", -34.6, -58.4}, {"Bogota", 4.7, -74.1},     {"Santiago", -33.4, -70.7},
    {"Beijing", 39.9, 116.4},     {"Mumbai", 19.1, 72.9},       {"Bangalore", 13.0, 77.6},
    {"Bangkok", 13.8, 100.5},     {"Taipei", 25.0, 121.5},      {"Osaka", 34.7, 135.5},
    {"Sydney", -33.9, 151.2},     {"Melbourne", -37.8, 145.0},  {"Auckland", -36.8, 174.8},
    {"Johannesburg", -26.2, 28.0}, {"Dubai", 25.2, 55.3},       {"Istanbul", 41.0, 29.0},
};

typedef struct {
  double lat, lon;
  int weight;
} Anchor;

typedef struct {
  const char *name;
  const char *alias; /* another name of the same region, or NULL */
  const Anchor *anchors;
  guint n;
} Region;

static const Anchor na_anchors[] = {{40.7, -74.0, 3}, {41.9, -87.6, 2}, {37.8, -122.4, 3}, {47.6, -122.3, 1},
                                    {32.8, -96.8, 2}, {33.7, -84.4, 1}, {43.7, -79.4, 1},  {45.5, -73.6, 1},
                                    {39.7, -105.0, 1}, {34.1, -118.2, 2}};

static const Anchor eu_anchors[] = {{51.5, -0.1, 3}, {50.1, 8.7, 3},  {48.9, 2.4, 2},  {52.4, 4.9, 2},
                                    {52.5, 13.4, 2}, {59.3, 18.1, 1}, {40.4, -3.7, 1}, {52.2, 21.0, 1},
                                    {55.8, 37.6, 2}, {41.9, 12.5, 1}, {50.1, 14.4, 1}, {48.2, 16.4, 1},
                                    {60.2, 24.9, 1}};

static const Anchor sa_anchors[] = {{-23.5, -46.6, 3}, {-34.6, -58.4, 2}, {4.7, -74.1, 1},
                                    {-33.4, -70.7, 1}, {-12.0, -77.0, 1}, {-22.9, -43.2, 1}};

static const Anchor ap_anchors[] = {{31.2, 121.5, 3}, {39.9, 116.4, 2}, {22.5, 114.1, 2}, {30.3, 120.2, 1},
                                    {1.4, 103.8, 2},  {37.6, 127.0, 2}, {19.1, 72.9, 1},  {13.8, 100.5, 1},
                                    {22.3, 114.2, 2}, {25.0, 121.5, 1}, {28.6, 77.2, 1},  {14.6, 121.0, 1}};

static const Anchor jp_anchors[] = {{35.7, 139.7, 4}, {34.7, 135.5, 2}, {43.1, 141.4, 1}, {33.6, 130.4, 1}};

static const Anchor au_anchors[] = {{-33.9, 151.2, 3}, {-37.8, 145.0, 2}, {-27.5, 153.0, 1}, {-32.0, 115.9, 1},
                                    {-36.8, 174.8, 1}};

static const Region regions[] = {
    {"NA", "North America", na_anchors, G_N_ELEMENTS(na_anchors)},
    {"EU", "Europe", eu_anchors, G_N_ELEMENTS(eu_anchors)},
    {"SA", "South America", sa_anchors, G_N_ELEMENTS(sa_anchors)},
    {"AP", "Asia Pacific", ap_anchors, G_N_ELEMENTS(ap_anchors)},
    {"JP", "Japan", jp_anchors, G_N_ELEMENTS(jp_anchors)},
    {"AU", "Australia", au_anchors, G_N_ELEMENTS(au_anchors)},
};

static const Region *region_find(const char *name) {
  if (!name) return NULL;
  for (guint i = 0; i < G_N_ELEMENTS(regions); i++)
    if (g_ascii_strcasecmp(name, regions[i].name) == 0 ||
        (regions[i].alias && g_ascii_strcasecmp(name, regions[i].alias) == 0))
      return &regions[i];
  return NULL;
}

gboolean an_map_place(const char *name, double *lon, double *lat) {
  if (!name || !*name) return FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(cities); i++)
    if (g_ascii_strcasecmp(name, cities[i].name) == 0) {
      *lon = cities[i].lon;
      *lat = cities[i].lat;
      return TRUE;
    }
  const Region *r = region_find(name);
  if (r) {
    *lon = r->anchors[0].lon;
    *lat = r->anchors[0].lat;
    return TRUE;
  }
  return FALSE;
}

static uint64_t splitmix64(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

/* FNV-1a of a string: a stable key of a region name. */
static uint64_t str_hash(const char *s) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; s && *s; s++) h = (h ^ (uint8_t)*s) * UINT64_C(0x100000001b3);
  return h;
}

static double unit(uint64_t x) { return (double)(x >> 11) / 9007199254740992.0; }

static void unknown_spot(guint index, double *lon, double *lat) {
  *lon = -150.0 + 40.0 * (double)(index % 8);
  *lat = -50.0;
}

gboolean an_map_region_spot(const char *region, guint k, guint unknown_index, double *lon, double *lat) {
  uint64_t h = splitmix64(str_hash(region) ^ splitmix64(k));
  const Region *r = region_find(region);
  double jx = unit(splitmix64(h + 1)) * 2 - 1, jy = unit(splitmix64(h + 2)) * 2 - 1;
  if (!r) {
    unknown_spot(unknown_index, lon, lat);
    *lon += jx * 6.0;
    *lat += jy * 3.0;
    return FALSE;
  }
  int total = 0;
  for (guint i = 0; i < r->n; i++) total += r->anchors[i].weight;
  int pick = (int)(unit(h) * total), i = 0;
  while (pick >= r->anchors[i].weight) pick -= r->anchors[i++].weight;
  *lon = r->anchors[i].lon + jx * 2.5;
  *lat = r->anchors[i].lat + jy * 1.5;
  return TRUE;
}

void mp_put_f(GString *s, double v) {
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, "%.1f", v);
  if (strcmp(buf, "-0.0") == 0) strcpy(buf, "0.0");
  g_string_append(s, buf);
}

void mp_put_esc(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text ? text : "", -1);
  g_autofree char *e = g_markup_escape_text(valid, -1);
  g_string_append(s, e);
}

/* A JSON string (for the script's data; "</" is written as "<\/" so the data cannot end the element). */
void mp_put_json_str(GString *s, const char *text) {
  g_autofree char *valid = g_utf8_make_valid(text ? text : "", -1);
  g_string_append_c(s, '"');
  for (const char *p = valid; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\')
      g_string_append_printf(s, "\\%c", c);
    else if (c == '/' && p > valid && p[-1] == '<')
      g_string_append(s, "\\/");
    else if (c < 0x20)
      g_string_append_printf(s, "\\u%04x", c);
    else
      g_string_append_c(s, (char)c);
  }
  g_string_append_c(s, '"');
}

static void put_count(GString *s, guint64 n) {
  /* thousands separated by commas, as the rest of the page */
  char buf[32];
  g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, n);
  gsize len = strlen(buf);
  for (gsize i = 0; i < len; i++) {
    if (i > 0 && (len - i) % 3 == 0) g_string_append_c(s, ',');
    g_string_append_c(s, buf[i]);
  }
}

/* Pool colours: a qualitative palette (Tableau 10), by the pool's first appearance. */
static const char *const pool_colours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

void mp_layout_free(Layout *l) {
  if (!l) return;
  g_free(l->x);
  g_free(l->y);
  g_free(l->dot_of);
  g_free(l->dot_x);
  g_free(l->dot_y);
  g_free(l->dot_count);
  g_free(l->dot_first);
  if (l->regions) g_ptr_array_unref(l->regions);
  g_free(l->region_nodes);
  g_free(l->node_region);
  g_free(l);
}

static guint region_index(GPtrArray *names, const char *name) {
  for (guint i = 0; i < names->len; i++)
    if (strcmp(g_ptr_array_index(names, i), name ? name : "") == 0) return i;
  g_ptr_array_add(names, g_strdup(name ? name : ""));
  return names->len - 1;
}

static void note_once(GPtrArray *notes, char *msg) {
  if (!notes) {
    g_free(msg);
    return;
  }
  for (guint i = 0; i < notes->len; i++)
    if (strcmp(g_ptr_array_index(notes, i), msg) == 0) {
      g_free(msg);
      return;
    }
  g_ptr_array_add(notes, msg);
}

static guint unknown_region_index(const Layout *l, guint r) {
  guint k = 0;
  for (guint i = 0; i < r; i++) k += region_find(g_ptr_array_index(l->regions, i)) == NULL;
  return k;
}

Layout *mp_layout_new(const AnMapNet *net, GPtrArray *notes) {
  g_autoptr(Layout) l = g_new0(Layout, 1);
  guint32 n = net->n_nodes;
  l->regions = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < net->n_regions; i++) g_ptr_array_add(l->regions, g_strdup(net->regions[i]));
  l->node_region = g_new0(guint, MAX(n, 1));
  for (guint32 v = 0; v < n; v++) l->node_region[v] = region_index(l->regions, net->nodes[v].region);
  guint nr = l->regions->len;
  l->region_nodes = g_new0(guint32, MAX(nr, 1));
  guint32 n_ord = 0;
  for (guint32 v = 0; v < n; v++)
    if (net->nodes[v].role == AN_MAP_NODE) l->region_nodes[l->node_region[v]]++, n_ord++;
  for (guint r = 0; r < nr; r++)
    if (!region_find(g_ptr_array_index(l->regions, r)))
      note_once(notes, g_strdup_printf("region '%s' has no coordinates in the map's table (analysis/map.c): its "
                                       "nodes are drawn at the bottom of the map",
                                       (const char *)g_ptr_array_index(l->regions, r)));
  guint32 group = n_ord > AN_MAP_MAX_DOTS ? (n_ord + AN_MAP_MAX_DOTS - 1) / AN_MAP_MAX_DOTS : 1;
  l->x = g_new0(double, MAX(n, 1));
  l->y = g_new0(double, MAX(n, 1));
  l->dot_of = g_new0(guint32, MAX(n, 1));
  l->dot_x = g_new0(double, MAX(n, 1));
  l->dot_y = g_new0(double, MAX(n, 1));
  l->dot_count = g_new0(guint32, MAX(n, 1));
  l->dot_first = g_new0(guint32, MAX(n, 1));
  g_autofree guint32 *k_in_region = g_new0(guint32, MAX(nr, 1));
  g_autofree guint32 *open_dot = g_new(guint32, MAX(nr, 1)); /* the region's dot being filled */
  for (guint r = 0; r < nr; r++) open_dot[r] = G_MAXUINT32;
  /* Specials: on their city (a ring around it for the second and later ones there), else their region. */
  g_autoptr(GHashTable) in_city = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint32 v = 0; v < n; v++) {
    const AnMapNode *nd = &net->nodes[v];
    guint r = l->node_region[v];
    double lon, lat;
    if (nd->role == AN_MAP_NODE) {
      guint32 k = k_in_region[r]++;
      /* the group's spot is its first node's */
      if (k % group == 0) {
        an_map_region_spot(g_ptr_array_index(l->regions, r), k / group, unknown_region_index(l, r), &lon, &lat);
        open_dot[r] = l->n_dots;
        l->dot_x[l->n_dots] = map_x(lon);
        l->dot_y[l->n_dots] = map_y(lat);
        l->dot_first[l->n_dots] = v;
        l->n_dots++;
      }
      guint32 d = open_dot[r];
      l->dot_of[v] = d;
      l->dot_count[d]++;
      l->x[v] = l->dot_x[d];
      l->y[v] = l->dot_y[d];
      continue;
    }
    gboolean known = nd->city && *nd->city && an_map_place(nd->city, &lon, &lat);
    if (!known && nd->city && *nd->city)
      note_once(notes, g_strdup_printf("city '%s' has no coordinates in the map's table (analysis/map.c): its "
                                       "nodes are drawn at their region's first place",
                                       nd->city));
    if (!known && !an_map_place(g_ptr_array_index(l->regions, r), &lon, &lat))
      unknown_spot(unknown_region_index(l, r), &lon, &lat);
    const char *key = nd->city && *nd->city ? nd->city : (const char *)g_ptr_array_index(l->regions, r);
    guint i = GPOINTER_TO_UINT(g_hash_table_lookup(in_city, key));
    g_hash_table_insert(in_city, (gpointer)key, GUINT_TO_POINTER(i + 1));
    double x = map_x(lon), y = map_y(lat);
    if (i > 0) { /* ring of 8 around the place, then a wider one */
      double ang = (double)((i - 1) % 8) * G_PI / 4.0 + ((i - 1) / 8 % 2) * G_PI / 8.0;
      double rad = 5.0 + 4.0 * (double)((i - 1) / 8);
      x += rad * cos(ang);
      y += rad * sin(ang);
    }
    l->x[v] = x;
    l->y[v] = y;
    l->dot_of[v] = l->n_dots;
    l->dot_x[l->n_dots] = x;
    l->dot_y[l->n_dots] = y;
    l->dot_count[l->n_dots] = 1;
    l->dot_first[l->n_dots] = v;
    l->n_dots++;
  }
  return g_steal_pointer(&l);
}

static void land_paths(GString *h) {
  g_string_append(h, "<g id=\"map-land\" class=\"land\"><path fill=\"#e9e6dc\" stroke=\"#9a9a8e\" "
                     "stroke-width=\"0.5\" d=\"");
  gsize i = 0;
  while (land_110m[i] != 0) {
    int n = land_110m[i++];
    /* Antarctica lies below the map's bottom edge: leave out rings entirely south of it */
    int max_lat = -900;
    for (int k = 0; k < n; k++) max_lat = MAX(max_lat, land_110m[i + 2 * k + 1]);
    if (max_lat < (int)(MAP_LAT_BOTTOM * 10)) {
      i += 2 * (gsize)n;
      continue;
    }
    for (int k = 0; k < n; k++, i += 2) {
      /* a ring that crosses the antimeridian jumps by ~360 degrees: move, do not draw across the map */
      gboolean jump = k > 0 && abs(land_110m[i] - land_110m[i - 2]) > 1800;
      g_string_append_c(h, k == 0 || jump ? 'M' : 'L');
      mp_put_f(h, map_x(land_110m[i] / 10.0));
      g_string_append_c(h, ' ');
      mp_put_f(h, map_y(land_110m[i + 1] / 10.0));
    }
    g_string_append_c(h, 'Z');
  }
  g_string_append(h, "\"/></g>\n");
}

static double dot_radius(guint32 count) { return count <= 1 ? 1.3 : 1.3 * sqrt((double)count); }

static void svg_dots(GString *h, const Layout *l, const AnMapNet *net, const char *id) {
  g_string_append_printf(h, "<g id=\"%s\" class=\"dots\">", id);
  for (guint32 d = 0; d < l->n_dots; d++) {
    g_string_append(h, "<circle cx=\"");
    mp_put_f(h, l->dot_x[d]);
    g_string_append(h, "\" cy=\"");
    mp_put_f(h, l->dot_y[d]);
    g_string_append(h, "\" r=\"");
    gboolean special = net->nodes[l->dot_first[d]].role != AN_MAP_NODE;
    mp_put_f(h, special ? 2.6 : dot_radius(l->dot_count[d]));
    g_string_append(h, "\"");
    if (l->dot_count[d] > 1)
      g_string_append_printf(h, "><title>%u nodes</title></circle>", l->dot_count[d]);
    else
      g_string_append(h, "/>");
  }
  g_string_append(h, "</g>\n");
}

/* The pools in order of first appearance among the gateways (and nodes hosting miners). */
static GPtrArray *pools_of(const AnMapNet *net) {
  GPtrArray *p = g_ptr_array_new();
  for (guint32 v = 0; v < net->n_nodes; v++) {
    const char *pool = net->nodes[v].pool;
    if (net->nodes[v].role != AN_MAP_GATEWAY || !pool || !*pool) continue;
    gboolean seen = FALSE;
    for (guint i = 0; i < p->len && !seen; i++) seen = strcmp(g_ptr_array_index(p, i), pool) == 0;
    if (!seen) g_ptr_array_add(p, (gpointer)pool);
  }
  return p;
}

static const char *pool_colour(GPtrArray *pools, const char *pool) {
  for (guint i = 0; i < pools->len; i++)
    if (pool && strcmp(g_ptr_array_index(pools, i), pool) == 0) return pool_colours[i % G_N_ELEMENTS(pool_colours)];
  return "#555";
}

void mp_svg_line(GString *h, double x1, double y1, double x2, double y2, const char *stroke) {
  g_string_append(h, "<line x1=\"");
  mp_put_f(h, x1);
  g_string_append(h, "\" y1=\"");
  mp_put_f(h, y1);
  g_string_append(h, "\" x2=\"");
  mp_put_f(h, x2);
  g_string_append(h, "\" y2=\"");
  mp_put_f(h, y2);
  g_string_append_printf(h, "\"%s%s%s/>", stroke ? " stroke=\"" : "", stroke ? stroke : "", stroke ? "\"" : "");
}

static void svg_links(GString *h, const Layout *l, const AnMapNet *net, GPtrArray *pools) {
  g_string_append(h, "<g class=\"links mesh\" stroke=\"#8a6d3b\" stroke-width=\"0.4\" stroke-opacity=\"0.5\">");
  for (guint i = 0; i < net->n_links; i++) {
    guint32 a = net->links[2 * i], b = net->links[2 * i + 1];
    if (a >= net->n_nodes || b >= net->n_nodes) continue;
    mp_svg_line(h, l->x[a], l->y[a], l->x[b], l->y[b], NULL);
  }
  g_string_append(h, "</g>\n<g class=\"links poolmesh\" stroke-width=\"1.2\" stroke-opacity=\"0.8\">");
  for (guint p = 0; p < pools->len; p++) {
    const char *pool = g_ptr_array_index(pools, p);
    for (guint32 a = 0; a < net->n_nodes; a++) {
      if (net->nodes[a].role != AN_MAP_GATEWAY || g_strcmp0(net->nodes[a].pool, pool) != 0) continue;
      for (guint32 b = a + 1; b < net->n_nodes; b++)
        if (net->nodes[b].role == AN_MAP_GATEWAY && g_strcmp0(net->nodes[b].pool, pool) == 0)
          mp_svg_line(h, l->x[a], l->y[a], l->x[b], l->y[b], pool_colour(pools, pool));
    }
  }
  g_string_append(h, "</g>\n");
}

void mp_svg_text(GString *h, double x, double y, const char *cls, const char *anchor, const char *text) {
  g_string_append(h, "<text x=\"");
  mp_put_f(h, x);
  g_string_append(h, "\" y=\"");
  mp_put_f(h, y);
  g_string_append_printf(h, "\" class=\"%s\"%s%s%s>", cls, anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
                         anchor ? "\"" : "");
  mp_put_esc(h, text);
  g_string_append(h, "</text>");
}

static void svg_markers(GString *h, const Layout *l, const AnMapNet *net, GPtrArray *pools) {
  g_string_append(h, "<g class=\"markers\">");
  for (guint32 v = 0; v < net->n_nodes; v++) {
    const AnMapNode *nd = &net->nodes[v];
    if (nd->role != AN_MAP_GATEWAY) continue;
    g_string_append(h, "<rect class=\"gw\" x=\"");
    mp_put_f(h, l->x[v] - 2.2);
    g_string_append(h, "\" y=\"");
    mp_put_f(h, l->y[v] - 2.2);
    g_string_append_printf(h, "\" width=\"4.4\" height=\"4.4\" fill=\"%s\"><title>gateway ", pool_colour(pools, nd->pool));
    mp_put_esc(h, nd->name);
    if (nd->city && *nd->city) {
      g_string_append(h, " (");
      mp_put_esc(h, nd->city);
      g_string_append(h, ")");
    }
    g_string_append(h, "</title></rect>");
  }
  for (guint32 v = 0; v < net->n_nodes; v++) {
    const AnMapNode *nd = &net->nodes[v];
    if (nd->role != AN_MAP_VANTAGE) continue;
    double x = l->x[v], y = l->y[v];
    g_string_append(h, "<path class=\"vp\" d=\"M");
    mp_put_f(h, x);
    g_string_append_c(h, ' ');
    mp_put_f(h, y - 5.5);
    g_string_append(h, "L");
    mp_put_f(h, x + 4.8);
    g_string_append_c(h, ' ');
    mp_put_f(h, y + 3);
    g_string_append(h, "L");
    mp_put_f(h, x - 4.8);
    g_string_append_c(h, ' ');
    mp_put_f(h, y + 3);
    g_string_append(h, "Z\"><title>vantage point ");
    mp_put_esc(h, nd->name);
    if (nd->city && *nd->city) {
      g_string_append(h, " (");
      mp_put_esc(h, nd->city);
      g_string_append(h, ")");
    }
    g_string_append(h, "</title></path>");
  }
  /* Labels: each vantage point; each gateway city once, with its gateway count. */
  for (guint32 v = 0; v < net->n_nodes; v++) {
    const AnMapNode *nd = &net->nodes[v];
    if (nd->role != AN_MAP_VANTAGE) continue;
    mp_svg_text(h, l->x[v] - 6, l->y[v] - 5, "vplabel", "end", nd->name);
  }
  g_autoptr(GHashTable) done = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint32 v = 0; v < net->n_nodes; v++) {
    const AnMapNode *nd = &net->nodes[v];
    if (nd->role != AN_MAP_GATEWAY) continue;
    const char *place = nd->city && *nd->city ? nd->city : nd->region;
    if (!place || g_hash_table_contains(done, place)) continue;
    g_hash_table_add(done, (gpointer)place);
    guint count = 0;
    double lx = 0, ly = 0;
    gboolean first = TRUE;
    for (guint32 w = 0; w < net->n_nodes; w++) {
      const AnMapNode *o = &net->nodes[w];
      const char *op = o->city && *o->city ? o->city : o->region;
      if (o->role != AN_MAP_GATEWAY || g_strcmp0(op, place) != 0) continue;
      count++;
      if (first || l->x[w] > lx) lx = l->x[w];
      if (first || l->y[w] > ly) ly = l->y[w];
      first = FALSE;
    }
    g_autofree char *label = g_strdup_printf("%s \xc3\x97%u", place, count);
    mp_svg_text(h, lx + 4, ly + 8, "gwlabel", NULL, label);
  }
  g_string_append(h, "</g>\n");
}

/* Region shading: a rounded box around the region's anchors, darker for a larger share of the nodes. */
static void svg_regions(GString *h, const Layout *l, const AnMapNet *net) {
  guint nr = l->regions->len;
  guint32 total = 0;
  for (guint r = 0; r < nr; r++) total += l->region_nodes[r];
  g_string_append(h, "<g class=\"regions\">");
  for (guint r = 0; r < nr; r++) {
    const char *name = g_ptr_array_index(l->regions, r);
    const Region *reg = region_find(name);
    double share = total ? (double)l->region_nodes[r] / total
                         : (net->region_share && r < net->n_regions ? net->region_share[r] : 0);
    double x0, x1, y0, y1;
    if (reg) {
      double lo0 = 999, lo1 = -999, la0 = 999, la1 = -999;
      for (guint i = 0; i < reg->n; i++) {
        lo0 = MIN(lo0, reg->anchors[i].lon);
        lo1 = MAX(lo1, reg->anchors[i].lon);
        la0 = MIN(la0, reg->anchors[i].lat);
        la1 = MAX(la1, reg->anchors[i].lat);
      }
      x0 = map_x(lo0 - 5), x1 = map_x(lo1 + 5), y0 = map_y(la1 + 4), y1 = map_y(la0 - 4);
    } else {
      double lon, lat;
      unknown_spot(unknown_region_index(l, r), &lon, &lat);
      x0 = map_x(lon - 8), x1 = map_x(lon + 8), y0 = map_y(lat + 5), y1 = map_y(lat - 5);
    }
    g_string_append(h, "<rect x=\"");
    mp_put_f(h, x0);
    g_string_append(h, "\" y=\"");
    mp_put_f(h, y0);
    g_string_append(h, "\" width=\"");
    mp_put_f(h, x1 - x0);
    g_string_append(h, "\" height=\"");
    mp_put_f(h, y1 - y0);
    g_string_append(h, "\" rx=\"8\" fill-opacity=\"");
    mp_put_f(h, 0.05 + 0.45 * share);
    g_string_append(h, "\"><title>");
    mp_put_esc(h, name);
    g_string_append(h, "</title></rect>");
    GString *lab = g_string_new(NULL);
    g_string_append_printf(lab, "%s ", name);
    if (total) {
      put_count(lab, l->region_nodes[r]);
      g_string_append(lab, " nodes, ");
    }
    char pct[32];
    g_ascii_formatd(pct, sizeof pct, "%.1f", 100 * share);
    g_string_append_printf(lab, "%s%%", pct);
    mp_svg_text(h, x0 + 3, y1 - 3, "reglabel", NULL, lab->str);
    g_string_free(lab, TRUE);
  }
  g_string_append(h, "</g>\n");
}

static const char *const MAP_CSS =
    "<style>\n"
    ".map svg{display:block;width:100%;height:auto;background:#eef4f8;border:1px solid #ccc}\n"
    ".map .land path{stroke-linejoin:round}\n"
    ".map .regions rect{fill:#2b6cb0;stroke:#2b6cb0;stroke-width:0.5;stroke-opacity:0.6}\n"
    "#map-svg .dots circle{fill:#6b6b6b;fill-opacity:0.7}\n"
    ".map .gw{stroke:#222;stroke-width:0.5}.map .vp{fill:#c00;stroke:#fff;stroke-width:0.8}\n"
    ".map text{font-family:sans-serif;paint-order:stroke;stroke:#fff;stroke-width:2px}\n"
    ".map .vplabel{font-size:10px;font-weight:bold;fill:#900}.map .gwlabel{font-size:7px;fill:#222}\n"
    ".map .reglabel{font-size:8px;fill:#1a4a80}\n"
    ".map .toggles{font-size:0.9em;margin:0.3em 0}\n"
    ".map input.t-mesh:not(:checked)~svg .mesh,.map input.t-pool:not(:checked)~svg .poolmesh{display:none}\n"
    ".journey .controls{display:flex;gap:0.8em;align-items:center;margin:0.4em 0}\n"
    ".journey .controls input[type=range]{flex:1}\n"
    ".journey .dots circle{fill-opacity:0.9}\n"
    ".journey .axis text{font-size:10px;font-family:sans-serif}.journey .axis .vpt{font-weight:bold}\n"
    "@media print{.journey .controls button,.map .toggles input{display:none}}\n"
    "</style>\n";

void mp_map_toggles(GString *h, const char *prefix, guint n_links, guint n_pool_links, gboolean pool_checked) {
  g_string_append_printf(h,
                         "<input type=\"checkbox\" class=\"t-mesh\" id=\"%s-mesh\"><label for=\"%s-mesh\" "
                         "class=\"toggles\"> gateway-to-gateway links (%u) </label>\n"
                         "<input type=\"checkbox\" class=\"t-pool\" id=\"%s-pool\"%s><label for=\"%s-pool\" "
                         "class=\"toggles\"> pool mesh: each pool's gateways joined (%u lines)</label>\n",
                         prefix, prefix, n_links, prefix, pool_checked ? " checked" : "", prefix, n_pool_links);
}

guint mp_count_pool_links(const AnMapNet *net) {
  guint n = 0;
  for (guint32 a = 0; a < net->n_nodes; a++)
    for (guint32 b = a + 1; b < net->n_nodes && net->nodes[a].role == AN_MAP_GATEWAY; b++)
      n += net->nodes[b].role == AN_MAP_GATEWAY && net->nodes[a].pool && *net->nodes[a].pool &&
           g_strcmp0(net->nodes[a].pool, net->nodes[b].pool) == 0;
  return n;
}

void an_map_figure(GString *h, const AnMapNet *net, GPtrArray *notes) {
  g_return_if_fail(h && net);
  g_autoptr(Layout) l = mp_layout_new(net, notes);
  g_autoptr(GPtrArray) pools = pools_of(net);
  guint32 n_vp = 0, n_gw = 0, n_ord = 0;
  for (guint32 v = 0; v < net->n_nodes; v++) {
    n_vp += net->nodes[v].role == AN_MAP_VANTAGE;
    n_gw += net->nodes[v].role == AN_MAP_GATEWAY;
    n_ord += net->nodes[v].role == AN_MAP_NODE;
  }
  g_string_append(h, MAP_CSS);
  g_string_append(h, "<figure id=\"fig-map\" class=\"map\">\n<figcaption>The network: ");
  put_count(h, n_ord);
  g_string_append(h, " nodes by region, ");
  put_count(h, n_gw);
  g_string_append(h, " pool gateways and ");
  put_count(h, n_vp);
  g_string_append(h, " vantage points</figcaption>\n");
  mp_map_toggles(h, "map", net->n_links, mp_count_pool_links(net), TRUE);
  g_string_append_printf(h,
                         "<svg id=\"map-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                         "role=\"img\"><title>The simulated network on a world map</title>\n",
                         MAP_W, MAP_H);
  land_paths(h);
  svg_regions(h, l, net);
  svg_dots(h, l, net, "map-dots");
  svg_links(h, l, net, pools);
  svg_markers(h, l, net, pools);
  g_string_append(h, "</svg>\n<p class=\"note\">Red triangles: vantage points. Squares: pool gateways, one "
                     "colour per pool (hover for the name); a label gives the city and its number of gateways. "
                     "Grey dots: ordinary nodes");
  guint32 group = n_ord > AN_MAP_MAX_DOTS ? (n_ord + AN_MAP_MAX_DOTS - 1) / AN_MAP_MAX_DOTS : 1;
  if (group > 1) g_string_append_printf(h, ", drawn %u to a dot", group);
  g_string_append(h, ". Boxes: regions, darker for a larger share of the nodes. The model knows each ordinary "
                     "node's region only: its place inside the region is drawn near one of the region's large "
                     "cities with a deterministic jitter, for display. ");
  g_string_append(h, net->from_trace ? "Nodes from the run's node table (trace_nodes.csv)."
                                     : "Node counts per region from the scenario (the run's rounding of nodes "
                                       "x node_share).");
  g_string_append(h, " Outline: Natural Earth 1:110m land (public domain).</p>\n");
  /* Gateways per city, for print. */
  if (n_gw > 0) {
    g_string_append(h, "<table><caption>Pool gateways per city</caption><tr><th>city</th><th>gateways</th>"
                       "<th>pools</th></tr>\n");
    g_autoptr(GPtrArray) places = g_ptr_array_new();
    for (guint32 v = 0; v < net->n_nodes; v++) {
      const AnMapNode *nd = &net->nodes[v];
      if (nd->role != AN_MAP_GATEWAY) continue;
      const char *place = nd->city && *nd->city ? nd->city : nd->region;
      gboolean seen = FALSE;
      for (guint i = 0; i < places->len && !seen; i++) seen = g_strcmp0(g_ptr_array_index(places, i), place) == 0;
      if (!seen) g_ptr_array_add(places, (gpointer)place);
    }
    for (guint i = 0; i < places->len; i++) {
      const char *place = g_ptr_array_index(places, i);
      guint count = 0;
      g_autoptr(GString) names = g_string_new(NULL);
      for (guint32 v = 0; v < net->n_nodes; v++) {
        const AnMapNode *nd = &net->nodes[v];
        const char *op = nd->city && *nd->city ? nd->city : nd->region;
        if (nd->role != AN_MAP_GATEWAY || g_strcmp0(op, place) != 0) continue;
        if (count++) g_string_append(names, ", ");
        mp_put_esc(names, nd->pool && *nd->pool ? nd->pool : nd->name);
      }
      g_string_append(h, "<tr><td>");
      mp_put_esc(h, place);
      g_string_append_printf(h, "</td><td class=\"num\">%u</td><td>%s</td></tr>\n", count, names->str);
    }
    g_string_append(h, "</table>\n");
  }
  g_string_append(h, "</figure>\n");
}

void an_map_pools_figure(GString *h, const char *const *pools, const double *share, guint n) {
  g_string_append(h, MAP_CSS);
  g_string_append(h, "<figure id=\"fig-map\" class=\"map pools-only\">\n<figcaption>The network: pools only "
                     "(this network model has no nodes or geography)</figcaption>\n");
  guint per_row = 8, rows = (n + per_row - 1) / per_row;
  double cell = MAP_W / per_row, hgt = MAX(rows, 1) * 110.0;
  g_string_append_printf(h,
                         "<svg id=\"map-svg\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                         "role=\"img\"><title>Pools, disc area by hash share</title>\n<g class=\"pools\">",
                         MAP_W, hgt);
  double maxs = 0;
  for (guint i = 0; i < n; i++) maxs = MAX(maxs, share[i]);
  for (guint i = 0; i < n; i++) {
    double cx = cell * (i % per_row) + cell / 2, cy = 110.0 * (i / per_row) + 45;
    double r = maxs > 0 ? 38.0 * sqrt(share[i] / maxs) : 5;
    g_string_append(h, "<circle cx=\"");
    mp_put_f(h, cx);
    g_string_append(h, "\" cy=\"");
    mp_put_f(h, cy);
    g_string_append(h, "\" r=\"");
    mp_put_f(h, MAX(r, 1.5));
    g_string_append_printf(h, "\" fill=\"%s\"><title>", pool_colours[i % G_N_ELEMENTS(pool_colours)]);
    mp_put_esc(h, pools[i]);
    g_string_append(h, "</title></circle>");
    char pct[32];
    g_ascii_formatd(pct, sizeof pct, "%.1f", 100 * share[i]);
    g_autofree char *lab = g_strdup_printf("%s %s%%", pools[i], pct);
    mp_svg_text(h, cx, cy + 55, "gwlabel", "middle", lab);
  }
  g_string_append(h, "</g>\n</svg>\n<p class=\"note\">Each disc is a pool, its area its hash share. A block "
                     "reaches each other pool after an independent delay draw, so there is no map and no "
                     "per-node journey.</p>\n</figure>\n");
}
