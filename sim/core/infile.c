/* infile.c: checks on input paths. */
#include "infile.h"

#include <sys/stat.h>

gboolean sim_input_unbounded(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}
