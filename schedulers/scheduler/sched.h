/* The scheduler driver's private header: its data (tasks, task lists, the
 * backend queues and their completion maps, the driver itself) and what
 * its files share (scheduler.c: the driver ops; list.c: task lists;
 * qmap.c: completion maps; strategy.c: submission; params.c: parameters).
 *
 * What runs per launch or per enqueued task is `static inline` here (the
 * own cost is counted in instructions: a call per launch is a
 * regression); what is out of line is cold or runs once per submission.
 * Like every driver, this one reaches the core through <clstream/driver.h>
 * only (the build gives it no other include path). */
#ifndef CLS_SCHED_H
#define CLS_SCHED_H

#include <clstream/driver.h>

#include <stdlib.h>
#include <string.h>

enum strategy { SEQUENTIAL, INTERLEAVE };

/* Grows the array *p (elements of `size` bytes, capacity *cap, 0 and then
 * `first`) to hold `need`, doubling; false when out of memory (unchanged). */
static inline bool cls__sched_grow(void **p, size_t *cap, size_t need, size_t size,
                                   size_t first) {
  if (need <= *cap)
    return true;
  size_t ncap = *cap ? *cap : first;
  while (ncap < need)
    ncap *= 2;
  void *n = realloc(*p, ncap * size);
  if (!n)
    return false;
  *p = n;
  *cap = ncap;
  return true;
}

/* 16 words on LP64 (the narrow header), so that tasks[i] is a shift. */
struct task {
  int16_t kind; /* 0: withdrawn (sc_withdraw): dropped at submission */
  /* waits, in the list's event arena (at most one a stream); owned until
   * the enqueue */
  uint16_t nwait;
  uint32_t wait0;
  uint64_t seq;
  union {
    /* A launch, as the factory takes it: kc.global, kc.local and
     * kc.offset point into the task, kc.args into the list's argument
     * array; cls__sched_list_reserve moves them along when either array
     * moves, so the enqueue passes &kc as is. */
    struct {
      struct cls_kernel_cmd kc;
      size_t global[3], local[3], offset[3];
    } k;
    /* Transfers, never blocking here; a fill's pattern is copied into the
     * byte arena (x.pattern is set at the enqueue: the arena may move).
     * A foreign command is a transfer here too: its struct
     * cls_foreign_cmd and buffers are in the arena at pattern_off. */
    struct {
      struct cls_transfer x;
      size_t pattern_off;
    } t;
  } u;
  /* The memory objects are not retained: a buffer freed while a task of
   * it waits has the task's list submitted first (sc_settle). */
};

struct list {
  struct task *tasks;
  size_t n, cap;
  /* Kernel arguments as the stream takes them, and beside each its cell:
   * a value of 8 bytes or less (a cl_mem, the usual scalars) is copied
   * into cells[i] for args[i], so a launch's room is one count; larger
   * values go into `bytes`.  value NULL: local memory.  Both arrays have
   * capargs entries.  An argument's value points at its cell but below
   * `odd` (<= nargs): the usual launch writes the cells and sizes only;
   * the list's reset points the arguments below `odd` back. */
  struct cls_kernel_arg *args;
  uint64_t *cells;
  size_t nargs, capargs, odd;
  /* Values larger than 8 bytes and fill patterns. */
  unsigned char *bytes;
  size_t nbytes, capbytes;
  cl_event *waits;
  size_t nwaits, capwaits;
  int queue;
  /* Recovery: times in a row its first task met a lost queue and was
   * kept for a fresh one (strategy.c, keep; bounded by the core).  Beside
   * `queue`, in what was padding: the list stays 128 bytes, so lists[id]
   * is a shift on the per-launch path. */
  unsigned losses;
  /* While the list is being submitted and a failure is being handled:
   * the tasks before this index are in the queue (or failed there), so
   * only the others can be withdrawn. */
  size_t sent;
};

/* A backend queue: enqueued commands not yet known complete, in queue
 * order, as runs: `count` commands of one logical stream with consecutive
 * backend seqs from bseq and logical seqs from seq (a stream's commands on
 * its queue usually are, so recording one is usually an increment).
 * count 0: an enqueue that failed, with its error; it completes with
 * bseq, the queue's command before it. */
struct qmap {
  uint64_t bseq;
  uint64_t seq;
  uint64_t count;
  int stream;
  cl_int status;
};

struct queue {
  void *stream; /* the factory's */
  int users;
  int device;   /* the context device it is on */
  bool own;     /* a relocated stream's own queue: shared with no other */
  uint64_t seq;
  struct qmap *map;
  size_t head, len, cap;
  size_t unreal; /* entries with count 0 */
  uint64_t streams; /* streams with entries in the map (or had: a superset) */
  /* poll scratch: failures of one poll */
  struct qfail {
    uint64_t bseq;  /* the range's last backend command */
    uint64_t first; /* its first (== bseq: exact attribution) */
    cl_int status;
  } *fails;
  size_t nfails, capfails;
};

struct sched_driver {
  struct cls_driver base;
  int strategy;
  unsigned max_tasks;
  bool ramp; /* max_tasks not given: a list's limit starts at 1 after the
                stream opens or waits, and doubles at each submission of a
                full list up to max_tasks, so the device has work while
                the host is still issuing (scheduler.c, sc_order) */
  unsigned limit[CLS_MAX_STREAMS]; /* the tasks a list holds before it goes */
  int nqueues; /* 0: one per logical stream */
  struct list lists[CLS_MAX_STREAMS];
  struct queue queues[CLS_MAX_STREAMS];
  /* The streams opened (sc_open): their views stay where they are until
   * close(), so the polls find them without asking the core. */
  struct cls_driver_stream *streams[CLS_MAX_STREAMS];
  uint64_t pending; /* streams whose list is not empty */
  uint64_t lost;    /* recovery: streams whose list holds tasks kept from
                       a lost queue: not submitted until the core has
                       relocated the stream (sc_open of its next
                       generation) */
  bool split;       /* interleave: some stream is on another queue than 0
                       (a second device, or a relocated stream's own) */
  bool solo;        /* sequential with a queue per stream (no queues=M),
                       none shared (sc_open keeps it so):
                       a command that waits on another queue is enqueued
                       at once, on lent events (scheduler.c, sc_order) */
  uint64_t unreported; /* solo: streams whose command's enqueue at once
                          failed, recorded in the map and reported at the
                          driver's next order or poll
                          (cls__sched_enqueue_failed, _report_failed) */
};

/* ------------------------------------------------------------------ */
/* Parameters (params.c)                                               */
/* ------------------------------------------------------------------ */

/* Sets d's strategy, max_tasks and nqueues from CLS_SCHEDULER's
 * parameters (NULL: the defaults); CLS_ECONFIG recorded on an error. */
int cls__sched_parse_params(struct sched_driver *d, const char *params);
/* The selection's syntax and the parameters, for CLS_SCHEDULER=help. */
extern const char cls__sched_usage[];
extern const struct cls_driver_param cls__sched_params[];

/* ------------------------------------------------------------------ */
/* Task lists (list.c)                                                 */
/* ------------------------------------------------------------------ */

/* Makes room for one more task with `nargs` arguments (values larger
 * than 8 bytes grow the byte arena one by one, cls__sched_capture_odd).
 * Moves the pointers launch tasks keep into the arrays along.  Off the
 * per-launch path: once grown, nothing is allocated.  False: out of memory
 * (the arrays are valid, some maybe larger). */
bool cls__sched_list_reserve(struct list *l, size_t nargs);
/* Argument i of the list (not yet counted in nargs), of any kind: local
 * memory, a value of 8 bytes or less (into its cell) or a larger one
 * (into the byte arena, grown as needed).  args[i].size is set (raises
 * `odd`).  False: out of memory. */
bool cls__sched_capture_odd(struct list *l, size_t i, const void *v, size_t size);
/* Copies a launch's `n` arguments into the list from argument a0 on (room
 * for them was reserved): buffers' cl_mem values point into slot storage
 * that may move, scalars into the caller's memory.  Not counted in nargs.
 * False: out of memory.  (sc_submit has the loop for the usual arguments
 * inline.) */
bool cls__sched_capture_args(struct list *l, size_t a0, const struct cls_kernel_arg *ka,
                             size_t n);
/* Copies what the enqueue of a transfer will need into task t. */
bool cls__sched_capture_xfer(struct list *l, struct task *t, const struct cls_driver_cmd *cmd);
/* Moves cmd's waits into the list's event arena, for task t: the task
 * owns them from then on (cmd keeps none).  False: out of memory (cmd
 * keeps them). */
bool cls__sched_capture_waits(struct list *l, struct task *t, struct cls_driver_cmd *cmd);
/* Empties the list after a submission; its arenas are kept. */
void cls__sched_list_reset(struct list *l);
/* Recovery: the list's first `from` tasks were handed to the queue (their
 * waits released), the rest are kept for the stream's fresh queue: moved
 * to the front, in order, with their arguments, bytes and waits where
 * they are.  `failed`: task `from` itself met the loss and its waits were
 * released too. */
void cls__sched_list_keep(struct list *l, size_t from, bool failed);
/* Releases the list's waits and arenas (the driver's end). */
void cls__sched_free_list(struct list *l);

/* True when the list has room for one more task of `nargs` arguments
 * without growing. */
static inline bool cls__sched_list_has_room(const struct list *l, size_t nargs) {
  return l->n < l->cap && l->nargs + nargs <= l->capargs;
}

/* Points launch task t's kc at its own size arrays (after the tasks
 * moved). */
static inline void cls__sched_task_repoint(struct task *t) {
  t->u.k.kc.global = t->u.k.global;
  if (t->u.k.kc.local)
    t->u.k.kc.local = t->u.k.local;
  if (t->u.k.kc.offset)
    t->u.k.kc.offset = t->u.k.offset;
}

/* Copies a launch's command into task t (its arguments are copied apart,
 * to `args` in the list): kc.args, kc.global, kc.local and kc.offset point
 * into the list and the task.  dims is 1..3 (checked by the core); the size arrays
 * are the caller's, dims long. */
static inline void cls__sched_capture_cmd(struct task *t, struct cls_kernel_arg *args,
                                          const struct cls_kernel_cmd *kc) {
  const size_t *g = kc->global, *lo = kc->local;
  cl_uint dims = kc->dims;
  size_t *tg = t->u.k.global;
  t->u.k.kc = *kc;
  t->u.k.kc.args = args;
  t->u.k.kc.global = tg;
  tg[0] = g[0];
  if (__builtin_expect(dims > 1, 0)) {
    tg[1] = g[1];
    if (dims > 2)
      tg[2] = g[2];
  }
  if (lo) {
    size_t *tl = t->u.k.local;
    for (cl_uint i = 0; i < dims; i++)
      tl[i] = lo[i];
    t->u.k.kc.local = tl;
  }
  if (__builtin_expect(kc->offset != NULL, 0)) {
    size_t *to = t->u.k.offset;
    for (cl_uint i = 0; i < dims; i++)
      to[i] = kc->offset[i];
    t->u.k.kc.offset = to;
  }
}

/* Copies n argument values of 8 or 4 bytes (cl_mem, the usual scalars)
 * into their cells, c on, and their sizes into the arguments ta on (each
 * pointing at its cell already: at or above the list's odd).  False: some
 * argument is another size or local memory (the general capture,
 * cls__sched_capture_args, takes the launch over, every argument of
 * it). */
static inline bool cls__sched_capture_cells(uint64_t *c, struct cls_kernel_arg *ta,
                                            const struct cls_kernel_arg *ka, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const void *v = ka[i].value;
    size_t size = ka[i].size;
    if (__builtin_expect(size == 8 && v != NULL, 1)) {
      memcpy(&c[i], v, 8);
    } else if (size == 4 && v) {
      uint32_t w;
      memcpy(&w, v, 4);
      c[i] = w; /* the value's 4 bytes first, as the factory reads them */
    } else {
      return false;
    }
    ta[i].size = size;
  }
  return true;
}

/* Task t, captured, becomes the list's next. */
static inline void cls__sched_task_commit(struct sched_driver *d, struct list *l, struct task *t,
                                          struct cls_driver_cmd *cmd) {
  t->kind = (int16_t)cmd->kind;
  t->seq = cmd->seq;
  l->n++;
  d->pending |= 1ull << cmd->stream->id;
}

/* ------------------------------------------------------------------ */
/* Submission (strategy.c)                                             */
/* ------------------------------------------------------------------ */

/* Submits stream id's pending tasks (interleave: every stream's). */
void cls__sched_submit_list(struct sched_driver *d, int id);
/* What cls__sched_enqueue_failed returns when the queue was lost and the
 * command is to be kept for the stream's fresh queue (not an OpenCL
 * status). */
#define CLS__SCHED_KEEP 1
/* Solo: command `seq` of stream id, which waited on another queue, failed
 * its enqueue at the call with rc (its waits dropped: waited out on the
 * host).  Recorded in the map, it answers CL_SUCCESS and is reported as a
 * deferred task's is, at the next cls__sched_report_failed, once the core
 * knows the command.  CLS__SCHED_KEEP: the queue is lost and recovery
 * keeps the command (the caller captures it, then cls__sched_keep_lost).
 * rc: out of memory, reported at the call. */
cl_int cls__sched_enqueue_failed(struct sched_driver *d, int id, uint64_t seq, cl_int rc);
/* Recovery: stream id's list, just captured, waits for its fresh queue. */
void cls__sched_keep_lost(struct sched_driver *d, int id);
/* Reports the enqueue failures cls__sched_enqueue_failed recorded (d->unreported):
 * each queue is waited for up to that command and polled, so its earlier
 * commands' failures come first (F8).  CLS_DRIVER_RETRY when a failure
 * was learnt, else CLS_OK. */
int cls__sched_report_failed(struct sched_driver *d);

#endif /* CLS_SCHED_H */
