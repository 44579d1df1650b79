/* The scheduler driver's completion maps (qmap.c): per backend queue, which
 * streams' commands it holds, in runs, so a poll can say what completed or
 * failed per stream.  What runs per enqueued task is static inline here. */
#ifndef CLS_SCHED_QMAP_H
#define CLS_SCHED_QMAP_H

#include "sched.h"


/* Makes room for one more entry; false: out of memory.  Out of line: the
 * map rarely grows. */
bool cls__sched_map_grow(struct queue *q);
/* Makes room for `need` more entries; false: out of memory (maybe larger,
 * not as large). */
bool cls__sched_map_reserve(struct queue *q, size_t need);
/* Polls (wait: waits for) the backend queue q, which stream id shares, and
 * reports what its map holds that failed or completed.  CLS_ECL recorded
 * when the backend's poll failed. */
int cls__sched_queue_poll(struct sched_driver *d, struct queue *q, int id, bool wait);

/* Appends an entry; false: out of memory (nothing changed). */
static inline bool cls__sched_map_push(struct queue *q, uint64_t bseq, int stream, uint64_t seq,
                                       uint64_t count, cl_int status) {
  if (q->len == q->cap && !cls__sched_map_grow(q))
    return false;
  q->map[(q->head + q->len) & (q->cap - 1)] = (struct qmap){bseq, seq, count, stream, status};
  q->len++;
  q->streams |= 1ull << stream;
  return true;
}

/* Whether stream id's command seq, backend command bseq, continues the
 * run of entry m (so m grows rather than a new entry). */
static inline bool cls__sched_map_continues(const struct qmap *m, int id, uint64_t seq,
                                            uint64_t bseq) {
  return m->count && m->stream == id && m->seq + m->count == seq && m->bseq + m->count == bseq;
}
/* Records `count` commands of stream id from its command seq, just
 * enqueued as the queue's last (up to q->seq): the last run grows when
 * they continue it.  Out of memory: they are not tracked (their stream's
 * later commands complete them). */
static inline void cls__sched_map_add(struct queue *q, int id, uint64_t seq, uint64_t count) {
  uint64_t bseq = q->seq - count + 1;
  if (q->len) {
    struct qmap *m = &q->map[(q->head + q->len - 1) & (q->cap - 1)];
    if (cls__sched_map_continues(m, id, seq, bseq)) {
      m->count += count;
      return;
    }
  }
  cls__sched_map_push(q, bseq, id, seq, count, CL_SUCCESS);
}

#endif /* CLS_SCHED_QMAP_H */
