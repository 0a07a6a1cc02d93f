/* net-private.h: what the geo network's files (net_jitter.c, net_geo.c, net_topology.c) share and nothing
 * else uses. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* %g when it round-trips, else the shortest longer form that does (for messages). Free with g_free(). */
char *net_fmt_num(double v);

G_END_DECLS
