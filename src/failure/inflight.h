/* Internal: F8, failures found after the enqueue.  Every command in
 * flight is logged in submission order; polling a stream (through its
 * driver) learns what finished and what failed, and a failure is replayed
 * over the log so the final state is the one the enqueue-time rules (F2)
 * would have given.  This header is the whole of F8's interface: the
 * command path logs, drivers report, everyone else polls. */
#ifndef CLS_INFLIGHT_H
#define CLS_INFLIGHT_H

#include "failure/failure.h"

/* Skipped commands are not logged: their writes carry a known failure and
 * a newer write stamp, which is all the replay needs to know of them. */
/* Run and read come first: the prune tells them by kind < FAILED. */
enum cls__entry_kind {
  CLS__ENTRY_RUN = 1,   /* a command that was enqueued */
  CLS__ENTRY_READ,      /* a non-blocking download */
  CLS__ENTRY_FAILED,    /* a command whose enqueue failed: its writes carry
                           its own failure */
  CLS__ENTRY_SKIPPED    /* a skip on an input after the first while work was
                           in flight: an earlier input (argument order) may
                           still turn out to have failed, and then decides */
};

/* A logged binding: handle and access (slots move when a stream's table
 * grows, so the replay resolves handles). */
struct cls__log_binding {
  cls_buffer handle;
  int access;
};

/* Bindings an entry holds itself; a command with more keeps them in the
 * overflow array, in the row of the entry's position in the log.  The
 * entry stays two cache lines, so a log as long as the work in flight
 * (thousands of launches when the host runs ahead of the device) stays
 * compact. */
#define CLS__LOG_INLINE 4

struct cls__log_entry {
  uint64_t seq;                 /* 0 for skips */
  uint64_t position;            /* the stream's issued count, see cls__stream */
  uint64_t stamp;               /* write stamp its writes got */
  const char *op;
  const char *kernel;           /* the kernel's name, "" for other commands:
                                   lives as long as the context */
  struct cls__pending_read *read;
  /* The failure it counts on (a reference): the one of its first input in
   * argument order known to carry one (cause_arg, a binding index), or
   * NULL.  Set by a replay for a command that ran on a failed input (its
   * own failure, found later, then changes nothing) and at the skip of a
   * CLS__ENTRY_SKIPPED; moved by a later replay to a failure found on an
   * earlier input, whatever the order the failures were found in (F8). */
  struct cls__failure *cause;
  unsigned char kind;
  unsigned char stream;
  unsigned char nbind;
  unsigned char cause_arg;
  struct cls__log_binding bind[CLS__LOG_INLINE];
};
_Static_assert(sizeof(struct cls__log_entry) <= 128, "an F8 log entry is two cache lines");

/* Learning what finished (poll.c): the driver polls a stream's backend
 * and reports each failed command through cls__stream_failed, which
 * replays it over the log.  wait: block until everything submitted
 * completed.  Return a CLS_E* code for a backend error, else 0. */
int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait);
/* Polls every created stream. */
int cls__poll_all(cls_context *ctx, bool wait);
/* For drivers: command `seq` of s failed after its enqueue.  deferred: the
 * failure is the enqueue itself, made later than the call by a driver that
 * batches (the report says so). */
void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred);

/* Records a command in submission order.  Never allocates in steady state:
 * the rings only grow when more commands are in flight than ever before. */
/* 1 when the log is now full (see cls__inflight_commit). */
int cls__inflight_add(cls_context *ctx, int kind, int stream, uint64_t seq,
                      uint64_t position, uint64_t stamp, const char *op, const char *kernel,
                      const struct cls__binding *b, size_t n,
                      struct cls__pending_read *read);
/* What the log keeps of a binding. */
static inline struct cls__log_binding cls__log_binding_of(const struct cls__binding *b) {
  return (struct cls__log_binding){.handle = b->handle, .access = b->access};
}
/* Entry e's bindings. */
static inline struct cls__log_binding *cls__log_bindings(const cls_context *ctx,
                                                         struct cls__log_entry *e) {
  return e->nbind <= CLS__LOG_INLINE
             ? e->bind
             : ctx->inflight_overflow + (size_t)(e - ctx->inflight) * CLS_MAX_ARGS;
}
/* The same in two steps, for a caller that walks its bindings anyway:
 * reserve fills in all but the bindings, room for `nbind` of them
 * included (NULL with the error recorded when out of memory); the caller
 * sets them (cls__log_bindings) and commits.  Nothing may touch the log in
 * between. */
bool cls__inflight_make_room(cls_context *ctx, size_t nbind);
static inline struct cls__log_entry *cls__inflight_reserve(cls_context *ctx, int kind, int stream,
                                                           uint64_t seq, uint64_t position,
                                                           uint64_t stamp, const char *op,
                                                           const char *kernel,
                                                           struct cls__pending_read *read,
                                                           size_t nbind) {
  if ((ctx->inflight_len == ctx->inflight_cap ||
       (nbind > CLS__LOG_INLINE && !ctx->inflight_overflow)) &&
      !cls__inflight_make_room(ctx, nbind))
    return NULL;
  /* The capacity is a power of two. */
  struct cls__log_entry *e =
      &ctx->inflight[(ctx->inflight_head + ctx->inflight_len) & (ctx->inflight_cap - 1)];
  e->kind = (unsigned char)kind;
  e->stream = (unsigned char)stream;
  e->seq = seq;
  e->position = position;
  e->stamp = stamp;
  e->op = op;
  e->read = read;
  e->cause = NULL;
  e->kernel = kernel; /* never NULL: a name or the operation */
  e->nbind = (unsigned char)nbind;
  return e;
}
/* The entry is in the log.  True when the log is now full: the caller
 * then learns what finished (cls__poll_all), so a long chain on one stream
 * does not grow it -- only after the entry is in, since the poll may
 * report this very command failed. */
static inline bool cls__inflight_commit(cls_context *ctx) {
  return ++ctx->inflight_len == ctx->inflight_cap;
}
/* Drops the entries known complete (head first); all of them in one step
 * when every stream has finished what it submitted and none holds a cause. */
void cls__inflight_prune(cls_context *ctx);
/* The same for a failure clstream finds itself (guard mode): a record
 * with `status` and `detail`, one reference for the caller; NULL when the
 * command is no longer logged (or out of memory).  `wrote` (0: none): a
 * buffer the command declared it reads and was found to have written
 * (F11): the commands that read it after this one take the failure too
 * (the buffer itself is the caller's to mark). */
struct cls__failure *cls__inflight_failed_as(cls_context *ctx, int stream, uint64_t seq,
                                             int status, const char *detail, cls_buffer wrote);
/* The oldest logged command of `stream` after its command `after`, or
 * NULL. */
const struct cls__log_entry *cls__inflight_oldest(cls_context *ctx, int stream, uint64_t after);
/* F8: command `seq` of `stream` failed with `cl_status` after its enqueue. */
void cls__inflight_failed(cls_context *ctx, int stream, uint64_t seq,
                          cl_int cl_status, bool deferred);
/* F8a: one of commands first..last of `stream` failed (ranged
 * attribution); `prefix` (or NULL) opens the record's message. */
void cls__inflight_failed_range(cls_context *ctx, int stream, uint64_t first, uint64_t last,
                                cl_int cl_status, const char *prefix);
/* A stream's part of a range: its commands first..last. */
struct cls__range_part {
  int stream;
  uint64_t first, last;
};
/* The same for one failure whose range holds commands of several streams
 * (a queue they share), parts[i] each stream's part: one record for all. */
void cls__inflight_failed_parts(cls_context *ctx, const struct cls__range_part *parts, size_t n,
                                cl_int cl_status, const char *prefix);
/* For drivers: the same as cls__stream_failed for a range, and for the
 * parts of one failure on several streams (streams[i]'s commands
 * first[i]..last[i]). */
void cls__stream_failed_range(cls_context *ctx, struct cls__stream *s, uint64_t first,
                              uint64_t last, cl_int status);
void cls__stream_failed_parts(cls_context *ctx, struct cls__stream *const *streams,
                              const uint64_t *first, const uint64_t *last, size_t n,
                              cl_int status);
void cls__inflight_fini(cls_context *ctx);
/* The write stamp of the oldest logged command (the log is not empty): a
 * buffer written at or after it has its last write in the log. */
static inline uint64_t cls__inflight_oldest_stamp(const cls_context *ctx) {
  return ctx->inflight[ctx->inflight_head].stamp;
}
/* The newest entry (the log is not empty). */
static inline struct cls__log_entry *cls__inflight_newest(cls_context *ctx) {
  return &ctx->inflight[(ctx->inflight_head + ctx->inflight_len - 1) & (ctx->inflight_cap - 1)];
}
/* An entry of cls__inflight_overwritten: it reads nothing (its seq, unused
 * by a command that never reached a queue, says so). */
#define CLS__SEQ_WRITES_ONLY UINT64_MAX
static inline bool cls__inflight_writes_only(const struct cls__log_entry *e) {
  return e->kind == CLS__ENTRY_FAILED && e->seq == CLS__SEQ_WRITES_ONLY;
}
/* The newest entry, writes only, stands for a skip just made that wrote
 * nothing else: it takes the skip's stamp (the log stays in stamp order). */
static inline void cls__inflight_restamp(cls_context *ctx, uint64_t stamp) {
  cls__inflight_newest(ctx)->stamp = stamp;
}
/* skip_in_flight's arg: the first read binding carrying a failure. */
#define CLS__FIRST_FAILED ((size_t)-1)
/* A skip that cannot move overwrote buffers whose last write is logged:
 * logged with its writes only, never moved (see command.c). */
void cls__inflight_overwritten(cls_context *ctx, int stream, uint64_t position, uint64_t stamp,
                               const char *op, const char *kernel, const struct cls__binding *b,
                               size_t n);
/* A CLS__ENTRY_SKIPPED's cause_arg when no input decided (a build failure):
 * any input found failed later decides instead. */
#define CLS__NO_ARG 255
/* F2 with work in flight: see inflight.c. */
void cls__inflight_skipped(cls_context *ctx, struct cls__failure *found, size_t arg, int stream,
                           uint64_t position, uint64_t stamp, const char *op, const char *kernel,
                           const struct cls__binding *b, size_t n);
/* Before a report names the failures of `handles` (an error path, so it
 * may wait): a logged skip, a command that ran on a failed input, or the
 * still logged root of a failure found after its enqueue, counts on a
 * failure that may move, should a command logged before it turn out to
 * have failed (F8), whatever the order failures are found in.  Waits for
 * the streams of those commands, so that the report gives the final state,
 * not the one of the discovery order. */
void cls__inflight_settle(cls_context *ctx, const cls_buffer *handles, size_t n);
/* A pending read is being freed: entries stop pointing at it. */
void cls__inflight_forget_read(cls_context *ctx, struct cls__pending_read *r);

/* A non-blocking download, from its enqueue to the sync that ends it. */
struct cls__pending_read {
  struct cls__pending_read *next;
  int stream;
  uint64_t seq;
  cls_buffer handle;
  struct cls__failure *failure; /* set when an F8 replay finds it tainted */
  bool done;
};

#endif /* CLS_INFLIGHT_H */
