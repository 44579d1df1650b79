/* Failure records and the failure store: rules F1-F5, F9, F10.
 *
 * Everything here reaches buffers through slots the caller resolved, and
 * the failure table through the driver's accessor, so both drivers share
 * this file unchanged. */
#include "failure/failure.h"
#include "failure/inflight.h"
#include "stream/pool.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh buffer points here until something writes it: nothing wrote its
 * bytes, so reading them must fail.  Never counted, never freed; the first
 * check that meets it mints a real record for that buffer. */
struct cls__failure cls__never_written = {.status = CLS_ETAINTED};

static atomic_size_t alive;

size_t cls__failures_alive(void) { return atomic_load(&alive); }

static struct cls__failure *failure_new(void) {
  struct cls__failure *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  atomic_init(&f->refs, 1);
  atomic_fetch_add(&alive, 1);
  return f;
}

void cls__failure_free(struct cls__failure *f) {
  free(f->build_log);
  free(f);
  atomic_fetch_sub(&alive, 1);
}

static void copy_name(char *dst, const char *src) {
  if (!src)
    src = "";
  size_t n = strlen(src);
  if (n >= CLS__NAME_MAX)
    n = CLS__NAME_MAX - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

void cls__failures_init(struct cls__failures *ft, const struct cls__logger *log) {
  ft->spare = NULL;
  ft->log = log;
  ft->minted = 0;
}

void cls__failures_fini(struct cls__failures *ft) {
  cls__failure_unref(ft->spare);
  ft->spare = NULL;
}

static struct cls__failures *table(cls_context *ctx) {
  return &ctx->failures;
}

/* F9: one log line per failure, the backstop for a failure nobody reads. */
static void log_failure(cls_context *ctx, struct cls__failure *f) {
  if (f->logged)
    return;
  f->logged = true;
  cls__log(&ctx->log, CLS_LOG_ERRORS, "%s%s (%s) in %s%s%s%s on stream %d at %llu: %s",
           f->async ? "async failure: " : "failure: ", cls_err_name(f->status),
           cls_cl_status_name(f->cl_status), f->operation, f->kernel[0] ? " of '" : "",
           f->kernel, f->kernel[0] ? "'" : "", f->stream, (unsigned long long)f->position,
           f->message);
}

struct cls__failure *cls__failure_mint(cls_context *ctx, int status, cl_int cl_status,
                                       const char *op, const char *kernel, int stream,
                                       uint64_t position, bool async, const char *fmt, ...) {
  struct cls__failure *f = failure_new();
  if (!f)
    return NULL;
  f->status = status;
  f->cl_status = cl_status;
  f->operation = op;
  copy_name(f->kernel, kernel);
  f->stream = stream;
  f->position = position;
  f->async = async;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->message, sizeof f->message, fmt, ap);
  va_end(ap);
  table(ctx)->minted++;
  struct cls__stream *s = cls__stream_peek(ctx, stream);
  if (s)
    s->stats.failures++;
  log_failure(ctx, f);
  return f;
}

/* A skip that does not extend the chain's last entry by pointer (see
 * cls__failure_add_skip in failure.h): compare by name, else a new entry. */
void cls__failure_add_skip_slow(struct cls__failure *f, int kind, const char *kernel, int stream,
                                uint64_t position) {
  if (f->nskips) {
    struct cls__skip *last = &f->skips[f->nskips - 1];
    if (last->kind == kind && last->stream == stream &&
        strncmp(last->kernel, kernel ? kernel : "", CLS__NAME_MAX - 1) == 0) {
      last->count++;
      return;
    }
  }
  if (f->nskips == CLS__MAX_SKIP_ENTRIES) {
    f->dropped++;
    return;
  }
  struct cls__skip *e = &f->skips[f->nskips++];
  e->key = kernel;
  e->kind = kind;
  e->stream = stream;
  e->position = position;
  e->count = 1;
  copy_name(e->kernel, kernel);
}

/* A slot still pointing at the never-written sentinel gets its own record:
 * the slow path of a check, taken once per such buffer. */
struct cls__failure *cls__materialize(cls_context *ctx, struct cls__slot *slot, cls_buffer h) {
  struct cls__failure *f = slot->failure;
  if (f == &cls__never_written) {
    int st = cls__handle_stream(h);
    f = cls__failure_mint(ctx, CLS_ETAINTED, 0, "alloc", "", st, 0, false,
                          "buffer of %zu bytes allocated on stream %d was never written",
                          slot->size, st);
    if (!f)
      return &cls__never_written; /* out of memory: the sentinel still fails reads */
    cls__slot_set_failure(slot, f);
    cls__failure_unref(f);
  } else if (f && f->provisional && !f->logged) {
    /* A write scope that never ended: its outputs stay tainted (F3). */
    if (f->scope_name && !f->kernel[0])
      copy_name(f->kernel, f->scope_name);
    log_failure(ctx, f);
  }
  return f;
}

uint64_t cls__stamp_writes(cls_context *ctx, const struct cls__binding *b, size_t n) {
  uint64_t stamp = ++ctx->stamp;
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE)
      b[i].slot->write_stamp = stamp;
  return stamp;
}

/* The write scope's record: the pooled spare while no buffer a scope left
 * behind still holds it, else a new one.  NULL: out of host memory. */
static struct cls__failure *scope_record(cls_context *ctx) {
  struct cls__failures *ft = table(ctx);
  struct cls__failure *p = ft->spare;
  if (p && p->refs == 1) {
    p->logged = false;
    return p;
  }
  /* The spare is still held by buffers a scope left behind (or there is
   * none yet): those buffers keep it; take a new one. */
  if (p && p->scope_name && !p->kernel[0])
    copy_name(p->kernel, p->scope_name);
  cls__failure_unref(p);
  p = failure_new();
  ft->spare = p;
  if (!p)
    return NULL;
  p->status = CLS_ELAUNCH;
  p->operation = "write scope";
  p->provisional = true;
  snprintf(p->message, sizeof p->message,
           "the work that was to write this buffer never finished its enqueue");
  return p;
}

struct cls__failure *cls__enter_write(cls_context *ctx, const struct cls__binding *b, size_t n) {
  struct cls__failure *p = NULL;
  for (size_t i = 0; i < n; i++)
    if (b[i].access & CLS_WRITE) {
      if (!p && !(p = scope_record(ctx)))
        return NULL;
      cls__slot_set_failure(b[i].slot, p);
    }
  return p;
}

