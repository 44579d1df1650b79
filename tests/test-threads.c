/* Threads: one context used from several threads at once (README
 * "Threads"): every call takes the context's lock, reports belong to the
 * caller and may be read and freed on any thread while the context's other
 * threads keep appending to the same failure record.
 *
 * 4 threads, each on its own stream, share buffers: an input written
 * before they start (each reads it on its stream), a never-written buffer
 * (each launch reading it is skipped on one shared failure record, whose
 * chain grows while the other threads read reports of it), and each
 * thread's result is read back by the next thread's stream.  Run clean
 * under ThreadSanitizer (configure --enable-sanitizers=thread). */
#include "common.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#define NT 4
#define N 64
#define ROUNDS 60

static const char SRC[] =
    "kernel void add_k(global const int *a, global int *b, int k) {\n"
    "  size_t i = get_global_id(0); b[i] = a[i] + k; }\n";

struct shared {
  cls_context *ctx;
  cls_kernel *add;
  cls_buffer in;     /* in[i] = i, written before the threads start */
  cls_buffer never;  /* never written */
  cls_buffer mine[NT];
  pthread_barrier_t start;
  atomic_int errors;
  char first[512];
  pthread_mutex_t msg_lock;
};

struct job {
  struct shared *sh;
  int t;
};

static void note_error(struct shared *sh, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_error(struct shared *sh, const char *fmt, ...) {
  if (atomic_fetch_add(&sh->errors, 1) == 0) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&sh->msg_lock);
    vsnprintf(sh->first, sizeof sh->first, fmt, ap);
    pthread_mutex_unlock(&sh->msg_lock);
    va_end(ap);
  }
}

static void *worker(void *arg) {
  struct job *j = arg;
  struct shared *sh = j->sh;
  cls_context *ctx = sh->ctx;
  int t = j->t, next = (t + 1) % NT;
  size_t g = N;
  int host[N];
  pthread_barrier_wait(&sh->start);
  for (int r = 0; r < ROUNDS && atomic_load(&sh->errors) == 0; r++) {
    int k = 1000 * t + r;
    /* 1. Read the shared input on this thread's stream into its buffer. */
    cls_arg a1[] = {CLS_IN(sh->in), CLS_OUT(sh->mine[t]), CLS_SCALAR(k)};
    int rc = cls_launch(ctx, t, sh->add, 1, &g, NULL, 3, a1);
    if (rc != 0) {
      note_error(sh, "thread %d: launch: %s", t, cls_err_name(rc));
      break;
    }
    /* 2. The result, read on the next thread's stream (ordered after this
     * one by the buffer, whatever that thread is doing). */
    rc = cls_download(ctx, next, sh->mine[t], 0, host, sizeof host, NULL);
    if (rc != 0) {
      note_error(sh, "thread %d: download: %s", t, cls_err_name(rc));
      break;
    }
    for (int i = 0; i < N; i++)
      if (host[i] != i + k) {
        note_error(sh, "thread %d round %d: element %d is %d, expected %d", t, r, i, host[i], i + k);
        break;
      }
    /* 3. A launch on the never-written buffer: skipped on the one record
     * every thread appends to; its report is read and freed here, with no
     * lock, while the others keep appending. */
    cls_buffer tmp = CLS_BUFFER_NULL;
    if ((rc = cls_alloc(ctx, t, N * sizeof(int), &tmp)) != 0) {
      note_error(sh, "thread %d: alloc: %s", t, cls_err_name(rc));
      break;
    }
    cls_arg a2[] = {CLS_IN(sh->never), CLS_OUT(tmp), CLS_SCALAR(k)};
    rc = cls_launch(ctx, t, sh->add, 1, &g, NULL, 3, a2);
    if (rc != CLS_ESKIPPED)
      note_error(sh, "thread %d: launch on never-written input: %s", t, cls_err_name(rc));
    cls_report *rep = NULL;
    rc = cls_download(ctx, t, tmp, 0, host, sizeof host, &rep);
    if (rc != CLS_ETAINTED || !rep) {
      note_error(sh, "thread %d: download of a skipped output: %s", t, cls_err_name(rc));
    } else {
      struct cls_failure_info fi;
      if (cls_report_failures(rep) != 1 || cls_report_failure(rep, 0, &fi) != 0 ||
          strcmp(fi.operation, "alloc") != 0 || fi.skipped < 1)
        note_error(sh, "thread %d: unexpected report: %s", t, cls_report_text(rep));
      else
        for (size_t e = 0; e < fi.nskips; e++) {
          struct cls_skip_info si;
          if (cls_report_skip(rep, 0, e, &si) != 0 || strcmp(si.kernel, "add_k") != 0) {
            note_error(sh, "thread %d: skip entry %zu: %s", t, e, cls_report_text(rep));
            break;
          }
        }
      (void)cls_report_text(rep);
    }
    cls_report_free(rep);
    if ((rc = cls_free(ctx, tmp)) != 0)
      note_error(sh, "thread %d: free: %s", t, cls_err_name(rc));
    if (r % 16 == 0 && (rc = cls_stream_sync(ctx, t, NULL)) != 0)
      note_error(sh, "thread %d: sync: %s", t, cls_err_name(rc));
  }
  return NULL;
}

/* The README's threading contract: 4 threads, one context, distinct
 * streams, shared buffers; results exact, reports consistent. */
START_TEST(four_threads_share_one_context_and_its_buffers) {
  static struct shared sh;
  memset(&sh, 0, sizeof sh);
  pthread_mutex_init(&sh.msg_lock, NULL);
  sh.ctx = ct_context();
  sh.add = ct_kernel(sh.ctx, SRC, "add_k");
  sh.in = ct_alloc(sh.ctx, 0, N * sizeof(int));
  sh.never = ct_alloc(sh.ctx, 0, N * sizeof(int));
  int v[N];
  for (int i = 0; i < N; i++)
    v[i] = i;
  ct_upload_ints(sh.ctx, 0, sh.in, v, N);
  for (int t = 0; t < NT; t++)
    sh.mine[t] = ct_alloc(sh.ctx, t, N * sizeof(int));
  pthread_barrier_init(&sh.start, NULL, NT);
  pthread_t th[NT];
  struct job jobs[NT];
  for (int t = 0; t < NT; t++) {
    jobs[t] = (struct job){&sh, t};
    ck_assert_int_eq(pthread_create(&th[t], NULL, worker, &jobs[t]), 0);
  }
  for (int t = 0; t < NT; t++)
    pthread_join(th[t], NULL);
  ck_assert_msg(atomic_load(&sh.errors) == 0, "%d errors; first: %s", atomic_load(&sh.errors),
                sh.first);
  /* Every skip of every thread is on the one record. */
  cls_report *rep = NULL;
  CT_ERR(cls_check(sh.ctx, 1, &sh.never, &rep), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  ck_assert_uint_eq(fi.skipped, (uint64_t)NT * ROUNDS);
  cls_report_free(rep);
  CT_OK(cls_sync(sh.ctx, NULL));
  pthread_barrier_destroy(&sh.start);
  cls_context_destroy(sh.ctx);
  pthread_mutex_destroy(&sh.msg_lock);
}
END_TEST

/* A report outlives its context and is freed on another thread while a
 * second report of the same record is read on this one. */
static void *free_report(void *r) {
  cls_report_free(r);
  return NULL;
}

START_TEST(reports_are_freed_on_any_thread) {
  cls_context *ctx = ct_context();
  cls_kernel *add = ct_kernel(ctx, SRC, "add_k");
  cls_buffer never = ct_alloc(ctx, 0, N * sizeof(int)), out = ct_alloc(ctx, 1, N * sizeof(int));
  size_t g = N;
  int k = 1;
  cls_arg a[] = {CLS_IN(never), CLS_OUT(out), CLS_SCALAR(k)};
  CT_ERR(cls_launch(ctx, 1, add, 1, &g, NULL, 3, a), CLS_ESKIPPED);
  cls_report *r1 = NULL, *r2 = NULL;
  CT_ERR(cls_check(ctx, 1, &out, &r1), CLS_ETAINTED);
  CT_ERR(cls_check(ctx, 1, &out, &r2), CLS_ETAINTED);
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, free_report, r1), 0);
  for (int i = 0; i < 50; i++)
    CT_ERR(cls_launch(ctx, 1, add, 1, &g, NULL, 3, a), CLS_ESKIPPED);
  pthread_join(th, NULL);
  /* r2 still shows the record as it was when the report was made. */
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(r2, 0, &fi));
  ck_assert_uint_eq(fi.skipped, 1);
  cls_context_destroy(ctx);
  ck_assert_msg(strstr(cls_report_text(r2), "never written") != NULL, "%s", cls_report_text(r2));
  cls_report_free(r2);
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("threads");
  CT_ADD(s, four_threads_share_one_context_and_its_buffers);
  CT_ADD(s, reports_are_freed_on_any_thread);
  return ct_run(s);
}
