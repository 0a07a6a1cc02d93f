/* test_params.c: unit tests of parameter tables, their validation messages, defaults, help and --set. */
#include "params.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cunit-main.h"

typedef struct {
  double rate_hps;  /* (0, inf) */
  double frac;      /* (0, 1] */
  double offset_ms; /* (-inf, 5] */
  double delay_ms;  /* [0, inf) */
  int64_t count;    /* [1, 100] */
  gboolean verbose;
  char *label;
  int mode;
  double share; /* required, [0, 1] */
} TestParams;

static const char *const mode_choices[] = {"fast", "slow", "off", NULL};

static const SimParamSpec test_specs[] = {
    {.name = "rate_hps",
     .type = SIM_PARAM_NUMBER,
     .unit = "H/s",
     .min = 0,
     .max = INFINITY,
     .min_open = TRUE,
     .def = 2.5,
     .offset = offsetof(TestParams, rate_hps),
     .help = "hash rate"},
    {.name = "frac",
     .type = SIM_PARAM_NUMBER,
     .unit = "",
     .min = 0,
     .max = 1,
     .min_open = TRUE,
     .def = 0.5,
     .offset = offsetof(TestParams, frac),
     .help = "a fraction"},
    {.name = "offset_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "ms",
     .min = -INFINITY,
     .max = 5,
     .def = 0,
     .offset = offsetof(TestParams, offset_ms),
     .help = "clock offset"},
    {.name = "delay_ms",
     .type = SIM_PARAM_NUMBER,
     .unit = "ms",
     .min = 0,
     .max = INFINITY,
     .def = 1,
     .offset = offsetof(TestParams, delay_ms),
     .help = "delay"},
    {.name = "count",
     .type = SIM_PARAM_INT,
     .min = 1,
     .max = 100,
     .def = 10,
     .offset = offsetof(TestParams, count),
     .help = "how many"},
    {.name = "verbose",
     .type = SIM_PARAM_BOOL,
     .def = 1,
     .offset = offsetof(TestParams, verbose),
     .help = "talk more"},
    {.name = "label",
     .type = SIM_PARAM_STRING,
     .def_str = "node",
     .offset = offsetof(TestParams, label),
     .help = "a name"},
    {.name = "mode",
     .type = SIM_PARAM_ENUM,
     .def_str = "slow",
     .choices = mode_choices,
     .offset = offsetof(TestParams, mode),
     .help = "speed"},
    {.name = "share",
     .type = SIM_PARAM_NUMBER,
     .min = 0,
     .max = 1,
     .required = TRUE,
     .offset = offsetof(TestParams, share),
     .help = "hash share"},
};
#define N_TEST_SPECS G_N_ELEMENTS(test_specs)

static const char *const extra_keys[] = {"model", "comment", NULL};

/* Parses `text` as a JSON object at "$.m" with a diag for "s.json"; returns the diag (free it). */
static SimDiag *parse_text(const char *text, TestParams *p, gboolean *ok, json_t **obj_out) {
  json_error_t err;
  json_t *obj = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
  memset(p, 0, sizeof *p);
  SimDiag *diag = sim_diag_new("s.json");
  *ok = sim_params_parse(test_specs, N_TEST_SPECS, obj, "$.m", extra_keys, p, diag);
  if (obj_out)
    *obj_out = obj;
  else
    json_decref(obj);
  return diag;
}

/* Asserts that parsing `text` fails with exactly the one message `expected`. */
static void expect_one(const char *text, const char *expected) {
  TestParams p;
  gboolean ok = TRUE;
  g_autoptr(SimDiag) diag = parse_text(text, &p, &ok, NULL);
  CU_ASSERT_FALSE(ok);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 1);
  if (sim_diag_count(diag) >= 1) {
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), expected);
    if (strcmp(sim_diag_get(diag, 0), expected) != 0)
      fprintf(stderr, "\n  got:      %s\n  expected: %s\n", sim_diag_get(diag, 0), expected);
  }
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
}

/* ---- SimDiag ---- */

static void test_diag_with_file(void) {
  g_autoptr(SimDiag) diag = sim_diag_new("scenarios/x.json");
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  sim_diag_add(diag, "$.pools[3].hash_share", "must be in [%d, %d]", 0, 1);
  sim_diag_add_at(diag, 3, 14, "syntax error");
  CU_ASSERT_EQUAL(sim_diag_count(diag), 2);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "scenarios/x.json: $.pools[3].hash_share: must be in [0, 1]");
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 1), "scenarios/x.json:3:14: syntax error");
  g_autofree char *all = sim_diag_join(diag);
  CU_ASSERT_STRING_EQUAL(all, "scenarios/x.json: $.pools[3].hash_share: must be in [0, 1]\n"
                              "scenarios/x.json:3:14: syntax error");
}

static void test_diag_without_file(void) {
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  g_autofree char *empty = sim_diag_join(diag);
  CU_ASSERT_STRING_EQUAL(empty, "");
  sim_diag_add(diag, "$.a", "bad %s", "thing");
  sim_diag_add_raw(diag, "plain");
  CU_ASSERT_EQUAL(sim_diag_count(diag), 2);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "$.a: bad thing");
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 1), "plain");
  g_autofree char *all = sim_diag_join(diag);
  CU_ASSERT_STRING_EQUAL(all, "$.a: bad thing\nplain");
}

/* Problems at or below an attributed path name the attribution instead of the file; the latest covering
 * attribution wins; a path that merely shares a prefix ("$.ab" with "$.a") is not covered. */
static void test_diag_attribute(void) {
  g_autoptr(SimDiag) diag = sim_diag_new("x.json");
  sim_diag_attribute(diag, "$.a", "--set a");
  sim_diag_attribute(diag, "$.p[2]", "--set p[2]");
  sim_diag_attribute(diag, "$.p[2].x", "--set $.p[02].x");
  sim_diag_add(diag, "$.a", "bad");
  sim_diag_add(diag, "$.a.b", "bad");
  sim_diag_add(diag, "$.a[0]", "bad");
  sim_diag_add(diag, "$.ab", "bad");
  sim_diag_add(diag, "$.p[2].x", "bad");
  sim_diag_add(diag, "$.p[2].y", "bad");
  sim_diag_add(diag, "$.p[20]", "bad");
  sim_diag_add(diag, "$", "bad");
  sim_diag_add_raw(diag, "raw");
  sim_diag_add_plain(diag, "plain %d", 1);
  const char *want[] = {"--set a: bad",         "--set a: $.a.b: bad",
                        "--set a: $.a[0]: bad", "x.json: $.ab: bad",
                        "--set $.p[02].x: bad", "--set p[2]: $.p[2].y: bad",
                        "x.json: $.p[20]: bad", "x.json: $: bad",
                        "x.json: raw",          "plain 1"};
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(diag), G_N_ELEMENTS(want));
  for (guint i = 0; i < G_N_ELEMENTS(want); i++)
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, i), want[i]);
  /* A later attribution of a wider path takes over what it covers. */
  sim_diag_attribute(diag, "$.p", "--set p");
  sim_diag_add(diag, "$.p[2].x", "bad");
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, G_N_ELEMENTS(want)), "--set p: $.p[2].x: bad");
}

/* ---- sim_params_parse: success and defaults ---- */

static void test_parse_defaults(void) {
  TestParams p;
  gboolean ok = FALSE;
  json_t *obj = NULL;
  g_autoptr(SimDiag) diag = parse_text("{\"share\": 0.25, \"model\": \"m1\"}", &p, &ok, &obj);
  g_autoptr(json_t) guard = obj;
  CU_ASSERT_TRUE(ok);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  g_autofree char *dump = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(dump, "{\"count\":10,\"delay_ms\":1.0,\"frac\":0.5,\"label\":\"node\","
                               "\"mode\":\"slow\",\"model\":\"m1\",\"offset_ms\":0.0,"
                               "\"rate_hps\":2.5,\"share\":0.25,\"verbose\":true}");
  CU_ASSERT_DOUBLE_EQUAL(p.share, 0.25, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.rate_hps, 2.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.frac, 0.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.offset_ms, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.delay_ms, 1, 0);
  CU_ASSERT_EQUAL(p.count, 10);
  CU_ASSERT_TRUE(p.verbose);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p.label);
  CU_ASSERT_STRING_EQUAL(p.label, "node");
  CU_ASSERT_EQUAL(p.mode, 1);
  /* Defaults go after the given keys, in table order. */
  const char *first = json_object_iter_key(json_object_iter(obj));
  CU_ASSERT_STRING_EQUAL(first, "share");
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
  CU_ASSERT_PTR_NULL(p.label);
}

static void test_parse_given_values(void) {
  TestParams p;
  gboolean ok = FALSE;
  json_t *obj = NULL;
  g_autoptr(SimDiag) diag =
      parse_text("{\"rate_hps\": 7, \"frac\": 1, \"offset_ms\": -1e300, \"delay_ms\": 0, \"count\": 100.0,"
                 " \"verbose\": false, \"label\": \"héllo\", \"mode\": \"off\", \"share\": 0,"
                 " \"comment\": [1, 2]}",
                 &p, &ok, &obj);
  g_autoptr(json_t) guard = obj;
  CU_ASSERT_TRUE(ok);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.rate_hps, 7, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.frac, 1, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.offset_ms, -1e300, 0);
  CU_ASSERT_DOUBLE_EQUAL(p.delay_ms, 0, 0);
  CU_ASSERT_EQUAL(p.count, 100);
  CU_ASSERT_FALSE(p.verbose);
  CU_ASSERT_STRING_EQUAL(p.label, "héllo");
  CU_ASSERT_EQUAL(p.mode, 2);
  CU_ASSERT_DOUBLE_EQUAL(p.share, 0, 0);
  CU_ASSERT_EQUAL(json_object_size(obj), 10); /* nothing added: every key was given */
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
}

static void test_defaults_and_clear(void) {
  TestParams p;
  memset(&p, 0xff, sizeof p); /* defaults must not read what is there */
  sim_params_defaults(test_specs, N_TEST_SPECS, &p);
  CU_ASSERT_DOUBLE_EQUAL(p.rate_hps, 2.5, 0);
  CU_ASSERT_EQUAL(p.count, 10);
  CU_ASSERT_TRUE(p.verbose);
  CU_ASSERT_STRING_EQUAL(p.label, "node");
  CU_ASSERT_EQUAL(p.mode, 1);
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
  CU_ASSERT_PTR_NULL(p.label);
  sim_params_clear(test_specs, N_TEST_SPECS, NULL); /* accepts NULL */
}

/* ---- sim_params_parse: problems ---- */

static void test_not_object(void) {
  expect_one("[1, 2]", "s.json: $.m: must be an object");
  expect_one("null", "s.json: $.m: must be an object");
}

static void test_unknown_key(void) {
  expect_one("{\"share\": 0.5, \"colour\": 1}",
             "s.json: $.m.colour: unknown key (expected one of: rate_hps, frac, offset_ms, delay_ms, "
             "count, verbose, label, mode, share, model, comment)");
  expect_one("{\"share\": 0.5, \"a.b\": 1}",
             "s.json: $.m[\"a.b\"]: unknown key (expected one of: rate_hps, frac, offset_ms, "
             "delay_ms, count, verbose, label, mode, share, model, comment)");
}

static void test_unknown_key_no_extras(void) {
  json_t *obj = json_pack("{s:f, s:i}", "share", 0.5, "zz", 1);
  TestParams p = {0};
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  CU_ASSERT_FALSE(sim_params_parse(test_specs, N_TEST_SPECS, obj, "$", NULL, &p, diag));
  CU_ASSERT_EQUAL(sim_diag_count(diag), 1);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0),
                         "$.zz: unknown key (expected one of: rate_hps, frac, offset_ms, delay_ms, "
                         "count, verbose, label, mode, share)");
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
  json_decref(obj);
}

static void test_wrong_types(void) {
  expect_one("{\"share\": \"x\"}", "s.json: $.m.share: must be a number (got string)");
  expect_one("{\"share\": 0.5, \"rate_hps\": true}", "s.json: $.m.rate_hps: must be a number (got true)");
  expect_one("{\"share\": 0.5, \"rate_hps\": null}", "s.json: $.m.rate_hps: must be a number (got null)");
  expect_one("{\"share\": 0.5, \"rate_hps\": {}}", "s.json: $.m.rate_hps: must be a number (got object)");
  expect_one("{\"share\": 0.5, \"rate_hps\": []}", "s.json: $.m.rate_hps: must be a number (got array)");
  expect_one("{\"share\": 0.5, \"count\": 1.5}", "s.json: $.m.count: must be an integer (got real 1.5)");
  expect_one("{\"share\": 0.5, \"count\": 2.0000001}",
             "s.json: $.m.count: must be an integer (got real 2.0000001)");
  expect_one("{\"share\": 0.5, \"count\": \"3\"}", "s.json: $.m.count: must be an integer (got string)");
  expect_one("{\"share\": 0.5, \"verbose\": 1}", "s.json: $.m.verbose: must be a boolean (got integer)");
  expect_one("{\"share\": 0.5, \"verbose\": \"yes\"}", "s.json: $.m.verbose: must be a boolean (got string)");
  expect_one("{\"share\": 0.5, \"label\": 3}", "s.json: $.m.label: must be a string (got integer)");
  expect_one("{\"share\": 0.5, \"label\": false}", "s.json: $.m.label: must be a string (got false)");
  expect_one("{\"share\": 0.5, \"mode\": 2.5}",
             "s.json: $.m.mode: must be one of: fast, slow, off (got real 2.5)");
}

static void test_enum_not_in_choices(void) {
  expect_one("{\"share\": 0.5, \"mode\": \"quick\"}",
             "s.json: $.m.mode: must be one of: fast, slow, off (got \"quick\")");
  expect_one("{\"share\": 0.5, \"mode\": \"Fast\"}",
             "s.json: $.m.mode: must be one of: fast, slow, off (got \"Fast\")");
}

static void test_bounds(void) {
  /* open lower bound, unbounded above */
  expect_one("{\"share\": 0.5, \"rate_hps\": 0}", "s.json: $.m.rate_hps: must be > 0 (got 0)");
  expect_one("{\"share\": 0.5, \"rate_hps\": -0.5}", "s.json: $.m.rate_hps: must be > 0 (got -0.5)");
  /* open lower, closed upper */
  expect_one("{\"share\": 0.5, \"frac\": 0.0}", "s.json: $.m.frac: must be in (0, 1] (got 0)");
  expect_one("{\"share\": 0.5, \"frac\": 1.0000001}", "s.json: $.m.frac: must be in (0, 1] (got 1.0000001)");
  /* closed lower, unbounded above */
  expect_one("{\"share\": 0.5, \"delay_ms\": -1e-9}", "s.json: $.m.delay_ms: must be >= 0 (got -1e-09)");
  /* unbounded below */
  expect_one("{\"share\": 0.5, \"offset_ms\": 6}", "s.json: $.m.offset_ms: must be <= 5 (got 6)");
  /* closed both, integers */
  expect_one("{\"share\": 0.5, \"count\": 0}", "s.json: $.m.count: must be in [1, 100] (got 0)");
  expect_one("{\"share\": 0.5, \"count\": 101}", "s.json: $.m.count: must be in [1, 100] (got 101)");
  expect_one("{\"share\": 0.5, \"count\": 200.0}", "s.json: $.m.count: must be in [1, 100] (got 200)");
  expect_one("{\"share\": 0.5, \"count\": -9223372036854775808}",
             "s.json: $.m.count: must be in [1, 100] (got -9223372036854775808)");
  expect_one("{\"share\": 1e300}", "s.json: $.m.share: must be in [0, 1] (got 1e+300)");
}

static void test_int_unbounded_range(void) {
  static const SimParamSpec spec[] = {{.name = "n",
                                       .type = SIM_PARAM_INT,
                                       .min = -INFINITY,
                                       .max = INFINITY,
                                       .def = 0,
                                       .offset = 0,
                                       .help = "n"}};
  int64_t n = 0;
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  g_autoptr(json_t) big = json_pack("{s:f}", "n", 1e300);
  CU_ASSERT_FALSE(sim_params_parse(spec, 1, big, "$", NULL, &n, diag));
  g_autoptr(json_t) fine = json_pack("{s:f}", "n", -4e15);
  CU_ASSERT_TRUE(sim_params_parse(spec, 1, fine, "$", NULL, &n, diag));
  CU_ASSERT_EQUAL(n, INT64_C(-4000000000000000));
  g_autoptr(json_t) max = json_pack("{s:I}", "n", (json_int_t)INT64_MAX);
  CU_ASSERT_TRUE(sim_params_parse(spec, 1, max, "$", NULL, &n, diag));
  CU_ASSERT_EQUAL(n, INT64_MAX);
  CU_ASSERT_EQUAL(sim_diag_count(diag), 1);
  CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, 0), "$.n: must be a 64-bit integer (got real 1e+300)");
}

static void test_missing_required(void) {
  expect_one("{}", "s.json: $.m.share: missing required key");
  TestParams p;
  gboolean ok = TRUE;
  json_t *obj = NULL;
  g_autoptr(SimDiag) diag = parse_text("{\"count\": 5}", &p, &ok, &obj);
  g_autoptr(json_t) guard = obj;
  CU_ASSERT_FALSE(ok);
  CU_ASSERT_PTR_NULL(json_object_get(obj, "share")); /* no default invented for a required key */
  CU_ASSERT_EQUAL(p.count, 5);
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
}

static void test_several_problems_in_order(void) {
  TestParams p;
  gboolean ok = TRUE;
  g_autoptr(SimDiag) diag =
      parse_text("{\"mode\": \"x\", \"bogus\": 1, \"count\": 0.5, \"label\": \"ok\", \"frac\": 2,"
                 " \"verbose\": null, \"model\": \"fine\"}",
                 &p, &ok, NULL);
  CU_ASSERT_FALSE(ok);
  CU_ASSERT_EQUAL_FATAL(sim_diag_count(diag), 6);
  g_autofree char *all = sim_diag_join(diag);
  CU_ASSERT_STRING_EQUAL(
      all, "s.json: $.m.mode: must be one of: fast, slow, off (got \"x\")\n"
           "s.json: $.m.bogus: unknown key (expected one of: rate_hps, frac, offset_ms, delay_ms, "
           "count, verbose, label, mode, share, model, comment)\n"
           "s.json: $.m.count: must be an integer (got real 0.5)\n"
           "s.json: $.m.frac: must be in (0, 1] (got 2)\n"
           "s.json: $.m.verbose: must be a boolean (got null)\n"
           "s.json: $.m.share: missing required key");
  CU_ASSERT_STRING_EQUAL(p.label, "ok"); /* valid values are still stored */
  sim_params_clear(test_specs, N_TEST_SPECS, &p);
}

/* ---- sim_params_describe ---- */

static void test_describe(void) {
  g_autoptr(GString) out = g_string_new("head\n");
  sim_params_describe(test_specs, N_TEST_SPECS, 2, out);
  CU_ASSERT_TRUE(g_str_has_prefix(out->str, "head\n"));
  g_auto(GStrv) lines = g_strsplit(out->str + 5, "\n", -1);
  CU_ASSERT_EQUAL_FATAL(g_strv_length(lines), N_TEST_SPECS + 1);
  CU_ASSERT_STRING_EQUAL(lines[N_TEST_SPECS], ""); /* each line ends with a newline */
  ptrdiff_t help_col = -1;
  for (guint i = 0; i < N_TEST_SPECS; i++) {
    const char *line = lines[i];
    CU_ASSERT_TRUE(g_str_has_prefix(line, "  "));
    CU_ASSERT_NOT_EQUAL(line[2], ' ');
    CU_ASSERT_TRUE(g_str_has_prefix(line + 2, test_specs[i].name));
    CU_ASSERT_TRUE(g_str_has_suffix(line, test_specs[i].help));
    /* Aligned: every help text starts in the same column. */
    const char *h = line + strlen(line) - strlen(test_specs[i].help);
    if (help_col < 0) help_col = h - line;
    CU_ASSERT_EQUAL(h - line, help_col);
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[0], "number"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[0], "[H/s]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[0], "> 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[0], "default 2.5"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[1], "(0, 1]"));
  CU_ASSERT_PTR_NULL(strstr(lines[1], "[]")); /* no unit, no empty brackets */
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[2], "<= 5"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[3], ">= 0"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[4], "integer"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[4], "[1, 100]"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[4], "default 10"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[5], "boolean"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[5], "default true"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[6], "default \"node\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[7], "one of fast|slow|off"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[7], "default slow"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lines[8], "required"));
  CU_ASSERT_PTR_NULL(strstr(lines[8], "default"));
}

/* ---- sim_json_set_path ---- */

static json_t *base_doc(void) {
  json_error_t err;
  json_t *doc = json_loads("{\"stop\": {\"heights\": 10}, \"pools\": [{\"hash_share\": 0.125},"
                           " {\"hash_share\": 0.375}, {\"hash_share\": 0.5}], \"n\": 3}",
                           JSON_REJECT_DUPLICATES, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  return doc;
}

/* Applies each assignment in order, asserting success, and compares the sorted compact dump. */
static void expect_set(const char *const *assignments, const char *expected) {
  g_autoptr(json_t) doc = base_doc();
  for (guint i = 0; assignments[i]; i++) {
    g_autoptr(GError) error = NULL;
    gboolean ok = sim_json_set_path(doc, assignments[i], &error);
    CU_ASSERT_TRUE(ok);
    CU_ASSERT_PTR_NULL(error);
    if (error) fprintf(stderr, "\n  %s\n", error->message);
  }
  g_autofree char *dump = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(dump, expected);
  if (strcmp(dump, expected) != 0) fprintf(stderr, "\n  got:      %s\n  expected: %s\n", dump, expected);
}

static void expect_set_error(const char *assignment, int code, const char *expected) {
  g_autoptr(json_t) doc = base_doc();
  g_autofree char *before = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
  g_autoptr(GError) error = NULL;
  CU_ASSERT_FALSE(sim_json_set_path(doc, assignment, &error));
  CU_ASSERT_PTR_NOT_NULL_FATAL(error);
  CU_ASSERT_TRUE(g_error_matches(error, SIM_PARAMS_ERROR, code));
  CU_ASSERT_STRING_EQUAL(error->message, expected);
  if (strcmp(error->message, expected) != 0)
    fprintf(stderr, "\n  got:      %s\n  expected: %s\n", error->message, expected);
  g_autofree char *after = json_dumps(doc, JSON_SORT_KEYS | JSON_COMPACT);
  CU_ASSERT_STRING_EQUAL(before, after); /* a failed --set changes nothing */
}

#define POOLS "\"pools\":[{\"hash_share\":0.125},{\"hash_share\":0.375},{\"hash_share\":0.5}]"

static void test_set_existing_and_nested(void) {
  expect_set((const char *const[]){"stop.heights=20", NULL}, "{\"n\":3," POOLS ",\"stop\":{\"heights\":20}}");
  expect_set((const char *const[]){"$.network.delay.median_ms=150", NULL},
             "{\"n\":3,\"network\":{\"delay\":{\"median_ms\":150}}," POOLS ",\"stop\":{\"heights\":10}}");
  expect_set((const char *const[]){"$n=4", "stop.new-key_2=1", NULL},
             "{\"n\":4," POOLS ",\"stop\":{\"heights\":10,\"new-key_2\":1}}");
}

static void test_set_array_index(void) {
  expect_set((const char *const[]){"pools[2].hash_share=0.75", "$.pools[0]={\"hash_share\":0.25}", NULL},
             "{\"n\":3,\"pools\":[{\"hash_share\":0.25},{\"hash_share\":0.375},{\"hash_share\":0.75}],"
             "\"stop\":{\"heights\":10}}");
  expect_set((const char *const[]){"pools[1]=[1,[2]]", "pools[1][1][0]=true", NULL},
             "{\"n\":3,\"pools\":[{\"hash_share\":0.125},[1,[true]],{\"hash_share\":0.5}],"
             "\"stop\":{\"heights\":10}}");
}

static void test_set_value_kinds(void) {
  expect_set((const char *const[]){"a=1.5", "b=true", "c=null", "d=\"quoted\"", "e=plain text",
                                   "f={\"x\": [1, 2]}", "g=", "h=12abc", "i=a=b", "j= 7 ", NULL},
             "{\"a\":1.5,\"b\":true,\"c\":null,\"d\":\"quoted\",\"e\":\"plain text\","
             "\"f\":{\"x\":[1,2]},\"g\":\"\",\"h\":\"12abc\",\"i\":\"a=b\",\"j\":7,\"n\":3," POOLS
             ",\"stop\":{\"heights\":10}}");
  /* A real stays a real, an integer an integer. */
  g_autoptr(json_t) doc = json_object();
  CU_ASSERT_TRUE(sim_json_set_path(doc, "x=600", NULL));
  CU_ASSERT_TRUE(json_is_integer(json_object_get(doc, "x")));
  CU_ASSERT_TRUE(sim_json_set_path(doc, "y=600.0", NULL));
  CU_ASSERT_TRUE(json_is_real(json_object_get(doc, "y")));
}

static void test_set_path_errors(void) {
  expect_set_error("pools[9].hash_share=1", SIM_PARAMS_ERROR_PATH,
                   "--set pools[9].hash_share: index 9 out of range (array has 3 elements)");
  expect_set_error("n.b=1", SIM_PARAMS_ERROR_PATH, "--set n.b: n is not an object");
  expect_set_error("$.stop.heights.x.y=1", SIM_PARAMS_ERROR_PATH,
                   "--set $.stop.heights.x.y: stop.heights is not an object");
  expect_set_error("stop[0]=1", SIM_PARAMS_ERROR_PATH, "--set stop[0]: stop is not an array");
  expect_set_error("pools.x=1", SIM_PARAMS_ERROR_PATH, "--set pools.x: pools is not an object");
  expect_set_error("[0]=1", SIM_PARAMS_ERROR_PATH, "--set [0]: $ is not an array");
  expect_set_error("miners[0].x=1", SIM_PARAMS_ERROR_PATH,
                   "--set miners[0].x: miners does not exist (arrays are not created)");
  expect_set_error("a.b.c[1]=1", SIM_PARAMS_ERROR_PATH,
                   "--set a.b.c[1]: a.b.c does not exist (arrays are not created)");
}

/* A value that starts like JSON text ('{', '[' or '"', after blanks) must be JSON: taken as a string it hid
 * the typing error (at a key that takes strings, completely). Other non-JSON values stay strings. */
static void test_set_json_value_errors(void) {
  const char *tail = "; a value that starts with '{', '[' or '\"' must be valid JSON";
  const struct {
    const char *assignment, *why;
  } cases[] = {
      {"pools=[{\"name\":1", "1:10: '}' expected near end of file"},
      {"chain.x={bad", "1:4: string or '}' expected near 'bad'"},
      {"name=\"abc", "1:4: premature end of input near '\"abc'"},
      {"a=[1] x", "1:5: end of file expected near 'x'"},
      {"a={\"k\":1,\"k\":2}", "1:10: duplicate object key near '\"k\"'"},
      {"a=  [1,]", "1:6: unexpected token near ']'"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *eq = strchr(cases[i].assignment, '=');
    g_autofree char *want =
        g_strdup_printf("--set %.*s: invalid JSON value (%s)%s", (int)(eq - cases[i].assignment),
                        cases[i].assignment, cases[i].why, tail);
    expect_set_error(cases[i].assignment, SIM_PARAMS_ERROR_SYNTAX, want);
  }
  expect_set((const char *const[]){"a=x{", "b=1e-3x", "c='[1'", NULL},
             "{\"a\":\"x{\",\"b\":\"1e-3x\",\"c\":\"'[1'\",\"n\":3," POOLS ",\"stop\":{\"heights\":10}}");
}

/* The path a --set assigns, in the form validation messages use. */
static void test_set_target(void) {
  const struct {
    const char *assignment, *want;
  } cases[] = {
      {"stop.heights=5", "$.stop.heights"},
      {"$.stop.heights=5", "$.stop.heights"},
      {"$stop=5", "$.stop"},
      {"pools[02].hash_share=1", "$.pools[2].hash_share"},
      {"a[0][1].b-c_d=x=y", "$.a[0][1].b-c_d"},
      {"[3]=1", "$[3]"},
      {"no-equals", NULL},
      {"a..b=1", NULL},
      {"=1", NULL},
      {"$.=1", NULL},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *got = sim_json_set_target(cases[i].assignment);
    if (cases[i].want) {
      CU_ASSERT_STRING_EQUAL(got, cases[i].want);
    } else {
      CU_ASSERT_PTR_NULL(got);
    }
  }
}

static void test_set_syntax_errors(void) {
  expect_set_error("stop.heights", SIM_PARAMS_ERROR_SYNTAX,
                   "--set stop.heights: missing '=' (expected PATH=VALUE)");
  expect_set_error("=5", SIM_PARAMS_ERROR_SYNTAX, "--set : empty path (expected PATH=VALUE)");
  expect_set_error("$.=5", SIM_PARAMS_ERROR_SYNTAX, "--set $.: empty path (expected PATH=VALUE)");
  expect_set_error("a..b=5", SIM_PARAMS_ERROR_SYNTAX, "--set a..b: expected a member name at \".b\"");
  expect_set_error("a.=5", SIM_PARAMS_ERROR_SYNTAX,
                   "--set a.: expected a member name at the end of the path");
  expect_set_error("pools[x]=5", SIM_PARAMS_ERROR_SYNTAX, "--set pools[x]: expected an index at \"x]\"");
  expect_set_error("pools[-1]=5", SIM_PARAMS_ERROR_SYNTAX, "--set pools[-1]: expected an index at \"-1]\"");
  expect_set_error("pools[1=5", SIM_PARAMS_ERROR_SYNTAX, "--set pools[1: expected ']' at \"\"");
  expect_set_error("a b=5", SIM_PARAMS_ERROR_SYNTAX, "--set a b: expected '.' or '[' at \" b\"");
  expect_set_error("pools.[0]=5", SIM_PARAMS_ERROR_SYNTAX,
                   "--set pools.[0]: expected a member name at \"[0]\"");
  expect_set_error("pools[99999999999999999999999]=5", SIM_PARAMS_ERROR_SYNTAX,
                   "--set pools[99999999999999999999999]: index too large at "
                   "\"[99999999999999999999999]\"");
}

int register_suites(void) {
  ADD_SUITE("diag", TEST(test_diag_with_file), TEST(test_diag_without_file), TEST(test_diag_attribute));
  ADD_SUITE("parse", TEST(test_parse_defaults), TEST(test_parse_given_values), TEST(test_defaults_and_clear),
            TEST(test_not_object), TEST(test_unknown_key), TEST(test_unknown_key_no_extras),
            TEST(test_wrong_types), TEST(test_enum_not_in_choices), TEST(test_bounds),
            TEST(test_int_unbounded_range), TEST(test_missing_required),
            TEST(test_several_problems_in_order));
  ADD_SUITE("describe", TEST(test_describe));
  ADD_SUITE("set-path", TEST(test_set_existing_and_nested), TEST(test_set_array_index),
            TEST(test_set_value_kinds), TEST(test_set_path_errors), TEST(test_set_syntax_errors),
            TEST(test_set_json_value_errors), TEST(test_set_target));
  return 0;
}
