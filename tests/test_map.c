/* test_map.c: the report's world map and journey (analysis/map.c) on hand-built networks. */
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "map.h"

static guint count_of(const char *hay, const char *needle) {
  guint n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* The text between `start` (included) and the next `end` after it, or NULL. */
static char *between(const char *hay, const char *start, const char *end) {
  const char *a = strstr(hay, start);
  if (!a) return NULL;
  const char *b = strstr(a, end);
  return b ? g_strndup(a, (gsize)(b - a)) : NULL;
}

static void test_places(void) {
  double lon = 0, lat = 0;
  CU_ASSERT_TRUE(an_map_place("Lisbon", &lon, &lat));
  CU_ASSERT_DOUBLE_EQUAL(lon, -9.1, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(lat, 38.7, 1e-9);
  CU_ASSERT_TRUE(an_map_place("hong kong", &lon, &lat)); /* case-insensitive */
  CU_ASSERT_DOUBLE_EQUAL(lat, 22.3, 1e-9);
  CU_ASSERT_TRUE(an_map_place("EU", &lon, &lat)); /* a region: its first anchor (London) */
  CU_ASSERT_DOUBLE_EQUAL(lon, -0.1, 1e-9);
  CU_ASSERT_FALSE(an_map_place("Atlantis", &lon, &lat));
  CU_ASSERT_FALSE(an_map_place("", &lon, &lat));
}

/* Spots are deterministic, inside the jitter of one of the region's anchors, and differ between nodes. */
static void test_region_spots(void) {
  double lon1, lat1, lon2, lat2;
  CU_ASSERT_TRUE(an_map_region_spot("JP", 7, 0, &lon1, &lat1));
  CU_ASSERT_TRUE(an_map_region_spot("JP", 7, 0, &lon2, &lat2));
  CU_ASSERT_EQUAL(lon1, lon2);
  CU_ASSERT_EQUAL(lat1, lat2);
  int distinct = 0;
  for (guint k = 0; k < 200; k++) {
    double lon, lat;
    CU_ASSERT_TRUE(an_map_region_spot("JP", k, 0, &lon, &lat));
    /* JP's anchors span lon 130.4..141.4, lat 33.6..43.1; jitter +-2.5 / +-1.5 */
    CU_ASSERT_TRUE(lon >= 130.4 - 2.5 && lon <= 141.4 + 2.5);
    CU_ASSERT_TRUE(lat >= 33.6 - 1.5 && lat <= 43.1 + 1.5);
    distinct += lon != lon1 || lat != lat1;
  }
  CU_ASSERT_TRUE(distinct >= 190);
  double lon, lat;
  CU_ASSERT_FALSE(an_map_region_spot("Mars", 0, 1, &lon, &lat));
  CU_ASSERT_TRUE(lat < -45 && lat > -55);
}

/* A small network: 2 vantage points, 3 gateways of 2 pools, ordinary nodes in two regions and an unknown
 * region and city. */
typedef struct {
  GArray *nodes;
  AnMapNet net;
  guint32 links[2];
} Fixture;

static void fixture(Fixture *f, guint32 n_ordinary) {
  static const char *const regions[] = {"EU", "AP"};
  f->nodes = g_array_new(FALSE, TRUE, sizeof(AnMapNode));
  AnMapNode sp[] = {
      {AN_MAP_VANTAGE, "WE", "", "EU", "Lisbon"},     {AN_MAP_VANTAGE, "EA", "", "AP", "Shanghai"},
      {AN_MAP_GATEWAY, "P#1", "P", "EU", "Frankfurt"}, {AN_MAP_GATEWAY, "P#2", "P", "AP", "Shanghai"},
      {AN_MAP_GATEWAY, "Q#1", "Q", "AP", "Gotham"},
  };
  g_array_append_vals(f->nodes, sp, G_N_ELEMENTS(sp));
  for (guint32 i = 0; i < n_ordinary; i++) {
    AnMapNode o = {AN_MAP_NODE, "", "", i % 3 == 0 ? "AP" : i % 7 == 1 ? "Mars" : "EU", ""};
    g_array_append_val(f->nodes, o);
  }
  f->links[0] = 2;
  f->links[1] = 4;
  f->net = (AnMapNet){.regions = regions, .n_regions = 2, .nodes = (const AnMapNode *)(gpointer)f->nodes->data,
                      .n_nodes = f->nodes->len, .links = f->links, .n_links = 1};
}

static void test_figure(void) {
  Fixture f;
  fixture(&f, 100);
  g_autoptr(GString) h = g_string_new(NULL);
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  an_map_figure(h, &f.net, notes);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<figure id=\"fig-map\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<g id=\"map-land\""));
  g_autofree char *dots = between(h->str, "<g id=\"map-dots\"", "</g>");
  CU_ASSERT_PTR_NOT_NULL_FATAL(dots);
  CU_ASSERT_EQUAL(count_of(dots, "<circle"), 105); /* one per node below AN_MAP_MAX_DOTS */
  CU_ASSERT_EQUAL(count_of(h->str, "class=\"vp\""), 2);
  CU_ASSERT_EQUAL(count_of(h->str, "class=\"gw\""), 3);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, ">WE</text>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, ">Shanghai \xc3\x97" "1</text>"));
  g_autofree char *mesh = between(h->str, "<g class=\"links mesh\"", "</g>");
  CU_ASSERT_EQUAL(count_of(mesh, "<line"), 1);
  g_autofree char *pm = between(h->str, "<g class=\"links poolmesh\"", "</g>");
  CU_ASSERT_EQUAL(count_of(pm, "<line"), 1); /* P's two gateways; Q has one */
  /* both toggles, before the svg so that CSS can hide the links */
  const char *t = strstr(h->str, "id=\"map-mesh\""), *svg = strstr(h->str, "<svg id=\"map-svg\"");
  CU_ASSERT_TRUE(t && svg && t < svg);
  /* the unknown region and city are named in the notes */
  gboolean mars = FALSE, gotham = FALSE;
  for (guint i = 0; i < notes->len; i++) {
    mars |= strstr(g_ptr_array_index(notes, i), "'Mars'") != NULL;
    gotham |= strstr(g_ptr_array_index(notes, i), "'Gotham'") != NULL;
  }
  CU_ASSERT_TRUE(mars && gotham);
  /* the same input gives the same bytes */
  g_autoptr(GString) h2 = g_string_new(NULL);
  an_map_figure(h2, &f.net, NULL);
  CU_ASSERT_STRING_EQUAL(h->str, h2->str);
  g_array_unref(f.nodes);
}

/* Above AN_MAP_MAX_DOTS ordinary nodes are grouped per region. */
static void test_aggregate(void) {
  Fixture f;
  fixture(&f, 30000);
  g_autoptr(GString) h = g_string_new(NULL);
  an_map_figure(h, &f.net, NULL);
  g_autofree char *dots = between(h->str, "<g id=\"map-dots\"", "</g>");
  guint n = count_of(dots, "<circle");
  /* 3 to a dot: ceil(n_region / 3) per region, plus the 5 specials */
  CU_ASSERT_EQUAL(n, 5 + (10000 + 2) / 3 + (17142 + 2) / 3 + (2858 + 2) / 3);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "drawn 3 to a dot"));
  g_array_unref(f.nodes);
}

static double json_field(const char *html, const char *key) {
  g_autofree char *k = g_strdup_printf("\"%s\":", key);
  const char *p = strstr(html, k);
  return p ? g_ascii_strtod(p + strlen(k), NULL) : NAN;
}

static void test_journey(void) {
  Fixture f;
  fixture(&f, 20);
  g_autofree double *arrive = g_new(double, f.net.n_nodes);
  for (guint32 v = 0; v < f.net.n_nodes; v++) arrive[v] = v == 7 ? NAN : 10.0 * v;
  const char *vn[] = {"WE", "EA"};
  double vms[] = {0, 35.5};
  AnJourney j = {.caption = "Block <x>", .arrive_ms = arrive, .vantages = vn, .vantage_ms = vms, .n_vantages = 2,
                 .first_obs_ms = 12};
  g_autoptr(GString) map = g_string_new(NULL);
  an_map_figure(map, &f.net, NULL);
  g_autoptr(GString) h = g_string_new(NULL);
  an_map_journey(h, &f.net, &j, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<figcaption>Block &lt;x&gt;</figcaption>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "id=\"journey-slider\" min=\"0\" max=\"120\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "id=\"journey-play\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<svg id=\"journey-map\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "id=\"journey-curve\""));
  /* t_end: the last arrival, 240 ms (node 24), +2% */
  CU_ASSERT_DOUBLE_EQUAL(json_field(h->str, "tEnd"), 244.8, 1e-9);
  g_autofree char *frames = between(h->str, "\"frames\":[", "]");
  CU_ASSERT_EQUAL(count_of(frames, ","), AN_MAP_FRAMES - 1);
  /* one arrival per dot in node order, -1 for never */
  g_autofree char *arr = between(h->str, "\"arrive\":[", "]");
  CU_ASSERT_PTR_NOT_NULL(strstr(arr, "[0,10,20,30,40,50,60,-1,80,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "\"sim\":[{\"name\":\"WE\",\"ms\":0},{\"name\":\"EA\",\"ms\":35.5}]"));
  /* the vantage ticks are labelled with the delay after the first */
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, ">+35.5 ms</text>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<script>"));
  /* nothing loaded from anywhere: no src or href attribute but the <use> of the page's own land outline, and
   * no URI but the SVG namespace */
  CU_ASSERT_PTR_NULL(strstr(h->str, "src=\""));
  CU_ASSERT_EQUAL(count_of(h->str, "href=\""), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, "<use href=\"#map-land\"/>"));
  CU_ASSERT_EQUAL(count_of(h->str, "http"), count_of(h->str, "xmlns=\"http://www.w3.org/2000/svg\""));
  CU_ASSERT_PTR_NULL(strstr(h->str, "https:"));
  /* measured only: no map, no node data */
  g_autoptr(GString) m = g_string_new(NULL);
  AnJourney mj = {.caption = "measured", .vantages = vn, .vantage_ms = vms, .n_vantages = 2, .first_obs_ms = NAN};
  an_map_journey(m, NULL, NULL, &mj);
  CU_ASSERT_PTR_NULL(strstr(m->str, "<svg id=\"journey-map\""));
  CU_ASSERT_PTR_NULL(strstr(m->str, "\"arrive\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(m->str, "\"measured\":[{\"name\":\"WE\""));
  g_array_unref(f.nodes);
}

static void test_pools_only(void) {
  const char *pools[] = {"A", "B&C"};
  double share[] = {0.75, 0.25};
  g_autoptr(GString) h = g_string_new(NULL);
  an_map_pools_figure(h, pools, share, 2);
  CU_ASSERT_EQUAL(count_of(h->str, "<circle"), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(h->str, ">B&amp;C 25.0%</text>"));
  CU_ASSERT_PTR_NULL(strstr(h->str, "map-land")); /* no geography */
}

int register_suites(void) {
  ADD_SUITE("map", TEST(test_places), TEST(test_region_spots), TEST(test_figure), TEST(test_aggregate),
            TEST(test_journey), TEST(test_pools_only));
  return 0;
}
