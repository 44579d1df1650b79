/* clstream stream factories.
 *
 * A stream is the unit of ordering a user sees.  What a stream is made of
 * (an OpenCL in-order queue, a fault-injecting wrapper, a queue that does
 * nothing) is decided by a stream factory: this ops struct.  The core never
 * calls clEnqueue* itself; every command goes through a stream's ops.
 *
 * Contract common to every member
 *   - Members are called with the owning context's lock held, never
 *     concurrently for one context; a factory shared by several contexts
 *     must make its own shared state safe.
 *   - Members returning cl_int return CL_SUCCESS or a negative OpenCL status
 *     (the core keeps it reachable through cls_last_cl_status()).
 *   - Wait lists hold only valid events the core owns; a member never keeps
 *     or releases them.  nwait is 0 with wait NULL when there is none.
 *   - `seq` numbers the commands of one stream from 1, in submission order,
 *     with no gaps between commands that were enqueued; a command whose
 *     enqueue failed consumes no number.  poll() reports by these numbers.
 *
 * Versioning: the struct only grows at its end; the core reads members
 * added after version 1 only when `version` says they are there.  Optional
 * members may be NULL and are checked by the core.
 */
#ifndef CLSTREAM_STREAM_H
#define CLSTREAM_STREAM_H

#include <clstream.h>
#include <clstream/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLS_STREAM_FACTORY_VERSION 3 /* 2: last_event; 3: cls_backend's flags */

/* cls_backend.flags: the context is tracing (docs/trace.md).  A factory
 * that can time its commands on the device creates its queues with
 * CL_QUEUE_PROFILING_ENABLE and reports each finished command's device
 * start and end through on_times. */
#define CLS_BACKEND_PROFILE 1u

/* Device start and end (the device's clock, nanoseconds:
 * CL_PROFILING_COMMAND_START and _END) of command `seq` of the factory
 * stream created as `id`; `name` is the kernel's, or "upload",
 * "download", "copy", "fill". */
typedef void (*cls_times_fn)(void *arg, int id, uint64_t seq, const char *name,
                             uint64_t start, uint64_t end);

/* What a factory needs of the context: owned by the context, valid for the
 * lifetime of every stream created with it. */
struct cls_backend {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  int cl_version; /* device version, 120 / 200 / 300 */

  /* Since CLS_STREAM_FACTORY_VERSION 3 (a factory built against an
   * earlier header never reads them). */
  unsigned flags;        /* CLS_BACKEND_PROFILE */
  cls_times_fn on_times; /* set with CLS_BACKEND_PROFILE; else NULL */
  void *times_arg;
};

/* One kernel argument as clSetKernelArg takes it: `value` points at `size`
 * bytes (a cl_mem for buffers), or is NULL for `size` bytes of local
 * memory. */
struct cls_kernel_arg {
  size_t size;
  const void *value;
};

/* A kernel command.  The stream sets the arguments on `kernel` and
 * enqueues it in one go (the core validated them against the kernel); the
 * pointers are valid for the duration of the call only, but for `name`:
 * the kernel's own, valid until the context is destroyed (a profiling
 * factory may keep it for on_times). */
struct cls_kernel_cmd {
  cl_kernel kernel;
  const char *name;
  cl_uint dims;
  const size_t *global;
  const size_t *local; /* NULL: the runtime picks */
  cl_uint nargs;
  const struct cls_kernel_arg *args;
};

/* Called by poll() once for each command found to have failed after it was
 * enqueued, in seq order. */
typedef void (*cls_failed_fn)(void *arg, uint64_t seq, cl_int status);

struct cls_stream_factory {
  unsigned version;        /* CLS_STREAM_FACTORY_VERSION */
  const char *name;        /* short, lower case: "opencl", "fault" */
  const char *description; /* one line */

  /* Creates the backend of stream `id`.  On success *out is the stream
   * state, owned by the core until destroy().  On failure nothing is left
   * behind.  Required. */
  cl_int (*create)(void *factory_data, const struct cls_backend *backend,
                   int id, void **out);
  /* Waits for the stream's commands to finish and frees the stream state.
   * Called once per successful create().  Required. */
  void (*destroy)(void *stream);
  /* Makes queued commands start (clFlush).  Required: the core flushes a
   * producer before another stream waits on its event. */
  cl_int (*flush)(void *stream);
  /* Allocates a device memory page of `size` bytes; *out owned by the core
   * (released with clReleaseMemObject).  Optional: NULL means the core calls
   * clCreateBuffer itself. */
  cl_int (*alloc)(void *stream, size_t size, cl_mem *out);
  /* Commands.  Each enqueues one command after `wait` and gives it number
   * `seq`.  Required. */
  cl_int (*launch)(void *stream, const struct cls_kernel_cmd *cmd,
                   uint64_t seq, cl_uint nwait, const cl_event *wait);
  cl_int (*write)(void *stream, cl_mem dst, size_t offset, size_t size,
                  const void *src, int blocking, uint64_t seq, cl_uint nwait,
                  const cl_event *wait);
  cl_int (*read)(void *stream, cl_mem src, size_t offset, size_t size,
                 void *dst, int blocking, uint64_t seq, cl_uint nwait,
                 const cl_event *wait);
  cl_int (*copy)(void *stream, cl_mem src, size_t src_offset, cl_mem dst,
                 size_t dst_offset, size_t size, uint64_t seq, cl_uint nwait,
                 const cl_event *wait);
  cl_int (*fill)(void *stream, cl_mem dst, size_t offset, size_t size,
                 const void *pattern, size_t pattern_size, uint64_t seq,
                 cl_uint nwait, const cl_event *wait);
  /* An event that completes when every command enqueued so far on the
   * stream has completed.  The caller owns *out and releases it.  A marker
   * never fails because an earlier command of this stream failed in a way
   * only this factory knows (fault injection): it is a real event.
   * Required. */
  cl_int (*marker)(void *stream, cl_event *out);
  /* Reports completions.  With `wait` nonzero, first waits until every
   * command enqueued so far has finished.  Calls on_failed for each command
   * found to have failed, and stores in *completed the highest seq such
   * that it and every command before it have finished.  Required. */
  cl_int (*poll)(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                 uint64_t *completed);

  /* Version 2 and later. */

  /* The event of the stream's last command, lent: the caller takes no
   * reference and uses it only until its next call into this stream (a
   * flush excepted).  NULL when the stream has no command whose event it
   * still holds.  The same promise as marker() otherwise.  A driver that
   * enqueues a command at once lets it wait on this event without a
   * retain and a release per wait.  Optional: NULL (or a version 1
   * factory) means marker() is used. */
  cl_event (*last_event)(void *stream);
};

/* The default factory: one OpenCL in-order command queue per stream. */
CLS_API const struct cls_stream_factory *cls_opencl_stream_factory(void);
/* A factory whose streams do no work: every command completes at once and
 * nothing is enqueued (downloads leave their destination untouched), so
 * only clstream's own cost remains.  For benchmarks, fuzzing and tests of
 * the core; memory pages are still real cl_mem objects. */
CLS_API const struct cls_stream_factory *cls_null_stream_factory(void);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_STREAM_H */
