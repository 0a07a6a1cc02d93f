/* outfile.c: one output file written where the user pointed, all or nothing (outfile.h). */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(sim-output-error-quark, sim_output_error)

typedef enum { MODE_REPLACE, MODE_IN_PLACE, MODE_DESCRIPTOR } Mode;

struct SimOutFile {
  Mode mode;
  char *target; /* the file replaced or written (links resolved) */
  char *tmp;    /* MODE_REPLACE: the temp file beside it, until renamed */
  FILE *f;
  gboolean committed;
};

/* `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: this process's descriptor N, or -1. */
static int descriptor_of(const char *path) {
  if (strcmp(path, "/dev/stdout") == 0) return STDOUT_FILENO;
  if (strcmp(path, "/dev/stderr") == 0) return STDERR_FILENO;
  const char *num = g_str_has_prefix(path, "/dev/fd/")          ? path + strlen("/dev/fd/")
                    : g_str_has_prefix(path, "/proc/self/fd/") ? path + strlen("/proc/self/fd/")
                                                                : NULL;
  if (!num || !g_ascii_isdigit(*num)) return -1;
  char *end = NULL;
  guint64 n = g_ascii_strtoull(num, &end, 10);
  if (*end || n > G_MAXINT) return -1;
  return fcntl((int)n, F_GETFD) == -1 ? -1 : (int)n;
}

/* Follows symbolic links from `path` to the file they name (which may not exist yet). NULL on a loop. */
static char *resolve_links(const char *path, GError **error) {
  char *p = g_strdup(path);
  for (int hops = 0; hops < 40; hops++) {
    struct stat st;
    if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    g_autofree char *to = g_file_read_link(p, NULL);
    if (!to) return p;
    char *next;
    if (g_path_is_absolute(to)) {
      next = g_strdup(to);
    } else {
      g_autofree char *dir = g_path_get_dirname(p);
      next = g_build_filename(dir, to, NULL);
    }
    g_free(p);
    p = next;
  }
  g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED, "%s: too many levels of symbolic links", path);
  g_free(p);
  return NULL;
}

static void set_errno_error(GError **error, int code, int e, const char *what, const char *path) {
  g_set_error(error, SIM_OUTPUT_ERROR, code, "%s %s: %s", what, path, g_strerror(e));
}

SimOutFile *sim_outfile_open(const char *path, GError **error) {
  g_return_val_if_fail(path != NULL, NULL);
  if (!*path) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED, "an empty output path");
    return NULL;
  }
  g_autoptr(SimOutFile) f = g_new0(SimOutFile, 1);
  int fd = descriptor_of(path);
  if (fd >= 0) {
    fflush(NULL); /* what this process already printed comes first */
    int d = dup(fd);
    f->mode = MODE_DESCRIPTOR;
    f->target = g_strdup(path);
    if (d < 0 || !(f->f = fdopen(d, "w"))) {
      int e = errno;
      if (d >= 0) close(d);
      set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot write", path);
      return NULL;
    }
    return g_steal_pointer(&f);
  }
  f->target = resolve_links(path, error);
  if (!f->target) return NULL;
  struct stat st;
  gboolean exists = stat(f->target, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED, "%s: is a directory (a file belongs here)", path);
    return NULL;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    /* A device or a FIFO is written through, never replaced (cp does the same). */
    f->mode = MODE_IN_PLACE;
    int d = open(f->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (d < 0 || !(f->f = fdopen(d, "w"))) {
      int e = errno;
      if (d >= 0) close(d);
      set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot write", path);
      return NULL;
    }
    return g_steal_pointer(&f);
  }
  f->mode = MODE_REPLACE;
  g_autofree char *dir = g_path_get_dirname(f->target), *base = g_path_get_basename(f->target);
  if (g_mkdir_with_parents(dir, 0777) != 0) {
    set_errno_error(error, SIM_OUTPUT_ERROR_IO, errno, "cannot create output directory", dir);
    return NULL;
  }
  g_autofree char *tmpl = g_strdup_printf(".%s.tmp-XXXXXX", base);
  f->tmp = g_build_filename(dir, tmpl, NULL);
  int d = g_mkstemp_full(f->tmp, O_RDWR | O_CLOEXEC, 0644);
  if (d < 0) {
    int e = errno;
    g_clear_pointer(&f->tmp, g_free);
    set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot create", path);
    return NULL;
  }
  /* A replaced file keeps its permissions; a new one is readable by all, as before. */
  if (fchmod(d, exists ? (st.st_mode & 07777) : 0644) != 0 || !(f->f = fdopen(d, "w"))) {
    int e = errno;
    close(d);
    set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot create", path);
    return NULL;
  }
  return g_steal_pointer(&f);
}

void sim_outfile_free(SimOutFile *f) {
  if (!f) return;
  if (f->f) fclose(f->f);
  if (f->tmp && !f->committed) g_unlink(f->tmp);
  g_free(f->target);
  g_free(f->tmp);
  g_free(f);
}

FILE *sim_outfile_stream(SimOutFile *f) { return f->f; }

/* Syncs the directory that holds `path`, so that a rename in it survives a crash. */
static void sync_parent(const char *path) {
  g_autofree char *dir = g_path_get_dirname(path);
  int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d >= 0) {
    fsync(d);
    close(d);
  }
}

gboolean sim_outfile_commit(SimOutFile *f, GError **error) {
  g_return_val_if_fail(f != NULL && !f->committed, FALSE);
  if (f->f) {
    gboolean bad = fflush(f->f) != 0 || ferror(f->f);
    int e = errno;
    /* Devices and pipes cannot be synced (EINVAL, EROFS): only a file that is replaced must reach the disk. */
    if (!bad && f->mode == MODE_REPLACE && fsync(fileno(f->f)) != 0) bad = TRUE, e = errno;
    if (fclose(f->f) != 0 && !bad) bad = TRUE, e = errno;
    f->f = NULL;
    if (bad) {
      set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot write", f->target);
      return FALSE;
    }
  }
  if (f->mode == MODE_REPLACE) {
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &old);
    int rc = g_rename(f->tmp, f->target), e = errno;
    if (rc == 0) sync_parent(f->target);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
      set_errno_error(error, SIM_OUTPUT_ERROR_IO, e, "cannot rename into", f->target);
      return FALSE;
    }
  }
  f->committed = TRUE;
  return TRUE;
}

gboolean sim_output_dump_json(FILE *f, const json_t *doc) {
  return json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) == 0 &&
         fputc('\n', f) != EOF;
}

gboolean sim_output_write_file(const char *path, const char *data, gssize len, GError **error) {
  g_autoptr(SimOutFile) f = sim_outfile_open(path, error);
  if (!f) return FALSE;
  size_t n = len < 0 ? strlen(data) : (size_t)len;
  if (n > 0 && fwrite(data, 1, n, f->f) != n) {
    set_errno_error(error, SIM_OUTPUT_ERROR_IO, errno, "cannot write", path);
    return FALSE;
  }
  return sim_outfile_commit(f, error);
}

static gboolean remove_at(int at, const char *name) {
  if (unlinkat(at, name, 0) == 0 || errno == ENOENT) return TRUE;
  if (errno != EISDIR && errno != EPERM) return FALSE;
  /* O_NOFOLLOW: a link is never entered (unlinkat above removed it already). */
  int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return FALSE;
  }
  gboolean ok = TRUE;
  const struct dirent *de;
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) ok = remove_at(dirfd(d), de->d_name) && ok;
  closedir(d);
  return (unlinkat(at, name, AT_REMOVEDIR) == 0 || errno == ENOENT) && ok;
}

gboolean sim_output_remove_tree(const char *path) { return remove_at(AT_FDCWD, path); }
