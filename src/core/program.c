/* Programs: build with a per-context cache keyed by device, source hash
 * and options, then the persistent cache on disk (src/cache/cache.h), then
 * from source; a failed build is remembered and replayed to every kernel
 * of the program. Kernels and their argument signatures: core/kernel.c. */
#include "core/program.h"
#include "device/quirks.h"
#include "failure/failure.h"
#include "util/hash.h"
#include "util/settle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static uint64_t key_hash(cl_device_id dev, const char *src, size_t len, const char *opts) {
  uint64_t h = cls__hash(CLS__HASH_INIT, &dev, sizeof dev);
  h = cls__hash(h, src, len);
  h = cls__hash(h, "", 1);
  return cls__hash(h, opts, strlen(opts));
}

char *cls__dupstr(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

#define LOG_EXCERPT 2048

/* Records a failed build on the program: the record every launch of its
 * kernels will carry, and the detail a cache hit replays. */
static void remember_failure(cls_context *ctx, struct cls_program *p, cl_int rc,
                             const char *log) {
  p->build_detail = strdup(cls_last_error_detail());
  p->build_failure = cls__failure_mint(
      ctx, CLS_EBUILD, rc, &(struct cls__cmd_at){.stream = -1, .op = "build", .kernel = ""},
      false, "program build failed (%s) with options '%s'", cls_cl_status_name(rc), p->options);
  if (p->build_failure && log && log[0]) {
    size_t n = strlen(log);
    if (n > LOG_EXCERPT)
      n = LOG_EXCERPT;
    p->build_failure->build_log = cls__dupstr(log, n);
  }
}

static double now_ms(void) { return (double)cls__now_ns() / 1e6; }

/* The persistent cache's key for this program on this context's device. */
static struct cls__cache_key cache_key(const cls_context *ctx, const struct cls_program *p,
                                       const char *opts) {
  return (struct cls__cache_key){ctx->info.platform_name, ctx->info.platform_version,
                                 ctx->info.device_name,   ctx->info.driver_version,
                                 opts,                    p->source,
                                 p->srclen};
}

/* A build from the persistent cache: true when p->program is built from
 * the stored binary.  A binary the vendor refuses is dropped, said once,
 * and the cache is not tried again by this context. */
static bool from_cache(cls_context *ctx, struct cls_program *p, const struct cls__cache_key *k,
                       const char *opts) {
  unsigned char *bin = NULL;
  size_t len = 0;
  double t0 = now_ms();
  if (!cls__cache_load(&ctx->cache, &ctx->logger, k, &bin, &len))
    return false;
  cl_int rc, status = CL_SUCCESS;
  const unsigned char *b = bin;
  p->program = clCreateProgramWithBinary(ctx->clctx, 1, &ctx->device, &len, &b, &status, &rc);
  if (rc == CL_SUCCESS && status == CL_SUCCESS)
    rc = clBuildProgram(p->program, 1, &ctx->device, opts, NULL, NULL);
  else if (rc == CL_SUCCESS)
    rc = status;
  free(bin);
  if (rc == CL_SUCCESS) {
    ctx->cache.hits++;
    cls__log(&ctx->logger, CLS_LOG_STREAMS, "program cache hit: %zu-byte binary in %s (%.1f ms)",
             len, ctx->cache.dir, now_ms() - t0);
    return true;
  }
  if (p->program)
    clReleaseProgram(p->program);
  p->program = NULL;
  cls__cache_drop(&ctx->cache, k);
  ctx->cache.refused = true;
  if (!ctx->cache.said_binary)
    cls__log(&ctx->logger, CLS_LOG_STREAMS,
             "program cache: '%s' does not load a stored binary (%s); building from source "
             "from now on",
             ctx->info.device_name, cls_cl_status_name(rc));
  ctx->cache.said_binary = true;
  return false;
}

/* Stores the built program's binary in the persistent cache. */
static void to_cache(cls_context *ctx, struct cls_program *p, const struct cls__cache_key *k,
                     double ms) {
  size_t len = 0;
  unsigned char *bin = NULL;
  if (clGetProgramInfo(p->program, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) !=
          CL_SUCCESS ||
      !len || !(bin = malloc(len)) ||
      clGetProgramInfo(p->program, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) != CL_SUCCESS) {
    free(bin);
    return; /* the vendor gives no binary: nothing to keep */
  }
  uint64_t stores = ctx->cache.stores;
  cls__cache_store(&ctx->cache, &ctx->logger, k, bin, len);
  cls__log(&ctx->logger, CLS_LOG_STREAMS, "program cache miss: built from source in %.1f ms%s%s",
           ms, ctx->cache.stores > stores ? ", stored in " : "",
           ctx->cache.stores > stores ? ctx->cache.dir : "");
  free(bin);
}

/* Builds with -cl-kernel-arg-info so argument kinds can be checked: from
 * the persistent cache when it holds the binary, else from source (and
 * the binary is stored). */
static int build(cls_context *ctx, struct cls_program *p) {
  cl_int rc;
  size_t olen = strlen(p->options);
  char *opts = malloc(olen + sizeof " -cl-kernel-arg-info");
  if (!opts)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  memcpy(opts, p->options, olen);
  strcpy(opts + olen, " -cl-kernel-arg-info");
  struct cls__cache_key key = cache_key(ctx, p, opts);
  /* The cache holds one device's binary: a context of several devices
   * builds from source, for all of them. */
  bool cache = ctx->cache.enabled && ctx->ndevices == 1;
  /* The key is the source text, not what the vendor's preprocessor pulls
   * in: a program that can include files is built from source, always
   * (docs/cache.md, "The key"). */
  if (cache && cls__cache_reads_files(&key)) {
    cache = false;
    cls__log(&ctx->logger, CLS_LOG_STREAMS,
             "program cache: not used: the program can include files (#include, -include); "
             "building from source");
  }
  if (cache && from_cache(ctx, p, &key, opts)) {
    free(opts);
    return CLS_OK;
  }
  const char *src = p->source;
  double t0 = now_ms();
  p->program = clCreateProgramWithSource(ctx->clctx, 1, &src, &p->srclen, &rc);
  if (rc != CL_SUCCESS) {
    free(opts);
    return cls__error(CLS_EBUILD, rc, "clCreateProgramWithSource failed: %s",
                      cls_cl_status_name(rc));
  }
  rc = clBuildProgram(p->program, (cl_uint)ctx->ndevices, ctx->devices, opts, NULL, NULL);
  if (rc == CL_SUCCESS && cache) {
    ctx->cache.misses++;
    to_cache(ctx, p, &key, now_ms() - t0);
  }
  free(opts);
  if (rc == CL_SUCCESS)
    return CLS_OK;
  /* Vendors disagree on the code for the same mistake (a bad option is
   * CL_INVALID_BUILD_OPTIONS on PoCL, CL_BUILD_PROGRAM_FAILURE elsewhere):
   * clstream answers CLS_EBUILD for both, with the log. */
  size_t loglen = 0;
  clGetProgramBuildInfo(p->program, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &loglen);
  char *log = loglen ? malloc(loglen + 1) : NULL;
  if (log) {
    if (clGetProgramBuildInfo(p->program, ctx->device, CL_PROGRAM_BUILD_LOG, loglen, log, NULL) !=
        CL_SUCCESS)
      loglen = 0;
    log[loglen] = '\0';
  }
  cls__error(CLS_EBUILD, rc, "build failed (%s) with options '%s':\n%s", cls_cl_status_name(rc),
             p->options, log && log[0] ? log : "(empty build log)");
  remember_failure(ctx, p, rc, log);
  free(log);
  return CLS_EBUILD;
}

static void program_free(struct cls_program *p) {
  if (p->program)
    clReleaseProgram(p->program);
  cls__failure_unref(p->build_failure);
  free(p->build_detail);
  free(p->source);
  free(p->options);
  free(p);
}

void cls__programs_fini(cls_context *ctx) {
  struct cls_program *p = ctx->programs;
  while (p) {
    struct cls_program *next = p->next;
    program_free(p);
    p = next;
  }
  ctx->programs = NULL;
}

CLS_API int cls_program_build(cls_context *ctx, const char *source, const char *options,
                              cls_program **out) {
  if (!ctx || !source || !out)
    return cls__error(CLS_EINVAL, 0, "cls_program_build: NULL argument");
  *out = NULL;
  if (!options)
    options = "";
  size_t len = strlen(source);
  if (len == 0)
    return cls__error(CLS_EINVAL, 0, "cls_program_build: empty source");
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  uint64_t h = key_hash(ctx->device, source, len, options);
  for (struct cls_program *p = ctx->programs; p; p = p->next)
    if (p->hash == h && p->srclen == len && strcmp(p->options, options) == 0 &&
        memcmp(p->source, source, len) == 0) {
      p->refs++;
      *out = p;
      if (p->build_failure)
        rc = cls__error(CLS_EBUILD, p->build_failure->cl_status, "%s",
                        p->build_detail ? p->build_detail : p->build_failure->message);
      goto done;
    }
  struct cls_program *p = calloc(1, sizeof *p);
  if (!p) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto done;
  }
  p->hash = h;
  p->srclen = len;
  p->source = cls__dupstr(source, len);
  p->options = cls__dupstr(options, strlen(options));
  p->ctx = ctx;
  if (!p->source || !p->options) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    program_free(p);
    goto done;
  }
  rc = build(ctx, p);
  if (rc < 0 && !p->build_failure) {
    program_free(p); /* out of memory, or nothing to remember */
    goto done;
  }
  p->refs = 1;
  p->next = ctx->programs;
  ctx->programs = p;
  *out = p;
done:
  cls__unlock(ctx);
  return rc;
}

bool cls__program_of(cls_context *ctx, const struct cls_program *prog) {
  for (struct cls_program *p = ctx->programs; p; p = p->next)
    if (p == prog)
      return true;
  return false;
}

CLS_API int cls_program_release(cls_context *ctx, cls_program *prog) {
  if (!ctx || !prog)
    return cls__error(CLS_EINVAL, 0, "cls_program_release: NULL argument");
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  ctx->handles_epoch++; /* a capture checks its kernels again */
  if (!cls__program_of(ctx, prog))
    rc = cls__error(CLS_EFOREIGN, 0, "cls_program_release: not a program of this context");
  else if (prog->refs == 0)
    rc = cls__error(CLS_ESTALE, 0, "cls_program_release: already released");
  else
    prog->refs--; /* kept for its kernels until the context goes */
  cls__unlock(ctx);
  return rc;
}
