/* output.h: atomic output files (temp file in the target directory, renamed into place only when every
 * file of the run is complete) and the header record every output starts with. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"

G_BEGIN_DECLS

typedef struct SimOutDir SimOutDir;

/* Creates `dir` (and parents) if needed and checks that a file can be created in it. Errors are
 * G_FILE_ERROR with a message naming the directory. Free with sim_outdir_free(), which removes every
 * temp file not committed, and the directory itself if this call created it and nothing was committed
 * (and it is empty). */
SimOutDir *sim_outdir_open(const char *dir, GError **error);
void sim_outdir_free(SimOutDir *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimOutDir, sim_outdir_free)
const char *sim_outdir_path(const SimOutDir *out);

/* Opens a temp file that will become DIR/name on commit (`name` may contain directories, which are
 * created). The FILE is owned by `out`. */
FILE *sim_outdir_create(SimOutDir *out, const char *name, GError **error);

/* Writes `doc` as DIR/name (indented JSON, keys in insertion order, trailing newline). */
gboolean sim_outdir_write_json(SimOutDir *out, const char *name, const json_t *doc, GError **error);

/* Flushes, syncs and closes every open file (reporting any write error), then renames them all into
 * place with SIGINT/SIGTERM/SIGHUP blocked, so an interrupted run leaves either the old files or the
 * new ones, never a half-written file. */
gboolean sim_outdir_commit(SimOutDir *out, GError **error);

/* The header record: tool, version, git describe, library versions, RNG, seed, threads, command line
 * and the fully defaulted scenario (`scenario` is copied). */
json_t *sim_output_header(uint64_t seed, guint threads, int argc, char **argv, const char *scenario_path,
                          const json_t *scenario);

/* `sim run --stats` and `sim bench scaling`: the engine's layout, its windows (count, events per window from
 * the histogram) and one line per worker (entities, events, sent to other workers, peak queue, busy and
 * barrier-wait seconds). `note` (may be NULL) is the model's word on its partitioning. */
void sim_output_engine_stats(GString *out, const SimEngineWindowStats *ws, const SimWorkerStats *workers,
                             guint64 events, const char *note);

/* `sim run --numa-report`: per placed region, bytes per node intended and reported by the kernel now. */
void sim_output_numa_report(GString *out, SimEngine *engine);

/* The bucket range "lo-hi" of the q-quantile of the events-per-window histogram. Free with g_free(). */
char *sim_output_window_quantile(const SimEngineWindowStats *ws, double q);

/* Peak resident set size of this process in bytes (getrusage). */
guint64 sim_peak_rss_bytes(void);

G_END_DECLS
