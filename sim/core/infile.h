/* infile.h: checks on input paths that every reader of files shares (scenarios, machine files, results). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Whether `path` names input that a reader might never finish: something other than a regular file or a
 * directory (a device such as /dev/zero, a FIFO, a socket). Every reader of input files refuses such a path
 * with "not a regular file" instead of reading forever. A path that cannot be examined is not refused here:
 * opening it reports why. */
gboolean sim_input_unbounded(const char *path);

G_END_DECLS
