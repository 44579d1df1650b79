/* Vendor quirk probes (README "Portability"): the answers are sane, agree
 * with what DESIGN.md measured on each vendor, are probed once per device
 * and process however many contexts or threads ask, and never take long.
 * Every test has a timeout: a probe that hung would fail it.
 *
 * Run by `make check` on PoCL and by `make check-vendors` on rusticl and
 * oclgrind too: the vendor is told by the platform name. */
#include "common.h"
#include "gate.h"

#include "device/quirks.h"

#include <clstream/stream.h>

#include <pthread.h>
#include <stdbool.h>

enum vendor { OTHER, POCL, RUSTICL, OCLGRIND };

static enum vendor vendor_of(const struct cls_device_info *d) {
  if (ct_icontains(d->platform_version, "pocl") || ct_icontains(d->platform_vendor, "pocl"))
    return POCL;
  if (ct_icontains(d->platform_name, "rusticl"))
    return RUSTICL;
  if (ct_icontains(d->platform_name, "oclgrind"))
    return OCLGRIND;
  return OTHER;
}

static struct cls_quirks quirks_of(cls_context *ctx) {
  struct cls_quirks q;
  memset(&q, 0x7f, sizeof q);
  q.version = CLS_QUIRKS_VERSION;
  CT_OK(cls_context_quirks(ctx, &q));
  ck_assert_uint_eq(q.version, CLS_QUIRKS_VERSION);
  return q;
}

static int is_answer(int v) { return v == 0 || v == 1; }

/* The behaviours, without the timing. */
static void assert_same_answers(const struct cls_quirks *a, const struct cls_quirks *b) {
  ck_assert_int_eq(a->probed, b->probed);
  ck_assert_int_eq(a->failed_callback, b->failed_callback);
  ck_assert_int_eq(a->dependent_fails, b->dependent_fails);
  ck_assert_int_eq(a->queue_poisoned, b->queue_poisoned);
  ck_assert_int_eq(a->finish_early, b->finish_early);
  ck_assert_int_eq(a->dependent_status, b->dependent_status);
}

/* ------------------------------------------------------------------ */

START_TEST(probe_answers_every_question_in_bounded_time) {
  cls_context *ctx = ct_context();
  ck_assert_uint_ge(cls__quirks_probes_run(), 1);
  struct cls_quirks q = quirks_of(ctx);
  ck_assert_int_eq(q.probed, 1);
  ck_assert_msg(is_answer(q.failed_callback), "failed_callback = %d", q.failed_callback);
  ck_assert_msg(is_answer(q.dependent_fails), "dependent_fails = %d", q.dependent_fails);
  ck_assert_msg(is_answer(q.queue_poisoned), "queue_poisoned = %d", q.queue_poisoned);
  ck_assert_msg(is_answer(q.finish_early), "finish_early = %d", q.finish_early);
  /* A failed dependent carries a negative status, and only then. */
  ck_assert(q.dependent_fails ? q.dependent_status < 0 : q.dependent_status == 0);
  /* Every wait of the probe is bounded by 2 s; it takes milliseconds. */
  ck_assert_msg(q.probe_ms >= 0 && q.probe_ms < 2500, "probe took %.1f ms", q.probe_ms);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(limits_are_the_device_s) {
  cls_context *ctx = ct_context();
  struct cls_device_info d = ct_context_info(ctx);
  struct cls_quirks q = quirks_of(ctx);
  ck_assert_int_eq(q.cl_version, d.cl_version);
  ck_assert_int_ge(q.cl_version, 120);
  ck_assert_uint_eq(q.max_alloc_size, d.max_alloc_size);
  ck_assert_uint_eq(q.max_work_group_size, d.max_work_group_size);
  /* Pages: 64 MiB at most, never over the maximum allocation, and on a
   * small device (oclgrind: 128 MiB) small enough for 32 streams. */
  ck_assert_uint_gt(q.page_size, 0);
  ck_assert_uint_le(q.page_size, (size_t)64 << 20);
  ck_assert_uint_le(q.page_size, d.max_alloc_size);
  if (d.global_mem_size >= (32ull << 20))
    ck_assert_uint_le((unsigned long long)q.page_size * 32, d.global_mem_size);
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(explicit_page_size_is_kept) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .page_size = (size_t)1 << 20};
  cls_context *ctx = ct_context_opts(&o);
  ck_assert_uint_eq(quirks_of(ctx).page_size, (size_t)1 << 20);
  cls_context_destroy(ctx);
}
END_TEST

/* DESIGN.md, "Facts measured on this machine": what each vendor does. */
START_TEST(answers_match_the_measured_facts) {
  cls_context *ctx = ct_context();
  struct cls_device_info d = ct_context_info(ctx);
  struct cls_quirks q = quirks_of(ctx);
  switch (vendor_of(&d)) {
  case POCL:
    /* Commands queued on a failed user event fail, so do the commands
     * behind them; no callback for a failed event. */
    ck_assert_int_eq(q.dependent_fails, 1);
    ck_assert_int_eq(q.queue_poisoned, 1);
    ck_assert_int_eq(q.failed_callback, 0);
    ck_assert_int_eq(q.finish_early, 0);
    break;
  case RUSTICL:
    /* The command behind a failed one runs; no callback.  finish_early is
     * a race there (clFinish returns at once, the worker may be quicker):
     * either answer is right. */
    ck_assert_int_eq(q.dependent_fails, 1);
    ck_assert_int_eq(q.queue_poisoned, 0);
    ck_assert_int_eq(q.failed_callback, 0);
    break;
  case OCLGRIND:
    /* The command behind a failed one runs; the callback comes; clFlush
     * runs the queue, so clFinish has nothing left to wait for. */
    ck_assert_int_eq(q.dependent_fails, 1);
    ck_assert_int_eq(q.queue_poisoned, 0);
    ck_assert_int_eq(q.failed_callback, 1);
    ck_assert_int_eq(q.finish_early, 0);
    ck_assert_int_eq(q.cl_version, 120);
    ck_assert_uint_eq(q.max_alloc_size, 128ull << 20);
    break;
  case OTHER:
    break; /* nothing measured: the answers only need to be answers */
  }
  cls_context_destroy(ctx);
}
END_TEST

START_TEST(second_context_on_the_device_probes_nothing) {
  cls_context *a = ct_context();
  unsigned before = cls__quirks_probes_run();
  ck_assert_uint_ge(before, 1);
  cls_context *b = ct_context();
  ck_assert_uint_eq(cls__quirks_probes_run(), before);
  struct cls_quirks qa = quirks_of(a), qb = quirks_of(b);
  assert_same_answers(&qa, &qb);
  cls_context_destroy(a);
  cls_context_destroy(b);
  /* Destroying the contexts keeps the answers: the device is the same. */
  cls_context *c = ct_context();
  ck_assert_uint_eq(cls__quirks_probes_run(), before);
  struct cls_quirks qc = quirks_of(c);
  assert_same_answers(&qa, &qc);
  cls_context_destroy(c);
}
END_TEST

enum { THREADS = 4 };
struct thread_arg {
  cls_context *ctx;
  int rc;
};

static void *create_one(void *p) {
  struct thread_arg *a = p;
  a->rc = cls_context_create(&a->ctx, NULL);
  return NULL;
}

START_TEST(contexts_created_at_once_share_one_probe) {
  unsigned before = cls__quirks_probes_run();
  pthread_t t[THREADS];
  struct thread_arg args[THREADS];
  memset(args, 0, sizeof args);
  for (int i = 0; i < THREADS; i++)
    ck_assert_int_eq(pthread_create(&t[i], NULL, create_one, &args[i]), 0);
  for (int i = 0; i < THREADS; i++)
    pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; i++)
    ck_assert_msg(args[i].rc == 0, "thread %d: %s", i, cls_err_name(args[i].rc));
  /* One probe at most (none when an earlier test of this process, run
   * without fork, probed already). */
  ck_assert_uint_le(cls__quirks_probes_run(), before + 1);
  ck_assert_uint_ge(cls__quirks_probes_run(), 1);
  struct cls_quirks q0 = quirks_of(args[0].ctx);
  for (int i = 1; i < THREADS; i++) {
    struct cls_quirks qi = quirks_of(args[i].ctx);
    assert_same_answers(&q0, &qi);
  }
  for (int i = 0; i < THREADS; i++)
    cls_context_destroy(args[i].ctx);
}
END_TEST

START_TEST(quirks_arguments_are_checked) {
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  CT_ERR(cls_context_quirks(NULL, &q), CLS_EINVAL);
  cls_context *ctx = ct_context();
  CT_ERR(cls_context_quirks(ctx, NULL), CLS_EINVAL);
  q.version = 0;
  CT_ERR(cls_context_quirks(ctx, &q), CLS_EVERSION);
  q.version = CLS_QUIRKS_VERSION + 1;
  CT_ERR(cls_context_quirks(ctx, &q), CLS_EVERSION);
  cls_context_destroy(ctx);
}
END_TEST

/* The probe leaves the device usable: its private queue is gone and the
 * context's own streams work, across streams too. */
START_TEST(work_after_the_probe_is_right) {
  enum { N = 256 };
  int got[N];
  cls_context *ctx = ct_context();
  cls_kernel *fill = ct_kernel(ctx, CT_FILL_SRC CT_INC_SRC, "fill_k");
  cls_buffer a = ct_alloc(ctx, 0, sizeof got), b = ct_alloc(ctx, 1, sizeof got);
  int v = 41;
  ct_launch1(ctx, 0, fill, N, 2, (cls_arg[]){CLS_OUT(a), CLS_SCALAR(v)});
  CT_OK(cls_copy(ctx, 1, a, 0, b, 0, sizeof got));
  ct_download_ints(ctx, 1, b, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, 41);
  cls_context_destroy(ctx);
}
END_TEST

/* oclgrind aborts the process on a 1 TiB clCreateBuffer; PoCL and rusticl
 * return CL_INVALID_BUFFER_SIZE.  clstream answers before OpenCL sees it,
 * the same on all three. */
START_TEST(terabyte_allocation_is_etoobig_everywhere) {
  cls_context *ctx = ct_context();
  struct cls_device_info d = ct_context_info(ctx);
  if (d.max_alloc_size < (1ull << 40)) {
    cls_buffer b;
    CT_ERR(cls_alloc(ctx, 0, (size_t)1 << 40, &b), CLS_ETOOBIG);
    ck_assert_uint_eq(b.bits, 0);
  }
  cls_context_destroy(ctx);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A real failure: a launch queued behind a user event the test fails  */
/* ------------------------------------------------------------------ */

/* Launches of gated_k wait on the gate's user event (tests/gate.h).  The
 * test fails the event after the launch is in and before anything is
 * flushed: the order that cannot hang (PoCL keeps a command enqueued on an
 * already-failed event queued forever; oclgrind runs a queue inside
 * clFlush). */

/* What a real failure after the enqueue reads like: the same report on
 * every vendor, except that a vendor which fails a dependent command with
 * a status of its own (PoCL: CL_DEVICE_NOT_FOUND) gets the quirk named. */
START_TEST(real_failure_report_names_the_quirk_where_it_shaped_it) {
  enum { N = 64 };
  struct gate gate = {.gated = "gated_k"};
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = "event",
                                  .factory = &gate_factory,
                                  .factory_data = &gate};
  cls_context *ctx = ct_context_opts(&o);
  struct cls_quirks q = quirks_of(ctx);
  cls_kernel *k = ct_kernel(ctx,
                            "kernel void gated_k(global const int *a, global int *b) {\n"
                            "  b[get_global_id(0)] = a[get_global_id(0)] + 1;\n"
                            "}\n",
                            "gated_k");
  int host[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cls_buffer a = ct_alloc(ctx, 0, sizeof host), b = ct_alloc(ctx, 0, sizeof host);
  ct_upload_ints(ctx, 0, a, host, N);
  ct_launch1(ctx, 0, k, N, 2, (cls_arg[]){CLS_IN(a), CLS_OUT(b)});
  ck_assert_uint_gt(gate.held, 0); /* the launch waits behind the gate */
  gate_set(&gate, CLS__QUIRK_PROBE_STATUS);
  CT_OK(cls_sync(ctx, NULL));

  cls_report *r = NULL;
  CT_ERR(cls_check(ctx, 1, &b, &r), CLS_ETAINTED);
  ck_assert_uint_eq(cls_report_failures(r), 1);
  struct cls_failure_info f;
  CT_OK(cls_report_failure(r, 0, &f));
  ck_assert_int_eq(f.status, CLS_ELAUNCH);
  ck_assert_str_eq(f.operation, "launch");
  ck_assert_str_eq(f.kernel, "gated_k");
  ck_assert_int_eq(f.async, 1);
  ck_assert_int_eq(f.cl_status, q.dependent_status);
  bool own_status = q.dependent_status != CLS__QUIRK_PROBE_STATUS;
  const char *text = cls_report_text(r);
  ck_assert_msg((strstr(text, "quirk dependent_fails") != NULL) == own_status,
                "dependent status %s: report %s the quirk:\n%s",
                cls_cl_status_name(q.dependent_status), own_status ? "lacks" : "names", text);
  cls_report_free(r);
  /* The input is intact, and the queue still works after the failure. */
  int got[N];
  ct_download_ints(ctx, 0, a, got, N);
  CT_EXPECT_INTS(got, (size_t)N, i, (int)i);
  cls_context_destroy(ctx);
  gate_release(&gate);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("quirks");
  CT_ADD(s, probe_answers_every_question_in_bounded_time);
  CT_ADD(s, limits_are_the_device_s);
  CT_ADD(s, explicit_page_size_is_kept);
  CT_ADD(s, answers_match_the_measured_facts);
  CT_ADD(s, second_context_on_the_device_probes_nothing);
  CT_ADD(s, contexts_created_at_once_share_one_probe);
  CT_ADD(s, quirks_arguments_are_checked);
  CT_ADD(s, work_after_the_probe_is_right);
  CT_ADD(s, terabyte_allocation_is_etoobig_everywhere);
  CT_ADD(s, real_failure_report_names_the_quirk_where_it_shaped_it);
  return ct_run(s);
}
