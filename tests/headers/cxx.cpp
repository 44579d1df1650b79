// A C++ user of every public header (<clstream/mpi.h> when MPI is built):
// built with -std=c++11 and -std=c++17, -pedantic -Wall -Wextra -Werror
// (Makefile.am), so a header change that is not at home in C++ fails
// `make check`.  It also runs: each argument
// macro must build the cls_arg a C compound literal would.
#include <clstream.h>
#include <clstream/cl.h>
#include <clstream/stream.h>
#include <clstream/driver.h>
#include <clstream/wire.h>
#ifdef CLS_HEADER_TEST_MPI /* configure found MPI: libclstream-mpi's header too */
#include <clstream/mpi.h>
#endif

#include <cstdio>
#include <cstring>

static int failures;

static void expect(bool ok, const char *what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    failures++;
  }
}

static void expect_buffer(const cls_arg &a, int access, cls_buffer b, const char *what) {
  expect(a.kind == CLS_ARG_BUFFER && a.access == access && a.buffer.bits == b.bits &&
             a.value == NULL && a.size == 0,
         what);
}

int main() {
  cls_buffer none = CLS_BUFFER_NULL;
  cls_buffer a, b;
  a.bits = 0x1234;
  b.bits = 0x5678;
  float f = 2.5f;
  cls_arg args[] = {CLS_IN(a), CLS_OUT(b), CLS_INOUT(a), CLS_ARG(b), CLS_SCALAR(f),
                    CLS_LOCAL(256), CLS_NULL_PTR};

  expect(none.bits == 0, "CLS_BUFFER_NULL is the zero handle");
  expect(sizeof args / sizeof args[0] == 7, "seven arguments");
  expect_buffer(args[0], CLS_READ, a, "CLS_IN");
  expect_buffer(args[1], CLS_WRITE, b, "CLS_OUT");
  expect_buffer(args[2], CLS_READ_WRITE, a, "CLS_INOUT");
  expect_buffer(args[3], CLS_ACCESS_INFER, b, "CLS_ARG");
  expect(CLS_ACCESS_INFER == 4, "CLS_ACCESS_INFER is 4");
  expect(args[4].kind == CLS_ARG_SCALAR && args[4].value == &f && args[4].size == sizeof f &&
             args[4].buffer.bits == 0 && args[4].access == 0,
         "CLS_SCALAR");
  expect(args[5].kind == CLS_ARG_LOCAL && args[5].size == 256 && args[5].value == NULL &&
             args[5].buffer.bits == 0 && args[5].access == 0,
         "CLS_LOCAL");
  expect(args[6].kind == CLS_ARG_NULL && args[6].size == 0 && args[6].value == NULL &&
             args[6].buffer.bits == 0 && args[6].access == 0,
         "CLS_NULL_PTR");

  // The declarations link from C++ (extern "C"): calls that need no device.
  expect(std::strcmp(cls_err_name(CLS_EINVAL), "CLS_EINVAL") == 0, "cls_err_name");
  expect(cls_strerror(CLS_OK)[0] != '\0', "cls_strerror");
  expect(cls_version_string()[0] != '\0', "cls_version_string");
  expect(cls_launch_offset(nullptr, 0, nullptr, 1, nullptr, nullptr, nullptr, 0, nullptr) == CLS_EINVAL,
         "cls_launch_offset refuses a NULL context");
  expect(cls_opencl_stream_factory()->version == CLS_STREAM_FACTORY_VERSION,
         "cls_opencl_stream_factory");
  struct cls_quirks q;
  q.version = CLS_QUIRKS_VERSION;
  expect(q.version >= 1 && CLS_QUIRK_UNKNOWN < 0, "cls_quirks");
  cl_int status = CL_SUCCESS;
  expect(status == 0, "<clstream/cl.h> gives cl_int");

  if (failures == 0)
    std::printf("PASS: the public headers from C++ %ld\n", static_cast<long>(__cplusplus));
#ifdef CLS_HEADER_TEST_MPI
  cls_mpi *mpi = NULL;
  cls_mpi_request *request = NULL;
  expect(mpi == NULL && request == NULL && sizeof(MPI_Comm) > 0, "<clstream/mpi.h> types");
#endif
  return failures ? 1 : 0;
}
