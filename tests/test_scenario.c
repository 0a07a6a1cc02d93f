/* test_scenario.c: the scenario loader accepts every shipped scenario and rejects the bad corpus in
 * tests/data/bad/ with exactly the messages in the matching .err files. */
#include <string.h>

#include "cunit-main.h"
#include "params.h"
#include "scenario.h"

/* Tests run from the source root (meson's workdir). */
static void test_shipped_scenarios_load(void) {
  const char *dirs[] = {"scenarios", "scenarios/bench"};
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

int register_suites(void) {
  ADD_SUITE("scenario", TEST(test_shipped_scenarios_load), TEST(test_bad_corpus), TEST(test_defaults_and_echo),
            TEST(test_set_overrides), TEST(test_shares_normalised), TEST(test_missing_file));
  return 0;
}
