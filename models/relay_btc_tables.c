/* relay_btc_tables.c: the tables of the bitcoin-compact relay (relay_btc.c): its settings, and SimBlock's
 * failure-size tables that fail_size "simblock" draws from. */
#include "relay_btc-private.h"

static const char *const fail_size_choices[] = {"share", "simblock", NULL};

const SimParamSpec relay_btc_params[] = {
    {.name = "processing_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "ms",
     .min = 0,
     .max = 1e6,
     .def = 2,
     .offset = offsetof(BtcParams, processing_ms),
     .help =
         "validation of a received block before its invs go out, per hop (SimBlock: processingTime 2 ms); "
         "also the delay before a miner works on it"},
    {.name = "compact_share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.964,
     .offset = offsetof(BtcParams, compact_share),
     .help =
         "share of nodes using compact blocks, a per-node trait (SimBlock CBR_USAGE_RATE; BENCH.md: 96.4%)"},
    {.name = "compact_bytes",
     .type = SIM_PARAM_NUMBER,
     .unit = "bytes",
     .min = 0,
     .max = 1e9,
     .def = 18000,
     .offset = offsetof(BtcParams, compact_bytes),
     .help = "size of a compact block; a block no larger than this goes whole (SimBlock COMPACT_BLOCK_SIZE: "
             "18 KB)"},
    {.name = "compact_fail",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.13,
     .offset = offsetof(BtcParams, compact_fail),
     .help = "probability that a (non-churning) receiver cannot reconstruct a compact block (SimBlock "
             "CBR_FAILURE_RATE_FOR_CONTROL_NODE; BENCH.md: 13%)"},
    {.name = "churn_share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0,
     .offset = offsetof(BtcParams, churn_share),
     .help = "share of churning nodes, a per-node trait (SimBlock CHURN_NODE_RATE is 0.976)"},
    {.name = "churn_compact_fail",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 0.27,
     .offset = offsetof(BtcParams, churn_compact_fail),
     .help = "compact block failure probability of a churning receiver (SimBlock "
             "CBR_FAILURE_RATE_FOR_CHURN_NODE; BENCH.md: 27%)"},
    {.name = "fail_share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .def = 1,
     .offset = offsetof(BtcParams, fail_share),
     .help = "with fail_size \"share\": after a failed reconstruction, this share of the block is sent (1: "
             "the full block)"},
    {.name = "fail_size",
     .type = SIM_PARAM_ENUM,
     .choices = fail_size_choices,
     .def_str = "share",
     .offset = offsetof(BtcParams, fail_size),
     .help = "what follows a failed compact block: \"share\": fail_share x the block; \"simblock\": the "
             "block x a share drawn uniformly from SimBlock's failure-size table of the sender (its "
             "CBR_FAILURE_BLOCK_SIZE_DISTRIBUTION_FOR_CONTROL_NODE, always 0.01, or for a churning sender "
             "..._FOR_CHURN_NODE, 0.01-0.96 with mean 0.087)"},
    {.name = "message_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "ms",
     .min = 0,
     .max = 1e6,
     .def = 0,
     .offset = offsetof(BtcParams, message_ms),
     .help = "added to the latency of each inv, getdata and getblocktxn (SimBlock "
             "AbstractMessageTask.getInterval adds 10)"},
    {.name = "upload_until_arrival",
     .type = SIM_PARAM_BOOL,
     .def = 1,
     .offset = offsetof(BtcParams, upload_until_arrival),
     .help = "an uploader starts its next block message when the previous one arrived (SimBlock), so each "
             "holds the link for latency + transfer; false: once it has left (transfer only)"},
    {.name = "processing_in_message",
     .type = SIM_PARAM_BOOL,
     .def = 0,
     .offset = offsetof(BtcParams, processing_in_message),
     .help =
         "true (SimBlock): processing_ms is part of every block and compact block message's delay (it holds "
         "the sender's upload link, and a failed compact block pays it twice); a node relays and mines at "
         "once when the block is complete. false: paid once per hop, between having the block and its "
         "invs (and mining on it)"},
};
G_STATIC_ASSERT(G_N_ELEMENTS(relay_btc_params) == RELAY_BTC_N_PARAMS);

/* ---- SimBlock's failure-size tables (SimulationConfiguration.java, commit 5fc7f9f) ----
 * After a failed compact block SimBlock's sender (Node.getFailedBlockSize, run by the sending node, so its
 * own isChurnNode picks the table, whereas the failure rate follows the receiver's) sends BLOCK_SIZE x an
 * entry drawn uniformly (Random.nextInt) from one of two sorted tables of hundredths: 210 entries, all 0.01,
 * for a control node; 945 entries for a churning node, stored here as counts of 0.01, 0.02, ..., 0.96. The
 * Java float products are exact hundredths of the block at the bench sizes; SimBlock then rounds the
 * transfer to whole ms, which we do not. */
static const guint16 btc_churn_fail_counts[96] = {
    546, 66, 39, 27, 21, 17, 14, 12, 11, 10, 9, 8, 7, 7, 6, 6, 5, 5, 5, 4, 4, 4, 4, 4,
    3,   3,  3,  3,  3,  3,  3,  3,  2,  2,  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1,   1,  1,  1,  1,  1,  1,  1,  1,  1,  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

double relay_btc_churn_fail_share(guint64 i) {
  g_return_val_if_fail(i < BTC_CHURN_FAIL_ENTRIES, 0.01);
  guint k = 0;
  while (i >= btc_churn_fail_counts[k])
    i -= btc_churn_fail_counts[k++];
  return (double)(k + 1) / 100.0;
}
