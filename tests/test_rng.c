/* test_rng.c: unit tests of the Philox streams: reproducibility, independence, distributions, GSL view. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "cunit-main.h"
#include "rng.h"

#define N_DRAWS 1000000

__extension__ typedef unsigned __int128 U128;

/* Known answer: Random123's kat_vectors, philox4x64-10 with counter 0 and key 0. */
static void test_known_answer(void) {
  SimRng rng;
  sim_rng_init(&rng, 0, 0);
  CU_ASSERT_EQUAL(sim_rng_u64(&rng), UINT64_C(0x16554d9eca36314c));
  CU_ASSERT_EQUAL(sim_rng_u64(&rng), UINT64_C(0xdb20fe9d672d0fdc));
  CU_ASSERT_EQUAL(sim_rng_u64(&rng), UINT64_C(0xd7e772cee186176b));
  CU_ASSERT_EQUAL(sim_rng_u64(&rng), UINT64_C(0x7e68b68aec7ba23b));
}

static void test_same_key_same_sequence(void) {
  SimRng a, b;
  sim_rng_init(&a, 42, 7);
  sim_rng_init(&b, 42, 7);
  int same = 0;
  for (int i = 0; i < 1000; i++) same += sim_rng_u64(&a) == sim_rng_u64(&b);
  CU_ASSERT_EQUAL(same, 1000);
}

static void test_different_ids_differ(void) {
  SimRng a, b, c;
  sim_rng_init(&a, 42, 7);
  sim_rng_init(&b, 42, 8);
  sim_rng_init(&c, 43, 7);
  int same_ab = 0, same_ac = 0;
  for (int i = 0; i < 1000; i++) {
    uint64_t x = sim_rng_u64(&a);
    same_ab += x == sim_rng_u64(&b);
    same_ac += x == sim_rng_u64(&c);
  }
  CU_ASSERT_EQUAL(same_ab, 0);
  CU_ASSERT_EQUAL(same_ac, 0);
}

/* A stream's values do not depend on which other streams exist or were used first. */
static void test_creation_order_irrelevant(void) {
  enum { K = 16, DRAWS = 37 };
  uint64_t fwd[K][DRAWS], rev[K][DRAWS];
  SimRng rngs[K];
  for (int k = 0; k < K; k++) sim_rng_init(&rngs[k], 99, (uint64_t)k);
  for (int d = 0; d < DRAWS; d++) /* interleaved */
    for (int k = 0; k < K; k++) fwd[k][d] = sim_rng_u64(&rngs[k]);
  for (int k = K - 1; k >= 0; k--) { /* reverse creation order, one stream at a time */
    g_autoptr(SimRng) r = sim_rng_new(99, (uint64_t)k);
    for (int d = 0; d < DRAWS; d++) rev[k][d] = sim_rng_u64(r);
  }
  CU_ASSERT_EQUAL(memcmp(fwd, rev, sizeof fwd), 0);
}

static void test_uniform_moments(void) {
  SimRng rng;
  sim_rng_init(&rng, 1, 0);
  double sum = 0, sum2 = 0, lo = 1, hi = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    double u = sim_rng_uniform(&rng);
    sum += u;
    sum2 += u * u;
    lo = fmin(lo, u);
    hi = fmax(hi, u);
  }
  double n = N_DRAWS, mean = sum / n, var = sum2 / n - mean * mean;
  CU_ASSERT(lo >= 0 && hi < 1);
  CU_ASSERT(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / n));
  /* Var(s^2) ~ (mu4 - sigma^4) / n with mu4 = 1/80, sigma^2 = 1/12. */
  CU_ASSERT(fabs(var - 1.0 / 12) < 5 * sqrt((1.0 / 80 - 1.0 / 144) / n));
}

static void test_uniform_pos_open(void) {
  SimRng rng;
  sim_rng_init(&rng, 2, 0);
  int bad = 0;
  for (int i = 0; i < 100000; i++) {
    double u = sim_rng_uniform_pos(&rng);
    bad += !(u > 0 && u < 1);
  }
  CU_ASSERT_EQUAL(bad, 0);
}

static double chisq_q(const guint64 *counts, int bins, double expected_per_bin) {
  double stat = 0;
  for (int b = 0; b < bins; b++) {
    double d = (double)counts[b] - expected_per_bin;
    stat += d * d / expected_per_bin;
  }
  return gsl_cdf_chisq_Q(stat, bins - 1);
}

static void test_uniform_chisq(void) {
  SimRng rng;
  sim_rng_init(&rng, 3, 5);
  guint64 counts[64] = {0};
  for (int i = 0; i < N_DRAWS; i++) counts[(int)(sim_rng_uniform(&rng) * 64)]++;
  CU_ASSERT(chisq_q(counts, 64, N_DRAWS / 64.0) > 1e-6);
  /* The test has power: a biased generator fails it. */
  for (int b = 0; b < 32; b++) counts[b] += 1000; /* +6% in half the bins */
  CU_ASSERT(chisq_q(counts, 64, (N_DRAWS + 32000) / 64.0) < 1e-6);
}

static void test_streams_uncorrelated(void) {
  SimRng a, b;
  sim_rng_init(&a, 4, 0);
  sim_rng_init(&b, 4, 1);
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    double x = sim_rng_uniform(&a), y = sim_rng_uniform(&b);
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
  }
  double n = N_DRAWS;
  double cov = sab / n - (sa / n) * (sb / n);
  double r = cov / sqrt((saa / n - (sa / n) * (sa / n)) * (sbb / n - (sb / n) * (sb / n)));
  CU_ASSERT(fabs(r) < 5 / sqrt(n));
}

/* Range always; uniformity by chi-square over min(n, 64) equal-width buckets of [0, n). */
static void check_below(uint64_t n, uint64_t seed) {
  SimRng rng;
  sim_rng_init(&rng, seed, 0);
  enum { DRAWS = 300000 };
  int bins = n < 64 ? (int)n : 64;
  guint64 counts[64] = {0};
  int out = 0;
  double sum = 0;
  for (int i = 0; i < DRAWS; i++) {
    uint64_t x = sim_rng_below(&rng, n);
    if (x >= n) {
      out++;
      continue;
    }
    sum += (double)x;
    /* bucket = floor(x * bins / n), exact in 128 bits */
    counts[(int)(((U128)x * (unsigned)bins) / n)]++;
  }
  CU_ASSERT_EQUAL(out, 0);
  /* Equal-width buckets of an n not divisible by `bins` differ by one value: negligible at these n, and
   * exact for n < 64. */
  CU_ASSERT(chisq_q(counts, bins, DRAWS / (double)bins) > 1e-6);
  double mean = sum / DRAWS, expect = ((double)n - 1) / 2, sd = (double)n / sqrt(12.0 * DRAWS);
  CU_ASSERT(fabs(mean - expect) < 5 * sd + 1e-9);
}

static void test_below(void) {
  check_below(3, 10);
  check_below(7, 11);
  check_below((UINT64_C(1) << 33) + 1, 12);
  check_below(UINT64_MAX / 3 * 2, 13); /* a bound where rejection actually happens often */
  SimRng rng;
  sim_rng_init(&rng, 14, 0);
  int nonzero = 0;
  for (int i = 0; i < 100; i++) nonzero += sim_rng_below(&rng, 1) != 0;
  CU_ASSERT_EQUAL(nonzero, 0);
}

static void test_exponential_mean(void) {
  SimRng rng;
  sim_rng_init(&rng, 5, 0);
  const double mean = 2.5;
  double sum = 0;
  int neg = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    double x = sim_rng_exponential(&rng, mean);
    neg += !(x >= 0 && isfinite(x));
    sum += x;
  }
  CU_ASSERT_EQUAL(neg, 0);
  CU_ASSERT(fabs(sum / N_DRAWS - mean) < 5 * mean / sqrt(N_DRAWS));
}

static void test_gsl_gaussian(void) {
  SimRng rng;
  sim_rng_init(&rng, 6, 3);
  gsl_rng *g = sim_rng_gsl(&rng);
  CU_ASSERT_PTR_EQUAL(g->state, &rng);
  CU_ASSERT_STRING_EQUAL(gsl_rng_name(g), "philox4x64-10");
  double sum = 0, sum2 = 0;
  for (int i = 0; i < N_DRAWS; i++) {
    double x = gsl_ran_gaussian(g, 1.0);
    sum += x;
    sum2 += x * x;
  }
  double n = N_DRAWS, mean = sum / n, var = sum2 / n - mean * mean;
  CU_ASSERT(fabs(mean) < 5 / sqrt(n));
  CU_ASSERT(fabs(var - 1) < 5 * sqrt(2 / n)); /* Var(s^2) = 2 sigma^4 / n */
}

/* gsl_rng_get uses one word per call and returns its high 32 bits; gsl_rng_uniform matches
 * sim_rng_uniform. */
static void test_gsl_view_matches_stream(void) {
  SimRng a, b;
  sim_rng_init(&a, 8, 2);
  sim_rng_init(&b, 8, 2);
  int same = 0;
  for (int i = 0; i < 100; i++) same += gsl_rng_get(sim_rng_gsl(&a)) == (sim_rng_u64(&b) >> 32);
  for (int i = 0; i < 100; i++) same += gsl_rng_uniform(sim_rng_gsl(&a)) == sim_rng_uniform(&b);
  CU_ASSERT_EQUAL(same, 200);
  CU_ASSERT_EQUAL(gsl_rng_max(sim_rng_gsl(&a)), 0xffffffffUL);
  CU_ASSERT_EQUAL(gsl_rng_min(sim_rng_gsl(&a)), 0);
}

static void test_gsl_alloc(void) {
  gsl_rng *g = gsl_rng_alloc(sim_rng_type_philox);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_STRING_EQUAL(gsl_rng_name(g), "philox4x64-10");
  gsl_rng_set(g, 77);
  SimRng ref;
  sim_rng_init(&ref, 77, 0);
  int same = 0;
  for (int i = 0; i < 50; i++) same += gsl_rng_uniform(g) == sim_rng_uniform(&ref);
  CU_ASSERT_EQUAL(same, 50);
  /* The embedded view inside a GSL-allocated state is consistent too. */
  SimRng *state = g->state;
  CU_ASSERT_PTR_EQUAL(sim_rng_gsl(state)->state, state);
  /* A clone continues the same sequence. */
  gsl_rng *c = gsl_rng_clone(g);
  int same_clone = 0;
  for (int i = 0; i < 50; i++) same_clone += gsl_rng_get(g) == gsl_rng_get(c);
  CU_ASSERT_EQUAL(same_clone, 50);
  double x = gsl_ran_exponential(g, 1.0);
  CU_ASSERT(x >= 0);
  gsl_rng_free(c);
  gsl_rng_free(g);
}

/* A copy continues the original's sequence from where it stood, mid-block included, and is independent of
 * it (drawing from one does not move the other); its gsl view draws from the copy, not the original. */
static void test_copy_continues(void) {
  for (int skip = 0; skip < 9; skip++) {
    SimRng a, ref;
    sim_rng_init(&a, 5, 11);
    sim_rng_init(&ref, 5, 11);
    for (int i = 0; i < skip; i++) {
      sim_rng_u64(&a);
      sim_rng_u64(&ref);
    }
    SimRng c;
    sim_rng_copy(&c, &a);
    int same = 0;
    for (int i = 0; i < 20; i++) same += sim_rng_u64(&c) == sim_rng_u64(&ref);
    CU_ASSERT_EQUAL(same, 20);
    /* `a` did not move: it gives the values the copy gave. */
    SimRng ref2;
    sim_rng_init(&ref2, 5, 11);
    for (int i = 0; i < skip; i++) sim_rng_u64(&ref2);
    CU_ASSERT_EQUAL(sim_rng_u64(&a), sim_rng_u64(&ref2));
    /* The copy's gsl view is its own: it draws the copy's next word, and leaves `a` alone. */
    SimRng d, e;
    sim_rng_copy(&d, &a);
    sim_rng_copy(&e, &a);
    CU_ASSERT_PTR_EQUAL(sim_rng_gsl(&d)->state, &d);
    CU_ASSERT_EQUAL(gsl_rng_get(sim_rng_gsl(&d)), sim_rng_u64(&e) >> 32);
    CU_ASSERT_EQUAL(sim_rng_u64(&a), sim_rng_u64(&ref2));
  }
}

int register_suites(void) {
  ADD_SUITE("rng", TEST(test_known_answer), TEST(test_same_key_same_sequence), TEST(test_different_ids_differ),
            TEST(test_creation_order_irrelevant), TEST(test_uniform_moments), TEST(test_uniform_pos_open),
            TEST(test_uniform_chisq), TEST(test_streams_uncorrelated), TEST(test_below),
            TEST(test_exponential_mean), TEST(test_gsl_gaussian), TEST(test_gsl_view_matches_stream),
            TEST(test_gsl_alloc), TEST(test_copy_continues));
  return 0;
}
