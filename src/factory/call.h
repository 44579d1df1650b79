/* Internal: a command kind as a stream-factory call -- the kinds, what a
 * transfer needs, and the factory member each kind calls.  Below fault
 * injection (enqueue.h adds it), so a wrapping factory calls the factory
 * it wraps through it too. */
#ifndef CLS_CALL_H
#define CLS_CALL_H

#include "util/util.h"

#include <clstream/driver.h>

/* The kinds and the transfer are the driver interface's
 * (<clstream/driver.h>). */
enum cls__cmd_kind {
  CLS__CMD_LAUNCH = CLS_CMD_LAUNCH,
  CLS__CMD_WRITE = CLS_CMD_WRITE,
  CLS__CMD_READ = CLS_CMD_READ,
  CLS__CMD_COPY = CLS_CMD_COPY,
  CLS__CMD_FILL = CLS_CMD_FILL,
  CLS__CMD_FOREIGN = CLS_CMD_FOREIGN
};

/* Whether a command of this kind is named by its own name (a launch's
 * kernel, a foreign command's label) rather than by its operation. */
static inline bool cls__cmd_named(int kind) {
  return kind == CLS__CMD_LAUNCH || kind == CLS__CMD_FOREIGN;
}

/* The factory's own member for the command, without fault injection. */
static inline cl_int cls__enqueue_plain(const struct cls_stream_factory *f, void *stream,
                                        int kind, const struct cls_kernel_cmd *k,
                                        const struct cls_transfer *x, uint64_t seq, cl_uint nwait,
                                        const cl_event *wait) {
  /* Only the transfer kinds read x (a kind appended later may leave it unset). */
  if (kind >= CLS__CMD_WRITE && kind <= CLS__CMD_FILL && x->image) {
    cl_int (*image)(void *, int, const struct cls_transfer *, uint64_t, cl_uint,
                    const cl_event *) = cls__factory_image(f);
    return image ? image(stream, kind, x, seq, nwait, wait) : CL_INVALID_OPERATION;
  }
  switch (kind) {
  case CLS__CMD_LAUNCH:
    return f->launch(stream, k, seq, nwait, wait);
  case CLS__CMD_WRITE:
    return f->write(stream, x->dst, x->dst_offset, x->size, x->host_src, x->blocking, seq,
                    nwait, wait);
  case CLS__CMD_READ:
    return f->read(stream, x->src, x->src_offset, x->size, x->host_dst, x->blocking, seq, nwait,
                   wait);
  case CLS__CMD_COPY:
    return f->copy(stream, x->src, x->src_offset, x->dst, x->dst_offset, x->size, seq, nwait,
                   wait);
  case CLS__CMD_FILL:
    return f->fill(stream, x->dst, x->dst_offset, x->size, x->pattern, x->pattern_size, seq,
                   nwait, wait);
  }
  /* A foreign command travels apart (cls__enqueue_foreign): without it
   * there is nothing to run. */
  return CL_INVALID_OPERATION;
}

/* A foreign command on the factory's own member (version 5), without
 * fault injection; a factory without one cannot run it. */
static inline cl_int cls__enqueue_foreign_plain(const struct cls_stream_factory *f, void *stream,
                                                const struct cls_foreign_cmd *fc, uint64_t seq,
                                                cl_uint nwait, const cl_event *wait) {
  cl_int (*run)(void *, const struct cls_foreign_cmd *, uint64_t, cl_uint, const cl_event *) =
      cls__factory_foreign(f);
  if (!run || !fc)
    return CL_INVALID_OPERATION;
  return run(stream, fc, seq, nwait, wait);
}

/* Polling in ranges whatever the factory (F8a): its poll_range where it
 * has one, else its poll, each failed command a range of one. */
struct cls__range_sink {
  cls_failed_range_fn on_failed;
  void *arg;
};
static inline void cls__one_as_range(void *arg, uint64_t seq, cl_int status) {
  const struct cls__range_sink *k = arg;
  k->on_failed(k->arg, seq, seq, status);
}
static inline cl_int cls__poll_ranges(const struct cls_stream_factory *f, void *stream, int wait,
                                      cls_failed_range_fn on_failed, void *arg,
                                      uint64_t *completed) {
  cl_int (*range)(void *, int, cls_failed_range_fn, void *, uint64_t *) =
      cls__factory_poll_range(f);
  if (range)
    return range(stream, wait, on_failed, arg, completed);
  struct cls__range_sink k = {on_failed, arg};
  return f->poll(stream, wait, cls__one_as_range, &k, completed);
}

/* The other way, for a factory's poll() over its own poll_range: a caller
 * that knows no ranges hears of every command of one (always correct). */
struct cls__command_sink {
  cls_failed_fn on_failed;
  void *arg;
};
static inline void cls__range_as_each(void *arg, uint64_t first, uint64_t last, cl_int status) {
  const struct cls__command_sink *k = arg;
  for (uint64_t q = first; q <= last; q++)
    k->on_failed(k->arg, q, status);
}
static inline cl_int cls__poll_each(cl_int (*poll_range)(void *, int, cls_failed_range_fn, void *,
                                                         uint64_t *),
                                    void *stream, int wait, cls_failed_fn on_failed, void *arg,
                                    uint64_t *completed) {
  struct cls__command_sink k = {on_failed, arg};
  return poll_range(stream, wait, cls__range_as_each, &k, completed);
}

#endif /* CLS_CALL_H */
