/* report_journey.c: the report's network map and a block's journey (map.h draws them). */
#include "report-private.h"

/* Nodes, regions and links for the map, from the scenario echo in summary.json or from trace_nodes.csv. */
typedef struct {
  GStringChunk *str;
  GArray *nodes;     /* AnMapNode, strings in str */
  GPtrArray *regions; /* const char *, in str */
  GArray *share;     /* double per region */
  GArray *links;     /* guint32 pairs */
  gboolean from_trace;
} NetData;

static void net_data_free(NetData *d) {
  if (!d) return;
  g_string_chunk_free(d->str);
  g_array_unref(d->nodes);
  g_ptr_array_unref(d->regions);
  g_array_unref(d->share);
  g_array_unref(d->links);
  g_free(d);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(NetData, net_data_free)

static NetData *net_data_new(void) {
  NetData *d = g_new0(NetData, 1);
  d->str = g_string_chunk_new(4096);
  d->nodes = g_array_new(FALSE, TRUE, sizeof(AnMapNode));
  d->regions = g_ptr_array_new();
  d->share = g_array_new(FALSE, TRUE, sizeof(double));
  d->links = g_array_new(FALSE, FALSE, sizeof(guint32));
  return d;
}

static const char *nd_str(NetData *d, const char *s) { return g_string_chunk_insert_const(d->str, s ? s : ""); }

static void nd_add(NetData *d, AnMapRole role, const char *name, const char *pool, const char *region,
                   const char *city) {
  AnMapNode n = {.role = role, .name = nd_str(d, name), .pool = nd_str(d, pool), .region = nd_str(d, region),
                 .city = nd_str(d, city)};
  g_array_append_val(d->nodes, n);
}

/* Gateways of different pools are linked: all of them with gateway_mesh, else those in one city (net.h). */
static void nd_links(NetData *d, gboolean mesh) {
  for (guint a = 0; a < d->nodes->len; a++) {
    const AnMapNode *x = &g_array_index(d->nodes, AnMapNode, a);
    if (x->role != AN_MAP_GATEWAY) continue;
    for (guint b = a + 1; b < d->nodes->len; b++) {
      const AnMapNode *y = &g_array_index(d->nodes, AnMapNode, b);
      if (y->role != AN_MAP_GATEWAY || strcmp(x->pool, y->pool) == 0) continue;
      if (mesh || (*x->city && strcmp(x->city, y->city) == 0)) {
        guint32 ab[2] = {a, b};
        g_array_append_vals(d->links, ab, 2);
      }
    }
  }
}

static const char *city_region(json_t *net, const char *city) {
  json_t *names = rp_jget(net, "cities", "names", NULL), *reg = rp_jget(net, "cities", "region", NULL);
  for (size_t i = 0; i < json_array_size(names); i++)
    if (g_strcmp0(json_string_value(json_array_get(names, i)), city) == 0)
      return json_string_value(json_array_get(reg, i));
  return NULL;
}

/* The geo network as the scenario describes it: the specials in net_topology.c's order (vantage points, then each
 * gateway entry's places), then the ordinary nodes per region by largest-remainder rounding of nodes x
 * node_share (ties to the lower region), as net_topology_build() counts them. */
static NetData *net_from_scenario(json_t *net) {
  NetData *d = net_data_new();
  json_t *names = rp_jget(net, "regions", "names", NULL), *share = rp_jget(net, "regions", "node_share", NULL);
  size_t nr = json_array_size(names);
  double sum = 0;
  for (size_t r = 0; r < nr; r++) sum += json_number_value(json_array_get(share, r));
  for (size_t r = 0; r < nr; r++) {
    g_ptr_array_add(d->regions, (gpointer)nd_str(d, json_string_value(json_array_get(names, r))));
    double x = sum > 0 ? json_number_value(json_array_get(share, r)) / sum : 0;
    g_array_append_val(d->share, x);
  }
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(net, "vantage_points"), i, v) {
    const char *city = json_string_value(json_object_get(v, "city"));
    const char *region = json_string_value(json_object_get(v, "region"));
    nd_add(d, AN_MAP_VANTAGE, json_string_value(json_object_get(v, "name")), NULL,
           city ? city_region(net, city) : region, city);
  }
  g_autoptr(GHashTable) k_of = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  json_array_foreach(json_object_get(net, "gateways"), i, v) {
    const char *pool = json_string_value(json_object_get(v, "pool"));
    if (!pool) continue;
    json_t *cities = json_object_get(v, "cities"), *regions = json_object_get(v, "regions");
    json_t *places = cities ? cities : regions;
    size_t j;
    json_t *pl;
    json_array_foreach(places, j, pl) {
      guint k = GPOINTER_TO_UINT(g_hash_table_lookup(k_of, pool)) + 1;
      g_hash_table_insert(k_of, g_strdup(pool), GUINT_TO_POINTER(k));
      g_autofree char *name = g_strdup_printf("%s#%u", pool, k);
      const char *place = json_string_value(pl);
      nd_add(d, AN_MAP_GATEWAY, name, pool, cities ? city_region(net, place) : place, cities ? place : NULL);
    }
  }
  double nodes = json_number_value(json_object_get(net, "nodes"));
  guint64 n = nodes > 0 && nodes < 1e9 ? (guint64)nodes : 0, given = 0;
  g_autofree guint64 *count = g_new0(guint64, MAX(nr, 1));
  g_autofree double *rem = g_new0(double, MAX(nr, 1));
  for (size_t r = 0; r < nr; r++) {
    double x = (double)n * g_array_index(d->share, double, r);
    count[r] = (guint64)floor(x);
    rem[r] = x - floor(x);
    given += count[r];
  }
  while (given < n && nr > 0) {
    size_t best = 0;
    for (size_t r = 1; r < nr; r++)
      if (rem[r] > rem[best]) best = r;
    count[best]++;
    rem[best] = -1;
    given++;
  }
  for (size_t r = 0; r < nr; r++)
    for (guint64 k = 0; k < count[r]; k++) nd_add(d, AN_MAP_NODE, NULL, NULL, g_ptr_array_index(d->regions, r), NULL);
  json_t *mesh = json_object_get(net, "gateway_mesh");
  nd_links(d, !mesh || json_is_true(mesh));
  return d;
}

/* The run's own node table (sim run --trace-blocks). */
static NetData *net_from_trace(const char *path, json_t *net, GError **error) {
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return NULL;
  int cn = rp_csv_col(c, "node", TRUE, error), cr = cn < 0 ? -1 : rp_csv_col(c, "role", TRUE, error),
      cm = cr < 0 ? -1 : rp_csv_col(c, "name", TRUE, error), cp = cm < 0 ? -1 : rp_csv_col(c, "pool", TRUE, error),
      cg = cp < 0 ? -1 : rp_csv_col(c, "region", TRUE, error), cc = cg < 0 ? -1 : rp_csv_col(c, "city", TRUE, error);
  if (cc < 0) return NULL;
  g_autoptr(NetData) d = net_data_new();
  json_t *names = rp_jget(net, "regions", "names", NULL), *share = rp_jget(net, "regions", "node_share", NULL);
  for (size_t r = 0; r < json_array_size(names); r++) {
    g_ptr_array_add(d->regions, (gpointer)nd_str(d, json_string_value(json_array_get(names, r))));
    double x = json_number_value(json_array_get(share, r));
    g_array_append_val(d->share, x);
  }
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    double id;
    if (!rp_csv_num(c, cn, FALSE, &id, error)) return NULL;
    if (id != (double)d->nodes->len)
      return rp_input_error(error, path, "line %u: node %s out of order (expected %u)", c->line, rp_csv_field(c, cn),
                         d->nodes->len),
             NULL;
    const char *role = rp_csv_field(c, cr);
    AnMapRole ro = strcmp(role, "vantage") == 0 ? AN_MAP_VANTAGE : strcmp(role, "gateway") == 0 ? AN_MAP_GATEWAY
                   : strcmp(role, "node") == 0                                      ? AN_MAP_NODE
                                                                                    : (AnMapRole)-1;
    if ((int)ro < 0) return rp_input_error(error, path, "line %u: unknown role '%s'", c->line, role), NULL;
    nd_add(d, ro, rp_csv_field(c, cm), rp_csv_field(c, cp), rp_csv_field(c, cg), rp_csv_field(c, cc));
  }
  if (r < 0) return NULL;
  d->from_trace = TRUE;
  json_t *mesh = json_object_get(net, "gateway_mesh");
  nd_links(d, !mesh || json_is_true(mesh));
  return g_steal_pointer(&d);
}

static void net_map(const NetData *d, AnMapNet *m) {
  *m = (AnMapNet){.regions = (const char *const *)d->regions->pdata,
                  .region_share = (const double *)(gpointer)d->share->data,
                  .n_regions = d->regions->len,
                  .nodes = (const AnMapNode *)(gpointer)d->nodes->data,
                  .n_nodes = d->nodes->len,
                  .links = (const guint32 *)(gpointer)d->links->data,
                  .n_links = d->links->len / 2,
                  .from_trace = d->from_trace};
}

/* One block as observations.csv has it: vantage points' first observations (s since the start). */
typedef struct {
  char *hash;
  guint32 height;
  char *type;
  double *ts; /* per vantage, NAN: not seen */
  double delay_ms; /* mean over the vantage points of the delay after the first; NAN unless all saw it */
} ObsRow;

typedef struct {
  GPtrArray *vantages; /* char * */
  GPtrArray *rows;     /* ObsRow * */
} Obs;

static void obs_row_free(gpointer x) {
  ObsRow *r = x;
  g_free(r->hash);
  g_free(r->type);
  g_free(r->ts);
  g_free(r);
}

static void obs_free(Obs *o) {
  if (!o) return;
  g_ptr_array_unref(o->vantages);
  g_ptr_array_unref(o->rows);
  g_free(o);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Obs, obs_free)

/* observations.csv of `dir`, or NULL without one (an error only for a malformed file). */
static Obs *obs_load(const char *dir, gboolean *bad, GError **error) {
  g_autofree char *path = g_build_filename(dir, "observations.csv", NULL);
  *bad = FALSE;
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) return NULL;
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return *bad = TRUE, NULL;
  int ch = rp_csv_col(c, "BlockHash", TRUE, error), cn = ch < 0 ? -1 : rp_csv_col(c, "Number", TRUE, error),
      ct = cn < 0 ? -1 : rp_csv_col(c, "BlockType", TRUE, error);
  if (ct < 0) return *bad = TRUE, NULL;
  g_autoptr(Obs) o = g_new0(Obs, 1);
  o->vantages = g_ptr_array_new_with_free_func(g_free);
  o->rows = g_ptr_array_new_with_free_func(obs_row_free);
  g_autoptr(GArray) cols = g_array_new(FALSE, FALSE, sizeof(int));
  for (guint i = 0; i < c->ncols; i++)
    if (g_str_has_suffix(c->header[i], "TimeStamp") && strlen(c->header[i]) > strlen("TimeStamp")) {
      g_ptr_array_add(o->vantages, g_strndup(c->header[i], strlen(c->header[i]) - strlen("TimeStamp")));
      int col = (int)i;
      g_array_append_val(cols, col);
    }
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    ObsRow *row = g_new0(ObsRow, 1);
    g_ptr_array_add(o->rows, row);
    row->hash = g_strdup(rp_csv_field(c, ch));
    row->type = g_strdup(rp_csv_field(c, ct));
    double h;
    if (!rp_csv_num(c, cn, FALSE, &h, error)) return *bad = TRUE, NULL;
    row->height = h >= 0 && h < 4e9 ? (guint32)h : 0;
    row->ts = g_new(double, MAX(cols->len, 1));
    double first = INFINITY, sum = 0;
    gboolean all = cols->len > 0;
    for (guint v = 0; v < cols->len; v++) {
      if (!rp_csv_num(c, g_array_index(cols, int, v), TRUE, &row->ts[v], error)) return *bad = TRUE, NULL;
      if (isnan(row->ts[v])) all = FALSE;
      else first = MIN(first, row->ts[v]);
    }
    for (guint v = 0; v < cols->len && all; v++) sum += (row->ts[v] - first) * 1e3;
    row->delay_ms = all ? sum / cols->len : NAN;
  }
  if (r < 0) return *bad = TRUE, NULL;
  return g_steal_pointer(&o);
}

static const ObsRow *obs_find(const Obs *o, const char *hash) {
  for (guint i = 0; o && i < o->rows->len; i++) {
    const ObsRow *r = g_ptr_array_index(o->rows, i);
    if (g_ascii_strcasecmp(r->hash, hash) == 0) return r;
  }
  return NULL;
}

static int cmp_obs_delay(const void *a, const void *b) {
  const ObsRow *x = *(const ObsRow *const *)a, *y = *(const ObsRow *const *)b;
  if (x->delay_ms != y->delay_ms) return x->delay_ms < y->delay_ms ? -1 : 1;
  return (x->height > y->height) - (x->height < y->height);
}

/* The median-delay block: of the blocks every vantage point saw, the one whose mean delay after the first
 * observation is the median (the lower middle one of an even count; ties by height). With `height` > 0 the
 * main block at that height (else its first block) instead. NULL: none. */
static const ObsRow *obs_choose(const Obs *o, guint32 height) {
  if (!o) return NULL;
  if (height > 0) {
    const ObsRow *any = NULL;
    for (guint i = 0; i < o->rows->len; i++) {
      const ObsRow *r = g_ptr_array_index(o->rows, i);
      if (r->height != height) continue;
      if (g_ascii_strcasecmp(r->type, "Main") == 0) return r;
      if (!any) any = r;
    }
    return any;
  }
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  for (guint i = 0; i < o->rows->len; i++) {
    ObsRow *r = g_ptr_array_index(o->rows, i);
    if (!isnan(r->delay_ms)) g_ptr_array_add(all, r);
  }
  if (all->len == 0) return NULL;
  qsort(all->pdata, all->len, sizeof(gpointer), cmp_obs_delay);
  return g_ptr_array_index(all, (all->len - 1) / 2);
}

/* A vantage journey of an observations row: delays after the first observation, in ms. */
static void obs_journey(const Obs *o, const ObsRow *r, AnJourney *j, double *ms) {
  double first = INFINITY;
  for (guint v = 0; v < o->vantages->len; v++)
    if (!isnan(r->ts[v])) first = MIN(first, r->ts[v]);
  for (guint v = 0; v < o->vantages->len; v++) ms[v] = isnan(r->ts[v]) ? NAN : (r->ts[v] - first) * 1e3;
  j->vantages = (const char *const *)o->vantages->pdata;
  j->vantage_ms = ms;
  j->n_vantages = o->vantages->len;
  j->first_obs_ms = NAN;
}

/* A traced block of trace_blocks.csv. */
typedef struct {
  char *block;
  guint32 height;
  double *arrive_ms; /* per node, NAN: never */
  double median_ms;  /* median arrival over the nodes (unreached as latest) */
} Traced;

static void traced_free(gpointer x) {
  Traced *t = x;
  g_free(t->block);
  g_free(t->arrive_ms);
  g_free(t);
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static GPtrArray *traced_load(const char *path, guint32 n_nodes, GError **error) {
  g_autoptr(Csv) c = rp_csv_open(path, error);
  if (!c) return NULL;
  int cb = rp_csv_col(c, "block", TRUE, error), ch = cb < 0 ? -1 : rp_csv_col(c, "height", TRUE, error),
      cn = ch < 0 ? -1 : rp_csv_col(c, "node", TRUE, error), ca = cn < 0 ? -1 : rp_csv_col(c, "arrive_s", TRUE, error);
  if (ca < 0) return NULL;
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func(traced_free);
  Traced *cur = NULL;
  int r;
  while ((r = rp_csv_row(c, error)) > 0) {
    const char *b = rp_csv_field(c, cb);
    double h, node, a;
    if (!rp_csv_num(c, ch, FALSE, &h, error) || !rp_csv_num(c, cn, FALSE, &node, error) ||
        !rp_csv_num(c, ca, FALSE, &a, error))
      return NULL;
    if (node < 0 || node >= n_nodes || node != floor(node))
      return rp_input_error(error, path, "line %u: node %s not in trace_nodes.csv (%u nodes)", c->line,
                         rp_csv_field(c, cn), n_nodes),
             NULL;
    if (!cur || strcmp(cur->block, b) != 0) {
      cur = NULL;
      for (guint i = 0; i < out->len && !cur; i++)
        if (strcmp(((Traced *)g_ptr_array_index(out, i))->block, b) == 0) cur = g_ptr_array_index(out, i);
      if (!cur) {
        cur = g_new0(Traced, 1);
        cur->block = g_strdup(b);
        cur->height = h >= 0 && h < 4e9 ? (guint32)h : 0;
        cur->arrive_ms = g_new(double, MAX(n_nodes, 1));
        for (guint32 v = 0; v < n_nodes; v++) cur->arrive_ms[v] = NAN;
        g_ptr_array_add(out, cur);
      }
    }
    cur->arrive_ms[(guint32)node] = a * 1e3;
  }
  if (r < 0) return NULL;
  g_autofree double *tmp = g_new(double, MAX(n_nodes, 1));
  for (guint i = 0; i < out->len; i++) {
    Traced *t = g_ptr_array_index(out, i);
    for (guint32 v = 0; v < n_nodes; v++) tmp[v] = isnan(t->arrive_ms[v]) ? INFINITY : t->arrive_ms[v];
    qsort(tmp, n_nodes, sizeof *tmp, cmp_dbl);
    t->median_ms = n_nodes ? tmp[(n_nodes - 1) / 2] : NAN;
  }
  return g_steal_pointer(&out);
}

/* blocks.csv: a block's type and pool (for the caption), and its mining time in s. FALSE if not found. */
static gboolean block_info(const char *dir, const char *id, char **type, char **pool, double *mined_s) {
  g_autofree char *path = g_build_filename(dir, "blocks.csv", NULL);
  g_autoptr(GError) e = NULL;
  g_autoptr(Csv) c = rp_csv_open(path, &e);
  if (!c) return FALSE;
  int ci = rp_csv_col(c, "id", FALSE, NULL), ct = rp_csv_col(c, "type", FALSE, NULL), cp = rp_csv_col(c, "pool", FALSE, NULL),
      cm = rp_csv_col(c, "mined_s", FALSE, NULL);
  if (ci < 0 || ct < 0 || cp < 0 || cm < 0) return FALSE;
  while (rp_csv_row(c, &e) > 0)
    if (g_ascii_strcasecmp(rp_csv_field(c, ci), id) == 0) {
      *type = g_strdup(rp_csv_field(c, ct));
      *pool = g_strdup(rp_csv_field(c, cp));
      return rp_parse_num(rp_csv_field(c, cm), mined_s);
    }
  return FALSE;
}

/* The measured block shown beside (AnReportOptions.measured_dir): its median-delay block. */
static gboolean measured_journey(Page *p, const char *mdir, Obs **mo_out, const ObsRow **row_out, GError **error) {
  gboolean bad = FALSE;
  if (!g_file_test(mdir, G_FILE_TEST_IS_DIR)) return rp_input_error(error, mdir, "not a directory");
  Obs *mo = obs_load(mdir, &bad, error);
  if (bad) return FALSE;
  if (!mo) {
    g_autofree char *path = g_build_filename(mdir, "observations.csv", NULL);
    return rp_input_error(error, path, "%s", g_strerror(ENOENT));
  }
  const ObsRow *r = obs_choose(mo, 0);
  if (!r) {
    rp_page_warn(p, "%s: no block seen by every vantage point: nothing to show beside", mdir);
    obs_free(mo);
    return TRUE;
  }
  *mo_out = mo;
  *row_out = r;
  return TRUE;
}

static void height_list(GString *s, const GPtrArray *traced) {
  for (guint i = 0; i < traced->len; i++) {
    guint32 h = ((const Traced *)g_ptr_array_index(traced, i))->height;
    gboolean dup = FALSE;
    for (guint j = 0; j < i && !dup; j++) dup = ((const Traced *)g_ptr_array_index(traced, j))->height == h;
    if (!dup) g_string_append_printf(s, "%s%u", s->len ? ", " : "", h);
  }
}

/* The traced block to show: the one at height `want` (a main block first), or without it the median-delay
 * block of those traced, by the vantage points' mean delay where every vantage point saw them all, else by
 * the median node arrival. NULL in *pick when none was traced; FALSE (and `error`) when `want` was not. */
static gboolean traced_pick(GPtrArray *tr, const Obs *obs, guint32 want, const char *bpath, const Traced **out,
                            GError **error) {
  const Traced *pick = NULL;
  if (want) {
    for (guint i = 0; i < tr->len; i++) {
      const Traced *t = g_ptr_array_index(tr, i);
      if (t->height != want) continue;
      const ObsRow *orow = obs_find(obs, t->block);
      if (!pick || (orow && g_ascii_strcasecmp(orow->type, "Main") == 0)) pick = t;
    }
    if (!pick) {
      g_autoptr(GString) hs = g_string_new(NULL);
      height_list(hs, tr);
      return rp_input_error(error, bpath, "--block %u: not traced (traced heights: %s)", want,
                            hs->len ? hs->str : "none");
    }
  } else if (tr->len > 0) {
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    gboolean by_obs = obs != NULL;
    for (guint i = 0; i < tr->len; i++) {
      Traced *t = g_ptr_array_index(tr, i);
      const ObsRow *orow = obs_find(obs, t->block);
      if (!orow || isnan(orow->delay_ms)) by_obs = FALSE;
      g_ptr_array_add(order, t);
    }
    for (guint i = 1; i < order->len; i++)
      for (guint j = i; j > 0; j--) {
        Traced *a = g_ptr_array_index(order, j - 1), *b = g_ptr_array_index(order, j);
        double ka = by_obs ? obs_find(obs, a->block)->delay_ms : a->median_ms;
        double kb = by_obs ? obs_find(obs, b->block)->delay_ms : b->median_ms;
        if (ka < kb || (ka == kb && a->height <= b->height)) break;
        order->pdata[j - 1] = b;
        order->pdata[j] = a;
      }
    pick = g_ptr_array_index(order, (order->len - 1) / 2);
  }
  *out = pick;
  return TRUE;
}

static gboolean section_network(Page *p, json_t *summary, const AnReportOptions *opt, GError **error) {
  json_t *net = rp_jget(summary, "header", "scenario", "network", NULL);
  const char *model = json_string_value(json_object_get(net, "model"));
  guint32 want = opt ? opt->block_height : 0;
  const char *mdir = opt ? opt->measured_dir : NULL;
  gboolean bad = FALSE;
  g_autoptr(Obs) obs = obs_load(p->dir, &bad, error);
  if (bad) return FALSE;
  g_autoptr(Obs) mobs = NULL;
  const ObsRow *mrow = NULL;
  if (mdir && !measured_journey(p, mdir, &mobs, &mrow, error)) return FALSE;
  g_autofree double *mms = mobs ? g_new(double, MAX(mobs->vantages->len, 1)) : NULL;
  AnJourney mj = {0};
  g_autofree char *mcap = NULL;
  if (mrow) {
    obs_journey(mobs, mrow, &mj, mms);
    g_autofree char *base = g_path_get_basename(mdir);
    mcap = g_strdup_printf("measured: block %s at number %u (%s) in %s, its vantage points' median-delay block",
                           mrow->hash, mrow->height, mrow->type, base);
    mj.caption = mcap;
  }

  if (!net || !model) {
    /* A replay: no network, the vantage points' view only. */
    if (!obs) return TRUE;
    g_string_append(p->html, "<h2 id=\"journey\">A block's journey, as the vantage points saw it</h2>\n");
    const ObsRow *r = obs_choose(obs, want);
    if (!r) {
      if (want) return rp_input_error(error, p->dir, "--block %u: no block at that height in observations.csv", want);
      g_string_append(p->html, "<p class=\"omitted\">No block was seen by every vantage point.</p>\n");
      return TRUE;
    }
    g_autofree double *ms = g_new(double, MAX(obs->vantages->len, 1));
    AnJourney j = {0};
    obs_journey(obs, r, &j, ms);
    g_autofree char *cap = g_strdup_printf("Block %s at number %u (%s)%s: first observations by the vantage points",
                                           r->hash, r->height, r->type, want ? "" : ", the median-delay block");
    j.caption = cap;
    g_string_append(p->html, "<p class=\"note\">Measured logs have no node positions: the page shows when each "
                             "vantage point first observed the block, after the first of them.</p>\n");
    an_map_journey(p->html, NULL, &j, mrow ? &mj : NULL);
    return TRUE;
  }

  g_string_append(p->html, "<h2 id=\"network\">The network</h2>\n");
  if (strcmp(model, "geo") != 0) {
    json_t *pools = rp_jget(summary, "header", "scenario", "pools", NULL);
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    g_autoptr(GArray) share = g_array_new(FALSE, FALSE, sizeof(double));
    double sum = 0;
    size_t i;
    json_t *v;
    json_array_foreach(pools, i, v) sum += json_number_value(json_object_get(v, "hash_share"));
    json_array_foreach(pools, i, v) {
      const char *n = json_string_value(json_object_get(v, "name"));
      g_ptr_array_add(names, (gpointer)(n ? n : "?"));
      double x = sum > 0 ? json_number_value(json_object_get(v, "hash_share")) / sum : 0;
      g_array_append_val(share, x);
    }
    an_map_pools_figure(p->html, (const char *const *)names->pdata, (const double *)(gpointer)share->data,
                        names->len);
    if (want) return rp_input_error(error, p->dir, "--block %u: the \"%s\" network has no per-node journey", want, model);
    return TRUE;
  }

  g_autofree char *npath = g_build_filename(p->dir, "trace_nodes.csv", NULL);
  g_autofree char *bpath = g_build_filename(p->dir, "trace_blocks.csv", NULL);
  gboolean traced = g_file_test(npath, G_FILE_TEST_EXISTS) && g_file_test(bpath, G_FILE_TEST_EXISTS);
  g_autoptr(NetData) nd = traced ? net_from_trace(npath, net, error) : net_from_scenario(net);
  if (!nd) return FALSE;
  AnMapNet m;
  net_map(nd, &m);
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  an_map_figure(p->html, &m, notes);
  for (guint i = 0; i < notes->len; i++) {
    g_string_append(p->html, "<p class=\"note\">");
    rp_put_esc(p->html, g_ptr_array_index(notes, i));
    g_string_append(p->html, "</p>\n");
  }

  g_string_append(p->html, "<h2 id=\"journey\">A block's journey</h2>\n");
  if (!traced) {
    if (want) return rp_input_error(error, p->dir, "--block %u: this run has no trace_blocks.csv (run it with --trace-blocks)", want);
    const ObsRow *r = obs_choose(obs, 0);
    g_string_append(p->html, "<p class=\"notice\" id=\"journey-howto\">No journey: this run was made without "
                             "<code>--trace-blocks</code>. To watch a block cross the network, run it again with "
                             "the same scenario and seed and <code>--trace-blocks HEIGHT</code>");
    if (r)
      g_string_append_printf(p->html, " (the median-delay block of this run is at height %u, so "
                                      "<code>--trace-blocks %u</code>)", r->height, r->height);
    g_string_append(p->html, ", then make the report again. The other outputs stay the same.</p>\n");
    if (mrow) an_map_journey(p->html, NULL, &mj, NULL);
    return TRUE;
  }
  g_autoptr(GPtrArray) tr = traced_load(bpath, m.n_nodes, error);
  if (!tr) return FALSE;
  const Traced *pick = NULL;
  if (!traced_pick(tr, obs, want, bpath, &pick, error)) return FALSE;
  if (!pick) {
    g_string_append(p->html, "<p class=\"omitted\">trace_blocks.csv holds no block.</p>\n");
    return TRUE;
  }
  g_autofree char *type = NULL, *pool = NULL;
  double mined_s = NAN;
  gboolean have_info = block_info(p->dir, pick->block, &type, &pool, &mined_s);
  const ObsRow *orow = obs_find(obs, pick->block);
  AnJourney j = {.arrive_ms = pick->arrive_ms, .first_obs_ms = NAN};
  g_autofree double *ms = NULL;
  if (orow) {
    ms = g_new(double, MAX(obs->vantages->len, 1));
    obs_journey(obs, orow, &j, ms);
    double first = INFINITY;
    for (guint v = 0; v < obs->vantages->len; v++)
      if (!isnan(orow->ts[v])) first = MIN(first, orow->ts[v]);
    if (have_info && isfinite(first)) j.first_obs_ms = (first - mined_s) * 1e3;
  }
  guint32 reached = 0;
  for (guint32 v = 0; v < m.n_nodes; v++) reached += !isnan(pick->arrive_ms[v]);
  g_autoptr(GString) hs = g_string_new(NULL);
  height_list(hs, tr);
  g_autofree char *cap = g_strdup_printf(
      "Block %s at height %u%s%s%s%s%s: %u of %u nodes reached%s", pick->block, pick->height,
      have_info ? " (" : "", have_info ? type : "", have_info && pool && *pool ? ", mined by " : "",
      have_info && pool ? pool : "", have_info ? ")" : "", reached, m.n_nodes,
      want ? "" : "; the median-delay block of those traced");
  j.caption = cap;
  g_string_append(p->html, "<p class=\"note\">Traced heights (trace_blocks.csv): ");
  rp_put_esc(p->html, hs->str);
  g_string_append(p->html, ". <code>sim report --block HEIGHT</code> shows another.</p>\n");
  an_map_journey(p->html, &m, &j, mrow ? &mj : NULL);
  return TRUE;
}

gboolean rp_render_run(Page *p, const AnReportOptions *opt, GError **error) {
  g_autofree char *spath = g_build_filename(p->dir, "summary.json", NULL);
  g_autoptr(json_t) summary = rp_load_summary(spath, error);
  if (!summary) return FALSE;
  const char *name = json_string_value(rp_jget(summary, "header", "scenario", "name", NULL));
  g_autofree char *base = g_path_get_basename(p->dir);
  g_autofree char *title = g_strdup_printf("sim report: %s", name ? name : base);
  rp_page_head(p->html, title, opt);
  rp_run_meta(p, summary);
  if (!p->gnuplot) g_string_append(p->html, "<p class=\"notice\">gnuplot not found: figures omitted.</p>\n");
  rp_key_metrics(p, summary);
  g_string_append(p->html, "<h2 id=\"figures\">Figures</h2>\n");
  if (!rp_fig_propagation(p, summary, error)) return FALSE;
  rp_fig_first_seen(p, summary);
  if (!rp_fig_runs(p, error)) return FALSE;
  if (!rp_fig_commit(p, error)) return FALSE;
  if (!rp_fig_pools(p, error)) return FALSE;
  if (!section_network(p, summary, opt, error)) return FALSE;
  rp_page_tail(p, opt);
  return TRUE;
}
