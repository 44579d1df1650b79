/* Completion maps of the scheduler driver: each backend queue's record of
 * its enqueued commands not yet known complete (struct qmap, sched.h), its
 * growth, and the poll that walks it to report failures and completions
 * to the logical streams, in queue order.  Recording a run is inline in
 * sched.h (per submitted task); the rest is here. */
#include "qmap.h"

/* Doubles the map (a ring; capacity a power of two), unwrapped to start at
 * its head. */
bool cls__sched_map_grow(struct queue *q) {
  size_t ncap = q->cap ? q->cap * 2 : 64;
  struct qmap *n = malloc(ncap * sizeof *n);
  if (!n)
    return false;
  if (q->len) {
    size_t upper = q->cap - q->head < q->len ? q->cap - q->head : q->len; /* before the wrap */
    memcpy(n, q->map + q->head, upper * sizeof *n);
    memcpy(n + upper, q->map, (q->len - upper) * sizeof *n);
  }
  free(q->map);
  q->map = n;
  q->cap = ncap;
  q->head = 0;
  return true;
}

bool cls__sched_map_reserve(struct queue *q, size_t need) {
  while (q->cap - q->len < need)
    if (!cls__sched_map_grow(q))
      return false;
  return true;
}

/* The backend poll's failure callback: gathered first, reported by
 * report_failures against the map (the backend knows backend seqs only). */
static void collect_range(void *arg, uint64_t first, uint64_t last, cl_int status) {
  struct queue *q = arg;
  if (cls__sched_grow((void **)&q->fails, &q->capfails, q->nfails + 1, sizeof *q->fails, 16))
    q->fails[q->nfails++] = (struct qfail){last, first, status};
}

static void collect(void *arg, uint64_t bseq, cl_int status) {
  collect_range(arg, bseq, bseq, status);
}

/* Failure x's range cut to the runs of the map from entry i on: each
 * stream's part (its first and last command in the range), reported as
 * one failure (ranged attribution on a queue streams share: one record
 * names every part, F9); a failure of one command is known exactly. */
static void report_range(struct sched_driver *d, struct queue *q, size_t i,
                         const struct qfail *x) {
  struct cls_driver_stream *streams[CLS_MAX_STREAMS];
  uint64_t first[CLS_MAX_STREAMS], last[CLS_MAX_STREAMS];
  size_t n = 0;
  for (; i < q->len; i++) {
    const struct qmap *m = &q->map[(q->head + i) & (q->cap - 1)];
    if (!m->count)
      continue;
    if (m->bseq > x->bseq)
      break; /* the map is in queue order */
    uint64_t end = m->bseq + m->count - 1;
    if (x->first > end)
      continue;
    uint64_t lo = m->seq + ((x->first > m->bseq ? x->first : m->bseq) - m->bseq);
    uint64_t hi = m->seq + ((x->bseq < end ? x->bseq : end) - m->bseq);
    if (x->first == x->bseq) { /* one command of the queue: known exactly */
      cls_driver_failed(&d->base, d->streams[m->stream], lo, x->status, false);
      return;
    }
    size_t p = 0;
    while (p < n && streams[p] != d->streams[m->stream])
      p++;
    if (p == n) {
      streams[n] = d->streams[m->stream];
      first[n] = lo;
      last[n++] = hi;
    } else { /* a stream's runs are in seq order */
      last[p] = hi;
    }
  }
  if (n)
    cls_driver_failed_parts(&d->base, streams, first, last, n, x->status);
}

/* The failures of one poll and the enqueues that failed, in queue order:
 * an enqueue that failed is reported when the queue has finished what came
 * before it (up to `done`), a failure at its first run. */
static void report_failures(struct sched_driver *d, struct queue *q, uint64_t done) {
  size_t f = 0, nf = q->nfails;
  for (size_t i = 0; i < q->len; i++) {
    struct qmap *m = &q->map[(q->head + i) & (q->cap - 1)];
    if (!m->count) {
      if (m->bseq <= done && m->status != CL_SUCCESS) /* CL_SUCCESS: withdrawn */
        cls_driver_failed(&d->base, d->streams[m->stream], m->seq, m->status, true);
      continue;
    }
    uint64_t end = m->bseq + m->count - 1;
    /* The failures whose range starts at or before this run's end, not
     * reported yet (once per range). */
    for (; f < nf && q->fails[f].first <= end; f++) {
      const struct qfail *x = &q->fails[f];
      if (f && x->bseq == x[-1].bseq && x->first == x[-1].first)
        continue;
      if (x->bseq >= m->bseq)
        report_range(d, q, i, x);
    }
  }
}

/* Completions: the map's entries up to backend command `done` leave
 * it, and their streams' completed seqs move on (a run partly done is cut
 * where it stands).  The ring is walked in locals: the stores to the
 * streams may alias the queue. */
static void retire(struct sched_driver *d, struct queue *q, uint64_t done) {
  struct qmap *map = q->map;
  size_t head = q->head, len = q->len, mask = q->cap - 1;
  if (!len)
    return;
  /* All done, and every entry a run (count 0 only with unreal): each
   * stream's last entry, from the end, is how far it completed (a
   * stream's runs are in seq order), so the walk stops once it has met
   * every stream the map may hold (interleave: one entry a command). */
  const struct qmap *z = &map[(head + len - 1) & mask];
  if (!q->unreal && z->bseq + z->count - 1 <= done) {
    uint64_t want = q->streams, seen = 0;
    for (size_t i = len; i-- && seen != want;) {
      const struct qmap *m = &map[(head + i) & mask];
      uint64_t bit = 1ull << m->stream;
      if (seen & bit)
        continue;
      seen |= bit;
      struct cls_driver_stream *t = d->streams[m->stream];
      uint64_t last = m->seq + m->count - 1;
      if (last > t->completed)
        t->completed = last;
    }
    q->head = (head + len) & mask;
    q->len = 0;
    q->streams = 0;
    return;
  }
  for (; len; head = (head + 1) & mask, len--) {
    struct qmap *m = &map[head];
    if (m->bseq > done)
      break;
    struct cls_driver_stream *t = d->streams[m->stream];
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
  }
  q->head = head;
  q->len = len;
  if (!len)
    q->streams = 0;
}

int cls__sched_queue_poll(struct sched_driver *d, struct queue *q, int id, bool wait) {
  uint64_t done = 0;
  q->nfails = 0;
  const struct cls_stream_factory *fa = d->base.factory;
  cl_int rc = fa->version >= 4 && fa->poll_range
                  ? fa->poll_range(q->stream, wait, collect_range, q, &done)
                  : fa->poll(q->stream, wait, collect, q, &done);
  /* Failures first (their commands are still in the map), then
   * completions, in queue order.  Nothing to report: the usual case, no
   * walk. */
  if (q->nfails || q->unreal)
    report_failures(d, q, done);
  retire(d, q, done);
  if (rc != CL_SUCCESS)
    return cls_driver_error(CLS_ECL, rc, "stream %d: %s failed: %s", id,
                      wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}
