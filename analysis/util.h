/* util.h: helpers shared by the analysis modules: writing CSV fields (RFC 4180), vantage-point name
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

/* Writes `x` into `buf` (at least AN_FIXED9_MAX bytes, no terminating NUL) exactly as printf("%.9f", x)
 * does with glibc (the binary value rounded half to even at the ninth decimal, "-" for any negative value,
 * -0 included) and returns the length; values that are not finite or not below 1e9 in magnitude go to
 * snprintf. A few hundred instructions fewer than printf per value. */
#define AN_FIXED9_MAX 400
gsize an_fmt_fixed9(char *buf, double x);

/* A NULL-terminated copy of `n` >= 1 vantage-point names (free with g_strfreev), or NULL (with a GLib
 * critical) if a name is missing, empty or repeated: names become JSON keys and CSV columns. */
char **an_vantage_names_dup(const char *const *names, unsigned n);

/* Sets `key` of `parent` to the object `o` (taking the reference), or drops `o` if it has no member: empty
 * statistics are left out of summaries rather than written as empty objects. */
void an_json_set_nonempty(json_t *parent, const char *key, json_t *o);

/* Reading CSV records and input files: sim/core/input.h (sim_csv_read_record(), sim_input_read_file()). */
