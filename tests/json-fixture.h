/* json-fixture.h: reading summaries in tests. A file defines JSON_FIXTURE_SECTION (e.g. "tx") before
 * including this, and gets jget/jnum for '/'-separated paths under summary[JSON_FIXTURE_SECTION]. */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

/* The value at a '/'-separated path under summary[JSON_FIXTURE_SECTION], or NULL. */
static inline json_t *jget(json_t *summary, const char *path) {
  json_t *o = json_object_get(summary, JSON_FIXTURE_SECTION);
  gchar **parts = g_strsplit(path, "/", -1);
  for (char **k = parts; o && *k; k++) o = json_object_get(o, *k);
  g_strfreev(parts);
  return o;
}

static inline double jnum(json_t *summary, const char *path) {
  json_t *v = jget(summary, path);
  if (!v) fprintf(stderr, "missing key %s\n", path);
  return v ? json_number_value(v) : NAN;
}
