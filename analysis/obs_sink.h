/* obs_sink.h: where a producer of observations (a simulated world, measured logs) sends them, beside the
 * observation types (obs.h). A producer knows only this interface; the analysis provides sinks that feed its
 * metrics (an_chain_sink_init, an_tx_sink_init), and the application wires them together. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "obs.h"

G_BEGIN_DECLS

/* Every member may be NULL (that kind of observation is dropped). A producer calls `vantages` once, before
 * any record that indexes vantage points; records then come in the order each consumer documents (chain.h,
 * txmetrics.h). A FALSE return with `error` set means the stream is inconsistent. */
typedef struct {
  gpointer user;
  /* The vantage table: `names[i]` is vantage i of the records' receptions. */
  void (*vantages)(gpointer user, const char *const *names, guint n);
  /* A block as mined. */
  gboolean (*block)(gpointer user, const ObsBlock *block, GError **error);
  /* A transaction with its first reception at each vantage (`recv_ns`: n entries, OBS_TIME_NONE where
   * unseen; NULL: none). */
  gboolean (*tx_seen)(gpointer user, const ObsTx *tx, const int64_t *recv_ns, GError **error);
  /* A transaction is in a block. */
  gboolean (*tx_inclusion)(gpointer user, const ObsTxInclusion *inclusion, GError **error);
  /* The main block at `height` is final (mined at `mined_ns`, first received at each vantage: `recv_ns`, n
   * entries, or NULL). */
  gboolean (*main_block)(gpointer user, uint32_t height, uint64_t block, int64_t mined_ns, const int64_t *recv_ns,
                         GError **error);
  /* No more records. */
  void (*finish)(gpointer user);
} ObsSink;

/* The main chain as the analysis settled it, for a producer that declares heights after the run: the main
 * block at `height`, or NULL past its end. */
typedef const ObsBlock *(*ObsMainChainFn)(gpointer user, uint32_t height);

G_END_DECLS
