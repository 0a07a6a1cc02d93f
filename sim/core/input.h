/* input.h: the one way sim reads its input files: whole files (regular files only, bounded in size), JSON
 * documents and CSV records. Every command, model and reader goes through it, so an empty file, a syntax
 * error, a directory, a device such as /dev/zero or a FIFO, and an oversized file are handled once.
 *
 * Messages never name the file (callers do: "FILE: message", or "FILE:LINE:COL: message" for a position);
 * sim_input_error_text() and sim_diag_add_input_error() put the name in front in the house forms. The
 * library's messages are the ones sim printed before this module existed, word for word. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <stdio.h>

G_BEGIN_DECLS

#define SIM_INPUT_ERROR (sim_input_error_quark())
GQuark sim_input_error_quark(void);

typedef enum {
  SIM_INPUT_ERROR_NOT_REGULAR, /* "not a regular file": a device, FIFO or socket, which might never end */
  SIM_INPUT_ERROR_OPEN,        /* "cannot open: REASON" */
  SIM_INPUT_ERROR_READ,        /* "cannot read: REASON" (a directory: "cannot read: Is a directory") */
  SIM_INPUT_ERROR_TOO_LARGE,   /* "larger than N bytes" */
  SIM_INPUT_ERROR_EMPTY,       /* JSON: "1:1: empty file (expected a JSON object)" (only white space) */
  SIM_INPUT_ERROR_SYNTAX,      /* JSON: "LINE:COLUMN: jansson's text"; CSV: see sim_csv_reader_next() */
} SimInputError;

/* The largest file read whole when a caller gives 0 as its bound: 1 GiB. */
#define SIM_INPUT_MAX_BYTES ((gsize)1 << 30)

/* What went wrong, for callers that word a message themselves (may be passed as NULL everywhere). */
typedef struct {
  int err_no;      /* OPEN, READ: the errno */
  int line, column; /* EMPTY, SYNTAX: the position, both >= 1 */
  char text[JSON_ERROR_TEXT_LENGTH]; /* SYNTAX: the parser's text without the position */
} SimInputProblem;

/* Whether `path` names input that a reader might never finish: something other than a regular file or a
 * directory (a device such as /dev/zero, a FIFO, a socket). A path that cannot be examined is not refused
 * here: opening it reports why. Streaming readers (traces/zfile.c) check this before open(). */
gboolean sim_input_unbounded(const char *path);

/* Reads the whole of `path`, at most `max_bytes` (0: SIM_INPUT_MAX_BYTES). Returns the bytes with a NUL
 * after them (not counted in *len; free with g_free()), or NULL with `error` set (SIM_INPUT_ERROR: NOT_REGULAR,
 * OPEN, READ or TOO_LARGE) and `problem` (if not NULL) filled. A FIFO is refused before it is opened (opening
 * one would wait for a writer). */
char *sim_input_read_file(const char *path, gsize max_bytes, gsize *len, SimInputProblem *problem,
                          GError **error);

typedef enum {
  SIM_JSON_DEFAULT = 0,
  /* A document of only white space is a SYNTAX error in jansson's words ("'[' or '{' expected near end of
   * file") instead of EMPTY: what the readers of sweep files, sweep manifests, run summaries and machine
   * files of `sim bft` always said. */
  SIM_JSON_BLANK_AS_SYNTAX = 1 << 0,
} SimJsonFlags;

/* Parses `data` (`len` bytes; NULs and invalid UTF-8 are syntax errors) as one JSON document, an object or an
 * array, with duplicate keys refused. Returns a new reference, or NULL with `error` set: EMPTY when `data`
 * holds only white space (unless SIM_JSON_BLANK_AS_SYNTAX), else SYNTAX with jansson's line and column
 * (clamped to >= 1). */
json_t *sim_json_parse(const char *data, gsize len, SimJsonFlags flags, SimInputProblem *problem,
                       GError **error);

/* sim_input_read_file() then sim_json_parse(). */
json_t *sim_json_load_file(const char *path, gsize max_bytes, SimJsonFlags flags, SimInputProblem *problem,
                           GError **error);

/* The message of an error of this module with the file name in front: "PATH:LINE:COL: text" for EMPTY and
 * SYNTAX, "PATH: message" otherwise (and for errors of other domains). Free with g_free(). */
char *sim_input_error_text(const char *path, const GError *error);

typedef struct SimDiag SimDiag; /* params.h */

/* Adds an error of this module to `diag` (whose file is the file read): sim_diag_add_at() for EMPTY and
 * SYNTAX, sim_diag_add_raw() otherwise. */
void sim_diag_add_input_error(SimDiag *diag, const GError *error, const SimInputProblem *problem);

/* ---- CSV (RFC 4180: fields separated by commas; quoted fields may hold commas, doubled quotes and line
 * breaks) ---- */

typedef enum {
  SIM_CSV_DEFAULT = 0,
  /* A quote inside an unquoted field is an error, and a lone CR ends a record as a line break does (the
   * report's reading of the CSVs sim writes). Messages then start with "line N: " (the line of the record,
   * or of the problem inside a quoted field) and read as the report's always did. */
  SIM_CSV_STRICT = 1 << 0,
} SimCsvFlags;

typedef enum {
  SIM_CSV_ERROR_UNTERMINATED, /* "quoted field not closed at the end of the file" */
  SIM_CSV_ERROR_AFTER_QUOTE,  /* "text after the closing quote of field N" */
  SIM_CSV_ERROR_BARE_QUOTE,   /* SIM_CSV_STRICT: "line N: quote inside an unquoted field" */
  SIM_CSV_ERROR_NUL,          /* "NUL byte in field N": it would end the field's C string early */
  SIM_CSV_ERROR_IO,           /* "cannot read: REASON" */
} SimCsvError;

#define SIM_CSV_ERROR (sim_csv_error_quark())
GQuark sim_csv_error_quark(void);

/* Reads one record from `in` into `fields`, which it empties first and fills with newly allocated strings
 * (create it with g_ptr_array_new_with_free_func(g_free)). `line` counts the physical lines read so far: it
 * is advanced past the record (start it at 0; the record began on line *line + 1 before the call). Returns
 * TRUE for a record, FALSE at the end of the input (`error` unset) or for a malformed record (`error` set,
 * SIM_CSV_ERROR, message without the file name or line). A CR before a line break is dropped; a last line
 * without a line break is a record. */
gboolean sim_csv_read_record(FILE *in, GPtrArray *fields, guint *line, GError **error);

/* The same reader over bytes in memory (not copied: they must outlive the reader). */
typedef struct SimCsvReader SimCsvReader;
SimCsvReader *sim_csv_reader_new(const char *data, gsize len, SimCsvFlags flags);
void sim_csv_reader_free(SimCsvReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimCsvReader, sim_csv_reader_free)

/* The next record into `fields` (as sim_csv_read_record()). Returns 1, 0 at the end, -1 on an error. */
int sim_csv_reader_next(SimCsvReader *r, GPtrArray *fields, GError **error);

/* The line (1-based) where the record last returned (or refused) began. */
guint sim_csv_reader_line(const SimCsvReader *r);

G_END_DECLS
