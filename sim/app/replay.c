/* replay.c: measured EMC logs through the simulator's analysis (see replay.h). */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chain.h"
#include "emc.h"
#include "input.h"
#include "rng.h"
#include "output.h"
#include "params.h"
#include "propagation.h"
#include "txmetrics.h"
#include "util.h"

G_DEFINE_QUARK(sim-replay-error-quark, sim_replay_error)

/* The public records (replay.h) under their short names. */
typedef SimReplayBlock RBlock;
typedef SimReplayTx RTx;

/* Defects of a log's order (check_order()) and of a vantage point's chain (find_gaps()). */
enum { AN_DUP, AN_REORDER, AN_STEP, AN_GAP, AN_N };
static const char *const an_key[AN_N] = {"duplicates", "reordered", "clock_steps", "gaps"};
static const char *const an_all[AN_N] = {"duplicate lines in all (skipped)", "lines out of order in all (kept)",
                                         "clock steps in all (lines kept)", "gaps in all"};
/* A line up to this much earlier than the line before it is out of order; more is a step back of the clock. */
#define REORDER_MAX_NS INT64_C(1000000000)
/* Two consecutive block lines more than STEP_SILENCE_NS apart whose local times advanced more than
 * STEP_EXCESS_NS beyond their header Times: a step forward of the local clock. */
#define STEP_SILENCE_NS INT64_C(60000000000)
#define STEP_EXCESS_NS INT64_C(30000000000)

typedef struct {
  uint64_t number, id;
  guint64 line;
  const char *file;
} VNum;

typedef struct {
  const SimReplayOptions *opt;
  guint nv;
  GHashTable *blocks; /* uint64 id -> RBlock* (owns) */
  GHashTable *txs;    /* uint64 id -> RTx* (owns) */
  GHashTable *pool_of; /* uint64 address id -> pool name (owned strings) */
  GPtrArray *pool_order; /* pool names in the map's order (owned) */
  guint64 lines[EMC_N_KINDS], bad_lines[EMC_N_KINDS];
  GHashTable *announced_only; /* uint64 ids announced but never received as blocks */
  guint64 detached, unknown_uncles, txs_only_in_blocks, placeholders;
  uint64_t min_number;
  GHashTable *at_number; /* uint64 number -> the first placed RBlock at that number */
  GPtrArray *placed;     /* RBlock * in placement order (parents first) */
  guint next_order;
  GStringChunk *files;   /* the names of the files read (RBlock.file points here) */
  GPtrArray *dropped;    /* RBlock * taken out of `blocks` as inconsistent (owns) */
  guint64 problem_lines; /* lines left out by the checks of this file (not the reader's) */
  guint64 problems;      /* problems found in the current file or pass, and the first few of them: */
  GPtrArray *problem_msgs;
  /* What the order of a file's lines and the vantage points' chains show (see check_order(), find_gaps()):
   * counts in all and per vantage point (nv x AN_N), this file's counts and first messages. */
  guint64 anom[AN_N], *vanom, gap_heights, *vgap_heights;
  guint64 file_anom[AN_N];
  GPtrArray *anom_msgs;
  const char *ord_file;   /* the file whose order is followed (in `files`), its previous line's time... */
  int64_t ord_prev_ns;    /* ... (OBS_TIME_NONE: none yet), that line's number and its header Time (blocks; */
  guint64 ord_prev_line;  /* -1 otherwise) */
  int64_t ord_prev_header_s;
  GHashTable *same_ms;    /* ids of the lines with the previous line's time -> their line numbers */
  GArray **vnums;         /* per vantage point: VNum of each block's first line there */
} Replay;

static void rblock_free(gpointer p) {
  RBlock *b = p;
  g_free(b->txs);
  g_free(b->msg_ns);
  g_free(b->ann_ns);
  g_free(b);
}

static void input_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void input_error(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, msg);
}

/* A line that parses but cannot be right is a bad line too: with --strict the first is fatal (FALSE with
 * `error`); else it is counted (`n_lines`: a detached block takes all its lines with it) and the first few
 * messages are kept for flush_problems(). */
static gboolean line_problem(Replay *r, guint n_lines, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);
static gboolean line_problem(Replay *r, guint n_lines, GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (r->opt->strict) {
    input_error(error, "%s", msg);
    return FALSE;
  }
  r->problem_lines += n_lines;
  if (r->problems++ < EMC_BAD_LINES_KEPT) g_ptr_array_add(r->problem_msgs, g_steal_pointer(&msg));
  return TRUE;
}

/* Warnings go to stderr whatever --quiet says: a result computed without some lines must say so. */
static void flush_problems(Replay *r, const char *where, const char *what) {
  for (guint i = 0; i < r->problem_msgs->len; i++)
    fprintf(stderr, "%s\n", (char *)g_ptr_array_index(r->problem_msgs, i));
  if (r->problems > EMC_BAD_LINES_KEPT)
    fprintf(stderr, "%s%s%" G_GUINT64_FORMAT " %s\n", where ? where : "", where ? ": " : "", r->problems,
            what);
  g_ptr_array_set_size(r->problem_msgs, 0);
  r->problems = 0;
}

/* A defect of the logs' order or chain at vantage point v: with --strict a `fatal` one ends reading (FALSE
 * with `error`); else counted and the first few of this file kept for flush_anomalies(). */
static gboolean anomaly(Replay *r, guint v, int kind, gboolean fatal, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF(6, 7);
static gboolean anomaly(Replay *r, guint v, int kind, gboolean fatal, GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (fatal && r->opt->strict) {
    input_error(error, "%s", msg);
    return FALSE;
  }
  r->anom[kind]++;
  r->vanom[v * AN_N + kind]++;
  if (r->file_anom[kind]++ < EMC_BAD_LINES_KEPT) g_ptr_array_add(r->anom_msgs, g_steal_pointer(&msg));
  return TRUE;
}

static void flush_anomalies(Replay *r, const char *where) {
  for (guint i = 0; i < r->anom_msgs->len; i++) fprintf(stderr, "%s\n", (char *)g_ptr_array_index(r->anom_msgs, i));
  g_ptr_array_set_size(r->anom_msgs, 0);
  for (int k = 0; k < AN_N; k++) {
    if (r->file_anom[k] > EMC_BAD_LINES_KEPT)
      fprintf(stderr, "%s: %" G_GUINT64_FORMAT " %s\n", where, r->file_anom[k], an_all[k]);
    r->file_anom[k] = 0;
  }
}

/* Bad lines: counted; the first few go to stderr, then the first few that parse but cannot be right. */
static void report_bad(Replay *r, EmcReader *rd, EmcKind kind) {
  r->lines[kind] += emc_reader_records(rd);
  guint64 bad = emc_reader_bad_lines(rd);
  r->bad_lines[kind] += bad;
  const char *const *msgs = emc_reader_bad_line_messages(rd);
  for (guint i = 0; bad && msgs && msgs[i]; i++)
    fprintf(stderr, "%s\n", msgs[i]);
  if (bad > EMC_BAD_LINES_KEPT)
    fprintf(stderr, "%s: %" G_GUINT64_FORMAT " bad lines in all (skipped)\n", emc_reader_file(rd), bad);
  flush_anomalies(r, emc_reader_file(rd));
  flush_problems(r, emc_reader_file(rd), "lines in all that cannot be right (skipped)");
}

/* Opens one kind in one vantage directory; NULL without error when the directory has no such file. */
static EmcReader *open_kind(const Replay *r, const EmcDir *d, EmcKind kind, GError **error) {
  const char *const *files = emc_dir_files(d, kind);
  if (!files || !files[0]) return NULL;
  GError *e = NULL;
  EmcReader *rd = emc_dir_open_reader(d, kind, r->opt->strict ? EMC_READER_STRICT : EMC_READER_DEFAULT, &e);
  if (!rd) {
    input_error(error, "%s", e->message);
    g_error_free(e);
  }
  return rd;
}

static double u256_double(const EmcU256 *x) { return emc_u256_to_double(x); }

/* Keeps the earlier of `t` and `*slot` (OBS_TIME_NONE: none yet). */
static inline void keep_min(int64_t *slot, int64_t t) {
  if (*slot == OBS_TIME_NONE || t < *slot) *slot = t;
}

/* What makes a block line impossible on its own, or NULL. */
static const char *block_line_impossible(const EmcBlock *eb) {
  uint64_t difficulty;
  if (emc_hash_id(&eb->hash) == OBS_GENESIS_ID)
    return "BlockHash: its first 8 bytes are zero (the genesis's id here)";
  if (eb->number == 0) return "Number: 0 is the genesis, which no node receives as a block";
  if (emc_u256_to_u64(&eb->difficulty, &difficulty) && difficulty == 0)
    return "Difficulty: 0 (a proof-of-work or Clique block has at least 1)";
  if (memcmp(&eb->hash, &eb->parent, sizeof eb->hash) == 0) return "ParentHash: the block is its own parent";
  for (uint32_t k = 0; k < eb->n_uncles; k++) {
    if (memcmp(&eb->uncles[k], &eb->hash, sizeof eb->hash) == 0)
      return "ListOfUncles: the block lists itself";
    if (memcmp(&eb->uncles[k], &eb->parent, sizeof eb->hash) == 0)
      return "ListOfUncles: the block lists its parent";
  }
  return NULL;
}

static gboolean on_block(Replay *r, guint v, EmcReader *rd, const EmcRecord *rec, GError **error) {
  const EmcBlock *eb = &rec->u.block;
  const char *file = emc_reader_file(rd);
  guint64 line = emc_reader_line(rd);
  const char *why = block_line_impossible(eb);
  if (why) return line_problem(r, 1, error, "%s:%" G_GUINT64_FORMAT ": %s", file, line, why);
  uint64_t id = emc_hash_id(&eb->hash);
  RBlock *b = g_hash_table_lookup(r->blocks, &id);
  /* The first line of a block is the one used: a later one that disagrees on where the block is in the chain
   * is inconsistent (which of the two is wrong, the chain may tell: see drop_inconsistent()). */
  if (b && b->number != eb->number)
    return line_problem(r, 1, error,
                        "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                        " differs from the same block's first line (%s:%" G_GUINT64_FORMAT
                        ": %" G_GUINT64_FORMAT ")",
                        file, line, eb->number, b->file, b->line, b->number);
  if (b && b->b.parent != emc_hash_id(&eb->parent))
    return line_problem(r, 1, error,
                        "%s:%" G_GUINT64_FORMAT
                        ": ParentHash differs from the same block's first line (%s:%" G_GUINT64_FORMAT ")",
                        file, line, b->file, b->line);
  if (!b) {
    b = g_new0(RBlock, 1);
    b->b.id = id;
    b->file = g_string_chunk_insert_const(r->files, file);
    b->line = line;
    b->b.parent = emc_hash_id(&eb->parent);
    b->number = eb->number;
    b->coinbase = emc_address_id(&eb->coinbase);
    b->b.timestamp_s = (int64_t)eb->time_s;
    b->b.mined_ns = (int64_t)eb->time_s * 1000000000;
    b->b.difficulty = u256_double(&eb->difficulty);
    b->b.gas_used = eb->gas_used;
    b->b.size_bytes = (uint32_t)MIN(eb->size_bytes, UINT32_MAX);
    b->b.n_tx = eb->n_txs;
    b->b.empty = eb->n_txs == 0;
    b->n_txs = eb->n_txs;
    b->txs = g_new(uint64_t, MAX(eb->n_txs, 1));
    uint64_t set = UINT64_C(0x9e3779b97f4a7c15);
    for (uint32_t k = 0; k < eb->n_txs; k++) {
      b->txs[k] = emc_hash_id(&eb->txs[k]);
      set = (set ^ b->txs[k]) * UINT64_C(0x100000001b3);
    }
    b->b.txset = set | 1;
    b->b.n_uncles = MIN(eb->n_uncles, OBS_MAX_UNCLES);
    for (uint32_t k = 0; k < b->b.n_uncles; k++) b->b.uncles[k] = emc_hash_id(&eb->uncles[k]);
    b->msg_ns = g_new(int64_t, r->nv);
    b->ann_ns = g_new(int64_t, r->nv);
    for (guint k = 0; k < r->nv; k++) b->msg_ns[k] = b->ann_ns[k] = OBS_TIME_NONE;
    b->order = r->next_order++;
    g_hash_table_insert(r->blocks, &b->b.id, b);
  }
  b->n_lines++;
  if (b->msg_ns[v] == OBS_TIME_NONE) {
    VNum vn = {.number = eb->number, .id = id, .line = line, .file = g_string_chunk_insert_const(r->files, file)};
    g_array_append_val(r->vnums[v], vn);
  }
  keep_min(&b->msg_ns[v], eb->local_ns);
  return TRUE;
}

static gboolean on_announcement(Replay *r, guint v, EmcReader *rd, const EmcRecord *rec, GError **error) {
  (void)rd, (void)error;
  uint64_t id = emc_hash_id(&rec->u.announcement.hash);
  RBlock *b = g_hash_table_lookup(r->blocks, &id);
  if (b)
    keep_min(&b->ann_ns[v], rec->u.announcement.local_ns);
  else
    g_hash_table_add(r->announced_only, g_memdup2(&id, sizeof id));
  return TRUE;
}

static gboolean on_tx(Replay *r, guint v, EmcReader *rd, const EmcRecord *rec, GError **error) {
  (void)rd, (void)error;
  const EmcTx *et = &rec->u.tx;
  uint64_t id = emc_hash_id(&et->hash);
  RTx *t = g_hash_table_lookup(r->txs, &id);
  if (!t) {
    t = g_malloc0(sizeof(RTx) + sizeof(int64_t) * r->nv);
    t->rec = (ObsTx){.id = id, .sender = emc_address_id(&et->from), .nonce = et->nonce,
                     .created_ns = OBS_TIME_NONE, .type = (uint8_t)et->type, .gas_limit = et->gas_limit,
                     .gas_price_wei = u256_double(&et->gas_price_wei)};
    for (guint k = 0; k < r->nv; k++) t->recv[k] = OBS_TIME_NONE;
    g_hash_table_insert(r->txs, &t->rec.id, t);
  }
  keep_min(&t->recv[v], et->local_ns);
  return TRUE;
}

/* The order of a file's lines: logs are appended as messages arrive, so a line earlier than the line before
 * it is out of order (up to REORDER_MAX_NS; kept: every time used is a minimum, so order does not matter) or a
 * step back of the local clock (more; kept, its times cannot be corrected); two block lines far apart whose
 * local times advanced far more than their header Times are a step forward (kept). Both are fatal with
 * --strict. A line with the same hash and the same time as an earlier line of the same time is a
 * duplicate: skipped, never fatal (the real logs have some: the format cannot tell a repeated line from two
 * peers' messages in the same millisecond). FALSE with `error` (fatal); *skip for a duplicate. */
static gboolean check_order(Replay *r, guint v, EmcReader *rd, const EmcRecord *rec, gboolean *skip,
                            GError **error) {
  int64_t t, header_s = -1;
  const EmcHash *h;
  const char *what = "BlockHash";
  switch (rec->kind) {
  case EMC_KIND_BLOCK:
    t = rec->u.block.local_ns, h = &rec->u.block.hash, header_s = (int64_t)rec->u.block.time_s;
    break;
  case EMC_KIND_ANNOUNCEMENT:
    t = rec->u.announcement.local_ns, h = &rec->u.announcement.hash;
    break;
  case EMC_KIND_TX:
    t = rec->u.tx.local_ns, h = &rec->u.tx.hash, what = "Hash";
    break;
  default:
    return TRUE;
  }
  const char *file = emc_reader_file(rd);
  guint64 line = emc_reader_line(rd);
  *skip = FALSE;
  if (!r->ord_file || strcmp(r->ord_file, file) != 0) {
    r->ord_file = g_string_chunk_insert_const(r->files, file);
    r->ord_prev_ns = OBS_TIME_NONE;
  }
  int64_t prev = r->ord_prev_ns;
  if (prev == OBS_TIME_NONE || t != prev) g_hash_table_remove_all(r->same_ms);
  if (prev != OBS_TIME_NONE && t < prev) {
    double back = (double)(prev - t) / 1e9;
    if (prev - t <= REORDER_MAX_NS) {
      if (!anomaly(r, v, AN_REORDER, TRUE, error,
                   "%s:%" G_GUINT64_FORMAT ": LocalTimestamp %.3f s before line %" G_GUINT64_FORMAT
                   "'s: out of order (kept)", file, line, back, r->ord_prev_line))
        return FALSE;
    } else if (!anomaly(r, v, AN_STEP, TRUE, error,
                        "%s:%" G_GUINT64_FORMAT ": clock step back: LocalTimestamp %.3f s before line %"
                        G_GUINT64_FORMAT "'s (kept)", file, line, back, r->ord_prev_line))
      return FALSE;
  } else if (prev != OBS_TIME_NONE && header_s >= 0 && r->ord_prev_header_s >= 0 && t - prev > STEP_SILENCE_NS &&
             (double)(t - prev) - (double)(header_s - r->ord_prev_header_s) * 1e9 > (double)STEP_EXCESS_NS) {
    if (!anomaly(r, v, AN_STEP, TRUE, error,
                 "%s:%" G_GUINT64_FORMAT ": clock step forward: LocalTimestamp %.3f s after line %" G_GUINT64_FORMAT
                 "'s with no line between, while the header Time advanced %" G_GINT64_FORMAT " s (kept)",
                 file, line, (double)(t - prev) / 1e9, r->ord_prev_line, header_s - r->ord_prev_header_s))
      return FALSE;
  } else if (prev != OBS_TIME_NONE && t == prev) {
    uint64_t id = emc_hash_id(h);
    gpointer first;
    if (g_hash_table_lookup_extended(r->same_ms, &id, NULL, &first)) {
      *skip = TRUE;
      return anomaly(r, v, AN_DUP, FALSE, error,
                     "%s:%" G_GUINT64_FORMAT ": duplicate of line %" G_GUINT64_FORMAT " (same %s and LocalTimestamp): skipped",
                     file, line, (guint64)GPOINTER_TO_SIZE(first), what);
    }
  }
  if (g_hash_table_size(r->same_ms) < 100000) {
    uint64_t id = emc_hash_id(h);
    if (!g_hash_table_contains(r->same_ms, &id))
      g_hash_table_insert(r->same_ms, g_memdup2(&id, sizeof id), GSIZE_TO_POINTER((gsize)line));
  }
  r->ord_prev_ns = t;
  r->ord_prev_line = line;
  r->ord_prev_header_s = header_s;
  return TRUE;
}

/* Reads every record of `kind` in vantage point v's directory into `fn` (a missing file is no error). */
typedef gboolean (*RecordFn)(Replay *r, guint v, EmcReader *rd, const EmcRecord *rec, GError **error);

static gboolean read_kind(Replay *r, guint v, const EmcDir *d, EmcKind kind, RecordFn fn, GError **error) {
  GError *e = NULL;
  g_autoptr(EmcReader) rd = open_kind(r, d, kind, &e);
  if (e) {
    g_propagate_error(error, e);
    return FALSE;
  }
  if (!rd) return TRUE;
  EmcRecord rec;
  r->ord_file = NULL;
  while (emc_reader_next(rd, &rec, &e)) {
    gboolean skip = FALSE;
    if (!check_order(r, v, rd, &rec, &skip, error)) return FALSE;
    if (!skip && !fn(r, v, rd, &rec, error)) return FALSE;
  }
  if (e) {
    input_error(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  report_bad(r, rd, kind);
  return TRUE;
}

/* Why `text` cannot be a name in summary.json and the CSVs, or NULL: jansson refuses strings that are not
 * UTF-8 (the key or entry would silently go missing), and a control character breaks line-based reading. */
static const char *bad_text(const char *text) {
  if (!g_utf8_validate(text, -1, NULL)) return "not valid UTF-8";
  for (const char *c = text; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) return "has a control character";
  return NULL;
}

/* The address map: a CSV with a header naming `address` and a pool name column (`name`, else the study's
 * `name_in_dsn2020_scripts`, else the second column). An empty name maps nothing (the study's map leaves the
 * names of pools its scripts did not know empty). */
static gboolean read_pools(Replay *r, const char *path, GError **error) {
  gsize len = 0;
  GError *e = NULL;
  g_autofree char *data = sim_input_read_file(path, 0, &len, NULL, &e);
  if (!data) {
    input_error(error, "%s: %s", path, e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autoptr(SimCsvReader) f = sim_csv_reader_new(data, len, SIM_CSV_DEFAULT);
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
  int addr_col = -1, name_col = -1;
  gboolean ok = TRUE;
  if (sim_csv_reader_next(f, fields, &e) <= 0) {
    input_error(error, "%s:%s %s", path, e ? "1:" : "", e ? e->message : "empty file (expected a header with 'address')");
    g_clear_error(&e);
    return FALSE;
  }
  for (guint i = 0; i < fields->len; i++) {
    const char *h = g_ptr_array_index(fields, i);
    if (strcmp(h, "address") == 0) addr_col = (int)i;
    if (strcmp(h, "name") == 0) name_col = (int)i;
  }
  for (guint i = 0; i < fields->len && name_col < 0; i++)
    if (strcmp(g_ptr_array_index(fields, i), "name_in_dsn2020_scripts") == 0) name_col = (int)i;
  if (name_col < 0 && fields->len >= 2) name_col = addr_col == 1 ? 0 : 1;
  if (addr_col < 0 || name_col < 0) {
    input_error(error, "%s:1: the header needs an 'address' column and a pool name column", path);
    return FALSE;
  }
  guint start = 0; /* the line a record starts on (a quoted field may span lines) */
  while (ok && sim_csv_reader_next(f, fields, &e) > 0) {
    start = sim_csv_reader_line(f);
    if (fields->len == 1 && !*(const char *)g_ptr_array_index(fields, 0)) continue;
    if ((int)fields->len <= MAX(addr_col, name_col)) {
      input_error(error, "%s:%u: %u fields, expected at least %d", path, start, fields->len,
                  MAX(addr_col, name_col) + 1);
      ok = FALSE;
      break;
    }
    EmcAddress a;
    const char *text = g_ptr_array_index(fields, addr_col);
    if (!emc_address_parse(text, strlen(text), &a)) {
      input_error(error, "%s:%u: not an address: '%s'", path, start, text);
      ok = FALSE;
      break;
    }
    uint64_t id = emc_address_id(&a);
    const char *pname = g_ptr_array_index(fields, name_col), *had = g_hash_table_lookup(r->pool_of, &id);
    const char *why = bad_text(pname);
    if (why) {
      input_error(error, "%s:%u: pool name %s", path, start, why);
      ok = FALSE;
      break;
    }
    if (!*pname) continue;
    /* One address in two pools: which one mined its blocks would depend on the order of the lines. */
    if (had && strcmp(had, pname) != 0) {
      input_error(error, "%s:%u: address %s is already mapped to pool '%s'", path, start, text, had);
      ok = FALSE;
      break;
    }
    uint64_t *key = g_new(uint64_t, 1);
    *key = id;
    g_hash_table_replace(r->pool_of, key, g_strdup(pname));
    guint j = 0;
    while (j < r->pool_order->len && strcmp(g_ptr_array_index(r->pool_order, j), pname) != 0) j++;
    if (j == r->pool_order->len) g_ptr_array_add(r->pool_order, g_strdup(pname));
  }
  if (ok && e) {
    input_error(error, "%s:%u: %s", path, sim_csv_reader_line(f), e->message);
    ok = FALSE;
  }
  g_clear_error(&e);
  return ok;
}

static void place(Replay *r, RBlock *b) {
  b->b.height = (uint32_t)(b->number - r->min_number + 1);
  b->placed = TRUE;
  g_ptr_array_add(r->placed, b);
  if (!g_hash_table_contains(r->at_number, &b->number)) g_hash_table_insert(r->at_number, &b->number, b);
}

/* A node logs only the blocks it received as block messages; ancestors it got by syncing never appear. A
 * missing ancestor is stood for by a placeholder (no miner, no transactions, its child's difficulty and
 * time), whose parent is the first block placed one number below, or another placeholder. */
static RBlock *placeholder(Replay *r, uint64_t id, uint64_t number, const RBlock *child) {
  RBlock *x = g_new0(RBlock, 1);
  x->b.id = id;
  x->number = number;
  x->placeholder = TRUE;
  x->b.miner = OBS_MINER_NONE;
  x->b.difficulty = child->b.difficulty;
  x->b.mined_ns = child->b.mined_ns;
  x->b.timestamp_s = child->b.timestamp_s;
  x->msg_ns = g_new(int64_t, r->nv);
  x->ann_ns = g_new(int64_t, r->nv);
  for (guint k = 0; k < r->nv; k++) x->msg_ns[k] = x->ann_ns[k] = OBS_TIME_NONE;
  x->order = r->next_order++;
  g_hash_table_insert(r->blocks, &x->b.id, x);
  r->placeholders++;
  if (number == r->min_number) {
    x->b.parent = OBS_GENESIS_ID;
  } else {
    RBlock *below = g_hash_table_lookup(r->at_number, &(uint64_t){number - 1});
    if (!below) {
      uint64_t pid = sim_mix64(id) | 1;
      below = g_hash_table_lookup(r->blocks, &pid);
      if (!below) below = placeholder(r, pid, number - 1, x);
    }
    x->b.parent = below->b.id;
  }
  place(r, x);
  return x;
}

/* A child is one number above its parent: where a logged block and its logged parent say otherwise, one of
 * the two Numbers is wrong. A damaged Number contradicts every neighbour the block has in the logs, a good
 * one only the damaged neighbour, so the block with more contradictions than agreements (the larger
 * difference; the child on a tie, when nothing tells them apart) is taken out of the chain with all its
 * lines, reported at its first line; its children then stand on a placeholder. `order` holds every logged
 * block. */
static gboolean drop_inconsistent(Replay *r, GPtrArray *order, GError **error) {
  guint n = r->next_order;
  /* By RBlock.order: contradictions minus agreements; the neighbour it contradicts, if it is blamed. */
  g_autofree int *score = g_new0(int, MAX(n, 1));
  g_autofree RBlock **blamed_by = g_new0(RBlock *, MAX(n, 1));
  g_autofree gboolean *as_parent = g_new0(gboolean, MAX(n, 1)); /* blamed as the parent of blamed_by */
  g_autofree gboolean *to_genesis = g_new0(gboolean, MAX(n, 1));
  g_autofree RBlock **by_order = g_new0(RBlock *, MAX(n, 1));
  for (guint i = 0; i < order->len; i++) {
    RBlock *x = g_ptr_array_index(order, i);
    by_order[x->order] = x;
    RBlock *p = x->b.parent == OBS_GENESIS_ID ? NULL : g_hash_table_lookup(r->blocks, &x->b.parent);
    if (!p) continue;
    int d = p->number + 1 == x->number ? -1 : 1;
    score[x->order] += d;
    score[p->order] += d;
  }
  for (guint i = 0; i < order->len; i++) {
    RBlock *x = g_ptr_array_index(order, i);
    if (x->b.parent == OBS_GENESIS_ID) {
      if (x->number != 1 && !blamed_by[x->order]) blamed_by[x->order] = x, to_genesis[x->order] = TRUE;
      continue;
    }
    RBlock *p = g_hash_table_lookup(r->blocks, &x->b.parent);
    if (!p || p->number + 1 == x->number) continue;
    gboolean parent = score[p->order] > score[x->order];
    RBlock *guilty = parent ? p : x;
    if (blamed_by[guilty->order]) continue;
    blamed_by[guilty->order] = parent ? x : p;
    as_parent[guilty->order] = parent;
  }
  /* Reported in the order the lines were read. */
  for (guint k = 0; k < n; k++) {
    RBlock *b = by_order[k];
    if (!b || !blamed_by[k]) continue;
    g_autofree char *left = r->opt->strict ? g_strdup("")
                                           : g_strdup_printf(": block left out (%u line%s)", b->n_lines,
                                                             b->n_lines == 1 ? "" : "s");
    const RBlock *o = blamed_by[k];
    gboolean ok;
    if (to_genesis[k])
      ok = line_problem(r, b->n_lines, error,
                        "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                        " is not 1, but ParentHash is the genesis's (its first 8 bytes are zero)%s",
                        b->file, b->line, b->number, left);
    else
      ok = line_problem(r, b->n_lines, error,
                        "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                        " does not %s its %s's (%" G_GUINT64_FORMAT " at %s:%" G_GUINT64_FORMAT ")%s",
                        b->file, b->line, b->number, as_parent[k] ? "precede" : "follow",
                        as_parent[k] ? "child" : "parent", o->number, o->file, o->line, left);
    if (!ok) return FALSE;
    r->detached++;
  }
  /* Out of the chain: kept (owned by `dropped`) for the order of the logged blocks, never found by id. */
  for (guint i = 0; i < order->len; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (!blamed_by[b->order]) continue;
    g_hash_table_steal(r->blocks, &b->b.id);
    g_ptr_array_add(r->dropped, b);
  }
  return TRUE;
}

static gint cmp_vnum(gconstpointer pa, gconstpointer pb) {
  const VNum *a = pa, *b = pb;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  if (a->file != b->file) return strcmp(a->file, b->file);
  return a->line < b->line ? -1 : a->line > b->line;
}

/* Heights missing in each vantage point's chain: its logged block Numbers (blocks left out as inconsistent
 * aside), where one is more than 1 above the one before. Reported at the first line of the block above the
 * gap; never fatal: a node logs only the blocks it received as block messages, so real logs have gaps
 * wherever it synced (the Rinkeby logs do). */
static void find_gaps(Replay *r) {
  for (guint v = 0; v < r->nv; v++) {
    GArray *a = r->vnums[v];
    g_array_sort(a, cmp_vnum);
    const char *where = NULL;
    uint64_t prev = 0;
    gboolean any = FALSE;
    for (guint i = 0; i < a->len; i++) {
      const VNum *x = &g_array_index(a, VNum, i);
      const RBlock *b = g_hash_table_lookup(r->blocks, &x->id);
      if (!b || b->placeholder || b->number != x->number) continue; /* left out as inconsistent */
      if (!where) where = x->file;
      if (any && x->number > prev + 1) {
        uint64_t missing = x->number - prev - 1;
        anomaly(r, v, AN_GAP, FALSE, NULL,
                "%s:%" G_GUINT64_FORMAT ": gap: Number %" G_GUINT64_FORMAT " follows %" G_GUINT64_FORMAT
                " in this vantage point's blocks (%" G_GUINT64_FORMAT " height%s missing)",
                x->file, x->line, x->number, prev, missing, missing == 1 ? "" : "s");
        r->gap_heights += missing;
        r->vgap_heights[v] += missing;
      }
      prev = x->number;
      any = TRUE;
    }
    flush_anomalies(r, where ? where : "");
  }
}

static gint cmp_u64(gconstpointer a, gconstpointer b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static gint cmp_rblock(gconstpointer pa, gconstpointer pb) {
  const RBlock *a = *(RBlock *const *)pa, *b = *(RBlock *const *)pb;
  if (a->number != b->number) return a->number < b->number ? -1 : 1;
  return a->order < b->order ? -1 : a->order > b->order;
}

typedef gboolean (*WriteFn)(gconstpointer obj, FILE *out);

static gboolean write_file(SimOutDir *out, const char *name, WriteFn fn, gconstpointer obj, GError **error) {
  GError *e = NULL;
  FILE *f = sim_outdir_create(out, name, &e);
  if (!f || !fn(obj, f)) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, "cannot write %s/%s%s%s", sim_outdir_path(out),
                name, e ? ": " : "", e ? e->message : "");
    g_clear_error(&e);
    return FALSE;
  }
  return TRUE;
}

static gboolean w_blocks(gconstpointer c, FILE *f) { return an_chain_write_blocks_csv(c, f); }
static gboolean w_pools(gconstpointer c, FILE *f) { return an_chain_write_pools_csv(c, f); }
static gboolean w_runs(gconstpointer c, FILE *f) { return an_chain_write_runs_csv(c, f); }
static gboolean w_commit(gconstpointer t, FILE *f) { return an_tx_write_commit_csv(t, f); }
static gboolean w_samples(gconstpointer t, FILE *f) { return an_tx_write_commit_samples_csv(t, f); }

typedef struct {
  const AnProp *prop;
  const AnChain *chain;
} PropCtx;
static gboolean w_obs(gconstpointer p, FILE *f) {
  const PropCtx *c = p;
  return an_prop_write_observations_csv(c->prop, c->chain, f);
}

struct SimReplayData {
  Replay r;
  guint nv;
  char **names;          /* owned, NULL-terminated */
  char **dirs;           /* owned, NULL-terminated */
  GPtrArray *order;      /* RBlock *: the logged blocks (placed or detached) by number, then first seen */
  GPtrArray *logged;     /* RBlock *: the placed ones of `order` */
  GPtrArray *txs_sorted; /* RTx * by id */
  AnChain *chain;
  SimReplayCounts counts;
};

static void replay_clear(Replay *r) {
  if (r->at_number) g_hash_table_unref(r->at_number);
  if (r->placed) g_ptr_array_unref(r->placed);
  if (r->blocks) g_hash_table_unref(r->blocks);
  if (r->txs) g_hash_table_unref(r->txs);
  if (r->pool_of) g_hash_table_unref(r->pool_of);
  if (r->pool_order) g_ptr_array_unref(r->pool_order);
  if (r->announced_only) g_hash_table_unref(r->announced_only);
  if (r->dropped) g_ptr_array_unref(r->dropped);
  if (r->problem_msgs) g_ptr_array_unref(r->problem_msgs);
  if (r->anom_msgs) g_ptr_array_unref(r->anom_msgs);
  if (r->same_ms) g_hash_table_unref(r->same_ms);
  for (guint v = 0; r->vnums && v < r->nv; v++)
    if (r->vnums[v]) g_array_unref(r->vnums[v]);
  g_free(r->vnums);
  g_free(r->vanom);
  g_free(r->vgap_heights);
  if (r->files) g_string_chunk_free(r->files);
  memset(r, 0, sizeof *r);
}

void sim_replay_data_free(SimReplayData *d) {
  if (!d) return;
  an_chain_free(d->chain);
  if (d->txs_sorted) g_ptr_array_unref(d->txs_sorted);
  if (d->logged) g_ptr_array_unref(d->logged);
  if (d->order) g_ptr_array_unref(d->order);
  replay_clear(&d->r);
  g_strfreev(d->names);
  g_strfreev(d->dirs);
  g_free(d);
}

SimReplayData *sim_replay_load(const SimReplayOptions *opt, GError **error) {
  g_return_val_if_fail(opt && opt->n_vantages > 0, NULL);
  GError *e = NULL;
  g_autoptr(SimReplayData) d = g_new0(SimReplayData, 1);
  Replay *rp = &d->r;
  *rp = (Replay){.opt = opt, .nv = opt->n_vantages};
  d->nv = opt->n_vantages;
  rp->blocks = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, rblock_free);
  rp->txs = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
  rp->pool_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  rp->pool_order = g_ptr_array_new_with_free_func(g_free);
  rp->announced_only = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  rp->files = g_string_chunk_new(256);
  rp->dropped = g_ptr_array_new_with_free_func(rblock_free);
  rp->problem_msgs = g_ptr_array_new_with_free_func(g_free);
  rp->anom_msgs = g_ptr_array_new_with_free_func(g_free);
  rp->same_ms = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  rp->vanom = g_new0(guint64, (gsize)opt->n_vantages * AN_N);
  rp->vgap_heights = g_new0(guint64, opt->n_vantages);
  rp->vnums = g_new0(GArray *, opt->n_vantages);
  for (guint v = 0; v < opt->n_vantages; v++) rp->vnums[v] = g_array_new(FALSE, FALSE, sizeof(VNum));
  gboolean ok = TRUE;
  d->names = g_new0(char *, opt->n_vantages + 1);
  d->dirs = g_new0(char *, opt->n_vantages + 1);
  char **names = d->names;
  /* Names and paths go into summary.json: jansson would leave out what is not UTF-8, without a word. */
  for (guint v = 0; ok && v < opt->n_vantages; v++) {
    const char *why = bad_text(opt->dirs[v]);
    if (why) {
      input_error(error, "%s: path %s (summary.json records it)", opt->dirs[v], why);
      ok = FALSE;
      break;
    }
    d->dirs[v] = g_strdup(opt->dirs[v]);
    names[v] = opt->names && opt->names[v] ? g_strdup(opt->names[v]) : g_path_get_basename(opt->dirs[v]);
    if ((why = bad_text(names[v]))) {
      input_error(error, "vantage point name '%s' %s", names[v], why);
      ok = FALSE;
    }
    for (guint w = 0; w < v && ok; w++)
      if (strcmp(names[v], names[w]) == 0) {
        input_error(error, "two vantage points are named '%s' (name them with --vantage NAME=DIR)", names[v]);
        ok = FALSE;
      }
  }
  const char *why = ok && opt->pools_csv ? bad_text(opt->pools_csv) : NULL;
  if (why) {
    input_error(error, "%s: path %s (summary.json records it)", opt->pools_csv, why);
    ok = FALSE;
  }
  if (ok && opt->pools_csv) ok = read_pools(rp, opt->pools_csv, error);
  /* Blocks of every vantage point first, then what refers to them. */
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func((GDestroyNotify)emc_dir_free);
  for (guint v = 0; ok && v < opt->n_vantages; v++) {
    EmcDir *ed = emc_dir_open(opt->dirs[v], &e);
    if (!ed) {
      input_error(error, "%s", e->message);
      g_clear_error(&e);
      ok = FALSE;
      break;
    }
    g_ptr_array_add(dirs, ed);
    const char *const *bf = emc_dir_files(ed, EMC_KIND_BLOCK);
    if (!bf || !bf[0]) {
      input_error(error, "%s: no block log (NewBlockMsg.log or blocks.log) in it", opt->dirs[v]);
      ok = FALSE;
    }
  }
  /* Blocks of every vantage point first: announcements and transactions refer to them. */
  static const EmcKind kinds[] = {EMC_KIND_BLOCK, EMC_KIND_ANNOUNCEMENT, EMC_KIND_TX};
  const RecordFn handlers[] = {on_block, on_announcement, on_tx};
  for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
    for (guint v = 0; ok && v < opt->n_vantages && !(kinds[k] == EMC_KIND_TX && opt->skip_txs); v++)
      ok = read_kind(rp, v, g_ptr_array_index(dirs, v), kinds[k], handlers[k], error);
  if (ok && g_hash_table_size(rp->blocks) == 0) {
    guint64 bad = rp->bad_lines[EMC_KIND_BLOCK] + rp->problem_lines;
    input_error(error, "no block in the logs%s", bad ? " (every block line is bad: see above)" : "");
    ok = FALSE;
  }
  if (!ok) return NULL;

  /* Place the blocks: heights from the lowest number seen, parents that were seen, once the blocks whose
   * Number contradicts the chain are out. */
  d->order = g_ptr_array_new();
  GPtrArray *order = d->order;
  GHashTableIter it;
  gpointer k, val;
  g_hash_table_iter_init(&it, rp->blocks);
  while (g_hash_table_iter_next(&it, &k, &val)) g_ptr_array_add(order, val);
  g_ptr_array_sort(order, cmp_rblock);
  if (!drop_inconsistent(rp, order, error)) return NULL;
  flush_problems(rp, NULL, "blocks in all left out as inconsistent with their neighbours");
  find_gaps(rp);
  uint64_t min_number = 0;
  for (guint i = 0; i < order->len && !min_number; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (g_hash_table_lookup(rp->blocks, &b->b.id) == b) min_number = b->number;
  }
  rp->min_number = min_number;
  rp->at_number = g_hash_table_new(g_int64_hash, g_int64_equal);
  rp->placed = g_ptr_array_new();
  /* Miners: one per coinbase, in first-seen order of the placed blocks; pools by name. */
  g_autoptr(GHashTable) miner_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GArray) miners = g_array_new(FALSE, TRUE, sizeof(AnMiner));
  g_autoptr(GPtrArray) pool_names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GArray) miner_blocks = g_array_new(FALSE, TRUE, sizeof(guint64));
  guint64 placed = 0;
  for (guint i = 0; i < order->len; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (g_hash_table_lookup(rp->blocks, &b->b.id) != b) continue; /* detached by drop_inconsistent() */
    if (b->number == min_number) {
      b->b.parent = OBS_GENESIS_ID;
    } else {
      RBlock *p = g_hash_table_lookup(rp->blocks, &b->b.parent);
      if (!p) p = placeholder(rp, b->b.parent, b->number - 1, b);
      /* drop_inconsistent() left only parents one number below, placed before their children */
      g_assert(p->placed && p->number + 1 == b->number);
    }
    place(rp, b);
    placed++;
    gpointer mi;
    if (!g_hash_table_lookup_extended(miner_of, &b->coinbase, NULL, &mi)) {
      const char *pool = g_hash_table_lookup(rp->pool_of, &b->coinbase);
      if (!pool) pool = "Others";
      guint g = 0;
      while (g < pool_names->len && strcmp(g_ptr_array_index(pool_names, g), pool) != 0) g++;
      if (g == pool_names->len) g_ptr_array_add(pool_names, g_strdup(pool));
      AnMiner m = {.group = g};
      g_array_append_val(miners, m);
      guint64 zero = 0;
      g_array_append_val(miner_blocks, zero);
      mi = GUINT_TO_POINTER(miners->len - 1);
      g_hash_table_insert(miner_of, g_memdup2(&b->coinbase, sizeof b->coinbase), mi);
    }
    b->b.miner = GPOINTER_TO_UINT(mi);
    g_array_index(miner_blocks, guint64, b->b.miner)++;
  }
  for (guint m = 0; m < miners->len; m++)
    g_array_index(miners, AnMiner, m).hash_share = (double)g_array_index(miner_blocks, guint64, m) / (double)placed;
  /* Report pools in the map's order (not in it: after, in first-seen order). */
  if (rp->pool_order->len) {
    g_autofree guint *rank = g_new(guint, MAX(pool_names->len, 1)), *remap = g_new(guint, MAX(pool_names->len, 1));
    for (guint g = 0; g < pool_names->len; g++) {
      const char *nm = g_ptr_array_index(pool_names, g);
      guint j = 0;
      while (j < rp->pool_order->len && strcmp(g_ptr_array_index(rp->pool_order, j), nm) != 0) j++;
      rank[g] = j < rp->pool_order->len ? j : rp->pool_order->len + g;
    }
    g_autoptr(GPtrArray) sorted = g_ptr_array_new_with_free_func(g_free);
    for (guint q = 0; q < pool_names->len; q++) {
      guint best = G_MAXUINT;
      for (guint g = 0; g < pool_names->len; g++)
        if (rank[g] != G_MAXUINT && (best == G_MAXUINT || rank[g] < rank[best])) best = g;
      remap[best] = q;
      rank[best] = G_MAXUINT;
      g_ptr_array_add(sorted, g_strdup(g_ptr_array_index(pool_names, best)));
    }
    for (guint m = 0; m < miners->len; m++) {
      AnMiner *am = &g_array_index(miners, AnMiner, m);
      am->group = remap[am->group];
    }
    g_ptr_array_set_size(pool_names, 0);
    for (guint g = 0; g < sorted->len; g++) g_ptr_array_add(pool_names, g_strdup(g_ptr_array_index(sorted, g)));
  }
  g_ptr_array_add(pool_names, NULL);
  guint n_pools = pool_names->len - 1;

  d->chain = an_chain_new((const AnMiner *)miners->data, miners->len, (const char *const *)pool_names->pdata, n_pools);
  for (guint i = 0; ok && i < rp->placed->len; i++) {
    RBlock *b = g_ptr_array_index(rp->placed, i);
    /* Uncles the logs never showed cannot be typed: dropped (counted). */
    guint kept = 0;
    for (guint u = 0; u < b->b.n_uncles; u++) {
      RBlock *ub = g_hash_table_lookup(rp->blocks, &b->b.uncles[u]);
      if (ub && ub->placed) b->b.uncles[kept++] = b->b.uncles[u];
      else rp->unknown_uncles++;
    }
    b->b.n_uncles = kept;
    ok = an_chain_add_block(d->chain, &b->b, &e);
  }
  AnChainParams ap = {.block_reward = opt->block_reward_eth > 0 ? opt->block_reward_eth : 2.0, .uncle_base = 8,
                      .nephew_divisor = 32, .max_height = opt->heights};
  if (ok) ok = an_chain_finalize(d->chain, &ap, &e);
  if (!ok) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, "the logs' blocks do not form a chain: %s",
                e->message);
    g_error_free(e);
    return NULL;
  }

  d->logged = g_ptr_array_new();
  for (guint i = 0; i < order->len; i++) {
    RBlock *b = g_ptr_array_index(order, i);
    if (!b->placed) continue;
    g_ptr_array_add(d->logged, b);
    for (uint32_t j = 0; j < b->n_txs; j++)
      if (!g_hash_table_contains(rp->txs, &b->txs[j])) rp->txs_only_in_blocks++;
  }
  d->txs_sorted = g_ptr_array_sized_new(g_hash_table_size(rp->txs));
  g_autoptr(GArray) tx_order = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  g_hash_table_iter_init(&it, rp->txs);
  while (g_hash_table_iter_next(&it, &k, &val)) g_array_append_val(tx_order, ((RTx *)val)->rec.id);
  g_array_sort(tx_order, cmp_u64);
  for (guint i = 0; i < tx_order->len; i++)
    g_ptr_array_add(d->txs_sorted, g_hash_table_lookup(rp->txs, &g_array_index(tx_order, uint64_t, i)));

  SimReplayCounts *c = &d->counts;
  c->block_lines = rp->lines[EMC_KIND_BLOCK];
  c->announcement_lines = rp->lines[EMC_KIND_ANNOUNCEMENT];
  c->tx_lines = rp->lines[EMC_KIND_TX];
  for (guint kk = 0; kk < EMC_N_KINDS; kk++) c->bad_lines += rp->bad_lines[kk];
  c->bad_lines += rp->problem_lines;
  c->blocks = g_hash_table_size(rp->blocks) - rp->placeholders;
  c->first_number = min_number;
  c->detached_blocks = rp->detached;
  c->placeholder_blocks = rp->placeholders;
  c->announced_only = g_hash_table_size(rp->announced_only);
  c->unknown_uncles = rp->unknown_uncles;
  c->txs = g_hash_table_size(rp->txs);
  c->txs_only_in_blocks = rp->txs_only_in_blocks;
  c->duplicates = rp->anom[AN_DUP];
  c->reordered = rp->anom[AN_REORDER];
  c->clock_steps = rp->anom[AN_STEP];
  c->gaps = rp->anom[AN_GAP];
  c->gap_heights = rp->gap_heights;
  rp->opt = NULL; /* the caller's options are not kept */
  return g_steal_pointer(&d);
}

guint sim_replay_data_n_vantages(const SimReplayData *d) { return d->nv; }
const char *const *sim_replay_data_vantage_names(const SimReplayData *d) { return (const char *const *)d->names; }
const char *sim_replay_data_vantage_dir(const SimReplayData *d, guint v) {
  g_return_val_if_fail(v < d->nv, NULL);
  return d->dirs[v];
}
const SimReplayCounts *sim_replay_data_counts(const SimReplayData *d) { return &d->counts; }
const AnChain *sim_replay_data_chain(const SimReplayData *d) { return d->chain; }
const SimReplayBlock *const *sim_replay_data_blocks(const SimReplayData *d, guint *n) {
  if (n) *n = d->logged->len;
  return (const SimReplayBlock *const *)d->logged->pdata;
}
const SimReplayBlock *sim_replay_data_block(const SimReplayData *d, uint64_t id) {
  return g_hash_table_lookup(d->r.blocks, &id);
}
const char *sim_replay_data_pool_of(const SimReplayData *d, uint64_t coinbase) {
  return g_hash_table_lookup(d->r.pool_of, &coinbase);
}
const SimReplayTx *const *sim_replay_data_txs(const SimReplayData *d, guint *n) {
  if (n) *n = d->txs_sorted->len;
  return (const SimReplayTx *const *)d->txs_sorted->pdata;
}

gboolean sim_replay(const SimReplayOptions *opt, json_t **summary_out, GError **error) {
  g_return_val_if_fail(opt && opt->n_vantages > 0, FALSE);
  const char *dir = opt->out_dir ? opt->out_dir : "results/replay";
  GError *e = NULL;
  g_autoptr(SimOutDir) out = sim_outdir_open(dir, "replay", &e);
  if (!out) {
    input_error(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autoptr(SimReplayData) d = sim_replay_load(opt, error);
  if (!d) return FALSE;
  const Replay *r = &d->r;
  const char *const *names = sim_replay_data_vantage_names(d);
  const AnChain *chain = d->chain;
  gboolean ok = TRUE;

  /* Propagation: every placed block's sightings. */
  g_autoptr(AnProp) prop = an_prop_new(names, d->nv);
  for (guint i = 0; ok && i < d->logged->len; i++) {
    const RBlock *b = g_ptr_array_index(d->logged, i);
    for (guint v = 0; ok && v < d->nv; v++) {
      if (b->msg_ns[v] == OBS_TIME_NONE && b->ann_ns[v] == OBS_TIME_NONE) continue;
      ObsSighting s = {.block = b->b.id, .vantage = v, .block_msg_ns = b->msg_ns[v], .announce_ns = b->ann_ns[v]};
      ok = an_prop_add(prop, &s, &e);
    }
  }
  if (ok) ok = an_prop_finalize(prop, chain, &e);

  /* Transactions: receptions, inclusions, then the main chain. */
  g_autoptr(AnTx) antx = an_tx_new(names, d->nv);
  for (guint i = 0; ok && i < d->txs_sorted->len; i++) {
    const RTx *t = g_ptr_array_index(d->txs_sorted, i);
    ok = an_tx_add_tx(antx, &t->rec, &e);
    for (guint v = 0; ok && v < d->nv; v++) {
      if (t->recv[v] == OBS_TIME_NONE) continue;
      ObsTxSighting s = {.tx = t->rec.id, .vantage = v, .seen_ns = t->recv[v]};
      ok = an_tx_add_sighting(antx, &s, &e);
    }
  }
  for (guint i = 0; ok && i < d->logged->len; i++) {
    const RBlock *b = g_ptr_array_index(d->logged, i);
    for (uint32_t j = 0; ok && j < b->n_txs; j++) {
      if (!g_hash_table_contains(r->txs, &b->txs[j])) continue; /* counted in txs_only_in_blocks */
      ObsTxInclusion in = {.tx = b->txs[j], .block = b->b.id, .height = b->b.height};
      ok = an_tx_add_inclusion(antx, &in, &e);
    }
  }
  g_autofree int64_t **recv = g_new0(int64_t *, d->nv);
  uint32_t n_heights = 0;
  if (ok) {
    const AnChainSummary *cs = an_chain_summary(chain);
    n_heights = (uint32_t)cs->heights + 1;
    for (guint v = 0; v < d->nv; v++) {
      recv[v] = g_new(int64_t, n_heights);
      recv[v][0] = OBS_TIME_NONE;
      for (uint32_t h = 1; h < n_heights; h++) {
        const ObsBlock *mb = an_chain_main_block(chain, h);
        const RBlock *b = mb ? g_hash_table_lookup(r->blocks, &mb->id) : NULL;
        int64_t a = b ? b->msg_ns[v] : OBS_TIME_NONE, c = b ? b->ann_ns[v] : OBS_TIME_NONE;
        recv[v][h] = MIN(a, c);
      }
    }
    ok = an_tx_add_main_chain(antx, chain, opt->heights, (const int64_t *const *)recv, n_heights, &e);
  }
  for (guint v = 0; v < d->nv; v++) g_free(recv[v]);
  if (ok) an_tx_finalize(antx);
  if (!ok) {
    g_set_error(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, "analysis failed: %s", e->message);
    g_error_free(e);
    return FALSE;
  }

  const SimReplayCounts *c = &d->counts;
  g_autoptr(json_t) summary = json_object();
  json_t *doc = json_object();
  json_t *vs = json_array();
  for (guint v = 0; v < d->nv; v++)
    json_array_append_new(vs, json_pack("{s:s, s:s}", "name", names[v], "dir", opt->dirs[v]));
  json_object_set_new(doc, "vantage_points", vs);
  if (opt->pools_csv) json_object_set_new(doc, "pools_csv", json_string(opt->pools_csv));
  json_object_set_new(doc, "strict", json_boolean(opt->strict));
  json_object_set_new(summary, "header", sim_output_header(0, 1, opt->argc, opt->argv, NULL, NULL));
  json_object_set_new(json_object_get(summary, "header"), "replay", doc);
  json_t *rp = json_object();
  json_object_set_new(rp, "block_lines", json_integer((json_int_t)c->block_lines));
  json_object_set_new(rp, "announcement_lines", json_integer((json_int_t)c->announcement_lines));
  json_object_set_new(rp, "tx_lines", json_integer((json_int_t)c->tx_lines));
  json_object_set_new(rp, "bad_lines", json_integer((json_int_t)c->bad_lines));
  json_object_set_new(rp, "blocks", json_integer((json_int_t)c->blocks));
  json_object_set_new(rp, "first_number", json_integer((json_int_t)c->first_number));
  json_object_set_new(rp, "detached_blocks", json_integer((json_int_t)c->detached_blocks));
  json_object_set_new(rp, "placeholder_blocks", json_integer((json_int_t)c->placeholder_blocks));
  json_object_set_new(rp, "announced_only", json_integer((json_int_t)c->announced_only));
  json_object_set_new(rp, "unknown_uncles", json_integer((json_int_t)c->unknown_uncles));
  json_object_set_new(rp, "txs", json_integer((json_int_t)c->txs));
  json_object_set_new(rp, "txs_only_in_blocks", json_integer((json_int_t)c->txs_only_in_blocks));
  for (int k = 0; k < AN_N; k++) json_object_set_new(rp, an_key[k], json_integer((json_int_t)r->anom[k]));
  json_object_set_new(rp, "gap_heights", json_integer((json_int_t)r->gap_heights));
  json_t *byv = json_array();
  for (guint v = 0; v < d->nv; v++) {
    json_t *o = json_pack("{s:s}", "name", names[v]);
    for (int k = 0; k < AN_N; k++)
      json_object_set_new(o, an_key[k], json_integer((json_int_t)r->vanom[v * AN_N + k]));
    json_object_set_new(o, "gap_heights", json_integer((json_int_t)r->vgap_heights[v]));
    json_array_append_new(byv, o);
  }
  json_object_set_new(rp, "by_vantage", byv);
  json_object_set_new(rp, "peak_rss_bytes", json_integer((json_int_t)sim_peak_rss_bytes()));
  json_object_set_new(summary, "replay", rp);
  an_chain_add_json(chain, summary);
  an_prop_add_json(prop, summary);
  an_tx_add_json(antx, summary);
  PropCtx pc = {prop, chain};
  ok = sim_outdir_write_json(out, "summary.json", summary, &e) && write_file(out, "blocks.csv", w_blocks, chain, error) &&
       write_file(out, "pools.csv", w_pools, chain, error) && write_file(out, "runs.csv", w_runs, chain, error) &&
       write_file(out, "observations.csv", w_obs, &pc, error) &&
       write_file(out, "tx_commit.csv", w_commit, antx, error) &&
       write_file(out, "tx_commit_samples.csv", w_samples, antx, error) && sim_outdir_commit(out, &e);
  if (!ok && e) {
    g_set_error_literal(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_RUNTIME, e->message);
    g_error_free(e);
  }
  if (ok && summary_out) *summary_out = g_steal_pointer(&summary);
  return ok;
}
