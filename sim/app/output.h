/* output.h: results directories written all or nothing, and the header record every output starts with.
 *
 * A results directory (`sim run`, `sim replay`) is built whole in a staging directory `.NAME.sim-new-XXXXXX`
 * beside it, on the same file system, every file and directory flushed to disk, and then moved into place with
 * one rename (an exchange with the old result when there is one, which is then removed). A reader sees the old
 * result or the new one, never a mix, and an interrupted run leaves the old result untouched. A complete result
 * holds the marker file `.sim-result`; only such a directory (or one of an earlier sim, whose summary.json names
 * sim in its header) or an empty one is replaced: any other existing directory is refused and left untouched.
 * One writer at a time: the lock file `.NAME.sim-lock` beside the directory (flock, holding the writer's pid)
 * refuses a second writer at once. Staging and replaced directories that an interrupted writer left behind are
 * removed by the next writer of the same directory. Single files: sim/core/outfile.h. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "engine.h"
#include "outfile.h"

G_BEGIN_DECLS

typedef struct SimOutDir SimOutDir;

/* Takes the lock of the results directory `dir`, checks what is there, removes what interrupted writers left and
 * creates the staging directory (and missing parents of `dir`). `kind` names the command in the marker ("run").
 * Errors: SIM_OUTPUT_ERROR (REFUSED: not a directory, or a non-empty directory sim did not make; BUSY: another
 * process holds the lock; IO), each naming `dir`. Free with sim_outdir_free(), which removes the staging
 * directory unless committed, releases the lock, and removes the parents this call created if nothing was
 * committed. */
SimOutDir *sim_outdir_open(const char *dir, const char *kind, GError **error);
void sim_outdir_free(SimOutDir *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimOutDir, sim_outdir_free)
/* `dir` as given to sim_outdir_open (for messages). */
const char *sim_outdir_path(const SimOutDir *out);

/* Creates DIR/name in the staging directory (`name` may contain directories, which are created). The FILE is
 * owned by `out`. */
FILE *sim_outdir_create(SimOutDir *out, const char *name, GError **error);

/* Writes `doc` as DIR/name (indented JSON, keys in insertion order, trailing newline). */
gboolean sim_outdir_write_json(SimOutDir *out, const char *name, const json_t *doc, GError **error);

/* Flushes, syncs and closes every file (reporting any write error), adds the marker, syncs the directories, and
 * moves the result into place with SIGINT/SIGTERM/SIGHUP blocked. */
gboolean sim_outdir_commit(SimOutDir *out, GError **error);

/* "DIR/{a.csv,b.json,emc/}": what a committed results directory holds (its top level, sorted, the marker and other
 * dot files left out), for the closing report. Free with g_free(). */
char *sim_outdir_describe(const char *dir);

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
