/* relay_btc-private.h: what the bitcoin-compact relay's kernel (relay_btc.c) and its tables
 * (relay_btc_tables.c: its settings, SimBlock's failure-size tables) share, and the one thing the geo network
 * (geo.c) reads of it beyond relay.h. */
#pragma once

#include "relay.h"

typedef struct {
  double processing_ms;
  double compact_share;
  double compact_bytes;
  double compact_fail;
  double churn_share;
  double churn_compact_fail;
  double fail_share;
  int fail_size; /* BTC_FAIL_SIZE_* */
  double message_ms;
  gboolean upload_until_arrival;
  gboolean processing_in_message;
} BtcParams;

enum { BTC_FAIL_SIZE_SHARE = 0, BTC_FAIL_SIZE_SIMBLOCK = 1 };

/* The relay's settings (relay_btc_tables.c), as the model table lists them. */
#define RELAY_BTC_N_PARAMS 11
extern const SimParamSpec relay_btc_params[RELAY_BTC_N_PARAMS];

/* SimBlock's failure-size tables (relay_btc_tables.c): a control sender's has this many entries, all 0.01;
 * a churning sender's this many, and relay_btc_churn_fail_share(i) is its entry i (i below the count). */
#define BTC_CONTROL_FAIL_ENTRIES 210
#define BTC_CHURN_FAIL_ENTRIES 945
double relay_btc_churn_fail_share(guint64 i);


