/* Internal: the command path (command.c), the one path every command
 * takes -- launches, uploads, downloads, copies and fills: the F2 check,
 * ordering through the driver, the write scope (F3/F4), submission, and
 * the F8 log. */
#ifndef CLS_COMMAND_H
#define CLS_COMMAND_H

#include "base/cmd.h"
#include "failure/failure.h"

/* Runs a command through the failure rules and the driver.  `pending` is
 * the record of a non-blocking download; `report` receives the report of a
 * download refused because its data is tainted.  Inline up to the F2
 * check, so a skip (the hot path of a failed pipeline, F10) costs that
 * check and cls__refuse, not the enqueue path's frame. */
int cls__refuse(cls_context *ctx, struct cls__cmd *cmd, struct cls__failure *found,
                cls_report **report);
/* cls__refuse, and the skip's trace instant. */
int cls__refuse_traced(cls_context *ctx, struct cls__cmd *cmd, struct cls__failure *found,
                       cls_report **report);
int cls__run_clean(cls_context *ctx, struct cls__cmd *cmd, struct cls__pending_read *pending,
                   cls_report **report);
/* cls__run_clean between two readings of the clock, and the command's
 * trace event when the driver accepted it (src/trace/trace.h).  Tracing
 * off costs cls__run one predictable branch. */
int cls__run_traced(cls_context *ctx, struct cls__cmd *cmd, struct cls__pending_read *pending,
                    cls_report **report);
/* cls__run for a command whose caller knows that no read binding carries
 * a failure (F2 checked while the bindings were resolved). */
static inline int cls__run_checked(cls_context *ctx, struct cls__cmd *cmd,
                                   struct cls__pending_read *pending, cls_report **report) {
  if (__builtin_expect(ctx->trace != NULL, 0))
    return cls__run_traced(ctx, cmd, pending, report);
  return cls__run_clean(ctx, cmd, pending, report);
}
/* Recovery, step 1 found `found` on an input: where it may be the record
 * of a command a device failed behind a command lost after its enqueue,
 * a loss not found yet (failure/kept.h, `behind`), every stream is waited
 * for to learn it, and the lost work runs again (which may write that
 * input anew).  True when it waited: F2 is checked again.  The
 * skip or refusal then follows the final state, not the order the
 * polls found the failures in (F8). */
bool cls__learn_loss_first(cls_context *ctx, const struct cls__failure *found);
/* Step 1 alone: true when the F2 check refuses cmd, with cls__refuse's
 * result in *rc.  Of a launch it reads only kcmd.name. */
static inline bool cls__f2_refuses(cls_context *ctx, struct cls__cmd *cmd, cls_report **report,
                                   int *rc) {
  struct cls__failure *found = cls__read_failure(ctx, cmd->stream->id, cmd->bind, cmd->nbind);
  if (!found)
    return false;
  if (__builtin_expect(ctx->keep.len != 0, 0) && cls__learn_loss_first(ctx, found) &&
      !(found = cls__read_failure(ctx, cmd->stream->id, cmd->bind, cmd->nbind)))
    return false;
  *rc = __builtin_expect(ctx->trace != NULL, 0) ? cls__refuse_traced(ctx, cmd, found, report)
                                                : cls__refuse(ctx, cmd, found, report);
  return true;
}
static inline int cls__run(cls_context *ctx, struct cls__cmd *cmd,
                           struct cls__pending_read *pending, cls_report **report) {
  int rc;
  if (cls__f2_refuses(ctx, cmd, report, &rc))
    return rc;
  return cls__run_checked(ctx, cmd, pending, report);
}

/* Guard mode, after cls_launch ran `launch` (rc its result): the CLS_IN
 * bindings copied before it (F11) are copied again behind it, to compare
 * once complete (guard/guard.h). */
void cls__guard_launched(cls_context *ctx, struct cls__cmd *launch, int rc);

/* A download described in cmd (one read binding, a buffer's or an
 * image's; stream, x set), run to the end: queued for its sync when not
 * blocking, else checked for what it read (F5).  Lock held (download.c). */
int cls__download_run(cls_context *ctx, struct cls__cmd *cmd, cls_report **report);

#endif /* CLS_COMMAND_H */
