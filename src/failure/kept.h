/* Internal: recovery's retention (docs/devices.md, "Recovery").  With
 * relocation and recovery on (and exact attribution), every command a
 * queue accepts is kept here, in submission order, with what enqueueing
 * it again needs -- its kind, stream, bindings, work sizes, kernel and a
 * snapshot of its argument values, fill pattern, copy ranges, upload
 * source -- until its stream proves it complete.  A poll that finds one
 * lost after its enqueue marks it (cls__keep_mark) instead of failing it;
 * at the next safe point the core runs the marked ones again
 * (core/keep.h).  No allocation per command: the ring grows amortised and
 * its entries are reused. */
#ifndef CLS_KEPT_H
#define CLS_KEPT_H

#include "base/cmd.h"
#include "base/context.h"

/* A command's argument bytes kept inline; one with more keeps them in the
 * context's overflow pool (struct cls__keep's over). */
#define CLS__KEEP_ARG_BYTES 512
#define CLS__KEEP_PATTERN 128

struct cls__kept {
  uint64_t seq;                 /* on its stream */
  uint64_t position;            /* its stream's issued count: with the
                                   stream, what its failure record names */
  uint64_t stamp;               /* context-wide submission order */
  int stream;
  int kind;                     /* enum cls__cmd_kind */
  unsigned replays;             /* times it ran again already (the bound) */
  uint64_t origin;              /* the stamp it had when first submitted
                                   (its own, unless it is a run again) */
  bool lost;                    /* marked: runs again at the next safe point */
  bool follows;                 /* marked as a follower: it ran, and runs again
                                   after what it follows (cls__keep_follow) */
  bool failed;                  /* a poll found it failed (not lost): it did
                                   not run, and its record stands */
  bool behind;                  /* ... with the status of a command failed
                                   behind another, before any loss it could
                                   be behind was found: a lost command found
                                   later that it was ordered after (a buffer
                                   it touches that one writes, or its
                                   stream) makes it run again after that one
                                   (cls__keep_follow) */
  bool stale;                   /* a follower whose host memory (or foreign
                                   data) a sync handed back: not run again */
  bool cross;                   /* it had to come after a command of another
                                   stream not known complete then: only
                                   such a command can have run early behind
                                   a failed one of its stream
                                   (cls__keep_follow) */
  const char *op;
  cls_foreign_fn fn;            /* foreign commands: the callback and its */
  void *data;                   /* data (valid until the stream is synced) */
  cls_kernel *kernel;           /* launches */
  struct cls_kernel_cmd kcmd;   /* global, local, offset, args re-pointed
                                   at replay */
  struct cls__sizes sz;
  struct cls_transfer x;        /* pattern re-pointed at replay; an image's
                                   origins, region and pitches are in it */
  struct cls__pending_read *read; /* a non-blocking download's, until its sync
                                   (cls__keep_forget_read) */
  unsigned char pattern[CLS__KEEP_PATTERN];
  size_t nbind;
  struct {
    cls_buffer handle;
    int access;
  } bind[CLS_MAX_ARGS];
  struct {
    size_t size;
    size_t at;                  /* offset in bytes[]; SIZE_MAX: NULL value */
  } args[CLS_MAX_ARGS];
  size_t over;                  /* its bytes' offset in the overflow pool */
  size_t over_size;             /* 0: its bytes are inline, in bytes[] */
  unsigned char bytes[CLS__KEEP_ARG_BYTES];
};

/* The bytes [*lo, *hi) of a buffer of `whole` bytes that a binding with
 * `access` (CLS_READ: what it reads, else what it writes) of a command of
 * `kind` with transfer `x` touches: a transfer's range, else (a launch, a
 * foreign command, an image at either end) the whole buffer. */
static inline void cls__binding_bytes(int kind, const struct cls_transfer *x, int access,
                                      size_t whole, size_t *lo, size_t *hi) {
  *lo = 0;
  *hi = whole;
  if (kind == CLS__CMD_LAUNCH || kind == CLS__CMD_FOREIGN || x->image)
    return;
  *lo = access & CLS_READ ? x->src_offset : x->dst_offset;
  *hi = *lo + x->size;
}

/* Keeps cmd (just accepted by its queue as command `seq` at `position`,
 * write stamp `stamp`; `read`: a non-blocking download's pending read, else NULL)
 * until its stream proves it complete.  Every command accepted while
 * commands are kept comes through here, so that each buffer notes the
 * bytes written since the oldest kept command (struct cls__slot's
 * span).  A command that cannot be run again (a blocking transfer,
 * finished at its return) is not kept.  False
 * only when out of memory: then it is not kept, and its loss is reported
 * as without recovery. */
bool cls__keep_add(cls_context *ctx, const struct cls__cmd *cmd, uint64_t position,
                   uint64_t stamp, struct cls__pending_read *read);
/* Pending read r is being freed (its sync ended it): entries stop
 * pointing at it. */
void cls__keep_forget_read(cls_context *ctx, const struct cls__pending_read *r);
/* Drops the kept commands proven complete (from the ring's head). */
void cls__keep_prune(cls_context *ctx);
/* A poll found command `seq` of `stream` lost after its enqueue (or
 * failed behind a lost one): true when it is kept and the bound lets it
 * run again (it is marked); else false, with why it is not run again in
 * `why` (empty: it was never kept). */
bool cls__keep_mark(cls_context *ctx, int stream, uint64_t seq, char *why, size_t cap);
/* A poll found commands `first`..`last` of `stream` failed (a cause
 * that is not a loss, or one they are marked for): they did not run, so
 * none is run again as a follower. */
void cls__keep_failed(cls_context *ctx, int stream, uint64_t first, uint64_t last);
/* Command `seq` of `stream`, just found failed (cls__keep_failed), failed
 * with the status a device gives a command behind a failed one, and no
 * loss it was behind is known yet: should one turn up, it runs again
 * after it (struct cls__kept's `behind`). */
void cls__keep_behind(cls_context *ctx, int stream, uint64_t seq);
/* Whether a kept command is marked behind (cls__keep_behind) and not
 * yet run again: a loss found later may still explain its failure. */
bool cls__keep_any_behind(const cls_context *ctx);
/* Before the marked commands run again: a later kept command that ran
 * (neither marked nor failed) and reads or writes a buffer one of them
 * writes is marked too, as a follower, and so on in submission order:
 * run again before it, the marked ones would overwrite what it wrote, or
 * it read what they never wrote (a device may run what is queued behind
 * a failed command).  Buffers are compared by handle.  A follower whose
 * host memory a sync of its stream handed back (a non-blocking transfer,
 * a foreign command's data) is marked stale: it is not run again, and
 * what the replay overwrote of its writes takes the loss. */
void cls__keep_follow(cls_context *ctx);
/* Whether command `seq` of `stream` is kept and marked to run again. */
bool cls__keep_is_marked(cls_context *ctx, int stream, uint64_t seq);
/* Whether the command whose write stamp is `stamp` is kept and marked to
 * run again, not as a follower (so it wrote nothing yet). */
bool cls__keep_runs_again(cls_context *ctx, uint64_t stamp);

/* Whether the command at `position` of `stream` (what a failure record
 * of this process names) is one of the last CLS__KEEP_TAKEN taken to run
 * again (cls__keep_take_lost: entries go in submission order, so one a
 * command read from was taken before it): its record was replaced by that
 * run. */
bool cls__keep_taken(const cls_context *ctx, int stream, uint64_t position);
/* How often command `seq` of `stream` was run again after a loss (0:
 * never, or not kept). */
unsigned cls__keep_replays(cls_context *ctx, int stream, uint64_t seq);
/* The write stamp command `seq` of `stream` had when first submitted
 * (a run again after a loss: the lost command's), or 0 when it is not
 * kept: where F8 places a failure of it in program order (replay.c). */
uint64_t cls__keep_origin(cls_context *ctx, int stream, uint64_t seq);
/* Where the logged command with write stamp `stamp` stands in program
 * order: a run again after a loss, the stamp it had when first submitted
 * (its origin), else `stamp`. */
uint64_t cls__keep_placed(const cls_context *ctx, uint64_t stamp);
/* Whether a command first submitted before write stamp `stamp` is to run
 * again after a loss, or runs again and is not known complete: a failure
 * of it is still to be placed before `stamp` in program order (log.c
 * keeps the skips it may move). */
bool cls__keep_before(cls_context *ctx, uint64_t stamp);
/* Undoes the mark cls__keep_mark just made (the command ran after all). */
void cls__keep_unmark(cls_context *ctx, int stream, uint64_t seq);
/* The streams of the kept commands (not proven complete) that bind h. */
uint64_t cls__keep_streams_binding(cls_context *ctx, cls_buffer h);
/* The first marked command in submission order, copied into *out (the
 * ring may grow while it runs) and unmarked; false when none is. */
bool cls__keep_take_lost(cls_context *ctx, struct cls__kept *out);
void cls__keep_fini(cls_context *ctx);

#endif /* CLS_KEPT_H */
