/* csv.h: writing CSV fields (RFC 4180), shared by every table the analysis writes. */
#pragma once

#include <stdio.h>

/* Writes `s` as one field: quoted when it holds a separator, a quote or a line break, quotes doubled. */
void an_csv_put_field(FILE *out, const char *s);
