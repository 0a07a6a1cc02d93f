/* rng.c: Philox4x64-10 counter-based streams keyed by (master seed, stream id), also usable as gsl_rng. */
#include "rng.h"

#include <math.h>
#include <string.h>

#include <Random123/philox.h>

/* Block `ctr` of stream (key[0], key[1]) is philox4x64_R(10, {ctr, 0, 0, 0}, key); its four 64-bit
 * words are handed out in order. Nothing else feeds the output, so a stream depends only on its key. */
void sim_rng_refill(SimRng *rng) {
  philox4x64_ctr_t c = {{rng->ctr, 0, 0, 0}};
  philox4x64_key_t k = {{rng->key[0], rng->key[1]}};
  philox4x64_ctr_t r = philox4x64_R(10, c, k);
  memcpy(rng->buf, r.v, sizeof rng->buf);
  rng->ctr++;
  rng->idx = 0;
}

/* ---- gsl_rng adapter ----
 * The state GSL sees is a whole SimRng. `get` uses one 64-bit word per call and returns its high 32
 * bits (simple, and the same word order as sim_rng_u64; the low half is dropped). `get_double` uses 53
 * bits of one word, like sim_rng_uniform(). Both work on the `state` argument only, never on the
 * embedded gsl member, so a state that GSL allocated or copied (gsl_rng_clone) behaves correctly. */

static void philox_gsl_set(void *state, unsigned long seed) { sim_rng_init(state, (uint64_t)seed, 0); }

static unsigned long philox_gsl_get(void *state) { return (unsigned long)(sim_rng_u64(state) >> 32); }

static double philox_gsl_get_double(void *state) { return sim_rng_uniform(state); }

static const gsl_rng_type philox_type = {
    .name = "philox4x64-10",
    .max = 0xffffffffUL,
    .min = 0,
    .size = sizeof(SimRng),
    .set = philox_gsl_set,
    .get = philox_gsl_get,
    .get_double = philox_gsl_get_double,
};

const gsl_rng_type *const sim_rng_type_philox = &philox_type;

void sim_rng_init(SimRng *rng, uint64_t master_seed, uint64_t stream_id) {
  g_return_if_fail(rng != NULL);
  memset(rng, 0, sizeof *rng);
  /* When GSL allocated this state (gsl_rng_alloc), the embedded member is a second, consistent view
   * of the same stream; GSL itself never looks at it. */
  rng->gsl.type = &philox_type;
  rng->gsl.state = rng;
  rng->key[0] = master_seed;
  rng->key[1] = stream_id;
  rng->ctr = 0;
  rng->idx = 4; /* empty: the first draw generates block 0 */
}

void sim_rng_copy(SimRng *dst, const SimRng *src) {
  g_return_if_fail(dst != NULL && src != NULL);
  memcpy(dst, src, sizeof *dst);
  dst->gsl.state = dst; /* the copy's own view (gsl.type is the same) */
}

SimRng *sim_rng_new(uint64_t master_seed, uint64_t stream_id) {
  SimRng *rng = g_new(SimRng, 1);
  sim_rng_init(rng, master_seed, stream_id);
  return rng;
}

void sim_rng_free(SimRng *rng) { g_free(rng); }

__extension__ typedef unsigned __int128 SimU128;

/* Lemire, "Fast random integer generation in an interval" (2019): the high word of x * n is uniform in
 * [0, n) once the low words below 2^64 mod n are rejected; the division runs only when a rejection is
 * possible at all (probability n / 2^64). */

double sim_rng_exponential(SimRng *rng, double mean) { return -mean * log(sim_rng_uniform_pos(rng)); }
