/* A reference model of clstream's failure rules (DESIGN.md F1-F10) at
 * buffer granularity, in plain C: no OpenCL, no clstream.
 *
 * The model runs the same operations a random program runs through
 * clstream and says what each must return: which return codes are allowed,
 * which bytes a download must give (where they are known), and which
 * failures (root cause and skip chain) a read must report.
 *
 * Semantics are the contract's, not the implementation's: a failure found
 * after the enqueue (F8) is treated as if it had been known at the enqueue.
 * Where timing legitimately changes what clstream can say at a given call
 * (a launch on input whose failure has not been found yet runs, and is
 * recorded as "ran on untrusted input" later, instead of being skipped),
 * the expectation allows both answers; what a read finally reports does
 * not depend on timing.
 *
 * The fault grammar is modelled exactly (src/factory/fault-spec.c: clause order, seen
 * and fired counters), so a program's faults fire on the same commands in
 * the model and in clstream. */
#ifndef CLS_TESTS_MODEL_H
#define CLS_TESTS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_S 3          /* streams a program uses */
#define MD_B 6          /* buffer slots of a program */
#define MD_N 16         /* elements a launch covers; every buffer has more */
#define MD_MAXE (3 * MD_N)
#define MD_MAX_OPS 64
#define MD_MAX_FAIL 160 /* failure records of one program */
#define MD_MAX_CHAIN 64
#define MD_MAX_CLAUSES 4
#define MD_NAME 16

/* clstream's codes, repeated so the model needs no clstream header. */
enum {
  MD_OK = 0,
  MD_EINVAL = -1,
  MD_ECL = -4,
  MD_ESTALE = -5,
  MD_ENULL = -7,
  MD_ERANGE = -8,
  MD_EWORKSIZE = -14,
  MD_ELAUNCH = -16,
  MD_ESKIPPED = -17,
  MD_ETAINTED = -18,
  MD_EALLOC = -19,
  MD_ESTALEGEN = -27
};

enum md_kernel { MD_K_SET, MD_K_ADD, MD_K_AXPY, MD_K_INC, MD_NKERNELS };
enum md_access { MD_R = 1, MD_W = 2, MD_RW = 3 };

/* The kernels, once per stream (set_s0, add_s1 ...), so that a fault
 * counting one kernel's launches counts them in program order under every
 * driver (drivers may reorder the enqueues of different streams).
 *   set(out W, v)             out[i] = v + i
 *   add(a R, b R, c R, out W) out[i] = a[i] + b[i] + c[i]
 *   axpy(x R, y RW, k)        y[i] = y[i] + k * x[i]
 *   inc(x RW)                 x[i] = x[i] + 1 */
extern const char *const md_kernel_base[MD_NKERNELS];
extern const int md_kernel_nbuf[MD_NKERNELS];
extern const int md_kernel_access[MD_NKERNELS][4];
void md_kernel_name(int kernel, int stream, char out[MD_NAME]);
/* OpenCL C source of every kernel for `streams` streams (static buffer). */
const char *md_kernel_source(int streams);

enum md_op_kind {
  MD_ALLOC = 1,
  MD_FREE,
  MD_UPLOAD,
  MD_UPLOAD_ASYNC,
  MD_LAUNCH,
  MD_COPY,
  MD_FILL,
  MD_DOWNLOAD,
  MD_SYNC,        /* cls_stream_sync(stream) */
  MD_SYNC_ALL,    /* cls_sync */
  MD_SYNC_CHECK,  /* cls_sync, then cls_check over b[0..len) */
  MD_RELOCATE     /* cls_stream_relocate(stream, device value, the stream's
                     generation; refuse: an older one, or a newer one when
                     there is none older) */
};

struct md_op {
  int kind;
  int stream;
  int b[4];        /* buffer slots: launch arguments in order; copy src, dst */
  int kernel;      /* launches */
  uint32_t value;  /* upload data seed, fill pattern, launch scalar */
  int off, len;    /* elements; len is also cls_check's buffer count */
  int off2;        /* copy: destination offset */
  int elems;       /* alloc */
  int psize;       /* fill pattern size in bytes: 1, 2, 4, 8 */
  bool refuse;     /* F12: a mistake clstream refuses at the call -- a
                      launch's local size 5 (does not divide MD_N), a
                      fill's pattern of 3 bytes */
};

/* A fault clause (src/factory/fault-spec.c). */
enum md_when { MD_W_ENQUEUE, MD_W_COMPLETE, MD_W_ALLOC, MD_W_LOST };
struct md_clause {
  int when;
  char kernel[MD_NAME]; /* "" any */
  const char *op;       /* NULL any */
  int stream;           /* -1 any */
  uint64_t nth, times;
  uint64_t hold;        /* complete: found after 0..hold polls (shuffled) */
  int status;           /* OpenCL status */
  bool at_complete;     /* lost: at=complete (the queue accepts, runs nothing) */
  uint64_t seen, fired;
};

/* What persists across the programs of one context. */
struct md_world {
  bool deferred;               /* scheduler driver: launches, copies, fills and
                                  non-blocking uploads are enqueued later */
  int nclauses;
  struct md_clause cl[MD_MAX_CLAUSES];
  /* Each stream's "issued" count (report positions): a range, because a
   * download of data whose failure may not have been found yet is refused
   * (no position) or runs (one position) depending on timing. */
  uint64_t issued_lo[MD_S], issued_hi[MD_S];
  /* Commands each stream issued since it was last synced (sync, sync
   * all): where a loss puts it at risk they may still be in its list,
   * fail behind the loss and run again, a position each (recovery). */
  uint64_t since_sync[MD_S];
  uint64_t imm_fail[MD_S];     /* enqueues that failed in the call (kept by
                                  the runner, from imm_rc) */
  bool created[MD_S];          /* streams clstream has created */
  /* Each stream's generation (docs/devices.md): up by one per relocation,
   * asked for (MD_RELOCATE) or made by a "lost" clause that fired.  A
   * "lost" clause (op=upload, programs keep uploads blocking) fails the
   * command it fires on like an enqueue fault, and the context relocates
   * the stream at once (CLS_RELOCATE same or other): nothing else of the
   * program sees it, unless its queue was shared (below). */
  uint64_t gen[MD_S];
  /* Streams may share queues (`shared`: 0, a queue each; M, stream i
   * uses queue i mod M of its device, as scheduler:sequential,queues=M;
   * scheduler:interleave is M = 1), so a "lost" clause that fires there
   * loses it for the others of that queue too: each that has tasks on it later moves at a time the model
   * cannot know (docs/devices.md).  Such a stream is at `risk`: its
   * generation is gen..gen_hi (one move more at most: it then gets a
   * queue of its own), narrowed by what the runner reads back
   * (cls_stream_generation); with recovery its commands run again and
   * nothing else shows; without, any of them may fail with the loss
   * (md_state.lossrisk).  gen_hi == gen for a stream not at risk. */
  int shared;
  /* Deferred lists submitted stream by stream onto a shared queue
   * (scheduler:sequential,queues=M, not interleave, which submits every
   * stream's pending tasks before a blocking transfer): when a loss fires
   * there, a stream sharing the queue may still hold commands issued
   * before it, which then meet the loss (`fresh_risk`). */
  bool split;
  /* Streams put at risk since the last md_step whose lists may hold
   * commands issued before the loss: split lists, or a loss after the
   * enqueue (an interleaved task may go behind its gate). */
  uint64_t fresh_risk;
  int ndev;                    /* the context's devices (placement: spread) */
  bool own[MD_S];              /* a queue of its own: relocated since creation */
  bool risk[MD_S];
  uint64_t gen_hi[MD_S];
  uint64_t lost_fired;         /* "lost" clauses fired */
  uint64_t risked;             /* streams put at risk by a shared loss */
  bool relocate_other;         /* the context's CLS_RELOCATE: other, else same */
  /* The context's CLS_RECOVER bound (0: off): a command a "lost" clause
   * fired on runs again on the fresh queue, up to this many times, and
   * the program sees exact bytes; past the bound it fails as without. */
  unsigned recover;
  /* A "lost" clause at=complete (keyed on a launch of set_sN) that fired:
   * the queue accepted the launch and runs nothing from it on; the loss is
   * found at a poll the model cannot place, so the stream (and, shared,
   * the others of its queue) is at risk until seen moved.  With recovery
   * the lost commands and their dependents run again then, each taking
   * one more position on its stream: while `late`, every position count
   * is a range one wider per command.  `ranged` (the context's
   * attribution): nothing is kept, a loss at completion is not replayed. */
  bool late;
  bool ranged;
  /* Losses at completion replayed so far: the command that met the gate
   * in its call (a blocking transfer) takes a position, then the next
   * after the replayed ones (src/core/command.c), so each may leave one
   * position no count shows: read-back position counts are a range that
   * wide. */
  uint64_t late_losses;
  /* Per stream: CLS_ECL returns the model had not placed (md_expect.imm_rc
   * was not it), as on a queue a loss at completion poisoned.  Each may have
   * failed in the call (a position no count shows) or after the enqueue (an
   * enqueue counted): a position of slack from then on. */
  uint64_t unplaced_ecl[MD_S];
  uint64_t late_fired;         /* "lost" clauses at=complete fired */
  /* Planted bug for the harness's self-test: add computes a+b+c+1. */
  bool planted_bug;
  /* Completion faults that fired (or may fire: a peek) per stream: a
   * program's dry run counts them to know, before it runs, which streams
   * ranged attribution (F8a) may fail as a range. */
  uint32_t complete_hit[MD_S];
};

struct md_chain {
  char kernel[MD_NAME];
  int stream;
  uint64_t pos_lo, pos_hi;
  /* Issued while a loss at completion may be replayed (md_world.late, with
   * recovery): the command may run again, untrusted, at the position its
   * stream has when the loss is found -- after the rest of a replayed
   * capture, say -- so pos_hi is only a floor: the entry may lie up to
   * the stream's count when the report is read (md_chain_hi). */
  bool open_hi;
};

struct md_failure {
  int status, cl_status;
  const char *op;
  char kernel[MD_NAME];
  int stream;
  uint64_t pos_lo, pos_hi;
  bool open_hi; /* a completion fault on a command that may run again (as
                   md_chain.open_hi): pos_hi a floor (md_failure_hi) */
  bool async;   /* found after the enqueue */
  bool known;   /* certainly found by clstream by now */
  int nchain;
  struct md_chain chain[MD_MAX_CHAIN];
  int nlost;    /* chain entries past MD_MAX_CHAIN */
  uint32_t rd_at; /* ranged: md_state.rd_ops when it was minted */
};

enum md_buf_state { MD_NONE = 0, MD_LIVE, MD_FREED };
#define MD_CLEAN (-1)
#define MD_NEVER (-2)

struct md_buf {
  int state;       /* NONE: never allocated or the allocation failed (the
                      handle is CLS_BUFFER_NULL) */
  int stream, elems;
  int failure;     /* MD_CLEAN, MD_NEVER (never written), or a record */
  uint32_t val[MD_MAXE];
  uint8_t known[MD_MAXE];
  /* Ranged attribution (F8a): the model's prediction above may be wrong
   * here -- the buffer was written by a command of a stream a completion
   * fault fails (any of them may fall in the failed range), or by one that
   * read a diverged buffer, and no full write on trusted input came since.
   * Its reads are checked for safety only (see md_expect.relaxed). */
  bool diverged;
  /* The streams (bit s) of the command that last wrote it since the last
   * sync of every stream (0: none): where lists are submitted per stream
   * onto a shared queue (md_world.split), that command may still be in its
   * list when another stream loses the queue.  A command skipped on its
   * input adds the writers of the inputs up to the one that decided: if
   * one of those meets the loss later, F8's argument order names it
   * instead (`skipped_writes`). */
  unsigned writers;
  /* Elements last written by a command that may not have run in clstream
   * (loosened: a stream at risk or affected, a diverged input): while the
   * failure that stopped it stays on the buffer, a read fails or, if it
   * ran, gives them; a later write clears the failure without writing
   * them, and then they are what was there before: no longer known. */
  uint8_t unsure[MD_MAXE];
  /* A lost queue with recovery off (md_state.lossy): a command of a stream
   * at risk read or wrote it, or a command that may fail behind such a
   * one wrote it, since the last sync of every stream.  A command that
   * writes it waits on that command (clstream orders a write after the
   * reads and the write before it, across streams), and PoCL fails a
   * command whose wait list holds an event that failed: so what that
   * command writes may carry the loss too. */
  bool risky;
};

struct md_state {
  struct md_buf buf[MD_B];
  int nfail;
  struct md_failure fail[MD_MAX_FAIL];
  /* Ranged attribution: what md_step tracks beyond the exact model. */
  bool ranged;
  bool affected[MD_S];  /* streams a completion fault fails in this program */
  uint32_t rd_ops;      /* ops so far that read a diverged buffer: a record
                           minted before one may have a different skip chain
                           (that op's skip may be on a range record instead) */
  /* A shared queue lost with recovery off: the streams at risk (md_world)
   * whose commands may fail with the loss ("lost with stream ...") until
   * they move, and, from the first one on, the same tracking as ranged
   * attribution (diverged buffers, relaxed reads); lostrec: the streams
   * whose loss records a report of this program may name. */
  bool lossy;
  bool lossrisk[MD_S];
  bool lostrec[MD_S];
  /* Recovery off, a lost queue: a command of the stream may have failed
   * behind the loss (it read what a command that may fail so wrote, or
   * waited on one: md_buf.risky), and PoCL fails the rest of a queue
   * behind a failed command: the stream's commands may fail with the
   * loss until it is synced. */
  bool poisoned[MD_S];
};

/* What one operation must do. */
struct md_expect {
  uint32_t rcmask;        /* bit -rc: rc allowed (bit 0: success) */
  bool ambiguous;         /* the contract leaves this op's outcome open:
                             the generator does not emit it */
  int imm_rc;             /* the return code that means "the enqueue failed
                             in the call" (the command took a position but
                             counts neither as enqueued nor as skipped) */
  /* Download (when it succeeds): the bytes, where known. */
  bool bytes;
  int n;
  uint32_t val[MD_MAXE];
  uint8_t known[MD_MAXE];
  /* Download refused (CLS_ETAINTED) and sync+check: the report. */
  int nf;
  int fail[MD_B];         /* failure records, in report order */
  int nbad;
  int bad[MD_B];          /* MD_ENULL / MD_ESTALE, in order */
  uint64_t gen_arg;       /* MD_RELOCATE: the generation to pass */
  /* Ranged: a download of a diverged buffer or on an affected stream, whose
   * answer may differ from the exact one (rcmask widened: CLS_ETAINTED with
   * a range record, CLS_ECL for a read on a failed queue); if it succeeds,
   * its bytes must still be the model's. */
  bool relaxed;
  /* Download: failure index + 1 of an asynchronous failure the read's
   * buffer carries that clstream had not found, where the lost queue may
   * refuse the read in the call (CLS_ECL): then it is found no more than
   * before (0: none). */
  int unfound;
};

static inline uint32_t md_bit(int rc) { return 1u << (rc <= 0 ? -rc : 31); }

void md_world_init(struct md_world *w, bool deferred);
void md_state_init(struct md_state *st);
/* Whether the contract leaves the op's outcome open (see model.c,
 * mixed()): the generator does not emit such ops. */
bool md_ambiguous(const struct md_state *st, const struct md_op *op);
/* Runs one operation through the model, filling *ex. */
void md_step(struct md_world *w, struct md_state *st, const struct md_op *op,
             struct md_expect *ex);
/* Whether streams s and t use one queue (md_world.shared), neither
 * relocated since creation. */
/* Chain entry c's last possible position, given the world as it is when
 * the report is read. */
uint64_t md_chain_hi(const struct md_world *w, const struct md_chain *c);
/* The same for failure f's own position. */
uint64_t md_failure_hi(const struct md_world *w, const struct md_failure *f);
bool md_same_queue(const struct md_world *w, int s, int t);
/* Ranged attribution (F8a): which streams a completion fault fails in
 * `ops` (a dry run of the model from world *w, state fresh), into
 * affected[]; where streams share a queue (w->shared) a range covers
 * every stream of it, so a fault on one affects them all. */
void md_affected(const struct md_world *w, const struct md_op *ops, int n,
                 bool affected[MD_S]);
/* Whether failure record f's skip chain may differ under ranged
 * attribution (a command that read a diverged buffer came after it). */
bool md_loose(const struct md_state *st, int f);
/* Marks every failure found (after cls_sync). */
void md_all_known(struct md_state *st);
/* The bytes an upload writes at element i of the upload. */
uint32_t md_upload_value(uint32_t seed, int i);
/* The element values a fill pattern gives, for an element at index i. */
uint32_t md_fill_value(uint32_t pattern, int psize, int i);
/* One op as text, for failure messages. */
void md_op_text(const struct md_op *op, char *out, size_t cap);
/* The clauses as a CLS_FAULT spec; "" when there are none. */
void md_spec_text(const struct md_world *w, char *out, size_t cap);

#endif /* CLS_TESTS_MODEL_H */
