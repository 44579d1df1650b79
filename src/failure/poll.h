/* Internal: F8, learning what finished.  The one place that polls a
 * stream's backend (through its driver): what finished leaves the log
 * (log.h), and each failure the driver reports is replayed over it
 * (replay.h), after the streams with earlier commands in flight are polled
 * too, so that failures are applied in log order.  The command path,
 * ordering, syncs, memory and guard mode poll through here; drivers
 * report through cls__stream_failed*. */
#ifndef CLS_FAILURE_POLL_H
#define CLS_FAILURE_POLL_H

#include "failure/log.h"

/* Learns what s finished: the driver polls its backend and reports each
 * failed command through cls__stream_failed; the log is then pruned.
 * wait: block until everything submitted completed (with a deadline when
 * the context has one).  Return a CLS_E* code for a backend error, else 0. */
int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait);
/* Polls every created stream. */
int cls__poll_all(cls_context *ctx, bool wait);

/* For drivers: command `seq` of s failed after its enqueue.  deferred: the
 * failure is the enqueue itself, made later than the call by a driver that
 * batches, or reported after it (the report says so). */
void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred);
/* For drivers: one of commands first..last of s failed (ranged
 * attribution, F8a), and the parts of one failure on several streams
 * (a queue they share: streams[i]'s commands first[i]..last[i]). */
void cls__stream_failed_range(cls_context *ctx, struct cls__stream *s, uint64_t first,
                              uint64_t last, cl_int status);
void cls__stream_failed_parts(cls_context *ctx, struct cls__stream *const *streams,
                              const uint64_t *first, const uint64_t *last, size_t n,
                              cl_int status);
/* A failure clstream found itself (guard mode): command `seq` of stream
 * `stream` failed with `status` and `detail`, replayed as
 * cls__replay_failed_as says (`wrote` included); one reference for the
 * caller, NULL when the command is no longer logged (or out of memory). */
struct cls__failure *cls__poll_failed_as(cls_context *ctx, int stream, uint64_t seq,
                                         int status, const char *detail, cls_buffer wrote);

/* Before a report names the failures of `handles` (an error path, so it
 * may wait): a logged skip, a command that ran on a failed input, or the
 * still logged root of a failure found after its enqueue, counts on a
 * failure that may move, should a command logged before it turn out to
 * have failed (F8), whatever the order failures are found in.  Waits for
 * the streams of those commands, so that the report gives the final state,
 * not the one of the discovery order. */
void cls__poll_settle(cls_context *ctx, const cls_buffer *handles, size_t n);

#endif /* CLS_FAILURE_POLL_H */
