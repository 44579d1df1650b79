/* Internal: failure records and the failure store (rules F1-F10).
 *
 * A failure is a reference-counted record of one root cause and the chain of
 * launches it stopped.  Buffers hold at most one reference each (F1); reports
 * hold references too, so a failure lives as long as anything can still
 * name it.  Records are independent of the context: a report outlives it.
 *
 * The store functions below are written once, on top of the two accessors
 * every driver provides (its stream pool and its failure table, see
 * driver.h), so both drivers share every rule unchanged. */
#ifndef CLS_FAILURE_H
#define CLS_FAILURE_H

#include "core.h"

#include <stdatomic.h>

/* Skip chains are run-length encoded (consecutive skips of one kernel on one
 * stream are one entry) and bounded, so recording a skip never allocates
 * (F10).  Entries past the bound are counted, not stored. */
#define CLS__MAX_SKIP_ENTRIES 32
#define CLS__NAME_MAX 48

struct cls__skip {
  const char *key;              /* the name as given: consecutive skips of one
                                   kernel compare by pointer (never read) */
  int kind;                     /* enum cls_skip_kind */
  int stream;
  uint64_t position;
  uint64_t count;
  char kernel[CLS__NAME_MAX];
};

struct cls__failure {
  /* Atomic: a report (which holds a reference) may be freed on any thread
   * while the context's thread moves buffer references.  Stays first:
   * reports copy everything after it (report.c). */
  atomic_uint refs;
  int status;                   /* CLS_E* */
  cl_int cl_status;
  const char *operation;        /* static string */
  char kernel[CLS__NAME_MAX];
  int stream;
  uint64_t position;
  char message[192];
  char *build_log;              /* owned, may be NULL */
  bool provisional;             /* F3: a write scope that has not ended */
  /* While provisional: what the scope was running, copied into the fields
   * above only if the scope never ends (the names live in the context). */
  const char *scope_name;
  bool async;                   /* F8: found after the enqueue */
  bool logged;                  /* F9 */
  uint64_t skipped;             /* launches in the chain */
  uint64_t dropped;             /* launches past the stored entries */
  size_t nskips;
  struct cls__skip skips[CLS__MAX_SKIP_ENTRIES];
};

/* The failure table a driver owns. */
struct cls__failures {
  struct cls__failure *spare;   /* provisional record reused by F3 scopes */
  const struct cls__logger *log;
  uint64_t minted;
};

void cls__failures_init(struct cls__failures *ft, const struct cls__logger *log);
void cls__failures_fini(struct cls__failures *ft);

/* Reference counting, inline: a launch moves two references (its write
 * scope's record onto each output, then off).  unref frees at zero;
 * the never-written sentinel is not counted. */
extern struct cls__failure cls__never_written;
void cls__failure_free(struct cls__failure *f);
static inline void cls__failure_ref(struct cls__failure *f) {
  if (f && f != &cls__never_written)
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
}
static inline void cls__failure_unref(struct cls__failure *f) {
  if (f && f != &cls__never_written &&
      atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) == 1)
    cls__failure_free(f);
}
/* Number of failure records alive in the process (tests: F1). */
size_t cls__failures_alive(void);

/* Mints a new root failure with one reference held by the caller, and logs
 * it (F9).  async: found after the enqueue (F8).  NULL only when out of host memory. */
struct cls__failure *cls__failure_mint(cls_context *ctx, int status,
                                       cl_int cl_status, const char *op,
                                       const char *kernel, int stream,
                                       uint64_t position, bool async,
                                       const char *fmt, ...)
    __attribute__((format(printf, 9, 10)));

/* Points a slot at f (or at nothing), moving the references. */
static inline void cls__slot_set_failure(struct cls__slot *slot, struct cls__failure *f) {
  struct cls__failure *old = slot->failure;
  if (old == f)
    return;
  cls__failure_ref(f);
  slot->failure = f;
  cls__failure_unref(old);
}

/* Appends a skip to f's chain (F2, F8).  Never allocates.  Inline for the
 * common case, a run of skips of one kernel on one stream (same name
 * pointer): the last entry counts one more. */
void cls__failure_add_skip_slow(struct cls__failure *f, int kind, const char *kernel,
                                int stream, uint64_t position);
static inline void cls__failure_add_skip(struct cls__failure *f, int kind, const char *kernel,
                                         int stream, uint64_t position) {
  f->skipped++;
  struct cls__skip *last = &f->skips[f->nskips ? f->nskips - 1 : 0];
  if (f->nskips && last->key == kernel && last->kind == kind && last->stream == stream)
    last->count++;
  else
    cls__failure_add_skip_slow(f, kind, kernel, stream, position);
}

/* A binding as the store sees it: a resolved slot and its access. */
struct cls__binding {
  cls_buffer handle;
  struct cls__slot *slot;
  int access;                   /* enum cls_access */
};

/* F2: the failure carried by the first read binding (argument order) that
 * carries one, or NULL.  A "never written" slot gets its record minted
 * here, the one slow path of the check. */
struct cls__failure *cls__materialize(cls_context *ctx, struct cls__slot *slot, cls_buffer h);
static inline struct cls__failure *cls__read_failure(cls_context *ctx, int stream,
                                                     const struct cls__binding *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    struct cls__failure *f = b[i].slot->failure;
    if (!(b[i].access & CLS_READ) || !f)
      continue;
    if (f == &cls__never_written || f->provisional)
      return cls__materialize(ctx, b[i].slot, b[i].handle);
    return f;
  }
  return NULL;
}

/* F2: a skipped launch.  Every write binding takes `found` (the root, not a
 * new record) and the skip is appended to its chain.  No allocation. */
static inline void cls__propagate(cls_context *ctx, struct cls__failure *found, int kind,
                                  const char *kernel, int stream, uint64_t position,
                                  const struct cls__binding *b, size_t n) {
  uint64_t stamp = ++ctx->stamp;
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE) {
      cls__slot_set_failure(b[i].slot, found);
      b[i].slot->write_stamp = stamp;
    }
  cls__failure_add_skip(found, kind, kernel, stream, position);
}
/* Stamps every write binding with a new context-wide write stamp and
 * returns it (the F8 replay tells later writes from earlier ones by it). */
uint64_t cls__stamp_writes(cls_context *ctx, const struct cls__binding *b, size_t n);

/* F3: enter a write scope: every write binding takes a provisional failure,
 * returned (NULL when the write set is empty: nothing is minted). */
struct cls__failure *cls__enter_write(cls_context *ctx,
                                      const struct cls__binding *b, size_t n);
/* F3/F4: leave the scope.  error == NULL: the work was enqueued, the write
 * set is released (writing clears).  Otherwise the provisional record is
 * replaced by `error` on every buffer that still holds it.  Per binding
 * too, for a caller that walks its bindings once for several rules. */
static inline void cls__exit_write_one(struct cls__slot *slot, struct cls__failure *provisional,
                                       struct cls__failure *error) {
  if (slot->failure == provisional) /* else a replay changed it since */
    cls__slot_set_failure(slot, error);
}
static inline void cls__exit_write(struct cls__failure *provisional, const struct cls__binding *b,
                                   size_t n, struct cls__failure *error) {
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE)
      cls__exit_write_one(b[i].slot, provisional, error);
}

/* F5: builds the report of a read over `handles`: every distinct failure
 * once, every bad handle.  Returns CLS_OK when there is nothing to report
 * (and *out is NULL), CLS_ETAINTED with *out (if out != NULL) otherwise, or
 * CLS_ENOMEM. */
int cls__read_report(cls_context *ctx, const cls_buffer *handles, size_t n,
                     cls_report **out);
/* A report naming exactly the given failures (async read failures). */
int cls__report_from(struct cls__failure *const *fs, size_t n, cls_report **out);

/* ------------------------------------------------------------------ */
/* F8: in-flight log (inflight.c)                                      */
/* ------------------------------------------------------------------ */

/* Skipped commands are not logged: their writes carry a known failure and
 * a newer write stamp, which is all the replay needs to know of them. */
enum cls__entry_kind {
  CLS__ENTRY_RUN = 1,   /* a command that was enqueued */
  CLS__ENTRY_READ,      /* a non-blocking download */
  CLS__ENTRY_FAILED     /* a command whose enqueue failed: its writes carry
                           its own failure */
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
  int kind;
  int stream;
  unsigned nbind;
  bool untrusted;               /* a replay found it ran on a failed input:
                                   its own failure, found later, changes
                                   nothing (it counts as skipped) */
  struct cls__log_binding bind[CLS__LOG_INLINE];
};
_Static_assert(sizeof(struct cls__log_entry) <= 128, "an F8 log entry is two cache lines");

/* Records a command in submission order.  Never allocates in steady state:
 * the rings only grow when more commands are in flight than ever before. */
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
  e->kind = kind;
  e->stream = stream;
  e->seq = seq;
  e->position = position;
  e->stamp = stamp;
  e->op = op;
  e->read = read;
  e->untrusted = false;
  e->kernel = kernel; /* never NULL: a name or the operation */
  e->nbind = (unsigned)nbind;
  return e;
}
static inline void cls__inflight_commit(cls_context *ctx) {
  /* Full: learn what finished, so a long chain on one stream does not grow
   * the log.  Only after the entry is in: the poll may report this very
   * command failed. */
  if (++ctx->inflight_len == ctx->inflight_cap)
    cls__poll_all(ctx, false);
}
/* Drops the entries known complete (head first). */
void cls__inflight_prune(cls_context *ctx);
/* F8: command `seq` of `stream` failed with `cl_status` after its enqueue. */
void cls__inflight_failed(cls_context *ctx, int stream, uint64_t seq,
                          cl_int cl_status, bool deferred);
void cls__inflight_fini(cls_context *ctx);
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

#endif /* CLS_FAILURE_H */
