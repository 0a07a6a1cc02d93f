/* outfile.h: writing one output file where the user pointed, all or nothing, and removing directory trees
 * without following links. The lowest layer's file writer: every command that writes a single file (compare
 * --json, calibrate -o/--report, report --out, numa measure --out, a sweep's manifest and table) uses it.
 *
 * Where the bytes go, as `cp` would put them:
 *  - a regular file, or a name that does not exist yet: a temp file `.NAME.tmp-XXXXXX` beside the target is
 *    written, flushed to disk and renamed over the target with SIGINT/SIGTERM/SIGHUP blocked, so a reader sees
 *    the old file or the new one, never a part; the mode of a replaced file is kept (new files: 0644 less umask);
 *  - a symbolic link (a chain of them, even a dangling one): the file it points to is replaced as above and the
 *    link itself is left as it was;
 *  - a device, a FIFO or a socket that exists: written in place, never replaced (`/dev/null` stays a device);
 *  - `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: written to that descriptor of this process.
 * Missing parent directories are created. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

G_BEGIN_DECLS

#define SIM_OUTPUT_ERROR (sim_output_error_quark())
GQuark sim_output_error_quark(void);

typedef enum {
  /* The target cannot be used as asked (a directory where a file belongs, a non-empty directory that sim did
   * not make, a dangling chain of links): bad usage, exit 2. Nothing was touched. */
  SIM_OUTPUT_ERROR_REFUSED,
  /* Another process is writing the same results directory (exit 2). */
  SIM_OUTPUT_ERROR_BUSY,
  /* The system refused a create, write, flush or rename (a full disk, permissions): a run-time failure. */
  SIM_OUTPUT_ERROR_IO,
} SimOutputError;

typedef struct SimOutFile SimOutFile;

/* Resolves `path` as above and opens the stream the content is written to. Errors: SIM_OUTPUT_ERROR with a
 * message naming the path. Free with sim_outfile_free(), which removes the temp file unless committed. */
SimOutFile *sim_outfile_open(const char *path, GError **error);
void sim_outfile_free(SimOutFile *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimOutFile, sim_outfile_free)

/* The stream to write to (owned by `f`). */
FILE *sim_outfile_stream(SimOutFile *f);

/* Flushes and syncs the content (reporting any write error). Then, for a replaced file, renames the temp file
 * into place (signals blocked) and syncs the directory. Each file is committed on its own: commit several
 * files after all of them are written, so that a write error leaves every target as it was. */
gboolean sim_outfile_commit(SimOutFile *f, GError **error);

/* Writes `len` bytes of `data` (`len` < 0: a NUL-terminated string) to `path` as above. */
gboolean sim_output_write_file(const char *path, const char *data, gssize len, GError **error);

/* Writes `doc` to an open output file: indented JSON, keys in insertion order, a final newline. */
gboolean sim_output_dump_json(FILE *f, const json_t *doc);

/* Removes `path` and, when it is a directory, everything under it, without following symbolic links (a link is
 * removed, never what it points to). Quiet about what is already gone; returns FALSE if anything remains. */
gboolean sim_output_remove_tree(const char *path);

G_END_DECLS
