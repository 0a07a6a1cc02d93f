/* test_input.c: unit tests of the one input loader (whole files, JSON documents) and the one CSV reader, with
 * the exact messages they give. */
#include "input.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cunit-main.h"
#include "params.h"

/* A new temporary directory; remove with rm_tree(). */
static char *tmp_dir(void) {
  g_autoptr(GError) e = NULL;
  char *d = g_dir_make_tmp("sim-input-XXXXXX", &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  return d;
}

static void rm_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *n;
  while (d && (n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, n, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR) && !g_file_test(p, G_FILE_TEST_IS_SYMLINK))
      rm_tree(p);
    else
      g_unlink(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}

static char *put(const char *dir, const char *name, const char *data, gsize len) {
  char *p = g_build_filename(dir, name, NULL);
  CU_ASSERT_TRUE_FATAL(g_file_set_contents(p, data, (gssize)len, NULL));
  return p;
}

#define S(literal) literal, sizeof literal - 1 /* a literal and its length, NULs included */

/* Loads `data` as a JSON file and checks the full message ("PATH..." replaced by "F"). */
static void expect_json(const char *data, gsize len, SimJsonFlags flags, int code, const char *message) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *p = put(dir, "f.json", data, len);
  g_autoptr(GError) e = NULL;
  SimInputProblem pb;
  json_t *doc = sim_json_load_file(p, 0, flags, &pb, &e);
  CU_ASSERT_PTR_NULL(doc);
  json_decref(doc);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_TRUE(g_error_matches(e, SIM_INPUT_ERROR, code));
  g_autofree char *text = sim_input_error_text("F", e);
  CU_ASSERT_STRING_EQUAL(text, message);
  if (strcmp(text, message) != 0) fprintf(stderr, "\n got: %s\nwant: %s\n", text, message);
  rm_tree(dir);
}

static void test_json_ok(void) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *p = put(dir, "ok.json", S("{\"a\": [1, 2.5, \"\xc3\xa9\"]}\n"));
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) doc = sim_json_load_file(p, 0, SIM_JSON_DEFAULT, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(doc, "a"), 2)), "\xc3\xa9");
  /* Arrays are documents too; what a caller expects at the top is its own check. */
  g_autoptr(json_t) arr = sim_json_parse("[1]", 3, SIM_JSON_DEFAULT, NULL, NULL);
  CU_ASSERT_TRUE(json_is_array(arr));
  rm_tree(dir);
}

static void test_json_empty(void) {
  expect_json(S(""), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_EMPTY, "F:1:1: empty file (expected a JSON object)");
  expect_json(S(" \n\t\n"), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_EMPTY, "F:1:1: empty file (expected a JSON object)");
  /* The readers that always let jansson speak keep its words. */
  expect_json(S(""), SIM_JSON_BLANK_AS_SYNTAX, SIM_INPUT_ERROR_SYNTAX, "F:1:1: '[' or '{' expected near end of file");
}

static void test_json_syntax(void) {
  const char *bad = "{\n  \"name\": \"x\",\n  \"seed\": 1,,\n}\n";
  expect_json(bad, strlen(bad), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_SYNTAX, "F:3:13: string or '}' expected near ','");
  expect_json(S("{\"a\": 1, \"a\": 2}"), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_SYNTAX,
              "F:1:12: duplicate object key near '\"a\"'");
  expect_json(S("42"), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_SYNTAX, "F:1:2: '[' or '{' expected near '42'");
  /* NUL bytes and invalid UTF-8 are syntax errors with a position, not truncations. */
  expect_json(S("{\"a\": \"x\0y\"}"), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_SYNTAX,
              "F:1:8: control character 0x0 near '\"x'");
  expect_json(S("{\"a\": \"x\xffy\"}"), SIM_JSON_DEFAULT, SIM_INPUT_ERROR_SYNTAX,
              "F:1:8: unable to decode byte 0xff near '\"x'");
  /* The position also comes back apart, for sim_diag_add_at(). */
  SimInputProblem pb;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_PTR_NULL(sim_json_parse(bad, strlen(bad), SIM_JSON_DEFAULT, &pb, &e));
  CU_ASSERT_EQUAL(pb.line, 3);
  CU_ASSERT_EQUAL(pb.column, 13);
  CU_ASSERT_STRING_EQUAL(pb.text, "string or '}' expected near ','");
  g_autoptr(SimDiag) diag = sim_diag_new("s.json");
  sim_diag_add_input_error(diag, e, &pb);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "s.json:3:13: string or '}' expected near ','");
}

static void test_read_missing_dir_device(void) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *missing = g_build_filename(dir, "missing.json", NULL);
  struct {
    const char *path;
    int code;
    int err_no;
    const char *message;
  } cases[] = {
      {missing, SIM_INPUT_ERROR_OPEN, ENOENT, "cannot open: No such file or directory"},
      {dir, SIM_INPUT_ERROR_READ, EISDIR, "cannot read: Is a directory"},
      {"/dev/zero", SIM_INPUT_ERROR_NOT_REGULAR, 0, "not a regular file"},
      {"/dev/null", SIM_INPUT_ERROR_NOT_REGULAR, 0, "not a regular file"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) e = NULL;
    SimInputProblem pb;
    gsize len = 99;
    char *data = sim_input_read_file(cases[i].path, 0, &len, &pb, &e);
    CU_ASSERT_PTR_NULL(data);
    g_free(data);
    CU_ASSERT_EQUAL(len, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE(g_error_matches(e, SIM_INPUT_ERROR, cases[i].code));
    CU_ASSERT_STRING_EQUAL(e->message, cases[i].message);
    CU_ASSERT_EQUAL(pb.err_no, cases[i].err_no);
  }
  /* The diag form a scenario loader prints. */
  g_autoptr(GError) e = NULL;
  g_autoptr(json_t) doc = sim_json_load_file("/dev/zero", 0, SIM_JSON_DEFAULT, NULL, &e);
  g_autoptr(SimDiag) diag = sim_diag_new("/dev/zero");
  sim_diag_add_input_error(diag, e, NULL);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "/dev/zero: not a regular file");
  g_autofree char *text = sim_input_error_text("/dev/zero", e);
  CU_ASSERT_STRING_EQUAL(text, "/dev/zero: not a regular file");
  rm_tree(dir);
}

/* A FIFO is refused before open(), which would wait for a writer for ever. */
static void test_read_fifo(void) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
  g_autoptr(GError) e = NULL;
  gsize len = 0;
  char *data = sim_input_read_file(fifo, 0, &len, NULL, &e);
  CU_ASSERT_PTR_NULL(data);
  g_free(data);
  CU_ASSERT_TRUE(g_error_matches(e, SIM_INPUT_ERROR, SIM_INPUT_ERROR_NOT_REGULAR));
  rm_tree(dir);
}

static void test_read_cap(void) {
  g_autofree char *dir = tmp_dir();
  g_autofree char *p = put(dir, "big", S("0123456789"));
  gsize len = 0;
  g_autoptr(GError) e = NULL;
  g_autofree char *all = sim_input_read_file(p, 10, &len, NULL, &e);
  CU_ASSERT_PTR_NOT_NULL_FATAL(all);
  CU_ASSERT_EQUAL(len, 10);
  CU_ASSERT_EQUAL(all[10], '\0'); /* a NUL after the bytes, not counted */
  char *cut = sim_input_read_file(p, 9, &len, NULL, &e);
  CU_ASSERT_PTR_NULL(cut);
  g_free(cut);
  CU_ASSERT_TRUE(g_error_matches(e, SIM_INPUT_ERROR, SIM_INPUT_ERROR_TOO_LARGE));
  g_autofree char *text = sim_input_error_text("big", e);
  CU_ASSERT_STRING_EQUAL(text, "big: larger than 9 bytes");
  /* Bytes are bytes: NULs and invalid UTF-8 come back whole. */
  g_autofree char *q = put(dir, "bin", S("a\0\xff"));
  g_autofree char *bin = sim_input_read_file(q, 0, &len, NULL, NULL);
  CU_ASSERT_EQUAL(len, 3);
  CU_ASSERT_EQUAL(memcmp(bin, "a\0\xff", 3), 0);
  rm_tree(dir);
}

/* ---- CSV ---- */

/* Reads every record of `text` with the memory reader; returns them as "a|b;c|d" or the error "E@LINE:message". */
static char *csv_all(const char *text, gsize len, SimCsvFlags flags) {
  g_autoptr(SimCsvReader) r = sim_csv_reader_new(text, len, flags);
  g_autoptr(GPtrArray) f = g_ptr_array_new_with_free_func(g_free);
  GString *out = g_string_new(NULL);
  g_autoptr(GError) e = NULL;
  int res;
  while ((res = sim_csv_reader_next(r, f, &e)) > 0) {
    if (out->len) g_string_append_c(out, ';');
    g_string_append_printf(out, "%u:", sim_csv_reader_line(r));
    for (guint i = 0; i < f->len; i++) g_string_append_printf(out, "%s%s", i ? "|" : "", (char *)f->pdata[i]);
  }
  if (res < 0) g_string_append_printf(out, "%sE@%u:%s", out->len ? ";" : "", sim_csv_reader_line(r), e->message);
  return g_string_free(out, FALSE);
}

static void expect_csv(const char *text, gsize len, SimCsvFlags flags, const char *want) {
  g_autofree char *got = csv_all(text, len, flags);
  CU_ASSERT_STRING_EQUAL(got, want);
  if (strcmp(got, want) != 0) fprintf(stderr, "\n got: %s\nwant: %s\n", got, want);
}

static void test_csv_quotes(void) {
  expect_csv(S("a,\"b,c\",\"say \"\"hi\"\"\"\n"), SIM_CSV_DEFAULT, "1:a|b,c|say \"hi\"");
  expect_csv(S("\"two\nlines\",x\nnext\n"), SIM_CSV_DEFAULT, "1:two\nlines|x;3:next");
  /* A quote inside an unquoted field is text by default, an error in the strict dialect. */
  expect_csv(S("a\"b,c\n"), SIM_CSV_DEFAULT, "1:a\"b|c");
  expect_csv(S("x\na\"b,c\n"), SIM_CSV_STRICT, "1:x;E@2:line 2: quote inside an unquoted field");
  expect_csv(S("a,\"b\"c\n"), SIM_CSV_DEFAULT, "E@1:text after the closing quote of field 2");
  expect_csv(S("\"x\ny\"z\n"), SIM_CSV_STRICT, "E@1:line 2: text after a closing quote");
  expect_csv(S("a,\"open\n"), SIM_CSV_DEFAULT, "E@1:quoted field not closed at the end of the file");
  expect_csv(S("h\na,\"open\n"), SIM_CSV_STRICT, "1:h;E@2:line 2: unterminated quoted field");
}

static void test_csv_crlf_and_end(void) {
  expect_csv(S("a,b\r\nc,d\r\n"), SIM_CSV_DEFAULT, "1:a|b;2:c|d");
  expect_csv(S("a,b\r\nc,d\r\n"), SIM_CSV_STRICT, "1:a|b;2:c|d");
  expect_csv(S("\"a\"\r\nb"), SIM_CSV_DEFAULT, "1:a;2:b");
  /* No line break after the last record: it is a record all the same. */
  expect_csv(S("a,b\nc,d"), SIM_CSV_DEFAULT, "1:a|b;2:c|d");
  expect_csv(S("a,"), SIM_CSV_DEFAULT, "1:a|");
  /* A lone CR: inside the field by default, a line break in the strict dialect. */
  expect_csv(S("a\rb\n"), SIM_CSV_DEFAULT, "1:a\rb");
  expect_csv(S("a\rb\n"), SIM_CSV_STRICT, "1:a;2:b");
  expect_csv(S(""), SIM_CSV_DEFAULT, "");
  expect_csv(S("\n"), SIM_CSV_DEFAULT, "1:");
}

static void test_csv_ragged_and_nul(void) {
  /* Records keep the fields they have: whether that is an error is the caller's business. */
  expect_csv(S("a,b,c\nd\ne,f\n"), SIM_CSV_DEFAULT, "1:a|b|c;2:d;3:e|f");
  expect_csv(S("a,x\0y\n"), SIM_CSV_DEFAULT, "E@1:NUL byte in field 2");
  expect_csv(S("a,\"x\0y\"\n"), SIM_CSV_DEFAULT, "E@1:NUL byte in field 2");
  expect_csv(S("a,x\0y\n"), SIM_CSV_STRICT, "E@1:line 1: NUL byte in a field");
  expect_csv(S("\"a\n\0\"\n"), SIM_CSV_STRICT, "E@1:line 2: NUL byte in a field");
}

/* The stream reader reads the same dialect and counts physical lines. */
static void test_csv_stream(void) {
  const char text[] = "h1,h2\r\n\"x\ny\",2\nlast";
  FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  g_autoptr(GPtrArray) r = g_ptr_array_new_with_free_func(g_free);
  guint line = 0;
  g_autoptr(GError) e = NULL;
  CU_ASSERT_TRUE(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_EQUAL(line, 1);
  CU_ASSERT_STRING_EQUAL(g_ptr_array_index(r, 1), "h2");
  CU_ASSERT_TRUE(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_EQUAL(line, 3);
  CU_ASSERT_STRING_EQUAL(g_ptr_array_index(r, 0), "x\ny");
  CU_ASSERT_TRUE(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_STRING_EQUAL(g_ptr_array_index(r, 0), "last");
  CU_ASSERT_FALSE(sim_csv_read_record(f, r, &line, &e));
  CU_ASSERT_PTR_NULL(e);
  fclose(f);
}

int register_suites(void) {
  ADD_SUITE("input", TEST(test_json_ok), TEST(test_json_empty), TEST(test_json_syntax),
            TEST(test_read_missing_dir_device), TEST(test_read_fifo), TEST(test_read_cap));
  ADD_SUITE("csv", TEST(test_csv_quotes), TEST(test_csv_crlf_and_end), TEST(test_csv_ragged_and_nul),
            TEST(test_csv_stream));
  return 0;
}
