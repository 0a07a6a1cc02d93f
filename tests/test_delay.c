/* test_delay.c: the "delay" family's "stack" model: a base delay plus messages over a messaging stack. */
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "delay.h"
#include "rdma.h"
#include "registry.h"

/* Parses a delay model choice from JSON text at "$.s"; asserts no problem. Clear with sim_model_ref_clear. */
static void parse_delay(SimModelRef *ref, const char *text, json_t **echo) {
  json_t *obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
  g_autoptr(SimDiag) diag = sim_diag_new(NULL);
  gboolean ok = sim_model_ref_parse(ref, "delay", "lognormal", obj, "$.s", diag);
  if (!ok) {
    g_autofree char *all = sim_diag_join(diag);
    fprintf(stderr, "\n%s\n", all);
  }
  CU_ASSERT_TRUE_FATAL(ok);
  if (echo)
    *echo = obj;
  else
    json_decref(obj);
}

/* The stack part alone: a zero base, so every draw is hops x one message. */
static void test_stack_fixed_part(void) {
  SimModelRef ref;
  parse_delay(&ref,
              "{\"model\": \"stack\", \"base\": {\"model\": \"constant\", \"value_ms\": 0},"
              " \"stack\": {\"model\": \"tcp\"}, \"bytes\": 256, \"hops\": 2}",
              NULL);
  CU_ASSERT_PTR_EQUAL(ref.model, &sim_delay_stack.info);
  SimTime one = sim_stack_message_ns_by_name("tcp", 256);
  /* Kernel TCP: o_s 2 + L 5 + o_r 3 us plus the bytes: a little over 10 us. */
  CU_ASSERT(one > 10000 && one < 11000);
  SimRng rng;
  sim_rng_init(&rng, 1, 2);
  for (int i = 0; i < 5; i++)
    CU_ASSERT_EQUAL(sim_delay_sample(&ref, &rng), 2 * one);
  CU_ASSERT_DOUBLE_EQUAL(sim_delay_mean_s(&ref), 2 * one / 1e9, 1e-15);
  sim_model_ref_clear(&ref);

  /* RDMA channel: about a microsecond, an order of magnitude below TCP; hops 0 adds nothing. */
  parse_delay(&ref,
              "{\"model\": \"stack\", \"base\": {\"model\": \"constant\", \"value_ms\": 3},"
              " \"stack\": {\"model\": \"rdma-channel\"}}",
              NULL);
  SimTime rc = sim_stack_message_ns_by_name("rdma-channel", 256);
  CU_ASSERT(rc > 500 && rc < 2000 && 5 * rc < one);
  CU_ASSERT_EQUAL(sim_delay_sample(&ref, &rng), 3 * SIM_NS_PER_MS + rc);
  sim_model_ref_clear(&ref);
  parse_delay(&ref,
              "{\"model\": \"stack\", \"base\": {\"model\": \"constant\", \"value_ms\": 3}, \"hops\": 0}",
              NULL);
  CU_ASSERT_EQUAL(sim_delay_sample(&ref, &rng), 3 * SIM_NS_PER_MS);
  sim_model_ref_clear(&ref);
}

/* Around a random base the model consumes exactly the base's random numbers: each draw is the base's draw
 * on the same stream plus the fixed stack part, and the streams stay in step. */
static void test_stack_keeps_base_draws(void) {
  SimModelRef base, stack;
  parse_delay(&base, "{\"model\": \"lognormal\", \"median_ms\": 425, \"sigma\": 1.0}", NULL);
  parse_delay(
      &stack,
      "{\"model\": \"stack\", \"base\": {\"model\": \"lognormal\", \"median_ms\": 425, \"sigma\": 1.0},"
      " \"stack\": {\"model\": \"rdma-write\"}, \"bytes\": 100}",
      NULL);
  SimTime part = sim_stack_message_ns_by_name("rdma-write", 100);
  SimRng a, b;
  sim_rng_init(&a, 7, 11);
  sim_rng_init(&b, 7, 11);
  guint bad = 0;
  for (int i = 0; i < 1000; i++)
    bad += sim_delay_sample(&stack, &a) != sim_delay_sample(&base, &b) + part;
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(sim_rng_u64(&a), sim_rng_u64(&b));
  CU_ASSERT_DOUBLE_EQUAL(sim_delay_mean_s(&stack), sim_delay_mean_s(&base) + part / 1e9, 1e-12);
  sim_model_ref_clear(&base);
  sim_model_ref_clear(&stack);
}

/* Defaults go into the echo, the submodels' included. */
static void test_stack_defaults_echo(void) {
  SimModelRef ref;
  json_t *echo = NULL;
  parse_delay(&ref, "{\"model\": \"stack\"}", &echo);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(echo, "bytes")), 256);
  CU_ASSERT_EQUAL(json_integer_value(json_object_get(echo, "hops")), 1);
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(echo, "base"), "model")),
                         "lognormal");
  CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(echo, "stack"), "model")), "tcp");
  CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(echo, "stack"), "o_s_us"));
  json_decref(echo);
  sim_model_ref_clear(&ref);
}

/* Bad values: every problem, with its JSON path, in one pass. */
static void test_stack_errors(void) {
  json_t *obj =
      json_loads("{\"model\": \"stack\", \"hops\": -1, \"bytes\": 2.5, \"stack\": {\"model\": \"rdma-udp\"},"
                 " \"base\": {\"model\": \"constant\", \"value_ms\": -3}}",
                 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
  g_autoptr(SimDiag) diag = sim_diag_new("s.json");
  SimModelRef ref;
  CU_ASSERT_FALSE(sim_model_ref_parse(&ref, "delay", "lognormal", obj, "$.s", diag));
  static const char *const want[] = {
      "s.json: $.s.hops: must be in [0, 1000] (got -1)",
      "s.json: $.s.bytes: must be an integer (got real 2.5)",
      "s.json: $.s.base.value_ms: must be in [0, 3.6e+06] (got -3)",
      "s.json: $.s.stack.model: unknown stack model \"rdma-udp\" (expected one of: tcp, rdma-send, "
      "rdma-write, "
      "rdma-channel)",
  };
  CU_ASSERT_EQUAL(sim_diag_count(diag), G_N_ELEMENTS(want));
  for (guint i = 0; i < MIN(sim_diag_count(diag), G_N_ELEMENTS(want)); i++) {
    CU_ASSERT_STRING_EQUAL(sim_diag_get(diag, i), want[i]);
    if (strcmp(sim_diag_get(diag, i), want[i]) != 0) fprintf(stderr, "\n  got: %s\n", sim_diag_get(diag, i));
  }
  sim_model_ref_clear(&ref);
  json_decref(obj);
}

int register_suites(void) {
  ADD_SUITE("delay-stack", TEST(test_stack_fixed_part), TEST(test_stack_keeps_base_draws),
            TEST(test_stack_defaults_echo), TEST(test_stack_errors));
  return 0;
}
