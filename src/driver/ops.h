/* Internal: the driver ops struct, as the core calls it.  The contract
 * of each member, and what a driver may call of the core, are described
 * in driver.h. */
#ifndef CLS_OPS_H
#define CLS_OPS_H

#include "driver/cmd.h"

#define CLS__DRIVER_OPS_VERSION 2 /* 2: the context owns pool and failures */

/* Every driver's state starts with this; the core fills it in after
 * create() returns. */
struct cls__driver {
  const struct cls__driver_ops *ops;
  cls_context *ctx;
};

/* One parameter of a driver, as CLS_SCHEDULER=help shows it. */
struct cls__driver_param {
  const char *syntax;  /* "max_tasks=N" */
  const char *meaning; /* one line */
};

struct cls__driver_ops {
  unsigned version;             /* CLS__DRIVER_OPS_VERSION */
  const char *name;             /* as CLS_SCHEDULER names it */
  const char *description;      /* one line */
  /* For CLS_SCHEDULER=help: the whole selection's syntax
   * ("scheduler[:sequential|interleave][,max_tasks=N]"), and its
   * parameters, the table ending with {NULL, NULL}.  Optional: NULL
   * usage means the name alone, NULL params that it takes none. */
  const char *usage;
  const struct cls__driver_param *params;
  /* Creates the driver's state from `params` (the text after "name:" in
   * the selection, or NULL); *out is owned by the core until destroy().
   * Streams do not exist yet.  On failure nothing is left behind, and the
   * error is recorded (cls__error).  Required. */
  int (*create)(cls_context *ctx, const char *params, struct cls__driver **out);
  /* Frees the state.  Called once, after the core has waited for all
   * work and closed every stream.  Required. */
  void (*destroy)(struct cls__driver *d);
  /* Creates the backend of logical stream s (s->id is set) through the
   * context's factory (cls__factory): fills s->backend, the factory stream
   * its memory pages are allocated on.  Called once, on the stream's first
   * use.  Required. */
  int (*open)(struct cls__driver *d, struct cls__stream *s);
  /* Drops s's backend.  Called once per successful open(), after the core
   * waited for s's work (poll with wait).  Required. */
  void (*close)(struct cls__driver *d, struct cls__stream *s);
  /* Learns what finished on s (wait: after handing s's deferred commands
   * to its queue, everything submitted so far): raises s->completed and
   * reports each command found failed through cls__stream_failed(), in
   * order.  Required. */
  int (*poll)(struct cls__driver *d, struct cls__stream *s, bool wait);
  /* Makes cmd->stream ordered after everything its bindings depend on,
   * filling cmd->wait (cls__order_after does the work).  CLS__RETRY: a
   * poll found a failure (the wait list is empty then).  Negative: error,
   * recorded.  Required. */
  int (*order)(struct cls__driver *d, struct cls__cmd *cmd);
  /* Enqueues the command as command cmd->seq of its stream (now, or later
   * for a driver that defers), and takes over its wait list: releases it
   * once enqueued, or drops it (cls__order_drop) when the enqueue fails.
   * Returns CL_SUCCESS, or the backend's status when the command was not
   * accepted; the core then counts it (s->submitted, stats).  Required. */
  cl_int (*submit)(struct cls__driver *d, struct cls__cmd *cmd);
  /* Hands every command of s up to its command `upto` to s's backend
   * queue: memory they use is about to be released (cls_free), and only an
   * enqueued command holds its memory objects.  Optional: NULL for a
   * driver that enqueues at submit(). */
  void (*settle)(struct cls__driver *d, struct cls__stream *s, uint64_t upto);
  /* F8 found that command `seq` of s, accepted but not yet handed to the
   * backend, reads a failed input: the driver drops it, so it is skipped
   * as it would have been had the failure been known at its submit().
   * Returns true when it was dropped; it then completes in order with s's
   * other commands (s->completed passes it) and its waits still order
   * what comes after it.  Called during a poll, maybe while the driver is
   * submitting.  Optional: NULL for a driver that enqueues at submit(). */
  bool (*withdraw)(struct cls__driver *d, struct cls__stream *s, uint64_t seq);
};

#endif /* CLS_OPS_H */
