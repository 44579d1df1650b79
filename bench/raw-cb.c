/* clstream-bench's raw cl_khr_command_buffer side: the *-replay
 * workloads and stencil-100 as hand-written command-buffer code would run
 * them -- each recorded once (the same iterations clstream's capture
 * holds, the dependencies as sync points), then enqueued until it made
 * the plain rows' launches.  One queue: the extension's command buffers
 * are per queue (the fan's consumers may still overlap through their sync
 * points). */
#include "common.h"

#include <CL/cl_ext.h>
#include <string.h>

static struct {
  clCreateCommandBufferKHR_fn create;
  clFinalizeCommandBufferKHR_fn finalize;
  clEnqueueCommandBufferKHR_fn enqueue;
  clCommandNDRangeKernelKHR_fn ndrange;
  cl_command_buffer_khr tiny, pp, fan, sten;
  struct raw *r;
} cb;

static cl_sync_point_khr launch(cl_command_buffer_khr b, cl_kernel k, size_t g, cl_uint nw,
                                const cl_sync_point_khr *w) {
  cl_sync_point_khr sp;
  CL(cb.ndrange(b, NULL, NULL, k, 1, NULL, &g, NULL, nw, nw ? w : NULL, &sp, NULL));
  return sp;
}

static cl_command_buffer_khr begin(struct raw *r) {
  cl_int rc;
  cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                              CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_command_buffer_khr b = cb.create(1, &r->q[0], props, &rc);
  CL(rc);
  return b;
}

bool raw_cb_init(struct raw *r) {
  char ext[16384] = "";
  clGetDeviceInfo(r->d, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  bool has = false;
  for (char *p = strstr(ext, "cl_khr_command_buffer"); p && !has;
       p = strstr(p + 1, "cl_khr_command_buffer")) {
    char after = p[sizeof "cl_khr_command_buffer" - 1];
    has = after == ' ' || after == 0;
  }
  cl_device_command_buffer_capabilities_khr caps = 0;
  if (!has || clGetDeviceInfo(r->d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps,
                              &caps, NULL) != CL_SUCCESS ||
      !(caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR))
    return false;
  cl_platform_id p;
  CL(clGetDeviceInfo(r->d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL));
#define GET(f, name) cb.f = (name##_fn)clGetExtensionFunctionAddressForPlatform(p, #name)
  GET(create, clCreateCommandBufferKHR);
  GET(finalize, clFinalizeCommandBufferKHR);
  GET(enqueue, clEnqueueCommandBufferKHR);
  GET(ndrange, clCommandNDRangeKernelKHR);
#undef GET
  if (!cb.create || !cb.finalize || !cb.enqueue || !cb.ndrange)
    return false;
  cb.r = r;
  /* tiny-chain: 100 launches, each after the one before. */
  cb.tiny = begin(r);
  cl_sync_point_khr prev = 0;
  for (int i = 0; i < 100; i++)
    prev = launch(cb.tiny, r->tiny, small_g, i > 0, &prev);
  CL(cb.finalize(cb.tiny));
  /* ping-pong: 100 iterations of A -> B, B -> A. */
  cb.pp = begin(r);
  for (int i = 0; i < 200; i++)
    prev = launch(cb.pp, i % 2 ? r->step_ba : r->step_ab, small_g, i > 0, &prev);
  CL(cb.finalize(cb.pp));
  /* fan: 50 iterations of a producer, four consumers after it, the
   * reducer after them. */
  cb.fan = begin(r);
  for (int it = 0; it < 50; it++) {
    cl_sync_point_khr p0 = launch(cb.fan, r->prod, small_g, it > 0, &prev), c[4];
    for (int k = 0; k < 4; k++)
      c[k] = launch(cb.fan, r->cons[k], small_g, 1, &p0);
    prev = launch(cb.fan, r->red, small_g, 4, c);
  }
  CL(cb.finalize(cb.fan));
  /* stencil-100: one step, there and back. */
  cb.sten = begin(r);
  prev = launch(cb.sten, r->sten_ab, STENCIL_LEN, 0, NULL);
  launch(cb.sten, r->sten_ba, STENCIL_LEN, 1, &prev);
  CL(cb.finalize(cb.sten));
  return true;
}

static double run(cl_command_buffer_khr b, int times) {
  double t = bench_now();
  for (int i = 0; i < times; i++)
    CL(cb.enqueue(1, &cb.r->q[0], b, 0, NULL, NULL));
  CL(clFinish(cb.r->q[0]));
  return bench_now() - t;
}

double raw_cb_tiny(void *r) {
  (void)r;
  return run(cb.tiny, TINY_N / 100);
}
double raw_cb_pingpong(void *r) {
  (void)r;
  return run(cb.pp, PP_N / 100);
}
double raw_cb_fan(void *r) {
  (void)r;
  return run(cb.fan, FAN_N / 50);
}
double raw_cb_stencil(void *r) {
  (void)r;
  return run(cb.sten, STENCIL_N);
}
