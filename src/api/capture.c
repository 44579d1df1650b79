/* Capture and replay, the prepared plan: between cls_capture_begin and
 * cls_capture_end each command is checked by its own call as if it ran,
 * then stored here with its bindings instead of running.  A replay
 * re-resolves every handle first (a freed buffer refuses the whole replay
 * before anything is enqueued), then hands each stored command to the one
 * command path, cls__run: F2 skips, the write scopes (F3/F4), the driver's
 * ordering (F7) and the F8 log hold as for any command.  What a replay no
 * longer does is the checking of arguments and ranges, done at capture. */
#include "api/enter.h"
#include "core/command.h"
#include "core/kernel.h"
#include "base/handle.h"
#include "failure/failure.h"
#include "failure/log.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
  struct cls__cmd cmd;           /* as recorded; pointers refreshed at replay */
  int stream;
  size_t global[3], local[3];
  bool has_local;
  signed char param[CLS_MAX_ARGS];   /* launch scalar i: parameter number, -1 none */
  unsigned char pidx[CLS_MAX_ARGS];  /* the arguments that take a parameter */
  unsigned nparam;
  signed char bparam[CLS_MAX_ARGS];  /* binding b: buffer parameter number, -1 none */
  unsigned char barg[CLS_MAX_ARGS];  /* binding b of a launch: its argument */
  bool swaps;                        /* a binding takes a buffer parameter */
  unsigned char akind[CLS_MAX_ARGS]; /* launch argument i: enum cls_arg_kind */
  size_t voff[CLS_MAX_ARGS];         /* launch scalar i: its bytes in vals */
  unsigned char pattern[128];        /* a fill's pattern, copied */
  unsigned char *vals;               /* a launch's scalars, copied */
};

struct cls_capture {
  cls_context *ctx;
  char name[24];   /* "capture #N": a whole-replay skip names it */
  struct entry *e;
  size_t n, cap;
  uint64_t epoch;  /* ctx->handles_epoch when the handles were last resolved */
  size_t nparams;
  struct {
    const void *ptr;
    size_t size;       /* a buffer parameter: the buffer's size */
    bool buffer;       /* cls_capture_buffer_param */
    cls_buffer handle; /* the buffer the capture's commands name */
    unsigned char kind;
  } params[CLS_MAX_ARGS];
};

CLS_API void cls_capture_destroy(cls_capture *cap) {
  if (!cap)
    return;
  for (size_t i = 0; i < cap->n; i++)
    free(cap->e[i].vals);
  free(cap->e);
  free(cap);
}

CLS_API int cls_capture_begin(cls_context *ctx) {
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  if (ctx->capture) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_begin: a capture is already in progress");
    goto out;
  }
  if (!(ctx->capture = calloc(1, sizeof *ctx->capture))) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto out;
  }
  ctx->capture->ctx = ctx;
  snprintf(ctx->capture->name, sizeof ctx->capture->name, "capture #%u", ++ctx->captures);
  ctx->capture->epoch = ~ctx->handles_epoch; /* the first replay resolves */
out:
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_capture_param(cls_context *ctx, const void *value, size_t size, int *index) {
  if (!value || !index || size == 0)
    return cls__error(CLS_EINVAL, 0, "cls_capture_param: NULL value or index, or size 0");
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  struct cls_capture *cap = ctx->capture;
  if (!cap) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_param: no capture in progress");
  } else if (cap->nparams == CLS_MAX_ARGS) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_param: more than %d parameters", CLS_MAX_ARGS);
  } else {
    cap->params[cap->nparams].ptr = value;
    cap->params[cap->nparams].size = size;
    *index = (int)cap->nparams++;
  }
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_capture_buffer_param(cls_context *ctx, cls_buffer buf, int *index) {
  if (!index)
    return cls__error(CLS_EINVAL, 0, "cls_capture_buffer_param: NULL index");
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  struct cls_capture *cap = ctx->capture;
  struct cls__slot *s = cls__resolve(ctx, buf);
  if (!cap) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_buffer_param: no capture in progress");
  } else if (!s) {
    int err = cls__resolve_error(ctx, buf);
    rc = cls__error(err, 0, "cls_capture_buffer_param: %s", cls_strerror(err));
  } else if (cap->nparams == CLS_MAX_ARGS) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_buffer_param: more than %d parameters",
                    CLS_MAX_ARGS);
  } else {
    cap->params[cap->nparams].buffer = true;
    cap->params[cap->nparams].handle = buf;
    cap->params[cap->nparams].size = s->size;
    cap->params[cap->nparams].kind = s->kind;
    *index = (int)cap->nparams++;
  }
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_capture_end(cls_context *ctx, cls_capture **out) {
  if (out)
    *out = NULL;
  if (!ctx || !out)
    return cls__error(CLS_EINVAL, 0, "cls_capture_end: NULL argument");
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  struct cls_capture *cap = ctx->capture;
  ctx->capture = NULL;
  if (!cap) {
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_end: no capture in progress");
  } else if (cap->n == 0) {
    cls_capture_destroy(cap);
    rc = cls__error(CLS_EINVAL, 0, "cls_capture_end: the capture holds no command");
  } else {
    /* The entries stop moving: what points into them is set once. */
    for (size_t i = 0; i < cap->n; i++) {
      struct entry *e = &cap->e[i];
      struct cls__cmd *cmd = &e->cmd;
      memset(e->bparam, -1, sizeof e->bparam);
      for (size_t b = 0; b < cmd->nbind; b++)
        for (size_t p = 0; p < cap->nparams; p++)
          if (cap->params[p].buffer && cap->params[p].handle.bits == cmd->bind[b].handle.bits) {
            e->bparam[b] = (signed char)p;
            e->swaps = true;
          }
      if (cmd->kind == CLS__CMD_FILL)
        cmd->x.pattern = e->pattern;
      if (cmd->kind != CLS__CMD_LAUNCH)
        continue;
      for (unsigned a = 0; a < cmd->kcmd.nargs; a++)
        if (e->akind[a] == CLS_ARG_SCALAR && e->param[a] < 0)
          cmd->kargs[a].value = e->vals + e->voff[a];
      for (unsigned a = 0, b = 0; a < cmd->kcmd.nargs; a++)
        if (e->akind[a] == CLS_ARG_BUFFER)
          e->barg[b++] = (unsigned char)a;
      cmd->kcmd.global = e->global;
      cmd->kcmd.local = e->has_local ? e->local : NULL;
      cmd->kcmd.args = cmd->kargs;
    }
    *out = cap;
  }
  cls__unlock(ctx);
  return rc;
}

int cls__capture_blocking(const char *call) {
  return cls__error(CLS_EINVAL, 0,
                    "%s inside a capture: a blocking transfer cannot be replayed (use the "
                    "_async call, then cls_sync after the replay)",
                    call);
}

int cls__capture_add(cls_context *ctx, const struct cls__cmd *cmd, const size_t *global,
                     const size_t *local, const cls_arg *args) {
  struct cls_capture *cap = ctx->capture;
  if (cap->n == cap->cap) {
    size_t ncap = cap->cap ? 2 * cap->cap : 16;
    struct entry *e = realloc(cap->e, ncap * sizeof *e);
    if (!e)
      return cls__error(CLS_ENOMEM, 0, "out of host memory");
    cap->e = e;
    cap->cap = ncap;
  }
  struct entry *e = &cap->e[cap->n];
  memset(e, 0, sizeof *e);
  e->cmd = *cmd;
  e->stream = cmd->stream->id;
  memset(e->param, -1, sizeof e->param);
  if (cmd->kind == CLS__CMD_FILL) {
    memcpy(e->pattern, cmd->x.pattern, cmd->x.pattern_size);
    e->cmd.x.pattern = NULL; /* set at replay: entries move as the array grows */
  }
  if (cmd->kind != CLS__CMD_LAUNCH) {
    cap->n++;
    return CLS_OK;
  }
  for (unsigned d = 0; d < cmd->kcmd.dims; d++) {
    e->global[d] = global[d];
    if (local)
      e->local[d] = local[d];
  }
  e->has_local = local != NULL;
  size_t bytes = 0;
  for (unsigned i = 0; i < cmd->kcmd.nargs; i++)
    if (args[i].kind == CLS_ARG_SCALAR)
      bytes += args[i].size;
  if (bytes && !(e->vals = malloc(bytes)))
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  bytes = 0;
  for (unsigned i = 0; i < cmd->kcmd.nargs; i++) {
    e->akind[i] = (unsigned char)args[i].kind;
    if (args[i].kind != CLS_ARG_SCALAR)
      continue;
    e->voff[i] = bytes;
    memcpy(e->vals + bytes, args[i].value, args[i].size);
    bytes += args[i].size;
    for (size_t p = 0; p < cap->nparams; p++)
      if (cap->params[p].ptr == args[i].value && cap->params[p].size == args[i].size)
        e->param[i] = (signed char)p;
    if (e->param[i] >= 0)
      e->pidx[e->nparam++] = (unsigned char)i;
  }
  cap->n++;
  return CLS_OK;
}

/* Before anything is enqueued: every handle and kernel still live, each
 * binding's slot re-resolved (slots move when a table grows), and each
 * launch's buffer arguments pointed at their slots' cl_mem.  Only when a
 * slot or program changed since the last replay (handles_epoch): else the
 * pointers of the last replay still hold. */
static int prepare(cls_context *ctx, struct cls_capture *cap) {
  if (cap->epoch == ctx->handles_epoch)
    return CLS_OK;
  for (size_t i = 0; i < cap->n; i++) {
    struct cls__cmd *cmd = &cap->e[i].cmd;
    if (cmd->kind == CLS__CMD_LAUNCH && !cls__kernel_valid(ctx, cmd->kernel))
      return cls__error(CLS_ESTALE, 0, "cls_replay: command %zu: its kernel is gone", i);
    for (size_t b = 0; b < cmd->nbind; b++) {
      if (cap->e[i].bparam[b] >= 0)
        continue; /* the replay's buffer, resolved by cls_replay */
      struct cls__slot *s = cls__resolve(ctx, cmd->bind[b].handle);
      if (!s)
        return cls__error(CLS_ESTALE, 0,
                          "cls_replay: command %zu (%s on stream %d): a buffer it uses was "
                          "freed; nothing was enqueued",
                          i, cmd->op, cap->e[i].stream);
      cmd->bind[b].slot = s;
    }
    if (cmd->kind != CLS__CMD_LAUNCH)
      continue;
    size_t b = 0; /* a buffer argument takes the next binding */
    for (unsigned a = 0; a < cmd->kcmd.nargs; a++)
      if (cap->e[i].akind[a] == CLS_ARG_BUFFER)
        cmd->kargs[a].value = &cmd->bind[b++].slot->mem;
  }
  cap->epoch = ctx->handles_epoch;
  return CLS_OK;
}

/* The buffer parameters of this replay into e's bindings. */
static void bind_params(struct entry *e, const cls_param *params,
                        struct cls__slot *const *swap) {
  struct cls__cmd *cmd = &e->cmd;
  for (size_t b = 0; b < cmd->nbind; b++) {
    int p = e->bparam[b];
    if (p < 0)
      continue;
    cmd->bind[b].handle = *(const cls_buffer *)params[p].value;
    cmd->bind[b].slot = swap[p];
    if (cmd->kind == CLS__CMD_LAUNCH)
      cmd->kargs[e->barg[b]].value = &swap[p]->mem;
  }
}

/* The failure that skips the whole replay, or NULL.  Whole: one failure,
 * known (not provisional, not of a write still in flight, which F8 may
 * yet move), on the inputs of the replay (what it reads before writing),
 * and reaching every command through the replay's own writes.  Anything
 * less runs command by command: F2 then skips exactly what the failure
 * reaches and the rest runs.  A download in the capture reports, not
 * skips: also command by command. */
#define WHOLE_MAX_WRITTEN 64
static struct cls__failure *whole_skip_failure(cls_context *ctx, struct cls_capture *cap,
                                               const cls_param *params,
                                               struct cls__slot *const *swap) {
  const struct cls__slot *written[WHOLE_MAX_WRITTEN];
  size_t nwritten = 0;
  struct cls__failure *f = NULL;
  uint64_t since = ctx->log.len ? cls__log_oldest_stamp(ctx) : UINT64_MAX;
  for (size_t i = 0; i < cap->n; i++) {
    struct entry *e = &cap->e[i];
    const struct cls__cmd *cmd = &e->cmd;
    if (cmd->kind == CLS__CMD_READ)
      return NULL;
    if (e->swaps)
      bind_params(e, params, swap);
    bool reached = false;
    for (size_t b = 0; b < cmd->nbind; b++) {
      const struct cls__slot *slot = cmd->bind[b].slot;
      if (!(cmd->bind[b].access & CLS_READ))
        continue;
      bool ours = false;
      for (size_t w = 0; w < nwritten && !ours; w++)
        ours = written[w] == slot;
      if (ours) {
        reached = true;
        continue;
      }
      struct cls__failure *g = slot->failure;
      if (slot->write_stamp >= since || g == &cls__never_written || (g && g->provisional) ||
          (g && f && g != f))
        return NULL;
      if (g) {
        f = g;
        reached = true;
      }
    }
    if (!reached)
      return NULL;
    for (size_t b = 0; b < cmd->nbind; b++)
      if (cmd->bind[b].access & CLS_WRITE) {
        if (nwritten == WHOLE_MAX_WRITTEN)
          return NULL;
        written[nwritten++] = cmd->bind[b].slot;
      }
  }
  return f;
}

/* The replay skipped as a whole on f: every command takes its position
 * on its stream and its write set takes f, as F2 does; f's chain gets one
 * entry naming the capture and the count.  Returns the first command's
 * code. */
static int skip_whole(cls_context *ctx, struct cls_capture *cap, struct cls__failure *f) {
  int first_stream = -1, rc = CLS_OK;
  uint64_t first_pos = 0, first_stamp = 0;
  for (size_t i = 0; i < cap->n; i++) {
    struct cls__cmd *cmd = &cap->e[i].cmd;
    struct cls__stream *s = cls__stream_get(ctx, cap->e[i].stream, &rc);
    if (!s)
      return rc;
    uint64_t pos = ++s->issued;
    uint64_t stamp = cls__propagate_writes(ctx, f, cmd->bind, cmd->nbind);
    s->stats.skips++;
    if (ctx->trace)
      cls__trace_skip(ctx->trace, s->id, cmd->kind == CLS__CMD_LAUNCH ? cmd->kcmd.name : cmd->op,
                      pos, f->message);
    if (first_stream < 0) {
      first_stream = s->id;
      first_pos = pos;
      first_stamp = stamp;
    }
  }
  cls__failure_add_skip_run(f, CLS_SKIP_REPLAY, cap->name, first_stream, first_pos, first_stamp,
                            cap->n);
  /* The first command's code, as uncaptured: a skipped copy is
   * CLS_ETAINTED (its source carries a failure), anything else skipped
   * CLS_ESKIPPED. */
  int code = cap->e[0].cmd.kind == CLS__CMD_COPY ? CLS_ETAINTED : CLS_ESKIPPED;
  rc = cls__error(code, 0, "cls_replay: %s skipped as a whole (%zu command%s): ", cap->name,
                  cap->n, cap->n == 1 ? "" : "s");
  cls__error_append_root(f);
  return rc;
}

/* The stored command, its pointers made current (stream, cl_mems, the
 * kernel's lane, scalars and parameters), through the command path. */
static int replay_one(cls_context *ctx, struct entry *e, const cls_param *params,
                      struct cls__slot *const *swap) {
  struct cls__cmd *cmd = &e->cmd;
  int rc = CLS_OK;
  if (e->swaps)
    bind_params(e, params, swap);
  if (!(cmd->stream = cls__stream_get(ctx, e->stream, &rc)))
    return rc;
  cmd->nwait = 0;
  cmd->x.blocking = 0;
  switch (cmd->kind) {
  case CLS__CMD_LAUNCH: {
    /* Buffers point at their slots (prepare); a parameter at this
     * replay's value.  The rest points into the entry, set once. */
    for (unsigned i = 0; i < e->nparam; i++)
      cmd->kargs[e->pidx[i]].value = params[e->param[e->pidx[i]]].value;
    cls__kernel_for(cmd->kernel, e->stream, &cmd->kcmd.kernel, &cmd->kcmd.memo);
    rc = cls__run(ctx, cmd, NULL, NULL);
    if (__builtin_expect(ctx->guard != NULL, 0))
      cls__guard_launched(ctx, cmd, rc);
    return rc;
  }
  case CLS__CMD_FILL:
    cmd->x.dst = cmd->bind[0].slot->mem;
    break;
  case CLS__CMD_WRITE:
    cmd->x.dst = cmd->bind[0].slot->mem;
    break;
  case CLS__CMD_READ:
    cmd->x.src = cmd->bind[0].slot->mem;
    return cls__download_run(ctx, cmd, NULL);
  case CLS__CMD_COPY:
    cmd->x.src = cmd->bind[0].slot->mem;
    cmd->x.dst = cmd->bind[1].slot->mem;
    break;
  }
  return cls__run(ctx, cmd, NULL, NULL);
}

CLS_API int cls_replay(cls_context *ctx, cls_capture *cap, size_t nparams,
                       const cls_param *params) {
  if (!cap)
    return cls__error(CLS_EINVAL, 0, "cls_replay: NULL capture");
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  if (cap->ctx != ctx) {
    rc = cls__error(CLS_EINVAL, 0, "cls_replay: the capture is of another context");
    goto out;
  }
  if (ctx->capture) {
    rc = cls__error(CLS_EINVAL, 0, "cls_replay inside a capture");
    goto out;
  }
  if (nparams != cap->nparams || (nparams && !params)) {
    rc = cls__error(CLS_EINVAL, 0, "cls_replay: %zu parameters given, the capture has %zu",
                    nparams, cap->nparams);
    goto out;
  }
  struct cls__slot *swap[CLS_MAX_ARGS]; /* buffer parameters, resolved */
  for (size_t p = 0; p < nparams; p++) {
    if (cap->params[p].buffer) {
      if (!params[p].value || params[p].size != sizeof(cls_buffer)) {
        rc = cls__error(CLS_EINVAL, 0,
                        "cls_replay: parameter %zu is a buffer: give a cls_buffer (%zu bytes)",
                        p, sizeof(cls_buffer));
        goto out;
      }
      cls_buffer h = *(const cls_buffer *)params[p].value;
      if (!(swap[p] = cls__resolve(ctx, h))) {
        int err = cls__resolve_error(ctx, h);
        rc = cls__error(err, 0, "cls_replay: buffer parameter %zu: %s; nothing was enqueued", p,
                        cls_strerror(err));
        goto out;
      }
      if (swap[p]->size != cap->params[p].size || swap[p]->kind != cap->params[p].kind) {
        rc = cls__error(CLS_EINVAL, 0,
                        "cls_replay: buffer parameter %zu: %zu bytes, the captured one had %zu "
                        "(the same size and kind are needed)",
                        p, swap[p]->size, cap->params[p].size);
        goto out;
      }
      continue;
    }
    if (!params[p].value || params[p].size != cap->params[p].size) {
      rc = cls__error(CLS_EINVAL, 0,
                      "cls_replay: parameter %zu: %zu bytes given, %zu marked at capture", p,
                      params[p].value ? params[p].size : 0, cap->params[p].size);
      goto out;
    }
  }
  if ((rc = prepare(ctx, cap)) < 0)
    goto out;
  struct cls__failure *f = whole_skip_failure(ctx, cap, params, swap);
  if (f) {
    rc = skip_whole(ctx, cap, f);
    goto out;
  }
  /* Each command runs or is skipped as it would uncaptured; the first
   * error is the replay's. */
  for (size_t i = 0; i < cap->n; i++) {
    int r = replay_one(ctx, &cap->e[i], params, swap);
    if (r < 0 && rc == CLS_OK)
      rc = r;
  }
out:
  cls__unlock(ctx);
  return rc;
}
