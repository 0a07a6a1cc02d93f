/* util.c: helpers shared by the analysis modules. */
#include "util.h"

#include <glib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

gsize an_fmt_fixed9(char *buf, double x) {
  if (!isfinite(x) || fabs(x) >= 1e9) return (gsize)snprintf(buf, AN_FIXED9_MAX, "%.9f", x);
  char *p = buf;
  if (signbit(x)) *p++ = '-';
  int e;
  double f = frexp(fabs(x), &e); /* |x| = f 2^e, f in [0.5, 1) or 0 */
  uint64_t n = 0;
  if (f != 0) { /* |x| 1e9 = m 1e9 2^-s exactly, m < 2^53, s >= 23 (|x| < 2^30) */
    uint64_t m = (uint64_t)ldexp(f, 53);
    int s = 53 - e;
    unsigned __int128 prod = (unsigned __int128)m * 1000000000u; /* < 2^83 */
    if (s < 128) {
      unsigned __int128 q = prod >> s, rem = prod - (q << s), half = (unsigned __int128)1 << (s - 1);
      if (rem > half || (rem == half && (q & 1))) q++;
      n = (uint64_t)q;
    } /* else below 2^-45: 0 */
  }
  uint64_t ip = n / 1000000000u;
  uint32_t fp = (uint32_t)(n % 1000000000u);
  char tmp[24];
  int l = 0;
  do {
    tmp[l++] = (char)('0' + ip % 10);
    ip /= 10;
  } while (ip);
  while (l) *p++ = tmp[--l];
  *p++ = '.';
  for (int i = 8; i >= 0; i--) {
    p[i] = (char)('0' + fp % 10);
    fp /= 10;
  }
  return (gsize)(p + 9 - buf);
}


void an_csv_put_field(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

char **an_vantage_names_dup(const char *const *names, unsigned n) {
  g_return_val_if_fail(names != NULL && n >= 1, NULL);
  for (unsigned v = 0; v < n; v++) {
    g_return_val_if_fail(names[v] != NULL && names[v][0] != '\0', NULL);
    for (unsigned w = 0; w < v; w++) g_return_val_if_fail(strcmp(names[v], names[w]) != 0, NULL);
  }
  char **out = g_new0(char *, (gsize)n + 1);
  for (unsigned v = 0; v < n; v++) out[v] = g_strdup(names[v]);
  return out;
}

void an_json_set_nonempty(json_t *parent, const char *key, json_t *o) {
  if (json_object_size(o) > 0)
    json_object_set_new(parent, key, o);
  else
    json_decref(o);
}

/* SplitMix64's finaliser (the same as the engine's sim_mix64, written out here: the analysis depends on nothing
 * of ours). */
static guint64 mix64(guint64 x) {
  x ^= x >> 30;
  x *= G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= G_GUINT64_CONSTANT(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

guint an_id_hash(gconstpointer key) {
  guint64 x = *(const guint64 *)key;
  x = mix64(x);
  return (guint)(x ^ (x >> 32));
}
