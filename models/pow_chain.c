/* pow_chain.c: the scenario's "chain" section (PowChainParams): its parameter table and cross-field checks, and
 * the intervals that follow from it. */
#include "pow.h"

#include <math.h>

static const char *const difficulty_choices[] = {"fixed", "byzantium", NULL};
static const char *const fork_choice_choices[] = {"total-difficulty", "longest", NULL};

const SimParamSpec pow_chain_params[] = {
    {.name = "target_interval_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = POW_MIN_INTERVAL_S,
     .max = POW_MAX_INTERVAL_S, .def = 13.32, .offset = offsetof(PowChainParams, target_interval_s),
     .help = "mean time between blocks of the whole network (13.32 s: 31 days / 201,086 heights). fixed "
             "difficulty: exactly; byzantium: the interval the rule settles at, through EIP-100's time step, "
             "9 s x target_interval_s / 13.32 s (9 s gave 13.32 s on mainnet in 2019), and initial_difficulty / "
             "hashrate_hps must be within a factor 2 of it. At least 1 ms: the clock ticks in ns (shorter means "
             "round to 0 ns and time stops) and no network carries a block anywhere in less (every block would fork)"},
    {.name = "block_reward_eth", .type = SIM_PARAM_NUMBER, .unit = "ETH", .min = 0, .max = INFINITY, .def = 2.0,
     .offset = offsetof(PowChainParams, block_reward_eth), .help = "static block reward (Constantinople: 2)"},
    {.name = "difficulty", .type = SIM_PARAM_ENUM, .choices = difficulty_choices, .def_str = "fixed",
     .offset = offsetof(PowChainParams, difficulty),
     .help = "fixed: every block has difficulty 1 and blocks come at target_interval_s; byzantium: Ethereum's "
             "uncle-aware adjustment (EIP-100) from initial_difficulty, mining at hashrate_hps"},
    {.name = "fork_choice", .type = SIM_PARAM_ENUM, .choices = fork_choice_choices, .def_str = "total-difficulty",
     .offset = offsetof(PowChainParams, fork_choice),
     .help = "total-difficulty: the heaviest chain (Ethereum, Geth 1.8.23 tie-breaks); longest: the highest "
             "chain, whatever its difficulty (the same tie-breaks)"},
    {.name = "initial_difficulty", .type = SIM_PARAM_NUMBER, .unit = "hashes", .min = 131072, .max = 1e30,
     .def = 2.0885e15, .offset = offsetof(PowChainParams, initial_difficulty),
     .help = "byzantium: difficulty of the first block (Etherscan, late May 2019: 2028.6-2148.4 TH)"},
    {.name = "hashrate_hps", .type = SIM_PARAM_NUMBER, .unit = "H/s", .min = 0, .max = 1e30, .min_open = TRUE,
     .def = 1.64e14, .offset = offsetof(PowChainParams, hashrate_hps),
     .help = "byzantium: total hash rate (Etherscan, late May 2019: 164 TH/s); initial_difficulty / "
             "hashrate_hps, the first blocks' mean interval, must be in [1 ms, 1e6 s] as target_interval_s"},
    {.name = "tx_rate_per_s", .type = SIM_PARAM_NUMBER, .unit = "1/s", .min = 0, .max = 1e6, .def = 0,
     .offset = offsetof(PowChainParams, tx_rate_per_s),
     .help = "transactions arriving for inclusion; a block holds those that arrived since its parent was mined "
             "(Poisson), up to the gas limit: the stand-in for scenarios without a \"transactions\" section (must be 0 with one)"},
    {.name = "tx_gas", .type = SIM_PARAM_NUMBER, .unit = "gas", .min = 21000, .max = 1e8, .def = 70000,
     .offset = offsetof(PowChainParams, tx_gas), .help = "gas used by one transaction"},
    {.name = "tx_bytes", .type = SIM_PARAM_NUMBER, .unit = "bytes", .min = 0, .max = 1e8, .def = 200,
     .offset = offsetof(PowChainParams, tx_bytes), .help = "encoded size of one transaction"},
    {.name = "header_bytes", .type = SIM_PARAM_NUMBER, .unit = "bytes", .min = 0, .max = 1e8, .def = 540,
     .offset = offsetof(PowChainParams, header_bytes), .help = "block header and message framing"},
    {.name = "block_gas_limit", .type = SIM_PARAM_NUMBER, .unit = "gas", .min = 0, .max = 1e12, .def = 8e6,
     .offset = offsetof(PowChainParams, block_gas_limit), .help = "gas limit of a block (2019: 8 M)"},
    {.name = "empty_window_ms", .type = SIM_PARAM_NUMBER, .unit = "ms", .min = 0, .max = 1e7, .def = 0,
     .offset = offsetof(PowChainParams, empty_window_ms),
     .help = "after a pool's miners get new work they mine an empty template until the full one is built; a "
             "block found in this window is empty (calibration knob: the empty-block share)"},
    {.name = "recommit_s", .type = SIM_PARAM_NUMBER, .unit = "s", .min = 0.01, .max = 1e6, .def = 3,
     .offset = offsetof(PowChainParams, recommit_s),
     .help = "the full template is rebuilt with the newest transactions this often (Geth 1.8.23 recommit: 3 s); "
             "two blocks on one template carry the same transactions"},
    {.name = "first_block_number", .type = SIM_PARAM_INT, .min = 1, .max = 1e15, .def = 1,
     .offset = offsetof(PowChainParams, first_block_number),
     .help = "the block Number that EMC logs (sim run --emc-logs) give to height 1, so logs line up with a real "
             "chain's range (Ethereum mainnet, 1 April 2019: 7479573); it labels logs only, no model reads it"},
};
const guint pow_chain_n_params = G_N_ELEMENTS(pow_chain_params);

double pow_chain_first_interval_s(const PowChainParams *cp) {
  return cp->difficulty == POW_DIFFICULTY_BYZANTIUM ? cp->initial_difficulty / cp->hashrate_hps
                                                    : cp->target_interval_s;
}

double pow_chain_eip100_step_s(const PowChainParams *cp) {
  /* target / reference is exactly 1 at the default, so the default step is exactly 9 s. */
  return POW_EIP100_STEP_S * (cp->target_interval_s / POW_EIP100_REF_INTERVAL_S);
}

void pow_chain_check(const PowChainParams *cp, SimDiag *diag, const char *path) {
  if (cp->difficulty != POW_DIFFICULTY_BYZANTIUM) return;
  /* The rule then adjusts the difficulty by at most 1/2048 per block, so a first interval of 1e-25 s (the
   * bounds of each field alone allow it) would mine ~120,000 blocks at t = 0 before time moved, and one of
   * 1e330 s none at all. */
  double first = pow_chain_first_interval_s(cp);
  if (!(first >= POW_MIN_INTERVAL_S && first <= POW_MAX_INTERVAL_S)) {
    g_autofree char *p = sim_json_child_path(path, "hashrate_hps");
    sim_diag_add(diag, p,
                 "initial_difficulty / hashrate_hps, the first blocks' mean interval, must be in [%g, %g] s "
                 "(got %.3g s)",
                 POW_MIN_INTERVAL_S, POW_MAX_INTERVAL_S, first);
    return;
  }
  /* target_interval_s acts through EIP-100's step, but the rule moves the difficulty by at most 1/2048 per
   * block: from a start a factor r away it needs about 2048·ln r blocks (1,400 for r = 2) to get there, so a
   * target the start contradicts (say a fitted 30 s in a scenario that starts at 12.7 s) would be ignored
   * for most of a run. Refused instead, with the difficulty that agrees. */
  double t = cp->target_interval_s;
  if (first > POW_EIP100_START_FACTOR * t || first * POW_EIP100_START_FACTOR < t) {
    g_autofree char *p = sim_json_child_path(path, "target_interval_s");
    sim_diag_add(diag, p,
                 "%.4g s with difficulty \"byzantium\": the rule starts at initial_difficulty / hashrate_hps = "
                 "%.4g s and moves at most 1/2048 per block (about %.0f blocks to get there); set "
                 "chain.initial_difficulty to %.6g (target_interval_s x hashrate_hps) or use difficulty \"fixed\"",
                 t, first, ceil(2048 * fabs(log(t / first))), t * cp->hashrate_hps);
  }
}
