/* cunit-main.h: the shared main() of the CUnit test programs: run every registered suite and derive the
 * exit status from the failure counts (CU_basic_run_tests() itself reports success on failures). */
#pragma once

#include <CUnit/Basic.h>
#include <stdio.h>

/* Each test program defines this: add its suites to the registry; return 0 on success. */
int register_suites(void);

int main(void) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  if (register_suites() != 0 || CU_get_error() != CUE_SUCCESS) {
    fprintf(stderr, "suite registration failed: %s\n", CU_get_error_msg());
    CU_cleanup_registry();
    return 2;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_tests_failed() + CU_get_number_of_suites_failed();
  unsigned asserts_failed = CU_get_number_of_failures();
  unsigned run = CU_get_number_of_tests_run();
  CU_cleanup_registry();
  if (run == 0) {
    fprintf(stderr, "no test ran\n");
    return 1;
  }
  return (failed || asserts_failed) ? 1 : 0;
}

#define ADD_SUITE(name, ...)                                                    \
  do {                                                                          \
    CU_pSuite s_ = CU_add_suite(name, NULL, NULL);                              \
    if (!s_) return 1;                                                          \
    struct { const char *n; CU_TestFunc f; } t_[] = {__VA_ARGS__};              \
    for (size_t i_ = 0; i_ < sizeof t_ / sizeof t_[0]; i_++)                    \
      if (!CU_add_test(s_, t_[i_].n, t_[i_].f)) return 1;                       \
  } while (0)
#define TEST(f) {#f, f}
