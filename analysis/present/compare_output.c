/* compare_output.c: the comparison written out: the text table and the JSON document. */
#include "compare-private.h"

/* A table of strings printed with aligned columns: the first left-aligned, the others right-aligned. */
typedef struct {
  guint n_cols;
  GPtrArray *cells; /* char *, row-major */
} Table;

static void table_init(Table *t, guint n_cols) {
  t->n_cols = n_cols;
  t->cells = g_ptr_array_new_with_free_func(g_free);
}

static void table_add(Table *t, char *cell /* taken */) {
  g_ptr_array_add(t->cells, cell);
}

static char *num(double v) {
  return isnan(v) ? g_strdup("-") : g_strdup_printf("%.6g", v);
}

static char *pct(double rel) {
  return isnan(rel) ? g_strdup("-") : g_strdup_printf("%+.2f%%", 100 * rel);
}

static char *interval(const AnEstimate *e) {
  return isnan(e->lo) ? g_strdup("-") : g_strdup_printf("[%.6g, %.6g]", e->lo, e->hi);
}

static void table_print(Table *t, FILE *out) {
  g_autofree size_t *w = g_new0(size_t, t->n_cols);
  for (guint i = 0; i < t->cells->len; i++)
    w[i % t->n_cols] = MAX(w[i % t->n_cols], strlen(t->cells->pdata[i]));
  for (guint i = 0; i < t->cells->len; i++) {
    guint col = i % t->n_cols;
    const char *s = t->cells->pdata[i];
    if (col == 0)
      fprintf(out, "%-*s", (int)w[col], s);
    else
      fprintf(out, "  %*s", (int)w[col], s);
    if (col == t->n_cols - 1) fputc('\n', out);
  }
  g_ptr_array_unref(t->cells);
  t->cells = NULL;
}

static void print_side(FILE *out, const char *name, const char *label, const GPtrArray *runs) {
  fprintf(out, "%s: %s (%u run%s)\n", name, label, runs->len, runs->len == 1 ? "" : "s");
}

void an_compare_print_table(const AnCompare *c, FILE *out) {
  g_return_if_fail(c != NULL && out != NULL);
  print_side(out, "A", c->label_a, c->runs_a);
  print_side(out, "B", c->label_b, c->runs_b);
  gboolean reps = c->runs_a->len >= 2 || c->runs_b->len >= 2;
  g_autofree char *ci_a = g_strdup_printf("A %g%% CI", 100 * c->level);
  g_autofree char *ci_b = g_strdup_printf("B %g%% CI", 100 * c->level);

  Table t;
  if (c->metrics->len) {
    fprintf(out, "\nshared metrics (%u):\n", c->metrics->len);
    table_init(&t, reps ? 10 : 5);
    const char *head[] = {"metric", "A", "B", "B-A", "rel", "n_A", "n_B", ci_a, ci_b, "p_Welch"};
    for (guint i = 0; i < t.n_cols; i++)
      table_add(&t, g_strdup(head[i]));
    for (guint i = 0; i < c->metrics->len; i++) {
      const AnCompareMetric *m = &g_array_index(c->metrics, AnCompareMetric, i);
      table_add(&t, g_strdup(m->key));
      table_add(&t, num(m->a));
      table_add(&t, num(m->b));
      table_add(&t, num(m->diff));
      table_add(&t, pct(m->rel));
      if (!reps) continue;
      table_add(&t, g_strdup_printf("%u", m->n_a));
      table_add(&t, g_strdup_printf("%u", m->n_b));
      table_add(&t, interval(&m->ci_a));
      table_add(&t, interval(&m->ci_b));
      table_add(&t, num(m->welch_p));
    }
    table_print(&t, out);
  }
  for (int side = 0; side < 2; side++) {
    const GArray *only = c->only[side];
    if (only->len == 0) continue;
    fprintf(out, "\nonly in %c (%u):\n", side ? 'B' : 'A', only->len);
    table_init(&t, 3);
    table_add(&t, g_strdup("metric"));
    table_add(&t, g_strdup(side ? "B" : "A"));
    table_add(&t, g_strdup("n"));
    for (guint i = 0; i < only->len; i++) {
      const AnCompareOnly *o = &g_array_index(only, AnCompareOnly, i);
      table_add(&t, g_strdup(o->key));
      table_add(&t, num(o->value));
      table_add(&t, g_strdup_printf("%u", o->n));
    }
    table_print(&t, out);
  }
  if (c->dists->len) {
    fprintf(out, "\ndistributions (ms: block delays after the first observation, sampled commit times), two-sample "
                 "Kolmogorov-Smirnov (%u):\n",
            c->dists->len);
    table_init(&t, 7);
    const char *head[] = {"distribution", "n_A", "n_B", "median_A", "median_B", "D", "p"};
    for (guint i = 0; i < t.n_cols; i++)
      table_add(&t, g_strdup(head[i]));
    for (guint i = 0; i < c->dists->len; i++) {
      const AnCompareDist *d = &g_array_index(c->dists, AnCompareDist, i);
      table_add(&t, g_strdup(d->key));
      table_add(&t, g_strdup_printf("%zu", d->n_a));
      table_add(&t, g_strdup_printf("%zu", d->n_b));
      table_add(&t, num(d->median_a_ms));
      table_add(&t, num(d->median_b_ms));
      table_add(&t, num(d->ks.d));
      table_add(&t, num(d->ks.p));
    }
    table_print(&t, out);
  }
}

/* Sets `key` to the number v unless it is NaN. */
static void set_num(json_t *o, const char *key, double v) {
  if (!isnan(v)) json_object_set_new(o, key, json_real(v));
}

static json_t *side_json(const char *label, const GPtrArray *runs) {
  json_t *o = json_object();
  json_object_set_new(o, "label", json_string(label));
  json_t *r = json_array();
  for (guint i = 0; i < runs->len; i++)
    json_array_append_new(r, json_string(g_ptr_array_index(runs, i)));
  json_object_set_new(o, "runs", r);
  return o;
}

json_t *cmpo_pair(const AnEstimate *e) {
  return json_pack("[ff]", e->lo, e->hi);
}

void an_compare_add_json(const AnCompare *c, json_t *root) {
  g_return_if_fail(c != NULL && json_is_object(root));
  json_object_set_new(root, "level", json_real(c->level));
  json_object_set_new(root, "a", side_json(c->label_a, c->runs_a));
  json_object_set_new(root, "b", side_json(c->label_b, c->runs_b));

  json_t *metrics = json_object();
  for (guint i = 0; i < c->metrics->len; i++) {
    const AnCompareMetric *m = &g_array_index(c->metrics, AnCompareMetric, i);
    json_t *o = json_object();
    set_num(o, "a", m->a);
    set_num(o, "b", m->b);
    set_num(o, "diff", m->diff);
    set_num(o, "rel", m->rel);
    json_object_set_new(o, "n_a", json_integer(m->n_a));
    json_object_set_new(o, "n_b", json_integer(m->n_b));
    if (!isnan(m->ci_a.lo)) json_object_set_new(o, "ci_a", cmpo_pair(&m->ci_a));
    if (!isnan(m->ci_b.lo)) json_object_set_new(o, "ci_b", cmpo_pair(&m->ci_b));
    if (!isnan(m->welch_p))
      json_object_set_new(o, "welch",
                          json_pack("{sfsfsf}", "t", m->welch_t, "df", m->welch_df, "p", m->welch_p));
    json_object_set_new(metrics, m->key, o);
  }
  an_json_set_nonempty(root, "metrics", metrics);

  for (int side = 0; side < 2; side++) {
    json_t *only = json_object();
    for (guint i = 0; i < c->only[side]->len; i++) {
      const AnCompareOnly *o = &g_array_index(c->only[side], AnCompareOnly, i);
      json_object_set_new(only, o->key, json_pack("{sfsi}", "value", o->value, "n", (int)o->n));
    }
    an_json_set_nonempty(root, side ? "only_b" : "only_a", only);
  }

  json_t *dists = json_object();
  for (guint i = 0; i < c->dists->len; i++) {
    const AnCompareDist *d = &g_array_index(c->dists, AnCompareDist, i);
    json_t *o = json_object();
    if (d->vantage) json_object_set_new(o, "vantage", json_string(d->vantage));
    json_object_set_new(o, "n_a", json_integer((json_int_t)d->n_a));
    json_object_set_new(o, "n_b", json_integer((json_int_t)d->n_b));
    set_num(o, "median_a_ms", d->median_a_ms);
    set_num(o, "median_b_ms", d->median_b_ms);
    set_num(o, "ks_d", d->ks.d);
    set_num(o, "ks_p", d->ks.p);
    json_object_set_new(dists, d->key, o);
  }
  an_json_set_nonempty(root, "distributions", dists);
}
