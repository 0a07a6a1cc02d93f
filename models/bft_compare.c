/* bft_compare.c: Rubin's question (rdma.h, sim_bft_compare()): the same ordering service on several stacks,
 * each stack's latency and throughput beside the base stack's. */
#include "rdma-private.h"

gboolean sim_bft_compare(const SimLogGP *stacks, guint n_stacks, guint base, const SimBftConfig *cfg,
                         SimBftStackOutcome *out, GError **error) {
  g_return_val_if_fail(stacks != NULL && cfg != NULL && out != NULL && base < n_stacks, FALSE);
  for (guint i = 0; i < n_stacks; i++)
    if (!sim_bft_run(&stacks[i], cfg, &out[i].result, error)) return FALSE;
  const SimBftResult *b = &out[base].result;
  for (guint i = 0; i < n_stacks; i++) {
    const SimBftResult *r = &out[i].result;
    out[i].latency_gain = b->latency_mean_us > 0 ? 1 - r->latency_mean_us / b->latency_mean_us : 0;
    out[i].throughput_gain = b->throughput_rps > 0 ? r->throughput_rps / b->throughput_rps - 1 : 0;
  }
  return TRUE;
}
