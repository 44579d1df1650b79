/* Internal: cl_khr_command_buffer on a device -- its entry points, and
 * whether its command buffers beat its single enqueues (the probe that
 * CLS_CAPTURE=auto follows).  cmdbuf.c; the capture backend that records
 * them is src/api/capture.c. */
#ifndef CLS_CMDBUF_H
#define CLS_CMDBUF_H

#include "util/util.h"

#include <CL/cl_ext.h>

struct cls__cb_api {
  clCreateCommandBufferKHR_fn create;
  clFinalizeCommandBufferKHR_fn finalize;
  clReleaseCommandBufferKHR_fn release;
  clEnqueueCommandBufferKHR_fn enqueue;
  clCommandNDRangeKernelKHR_fn ndrange;
  clCommandCopyBufferKHR_fn copy;
  clCommandFillBufferKHR_fn fill;
  bool simultaneous; /* CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR */
};

/* The entry points where `device` offers cl_khr_command_buffer (and needs
 * no queue property for it), else NULL.  Looked up once per device for
 * the process (thread-safe). */
const struct cls__cb_api *cls__cb_api(cl_platform_id platform, cl_device_id device);

/* The probe's verdict for `device`: a command buffer of CLS__CB_PROBE_N
 * tiny launches enqueued CLS__CB_PROBE_REPS times against the same
 * launches enqueued one by one, on a private in-order queue, in
 * CLS__CB_PROBE_ROUNDS alternating rounds after a warm-up; the fastest
 * round of each side is compared.  *ratio: command buffers' time over
 * single enqueues' (0 when the probe could not run).  True when the
 * command buffers are faster by 5% or more.  Run once per device for the
 * process (about 35 ms on PoCL here), then cached; *probed_now says
 * whether this call ran it. */
#define CLS__CB_PROBE_N 50
#define CLS__CB_PROBE_REPS 20
#define CLS__CB_PROBE_ROUNDS 7
bool cls__cb_faster(cl_context clctx, cl_platform_id platform, cl_device_id device,
                    double *ratio, bool *probed_now);

/* Probes run in this process (tests: the cache). */
unsigned cls__cb_probes_run(void);

#endif /* CLS_CMDBUF_H */
