/* output.c: atomic output files, the header record, and the engine's statistics and NUMA report as text. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <gsl/gsl_version.h>
#include <math.h>
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
  GArray *files;     /* OutFile */
  gboolean created;  /* sim_outdir_open made the directory: removed again if nothing was committed */
  gboolean committed;
};

static void outfile_clear(gpointer p) {
  OutFile *o = p;
  if (o->f) fclose(o->f);
  if (!o->renamed && o->tmp) g_unlink(o->tmp);
  g_free(o->final);
  g_free(o->tmp);
}

SimOutDir *sim_outdir_open(const char *dir, GError **error) {
  gboolean existed = g_file_test(dir, G_FILE_TEST_EXISTS);
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
    if (!existed) g_rmdir(dir);
    return NULL;
  }
  close(fd);
  g_unlink(probe);
  SimOutDir *out = g_new0(SimOutDir, 1);
  out->dir = g_strdup(dir);
  out->created = !existed;
  out->files = g_array_new(FALSE, TRUE, sizeof(OutFile));
  g_array_set_clear_func(out->files, outfile_clear);
  return out;
}

void sim_outdir_free(SimOutDir *out) {
  if (!out) return;
  g_array_unref(out->files);
  /* A run that failed on bad input leaves no empty directory behind (only empty: rmdir refuses others). */
  if (out->created && !out->committed) g_rmdir(out->dir);
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
      out->committed = TRUE;
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
