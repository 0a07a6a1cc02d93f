/* txindex.c: the index from a 64-bit key (tx id) to a pool entry: open addressing with linear probing. */
#include "txmetrics-private.h"

#define INDEX_MIN_BITS 4

void txm_index_init(Index *ix, guint full) {
  ix->full = full;
  ix->bits = INDEX_MIN_BITS;
  ix->slot = g_new0(uint64_t, (gsize)1 << ix->bits);
  ix->used = 0;
}

void txm_index_release(Index *ix) {
  g_clear_pointer(&ix->slot, g_free);
  ix->used = 0;
}

static inline gsize index_home(guint bits, uint64_t slot) {
  return (gsize)((uint32_t)(slot >> 32) >> (32 - bits));
}

static void index_place(uint64_t *slot, guint bits, uint64_t s) {
  gsize mask = ((gsize)1 << bits) - 1, i = index_home(bits, s);
  while (slot[i])
    i = (i + 1) & mask;
  slot[i] = s;
}

/* Maps `key` (absent) to `entry`. */
void txm_index_insert(Index *ix, uint64_t key, uint32_t entry) {
  if (((gsize)ix->used + 1) * 8 > (gsize)ix->full << ix->bits) {
    guint bits = ix->bits + 1;
    g_assert(bits <= 32);
    uint64_t *slot = g_new0(uint64_t, (gsize)1 << bits);
    for (gsize i = 0; i <= txm_index_mask(ix); i++)
      if (ix->slot[i]) index_place(slot, bits, ix->slot[i]);
    g_free(ix->slot);
    ix->slot = slot;
    ix->bits = bits;
  }
  index_place(ix->slot, ix->bits, (txm_index_hash(key) & ~(uint64_t)UINT32_MAX) | ((uint64_t)entry + 1));
  ix->used++;
}

/* Empties slot `pos`, moving later slots of the probe run back so that no lookup stops short. */
void txm_index_remove_at(Index *ix, gssize pos) {
  gsize mask = txm_index_mask(ix), i = (gsize)pos;
  for (gsize j = (i + 1) & mask; ix->slot[j]; j = (j + 1) & mask) {
    gsize home = index_home(ix->bits, ix->slot[j]);
    if (((j - home) & mask) >= ((j - i) & mask)) { /* i lies on the way from its home to j */
      ix->slot[i] = ix->slot[j];
      i = j;
    }
  }
  ix->slot[i] = 0;
  ix->used--;
}
