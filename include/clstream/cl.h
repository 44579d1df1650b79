/** \file clstream/cl.h
 * \brief The OpenCL headers at the API level clstream is written against.
 *
 * The one place that fixes the OpenCL API level clstream is written
 * against.  Everything in clstream that needs <CL/cl.h> includes this file
 * instead, so the library builds and runs against a platform that offers
 * only OpenCL 1.2; newer entry points are used only after a run-time
 * version check. */
#ifndef CLSTREAM_CL_H
#define CLSTREAM_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
/** OpenCL 1.2, unless the includer chose a level first (the Khronos
 * headers' own macro). */
#define CL_TARGET_OPENCL_VERSION 120
#endif

#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif


/* ------------------------------------------------------------------ */
/* Foreign commands and raw escape hatches (docs/design.md, "Foreign  */
/* commands")                                                          */
/* ------------------------------------------------------------------ */
/* The part of the public API that exposes OpenCL types; it needs
 * <clstream.h> for the context, the stream ids and cls_arg. */
#include <clstream.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A foreign callback's status that is not an OpenCL status (a positive
 * value): the command counts as failed with this status, and its write set
 * carries the failure.  Reports name it by this name. */
#define CLS_FOREIGN_BAD_STATUS (-9601)
/** The event a foreign callback returned is not an event of the stream's
 * OpenCL context (another context's, or one the runtime does not know):
 * the command counts as failed with this status.  clstream never waits on
 * such an event; one of another context is released. */
#define CLS_FOREIGN_BAD_EVENT (-9602)

/** One declared buffer of a foreign command, as its callback receives it.
 * A clstream buffer is a region of device memory: the bytes are `size`
 * bytes at `offset` in `mem`.  Pass the offset on (CLBlast's `a_offset`
 * and the like count elements: offset / sizeof(float)): `mem` is the
 * memory object the buffer was carved from, shared with other buffers, so
 * a callback that ignores the offset, or writes past `size`, writes
 * someone else's bytes (guard mode finds such a write).  It is no
 * sub-buffer: libraries take offsets, and some runtimes mishandle
 * sub-buffers (PoCL 3.1 crashes copying between one and an image).  For
 * a library that takes no offset (clFFT), make one in the callback:
 * clCreateSubBuffer(mem, flags, CL_BUFFER_CREATE_TYPE_REGION,
 * {offset, size}) is always valid (`offset` is a multiple of the device's
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN); release it after the enqueue, which
 * keeps it (tests/test-clfft.c).  An image argument (cls_image_alloc())
 * is its own image object, `offset` 0. */
struct cls_foreign_buffer {
  cl_mem mem;    /**< the memory object; not retained for the callback */
  size_t offset; /**< bytes from the start of mem */
  size_t size;   /**< bytes (the size the buffer was allocated with) */
  int access;    /**< as declared: #CLS_READ, #CLS_WRITE or #CLS_READ_WRITE */
};

/** What a foreign callback receives.  Valid during the call only. */
struct cls_foreign_call {
  /** The stream's in-order queue: enqueue the command's work here.  Under
   * the scheduler driver several streams may share it (its order is their
   * order). */
  cl_command_queue queue;
  const char *label;  /**< the label given to cls_foreign() */
  void *data;         /**< the user data given to cls_foreign() */
  int stream;         /**< the stream it runs on */
  cl_uint nbuffers;   /**< entries in buffers */
  /** The declared buffers, in the order of cls_foreign()'s `args`. */
  const struct cls_foreign_buffer *buffers;
  /** The events the command must wait for (other streams' producers of
   * its buffers).  clstream has already enqueued a barrier on `queue`
   * that waits for them, so a library that takes no wait list (CLBlast)
   * is ordered; a library that does may be given them too. */
  cl_uint nwait;
  const cl_event *wait; /**< see nwait; owned by clstream */
};

/** A foreign command's body: enqueues work on call->queue and returns
 * CL_SUCCESS or a negative OpenCL status.  On CL_SUCCESS it may store in
 * *last the event of its last command (a reference it hands over: clstream
 * releases it), which must be an event of the stream's OpenCL context;
 * clstream watches it as it watches a launch's event (F8: a failure of it
 * found later taints the write set), and orders what follows after it.
 * Leaving *last NULL makes clstream put a marker behind the work, whose
 * status vendors report differently after a failure (PoCL fails it, rusticl
 * and oclgrind complete it): return the event where the library gives one.
 * On an error status *last is not read.  The callback runs with the
 * context lock held: calling clstream on the same context from it is
 * refused with #CLS_EDRIVER. */
typedef cl_int (*cls_foreign_fn)(const struct cls_foreign_call *call, cl_event *last);

/** Enqueues a foreign command on `stream`: `fn` is called with the
 * stream's queue and the declared buffers, and clstream treats what it
 * enqueues as one command, exactly as a launch (the same command path):
 *   - ordered after the producers of its inputs and the readers of its
 *     outputs on other streams (F7), and later commands after it;
 *   - skipped when an input carries a failure (F2): `fn` is not called,
 *     the outputs take the failure, and the skip chain names the command
 *     by `label`; returns #CLS_ESKIPPED;
 *   - an error status, a status that is not an OpenCL status
 *     (#CLS_FOREIGN_BAD_STATUS), an event of another context
 *     (#CLS_FOREIGN_BAD_EVENT) or an event that failed already make the
 *     command fail as a launch whose enqueue failed: the write set carries
 *     a record naming the label, and the call returns #CLS_ELAUNCH (under a
 *     driver that defers the enqueue, the scheduler, the failure is found
 *     after the call, F8, whether the callback ran later or at the call);
 *   - its returned event failing later is found as a launch's (F8);
 *   - fault injection (CLS_FAULT) matches it with `op=foreign` and
 *     `kernel=LABEL`; CLS_SYNC_TIMEOUT names it when it does not finish.
 *
 * `args` declares every buffer the callback touches, with #CLS_IN,
 * #CLS_OUT or #CLS_INOUT (whole buffers, as a launch: a partial writer is
 * #CLS_INOUT).  There is no signature to check a declaration against:
 * clstream trusts it (F11); memory the callback touches without declaring
 * it is unknown to the failure record.  Scalars go through `data`.
 *
 * When the callback runs: at the call under the event driver; under the
 * scheduler driver when the stream's task list is submitted (at the latest
 * by cls_stream_sync() or cls_sync()), or at the call where the command
 * waits on another stream under its sequential strategy with a queue per
 * stream, so `fn`, `data` and what it points to must stay valid until the
 * stream has been synced.  With relocation
 * and recovery on, a callback whose work a lost queue accepted and never
 * ran is called again before that sync, with the same data, on the
 * stream's fresh queue (docs/devices.md, "Recovery"): it must enqueue the
 * same work again.  The label is copied.  Under the null stream factory the command completes at once and
 * `fn` is never called (nothing runs there).
 *
 * Takes the context lock.  A refused call leaves a record on its declared
 * writes (F12).
 * \return #CLS_OK; #CLS_ESKIPPED (an input carries a failure);
 * #CLS_ELAUNCH (the callback failed, see above);
 * #CLS_EINVAL for a NULL context, NULL or empty label, NULL fn, NULL args
 * with nargs > 0, more than #CLS_MAX_ARGS arguments, or an access other
 * than read, write or read-write;
 * #CLS_EARGKIND for an argument that is not a buffer;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad buffer handle;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ENOSYS when the context's stream factory has no foreign commands
 * (a factory older than version 5). */
CLS_API int cls_foreign(cls_context *ctx, int stream, const char *label, cls_foreign_fn fn,
                        void *data, size_t nargs, const cls_arg *args);

/** Escape hatch: the OpenCL queue of `stream` (created on first use), for
 * raw OpenCL that clstream does not see.  What the program then owes:
 * anything enqueued there is outside every rule -- not ordered with other
 * streams, a failure in it taints nothing, and bytes it writes into a
 * clstream buffer are unknown to the buffer's failure record (a read may
 * hand them out as good, or hand out what it never wrote).  Write clstream
 * buffers only inside a foreign command (cls_foreign()).  Under the
 * scheduler driver streams may share a queue, and commands still in its
 * task list have not reached the queue: cls_stream_sync() first.  Not
 * retained: valid until the stream is relocated or the context destroyed.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or queue;
 * #CLS_ESTREAM; #CLS_ENOSYS when the stream factory has no queue (null
 * factory, or older than version 5); #CLS_ECL when the stream's backend
 * cannot be created. */
CLS_API int cls_stream_queue(cls_context *ctx, int stream, cl_command_queue *queue);

/** Escape hatch: where buffer `buf`'s bytes are: `*size` bytes at
 * `*offset` in `*mem`, the memory object it was carved from, shared with
 * other buffers (offset and size may be NULL; as a foreign command's
 * struct cls_foreign_buffer).  Not retained: valid
 * until the buffer is freed.  What the program then owes is as for
 * cls_stream_queue(): reads through it are its own (no failure check),
 * and writes outside a foreign command are unknown to the failure record.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or mem;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad handle. */
CLS_API int cls_buffer_mem(cls_context *ctx, cls_buffer buf, cl_mem *mem, size_t *offset,
                           size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* CLSTREAM_CL_H */
