/* output.c: atomic output files and the header record. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <gsl/gsl_version.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sim-version.h"

typedef struct {
  char *final;
  char *tmp;
  FILE *f;
  gboolean renamed;
} OutFile;

struct SimOutDir {
  char *dir;
  GArray *files; /* OutFile */
};

static void outfile_clear(gpointer p) {
  OutFile *o = p;
  if (o->f) fclose(o->f);
  if (!o->renamed && o->tmp) g_unlink(o->tmp);
  g_free(o->final);
  g_free(o->tmp);
}

SimOutDir *sim_outdir_open(const char *dir, GError **error) {
  if (g_mkdir_with_parents(dir, 0777) != 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create output directory %s: %s", dir,
                g_strerror(e));
    return NULL;
  }
  g_autofree char *probe = g_build_filename(dir, ".sim-write-test-XXXXXX", NULL);
  int fd = g_mkstemp(probe);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write to output directory %s: %s", dir,
                g_strerror(e));
    return NULL;
  }
  close(fd);
  g_unlink(probe);
  SimOutDir *out = g_new0(SimOutDir, 1);
  out->dir = g_strdup(dir);
  out->files = g_array_new(FALSE, TRUE, sizeof(OutFile));
  g_array_set_clear_func(out->files, outfile_clear);
  return out;
}

void sim_outdir_free(SimOutDir *out) {
  if (!out) return;
  g_array_unref(out->files);
  g_free(out->dir);
  g_free(out);
}

const char *sim_outdir_path(const SimOutDir *out) { return out->dir; }

FILE *sim_outdir_create(SimOutDir *out, const char *name, GError **error) {
  OutFile o = {0};
  o.final = g_build_filename(out->dir, name, NULL);
  /* A name with directories ("emc/WE/TxMsg.log"): they are created, and the temp file sits beside its
   * target so that the rename stays within one directory. */
  g_autofree char *sub = g_path_get_dirname(o.final), *base = g_path_get_basename(name);
  if (strchr(name, '/') && g_mkdir_with_parents(sub, 0777) != 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create %s: %s", sub, g_strerror(e));
    g_free(o.final);
    return NULL;
  }
  g_autofree char *tmpl = g_strdup_printf(".%s.tmp-XXXXXX", base);
  o.tmp = g_build_filename(sub, tmpl, NULL);
  int fd = g_mkstemp(o.tmp);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot create %s: %s", o.final, g_strerror(e));
    g_free(o.final);
    g_free(o.tmp);
    return NULL;
  }
  fchmod(fd, 0644);
  o.f = fdopen(fd, "w");
  g_array_append_val(out->files, o);
  return o.f;
}

gboolean sim_outdir_write_json(SimOutDir *out, const char *name, const json_t *doc, GError **error) {
  FILE *f = sim_outdir_create(out, name, error);
  if (!f) return FALSE;
  if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) != 0 ||
      fputc('\n', f) == EOF) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write %s/%s", out->dir, name);
    return FALSE;
  }
  return TRUE;
}

gboolean sim_outdir_commit(SimOutDir *out, GError **error) {
  for (guint i = 0; i < out->files->len; i++) {
    OutFile *o = &g_array_index(out->files, OutFile, i);
    if (!o->f) continue;
    gboolean bad = fflush(o->f) != 0 || ferror(o->f) || fsync(fileno(o->f)) != 0;
    int e = errno;
    bad = (fclose(o->f) != 0) || bad;
    o->f = NULL;
    if (bad) {
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write %s: %s", o->final,
                  g_strerror(e));
      return FALSE;
    }
  }
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  gboolean ok = TRUE;
  for (guint i = 0; i < out->files->len && ok; i++) {
    OutFile *o = &g_array_index(out->files, OutFile, i);
    if (o->renamed) continue;
    if (g_rename(o->tmp, o->final) != 0) {
      int e = errno;
      g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot rename into %s: %s", o->final,
                  g_strerror(e));
      ok = FALSE;
    } else {
      o->renamed = TRUE;
    }
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return ok;
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
