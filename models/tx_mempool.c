/* tx_mempool.c: the mempool: the slab of transactions and the price index (bins of 2% width). */
#include "tx-private.h"

uint32_t txw_slot_new(TxWorld *w) {
  if (w->free_head == NONE) {
    uint32_t old = w->cap, cap = MAX(1024u, old * 2);
    TxE *tx = g_aligned_alloc(cap, sizeof(TxE), 64);
    if (old) memcpy(tx, w->tx, sizeof(TxE) * old);
    g_aligned_free(w->tx);
    w->tx = tx;
    w->arrive = g_renew(int64_t, w->arrive, (gsize)cap * MAX(w->n_pools, 1));
    w->free_next = g_renew(uint32_t, w->free_next, cap);
    w->vlink = g_renew(VisLink, w->vlink, cap);
    for (uint32_t i = old; i < cap; i++) {
      w->tx[i].id = 0;
      w->free_next[i] = i + 1 < cap ? i + 1 : NONE;
    }
    w->free_head = old;
    w->cap = cap;
  }
  uint32_t i = w->free_head;
  w->free_head = w->free_next[i];
  w->live++;
  return i;
}

void txw_slot_free(TxWorld *w, uint32_t i) {
  if (w->tx[i].more) {
    g_free(w->tx[i].more->id);
    g_free(w->tx[i].more->h);
    g_free(w->tx[i].more);
    w->tx[i].more = NULL;
  }
  w->tx[i].id = 0;
  w->free_next[i] = w->free_head;
  w->free_head = i;
  w->live--;
}

guint16 txw_price_bin(double gwei) {
  if (gwei <= 0) return 0;
  double b = 1 + floor(log(gwei / 1e-3) / log(1.02));
  return (guint16)CLAMP(b, 1, N_BINS - 1);
}

void txw_index_insert(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  guint16 b = e->bin;
  /* Its place in the bin (the list's order is strict): walked from the end nearer its price. */
  uint32_t after, head = w->bin_head[b], tail = w->bin_tail[b];
  if (head != NONE && e->price >= 0.5 * (w->tx[head].price + w->tx[tail].price)) {
    uint32_t before = head;
    while (before != NONE && txw_better(&w->tx[before], e)) before = w->tx[before].bnext;
    after = before == NONE ? tail : w->tx[before].bprev;
  } else {
    after = tail;
    while (after != NONE && txw_better(e, &w->tx[after])) after = w->tx[after].bprev;
  }
  e->bprev = after;
  e->bnext = after == NONE ? w->bin_head[b] : w->tx[after].bnext;
  if (e->bnext != NONE) w->tx[e->bnext].bprev = i; else w->bin_tail[b] = i;
  if (after != NONE) w->tx[after].bnext = i; else w->bin_head[b] = i;
  w->bin_used[b / 64] |= UINT64_C(1) << (b % 64);
  e->in_index = 1;
  w->in_index++;
  w->index_peak = MAX(w->index_peak, w->in_index);
  txw_vis_update(w, i);
}

void txw_index_remove(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  if (!e->in_index) return;
  guint16 b = e->bin;
  if (e->bprev != NONE) w->tx[e->bprev].bnext = e->bnext; else w->bin_head[b] = e->bnext;
  if (e->bnext != NONE) w->tx[e->bnext].bprev = e->bprev; else w->bin_tail[b] = e->bprev;
  if (w->bin_head[b] == NONE) w->bin_used[b / 64] &= ~(UINT64_C(1) << (b % 64));
  e->in_index = 0;
  w->in_index--;
  txw_vis_update(w, i);
}

static void vis_insert(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  VisLink *L = w->vlink;
  guint16 b = e->bin;
  uint32_t after = w->vbin_tail[b];
  while (after != NONE && txw_better(e, &w->tx[after]))
    after = L[after].prev;
  L[i].prev = after;
  L[i].next = after == NONE ? w->vbin_head[b] : L[after].next;
  if (L[i].next != NONE)
    L[L[i].next].prev = i;
  else
    w->vbin_tail[b] = i;
  if (after != NONE)
    L[after].next = i;
  else
    w->vbin_head[b] = i;
  w->vbin_used[b / 64] |= UINT64_C(1) << (b % 64);
  e->visible = 1;
}

static void vis_remove(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  VisLink *L = w->vlink;
  guint16 b = e->bin;
  if (L[i].prev != NONE)
    L[L[i].prev].next = L[i].next;
  else
    w->vbin_head[b] = L[i].next;
  if (L[i].next != NONE)
    L[L[i].next].prev = L[i].prev;
  else
    w->vbin_tail[b] = L[i].prev;
  if (w->vbin_head[b] == NONE) w->vbin_used[b / 64] &= ~(UINT64_C(1) << (b % 64));
  e->visible = 0;
}

void txw_vis_update(TxWorld *w, uint32_t i) {
  const TxE *e = &w->tx[i];
  gboolean want = e->in_index && !e->pred_clean;
  if (want && !e->visible)
    vis_insert(w, i);
  else if (!want && e->visible)
    vis_remove(w, i);
}

/* The highest non-empty bin of the template walk's index at or below `b`, or -1. */
int txw_vis_bin_at_or_below(const TxWorld *w, int b) {
  while (b >= 0) {
    uint64_t word =
        w->vbin_used[b / 64] & (b % 64 == 63 ? ~UINT64_C(0) : ((UINT64_C(1) << (b % 64 + 1)) - 1));
    if (word) return (b / 64) * 64 + 63 - __builtin_clzll(word);
    b = (b / 64) * 64 - 1;
  }
  return -1;
}

void txw_sender_unlink(TxWorld *w, uint32_t i) {
  TxE *e = &w->tx[i];
  Sender *s = &w->senders[e->sender];
  if (e->sprev != NONE) w->tx[e->sprev].snext = e->snext; else s->head = e->snext;
  if (e->snext != NONE) {
    TxE *nx = &w->tx[e->snext];
    nx->sprev = e->sprev;
    nx->pred_clean = e->sprev != NONE && w->tx[e->sprev].n_incl == 0;
    nx->pred_sel_gen = 0; /* no build runs now: any earlier build's */
    txw_vis_update(w, e->snext);
  } else {
    s->tail = e->sprev;
  }
  e->sprev = e->snext = NONE;
  e->pred_clean = 0;
  txw_vis_update(w, i);
}

/* Evicts the cheapest transaction not in any block, with its sender's later ones (they cannot run); the
 * sender's wallet then reuses the freed nonces. */
void txw_evict_one(TxWorld *w) {
  for (int b = 0; b < N_BINS; b++) {
    if (!(w->bin_used[b / 64] & (UINT64_C(1) << (b % 64)))) continue;
    for (uint32_t i = w->bin_tail[b]; i != NONE; i = w->tx[i].bprev) {
      if (w->tx[i].n_incl) continue;
      Sender *s = &w->senders[w->tx[i].sender];
      s->next_nonce = w->tx[i].nonce;
      uint32_t j = i;
      while (j != NONE) {
        uint32_t nx = w->tx[j].snext;
        txw_index_remove(w, j);
        txw_sender_unlink(w, j);
        txw_slot_free(w, j);
        w->evicted++;
        j = nx;
      }
      return;
    }
  }
}
