/* replay_out.c: `sim replay`'s results: a loaded replay through the analysis of runs (propagation,
 * transactions, the chain) into summary.json and the same CSVs as `sim run`. */
#include "replay-private.h"

#include <stdio.h>

#include "output.h"
#include "params.h"
#include "util.h"

static const char *const an_key[AN_N] = {"duplicates", "reordered", "clock_steps", "gaps"};

typedef gboolean (*WriteFn)(gconstpointer obj, FILE *out);

static gboolean write_file(SimOutDir *out, const char *name, WriteFn fn, gconstpointer obj, GError **error) {
  GError *e = NULL;
  FILE *f = sim_outdir_create(out, name, &e);
  if (!f || !fn(obj, f)) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, "cannot write %s/%s%s%s", sim_outdir_path(out),
                name, e ? ": " : "", e ? e->message : "");
    g_clear_error(&e);
    return FALSE;
  }
  return TRUE;
}

static gboolean w_blocks(gconstpointer c, FILE *f) { return an_chain_write_blocks_csv(c, f); }
static gboolean w_pools(gconstpointer c, FILE *f) { return an_chain_write_pools_csv(c, f); }
static gboolean w_runs(gconstpointer c, FILE *f) { return an_chain_write_runs_csv(c, f); }
static gboolean w_commit(gconstpointer t, FILE *f) { return an_tx_write_commit_csv(t, f); }
static gboolean w_samples(gconstpointer t, FILE *f) { return an_tx_write_commit_samples_csv(t, f); }

typedef struct {
  const AnProp *prop;
  const AnChain *chain;
} PropCtx;
static gboolean w_obs(gconstpointer p, FILE *f) {
  const PropCtx *c = p;
  return an_prop_write_observations_csv(c->prop, c->chain, f);
}

gboolean sim_replay(const SimReplayOptions *opt, json_t **summary_out, GError **error) {
  g_return_val_if_fail(opt && opt->n_vantages > 0, FALSE);
  const char *dir = opt->out_dir ? opt->out_dir : "results/replay";
  GError *e = NULL;
  g_autoptr(SimOutDir) out = sim_outdir_open(dir, "replay", &e);
  if (!out) {
    sim_replay_input_error(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autoptr(SimReplayData) d = sim_replay_load(opt, error);
  if (!d) return FALSE;
  const Replay *r = &d->r;
  const char *const *names = sim_replay_data_vantage_names(d);
  const AnChain *chain = d->chain;
  gboolean ok = TRUE;

  /* Propagation: every placed block's sightings. */
  g_autoptr(AnProp) prop = an_prop_new(names, d->nv);
  for (guint i = 0; ok && i < d->logged->len; i++) {
    const RBlock *b = g_ptr_array_index(d->logged, i);
    for (guint v = 0; ok && v < d->nv; v++) {
      if (b->msg_ns[v] == OBS_TIME_NONE && b->ann_ns[v] == OBS_TIME_NONE) continue;
      ObsSighting s = {.block = b->b.id, .vantage = v, .block_msg_ns = b->msg_ns[v], .announce_ns = b->ann_ns[v]};
      ok = an_prop_add(prop, &s, &e);
    }
  }
  if (ok) ok = an_prop_finalize(prop, chain, &e);

  /* Transactions: receptions, inclusions, then the main chain. */
  g_autoptr(AnTx) antx = an_tx_new(names, d->nv);
  for (guint i = 0; ok && i < d->txs_sorted->len; i++) {
    const RTx *t = g_ptr_array_index(d->txs_sorted, i);
    ok = an_tx_add_tx(antx, &t->rec, &e);
    for (guint v = 0; ok && v < d->nv; v++) {
      if (t->recv[v] == OBS_TIME_NONE) continue;
      ObsTxSighting s = {.tx = t->rec.id, .vantage = v, .seen_ns = t->recv[v]};
      ok = an_tx_add_sighting(antx, &s, &e);
    }
  }
  for (guint i = 0; ok && i < d->logged->len; i++) {
    const RBlock *b = g_ptr_array_index(d->logged, i);
    for (uint32_t j = 0; ok && j < b->n_txs; j++) {
      if (!g_hash_table_contains(r->txs, &b->txs[j])) continue; /* counted in txs_only_in_blocks */
      ObsTxInclusion in = {.tx = b->txs[j], .block = b->b.id, .height = b->b.height};
      ok = an_tx_add_inclusion(antx, &in, &e);
    }
  }
  g_autofree int64_t **recv = g_new0(int64_t *, d->nv);
  uint32_t n_heights = 0;
  if (ok) {
    const AnChainSummary *cs = an_chain_summary(chain);
    n_heights = (uint32_t)cs->heights + 1;
    for (guint v = 0; v < d->nv; v++) {
      recv[v] = g_new(int64_t, n_heights);
      recv[v][0] = OBS_TIME_NONE;
      for (uint32_t h = 1; h < n_heights; h++) {
        const ObsBlock *mb = an_chain_main_block(chain, h);
        const RBlock *b = mb ? g_hash_table_lookup(r->blocks, &mb->id) : NULL;
        int64_t a = b ? b->msg_ns[v] : OBS_TIME_NONE, c = b ? b->ann_ns[v] : OBS_TIME_NONE;
        recv[v][h] = MIN(a, c);
      }
    }
    ok = an_tx_add_main_chain(antx, chain, opt->heights, (const int64_t *const *)recv, n_heights, &e);
  }
  for (guint v = 0; v < d->nv; v++) g_free(recv[v]);
  if (ok) an_tx_finalize(antx);
  if (!ok) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, "analysis failed: %s", e->message);
    g_error_free(e);
    return FALSE;
  }

  const SimReplayCounts *c = &d->counts;
  g_autoptr(json_t) summary = json_object();
  json_t *doc = json_object();
  json_t *vs = json_array();
  for (guint v = 0; v < d->nv; v++)
    json_array_append_new(vs, json_pack("{s:s, s:s}", "name", names[v], "dir", opt->dirs[v]));
  json_object_set_new(doc, "vantage_points", vs);
  if (opt->pools_csv) json_object_set_new(doc, "pools_csv", json_string(opt->pools_csv));
  json_object_set_new(doc, "strict", json_boolean(opt->strict));
  json_object_set_new(summary, "header", sim_output_header(0, 1, opt->argc, opt->argv, NULL, NULL));
  json_object_set_new(json_object_get(summary, "header"), "replay", doc);
  json_t *rp = json_object();
  json_object_set_new(rp, "block_lines", json_integer((json_int_t)c->block_lines));
  json_object_set_new(rp, "announcement_lines", json_integer((json_int_t)c->announcement_lines));
  json_object_set_new(rp, "tx_lines", json_integer((json_int_t)c->tx_lines));
  json_object_set_new(rp, "bad_lines", json_integer((json_int_t)c->bad_lines));
  json_object_set_new(rp, "blocks", json_integer((json_int_t)c->blocks));
  json_object_set_new(rp, "first_number", json_integer((json_int_t)c->first_number));
  json_object_set_new(rp, "detached_blocks", json_integer((json_int_t)c->detached_blocks));
  json_object_set_new(rp, "placeholder_blocks", json_integer((json_int_t)c->placeholder_blocks));
  json_object_set_new(rp, "announced_only", json_integer((json_int_t)c->announced_only));
  json_object_set_new(rp, "unknown_uncles", json_integer((json_int_t)c->unknown_uncles));
  json_object_set_new(rp, "txs", json_integer((json_int_t)c->txs));
  json_object_set_new(rp, "txs_only_in_blocks", json_integer((json_int_t)c->txs_only_in_blocks));
  for (int k = 0; k < AN_N; k++) json_object_set_new(rp, an_key[k], json_integer((json_int_t)r->anom[k]));
  json_object_set_new(rp, "gap_heights", json_integer((json_int_t)r->gap_heights));
  json_t *byv = json_array();
  for (guint v = 0; v < d->nv; v++) {
    json_t *o = json_pack("{s:s}", "name", names[v]);
    for (int k = 0; k < AN_N; k++)
      json_object_set_new(o, an_key[k], json_integer((json_int_t)r->vanom[v * AN_N + k]));
    json_object_set_new(o, "gap_heights", json_integer((json_int_t)r->vgap_heights[v]));
    json_array_append_new(byv, o);
  }
  json_object_set_new(rp, "by_vantage", byv);
  json_object_set_new(rp, "peak_rss_bytes", json_integer((json_int_t)sim_peak_rss_bytes()));
  json_object_set_new(summary, "replay", rp);
  an_chain_add_json(chain, summary);
  an_prop_add_json(prop, summary);
  an_tx_add_json(antx, summary);
  PropCtx pc = {prop, chain};
  ok = sim_outdir_write_json(out, "summary.json", summary, &e) && write_file(out, "blocks.csv", w_blocks, chain, error) &&
       write_file(out, "pools.csv", w_pools, chain, error) && write_file(out, "runs.csv", w_runs, chain, error) &&
       write_file(out, "observations.csv", w_obs, &pc, error) &&
       write_file(out, "tx_commit.csv", w_commit, antx, error) &&
       write_file(out, "tx_commit_samples.csv", w_samples, antx, error) && sim_outdir_commit(out, &e);
  if (!ok && e) {
    g_set_error_literal(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, e->message);
    g_error_free(e);
  }
  if (ok && summary_out) *summary_out = g_steal_pointer(&summary);
  return ok;
}
