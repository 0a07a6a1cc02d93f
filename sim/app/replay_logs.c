/* replay_logs.c: reading measured EMC logs for a replay: every vantage point's block, announcement and
 * transaction lines into the replay's tables, the checks of their order and content (bad lines, duplicates,
 * clock steps), the warnings they give, and the pool map. */
#include "replay-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "input.h"
#include "rng.h"
#include "util.h"

static const char *const an_all[AN_N] = {"duplicate lines in all (skipped)", "lines out of order in all (kept)",
                                         "clock steps in all (lines kept)", "gaps in all"};
/* A line up to this much earlier than the line before it is out of order; more is a step back of the clock. */
#define REORDER_MAX_NS INT64_C(1000000000)
/* Two consecutive block lines more than STEP_SILENCE_NS apart whose local times advanced more than
 * STEP_EXCESS_NS beyond their header Times: a step forward of the local clock. */
#define STEP_SILENCE_NS INT64_C(60000000000)
#define STEP_EXCESS_NS INT64_C(30000000000)

void sim_replay_rblock_free(gpointer p) {
  RBlock *b = p;
  g_free(b->txs);
  g_free(b->msg_ns);
  g_free(b->ann_ns);
  g_free(b);
}

void sim_replay_input_error(GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, SIM_REPLAY_ERROR, SIM_REPLAY_ERROR_INPUT, msg);
}

/* A line that parses but cannot be right is a bad line too: with --strict the first is fatal (FALSE with
 * `error`); else it is counted (`n_lines`: a detached block takes all its lines with it) and the first few
 * messages are kept for sim_replay_flush_problems(). */
gboolean sim_replay_line_problem(Replay *r, guint n_lines, GError **error, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (r->opt->strict) {
    sim_replay_input_error(error, "%s", msg);
    return FALSE;
  }
  r->problem_lines += n_lines;
  if (r->problems++ < EMC_BAD_LINES_KEPT) g_ptr_array_add(r->problem_msgs, g_steal_pointer(&msg));
  return TRUE;
}

/* Warnings go to stderr whatever --quiet says: a result computed without some lines must say so. */
void sim_replay_flush_problems(Replay *r, const char *where, const char *what) {
  for (guint i = 0; i < r->problem_msgs->len; i++)
    fprintf(stderr, "%s\n", (char *)g_ptr_array_index(r->problem_msgs, i));
  if (r->problems > EMC_BAD_LINES_KEPT)
    fprintf(stderr, "%s%s%" G_GUINT64_FORMAT " %s\n", where ? where : "", where ? ": " : "", r->problems,
            what);
  g_ptr_array_set_size(r->problem_msgs, 0);
  r->problems = 0;
}

/* A defect of the logs' order or chain at vantage point v: with --strict a `fatal` one ends reading (FALSE
 * with `error`); else counted and the first few of this file kept for sim_replay_flush_anomalies(). */
gboolean sim_replay_anomaly(Replay *r, guint v, int kind, gboolean fatal, GError **error, const char *fmt,
                            ...) {
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  if (fatal && r->opt->strict) {
    sim_replay_input_error(error, "%s", msg);
    return FALSE;
  }
  r->anom[kind]++;
  r->vanom[v * AN_N + kind]++;
  if (r->file_anom[kind]++ < EMC_BAD_LINES_KEPT) g_ptr_array_add(r->anom_msgs, g_steal_pointer(&msg));
  return TRUE;
}

void sim_replay_flush_anomalies(Replay *r, const char *where) {
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
  sim_replay_flush_anomalies(r, emc_reader_file(rd));
  sim_replay_flush_problems(r, emc_reader_file(rd), "lines in all that cannot be right (skipped)");
}

/* Opens one kind in one vantage directory; NULL without error when the directory has no such file. */
static EmcReader *open_kind(const Replay *r, const EmcDir *d, EmcKind kind, GError **error) {
  const char *const *files = emc_dir_files(d, kind);
  if (!files || !files[0]) return NULL;
  GError *e = NULL;
  EmcReader *rd = emc_dir_open_reader(d, kind, r->opt->strict ? EMC_READER_STRICT : EMC_READER_DEFAULT, &e);
  if (!rd) {
    sim_replay_input_error(error, "%s", e->message);
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
  if (why) return sim_replay_line_problem(r, 1, error, "%s:%" G_GUINT64_FORMAT ": %s", file, line, why);
  uint64_t id = emc_hash_id(&eb->hash);
  RBlock *b = g_hash_table_lookup(r->blocks, &id);
  /* The first line of a block is the one used: a later one that disagrees on where the block is in the chain
   * is inconsistent (which of the two is wrong, the chain may tell: see drop_inconsistent()). */
  if (b && b->number != eb->number)
    return sim_replay_line_problem(r, 1, error,
                                   "%s:%" G_GUINT64_FORMAT ": Number %" G_GUINT64_FORMAT
                                   " differs from the same block's first line (%s:%" G_GUINT64_FORMAT
                                   ": %" G_GUINT64_FORMAT ")",
                                   file, line, eb->number, b->file, b->line, b->number);
  if (b && b->b.parent != emc_hash_id(&eb->parent))
    return sim_replay_line_problem(
        r, 1, error,
        "%s:%" G_GUINT64_FORMAT ": ParentHash differs from the same block's first line (%s:%" G_GUINT64_FORMAT
        ")",
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
      if (!sim_replay_anomaly(r, v, AN_REORDER, TRUE, error,
                              "%s:%" G_GUINT64_FORMAT ": LocalTimestamp %.3f s before line %" G_GUINT64_FORMAT
                              "'s: out of order (kept)",
                              file, line, back, r->ord_prev_line))
        return FALSE;
    } else if (!sim_replay_anomaly(r, v, AN_STEP, TRUE, error,
                                   "%s:%" G_GUINT64_FORMAT
                                   ": clock step back: LocalTimestamp %.3f s before line %" G_GUINT64_FORMAT
                                   "'s (kept)",
                                   file, line, back, r->ord_prev_line))
      return FALSE;
  } else if (prev != OBS_TIME_NONE && header_s >= 0 && r->ord_prev_header_s >= 0 && t - prev > STEP_SILENCE_NS &&
             (double)(t - prev) - (double)(header_s - r->ord_prev_header_s) * 1e9 > (double)STEP_EXCESS_NS) {
    if (!sim_replay_anomaly(
            r, v, AN_STEP, TRUE, error,
            "%s:%" G_GUINT64_FORMAT
            ": clock step forward: LocalTimestamp %.3f s after line %" G_GUINT64_FORMAT
            "'s with no line between, while the header Time advanced %" G_GINT64_FORMAT " s (kept)",
            file, line, (double)(t - prev) / 1e9, r->ord_prev_line, header_s - r->ord_prev_header_s))
      return FALSE;
  } else if (prev != OBS_TIME_NONE && t == prev) {
    uint64_t id = emc_hash_id(h);
    gpointer first;
    if (g_hash_table_lookup_extended(r->same_ms, &id, NULL, &first)) {
      *skip = TRUE;
      return sim_replay_anomaly(r, v, AN_DUP, FALSE, error,
                                "%s:%" G_GUINT64_FORMAT ": duplicate of line %" G_GUINT64_FORMAT
                                " (same %s and LocalTimestamp): skipped",
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
    sim_replay_input_error(error, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  report_bad(r, rd, kind);
  return TRUE;
}

gboolean sim_replay_read_records(Replay *r, GPtrArray *dirs, GError **error) {
  /* Blocks of every vantage point first: announcements and transactions refer to them. */
  static const EmcKind kinds[] = {EMC_KIND_BLOCK, EMC_KIND_ANNOUNCEMENT, EMC_KIND_TX};
  const RecordFn handlers[] = {on_block, on_announcement, on_tx};
  gboolean ok = TRUE;
  for (guint k = 0; k < G_N_ELEMENTS(kinds); k++)
    for (guint v = 0; ok && v < r->nv && !(kinds[k] == EMC_KIND_TX && r->opt->skip_txs); v++)
      ok = read_kind(r, v, g_ptr_array_index(dirs, v), kinds[k], handlers[k], error);
  return ok;
}

/* Why `text` cannot be a name in summary.json and the CSVs, or NULL: jansson refuses strings that are not
 * UTF-8 (the key or entry would silently go missing), and a control character breaks line-based reading. */
const char *sim_replay_bad_text(const char *text) {
  if (!g_utf8_validate(text, -1, NULL)) return "not valid UTF-8";
  for (const char *c = text; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f) return "has a control character";
  return NULL;
}

/* The address map: a CSV with a header naming `address` and a pool name column (`name`, else the study's
 * `name_in_dsn2020_scripts`, else the second column). An empty name maps nothing (the study's map leaves the
 * names of pools its scripts did not know empty). */
gboolean sim_replay_read_pools(Replay *r, const char *path, GError **error) {
  gsize len = 0;
  GError *e = NULL;
  g_autofree char *data = sim_input_read_file(path, 0, &len, NULL, &e);
  if (!data) {
    sim_replay_input_error(error, "%s: %s", path, e->message);
    g_error_free(e);
    return FALSE;
  }
  g_autoptr(SimCsvReader) f = sim_csv_reader_new(data, len, SIM_CSV_DEFAULT);
  g_autoptr(GPtrArray) fields = g_ptr_array_new_with_free_func(g_free);
  int addr_col = -1, name_col = -1;
  gboolean ok = TRUE;
  if (sim_csv_reader_next(f, fields, &e) <= 0) {
    sim_replay_input_error(error, "%s:%s %s", path, e ? "1:" : "",
                           e ? e->message : "empty file (expected a header with 'address')");
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
    sim_replay_input_error(error, "%s:1: the header needs an 'address' column and a pool name column", path);
    return FALSE;
  }
  guint start = 0; /* the line a record starts on (a quoted field may span lines) */
  while (ok && sim_csv_reader_next(f, fields, &e) > 0) {
    start = sim_csv_reader_line(f);
    if (fields->len == 1 && !*(const char *)g_ptr_array_index(fields, 0)) continue;
    if ((int)fields->len <= MAX(addr_col, name_col)) {
      sim_replay_input_error(error, "%s:%u: %u fields, expected at least %d", path, start, fields->len,
                             MAX(addr_col, name_col) + 1);
      ok = FALSE;
      break;
    }
    EmcAddress a;
    const char *text = g_ptr_array_index(fields, addr_col);
    if (!emc_address_parse(text, strlen(text), &a)) {
      sim_replay_input_error(error, "%s:%u: not an address: '%s'", path, start, text);
      ok = FALSE;
      break;
    }
    uint64_t id = emc_address_id(&a);
    const char *pname = g_ptr_array_index(fields, name_col), *had = g_hash_table_lookup(r->pool_of, &id);
    const char *why = sim_replay_bad_text(pname);
    if (why) {
      sim_replay_input_error(error, "%s:%u: pool name %s", path, start, why);
      ok = FALSE;
      break;
    }
    if (!*pname) continue;
    /* One address in two pools: which one mined its blocks would depend on the order of the lines. */
    if (had && strcmp(had, pname) != 0) {
      sim_replay_input_error(error, "%s:%u: address %s is already mapped to pool '%s'", path, start, text,
                             had);
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
    sim_replay_input_error(error, "%s:%u: %s", path, sim_csv_reader_line(f), e->message);
    ok = FALSE;
  }
  g_clear_error(&e);
  return ok;
}
