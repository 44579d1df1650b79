/* Internal: a command as the core describes it to a driver -- its kind,
 * its bindings, the factory call it becomes, and the wait list ordering
 * gives it.  Types only. */
#ifndef CLS_CMD_H
#define CLS_CMD_H

#include "base/slot.h"
#include "base/stream.h"
#include "factory/enqueue.h"

#include <clstream/driver.h>
#include <stdbool.h>
#include <stddef.h>

/* A binding as the store sees it: a resolved slot and its access. */
struct cls__binding {
  cls_buffer handle;
  struct cls__slot *slot;
  int access;                   /* enum cls_access */
};

/* One command, described once by the core and handed to the driver.  Lives
 * on the caller's stack for one call: nothing here is kept. */
struct cls__cmd {
  /* What the driver sees (struct cls_driver_cmd), under the core's names
   * and types: the same members, in the same order. */
  union {
    struct cls_driver_cmd pub;
    struct {
      int kind;
      struct cls__stream *stream;
      struct cls_kernel_cmd kcmd;   /* launches */
      struct cls_transfer x;        /* transfers; x.blocking for every command */
      /* filled by the driver */
      cl_uint nwait;
      cl_event wait[CLS_MAX_STREAMS];
      uint64_t lent;                /* bit i: wait[i] is lent (not released) */
      uint64_t seq;                 /* its number on its stream: set by the core
                                       before submit(), s->submitted + 1 */
      const struct cls_foreign_cmd *foreign; /* foreign commands */
    };
  };
  const char *op;               /* "launch", "upload", ... */
  cls_kernel *kernel;           /* launches */
  size_t nbind;
  struct cls__binding bind[CLS_MAX_ARGS]; /* argument order */
  struct cls_kernel_arg kargs[CLS_MAX_ARGS]; /* as the stream sets them
                                   (kcmd.args points here; a driver that
                                   defers the enqueue keeps a copy) */
};

/* The operation of guard mode's copy of a CLS_IN buffer into a shadow
 * (core/command.c): clstream's own, writing no buffer of the user's, so a
 * failure chain never names it (failure/replay.c). */
#define CLS__OP_GUARD_COPY "guard copy"

#define CLS__SAME_MEMBER(core, pub, m)                                                     \
  _Static_assert(offsetof(struct core, m) == offsetof(struct pub, m) &&                    \
                     sizeof(((struct core *)0)->m) == sizeof(((struct pub *)0)->m),        \
                 #m " is where the driver view has it")
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, kind);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, stream);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, kcmd);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, x);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, nwait);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, wait);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, lent);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, seq);
CLS__SAME_MEMBER(cls__cmd, cls_driver_cmd, foreign);

/* The core's command behind a driver's view of it. */
static inline struct cls__cmd *cls__cmd_of(struct cls_driver_cmd *c) {
  return (struct cls__cmd *)c;
}

/* Whether a binding of c other than bind[i] names bind[i]'s buffer with an
 * access that has `bit` (CLS_READ's or CLS_WRITE's): one buffer given as
 * destination and source, as the vendor samples' in-place calls do
 * (CLS_OUT(b), ..., CLS_IN(b)).  F11 and guard mode (docs/design.md). */
static inline bool cls__cmd_binds_elsewhere(const struct cls__cmd *c, size_t i, int bit) {
  for (size_t j = 0; j < c->nbind; j++)
    if (j != i && c->bind[j].slot == c->bind[i].slot && (c->bind[j].access & bit))
      return true;
  return false;
}

/* A launch's work sizes, owned: a captured or kept launch outlives the
 * caller's arrays, which live for the call only. */
struct cls__sizes {
  size_t global[3], local[3], offset[3];
  bool has_local, has_offset;
};

/* Copies dims sizes into z (local and offset may be NULL). */
static inline void cls__sizes_keep(struct cls__sizes *z, cl_uint dims, const size_t *global,
                                   const size_t *local, const size_t *offset) {
  for (cl_uint d = 0; d < dims; d++) {
    z->global[d] = global[d];
    z->local[d] = local ? local[d] : 0;
    z->offset[d] = offset ? offset[d] : 0;
  }
  z->has_local = local != NULL;
  z->has_offset = offset != NULL;
}

/* Points kc's size arrays at z's. */
static inline void cls__sizes_point(struct cls_kernel_cmd *kc, const struct cls__sizes *z) {
  kc->global = z->global;
  kc->local = z->has_local ? z->local : NULL;
  kc->offset = z->has_offset ? z->offset : NULL;
}

#endif /* CLS_CMD_H */
