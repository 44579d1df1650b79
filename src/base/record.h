/* Internal: failure records (F1).  A failure is a reference-counted
 * record of one root cause and the chain of launches it stopped.  Buffers
 * hold at most one reference each; reports hold references too, so a
 * failure lives as long as anything can still name it.  Records are
 * independent of the context: a report outlives it.  Types and the
 * context-free operations; the rules that use them are failure.h's. */
#ifndef CLS_RECORD_H
#define CLS_RECORD_H

#include "base/slot.h"
#include "util/log.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* Skip chains are run-length encoded (consecutive skips of one kernel on one
 * stream are one entry) and bounded, so recording a skip never allocates
 * (F10).  Entries past the bound are counted, not stored. */
#define CLS__MAX_SKIP_ENTRIES 32
#define CLS__NAME_MAX 48
/* A record's message: room for a refusal's whole text with long kernel and
 * argument names and its fix (a record is made on a failure only; the wire
 * form, src/wire/wire.c, holds it within CLS_WIRE_RECORD_MAX). */
#define CLS__MESSAGE_MAX 1024

struct cls__skip {
  const char *key;              /* the name as given: consecutive skips of one
                                   kernel compare by pointer (never read) */
  int kind;                     /* enum cls_skip_kind */
  int stream;
  uint64_t position;
  uint64_t count;
  uint64_t stamp;               /* the context's write stamps of its first
                                   launch (chains are kept in that order) */
  uint64_t last;                /* and of its last one an F8 replay put there
                                   (a launch it may move: replay.c) */
  char kernel[CLS__NAME_MAX];
  /* Its first launch is logged and may move to another failure (F8's
   * argument order, replay.c): a skip that is not logged never joins such
   * a run, so when its first leaves, the log knows the next one. */
  bool movable;
  int origin;                   /* rank + 1 of the process the launches ran
                                   in (a chain that came with a record,
                                   src/wire/wire.c); 0: this one; -1:
                                   another, of unknown rank */
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
  char message[CLS__MESSAGE_MAX];
  char *build_log;              /* owned, may be NULL */
  bool provisional;             /* F3: a write scope that has not ended */
  /* While provisional: what the scope was running, copied into the fields
   * above only if the scope never ends (the names live in the context). */
  const char *scope_name;
  bool async;                   /* F8: found after the enqueue */
  bool ranged;                  /* F8a: one of a range of commands failed;
                                   a partial write keeps it (F4) */
  bool logged;                  /* F9 */
  uint64_t skipped;             /* launches in the chain */
  uint64_t dropped;             /* launches past the stored entries */
  size_t nskips;
  struct cls__skip skips[CLS__MAX_SKIP_ENTRIES];
  /* A failure that came from another process (src/wire/wire.c): the rank
   * + 1 of the process its root happened in; 0: this one; -1: another
   * process whose rank is not known. */
  int origin;
  /* The generation of its stream when it happened: with the rank, the
   * stream and the position, its identity across processes (cls__seen). */
  uint64_t generation;
  /* Unique in the process (cls__failure_new): a skip's detail copies a
   * record's text once for a run of skips on it (cls__skipped). */
  uint64_t serial;
};

/* A failure with an identity across processes (docs/scale-out.md): the
 * rank it happened on, its stream, that stream's generation and its
 * position; with its status and a hash of its text, so that failures of
 * two contexts of one rank never pass for each other.  Every copy of it
 * that arrives is that one failure: named once in a report, logged once
 * (F9).  The table keeps the last CLS__SEEN_MAX identities, and the
 * record of each while anything else still holds it. */
#define CLS__SEEN_MAX 256
struct cls__seen {
  int origin;                   /* rank + 1; 0: an empty entry */
  int stream, status;
  cl_int cl_status;
  uint64_t generation, position;
  uint64_t text;                /* FNV-1a of its kernel and message */
  struct cls__failure *f;       /* a reference, or NULL */
};

/* The context's failure table. */
struct cls__failures {
  struct cls__failure *spare;   /* provisional record reused by F3 scopes */
  const struct cls__logger *log;
  uint64_t minted;
  /* Failures with an identity across processes this context has logged
   * (failure.c: cls__failure_known), NULL until a rank is known. */
  struct cls__seen *seen;
  size_t seen_next;
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
/* A new record with one reference held by the caller; NULL when out of
 * host memory. */
struct cls__failure *cls__failure_new(void);
/* Copies a name into a record's fixed field, cut to fit. */
void cls__copy_name(char *dst, const char *src);
/* Number of failure records alive in the process (tests: F1). */
size_t cls__failures_alive(void);

/* Whether a and b, records of one process, are copies of one failure
 * with an identity (a report names it once). */
static inline bool cls__failure_same(const struct cls__failure *a, const struct cls__failure *b) {
  return a->origin == b->origin && a->origin > 0 && a->stream == b->stream && a->stream >= 0 &&
         a->position == b->position && a->position && a->generation == b->generation &&
         a->status == b->status && a->cl_status == b->cl_status &&
         strcmp(a->kernel, b->kernel) == 0 && strcmp(a->message, b->message) == 0;
}

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
                                int stream, uint64_t position, uint64_t stamp);
static inline void cls__failure_add_skip(struct cls__failure *f, int kind, const char *kernel,
                                         int stream, uint64_t position, uint64_t stamp) {
  f->skipped++;
  struct cls__skip *last = &f->skips[f->nskips ? f->nskips - 1 : 0];
  if (f->nskips && last->key == kernel && last->kind == kind && last->stream == stream &&
      !last->movable)
    last->count++;
  else
    cls__failure_add_skip_slow(f, kind, kernel, stream, position, stamp);
}
/* Appends one entry of `count` commands (a replay skipped as a whole,
 * CLS_SKIP_REPLAY) to f's chain.  Never allocates. */
void cls__failure_add_skip_run(struct cls__failure *f, int kind, const char *name, int stream,
                               uint64_t position, uint64_t stamp, uint64_t count);
/* Appends failure f to the thread's detail as a read's detail names its
 * root ("CLS_ELAUNCH (CL_...) in launch of 'k' on stream 0 at position 2:
 * message"). */
void cls__error_append_root(const struct cls__failure *f);

#endif /* CLS_RECORD_H */
