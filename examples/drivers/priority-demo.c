/* priority-demo: registers the example driver of priority.c (a driver
 * written outside clstream) and runs work under it: stream 0 is high
 * priority, stream 1 is not; stream 1 then reads what stream 0 made.
 * The counters show the policy: stream 0's queue is flushed after every
 * command, stream 1's once per batch.
 *
 *   priority-demo [SELECTION]   default "priority:high=0,batch=8" */
#include "priority.h"

#include <stdio.h>

#define N 4096
#define STEPS 32

static const char *source =
    "__kernel void inc(__global int *a) { a[get_global_id(0)] += 1; }\n"
    "__kernel void add(__global const int *a, __global int *b) {\n"
    "  size_t i = get_global_id(0); b[i] += a[i]; }\n";

#define CHECK(call)                                                                   \
  do {                                                                                \
    int rc_ = (call);                                                                 \
    if (rc_ != CLS_OK) {                                                              \
      fprintf(stderr, "priority-demo: %s failed: %s: %s\n%s\n", #call, cls_err_name(rc_), \
              cls_strerror(rc_), cls_last_error_detail());                            \
      goto done;                                                                      \
    }                                                                                 \
  } while (0)

int main(int argc, char **argv) {
  static int host[N];
  int status = 1;
  cls_context *ctx = NULL;
  cls_program *prog = NULL;
  cls_kernel *inc = NULL, *add = NULL;
  cls_buffer a = CLS_BUFFER_NULL, b = CLS_BUFFER_NULL;

  /* Once per process; CLS_SCHEDULER=priority... works from here on. */
  CHECK(cls_driver_register(&priority_driver));
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = argc > 1 ? argv[1] : "priority:high=0,batch=8"};
  CHECK(cls_context_create(&ctx, &o));
  printf("priority-demo: driver %s\n", cls_context_driver(ctx));
  CHECK(cls_program_build(ctx, source, NULL, &prog));
  CHECK(cls_kernel_get(ctx, prog, "inc", &inc));
  CHECK(cls_kernel_get(ctx, prog, "add", &add));

  CHECK(cls_alloc(ctx, 0, sizeof host, &a));
  CHECK(cls_alloc(ctx, 1, sizeof host, &b));
  CHECK(cls_fill(ctx, 0, a, 0, sizeof host, &(int){0}, sizeof(int)));
  CHECK(cls_fill(ctx, 1, b, 0, sizeof host, &(int){0}, sizeof(int)));
  size_t global = N;
  for (int i = 0; i < STEPS; i++) {
    CHECK(cls_launch(ctx, 0, inc, 1, &global, NULL, 1, (cls_arg[]){CLS_INOUT(a)}));
    CHECK(cls_launch(ctx, 1, inc, 1, &global, NULL, 1, (cls_arg[]){CLS_INOUT(b)}));
  }
  /* Cross-stream: stream 1 waits for stream 0's last write of a. */
  CHECK(cls_launch(ctx, 1, add, 1, &global, NULL, 2, (cls_arg[]){CLS_IN(a), CLS_INOUT(b)}));
  CHECK(cls_download(ctx, 1, b, 0, host, sizeof host, NULL));
  for (int i = 0; i < N; i++)
    if (host[i] != 2 * STEPS) {
      fprintf(stderr, "priority-demo: b[%d] = %d, expected %d\n", i, host[i], 2 * STEPS);
      goto done;
    }
  for (int s = 0; s < 2; s++) {
    struct cls_stream_stats st;
    CHECK(cls_stream_stats(ctx, s, &st));
    printf("priority-demo: stream %d: %llu commands, %llu flushes\n", s,
           (unsigned long long)st.submissions, (unsigned long long)st.flushes);
  }
  printf("priority-demo: %d sums OK\n", N);
  CHECK(cls_free(ctx, a));
  CHECK(cls_free(ctx, b));
  CHECK(cls_program_release(ctx, prog));
  status = 0;
done:
  cls_context_destroy(ctx);
  return status;
}
