/* test_obs_async.c: the queued sink (analysis/obs_async.h): the inner sink sees the calls it would have seen
 * directly, in the same order, whoever applied them; a refused record is reported by the producer's next
 * call and the records after it are dropped. */
#include <CUnit/CUnit.h>
#include <glib.h>
#include <string.h>

#include "cunit-main.h"
#include "obs_async.h"
#include "side-thread.h"

/* An inner sink that writes one line per call; it refuses tx_seen of tx `fail_at` (0: none). */
typedef struct {
  GString *log;
  guint64 fail_at;
} Recorder;

static void rec_vantages(gpointer user, const char *const *names, guint n) {
  Recorder *r = user;
  g_string_append_printf(r->log, "vantages %u", n);
  for (guint i = 0; i < n; i++) g_string_append_printf(r->log, " %s", names[i]);
  g_string_append_c(r->log, '\n');
}

static gboolean rec_block(gpointer user, const ObsBlock *b, GError **error) {
  (void)error;
  g_string_append_printf(((Recorder *)user)->log, "block %" G_GUINT64_FORMAT "\n", b->id);
  return TRUE;
}

static void put_recv(GString *s, const int64_t *recv, guint n) {
  if (!recv) g_string_append(s, " -");
  for (guint i = 0; recv && i < n; i++) g_string_append_printf(s, " %" G_GINT64_FORMAT, recv[i]);
  g_string_append_c(s, '\n');
}

static gboolean rec_tx(gpointer user, const ObsTx *tx, const int64_t *recv, GError **error) {
  Recorder *r = user;
  if (tx->id == r->fail_at) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "tx %" G_GUINT64_FORMAT " refused", tx->id);
    return FALSE;
  }
  g_string_append_printf(r->log, "tx %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT,
                         tx->id, tx->sender, tx->nonce, tx->created_ns);
  put_recv(r->log, recv, 3);
  return TRUE;
}

static gboolean rec_inclusion(gpointer user, const ObsTxInclusion *in, GError **error) {
  (void)error;
  g_string_append_printf(((Recorder *)user)->log, "in %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %u\n", in->tx,
                         in->block, in->height);
  return TRUE;
}

static gboolean rec_main(gpointer user, uint32_t h, uint64_t block, int64_t mined, const int64_t *recv,
                         GError **error) {
  (void)error;
  Recorder *r = user;
  g_string_append_printf(r->log, "main %u %" G_GUINT64_FORMAT " %" G_GINT64_FORMAT, h, block, mined);
  put_recv(r->log, recv, 3);
  return TRUE;
}

static void rec_finish(gpointer user) { g_string_append(((Recorder *)user)->log, "finish\n"); }

static ObsSink recorder_sink(Recorder *r) {
  return (ObsSink){.user = r,
                   .vantages = rec_vantages,
                   .block = rec_block,
                   .tx_seen = rec_tx,
                   .tx_inclusion = rec_inclusion,
                   .main_block = rec_main,
                   .finish = rec_finish};
}

/* The producer's calls: a mixed stream of `n` records (receptions on some, NULL on others), a block call in
 * the middle. After record `wait_at`, waits (up to 60 s) until the helper has applied something, so that the
 * helper's path is taken whatever the scheduler does. Returns FALSE at the first refused call. */
static gboolean produce(const ObsSink *s, guint n, ObsAsync *wait_q, guint wait_at, GError **error) {
  static const char *const names[] = {"WE", "EE", "NA"};
  s->vantages(s->user, names, 3);
  guint64 rng = 12345;
  for (guint i = 1; i <= n; i++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    guint kind = (guint)(rng >> 60) % 8;
    int64_t recv[3] = {(int64_t)i * 3, (int64_t)(rng >> 40), -(int64_t)i};
    gboolean ok = TRUE;
    if (kind < 5) {
      ObsTx tx = {.id = i, .sender = rng >> 50, .nonce = i / 7, .created_ns = (int64_t)i * 1000, .type = 1};
      ok = s->tx_seen(s->user, &tx, kind == 4 ? NULL : recv, error);
    } else if (kind < 7) {
      ObsTxInclusion in = {.tx = i / 2, .block = 1000 + i, .height = i / 10 + 1};
      ok = s->tx_inclusion(s->user, &in, error);
    } else {
      ok = s->main_block(s->user, i, 5000 + i, (int64_t)i * 13, recv, error);
    }
    if (!ok) return FALSE;
    if (i == n / 2) {
      ObsBlock b = {.id = 77};
      if (!s->block(s->user, &b, error)) return FALSE;
    }
    if (wait_q && i == wait_at) {
      guint64 by_helper = 0;
      for (int t = 0; t < 60000 && by_helper == 0; t++) {
        obs_async_counts(wait_q, &by_helper, NULL);
        if (by_helper == 0) g_usleep(1000);
      }
      CU_ASSERT(by_helper > 0);
    }
  }
  s->finish(s->user);
  return TRUE;
}

static void test_same_calls_same_order(void) {
  Recorder direct = {.log = g_string_new(NULL)};
  ObsSink ds = recorder_sink(&direct);
  CU_ASSERT_TRUE(produce(&ds, 20000, NULL, 0, NULL));
  /* Queues of 8 (full every few records: the producer applies a quarter) and of the default size, with a
   * helper thread applying records at the same time. */
  for (guint cap = 8; cap; cap = cap == 8 ? 4096 : 0) {
    Recorder queued = {.log = g_string_new(NULL)};
    ObsSink inner = recorder_sink(&queued), qs;
    ObsAsync *q = obs_async_new(&inner, cap);
    obs_async_sink(q, &qs);
    SideThread h;
    side_thread_start(&h, obs_async_consume, q);
    GError *e = NULL;
    CU_ASSERT_TRUE(produce(&qs, 20000, q, 100, &e));
    CU_ASSERT_PTR_NULL(e);
    side_thread_stop(&h);
    guint64 by_helper = 0, by_producer = 0;
    obs_async_counts(q, &by_helper, &by_producer);
    CU_ASSERT(by_helper > 0);
    CU_ASSERT_EQUAL(by_helper + by_producer, 20000); /* every record, once */
    CU_ASSERT_EQUAL(queued.log->len, direct.log->len);
    CU_ASSERT_STRING_EQUAL(queued.log->str, direct.log->str);
    obs_async_free(q);
    g_string_free(queued.log, TRUE);
  }
  g_string_free(direct.log, TRUE);
}

/* Receptions before any vantage table cannot be queued: such a call is applied at once, in its place. */
static void test_receptions_before_vantages(void) {
  int64_t recv[3] = {1, 2, 3};
  ObsTx a = {.id = 1}, b = {.id = 2};
  ObsTxInclusion in = {.tx = 1, .block = 9, .height = 1};
  Recorder direct = {.log = g_string_new(NULL)}, queued = {.log = g_string_new(NULL)};
  ObsSink ds = recorder_sink(&direct), inner = recorder_sink(&queued), qs;
  ObsAsync *q = obs_async_new(&inner, 0);
  obs_async_sink(q, &qs);
  const ObsSink *sinks[] = {&ds, &qs};
  for (guint i = 0; i < 2; i++) {
    const ObsSink *s = sinks[i];
    CU_ASSERT_TRUE(s->tx_inclusion(s->user, &in, NULL));
    CU_ASSERT_TRUE(s->tx_seen(s->user, &a, recv, NULL));
    CU_ASSERT_TRUE(s->tx_seen(s->user, &b, NULL, NULL));
    s->finish(s->user);
  }
  CU_ASSERT_STRING_EQUAL(queued.log->str, direct.log->str);
  CU_ASSERT_STRING_EQUAL(direct.log->str, "in 1 9 1\ntx 1 0 0 0 1 2 3\ntx 2 0 0 0 -\nfinish\n");
  obs_async_free(q);
  g_string_free(direct.log, TRUE);
  g_string_free(queued.log, TRUE);
}

/* A refused record: the producer's next call fails with its error, nothing after it reaches the sink. */
static void test_refusal_reported(void) {
  Recorder queued = {.log = g_string_new(NULL), .fail_at = 10};
  ObsSink inner = recorder_sink(&queued), qs;
  ObsAsync *q = obs_async_new(&inner, 4); /* no helper: the producer applies a record whenever the queue is full */
  obs_async_sink(q, &qs);
  static const char *const names[] = {"A", "B", "C"};
  qs.vantages(qs.user, names, 3);
  int64_t recv[3] = {0, 0, 0};
  GError *e = NULL;
  guint64 i = 1;
  for (; i <= 100; i++) {
    ObsTx tx = {.id = i};
    if (!qs.tx_seen(qs.user, &tx, recv, &e)) break;
  }
  CU_ASSERT(i > 10 && i <= 15); /* reported within a queue's length of the refused one */
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_STRING_EQUAL(e->message, "tx 10 refused");
  g_clear_error(&e);
  ObsBlock b = {.id = 5};
  CU_ASSERT_FALSE(qs.block(qs.user, &b, &e)); /* every later call too */
  CU_ASSERT_PTR_NOT_NULL(e);
  g_clear_error(&e);
  qs.finish(qs.user);
  g_autofree char *want = NULL;
  GString *w = g_string_new("vantages 3 A B C\n");
  for (guint64 k = 1; k < 10; k++) g_string_append_printf(w, "tx %" G_GUINT64_FORMAT " 0 0 0 0 0 0\n", k);
  g_string_append(w, "finish\n");
  want = g_string_free(w, FALSE);
  CU_ASSERT_STRING_EQUAL(queued.log->str, want);
  obs_async_free(q);
  g_string_free(queued.log, TRUE);
}

int register_suites(void) {
  ADD_SUITE("obs_async", TEST(test_same_calls_same_order), TEST(test_receptions_before_vantages),
            TEST(test_refusal_reported));
  return 0;
}
