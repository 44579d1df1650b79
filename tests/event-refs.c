/* Preloaded into a test program (LD_PRELOAD, tests/early.sh): counts the
 * references the program holds on each OpenCL event it got (from an
 * enqueue, a user event, a command buffer's enqueue) and reports every
 * use of an event after the program released its last one -- in a wait
 * list, a wait, a retain or a release.  The runtime may keep such an event
 * alive for a while (PoCL does until its command ends), so the bytes come
 * out right, but the handle is no longer the program's: what a lent event
 * (stream.h, last_event) or one let go early (F8a, supersede) must never
 * become.  A process that saw one exits with status 99 when it ends.
 *
 * Only events of the functions below are tracked; an event of another
 * function is ignored, and one that reuses the address of a released one
 * would read as a use after release, so every function clstream and the
 * tests enqueue with is here.  Not under the sanitizers (their runtime
 * must come first). */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CAP (1u << 16)

static struct {
  cl_event ev;
  int refs;
  int dead;
} tab[CAP];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long uses_after_release;

/* Open addressing on the event's address; entries are never removed (an
 * address the runtime reuses is born again).  -1: the table is full or
 * the event unknown (make = 0). */
static int slot(cl_event e, int make) {
  size_t h = ((uintptr_t)e >> 4) % CAP;
  for (size_t i = 0; i < CAP; i++) {
    size_t j = (h + i) % CAP;
    if (tab[j].ev == e)
      return (int)j;
    if (!tab[j].ev) {
      if (!make)
        return -1;
      tab[j].ev = e;
      return (int)j;
    }
  }
  return -1;
}

static void born(const cl_event *out) {
  if (!out || !*out)
    return;
  pthread_mutex_lock(&mu);
  int j = slot(*out, 1);
  if (j >= 0) {
    tab[j].refs = 1;
    tab[j].dead = 0;
  }
  pthread_mutex_unlock(&mu);
}

static void check(const char *what, cl_uint n, const cl_event *w) {
  pthread_mutex_lock(&mu);
  for (cl_uint i = 0; w && i < n; i++) {
    int j = slot(w[i], 0);
    if (j >= 0 && tab[j].dead) {
      uses_after_release++;
      fprintf(stderr, "event-refs: %s uses event %p after the program released it\n", what,
              (void *)w[i]);
    }
  }
  pthread_mutex_unlock(&mu);
}

__attribute__((destructor)) static void report(void) {
  if (!uses_after_release)
    return;
  fprintf(stderr, "event-refs: %lu use(s) of released events\n", uses_after_release);
  fflush(stderr);
  _exit(99);
}

#define NEXT(name)                                                                               \
  static __typeof__(&name) real;                                                                 \
  if (!real)                                                                                     \
  real = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

/* An enqueue: its wait list checked, its event born. */
#define ENQUEUE(name, n, w, e, ...)                                                              \
  NEXT(name);                                                                                    \
  check(#name, n, w);                                                                            \
  cl_int rc = real(__VA_ARGS__);                                                                 \
  if (rc == CL_SUCCESS)                                                                          \
    born(e);                                                                                     \
  return rc

CL_API_ENTRY cl_int CL_API_CALL clRetainEvent(cl_event e) {
  NEXT(clRetainEvent);
  check("clRetainEvent", 1, &e);
  pthread_mutex_lock(&mu);
  int j = slot(e, 0);
  if (j >= 0 && !tab[j].dead)
    tab[j].refs++;
  pthread_mutex_unlock(&mu);
  return real(e);
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseEvent(cl_event e) {
  NEXT(clReleaseEvent);
  check("clReleaseEvent", 1, &e);
  pthread_mutex_lock(&mu);
  int j = slot(e, 0);
  if (j >= 0 && !tab[j].dead && --tab[j].refs == 0)
    tab[j].dead = 1;
  pthread_mutex_unlock(&mu);
  return real(e);
}

CL_API_ENTRY cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event *w) {
  NEXT(clWaitForEvents);
  check("clWaitForEvents", n, w);
  return real(n, w);
}

CL_API_ENTRY cl_event CL_API_CALL clCreateUserEvent(cl_context c, cl_int *rc) {
  NEXT(clCreateUserEvent);
  cl_event e = real(c, rc);
  born(&e);
  return e;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k,
                                                       cl_uint d, const size_t *o,
                                                       const size_t *g, const size_t *l,
                                                       cl_uint n, const cl_event *w,
                                                       cl_event *e) {
  ENQUEUE(clEnqueueNDRangeKernel, n, w, e, q, k, d, o, g, l, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n,
                                                            const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueMarkerWithWaitList, n, w, e, q, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n,
                                                             const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueBarrierWithWaitList, n, w, e, q, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem b, const void *p,
                                                    size_t ps, size_t off, size_t sz, cl_uint n,
                                                    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueFillBuffer, n, w, e, q, b, p, ps, off, sz, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool bl,
                                                    size_t off, size_t sz, void *p, cl_uint n,
                                                    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueReadBuffer, n, w, e, q, b, bl, off, sz, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool bl,
                                                     size_t off, size_t sz, const void *p,
                                                     cl_uint n, const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueWriteBuffer, n, w, e, q, b, bl, off, sz, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d,
                                                    size_t so, size_t dof, size_t sz, cl_uint n,
                                                    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueCopyBuffer, n, w, e, q, s, d, so, dof, sz, n, w, e);
}

/* Rect transfers: tests enqueue them in foreign commands
 * (test-foreign.c), whose events clstream then owns. */
CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBufferRect(
    cl_command_queue q, cl_mem b, cl_bool bl, const size_t *bo, const size_t *ho,
    const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, void *p, cl_uint n,
    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueReadBufferRect, n, w, e, q, b, bl, bo, ho, r, brp, bsp, hrp, hsp, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBufferRect(
    cl_command_queue q, cl_mem b, cl_bool bl, const size_t *bo, const size_t *ho,
    const size_t *r, size_t brp, size_t bsp, size_t hrp, size_t hsp, const void *p, cl_uint n,
    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueWriteBufferRect, n, w, e, q, b, bl, bo, ho, r, brp, bsp, hrp, hsp, p, n, w,
          e);
}

CL_API_ENTRY void *CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem b, cl_bool bl,
                                                  cl_map_flags f, size_t off, size_t sz,
                                                  cl_uint n, const cl_event *w, cl_event *e,
                                                  cl_int *rc) {
  NEXT(clEnqueueMapBuffer);
  check("clEnqueueMapBuffer", n, w);
  cl_int st = CL_SUCCESS;
  void *p = real(q, b, bl, f, off, sz, n, w, e, &st);
  if (st == CL_SUCCESS)
    born(e);
  if (rc)
    *rc = st;
  return p;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *p,
                                                        cl_uint n, const cl_event *w,
                                                        cl_event *e) {
  ENQUEUE(clEnqueueUnmapMemObject, n, w, e, q, m, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue q, cl_mem i, cl_bool bl,
                                                    const size_t *o, const size_t *r, size_t rp,
                                                    size_t sp, const void *p, cl_uint n,
                                                    const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueWriteImage, n, w, e, q, i, bl, o, r, rp, sp, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue q, cl_mem i, cl_bool bl,
                                                   const size_t *o, const size_t *r, size_t rp,
                                                   size_t sp, void *p, cl_uint n,
                                                   const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueReadImage, n, w, e, q, i, bl, o, r, rp, sp, p, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue q, cl_mem s, cl_mem d,
                                                   const size_t *so, const size_t *dO,
                                                   const size_t *r, cl_uint n,
                                                   const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueCopyImage, n, w, e, q, s, d, so, dO, r, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue q, cl_mem i, const void *c,
                                                   const size_t *o, const size_t *r, cl_uint n,
                                                   const cl_event *w, cl_event *e) {
  ENQUEUE(clEnqueueFillImage, n, w, e, q, i, c, o, r, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem s,
                                                           cl_mem d, const size_t *so,
                                                           const size_t *r, size_t dof,
                                                           cl_uint n, const cl_event *w,
                                                           cl_event *e) {
  ENQUEUE(clEnqueueCopyImageToBuffer, n, w, e, q, s, d, so, r, dof, n, w, e);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem s,
                                                           cl_mem d, size_t so,
                                                           const size_t *dO, const size_t *r,
                                                           cl_uint n, const cl_event *w,
                                                           cl_event *e) {
  ENQUEUE(clEnqueueCopyBufferToImage, n, w, e, q, s, d, so, dO, r, n, w, e);
}

/* cl_khr_command_buffer's enqueue is reached through the extension
 * lookup, not a symbol: the lookup hands out a wrapper. */
typedef cl_int (*enqueue_cb_fn)(cl_uint, cl_command_queue *, void *, cl_uint, const cl_event *,
                                cl_event *);
static enqueue_cb_fn real_enqueue_cb;

static cl_int enqueue_cb(cl_uint nq, cl_command_queue *qs, void *cb, cl_uint n,
                         const cl_event *w, cl_event *e) {
  check("clEnqueueCommandBufferKHR", n, w);
  cl_int rc = real_enqueue_cb(nq, qs, cb, n, w, e);
  if (rc == CL_SUCCESS)
    born(e);
  return rc;
}

CL_API_ENTRY void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id p,
                                                                         const char *name) {
  NEXT(clGetExtensionFunctionAddressForPlatform);
  void *f = real(p, name);
  if (f && name && strcmp(name, "clEnqueueCommandBufferKHR") == 0) {
    real_enqueue_cb = (enqueue_cb_fn)f;
    return (void *)enqueue_cb;
  }
  return f;
}
