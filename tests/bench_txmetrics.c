/* bench_txmetrics.c: the transaction metrics (analysis/txmetrics.c) on a synthetic month of Ethereum, fed in
 * simulation-time order; prints wall time, peak RSS and a digest of the results. Built with the tests, not
 * run as one (speed is measured here, never asserted in a test).
 *
 * The stream (fixed seed): txs created as a Poisson process (8.23 per second: 22 M txs over 201 000 heights
 * of 13.3 s), with 64-bit ids that look random, each by one of --senders senders picked uniformly, with the
 * sender's next nonce, 0.5% flagged censored; each vantage receives it 20 ms + Exp(300 ms) later (1%
 * never). 92.5% are mined in a main block 1-60 s after creation (never below the height of the sender's
 * previous tx, as in Ethereum), 1% of those also in a fork block at the same height, 0.2% only in a fork
 * block, the rest never (20.6 M inclusion records). Blocks come every Exp(13.3 s); the inclusion records of a
 * block arrive when it is mined, and height h is declared when h + 64 is mined, with receptions 100-1500 ms
 * after mining (0.5% unknown). At the end the heights not yet final stay undeclared and an_tx_finalize()
 * releases the rest.
 *
 *   bench-txmetrics [--txs N] [--senders N] [--vantages N] [--seed N] [--api seen|split|none] [--out FILE]
 *
 * --api seen feeds each tx with an_tx_add_tx_seen(), split with an_tx_add_tx() and one an_tx_add_sighting()
 * per reception, none only generates the stream (its time is the generator's share of the others). The
 * digest (SHA-256 of the summary JSON and the commit CSV, both written to --out if given) must not depend on
 * the API or on the implementation. */
#include <glib.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "txmetrics.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(json_t, json_decref)

#define MS INT64_C(1000000)
#define S INT64_C(1000000000)
#define BLOCK_MEAN_NS (13.3 * 1e9)
#define TX_RATE_PER_S (22e6 / (201000 * 13.3))
#define FINALITY 64 /* heights between mining and declaration */
#define AHEAD 1024  /* ring of future heights with inclusions (60 s is far fewer heights) */
#define MAX_VANTAGES 16
#define P_MAIN 0.925      /* share of txs mined in a main block (1% of them also in a fork block) */
#define P_FORK_ONLY 0.002 /* share mined only in a fork block */

/* xoshiro256**, seeded by splitmix64: fast, and the same sequence everywhere. */
typedef struct {
  uint64_t s[4];
} Rng;

static uint64_t mix64(uint64_t z) { /* splitmix64's finalizer: a bijection, 0 -> 0 */
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static void rng_seed(Rng *r, uint64_t seed, uint64_t stream) {
  uint64_t x = seed * 4 + stream * UINT64_C(0x9e3779b97f4a7c15);
  for (int i = 0; i < 4; i++)
    r->s[i] = mix64(x += UINT64_C(0x9e3779b97f4a7c15));
}

static inline uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(Rng *r) {
  uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0], s[3] ^= s[1], s[1] ^= s[2], s[0] ^= s[3], s[2] ^= t, s[3] = rotl(s[3], 45);
  return out;
}

static inline double rng_unit(Rng *r) { /* (0, 1) */
  return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

static inline uint64_t rng_below(Rng *r, uint64_t n) {
  return (uint64_t)(rng_unit(r) * (double)n);
}

static inline int64_t rng_exp_ns(Rng *r, double mean_ns) {
  return (int64_t)(-log(rng_unit(r)) * mean_ns);
}

typedef struct {
  uint64_t tx, block;
} Incl;

typedef struct {
  uint64_t nonce;
  uint32_t last_height; /* of its last main inclusion */
} Sender;

typedef struct {
  int64_t *mined_ns; /* [h] */
  uint32_t n, cap;
  Rng rng;
} Blocks;

static int64_t block_time(Blocks *b, uint32_t h) {
  while (h >= b->n) {
    if (b->n == b->cap) {
      b->cap = b->cap ? 2 * b->cap : 1024;
      b->mined_ns = g_renew(int64_t, b->mined_ns, b->cap);
    }
    b->mined_ns[b->n] = b->n == 0 ? 0 : b->mined_ns[b->n - 1] + 1 + rng_exp_ns(&b->rng, BLOCK_MEAN_NS);
    b->n++;
  }
  return b->mined_ns[h];
}

static uint64_t main_id(uint32_t h) {
  return mix64(((uint64_t)1 << 40) | h);
}

static uint64_t fork_id(uint32_t h) {
  return mix64(((uint64_t)2 << 40) | h);
}

static double now_s(void) {
  return (double)g_get_monotonic_time() / 1e6;
}

static void check(gboolean ok, GError *err, const char *what) {
  if (ok) return;
  fprintf(stderr, "bench-txmetrics: %s: %s\n", what, err ? err->message : "?");
  exit(1);
}

int main(int argc, char **argv) {
  gint64 n_txs = 22000000, n_senders = 300000, n_vantages = 4, seed = 1;
  g_autofree char *api = NULL, *out_path = NULL;
  GOptionEntry entries[] = {
      {"txs", 0, 0, G_OPTION_ARG_INT64, &n_txs, "transactions created (22000000)", "N"},
      {"senders", 0, 0, G_OPTION_ARG_INT64, &n_senders, "distinct senders (300000)", "N"},
      {"vantages", 0, 0, G_OPTION_ARG_INT64, &n_vantages, "vantage points (4)", "N"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "seed (1)", "N"},
      {"api", 0, 0, G_OPTION_ARG_STRING, &api, "seen, split or none (seen)", "API"},
      {"out", 0, 0, G_OPTION_ARG_FILENAME, &out_path, "write the summary JSON and commit CSV here", "FILE"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- transaction metrics on a synthetic month");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "bench-txmetrics: %s\n", err->message);
    return 2;
  }
  enum { API_SEEN, API_SPLIT, API_NONE } mode = API_SEEN;
  if (api && strcmp(api, "split") == 0)
    mode = API_SPLIT;
  else if (api && strcmp(api, "none") == 0)
    mode = API_NONE;
  else if (api && strcmp(api, "seen") != 0) {
    fprintf(stderr, "bench-txmetrics: --api must be seen, split or none\n");
    return 2;
  }
  if (n_txs < 0 || n_senders < 1 || n_vantages < 1 || n_vantages > MAX_VANTAGES) {
    fprintf(stderr, "bench-txmetrics: bad --txs, --senders or --vantages\n");
    return 2;
  }

  char *names[MAX_VANTAGES];
  for (gint64 v = 0; v < n_vantages; v++)
    names[v] = g_strdup_printf("V%" G_GINT64_FORMAT, v);
  guint nv = (guint)n_vantages;
  g_autoptr(AnTx) t = an_tx_new((const char *const *)names, nv);
  for (guint v = 0; v < nv; v++)
    g_free(names[v]);

  Rng txr, declr;
  rng_seed(&txr, (uint64_t)seed, 1);
  rng_seed(&declr, (uint64_t)seed, 3);
  Blocks blocks = {0};
  rng_seed(&blocks.rng, (uint64_t)seed, 2);
  Sender *senders = g_new0(Sender, n_senders);
  GArray *ahead[AHEAD];
  for (guint i = 0; i < AHEAD; i++)
    ahead[i] = g_array_new(FALSE, FALSE, sizeof(Incl));

  double t0 = now_s();
  uint64_t created = 0, inclusions = 0, pending = 0, max_held = 0;
  uint32_t declared = 0, h = 0;
  int64_t next_ns = rng_exp_ns(&txr, 1e9 / TX_RATE_PER_S);
  uint64_t next_si = rng_below(&txr, (uint64_t)n_senders); /* drawn a tx ahead, to prefetch its state */
  int64_t recv[MAX_VANTAGES];
  block_time(&blocks, 0);
  while ((uint64_t)created < (uint64_t)n_txs || pending > 0) {
    h++;
    int64_t mined = block_time(&blocks, h);
    /* Txs created before block h is mined. */
    while ((uint64_t)created < (uint64_t)n_txs && next_ns <= mined) {
      uint64_t si = next_si;
      next_si = rng_below(&txr, (uint64_t)n_senders);
      __builtin_prefetch(&senders[next_si]);
      Sender *s = &senders[si];
      ObsTx r = {.id = mix64(created + 1),
                 .sender = mix64(si + UINT64_C(0x5e4d000000000000)),
                 .nonce = s->nonce++,
                 .created_ns = next_ns,
                 .type = (uint8_t)rng_below(&txr, 3),
                 .gas_limit = 21000,
                 .gas_price_wei = 2e10,
                 .censored = rng_below(&txr, 200) == 0};
      for (guint v = 0; v < nv; v++)
        recv[v] = rng_below(&txr, 100) == 0 ? OBS_TIME_NONE : next_ns + 20 * MS + rng_exp_ns(&txr, 300e6);
      double u = rng_unit(&txr);
      if (u < P_MAIN + P_FORK_ONLY) {
        int64_t due = next_ns + S + (int64_t)(rng_unit(&txr) * 59e9);
        uint32_t hi = h;
        while (block_time(&blocks, hi) < due)
          hi++;
        if (u < P_MAIN) {
          hi = MAX(hi, s->last_height);
          s->last_height = hi;
        }
        g_assert(hi - h < AHEAD);
        Incl in = {.tx = r.id, .block = u < P_MAIN ? main_id(hi) : fork_id(hi)};
        g_array_append_val(ahead[hi % AHEAD], in);
        pending++;
        if (u < P_MAIN && rng_below(&txr, 100) == 0) { /* and in a fork block at the same height */
          in.block = fork_id(hi);
          g_array_append_val(ahead[hi % AHEAD], in);
          pending++;
        }
      }
      if (mode == API_SEEN) {
        check(an_tx_add_tx_seen(t, &r, recv, &err), err, "an_tx_add_tx_seen");
      } else if (mode == API_SPLIT) {
        check(an_tx_add_tx(t, &r, &err), err, "an_tx_add_tx");
        for (guint v = 0; v < nv; v++) {
          if (recv[v] == OBS_TIME_NONE) continue;
          ObsTxSighting sg = {.tx = r.id, .vantage = v, .seen_ns = recv[v]};
          check(an_tx_add_sighting(t, &sg, &err), err, "an_tx_add_sighting");
        }
      }
      created++;
      next_ns += 1 + rng_exp_ns(&txr, 1e9 / TX_RATE_PER_S);
    }
    /* Block h is mined: its inclusion records. */
    GArray *a = ahead[h % AHEAD];
    for (guint i = 0; i < a->len; i++) {
      const Incl *in = &g_array_index(a, Incl, i);
      ObsTxInclusion inc = {.tx = in->tx, .block = in->block, .height = h};
      if (mode != API_NONE) check(an_tx_add_inclusion(t, &inc, &err), err, "an_tx_add_inclusion");
    }
    inclusions += a->len;
    pending -= a->len;
    g_array_set_size(a, 0);
    /* Height h - 64 is final. */
    if (h > FINALITY) {
      uint32_t d = h - FINALITY;
      int64_t d_mined = block_time(&blocks, d);
      for (guint v = 0; v < nv; v++)
        recv[v] =
            rng_below(&declr, 200) == 0 ? OBS_TIME_NONE : d_mined + 100 * MS + rng_below(&declr, 1400 * MS);
      if (mode != API_NONE)
        check(an_tx_add_main_block(t, d, main_id(d), d_mined, recv, &err), err, "an_tx_add_main_block");
      declared = d;
      max_held = MAX(max_held, an_tx_n_held(t));
    }
  }
  double t1 = now_s();
  if (mode != API_NONE) an_tx_finalize(t);
  double t2 = now_s();

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("api=%s txs=%" PRIu64 " inclusions=%" PRIu64 " heights_mined=%" PRIu32 " heights_declared=%" PRIu32
         " senders=%" G_GINT64_FORMAT " vantages=%u seed=%" G_GINT64_FORMAT "\n",
         mode == API_SEEN    ? "seen"
         : mode == API_SPLIT ? "split"
                             : "none",
         created, inclusions, h, declared, n_senders, nv, seed);
  printf("wall_s=%.3f stream_s=%.3f finalize_s=%.3f user_s=%.3f peak_rss_mib=%.1f max_held=%" PRIu64 "\n",
         t2 - t0, t1 - t0, t2 - t1, (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
         (double)ru.ru_maxrss / 1024.0, max_held);

  if (mode != API_NONE) {
    g_autoptr(json_t) j = json_object();
    an_tx_add_json(t, j);
    char *js = json_dumps(j, JSON_REAL_PRECISION(17) | JSON_INDENT(1));
    char *csv = NULL;
    size_t csv_len = 0;
    FILE *f = open_memstream(&csv, &csv_len);
    if (!an_tx_write_commit_csv(t, f)) check(FALSE, NULL, "an_tx_write_commit_csv");
    fclose(f);
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    g_checksum_update(sum, (const guchar *)js, (gssize)strlen(js));
    g_checksum_update(sum, (const guchar *)csv, (gssize)csv_len);
    printf("digest=%s\n", g_checksum_get_string(sum));
    if (out_path) {
      FILE *o = fopen(out_path, "w");
      if (!o || fprintf(o, "%s\n%s", js, csv) < 0 || fclose(o) != 0) {
        fprintf(stderr, "bench-txmetrics: %s: write failed\n", out_path);
        return 1;
      }
    }
    free(js);
    free(csv);
  }
  for (guint i = 0; i < AHEAD; i++)
    g_array_unref(ahead[i]);
  g_free(senders);
  g_free(blocks.mined_ns);
  return 0;
}
