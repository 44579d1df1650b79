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
  CLS__CMD_FILL = CLS_CMD_FILL
};

/* The factory's own member for the command, without fault injection. */
static inline cl_int cls__enqueue_plain(const struct cls_stream_factory *f, void *stream,
                                        int kind, const struct cls_kernel_cmd *k,
                                        const struct cls_transfer *x, uint64_t seq, cl_uint nwait,
                                        const cl_event *wait) {
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
  return CL_INVALID_OPERATION;
}

#endif /* CLS_CALL_H */
