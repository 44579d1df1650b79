/* clstream — portable, dependable OpenCL for programs that run many kernels
 * on several streams.
 *
 * This header is the whole public API a program needs.  It does not include
 * the OpenCL headers: objects are opaque and OpenCL status codes are plain
 * ints.  Code that plugs in its own stream factory includes
 * <clstream/stream.h> as well.
 *
 * Conventions
 *   - Every function that can fail returns an int: 0 on success, a negative
 *     CLS_E* code on error.  cls_strerror() and cls_err_name() describe a
 *     code; cls_last_cl_status() and cls_last_error_detail() give the OpenCL
 *     status and the text (build log, device list...) behind the last error
 *     on the calling thread.  Each such call clears that text on entry, so
 *     after a success it is empty.
 *   - Buffers are handles carrying a generation: a freed, stale or foreign
 *     handle is detected and rejected, never dereferenced.
 *   - Every buffer carries its failure record.  A failed launch taints what it
 *     was to write; a launch reading tainted input is skipped and passes the
 *     failure on; a read of tainted data fails with CLS_ETAINTED and a report
 *     naming the root cause and the chain of skipped launches, across streams.
 *
 * Threading: one context may be used from several threads at once; every
 * call on a context is serialised by the context's lock.  Reports are owned
 * by the caller and are independent of the context they came from.
 */
#ifndef CLSTREAM_H
#define CLSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(CLS_BUILDING_LIBRARY) && defined(__GNUC__)
#define CLS_API __attribute__((visibility("default")))
#else
#define CLS_API
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* One table generates the codes, their names and their messages. */
#define CLS_ERRNO_MAP(XX)                                                     \
  XX(EINVAL, -1, "invalid argument")                                          \
  XX(ENOMEM, -2, "out of host memory")                                        \
  XX(ENODEV, -3, "no OpenCL device matches the selection")                    \
  XX(ECL, -4, "an OpenCL call failed")                                        \
  XX(ESTALE, -5, "stale or freed buffer handle")                              \
  XX(EFOREIGN, -6, "handle belongs to another context")                       \
  XX(ENULL, -7, "handle was never allocated")                                 \
  XX(ERANGE, -8, "offset or size out of range")                               \
  XX(ETOOBIG, -9, "size exceeds the device's maximum allocation")             \
  XX(EBUILD, -10, "program build failed")                                     \
  XX(ENOKERNEL, -11, "no kernel of that name in the program")                 \
  XX(EARGCOUNT, -12, "wrong number of kernel arguments")                      \
  XX(EARGKIND, -13, "kernel argument kind does not match the kernel")         \
  XX(EWORKSIZE, -14, "invalid global or local work size")                     \
  XX(ESTREAM, -15, "invalid stream id")                                       \
  XX(ELAUNCH, -16, "enqueue failed; the outputs carry the failure")           \
  XX(ESKIPPED, -17, "skipped: an input carries a failure")                    \
  XX(ETAINTED, -18, "read of data that carries a failure")                    \
  XX(EALLOC, -19, "device allocation failed")                                 \
  XX(ECONFIG, -20, "malformed configuration string")                          \
  XX(EDRIVER, -21, "unknown scheduler driver, or help asked for")            \
  XX(ENOSYS, -22, "not supported by this platform or driver")                 \
  XX(EVERSION, -23, "unsupported ops struct version")                         \
  XX(EACCESS, -24, "declared access does not match the kernel's signature")

enum cls_errno {
  CLS_OK = 0,
#define CLS__ERR_ENUM(name, val, msg) CLS_##name = (val),
  CLS_ERRNO_MAP(CLS__ERR_ENUM)
#undef CLS__ERR_ENUM
  CLS__ERR_LAST = -25
};

/* Message and symbolic name of a CLS_E* code ("unknown error" / "UNKNOWN"
 * for anything else).  Never NULL. */
CLS_API const char *cls_strerror(int err);
CLS_API const char *cls_err_name(int err);
/* Symbolic name of an OpenCL status ("CL_OUT_OF_RESOURCES"). Never NULL. */
CLS_API const char *cls_cl_status_name(int cl_status);
/* The OpenCL status behind the last error returned on this thread
 * (0 when the error did not come from OpenCL). */
CLS_API int cls_last_cl_status(void);
/* Human-readable detail of the last error on this thread: the build log of
 * a failed build, the list of devices when a selection matched nothing, the
 * read and its first root cause for CLS_ETAINTED, the program's kernels for
 * CLS_ENOKERNEL, the quoted text for CLS_ECONFIG...  Every call that can
 * return a CLS_E* code clears it on entry and sets it when it fails, but
 * for CLS_ESKIPPED: the hot path of a failed pipeline formats none (the
 * read that meets the failure names it).  The other calls (strings,
 * counts, cls_last_cl_status, cls_context_destroy) leave it as it is.
 * Empty string when there is none.  Valid until the next call on this
 * thread. */
CLS_API const char *cls_last_error_detail(void);

CLS_API const char *cls_version_string(void);

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

enum cls_device_type {
  CLS_DEVICE_CPU = 1,
  CLS_DEVICE_GPU = 2,
  CLS_DEVICE_ACCELERATOR = 4,
  CLS_DEVICE_OTHER = 8
};

struct cls_device_info {
  int platform_index;
  int device_index;
  int type;                       /* enum cls_device_type */
  char platform_name[128];
  char platform_vendor[128];
  char platform_version[128];
  char device_name[128];
  char device_version[128];       /* "OpenCL 3.0 ..." */
  char driver_version[64];
  int cl_version;                 /* device version: 120, 200, 300 ... */
  unsigned compute_units;
  unsigned long long global_mem_size;
  unsigned long long max_alloc_size;
  unsigned long long local_mem_size;
  size_t max_work_group_size;
  size_t max_work_item_sizes[3];
  unsigned base_addr_align;       /* bytes */
};

/* Every device of every platform, in platform order.  Fills up to `cap`
 * entries of `out` (which may be NULL when cap is 0) and stores the total in
 * *count. */
CLS_API int cls_device_list(struct cls_device_info *out, size_t cap,
                            size_t *count);
/* The device a selection string picks, with the rules of CLS_DEVICE:
 *   NULL or ""    the first GPU, else the first device
 *   "P:D"         platform P, device D (indices from 0, digits only); any
 *                 text with a ':' is read so
 *   "cpu" "gpu" "accelerator"   the first device of that type
 *   anything else a case-insensitive substring of the platform name,
 *                 vendor or version, or of the device name ("pocl",
 *                 "llvmpipe", "rusticl")
 * No whitespace anywhere.  CLS_ECONFIG for malformed text ("0: 0", "+0:0",
 * an index past INT_MAX), the text quoted in cls_last_error_detail();
 * CLS_ENODEV when nothing matches, and the detail then lists the devices
 * that exist. */
CLS_API int cls_device_select(const char *spec, struct cls_device_info *out);

/* ------------------------------------------------------------------ */
/* Contexts and streams                                                */
/* ------------------------------------------------------------------ */

typedef struct cls_context cls_context;
struct cls_stream_factory; /* <clstream/stream.h> */

/* Streams are small integers, 0 .. CLS_MAX_STREAMS-1, created lazily on
 * first use. */
#define CLS_MAX_STREAMS 64

#define CLS_CONTEXT_OPTIONS_VERSION 2
struct cls_context_options {
  unsigned version;             /* CLS_CONTEXT_OPTIONS_VERSION */
  /* Device selection string (see cls_device_select); NULL: $CLS_DEVICE,
   * then the default. */
  const char *device;
  /* Driver name and parameters (CLS_SCHEDULER's grammar); NULL:
   * $CLS_SCHEDULER, then the configure-time default. */
  const char *scheduler;
  /* Fault injection spec (grammar in docs/testing.md); NULL:
   * $CLS_FAULT, then none.  For all three strings, "" is the same as NULL
   * and malformed text makes creation fail with CLS_ECONFIG (rules in
   * docs/design.md, "Configuration strings"). */
  const char *fault;
  /* Stream factory; NULL: the OpenCL in-order queue factory.  The factory
   * and its data must outlive the context. */
  const struct cls_stream_factory *factory;
  void *factory_data;
  /* Size of the cl_mem pages buffers are carved from; 0: 64 MiB, or 1/32
   * of the device's global memory when that is less (oclgrind: 4 MiB);
   * either is capped by the device's maximum allocation. */
  size_t page_size;
  /* Version 2.  Directory of the persistent program cache (docs/cache.md);
   * NULL or "": $CLS_CACHE_DIR, then $XDG_CACHE_HOME/clstream, then
   * ~/.cache/clstream.  CLS_CACHE=off turns the cache off whatever this
   * says.  A version-1 caller's struct ends before it. */
  const char *cache_dir;
};

/* Creates a context on one device.  opts may be NULL.  On failure nothing
 * is left behind and *out is NULL. */
CLS_API int cls_context_create(cls_context **out,
                               const struct cls_context_options *opts);
/* Waits for all work, then releases everything the context owns.  Buffers,
 * programs and kernels of the context become invalid; reports stay valid.
 * NULL is accepted. */
CLS_API void cls_context_destroy(cls_context *ctx);
CLS_API int cls_context_device(cls_context *ctx, struct cls_device_info *out);
/* Name of the driver the context runs on ("event", "scheduler"). */
CLS_API const char *cls_context_driver(cls_context *ctx);

/* The persistent program cache as this context uses it (docs/cache.md):
 * program binaries kept on disk, keyed by platform, device, driver
 * version, clstream version, build options and source. */
#define CLS_CACHE_INFO_VERSION 1
struct cls_cache_info {
  unsigned version;              /* set by the caller: CLS_CACHE_INFO_VERSION */
  int enabled;                   /* 0: CLS_CACHE=off, or no directory */
  const char *dir;               /* "" when not enabled; owned by the context */
  unsigned long long max_bytes;  /* CLS_CACHE_MAX */
  unsigned long long entries;    /* files in the directory now */
  unsigned long long bytes;      /* their total size */
  unsigned long long hits;       /* builds of this context served from disk */
  unsigned long long misses;     /* builds of this context compiled from source */
  unsigned long long stores;     /* entries this context wrote */
};
CLS_API int cls_context_cache(cls_context *ctx, struct cls_cache_info *out);
/* The drivers built into this library (configure --enable-drivers), and
 * the default (configure --with-scheduler; $CLS_SCHEDULER overrides it). */
CLS_API size_t cls_driver_count(void);
CLS_API int cls_driver_info(size_t i, const char **name, const char **description);
CLS_API const char *cls_default_driver(void);

/* Per-stream counters; they only grow (until cls_stats_reset).  A command
 * "accepted" was handed to the driver: enqueued at once (event driver) or
 * put on the stream's task list (scheduler driver). */
struct cls_stream_stats {
  uint64_t enqueues;     /* commands accepted (not skipped, enqueue not failed) */
  uint64_t launches;     /* kernel launches accepted */
  uint64_t skips;        /* launches and copies skipped on tainted input */
  uint64_t waits;        /* cross-stream waits added to this stream */
  uint64_t flushes;      /* flushes of this stream's backend queue */
  uint64_t markers;      /* marker events taken on this stream */
  uint64_t submissions;  /* hand-overs to the backend: one per command for
                            the event driver, one per batch for the
                            scheduler driver */
  uint64_t failures;     /* failures minted on this stream */
};
CLS_API int cls_stream_stats(cls_context *ctx, int stream,
                             struct cls_stream_stats *out);
CLS_API int cls_stats_reset(cls_context *ctx);

typedef struct cls_report cls_report;

/* Waits until everything submitted to `stream` (and what it waited on) has
 * completed.  Completes the stream's non-blocking downloads: when one of
 * them read data that turned out to carry a failure, returns CLS_ETAINTED
 * and, when `report` is not NULL, a report the caller frees. */
CLS_API int cls_stream_sync(cls_context *ctx, int stream, cls_report **report);
/* cls_stream_sync on every stream. */
CLS_API int cls_sync(cls_context *ctx, cls_report **report);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/* A buffer handle: opaque bits naming a slot, its generation, its stream
 * and its context.  The zero handle (CLS_BUFFER_NULL) is never allocated. */
typedef struct cls_buffer {
  uint64_t bits;
} cls_buffer;
#ifdef __cplusplus
#define CLS_BUFFER_NULL (cls_buffer())
#else
#define CLS_BUFFER_NULL ((cls_buffer){0})
#endif

/* Allocates `size` bytes from `stream`'s memory pool.  Nothing has written
 * a fresh buffer, so until something does (upload, fill, copy, launch) it
 * carries the context's "never written" failure: a read fails instead of
 * returning stale bytes, and a launch reading it is skipped.  Failures are
 * tracked per buffer: any write clears the whole buffer. */
CLS_API int cls_alloc(cls_context *ctx, int stream, size_t size,
                      cls_buffer *out);
/* Frees a buffer.  Its memory is reused only after every queued use of it,
 * on any stream, has completed. */
CLS_API int cls_free(cls_context *ctx, cls_buffer buf);
CLS_API int cls_buffer_size(cls_context *ctx, cls_buffer buf, size_t *size);

/* Host to device.  `src` may be reused as soon as cls_upload returns; with
 * cls_upload_async it must stay valid until the stream is synced. */
CLS_API int cls_upload(cls_context *ctx, int stream, cls_buffer dst,
                       size_t offset, const void *src, size_t size);
CLS_API int cls_upload_async(cls_context *ctx, int stream, cls_buffer dst,
                             size_t offset, const void *src, size_t size);
/* Device to host, blocking.  When the buffer carries a failure (now, or
 * found when the read completes) returns CLS_ETAINTED, and, when `report`
 * is not NULL, a report the caller frees; the bytes in `dst` are then
 * unspecified. */
CLS_API int cls_download(cls_context *ctx, int stream, cls_buffer src,
                         size_t offset, void *dst, size_t size,
                         cls_report **report);
/* Device to host, completed by cls_stream_sync / cls_sync on `stream`,
 * which report a failure found then.  A failure already known returns
 * CLS_ETAINTED at once. */
CLS_API int cls_download_async(cls_context *ctx, int stream, cls_buffer src,
                               size_t offset, void *dst, size_t size);
/* Device to device.  A tainted source is not copied: the destination takes
 * the source's failure and the call returns CLS_ETAINTED. */
CLS_API int cls_copy(cls_context *ctx, int stream, cls_buffer src,
                     size_t src_offset, cls_buffer dst, size_t dst_offset,
                     size_t size);
/* Fills `size` bytes at `offset` with a pattern of 1, 2, 4, ... 128 bytes;
 * offset and size must be multiples of the pattern size. */
CLS_API int cls_fill(cls_context *ctx, int stream, cls_buffer dst,
                     size_t offset, size_t size, const void *pattern,
                     size_t pattern_size);
/* The F5 question without a read: CLS_ETAINTED when any of the buffers
 * carries a failure, or a handle is stale or was never allocated; the
 * report names each failure once and each bad handle. */
CLS_API int cls_check(cls_context *ctx, size_t n, const cls_buffer *bufs,
                      cls_report **report);

/* ------------------------------------------------------------------ */
/* Programs, kernels and launches                                      */
/* ------------------------------------------------------------------ */

typedef struct cls_program cls_program;
typedef struct cls_kernel cls_kernel;

/* Builds (or finds in the context's cache, keyed by device, source hash and
 * options, or loads from the persistent cache on disk: docs/cache.md) a
 * program.  On a build failure returns CLS_EBUILD, the build log
 * is in cls_last_error_detail(), and *out is still set (release it as
 * usual) to a program that remembers the failure: kernels taken from it
 * launch as failed (CLS_EBUILD), and their outputs carry the build failure,
 * with a build log excerpt, to whoever reads them.  A pipeline may stop at
 * the CLS_EBUILD or go on and meet it in its reports.  Other errors leave
 * *out NULL. */
CLS_API int cls_program_build(cls_context *ctx, const char *source,
                              const char *options, cls_program **out);
/* Drops the caller's reference; kernels taken from it stay valid until the
 * context is destroyed. */
CLS_API int cls_program_release(cls_context *ctx, cls_program *prog);
/* Looks a kernel up by name.  The kernel belongs to the program. */
CLS_API int cls_kernel_get(cls_context *ctx, cls_program *prog,
                           const char *name, cls_kernel **out);
CLS_API const char *cls_kernel_name(const cls_kernel *k);
CLS_API int cls_kernel_num_args(const cls_kernel *k);

enum cls_access {
  CLS_READ = 1,
  CLS_WRITE = 2,
  CLS_READ_WRITE = 3,
  /* access inferred from the kernel signature (const global pointer: read,
   * else read-write); see docs/design.md F11 */
  CLS_ACCESS_INFER = 4
};
enum cls_arg_kind { CLS_ARG_BUFFER = 1, CLS_ARG_SCALAR = 2, CLS_ARG_LOCAL = 3 };

/* One kernel argument.  Buffers bind the whole buffer with a declared
 * access; scalars are copied at the call; local arguments give a size. */
typedef struct cls_arg {
  int kind;          /* enum cls_arg_kind */
  int access;        /* enum cls_access, buffers only */
  cls_buffer buffer;
  const void *value; /* scalars */
  size_t size;       /* scalars and local memory */
} cls_arg;

/* Argument constructors: CLS_IN, CLS_OUT and CLS_INOUT bind a buffer read,
 * written or both; CLS_ARG binds one whose access is taken from the
 * kernel's signature; CLS_SCALAR copies the lvalue `v`; CLS_LOCAL asks for
 * `n` bytes of local memory.  C gets compound literals (C99); C++ has
 * neither those nor (before C++20) designated initializers, so it gets
 * inline functions, and both languages compile this header warning-free. */
#ifdef __cplusplus
static inline cls_arg cls__arg_buffer(int access, cls_buffer b) {
  cls_arg a = cls_arg();
  a.kind = CLS_ARG_BUFFER;
  a.access = access;
  a.buffer = b;
  return a;
}
static inline cls_arg cls__arg_sized(int kind, const void *value, size_t size) {
  cls_arg a = cls_arg();
  a.kind = kind;
  a.value = value;
  a.size = size;
  return a;
}
#define CLS_IN(b) cls__arg_buffer(CLS_READ, (b))
#define CLS_OUT(b) cls__arg_buffer(CLS_WRITE, (b))
#define CLS_INOUT(b) cls__arg_buffer(CLS_READ_WRITE, (b))
#define CLS_ARG(b) cls__arg_buffer(CLS_ACCESS_INFER, (b))
#define CLS_SCALAR(v) cls__arg_sized(CLS_ARG_SCALAR, &(v), sizeof(v))
#define CLS_LOCAL(n) cls__arg_sized(CLS_ARG_LOCAL, NULL, (n))
#else
#define CLS_IN(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_READ, .buffer = (b)})
#define CLS_OUT(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_WRITE, .buffer = (b)})
#define CLS_INOUT(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_READ_WRITE, .buffer = (b)})
#define CLS_ARG(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_ACCESS_INFER, .buffer = (b)})
#define CLS_SCALAR(v) ((cls_arg){.kind = CLS_ARG_SCALAR, .value = &(v), .size = sizeof(v)})
#define CLS_LOCAL(n) ((cls_arg){.kind = CLS_ARG_LOCAL, .size = (n)})
#endif

/* Maximum number of arguments of one launch. */
#define CLS_MAX_ARGS 32

/* What a kernel needs of a launch, asked before one is refused. */
#define CLS_KERNEL_INFO_VERSION 1
struct cls_kernel_arg_info {
  char name[64];     /* "" where the platform gives none; cut at 63 bytes */
  int kind;          /* enum cls_arg_kind, from the address qualifier (a
                        __constant pointer is a buffer); 0 where unknown */
  int access;        /* buffers: CLS_READ for a const global or __constant
                        pointer, CLS_READ_WRITE for a non-const one (what
                        CLS_ARG infers, and what F11 checks CLS_IN against);
                        0 where the platform gives no type qualifier, and
                        for scalars and local memory */
};
struct cls_kernel_info {
  unsigned version;  /* set by the caller: CLS_KERNEL_INFO_VERSION */
  /* The largest work-group (product of the local sizes) cls_launch
   * accepts for this kernel: the kernel's CL_KERNEL_WORK_GROUP_SIZE, or
   * the device's maximum where the vendor runs more than it reports
   * (struct cls_quirks, wg_above_kernel_max).  Each local size is also
   * checked against the device's max_work_item_sizes. */
  size_t max_work_group_size;
  size_t kernel_work_group_size; /* CL_KERNEL_WORK_GROUP_SIZE as reported */
  size_t preferred_work_group_size_multiple;
  /* As reported when the kernel was looked up: the kernel's own local
   * memory, without CLS_LOCAL arguments, and private memory per
   * work-item (vendors differ in what they count: docs/portability.md). */
  unsigned long long local_mem_size;
  unsigned long long private_mem_size;
  int nargs;         /* the kernel's; args[] describes the first
                        CLS_MAX_ARGS of them */
  struct cls_kernel_arg_info args[CLS_MAX_ARGS];
};
/* Fills *out for `k`.  CLS_EINVAL for NULL or something that is not a
 * kernel, CLS_EVERSION for an unknown out->version, CLS_EBUILD for a
 * kernel of a program that failed to build (nothing is known of it: out
 * holds zeros and nargs -1). */
CLS_API int cls_kernel_info(const cls_kernel *k, struct cls_kernel_info *out);

/* Launches `kernel` on `stream` over `dims` (1-3) dimensions.  `local` may
 * be NULL (the runtime picks).  Order against other streams is inferred from
 * the buffer arguments: no user sync is needed.
 * Returns 0 when accepted; CLS_ESKIPPED when an input carries a failure (the
 * launch made no OpenCL call and its outputs carry that failure);
 * CLS_ELAUNCH when the enqueue failed (the outputs carry the new failure);
 * other codes for invalid arguments, which change nothing.  A driver that
 * enqueues later than the call (the scheduler driver) returns 0 for a launch
 * whose enqueue then fails: that failure is found after the call (rule F8)
 * and the reads report it, with the same status.  Uploads, copies and fills
 * follow the same rules (an enqueue failure there is CLS_ECL). */
CLS_API int cls_launch(cls_context *ctx, int stream, cls_kernel *kernel,
                       unsigned dims, const size_t *global,
                       const size_t *local, size_t nargs,
                       const cls_arg *args);

/* ------------------------------------------------------------------ */
/* Failure reports                                                     */
/* ------------------------------------------------------------------ */

enum cls_skip_kind {
  CLS_SKIP_SKIPPED = 1,   /* did not run: an input carried the failure */
  CLS_SKIP_UNTRUSTED = 2  /* ran before the failure was known, on its output */
};

struct cls_failure_info {
  int status;             /* CLS_E* */
  int cl_status;          /* OpenCL status behind it, 0 if none */
  const char *cl_name;    /* "CL_OUT_OF_RESOURCES" */
  const char *operation;  /* "launch", "upload", "copy", "alloc" ... */
  const char *kernel;     /* kernel name, "" for non-launch operations */
  int stream;
  uint64_t position;      /* the stream's command count at the failure */
  const char *message;
  const char *build_log;  /* excerpt, "" when none */
  int async;              /* 1 when found after the enqueue (F8) */
  size_t nskips;          /* entries in the skip chain */
  uint64_t skipped;       /* launches in the chain (entries repeat a launch) */
};

/* One entry of a skip chain: `count` consecutive launches of one kernel on
 * one stream, from `position` on. */
struct cls_skip_info {
  int kind;               /* enum cls_skip_kind */
  const char *kernel;
  int stream;
  uint64_t position;
  uint64_t count;
};

CLS_API size_t cls_report_failures(const cls_report *r);
CLS_API int cls_report_failure(const cls_report *r, size_t i,
                               struct cls_failure_info *out);
CLS_API int cls_report_skip(const cls_report *r, size_t failure, size_t i,
                            struct cls_skip_info *out);
/* Handles the read named that were stale (CLS_ESTALE), foreign
 * (CLS_EFOREIGN) or never allocated (CLS_ENULL). */
CLS_API size_t cls_report_bad_handles(const cls_report *r);
CLS_API int cls_report_bad_handle(const cls_report *r, size_t i,
                                  cls_buffer *handle, int *why);
/* The whole report as text; owned by the report. */
CLS_API const char *cls_report_text(cls_report *r);
CLS_API void cls_report_free(cls_report *r);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

enum cls_log_level {
  CLS_LOG_OFF = 0,     /* nothing */
  CLS_LOG_ERRORS = 1,  /* every minted failure, once (default) */
  CLS_LOG_STREAMS = 2, /* + stream creation, cross-stream waits, syncs */
  CLS_LOG_FULL = 3     /* + every command */
};
typedef void (*cls_log_fn)(void *user, int level, const char *message);
/* Installs a logger for the context: NULL fn logs to stderr.  The initial
 * level comes from $CLS_LOG (off|errors|streams|full). */
CLS_API int cls_set_logger(cls_context *ctx, int level, cls_log_fn fn,
                           void *user);

/* ------------------------------------------------------------------ */
/* Vendor quirks                                                       */
/* ------------------------------------------------------------------ */

/* OpenCL leaves what follows a failure implementation-defined, and the
 * vendors differ.  On the first use of a device in a process, clstream
 * probes the behaviours that can be probed safely (on a private queue; a
 * user event is failed before anything is flushed behind it; every wait is
 * a status poll with a deadline) and keeps the answers for that device.
 * Each answer is 1 (the vendor does it), 0 (it does not) or
 * CLS_QUIRK_UNKNOWN (not probed, or the probe could not tell), which
 * clstream treats as the worst case.  README "Portability" lists the
 * workaround each answer selects. */
#define CLS_QUIRK_UNKNOWN (-1)
#define CLS_QUIRKS_VERSION 2
struct cls_quirks {
  unsigned version;          /* set by the caller: CLS_QUIRKS_VERSION */
  int probed;                /* 1: the probes ran to the end in time */
  /* A user event set to an error status calls its CL_COMPLETE callback
   * (oclgrind).  clstream never relies on callbacks: it polls. */
  int failed_callback;
  /* A command queued on an event that then fails is failed too, rather
   * than run on whatever its input holds. */
  int dependent_fails;
  /* A command queued behind a failed one on the same in-order queue is
   * failed too (PoCL), rather than run.  On such a device a failure shows
   * on the last command of the queue, so the last event says whether
   * anything before it failed. */
  int queue_poisoned;
  /* clFinish returned while a flushed command was not complete (rusticl).
   * 0 only means it was not seen: clstream waits for the last command's
   * event after clFinish on every device. */
  int finish_early;
  int dependent_status;      /* the status a dependent command failed with */
  /* Limits clstream validates against before OpenCL sees a call. */
  int cl_version;            /* the device's: 120, 200, 300 */
  unsigned long long max_alloc_size;
  size_t max_work_group_size;
  size_t page_size;          /* this context's memory pages */
  double probe_ms;           /* how long the probes took in this process */
  /* Version 2.  A launch whose work-group is larger than the kernel's
   * CL_KERNEL_WORK_GROUP_SIZE but within the device's maximum runs and
   * computes right (rusticl: 32 reported for every kernel, 1024 run).
   * Probed on first need (a kernel reporting less than the device's
   * maximum, or a version-2 call of cls_context_quirks), once per device
   * and process, with a tiny kernel at the device's maximum whose every
   * element is checked.  Where 1, launches of a kernel that reports no
   * less than the probe's kernel did, and requires no work-group size, are
   * checked against the device's limits; elsewhere against the kernel's
   * value.  0 also where the probe's kernel reported the device's maximum
   * (nothing above it to run: PoCL, oclgrind). */
  int wg_above_kernel_max;
  size_t kernel_work_group_size; /* the probe kernel's CL_KERNEL_WORK_GROUP_SIZE,
                                    0 if unknown */
};
/* The quirks of the context's device.  A caller's version 1 struct gets
 * the version 1 fields only. */
CLS_API int cls_context_quirks(cls_context *ctx, struct cls_quirks *out);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_H */
