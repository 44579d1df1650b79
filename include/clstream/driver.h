/** \file clstream/driver.h
 * \brief clstream drivers: the policy that decides when, and onto which
 * backend queue, the commands of a context's streams go.
 *
 * A driver is one ops struct (struct cls_driver_ops).  The two built into
 * the library, `event` and `scheduler`, are written against this header
 * alone; an application registers its own with cls_driver_register() (then
 * CLS_SCHEDULER names it) or hands it to one context in
 * #cls_context_options.driver.  docs/drivers.md walks through writing one.
 *
 * \par What the core guarantees
 *   - Every member is called with the context's lock held (create() while
 *     the context is being made, out of any other thread's reach), on the
 *     thread of the public call that needs it; no member is called
 *     concurrently for one context.
 *   - The core owns the streams, the failure records, the F8 log and the
 *     failure rules (F1-F12): a command whose inputs carry a failure never reaches
 *     the driver, and a failure the driver reports is applied by the core.
 *   - The views the core hands over (struct cls_driver_stream, struct
 *     cls_driver_cmd) are the core's; a driver reads them, and writes only
 *     the members marked "the driver's".
 *   - What a driver returns is checked: a create() or open() that returns
 *     CLS_OK without its result (*out, s->backend), a status that is
 *     neither CLS_OK, #CLS_DRIVER_RETRY (order() only) nor a CLS_E* code,
 *     and an order() that asks for retries without end (past the sync
 *     deadline, or 1000 in a row finding no failure without one) become
 *     #CLS_EDRIVER naming the driver.  A member that calls the public API
 *     on its own context (cls_sync() from poll(), say) gets #CLS_EDRIVER
 *     back at once: the thread holds the context lock.
 *
 * \par What a driver must do
 *   - Order each command after what its bindings depend on
 *     (cls_driver_order_after() does the work, told by a struct
 *     cls_driver_orderer how the driver's streams reach their queues).
 *   - Enqueue each submitted command exactly once, as numbered, through the
 *     context's stream factory (cls_driver_enqueue_cmd(), cls_driver_enqueue()),
 *     and release or drop its wait list.
 *   - Report what finished (raise cls_driver_stream.completed) and each
 *     command that failed, in order (cls_driver_failed()).
 *   - Never touch a failure record: there is no call for it here.
 *
 * \par Versioning
 * The ops struct only grows at its end; the core reads members added after
 * a driver's `version` only when `version` says they are there, and refuses
 * a driver whose version is newer than the library's (#CLS_EVERSION).
 * Multi-device placement, when it comes, is an appended member.
 */
#ifndef CLSTREAM_DRIVER_H
#define CLSTREAM_DRIVER_H

#include <clstream.h>
#include <clstream/stream.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CLS_DRIVER_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
/** printf-style checking of a function's format and arguments, where the
 * compiler has it. */
#define CLS_DRIVER_PRINTF(f, a)
#endif

/** The version of struct cls_driver_ops this header describes (3: the
 * first public one; 1 and 2 were internal and are refused; 4: struct
 * cls_transfer grew its image members, which moves the members of struct
 * cls_driver_cmd after it, so a driver built for 3 is refused too: rebuilt
 * against this header, a driver that copies cls_driver_cmd.x whole
 * carries image transfers unchanged; and foreign commands:
 * #CLS_CMD_FOREIGN, cls_driver_cmd.foreign, cls_driver_enqueue_foreign();
 * 5: struct cls_stream_stats grew `replays`, which moves the members of
 * struct cls_driver_stream after it, so a driver built for 4 is refused;
 * 6: struct cls_kernel_cmd grew `offset` (cls_launch_offset()), which moves
 * the members of struct cls_driver_cmd after kcmd, so a driver built for 5
 * is refused: rebuilt, a driver that copies kcmd whole and keeps the sizes
 * apart keeps kcmd.offset's dims values too, as the scheduler does). */
#define CLS_DRIVER_OPS_VERSION 6

/** The kind of a command (cls_driver_cmd.kind). */
enum cls_cmd_kind {
  CLS_CMD_LAUNCH = 1, /**< a kernel launch: cls_driver_cmd.kcmd */
  CLS_CMD_WRITE,      /**< an upload: cls_driver_cmd.x */
  CLS_CMD_READ,       /**< a download */
  CLS_CMD_COPY,       /**< a device copy */
  CLS_CMD_FILL,       /**< a fill */
  /** A foreign command (cls_foreign()): cls_driver_cmd.foreign.  It is a
   * command like the others -- ordered, numbered, enqueued once, polled --
   * whose enqueue calls the user's callback (inside the factory's
   * foreign()).  A driver that enqueues at submit() passes it to
   * cls_driver_enqueue_cmd() as any command; one that defers copies
   * *foreign and its buffers and enqueues it with
   * cls_driver_enqueue_foreign() (cls_driver_enqueue() cannot carry it and
   * fails it with CL_INVALID_OPERATION). */
  CLS_CMD_FOREIGN
};

/** A transfer, by memory object (a cl_mem does not move).  `host_src`,
 * `host_dst` and `pattern` are valid as long as the user keeps them (async
 * transfers), `pattern` only during the call that hands the command over:
 * a driver that defers the enqueue keeps a copy of the pattern. */
struct cls_transfer {
  cl_mem src;          /**< copies, downloads */
  cl_mem dst;          /**< copies, uploads, fills */
  size_t src_offset;   /**< bytes */
  size_t dst_offset;   /**< bytes */
  size_t size;         /**< bytes */
  const void *host_src; /**< uploads */
  void *host_dst;      /**< downloads */
  const void *pattern; /**< fills */
  size_t pattern_size; /**< fills */
  int blocking;        /**< uploads and downloads: the caller waits for it
                            (0 for every other command) */
  /** Images: which ends of the transfer are images (#CLS_TRANSFER_SRC_IMAGE,
   * #CLS_TRANSFER_DST_IMAGE); 0 for a transfer of bytes, and then the
   * members below are unused.  An image end is addressed by pixel origin
   * and the region; a buffer end of an image copy by its byte offset
   * above; a host end by the pitches; a fill's `pattern` is the colour
   * (16 bytes: float4, int4 or uint4 as the format's type asks). */
  unsigned image;
  size_t src_origin[3]; /**< pixels (x, y, slice or layer) */
  size_t dst_origin[3]; /**< pixels */
  size_t region[3];     /**< pixels: width, height, depth (1 for 2D) */
  size_t row_pitch;     /**< host rows, bytes (0: tight) */
  size_t slice_pitch;   /**< host slices, bytes (0: tight) */
};
/** cls_transfer.image: the source is an image. */
#define CLS_TRANSFER_SRC_IMAGE 1u
/** cls_transfer.image: the destination is an image. */
#define CLS_TRANSFER_DST_IMAGE 2u

/** A logical stream as a driver sees it: the first members of the core's
 * stream, valid from open() to close(). */
struct cls_driver_stream {
  int id;             /**< 0 .. #CLS_MAX_STREAMS-1; read only */
  /** The driver's: the factory stream its memory pages are allocated on,
   * set by open() (cls_driver_factory_create()), cleared by close(). */
  void *backend;
  uint64_t submitted; /**< seq of its last command accepted; read only */
  /** The driver's: every command up to this seq has finished; raised by
   * poll(), never lowered. */
  uint64_t completed;
  /** The driver's: `submitted` as of its queue's last flush. */
  uint64_t flushed;
  /** Its counters (cls_stream_stats()); the driver counts `submissions`
   * and `flushes`, the core the rest. */
  struct cls_stream_stats stats;
  /** The context device its backend goes on, from 0 to
   * cls_driver_devices() minus 1, set by the core before open(): the placement policy's choice or
   * cls_stream_place()'s.  Read only. */
  int device;
  /** Its backend's generation: 0 at creation, +1 at each relocation
   * (cls_stream_relocate()).  open() of a generation above 0 gives the
   * stream a queue of its own: nothing of a retired queue is used again.
   * Read only. */
  uint64_t generation;
};

/** One command, described by the core and handed to order() and submit().
 * Lives on the caller's stack for one call: a driver that defers the
 * enqueue copies what it needs (the arguments' bytes included). */
struct cls_driver_cmd {
  int kind;                        /**< enum cls_cmd_kind; read only */
  struct cls_driver_stream *stream; /**< its stream; read only */
  struct cls_kernel_cmd kcmd;      /**< launches; read only */
  struct cls_transfer x;           /**< transfers; x.blocking for all */
  /** The wait list order() gives it; the driver's after order(): it owns
   * the events until the enqueue (it may take them over, setting nwait
   * to 0). */
  cl_uint nwait;
  cl_event wait[CLS_MAX_STREAMS]; /**< see nwait */
  uint64_t lent;                   /**< the core's (events lent, not owned) */
  /** Its number on its stream, set by the core before submit():
   * stream->submitted + 1.  Read only. */
  uint64_t seq;
  /** #CLS_CMD_FOREIGN only (else not set): the command, for this call only
   * (a driver that defers copies it and its buffers).  Read only. */
  const struct cls_foreign_cmd *foreign;
};

struct cls_driver_ops;

/** The start of every driver's state: a driver allocates its own struct
 * with this as its first member.  The core fills it in after create()
 * returns; read only for the driver.  The driver allocates it, so members
 * are appended only with a new CLS_DRIVER_OPS_VERSION, and the core writes
 * them only for drivers of that version. */
struct cls_driver {
  const struct cls_driver_ops *ops;          /**< the driver's ops */
  cls_context *ctx;                           /**< its context */
  const struct cls_stream_factory *factory;   /**< the context's stream factory */
  /** Nonzero when the factory must learn each command's logical stream
   * (fault injection): then only cls_driver_enqueue() and the inline
   * helpers below may enqueue, never the factory's members directly. */
  int wrapped;
};

/** One parameter of a driver, as CLS_SCHEDULER=help shows it. */
struct cls_driver_param {
  const char *syntax;  /**< "max_tasks=N" */
  const char *meaning; /**< one line */
};

/** A driver.  Registered once (cls_driver_register()) or named in
 * #cls_context_options.driver; the struct must outlive every context that
 * uses it.  Every member runs under the context's lock (see the file's
 * contract). */
struct cls_driver_ops {
  unsigned version;        /**< CLS_DRIVER_OPS_VERSION */
  /** As CLS_SCHEDULER names it: [a-z0-9_-]+, not "help".  The driver's
   * string, valid as long as the struct. */
  const char *name;
  const char *description; /**< one line; the driver's, like name */
  /** For CLS_SCHEDULER=help: the whole selection's syntax
   * ("scheduler[:sequential|interleave][,max_tasks=N]").  The driver's
   * string.  Optional: NULL means the name alone. */
  const char *usage;
  /** Its parameters for CLS_SCHEDULER=help, ending with {NULL, NULL}; the
   * driver's table.  Read without the context lock (help runs before any
   * context exists).  Optional: NULL means it takes none. */
  const struct cls_driver_param *params;
  /** Creates the driver's state from `params` (the text after "name:" in
   * the selection, or NULL); *out is owned by the core until destroy().
   * Streams do not exist yet.  `params` is the caller's, valid during the
   * call only.  On failure nothing is left behind and the error is recorded
   * (cls_driver_error(), cls_driver_param_error()).  Called while the
   * context is being created: no other thread can reach it.  Required. */
  int (*create)(cls_context *ctx, const char *params, struct cls_driver **out);
  /** Frees the state (d itself included: it is the driver's again).
   * Called once, after the core has waited for all work and closed every
   * stream, context lock held.  Required. */
  void (*destroy)(struct cls_driver *d);
  /** Creates the backend of stream s (s->id is set): sets s->backend, a
   * factory stream (cls_driver_factory_create()).  s is the core's and
   * stays where it is until close(): the driver may keep the pointer.
   * Called once, on the stream's first use, context lock held.  Required. */
  int (*open)(struct cls_driver *d, struct cls_driver_stream *s);
  /** Drops s's backend (the factory stream is the driver's to destroy).
   * Called once per successful open(), after the core waited for s's work,
   * context lock held.  Required. */
  void (*close)(struct cls_driver *d, struct cls_driver_stream *s);
  /** Learns what finished on s (wait: after handing s's deferred commands
   * to its queue, everything submitted so far): raises s->completed and
   * reports each command found failed through cls_driver_failed(), in
   * order.  Context lock held.  Re-entered: cls_driver_failed() may poll
   * other streams (never one being polled) and call withdraw() before it
   * returns.  Required. */
  int (*poll)(struct cls_driver *d, struct cls_driver_stream *s, bool wait);
  /** Orders cmd->stream after everything cmd's bindings depend on, filling
   * cmd's wait list (cls_driver_order_after()).  #CLS_DRIVER_RETRY: a poll
   * found a failure (the wait list is empty then).  Negative: error,
   * recorded.  cmd is the core's, for this call only; its wait list is the
   * driver's once order() returned #CLS_OK.  Context lock held; may poll
   * any stream (through cls_driver_order_after()).  Required. */
  int (*order)(struct cls_driver *d, struct cls_driver_cmd *cmd);
  /** Enqueues the command as command cmd->seq of its stream (now, or later
   * for a driver that defers) and takes over its wait list: releases it
   * once enqueued, or drops it (cls_driver_drop_waits()) when the enqueue
   * fails.  Returns CL_SUCCESS, or the backend's status when the command
   * was not accepted.  cmd is the core's, for this call only: a driver that
   * defers copies what it needs.  Context lock held.  Required. */
  cl_int (*submit)(struct cls_driver *d, struct cls_driver_cmd *cmd);
  /** Hands every command of s up to its command `upto` to s's backend
   * queue (memory they use is about to be released: an enqueued command
   * holds its memory objects).  Where s's queue is lost and the driver
   * keeps those commands instead (cls_driver_kept()), the core waits for
   * them to complete before it releases the memory.  Context lock held.
   * Optional: NULL for a driver that enqueues at submit(). */
  void (*settle)(struct cls_driver *d, struct cls_driver_stream *s, uint64_t upto);
  /** F8 found that command `seq` of s, accepted but not yet handed to the
   * backend, reads a failed input: the driver drops it (it completes in
   * order with s's other commands, its waits still order what follows).
   * True when dropped.  Called during a poll (from cls_driver_failed()),
   * maybe while the driver is submitting, context lock held.  Optional:
   * NULL for a driver that enqueues at submit(). */
  bool (*withdraw)(struct cls_driver *d, struct cls_driver_stream *s, uint64_t seq);
};

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */

/** Registers a driver for the process: CLS_SCHEDULER (and
 * #cls_context_options.scheduler) can name it from then on, and
 * CLS_SCHEDULER=help and cls_driver_info() list it.  The struct must stay
 * valid until the process ends.  Thread-safe.
 * \return #CLS_OK (also when this very struct is registered already);
 * #CLS_EINVAL for NULL, a missing name, description or required member,
 * or a name that is not [a-z0-9_-]+; #CLS_EVERSION for a version this
 * library does not know; #CLS_EDRIVER when another driver has the name;
 * #CLS_ERANGE when the registry is full (16 drivers). */
CLS_API int cls_driver_register(const struct cls_driver_ops *ops);

/** The function a driver in a shared object exports, by this name, for
 * CLS_SCHEDULER=/path/to/driver.so[:PARAMS] (a selection whose name holds
 * a '/'): it returns the driver's ops struct.  The object is loaded with
 * dlopen() when a context is created with it and is never unloaded. */
#define CLS_DRIVER_ENTRY "cls_driver_entry"
/** The type of the function #CLS_DRIVER_ENTRY names. */
typedef const struct cls_driver_ops *(*cls_driver_entry_fn)(void);

/* ------------------------------------------------------------------ */
/* What a driver may call of the core                                  */
/* ------------------------------------------------------------------ */

/** order(): returned when ordering polled a stream and learnt of a
 * failure; the core re-checks the command's inputs and calls order()
 * again. */
#define CLS_DRIVER_RETRY 1

/** How a driver's streams reach their queues, for cls_driver_order_after(). */
struct cls_driver_orderer {
  /** Called for each stream p the command depends on, up to p's command
   * `need`, before p is polled (a deferring driver hands p's pending
   * commands to its queue here).  Optional. */
  void (*prepare)(struct cls_driver *d, struct cls_driver_stream *p, uint64_t need);
  /** The factory stream a marker for p comes from, or NULL when p and s
   * share a queue (its order is the order).  Required. */
  void *(*queue_of)(struct cls_driver *d, struct cls_driver_stream *s,
                    struct cls_driver_stream *p);
  /** The factory stream that is p's queue.  Optional: NULL means
   * queue_of. */
  void *(*backend_of)(struct cls_driver *d, struct cls_driver_stream *p);
  /** p's last command handed to its queue.  Optional: NULL means
   * p->submitted. */
  uint64_t (*enqueued)(struct cls_driver *d, struct cls_driver_stream *p);
  /** The command is enqueued (or its waits dropped, or made the
   * driver's own with cls_driver_own_waits()) before anything else is
   * asked of the queues it waits for, so it may wait on events the
   * factory lends instead of markers.  With prepare(), only where no two
   * streams it may wait for share a queue: p's prepare may add to p's
   * queue alone. */
  bool enqueues_now;
};

/** The ordering every driver does: the streams cmd depends on are polled
 * (F8; #CLS_DRIVER_RETRY when a failure was found), then cmd waits on each
 * one not already ordered that far and not finished.  Fills cmd's wait
 * list. */
CLS_API int cls_driver_order_after(struct cls_driver *d, struct cls_driver_cmd *cmd,
                                   const struct cls_driver_orderer *o);
/** Waits taken by order() are given up without a command carrying them
 * (an enqueue that failed, a command dropped): they happen on the host, so
 * what ordering recorded still holds.  Does not release them. */
CLS_API void cls_driver_unsent(cl_uint nwait, const cl_event *wait);
/** Releases cmd's wait list after its enqueue. */
CLS_API void cls_driver_release_waits(struct cls_driver_cmd *cmd);
/** Drops cmd's wait list without it being enqueued (cls_driver_unsent(),
 * then released). */
CLS_API void cls_driver_drop_waits(struct cls_driver_cmd *cmd);
/** Makes cmd's wait list the driver's own: events order() lent (an
 * orderer with enqueues_now) are retained, so a driver that ordered a
 * command to enqueue it at once may keep it after all (in a list, past
 * other calls into the producers' queues).  Release them as usual. */
CLS_API void cls_driver_own_waits(struct cls_driver_cmd *cmd);
/** F7 for a command enqueued later than it was ordered (a driver that
 * defers): of its waits `w`, those whose event has failed since are left
 * out.  Writes the rest into keep and returns their number. */
CLS_API cl_uint cls_driver_live_waits(const cl_event *w, size_t nw, cl_event *keep);

/** Creates factory stream `id` (the driver's numbering: a logical stream,
 * or a shared queue); #CLS_ECL recorded on failure. */
CLS_API int cls_driver_factory_create(struct cls_driver *d, int id, void **out);
/** cls_driver_factory_create() on device `device` of the context, from 0
 * to cls_driver_devices() minus 1: a stream's backend goes on its
 * cls_driver_stream.device.
 * \return as cls_driver_factory_create(); #CLS_EINVAL for a device out of
 * range. */
CLS_API int cls_driver_factory_create_on(struct cls_driver *d, int id, int device, void **out);
/** The number of devices of the driver's context (1 or more).
 * \return that number. */
CLS_API int cls_driver_devices(const struct cls_driver *d);
/** Enqueues one command of logical stream `logical` onto factory stream
 * `q` as its command `bseq`, after `wait`: k for launches, x for transfers.
 * Returns the factory's status.  The waits are the caller's. */
CLS_API cl_int cls_driver_enqueue(struct cls_driver *d, void *q, int logical, int kind,
                                  const struct cls_kernel_cmd *k, const struct cls_transfer *x,
                                  uint64_t bseq, cl_uint nwait, const cl_event *wait);
/** The same for cmd, now, as command `bseq` of `q`, taking over cmd's
 * wait list: released when enqueued, dropped when not. */
CLS_API cl_int cls_driver_enqueue_any(struct cls_driver *d, void *q, struct cls_driver_cmd *cmd,
                                      uint64_t bseq);
/** cls_driver_enqueue() for a foreign command (#CLS_CMD_FOREIGN) a driver
 * copied: enqueues `f` onto factory stream `q` as its command `bseq`
 * (the factory's foreign(), with fault injection).  The waits are the
 * caller's. */
CLS_API cl_int cls_driver_enqueue_foreign(struct cls_driver *d, void *q,
                                          const struct cls_foreign_cmd *f, uint64_t bseq,
                                          cl_uint nwait, const cl_event *wait);
/** cls_driver_enqueue_any() with the common launch inline. */
static inline cl_int cls_driver_enqueue_cmd(struct cls_driver *d, void *q,
                                            struct cls_driver_cmd *cmd, uint64_t bseq) {
  if (cmd->kind == CLS_CMD_LAUNCH && !cmd->nwait && !d->wrapped)
    return d->factory->launch(q, &cmd->kcmd, bseq, 0, NULL);
  return cls_driver_enqueue_any(d, q, cmd, bseq);
}
/** cls_driver_enqueue() for a launch, inline. */
static inline cl_int cls_driver_launch(struct cls_driver *d, void *q, int logical,
                                       const struct cls_kernel_cmd *k, uint64_t bseq,
                                       cl_uint nwait, const cl_event *wait) {
  if (!d->wrapped)
    return d->factory->launch(q, k, bseq, nwait, wait);
  return cls_driver_enqueue(d, q, logical, CLS_CMD_LAUNCH, k, NULL, bseq, nwait, wait);
}

/** Stream `id` if it exists (opened), else NULL. */
CLS_API struct cls_driver_stream *cls_driver_stream_at(struct cls_driver *d, int id);
/** Command `seq` of s failed after its enqueue (status: the backend's).
 * deferred: the failure is the enqueue itself, made later than the call by
 * a driver that defers, or reported after the call (the scheduler's
 * sequential strategy enqueues a command that waits on another queue in
 * submit() and reports its failure at its next order() or poll(), so
 * what a call returns is the same either way); the report says so.  The core applies F8. */
CLS_API void cls_driver_failed(struct cls_driver *d, struct cls_driver_stream *s, uint64_t seq,
                               cl_int status, bool deferred);
/** Ranged attribution (F8a): one of commands `first` to `last` of s
 * failed after its enqueue, which one is not known (a poisoned queue's
 * event said so).  Always a range record, even of one command; a failure
 * known to be one command's is cls_driver_failed().  A range of a queue
 * streams share is reported with cls_driver_failed_parts(), every
 * stream's part in one call.  The core applies F8 to every command of the
 * range. */
CLS_API void cls_driver_failed_range(struct cls_driver *d, struct cls_driver_stream *s,
                                     uint64_t first, uint64_t last, cl_int status);
/** Ranged attribution on a queue streams share: one failure whose range
 * holds commands of `n` streams (1 .. #CLS_MAX_STREAMS; one part each),
 * streams[i]'s part being its commands first[i] to last[i].  One record
 * names every part and is logged once (F9); the core applies F8 to every
 * command of every part.  With n 1 it is cls_driver_failed_range(). */
CLS_API void cls_driver_failed_parts(struct cls_driver *d, struct cls_driver_stream *const *streams,
                                     const uint64_t *first, const uint64_t *last, size_t n,
                                     cl_int status);
/** The poll of a driver whose stream s has a backend queue of its own
 * (`backend`, usually s->backend): polls it (waiting when `wait`), with
 * ranges where the factory reports them, reports each failure against s,
 * and raises s->completed to what finished.  \return #CLS_OK, or #CLS_ECL
 * (recorded) when the factory's poll failed. */
CLS_API int cls_driver_factory_poll(struct cls_driver *d, struct cls_driver_stream *s,
                                    void *backend, bool wait);
/** A number that changes whenever a failure is found: a driver that
 * submits deferred work while ordering compares it before and after. */
CLS_API uint64_t cls_driver_failures_seen(struct cls_driver *d);
/** Recovery (docs/devices.md): whether a driver that defers, whose
 * enqueue of a stream's task returned `status`, may keep that task and
 * those after it for the stream's fresh queue, the `losses`-th time in a
 * row they meet a lost queue: true where `status` says the queue is lost
 * (CL_DEVICE_NOT_AVAILABLE), relocation and recovery are on, and
 * `losses` is within the bound.  Otherwise the driver reports the
 * failure (cls_driver_failed()) as for any other. */
CLS_API bool cls_driver_recovers(struct cls_driver *d, cl_int status, unsigned losses);
/** Recovery: the driver keeps `kept` tasks of s, not enqueued, to enqueue
 * them on s's fresh queue after the core relocates s (at its next safe
 * point: the driver does not submit them before its open() of s's next
 * generation).  Their waits, if any, it keeps too (a task whose enqueue
 * failed has had its waits waited out: it keeps none).  The core counts
 * them as replays and makes the ordering in progress retry
 * (cls_driver_failures_seen() changes). */
CLS_API void cls_driver_kept(struct cls_driver *d, struct cls_driver_stream *s, size_t kept);

/** Records error `err` (a CLS_E* code) with a printf-style detail for
 * cls_last_error_detail(), and returns err. */
CLS_API int cls_driver_error(int err, cl_int cl_status, const char *fmt, ...)
    CLS_DRIVER_PRINTF(3, 4);
/** #CLS_ECONFIG for the driver's parameter text `params`, in the library's
 * words for any configuration string: "CLS_SCHEDULER 'NAME:PARAMS': " and
 * the printf-style rest. */
CLS_API int cls_driver_param_error(const char *name, const char *params, const char *fmt, ...)
    CLS_DRIVER_PRINTF(3, 4);
/** A driver's parameter text, read with the rules the library applies to
 * every configuration string (docs/design.md, "Configuration strings"):
 * comma-separated items, each a WORD or KEY=VALUE, no empty item, no
 * whitespace, a key at most once.  Set the first three members, zero the
 * rest; refusals are #CLS_ECONFIG with "CLS_SCHEDULER 'NAME:TEXT': " and
 * the reason in cls_last_error_detail(). */
struct cls_driver_params {
  const char *driver;      /**< the driver's name */
  const char *text;        /**< the parameters, as create() got them */
  const char *const *keys; /**< KEY names, NULL-terminated (32 at most);
                                NULL: none */
  const char *at;          /**< the core's: the next item */
  uint32_t seen;           /**< the core's: keys given */
  int started;             /**< the core's */
};
/** One item of the text: `n` bytes at `p` (not NUL-terminated).  A WORD
 * has key -1; KEY=VALUE has key, the index of KEY in keys, and the value's
 * `nvalue` bytes at `value`. */
struct cls_driver_param_item {
  const char *p;      /**< the item */
  size_t n;           /**< its length */
  int key;            /**< -1: a word; else the index of its key */
  const char *value;  /**< KEY=VALUE: the value */
  size_t nvalue;      /**< its length */
};
/** The next item into *item: 1, 0 after the last, or #CLS_ECONFIG
 * (recorded) for an empty item, whitespace, an unknown key (the detail
 * lists keys), a key given twice, or an empty key or value. */
CLS_API int cls_driver_params_next(struct cls_driver_params *ps,
                                   struct cls_driver_param_item *item);
/** The value of KEY=VALUE item as an unsigned decimal in lo..hi; #CLS_ECONFIG
 * (recorded, naming the key) when it is not one. */
CLS_API int cls_driver_params_uint(struct cls_driver_params *ps,
                                   const struct cls_driver_param_item *item, uint64_t lo,
                                   uint64_t hi, uint64_t *out);
/** Logs a line at CLS_LOG's errors level on the context's logger. */
CLS_API void cls_driver_log_error(struct cls_driver *d, const char *fmt, ...)
    CLS_DRIVER_PRINTF(2, 3);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_DRIVER_H */
