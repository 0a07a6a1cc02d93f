/* chain-fixture.h: building hand-made chains in analysis tests (shared by test_analysis and
 * test_propagation). Include after cunit-main.h and chain.h. */
#pragma once

#include <stdio.h>

#include "chain.h"

/* A block with the fields the metrics read; the rest zero. */
static inline ObsBlock mk(uint64_t id, uint64_t parent, uint32_t height, uint32_t miner, int64_t mined_ns,
                          double diff) {
  ObsBlock b = {
      .id = id, .parent = parent, .height = height, .miner = miner, .mined_ns = mined_ns, .difficulty = diff};
  return b;
}

static inline void add_ok(AnChain *c, ObsBlock b) {
  GError *err = NULL;
  gboolean ok = an_chain_add_block(c, &b, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "add_block: %s\n", err ? err->message : "?");
  g_clear_error(&err);
}

static inline void add_ref(AnChain *c, ObsBlock b, uint64_t uncle) {
  b.uncles[b.n_uncles++] = uncle;
  add_ok(c, b);
}

static inline void finalize_ok(AnChain *c, const AnChainParams *p) {
  GError *err = NULL;
  gboolean ok = an_chain_finalize(c, p, &err);
  CU_ASSERT_TRUE(ok);
  if (!ok) fprintf(stderr, "finalize: %s\n", err ? err->message : "?");
  g_clear_error(&err);
}
