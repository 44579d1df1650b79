/* Vendor quirk probes.
 *
 * What a command does after a failure is implementation-defined, and the
 * vendors measured differ (DESIGN.md, "Facts measured on this machine").
 * On the first use of a device in a process this file asks the device
 * itself, on a private in-order queue, with fills of a small buffer:
 *
 *   dep     waits on a user event, which the probe then fails;
 *   behind  queued after dep on the same queue, waiting on nothing;
 *   fence   queued once both have finished, with a completion callback.
 *
 * dep's status says whether a command queued on a failed event is failed
 * (dependent_fails), behind's whether a failure fails the commands queued
 * after it (queue_poisoned); whether the user event's own callback came
 * before the fence's says whether failed events call their callbacks.  A
 * few last fills, flushed then clFinish'ed, say whether clFinish can
 * return before a flushed command completed (finish_early).  That one is a
 * race on rusticl (its worker thread may be done by then): a 1 is proof, a
 * 0 is not, so its workaround is applied on every device.
 *
 * Nothing here may hang the process, whatever the vendor does:
 *   - dep and behind are enqueued BEFORE the user event fails.  On PoCL a
 *     command enqueued on an event that already failed stays CL_QUEUED
 *     forever, and clFinish or releasing its queue then hangs.
 *   - the queue is flushed only AFTER the user event fails: oclgrind runs
 *     the whole queue inside clFlush, which would wait on the open event.
 *   - every wait is a status poll with a deadline, never clFinish or
 *     clWaitForEvents, except the one clFinish on a queue whose every
 *     command has already finished or can (a plain fill).
 *   - when a deadline passes, the queue and its events are left alone
 *     (leaked): releasing a queue with a stuck command hangs on PoCL.  The
 *     answers are then CLS_QUIRK_UNKNOWN: the worst case.
 *   - no NULL in a wait list (oclgrind segfaults), no kernel (no build:
 *     the probe costs about a millisecond where commands are quick).
 *
 * Answers are cached per cl_device_id for the process, behind one mutex:
 * one probe per device whoever asks first, and a second context on a
 * device costs nothing.
 *
 * One more probe, wg_above_kernel_max, needs a kernel, so it runs on
 * first need instead (cls__quirks_wg), cached the same way: does a
 * work-group larger than the kernel's CL_KERNEL_WORK_GROUP_SIZE, at the
 * device's maximum, run and compute right?  rusticl reports 32 for every
 * kernel and runs 1024; a pre-check that believed it would be stricter
 * than the vendor. */
#include "quirks.h"
#include "util/settle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Bound on one probe's every wait. */
#define DEADLINE_NS (2 * 1000000000ULL)
/* How long a callback may come after its command's status says complete. */
#define CALLBACK_GRACE_NS (100 * 1000000ULL)
#define MAX_CACHED 16
/* Fills of the whole probe buffer queued before the clFinish of step 3. */
#define FINISH_FILLS 4
#define PROBE_BYTES ((size_t)64 << 10)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  cl_device_id device;
  struct cls_quirks quirks;
  bool wg_done;             /* quirks.wg_above_kernel_max is probed */
} cache[MAX_CACHED];
static size_t ncached;
static atomic_uint probes_run, wg_probes_run;

/* Callbacks may come late, from a vendor's thread, even after the probe
 * gave up waiting: they only touch these statics, and only for the probe
 * whose generation they carry. */
static atomic_uintptr_t generation;
static atomic_int user_called, fence_called;

static void CL_CALLBACK on_user(cl_event ev, cl_int status, void *arg) {
  (void)ev, (void)status;
  if ((uintptr_t)arg == atomic_load(&generation))
    atomic_store(&user_called, 1);
}

static void CL_CALLBACK on_fence(cl_event ev, cl_int status, void *arg) {
  (void)ev, (void)status;
  if ((uintptr_t)arg == atomic_load(&generation))
    atomic_store(&fence_called, 1);
}

static void unknown(struct cls_quirks *q) {
  q->probed = 0;
  q->failed_callback = CLS_QUIRK_UNKNOWN;
  q->dependent_fails = CLS_QUIRK_UNKNOWN;
  q->queue_poisoned = CLS_QUIRK_UNKNOWN;
  q->finish_early = CLS_QUIRK_UNKNOWN;
  q->dependent_status = 0;
  q->wg_above_kernel_max = CLS_QUIRK_UNKNOWN; /* cls__quirks_wg, on first need */
  q->kernel_work_group_size = 0;
}

/* How a step of the probe ended: on to the next, not answered (the rest
 * is skipped), or a command that never settled (nothing of the probe may
 * be released then). */
enum { STEP_OK, STEP_SKIP, STEP_STUCK };

/* 2. Callbacks: the user event's, if it ever comes, before the fence's. */
static int probe_callbacks(cl_command_queue queue, cl_mem mem, bool have_cb, uintptr_t gen,
                           uint64_t deadline, struct cls_quirks *q, cl_event *fence) {
  const cl_uint pattern = 0x5a5a5a5au;
  cl_int rc = clEnqueueFillBuffer(queue, mem, &pattern, sizeof pattern, 128, 64, 0, NULL, fence);
  if (rc != CL_SUCCESS)
    return STEP_SKIP;
  bool fence_cb =
      have_cb && clSetEventCallback(*fence, CL_COMPLETE, on_fence, (void *)gen) == CL_SUCCESS;
  clFlush(queue);
  if (!cls__settle_events(fence, 1, deadline))
    return STEP_STUCK;
  if (fence_cb) {
    uint64_t grace = cls__now_ns() + CALLBACK_GRACE_NS;
    while (!atomic_load(&fence_called) && cls__now_ns() < grace)
      cls__nap();
    if (atomic_load(&user_called))
      q->failed_callback = 1;
    else if (atomic_load(&fence_called))
      q->failed_callback = 0;
  }
  return STEP_OK;
}

/* 3. clFinish, on a queue where everything has finished but a few
 * fills: enough work that a vendor whose clFinish does not wait
 * (rusticl hands flushed commands to a worker thread and returns) is
 * caught still working on them. */
static int probe_finish(cl_command_queue queue, cl_mem mem, uint64_t deadline,
                        struct cls_quirks *q, cl_event *late) {
  const cl_uint pattern = 0x5a5a5a5au;
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < FINISH_FILLS && rc == CL_SUCCESS; i++)
    rc = clEnqueueFillBuffer(queue, mem, &pattern, sizeof pattern, 0, PROBE_BYTES, 0, NULL,
                             i == FINISH_FILLS - 1 ? late : NULL);
  if (rc != CL_SUCCESS) {
    clFlush(queue);
    cl_event left; /* a stuck queue's marker stays, with the queue */
    bool settled = *late ? cls__settle_events(late, 1, deadline)
                         : cls__settle_queue(queue, deadline, &left); /* the fills that went in */
    return settled ? STEP_SKIP : STEP_STUCK;
  }
  clFlush(queue);
  if (clFinish(queue) == CL_SUCCESS)
    q->finish_early = cls__event_state(*late) > CL_COMPLETE;
  return cls__settle_events(late, 1, deadline) ? STEP_OK : STEP_STUCK;
}

static void probe(cl_context c, cl_device_id d, struct cls_quirks *q) {
  uint64_t start = cls__now_ns(), deadline = start + DEADLINE_NS;
  const cl_uint pattern = 0x5a5a5a5au;
  cl_event dep = NULL, behind = NULL, fence = NULL, late = NULL;
  bool stuck = false;
  cl_int rc;
  unknown(q);
  uintptr_t gen = atomic_fetch_add(&generation, 1) + 1;
  atomic_store(&user_called, 0);
  atomic_store(&fence_called, 0);

  /* clCreateCommandQueue: the one entry point an OpenCL 1.2 platform has
   * (oclgrind). */
  cl_command_queue queue = clCreateCommandQueue(c, d, 0, &rc);
  if (rc != CL_SUCCESS)
    goto out;
  cl_mem mem = clCreateBuffer(c, CL_MEM_READ_WRITE, PROBE_BYTES, NULL, &rc);
  if (rc != CL_SUCCESS)
    goto release_queue;
  cl_event user = clCreateUserEvent(c, &rc);
  if (rc != CL_SUCCESS)
    goto release_mem;
  bool have_cb =
      clSetEventCallback(user, CL_COMPLETE, on_user, (void *)gen) == CL_SUCCESS;

  /* 1. dep and behind, then the failure (never the other way round). */
  rc = clEnqueueFillBuffer(queue, mem, &pattern, sizeof pattern, 0, 64, 1, &user, &dep);
  if (rc == CL_SUCCESS)
    rc = clEnqueueFillBuffer(queue, mem, &pattern, sizeof pattern, 64, 64, 0, NULL, &behind);
  /* Failed whatever happened above: nothing may be left waiting on it. */
  cl_int urc = clSetUserEventStatus(user, CLS__QUIRK_PROBE_STATUS);
  if (clFlush(queue) != CL_SUCCESS || rc != CL_SUCCESS || urc != CL_SUCCESS) {
    cl_event evs[2] = {dep, behind};
    stuck = !cls__settle_events(evs, 2, deadline);
    goto release_events;
  }
  cl_event evs[2] = {dep, behind};
  if (!cls__settle_events(evs, 2, deadline)) {
    stuck = true;
    goto release_events;
  }
  cl_int sd = cls__event_state(dep), sb = cls__event_state(behind);
  q->dependent_fails = sd < 0;
  q->dependent_status = sd < 0 ? sd : 0;
  q->queue_poisoned = sb < 0;

  int step = probe_callbacks(queue, mem, have_cb, gen, deadline, q, &fence);
  if (step == STEP_OK)
    step = probe_finish(queue, mem, deadline, q, &late);
  if (step != STEP_OK) {
    stuck = step == STEP_STUCK;
    goto release_events;
  }
  q->probed = 1;

release_events:
  if (stuck) {
    /* Releasing a queue that holds a stuck command hangs on PoCL: leave
     * the queue, its events and its buffer to the process. */
    unknown(q);
    goto out;
  }
  if (late)
    clReleaseEvent(late);
  if (fence)
    clReleaseEvent(fence);
  if (behind)
    clReleaseEvent(behind);
  if (dep)
    clReleaseEvent(dep);
  clReleaseEvent(user);
release_mem:
  clReleaseMemObject(mem);
release_queue:
  clReleaseCommandQueue(queue);
out:
  q->probe_ms = (double)(cls__now_ns() - start) / 1e6;
}

void cls__quirks_probe(cl_context clctx, cl_device_id device, struct cls_quirks *out) {
  pthread_mutex_lock(&cache_lock);
  for (size_t i = 0; i < ncached; i++)
    if (cache[i].device == device) {
      *out = cache[i].quirks;
      pthread_mutex_unlock(&cache_lock);
      return;
    }
  /* Probed with the lock held: a second context on the same device waits
   * for the answers rather than probing again. */
  memset(out, 0, sizeof *out);
  out->version = CLS_QUIRKS_VERSION;
  probe(clctx, device, out);
  atomic_fetch_add(&probes_run, 1);
  if (ncached < MAX_CACHED) {
    cache[ncached].device = device;
    cache[ncached].quirks = *out;
    ncached++;
  }
  pthread_mutex_unlock(&cache_lock);
}

unsigned cls__quirks_probes_run(void) { return atomic_load(&probes_run); }

/* ------------------------------------------------------------------ */
/* wg_above_kernel_max                                                 */
/* ------------------------------------------------------------------ */

/* Each work-item reads what the mirror item of its group wrote before
 * the barrier: right only if the whole group really is one work-group. */
static const char wg_source[] =
    "kernel void cls_wg_probe(global int *out, local int *tmp) {\n"
    "  size_t l = get_local_id(0), n = get_local_size(0);\n"
    "  tmp[l] = (int)get_global_id(0);\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[get_global_id(0)] = tmp[n - 1 - l];\n"
    "}\n";
/* Bound on the launch and the read (a JIT may compile at the launch). */
#define WG_DEADLINE_NS (10 * 1000000000ULL)
#define WG_GROUPS 2

/* Launches `group` items per group and checks every element; 1 when all
 * are right, 0 when the launch is refused, fails or computes wrong,
 * CLS_QUIRK_UNKNOWN when it could not tell.  *stuck: a command never
 * finished, and nothing of the probe may be released. */
static int wg_launch(cl_context c, cl_device_id d, cl_kernel k, size_t group, bool *stuck) {
  size_t n = group * WG_GROUPS;
  int verdict = CLS_QUIRK_UNKNOWN;
  cl_event run = NULL, read = NULL;
  cl_int rc;
  cl_int *host = malloc(n * sizeof *host);
  if (!host)
    return CLS_QUIRK_UNKNOWN;
  cl_command_queue queue = clCreateCommandQueue(c, d, 0, &rc);
  if (rc != CL_SUCCESS)
    goto free_host;
  cl_mem mem = clCreateBuffer(c, CL_MEM_READ_WRITE, n * sizeof *host, NULL, &rc);
  if (rc != CL_SUCCESS)
    goto release_queue;
  const cl_int none = -1; /* no element's right value */
  if (clEnqueueFillBuffer(queue, mem, &none, sizeof none, 0, n * sizeof *host, 0, NULL, NULL) !=
          CL_SUCCESS ||
      clSetKernelArg(k, 0, sizeof mem, &mem) != CL_SUCCESS ||
      clSetKernelArg(k, 1, group * sizeof(cl_int), NULL) != CL_SUCCESS)
    goto settle_fill;
  rc = clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, &group, 0, NULL, &run);
  if (rc != CL_SUCCESS) {
    verdict = 0; /* refused by the vendor too: its own limit is real */
    goto settle_fill;
  }
  if (clEnqueueReadBuffer(queue, mem, CL_FALSE, 0, n * sizeof *host, host, 0, NULL, &read) !=
      CL_SUCCESS)
    goto settle_fill;
  clFlush(queue);
  cl_event evs[2] = {run, read};
  if (!cls__settle_events(evs, 2, cls__now_ns() + WG_DEADLINE_NS)) {
    *stuck = true; /* leaked: releasing a queue with a stuck command hangs on PoCL */
    return CLS_QUIRK_UNKNOWN;
  }
  if (cls__event_state(run) < 0 || cls__event_state(read) < 0) {
    verdict = cls__event_state(run) < 0 ? 0 : CLS_QUIRK_UNKNOWN;
    goto release;
  }
  verdict = 1;
  for (size_t i = 0; i < n && verdict; i++) {
    size_t g = i / group, l = i % group;
    verdict = host[i] == (cl_int)(g * group + group - 1 - l);
  }
  goto release;
settle_fill: /* what went in before the failure finishes before the release */
  {
    cl_event left; /* a stuck queue's marker stays, with the rest of the probe */
    if (!cls__settle_queue(queue, cls__now_ns() + WG_DEADLINE_NS, &left)) {
      *stuck = true;
      return CLS_QUIRK_UNKNOWN;
    }
  }
release:
  if (read)
    clReleaseEvent(read);
  if (run)
    clReleaseEvent(run);
  clReleaseMemObject(mem);
release_queue:
  clReleaseCommandQueue(queue);
free_host:
  free(host);
  return verdict;
}

static int wg_probe(cl_context c, cl_device_id d, const struct cls_device_info *info,
                    size_t *reported) {
  *reported = 0;
  size_t group = info->max_work_group_size < info->max_work_item_sizes[0]
                     ? info->max_work_group_size
                     : info->max_work_item_sizes[0];
  if (group == 0 || group * sizeof(cl_int) > info->local_mem_size)
    return CLS_QUIRK_UNKNOWN; /* the probe kernel would not fit */
  int verdict = CLS_QUIRK_UNKNOWN;
  bool stuck = false;
  cl_int rc;
  const char *src = wg_source;
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &rc);
  if (rc != CL_SUCCESS)
    return CLS_QUIRK_UNKNOWN;
  cl_kernel k = NULL;
  if (clBuildProgram(prog, 1, &d, "", NULL, NULL) != CL_SUCCESS)
    goto release_program;
  k = clCreateKernel(prog, "cls_wg_probe", &rc);
  if (rc != CL_SUCCESS || clGetKernelWorkGroupInfo(k, d, CL_KERNEL_WORK_GROUP_SIZE,
                                                   sizeof *reported, reported, NULL) != CL_SUCCESS)
    goto release_kernel;
  if (*reported >= group)
    verdict = 0; /* the kernel's value is the device's: nothing above it to run */
  else
    verdict = wg_launch(c, d, k, group, &stuck);
release_kernel:
  if (stuck)
    return verdict; /* the kernel is held by a command that never finished */
  if (k)
    clReleaseKernel(k);
release_program:
  clReleaseProgram(prog);
  return verdict;
}

int cls__quirks_wg(cl_context clctx, cl_device_id device, const struct cls_device_info *info,
                   size_t *reported) {
  pthread_mutex_lock(&cache_lock);
  size_t i = 0;
  while (i < ncached && cache[i].device != device)
    i++;
  int verdict;
  if (i < ncached && cache[i].wg_done) {
    verdict = cache[i].quirks.wg_above_kernel_max;
    *reported = cache[i].quirks.kernel_work_group_size;
  } else {
    /* With the lock held, as the other probes: one per device. */
    verdict = wg_probe(clctx, device, info, reported);
    atomic_fetch_add(&wg_probes_run, 1);
    if (i < ncached) {
      cache[i].quirks.wg_above_kernel_max = verdict;
      cache[i].quirks.kernel_work_group_size = *reported;
      cache[i].wg_done = true;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return verdict;
}

unsigned cls__quirks_wg_probes_run(void) { return atomic_load(&wg_probes_run); }
