/* emc_write.c: writers of raw EMC log lines, byte for byte as the instrumented Geth wrote them. */
#include "emc-private.h"

#include <errno.h>
#include <string.h>

struct EmcWriter {
  FILE *out;
  EmcKind kind;
  int offset_min;
  guint64 lines;
  gboolean wrote_header; /* peers: then every line carries the InboundPeers field, empty when none */
  GString *buf;
};

static void put_time(GString *g, int64_t ns, int off) {
  char t[EMC_TIME_TEXT_BYTES];
  emc_time_format(ns, off, t);
  g_string_append(g, t);
}

static void put_hash(GString *g, const EmcHash *h) {
  char t[EMC_HASH_TEXT_BYTES];
  emc_hash_format(h, t);
  g_string_append(g, t);
}

static void put_address(GString *g, const EmcAddress *a) {
  char t[EMC_ADDRESS_TEXT_BYTES];
  emc_address_format(a, t);
  g_string_append(g, t);
}

static void put_u64(GString *g, uint64_t v) {
  g_string_append_printf(g, "%" G_GUINT64_FORMAT, v);
}

static void put_u256(GString *g, const EmcU256 *v) {
  char t[EMC_U256_TEXT_BYTES];
  emc_u256_format(v, t);
  g_string_append(g, t);
}

/* Geth's escapeString (log/format.go), plus quoting for a comma and for the text "nil", which Geth left
 * bare and so made ambiguous. NULL is nil. */
static void put_string(GString *g, const char *s) {
  if (!s) {
    g_string_append(g, "nil");
    return;
  }
  gboolean quote = strcmp(s, "nil") == 0, escape = FALSE;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p <= ' ' || *p == '=' || *p == '"' || *p == ',') quote = TRUE;
    if (*p == '\\' || *p == '"' || *p == '\n' || *p == '\r' || *p == '\t') escape = TRUE;
  }
  if (!quote && !escape) {
    g_string_append(g, s);
    return;
  }
  if (quote) g_string_append_c(g, '"');
  for (const char *p = s; *p; p++) {
    switch (*p) {
    case '\\':
      g_string_append(g, "\\\\");
      break;
    case '"':
      g_string_append(g, "\\\"");
      break;
    case '\n':
      g_string_append(g, "\\n");
      break;
    case '\r':
      g_string_append(g, "\\r");
      break;
    case '\t':
      g_string_append(g, "\\t");
      break;
    default:
      g_string_append_c(g, *p);
      break;
    }
  }
  if (quote) g_string_append_c(g, '"');
}

static void put_list(GString *g, uint32_t n, const EmcHash *h) {
  for (uint32_t i = 0; i < n; i++) {
    put_hash(g, &h[i]);
    g_string_append_c(g, ';');
  }
}

static gboolean invalid(GError **error, const char *what) {
  g_set_error(error, EMC_ERROR, EMC_ERROR_INVALID, "cannot write %s", what);
  return FALSE;
}

/* Appends the record's line (with '\n') to `g`; `pad_inbound` writes an empty InboundPeers field for a
 * peer record without one (after a header). */
static gboolean format(GString *g, const EmcRecord *rec, int off, gboolean pad_inbound, GError **error) {
  int64_t ts;
  switch (rec->kind) {
  case EMC_KIND_BLOCK:
    ts = rec->u.block.local_ns;
    break;
  case EMC_KIND_ANNOUNCEMENT:
    ts = rec->u.announcement.local_ns;
    break;
  case EMC_KIND_TX:
    ts = rec->u.tx.local_ns;
    break;
  case EMC_KIND_HEAD:
    ts = rec->u.head.local_ns;
    break;
  case EMC_KIND_TX_GAS_USED:
    ts = rec->u.gas.local_ns;
    break;
  case EMC_KIND_INVALID_MSG:
    ts = rec->u.invalid.local_ns;
    break;
  case EMC_KIND_PEER:
    ts = rec->u.peer.local_ns;
    break;
  default:
    return invalid(error, "a propagation-table row (no raw log has them)");
  }
  if (ts == OBS_TIME_NONE) return invalid(error, "a record whose LocalTimestamp is none");
  put_time(g, ts, off);
  g_string_append_c(g, ',');

  switch (rec->kind) {
  case EMC_KIND_BLOCK: {
    const EmcBlock *b = &rec->u.block;
    if ((b->n_txs && !b->txs) || (b->n_uncles && !b->uncles))
      return invalid(error, "a block list with a count but no array");
    put_hash(g, &b->hash);
    g_string_append_printf(g, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",",
                           b->number, b->gas_limit, b->gas_used);
    put_u256(g, &b->difficulty);
    g_string_append_c(g, ',');
    put_u64(g, b->time_s);
    g_string_append_c(g, ',');
    put_address(g, &b->coinbase);
    g_string_append_c(g, ',');
    put_hash(g, &b->parent);
    g_string_append_c(g, ',');
    put_hash(g, &b->uncle_hash);
    g_string_append_c(g, ',');
    put_u64(g, b->size_bytes);
    g_string_append_c(g, ',');
    put_list(g, b->n_txs, b->txs);
    g_string_append_c(g, ',');
    put_list(g, b->n_uncles, b->uncles);
    break;
  }
  case EMC_KIND_ANNOUNCEMENT:
    put_hash(g, &rec->u.announcement.hash);
    break;
  case EMC_KIND_TX: {
    const EmcTx *t = &rec->u.tx;
    static const char *const types[] = {
        [EMC_TX_TYPE_TX] = "TX", [EMC_TX_TYPE_MC] = "MC", [EMC_TX_TYPE_CC] = "CC"};
    if ((unsigned)t->type >= G_N_ELEMENTS(types)) return invalid(error, "a tx of unknown type");
    put_hash(g, &t->hash);
    g_string_append_c(g, ',');
    put_u64(g, t->gas_limit);
    g_string_append_c(g, ',');
    put_u256(g, &t->gas_price_wei);
    g_string_append_c(g, ',');
    put_u256(g, &t->value_wei);
    g_string_append_c(g, ',');
    put_u64(g, t->nonce);
    g_string_append_printf(g, ",%s,", types[t->type]);
    put_u256(g, &t->cost_wei);
    g_string_append_c(g, ',');
    put_u64(g, t->size_bytes);
    g_string_append_c(g, ',');
    if (t->has_to)
      put_address(g, &t->to);
    else
      g_string_append(g, "nil");
    g_string_append_c(g, ',');
    put_address(g, &t->from);
    g_string_append_c(g, ',');
    put_string(g, t->validity_err);
    break;
  }
  case EMC_KIND_HEAD:
    put_hash(g, &rec->u.head.hash);
    g_string_append_c(g, ',');
    put_u64(g, rec->u.head.number);
    break;
  case EMC_KIND_TX_GAS_USED:
    put_hash(g, &rec->u.gas.block);
    g_string_append_c(g, ',');
    put_hash(g, &rec->u.gas.tx);
    g_string_append_c(g, ',');
    if (rec->u.gas.gas != EMC_U64_NONE) put_u64(g, rec->u.gas.gas); /* empty for a failed tx, as Geth */
    break;
  case EMC_KIND_INVALID_MSG:
    if (rec->u.invalid.cause > 999) return invalid(error, "an invalid-message cause above 999");
    put_string(g, rec->u.invalid.msg_type);
    g_string_append_printf(g, ",%03u", (unsigned)rec->u.invalid.cause);
    break;
  case EMC_KIND_PEER: {
    const EmcPeer *p = &rec->u.peer;
    if (p->type != EMC_PEER_ADD && p->type != EMC_PEER_REMOVE)
      return invalid(error, "a peer event of unknown type");
    if (p->peers == EMC_U64_NONE) return invalid(error, "a peer event without a peer count");
    g_string_append(g, p->type == EMC_PEER_ADD ? "Add," : "Remove,");
    put_string(g, p->id);
    g_string_append_c(g, ',');
    put_string(g, p->type == EMC_PEER_ADD ? p->client : p->duration);
    g_string_append_c(g, ',');
    put_string(g, p->type == EMC_PEER_ADD ? p->addr : p->error);
    g_string_append_c(g, ',');
    put_u64(g, p->peers);
    if (p->inbound != EMC_U64_NONE) {
      g_string_append_c(g, ',');
      put_u64(g, p->inbound);
    } else if (pad_inbound) {
      g_string_append_c(g, ',');
    }
    break;
  }
  default:
    g_assert_not_reached();
  }
  g_string_append_c(g, '\n');
  return TRUE;
}

gboolean emc_format_line(GString *line, const EmcRecord *rec, int utc_offset_min, GError **error) {
  g_return_val_if_fail(line != NULL && rec != NULL, FALSE);
  g_return_val_if_fail(utc_offset_min > -1440 && utc_offset_min < 1440, FALSE);
  gsize len = line->len;
  if (!format(line, rec, utc_offset_min, FALSE, error)) {
    g_string_truncate(line, len);
    return FALSE;
  }
  return TRUE;
}

EmcWriter *emc_writer_new(FILE *out, EmcKind kind) {
  g_return_val_if_fail(out != NULL && (unsigned)kind < EMC_N_KINDS && kind != EMC_KIND_PROPAGATION, NULL);
  EmcWriter *w = g_new0(EmcWriter, 1);
  w->out = out;
  w->kind = kind;
  w->buf = g_string_sized_new(256);
  return w;
}

void emc_writer_set_utc_offset_min(EmcWriter *w, int offset_min) {
  g_return_if_fail(w != NULL && offset_min > -1440 && offset_min < 1440);
  w->offset_min = offset_min;
}

static gboolean flush_buf(EmcWriter *w, GError **error) {
  if (fwrite(w->buf->str, 1, w->buf->len, w->out) != w->buf->len) {
    int e = errno;
    g_set_error(error, EMC_ERROR, EMC_ERROR_IO, "writing %s log: %s", emc_kind_name(w->kind), g_strerror(e));
    return FALSE;
  }
  w->lines++;
  return TRUE;
}

gboolean emc_writer_write_header(EmcWriter *w, GError **error) {
  g_return_val_if_fail(w != NULL, FALSE);
  const EmcKindColumns *kc = &emc_kind_columns[w->kind];
  guint n = w->kind == EMC_KIND_PEER ? kc->n_raw + 1 : kc->n_raw; /* peers: InboundPeers too */
  g_string_truncate(w->buf, 0);
  for (guint c = 0; c < n; c++) {
    if (c) g_string_append_c(w->buf, ',');
    g_string_append(w->buf, kc->cols[c].name);
  }
  g_string_append_c(w->buf, '\n');
  w->wrote_header = TRUE;
  return flush_buf(w, error);
}

gboolean emc_writer_write(EmcWriter *w, const EmcRecord *rec, GError **error) {
  g_return_val_if_fail(w != NULL && rec != NULL && rec->kind == w->kind, FALSE);
  g_string_truncate(w->buf, 0);
  if (!format(w->buf, rec, w->offset_min, w->wrote_header, error)) return FALSE;
  return flush_buf(w, error);
}

#define WRITE_KIND(fn, type, KIND, member)                                                                   \
  gboolean fn(EmcWriter *w, const type *x, GError **error) {                                                 \
    g_return_val_if_fail(w != NULL && x != NULL && w->kind == KIND, FALSE);                                  \
    EmcRecord rec = {.kind = KIND};                                                                          \
    rec.u.member = *x;                                                                                       \
    return emc_writer_write(w, &rec, error);                                                                 \
  }

WRITE_KIND(emc_writer_write_block, EmcBlock, EMC_KIND_BLOCK, block)
WRITE_KIND(emc_writer_write_announcement, EmcAnnouncement, EMC_KIND_ANNOUNCEMENT, announcement)
WRITE_KIND(emc_writer_write_tx, EmcTx, EMC_KIND_TX, tx)
WRITE_KIND(emc_writer_write_head, EmcHead, EMC_KIND_HEAD, head)
WRITE_KIND(emc_writer_write_tx_gas_used, EmcTxGasUsed, EMC_KIND_TX_GAS_USED, gas)
WRITE_KIND(emc_writer_write_invalid_msg, EmcInvalidMsg, EMC_KIND_INVALID_MSG, invalid)
WRITE_KIND(emc_writer_write_peer, EmcPeer, EMC_KIND_PEER, peer)

guint64 emc_writer_lines(const EmcWriter *w) {
  g_return_val_if_fail(w != NULL, 0);
  return w->lines;
}

void emc_writer_free(EmcWriter *w) {
  if (!w) return;
  g_string_free(w->buf, TRUE);
  g_free(w);
}
