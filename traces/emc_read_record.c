/* emc_read_record.c: the values of a line's fields (times, hashes, addresses, numbers, lists, flags) and the
 * record of each kind they make. */
#include "emc-read-private.h"

#include <math.h>
#include <string.h>

/* ---- Values ------------------------------------------------------------------------------------------- */

/* Sets r->why to "field N (Name): what" and returns FALSE. */
static gboolean fail_at(EmcReader *r, int fi, const char *name, const char *what) {
  g_string_printf(r->why, "field %d (%s): %s", fi + 1, name, what);
  return FALSE;
}

static gboolean fail(EmcReader *r, int col, const char *what) {
  return fail_at(r, r->map[col], emc_read_kcols(r)->cols[col].name, what);
}

static Field *get(EmcReader *r, int col) {
  return r->map[col] >= 0 ? &r->fields[r->map[col]] : NULL;
}

static gboolean parse_time(EmcReader *r, Field *f, int64_t *out) {
  return r->has_header ? emc_time_parse_lenient(f->p, f->len, out) : emc_time_parse(f->p, f->len, out);
}

#define TIME_WHAT "not a timestamp like 2006-01-02T15:04:05.000-0700"

static gboolean conv_time(EmcReader *r, int col, int64_t *out) {
  Field *f = get(r, col);
  if (!f) {
    *out = OBS_TIME_NONE;
    return TRUE;
  }
  if (!emc_read_kcols(r)->cols[col].required && emc_read_field_is_none(f)) {
    *out = OBS_TIME_NONE;
    return TRUE;
  }
  return parse_time(r, f, out) || fail(r, col, TIME_WHAT);
}

static gboolean conv_hash(EmcReader *r, int col, EmcHash *out) {
  Field *f = get(r, col);
  return emc_hash_parse(f->p, f->len, out) || fail(r, col, "not a 0x-prefixed 32-byte hex hash");
}

static gboolean conv_opt_hash(EmcReader *r, int col, gboolean *has, EmcHash *out) {
  Field *f = get(r, col);
  memset(out, 0, sizeof *out);
  *has = FALSE;
  if (!f || emc_read_field_is_none(f)) return TRUE;
  *has = TRUE;
  return emc_hash_parse(f->p, f->len, out) || fail(r, col, "not a 0x-prefixed 32-byte hex hash");
}

#define ADDRESS_WHAT "not a 0x-prefixed 20-byte hex address"

static gboolean conv_address(EmcReader *r, int col, EmcAddress *out) {
  Field *f = get(r, col);
  return emc_address_parse(f->p, f->len, out) || fail(r, col, ADDRESS_WHAT);
}

/* Digits, or in header mode also digits followed by '.' and zeros (pandas float columns). Returns the
 * length of the integer part, or 0 if the text is not of that form. */
static size_t integer_digits(const EmcReader *r, const Field *f) {
  size_t n = 0;
  while (n < f->len && f->p[n] >= '0' && f->p[n] <= '9')
    n++;
  if (n == 0) return 0;
  if (n == f->len) return n;
  if (!r->has_header || f->p[n] != '.') return 0;
  for (size_t i = n + 1; i < f->len; i++)
    if (f->p[i] != '0') return 0;
  return n;
}

static gboolean parse_u64(const char *s, size_t n, uint64_t *out) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10) return FALSE;
    v = v * 10 + d;
  }
  *out = v;
  return TRUE;
}

static gboolean conv_u64_field(EmcReader *r, Field *f, int fi, const char *name, uint64_t *out) {
  size_t n = integer_digits(r, f);
  if (n == 0) return fail_at(r, fi, name, "not an unsigned decimal integer");
  return parse_u64(f->p, n, out) || fail_at(r, fi, name, "out of range (above 2^64-1)");
}

static gboolean conv_u64(EmcReader *r, int col, uint64_t *out) {
  Field *f = get(r, col);
  if (!f || (!emc_read_kcols(r)->cols[col].required && emc_read_field_is_none(f))) {
    *out = EMC_U64_NONE;
    return TRUE;
  }
  return conv_u64_field(r, f, r->map[col], emc_read_kcols(r)->cols[col].name, out);
}

static gboolean conv_u256(EmcReader *r, int col, EmcU256 *out) {
  Field *f = get(r, col);
  size_t n = integer_digits(r, f);
  if (n == 0) return fail(r, col, "not an unsigned decimal integer");
  return emc_u256_parse(f->p, n, out) || fail(r, col, "out of range (2^256 or more)");
}

/* Free text: unquoted nil is NULL; anything else decoded. Optional columns: empty is NULL too. */
static const char *conv_string(EmcReader *r, int col) {
  Field *f = get(r, col);
  if (!f || emc_read_field_is(f, "nil")) return NULL;
  if (!emc_read_kcols(r)->cols[col].required && emc_read_field_is_none(f)) return NULL;
  return emc_read_field_text(f);
}

static gboolean conv_list(EmcReader *r, int col, GArray *scratch, uint32_t *n, const EmcHash **out) {
  Field *f = get(r, col);
  g_array_set_size(scratch, 0);
  *n = 0;
  *out = NULL;
  if (!f || f->len == 0 || emc_read_field_is_none(f)) return TRUE;
  if (f->p[f->len - 1] != ';') return fail(r, col, "list does not end with ';'");
  size_t i = 0;
  while (i < f->len) {
    const char *semi = memchr(f->p + i, ';', f->len - i);
    size_t j = (size_t)(semi - f->p);
    EmcHash h;
    if (!emc_hash_parse(f->p + i, j - i, &h)) {
      g_autofree char *what =
          g_strdup_printf("item %u: not a 0x-prefixed 32-byte hex hash", (unsigned)scratch->len + 1);
      return fail(r, col, what);
    }
    g_array_append_val(scratch, h);
    i = j + 1;
  }
  *n = scratch->len;
  *out = (const EmcHash *)(void *)scratch->data;
  return TRUE;
}

static gboolean conv_flag(EmcReader *r, int col, EmcFlag *out) {
  Field *f = get(r, col);
  *out = EMC_FLAG_NONE;
  if (!f || emc_read_field_is_none(f)) return TRUE;
  const char *s = emc_read_field_text(f);
  if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
    *out = EMC_FLAG_TRUE;
  else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
    *out = EMC_FLAG_FALSE;
  else
    return fail(r, col, "not True or False");
  return TRUE;
}

static gboolean conv_double_field(EmcReader *r, Field *f, int fi, const char *name, double *out) {
  *out = NAN;
  if (emc_read_field_is_none(f)) return TRUE;
  const char *s = emc_read_field_text(f);
  if (g_ascii_strcasecmp(s, "nan") == 0) return TRUE;
  char *end = NULL;
  double v = g_ascii_strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(v)) return fail_at(r, fi, name, "not a number");
  *out = v;
  return TRUE;
}

static gboolean conv_double(EmcReader *r, int col, double *out) {
  Field *f = get(r, col);
  if (!f) {
    *out = NAN;
    return TRUE;
  }
  return conv_double_field(r, f, r->map[col], emc_read_kcols(r)->cols[col].name, out);
}

static void conv_block_type(EmcReader *r, int col, EmcBlockType *type, const char **text) {
  Field *f = get(r, col);
  *type = EMC_BLOCK_TYPE_NONE;
  *text = NULL;
  if (!f || emc_read_field_is_none(f)) return;
  *text = emc_read_field_text(f);
  if (strcmp(*text, "Main") == 0)
    *type = EMC_BLOCK_TYPE_MAIN;
  else if (strcmp(*text, "Recognized") == 0)
    *type = EMC_BLOCK_TYPE_RECOGNIZED;
  else if (strcmp(*text, "Uncle") == 0)
    *type = EMC_BLOCK_TYPE_UNCLE;
  else
    *type = EMC_BLOCK_TYPE_OTHER;
}

/* ---- Records ------------------------------------------------------------------------------------------ */

static gboolean parse_block(EmcReader *r, EmcBlock *b) {
  memset(b, 0, sizeof *b);
  if (!conv_time(r, EMC_B_TS, &b->local_ns) || !conv_hash(r, EMC_B_HASH, &b->hash) ||
      !conv_u64(r, EMC_B_NUMBER, &b->number) || !conv_u64(r, EMC_B_GAS_LIMIT, &b->gas_limit) ||
      !conv_u64(r, EMC_B_GAS_USED, &b->gas_used) || !conv_u256(r, EMC_B_DIFFICULTY, &b->difficulty) ||
      !conv_u64(r, EMC_B_TIME, &b->time_s) || !conv_address(r, EMC_B_COINBASE, &b->coinbase) ||
      !conv_hash(r, EMC_B_PARENT, &b->parent) || !conv_hash(r, EMC_B_UNCLE_HASH, &b->uncle_hash) ||
      !conv_u64(r, EMC_B_SIZE, &b->size_bytes) || !conv_list(r, EMC_B_TXS, r->lists[0], &b->n_txs, &b->txs) ||
      !conv_list(r, EMC_B_UNCLES, r->lists[1], &b->n_uncles, &b->uncles) ||
      !conv_flag(r, EMC_B_CAPTURED, &b->stage.captured_locally) ||
      !conv_u64(r, EMC_B_FORK_LENGTH, &b->stage.fork_length))
    return FALSE;
  if (b->time_s > EMC_TIME_S_MAX)
    return fail(r, EMC_B_TIME, "out of range (after 2262: not representable in ns)");
  conv_block_type(r, EMC_B_TYPE, &b->stage.type, &b->stage.type_text);
  return TRUE;
}

static gboolean parse_tx(EmcReader *r, EmcTx *t) {
  memset(t, 0, sizeof *t);
  if (!conv_time(r, EMC_T_TS, &t->local_ns) || !conv_hash(r, EMC_T_HASH, &t->hash) ||
      !conv_u64(r, EMC_T_GAS_LIMIT, &t->gas_limit) || !conv_u256(r, EMC_T_GAS_PRICE, &t->gas_price_wei) ||
      !conv_u256(r, EMC_T_VALUE, &t->value_wei) || !conv_u64(r, EMC_T_NONCE, &t->nonce))
    return FALSE;
  Field *ty = get(r, EMC_T_TYPE);
  if (emc_read_field_is(ty, "TX"))
    t->type = EMC_TX_TYPE_TX;
  else if (emc_read_field_is(ty, "MC"))
    t->type = EMC_TX_TYPE_MC;
  else if (emc_read_field_is(ty, "CC"))
    t->type = EMC_TX_TYPE_CC;
  else
    return fail(r, EMC_T_TYPE, "not TX, MC or CC");
  if (!conv_u256(r, EMC_T_COST, &t->cost_wei) || !conv_u64(r, EMC_T_SIZE, &t->size_bytes)) return FALSE;
  Field *to = get(r, EMC_T_TO);
  if (emc_read_field_is(to, "nil")) {
    t->has_to = FALSE;
  } else {
    t->has_to = TRUE;
    if (!conv_address(r, EMC_T_TO, &t->to)) return FALSE;
  }
  if (!conv_address(r, EMC_T_FROM, &t->from)) return FALSE;
  t->validity_err = conv_string(r, EMC_T_ERR);

  EmcTxStage *s = &t->stage;
  if (!conv_flag(r, EMC_T_CAPTURED, &s->captured_locally) || !conv_u64(r, EMC_T_GAS_USED, &s->gas_used) ||
      !conv_opt_hash(r, EMC_T_IN_MAIN, &s->has_in_main_block, &s->in_main_block) ||
      !conv_list(r, EMC_T_IN_UNCLES, r->lists[2], &s->n_in_uncle_blocks, &s->in_uncle_blocks) ||
      !conv_flag(r, EMC_T_IN_ORDER, &s->in_order) || !conv_time(r, EMC_T_REMOTE_TS, &s->remote_ns))
    return FALSE;
  s->never_committing = conv_string(r, EMC_T_NEVER);
  static const int commit_cols[EMC_N_COMMIT_DEPTHS] = {EMC_T_COMMIT0, EMC_T_COMMIT3, EMC_T_COMMIT12,
                                                       EMC_T_COMMIT36};
  for (int k = 0; k < EMC_N_COMMIT_DEPTHS; k++)
    if (!conv_double(r, commit_cols[k], &s->commit_s[k])) return FALSE;
  return TRUE;
}

static gboolean parse_peer(EmcReader *r, EmcPeer *p) {
  memset(p, 0, sizeof *p);
  if (!conv_time(r, EMC_P_TS, &p->local_ns)) return FALSE;
  Field *ty = get(r, EMC_P_TYPE);
  if (emc_read_field_is(ty, "Add"))
    p->type = EMC_PEER_ADD;
  else if (emc_read_field_is(ty, "Remove"))
    p->type = EMC_PEER_REMOVE;
  else
    return fail(r, EMC_P_TYPE, "not Add or Remove");
  if (!conv_u64(r, EMC_P_PEERS, &p->peers) || !conv_u64(r, EMC_P_INBOUND, &p->inbound)) return FALSE;
  p->id = conv_string(r, EMC_P_ID);
  const char *p1 = conv_string(r, EMC_P_PARAM1), *p2 = conv_string(r, EMC_P_PARAM2);
  p->duration_ns = -1;
  if (p->type == EMC_PEER_ADD) {
    p->client = p1;
    p->addr = p2;
  } else {
    p->duration = p1;
    p->error = p2;
    if (p1 && !emc_go_duration_parse(p1, &p->duration_ns)) p->duration_ns = -1;
  }
  return TRUE;
}

static gboolean parse_propagation(EmcReader *r, EmcPropagation *p) {
  memset(p, 0, sizeof *p);
  if (!r->has_header && !emc_read_set_propagation_positions(r)) return FALSE;
  if (!conv_hash(r, EMC_R_HASH, &p->hash) || !conv_u64(r, EMC_R_NUMBER, &p->number) ||
      !conv_time(r, EMC_R_FIRST, &p->first_ns))
    return FALSE;
  conv_block_type(r, EMC_R_TYPE, &p->type, &p->type_text);
  p->n_vantages = r->vnames->len;
  int64_t *seen = (int64_t *)(void *)r->seen->data;
  double *diff = (double *)(void *)r->diff->data;
  for (guint v = 0; v < r->vnames->len; v++) {
    const char *vn = g_ptr_array_index(r->vnames, v);
    int ts = g_array_index(r->vts, int, v), df = g_array_index(r->vdiff, int, v);
    Field *f = &r->fields[ts];
    seen[v] = OBS_TIME_NONE;
    if (!emc_read_field_is_none(f) && !parse_time(r, f, &seen[v])) {
      g_autofree char *name = g_strconcat(vn, "TimeStamp", NULL);
      return fail_at(r, ts, name, TIME_WHAT);
    }
    diff[v] = NAN;
    if (df >= 0) {
      g_autofree char *name = g_strconcat(vn, "Diff", NULL);
      if (!conv_double_field(r, &r->fields[df], df, name, &diff[v])) return FALSE;
    }
  }
  p->seen_ns = seen;
  p->diff_s = diff;
  p->mining_pool = conv_string(r, EMC_R_POOL);
  return conv_u64(r, EMC_R_NUM_TXS, &p->num_txs) && conv_u64(r, EMC_R_SEQ_LEN, &p->same_miner_seq_len) &&
         conv_u64(r, EMC_R_SEQ_POS, &p->position_inside_seq) &&
         conv_double(r, EMC_R_DIFFICULTY, &p->difficulty) && conv_u64(r, EMC_R_SIZE, &p->size_bytes) &&
         conv_double(r, EMC_R_INTERBLOCK, &p->interblock_s) &&
         conv_double(r, EMC_R_INTERBLOCK_POOL, &p->interblock_per_pool_s);
}

/* Checks the field count of a data line. */
static gboolean check_count(EmcReader *r) {
  guint n = r->n_fields_total;
  if (r->has_header) {
    if (n == r->n_header_fields) return TRUE;
    g_string_printf(r->why, "expected %u fields (as in the header), found %u", r->n_header_fields, n);
    return FALSE;
  }
  switch (r->kind) {
  case EMC_KIND_PROPAGATION:
    return TRUE; /* per layout, in parse_propagation */
  case EMC_KIND_PEER:
    if (n == 6 || n == 7) {
      r->map[EMC_P_INBOUND] = n == 7 ? EMC_P_INBOUND : -1;
      return TRUE;
    }
    g_string_printf(r->why, "expected 6 or 7 fields, found %u", n);
    return FALSE;
  default: {
    guint want = emc_read_kcols(r)->n_raw;
    if (n == want) return TRUE;
    g_string_printf(r->why, "expected %u fields, found %u", want, n);
    return FALSE;
  }
  }
}

gboolean emc_read_parse_fields(EmcReader *r, EmcRecord *rec) {
  if (!check_count(r)) return FALSE;
  rec->kind = r->kind;
  switch (r->kind) {
  case EMC_KIND_BLOCK:
    return parse_block(r, &rec->u.block);
  case EMC_KIND_ANNOUNCEMENT: {
    EmcAnnouncement *a = &rec->u.announcement;
    return conv_time(r, EMC_A_TS, &a->local_ns) && conv_hash(r, EMC_A_HASH, &a->hash);
  }
  case EMC_KIND_TX:
    return parse_tx(r, &rec->u.tx);
  case EMC_KIND_HEAD: {
    EmcHead *h = &rec->u.head;
    return conv_time(r, EMC_H_TS, &h->local_ns) && conv_hash(r, EMC_H_HASH, &h->hash) &&
           conv_u64(r, EMC_H_NUMBER, &h->number);
  }
  case EMC_KIND_TX_GAS_USED: {
    EmcTxGasUsed *g = &rec->u.gas;
    if (!conv_time(r, EMC_G_TS, &g->local_ns) || !conv_hash(r, EMC_G_BLOCK, &g->block) ||
        !conv_hash(r, EMC_G_TX, &g->tx))
      return FALSE;
    Field *f = get(r, EMC_G_GAS);
    g->gas = EMC_U64_NONE; /* Geth wrote an empty field for a failed tx */
    return emc_read_field_is_none(f) || conv_u64(r, EMC_G_GAS, &g->gas);
  }
  case EMC_KIND_INVALID_MSG: {
    EmcInvalidMsg *m = &rec->u.invalid;
    uint64_t cause;
    if (!conv_time(r, EMC_I_TS, &m->local_ns) || !conv_u64(r, EMC_I_CAUSE, &cause)) return FALSE;
    if (cause > 999) return fail(r, EMC_I_CAUSE, "out of range (above 999)");
    m->cause = (uint32_t)cause;
    m->msg_type = conv_string(r, EMC_I_TYPE);
    return TRUE;
  }
  case EMC_KIND_PEER:
    return parse_peer(r, &rec->u.peer);
  case EMC_KIND_PROPAGATION:
    return parse_propagation(r, &rec->u.propagation);
  case EMC_N_KINDS:
    break;
  }
  g_assert_not_reached();
}
