/* emc_read.c: the streaming EMC reader: opening the parts, lines from zfile, bad-line bookkeeping, the
 * records in turn, and what the reader saw. A line's fields and the file's layout are emc_read_layout.c's;
 * the values and records, emc_read_record.c's. */
#include "emc-read-private.h"

#include <string.h>

/* What happened to one line. */
typedef enum { LINE_RECORD, LINE_SKIPPED, LINE_FATAL } LineResult;

/* ---- Opening ------------------------------------------------------------------------------------------ */

static EmcReader *reader_new(EmcKind kind, EmcReaderFlags flags) {
  EmcReader *r = g_new0(EmcReader, 1);
  r->kind = kind;
  r->flags = flags;
  r->max_line = EMC_MAX_LINE_BYTES;
  r->vnames = g_ptr_array_new_with_free_func(g_free);
  r->vts = g_array_new(FALSE, FALSE, sizeof(int));
  r->vdiff = g_array_new(FALSE, FALSE, sizeof(int));
  r->seen = g_array_new(FALSE, FALSE, sizeof(int64_t));
  r->diff = g_array_new(FALSE, FALSE, sizeof(double));
  for (int i = 0; i < 3; i++)
    r->lists[i] = g_array_new(FALSE, FALSE, sizeof(EmcHash));
  r->why = g_string_new(NULL);
  return r;
}

static void reset_layout(EmcReader *r) {
  r->line_no = 0;
  r->layout_known = FALSE;
  r->has_header = FALSE;
  r->n_header_fields = 0;
  for (int i = 0; i < EMC_MAX_COLS; i++)
    r->map[i] = -1;
  g_ptr_array_set_size(r->vnames, 0);
  g_array_set_size(r->vts, 0);
  g_array_set_size(r->vdiff, 0);
}

static void set_zfile_error(GError **error, GError *zerr) {
  int code = zerr->code == TR_ZFILE_ERROR_CORRUPT ? EMC_ERROR_COMPRESSION : EMC_ERROR_IO;
  g_set_error_literal(error, EMC_ERROR, code, zerr->message);
  g_error_free(zerr);
}

/* Opens part r->part. FALSE with `error` set if it cannot be opened. */
static gboolean open_part(EmcReader *r, GError **error) {
  reset_layout(r);
  if (r->paths) {
    GError *zerr = NULL;
    r->zf = tr_zfile_open(r->paths[r->part], &zerr);
    if (!r->zf) {
      set_zfile_error(error, zerr);
      return FALSE;
    }
    g_free(r->cur_name);
    r->cur_name = g_strdup(r->paths[r->part]);
  } else {
    r->zf = tr_zfile_new_from_bytes(r->mem, r->mem_len, r->cur_name);
  }
  tr_zfile_set_max_line(r->zf, r->max_line);
  r->cur_format = tr_zfile_format(r->zf);
  return TRUE;
}

EmcReader *emc_reader_open_parts(const char *const *paths, EmcKind kind, EmcReaderFlags flags,
                                 GError **error) {
  g_return_val_if_fail(paths != NULL && paths[0] != NULL, NULL);
  g_return_val_if_fail((unsigned)kind < EMC_N_KINDS, NULL);
  g_autoptr(EmcReader) r = reader_new(kind, flags);
  r->paths = g_strdupv((char **)paths);
  r->n_parts = g_strv_length(r->paths);
  if (!open_part(r, error)) return NULL;
  return g_steal_pointer(&r);
}

EmcReader *emc_reader_open(const char *path, EmcKind kind, EmcReaderFlags flags, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  const char *paths[2] = {path, NULL};
  return emc_reader_open_parts(paths, kind, flags, error);
}

EmcReader *emc_reader_new_from_bytes(const void *data, size_t len, const char *name, EmcKind kind,
                                     EmcReaderFlags flags) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  g_return_val_if_fail((unsigned)kind < EMC_N_KINDS, NULL);
  EmcReader *r = reader_new(kind, flags);
  r->mem = data;
  r->mem_len = len;
  r->n_parts = 1;
  r->cur_name = g_strdup(name ? name : "<memory>");
  open_part(r, NULL);
  return r;
}

void emc_reader_set_max_line_bytes(EmcReader *r, size_t max_bytes) {
  g_return_if_fail(r != NULL && max_bytes >= 64);
  r->max_line = max_bytes;
  if (r->zf) tr_zfile_set_max_line(r->zf, max_bytes);
}

void emc_reader_free(EmcReader *r) {
  if (!r) return;
  tr_zfile_free(r->zf);
  g_strfreev(r->paths);
  g_free(r->cur_name);
  g_ptr_array_unref(r->vnames);
  if (r->first_vnames) g_ptr_array_unref(r->first_vnames);
  g_array_unref(r->vts);
  g_array_unref(r->vdiff);
  g_array_unref(r->seen);
  g_array_unref(r->diff);
  for (int i = 0; i < 3; i++)
    g_array_unref(r->lists[i]);
  g_string_free(r->why, TRUE);
  for (guint i = 0; i < r->n_bad_kept; i++)
    g_free(r->bad_msgs[i]);
  g_free(r);
}

/* ---- Lines -------------------------------------------------------------------------------------------- */

static LineResult bad_line(EmcReader *r, GError **error) {
  g_autofree char *msg =
      g_strdup_printf("%s:%" G_GUINT64_FORMAT ": %s%s", r->cur_name, r->line_no,
                      r->truncated ? "truncated last line (no newline): " : "", r->why->str);
  if (r->flags & EMC_READER_STRICT) {
    g_set_error_literal(error, EMC_ERROR, EMC_ERROR_BAD_LINE, msg);
    r->done = TRUE;
    return LINE_FATAL;
  }
  r->n_bad++;
  if (r->n_bad_kept < EMC_BAD_LINES_KEPT) r->bad_msgs[r->n_bad_kept++] = g_steal_pointer(&msg);
  return LINE_SKIPPED;
}

static LineResult process_line(EmcReader *r, TrZLine *line, EmcRecord *rec, GError **error) {
  char *text = line->text;
  size_t len = line->len;
  r->truncated = !line->terminated;
  if (line->too_long) {
    r->truncated = FALSE;
    g_string_printf(r->why, "line longer than %zu bytes", r->max_line);
    return bad_line(r, error);
  }
  if (r->line_no == 1 && len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) { /* UTF-8 byte-order mark */
    text += 3;
    len -= 3;
  }
  if (len > 0 && text[len - 1] == '\r') text[--len] = '\0';
  if (len == 0) return LINE_SKIPPED;
  if (memchr(text, '\0', len)) {
    g_string_assign(r->why, "NUL byte in the line");
    return bad_line(r, error);
  }
  if (!emc_read_split(r, text, len)) return bad_line(r, error);
  if (!r->layout_known) {
    r->layout_known = TRUE;
    if (emc_read_is_header(r)) return emc_read_setup_header(r, error) ? LINE_SKIPPED : LINE_FATAL;
    if (!emc_read_setup_positional(r, error)) return LINE_FATAL;
  }
  if (!emc_read_parse_fields(r, rec)) return bad_line(r, error);
  r->n_records++;
  return LINE_RECORD;
}

gboolean emc_reader_next(EmcReader *r, EmcRecord *rec, GError **error) {
  g_return_val_if_fail(r != NULL && rec != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);
  while (!r->done) {
    if (!r->zf) {
      if (r->part >= r->n_parts) break;
      if (!open_part(r, error)) {
        r->done = TRUE;
        return FALSE;
      }
    }
    TrZLine line;
    GError *zerr = NULL;
    if (!tr_zfile_read_line(r->zf, &line, &zerr)) {
      if (zerr) {
        set_zfile_error(error, zerr);
        r->done = TRUE;
        return FALSE;
      }
      tr_zfile_free(r->zf);
      r->zf = NULL;
      r->part++;
      continue;
    }
    r->line_no++;
    switch (process_line(r, &line, rec, error)) {
    case LINE_RECORD:
      return TRUE;
    case LINE_SKIPPED:
      continue;
    case LINE_FATAL:
      return FALSE;
    }
  }
  r->done = TRUE;
  return FALSE;
}

#define NEXT_KIND(fn, type, KIND, member)                                                                    \
  gboolean fn(EmcReader *r, type *out, GError **error) {                                                     \
    g_return_val_if_fail(r != NULL && out != NULL && r->kind == KIND, FALSE);                                \
    EmcRecord rec;                                                                                           \
    if (!emc_reader_next(r, &rec, error)) return FALSE;                                                      \
    *out = rec.u.member;                                                                                     \
    return TRUE;                                                                                             \
  }

NEXT_KIND(emc_reader_next_block, EmcBlock, EMC_KIND_BLOCK, block)
NEXT_KIND(emc_reader_next_announcement, EmcAnnouncement, EMC_KIND_ANNOUNCEMENT, announcement)
NEXT_KIND(emc_reader_next_tx, EmcTx, EMC_KIND_TX, tx)
NEXT_KIND(emc_reader_next_head, EmcHead, EMC_KIND_HEAD, head)
NEXT_KIND(emc_reader_next_tx_gas_used, EmcTxGasUsed, EMC_KIND_TX_GAS_USED, gas)
NEXT_KIND(emc_reader_next_invalid_msg, EmcInvalidMsg, EMC_KIND_INVALID_MSG, invalid)
NEXT_KIND(emc_reader_next_peer, EmcPeer, EMC_KIND_PEER, peer)
NEXT_KIND(emc_reader_next_propagation, EmcPropagation, EMC_KIND_PROPAGATION, propagation)

/* ---- Accessors ---------------------------------------------------------------------------------------- */

EmcKind emc_reader_kind(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, EMC_KIND_BLOCK);
  return r->kind;
}

guint64 emc_reader_bad_lines(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->n_bad;
}

const char *const *emc_reader_bad_line_messages(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return (const char *const *)r->bad_msgs;
}

guint64 emc_reader_records(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->n_records;
}

const char *emc_reader_file(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return r->cur_name;
}

guint64 emc_reader_line(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->line_no;
}

const char *emc_reader_compression(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, NULL);
  return tr_zfile_format_name(r->cur_format);
}

gboolean emc_reader_has_header(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, FALSE);
  return r->has_header;
}

guint emc_reader_n_vantages(const EmcReader *r) {
  g_return_val_if_fail(r != NULL, 0);
  return r->vnames->len;
}

const char *emc_reader_vantage_name(const EmcReader *r, guint i) {
  g_return_val_if_fail(r != NULL && i < r->vnames->len, NULL);
  return g_ptr_array_index(r->vnames, i);
}

