/* zfile.c: streaming, constant-memory line reader over plain, gzip (zlib), xz and lzma (liblzma) data. */
#include "zfile.h"
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

G_DEFINE_QUARK(tr - zfile - error - quark, tr_zfile_error)

#define CHUNK_BYTES ((size_t)64 << 10)
#define SNIFF_BYTES 13 /* the LZMA_Alone header is the longest one we test */

struct TrZFile {
  char *name;
  int fd;            /* -1 when reading from memory */
  gboolean close_fd; /* FALSE for standard input */
  TrZFileFormat format;

  /* Raw (possibly compressed) input. For a memory source `in` points at the caller's bytes. */
  const guint8 *in;
  guint8 *in_buf;
  size_t in_len, in_pos;
  gboolean in_eof; /* nothing more will come from the fd */

  /* Decompressed bytes not yet consumed. For plain data it aliases the input. */
  const guint8 *out;
  guint8 *out_buf;
  size_t out_len, out_pos;
  gboolean out_eof; /* the decoder has finished (or hit an error) */

  z_stream z;
  gboolean z_ready;
  gboolean member_done; /* gzip: the current member ended */
  lzma_stream lz;
  gboolean lz_ready;
  lzma_ret lz_pending; /* an error met after some output, reported on the next fill */

  char *line;
  size_t line_cap, max_line;
  gboolean failed; /* an error was reported; later reads return FALSE */
};

static void set_io_error(GError **error, const char *name, int err) {
  g_set_error(error, TR_ZFILE_ERROR, TR_ZFILE_ERROR_IO, "%s: %s", name, g_strerror(err));
}

/* Reads more raw input when the input chunk is used up. Returns FALSE with `error` set on a read error;
 * at the end of the input it returns TRUE with `in_eof` set and nothing new. */
static gboolean fill_in(TrZFile *f, GError **error) {
  if (f->in_pos < f->in_len || f->in_eof) return TRUE;
  for (;;) {
    ssize_t n = read(f->fd, f->in_buf, CHUNK_BYTES);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      set_io_error(error, f->name, errno);
      return FALSE;
    }
    f->in = f->in_buf;
    f->in_len = (size_t)n;
    f->in_pos = 0;
    if (n == 0) f->in_eof = TRUE;
    return TRUE;
  }
}

/* Reads until `want` bytes are buffered or the input ends (for format detection only: the first chunk). */
static gboolean fill_sniff(TrZFile *f, size_t want, GError **error) {
  while (f->in_len < want && !f->in_eof) {
    ssize_t n = read(f->fd, f->in_buf + f->in_len, CHUNK_BYTES - f->in_len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      set_io_error(error, f->name, errno);
      return FALSE;
    }
    if (n == 0) f->in_eof = TRUE;
    f->in_len += (size_t)n;
  }
  return TRUE;
}

static guint32 le32(const guint8 *p) {
  return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

/* The checks liblzma's picky LZMA_Alone decoder makes, so that plain text is never taken for lzma. */
static gboolean looks_like_lzma_alone(const guint8 *p, size_t n) {
  if (n < SNIFF_BYTES || p[0] > (4 * 5 + 4) * 9 + 8) return FALSE;
  guint32 dict = le32(p + 1);
  if (dict == 0) return FALSE;
  /* 2^n or 2^n + 2^(n-1): round up to that form and compare. */
  guint32 d = dict - 1;
  d |= d >> 2;
  d |= d >> 3;
  d |= d >> 4;
  d |= d >> 8;
  d |= d >> 16;
  d++;
  if (d != dict) return FALSE;
  guint64 size = 0;
  for (int i = 0; i < 8; i++)
    size |= (guint64)p[5 + i] << (8 * i);
  return size == G_MAXUINT64 || size < ((guint64)1 << 38);
}

static void detect(TrZFile *f) {
  const guint8 *p = f->in + f->in_pos;
  size_t n = f->in_len - f->in_pos;
  static const guint8 xz_magic[6] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
  if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
    f->format = TR_ZFILE_GZIP;
  else if (n >= 6 && memcmp(p, xz_magic, 6) == 0)
    f->format = TR_ZFILE_XZ;
  else if (looks_like_lzma_alone(p, n))
    f->format = TR_ZFILE_LZMA;
  else
    f->format = TR_ZFILE_PLAIN;

  if (f->format == TR_ZFILE_GZIP) {
    memset(&f->z, 0, sizeof f->z);
    if (inflateInit2(&f->z, 15 + 16) != Z_OK) g_error("zlib: inflateInit2 failed (out of memory)");
    f->z_ready = TRUE;
  } else if (f->format == TR_ZFILE_XZ || f->format == TR_ZFILE_LZMA) {
    lzma_stream init = LZMA_STREAM_INIT;
    f->lz = init;
    lzma_ret r = f->format == TR_ZFILE_XZ
                     ? lzma_stream_decoder(&f->lz, TR_ZFILE_MEMLIMIT_BYTES, LZMA_CONCATENATED)
                     : lzma_alone_decoder(&f->lz, TR_ZFILE_MEMLIMIT_BYTES);
    if (r != LZMA_OK) g_error("liblzma: decoder init failed (%d)", (int)r);
    f->lz_ready = TRUE;
    f->lz_pending = LZMA_OK;
    f->lz.next_in = f->in + f->in_pos;
    f->lz.avail_in = f->in_len - f->in_pos;
    f->in_pos = f->in_len;
  }
  if (f->format != TR_ZFILE_PLAIN) f->out_buf = g_malloc(CHUNK_BYTES);
}

static TrZFile *zfile_new(const char *name) {
  TrZFile *f = g_new0(TrZFile, 1);
  f->name = g_strdup(name);
  f->fd = -1;
  f->max_line = TR_ZFILE_DEFAULT_MAX_LINE_BYTES;
  return f;
}

TrZFile *tr_zfile_open(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  g_autoptr(TrZFile) f = zfile_new(path);
  if (strcmp(path, "-") == 0) {
    f->fd = STDIN_FILENO;
  } else {
    if (sim_input_unbounded(path)) {
      g_set_error(error, TR_ZFILE_ERROR, TR_ZFILE_ERROR_IO, "%s: not a regular file", path);
      return NULL;
    }
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
      set_io_error(error, path, errno);
      return NULL;
    }
    f->close_fd = TRUE;
  }
  f->in_buf = g_malloc(CHUNK_BYTES);
  f->in = f->in_buf;
  if (!fill_sniff(f, SNIFF_BYTES, error)) return NULL;
  detect(f);
  return g_steal_pointer(&f);
}

TrZFile *tr_zfile_new_from_bytes(const void *data, size_t len, const char *name) {
  g_return_val_if_fail(data != NULL || len == 0, NULL);
  TrZFile *f = zfile_new(name ? name : "<memory>");
  static const guint8 empty[1] = {0};
  f->in = len ? data : empty;
  f->in_len = len;
  f->in_eof = TRUE;
  detect(f);
  return f;
}

void tr_zfile_set_max_line(TrZFile *f, size_t max_bytes) {
  g_return_if_fail(f != NULL && max_bytes >= 1);
  f->max_line = max_bytes;
}

static gboolean corrupt(TrZFile *f, GError **error, const char *what) {
  g_set_error(error, TR_ZFILE_ERROR, TR_ZFILE_ERROR_CORRUPT, "%s: %s: %s", f->name,
              tr_zfile_format_name(f->format), what);
  f->out_eof = TRUE;
  return FALSE;
}

/* gzip: inflate until some output exists; a finished member followed by more input starts the next one
 * (gzip -c a >> f; zcat reads both). */
static gboolean fill_gzip(TrZFile *f, GError **error) {
  for (;;) {
    if (!fill_in(f, error)) return FALSE;
    gboolean no_input = f->in_pos == f->in_len && f->in_eof;
    if (f->member_done) {
      if (no_input) {
        f->out_eof = TRUE;
        return TRUE;
      }
      if (inflateReset(&f->z) != Z_OK) return corrupt(f, error, "cannot restart after a member");
      f->member_done = FALSE;
    }
    f->z.next_in = (Bytef *)(f->in + f->in_pos);
    f->z.avail_in = (uInt)(f->in_len - f->in_pos);
    f->z.next_out = f->out_buf;
    f->z.avail_out = (uInt)CHUNK_BYTES;
    int r = inflate(&f->z, Z_NO_FLUSH);
    f->in_pos = f->in_len - f->z.avail_in;
    size_t produced = CHUNK_BYTES - f->z.avail_out;
    if (r == Z_STREAM_END) {
      f->member_done = TRUE;
    } else if (r == Z_OK || r == Z_BUF_ERROR) {
      if (produced == 0 && f->in_pos == f->in_len && f->in_eof)
        return corrupt(f, error, "unexpected end of compressed data (truncated file?)");
    } else if (r == Z_MEM_ERROR) {
      g_error("zlib: out of memory");
    } else {
      return corrupt(f, error, f->z.msg ? f->z.msg : "compressed data is corrupt");
    }
    if (produced > 0) {
      f->out = f->out_buf;
      f->out_len = produced;
      f->out_pos = 0;
      return TRUE;
    }
  }
}

static const char *lzma_message(lzma_ret r) {
  switch (r) {
  case LZMA_MEMLIMIT_ERROR:
    return "the stream needs more memory than the limit (256 MiB)";
  case LZMA_FORMAT_ERROR:
    return "not in the expected format";
  case LZMA_OPTIONS_ERROR:
    return "unsupported compression options";
  case LZMA_DATA_ERROR:
    return "compressed data is corrupt";
  case LZMA_BUF_ERROR:
    return "unexpected end of compressed data (truncated file?)";
  default:
    return "decoder error";
  }
}

/* xz / lzma: the decoder owns the unread input (lz.next_in/avail_in); in_pos is kept at in_len. */
static gboolean fill_lzma(TrZFile *f, GError **error) {
  if (f->lz_pending != LZMA_OK) return corrupt(f, error, lzma_message(f->lz_pending));
  for (;;) {
    if (f->lz.avail_in == 0) {
      if (!fill_in(f, error)) return FALSE;
      f->lz.next_in = f->in + f->in_pos;
      f->lz.avail_in = f->in_len - f->in_pos;
      f->in_pos = f->in_len;
    }
    lzma_action action = (f->lz.avail_in == 0 && f->in_eof) ? LZMA_FINISH : LZMA_RUN;
    f->lz.next_out = f->out_buf;
    f->lz.avail_out = CHUNK_BYTES;
    lzma_ret r = lzma_code(&f->lz, action);
    size_t produced = CHUNK_BYTES - f->lz.avail_out;
    if (r == LZMA_MEM_ERROR) g_error("liblzma: out of memory");
    if (r == LZMA_STREAM_END) {
      f->out_eof = TRUE;
    } else if (r != LZMA_OK) {
      if (produced == 0) return corrupt(f, error, lzma_message(r));
      f->lz_pending = r; /* deliver what came out first; report the error on the next call */
    }
    if (produced > 0) {
      f->out = f->out_buf;
      f->out_len = produced;
      f->out_pos = 0;
      return TRUE;
    }
    if (f->out_eof) return TRUE;
  }
}

/* Makes decompressed bytes available in out[out_pos..out_len). Returns FALSE with `error` set on an error;
 * TRUE otherwise, with out_pos == out_len meaning the end. */
static gboolean fill_out(TrZFile *f, GError **error) {
  if (f->out_pos < f->out_len) return TRUE;
  f->out_pos = f->out_len = 0;
  if (f->out_eof) return TRUE;
  switch (f->format) {
  case TR_ZFILE_PLAIN:
    if (f->in_pos == f->in_len && !f->in_eof && !fill_in(f, error)) return FALSE;
    if (f->in_pos == f->in_len && f->in_eof) {
      f->out_eof = TRUE;
      return TRUE;
    }
    f->out = f->in;
    f->out_pos = f->in_pos;
    f->out_len = f->in_len;
    f->in_pos = f->in_len;
    return TRUE;
  case TR_ZFILE_GZIP:
    return fill_gzip(f, error);
  case TR_ZFILE_XZ:
  case TR_ZFILE_LZMA:
    return fill_lzma(f, error);
  }
  g_assert_not_reached();
}

static void line_reserve(TrZFile *f, size_t need) {
  if (need <= f->line_cap) return;
  size_t cap = f->line_cap ? f->line_cap : 256;
  while (cap < need)
    cap *= 2;
  f->line = g_realloc(f->line, cap);
  f->line_cap = cap;
}

gboolean tr_zfile_read_line(TrZFile *f, TrZLine *line, GError **error) {
  g_return_val_if_fail(f != NULL && line != NULL, FALSE);
  if (f->failed) return FALSE;
  size_t len = 0;
  gboolean too_long = FALSE, any = FALSE;
  for (;;) {
    if (!fill_out(f, error)) {
      f->failed = TRUE;
      return FALSE;
    }
    if (f->out_pos == f->out_len) { /* end of data */
      if (!any) return FALSE;
      line_reserve(f, len + 1);
      f->line[len] = '\0';
      *line = (TrZLine){.text = f->line, .len = len, .terminated = FALSE, .too_long = too_long};
      return TRUE;
    }
    any = TRUE;
    const guint8 *start = f->out + f->out_pos;
    size_t avail = f->out_len - f->out_pos;
    const guint8 *nl = memchr(start, '\n', avail);
    size_t chunk = nl ? (size_t)(nl - start) : avail;
    size_t room = f->max_line - len;
    size_t take = chunk < room ? chunk : room;
    if (take < chunk) too_long = TRUE;
    line_reserve(f, len + take + 1);
    memcpy(f->line + len, start, take);
    len += take;
    f->out_pos += chunk + (nl ? 1 : 0);
    if (nl) {
      f->line[len] = '\0';
      *line = (TrZLine){.text = f->line, .len = len, .terminated = TRUE, .too_long = too_long};
      return TRUE;
    }
  }
}

TrZFileFormat tr_zfile_format(const TrZFile *f) {
  g_return_val_if_fail(f != NULL, TR_ZFILE_PLAIN);
  return f->format;
}

const char *tr_zfile_format_name(TrZFileFormat format) {
  switch (format) {
  case TR_ZFILE_PLAIN:
    return "plain";
  case TR_ZFILE_GZIP:
    return "gzip";
  case TR_ZFILE_XZ:
    return "xz";
  case TR_ZFILE_LZMA:
    return "lzma";
  }
  return "?";
}

const char *tr_zfile_name(const TrZFile *f) {
  g_return_val_if_fail(f != NULL, NULL);
  return f->name;
}

void tr_zfile_free(TrZFile *f) {
  if (!f) return;
  if (f->z_ready) inflateEnd(&f->z);
  if (f->lz_ready) lzma_end(&f->lz);
  if (f->close_fd && f->fd >= 0) close(f->fd);
  g_free(f->in_buf);
  g_free(f->out_buf);
  g_free(f->line);
  g_free(f->name);
  g_free(f);
}
