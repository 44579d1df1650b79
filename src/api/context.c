/* Contexts: creation (one device, its stream pool and failure table, the
 * driver) and destruction in the reverse order, and the context-level
 * public calls: device, quirks, driver, logger. */
#include "api/capture.h"
#include "util/parse.h"
#include "core/kernel.h"
#include "core/program.h"
#include "core/relocate.h"
#include "core/keep.h"
#include "device/device.h"
#include "device/quirks.h"
#include "failure/attribution.h"
#include "driver/driver.h"
#include "failure/poll.h"
#include "failure/replay.h"
#include "guard/guard.h"
#include "stream/deadline.h"
#include "memory/memory.h"
#include "stream/pool.h"
#include "trace/trace.h"
#include "util/settle.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_PAGE_SIZE ((size_t)64 << 20)
#define MIN_DEFAULT_PAGES 32
#define MIN_PAGE_SIZE ((size_t)1 << 20)

static atomic_uint next_tag = 1;

static unsigned new_tag(void) {
  for (;;) {
    unsigned t = atomic_fetch_add(&next_tag, 1) & 0xfffu;
    if (t)
      return t;
  }
}

static const char *pick(const char *opt, const char *env) {
  if (opt)
    return opt;
  const char *e = getenv(env);
  return e && *e ? e : NULL;
}

/* The size of the device memory pages buffers are carved from: the
 * user's, or a default that fits the device. */
static void size_pages(cls_context *ctx, size_t requested) {
  ctx->page_size = requested ? requested : DEFAULT_PAGE_SIZE;
  /* A device with little memory (oclgrind: 128 MiB in all) would hold two
   * default pages: the default leaves room for a page on each of 32
   * streams. */
  if (!requested && ctx->page_size > ctx->info.global_mem_size / MIN_DEFAULT_PAGES &&
      ctx->info.global_mem_size / MIN_DEFAULT_PAGES >= MIN_PAGE_SIZE)
    ctx->page_size = (size_t)(ctx->info.global_mem_size / MIN_DEFAULT_PAGES);
  if (ctx->page_size > ctx->info.max_alloc_size)
    ctx->page_size = (size_t)ctx->info.max_alloc_size;
}

/* Device times onto the host clock of the trace: a marker on a profiling
 * queue, its end read against the host clock right after it finished (the
 * error is the wake-up latency, microseconds).  Where the device gives no
 * time, the offset stays 0. */
static void trace_calibrate(cls_context *ctx) {
  cl_int rc;
  cl_command_queue q =
      clCreateCommandQueue(ctx->clctx, ctx->device, CL_QUEUE_PROFILING_ENABLE, &rc);
  if (rc != CL_SUCCESS)
    return;
  cl_event ev;
  if (clEnqueueMarkerWithWaitList(q, 0, NULL, &ev) == CL_SUCCESS) {
    clFinish(q);
    uint64_t host = cls__now_ns();
    cl_ulong end = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL) ==
            CL_SUCCESS &&
        end)
      cls__trace_set_device_offset(ctx->trace, (int64_t)(host - end));
    clReleaseEvent(ev);
  }
  clReleaseCommandQueue(q);
}

/* CLS_TRACE / opts->trace: the trace file, opened before any stream (the
 * factory learns from the backend that it should profile). */
static int start_trace(cls_context *ctx, const struct cls_context_options *opts,
                       const char *params) {
  const char *path = pick(opts->version >= 2 ? opts->trace : NULL, "CLS_TRACE");
  if (!path || !*path)
    return CLS_OK;
  char driver[160];
  snprintf(driver, sizeof driver, "%s%s%s", ctx->driver_ops->name, params ? ":" : "",
           params ? params : "");
  struct cls__trace_meta meta = {ctx->info.device_name, driver, cls_version_string()};
  int rc = cls__trace_open(&ctx->trace, path, &meta, &ctx->logger);
  if (rc < 0)
    return rc;
  trace_calibrate(ctx);
  return CLS_OK;
}

/* The stream pool over the user's factory (wrapped by fault injection
 * when faults are configured), the failure table, and the driver.  On
 * failure nothing of them is left. */
static int start_streams(cls_context *ctx, const struct cls_context_options *opts,
                         const char *params) {
  const struct cls_stream_factory *factory =
      opts->factory ? opts->factory : cls_opencl_stream_factory();
  void *fdata = opts->factory_data;
  if (ctx->faults) {
    ctx->fault_data.inner = factory;
    ctx->fault_data.inner_data = fdata;
    ctx->fault_data.cfg = ctx->faults;
    ctx->fault_data.members = cls__capture_run_members;
    factory = &cls__fault_factory;
    fdata = &ctx->fault_data;
    /* A loss after the enqueue fails its commands through a user event,
     * as a foreign command's may: a capture's runs keep their events
     * (PoCL 3.1 aborts failing commands without them, opencl.c). */
    if (cls__fault_gates(ctx->faults))
      ctx->foreign_seen = true;
  }
  int rc = cls__pool_init(ctx, factory, fdata);
  if (rc < 0)
    return rc;
  cls__failures_init(&ctx->failures, &ctx->logger);
  if ((rc = cls__driver_create(ctx, params, factory, factory == &cls__fault_factory)) < 0) {
    cls__failures_fini(&ctx->failures);
    return rc;
  }
  return CLS_OK;
}

CLS_API int cls_context_create(cls_context **out, const struct cls_context_options *opts) {
  cls__error_clear();
  if (!out)
    return cls__error(CLS_EINVAL, 0, "cls_context_create: NULL out");
  *out = NULL;
  struct cls_context_options none = {.version = CLS_CONTEXT_OPTIONS_VERSION};
  if (!opts)
    opts = &none;
  if (opts->version < 1 || opts->version > CLS_CONTEXT_OPTIONS_VERSION)
    return cls__error(CLS_EVERSION, 0, "cls_context_options version %u (this library: 1..%d)",
                      opts->version, CLS_CONTEXT_OPTIONS_VERSION);
  int rc;
  cls_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  if (cls__lock_init(&ctx->lock) != 0) {
    rc = cls__error(CLS_ENOMEM, 0, "creating the context lock failed");
    goto fail_lock;
  }
  cls__logger_init(&ctx->logger);
  const char *lvl = getenv("CLS_LOG");
  if (lvl && *lvl && (rc = cls__log_level_parse(lvl, &ctx->logger.level)) < 0)
    goto fail_config;
  if ((rc = cls__cache_init(&ctx->cache, opts->version >= 2 ? opts->cache_dir : NULL)) < 0)
    goto fail_config;

  /* Everything the user can get wrong in a string is checked before any
   * OpenCL object exists. */
  const char *fault = pick(opts->fault, "CLS_FAULT");
  if (fault && (rc = cls__fault_parse(fault, &ctx->faults)) < 0)
    goto fail_config;
  bool guard = false;
  int gopt = opts->version >= 2 ? opts->guard : 0;
  const char *genv = getenv("CLS_GUARD");
  if (gopt)
    guard = gopt > 0;
  else if (genv && *genv && (rc = cls__guard_parse(genv, &guard)) < 0)
    goto fail_guard_config;
  int sopt = opts->version >= 6 ? opts->strict : 0;
  const char *senv = getenv("CLS_STRICT");
  if (sopt)
    ctx->strict = sopt > 0;
  else if (senv && *senv) {
    if (strcmp(senv, "0") != 0 && strcmp(senv, "1") != 0) {
      rc = cls__error(CLS_ECONFIG, 0, "CLS_STRICT: '%s' is neither 0 nor 1", senv);
      goto fail_guard_config;
    }
    ctx->strict = senv[0] == '1';
  }
  double topt = opts->version >= 2 ? opts->sync_timeout : 0;
  const char *tenv = getenv("CLS_SYNC_TIMEOUT");
  if (topt > 0)
    ctx->sync_timeout_ns = topt >= 1e6 ? 1000000000000000ull : (uint64_t)(topt * 1e9) + 1;
  else if (topt == 0 && tenv && *tenv &&
           (rc = cls__timeout_parse(tenv, &ctx->sync_timeout_ns)) < 0)
    goto fail_guard_config;
  const char *cenv = getenv("CLS_CAPTURE");
  if (cenv && *cenv) {
    /* In the order of CLS__CAPTURE_AUTO, _PLAN, _CB, _COMMANDS. */
    static const char *const modes[] = {"auto", "plan", "command-buffer", "commands"};
    _Static_assert(CLS__CAPTURE_AUTO == 0 && CLS__CAPTURE_PLAN == 1 && CLS__CAPTURE_CB == 2 &&
                       CLS__CAPTURE_COMMANDS == 3,
                   "modes[] in enum order");
    struct cls__parser ps = {"CLS_CAPTURE", cenv, NULL};
    if ((rc = cls__parse_word(&ps, modes, 4, &ctx->capture_mode,
                              "the capture backend is 'auto', 'plan', 'command-buffer' or "
                              "'commands'")) < 0)
      goto fail_guard_config;
  }
  int precise = 0;
  unsigned every = 0;
  int early = CLS__EARLY_AUTO;
  if ((rc = cls__attribution_parse(opts, &precise, &every, &early)) < 0)
    goto fail_guard_config;
  const char *params = NULL;
  const struct cls_driver_ops *given = opts->version >= 3 ? opts->driver : NULL;
  if ((rc = cls__driver_find(given ? opts->scheduler : pick(opts->scheduler, "CLS_SCHEDULER"),
                             given, &ctx->driver_ops, &params)) < 0)
    goto fail_driver_name;

  /* Devices: one, or several of one platform (src/core/relocate.c). */
  const char *place = pick(opts->version >= 4 ? opts->placement : NULL, "CLS_PLACEMENT");
  if (place && *place && (rc = cls__placement_parse(place, &ctx->placement)) < 0)
    goto fail_device;
  const char *reloc = pick(opts->version >= 4 ? opts->relocate : NULL, "CLS_RELOCATE");
  if (reloc && *reloc && (rc = cls__relocate_parse(reloc, &ctx->relocate)) < 0)
    goto fail_device;
  const char *recov = pick(opts->version >= 7 ? opts->recover : NULL, "CLS_RECOVER");
  ctx->recover = CLS__RECOVER_DEFAULT;
  if (recov && *recov && (rc = cls__recover_parse(recov, &ctx->recover)) < 0)
    goto fail_device;
  if (!ctx->relocate)
    ctx->recover = 0; /* nothing moves, so nothing runs again */
  if ((rc = cls__place_devices(ctx, pick(opts->device, "CLS_DEVICE"), place && *place)) < 0)
    goto fail_device;
  cl_int crc;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
  ctx->clctx = clCreateContext(props, (cl_uint)ctx->ndevices, ctx->devices, NULL, NULL, &crc);
  if (crc != CL_SUCCESS) {
    rc = cls__error(CLS_ECL, crc, "clCreateContext on '%s'%s failed: %s", ctx->info.device_name,
                    ctx->ndevices > 1 ? " and more devices" : "", cls_cl_status_name(crc));
    goto fail_device;
  }
  size_pages(ctx, opts->page_size);
  /* Before any stream exists: the answers may choose how streams work. */
  cls__quirks_probe(ctx->clctx, ctx->device, &ctx->quirks);
  ctx->quirks.cl_version = ctx->info.cl_version;
  ctx->quirks.max_alloc_size = ctx->info.max_alloc_size;
  ctx->quirks.max_work_group_size = ctx->info.max_work_group_size;
  ctx->quirks.page_size = ctx->page_size;
  ctx->tag = new_tag();
  ctx->hooks.released = cls__kernels_forget_args;
  ctx->hooks.replay_kept = cls__keep_replay;

  if ((rc = start_trace(ctx, opts, params)) < 0)
    goto fail_trace;
  cls__attribution_choose(ctx, precise, every, early, guard);
  /* Before any buffer is carved: guard mode decides how. */
  if (guard && (rc = cls__guard_create(ctx)) < 0)
    goto fail_guard;
  ctx->checks = (ctx->guard ? 1u : 0u) | (ctx->sync_timeout_ns ? 2u : 0u) |
                (ctx->ndevices > 1 ? 4u : 0u) | (ctx->relocate ? 8u : 0u);
  if ((rc = start_streams(ctx, opts, params)) < 0)
    goto fail_streams;
  atomic_store_explicit(&ctx->live, CLS__CONTEXT_LIVE, memory_order_relaxed);
  *out = ctx;
  return CLS_OK;

fail_streams:
  cls__guard_destroy(ctx);
fail_guard:
  cls__trace_discard(ctx->trace);
fail_trace:
  clReleaseContext(ctx->clctx);
fail_device:
fail_driver_name:
fail_guard_config:
  cls__fault_forget_behind(ctx->faults);
  cls__fault_config_free(ctx->faults);
fail_config:
  cls__cache_fini(&ctx->cache);
  cls__lock_fini(&ctx->lock);
fail_lock:
  free(ctx);
  return rc;
}

static void free_reads(cls_context *ctx) {
  struct cls__pending_read *r = ctx->reads;
  while (r) {
    struct cls__pending_read *next = r->next;
    cls__failure_unref(r->failure);
    free(r);
    r = next;
  }
  ctx->reads = NULL;
}

/* Contexts left behind by cls_context_destroy because a stream's command
 * still ran past the deadline: everything they hold stays reachable here
 * for the life of the process (their queues cannot be released without
 * waiting for that command), so nothing is lost, only kept. */
static struct {
  pthread_mutex_t m;
  cls_context **v;
  size_t n, cap;
} abandoned = {.m = PTHREAD_MUTEX_INITIALIZER};

static void abandon(cls_context *ctx) {
  pthread_mutex_lock(&abandoned.m);
  if (cls__grow((void **)&abandoned.v, &abandoned.cap, abandoned.n + 1, sizeof *abandoned.v, 4))
    abandoned.v[abandoned.n++] = ctx;
  pthread_mutex_unlock(&abandoned.m);
}

/* The last contexts destroyed.  Their memory is kept, live cleared and the
 * lock held, so that a call made with the pointer of a context just
 * destroyed fails with CLS_ESTALE (cls__lock_slow) instead of reading
 * memory malloc has handed to something else; the oldest is freed when
 * another comes.  At most QUARANTINE contexts' structs (60 KB each), none
 * of what they owned. */
#define QUARANTINE 4
static struct {
  pthread_mutex_t m;
  cls_context *v[QUARANTINE];
  size_t next;
} destroyed = {.m = PTHREAD_MUTEX_INITIALIZER};

static void quarantine(cls_context *ctx) {
  atomic_store_explicit(&ctx->live, 0, memory_order_relaxed);
  atomic_store_explicit(&ctx->lock.owner, NULL, memory_order_relaxed);
  pthread_mutex_lock(&destroyed.m);
  cls_context *oldest = destroyed.v[destroyed.next];
  destroyed.v[destroyed.next] = ctx;
  destroyed.next = (destroyed.next + 1) % QUARANTINE;
  pthread_mutex_unlock(&destroyed.m);
  free(oldest);
}

CLS_API void cls_context_destroy(cls_context *ctx) {
  if (!ctx)
    return;
  /* Keeps the detail (this call reports nothing), unless it is refused:
   * destroyed already, or called from one of its callbacks. */
  if (!cls__lock_try(&ctx->lock, &cls__last) && cls__lock_slow(ctx, __func__) < 0)
    return;
  /* Streams first (their work waited for, then their backends and
   * memory), then the driver, then what the rules kept. */
  cls__poll_all(ctx, true);
  cls__capture_detach_all(ctx); /* their command buffers, before the queues */
  struct cls__stream_pool *pool = &ctx->pool;
  bool hung = false;
  for (int i = 0; i < pool->nstreams; i++) {
    struct cls__stream *s = &pool->streams[i];
    if (!s->created)
      continue;
    if (s->hung) {
      /* Its queue may still run a command past the deadline: releasing the
       * queue would wait for it, so the queue and the memory it may use
       * are left behind (a thread releases the wait's event later). */
      cls__log(&ctx->logger, CLS_LOG_ERRORS,
               "stream %d: work still running after CLS_SYNC_TIMEOUT; its queue and memory "
               "are left unreleased",
               s->id);
      hung = true;
      continue;
    }
    ctx->driver_ops->close(ctx->driver, &s->pub);
    cls__memory_fini(ctx, s);
    s->created = false;
  }
  if (hung) {
    /* The driver, the programs and the OpenCL context are in use by the
     * hung streams' queues: the context is kept, not freed. */
    cls__trace_flush(ctx->trace);
    atomic_store_explicit(&ctx->live, 0, memory_order_relaxed); /* the lock stays held */
    abandon(ctx);
    return;
  }
  pool->nstreams = 0;
  ctx->driver_ops->destroy(ctx->driver);
  cls__trace_close(ctx->trace); /* after the streams: their last device times */
  cls__guard_destroy(ctx);
  cls__image_caps_free(ctx);
  cls__failures_fini(&ctx->failures);
  cls__log_fini(ctx);
  cls__keep_fini(ctx);
  cls__replay_fini(ctx);
  free_reads(ctx);
  cls_capture_destroy(ctx->capture); /* one begun and never ended */
  cls__kernels_fini(ctx);
  cls__programs_fini(ctx);
  for (size_t i = 0; i < ctx->nlabels; i++)
    free(ctx->labels[i]);
  free(ctx->labels);
  clReleaseContext(ctx->clctx);
  cls__fault_forget_behind(ctx->faults);
  cls__fault_config_free(ctx->faults);
  cls__cache_fini(&ctx->cache);
  /* The lock stays held: a later call goes to cls__lock_slow, which reads
   * `live` and touches nothing else. */
  cls__lock_fini(&ctx->lock);
  quarantine(ctx);
}

CLS_API int cls_context_device(cls_context *ctx, struct cls_device_info *out) {
  cls__error_clear();
  if (!ctx || !out)
    return cls__error(CLS_EINVAL, 0, "cls_context_device: NULL argument");
  CLS__LIVE(ctx, "cls_context_device");
  *out = ctx->info;
  return CLS_OK;
}

CLS_API int cls_context_quirks(cls_context *ctx, struct cls_quirks *out) {
  cls__error_clear();
  if (!ctx || !out)
    return cls__error(CLS_EINVAL, 0, "cls_context_quirks: NULL argument");
  CLS__LIVE(ctx, "cls_context_quirks");
  if (out->version < 1 || out->version > CLS_QUIRKS_VERSION)
    return cls__error(CLS_EVERSION, 0, "struct cls_quirks version %u (this library: 1..%d)",
                      out->version, CLS_QUIRKS_VERSION);
  /* Fixed since the context was created: no lock needed.  The version 2
   * answer is probed on first need, behind the probes' own lock. */
  unsigned version = out->version;
  struct cls_quirks q = ctx->quirks;
  size_t size = sizeof q;
  if (version >= 2)
    q.wg_above_kernel_max =
        cls__quirks_wg(ctx->clctx, ctx->device, &ctx->info, &q.kernel_work_group_size);
  else
    size = offsetof(struct cls_quirks, wg_above_kernel_max); /* the caller's struct ends there */
  memcpy(out, &q, size);
  out->version = version;
  return CLS_OK;
}

CLS_API int cls_context_cache(cls_context *ctx, struct cls_cache_info *out) {
  if (!ctx || !out)
    return cls__error(CLS_EINVAL, 0, "cls_context_cache: NULL argument");
  if (out->version < 1 || out->version > CLS_CACHE_INFO_VERSION)
    return cls__error(CLS_EVERSION, 0, "struct cls_cache_info version %u (this library: 1..%d)",
                      out->version, CLS_CACHE_INFO_VERSION);
  unsigned version = out->version;
  memset(out, 0, sizeof *out);
  out->version = version;
  CLS__LOCK(ctx);
  const struct cls__cache *c = &ctx->cache;
  out->enabled = c->enabled;
  out->dir = c->enabled ? c->dir : "";
  out->max_bytes = c->max;
  uint64_t entries = 0, bytes = 0;
  if (c->enabled)
    cls__cache_usage(c, &entries, &bytes);
  out->entries = entries;
  out->bytes = bytes;
  out->hits = c->hits;
  out->misses = c->misses;
  out->stores = c->stores;
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API const char *cls_context_driver(cls_context *ctx) {
  return ctx ? ctx->driver_ops->name : "";
}

CLS_API int cls_set_logger(cls_context *ctx, int level, cls_log_fn fn, void *user) {
  if (!ctx)
    return cls__error(CLS_EINVAL, 0, "cls_set_logger: NULL context");
  if (level < CLS_LOG_OFF || level > CLS_LOG_FULL)
    return cls__error(CLS_EINVAL, 0, "cls_set_logger: level %d", level);
  CLS__LOCK(ctx);
  ctx->logger.level = level;
  ctx->logger.fn = fn;
  ctx->logger.user = user;
  cls__unlock(ctx);
  return CLS_OK;
}
