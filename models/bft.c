/* bft.c: the PBFT (or hybrid 2f+1) ordering service on the event engine, with each stack's LogGP costs
 * (rdma.h): configuration, message counts, the closed form, the simulation with faults and view changes. */
#include "rdma-private.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(sim - bft - error - quark, sim_bft_error)

/* ---- The ordering service: configuration ---- */

static const char *const kind_names[SIM_BFT_N_KINDS] = {"request", "pre-prepare", "prepare", "commit",
                                                        "reply",   "view-change", "new-view"};

const char *sim_bft_kind_name(SimBftKind kind) {
  g_return_val_if_fail(kind < SIM_BFT_N_KINDS, "?");
  return kind_names[kind];
}

void sim_bft_config_default(SimBftConfig *cfg) {
  *cfg = (SimBftConfig){.n = 4,
                        .hybrid = FALSE,
                        .clients = 8,
                        .requests = 200,
                        .batch = 8,
                        .window = 4,
                        .payload_bytes = 1024,
                        .verify_us = 1.0,
                        .verify_ns_per_byte = 0.5,
                        .execute_us = 1.0,
                        .usig_us = 0,
                        .leader_crash_us = -1,
                        .leader_delay_us = 0,
                        .crashed_backups = 0,
                        .client_timeout_us = 10000,
                        .view_timeout_us = 20000};
}

gboolean sim_bft_faulty(const SimBftConfig *cfg) {
  return cfg->leader_crash_us >= 0 || cfg->leader_delay_us > 0 || cfg->crashed_backups > 0;
}

guint sim_bft_f(const SimBftConfig *cfg) {
  return cfg->hybrid ? (cfg->n - 1) / 2 : (cfg->n - 1) / 3;
}

gboolean sim_bft_config_check(const SimBftConfig *cfg, GError **error) {
#define BAD(...)                                                                                             \
  do {                                                                                                       \
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_CONFIG, __VA_ARGS__);                                    \
    return FALSE;                                                                                            \
  } while (0)
  if (cfg->hybrid) {
    if (cfg->n < 3 || cfg->n % 2 == 0)
      BAD("n must be 2f+1 >= 3 for the hybrid protocol: 3, 5, 7, ... (got %u)", cfg->n);
  } else {
    if (cfg->n < 4) BAD("n must be >= 4 for PBFT (n = 3f+1 with f >= 1) (got %u)", cfg->n);
    if (cfg->n % 3 != 1)
      BAD("n must be 3f+1 for PBFT: 4, 7, 10, ... (got %u); the hybrid protocol takes n = 2f+1", cfg->n);
  }
  if (cfg->n > SIM_BFT_MAX_N) BAD("n must be <= %u (got %u)", SIM_BFT_MAX_N, cfg->n);
  if (cfg->clients < 1 || cfg->clients > 100000) BAD("clients must be in [1, 100000] (got %u)", cfg->clients);
  if (cfg->requests < 1) BAD("requests must be >= 1 (got %u)", cfg->requests);
  uint64_t state = (uint64_t)cfg->n * cfg->clients * cfg->requests;
  if (state > SIM_BFT_MAX_STATE)
    BAD("n x clients x requests must be <= %" G_GUINT64_FORMAT " (got %" G_GUINT64_FORMAT ")",
        SIM_BFT_MAX_STATE, state);
  if (cfg->batch < 1 || cfg->batch > SIM_BFT_MAX_BATCH)
    BAD("batch must be in [1, %u] (got %u)", SIM_BFT_MAX_BATCH, cfg->batch);
  if (cfg->window < 1 || cfg->window > 100000) BAD("window must be in [1, 100000] (got %u)", cfg->window);
  if (cfg->payload_bytes > SIM_BFT_MAX_PAYLOAD_BYTES)
    BAD("payload must be <= %" G_GUINT64_FORMAT " bytes (got %" G_GUINT64_FORMAT ")",
        SIM_BFT_MAX_PAYLOAD_BYTES, cfg->payload_bytes);
  const double costs[] = {cfg->verify_us, cfg->verify_ns_per_byte, cfg->execute_us, cfg->usig_us};
  const char *const cost_names[] = {"verify_us", "verify_ns_per_byte", "execute_us", "usig_us"};
  for (guint i = 0; i < G_N_ELEMENTS(costs); i++)
    if (!(costs[i] >= 0 && costs[i] <= 1e9)) BAD("%s must be in [0, 1e9] (got %g)", cost_names[i], costs[i]);
  if (!(cfg->leader_crash_us < 0 || cfg->leader_crash_us <= 1e9))
    BAD("leader_crash_us must be < 0 (no crash) or <= 1e9 (got %g)", cfg->leader_crash_us);
  if (!(cfg->leader_delay_us >= 0 && cfg->leader_delay_us <= 1e9))
    BAD("leader_delay_us must be in [0, 1e9] (got %g)", cfg->leader_delay_us);
  if (!(cfg->client_timeout_us > 0 && cfg->client_timeout_us <= 1e9))
    BAD("client_timeout_us must be in (0, 1e9] (got %g)", cfg->client_timeout_us);
  if (!(cfg->view_timeout_us > 0 && cfg->view_timeout_us <= 1e9))
    BAD("view_timeout_us must be in (0, 1e9] (got %g)", cfg->view_timeout_us);
  if (sim_bft_faulty(cfg) && cfg->hybrid) BAD("faults and view changes are modelled for PBFT only, not --hybrid");
  guint f = sim_bft_f(cfg), crashed = cfg->crashed_backups + (cfg->leader_crash_us >= 0 ? 1 : 0);
  if (crashed > f)
    BAD("at most f = %u replicas may crash (got %u crashed backups%s)", f, cfg->crashed_backups,
        cfg->leader_crash_us >= 0 ? " and a crashed leader" : "");
  return TRUE;
#undef BAD
}

uint64_t sim_bft_messages_per_instance(guint n, gboolean hybrid, SimBftKind kind) {
  uint64_t N = n;
  switch (kind) {
  case SIM_BFT_REQUEST:
    return 1;
  case SIM_BFT_PREPREPARE:
    return N - 1;
  case SIM_BFT_PREPARE:
    return hybrid ? 0 : (N - 1) * (N - 1);
  case SIM_BFT_COMMIT:
    return hybrid ? (N - 1) * (N - 1) : N * (N - 1);
  case SIM_BFT_REPLY:
    return N;
  case SIM_BFT_VIEW_CHANGE:
  case SIM_BFT_NEW_VIEW:
    return 0;
  case SIM_BFT_N_KINDS:
    break;
  }
  g_return_val_if_reached(0);
}

static uint64_t request_bytes(const SimBftConfig *cfg) {
  return SIM_BFT_HEADER_BYTES + cfg->payload_bytes;
}

static double verify_ns(const SimBftConfig *cfg, uint64_t bytes) {
  return cfg->verify_us * 1e3 + cfg->verify_ns_per_byte * (double)bytes;
}

double sim_bft_closed_form_ns(const SimLogGP *lg, const SimBftConfig *cfg) {
  guint n = cfg->n, f = sim_bft_f(cfg);
  uint64_t req = request_bytes(cfg), pp = SIM_BFT_HEADER_BYTES + req, hdr = SIM_BFT_HEADER_BYTES;
  double usig = cfg->hybrid ? cfg->usig_us * 1e3 : 0;
  double t = sim_loggp_phase_ns(lg, req, 1, 1, verify_ns(cfg, req));
  t += usig + sim_loggp_phase_ns(lg, pp, n - 1, 1, verify_ns(cfg, pp) + usig);
  if (!cfg->hybrid) {
    t += sim_loggp_phase_ns(lg, hdr, n - 1, 2 * f, verify_ns(cfg, hdr));
    t += sim_loggp_phase_ns(lg, hdr, n - 1, 2 * f + 1, verify_ns(cfg, hdr));
  } else {
    t += usig + sim_loggp_phase_ns(lg, hdr, n - 1, f + 1, verify_ns(cfg, hdr) + usig);
  }
  t += cfg->execute_us * 1e3;
  t += sim_loggp_phase_ns(lg, hdr, 1, f + 1, verify_ns(cfg, hdr));
  return t;
}

/* ---- The ordering service: simulation ----
 *
 * Every host (replica or client) is one entity with one CPU, one NIC and one ingress link:
 *  - a message reaching a host's ingress at t (last byte, unloaded) is in memory at
 *    max(t, previous + m·G_b) and joins the CPU's FIFO;
 *  - the CPU takes messages in that order: r(m) + c_v(m), then the protocol's reaction, whose sends cost
 *    s(m) each on the same CPU;
 *  - a send leaves the NIC at max(end of its CPU work, NIC free) and occupies the NIC for d(m).
 * Events: NET (a message at a host's ingress), CPU (the CPU finished receiving the head of its FIFO), START
 * (a client's first request). A message is (kind in aux, tag << 32 | bytes in payload), the tag being the
 * sequence number or the request number. Batches (which requests a sequence number orders) are written by
 * the primary into a table before the pre-prepare is sent and only read afterwards: the payload pool of
 * DESIGN.md's event records. */

enum { EV_NET = 1, EV_CPU, EV_START, EV_TIMER };

enum { INST_PP = 1, INST_PREPARED = 2, INST_COMMITTED = 4, INST_EXECUTED = 8 };

/* Timers travel through the CPU's FIFO as items of these kinds (no receive cost). */
enum { ITEM_TIMER_CLIENT = SIM_BFT_N_KINDS, ITEM_TIMER_VIEW };

/* The kind and the view share an event's aux: kind in the low 4 bits. */
#define AUX_KIND(aux) ((guint)(aux) & 0xfu)
#define AUX_VIEW(aux) ((guint)(aux) >> 4)
#define SIM_BFT_MAX_VIEWS 4000

typedef struct {
  SimEntityId src;
  uint16_t kind;
  uint16_t view;
  uint64_t payload;
  SimTime ready; /* in memory, waiting for the CPU */
  SimTime first; /* its first packet in memory: a pipelined receive copy may start then (<= ready) */
} QItem;

typedef struct {
  uint32_t client, request;
} BatchEntry;

typedef struct BftRun BftRun;

/* What a replica's latest VIEW-CHANGE carries, written by it before sending (the payload pool). */
typedef struct {
  guint view;
  uint32_t executed; /* its highest executed sequence number */
  GArray *prepared;  /* uint32_t: prepared, unexecuted sequence numbers */
} VcRecord;

typedef struct {
  BftRun *run;
  guint index; /* replica number, or client number */
  gboolean is_client;
  SimTime crash_at; /* SIM_TIME_MAX: never */
  SimTime cpu_free, nic_free, rx_free;
  gboolean cpu_busy;
  QItem *q;
  guint q_head, q_len, q_cap;
  uint64_t sent[SIM_BFT_N_KINDS];
  guint view; /* clients: the highest view seen in a reply */
  /* replica */
  uint16_t *prepares, *commits;
  uint8_t *flags;
  uint32_t next_exec; /* lowest sequence number not executed */
  guint vc_target;    /* > view while a view change is under way */
  guint *vc_count;    /* view changes received from others, per view */
  gboolean nv_sent;   /* for vc_target, as its primary */
  uint32_t *seen, *executed, *held; /* per client: highest request known, executed, held for a new view */
  guint n_held;
  uint32_t view_gen;
  gboolean view_timer;
  /* primary */
  BatchEntry *pending;
  guint pend_head, pend_len, pend_cap;
  uint32_t next_seq;
  guint in_flight;
  /* client */
  uint32_t request; /* current request number, from 1 */
  guint replies;
  SimTime sent_at;
  double *latency_ns;
  guint done;
  SimTime last_done;
} BftHost;

struct BftRun {
  const SimLogGP *lg;
  const SimBftConfig *cfg;
  gboolean faulty;
  guint f, prepare_quorum, commit_quorum, reply_quorum;
  uint32_t max_seq;
  /* the batch table: written only by the primary of the view, sequence numbers from 1 */
  uint32_t *batch_start, *batch_count;
  BatchEntry *batch_entries;
  uint32_t n_entries, entries_cap;
  VcRecord *vc;                /* per replica */
  guint nv_view;               /* the latest NEW-VIEW, written by its primary before sending */
  uint32_t nv_lo, nv_hi;       /* it re-proposes sequence numbers nv_lo..nv_hi */
  uint64_t reproposed, retransmits;
  BftHost *hosts;
  SimEntityId n_hosts;
};

static inline uint64_t msg_pack(uint32_t tag, uint64_t bytes) {
  return (uint64_t)tag << 32 | (bytes & 0xffffffffu);
}
static inline uint32_t msg_tag(uint64_t payload) {
  return (uint32_t)(payload >> 32);
}
static inline uint64_t msg_bytes(uint64_t payload) {
  return payload & 0xffffffffu;
}

static SimTime cost_ns(double ns) {
  return sim_rdma_ns_round(ns);
}

static guint primary_of(const BftRun *run, guint view) {
  return view % run->cfg->n;
}

/* Sends one message: the CPU pays s(m) from *t_cpu on, the NIC takes it when both are ready (a slow view-0
 * primary holds its pre-prepares leader_delay longer). */
static void host_send(SimCtx *ctx, BftHost *h, SimTime *t_cpu, SimEntityId dst, SimBftKind kind, uint32_t tag,
                      uint64_t bytes) {
  const SimLogGP *lg = h->run->lg;
  /* The NIC may start once the serial work and the first packet's pipelined copy are done; the CPU stays
   * busy with the rest of the copy (the same as s(m) without pipelined bytes). */
  SimTime ready = *t_cpu + cost_ns(sim_loggp_send_lead_ns(lg, bytes));
  *t_cpu += cost_ns(sim_loggp_send_cpu_ns(lg, bytes));
  if (kind == SIM_BFT_PREPREPARE && h->view == 0 && !h->is_client && h->index == 0)
    ready += cost_ns(h->run->cfg->leader_delay_us * 1e3);
  SimTime inject = MAX(ready, h->nic_free);
  h->nic_free = inject + cost_ns(sim_loggp_gap_ns(lg, bytes));
  SimTime arrive = inject + cost_ns(sim_loggp_wire_ns(lg, bytes));
  uint16_t aux = (uint16_t)((guint)kind | (h->view << 4));
  sim_ctx_send(ctx, dst, arrive - sim_ctx_now(ctx), EV_NET, aux, msg_pack(tag, bytes));
  h->sent[kind]++;
}

static void multicast(SimCtx *ctx, BftHost *h, SimTime *t_cpu, SimBftKind kind, uint32_t tag,
                      uint64_t bytes) {
  for (guint r = 0; r < h->run->cfg->n; r++)
    if (r != h->index) host_send(ctx, h, t_cpu, r, kind, tag, bytes);
}

static uint64_t preprepare_bytes(const BftRun *run, uint32_t seq) {
  return SIM_BFT_HEADER_BYTES + (uint64_t)run->batch_count[seq] * request_bytes(run->cfg);
}

static void timer_arm(SimCtx *ctx, SimTime at, guint item, uint32_t tag) {
  sim_ctx_send(ctx, sim_ctx_self(ctx), at - sim_ctx_now(ctx), EV_TIMER, (uint16_t)item, tag);
}

/* The backup's view timer: (re)started at *t_cpu, or stopped. */
static void view_timer_start(SimCtx *ctx, BftHost *h, SimTime t, guint attempt) {
  if (!h->run->faulty) return;
  h->view_gen++;
  h->view_timer = TRUE;
  double us = h->run->cfg->view_timeout_us * (double)(1u << MIN(attempt, 20u));
  timer_arm(ctx, t + cost_ns(us * 1e3), ITEM_TIMER_VIEW, h->view_gen);
}

static void view_timer_stop(BftHost *h) {
  h->view_gen++;
  h->view_timer = FALSE;
}

static void try_propose(SimCtx *ctx, BftHost *h, SimTime *t_cpu);

static void try_execute(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  gboolean any = FALSE;
  while (h->next_exec <= run->max_seq && (h->flags[h->next_exec] & INST_COMMITTED)) {
    uint32_t seq = h->next_exec++;
    h->flags[seq] |= INST_EXECUTED;
    for (uint32_t i = 0; i < run->batch_count[seq]; i++) {
      const BatchEntry *e = &run->batch_entries[run->batch_start[seq] + i];
      *t_cpu += cost_ns(run->cfg->execute_us * 1e3);
      h->executed[e->client] = MAX(h->executed[e->client], e->request);
      h->seen[e->client] = MAX(h->seen[e->client], e->request);
      if (h->held[e->client] && h->held[e->client] <= e->request) {
        h->held[e->client] = 0;
        h->n_held--;
      }
      any = TRUE;
      host_send(ctx, h, t_cpu, run->cfg->n + e->client, SIM_BFT_REPLY, e->request, SIM_BFT_HEADER_BYTES);
    }
    if (h->index == primary_of(run, h->view) && h->vc_target == h->view) {
      h->in_flight--;
      try_propose(ctx, h, t_cpu);
    }
  }
  if (any && h->view_timer) {
    if (h->n_held > 0)
      view_timer_start(ctx, h, *t_cpu, 0);
    else
      view_timer_stop(h);
  }
}

static void check_committed(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  uint8_t fl = h->flags[seq];
  gboolean ready = h->run->cfg->hybrid ? (fl & INST_PP) : (fl & INST_PREPARED);
  if (ready && !(fl & INST_COMMITTED) && h->commits[seq] >= h->run->commit_quorum) {
    h->flags[seq] |= INST_COMMITTED;
    try_execute(ctx, h, t_cpu);
  }
}

/* PBFT: prepared = the pre-prepare and 2f prepares (a backup's own counts); then commit to all. */
static void check_prepared(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  uint8_t fl = h->flags[seq];
  if ((fl & INST_PP) && !(fl & INST_PREPARED) && h->prepares[seq] >= h->run->prepare_quorum) {
    h->flags[seq] |= INST_PREPARED;
    h->commits[seq]++; /* its own */
    multicast(ctx, h, t_cpu, SIM_BFT_COMMIT, seq, SIM_BFT_HEADER_BYTES);
    check_committed(ctx, h, t_cpu, seq);
  }
}

static void try_propose(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  const SimBftConfig *cfg = run->cfg;
  while (h->pend_len > 0 && h->in_flight < cfg->window) {
    uint32_t seq = ++h->next_seq;
    g_assert(seq <= run->max_seq);
    guint take = MIN(h->pend_len, cfg->batch);
    g_assert(run->n_entries + take <= run->entries_cap);
    run->batch_start[seq] = run->n_entries;
    run->batch_count[seq] = take;
    for (guint i = 0; i < take; i++) {
      run->batch_entries[run->n_entries++] = h->pending[h->pend_head];
      h->pend_head = (h->pend_head + 1) % h->pend_cap;
      h->pend_len--;
    }
    h->in_flight++;
    h->flags[seq] |= INST_PP;
    if (cfg->hybrid) {
      *t_cpu += cost_ns(cfg->usig_us * 1e3);
      h->commits[seq]++; /* the primary's prepare is its commit */
    }
    multicast(ctx, h, t_cpu, SIM_BFT_PREPREPARE, seq, preprepare_bytes(run, seq));
    check_committed(ctx, h, t_cpu, seq); /* hybrid with f = 0 never happens (n >= 3), but keep it exact */
  }
}

static void pend_push(BftHost *h, uint32_t client, uint32_t request) {
  g_assert(h->pend_len < h->pend_cap);
  h->pending[(h->pend_head + h->pend_len) % h->pend_cap] = (BatchEntry){.client = client, .request = request};
  h->pend_len++;
}

/* Enters view v: forget the instances of the old view that were not executed. */
static void enter_view(BftHost *h, guint v) {
  BftRun *run = h->run;
  h->view = v;
  h->vc_target = v;
  for (uint32_t s = h->next_exec; s <= run->max_seq; s++) {
    h->prepares[s] = h->commits[s] = 0;
    h->flags[s] &= INST_EXECUTED;
  }
}

/* A backup accepts re-proposed instance `seq` of its new view as a pre-prepare. */
static void accept_reproposal(SimCtx *ctx, BftHost *h, SimTime *t_cpu, uint32_t seq) {
  h->flags[seq] |= INST_PP;
  h->prepares[seq]++; /* its own */
  multicast(ctx, h, t_cpu, SIM_BFT_PREPARE, seq, SIM_BFT_HEADER_BYTES);
  check_prepared(ctx, h, t_cpu, seq);
}

/* The primary of view v with 2f view changes from others and its own: NEW-VIEW, re-proposals, then the
 * requests it holds. */
static void try_new_view(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  guint v = h->vc_target;
  if (h->nv_sent || v == h->view || primary_of(run, v) != h->index || h->vc_count[v] < 2 * run->f) return;
  h->nv_sent = TRUE;
  /* The 2f+1 records: its own and the first 2f of the others for this view, in replica order. */
  uint32_t lo = UINT32_MAX, hi = 0;
  uint64_t bytes = SIM_BFT_HEADER_BYTES;
  guint used = 0;
  gboolean *in = g_new0(gboolean, run->cfg->n);
  for (guint r = 0; r < run->cfg->n && used < 2 * run->f + 1; r++) {
    const VcRecord *rec = &run->vc[r];
    if (rec->view != v || run->hosts[r].crash_at <= sim_ctx_now(ctx)) continue;
    if (r != h->index && used == 2 * run->f) continue;
    in[r] = TRUE;
    used++;
    lo = MIN(lo, rec->executed);
    for (guint i = 0; i < rec->prepared->len; i++)
      hi = MAX(hi, g_array_index(rec->prepared, uint32_t, i));
    bytes += SIM_BFT_HEADER_BYTES * (1 + (uint64_t)rec->prepared->len * (2 * run->f + 1));
  }
  if (hi < lo + 1) hi = lo; /* nothing to re-propose */
  run->nv_view = v;
  run->nv_lo = lo + 1;
  run->nv_hi = hi;
  for (uint32_t s = lo + 1; s <= hi; s++) {
    gboolean prepared = FALSE;
    for (guint r = 0; r < run->cfg->n && !prepared; r++) {
      if (!in[r]) continue;
      const GArray *p = run->vc[r].prepared;
      for (guint i = 0; i < p->len && !prepared; i++)
        prepared = g_array_index(p, uint32_t, i) == s;
    }
    if (!prepared) run->batch_count[s] = 0; /* a null request: nothing committed can be dropped this way */
    else run->reproposed++;
    bytes += SIM_BFT_HEADER_BYTES;
  }
  g_free(in);
  enter_view(h, v);
  multicast(ctx, h, t_cpu, SIM_BFT_NEW_VIEW, v, bytes);
  /* As primary: the re-proposed instances are its pre-prepares. */
  h->next_seq = MAX(hi, h->next_exec - 1);
  h->in_flight = 0;
  for (uint32_t s = lo + 1; s <= hi; s++) {
    if (s < h->next_exec) continue;
    h->flags[s] |= INST_PP;
    h->in_flight++;
  }
  /* The requests it holds that no re-proposed batch carries, in client order. */
  h->pend_head = h->pend_len = 0;
  for (guint c = 0; c < run->cfg->clients; c++) {
    uint32_t r = h->held[c];
    if (!r || r <= h->executed[c]) continue;
    gboolean carried = FALSE;
    for (uint32_t s = lo + 1; s <= hi && !carried; s++)
      for (uint32_t i = 0; i < run->batch_count[s] && !carried; i++) {
        const BatchEntry *e = &run->batch_entries[run->batch_start[s] + i];
        carried = e->client == c && e->request == r;
      }
    if (!carried) pend_push(h, c, r);
  }
  view_timer_stop(h);
  try_propose(ctx, h, t_cpu);
  try_execute(ctx, h, t_cpu);
}

/* Multicasts this replica's VIEW-CHANGE for view v and waits for the new view. */
static void start_view_change(SimCtx *ctx, BftHost *h, SimTime *t_cpu, guint v) {
  BftRun *run = h->run;
  if (v >= SIM_BFT_MAX_VIEWS) return; /* gives up: the run reports fewer completions */
  guint attempt = v - h->view;
  h->vc_target = v;
  h->nv_sent = FALSE;
  VcRecord *rec = &run->vc[h->index];
  rec->view = v;
  rec->executed = h->next_exec - 1;
  g_array_set_size(rec->prepared, 0);
  for (uint32_t s = h->next_exec; s <= run->max_seq; s++)
    if (h->flags[s] & INST_PREPARED) g_array_append_val(rec->prepared, s);
  uint64_t bytes = SIM_BFT_HEADER_BYTES * (1 + (uint64_t)rec->prepared->len * (2 * run->f + 1));
  multicast(ctx, h, t_cpu, SIM_BFT_VIEW_CHANGE, v, bytes);
  view_timer_start(ctx, h, *t_cpu, attempt);
  try_new_view(ctx, h, t_cpu);
}

static void replica_request(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  uint32_t c = m->src - run->cfg->n, r = msg_tag(m->payload);
  if (r <= h->executed[c]) { /* executed: the reply again */
    if (r == h->executed[c])
      host_send(ctx, h, t_cpu, m->src, SIM_BFT_REPLY, r, SIM_BFT_HEADER_BYTES);
    return;
  }
  if (r <= h->seen[c] && h->index == primary_of(run, h->view) && h->vc_target == h->view) return;
  if (r > h->seen[c]) h->seen[c] = r;
  if (h->held[c] != r) {
    if (!h->held[c]) h->n_held++;
    h->held[c] = r;
  }
  if (h->index == primary_of(run, h->view) && h->vc_target == h->view) {
    /* Already ordered by this primary? (a retransmission after a slow instance) */
    for (guint i = 0; i < h->pend_len; i++)
      if (h->pending[(h->pend_head + i) % h->pend_cap].client == c) return;
    for (uint32_t s = h->next_exec; s <= h->next_seq; s++)
      for (uint32_t i = 0; i < run->batch_count[s]; i++) {
        const BatchEntry *e = &run->batch_entries[run->batch_start[s] + i];
        if (e->client == c && e->request == r) return;
      }
    pend_push(h, c, r);
    try_propose(ctx, h, t_cpu);
  } else if (run->faulty && !h->view_timer) {
    view_timer_start(ctx, h, *t_cpu, h->vc_target - h->view);
  }
}

static void replica_receive(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  const SimBftConfig *cfg = run->cfg;
  uint32_t tag = msg_tag(m->payload);
  gboolean normal = m->view == h->view && h->vc_target == h->view;
  switch (m->kind) {
  case SIM_BFT_REQUEST:
    replica_request(ctx, h, m, t_cpu);
    break;
  case SIM_BFT_PREPREPARE:
    if (!normal) break;
    h->flags[tag] |= INST_PP;
    if (cfg->hybrid) {
      *t_cpu += cost_ns(cfg->usig_us * 1e3);
      h->commits[tag] += 2; /* the primary's prepare and its own commit */
      multicast(ctx, h, t_cpu, SIM_BFT_COMMIT, tag, SIM_BFT_HEADER_BYTES);
      check_committed(ctx, h, t_cpu, tag);
    } else {
      h->prepares[tag]++; /* its own */
      multicast(ctx, h, t_cpu, SIM_BFT_PREPARE, tag, SIM_BFT_HEADER_BYTES);
      check_prepared(ctx, h, t_cpu, tag);
    }
    break;
  case SIM_BFT_PREPARE:
    if (!normal) break;
    h->prepares[tag]++;
    check_prepared(ctx, h, t_cpu, tag);
    break;
  case SIM_BFT_COMMIT:
    if (!normal) break;
    h->commits[tag]++;
    check_committed(ctx, h, t_cpu, tag);
    break;
  case SIM_BFT_VIEW_CHANGE: {
    guint v = tag;
    if (v <= h->view || v >= SIM_BFT_MAX_VIEWS) break;
    h->vc_count[v]++;
    /* f+1 replicas want view v: join them. */
    if (v > h->vc_target && h->vc_count[v] >= run->f + 1) start_view_change(ctx, h, t_cpu, v);
    else if (v == h->vc_target) try_new_view(ctx, h, t_cpu);
    break;
  }
  case SIM_BFT_NEW_VIEW: {
    guint v = tag;
    if (v < h->vc_target || v <= h->view || run->nv_view != v) break;
    enter_view(h, v);
    if (h->n_held > 0) view_timer_start(ctx, h, *t_cpu, 0);
    else view_timer_stop(h);
    for (uint32_t s = run->nv_lo; s <= run->nv_hi; s++)
      accept_reproposal(ctx, h, t_cpu, s);
    break;
  }
  case ITEM_TIMER_VIEW:
    if (tag != h->view_gen) break; /* stopped or restarted since */
    h->view_timer = FALSE;
    start_view_change(ctx, h, t_cpu, h->vc_target + 1);
    break;
  default:
    g_assert_not_reached();
  }
}

static void client_send_request(SimCtx *ctx, BftHost *h, SimTime *t_cpu) {
  BftRun *run = h->run;
  h->request++;
  h->replies = 0;
  h->sent_at = *t_cpu;
  host_send(ctx, h, t_cpu, primary_of(run, h->view), SIM_BFT_REQUEST, h->request, request_bytes(run->cfg));
  if (run->faulty) timer_arm(ctx, *t_cpu + cost_ns(run->cfg->client_timeout_us * 1e3), ITEM_TIMER_CLIENT, h->request);
}

static void client_receive(SimCtx *ctx, BftHost *h, const QItem *m, SimTime *t_cpu) {
  BftRun *run = h->run;
  if (m->kind == ITEM_TIMER_CLIENT) {
    if (msg_tag(m->payload) != h->request || h->done >= h->request) return; /* answered */
    for (guint r = 0; r < run->cfg->n; r++)
      host_send(ctx, h, t_cpu, r, SIM_BFT_REQUEST, h->request, request_bytes(run->cfg));
    run->retransmits++;
    timer_arm(ctx, *t_cpu + cost_ns(run->cfg->client_timeout_us * 1e3), ITEM_TIMER_CLIENT, h->request);
    return;
  }
  g_assert(m->kind == SIM_BFT_REPLY);
  h->view = MAX(h->view, m->view);
  if (msg_tag(m->payload) != h->request || h->replies >= run->reply_quorum) return; /* a late reply */
  if (++h->replies < run->reply_quorum) return;
  h->latency_ns[h->done++] = (double)(*t_cpu - h->sent_at);
  h->last_done = *t_cpu;
  if (h->done < run->cfg->requests) client_send_request(ctx, h, t_cpu);
}

/* The CPU's work for a received item: r(m) + c_v(m) (and the trusted counter); *tail_ns gets what of it is
 * left after the last byte is in memory (r_t(m) + c_v(m) ...). */
static double receive_cost_ns(const BftHost *h, const QItem *m, double *tail_ns) {
  const SimBftConfig *cfg = h->run->cfg;
  *tail_ns = 0;
  if (m->kind >= SIM_BFT_N_KINDS) return 0; /* a timer */
  uint64_t bytes = msg_bytes(m->payload);
  double after = verify_ns(cfg, bytes);
  if (cfg->hybrid && (m->kind == SIM_BFT_PREPREPARE || m->kind == SIM_BFT_COMMIT)) after += cfg->usig_us * 1e3;
  *tail_ns = sim_loggp_recv_tail_ns(h->run->lg, bytes) + after;
  return sim_loggp_recv_cpu_ns(h->run->lg, bytes) + after;
}

/* Schedules the CPU event for the head of the FIFO. A pipelined receive copy starts with the first packet;
 * without one (first == ready, tail == full) this is max(ready, cpu_free) + r(m) + c_v(m). */
static void cpu_start(SimCtx *ctx, BftHost *h) {
  const QItem *head = &h->q[h->q_head];
  double tail = 0, full = receive_cost_ns(h, head, &tail);
  SimTime start = MAX(head->first, h->cpu_free);
  SimTime done = MAX(start + cost_ns(full), MAX(head->ready, h->cpu_free) + cost_ns(tail));
  h->cpu_busy = TRUE;
  sim_ctx_send(ctx, sim_ctx_self(ctx), done - sim_ctx_now(ctx), EV_CPU, 0, 0);
}

static void enqueue(SimCtx *ctx, BftHost *h, QItem item) {
  if (h->q_len == h->q_cap) {
    guint cap = MAX(16, h->q_cap * 2);
    QItem *q = g_new(QItem, cap);
    for (guint i = 0; i < h->q_len; i++)
      q[i] = h->q[(h->q_head + i) % h->q_cap];
    g_free(h->q);
    h->q = q;
    h->q_head = 0;
    h->q_cap = cap;
  }
  h->q[(h->q_head + h->q_len) % h->q_cap] = item;
  h->q_len++;
  if (!h->cpu_busy) cpu_start(ctx, h);
}

static void host_handle(SimCtx *ctx, void *state, const SimEvent *ev) {
  BftHost *h = state;
  SimTime now = sim_ctx_now(ctx);
  if (now >= h->crash_at) return; /* crashed: drops everything */
  switch (ev->type) {
  case EV_NET: {
    uint64_t bytes = msg_bytes(ev->payload);
    SimTime ready = MAX(now, h->rx_free + cost_ns((double)bytes * sim_rdma_bottleneck_ns_per_byte(h->run->lg)));
    h->rx_free = ready;
    enqueue(ctx, h,
            (QItem){.src = sim_event_src(ev),
                    .kind = (uint16_t)AUX_KIND(ev->aux),
                    .view = (uint16_t)AUX_VIEW(ev->aux),
                    .payload = ev->payload,
                    .ready = ready,
                    .first = ready - MIN(ready, cost_ns(sim_loggp_wire_rest_ns(h->run->lg, bytes)))});
    break;
  }
  case EV_TIMER:
    enqueue(ctx, h, (QItem){.src = sim_ctx_self(ctx), .kind = ev->aux, .payload = msg_pack((uint32_t)ev->payload, 0), .ready = now, .first = now});
    break;
  case EV_CPU: {
    QItem m = h->q[h->q_head];
    h->q_head = (h->q_head + 1) % h->q_cap;
    h->q_len--;
    SimTime t_cpu = now;
    if (h->is_client)
      client_receive(ctx, h, &m, &t_cpu);
    else
      replica_receive(ctx, h, &m, &t_cpu);
    h->cpu_free = t_cpu;
    h->cpu_busy = FALSE;
    if (h->q_len > 0) cpu_start(ctx, h);
    break;
  }
  case EV_START: {
    SimTime t_cpu = MAX(now, h->cpu_free);
    client_send_request(ctx, h, &t_cpu);
    h->cpu_free = t_cpu;
    break;
  }
  default:
    g_assert_not_reached();
  }
}

static const SimEntityKind host_kind = {.name = "bft-host", .handle = host_handle};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

gboolean sim_bft_run(const SimLogGP *lg, const SimBftConfig *cfg, SimBftResult *out, GError **error) {
  g_return_val_if_fail(lg != NULL && cfg != NULL && out != NULL, FALSE);
  if (!sim_bft_config_check(cfg, error)) return FALSE;
  memset(out, 0, sizeof *out);

  BftRun run = {.lg = lg, .cfg = cfg, .f = sim_bft_f(cfg), .faulty = sim_bft_faulty(cfg)};
  run.prepare_quorum = 2 * run.f;
  run.commit_quorum = cfg->hybrid ? run.f + 1 : 2 * run.f + 1;
  run.reply_quorum = run.f + 1;
  uint64_t total = (uint64_t)cfg->clients * cfg->requests;
  /* At least one request per batch; view changes may add null instances and order a request again. */
  run.max_seq = (uint32_t)(run.faulty ? 2 * total + 64 : total);
  run.entries_cap = (uint32_t)(run.faulty ? 2 * total + 64 : total);
  run.batch_start = g_new0(uint32_t, run.max_seq + 1);
  run.batch_count = g_new0(uint32_t, run.max_seq + 1);
  run.batch_entries = g_new0(BatchEntry, run.entries_cap);
  run.vc = g_new0(VcRecord, cfg->n);
  for (guint r = 0; r < cfg->n; r++)
    run.vc[r].prepared = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  run.n_hosts = cfg->n + cfg->clients;
  run.hosts = g_new0(BftHost, run.n_hosts);

  g_autoptr(SimEngine) engine = sim_engine_new(0);
  for (SimEntityId i = 0; i < run.n_hosts; i++) {
    BftHost *h = &run.hosts[i];
    h->run = &run;
    h->is_client = i >= cfg->n;
    h->index = h->is_client ? i - cfg->n : i;
    h->crash_at = SIM_TIME_MAX;
    if (!h->is_client) {
      if (i == 0 && cfg->leader_crash_us >= 0) h->crash_at = cost_ns(cfg->leader_crash_us * 1e3);
      if (i + cfg->crashed_backups >= cfg->n) h->crash_at = 0;
      h->prepares = g_new0(uint16_t, run.max_seq + 1);
      h->commits = g_new0(uint16_t, run.max_seq + 1);
      h->flags = g_new0(uint8_t, run.max_seq + 1);
      h->next_exec = 1;
      h->vc_count = run.faulty ? g_new0(guint, SIM_BFT_MAX_VIEWS) : NULL;
      h->seen = g_new0(uint32_t, cfg->clients);
      h->executed = g_new0(uint32_t, cfg->clients);
      h->held = g_new0(uint32_t, cfg->clients);
      h->pend_cap = cfg->clients; /* one outstanding request per client */
      h->pending = g_new(BatchEntry, h->pend_cap);
    } else {
      h->latency_ns = g_new0(double, cfg->requests);
    }
    SimEntityId id = sim_engine_add_entity(engine, &host_kind, h);
    g_assert(id == i);
  }
  for (guint c = 0; c < cfg->clients; c++)
    sim_engine_schedule(engine, cfg->n + c, cfg->n + c, 0, EV_START, 0, 0);
  sim_engine_run(engine);

  SimEngineStats st;
  sim_engine_get_stats(engine, &st);
  out->events = st.events;
  for (SimEntityId i = 0; i < run.n_hosts; i++)
    for (guint k = 0; k < SIM_BFT_N_KINDS; k++)
      out->messages[k] += run.hosts[i].sent[k];
  for (guint k = 0; k < SIM_BFT_N_KINDS; k++)
    out->messages_total += out->messages[k];
  for (guint r = 0; r < cfg->n; r++)
    if (run.hosts[r].crash_at == SIM_TIME_MAX) {
      out->view = MAX(out->view, run.hosts[r].view);
      out->instances = MAX(out->instances, run.hosts[r].next_exec - 1);
    }
  out->reproposed = run.reproposed;
  out->retransmits = run.retransmits;

  g_autofree double *lat = g_new(double, total);
  uint64_t n_lat = 0;
  for (guint c = 0; c < cfg->clients; c++) {
    const BftHost *h = &run.hosts[cfg->n + c];
    for (guint r = 0; r < h->done; r++)
      lat[n_lat++] = h->latency_ns[r];
  }
  out->completed = n_lat;
  SimTime last_done = 0;
  for (guint c = 0; c < cfg->clients; c++)
    last_done = MAX(last_done, run.hosts[cfg->n + c].last_done);
  gboolean ok = TRUE;
  if (n_lat != total) {
    g_set_error(error, SIM_BFT_ERROR, SIM_BFT_ERROR_CONFIG,
                "only %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " requests completed", n_lat, total);
    ok = FALSE;
  } else {
    qsort(lat, n_lat, sizeof *lat, cmp_double);
    double sum = 0;
    for (uint64_t i = 0; i < n_lat; i++)
      sum += lat[i];
    out->latency_mean_us = sum / (double)n_lat / 1e3;
    out->latency_p50_us = gsl_stats_quantile_from_sorted_data(lat, 1, n_lat, 0.5) / 1e3;
    out->latency_p99_us = gsl_stats_quantile_from_sorted_data(lat, 1, n_lat, 0.99) / 1e3;
    out->latency_max_us = lat[n_lat - 1] / 1e3;
    out->makespan_s = sim_time_to_s(last_done);
    out->throughput_rps = out->makespan_s > 0 ? (double)n_lat / out->makespan_s : 0;
  }

  for (SimEntityId i = 0; i < run.n_hosts; i++) {
    BftHost *h = &run.hosts[i];
    g_free(h->q);
    g_free(h->prepares);
    g_free(h->commits);
    g_free(h->flags);
    g_free(h->vc_count);
    g_free(h->seen);
    g_free(h->executed);
    g_free(h->held);
    g_free(h->pending);
    g_free(h->latency_ns);
  }
  for (guint r = 0; r < cfg->n; r++)
    g_array_free(run.vc[r].prepared, TRUE);
  g_free(run.vc);
  g_free(run.hosts);
  g_free(run.batch_start);
  g_free(run.batch_count);
  g_free(run.batch_entries);
  return ok;
}
