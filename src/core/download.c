/* A download run to its end, whatever started it (cls_download,
 * cls_image_download, a replayed capture): through the one command path,
 * then, when blocking, whether what it read was written (F5). */
#include "core/command.h"
#include "core/relocate.h"
#include "failure/poll.h"
#include "failure/replay.h"
#include "failure/report.h"
#include "guard/guard.h"
#include "memory/memory.h"

#include <stdlib.h>

/* A download described in cmd (one READ binding; buffer or image), run
 * to the end: a non-blocking one is queued for its sync, a blocking one
 * learns whether what it read was written (F5). */
int cls__download_run(cls_context *ctx, struct cls__cmd *cmd, cls_report **report) {
  int rc;
  int stream = cmd->stream->id;
  bool blocking = cmd->x.blocking;
  cls_buffer src = cmd->bind[0].handle;
  struct cls__slot *s = cmd->bind[0].slot;
  struct cls__pending_read *pending = NULL;
  if (!blocking) {
    pending = calloc(1, sizeof *pending);
    if (!pending) {
      rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
      goto out;
    }
    pending->stream = stream;
    pending->handle = src;
  }
  unsigned reads = 0;
  bool behind = false; /* read again once, failed behind another command */
again:
  rc = cls__run(ctx, cmd, pending, report);
  if (rc < 0) {
    if (pending)
      cls__log_forget_read(ctx, pending);
    free(pending);
    goto out;
  }
  if (pending) {
    pending->seq = cmd->seq;
    pending->next = ctx->reads;
    ctx->reads = pending;
    goto out;
  }
  /* The bytes are here; whether anything wrote them is learnt now: a read
   * enqueued before its producer failed returns success having copied
   * nothing on every vendor measured, so check what the read depended on. */
  uint64_t read_stamp = ctx->stamp;
  rc = cls__poll_all(ctx, false);
  if (rc < 0)
    goto out;
  /* Recovery: the poll found a producer of what was read lost after its
   * enqueue (the read copied what the lost queue never wrote).  It runs
   * again now, a safe point, writing the buffer after the read: read
   * again, behind it (a replay of the download), at most once more than
   * the recovery bound lets a command run again; past that, what was
   * read is not handed over as written. */
  if (ctx->recover)
    cls__relocate_pending(ctx);
  if (s->write_stamp > read_stamp && ctx->recover) {
    if (reads++ > ctx->recover) {
      rc = cls__error(CLS_ECL, CL_DEVICE_NOT_AVAILABLE,
                      "download on stream %d: what it read was written again by recovery "
                      "after each of %u reads",
                      stream, reads);
      goto out;
    }
    cmd->stream->stats.replays++;
    goto again;
  }
  /* The device failed it behind another command's failure (PoCL's -1,
   * quirk dependent_fails: a command queued behind a failed one), alone
   * or in a failed range, and what it read carries no failure: it copied
   * nothing, and nothing is wrong with its bytes.  Enqueued again, after
   * that failure, it runs (a device that fails what is queued behind a
   * failure runs what is enqueued after it): once (found by the model,
   * CLS_MODEL_LATE=1, fresh seed 0xa71b52b77e26, under the scheduler,
   * which hands the read over behind the failed command). */
  if (!behind && cmd->stream->failed_first <= cmd->seq && cmd->seq <= cmd->stream->failed_seq &&
      cls__replay_dependent_status(ctx, cmd->stream->failed_status) &&
      cls__read_report(ctx, "download", stream, &src, 1, NULL) == CLS_OK) {
    behind = true;
    goto again;
  }
  /* Known to have failed itself (exact attribution); a range of one
   * command (this stream's part of a queue's range) is not known so. */
  if (cmd->stream->failed_seq == cmd->seq && cmd->stream->failed_first == cmd->seq &&
      !cmd->stream->failed_ranged) {
    rc = cls__error(CLS_ECL, cmd->stream->failed_status, "download on stream %d failed: %s",
                    stream, cls_cl_status_name(cmd->stream->failed_status));
    goto out;
  }
  rc = cls__read_report(ctx, "download", stream, &src, 1, report);
  /* Ranged attribution: the download was in a failed range.  What it read
   * carries the range's failure when the range wrote it (reported above);
   * else the download itself may be the command that failed. */
  if (rc == CLS_OK && cmd->stream->failed_first <= cmd->seq && cmd->seq <= cmd->stream->failed_seq) {
    rc = cls__error(CLS_ECL, cmd->stream->failed_status,
                    "download on stream %d is in a range of commands one of which failed "
                    "(%s); rerun with CLS_PRECISE=1 to pin it",
                    stream, cls_cl_status_name(cmd->stream->failed_status));
    goto out;
  }
  /* Guard mode: bytes a CLS_OUT launch never wrote make the buffer fail
   * (an image has no canary: docs/guard.md). */
  if (rc == CLS_OK && ctx->guard && !s->image &&
      cls__guard_canary_read(ctx, src, s, cmd->x.src_offset, cmd->x.host_dst, cmd->x.size) ==
          CLS_EGUARD)
    rc = cls__read_report(ctx, "download", stream, &src, 1, report);
out:
  return rc;
}
