/* F12: a refused call leaves a record on what it would have written.  Off
 * every hot path: a refusal is a mistake in the calling program. */
#include "core/refusal.h"
#include "core/kernel.h"
#include "failure/failure.h"
#include "failure/poll.h"
#include "base/handle.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdint.h>
#include <stdio.h>

static __attribute__((noinline)) void trace_refusal(cls_context *ctx,
                                                    const struct cls__refusal *r, uint64_t pos,
                                                    const char *message) {
  cls__trace_failure(ctx->trace, "refusal", r->stream, r->kernel ? r->kernel : r->op, pos,
                     message);
}

int cls__refused(cls_context *ctx, const struct cls__refusal *r, const struct cls__binding *dst,
                 size_t n, int rc) {
  bool any = false;
  for (size_t i = 0; i < n; i++)
    any |= (dst[i].access & CLS_WRITE) != 0;
  if (!any) {
    if (ctx->trace) /* nothing to mark: the refusal is on the timeline only */
      trace_refusal(ctx, r, 0, cls_last_error_detail());
    return rc;
  }
  /* The detail is the refusal's own text: kept for the record, and given
   * back to the caller after whatever the record's making sets. */
  char detail[sizeof ((struct cls__failure *)0)->message];
  snprintf(detail, sizeof detail, "%s", cls_last_error_detail());
  /* A valid stream gives the call a position, as a refused enqueue takes
   * one; an invalid one is named as given. */
  int err;
  struct cls__stream *s = (unsigned)r->stream < CLS_MAX_STREAMS
                              ? cls__stream_get(ctx, r->stream, &err)
                              : NULL;
  struct cls__cmd_at at = {.stream = r->stream,
                           .kind = r->kind,
                           .position = s ? ++s->issued : 0,
                           .op = r->op,
                           .kernel = r->kernel ? r->kernel : "",
                           .bind = dst,
                           .nbind = n};
  struct cls__failure *f = cls__failure_mint(
      ctx, rc, 0, &at, false, "%s%s%s%s on stream %d refused: %s: %s", r->op,
      r->kernel ? " of '" : "", at.kernel, r->kernel ? "'" : "", r->stream, cls_err_name(rc),
      detail);
  if (ctx->trace)
    trace_refusal(ctx, r, at.position, f ? f->message : detail);
  if (f) {
    for (size_t i = 0; i < n; i++)
      if (dst[i].access & CLS_WRITE)
        cls__slot_set_failure(dst[i].slot, f);
    /* A newer write than anything in flight: an earlier failure found
     * later (F8) leaves this record in place, as it does a skip's. */
    at.stamp = cls__stamp_writes(ctx, dst, n);
    /* Logged while commands are in flight, so that a replay sees these
     * writes in order (they take buffers out of its set), and never moved:
     * the entry reads nothing. */
    at.stream = s ? s->id : 0;
    if (ctx->log.len && cls__log_add(ctx, CLS__ENTRY_FAILED, 0, &at, NULL) > 0)
      cls__poll_all(ctx, false);
    cls__failure_unref(f);
  }
  return cls__error(rc, 0, "%s", detail);
}

/* Whether argument i, given as `a`, may have been written by the launch. */
static bool may_write(const struct cls_kernel *k, size_t i, const cls_arg *a) {
  if (a->access == CLS_READ)
    return k && i < CLS_MAX_ARGS && (k->writable >> i & 1);
  if (a->access == CLS_ACCESS_INFER)
    return !k || i >= CLS_MAX_ARGS || !(k->readonly >> i & 1);
  return true; /* a declared write, or no valid access: no knowing */
}

/* The destinations of a refused call of arguments `args` (a launch of k,
 * or with k NULL a foreign command, which has no signature). */
static int refused_args(cls_context *ctx, const struct cls__refusal *r,
                        const struct cls_kernel *k, size_t nargs, const cls_arg *args, int rc) {
  /* A count no array can have (nargs * sizeof *args would wrap) says
   * nothing of what `args` holds: nothing of it is read.  It also keeps
   * the multiplication below from wrapping (sizeof *dst < sizeof *args). */
  _Static_assert(sizeof(struct cls__binding) <= sizeof(cls_arg), "see above");
  if (!args || nargs > SIZE_MAX / sizeof *args)
    nargs = 0;
  struct cls__binding stack[CLS_MAX_ARGS] = {0}; /* {0}: quiets -Wmaybe-uninitialized */
  struct cls__binding *dst = stack;
  if (nargs > CLS_MAX_ARGS && !(dst = malloc(nargs * sizeof *dst))) {
    dst = stack;
    nargs = CLS_MAX_ARGS; /* out of memory: as many as the stack holds */
  }
  size_t n = 0;
  for (size_t i = 0; i < nargs; i++) {
    const cls_arg *a = &args[i];
    struct cls__slot *slot;
    if (a->kind != CLS_ARG_BUFFER || !may_write(k, i, a) || !(slot = cls__resolve(ctx, a->buffer)))
      continue;
    dst[n++] = (struct cls__binding){a->buffer, slot, CLS_WRITE};
  }
  rc = cls__refused(ctx, r, dst, n, rc);
  if (dst != stack)
    free(dst);
  return rc;
}

int cls__refused_launch(cls_context *ctx, const struct cls_kernel *k, int stream, size_t nargs,
                        const cls_arg *args, int rc) {
  struct cls__refusal r = {
      .kind = CLS__CMD_LAUNCH, .op = "launch", .kernel = k ? k->name : NULL, .stream = stream};
  return refused_args(ctx, &r, k, nargs, args, rc);
}

int cls__refused_foreign(cls_context *ctx, const char *label, int stream, size_t nargs,
                         const cls_arg *args, int rc) {
  struct cls__refusal r = {
      .kind = CLS__CMD_FOREIGN, .op = "foreign call", .kernel = label, .stream = stream};
  return refused_args(ctx, &r, NULL, nargs, args, rc);
}

int cls__refused_write(cls_context *ctx, int kind, const char *op, int stream, cls_buffer dst,
                       struct cls__slot *d, int rc) {
  struct cls__binding b = {dst, d, CLS_WRITE};
  struct cls__refusal r = {.kind = kind, .op = op, .stream = stream};
  return cls__refused(ctx, &r, &b, 1, rc);
}
