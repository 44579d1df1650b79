/* A buffer region and its failure record across a process boundary
 * (<clstream/wire.h>): the record's wire form, the read that gives bytes or
 * a record, and the write that makes a buffer take a record.  In
 * libclstream (it needs the failure store); the MPI binding
 * (libclstream-mpi, mpi/ at the top of the tree) calls only the public API.
 * Off every path of a program that does not use it. */
#include "core/refusal.h"
#include "failure/failure.h"
#include "failure/report.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "wire/record.h"

#include <clstream/wire.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t record_size(unsigned nskips) { return CLS__WIRE_RECORD_SIZE(nskips); }

/* The operation names a record may carry, as static strings (a record's
 * operation is one). */
static const char *const op_names[] = {"launch", "upload", "download", "copy", "fill",
                                       "canary fill", "alloc", "write scope", "send", "receive",
                                       "build", "range", "transfer"};
static const char *intern_op(const char *op) {
  for (size_t i = 0; i < sizeof op_names / sizeof *op_names; i++)
    if (op && strcmp(op, op_names[i]) == 0)
      return op_names[i];
  return "transfer";
}

static void copy_text(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

/* Failure f (of this process when f->origin is 0, whose rank + 1 is
 * `here`) into its wire form. */
static size_t pack_failure(const struct cls__failure *f, int here, struct cls__wire_record *w) {
  memset(w, 0, offsetof(struct cls__wire_record, skips));
  w->magic = CLS__WIRE_MAGIC;
  w->version = CLS__WIRE_VERSION;
  w->status = f->status;
  w->cl_status = f->cl_status;
  /* A stream named as given (cls_wire_fail) that is none: the message
   * names it. */
  w->stream = f->stream >= 0 && f->stream < CLS_MAX_STREAMS ? f->stream : -1;
  w->origin = f->origin > 0 ? f->origin : f->origin < 0 ? 0 : here;
  w->async = f->async;
  w->position = f->position;
  w->generation = f->generation;
  w->skipped = f->skipped;
  w->dropped = f->dropped;
  copy_text(w->operation, sizeof w->operation, f->operation);
  copy_text(w->kernel, sizeof w->kernel, f->kernel);
  copy_text(w->message, sizeof w->message, f->message);
  w->nskips = (uint16_t)f->nskips;
  for (size_t i = 0; i < f->nskips; i++) {
    struct cls__wire_skip *e = &w->skips[i];
    memset(e, 0, sizeof *e);
    e->kind = f->skips[i].kind;
    e->stream = f->skips[i].stream;
    int o = f->skips[i].origin;
    e->origin = o > 0 ? o : o < 0 ? 0 : here;
    e->position = f->skips[i].position;
    e->count = f->skips[i].count;
    copy_text(e->kernel, sizeof e->kernel, f->skips[i].kernel);
  }
  return record_size(w->nskips);
}

/* A read that was refused or failed without a failure on the buffer. */
static size_t pack_error(int status, int stream, const char *detail, int here,
                         struct cls__wire_record *w) {
  struct cls__failure f = {.status = status,
                           .cl_status = cls_last_cl_status(),
                           .operation = "send",
                           .stream = stream};
  snprintf(f.message, sizeof f.message, "send on stream %d failed: %s: %.140s", stream,
           cls_err_name(status), detail);
  return pack_failure(&f, here, w);
}

CLS_API int cls_wire_set_rank(cls_context *ctx, int rank) {
  if (!ctx || rank < 0 || rank == INT32_MAX)
    return cls__error(CLS_EINVAL, 0, "cls_wire_set_rank: %s",
                      ctx ? "negative rank" : "NULL context");
  CLS__LOCK(ctx);
  ctx->origin = rank + 1;
  cls__fault_set_rank(ctx->faults, rank);
  cls__unlock(ctx);
  return CLS_OK;
}

CLS_API int cls_wire_read(cls_context *ctx, int stream, cls_buffer src, size_t offset, void *dst,
                          size_t size, void *record, size_t *record_len) {
  if (!record || !record_len)
    return cls__error(CLS_EINVAL, 0, "cls_wire_read: NULL record");
  *record_len = 0;
  cls_report *r = NULL;
  int rc = cls_download(ctx, stream, src, offset, dst, size, &r);
  if (rc == CLS_OK)
    return CLS_OK;
  int here = ctx ? ctx->origin : 0;
  struct cls__wire_record w; /* on the stack: record may be dst */
  char detail[sizeof w.message];
  snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
  cl_int cl = cls_last_cl_status();
  /* A read whose producer failed may fail itself (PoCL fails a command
   * queued behind a failed one): the buffer's failure is the root. */
  if (rc == CLS_ECL && cls_check(ctx, 1, &src, &r) == CLS_ETAINTED) {
    rc = CLS_ETAINTED;
    snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
    cl = 0;
  }
  const struct cls__failure *f = cls__report_record(r, 0);
  if (f) {
    rc = CLS_ETAINTED;
    *record_len = pack_failure(f, here, &w);
  } else {
    *record_len = pack_error(rc, stream, detail, here, &w);
  }
  memcpy(record, &w, *record_len);
  cls_report_free(r);
  return cls__error(rc, cl, "%s", detail);
}

/* A text field: ends inside the field, with no control character before
 * that in a name or an operation (a message may quote anything). */
static bool text_ok(const char *t, size_t cap, bool names) {
  const unsigned char *end = memchr(t, '\0', cap);
  if (!end)
    return false;
  for (const unsigned char *c = (const unsigned char *)t; names && c < end; c++)
    if (*c < 0x20 || *c == 0x7f)
      return false;
  return true;
}

/* The most a position or count can be: a stream's command count. */
#define WIRE_COUNT_MAX ((uint64_t)INT64_MAX)

static int malformed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int malformed(const char *fmt, ...) {
  char why[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return cls__error(CLS_EINVAL, 0, "a malformed failure record: %s", why);
}

/* The record's own checks, every field's range: a malformed one is
 * refused whole, never trusted in part. */
static int unpack(const void *record, size_t len, struct cls__wire_record *w) {
  if (len < record_size(0) || len > sizeof *w)
    return cls__error(CLS_EINVAL, 0, "a failure record of %zu bytes (expected %zu to %zu)", len,
                      record_size(0), sizeof *w);
  memcpy(w, record, len);
  if (w->magic != CLS__WIRE_MAGIC || w->version != CLS__WIRE_VERSION)
    return cls__error(CLS_EINVAL, 0, "not a clstream failure record of version %d, or one from "
                      "a machine of another byte order", CLS__WIRE_VERSION);
  if (w->nskips > CLS__MAX_SKIP_ENTRIES || len != record_size(w->nskips))
    return malformed("%u skip entries in %zu bytes", w->nskips, len);
  if (w->status >= 0 || w->status <= CLS__ERR_LAST)
    return malformed("status %d is no CLS_E* code", (int)w->status);
  if (w->cl_status > 0 || w->cl_status < -99999)
    return malformed("OpenCL status %d", (int)w->cl_status);
  if (w->stream < -1 || w->stream >= CLS_MAX_STREAMS)
    return malformed("root stream %d is not -1..%d", (int)w->stream, CLS_MAX_STREAMS - 1);
  if (w->origin < 0)
    return malformed("origin %d is no rank + 1", (int)w->origin);
  if (w->async > 1 || w->pad)
    return malformed("async %u, padding %u", w->async, w->pad);
  if (w->position > WIRE_COUNT_MAX)
    return malformed("root position %llu", (unsigned long long)w->position);
  if (!text_ok(w->operation, sizeof w->operation, true) ||
      !text_ok(w->kernel, sizeof w->kernel, true) || !text_ok(w->message, sizeof w->message, false))
    return malformed("an operation, kernel or message that is no text of its field");
  if (w->dropped > WIRE_COUNT_MAX)
    return malformed("%llu launches dropped", (unsigned long long)w->dropped);
  uint64_t total = w->dropped; /* the chain's launches: its skip count */
  for (unsigned i = 0; i < w->nskips; i++) {
    const struct cls__wire_skip *e = &w->skips[i];
    if ((e->kind != CLS_SKIP_SKIPPED && e->kind != CLS_SKIP_UNTRUSTED &&
         e->kind != CLS_SKIP_REPLAY) || e->stream < 0 ||
        e->stream >= CLS_MAX_STREAMS || e->origin < 0 || e->pad ||
        e->position == 0 || e->position > WIRE_COUNT_MAX || e->count == 0 ||
        e->count > WIRE_COUNT_MAX - total || !text_ok(e->kernel, sizeof e->kernel, true) ||
        !e->kernel[0])
      return malformed("skip entry %u (kind %d, stream %d, origin %d, position %llu, count %llu)",
                       i, (int)e->kind, (int)e->stream, (int)e->origin,
                       (unsigned long long)e->position, (unsigned long long)e->count);
    total += e->count;
  }
  if (w->skipped != total)
    return malformed("%llu launches skipped, its entries count %llu",
                     (unsigned long long)w->skipped, (unsigned long long)total);
  return CLS_OK;
}

/* A chain entry's rank + 1, this context's own launches as 0 (a record of
 * its own that came back holds them so). */
static int entry_origin(const cls_context *ctx, int origin) {
  return origin == ctx->origin ? 0 : origin;
}

/* Another copy of failure `into` arrived as `from`: its chain entries that
 * `into` lacks join it (at the end: they ran before the receive, after
 * any launch of `into`'s that a replay may still move), and an entry both
 * have keeps the larger count, which a chain that grew since the earlier
 * copy has.  The skip count stays the sum of the entries and the dropped
 * ones. */
static void merge_chain(cls_context *ctx, struct cls__failure *into,
                        const struct cls__failure *from) {
  for (size_t i = 0; i < from->nskips; i++) {
    const struct cls__skip *e = &from->skips[i];
    int origin = entry_origin(ctx, e->origin);
    struct cls__skip *x = NULL;
    for (size_t j = 0; j < into->nskips && !x; j++) {
      struct cls__skip *c = &into->skips[j];
      if (entry_origin(ctx, c->origin) == origin && c->kind == e->kind &&
          c->stream == e->stream && c->position == e->position &&
          strcmp(c->kernel, e->kernel) == 0)
        x = c;
    }
    if (x) {
      if (e->count > x->count) {
        into->skipped += e->count - x->count;
        x->count = e->count;
      }
      continue;
    }
    into->skipped += e->count;
    if (into->nskips == CLS__MAX_SKIP_ENTRIES) {
      into->dropped += e->count;
      continue;
    }
    struct cls__skip *n = &into->skips[into->nskips++];
    *n = *e;
    n->key = NULL; /* never extended by a local skip */
    n->movable = false; /* nothing of it is in this context's log */
    n->stamp = n->last = ctx->stamp;
  }
  if (from->dropped > into->dropped) {
    into->skipped += from->dropped - into->dropped;
    into->dropped = from->dropped;
  }
}

/* Points dst at f as a write on stream s that ended with it would, taking
 * a position there. */
static void take(cls_context *ctx, struct cls__stream *s, cls_buffer h, struct cls__slot *slot,
                 struct cls__failure *f) {
  struct cls__binding b = {h, slot, CLS_WRITE};
  if (s) /* NULL: an invalid stream, named as given */
    ++s->issued;
  cls__slot_set_failure(slot, f);
  /* A newer write than anything in flight: an earlier failure found later
   * (F8) leaves this record in place. */
  cls__stamp_writes(ctx, &b, 1);
}

static struct cls__slot *resolve(cls_context *ctx, const char *fn, cls_buffer h, int *rc) {
  struct cls__slot *s = cls__resolve(ctx, h);
  if (!s) {
    int err = cls__resolve_error(ctx, h);
    *rc = cls__error(err, 0, "%s: buffer %#llx: %s", fn, (unsigned long long)h.bits,
                     cls_strerror(err));
  } else if (s->image) { /* bytes travel, not pixels */
    *rc = cls__error(CLS_EINVAL, 0,
                     "%s: handle %#llx names an image: copy it into a buffer "
                     "(cls_image_to_buffer) to send it",
                     fn, (unsigned long long)h.bits);
    return NULL;
  }
  return s;
}

CLS_API int cls_wire_taint(cls_context *ctx, int stream, cls_buffer dst, const void *record,
                           size_t record_len) {
  if (!ctx)
    return cls__error(CLS_EINVAL, 0, "cls_wire_taint: NULL context");
  CLS__LOCK(ctx);
  int rc;
  struct cls__wire_record w;
  struct cls__stream *s = NULL;
  struct cls__slot *slot = resolve(ctx, "cls_wire_taint", dst, &rc);
  if (!slot)
    goto out;
  if (!(s = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  if (!record) {
    rc = cls__error(CLS_EINVAL, 0, "cls_wire_taint: NULL record");
    goto refused;
  }
  if ((rc = unpack(record, record_len, &w)) < 0)
    goto refused;
  struct cls__failure *f = cls__failure_new();
  if (!f) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto refused;
  }
  f->status = w.status;
  f->cl_status = w.cl_status;
  f->operation = intern_op(w.operation);
  cls__copy_name(f->kernel, w.kernel);
  f->stream = w.stream;
  f->position = w.position;
  f->generation = w.generation;
  f->async = w.async != 0;
  f->origin = w.origin > 0 ? w.origin : -1;
  snprintf(f->message, sizeof f->message, "%s", w.message);
  f->skipped = w.skipped;
  f->dropped = w.dropped;
  f->nskips = w.nskips;
  for (unsigned i = 0; i < w.nskips; i++) {
    struct cls__skip *e = &f->skips[i];
    e->key = NULL; /* never extended by a local skip */
    e->kind = w.skips[i].kind;
    e->stream = w.skips[i].stream;
    e->origin = w.skips[i].origin > 0 ? w.skips[i].origin : -1;
    e->position = w.skips[i].position;
    e->count = w.skips[i].count;
    cls__copy_name(e->kernel, w.skips[i].kernel);
  }
  /* One failure, however many copies of it arrive by however many paths:
   * a copy of one this context has is that record, with what the copy's
   * chain adds to it; one it logged before is not logged again (F9). */
  bool seen = false;
  struct cls__failure *known = cls__failure_known(ctx, f, &seen);
  if (known) {
    merge_chain(ctx, known, f);
    cls__failure_unref(f);
    f = known;
    cls__failure_ref(f);
  } else {
    f->logged = seen;
    cls__failure_adopt(ctx, f);
    cls__failure_seen(ctx, f);
  }
  take(ctx, s, dst, slot, f);
  cls__failure_unref(f);
  rc = cls__read_report(ctx, "receive", stream, &dst, 1, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  /* dst must not keep its old bytes as if the transfer had written them. */
  {
    struct cls__binding b = {dst, slot, CLS_WRITE};
    struct cls__refusal r = {.op = "receive", .stream = stream};
    rc = cls__refused(ctx, &r, &b, 1, rc);
  }
  goto out;
}

CLS_API int cls_wire_fail(cls_context *ctx, int stream, cls_buffer dst, int status,
                          const char *op, const char *message) {
  if (!ctx || !message || status >= 0)
    return cls__error(CLS_EINVAL, 0, "cls_wire_fail: %s",
                      !ctx ? "NULL context" : !message ? "NULL message" : "status not negative");
  CLS__LOCK(ctx);
  int rc;
  struct cls__slot *slot = resolve(ctx, "cls_wire_fail", dst, &rc);
  if (slot) {
    /* A valid stream gives the failure a position, as a refusal's; an
     * invalid one is named as given. */
    struct cls__stream *s =
        (unsigned)stream < CLS_MAX_STREAMS ? cls__stream_get(ctx, stream, &rc) : NULL;
    op = intern_op(op);
    struct cls__failure *f = cls__failure_mint(
        ctx, status, 0,
        &(struct cls__cmd_at){
            .stream = stream, .position = s ? s->issued + 1 : 0, .op = op, .kernel = ""},
        false, "%s", message);
    if (f) {
      take(ctx, s, dst, slot, f);
      cls__failure_unref(f);
    }
    rc = cls__error(status, 0, "%s", message);
  }
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_wire_error(int code, const char *fmt, ...) {
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  if (fmt)
    vsnprintf(text, sizeof text, fmt, ap);
  else
    text[0] = '\0';
  va_end(ap);
  return cls__error(code, 0, "%s", text);
}

/* ------------------------------------------------------------------ */
/* Staging memory                                                      */
/* ------------------------------------------------------------------ */

struct cls_wire_host {
  cl_mem mem;
  cl_command_queue queue;
  void *ptr;
};

CLS_API int cls_wire_host_alloc(cls_context *ctx, size_t size, cls_wire_host **out, void **ptr) {
  if (out)
    *out = NULL;
  if (ptr)
    *ptr = NULL;
  if (!ctx || !out || !ptr || !size)
    return cls__error(CLS_EINVAL, 0, "cls_wire_host_alloc: %s",
                      size ? "NULL argument" : "size 0");
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  cl_int crc = CL_SUCCESS;
  struct cls_wire_host *h = calloc(1, sizeof *h);
  if (!h) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto out;
  }
  h->mem = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &crc);
  if (!h->mem)
    goto cl_failed;
  h->queue = clCreateCommandQueue(ctx->clctx, ctx->device, 0, &crc);
  if (!h->queue)
    goto cl_failed;
  h->ptr = clEnqueueMapBuffer(h->queue, h->mem, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0,
                              NULL, NULL, &crc);
  if (!h->ptr)
    goto cl_failed;
  *out = h;
  *ptr = h->ptr;
out:
  cls__unlock(ctx);
  return rc;
cl_failed: /* in reverse order */
  if (h->queue)
    clReleaseCommandQueue(h->queue);
  if (h->mem)
    clReleaseMemObject(h->mem);
  free(h);
  rc = cls__error(CLS_ECL, crc, "staging memory of %zu bytes: %s", size,
                  cls_cl_status_name(crc));
  goto out;
}

CLS_API void cls_wire_host_free(cls_wire_host *h) {
  if (!h)
    return;
  if (clEnqueueUnmapMemObject(h->queue, h->mem, h->ptr, 0, NULL, NULL) == CL_SUCCESS)
    clFinish(h->queue);
  clReleaseCommandQueue(h->queue);
  clReleaseMemObject(h->mem);
  free(h);
}
