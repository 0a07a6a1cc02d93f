/* test_traces.c: unit tests of the EMC log readers and writers (traces/): counts on the real Rinkeby logs,
 * byte-exact rewriting, stage CSVs, malformed lines, compression, line endings, round trips, directories. */
#include "cunit-main.h"
#include "emc.h"
#include "zfile.h"

#include <glib/gstdio.h>
#include <lzma.h>
#include <math.h>
#include <string.h>
#include <zlib.h>

/* ---- Helpers ------------------------------------------------------------------------------------------ */

/* A file or folder of the repository's test data, tests/data/DIR[/FILE] (g_free), from the source root:
 * meson sets SIM_SOURCE_ROOT and runs the tests there. FILE may be NULL. */
static char *test_data(const char *dir, const char *file) {
  const char *root = g_getenv("SIM_SOURCE_ROOT");
  return g_build_filename(root ? root : ".", "tests", "data", dir, file, NULL);
}

static char *rinkeby(const char *name) {
  return test_data("emc-rinkeby-2018-09", name);
}

static char *slurp(const char *path, gsize *len) {
  char *data = NULL;
  g_autoptr(GError) err = NULL;
  if (!g_file_get_contents(path, &data, len, &err)) {
    CU_FAIL_FATAL(err->message);
  }
  return data;
}

/* All records of a reader, deep-copied. */
static GPtrArray *read_all(EmcReader *r, GError **error) {
  GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify)emc_record_free);
  EmcRecord rec;
  while (emc_reader_next(r, &rec, error))
    g_ptr_array_add(a, emc_record_dup(&rec));
  return a;
}

static GPtrArray *read_path(const char *path, EmcKind kind, EmcReader **keep) {
  g_autoptr(GError) err = NULL;
  EmcReader *r = emc_reader_open(path, kind, EMC_READER_DEFAULT, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  GPtrArray *a = read_all(r, &err);
  CU_ASSERT_PTR_NULL(err);
  if (err) fprintf(stderr, "%s\n", err->message);
  if (keep)
    *keep = r;
  else
    emc_reader_free(r);
  return a;
}

static gboolean same_records(GPtrArray *a, GPtrArray *b, gboolean with_stage) {
  if (a->len != b->len) return FALSE;
  for (guint i = 0; i < a->len; i++)
    if (!emc_record_equal(g_ptr_array_index(a, i), g_ptr_array_index(b, i), with_stage)) return FALSE;
  return TRUE;
}

/* A set of 32-byte hashes. */
static guint hash_key_hash(gconstpointer p) {
  return (guint)emc_hash_id(p);
}
static gboolean hash_key_equal(gconstpointer a, gconstpointer b) {
  return memcmp(a, b, sizeof(EmcHash)) == 0;
}
static GHashTable *hash_set_new(void) {
  return g_hash_table_new_full(hash_key_hash, hash_key_equal, g_free, NULL);
}
static gboolean hash_set_add(GHashTable *s, const EmcHash *h) {
  if (g_hash_table_contains(s, h)) return FALSE;
  g_hash_table_add(s, g_memdup2(h, sizeof *h));
  return TRUE;
}

static char *hex_of(const uint8_t *b, size_t n) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < n; i++)
    g_string_append_printf(s, "%02x", b[i]);
  return g_string_free(s, FALSE);
}

static EmcHash hash_of(const char *hex) {
  EmcHash h;
  g_assert(emc_hash_parse(hex, strlen(hex), &h));
  return h;
}

static EmcAddress address_of(const char *hex) {
  EmcAddress a;
  g_assert(emc_address_parse(hex, strlen(hex), &a));
  return a;
}

/* Writes all records with a writer into a string. */
static char *write_all(GPtrArray *recs, EmcKind kind, int offset_min, gboolean header, gsize *len) {
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream(&buf, &size);
  EmcWriter *w = emc_writer_new(f, kind);
  emc_writer_set_utc_offset_min(w, offset_min);
  g_autoptr(GError) err = NULL;
  if (header) CU_ASSERT(emc_writer_write_header(w, &err));
  for (guint i = 0; i < recs->len && !err; i++)
    CU_ASSERT(emc_writer_write(w, g_ptr_array_index(recs, i), &err));
  if (err) fprintf(stderr, "%s\n", err->message);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_EQUAL(emc_writer_lines(w), recs->len + (header ? 1 : 0));
  emc_writer_free(w);
  fclose(f);
  *len = size;
  return buf;
}

static char *tmp_dir(void) {
  g_autoptr(GError) err = NULL;
  char *d = g_dir_make_tmp("test-traces-XXXXXX", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  return d;
}

static void rm_dir(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  if (!d) return;
  const char *n;
  while ((n = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, n, NULL);
    g_unlink(p);
  }
  g_dir_close(d);
  g_rmdir(dir);
}

static void put_file(const char *dir, const char *name, const void *data, gsize len) {
  g_autofree char *p = g_build_filename(dir, name, NULL);
  CU_ASSERT_FATAL(g_file_set_contents(p, data, (gssize)len, NULL));
}

/* ---- Compression in memory (zlib, liblzma) ------------------------------------------------------------ */

static GBytes *gzip_bytes(const void *data, gsize len) {
  z_stream z = {0};
  g_assert(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  gsize cap = deflateBound(&z, len) + 64;
  guint8 *out = g_malloc(cap);
  z.next_in = (Bytef *)data;
  z.avail_in = (uInt)len;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  g_assert(deflate(&z, Z_FINISH) == Z_STREAM_END);
  gsize n = cap - z.avail_out;
  deflateEnd(&z);
  return g_bytes_new_take(out, n);
}

static GBytes *xz_bytes(const void *data, gsize len) {
  gsize cap = lzma_stream_buffer_bound(len);
  guint8 *out = g_malloc(cap);
  size_t pos = 0;
  g_assert(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, data, len, out, &pos, cap) == LZMA_OK);
  return g_bytes_new_take(out, pos);
}

static GBytes *lzma_alone_bytes(const void *data, gsize len) {
  lzma_options_lzma opt;
  g_assert(!lzma_lzma_preset(&opt, 6));
  lzma_stream s = LZMA_STREAM_INIT;
  g_assert(lzma_alone_encoder(&s, &opt) == LZMA_OK);
  gsize cap = len + len / 2 + 4096;
  guint8 *out = g_malloc(cap);
  s.next_in = data;
  s.avail_in = len;
  s.next_out = out;
  s.avail_out = cap;
  lzma_ret r;
  while ((r = lzma_code(&s, LZMA_FINISH)) == LZMA_OK) {
  }
  g_assert(r == LZMA_STREAM_END);
  gsize n = cap - s.avail_out;
  lzma_end(&s);
  return g_bytes_new_take(out, n);
}

static GBytes *concat2(GBytes *a) {
  gsize n;
  const guint8 *p = g_bytes_get_data(a, &n);
  guint8 *out = g_malloc(2 * n);
  memcpy(out, p, n);
  memcpy(out + n, p, n);
  return g_bytes_new_take(out, 2 * n);
}

/* ---- Value helpers ------------------------------------------------------------------------------------ */

static void check_keccak(const char *in, size_t reps, const char *want) {
  GString *s = g_string_new(NULL);
  for (size_t i = 0; i < reps; i++)
    g_string_append(s, in);
  uint8_t h[32];
  emc_keccak256(s->str, s->len, h);
  g_autofree char *hex = hex_of(h, 32);
  CU_ASSERT_STRING_EQUAL(hex, want);
  g_string_free(s, TRUE);
}

static void test_keccak(void) {
  /* Reference values from the js-sha3 npm package's keccak256 (Ethereum's Keccak, not SHA3-256); the 135-,
   * 136- and 300-byte inputs cross the 136-byte rate. */
  check_keccak("", 1, "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  check_keccak("abc", 1, "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  check_keccak("a", 135, "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446");
  check_keccak("a", 136, "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e");
  check_keccak("a", 300, "5b7e0e47a96f32a88b4f14ca177982790807c40e1a105742ba0fc1babe1ef826");
}

static void test_eip55(void) {
  /* The examples of EIP-55 itself. */
  static const char *const ex[] = {
      "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
      "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb"};
  for (size_t i = 0; i < G_N_ELEMENTS(ex); i++) {
    g_autofree char *lower = g_ascii_strdown(ex[i], -1);
    EmcAddress a = address_of(lower);
    char out[EMC_ADDRESS_TEXT_BYTES];
    emc_address_format(&a, out);
    CU_ASSERT_STRING_EQUAL(out, ex[i]);
  }
  EmcAddress a;
  CU_ASSERT_FALSE(emc_address_parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe", 41, &a));
  CU_ASSERT_FALSE(emc_address_parse("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedxx", 42, &a));
  CU_ASSERT_FALSE(emc_address_parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", 42, &a));
  EmcAddress first = address_of("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
  CU_ASSERT_EQUAL(emc_address_id(&first), UINT64_C(0x5aaeb6053f3e94c9));
}

static void check_time(const char *text, int64_t want) {
  int64_t ns = 0;
  CU_ASSERT_TRUE(emc_time_parse(text, strlen(text), &ns));
  CU_ASSERT_EQUAL(ns, want);
}

static void test_time(void) {
  /* Values from GNU date: date -u -d 2018-09-18T15:14:15.164+0100 +%s%N, etc. */
  check_time("2018-09-18T15:14:15.164+0100", INT64_C(1537280055164000000));
  check_time("2000-02-29T12:00:00.500-0530", INT64_C(951845400500000000));
  check_time("1970-01-01T00:00:00.000+0000", 0);
  check_time("1969-12-31T23:59:59.999+0000", -1000000);
  check_time("2262-04-11T23:47:15.000+0000", INT64_C(9223372035000000000));
  int64_t ns;
  static const char *const bad[] = {"2018-09-18T15:14:15+0100",
                                    "2018-09-18T15:14:15.16+0100",
                                    "2018-09-18 15:14:15.164+0100",
                                    "2018-02-29T15:14:15.164+0100",
                                    "2018-09-18T24:14:15.164+0100",
                                    "2018-09-18T15:14:15.164+2400",
                                    "2018-09-18T15:14:15.164Z",
                                    "2262-04-11T23:47:17.000+0000",
                                    "1677-09-21T00:12:40.000+0000",
                                    "2018-13-18T15:14:15.164+0100",
                                    "nil"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
    CU_ASSERT_FALSE(emc_time_parse(bad[i], strlen(bad[i]), &ns));

  char out[EMC_TIME_TEXT_BYTES];
  emc_time_format(INT64_C(1537280055164999999), 60, out);
  CU_ASSERT_STRING_EQUAL(out, "2018-09-18T15:14:15.164+0100");
  emc_time_format(INT64_C(1537280055164000000), 0, out);
  CU_ASSERT_STRING_EQUAL(out, "2018-09-18T14:14:15.164+0000");
  emc_time_format(-1, 0, out); /* rounds towards the past */
  CU_ASSERT_STRING_EQUAL(out, "1969-12-31T23:59:59.999+0000");
  emc_time_format(INT64_C(951845400500000000), -330, out);
  CU_ASSERT_STRING_EQUAL(out, "2000-02-29T12:00:00.500-0530");
}

static void test_u256(void) {
  EmcU256 v;
  char out[EMC_U256_TEXT_BYTES];
  /* 2^256 - 1 (python3 -c 'print(2**256-1)'). */
  const char *max = "115792089237316195423570985008687907853269984665640564039457584007913129639935";
  CU_ASSERT_TRUE(emc_u256_parse(max, strlen(max), &v));
  emc_u256_format(&v, out);
  CU_ASSERT_STRING_EQUAL(out, max);
  for (int i = 0; i < 32; i++)
    CU_ASSERT_EQUAL(v.be[i], 0xff);
  const char *over = "115792089237316195423570985008687907853269984665640564039457584007913129639936";
  CU_ASSERT_FALSE(emc_u256_parse(over, strlen(over), &v));
  CU_ASSERT_TRUE(emc_u256_parse("000", 3, &v));
  emc_u256_format(&v, out);
  CU_ASSERT_STRING_EQUAL(out, "0");
  CU_ASSERT_FALSE(emc_u256_parse("", 0, &v));
  CU_ASSERT_FALSE(emc_u256_parse("-1", 2, &v));
  CU_ASSERT_FALSE(emc_u256_parse("1e3", 3, &v));
  uint64_t x;
  CU_ASSERT_TRUE(emc_u256_parse("18446744073709551615", 20, &v));
  CU_ASSERT_TRUE(emc_u256_to_u64(&v, &x));
  CU_ASSERT_EQUAL(x, UINT64_MAX);
  CU_ASSERT_TRUE(emc_u256_parse("18446744073709551616", 20, &v));
  CU_ASSERT_FALSE(emc_u256_to_u64(&v, &x));
  CU_ASSERT_DOUBLE_EQUAL(emc_u256_to_double(&v), 18446744073709551616.0, 1.0);
  emc_u256_from_u64(&v, 1234567);
  emc_u256_format(&v, out);
  CU_ASSERT_STRING_EQUAL(out, "1234567");
}

static void test_hash_and_kinds(void) {
  const char *t = "0xAF2426c2fb81c3c2b2d0a392c96c75b74abe38c1ed27be90d89afbf796e682fe";
  EmcHash h = hash_of(t);
  CU_ASSERT_EQUAL(emc_hash_id(&h), UINT64_C(0xaf2426c2fb81c3c2));
  char out[EMC_HASH_TEXT_BYTES];
  emc_hash_format(&h, out);
  CU_ASSERT_STRING_EQUAL(out, "0xaf2426c2fb81c3c2b2d0a392c96c75b74abe38c1ed27be90d89afbf796e682fe");
  CU_ASSERT_FALSE(emc_hash_parse(t, strlen(t) - 1, &h));
  EmcHash from_id;
  emc_hash_from_id(UINT64_C(0xfedcba9876543210), &from_id);
  CU_ASSERT_EQUAL(emc_hash_id(&from_id), UINT64_C(0xfedcba9876543210));
  emc_hash_format(&from_id, out);
  CU_ASSERT_STRING_EQUAL(out, "0xfedcba9876543210000000000000000000000000000000000000000000000000");
  EmcAddress addr;
  emc_address_from_id(7, &addr);
  CU_ASSERT_EQUAL(emc_address_id(&addr), 7);
  CU_ASSERT_EQUAL(addr.bytes[19], 0);
  for (unsigned k = 0; k < EMC_N_KINDS; k++) {
    EmcKind back;
    CU_ASSERT_TRUE(emc_kind_from_name(emc_kind_name((EmcKind)k), &back));
    CU_ASSERT_EQUAL(back, k);
  }
  EmcKind none;
  CU_ASSERT_FALSE(emc_kind_from_name("block", &none));
}

static void test_go_duration(void) {
  static const struct {
    const char *s;
    int64_t ns;
  } ok[] = {{"0", 0},
            {"0s", 0},
            {"1m2.345s", INT64_C(62345000000)},
            {"1h2m3s", INT64_C(3723000000000)},
            {"350ms", INT64_C(350000000)},
            {"1.5\xc2\xb5s", 1500},
            {"12us", 12000},
            {"7ns", 7},
            {"-2s", INT64_C(-2000000000)},
            {"1.500s", INT64_C(1500000000)}};
  for (size_t i = 0; i < G_N_ELEMENTS(ok); i++) {
    int64_t ns = -42;
    CU_ASSERT_TRUE(emc_go_duration_parse(ok[i].s, &ns));
    CU_ASSERT_EQUAL(ns, ok[i].ns);
  }
  static const char *const bad[] = {"", "s", "1", "1x", "1.s5", "3000000h", "1m 2s", ".s"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    int64_t ns;
    CU_ASSERT_FALSE(emc_go_duration_parse(bad[i], &ns));
  }
}

/* ---- The real Rinkeby logs ---------------------------------------------------------------------------- */

/* Expected numbers, computed independently with shell tools in tests/data/emc-rinkeby-2018-09:
 *   lines:               wc -l FILE                                      (InvalidMessages.csv: 10 incl.
 * header) distinct blocks:     cut -d, -f2 NewBlockMsg.log | sort -u | wc -l                  -> 37 distinct
 * heights:    cut -d, -f3 NewBlockMsg.log | sort -u | wc -l                  -> 30 (3010201..3010245) tx
 * entries:          cut -d, -f12 NewBlockMsg.log | tr -cd ';' | wc -c              -> 608
 *   ... distinct blocks: sort -t, -k2,2 -u NewBlockMsg.log | cut -d, -f12 | tr -cd ';' | wc -c -> 358
 *   distinct txs in blocks: cut -d, -f12 NewBlockMsg.log | tr ';' '\n' | grep . | sort -u | wc -l -> 285
 *   uncles:              cut -d, -f13 NewBlockMsg.log | tr -cd ';' | wc -c              -> 0
 *   empty-block lines:   awk -F, '$12==""' NewBlockMsg.log | wc -l                      -> 6
 *   gas used / size sum: cut -d, -f5 (-f11) NewBlockMsg.log | paste -sd+ | bc           -> 126602533 / 458586
 *   distinct announced:  cut -d, -f2 NewBlockHashesMsg.log | sort -u | wc -l            -> 35
 *   ... also in blocks:  comm -12 <(cut ... announcements | sort -u) <(cut ... blocks | sort -u) | wc -l ->
 * 33 distinct txs:        cut -d, -f2 TxMsg.log | sort -u | wc -l                        -> 2548 ValidityErr
 * nil:     awk -F, '$12=="nil"' TxMsg.log | wc -l                         -> 2535 (151 "nonce too low")
 *   MsgType:             cut -d, -f7 TxMsg.log | sort | uniq -c                         -> TX 2280, MC 387,
 * CC 19 To nil:              awk -F, '$10=="nil"' TxMsg.log | wc -l                         -> 19 distinct
 * senders:    cut -d, -f11 TxMsg.log | tr A-F a-f | sort -u | wc -l          -> 120 gas limit / size sum: cut
 * -d, -f3 (-f9) TxMsg.log | paste -sd+ | bc               -> 756873796 / 485589 max nonce:           cut -d,
 * -f6 TxMsg.log | sort -n | tail -1                      -> 559846 value sum:           cut -d, -f5 TxMsg.log
 * | paste -sd+ | bc                        -> 8304565656463926209971 first/last tx time:  cut -d, -f1
 * TxMsg.log | sort | head -1 / tail -1, then date -u -d T +%s%N heads:               sort -u distinct 33;
 * numbers 3010218..3010245, sum 99337651 invalid causes:      tail -n +2 InvalidMessages.csv | cut -d, -f2,3
 * | sort | uniq -c
 */
static void test_real_blocks(void) {
  g_autofree char *path = rinkeby("NewBlockMsg.log");
  EmcReader *r = NULL;
  g_autoptr(GPtrArray) recs = read_path(path, EMC_KIND_BLOCK, &r);
  CU_ASSERT_EQUAL(recs->len, 66);
  CU_ASSERT_EQUAL(emc_reader_records(r), 66);
  CU_ASSERT_EQUAL(emc_reader_bad_lines(r), 0);
  CU_ASSERT_FALSE(emc_reader_has_header(r));
  CU_ASSERT_STRING_EQUAL(emc_reader_compression(r), "plain");
  CU_ASSERT_EQUAL(emc_reader_line(r), 66);
  emc_reader_free(r);

  g_autoptr(GHashTable) blocks = hash_set_new(), txs = hash_set_new(),
                        heights = g_hash_table_new(g_int64_hash, g_int64_equal);
  guint64 tx_entries = 0, tx_distinct_blocks = 0, uncles = 0, empty = 0, gas = 0, size = 0;
  uint64_t hmin = UINT64_MAX, hmax = 0;
  for (guint i = 0; i < recs->len; i++) {
    const EmcBlock *b = &((EmcRecord *)g_ptr_array_index(recs, i))->u.block;
    if (hash_set_add(blocks, &b->hash)) tx_distinct_blocks += b->n_txs;
    g_hash_table_add(heights, (gpointer)&b->number);
    hmin = MIN(hmin, b->number);
    hmax = MAX(hmax, b->number);
    tx_entries += b->n_txs;
    uncles += b->n_uncles;
    empty += b->n_txs == 0;
    gas += b->gas_used;
    size += b->size_bytes;
    for (uint32_t k = 0; k < b->n_txs; k++)
      hash_set_add(txs, &b->txs[k]);
    CU_ASSERT_EQUAL(b->stage.type, EMC_BLOCK_TYPE_NONE);
    CU_ASSERT_EQUAL(b->stage.captured_locally, EMC_FLAG_NONE);
  }
  CU_ASSERT_EQUAL(g_hash_table_size(blocks), 37);
  CU_ASSERT_EQUAL(g_hash_table_size(heights), 30);
  CU_ASSERT_EQUAL(hmin, 3010201);
  CU_ASSERT_EQUAL(hmax, 3010245);
  CU_ASSERT_EQUAL(tx_entries, 608);
  CU_ASSERT_EQUAL(tx_distinct_blocks, 358);
  CU_ASSERT_EQUAL(g_hash_table_size(txs), 285);
  CU_ASSERT_EQUAL(uncles, 0);
  CU_ASSERT_EQUAL(empty, 6);
  CU_ASSERT_EQUAL(gas, 126602533);
  CU_ASSERT_EQUAL(size, 458586);

  /* The first line, field by field. */
  const EmcBlock *b = &((EmcRecord *)g_ptr_array_index(recs, 0))->u.block;
  CU_ASSERT_EQUAL(b->local_ns, INT64_C(1537280055164000000));
  CU_ASSERT_EQUAL(emc_hash_id(&b->hash), UINT64_C(0xaf2426c2fb81c3c2));
  CU_ASSERT_EQUAL(b->number, 3010218);
  CU_ASSERT_EQUAL(b->gas_limit, 7321026);
  CU_ASSERT_EQUAL(b->gas_used, 120488);
  CU_ASSERT_DOUBLE_EQUAL(emc_u256_to_double(&b->difficulty), 2.0, 0);
  CU_ASSERT_EQUAL(b->time_s, 1537280055);
  CU_ASSERT_EQUAL(emc_address_id(&b->coinbase), 0);
  CU_ASSERT_EQUAL(emc_hash_id(&b->parent), UINT64_C(0x21643abc6aa4960a));
  CU_ASSERT_EQUAL(emc_hash_id(&b->uncle_hash), UINT64_C(0x1dcc4de8dec75d7a));
  CU_ASSERT_EQUAL(b->size_bytes, 956);
  CU_ASSERT_EQUAL(b->n_txs, 1);
  CU_ASSERT_EQUAL(emc_hash_id(&b->txs[0]), UINT64_C(0x1c2646e4750f7e99));
  CU_ASSERT_PTR_NULL(b->uncles);
}

static void test_real_announcements(void) {
  g_autofree char *bpath = rinkeby("NewBlockMsg.log");
  g_autofree char *apath = rinkeby("NewBlockHashesMsg.log");
  g_autoptr(GPtrArray) blocks = read_path(bpath, EMC_KIND_BLOCK, NULL);
  g_autoptr(GPtrArray) anns = read_path(apath, EMC_KIND_ANNOUNCEMENT, NULL);
  CU_ASSERT_EQUAL(anns->len, 165);
  g_autoptr(GHashTable) bset = hash_set_new(), aset = hash_set_new();
  for (guint i = 0; i < blocks->len; i++)
    hash_set_add(bset, &((EmcRecord *)g_ptr_array_index(blocks, i))->u.block.hash);
  guint in_blocks = 0;
  for (guint i = 0; i < anns->len; i++) {
    const EmcAnnouncement *a = &((EmcRecord *)g_ptr_array_index(anns, i))->u.announcement;
    if (hash_set_add(aset, &a->hash) && g_hash_table_contains(bset, &a->hash)) in_blocks++;
  }
  CU_ASSERT_EQUAL(g_hash_table_size(aset), 35);
  CU_ASSERT_EQUAL(in_blocks, 33);
  const EmcAnnouncement *first = &((EmcRecord *)g_ptr_array_index(anns, 0))->u.announcement;
  CU_ASSERT_EQUAL(first->local_ns, INT64_C(1537280055080000000)); /* 2018-09-18T15:14:15.080+0100 */
}

static void test_real_txs(void) {
  g_autofree char *path = rinkeby("TxMsg.log");
  g_autoptr(GPtrArray) recs = read_path(path, EMC_KIND_TX, NULL);
  CU_ASSERT_EQUAL(recs->len, 2686);
  g_autoptr(GHashTable) txs = hash_set_new();
  g_autoptr(GHashTable) senders = hash_set_new(); /* addresses, zero-padded to 32 bytes */
  guint nil_err = 0, nonce_low = 0, nil_to = 0, types[3] = {0};
  guint64 gas = 0, size = 0, max_nonce = 0;
  int64_t tmin = INT64_MAX, tmax = INT64_MIN;
  double value = 0;
  for (guint i = 0; i < recs->len; i++) {
    const EmcTx *t = &((EmcRecord *)g_ptr_array_index(recs, i))->u.tx;
    hash_set_add(txs, &t->hash);
    EmcHash from = {{0}};
    memcpy(from.bytes, t->from.bytes, EMC_ADDRESS_BYTES);
    hash_set_add(senders, &from);
    nil_err += t->validity_err == NULL;
    nonce_low += t->validity_err && strcmp(t->validity_err, "nonce too low") == 0;
    nil_to += !t->has_to;
    types[t->type]++;
    gas += t->gas_limit;
    size += t->size_bytes;
    max_nonce = MAX(max_nonce, t->nonce);
    tmin = MIN(tmin, t->local_ns);
    tmax = MAX(tmax, t->local_ns);
    value += emc_u256_to_double(&t->value_wei);
    CU_ASSERT_TRUE(t->has_to == (t->type != EMC_TX_TYPE_CC));
    CU_ASSERT_EQUAL(t->stage.gas_used, EMC_U64_NONE);
    CU_ASSERT_TRUE(isnan(t->stage.commit_s[0]));
  }
  CU_ASSERT_EQUAL(g_hash_table_size(txs), 2548);
  CU_ASSERT_EQUAL(g_hash_table_size(senders), 120);
  CU_ASSERT_EQUAL(nil_err, 2535);
  CU_ASSERT_EQUAL(nonce_low, 151);
  CU_ASSERT_EQUAL(nil_to, 19);
  CU_ASSERT_EQUAL(types[EMC_TX_TYPE_TX], 2280);
  CU_ASSERT_EQUAL(types[EMC_TX_TYPE_MC], 387);
  CU_ASSERT_EQUAL(types[EMC_TX_TYPE_CC], 19);
  CU_ASSERT_EQUAL(gas, 756873796);
  CU_ASSERT_EQUAL(size, 485589);
  CU_ASSERT_EQUAL(max_nonce, 559846);
  CU_ASSERT_EQUAL(tmin, INT64_C(1537280025824000000)); /* 2018-09-18T15:13:45.824+0100 */
  CU_ASSERT_EQUAL(tmax, INT64_C(1537280469334000000)); /* 2018-09-18T15:21:09.334+0100 */
  CU_ASSERT_DOUBLE_EQUAL(value / 8304565656463926209971.0, 1.0, 1e-12);
}

static void test_real_heads_and_invalid(void) {
  g_autofree char *hpath = rinkeby("NewBlockHead.log");
  g_autoptr(GPtrArray) heads = read_path(hpath, EMC_KIND_HEAD, NULL);
  CU_ASSERT_EQUAL(heads->len, 33);
  g_autoptr(GHashTable) hs = hash_set_new();
  uint64_t sum = 0, lo = UINT64_MAX, hi = 0;
  for (guint i = 0; i < heads->len; i++) {
    const EmcHead *h = &((EmcRecord *)g_ptr_array_index(heads, i))->u.head;
    hash_set_add(hs, &h->hash);
    sum += h->number;
    lo = MIN(lo, h->number);
    hi = MAX(hi, h->number);
  }
  CU_ASSERT_EQUAL(g_hash_table_size(hs), 33);
  CU_ASSERT_EQUAL(sum, 99337651);
  CU_ASSERT_EQUAL(lo, 3010218);
  CU_ASSERT_EQUAL(hi, 3010245);

  g_autofree char *ipath = rinkeby("InvalidMessages.csv");
  EmcReader *r = NULL;
  g_autoptr(GPtrArray) inv = read_path(ipath, EMC_KIND_INVALID_MSG, &r);
  CU_ASSERT_TRUE(emc_reader_has_header(r)); /* the raw file starts with LocalTimestamp,MessageType,Cause */
  CU_ASSERT_EQUAL(emc_reader_bad_lines(r), 0);
  emc_reader_free(r);
  CU_ASSERT_EQUAL(inv->len, 9);
  guint status2 = 0, getheaders4 = 0, headers5 = 0, headers6 = 0;
  for (guint i = 0; i < inv->len; i++) {
    const EmcInvalidMsg *m = &((EmcRecord *)g_ptr_array_index(inv, i))->u.invalid;
    g_autofree char *key = g_strdup_printf("%s/%u", m->msg_type, m->cause);
    status2 += strcmp(key, "StatusMsg/2") == 0;
    getheaders4 += strcmp(key, "GetBlockHeadersMsg/4") == 0;
    headers5 += strcmp(key, "BlockHeadersMsg/5") == 0;
    headers6 += strcmp(key, "BlockHeadersMsg/6") == 0;
  }
  CU_ASSERT_EQUAL(status2, 5);
  CU_ASSERT_EQUAL(getheaders4, 1);
  CU_ASSERT_EQUAL(headers5, 1);
  CU_ASSERT_EQUAL(headers6, 2);
}

/* Rewriting every real log at its own UTC offset (+0100) gives back the file byte for byte: field order,
 * lowercase hashes, EIP-55 addresses, quoting, the 3-digit cause, the header line. */
static void test_real_byte_exact(void) {
  static const struct {
    const char *file;
    EmcKind kind;
    gboolean header;
  } files[] = {{"NewBlockMsg.log", EMC_KIND_BLOCK, FALSE},
               {"NewBlockHashesMsg.log", EMC_KIND_ANNOUNCEMENT, FALSE},
               {"TxMsg.log", EMC_KIND_TX, FALSE},
               {"NewBlockHead.log", EMC_KIND_HEAD, FALSE},
               {"InvalidMessages.csv", EMC_KIND_INVALID_MSG, TRUE}};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *path = rinkeby(files[i].file);
    g_autoptr(GPtrArray) recs = read_path(path, files[i].kind, NULL);
    gsize n, m;
    g_autofree char *orig = slurp(path, &n);
    g_autofree char *out = write_all(recs, files[i].kind, 60, files[i].header, &m);
    CU_ASSERT_EQUAL(m, n);
    CU_ASSERT_TRUE(m == n && memcmp(orig, out, n) == 0);
    /* In UTC the records stay the same. */
    g_autofree char *utc = write_all(recs, files[i].kind, 0, files[i].header, &m);
    EmcReader *r = emc_reader_new_from_bytes(utc, m, "utc", files[i].kind, EMC_READER_STRICT);
    g_autoptr(GError) err = NULL;
    g_autoptr(GPtrArray) back = read_all(r, &err);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT_TRUE(same_records(recs, back, FALSE));
    emc_reader_free(r);
  }
}

/* ---- Stage CSVs --------------------------------------------------------------------------------------- */

static void check_template(const char *dir, const char *file, EmcKind kind) {
  g_autofree char *path = test_data(dir, file);
  g_autoptr(GError) err = NULL;
  g_autoptr(EmcReader) r = emc_reader_open(path, kind, EMC_READER_STRICT, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  EmcRecord rec;
  CU_ASSERT_FALSE(emc_reader_next(r, &rec, &err));
  if (err) fprintf(stderr, "%s\n", err->message);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_TRUE(emc_reader_has_header(r));
  CU_ASSERT_EQUAL(emc_reader_records(r), 0);
  if (kind == EMC_KIND_PROPAGATION) {
    CU_ASSERT_EQUAL(emc_reader_n_vantages(r), 4);
    CU_ASSERT_STRING_EQUAL(emc_reader_vantage_name(r, 0), "Angainor");
    CU_ASSERT_STRING_EQUAL(emc_reader_vantage_name(r, 3), "S2CN");
  }
}

static void test_stage_templates(void) {
  static const struct {
    const char *file;
    EmcKind kind;
  } stage[] = {{"blocks-before-Stage-1.csv", EMC_KIND_BLOCK},
               {"blocks-after-Stage-1.csv", EMC_KIND_BLOCK},
               {"txs-before-Stage-0.csv", EMC_KIND_TX},
               {"txs-after-Stage-0.csv", EMC_KIND_TX},
               {"blocksAnnouncements.csv", EMC_KIND_ANNOUNCEMENT},
               {"heads.csv", EMC_KIND_HEAD},
               {"invalidMsgs.csv", EMC_KIND_INVALID_MSG},
               {"peers.csv", EMC_KIND_PEER},
               {"txgasused.csv", EMC_KIND_TX_GAS_USED},
               {"blocks-propagation-times.csv", EMC_KIND_PROPAGATION},
               {"blocks-propagation-times-v2.csv", EMC_KIND_PROPAGATION},
               {"blocks-propagation-times-v3.csv", EMC_KIND_PROPAGATION}},
    rinkeby_t[] = {{"template_Blocks.csv", EMC_KIND_BLOCK},
                   {"template_NewBlockMsg.csv", EMC_KIND_BLOCK},
                   {"template_NewBlockHashesMsg.csv", EMC_KIND_ANNOUNCEMENT},
                   {"template_NewBlockHead.csv", EMC_KIND_HEAD},
                   {"template_InvalidMessages.csv", EMC_KIND_INVALID_MSG},
                   {"template_Peers.csv", EMC_KIND_PEER},
                   {"template_TxMsg.csv", EMC_KIND_TX}};
  for (size_t i = 0; i < G_N_ELEMENTS(stage); i++)
    check_template("emc-stage-templates", stage[i].file, stage[i].kind);
  for (size_t i = 0; i < G_N_ELEMENTS(rinkeby_t); i++)
    check_template("emc-rinkeby-2018-09", rinkeby_t[i].file, rinkeby_t[i].kind);
}

/* blocks-after-Stage-1 rows built from real lines, with the columns shuffled and an unknown column added:
 * the raw fields read back equal to the raw log's, the stage columns as written. */
static void test_stage_blocks(void) {
  g_autofree char *path = rinkeby("NewBlockMsg.log");
  gsize n;
  g_autofree char *text = slurp(path, &n);
  g_auto(GStrv) lines = g_strsplit(text, "\n", 4);
  static const char *const header[] = {
      "BlockType", "Note",      "ListOfUncles", "LocalTimestamp", "BlockHash",      "Number",
      "GasLimit",  "GasUsed",   "Difficulty",   "Time",           "Coinbase",       "ParentHash",
      "UncleHash", "BlockSize", "ListOfTxs",    "ForkLength",     "CapturedLocally"};
  /* Index of each header column in the raw line (-1: a stage or unknown column). */
  static const int raw_of[] = {-1, -1, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -1, -1};
  static const char *const stage_vals[3][4] = {/* BlockType, Note, ForkLength, CapturedLocally */
                                               {"Main", "\"a, b\"", "", "True"},
                                               {"Uncle", "x", "2.0", "False"},
                                               {"", "", "", ""}};
  GString *csv = g_string_new(NULL);
  for (size_t c = 0; c < G_N_ELEMENTS(header); c++)
    g_string_append_printf(csv, "%s%s", c ? "," : "", header[c]);
  g_string_append(csv, "\r\n");
  for (int row = 0; row < 3; row++) {
    g_auto(GStrv) f = g_strsplit(lines[row], ",", -1);
    CU_ASSERT_EQUAL_FATAL(g_strv_length(f), 13);
    for (size_t c = 0; c < G_N_ELEMENTS(header); c++) {
      const char *v = raw_of[c] >= 0                         ? f[raw_of[c]]
                      : strcmp(header[c], "BlockType") == 0  ? stage_vals[row][0]
                      : strcmp(header[c], "Note") == 0       ? stage_vals[row][1]
                      : strcmp(header[c], "ForkLength") == 0 ? stage_vals[row][2]
                                                             : stage_vals[row][3];
      g_string_append_printf(csv, "%s%s", c ? "," : "", v);
    }
    g_string_append(csv, "\r\n");
  }
  g_autoptr(EmcReader) raw = emc_reader_new_from_bytes(text, n, "raw", EMC_KIND_BLOCK, EMC_READER_STRICT);
  g_autoptr(EmcReader) st =
      emc_reader_new_from_bytes(csv->str, csv->len, "stage.csv", EMC_KIND_BLOCK, EMC_READER_STRICT);
  g_autoptr(GError) err = NULL;
  for (int row = 0; row < 3; row++) {
    EmcRecord a, b;
    CU_ASSERT_TRUE_FATAL(emc_reader_next(raw, &a, &err));
    g_autoptr(EmcRecord) keep = emc_record_dup(&a);
    CU_ASSERT_TRUE_FATAL(emc_reader_next(st, &b, &err));
    CU_ASSERT_TRUE(emc_record_equal(keep, &b, FALSE));
    CU_ASSERT_FALSE(emc_record_equal(keep, &b, TRUE) && row < 2);
    const EmcBlockStage *s = &b.u.block.stage;
    if (row == 0) {
      CU_ASSERT_EQUAL(s->type, EMC_BLOCK_TYPE_MAIN);
      CU_ASSERT_EQUAL(s->captured_locally, EMC_FLAG_TRUE);
      CU_ASSERT_EQUAL(s->fork_length, EMC_U64_NONE);
    } else if (row == 1) {
      CU_ASSERT_EQUAL(s->type, EMC_BLOCK_TYPE_UNCLE);
      CU_ASSERT_STRING_EQUAL(s->type_text, "Uncle");
      CU_ASSERT_EQUAL(s->captured_locally, EMC_FLAG_FALSE);
      CU_ASSERT_EQUAL(s->fork_length, 2);
    } else {
      CU_ASSERT_EQUAL(s->type, EMC_BLOCK_TYPE_NONE);
      CU_ASSERT_PTR_NULL(s->type_text);
      CU_ASSERT_EQUAL(s->captured_locally, EMC_FLAG_NONE);
    }
  }
  EmcRecord rec;
  CU_ASSERT_FALSE(emc_reader_next(st, &rec, &err));
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_TRUE(emc_reader_has_header(st));
  g_string_free(csv, TRUE);
}

static void test_stage_txs(void) {
  const char *csv =
      "LocalTimeStamp,Hash,GasLimit,GasPrice,Value,Nonce,MsgType,Cost,Size,To,From,ValidityErr,"
      "CapturedLocally,"
      "GasUsed,InMainBlock,InUncleBlocks,InOrder,NeverCommitting,RemoteTimeStamp,CommitTime0,CommitTime3,"
      "CommitTime12,CommitTime36\n"
      "2019-04-01T10:00:00.123+0200,0x46e478f337c803662d0df11acc1e09198ecf3bd268cce8ea7fe067b3753ba950,24977,"
      "1000000000,0,83,MC,24977000000000,137,0x1aE182d95A8d3D6f9Feb7A0e68f02C254aDAcCdf,"
      "0x45a9Ba9aC1367173962825A8339CdBaFB2987AE4,nonce too low,True,21000.0,"
      "0xaf2426c2fb81c3c2b2d0a392c96c75b74abe38c1ed27be90d89afbf796e682fe,"
      "0xc26739054129cb52d2af2ca384da312249ee1f86893cdadb962ab56e0d5a68b5;"
      "0x709ea985c5f46e6602e7c0a07c228000b3a1e1d6c0b72a19d1734d0b780dea30;,False,Committed,"
      "2019-04-01 08:00:00.5Z,12.5,55.25,,\n"
      "2019-04-01T10:00:01.000+0200,0x47d7c5bfd9fd2a21bcc52bba2a3f1f375628218ba7fa587046a9ccaa99a092b9,"
      "800000,"
      "5000000000,0,3325,CC,4000000000000000,141,nil,0x548EF19f1520a522bFc5E4f91cad820D082bFCAA,nil,,,,,,,,,,"
      ",\n";
  g_autoptr(EmcReader) r =
      emc_reader_new_from_bytes(csv, strlen(csv), "txs.csv", EMC_KIND_TX, EMC_READER_STRICT);
  g_autoptr(GError) err = NULL;
  EmcTx t;
  CU_ASSERT_TRUE_FATAL(emc_reader_next_tx(r, &t, &err));
  CU_ASSERT_EQUAL(t.local_ns,
                  INT64_C(1554105600123000000)); /* date -u -d 2019-04-01T10:00:00.123+0200 +%s%N */
  CU_ASSERT_STRING_EQUAL(t.validity_err, "nonce too low");
  CU_ASSERT_EQUAL(t.stage.captured_locally, EMC_FLAG_TRUE);
  CU_ASSERT_EQUAL(t.stage.gas_used, 21000);
  CU_ASSERT_TRUE(t.stage.has_in_main_block);
  CU_ASSERT_EQUAL(emc_hash_id(&t.stage.in_main_block), UINT64_C(0xaf2426c2fb81c3c2));
  CU_ASSERT_EQUAL(t.stage.n_in_uncle_blocks, 2);
  CU_ASSERT_EQUAL(emc_hash_id(&t.stage.in_uncle_blocks[1]), UINT64_C(0x709ea985c5f46e66));
  CU_ASSERT_EQUAL(t.stage.in_order, EMC_FLAG_FALSE);
  CU_ASSERT_STRING_EQUAL(t.stage.never_committing, "Committed");
  CU_ASSERT_EQUAL(t.stage.remote_ns, INT64_C(1554105600500000000));
  CU_ASSERT_DOUBLE_EQUAL(t.stage.commit_s[0], 12.5, 0);
  CU_ASSERT_DOUBLE_EQUAL(t.stage.commit_s[1], 55.25, 0);
  CU_ASSERT_TRUE(isnan(t.stage.commit_s[2]) && isnan(t.stage.commit_s[3]));
  CU_ASSERT_TRUE_FATAL(emc_reader_next_tx(r, &t, &err));
  CU_ASSERT_EQUAL(t.type, EMC_TX_TYPE_CC);
  CU_ASSERT_FALSE(t.has_to);
  CU_ASSERT_PTR_NULL(t.validity_err);
  CU_ASSERT_EQUAL(t.stage.captured_locally, EMC_FLAG_NONE);
  CU_ASSERT_EQUAL(t.stage.gas_used, EMC_U64_NONE);
  CU_ASSERT_FALSE(t.stage.has_in_main_block);
  CU_ASSERT_EQUAL(t.stage.n_in_uncle_blocks, 0);
  CU_ASSERT_PTR_NULL(t.stage.never_committing);
  CU_ASSERT_EQUAL(t.stage.remote_ns, OBS_TIME_NONE);
  CU_ASSERT_FALSE(emc_reader_next_tx(r, &t, &err));
  CU_ASSERT_PTR_NULL(err);
}

static const char *const PROP_V3_HEADER =
    "BlockHash,Number,BlockType,AngainorTimeStamp,FalconTimeStamp,S1USTimeStamp,S2CNTimeStamp,"
    "FirstObservation,"
    "AngainorDiff,FalconDiff,S1USDiff,S2CNDiff,MiningPool,NumTransactions,SameMinerSeqLen,PositionInsideSeq,"
    "Difficulty,BlockSize,InterblockTime,InterblockTimePerPool";
#define PROP_ROW                                                                                             \
  "0x2adafead120b03d58f709100d7f0883917882641a2f67f32457b8685cb1613b3,7479130,Main,2019-04-01T10:00:00.100+" \
  "0200,"                                                                                                    \
  "2019-04-01T10:00:00.350+0200,,2019-04-01T10:00:00.600+0200,2019-04-01T10:00:00.100+0200,0.0,0.25,,0.5"
#define PROP_V2_TAIL ",Ethermine,120,2,1,2160000000000000,25000"

static void check_prop_row(const EmcPropagation *p, gboolean v2, gboolean v3) {
  CU_ASSERT_EQUAL(emc_hash_id(&p->hash), UINT64_C(0x2adafead120b03d5));
  CU_ASSERT_EQUAL(p->number, 7479130);
  CU_ASSERT_EQUAL(p->type, EMC_BLOCK_TYPE_MAIN);
  CU_ASSERT_EQUAL_FATAL(p->n_vantages, 4);
  CU_ASSERT_EQUAL(p->seen_ns[0], INT64_C(1554105600100000000));
  CU_ASSERT_EQUAL(p->seen_ns[1], INT64_C(1554105600350000000));
  CU_ASSERT_EQUAL(p->seen_ns[2], OBS_TIME_NONE);
  CU_ASSERT_EQUAL(p->first_ns, INT64_C(1554105600100000000));
  CU_ASSERT_DOUBLE_EQUAL(p->diff_s[1], 0.25, 0);
  CU_ASSERT_TRUE(isnan(p->diff_s[2]));
  CU_ASSERT_DOUBLE_EQUAL(p->diff_s[3], 0.5, 0);
  if (v2) {
    CU_ASSERT_STRING_EQUAL(p->mining_pool, "Ethermine");
    CU_ASSERT_EQUAL(p->num_txs, 120);
    CU_ASSERT_EQUAL(p->same_miner_seq_len, 2);
    CU_ASSERT_EQUAL(p->position_inside_seq, 1);
    CU_ASSERT_DOUBLE_EQUAL(p->difficulty, 2.16e15, 0);
    CU_ASSERT_EQUAL(p->size_bytes, 25000);
  } else {
    CU_ASSERT_PTR_NULL(p->mining_pool);
    CU_ASSERT_EQUAL(p->num_txs, EMC_U64_NONE);
    CU_ASSERT_TRUE(isnan(p->difficulty));
  }
  if (v3) {
    CU_ASSERT_DOUBLE_EQUAL(p->interblock_s, 13.5, 0);
  } else {
    CU_ASSERT_TRUE(isnan(p->interblock_s));
  }
  CU_ASSERT_TRUE(isnan(p->interblock_per_pool_s));
}

static void test_stage_propagation(void) {
  g_autoptr(GError) err = NULL;
  EmcPropagation p;
  /* With the v3 header. */
  g_autofree char *v3 = g_strconcat(PROP_V3_HEADER, "\n", PROP_ROW PROP_V2_TAIL ",13.5,\n", NULL);
  g_autoptr(EmcReader) r =
      emc_reader_new_from_bytes(v3, strlen(v3), "v3.csv", EMC_KIND_PROPAGATION, EMC_READER_STRICT);
  CU_ASSERT_TRUE_FATAL(emc_reader_next_propagation(r, &p, &err));
  check_prop_row(&p, TRUE, TRUE);
  CU_ASSERT_STRING_EQUAL(emc_reader_vantage_name(r, 1), "Falcon");
  /* Headerless: the three layouts by field count. */
  const char *rows =
      PROP_ROW "\n" PROP_ROW PROP_V2_TAIL "\n" PROP_ROW PROP_V2_TAIL ",13.5,\n" PROP_ROW ",x\n";
  g_autoptr(EmcReader) h = emc_reader_new_from_bytes(rows, strlen(rows), "rows.log", EMC_KIND_PROPAGATION, 0);
  CU_ASSERT_TRUE_FATAL(emc_reader_next_propagation(h, &p, &err));
  check_prop_row(&p, FALSE, FALSE);
  CU_ASSERT_TRUE_FATAL(emc_reader_next_propagation(h, &p, &err));
  check_prop_row(&p, TRUE, FALSE);
  CU_ASSERT_TRUE_FATAL(emc_reader_next_propagation(h, &p, &err));
  check_prop_row(&p, TRUE, TRUE);
  CU_ASSERT_FALSE(emc_reader_next_propagation(h, &p, &err));
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_EQUAL(emc_reader_bad_lines(h), 1);
  CU_ASSERT_STRING_EQUAL(emc_reader_bad_line_messages(h)[0],
                         "rows.log:4: expected 12, 18 or 20 fields, found 13");
  CU_ASSERT_FALSE(emc_reader_has_header(h));
  CU_ASSERT_EQUAL(emc_reader_n_vantages(h), 4);
  /* A different vantage set in a later part is a header error. */
  g_autofree char *dir = tmp_dir();
  const char *other = "BlockHash,Number,BlockType,AngainorTimeStamp,FirstObservation\n";
  put_file(dir, "a.csv", v3, strlen(v3));
  put_file(dir, "b.csv", other, strlen(other));
  g_autofree char *a = g_build_filename(dir, "a.csv", NULL);
  g_autofree char *b = g_build_filename(dir, "b.csv", NULL);
  const char *parts[] = {a, b, NULL};
  g_autoptr(EmcReader) m = emc_reader_open_parts(parts, EMC_KIND_PROPAGATION, 0, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_TRUE(emc_reader_next_propagation(m, &p, &err));
  CU_ASSERT_FALSE(emc_reader_next_propagation(m, &p, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_HEADER));
  g_autofree char *want = g_strdup_printf("%s:1: the vantage points differ from those of the first file", b);
  if (err) CU_ASSERT_STRING_EQUAL(err->message, want);
  rm_dir(dir);
}

/* ---- Malformed lines ---------------------------------------------------------------------------------- */

/* Each tests/data/emc-bad/X has X.expected: "kind K", "records N", "bad N", "error MESSAGE|-", then the
 * kept bad-line messages, exactly. */
static void test_bad_corpus(void) {
  const char *dir = "tests/data/emc-bad";
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  const char *name;
  guint checked = 0;
  while ((name = g_dir_read_name(d))) {
    if (g_str_has_suffix(name, ".expected")) continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *epath = g_strconcat(path, ".expected", NULL);
    gsize n;
    g_autofree char *exp = slurp(epath, &n);
    g_auto(GStrv) el = g_strsplit(exp, "\n", -1);
    CU_ASSERT_FATAL(g_strv_length(el) >= 5);
    EmcKind kind;
    CU_ASSERT_FATAL(g_str_has_prefix(el[0], "kind ") && emc_kind_from_name(el[0] + 5, &kind));
    guint64 want_records = g_ascii_strtoull(el[1] + 8, NULL, 10),
            want_bad = g_ascii_strtoull(el[2] + 4, NULL, 10);
    const char *want_error = el[3] + 6;

    g_autoptr(GError) err = NULL;
    g_autoptr(EmcReader) r = emc_reader_open(path, kind, EMC_READER_DEFAULT, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    g_autoptr(GPtrArray) recs = read_all(r, &err);
    if (strcmp(want_error, "-") == 0) {
      CU_ASSERT_PTR_NULL(err);
    } else {
      CU_ASSERT_PTR_NOT_NULL(err);
      if (err) CU_ASSERT_STRING_EQUAL(err->message, want_error);
    }
    CU_ASSERT_EQUAL(recs->len, want_records);
    CU_ASSERT_EQUAL(emc_reader_bad_lines(r), want_bad);
    const char *const *msgs = emc_reader_bad_line_messages(r);
    guint i = 0;
    for (; el[4 + i] && *el[4 + i]; i++) {
      CU_ASSERT_PTR_NOT_NULL_FATAL(msgs[i]);
      if (strcmp(msgs[i], el[4 + i]) != 0)
        fprintf(stderr, "\n%s\n  got  %s\n  want %s\n", path, msgs[i], el[4 + i]);
      CU_ASSERT_STRING_EQUAL(msgs[i], el[4 + i]);
    }
    CU_ASSERT_PTR_NULL(msgs[i]);
    CU_ASSERT_TRUE(i == MIN(want_bad, EMC_BAD_LINES_KEPT));

    /* Strict mode stops at the first bad line with that same message. */
    if (want_bad > 0) {
      g_autoptr(GError) serr = NULL;
      g_autoptr(EmcReader) s = emc_reader_open(path, kind, EMC_READER_STRICT, &serr);
      g_autoptr(GPtrArray) srecs = read_all(s, &serr);
      CU_ASSERT_TRUE(g_error_matches(serr, EMC_ERROR, EMC_ERROR_BAD_LINE));
      if (serr) CU_ASSERT_STRING_EQUAL(serr->message, el[4]);
      CU_ASSERT_EQUAL(emc_reader_bad_lines(s), 0);
      EmcRecord rec;
      CU_ASSERT_FALSE(emc_reader_next(s, &rec, NULL)); /* stays finished */
    }
    checked++;
  }
  CU_ASSERT_EQUAL(checked, 12);
}

static void test_open_errors(void) {
  g_autoptr(GError) err = NULL;
  CU_ASSERT_PTR_NULL(emc_reader_open("tests/data/emc-bad/no-such-file.log", EMC_KIND_BLOCK, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_IO));
  if (err)
    CU_ASSERT_STRING_EQUAL(err->message, "tests/data/emc-bad/no-such-file.log: No such file or directory");
  g_clear_error(&err);
  CU_ASSERT_PTR_NULL(emc_reader_open("tests/data", EMC_KIND_BLOCK, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_IO));
}

/* ---- Line endings, blank lines, byte-order mark, long lines ------------------------------------------ */

static void test_lines(void) {
  g_autofree char *path = rinkeby("NewBlockHead.log");
  gsize n;
  g_autofree char *text = slurp(path, &n);
  g_autoptr(GPtrArray) plain = read_path(path, EMC_KIND_HEAD, NULL);
  /* CRLF, blank lines (also "\r" alone), a byte-order mark before a header. */
  g_auto(GStrv) split = g_strsplit(text, "\n", -1);
  g_autofree char *crlf_body = g_strjoinv("\r\n\r\n\n", split);
  g_autofree char *crlf = g_strconcat("\xef\xbb\xbf LocalTimestamp , BlockHash,Number\r\n", crlf_body, NULL);
  g_autoptr(EmcReader) r =
      emc_reader_new_from_bytes(crlf, strlen(crlf), "crlf", EMC_KIND_HEAD, EMC_READER_STRICT);
  g_autoptr(GError) err = NULL;
  g_autoptr(GPtrArray) back = read_all(r, &err);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_TRUE(emc_reader_has_header(r));
  CU_ASSERT_TRUE(same_records(plain, back, TRUE));

  /* A line over the cap is bad; reading goes on after it. 46 lines of NewBlockMsg.log have at most 1000
   * bytes, the first longer one is line 2 (awk '{ if (length($0) > 1000) ... }'). */
  g_autofree char *bpath = rinkeby("NewBlockMsg.log");
  gsize bn;
  g_autofree char *btext = slurp(bpath, &bn);
  g_autoptr(EmcReader) l = emc_reader_new_from_bytes(btext, bn, "long", EMC_KIND_BLOCK, 0);
  emc_reader_set_max_line_bytes(l, 1000);
  g_autoptr(GPtrArray) most = read_all(l, &err);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_EQUAL(most->len, 46);
  CU_ASSERT_EQUAL(emc_reader_bad_lines(l), 20);
  CU_ASSERT_STRING_EQUAL(emc_reader_bad_line_messages(l)[0], "long:2: line longer than 1000 bytes");

  /* Empty input and whitespace-only input give no record and no bad line. */
  g_autoptr(EmcReader) e = emc_reader_new_from_bytes("", 0, "empty", EMC_KIND_HEAD, EMC_READER_STRICT);
  EmcRecord rec;
  CU_ASSERT_FALSE(emc_reader_next(e, &rec, &err));
  CU_ASSERT_PTR_NULL(err);
  g_autoptr(EmcReader) w =
      emc_reader_new_from_bytes("\n\r\n\n", 4, "blank", EMC_KIND_HEAD, EMC_READER_STRICT);
  CU_ASSERT_FALSE(emc_reader_next(w, &rec, &err));
  CU_ASSERT_PTR_NULL(err);
}

/* ---- Compression -------------------------------------------------------------------------------------- */

static void check_compressed(GBytes *z, const char *format, GPtrArray *want, const char *dir,
                             const char *fname) {
  gsize n;
  const void *p = g_bytes_get_data(z, &n);
  g_autoptr(GError) err = NULL;
  g_autoptr(EmcReader) r = emc_reader_new_from_bytes(p, n, fname, EMC_KIND_TX, EMC_READER_STRICT);
  g_autoptr(GPtrArray) got = read_all(r, &err);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_STRING_EQUAL(emc_reader_compression(r), format);
  CU_ASSERT_TRUE(same_records(want, got, TRUE));
  /* The same from a file, read through the fd in 64 KiB chunks. */
  put_file(dir, fname, p, n);
  g_autofree char *path = g_build_filename(dir, fname, NULL);
  g_autoptr(GPtrArray) fgot = read_path(path, EMC_KIND_TX, NULL);
  CU_ASSERT_TRUE(same_records(want, fgot, TRUE));
}

static void test_compression(void) {
  g_autofree char *path = rinkeby("TxMsg.log");
  gsize n;
  g_autofree char *text = slurp(path, &n);
  g_autoptr(GPtrArray) plain = read_path(path, EMC_KIND_TX, NULL);
  g_autoptr(GPtrArray) twice = g_ptr_array_new();
  for (int k = 0; k < 2; k++)
    for (guint i = 0; i < plain->len; i++)
      g_ptr_array_add(twice, g_ptr_array_index(plain, i));
  g_autofree char *dir = tmp_dir();
  g_autoptr(GBytes) gz = gzip_bytes(text, n), xz = xz_bytes(text, n), lz = lzma_alone_bytes(text, n);
  check_compressed(gz, "gzip", plain, dir, "txs.log.gz");
  check_compressed(xz, "xz", plain, dir, "txs.log.xz");
  check_compressed(lz, "lzma", plain, dir, "txs.log.lzma");
  /* Concatenated members / streams read as one, as zcat and xzcat do. */
  g_autoptr(GBytes) gz2 = concat2(gz), xz2 = concat2(xz);
  check_compressed(gz2, "gzip", twice, dir, "twice.gz");
  check_compressed(xz2, "xz", twice, dir, "twice.xz");

  /* Truncated and corrupt data: the records before, then EMC_ERROR_COMPRESSION. */
  struct {
    GBytes *z;
    gboolean corrupt;
    const char *want;
  } broken[] = {{gz, FALSE, "cut: gzip: unexpected end of compressed data (truncated file?)"},
                {xz, FALSE, "cut: xz: unexpected end of compressed data (truncated file?)"},
                {lz, FALSE, "cut: lzma: unexpected end of compressed data (truncated file?)"},
                {xz, TRUE, "cut: xz: compressed data is corrupt"}};
  for (size_t i = 0; i < G_N_ELEMENTS(broken); i++) {
    gsize zn;
    const guint8 *zp = g_bytes_get_data(broken[i].z, &zn);
    g_autofree guint8 *copy = g_memdup2(zp, zn);
    if (broken[i].corrupt)
      for (gsize k = zn / 2; k < zn / 2 + 64; k++)
        copy[k] ^= 0x5a;
    gsize len = broken[i].corrupt ? zn : zn / 2;
    g_autoptr(GError) err = NULL;
    g_autoptr(EmcReader) r = emc_reader_new_from_bytes(copy, len, "cut", EMC_KIND_TX, 0);
    g_autoptr(GPtrArray) got = read_all(r, &err);
    CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_COMPRESSION));
    if (err) CU_ASSERT_STRING_EQUAL(err->message, broken[i].want);
    CU_ASSERT_TRUE(got->len > 0 && got->len < plain->len);
    CU_ASSERT_TRUE(got->len == 0 ||
                   emc_record_equal(g_ptr_array_index(got, 0), g_ptr_array_index(plain, 0), TRUE));
  }
  rm_dir(dir);
}

/* ---- Round trips -------------------------------------------------------------------------------------- */

static const char *const STRINGS[] = {"nonce too low",
                                      "",
                                      "nil",
                                      "a,b",
                                      "with \"quotes\" and \\ back\nslash\ttab\rcr",
                                      "a\\b",
                                      "x=y",
                                      "\"",
                                      "\\",
                                      "trailing \\",
                                      "caf\xc3\xa9 \x01"};

static void roundtrip(GPtrArray *recs, EmcKind kind, gboolean header) {
  for (int off = -330; off <= 60; off += 390) {
    gsize n;
    g_autofree char *text = write_all(recs, kind, off, header, &n);
    g_autoptr(EmcReader) r = emc_reader_new_from_bytes(text, n, "roundtrip", kind, EMC_READER_STRICT);
    g_autoptr(GError) err = NULL;
    g_autoptr(GPtrArray) back = read_all(r, &err);
    if (err) fprintf(stderr, "%s\n%s", err->message, text);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT_EQUAL(back->len, recs->len);
    for (guint i = 0; i < MIN(back->len, recs->len); i++)
      if (!emc_record_equal(g_ptr_array_index(recs, i), g_ptr_array_index(back, i), FALSE)) {
        CU_FAIL("record differs after write and read");
        fprintf(stderr, "%s #%u differs in:\n%s", emc_kind_name(kind), i, text);
      }
    CU_ASSERT_EQUAL(emc_reader_has_header(r), header);
  }
}

static EmcRecord *rec_new(EmcKind kind) {
  EmcRecord *r = g_new0(EmcRecord, 1);
  r->kind = kind;
  return r;
}

static void test_roundtrip_all_kinds(void) {
  EmcHash h1 = hash_of("0xaf2426c2fb81c3c2b2d0a392c96c75b74abe38c1ed27be90d89afbf796e682fe"),
          h2 = hash_of("0x00000000000000000000000000000000000000000000000000000000000000ff");
  EmcAddress a1 = address_of("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed");
  EmcHash list[3] = {h1, h2, h1};
  EmcU256 big;
  const char *bigs = "1606938044258990275541962092341162602522202993782792835301377"; /* 2^200 + 1 */
  g_assert(emc_u256_parse(bigs, strlen(bigs), &big));
  const int64_t times[] = {INT64_C(1537280055164000000), -1000000, 0, INT64_C(9223372035999000000)};

  g_autoptr(GPtrArray) blocks = g_ptr_array_new_with_free_func((GDestroyNotify)emc_record_free);
  for (int i = 0; i < 4; i++) {
    EmcRecord *r = rec_new(EMC_KIND_BLOCK);
    EmcBlock *b = &r->u.block;
    *b = (EmcBlock){.local_ns = times[i],
                    .hash = h1,
                    .number = (uint64_t)i * 7479130,
                    .gas_limit = UINT64_MAX,
                    .gas_used = 0,
                    .time_s = 1537280055,
                    .coinbase = a1,
                    .parent = h2,
                    .uncle_hash = h1,
                    .size_bytes = 609,
                    .n_txs = (uint32_t)(i % 4),
                    .n_uncles = (uint32_t)(i % 3)};
    b->difficulty = big;
    b->txs = b->n_txs ? g_memdup2(list, b->n_txs * sizeof(EmcHash)) : NULL;
    b->uncles = b->n_uncles ? g_memdup2(list, b->n_uncles * sizeof(EmcHash)) : NULL;
    g_ptr_array_add(blocks, r);
  }
  roundtrip(blocks, EMC_KIND_BLOCK, FALSE);

  g_autoptr(GPtrArray) txs = g_ptr_array_new_with_free_func((GDestroyNotify)emc_record_free);
  for (size_t i = 0; i < G_N_ELEMENTS(STRINGS) + 1; i++) {
    EmcRecord *r = rec_new(EMC_KIND_TX);
    EmcTx *t = &r->u.tx;
    t->local_ns = times[i % 4];
    t->hash = h2;
    t->gas_limit = 21000;
    emc_u256_from_u64(&t->gas_price_wei, 20000000000);
    t->value_wei = big;
    memset(t->cost_wei.be, 0xff, 32);
    t->nonce = i;
    t->type = (EmcTxType)(i % 3);
    t->size_bytes = 108;
    t->has_to = t->type != EMC_TX_TYPE_CC;
    if (t->has_to) t->to = a1;
    t->from = a1;
    t->validity_err = i < G_N_ELEMENTS(STRINGS) ? g_strdup(STRINGS[i]) : NULL;
    g_ptr_array_add(txs, r);
  }
  roundtrip(txs, EMC_KIND_TX, FALSE);

  g_autoptr(GPtrArray) small = g_ptr_array_new_with_free_func((GDestroyNotify)emc_record_free);
  EmcRecord *r = rec_new(EMC_KIND_ANNOUNCEMENT);
  r->u.announcement = (EmcAnnouncement){.local_ns = times[1], .hash = h2};
  g_ptr_array_add(small, r);
  roundtrip(small, EMC_KIND_ANNOUNCEMENT, FALSE);
  g_ptr_array_set_size(small, 0);
  r = rec_new(EMC_KIND_HEAD);
  r->u.head = (EmcHead){.local_ns = times[0], .hash = h1, .number = UINT64_MAX};
  g_ptr_array_add(small, r);
  roundtrip(small, EMC_KIND_HEAD, FALSE);
  g_ptr_array_set_size(small, 0);
  for (int i = 0; i < 2; i++) {
    r = rec_new(EMC_KIND_TX_GAS_USED);
    r->u.gas = (EmcTxGasUsed){.local_ns = times[i], .block = h1, .tx = h2, .gas = i ? EMC_U64_NONE : 21000};
    g_ptr_array_add(small, r);
  }
  roundtrip(small, EMC_KIND_TX_GAS_USED, FALSE);
  g_ptr_array_set_size(small, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(STRINGS) + 1; i++) {
    r = rec_new(EMC_KIND_INVALID_MSG);
    r->u.invalid = (EmcInvalidMsg){.local_ns = times[0],
                                   .msg_type = i < G_N_ELEMENTS(STRINGS) ? g_strdup(STRINGS[i]) : NULL,
                                   .cause = (uint32_t)(i * 90)};
    g_ptr_array_add(small, r);
  }
  roundtrip(small, EMC_KIND_INVALID_MSG, FALSE);
  roundtrip(small, EMC_KIND_INVALID_MSG, TRUE);
  g_ptr_array_set_size(small, 0);
  for (size_t i = 0; i < G_N_ELEMENTS(STRINGS) + 1; i++) {
    r = rec_new(EMC_KIND_PEER);
    EmcPeer *p = &r->u.peer;
    const char *s = i < G_N_ELEMENTS(STRINGS) ? STRINGS[i] : NULL;
    p->local_ns = times[2];
    p->type = i % 2 ? EMC_PEER_REMOVE : EMC_PEER_ADD;
    p->id = g_strdup(s);
    p->duration_ns = -1;
    if (p->type == EMC_PEER_ADD) {
      p->client = g_strdup(s);
      p->addr = g_strdup("[::1]:30303");
    } else {
      p->duration = g_strdup(i % 4 == 1 ? "1h2m3.5s" : s);
      p->error = g_strdup(s);
      if (p->duration && !emc_go_duration_parse(p->duration, &p->duration_ns)) p->duration_ns = -1;
    }
    p->peers = i;
    p->inbound = i % 3 ? i / 2 : EMC_U64_NONE;
    g_ptr_array_add(small, r);
  }
  roundtrip(small, EMC_KIND_PEER, FALSE);
  roundtrip(small, EMC_KIND_PEER, TRUE);
}

/* Exact lines for hand-made records: what Geth would have written (plus the two quoting additions). */
static void test_writer_lines(void) {
  g_autoptr(GString) line = g_string_new(NULL);
  g_autoptr(GError) err = NULL;
  EmcRecord rec = {.kind = EMC_KIND_TX};
  EmcTx *t = &rec.u.tx;
  t->local_ns = INT64_C(1537280028769000000);
  t->hash = hash_of("0xc86655a7298c74d11c9f3350c269e0a8f5eb69dc722b1eeb947ddd0e978def3e");
  t->gas_limit = 800000;
  emc_u256_from_u64(&t->gas_price_wei, 5000000000);
  emc_u256_from_u64(&t->value_wei, 0);
  t->nonce = 11;
  t->type = EMC_TX_TYPE_MC;
  emc_u256_from_u64(&t->cost_wei, 4000000000000000);
  t->size_bytes = 172;
  t->has_to = TRUE;
  t->to = address_of("0xab1d06de6fb69de76739281cd0478931f9fff083");
  t->from = address_of("0x6aa749204b29ba6a16675e42ab40d7e228bbf287");
  t->validity_err = "nonce too low";
  CU_ASSERT_TRUE(emc_format_line(line, &rec, 60, &err));
  /* Line 3 of TxMsg.log. */
  CU_ASSERT_STRING_EQUAL(
      line->str,
      "2018-09-18T15:13:48.769+0100,0xc86655a7298c74d11c9f3350c269e0a8f5eb69dc722b1eeb947ddd0e978def3e,"
      "800000,5000000000,0,11,MC,4000000000000000,172,0xaB1D06de6fB69de76739281CD0478931f9FFF083,"
      "0x6aA749204B29BA6a16675E42Ab40d7e228BBF287,\"nonce too low\"\n");
  static const struct {
    const char *in, *out;
  } q[] = {{NULL, "nil"},      {"nil", "\"nil\""}, {"a,b", "\"a,b\""},     {"a\\b", "a\\\\b"},
           {"x=y", "\"x=y\""}, {"", ""},           {"a\"b", "\"a\\\"b\""}, {"l1\nl2", "\"l1\\nl2\""}};
  for (size_t i = 0; i < G_N_ELEMENTS(q); i++) {
    g_string_truncate(line, 0);
    t->validity_err = q[i].in;
    CU_ASSERT_TRUE(emc_format_line(line, &rec, 0, &err));
    g_autofree char *want = g_strconcat(",", q[i].out, "\n", NULL);
    CU_ASSERT_TRUE(g_str_has_suffix(line->str, want));
  }
  t->has_to = FALSE;
  g_string_truncate(line, 0);
  CU_ASSERT_TRUE(emc_format_line(line, &rec, 0, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(line->str, ",172,nil,0x6aA7"));

  /* Records that cannot be written leave the line alone. */
  g_string_assign(line, "keep");
  t->local_ns = OBS_TIME_NONE;
  CU_ASSERT_FALSE(emc_format_line(line, &rec, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_INVALID));
  CU_ASSERT_STRING_EQUAL(line->str, "keep");
  g_clear_error(&err);
  EmcRecord inv = {.kind = EMC_KIND_INVALID_MSG,
                   .u.invalid = {.local_ns = 0, .msg_type = "StatusMsg", .cause = 1000}};
  CU_ASSERT_FALSE(emc_format_line(line, &inv, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_INVALID));
  g_clear_error(&err);
  inv.u.invalid.cause = 2;
  g_string_truncate(line, 0);
  CU_ASSERT_TRUE(emc_format_line(line, &inv, 0, &err));
  CU_ASSERT_STRING_EQUAL(line->str, "1970-01-01T00:00:00.000+0000,StatusMsg,002\n");
  EmcRecord peer = {.kind = EMC_KIND_PEER,
                    .u.peer = {.local_ns = 0,
                               .type = EMC_PEER_REMOVE,
                               .id = "ab",
                               .duration = "1.5s",
                               .error = "too many peers",
                               .peers = 24,
                               .inbound = EMC_U64_NONE}};
  g_string_truncate(line, 0);
  CU_ASSERT_TRUE(emc_format_line(line, &peer, 0, &err));
  CU_ASSERT_STRING_EQUAL(line->str, "1970-01-01T00:00:00.000+0000,Remove,ab,1.5s,\"too many peers\",24\n");
  peer.u.peer.peers = EMC_U64_NONE;
  CU_ASSERT_FALSE(emc_format_line(line, &peer, 0, &err));
  g_clear_error(&err);
  EmcRecord prop = {.kind = EMC_KIND_PROPAGATION};
  CU_ASSERT_FALSE(emc_format_line(line, &prop, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_INVALID));
}

/* ---- Directories -------------------------------------------------------------------------------------- */

static void test_dir_rinkeby(void) {
  g_autofree char *dir = test_data("emc-rinkeby-2018-09", NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(EmcDir) d = emc_dir_open(dir, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  static const struct {
    EmcKind kind;
    const char *file;
    guint records;
  } want[] = {{EMC_KIND_BLOCK, "NewBlockMsg.log", 66},
              {EMC_KIND_ANNOUNCEMENT, "NewBlockHashesMsg.log", 165},
              {EMC_KIND_TX, "TxMsg.log", 2686},
              {EMC_KIND_HEAD, "NewBlockHead.log", 33},
              {EMC_KIND_INVALID_MSG, "InvalidMessages.csv", 9}};
  for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
    const char *const *files = emc_dir_files(d, want[i].kind);
    CU_ASSERT_PTR_NOT_NULL_FATAL(files[0]);
    CU_ASSERT_TRUE(g_str_has_suffix(files[0], want[i].file));
    CU_ASSERT_PTR_NULL(files[1]);
    g_autoptr(EmcReader) r = emc_dir_open_reader(d, want[i].kind, EMC_READER_STRICT, &err);
    g_autoptr(GPtrArray) recs = read_all(r, &err);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT_EQUAL(recs->len, want[i].records);
  }
  CU_ASSERT_PTR_NULL(emc_dir_files(d, EMC_KIND_PEER)[0]);
  CU_ASSERT_PTR_NULL(emc_dir_files(d, EMC_KIND_TX_GAS_USED)[0]);
  CU_ASSERT_PTR_NULL(emc_dir_open_reader(d, EMC_KIND_PEER, 0, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_NOT_FOUND));
  g_autofree char *msg = g_strdup_printf("%s: no peers log (looked for peers.log)", dir);
  if (err) CU_ASSERT_STRING_EQUAL(err->message, msg);
}

/* Rotated, renamed, partly compressed parts are read in rotation order, the current file last. */
static void test_dir_parts(void) {
  g_autofree char *path = rinkeby("NewBlockMsg.log");
  gsize n;
  g_autofree char *text = slurp(path, &n);
  g_autoptr(GPtrArray) all = read_path(path, EMC_KIND_BLOCK, NULL);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1); /* 66 lines and a final "" */
  g_autofree char *dir = tmp_dir();
  /* blocks.log.0 <- lines 0..9, .1.gz <- 10..29, .2.xz <- 30..39, .10 <- 40..49, blocks.log <- 50..65 */
  static const struct {
    const char *name;
    int from, to, z;
  } parts[] = {{"blocks.log.10", 40, 50, 0},
               {"blocks.log", 50, 66, 0},
               {"blocks.log.0", 0, 10, 0},
               {"blocks.log.1.gz", 10, 30, 1},
               {"blocks.log.2.xz", 30, 40, 2}};
  for (size_t i = 0; i < G_N_ELEMENTS(parts); i++) {
    GString *s = g_string_new(NULL);
    for (int k = parts[i].from; k < parts[i].to; k++)
      g_string_append_printf(s, "%s\n", lines[k]);
    g_autoptr(GBytes) z = parts[i].z == 1   ? gzip_bytes(s->str, s->len)
                          : parts[i].z == 2 ? xz_bytes(s->str, s->len)
                                            : g_bytes_new(s->str, s->len);
    gsize zn;
    const void *zp = g_bytes_get_data(z, &zn);
    put_file(dir, parts[i].name, zp, zn);
    g_string_free(s, TRUE);
  }
  put_file(dir, "template_Blocks.csv", "x\n", 2); /* ignored */
  put_file(dir, "blocks.log.FINAL", "x\n", 2);    /* ignored */
  g_autoptr(GError) err = NULL;
  g_autoptr(EmcDir) d = emc_dir_open(dir, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  const char *const *files = emc_dir_files(d, EMC_KIND_BLOCK);
  static const char *const order[] = {"blocks.log.0", "blocks.log.1.gz", "blocks.log.2.xz", "blocks.log.10",
                                      "blocks.log"};
  for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
    CU_ASSERT_PTR_NOT_NULL_FATAL(files[i]);
    g_autofree char *base = g_path_get_basename(files[i]);
    CU_ASSERT_STRING_EQUAL(base, order[i]);
  }
  CU_ASSERT_PTR_NULL(files[G_N_ELEMENTS(order)]);
  g_autoptr(EmcReader) r = emc_dir_open_reader(d, EMC_KIND_BLOCK, EMC_READER_STRICT, &err);
  g_autoptr(GPtrArray) got = read_all(r, &err);
  CU_ASSERT_PTR_NULL(err);
  CU_ASSERT_TRUE(same_records(all, got, TRUE));
  CU_ASSERT_EQUAL(emc_reader_line(r), 16); /* in the last part */

  /* The same part twice, or two names for one kind: ambiguous. */
  put_file(dir, "blocks.log.1", "", 0);
  g_autoptr(EmcDir) d2 = emc_dir_open(dir, &err);
  CU_ASSERT_PTR_NULL(d2);
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_AMBIGUOUS));
  g_autofree char *want =
      g_strdup_printf("%s: blocks.log.1 and blocks.log.1.gz are the same part of the blocks log", dir);
  if (err) CU_ASSERT_STRING_EQUAL(err->message, want);
  g_clear_error(&err);
  g_autofree char *p1 = g_build_filename(dir, "blocks.log.1", NULL);
  g_unlink(p1);
  put_file(dir, "NewBlockMsg.log", "", 0);
  g_autoptr(EmcDir) d3 = emc_dir_open(dir, &err);
  CU_ASSERT_PTR_NULL(d3);
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_AMBIGUOUS));
  g_clear_error(&err);
  rm_dir(dir);
  CU_ASSERT_PTR_NULL(emc_dir_open(dir, &err));
  CU_ASSERT_TRUE(g_error_matches(err, EMC_ERROR, EMC_ERROR_IO));
}

int register_suites(void) {
  ADD_SUITE("values", TEST(test_keccak), TEST(test_eip55), TEST(test_time), TEST(test_u256),
            TEST(test_hash_and_kinds), TEST(test_go_duration));
  ADD_SUITE("rinkeby", TEST(test_real_blocks), TEST(test_real_announcements), TEST(test_real_txs),
            TEST(test_real_heads_and_invalid), TEST(test_real_byte_exact));
  ADD_SUITE("stage", TEST(test_stage_templates), TEST(test_stage_blocks), TEST(test_stage_txs),
            TEST(test_stage_propagation));
  ADD_SUITE("bad", TEST(test_bad_corpus), TEST(test_open_errors), TEST(test_lines));
  ADD_SUITE("compression", TEST(test_compression));
  ADD_SUITE("roundtrip", TEST(test_roundtrip_all_kinds), TEST(test_writer_lines));
  ADD_SUITE("dir", TEST(test_dir_rinkeby), TEST(test_dir_parts));
  return 0;
}
