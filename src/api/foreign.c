/* Foreign commands (cls_foreign): a user callback that enqueues OpenCL
 * work of its own (a library's GEMM, an FFT, raw OpenCL) on a stream's
 * queue, run through the one command path as a launch is -- F2 skips it,
 * ordering waits for its inputs' producers, F3/F4 scope its writes, the
 * driver submits it, the factory's foreign() calls the callback and keeps
 * its event for F8.  Also the raw escape hatches (a stream's queue, a
 * buffer's memory object).  cls_foreign_run, which factories call, is
 * src/factory/foreign.c. */
#include "api/enter.h"
#include "core/command.h"
#include "core/refusal.h"
#include "base/handle.h"
#include "memory/memory.h"
#include "stream/pool.h"

#include <stdlib.h>
#include <string.h>

/* The context's copy of `label` (NULL: out of memory).  A program uses a
 * few labels, so a linear search; the first use of a label allocates. */
static const char *intern(cls_context *ctx, const char *label) {
  for (size_t i = 0; i < ctx->nlabels; i++)
    if (strcmp(ctx->labels[i], label) == 0)
      return ctx->labels[i];
  char *copy = strdup(label);
  if (!copy || !cls__grow((void **)&ctx->labels, &ctx->caplabels, ctx->nlabels + 1,
                          sizeof *ctx->labels, 8)) {
    free(copy);
    return NULL;
  }
  ctx->labels[ctx->nlabels++] = copy;
  return copy;
}

/* The arguments: buffers only, each with a plain access (there is no
 * signature to infer one from), resolved into cmd's bindings and the
 * callback's buffers.  Returns 1 when an input carries a failure, 0, or a
 * recorded error. */
static int check_args(cls_context *ctx, const char *label, struct cls__cmd *cmd,
                      struct cls_foreign_buffer *bufs, size_t nargs, const cls_arg *args) {
  if (nargs > CLS_MAX_ARGS)
    return cls__error(CLS_EINVAL, 0, "foreign call '%s': more than %d arguments", label,
                      CLS_MAX_ARGS);
  if (nargs && !args)
    return cls__error(CLS_EINVAL, 0, "foreign call '%s': NULL arguments", label);
  int carried = 0;
  for (size_t i = 0; i < nargs; i++) {
    const cls_arg *a = &args[i];
    if (a->kind != CLS_ARG_BUFFER)
      return cls__error(CLS_EARGKIND, 0,
                        "foreign call '%s' argument %zu: not a buffer (CLS_IN, CLS_OUT or "
                        "CLS_INOUT; pass scalars through the callback's data)",
                        label, i);
    if (a->access < CLS_READ || a->access > CLS_READ_WRITE)
      return cls__error(CLS_EINVAL, 0,
                        "foreign call '%s' argument %zu: access %d (CLS_IN, CLS_OUT or "
                        "CLS_INOUT: a foreign command has no signature to infer it from)",
                        label, i, a->access);
    struct cls__slot *s = cls__resolve(ctx, a->buffer);
    if (!s) {
      int err = cls__resolve_error(ctx, a->buffer);
      return cls__error(err, 0, "foreign call '%s' argument %zu: %s", label, i,
                        cls_strerror(err));
    }
    cmd->bind[i] = (struct cls__binding){a->buffer, s, a->access};
    size_t base;
    cl_mem mem = cls__slot_base(ctx, s, &base);
    bufs[i] = (struct cls_foreign_buffer){mem, base, s->size, a->access};
    carried |= s->failure != NULL;
  }
  cmd->nbind = nargs;
  return carried;
}

CLS_API int cls_foreign(cls_context *ctx, int stream, const char *label, cls_foreign_fn fn,
                        void *data, size_t nargs, const cls_arg *args) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd;
  struct cls_foreign_buffer bufs[CLS_MAX_ARGS];
  struct cls_foreign_cmd fc;
  /* The context's copy first: a refusal's record and log entry keep it. */
  const char *name = label && *label ? intern(ctx, label) : NULL;
  if (label && *label && !name) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto refused;
  }
  if (!label || !*label) {
    rc = cls__error(CLS_EINVAL, 0, "cls_foreign: %s label", label ? "empty" : "NULL");
    goto refused;
  }
  if (!fn) {
    rc = cls__error(CLS_EINVAL, 0, "foreign call '%s': NULL callback", label);
    goto refused;
  }
  if ((rc = check_args(ctx, label, &cmd, bufs, nargs, args)) < 0)
    goto refused;
  if (!cls__factory_foreign(ctx->pool.factory)) {
    rc = cls__error(CLS_ENOSYS, 0,
                    "foreign call '%s': the stream factory '%s' has no foreign commands "
                    "(version %u; 5 has them)",
                    label, ctx->pool.factory->name, ctx->pool.factory->version);
    goto refused;
  }
  if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.kind = CLS__CMD_FOREIGN;
  cmd.op = "foreign call";
  cmd.kernel = NULL;
  cmd.kcmd = (struct cls_kernel_cmd){.name = name};
  cmd.x = (struct cls_transfer){0};
  cmd.nwait = 0;
  fc = (struct cls_foreign_cmd){.fn = fn, .data = data, .label = name, .stream = stream,
                                .nbuffers = (cl_uint)nargs, .buffers = bufs};
  cmd.foreign = &fc;
  ctx->foreign_seen = true;
  rc = cls__run(ctx, &cmd, NULL, NULL);
  if (__builtin_expect(ctx->guard != NULL, 0))
    cls__guard_launched(ctx, &cmd, rc);
out:
  cls__unlock(ctx);
  return rc;
refused: /* F12: what it would have written says why it was not */
  rc = cls__refused_foreign(ctx, name, stream, nargs, args, rc);
  goto out;
}

CLS_API int cls_stream_queue(cls_context *ctx, int stream, cl_command_queue *queue) {
  CLS__ENTER_OUT(ctx, queue, stream);
  int rc = CLS_OK;
  *queue = NULL;
  cl_command_queue (*of)(void *) = cls__factory_queue(ctx->pool.factory);
  struct cls__stream *s = of ? cls__stream_get(ctx, stream, &rc) : NULL;
  if (s && s->backend)
    *queue = of(s->backend);
  if (!*queue && rc == CLS_OK)
    rc = cls__error(CLS_ENOSYS, 0, "cls_stream_queue: the stream factory '%s' gives no queue",
                    ctx->pool.factory->name);
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_buffer_mem(cls_context *ctx, cls_buffer buf, cl_mem *mem, size_t *offset,
                           size_t *size) {
  if (!ctx || !mem)
    return cls__error(CLS_EINVAL, 0, "cls_buffer_mem: NULL argument");
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  struct cls__slot *s = cls__resolve(ctx, buf);
  if (!s) {
    rc = cls__resolve_error(ctx, buf);
    rc = cls__error(rc, 0, "cls_buffer_mem: %s", cls_strerror(rc));
  } else {
    size_t base;
    *mem = cls__slot_base(ctx, s, &base);
    if (offset)
      *offset = base;
    if (size)
      *size = s->size;
  }
  cls__unlock(ctx);
  return rc;
}
