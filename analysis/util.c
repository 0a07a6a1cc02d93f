/* util.c: helpers shared by the analysis modules. */
#include "util.h"

#include <errno.h>
#include <glib.h>
#include <string.h>
#include <sys/stat.h>


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

/* Ends a record on a read error or returns TRUE: the record is complete. */
static gboolean csv_check_read(FILE *in, GError **error) {
  if (!ferror(in)) return TRUE;
  int e = errno;
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "cannot read: %s", g_strerror(e));
  return FALSE;
}

gboolean an_csv_read_record(FILE *in, GPtrArray *fields, guint *line, GError **error) {
  g_return_val_if_fail(in != NULL && fields != NULL && line != NULL, FALSE);
  g_ptr_array_set_size(fields, 0);
  int c = getc(in);
  if (c == EOF) {
    csv_check_read(in, error);
    return FALSE;
  }
  g_autoptr(GString) f = g_string_new(NULL);
  for (;;) {
    if (c == '"') {
      for (;;) {
        c = getc(in);
        if (c == EOF) {
          if (csv_check_read(in, error))
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                        "quoted field not closed at the end of the file");
          return FALSE;
        }
        if (c == '"') {
          c = getc(in);
          if (c != '"') break;
        } else if (c == '\n') {
          (*line)++;
        }
        g_string_append_c(f, (char)c);
      }
      if (c == '\r') {
        c = getc(in);
        if (c != '\n') c = '\r';
      }
      if (c != ',' && c != '\n' && c != EOF) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "text after the closing quote of field %u",
                    fields->len + 1);
        return FALSE;
      }
    } else {
      while (c != ',' && c != '\n' && c != EOF) {
        g_string_append_c(f, (char)c);
        c = getc(in);
      }
      if (c != ',' && f->len > 0 && f->str[f->len - 1] == '\r') g_string_truncate(f, f->len - 1);
    }
    /* A NUL would end the field's C string early: the rest of the field would vanish without a word. */
    if (memchr(f->str, '\0', f->len)) {
      g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "NUL byte in field %u", fields->len + 1);
      return FALSE;
    }
    g_ptr_array_add(fields, g_strndup(f->str, f->len));
    g_string_truncate(f, 0);
    if (c != ',') break;
    c = getc(in);
  }
  if (c == '\n') (*line)++;
  return csv_check_read(in, error);
}

gboolean an_input_unbounded(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
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
