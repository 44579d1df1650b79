/* Internal: F8, what a failure found after the enqueue does to the
 * commands logged after it (log.h).  A failure is replayed over the log so
 * that the final state is the one the enqueue-time rules (F2) would have
 * given had every failure been known at its command's enqueue, whatever
 * the order failures are found in; a skip while commands are in flight is
 * logged so that a later replay can move it.  Nothing here polls: the
 * callers (poll.c, the command path) learn what finished first, and poll
 * when an entry added here fills the log. */
#ifndef CLS_FAILURE_REPLAY_H
#define CLS_FAILURE_REPLAY_H

#include "failure/log.h"

/* F8: command `seq` of `stream` failed with `cl_status` after its enqueue
 * (deferred: the failure is the enqueue itself, made later than the call
 * by a driver that batches, or reported after it).  Nothing happens when it is not logged. */
/* F8, "queued behind a failure": command `seq` of `stream` failed after
 * its enqueue with a status that says its queue was lost, on a device
 * that gives a command it fails behind a failed event that event's
 * status.  True when the log shows it queued behind a loss found before
 * (then it counted as skipped on that loss, and its own queue is not
 * lost); false: nothing was done. */
bool cls__replay_failed_behind(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status);
void cls__replay_failed(cls_context *ctx, int stream, uint64_t seq, cl_int cl_status,
                        bool deferred);
/* F8 whatever the order failures are found in: a command cls__replay_failed
 * made a failure of its own because it found nothing it was queued
 * behind (the device's dependent status) counts as skipped on a failure
 * found since that it was queued behind, as it would had that one been
 * found first.  Called after failures are applied; cheap when there is
 * none such. */
void cls__replay_behind_found(cls_context *ctx);
/* The same for a failure clstream finds itself (guard mode, a deadline, a
 * lost queue): a record with `status` and `detail`, one reference for the
 * caller; NULL when the command is no longer logged (or out of memory).
 * `wrote` (0: none): a buffer the command declared it reads and was found
 * to have written (F11): the commands that read it after this one take the
 * failure too (the buffer itself is the caller's to mark). */
struct cls__failure *cls__replay_failed_as(cls_context *ctx, int stream, uint64_t seq,
                                           int status, const char *detail, cls_buffer wrote);
/* Whether cl_status is what this device reports for a command it failed
 * behind a failed event (quirk dependent_fails with a status of its own:
 * PoCL's -1), which says nothing about the command itself. */
bool cls__replay_dependent_status(const cls_context *ctx, cl_int cl_status);
/* F8a: one of the commands of parts[0..n) failed (ranged attribution, or
 * a replayed capture's run): a stream's range, or the parts of one
 * failure on a queue several streams share.  One record for all; `prefix`
 * (or NULL) opens its message.  With the dependent status (above), where
 * a command of the range was queued behind a failure found after its
 * enqueue, each command of the range counts as skipped on that failure
 * instead (F5: the root is named). */
void cls__replay_failed_parts(cls_context *ctx, const struct cls__range_part *parts, size_t n,
                              cl_int cl_status, const char *prefix);

/* skip_in_flight's arg: the first read binding carrying a failure. */
#define CLS__FIRST_FAILED ((size_t)-1)
/* A CLS__ENTRY_SKIPPED's cause_arg when no input decided (a build failure):
 * any input found failed later decides instead. */
#define CLS__NO_ARG 255
/* F2 with work in flight, for the command path: command `at` skipped on
 * binding `arg` carrying `found`, with an earlier read binding whose
 * producer may still turn out to have failed (see replay.c).  Its writes
 * already carry found, with write stamp at->stamp.  True when the log is
 * now full: the caller polls (cls__poll_all). */
bool cls__replay_skipped(cls_context *ctx, struct cls__failure *found, size_t arg,
                         const struct cls__cmd_at *at);
/* A skip that cannot move overwrote buffers whose last write is logged:
 * logged with its writes only, never moved (see command.c).  True when
 * the log is now full, as cls__replay_skipped. */
bool cls__replay_overwritten(cls_context *ctx, const struct cls__cmd_at *at);

/* Frees the replay's scratch (the context's taint set). */
void cls__replay_fini(cls_context *ctx);

#endif /* CLS_FAILURE_REPLAY_H */
