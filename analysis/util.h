/* util.h: helpers shared by the analysis modules: CSV fields and records (RFC 4180), vantage-point name
 * tables, JSON. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

/* A GHashFunc for 64-bit keys (block ids) that mixes all 64 bits: GLib 2.74's g_int64_hash keeps only the
 * low 32, and block ids ((miner + 1) << 32 | sequence) then collide by sequence number, so a run whose
 * thousand miners mine a block or two each made every lookup walk the whole table. Use with g_int64_equal. */
guint an_id_hash(gconstpointer key);

/* Writes `s` as one field: quoted when it holds a separator, a quote or a line break, quotes doubled. */
void an_csv_put_field(FILE *out, const char *s);

/* A NULL-terminated copy of `n` >= 1 vantage-point names (free with g_strfreev), or NULL (with a GLib
 * critical) if a name is missing, empty or repeated: names become JSON keys and CSV columns. */
char **an_vantage_names_dup(const char *const *names, unsigned n);

/* Sets `key` of `parent` to the object `o` (taking the reference), or drops `o` if it has no member: empty
 * statistics are left out of summaries rather than written as empty objects. */
void an_json_set_nonempty(json_t *parent, const char *key, json_t *o);

/* Reads one CSV record (RFC 4180: fields separated by commas, quoted fields may hold commas, doubled quotes
 * and line breaks; a CR before a line break is dropped) from `in` into `fields`, which it empties first and
 * fills with newly allocated strings (create it with g_ptr_array_new_with_free_func(g_free)). `line` counts
 * the physical lines read so far: it is advanced past the record (start it at 0; the record began on line
 * *line + 1 before the call). Returns TRUE for a record, FALSE at the end of the input (`error` unset) or for
 * a malformed record: text after a closing quote, a quote left open at the end, a NUL byte in a field
 * ("NUL byte in field N"), or a read error (`error` set, G_FILE_ERROR, message without the file name). A last
 * line without a line break is a record. */
gboolean an_csv_read_record(FILE *in, GPtrArray *fields, guint *line, GError **error);

/* The same as sim_input_unbounded() (sim/core/infile.h), which readers above the analysis use; kept for the
 * readers not yet switched (sim/app/sweep.c, sim/app/replay.c, traces/zfile.c).
 * Whether `path` names input that a reader might never finish: something other than a regular file or a
 * directory (a device such as /dev/zero, a FIFO, a socket). Every reader of input files refuses such a path
 * with "not a regular file" instead of reading forever. A path that cannot be examined is not refused here:
 * opening it reports why. */
gboolean an_input_unbounded(const char *path);
