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
#include <stddef.h>

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

/* ------------------------------------------------------------------ */
/* wg_above_kernel_max: never stricter than the vendor                 */
/* ------------------------------------------------------------------ */

#define IDS_SRC                                                        \
  "kernel void ids_k(global int *out) {\n"                             \
  "  out[get_global_id(0)] = (int)get_global_id(0);\n"                 \
  "}\n"

static size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

/* The largest 1D work-group the device takes. */
static size_t device_group(const struct cls_device_info *d) {
  return min_size(d->max_work_group_size, d->max_work_item_sizes[0]);
}

static struct cls_kernel_info info_of(cls_kernel *k) {
  struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
  CT_OK(cls_kernel_info(k, &ki));
  return ki;
}

/* ids_k and rev_k (tests/common.h) over two groups of `group` items,
 * every element checked: rev_k is right only if each group really ran as
 * one work-group (local memory and a barrier across all of it). */
static void run_groups_of(cls_context *ctx, cls_kernel *ids, cls_kernel *rev, size_t group) {
  size_t n = 2 * group, g[1] = {n}, l[1] = {group};
  int *host = malloc(n * sizeof *host);
  ck_assert_ptr_nonnull(host);
  for (size_t i = 0; i < n; i++)
    host[i] = (int)(7 * i + 3);
  cls_buffer in = ct_alloc(ctx, 0, n * sizeof(int)), out = ct_alloc(ctx, 0, n * sizeof(int));
  ct_upload_ints(ctx, 0, in, host, n);
  int rc = cls_launch(ctx, 0, ids, 1, g, l, 1, (cls_arg[]){CLS_OUT(out)});
  ck_assert_msg(rc == 0, "ids_k, local size %zu: %s: %s", group, cls_err_name(rc),
                cls_last_error_detail());
  ct_download_ints(ctx, 0, out, host, n);
  CT_EXPECT_INTS(host, n, i, (int)i);
  rc = cls_launch(ctx, 0, rev, 1, g, l, 3,
                  (cls_arg[]){CLS_IN(in), CLS_OUT(out), CLS_LOCAL(group * sizeof(int))});
  ck_assert_msg(rc == 0, "rev_k, local size %zu: %s: %s", group, cls_err_name(rc),
                cls_last_error_detail());
  ct_download_ints(ctx, 0, out, host, n);
  CT_EXPECT_INTS(host, n, i, (int)(7 * ((i / group) * group + group - 1 - i % group) + 3));
  CT_OK(cls_free(ctx, in));
  CT_OK(cls_free(ctx, out));
  free(host);
}

/* The verdict of each vendor (docs/portability.md), probed once per
 * device and process, and only where asked for. */
START_TEST(wg_above_kernel_max_matches_the_vendor_and_is_probed_once) {
  cls_context *ctx = ct_context();
  struct cls_device_info d = ct_context_info(ctx);
  struct cls_quirks q = quirks_of(ctx);
  ck_assert_msg(is_answer(q.wg_above_kernel_max), "wg_above_kernel_max = %d",
                q.wg_above_kernel_max);
  ck_assert_uint_gt(q.kernel_work_group_size, 0);
  /* 1 only where the probe kernel reported less than the device runs. */
  if (q.wg_above_kernel_max == 1)
    ck_assert_uint_lt(q.kernel_work_group_size, device_group(&d));
  switch (vendor_of(&d)) {
  case POCL:
  case OCLGRIND:
    /* Every kernel reports the device's maximum: nothing above it. */
    ck_assert_int_eq(q.wg_above_kernel_max, 0);
    ck_assert_uint_eq(q.kernel_work_group_size, d.max_work_group_size);
    break;
  case RUSTICL:
    /* 32 reported for every kernel; the device's 1024 runs, and right. */
    ck_assert_int_eq(q.wg_above_kernel_max, 1);
    ck_assert_uint_eq(q.kernel_work_group_size, 32);
    ck_assert_uint_eq(d.max_work_group_size, 1024);
    break;
  case OTHER:
    break;
  }
  unsigned runs = cls__quirks_wg_probes_run();
  ck_assert_uint_ge(runs, 1);
  cls_context *other = ct_context();
  struct cls_quirks q2 = quirks_of(other);
  ck_assert_int_eq(q2.wg_above_kernel_max, q.wg_above_kernel_max);
  ck_assert_uint_eq(q2.kernel_work_group_size, q.kernel_work_group_size);
  ct_kernel(other, IDS_SRC, "ids_k");
  ck_assert_uint_eq(cls__quirks_wg_probes_run(), runs);
  cls_context_destroy(other);
  cls_context_destroy(ctx);
}
END_TEST

/* Issue 22: rusticl reports CL_KERNEL_WORK_GROUP_SIZE 32 for every kernel
 * and runs 256 (Rodinia's SRAD) right; clstream used to refuse it.  Where
 * the probe says so, a launch above the kernel's reported maximum runs,
 * and computes right; where it does not, the kernel's maximum is the
 * limit and runs.  Above the device's maximum is refused everywhere. */
START_TEST(launch_above_the_reported_kernel_maximum_runs_where_the_probe_says_so) {
  cls_context *ctx = ct_context();
  struct cls_device_info d = ct_context_info(ctx);
  struct cls_quirks q = quirks_of(ctx);
  cls_program *p = ct_build(ctx, IDS_SRC CT_REV_SRC, NULL);
  cls_kernel *ids = ct_get_kernel(ctx, p, "ids_k"), *rev = ct_get_kernel(ctx, p, "rev_k");
  size_t most = device_group(&d);
  size_t enforced = most;
  cls_kernel *ks[] = {ids, rev};
  for (size_t i = 0; i < 2; i++) {
    struct cls_kernel_info ki = info_of(ks[i]);
    ck_assert_uint_gt(ki.kernel_work_group_size, 0);
    /* What the quirk says is what the pre-check takes. */
    size_t want = q.wg_above_kernel_max == 1 && ki.kernel_work_group_size >= q.kernel_work_group_size
                      ? d.max_work_group_size
                      : min_size(ki.kernel_work_group_size, d.max_work_group_size);
    ck_assert_msg(ki.max_work_group_size == want, "%s: enforced %zu, reported %zu, expected %zu",
                  cls_kernel_name(ks[i]), ki.max_work_group_size, ki.kernel_work_group_size,
                  want);
    if (q.wg_above_kernel_max == 1)
      ck_assert_uint_lt(ki.kernel_work_group_size, ki.max_work_group_size);
    enforced = min_size(enforced, ki.max_work_group_size);
  }
  if (q.wg_above_kernel_max == 1) {
    /* SRAD's 256 (when it is above the reported value), then the most. */
    if (256 > q.kernel_work_group_size && 256 <= most)
      run_groups_of(ctx, ids, rev, 256);
    run_groups_of(ctx, ids, rev, most);
  } else {
    /* The reported maximum is the limit, and it runs. */
    run_groups_of(ctx, ids, rev, enforced);
    if (2 * enforced <= most) {
      size_t g[1] = {4 * enforced}, l[1] = {2 * enforced};
      cls_buffer o = ct_alloc(ctx, 0, g[0] * sizeof(int));
      CT_ERR(cls_launch(ctx, 0, ids, 1, g, l, 1, (cls_arg[]){CLS_OUT(o)}), CLS_EWORKSIZE);
      ck_assert(strstr(cls_last_error_detail(), "CL_KERNEL_WORK_GROUP_SIZE"));
      CT_OK(cls_free(ctx, o));
    }
  }
  /* Above the device's maximum: refused, naming the device's limit. */
  size_t g[1] = {4 * d.max_work_group_size}, l[1] = {2 * d.max_work_group_size};
  cls_buffer o = ct_alloc(ctx, 0, sizeof(int));
  CT_ERR(cls_launch(ctx, 0, ids, 1, g, l, 1, (cls_arg[]){CLS_OUT(o)}), CLS_EWORKSIZE);
  if (d.max_work_item_sizes[1] >= 2) {
    size_t g2[2] = {most, 2}, l2[2] = {most, 2};
    CT_ERR(cls_launch(ctx, 0, ids, 2, g2, l2, 1, (cls_arg[]){CLS_OUT(o)}), CLS_EWORKSIZE);
    if (enforced == d.max_work_group_size)
      ck_assert_msg(strstr(cls_last_error_detail(), "the device's"), "%s",
                    cls_last_error_detail());
  }
  CT_OK(cls_program_release(ctx, p));
  cls_context_destroy(ctx);
}
END_TEST

/* A program built against version 1 of struct cls_quirks passes the
 * smaller struct: nothing past its end may be written. */
START_TEST(version_1_caller_gets_the_version_1_fields_only) {
  cls_context *ctx = ct_context();
  struct cls_quirks q;
  memset(&q, 0x7f, sizeof q);
  q.version = 1;
  CT_OK(cls_context_quirks(ctx, &q));
  ck_assert_uint_eq(q.version, 1);
  ck_assert_int_eq(q.probed, 1);
  size_t v1 = offsetof(struct cls_quirks, wg_above_kernel_max);
  const unsigned char *tail = (const unsigned char *)&q + v1;
  for (size_t i = 0; i < sizeof q - v1; i++)
    ck_assert_uint_eq(tail[i], 0x7f);
  cls_context_destroy(ctx);
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
  CT_ADD(s, wg_above_kernel_max_matches_the_vendor_and_is_probed_once);
  CT_ADD(s, launch_above_the_reported_kernel_maximum_runs_where_the_probe_says_so);
  CT_ADD(s, version_1_caller_gets_the_version_1_fields_only);
  return ct_run(s);
}
