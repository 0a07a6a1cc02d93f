/* numa_hw.c: the staircase plan, weighted placement with mbind, page-node queries and the triad/latency
 * measurement, on libnuma 2.0.16 and raw system calls. */
#include "numa_hw.h"

#include <errno.h>
#include <math.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

G_DEFINE_QUARK(sim - numa - hw - error - quark, sim_numa_hw_error)

/* Linux 6.9's mode; not in Debian 12's headers. */
#define SIM_MPOL_WEIGHTED_INTERLEAVE 6
/* mbind's maxnode counts one more than the bits it reads (the kernel drops the last). */
#define SIM_MAXNODE (SIM_NUMA_MAX_NODES + 1)
#define NODEMASK_LONGS (SIM_NUMA_MAX_NODES / (8 * sizeof(unsigned long)))
/* How close sysfs weights must be to the requested shares for mode 6 to stand in for the staircase. */
#define KERNEL_WEIGHTS_TOLERANCE 0.005

static gsize page_size(void) {
  static gsize size = 0;
  if (g_once_init_enter(&size)) g_once_init_leave(&size, (gsize)sysconf(_SC_PAGESIZE));
  return size;
}

guint sim_numa_hw_nodes(void) {
  static gsize nodes = 0; /* stored + 1 so that 0 means "not yet" */
  if (g_once_init_enter(&nodes)) {
    gsize n = 1;
    if (numa_available() >= 0) n = (gsize)numa_max_node() + 1;
    g_once_init_leave(&nodes, MIN(n, (gsize)SIM_NUMA_MAX_NODES) + 1);
  }
  return (guint)(nodes - 1);
}

gboolean sim_numa_weights_check(const double *w, guint n, GError **error) {
  if (n < 1 || n > SIM_NUMA_MAX_NODES) {
    g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_INVALID, "need 1 to %d weights (got %u)",
                SIM_NUMA_MAX_NODES, n);
    return FALSE;
  }
  g_return_val_if_fail(w != NULL, FALSE);
  double sum = 0;
  for (guint i = 0; i < n; i++) {
    if (!isfinite(w[i]) || w[i] < 0) {
      g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_INVALID, "weight %u must be >= 0 (got %g)", i,
                  w[i]);
      return FALSE;
    }
    sum += w[i];
  }
  if (!(sum > 0) || !isfinite(sum)) {
    g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_INVALID, "the weights must have a positive sum");
    return FALSE;
  }
  return TRUE;
}

/* ---- The staircase ---- */

guint sim_numa_staircase_plan(const double *w, guint n, gsize total_pages, SimNumaRegion *regions) {
  g_return_val_if_fail(regions != NULL, 0);
  g_return_val_if_fail(sim_numa_weights_check(w, n, NULL), 0);
  guint order[SIM_NUMA_MAX_NODES];
  double sum = 0;
  for (guint i = 0; i < n; i++) {
    order[i] = i;
    sum += w[i];
  }
  /* Insertion sort, ascending by weight then node: n <= 64 and the order must be stable. */
  for (guint i = 1; i < n; i++)
    for (guint j = i; j > 0 && w[order[j - 1]] > w[order[j]]; j--) {
      guint t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  guint64 remaining = 0; /* nodes of ranks k..n-1 */
  for (guint i = 0; i < n; i++)
    remaining |= G_GUINT64_CONSTANT(1) << order[i];
  double cum = 0, prev = 0;
  gsize boundary_prev = 0;
  guint n_regions = 0;
  for (guint k = 0; k < n; k++) {
    double wk = w[order[k]] / sum;
    cum += (double)(n - k) * (wk - prev);
    prev = wk;
    /* Boundaries are the exact cumulative shares rounded, so rounding never accumulates. */
    gsize boundary = total_pages;
    if (k + 1 < n) {
      double b = round(cum * (double)total_pages);
      boundary = b <= 0 ? 0 : b >= (double)total_pages ? total_pages : (gsize)b;
      boundary = MAX(boundary, boundary_prev);
    }
    if (boundary > boundary_prev) {
      regions[n_regions++] = (SimNumaRegion){
          .first_page = boundary_prev, .n_pages = boundary - boundary_prev, .nodes = remaining};
      boundary_prev = boundary;
    }
    remaining &= ~(G_GUINT64_CONSTANT(1) << order[k]);
  }
  return n_regions;
}

void sim_numa_staircase_pages(const SimNumaRegion *regions, guint n_regions, guint n, gsize *out) {
  g_return_if_fail(out != NULL && (regions != NULL || n_regions == 0));
  memset(out, 0, n * sizeof *out);
  for (guint r = 0; r < n_regions; r++) {
    guint members = (guint)__builtin_popcountll(regions[r].nodes);
    if (members == 0) continue;
    gsize base = regions[r].n_pages / members, extra = regions[r].n_pages % members;
    guint rank = 0;
    for (guint i = 0; i < n && i < SIM_NUMA_MAX_NODES; i++) {
      if (!(regions[r].nodes & (G_GUINT64_CONSTANT(1) << i))) continue;
      out[i] += base + (rank < extra ? 1 : 0);
      rank++;
    }
  }
}

/* ---- Placement ---- */

const char *sim_numa_place_method_name(SimNumaPlaceMethod method) {
  switch (method) {
  case SIM_NUMA_PLACE_NONE:
    return "none";
  case SIM_NUMA_PLACE_STAIRCASE:
    return "staircase";
  case SIM_NUMA_PLACE_KERNEL_WEIGHTED:
    return "kernel-weighted";
  }
  return "?";
}

static void mask_from_bits(guint64 bits, unsigned long *mask) {
  memset(mask, 0, NODEMASK_LONGS * sizeof *mask);
  for (guint i = 0; i < SIM_NUMA_MAX_NODES; i++)
    if (bits & (G_GUINT64_CONSTANT(1) << i))
      mask[i / (8 * sizeof(unsigned long))] |= 1UL << (i % (8 * sizeof(unsigned long)));
}

gboolean sim_numa_kernel_weighted_available(void) {
  static gsize answer = 0; /* 1: no, 2: yes */
  if (g_once_init_enter(&answer)) {
    gsize yes = 1;
    if (numa_available() >= 0) {
      void *p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) {
        unsigned long mask[NODEMASK_LONGS];
        mask_from_bits(1, mask);
        if (mbind(p, page_size(), SIM_MPOL_WEIGHTED_INTERLEAVE, mask, SIM_MAXNODE, 0) == 0) yes = 2;
        munmap(p, page_size());
      }
    }
    g_once_init_leave(&answer, yes);
  }
  return answer == 2;
}

gboolean sim_numa_kernel_weights_read(guint *iw, guint n) {
  g_return_val_if_fail(iw != NULL, FALSE);
  for (guint i = 0; i < n; i++) {
    g_autofree char *path = g_strdup_printf("/sys/kernel/mm/mempolicy/weighted_interleave/node%u", i);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) return FALSE;
    guint64 v = g_ascii_strtoull(text, NULL, 10);
    if (v < 1 || v > 255) return FALSE;
    iw[i] = (guint)v;
  }
  return TRUE;
}

/* Whether sysfs weights give each positive-weight node its share within the tolerance. */
static gboolean kernel_weights_match(const double *w, guint n, double sum) {
  guint iw[SIM_NUMA_MAX_NODES];
  if (!sim_numa_kernel_weights_read(iw, n)) return FALSE;
  double isum = 0;
  for (guint i = 0; i < n; i++)
    if (w[i] > 0) isum += iw[i];
  for (guint i = 0; i < n; i++)
    if (w[i] > 0 && fabs(iw[i] / isum - w[i] / sum) > KERNEL_WEIGHTS_TOLERANCE) return FALSE;
  return TRUE;
}

static gboolean do_mbind(void *addr, size_t len, int mode, guint64 nodes, GError **error) {
  unsigned long mask[NODEMASK_LONGS];
  mask_from_bits(nodes, mask);
  if (mbind(addr, len, mode, mask, SIM_MAXNODE, MPOL_MF_MOVE) != 0) {
    int e = errno;
    g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_SYSTEM,
                "mbind(mode %d, nodes 0x%" G_GINT64_MODIFIER "x) on %zu bytes: %s", mode, nodes, len,
                g_strerror(e));
    return FALSE;
  }
  return TRUE;
}

gboolean sim_numa_apply_plan(void *buf, size_t len, const SimNumaRegion *regions, guint n_regions,
                             GError **error) {
  g_return_val_if_fail(regions != NULL || n_regions == 0, FALSE);
  g_return_val_if_fail(((uintptr_t)buf % page_size()) == 0, FALSE);
  gsize ps = page_size();
  for (guint r = 0; r < n_regions; r++) {
    size_t off = regions[r].first_page * ps;
    g_return_val_if_fail(off < len, FALSE);
    size_t rlen = MIN(regions[r].n_pages * ps, len - off);
    if (!do_mbind((char *)buf + off, rlen, MPOL_INTERLEAVE, regions[r].nodes, error)) return FALSE;
  }
  return TRUE;
}

gboolean sim_numa_place_weighted(void *buf, size_t len, const double *w, guint n, SimNumaPlaceMethod *method,
                                 GError **error) {
  if (method) *method = SIM_NUMA_PLACE_NONE;
  if (!sim_numa_weights_check(w, n, error)) return FALSE;
  g_return_val_if_fail(buf != NULL || len == 0, FALSE);
  g_return_val_if_fail(((uintptr_t)buf % page_size()) == 0, FALSE);
  guint nodes = sim_numa_hw_nodes();
  double sum = 0;
  guint64 positive = 0;
  for (guint i = 0; i < n; i++) {
    if (w[i] > 0 && i >= nodes) {
      g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_INVALID,
                  "node %u has weight %g but this machine has %u node%s", i, w[i], nodes,
                  nodes == 1 ? "" : "s");
      return FALSE;
    }
    sum += w[i];
    if (w[i] > 0) positive |= G_GUINT64_CONSTANT(1) << i;
  }
  /* One memory node: every page lands there anyway; no system call at all. */
  if (nodes == 1 || len == 0) return TRUE;

  if (__builtin_popcountll(positive) > 1 && sim_numa_kernel_weighted_available() &&
      kernel_weights_match(w, n, sum)) {
    g_autoptr(GError) e = NULL;
    if (do_mbind(buf, len, SIM_MPOL_WEIGHTED_INTERLEAVE, positive, &e)) {
      if (method) *method = SIM_NUMA_PLACE_KERNEL_WEIGHTED;
      return TRUE;
    }
    /* A kernel that refuses the mask here still has the staircase. */
  }
  gsize ps = page_size();
  /* A transparent huge page (2 MiB) lands on one node as a whole, so interleaving page by page would be
   * off by up to a huge page per region: the placed range keeps to base pages. */
  (void)madvise(buf, len, MADV_NOHUGEPAGE);
  SimNumaRegion regions[SIM_NUMA_MAX_NODES];
  guint nr = sim_numa_staircase_plan(w, n, (len + ps - 1) / ps, regions);
  if (!sim_numa_apply_plan(buf, len, regions, nr, error)) return FALSE;
  if (method) *method = SIM_NUMA_PLACE_STAIRCASE;
  return TRUE;
}

gboolean sim_numa_move_weighted(void *buf, size_t len, const double *w, guint n, gsize *moved,
                                GError **error) {
  if (moved) *moved = 0;
  SimNumaPlaceMethod method;
  if (!sim_numa_place_weighted(buf, len, w, n, &method, error)) return FALSE;
  if (method == SIM_NUMA_PLACE_NONE) return TRUE;
  gsize ps = page_size();
  /* A transparent huge page (2 MiB) lands on one node as a whole, so interleaving page by page would be
   * off by up to a huge page per region: the placed range keeps to base pages. */
  (void)madvise(buf, len, MADV_NOHUGEPAGE);
  SimNumaRegion regions[SIM_NUMA_MAX_NODES];
  guint nr = sim_numa_staircase_plan(w, n, (len + ps - 1) / ps, regions);
  enum { CHUNK = 1024 };
  void *addrs[CHUNK];
  int nodes[CHUNK], status[CHUNK];
  gsize m = 0;
  for (guint r = 0; r < nr; r++) {
    int members[SIM_NUMA_MAX_NODES], k = 0;
    for (guint i = 0; i < SIM_NUMA_MAX_NODES; i++)
      if (regions[r].nodes & (G_GUINT64_CONSTANT(1) << i)) members[k++] = (int)i;
    if (k == 0) continue;
    for (gsize pg = 0; pg < regions[r].n_pages; pg++) {
      addrs[m] = (char *)buf + (regions[r].first_page + pg) * ps;
      nodes[m] = members[pg % (gsize)k];
      if (++m < CHUNK && !(r + 1 == nr && pg + 1 == regions[r].n_pages)) continue;
      if (move_pages(0, m, addrs, nodes, status, MPOL_MF_MOVE) < 0) {
        int e = errno;
        g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_SYSTEM, "move_pages: %s", g_strerror(e));
        return FALSE;
      }
      /* status: the node the page is on now, or -errno (-ENOENT: not present; it follows the policy when
       * touched). */
      for (gsize q = 0; q < m && moved; q++)
        if (status[q] == nodes[q]) (*moved)++;
      m = 0;
    }
  }
  return TRUE;
}

gboolean sim_numa_count_pages(const void *buf, size_t len, gsize *counts, guint n_counts, gsize *absent,
                              GError **error) {
  g_return_val_if_fail(counts != NULL && absent != NULL, FALSE);
  g_return_val_if_fail(((uintptr_t)buf % page_size()) == 0, FALSE);
  gsize ps = page_size();
  gsize pages = (len + ps - 1) / ps;
  enum { CHUNK = 4096 };
  void *addrs[CHUNK];
  int status[CHUNK];
  gboolean use_move_pages = TRUE;
  for (gsize first = 0; first < pages; first += CHUNK) {
    gsize m = MIN((gsize)CHUNK, pages - first);
    for (gsize k = 0; k < m; k++)
      addrs[k] = (char *)buf + (first + k) * ps;
    if (use_move_pages && move_pages(0, m, addrs, NULL, status, 0) != 0) {
      if (errno != ENOSYS && errno != EPERM) {
        int e = errno;
        g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_SYSTEM, "move_pages: %s", g_strerror(e));
        return FALSE;
      }
      use_move_pages = FALSE;
    }
    for (gsize k = 0; k < m; k++) {
      int node = -1;
      if (use_move_pages) {
        node = status[k];
      } else {
        if (get_mempolicy(&node, NULL, 0, addrs[k], MPOL_F_NODE | MPOL_F_ADDR) != 0) {
          if (errno != ENOSYS) {
            int e = errno;
            g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_SYSTEM, "get_mempolicy: %s",
                        g_strerror(e));
            return FALSE;
          }
          node = 0; /* no NUMA in this kernel: one node */
        }
      }
      if (node >= 0 && (guint)node < n_counts)
        counts[node]++;
      else
        (*absent)++;
    }
  }
  return TRUE;
}

/* ---- The process's own memory ---- */

guint sim_numa_maps_anon_bytes(const char *text, gsize *bytes, guint n, gsize *other) {
  g_return_val_if_fail(text != NULL && (bytes != NULL || n == 0), 0);
  guint mappings = 0;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (guint l = 0; lines[l]; l++) {
    g_auto(GStrv) tok = g_strsplit(lines[l], " ", -1);
    gboolean anon = FALSE, file = FALSE;
    guint64 page_kb = 4;
    for (guint t = 0; tok[t]; t++) {
      if (g_str_has_prefix(tok[t], "anon=")) anon = TRUE;
      if (g_str_has_prefix(tok[t], "file=")) file = TRUE;
      if (g_str_has_prefix(tok[t], "kernelpagesize_kB=")) page_kb = g_ascii_strtoull(tok[t] + 18, NULL, 10);
    }
    if (!anon || file) continue;
    mappings++;
    for (guint t = 0; tok[t]; t++) {
      const char *s = tok[t];
      if (s[0] != 'N' || !g_ascii_isdigit(s[1])) continue;
      char *end = NULL;
      guint64 node = g_ascii_strtoull(s + 1, &end, 10);
      if (!end || *end != '=') continue;
      char *end2 = NULL;
      guint64 pages = g_ascii_strtoull(end + 1, &end2, 10);
      if (end2 == end + 1 || *end2 != '\0') continue;
      gsize b = (gsize)(pages * page_kb * 1024);
      if (node < n)
        bytes[node] += b;
      else if (other)
        *other += b;
    }
  }
  return mappings;
}

gboolean sim_numa_self_anon_bytes(gsize *bytes, guint n, gsize *other, GError **error) {
  g_return_val_if_fail(bytes != NULL || n == 0, FALSE);
  memset(bytes, 0, n * sizeof *bytes);
  if (other) *other = 0;
  g_autofree char *text = NULL;
  if (!g_file_get_contents("/proc/self/numa_maps", &text, NULL, error)) return FALSE;
  sim_numa_maps_anon_bytes(text, bytes, n, other);
  return TRUE;
}

/* ---- Measurement ---- */

void sim_numa_measure_options_default(SimNumaMeasureOptions *opt) {
  g_return_if_fail(opt != NULL);
  *opt = (SimNumaMeasureOptions){.size_bytes = 96u << 20,
                                 .repeat = 5,
                                 .threads_per_node = 0,
                                 .chase_loads = G_GUINT64_CONSTANT(1) << 21};
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Memory on one node (plain memory when the kernel has no NUMA). */
typedef struct {
  void *p;
  gsize len;
  gboolean numa;
} NodeBuf;

static gboolean nodebuf_alloc(NodeBuf *b, gsize len, guint node, GError **error) {
  b->len = len;
  b->numa = numa_available() >= 0;
  b->p = b->numa ? numa_alloc_onnode(len, (int)node) : g_try_malloc(len);
  if (!b->p) {
    g_set_error(error, SIM_NUMA_HW_ERROR, SIM_NUMA_HW_ERROR_SYSTEM, "cannot allocate %zu bytes on node %u",
                len, node);
    return FALSE;
  }
  return TRUE;
}

static void nodebuf_free(NodeBuf *b) {
  if (!b->p) return;
  if (b->numa)
    numa_free(b->p, b->len);
  else
    g_free(b->p);
  b->p = NULL;
}

/* CPUs of `node` this process may run on. */
static guint node_cpus(guint node) {
  if (numa_available() < 0) return (guint)MAX(1, g_get_num_processors());
  struct bitmask *cpus = numa_allocate_cpumask();
  guint count = 0;
  if (numa_node_to_cpus((int)node, cpus) == 0) {
    for (unsigned c = 0; c < cpus->size; c++)
      if (numa_bitmask_isbitset(cpus, c) && numa_bitmask_isbitset(numa_all_cpus_ptr, c)) count++;
  }
  numa_free_cpumask(cpus);
  return count;
}

typedef struct {
  double *a, *b, *c;
  gsize lo, hi;
  int cpu_node; /* -1: do not pin */
  guint repeat;
  pthread_barrier_t *barrier;
  double *t_start, *t_end; /* [repeat]: when this thread began and finished each pass */
} TriadWorker;

static void triad(double *restrict a, const double *restrict b, const double *restrict c, gsize lo,
                  gsize hi) {
  const double q = 3.0;
  for (gsize k = lo; k < hi; k++)
    a[k] = b[k] + q * c[k];
}

static gpointer triad_thread(gpointer data) {
  TriadWorker *t = data;
  if (t->cpu_node >= 0) numa_run_on_node(t->cpu_node);
  for (gsize k = t->lo; k < t->hi; k++) {
    t->a[k] = 1.0;
    t->b[k] = 2.0;
    t->c[k] = 0.5;
  }
  pthread_barrier_wait(t->barrier);
  for (guint r = 0; r < t->repeat; r++) {
    pthread_barrier_wait(t->barrier);
    t->t_start[r] = now_s();
    triad(t->a, t->b, t->c, t->lo, t->hi);
    t->t_end[r] = now_s();
    pthread_barrier_wait(t->barrier);
  }
  return NULL;
}

/* Best triad GB/s with threads[j] threads on each CPU node j (n nodes) and the arrays on `mem`. */
static gboolean measure_triad(const SimNumaMeasureOptions *opt, guint mem, const guint *threads, guint n,
                              gboolean pin, double *gbps, GError **error) {
  guint total = 0;
  for (guint j = 0; j < n; j++)
    total += threads[j];
  if (total == 0) {
    *gbps = NAN;
    return TRUE;
  }
  gsize elems = MAX(opt->size_bytes / (3 * sizeof(double)), (gsize)total);
  gsize bytes = elems * sizeof(double);
  NodeBuf a = {0}, b = {0}, c = {0};
  gboolean ok = nodebuf_alloc(&a, bytes, mem, error) && nodebuf_alloc(&b, bytes, mem, error) &&
                nodebuf_alloc(&c, bytes, mem, error);
  if (!ok) {
    nodebuf_free(&a);
    nodebuf_free(&b);
    nodebuf_free(&c);
    return FALSE;
  }
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, total + 1);
  TriadWorker *workers = g_new0(TriadWorker, total);
  GThread **handles = g_new0(GThread *, total);
  double *times = g_new(double, 2 * (gsize)total * opt->repeat);
  guint t = 0;
  for (guint j = 0; j < n; j++)
    for (guint k = 0; k < threads[j]; k++, t++)
      workers[t] = (TriadWorker){.a = a.p,
                                 .b = b.p,
                                 .c = c.p,
                                 .lo = elems * t / total,
                                 .hi = elems * (t + 1) / total,
                                 .cpu_node = pin ? (int)j : -1,
                                 .repeat = opt->repeat,
                                 .barrier = &barrier,
                                 .t_start = times + 2 * (gsize)t * opt->repeat,
                                 .t_end = times + (2 * (gsize)t + 1) * opt->repeat};
  for (t = 0; t < total; t++)
    handles[t] = g_thread_new("sim-triad", triad_thread, &workers[t]);
  pthread_barrier_wait(&barrier); /* every thread pinned and its slice touched */
  for (guint r = 0; r < opt->repeat; r++) {
    pthread_barrier_wait(&barrier);
    pthread_barrier_wait(&barrier);
  }
  for (t = 0; t < total; t++)
    g_thread_join(handles[t]);
  /* A pass lasts from the first thread's start to the last one's end. The threads time themselves: this
   * thread may not run between the barriers when the workers fill every CPU. */
  double best = INFINITY;
  for (guint r = 0; r < opt->repeat; r++) {
    double t0 = INFINITY, t1 = -INFINITY;
    for (t = 0; t < total; t++) {
      t0 = MIN(t0, workers[t].t_start[r]);
      t1 = MAX(t1, workers[t].t_end[r]);
    }
    best = MIN(best, t1 - t0);
  }
  g_free(times);
  pthread_barrier_destroy(&barrier);
  g_free(handles);
  g_free(workers);
  nodebuf_free(&a);
  nodebuf_free(&b);
  nodebuf_free(&c);
  /* STREAM counts 24 bytes per triad element: two reads and one write. */
  *gbps = 3.0 * (double)bytes / best / 1e9;
  return TRUE;
}

typedef struct {
  const guint64 *chain;
  guint64 loads;
  int cpu_node;
  double ns;
} ChaseWorker;

static gpointer chase_thread(gpointer data) {
  ChaseWorker *w = data;
  if (w->cpu_node >= 0) numa_run_on_node(w->cpu_node);
  const guint64 *chain = w->chain;
  guint64 p = 0;
  for (guint64 k = 0; k < w->loads / 8; k++)
    p = chain[p]; /* warm the TLB and the walk */
  double t0 = now_s();
  for (guint64 k = 0; k < w->loads; k++)
    p = chain[p];
  double dt = now_s() - t0;
  volatile guint64 sink = p;
  (void)sink;
  w->ns = dt * 1e9 / (double)w->loads;
  return NULL;
}

/* A random cycle through the 64-byte lines of `buf` (Sattolo's algorithm), as word indices. */
static void build_chain(guint64 *chain, gsize lines) {
  const gsize stride = 64 / sizeof(guint64);
  guint32 *perm = g_new(guint32, lines);
  for (gsize i = 0; i < lines; i++)
    perm[i] = (guint32)i;
  guint64 s = G_GUINT64_CONSTANT(0x9E3779B97F4A7C15);
  for (gsize i = lines - 1; i > 0; i--) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64: a fixed chain, not a statistic */
    gsize j = (gsize)(s % i);
    guint32 t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (gsize i = 0; i < lines; i++)
    chain[(gsize)perm[i] * stride] = (guint64)perm[(i + 1) % lines] * stride;
  g_free(perm);
}

void sim_numa_measurement_clear(SimNumaMeasurement *m) {
  if (!m) return;
  g_free(m->cpus);
  g_free(m->bw_gbps);
  g_free(m->capacity_gbps);
  g_free(m->latency_ns);
  memset(m, 0, sizeof *m);
}

gboolean sim_numa_measure(const SimNumaMeasureOptions *opt, SimNumaMeasurement *out, GError **error) {
  g_return_val_if_fail(opt != NULL && out != NULL, FALSE);
  g_return_val_if_fail(opt->repeat >= 1 && opt->size_bytes >= 4096 && opt->chase_loads >= 1, FALSE);
  memset(out, 0, sizeof *out);
  double t_start = now_s();
  gboolean pin = numa_available() >= 0;
  guint n = sim_numa_hw_nodes();
  out->n_nodes = n;
  out->cpus = g_new0(guint, n);
  out->bw_gbps = g_new(double, (gsize)n *n);
  out->capacity_gbps = g_new(double, n);
  out->latency_ns = g_new(double, (gsize)n *n);
  guint *threads = g_new0(guint, n);
  for (guint j = 0; j < n; j++) {
    out->cpus[j] = node_cpus(j);
    threads[j] = opt->threads_per_node ? MIN(opt->threads_per_node, out->cpus[j]) : out->cpus[j];
    out->threads_max += threads[j];
  }
  guint *one = g_new0(guint, n);
  gboolean ok = TRUE;
  for (guint i = 0; i < n && ok; i++) {
    for (guint j = 0; j < n && ok; j++) {
      out->bw_gbps[i * n + j] = NAN;
      if (!threads[j]) continue;
      memset(one, 0, n * sizeof *one);
      one[j] = threads[j];
      ok = measure_triad(opt, i, one, n, pin, &out->bw_gbps[i * n + j], error);
    }
    if (!ok) break;
    if (n == 1)
      out->capacity_gbps[i] = out->bw_gbps[i];
    else
      ok = measure_triad(opt, i, threads, n, pin, &out->capacity_gbps[i], error);
    if (!ok) break;
    /* Latency: one chain per memory node, chased from each CPU node. */
    gsize lines = MAX(opt->size_bytes / 64, (gsize)2);
    NodeBuf chain = {0};
    if (!nodebuf_alloc(&chain, lines * 64, i, error)) {
      ok = FALSE;
      break;
    }
    build_chain(chain.p, lines);
    for (guint j = 0; j < n; j++) {
      out->latency_ns[i * n + j] = NAN;
      if (!threads[j]) continue;
      ChaseWorker w = {.chain = chain.p, .loads = opt->chase_loads, .cpu_node = pin ? (int)j : -1};
      g_thread_join(g_thread_new("sim-chase", chase_thread, &w));
      out->latency_ns[i * n + j] = w.ns;
    }
    nodebuf_free(&chain);
  }
  g_free(one);
  g_free(threads);
  if (!ok) {
    sim_numa_measurement_clear(out);
    return FALSE;
  }
  out->wall_s = now_s() - t_start;
  return TRUE;
}
