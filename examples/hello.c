/* hello: the smallest complete clstream program.  Adds two vectors on the
 * device and checks the result on the host. */
#include <clstream.h>

#include <stdio.h>

#define N 1024

static const char *source =
    "__kernel void vadd(__global const float *a, __global const float *b,\n"
    "                   __global float *c, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

/* Every clstream call returns 0 or a negative CLS_E* code. */
#define CHECK(call)                                                         \
  do {                                                                      \
    int rc_ = (call);                                                       \
    if (rc_ != CLS_OK) {                                                    \
      fprintf(stderr, "hello: %s failed: %s: %s\n%s\n", #call,              \
              cls_err_name(rc_), cls_strerror(rc_), cls_last_error_detail()); \
      goto done;                                                            \
    }                                                                       \
  } while (0)

int main(void) {
  static float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 2.0f * (float)i;
  }

  int status = 1;
  cls_context *ctx = NULL;
  cls_program *prog = NULL;
  cls_kernel *vadd = NULL;
  cls_buffer da = CLS_BUFFER_NULL, db = CLS_BUFFER_NULL, dc = CLS_BUFFER_NULL;
  cls_report *report = NULL;

  CHECK(cls_context_create(&ctx, NULL)); /* device from $CLS_DEVICE */
  CHECK(cls_program_build(ctx, source, NULL, &prog));
  CHECK(cls_kernel_get(ctx, prog, "vadd", &vadd));

  /* Buffers come from stream 0's memory; the work runs on stream 0. */
  CHECK(cls_alloc(ctx, 0, sizeof a, &da));
  CHECK(cls_alloc(ctx, 0, sizeof b, &db));
  CHECK(cls_alloc(ctx, 0, sizeof c, &dc));
  CHECK(cls_upload(ctx, 0, da, 0, a, sizeof a));
  CHECK(cls_upload(ctx, 0, db, 0, b, sizeof b));

  uint32_t n = N; /* a uint in the kernel */
  size_t global = N;
  cls_arg args[] = {CLS_IN(da), CLS_IN(db), CLS_OUT(dc), CLS_SCALAR(n)};
  CHECK(cls_launch(ctx, 0, vadd, 1, &global, NULL, 4, args));

  /* A download of data that a failed launch should have written fails with
   * CLS_ETAINTED and a report saying what went wrong, and where. */
  int rc = cls_download(ctx, 0, dc, 0, c, sizeof c, &report);
  if (rc == CLS_ETAINTED) {
    fprintf(stderr, "hello: the result is tainted:\n%s\n", cls_report_text(report));
    cls_report_free(report);
    goto done;
  }
  CHECK(rc);

  for (int i = 0; i < N; i++)
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "hello: c[%d] = %g, expected %g\n", i, c[i], a[i] + b[i]);
      goto done;
    }
  printf("hello: %d sums OK\n", N);

  CHECK(cls_free(ctx, da));
  CHECK(cls_free(ctx, db));
  CHECK(cls_free(ctx, dc));
  CHECK(cls_program_release(ctx, prog));
  status = 0;
done:
  cls_context_destroy(ctx); /* also frees whatever is left */
  return status;
}
