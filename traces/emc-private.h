/* emc-private.h: what the EMC reader, writer and directory scanner share: the column tables. */
#pragma once

#include "emc.h"

/* One column of a kind: its canonical name (header matching is case-insensitive), another accepted
 * spelling or NULL, and whether a header must have it. */
typedef struct {
  const char *name;
  const char *alias;
  gboolean required;
} EmcColumn;

/* The columns of a kind in raw order: the first n_raw are the raw log fields (headerless positions),
 * the rest are stage columns. For EMC_KIND_PROPAGATION the per-vantage columns are not listed. */
typedef struct {
  const EmcColumn *cols;
  guint n_cols;
  guint n_raw;
} EmcKindColumns;

extern const EmcKindColumns emc_kind_columns[EMC_N_KINDS];

/* Column indices into emc_kind_columns[kind].cols. */
enum {
  EMC_B_TS,
  EMC_B_HASH,
  EMC_B_NUMBER,
  EMC_B_GAS_LIMIT,
  EMC_B_GAS_USED,
  EMC_B_DIFFICULTY,
  EMC_B_TIME,
  EMC_B_COINBASE,
  EMC_B_PARENT,
  EMC_B_UNCLE_HASH,
  EMC_B_SIZE,
  EMC_B_TXS,
  EMC_B_UNCLES,
  EMC_B_CAPTURED,
  EMC_B_TYPE,
  EMC_B_FORK_LENGTH,
  EMC_B_N
};
enum { EMC_A_TS, EMC_A_HASH, EMC_A_N };
enum {
  EMC_T_TS,
  EMC_T_HASH,
  EMC_T_GAS_LIMIT,
  EMC_T_GAS_PRICE,
  EMC_T_VALUE,
  EMC_T_NONCE,
  EMC_T_TYPE,
  EMC_T_COST,
  EMC_T_SIZE,
  EMC_T_TO,
  EMC_T_FROM,
  EMC_T_ERR,
  EMC_T_CAPTURED,
  EMC_T_GAS_USED,
  EMC_T_IN_MAIN,
  EMC_T_IN_UNCLES,
  EMC_T_IN_ORDER,
  EMC_T_NEVER,
  EMC_T_REMOTE_TS,
  EMC_T_COMMIT0,
  EMC_T_COMMIT3,
  EMC_T_COMMIT12,
  EMC_T_COMMIT36,
  EMC_T_N
};
enum { EMC_H_TS, EMC_H_HASH, EMC_H_NUMBER, EMC_H_N };
enum { EMC_G_TS, EMC_G_BLOCK, EMC_G_TX, EMC_G_GAS, EMC_G_N };
enum { EMC_I_TS, EMC_I_TYPE, EMC_I_CAUSE, EMC_I_N };
enum { EMC_P_TS, EMC_P_TYPE, EMC_P_ID, EMC_P_PARAM1, EMC_P_PARAM2, EMC_P_PEERS, EMC_P_INBOUND, EMC_P_N };
enum {
  EMC_R_HASH,
  EMC_R_NUMBER,
  EMC_R_TYPE,
  EMC_R_FIRST,
  EMC_R_POOL,
  EMC_R_NUM_TXS,
  EMC_R_SEQ_LEN,
  EMC_R_SEQ_POS,
  EMC_R_DIFFICULTY,
  EMC_R_SIZE,
  EMC_R_INTERBLOCK,
  EMC_R_INTERBLOCK_POOL,
  EMC_R_N
};

/* The most columns any kind has (without vantage columns). */
#define EMC_MAX_COLS EMC_T_N

/* The vantage points of headerless propagation tables, in their column order. */
#define EMC_LEGACY_VANTAGES 4
extern const char *const emc_legacy_vantages[EMC_LEGACY_VANTAGES];

/* Lenient timestamp parse for header (stage CSV) mode: also ' ' for 'T', 0-9 fraction digits, 'Z',
 * +hh:mm. */
gboolean emc_time_parse_lenient(const char *s, size_t len, int64_t *ns);
