/* Internal: the driver (scheduler) interface.
 *
 * A driver owns a context's stream pool and failure table and turns
 * commands into stream-factory calls, keeping streams ordered.  The core
 * decides everything about failures (F1-F10) before and after a command
 * reaches the driver, through the shared store in failure.h; a driver only
 * orders and submits.  One ops struct per driver, one folder per driver
 * (schedulers/NAME/), listed in the registry of driver.c.
 *
 * All members are called with the context lock held. */
#ifndef CLS_DRIVER_H
#define CLS_DRIVER_H

#include "core.h"
#include "failure.h"

enum cls__cmd_kind {
  CLS__CMD_LAUNCH = 1,
  CLS__CMD_WRITE,
  CLS__CMD_READ,
  CLS__CMD_COPY,
  CLS__CMD_FILL
};

/* What a stream factory call needs of a transfer, by memory object (a slot
 * may move; its cl_mem does not).  Kept as is by a driver that defers the
 * enqueue, with `host_src`/`host_dst`/`pattern` valid as long as the user
 * keeps them (async transfers) or as the driver keeps a copy (patterns). */
struct cls__xfer {
  cl_mem src, dst;
  size_t src_offset, dst_offset, size;
  const void *host_src;
  void *host_dst;
  const void *pattern;
  size_t pattern_size;
  int blocking;
};

/* One command, described once by the core and handed to the driver.  Lives
 * on the caller's stack for one call: nothing here is kept. */
struct cls__cmd {
  int kind;
  const char *op;               /* "launch", "upload", ... */
  struct cls__stream *stream;
  cls_kernel *kernel;           /* launches */
  struct cls_kernel_cmd kcmd;   /* launches */
  size_t nbind;
  struct cls__binding bind[CLS_MAX_ARGS]; /* argument order */
  struct cls_kernel_arg kargs[CLS_MAX_ARGS]; /* as the stream sets them
                                   (kcmd.args points here; a driver that
                                   defers the enqueue keeps a copy) */
  struct cls__xfer x;           /* transfers; x.blocking for every command */
  /* filled by the driver */
  cl_uint nwait;
  cl_event wait[CLS_MAX_STREAMS];
  uint64_t lent;                /* bit i: wait[i] is lent (not released) */
  uint64_t seq;                 /* given at submit */
};

/* order(): returned when ordering polled a stream and learnt of a failure;
 * the core re-checks the command's inputs and calls order() again. */
#define CLS__RETRY 1

#define CLS__DRIVER_OPS_VERSION 1

/* Every driver's state starts with this. */
struct cls__driver {
  const struct cls_driver_ops *ops;
  cls_context *ctx;
};

struct cls_driver_ops {
  unsigned version;             /* CLS__DRIVER_OPS_VERSION */
  const char *name;
  const char *description;
  /* Creates the driver's state: its stream pool over factory f, and its
   * failure table.  `params` is the text after "name:" in the driver
   * selection, or NULL.  On failure nothing is left behind. */
  int (*create)(cls_context *ctx, const char *params,
                const struct cls_stream_factory *f, void *fdata,
                struct cls__driver **out);
  /* Waits for all work and frees the state (streams included). */
  void (*destroy)(struct cls__driver *d);
  /* Creates the backend of logical stream s (s->id is set): fills
   * s->backend, the factory stream its memory pages are allocated on.
   * Called once, on the stream's first use. */
  int (*open)(struct cls__driver *d, struct cls__stream *s);
  /* Waits for s's work and drops its backend.  Called once per open(). */
  void (*close)(struct cls__driver *d, struct cls__stream *s);
  /* Learns what finished on s (wait: everything submitted so far): raises
   * s->completed and hands each command found failed to
   * cls__stream_failed(), in order. */
  int (*poll)(struct cls__driver *d, struct cls__stream *s, bool wait);
  /* The two accessors the shared failure store is written on. */
  struct cls__stream_pool *(*pool)(struct cls__driver *d);
  struct cls__failures *(*failures)(struct cls__driver *d);
  /* Makes cmd->stream ordered after everything its bindings depend on,
   * filling cmd->wait.  CLS__RETRY: a poll found a failure (the wait list
   * is empty then).  Negative: error. */
  int (*order)(struct cls__driver *d, struct cls__cmd *cmd);
  /* Enqueues the command (wait list from order()), gives it its seq, and
   * releases the wait list.  Returns the backend's cl_int. */
  cl_int (*submit)(struct cls__driver *d, struct cls__cmd *cmd);
  /* Drops a wait list order() filled when the command is not submitted. */
  void (*cancel)(struct cls__driver *d, struct cls__cmd *cmd);
  /* Waits until everything submitted on s has completed (s NULL: every
   * stream).  Failures found are handled through cls__stream_poll. */
  int (*sync)(struct cls__driver *d, struct cls__stream *s);
  /* Hands every command of s up to its command `upto` to s's backend
   * queue: memory they use is about to be released (cls_free), and only an
   * enqueued command holds its memory objects.  Optional: NULL for a
   * driver that enqueues at submit(). */
  void (*settle)(struct cls__driver *d, struct cls__stream *s, uint64_t upto);
};

/* Ordering (order.c).  s is now ordered after p up to p's command `upto`, and after everything p
 * was ordered after. */
void cls__order_synced(struct cls__stream *s, const struct cls__stream *p, uint64_t upto);

/* How a driver's streams reach their queues, for cls__order_after. */
struct cls__orderer {
  /* Called for each stream p the command depends on, up to p's command
   * `need`, before p is polled (the scheduler submits p's pending tasks
   * here).  Optional. */
  void (*prepare)(struct cls__driver *d, struct cls__stream *p, uint64_t need);
  /* The factory stream a marker for p comes from, or NULL when p and s
   * share a queue (its order is the order).  Required. */
  void *(*queue_of)(struct cls__driver *d, struct cls__stream *s, struct cls__stream *p);
  /* The factory stream that is p's queue, shared with s or not (its last
   * event is read to tell whether p is still running).  Optional: NULL
   * means queue_of. */
  void *(*backend_of)(struct cls__driver *d, struct cls__stream *p);
  /* p's last command handed to its queue (a marker covers up to it).
   * Optional: NULL means p->submitted. */
  uint64_t (*enqueued)(struct cls__driver *d, struct cls__stream *p);
  /* The command is enqueued (or its waits dropped) before anything else
   * is asked of the streams it waits for, so it may wait on events the
   * factory lends (last_event) instead of markers it owns. */
  bool enqueues_now;
};
/* The ordering every driver does: the streams cmd depends on are polled
 * (F8, and F7: CLS__RETRY when a failure was found, so the core checks the
 * inputs again), then cmd waits on each one not already ordered that far
 * and not finished: on an event of the other queue, after a flush.
 * Nothing after the polls learns of a failure.  Fills cmd->wait. */
int cls__order_after(struct cls__driver *d, struct cls__cmd *cmd, const struct cls__orderer *o);
/* Waits that order() took are dropped without a command carrying them
 * (its enqueue failed, or it is ordered again): what order() recorded (the
 * stream is after those producers) must still hold for the stream's next
 * commands, so the waits happen on the host. */
void cls__order_unsent(cl_uint nwait, const cl_event *wait);
/* Releases the events of cmd's wait list (inline: most commands have
 * none). */
void cls__order_release_waits(struct cls__cmd *cmd);
static inline void cls__order_release(struct cls__cmd *cmd) {
  if (cmd->nwait)
    cls__order_release_waits(cmd);
}
/* Drops cmd's waits without it being enqueued: on the host, then released
 * (a failed enqueue, a command ordered again, a cancelled one). */
static inline void cls__order_drop(struct cls__cmd *cmd) {
  cls__order_unsent(cmd->nwait, cmd->wait);
  cls__order_release(cmd);
}

/* Hands one command to a stream factory: the one place a command kind
 * becomes a factory call, for every driver. */
static inline cl_int cls__enqueue(const struct cls_stream_factory *f, void *stream, int kind,
                                  const struct cls_kernel_cmd *k, const struct cls__xfer *x,
                                  uint64_t seq, cl_uint nwait, const cl_event *wait) {
  switch (kind) {
  case CLS__CMD_LAUNCH:
    return f->launch(stream, k, seq, nwait, wait);
  case CLS__CMD_WRITE:
    return f->write(stream, x->dst, x->dst_offset, x->size, x->host_src, x->blocking, seq,
                    nwait, wait);
  case CLS__CMD_READ:
    return f->read(stream, x->src, x->src_offset, x->size, x->host_dst, x->blocking, seq, nwait,
                   wait);
  case CLS__CMD_COPY:
    return f->copy(stream, x->src, x->src_offset, x->dst, x->dst_offset, x->size, seq, nwait,
                   wait);
  case CLS__CMD_FILL:
    return f->fill(stream, x->dst, x->dst_offset, x->size, x->pattern, x->pattern_size, seq,
                   nwait, wait);
  }
  return CL_INVALID_OPERATION;
}

/* Enqueues cmd now, as backend command `seq` of the factory stream: its
 * waits are released, or dropped (cls__order_drop) when the enqueue
 * failed.  Returns the factory's status. */
static inline cl_int cls__enqueue_cmd(const struct cls_stream_factory *f, void *stream,
                                      struct cls__cmd *cmd, uint64_t seq) {
  cl_int rc = cls__enqueue(f, stream, cmd->kind, &cmd->kcmd, &cmd->x, seq, cmd->nwait,
                           cmd->nwait ? cmd->wait : NULL);
  if (rc != CL_SUCCESS)
    cls__order_drop(cmd);
  else
    cls__order_release(cmd);
  return rc;
}

/* F8 entry point for drivers: command `seq` of s failed after its enqueue. */
/* deferred: the failure is the enqueue itself, made later than the call by a
 * driver that batches (the report says so). */
void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred);

/* Runs a command through the failure rules and the driver (command.c).
 * `pending` is the record of a non-blocking download; `report` receives
 * the report of a download refused because its data is tainted.
 * Inline up to the F2 check, so a skip (the hot path of a failed pipeline,
 * F10) costs that check and cls__refuse, not the enqueue path's frame. */
int cls__refuse(cls_context *ctx, struct cls__cmd *cmd, struct cls__failure *found,
                cls_report **report);
int cls__run_clean(cls_context *ctx, struct cls__cmd *cmd, struct cls__pending_read *pending,
                   cls_report **report);
static inline int cls__run(cls_context *ctx, struct cls__cmd *cmd,
                           struct cls__pending_read *pending, cls_report **report) {
  struct cls__failure *found = cls__read_failure(ctx, cmd->stream->id, cmd->bind, cmd->nbind);
  if (found)
    return cls__refuse(ctx, cmd, found, report);
  return cls__run_clean(ctx, cmd, pending, report);
}

/* The registry: drivers built into this library, and selection by name
 * ("event", "help" lists them).  `spec` NULL: $CLS_SCHEDULER, then the
 * configure-time default.  *params points into spec after ':' or is NULL. */
int cls__driver_find(const char *spec, const struct cls_driver_ops **out,
                     const char **params);
extern const struct cls_driver_ops cls__event_driver;
extern const struct cls_driver_ops cls__scheduler_driver;
/* The drivers built in, for listings. */
size_t cls__driver_count(void);
const struct cls_driver_ops *cls__driver_at(size_t i);

#endif /* CLS_DRIVER_H */
