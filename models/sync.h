/* sync.h: how long a node takes to sync: snap-sync phases bounded by network, disk and CPU (Ethereum,
 * after Nethermind), and initial block download across machines (Bitcoin, after Utreexo).
 *
 * Snap sync. Each phase p has work: bytes to download (served by peers at a phase-specific rate),
 * random reads, bytes to write and CPU core-seconds. On a machine its time is the largest of
 *
 *   network  download_gb · 8000 / min(peer_mbps, net_mbps)                     s
 *   reads    read_mops · 1e6 / min(disk_iops, readers · single_thread_iops)   s  (readers 0: one per vCPU)
 *   writes   write_gb · 1000 / disk_write_mbps                                 s
 *   CPU      cpu_core_h · 3600 / min(vcpus, threads)                           s  (threads 0: all vCPUs)
 *
 * (the resources overlap; the slowest binds). A single-threaded reader reaches single_thread_iops (≈ 12.5 k
 * on an SSD, Nethermind's talk), however fast the disk.
 *
 * Healing repairs the trie nodes that changed on chain while the snap phase ran, and the chain keeps changing
 * while healing runs. With a the chain's change rate in trie-node reads per second (state changes per second
 * × trie nodes per change: `change_reads_per_s`; only the product matters), T_s the snap phase's time and R =
 * min(disk_iops, readers · single_thread_iops) the repair rate, round 0 repairs W0 = read_mops·1e6 + a·T_s
 * reads in W0/R seconds, during which a·W0/R more nodes change, and so on: a geometric series with ratio a/R,
 *
 *   T_heal = (W0/R) · Σ_k (a/R)^k = W0 / (R − a)   when R > a,   never (+inf) when R <= a.
 *
 * (Equivalently the fixed point T_heal = (W0 + a·T_heal)/R.) So a slow disk lengthens snap (more to heal) and
 * slows the repair; at R <= a the node never catches up: on a machine whose readers are not the limit
 * (readers · single_thread_iops > a) that is every disk below a IOPS (sim_sync_heal_threshold_iops()). Phases
 * combine as Nethermind runs them:
 *
 *   head (time to follow the head) = snap + healing
 *   full = max(head, old_headers) + old_bodies + old_receipts
 *
 * IBD. In order, a pipeline of k stages over n items takes Σ stage + (n − 1) · max stage. Out of order over
 * N machines (Utreexo: any block can be validated given its proof) the serial part s (header download)
 * bounds the speedup by Amdahl, S(N) = 1 / (s + (1 − s)/N), and the bytes (blocks + proofs) bound the time
 * below by bytes / (N · link): T(N) = max(T(1) · (s + (1 − s)/N), bytes · 8 / (N · link_bps)).
 *
 * Units: seconds unless a name says otherwise; GB = 1e9 bytes; Mb/s = 1e6 bit/s; MB/s = 1e6 byte/s.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "engine.h"
#include "params.h"

G_BEGIN_DECLS

typedef enum {
  SIM_SYNC_SNAP = 0,
  SIM_SYNC_HEALING,
  SIM_SYNC_OLD_HEADERS,
  SIM_SYNC_OLD_BODIES,
  SIM_SYNC_OLD_RECEIPTS,
  SIM_SYNC_N_PHASES
} SimSyncPhase;

/* "snap", "healing", "old_headers", "old_bodies", "old_receipts": the JSON keys. */
const char *sim_sync_phase_name(SimSyncPhase phase);

/* Published per-phase times a machine file may carry for comparison: the five phases, then these. */
enum { SIM_SYNC_PUB_ATTESTATION = SIM_SYNC_N_PHASES, SIM_SYNC_PUB_FULL, SIM_SYNC_N_PUB };
/* "attestation", "full" (and the phase names below SIM_SYNC_N_PHASES). */
const char *sim_sync_published_name(guint i);

/* A machine. Fields are the JSON keys. */
typedef struct {
  char *name;
  int64_t vcpus;
  double disk_iops;                     /* random 4 KiB reads per second with enough parallel readers */
  double single_thread_iops;            /* what one reader thread reaches */
  double disk_write_mbps;               /* sequential writes, MB/s */
  double net_mbps;                      /* network link, Mb/s */
  double published_min[SIM_SYNC_N_PUB]; /* optional published times in minutes; NAN where absent */
} SimSyncMachine;

/* The work of one phase. Fields are the JSON keys. */
typedef struct {
  double download_gb;
  double peer_mbps;          /* how fast peers serve this data */
  double read_mops;          /* random reads, millions */
  double change_reads_per_s; /* healing only: trie-node reads per second of chain time that the state
                                changes cause (a above); the phase never ends when its repair rate is <= a */
  int64_t readers;           /* reader threads; 0: one per vCPU */
  double write_gb;
  double cpu_core_h; /* CPU work, core-hours */
  int64_t threads;   /* CPU parallelism; 0: all vCPUs */
} SimSyncWork;

/* A chain: the work of every phase. */
typedef struct {
  char *name;
  SimSyncWork phase[SIM_SYNC_N_PHASES];
} SimSyncChain;

typedef enum {
  SIM_SYNC_BOUND_NET = 0,
  SIM_SYNC_BOUND_READS,
  SIM_SYNC_BOUND_WRITES,
  SIM_SYNC_BOUND_CPU
} SimSyncBound;
/* "network", "reads", "writes", "cpu". */
const char *sim_sync_bound_name(SimSyncBound bound);

typedef struct {
  double net_s, read_s, write_s, cpu_s;
  double time_s; /* the largest */
  SimSyncBound bound;
} SimSyncPhaseTime;

typedef struct {
  SimSyncPhaseTime phase[SIM_SYNC_N_PHASES];
  double head_s;                  /* snap + healing: time to follow the head (+inf: never) */
  double full_s;                  /* max(head, old_headers) + old_bodies + old_receipts (+inf: never) */
  double heal_repair_iops;        /* R: healing's read rate on this machine */
  double heal_change_reads_per_s; /* a: what the chain adds to repair per second */
  double heal_work_mreads; /* W0: what snap left to repair, millions of reads (read_mops + a · T_s / 1e6) */
} SimSyncResult;

typedef enum { SIM_SYNC_TARGET_HEAD, SIM_SYNC_TARGET_FULL } SimSyncTarget;

/* ---- Descriptions ---- */

/* The built-in chain: Ethereum mainnet as Nethermind 1.21 synced it (September 2023), calibrated as the
 * docs/perf-sync.md explains. Owns `name`: free with sim_sync_chain_free() or sim_sync_chain_clear(). */
SimSyncChain *sim_sync_chain_new_default(void);
void sim_sync_chain_clear(SimSyncChain *chain);
void sim_sync_chain_free(SimSyncChain *chain);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimSyncChain, sim_sync_chain_free)

void sim_sync_machine_free(SimSyncMachine *machine);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimSyncMachine, sim_sync_machine_free)

/* Built-in machine classes: Nethermind's three test machines, "high-end" (16 vCPU, 40 k IOPS), "mid-end"
 * (8 vCPU, 10 k IOPS), "old-spec" (2 vCPU, 44 k IOPS), with their published times. NULL for another name.
 * Free with sim_sync_machine_free(). */
SimSyncMachine *sim_sync_machine_new_class(const char *name);
/* Names of the built-in classes, NULL-terminated. */
const char *const *sim_sync_machine_classes(void);

/* Parses a machine (or chain) description the caller has read (sim/core/input.h): strict JSON (duplicate and unknown keys are errors), every
 * problem reported to `diag` as "FILE:line:col: message" (syntax) or "FILE: $.path: message" (content).
 * NULL on any problem. A chain file may give only some phases and some keys: the rest are the built-in
 * chain's. Free with sim_sync_machine_free() / sim_sync_chain_free(). */
SimSyncMachine *sim_sync_machine_load_data(const char *data, size_t len, SimDiag *diag);
SimSyncChain *sim_sync_chain_load_data(const char *data, size_t len, SimDiag *diag);

/* Parameter tables, for help. */
void sim_sync_describe(GString *out);

/* ---- The model ---- */

/* One phase's time. `changing_s` is how long the state was already changing before the phase started (the
 * snap phase's time for healing); it matters only when work->change_reads_per_s > 0, and then the reads
 * follow the series above (read_s and time_s +inf when the repair rate is <= change_reads_per_s). */
void sim_sync_phase_time(const SimSyncMachine *machine, const SimSyncWork *work, double changing_s,
                         SimSyncPhaseTime *out);
void sim_sync_run(const SimSyncMachine *machine, const SimSyncChain *chain, SimSyncResult *out);

/* The closed form: seconds to repair `w0_reads` (plus everything that changes meanwhile) at `repair_iops`
 * while the chain adds `change_reads_per_s`: w0 / (R − a); 0 when w0 is 0; +inf when R <= a and w0 > 0. */
double sim_sync_heal_s(double w0_reads, double change_reads_per_s, double repair_iops);

/* The disk IOPS below which healing never converges on this machine with this chain (its vCPUs, reader
 * threads and single_thread_iops as given; disk_iops ignored): change_reads_per_s when the readers alone
 * could repair faster than that, else +inf (no disk helps: the readers are the limit, as behind one lock);
 * 0 when healing has no change rate. */
double sim_sync_heal_threshold_iops(const SimSyncMachine *machine, const SimSyncChain *chain);

/* Wire-in hook: how long a node on `machine` takes to sync `chain` (the built-in chain if NULL) up to
 * `target`, in seconds; +inf when healing never converges. For "a node joining during a scenario is
 * unavailable until synced": a scenario gives each joining node a machine class and schedules its
 * availability at join + this. */
double sim_sync_duration_s(const SimSyncMachine *machine, const SimSyncChain *chain, SimSyncTarget target);
/* The same for a built-in machine class and the built-in chain, as SimTime (SIM_TIME_MAX for never; the
 * built-in classes all converge); -1 for an unknown class. */
SimTime sim_sync_class_duration(const char *machine_class, SimSyncTarget target);

/* Calibration as the shipped chain was made: each resource's work from the machine where that resource
 * is scarcest, assuming it binds there in every phase: peer rates from `net_ref` (download volumes given),
 * random reads from `read_ref`, CPU from `cpu_ref`, each from the machine's published_min. Writes get
 * write_gb = download_gb; readers and threads 0. Healing has one fitted constant and no other work: its
 * change rate a from `read_ref` alone, solving T_heal = a·T_s/(R − a) for a = R·T_heal/(T_s + T_heal) with
 * the published snap and healing times and R its read rate there. Fills `out`'s phases. */
void sim_sync_calibrate(const SimSyncMachine *net_ref, const SimSyncMachine *read_ref,
                        const SimSyncMachine *cpu_ref, const double download_gb[SIM_SYNC_N_PHASES],
                        SimSyncChain *out);

/* ---- IBD ---- */

/* In-order pipeline: `n_items` through `n_stages` stages of the given per-item seconds. */
double sim_sync_pipeline_s(uint64_t n_items, const double *stage_s, guint n_stages);
/* Amdahl: 1 / (s + (1 − s)/n). */
double sim_sync_amdahl_speedup(double serial_fraction, double n);

typedef struct {
  double single_s; /* IBD time on one machine, measured */
  double serial_s; /* the part that does not parallelise (header download) */
  double bytes;    /* blocks + proofs to download */
  double link_bps; /* each machine's link, bit/s */
} SimIbdParams;

typedef struct {
  guint machines;
  double time_s;
  double speedup;        /* single_s / time_s */
  double amdahl_speedup; /* without the bandwidth floor */
  double floor_s;        /* bytes · 8 / (machines · link_bps) */
  gboolean bandwidth_bound;
} SimIbdPoint;

/* The Utreexo report's figures: 426 min, 4.403 s of headers, 500 GB (blocks + proofs with the proof
 * cache), 1 Gb/s. */
void sim_ibd_params_default(SimIbdParams *p);
void sim_ibd_point(const SimIbdParams *p, guint machines, SimIbdPoint *out);

G_END_DECLS
