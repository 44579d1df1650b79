/* The failure store: rules F1-F5, F9, F10.
 *
 * Everything here reaches buffers through slots the caller resolved, and
 * the failure table through the context, so every driver shares it
 * unchanged. */
#include "failure/failure.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct cls__failures *table(cls_context *ctx) {
  return &ctx->failures;
}

/* F9: one log line per failure, the backstop for a failure nobody reads.
 * Only what the record has: no OpenCL status when none is behind it (a
 * clstream refusal, a buffer never written), no stream or position when
 * it names none. */
static void log_failure(cls_context *ctx, struct cls__failure *f) {
  if (f->logged)
    return;
  f->logged = true;
  char cl[64] = "", where[64] = "";
  if (f->cl_status)
    snprintf(cl, sizeof cl, " (%s)", cls_cl_status_name(f->cl_status));
  if (f->stream >= 0 && f->position)
    snprintf(where, sizeof where, " on stream %d at position %llu", f->stream,
             (unsigned long long)f->position);
  else if (f->stream >= 0)
    snprintf(where, sizeof where, " on stream %d", f->stream);
  char origin[32] = "";
  if (f->origin > 0)
    snprintf(origin, sizeof origin, "on rank %d: ", f->origin - 1);
  else if (f->origin < 0)
    snprintf(origin, sizeof origin, "in another process: ");
  cls__log(&ctx->logger, CLS_LOG_ERRORS, "%s%s%s%s in %s%s%s%s%s: %s",
           f->async ? "async failure: " : "failure: ", origin, cls_err_name(f->status), cl,
           f->operation,
           f->kernel[0] ? " of '" : "", f->kernel, f->kernel[0] ? "'" : "", where, f->message);
}

struct cls__failure *cls__failure_mint(cls_context *ctx, int status, cl_int cl_status,
                                       const struct cls__cmd_at *at, bool async,
                                       const char *fmt, ...) {
  struct cls__failure *f = cls__failure_new();
  if (!f)
    return NULL;
  f->status = status;
  f->cl_status = cl_status;
  f->operation = at->op;
  cls__copy_name(f->kernel, at->kernel);
  f->stream = at->stream;
  f->position = at->position;
  f->async = async;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->message, sizeof f->message, fmt, ap);
  va_end(ap);
  table(ctx)->minted++;
  struct cls__stream *s = cls__stream_peek(ctx, at->stream);
  if (s) {
    s->stats.failures++;
    f->generation = s->generation;
  }
  log_failure(ctx, f);
  if (ctx->origin > 0) /* a rank: the failure may come back from another one */
    cls__failure_seen(ctx, f);
  return f;
}

/* f's identity, with the rank of this context for a record of its own;
 * false when it has none (no rank, no place in a stream). */
static bool identity(const cls_context *ctx, const struct cls__failure *f, struct cls__seen *k) {
  int origin = f->origin > 0 ? f->origin : f->origin == 0 ? ctx->origin : -1;
  if (origin <= 0 || f->stream < 0 || !f->position || f == &cls__never_written || f->provisional)
    return false;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char *p = f->kernel; *p; p++)
    h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  h = (h ^ 0xff) * 0x100000001b3ull; /* between the two */
  for (const char *p = f->message; *p; p++)
    h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  *k = (struct cls__seen){.origin = origin, .stream = f->stream, .status = f->status,
                          .cl_status = f->cl_status, .generation = f->generation,
                          .position = f->position, .text = h};
  return true;
}

static bool same_identity(const struct cls__seen *a, const struct cls__seen *b) {
  return a->origin == b->origin && a->stream == b->stream && a->status == b->status &&
         a->cl_status == b->cl_status && a->generation == b->generation &&
         a->position == b->position && a->text == b->text;
}

/* Entry e's record, unless the table's reference is the last (nothing
 * can name it any more): then it is let go, and the identity stays. */
static struct cls__failure *seen_record(struct cls__seen *e) {
  if (e->f && atomic_load(&e->f->refs) == 1) {
    cls__failure_unref(e->f);
    e->f = NULL;
  }
  return e->f;
}

struct cls__failure *cls__failure_known(cls_context *ctx, const struct cls__failure *f,
                                        bool *seen) {
  *seen = false;
  struct cls__seen k;
  struct cls__seen *t = table(ctx)->seen;
  if (!t || !identity(ctx, f, &k))
    return NULL;
  for (size_t i = 0; i < CLS__SEEN_MAX; i++)
    if (t[i].origin && same_identity(&t[i], &k)) {
      *seen = true;
      return seen_record(&t[i]);
    }
  return NULL;
}

void cls__failure_seen(cls_context *ctx, struct cls__failure *f) {
  struct cls__failures *ft = table(ctx);
  struct cls__seen k;
  if (!identity(ctx, f, &k))
    return;
  if (!ft->seen && !(ft->seen = calloc(CLS__SEEN_MAX, sizeof *ft->seen)))
    return; /* out of memory: a copy that arrives later is logged again */
  struct cls__seen *e = NULL;
  for (size_t i = 0; i < CLS__SEEN_MAX && !e; i++)
    if (ft->seen[i].origin && same_identity(&ft->seen[i], &k))
      e = &ft->seen[i]; /* its record was let go: f is the new one */
  if (!e) /* the oldest identity is forgotten */
    e = &ft->seen[ft->seen_next++ % CLS__SEEN_MAX];
  cls__failure_unref(e->f);
  *e = k;
  e->f = f;
  cls__failure_ref(f);
}

/* The texts of the last skip of this thread, for its detail (cls__skipped,
 * failure.h): copies, since the record may be gone by the time the detail
 * is asked for. */
static _Thread_local struct {
  char name[256];
  char input[96]; /* "" for "an input" */
  struct cls__failure root; /* the fields cls__error_append_root reads */
} last_skip;

static void copy_text(char *dst, size_t cap, const char *src) {
  size_t n = src ? strnlen(src, cap - 1) : 0;
  memcpy(dst, src ? src : "", n);
  dst[n] = '\0';
}

void cls__skip_render(void) {
  bool named = last_skip.name[0] != '\0';
  cls__error_append("%s%s%s%s on stream %d at position %llu skipped: %s carries the "
                    "failure ",
                    cls__last.op, named ? " of '" : "", last_skip.name, named ? "'" : "",
                    cls__last.stream, (unsigned long long)cls__last.position,
                    last_skip.input[0] ? last_skip.input : "an input");
  cls__error_append_root(&last_skip.root);
}

void cls__skip_copy(const char *name, const char *input, const struct cls__failure *f) {
  cls__last.name_of = name;
  cls__last.input_of = input;
  cls__last.serial = f->serial;
  copy_text(last_skip.name, sizeof last_skip.name, name);
  copy_text(last_skip.input, sizeof last_skip.input, input);
  struct cls__failure *r = &last_skip.root;
  r->origin = f->origin;
  r->status = f->status;
  r->cl_status = f->cl_status;
  r->async = f->async;
  r->operation = f->operation;
  memcpy(r->kernel, f->kernel, sizeof r->kernel);
  r->stream = f->stream;
  r->position = f->position;
  r->skipped = 0; /* the chain grows with every skip: the report counts it */
  copy_text(r->message, sizeof r->message, f->message);
}

void cls__failure_adopt(cls_context *ctx, struct cls__failure *f) {
  table(ctx)->minted++;
  struct cls__stream *s = cls__stream_peek(ctx, f->stream);
  if (s && !f->origin)
    s->stats.failures++;
  log_failure(ctx, f);
}

/* A slot still pointing at the never-written sentinel gets its own record:
 * the slow path of a check, taken once per such buffer. */
struct cls__failure *cls__materialize(cls_context *ctx, struct cls__slot *slot, cls_buffer h) {
  struct cls__failure *f = slot->failure;
  if (f == &cls__never_written) {
    int st = cls__handle_stream(h);
    const struct cls__cmd_at at = {.op = "alloc", .kernel = "", .stream = st};
    if (slot->image) /* named by its shape: its bytes are not its size */
      f = cls__failure_mint(ctx, CLS_ETAINTED, 0, &at, false,
                            "image of %zu x %zu x %zu pixels (%zu layer%s) allocated on stream %d "
                            "was never written",
                            slot->image->desc.width, slot->image->desc.height,
                            slot->image->desc.depth, slot->image->desc.array_size,
                            slot->image->desc.array_size == 1 ? "" : "s", st);
    else
      f = cls__failure_mint(ctx, CLS_ETAINTED, 0, &at, false,
                            "buffer of %zu byte%s allocated on stream %d was never written",
                            slot->size, slot->size == 1 ? "" : "s", st);
    if (!f)
      return &cls__never_written; /* out of memory: the sentinel still fails reads */
    if (ctx->trace)
      cls__trace_failure(ctx->trace, "failure", st, "alloc", 0, f->message);
    cls__slot_set_failure(slot, f);
    cls__failure_unref(f);
  } else if (f && f->provisional && !f->logged) {
    /* A write scope that never ended: its outputs stay tainted (F3). */
    if (f->scope_name && !f->kernel[0])
      cls__copy_name(f->kernel, f->scope_name);
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

struct cls__failure *cls__scope_record_new(cls_context *ctx) {
  struct cls__failures *ft = table(ctx);
  struct cls__failure *p = ft->spare;
  /* The spare is still held by buffers a scope left behind (or there is
   * none yet): those buffers keep it; take a new one. */
  if (p && p->scope_name && !p->kernel[0])
    cls__copy_name(p->kernel, p->scope_name);
  cls__failure_unref(p);
  p = cls__failure_new();
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
