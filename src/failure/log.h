/* Internal: F8's log, the ring.  Every command in flight is logged in
 * submission order, context-wide (ctx->log); an entry leaves once known
 * complete.  This header promises the ring alone: adding an entry
 * (reserve and commit, or add), finding one, and dropping what finished.
 * What a failure found later does to the logged commands is replay.h's;
 * learning what finished, poll.h's.  The command path logs, drivers
 * report through poll.h, everyone else polls. */
#ifndef CLS_FAILURE_LOG_H
#define CLS_FAILURE_LOG_H

#include "failure/failure.h"

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

/* Other skips are not logged: their writes carry a known failure and a
 * newer write stamp, which is all the replay needs to know of them. */
struct cls__log_entry {
  uint64_t seq;                 /* 0 for skips */
  uint64_t position;            /* the stream's issued count, see cls__stream */
  uint64_t stamp;               /* write stamp its writes got */
  const char *op;
  const char *kernel;           /* the kernel's name for a launch, else ""
                                   (cls__cmd_at): lives as long as the
                                   context */
  struct cls__pending_read *read;
  /* The failure it counts on (a reference): the one of its first input in
   * argument order known to carry one (cause_arg, a binding index), or
   * NULL.  Set by a replay for a command that ran on a failed input (its
   * own failure, found later, then changes nothing) and at the skip of a
   * CLS__ENTRY_SKIPPED; moved by a later replay to a failure found on an
   * earlier input, whatever the order the failures were found in (F8). */
  struct cls__failure *cause;
  unsigned char kind;           /* enum cls__entry_kind */
  unsigned char stream;
  unsigned char nbind;
  unsigned char cause_arg;
  unsigned char cmd;            /* the command's kind (cls__cmd_at.kind) */
  struct cls__log_binding bind[CLS__LOG_INLINE];
};
_Static_assert(sizeof(struct cls__log_entry) <= 128, "an F8 log entry is two cache lines");

/* Entry i of the log, 0 the oldest (i < ctx->log.len). */
static inline struct cls__log_entry *cls__log_at(cls_context *ctx, size_t i) {
  return &ctx->log.ring[(ctx->log.head + i) & (ctx->log.cap - 1)];
}
/* What its name is in records and chains: the kernel's for a launch of a
 * known kernel, else the operation. */
static inline const char *cls__log_name(const struct cls__log_entry *e) {
  return e->kernel[0] ? e->kernel : e->op;
}
/* Whether e is named by its kernel (a launch) or label (a foreign
 * command) rather than by its operation. */
static inline bool cls__log_launch(const struct cls__log_entry *e) {
  return cls__cmd_named(e->cmd);
}

/* What the log keeps of a binding. */
static inline struct cls__log_binding cls__log_binding_of(const struct cls__binding *b) {
  return (struct cls__log_binding){.handle = b->handle, .access = b->access};
}
/* Entry e's bindings. */
static inline struct cls__log_binding *cls__log_bindings(const cls_context *ctx,
                                                         struct cls__log_entry *e) {
  return e->nbind <= CLS__LOG_INLINE
             ? e->bind
             : ctx->log.overflow + (size_t)(e - ctx->log.ring) * CLS_MAX_ARGS;
}

/* Records a command in submission order, in two steps for a caller that
 * walks its bindings anyway: reserve fills in all but the bindings, room
 * for at->nbind of them included (NULL with the error recorded when out of
 * memory); the caller sets them (cls__log_bindings) and commits.  Nothing
 * may touch the log in between.  `kind` is the entry's (enum
 * cls__entry_kind), `seq` the command's number on its stream (0 for a skip
 * or a failed enqueue), `read` its pending read (a non-blocking download)
 * or NULL; at->bind is not read.  Never allocates in steady state: the
 * ring only grows when more commands are in flight than ever before. */
bool cls__log_make_room(cls_context *ctx, size_t nbind);
static inline struct cls__log_entry *cls__log_reserve(cls_context *ctx, int kind, uint64_t seq,
                                                      const struct cls__cmd_at *at,
                                                      struct cls__pending_read *read) {
  struct cls__log *log = &ctx->log;
  if ((log->len == log->cap || (at->nbind > CLS__LOG_INLINE && !log->overflow)) &&
      !cls__log_make_room(ctx, at->nbind))
    return NULL;
  /* The capacity is a power of two. */
  struct cls__log_entry *e = &log->ring[(log->head + log->len) & (log->cap - 1)];
  e->kind = (unsigned char)kind;
  e->stream = (unsigned char)at->stream;
  e->seq = seq;
  e->position = at->position;
  e->stamp = at->stamp;
  e->op = at->op;
  e->read = read;
  e->cause = NULL;
  e->kernel = at->kernel;
  e->nbind = (unsigned char)at->nbind;
  e->cmd = (unsigned char)at->kind;
  return e;
}
/* The entry is in the log.  True when the log is now full: the caller
 * then learns what finished (cls__poll_all, poll.h), so a long chain on
 * one stream does not grow it -- only after the entry is in, since the
 * poll may report this very command failed. */
static inline bool cls__log_commit(cls_context *ctx) {
  return ++ctx->log.len == ctx->log.cap;
}
/* Both steps, with at->bind as the bindings.  CLS_ENOMEM (recorded), 1
 * when the log is now full (as cls__log_commit), else 0. */
int cls__log_add(cls_context *ctx, int kind, uint64_t seq, const struct cls__cmd_at *at,
                 struct cls__pending_read *read);

/* Drops the entries known complete (head first); all of them in one step
 * when every stream has finished what it submitted and none holds a cause. */
void cls__log_prune(cls_context *ctx);

/* The oldest logged command of `stream` after its command `after`, or
 * NULL. */
const struct cls__log_entry *cls__log_oldest(cls_context *ctx, int stream, uint64_t after);
/* A stream's commands first..last (seq). */
struct cls__range_part {
  int stream;
  uint64_t first, last;
};
/* Whether e is a logged command (run or read) of one of parts[0..n). */
static inline bool cls__log_in(const struct cls__log_entry *e,
                               const struct cls__range_part *parts, size_t n) {
  if (e->kind != CLS__ENTRY_RUN && e->kind != CLS__ENTRY_READ)
    return false;
  for (size_t i = 0; i < n; i++)
    if (e->stream == parts[i].stream && e->seq >= parts[i].first && e->seq <= parts[i].last)
      return true;
  return false;
}
/* The found failure's record (ctx->log.found) whose logged commands
 * include e, or NULL. */
static inline const struct cls__found *cls__log_found(const cls_context *ctx,
                                                      const struct cls__log_entry *e) {
  for (int j = 0; j < CLS__FOUND; j++) {
    const struct cls__found *x = &ctx->log.found[e->stream][j];
    if (x->f && e->stamp >= x->lo && e->stamp <= x->hi)
      return x;
  }
  return NULL;
}
/* The log position of the oldest logged command of parts[0..n); the log's
 * length when there is none. */
size_t cls__log_find(cls_context *ctx, const struct cls__range_part *parts, size_t n);

/* The write stamp of the oldest logged command (the log is not empty): a
 * buffer written at or after it has its last write in the log. */
static inline uint64_t cls__log_oldest_stamp(const cls_context *ctx) {
  return ctx->log.ring[ctx->log.head].stamp;
}
/* The newest entry (the log is not empty). */
static inline struct cls__log_entry *cls__log_newest(cls_context *ctx) {
  return cls__log_at(ctx, ctx->log.len - 1);
}
/* An entry of cls__replay_overwritten: it reads nothing (its seq, unused
 * by a command that never reached a queue, says so). */
#define CLS__SEQ_WRITES_ONLY UINT64_MAX
static inline bool cls__log_writes_only(const struct cls__log_entry *e) {
  return e->kind == CLS__ENTRY_FAILED && e->seq == CLS__SEQ_WRITES_ONLY;
}
/* The newest entry, writes only, stands for a skip just made that wrote
 * nothing else: it takes the skip's stamp (the log stays in stamp order). */
static inline void cls__log_restamp(cls_context *ctx, uint64_t stamp) {
  cls__log_newest(ctx)->stamp = stamp;
}

/* A non-blocking download, from its enqueue to the sync that ends it. */
struct cls__pending_read {
  struct cls__pending_read *next;
  int stream;
  uint64_t seq;
  cls_buffer handle;
  struct cls__failure *failure; /* set when an F8 replay finds it tainted */
  bool done;
};
/* A pending read is being freed: entries stop pointing at it. */
void cls__log_forget_read(cls_context *ctx, struct cls__pending_read *r);

/* Drops every entry (and the causes they hold) and frees the ring. */
void cls__log_fini(cls_context *ctx);

#endif /* CLS_FAILURE_LOG_H */
