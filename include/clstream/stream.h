/** \file clstream/stream.h
 * \brief clstream stream factories: the backend behind each stream.
 *
 * A stream is the unit of ordering a user sees.  What a stream is made of
 * (an OpenCL in-order queue, a fault-injecting wrapper, a queue that does
 * nothing) is decided by a stream factory: this ops struct.  The core never
 * calls clEnqueue* itself; every command goes through a stream's ops.
 *
 * \par Contract common to every member
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
 * \par Versioning
 * The struct only grows at its end; the core reads members
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

/** The version of struct cls_stream_factory this header describes (2:
 * last_event; 3: struct cls_backend's flags, on_times, times_arg; 4:
 * #CLS_BACKEND_RANGED, cls_backend.event_every, poll_range, events; 5:
 * foreign, queue, image, #CLS_BACKEND_RELEASE_EARLY; 6: struct
 * cls_kernel_cmd's `offset`: the core hands a launch with a global offset
 * only to a factory of version 6 or later, and refuses it on an older one). */
#define CLS_STREAM_FACTORY_VERSION 6

/** cls_backend.flags: the context is tracing (docs/trace.md).  A factory
 * that can time its commands on the device creates its queues with
 * CL_QUEUE_PROFILING_ENABLE and reports each finished command's device
 * start and end through on_times. */
#define CLS_BACKEND_PROFILE 1u
/** cls_backend.flags (version 4): ranged attribution (F8a).  The device
 * fails every command queued behind a failed one on an in-order queue, so
 * a factory may ask for an OpenCL event only where one is needed (a read,
 * marker(), last_event(), a waiting poll) and on every `event_every`-th
 * command; poll_range() then reports a failure as the range of commands
 * since the last event that completed cleanly.  A factory that ignores the
 * flag reports single commands, which is always correct. */
#define CLS_BACKEND_RANGED 2u
/** cls_backend.flags (version 5), with #CLS_BACKEND_RANGED: the factory
 * may release an event it holds before its command finished once a later
 * event of the same in-order queue stands for it (a failure from then on
 * fails that later command too), leaving the event's end to the runtime,
 * as raw OpenCL code does, rather than freeing it on the caller's thread
 * at a poll.  Set where the device is not the host's CPU, or as
 * $CLS_RELEASE_EARLY says (docs/design.md, F8a).  A factory that ignores
 * the flag keeps its events until a poll, which is always correct. */
#define CLS_BACKEND_RELEASE_EARLY 4u

/** Device start and end (the device's clock, nanoseconds:
 * CL_PROFILING_COMMAND_START and _END) of command `seq` of the factory
 * stream created as `id`; `name` is the kernel's, or "upload",
 * "download", "copy", "fill".  Called by a factory, on the thread that
 * called its poll(), for each finished command while tracing. */
typedef void (*cls_times_fn)(void *arg, int id, uint64_t seq, const char *name,
                             uint64_t start, uint64_t end);

/** What a factory needs of the context: owned by the context, valid for the
 * lifetime of every stream created with it. */
struct cls_backend {
  cl_platform_id platform; /**< the context's platform */
  cl_device_id device;     /**< the device the stream is placed on: one of
                                the context's (docs/devices.md) */
  cl_context context;      /**< the context's OpenCL context */
  int cl_version;          /**< that device's version, 120 / 200 / 300 */
  /** Since CLS_STREAM_FACTORY_VERSION 3 (a factory built against an
   * earlier header never reads them): #CLS_BACKEND_PROFILE or 0. */
  unsigned flags;
  /** Set with #CLS_BACKEND_PROFILE (else NULL): where the factory reports
   * device times. */
  cls_times_fn on_times;
  void *times_arg; /**< passed to on_times */
  /** Version 4: with #CLS_BACKEND_RANGED, the most commands in a row
   * without an event (1 or more). */
  unsigned event_every;
};

/** One kernel argument as clSetKernelArg takes it: `value` points at `size`
 * bytes (a cl_mem for buffers), or is NULL for `size` bytes of local
 * memory. */
struct cls_kernel_arg {
  size_t size;       /**< bytes */
  const void *value; /**< the bytes, or NULL for local memory */
};

/** What was last set on a kernel's arguments through any factory of one
 * context (version 4): bit i of `valid` says argument i holds `bits[i]`
 * (its first `size[i]` bytes; all-zero bits with `local` bit i set: local
 * memory of that size).  Owned by the core, one per OpenCL kernel object
 * (a cls_kernel has one for each stream that launches it), zeroed when that
 * object is made; read and written by a factory during launch(),
 * under the context lock.  A factory that sets a kernel's arguments
 * without keeping it up to date must clear `valid`. */
struct cls_kernel_args_memo {
  uint32_t valid;            /**< bit i: argument i is known */
  uint32_t local;            /**< bit i: argument i is local memory */
  size_t size[32];           /**< bytes of argument i */
  uint64_t bits[32];         /**< its value, up to 8 bytes */
};

/** A kernel command.  The stream sets the arguments on `kernel` and
 * enqueues it in one go (the core validated them against the kernel); the
 * pointers are valid for the duration of the call only, but for `name`:
 * the kernel's own, valid until the context is destroyed (a profiling
 * factory may keep it for on_times), and `memo`. */
struct cls_kernel_cmd {
  cl_kernel kernel;     /**< the kernel, the launching stream's copy of it;
                             the core owns it */
  const char *name;     /**< its name, for messages */
  cl_uint dims;         /**< 1 to 3 */
  const size_t *global; /**< dims global sizes */
  const size_t *local;  /**< dims local sizes; NULL: the runtime picks */
  cl_uint nargs;        /**< entries in args */
  const struct cls_kernel_arg *args; /**< the arguments, in order */
  /** Version 4: the kernel's argument memo (see struct
   * cls_kernel_args_memo), so that an argument whose value the kernel
   * already holds is not set again; NULL: none. */
  struct cls_kernel_args_memo *memo;
  /** Version 6: dims global work offsets, as clEnqueueNDRangeKernel's
   * global_work_offset (cls_launch_offset()); NULL: none (all zero, the
   * usual launch).  The core never hands a non-NULL offset to a factory
   * of an older version. */
  const size_t *offset;
};

/** Called by poll() once for each command found to have failed after it was
 * enqueued, in seq order. */
typedef void (*cls_failed_fn)(void *arg, uint64_t seq, cl_int status);
/** Called by poll_range() once for each failure found after the enqueue, in
 * seq order: one of commands `first` to `last` (inclusive) failed, and
 * which one is not known (`first` == `last`: that command). */
typedef void (*cls_failed_range_fn)(void *arg, uint64_t first, uint64_t last, cl_int status);

/** A foreign command as a factory receives it (version 5): the user's
 * callback, its label and data, the logical stream, and the declared
 * buffers.  Valid during the call only. */
struct cls_foreign_cmd {
  cls_foreign_fn fn;  /**< the callback */
  void *data;         /**< its user data */
  const char *label;  /**< its label (the context's copy) */
  int stream;         /**< the logical stream it belongs to */
  cl_uint nbuffers;   /**< entries in buffers */
  const struct cls_foreign_buffer *buffers; /**< declared buffers, in order */
};

/** Runs foreign command `cmd` on queue `q` for a factory's foreign():
 * enqueues a barrier on `q` waiting for the `nwait` events of `wait` (when
 * there are any; its event into *barrier, else NULL: the caller keeps it
 * until it has completed, since PoCL aborts when an event a command waits
 * for fails after that command's own event was released), calls the
 * callback, and checks what it returned: a status that is not an OpenCL
 * status is #CLS_FOREIGN_BAD_STATUS, an event that is not one of q's
 * context #CLS_FOREIGN_BAD_EVENT, an event that failed already its
 * status.  On CL_SUCCESS *out is the event of its last command (the
 * caller owns the reference) or NULL when it gave none. */
CLS_API cl_int cls_foreign_run(const struct cls_foreign_cmd *cmd, cl_command_queue q,
                               cl_uint nwait, const cl_event *wait, cl_event *barrier,
                               cl_event *out);

struct cls_transfer; /* <clstream/driver.h> (version 5's image member) */

/** A stream factory: what a stream is made of.  Passed in
 * #cls_context_options.factory; the struct and its data must outlive every
 * context that uses it.  Members run under the context's lock, on the
 * thread of the public call (see the file's contract). */
struct cls_stream_factory {
  unsigned version;        /**< CLS_STREAM_FACTORY_VERSION */
  const char *name;        /**< short, lower case: "opencl", "fault" */
  const char *description; /**< one line */

  /** Creates the backend of stream `id`.  On success *out is the stream
   * state, owned by the core until destroy().  On failure nothing is left
   * behind.  Required. */
  cl_int (*create)(void *factory_data, const struct cls_backend *backend,
                   int id, void **out);
  /** Waits for the stream's commands to finish and frees the stream state.
   * Called once per successful create().  Required. */
  void (*destroy)(void *stream);
  /** Makes queued commands start (clFlush).  Required: the core flushes a
   * producer before another stream waits on its event. */
  cl_int (*flush)(void *stream);
  /** Allocates a device memory page of `size` bytes; *out owned by the core
   * (released with clReleaseMemObject).  Optional: NULL means the core calls
   * clCreateBuffer itself. */
  cl_int (*alloc)(void *stream, size_t size, cl_mem *out);
  /** Enqueues kernel command `cmd` after the `nwait` events of `wait`
   * and gives it number `seq`.  Required. */
  cl_int (*launch)(void *stream, const struct cls_kernel_cmd *cmd,
                   uint64_t seq, cl_uint nwait, const cl_event *wait);
  /** Enqueues a write of `size` bytes of host `src` into `dst` at
   * `offset` (blocking: returns when `src` may be reused), after `wait`,
   * as command `seq`.  Required. */
  cl_int (*write)(void *stream, cl_mem dst, size_t offset, size_t size,
                  const void *src, int blocking, uint64_t seq, cl_uint nwait,
                  const cl_event *wait);
  /** Enqueues a read of `size` bytes of `src` at `offset` into host
   * `dst` (blocking: returns when the bytes are there), after `wait`, as
   * command `seq`.  Required. */
  cl_int (*read)(void *stream, cl_mem src, size_t offset, size_t size,
                 void *dst, int blocking, uint64_t seq, cl_uint nwait,
                 const cl_event *wait);
  /** Enqueues a device copy of `size` bytes, after `wait`, as command
   * `seq`.  Required. */
  cl_int (*copy)(void *stream, cl_mem src, size_t src_offset, cl_mem dst,
                 size_t dst_offset, size_t size, uint64_t seq, cl_uint nwait,
                 const cl_event *wait);
  /** Enqueues a fill of `size` bytes at `offset` with `pattern`
   * (`pattern_size` bytes, copied during the call), after `wait`, as
   * command `seq`.  Required. */
  cl_int (*fill)(void *stream, cl_mem dst, size_t offset, size_t size,
                 const void *pattern, size_t pattern_size, uint64_t seq,
                 cl_uint nwait, const cl_event *wait);
  /** An event that completes when every command enqueued so far on the
   * stream has completed.  The caller owns *out and releases it.  A marker
   * never fails because an earlier command of this stream failed in a way
   * only this factory knows (fault injection): it is a real event.
   * Required. */
  cl_int (*marker)(void *stream, cl_event *out);
  /** Reports completions.  With `wait` nonzero, first waits until every
   * command enqueued so far has finished.  Calls on_failed for each command
   * found to have failed, and stores in *completed the highest seq such
   * that it and every command before it have finished.  A failure is
   * reported no later than the call whose *completed first reaches its
   * command (for poll_range, its range's first command): the caller
   * forgets the commands it counts finished, so a failure reported later
   * names none of them.  A stream may count less finished than it knows
   * (to report a failure later).  Required. */
  cl_int (*poll)(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                 uint64_t *completed);

  /** Version 2.  The event of the stream's last command, lent: the caller takes no
   * reference and uses it only until its next call into this stream (a
   * flush excepted).  NULL when the stream has no command whose event it
   * still holds.  The same promise as marker() otherwise.  A driver that
   * enqueues a command at once lets it wait on this event without a
   * retain and a release per wait.  Optional: NULL (or a version 1
   * factory) means marker() is used. */
  cl_event (*last_event)(void *stream);

  /** Version 4.  poll() for ranged attribution (#CLS_BACKEND_RANGED):
   * the same, but a failure is reported as the range of commands it may
   * lie in.  Optional: NULL means poll(), whose failures are single
   * commands; a factory with ranges must then report every command of a
   * range through poll()'s on_failed. */
  cl_int (*poll_range)(void *stream, int wait, cls_failed_range_fn on_failed, void *arg,
                       uint64_t *completed);
  /** Version 4.  How many OpenCL events the stream asked the runtime for
   * so far (cls_stream_stats.events).  Optional: NULL counts 0. */
  uint64_t (*events)(void *stream);

  /** Version 5.  Enqueues foreign command `cmd` (cls_foreign()) after the
   * `nwait` events of `wait`, as command `seq`: a factory with an OpenCL
   * queue calls cls_foreign_run() on it and keeps the event it gives (or a
   * marker behind the work when it gives none) as the command's event, so
   * that poll() reports its failure like any command's.  A status other
   * than CL_SUCCESS is the command's failure at its enqueue.  Optional:
   * NULL (or a factory before version 5) means cls_foreign() is refused
   * with #CLS_ENOSYS. */
  cl_int (*foreign)(void *stream, const struct cls_foreign_cmd *cmd, uint64_t seq,
                    cl_uint nwait, const cl_event *wait);
  /** Version 5.  The stream's OpenCL queue (cls_stream_queue()), not
   * retained; NULL when it has none.  Optional: NULL means none. */
  cl_command_queue (*queue)(void *stream);
  /** Version 5.  Enqueues a transfer that has an image at one end or both
   * (x->image says which; see struct cls_transfer): `kind` is
   * CLS_CMD_WRITE (host to image: clEnqueueWriteImage), CLS_CMD_READ
   * (image to host: clEnqueueReadImage, blocking as x->blocking says),
   * CLS_CMD_COPY (image to image, image to buffer, buffer to image) or
   * CLS_CMD_FILL (clEnqueueFillImage with the colour x->pattern), after
   * `wait`, as command `seq`.  The core checked the region against the
   * images.  Optional: NULL (or an earlier version) makes every image
   * transfer on the stream fail its enqueue (CL_INVALID_OPERATION). */
  cl_int (*image)(void *stream, int kind, const struct cls_transfer *x, uint64_t seq,
                  cl_uint nwait, const cl_event *wait);
};

/** The default factory: one OpenCL in-order command queue per stream.  A
 * static struct, never NULL; thread-safe. */
CLS_API const struct cls_stream_factory *cls_opencl_stream_factory(void);
/** A factory whose streams do no work: every command completes at once and
 * nothing is enqueued (downloads leave their destination untouched; a
 * foreign command's callback is not called; the streams have no queue), so
 * only clstream's own cost remains.  For benchmarks, fuzzing and tests of
 * the core; memory pages are still real cl_mem objects.  A static struct,
 * never NULL; thread-safe. */
CLS_API const struct cls_stream_factory *cls_null_stream_factory(void);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_STREAM_H */
