/* Recovery (docs/devices.md, "Recovery"): with relocation on, the command
 * a lost queue took is run again on the fresh queue, so the program sees
 * CLS_OK and the bytes of a run without the loss; bounded; past the
 * bound, or with recovery off, the loss is reported as before.
 *
 * The loss is fault injection's `lost:` (real loss is untested on every
 * vendor: docs/devices.md).  main() sets POCL_DEVICES="pthread pthread",
 * so CLS_RELOCATE=other moves a stream to the other device.
 *
 * The event driver meets a loss at the command's enqueue, in the call, and
 * replays that one command.  The scheduler driver meets it when a
 * deferred batch is handed to the queue, after the call returned: it
 * keeps the batch's tasks not handed over (several, of several streams
 * on a shared queue under interleave) and they run on the fresh queue,
 * so the replay count is the rest of the batch there, and a call returns
 * CLS_OK even past the bound (the read reports it).
 *
 * `lost:...,at=complete` makes the loss after the enqueue: the queue
 * accepts the commands and runs none of them, and a poll finds them lost
 * (the loss_after_enqueue_* cases): they are kept until proven complete
 * and run again in their order, under every driver alike. */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <clstream/stream.h>

#define N 64

#ifndef FALLBACK_ENQUEUE_SPEC
#define FALLBACK_ENQUEUE_SPEC \
  "lost:stream=0,op=launch,nth=3;enqueue:kernel=inc_k,nth=3,status=CL_MEM_OBJECT_ALLOCATION_FAILURE"
#endif
#ifndef FALLBACK_COMPLETE_SPEC
#define FALLBACK_COMPLETE_SPEC \
  "lost:stream=0,op=launch,nth=3,at=complete;complete:kernel=inc_k,nth=3,status=CL_OUT_OF_RESOURCES"
#endif

/* A kernel writing one value everywhere: a source of fresh bytes. */
#define SET_K_SRC "kernel void set_k(global int *out, int v) { out[get_global_id(0)] = v; }\n"

/* precise: the option's (0: $CLS_PRECISE, then the default). */
static cls_context *recctx_precise(const char *relocate, const char *recover, const char *fault,
                                   int precise) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .relocate = relocate,
                                  .recover = recover,
                                  .precise = precise,
                                  .fault = fault};
  return ct_context_opts(&o);
}
static cls_context *recctx(const char *relocate, const char *recover, const char *fault) {
  return recctx_precise(relocate, recover, fault, 0);
}

/* Recovery on, relocation to the same device; uploads on stream 1 fail at
 * completion, found late (a poll of stream 1 stops at one), and stream 1
 * is lost after the enqueue of its first launch of `lost_kernel`. */
static cls_context *held_upload_then_loss(const char *lost_kernel) {
  char fault[128];
  snprintf(fault, sizeof fault,
           "complete:op=upload,stream=1,hold=1000000;lost:stream=1,kernel=%s,nth=1,at=complete",
           lost_kernel);
  return recctx("same", "on", fault);
}

/* Whether the context's driver meets a loss in the call (the event
 * driver), not in a deferred batch. */
static bool at_call(cls_context *ctx) {
  return strcmp(cls_context_driver(ctx), "event") == 0;
}

/* Stream 0's replays: exactly `n` where the loss is met in the call (one
 * command each time), at least n where a batch is kept. */
static void expect_replays(cls_context *ctx, int stream, uint64_t n) {
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, stream, &st));
  if (at_call(ctx))
    ck_assert_uint_eq(st.replays, n);
  else
    ck_assert_uint_ge(st.replays, n);
}


/* The one failure b carries, read on `stream`: its message has `has` and
 * `also`, its OpenCL status is `st`. */
static void expect_lost_as(cls_context *ctx, int stream, cls_buffer b, const char *has,
                           const char *also, cl_int st) {
  int got[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, stream, b, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, has) && strstr(fi.message, also),
                "failure '%s' lacks '%s' or '%s'", fi.message, has, also);
  ck_assert_int_eq(fi.cl_status, st);
  cls_report_free(r);
}

/* The one failure b carries, read on `stream`, whose message has `has`
 * (and `also`, when not NULL). */
static void expect_lost(cls_context *ctx, int stream, cls_buffer b, const char *has,
                        const char *also) {
  int got[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, stream, b, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, has), "failure '%s' lacks '%s'", fi.message, has);
  ck_assert_msg(!also || strstr(fi.message, also), "failure '%s' lacks '%s'", fi.message, also);
  ck_assert_int_eq(fi.cl_status, CL_DEVICE_NOT_AVAILABLE);
  cls_report_free(r);
}

/* `n` launches of inc_k on b, on `stream`; under the event driver each
 * must return CLS_OK; under the scheduler the calls are not looked at. */
static void incs(cls_context *ctx, int stream, cls_kernel *inc, cls_buffer b, int n) {
  cls_arg ia[] = {CLS_INOUT(b)};
  size_t g[1] = {N};
  for (int i = 0; i < n; i++) {
    int rc = cls_launch(ctx, stream, inc, 1, g, NULL, 1, ia);
    ck_assert_msg(rc == CLS_OK, "launch %d: %s: %s", i, cls_err_name(rc),
                    cls_last_error_detail());
  }
}

static cls_buffer uploaded(cls_context *ctx, int stream) {
  int host[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cls_buffer b = ct_alloc(ctx, stream, sizeof host);
  ct_upload_ints(ctx, stream, b, host, N);
  return b;
}

/* A chain of ten launches whose fourth command (the third launch) meets a
 * lost queue: no recovery code in the program, every call CLS_OK, the
 * bytes of a run without the loss, one relocation, one replay. */
static void chain_case(const char *relocate) {
  cls_context *ctx = recctx(relocate, NULL, "lost:stream=0,nth=4");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0); /* 1 */
  incs(ctx, 0, inc, b, 10);        /* 2..11: the 4th command is lost */
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 1);
  expect_replays(ctx, 0, 1);
  cls_context_destroy(ctx);
}

START_TEST(loss_mid_chain_is_replayed_on_the_other_device_with_exact_bytes) {
  chain_case("other");
}
END_TEST

START_TEST(loss_mid_chain_is_replayed_on_the_same_device_with_exact_bytes) {
  chain_case("same");
}
END_TEST

/* A blocking download the lost queue refused runs again on the fresh
 * queue and returns the bytes. */
/* A launch with a global offset is run again at its offset: ten launches
 * over the middle half of b, the fourth command lost, at the enqueue and
 * after it.  The caller's offset array is gone by then (zeroed after each
 * call), so only the kept copy can say where. */
static void offset_case(const char *fault, uint64_t replays) {
  cls_context *ctx = recctx("other", NULL, fault);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0); /* 1 */
  cls_arg ia[] = {CLS_INOUT(b)};
  size_t g[1] = {N / 2};
  for (int i = 0; i < 10; i++) { /* 2..11 */
    size_t o[1] = {N / 4};
    int rc = cls_launch_offset(ctx, 0, inc, 1, o, g, NULL, 1, ia);
    ck_assert_msg(rc == CLS_OK, "launch %d: %s: %s", i, cls_err_name(rc),
                  cls_last_error_detail());
    o[0] = 0;
  }
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + (i >= N / 4 && i < 3 * N / 4 ? 10 : 0));
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 1);
  if (replays)
    ck_assert_uint_eq(ct_stats(ctx, 0).replays, replays);
  else
    expect_replays(ctx, 0, 1);
  cls_context_destroy(ctx);
}

START_TEST(loss_of_a_launch_with_a_global_offset_runs_it_again_at_its_offset) {
  offset_case("lost:stream=0,nth=4", 0);
}
END_TEST

/* After the enqueue: a late loss, run only where queues do not run inside
 * clFlush (CT_ADD_LATE, as the other late cases). */
START_TEST(loss_after_enqueue_of_a_launch_with_a_global_offset_runs_it_again_at_its_offset) {
  offset_case("lost:stream=0,nth=4,at=complete", 9); /* 4..11 and the download */
}
END_TEST

START_TEST(loss_at_a_download_is_replayed_and_the_download_returns_the_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,op=download,nth=1");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 3);
  int got[N];
  cls_report *r = NULL;
  /* Every driver enqueues a blocking download at the call: replayed. */
  int rc = cls_download(ctx, 0, b, 0, got, sizeof got, &r);
  ck_assert_msg(rc == CLS_OK, "download: %s: %s", cls_err_name(rc),
                r ? cls_report_text(r) : cls_last_error_detail());
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 3);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 1);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* Two losses in a row: the replay of the lost command is lost too (the
 * second fault fires at the next command of stream 0, the replay).  The
 * default bound (2) allows it: exact bytes, two relocations, two replays. */
START_TEST(loss_during_replay_counts_and_within_the_bound_still_recovers) {
  cls_context *ctx = recctx("other", "on", "lost:stream=0,nth=4;lost:stream=0,nth=4");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 6);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 6);
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 2);
  expect_replays(ctx, 0, 2);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_RECOVER=1 and two losses: the replay is lost too, and the bound
 * stops it: the old rule (the write set takes the loss, the call fails),
 * and the record says replay was tried and why it stopped. */
START_TEST(past_the_bound_the_loss_is_reported_and_says_replay_stopped) {
  cls_context *ctx = recctx("other", "1", "lost:stream=0,nth=4;lost:stream=0,nth=4");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 2); /* 2, 3 */
  cls_arg ia[] = {CLS_INOUT(b)};
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 0, inc, 1, g, NULL, 1, ia); /* 4: lost, replayed, lost again */
  if (at_call(ctx)) {
    ck_assert_int_eq(rc, CLS_ELAUNCH);
    ck_assert_msg(strstr(cls_last_error_detail(), "replay stopped"), "detail: %s",
                  cls_last_error_detail());
  } else { /* deferred: the sync hands the batch over */
    CT_OK(rc);
    cls_sync(ctx, NULL);
  }
  expect_replays(ctx, 0, 1);
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  expect_lost(ctx, 0, b, "lost with stream 0 generation 1", "replay stopped");
  /* The stream works on its fresh queue. */
  ct_expect_ints(ctx, 0, ct_written(ctx, 0, N, 7), N, 7);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_RECOVER=off: today's rule, unchanged: the command the loss took
 * fails with "lost with stream S generation G", nothing runs again. */
START_TEST(recovery_off_reports_the_loss_and_replays_nothing) {
  cls_context *ctx = recctx("other", "off", "lost:stream=0,nth=4");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 2);
  cls_arg ia[] = {CLS_INOUT(b)};
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 0, inc, 1, g, NULL, 1, ia);
  ck_assert_int_eq(rc, at_call(ctx) ? CLS_ELAUNCH : CLS_OK);
  cls_sync(ctx, NULL);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 0);
  int got[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, b, 0, got, sizeof got, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, "lost with stream 0 generation 0"), "%s", fi.message);
  ck_assert_msg(!strstr(fi.message, "replay"), "recovery off mentions replay: %s", fi.message);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* A reader on stream 1 ordered after the lost producer on stream 0 gets
 * the bytes of a run without the loss. */
START_TEST(reader_on_another_stream_gets_exact_bytes_after_the_replay) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  incs(ctx, 0, inc, a, 4); /* the 2nd launch is lost */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 1, copy, 1, g, NULL, 2, ca));
  int got[N];
  ct_download_ints(ctx, 1, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 4);
  expect_replays(ctx, 0, 1);
  cls_context_destroy(ctx);
}
END_TEST

/* The lost command is one that waits on another stream whose queue is
 * held (its last command is still queued, so the wait is made): under
 * scheduler:sequential it was enqueued at once on the producer's lent
 * event, and the loss keeps it (its wait waited out on the host) for
 * the fresh queue; under the event driver the core runs it again.  Either way the
 * reader's bytes are exact once the producer is let go. */
START_TEST(lost_command_waiting_on_another_stream_is_run_again_with_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=1,op=launch,nth=1");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  incs(ctx, 0, inc, a, 2);
  struct ct_hold h;
  ct_hold(ctx, 0, a, &h, 100); /* let go 100 ms on, from another thread */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 1, copy, 1, g, NULL, 2, ca)); /* waits on stream 0; lost */
  ct_hold_end(&h);
  int got[N];
  ct_download_ints(ctx, 1, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 2);
  ck_assert_uint_eq(ct_stats(ctx, 1).relocations, 1);
  expect_replays(ctx, 1, 1);
  cls_context_destroy(ctx);
  ct_hold_free(&h);
}
END_TEST

/* Two streams on one device: under scheduler:interleave they share one
 * queue, and its loss takes both; each stream's tasks not handed over are
 * kept and run on its own fresh queue, in its own order.  Elsewhere only
 * stream 0's queue is lost.  Both chains end with exact bytes. */
START_TEST(lost_shared_queue_replays_each_stream_in_its_own_order) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .placement = "first",
                                  .relocate = "other",
                                  .fault = "lost:stream=0,nth=4"};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 0), b = uploaded(ctx, 1);
  for (int i = 0; i < 10; i++) { /* interleaved calls, one batch each */
    incs(ctx, 0, inc, a, 1);
    incs(ctx, 1, inc, b, 1);
  }
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  ct_download_ints(ctx, 1, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  expect_replays(ctx, 0, 1);
  const char *sched = getenv("CLS_SCHEDULER");
  if (sched && strstr(sched, "interleave")) { /* the shared queue took stream 1 too */
    ck_assert_uint_ge(ct_stats(ctx, 1).replays, 1);
    ck_assert_uint_eq(ct_generation(ctx, 1), 1);
  } else {
    ck_assert_uint_eq(ct_stats(ctx, 1).replays, 0);
    ck_assert_uint_eq(ct_generation(ctx, 1), 0);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* Bad input: stale relocation requests from another thread while the
 * stream is relocated and its commands replayed are refused
 * (CLS_ESTALEGEN) and harm nothing. */
struct stale_arg {
  cls_context *ctx;
  atomic_int done;
  int refused, other;
};

static void *stale_requests(void *p) {
  struct stale_arg *a = p;
  uint64_t g = 0;
  while (!atomic_load(&a->done) && cls_stream_generation(a->ctx, 0, &g) == CLS_OK && g == 0)
    ;
  while (!atomic_load(&a->done)) {
    int rc = cls_stream_relocate(a->ctx, 0, 0, 0);
    if (rc == CLS_ESTALEGEN)
      a->refused++;
    else
      a->other++;
  }
  return NULL;
}

START_TEST(stale_relocation_during_replay_is_refused_and_the_replay_is_unharmed) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3;lost:stream=0,nth=60");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  struct stale_arg a = {.ctx = ctx};
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, stale_requests, &a), 0);
  incs(ctx, 0, inc, b, 100);
  cls_sync(ctx, NULL);
  atomic_store(&a.done, 1);
  pthread_join(t, NULL);
  ck_assert_int_eq(a.other, 0);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 100);
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  expect_replays(ctx, 0, 2);
  cls_context_destroy(ctx);
}
END_TEST

/* Bad input: the program frees the input of a replayed command at once
 * (its free waits, as for any reader in flight, also where the driver
 * kept the command, not enqueued, for the fresh queue), and frees the
 * output.  Under both attributions: with recovery on a context is exact
 * unless ranged is asked for (precise -1), and under ranged attribution a
 * scheduler driver met the loss only at the free's hand-over of the copy,
 * which released a's cl_mem while the copy was kept (model context
 * 0xf51a74436bb93321, 2026-12-06: a crash in PoCL, or bytes read from
 * another buffer). */
static void free_input_of_replayed_copy(int precise) {
  cls_context *ctx = recctx_precise("other", NULL, "lost:stream=0,nth=2", precise);
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0); /* 1 */
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca)); /* 2: lost, replayed */
  CT_OK(cls_free(ctx, a));
  /* First a buffer of another stream's pool, elsewhere: a driver that
   * defers kept the copy for the fresh queue (not enqueued anywhere), so
   * a's cl_mem must outlive the free until the copy ran; released at the
   * free, the runtime may hand its object to e (glibc's allocator gives
   * the chunk freed last first), and the copy would read e's bytes. */
  cls_buffer e = ct_written(ctx, 1, N, -7);
  /* The freed memory goes to the next allocation: the replay read it first. */
  cls_buffer d = ct_written(ctx, 0, N, -1);
  int got[N];
  ct_download_ints(ctx, 0, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i);
  ct_expect_ints(ctx, 0, d, N, -1);
  ct_expect_ints(ctx, 1, e, N, -7);
  CT_OK(cls_free(ctx, c));
  cls_context_destroy(ctx);
}

START_TEST(free_of_a_buffer_read_by_a_replayed_command_waits_for_it) {
  free_input_of_replayed_copy(0);
  free_input_of_replayed_copy(-1);
}
END_TEST

/* Bad input: the context destroyed while the replayed command may still
 * run: no hang (the test's timeout), nothing left (the sanitizer runs). */
START_TEST(context_destroyed_mid_replay_does_not_hang) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 2); /* the 2nd is lost and replayed */
  cls_context_destroy(ctx);
}
END_TEST

/* The cost of a relocation with replay: a blocking download the lost
 * queue refused returns once the stream moved and the download ran again
 * on the fresh queue, so its call's time is the time from the loss to the
 * first replayed command completing.  Printed beside a download without a
 * loss (medians of 10); the bound here only keeps it from hanging. */
static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

START_TEST(relocation_with_replay_cost_is_measured) {
  char spec[512] = "";
  for (int k = 1; k <= 10; k++) /* downloads 5, 11, 17, ...: each replayed once */
    snprintf(spec + strlen(spec), sizeof spec - strlen(spec), "%slost:stream=0,op=download,nth=%d",
             k > 1 ? ";" : "", 5 * k);
  cls_context *ctx = recctx("other", NULL, spec);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  uint64_t lost[10], clean[64];
  size_t nl = 0, nc = 0;
  int got[N];
  for (int i = 1; nl < 10 && i < 100; i++) {
    incs(ctx, 0, inc, b, 1);
    CT_OK(cls_stream_sync(ctx, 0, NULL));
    uint64_t before = ct_stats(ctx, 0).replays;
    uint64_t t0 = now_ns();
    ct_download_ints(ctx, 0, b, got, N);
    uint64_t t = now_ns() - t0;
    CT_EXPECT_INTS(got, (size_t)N, j, (int)j + i);
    if (ct_stats(ctx, 0).replays != before)
      lost[nl++] = t;
    else if (nc < 64)
      clean[nc++] = t;
  }
  ck_assert_uint_eq(nl, 10);
  qsort(lost, nl, sizeof *lost, cmp_u64);
  qsort(clean, nc, sizeof *clean, cmp_u64);
  fprintf(stderr,
          "recover cost (%s): a lost blocking download, relocated and replayed: median %.1f us "
          "(min %.1f, max %.1f); without a loss: median %.1f us\n",
          cls_context_driver(ctx), lost[nl / 2] / 1e3, lost[0] / 1e3, lost[nl - 1] / 1e3,
          clean[nc / 2] / 1e3);
  ck_assert_uint_lt(lost[nl / 2], 10000000000ull);
  cls_context_destroy(ctx);
}
END_TEST

/* The same for a loss found at completion: a launch the queue accepted
 * and lost (lost:...,at=complete), found by the sync that follows it; the
 * sync returns once the stream has moved and the launch, run again on the
 * fresh queue, has finished.  Its time against a sync of a launch that
 * was not lost. */
START_TEST(relocation_with_replay_at_completion_cost_is_measured) {
  char spec[768] = "";
  for (int k = 1; k <= 10; k++)
    snprintf(spec + strlen(spec), sizeof spec - strlen(spec),
             "%slost:stream=0,op=launch,nth=%d,at=complete", k > 1 ? ";" : "", 5 * k);
  cls_context *ctx = recctx("other", NULL, spec);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  CT_OK(cls_stream_sync(ctx, 0, NULL));
  uint64_t lost[10], clean[64];
  size_t nl = 0, nc = 0;
  int i = 0, got[N];
  while (nl < 10 && i < 100) {
    incs(ctx, 0, inc, b, 1);
    i++;
    uint64_t before = ct_stats(ctx, 0).replays;
    uint64_t t0 = now_ns();
    CT_OK(cls_stream_sync(ctx, 0, NULL));
    uint64_t t = now_ns() - t0;
    if (ct_stats(ctx, 0).replays != before)
      lost[nl++] = t;
    else if (nc < 64)
      clean[nc++] = t;
  }
  ck_assert_uint_eq(nl, 10);
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, j, (int)j + i); /* each launch ran once */
  qsort(lost, nl, sizeof *lost, cmp_u64);
  qsort(clean, nc, sizeof *clean, cmp_u64);
  fprintf(stderr,
          "recover cost (%s): a launch lost after its enqueue, found by a sync, relocated and "
          "replayed: median %.1f us (min %.1f, max %.1f); a sync without a loss: median %.1f us\n",
          cls_context_driver(ctx), lost[nl / 2] / 1e3, lost[0] / 1e3, lost[nl - 1] / 1e3,
          clean[nc / 2] / 1e3);
  ck_assert_uint_lt(lost[nl / 2], 10000000000ull);
  cls_context_destroy(ctx);
}
END_TEST

/* Lost after the enqueue (CLS_FAULT lost:...,at=complete): the queue
 * accepts the chain's commands from the 4th on and runs none of them; each
 * ends with CL_DEVICE_NOT_AVAILABLE, found at completion (F8).  Recovery
 * runs the eight again, in their order, on the fresh queue: an in-place
 * increment chain, so a command run twice or not at all gives other
 * bytes.  `sync`: the sync finds the loss, else the blocking download
 * (refused by the lost queue at its enqueue) does. */
static void late_chain_case(bool sync) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=4,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0); /* 1 */
  incs(ctx, 0, inc, b, 10);        /* 2..11: accepted, 4..11 never run */
  if (sync)
    CT_OK(cls_sync(ctx, NULL));
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 8 + !sync); /* + the download */
  cls_context_destroy(ctx);
}

START_TEST(loss_after_enqueue_mid_chain_found_by_a_sync_is_replayed_with_exact_bytes) {
  late_chain_case(true);
}
END_TEST

START_TEST(loss_after_enqueue_mid_chain_found_by_a_download_is_replayed_with_exact_bytes) {
  late_chain_case(false);
}
END_TEST

/* A copy on stream 1 waits on the chain's last launch, which the lost
 * queue accepted and never ran: it fails behind it without running (as
 * behind a real lost lease), and runs again once the lost commands have,
 * with the bytes of a run without the loss. */
START_TEST(loss_after_enqueue_with_a_reader_on_another_stream_gives_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  incs(ctx, 0, inc, a, 4); /* the 2nd launch on is accepted and never runs */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 1, copy, 1, g, NULL, 2, ca));
  int got[N];
  CT_OK(cls_sync(ctx, NULL));
  ct_download_ints(ctx, 1, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 4);
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 4);
  expect_replays(ctx, 0, 3);
  /* Its queue was not lost; a vendor that fails a command waiting on a
   * lost one with the lost status (rusticl) makes it look lost, and the
   * stream moves once, harmlessly. */
  ck_assert_uint_le(ct_generation(ctx, 1), 1);
  cls_context_destroy(ctx);
}
END_TEST

/* The same with the streams the other way round (found by tests/model):
 * the reader's stream (0) comes before the lost one (1) in cls_sync's
 * poll of every stream, so the sync waited for stream 0's queue first,
 * whose copy waits on a launch behind stream 1's gate, which only a poll
 * of stream 1 opened (src/factory/fault.c): it hung.  Now whatever waits
 * opens every gate first.  Recovery off: the loss is reported on both. */
START_TEST(loss_after_enqueue_with_a_reader_on_an_earlier_stream_does_not_hang) {
  cls_context *ctx = recctx("other", "off", "lost:stream=1,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 1, inc, a, 4); /* the 2nd launch on is accepted and never runs */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca));
  cls_sync(ctx, NULL);
  int got[N];
  CT_ERR(cls_download(ctx, 0, c, 0, got, sizeof got, NULL), CLS_ETAINTED);
  expect_lost(ctx, 1, a, "lost with stream 1 generation 0: ", NULL);
  ck_assert_uint_eq(ct_generation(ctx, 1), 1);
  cls_context_destroy(ctx);
}
END_TEST

/* PoCL 3.1 finishes a command twice -- an assertion
 * (`cq->command_count > 0`), or an event freed under a later broadcast --
 * when one of its dependencies fails it while another completes at the
 * same moment on a worker thread (fixed in PoCL 7.2).  Each round, a
 * reader on stream 1 waits on stream 0's launch behind the gate of a loss
 * after the enqueue, and, in order, on a slow kernel of its own queue;
 * the sync opens the gate while that kernel may be finishing.  It aborted
 * within a few rounds under PoCL until the fault factory made a command
 * going behind a gate wait for its other dependencies before its enqueue
 * (src/factory/fault.c, settle_deps).  One loss a round (relocation to a
 * fresh queue of the same device, recovery off), the slow kernel's
 * length drawn at random. */
#define RACE_ROUNDS 300
START_TEST(loss_after_enqueue_with_a_reader_behind_running_work_does_not_abort) {
  char spec[RACE_ROUNDS * 64];
  size_t o = 0;
  /* One entry a round: each fires once, at the first launch no earlier
   * entry took. */
  for (int k = 0; k < RACE_ROUNDS; k++)
    o += (size_t)snprintf(spec + o, sizeof spec - o, "%slost:stream=0,kernel=inc_k,at=complete",
                          k ? ";" : "");
  /* Exact attribution: ranged, the slow kernel (no event of its own)
   * would share the failed reader's range. */
  struct cls_context_options opt = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                    .device = "all",
                                    .relocate = "same",
                                    .recover = "off",
                                    .precise = 1,
                                    .fault = spec};
  cls_context *ctx = ct_context_opts(&opt);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_kernel *slow = ct_kernel(ctx, CT_SLOW_SRC, "slow_k");
  cls_buffer a = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer t = uploaded(ctx, 1);
  cls_buffer u = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  int host[N], got[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  size_t g[1] = {N};
  unsigned seed = 0x5eed;
  for (int r = 0; r < RACE_ROUNDS; r++) {
    ct_upload_ints(ctx, 0, a, host, N); /* fresh bytes: the launch is not skipped */
    int iters = (int)(rand_r(&seed) % 400);
    cls_arg sa[] = {CLS_IN(t), CLS_OUT(u), CLS_SCALAR(iters)};
    CT_OK(cls_launch(ctx, 1, slow, 1, g, NULL, 3, sa));
    incs(ctx, 0, inc, a, 1); /* accepted, never runs */
    cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
    int rc = cls_launch(ctx, 1, copy, 1, g, NULL, 2, ca);
    ck_assert_msg(rc == CLS_OK || rc == CLS_ELAUNCH || rc == CLS_ESKIPPED, "copy: %s",
                  cls_err_name(rc));
    /* The moment the gate opens, against the kernel's end. */
    struct timespec t0, t1;
    long spin_ns = (long)(rand_r(&seed) % 40000);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
      clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < spin_ns);
    cls_sync(ctx, NULL);
    rc = cls_download(ctx, 1, c, 0, got, sizeof got, NULL);
    ck_assert_msg(rc == CLS_ETAINTED, "round %d: the reader's output: %s", r, cls_err_name(rc));
    /* The slow kernel ran -- unless its stream shares the lost queue
     * (interleave on one device: rusticl), and is lost with it. */
    rc = cls_download(ctx, 1, u, 0, got, sizeof got, NULL);
    ck_assert_msg(rc == CLS_OK || rc == CLS_ETAINTED, "round %d: %s", r, cls_err_name(rc));
    if (rc == CLS_OK)
      ck_assert_int_eq(got[1], ct_slow_expect(1, iters, 1));
    else
      expect_lost(ctx, 1, u, "lost with stream 1 generation ", NULL);
  }
  ck_assert_uint_eq(ct_generation(ctx, 0), RACE_ROUNDS);
  cls_context_destroy(ctx);
}
END_TEST

/* Two queues lost after the enqueue, the second while it holds a reader
 * of the first one's gated output: before its first gated command the
 * fault factory waits for what that queue holds (src/factory/fault.c),
 * which waits behind the first queue's gate -- opened first, so nothing
 * hangs.  Recovery off: the reader's output and the first queue's carry
 * the losses. */
START_TEST(two_losses_after_enqueue_with_a_reader_between_do_not_hang) {
  cls_context *ctx = recctx("other", "off",
                            "lost:stream=1,nth=2,op=launch,at=complete;"
                            "lost:stream=0,nth=2,op=launch,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 1, inc, a, 2); /* the 2nd is accepted and never runs */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca)); /* waits behind stream 1's gate */
  incs(ctx, 0, inc, c, 1); /* stream 0's loss: its queue holds the copy */
  cls_sync(ctx, NULL);
  /* c: the reader failed behind stream 1's gate, then stream 0's lost
   * launch wrote it; a: stream 1's lost launch. */
  expect_lost(ctx, 0, c, "lost with stream ", NULL);
  expect_lost(ctx, 1, a, "lost with stream 1 generation 0: ", NULL);
  cls_context_destroy(ctx);
}
END_TEST

/* A blocking upload on stream 0 to a buffer a launch on stream 1 writes,
 * which the lost queue accepted and never ran: the upload waits for the
 * launch, and must not hang (it did: queued behind the gate).  The queue
 * refuses it behind the failed launch
 * (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST); that launch is over and
 * wrote nothing, so the upload is enqueued again without the wait and
 * succeeds (it failed with CLS_ECL before), as it would have had the
 * loss been known at the call: an accepted write clears (F4), and the
 * rest of the buffer holds what the launch never changed. */
START_TEST(loss_after_enqueue_then_a_blocking_transfer_on_another_stream_does_not_hang) {
  cls_context *ctx = recctx("other", "off", "lost:stream=1,nth=2,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 1);
  incs(ctx, 1, inc, a, 1); /* accepted, never runs */
  int host[4] = {1, 2, 3, 4};
  int rc = cls_upload(ctx, 0, a, 0, host, sizeof host);
  /* Where stream 0 shares the lost queue (interleave on one device:
   * rusticl, oclgrind), the upload meets the loss itself and the queue
   * refuses it (CL_DEVICE_NOT_AVAILABLE): the stream is at risk, as
   * without recovery.  Behind the failed launch it must succeed. */
  bool shared_loss = rc == CLS_ECL && cls_last_cl_status() == CL_DEVICE_NOT_AVAILABLE;
  ck_assert_msg(rc == CLS_OK || shared_loss, "upload: %s: %s", cls_err_name(rc),
                cls_last_error_detail());
  cls_sync(ctx, NULL);
  int got[N];
  if (!shared_loss) {
    ct_download_ints(ctx, 0, a, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, i < 4 ? 1 + (int)i : (int)i);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* The same loss, then a writer on stream 0 that does not wait for its
 * bytes: an asynchronous upload, a fill, a copy into the buffer, a launch
 * writing it whole (CLS_OUT).  Each is ordered after the lost launch (a
 * write after its write) and accepted: the queue learns of the loss only
 * when something waits, and then fails the writer behind it (PoCL with a
 * status of its own, CL_DEVICE_NOT_FOUND: quirk dependent_fails).
 * Recovery on: the writer runs again after the lost launch, and its
 * bytes are read back.  Recovery off: nothing runs again, so the write
 * set takes the loss (DESIGN "Recovery": the old rule), and the read
 * names the lost launch as the root cause and the writer in its chain as
 * skipped, not a failure of the writer's own (which named no root). */
enum late_writer { LW_UPLOAD_ASYNC, LW_FILL, LW_COPY, LW_LAUNCH };
static void writer_behind_loss(enum late_writer w, const char *recover) {
  static const char *const names[] = {"upload", "fill", "copy", "fill_k"};
  cls_context *ctx = recctx("other", recover, "lost:stream=1,nth=2,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer src = ct_alloc(ctx, 0, N * sizeof(int));
  /* Under interleave, streams of one device share its queue: stream 0's
   * writer is then on the lost queue itself. */
  int d0 = -1, d1 = -2;
  CT_OK(cls_stream_device(ctx, 0, &d0));
  CT_OK(cls_stream_device(ctx, 1, &d1));
  const char *sched = getenv("CLS_SCHEDULER");
  bool shared = d0 == d1 && sched && strstr(sched, "interleave");
  int sevens[N];
  for (int i = 0; i < N; i++)
    sevens[i] = 7;
  ct_upload_ints(ctx, 0, src, sevens, N);
  cls_sync(ctx, NULL);
  incs(ctx, 1, inc, a, 1); /* accepted, never runs */
  int rc = CLS_OK, seven = 7;
  size_t g[1] = {N};
  cls_arg fa[] = {CLS_OUT(a), CLS_SCALAR(seven)};
  switch (w) {
  case LW_UPLOAD_ASYNC:
    rc = cls_upload_async(ctx, 0, a, 0, sevens, sizeof sevens);
    break;
  case LW_FILL:
    rc = cls_fill(ctx, 0, a, 0, N * sizeof(int), &seven, sizeof seven);
    break;
  case LW_COPY:
    rc = cls_copy(ctx, 0, src, 0, a, 0, N * sizeof(int));
    break;
  case LW_LAUNCH:
    rc = cls_launch(ctx, 0, fill, 1, g, NULL, 2, fa);
    break;
  }
  /* Where stream 0 shares the lost queue (interleave on one device:
   * rusticl, oclgrind), the writer meets the loss itself. */
  bool shared_loss = rc == CLS_ECL && cls_last_cl_status() == CL_DEVICE_NOT_AVAILABLE;
  ck_assert_msg(rc == CLS_OK || shared_loss, "%s: %s: %s", names[w], cls_err_name(rc),
                cls_last_error_detail());
  cls_sync(ctx, NULL);
  int got[N];
  if (shared_loss) {
    /* nothing more to say: the writer's own enqueue failed */
  } else if (strcmp(recover, "on") == 0) {
    ct_download_ints(ctx, 0, a, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, 7);
  } else {
    cls_report *r = NULL;
    CT_ERR(cls_download(ctx, 0, a, 0, got, sizeof got, &r), CLS_ETAINTED);
    ck_assert_uint_eq(cls_report_failures(r), 1);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    if (shared && fi.stream == 0) { /* lost itself, on a queue that is not PoCL's */
      ck_assert_msg(strstr(fi.message, "lost with stream 0 generation 0: ") &&
                        strcmp(fi.operation, w == LW_LAUNCH ? "launch" : names[w]) == 0,
                    "%s: %s", fi.operation, fi.message);
      cls_report_free(r);
      cls_context_destroy(ctx);
      return;
    }
    ck_assert_msg(strstr(fi.message, "lost with stream 1 generation 0: ") &&
                      strcmp(fi.kernel, "inc_k") == 0 && fi.stream == 1 && fi.position == 2,
                  "root: %s on stream %d at %llu: %s", fi.kernel, fi.stream,
                  (unsigned long long)fi.position, fi.message);
    ck_assert_uint_eq(fi.nskips, 1);
    struct cls_skip_info si;
    CT_OK(cls_report_skip(r, 0, 0, &si));
    ck_assert_int_eq(si.kind, CLS_SKIP_SKIPPED);
    ck_assert_str_eq(si.kernel, names[w]);
    ck_assert_int_eq(si.stream, 0);
    ck_assert_uint_eq(si.count, 1);
    cls_report_free(r);
    /* The copy's source was only read: it keeps its bytes. */
    ct_download_ints(ctx, 0, src, got, N);
    CT_EXPECT_INTS(got, (size_t)N, i, 7);
  }
  cls_context_destroy(ctx);
}

/* Ranged attribution (recovery off): stream 1's copy of `a`, the output
 * of stream 0's launch lost after its enqueue, then two increments of the
 * copy, which ranged attribution enqueued without events.  Fault
 * injection's gate is a user event, and PoCL 3.1 aborted the process
 * failing them behind it ("PTHREAD ERROR in pocl_update_event_failed",
 * found by the model with CLS_MODEL_LATE=1 on fresh seeds): the gate now
 * makes every later command keep its event, as a foreign command's user
 * event does.  The read names the loss as the root and the three
 * commands as skipped on it (F5). */
START_TEST(loss_after_enqueue_without_recovery_commands_behind_it_in_a_range_name_it_as_root) {
  cls_context *ctx = recctx("other", "off", "lost:stream=0,nth=2,at=complete");
  int mode = CLS_ATTRIBUTION_EXACT;
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  if (mode != CLS_ATTRIBUTION_RANGED) { /* exact here (not PoCL): the case above covers it */
    cls_context_destroy(ctx);
    return;
  }
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 1, N * sizeof(int));
  incs(ctx, 0, inc, a, 1); /* accepted, lost */
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 1, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(c)});
  ck_assert_msg(rc == CLS_OK, "copy: %s: %s", cls_err_name(rc), cls_last_error_detail());
  incs(ctx, 1, inc, c, 2);
  cls_sync(ctx, NULL);
  int got[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 1, c, 0, got, sizeof got, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, "lost with stream 0 generation 0: ") && fi.stream == 0,
                "root: on stream %d: %s", fi.stream, fi.message);
  ck_assert_uint_eq(fi.skipped, 3);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* The same through a replayed capture (recovery off): stream 2's launch
 * on `a` is lost after its enqueue; a capture on stream 0 sets `a`, then
 * `b`, then `c`.  Replayed, its first launch waits for the lost one, and
 * fault injection's gate fails the three behind it.  The capture's plan
 * ran them without events, and PoCL 3.1 aborted the process failing them
 * (the model, CLS_MODEL_LATE=1, fresh seed 0x2771555d35f6): a context
 * whose faults lose queues after the enqueue now counts as one where a
 * user event may fail later, as after a foreign command, so the plan's
 * runs keep their events.  The read of `c` names the loss as the root. */
START_TEST(loss_after_enqueue_without_recovery_a_replay_behind_it_names_it_as_root) {
  cls_context *ctx = recctx("other", "off", "lost:stream=2,nth=2,at=complete");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_buffer a = ct_alloc(ctx, 2, N * sizeof(int)), b = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  int v = 5;
  size_t g[1] = {N};
  CT_OK(cls_fill(ctx, 2, a, 0, N * sizeof(int), &v, sizeof v));
  CT_OK(cls_launch(ctx, 2, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)}));
  cls_capture *cap = NULL;
  CT_OK(cls_capture_begin(ctx));
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)}));
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(v)}));
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(c), CLS_SCALAR(v)}));
  CT_OK(cls_capture_end(ctx, &cap));
  int rc = cls_replay(ctx, cap, 0, NULL);
  ck_assert_msg(rc == CLS_OK, "replay: %s: %s", cls_err_name(rc), cls_last_error_detail());
  cls_sync(ctx, NULL);
  int got[N];
  cls_report *r = NULL;
  rc = cls_download(ctx, 0, c, 0, got, sizeof got, &r);
  if (rc == CLS_OK) { /* the loss was found before the replay waited on it (F7) */
    CT_EXPECT_INTS(got, (size_t)N, i, v);
  } else {
    ck_assert_int_eq(rc, CLS_ETAINTED);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    /* Where streams 0 and 2 share the lost queue (interleave,
     * queues=2), the replay was lost itself. */
    ck_assert_msg(strstr(fi.message, "lost with stream ") && fi.cl_status == CL_DEVICE_NOT_AVAILABLE,
                  "root: on stream %d: %s", fi.stream, fi.message);
    cls_report_free(r);
  }
  cls_capture_destroy(cap);
  cls_context_destroy(ctx);
}
END_TEST

/* Recovery off: stream 2's launch is lost after its enqueue; stream 1's
 * launch reading its output fails behind it (PoCL: -1), and so, under
 * the scheduler, which hands both over together, does the blocking
 * download of `d` behind it on stream 1's queue, though nothing is
 * wrong with `d`.  The download returned CLS_ECL ("in a range of
 * commands one of which failed"); it now reads again behind that failure
 * and returns `d`'s bytes.  Found by the model (CLS_MODEL_LATE=1, fresh
 * seed 0xa71b52b77e26). */
START_TEST(loss_after_enqueue_without_recovery_a_read_queued_behind_it_reads_again) {
  cls_context *ctx = recctx("other", "off", "lost:stream=2,nth=1,at=complete");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = ct_alloc(ctx, 1, N * sizeof(int)), d = ct_alloc(ctx, 1, N * sizeof(int));
  int v = 6, w = 9, host[N];
  for (int i = 0; i < N; i++)
    host[i] = v;
  size_t g[1] = {N};
  ct_upload_ints(ctx, 1, d, host, N); /* blocking: known written, in no range */
  CT_OK(cls_launch(ctx, 2, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(w)}));
  int rc = cls_launch(ctx, 1, inc, 1, g, NULL, 1, (cls_arg[]){CLS_INOUT(a)});
  ck_assert_msg(rc == CLS_OK, "inc: %s: %s", cls_err_name(rc), cls_last_error_detail());
  int got[N];
  rc = cls_download(ctx, 1, d, 0, got, sizeof got, NULL);
  if (rc == CLS_ECL && cls_last_cl_status() == CL_DEVICE_NOT_AVAILABLE) {
    /* Stream 1 shares the lost queue (one device, one queue: rusticl
     * under scheduler:interleave): the read meets the loss itself. */
    cls_context_destroy(ctx);
    return;
  }
  ck_assert_msg(rc == CLS_OK, "download: %s: %s", cls_err_name(rc), cls_last_error_detail());
  CT_EXPECT_INTS(got, (size_t)N, i, v);
  CT_ERR(cls_check(ctx, 1, &a, NULL), CLS_ETAINTED); /* the loss, on what stream 1 wrote */
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(loss_after_enqueue_then_writers_on_another_stream_are_run_again) {
  writer_behind_loss(LW_UPLOAD_ASYNC, "on");
  writer_behind_loss(LW_FILL, "on");
  writer_behind_loss(LW_COPY, "on");
  writer_behind_loss(LW_LAUNCH, "on");
}
END_TEST

START_TEST(loss_after_enqueue_without_recovery_writers_queued_behind_it_name_it_as_root) {
  writer_behind_loss(LW_UPLOAD_ASYNC, "off");
  writer_behind_loss(LW_FILL, "off");
  writer_behind_loss(LW_COPY, "off");
  writer_behind_loss(LW_LAUNCH, "off");
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1, a fresh seed,
 * 0xea525d07bbe36a87): stream 1's launch on `a` is lost after its
 * enqueue; stream 0's increment of `a`, ordered after it, fails behind it
 * and runs again after it; but before that runs, a later launch on stream
 * 0 that writes `a` is skipped on a never-written input, so `a` carries
 * that failure.  The increment run again was skipped on it (F2 saw the
 * later record on its input), at a new position, and named in its chain;
 * the chain now holds the later launch only, and `a` keeps its failure. */
START_TEST(loss_after_enqueue_then_a_later_skip_is_not_seen_by_what_runs_again) {
  cls_context *ctx = recctx("other", "on", "lost:stream=1,nth=2,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer never = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 1, inc, a, 1); /* lost after its enqueue: runs again */
  cls_arg ia[] = {CLS_INOUT(a)};
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 0, inc, 1, g, NULL, 1, ia); /* fails behind it, runs again */
  ck_assert_msg(rc == CLS_OK, "increment: %s: %s", cls_err_name(rc), cls_last_error_detail());
  cls_arg ca[] = {CLS_IN(never), CLS_OUT(a)};
  rc = cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca);
  ck_assert_msg(rc == CLS_ESKIPPED || rc == CLS_OK, "copy: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &a, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(strstr(fi.message, "never written"), "root: %s", fi.message);
  ck_assert_uint_eq(fi.skipped, 1);
  struct cls_skip_info si;
  CT_OK(cls_report_skip(r, 0, 0, &si));
  ck_assert_str_eq(si.kernel, "copy_k");
  ck_assert_int_eq(si.stream, 0);
  ck_assert_uint_eq(si.position, 2);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1, a fresh seed,
 * 0xde375f49fca3): stream 1's increment of `a` is lost after its
 * enqueue; stream 2's copy of `a` into `c` fails behind it; then a copy
 * onto `a` on stream 0 is skipped (its source was never written), which
 * leaves a record on `a` and writes no bytes.  Run again, stream 2's copy
 * took that record, set aside so that F2 would not see it, for a later
 * command that ran and overwrote its input: it was not run again, and `c`
 * read "replay stopped".  Now `c` holds the copy of the increment. */
START_TEST(loss_after_enqueue_then_a_later_skip_on_an_input_does_not_stop_a_reader) {
  cls_context *ctx = recctx("other", "on", "lost:stream=1,nth=2,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer c = ct_alloc(ctx, 2, N * sizeof(int));
  cls_buffer never = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 1, inc, a, 1); /* lost after its enqueue: runs again */
  size_t g[1] = {N};
  int rc = cls_launch(ctx, 2, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(c)});
  ck_assert_msg(rc == CLS_OK, "copy: %s: %s", cls_err_name(rc), cls_last_error_detail());
  rc = cls_launch(ctx, 0, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(never), CLS_OUT(a)});
  ck_assert_msg(rc == CLS_ESKIPPED || rc == CLS_OK, "skip: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  int got[N];
  ct_download_ints(ctx, 2, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 1);
  CT_ERR(cls_check(ctx, 1, &a, NULL), CLS_ETAINTED); /* the skip's record stays */
  cls_context_destroy(ctx);
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1, a fresh seed,
 * 0x7cdb05b12bd7e05f): stream 0's launch is lost after its enqueue;
 * stream 1's launch (add_k, reading `b`) fails behind it, and so does the
 * fill of `b` after it on stream 1's queue; the blocking upload of one
 * element of `b` enqueued after those failures happened runs (PoCL runs
 * what is enqueued after a failure).  Run again after it, the fill
 * overwrote the upload's element: CLS_OK and the fill's bytes.  Now the
 * upload goes again behind what ran again (its caller's bytes are still
 * there), and add_k, whose input the upload overwrote, is not run again
 * on those bytes: its output takes the loss, with why. */
START_TEST(loss_after_enqueue_then_an_upload_behind_failed_writers_keeps_its_bytes) {
  static const char src[] =
      "kernel void set_k(global int *out, int v) { out[get_global_id(0)] = v; }\n"
      "kernel void add_k(global const int *a, global const int *b, global int *c) {\n"
      "  size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n";
  cls_context *ctx = recctx("other", "on", "lost:stream=0,nth=1,op=launch,at=complete");
  cls_kernel *set = ct_kernel(ctx, src, "set_k"), *add = ct_kernel(ctx, src, "add_k");
  cls_buffer b = ct_alloc(ctx, 0, N * sizeof(int)), c = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer p = ct_alloc(ctx, 1, N * sizeof(int));
  int first = 0x11111111, second = 0x22, v = 3, up = 0x7777;
  CT_OK(cls_fill(ctx, 2, b, 0, N * sizeof(int), &first, sizeof first));
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(p), CLS_SCALAR(v)}));
  int rc = cls_launch(ctx, 1, add, 1, g, NULL, 3, (cls_arg[]){CLS_IN(p), CLS_IN(b), CLS_OUT(c)});
  ck_assert_msg(rc == CLS_OK, "add: %s: %s", cls_err_name(rc), cls_last_error_detail());
  CT_OK(cls_fill(ctx, 1, b, 0, (N - 2) * sizeof(int), &second, 1));
  rc = cls_upload(ctx, 1, b, 4 * sizeof(int), &up, sizeof up);
  ck_assert_msg(rc == CLS_OK, "upload: %s: %s", cls_err_name(rc), cls_last_error_detail());
  int got[N];
  ct_download_ints(ctx, 2, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, i == 4 ? up : i < N - 2 ? 0x22222222 : first);
  /* add_k's output: its bytes if it ran before the upload (where its
   * stream shares the lost queue, it was lost itself and ran again before
   * the fill), else the loss, never what it computes from the upload. */
  cls_report *r = NULL;
  int rc2 = cls_download(ctx, 2, c, 0, got, sizeof got, &r);
  if (rc2 == CLS_OK) {
    CT_EXPECT_INTS(got, (size_t)N, i, v + first);
  } else {
    ck_assert_int_eq(rc2, CLS_ETAINTED);
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, 0, &fi));
    ck_assert_msg(strstr(fi.message, "replay stopped") && strstr(fi.message, "overwrote"),
                  "c: %s", fi.message);
    cls_report_free(r);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* Stream 2's fill of `b` shares the queue stream 0 loses where streams
 * share queues (scheduler:interleave, queues=2), and runs again from
 * there; stream 1's fill of `b` is ordered after it on another queue and
 * synced before the loss is found.  Whatever ran or was withdrawn, the
 * later fill's bytes are the ones read back (on rusticl it may have run:
 * before, stream 2's fill run again overwrote it; now it runs again
 * after, as a follower). */
START_TEST(loss_after_enqueue_then_a_writer_on_another_queue_keeps_its_bytes) {
  cls_context *ctx = recctx("other", "on", "lost:stream=0,nth=1,op=launch,at=complete");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_buffer b = ct_alloc(ctx, 0, N * sizeof(int)), p = ct_alloc(ctx, 1, N * sizeof(int));
  int first = 0x11111111, second = 0x22, v = 3;
  CT_OK(cls_fill(ctx, 2, b, 0, N * sizeof(int), &first, sizeof first));
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(p), CLS_SCALAR(v)}));
  CT_OK(cls_fill(ctx, 1, b, 0, (N - 2) * sizeof(int), &second, 1));
  cls_stream_sync(ctx, 1, NULL); /* it ran; stream 0's loss may be found later */
  cls_sync(ctx, NULL);
  int got[N];
  ct_download_ints(ctx, 1, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, i < N - 2 ? 0x22222222 : first);
  ct_download_ints(ctx, 1, p, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, v);
  cls_context_destroy(ctx);
}
END_TEST

/* Stream 0's launch is lost after its enqueue; stream 1's fill of what
 * it writes waits on it and fails behind it, and runs again after it;
 * then stream 1 increments a buffer only stream 1 ever used.  That
 * increment ran behind the failed fill, but it had nothing of another
 * stream to wait for, so it cannot have run early: it keeps its result,
 * once, where it was taken for a follower of the fill (it reads what it
 * wrote, so it could not run again: its buffer took the loss).  Found
 * by the model, CLS_MODEL_LATE=1, context 0xaa4c403baa40926b. */
START_TEST(loss_after_enqueue_then_a_command_behind_a_failed_one_on_its_own_buffer_keeps_it) {
  cls_context *ctx = recctx("same", "on", "lost:stream=0,nth=1,op=launch,at=complete");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer p = ct_alloc(ctx, 0, N * sizeof(int));
  int v = 5, pattern = 0x33333333;
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(p), CLS_SCALAR(v)}));
  CT_OK(cls_fill(ctx, 1, p, 0, (N / 2) * sizeof(int), &pattern, sizeof pattern));
  incs(ctx, 1, inc, a, 1);
  cls_sync(ctx, NULL);
  int got[N];
  ct_download_ints(ctx, 1, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, i + 1);
  ct_download_ints(ctx, 1, p, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, i < N / 2 ? pattern : v);
  cls_context_destroy(ctx);
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1, seed 0x8ebe727c7d85, context
 * 0x27debc283f27ab6e, under event and scheduler:sequential): stream 1's
 * set_k is lost after its enqueue, behind an upload on its queue whose
 * completion failure is held, so a poll of stream 1 finds neither yet.
 * inc_k on stream 0 waits on set_k and the device fails it behind it;
 * the sync of stream 0 finds that failure first, and it stands for now
 * (kept, marked "behind").  Three things went wrong after:
 *  - a copy of inc_k's output was skipped on that record at its call;
 *    the loss, found only later, ran set_k and inc_k again, but the skip
 *    had been returned.  Now a command meeting such a record first waits
 *    for every stream to learn the loss and runs the lost work again;
 *  - the upload's failure, found with the loss, was taken as what inc_k
 *    failed behind (they share `a`), though set_k overwrote `a` between
 *    them and inc_k waited for set_k alone;
 *  - run again, inc_k (reading what it writes) was skipped on its own
 *    record.
 * Each fails this test when undone.  CLS_OK, and the bytes of a run
 * without the loss. */
START_TEST(loss_after_enqueue_found_after_a_failure_behind_it_is_learned_before_a_skip) {
  cls_context *ctx = held_upload_then_loss("set_k");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  int part[4] = {1, 2, 3, 4}, v = 7;
  size_t g[1] = {N};
  /* Its completion failure is held: a poll of stream 1 stops at it. */
  CT_OK(cls_upload(ctx, 1, a, 0, part, sizeof part));
  CT_OK(cls_launch(ctx, 1, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)}));
  incs(ctx, 0, inc, a, 1); /* waits on set_k: failed behind it */
  cls_stream_sync(ctx, 0, NULL); /* finds inc_k failed, and not the loss */
  int rc = cls_launch(ctx, 0, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(c)});
  ck_assert_msg(rc == CLS_OK, "copy: %s: %s", cls_err_name(rc), cls_last_error_detail());
  int got[N];
  ct_download_ints(ctx, 0, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, v + 1);
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, v + 1);
  cls_context_destroy(ctx);
}
END_TEST

/* Found in review of the case above: the same held upload, then stream
 * 1's copy_k, which only reads `a`, is lost after its enqueue; set_k on
 * stream 0 overwrites `a` (ordered after that read) and fails behind
 * it, and inc_k behind set_k on its queue; both are found before the
 * loss.  Those failed behind a lost command's read were never run again
 * (only what a lost command writes, or its stream, was followed): `a`
 * read CLS_ETAINTED.  Now they run again after it, and `a` holds set_k's
 * value plus one: set_k's failure, passed on by inc_k, is not put back
 * on `a` after set_k ran again (inc_k runs again too).  And `x` carries
 * the upload's failure (the copy is not run again on `a` with set_k's
 * record hidden: untrusted_already).  Each fails this test when
 * undone. */
START_TEST(loss_after_enqueue_of_a_reader_runs_again_what_failed_behind_its_read) {
  cls_context *ctx = held_upload_then_loss("copy_k");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer x = ct_alloc(ctx, 1, N * sizeof(int));
  int host[N], v = 20;
  for (int i = 0; i < N; i++)
    host[i] = i;
  size_t g[1] = {N};
  /* Its completion failure is held (a poll of stream 1 stops at it), and
   * it stands: the copy reads what the failed upload wrote. */
  CT_OK(cls_upload(ctx, 1, a, 0, host, sizeof host));
  CT_OK(cls_launch(ctx, 1, copy, 1, g, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(x)}));
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)}));
  incs(ctx, 0, inc, a, 1);
  cls_stream_sync(ctx, 0, NULL); /* finds set_k and inc_k failed, not the loss */
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, v + 1);
  /* The copy read what the failed upload wrote: `x` carries the upload's
   * failure.  Run again, the copy would read `a` with set_k's later
   * record hidden and write clean bytes from the failed upload's (a
   * buffer holds one record): since the replay that found the upload
   * failed named the copy on x's record, it is not run again. */
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, x, 0, got, sizeof got, &r), CLS_ETAINTED);
  struct cls_failure_info f;
  CT_OK(cls_report_failure(r, 0, &f));
  ck_assert_msg(f.stream == 1 && f.position == 1 && strcmp(f.operation, "upload") == 0,
                "x's root: stream %d position %llu: %s", f.stream,
                (unsigned long long)f.position, f.message);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* Found in review of the case above: what a lost add_k read was the
 * output of inc_k, which failed behind another lost command and was
 * found first (its record, replayed, names add_k as run on untrusted
 * input on x); set_k then overwrote add_k's other input, failing behind
 * its read, so that record is hidden when add_k runs again.  inc_k runs
 * again before add_k, and gives its input back: add_k runs again too, and
 * x holds a + b (a record whose root recovery ran again does not stop it,
 * as a failure that stands does in the case above). */
START_TEST(loss_after_enqueue_a_reader_of_what_ran_again_runs_again_past_a_hidden_record) {
  cls_context *ctx = held_upload_then_loss("set_k");
  cls_kernel *set = ct_kernel(ctx, SET_K_SRC, "set_k");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *add = ct_kernel(ctx, CT_ADD_SRC, "add_k");
  cls_buffer a = ct_alloc(ctx, 0, N * sizeof(int));
  cls_buffer b = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer x = ct_alloc(ctx, 1, N * sizeof(int));
  cls_buffer z = ct_alloc(ctx, 1, N * sizeof(int));
  int host[N], v = 20, w = 50;
  for (int i = 0; i < N; i++)
    host[i] = i;
  size_t g[1] = {N};
  CT_OK(cls_upload(ctx, 0, a, 0, host, sizeof host));
  CT_OK(cls_sync(ctx, NULL));
  /* Its completion failure is held: a poll of stream 1 stops at it. */
  CT_OK(cls_upload(ctx, 1, z, 0, host, sizeof host));
  CT_OK(cls_launch(ctx, 1, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(b), CLS_SCALAR(v)}));
  incs(ctx, 0, inc, b, 1); /* fails behind the lost set_k */
  CT_OK(cls_launch(ctx, 1, add, 1, g, NULL, 3, (cls_arg[]){CLS_IN(a), CLS_IN(b), CLS_OUT(x)}));
  CT_OK(cls_launch(ctx, 0, set, 1, g, NULL, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(w)}));
  cls_stream_sync(ctx, 0, NULL); /* finds inc_k failed, not the loss */
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, w);
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, v + 1);
  ct_download_ints(ctx, 0, x, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + v + 1);
  cls_context_destroy(ctx);
}
END_TEST

/* Stream 1's second launch is accepted by a queue lost after its
 * enqueue and never runs; then a copy of its output on `stream` is
 * refused at its enqueue (an enqueue fault), in the call or after it
 * (the scheduler), or skipped where the loss was found first.  Recovery
 * off: the copy's output is not readable, and stream 1's carries the
 * loss.  Neither may hang. */
static void refused_copy_behind_loss(int stream) {
  char fault[160];
  snprintf(fault, sizeof fault,
           "lost:stream=1,nth=2,op=launch,at=complete;"
           "enqueue:kernel=copy_k,stream=%d,status=CL_OUT_OF_RESOURCES",
           stream);
  cls_context *ctx = recctx("other", "off", fault);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer c = ct_alloc(ctx, stream, N * sizeof(int));
  incs(ctx, 1, inc, a, 2);
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  int rc = cls_launch(ctx, stream, copy, 1, g, NULL, 2, ca);
  ck_assert_msg(rc == CLS_OK || rc == CLS_ELAUNCH || rc == CLS_ESKIPPED, "copy: %s",
                cls_err_name(rc));
  cls_sync(ctx, NULL);
  int got[N];
  CT_ERR(cls_download(ctx, 0, c, 0, got, sizeof got, NULL), CLS_ETAINTED);
  expect_lost(ctx, 0, a, "lost with stream 1 generation 0: ", NULL);
  cls_context_destroy(ctx);
}

/* Found by tests/model (CLS_MODEL_LATE=1 under scheduler:sequential,
 * queues=2): the copy on the lost queue itself.  The scheduler reports
 * an enqueue failure at once, after what the queue holds (F8 order); it
 * waited for that on a marker behind the factory's back, so fault
 * injection's gate (the commands the lost queue accepted and never ran)
 * stayed closed: it hung.  Now it is a waiting poll of the factory. */
START_TEST(loss_after_enqueue_then_an_enqueue_failure_on_that_queue_does_not_hang) {
  refused_copy_behind_loss(1);
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1, the event driver): the copy on
 * stream 0, waiting on the gated launch.  A refused command's waits are
 * waited out on the host, and fault injection's gate stayed closed then:
 * it hung.  The gates open before a refusal too. */
START_TEST(loss_after_enqueue_then_a_refused_reader_on_another_stream_does_not_hang) {
  refused_copy_behind_loss(0);
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1), shortened to these three ops:
 * with recovery on, a blocking upload on stream 0 to a buffer the lost
 * queue's accepted launch writes meets the failed launch before any poll
 * of stream 1 found the loss (CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
 * at its enqueue).  The polls that then find the loss run the launch
 * again, and the upload after it (it returned CLS_ECL before). */
START_TEST(loss_after_enqueue_then_a_blocking_transfer_on_another_stream_is_recovered) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=1,nth=2,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 1);
  incs(ctx, 1, inc, a, 1); /* accepted, never runs */
  int host[4] = {100, 101, 102, 103};
  CT_OK(cls_upload(ctx, 0, a, 0, host, sizeof host));
  int got[N];
  ct_download_ints(ctx, 1, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, i < 4 ? 100 + (int)i : (int)i + 1);
  cls_context_destroy(ctx);
}
END_TEST

/* The same with a blocking download on the other stream: it waits for
 * the launch the lost queue accepted and never ran; with recovery on it
 * gives the bytes of a run without the loss, off it fails with the
 * loss (CLS_ETAINTED). */
START_TEST(loss_after_enqueue_then_a_blocking_download_on_another_stream_is_recovered) {
  for (int on = 0; on < 2; on++) {
    cls_context *ctx = recctx("other", on ? NULL : "off", "lost:stream=1,nth=2,at=complete");
    cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
    cls_buffer a = uploaded(ctx, 1);
    incs(ctx, 1, inc, a, 1); /* accepted, never runs */
    int got[N];
    if (on) {
      ct_download_ints(ctx, 0, a, got, N);
      CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 1);
    } else {
      expect_lost(ctx, 0, a, "lost with stream 1 generation 0: ", NULL);
    }
    cls_context_destroy(ctx);
  }
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1 under
 * scheduler:sequential,queues=3): stream 2 is ordered after stream 1's
 * fill, behind stream 1's lost launch, through a launch of its own; its
 * blocking download of what the lost launch wrote then needs no wait of
 * its own, and its queue holds a command gated behind the loss.  It hung
 * (the fault factory opened the gates only for a transfer with a wait
 * list).  With recovery on the download gives the bytes of a run without
 * the loss; off, it fails with the loss. */
START_TEST(loss_after_enqueue_then_a_download_ordered_through_its_own_queue) {
  for (int on = 0; on < 2; on++) {
    cls_context *ctx = recctx("other", on ? NULL : "off", "lost:stream=1,nth=1,at=complete");
    cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
    cls_kernel *set = ct_kernel(ctx, CT_FILL_SRC, "fill_k");
    cls_buffer a = ct_alloc(ctx, 0, N * sizeof(int)), b = ct_alloc(ctx, 2, N * sizeof(int));
    int seven = 7;
    cls_arg sa[] = {CLS_OUT(a), CLS_SCALAR(seven)};
    size_t g[1] = {N};
    CT_OK(cls_launch(ctx, 1, set, 1, g, NULL, 2, sa)); /* accepted, never runs */
    int pat = 3;
    CT_OK(cls_fill(ctx, 1, b, 0, N * sizeof(int), &pat, sizeof pat));
    incs(ctx, 2, inc, b, 1); /* stream 2 after stream 1's fill */
    int got[N];
    if (on) {
      ct_download_ints(ctx, 2, a, got, N);
      CT_EXPECT_INTS(got, (size_t)N, i, 7);
      ct_download_ints(ctx, 2, b, got, N);
      CT_EXPECT_INTS(got, (size_t)N, i, 4);
    } else {
      expect_lost(ctx, 2, a, "lost with stream 1 generation 0: ", NULL);
    }
    cls_context_destroy(ctx);
  }
}
END_TEST

/* Found by tests/model (CLS_MODEL_LATE=1): with recovery on, the reader
 * on the earlier stream 0 fails behind the lost launch (-1, or
 * CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) and its failure is found
 * before stream 1's loss is (cls__poll_all polls stream 0 first).  The
 * streams with earlier commands are polled first now, so the loss is
 * found and the reader runs again after it (the read of c was
 * CLS_ETAINTED before). */
START_TEST(loss_after_enqueue_with_a_reader_on_an_earlier_stream_gives_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=1,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 1);
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 1, inc, a, 4);
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca));
  int got[N];
  CT_OK(cls_sync(ctx, NULL));
  ct_download_ints(ctx, 0, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 4);
  ct_download_ints(ctx, 1, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 4);
  cls_context_destroy(ctx);
}
END_TEST

/* The fresh queue is lost after its enqueue too (the second fault fires at
 * the first replayed command): within the default bound (2) the chain is
 * run again once more, on a third queue, with exact bytes. */
START_TEST(loss_after_enqueue_during_the_replay_counts_and_within_the_bound_recovers) {
  cls_context *ctx = recctx("other", "on",
                            "lost:stream=0,nth=4,at=complete;lost:stream=0,nth=4,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 6); /* 2..7: 4..7 lost, then lost again */
  CT_OK(cls_sync(ctx, NULL));
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 6);
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  ck_assert_uint_eq(ct_stats(ctx, 0).relocations, 2);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 8);
  cls_context_destroy(ctx);
}
END_TEST

/* CLS_RECOVER=1 and the same two losses: the second is past the bound, so
 * the old rule holds: the chain's buffer carries the loss, and the record
 * says that replay was tried and why it stopped. */
START_TEST(loss_after_enqueue_past_the_bound_is_reported_and_says_replay_stopped) {
  cls_context *ctx = recctx("other", "1",
                            "lost:stream=0,nth=4,at=complete;lost:stream=0,nth=4,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 6);
  cls_sync(ctx, NULL); /* finds both losses */
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 4);
  expect_lost(ctx, 0, b, "failed after its enqueue with CL_DEVICE_NOT_AVAILABLE",
              "replay stopped: run again 1 time, the bound CLS_RECOVER=1");
  /* The stream works on its fresh queue. */
  ct_expect_ints(ctx, 0, ct_written(ctx, 0, N, 7), N, 7);
  cls_context_destroy(ctx);
}
END_TEST

/* Recovery off: a loss after the enqueue is reported, nothing runs again,
 * and nothing hangs on the commands that never ran. */
START_TEST(loss_after_enqueue_with_recovery_off_is_reported_and_not_replayed) {
  cls_context *ctx = recctx("other", "off", "lost:stream=0,nth=4,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 10);
  cls_sync(ctx, NULL); /* finds the loss: the stream moves */
  /* Without recovery, attribution may be ranged (one of the range's
   * launches) or exact (the launch). */
  expect_lost(ctx, 0, b, "lost with stream 0 generation 0: ",
              "failed after its enqueue with CL_DEVICE_NOT_AVAILABLE");
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 0);
  cls_context_destroy(ctx);
}
END_TEST

/* The fallback: a command run again after a loss that then fails (not
 * lost: its inputs' bytes may have gone with the lost device's memory,
 * where a vendor would refuse it or fail it) is not run again: the old
 * rule holds, its write set takes the failure, and the record says
 * replay was tried and why it stopped.  At the enqueue (event driver:
 * the enqueue-time replay runs in the call) and at completion (a
 * replayed command of a loss found after the enqueue, every driver). */
START_TEST(fallback_a_command_failing_when_run_again_is_reported_and_says_so) {
  cls_context *ctx = recctx("other", NULL, FALLBACK_ENQUEUE_SPEC);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  cls_arg ia[] = {CLS_INOUT(b)};
  size_t g[1] = {N};
  for (int i = 0; i < 5; i++)
    cls_launch(ctx, 0, inc, 1, g, NULL, 1, ia);
  cls_sync(ctx, NULL);
  if (at_call(ctx)) {
    expect_lost_as(ctx, 0, b, "replay stopped: run again after a loss, it failed: ",
                   "CL_MEM_OBJECT_ALLOCATION_FAILURE", CL_MEM_OBJECT_ALLOCATION_FAILURE);
    expect_replays(ctx, 0, 1);
  }
  cls_context_destroy(ctx);
  ctx = recctx("other", NULL, FALLBACK_COMPLETE_SPEC);
  inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 6);
  cls_sync(ctx, NULL);
  expect_lost_as(ctx, 0, b, "replay stopped: run again after a loss, it failed: ",
                 "CL_OUT_OF_RESOURCES", CL_OUT_OF_RESOURCES);
  ck_assert_uint_ge(ct_stats(ctx, 0).replays, 1);
  cls_context_destroy(ctx);
}
END_TEST

/* A foreign command's callback: copies its first buffer into its second
 * on the queue it is given, and counts its calls. */
static cl_int copy_foreign(const struct cls_foreign_call *c, cl_event *last) {
  atomic_int *calls = c->data;
  atomic_fetch_add(calls, 1);
  return clEnqueueCopyBuffer(c->queue, c->buffers[0].mem, c->buffers[1].mem, c->buffers[0].offset,
                             c->buffers[1].offset, N * sizeof(int), 0, NULL, last);
}

/* A foreign command lost after its enqueue runs again too: its callback
 * is called again, with its data (valid until the stream is synced, as
 * cls_foreign says), on the fresh queue, after the chain it reads ran
 * again; its output has the bytes of a run without the loss. */
START_TEST(loss_after_enqueue_of_a_foreign_command_calls_it_again) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 0, inc, a, 3); /* the 2nd launch on never runs */
  static atomic_int calls;
  atomic_store(&calls, 0);
  cls_arg fa[] = {CLS_IN(a), CLS_OUT(c)};
  CT_OK(cls_foreign(ctx, 0, "copy", copy_foreign, &calls, 2, fa));
  CT_OK(cls_sync(ctx, NULL));
  int got[N];
  ct_download_ints(ctx, 0, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 3);
  ck_assert_int_eq(atomic_load(&calls), 2); /* once lost, once on the fresh queue */
  expect_replays(ctx, 0, 3);                /* the 2nd and 3rd launch, the copy */
  cls_context_destroy(ctx);
}
END_TEST

/* A command run again after a loss keeps a later command's record on
 * what it writes: here a copy of the buffer onto itself, refused at the
 * call (F12), after a fill the queue accepted and lost.  In program
 * order the refusal comes last, so the read fails with it even though the
 * launch ran again (found by tests/model with CLS_MODEL_LATE=1; the read
 * returned CLS_OK before). */
START_TEST(loss_after_enqueue_run_again_keeps_a_later_refusal_on_its_output) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=2,at=complete");
  cls_buffer a = uploaded(ctx, 0);
  int seven = 7; /* a fill writes without reading: it is not skipped on the refusal */
  CT_OK(cls_fill(ctx, 0, a, 0, N * sizeof(int), &seven, sizeof seven)); /* accepted, lost */
  ck_assert_int_lt(cls_copy(ctx, 0, a, 0, a, 4, 8 * sizeof(int)), 0); /* overlap: refused */
  cls_sync(ctx, NULL);
  expect_replays(ctx, 0, 1);
  int got[N];
  cls_report *r = NULL;
  CT_ERR(cls_download(ctx, 0, a, 0, got, sizeof got, &r), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r, 0, &fi));
  ck_assert_msg(!strstr(fi.message, "lost with"), "the refusal's record: %s", fi.message);
  cls_report_free(r);
  cls_context_destroy(ctx);
}
END_TEST

/* cls_check is a safe point too: once a poll found the chain lost after
 * its enqueue, the check runs it again before it answers (without a sync,
 * a command or a free in between), so it says what a read would. */
START_TEST(loss_after_enqueue_found_by_a_check_runs_again_before_it_answers) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=4,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 10);
  /* The first check's poll ends the lease; a later one finds the loss.
   * (A driver that defers hands the chain to its queue in a batch, at a
   * sync or a flush: no check finds it first there.) */
  for (int i = 0; at_call(ctx) && i < 500 && ct_stats(ctx, 0).replays == 0; i++) {
    CT_OK(cls_check(ctx, 1, &b, NULL));
    /* A vendor that runs nothing unflushed (rusticl) fails the gated
     * commands once flushed; the stream's queue of now (a check that
     * replayed has moved it). */
    cl_command_queue q = NULL;
    CT_OK(cls_stream_queue(ctx, 0, &q));
    clFlush(q);
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
  }
  if (at_call(ctx))
    ck_assert_uint_ge(ct_stats(ctx, 0).replays, 1);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, j, (int)j + 10);
  cls_context_destroy(ctx);
}
END_TEST

/* Recovery needs to know which commands a lost queue finished: with
 * relocation and recovery on, attribution is exact (an event per
 * command) unless CLS_PRECISE=0 asks for ranges, and then a loss found at
 * completion is reported, not replayed: the range's commands may have
 * run, and running them again would not give the bytes of a run without
 * the loss. */
START_TEST(recovery_makes_attribution_exact_and_ranges_are_not_replayed) {
  unsetenv("CLS_PRECISE"); /* the default's reason is the point */
  cls_context *ctx = recctx("same", NULL, NULL);
  int mode = -1;
  const char *why = NULL;
  CT_OK(cls_context_attribution(ctx, &mode, &why, NULL));
  ck_assert_int_eq(mode, CLS_ATTRIBUTION_EXACT);
  ck_assert_msg(strstr(why, "recovery"), "why: %s", why);
  cls_context_destroy(ctx);
  ctx = recctx("same", "off", NULL);
  CT_OK(cls_context_attribution(ctx, &mode, &why, NULL));
  ck_assert_msg(!strstr(why, "recovery"), "why: %s", why);
  cls_context_destroy(ctx);
  /* Ranges asked for: where the device gives them, the loss is reported. */
  setenv("CLS_PRECISE", "0", 1);
  ctx = recctx("other", NULL, "lost:stream=0,nth=4,at=complete");
  CT_OK(cls_context_attribution(ctx, &mode, NULL, NULL));
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 10);
  cls_sync(ctx, NULL);
  if (mode == CLS_ATTRIBUTION_RANGED) {
    expect_lost(ctx, 0, b, "lost with stream 0 generation 0: ",
                "failed after its enqueue with CL_DEVICE_NOT_AVAILABLE");
    ck_assert_uint_eq(ct_stats(ctx, 0).replays, 0);
  } else {
    int want[N], got[N];
    for (int i = 0; i < N; i++)
      want[i] = i + 10;
    ct_download_ints(ctx, 0, b, got, N);
    ck_assert_int_eq(memcmp(got, want, sizeof got), 0);
  }
  cls_context_destroy(ctx);
  unsetenv("CLS_PRECISE");
}
END_TEST

/* The program frees the chain's buffer before the loss is found: the
 * free waits, as for any in-flight user -- its wait finds the loss, the
 * chain and the copy it fed run again on the fresh queue -- and only then
 * frees, so the copy's output has the bytes of a run without the loss. */
START_TEST(loss_after_enqueue_then_a_free_of_the_input_waits_for_the_replay) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_kernel *copy = ct_kernel(ctx, CT_COPY_SRC, "copy_k");
  cls_buffer a = uploaded(ctx, 0);
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  incs(ctx, 0, inc, a, 3); /* the 2nd launch on never runs */
  cls_arg ca[] = {CLS_IN(a), CLS_OUT(c)};
  size_t g[1] = {N};
  CT_OK(cls_launch(ctx, 0, copy, 1, g, NULL, 2, ca));
  CT_OK(cls_free(ctx, a));
  int got[N];
  ct_download_ints(ctx, 0, c, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 3);
  expect_replays(ctx, 0, 3); /* the 2nd and 3rd launch, the copy */
  cls_context_destroy(ctx);
}
END_TEST

/* Two streams on one device, the queue lost after its enqueue: under
 * scheduler:interleave they share it, and both streams' accepted commands
 * never ran; each runs again in its own order (in submission order
 * across them), on a queue of its own.  Elsewhere only stream 0's queue
 * is lost.  Both chains end with exact bytes. */
START_TEST(loss_after_enqueue_of_a_shared_queue_replays_each_stream_in_its_order) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .placement = "first",
                                  .relocate = "other",
                                  .fault = "lost:stream=0,nth=4,at=complete"};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer a = uploaded(ctx, 0), b = uploaded(ctx, 1);
  for (int i = 0; i < 10; i++) {
    incs(ctx, 0, inc, a, 1);
    incs(ctx, 1, inc, b, 1);
  }
  CT_OK(cls_sync(ctx, NULL));
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  ct_download_ints(ctx, 1, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 10);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 8);
  const char *sched = getenv("CLS_SCHEDULER");
  if (sched && strstr(sched, "interleave")) { /* the shared queue took stream 1 too */
    ck_assert_uint_ge(ct_stats(ctx, 1).replays, 1);
    ck_assert_uint_eq(ct_generation(ctx, 1), 1);
  } else {
    ck_assert_uint_eq(ct_stats(ctx, 1).replays, 0);
    ck_assert_uint_eq(ct_generation(ctx, 1), 0);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* A context destroyed while its queue's loss after the enqueue is not
 * found yet, or found and not replayed yet: no hang, no leak (ASan). */
START_TEST(context_destroyed_with_a_loss_after_enqueue_pending_does_not_hang) {
  for (int found = 0; found < 2; found++) {
    cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
    cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
    cls_buffer b = uploaded(ctx, 0);
    incs(ctx, 0, inc, b, 4);
    if (found)
      CT_OK(cls_check(ctx, 1, &b, NULL)); /* found: marked, to run again at the next command */
    cls_context_destroy(ctx);
  }
}
END_TEST

/* Seen, not hidden: a loss after the enqueue shows in the trace as a
 * `lost` instant naming the command, then a `replay` instant for it. */
START_TEST(trace_shows_a_loss_after_enqueue_and_its_replay) {
  char path[512];
  ct_temp_file(path, sizeof path, "cls-recover-trace");
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .relocate = "other",
                                  .trace = path,
                                  .fault = "lost:stream=0,nth=2,at=complete"};
  cls_context *ctx = ct_context_opts(&o);
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 1);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 1);
  cls_context_destroy(ctx);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  const char *lost = strstr(text, "\"cat\":\"lost\"");
  ck_assert_msg(lost, "trace lacks the loss: %s", text);
  const char *replay = strstr(lost, "\"cat\":\"replay\"");
  ck_assert_msg(replay, "trace lacks the replay after the loss: %s", text);
  ck_assert_msg(strstr(lost, "after its enqueue"), "the loss's message: %s", lost);
}
END_TEST

/* A non-blocking download the lost queue accepted runs again too, after
 * the launch before it, into the same host memory (the caller's until the
 * sync, as OpenCL asks): the sync is clean and the host holds the bytes
 * of a run without the loss. */
START_TEST(loss_after_enqueue_of_an_async_download_is_replayed_with_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 2); /* the 2nd launch is accepted and never runs */
  int host[N];
  memset(host, 0xff, sizeof host);
  CT_OK(cls_download_async(ctx, 0, b, 0, host, sizeof host)); /* never runs either */
  cls_report *r = NULL;
  int rc = cls_sync(ctx, &r);
  ck_assert_msg(rc == CLS_OK && !r, "sync: %s: %s", cls_err_name(rc),
                r ? cls_report_text(r) : cls_last_error_detail());
  CT_EXPECT_INTS(host, (size_t)N, i, (int)i + 2);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 2);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 2);
  cls_context_destroy(ctx);
}
END_TEST

/* Past the bound (CLS_RECOVER=1, lost again when run again) the async
 * download is not given bytes it cannot vouch for: its sync reports the
 * loss and says that replay stopped. */
START_TEST(loss_after_enqueue_of_an_async_download_past_the_bound_is_reported_by_its_sync) {
  cls_context *ctx = recctx("other", "1",
                            "lost:stream=0,nth=3,at=complete;lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 2);
  int host[N];
  CT_OK(cls_download_async(ctx, 0, b, 0, host, sizeof host));
  cls_report *r = NULL;
  CT_ERR(cls_sync(ctx, &r), CLS_ETAINTED);
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(strstr(cls_report_text(r), "replay stopped: run again 1 time"), "%s",
                cls_report_text(r));
  cls_report_free(r);
  ck_assert_uint_eq(ct_generation(ctx, 0), 2);
  cls_context_destroy(ctx);
}
END_TEST

/* The same download on another stream, ordered after the lost launch: it
 * fails behind it (or is withdrawn before its queue gets it) and runs
 * again once the launch has, into the same host memory. */
START_TEST(loss_after_enqueue_with_an_async_download_on_another_stream_gives_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *inc = ct_kernel(ctx, CT_INC_SRC, "inc_k");
  cls_buffer b = uploaded(ctx, 0);
  incs(ctx, 0, inc, b, 3); /* the 2nd launch on is accepted and never runs */
  int host[N];
  memset(host, 0xff, sizeof host);
  CT_OK(cls_download_async(ctx, 1, b, 0, host, sizeof host));
  cls_report *r = NULL;
  int rc = cls_sync(ctx, &r);
  ck_assert_msg(rc == CLS_OK && !r, "sync: %s: %s", cls_err_name(rc),
                r ? cls_report_text(r) : cls_last_error_detail());
  CT_EXPECT_INTS(host, (size_t)N, i, (int)i + 3);
  /* Its queue was not lost; a vendor that fails a command waiting on a
   * lost one with the lost status (rusticl) makes it look lost, and the
   * stream moves once, harmlessly. */
  ck_assert_uint_le(ct_generation(ctx, 1), 1);
  cls_context_destroy(ctx);
}
END_TEST

/* Image transfers are kept as buffer ones are (origins, region and
 * pitches with them): an async image upload, a fill, a buffer-to-image,
 * an image copy, an image-to-buffer and an async image download, all
 * accepted by the lost queue and never run, run again in their order:
 * the sync is clean, the host and the buffer hold the bytes of a run
 * without the loss. */
START_TEST(loss_after_enqueue_of_image_transfers_is_replayed_with_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=2,at=complete");
  enum { W = 8, H = N / W };
  const struct cls_image_desc d = {.type = CLS_IMAGE_2D, .order = CL_R,
                                   .data_type = CL_UNSIGNED_INT32, .width = W, .height = H};
  size_t nformats = 0;
  CT_OK(cls_image_formats(ctx, 0, CLS_IMAGE_2D, NULL, 0, &nformats));
  ck_assert_msg(nformats > 0, "the device has no images");
  cls_image img, img2;
  CT_OK(cls_image_alloc(ctx, 0, &d, &img));
  CT_OK(cls_image_alloc(ctx, 0, &d, &img2));
  cls_buffer b = uploaded(ctx, 0); /* 1: runs */
  cls_buffer c = ct_alloc(ctx, 0, N * sizeof(int));
  unsigned src[N];
  for (int i = 0; i < N; i++)
    src[i] = 3u * (unsigned)i;
  /* 2..7: accepted, never run */
  CT_OK(cls_image_upload_async(ctx, 0, img, NULL, NULL, src, 0, 0));
  const unsigned colour[4] = {7, 0, 0, 0};
  const size_t o0[3] = {0, 0, 0}, quarter[3] = {W / 2, H / 2, 1};
  CT_OK(cls_image_fill(ctx, 0, img2, colour, o0, quarter));
  const size_t lower[3] = {0, H / 2, 0}, half[3] = {W, H / 2, 1};
  CT_OK(cls_buffer_to_image(ctx, 0, b, 0, img2, lower, half));
  const size_t right[3] = {W / 2, 0, 0};
  CT_OK(cls_image_copy(ctx, 0, img, right, img2, right, quarter));
  CT_OK(cls_image_to_buffer(ctx, 0, img2, NULL, NULL, c, 0));
  unsigned host[N];
  memset(host, 0xff, sizeof host);
  CT_OK(cls_image_download_async(ctx, 0, img2, NULL, NULL, host, 0, 0));
  cls_report *r = NULL;
  int rc = cls_sync(ctx, &r);
  ck_assert_msg(rc == CLS_OK && !r, "sync: %s: %s", cls_err_name(rc),
                r ? cls_report_text(r) : cls_last_error_detail());
  unsigned want[N];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      want[y * W + x] = y >= H / 2  ? (unsigned)((y - H / 2) * W + x)
                        : x < W / 2 ? 7u
                                    : 3u * (unsigned)(y * W + x);
  for (int i = 0; i < N; i++)
    ck_assert_msg(host[i] == want[i], "pixel %d: %u, want %u", i, host[i], want[i]);
  int got[N];
  ct_download_ints(ctx, 0, c, got, N);
  for (int i = 0; i < N; i++)
    ck_assert_msg((unsigned)got[i] == want[i], "buffer %d: %d, want %u", i, got[i], want[i]);
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 6);
  cls_context_destroy(ctx);
}
END_TEST

/* A launch whose argument values pass the inline bytes an entry keeps
 * (CLS__KEEP_ARG_BYTES, 512) keeps them in the overflow pool: a chain of
 * twelve launches, each with its own nine int16 values (576 bytes, and a
 * buffer; vectors rather than one large struct, which llvmpipe under
 * rusticl crashes on), the 2nd on accepted and never run, runs again
 * with each launch's own values (the pool grows past its first 4 KiB,
 * and again as the replayed launches are kept). */
#define BIGN 9
static const char BIG_SRC[] =
    "__kernel void addbig_k(__global int *b, int16 a0, int16 a1, int16 a2, int16 a3, int16 a4,\n"
    "                       int16 a5, int16 a6, int16 a7, int16 a8) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] += a0.s0 + a1.s1 + a2.s2 + a3.s3 + a4.s4 + a5.s5 + a6.s6 + a7.s7 + a8.s8;\n"
    "}\n";

START_TEST(loss_after_enqueue_of_launches_with_large_arguments_is_replayed_with_exact_bytes) {
  cls_context *ctx = recctx("other", NULL, "lost:stream=0,nth=3,at=complete");
  cls_kernel *add = ct_kernel(ctx, BIG_SRC, "addbig_k");
  cls_buffer b = uploaded(ctx, 0); /* 1 */
  size_t g[1] = {N};
  for (int k = 0; k < 12; k++) { /* 2..13: 3..13 accepted, never run */
    cl_int16 v[BIGN];
    for (int j = 0; j < BIGN; j++)
      for (int l = 0; l < 16; l++)
        v[j].s[l] = (k + 1) * (j + 1);
    cls_arg a[1 + BIGN] = {CLS_INOUT(b)};
    for (int j = 0; j < BIGN; j++)
      a[1 + j] = (cls_arg)CLS_SCALAR(v[j]);
    CT_OK(cls_launch(ctx, 0, add, 1, g, NULL, 1 + BIGN, a));
  }
  cls_report *r = NULL;
  int rc = cls_sync(ctx, &r);
  ck_assert_msg(rc == CLS_OK && !r, "sync: %s: %s", cls_err_name(rc),
                r ? cls_report_text(r) : cls_last_error_detail());
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i + 78 * 45); /* (1 + ... + 12)(1 + ... + 9) */
  ck_assert_uint_eq(ct_generation(ctx, 0), 1);
  ck_assert_uint_eq(ct_stats(ctx, 0).replays, 11);
  cls_context_destroy(ctx);
}
END_TEST

/* The fault's grammar: at=enqueue or at=complete, for lost faults only. */
START_TEST(lost_fault_at_is_checked) {
  static const char *bad[] = {"lost:stream=0,at=later", "complete:stream=0,at=complete",
                              "lost:stream=0,at=complete,times=2", "lost:stream=0,at=",
                              "lost:stream=0,at=complete,at=enqueue"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = bad[i]};
    cls_context *c = NULL;
    ck_assert_msg(cls_context_create(&c, &o) == CLS_ECONFIG, "%s accepted", bad[i]);
    ck_assert_ptr_null(c);
  }
  cls_context_destroy(recctx("same", NULL, "lost:stream=0,at=enqueue"));
  cls_context_destroy(recctx("same", NULL, "lost:stream=1,op=launch,nth=2,at=complete"));
}
END_TEST

/* Seen, not hidden: the trace shows the loss, the relocation's replay
 * and the replayed command on the fresh queue (a download: replayed under
 * every driver). */
START_TEST(trace_shows_the_loss_and_the_replayed_command) {
  char path[512];
  ct_temp_file(path, sizeof path, "cls-recover-trace");
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .device = "all",
                                  .relocate = "other",
                                  .trace = path,
                                  .fault = "lost:stream=0,op=download,nth=1"};
  cls_context *ctx = ct_context_opts(&o);
  cls_buffer b = uploaded(ctx, 0);
  int got[N];
  ct_download_ints(ctx, 0, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i);
  cls_context_destroy(ctx);
  FILE *f = fopen(path, "r");
  ck_assert_ptr_nonnull(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = 0;
  fclose(f);
  unlink(path);
  const char *lost = strstr(text, "\"cat\":\"lost\"");
  const char *replay = strstr(text, "\"cat\":\"replay\"");
  ck_assert_msg(lost && replay && lost < replay, "trace lacks the loss or the replay: %s", text);
  ck_assert_msg(strstr(lost, "lost with stream 0 generation 0"), "the loss's message: %s", lost);
  /* The replayed download is the trace's download event, after both. */
  ck_assert_msg(strstr(replay, "\"name\":\"download\""), "no download after the replay: %s",
                replay);
}
END_TEST

/* CLS_RECOVER's grammar: off, on or a bound 1..1000; else CLS_ECONFIG. */
START_TEST(recover_setting_is_checked) {
  static const char *bad[] = {"0", "On", "on ", "1001", "-1", "2x", "yes"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .recover = bad[i]};
    cls_context *c = NULL;
    CT_ERR(cls_context_create(&c, &o), CLS_ECONFIG);
    ck_assert_ptr_null(c);
    ck_assert_msg(strstr(cls_last_error_detail(), "CLS_RECOVER"), "detail: %s",
                  cls_last_error_detail());
  }
  static const char *good[] = {"off", "on", "1", "1000"};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++)
    cls_context_destroy(recctx("same", good[i], NULL));
  /* The environment, when the option says nothing. */
  setenv("CLS_RECOVER", "sometimes", 1);
  cls_context *c = NULL;
  CT_ERR(cls_context_create(&c, NULL), CLS_ECONFIG);
  unsetenv("CLS_RECOVER");
}
END_TEST

/* Whether the platform runs a queue inside clFlush on the calling thread
 * (oclgrind): then a command held behind fault injection's gate (a user
 * event, lost:...,at=complete) is waited for there for ever, so the
 * cases of a loss after the enqueue do not run on it (docs/portability.md). */
static int oclgrind_probe(void) {
  struct cls_device_info d[8];
  size_t n = 0;
  if (cls_device_list(d, 8, &n) != CLS_OK)
    return 0;
  for (size_t i = 0; i < n && i < 8; i++)
    if (strstr(d[i].platform_name, "Oclgrind"))
      return 1;
  return 0;
}
static bool runs_queues_in_flush(void) {
  return ct_probe_in_child(oclgrind_probe) == 1; /* not in this process: see there */
}
#define CT_ADD_LATE(suite, fn)                                                 \
  do {                                                                         \
    if (late)                                                                  \
      CT_ADD(suite, fn);                                                       \
  } while (0)

int main(void) {
  bool late = !runs_queues_in_flush();
  if (!late)
    fprintf(stderr, "test-recover: this platform runs queues inside clFlush: the losses after the enqueue are not run\n");
  /* Two PoCL devices of one platform; the other vendors ignore it. */
  setenv("POCL_DEVICES", "pthread pthread", 0);
  unsetenv("CLS_RECOVER");
  ct_require_device();
  Suite *s = suite_create("recover");
  CT_ADD(s, loss_mid_chain_is_replayed_on_the_other_device_with_exact_bytes);
  CT_ADD(s, loss_mid_chain_is_replayed_on_the_same_device_with_exact_bytes);
  CT_ADD(s, loss_of_a_launch_with_a_global_offset_runs_it_again_at_its_offset);
  CT_ADD_LATE(s, loss_after_enqueue_of_a_launch_with_a_global_offset_runs_it_again_at_its_offset);
  CT_ADD(s, loss_at_a_download_is_replayed_and_the_download_returns_the_bytes);
  CT_ADD(s, loss_during_replay_counts_and_within_the_bound_still_recovers);
  CT_ADD(s, past_the_bound_the_loss_is_reported_and_says_replay_stopped);
  CT_ADD(s, recovery_off_reports_the_loss_and_replays_nothing);
  CT_ADD(s, reader_on_another_stream_gets_exact_bytes_after_the_replay);
  CT_ADD(s, lost_command_waiting_on_another_stream_is_run_again_with_exact_bytes);
  CT_ADD(s, lost_shared_queue_replays_each_stream_in_its_own_order);
  CT_ADD(s, stale_relocation_during_replay_is_refused_and_the_replay_is_unharmed);
  CT_ADD(s, free_of_a_buffer_read_by_a_replayed_command_waits_for_it);
  CT_ADD(s, context_destroyed_mid_replay_does_not_hang);
  CT_ADD(s, trace_shows_the_loss_and_the_replayed_command);
  CT_ADD(s, recover_setting_is_checked);
  CT_ADD_LATE(s, loss_after_enqueue_mid_chain_found_by_a_sync_is_replayed_with_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_mid_chain_found_by_a_download_is_replayed_with_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_with_a_reader_on_another_stream_gives_exact_bytes);
  /* Found by tests/model with losses after the enqueue (CLS_MODEL_LATE=1). */
  CT_ADD_LATE(s, loss_after_enqueue_with_a_reader_on_an_earlier_stream_gives_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_blocking_transfer_on_another_stream_is_recovered);
  CT_ADD_LATE(s, loss_after_enqueue_run_again_keeps_a_later_refusal_on_its_output);
  /* Recovery off, the same two.  PoCL 3.1 aborted in the first in most
   * runs (pocl_lock_events_inorder: a gated command failed by the gate
   * while its queue's previous command completed) until the fault
   * factory settled the queue before its gate (src/factory/fault.c). */
  CT_ADD_LATE(s, loss_after_enqueue_with_a_reader_on_an_earlier_stream_does_not_hang);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_blocking_transfer_on_another_stream_does_not_hang);
  CT_ADD_LATE(s, loss_after_enqueue_then_an_enqueue_failure_on_that_queue_does_not_hang);
  CT_ADD_LATE(s, loss_after_enqueue_then_writers_on_another_stream_are_run_again);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_later_skip_is_not_seen_by_what_runs_again);
  CT_ADD_LATE(s, loss_after_enqueue_then_an_upload_behind_failed_writers_keeps_its_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_writer_on_another_queue_keeps_its_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_command_behind_a_failed_one_on_its_own_buffer_keeps_it);
  CT_ADD_LATE(s, loss_after_enqueue_found_after_a_failure_behind_it_is_learned_before_a_skip);
  CT_ADD_LATE(s, loss_after_enqueue_of_a_reader_runs_again_what_failed_behind_its_read);
  CT_ADD_LATE(s, loss_after_enqueue_a_reader_of_what_ran_again_runs_again_past_a_hidden_record);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_later_skip_on_an_input_does_not_stop_a_reader);
  CT_ADD_LATE(s, loss_after_enqueue_without_recovery_writers_queued_behind_it_name_it_as_root);
  CT_ADD_LATE(s, loss_after_enqueue_without_recovery_commands_behind_it_in_a_range_name_it_as_root);
  CT_ADD_LATE(s, loss_after_enqueue_without_recovery_a_replay_behind_it_names_it_as_root);
  CT_ADD_LATE(s, loss_after_enqueue_without_recovery_a_read_queued_behind_it_reads_again);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_refused_reader_on_another_stream_does_not_hang);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_blocking_download_on_another_stream_is_recovered);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_download_ordered_through_its_own_queue);
  CT_ADD_LATE(s, two_losses_after_enqueue_with_a_reader_between_do_not_hang);
  CT_ADD_LATE(s, loss_after_enqueue_with_a_reader_behind_running_work_does_not_abort);
  CT_ADD_LATE(s, loss_after_enqueue_during_the_replay_counts_and_within_the_bound_recovers);
  CT_ADD_LATE(s, loss_after_enqueue_past_the_bound_is_reported_and_says_replay_stopped);
  CT_ADD_LATE(s, loss_after_enqueue_with_recovery_off_is_reported_and_not_replayed);
  CT_ADD_LATE(s, fallback_a_command_failing_when_run_again_is_reported_and_says_so);
  CT_ADD_LATE(s, recovery_makes_attribution_exact_and_ranges_are_not_replayed);
  CT_ADD_LATE(s, loss_after_enqueue_found_by_a_check_runs_again_before_it_answers);
  CT_ADD_LATE(s, loss_after_enqueue_of_a_foreign_command_calls_it_again);
  CT_ADD_LATE(s, loss_after_enqueue_then_a_free_of_the_input_waits_for_the_replay);
  CT_ADD_LATE(s, loss_after_enqueue_of_a_shared_queue_replays_each_stream_in_its_order);
  CT_ADD_LATE(s, context_destroyed_with_a_loss_after_enqueue_pending_does_not_hang);
  CT_ADD_LATE(s, trace_shows_a_loss_after_enqueue_and_its_replay);
  CT_ADD_LATE(s, loss_after_enqueue_of_an_async_download_is_replayed_with_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_with_an_async_download_on_another_stream_gives_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_of_an_async_download_past_the_bound_is_reported_by_its_sync);
  CT_ADD_LATE(s, loss_after_enqueue_of_image_transfers_is_replayed_with_exact_bytes);
  CT_ADD_LATE(s, loss_after_enqueue_of_launches_with_large_arguments_is_replayed_with_exact_bytes);
  CT_ADD(s, lost_fault_at_is_checked);
  CT_ADD(s, relocation_with_replay_cost_is_measured);
  CT_ADD_LATE(s, relocation_with_replay_at_completion_cost_is_measured);
  return ct_run(s);
}
