/* test_scenario.c: the scenario loader accepts every shipped scenario and rejects the bad corpus in
 * tests/data/bad/ with exactly the messages in the matching .err files. */
#include <glib/gstdio.h>
#include <string.h>

#include "cunit-main.h"
#include "params.h"
#include "scenario.h"

/* Tests run from the source root (meson's workdir). */
static void test_shipped_scenarios_load(void) {
  const char *dirs[] = {"scenarios", "scenarios/bench", "scenarios/scale"};
  guint loaded = 0;
  for (guint d = 0; d < G_N_ELEMENTS(dirs); d++) {
    GDir *dir = g_dir_open(dirs[d], 0, NULL);
    if (!dir) continue;
    const char *name;
    while ((name = g_dir_read_name(dir))) {
      if (!g_str_has_suffix(name, ".json")) continue;
      char *path = g_build_filename(dirs[d], name, NULL);
      SimDiag *diag = sim_diag_new(path);
      SimScenario *sc = sim_scenario_load_file(path, NULL, diag);
      if (!sc) {
        char *m = sim_diag_join(diag);
        fprintf(stderr, "%s\n", m);
        g_free(m);
      }
      CU_ASSERT(sc != NULL);
      CU_ASSERT_EQUAL(sim_diag_count(diag), 0);
      loaded += sc != NULL;
      sim_scenario_free(sc);
      sim_diag_free(diag);
      g_free(path);
    }
    g_dir_close(dir);
  }
  CU_ASSERT(loaded >= 2); /* at least pools-2019 and tiny */
}

static void test_bad_corpus(void) {
  GDir *dir = g_dir_open("tests/data/bad", 0, NULL);
  CU_ASSERT_FATAL(dir != NULL);
  const char *name;
  guint checked = 0;
  while ((name = g_dir_read_name(dir))) {
    if (!g_str_has_suffix(name, ".json")) continue;
    char *path = g_build_filename("tests/data/bad", name, NULL);
    char *err_path = g_strdup_printf("%.*s.err", (int)(strlen(path) - 5), path);
    char *expected = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(err_path, &expected, NULL, NULL));
    g_strchomp(expected);
    SimDiag *diag = sim_diag_new(path);
    SimScenario *sc = sim_scenario_load_file(path, NULL, diag);
    CU_ASSERT(sc == NULL);
    char *got = sim_diag_join(diag);
    if (strcmp(got, expected) != 0) fprintf(stderr, "\n%s:\n got: %s\nwant: %s\n", path, got, expected);
    CU_ASSERT_STRING_EQUAL(got, expected);
    checked++;
    g_free(got);
    sim_scenario_free(sc);
    sim_diag_free(diag);
    g_free(expected);
    g_free(err_path);
    g_free(path);
  }
  g_dir_close(dir);
  CU_ASSERT(checked >= 14);
}

static SimScenario *load_str(const char *json, const char *const *sets, char **messages) {
  SimDiag *diag = sim_diag_new("s.json");
  SimScenario *sc = sim_scenario_load_data(json, strlen(json), "s.json", sets, diag);
  *messages = sim_diag_join(diag);
  sim_diag_free(diag);
  return sc;
}

static const char *const minimal = "{\"stop\": {\"heights\": 10}, \"pools\": [{\"name\": \"A\", \"hash_share\": 1}]}";

static void test_defaults_and_echo(void) {
  char *msgs;
  SimScenario *sc = load_str(minimal, NULL, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_STRING_EQUAL(msgs, "");
  CU_ASSERT_STRING_EQUAL(sc->name, "s"); /* from the file name */
  CU_ASSERT_EQUAL(sc->seed, 1);
  CU_ASSERT_EQUAL(sc->stop.settle_heights, 7);
  CU_ASSERT_EQUAL(sc->pow.stop_height, 17);
  CU_ASSERT_DOUBLE_EQUAL(sc->pow.chain.target_interval_s, 13.32, 1e-12);
  CU_ASSERT_STRING_EQUAL(sc->pow.uncles.model->name, "ethereum");
  CU_ASSERT_STRING_EQUAL(sc->pow.network.model->name, "pool-delay");
  /* The echo holds every default, nested models included. */
  json_t *d = sc->doc;
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(d, "uncles"), "model")), "ethereum");
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(d, "uncles"), "max_uncles")), 2);
  json_t *delay = json_object_get(json_object_get(d, "network"), "delay");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(delay, "model")), "lognormal");
  CU_ASSERT(json_is_real(json_object_get(delay, "median_ms")));
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_array_get(json_object_get(d, "pools"), 0), "miners")), 1);
  sim_scenario_free(sc);
  g_free(msgs);
}

static void test_set_overrides(void) {
  char *msgs;
  const char *sets[] = {"stop.heights=99", "$.pools[0].name=Z", "network.delay={\"model\":\"constant\",\"value_ms\":5}",
                        "seed=42", NULL};
  SimScenario *sc = load_str(minimal, sets, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_EQUAL(sc->stop.heights, 99);
  CU_ASSERT_STRING_EQUAL(sc->pools[0].name, "Z");
  CU_ASSERT_EQUAL(sc->seed, 42);
  CU_ASSERT_STRING_EQUAL(((const SimModelRef *)sc->pow.network.params)->model->name, "constant");
  sim_scenario_free(sc);
  g_free(msgs);

  /* A bad path and a bad value are both reported, with what was given. */
  const char *bad[] = {"pools[3].hash_share=0.5", "stop.heights=-1", NULL};
  sc = load_str(minimal, bad, &msgs);
  CU_ASSERT(sc == NULL);
  CU_ASSERT_STRING_EQUAL(msgs, "s.json: --set pools[3].hash_share: index 3 out of range (array has 1 element)");
  g_free(msgs);
  const char *bad_value[] = {"stop.heights=-1", NULL};
  sc = load_str(minimal, bad_value, &msgs);
  CU_ASSERT(sc == NULL);
  CU_ASSERT_STRING_EQUAL(msgs, "s.json: $.stop.heights: must be in [0, 1000000000] (got -1)");
  g_free(msgs);
}

/* --set SECTION.model=OTHER resets the section to the other model's defaults: the old model's parameters would be
 * unknown keys. Parameters set after the switch apply; the same model set again keeps the section. */
static void test_set_model_switch(void) {
  char *msgs;
  const char *json = "{\"stop\": {\"heights\": 10}, \"pools\": [{\"name\": \"A\", \"hash_share\": 1}],"
                     " \"uncles\": {\"model\": \"ethereum\", \"max_uncles\": 2, \"comment\": \"c\"},"
                     " \"network\": {\"model\": \"pool-delay\","
                     " \"delay\": {\"model\": \"constant\", \"value_ms\": 7}}}";
  const char *to_none[] = {"uncles.model=none", NULL};
  SimScenario *sc = load_str(json, to_none, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_STRING_EQUAL(sc->pow.uncles.model->name, "none");
  sim_scenario_free(sc);
  g_free(msgs);
  /* A submodel switch, then a parameter of the new model. */
  const char *delay[] = {"network.delay.model=lognormal", "network.delay.median_ms=300", NULL};
  sc = load_str(json, delay, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_STRING_EQUAL(((const SimModelRef *)sc->pow.network.params)->model->name, "lognormal");
  sim_scenario_free(sc);
  g_free(msgs);
  /* The same model again changes nothing: its parameters stay (a bad one is still reported). */
  const char *same[] = {"uncles.model=ethereum", "uncles.max_uncles=-1", NULL};
  sc = load_str(json, same, &msgs);
  CU_ASSERT(sc == NULL);
  CU_ASSERT_STRING_EQUAL(msgs, "s.json: $.uncles.max_uncles: must be in [0, 8] (got -1)");
  g_free(msgs);
  /* A parameter set before the switch is the old model's: gone with it. */
  const char *before[] = {"network.delay.value_ms=9", "network.delay.model=lognormal", NULL};
  sc = load_str(json, before, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  sim_scenario_free(sc);
  g_free(msgs);
}

static void test_shares_normalised(void) {
  char *msgs;
  const char *json = "{\"stop\": {\"heights\": 10}, \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5},"
                     " {\"name\": \"B\", \"hash_share\": 0.5005}]}";
  SimScenario *sc = load_str(json, NULL, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_DOUBLE_EQUAL(sc->pools[0].hash_share + sc->pools[1].hash_share, 1.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(sc->pools[0].hash_share, 0.5 / 1.0005, 1e-15);
  sim_scenario_free(sc);
  g_free(msgs);
}

static void test_missing_file(void) {
  SimDiag *diag = sim_diag_new("no/such/file.json");
  SimScenario *sc = sim_scenario_load_file("no/such/file.json", NULL, diag);
  CU_ASSERT(sc == NULL);
  char *m = sim_diag_join(diag);
  CU_ASSERT_STRING_EQUAL(m, "no/such/file.json: cannot open: No such file or directory");
  g_free(m);
  sim_diag_free(diag);
}


/* ---- include ---- */

static char *put(const char *dir, const char *name, const char *text) {
  char *p = g_build_filename(dir, name, NULL);
  g_autofree char *sub = g_path_get_dirname(p);
  g_mkdir_with_parents(sub, 0700);
  CU_ASSERT_FATAL(g_file_set_contents(p, text, -1, NULL));
  return p;
}

/* Loads `path`; returns the scenario, or NULL with the joined messages in *msgs. */
static SimScenario *load_path(const char *path, const char *const *sets, char **msgs) {
  SimDiag *diag = sim_diag_new(path);
  SimScenario *sc = sim_scenario_load_file(path, sets, diag);
  *msgs = sim_diag_join(diag);
  sim_diag_free(diag);
  return sc;
}

static void rm_rf(const char *path) {
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    GDir *d = g_dir_open(path, 0, NULL);
    const char *n;
    while (d && (n = g_dir_read_name(d))) {
      g_autofree char *p = g_build_filename(path, n, NULL);
      rm_rf(p);
    }
    if (d) g_dir_close(d);
    g_rmdir(path);
  } else {
    g_remove(path);
  }
}

/* Problems a command-line --set caused name the --set, not the file (sim_scenario_load_file); those of the
 * file stay the file's; a path the file lacks keeps the file name, and a malformed value needs none. */
static void test_set_blame(void) {
  g_autofree char *dir = g_dir_make_tmp("scenario-XXXXXX", NULL);
  g_autofree char *f =
      put(dir, "s.json",
          "{\"stop\": {\"heights\": 10}, \"chain\": {\"block_reward_eth\": -1},"
          " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5}, {\"name\": \"B\", \"hash_share\": 0.5}]}");
  const struct {
    const char *sets[3];
    const char *want; /* after the file's own problem */
  } cases[] = {
      {{"chain.target_interval_s=-1"}, "--set chain.target_interval_s: must be in [0.001, 1e+06] (got -1)"},
      {{"$.chain.target_interval_s=abc"}, "--set $.chain.target_interval_s: must be a number (got string)"},
      {{"pools[01].hash_share=2"}, "--set pools[01].hash_share: must be in (0, 1] (got 2)"},
      {{"pools=[{\"name\":\"A\",\"hash_share\":2}]"},
       "--set pools: $.pools[0].hash_share: must be in (0, 1] (got 2)"},
      {{"pools[0].hash_share=2", "pools=[{\"name\":\"A\",\"hash_share\":3}]"},
       "--set pools: $.pools[0].hash_share: must be in (0, 1] (got 3)"},
      {{"chain.x={bad"},
       "--set chain.x: invalid JSON value (1:4: string or '}' expected near 'bad'); a value that "
       "starts with '{', '[' or '\"' must be valid JSON"},
      {{"chain.x=1"},
       "--set chain.x: unknown key (expected one of: target_interval_s, block_reward_eth, difficulty, "
       "fork_choice, initial_difficulty, hashrate_hps, tx_rate_per_s, tx_gas, tx_bytes, header_bytes, "
       "block_gas_limit, empty_window_ms, recommit_s, first_block_number, comment)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *msgs = NULL;
    SimScenario *sc = load_path(f, cases[i].sets, &msgs);
    CU_ASSERT_PTR_NULL(sc);
    g_autofree char *want =
        g_strdup_printf("%s: $.chain.block_reward_eth: must be >= 0 (got -1)\n%s", f, cases[i].want);
    if (strstr(cases[i].want, "invalid JSON")) {
      g_free(want);
      want = g_strdup(cases[i].want); /* the overrides are applied, and fail, before validation */
    }
    if (strcmp(msgs, want) != 0) fprintf(stderr, "\n got: %s\nwant: %s\n", msgs, want);
    CU_ASSERT_STRING_EQUAL(msgs, want);
    sim_scenario_free(sc);
    g_free(msgs);
  }
  /* A path the file lacks: the file is part of the story. */
  char *msgs = NULL;
  CU_ASSERT_PTR_NULL(load_path(f, (const char *const[]){"pools[5].name=x", NULL}, &msgs));
  g_autofree char *want =
      g_strdup_printf("%s: --set pools[5].name: index 5 out of range (array has 2 elements)", f);
  CU_ASSERT_STRING_EQUAL(msgs, want);
  g_free(msgs);
  rm_rf(dir);
}

/* Values each within its own bounds that together would stall the clock or never end are refused with the
 * path of the value to change. */
static void test_runaway_values(void) {
  const struct {
    const char *sets[4];
    const char *want;
  } cases[] = {
      {{"stop.time_s=1e-300"},
       "s.json: $.stop.time_s: must be 0 (unset) or at least 1e-09 s, one tick of the ns "
       "clock (got 1e-300)"},
      {{"stop.time_s=2e9"}, "s.json: $.stop.time_s: must be in [0, 1e+09] (got 2e+09)"},
      {{"stop.heights=0", "stop.time_s=1e9", "chain.target_interval_s=0.5"},
       "s.json: $.chain.target_interval_s: with stop.time_s 1e+09 s the run would mine about 2e+09 blocks, "
       "more "
       "than 1e+09 (the bound of stop.heights): raise the interval, lower stop.time_s or set stop.heights"},
      {{"chain.difficulty=byzantium", "chain.hashrate_hps=1e30"},
       "s.json: $.chain.hashrate_hps: initial_difficulty / hashrate_hps, the first blocks' mean interval, "
       "must be "
       "in [0.001, 1e+06] s (got 2.09e-15 s)"},
      {{"chain.difficulty=byzantium", "chain.hashrate_hps=1e-300"},
       "s.json: $.chain.hashrate_hps: initial_difficulty / hashrate_hps, the first blocks' mean interval, "
       "must be "
       "in [0.001, 1e+06] s (got inf s)"},
      {{"transactions={\"rate_per_s\": 1e6}", "stop.heights=1000000"},
       "s.json: $.transactions.rate_per_s: 1e+06 per second over a run of about 1.33e+07 s would create "
       "about "
       "1.33e+13 transactions, more than 1e+09: lower the rate or stop the run earlier"},
      {{"transactions={\"rate_per_s\": 2000}", "stop.time_s=1e6", "stop.heights=1000000"},
       "s.json: $.transactions.rate_per_s: 2000 per second over a run of about 1e+06 s would create about "
       "2e+09 "
       "transactions, more than 1e+09: lower the rate or stop the run earlier"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *msgs = NULL;
    SimScenario *sc = load_str(minimal, cases[i].sets, &msgs);
    CU_ASSERT_PTR_NULL(sc);
    if (strcmp(msgs, cases[i].want) != 0) fprintf(stderr, "\n got: %s\nwant: %s\n", msgs, cases[i].want);
    CU_ASSERT_STRING_EQUAL(msgs, cases[i].want);
    sim_scenario_free(sc);
    g_free(msgs);
  }
  /* Just inside: a stop after 1 ns, 1e9 blocks by time, 1e9 transactions, a 1 ms first interval. */
  const char *const fine[][4] = {
      {"stop.time_s=1e-9"},
      {"stop.heights=0", "stop.time_s=1e9", "chain.target_interval_s=1"},
      {"transactions={\"rate_per_s\": 1000}", "stop.time_s=1e6"},
      {"chain.difficulty=byzantium", "chain.hashrate_hps=2.0885e18", "chain.target_interval_s=0.001"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(fine); i++) {
    char *msgs = NULL;
    SimScenario *sc = load_str(minimal, fine[i], &msgs);
    CU_ASSERT_PTR_NOT_NULL(sc);
    CU_ASSERT_STRING_EQUAL(msgs, "");
    sim_scenario_free(sc);
    g_free(msgs);
  }
}

/* `n` pools p0, p1, ... of equal shares; the last one named `last`. Free with g_free(). */
static char *pools_json(guint n, const char *last) {
  GString *j = g_string_new("{\"stop\": {\"heights\": 1}, \"pools\": [");
  for (guint i = 0; i + 1 < n; i++)
    g_string_append_printf(j, "{\"name\": \"p%u\", \"hash_share\": %.17g}, ", i, 1.0 / n);
  g_string_append_printf(j, "{\"name\": \"%s\", \"hash_share\": %.17g}]}", last, 1.0 / n);
  return g_string_free(j, FALSE);
}

/* Duplicate pool names are found by a hash table: the last of 20,000 pools reuses the name of the 6th. */
static void test_many_pools(void) {
  g_autofree char *dup = pools_json(20000, "p5");
  char *msgs = NULL;
  SimScenario *sc = load_str(dup, NULL, &msgs);
  CU_ASSERT_PTR_NULL(sc);
  CU_ASSERT_STRING_EQUAL(msgs, "s.json: $.pools[19999].name: duplicate pool name \"p5\" (also $.pools[5])");
  g_free(msgs);
  g_autofree char *unique = pools_json(20000, "last");
  sc = load_str(unique, NULL, &msgs);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  CU_ASSERT_STRING_EQUAL(msgs, "");
  CU_ASSERT_EQUAL(sc->n_pools, 20000);
  CU_ASSERT_STRING_EQUAL(sc->pools[19999].name, "last");
  sim_scenario_free(sc);
  g_free(msgs);
}

/* Precedence: the scenario over its includes, a later include over an earlier one; objects merge key by
 * key at every depth, arrays and scalars are taken whole; paths are relative to the including file; --set
 * applies to the merged document; the echo holds the merge without "include". */
static void test_include_merge(void) {
  g_autofree char *dir = g_dir_make_tmp("scenario-XXXXXX", NULL);
  g_autofree char *base = put(dir, "models/base.json",
                              "{\"seed\": 9, \"stop\": {\"heights\": 5, \"settle_heights\": 2},"
                              " \"chain\": {\"target_interval_s\": 10, \"block_reward_eth\": 3},"
                              " \"network\": {\"delay\": {\"model\": \"lognormal\", \"median_ms\": 300, \"sigma\": 0.5}},"
                              " \"pools\": [{\"name\": \"A\", \"hash_share\": 0.5}, {\"name\": \"B\", \"hash_share\": 0.5}],"
                              " \"calibration\": {\"anything\": [1, 2]}}");
  g_autofree char *over = put(dir, "models/over.json",
                              "{\"include\": [\"leaf/extra.json\"], \"chain\": {\"target_interval_s\": 11},"
                              " \"pools\": [{\"name\": \"C\", \"hash_share\": 1}]}");
  g_autofree char *leaf = put(dir, "models/leaf/extra.json", "{\"network\": {\"delay\": {\"sigma\": 0.9}}, \"stop\": {\"settle_heights\": 3}}");
  g_autofree char *s = put(dir, "s.json",
                           "{\"include\": [\"models/base.json\", \"models/over.json\"], \"seed\": 4,"
                           " \"chain\": {\"block_reward_eth\": 5}}");
  char *msgs;
  SimScenario *sc = load_path(s, NULL, &msgs);
  if (!sc) fprintf(stderr, "\n%s\n", msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_EQUAL(sc->seed, 4);                                   /* the scenario's own */
  CU_ASSERT_DOUBLE_EQUAL(sc->pow.chain.block_reward_eth, 5, 0);   /* the scenario's, beside ... */
  CU_ASSERT_DOUBLE_EQUAL(sc->pow.chain.target_interval_s, 11, 0); /* ... the later include's */
  CU_ASSERT_EQUAL(sc->stop.heights, 5);                           /* from base, */
  CU_ASSERT_EQUAL(sc->stop.settle_heights, 3);                    /* merged with over's include (later) */
  CU_ASSERT_EQUAL(sc->n_pools, 1);                                /* arrays are replaced, not merged */
  CU_ASSERT_STRING_EQUAL(sc->pools[0].name, "C");
  json_t *delay = json_object_get(json_object_get(sc->doc, "network"), "delay");
  CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(delay, "sigma")), 0.9, 0);      /* nested, 3 deep */
  CU_ASSERT_DOUBLE_EQUAL(json_number_value(json_object_get(delay, "median_ms")), 300, 0); /* kept beside it */
  CU_ASSERT_PTR_NULL(json_object_get(sc->doc, "include"));
  CU_ASSERT(json_is_array(json_object_get(json_object_get(sc->doc, "calibration"), "anything")));
  CU_ASSERT_STRING_EQUAL(sc->name, "s");
  sim_scenario_free(sc);
  g_free(msgs);

  /* --set reaches keys that came from an include. */
  const char *sets[] = {"pools[0].hash_share=1", "chain.target_interval_s=12", NULL};
  sc = load_path(s, sets, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_DOUBLE_EQUAL(sc->pow.chain.target_interval_s, 12, 0);
  sim_scenario_free(sc);
  g_free(msgs);
  const char *set_include[] = {"include=[\"models/base.json\"]", NULL};
  sc = load_path(s, set_include, &msgs);
  CU_ASSERT(sc == NULL);
  g_autofree char *want =
      g_strdup("--set include: cannot be set with --set (includes are read before the overrides)");
  CU_ASSERT_STRING_EQUAL(msgs, want);
  g_free(msgs);

  /* The same file included twice (not a cycle), and a single name instead of an array. */
  g_autofree char *twice = put(dir, "twice.json", "{\"include\": [\"models/base.json\", \"models/base.json\"]}");
  sc = load_path(twice, NULL, &msgs);
  CU_ASSERT(sc != NULL);
  sim_scenario_free(sc);
  g_free(msgs);
  g_autofree char *single = put(dir, "single.json", "{\"include\": \"models/base.json\", \"seed\": 2}");
  sc = load_path(single, NULL, &msgs);
  CU_ASSERT_FATAL(sc != NULL);
  CU_ASSERT_EQUAL(sc->seed, 2);
  CU_ASSERT_EQUAL(sc->n_pools, 2);
  sim_scenario_free(sc);
  g_free(msgs);
  rm_rf(dir);
}

/* Each problem with an include, with its exact message: file: $.include[i]: what. */
static void test_include_errors(void) {
  g_autofree char *dir = g_dir_make_tmp("scenario-XXXXXX", NULL);
  static const struct {
    const char *name, *text, *want; /* want: printf format, %1$s = dir */
  } cases[] = {
      {"missing.json", "{\"include\": [\"nope.json\"], \"stop\": {\"heights\": 1}}",
       "%1$s/missing.json: $.include[0]: cannot open %1$s/nope.json: No such file or directory"},
      {"syntax.json", "{\"include\": [\"inc/bad.json\"]}",
       "%1$s/syntax.json: $.include[0]: %1$s/inc/bad.json:1:9: string or '}' expected near '}'"},
      {"array.json", "{\"include\": [\"inc/array.json\"]}",
       "%1$s/array.json: $.include[0]: %1$s/inc/array.json: $: must be an object (a partial scenario)"},
      {"blank.json", "{\"include\": [\"inc/blank.json\"]}",
       "%1$s/blank.json: $.include[0]: %1$s/inc/blank.json:1:1: empty file (expected a JSON object)"},
      {"type.json", "{\"include\": 5}", "%1$s/type.json: $.include: must be a file name or an array of file names"},
      {"element.json", "{\"include\": [\"inc/ok.json\", 3, \"\"]}",
       "%1$s/element.json: $.include[1]: must be a file name (a non-empty string)\n"
       "%1$s/element.json: $.include[2]: must be a file name (a non-empty string)"},
      {"self.json", "{\"include\": [\"self.json\"]}",
       "%1$s/self.json: $.include[0]: include cycle: %1$s/self.json -> %1$s/self.json"},
      {"a.json", "{\"include\": [\"inc/b.json\"]}",
       "%1$s/a.json: $.include[0]: %1$s/inc/b.json: $.include[0]: include cycle: %1$s/a.json -> %1$s/inc/b.json -> "
       "%1$s/inc/../a.json"},
      {"nested.json", "{\"include\": [\"inc/ok.json\", \"inc/mid.json\"]}",
       "%1$s/nested.json: $.include[1]: %1$s/inc/mid.json: $.include[0]: cannot open %1$s/inc/gone.json: No such "
       "file or directory"},
      {"cal.json", "{\"calibration\": 3, \"stop\": {\"heights\": 1}, \"pools\": [{\"name\": \"A\", \"hash_share\": 1}]}",
       "%1$s/cal.json: $.calibration: must be an object (a fit report, not read)"},
  };
  g_free(put(dir, "inc/bad.json", "{\"a\": 1,}"));
  g_free(put(dir, "inc/array.json", "[1, 2]"));
  g_free(put(dir, "inc/blank.json", " \n"));
  g_free(put(dir, "inc/ok.json", "{\"seed\": 1}"));
  g_free(put(dir, "inc/b.json", "{\"include\": [\"../a.json\"]}"));
  g_free(put(dir, "inc/mid.json", "{\"include\": [\"gone.json\"]}"));
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *p = put(dir, cases[i].name, cases[i].text);
    char *msgs;
    SimScenario *sc = load_path(p, NULL, &msgs);
    CU_ASSERT(sc == NULL);
    g_autofree char *want = g_strdup_printf(cases[i].want, dir);
    if (strcmp(msgs, want) != 0) fprintf(stderr, "\n got: %s\nwant: %s\n", msgs, want);
    CU_ASSERT_STRING_EQUAL(msgs, want);
    sim_scenario_free(sc);
    g_free(msgs);
  }
  rm_rf(dir);
}

int register_suites(void) {
  ADD_SUITE("scenario", TEST(test_shipped_scenarios_load), TEST(test_bad_corpus),
            TEST(test_defaults_and_echo), TEST(test_set_overrides), TEST(test_set_model_switch),
            TEST(test_shares_normalised),
            TEST(test_missing_file), TEST(test_include_merge), TEST(test_include_errors),
            TEST(test_set_blame), TEST(test_runaway_values), TEST(test_many_pools));
  return 0;
}
