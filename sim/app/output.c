/* output.c: results directories written all or nothing, the header record, and the engine's statistics and NUMA report as text. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <gsl/gsl_version.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input.h"
#include "sim-version.h"

/* The marker that says a directory is a complete result written by sim: replaced whole by the next run. */
#define MARKER ".sim-result"

struct SimOutDir {
  char *dir;      /* as the user gave it (messages) */
  char *target;   /* the directory that is replaced (a link to a directory: what it points to) */
  char *parent;   /* the directory that holds target, the staging directory and the lock */
  char *base;     /* target's name in parent */
  char *staging;  /* parent/.BASE.sim-new-XXXXXX, renamed onto target on commit */
  char *lock;     /* parent/.BASE.sim-lock */
  int lock_fd;
  char *created;  /* the outermost directory sim_outdir_open created (removed again if nothing is committed) */
  char *kind;
  GPtrArray *files; /* FILE* of files still open */
  gboolean committed;
};

static void set_io_error(GError **error, int e, const char *what, const char *path) {
  g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO, "%s %s: %s", what, path, g_strerror(e));
}

/* Takes the lock file of a results directory: one writer at a time, the others refused at once. The file holds
 * the writer's pid for their message. Retries when the file was removed between open and lock. */
static int take_lock(const char *lock, const char *dir, GError **error) {
  for (int tries = 0; tries < 16; tries++) {
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      set_io_error(error, errno, "cannot create lock file", lock);
      return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      char pid[32] = "";
      ssize_t n = e == EWOULDBLOCK ? pread(fd, pid, sizeof pid - 1, 0) : 0;
      close(fd);
      if (e != EWOULDBLOCK) {
        set_io_error(error, e, "cannot lock", lock);
        return -1;
      }
      pid[MAX(n, 0)] = '\0';
      g_strstrip(pid);
      g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_BUSY,
                  "%s: another sim process (pid %s) is writing this results directory; nothing was written", dir,
                  *pid ? pid : "unknown");
      return -1;
    }
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(lock, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      char pid[32];
      int len = g_snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
      if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
        /* The pid is only for other writers' messages. */
      }
      return fd;
    }
    close(fd);
  }
  g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_BUSY, "%s: cannot take its lock %s", dir, lock);
  return -1;
}

/* Whether `dir` is a complete result that sim wrote: it holds the marker, or (results of sim before the marker)
 * a summary.json whose header names sim. */
static gboolean made_by_sim(const char *dir) {
  g_autofree char *marker = g_build_filename(dir, MARKER, NULL);
  if (g_file_test(marker, G_FILE_TEST_IS_REGULAR) && !g_file_test(marker, G_FILE_TEST_IS_SYMLINK)) return TRUE;
  g_autofree char *summary = g_build_filename(dir, "summary.json", NULL);
  struct stat st;
  if (lstat(summary, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 64 * 1024 * 1024) return FALSE;
  json_t *doc = sim_json_load_file(summary, 64 * 1024 * 1024, SIM_JSON_BLANK_AS_SYNTAX, NULL, NULL);
  const char *tool = json_string_value(json_object_get(json_object_get(doc, "header"), "tool"));
  gboolean sim = tool && strcmp(tool, "sim") == 0;
  json_decref(doc);
  return sim;
}

static gboolean dir_is_empty(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d) return FALSE;
  gboolean empty = g_dir_read_name(d) == NULL;
  g_dir_close(d);
  return empty;
}

/* What is at the target now: 0 nothing or an empty directory, 1 a result of sim's (replaced), or refused. */
static int check_target(const SimOutDir *out, GError **error) {
  struct stat st;
  if (lstat(out->target, &st) != 0) {
    if (errno == ENOENT) return 0;
    set_io_error(error, errno, "cannot read output directory", out->dir);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED,
                "%s: exists and is not a directory; nothing was written", out->dir);
    return -1;
  }
  if (made_by_sim(out->target)) return 1;
  if (dir_is_empty(out->target)) return 0;
  g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED,
              "%s: not empty and not a results directory of sim (no %s in it); nothing in it was touched: "
              "choose another output directory or remove it",
              out->dir, MARKER);
  return -1;
}

/* Removes what interrupted writers of this target left in parent: staging directories and replaced results. The
 * lock is held, so none of them is in use. */
static void remove_leftovers(const SimOutDir *out) {
  GDir *d = g_dir_open(out->parent, 0, NULL);
  if (!d) return;
  g_autofree char *new_prefix = g_strdup_printf(".%s.sim-new-", out->base);
  g_autofree char *old_prefix = g_strdup_printf(".%s.sim-old-", out->base);
  g_autoptr(GPtrArray) doomed = g_ptr_array_new_with_free_func(g_free);
  const char *n;
  while ((n = g_dir_read_name(d)))
    if ((g_str_has_prefix(n, new_prefix) && strlen(n) == strlen(new_prefix) + 6) ||
        (g_str_has_prefix(n, old_prefix) && strlen(n) == strlen(old_prefix) + 6))
      g_ptr_array_add(doomed, g_build_filename(out->parent, n, NULL));
  g_dir_close(d);
  for (guint i = 0; i < doomed->len; i++)
    sim_output_remove_tree(g_ptr_array_index(doomed, i));
}

/* The outermost missing ancestor of `path` (itself included), or NULL when it exists. */
static char *outermost_missing(const char *path) {
  char *missing = NULL;
  g_autofree char *p = g_strdup(path);
  while (!g_file_test(p, G_FILE_TEST_EXISTS)) {
    g_free(missing);
    missing = g_strdup(p);
    char *up = g_path_get_dirname(p);
    if (strcmp(up, p) == 0) {
      g_free(up);
      break;
    }
    g_free(p);
    p = up;
  }
  return missing;
}

SimOutDir *sim_outdir_open(const char *dir, const char *kind, GError **error) {
  g_return_val_if_fail(dir != NULL && kind != NULL, NULL);
  if (!*dir) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED, "an empty output directory name");
    return NULL;
  }
  g_autoptr(SimOutDir) out = g_new0(SimOutDir, 1);
  out->lock_fd = -1;
  out->dir = g_strdup(dir);
  out->kind = g_strdup(kind);
  out->files = g_ptr_array_new();
  /* "results/x/", "./x", "a/../x": the directory by its plain name; a link to a directory: the directory. */
  g_autofree char *canon = g_canonicalize_filename(dir, NULL);
  struct stat st;
  if (lstat(canon, &st) == 0 && S_ISLNK(st.st_mode)) {
    char *real = realpath(canon, NULL);
    if (!real) {
      g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED,
                  "%s: a symbolic link to nothing (%s); nothing was written", dir, g_strerror(errno));
      return NULL;
    }
    out->target = g_strdup(real);
    free(real);
  } else {
    out->target = g_steal_pointer(&canon);
  }
  if (strcmp(out->target, "/") == 0) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_REFUSED, "%s: the root directory cannot hold a result", dir);
    return NULL;
  }
  out->parent = g_path_get_dirname(out->target);
  out->base = g_path_get_basename(out->target);
  out->created = outermost_missing(out->parent);
  if (g_mkdir_with_parents(out->parent, 0777) != 0) {
    int e = errno;
    g_clear_pointer(&out->created, g_free);
    set_io_error(error, e, "cannot create output directory", dir);
    return NULL;
  }
  g_autofree char *lock_name = g_strdup_printf(".%s.sim-lock", out->base);
  out->lock = g_build_filename(out->parent, lock_name, NULL);
  out->lock_fd = take_lock(out->lock, dir, error);
  if (out->lock_fd < 0) return NULL;
  if (check_target(out, error) < 0) return NULL;
  remove_leftovers(out);
  g_autofree char *tmpl = g_strdup_printf(".%s.sim-new-XXXXXX", out->base);
  out->staging = g_build_filename(out->parent, tmpl, NULL);
  if (!g_mkdtemp_full(out->staging, 0777)) {
    int e = errno;
    g_clear_pointer(&out->staging, g_free);
    set_io_error(error, e, "cannot write to output directory", dir);
    return NULL;
  }
  return g_steal_pointer(&out);
}

void sim_outdir_free(SimOutDir *out) {
  if (!out) return;
  for (guint i = 0; i < out->files->len; i++)
    fclose(g_ptr_array_index(out->files, i));
  g_ptr_array_unref(out->files);
  if (out->staging) sim_output_remove_tree(out->staging);
  if (out->lock_fd >= 0) {
    /* Unlinked while held: a writer that opened the old file finds it gone after its lock and takes a new one. */
    g_unlink(out->lock);
    close(out->lock_fd);
  }
  /* A run that failed leaves no directory of its own behind (only empty ones are removed). */
  if (out->created && !out->committed) {
    g_autofree char *p = g_strdup(out->parent);
    while (g_rmdir(p) == 0 && strcmp(p, out->created) != 0) {
      char *up = g_path_get_dirname(p);
      g_free(p);
      p = up;
    }
  }
  g_free(out->dir);
  g_free(out->target);
  g_free(out->parent);
  g_free(out->base);
  g_free(out->staging);
  g_free(out->lock);
  g_free(out->created);
  g_free(out->kind);
  g_free(out);
}

const char *sim_outdir_path(const SimOutDir *out) { return out->dir; }

FILE *sim_outdir_create(SimOutDir *out, const char *name, GError **error) {
  g_return_val_if_fail(out->staging != NULL && !out->committed, NULL);
  g_autofree char *path = g_build_filename(out->staging, name, NULL);
  g_autofree char *show = g_build_filename(out->dir, name, NULL);
  g_autofree char *sub = g_path_get_dirname(path);
  if (strchr(name, '/') && g_mkdir_with_parents(sub, 0777) != 0) {
    set_io_error(error, errno, "cannot create", show);
    return NULL;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    int e = errno;
    if (fd >= 0) close(fd);
    set_io_error(error, e, "cannot create", show);
    return NULL;
  }
  g_ptr_array_add(out->files, f);
  return f;
}

gboolean sim_outdir_write_json(SimOutDir *out, const char *name, const json_t *doc, GError **error) {
  FILE *f = sim_outdir_create(out, name, error);
  if (!f) return FALSE;
  if (!sim_output_dump_json(f, doc)) {
    g_set_error(error, SIM_OUTPUT_ERROR, SIM_OUTPUT_ERROR_IO, "cannot write %s/%s", out->dir, name);
    return FALSE;
  }
  return TRUE;
}

/* fsyncs every directory under `path` (files were synced as they were closed), deepest first. */
static gboolean sync_tree(const char *path) {
  GDir *d = g_dir_open(path, 0, NULL);
  if (!d) return FALSE;
  gboolean ok = TRUE;
  const char *n;
  while ((n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(path, n, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK)) ok = sync_tree(p) && ok;
  }
  g_dir_close(d);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return FALSE;
  ok = fsync(fd) == 0 && ok;
  close(fd);
  return ok;
}

gboolean sim_outdir_commit(SimOutDir *out, GError **error) {
  g_return_val_if_fail(out->staging != NULL && !out->committed, FALSE);
  FILE *marker = sim_outdir_create(out, MARKER, error);
  if (!marker) return FALSE;
  fprintf(marker, "A complete result of `sim %s`. Running sim into this directory again replaces it whole.\n",
          out->kind);
  for (guint i = 0; i < out->files->len; i++) {
    FILE *f = g_ptr_array_index(out->files, i);
    gboolean bad = fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    int e = errno;
    bad = (fclose(f) != 0) || bad;
    out->files->pdata[i] = NULL;
    if (bad) {
      g_ptr_array_set_size(out->files, 0);
      set_io_error(error, e, "cannot write into", out->dir);
      return FALSE;
    }
  }
  g_ptr_array_set_size(out->files, 0);
  if (!sync_tree(out->staging)) {
    set_io_error(error, errno, "cannot write into", out->dir);
    return FALSE;
  }
  /* What is there now may have changed since the open (another program, not a sim): look again. */
  int there = check_target(out, error);
  if (there < 0) return FALSE;
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  int rc, err = 0;
  char *replaced = NULL;
  if (there == 1) {
    /* One step: the new result takes the old one's place and the old one the staging name. */
    rc = renameat2(AT_FDCWD, out->staging, AT_FDCWD, out->target, RENAME_EXCHANGE);
    if (rc == 0) {
      replaced = g_steal_pointer(&out->staging);
    } else if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {
      /* A file system without the exchange: the old result is moved aside first, so that for a moment there is
       * no result at all, never a mix. */
      g_autofree char *tmpl = g_strdup_printf(".%s.sim-old-XXXXXX", out->base);
      replaced = g_build_filename(out->parent, tmpl, NULL);
      if (!g_mkdtemp_full(replaced, 0700) || g_rename(out->target, replaced) != 0) {
        rc = -1;
      } else {
        rc = g_rename(out->staging, out->target);
        if (rc != 0) g_rename(replaced, out->target);
      }
      if (rc != 0) {
        err = errno;
        g_rmdir(replaced);
        g_clear_pointer(&replaced, g_free);
      } else {
        g_clear_pointer(&out->staging, g_free);
      }
    }
    if (rc != 0 && !err) err = errno;
  } else {
    /* Nothing there, or an empty directory, which rename() replaces. */
    rc = g_rename(out->staging, out->target);
    if (rc == 0)
      g_clear_pointer(&out->staging, g_free);
    else
      err = errno;
  }
  if (rc == 0) {
    int fd = open(out->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      fsync(fd);
      close(fd);
    }
    out->committed = TRUE;
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    set_io_error(error, err, "cannot move the result into", out->dir);
    return FALSE;
  }
  if (replaced) {
    sim_output_remove_tree(replaced);
    g_free(replaced);
  }
  return TRUE;
}

static int cmp_names(gconstpointer a, gconstpointer b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

char *sim_outdir_describe(const char *dir) {
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  GDir *d = g_dir_open(dir, 0, NULL);
  for (const char *n; d && (n = g_dir_read_name(d));) {
    if (n[0] == '.') continue;
    g_autofree char *p = g_build_filename(dir, n, NULL);
    g_ptr_array_add(names, g_strconcat(n, g_file_test(p, G_FILE_TEST_IS_DIR) ? "/" : "", NULL));
  }
  if (d) g_dir_close(d);
  g_ptr_array_sort(names, cmp_names);
  g_ptr_array_add(names, NULL);
  g_autofree char *list = g_strjoinv(",", (char **)names->pdata);
  g_autofree char *slash = g_str_has_suffix(dir, "/") ? g_strdup(dir) : g_strconcat(dir, "/", NULL);
  return g_strdup_printf("%s{%s}", slash, list);
}

json_t *sim_output_header(uint64_t seed, guint threads, int argc, char **argv, const char *scenario_path,
                          const json_t *scenario) {
  json_t *h = json_object();
  json_object_set_new(h, "tool", json_string("sim"));
  json_object_set_new(h, "version", json_string(SIM_VERSION));
  json_object_set_new(h, "git_describe", json_string(SIM_GIT_DESCRIBE));
  json_t *libs = json_object();
  g_autofree char *glib_v = g_strdup_printf("%u.%u.%u", glib_major_version, glib_minor_version, glib_micro_version);
  json_object_set_new(libs, "glib", json_string(glib_v));
  json_object_set_new(libs, "gsl", json_string(gsl_version));
  json_object_set_new(libs, "jansson", json_string(jansson_version_str()));
  json_object_set_new(libs, "libnuma", json_string(SIM_LIBNUMA_VERSION));
  json_object_set_new(h, "libraries", libs);
  json_object_set_new(h, "rng", json_string("philox4x64-10 (Random123), one stream per entity keyed (seed, id)"));
  json_object_set_new(h, "seed", json_integer((json_int_t)seed));
  json_object_set_new(h, "threads", json_integer(threads));
  json_t *cmd = json_array();
  for (int i = 0; i < argc; i++) json_array_append_new(cmd, json_string(argv[i]));
  json_object_set_new(h, "command_line", cmd);
  if (scenario_path) json_object_set_new(h, "scenario_file", json_string(scenario_path));
  if (scenario) json_object_set_new(h, "scenario", json_deep_copy(scenario));
  return h;
}

guint64 sim_peak_rss_bytes(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (guint64)ru.ru_maxrss * 1024;
}

char *sim_output_window_quantile(const SimEngineWindowStats *ws, double q) {
  if (ws->windows == 0) return g_strdup("-");
  uint64_t target = (uint64_t)ceil(q * (double)ws->windows), cum = 0;
  if (target == 0) target = 1;
  for (guint b = 0; b < SIM_ENGINE_HIST_BUCKETS; b++) {
    cum += ws->window_events_hist[b];
    if (cum < target) continue;
    if (b == 0) return g_strdup("0");
    uint64_t lo = UINT64_C(1) << (b - 1),
             hi = b + 1 < SIM_ENGINE_HIST_BUCKETS ? (UINT64_C(1) << b) - 1 : ws->window_events_max;
    return g_strdup_printf("%" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT, lo, MIN(hi, ws->window_events_max));
  }
  return g_strdup("-");
}

void sim_output_engine_stats(GString *out, const SimEngineWindowStats *ws, const SimWorkerStats *workers,
                             guint64 events, const char *note) {
  g_string_append_printf(out, "engine: %s", ws->threads == 0 ? "sequential engine" : "partitioned engine");
  if (ws->threads > 0)
    g_string_append_printf(out, ", %u thread%s requested, %u worker%s, %u group%s", ws->threads,
                           ws->threads == 1 ? "" : "s", ws->workers, ws->workers == 1 ? "" : "s", ws->groups,
                           ws->groups == 1 ? "" : "s");
  if (!ws->windowed) {
    g_string_append(out, "; no windows (one group runs sequentially)\n");
  } else if (ws->lookahead == SIM_TIME_MAX) {
    g_string_append(out, "; lookahead unbounded (no declared traffic between groups)\n");
  } else {
    g_string_append_printf(out, "; lookahead %.6f ms", (double)ws->lookahead / 1e6);
    if (ws->lookahead_src == SIM_ENTITY_NONE)
      g_string_append(out, " (the default delay between groups)\n");
    else
      g_string_append_printf(out, " (link entity %u -> entity %u)\n", ws->lookahead_src, ws->lookahead_dst);
  }
  if (note) g_string_append_printf(out, "partitioning: %s\n", note);
  if (ws->windowed) {
    g_autofree char *p50 = sim_output_window_quantile(ws, 0.5), *p90 = sim_output_window_quantile(ws, 0.9);
    g_string_append_printf(
        out,
        "windows: %" G_GUINT64_FORMAT ", events per window: mean %.1f, median in %s, p90 in %s, "
        "max %" G_GUINT64_FORMAT "; critical path %.3f s (the busiest worker's CPU time per "
        "window, summed)\n",
        ws->windows, ws->windows ? (double)events / (double)ws->windows : 0.0, p50, p90,
        ws->window_events_max, ws->critical_s);
  }
  g_string_append(
      out,
      "worker  node  entities      events  sent_remote  peak_pending    busy_s     cpu_s  barrier_wait_s\n");
  for (guint w = 0; w < ws->workers; w++) {
    const SimWorkerStats *st = &workers[w];
    char nd[16] = "-";
    if (st->node >= 0) g_snprintf(nd, sizeof nd, "%d", st->node);
    g_string_append_printf(out,
                           "%-6u  %4s  %8u  %10" G_GUINT64_FORMAT "  %11" G_GUINT64_FORMAT
                           "  %12" G_GUINT64_FORMAT "  %8.3f  %8.3f  %14.3f\n",
                           w, nd, st->entities, st->events, st->sent_remote, st->peak_pending, st->busy_s,
                           st->cpu_s, st->wait_s);
  }
}

void sim_output_numa_report(GString *out, SimEngine *engine) {
  guint n = sim_engine_numa_report(engine, NULL, 0);
  g_autofree SimNumaPlacement *pl = g_new0(SimNumaPlacement, MAX(n, 1));
  n = MIN(n, sim_engine_numa_report(engine, pl, n));
  guint nodes = n > 0 ? pl[0].n_nodes : 1;
  g_string_append_printf(out,
                         "numa: %u memory node%s; bytes per node: intended / reported by the kernel "
                         "(move_pages), not yet backed\n",
                         nodes, nodes == 1 ? "" : "s");
  g_string_append(out, "region                                       bytes");
  for (guint k = 0; k < nodes; k++)
    g_string_append_printf(out, "  node%-2u intended      reported", k);
  g_string_append(out, "        absent\n");
  double tot_int[SIM_NUMA_MAX_NODES_ENGINE] = {0};
  gsize tot_act[SIM_NUMA_MAX_NODES_ENGINE] = {0}, tot_abs = 0, tot = 0;
  for (guint i = 0; i < n; i++) {
    g_string_append_printf(out, "%-40s  %8" G_GSIZE_FORMAT, pl[i].name, pl[i].bytes);
    for (guint k = 0; k < nodes; k++) {
      g_string_append_printf(out, "  %14.0f  %12" G_GSIZE_FORMAT, pl[i].intended[k], pl[i].actual[k]);
      tot_int[k] += pl[i].intended[k];
      tot_act[k] += pl[i].actual[k];
    }
    g_string_append_printf(out, "  %12" G_GSIZE_FORMAT "\n", pl[i].absent);
    tot_abs += pl[i].absent;
    tot += pl[i].bytes;
  }
  g_string_append_printf(out, "%-40s  %8" G_GSIZE_FORMAT, "total", tot);
  for (guint k = 0; k < nodes; k++)
    g_string_append_printf(out, "  %14.0f  %12" G_GSIZE_FORMAT, tot_int[k], tot_act[k]);
  g_string_append_printf(out, "  %12" G_GSIZE_FORMAT "\n", tot_abs);
}
