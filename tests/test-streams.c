/* Streams: ordering inferred from buffer arguments, with no user sync;
 * cross-stream waits counted once; write-after-read and freed memory kept
 * safe across streams; the per-stream counters. */
#include "common.h"
#include "gate.h"

#include <pthread.h>
#include <stddef.h>

/* Streams on one backend queue are ordered by the queue: the interleave
 * strategy of the scheduler driver puts every stream of a device on one
 * queue, sequential with queues=M stream i on queue i mod M, and a
 * consumer needs no event wait on a producer of its own queue.  Expected
 * wait counts (the contexts here have one device) go through this. */
static unsigned long long waits_expected(int consumer, int producer, unsigned long long n) {
  const char *s = getenv("CLS_SCHEDULER");
  if (s && strstr(s, "interleave"))
    return 0;
  const char *q = s && strncmp(s, "scheduler", 9) == 0 ? strstr(s, "queues=") : NULL;
  int m = q ? atoi(q + 7) : 0;
  return m > 0 && consumer % m == producer % m ? 0 : n;
}

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *copy_k, *add_k, *inc_k, *slow_k;

/* Launches of slow_k are held by the gate until the test opens it: "still
 * running" must not depend on the device's speed (an H200 finishes the
 * slow kernel before the host's next call). */
static struct gate gate;

static void setup(void) {
  gate = (struct gate){.gated = "slow_k"};
  ctx = ct_context_with(NULL, &gate_factory, &gate);
  /* oclgrind runs a queue inside clFlush: a held command would make the
   * flush for the next cross-stream wait wait forever.  It starts no work
   * before that flush, so its producers are still "running" unheld. */
  if (ct_icontains(ct_context_info(ctx).platform_name, "oclgrind"))
    gate.gated = NULL;
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  add_k = ct_get_kernel(ctx, prog, "add_k");
  inc_k = ct_get_kernel(ctx, prog, "inc_k");
  slow_k = ct_get_kernel(ctx, prog, "slow_k");
}
static void teardown(void) {
  gate_open(&gate); /* a failed check must not leave work held */
  cls_context_destroy(ctx);
  ctx = NULL;
  gate_release(&gate);
}

/* Opens the gate from another thread after a while: for a blocking call
 * that must wait for the held reader.  The status goes back to the test's
 * thread, which asserts it (Check's asserts belong to that thread). */
static cl_int opened_rc;
static void *open_later(void *arg) {
  struct timespec ts = {0, 100 * 1000 * 1000};
  nanosleep(&ts, NULL);
  opened_rc = clSetUserEventStatus(((struct gate *)arg)->ev, CL_COMPLETE);
  return NULL;
}

/* Runs a call that blocks until the held reader has run; the gate opens
 * from another thread meanwhile.  Had the call not been ordered after the
 * reader, it would have finished before the reader started.  Where the
 * gate holds at all (not on oclgrind), the reader was held by the time the
 * call returned (a driver that defers enqueues hands it over inside the
 * call). */
#define WHILE_HELD(call)                                                      \
  do {                                                                        \
    pthread_t opener_;                                                        \
    bool hold_ = gate.gated && gate.ev && !gate.opened;                       \
    ck_assert_msg(hold_ || !gate.gated, "the gate is open already");         \
    if (hold_)                                                                \
      ck_assert_int_eq(pthread_create(&opener_, NULL, open_later, &gate), 0); \
    call;                                                                     \
    if (hold_) {                                                              \
      pthread_join(opener_, NULL);                                            \
      ck_assert_int_eq(opened_rc, CL_SUCCESS);                                \
      ck_assert_msg(gate.held > 0, "the reader was not held");                \
    }                                                                         \
    gate.opened = true;                                                       \
  } while (0)

static void launch_fill(int stream, cls_buffer b, size_t n, int v) {
  cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
  ct_launch1(ctx, stream, fill_k, n, 2, a);
}

static void launch_copy(int stream, cls_buffer from, cls_buffer to, size_t n) {
  cls_arg a[] = {CLS_IN(from), CLS_OUT(to)};
  ct_launch1(ctx, stream, copy_k, n, 2, a);
}

static struct cls_stream_stats stats(int stream) {
  struct cls_stream_stats st;
  memset(&st, 0xff, sizeof st);
  CT_OK(cls_stream_stats(ctx, stream, &st));
  return st;
}

/* Work per item of the slow reader: long enough that an unordered writer
 * on another stream would land while it runs.  Quick runs (oclgrind, which
 * takes 49 s for the full amount) use less: it starts a queue's work only
 * when the queue is flushed, so a wait is still needed there. */
enum { SLOW_N = 4096 };
static int SLOW_ITERS = 20000;

/* ------------------------------------------------------------------ */

START_TEST(consumer_on_other_stream_sees_producer_output) {
  enum { N = 4096 };
  static int got[N];
  cls_buffer A = ct_alloc(ctx, 0, N * sizeof(int)), B = ct_alloc(ctx, 1, N * sizeof(int));
  /* A fill on stream 0, read by a launch on stream 1. */
  const int pat = 1234;
  CT_OK(cls_fill(ctx, 0, A, 0, N * sizeof(int), &pat, sizeof pat));
  launch_copy(1, A, B, N);
  ct_download_ints(ctx, 1, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 1234);
  /* A launch on stream 0, read by a launch on stream 1. */
  launch_fill(0, A, N, -77);
  cls_arg inc[] = {CLS_INOUT(A)};
  ct_launch1(ctx, 0, inc_k, N, 1, inc);
  launch_copy(1, A, B, N);
  ct_download_ints(ctx, 1, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, -76);
  /* An upload on stream 0, read by a launch on stream 1, downloaded on 2. */
  static int src[N];
  for (int i = 0; i < N; i++)
    src[i] = i * 3;
  CT_OK(cls_upload(ctx, 0, A, 0, src, sizeof src));
  launch_copy(1, A, B, N);
  ct_download_ints(ctx, 2, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 3 * (int)i);
}
END_TEST

START_TEST(alternating_producer_and_consumer_200_times) {
  enum { N = 1024 };
  static int got[N];
  cls_buffer A = ct_alloc(ctx, 0, N * sizeof(int)), B = ct_alloc(ctx, 1, N * sizeof(int)),
             C = ct_alloc(ctx, 2, N * sizeof(int));
  for (int it = 0; it < 200; it++) {
    int p = it % 2, q = 1 - p;
    launch_fill(p, A, N, it);
    launch_copy(q, A, B, N);
    cls_arg args[] = {CLS_IN(A), CLS_IN(B), CLS_OUT(C)};
    ct_launch1(ctx, p, add_k, N, 3, args); /* reads q's B: back again */
    if (it % 20 == 19 || it < 3) {
      ct_download_ints(ctx, q, C, got, N);
      for (size_t i = 0; i < N; i++)
        if (got[i] != 2 * it)
          ck_abort_msg("iteration %d: C[%zu] = %d, expected %d", it, i, got[i], 2 * it);
    }
  }
  ct_download_ints(ctx, 0, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 199);
}
END_TEST

/* A producer on `stream` that is still running when the next few calls are
 * made (held by the gate until the test opens it): a stream ordered after a
 * command that already finished needs no wait, so the wait counts below are
 * only defined against running work.
 * Writes A[i] = ct_slow_expect(i, SLOW_ITERS, x[i]) from X. */
static void slow_produce(int stream, cls_buffer X, cls_buffer A) {
  int iters = SLOW_ITERS;
  cls_arg r[] = {CLS_IN(X), CLS_OUT(A), CLS_SCALAR(iters)};
  ct_launch1(ctx, stream, slow_k, SLOW_N, 3, r);
}

static void assert_slow_result(int stream, cls_buffer b, const int *x, const char *what) {
  static int got[SLOW_N];
  ct_download_ints(ctx, stream, b, got, SLOW_N);
  for (int i = 0; i < SLOW_N; i++) {
    int want = ct_slow_expect((uint32_t)i, SLOW_ITERS, x[i]);
    if (got[i] != want)
      ck_abort_msg("%s[%d] = %d, expected %d", what, i, got[i], want);
  }
}

START_TEST(cross_stream_read_adds_one_wait_and_flushes_producer) {
  static int x[SLOW_N];
  for (int i = 0; i < SLOW_N; i++)
    x[i] = 31 + i;
  const size_t bytes = sizeof x;
  cls_buffer X = ct_alloc(ctx, 0, bytes), A = ct_alloc(ctx, 0, bytes),
             B = ct_alloc(ctx, 1, bytes), C = ct_alloc(ctx, 1, bytes),
             E = ct_alloc(ctx, 1, bytes), D = ct_alloc(ctx, 2, bytes);
  ct_upload_ints(ctx, 0, X, x, SLOW_N);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  slow_produce(0, X, A);
  ck_assert_uint_eq(stats(1).waits, 0);
  ck_assert_uint_eq(stats(0).flushes, 0);

  /* Stream 1 reads stream 0's output: one wait, and stream 0 flushed. */
  launch_copy(1, A, B, SLOW_N);
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 1));
  ck_assert_uint_ge(stats(0).flushes, 1);
  ck_assert_uint_eq(stats(1).launches, 1);

  /* Reading the same producer state again: already ordered, no wait. */
  launch_copy(1, A, C, SLOW_N);
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 1));

  /* Reading only what stream 1 wrote itself: no wait. */
  launch_copy(1, B, E, SLOW_N);
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 1));
  ck_assert_uint_eq(stats(1).launches, 3);

  /* Another stream reading A: one wait there. */
  ck_assert_uint_eq(stats(2).waits, 0);
  launch_copy(2, A, D, SLOW_N);
  ck_assert_uint_eq(stats(2).waits, waits_expected(2, 0, 1));
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 1));
  ck_assert_uint_eq(stats(0).waits, 0);

  gate_open(&gate);
  assert_slow_result(1, B, x, "B");
  assert_slow_result(1, C, x, "C");
  assert_slow_result(1, E, x, "E");
  assert_slow_result(2, D, x, "D");
}
END_TEST

START_TEST(new_producer_write_needs_a_new_wait) {
  static int x[SLOW_N], y[SLOW_N];
  for (int i = 0; i < SLOW_N; i++) {
    x[i] = i;
    y[i] = -i;
  }
  const size_t bytes = sizeof x;
  cls_buffer X = ct_alloc(ctx, 0, bytes), Y = ct_alloc(ctx, 0, bytes),
             A = ct_alloc(ctx, 0, bytes), B = ct_alloc(ctx, 1, bytes);
  ct_upload_ints(ctx, 0, X, x, SLOW_N);
  ct_upload_ints(ctx, 0, Y, y, SLOW_N);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  slow_produce(0, X, A);
  launch_copy(1, A, B, SLOW_N);
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 1));
  slow_produce(0, Y, A); /* a new state of A, after stream 1's read */
  launch_copy(1, A, B, SLOW_N);
  ck_assert_uint_eq(stats(1).waits, waits_expected(1, 0, 2));
  gate_open(&gate);
  assert_slow_result(1, B, y, "B");
}
END_TEST

START_TEST(write_after_read_across_streams_keeps_old_data) {
  static int a[SLOW_N], got[SLOW_N];
  for (int i = 0; i < SLOW_N; i++)
    a[i] = 1000 + i;
  cls_buffer A = ct_alloc(ctx, 0, sizeof a), B = ct_alloc(ctx, 1, sizeof got);
  ct_upload_ints(ctx, 0, A, a, SLOW_N);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  /* Stream 1 reads A slowly... */
  int iters = SLOW_ITERS;
  cls_arg r[] = {CLS_IN(A), CLS_OUT(B), CLS_SCALAR(iters)};
  ct_launch1(ctx, 1, slow_k, SLOW_N, 3, r);
  /* ...while stream 0 overwrites it, by a launch and by a fill. */
  launch_fill(0, A, SLOW_N, -5);
  const int pat = -6;
  CT_OK(cls_fill(ctx, 0, A, 0, sizeof a, &pat, sizeof pat));
  WHILE_HELD(CT_OK(cls_stream_sync(ctx, 0, NULL)));
  ct_download_ints(ctx, 1, B, got, SLOW_N);
  for (int i = 0; i < SLOW_N; i++) {
    int want = ct_slow_expect((uint32_t)i, SLOW_ITERS, a[i]);
    if (got[i] != want)
      ck_abort_msg("B[%d] = %d, expected %d (the reader saw the later write)", i, got[i], want);
  }
  ct_download_ints(ctx, 0, A, got, SLOW_N);
  CT_EXPECT_INTS(got, (size_t)SLOW_N, i, -6);
}
END_TEST

START_TEST(write_after_read_by_upload_keeps_old_data) {
  static int a[SLOW_N], b[SLOW_N], got[SLOW_N];
  for (int i = 0; i < SLOW_N; i++) {
    a[i] = 7 * i;
    b[i] = -1;
  }
  cls_buffer A = ct_alloc(ctx, 0, sizeof a), B = ct_alloc(ctx, 1, sizeof got);
  ct_upload_ints(ctx, 0, A, a, SLOW_N);
  int iters = SLOW_ITERS;
  cls_arg r[] = {CLS_IN(A), CLS_OUT(B), CLS_SCALAR(iters)};
  ct_launch1(ctx, 1, slow_k, SLOW_N, 3, r);
  WHILE_HELD(CT_OK(cls_upload(ctx, 0, A, 0, b, sizeof b)));
  ct_download_ints(ctx, 1, B, got, SLOW_N);
  for (int i = 0; i < SLOW_N; i++) {
    int want = ct_slow_expect((uint32_t)i, SLOW_ITERS, a[i]);
    if (got[i] != want)
      ck_abort_msg("B[%d] = %d, expected %d (the reader saw the upload)", i, got[i], want);
  }
}
END_TEST

START_TEST(freed_memory_is_not_reused_under_a_reader) {
  static int x[SLOW_N], got[SLOW_N];
  for (int i = 0; i < SLOW_N; i++)
    x[i] = 3 * i + 11;
  const size_t bytes = sizeof x;
  cls_buffer X = ct_alloc(ctx, 0, bytes), Y = ct_alloc(ctx, 1, bytes);
  ct_upload_ints(ctx, 0, X, x, SLOW_N);
  int iters = SLOW_ITERS;
  cls_arg r[] = {CLS_IN(X), CLS_OUT(Y), CLS_SCALAR(iters)};
  ct_launch1(ctx, 1, slow_k, SLOW_N, 3, r);
  CT_OK(cls_free(ctx, X));
  /* New buffers of the same size on X's stream, written at once. */
  cls_buffer keep[16];
  const int pat = 0x5a5a5a5a;
  for (int i = 0; i < 16; i++) {
    keep[i] = ct_alloc(ctx, 0, bytes);
    CT_OK(cls_fill(ctx, 0, keep[i], 0, bytes, &pat, sizeof pat));
    launch_fill(0, keep[i], SLOW_N, -i);
  }
  for (int i = 0; i < 32; i++) {
    cls_buffer z = ct_alloc(ctx, 0, bytes);
    CT_OK(cls_fill(ctx, 0, z, 0, bytes, &pat, sizeof pat));
    CT_OK(cls_free(ctx, z));
  }
  WHILE_HELD(CT_OK(cls_stream_sync(ctx, 0, NULL)));
  ct_download_ints(ctx, 1, Y, got, SLOW_N);
  for (int i = 0; i < SLOW_N; i++) {
    int want = ct_slow_expect((uint32_t)i, SLOW_ITERS, x[i]);
    if (got[i] != want)
      ck_abort_msg("Y[%d] = %d, expected %d (X's memory was reused under the reader)", i,
                   got[i], want);
  }
  for (int i = 0; i < 16; i++) {
    ct_download_ints(ctx, 0, keep[i], got, SLOW_N);
    CT_EXPECT_INTS(got, (size_t)SLOW_N, k, -i);
  }
}
END_TEST

START_TEST(stream_stats_rejects_bad_stream_ids) {
  struct cls_stream_stats st;
  CT_ERR(cls_stream_stats(ctx, -1, &st), CLS_ESTREAM);
  CT_ERR(cls_stream_stats(ctx, CLS_MAX_STREAMS, &st), CLS_ESTREAM);
  CT_ERR(cls_stream_stats(ctx, 1 << 20, &st), CLS_ESTREAM);
  CT_OK(cls_stream_stats(ctx, CLS_MAX_STREAMS - 1, &st));
}
END_TEST

START_TEST(stats_count_launches_and_reset_zeroes_them) {
  enum { N = 64 };
  cls_buffer A = ct_alloc(ctx, 0, N * sizeof(int)), B = ct_alloc(ctx, 1, N * sizeof(int));
  CT_OK(cls_stats_reset(ctx));
  launch_fill(0, A, N, 1);
  launch_fill(0, A, N, 2);
  launch_fill(0, A, N, 3);
  launch_copy(1, A, B, N);
  struct cls_stream_stats s0 = stats(0), s1 = stats(1);
  ck_assert_uint_eq(s0.launches, 3);
  ck_assert_uint_ge(s0.enqueues, 3);
  ck_assert_uint_eq(s1.launches, 1);
  ck_assert_uint_ge(s1.enqueues, 1);
  ck_assert_uint_eq(s0.skips, 0);
  ck_assert_uint_eq(s1.skips, 0);
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_stats_reset(ctx));
  struct cls_stream_stats zero;
  memset(&zero, 0, sizeof zero);
  for (int s = 0; s < 3; s++) {
    struct cls_stream_stats st = stats(s);
    ck_assert_msg(memcmp(&st, &zero, sizeof st) == 0,
                  "stream %d after reset: enqueues %llu launches %llu skips %llu waits %llu "
                  "flushes %llu markers %llu submissions %llu failures %llu",
                  s, (unsigned long long)st.enqueues, (unsigned long long)st.launches,
                  (unsigned long long)st.skips, (unsigned long long)st.waits,
                  (unsigned long long)st.flushes, (unsigned long long)st.markers,
                  (unsigned long long)st.submissions, (unsigned long long)st.failures);
  }
  /* Counting resumes. */
  launch_fill(0, A, N, 4);
  ck_assert_uint_eq(stats(0).launches, 1);
  int got[N];
  ct_download_ints(ctx, 1, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 3);
}
END_TEST

START_TEST(stream_sync_waits_for_that_stream) {
  enum { N = 512 };
  static int got[N];
  cls_buffer A = ct_alloc(ctx, 3, N * sizeof(int));
  launch_fill(3, A, N, 8);
  cls_arg inc[] = {CLS_INOUT(A)};
  for (int k = 0; k < 10; k++)
    ct_launch1(ctx, 3, inc_k, N, 1, inc);
  CT_OK(cls_stream_sync(ctx, 3, NULL));
  CT_OK(cls_stream_sync(ctx, 5, NULL)); /* a stream with no work */
  CT_ERR(cls_stream_sync(ctx, -1, NULL), CLS_ESTREAM);
  CT_ERR(cls_stream_sync(ctx, CLS_MAX_STREAMS, NULL), CLS_ESTREAM);
  ct_download_ints(ctx, 4, A, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 18);
}
END_TEST

START_TEST(highest_stream_id_works) {
  enum { N = 32 };
  int got[N];
  const int last = CLS_MAX_STREAMS - 1;
  cls_buffer A = ct_alloc(ctx, last, N * sizeof(int)), B = ct_alloc(ctx, 0, N * sizeof(int));
  launch_fill(last, A, N, 63);
  launch_copy(0, A, B, N);
  ct_download_ints(ctx, last, B, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 63);
}
END_TEST

/* A factory built against version 1 of <clstream/stream.h> ends before
 * last_event: the core must not read past its end (an ASan build sees the
 * read), and a cross-stream wait goes through marker() instead.  The
 * factory here is the gate cut to its version 1 size; its first copy is
 * held, so the launch after it has to wait. */
START_TEST(version_1_factory_orders_through_markers) {
  enum { N = 64 };
  struct gate g = {.gated = gate.gated ? "copy_k" : NULL}; /* see setup() */
  size_t v1 = offsetof(struct cls_stream_factory, last_event);
  struct cls_stream_factory *f = malloc(v1), full = gate_factory;
  ck_assert_ptr_nonnull(f);
  full.version = 1; /* set here: f is too short to be written as a whole struct */
  memcpy(f, &full, v1);
  cls_context *c = ct_context_with(NULL, f, &g);
  cls_kernel *copy = ct_kernel(c, CT_COPY_SRC, "copy_k");
  cls_buffer a = ct_written(c, 0, N, 7), b = ct_alloc(c, 1, N * sizeof(int));
  for (int i = 0; i < 20; i++) { /* ping-pong: every launch reads the other's output */
    cls_arg ab[] = {CLS_IN(a), CLS_OUT(b)}, ba[] = {CLS_IN(b), CLS_OUT(a)};
    ct_launch1(c, 1, copy, N, 2, ab);
    ct_launch1(c, 0, copy, N, 2, ba);
    gate_open(&g);
  }
  ct_expect_ints(c, 2, b, N, 7);
  /* Each wait (the download's on stream 2 too) took a marker; none at all
   * on one shared queue. */
  unsigned long long w = 0, m = 0, gm = 0;
  for (int i = 0; i < 3; i++) {
    struct cls_stream_stats st;
    CT_OK(cls_stream_stats(c, i, &st));
    w += st.waits;
    m += st.markers;
    gm += g.markers[i];
  }
  if (!waits_expected(0, 1, 1))
    ck_assert_uint_eq(w, 0);
  else if (g.gated)
    ck_assert_msg(g.held >= 1 && w >= 1, "held %lu, waits %llu", g.held, w);
  ck_assert_uint_eq(m, w);
  ck_assert_uint_eq(gm, w); /* all through marker(): the gate counted them */
  cls_context_destroy(c);
  gate_release(&g);
  free(f);
}
END_TEST

/* A released cl_mem may come back at the same address, where a runtime
 * may keep what it resolved of the old one: so every kernel copy (the
 * kernel's own and each stream's) forgets the arguments it holds when a
 * buffer is released, and sets them all again at its next launch, while
 * a launch after nothing was released sets none (the memo). */
START_TEST(a_release_makes_every_kernel_copy_forget_its_arguments) {
  enum { N = 64, S = 3 };
  cls_buffer a = ct_written(ctx, 0, N, 2), b = ct_written(ctx, 0, N, 3);
  cls_buffer c[S], spare = ct_alloc(ctx, 0, N * sizeof(int));
  for (int s = 0; s < S; s++)
    c[s] = ct_alloc(ctx, s, N * sizeof(int));
  for (int round = 0; round < 2; round++) {
    gate.memo_none = gate.memo_some = gate.memo_all = 0;
    for (int s = 0; s < S; s++) {
      cls_arg args[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c[s])};
      ct_launch1(ctx, s, add_k, N, 3, args);
    }
    CT_OK(cls_sync(ctx, NULL)); /* each launch reached its factory */
  }
  /* The second round: every copy knew every argument. */
  ck_assert_msg(gate.memo_all == S && !gate.memo_some && !gate.memo_none,
                "memos: %lu all, %lu some, %lu none known", gate.memo_all, gate.memo_some,
                gate.memo_none);
  CT_OK(cls_free(ctx, spare));
  gate.memo_none = gate.memo_some = gate.memo_all = 0;
  for (int s = S - 1; s >= 0; s--) {
    cls_arg args[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c[s])};
    ct_launch1(ctx, s, add_k, N, 3, args);
  }
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_msg(gate.memo_none == S && !gate.memo_some && !gate.memo_all,
                "memos after a release: %lu all, %lu some, %lu none known", gate.memo_all,
                gate.memo_some, gate.memo_none);
  for (int s = 0; s < S; s++)
    ct_expect_ints(ctx, s, c[s], N, 5);
}
END_TEST

int main(void) {
  ct_require_device();
  SLOW_ITERS = ct_scale(SLOW_ITERS, 200);
  Suite *s = suite_create("streams");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, setup, teardown)
  ADD(a_release_makes_every_kernel_copy_forget_its_arguments);
  ADD(consumer_on_other_stream_sees_producer_output);
  ADD(alternating_producer_and_consumer_200_times);
  ADD(cross_stream_read_adds_one_wait_and_flushes_producer);
  ADD(new_producer_write_needs_a_new_wait);
  ADD(write_after_read_across_streams_keeps_old_data);
  ADD(write_after_read_by_upload_keeps_old_data);
  ADD(freed_memory_is_not_reused_under_a_reader);
  ADD(stream_stats_rejects_bad_stream_ids);
  ADD(stats_count_launches_and_reset_zeroes_them);
  ADD(stream_sync_waits_for_that_stream);
  ADD(highest_stream_id_works);
  ADD(version_1_factory_orders_through_markers);
#undef ADD
  return ct_run(s);
}
