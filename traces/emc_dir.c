/* emc_dir.c: finds one vantage point's raw EMC logs in a directory by name, rotated parts in order. */
#include <errno.h>
#include "emc-private.h"

#include <stdlib.h>
#include <string.h>

struct EmcDir {
  char *dir;
  char **files[EMC_N_KINDS]; /* NULL-terminated full paths per kind */
};

static const char *const block_bases[] = {"NewBlockMsg.log", "blocks.log", NULL};
static const char *const announcement_bases[] = {"NewBlockHashesMsg.log", "blocksAnnouncements.log", NULL};
static const char *const tx_bases[] = {"TxMsg.log", "txs.log", NULL};
static const char *const head_bases[] = {"NewBlockHead.log", "heads.log", NULL};
static const char *const gas_bases[] = {"txgasused.log", NULL};
static const char *const invalid_bases[] = {"InvalidMessages.csv", "InvalidMessages.log", "invalidmsgs.log",
                                            NULL};
static const char *const peer_bases[] = {"peers.log", NULL};
static const char *const no_bases[] = {NULL};

static const char *const *const kind_bases[EMC_N_KINDS] = {
    [EMC_KIND_BLOCK] = block_bases,     [EMC_KIND_ANNOUNCEMENT] = announcement_bases,
    [EMC_KIND_TX] = tx_bases,           [EMC_KIND_HEAD] = head_bases,
    [EMC_KIND_TX_GAS_USED] = gas_bases, [EMC_KIND_INVALID_MSG] = invalid_bases,
    [EMC_KIND_PEER] = peer_bases,       [EMC_KIND_PROPAGATION] = no_bases,
};

typedef struct {
  char *name;       /* directory entry */
  const char *base; /* the base name it matched */
  gint64 part;      /* rotation number, G_MAXINT64 for the current (unnumbered) file */
} Entry;

static void entry_clear(gpointer p) {
  g_free(((Entry *)p)->name);
}

/* Matches `name` against the base names; fills kind, base and part. */
static gboolean match(const char *name, EmcKind *kind, const char **base, gint64 *part) {
  static const char *const zsuffixes[] = {".gz", ".xz", ".lzma"};
  g_autofree char *stem = g_strdup(name);
  for (size_t i = 0; i < G_N_ELEMENTS(zsuffixes); i++)
    if (g_str_has_suffix(stem, zsuffixes[i])) {
      stem[strlen(stem) - strlen(zsuffixes[i])] = '\0';
      break;
    }
  for (unsigned k = 0; k < EMC_N_KINDS; k++)
    for (const char *const *b = kind_bases[k]; *b; b++) {
      size_t n = strlen(*b);
      if (strncmp(stem, *b, n) != 0) continue;
      const char *rest = stem + n;
      if (*rest == '\0') {
        *part = G_MAXINT64;
      } else {
        if (rest[0] != '.' || rest[1] == '\0' || strlen(rest + 1) > 9) continue;
        gboolean all_digits = TRUE;
        for (const char *c = rest + 1; *c; c++)
          all_digits &= g_ascii_isdigit(*c);
        if (!all_digits) continue;
        *part = g_ascii_strtoll(rest + 1, NULL, 10);
      }
      *kind = (EmcKind)k;
      *base = *b;
      return TRUE;
    }
  return FALSE;
}

static gint by_part(gconstpointer a, gconstpointer b) {
  gint64 x = ((const Entry *)a)->part, y = ((const Entry *)b)->part;
  if (x != y) return x < y ? -1 : 1;
  return strcmp(((const Entry *)a)->name, ((const Entry *)b)->name);
}

EmcDir *emc_dir_open(const char *dir, GError **error) {
  g_return_val_if_fail(dir != NULL, NULL);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  if (!d) {
    /* errno is g_dir_open()'s (GLib's own message is localised and quotes with typographic marks). */
    int err = errno;
    g_set_error(error, EMC_ERROR, EMC_ERROR_IO, "%s: cannot open directory: %s", dir, g_strerror(err));
    return NULL;
  }
  GArray *found[EMC_N_KINDS];
  for (unsigned k = 0; k < EMC_N_KINDS; k++) {
    found[k] = g_array_new(FALSE, FALSE, sizeof(Entry));
    g_array_set_clear_func(found[k], entry_clear);
  }
  const char *name;
  while ((name = g_dir_read_name(d))) {
    Entry e;
    EmcKind kind;
    if (!match(name, &kind, &e.base, &e.part)) continue;
    e.name = g_strdup(name);
    g_array_append_val(found[kind], e);
  }
  EmcDir *out = g_new0(EmcDir, 1);
  out->dir = g_strdup(dir);
  gboolean ok = TRUE;
  for (unsigned k = 0; k < EMC_N_KINDS && ok; k++) {
    GArray *a = found[k];
    g_array_sort(a, by_part);
    for (guint i = 1; i < a->len && ok; i++) {
      const Entry *e0 = &g_array_index(a, Entry, 0), *p = &g_array_index(a, Entry, i - 1),
                  *e = &g_array_index(a, Entry, i);
      if (strcmp(e->base, e0->base) != 0) {
        g_set_error(error, EMC_ERROR, EMC_ERROR_AMBIGUOUS, "%s: both %s and %s hold %s", dir, e0->name,
                    e->name, emc_kind_name((EmcKind)k));
        ok = FALSE;
      } else if (e->part == p->part) {
        g_set_error(error, EMC_ERROR, EMC_ERROR_AMBIGUOUS, "%s: %s and %s are the same part of the %s log",
                    dir, p->name, e->name, emc_kind_name((EmcKind)k));
        ok = FALSE;
      }
    }
    out->files[k] = g_new0(char *, a->len + 1);
    for (guint i = 0; i < a->len; i++)
      out->files[k][i] = g_build_filename(dir, g_array_index(a, Entry, i).name, NULL);
  }
  for (unsigned k = 0; k < EMC_N_KINDS; k++)
    g_array_unref(found[k]);
  if (!ok) {
    emc_dir_free(out);
    return NULL;
  }
  return out;
}

const char *const *emc_dir_files(const EmcDir *d, EmcKind kind) {
  g_return_val_if_fail(d != NULL && (unsigned)kind < EMC_N_KINDS, NULL);
  return (const char *const *)d->files[kind];
}

EmcReader *emc_dir_open_reader(const EmcDir *d, EmcKind kind, EmcReaderFlags flags, GError **error) {
  const char *const *files = emc_dir_files(d, kind);
  g_return_val_if_fail(files != NULL, NULL);
  if (!files[0]) {
    g_set_error(error, EMC_ERROR, EMC_ERROR_NOT_FOUND, "%s: no %s log (looked for %s)", d->dir,
                emc_kind_name(kind),
                kind_bases[kind][0] ? kind_bases[kind][0] : "nothing: not a raw log kind");
    return NULL;
  }
  return emc_reader_open_parts(files, kind, flags, error);
}

void emc_dir_free(EmcDir *d) {
  if (!d) return;
  for (unsigned k = 0; k < EMC_N_KINDS; k++)
    g_strfreev(d->files[k]);
  g_free(d->dir);
  g_free(d);
}
