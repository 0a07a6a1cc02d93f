/* zfile.h: a streaming line reader over plain, gzip, xz or lzma files, told apart by their magic bytes.
 *
 * Measured logs are large (the study rotated them at 500 MB and compressed them with lzma), so a TrZFile
 * never holds a whole file: it keeps one input chunk, one output chunk (64 KiB each), the decompressor's
 * own state (liblzma's dictionary, bounded by TR_ZFILE_MEMLIMIT_BYTES) and one line, which is capped at
 * a maximum length (TR_ZFILE_DEFAULT_MAX_LINE_BYTES unless changed). Memory therefore stays constant
 * however long the file is.
 *
 * Format detection looks only at the content, never at the name: gzip (1f 8b), xz (fd 37 7a 58 5a 00) and
 * the legacy .lzma ("LZMA_Alone") header, whose first 13 bytes are checked the way liblzma checks them
 * (properties byte < 225, dictionary size 2^n or 2^n + 2^(n-1), uncompressed size unknown or < 256 GiB).
 * Anything else is read as plain bytes. Concatenated gzip members and concatenated xz streams are read as
 * one stream, as `zcat` and `xzcat` do.
 */
#pragma once

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

#define TR_ZFILE_ERROR (tr_zfile_error_quark())
GQuark tr_zfile_error_quark(void);

typedef enum {
  TR_ZFILE_ERROR_IO,      /* the file could not be opened or read (the message carries strerror) */
  TR_ZFILE_ERROR_CORRUPT, /* compressed data is corrupt, truncated, or needs more than the memory limit */
} TrZFileError;

typedef enum {
  TR_ZFILE_PLAIN = 0,
  TR_ZFILE_GZIP,
  TR_ZFILE_XZ,
  TR_ZFILE_LZMA,
} TrZFileFormat;

/* Default cap on one line; longer physical lines come back with `too_long` set (see TrZLine). */
#define TR_ZFILE_DEFAULT_MAX_LINE_BYTES ((size_t)4 << 20)
/* liblzma refuses streams that need more memory than this (xz -9 needs 65 MiB). */
#define TR_ZFILE_MEMLIMIT_BYTES ((guint64)256 << 20)

typedef struct TrZFile TrZFile;

/* One line as returned by tr_zfile_read_line(). */
typedef struct {
  char *text;          /* the line without its '\n' (a '\r' before it is kept), NUL-terminated. Owned by the
                        * file and valid until the next read or free; the caller may change bytes in place
                        * (up to `len`), e.g. to split fields */
  size_t len;          /* bytes in `text` */
  gboolean terminated; /* FALSE for a last line that ended without '\n' */
  gboolean too_long;   /* the physical line was longer than the maximum: `text` holds its first max bytes and
                        * the rest of it was skipped */
} TrZLine;

/* Opens `path` ("-" reads standard input, which is not closed by tr_zfile_free) and detects its format
 * from the first bytes. Returns NULL with `error` set (TR_ZFILE_ERROR_IO) if it cannot be opened or read,
 * e.g. when it is a directory. Free with tr_zfile_free(). */
TrZFile *tr_zfile_open(const char *path, GError **error);

/* Reads from the `len` bytes at `data`, which are borrowed and must outlive the TrZFile; `name` (copied)
 * is what tr_zfile_name() reports. Never fails. Free with tr_zfile_free(). */
TrZFile *tr_zfile_new_from_bytes(const void *data, size_t len, const char *name);

/* Changes the line cap (>= 1) for the lines read from now on. */
void tr_zfile_set_max_line(TrZFile *f, size_t max_bytes);

/* Reads the next line into `line`. Returns TRUE with a line; FALSE at the end of the data (error left
 * NULL) or on an error (error set, TR_ZFILE_ERROR_*; the lines before it were all returned). After FALSE,
 * further calls return FALSE again. A file ending in "\n" has no empty last line. */
gboolean tr_zfile_read_line(TrZFile *f, TrZLine *line, GError **error);

TrZFileFormat tr_zfile_format(const TrZFile *f);
/* "plain", "gzip", "xz" or "lzma". */
const char *tr_zfile_format_name(TrZFileFormat format);
/* The path or name given when opening. */
const char *tr_zfile_name(const TrZFile *f);

/* Closes the file (not standard input) and frees everything; accepts NULL. */
void tr_zfile_free(TrZFile *f);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(TrZFile, tr_zfile_free)

G_END_DECLS
