/* The scheduler-based driver: logical streams hold task lists, submitted in
 * batches onto shared backend queues.
 *
 * A logical stream's list is submitted when it reaches max_tasks, when
 * another stream binds a buffer its pending tasks write (so order holds),
 * before a blocking transfer on it, and on sync.  Strategies:
 *   sequential  each stream's tasks, in order, onto its backend queue;
 *               N logical streams share M queues (stream i -> queue i % M;
 *               M = N unless queues=M is given)
 *   interleave  the pending tasks of every stream, round-robin, onto one
 *               queue
 * Parameters: CLS_SCHEDULER=scheduler[:STRATEGY][,max_tasks=N][,queues=M].
 *
 * Streams on one queue are ordered by the queue itself; streams on
 * different queues by a marker event, as in the event driver.  A task keeps
 * copies of what the enqueue needs (kernel arguments, work sizes, fill
 * pattern) in arenas of its list, reused after every submission, so a
 * launch allocates nothing once the arenas have grown.  An enqueue that
 * fails at submission is a failure found after cls_launch returned: it goes
 * through the same F8 path as a failure at completion.  The failure rules
 * themselves are the shared store's: nothing here decides about taint. */
#include "driver/driver.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_TASKS 32

enum strategy { SEQUENTIAL, INTERLEAVE };

struct task {
  int kind;
  uint64_t seq;
  /* waits, in the list's event arena; owned until the enqueue */
  size_t wait0, nwait;
  union {
    /* A launch, as the factory takes it: kc.global and kc.local point
     * into the task, kc.args into the list's argument array (arg0 on);
     * list_reserve moves them along when either array moves, so the
     * enqueue passes &kc as is. */
    struct {
      struct cls_kernel_cmd kc;
      size_t arg0;
      size_t global[3], local[3];
    } k;
    /* Transfers, never blocking here; a fill's pattern is copied into the
     * byte arena (x.pattern is set at the enqueue: the arena may move). */
    struct {
      struct cls__xfer x;
      size_t pattern_off;
    } t;
  } u;
  /* The memory objects are not retained: a buffer freed while a task of
   * it waits has the task's list submitted first (sc_settle). */
};

struct list {
  struct task *tasks;
  size_t n, cap;
  /* Kernel arguments as the stream takes them; values point into `bytes`
   * (a cl_mem or a scalar's bytes), NULL for local memory. */
  struct cls_kernel_arg *args;
  size_t nargs, capargs;
  unsigned char *bytes;
  size_t nbytes, capbytes;
  cl_event *waits;
  size_t nwaits, capwaits;
  int queue;
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
  uint64_t seq;
  struct qmap *map;
  size_t head, len, cap;
  size_t unreal; /* entries with count 0 */
  /* poll scratch: failures of one poll */
  struct qfail {
    uint64_t bseq;
    cl_int status;
  } *fails;
  size_t nfails, capfails;
};

struct sched_driver {
  struct cls__driver base;
  int strategy;
  unsigned max_tasks;
  int nqueues; /* 0: one per logical stream */
  struct list lists[CLS_MAX_STREAMS];
  struct queue queues[CLS_MAX_STREAMS];
  uint64_t pending; /* streams whose list is not empty */
};

static struct sched_driver *sd(struct cls__driver *d) { return (struct sched_driver *)d; }

/* ------------------------------------------------------------------ */
/* Parameters                                                          */
/* ------------------------------------------------------------------ */

static int parse_params(struct sched_driver *d, const char *params) {
  d->strategy = SEQUENTIAL;
  d->max_tasks = DEFAULT_MAX_TASKS;
  d->nqueues = 0;
  if (!params || !*params)
    return CLS_OK;
  char buf[256];
  if (strlen(params) >= sizeof buf)
    return cls__error(CLS_ECONFIG, 0, "scheduler parameters too long");
  strcpy(buf, params);
  char *save = NULL;
  bool first = true;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = false) {
    char *eq = strchr(tok, '=');
    if (!eq) {
      if (!first)
        return cls__error(CLS_ECONFIG, 0, "scheduler: '%s': the strategy comes first", tok);
      if (strcmp(tok, "sequential") == 0)
        d->strategy = SEQUENTIAL;
      else if (strcmp(tok, "interleave") == 0)
        d->strategy = INTERLEAVE;
      else
        return cls__error(CLS_ECONFIG, 0,
                          "scheduler: unknown strategy '%s' (sequential, interleave)", tok);
      continue;
    }
    *eq = '\0';
    char *end;
    unsigned long v = strtoul(eq + 1, &end, 10);
    if (!eq[1] || *end || eq[1] == '-')
      return cls__error(CLS_ECONFIG, 0, "scheduler: %s=%s is not a count", tok, eq + 1);
    if (strcmp(tok, "max_tasks") == 0) {
      if (v < 1 || v > 1u << 20)
        return cls__error(CLS_ECONFIG, 0, "scheduler: max_tasks=%lu (1..%u)", v, 1u << 20);
      d->max_tasks = (unsigned)v;
    } else if (strcmp(tok, "queues") == 0) {
      if (v < 1 || v > CLS_MAX_STREAMS)
        return cls__error(CLS_ECONFIG, 0, "scheduler: queues=%lu (1..%d)", v, CLS_MAX_STREAMS);
      d->nqueues = (int)v;
    } else {
      return cls__error(CLS_ECONFIG, 0, "scheduler: unknown parameter '%s' (max_tasks, queues)",
                        tok);
    }
  }
  if (d->strategy == INTERLEAVE)
    d->nqueues = 1;
  return CLS_OK;
}

/* ------------------------------------------------------------------ */
/* Submission                                                          */
/* ------------------------------------------------------------------ */

/* Makes room for one more entry; false: out of memory. */
static __attribute__((noinline)) bool map_grow(struct queue *q) {
  return cls__ring_grow((void **)&q->map, &q->cap, &q->head, q->len, sizeof *q->map, 64);
}

/* Appends an entry; false: out of memory (nothing changed). */
static inline bool map_push(struct queue *q, uint64_t bseq, int stream, uint64_t seq,
                            uint64_t count, cl_int status) {
  if (q->len == q->cap && !map_grow(q))
    return false;
  q->map[(q->head + q->len) & (q->cap - 1)] = (struct qmap){bseq, seq, count, stream, status};
  q->len++;
  return true;
}

/* Records `count` commands of stream id from its command seq, just
 * enqueued as the queue's last (up to q->seq): the last run grows when
 * they continue it.  Out of memory: they are not tracked (their stream's
 * later commands complete them). */
static inline void map_add(struct queue *q, int id, uint64_t seq, uint64_t count) {
  uint64_t bseq = q->seq - count + 1;
  if (q->len) {
    struct qmap *m = &q->map[(q->head + q->len - 1) & (q->cap - 1)];
    if (m->count && m->stream == id && m->seq + m->count == seq && m->bseq + m->count == bseq) {
      m->count += count;
      return;
    }
  }
  map_push(q, bseq, id, seq, count, CL_SUCCESS);
}

/* A transfer task (launches call the factory directly: enqueue_task,
 * submit_sequential). */
static __attribute__((noinline)) cl_int enqueue_xfer(const struct cls_stream_factory *f,
                                                     void *stream, int id, const struct list *l,
                                                     const struct task *t, uint64_t bseq,
                                                     cl_uint nw, const cl_event *w) {
  struct cls__xfer x = t->u.t.x;
  if (t->kind == CLS__CMD_FILL)
    x.pattern = l->bytes + t->u.t.pattern_off;
  return cls__enqueue(f, stream, id, t->kind, NULL, &x, bseq, nw, w);
}

/* Drops a task's waits after its enqueue (rc). */
static __attribute__((noinline)) void release_waits(const cl_event *w, size_t nw, cl_int rc) {
  if (rc != CL_SUCCESS)
    cls__order_unsent((cl_uint)nw, w);
  for (size_t i = 0; i < nw; i++)
    clReleaseEvent(w[i]);
}

/* enqueue_task for a task with waits: enqueues it on those still live,
 * then drops them all. */
static __attribute__((noinline)) cl_int enqueue_waiting(const struct cls_stream_factory *f,
                                                        void *qs, int id, uint64_t bseq,
                                                        const struct list *l,
                                                        const struct task *t) {
  size_t nw = t->nwait;
  const cl_event *w = l->waits + t->wait0;
  cl_event keep[CLS_MAX_STREAMS]; /* a command waits on each stream once at most */
  cl_uint nk = cls__order_live_waits(w, nw, keep); /* F7: the task sat in its list */
  const cl_event *kw = nk ? keep : NULL;
  cl_int rc = t->kind == CLS__CMD_LAUNCH ? cls__enqueue_launch(f, qs, id, &t->u.k.kc, bseq, nk, kw)
                                         : enqueue_xfer(f, qs, id, l, t, bseq, nk, kw);
  release_waits(w, nw, rc);
  return rc;
}

/* Enqueues task t of list l, of logical stream id, onto the factory
 * stream qs as backend command bseq, and drops its waits. */
static inline cl_int enqueue_task(const struct cls_stream_factory *f, void *qs, int id,
                                  uint64_t bseq, const struct list *l, const struct task *t) {
  if (t->nwait)
    return enqueue_waiting(f, qs, id, bseq, l, t);
  return t->kind == CLS__CMD_LAUNCH ? cls__enqueue_launch(f, qs, id, &t->u.k.kc, bseq, 0, NULL)
                                    : enqueue_xfer(f, qs, id, l, t, bseq, 0, NULL);
}

static int sc_poll(struct cls__driver *base, struct cls__stream *s, bool wait);

/* Task `seq` of stream id could not be enqueued (rc): an error path.
 * Called with what was enqueued before it in the map. */
static __attribute__((noinline)) void task_failed(struct sched_driver *d, struct queue *q, int id,
                                                  uint64_t seq, cl_int rc) {
  cls_context *ctx = d->base.ctx;
  struct cls__stream *s = cls__stream_peek(ctx, id);
  /* Completes with the queue's last command; the failure is reported
   * then, in queue order (sc_poll): a failure of an earlier command, which
   * this one may have read, comes first, as F8 requires. */
  if (!map_push(q, q->seq, id, seq, 0, rc)) {
    cls__stream_failed(ctx, s, seq, rc, true); /* out of memory: now */
    return;
  }
  q->unreal++;
  /* Wait for what the queue has, and report now. */
  cl_event ev = NULL;
  if (cls__factory(ctx)->marker(q->stream, &ev) == CL_SUCCESS) {
    clWaitForEvents(1, &ev);
    clReleaseEvent(ev);
  }
  sc_poll(&d->base, s, false);
}

static void list_reset(struct list *l) {
  l->n = l->nargs = l->nbytes = l->nwaits = 0;
}

static void queue_flush(struct sched_driver *d, int queue, uint64_t streams) {
  cl_int rc = cls__factory(d->base.ctx)->flush(d->queues[queue].stream);
  for (uint64_t m = streams; m; m &= m - 1) {
    struct cls__stream *s = cls__stream_peek(d->base.ctx, __builtin_ctzll(m));
    s->stats.submissions++;
    s->stats.flushes++;
    s->flushed = s->submitted;
  }
  if (rc != CL_SUCCESS)
    cls__log(&d->base.ctx->log, CLS_LOG_ERRORS, "flushing backend queue %d failed: %s", queue,
             cls_cl_status_name(rc));
}

/* Sequential: stream id's tasks, in order, onto its queue.  Its commands
 * there are consecutive, so the map records them as one run (recorded
 * before a failure is handled, which polls the map).  The factory calls
 * nothing of ours, so the list and queue are read once, and again after
 * a failure (its handling may). */
static void submit_sequential(struct sched_driver *d, int id) {
  cls_context *ctx = d->base.ctx;
  const struct cls_stream_factory *f = cls__factory(ctx);
  struct list *l = &d->lists[id];
  struct queue *q = &d->queues[l->queue];
  const struct task *t = l->tasks, *end = t + l->n;
  void *qs = q->stream;
  uint64_t bseq = q->seq, run = 0, run_seq = 0;
  for (; t < end; t++) {
    cl_int rc = enqueue_task(f, qs, id, bseq + 1, l, t);
    if (rc == CL_SUCCESS) {
      bseq++;
      if (!run++)
        run_seq = t->seq;
      continue;
    }
    q->seq = bseq;
    if (run)
      map_add(q, id, run_seq, run);
    run = 0;
    size_t i = (size_t)(t - l->tasks);
    task_failed(d, q, id, t->seq, rc);
    t = l->tasks + i;
    end = l->tasks + l->n;
    qs = q->stream;
    bseq = q->seq;
  }
  q->seq = bseq;
  if (run)
    map_add(q, id, run_seq, run);
  list_reset(l);
  d->pending &= ~(1ull << id);
  queue_flush(d, l->queue, 1ull << id);
}

/* Interleave: the pending tasks of every stream, round robin, onto the one
 * queue. */
static void submit_interleave(struct sched_driver *d) {
  cls_context *ctx = d->base.ctx;
  const struct cls_stream_factory *f = cls__factory(ctx);
  struct queue *q = &d->queues[0];
  uint64_t involved = d->pending, left = involved;
  for (size_t round = 0; left; round++)
    for (uint64_t m = left; m; m &= m - 1) {
      int id = __builtin_ctzll(m);
      const struct list *l = &d->lists[id];
      if (round >= l->n) {
        left &= ~(1ull << id);
        continue;
      }
      const struct task *t = &l->tasks[round];
      cl_int rc = enqueue_task(f, q->stream, id, q->seq + 1, l, t);
      if (rc == CL_SUCCESS) {
        q->seq++;
        map_add(q, id, t->seq, 1);
      } else {
        task_failed(d, q, id, t->seq, rc);
      }
    }
  for (uint64_t m = involved; m; m &= m - 1)
    list_reset(&d->lists[__builtin_ctzll(m)]);
  d->pending = 0;
  queue_flush(d, 0, involved);
}

/* Submits stream id's pending tasks (interleave: every stream's). */
static void submit_list(struct sched_driver *d, int id) {
  if (d->strategy == SEQUENTIAL) {
    if (d->lists[id].n)
      submit_sequential(d, id);
  } else if (d->pending) {
    submit_interleave(d);
  }
}

/* ------------------------------------------------------------------ */
/* Driver ops                                                          */
/* ------------------------------------------------------------------ */

static int sc_create(cls_context *ctx, const char *params, struct cls__driver **out) {
  (void)ctx;
  struct sched_driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  int rc = parse_params(d, params);
  if (rc < 0) {
    free(d);
    return rc;
  }
  *out = &d->base;
  return CLS_OK;
}

static void free_list(struct list *l) {
  for (size_t i = 0; i < l->nwaits; i++)
    clReleaseEvent(l->waits[i]);
  free(l->tasks);
  free(l->args);
  free(l->bytes);
  free(l->waits);
  memset(l, 0, sizeof *l);
}

static void sc_destroy(struct cls__driver *base) {
  struct sched_driver *d = sd(base);
  for (int i = 0; i < CLS_MAX_STREAMS; i++)
    free_list(&d->lists[i]);
  free(d);
}

static int sc_open(struct cls__driver *base, struct cls__stream *s) {
  struct sched_driver *d = sd(base);
  int qi = d->nqueues ? s->id % d->nqueues : s->id;
  struct queue *q = &d->queues[qi];
  if (!q->users) {
    int rc = cls__factory_create(base->ctx, qi, &q->stream);
    if (rc < 0)
      return rc;
  }
  q->users++;
  d->lists[s->id].queue = qi;
  s->backend = q->stream;
  return CLS_OK;
}

static void sc_close(struct cls__driver *base, struct cls__stream *s) {
  struct sched_driver *d = sd(base);
  struct queue *q = &d->queues[d->lists[s->id].queue];
  if (--q->users == 0) {
    cls__factory(base->ctx)->destroy(q->stream);
    free(q->map);
    free(q->fails);
    memset(q, 0, sizeof *q);
  }
  s->backend = NULL;
}

static void collect(void *arg, uint64_t bseq, cl_int status) {
  struct queue *q = arg;
  if (cls__grow((void **)&q->fails, &q->capfails, q->nfails + 1, sizeof *q->fails, 16))
    q->fails[q->nfails++] = (struct qfail){bseq, status};
}

static int sc_poll(struct cls__driver *base, struct cls__stream *s, bool wait) {
  struct sched_driver *d = sd(base);
  cls_context *ctx = base->ctx;
  if (wait)
    submit_list(d, s->id);
  struct queue *q = &d->queues[d->lists[s->id].queue];
  uint64_t done = 0;
  q->nfails = 0;
  cl_int rc = cls__factory(ctx)->poll(q->stream, wait, collect, q, &done);
  /* Failures first (their commands are still in the map), then
   * completions, in queue order; an enqueue that failed is reported when
   * the queue has finished what came before it.  Nothing to report: the
   * usual case, no walk. */
  if (q->nfails || q->unreal) {
    size_t f = 0, nf = q->nfails;
    for (size_t i = 0; i < q->len; i++) {
      struct qmap *m = &q->map[(q->head + i) & (q->cap - 1)];
      if (!m->count) {
        if (m->bseq <= done)
          cls__stream_failed(ctx, cls__stream_peek(ctx, m->stream), m->seq, m->status, true);
        continue;
      }
      while (f < nf && q->fails[f].bseq < m->bseq)
        f++;
      while (f < nf && q->fails[f].bseq - m->bseq < m->count) {
        uint64_t b = q->fails[f].bseq;
        cls__stream_failed(ctx, cls__stream_peek(ctx, m->stream), m->seq + (b - m->bseq),
                           q->fails[f].status, false);
        while (f < nf && q->fails[f].bseq == b) /* once per command */
          f++;
      }
    }
  }
  while (q->len) {
    struct qmap *m = &q->map[q->head];
    if (m->bseq > done)
      break;
    struct cls__stream *t = cls__stream_peek(ctx, m->stream);
    uint64_t last = m->seq;
    if (m->count) {
      uint64_t k = done - m->bseq + 1; /* of the run, done */
      if (k < m->count) {
        m->bseq += k;
        m->seq += k;
        m->count -= k;
        if (m->seq - 1 > t->completed)
          t->completed = m->seq - 1;
        break;
      }
      last += m->count - 1;
    } else {
      q->unreal--;
    }
    if (last > t->completed)
      t->completed = last;
    q->head = (q->head + 1) & (q->cap - 1);
    q->len--;
  }
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "stream %d: %s failed: %s", s->id,
                      wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}


static void *sc_queue_of(struct cls__driver *base, struct cls__stream *s, struct cls__stream *p) {
  struct sched_driver *d = sd(base);
  int qp = d->lists[p->id].queue;
  return qp == d->lists[s->id].queue ? NULL : d->queues[qp].stream;
}

static void *sc_backend_of(struct cls__driver *base, struct cls__stream *p) {
  struct sched_driver *d = sd(base);
  return d->queues[d->lists[p->id].queue].stream;
}

static uint64_t sc_enqueued(struct cls__driver *base, struct cls__stream *p) {
  return p->submitted - sd(base)->lists[p->id].n;
}

/* s's commands up to `upto` go to the queue now, with what its list holds
 * before them: a producer's pending tasks before a consumer is ordered
 * after them (orderer.prepare), and tasks whose memory is about to be
 * released (settle: the enqueued command then holds its memory objects). */
static void sc_settle(struct cls__driver *base, struct cls__stream *s, uint64_t upto) {
  if (sc_enqueued(base, s) < upto)
    submit_list(sd(base), s->id);
}

static const struct cls__orderer sc_orderer = {.prepare = sc_settle,
                                               .queue_of = sc_queue_of,
                                               .backend_of = sc_backend_of,
                                               .enqueued = sc_enqueued};

/* order() after submitting s's list (full, or before a blocking
 * transfer). */
static __attribute__((noinline)) int order_submitted(struct sched_driver *d,
                                                     struct cls__cmd *cmd) {
  uint64_t minted = cls__failures_minted(d->base.ctx);
  submit_list(d, cmd->stream->id);
  int rc = cls__order_after(&d->base, cmd, &sc_orderer);
  if (rc == CLS_OK && cls__failures_minted(d->base.ctx) != minted) {
    cls__order_drop(cmd); /* synced[] counts on them */
    return CLS__RETRY;
  }
  return rc;
}

static int sc_order(struct cls__driver *base, struct cls__cmd *cmd) {
  struct sched_driver *d = sd(base);
  struct cls__stream *s = cmd->stream;
  /* Submissions happen here, never in submit(): a deferred enqueue that
   * fails is an F8 failure, and the command being ordered must be checked
   * against it before it enters its write scope.  A full list goes now; so
   * does the list before a blocking transfer (the caller waits for it). */
  if (d->lists[s->id].n >= d->max_tasks ||
      (cmd->x.blocking && (cmd->kind == CLS__CMD_WRITE || cmd->kind == CLS__CMD_READ)))
    return order_submitted(d, cmd);
  /* Nothing submitted: cls__order_after itself answers CLS__RETRY for a
   * failure learnt while it orders. */
  return cls__order_after(base, cmd, &sc_orderer);
}

/* Grows the list's byte arena to hold `need`; the argument values already
 * in it move along.  False: out of memory (nothing changed). */
static bool bytes_grow(struct list *l, size_t need) {
  size_t ncap = l->capbytes ? l->capbytes : 256;
  while (ncap < need)
    ncap *= 2;
  unsigned char *n = malloc(ncap);
  if (!n)
    return false;
  if (l->nbytes)
    memcpy(n, l->bytes, l->nbytes);
  for (size_t i = 0; i < l->nargs; i++)
    if (l->args[i].value)
      l->args[i].value = n + ((const unsigned char *)l->args[i].value - l->bytes);
  free(l->bytes);
  l->bytes = n;
  l->capbytes = ncap;
  return true;
}

/* Makes room for one more task with `nargs` arguments of 8 bytes or less
 * (larger values grow the byte arena one by one, capture_rest).  Moves the
 * pointers launch tasks keep into the arrays along.  Off the per-launch
 * path: once grown, nothing is allocated.  False: out of memory (the
 * arrays are valid, some maybe larger). */
static __attribute__((noinline)) bool list_reserve(struct list *l, size_t nargs) {
  if (l->n == l->cap) {
    if (!cls__grow((void **)&l->tasks, &l->cap, l->n + 1, sizeof *l->tasks, 16))
      return false;
    for (size_t i = 0; i < l->n; i++)
      if (l->tasks[i].kind == CLS__CMD_LAUNCH) {
        struct task *t = &l->tasks[i];
        t->u.k.kc.global = t->u.k.global;
        if (t->u.k.kc.local)
          t->u.k.kc.local = t->u.k.local;
      }
  }
  if (l->nargs + nargs > l->capargs) {
    if (!cls__grow((void **)&l->args, &l->capargs, l->nargs + nargs, sizeof *l->args, 16))
      return false;
    for (size_t i = 0; i < l->n; i++)
      if (l->tasks[i].kind == CLS__CMD_LAUNCH)
        l->tasks[i].u.k.kc.args = l->args + l->tasks[i].u.k.arg0;
  }
  if (l->nbytes + 8 * nargs > l->capbytes && !bytes_grow(l, l->nbytes + 8 * nargs))
    return false;
  return true;
}

/* True when the list has room for one more task of `nargs` arguments of 8
 * bytes or less without growing. */
static inline bool list_has_room(const struct list *l, size_t nargs) {
  return l->n < l->cap && l->nargs + nargs <= l->capargs && l->nbytes + 8 * nargs <= l->capbytes;
}

/* capture_args from argument i on, for a value of another size than 4 or
 * 8 bytes: each value grows the arena as needed.  The first i are in the
 * list already (arguments and bytes up to b), not yet counted. */
static __attribute__((noinline)) bool capture_rest(struct list *l, const struct cls_kernel_arg *ka,
                                                   size_t n, size_t i, unsigned char *b) {
  l->nargs += i;
  l->nbytes = (size_t)(b - l->bytes);
  for (; i < n; i++) {
    struct cls_kernel_arg *ta = &l->args[l->nargs++];
    size_t size = ka[i].size;
    ta->size = size;
    ta->value = NULL;
    if (!ka[i].value)
      continue; /* local memory */
    size_t span = (size + 7) & ~(size_t)7;
    if (l->nbytes + span > l->capbytes && !bytes_grow(l, l->nbytes + span))
      return false;
    unsigned char *dst = l->bytes + l->nbytes;
    memcpy(dst, ka[i].value, size);
    ta->value = dst;
    l->nbytes += span;
  }
  return true;
}

/* Copies a launch's arguments into the list (room for them at 8 bytes a
 * value was reserved): buffers' cl_mem values point into slot storage that
 * may move, scalars into the caller's memory.  Values of 8 and 4 bytes
 * (cl_mem, the usual scalars) are moves in 8-byte cells, with no call in
 * the loop; any other size goes on in capture_rest.  False: out of
 * memory. */
static inline bool capture_args(struct list *l, const struct cls_kernel_arg *ka, size_t n) {
  struct cls_kernel_arg *ta = l->args + l->nargs;
  unsigned char *b = l->bytes + l->nbytes;
  for (size_t i = 0; i < n; i++) {
    size_t size = ka[i].size;
    const void *v = ka[i].value;
    ta[i].size = size;
    ta[i].value = v ? b : NULL; /* NULL: local memory */
    if (!v)
      continue;
    if (size == 8)
      memcpy(b, v, 8);
    else if (size == 4)
      memcpy(b, v, 4);
    else
      return capture_rest(l, ka, n, i, b);
    b += 8;
  }
  l->nargs += n;
  l->nbytes = (size_t)(b - l->bytes);
  return true;
}

/* Copies a launch's work sizes into task t and points its command at
 * them.  dims is 1..3 (checked by the core); the arrays are the caller's,
 * dims long. */
static inline void capture_sizes(struct task *t, const struct cls_kernel_cmd *kc) {
  const size_t *g = kc->global, *lo = kc->local;
  size_t *tg = t->u.k.global;
  switch (kc->dims) {
  case 3:
    tg[2] = g[2];
    /* fall through */
  case 2:
    tg[1] = g[1];
    /* fall through */
  default:
    tg[0] = g[0];
  }
  t->u.k.kc.global = tg;
  t->u.k.kc.local = NULL;
  if (lo) {
    size_t *tl = t->u.k.local;
    for (cl_uint i = 0; i < kc->dims; i++)
      tl[i] = lo[i];
    t->u.k.kc.local = tl;
  }
}

/* Copies what the enqueue of a launch will need into task t. */
static inline bool capture_launch(struct list *l, struct task *t, const struct cls__cmd *cmd) {
  size_t arg0 = l->nargs;
  if (!capture_args(l, cmd->kcmd.args, cmd->kcmd.nargs))
    return false;
  t->u.k.kc = cmd->kcmd;
  t->u.k.kc.args = l->args + arg0;
  t->u.k.arg0 = arg0;
  capture_sizes(t, &cmd->kcmd);
  return true;
}

/* Copies what the enqueue of a transfer will need into task t. */
static bool capture_xfer(struct list *l, struct task *t, const struct cls__cmd *cmd) {
  if (cmd->kind == CLS__CMD_FILL) {
    if (l->nbytes + 128 > l->capbytes && !bytes_grow(l, l->nbytes + 128))
      return false;
    t->u.t.pattern_off = l->nbytes;
    memcpy(l->bytes + l->nbytes, cmd->x.pattern, cmd->x.pattern_size);
    l->nbytes += 128;
  }
  t->u.t.x = cmd->x;
  t->u.t.x.blocking = 0;
  return true;
}

/* A blocking transfer: enqueued now (the caller waits for it); order()
 * submitted the list before it. */
static cl_int submit_blocking(struct sched_driver *d, struct cls__cmd *cmd) {
  struct cls__stream *s = cmd->stream;
  struct queue *q = &d->queues[d->lists[s->id].queue];
  cl_int rc = cls__enqueue_cmd(cls__factory(d->base.ctx), q->stream, cmd, q->seq + 1);
  if (rc != CL_SUCCESS)
    return rc;
  q->seq++;
  map_add(q, s->id, cmd->seq, 1);
  s->stats.submissions++;
  return CL_SUCCESS;
}

/* The task could not be added: the command is not submitted, its waits
 * are dropped as order() expects of a failed enqueue. */
static cl_int submit_oom(struct cls__cmd *cmd) {
  cls__order_drop(cmd);
  return CL_OUT_OF_HOST_MEMORY;
}

/* Task t, captured, becomes the list's next. */
static inline void task_commit(struct sched_driver *d, struct list *l, struct task *t,
                               struct cls__cmd *cmd) {
  t->kind = cmd->kind;
  t->seq = cmd->seq;
  l->n++;
  d->pending |= 1ull << cmd->stream->id;
}

/* submit() for any command: see sc_submit. */
static __attribute__((noinline)) cl_int submit_any(struct sched_driver *d,
                                                   struct cls__cmd *cmd) {
  if (cmd->x.blocking && (cmd->kind == CLS__CMD_WRITE || cmd->kind == CLS__CMD_READ))
    return submit_blocking(d, cmd);
  struct list *l = &d->lists[cmd->stream->id];
  bool launch = cmd->kind == CLS__CMD_LAUNCH;
  size_t nargs = launch ? cmd->kcmd.nargs : 0;
  if (!list_has_room(l, nargs) && !list_reserve(l, nargs))
    return submit_oom(cmd);
  struct task *t = &l->tasks[l->n];
  if (!(launch ? capture_launch(l, t, cmd) : capture_xfer(l, t, cmd)))
    return submit_oom(cmd);
  size_t nw = cmd->nwait;
  t->nwait = nw;
  if (nw) {
    if (!cls__grow((void **)&l->waits, &l->capwaits, l->nwaits + nw, sizeof *l->waits, 16))
      return submit_oom(cmd);
    t->wait0 = l->nwaits;
    memcpy(l->waits + l->nwaits, cmd->wait, nw * sizeof *cmd->wait);
    l->nwaits += nw;
    cmd->nwait = 0; /* the task owns the events now */
  }
  task_commit(d, l, t, cmd);
  return CL_SUCCESS;
}

/* The common launch takes a straight path: no waits, and room in the list
 * already; anything else goes to submit_any. */
static cl_int sc_submit(struct cls__driver *base, struct cls__cmd *cmd) {
  struct sched_driver *d = sd(base);
  struct list *l = &d->lists[cmd->stream->id];
  if (cmd->kind != CLS__CMD_LAUNCH || cmd->nwait || !list_has_room(l, cmd->kcmd.nargs))
    return submit_any(d, cmd);
  struct task *t = &l->tasks[l->n];
  if (!capture_launch(l, t, cmd))
    return submit_oom(cmd);
  t->nwait = 0;
  task_commit(d, l, t, cmd);
  return CL_SUCCESS;
}

const struct cls__driver_ops cls__scheduler_driver = {
    .version = CLS__DRIVER_OPS_VERSION,
    .name = "scheduler",
    .description = "logical streams batch tasks onto shared queues "
                   "(sequential or interleave; max_tasks, queues)",
    .create = sc_create,
    .destroy = sc_destroy,
    .open = sc_open,
    .close = sc_close,
    .poll = sc_poll,
    .order = sc_order,
    .submit = sc_submit,
    .settle = sc_settle,
};
