/* Internal: the one place a command kind becomes a stream-factory call,
 * for every driver.  The command travels with its logical stream, which a
 * factory that wraps another (fault injection) needs to know. */
#ifndef CLS_ENQUEUE_H
#define CLS_ENQUEUE_H

#include "factory/call.h"
#include "factory/fault.h"

/* Enqueues one command of logical stream `logical` on the factory stream
 * `stream` as its command `seq`.  k for launches, x for transfers. */
static inline cl_int cls__enqueue(const struct cls_stream_factory *f, void *stream, int logical,
                                  int kind, const struct cls_kernel_cmd *k,
                                  const struct cls_transfer *x, uint64_t seq, cl_uint nwait,
                                  const cl_event *wait) {
  if (f == &cls__fault_factory)
    return cls__fault_enqueue(stream, logical, kind, k, x, seq, nwait, wait);
  return cls__enqueue_plain(f, stream, kind, k, x, seq, nwait, wait);
}

/* A foreign command (its descriptor travels apart from the kinds above). */
static inline cl_int cls__enqueue_foreign(const struct cls_stream_factory *f, void *stream,
                                          const struct cls_foreign_cmd *fc, uint64_t seq,
                                          cl_uint nwait, const cl_event *wait) {
  if (f == &cls__fault_factory)
    return cls__fault_foreign(stream, fc, seq, nwait, wait);
  return cls__enqueue_foreign_plain(f, stream, fc, seq, nwait, wait);
}

/* The same for a launch: the per-launch path of a driver that defers. */
static inline cl_int cls__enqueue_launch(const struct cls_stream_factory *f, void *stream,
                                         int logical, const struct cls_kernel_cmd *k,
                                         uint64_t seq, cl_uint nwait, const cl_event *wait) {
  if (f == &cls__fault_factory)
    return cls__fault_enqueue(stream, logical, CLS__CMD_LAUNCH, k, NULL, seq, nwait, wait);
  return f->launch(stream, k, seq, nwait, wait);
}

#endif /* CLS_ENQUEUE_H */
