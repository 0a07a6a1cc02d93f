/* cmd_replay.c: `sim replay LOGDIR... [--vantage NAME=DIR]...`: measured EMC logs through the same analysis
 * as `sim run`, into the same summary keys and CSVs. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "output.h"
#include "replay.h"

static void print_report(const json_t *s, const char *dir) {
  json_t *chain = json_object_get(s, "chain"), *rp = json_object_get(s, "replay"), *tx = json_object_get(s, "tx");
  g_autofree char *wrote = sim_outdir_describe(dir);
  printf("wrote %s\n", wrote);
  printf("blocks %.0f (heights %.0f from number %.0f; %.0f placeholders for blocks not in the logs, %.0f "
         "left out as inconsistent)  uncles/main %.4f  stale share %.4f  empty %.2f%%\n",
         json_number_value(json_object_get(rp, "blocks")),
         json_number_value(json_object_get(chain, "heights")),
         json_number_value(json_object_get(rp, "first_number")),
         json_number_value(json_object_get(rp, "placeholder_blocks")),
         json_number_value(json_object_get(rp, "detached_blocks")),
         json_number_value(json_object_get(chain, "uncle_rate")),
         json_number_value(json_object_get(chain, "stale_share")),
         100 * json_number_value(json_object_get(chain, "empty_share")));
  printf("transactions %.0f seen, %.0f committed; bad lines %.0f\n", json_number_value(json_object_get(tx, "unique")),
         json_number_value(json_object_get(tx, "committed")), json_number_value(json_object_get(rp, "bad_lines")));
}

typedef struct {
  char **vantages;
  char *out, *pools;
  gboolean strict, quiet;
  double reward;
  gint64 heights;
} ReplayOpts;

static const SimOpt replay_opts[] = {
    SIM_OPT_VANTAGE(ReplayOpts, vantages),
    SIM_OPT_OUT(ReplayOpts, out, "Results directory (default results/replay)", "DIR"),
    SIM_OPT_POOLS_MAP(ReplayOpts, pools),
    SIM_OPT_STRICT(ReplayOpts, strict),
    /* A reward of inf or 1e308 makes every reward share inf/inf: NaN, which summary.json cannot hold. */
    {.name = "block-reward", .type = SIM_OPT_DOUBLE, .offset = offsetof(ReplayOpts, reward),
     .help = "Block reward in ETH for the reward shares (default 2)", .arg = "ETH", .range = "(0, 1e6] ETH",
     .min = 0, .min_open = TRUE, .max = 1e6},
    {.name = "heights", .type = SIM_OPT_INT64, .offset = offsetof(ReplayOpts, heights),
     .help = "Metric window: heights 1..N counted from the lowest block number (default all), as stop.heights",
     .arg = "N", .range = "[0, 1e9]", .min = 0, .max = 1e9},
    SIM_OPT_QUIET(ReplayOpts, quiet, "No report (warnings such as bad log lines still go to stderr)"),
};

static void replay_opts_clear(ReplayOpts *o) {
  sim_cli_options_clear(replay_opts, G_N_ELEMENTS(replay_opts), o);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ReplayOpts, replay_opts_clear)

int sim_cmd_replay(int argc, char **argv) {
  g_auto(ReplayOpts) o = {.reward = 2.0};
  g_autoptr(GOptionContext) ctx = g_option_context_new("[LOGDIR...] - measured logs through sim's analysis");
  sim_cli_add_options(ctx, replay_opts, G_N_ELEMENTS(replay_opts), &o);
  g_option_context_set_description(
      ctx, "Each LOGDIR holds one vantage point's EMC raw logs (NewBlockMsg.log or blocks.log, announcements,\n"
           "TxMsg.log..., plain, .gz or .xz, rotated parts too); its name is the directory's base name unless\n"
           "given with --vantage NAME=DIR. Writes the same summary.json keys and CSVs as 'sim run'. Bad lines are\n"
           "counted and the first few reported as file:line: reason (--strict: exit 2 at the first).\n\n"
           "Files written into DIR, all or nothing (man sim, OUTPUTS; another non-empty DIR is refused):\n"
           "  .sim-result            always: the marker of a complete result of sim\n"
           "  summary.json           always: the header record, the metrics of 'sim run' and replay.*\n"
           "  blocks.csv             always: one row per block\n"
           "  pools.csv              always: one row per pool (coinbase address, or its name with --pools)\n"
           "  runs.csv               always: runs of blocks by one miner, with the i.i.d. expectation\n"
           "  observations.csv       always: one row per block a vantage point saw\n"
           "  tx_commit.csv          always: commit time per confirmations k and vantage\n"
           "  tx_commit_samples.csv  always: a deterministic sample of the commit times");
  if (!sim_cli_parse(ctx, "replay", &argc, &argv)) return SIM_EXIT_USAGE;
  g_autoptr(GPtrArray) dirs = g_ptr_array_new();
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  if (sim_cli_vantage_dirs("replay", argc, argv, o.vantages, dirs, names) != SIM_EXIT_OK) return SIM_EXIT_USAGE;
  if (!sim_cli_check_ranges("replay", replay_opts, G_N_ELEMENTS(replay_opts), &o)) return SIM_EXIT_USAGE;
  SimReplayOptions opt = {.dirs = (const char *const *)dirs->pdata,
                          .names = (const char *const *)names->pdata,
                          .n_vantages = dirs->len,
                          .pools_csv = o.pools,
                          .strict = o.strict,
                          .out_dir = o.out,
                          .block_reward_eth = o.reward,
                          .heights = (uint32_t)o.heights,
                          .argc = argc,
                          .argv = argv};
  g_autoptr(GError) e = NULL;
  json_t *summary = NULL;
  if (!sim_replay(&opt, &summary, &e)) {
    fprintf(stderr, "sim replay: %s\n", e->message);
    return e->code == SIM_REPLAY_ERROR_INPUT ? SIM_EXIT_USAGE : SIM_EXIT_RUNTIME;
  }
  if (!o.quiet) print_report(summary, o.out ? o.out : "results/replay");
  json_decref(summary);
  return SIM_EXIT_OK;
}
