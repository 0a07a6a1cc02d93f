/* emc-read-private.h: what the files of the EMC reader share (emc_read.c, emc_read_layout.c,
 * emc_read_record.c): the reader's state and the steps of reading one line. Not for other modules. */
#pragma once

#include "emc-private.h"
#include "zfile.h"

/* Fields stored per line; a header may have at most this many columns, a data line more only to be
 * counted and rejected. Bounds the per-line memory independently of the line. */
#define MAX_FIELDS 256

typedef struct {
  char *p; /* the field's text as written (inside the quotes when quoted), not NUL-terminated */
  size_t len;
  gboolean quoted;
} Field;


struct EmcReader {
  EmcKind kind;
  EmcReaderFlags flags;
  char **paths; /* the parts, or NULL for a memory reader */
  guint n_parts, part;
  const void *mem;
  size_t mem_len;
  char *cur_name;
  TrZFile *zf; /* the open part, NULL between parts */
  TrZFileFormat cur_format;
  size_t max_line;
  guint64 line_no;
  gboolean done;

  /* Layout of the current file. */
  gboolean layout_known; /* a non-empty line of this file was seen */
  gboolean has_header;
  guint n_header_fields;
  int map[EMC_MAX_COLS];   /* column -> field index, -1 when absent */
  GPtrArray *vnames;       /* EMC_KIND_PROPAGATION: vantage names of this file */
  GPtrArray *first_vnames; /* ... of the first file, which all parts must repeat */
  GArray *vts, *vdiff;     /* field index of each vantage's TimeStamp / Diff column (-1 when absent) */
  GArray *seen, *diff;     /* record arrays, one entry per vantage */

  /* The current line. */
  Field fields[MAX_FIELDS];
  guint n_fields;       /* stored */
  guint n_fields_total; /* counted */
  gboolean truncated;   /* the line has no '\n' (last line) */
  GArray *lists[3];     /* EmcHash scratch: txs / uncles / in_uncle_blocks */
  GString *why;         /* reason the current line is bad */

  guint64 n_records, n_bad;
  char *bad_msgs[EMC_BAD_LINES_KEPT + 1];
  guint n_bad_kept;
};

/* Splits text[0..len) at commas outside quotes into r->fields. FALSE with r->why set on a quoting error. */
gboolean emc_read_split(EmcReader *r, char *text, size_t len);

/* Decodes a field's escapes in place and NUL-terminates it; returns the decoded text (valid until the next
 * line). */
const char *emc_read_field_text(Field *f);

/* Whether the field is unquoted and its text is `s`; whether it is unquoted and empty or "nil". */
gboolean emc_read_field_is(const Field *f, const char *s);
gboolean emc_read_field_is_none(const Field *f);

/* The columns of the reader's kind. */
const EmcKindColumns *emc_read_kcols(const EmcReader *r);

/* The layout of a file from its first non-empty line (split into r->fields): a header, or the raw positions.
 * FALSE with `error` when the header or the positions cannot be the kind's. */
gboolean emc_read_is_header(EmcReader *r);
gboolean emc_read_setup_header(EmcReader *r, GError **error);
gboolean emc_read_setup_positional(EmcReader *r, GError **error);

/* Headerless propagation: the plain (12 fields), v2 (18) and v3 (20) layouts, from the line's field count. */
gboolean emc_read_set_propagation_positions(EmcReader *r);

/* The record of the current line (split, layout known) into `rec`. FALSE with r->why set on a bad line. */
gboolean emc_read_parse_fields(EmcReader *r, EmcRecord *rec);
