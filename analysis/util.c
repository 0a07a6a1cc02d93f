/* util.c: helpers shared by the analysis modules. */
#include "util.h"

#include <glib.h>
#include <string.h>


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
