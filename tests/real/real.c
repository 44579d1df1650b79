/* What the corpus programs share: building each side, the audit of
 * CLS_IN bindings, small helpers, the list. */
#include "real.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct real_program *const real_corpus[REAL_COUNT] = {
    &real_histogram, &real_reduce, &real_scan,      &real_stencil,
    &real_spmv,      &real_bfs,    &real_transpose, &real_matmul, &real_nbody,
    &real_sort,      &real_tiles};

char real_error[1024];
const char *real_raw_built_src, *real_cls_built_src;
const char *real_raw_built_opts, *real_cls_built_opts;
int real_audit;
unsigned real_in_writable, real_in_unknown, real_launches;

/* Keeps the first failure: what cleanup meets after it is a consequence. */
int real_fail(const char *fmt, ...) {
  if (real_error[0])
    return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(real_error, sizeof real_error, fmt, ap);
  va_end(ap);
  return -1;
}

int real_raw_open(struct real_raw *r) {
  memset(r, 0, sizeof *r);
  struct cls_device_info info;
  int rc = cls_device_select(getenv("CLS_DEVICE"), &info);
  if (rc != 0)
    return real_fail("no device: %s: %s", cls_err_name(rc), cls_last_error_detail());
  cl_platform_id plats[16];
  cl_uint np = 0, nd = 0;
  cl_device_id devs[64];
  cl_int crc = clGetPlatformIDs(16, plats, &np);
  if (crc == CL_SUCCESS && (cl_uint)info.platform_index >= np)
    crc = CL_INVALID_PLATFORM;
  if (crc == CL_SUCCESS)
    crc = clGetDeviceIDs(plats[info.platform_index], CL_DEVICE_TYPE_ALL, 64, devs, &nd);
  if (crc == CL_SUCCESS && (cl_uint)info.device_index >= nd)
    crc = CL_INVALID_DEVICE;
  if (crc != CL_SUCCESS)
    return real_fail("raw: the device: %s", cls_cl_status_name(crc));
  r->dev = devs[info.device_index];
  r->ctx = clCreateContext(NULL, 1, &r->dev, NULL, NULL, &crc);
  if (crc != CL_SUCCESS)
    return real_fail("raw: clCreateContext: %s", cls_cl_status_name(crc));
  for (int i = 0; i < REAL_QUEUES; i++) {
    r->q[i] = clCreateCommandQueue(r->ctx, r->dev, 0, &crc);
    if (crc != CL_SUCCESS) {
      real_raw_close(r);
      return real_fail("raw: clCreateCommandQueue: %s", cls_cl_status_name(crc));
    }
  }
  return 0;
}

void real_raw_close(struct real_raw *r) {
  for (int i = 0; i < REAL_QUEUES; i++)
    if (r->q[i])
      clReleaseCommandQueue(r->q[i]);
  if (r->ctx)
    clReleaseContext(r->ctx);
  memset(r, 0, sizeof *r);
}

int real_raw_build(const struct real_raw *r, const struct real_program *p, cl_program *prog,
                   cl_kernel *k) {
  cl_int rc;
  memset(k, 0, REAL_MAX_KERNELS * sizeof *k);
  real_raw_built_src = p->src;
  real_raw_built_opts = REAL_BUILD_OPTIONS;
  const char *src = p->src;
  *prog = clCreateProgramWithSource(r->ctx, 1, &src, NULL, &rc);
  if (rc != CL_SUCCESS)
    return real_fail("raw: clCreateProgramWithSource(%s): %s", p->name, cls_cl_status_name(rc));
  rc = clBuildProgram(*prog, 1, &r->dev, REAL_BUILD_OPTIONS, NULL, NULL);
  if (rc != CL_SUCCESS) {
    char log[768] = "";
    clGetProgramBuildInfo(*prog, r->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    clReleaseProgram(*prog);
    *prog = NULL;
    return real_fail("raw: clBuildProgram(%s): %s: %s", p->name, cls_cl_status_name(rc), log);
  }
  for (int i = 0; i < REAL_MAX_KERNELS && p->kernels[i]; i++) {
    k[i] = clCreateKernel(*prog, p->kernels[i], &rc);
    if (rc != CL_SUCCESS) {
      real_raw_unbuild(*prog, k);
      *prog = NULL;
      return real_fail("raw: clCreateKernel(%s): %s", p->kernels[i], cls_cl_status_name(rc));
    }
  }
  return 0;
}

void real_raw_unbuild(cl_program prog, cl_kernel *k) {
  for (int i = 0; i < REAL_MAX_KERNELS; i++)
    if (k[i])
      clReleaseKernel(k[i]);
  memset(k, 0, REAL_MAX_KERNELS * sizeof *k);
  if (prog)
    clReleaseProgram(prog);
}

int real_cls_build(cls_context *ctx, const struct real_program *p, cls_kernel **k) {
  cls_program *prog = NULL;
  real_cls_built_src = p->src;
  real_cls_built_opts = REAL_BUILD_OPTIONS;
  int rc = cls_program_build(ctx, p->src, REAL_BUILD_OPTIONS, &prog);
  if (rc != 0)
    return real_fail("clstream: cls_program_build(%s): %s: %s", p->name, cls_err_name(rc),
                     cls_last_error_detail());
  for (int i = 0; i < REAL_MAX_KERNELS && p->kernels[i]; i++) {
    rc = cls_kernel_get(ctx, prog, p->kernels[i], &k[i]);
    if (rc != 0)
      return real_fail("clstream: cls_kernel_get(%s): %s: %s", p->kernels[i], cls_err_name(rc),
                       cls_last_error_detail());
  }
  return 0;
}

int real_launch(cls_context *ctx, int stream, cls_kernel *k, unsigned dims, const size_t *g,
                const size_t *l, size_t nargs, const cls_arg *args) {
  return real_launch_offset(ctx, stream, k, dims, NULL, g, l, nargs, args);
}

int real_launch_offset(cls_context *ctx, int stream, cls_kernel *k, unsigned dims,
                       const size_t *o, const size_t *g, const size_t *l, size_t nargs,
                       const cls_arg *args) {
  real_launches++;
  if (real_audit) {
    struct cls_kernel_info ki = {.version = CLS_KERNEL_INFO_VERSION};
    if (cls_kernel_info(k, &ki) == 0)
      for (size_t i = 0; i < nargs && i < CLS_MAX_ARGS; i++) {
        if (args[i].kind != CLS_ARG_BUFFER || args[i].access != CLS_READ)
          continue;
        if (ki.args[i].access == CLS_READ_WRITE)
          real_in_writable++;
        else if (ki.args[i].access == 0)
          real_in_unknown++;
      }
  }
  int rc = o ? cls_launch_offset(ctx, stream, k, dims, o, g, l, nargs, args)
             : cls_launch(ctx, stream, k, dims, g, l, nargs, args);
  if (rc != 0)
    real_fail("clstream: cls_launch(%s, stream %d): %s: %s", cls_kernel_name(k), stream,
              cls_err_name(rc), cls_last_error_detail());
  return rc;
}

int real_raw_buffer(const struct real_raw *r, int q, size_t size, const void *init,
                    cl_mem *out) {
  cl_int rc;
  *out = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, size, NULL, &rc);
  if (rc != CL_SUCCESS)
    return real_fail("raw: clCreateBuffer(%zu): %s", size, cls_cl_status_name(rc));
  if (init) {
    rc = clEnqueueWriteBuffer(r->q[q], *out, CL_TRUE, 0, size, init, 0, NULL, NULL);
    if (rc != CL_SUCCESS)
      return real_fail("raw: clEnqueueWriteBuffer(%zu): %s", size, cls_cl_status_name(rc));
  }
  return 0;
}

int real_raw_args(cl_kernel k, int n, ...) {
  va_list ap;
  va_start(ap, n);
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < n && rc == CL_SUCCESS; i++) {
    size_t size = va_arg(ap, size_t);
    const void *v = va_arg(ap, const void *);
    rc = clSetKernelArg(k, (cl_uint)i, size, v);
    if (rc != CL_SUCCESS)
      real_fail("raw: clSetKernelArg(%d): %s", i, cls_cl_status_name(rc));
  }
  va_end(ap);
  return rc == CL_SUCCESS ? 0 : -1;
}

int real_cls_buffer(cls_context *ctx, int stream, size_t size, const void *init,
                    cls_buffer *out) {
  int rc = cls_alloc(ctx, stream, size, out);
  if (rc == 0 && init)
    rc = cls_upload(ctx, stream, *out, 0, init, size);
  if (rc != 0)
    return real_fail("clstream: %s(%zu, stream %d): %s: %s", init ? "cls_alloc/upload" : "cls_alloc",
                     size, stream, cls_err_name(rc), cls_last_error_detail());
  return 0;
}

int real_cls_download(cls_context *ctx, int stream, cls_buffer b, void *dst, size_t size) {
  cls_report *rep = NULL;
  int rc = cls_download(ctx, stream, b, 0, dst, size, &rep);
  if (rc != 0)
    real_fail("clstream: cls_download(%zu, stream %d): %s: %s", size, stream, cls_err_name(rc),
              rep ? cls_report_text(rep) : cls_last_error_detail());
  cls_report_free(rep);
  return rc == 0 ? 0 : -1;
}
