/* geo.h: the "geo" network model of the proof-of-work world (see geo.c and net.h, relay.h). */
#pragma once

#include "net.h"
#include "pow.h"

G_BEGIN_DECLS

extern const PowNetworkModel pow_network_geo;

G_END_DECLS
