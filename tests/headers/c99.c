/* A C99 user of every public header (<clstream/mpi.h> when MPI is built):
 * built with -std=c99 -pedantic -Wall -Wextra -Werror (Makefile.am), so the
 * headers stay C99 and the argument macros stay compound literals that an
 * array in a function can hold. */
#include <clstream.h>
#include <clstream/cl.h>
#include <clstream/stream.h>
#include <clstream/driver.h>
#include <clstream/wire.h>
#ifdef CLS_HEADER_TEST_MPI /* configure found MPI: libclstream-mpi's header too */
#include <clstream/mpi.h>
#endif

#include <stdio.h>
#include <string.h>

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    failures++;
  }
}

static void expect_buffer(const cls_arg *a, int access, cls_buffer b, const char *what) {
  expect(a->kind == CLS_ARG_BUFFER && a->access == access && a->buffer.bits == b.bits &&
             a->value == NULL && a->size == 0,
         what);
}

int main(void) {
  cls_buffer none = CLS_BUFFER_NULL;
  cls_buffer a = {0x1234}, b = {0x5678};
  float f = 2.5f;
  cls_arg args[] = {CLS_IN(a), CLS_OUT(b), CLS_INOUT(a), CLS_ARG(b), CLS_SCALAR(f),
                    CLS_LOCAL(256), CLS_NULL_PTR};
  cl_int status = CL_SUCCESS;

  expect(none.bits == 0, "CLS_BUFFER_NULL is the zero handle");
  expect(sizeof args / sizeof args[0] == 7, "seven arguments");
  expect_buffer(&args[0], CLS_READ, a, "CLS_IN");
  expect_buffer(&args[1], CLS_WRITE, b, "CLS_OUT");
  expect_buffer(&args[2], CLS_READ_WRITE, a, "CLS_INOUT");
  expect_buffer(&args[3], CLS_ACCESS_INFER, b, "CLS_ARG");
  expect(args[4].kind == CLS_ARG_SCALAR && args[4].value == &f && args[4].size == sizeof f,
         "CLS_SCALAR");
  expect(args[5].kind == CLS_ARG_LOCAL && args[5].size == 256 && args[5].value == NULL,
         "CLS_LOCAL");
  expect(args[6].kind == CLS_ARG_NULL && args[6].size == 0 && args[6].value == NULL &&
             args[6].buffer.bits == 0 && args[6].access == 0,
         "CLS_NULL_PTR");
  expect(strcmp(cls_err_name(CLS_EINVAL), "CLS_EINVAL") == 0, "cls_err_name");
  expect(cls_launch_offset(NULL, 0, NULL, 1, NULL, NULL, NULL, 0, NULL) == CLS_EINVAL,
         "cls_launch_offset refuses a NULL context");
  expect(cls_opencl_stream_factory()->version == CLS_STREAM_FACTORY_VERSION,
         "cls_opencl_stream_factory");
  expect(status == 0, "<clstream/cl.h> gives cl_int");

  if (failures == 0)
    printf("PASS: the public headers from C99\n");
#ifdef CLS_HEADER_TEST_MPI
  cls_mpi *mpi = NULL;
  cls_mpi_request *request = NULL;
  expect(mpi == NULL && request == NULL && sizeof(MPI_Comm) > 0, "<clstream/mpi.h> types");
#endif
  return failures ? 1 : 0;
}
