/* replay-private.h: what the files of the replay module share (replay_logs.c: reading the logs; replay.c:
 * the chain; replay_out.c: the results). Not for other modules. */
#pragma once

#include "replay.h"

#include "chain.h"
#include "emc.h"
#include "propagation.h"
#include "txmetrics.h"

/* The public records (replay.h) under their short names. */
typedef SimReplayBlock RBlock;
typedef SimReplayTx RTx;

/* Defects of a log's order (check_order()) and of a vantage point's chain (find_gaps()). */
enum { AN_DUP, AN_REORDER, AN_STEP, AN_GAP, AN_N };

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

/* A loaded replay (replay.h): the tables it was read into, and what was made of them. */
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

/* Frees an RBlock (a GDestroyNotify). */
void sim_replay_rblock_free(gpointer p);

/* Sets `error` to SIM_REPLAY_ERROR_INPUT with the message. */
void sim_replay_input_error(GError **error, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* A line that parses but cannot be right is a bad line too: with --strict the first is fatal (FALSE with
 * `error`); else it is counted (`n_lines`: a detached block takes all its lines with it) and the first few
 * messages are kept for sim_replay_flush_problems(). */
gboolean sim_replay_line_problem(Replay *r, guint n_lines, GError **error, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

/* Prints the problems kept, and their count in all after `where` when more were found; starts over. */
void sim_replay_flush_problems(Replay *r, const char *where, const char *what);

/* A defect of the logs' order or chain at vantage point v: with --strict a `fatal` one ends reading (FALSE
 * with `error`); else counted and the first few of this file kept for sim_replay_flush_anomalies(). */
gboolean sim_replay_anomaly(Replay *r, guint v, int kind, gboolean fatal, GError **error, const char *fmt,
                            ...) G_GNUC_PRINTF(6, 7);

/* Prints the anomalies kept, and the counts of this file past the first few (after `where`); starts over. */
void sim_replay_flush_anomalies(Replay *r, const char *where);

/* Reads the blocks of every vantage point (`dirs`: EmcDir *, one per vantage point), then their
 * announcements, then their transactions (unless opt->skip_txs) into r's tables. */
gboolean sim_replay_read_records(Replay *r, GPtrArray *dirs, GError **error);

/* Why `text` cannot be a name in summary.json and the CSVs, or NULL. */
const char *sim_replay_bad_text(const char *text);

/* Reads the address map at `path` into r->pool_of and r->pool_order. */
gboolean sim_replay_read_pools(Replay *r, const char *path, GError **error);
