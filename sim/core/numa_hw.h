/* numa_hw.h: what this machine's NUMA hardware and kernel offer: applying page weights to a buffer with the
 * staircase of plain interleaved regions (or the kernel's weighted interleave where it matches), finding
 * which node holds each page, and a STREAM-triad-like measurement of the bandwidth and latency matrix.
 *
 * The engine core may use this (it knows no model): the weights come from whoever calls it, normally the
 * NUMA model in models/numa_model.h. On a machine with one memory node (or a kernel without NUMA) placing
 * is a no-op that makes no system call, and every page is on node 0.
 *
 * Node numbers are the kernel's. At most SIM_NUMA_MAX_NODES nodes.
 */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

G_BEGIN_DECLS

#define SIM_NUMA_MAX_NODES 64

#define SIM_NUMA_HW_ERROR (sim_numa_hw_error_quark())
GQuark sim_numa_hw_error_quark(void);
typedef enum {
  SIM_NUMA_HW_ERROR_INVALID, /* bad weights, a node this machine does not have */
  SIM_NUMA_HW_ERROR_SYSTEM,  /* a system call failed (the message names it and errno) */
} SimNumaHwError;

/* Nodes this machine has (numa_max_node() + 1), or 1 when the kernel has no NUMA support. */
guint sim_numa_hw_nodes(void);

/* Checks weights for placement: n in [1, SIM_NUMA_MAX_NODES], each finite and >= 0, positive sum.
 * Messages name the weight: "weight 2 must be >= 0 (got -0.5)". */
gboolean sim_numa_weights_check(const double *w, guint n, GError **error);

/* ---- The staircase (pure arithmetic, no NUMA hardware needed) ----
 *
 * Plain interleave spreads pages evenly over a node set. Weights w (normalised to sum 1) are applied with
 * regions of plain interleave: sort the weights ascending, w(1) <= ... <= w(n), w(0) = 0; region k holds
 * (n-k+1)(w(k)-w(k-1)) of the pages, interleaved over the nodes of ranks k..n. The node of rank m then gets
 * sum_{k<=m} (w(k)-w(k-1)) = w(m) of the pages. Region boundaries are the exact cumulative shares rounded to
 * whole pages, so each node's count is within one page per region it belongs to. */
typedef struct {
  gsize first_page; /* from the start of the buffer */
  gsize n_pages;    /* > 0 */
  guint64 nodes;    /* bit i: node i takes part in this region's interleave */
} SimNumaRegion;

/* Writes the non-empty regions of the plan for `total_pages` pages into regions[] (room for n) in page
 * order and returns how many (0 when total_pages is 0). Weights must pass sim_numa_weights_check. Ties
 * between equal weights are broken by node number, so the plan is deterministic. */
guint sim_numa_staircase_plan(const double *w, guint n, gsize total_pages, SimNumaRegion *regions);

/* Pages per node (out[n]) that the plan gives when each region is interleaved round-robin over its nodes
 * in increasing node order from its first page (what MPOL_INTERLEAVE does, up to where the rotation
 * starts: the kernel starts at the virtual page number, which moves each count by at most one). */
void sim_numa_staircase_pages(const SimNumaRegion *regions, guint n_regions, guint n, gsize *out);

/* ---- Placement on this machine ---- */

typedef enum {
  SIM_NUMA_PLACE_NONE,            /* one memory node (or no NUMA): nothing to do, every page on node 0 */
  SIM_NUMA_PLACE_STAIRCASE,       /* one mbind(MPOL_INTERLEAVE) per region of the staircase */
  SIM_NUMA_PLACE_KERNEL_WEIGHTED, /* one mbind(MPOL_WEIGHTED_INTERLEAVE) over the buffer */
} SimNumaPlaceMethod;

/* "none", "staircase", "kernel-weighted". */
const char *sim_numa_place_method_name(SimNumaPlaceMethod method);

/* Whether the kernel accepts MPOL_WEIGHTED_INTERLEAVE (mode 6, Linux 6.9+): probed once with mbind on a
 * scratch page. Debian 12's libnuma 2.0.16 has no call for it. */
gboolean sim_numa_kernel_weighted_available(void);

/* The kernel's system-wide weighted-interleave weights (/sys/kernel/mm/mempolicy/weighted_interleave/
 * nodeN) for nodes 0..n-1 into iw[n]. FALSE when the directory or a node's file is missing. */
gboolean sim_numa_kernel_weights_read(guint *iw, guint n);

/* Applies a plan to `buf` (page-aligned, `len` bytes, at least the plan's pages): one
 * mbind(MPOL_INTERLEAVE, MPOL_MF_MOVE) per region over its nodes, even on a one-node machine (this is what
 * sim_numa_place_weighted does when it uses the staircase). Errors: SIM_NUMA_HW_ERROR_SYSTEM. */
gboolean sim_numa_apply_plan(void *buf, size_t len, const SimNumaRegion *regions, guint n_regions,
                             GError **error);

/* Places the pages of `buf` (page-aligned, `len` bytes) on nodes 0..n-1 in the proportions `w` (normalised
 * here). With one memory node it does nothing (SIM_NUMA_PLACE_NONE). Otherwise it uses the kernel's weighted
 * interleave when the kernel has it and its system-wide weights already give every node its share within
 * half a percentage point (mode 6 takes its weights from sysfs, not from the caller), and the staircase
 * otherwise. Pages already present are moved (MPOL_MF_MOVE); pages touched later follow the policy.
 * A positive weight for a node the machine lacks is an error (SIM_NUMA_HW_ERROR_INVALID); zero weights
 * may name any node. `method` (may be NULL) receives what was done. */
gboolean sim_numa_place_weighted(void *buf, size_t len, const double *w, guint n, SimNumaPlaceMethod *method,
                                 GError **error);

/* Like sim_numa_place_weighted, for a buffer whose pages are already present (a table built before it is
 * placed): mbind(MPOL_MF_MOVE) only moves pages that sit outside a region's node set, so a page already on
 * one of the region's nodes would stay, and a table built on node 0 would stay there. This applies the
 * staircase (for pages touched later) and then moves every present page to its node in the plan (round
 * robin over the region's nodes in increasing order from the region's first page) with move_pages(2).
 * `moved` (may be NULL) receives the pages now on their planned node. With one memory node it does nothing.
 */
gboolean sim_numa_move_weighted(void *buf, size_t len, const double *w, guint n, gsize *moved,
                                GError **error);

/* Adds to counts[i] (n_counts entries) the pages of `buf` that are on node i, and to *absent the pages not
 * present (never touched) or on nodes >= n_counts. Uses move_pages(2) (query only), falling back to
 * get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR) per page; on a kernel without NUMA every present page counts as
 * node 0. */
gboolean sim_numa_count_pages(const void *buf, size_t len, gsize *counts, guint n_counts, gsize *absent,
                              GError **error);

/* ---- The process's own memory ---- */

/* Adds up the text of a /proc/PID/numa_maps file: for each anonymous mapping (a line with "anon=" and no
 * "file="; the heap, malloc's arenas and mmap'd memory: what the program itself allocated), its
 * "N<k>=<pages>" times its "kernelpagesize_kB" (4 when absent) into bytes[k] (n entries; nodes >= n go to
 * *other, which may be NULL). Other lines and unknown tokens are skipped. Returns the number of anonymous
 * mappings counted. */
guint sim_numa_maps_anon_bytes(const char *text, gsize *bytes, guint n, gsize *other);
/* The same for this process, from /proc/self/numa_maps (zeroes bytes[] first). FALSE with an error where the
 * file cannot be read (a kernel without NUMA support has none). */
gboolean sim_numa_self_anon_bytes(gsize *bytes, guint n, gsize *other, GError **error);

/* ---- Measurement ---- */

typedef struct {
  gsize size_bytes;       /* the three triad arrays together; also the pointer-chase buffer */
  guint repeat;           /* triad passes; the best one counts (STREAM's rule) */
  guint threads_per_node; /* 0: every CPU of the node that this process may run on */
  guint64 chase_loads;    /* dependent loads per latency measurement */
} SimNumaMeasureOptions;

/* Defaults: 96 MiB, 5 passes, all CPUs, 2^21 loads. */
void sim_numa_measure_options_default(SimNumaMeasureOptions *opt);

typedef struct {
  guint n_nodes;
  guint *cpus;           /* [n]: CPUs of each node this process may run on */
  double *bw_gbps;       /* [mem * n + cpu]: triad GB/s (1e9 bytes/s, 24 bytes per element); NAN for a
                          * node without CPUs */
  double *capacity_gbps; /* [n]: triad GB/s with every CPU node streaming from this memory node at once */
  double *latency_ns;    /* [mem * n + cpu]: mean of dependent loads on 64-byte lines in random order,
                          * 4 KiB pages (TLB misses included); NAN for a node without CPUs */
  guint threads_max;     /* the most threads one measurement used */
  double wall_s;         /* how long the whole measurement took */
} SimNumaMeasurement;

/* Measures every (memory node, CPU node) pair: triad bandwidth with the CPU node's threads pinned there
 * (numa_run_on_node) and the arrays on the memory node (numa_alloc_onnode), then the controller capacity
 * and the idle latency. Errors: SIM_NUMA_HW_ERROR_SYSTEM (allocation, threads). Clear with
 * sim_numa_measurement_clear(). */
gboolean sim_numa_measure(const SimNumaMeasureOptions *opt, SimNumaMeasurement *out, GError **error);
void sim_numa_measurement_clear(SimNumaMeasurement *m);

G_END_DECLS
