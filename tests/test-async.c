/* Failures found after the enqueue (F8) and never waiting on a known
 * failure (F7), of DESIGN.md.
 *
 * `complete:kernel=NAME` faults enqueue the command for real and report it
 * failed when it completes, so the consumers below run before the failure
 * is known.  Where the order of "enqueue" and "known" must not depend on
 * timing, a test stream factory (the gate) holds the producer behind a user
 * event the test opens, or finishes a stream's work behind the core's back
 * so the core learns of the failure only at its next poll.
 *
 * Every test has a timeout: nothing here may hang. */
#include "gate.h"

#define N 16
#define NB (N * sizeof(int))

#define UNARY(name, add)                                                       \
  "kernel void " name "(global const int *a, global int *b) {\n"               \
  "  size_t i = get_global_id(0);\n"                                           \
  "  b[i] = a[i] + " #add ";\n"                                                \
  "}\n"

/* Five buffers: more than an F8 log entry holds itself. */
#define WIDE(name, add)                                                        \
  "kernel void " name "(global const int *a, global int *b, global const int *c,\n" \
  "                     global const int *d, global const int *e) {\n"        \
  "  size_t i = get_global_id(0);\n"                                           \
  "  b[i] = a[i] + " #add " + (c[i] - c[i]) + (d[i] - d[i]) + (e[i] - e[i]);\n" \
  "}\n"

static const char SRC[] = UNARY("producer_k1", 1) UNARY("consumer_k2", 2)
    UNARY("later_k3", 3) UNARY("clean_k4", 4) UNARY("plain_k", 5) WIDE("wide_k", 6);

#define FAULT_K1 "complete:kernel=producer_k1"

static cls_context *ctx;
static cls_program *prog;

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static void open_ctx(const char *fault, const struct cls_stream_factory *f, void *fdata) {
  ctx = ct_context_with(fault, f, fdata);
  prog = ct_build(ctx, SRC, NULL);
}

static void close_ctx(void) {
  cls_context_destroy(ctx);
  ctx = NULL;
  prog = NULL;
}

static cls_kernel *kern(const char *name) { return ct_get_kernel(ctx, prog, name); }

static void upload_seq(int stream, cls_buffer b, int base) {
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = base + i;
  ct_upload_ints(ctx, stream, b, v, N);
}

static cls_buffer input(int stream, int base) {
  cls_buffer b = ct_alloc(ctx, stream, NB);
  upload_seq(stream, b, base);
  return b;
}

static void expect_seq(int stream, cls_buffer b, int base) {
  int got[N];
  ct_download_ints(ctx, stream, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, base + (int)i);
}

static int launch_unary(int stream, const char *k, cls_buffer in, cls_buffer out) {
  size_t g[1] = {N};
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out)};
  return cls_launch(ctx, stream, kern(k), 1, g, NULL, 2, a);
}

static void launch_ok(int stream, const char *k, cls_buffer in, cls_buffer out) {
  int rc = launch_unary(stream, k, in, out);
  ck_assert_msg(rc == 0, "launch of %s on stream %d: %s (%d): %s", k, stream, cls_err_name(rc),
                rc, cls_last_error_detail());
}

static struct cls_skip_info sinfo(const cls_report *r, size_t fi, size_t i) {
  struct cls_skip_info s;
  memset(&s, 0, sizeof s);
  CT_OK(cls_report_skip(r, fi, i, &s));
  return s;
}

static cls_report *tainted(int stream, cls_buffer b) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, NB, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download on stream %d: expected CLS_ETAINTED, got %s "
                "(%d): %s", stream, cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_msg(r != NULL, "CLS_ETAINTED without a report");
  return r;
}

/* The report names producer_k1 on stream 0 as its one root, found after
 * the enqueue. */
static void assert_k1_async_root(const cls_report *r) {
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.kernel, "producer_k1");
  ck_assert_str_eq(f.operation, "launch");
  ck_assert_int_eq(f.stream, 0);
  ck_assert_int_eq(f.async, 1);
  ck_assert_int_eq(f.status, CLS_ELAUNCH);
  ck_assert_int_eq(f.cl_status, CL_OUT_OF_RESOURCES);
}

/* Skip entry i of the one failure: `kind`, `kernel`, `stream`. */
static void assert_skip(const cls_report *r, size_t i, int kind, const char *kernel,
                        int stream) {
  struct cls_skip_info s = sinfo(r, 0, i);
  ck_assert_msg(s.kind == kind && strcmp(s.kernel, kernel) == 0 && s.stream == stream,
                "skip %zu: kind %d '%s' stream %d; expected kind %d '%s' stream %d", i, s.kind,
                s.kernel, s.stream, kind, kernel, stream);
}

static struct cls_stream_stats stats(int stream) {
  struct cls_stream_stats st;
  memset(&st, 0xff, sizeof st);
  CT_OK(cls_stream_stats(ctx, stream, &st));
  return st;
}

static void assert_healthy(int stream) {
  static int round = 1000;
  int base = (round += 100);
  cls_buffer a = input(stream, base), b = ct_alloc(ctx, stream, NB);
  launch_ok(stream, "plain_k", a, b);
  expect_seq(stream, b, base + 5);
  CT_OK(cls_free(ctx, a));
  CT_OK(cls_free(ctx, b));
}

/* ------------------------------------------------------------------ */
/* F8 — asynchronous failures                                          */
/* ------------------------------------------------------------------ */

START_TEST(F8_consumer_on_same_stream_ran_on_untrusted_input) {
  open_ctx(FAULT_K1, NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 50);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 0, NB);
  launch_ok(0, "producer_k1", in, b1);
  launch_ok(0, "consumer_k2", b1, b2); /* the failure is not known yet */

  cls_report *r = tainted(0, b2);
  assert_k1_async_root(r);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_uint_eq(f.nskips, 1);
  ck_assert_uint_eq(f.skipped, 1);
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 0);
  const char *text = cls_report_text(r);
  ck_assert_msg(strstr(text, "producer_k1") && strstr(text, "consumer_k2"), "%s", text);
  cls_report_free(r);
  r = tainted(0, b1);
  assert_k1_async_root(r);
  cls_report_free(r);

  /* Now it is known: the same as at enqueue time, a reader is skipped. */
  cls_buffer b3 = ct_alloc(ctx, 0, NB);
  CT_ERR(launch_unary(0, "later_k3", b2, b3), CLS_ESKIPPED);
  r = tainted(0, b3);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 2);
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 0);
  assert_skip(r, 1, CLS_SKIP_SKIPPED, "later_k3", 0);
  cls_report_free(r);

  expect_seq(0, unrelated, 50);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(F8_consumer_on_other_stream_ran_on_untrusted_input) {
  struct gate g = {.gated = "producer_k1"};
  open_ctx(FAULT_K1, &gate_factory, &g);
  cls_buffer in = input(0, 0), unrelated = input(1, 70);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB);
  launch_ok(0, "producer_k1", in, b1); /* held until the gate opens */
  /* producer_k1 cannot finish before the gate opens, so its failure
   * cannot be known: the consumer is launched, ordered after it. */
  launch_ok(1, "consumer_k2", b1, b2);
  ck_assert_uint_gt(g.held, 0); /* the producer was held */
  gate_open(&g);

  cls_report *r = tainted(1, b2);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 1);
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 1);
  cls_report_free(r);

  expect_seq(1, unrelated, 70);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
  gate_release(&g);
}
END_TEST

static int launch_wide(int stream, cls_buffer in, cls_buffer out, cls_buffer other) {
  size_t g[1] = {N};
  cls_arg a[] = {CLS_IN(in), CLS_OUT(out), CLS_IN(other), CLS_IN(other), CLS_IN(other)};
  return cls_launch(ctx, stream, kern("wide_k"), 1, g, NULL, 5, a);
}

/* The two producers of F8_argument_order_decides_*: producer_k1 on stream 0
 * writes b1, later_k3 on stream 1 writes b2; both fail at completion, and
 * producer_k1's failure is found only by a wait for stream 0 (hold: the
 * fault factory's first draw is far more polls than these tests make).
 * The consumer on stream 2 reads b1 as argument 0 and b2 as arguments 2-4,
 * so b1's failure decides whatever the order they are found in (F8: the
 * state had every failure been known at its command's enqueue). */
#define FAULT_TWO "complete:kernel=producer_k1,hold=1000000;complete:kernel=later_k3"

/* The consumer's output carries producer_k1's failure, with the consumer
 * on its chain as `kind`; later_k3's chain does not list it. */
static void assert_first_argument_decided(cls_buffer out, cls_buffer b2, int kind) {
  cls_report *r = tainted(2, out);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 1);
  /* A consumer that ran is untrusted; one a batching driver had not handed
   * to its queue yet is dropped when the first failure is found, as it
   * would have been skipped had that been known at its submit. */
  if (kind == CLS_SKIP_UNTRUSTED && sinfo(r, 0, 0).kind == CLS_SKIP_SKIPPED &&
      strncmp(cls_context_driver(ctx), "scheduler", 9) == 0)
    kind = CLS_SKIP_SKIPPED;
  assert_skip(r, 0, kind, "wide_k", 2);
  cls_report_free(r);
  r = tainted(1, b2);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.kernel, "later_k3");
  ck_assert_int_eq(f.async, 1);
  ck_assert_uint_eq(f.nskips, 0); /* the consumer counts on producer_k1 only */
  cls_report_free(r);
}

/* Both failures are found after the consumer's enqueue, the later
 * argument's first. */
START_TEST(F8_argument_order_decides_when_the_later_argument_fails_first) {
  struct gate g = {.gated = "later_k3"};
  open_ctx(FAULT_TWO, &gate_factory, &g);
  cls_buffer in0 = input(0, 0), in1 = input(1, 10);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB), out = ct_alloc(ctx, 2, NB);
  launch_ok(0, "producer_k1", in0, b1); /* its failure is held */
  launch_ok(1, "later_k3", in1, b2);    /* held by the gate */
  /* launch_wide's ordering polls stream 0 without waiting, and the fault
   * spec's hold keeps producer_k1's failure from that poll: a waiting
   * poll of stream 0 (a sync, a blocking download) must not come before
   * it, or the failure is known and the launch is skipped. */
  ck_assert_int_eq(launch_wide(2, b1, out, b2), CLS_OK); /* neither failure known yet */
  ck_assert_uint_gt(g.held, 0);
  gate_open(&g);
  CT_OK(cls_stream_sync(ctx, 1, NULL)); /* later_k3's failure is found first */
  CT_OK(cls_stream_sync(ctx, 0, NULL)); /* then producer_k1's */
  assert_first_argument_decided(out, b2, CLS_SKIP_UNTRUSTED);
  assert_healthy(2);
  close_ctx();
  gate_release(&g);
}
END_TEST

/* The later argument's failure is known at the consumer's enqueue (it is
 * skipped on it); the first argument's is found afterwards and takes the
 * consumer over. */
START_TEST(F8_argument_order_decides_when_the_later_argument_was_known_at_enqueue) {
  open_ctx(FAULT_TWO, NULL, NULL);
  cls_buffer in0 = input(0, 0), in1 = input(1, 10);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB), out = ct_alloc(ctx, 2, NB);
  launch_ok(0, "producer_k1", in0, b1); /* its failure is held */
  launch_ok(1, "later_k3", in1, b2);
  CT_OK(cls_stream_sync(ctx, 1, NULL)); /* later_k3's failure is known */
  ck_assert_int_eq(launch_wide(2, b1, out, b2), CLS_ESKIPPED); /* on argument 2 */
  CT_OK(cls_stream_sync(ctx, 0, NULL)); /* producer_k1's is found */
  assert_first_argument_decided(out, b2, CLS_SKIP_SKIPPED);
  assert_healthy(2);
  close_ctx();
}
END_TEST

/* Found by tests/model (a fresh seed, 0xea56c0c52a168287): a skip that
 * may still move (its first failed input, argument 1, comes after one
 * whose producer is in flight) and the next skip of the same kernel on
 * the same failure, which cannot move, were one run of the chain ("at
 * position 1, x2").  When the earlier argument's failure was found and
 * the first skip moved to it, the run kept the first's position: the
 * report named position 1, which had moved, not 2.  A skip the log does
 * not know no longer joins a run whose first may move. */
START_TEST(F8_a_skip_that_moves_leaves_its_run_naming_the_skip_that_stays) {
  static const char src[] =
      "kernel void pass_k(global const uint *a, global uint *out) {\n"
      "  out[get_global_id(0)] = a[get_global_id(0)]; }\n"
      "kernel void axpy_k(global const uint *x, global uint *y, uint k) {\n"
      "  size_t i = get_global_id(0); y[i] = y[i] + k * x[i]; }\n";
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = "complete:op=upload,stream=2"};
  cls_context *c = ct_context_opts(&o);
  cls_kernel *pass = ct_kernel(c, src, "pass_k"), *axpy = ct_kernel(c, src, "axpy_k");
  cls_buffer never = ct_alloc(c, 1, NB), b0 = ct_alloc(c, 1, NB), b2 = ct_alloc(c, 1, NB);
  cls_buffer up = ct_alloc(c, 2, NB);
  size_t g[1] = {N};
  /* b2 and b0 take never's failure (a skip, a refused copy). */
  CT_ERR(cls_launch(c, 2, pass, 1, g, NULL, 2, (cls_arg[]){CLS_IN(never), CLS_OUT(b2)}),
         CLS_ESKIPPED);
  CT_ERR(cls_copy(c, 2, never, 0, b0, 0, NB), CLS_ETAINTED);
  uint32_t v[N] = {0};
  CT_OK(cls_upload(c, 2, up, 0, v, sizeof v)); /* fails after its enqueue */
  uint32_t k = 5;
  /* Position 1: skipped on argument 1 (b0), movable: argument 0's
   * producer, the upload, is not known to have failed yet.  Position 2:
   * skipped on argument 0, which nothing earlier can change. */
  CT_ERR(cls_launch(c, 1, axpy, 1, g, NULL, 3, (cls_arg[]){CLS_IN(up), CLS_INOUT(b0), CLS_SCALAR(k)}),
         CLS_ESKIPPED);
  CT_ERR(cls_launch(c, 1, axpy, 1, g, NULL, 3,
                    (cls_arg[]){CLS_IN(b2), CLS_INOUT(never), CLS_SCALAR(k)}),
         CLS_ESKIPPED);
  CT_OK(cls_sync(c, NULL)); /* the upload's failure: position 1 moves to it */
  cls_report *r = NULL;
  CT_ERR(cls_check(c, 1, &never, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_uint_eq(fi.skipped, 3);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, fi.nskips - 1, &si));
  ck_assert_str_eq(si.kernel, "axpy_k");
  ck_assert_int_eq(si.stream, 1);
  ck_assert_uint_eq(si.position, 2);
  ck_assert_uint_eq(si.count, 1);
  cls_report_free(r);
  /* And position 1 is on the upload's chain. */
  r = NULL;
  CT_ERR(cls_check(c, 1, &b0, &r), CLS_ETAINTED);
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_str_eq(fi.operation, "upload");
  ck_assert_uint_eq(fi.nskips, 1);
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_uint_eq(si.position, 1);
  cls_report_free(r);
  cls_context_destroy(c);
}
END_TEST

/* The replay walks a log far longer than its first capacity, which grew
 * while wrapped (a finished history moved its head first), with entries
 * that hold their bindings themselves and entries with more bindings than
 * fit (wide_k's five).  600 launches stay in flight behind the held
 * producer: every chain launch ran on untrusted input, the unrelated
 * launches interleaved with them stay clean. */
START_TEST(F8_replay_over_a_grown_wrapped_log) {
  enum { HISTORY = 100, CHAIN = 300, OUTS = 4 };
  struct gate g = {.gated = "producer_k1"};
  open_ctx(FAULT_K1, &gate_factory, &g);
  cls_buffer in = input(0, 0), u_in = input(1, 40);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), c[2] = {ct_alloc(ctx, 1, NB), ct_alloc(ctx, 1, NB)};
  cls_buffer u_out[OUTS];
  for (int i = 0; i < OUTS; i++)
    u_out[i] = ct_alloc(ctx, 1, NB);
  for (int i = 0; i < HISTORY; i++) {
    if (i % 2) /* the first wide entry finds the log allocated already */
      CT_OK(launch_wide(1, u_in, u_out[i % OUTS], u_in));
    else
      launch_ok(1, "plain_k", u_in, u_out[i % OUTS]);
  }
  CT_OK(cls_sync(ctx, NULL)); /* finished: the log drops it all */

  launch_ok(0, "producer_k1", in, b1); /* held until the gate opens */
  launch_ok(1, "consumer_k2", b1, c[0]);
  for (int i = 1; i < CHAIN; i++) {
    cls_buffer from = c[(i - 1) % 2], to = c[i % 2];
    if (i < CHAIN / 2) {
      CT_OK(launch_wide(1, from, to, u_in));
      CT_OK(launch_wide(1, u_in, u_out[i % OUTS], u_in));
    } else {
      launch_ok(1, "plain_k", from, to);
      launch_ok(1, "later_k3", u_in, u_out[i % OUTS]);
    }
  }
  ck_assert_uint_gt(g.held, 0);
  gate_open(&g);

  cls_report *r = tainted(1, c[(CHAIN - 1) % 2]);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 3);
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 1);
  assert_skip(r, 1, CLS_SKIP_UNTRUSTED, "wide_k", 1);
  assert_skip(r, 2, CLS_SKIP_UNTRUSTED, "plain_k", 1);
  ck_assert_uint_eq(sinfo(r, 0, 0).count, 1);
  ck_assert_uint_eq(sinfo(r, 0, 1).count, CHAIN / 2 - 1);
  ck_assert_uint_eq(sinfo(r, 0, 2).count, CHAIN - CHAIN / 2);
  cls_report_free(r);
  r = tainted(1, c[CHAIN % 2]);
  cls_report_free(r);
  for (int i = 0; i < OUTS; i++)
    expect_seq(1, u_out[i], 43);
  expect_seq(1, u_in, 40);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
  gate_release(&g);
}
END_TEST

START_TEST(F8_async_download_fails_at_stream_sync) {
  open_ctx(FAULT_K1, NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 90);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 0, NB);
  launch_ok(0, "producer_k1", in, b1);
  launch_ok(0, "consumer_k2", b1, b2);
  static int got[N], other[N];
  CT_OK(cls_download_async(ctx, 0, b2, 0, got, NB));
  CT_OK(cls_download_async(ctx, 0, unrelated, 0, other, NB));
  cls_report *r = NULL;
  int rc = cls_stream_sync(ctx, 0, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "cls_stream_sync: expected CLS_ETAINTED, got %s (%d): %s",
                cls_err_name(rc), rc, cls_last_error_detail());
  ck_assert_ptr_nonnull(r);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 1);
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 0);
  cls_report_free(r);
  /* The unrelated download of the same sync got its bytes. */
  CT_EXPECT_INTS(other, (size_t)N, i, 90 + (int)i);

  /* Once known, a non-blocking download of the data fails at once. */
  CT_ERR(cls_download_async(ctx, 0, b2, 0, got, NB), CLS_ETAINTED);
  CT_ERR(cls_download_async(ctx, 0, b1, 0, got, NB), CLS_ETAINTED);
  r = (cls_report *)1;
  CT_OK(cls_stream_sync(ctx, 0, &r));
  ck_assert_ptr_null(r);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(F8_blocking_download_of_failed_output_fails) {
  open_ctx(FAULT_K1, NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 20);
  cls_buffer b1 = input(0, 400); /* good bytes before the failed write */
  launch_ok(0, "producer_k1", in, b1);
  cls_report *r = tainted(0, b1);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 0);
  cls_report_free(r);
  /* Read again, and from another stream: still the same failure. */
  r = tainted(1, b1);
  assert_k1_async_root(r);
  cls_report_free(r);
  expect_seq(0, unrelated, 20);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(F8_later_writes_that_read_nothing_tainted_clear) {
  open_ctx(FAULT_K1, NULL, NULL);
  cls_buffer in = input(0, 0), unrelated = input(0, 60);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 0, NB), b3 = ct_alloc(ctx, 0, NB);
  /* All enqueued before the failure is known. */
  launch_ok(0, "producer_k1", in, b1);
  launch_ok(0, "consumer_k2", b1, b2);
  launch_ok(0, "consumer_k2", b1, b3);
  upload_seq(0, b2, 700);               /* overwrites b2, reads nothing */
  launch_ok(0, "clean_k4", in, b3);     /* overwrites b3 from clean data */

  expect_seq(0, b2, 700);
  expect_seq(0, b3, 4);
  cls_report *r = tainted(0, b1);
  assert_k1_async_root(r);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_uint_eq(f.skipped, 2); /* the two consumers ran on it */
  assert_skip(r, 0, CLS_SKIP_UNTRUSTED, "consumer_k2", 0);
  cls_report_free(r);

  /* After it is known, writing clears as in F4. */
  upload_seq(0, b1, 800);
  expect_seq(0, b1, 800);
  expect_seq(0, unrelated, 60);
  assert_healthy(0);
  close_ctx();
}
END_TEST

START_TEST(F8_failed_upload_taints_its_buffer) {
  open_ctx("complete:op=upload,nth=1", NULL, NULL);
  cls_buffer b = ct_alloc(ctx, 0, NB);
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = 3 * i;
  CT_OK(cls_upload(ctx, 0, b, 0, v, NB)); /* enqueued; fails on completion */
  cls_report *r = tainted(0, b);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.operation, "upload");
  ck_assert_str_eq(f.kernel, "");
  ck_assert_int_eq(f.async, 1);
  ck_assert_int_eq(f.stream, 0);
  ck_assert_int_eq(f.cl_status, CL_OUT_OF_RESOURCES);
  cls_report_free(r);
  /* The fault fired once: the next upload works. */
  cls_buffer c = input(0, 30);
  expect_seq(0, c, 30);
  upload_seq(0, b, 10);
  expect_seq(0, b, 10);
  assert_healthy(0);
  close_ctx();
}
END_TEST

/* The same with other work before it: the upload is not the context's
 * first logged command. */
START_TEST(F8_failed_upload_after_other_work_taints_its_buffer) {
  open_ctx("complete:op=upload,nth=2", NULL, NULL);
  cls_buffer a = input(0, 20); /* upload 1 */
  cls_buffer b = ct_alloc(ctx, 0, NB);
  upload_seq(0, b, 40);        /* upload 2: fails on completion */
  cls_report *r = tainted(0, b);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f = ct_failure(r, 0);
  ck_assert_str_eq(f.operation, "upload");
  ck_assert_int_eq(f.async, 1);
  cls_report_free(r);
  expect_seq(0, a, 20);
  upload_seq(0, b, 10);
  expect_seq(0, b, 10);
  assert_healthy(0);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */
/* F7 — never wait on a known failure                                  */
/* ------------------------------------------------------------------ */

START_TEST(F7_known_failure_skips_consumer_on_other_stream) {
  open_ctx(FAULT_K1, NULL, NULL);
  cls_buffer in = input(0, 0);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB), b3 = ct_alloc(ctx, 1, NB);
  launch_ok(0, "producer_k1", in, b1);
  cls_buffer u = input(0, 300); /* after the failed command, same stream */
  CT_OK(cls_stream_sync(ctx, 0, NULL)); /* the failure is known now */

  struct cls_stream_stats s0 = stats(0), s1 = stats(1);
  CT_ERR(launch_unary(1, "consumer_k2", b1, b2), CLS_ESKIPPED);
  struct cls_stream_stats t0 = stats(0), t1 = stats(1);
  ck_assert_uint_eq(t1.enqueues, s1.enqueues);
  ck_assert_uint_eq(t1.waits, s1.waits);
  ck_assert_uint_eq(t1.skips, s1.skips + 1);
  ck_assert_uint_eq(t0.markers, s0.markers);
  ck_assert_uint_eq(t0.flushes, s0.flushes);
  cls_report *r = tainted(1, b2);
  assert_k1_async_root(r);
  assert_skip(r, 0, CLS_SKIP_SKIPPED, "consumer_k2", 1);
  cls_report_free(r);

  /* An unrelated buffer of the failed stream is read on another stream. */
  launch_ok(1, "later_k3", u, b3);
  expect_seq(1, b3, 303);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
}
END_TEST

START_TEST(F7_failure_found_while_ordering_skips_instead_of_waiting) {
  struct gate g = {0};
  open_ctx(FAULT_K1, &gate_factory, &g);
  cls_buffer in = input(0, 0);
  cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB), b3 = ct_alloc(ctx, 1, NB);
  launch_ok(0, "producer_k1", in, b1);
  cls_buffer u = input(0, 500);
  /* producer_k1 has finished (and "failed"), but the core has not polled:
   * ordering the consumer after stream 0 is where it learns. */
  gate_finish(&g, 0);

  struct cls_stream_stats s0 = stats(0), s1 = stats(1);
  unsigned long m0 = g.markers[0], c1 = g.commands[1];
  CT_ERR(launch_unary(1, "consumer_k2", b1, b2), CLS_ESKIPPED);
  ck_assert_msg(g.markers[0] == m0, "a marker was taken on the failed stream to wait on");
  ck_assert_uint_eq(g.commands[1], c1);
  struct cls_stream_stats t0 = stats(0), t1 = stats(1);
  ck_assert_uint_eq(t1.enqueues, s1.enqueues);
  ck_assert_uint_eq(t1.waits, s1.waits);
  ck_assert_uint_eq(t1.skips, s1.skips + 1);
  ck_assert_uint_eq(t0.markers, s0.markers);
  cls_report *r = tainted(1, b2);
  assert_k1_async_root(r);
  ck_assert_uint_eq(ct_failure(r, 0).nskips, 1);
  assert_skip(r, 0, CLS_SKIP_SKIPPED, "consumer_k2", 1);
  cls_report_free(r);

  launch_ok(1, "later_k3", u, b3);
  expect_seq(1, b3, 503);
  assert_healthy(0);
  assert_healthy(1);
  close_ctx();
  gate_release(&g);
}
END_TEST

/* Each driver setting, with its tasks handed to the queue at once (so
 * "still running" does not wait on the scheduler's list). */
static const char *const SETTINGS[] = {"event", "scheduler:sequential,max_tasks=1",
                                       "scheduler:interleave,max_tasks=1"};

static void open_setting(const char *setting, struct gate *g) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = setting,
                                  .factory = &gate_factory,
                                  .factory_data = g};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, SRC, NULL);
}

/* The consumer needs the producer's last command, and that command's
 * event (the one the consumer waits on, or a marker behind it) reads still
 * running: nothing to learn, so the producer's stream is not polled (a
 * poll reads its oldest event, the one the device is running).  On one
 * shared queue (interleave) there is no wait either.  The order holds. */
START_TEST(F7_running_producer_is_waited_on_without_a_poll) {
  for (size_t k = 0; k < sizeof SETTINGS / sizeof *SETTINGS; k++) {
    struct gate g = {.gated = "producer_k1"};
    open_setting(SETTINGS[k], &g);
    bool one_queue = strstr(SETTINGS[k], "interleave") != NULL;
    cls_buffer in = input(0, 10);
    cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB);
    launch_ok(0, "producer_k1", in, b1); /* held until the gate opens */
    struct cls_stream_stats s1 = stats(1);
    unsigned long p0 = g.polls[0];
    launch_ok(1, "consumer_k2", b1, b2);
    ck_assert_uint_gt(g.held, 0); /* the scheduler hands it over by now */
    ck_assert_msg(g.polls[0] == p0, "%s: the running producer's stream was polled %lu times",
                  SETTINGS[k], g.polls[0] - p0);
    ck_assert_uint_eq(stats(1).waits, s1.waits + (one_queue ? 0 : 1));
    gate_open(&g);
    expect_seq(1, b2, 13);
    close_ctx();
    gate_release(&g);
  }
}
END_TEST

/* open_setting for a test that fails the gate: false, with nothing left
 * open, where a command queued on a failed event is not failed itself
 * (the held producer would then wait for ever). */
static bool open_failing(const char *setting, struct gate *g, struct cls_quirks *q) {
  open_setting(setting, g);
  memset(q, 0, sizeof *q);
  q->version = CLS_QUIRKS_VERSION;
  CT_OK(cls_context_quirks(ctx, q));
  ck_assert_msg(q->probed, "%s: quirks not probed", setting);
  if (q->dependent_fails)
    return true;
  close_ctx();
  gate_release(g);
  return false;
}

/* The producer's last event has failed (its input, the gate, failed) but
 * nothing polled its stream yet: the consumer's ordering reads the event,
 * polls, learns the failure and skips instead of waiting on it. */
START_TEST(F7_failed_last_event_is_polled_not_waited_on) {
  for (size_t k = 0; k < sizeof SETTINGS / sizeof *SETTINGS; k++) {
    struct gate g = {.gated = "producer_k1"};
    struct cls_quirks q;
    if (!open_failing(SETTINGS[k], &g, &q))
      continue; /* the producer would wait for ever: nothing to test */
    cls_buffer in = input(0, 10), x = input(0, 0);
    cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB), y = ct_alloc(ctx, 0, NB);
    launch_ok(0, "producer_k1", in, b1);
    /* The scheduler hands a full list over at the stream's next command:
     * the producer must be on its queue before the gate fails. */
    if (strncmp(SETTINGS[k], "scheduler", 9) == 0)
      launch_ok(0, "plain_k", x, y);
    ck_assert_msg(g.held > 0, "%s: the producer was not held", SETTINGS[k]);
    gate_set(&g, CL_OUT_OF_RESOURCES);
    /* Behind the core's back: the producer's event is final (failed). */
    cl_event last = ocl()->last_event(g.streams[0]->s);
    ck_assert_ptr_nonnull(last);
    clWaitForEvents(1, &last); /* a failed event ends the wait too */
    cl_int st = 0;
    ck_assert_int_eq(
        clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL),
        CL_SUCCESS);
    ck_assert_int_lt(st, 0);

    struct cls_stream_stats s1 = stats(1);
    unsigned long p0 = g.polls[0];
    CT_ERR(launch_unary(1, "consumer_k2", b1, b2), CLS_ESKIPPED);
    ck_assert_uint_gt(g.polls[0], p0);
    ck_assert_uint_eq(stats(1).waits, s1.waits);
    cls_report *r = tainted(1, b2);
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info f = ct_failure(r, 0);
    ck_assert_str_eq(f.kernel, "producer_k1");
    ck_assert_int_eq(f.async, 1);
    ck_assert_int_eq(f.cl_status, q.dependent_status);
    assert_skip(r, 0, CLS_SKIP_SKIPPED, "consumer_k2", 1);
    cls_report_free(r);
    assert_healthy(1);
    close_ctx();
    gate_release(&g);
  }
}
END_TEST

/* A scheduler task that waits on another stream sits in its list until
 * the list is handed to its queue.  When the event it waits on fails
 * meanwhile, and the failure is known, the task is enqueued without that
 * wait: the event is final, and a command queued on a failed event may
 * never run (PoCL).  What it read takes the producer's failure (F8).  The
 * event driver, which enqueues at once, ends the same way. */
START_TEST(F7_deferred_wait_on_a_failed_event_is_dropped) {
  static const char *const settings[] = {"scheduler:sequential,max_tasks=64", "event"};
  for (size_t k = 0; k < sizeof settings / sizeof *settings; k++) {
    struct gate g = {.gated = "producer_k1"};
    struct cls_quirks q;
    if (!open_failing(settings[k], &g, &q))
      continue; /* the producer would wait for ever: nothing to test */
    cls_buffer in = input(0, 10);
    cls_buffer b1 = ct_alloc(ctx, 0, NB), b2 = ct_alloc(ctx, 1, NB);
    launch_ok(0, "producer_k1", in, b1);
    launch_ok(1, "consumer_k2", b1, b2); /* scheduler: in its list, waiting */
    ck_assert_msg(g.held > 0, "%s: the producer was not held", settings[k]);
    gate_set(&g, CL_OUT_OF_RESOURCES);
    CT_OK(cls_stream_sync(ctx, 0, NULL)); /* the failure is known now */
    CT_OK(cls_stream_sync(ctx, 1, NULL)); /* hands the consumer over: must not hang */
    cls_report *r = tainted(1, b2);
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info f = ct_failure(r, 0);
    ck_assert_str_eq(f.kernel, "producer_k1");
    ck_assert_int_eq(f.async, 1);
    ck_assert_uint_eq(f.nskips, 1);
    struct cls_skip_info sk = sinfo(r, 0, 0);
    ck_assert_str_eq(sk.kernel, "consumer_k2");
    ck_assert_int_eq(sk.stream, 1);
    cls_report_free(r);
    assert_healthy(1);
    close_ctx();
    gate_release(&g);
  }
}
END_TEST

/* F5: a check counts the failures its buffers carry, then settles the
 * in-flight log, and that wait can find one more on another buffer of the
 * same check.  X is written on stream 0 and then by plain_k on stream 3,
 * whose failure only a wait finds (hold); Y carries a refusal, so the
 * check settles: the report must hold both (it was sized for one: a heap
 * overflow in the report). */
START_TEST(F5_check_reports_a_failure_its_settle_finds) {
  open_ctx("complete:kernel=plain_k,hold=1000000", NULL, NULL);
  cls_buffer x = input(0, 0), in = input(3, 10);
  launch_ok(3, "plain_k", in, x); /* fails at completion; only a wait finds it */
  cls_buffer y = ct_alloc(ctx, 0, NB);
  const char pat[3] = {1, 2, 3};
  CT_ERR(cls_fill(ctx, 0, y, 0, NB, pat, sizeof pat), CLS_EINVAL); /* y carries the refusal */
  cls_buffer both[2] = {y, x};
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 2, both, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 2);
  struct cls_failure_info f0 = ct_failure(r, 0), f1 = ct_failure(r, 1);
  ck_assert_str_eq(f0.operation, "fill");
  ck_assert_int_eq(f0.async, 0);
  ck_assert_str_eq(f1.kernel, "plain_k");
  ck_assert_int_eq(f1.stream, 3);
  ck_assert_int_eq(f1.async, 1);
  cls_report_free(r);
  close_ctx();
}
END_TEST

/* ------------------------------------------------------------------ */

#define ADD(s, fn)                                                             \
  do {                                                                         \
    TCase *tc_ = tcase_create(#fn);                                            \
    tcase_set_tags(tc_, #fn); /* for CK_EXCLUDE_TAGS (check-vendors) */        \
    tcase_set_timeout(tc_, timeout);                                           \
    tcase_add_test(tc_, fn);                                                   \
    suite_add_tcase((s), tc_);                                                 \
  } while (0)

int main(void) {
  /* These cases pin each failure found after the enqueue on its command
   * (F8, exact attribution); ranged attribution (F8a), the default where
   * the device allows it, has its own suite: tests/test-ranged.c. */
  setenv("CLS_PRECISE", "1", 0);
  ct_require_device();
  /* Nothing may hang: 30 s each, unless the environment asks for more
   * (valgrind). */
  double timeout = 30;
  const char *env = getenv("CK_DEFAULT_TIMEOUT");
  if (env && atof(env) > timeout)
    timeout = atof(env);
  Suite *s = suite_create("async");
  ADD(s, F8_consumer_on_same_stream_ran_on_untrusted_input);
  ADD(s, F8_consumer_on_other_stream_ran_on_untrusted_input);
  ADD(s, F8_async_download_fails_at_stream_sync);
  ADD(s, F8_blocking_download_of_failed_output_fails);
  ADD(s, F8_later_writes_that_read_nothing_tainted_clear);
  ADD(s, F8_failed_upload_taints_its_buffer);
  ADD(s, F8_failed_upload_after_other_work_taints_its_buffer);
  ADD(s, F8_replay_over_a_grown_wrapped_log);
  ADD(s, F8_argument_order_decides_when_the_later_argument_fails_first);
  ADD(s, F8_argument_order_decides_when_the_later_argument_was_known_at_enqueue);
  ADD(s, F8_a_skip_that_moves_leaves_its_run_naming_the_skip_that_stays);
  ADD(s, F7_known_failure_skips_consumer_on_other_stream);
  ADD(s, F7_failure_found_while_ordering_skips_instead_of_waiting);
  ADD(s, F7_running_producer_is_waited_on_without_a_poll);
  ADD(s, F7_failed_last_event_is_polled_not_waited_on);
  ADD(s, F7_deferred_wait_on_a_failed_event_is_dropped);
  ADD(s, F5_check_reports_a_failure_its_settle_finds);
  return ct_run(s);
}
