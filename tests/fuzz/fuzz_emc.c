/* fuzz_emc.c: libFuzzer target: the EMC readers must never crash or leak on any bytes, and every record read
 * from a headerless input must come back unchanged through the writer and the reader.
 *
 * Input: byte 0 picks the kind (byte % EMC_N_KINDS) and strict mode (bit 7); the rest is the file, which
 * may be compressed. Seeds: tests/fuzz/corpus-emc/. */
#include <stddef.h>
#include <stdint.h>

#include "emc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes `rec` as a raw line and reads it back; traps if that fails or changes the record. */
static void check_roundtrip(const EmcRecord *rec, GString *line) {
  g_string_truncate(line, 0);
  GError *err = NULL;
  /* A record read from a raw log is always writable. */
  if (!emc_format_line(line, rec, 0, &err)) __builtin_trap();
  EmcReader *back = emc_reader_new_from_bytes(line->str, line->len, "back", rec->kind, EMC_READER_STRICT);
  EmcRecord again;
  if (!emc_reader_next(back, &again, &err)) __builtin_trap();
  if (!emc_record_equal(rec, &again, FALSE)) __builtin_trap();
  if (emc_reader_next(back, &again, &err) || err) __builtin_trap(); /* exactly one line */
  emc_reader_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  EmcKind kind = (EmcKind)(data[0] % EMC_N_KINDS);
  EmcReaderFlags flags = (data[0] & 0x80) ? EMC_READER_STRICT : EMC_READER_DEFAULT;
  EmcReader *r = emc_reader_new_from_bytes(data + 1, size - 1, "fuzz", kind, flags);
  emc_reader_set_max_line_bytes(r, 1 << 16);
  GString *line = g_string_new(NULL);
  GError *err = NULL;
  EmcRecord rec;
  while (emc_reader_next(r, &rec, &err)) {
    if (rec.kind != kind) __builtin_trap();
    /* Header (stage CSV) mode reads sub-millisecond times and pandas numbers the raw format cannot hold. */
    if (kind != EMC_KIND_PROPAGATION && !emc_reader_has_header(r)) check_roundtrip(&rec, line);
  }
  if (err && err->domain != EMC_ERROR) __builtin_trap();
  guint kept = 0;
  for (const char *const *m = emc_reader_bad_line_messages(r); *m; m++)
    kept++;
  if (kept > EMC_BAD_LINES_KEPT || kept > emc_reader_bad_lines(r)) __builtin_trap();
  if ((flags & EMC_READER_STRICT) && emc_reader_bad_lines(r)) __builtin_trap();
  if (err) g_error_free(err);
  g_string_free(line, TRUE);
  emc_reader_free(r);
  return 0;
}
