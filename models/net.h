/* net.h: the geographic network substrate: regions and data-centre cities, link classes, latency with
 * jitter, bandwidth, and the peer-to-peer topology (nodes, peers), built once per run and read-only after.
 *
 * Latency of one message from u to v: a per-pair mean plus jitter drawn from the "jitter" model family.
 *  - Both endpoints in data centres with a known city: mean = city RTT / 2 (WonderNetwork pings, Nov 2018).
 *  - Otherwise: mean = the region matrix entry (SimBlock's 2019 table: mean delay of one message).
 * Transfer time of `bytes`: bytes * 8 / min(upload of u, download of v); per node link class gives the
 * bandwidth (home nodes: their region's table; data-centre nodes: the datacenter class).
 *
 * Topology (Geth-like): each ordinary node dials `out_peers` others (a share `geo_bias` of them inside its
 * own region, the rest uniformly), refusing dials to nodes whose `max_peers` are full; special nodes
 * (vantage points, pool gateways) dial up to their own peer count the same way. Links are bidirectional.
 * The graph is stored in CSR form with, for every directed edge, the index of its reverse edge.
 *
 * SimBlock-style options (both off by default): "out_degree_cdf" draws each ordinary node's dial count
 * from a distribution over 1..NET_OUT_DEGREE_MAX (SimBlock's Bitcoin 2015 table), and `inter_region_bps`
 * caps the bandwidth of every link between two different regions (SimBlock: 6 Mb/s).
 *
 * Performance-model options (both off by default, and then nothing of a run changes):
 *  - `dc_stack` (models/rdma.h): every message on a link whose two ends are data-centre nodes (in
 *    practice the gateway mesh: vantage points and gateways dial only ordinary nodes) also pays the
 *    stack's per-message host overheads o_s + o_r at its defaults (sim_stack_host_overhead_ns_by_name):
 *    the CPU cost of sending and receiving one message, not the wire latency, which the latency tables
 *    already hold. The overhead is added after the jitter draw, not jittered; per-byte copies (LogGOPS's
 *    O) are left out (the link's bandwidth term stands for serialisation).
 *  - "joining" (models/sync.h): a share of the ordinary nodes join during the run, at times uniform in
 *    [0, window_s], and each is unavailable until it has synced to the head on its machine class
 *    (sim_sync_class_duration(machine, SIM_SYNC_TARGET_HEAD)). See net_joining_first_unavailable().
 */
#pragma once

#include <glib.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "params.h"
#include "rng.h"

G_BEGIN_DECLS

#define NET_NO_CITY UINT16_MAX
#define NET_MAX_REGIONS 64
#define NET_NO_POOL G_MAXUINT  /* NetSpecial.pool of a vantage point */
#define NET_MAX_SPECIAL_PEERS 1000000 /* largest "peers" of a vantage point or gateway */
#define NET_OUT_DEGREE_MAX 20 /* entries of "out_degree_cdf": P(dials <= k) for k = 1..20 */

enum { NET_CLASS_HOME = 0, NET_CLASS_DATACENTER = 1 };

/* What a special node is for. */
typedef enum { NET_ROLE_NODE = 0, NET_ROLE_VANTAGE, NET_ROLE_GATEWAY } NetRole;

/* A node placed by the scenario (vantage point or pool gateway), parsed from JSON. */
typedef struct {
  char *name;       /* vantage name ("WE") or "<pool>#<k>" for gateways */
  NetRole role;
  guint pool;       /* gateways: index into the scenario's pools; NET_NO_POOL for vantage points */
  guint16 region;   /* region index */
  guint16 city;     /* city index or NET_NO_CITY */
  guint32 peers;    /* ordinary nodes it dials (max peers); at most the number of ordinary nodes are found */
} NetSpecial;

/* "dc_stack": the names of net_geo_param_specs' choices, NULL-terminated: "none" (index NET_DC_STACK_NONE),
 * then every "stack" model in the order of sim_stack_models(). */
#define NET_DC_STACK_NONE 0
extern const char *const net_dc_stack_names[];

/* The "joining" object of a geo network (its parameter table: net_geo_joining_specs). */
typedef struct {
  double share;    /* of the ordinary nodes, in [0, 1]: round(share x nodes) of them join */
  double window_s; /* join times are uniform in [0, window_s] of simulated time */
  int machine;     /* index into net_joining_machine_names: its sync time to the head */
} NetJoining;
/* The machine classes of sim_sync_machine_classes(), as a static table for the ENUM parameter. */
extern const char *const net_joining_machine_names[];
extern const SimParamSpec net_geo_joining_specs[];
extern const guint net_geo_n_joining_specs;

/* The "network": {"model": "geo", ...} parameters, parsed and validated (see net_geo.c for the JSON
 * shape). */
typedef struct {
  /* scalars (param table) */
  int64_t nodes;         /* ordinary nodes */
  int64_t out_peers;     /* dialled by each ordinary node (Geth: max_peers / 3) */
  int64_t max_peers;     /* cap of an ordinary node (Geth default 25) */
  double geo_bias;       /* share of dials inside the node's own region */
  double dc_upload_bps;  /* data-centre link class */
  double dc_download_bps;
  int64_t gateway_peers; /* default peers of a gateway that does not give its own */
  gboolean gateway_mesh; /* link every two gateways of different pools (else only those in the same city) */
  double inter_region_bps; /* cap on the bandwidth between two different regions; 0 = no cap */
  int dc_stack;          /* index into net_dc_stack_names: NET_DC_STACK_NONE or a "stack" model */
  double latency_scale;  /* multiplies every link's mean latency (0, in a hand-built struct, counts as 1) */
  SimModelRef jitter;    /* family "jitter" */
  SimModelRef relay;     /* family "relay" */
  SimModelRef stratum;   /* family "delay": pool gateway new head -> miners working on it */
  /* tables (custom parsed) */
  guint n_regions;
  char **region_names;   /* n_regions */
  double *latency_ms;    /* n_regions x n_regions, row-major: mean one-way delay */
  double *upload_bps;    /* per region, home class */
  double *download_bps;
  double *node_share;    /* per region, sums to 1 */
  guint n_cities;
  char **city_names;
  guint16 *city_region;  /* region of each city */
  double *city_rtt_ms;   /* n_cities x n_cities RTT, row-major; NAN where not measured */
  NetSpecial *specials;  /* vantage points first, then gateways in the order listed (entry, then place) */
  guint n_vantages;
  guint n_specials;
  double *out_degree_cdf; /* NET_OUT_DEGREE_MAX entries, P(dials <= k + 1); NULL: all dial out_peers */
  guint8 *pool_on_nodes;  /* per scenario pool (n_pools): 1 when its miners sit on ordinary nodes */
  guint n_pools;
  NetJoining joining;     /* the "joining" object; share 0 (also when absent): nobody joins */
} NetGeoParams;

/* The read-only topology. Node ids: specials first (same order as NetGeoParams.specials), then ordinary. */
typedef struct {
  guint32 n_nodes;
  guint32 n_special;
  guint16 *region;      /* per node */
  guint16 *city;        /* per node, NET_NO_CITY for ordinary nodes */
  guint8 *cls;          /* per node: NET_CLASS_* */
  double *up_bps;       /* per node */
  double *down_bps;     /* per node */
  guint32 *adj_off;     /* n_nodes + 1 offsets into adj */
  guint32 *adj;         /* neighbour of each directed edge */
  guint32 *rev;         /* index of the reverse directed edge */
  SimTime *lat_mean_ns; /* per directed edge: mean one-way latency */
  SimTime *lat_floor_ns; /* per directed edge: the smallest latency the jitter model can draw */
  double *tx_ns_per_byte; /* per directed edge: 8e9 / the link's bandwidth (see net_transfer_ns) */
  guint64 n_edges;      /* directed edges (2 x links) */
  /* Added for the SimBlock-style options; zero/NULL in a hand-built topology means "off"/"unknown". */
  double inter_region_bps; /* NetGeoParams.inter_region_bps: cap between different regions, 0 = none */
  uint64_t seed;           /* the seed it was built with (relay models key per-node traits with it) */
  guint32 *out_links;      /* per node: links it opened itself (its dials that succeeded), or NULL */
  /* Added for the performance-model options; NULL / 0 means "off". */
  SimTime *lat_host_ns;    /* per directed edge: the part of lat_mean_ns and lat_floor_ns that is host
                            * overhead (dc_stack), added after the jitter draw; NULL: none anywhere */
  guint32 n_joining;       /* joining nodes (net_topology_set_joining) */
  guint32 *join_node;      /* n_joining node ids, ordered by (join_avail_ns, node id) */
  SimTime *join_avail_ns;  /* when each is synced: join time + sync time, ns of simulated time */
} NetTopology;

#define NET_ERROR (net_error_quark())
GQuark net_error_quark(void);
typedef enum { NET_ERROR_TOPOLOGY } NetError;

/* Builds the topology with randomness from the setup stream (seed, SIM_RNG_SETUP_BASE + 1). On failure
 * (e.g. a special node that cannot find any peer) returns NULL and sets `error`. Free with net_topology_free.
 *
 * Details (all deterministic from the seed; dials happen in node order):
 *  - Ordinary node regions: exact counts per region by largest-remainder rounding of nodes x node_share
 *    (ties to the lower region index), assigned to ordinary nodes in a random order.
 *  - Each ordinary node u dials out_peers times (with out_degree_cdf: a count drawn from it, one uniform
 *    draw per node just before its dials), while it has fewer than max_peers links; each try picks,
 *    with probability geo_bias, a uniform ordinary node of u's region, else a uniform ordinary node, and
 *    is refused for u itself, an existing link, or a target with max_peers links; a dial gives up after
 *    NET_DIAL_TRIES refused tries.
 *  - Then each special dials min(peers, ordinary nodes) distinct ordinary nodes, geo-biased the same way,
 *    drawing without replacement so that it always finds them when they exist. Vantage points respect
 *    the targets' max_peers; gateways ignore it (data-centre nodes of pools are welcome peers), so an
 *    ordinary node may end with more than max_peers links, the extra ones all to gateways.
 *  - Gateways of different pools that sit in the same city are linked with each other (pools peer in the
 *    same data centres); these links come on top of `peers`. No other special-special links exist.
 *  - A special left without any link is an error (NET_ERROR_TOPOLOGY naming it).
 *  - adj is sorted by neighbour id within each node; rev[e] is the reverse of e (adj[rev[e]] is the source
 *    of e, rev[rev[e]] == e); lat_mean_ns[e] is city RTT / 2 when both ends have a city with a measured
 *    RTT, else latency_ms[region(u)][region(v)]; either times latency_scale (0 counts as 1), before the
 *    jitter model's floor is taken from it.
 *  - dc_stack != "none": edges between two data-centre nodes get lat_host_ns = the stack's o_s + o_r
 *    (rounded to ns), added to their lat_mean_ns and lat_floor_ns; lat_host_ns stays NULL otherwise.
 *  - joining.share > 0: from a stream of its own, (seed, SIM_RNG_SETUP_BASE + 2), so that nothing above
 *    changes: round(share x nodes) distinct ordinary nodes by a partial Fisher-Yates shuffle of the
 *    ordinary ids, each with a join time window_s x U, available at join + the sync time of the machine
 *    class (rounded to ns). */
#define NET_DIAL_TRIES 50
NetTopology *net_topology_build(const NetGeoParams *p, uint64_t seed, GError **error);
void net_topology_free(NetTopology *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NetTopology, net_topology_free)

/* One draw of the latency of directed edge `e` (mean plus jitter), in ns, >= 0. Uses p->jitter (the
 * mean alone when no jitter model is set). With host overhead on the edge (t->lat_host_ns), the jitter is
 * drawn around the mean without it, then the overhead is added. */
SimTime net_edge_latency(const NetGeoParams *p, const NetTopology *t, guint64 e, SimRng *rng);

/* Makes nodes[0..n-1] joining nodes, synced at avail_ns[i] (copies both, replacing any earlier set; n 0
 * clears it). For net_topology_build() and for hand-built topologies in tests. */
void net_topology_set_joining(NetTopology *t, const guint32 *nodes, const SimTime *avail_ns, guint32 n);

/* Joining nodes are unavailable for a block whose spread starts at `t0` (its first source's time) if they
 * are not synced by then: they receive nothing (what is sent to them is lost) and relay nothing for it. A
 * node synced while a block spreads takes part from the next block. This is the index of the first entry
 * of t->join_node that is unavailable at `t0`: entries from there to n_joining are. */
static inline guint32 net_joining_first_unavailable(const NetTopology *t, SimTime t0) {
  guint32 lo = 0, hi = t->n_joining;
  while (lo < hi) {
    guint32 mid = lo + (hi - lo) / 2;
    if (t->join_avail_ns[mid] <= t0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The Pareto draw's per-distribution tables (see "The Pareto draw" below): ~0.7 KB. */
#define NET_PARETO_T 64 /* mantissa subintervals of U */
#define NET_PARETO_P 16 /* octaves of U with a table entry: U >= 2^-16 */
#define NET_PARETO_K 7  /* terms of the binomial series of (1 + r)^-a */
typedef struct {
  double p[NET_PARETO_P]; /* scale_ns x 2^(a j): the octave 2^-(j+1) <= U < 2^-j */
  double t[NET_PARETO_T]; /* 2^(a g_i): net_pareto_g */
  double c[NET_PARETO_K]; /* binom(-a, k), k = 1..K */
} NetParetoTable;

/* One latency draw for a fixed pair mean, with the jitter model's per-mean work done once: for loops that
 * draw many latencies over few distinct means (the relay keeps one per link class). net_latency_draw()
 * consumes the same random numbers as net_edge_latency() for an edge with that mean, in the same order, and
 * returns the same value for every jitter model but "pareto", whose table form (net_pareto_table_draw) may
 * round a few draws in a million to the next ns (same distribution; see "The Pareto draw" below). */
typedef enum { NET_DRAW_FIXED = 0, NET_DRAW_PARETO, NET_DRAW_MODEL } NetDrawKind;
typedef struct {
  NetDrawKind kind;
  SimTime fixed_ns;       /* NET_DRAW_FIXED: the result; no random number is used */
  double scale_ms, shape; /* NET_DRAW_PARETO: scale_ms / U^(1 / shape) */
  SimTime mean_ns;        /* NET_DRAW_MODEL: the model's sample() is called with it (host overhead excluded) */
  const void *model;      /* NET_DRAW_MODEL: the NetJitterModel, and its params */
  const void *params;
  SimTime host_ns;        /* not NET_DRAW_FIXED: added to every draw (0 without dc_stack) */
  double scale_ns, inv_shape; /* NET_DRAW_PARETO: net_pareto_factors() of scale_ms and shape */
  NetParetoTable pareto;      /* NET_DRAW_PARETO: net_pareto_table_init(scale_ns, inv_shape) */
} NetLatencyDraw;

/* Fills `d` for pair mean `mean_ns` under p->jitter, of which `host_ns` is host overhead (as in
 * NetTopology.lat_mean_ns and lat_host_ns; 0 for none). `d` refers to p->jitter's params: keep `p` alive. */
void net_latency_draw_init(NetLatencyDraw *d, const NetGeoParams *p, SimTime mean_ns, SimTime host_ns);

static inline SimTime net_latency_draw(const NetLatencyDraw *d, SimRng *rng);

/* Transfer time of `bytes` over directed edge u -> v (serialisation only, no latency):
 * bytes * 8 / min(up_bps[u], down_bps[v]) seconds, rounded to the nearest ns; with t->inter_region_bps > 0
 * and u, v in different regions the bandwidth is also capped at inter_region_bps. */
SimTime net_transfer_ns(const NetTopology *t, guint32 u, guint32 v, double bytes);

/* The same over directed edge `e`, from a per-edge factor (no division on the relay's hot path). */
static inline SimTime net_edge_transfer_ns(const NetTopology *t, guint64 e, double bytes) {
  double ns = bytes * t->tx_ns_per_byte[e];
  return ns < (double)SIM_DURATION_MAX ? (SimTime)(ns + 0.5) : SIM_DURATION_MAX;
}

/* ---- the "jitter" family: the spread of one message's latency around its pair mean ---- */
typedef struct {
  SimModelInfo info;
  /* A latency draw for a pair whose mean is `mean_ns`. */
  SimTime (*sample)(const void *params, SimTime mean_ns, SimRng *rng);
  /* The smallest value sample() can return for that mean (lets the relay skip draws that cannot matter). */
  SimTime (*floor_ns)(const void *params, SimTime mean_ns);
} NetJitterModel;

extern const NetJitterModel net_jitter_none;    /* always the mean */
/* SimBlock: scale = mean - floor_ms (5), shape = shape_per_ms (0.2) x mean in ms, draw scale / U^(1/shape);
 * its mean is scale x shape / (shape - 1), exactly the pair mean with the defaults. Where shape <= 1 or
 * scale <= 0 (mean <= 5 ms with the defaults) the distribution has no finite mean: the mean is returned. */
extern const NetJitterModel net_jitter_pareto;
/* exp(N(mu, sigma^2)) with mu = ln(mean) - sigma^2 / 2, so the mean is preserved. */
extern const NetJitterModel net_jitter_lognormal;
/* mean x a factor whose quantile function is piecewise linear through (0, 0.5 p10), (0.1, p10),
 * (0.5, p50), (0.9, p90), (0.99, p99), (1, 1.5 p99); the factors must be non-decreasing. Not mean
 * preserving: the mean factor of the defaults (0.8, 1, 1.5, 3) is 1.16. */
extern const NetJitterModel net_jitter_empirical;

static inline SimTime net_jitter_sample(const SimModelRef *ref, SimTime mean_ns, SimRng *rng) {
  return ((const NetJitterModel *)ref->model)->sample(ref->params, mean_ns, rng);
}

/* ---- The Pareto draw without libm ----
 * scale / U^(1/shape), U = (w + 1/2) 2^-53 from one 64-bit word's top 53 bits (sim_rng_uniform_pos), with
 * a = 1 / shape in (0, 1) (the model draws only for shape > 1). Write U = 2^-(j+1) m with m in [1, 2) (j from
 * U's exponent) and let i be m's top 6 fraction bits, c_i = 1 + (i + 1/2)/64 the middle of its subinterval,
 * invc_i = 1 / c_i rounded to a double and r = m invc_i - 1 (|r| <= 2^-7; the subtraction is exact). Then
 *   U^-a = 2^(a j) x 2^(a g_i) x (1 + r)^-a,  g_i = 1 + log2(invc_i) in (0, 1],
 * since m^-a = invc_i^a (m invc_i)^-a and 2^(a (j + 1)) invc_i^a = 2^(a j) 2^(a g_i). The first two factors
 * depend on the distribution and on j or i only: NetParetoTable holds scale_ns x 2^(a j) for j < 16 and
 * 2^(a g_i), each computed once as scale_ns x net_exp2_pos(a j) and net_exp2_pos(a g_i); the third is its
 * binomial series 1 + sum_k binom(-a, k) r^k to k = 7 (|binom(-a, k)| <= 1 for a <= 1, so the rest is below
 * 2^-56 / (1 - 2^-7) < 1.4e-17). A draw from a table is two lookups, seven multiply-adds and two products:
 * about a third fewer instructions than -log2(U) and 2^y by their polynomials (net_pareto_draw, below), which
 * the relay kernels' per-class draws (net_latency_draw) used until this table form.
 * Error against the exact scale / U^(1/shape): the table entries come from net_exp2_pos() (< 4e-16) of a
 * rounded argument (a j: 1.1e-16 relative, so 0.8e-16 x a j relative in 2^(a j); g_i: rounded to a double,
 * < 0.8e-16), rounded once more (1.1e-16 each); the series (1.4e-17 cut, 2^-53 a in r, 1.1e-16 for 1 + r q)
 * and the two products (2.2e-16): below 1.5e-15 + 0.8e-16 a j in all, a j <= 53 a. Octaves j >= 16 (one draw
 * in 65,536) compute scale_ns x net_exp2_pos(a j) on the spot, the same expression as the table's.
 * Building a table takes 80 calls of net_exp2_pos(): worth it for a distribution drawn many times (a relay's
 * link class), not per draw (computing the entries per draw made the setup's draws 50% dearer); so the jitter
 * model's sample() keeps net_pareto_draw() (-log2(U) / shape, then 2^y), whose draws from the same word
 * agree with the table form but for a few in a million, one ns apart.
 * tests/test_net.c checks the two tables entry by entry, the bound on a million words per shape against
 * long-double arithmetic, and the table draws' distribution (moments and quantiles, with power against a 2%
 * shape error). */
extern const double net_pareto_invc[NET_PARETO_T]; /* 1 / (1 + (i + 1/2)/64), rounded to a double */
extern const double net_pareto_g[NET_PARETO_T];    /* 1 + log2(net_pareto_invc[i]), correctly rounded */

/* -log2(U) and 2^y without libm, the previous Pareto draw's halves (scale x 2^y, y = -log2(U) / shape):
 *  - net_neg_log2_uniform(u) = -log2(u) = -(k + log2(c) + log2(1 + r)) with u = 2^k z, z in [0.6875, 1.375),
 *    c near the middle of z's 1/64 of that range (64 entries: 1/c rounded to a double and log2(c) for that
 *    rounded 1/c, correctly rounded), r = z / c - 1 (|r| < 0.0079) and log2(1 + r) by its Taylor series to
 *    r^7 (the rest is below |r|^8 / (8 ln 2) < 3e-18). Absolute error: rounding of r (< 2^-53 x 1.45) and
 *    of the sums, below 4e-16 + 2.3e-16 |log2 u|.
 *  - net_exp2_pos(y) = 2^y for 0 <= y < 1000: 2^(n/128) from a 128-entry table (correctly rounded) times
 *    2^f, |f| <= 1/256, by its Taylor series to f^5 (the rest is below 6e-19): relative error below 4e-16.
 * The tables are net_jitter.c's constants; none changes at run time. */
#define NET_LOG2_TABLE_SIZE 64
#define NET_EXP2_TABLE_SIZE 128
typedef struct {
  double invc;  /* 1 / c rounded to a double */
  double log2c; /* log2(1 / invc), correctly rounded */
} NetLog2Entry;
extern const NetLog2Entry net_log2_table[NET_LOG2_TABLE_SIZE];
extern const double net_exp2_table[NET_EXP2_TABLE_SIZE]; /* 2^(j / 128), correctly rounded */

static inline uint64_t net_f64_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static inline double net_f64_from_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* -log2(u) for u in (0, 1) (a normal double: sim_rng_uniform_pos() gives u >= 2^-54). */
static inline double net_neg_log2_uniform(double u) {
  uint64_t ix = net_f64_bits(u);
  uint64_t tmp = ix - UINT64_C(0x3fe6000000000000); /* bits of 0.6875 */
  const NetLog2Entry *e = &net_log2_table[(tmp >> 46) % NET_LOG2_TABLE_SIZE];
  int64_t k = (int64_t)tmp >> 52; /* arithmetic shift: u = 2^k z */
  double z = net_f64_from_bits(ix - (tmp & (UINT64_C(0xfff) << 52)));
  double r = z * e->invc - 1.0;
  /* log2(1 + r) = sum_{j>=1} (-1)^(j+1) r^j / (j ln 2), Estrin's scheme */
  static const double c1 = 0x1.71547652b82fep+0, c2 = -0x1.71547652b82fep-1, c3 = 0x1.ec709dc3a03fdp-2,
                      c4 = -0x1.71547652b82fep-2, c5 = 0x1.2776c50ef9bfep-2, c6 = -0x1.ec709dc3a03fdp-3,
                      c7 = 0x1.a61762a7aded9p-3;
  double r2 = r * r, r4 = r2 * r2;
  double p = r * ((c1 + r * c2) + r2 * (c3 + r * c4) + r4 * ((c5 + r * c6) + r2 * c7));
  return -(((double)k + e->log2c) + p);
}

/* 2^y for 0 <= y < 1000. */
static inline double net_exp2_pos(double y) {
  static const double shift = 0x1.8p45; /* its ulp is 1/128: y + shift rounds y to n / 128 */
  double kd = y + shift;
  uint64_t n = net_f64_bits(kd) - net_f64_bits(shift);
  double f = y - (kd - shift); /* exact, |f| <= 1/256 */
  double s = net_f64_from_bits(net_f64_bits(net_exp2_table[n % NET_EXP2_TABLE_SIZE]) +
                               ((n / NET_EXP2_TABLE_SIZE) << 52));
  /* 2^f - 1 = sum_{j>=1} (f ln 2)^j / j! */
  static const double b1 = 0x1.62e42fefa39efp-1, b2 = 0x1.ebfbdff82c58fp-3, b3 = 0x1.c6b08d704a0c0p-5,
                      b4 = 0x1.3b2ab6fba4e77p-7, b5 = 0x1.5d87fe78a6731p-10;
  double f2 = f * f;
  double q = f * ((b1 + f * b2) + f2 * (b3 + f * b4 + f2 * b5));
  return s + s * q;
}

/* The binomial coefficients binom(-a, k) = prod_{l<k} -(a + l) / (l + 1), k = 1..NET_PARETO_K. */
static inline void net_pareto_coefs(double a, double c[NET_PARETO_K]) {
  static const double inv_k[NET_PARETO_K] = {1.0, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7};
  double ck = 1.0;
  for (int k = 0; k < NET_PARETO_K; k++) {
    ck = ck * (-(a + (double)k) * inv_k[k]);
    c[k] = ck;
  }
}

/* The tables for scale_ns / U^a, a = inv_shape in (0, 1]. */
static inline void net_pareto_table_init(NetParetoTable *tb, double scale_ns, double inv_shape) {
  for (int j = 0; j < NET_PARETO_P; j++)
    tb->p[j] = scale_ns * net_exp2_pos(inv_shape * (double)j);
  for (int i = 0; i < NET_PARETO_T; i++)
    tb->t[i] = net_exp2_pos(inv_shape * net_pareto_g[i]);
  net_pareto_coefs(inv_shape, tb->c);
}

/* U's octave j (2^-(j+1) <= U < 2^-j), its subinterval i and r, from the bits of u in (0, 1). (U = 1, which
 * sim_rng_uniform_pos() returns for the largest word, as (2^53 - 1/2) 2^-53 rounds up, is the callers'.) */
static inline double net_pareto_split(double u, uint64_t *j, uint64_t *i) {
  uint64_t ix = net_f64_bits(u);
  *j = UINT64_C(1022) - (ix >> 52);
  *i = (ix >> 46) & (NET_PARETO_T - 1);
  double m = net_f64_from_bits((ix & ((UINT64_C(1) << 52) - 1)) | UINT64_C(0x3ff0000000000000));
  return m * net_pareto_invc[*i] - 1.0;
}

/* p x t x (1 + r) ^ -a with c the coefficients of a, rounded to ns and saturated at SIM_DURATION_MAX. */
static inline SimTime net_pareto_finish(double p, double t, const double c[NET_PARETO_K], double r) {
  double r2 = r * r, r4 = r2 * r2;
  double q = (c[0] + r * c[1]) + r2 * (c[2] + r * c[3]) + r4 * ((c[4] + r * c[5]) + r2 * c[6]);
  double x_ns = (p * t) * (1.0 + r * q);
  return x_ns < (double)SIM_DURATION_MAX ? (SimTime)(x_ns + 0.5) : SIM_DURATION_MAX;
}

/* The tables' value for a uniform u in (0, 1] (callers with their own uniform: the Geth relay's keyed
 * streams). */
static inline SimTime net_pareto_table_of_u(const NetParetoTable *tb, double scale_ns, double inv_shape, double u) {
  uint64_t j, i;
  if (G_UNLIKELY(u >= 1.0)) return net_pareto_finish(scale_ns, 1.0, tb->c, 0.0); /* U = 1: the scale */
  double r = net_pareto_split(u, &j, &i);
  double p = G_LIKELY(j < NET_PARETO_P) ? tb->p[j] : scale_ns * net_exp2_pos(inv_shape * (double)j);
  return net_pareto_finish(p, tb->t[i], tb->c, r);
}

/* One draw from the tables: one 64-bit word. */
static inline SimTime net_pareto_table_draw(const NetParetoTable *tb, double scale_ns, double inv_shape,
                                            SimRng *rng) {
  return net_pareto_table_of_u(tb, scale_ns, inv_shape, sim_rng_uniform_pos(rng));
}

/* One draw of the "pareto" model once its scale and shape are known, in ns: scale_ns / U^(1/shape), with
 * inv_shape = 1 / shape (> 0) and U uniform in (0, 1) (sim_rng_uniform_pos: one 64-bit word), as
 * scale_ns x 2^(-log2(U) / shape) (above). The model's sample() uses it: one call per draw, no table, for
 * the setup's many draws over many pair means (the transaction model's propagation trees). The same
 * distribution's table form (net_pareto_table_draw) costs a third less per draw once its table is built;
 * from the same word the two agree but for a few draws in a million, one ns rounding apart (both are within
 * 1.5e-15 relative of the exact quantile; tests/test_net.c). net_pareto_of_u() is the same for a given
 * U in (0, 1], for callers with their own uniform (the Geth relay's keyed streams). */
static inline SimTime net_pareto_of_u(double scale_ns, double inv_shape, double u) {
  double x_ns = scale_ns * net_exp2_pos(net_neg_log2_uniform(u) * inv_shape);
  return x_ns < (double)SIM_DURATION_MAX ? (SimTime)(x_ns + 0.5) : SIM_DURATION_MAX;
}

static inline SimTime net_pareto_draw(double scale_ns, double inv_shape, SimRng *rng) {
  return net_pareto_of_u(scale_ns, inv_shape, sim_rng_uniform_pos(rng));
}

/* The arguments of net_pareto_draw() for a scale in ms and a shape > 1. */
static inline void net_pareto_factors(double scale_ms, double shape, double *scale_ns, double *inv_shape) {
  *scale_ns = scale_ms * 1e6;
  *inv_shape = 1.0 / shape;
}

static inline SimTime net_latency_draw(const NetLatencyDraw *d, SimRng *rng) {
  if (G_LIKELY(d->kind == NET_DRAW_PARETO)) /* in [0, SIM_DURATION_MAX] already */
    return net_pareto_table_draw(&d->pareto, d->scale_ns, d->inv_shape, rng) + d->host_ns;
  if (d->kind == NET_DRAW_FIXED) return d->fixed_ns;
  SimTime x = ((const NetJitterModel *)d->model)->sample(d->params, d->mean_ns, rng);
  return (x < 0 ? 0 : sim_duration_clamp(x)) + d->host_ns;
}

/* The geo network's parameter handling, used by the "geo" network model's table (geo.c defines the model). */
/* Sizes of the two tables below, as constants so model tables can be initialised statically; net_geo.c
 * checks them with G_STATIC_ASSERT. */
#define NET_GEO_N_PARAMS 11
#define NET_GEO_N_SUBMODELS 3
extern const SimParamSpec net_geo_param_specs[];
extern const guint net_geo_n_param_specs;
extern const SimSubmodelSpec net_geo_submodels[];
extern const guint net_geo_n_submodels;
/* Parses the table keys ("regions", "cities", "vantage_points", "gateways", "out_degree_cdf") of a geo
 * network object at `path`; `pool_names` are the scenario's pools (gateways name them). Problems go to
 * `diag`, all of them in one pass. Other keys of `obj` are left alone (the param table and submodels own
 * them). The scalar params must already be parsed (a gateway's default peers is p->gateway_peers) and
 * the table fields of `p` must be zero. Missing "peers" of vantage points and gateways are added to `obj`
 * (echo).
 * Returns TRUE when no problem was found; either way free the tables with net_geo_clear_tables().
 *  - "regions" (required): {"names": [unique strings, 1..NET_MAX_REGIONS], "latency_ms": n x n numbers >= 0,
 *    "upload_bps"/"download_bps": n numbers > 0, "node_share": n numbers >= 0 summing to 1 within 1e-3
 *    (stored normalised)}.
 *  - "cities" (optional): {"names": [unique strings], "region": [a region name per city],
 *    "rtt_ms": n x n numbers >= 0 or null (not measured, stored as NAN)}.
 *  - "vantage_points" (optional): [{"name" (unique), "region" or "city" (not both), "peers" (>= 1, 800)}].
 *  - "gateways" (optional): [{"pool", "cities" or "regions" (a non-empty array, not both),
 *    "peers" (>= 1, default gateway_peers)}]: one NetSpecial per listed place, named "<pool>#<k>" with k
 *    counting that pool's gateways from 1 across all entries. An entry {"pool", "ordinary_nodes": true}
 *    (no places, no peers) instead puts that pool's miners on ordinary nodes (pool_on_nodes); such a pool
 *    may have no gateway entry and only one ordinary_nodes entry.
 *  - "out_degree_cdf" (optional): NET_OUT_DEGREE_MAX numbers in [0, 1], non-decreasing, the last one 1:
 *    entry k is P(an ordinary node dials at most k + 1 peers).
 *  - "joining" (optional): an object checked against net_geo_joining_specs (share, window_s, machine),
 *    its defaults added to `obj` (echo), stored in p->joining. Absent: share 0.
 *  Every object also accepts a "comment" key; any other unknown key is a problem. */
gboolean net_geo_parse_tables(NetGeoParams *p, json_t *obj, const char *path, const char *const *pool_names,
                              guint n_pools, SimDiag *diag);
/* Frees the table fields of `p` and zeroes them (the scalars and submodels are left alone). */
void net_geo_clear_tables(NetGeoParams *p);

G_END_DECLS
