/* Several devices in one context, stream placement, and relocation with
 * generation fencing (docs/devices.md).
 *
 * main() sets POCL_DEVICES="pthread pthread" before any OpenCL call, so
 * PoCL offers two CPU devices of one platform; every context here is made
 * with CLS_DEVICE=all.  On PoCL each test requires the two devices (it
 * cannot pass on one by accident); on a vendor that offers one device
 * (make check-vendors) the same tests run on it, where placement and
 * relocation are within one device. */
#include "common.h"

#include <stdlib.h>

#include <clstream/cl.h>
#include <clstream/stream.h>

static cls_context *devctx(const char *placement, const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .placement = placement,
                                  .fault = fault};
  cls_context *ctx = ct_context_opts(&o);
  size_t n = 0;
  CT_OK(cls_context_devices(ctx, NULL, 0, &n));
  struct cls_device_info d = ct_context_info(ctx);
  if (ct_icontains(d.platform_name, "Portable Computing Language"))
    ck_assert_msg(n == 2, "PoCL with POCL_DEVICES=\"pthread pthread\" gave %zu devices", n);
  return ctx;
}

static int ndev(cls_context *ctx) {
  size_t n = 0;
  CT_OK(cls_context_devices(ctx, NULL, 0, &n));
  return (int)n;
}

static int device_of(cls_context *ctx, int stream) {
  int d = -1;
  CT_OK(cls_stream_device(ctx, stream, &d));
  return d;
}


/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

START_TEST(all_makes_one_context_over_every_device_of_the_platform) {
  cls_context *ctx = devctx(NULL, NULL);
  struct cls_device_info devs[CLS_MAX_DEVICES], first = ct_context_info(ctx);
  size_t n = 0;
  CT_OK(cls_context_devices(ctx, devs, CLS_MAX_DEVICES, &n));
  ck_assert_uint_ge(n, 1);
  ck_assert_int_eq(devs[0].platform_index, first.platform_index);
  ck_assert_int_eq(devs[0].device_index, first.device_index);
  for (size_t i = 1; i < n; i++) {
    ck_assert_int_eq(devs[i].platform_index, devs[0].platform_index);
    ck_assert_int_ne(devs[i].device_index, devs[i - 1].device_index);
  }
  /* A short cap gets the first entries and the whole count. */
  struct cls_device_info one;
  size_t m = 0;
  CT_OK(cls_context_devices(ctx, &one, 1, &m));
  ck_assert_uint_eq(m, n);
  ck_assert_str_eq(one.device_name, devs[0].device_name);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(device_list_names_devices_of_one_platform) {
  cls_context *all = devctx(NULL, NULL);
  int n = ndev(all);
  struct cls_device_info d0 = ct_context_info(all);
  cls_context_destroy(all);
  char spec[64];
  if (n >= 2)
    snprintf(spec, sizeof spec, "%d:1,%d:0", d0.platform_index, d0.platform_index);
  else
    snprintf(spec, sizeof spec, "%d:0", d0.platform_index);
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = spec};
  cls_context *ctx = ct_context_opts(&o);
  struct cls_device_info devs[2];
  size_t m = 0;
  CT_OK(cls_context_devices(ctx, devs, 2, &m));
  ck_assert_int_eq((int)m, n >= 2 ? 2 : 1);
  if (n >= 2) { /* in the order of the list */
    ck_assert_int_eq(devs[0].device_index, 1);
    ck_assert_int_eq(devs[1].device_index, 0);
  }
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(malformed_device_lists_are_refused_and_leave_nothing) {
  static const char *bad[] = {"0:0,0:0", "0:0,", ",0:0", "0:0,,0:1", "all,0:0", "0:0,all",
                              "0:0, 0:1"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    cls_context *ctx = (cls_context *)&bad; /* overwritten with NULL */
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .device = bad[i]};
    int rc = cls_context_create(&ctx, &o);
    ck_assert_msg(rc == CLS_ECONFIG, "device '%s': %s (%s)", bad[i], cls_err_name(rc),
                  cls_last_error_detail());
    ck_assert_ptr_null(ctx);
    ck_assert_msg(strstr(cls_last_error_detail(), "CLS_DEVICE"), "detail: %s",
                  cls_last_error_detail());
  }
  struct cls_device_info info;
  CT_ERR(cls_device_select("0:0,0:0", &info), CLS_ECONFIG);
  CT_ERR(cls_device_select("0:0,99:0", &info), CLS_ENODEV);
}
END_TEST

START_TEST(name_and_index_picks_a_device_of_that_platform) {
  cls_context *all = devctx(NULL, NULL);
  struct cls_device_info d0 = ct_context_info(all);
  int n = ndev(all);
  cls_context_destroy(all);
  struct cls_device_info got;
  /* A word of the platform's name picks it; the index its device. */
  char spec[160], word[64];
  sscanf(d0.platform_name, "%63s", word);
  snprintf(spec, sizeof spec, "%s:%d", word, n - 1);
  CT_OK(cls_device_select(spec, &got));
  ck_assert_int_eq(got.platform_index, d0.platform_index);
  ck_assert_int_eq(got.device_index, n - 1);
  snprintf(spec, sizeof spec, "%s:%d", word, n);
  CT_ERR(cls_device_select(spec, &got), CLS_ENODEV);
  CT_ERR(cls_device_select("+0:0", &got), CLS_ECONFIG);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Placement                                                           */
/* ------------------------------------------------------------------ */

START_TEST(spread_places_stream_i_on_device_i_mod_n) {
  cls_context *ctx = devctx(NULL, NULL); /* the default with several devices */
  int n = ndev(ctx);
  for (int i = 0; i < 6; i++) {
    ck_assert_int_eq(device_of(ctx, i), i % n); /* before creation */
    cls_buffer b = ct_written(ctx, i, 4, i);
    ck_assert_int_eq(device_of(ctx, i), i % n); /* after */
    CT_OK(cls_free(ctx, b));
  }
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(first_places_every_stream_on_device_0) {
  cls_context *ctx = devctx("first", NULL);
  for (int i = 0; i < 4; i++) {
    cls_buffer b = ct_written(ctx, i, 4, i);
    ck_assert_int_eq(device_of(ctx, i), 0);
    CT_OK(cls_free(ctx, b));
  }
  cls_context_destroy(ctx);
  /* Its grammar: two words, exactly. */
  static const char *bad[] = {"Spread", "round-robin", "spread ", "first,spread"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .placement = bad[i]};
    cls_context *c = NULL;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_ptr_null(c);
  }
}
END_TEST

START_TEST(explicit_place_before_the_first_command_wins) {
  cls_context *ctx = devctx("first", NULL);
  int last = ndev(ctx) - 1;
  CT_OK(cls_stream_place(ctx, 3, last));
  ck_assert_int_eq(device_of(ctx, 3), last);
  cls_buffer b = ct_written(ctx, 3, 16, 7);
  ck_assert_int_eq(device_of(ctx, 3), last);
  ct_expect_ints(ctx, 3, b, 16, 7);
  /* A stream that has a buffer but no command yet may still be placed. */
  cls_buffer c = ct_alloc(ctx, 4, 64);
  CT_OK(cls_stream_place(ctx, 4, last));
  ck_assert_int_eq(device_of(ctx, 4), last);
  ck_assert_uint_eq(ct_generation(ctx, 4), 0); /* a placement is not a relocation */
  ck_assert_uint_eq(ct_stats(ctx, 4).relocations, 0);
  int v = 5;
  CT_OK(cls_fill(ctx, 4, c, 0, 64, &v, sizeof v));
  ct_expect_ints(ctx, 4, c, 16, 5);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(place_after_the_first_command_is_refused) {
  cls_context *ctx = devctx(NULL, NULL);
  int n = ndev(ctx);
  cls_buffer b = ct_written(ctx, 0, 4, 1);
  CT_ERR(cls_stream_place(ctx, 0, n - 1), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "cls_stream_relocate"), "detail: %s",
                cls_last_error_detail());
  ck_assert_int_eq(device_of(ctx, 0), 0);
  CT_ERR(cls_stream_place(ctx, 1, n), CLS_ERANGE);
  CT_ERR(cls_stream_place(ctx, 1, -1), CLS_ERANGE);
  CT_ERR(cls_stream_place(ctx, CLS_MAX_STREAMS, 0), CLS_ESTREAM);
  CT_ERR(cls_stream_place(NULL, 0, 0), CLS_EINVAL);
  ct_expect_ints(ctx, 0, b, 4, 1);
  cls_context_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Ordering across devices                                             */
/* ------------------------------------------------------------------ */

/* A chain through both devices: each stage reads the previous stage's
 * output on the other device, with a slow reader, so a missing wait would
 * show in the bytes. */
START_TEST(cross_device_chain_keeps_order_and_counts_migrations) {
  cls_context *ctx = devctx(NULL, NULL);
  int n = ndev(ctx);
  cls_kernel *slow = ct_kernel(ctx, CT_SLOW_SRC, "slow_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  enum { N = 4096, ITERS = 2000 };
  static int host[N], got[N], want[N];
  for (int i = 0; i < N; i++)
    host[i] = i * 3;
  cls_buffer a = ct_alloc(ctx, 0, sizeof host), b = ct_alloc(ctx, 0, sizeof host);
  ct_upload_ints(ctx, 0, a, host, N);
  for (int i = 0; i < N; i++)
    want[i] = host[i];
  for (int round = 0; round < 4; round++) {
    int s = round % 2; /* streams 0 and 1: devices 0 and 1 */
    int iters = ITERS;
    cls_arg sa[] = {CLS_IN(a), CLS_OUT(b), CLS_SCALAR(iters)};
    ct_launch1(ctx, s, slow, N, 3, sa);
    for (int i = 0; i < N; i++)
      want[i] = ct_slow_expect((uint32_t)i, ITERS, want[i]);
    cls_arg ia[] = {CLS_INOUT(b)};
    ct_launch1(ctx, 1 - s, inc, N, 1, ia); /* the other device, after it */
    for (int i = 0; i < N; i++)
      want[i] += 1;
    cls_buffer t = a;
    a = b;
    b = t;
  }
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, want[i]);
  struct cls_stream_stats s0 = ct_stats(ctx, 0), s1 = ct_stats(ctx, 1);
  if (n >= 2) {
    ck_assert_uint_gt(s1.migrations, 0);
    ck_assert_uint_gt(s0.migrations, 0);
  } else {
    ck_assert_uint_eq(s0.migrations + s1.migrations, 0);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* Buffers carved from one page (one stream's pool) and written at the
 * same time from two devices, with nothing ordering the two writes (they
 * touch different buffers): each keeps its own bytes. */
START_TEST(buffers_of_one_page_written_on_two_devices_keep_their_bytes) {
  cls_context *ctx = devctx(NULL, NULL);
  cls_kernel *slow = ct_kernel(ctx, CT_SLOW_SRC, "slow_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  enum { N = 1024, ITERS = 3000 };
  static int host[N], got[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  for (int round = 0; round < 8; round++) {
    /* x, a and b from stream 0's pool: one page */
    cls_buffer x = ct_alloc(ctx, 0, sizeof host), a = ct_alloc(ctx, 0, sizeof host),
               b = ct_alloc(ctx, 0, sizeof host);
    ct_upload_ints(ctx, 0, x, host, N);
    ct_upload_ints(ctx, 0, b, host, N);
    int w = round % 2; /* the device that writes a */
    int iters = ITERS;
    cls_arg sa[] = {CLS_IN(x), CLS_OUT(a), CLS_SCALAR(iters)};
    ct_launch1(ctx, 1 - w, slow, N, 3, sa);
    cls_arg ia[] = {CLS_INOUT(b)};
    for (int k = 0; k < 20; k++)
      ct_launch1(ctx, w, inc, N, 1, ia);
    ct_download_ints(ctx, 0, a, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, ct_slow_expect((uint32_t)i, ITERS, i));
    ct_download_ints(ctx, 1, b, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, i + 20);
    CT_OK(cls_free(ctx, x));
    CT_OK(cls_free(ctx, a));
    CT_OK(cls_free(ctx, b));
  }
  cls_context_destroy(ctx);
}
END_TEST

/* F6 and F2 across devices: a failure on device 0 skips its consumer on
 * device 1, and the read names the root and the chain. */
/* A foreign command gets the queue of its own stream's device, and is
 * ordered after a producer on the other device (its bytes move there). */
static cl_int foreign_copy_on(const struct cls_foreign_call *c, cl_event *last) {
  cl_device_id *d = c->data;
  cl_int rc = clGetCommandQueueInfo(c->queue, CL_QUEUE_DEVICE, sizeof *d, d, NULL);
  if (rc != CL_SUCCESS)
    return rc;
  return clEnqueueCopyBuffer(c->queue, c->buffers[0].mem, c->buffers[1].mem, c->buffers[0].offset,
                             c->buffers[1].offset, c->buffers[0].size, 0, NULL, last);
}

START_TEST(foreign_command_gets_the_queue_of_its_stream_s_device) {
  cls_context *ctx = devctx("spread", NULL);
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cl_device_id on[2] = {NULL, NULL};
  for (int st = 0; st < 2; st++) {
    cls_buffer a = ct_alloc(ctx, 1 - st, 16 * sizeof(int)), b = ct_alloc(ctx, st, 16 * sizeof(int));
    int v = 40 + st;
    ct_launch1(ctx, 1 - st, fill, 16, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)});
    CT_OK(cls_foreign(ctx, st, "copy", foreign_copy_on, &on[st], 2,
                      (cls_arg[]){CLS_IN(a), CLS_OUT(b)}));
    ct_expect_ints(ctx, st, b, 16, v);
    cl_command_queue q;
    cl_device_id qd;
    CT_OK(cls_stream_queue(ctx, st, &q));
    ck_assert_int_eq(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL), CL_SUCCESS);
    ck_assert_ptr_eq(on[st], qd);
  }
  if (ndev(ctx) == 2) {
    ck_assert_int_ne(device_of(ctx, 0), device_of(ctx, 1));
    ck_assert_ptr_ne(on[0], on[1]);
  }
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(F6_failure_on_one_device_skips_consumer_on_the_other) {
  cls_context *ctx = devctx(NULL, "enqueue:kernel=fill_k,stream=0");
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = ct_alloc(ctx, 0, 64 * sizeof(int));
  int v = 3;
  cls_arg fa[] = {CLS_OUT(a), CLS_SCALAR(v)};
  size_t g[1] = {64};
  /* The scheduler enqueues later: its failure is found then (F8). */
  CT_ERR2(cls_launch(ctx, 0, fill, 1, g, NULL, 2, fa), CLS_ELAUNCH, CLS_OK);
  cls_arg ia[] = {CLS_INOUT(a)};
  CT_ERR(cls_launch(ctx, 1, inc, 1, g, NULL, 1, ia), CLS_ESKIPPED);
  cls_report *r = NULL;
  int got[64];
  CT_ERR(cls_download(ctx, 1, a, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_int_eq(fi.stream, 0);
  ck_assert_uint_eq(fi.skipped, 1);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Relocation                                                          */
/* ------------------------------------------------------------------ */

START_TEST(relocate_moves_the_stream_and_raises_its_generation) {
  cls_context *ctx = devctx(NULL, NULL);
  int n = ndev(ctx);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = ct_written(ctx, 0, 64, 10);
  ck_assert_uint_eq(ct_generation(ctx, 0), 0);
  CT_OK(cls_stream_relocate(ctx, 0, n - 1, 0));
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_int_eq(device_of(ctx, 0), n - 1);
  /* What completed on the retired queue keeps its bytes; the stream
   * works on its fresh queue. */
  cls_arg ia[] = {CLS_INOUT(a)};
  ct_launch1(ctx, 0, inc, 64, 1, ia);
  ct_expect_ints(ctx, 0, a, 64, 11);
  /* Back, on the same device too: each move is one generation. */
  CT_OK(cls_stream_relocate(ctx, 0, 0, 1));
  CT_OK(cls_stream_relocate(ctx, 0, 0, 2));
  ck_assert_uint_eq(ct_generation(ctx, 0), 3);
  ct_launch1(ctx, 0, inc, 64, 1, ia);
  ct_expect_ints(ctx, 0, a, 64, 12);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 3);
  /* A stream not used yet is created where it is sent. */
  CT_OK(cls_stream_relocate(ctx, 5, n - 1, 0));
  ck_assert_uint_eq(ct_generation(ctx, 5), 1);
  ck_assert_int_eq(device_of(ctx, 5), n - 1);
  ct_expect_ints(ctx, 5, a, 64, 12);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(relocate_naming_a_retired_generation_is_refused_estalegen) {
  cls_context *ctx = devctx(NULL, NULL);
  int n = ndev(ctx);
  cls_buffer a = ct_written(ctx, 1, 16, 4);
  uint64_t g = ct_generation(ctx, 1);
  CT_OK(cls_stream_relocate(ctx, 1, 0, g));
  /* A second request made from the same reading: the seed's stale
   * handoff.  Refused, and nothing moves. */
  CT_ERR(cls_stream_relocate(ctx, 1, n - 1, g), CLS_ESTALEGEN);
  ck_assert_msg(strstr(cls_last_error_detail(), "generation"), "detail: %s",
                cls_last_error_detail());
  ck_assert_str_eq(cls_err_name(CLS_ESTALEGEN), "CLS_ESTALEGEN");
  ck_assert_uint_eq(ct_generation(ctx, 1), g + 1);
  ck_assert_int_eq(device_of(ctx, 1), 0);
  /* From the future: not a generation the stream had. */
  CT_ERR(cls_stream_relocate(ctx, 1, 0, g + 5), CLS_EINVAL);
  CT_ERR(cls_stream_relocate(ctx, 1, n, g + 1), CLS_ERANGE);
  CT_ERR(cls_stream_relocate(ctx, -1, 0, 0), CLS_ESTREAM);
  CT_ERR(cls_stream_relocate(NULL, 0, 0, 0), CLS_EINVAL);
  ck_assert_uint_eq(ct_generation(ctx, 1), g + 1);
  ct_expect_ints(ctx, 1, a, 16, 4);
  cls_context_destroy(ctx);
}
END_TEST

/* Work running on the retired queue when the request comes: it is waited
 * for, and it counts (its bytes are kept), under every driver. */
START_TEST(work_in_flight_at_relocation_completes_and_keeps_its_bytes) {
  cls_context *ctx = devctx(NULL, NULL);
  int n = ndev(ctx);
  cls_kernel *slow = ct_kernel(ctx, CT_SLOW_SRC, "slow_k");
  enum { N = 8192, ITERS = 4000 };
  static int host[N], got[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cls_buffer a = ct_alloc(ctx, 0, sizeof host), b = ct_alloc(ctx, 0, sizeof host);
  ct_upload_ints(ctx, 0, a, host, N);
  int iters = ITERS;
  cls_arg sa[] = {CLS_IN(a), CLS_OUT(b), CLS_SCALAR(iters)};
  ct_launch1(ctx, 0, slow, N, 3, sa);
  CT_OK(cls_stream_relocate(ctx, 0, n - 1, 0));
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, ct_slow_expect((uint32_t)i, ITERS, (int)i));
  cls_context_destroy(ctx);
}
END_TEST

/* F7 with generations: a failure of the retired queue, found after the
 * enqueue, stays on its buffers (F8), and a consumer on another stream is
 * skipped on it, never ordered after the retired queue's failed event (on
 * PoCL that wait would hang forever: the test's timeout catches it). */
START_TEST(F7_retired_events_are_never_waited_on) {
  cls_context *ctx = devctx(NULL, "complete:kernel=fill_k,stream=0");
  int n = ndev(ctx);
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = ct_alloc(ctx, 0, 64 * sizeof(int)), ok = ct_written(ctx, 0, 64, 8);
  int v = 1;
  cls_arg fa[] = {CLS_OUT(a), CLS_SCALAR(v)};
  ct_launch1(ctx, 0, fill, 64, 2, fa); /* fails at completion */
  CT_OK(cls_stream_relocate(ctx, 0, n - 1, 0));
  uint64_t waits = ct_stats(ctx, 1).waits;
  cls_arg ia[] = {CLS_INOUT(a)};
  size_t g[1] = {64};
  CT_ERR(cls_launch(ctx, 1, inc, 1, g, NULL, 1, ia), CLS_ESKIPPED);
  cls_arg oa[] = {CLS_INOUT(ok)};
  ct_launch1(ctx, 1, inc, 64, 1, oa); /* written on the retired queue: no wait */
  ck_assert_uint_eq(ct_stats(ctx, 1).waits, waits);
  ct_expect_ints(ctx, 1, ok, 64, 9);
  cls_report *r = NULL;
  int got[64];
  CT_ERR(cls_download(ctx, 0, a, 0, got, sizeof got, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_int_eq(fi.async, 1);
  ck_assert_str_eq(fi.kernel, "fill_k");
  cls_report_free(r);
  CT_OK(cls_sync(ctx, NULL));
  cls_context_destroy(ctx);
}
END_TEST


/* ------------------------------------------------------------------ */
/* Lease expiry: lost queues                                           */
/* ------------------------------------------------------------------ */

static cls_context *lostctx(const char *relocate, const char *fault) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .relocate = relocate,
                                  .recover = "off", /* the rule without recovery:
                                                       tests/test-recover.c has it on */
                                  .fault = fault};
  return ct_context_opts(&o);
}

/* Stream b on a lease of its own, not on a's queue: under
 * scheduler:interleave the streams of one device share one queue, and a
 * lost queue is lost for every stream on it; an explicit relocation gives
 * b a queue of its own (the scheduler's rule for a relocated stream). */
static void own_lease(cls_context *ctx, int a, int b) {
  const char *sched = getenv("CLS_SCHEDULER");
  if (sched && strstr(sched, "interleave") && device_of(ctx, a) == device_of(ctx, b))
    CT_OK(cls_stream_relocate(ctx, b, device_of(ctx, b), ct_generation(ctx, b)));
}

/* The first (only) failure of a tainted buffer, read on `stream`: one
 * the lost queue gave. */
static void expect_failure(cls_context *ctx, int stream, cls_buffer b, const char *has) {
  int got[16];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, stream, b, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, has), "failure '%s' lacks '%s'", fi.message, has);
  /* The queue's status, whether met at the call or in a deferred batch. */
  ck_assert_int_eq(fi.cl_status, CL_DEVICE_NOT_AVAILABLE);
  cls_report_free(r);
}

/* CLS_RELOCATE=off (the default): a lost queue fails every command from
 * the nth on, reported like any other failure; the stream stays. */
START_TEST(lost_queue_with_relocation_off_fails_every_later_command) {
  cls_context *ctx = lostctx(NULL, "lost:stream=0,nth=2");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  own_lease(ctx, 0, 1);
  int host[16] = {0};
  cls_buffer a = ct_alloc(ctx, 0, sizeof host);
  ct_upload_ints(ctx, 0, a, host, 16); /* command 1: before the loss */
  cls_arg ia[] = {CLS_INOUT(a)};
  size_t g[1] = {16};
  CT_ERR2(cls_launch(ctx, 0, inc, 1, g, NULL, 1, ia), CLS_ELAUNCH, CLS_OK);
  cls_stream_sync(ctx, 0, NULL);
  expect_failure(ctx, 1, a, "CL_DEVICE_NOT_AVAILABLE");
  /* Still lost: a fresh write on stream 0 fails too. */
  int v = 1;
  CT_ERR2(cls_fill(ctx, 0, a, 0, sizeof host, &v, sizeof v), CLS_ECL, CLS_OK);
  cls_stream_sync(ctx, 0, NULL);
  expect_failure(ctx, 1, a, "CL_DEVICE_NOT_AVAILABLE");
  ck_assert_uint_eq(ct_generation(ctx, 0), 0);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 0);
  /* Other streams are other leases. */
  ct_expect_ints(ctx, 1, ct_written(ctx, 1, 16, 4), 16, 4);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_RELOCATE=other: the stream moves to a fresh queue on the next
 * device; what completed before the loss keeps its bytes, the command the
 * loss took is "lost with stream S generation G", and run again it works. */
START_TEST(lost_queue_relocates_to_the_other_device_and_completed_work_survives) {
  cls_context *ctx = lostctx("other", "lost:stream=0,nth=3");
  int n = ndev(ctx);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  int host[16];
  for (int i = 0; i < 16; i++)
    host[i] = i;
  cls_buffer a = ct_alloc(ctx, 0, sizeof host), b = ct_alloc(ctx, 0, sizeof host);
  ct_upload_ints(ctx, 0, a, host, 16); /* 1 */
  ct_upload_ints(ctx, 0, b, host, 16); /* 2 */
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  cls_arg ib[] = {CLS_INOUT(b)};
  size_t g[1] = {16};
  CT_ERR2(cls_launch(ctx, 0, inc, 1, g, NULL, 1, ib), CLS_ELAUNCH, CLS_OK); /* 3: lost */
  cls_stream_sync(ctx, 0, NULL);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_int_eq(device_of(ctx, 0), 1 % n);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 1);
  int got[16];
  ct_download_ints(ctx, 0, a, got, 16); /* proven before the loss: kept */
  CT_EXPECT_INTS(got, (size_t)16, i, (int)i);
  expect_failure(ctx, 0, b, "lost with stream 0 generation 0");
  /* b's bytes are gone: written again, then the lost stage once more. */
  ct_upload_ints(ctx, 0, b, host, 16);
  ct_launch1(ctx, 0, inc, 16, 1, ib);
  ct_download_ints(ctx, 0, b, got, 16);
  CT_EXPECT_INTS(got, (size_t)16, i, (int)i + 1);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_RELOCATE=same: a fresh queue on the stream's own device; a
 * consumer on another stream is skipped on the lost output, and never
 * ordered after the retired queue (a hang would end in the timeout). */
START_TEST(lost_queue_relocates_on_the_same_device_and_consumers_are_skipped) {
  cls_context *ctx = lostctx("same", "lost:stream=1,nth=2");
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  int dev = device_of(ctx, 1);
  own_lease(ctx, 1, 2);
  cls_buffer a = ct_written(ctx, 1, 16, 5); /* 1 */
  int v = 9;
  cls_arg fa[] = {CLS_OUT(a), CLS_SCALAR(v)};
  size_t g[1] = {16};
  CT_ERR2(cls_launch(ctx, 1, fill, 1, g, NULL, 2, fa), CLS_ELAUNCH, CLS_OK); /* 2: lost */
  cls_arg ia[] = {CLS_INOUT(a)};
  CT_ERR(cls_launch(ctx, 2, inc, 1, g, NULL, 1, ia), CLS_ESKIPPED);
  CT_OK(cls_sync(ctx, NULL));
  ck_assert_uint_eq(ct_generation(ctx, 1), 1);
  ck_assert_int_eq(device_of(ctx, 1), dev);
  ck_assert_uint_eq(ct_stats(ctx, 1).relocations, 1);
  expect_failure(ctx, 2, a, "lost with stream 1 generation 0");
  ct_launch1(ctx, 1, fill, 16, 2, fa);
  ct_launch1(ctx, 2, inc, 16, 1, ia);
  ct_expect_ints(ctx, 2, a, 16, 10);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(relocate_and_lost_strings_are_checked) {
  static const char *bad_reloc[] = {"on", "Other", "same,other", "same "};
  for (size_t i = 0; i < sizeof bad_reloc / sizeof *bad_reloc; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .relocate = bad_reloc[i]};
    cls_context *c = NULL;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(cls_last_error_detail(), "CLS_RELOCATE"), "detail: %s",
                  cls_last_error_detail());
  }
  static const char *bad_fault[] = {"lost:times=2", "lost:nth=2,times=1", "lost:", "lost",
                                    "lost:stream=64", "lost:op=map"};
  for (size_t i = 0; i < sizeof bad_fault / sizeof *bad_fault; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .fault = bad_fault[i]};
    cls_context *c = NULL;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_ptr_null(c);
  }
  cls_context_destroy(lostctx("off", "lost:nth=4,status=CL_OUT_OF_RESOURCES"));
  cls_context_destroy(lostctx("same", "lost:op=upload,stream=1,nth=2;lost:kernel=k"));
}
END_TEST

int main(void) {
  /* These cases pin each failure found after the enqueue on its command
   * (F8, exact attribution); ranged attribution (F8a), the default where
   * the device allows it, has its own suite: tests/test-ranged.c. */
  setenv("CLS_PRECISE", "1", 0);
  /* Two PoCL devices of one platform; the other vendors ignore it. */
  setenv("POCL_DEVICES", "pthread pthread", 0);
  ct_require_device();
  Suite *s = suite_create("multi-device");
  CT_ADD(s, all_makes_one_context_over_every_device_of_the_platform);
  CT_ADD(s, device_list_names_devices_of_one_platform);
  CT_ADD(s, malformed_device_lists_are_refused_and_leave_nothing);
  CT_ADD(s, name_and_index_picks_a_device_of_that_platform);
  CT_ADD(s, spread_places_stream_i_on_device_i_mod_n);
  CT_ADD(s, first_places_every_stream_on_device_0);
  CT_ADD(s, explicit_place_before_the_first_command_wins);
  CT_ADD(s, place_after_the_first_command_is_refused);
  CT_ADD(s, cross_device_chain_keeps_order_and_counts_migrations);
  CT_ADD(s, buffers_of_one_page_written_on_two_devices_keep_their_bytes);
  CT_ADD(s, F6_failure_on_one_device_skips_consumer_on_the_other);
  CT_ADD(s, foreign_command_gets_the_queue_of_its_stream_s_device);
  CT_ADD(s, relocate_moves_the_stream_and_raises_its_generation);
  CT_ADD(s, relocate_naming_a_retired_generation_is_refused_estalegen);
  CT_ADD(s, work_in_flight_at_relocation_completes_and_keeps_its_bytes);
  CT_ADD(s, F7_retired_events_are_never_waited_on);
  CT_ADD(s, lost_queue_with_relocation_off_fails_every_later_command);
  CT_ADD(s, lost_queue_relocates_to_the_other_device_and_completed_work_survives);
  CT_ADD(s, lost_queue_relocates_on_the_same_device_and_consumers_are_skipped);
  CT_ADD(s, relocate_and_lost_strings_are_checked);
  return ct_run(s);
}
