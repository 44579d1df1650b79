/** \file clstream.h
 * \brief clstream: portable, dependable OpenCL for programs that run many
 * kernels on several streams.
 *
 * This header is the whole public API a program needs.  It does not include
 * the OpenCL headers: objects are opaque and OpenCL status codes are plain
 * ints.  Code that plugs in its own stream factory includes
 * <clstream/stream.h> as well.
 *
 * \par Conventions
 *   - Every function that can fail returns an int: 0 (#CLS_OK) on success,
 *     a negative CLS_E* code (#cls_errno) on error.  cls_strerror() and
 *     cls_err_name() describe a code; cls_last_cl_status() and
 *     cls_last_error_detail() give the OpenCL status and the text (build
 *     log, device list...) behind the last error on the calling thread.
 *     Each such call clears that text on entry, so after a success it is
 *     empty.
 *   - Buffers are handles carrying a generation: a freed, stale or foreign
 *     handle is detected and rejected, never dereferenced.
 *   - Every buffer carries its failure record.  A failed launch taints what
 *     it was to write; a launch reading tainted input is skipped and passes
 *     the failure on; a read of tainted data fails with #CLS_ETAINTED and a
 *     report naming the root cause and the chain of skipped launches,
 *     across streams.
 *   - A NULL context, or a NULL pointer where an output or input is
 *     required, is #CLS_EINVAL unless a function says otherwise.
 *
 * \par Threading
 * One context may be used from several threads at once; every call on a
 * context is serialised by the context's lock.  The error state
 * (cls_last_cl_status(), cls_last_error_detail()) is per thread.  Reports
 * are owned by the caller and are independent of the context they came
 * from; one report is used by one thread at a time.  Functions that take
 * no context (errors, devices, drivers) are safe from any thread.
 *
 * \par Ownership
 * The caller owns what a create or build call returns (cls_context_destroy(),
 * cls_program_release(), cls_free(), cls_report_free()); every string a
 * function returns is owned by the library (or the report it came from)
 * and must not be freed.
 *
 * The environment variables clstream reads are listed in \ref cls_env.
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
/** Marks a public function: exported from the shared library (empty for
 * its users). */
#define CLS_API
#endif

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/** The error table, as an X-macro: XX(NAME, value, message) for each
 * CLS_E* code.  It generates cls_strerror() and cls_err_name() inside the
 * library (and must match #cls_errno, which the library checks at build
 * time); a program may use it to build its own tables. */
#define CLS_ERRNO_MAP(XX)                                                     \
  XX(EINVAL, -1, "invalid argument")                                          \
  XX(ENOMEM, -2, "out of host memory")                                        \
  XX(ENODEV, -3, "no OpenCL device matches the selection")                    \
  XX(ECL, -4, "an OpenCL call failed")                                        \
  XX(ESTALE, -5, "stale or freed buffer handle, or destroyed context")        \
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
  XX(EDRIVER, -21, "unknown scheduler driver, help asked for, or a driver "   \
                   "broke its contract")                                      \
  XX(ENOSYS, -22, "not supported by this platform or driver")                 \
  XX(EVERSION, -23, "unsupported ops struct version")                         \
  XX(EACCESS, -24, "declared access does not match the kernel's signature")   \
  XX(EGUARD, -25, "guard mode: a kernel wrote outside its buffer or left "     \
                  "declared output unwritten")                                \
  XX(ETIMEDOUT, -26, "a command did not finish within CLS_SYNC_TIMEOUT")      \
  XX(ESTALEGEN, -27, "stale generation: the request names a generation "     \
                     "older than the stream's")                             \
  XX(EMPI, -28, "an MPI call failed")

/** The codes every function returns: #CLS_OK or a negative CLS_E* code.
 * The values are fixed (part of the ABI); their messages are those of
 * #CLS_ERRNO_MAP. */
enum cls_errno {
  CLS_OK = 0,          /**< success */
  CLS_EINVAL = -1,     /**< invalid argument (NULL, zero size, bad value) */
  CLS_ENOMEM = -2,     /**< out of host memory */
  CLS_ENODEV = -3,     /**< no OpenCL device matches the selection */
  CLS_ECL = -4,        /**< an OpenCL call failed (cls_last_cl_status() tells which status) */
  CLS_ESTALE = -5,     /**< stale or freed buffer handle (or a released program, or a destroyed context: cls_context_destroy()) */
  CLS_EFOREIGN = -6,   /**< handle (or program) belongs to another context */
  CLS_ENULL = -7,      /**< handle was never allocated (#CLS_BUFFER_NULL) */
  CLS_ERANGE = -8,     /**< offset, size or index out of range */
  CLS_ETOOBIG = -9,    /**< size exceeds the device's maximum allocation (or, for a launch, its local memory) */
  CLS_EBUILD = -10,    /**< program build failed (the log is in cls_last_error_detail()) */
  CLS_ENOKERNEL = -11, /**< no kernel of that name in the program */
  CLS_EARGCOUNT = -12, /**< wrong number of kernel arguments */
  CLS_EARGKIND = -13,  /**< kernel argument kind does not match the kernel */
  CLS_EWORKSIZE = -14, /**< invalid global or local work size */
  CLS_ESTREAM = -15,   /**< stream id not in 0 .. #CLS_MAX_STREAMS-1 */
  CLS_ELAUNCH = -16,   /**< enqueue of a launch failed; the outputs carry the failure */
  CLS_ESKIPPED = -17,  /**< skipped: an input carries a failure, which the outputs now carry */
  CLS_ETAINTED = -18,  /**< read of data that carries a failure (a report says which) */
  CLS_EALLOC = -19,    /**< device allocation failed */
  CLS_ECONFIG = -20,   /**< malformed configuration string (the text is in the detail) */
  CLS_EDRIVER = -21,   /**< unknown scheduler driver, CLS_SCHEDULER=help asked for, or a driver broke its contract (<clstream/driver.h>; the detail names it) */
  CLS_ENOSYS = -22,    /**< not supported by this platform or driver */
  CLS_EVERSION = -23,  /**< unsupported version of an options, info or ops struct */
  CLS_EACCESS = -24,   /**< declared access does not match the kernel's signature (F11) */
  CLS_EGUARD = -25,    /**< guard mode: a kernel wrote outside its buffer, or left a CLS_OUT buffer partly unwritten (docs/guard.md) */
  CLS_ETIMEDOUT = -26, /**< a wait ran past CLS_SYNC_TIMEOUT; the command it names carries the failure */
  CLS_ESTALEGEN = -27, /**< a request named a stream generation older than the stream's: it was relocated since (cls_stream_relocate()) */
  CLS_EMPI = -28,      /**< an MPI call failed (libclstream-mpi, <clstream/mpi.h>); the MPI error string is in the detail, and the buffer a receive was to write carries the failure */
  CLS__ERR_LAST = -29
};

/** Message of a CLS_E* code ("invalid argument"; "success" for #CLS_OK);
 * "unknown error" for any
 * other value.  Never NULL; a static string.  Thread-safe. */
CLS_API const char *cls_strerror(int err);
/** Symbolic name of a CLS_E* code ("CLS_EINVAL"); "UNKNOWN" for any other
 * value.  Never NULL; a static string.  Thread-safe. */
CLS_API const char *cls_err_name(int err);
/** Symbolic name of an OpenCL status ("CL_OUT_OF_RESOURCES").  Never NULL;
 * a static string.  Thread-safe. */
CLS_API const char *cls_cl_status_name(int cl_status);
/** The OpenCL status behind the last error returned on this thread (0 when
 * the error did not come from OpenCL).  Per thread; never fails. */
CLS_API int cls_last_cl_status(void);
/** Human-readable detail of the last error on this thread: the build log of
 * a failed build, the list of devices when a selection matched nothing, the
 * read and its first root cause for #CLS_ETAINTED, the program's kernels for
 * #CLS_ENOKERNEL, the quoted text for #CLS_ECONFIG...  Every call that can
 * return a CLS_E* code clears it on entry and sets it when it fails; for
 * #CLS_ESKIPPED it says what was skipped (kernel, stream, position), the
 * argument whose input carries the failure ("argument 3 ('dst')") and
 * the failure (its root, as a read names it), formatted
 * only when this call asks for it (a skip stays cheap, F10).  The other
 * calls (strings, counts, cls_last_cl_status(), cls_context_destroy())
 * leave it as it is.
 * \return the text, "" when there is none; owned by the library, valid
 * until the next clstream call on this thread.  Per thread. */
CLS_API const char *cls_last_error_detail(void);

/** The library's version, "0.1.0" (the package version it was built as).
 * A static string.  Thread-safe. */
CLS_API const char *cls_version_string(void);

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/** Device types, as in #cls_device_info.type. */
enum cls_device_type {
  CLS_DEVICE_CPU = 1,         /**< CL_DEVICE_TYPE_CPU */
  CLS_DEVICE_GPU = 2,         /**< CL_DEVICE_TYPE_GPU */
  CLS_DEVICE_ACCELERATOR = 4, /**< CL_DEVICE_TYPE_ACCELERATOR */
  CLS_DEVICE_OTHER = 8        /**< anything else (custom, default) */
};

/** One OpenCL device as clstream sees it: filled by cls_device_list(),
 * cls_device_select() and cls_context_device().  Plain data, owned by the
 * caller; strings are cut to fit and always terminated. */
struct cls_device_info {
  int platform_index;             /**< the platform's index in the loader's order */
  int device_index;               /**< the device's index within its platform */
  int type;                       /**< enum cls_device_type */
  char platform_name[128];        /**< CL_PLATFORM_NAME */
  char platform_vendor[128];      /**< CL_PLATFORM_VENDOR */
  char platform_version[128];     /**< CL_PLATFORM_VERSION */
  char device_name[128];          /**< CL_DEVICE_NAME */
  char device_version[128];       /**< "OpenCL 3.0 ..." (CL_DEVICE_VERSION) */
  char driver_version[64];        /**< CL_DRIVER_VERSION */
  int cl_version;                 /**< device version: 120, 200, 300 ... */
  unsigned compute_units;         /**< CL_DEVICE_MAX_COMPUTE_UNITS */
  unsigned long long global_mem_size; /**< bytes (CL_DEVICE_GLOBAL_MEM_SIZE) */
  unsigned long long max_alloc_size;  /**< bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE) */
  unsigned long long local_mem_size;  /**< bytes (CL_DEVICE_LOCAL_MEM_SIZE) */
  size_t max_work_group_size;     /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
  size_t max_work_item_sizes[3];  /**< CL_DEVICE_MAX_WORK_ITEM_SIZES, first three */
  unsigned base_addr_align;       /**< bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN / 8) */
};

/** Every device of every platform, in platform order.  Fills up to `cap`
 * entries of `out` (which may be NULL when cap is 0) and stores the total in
 * *count (ask with cap 0 first, then for every entry).  Thread-safe.
 * \return #CLS_OK (also when there is no platform: *count is 0);
 * #CLS_EINVAL when count is NULL, or out is NULL with cap > 0;
 * #CLS_ECL when clGetPlatformIDs fails other than with "no platform". */
CLS_API int cls_device_list(struct cls_device_info *out, size_t cap,
                            size_t *count);
/** The device a selection string picks, with the rules of CLS_DEVICE:
 * - NULL or "": the first GPU, else the first device;
 * - indices, "P:D": platform P, device D (from 0, digits only); any text
 *   with a ':' is read so, but "NAME:D" (NAME starting with a letter):
 *   device D of the first platform NAME is part of ("pocl:1");
 * - the word "all", or a list "ITEM,ITEM": several devices of one
 *   platform for one context (docs/devices.md); this call answers the
 *   first of them;
 * - a type, "cpu", "gpu" or "accelerator": the first device of that type;
 * - anything else: a case-insensitive substring of the platform name,
 *   vendor or version, or of the device name ("pocl", "llvmpipe",
 *   "rusticl").
 *
 * No whitespace anywhere.  Thread-safe; *out is the caller's.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL out;
 * #CLS_ECONFIG for malformed text ("0: 0", "+0:0", an index past INT_MAX),
 * the text quoted in cls_last_error_detail();
 * #CLS_ENODEV when nothing matches, and the detail then lists the devices
 * that exist; #CLS_ECL when OpenCL fails to list the platforms. */
CLS_API int cls_device_select(const char *spec, struct cls_device_info *out);

/* ------------------------------------------------------------------ */
/* Contexts and streams                                                */
/* ------------------------------------------------------------------ */

/** A context: one OpenCL context on one device, with its streams, buffers,
 * programs and failure table.  Opaque; made by cls_context_create(),
 * freed by cls_context_destroy(). */
typedef struct cls_context cls_context;
struct cls_stream_factory; /* <clstream/stream.h> */
struct cls_driver_ops;    /* <clstream/driver.h> */

/** Streams are small integers, 0 .. CLS_MAX_STREAMS-1, created lazily on
 * first use. */
#define CLS_MAX_STREAMS 64
/** The most devices one context spans (CLS_DEVICE=all takes the first
 * this many of its platform). */
#define CLS_MAX_DEVICES 8

/** The version of struct cls_context_options this header describes (3:
 * driver; 4: placement, relocate; 5: precise, event_every; 6: strict;
 * 7: recover). */
#define CLS_CONTEXT_OPTIONS_VERSION 7
/** Options of cls_context_create(); zero-initialise, then set version.
 * The strings are read during the call only. */
struct cls_context_options {
  unsigned version;             /**< CLS_CONTEXT_OPTIONS_VERSION */
  /** Device selection string (see cls_device_select()); NULL: $CLS_DEVICE,
   * then the default. */
  const char *device;
  /** Driver name and parameters (CLS_SCHEDULER's grammar); NULL:
   * $CLS_SCHEDULER, then the configure-time default. */
  const char *scheduler;
  /** Fault injection spec (grammar in docs/testing.md); NULL:
   * $CLS_FAULT, then none.  For all three strings, "" is the same as NULL
   * and malformed text makes creation fail with #CLS_ECONFIG (rules in
   * docs/design.md, "Configuration strings"). */
  const char *fault;
  /** Stream factory; NULL: the OpenCL in-order queue factory
   * (cls_opencl_stream_factory()).  The factory and its data must outlive
   * the context. */
  const struct cls_stream_factory *factory;
  void *factory_data;           /**< passed to the factory's create() */
  /** Size of the cl_mem pages buffers are carved from; 0: 64 MiB, or 1/32
   * of the device's global memory when that is less (oclgrind: 4 MiB);
   * either is capped by the device's maximum allocation. */
  size_t page_size;
  /** Version 2 on.  Guard mode (docs/guard.md), a device-memory checker:
   * 1 on, -1 off, 0: $CLS_GUARD ("0" or "1"), then off. */
  int guard;
  /** Version 2 on.  Deadline for syncs, blocking transfers and
   * cls_context_destroy() (docs/design.md, "Waiting with a deadline"), in
   * seconds: > 0 that; 0: $CLS_SYNC_TIMEOUT, then none; < 0 none. */
  double sync_timeout;
  /** Version 2 on.  Timeline trace: the path of a Chrome trace-event JSON
   * file to write (Perfetto, chrome://tracing; docs/trace.md).  NULL:
   * $CLS_TRACE, then none; "" is the same as NULL.  A file that cannot be
   * created, or a path that is not a regular file (a FIFO, a device, a link),
   * makes creation fail with #CLS_EINVAL, the path and the reason in
   * cls_last_error_detail(); a failed creation removes only a file it
   * created itself. */
  const char *trace;
  /** Version 2 on.  Directory of the persistent program cache
   * (docs/cache.md); NULL or "": $CLS_CACHE_DIR, then
   * $XDG_CACHE_HOME/clstream, then ~/.cache/clstream.  CLS_CACHE=off turns
   * the cache off whatever this says. */
  const char *cache_dir;
  /** Version 3 on.  The driver itself (<clstream/driver.h>,
   * docs/drivers.md), registered or not; NULL: chosen by name as
   * `scheduler` says.  When set, $CLS_SCHEDULER is not read, and
   * `scheduler` may only give its parameters, as "NAME:PARAMS" with NAME
   * the driver's name.  The struct must outlive the context. */
  const struct cls_driver_ops *driver;
  /** Version 4 on.  Where streams are placed in a context of several
   * devices (docs/devices.md): "spread" (stream i on device i mod N, the
   * default with several devices) or "first" (all on device 0, the
   * default with one).  NULL or "": $CLS_PLACEMENT, then the default. */
  const char *placement;
  /** Version 4 on.  What happens when a stream's queue is lost (the device
   * says so, or CLS_FAULT's "lost:"; docs/devices.md): "off" (the default:
   * its commands fail like any other), "same" (the stream moves to a fresh
   * queue on its device) or "other" (to a fresh queue on the next device).
   * NULL or "": $CLS_RELOCATE, then "off". */
  const char *relocate;
  /** Version 5 on.  Attribution of failures found after the enqueue (F8a,
   * docs/design.md): 1 exact (an OpenCL event per command, every failure
   * pinned on its command), -1 ranged where the device allows it, 0:
   * $CLS_PRECISE ("1" exact, "0" ranged where allowed), then ranged where
   * allowed.  Ranged is allowed where the device fails the rest of an
   * in-order queue behind a failed command (quirk queue_poisoned);
   * elsewhere attribution is exact whatever this says. */
  int precise;
  /** Version 5 on.  Ranged attribution: the most commands a stream runs
   * without an OpenCL event (1 to 65536); 0: $CLS_EVENT_EVERY, then 64. */
  unsigned event_every;
  /** Version 6 on.  F11, a #CLS_IN binding of a `__global` pointer the
   * kernel's signature says it may write (not `const`): 1 strict (the
   * launch is refused with #CLS_EACCESS, as before F11 was relaxed), -1
   * not strict (the declaration stands: ordered as a read, the log says
   * so once per kernel and argument, guard mode checks it), 0:
   * $CLS_STRICT ("0" or "1"), then not strict.  Neither applies where
   * another argument of the launch declares a write of the same buffer
   * (CLS_OUT(b) and CLS_IN(b): one buffer as destination and source). */
  int strict;
  /** Version 7 on.  Recovery from a lost queue, with relocation on
   * (docs/devices.md, "Recovery"): "on" (the default where relocation is
   * on: the command the lost queue took is run again on the fresh queue,
   * at most 2 times), "off" (the loss is reported, as without it), or a
   * bound N from 1 to 1000 (at most N times).  NULL or "": $CLS_RECOVER,
   * then "on".  Without relocation nothing is run again. */
  const char *recover;
};

/** Creates a context on one device, or on several of one platform
 * (a device list or "all": docs/devices.md).  opts may be NULL (all defaults).  The
 * caller owns *out and frees it with cls_context_destroy().  Thread-safe
 * (contexts are independent).  On failure nothing is left behind and *out
 * is NULL.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL out;
 * #CLS_EVERSION for an unknown opts->version, or a factory that lacks
 * required members;
 * #CLS_ECONFIG for malformed $CLS_LOG, $CLS_GUARD, $CLS_SYNC_TIMEOUT, fault
 * or scheduler parameter text;
 * #CLS_EDRIVER for an unknown driver name, or "help" (the drivers are
 * then printed on stderr);
 * #CLS_ENODEV when the selection matches no device (#CLS_ECONFIG when it
 * is malformed);
 * #CLS_ECL when OpenCL fails (clCreateContext, listing devices);
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_context_create(cls_context **out,
                               const struct cls_context_options *opts);
/** Waits for all work, then releases everything the context owns.  Buffers,
 * programs and kernels of the context become invalid; reports stay valid.
 * NULL is accepted.  No other thread may use the context during or after
 * the call.  Leaves cls_last_error_detail() as it is.  With a deadline
 * (#cls_context_options.sync_timeout, $CLS_SYNC_TIMEOUT) each stream is
 * waited for at most that long; when one still runs a command then, the
 * call logs it and returns without releasing the context, which stays in
 * a process-wide list (its queues still use it).
 *
 * Using a destroyed context is a bug, and is not always caught.  What is:
 * a call made afterwards with the pointer of one of the last 4 contexts
 * the process destroyed (their memory is kept for that, at most 60 KB
 * each, and their lock stays held) returns #CLS_ESTALE, the detail saying
 * the context was destroyed: every call that takes the context lock, the
 * calls that read what is fixed at creation (cls_context_device(),
 * cls_context_quirks(), cls_context_devices(),
 * cls_context_attribution()), and cls_context_destroy() again, which
 * then does nothing but set that error.  What is not: a context destroyed
 * before those 4 (its memory may be reused: undefined behaviour), a call
 * that runs while the context is being destroyed (also undefined), and
 * the calls on a kernel, program or buffer handle's other objects
 * (cls_kernel_info(), cls_kernel_name()), whose memory is freed with the
 * context. */
CLS_API void cls_context_destroy(cls_context *ctx);
/** The context's device into *out (the caller's).  Thread-safe.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument. */
CLS_API int cls_context_device(cls_context *ctx, struct cls_device_info *out);
/** The context's devices, in the order of the selection (device index 0
 * first: the one cls_context_device() names).  Fills up to `cap` entries
 * of `out` (NULL when cap is 0) and stores their number in *count.
 * Thread-safe.
 * \return #CLS_OK; #CLS_EINVAL for a NULL ctx or count, or out NULL with
 * cap > 0. */
CLS_API int cls_context_devices(cls_context *ctx, struct cls_device_info *out, size_t cap,
                                size_t *count);
/** Name of the driver the context runs on ("event", "scheduler"); a static
 * string, "" for a NULL context.  Thread-safe. */
CLS_API const char *cls_context_driver(cls_context *ctx);
/** The version of struct cls_cache_info this header describes. */
#define CLS_CACHE_INFO_VERSION 1
/** The persistent program cache as a context uses it (docs/cache.md):
 * program binaries kept on disk, keyed by platform, device, driver
 * version, clstream version, build options and source. */
struct cls_cache_info {
  unsigned version;              /**< set by the caller: #CLS_CACHE_INFO_VERSION */
  int enabled;                   /**< 0: CLS_CACHE=off, or no usable directory */
  const char *dir;               /**< "" when not enabled; owned by the context */
  unsigned long long max_bytes;  /**< the size cap (CLS_CACHE_MAX) */
  unsigned long long entries;    /**< entry files in the directory now */
  unsigned long long bytes;      /**< their total size */
  unsigned long long hits;       /**< builds of this context served from disk */
  unsigned long long misses;     /**< builds of this context compiled from source */
  unsigned long long stores;     /**< entries this context wrote */
};
/** The context's persistent cache, into *out (set out->version first).
 * Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_EVERSION for an
 * unknown out->version. */
CLS_API int cls_context_cache(cls_context *ctx, struct cls_cache_info *out);

/** How failures found after the enqueue are attributed (F8a). */
enum cls_attribution {
  /** Every command has its OpenCL event: a failure is pinned on the
   * command that failed. */
  CLS_ATTRIBUTION_EXACT = 0,
  /** Events only where something needs one (a cross-stream wait, a read,
   * a sync) and at most every `event_every` commands: a failure is known
   * to lie in a range of commands, and every write of that range takes
   * it. */
  CLS_ATTRIBUTION_RANGED = 1
};
/** The attribution mode in force into *mode (enum cls_attribution), with,
 * when `why` is not NULL, a static sentence saying why ("CLS_PRECISE=1",
 * "the device does not fail the rest of a queue behind a failed command",
 * ...), and when `every` is not NULL the most commands run without an
 * event.  Fixed when the context is created: takes no lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or mode. */
CLS_API int cls_context_attribution(cls_context *ctx, int *mode, const char **why,
                                    unsigned *every);
/** The number of drivers: those built into this library (configure
 * --enable-drivers), then those registered (cls_driver_register() in
 * <clstream/driver.h>).  Thread-safe. */
CLS_API size_t cls_driver_count(void);
/** Name and one-line description of driver `i` (0 .. cls_driver_count()-1)
 * into *name and *description (static strings; either pointer may be
 * NULL).  Thread-safe.
 * \return #CLS_OK; #CLS_ERANGE when i is past the last driver. */
CLS_API int cls_driver_info(size_t i, const char **name, const char **description);
/** The default driver's name (configure --with-scheduler; $CLS_SCHEDULER
 * overrides it for a context).  A static string.  Thread-safe. */
CLS_API const char *cls_default_driver(void);

/** Per-stream counters; they only grow (until cls_stats_reset()).  A command
 * "accepted" was handed to the driver: enqueued at once (event driver) or
 * put on the stream's task list (scheduler driver; under its sequential
 * strategy with a queue per stream, a command that waits on another
 * stream is enqueued at once). */
struct cls_stream_stats {
  uint64_t enqueues;     /**< commands accepted (not skipped, enqueue not failed) */
  uint64_t launches;     /**< kernel launches accepted */
  uint64_t skips;        /**< launches and copies skipped on tainted input */
  uint64_t waits;        /**< cross-stream waits added to this stream */
  uint64_t flushes;      /**< flushes of this stream's backend queue */
  uint64_t markers;      /**< marker events taken on this stream */
  uint64_t submissions;  /**< hand-overs to the backend: one per command for
                              the event driver, one per batch for the
                              scheduler driver (and one per command it
                              enqueues at once) */
  uint64_t failures;     /**< failures minted on this stream */
  uint64_t migrations;   /**< commands that used a buffer last used on another
                              device of the context (docs/devices.md) */
  uint64_t relocations;  /**< times the stream moved to a fresh backend queue */
  uint64_t replays;      /**< commands a lost queue took, run again on the
                              fresh one (recovery, docs/devices.md) */
};
/** The counters of `stream` into *out (zeros for a stream not used yet).
 * Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ESTREAM for a
 * stream id out of range. */
CLS_API int cls_stream_stats(cls_context *ctx, int stream,
                             struct cls_stream_stats *out);
/** Sets every stream's counters to zero.  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context. */
CLS_API int cls_stats_reset(cls_context *ctx);
/** How many OpenCL events `stream`'s factory asked the runtime for since
 * the stream was created (commands' events and markers) into *out: about
 * one per command with exact attribution, far fewer with ranged (F8a;
 * cls_context_attribution()).  Streams that share a backend queue
 * (scheduler:interleave) each give that queue's count; a relocated stream
 * counts from its new queue.  0 for a factory that does not count
 * (cls_stream_factory.events) or a stream not created yet.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ESTREAM for a
 * stream id out of range. */
CLS_API int cls_stream_events(cls_context *ctx, int stream, uint64_t *out);

/** Places `stream` on device `device` (an index into cls_context_devices())
 * before its first command, instead of the placement policy
 * (#cls_context_options.placement).  A stream used only by allocations so
 * far gets a fresh queue on that device; a stream that has had a command,
 * or was relocated, keeps its device: move it with cls_stream_relocate().
 * Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context, or a stream that has
 * had a command already; #CLS_ESTREAM for a stream id out of range;
 * #CLS_ERANGE for a device index the context does not have; #CLS_ECL when
 * the stream's backend cannot be made on that device. */
CLS_API int cls_stream_place(cls_context *ctx, int stream, int device);
/** The device index `stream` is placed on into *device: where it runs now,
 * or, for a stream not used yet, where it will be created.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ESTREAM for a
 * stream id out of range. */
CLS_API int cls_stream_device(cls_context *ctx, int stream, int *device);
/** The generation of `stream` into *generation: 0 until the stream is
 * first relocated, then one more per relocation.  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ESTREAM for a
 * stream id out of range. */
CLS_API int cls_stream_generation(cls_context *ctx, int stream, uint64_t *generation);
/** Moves `stream` to a fresh backend queue on device `device` (the same
 * one or another), as a queue whose lease ran out is replaced
 * (docs/devices.md).  `generation` is the generation the caller last
 * read (cls_stream_generation()): a request naming an older one comes
 * from before a relocation it did not see, and is refused.  The work of
 * the retired queue is waited for first (with the deadline, when one is
 * set): what completed keeps its bytes, what failed carries its failure
 * as usual (F8).  Nothing of the retired queue is used afterwards: no
 * command waits on its events.  The stream's generation goes up by one
 * and its counter `relocations` too; buffers stay valid.  A stream not
 * used yet is created on `device`.  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context, or a generation newer
 * than the stream's; #CLS_ESTALEGEN for an older one; #CLS_ESTREAM for
 * a stream id out of range; #CLS_ERANGE for a device index the context
 * does not have; #CLS_ETIMEDOUT or #CLS_ECL when waiting for the retired
 * queue fails (the stream then stays where it was); #CLS_ECL when no
 * queue can be made on `device` (the stream then takes a fresh queue on
 * its old device, and keeps its generation). */
CLS_API int cls_stream_relocate(cls_context *ctx, int stream, int device,
                                uint64_t generation);

/** A failure report: every distinct failure a read met, with its skip
 * chain, and the bad handles it named.  Owned by the caller (free it with
 * cls_report_free()); independent of its context, which may be destroyed
 * first. */
typedef struct cls_report cls_report;

/** Waits until everything submitted to `stream` (and what it waited on) has
 * completed.  Completes the stream's non-blocking downloads: when one of
 * them read data that turned out to carry a failure, returns #CLS_ETAINTED
 * and, when `report` is not NULL, a report the caller frees (*report is
 * NULL otherwise).  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context; #CLS_ESTREAM for a
 * stream id out of range; #CLS_ETAINTED as above; #CLS_ENOMEM when the
 * report cannot be made; #CLS_ECL when polling the stream's events fails;
 * #CLS_ETIMEDOUT when a deadline is set (#cls_context_options.sync_timeout,
 * $CLS_SYNC_TIMEOUT) and the stream's work outlasts it: the detail names
 * the command still running, whose outputs now carry the failure. */
CLS_API int cls_stream_sync(cls_context *ctx, int stream, cls_report **report);
/** cls_stream_sync() on every stream.
 * \return as cls_stream_sync(), without #CLS_ESTREAM. */
CLS_API int cls_sync(cls_context *ctx, cls_report **report);

/* ------------------------------------------------------------------ */
/* Buffers                                                             */
/* ------------------------------------------------------------------ */

/** A buffer handle: opaque bits naming a slot, its generation, its stream
 * and its context.  The zero handle (#CLS_BUFFER_NULL) is never allocated.
 * A plain value: copying it copies the name, not the buffer. */
typedef struct cls_buffer {
  uint64_t bits; /**< opaque */
} cls_buffer;
#ifdef __cplusplus
#define CLS_BUFFER_NULL (cls_buffer())
#else
/** The handle no allocation returns (all bits zero); passing it is
 * #CLS_ENULL. */
#define CLS_BUFFER_NULL ((cls_buffer){0})
#endif

/** Allocates `size` bytes from `stream`'s memory pool (the stream is
 * created on first use).  Nothing has written a fresh buffer, so until
 * something does (upload, fill, copy, launch) it carries the context's
 * "never written" failure: a read fails instead of returning stale bytes,
 * and a launch reading it is skipped.  Failures are tracked per buffer:
 * any write clears the whole buffer.  The caller frees it with cls_free()
 * (cls_context_destroy() frees what is left).  Takes the context lock.
 * \return #CLS_OK, *out the handle; on error *out is #CLS_BUFFER_NULL and:
 * #CLS_EINVAL for a NULL context or out, or size 0;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ETOOBIG when size exceeds the device's maximum allocation;
 * #CLS_EALLOC when the device allocation fails (or too many buffers live
 * on the stream);
 * #CLS_ECL when the stream's backend cannot be created, or (guard mode)
 * writing the buffer's guards fails;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_alloc(cls_context *ctx, int stream, size_t size,
                      cls_buffer *out);
/** Frees a buffer; the handle becomes stale.  Its memory is reused only
 * after every queued use of it, on any stream, has completed.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context; #CLS_ESTALE (freed
 * already), #CLS_EFOREIGN (another context's) or #CLS_ENULL
 * (#CLS_BUFFER_NULL) for a bad handle. */
CLS_API int cls_free(cls_context *ctx, cls_buffer buf);
/** The size `buf` was allocated with, into *size.  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or size; #CLS_ESTALE,
 * #CLS_EFOREIGN or #CLS_ENULL for a bad handle. */
CLS_API int cls_buffer_size(cls_context *ctx, cls_buffer buf, size_t *size);

/** Host to device: `size` bytes of `src` into `dst` at `offset`, ordered on
 * `stream`.  `src` may be reused as soon as cls_upload() returns.  Takes the
 * context lock.  A refused upload (every code below but a bad `dst`) also
 * leaves a failure on `dst` (rule F12), so a later read fails.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context or src, or size 0;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad dst;
 * #CLS_ERANGE when offset + size passes the end of dst;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ECL when the enqueue (or the stream's creation) fails: dst carries
 * the failure;
 * #CLS_ETIMEDOUT (a deadline is set) when what the upload waits for
 * outlasts it: nothing was enqueued;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_upload(cls_context *ctx, int stream, cls_buffer dst,
                       size_t offset, const void *src, size_t size);
/** cls_upload() that does not wait for the copy: `src` must stay valid and
 * unchanged until `stream` is synced (cls_stream_sync(), cls_sync()), as
 * OpenCL itself requires; recovery (docs/devices.md) may read it again
 * until then, to run an upload a lost queue took on the fresh one.
 * \return as cls_upload(). */
CLS_API int cls_upload_async(cls_context *ctx, int stream, cls_buffer dst,
                             size_t offset, const void *src, size_t size);
/** Device to host, blocking: `size` bytes of `src` at `offset` into `dst`.
 * When the buffer carries a failure (now, or found when the read
 * completes) returns #CLS_ETAINTED, and, when `report` is not NULL, a report
 * the caller frees with cls_report_free() (*report is NULL in every other
 * case); the bytes in `dst` are then unspecified.  Nothing is retried.
 * Takes the context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context or dst, or size 0;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad src;
 * #CLS_ERANGE when offset + size passes the end of src;
 * #CLS_ETAINTED as above, also in guard mode when the bytes read hold the
 * canary of a CLS_OUT launch that did not write them (docs/guard.md);
 * #CLS_ECL when the read itself (or the stream's creation) fails;
 * #CLS_ETIMEDOUT (a deadline is set) when what the read waits for
 * outlasts it: nothing was read;
 * #CLS_ENOMEM when host memory (for a report) runs out. */
CLS_API int cls_download(cls_context *ctx, int stream, cls_buffer src,
                         size_t offset, void *dst, size_t size,
                         cls_report **report);
/** Device to host, completed by cls_stream_sync() / cls_sync() on `stream`,
 * which report a failure found then; `dst` must stay valid until then (and
 * unread: recovery, docs/devices.md, may write it again until then, to run
 * a download a lost queue took on the fresh one).  A failure already known
 * returns #CLS_ETAINTED at once.
 * \return as cls_download() (no report: the sync gives it). */
CLS_API int cls_download_async(cls_context *ctx, int stream, cls_buffer src,
                               size_t offset, void *dst, size_t size);
/** Device to device: `size` bytes of `src` at `src_offset` into `dst` at
 * `dst_offset`, on `stream`.  A tainted source is not copied: the
 * destination takes the source's failure and the call returns
 * #CLS_ETAINTED.  A refused copy (every code below but a bad `dst`, a
 * tainted source and an enqueue failure) leaves a failure on `dst` (F12).
 * Takes the context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context, size 0, or overlapping ranges of one
 * buffer;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad src or dst;
 * #CLS_ERANGE when a range passes the end of its buffer;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ETAINTED as above;
 * #CLS_ECL when the enqueue (or the stream's creation) fails: dst carries
 * the failure;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_copy(cls_context *ctx, int stream, cls_buffer src,
                     size_t src_offset, cls_buffer dst, size_t dst_offset,
                     size_t size);
/** Fills `size` bytes at `offset` with a pattern of 1, 2, 4, ... 128 bytes;
 * offset and size must be multiples of the pattern size.  The pattern is
 * copied at the call.  A refused fill (every code below but a bad `dst`)
 * leaves a failure on `dst` (F12).  Takes the context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context or pattern, a pattern size that is not a
 * power of two up to 128, offset or size not multiples of it, or size 0;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad dst;
 * #CLS_ERANGE when offset + size passes the end of dst;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ECL when the enqueue (or the stream's creation) fails: dst carries
 * the failure;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_fill(cls_context *ctx, int stream, cls_buffer dst,
                     size_t offset, size_t size, const void *pattern,
                     size_t pattern_size);
/** The F5 question without a read: whether any of the `n` buffers carries
 * a failure, or a handle is stale or was never allocated.  Looks at
 * failures found so far (polls, does not wait).  When `report` is not
 * NULL and the answer is #CLS_ETAINTED, *report is a report the caller
 * frees, naming each failure once and each bad handle.  Takes the context
 * lock.
 * \return #CLS_OK when all are clean;
 * #CLS_EINVAL for a NULL context, or NULL bufs with n > 0;
 * #CLS_ETAINTED as above;
 * #CLS_ENOMEM when the report cannot be made;
 * #CLS_ECL when polling events fails. */
CLS_API int cls_check(cls_context *ctx, size_t n, const cls_buffer *bufs,
                      cls_report **report);

/* ------------------------------------------------------------------ */
/* Images                                                              */
/* ------------------------------------------------------------------ */

/** An image: a memory object the device reads and writes by pixel, with
 * a format (channel order and type) and a shape; what a kernel takes as
 * `image2d_t`, `image3d_t` or `image2d_array_t`.  An image is named by a
 * buffer handle: the same generation, stream, failure record and rules
 * F1-F12 as a buffer.  It binds to a launch as a buffer does (#CLS_IN,
 * #CLS_OUT, #CLS_INOUT, #CLS_ARG), cls_free() frees it (reused only once
 * its uses on every stream have completed), cls_check() checks it; the
 * byte calls (cls_upload(), cls_download(), cls_copy(), cls_fill(),
 * cls_buffer_size()) refuse it with #CLS_EINVAL, the region calls below
 * move its pixels.  An image owns its memory object (images are not
 * carved from pages); a freed one is kept for the next image of the same
 * shape and format on its stream. */
typedef cls_buffer cls_image;

/** The shape of an image (#cls_image_desc.type). */
enum cls_image_type {
  CLS_IMAGE_2D = 1,       /**< width x height: `image2d_t` */
  CLS_IMAGE_3D = 2,       /**< width x height x depth: `image3d_t` */
  CLS_IMAGE_2D_ARRAY = 3  /**< array_size layers of width x height:
                               `image2d_array_t` */
};

/** An image's format and shape.  `order` and `data_type` are OpenCL's
 * values (<CL/cl.h>): CL_R, CL_RG, CL_RGBA ... and CL_UNORM_INT8,
 * CL_FLOAT, CL_UNSIGNED_INT32 ...; which pairs a device takes is
 * cls_image_formats()'s answer. */
struct cls_image_desc {
  int type;              /**< enum cls_image_type; 0 means #CLS_IMAGE_2D */
  unsigned order;        /**< cl_channel_order */
  unsigned data_type;    /**< cl_channel_type */
  size_t width;          /**< pixels, >= 1 */
  size_t height;         /**< rows, >= 1 */
  size_t depth;          /**< 3D: slices, >= 1; else 0 or 1 */
  size_t array_size;     /**< 2D arrays: layers, >= 1; else 0 or 1 */
};

/** One image format a device supports (cls_image_formats()). */
struct cls_image_format {
  unsigned order;        /**< cl_channel_order */
  unsigned data_type;    /**< cl_channel_type */
  const char *order_name; /**< "CL_RGBA" (static) */
  const char *type_name;  /**< "CL_FLOAT" (static) */
  size_t pixel_size;      /**< bytes per pixel, 0 where clstream does not
                               know the pair */
};

/** The image formats the device of `stream` supports for images of
 * `type` read and written by kernels (CL_MEM_READ_WRITE; asked of the
 * device once, then cached): up to `cap` into `out` (NULL with cap 0),
 * the total into *count.  Takes the context lock.
 * \return #CLS_OK (*count 0 where the device has no image support);
 * #CLS_EINVAL for a NULL context or count, out NULL with cap > 0, or a
 * type that is not an enum cls_image_type; #CLS_ESTREAM for a stream id
 * out of range; #CLS_ECL when the device cannot be asked. */
CLS_API int cls_image_formats(cls_context *ctx, int stream, int type,
                              struct cls_image_format *out, size_t cap,
                              size_t *count);

/** Allocates an image on `stream` (created on first use), read and
 * written by kernels.  As a fresh buffer, it carries the "never written"
 * failure until something writes it (F1).  Checked before OpenCL sees
 * it: the device's image support, the format against the device's list,
 * and the shape against CL_DEVICE_IMAGE2D_MAX_WIDTH / _HEIGHT,
 * CL_DEVICE_IMAGE3D_MAX_WIDTH / _HEIGHT / _DEPTH and
 * CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, each refusal naming the format or the
 * limit.  Takes the context lock.
 * \return #CLS_OK, *out the handle; on error *out is #CLS_BUFFER_NULL and:
 * #CLS_EINVAL for a NULL context, desc or out, a type that is not an
 * enum cls_image_type, or a zero width, height, depth or array size;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ENOSYS when the device has no image support
 * (CL_DEVICE_IMAGE_SUPPORT) or lacks the format (the detail names it and
 * what the device has);
 * #CLS_ETOOBIG when a dimension exceeds the device's limit (named), or
 * the bytes exceed its maximum allocation;
 * #CLS_EALLOC when the device allocation fails;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_image_alloc(cls_context *ctx, int stream,
                            const struct cls_image_desc *desc, cls_image *out);
/** The description `img` was allocated with, into *desc (type, depth and
 * array_size as normalized: 2D images have depth and array_size 1), and
 * its pixel size in bytes into *pixel_size when not NULL.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or desc, or a buffer
 * that is not an image; #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad
 * handle. */
CLS_API int cls_image_info(cls_context *ctx, cls_image img,
                           struct cls_image_desc *desc, size_t *pixel_size);

/** A region of an image: pixels from `origin` (x, y, z) of `region`
 * (width, height, depth) pixels; z counts slices of a 3D image or layers
 * of a 2D array, 0 with depth 1 for a 2D image.  NULL origin: (0,0,0);
 * NULL region: the whole image from origin. */

/** Host to image: the pixels of region of `dst`, read from `src`, whose
 * rows are `row_pitch` bytes apart (0: width * pixel size) and slices
 * `slice_pitch` bytes apart (0: row pitch * height).  As for buffers,
 * any accepted write clears the image's failure (F4: per image, not per
 * pixel).  `src` may be reused when the call returns.  A refused upload (every code but a bad `dst`)
 * leaves its failure on `dst` (F12).  Takes the context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context or src, a handle that is not an image,
 * a zero extent, or a pitch smaller than the row (slice) it holds;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad dst;
 * #CLS_ERANGE when the region passes the image's edge (named);
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ECL when the enqueue fails: dst carries the failure;
 * #CLS_ENOSYS when the stream's factory has no image member;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_image_upload(cls_context *ctx, int stream, cls_image dst,
                             const size_t *origin, const size_t *region,
                             const void *src, size_t row_pitch,
                             size_t slice_pitch);
/** cls_image_upload() that does not wait: `src` must stay valid and
 * unchanged until `stream` is synced (recovery may read it again until
 * then, as for cls_upload_async()).  \return as cls_image_upload(). */
CLS_API int cls_image_upload_async(cls_context *ctx, int stream,
                                   cls_image dst, const size_t *origin,
                                   const size_t *region, const void *src,
                                   size_t row_pitch, size_t slice_pitch);
/** Image to host, blocking: the pixels of region of `src` into `dst`
 * (pitches as for cls_image_upload()).  An image that carries a failure
 * (never written, a failed or skipped writer, now or found when the read
 * completes) returns #CLS_ETAINTED and, when `report` is not NULL, the
 * report (F5); the bytes of `dst` are then unspecified.  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_ETAINTED as above; the codes of
 * cls_image_upload() for bad arguments (without the F12 record: a read
 * leaves none); #CLS_ECL when the read fails. */
CLS_API int cls_image_download(cls_context *ctx, int stream, cls_image src,
                               const size_t *origin, const size_t *region,
                               void *dst, size_t row_pitch,
                               size_t slice_pitch, cls_report **report);
/** Image to host, completed by cls_stream_sync() / cls_sync() on
 * `stream`, which report a failure found then; `dst` must stay valid
 * until then (recovery may write it again until then, as for
 * cls_download_async()).  \return as cls_image_download() (no report: the
 * sync gives it). */
CLS_API int cls_image_download_async(cls_context *ctx, int stream,
                                     cls_image src, const size_t *origin,
                                     const size_t *region, void *dst,
                                     size_t row_pitch, size_t slice_pitch);
/** Image to image on the device: region of `src` at `src_origin` into
 * `dst` at `dst_origin` (NULL origins: 0; NULL region: the rest of `src`
 * from src_origin).  The two must have the same format (channel order
 * and type); regions of one image must not overlap.  As cls_copy(): a
 * tainted source is not copied, the destination takes its failure and
 * the call returns #CLS_ETAINTED (F2); a refusal (every code but a bad
 * `dst`) leaves its record on `dst` (F12).  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context, a handle that is not
 * an image, formats that differ, a zero extent or overlapping regions;
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad handle; #CLS_ERANGE
 * when a region passes an image's edge; #CLS_ESTREAM; #CLS_ETAINTED as
 * above; #CLS_ECL when the enqueue fails: dst carries the failure. */
CLS_API int cls_image_copy(cls_context *ctx, int stream, cls_image src,
                           const size_t *src_origin, cls_image dst,
                           const size_t *dst_origin, const size_t *region);
/** Image to buffer: region of `src` into `dst` at byte `offset`, pixels
 * tightly packed (row after row, slice after slice).  Rules and codes as
 * cls_image_copy(), with #CLS_ERANGE when the bytes pass the end of
 * `dst`, and #CLS_EINVAL when `dst` is an image. */
CLS_API int cls_image_to_buffer(cls_context *ctx, int stream, cls_image src,
                                const size_t *origin, const size_t *region,
                                cls_buffer dst, size_t offset);
/** Buffer to image: tightly packed pixels of `src` from byte `offset`
 * into region of `dst`.  Rules and codes as cls_image_to_buffer(). */
CLS_API int cls_buffer_to_image(cls_context *ctx, int stream, cls_buffer src,
                                size_t offset, cls_image dst,
                                const size_t *origin, const size_t *region);
/** Fills region of `dst` with one colour: four floats for normalized and
 * float formats, four int32 for signed integer ones, four uint32 for
 * unsigned ones (16 bytes, copied at the call; channels the format lacks
 * are ignored).  A refusal leaves its record on `dst` (F12).  Takes the
 * context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or colour, a handle that
 * is not an image or a zero extent; #CLS_ESTALE, #CLS_EFOREIGN or
 * #CLS_ENULL for a bad dst; #CLS_ERANGE when the region passes the edge;
 * #CLS_ESTREAM; #CLS_ECL when the enqueue fails: dst carries the failure. */
CLS_API int cls_image_fill(cls_context *ctx, int stream, cls_image dst,
                           const void *colour, const size_t *origin,
                           const size_t *region);

/* ------------------------------------------------------------------ */
/* Programs, kernels and launches                                      */
/* ------------------------------------------------------------------ */

/** A built (or failed) program of a context; opaque, reference-counted,
 * kept by the context until cls_context_destroy(). */
typedef struct cls_program cls_program;
/** A kernel of a program; opaque, owned by its program's context (valid
 * until cls_context_destroy()). */
typedef struct cls_kernel cls_kernel;

/** Builds (or finds in the context's cache, keyed by device, source hash and
 * options, or loads from the persistent cache on disk: docs/cache.md) a
 * program from OpenCL C `source` with build `options` (NULL: none).  A
 * program whose source or options can include files (`#include`, `-include`)
 * is never taken from the disk cache: its key would not hold the
 * headers.  The caller holds a reference on *out and drops it with
 * cls_program_release().  On a build failure returns #CLS_EBUILD, the build
 * log is in cls_last_error_detail(), and *out is still set (release it as
 * usual) to a program that remembers the failure: kernels taken from it
 * launch as failed (#CLS_EBUILD), and their outputs carry the build failure,
 * with a build log excerpt, to whoever reads them.  A pipeline may stop at
 * the #CLS_EBUILD or go on and meet it in its reports.  Other errors leave
 * *out NULL.  Takes the context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL context, source or out, or an empty source;
 * #CLS_EBUILD as above;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_program_build(cls_context *ctx, const char *source,
                              const char *options, cls_program **out);
/** Drops the caller's reference; kernels taken from it stay valid until the
 * context is destroyed.  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_EFOREIGN for a
 * program of another context; #CLS_ESTALE when every reference was
 * released already. */
CLS_API int cls_program_release(cls_context *ctx, cls_program *prog);
/** Looks a kernel up by name.  The kernel belongs to the program (and its
 * context): nothing to free.  A kernel of a program that failed to build
 * is returned too, and launches as failed.  Each stream after the first
 * that launches it gets an OpenCL kernel object of its own at that first
 * launch, so that streams keep the arguments they set.  Takes the
 * context lock.
 * \return #CLS_OK;
 * #CLS_EINVAL for a NULL argument;
 * #CLS_EFOREIGN for a program of another context;
 * #CLS_ESTALE for a program whose every reference was released (the
 * kernels taken from it before stay valid);
 * #CLS_ENOKERNEL when the program has no kernel of that name (the detail
 * lists its kernels);
 * #CLS_ECL when OpenCL fails to create the kernel;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_kernel_get(cls_context *ctx, cls_program *prog,
                           const char *name, cls_kernel **out);
/** The kernel's name, owned by the kernel; "" for NULL or something that
 * is not a kernel.  No lock (a kernel does not change). */
CLS_API const char *cls_kernel_name(const cls_kernel *k);
/** The number of arguments the kernel takes, or #CLS_EINVAL for NULL or
 * something that is not a kernel.  No lock. */
CLS_API int cls_kernel_num_args(const cls_kernel *k);

/** How a launch uses a buffer argument (#cls_arg.access). */
enum cls_access {
  CLS_READ = 1,       /**< read only: in the read set */
  CLS_WRITE = 2,      /**< written only: in the write set */
  CLS_READ_WRITE = 3, /**< both */
  /** access inferred from the kernel signature (const global pointer: read,
   * else read-write; an image: its access qualifier, __read_only a read,
   * __write_only a write, __read_write both); see docs/design.md F11 */
  CLS_ACCESS_INFER = 4
};
/** What a kernel argument is (#cls_arg.kind). */
enum cls_arg_kind {
  CLS_ARG_BUFFER = 1, /**< a buffer handle (a __global or __constant pointer),
                           or an image's (an image2d_t, image3d_t,
                           image2d_array_t argument) */
  CLS_ARG_SCALAR = 2, /**< a value copied at the call */
  CLS_ARG_LOCAL = 3,  /**< a size of __local memory */
  CLS_ARG_NULL = 4    /**< a NULL __global or __constant pointer (#CLS_NULL_PTR) */
};

/** The type of a typed scalar argument (F11a, #CLS_TYPED, #CLS_SCALAR_AS):
 * an OpenCL C built-in type, as a base and a vector width
 * (#CLS_TYPE_VEC).  Where the kernel's signature is known, a launch
 * refuses a typed scalar whose type differs from the argument's, naming
 * both (#CLS_EARGKIND).  Signedness alone is not a difference (an `int`
 * given for a `uint` has the bits C's conversion gives), nor is a width of
 * 3 against 4 (stored alike).  An untyped scalar (#CLS_SCALAR) is checked
 * by size only, as raw OpenCL does. */
enum cls_type {
  CLS_TYPE_ANY = 0,     /**< untyped: checked by size only */
  CLS_TYPE_CHAR = 1,    /**< char (8 bits) */
  CLS_TYPE_UCHAR = 2,   /**< uchar */
  CLS_TYPE_SHORT = 3,   /**< short (16 bits) */
  CLS_TYPE_USHORT = 4,  /**< ushort */
  CLS_TYPE_INT = 5,     /**< int (32 bits) */
  CLS_TYPE_UINT = 6,    /**< uint */
  CLS_TYPE_LONG = 7,    /**< long (64 bits) */
  CLS_TYPE_ULONG = 8,   /**< ulong */
  CLS_TYPE_HALF = 9,    /**< half (16 bits; where the device supports it) */
  CLS_TYPE_FLOAT = 10,  /**< float */
  CLS_TYPE_DOUBLE = 11  /**< double (where the device supports it) */
};
/** The vector type of `n` (2, 3, 4, 8 or 16) elements of base `t`:
 * CLS_TYPE_VEC(CLS_TYPE_FLOAT, 4) is `float4`. */
#define CLS_TYPE_VEC(t, n) ((t) | ((n) << 8))

/** One kernel argument.  Buffers bind the whole buffer with a declared
 * access; scalars are copied at the call; local arguments give a size.
 * Made with #CLS_IN, #CLS_OUT, #CLS_INOUT, #CLS_ARG, #CLS_SCALAR,
 * #CLS_TYPED, #CLS_SCALAR_AS, #CLS_LOCAL, #CLS_NULL_PTR. */
typedef struct cls_arg {
  int kind;          /**< enum cls_arg_kind */
  int access;        /**< buffers: enum cls_access; scalars: enum cls_type
                          (0: untyped) */
  cls_buffer buffer; /**< buffers */
  const void *value; /**< scalars: the bytes, read during the call */
  size_t size;       /**< scalars and local memory: bytes */
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
#define CLS_NULL_PTR cls__arg_sized(CLS_ARG_NULL, NULL, 0)
static inline cls_arg cls__arg_typed(int type, const void *value, size_t size) {
  cls_arg a = cls__arg_sized(CLS_ARG_SCALAR, value, size);
  a.access = type;
  return a;
}
} /* overloads and a template need C++ linkage */
extern "C++" {
template <class T> static inline int cls__type_of(const T &) { return CLS_TYPE_ANY; }
static inline int cls__type_of(const char &) { return CLS_TYPE_CHAR; }
static inline int cls__type_of(const signed char &) { return CLS_TYPE_CHAR; }
static inline int cls__type_of(const unsigned char &) { return CLS_TYPE_UCHAR; }
static inline int cls__type_of(const short &) { return CLS_TYPE_SHORT; }
static inline int cls__type_of(const unsigned short &) { return CLS_TYPE_USHORT; }
static inline int cls__type_of(const int &) { return CLS_TYPE_INT; }
static inline int cls__type_of(const unsigned &) { return CLS_TYPE_UINT; }
static inline int cls__type_of(const long &v) {
  return sizeof v == 8 ? CLS_TYPE_LONG : CLS_TYPE_INT;
}
static inline int cls__type_of(const unsigned long &v) {
  return sizeof v == 8 ? CLS_TYPE_ULONG : CLS_TYPE_UINT;
}
static inline int cls__type_of(const long long &) { return CLS_TYPE_LONG; }
static inline int cls__type_of(const unsigned long long &) { return CLS_TYPE_ULONG; }
static inline int cls__type_of(const float &) { return CLS_TYPE_FLOAT; }
static inline int cls__type_of(const double &) { return CLS_TYPE_DOUBLE; }
}
extern "C" {
#define CLS_TYPED(v) cls__arg_typed(cls__type_of(v), &(v), sizeof(v))
#define CLS_SCALAR_AS(type, v) cls__arg_typed((type), &(v), sizeof(v))
#else
/** A buffer argument the kernel reads (#CLS_READ). */
#define CLS_IN(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_READ, .buffer = (b)})
/** A buffer argument the kernel writes (#CLS_WRITE). */
#define CLS_OUT(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_WRITE, .buffer = (b)})
/** A buffer argument the kernel reads and writes (#CLS_READ_WRITE). */
#define CLS_INOUT(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_READ_WRITE, .buffer = (b)})
/** A buffer argument whose access comes from the kernel's signature
 * (#CLS_ACCESS_INFER). */
#define CLS_ARG(b) ((cls_arg){.kind = CLS_ARG_BUFFER, .access = CLS_ACCESS_INFER, .buffer = (b)})
/** A scalar argument: the lvalue `v`, copied at the call. */
#define CLS_SCALAR(v) ((cls_arg){.kind = CLS_ARG_SCALAR, .value = &(v), .size = sizeof(v)})
/** `n` bytes of __local memory. */
#define CLS_LOCAL(n) ((cls_arg){.kind = CLS_ARG_LOCAL, .size = (n)})
/** A NULL pointer for a `__global` or `__constant` pointer argument, as
 * raw OpenCL's NULL `cl_mem` (an optional input the kernel tests before
 * it reads): no buffer is bound, so nothing is ordered or tainted by it.
 * A handle that was never allocated (#CLS_BUFFER_NULL) given to #CLS_IN
 * and the others is still refused (#CLS_ENULL). */
#define CLS_NULL_PTR ((cls_arg){.kind = CLS_ARG_NULL})
/** A typed scalar argument (F11a): the lvalue `v`, copied at the call,
 * with its OpenCL C type given as `type` (enum cls_type, #CLS_TYPE_VEC):
 * for half, vectors and typedefs the C type does not tell. */
#define CLS_SCALAR_AS(type, v)                                                              \
  ((cls_arg){.kind = CLS_ARG_SCALAR, .access = (type), .value = &(v), .size = sizeof(v)})
#if defined(CLS_DOXYGEN) || (defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L)
/** A typed scalar argument (F11a, C11 and C++): the lvalue `v`, its type
 * taken from its C type (char, short, int, long, their unsigned forms,
 * float, double); other types are untyped (#CLS_SCALAR_AS types them). */
#define CLS_TYPED(v) CLS_SCALAR_AS(cls__type_of(v), v)
#define cls__type_of(v)                                                                    \
  _Generic((v), char: CLS_TYPE_CHAR, signed char: CLS_TYPE_CHAR,                           \
           unsigned char: CLS_TYPE_UCHAR, short: CLS_TYPE_SHORT,                           \
           unsigned short: CLS_TYPE_USHORT, int: CLS_TYPE_INT, unsigned: CLS_TYPE_UINT,    \
           long: (sizeof(long) == 8 ? CLS_TYPE_LONG : CLS_TYPE_INT),                       \
           unsigned long: (sizeof(long) == 8 ? CLS_TYPE_ULONG : CLS_TYPE_UINT),            \
           long long: CLS_TYPE_LONG, unsigned long long: CLS_TYPE_ULONG,                   \
           float: CLS_TYPE_FLOAT, double: CLS_TYPE_DOUBLE, default: CLS_TYPE_ANY)
#endif
#endif

/** Maximum number of arguments of one launch. */
#define CLS_MAX_ARGS 32

/** The version of struct cls_kernel_info this header describes. */
#define CLS_KERNEL_INFO_VERSION 1
/** One argument of a kernel, as cls_kernel_info() reports it. */
struct cls_kernel_arg_info {
  char name[64];     /**< "" where the platform gives none; cut at 63 bytes */
  int kind;          /**< enum cls_arg_kind, from the address qualifier (a
                          __constant pointer is a buffer); 0 where unknown */
  int access;        /**< buffers: #CLS_READ for a const global or __constant
                          pointer, #CLS_READ_WRITE for a non-const one (what
                          #CLS_ARG infers, and what F11 checks #CLS_IN against);
                          images: #CLS_READ, #CLS_WRITE or #CLS_READ_WRITE
                          for __read_only, __write_only, __read_write;
                          0 where the platform gives no type qualifier, and
                          for scalars and local memory */
};
/** What a kernel needs of a launch, asked before one is refused
 * (cls_kernel_info()). */
struct cls_kernel_info {
  unsigned version;  /**< set by the caller: CLS_KERNEL_INFO_VERSION */
  /** The largest work-group (product of the local sizes) cls_launch()
   * accepts for this kernel: the kernel's CL_KERNEL_WORK_GROUP_SIZE, or
   * the device's maximum where the vendor runs more than it reports
   * (struct cls_quirks, wg_above_kernel_max).  Each local size is also
   * checked against the device's max_work_item_sizes. */
  size_t max_work_group_size;
  size_t kernel_work_group_size; /**< CL_KERNEL_WORK_GROUP_SIZE as reported */
  size_t preferred_work_group_size_multiple; /**< CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
  /** As reported when the kernel was looked up: the kernel's own local
   * memory, without #CLS_LOCAL arguments (vendors differ in what they
   * count: docs/portability.md). */
  unsigned long long local_mem_size;
  unsigned long long private_mem_size; /**< private memory per work-item, as reported */
  int nargs;         /**< the kernel's; args[] describes the first
                          CLS_MAX_ARGS of them */
  struct cls_kernel_arg_info args[CLS_MAX_ARGS]; /**< per argument */
};
/** Fills *out (the caller's) for `k`.  No lock (a kernel does not change).
 * \return #CLS_OK;
 * #CLS_EINVAL for NULL or something that is not a kernel;
 * #CLS_EVERSION for an unknown out->version;
 * #CLS_EBUILD for a kernel of a program that failed to build (nothing is
 * known of it: out holds zeros and nargs -1). */
CLS_API int cls_kernel_info(const cls_kernel *k, struct cls_kernel_info *out);

/** Launches `kernel` on `stream` over `dims` (1-3) dimensions of `global`
 * work-items.  `local` may be NULL (the runtime picks).  `args` (`nargs` of
 * them, read during the call) bind buffers, scalars and local memory.
 * Order against other streams is inferred from the buffer arguments: no
 * user sync is needed.  A driver that enqueues later than the call (the
 * scheduler driver) returns 0 for a launch whose enqueue then fails: that
 * failure is found after the call (rule F8) and the reads report it, with
 * the same status.  A refused launch (an invalid kernel, work sizes,
 * argument count, kind or access, or stream) leaves a failure on every
 * buffer it would have written (F12).  Takes the context lock.
 * \return 0 when accepted;
 * #CLS_ESKIPPED when an input carries a failure (the launch made no OpenCL
 * call and its outputs carry that failure);
 * #CLS_ELAUNCH when the enqueue failed (the outputs carry the new failure);
 * #CLS_EBUILD for a kernel of a program that failed to build (the outputs
 * carry the build failure);
 * #CLS_EINVAL for a NULL context, kernel or global, NULL args with nargs
 * above 0, something that
 * is not a kernel of this context, more than #CLS_MAX_ARGS arguments, a
 * scalar without a value, local size 0, an unknown kind or access, or a
 * typed scalar whose type is not a cls_type or not of its size;
 * #CLS_EWORKSIZE for dims outside 1-3, a global size 0 or past what the
 * device's size_t holds, or local sizes that are 0, do not divide the
 * global sizes, or pass the kernel's or the device's limits;
 * #CLS_ETOOBIG when the #CLS_LOCAL sizes together pass the device's
 * CL_DEVICE_LOCAL_MEM_SIZE (#cls_device_info.local_mem_size): OpenCL
 * fails such an enqueue, and PoCL aborts the process instead;
 * #CLS_EARGCOUNT when nargs is not the kernel's argument count;
 * #CLS_EARGKIND when an argument's kind (or a scalar's size, or a typed
 * scalar's type: F11a) does not match the kernel's;
 * #CLS_EACCESS, in strict mode only (#cls_context_options.strict), for
 * #CLS_IN on a pointer the kernel may write (F11; otherwise the
 * declaration is trusted, logged once, and checked by guard mode);
 * #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad buffer argument;
 * #CLS_ESTREAM for a stream id out of range;
 * #CLS_ECL when the stream's backend cannot be created;
 * #CLS_ENOMEM when host memory runs out. */
CLS_API int cls_launch(cls_context *ctx, int stream, cls_kernel *kernel,
                       unsigned dims, const size_t *global,
                       const size_t *local, size_t nargs,
                       const cls_arg *args);
/** cls_launch() with a global work offset, as clEnqueueNDRangeKernel's
 * global_work_offset: work-item ids (get_global_id()) start at offset[i]
 * in dimension i, and get_global_offset() returns it.  `offset` (dims of
 * them) may be NULL, the same as all zero: then this is cls_launch().
 * The buffers a launch binds are ordered and carry failures whole, as for
 * cls_launch(): an offset narrows no write scope.  The same returns as
 * cls_launch(), and:
 * #CLS_EWORKSIZE when offset[i] + global[i] passes what the device's size_t
 * holds;
 * #CLS_EVERSION for a non-zero offset on a context whose stream factory
 * (#cls_context_options.factory; under fault injection, the one it wraps)
 * is older than version 6 and would drop it.
 * Captures (cls_capture_begin()) and recovery keep the offset. */
CLS_API int cls_launch_offset(cls_context *ctx, int stream, cls_kernel *kernel,
                              unsigned dims, const size_t *offset,
                              const size_t *global, const size_t *local,
                              size_t nargs, const cls_arg *args);

/* ------------------------------------------------------------------ */
/* Capture and replay                                                  */
/* ------------------------------------------------------------------ */

/** A captured sequence of commands (opaque; cls_capture_end()). */
typedef struct cls_capture cls_capture;

/** A replay parameter's value (cls_replay()): `size` bytes at `value`. */
typedef struct cls_param {
  const void *value; /**< the bytes (a scalar's, or a cls_buffer for a buffer parameter) */
  size_t size;       /**< their size: the parameter's, as marked at capture */
} cls_param;

/** Begins a capture on `ctx`.  Until cls_capture_end(), cls_launch(),
 * cls_copy(), cls_fill(), cls_upload_async() and cls_download_async(), on
 * any streams, are checked exactly as they would be when run (arguments,
 * ranges; a refused one returns its error and leaves its F12 record, as
 * uncaptured) and then recorded instead of run: they return 0 and enqueue
 * nothing.  Scalars and fill patterns are copied at the call; the host
 * memory of an upload or download is read or written at each replay.
 * cls_upload() and cls_download() (blocking) inside a capture are refused
 * with #CLS_EINVAL: a replay cannot block half-way.
 * Returns #CLS_EINVAL for a NULL context or a capture already begun. */
CLS_API int cls_capture_begin(cls_context *ctx);

/** Marks the scalar at `value` (`size` bytes) as a replay parameter: a
 * captured launch scalar given by this same pointer and size, inside the
 * capture, takes parameter number *index (0, 1, ... in the order marked)
 * at each replay instead of the bytes it had.  Call it between
 * cls_capture_begin() and cls_capture_end().  #CLS_EINVAL for a NULL
 * argument, size 0, no capture begun, or more than #CLS_MAX_ARGS
 * parameters. */
CLS_API int cls_capture_param(cls_context *ctx, const void *value, size_t size, int *index);

/** Marks buffer `buf` as a replay parameter (ping-pong): every command
 * of the capture that names `buf` names, at each replay, the buffer given
 * as parameter number *index instead (a #cls_param whose value points to a
 * cls_buffer, size sizeof(cls_buffer)), which must have `buf`'s size and
 * kind.  #CLS_EINVAL for a NULL index, no capture begun or more than
 * #CLS_MAX_ARGS parameters; #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for
 * a bad buffer. */
CLS_API int cls_capture_buffer_param(cls_context *ctx, cls_buffer buf, int *index);

/** Ends the capture: *out receives the sequence (destroy it with
 * cls_capture_destroy()).  #CLS_EINVAL for a NULL argument, no capture
 * begun, or a capture of zero commands (then it is ended, and *out NULL). */
CLS_API int cls_capture_end(cls_context *ctx, cls_capture **out);

/** Runs the captured commands again, in their order, on their streams,
 * with one call: each goes through the same path as an uncaptured one
 * (prepared plan), so every failure rule holds inside the replay: an
 * input carrying a failure skips the command (F2, each skip on the
 * failure's chain as uncaptured; a replay whose inputs carry one known
 * failure that reaches every command is skipped as a whole: nothing is
 * enqueued, every write set takes the failure, the chain gets one
 * #CLS_SKIP_REPLAY entry naming the capture and its count of commands,
 * and the first command's code is returned, #CLS_ESKIPPED, or
 * #CLS_ETAINTED for a copy), a failed command taints its write set
 * and the later commands reading it are skipped, F7 and F8 as for any
 * command.  `params`: the values of the parameters marked at capture, in
 * order (`nparams` of them, each of its marked size).  Replays of one
 * capture from several threads are ordered by the context's lock, never
 * interleaved.  Returns 0, or the first command's error (the later
 * commands still run or are skipped, as uncaptured commands would);
 * before anything is enqueued: #CLS_EINVAL for a NULL context or capture,
 * a capture of another context, a wrong parameter count or size (a buffer
 * parameter: a buffer of another size or kind); #CLS_ESTALE when a buffer
 * or kernel the capture uses, or a buffer given as parameter, was freed. */
CLS_API int cls_replay(cls_context *ctx, cls_capture *cap, size_t nparams,
                       const cls_param *params);

/** Frees a capture (NULL: nothing).  Its buffers and kernels stay.  A
 * capture holding command buffers first waits for the context's work (as
 * cls_sync() does, reporting nothing): a replay's command buffer may
 * still run.  After cls_context_destroy() it only frees. */
CLS_API void cls_capture_destroy(cls_capture *cap);

/** What a capture became and did (cls_capture_info()).  The backend is
 * chosen at cls_capture_end() by CLS_CAPTURE (auto, plan, command-buffer
 * or commands; docs/capture.md): under "command-buffer", or "auto" where
 * the device's probe found its command buffers faster, each run of two or
 * more consecutive launches, buffer copies and fills on one stream
 * becomes one cl_khr_command_buffer, replayed as one command; on the
 * plan (ranged attribution), each such run is replayed as one command
 * whose members are enqueued one by one; under "commands", every command
 * is its own. */
struct cls_capture_stats {
  const char *backend;  /**< "command-buffer" when it has command buffers,
                             else "plan" */
  size_t commands;      /**< commands captured */
  size_t runs;          /**< runs replayed as one command */
  size_t in_runs;       /**< the commands inside them */
  unsigned long long recordings; /**< runs prepared: command buffers
                                      recorded, or a plan run's kernels set
                                      up; at a run's first replay, then when
                                      its queue (command buffers), a buffer
                                      or a parameter value changed */
  unsigned long long enqueues;   /**< runs enqueued */
};

/** Fills *out for `cap`.  #CLS_EINVAL for a NULL argument. */
CLS_API int cls_capture_info(const cls_capture *cap, struct cls_capture_stats *out);

/* ------------------------------------------------------------------ */
/* Failure reports                                                     */
/* ------------------------------------------------------------------ */

/** How a launch on a skip chain met the failure (#cls_skip_info.kind). */
enum cls_skip_kind {
  CLS_SKIP_SKIPPED = 1,   /**< did not run: an input carried the failure */
  CLS_SKIP_UNTRUSTED = 2, /**< ran before the failure was known, on its output */
  CLS_SKIP_REPLAY = 3     /**< a replay (cls_replay()) skipped as a whole: its
                               inputs carried the failure and it reaches every
                               command; `kernel` names the capture ("capture #N"),
                               `count` is its commands, `stream` and `position`
                               are its first command's */
};

/** One failure of a report (cls_report_failure()).  The strings are owned
 * by the report and live as long as it. */
struct cls_failure_info {
  int status;             /**< CLS_E* */
  int cl_status;          /**< OpenCL status behind it, 0 if none */
  const char *cl_name;    /**< "CL_OUT_OF_RESOURCES" */
  const char *operation;  /**< "launch", "upload", "copy", "alloc" ... */
  const char *kernel;     /**< kernel name, "" for non-launch operations */
  int stream;             /**< the stream it happened on */
  uint64_t position;      /**< the stream's command count at the failure */
  const char *message;    /**< one line */
  const char *build_log;  /**< excerpt, "" when none */
  int async;              /**< 1 when found after the enqueue (F8) */
  size_t nskips;          /**< entries in the skip chain */
  uint64_t skipped;       /**< launches in the chain (entries repeat a launch) */
};

/** One entry of a skip chain: `count` consecutive launches of one kernel on
 * one stream, from `position` on.  The kernel name is owned by the report. */
struct cls_skip_info {
  int kind;               /**< enum cls_skip_kind */
  const char *kernel;     /**< the kernel's name */
  int stream;             /**< the stream the launches were on */
  uint64_t position;      /**< the stream's command count at the first */
  uint64_t count;         /**< consecutive launches in this entry */
};

/** The number of distinct failures in the report (0 for NULL). */
CLS_API size_t cls_report_failures(const cls_report *r);
/** Failure `i` (0 .. cls_report_failures()-1) into *out.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ERANGE for i out
 * of range. */
CLS_API int cls_report_failure(const cls_report *r, size_t i,
                               struct cls_failure_info *out);
/** Entry `i` (0 .. nskips-1) of failure `failure`'s skip chain into *out.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_ERANGE for an
 * index out of range. */
CLS_API int cls_report_skip(const cls_report *r, size_t failure, size_t i,
                            struct cls_skip_info *out);
/** The number of handles the read named that were stale (#CLS_ESTALE),
 * foreign (#CLS_EFOREIGN) or never allocated (#CLS_ENULL); 0 for NULL. */
CLS_API size_t cls_report_bad_handles(const cls_report *r);
/** Bad handle `i` into *handle and why it is bad (#CLS_ESTALE,
 * #CLS_EFOREIGN, #CLS_ENULL) into *why; either may be NULL.
 * \return #CLS_OK; #CLS_EINVAL for a NULL report; #CLS_ERANGE for i out of
 * range. */
CLS_API int cls_report_bad_handle(const cls_report *r, size_t i,
                                  cls_buffer *handle, int *why);
/** The whole report as text, made on first call; owned by the report.
 * "" for NULL. */
CLS_API const char *cls_report_text(cls_report *r);
/** Frees a report and its strings.  NULL is accepted. */
CLS_API void cls_report_free(cls_report *r);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

/** What a context logs (cls_set_logger(), $CLS_LOG). */
enum cls_log_level {
  CLS_LOG_OFF = 0,     /**< nothing */
  CLS_LOG_ERRORS = 1,  /**< every minted failure, once (default) */
  CLS_LOG_STREAMS = 2, /**< + stream creation, cross-stream waits, syncs */
  CLS_LOG_FULL = 3     /**< + every command */
};
/** A logger: called with the context lock held, on the thread of the call
 * that logs; `message` is valid during the call only.  It must not call
 * into the same context. */
typedef void (*cls_log_fn)(void *user, int level, const char *message);
/** Installs a logger for the context: messages at `level` and below go to
 * `fn(user, level, message)`; NULL fn logs to stderr.  The initial level
 * comes from $CLS_LOG (off|errors|streams|full).  Takes the context lock.
 * \return #CLS_OK; #CLS_EINVAL for a NULL context or a level outside
 * #CLS_LOG_OFF .. #CLS_LOG_FULL. */
CLS_API int cls_set_logger(cls_context *ctx, int level, cls_log_fn fn,
                           void *user);

/* ------------------------------------------------------------------ */
/* Vendor quirks                                                       */
/* ------------------------------------------------------------------ */

/** A quirk answer that is not known: not probed, or the probe could not
 * tell; clstream treats it as the worst case. */
#define CLS_QUIRK_UNKNOWN (-1)
/** The version of struct cls_quirks this header describes. */
#define CLS_QUIRKS_VERSION 2
/** How the context's device behaves after a failure (cls_context_quirks()).
 *
 * OpenCL leaves what follows a failure implementation-defined, and the
 * vendors differ.  On the first use of a device in a process, clstream
 * probes the behaviours that can be probed safely (on a private queue; a
 * user event is failed before anything is flushed behind it; every wait is
 * a status poll with a deadline) and keeps the answers for that device.
 * Each answer is 1 (the vendor does it), 0 (it does not) or
 * #CLS_QUIRK_UNKNOWN (not probed, or the probe could not tell), which
 * clstream treats as the worst case.  README "Portability" lists the
 * workaround each answer selects. */
struct cls_quirks {
  unsigned version;          /**< set by the caller: CLS_QUIRKS_VERSION */
  int probed;                /**< 1: the probes ran to the end in time */
  /** A user event set to an error status calls its CL_COMPLETE callback
   * (oclgrind).  clstream never relies on callbacks: it polls. */
  int failed_callback;
  /** A command queued on an event that then fails is failed too, rather
   * than run on whatever its input holds. */
  int dependent_fails;
  /** A command queued behind a failed one on the same in-order queue is
   * failed too (PoCL), rather than run.  On such a device a failure shows
   * on the last command of the queue, so the last event says whether
   * anything before it failed. */
  int queue_poisoned;
  /** clFinish returned while a flushed command was not complete (rusticl).
   * 0 only means it was not seen: clstream waits for the last command's
   * event after clFinish on every device. */
  int finish_early;
  int dependent_status;      /**< the status a dependent command failed with */
  /* Limits clstream validates against before OpenCL sees a call. */
  int cl_version;            /**< the device's: 120, 200, 300 */
  unsigned long long max_alloc_size; /**< the device's maximum allocation, bytes */
  size_t max_work_group_size; /**< the device's maximum work-group */
  size_t page_size;          /**< this context's memory pages, bytes */
  double probe_ms;           /**< how long the probes took in this process */
  /** Version 2.  A launch whose work-group is larger than the kernel's
   * CL_KERNEL_WORK_GROUP_SIZE but within the device's maximum runs and
   * computes right (rusticl: 32 reported for every kernel, 1024 run).
   * Probed on first need (a kernel reporting less than the device's
   * maximum, or a version-2 call of cls_context_quirks()), once per device
   * and process, with a tiny kernel at the device's maximum whose every
   * element is checked.  Where 1, launches of a kernel that reports no
   * less than the probe's kernel did, and requires no work-group size, are
   * checked against the device's limits; elsewhere against the kernel's
   * value.  0 also where the probe's kernel reported the device's maximum
   * (nothing above it to run: PoCL, oclgrind). */
  int wg_above_kernel_max;
  size_t kernel_work_group_size; /**< version 2: the probe kernel's
                                      CL_KERNEL_WORK_GROUP_SIZE, 0 if unknown */
};
/** The quirks of the context's device into *out (the caller's, version
 * set).  A caller's version 1 struct gets the version 1 fields only.  No
 * context lock (the answers are fixed; a version-2 call may run the
 * work-group probe once, behind its own lock).
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_EVERSION for an
 * unknown out->version. */
CLS_API int cls_context_quirks(cls_context *ctx, struct cls_quirks *out);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_H */
