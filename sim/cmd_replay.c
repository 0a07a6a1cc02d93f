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

int sim_cmd_replay(int argc, char **argv) {
  g_auto(GStrv) vantages = NULL;
  g_autofree char *out = NULL, *pools = NULL;
  gboolean strict = FALSE, quiet = FALSE;
  double reward = 2.0;
  gint64 heights = 0;
  GOptionEntry entries[] = {
      {"vantage", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &vantages, "A vantage point's log directory, named",
       "NAME=DIR"},
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "Results directory (default results/replay)", "DIR"},
      {"pools", 0, 0, G_OPTION_ARG_FILENAME, &pools,
       "Coinbase address -> pool map (CSV with 'address' and a name column)", "CSV"},
      {"strict", 0, 0, G_OPTION_ARG_NONE, &strict, "The first bad line is fatal (exit 2)", NULL},
      {"block-reward", 0, 0, G_OPTION_ARG_DOUBLE, &reward,
       "Block reward in ETH for the reward shares (default 2)", "ETH"},
      {"heights", 0, 0, G_OPTION_ARG_INT64, &heights,
       "Metric window: heights 1..N counted from the lowest block number (default all), as stop.heights",
       "N"},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
       "No report (warnings such as bad log lines still go to stderr)", NULL},
      G_OPTION_ENTRY_NULL};
  g_autoptr(GOptionContext) ctx = g_option_context_new("[LOGDIR...] - measured logs through sim's analysis");
  g_option_context_add_main_entries(ctx, entries, NULL);
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
  if (sim_cli_vantage_dirs("replay", argc, argv, vantages, dirs, names) != SIM_EXIT_OK) return SIM_EXIT_USAGE;
  /* A reward of inf or 1e308 makes every reward share inf/inf: NaN, which summary.json cannot hold. */
  if (!(reward > 0 && reward <= 1e6))
    return sim_cli_usage_error("replay", "--block-reward must be in (0, 1e6] ETH (got %g)", reward);
  if (heights < 0 || heights > 1000000000)
    return sim_cli_usage_error("replay", "--heights must be in [0, 1e9] (got %" G_GINT64_FORMAT ")", heights);
  SimReplayOptions opt = {.dirs = (const char *const *)dirs->pdata,
                          .names = (const char *const *)names->pdata,
                          .n_vantages = dirs->len,
                          .pools_csv = pools,
                          .strict = strict,
                          .out_dir = out,
                          .block_reward_eth = reward,
                          .heights = (uint32_t)heights,
                          .argc = argc,
                          .argv = argv};
  g_autoptr(GError) e = NULL;
  json_t *summary = NULL;
  if (!sim_replay(&opt, &summary, &e)) {
    fprintf(stderr, "sim replay: %s\n", e->message);
    return e->code == SIM_REPLAY_ERROR_INPUT ? SIM_EXIT_USAGE : SIM_EXIT_RUNTIME;
  }
  if (!quiet) print_report(summary, out ? out : "results/replay");
  json_decref(summary);
  return SIM_EXIT_OK;
}
