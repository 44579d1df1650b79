/* Internal: streams and the stream pool, as types.  A stream is the unit
 * of ordering the user sees; its backend is created lazily through the
 * driver (pool.h), its memory holds its buffers (slot.h). */
#ifndef CLS_STREAM_H
#define CLS_STREAM_H

#include "base/slot.h"

#include <clstream/driver.h>
#include <stddef.h>

struct cls__stream {
  /* What the driver sees (struct cls_driver_stream), under the core's
   * names: the same members, in the same order. */
  union {
    struct cls_driver_stream pub;
    struct {
      int id;
      void *backend;       /* the factory's stream state */
      uint64_t submitted;  /* seq of the last command enqueued */
      uint64_t completed;  /* all commands <= this have finished */
      uint64_t flushed;    /* submitted, as of the last flush of its queue */
      struct cls_stream_stats stats;
      /* Placement and relocation (src/core/relocate.c): the device its
       * backend is on, and the generation of that backend (0 at creation,
       * +1 per relocation; nothing of an older one is used). */
      int device;
      uint64_t generation;
    };
  };
  bool created;
  /* Deadline mode: its last wait ran out (a command may still run, so
   * destroy leaves its queue and memory); timed_out_seq below is the
   * command that then took CLS_ETIMEDOUT.  Beside `created`: a stream's
   * size is in every handle's resolution. */
  bool hung;
  uint64_t issued;         /* commands issued, enqueued or skipped: the
                              "position" reports give */
  uint64_t failed_seq;     /* last command poll() reported failed */
  uint64_t failed_first;   /* the first of its range (ranged attribution),
                              else failed_seq */
  cl_int failed_status;
  bool failed_ranged;      /* that failure is a range's (F8a): even a range
                              of one command is not known to be it */
  /* synced[t]: highest seq of stream t this stream is ordered after;
   * bit t of synced_mask is set once synced[t] is. */
  uint64_t synced[CLS_MAX_STREAMS];
  uint64_t synced_mask;
  struct cls__memory mem;
  uint64_t timed_out_seq; /* deadline mode: see hung */
  uint64_t host_synced;   /* seq up to which a sync handed the host memory
                             of its non-blocking transfers and its foreign
                             commands' data back: recovery does not run
                             those again (cls__keep_follow) */
  uint64_t replay_pending; /* recovery: tasks a driver kept from a lost
                              queue for the next one (cls_driver_kept),
                              counted and logged at the relocation */
};

#define CLS__STREAM_VIEW(m)                                                                \
  _Static_assert(offsetof(struct cls__stream, m) == offsetof(struct cls_driver_stream, m) && \
                     sizeof(((struct cls__stream *)0)->m) ==                               \
                         sizeof(((struct cls_driver_stream *)0)->m),                        \
                 #m " is where the driver view has it")
CLS__STREAM_VIEW(id);
CLS__STREAM_VIEW(backend);
CLS__STREAM_VIEW(submitted);
CLS__STREAM_VIEW(completed);
CLS__STREAM_VIEW(flushed);
CLS__STREAM_VIEW(stats);
CLS__STREAM_VIEW(device);
CLS__STREAM_VIEW(generation);

/* The core's stream behind a driver's view of it. */
static inline struct cls__stream *cls__stream_of(struct cls_driver_stream *s) {
  return (struct cls__stream *)s;
}

struct cls__stream_pool {
  const struct cls_stream_factory *factory;
  void *factory_data;
  cl_event (*last_event)(void *stream); /* factory->last_event, or NULL */
  struct cls_backend backend; /* device 0's (= backends[0]) */
  struct cls_backend backends[CLS_MAX_DEVICES]; /* one per device of the context */
  int nstreams;            /* 1 + highest id created */
  struct cls__stream streams[CLS_MAX_STREAMS];
};

#endif /* CLS_STREAM_H */
