/* Internal: a command as the core describes it to a driver -- its kind,
 * its bindings, the factory call it becomes, and the wait list ordering
 * gives it.  Types only. */
#ifndef CLS_CMD_H
#define CLS_CMD_H

#include "factory/enqueue.h"
#include "failure/failure.h"

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
  uint64_t seq;                 /* its number on its stream: set by the core
                                   before submit(), s->submitted + 1 */
};

#endif /* CLS_CMD_H */
