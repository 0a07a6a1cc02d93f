/* emc.h: streaming readers and writers of the measurement study's "EMC" logs and stage CSVs.
 *
 * WHAT THE FILES ARE
 * The study ran an instrumented Geth 1.8 ("EMC") that wrote one syslog stream per message type. Each line
 * is comma-separated values with no keys (tests/data/README.md, "The EMC log format"). One reader
 * kind (EmcKind) per record type:
 *
 *   kind                  raw file (renamed file)                       one line per
 *   EMC_KIND_BLOCK        NewBlockMsg.log (blocks.log)                  full-block message, from every peer
 *   EMC_KIND_ANNOUNCEMENT NewBlockHashesMsg.log (blocksAnnouncements.log) announced hash not in the chain
 *   EMC_KIND_TX           TxMsg.log (txs.log)                           tx in a tx message, before validation
 *   EMC_KIND_HEAD         NewBlockHead.log (heads.log)                  new canonical head
 *   EMC_KIND_TX_GAS_USED  txgasused.log                                 tx when a block is processed
 *   EMC_KIND_INVALID_MSG  InvalidMessages.csv (invalidmsgs.log)         invalid network message
 *   EMC_KIND_PEER         peers.log                                     peer added or removed
 *   EMC_KIND_PROPAGATION  blocks-propagation-times[-v2|-v3].csv         block, joined over vantage points
 *
 * The same kinds read the study's processing-stage CSVs (tests/data/emc-stage-templates/), which are
 * the raw fields plus stage columns under a header line:
 *   blocks-before-Stage-1.csv, blocks-after-Stage-1.csv  -> EMC_KIND_BLOCK (stage columns in EmcBlock.stage)
 *   txs-before-Stage-0.csv, txs-after-Stage-0.csv        -> EMC_KIND_TX    (stage columns in EmcTx.stage)
 *   blocksAnnouncements.csv, heads.csv, txgasused.csv, invalidMsgs.csv, peers.csv -> the matching kind
 *   blocks-propagation-times.csv, -v2.csv, -v3.csv       -> EMC_KIND_PROPAGATION
 *
 * HEADER OR NOT
 * The first non-empty line of each file is a header when its first field is one of the kind's column
 * names (case-insensitive, surrounding spaces and a UTF-8 byte-order mark ignored, so "LocalTimestamp" and
 * "LocalTimeStamp" are the same name; for EMC_KIND_PROPAGATION also any <vantage>TimeStamp). The raw
 * InvalidMessages.csv starts with such a line; the study's stage files are its headerless pandas outputs
 * with the template header prepended.
 * - With a header, columns are found by name: any order, unknown extra columns ignored, a missing required
 *   column or a known column given twice is a file-level error (EMC_ERROR_HEADER, in strict mode or not),
 *   and every data line must have as many fields as the header. Required columns: all raw fields of the
 *   kind (listed at each record type); for EMC_KIND_PROPAGATION BlockHash, Number, BlockType,
 *   FirstObservation and at least one <vantage>TimeStamp. Stage columns are optional: absent, empty or nil
 *   means none. Values may also take the forms pandas writes (see VALUES).
 * - Without a header, fields are positional in the raw order, with exactly the raw field count (peers: 6
 *   or 7). Headerless propagation tables are recognised per line by their field count: 12, 18 or 20 for
 *   the plain, v2 and v3 layouts, with the vantage points Angainor, Falcon, S1US, S2CN. Headerless stage
 *   files of other kinds are not supported: prepend the template header, as the study did.
 *
 * QUOTING
 * Geth's log formatter quotes a value that holds a space, a control character, '=' or '"'; inside quotes
 * \\ \" \n \r \t are escapes, outside quotes \\ is a backslash. pandas (stage CSVs) quotes per RFC 4180,
 * "" being a quote inside quotes. Both are read the same way: inside quotes, those backslash escapes and ""
 * are decoded and any other backslash is kept as is; outside quotes \\ becomes \. (A pandas field with a
 * doubled backslash, or ending in a backslash, inside quotes would be misread; the study's files have
 * none.) An unquoted field never contains a comma: a line with an unquoted comma in free text has too many
 * fields and is bad.
 *
 * VALUES
 * - Times are int64 nanoseconds since the Unix epoch, UTC (int64 covers about 1677-09-21 .. 2262-04-11).
 *   The logs write local time with its offset, 2006-01-02T15:04:05.000-0700 (exactly this shape: 3
 *   fraction digits, offset +hhmm/-hhmm). With a header, times may also use a space for 'T', 0-9 fraction
 *   digits, 'Z' or +hh:mm (pandas Timestamps). "None" is OBS_TIME_NONE (analysis/obs.h; EMC_TIME_NONE is
 *   the same value).
 * - Hashes (0x + 64 hex digits, any case) are kept as 32 bytes (EmcHash), addresses (0x + 40 hex digits)
 *   as 20 bytes (EmcAddress). emc_hash_id() gives the uint64 id the simulator's ObsBlock/ObsTx use.
 * - Geth's big integers that can exceed 64 bits (difficulty, gas price, value, cost) are EmcU256 (256-bit
 *   unsigned, big-endian); other integers are uint64. Decimal digits only (leading zeros allowed; no sign,
 *   no exponent). With a header an integer may also be written "123.0" (a pandas float column).
 * - "nil" (unquoted) is accepted only where the instrumented Geth could write it: a tx's To (contract
 *   creation) and free-text fields (ValidityErr, MessageType, the peer fields), which then read as NULL; a
 *   quoted "nil" is the text nil. An empty free-text field is the empty string (Geth wrote "" that way);
 *   an empty TxGasUsed is none. Raw fields that are numbers, hashes or times never accept nil or empty.
 * - Lists (ListOfTxs, ListOfUncles, InUncleBlocks) are hashes each followed by ';' ("0xa..;0xb..;"); an
 *   empty field is an empty list.
 * - None markers: OBS_TIME_NONE for times, EMC_U64_NONE for optional integers, NAN for optional reals
 *   (test with isnan), NULL for strings, EMC_FLAG_NONE for yes/no columns, a has_* flag for optional
 *   hashes/addresses.
 *
 * BAD LINES
 * A line that cannot be parsed completely (wrong field count, a malformed value, an unterminated quote, a
 * NUL byte, a line longer than the maximum, a last line without '\n' that does not parse) never crashes
 * and never yields a record. By default it is skipped and counted (emc_reader_bad_lines()), and the first
 * EMC_BAD_LINES_KEPT messages are kept (emc_reader_bad_line_messages()), each as "file:line: reason",
 * e.g. "blocks.log:7: field 3 (Number): not an unsigned decimal integer". With EMC_READER_STRICT the first
 * bad line instead ends reading with an EMC_ERROR_BAD_LINE GError carrying that same message (the CLI maps
 * it to exit status 2). Empty lines (also "\r" alone) are skipped silently. A last line without '\n' that
 * parses completely is a normal record. CRLF line endings are accepted.
 *
 * MEMORY
 * Readers stream: they hold one line (at most the line maximum, EMC_MAX_LINE_BYTES by default), scratch
 * arrays sized by that one line (its tx-hash list), the decompressor state (see zfile.h) and five
 * messages. Memory does not grow with the file size or the number of records. Pointers inside a returned
 * record (lists, strings, per-vantage arrays) point into the reader and stay valid only until the next
 * call on that reader or its free; copy with emc_record_dup() to keep a record.
 *
 * COMPRESSION
 * Any file may be plain, gzip, xz or lzma, told apart by magic bytes (zfile.h); names do not matter.
 *
 * WRITERS
 * EmcWriter writes raw log lines (no header unless asked) that the instrumented Geth would have written
 * byte for byte: the same field order, hashes in lowercase hex, addresses in EIP-55 mixed case, big
 * integers in decimal, Geth's quoting. Times are written in UTC ("+0000") unless another offset is set.
 * Reading a written line gives back an equal record (emc_record_equal(), without stage columns, which are
 * not written), provided its times are whole milliseconds: the format has no finer digits, so finer parts
 * are dropped (rounded towards the past). For that, two cases that Geth would have written ambiguously are
 * quoted although Geth did not quote them: a free-text value that contains a comma, and the text "nil"
 * (unquoted nil means "none"). Strings are written as bytes (Geth would have replaced invalid UTF-8 inside
 * quotes with U+FFFD).
 *
 * ERRORS
 * Run-time errors use the EMC_ERROR domain (EmcError). Programming errors (NULL where not allowed, a
 * kind/record mismatch) are g_return_val_if_fail criticals.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "obs.h"

G_BEGIN_DECLS

#define EMC_ERROR (emc_error_quark())
GQuark emc_error_quark(void);

typedef enum {
  EMC_ERROR_IO,          /* a file could not be opened or read, or a write failed */
  EMC_ERROR_COMPRESSION, /* compressed data is corrupt or truncated */
  EMC_ERROR_HEADER,      /* a header lacks a required column or repeats one, or a later part has other
                          * vantage points ("file:line: reason") */
  EMC_ERROR_BAD_LINE,    /* strict mode: a line could not be parsed ("file:line: reason") */
  EMC_ERROR_NOT_FOUND,   /* emc_dir_open_reader(): no file of that kind in the directory */
  EMC_ERROR_AMBIGUOUS,   /* emc_dir_open(): two files could hold the same kind or part */
  EMC_ERROR_INVALID,     /* a writer was given a record that cannot be written (message says why) */
} EmcError;

/* ---- Kinds -------------------------------------------------------------------------------------------- */

typedef enum {
  EMC_KIND_BLOCK = 0,
  EMC_KIND_ANNOUNCEMENT,
  EMC_KIND_TX,
  EMC_KIND_HEAD,
  EMC_KIND_TX_GAS_USED,
  EMC_KIND_INVALID_MSG,
  EMC_KIND_PEER,
  EMC_KIND_PROPAGATION, /* stage table only: no raw log, no writer */
  EMC_N_KINDS
} EmcKind;

/* "blocks", "announcements", "txs", "heads", "txgasused", "invalid", "peers", "propagation". */
const char *emc_kind_name(EmcKind kind);
/* The kind with that name (as above); FALSE if none. */
gboolean emc_kind_from_name(const char *name, EmcKind *kind);

/* ---- Values ------------------------------------------------------------------------------------------- */

#define EMC_HASH_BYTES 32
#define EMC_ADDRESS_BYTES 20
#define EMC_TIME_NONE OBS_TIME_NONE
#define EMC_U64_NONE UINT64_MAX
/* The latest header Time a reader accepts (in 2262): later ones do not fit int64 nanoseconds. */
#define EMC_TIME_S_MAX (INT64_MAX / 1000000000)

typedef struct {
  uint8_t bytes[EMC_HASH_BYTES];
} EmcHash;

typedef struct {
  uint8_t bytes[EMC_ADDRESS_BYTES];
} EmcAddress;

/* An unsigned 256-bit integer, big-endian (be[0] is the most significant byte). */
typedef struct {
  uint8_t be[32];
} EmcU256;

/* A yes/no stage column ("True"/"False"; also "true"/"false"/"1"/"0"), or none (empty or absent). */
typedef enum {
  EMC_FLAG_NONE = -1,
  EMC_FLAG_FALSE = 0,
  EMC_FLAG_TRUE = 1,
} EmcFlag;

/* The study's block types (BlockType column): Main; Recognized (an uncle referenced by a main block);
 * Uncle (an unrecognized fork, never referenced). */
typedef enum {
  EMC_BLOCK_TYPE_NONE = 0, /* no BlockType column, or an empty one */
  EMC_BLOCK_TYPE_MAIN,
  EMC_BLOCK_TYPE_RECOGNIZED,
  EMC_BLOCK_TYPE_UNCLE,
  EMC_BLOCK_TYPE_OTHER, /* another text; see type_text */
} EmcBlockType;

/* Transaction kinds as Geth's EMC logger classified them (MsgType); the values equal OBS_TX_*. */
typedef enum {
  EMC_TX_TYPE_TX = OBS_TX_TX, /* "TX": value transfer (To set, no data) */
  EMC_TX_TYPE_MC = OBS_TX_MC, /* "MC": message call (To set, with data) */
  EMC_TX_TYPE_CC = OBS_TX_CC, /* "CC": contract creation (To is nil) */
} EmcTxType;

/* ---- Records ------------------------------------------------------------------------------------------ */

/* Stage columns of blocks-after-Stage-1.csv; all none in raw logs and stage files without them. */
typedef struct {
  EmcFlag captured_locally; /* CapturedLocally: seen by this vantage point (False: imported from another) */
  EmcBlockType type;        /* BlockType */
  const char *type_text;    /* BlockType as written, NULL if none */
  uint64_t fork_length;     /* ForkLength, EMC_U64_NONE if none */
} EmcBlockStage;

/* NewBlockMsg.log: LocalTimestamp, BlockHash, Number, GasLimit, GasUsed, Difficulty, Time, Coinbase,
 * ParentHash, UncleHash, BlockSize, ListOfTxs, ListOfUncles. One line per full-block message from every
 * peer, so a block repeats; the study kept the earliest. */
typedef struct {
  int64_t local_ns;      /* LocalTimestamp: reception of the message (local clock) */
  EmcHash hash;          /* BlockHash */
  uint64_t number;       /* Number: height */
  uint64_t gas_limit;    /* GasLimit (gas) */
  uint64_t gas_used;     /* GasUsed (gas) */
  EmcU256 difficulty;    /* Difficulty: this block's own */
  uint64_t time_s;       /* Time: header timestamp, Unix seconds (miner's clock), <= EMC_TIME_S_MAX */
  EmcAddress coinbase;   /* Coinbase: miner's address */
  EmcHash parent;        /* ParentHash */
  EmcHash uncle_hash;    /* UncleHash: hash of the uncle header list (not an uncle) */
  uint64_t size_bytes;   /* BlockSize: RLP size in bytes */
  uint32_t n_txs;        /* ListOfTxs: number of transactions */
  const EmcHash *txs;    /* their hashes in block order (reader-owned; NULL when n_txs is 0) */
  uint32_t n_uncles;     /* ListOfUncles: number of uncles referenced */
  const EmcHash *uncles; /* their hashes (reader-owned; NULL when n_uncles is 0) */
  EmcBlockStage stage;
} EmcBlock;

/* NewBlockHashesMsg.log: LocalTimestamp, BlockHash. One line per announced hash that was not yet in the
 * local chain, from every peer. */
typedef struct {
  int64_t local_ns; /* LocalTimestamp: reception of the announcement */
  EmcHash hash;     /* BlockHash */
} EmcAnnouncement;

#define EMC_N_COMMIT_DEPTHS 4
/* The confirmation depths of the CommitTime<k> columns, in EmcTxStage.commit_s order: 0, 3, 12, 36. */
extern const unsigned emc_commit_depths[EMC_N_COMMIT_DEPTHS];

/* Stage columns of txs-after-Stage-0.csv (and the study's later tx stages); none in raw logs. */
typedef struct {
  EmcFlag captured_locally;       /* CapturedLocally */
  uint64_t gas_used;              /* GasUsed: from txgasused.log (really the gas limit), EMC_U64_NONE */
  gboolean has_in_main_block;     /* InMainBlock present */
  EmcHash in_main_block;          /* InMainBlock: the main block including it */
  uint32_t n_in_uncle_blocks;     /* InUncleBlocks: non-main blocks including it */
  const EmcHash *in_uncle_blocks; /* reader-owned; NULL when none */
  EmcFlag in_order;               /* InOrder */
  const char *never_committing;   /* NeverCommiting / NeverCommitting as written (e.g. "Committed"), NULL */
  int64_t remote_ns;              /* RemoteTimeStamp (later stages), OBS_TIME_NONE */
  double commit_s[EMC_N_COMMIT_DEPTHS]; /* CommitTime0/3/12/36: seconds from reception to k confirmations,
                                         * NAN if none */
} EmcTxStage;

/* TxMsg.log: LocalTimeStamp, Hash, GasLimit, GasPrice, Value, Nonce, MsgType, Cost, Size, To, From,
 * ValidityErr. One line per transaction in a tx message from every peer, logged before pool validation. */
typedef struct {
  int64_t local_ns;         /* LocalTimeStamp: reception of the tx message */
  EmcHash hash;             /* Hash */
  uint64_t gas_limit;       /* GasLimit (gas) */
  EmcU256 gas_price_wei;    /* GasPrice (wei per gas) */
  EmcU256 value_wei;        /* Value (wei) */
  uint64_t nonce;           /* Nonce: the sender's sequence number */
  EmcTxType type;           /* MsgType: TX / MC / CC */
  EmcU256 cost_wei;         /* Cost: value + gas price * gas limit (wei) */
  uint64_t size_bytes;      /* Size: RLP size in bytes */
  gboolean has_to;          /* FALSE when To is nil (contract creation; not checked against type) */
  EmcAddress to;            /* To (zero when has_to is FALSE) */
  EmcAddress from;          /* From: recovered sender (the zero address when recovery failed) */
  const char *validity_err; /* ValidityErr: the pool's verdict, NULL for nil (valid), else the error text
                             * unquoted, e.g. "nonce too low" (reader-owned) */
  EmcTxStage stage;
} EmcTx;

/* NewBlockHead.log: LocalTimestamp, BlockHash, Number. One line per new canonical head. */
typedef struct {
  int64_t local_ns; /* LocalTimestamp: when it became the head */
  EmcHash hash;     /* BlockHash */
  uint64_t number;  /* Number: height */
} EmcHead;

/* txgasused.log: LocalTimestamp, BlockHash, TxHash, TxGasUsed. One line per transaction when a block is
 * processed. */
typedef struct {
  int64_t local_ns; /* LocalTimestamp: processing time */
  EmcHash block;    /* BlockHash */
  EmcHash tx;       /* TxHash */
  uint64_t gas;     /* TxGasUsed: really the tx's gas limit (gas); EMC_U64_NONE when empty (the tx failed
                     * and the block was rejected) */
} EmcTxGasUsed;

/* InvalidMessages.csv: LocalTimestamp, MessageType, Cause. One line per invalid network message. */
typedef struct {
  int64_t local_ns;     /* LocalTimestamp */
  const char *msg_type; /* MessageType, e.g. "StatusMsg" (reader-owned; NULL for nil) */
  uint32_t cause;       /* Cause: the study's code, written with 3 digits ("002" is 2); 0..999 */
} EmcInvalidMsg;

typedef enum {
  EMC_PEER_ADD = 1,    /* "Add" */
  EMC_PEER_REMOVE = 2, /* "Remove" */
} EmcPeerEventType;

/* peers.log: LocalTimeStamp, Add|Remove, ID, then for Add: client name, remote address; for Remove:
 * connection duration, error; then #peers and, in later versions, #inbound peers (6 or 7 fields). Stage
 * columns: LocalTimeStamp, Type, ID, TypeDependentParam1, TypeDependentParam2, Peers, InboundPeers. */
typedef struct {
  int64_t local_ns;      /* LocalTimeStamp */
  EmcPeerEventType type; /* Type */
  const char *id;        /* ID: node id as written (hex); NULL for nil */
  const char *client;    /* Add: client name (Geth truncates it to 20 chars + "..."); NULL for Remove/nil */
  const char *addr;      /* Add: remote address host:port; NULL for Remove/nil */
  const char *duration;  /* Remove: connection duration as Go wrote it, e.g. "1m2.345s"; NULL for Add/nil */
  const char *error;     /* Remove: disconnect reason, e.g. "too many peers"; NULL for Add/nil */
  int64_t duration_ns;   /* Remove: `duration` parsed (emc_go_duration_parse), -1 for Add or when not a
                          * Go duration */
  uint64_t peers;        /* #peers after the event */
  uint64_t inbound;      /* #inbound peers after the event, EMC_U64_NONE when the line has no such field */
} EmcPeer;

/* blocks-propagation-times[-v2|-v3].csv: one row per block joined over the vantage points: BlockHash,
 * Number, BlockType, <vantage>TimeStamp..., FirstObservation, <vantage>Diff..., then (v2) MiningPool,
 * NumTransactions, SameMinerSeqLen, PositionInsideSeq, Difficulty, BlockSize, (v3) InterblockTime,
 * InterblockTimePerPool. The vantage points are the header's <name>TimeStamp columns, in header order
 * (emc_reader_n_vantages(), emc_reader_vantage_name()). */
typedef struct {
  EmcHash hash;                 /* BlockHash */
  uint64_t number;              /* Number: height */
  EmcBlockType type;            /* BlockType */
  const char *type_text;        /* BlockType as written, NULL if empty */
  uint32_t n_vantages;          /* length of the two arrays below */
  const int64_t *seen_ns;       /* <vantage>TimeStamp: local reception, OBS_TIME_NONE if not seen */
  const double *diff_s;         /* <vantage>Diff: seconds after the first observation, NAN if none */
  int64_t first_ns;             /* FirstObservation: earliest reception over the vantage points */
  const char *mining_pool;      /* MiningPool, NULL if none */
  uint64_t num_txs;             /* NumTransactions, EMC_U64_NONE if none */
  uint64_t same_miner_seq_len;  /* SameMinerSeqLen: length of the pool's run containing it, or none */
  uint64_t position_inside_seq; /* PositionInsideSeq: 1-based position in that run, or none */
  double difficulty;            /* Difficulty, NAN if none */
  uint64_t size_bytes;          /* BlockSize, EMC_U64_NONE if none */
  double interblock_s;          /* InterblockTime: seconds since the previous main block's first
                                 * observation, NAN if none */
  double interblock_per_pool_s; /* InterblockTimePerPool: same, within the pool's consecutive blocks */
} EmcPropagation;

/* Any record, tagged by kind. */
typedef struct {
  EmcKind kind;
  union {
    EmcBlock block;
    EmcAnnouncement announcement;
    EmcTx tx;
    EmcHead head;
    EmcTxGasUsed gas;
    EmcInvalidMsg invalid;
    EmcPeer peer;
    EmcPropagation propagation;
  } u;
} EmcRecord;

/* TRUE if `a` and `b` have the same kind and equal fields, comparing lists and strings by content and
 * NAN equal to NAN. Stage columns are compared only when `with_stage` is TRUE. */
gboolean emc_record_equal(const EmcRecord *a, const EmcRecord *b, gboolean with_stage);

/* A deep copy that owns all its lists and strings. Free with emc_record_free(). */
EmcRecord *emc_record_dup(const EmcRecord *rec);
/* Frees a copy made by emc_record_dup(); accepts NULL. */
void emc_record_free(EmcRecord *rec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EmcRecord, emc_record_free)

/* ---- Reader ------------------------------------------------------------------------------------------- */

#define EMC_BAD_LINES_KEPT 5
/* Default cap on one line: a 2019 mainnet block line is < 30 KB. */
#define EMC_MAX_LINE_BYTES ((size_t)4 << 20)

typedef enum {
  EMC_READER_DEFAULT = 0,
  EMC_READER_STRICT = 1 << 0, /* the first bad line is a fatal EMC_ERROR_BAD_LINE */
} EmcReaderFlags;

typedef struct EmcReader EmcReader;

/* Opens `path` ("-" is standard input) for records of `kind`. Returns NULL with `error` set
 * (EMC_ERROR_IO) if it cannot be opened; header problems surface on the first read. Free with
 * emc_reader_free(). */
EmcReader *emc_reader_open(const char *path, EmcKind kind, EmcReaderFlags flags, GError **error);

/* Reads the NULL-terminated list `paths` in order as one stream of `kind`, e.g. rotated parts
 * blocks.log.0, blocks.log.1, blocks.log. Each file may have its own header and compression; line numbers
 * in messages are per file. The first file is opened now (errors as emc_reader_open), the others when
 * reached. `paths` must hold at least one path. */
EmcReader *emc_reader_open_parts(const char *const *paths, EmcKind kind, EmcReaderFlags flags,
                                 GError **error);

/* Reads the `len` bytes at `data` (borrowed; they must outlive the reader), which may be compressed.
 * `name` (copied) stands for the file name in messages. Never fails. */
EmcReader *emc_reader_new_from_bytes(const void *data, size_t len, const char *name, EmcKind kind,
                                     EmcReaderFlags flags);

/* Changes the line cap (>= 64) for lines not yet read. */
void emc_reader_set_max_line_bytes(EmcReader *r, size_t max_bytes);

/* Reads the next record into `rec` (rec->kind is set to the reader's kind). Returns TRUE with a record;
 * FALSE at the end of the data with `error` left NULL, or FALSE with `error` set on a fatal error:
 * EMC_ERROR_IO, EMC_ERROR_COMPRESSION, EMC_ERROR_HEADER, or (strict mode) EMC_ERROR_BAD_LINE. Records read
 * before a fatal error remain valid results. After FALSE, further calls return FALSE without error.
 * Pointers in `rec` are valid until the next call or emc_reader_free(). Typical use:
 *
 *   g_autoptr(GError) err = NULL;
 *   EmcRecord rec;
 *   while (emc_reader_next(r, &rec, &err)) use(&rec.u.block);
 *   if (err) fail(err->message);
 *   if (emc_reader_bad_lines(r)) warn(emc_reader_bad_line_messages(r));
 */
gboolean emc_reader_next(EmcReader *r, EmcRecord *rec, GError **error);

/* The same for one kind: the reader must have been opened for that kind. */
gboolean emc_reader_next_block(EmcReader *r, EmcBlock *out, GError **error);
gboolean emc_reader_next_announcement(EmcReader *r, EmcAnnouncement *out, GError **error);
gboolean emc_reader_next_tx(EmcReader *r, EmcTx *out, GError **error);
gboolean emc_reader_next_head(EmcReader *r, EmcHead *out, GError **error);
gboolean emc_reader_next_tx_gas_used(EmcReader *r, EmcTxGasUsed *out, GError **error);
gboolean emc_reader_next_invalid_msg(EmcReader *r, EmcInvalidMsg *out, GError **error);
gboolean emc_reader_next_peer(EmcReader *r, EmcPeer *out, GError **error);
gboolean emc_reader_next_propagation(EmcReader *r, EmcPropagation *out, GError **error);

EmcKind emc_reader_kind(const EmcReader *r);
/* Bad lines skipped so far (0 in strict mode, where the first one is an error). */
guint64 emc_reader_bad_lines(const EmcReader *r);
/* The first EMC_BAD_LINES_KEPT bad-line messages ("file:line: reason"), NULL-terminated, reader-owned. */
const char *const *emc_reader_bad_line_messages(const EmcReader *r);
/* Records returned so far. */
guint64 emc_reader_records(const EmcReader *r);
/* The file being read (as given) and the line number of the last line read in it (1-based; 0 before any). */
const char *emc_reader_file(const EmcReader *r);
guint64 emc_reader_line(const EmcReader *r);
/* The current file's compression: "plain", "gzip", "xz" or "lzma". */
const char *emc_reader_compression(const EmcReader *r);
/* Whether the current file started with a header line (known once a line of it was read). */
gboolean emc_reader_has_header(const EmcReader *r);
/* EMC_KIND_PROPAGATION: the vantage points of the current file (0 before the first read). All parts of a
 * multi-file reader must have the same vantage points in the same order (else EMC_ERROR_HEADER). */
guint emc_reader_n_vantages(const EmcReader *r);
const char *emc_reader_vantage_name(const EmcReader *r, guint i);

/* Closes and frees; accepts NULL. */
void emc_reader_free(EmcReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EmcReader, emc_reader_free)

/* ---- One vantage point's raw files in a directory ----------------------------------------------------- */

typedef struct EmcDir EmcDir;

/* Lists the raw log files of one vantage point in `dir`, by name. Each kind has base names (raw name
 * first, then the study's renamed one):
 *   blocks: NewBlockMsg.log, blocks.log          announcements: NewBlockHashesMsg.log,
 * blocksAnnouncements.log txs: TxMsg.log, txs.log                      heads: NewBlockHead.log, heads.log
 *   txgasused: txgasused.log                     peers: peers.log
 *   invalid: InvalidMessages.csv, InvalidMessages.log, invalidmsgs.log
 * A base name may be followed by a rotation number (".0", ".1", ...; the study's rsyslog rotation) and
 * then by ".gz", ".xz" or ".lzma". The parts of a kind are read in rotation order, numbered parts first
 * and the unnumbered (current) file last, as the study's concatLogs.sh did. Other files are ignored.
 * Returns NULL with `error` set: EMC_ERROR_IO if the directory cannot be read; EMC_ERROR_AMBIGUOUS if a
 * kind is found under two base names (e.g. blocks.log and NewBlockMsg.log) or one part exists twice
 * (blocks.log.1 and blocks.log.1.xz). Free with emc_dir_free(). */
EmcDir *emc_dir_open(const char *dir, GError **error);

/* The files found for `kind` as full paths in read order, NULL-terminated (empty, never NULL, when there
 * are none; always empty for EMC_KIND_PROPAGATION). Owned by `d`. */
const char *const *emc_dir_files(const EmcDir *d, EmcKind kind);

/* A reader over emc_dir_files(d, kind). NULL with EMC_ERROR_NOT_FOUND if there are none, or with the
 * errors of emc_reader_open_parts(). */
EmcReader *emc_dir_open_reader(const EmcDir *d, EmcKind kind, EmcReaderFlags flags, GError **error);

void emc_dir_free(EmcDir *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EmcDir, emc_dir_free)

/* ---- Writer ------------------------------------------------------------------------------------------- */

typedef struct EmcWriter EmcWriter;

/* A writer of raw `kind` lines (any kind but EMC_KIND_PROPAGATION) to `out`, which stays the caller's
 * (not closed; write to a temp file and rename for atomicity). Free with emc_writer_free(). */
EmcWriter *emc_writer_new(FILE *out, EmcKind kind);

/* Writes times with this UTC offset in minutes (-1439..1439; default 0, written "+0000"). */
void emc_writer_set_utc_offset_min(EmcWriter *w, int offset_min);

/* Writes the kind's column names as a header line (the raw InvalidMessages.csv has one). */
gboolean emc_writer_write_header(EmcWriter *w, GError **error);

/* Writes one record as one line. FALSE with `error` set: EMC_ERROR_INVALID if the record cannot be
 * written (a time that is OBS_TIME_NONE, a cause above 999, an unknown tx or peer type, a list with a
 * count but no array, a peer count equal to EMC_U64_NONE; the message says which); nothing is written
 * then. EMC_ERROR_IO if the stream reports an error. rec->kind must be the writer's kind. */
gboolean emc_writer_write(EmcWriter *w, const EmcRecord *rec, GError **error);
gboolean emc_writer_write_block(EmcWriter *w, const EmcBlock *b, GError **error);
gboolean emc_writer_write_announcement(EmcWriter *w, const EmcAnnouncement *a, GError **error);
gboolean emc_writer_write_tx(EmcWriter *w, const EmcTx *t, GError **error);
gboolean emc_writer_write_head(EmcWriter *w, const EmcHead *h, GError **error);
gboolean emc_writer_write_tx_gas_used(EmcWriter *w, const EmcTxGasUsed *g, GError **error);
gboolean emc_writer_write_invalid_msg(EmcWriter *w, const EmcInvalidMsg *m, GError **error);
gboolean emc_writer_write_peer(EmcWriter *w, const EmcPeer *p, GError **error);

/* Lines written so far (header included). */
guint64 emc_writer_lines(const EmcWriter *w);

/* Frees the writer (the stream is left open and is not flushed); accepts NULL. */
void emc_writer_free(EmcWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(EmcWriter, emc_writer_free)

/* Appends to `line` the raw line for `rec` with its '\n', times at `utc_offset_min`; what the writer
 * writes. FALSE with EMC_ERROR_INVALID (and `line` unchanged) as for emc_writer_write(). */
gboolean emc_format_line(GString *line, const EmcRecord *rec, int utc_offset_min, GError **error);

/* ---- Value helpers ------------------------------------------------------------------------------------ */

#define EMC_TIME_TEXT_BYTES 29    /* "2006-01-02T15:04:05.000-0700" and NUL */
#define EMC_HASH_TEXT_BYTES 67    /* "0x" + 64 hex digits and NUL */
#define EMC_ADDRESS_TEXT_BYTES 43 /* "0x" + 40 hex digits and NUL */
#define EMC_U256_TEXT_BYTES 79    /* 78 decimal digits and NUL */

/* Parses exactly `len` bytes of an EMC timestamp (2006-01-02T15:04:05.000-0700) into nanoseconds since the
 * epoch, UTC. FALSE if malformed, out of calendar range, or outside int64 nanoseconds. */
gboolean emc_time_parse(const char *s, size_t len, int64_t *ns);
/* Writes `ns` (not OBS_TIME_NONE) in that format at `utc_offset_min` into `out`. Millisecond precision:
 * the sub-millisecond part is dropped (rounded towards the past). */
void emc_time_format(int64_t ns, int utc_offset_min, char out[EMC_TIME_TEXT_BYTES]);

/* "0x" + 64 hex digits (either case), exactly `len` bytes. */
gboolean emc_hash_parse(const char *s, size_t len, EmcHash *out);
/* "0x" + 64 lowercase hex digits, as Geth writes hashes. */
void emc_hash_format(const EmcHash *h, char out[EMC_HASH_TEXT_BYTES]);
/* The simulator's id for a hash: its first 8 bytes, big-endian. Distinct blocks could collide only with
 * probability ~n^2/2^65; a hash starting with 8 zero bytes would give OBS_GENESIS_ID (0). */
uint64_t emc_hash_id(const EmcHash *h);
/* The inverse for simulated data: a hash whose first 8 bytes are `id` (big-endian) and whose other 24
 * bytes are zero, so emc_hash_id() gives `id` back (what a writer of simulated logs needs). */
void emc_hash_from_id(uint64_t id, EmcHash *out);

/* "0x" + 40 hex digits (either case; the EIP-55 checksum is not verified), exactly `len` bytes. */
gboolean emc_address_parse(const char *s, size_t len, EmcAddress *out);
/* "0x" + 40 hex digits in EIP-55 mixed case, as Geth writes addresses. */
void emc_address_format(const EmcAddress *a, char out[EMC_ADDRESS_TEXT_BYTES]);
/* An id for an address (e.g. ObsTx.sender): its first 8 bytes, big-endian. */
uint64_t emc_address_id(const EmcAddress *a);
/* An address whose first 8 bytes are `id` (big-endian), the rest zero. */
void emc_address_from_id(uint64_t id, EmcAddress *out);

/* Decimal digits only, exactly `len` bytes (1 or more); FALSE if malformed or >= 2^256. */
gboolean emc_u256_parse(const char *s, size_t len, EmcU256 *out);
/* Decimal without leading zeros ("0" for zero). */
void emc_u256_format(const EmcU256 *v, char out[EMC_U256_TEXT_BYTES]);
void emc_u256_from_u64(EmcU256 *v, uint64_t x);
/* TRUE and *x if the value fits in 64 bits. */
gboolean emc_u256_to_u64(const EmcU256 *v, uint64_t *x);
/* The nearest double (wei amounts and difficulties as reals, e.g. ObsBlock.difficulty). */
double emc_u256_to_double(const EmcU256 *v);

/* Keccak-256 (the pre-standard padding Ethereum uses, not SHA3-256). */
void emc_keccak256(const void *data, size_t len, uint8_t out[32]);

/* Parses a Go time.Duration text ("1h2m3.5s", "350ms", "1.5µs", "0s"; optional sign) into nanoseconds.
 * FALSE if malformed or out of range. */
gboolean emc_go_duration_parse(const char *s, int64_t *ns);

G_END_DECLS
