/* Internal: a command kind as a stream-factory call -- the kinds, what a
 * transfer needs, and the factory member each kind calls.  Below fault
 * injection (enqueue.h adds it), so a wrapping factory calls the factory
 * it wraps through it too. */
#ifndef CLS_CALL_H
#define CLS_CALL_H

#include "util/util.h"

enum cls__cmd_kind {
  CLS__CMD_LAUNCH = 1,
  CLS__CMD_WRITE,
  CLS__CMD_READ,
  CLS__CMD_COPY,
  CLS__CMD_FILL
};

/* What a stream factory call needs of a transfer, by memory object (a slot
 * may move; its cl_mem does not).  Kept as is by a driver that defers the
 * enqueue, with `host_src`/`host_dst`/`pattern` valid as long as the user
 * keeps them (async transfers) or as the driver keeps a copy (patterns). */
struct cls__xfer {
  cl_mem src, dst;
  size_t src_offset, dst_offset, size;
  const void *host_src;
  void *host_dst;
  const void *pattern;
  size_t pattern_size;
  int blocking;
};

/* The factory's own member for the command, without fault injection. */
static inline cl_int cls__enqueue_plain(const struct cls_stream_factory *f, void *stream,
                                        int kind, const struct cls_kernel_cmd *k,
                                        const struct cls__xfer *x, uint64_t seq, cl_uint nwait,
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
