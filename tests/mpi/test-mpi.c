/* The MPI suite (issue 19, docs/scale-out.md): buffers and their failure
 * records across ranks.  Run by make check on 2 and on 4 ranks
 * (tests/mpi/run.sh); every rank runs every test, in the same order,
 * under each driver setting this build has (a loop test per setting).
 * Check runs without fork (a forked child cannot use MPI).  Links the
 * public libraries only. */
#include <clstream.h>
#include <clstream/mpi.h>
#include <clstream/wire.h>

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256 /* ints per buffer */

static const char *const src =
    "kernel void fill(global int *out, int v) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = v + (int)i;\n"
    "}\n"
    "kernel void blur(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = a[i] + 1;\n"
    "}\n"
    /* works before it writes, so a reader not ordered after it is seen */
    "kernel void slow(global const int *a, global int *b, int iters) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint acc = (uint)i;\n"
    "  for (int k = 0; k < iters; k++)\n"
    "    acc = acc * 1664525u + 1013904223u;\n"
    "  b[i] = a[i] + (int)(acc & 1u) - (int)(acc & 1u) + 7;\n"
    "}\n";

static int rank_, size_;
static const char *settings[3];
static int nsettings;


/* Ranks must stay in step (each test's messages, the collectives of
 * setup and teardown): a failed expectation is recorded and the test goes
 * on; teardown, after the barrier, fails the test with the first one. */
static char first_failure[512];
static int failures;
static void expect(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void expect(int ok, const char *file, int line, const char *fmt, ...) {
  if (ok || failures++)
    return;
  int n = snprintf(first_failure, sizeof first_failure, "rank %d, %s:%d: ", rank_, file, line);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(first_failure + n, sizeof first_failure - (size_t)n, fmt, ap);
  va_end(ap);
}
#define EXPECT_EQ(a, b)                                                                   \
  do {                                                                                    \
    long long a_ = (long long)(a), b_ = (long long)(b);                                   \
    expect(a_ == b_, __FILE__, __LINE__, "%s == %lld, want %s == %lld (%s)", #a, a_, #b, b_, \
           cls_last_error_detail());                                                      \
  } while (0)
#define EXPECT(c) expect((c) != 0, __FILE__, __LINE__, "%s (%s)", #c, cls_last_error_detail())
#define EXPECT_STR(a, b)                                                                  \
  do {                                                                                    \
    const char *a_ = (a);                                                                 \
    expect(a_ && strcmp(a_, (b)) == 0, __FILE__, __LINE__, "%s is \"%s\", want \"%s\"", #a, \
           a_ ? a_ : "(null)", (b));                                                      \
  } while (0)
#define EXPECT_IN(text, part)                                                             \
  do {                                                                                    \
    const char *t_ = (text);                                                              \
    expect(t_ && strstr(t_, (part)) != NULL, __FILE__, __LINE__, "no \"%s\" in: %s", (part), \
           t_ ? t_ : "(null)");                                                           \
  } while (0)

struct env {
  cls_context *ctx;
  cls_mpi *m;
  cls_program *prog;
  cls_kernel *fill, *blur, *slow;
};

static void setup(struct env *e, int setting, const char *fault) {
  memset(e, 0, sizeof *e);
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = settings[setting],
                                  .fault = fault};
  ck_assert_int_eq(cls_context_create(&e->ctx, &o), CLS_OK);
  ck_assert_int_eq(cls_mpi_create(e->ctx, MPI_COMM_WORLD, &e->m), CLS_OK);
  ck_assert_int_eq(cls_mpi_rank(e->m), rank_);
  ck_assert_int_eq(cls_mpi_size(e->m), size_);
  ck_assert_int_eq(cls_program_build(e->ctx, src, NULL, &e->prog), CLS_OK);
  ck_assert_int_eq(cls_kernel_get(e->ctx, e->prog, "fill", &e->fill), CLS_OK);
  ck_assert_int_eq(cls_kernel_get(e->ctx, e->prog, "blur", &e->blur), CLS_OK);
  ck_assert_int_eq(cls_kernel_get(e->ctx, e->prog, "slow", &e->slow), CLS_OK);
}

static void teardown(struct env *e) {
  cls_mpi_destroy(e->m);
  cls_program_release(e->ctx, e->prog);
  cls_context_destroy(e->ctx);
  MPI_Barrier(MPI_COMM_WORLD);
  int n = failures;
  failures = 0;
  ck_assert_msg(n == 0, "%d failed expectation%s; the first: %s", n, n == 1 ? "" : "s",
                first_failure);
}

static int fill(struct env *e, int stream, cls_buffer b, int v) {
  size_t g = N;
  cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
  return cls_launch(e->ctx, stream, e->fill, 1, &g, NULL, 2, a);
}

static int blur(struct env *e, int stream, cls_buffer in, cls_buffer out) {
  size_t g = N;
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  return cls_launch(e->ctx, stream, e->blur, 1, &g, NULL, 2, a);
}

static cls_buffer alloc(struct env *e, int stream) {
  cls_buffer b;
  EXPECT_EQ(cls_alloc(e->ctx, stream, N * sizeof(int), &b), CLS_OK);
  return b;
}

/* The report of a read of b: its one failure, which must have come from
 * rank `origin`. */
static cls_report *tainted_from(struct env *e, cls_buffer b, int origin,
                                struct cls_failure_info *fi) {
  int host[N];
  cls_report *r = NULL;
  EXPECT_EQ(cls_download(e->ctx, 0, b, 0, host, sizeof host, &r), CLS_ETAINTED);
  EXPECT(r);
  EXPECT_EQ(cls_report_failures(r), 1);
  EXPECT_EQ(cls_report_failure(r, 0, fi), CLS_OK);
  int rank = -2;
  EXPECT_EQ(cls_report_failure_rank(r, 0, &rank), 1);
  EXPECT_EQ(rank, origin);
  return r;
}

/* Each rank sends a region of its buffer to the next rank of a ring and
 * receives the previous rank's into another region: the bytes arrive as
 * sent, where they were asked for, and the rest of the buffer is as it
 * was. */
START_TEST(bytes_cross_ranks_into_the_region_asked_for) {
  struct env e;
  setup(&e, _i, NULL);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0);
  EXPECT_EQ(fill(&e, 0, a, 1000 * rank_), CLS_OK);
  EXPECT_EQ(fill(&e, 0, b, -1), CLS_OK);
  cls_mpi_request *rq[2];
  /* ints 16..79 of a travel into ints 100..163 of the next rank's b */
  EXPECT_EQ(cls_mpi_irecv(e.m, 0, b, 100 * sizeof(int), 64 * sizeof(int), prev, 5, &rq[0]),
                   CLS_OK);
  EXPECT_EQ(cls_mpi_send(e.m, 0, a, 16 * sizeof(int), 64 * sizeof(int), next, 5), CLS_OK);
  rq[1] = NULL;
  EXPECT_EQ(cls_mpi_waitall(e.m, 2, rq), CLS_OK);
  int host[N];
  EXPECT_EQ(cls_download(e.ctx, 0, b, 0, host, sizeof host, NULL), CLS_OK);
  for (int i = 0; i < N; i++) {
    int want = i >= 100 && i < 164 ? 1000 * prev + 16 + (i - 100) : -1 + i;
    EXPECT_EQ(host[i], want);
  }
  teardown(&e);
}
END_TEST

/* A send is a read: on stream 0 it is ordered after a slow producer on
 * stream 1.  A receive is a write: a launch on stream 1 that reads the
 * received buffer is ordered after it. */
START_TEST(send_and_receive_are_ordered_with_the_streams) {
  struct env e;
  setup(&e, _i, NULL);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  cls_buffer a = alloc(&e, 1), p = alloc(&e, 1), in = alloc(&e, 2), out = alloc(&e, 2);
  EXPECT_EQ(fill(&e, 1, a, 10 * rank_), CLS_OK);
  size_t g = N;
  int iters = 20000;
  cls_arg sa[] = {CLS_IN(a), CLS_OUT(p), CLS_SCALAR(iters)};
  EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sa), CLS_OK);
  cls_mpi_request *rr, *sr;
  EXPECT_EQ(cls_mpi_irecv(e.m, 2, in, 0, N * sizeof(int), prev, 6, &rr), CLS_OK);
  EXPECT_EQ(cls_mpi_isend(e.m, 0, p, 0, N * sizeof(int), next, 6, &sr), CLS_OK);
  EXPECT_EQ(cls_mpi_wait(e.m, rr), CLS_OK);
  EXPECT_EQ(blur(&e, 1, in, out), CLS_OK);
  EXPECT_EQ(cls_mpi_wait(e.m, sr), CLS_OK);
  int host[N];
  EXPECT_EQ(cls_download(e.ctx, 3, out, 0, host, sizeof host, NULL), CLS_OK);
  for (int i = 0; i < N; i++)
    EXPECT_EQ(host[i], 10 * prev + i + 7 + 1);
  teardown(&e);
}
END_TEST

/* A tainted buffer sends its failure: rank 0's launch of 'blur' fails at
 * enqueue (CLS_FAULT with rank=0: the same spec everywhere fires on rank 0
 * only); rank 1's receive takes the failure, its launch reading it is
 * skipped (F2) and extends the chain there, and its read names the root
 * on rank 0.  With more ranks, rank 1 passes its output on to rank 2,
 * whose read names the same root and rank 1's skip. */
START_TEST(tainted_send_carries_root_and_chain_to_the_receiver) {
  struct env e;
  setup(&e, _i, "enqueue:kernel=blur,rank=0");
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0), c = alloc(&e, 0);
  struct cls_failure_info fi = {0};
  if (rank_ == 0) {
    EXPECT_EQ(fill(&e, 0, a, 1), CLS_OK);
    /* the scheduler driver enqueues later than the call: the failure is
     * found then (F8), with the same root */
    int rc = blur(&e, 0, a, b);
    EXPECT(rc == CLS_ELAUNCH || rc == CLS_OK);
    rc = blur(&e, 0, b, c);
    EXPECT(rc == CLS_ESKIPPED || rc == CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, c, 0, N * sizeof(int), 1, 7), CLS_ETAINTED);
    EXPECT_IN(cls_last_error_detail(), "CLS_ELAUNCH");
  } else if (rank_ == 1) {
    EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, N * sizeof(int), 0, 7), CLS_ETAINTED);
    EXPECT_IN(cls_last_error_detail(), "on rank 0: CLS_ELAUNCH");
    EXPECT_EQ(blur(&e, 1, a, b), CLS_ESKIPPED);
    cls_report *r = tainted_from(&e, b, 0, &fi);
    EXPECT_EQ(fi.status, CLS_ELAUNCH);
    EXPECT_STR(fi.kernel, "blur");
    EXPECT_STR(fi.operation, "launch");
    EXPECT_EQ(fi.stream, 0);
    EXPECT_EQ(fi.position, 2);
    EXPECT_EQ(fi.skipped, 2); /* rank 0's skip, then this rank's */
    EXPECT_EQ(fi.nskips, 2);
    struct cls_skip_info si;
    EXPECT_EQ(cls_report_skip(r, 0, 1, &si), CLS_OK);
    EXPECT_EQ(si.stream, 1);
    const char *text = cls_report_text(r);
    EXPECT_IN(text, "on rank 0: CLS_ELAUNCH");
    EXPECT_IN(text, "on rank 0 stream 0");
    cls_report_free(r);
    if (size_ > 2)
      EXPECT_EQ(cls_mpi_send(e.m, 1, b, 0, N * sizeof(int), 2, 7), CLS_ETAINTED);
  } else if (rank_ == 2) {
    EXPECT_EQ(cls_mpi_recv(e.m, 0, c, 0, N * sizeof(int), 1, 7), CLS_ETAINTED);
    cls_report *r = tainted_from(&e, c, 0, &fi);
    EXPECT_EQ(fi.status, CLS_ELAUNCH);
    const char *text = cls_report_text(r);
    EXPECT_IN(text, "on rank 1 stream 1");
    cls_report_free(r);
  }
  teardown(&e);
}
END_TEST

/* F8: rank 0's launch is accepted and fails only when it completes
 * ("complete" fault).  The send called right after it waits for the
 * producer, finds the failure, and sends it: rank 1's buffer is tainted
 * as if the failure had been known when the send was called, and says it
 * was found after the call returned. */
START_TEST(late_failure_found_after_the_launch_travels_with_the_send) {
  struct env e;
  setup(&e, _i, "complete:kernel=blur,rank=0");
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0);
  struct cls_failure_info fi = {0};
  if (rank_ == 0) {
    EXPECT_EQ(fill(&e, 0, a, 1), CLS_OK);
    EXPECT_EQ(blur(&e, 1, a, b), CLS_OK); /* accepted: fails later */
    cls_mpi_request *rq;
    EXPECT_EQ(cls_mpi_isend(e.m, 0, b, 0, N * sizeof(int), 1, 8, &rq), CLS_OK);
    EXPECT_EQ(cls_mpi_wait(e.m, rq), CLS_ETAINTED);
  } else if (rank_ == 1) {
    cls_mpi_request *rq;
    EXPECT_EQ(cls_mpi_irecv(e.m, 0, b, 0, N * sizeof(int), 0, 8, &rq), CLS_OK);
    EXPECT_EQ(cls_mpi_wait(e.m, rq), CLS_ETAINTED);
    cls_report *r = tainted_from(&e, b, 0, &fi);
    EXPECT_EQ(fi.async, 1);
    EXPECT_STR(fi.kernel, "blur");
    EXPECT_EQ(fi.stream, 1);
    EXPECT_EQ(fi.cl_status, -5); /* CL_OUT_OF_RESOURCES, the fault's default */
    cls_report_free(r);
  }
  teardown(&e);
}
END_TEST

/* An MPI error is a failure like any other: a receive from a rank that
 * does not exist returns CLS_EMPI with MPI's error string, and the buffer
 * it was to write carries it; a send to one returns CLS_EMPI. */
START_TEST(mpi_error_is_a_failure_on_the_receiving_buffer) {
  struct env e;
  setup(&e, _i, NULL);
  cls_buffer a = alloc(&e, 0);
  EXPECT_EQ(fill(&e, 0, a, 3), CLS_OK);
  EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, N * sizeof(int), size_ + 3, 9), CLS_EMPI);
  EXPECT_IN(cls_last_error_detail(), "MPI_ERR_RANK");
  int host[N];
  cls_report *r = NULL;
  EXPECT_EQ(cls_download(e.ctx, 0, a, 0, host, sizeof host, &r), CLS_ETAINTED);
  struct cls_failure_info fi = {0};
  EXPECT_EQ(cls_report_failure(r, 0, &fi), CLS_OK);
  EXPECT_EQ(fi.status, CLS_EMPI);
  EXPECT_STR(fi.operation, "receive");
  EXPECT_IN(fi.message, "MPI_ERR_RANK");
  cls_report_free(r);
  EXPECT_EQ(fill(&e, 0, a, 3), CLS_OK);
  EXPECT_EQ(cls_mpi_send(e.m, 0, a, 0, N * sizeof(int), size_ + 3, 9), CLS_EMPI);
  teardown(&e);
}
END_TEST

/* A receive of another size than was sent fails with CLS_EMPI on the
 * receiving buffer, naming what was sent; a send of a freed buffer sends
 * its refusal, which the receiver's buffer takes. */
START_TEST(mismatched_or_refused_send_fails_the_receive) {
  struct env e;
  setup(&e, _i, NULL);
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0);
  struct cls_failure_info fi = {0};
  if (rank_ == 0) {
    EXPECT_EQ(fill(&e, 0, a, 3), CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, a, 0, 64, 1, 10), CLS_OK);
    EXPECT_EQ(cls_free(e.ctx, b), CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, b, 0, 64, 1, 10), CLS_ESTALE);
  } else if (rank_ == 1) {
    EXPECT_EQ(fill(&e, 0, a, 3), CLS_OK);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, 128, 0, 10), CLS_EMPI);
    EXPECT_IN(cls_last_error_detail(), "sent 64 bytes");
    int host[N];
    EXPECT_EQ(cls_download(e.ctx, 0, a, 0, host, sizeof host, NULL), CLS_ETAINTED);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, b, 0, 64, 0, 10), CLS_ETAINTED);
    cls_report *r = tainted_from(&e, b, 0, &fi);
    EXPECT_EQ(fi.status, CLS_ESTALE);
    EXPECT_STR(fi.operation, "send");
    cls_report_free(r);
  }
  teardown(&e);
}
END_TEST

/* Bad arguments get a clear code, never a crash, and a refused receive
 * leaves its record on the buffer it would have written (F12). */
START_TEST(bad_arguments_are_refused) {
  struct env e;
  setup(&e, _i, NULL);
  cls_buffer a = alloc(&e, 0);
  cls_mpi_request *rq = (cls_mpi_request *)&e;
  EXPECT_EQ(cls_mpi_isend(NULL, 0, a, 0, 4, 0, 0, &rq), CLS_EINVAL);
  EXPECT(rq == NULL);
  EXPECT_EQ(cls_mpi_irecv(e.m, 0, a, 0, 4, 0, 0, NULL), CLS_EINVAL);
  EXPECT_EQ(cls_mpi_wait(e.m, NULL), CLS_EINVAL);
  EXPECT_EQ(cls_mpi_waitall(NULL, 0, NULL), CLS_EINVAL);
  EXPECT_EQ(cls_mpi_create(NULL, MPI_COMM_WORLD, NULL), CLS_EINVAL);
  cls_mpi_destroy(NULL);
  EXPECT_EQ(fill(&e, 0, a, 3), CLS_OK);
  EXPECT_EQ(cls_mpi_recv(e.m, 0, a, N * sizeof(int), 4, 0, 0), CLS_ERANGE);
  int host[N];
  EXPECT_EQ(cls_download(e.ctx, 0, a, 0, host, sizeof host, NULL), CLS_ETAINTED);
  EXPECT_EQ(cls_mpi_recv(e.m, 0, CLS_BUFFER_NULL, 0, 4, 0, 0), CLS_ENULL);
  EXPECT_EQ(cls_wire_taint(e.ctx, 0, a, "garbage", 7), CLS_EINVAL);
  teardown(&e);
}
END_TEST

/* A halo exchange in both directions around the ring, non-blocking, many
 * times over: every message arrives where it belongs. */
START_TEST(nonblocking_exchange_in_both_directions) {
  struct env e;
  setup(&e, _i, NULL);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  cls_buffer a = alloc(&e, 0), l = alloc(&e, 1), r = alloc(&e, 1);
  for (int it = 0; it < 20; it++) {
    EXPECT_EQ(fill(&e, 0, a, 100000 * rank_ + 1000 * it), CLS_OK);
    cls_mpi_request *rq[4];
    EXPECT_EQ(cls_mpi_irecv(e.m, 1, l, 0, 8 * sizeof(int), prev, 11, &rq[0]), CLS_OK);
    EXPECT_EQ(cls_mpi_irecv(e.m, 1, r, 0, 8 * sizeof(int), next, 12, &rq[1]), CLS_OK);
    EXPECT_EQ(cls_mpi_isend(e.m, 0, a, 0, 8 * sizeof(int), next, 11, &rq[2]), CLS_OK);
    EXPECT_EQ(cls_mpi_isend(e.m, 0, a, 8 * sizeof(int), 8 * sizeof(int), prev, 12, &rq[3]),
                     CLS_OK);
    EXPECT_EQ(cls_mpi_waitall(e.m, 4, rq), CLS_OK);
    int hl[8], hr[8];
    EXPECT_EQ(cls_download(e.ctx, 1, l, 0, hl, sizeof hl, NULL), CLS_OK);
    EXPECT_EQ(cls_download(e.ctx, 1, r, 0, hr, sizeof hr, NULL), CLS_OK);
    for (int i = 0; i < 8; i++) {
      EXPECT_EQ(hl[i], 100000 * prev + 1000 * it + i);
      EXPECT_EQ(hr[i], 100000 * next + 1000 * it + 8 + i);
    }
  }
  teardown(&e);
}
END_TEST

/* Skip-chain entries of different ranks never merge: rank 0's launch of
 * 'blur' fails and the next one is skipped, then rank 0 sends; rank 1,
 * with an unrelated kernel in flight on another stream (the F8 path of a
 * skip), receives and skips its own launch of 'blur' on stream 0.  The
 * chain has two entries, one per rank, one launch each. */
START_TEST(skip_entries_of_different_ranks_never_merge) {
  struct env e;
  setup(&e, _i, "enqueue:kernel=blur,nth=1,rank=0");
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0), c = alloc(&e, 0), p = alloc(&e, 1),
             q = alloc(&e, 1);
  if (rank_ == 0) {
    EXPECT_EQ(fill(&e, 0, a, 1), CLS_OK);
    int rc = blur(&e, 0, a, b);
    EXPECT(rc == CLS_ELAUNCH || rc == CLS_OK);
    rc = blur(&e, 0, b, c);
    EXPECT(rc == CLS_ESKIPPED || rc == CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, c, 0, N * sizeof(int), 1, 14), CLS_ETAINTED);
  } else if (rank_ == 1) {
    size_t g = N;
    int iters = 20000;
    EXPECT_EQ(fill(&e, 1, p, 1), CLS_OK);
    cls_arg sa[] = {CLS_IN(p), CLS_OUT(q), CLS_SCALAR(iters)};
    EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sa), CLS_OK);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, N * sizeof(int), 0, 14), CLS_ETAINTED);
    EXPECT_EQ(blur(&e, 0, a, b), CLS_ESKIPPED);
    struct cls_failure_info fi = {0};
    cls_report *r = tainted_from(&e, b, 0, &fi);
    EXPECT_EQ(fi.skipped, 2);
    EXPECT_EQ(fi.nskips, 2);
    struct cls_skip_info si = {0};
    EXPECT_EQ(cls_report_skip(r, 0, 0, &si), CLS_OK);
    EXPECT_EQ(si.count, 1);
    EXPECT_EQ(si.position, 3);
    EXPECT_EQ(cls_report_skip(r, 0, 1, &si), CLS_OK);
    EXPECT_EQ(si.count, 1);
    EXPECT_EQ(si.stream, 0);
    EXPECT_EQ(si.position, 2); /* the receive took position 1 here */
    const char *text = cls_report_text(r);
    EXPECT_IN(text, "1. skipped: 'blur' on rank 0 stream 0 at position 3\n");
    EXPECT_IN(text, "2. skipped: 'blur' on stream 0 at position 2\n");
    cls_report_free(r);
    EXPECT_EQ(cls_download(e.ctx, 1, q, 0, (int[N]){0}, N * sizeof(int), NULL), CLS_OK);
  }
  teardown(&e);
}
END_TEST

/* Log lines that name rank 0's failure (F9: one per process). */
static void count_root_lines(void *user, int level, const char *message) {
  (void)level;
  if (strstr(message, "in launch of 'blur'") && strstr(message, "CLS_ELAUNCH"))
    ++*(int *)user;
}

/* A failure has one identity across ranks: rank 0's launch of 'blur'
 * fails and rank 0 sends its output twice to rank 1 and once to rank 2.
 * Rank 1 (a kernel in flight on another stream) receives both copies into
 * two buffers, skips a launch on one, and checks both: one failure, with
 * its chain, logged once.  With 4 ranks the root also reaches rank 3 by
 * two paths (rank 1's skip and rank 2's): one failure, whose chain has
 * both ranks' skips, logged once. */
START_TEST(one_failure_is_named_once_and_logged_once_however_many_copies_arrive) {
  struct env e;
  setup(&e, _i, "enqueue:kernel=blur,nth=1,rank=0");
  int lines = 0;
  EXPECT_EQ(cls_set_logger(e.ctx, CLS_LOG_ERRORS, count_root_lines, &lines), CLS_OK);
  cls_buffer a = alloc(&e, 0), b = alloc(&e, 0), x = alloc(&e, 0), y = alloc(&e, 0),
             z = alloc(&e, 0), p = alloc(&e, 1), q = alloc(&e, 1);
  size_t g = N, bytes = N * sizeof(int);
  int iters = 20000;
  cls_arg sa[] = {CLS_IN(p), CLS_OUT(q), CLS_SCALAR(iters)};
  cls_buffer both[2] = {x, y};
  cls_report *r = NULL;
  struct cls_failure_info fi = {0};
  if (rank_ == 0) {
    EXPECT_EQ(fill(&e, 0, a, 1), CLS_OK);
    int rc = blur(&e, 0, a, b);
    EXPECT(rc == CLS_ELAUNCH || rc == CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, b, 0, bytes, 1, 15), CLS_ETAINTED);
    EXPECT_EQ(cls_mpi_send(e.m, 0, b, 0, bytes, 1, 16), CLS_ETAINTED);
    if (size_ > 2)
      EXPECT_EQ(cls_mpi_send(e.m, 0, b, 0, bytes, 2, 15), CLS_ETAINTED);
  } else if (rank_ == 1) {
    EXPECT_EQ(fill(&e, 1, p, 1), CLS_OK);
    EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sa), CLS_OK);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, x, 0, bytes, 0, 15), CLS_ETAINTED);
    EXPECT_EQ(blur(&e, 0, x, z), CLS_ESKIPPED);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, y, 0, bytes, 0, 16), CLS_ETAINTED);
    EXPECT_EQ(cls_check(e.ctx, 2, both, &r), CLS_ETAINTED);
    EXPECT_IN(cls_last_error_detail(), ": 1 failure;");
    EXPECT_EQ(cls_report_failures(r), 1);
    EXPECT_EQ(cls_report_failure(r, 0, &fi), CLS_OK);
    EXPECT_EQ(fi.skipped, 1);
    EXPECT_IN(cls_report_text(r), "clstream: the read failed: 1 failure\n");
    cls_report_free(r);
    EXPECT_EQ(lines, 1);
    if (size_ > 3)
      EXPECT_EQ(cls_mpi_send(e.m, 0, z, 0, bytes, 3, 17), CLS_ETAINTED);
  } else if (rank_ == 2) {
    EXPECT_EQ(cls_mpi_recv(e.m, 0, x, 0, bytes, 0, 15), CLS_ETAINTED);
    EXPECT_EQ(blur(&e, 2, x, z), CLS_ESKIPPED);
    if (size_ > 3)
      EXPECT_EQ(cls_mpi_send(e.m, 0, z, 0, bytes, 3, 18), CLS_ETAINTED);
    EXPECT_EQ(lines, 1);
  } else if (rank_ == 3) {
    EXPECT_EQ(fill(&e, 1, p, 1), CLS_OK);
    EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sa), CLS_OK);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, x, 0, bytes, 1, 17), CLS_ETAINTED);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, y, 0, bytes, 2, 18), CLS_ETAINTED);
    EXPECT_EQ(cls_check(e.ctx, 2, both, &r), CLS_ETAINTED);
    EXPECT_EQ(cls_report_failures(r), 1);
    EXPECT_EQ(cls_report_failure(r, 0, &fi), CLS_OK);
    EXPECT_EQ(fi.skipped, 2);
    EXPECT_EQ(fi.nskips, 2);
    const char *text = cls_report_text(r);
    EXPECT_IN(text, "clstream: the read failed: 1 failure\n");
    EXPECT_IN(text, "skipped: 'blur' on rank 1 stream 0 at position 2\n");
    EXPECT_IN(text, "skipped: 'blur' on rank 2 stream 2 at position 1\n");
    cls_report_free(r);
    EXPECT_EQ(lines, 1);
  }
  if (rank_ == 1 || rank_ == 3)
    EXPECT_EQ(cls_download(e.ctx, 1, q, 0, (int[N]){0}, bytes, NULL), CLS_OK);
  teardown(&e);
}
END_TEST

/* Log lines that name a failure of 'blur'. */
static void count_blur_lines(void *user, int level, const char *message) {
  (void)level;
  if (strstr(message, "CLS_ELAUNCH") && strstr(message, "'blur'"))
    ++*(int *)user;
}

/* The ring: a buffer goes around the ranks 6 times, each holder
 * launching 'blur' on it (with a slow kernel in flight on another stream),
 * and one launch on one rank fails when it completes.  Every later launch,
 * on every rank, is skipped; the failure comes back to the rank it happened
 * on and goes round again.  The last holder's report names the root once,
 * with every skip in the chain, each on its own rank and position, none
 * claimed twice; each rank logs the failure once. */
START_TEST(ring_names_the_root_once_and_every_rank_s_skips_apart) {
  struct env e;
  int faulty = size_ > 2 ? 2 : 1;
  char spec[64];
  snprintf(spec, sizeof spec, "complete:kernel=blur,nth=3,rank=%d", faulty);
  setup(&e, _i, spec);
  int lines = 0;
  EXPECT_EQ(cls_set_logger(e.ctx, CLS_LOG_ERRORS, count_blur_lines, &lines), CLS_OK);
  int next = (rank_ + 1) % size_, prev = (rank_ + size_ - 1) % size_;
  cls_buffer in = alloc(&e, 0), out = alloc(&e, 0), p = alloc(&e, 1), q = alloc(&e, 1);
  size_t g = N, bytes = N * sizeof(int);
  int iters = 2000, hops = 6 * size_, failing = faulty + 2 * size_;
  cls_arg sa[] = {CLS_IN(p), CLS_OUT(q), CLS_SCALAR(iters)};
  EXPECT_EQ(fill(&e, 1, p, 1), CLS_OK);
  if (rank_ == 0)
    EXPECT_EQ(fill(&e, 0, in, 0), CLS_OK);
  for (int hop = 0; hop < hops; hop++) {
    if (hop % size_ != rank_)
      continue;
    EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sa), CLS_OK);
    if (hop > 0) {
      int rc = cls_mpi_recv(e.m, 0, in, 0, bytes, prev, 20);
      EXPECT_EQ(rc, hop > failing ? CLS_ETAINTED : CLS_OK);
    }
    int rc = blur(&e, 0, in, out);
    EXPECT_EQ(rc, hop > failing ? CLS_ESKIPPED : CLS_OK);
    if (hop + 1 < hops) {
      rc = cls_mpi_send(e.m, 0, out, 0, bytes, next, 20);
      EXPECT_EQ(rc, hop >= failing ? CLS_ETAINTED : CLS_OK);
    }
  }
  EXPECT_EQ(lines, 1);
  cls_report *r = NULL;
  EXPECT_EQ(cls_check(e.ctx, 1, &out, &r), CLS_ETAINTED);
  EXPECT_EQ(cls_report_failures(r), 1);
  struct cls_failure_info fi = {0};
  EXPECT_EQ(cls_report_failure(r, 0, &fi), CLS_OK);
  int rank = -2;
  cls_report_failure_rank(r, 0, &rank);
  EXPECT_EQ(rank, rank_ == faulty ? -1 : faulty);
  const char *text = cls_report_text(r);
  if (rank_ == (hops - 1) % size_) { /* the last holder: every skip */
    EXPECT_EQ(fi.skipped, hops - 1 - failing);
    EXPECT_EQ(fi.nskips, hops - 1 - failing);
  }
  /* No launch is claimed twice: every entry names another (rank, position). */
  char seen[64][64];
  int nseen = 0;
  for (const char *l = strstr(text, "skipped: "); l; l = strstr(l + 1, "skipped: ")) {
    int rk = rank_, st = -1;
    unsigned long long pos = 0, count = 1;
    if (sscanf(l, "skipped: 'blur' on rank %d stream %d at position %llu (x%llu", &rk, &st, &pos,
               &count) < 3 &&
        sscanf(l, "skipped: 'blur' on stream %d at position %llu (x%llu", &st, &pos, &count) < 2)
      expect(0, __FILE__, __LINE__, "an entry that names no launch: %.80s", l);
    EXPECT_EQ(count, 1); /* a ring never skips twice in a row on one rank */
    char key[64];
    snprintf(key, sizeof key, "%d/%d/%llu", rk, st, pos);
    for (int i = 0; i < nseen; i++)
      expect(strcmp(seen[i], key) != 0, __FILE__, __LINE__, "%s claimed twice in: %s", key, text);
    if (nseen < 64)
      snprintf(seen[nseen++], sizeof seen[0], "%s", key);
  }
  cls_report_free(r);
  EXPECT_EQ(cls_download(e.ctx, 1, q, 0, (int[N]){0}, bytes, NULL), CLS_OK);
  teardown(&e);
}
END_TEST

/* A message larger than the receive asked for is refused with CLS_EMPI
 * naming both sizes, on the receiving buffer, and is consumed: the next
 * message with that tag is received as sent. */
START_TEST(larger_message_than_the_receive_is_refused_naming_both_sizes) {
  struct env e;
  setup(&e, _i, NULL);
  cls_buffer big, a = alloc(&e, 0), p = alloc(&e, 1), q = alloc(&e, 1);
  EXPECT_EQ(cls_alloc(e.ctx, 0, 8192, &big), CLS_OK);
  EXPECT_EQ(fill(&e, 0, a, 5), CLS_OK);
  if (rank_ == 0) {
    int host[2048];
    for (int i = 0; i < 2048; i++)
      host[i] = i;
    EXPECT_EQ(cls_upload(e.ctx, 0, big, 0, host, sizeof host), CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, big, 0, 8192, 1, 13), CLS_OK);
    EXPECT_EQ(cls_mpi_send(e.m, 0, a, 0, 256, 1, 13), CLS_OK);
  } else if (rank_ == 1) {
    /* a kernel in flight on another stream while the message arrives */
    size_t g = N;
    int iters = 20000;
    EXPECT_EQ(fill(&e, 1, p, 1), CLS_OK);
    cls_arg sb[] = {CLS_IN(p), CLS_OUT(q), CLS_SCALAR(iters)};
    EXPECT_EQ(cls_launch(e.ctx, 1, e.slow, 1, &g, NULL, 3, sb), CLS_OK);
    EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, 256, 0, 13), CLS_EMPI);
    EXPECT_IN(cls_last_error_detail(), "sent 8192 bytes");
    EXPECT_IN(cls_last_error_detail(), "256");
    int host[N];
    cls_report *r = NULL;
    EXPECT_EQ(cls_download(e.ctx, 0, a, 0, host, sizeof host, &r), CLS_ETAINTED);
    struct cls_failure_info fi = {0};
    EXPECT_EQ(cls_report_failure(r, 0, &fi), CLS_OK);
    EXPECT_EQ(fi.status, CLS_EMPI);
    EXPECT_IN(fi.message, "8192");
    cls_report_free(r);
    /* the refused message was consumed: the next one is received */
    EXPECT_EQ(cls_mpi_recv(e.m, 0, a, 0, 256, 0, 13), CLS_OK);
    EXPECT_EQ(cls_download(e.ctx, 0, a, 0, host, 256, NULL), CLS_OK);
    for (int i = 0; i < 64; i++)
      EXPECT_EQ(host[i], 5 + i);
    EXPECT_EQ(cls_download(e.ctx, 1, q, 0, host, sizeof host, NULL), CLS_OK);
    EXPECT_EQ(host[3], 1 + 3 + 7);
  }
  teardown(&e);
}
END_TEST

int main(int argc, char **argv) {
  /* Records are compared field by field across ranks: exact attribution
   * (F8a's ranged mode is tests/test-ranged.c's). */
  setenv("CLS_PRECISE", "1", 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  size_t ndev = 0;
  cls_device_list(NULL, 0, &ndev);
  if (ndev == 0) { /* no OpenCL device at all: skipped */
    MPI_Finalize();
    return 77;
  }
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name;
    cls_driver_info(i, &name, NULL);
    if (strcmp(name, "scheduler") == 0) {
      settings[nsettings++] = "scheduler:sequential";
      settings[nsettings++] = "scheduler:interleave";
    } else if (nsettings < 3) {
      settings[nsettings++] = name;
    }
  }
  Suite *s = suite_create("mpi");
  TCase *tc = tcase_create("mpi");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, bytes_cross_ranks_into_the_region_asked_for, 0, nsettings);
  tcase_add_loop_test(tc, send_and_receive_are_ordered_with_the_streams, 0, nsettings);
  tcase_add_loop_test(tc, tainted_send_carries_root_and_chain_to_the_receiver, 0, nsettings);
  tcase_add_loop_test(tc, late_failure_found_after_the_launch_travels_with_the_send, 0, nsettings);
  tcase_add_loop_test(tc, mpi_error_is_a_failure_on_the_receiving_buffer, 0, nsettings);
  tcase_add_loop_test(tc, mismatched_or_refused_send_fails_the_receive, 0, nsettings);
  tcase_add_loop_test(tc, bad_arguments_are_refused, 0, nsettings);
  tcase_add_loop_test(tc, nonblocking_exchange_in_both_directions, 0, nsettings);
  tcase_add_loop_test(tc, skip_entries_of_different_ranks_never_merge, 0, nsettings);
  tcase_add_loop_test(tc, one_failure_is_named_once_and_logged_once_however_many_copies_arrive,
                      0, nsettings);
  tcase_add_loop_test(tc, ring_names_the_root_once_and_every_rank_s_skips_apart, 0, nsettings);
  tcase_add_loop_test(tc, larger_message_than_the_receive_is_refused_naming_both_sizes, 0,
                      nsettings);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, rank_ == 0 ? CK_NORMAL : CK_SILENT);
  int failed = srunner_ntests_failed(sr);
  if (failed && rank_ != 0)
    srunner_print(sr, CK_NORMAL);
  srunner_free(sr);
  MPI_Finalize();
  return failed ? 1 : 0;
}
