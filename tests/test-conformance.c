/* Driver conformance: one scripted scenario — several streams, cross-stream
 * reads, faults injected at enqueue and at completion, skip chains across
 * streams, frees and reuse — run under every driver setting in one process.
 * Every download (bytes or report) must be identical across settings, the
 * example outside driver's (examples/drivers/priority.c) included.
 *
 * A failure at completion (F8) may be learnt before or after a consumer
 * was enqueued, depending on timing, so the consumer's chain entry is
 * "skipped" or "ran on untrusted input"; both mean "its output carries the
 * failure" and the transcript records them alike.  An enqueue failure is
 * known before its consumers run on every driver (the scheduler withdraws
 * tasks still in its lists), so there the kinds must match.  Everything
 * else -- roots and their messages (less what a deferring driver adds in
 * parentheses), chains (kernel, stream, position), bytes -- must match. */
#include "common.h"

#include <stdlib.h>

#include <stdarg.h>

#include <clstream.h>

#include "../examples/drivers/priority.h"

#define N 256

static const char *src =
    "kernel void inc(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + 1; }\n"
    "kernel void add(global const int *a, global const int *b, global int *c) {\n"
    "  size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "kernel void bad1(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = 2 * a[i]; }\n"
    "kernel void late(global const int *a, global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] = 3 * a[i]; }\n"
    "kernel void scale(global const int *a, global int *b, int k) {\n"
    "  size_t i = get_global_id(0); b[i] = k * a[i]; }\n";

static const char *settings[] = {
    "event",
    "scheduler:sequential",
    "scheduler:interleave",
    "scheduler:sequential,queues=2",
    "scheduler:sequential,max_tasks=1",
    "scheduler:interleave,max_tasks=3",
    /* The example outside driver (examples/drivers/priority.c), which
     * main() registers: written against <clstream/driver.h> alone. */
    "priority",
    "priority:high=0+2",
    "priority:batch=1",
    "priority:high=1+3,batch=2",
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

/* A growing transcript of everything the scenario observed. */
struct transcript {
  char *p;
  size_t len, cap;
};

static void tr_add(struct transcript *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tr_add(struct transcript *t, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t n = strlen(line);
  if (t->len + n + 1 > t->cap) {
    t->cap = (t->cap + n + 1) * 2;
    t->p = realloc(t->p, t->cap);
    ck_assert_ptr_nonnull(t->p);
  }
  memcpy(t->p + t->len, line, n + 1);
  t->len += n;
}

/* The root's message as every driver says it: a driver that defers
 * enqueues adds why the failure was found later, in parentheses. */
static int common_length(const char *msg) {
  const char *more = strstr(msg, " (deferred: ");
  return more ? (int)(more - msg) : (int)strlen(msg);
}

static void tr_report(struct transcript *t, cls_report *r) {
  size_t nf = cls_report_failures(r);
  tr_add(t, "  report: %zu failures, %zu bad handles\n", nf, cls_report_bad_handles(r));
  for (size_t i = 0; i < nf; i++) {
    struct cls_failure_info fi;
    CT_OK(cls_report_failure(r, i, &fi));
    tr_add(t, "  root %s %s %s '%s' stream %d pos %llu, %llu skipped\n", cls_err_name(fi.status),
           fi.cl_name, fi.operation, fi.kernel, fi.stream, (unsigned long long)fi.position,
           (unsigned long long)fi.skipped);
    tr_add(t, "  message '%.*s'\n", common_length(fi.message), fi.message);
    /* An enqueue failure is known before what reads its outputs is
     * enqueued, on every driver: those are skipped.  A failure at
     * completion may be found before or after them (timing), so there
     * "skipped" and "ran on untrusted input" are recorded alike. */
    bool at_enqueue = strncmp(fi.message, "enqueue of ", 11) == 0;
    for (size_t k = 0; k < fi.nskips; k++) {
      struct cls_skip_info si;
      CT_OK(cls_report_skip(r, i, k, &si));
      const char *kind = !at_enqueue ? "not trusted"
                         : si.kind == CLS_SKIP_SKIPPED ? "skipped"
                                                       : "ran on untrusted input";
      tr_add(t, "    %s: '%s' stream %d pos %llu x%llu\n", kind, si.kernel, si.stream,
             (unsigned long long)si.position, (unsigned long long)si.count);
    }
  }
}

static void download(struct transcript *t, cls_context *ctx, int stream, cls_buffer b,
                     const char *name) {
  int host[N];
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, b, 0, host, sizeof host, &r);
  tr_add(t, "download %s on %d: %s\n", name, stream, cls_err_name(rc));
  if (rc == CLS_OK) {
    unsigned long long sum = 0;
    for (int i = 0; i < N; i++)
      sum = sum * 31 + (unsigned)host[i];
    tr_add(t, "  bytes %d %d %d ... hash %llx\n", host[0], host[1], host[N - 1], sum);
  } else {
    ck_assert_int_eq(rc, CLS_ETAINTED);
    tr_report(t, r);
  }
  cls_report_free(r);
}

/* Return codes of launches differ legitimately between drivers and with
 * timing: a consumer is CLS_OK when a failure was not known yet and
 * CLS_ESKIPPED when it was, and the scheduler driver enqueues later, so an
 * enqueue failure it meets is reported at the reads, not by cls_launch.  The
 * transcript records only that the call was accepted; the reads tell the
 * rest. */
static void launch(struct transcript *t, cls_context *ctx, int stream, cls_kernel *k,
                   size_t nargs, const cls_arg *args, const char *what) {
  size_t g = N;
  int rc = cls_launch(ctx, stream, k, 1, &g, NULL, nargs, args);
  ck_assert_msg(rc == CLS_OK || rc == CLS_ESKIPPED || rc == CLS_ELAUNCH,
                "%s: unexpected %s: %s", what, cls_err_name(rc), cls_last_error_detail());
  tr_add(t, "launch %s: accepted\n", what);
}

static char *run_scenario(const char *setting) {
  struct transcript t = {0};
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = setting,
                                  .fault = "enqueue:kernel=bad1;complete:kernel=late"};
  cls_context *ctx = ct_context_opts(&o);
  size_t name_len = strcspn(setting, ":");
  ck_assert_msg(strlen(cls_context_driver(ctx)) == name_len &&
                    strncmp(cls_context_driver(ctx), setting, name_len) == 0,
                "driver '%s' for setting '%s'", cls_context_driver(ctx), setting);
  cls_program *p;
  CT_OK(cls_program_build(ctx, src, NULL, &p));
  cls_kernel *inc, *add, *bad1, *late, *scale;
  CT_OK(cls_kernel_get(ctx, p, "inc", &inc));
  CT_OK(cls_kernel_get(ctx, p, "add", &add));
  CT_OK(cls_kernel_get(ctx, p, "bad1", &bad1));
  CT_OK(cls_kernel_get(ctx, p, "late", &late));
  CT_OK(cls_kernel_get(ctx, p, "scale", &scale));

  int host[N];
  for (int i = 0; i < N; i++)
    host[i] = i;
  cls_buffer A, B, C, D, E, F, G, H, X;
  CT_OK(cls_alloc(ctx, 0, sizeof host, &A));
  CT_OK(cls_alloc(ctx, 0, sizeof host, &B));
  CT_OK(cls_alloc(ctx, 1, sizeof host, &C));
  CT_OK(cls_alloc(ctx, 2, sizeof host, &D));
  CT_OK(cls_alloc(ctx, 3, sizeof host, &E));
  CT_OK(cls_alloc(ctx, 1, sizeof host, &F));
  CT_OK(cls_alloc(ctx, 2, sizeof host, &G));
  CT_OK(cls_alloc(ctx, 3, sizeof host, &H));
  CT_OK(cls_upload(ctx, 0, A, 0, host, sizeof host));

  /* A clean chain across streams: B = A+1 on 0; C = A+B on 1. */
  launch(&t, ctx, 0, inc, 2, (cls_arg[]){CLS_IN(A), CLS_OUT(B)}, "inc A->B on 0");
  launch(&t, ctx, 1, add, 3, (cls_arg[]){CLS_IN(A), CLS_IN(B), CLS_OUT(C)}, "add A,B->C on 1");
  /* An enqueue failure on 2 and a skip chain through 3 and 0. */
  launch(&t, ctx, 2, bad1, 2, (cls_arg[]){CLS_IN(C), CLS_OUT(D)}, "bad1 C->D on 2");
  /* Its reader on its own stream: the scheduler still holds both in one
   * task list when bad1's deferred enqueue fails, and withdraws it. */
  launch(&t, ctx, 2, inc, 2, (cls_arg[]){CLS_IN(D), CLS_OUT(G)}, "inc D->G on 2");
  launch(&t, ctx, 3, inc, 2, (cls_arg[]){CLS_IN(D), CLS_OUT(E)}, "inc D->E on 3");
  launch(&t, ctx, 0, add, 3, (cls_arg[]){CLS_IN(E), CLS_IN(A), CLS_OUT(H)}, "add E,A->H on 0");
  /* A failure at completion on 1, read on 2 (before or after it is known). */
  launch(&t, ctx, 1, late, 2, (cls_arg[]){CLS_IN(A), CLS_OUT(F)}, "late A->F on 1");
  int k = 5;
  launch(&t, ctx, 2, scale, 3, (cls_arg[]){CLS_IN(F), CLS_OUT(G), CLS_SCALAR(k)},
         "scale F->G on 2");
  /* The chain, read on three streams. */
  download(&t, ctx, 2, D, "D (chain)");
  download(&t, ctx, 3, E, "E (chain)");
  download(&t, ctx, 0, H, "H (chain)");
  /* Free B while stream 1 may still read it; reuse its memory at once. */
  CT_OK(cls_free(ctx, B));
  CT_OK(cls_alloc(ctx, 0, sizeof host, &X));
  int seven = 7;
  CT_OK(cls_fill(ctx, 0, X, 0, sizeof host, &seven, sizeof seven));
  /* Copy across streams, then repair a tainted buffer by writing it. */
  tr_add(&t, "copy C->E on 3: %s\n", cls_err_name(cls_copy(ctx, 3, C, 0, E, 0, sizeof host)));
  launch(&t, ctx, 0, scale, 3, (cls_arg[]){CLS_IN(E), CLS_OUT(H), CLS_SCALAR(k)},
         "scale E->H on 0");
  /* Many launches on one stream (batching), each reading the last. */
  for (int i = 0; i < 40; i++)
    launch(&t, ctx, 1, inc, 2, (cls_arg[]){CLS_IN(i % 2 ? D : C), CLS_OUT(i % 2 ? C : D)},
           i % 2 ? "inc D->C on 1" : "inc C->D on 1");

  download(&t, ctx, 1, C, "C");
  download(&t, ctx, 2, D, "D");
  download(&t, ctx, 3, E, "E");
  download(&t, ctx, 1, F, "F");
  download(&t, ctx, 2, G, "G");
  download(&t, ctx, 0, H, "H");
  download(&t, ctx, 0, X, "X");
  /* Every failure the scenario made, named once. */
  cls_report *r = NULL;
  cls_buffer all[] = {A, C, D, E, F, G, H, X, B};
  tr_add(&t, "check all: %s\n", cls_err_name(cls_check(ctx, 9, all, &r)));
  if (r)
    tr_report(&t, r);
  cls_report_free(r);
  CT_OK(cls_sync(ctx, NULL));
  cls_context_destroy(ctx);
  return t.p;
}

/* The first line where two transcripts differ, for the failure message
 * (Check limits its length; the whole transcripts go to stderr). */
static const char *first_difference(const char *a, const char *b, char *buf, size_t cap) {
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n')
      la = a + 1, lb = b + 1;
    a++, b++;
  }
  int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
  snprintf(buf, cap, "expected '%.*s', got '%.*s'", na > 200 ? 200 : na, la,
           nb > 200 ? 200 : nb, lb);
  return buf;
}

START_TEST(every_driver_setting_gives_the_same_downloads_and_reports) {
  char *ref = run_scenario(settings[0]);
  if (getenv("CLS_TEST_VERBOSE"))
    fprintf(stderr, "--- %s\n%s", settings[0], ref);
  /* The scenario must exercise what it claims. */
  static const char *const must[] = {
      "download H (chain) on 0: CLS_ETAINTED\n  report: 1 failures, 0 bad handles\n"
      "  root CLS_ELAUNCH CL_OUT_OF_RESOURCES launch 'bad1' stream 2",
      "skipped: 'inc' stream 2 pos 2 x1\n    skipped: 'inc' stream 3 pos 1 x1\n"
      "    skipped: 'add' stream 0",
      "message 'enqueue of bad1 failed: CL_OUT_OF_RESOURCES'",
      "root CLS_ELAUNCH CL_OUT_OF_RESOURCES launch 'late' stream 1",
      "not trusted: 'scale' stream 2",
      "download X on 0: CLS_OK\n  bytes 7 7 7",
  };
  for (size_t i = 0; i < sizeof must / sizeof *must; i++)
    ck_assert_msg(strstr(ref, must[i]), "the scenario's transcript lacks '%s'", must[i]);
  for (size_t i = 1; i < NSETTINGS; i++) {
    char *got = run_scenario(settings[i]);
    char diff[512];
    if (strcmp(ref, got) != 0)
      fprintf(stderr, "--- %s\n%s--- %s\n%s", settings[0], ref, settings[i], got);
    ck_assert_msg(strcmp(ref, got) == 0, "setting '%s' differs from '%s': %s", settings[i],
                  settings[0], first_difference(ref, got, diff, sizeof diff));
    free(got);
  }
  free(ref);
}
END_TEST

int main(void) {
  /* These cases pin each failure found after the enqueue on its command
   * (F8, exact attribution); ranged attribution (F8a), the default where
   * the device allows it, has its own suite: tests/test-ranged.c. */
  setenv("CLS_PRECISE", "1", 0);
  ct_require_device();
  if (cls_driver_register(&priority_driver) != CLS_OK) {
    fprintf(stderr, "registering the priority driver: %s\n", cls_last_error_detail());
    return 1;
  }
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("drivers");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_driver_setting_gives_the_same_downloads_and_reports);
  suite_add_tcase(s, tc);
  return ct_run(s);
}
