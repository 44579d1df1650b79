/* Foreign commands (cls_foreign, <clstream/cl.h>): a user callback that
 * enqueues raw OpenCL on a stream's queue, run through the one command
 * path as a launch is, under every driver setting (the harness runs this
 * program once per setting).  Each test is named after the rule it checks
 * (docs/design.md, "Foreign commands"). */
#include "common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <clstream/cl.h>
#include <clstream/stream.h>

#define N 64

/* What a callback saw and what it is to do. */
enum { DO_COPY, DO_FAIL, DO_GARBAGE, DO_OTHER_CONTEXT, DO_USER_EVENT, DO_NO_EVENT,
       DO_WRITE_INPUT, DO_WRITE_PAST_INPUT };
struct seen {
  int mode;
  int calls;
  cl_command_queue queue;
  struct cls_foreign_buffer bufs[4];
  cl_uint nbuf, nwait;
  char label[32];
  int stream;
  cl_context other;     /* DO_OTHER_CONTEXT: a second OpenCL context */
  cl_event user;        /* DO_USER_EVENT: the event handed back (a reference kept) */
  pthread_mutex_t mu;
};

/* Copies buffer 0 into buffer 1 (their sizes are equal), without a wait
 * list of its own, as CLBlast does: the barrier clstream enqueued orders
 * it. */
static cl_int copy_cb(const struct cls_foreign_call *c, cl_event *last) {
  struct seen *s = c->data;
  pthread_mutex_lock(&s->mu);
  s->calls++;
  s->queue = c->queue;
  s->nbuf = c->nbuffers;
  for (cl_uint i = 0; i < c->nbuffers && i < 4; i++)
    s->bufs[i] = c->buffers[i];
  s->nwait = c->nwait;
  snprintf(s->label, sizeof s->label, "%s", c->label);
  s->stream = c->stream;
  pthread_mutex_unlock(&s->mu);
  cl_context mine;
  cl_int rc;
  switch (s->mode) {
  case DO_FAIL:
    return CL_OUT_OF_RESOURCES;
  case DO_GARBAGE:
    return 42;
  case DO_OTHER_CONTEXT:
    *last = clCreateUserEvent(s->other, &rc);
    return rc;
  case DO_WRITE_INPUT: { /* writes buffer 0, declared CLS_IN */
    int v = 9;
    return clEnqueueFillBuffer(c->queue, c->buffers[0].mem, &v, sizeof v, c->buffers[0].offset,
                               c->buffers[0].size, 0, NULL, last);
  }
  case DO_WRITE_PAST_INPUT: { /* one int past buffer 0's end, then the copy */
    int v = 9;
    cl_event e;
    rc = clEnqueueFillBuffer(c->queue, c->buffers[0].mem, &v, sizeof v,
                             c->buffers[0].offset + c->buffers[0].size, sizeof v, 0, NULL, &e);
    if (rc != CL_SUCCESS)
      return rc;
    rc = clEnqueueCopyBuffer(c->queue, c->buffers[0].mem, c->buffers[1].mem, c->buffers[0].offset,
                             c->buffers[1].offset, c->buffers[0].size, 1, &e, last);
    clReleaseEvent(e);
    return rc;
  }
  case DO_USER_EVENT:
    clGetCommandQueueInfo(c->queue, CL_QUEUE_CONTEXT, sizeof mine, &mine, NULL);
    pthread_mutex_lock(&s->mu);
    s->user = clCreateUserEvent(mine, &rc);
    if (rc == CL_SUCCESS)
      clRetainEvent(s->user);
    *last = s->user;
    pthread_mutex_unlock(&s->mu);
    return rc;
  default:
    break;
  }
  if (c->nbuffers < 2)
    return CL_SUCCESS;
  return clEnqueueCopyBuffer(c->queue, c->buffers[0].mem, c->buffers[1].mem,
                             c->buffers[0].offset, c->buffers[1].offset, c->buffers[0].size, 0,
                             NULL, s->mode == DO_NO_EVENT ? NULL : last);
}

static void seen_init(struct seen *s, int mode) {
  memset(s, 0, sizeof *s);
  s->mode = mode;
  pthread_mutex_init(&s->mu, NULL);
}

static int calls_of(struct seen *s) {
  pthread_mutex_lock(&s->mu);
  int n = s->calls;
  pthread_mutex_unlock(&s->mu);
  return n;
}

/* A download of b on `stream` fails with one failure whose kernel is
 * `name`, whose message holds `text`; its report into *out (the caller
 * frees it), the failure's index into *at. */
static struct cls_failure_info tainted_by(cls_context *ctx, int stream, cls_buffer b,
                                          const char *name, const char *text, cls_report **out) {
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, got, sizeof got, &r);
  ck_assert_msg(rc == CLS_ETAINTED, "download returned %s, expected CLS_ETAINTED",
                cls_err_name(rc));
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strcmp(fi.kernel, name) == 0, "the failure names '%s', expected '%s': %s",
                fi.kernel, name, fi.message);
  ck_assert_msg(strstr(fi.message, text), "the failure's message lacks '%s': %s", text,
                fi.message);
  *out = r;
  return fi;
}

static const int ramp_base = 100;
static cls_buffer ramp(cls_context *ctx, int stream) {
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = ramp_base + i;
  cls_buffer b = ct_alloc(ctx, stream, sizeof v);
  CT_OK(cls_upload(ctx, stream, b, 0, v, sizeof v));
  return b;
}

/* ------------------------------------------------------------------ */

/* A rectangle of a row-major grid of ints, moved between the grid's
 * buffer and host memory by clEnqueueWriteBufferRect or
 * clEnqueueReadBufferRect: what halo exchanges and tiled codes call, and
 * what clstream has no call of its own for. */
struct rect {
  int write;           /* 1: host -> buffer; 0: buffer -> host */
  size_t cols;         /* the grid's row length, in ints */
  size_t x, y, w, h;   /* the rectangle, in ints and rows */
  int *host;           /* w x h ints, row-major; valid until the sync */
  int calls;
};

static cl_int rect_cb(const struct cls_foreign_call *c, cl_event *last) {
  struct rect *r = c->data;
  r->calls++;
  /* The buffer's bytes start at its offset in the memory object: the
   * origin's x, in bytes, carries it (a rect's offset is linear). */
  size_t origin[3] = {c->buffers[0].offset + r->x * sizeof(int), r->y, 0};
  size_t host_origin[3] = {0, 0, 0};
  size_t region[3] = {r->w * sizeof(int), r->h, 1};
  size_t row = r->cols * sizeof(int), host_row = r->w * sizeof(int);
  if (r->write)
    return clEnqueueWriteBufferRect(c->queue, c->buffers[0].mem, CL_FALSE, origin, host_origin,
                                    region, row, 0, host_row, 0, r->host, 0, NULL, last);
  return clEnqueueReadBufferRect(c->queue, c->buffers[0].mem, CL_FALSE, origin, host_origin,
                                 region, row, 0, host_row, 0, r->host, 0, NULL, last);
}

/* Rect transfers through cls_foreign: a column written into a grid on
 * stream 1 (after its upload on stream 0: ordered, F7), incremented on
 * stream 0, then a 3x4 block read back on stream 2; the grid's other bytes
 * are kept (the writer binds it CLS_INOUT).  A rect read of a grid that
 * carries a failure is skipped (F2): the callback is not called and the
 * host bytes stay as they were. */
START_TEST(rect_transfers_run_as_foreign_commands_ordered_and_skipped_as_launches) {
  enum { COLS = 16, ROWS = 8 };
  cls_context *ctx = ct_context();
  int v[COLS * ROWS];
  for (int i = 0; i < COLS * ROWS; i++)
    v[i] = i;
  cls_buffer g = ct_alloc(ctx, 0, sizeof v);
  CT_OK(cls_upload(ctx, 0, g, 0, v, sizeof v));
  int col[ROWS];
  for (int i = 0; i < ROWS; i++)
    col[i] = 1000 + i;
  struct rect put = {.write = 1, .cols = COLS, .x = COLS - 1, .y = 0, .w = 1, .h = ROWS,
                     .host = col};
  CT_OK(cls_foreign(ctx, 1, "halo-put", rect_cb, &put, 1, (cls_arg[]){CLS_INOUT(g)}));
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  size_t gsz[1] = {COLS * ROWS};
  CT_OK(cls_launch(ctx, 0, inc, 1, gsz, NULL, 1, (cls_arg[]){CLS_INOUT(g)}));
  int block[4 * 3];
  memset(block, 0, sizeof block);
  struct rect get = {.write = 0, .cols = COLS, .x = COLS - 3, .y = 2, .w = 3, .h = 4,
                     .host = block};
  CT_OK(cls_foreign(ctx, 2, "halo-get", rect_cb, &get, 1, (cls_arg[]){CLS_IN(g)}));
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_int_eq(put.calls, 1);
  ck_assert_int_eq(get.calls, 1);
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 3; c++) {
      int x = COLS - 3 + c, y = 2 + r;
      int want = (x == COLS - 1 ? 1000 + y : y * COLS + x) + 1;
      ck_assert_msg(block[r * 3 + c] == want, "block[%d][%d] = %d, expected %d", r, c,
                    block[r * 3 + c], want);
    }
  int all[COLS * ROWS];
  CT_OK(cls_download(ctx, 0, g, 0, all, sizeof all, NULL));
  CT_EXPECT_INTS(all, (size_t)(COLS * ROWS), i,
                 ((int)i % COLS == COLS - 1 ? 1000 + (int)i / COLS : (int)i) + 1);
  /* Never written: the rect read is skipped, and says so. */
  cls_buffer never = ct_alloc(ctx, 1, sizeof v);
  int keep[4 * 3];
  for (int i = 0; i < 12; i++)
    keep[i] = -7;
  struct rect miss = {.write = 0, .cols = COLS, .x = 0, .y = 0, .w = 3, .h = 4, .host = keep};
  CT_ERR(cls_foreign(ctx, 1, "halo-get", rect_cb, &miss, 1, (cls_arg[]){CLS_IN(never)}),
         CLS_ESKIPPED);
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_int_eq(miss.calls, 0);
  CT_EXPECT_INTS(keep, (size_t)12, i, -7);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(foreign_callback_gets_the_queue_buffers_label_and_data) {
  cls_context *ctx = ct_context();
  cls_buffer in = ramp(ctx, 1), out = ct_alloc(ctx, 1, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_COPY);
  cls_arg args[] = {CLS_IN(in), CLS_OUT(out)};
  CT_OK(cls_foreign(ctx, 1, "my-copy", copy_cb, &s, 2, args));
  CT_OK(cls_stream_sync(ctx, 1, NULL));
  ck_assert_int_eq(calls_of(&s), 1);
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, 1, &q));
  ck_assert_ptr_eq(s.queue, q);
  ck_assert_str_eq(s.label, "my-copy");
  ck_assert_int_eq(s.stream, 1);
  ck_assert_uint_eq(s.nbuf, 2);
  cl_mem m;
  size_t off, size;
  CT_OK(cls_buffer_mem(ctx, out, &m, &off, &size));
  ck_assert_ptr_eq(s.bufs[1].mem, m);
  ck_assert_uint_eq(s.bufs[1].offset, off);
  ck_assert_uint_eq(s.bufs[1].size, N * sizeof(int));
  ck_assert_int_eq(s.bufs[0].access, CLS_READ);
  ck_assert_int_eq(s.bufs[1].access, CLS_WRITE);
  int got[N];
  CT_OK(cls_download(ctx, 0, out, 0, got, sizeof got, NULL));
  CT_EXPECT_INTS(got, N, i, ramp_base + (int)i);
  cls_context_destroy(ctx);
}
END_TEST

/* F7: a producer kernel on stream 0, the foreign copy on stream 1 (whose
 * callback passes no wait list), a consumer kernel on stream 2: the copy
 * sees the producer's bytes, the consumer the copy's. */
START_TEST(F7_foreign_ordered_after_producer_on_other_stream) {
  cls_context *ctx = ct_context();
  cls_kernel *slow = ct_kernel(ctx, CT_SLOW_SRC, "slow_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  /* Below 65,536: rusticl on llvmpipe ends a loop there, silently
   * (docs/portability.md). */
  int iters = ct_scale(60000, 20000);
  cls_buffer in = ramp(ctx, 0), a = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer b = ct_alloc(ctx, 1, N * sizeof(int)), c = ct_alloc(ctx, 2, N * sizeof(int));
  CT_OK(cls_fill(ctx, 1, b, 0, N * sizeof(int), &(int){-1}, sizeof(int)));
  CT_OK(cls_stream_sync(ctx, 1, NULL));
  ct_launch1(ctx, 0, slow, N, 3, (cls_arg[]){CLS_IN(in), CLS_OUT(a), CLS_SCALAR(iters)});
  struct seen s;
  seen_init(&s, DO_COPY);
  CT_OK(cls_foreign(ctx, 1, "copy-ab", copy_cb, &s, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
  ct_launch1(ctx, 2, copy, N, 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)});
  int got[N];
  CT_OK(cls_download(ctx, 2, c, 0, got, sizeof got, NULL));
  CT_EXPECT_INTS(got, N, i, ct_slow_expect((uint32_t)i, iters, ramp_base + (int)i));
  ck_assert_int_eq(calls_of(&s), 1);
  cls_context_destroy(ctx);
}
END_TEST

/* F2: an input carries a failure: the callback is not called, the output
 * takes the failure, and the skip chain names the foreign command by its
 * label, as the consumer after it. */
START_TEST(F2_foreign_command_skipped_on_tainted_input_callback_not_called) {
  cls_context *ctx = ct_context_with("enqueue:kernel=fill_k", NULL, NULL);
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = ct_alloc(ctx, 0, N * sizeof(int)), b = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 2, N * sizeof(int));
  size_t g[1] = {N};
  int seven = 7;
  int rc = cls_launch(ctx, 0, fill, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(seven)});
  ck_assert_int_le(rc, 0);
  cls_sync(ctx, NULL); /* the failure is known, whatever the driver */
  struct seen s;
  seen_init(&s, DO_COPY);
  rc = cls_foreign(ctx, 1, "gemm-like", copy_cb, &s, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  ck_assert_msg(rc == CLS_ESKIPPED, "cls_foreign on a tainted input: %s", cls_err_name(rc));
  ck_assert_msg(strstr(cls_last_error_detail(), "gemm-like"), "detail: %s",
                cls_last_error_detail());
  CT_ERR(cls_launch(ctx, 2, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(b), CLS_OUT(c)}),
         CLS_ESKIPPED);
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls_of(&s), 0);
  cls_report *r;
  tainted_by(ctx, 2, c, "fill_k", "fill_k", &r);
  ck_assert_msg(ct_chain_names(r, "gemm-like"), "skip chain lacks the label: %s",
                cls_report_text(r));
  ck_assert(ct_chain_names(r, "copy_k"));
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* F3: the callback returns an error: the write set carries a record named
 * by the label; the read set does not. */
START_TEST(F3_foreign_error_taints_write_set_named_by_label) {
  cls_context *ctx = ct_context();
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_FAIL);
  int rc = cls_foreign(ctx, 0, "failing", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)});
  ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "%s", cls_err_name(rc)); /* OK: deferred */
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls_of(&s), 1);
  cls_report *r;
  struct cls_failure_info fi = tainted_by(ctx, 0, out, "failing", "CL_OUT_OF_RESOURCES", &r);
  ck_assert_int_eq(fi.cl_status, CL_OUT_OF_RESOURCES);
  ck_assert_str_eq(fi.operation, "foreign call");
  cls_report_free(r);
  CT_OK(cls_check(ctx, 1, &in, NULL));
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(F3_foreign_garbage_status_taints_write_set) {
  cls_context *ctx = ct_context();
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_GARBAGE);
  int rc = cls_foreign(ctx, 0, "garbage", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)});
  ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "%s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  cls_report *r;
  struct cls_failure_info fi = tainted_by(ctx, 0, out, "garbage", "CLS_FOREIGN_BAD_STATUS", &r);
  ck_assert_int_eq(fi.cl_status, CLS_FOREIGN_BAD_STATUS);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* The event handed back belongs to another OpenCL context, or is not an
 * event: refused (never waited on), the write set tainted. */
START_TEST(F3_foreign_event_of_another_context_taints_write_set) {
  cls_context *ctx = ct_context();
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, 0, &q));
  cl_device_id dev;
  ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL), CL_SUCCESS);
  cl_int err;
  struct seen s;
  seen_init(&s, DO_OTHER_CONTEXT);
  s.other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  ck_assert_int_eq(err, CL_SUCCESS);
  int rc = cls_foreign(ctx, 0, "elsewhere", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)});
  ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "%s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls_of(&s), 1);
  cls_report *r;
  struct cls_failure_info fi = tainted_by(ctx, 0, out, "elsewhere", "CLS_FOREIGN_BAD_EVENT", &r);
  ck_assert_int_eq(fi.cl_status, CLS_FOREIGN_BAD_EVENT);
  cls_report_free(r);
  /* A context works on after it. */
  cls_buffer out2 = ct_alloc(ctx, 0, N * sizeof(int));
  s.mode = DO_COPY;
  CT_OK(cls_foreign(ctx, 0, "elsewhere", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out2)}));
  int got[N];
  CT_OK(cls_download(ctx, 0, out2, 0, got, sizeof got, NULL));
  CT_EXPECT_INTS(got, N, i, ramp_base + (int)i);
  cls_context_destroy(ctx);
  clReleaseContext(s.other);
}
END_TEST

/* Sets the user event the callback handed back to a failure, once the
 * callback ran (under the scheduler, at the sync's submission). */
struct failer {
  struct seen *s;
  cl_int status;
};
static void *fail_later(void *arg) {
  struct failer *f = arg;
  for (;;) {
    pthread_mutex_lock(&f->s->mu);
    cl_event ev = f->s->user;
    pthread_mutex_unlock(&f->s->mu);
    if (ev) {
      nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
      clSetUserEventStatus(ev, f->status);
      return NULL;
    }
    nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
  }
}

/* F8: the event handed back fails after the call: found like a launch's
 * failure after its enqueue, the write set (and what read it) tainted,
 * the record async and named by the label. */
START_TEST(F8_foreign_event_failing_later_taints_write_set) {
  /* Exact attribution pins it on the foreign command (ranged, F8a, names
   * the range: "late x1, copy_k x1"). */
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .precise = 1};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_USER_EVENT);
  /* The thread first: it sets the event 20 ms after the callback made
   * it, wherever that is (a scheduler may hand the foreign command and
   * the launch to the queue inside the launch's call, and oclgrind runs a
   * queue inside clFlush, waiting there for the event). */
  struct failer f = {&s, -5};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_later, &f), 0);
  CT_OK(cls_foreign(ctx, 0, "late", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 0, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(out), CLS_OUT(c)});
  ck_assert_int_le(rc, 0);
  cls_sync(ctx, NULL); /* returns once the event failed */
  pthread_join(t, NULL);
  cls_report *r;
  struct cls_failure_info fi = tainted_by(ctx, 0, out, "late", "late", &r);
  ck_assert_int_eq(fi.async, 1);
  cls_report_free(r);
  tainted_by(ctx, 0, c, "late", "late", &r);
  cls_report_free(r);
  clReleaseEvent(s.user);
  cls_context_destroy(ctx);
}
END_TEST

/* A queue lost after the enqueue (fault injection) while it holds a
 * launch behind a foreign command whose event the program sets later:
 * the launch that meets the loss returns at once -- the fault factory
 * waits for what the queue held before its gate only where the caller
 * waits anyway (src/factory/fault.c) -- and the sync, once the event is
 * set, finds the loss on what the lost launch wrote. */
START_TEST(loss_after_enqueue_behind_a_foreign_event_set_later_does_not_block_the_launch) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .fault = "lost:stream=0,nth=2,op=launch,at=complete"};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int)), d = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_USER_EVENT);
  CT_OK(cls_foreign(ctx, 0, "late", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  size_t g[1] = {N};
  ck_assert_int_le(cls_launch(ctx, 0, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(out), CLS_OUT(c)}),
                   0);
  /* The loss: the event driver enqueues it here, behind the first. */
  ck_assert_int_le(cls_launch(ctx, 0, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(c), CLS_OUT(d)}),
                   0);
  struct failer f = {&s, CL_COMPLETE};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_later, &f), 0);
  cls_sync(ctx, NULL);
  pthread_join(t, NULL);
  int got[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, 0, d, 0, got, sizeof got, &r);
  ck_assert_msg(rc < 0, "download of the lost launch's output: %s", cls_err_name(rc));
  ck_assert_msg(r && strstr(cls_report_text(r), "CL_DEVICE_NOT_AVAILABLE"), "report: %s",
                r ? cls_report_text(r) : "(none)");
  cls_report_free(r);
  clReleaseEvent(s.user);
  cls_context_destroy(ctx);
}
END_TEST

/* F8 under ranged attribution (the default): behind the event that fails
 * later, a chain of launches on its stream and on another, most of which
 * would go without an event.  PoCL 3.1 aborts when it fails a command
 * that has no event the program holds and another follows it; once an
 * event of another queue is seen, every command keeps one.  The event
 * fails once everything is enqueued, so the outcome does not depend on
 * timing. */
START_TEST(F8_foreign_event_failing_later_under_ranged_attribution_taints_a_chain) {
  cls_context *ctx = ct_context();
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer in = ramp(ctx, 0), b[6];
  for (int i = 0; i < 6; i++)
    b[i] = ct_alloc(ctx, i < 4 ? 0 : 1, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_USER_EVENT);
  CT_OK(cls_foreign(ctx, 0, "late", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(b[0])}));
  size_t g[1] = {N};
  for (int i = 1; i < 6; i++)
    ck_assert_int_le(cls_launch(ctx, i < 4 ? 0 : 1, copy, 1, g, NULL, 2,
                                (cls_arg[]){CLS_IN(b[i - 1]), CLS_OUT(b[i])}),
                     0);
  struct failer f = {&s, -5};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, fail_later, &f), 0);
  cls_sync(ctx, NULL); /* returns once the event failed */
  pthread_join(t, NULL);
  /* Ranged: the range the failure names holds the foreign command;
   * exact (where the device does not poison its queue): the command. */
  int mode = -1;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  for (int i = 3; i < 6; i += 2) {
    int got[N];
    cls_report *r = NULL;
    CT_ERR(cls_download(ctx, i < 4 ? 0 : 1, b[i], 0, got, sizeof got, &r), CLS_ETAINTED);
    ck_assert_ptr_nonnull(r);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    ck_assert_msg(fi.stream == 0 && fi.async &&
                      (mode == CLS_ATTRIBUTION_RANGED ? strstr(fi.message, "late x1") != NULL
                                                      : strcmp(fi.kernel, "late") == 0),
                  "the failure is not the foreign command's (or its range's): %s", fi.message);
    cls_report_free(r);
  }
  clReleaseEvent(s.user);
  cls_context_destroy(ctx);
}
END_TEST

/* A foreign command that never finishes (its event never completes) is
 * reported by the sync deadline, named by its label, and its write set
 * takes the timeout. */
START_TEST(timeout_sync_names_a_foreign_command_that_never_finishes) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .sync_timeout = 0.3};
  cls_context *ctx = ct_context_opts(&o);
  cls_buffer in = ramp(ctx, 0);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  cls_buffer out = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_USER_EVENT);
  CT_OK(cls_foreign(ctx, 0, "forever", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  int rc = cls_stream_sync(ctx, 0, NULL);
  ck_assert_msg(rc == CLS_ETIMEDOUT, "sync: %s", cls_err_name(rc));
  ck_assert_msg(strstr(cls_last_error_detail(), "'forever'"), "detail: %s",
                cls_last_error_detail());
  cls_report *r;
  tainted_by(ctx, 0, out, "forever", "CLS_SYNC_TIMEOUT", &r);
  cls_report_free(r);
  clSetUserEventStatus(s.user, CL_COMPLETE);
  clReleaseEvent(s.user);
  cls_context_destroy(ctx);
}
END_TEST

/* F12: each bad input is refused with its code, the callback is never
 * called, and the declared writes carry the refusal's record. */
START_TEST(F12_foreign_refusals_leave_a_record) {
  cls_context *ctx = ct_context();
  cls_buffer in = ramp(ctx, 0);
  struct seen s;
  seen_init(&s, DO_COPY);
  cls_buffer out;
#define REFUSED(call, code, kernel)                                         \
  do {                                                                      \
    out = ct_alloc(ctx, 0, N * sizeof(int));                                \
    CT_ERR(call, code);                                                     \
    ct_expect_refused(ctx, 0, out, code, "foreign call", kernel);           \
  } while (0)
  REFUSED(cls_foreign(ctx, 0, "f", NULL, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}),
          CLS_EINVAL, "f");
  REFUSED(cls_foreign(ctx, 0, NULL, copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}),
          CLS_EINVAL, "");
  REFUSED(cls_foreign(ctx, 0, "", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}),
          CLS_EINVAL, "");
  REFUSED(cls_foreign(ctx, 64, "f", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}),
          CLS_ESTREAM, "f");
  REFUSED(cls_foreign(ctx, -1, "f", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}),
          CLS_ESTREAM, "f");
  REFUSED(cls_foreign(ctx, 0, "f", copy_cb, &s, 3,
                      (cls_arg[]){CLS_IN(in), CLS_OUT(out), CLS_SCALAR(s.calls)}),
          CLS_EARGKIND, "f");
  REFUSED(cls_foreign(ctx, 0, "f", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_ARG(out)}),
          CLS_EINVAL, "f");
  cls_buffer gone = ct_alloc(ctx, 0, 16);
  CT_OK(cls_free(ctx, gone));
  REFUSED(cls_foreign(ctx, 0, "f", copy_cb, &s, 3,
                      (cls_arg[]){CLS_IN(gone), CLS_IN(in), CLS_OUT(out)}),
          CLS_ESTALE, "f");
  cls_arg many[CLS_MAX_ARGS + 1];
  for (int i = 0; i < CLS_MAX_ARGS + 1; i++)
    many[i] = CLS_IN(in);
  REFUSED((many[0] = CLS_OUT(out), cls_foreign(ctx, 0, "f", copy_cb, &s, CLS_MAX_ARGS + 1, many)),
          CLS_EINVAL, "f");
#undef REFUSED
  /* Nothing to mark: no record, and the read-only input keeps its bytes. */
  CT_ERR(cls_foreign(ctx, 0, "f", copy_cb, &s, 2, NULL), CLS_EINVAL);
  CT_ERR(cls_foreign(NULL, 0, "f", copy_cb, &s, 0, NULL), CLS_EINVAL);
  CT_OK(cls_check(ctx, 1, &in, NULL));
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls_of(&s), 0);
  cls_context_destroy(ctx);
}
END_TEST

/* A factory from before version 5 has no foreign commands: refused, with
 * a record. */
START_TEST(F12_foreign_on_a_factory_without_it_is_enosys) {
  struct cls_stream_factory old = *cls_opencl_stream_factory();
  old.version = 4;
  cls_context *ctx = ct_context_with(NULL, &old, NULL);
  cls_buffer out = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_COPY);
  CT_ERR(cls_foreign(ctx, 0, "f", copy_cb, &s, 1, (cls_arg[]){CLS_OUT(out)}), CLS_ENOSYS);
  ct_expect_refused(ctx, 0, out, CLS_ENOSYS, "foreign call", "f");
  cl_command_queue q;
  CT_ERR(cls_stream_queue(ctx, 0, &q), CLS_ENOSYS);
  cls_context_destroy(ctx);
}
END_TEST

/* Under the null factory nothing runs: the command completes at once,
 * the callback is never called, and the stream has no queue. */
START_TEST(null_factory_completes_a_foreign_command_without_calling_it) {
  cls_context *ctx = ct_context_with(NULL, cls_null_stream_factory(), NULL);
  cls_buffer in = ct_alloc(ctx, 0, N * sizeof(int)), out = ct_alloc(ctx, 1, N * sizeof(int));
  CT_OK(cls_fill(ctx, 0, in, 0, N * sizeof(int), &(int){1}, sizeof(int)));
  struct seen s;
  seen_init(&s, DO_COPY);
  CT_OK(cls_foreign(ctx, 1, "nothing", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_int_eq(calls_of(&s), 0);
  CT_OK(cls_check(ctx, 1, &out, NULL));
  cl_command_queue q;
  CT_ERR(cls_stream_queue(ctx, 1, &q), CLS_ENOSYS);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_FAULT fails a foreign command like a launch: op=foreign and its
 * label as kernel=, at the enqueue (the callback is not called) or at
 * completion (it is, and the failure is found after). */
START_TEST(fault_injection_fails_a_foreign_command_like_a_launch) {
  static const struct {
    const char *spec;
    int called, async;
  } cases[] = {{"enqueue:op=foreign,kernel=gemm,status=CL_OUT_OF_RESOURCES", 0, -1},
               {"complete:op=foreign,status=CL_OUT_OF_RESOURCES", 1, 1}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    cls_context *ctx = ct_context_with(cases[k].spec, NULL, NULL);
    cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
    struct seen s;
    seen_init(&s, DO_COPY);
    int rc = cls_foreign(ctx, 0, "gemm", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)});
    ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "%s: %s", cases[k].spec, cls_err_name(rc));
    cls_sync(ctx, NULL);
    ck_assert_int_eq(calls_of(&s), cases[k].called);
    cls_report *r;
    struct cls_failure_info fi = tainted_by(ctx, 0, out, "gemm", "CL_OUT_OF_RESOURCES", &r);
    if (cases[k].async >= 0)
      ck_assert_int_eq(fi.async, cases[k].async);
    cls_report_free(r);
    CT_OK(cls_check(ctx, 1, &in, NULL));
    cls_context_destroy(ctx);
  }
}
END_TEST

/* An image argument (cls_image_alloc) reaches the callback as its own
 * image object at offset 0, ordered, skipped and tainted as a buffer is:
 * the callback copies it into a buffer with clEnqueueCopyImageToBuffer. */
static cl_int image_to_buffer_cb(const struct cls_foreign_call *c, cl_event *last) {
  int *calls = c->data;
  ++*calls;
  size_t origin[3] = {0, 0, 0}, region[3] = {N, 1, 1};
  return clEnqueueCopyImageToBuffer(c->queue, c->buffers[0].mem, c->buffers[1].mem, origin,
                                    region, c->buffers[1].offset, 0, NULL, last);
}
START_TEST(foreign_command_takes_an_image_argument) {
  cls_context *ctx = ct_context();
  const struct cls_image_desc d = {.type = CLS_IMAGE_2D, .order = CL_R,
                                   .data_type = CL_UNSIGNED_INT32, .width = N, .height = 1};
  cls_image img, unwritten;
  int rc = cls_image_alloc(ctx, 0, &d, &img);
  if (rc == CLS_ENOSYS && strstr(cls_last_error_detail(), "CL_DEVICE_IMAGE_SUPPORT")) {
    fprintf(stderr, "foreign_command_takes_an_image_argument: the device has no images: %s\n",
            cls_last_error_detail());
    cls_context_destroy(ctx);
    return;
  }
  CT_OK(rc);
  CT_OK(cls_image_alloc(ctx, 0, &d, &unwritten));
  unsigned v[N];
  for (unsigned i = 0; i < N; i++)
    v[i] = 7 * i + 3;
  size_t origin[3] = {0, 0, 0}, region[3] = {N, 1, 1};
  CT_OK(cls_image_upload_async(ctx, 0, img, origin, region, v, 0, 0));
  cls_buffer out = ct_alloc(ctx, 1, sizeof v), out2 = ct_alloc(ctx, 1, sizeof v);
  int calls = 0;
  /* Stream 1 after the upload on stream 0: ordered as a launch would be. */
  CT_OK(cls_foreign(ctx, 1, "img2buf", image_to_buffer_cb, &calls, 2,
                    (cls_arg[]){CLS_IN(img), CLS_OUT(out)}));
  unsigned got[N];
  CT_OK(cls_download(ctx, 1, out, 0, got, sizeof got, NULL));
  for (unsigned i = 0; i < N; i++)
    ck_assert_uint_eq(got[i], v[i]);
  ck_assert_int_eq(calls, 1);
  /* An image nothing wrote (F1): the callback is not called, its output
   * reads as tainted. */
  CT_ERR(cls_foreign(ctx, 1, "img2buf", image_to_buffer_cb, &calls, 2,
                     (cls_arg[]){CLS_IN(unwritten), CLS_OUT(out2)}),
         CLS_ESKIPPED);
  cls_sync(ctx, NULL);
  ck_assert_int_eq(calls, 1);
  CT_ERR(cls_download(ctx, 1, out2, 0, got, sizeof got, NULL), CLS_ETAINTED);
  cls_context_destroy(ctx);
}
END_TEST

/* The escape hatches: a stream's queue (of the context's OpenCL context)
 * and a buffer's memory object; bad input refused. */
START_TEST(escape_hatches_give_the_queue_and_the_buffer_memory) {
  cls_context *ctx = ct_context();
  cls_buffer b = ct_alloc(ctx, 3, 100);
  cl_command_queue q;
  CT_OK(cls_stream_queue(ctx, 3, &q));
  ck_assert_ptr_nonnull(q);
  cl_mem m;
  size_t off = 99, size = 0;
  CT_OK(cls_buffer_mem(ctx, b, &m, &off, &size));
  ck_assert_uint_eq(size, 100);
  ck_assert_uint_ne(off, 99); /* written */
  cl_context qc, mc;
  size_t msize = 0;
  ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL), CL_SUCCESS);
  ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof mc, &mc, NULL), CL_SUCCESS);
  ck_assert_int_eq(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof msize, &msize, NULL), CL_SUCCESS);
  ck_assert_ptr_eq(qc, mc);
  ck_assert_uint_ge(msize, off + size);
  CT_OK(cls_buffer_mem(ctx, b, &m, NULL, NULL));
  CT_ERR(cls_stream_queue(ctx, 64, &q), CLS_ESTREAM);
  CT_ERR(cls_stream_queue(ctx, 0, NULL), CLS_EINVAL);
  CT_ERR(cls_stream_queue(NULL, 0, &q), CLS_EINVAL);
  CT_ERR(cls_buffer_mem(ctx, b, NULL, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_buffer_mem(NULL, b, &m, NULL, NULL), CLS_EINVAL);
  CT_ERR(cls_buffer_mem(ctx, CLS_BUFFER_NULL, &m, NULL, NULL), CLS_ENULL);
  CT_OK(cls_free(ctx, b));
  CT_ERR(cls_buffer_mem(ctx, b, &m, NULL, NULL), CLS_ESTALE);
  cls_context_destroy(ctx);
}
END_TEST

/* Without an event of its own the command still completes in order: a
 * marker stands for it. */
START_TEST(foreign_without_an_event_is_ordered_by_a_marker) {
  cls_context *ctx = ct_context();
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer in = ramp(ctx, 0), mid = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer out = ct_alloc(ctx, 1, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_NO_EVENT);
  CT_OK(cls_foreign(ctx, 0, "quiet", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(mid)}));
  ct_launch1(ctx, 1, copy, N, 2, (cls_arg[]){CLS_IN(mid), CLS_OUT(out)});
  int got[N];
  CT_OK(cls_download(ctx, 1, out, 0, got, sizeof got, NULL));
  CT_EXPECT_INTS(got, N, i, ramp_base + (int)i);
  cls_context_destroy(ctx);
}
END_TEST

/* F11: a foreign command's declaration is trusted (there is no signature
 * to check it against); guard mode checks it as a launch's: a write
 * through CLS_IN is a CLS_EGUARD failure of the command, named by its
 * label, on what it wrote and what read that; a callback that only reads
 * is not flagged. */
START_TEST(F11_guard_catches_a_foreign_write_through_CLS_IN) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = 1};
  cls_context *ctx = ct_context_opts(&o);
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 0, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_COPY);
  CT_OK(cls_foreign(ctx, 0, "honest", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  CT_OK(cls_sync(ctx, NULL));
  CT_OK(cls_check(ctx, 1, &in, NULL));
  CT_OK(cls_check(ctx, 1, &out, NULL));
  s.mode = DO_WRITE_INPUT;
  CT_OK(cls_foreign(ctx, 0, "sneaky", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  cls_sync(ctx, NULL);
  cls_report *r;
  struct cls_failure_info fi = tainted_by(ctx, 0, in, "sneaky", "declared CLS_IN", &r);
  ck_assert_int_eq(fi.status, CLS_EGUARD);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* Guard mode checks the guards of every buffer a foreign command is
 * given, CLS_IN ones too (the library may write anywhere): a write past
 * the end of its input is a CLS_EGUARD failure of the command, named by
 * its label, not of the input's last writer; the input's own bytes,
 * unchanged, read good. */
START_TEST(guard_names_a_foreign_command_that_writes_past_its_CLS_IN_buffer) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .guard = 1};
  cls_context *ctx = ct_context_opts(&o);
  cls_buffer in = ramp(ctx, 0), out = ct_alloc(ctx, 1, N * sizeof(int));
  struct seen s;
  seen_init(&s, DO_WRITE_PAST_INPUT);
  CT_OK(cls_foreign(ctx, 1, "stray", copy_cb, &s, 2, (cls_arg[]){CLS_IN(in), CLS_OUT(out)}));
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_int_eq(calls_of(&s), 1);
  cls_report *r;
  struct cls_failure_info fi =
      tainted_by(ctx, 1, out, "stray", "out-of-bounds write past the end of buffer", &r);
  ck_assert_int_eq(fi.status, CLS_EGUARD);
  ck_assert_msg(strstr(fi.message, "by 'stray' on stream 1"), "root: %s", fi.message);
  cls_report_free(r);
  int got[N];
  CT_OK(cls_download(ctx, 0, in, 0, got, sizeof got, NULL));
  CT_EXPECT_INTS(got, N, i, ramp_base + (int)i);
  cls_context_destroy(ctx);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("foreign");
  CT_ADD(s, foreign_callback_gets_the_queue_buffers_label_and_data);
  CT_ADD(s, F7_foreign_ordered_after_producer_on_other_stream);
  CT_ADD(s, F2_foreign_command_skipped_on_tainted_input_callback_not_called);
  CT_ADD(s, F3_foreign_error_taints_write_set_named_by_label);
  CT_ADD(s, F3_foreign_garbage_status_taints_write_set);
  CT_ADD(s, F3_foreign_event_of_another_context_taints_write_set);
  CT_ADD(s, F8_foreign_event_failing_later_taints_write_set);
  CT_ADD(s, F8_foreign_event_failing_later_under_ranged_attribution_taints_a_chain);
  CT_ADD(s, timeout_sync_names_a_foreign_command_that_never_finishes);
  CT_ADD(s, F12_foreign_refusals_leave_a_record);
  CT_ADD(s, F12_foreign_on_a_factory_without_it_is_enosys);
  CT_ADD(s, null_factory_completes_a_foreign_command_without_calling_it);
  CT_ADD(s, fault_injection_fails_a_foreign_command_like_a_launch);
  CT_ADD(s, escape_hatches_give_the_queue_and_the_buffer_memory);
  CT_ADD(s, foreign_command_takes_an_image_argument);
  CT_ADD(s, foreign_without_an_event_is_ordered_by_a_marker);
  CT_ADD(s, loss_after_enqueue_behind_a_foreign_event_set_later_does_not_block_the_launch);
  CT_ADD(s, F11_guard_catches_a_foreign_write_through_CLS_IN);
  CT_ADD(s, guard_names_a_foreign_command_that_writes_past_its_CLS_IN_buffer);
  CT_ADD(s, rect_transfers_run_as_foreign_commands_ordered_and_skipped_as_launches);
  return ct_run(s);
}
