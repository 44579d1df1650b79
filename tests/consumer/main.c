/* An outside program using an installed clstream: built by make
 * check-install with CMake (clstream::clstream) and with pkg-config.  It
 * doubles 1024 ints on the device and checks every one.  Exit 0 on
 * success, 1 on any failure. */
#include <clstream.h>

#include <stdio.h>

#define N 1024

static const char *source =
    "__kernel void twice(__global const int *a, __global int *b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = 2 * a[i];\n"
    "}\n";

static int fail(const char *what, int rc) {
  fprintf(stderr, "consumer: %s: %s (%s) %s\n", what, cls_err_name(rc), cls_strerror(rc),
          cls_last_error_detail());
  return 1;
}

int main(void) {
  static int in[N], out[N];
  for (int i = 0; i < N; i++)
    in[i] = i - 17;

  cls_context *ctx = NULL;
  int rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK)
    return fail("cls_context_create", rc);
  cls_program *prog = NULL;
  cls_kernel *k = NULL;
  cls_buffer a, b;
  size_t global = N;
  if ((rc = cls_program_build(ctx, source, NULL, &prog)) != CLS_OK)
    return fail("cls_program_build", rc);
  if ((rc = cls_kernel_get(ctx, prog, "twice", &k)) != CLS_OK)
    return fail("cls_kernel_get", rc);
  if ((rc = cls_alloc(ctx, 0, sizeof in, &a)) != CLS_OK ||
      (rc = cls_alloc(ctx, 1, sizeof out, &b)) != CLS_OK)
    return fail("cls_alloc", rc);
  if ((rc = cls_upload(ctx, 0, a, 0, in, sizeof in)) != CLS_OK)
    return fail("cls_upload", rc);
  cls_arg args[] = {CLS_IN(a), CLS_OUT(b)};
  if ((rc = cls_launch(ctx, 1, k, 1, &global, NULL, 2, args)) != CLS_OK)
    return fail("cls_launch", rc);
  cls_report *report = NULL;
  if ((rc = cls_download(ctx, 1, b, 0, out, sizeof out, &report)) != CLS_OK) {
    if (report)
      fprintf(stderr, "%s\n", cls_report_text(report));
    cls_report_free(report);
    return fail("cls_download", rc);
  }
  for (int i = 0; i < N; i++)
    if (out[i] != 2 * in[i]) {
      fprintf(stderr, "consumer: element %d is %d, not %d\n", i, out[i], 2 * in[i]);
      return 1;
    }
  cls_free(ctx, a);
  cls_free(ctx, b);
  cls_program_release(ctx, prog);
  cls_context_destroy(ctx);
  printf("consumer: clstream %s: %d elements doubled right\n", cls_version_string(), N);
  return 0;
}
