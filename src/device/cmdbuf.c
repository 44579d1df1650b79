/* cl_khr_command_buffer: the entry points of a device that offers it, and
 * the probe that says whether its command buffers are worth using.  Both
 * cached per cl_device_id for the process, behind one mutex (the quirks'
 * way, quirks.c). */
#include "cmdbuf.h"
#include "util/settle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_CACHED 16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  cl_device_id device;
  bool looked, has, probed, faster;
  double ratio;
  struct cls__cb_api api;
} cache[MAX_CACHED];
static size_t ncached;
static atomic_uint probes_run;

unsigned cls__cb_probes_run(void) { return atomic_load(&probes_run); }

/* The device's cache entry (lock held), NULL when the cache is full. */
static size_t entry_of(cl_device_id device) {
  for (size_t i = 0; i < ncached; i++)
    if (cache[i].device == device)
      return i;
  if (ncached == MAX_CACHED)
    return MAX_CACHED;
  memset(&cache[ncached], 0, sizeof cache[ncached]);
  cache[ncached].device = device;
  return ncached++;
}

static bool has_extension(cl_device_id d) {
  size_t n = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || !n)
    return false;
  char *ext = malloc(n + 1);
  if (!ext)
    return false;
  bool has = false;
  if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS) {
    ext[n] = 0;
    /* The whole name: cl_khr_command_buffer_mutable_dispatch is another. */
    for (char *p = strstr(ext, "cl_khr_command_buffer"); p && !has;
         p = strstr(p + 1, "cl_khr_command_buffer")) {
      char after = p[sizeof "cl_khr_command_buffer" - 1];
      has = (p == ext || p[-1] == ' ') && (after == ' ' || after == 0);
    }
  }
  free(ext);
  return has;
}

static void look_up(cl_platform_id p, cl_device_id d, struct cls__cb_api *a, bool *has) {
  *has = false;
  if (!has_extension(d))
    return;
  cl_device_command_buffer_capabilities_khr caps = 0;
  cl_command_queue_properties req = 0;
  if (clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, NULL) !=
          CL_SUCCESS ||
      clGetDeviceInfo(d, CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES_KHR, sizeof req,
                      &req, NULL) != CL_SUCCESS)
    return;
  if (req) /* clstream's queues are made without them */
    return;
#define GET(field, name) a->field = (name##_fn)clGetExtensionFunctionAddressForPlatform(p, #name)
  GET(create, clCreateCommandBufferKHR);
  GET(finalize, clFinalizeCommandBufferKHR);
  GET(release, clReleaseCommandBufferKHR);
  GET(enqueue, clEnqueueCommandBufferKHR);
  GET(ndrange, clCommandNDRangeKernelKHR);
  GET(copy, clCommandCopyBufferKHR);
  GET(fill, clCommandFillBufferKHR);
#undef GET
  a->simultaneous = caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR;
  *has = a->create && a->finalize && a->release && a->enqueue && a->ndrange && a->copy &&
         a->fill;
}

const struct cls__cb_api *cls__cb_api(cl_platform_id platform, cl_device_id device) {
  pthread_mutex_lock(&lock);
  size_t i = entry_of(device);
  const struct cls__cb_api *api = NULL;
  if (i < MAX_CACHED) {
    if (!cache[i].looked) {
      look_up(platform, device, &cache[i].api, &cache[i].has);
      cache[i].looked = true;
    }
    api = cache[i].has ? &cache[i].api : NULL;
  }
  pthread_mutex_unlock(&lock);
  return api;
}

static const char probe_src[] = "kernel void cls_cb_probe(global int *x) { x[get_global_id(0)] += 1; }";

/* The measurement: 0 when it could not run. */
static double measure(cl_context c, cl_device_id d, const struct cls__cb_api *a) {
  double ratio = 0;
  cl_int rc;
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &rc);
  if (!q)
    return 0;
  const char *src = probe_src;
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &rc);
  cl_kernel k = NULL;
  cl_mem m = NULL;
  cl_command_buffer_khr cb = NULL;
  if (!prog || clBuildProgram(prog, 1, &d, NULL, NULL, NULL) != CL_SUCCESS)
    goto out;
  if (!(k = clCreateKernel(prog, "cls_cb_probe", &rc)))
    goto out;
  if (!(m = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * sizeof(cl_int), NULL, &rc)) ||
      clSetKernelArg(k, 0, sizeof m, &m) != CL_SUCCESS)
    goto out;
  cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                              CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  if (!(cb = a->create(1, &q, a->simultaneous ? props : NULL, &rc)))
    goto out;
  size_t g = 64;
  cl_sync_point_khr prev = 0, sp;
  for (int i = 0; i < CLS__CB_PROBE_N; i++) {
    if (a->ndrange(cb, NULL, NULL, k, 1, NULL, &g, NULL, i ? 1 : 0, i ? &prev : NULL, &sp,
                   NULL) != CL_SUCCESS)
      goto out;
    prev = sp;
  }
  if (a->finalize(cb) != CL_SUCCESS)
    goto out;
  /* The fastest round of each side: on a busy host the other rounds
   * measure the neighbours (paired medians swing 0.4x-3x here, the
   * minima within 10%). */
  uint64_t best_cb = UINT64_MAX, best_single = UINT64_MAX;
  for (int round = -1; round < CLS__CB_PROBE_ROUNDS; round++) { /* -1: warm-up */
    uint64_t t0 = cls__now_ns();
    for (int i = 0; i < CLS__CB_PROBE_REPS; i++)
      if (a->enqueue(1, &q, cb, 0, NULL, NULL) != CL_SUCCESS || (!a->simultaneous && clFinish(q)))
        goto out;
    if (clFinish(q) != CL_SUCCESS)
      goto out;
    uint64_t t1 = cls__now_ns();
    for (int i = 0; i < CLS__CB_PROBE_REPS * CLS__CB_PROBE_N; i++)
      if (clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS)
        goto out;
    if (clFinish(q) != CL_SUCCESS)
      goto out;
    uint64_t t2 = cls__now_ns();
    if (round >= 0 && t1 - t0 < best_cb)
      best_cb = t1 - t0;
    if (round >= 0 && t2 - t1 < best_single)
      best_single = t2 - t1;
  }
  ratio = (double)best_cb / (double)(best_single > 0 ? best_single : 1);
out:
  clFinish(q);
  if (cb)
    a->release(cb);
  if (m)
    clReleaseMemObject(m);
  if (k)
    clReleaseKernel(k);
  if (prog)
    clReleaseProgram(prog);
  clReleaseCommandQueue(q);
  return ratio;
}

bool cls__cb_faster(cl_context clctx, cl_platform_id platform, cl_device_id device,
                    double *ratio, bool *probed_now) {
  *ratio = 0;
  *probed_now = false;
  const struct cls__cb_api *a = cls__cb_api(platform, device);
  if (!a)
    return false;
  /* One probe per device, whoever asks first: the lock is held through
   * it (a few milliseconds, once). */
  pthread_mutex_lock(&lock);
  size_t i = entry_of(device);
  bool faster = false;
  if (i < MAX_CACHED) {
    if (!cache[i].probed) {
      cache[i].ratio = measure(clctx, device, a);
      cache[i].faster = cache[i].ratio > 0 && cache[i].ratio <= 0.95;
      cache[i].probed = true;
      *probed_now = true;
      atomic_fetch_add(&probes_run, 1);
    }
    *ratio = cache[i].ratio;
    faster = cache[i].faster;
  }
  pthread_mutex_unlock(&lock);
  return faster;
}
