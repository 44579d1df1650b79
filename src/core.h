/* Internal: the objects every module of the core shares.
 *
 * A context owns one device, a driver, and through the driver a stream pool
 * (streams, their memory pools and buffer slots) and a failure table.  The
 * context lock is held by every public entry point for its whole duration,
 * so nothing below locks again. */
#ifndef CLS_CORE_H
#define CLS_CORE_H

#include "config.h"

#include "lock.h"

#include <clstream.h>
#include <clstream/stream.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cls__driver;
struct cls_driver_ops;
struct cls__failure;
struct cls__failures;
struct cls__log_entry;
struct cls__log_binding;

/* ------------------------------------------------------------------ */
/* Errors (errors.c)                                                   */
/* ------------------------------------------------------------------ */

/* Records `err` (and the OpenCL status behind it, 0 if none) as the last
 * error of this thread, with an optional printf-style detail, and returns
 * err so callers can `return cls__error(...)`. */
int cls__error(int err, cl_int cl_status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends to this thread's detail text. */
void cls__error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cls__error_clear(void);
/* cls__error without detail: for the frequent, expected codes (a skip). */
int cls__error_code(int err);

/* ------------------------------------------------------------------ */
/* Logging (log.c)                                                     */
/* ------------------------------------------------------------------ */

struct cls__logger {
  int level;
  cls_log_fn fn; /* NULL: stderr */
  void *user;
};
void cls__logger_init(struct cls__logger *lg);
/* Writes one line when `level` is enabled.  A macro so that a line not
 * logged costs one compare, not a variadic call (the ordering code logs
 * every cross-stream wait). */
#define cls__log(lg, lvl, ...)                                   \
  do {                                                           \
    const struct cls__logger *lg_ = (lg);                        \
    int lvl_ = (lvl);                                            \
    if (lvl_ <= lg_->level && lvl_ > CLS_LOG_OFF)                \
      cls__log_line(lg_, lvl_, __VA_ARGS__);                     \
  } while (0)
void cls__log_line(const struct cls__logger *lg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cls__log_level_parse(const char *s, int *level);

/* ------------------------------------------------------------------ */
/* Buffers and memory (memory.c)                                       */
/* ------------------------------------------------------------------ */

/* A page: one cl_mem that buffers are carved from.  Free extents are kept
 * sorted by offset and merged on release. */
struct cls__extent {
  size_t offset, size;
};
struct cls__page {
  cl_mem mem;
  size_t size;
  bool dedicated;          /* one buffer owns the whole page */
  size_t nfree, capfree;
  struct cls__extent *free;
  /* Last use, on the owning stream, of any block released into this page:
   * the next owner of a block is ordered after it (see memory.c). */
  uint64_t release_seq;
};

/* A buffer slot.  Lives in the memory of the stream the buffer was
 * allocated on; the handle names (stream, index, generation). */
struct cls__slot {
  uint32_t gen;            /* bumped on free: older handles are stale */
  uint32_t live_gen;       /* gen while allocated, CLS__SLOT_FREE otherwise:
                              one compare resolves a handle */
  size_t size;             /* as requested */
  size_t span;             /* as carved (aligned) */
  struct cls__page *page;
  size_t offset;           /* in the page */
  cl_mem mem;              /* sub-buffer, or the page's cl_mem if dedicated */
  struct cls__failure *failure; /* F1: NULL or one counted reference */
  /* Ordering facts, in stream sequence numbers (0: none). */
  int writer;              /* stream of the last write, -1: none */
  uint64_t write_seq;
  uint64_t write_stamp;    /* context-wide order of the last write, skips
                              included (F8 replay, see inflight.c) */
  uint64_t read_mask;      /* streams that read since the last write */
  uint64_t read_seq[CLS_MAX_STREAMS];
  int next_free;           /* free-slot list */
};

/* A freed block waiting for its uses on other streams to complete. */
struct cls__pending_free {
  struct cls__page *page;
  size_t offset, span;
  cl_mem mem;              /* sub-buffer to release once reusable */
  uint64_t need[CLS_MAX_STREAMS]; /* per stream: seq that must complete */
  uint64_t mask;
  uint64_t own_seq;        /* last use on the owning stream */
};

struct cls__memory {
  size_t npages, cappages;
  struct cls__page **pages;
  size_t nslots, capslots;
  struct cls__slot *slots;
  int free_slot;           /* head of the free-slot list, -1: none */
  size_t npending, cappending;
  struct cls__pending_free *pending;
};

/* ------------------------------------------------------------------ */
/* Streams (stream_pool.c)                                             */
/* ------------------------------------------------------------------ */

struct cls__pending_read;

struct cls__stream {
  bool created;
  int id;
  void *backend;           /* the factory's stream state */
  uint64_t submitted;      /* seq of the last command enqueued */
  uint64_t issued;         /* commands issued, enqueued or skipped: the
                              "position" reports give */
  uint64_t failed_seq;     /* last command poll() reported failed */
  cl_int failed_status;
  uint64_t completed;      /* all commands <= this have finished */
  uint64_t flushed;        /* submitted, as of the last flush of its queue */
  /* synced[t]: highest seq of stream t this stream is ordered after;
   * bit t of synced_mask is set once synced[t] is. */
  uint64_t synced[CLS_MAX_STREAMS];
  uint64_t synced_mask;
  struct cls_stream_stats stats;
  struct cls__memory mem;
};

/* Reads ev's execution status into *st; false when it cannot be read (the
 * caller then knows nothing of the event). */
static inline bool cls__event_status(cl_event ev, cl_int *st) {
  return clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *st, st, NULL) ==
         CL_SUCCESS;
}

/* f's last_event member, or NULL: members past version 1 are read only
 * from a factory that has them. */
static inline cl_event (*cls__factory_last_event(const struct cls_stream_factory *f))(void *) {
  return f->version >= 2 ? f->last_event : NULL;
}

struct cls__stream_pool {
  const struct cls_stream_factory *factory;
  void *factory_data;
  cl_event (*last_event)(void *stream); /* factory->last_event, or NULL */
  struct cls_backend backend;
  int nstreams;            /* 1 + highest id created */
  struct cls__stream streams[CLS_MAX_STREAMS];
};

/* ------------------------------------------------------------------ */
/* Programs (program.c)                                                */
/* ------------------------------------------------------------------ */

/* Ordered so that one compare, argq > CLS__ARGQ_GLOBAL, tells a buffer
 * argument it is in the wrong place. */
enum { CLS__ARGQ_UNKNOWN = 0, CLS__ARGQ_GLOBAL, CLS__ARGQ_LOCAL, CLS__ARGQ_PRIVATE };
/* nargs of a kernel taken from a failed build: not checked. */
#define CLS__NARGS_UNKNOWN ((cl_uint)-1)

struct cls_kernel {
  unsigned magic;          /* checked before use: a freed or foreign pointer
                              is rejected rather than dereferenced further */
  cls_context *ctx;
  cl_kernel kernel;
  char *name;
  cl_uint nargs;
  unsigned char argq[CLS_MAX_ARGS]; /* address qualifier per arg, UNKNOWN
                              where the platform gives no argument info */
  size_t *argsize;         /* scalars: size of the type, 0 if unknown */
  size_t max_wg;           /* CL_KERNEL_WORK_GROUP_SIZE */
  struct cls_kernel *next;
  struct cls_program *prog;
};

struct cls_program {
  cl_program program;
  uint64_t hash;           /* of source and options */
  char *options;
  size_t srclen;
  char *source;
  int refs;                /* user references; freed with the context */
  cls_context *ctx;
  struct cls_kernel *kernels;
  struct cls_program *next;
  /* A failed build: kernels taken from it launch as failed with this root
   * cause (the build log in its report); NULL when the build succeeded. */
  struct cls__failure *build_failure;
  char *build_detail;      /* the error detail of the build, replayed on a
                              cache hit */
};

void cls__programs_fini(cls_context *ctx);
#define CLS__KERNEL_MAGIC 0x6b726e6cu /* "krnl" */
static inline bool cls__kernel_valid(cls_context *ctx, const cls_kernel *k) {
  return k && k->magic == CLS__KERNEL_MAGIC && k->ctx == ctx;
}

/* ------------------------------------------------------------------ */
/* The context (context.c)                                             */
/* ------------------------------------------------------------------ */

struct cls_context {
  struct cls__lock lock;
  unsigned tag;            /* 12 bits, never 0: stamps buffer handles */
  struct cls_device_info info;
  cl_platform_id platform;
  cl_device_id device;
  cl_context clctx;
  size_t page_size;
  unsigned long long page_bytes; /* device memory held in pages */
  struct cls_quirks quirks;      /* the device's, probed once per process
                                    (quirks.c); fixed after creation */
  struct cls__logger log;
  struct cls__fault_config *faults; /* owned; NULL: none */
  struct cls__fault_data {
    const struct cls_stream_factory *inner;
    void *inner_data;
    struct cls__fault_config *cfg;
    /* The logical stream of the command being handed to the factory, or
     * -1: the backend stream's own id.  A driver whose backend streams are
     * shared by several logical streams (scheduler) sets it around each
     * enqueue, so "stream=N" faults name logical streams everywhere. */
    int stream;
  } fault_data;                     /* the fault factory's data */
  const struct cls_driver_ops *driver_ops;
  struct cls__driver *driver;
  struct cls__stream_pool *pool; /* driver_ops->pool(driver), asked once */
  struct cls__failures *failures; /* driver_ops->failures(driver), asked once */
  struct cls_program *programs;
  /* F8: launches and reads still in flight, in submission order. */
  struct cls__log_entry *inflight;
  size_t inflight_head, inflight_len, inflight_cap;
  /* Bindings of entries with more than fit in one: CLS_MAX_ARGS for each
   * position of the log, allocated once the first such entry comes. */
  struct cls__log_binding *inflight_overflow;
  /* Non-blocking downloads waiting for a sync. */
  struct cls__pending_read *reads; /* list, newest first */
  uint64_t stamp;          /* last write stamp given out */
  /* Scratch for F8 replay; reused, never shrunk. */
  /* by handle, not slot: a buffer freed during the replay's window still
   * carries the taint to what read it */
  struct cls__taint { cls_buffer handle; uint64_t stamp; } *taint_set;
  size_t taint_cap;
};

/* Makes room for `need` elements of `size` bytes in the growing array *p of
 * capacity *cap (doubled, from `first`).  False when out of memory, the
 * array unchanged.  The core's arrays are reused, never shrunk. */
static inline bool cls__grow(void **p, size_t *cap, size_t need, size_t size, size_t first) {
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

/* Doubles the ring *p (`len` elements of `size` bytes from *head; capacity
 * *cap, a power of two, or 0 and then `first`), unwrapped to start at 0.
 * False when out of memory, the ring unchanged.  Off the hot paths: rings
 * grow only when more is in flight than ever before. */
static inline bool cls__ring_grow(void **p, size_t *cap, size_t *head, size_t len, size_t size,
                                  size_t first) {
  size_t ncap = *cap ? *cap * 2 : first;
  unsigned char *n = malloc(ncap * size);
  if (!n)
    return false;
  if (len) {
    size_t upper = *cap - *head < len ? *cap - *head : len; /* before the wrap */
    memcpy(n, (unsigned char *)*p + *head * size, upper * size);
    memcpy(n + upper * size, *p, (len - upper) * size);
  }
  free(*p);
  *p = n;
  *cap = ncap;
  *head = 0;
  return true;
}

static inline void cls__lock(cls_context *ctx) { cls__lock_take(&ctx->lock); }
static inline void cls__unlock(cls_context *ctx) { cls__lock_give(&ctx->lock); }

/* The driver's stream pool (its accessor, see driver.h, is asked once when
 * the driver is created). */
static inline struct cls__stream_pool *cls__pool(cls_context *ctx) { return ctx->pool; }

/* Returns the stream, creating its backend through the driver on first
 * use; NULL with the error recorded when id is out of range or creation
 * failed.  cls__stream_get is the inline fast path of every command. */
struct cls__stream *cls__stream_open(cls_context *ctx, int id, int *err);
static inline struct cls__stream *cls__stream_get(cls_context *ctx, int id, int *err) {
  if ((unsigned)id < CLS_MAX_STREAMS && ctx->pool->streams[id].created)
    return &ctx->pool->streams[id];
  return cls__stream_open(ctx, id, err);
}
/* The stream if it exists, else NULL; no creation. */
static inline struct cls__stream *cls__stream_peek(cls_context *ctx, int id) {
  if (id < 0 || id >= CLS_MAX_STREAMS)
    return NULL;
  struct cls__stream *s = &ctx->pool->streams[id];
  return s->created ? s : NULL;
}
/* Polls one stream's backend; failures found are handled (F8) before it
 * returns.  wait: block until everything submitted completed.  Returns a
 * CLS_E* code for a backend error, else 0. */
int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait);
/* Polls every created stream (non-blocking). */
int cls__poll_all(cls_context *ctx, bool wait);
int cls__pool_init(cls_context *ctx, struct cls__stream_pool *pool,
                   const struct cls_stream_factory *f, void *fdata);
void cls__pool_fini(cls_context *ctx, struct cls__stream_pool *pool);

/* ------------------------------------------------------------------ */
/* Buffer handles (memory.c)                                           */
/* ------------------------------------------------------------------ */

/* Handle bits: context tag (12) | stream (6) | generation (22) | index (24). */
#define CLS__GEN_BITS 22
#define CLS__INDEX_BITS 24
#define CLS__STREAM_BITS 6
#define CLS__TAG_SHIFT (CLS__INDEX_BITS + CLS__GEN_BITS + CLS__STREAM_BITS)
/* No handle carries this generation (it has more than CLS__GEN_BITS). */
#define CLS__SLOT_FREE UINT32_MAX

static inline int cls__handle_stream(cls_buffer h) {
  return (int)((h.bits >> (CLS__INDEX_BITS + CLS__GEN_BITS)) & ((1u << CLS__STREAM_BITS) - 1));
}

/* Resolves a handle to its live slot; NULL with *err set to CLS_ENULL,
 * CLS_EFOREIGN or CLS_ESTALE otherwise.  Never touches memory a bad handle
 * names beyond bounds-checked slot lookups.  Inline: every binding of
 * every command takes it. */
static inline struct cls__slot *cls__resolve(cls_context *ctx, cls_buffer h) {
  if ((unsigned)(h.bits >> CLS__TAG_SHIFT) != ctx->tag)
    return NULL;
  /* A stream never created has no slots: the bound check covers it. */
  const struct cls__stream *s = &ctx->pool->streams[cls__handle_stream(h)];
  size_t index = h.bits & ((1u << CLS__INDEX_BITS) - 1);
  uint32_t gen = (uint32_t)((h.bits >> CLS__INDEX_BITS) & ((1u << CLS__GEN_BITS) - 1));
  if (index >= s->mem.nslots)
    return NULL;
  struct cls__slot *slot = &s->mem.slots[index];
  if (slot->live_gen != gen)
    return NULL;
  return slot;
}
/* Why cls__resolve(h) returned NULL: CLS_ENULL, CLS_EFOREIGN or CLS_ESTALE. */
static inline int cls__resolve_error(cls_context *ctx, cls_buffer h) {
  if ((unsigned)(h.bits >> CLS__TAG_SHIFT) != ctx->tag)
    return h.bits == 0 ? CLS_ENULL : CLS_EFOREIGN; /* the tag is never 0 */
  return CLS_ESTALE;
}
cls_buffer cls__handle_make(cls_context *ctx, int stream, int index, uint32_t gen);

int cls__memory_alloc(cls_context *ctx, struct cls__stream *s, size_t size,
                      cls_buffer *out);
int cls__memory_free(cls_context *ctx, cls_buffer h);
void cls__memory_fini(cls_context *ctx, struct cls__stream *s);

/* ------------------------------------------------------------------ */
/* Fault injection (fault.c)                                           */
/* ------------------------------------------------------------------ */

struct cls__fault_config;
int cls__fault_parse(const char *spec, struct cls__fault_config **out);
void cls__fault_config_free(struct cls__fault_config *cfg);
const struct cls_stream_factory *cls__fault_factory(void);
/* Consulted by cls_alloc: a non-zero OpenCL status when an "alloc" fault
 * fires for this allocation. */
cl_int cls__fault_alloc(struct cls__fault_config *cfg, int stream);

#endif /* CLS_CORE_H */
