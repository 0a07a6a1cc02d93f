/* emc_values.c: EMC value codecs (timestamps, hashes, EIP-55 addresses, 256-bit integers, Go durations),
 * Keccak-256, kind names, column tables, and record comparison and copying. */
#include "emc-private.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(emc - error - quark, emc_error)

const unsigned emc_commit_depths[EMC_N_COMMIT_DEPTHS] = {0, 3, 12, 36};

/* ---- Columns ------------------------------------------------------------------------------------------ */

static const EmcColumn block_cols[EMC_B_N] = {
    {"LocalTimestamp", NULL, TRUE}, {"BlockHash", NULL, TRUE},        {"Number", NULL, TRUE},
    {"GasLimit", NULL, TRUE},       {"GasUsed", NULL, TRUE},          {"Difficulty", NULL, TRUE},
    {"Time", NULL, TRUE},           {"Coinbase", NULL, TRUE},         {"ParentHash", NULL, TRUE},
    {"UncleHash", NULL, TRUE},      {"BlockSize", NULL, TRUE},        {"ListOfTxs", NULL, TRUE},
    {"ListOfUncles", NULL, TRUE},   {"CapturedLocally", NULL, FALSE}, {"BlockType", NULL, FALSE},
    {"ForkLength", NULL, FALSE},
};
static const EmcColumn announcement_cols[EMC_A_N] = {{"LocalTimestamp", NULL, TRUE},
                                                     {"BlockHash", NULL, TRUE}};
static const EmcColumn tx_cols[EMC_T_N] = {
    {"LocalTimeStamp", NULL, TRUE},
    {"Hash", NULL, TRUE},
    {"GasLimit", NULL, TRUE},
    {"GasPrice", NULL, TRUE},
    {"Value", NULL, TRUE},
    {"Nonce", NULL, TRUE},
    {"MsgType", NULL, TRUE},
    {"Cost", NULL, TRUE},
    {"Size", NULL, TRUE},
    {"To", NULL, TRUE},
    {"From", NULL, TRUE},
    {"ValidityErr", NULL, TRUE},
    {"CapturedLocally", NULL, FALSE},
    {"GasUsed", NULL, FALSE},
    {"InMainBlock", NULL, FALSE},
    {"InUncleBlocks", NULL, FALSE},
    {"InOrder", NULL, FALSE},
    {"NeverCommiting", "NeverCommitting", FALSE},
    {"RemoteTimeStamp", NULL, FALSE},
    {"CommitTime0", NULL, FALSE},
    {"CommitTime3", NULL, FALSE},
    {"CommitTime12", NULL, FALSE},
    {"CommitTime36", NULL, FALSE},
};
static const EmcColumn head_cols[EMC_H_N] = {
    {"LocalTimestamp", NULL, TRUE}, {"BlockHash", NULL, TRUE}, {"Number", NULL, TRUE}};
static const EmcColumn gas_cols[EMC_G_N] = {{"LocalTimeStamp", NULL, TRUE},
                                            {"BlockHash", NULL, TRUE},
                                            {"TxHash", NULL, TRUE},
                                            {"TxGasUsed", NULL, TRUE}};
static const EmcColumn invalid_cols[EMC_I_N] = {
    {"LocalTimestamp", NULL, TRUE}, {"MessageType", NULL, TRUE}, {"Cause", NULL, TRUE}};
static const EmcColumn peer_cols[EMC_P_N] = {
    {"LocalTimeStamp", NULL, TRUE},
    {"Type", NULL, TRUE},
    {"ID", NULL, TRUE},
    {"TypeDependentParam1", NULL, TRUE},
    {"TypeDependentParam2", NULL, TRUE},
    {"Peers", NULL, TRUE},
    {"InboundPeers", NULL, FALSE},
};
static const EmcColumn propagation_cols[EMC_R_N] = {
    {"BlockHash", NULL, TRUE},        {"Number", NULL, TRUE},
    {"BlockType", NULL, TRUE},        {"FirstObservation", NULL, TRUE},
    {"MiningPool", NULL, FALSE},      {"NumTransactions", NULL, FALSE},
    {"SameMinerSeqLen", NULL, FALSE}, {"PositionInsideSeq", NULL, FALSE},
    {"Difficulty", NULL, FALSE},      {"BlockSize", NULL, FALSE},
    {"InterblockTime", NULL, FALSE},  {"InterblockTimePerPool", NULL, FALSE},
};

const EmcKindColumns emc_kind_columns[EMC_N_KINDS] = {
    [EMC_KIND_BLOCK] = {block_cols, EMC_B_N, EMC_B_CAPTURED},
    [EMC_KIND_ANNOUNCEMENT] = {announcement_cols, EMC_A_N, EMC_A_N},
    [EMC_KIND_TX] = {tx_cols, EMC_T_N, EMC_T_CAPTURED},
    [EMC_KIND_HEAD] = {head_cols, EMC_H_N, EMC_H_N},
    [EMC_KIND_TX_GAS_USED] = {gas_cols, EMC_G_N, EMC_G_N},
    [EMC_KIND_INVALID_MSG] = {invalid_cols, EMC_I_N, EMC_I_N},
    [EMC_KIND_PEER] = {peer_cols, EMC_P_N, EMC_P_INBOUND},
    [EMC_KIND_PROPAGATION] = {propagation_cols, EMC_R_N, EMC_R_N},
};

const char *const emc_legacy_vantages[EMC_LEGACY_VANTAGES] = {"Angainor", "Falcon", "S1US", "S2CN"};

static const char *const kind_names[EMC_N_KINDS] = {
    [EMC_KIND_BLOCK] = "blocks",
    [EMC_KIND_ANNOUNCEMENT] = "announcements",
    [EMC_KIND_TX] = "txs",
    [EMC_KIND_HEAD] = "heads",
    [EMC_KIND_TX_GAS_USED] = "txgasused",
    [EMC_KIND_INVALID_MSG] = "invalid",
    [EMC_KIND_PEER] = "peers",
    [EMC_KIND_PROPAGATION] = "propagation",
};

const char *emc_kind_name(EmcKind kind) {
  g_return_val_if_fail((unsigned)kind < EMC_N_KINDS, NULL);
  return kind_names[kind];
}

gboolean emc_kind_from_name(const char *name, EmcKind *kind) {
  g_return_val_if_fail(name != NULL && kind != NULL, FALSE);
  for (unsigned k = 0; k < EMC_N_KINDS; k++)
    if (strcmp(name, kind_names[k]) == 0) {
      *kind = (EmcKind)k;
      return TRUE;
    }
  return FALSE;
}

/* ---- Time --------------------------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = (unsigned)(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = (unsigned)(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static gboolean digits(const char *s, size_t n, unsigned *out) {
  unsigned v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return FALSE;
    v = v * 10 + (unsigned)(s[i] - '0');
  }
  *out = v;
  return TRUE;
}

static unsigned days_in_month(unsigned y, unsigned m) {
  static const unsigned dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m == 2 && (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0))) return 29;
  return dm[m - 1];
}

/* Combines calendar fields into ns since the epoch; FALSE if a field is out of range or the result does
 * not fit (or would equal OBS_TIME_NONE). */
static gboolean combine(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned sec,
                        int64_t frac_ns, int offset_s, int64_t *ns) {
  if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59) return FALSE;
  int64_t s = days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + sec - offset_s;
  /* int64 ns covers 1677-09-21 .. 2262-04-11. */
  const int64_t lim = INT64_MAX / 1000000000 - 1;
  if (s < -lim || s > lim) return FALSE;
  *ns = s * 1000000000 + frac_ns;
  return TRUE;
}

gboolean emc_time_parse(const char *s, size_t len, int64_t *ns) {
  g_return_val_if_fail(s != NULL && ns != NULL, FALSE);
  /* 2006-01-02T15:04:05.000-0700 */
  if (len != 28 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
      s[19] != '.' || (s[23] != '+' && s[23] != '-'))
    return FALSE;
  unsigned y, mo, d, h, mi, sec, ms, oh, om;
  if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
      !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec) || !digits(s + 20, 3, &ms) ||
      !digits(s + 24, 2, &oh) || !digits(s + 26, 2, &om))
    return FALSE;
  if (oh > 23 || om > 59) return FALSE;
  int off = (int)(oh * 3600 + om * 60) * (s[23] == '-' ? -1 : 1);
  return combine(y, mo, d, h, mi, sec, (int64_t)ms * 1000000, off, ns);
}

gboolean emc_time_parse_lenient(const char *s, size_t len, int64_t *ns) {
  if (len == 28 && emc_time_parse(s, len, ns)) return TRUE;
  /* YYYY-MM-DD[T ]HH:MM:SS[.f{0,9}](Z|+hhmm|+hh:mm) */
  if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' ||
      s[16] != ':')
    return FALSE;
  unsigned y, mo, d, h, mi, sec;
  if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
      !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
    return FALSE;
  size_t i = 19;
  int64_t frac = 0;
  if (i < len && s[i] == '.') {
    i++;
    int64_t scale = 100000000;
    size_t nd = 0;
    while (i < len && s[i] >= '0' && s[i] <= '9') {
      if (++nd > 9) return FALSE;
      frac += (s[i] - '0') * scale;
      scale /= 10;
      i++;
    }
  }
  int off = 0;
  if (i + 1 == len && s[i] == 'Z') {
    off = 0;
  } else if (i < len && (s[i] == '+' || s[i] == '-')) {
    unsigned oh, om;
    size_t rest = len - i - 1;
    const char *o = s + i + 1;
    if (rest == 4) {
      if (!digits(o, 2, &oh) || !digits(o + 2, 2, &om)) return FALSE;
    } else if (rest == 5 && o[2] == ':') {
      if (!digits(o, 2, &oh) || !digits(o + 3, 2, &om)) return FALSE;
    } else {
      return FALSE;
    }
    if (oh > 23 || om > 59) return FALSE;
    off = (int)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
  } else {
    return FALSE;
  }
  return combine(y, mo, d, h, mi, sec, frac, off, ns);
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

void emc_time_format(int64_t ns, int utc_offset_min, char out[EMC_TIME_TEXT_BYTES]) {
  g_return_if_fail(out != NULL && ns != OBS_TIME_NONE && utc_offset_min > -1440 && utc_offset_min < 1440);
  int64_t ms_total = floor_div(ns, 1000000);
  int64_t secs = floor_div(ms_total, 1000) + (int64_t)utc_offset_min * 60;
  unsigned ms = (unsigned)(ms_total - floor_div(ms_total, 1000) * 1000);
  int64_t days = floor_div(secs, 86400);
  unsigned sod = (unsigned)(secs - days * 86400);
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  unsigned off = (unsigned)(utc_offset_min < 0 ? -utc_offset_min : utc_offset_min);
  g_snprintf(out, EMC_TIME_TEXT_BYTES, "%04d-%02u-%02uT%02u:%02u:%02u.%03u%c%02u%02u", (int)y, m, d,
             sod / 3600, sod / 60 % 60, sod % 60, ms, utc_offset_min < 0 ? '-' : '+', off / 60, off % 60);
}

/* ---- Hex values --------------------------------------------------------------------------------------- */

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static gboolean parse_hex_bytes(const char *s, size_t len, uint8_t *out, size_t n) {
  if (len != 2 + 2 * n || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return FALSE;
  for (size_t i = 0; i < n; i++) {
    int hi = hexval(s[2 + 2 * i]), lo = hexval(s[3 + 2 * i]);
    if (hi < 0 || lo < 0) return FALSE;
    out[i] = (uint8_t)(hi << 4 | lo);
  }
  return TRUE;
}

static void format_hex_bytes(const uint8_t *b, size_t n, char *out) {
  static const char hex[] = "0123456789abcdef";
  out[0] = '0';
  out[1] = 'x';
  for (size_t i = 0; i < n; i++) {
    out[2 + 2 * i] = hex[b[i] >> 4];
    out[3 + 2 * i] = hex[b[i] & 15];
  }
  out[2 + 2 * n] = '\0';
}

static uint64_t be64(const uint8_t *b) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = v << 8 | b[i];
  return v;
}

gboolean emc_hash_parse(const char *s, size_t len, EmcHash *out) {
  g_return_val_if_fail(s != NULL && out != NULL, FALSE);
  return parse_hex_bytes(s, len, out->bytes, EMC_HASH_BYTES);
}

void emc_hash_format(const EmcHash *h, char out[EMC_HASH_TEXT_BYTES]) {
  g_return_if_fail(h != NULL && out != NULL);
  format_hex_bytes(h->bytes, EMC_HASH_BYTES, out);
}

uint64_t emc_hash_id(const EmcHash *h) {
  g_return_val_if_fail(h != NULL, 0);
  return be64(h->bytes);
}

static void put_be64(uint64_t v, uint8_t *b) {
  for (int i = 7; i >= 0; i--, v >>= 8)
    b[i] = (uint8_t)v;
}

void emc_hash_from_id(uint64_t id, EmcHash *out) {
  g_return_if_fail(out != NULL);
  memset(out, 0, sizeof *out);
  put_be64(id, out->bytes);
}

void emc_address_from_id(uint64_t id, EmcAddress *out) {
  g_return_if_fail(out != NULL);
  memset(out, 0, sizeof *out);
  put_be64(id, out->bytes);
}

gboolean emc_address_parse(const char *s, size_t len, EmcAddress *out) {
  g_return_val_if_fail(s != NULL && out != NULL, FALSE);
  return parse_hex_bytes(s, len, out->bytes, EMC_ADDRESS_BYTES);
}

void emc_address_format(const EmcAddress *a, char out[EMC_ADDRESS_TEXT_BYTES]) {
  g_return_if_fail(a != NULL && out != NULL);
  format_hex_bytes(a->bytes, EMC_ADDRESS_BYTES, out);
  /* EIP-55: a letter is upper case where the matching nibble of keccak256(lowercase hex) is >= 8. */
  uint8_t h[32];
  emc_keccak256(out + 2, 40, h);
  for (int i = 0; i < 40; i++) {
    char *c = out + 2 + i;
    unsigned nib = (i % 2 == 0) ? h[i / 2] >> 4 : h[i / 2] & 15;
    if (*c >= 'a' && *c <= 'f' && nib >= 8) *c = (char)(*c - 'a' + 'A');
  }
}

uint64_t emc_address_id(const EmcAddress *a) {
  g_return_val_if_fail(a != NULL, 0);
  return be64(a->bytes);
}

/* ---- 256-bit integers (as eight 32-bit limbs, least significant first) ------------------------------- */

static void u256_to_limbs(const EmcU256 *v, uint32_t l[8]) {
  for (int i = 0; i < 8; i++) {
    const uint8_t *b = v->be + 28 - 4 * i;
    l[i] = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
  }
}

static void u256_from_limbs(EmcU256 *v, const uint32_t l[8]) {
  for (int i = 0; i < 8; i++) {
    uint8_t *b = v->be + 28 - 4 * i;
    b[0] = (uint8_t)(l[i] >> 24);
    b[1] = (uint8_t)(l[i] >> 16);
    b[2] = (uint8_t)(l[i] >> 8);
    b[3] = (uint8_t)l[i];
  }
}

gboolean emc_u256_parse(const char *s, size_t len, EmcU256 *out) {
  g_return_val_if_fail(s != NULL && out != NULL, FALSE);
  if (len == 0) return FALSE;
  uint32_t l[8] = {0};
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return FALSE;
    uint64_t carry = (uint64_t)(s[i] - '0');
    for (int k = 0; k < 8; k++) {
      uint64_t t = (uint64_t)l[k] * 10 + carry;
      l[k] = (uint32_t)t;
      carry = t >> 32;
    }
    if (carry) return FALSE;
  }
  u256_from_limbs(out, l);
  return TRUE;
}

void emc_u256_format(const EmcU256 *v, char out[EMC_U256_TEXT_BYTES]) {
  g_return_if_fail(v != NULL && out != NULL);
  uint32_t l[8];
  u256_to_limbs(v, l);
  char tmp[EMC_U256_TEXT_BYTES];
  int n = 0;
  for (;;) {
    uint64_t rem = 0;
    gboolean nonzero = FALSE;
    for (int k = 7; k >= 0; k--) {
      uint64_t cur = rem << 32 | l[k];
      l[k] = (uint32_t)(cur / 10);
      rem = cur % 10;
      if (l[k]) nonzero = TRUE;
    }
    tmp[n++] = (char)('0' + rem);
    if (!nonzero) break;
  }
  for (int i = 0; i < n; i++)
    out[i] = tmp[n - 1 - i];
  out[n] = '\0';
}

void emc_u256_from_u64(EmcU256 *v, uint64_t x) {
  g_return_if_fail(v != NULL);
  memset(v->be, 0, sizeof v->be);
  for (int i = 0; i < 8; i++)
    v->be[31 - i] = (uint8_t)(x >> (8 * i));
}

gboolean emc_u256_to_u64(const EmcU256 *v, uint64_t *x) {
  g_return_val_if_fail(v != NULL && x != NULL, FALSE);
  for (int i = 0; i < 24; i++)
    if (v->be[i]) return FALSE;
  *x = be64(v->be + 24);
  return TRUE;
}

double emc_u256_to_double(const EmcU256 *v) {
  g_return_val_if_fail(v != NULL, NAN);
  double d = 0;
  for (int i = 0; i < 32; i++)
    d = d * 256.0 + v->be[i];
  return d;
}

/* ---- Keccak-256 --------------------------------------------------------------------------------------- */

static const uint64_t keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};
static const unsigned keccak_rotc[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                                         27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
static const unsigned keccak_piln[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                                         15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

static uint64_t rotl64(uint64_t x, unsigned n) {
  return (x << n) | (x >> (64 - n));
}

static void keccak_f1600(uint64_t st[25]) {
  uint64_t bc[5];
  for (int round = 0; round < 24; round++) {
    for (int i = 0; i < 5; i++)
      bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
    for (int i = 0; i < 5; i++) {
      uint64_t t = bc[(i + 4) % 5] ^ rotl64(bc[(i + 1) % 5], 1);
      for (int j = 0; j < 25; j += 5)
        st[j + i] ^= t;
    }
    uint64_t t = st[1];
    for (int i = 0; i < 24; i++) {
      unsigned j = keccak_piln[i];
      uint64_t tmp = st[j];
      st[j] = rotl64(t, keccak_rotc[i]);
      t = tmp;
    }
    for (int j = 0; j < 25; j += 5) {
      for (int i = 0; i < 5; i++)
        bc[i] = st[j + i];
      for (int i = 0; i < 5; i++)
        st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
    }
    st[0] ^= keccak_rc[round];
  }
}

void emc_keccak256(const void *data, size_t len, uint8_t out[32]) {
  g_return_if_fail((data != NULL || len == 0) && out != NULL);
  enum { RATE = 136 };
  uint64_t st[25] = {0};
  const uint8_t *p = data;
  uint8_t block[RATE];
  for (;;) {
    size_t take = len < RATE ? len : RATE;
    memset(block, 0, RATE);
    if (take) memcpy(block, p, take);
    if (take < RATE) { /* last block: Keccak padding 0x01 ... 0x80 */
      block[take] ^= 0x01;
      block[RATE - 1] ^= 0x80;
    }
    for (int i = 0; i < RATE / 8; i++) {
      uint64_t lane = 0;
      for (int b = 7; b >= 0; b--)
        lane = lane << 8 | block[8 * i + b];
      st[i] ^= lane;
    }
    keccak_f1600(st);
    if (take < RATE) break;
    p += RATE;
    len -= RATE;
  }
  for (int i = 0; i < 4; i++)
    for (int b = 0; b < 8; b++)
      out[8 * i + b] = (uint8_t)(st[i] >> (8 * b));
}

/* ---- Go durations ------------------------------------------------------------------------------------- */

gboolean emc_go_duration_parse(const char *s, int64_t *ns) {
  g_return_val_if_fail(s != NULL && ns != NULL, FALSE);
  gboolean neg = FALSE;
  if (*s == '-' || *s == '+') neg = *s++ == '-';
  if (strcmp(s, "0") == 0) {
    *ns = 0;
    return TRUE;
  }
  if (*s == '\0') return FALSE;
  double total = 0;
  while (*s) {
    const char *start = s;
    uint64_t whole = 0;
    gboolean any = FALSE;
    while (*s >= '0' && *s <= '9') {
      if (whole > (UINT64_MAX - 9) / 10) return FALSE;
      whole = whole * 10 + (uint64_t)(*s++ - '0');
      any = TRUE;
    }
    double frac = 0, scale = 1;
    if (*s == '.') {
      s++;
      while (*s >= '0' && *s <= '9') {
        scale /= 10;
        frac += (*s++ - '0') * scale;
        any = TRUE;
      }
    }
    if (!any || s == start) return FALSE;
    static const struct {
      const char *u;
      double ns;
    } units[] = {{"ns", 1},   {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3},
                 {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};
    double unit = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(units); i++) {
      size_t n = strlen(units[i].u);
      /* "m" must not swallow the "m" of "ms": longest match first (the table lists "ms" before "m"). */
      if (strncmp(s, units[i].u, n) == 0) {
        unit = units[i].ns;
        s += n;
        break;
      }
    }
    if (unit == 0) return FALSE;
    total += ((double)whole + frac) * unit;
    if (total > 9.2e18) return FALSE;
  }
  int64_t v = (int64_t)llround(total);
  *ns = neg ? -v : v;
  return TRUE;
}

/* ---- Records ------------------------------------------------------------------------------------------ */

static gboolean str_eq(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static gboolean hashes_eq(uint32_t n, const EmcHash *a, const EmcHash *b) {
  return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static gboolean dbl_eq(double a, double b) {
  return (isnan(a) && isnan(b)) || a == b;
}

#define EQ(f) (a->f == b->f)
#define MEMEQ(f) (memcmp(&a->f, &b->f, sizeof a->f) == 0)

static gboolean block_eq(const EmcBlock *a, const EmcBlock *b, gboolean stage) {
  if (!(EQ(local_ns) && MEMEQ(hash) && EQ(number) && EQ(gas_limit) && EQ(gas_used) && MEMEQ(difficulty) &&
        EQ(time_s) && MEMEQ(coinbase) && MEMEQ(parent) && MEMEQ(uncle_hash) && EQ(size_bytes) && EQ(n_txs) &&
        EQ(n_uncles) && hashes_eq(a->n_txs, a->txs, b->txs) && hashes_eq(a->n_uncles, a->uncles, b->uncles)))
    return FALSE;
  if (!stage) return TRUE;
  return EQ(stage.captured_locally) && EQ(stage.type) && str_eq(a->stage.type_text, b->stage.type_text) &&
         EQ(stage.fork_length);
}

static gboolean tx_eq(const EmcTx *a, const EmcTx *b, gboolean stage) {
  if (!(EQ(local_ns) && MEMEQ(hash) && EQ(gas_limit) && MEMEQ(gas_price_wei) && MEMEQ(value_wei) &&
        EQ(nonce) && EQ(type) && MEMEQ(cost_wei) && EQ(size_bytes) && EQ(has_to) &&
        (!a->has_to || MEMEQ(to)) && MEMEQ(from) && str_eq(a->validity_err, b->validity_err)))
    return FALSE;
  if (!stage) return TRUE;
  const EmcTxStage *x = &a->stage, *y = &b->stage;
  if (!(x->captured_locally == y->captured_locally && x->gas_used == y->gas_used &&
        x->has_in_main_block == y->has_in_main_block &&
        (!x->has_in_main_block || memcmp(&x->in_main_block, &y->in_main_block, sizeof(EmcHash)) == 0) &&
        x->n_in_uncle_blocks == y->n_in_uncle_blocks &&
        hashes_eq(x->n_in_uncle_blocks, x->in_uncle_blocks, y->in_uncle_blocks) &&
        x->in_order == y->in_order && str_eq(x->never_committing, y->never_committing) &&
        x->remote_ns == y->remote_ns))
    return FALSE;
  for (int k = 0; k < EMC_N_COMMIT_DEPTHS; k++)
    if (!dbl_eq(x->commit_s[k], y->commit_s[k])) return FALSE;
  return TRUE;
}

static gboolean peer_eq(const EmcPeer *a, const EmcPeer *b) {
  return EQ(local_ns) && EQ(type) && str_eq(a->id, b->id) && str_eq(a->client, b->client) &&
         str_eq(a->addr, b->addr) && str_eq(a->duration, b->duration) && str_eq(a->error, b->error) &&
         EQ(duration_ns) && EQ(peers) && EQ(inbound);
}

static gboolean propagation_eq(const EmcPropagation *a, const EmcPropagation *b) {
  if (!(MEMEQ(hash) && EQ(number) && EQ(type) && str_eq(a->type_text, b->type_text) && EQ(n_vantages) &&
        EQ(first_ns) && str_eq(a->mining_pool, b->mining_pool) && EQ(num_txs) && EQ(same_miner_seq_len) &&
        EQ(position_inside_seq) && dbl_eq(a->difficulty, b->difficulty) && EQ(size_bytes) &&
        dbl_eq(a->interblock_s, b->interblock_s) &&
        dbl_eq(a->interblock_per_pool_s, b->interblock_per_pool_s)))
    return FALSE;
  for (uint32_t i = 0; i < a->n_vantages; i++)
    if (a->seen_ns[i] != b->seen_ns[i] || !dbl_eq(a->diff_s[i], b->diff_s[i])) return FALSE;
  return TRUE;
}

gboolean emc_record_equal(const EmcRecord *ra, const EmcRecord *rb, gboolean with_stage) {
  g_return_val_if_fail(ra != NULL && rb != NULL, FALSE);
  if (ra->kind != rb->kind) return FALSE;
  switch (ra->kind) {
  case EMC_KIND_BLOCK:
    return block_eq(&ra->u.block, &rb->u.block, with_stage);
  case EMC_KIND_ANNOUNCEMENT: {
    const EmcAnnouncement *a = &ra->u.announcement, *b = &rb->u.announcement;
    return EQ(local_ns) && MEMEQ(hash);
  }
  case EMC_KIND_TX:
    return tx_eq(&ra->u.tx, &rb->u.tx, with_stage);
  case EMC_KIND_HEAD: {
    const EmcHead *a = &ra->u.head, *b = &rb->u.head;
    return EQ(local_ns) && MEMEQ(hash) && EQ(number);
  }
  case EMC_KIND_TX_GAS_USED: {
    const EmcTxGasUsed *a = &ra->u.gas, *b = &rb->u.gas;
    return EQ(local_ns) && MEMEQ(block) && MEMEQ(tx) && EQ(gas);
  }
  case EMC_KIND_INVALID_MSG: {
    const EmcInvalidMsg *a = &ra->u.invalid, *b = &rb->u.invalid;
    return EQ(local_ns) && str_eq(a->msg_type, b->msg_type) && EQ(cause);
  }
  case EMC_KIND_PEER:
    return peer_eq(&ra->u.peer, &rb->u.peer);
  case EMC_KIND_PROPAGATION:
    return propagation_eq(&ra->u.propagation, &rb->u.propagation);
  case EMC_N_KINDS:
    break;
  }
  return FALSE;
}

#undef EQ
#undef MEMEQ

/* A copy is one EmcRecord plus separately allocated arrays and strings; emc_record_free() knows which
 * pointers of each kind it owns. */
static void *dup_mem(const void *p, size_t n) {
  return (p && n) ? g_memdup2(p, n) : NULL;
}

EmcRecord *emc_record_dup(const EmcRecord *rec) {
  g_return_val_if_fail(rec != NULL && (unsigned)rec->kind < EMC_N_KINDS, NULL);
  EmcRecord *c = g_new(EmcRecord, 1);
  *c = *rec;
  switch (rec->kind) {
  case EMC_KIND_BLOCK:
    c->u.block.txs = dup_mem(rec->u.block.txs, rec->u.block.n_txs * sizeof(EmcHash));
    c->u.block.uncles = dup_mem(rec->u.block.uncles, rec->u.block.n_uncles * sizeof(EmcHash));
    c->u.block.stage.type_text = g_strdup(rec->u.block.stage.type_text);
    break;
  case EMC_KIND_TX:
    c->u.tx.validity_err = g_strdup(rec->u.tx.validity_err);
    c->u.tx.stage.in_uncle_blocks =
        dup_mem(rec->u.tx.stage.in_uncle_blocks, rec->u.tx.stage.n_in_uncle_blocks * sizeof(EmcHash));
    c->u.tx.stage.never_committing = g_strdup(rec->u.tx.stage.never_committing);
    break;
  case EMC_KIND_INVALID_MSG:
    c->u.invalid.msg_type = g_strdup(rec->u.invalid.msg_type);
    break;
  case EMC_KIND_PEER:
    c->u.peer.id = g_strdup(rec->u.peer.id);
    c->u.peer.client = g_strdup(rec->u.peer.client);
    c->u.peer.addr = g_strdup(rec->u.peer.addr);
    c->u.peer.duration = g_strdup(rec->u.peer.duration);
    c->u.peer.error = g_strdup(rec->u.peer.error);
    break;
  case EMC_KIND_PROPAGATION:
    c->u.propagation.type_text = g_strdup(rec->u.propagation.type_text);
    c->u.propagation.mining_pool = g_strdup(rec->u.propagation.mining_pool);
    c->u.propagation.seen_ns =
        dup_mem(rec->u.propagation.seen_ns, rec->u.propagation.n_vantages * sizeof(int64_t));
    c->u.propagation.diff_s =
        dup_mem(rec->u.propagation.diff_s, rec->u.propagation.n_vantages * sizeof(double));
    break;
  default:
    break;
  }
  return c;
}

void emc_record_free(EmcRecord *c) {
  if (!c) return;
  switch (c->kind) {
  case EMC_KIND_BLOCK:
    g_free((void *)c->u.block.txs);
    g_free((void *)c->u.block.uncles);
    g_free((void *)c->u.block.stage.type_text);
    break;
  case EMC_KIND_TX:
    g_free((void *)c->u.tx.validity_err);
    g_free((void *)c->u.tx.stage.in_uncle_blocks);
    g_free((void *)c->u.tx.stage.never_committing);
    break;
  case EMC_KIND_INVALID_MSG:
    g_free((void *)c->u.invalid.msg_type);
    break;
  case EMC_KIND_PEER:
    g_free((void *)c->u.peer.id);
    g_free((void *)c->u.peer.client);
    g_free((void *)c->u.peer.addr);
    g_free((void *)c->u.peer.duration);
    g_free((void *)c->u.peer.error);
    break;
  case EMC_KIND_PROPAGATION:
    g_free((void *)c->u.propagation.type_text);
    g_free((void *)c->u.propagation.mining_pool);
    g_free((void *)c->u.propagation.seen_ns);
    g_free((void *)c->u.propagation.diff_s);
    break;
  default:
    break;
  }
  g_free(c);
}
