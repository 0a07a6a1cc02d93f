/* rng.h: counter-based random streams (Philox4x64-10 from Random123), one per entity, usable as gsl_rng.
 *
 * A stream is keyed by (master seed, stream id): the same pair always gives the same sequence, and
 * different ids give statistically independent sequences, whatever order streams are created or used in.
 * There is no global or per-thread generator anywhere in sim.
 *
 * Stream ids: entity streams use the entity id (< 2^32). Setup code that needs randomness not tied to
 * an entity (e.g. building a topology) uses ids from SIM_RNG_SETUP_BASE upward, one per purpose.
 */
#pragma once

#include <glib.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>

G_BEGIN_DECLS

#define SIM_RNG_SETUP_BASE (UINT64_C(1) << 32)

/* The state is public so the hot helpers below can be inline; treat the fields as private. Never copy a
 * SimRng by value: its gsl view points at the original (use sim_rng_copy, or sim_rng_init on the destination). */
typedef struct SimRng {
  gsl_rng gsl;       /* gsl.state points back to this struct; pass &rng->gsl (sim_rng_gsl) to gsl_ran_* */
  uint64_t key[2];   /* (master seed, stream id) */
  uint64_t ctr;      /* number of Philox blocks generated so far */
  uint64_t buf[4];   /* the current block's output */
  unsigned idx;      /* next unused word of buf; 4 = empty */
} SimRng;

/* The gsl_rng_type for these streams ("philox4x64-10"). gsl_rng_alloc() with it gives a stream with
 * key (gsl seed, 0); prefer sim_rng_init(). */
extern const gsl_rng_type *const sim_rng_type_philox;

/* Initialises `rng` in place for (master_seed, stream_id). No allocation; no cleanup needed. */
void sim_rng_init(SimRng *rng, uint64_t master_seed, uint64_t stream_id);

/* Makes `dst` a copy of `src` as it stands (key, counter, buffered words): `dst` continues `src`'s sequence
 * from the same point, independently of it. A plain struct copy would leave dst's gsl view pointing at src. */
void sim_rng_copy(SimRng *dst, const SimRng *src);

/* Allocates a stream. Free with sim_rng_free(). */
SimRng *sim_rng_new(uint64_t master_seed, uint64_t stream_id);
void sim_rng_free(SimRng *rng);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimRng, sim_rng_free)

/* Refills buf; internal, used by the inline helpers. */
void sim_rng_refill(SimRng *rng);

/* SplitMix64's finaliser: a fixed bijective mix of 64 bits, for ids and keys derived from other ids (not a
 * random stream). */
static inline uint64_t sim_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static inline uint64_t sim_rng_u64(SimRng *rng) {
  if (G_UNLIKELY(rng->idx >= 4)) sim_rng_refill(rng);
  return rng->buf[rng->idx++];
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double sim_rng_uniform(SimRng *rng) { return (double)(sim_rng_u64(rng) >> 11) * 0x1.0p-53; }

/* Uniform in (0, 1): never 0, so log() is safe. */
static inline double sim_rng_uniform_pos(SimRng *rng) {
  return ((double)(sim_rng_u64(rng) >> 11) + 0.5) * 0x1.0p-53;
}

/* Uniform integer in [0, n), n >= 1, without modulo bias (Lemire's method). Inline: the relay draws one
 * per pushed block. */
static inline uint64_t sim_rng_below(SimRng *rng, uint64_t n) {
  unsigned __int128 m = (unsigned __int128)sim_rng_u64(rng) * n;
  uint64_t low = (uint64_t)m;
  if (G_UNLIKELY(low < n)) {
    uint64_t threshold = -n % n; /* 2^64 mod n */
    while (low < threshold) {
      m = (unsigned __int128)sim_rng_u64(rng) * n;
      low = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

/* Exponential with the given mean (not rate), by inversion. */
double sim_rng_exponential(SimRng *rng, double mean);

/* The gsl_rng view of this stream, for gsl_ran_* distributions. */
static inline gsl_rng *sim_rng_gsl(SimRng *rng) { return &rng->gsl; }

G_END_DECLS
