/* Capture and replay, the prepared plan: between cls_capture_begin and
 * cls_capture_end each command is checked by its own call as if it ran,
 * then stored here with its bindings instead of running.  A replay
 * re-resolves every handle first (a freed buffer refuses the whole replay
 * before anything is enqueued), then hands each stored command to the one
 * command path, cls__run: F2 skips, the write scopes (F3/F4), the driver's
 * ordering (F7) and the F8 log hold as for any command.  What a replay no
 * longer does is the checking of arguments and ranges, done at capture.
 *
 * The command-buffer backend (cl_khr_command_buffer, CLS_CAPTURE): each
 * maximal run of two or more consecutive launches, buffer copies and
 * buffer fills on one stream is recorded into one command buffer on that
 * stream's queue, and replayed as ONE command through cls__run, as a
 * foreign command is (its bindings: the union of the run's, each with its
 * strongest access) -- so F2, F3/F4, F7 and F8 hold with the run as the
 * unit of attribution.  What the extension cannot hold (uploads,
 * downloads, images, foreign commands) stays on the plan between runs.
 * A run is recorded at its first replay and again whenever its queue, a
 * cl_mem it names or a parameter value it was recorded with changed (no
 * mutable dispatch: correct, slower).  A run whose inputs are tainted
 * replays on the plan (exact F2 skips). */
#include "api/capture-impl.h"
#include "api/enter.h"
#include "core/command.h"
#include "core/kernel.h"
#include "base/handle.h"
#include "device/cmdbuf.h"
#include "failure/failure.h"
#include "failure/log.h"
#include "failure/poll.h"
#include "failure/replay.h"
#include "stream/pool.h"
#include "trace/trace.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Releases the recordings (all but `keep`'s run's current ones when
 * `keep`: the retired ones only).  Their commands have finished. */
static void release_recs(struct cls_capture *cap, bool retired_only) {
  struct rec **p = &cap->recs;
  while (*p) {
    struct rec *r = *p;
    if (retired_only && (r->run->rec == r || r->run->direct)) { /* a plan run's are reused */
      p = &r->next;
      continue;
    }
    *p = r->next;
    if (r->run->rec == r)
      r->run->rec = NULL;
    if (r->api)
      r->api->release(r->cb);
    if (r->queue)
      clReleaseCommandQueue(r->queue);
    for (size_t k = 0; k < r->nk; k++)
      clReleaseKernel(r->k[k]);
    for (size_t k = 0; k < RUN_STREAMS; k++)
      if (r->last[k])
        clReleaseEvent(r->last[k]);
    for (size_t k = 0; k < r->nkept; k++)
      clReleaseEvent(r->kept[k]);
    free(r->kept);
    free(r->evs);
    free(r->dm);
    free(r->mems);
    free(r->pv);
    free(r);
  }
  cap->retired = 0;
}

static void unlink_cb(cls_context *ctx, struct cls_capture *cap) {
  for (struct cls_capture **p = &ctx->cb_captures; *p; p = &(*p)->next_cb)
    if (*p == cap) {
      *p = cap->next_cb;
      return;
    }
}

void cls__capture_detach_all(cls_context *ctx) {
  while (ctx->cb_captures) {
    struct cls_capture *cap = ctx->cb_captures;
    ctx->cb_captures = cap->next_cb;
    release_recs(cap, false);
    cap->ctx = NULL;
  }
}

CLS_API void cls_capture_destroy(cls_capture *cap) {
  if (!cap)
    return;
  if (cap->recs && cap->ctx) {
    /* A replay's command buffer may still run, or wait in the driver:
     * everything finishes first (the context's lock, as a sync). */
    cls_context *ctx = cap->ctx;
    if (cls__lock(ctx, __func__) == CLS_OK) {
      cls__poll_all(ctx, true);
      unlink_cb(ctx, cap);
      release_recs(cap, false);
      cls__unlock(ctx);
    }
  }
  for (size_t i = 0; i < cap->n; i++)
    free(cap->e[i].vals);
  for (size_t r = 0; r < cap->nruns; r++) {
    free(cap->runs[r].mems);
    free(cap->runs[r].pv);
    free(cap->runs[r].kinds);
    free(cap->runs[r].names);
    free(cap->runs[r].mstream);
    free(cap->runs[r].steps);
    free(cap->runs[r].ops);
  }
  free(cap->runs);
  free(cap->e);
  free(cap);
}

CLS_API int cls_capture_info(const cls_capture *cap, struct cls_capture_stats *out) {
  if (!cap || !out)
    return cls__error(CLS_EINVAL, 0, "cls_capture_info: NULL argument");
  *out = (struct cls_capture_stats){.commands = cap->n, .backend = "plan"};
  for (size_t r = 0; r < cap->nruns; r++)
    if (!cap->runs[r].off) {
      out->runs++;
      out->in_runs += cap->runs[r].n;
      if (!cap->runs[r].direct)
        out->backend = "command-buffer";
    }
  out->recordings = atomic_load(&((cls_capture *)cap)->recordings);
  out->enqueues = atomic_load(&((cls_capture *)cap)->enqueues);
  return CLS_OK;
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

/* ------------------------------------------------------------------ */
/* The command-buffer backend                                          */
/* ------------------------------------------------------------------ */

/* Whether cl_khr_command_buffer can hold the entry: a launch binding no
 * image, a copy or fill of buffers. */
static bool recordable(const struct entry *e) {
  const struct cls__cmd *cmd = &e->cmd;
  if (cmd->kind == CLS__CMD_COPY || cmd->kind == CLS__CMD_FILL)
    return !cmd->x.image && cmd->bind[0].slot->kind != CLS__KIND_IMAGE &&
           (cmd->nbind < 2 || cmd->bind[1].slot->kind != CLS__KIND_IMAGE);
  if (cmd->kind != CLS__CMD_LAUNCH)
    return false;
  for (size_t b = 0; b < cmd->nbind; b++)
    if (cmd->bind[b].slot->kind == CLS__KIND_IMAGE)
      return false;
  return true;
}

/* Which backend the capture takes, by CLS_CAPTURE and, under auto, the
 * probe of the device of its first stream (logged once per device).
 * Exact attribution (CLS_PRECISE=1) and guard mode keep the plan: each
 * command its own event, each launch its own check.  So does automatic
 * relocation with recovery (CLS_RELOCATE, CLS_RECOVER): a lost queue's
 * command runs again on the fresh queue within the call or the driver's
 * hand-over, where a command buffer recorded for the retired queue cannot
 * go, while the plan's commands can. */
static bool want_cb(cls_context *ctx, struct cls_capture *cap) {
  if (ctx->capture_mode == CLS__CAPTURE_PLAN || ctx->capture_mode == CLS__CAPTURE_COMMANDS ||
      !ctx->ranged || ctx->guard ||
      !cls__factory_queue(ctx->pool.factory) || !cls__factory_foreign(ctx->pool.factory))
    return false;
  if (ctx->relocate != CLS__RELOCATE_OFF && ctx->recover) {
    if (!ctx->said_no_cb) {
      ctx->said_no_cb = true;
      cls__log(&ctx->logger, CLS_LOG_STREAMS,
               "capture: relocation with recovery on: the prepared plan replays (a command "
               "buffer is recorded for one queue)");
    }
    return false;
  }
  if (ctx->capture_mode == CLS__CAPTURE_CB)
    return true;
  if (cap->nparams) /* re-recorded at each change: the plan's cost is known */
    return false;
  int rc;
  struct cls__stream *s = cls__stream_get(ctx, cap->e[0].stream, &rc);
  int dev = s ? s->device : 0;
  double ratio;
  bool now;
  bool faster = cls__cb_faster(ctx->clctx, ctx->platform, ctx->devices[dev], &ratio, &now);
  if (now)
    cls__log(&ctx->logger, CLS_LOG_STREAMS,
             "capture: device %d: %s; %s", dev,
             ratio > 0 ? "probed cl_khr_command_buffer" : "no cl_khr_command_buffer probe",
             ratio > 0 ? (faster ? "command buffers chosen" : "the prepared plan chosen")
                       : "the prepared plan");
  if (now && ratio > 0)
    cls__log(&ctx->logger, CLS_LOG_STREAMS,
             "capture: device %d: %d launches in a command buffer take %.2fx their single "
             "enqueues (fastest of %d rounds each; command buffers need 0.95 or less)",
             dev, CLS__CB_PROBE_N, ratio, CLS__CB_PROBE_ROUNDS);
  return faster;
}

/* Whether the plan enqueues its runs of one stream as one command each
 * (direct_enqueue): under the conditions that keep command buffers off
 * the plan too, since a run is then the unit of attribution (ranged: the
 * run is a range) and of F2 (its inputs checked once).  Not where command
 * buffers were asked for and cannot be had (CLS_CAPTURE=command-buffer:
 * runs of one stream command by command, as documented; runs over
 * several streams stand beside command buffers whether or not the device
 * has them: plan_runs), nor under CLS_CAPTURE=commands (each command its
 * own unit, as uncaptured). */
static bool want_direct(cls_context *ctx) {
  return ctx->capture_mode != CLS__CAPTURE_CB && ctx->capture_mode != CLS__CAPTURE_COMMANDS &&
         ctx->ranged && !ctx->guard &&
         cls__factory_foreign(ctx->pool.factory) &&
         !(ctx->relocate != CLS__RELOCATE_OFF && ctx->recover);
}

/* The end of the run that starts at entry i: entries that fit one command
 * (bindings), on i's stream, or with `multi` on at most RUN_STREAMS
 * streams of i's stream's device (as placed now) and taking no buffer
 * parameter (the order inside is planned on the captured buffers).
 * *nst: the streams it spans. */
static size_t run_end(const struct cls_capture *cap, size_t i, bool multi, size_t *nst) {
  size_t j = i, nu = 0;
  cls_buffer seen[CLS_MAX_ARGS];
  int st[RUN_STREAMS];
  *nst = 0;
  while (j < cap->n && recordable(&cap->e[j]) &&
         (multi ? !cap->e[j].swaps && j - i < MULTI_MAX &&
                      cap->e[j].cmd.stream->device == cap->e[i].cmd.stream->device
                : cap->e[j].stream == cap->e[i].stream)) {
    const struct cls__cmd *cmd = &cap->e[j].cmd;
    size_t more = 0, k = 0;
    for (size_t b = 0; b < cmd->nbind; b++) {
      bool dup = false;
      for (size_t u = 0; u < nu && !dup; u++)
        dup = seen[u].bits == cmd->bind[b].handle.bits;
      more += !dup;
    }
    if (nu + more > CLS_MAX_ARGS)
      break;
    while (k < *nst && st[k] != cap->e[j].stream)
      k++;
    if (k == *nst) {
      if (k == RUN_STREAMS)
        break;
      st[(*nst)++] = cap->e[j].stream;
    }
    for (size_t b = 0; b < cmd->nbind; b++) {
      bool dup = false;
      for (size_t u = 0; u < nu && !dup; u++)
        dup = seen[u].bits == cmd->bind[b].handle.bits;
      if (!dup)
        seen[nu++] = cmd->bind[b].handle;
    }
    j++;
  }
  return j;
}

/* Beside command buffers, a run over several streams [i, j) ends where
 * two entries in a row are on one stream: a command buffer takes them
 * from there.  What is left alternates streams, so two entries or more
 * of it span two streams or more. */
static size_t cut_at_pair(const struct cls_capture *cap, size_t i, size_t j) {
  for (size_t k = i; k + 1 < j; k++)
    if (cap->e[k].stream == cap->e[k + 1].stream)
      return k;
  return j;
}

/* The runs of a capture: maximal sequences of two or more recordable
 * entries on one stream whose bindings fit one command -- command buffers
 * where the capture takes them, else (want_direct) plan runs -- and,
 * where cls__multi_wanted, plan runs spanning several streams, also
 * beside command buffers: a command buffer holds one queue's commands,
 * and a stretch that alternates streams would otherwise go command by
 * command, an event each.  Nothing recorded yet: that is the first
 * replay's. */
static int plan_runs(cls_context *ctx, struct cls_capture *cap) {
  bool direct = !want_cb(ctx, cap);
  if (direct && !want_direct(ctx))
    return CLS_OK;
  /* Past here the plan's runs' conditions hold (want_cb asks the same),
   * CLS_CAPTURE=command-buffer's choice aside. */
  bool multi = cls__multi_wanted(ctx);
  size_t i = 0;
  while (i < cap->n) {
    if (!recordable(&cap->e[i])) {
      i++;
      continue;
    }
    size_t nst = 0, j = multi ? run_end(cap, i, true, &nst) : i;
    if (multi && !direct)
      j = cut_at_pair(cap, i, j);
    bool over = nst > 1 && j - i >= 2;
    if (!over)
      j = run_end(cap, i, false, &nst);
    if (j == i) { /* one command's bindings do not fit: cannot happen */
      i++;
      continue;
    }
    if (j - i < 2) {
      i = j;
      continue;
    }
    if (!cls__grow((void **)&cap->runs, &cap->capruns, cap->nruns + 1, sizeof *cap->runs,
                   1))
      return cls__error(CLS_ENOMEM, 0, "out of host memory");
    struct run *r = &cap->runs[cap->nruns++];
    memset(r, 0, sizeof *r);
    r->first = i;
    r->n = j - i;
    r->stream = cap->e[i].stream;
    r->direct = direct || over;
    r->multi = over;
    i = j;
  }
  /* The array stops moving: entries point at their runs. */
  for (size_t k = 0; k < cap->nruns; k++) {
    struct run *r = &cap->runs[k];
    cap->e[r->first].run = r;
    const struct cls__cmd *c0 = &cap->e[r->first].cmd;
    snprintf(r->label, sizeof r->label, "%s commands %zu-%zu (%s...)", cap->name, r->first,
             r->first + r->n - 1, c0->kind == CLS__CMD_LAUNCH ? c0->kcmd.name : c0->op);
    /* The union's access: read from outside the run where a member
     * reads it before any earlier member wrote it whole (a member's own
     * bindings count as read before its write: k(out X, in X) reads X);
     * written as its members write it, partial (CLS__PARTIAL, which keeps
     * a ranged failure: F4) unless one of them writes it whole. */
    bool whole[CLS_MAX_ARGS] = {false};
    for (size_t q = r->first; q < r->first + r->n; q++) {
      const struct entry *e = &cap->e[q];
      r->nmem += e->cmd.nbind;
      for (unsigned p = 0; p < e->nparam; p++)
        r->npv += e->cmd.kargs[e->pidx[p]].size;
      size_t touched[CLS_MAX_ARGS];
      for (size_t b = 0; b < e->cmd.nbind; b++) {
        size_t u = 0;
        while (u < r->nu && cap->e[r->first + r->u[u].e].cmd.bind[r->u[u].b].handle.bits !=
                                e->cmd.bind[b].handle.bits)
          u++;
        if (u == r->nu) {
          r->u[u].e = (unsigned short)(q - r->first);
          r->u[u].b = (unsigned short)b;
          r->u[u].access = 0;
          r->nu++;
        }
        touched[b] = u;
        int a = e->cmd.bind[b].access;
        if ((a & CLS_READ) && !whole[u])
          r->u[u].access |= CLS_READ;
        r->u[u].access |= (unsigned char)(a & CLS_WRITE);
      }
      for (size_t b = 0; b < e->cmd.nbind; b++)
        if ((e->cmd.bind[b].access & (CLS_WRITE | CLS__PARTIAL)) == CLS_WRITE)
          whole[touched[b]] = true;
    }
    for (size_t u = 0; u < r->nu; u++)
      if ((r->u[u].access & CLS_WRITE) && !whole[u])
        r->u[u].access |= CLS__PARTIAL;
    r->mems = calloc(r->nmem ? r->nmem : 1, sizeof *r->mems);
    r->pv = malloc(r->npv ? r->npv : 1);
    r->kinds = malloc(r->n);
    r->names = calloc(r->n, sizeof *r->names);
    if (!r->mems || !r->pv || !r->kinds || !r->names)
      return cls__error(CLS_ENOMEM, 0, "out of host memory");
    if (r->multi && cls__multi_plan(cap, r) < 0)
      return CLS_ENOMEM;
    for (size_t q = 0; q < r->n; q++) {
      const struct cls__cmd *cmd = &cap->e[r->first + q].cmd;
      r->kinds[q] = (unsigned char)cmd->kind;
      r->nlaunch += cmd->kind == CLS__CMD_LAUNCH;
      r->swaps |= cap->e[r->first + q].swaps;
      r->names[q] = cmd->kind == CLS__CMD_LAUNCH ? cmd->kcmd.name : NULL;
    }
  }
  return CLS_OK;
}

/* The foreign callback of a run: its command buffer on the stream's
 * queue (the wait list is already a barrier there: cls_foreign_run). */
static cl_int run_enqueue(const struct cls_foreign_call *call, cl_event *ev) {
  struct rec *r = call->data;
  if (call->queue != r->queue)
    return CL_INVALID_COMMAND_QUEUE; /* recorded for another: never run there */
  cl_command_queue q = call->queue;
  cl_int rc = r->api->enqueue(1, &q, r->cb, 0, NULL, ev);
  if (rc == CL_SUCCESS)
    atomic_fetch_add_explicit(r->enqueues, 1, memory_order_relaxed);
  return rc;
}

/* The foreign callback of a plan run: its members on the stream's queue
 * (after the wait list's barrier), each after the one before (the queue
 * is in order), the last one's event the run's.  A member that fails to
 * enqueue fails the run: those before it are enqueued and run. */
static cl_int direct_enqueue(const struct cls_foreign_call *call, cl_event *ev) {
  struct rec *r = call->data;
  if (r->nkept)
    cls__rec_sweep(r);
  cl_command_queue q = call->queue;
  size_t n = r->run->n;
  cl_int rc = CL_SUCCESS;
  for (size_t i = 0; i < n && rc == CL_SUCCESS; i++) {
    const struct dmember *m = &r->dm[i];
    cl_event mine = NULL, *out = i + 1 == n ? ev : r->keep ? &mine : NULL;
    switch (m->kind) {
    case CLS__CMD_LAUNCH:
      rc = clEnqueueNDRangeKernel(q, m->k, m->dims, m->offset, m->global, m->local, 0, NULL,
                                  out);
      break;
    case CLS__CMD_COPY:
      rc = clEnqueueCopyBuffer(q, m->src, m->dst, m->src_offset, m->dst_offset, m->size, 0,
                               NULL, out);
      break;
    default:
      rc = clEnqueueFillBuffer(q, m->dst, m->pattern, m->pattern_size, m->dst_offset, m->size,
                               0, NULL, out);
    }
    if (mine)
      cls__rec_drop(r, mine);
  }
  if (rc == CL_SUCCESS)
    atomic_fetch_add_explicit(r->enqueues, 1, memory_order_relaxed);
  /* Enqueued: OpenCL has read the arguments, the values may change. */
  atomic_fetch_sub_explicit(&r->held, 1, memory_order_release);
  return rc;
}

bool cls__capture_run_members(const struct cls_foreign_cmd *fc, size_t *n,
                              const unsigned char **kinds, const char *const **names,
                              const int **streams) {
  if (fc->fn == cls__multi_record) {
    *n = 0; /* the run's commands are counted where the run is */
    return true;
  }
  if (fc->fn != run_enqueue && fc->fn != direct_enqueue && fc->fn != cls__multi_enqueue)
    return false;
  const struct rec *r = fc->data;
  *n = r->run->n;
  *kinds = r->run->kinds;
  *names = r->run->names;
  *streams = r->run->multi ? r->run->mstream : NULL;
  return true;
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
      cls__sizes_point(&cmd->kcmd, &e->sz);
      cmd->kcmd.args = cmd->kargs;
    }
    if ((rc = plan_runs(ctx, cap)) < 0) {
      cls_capture_destroy(cap);
      goto done;
    }
    *out = cap;
  }
done:
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
  cls__sizes_keep(&e->sz, cmd->kcmd.dims, global, local, cmd->kcmd.offset);
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
    /* A write over a buffer whose last write is logged is logged too
     * (writes only, as command.c's skip_in_flight does): a failure of
     * that last write found later must not reach what reads the buffer
     * after this skip (before, it did, under a driver that reports enqueue
     * failures after the call: test-capture's
     * whole_skip_over_a_write_whose_failure_is_found_later). */
    uint64_t since = ctx->log.len ? cls__log_oldest_stamp(ctx) : UINT64_MAX;
    bool overwrites = false;
    for (size_t b = 0; b < cmd->nbind; b++)
      overwrites |= (cmd->bind[b].access & CLS_WRITE) && cmd->bind[b].slot->write_stamp >= since;
    uint64_t stamp = cls__propagate_writes(ctx, f, cmd->bind, cmd->nbind);
    if (overwrites) {
      const struct cls__cmd_at at = {.stream = s->id,
                                     .kind = cmd->kind,
                                     .position = pos,
                                     .stamp = stamp,
                                     .op = cmd->op,
                                     .kernel = cls__cmd_named(cmd->kind) ? cmd->kcmd.name : "",
                                     .bind = cmd->bind,
                                     .nbind = cmd->nbind};
      if (cls__replay_overwritten(ctx, &at)) /* the log is full: learn what finished */
        cls__poll_all(ctx, false);
    }
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

/* The stored command's pointers made current (stream, cl_mems, the
 * kernel's lane, scalars and parameters), ready for the command path. */
static inline __attribute__((always_inline)) int refresh(cls_context *ctx, struct entry *e,
                                                        const cls_param *params,
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
  case CLS__CMD_LAUNCH:
    /* Buffers point at their slots (prepare); a parameter at this
     * replay's value.  The rest points into the entry, set once. */
    for (unsigned i = 0; i < e->nparam; i++)
      cmd->kargs[e->pidx[i]].value = params[e->param[e->pidx[i]]].value;
    cls__kernel_for(cmd->kernel, e->stream, &cmd->kcmd.kernel, &cmd->kcmd.memo);
    break;
  case CLS__CMD_FILL:
  case CLS__CMD_WRITE:
    cmd->x.dst = cmd->bind[0].slot->mem;
    break;
  case CLS__CMD_READ:
    cmd->x.src = cmd->bind[0].slot->mem;
    break;
  case CLS__CMD_COPY:
    cmd->x.src = cmd->bind[0].slot->mem;
    cmd->x.dst = cmd->bind[1].slot->mem;
    break;
  }
  return CLS_OK;
}

/* A refreshed command through the command path.  Inline, as refresh:
 * the replay's per-command path (make bench-own-cost). */
static inline __attribute__((always_inline)) int run_one(cls_context *ctx, struct entry *e) {
  struct cls__cmd *cmd = &e->cmd;
  if (cmd->kind == CLS__CMD_READ)
    return cls__download_run(ctx, cmd, NULL);
  int rc = cls__run(ctx, cmd, NULL, NULL);
  if (cmd->kind == CLS__CMD_LAUNCH && __builtin_expect(ctx->guard != NULL, 0))
    cls__guard_launched(ctx, cmd, rc);
  return rc;
}

static int replay_one(cls_context *ctx, struct entry *e, const cls_param *params,
                      struct cls__slot *const *swap) {
  int rc = refresh(ctx, e, params, swap);
  return rc < 0 ? rc : run_one(ctx, e);
}

/* Whether the values a recording holds (each binding's cl_mem in `mems`,
 * the parameter bytes in `pv`) differ from this replay's. */
static bool values_differ(const struct cls_capture *cap, const struct run *r,
                          const cl_mem *mems, const unsigned char *pv, const cls_param *params) {
  size_t m = 0, v = 0;
  for (size_t i = r->first; i < r->first + r->n; i++) {
    const struct entry *e = &cap->e[i];
    for (size_t b = 0; b < e->cmd.nbind; b++)
      if (mems[m++] != e->cmd.bind[b].slot->mem)
        return true;
    for (unsigned p = 0; p < e->nparam; p++) {
      size_t size = e->cmd.kargs[e->pidx[p]].size;
      if (memcmp(pv + v, params[e->param[e->pidx[p]]].value, size) != 0)
        return true;
      v += size;
    }
  }
  return false;
}

/* Whether a command buffer run's recording no longer matches: another
 * queue, another cl_mem behind a binding, another value of a parameter. */
static bool stale(const struct cls_capture *cap, const struct run *r, cl_command_queue q,
                  const cls_param *params) {
  return !r->rec || r->rec->queue != q || values_differ(cap, r, r->mems, r->pv, params);
}

/* rec becomes r's current recording; the one it replaces is retired. */
static void keep(cls_context *ctx, struct cls_capture *cap, struct run *r, struct rec *rec) {
  rec->run = r;
  rec->enqueues = &cap->enqueues;
  rec->next = cap->recs;
  if (!cap->recs && cap->nruns) { /* the first: the context releases it if it goes first */
    cap->next_cb = ctx->cb_captures;
    ctx->cb_captures = cap;
  }
  cap->recs = rec;
  if (r->rec && !r->direct) /* a plan run's stay, to be used again */
    cap->retired++;
  r->rec = rec;
  atomic_fetch_add_explicit(&cap->recordings, 1, memory_order_relaxed);
}

/* Records the run's command buffer on q from its refreshed entries, each
 * command after the one before (the plan's order on one stream).  Slow
 * path: allocates.  CL status, CL_SUCCESS. */
static cl_int record(cls_context *ctx, struct cls_capture *cap, struct run *r,
                     cl_command_queue q, const cls_param *params) {
  cl_device_id dev;
  cl_int rc = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
  if (rc != CL_SUCCESS)
    return rc;
  const struct cls__cb_api *api = cls__cb_api(ctx->platform, dev);
  if (!api)
    return CL_INVALID_DEVICE;
  struct rec *rec = calloc(1, sizeof *rec + r->n * sizeof(cl_kernel));
  if (!rec)
    return CL_OUT_OF_HOST_MEMORY;
  cl_command_buffer_properties_khr props[] = {CL_COMMAND_BUFFER_FLAGS_KHR,
                                              CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
  cl_command_buffer_khr cb = api->create(1, &q, api->simultaneous ? props : NULL, &rc);
  if (!cb) {
    free(rec);
    return rc ? rc : CL_OUT_OF_RESOURCES;
  }
  cl_kernel *kern = rec->k;
  size_t nk = 0;
  cl_sync_point_khr prev = 0, sp = 0;
  size_t m = 0, v = 0;
  for (size_t i = r->first; i < r->first + r->n && rc == CL_SUCCESS; i++) {
    struct entry *e = &cap->e[i];
    struct cls__cmd *cmd = &e->cmd;
    cl_uint nw = i > r->first;
    switch (cmd->kind) {
    case CLS__CMD_LAUNCH:
      /* A kernel of this recording's own: launches outside the capture
       * set the arguments of theirs as they please, and PoCL reads a
       * recorded kernel's arguments when the buffer is enqueued. */
      if (!(kern[nk] = clCreateKernel(cmd->kernel->prog->program, cmd->kernel->name, &rc)))
        break;
      nk++;
      for (unsigned a = 0; a < cmd->kcmd.nargs && rc == CL_SUCCESS; a++)
        rc = clSetKernelArg(kern[nk - 1], a, cmd->kargs[a].size, cmd->kargs[a].value);
      if (rc == CL_SUCCESS)
        rc = api->ndrange(cb, NULL, NULL, kern[nk - 1], cmd->kcmd.dims, cmd->kcmd.offset,
                          cmd->kcmd.global,
                          cmd->kcmd.local, nw, nw ? &prev : NULL, &sp, NULL);
      break;
    case CLS__CMD_COPY:
      rc = api->copy(cb, NULL, cmd->x.src, cmd->x.dst, cmd->x.src_offset, cmd->x.dst_offset,
                     cmd->x.size, nw, nw ? &prev : NULL, &sp, NULL);
      break;
    case CLS__CMD_FILL:
      rc = api->fill(cb, NULL, cmd->x.dst, cmd->x.pattern, cmd->x.pattern_size,
                     cmd->x.dst_offset, cmd->x.size, nw, nw ? &prev : NULL, &sp, NULL);
      break;
    default:
      rc = CL_INVALID_OPERATION;
    }
    prev = sp;
    for (size_t b = 0; b < cmd->nbind; b++)
      r->mems[m++] = cmd->bind[b].slot->mem;
    for (unsigned p = 0; p < e->nparam; p++) {
      size_t size = cmd->kargs[e->pidx[p]].size;
      memcpy(r->pv + v, params[e->param[e->pidx[p]]].value, size);
      v += size;
    }
  }
  if (rc == CL_SUCCESS)
    rc = api->finalize(cb);
  if (rc != CL_SUCCESS) {
    api->release(cb);
    for (size_t k = 0; k < nk; k++)
      clReleaseKernel(kern[k]);
    free(rec);
    return rc;
  }
  clRetainCommandQueue(q);
  rec->cb = cb;
  rec->queue = q;
  rec->api = api;
  rec->nk = nk;
  keep(ctx, cap, r, rec);
  return CL_SUCCESS;
}

/* A launch argument's value for this replay: a parameter's, else what
 * the stored command points at (a buffer's slot, set by prepare or
 * bind_params; a scalar's copy). */
static const void *arg_value(const struct entry *e, unsigned a, const cls_param *params) {
  return e->param[a] >= 0 ? params[e->param[a]].value : e->cmd.kargs[a].value;
}

/* Prepares a plan run from its entries (their slots resolved, buffer
 * parameters bound): a kernel of its own per launch, arguments set, and
 * what each enqueue takes, with this replay's values.  Slow path:
 * allocates.  CL status, CL_SUCCESS. */
static cl_int record_direct(cls_context *ctx, struct cls_capture *cap, struct run *r,
                            const cls_param *params) {
  struct rec *rec = calloc(1, sizeof *rec + r->n * sizeof(cl_kernel));
  struct dmember *dm = calloc(r->n, sizeof *dm);
  cl_mem *mems = calloc(r->nmem ? r->nmem : 1, sizeof *mems);
  unsigned char *pv = malloc(r->npv ? r->npv : 1);
  cl_int rc = rec && dm && mems && pv ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  size_t nk = 0, m = 0, v = 0;
  for (size_t i = r->first; i < r->first + r->n && rc == CL_SUCCESS; i++) {
    const struct entry *e = &cap->e[i];
    const struct cls__cmd *cmd = &e->cmd;
    struct dmember *d = &dm[i - r->first];
    d->kind = (unsigned char)cmd->kind;
    switch (cmd->kind) {
    case CLS__CMD_LAUNCH:
      /* Its own kernel, as a command buffer's: the arguments set here
       * stay, whatever launches outside the capture set. */
      if (!(rec->k[nk] = clCreateKernel(cmd->kernel->prog->program, cmd->kernel->name, &rc)))
        break;
      d->k = rec->k[nk++];
      for (unsigned a = 0; a < cmd->kcmd.nargs && rc == CL_SUCCESS; a++)
        rc = clSetKernelArg(d->k, a, cmd->kargs[a].size, arg_value(e, a, params));
      d->dims = cmd->kcmd.dims;
      d->global = cmd->kcmd.global;
      d->local = cmd->kcmd.local;
      d->offset = cmd->kcmd.offset;
      break;
    case CLS__CMD_COPY:
      d->src = cmd->bind[0].slot->mem;
      d->dst = cmd->bind[1].slot->mem;
      d->src_offset = cmd->x.src_offset;
      d->dst_offset = cmd->x.dst_offset;
      d->size = cmd->x.size;
      break;
    default: /* a fill */
      d->dst = cmd->bind[0].slot->mem;
      d->dst_offset = cmd->x.dst_offset;
      d->size = cmd->x.size;
      d->pattern = cmd->x.pattern;
      d->pattern_size = cmd->x.pattern_size;
    }
    for (size_t b = 0; b < cmd->nbind; b++)
      mems[m++] = cmd->bind[b].slot->mem;
    for (unsigned p = 0; p < e->nparam; p++) {
      size_t size = cmd->kargs[e->pidx[p]].size;
      memcpy(pv + v, params[e->param[e->pidx[p]]].value, size);
      v += size;
    }
  }
  if (rc != CL_SUCCESS) {
    for (size_t k = 0; rec && k < nk; k++)
      clReleaseKernel(rec->k[k]);
    free(pv);
    free(mems);
    free(dm);
    free(rec);
    return rc;
  }
  if (r->multi && !(rec->evs = calloc(r->n + 1, sizeof *rec->evs))) {
    for (size_t k = 0; k < nk; k++)
      clReleaseKernel(rec->k[k]);
    free(pv);
    free(mems);
    free(dm);
    free(rec);
    return CL_OUT_OF_HOST_MEMORY;
  }
  rec->dm = dm;
  rec->mems = mems;
  rec->pv = pv;
  rec->nk = nk;
  rec->epoch = ctx->handles_epoch;
  keep(ctx, cap, r, rec);
  return CL_SUCCESS;
}

/* A plan run's recording brought to this replay's values: each cl_mem and
 * parameter that differs from the one it holds is set again (a launch's
 * argument, a copy's or fill's end).  No driver holds it.  CL status. */
static cl_int update_direct(cls_context *ctx, struct cls_capture *cap, struct run *r,
                            struct rec *rec, const cls_param *params) {
  if (!r->npv && !r->swaps && rec->epoch == ctx->handles_epoch)
    return CL_SUCCESS; /* nothing can have changed */
  cl_int rc = CL_SUCCESS;
  size_t m = 0, v = 0;
  for (size_t i = r->first; i < r->first + r->n && rc == CL_SUCCESS; i++) {
    const struct entry *e = &cap->e[i];
    const struct cls__cmd *cmd = &e->cmd;
    struct dmember *d = &rec->dm[i - r->first];
    for (size_t b = 0; b < cmd->nbind; b++, m++) {
      cl_mem mem = cmd->bind[b].slot->mem;
      if (rec->mems[m] == mem)
        continue;
      if (cmd->kind == CLS__CMD_LAUNCH)
        rc = clSetKernelArg(d->k, e->barg[b], sizeof mem, &mem);
      else if (cmd->kind == CLS__CMD_COPY && b == 0)
        d->src = mem;
      else
        d->dst = mem;
      rec->mems[m] = mem;
    }
    for (unsigned p = 0; p < e->nparam && rc == CL_SUCCESS; p++) {
      unsigned a = e->pidx[p];
      size_t size = cmd->kargs[a].size;
      const void *val = params[e->param[a]].value;
      if (memcmp(rec->pv + v, val, size) != 0) {
        rc = clSetKernelArg(d->k, a, size, val);
        memcpy(rec->pv + v, val, size);
      }
      v += size;
    }
  }
  if (rc == CL_SUCCESS)
    rec->epoch = ctx->handles_epoch;
  return rc;
}

/* Whether rec holds other values than this replay's. */
static bool differs(cls_context *ctx, const struct cls_capture *cap, const struct run *r,
                    const struct rec *rec, const cls_param *params) {
  if (!r->npv && !r->swaps && rec->epoch == ctx->handles_epoch)
    return false;
  return values_differ(cap, r, rec->mems, rec->pv, params);
}

/* The recording a plan run replays with: its current one if it holds
 * this replay's values or no driver holds it, else another of the run's
 * that none holds (a driver that defers may hold several replays), else
 * a new one; past eight, the context's work is waited for, after which
 * none is held.  Brought to this replay's values.  CL status. */
#define DIRECT_RECS_MAX 8
static cl_int direct_rec(cls_context *ctx, struct cls_capture *cap, struct run *r,
                         const cls_param *params) {
  struct rec *rec = r->rec;
  if (!rec)
    return record_direct(ctx, cap, r, params);
  if (atomic_load_explicit(&rec->held, memory_order_acquire) &&
      differs(ctx, cap, r, rec, params)) {
    size_t mine = 0;
    rec = NULL;
    for (struct rec *x = cap->recs; x; x = x->next)
      if (x->run == r) {
        mine++;
        if (!rec && !atomic_load_explicit(&x->held, memory_order_acquire))
          rec = x;
      }
    if (!rec && mine < DIRECT_RECS_MAX)
      return record_direct(ctx, cap, r, params);
    if (!rec) {
      /* Every command handed over and finished: what a driver dropped
       * without enqueueing (a skip) is held by nothing now. */
      cls__poll_all(ctx, true);
      for (struct rec *x = cap->recs; x; x = x->next)
        if (x->run == r)
          atomic_store_explicit(&x->held, 0, memory_order_relaxed);
      rec = r->rec;
    }
    r->rec = rec;
  }
  return update_direct(ctx, cap, r, rec, params);
}

/* The union of a run's bindings, as one command's. */
static void run_bindings(const struct cls_capture *cap, const struct run *r,
                         struct cls__cmd *cmd) {
  for (size_t u = 0; u < r->nu; u++) {
    cmd->bind[u] = cap->e[r->first + r->u[u].e].cmd.bind[r->u[u].b];
    cmd->bind[u].access = r->u[u].access;
  }
  cmd->nbind = r->nu;
}

/* A run as one foreign-like command of the command path: enqueue fn
 * with rec as its data. */
static int run_as_one(cls_context *ctx, struct run *r, struct cls__stream *s,
                      struct cls__cmd *cmd, const char *op, cls_foreign_fn fn, void *rec) {
  cmd->kind = CLS__CMD_FOREIGN;
  cmd->op = op;
  cmd->kernel = NULL;
  cmd->stream = s;
  cmd->kcmd = (struct cls_kernel_cmd){.name = r->label};
  cmd->x = (struct cls_transfer){0};
  cmd->nwait = 0;
  struct cls_foreign_cmd fc = {.fn = fn, .data = rec, .label = r->label, .stream = r->stream};
  cmd->foreign = &fc;
  return cls__run(ctx, cmd, NULL, NULL);
}

/* A run's entries one by one, as the plan does command by command. */
static int run_each(cls_context *ctx, struct cls_capture *cap, struct run *r,
                    const cls_param *params, struct cls__slot *const *swap, bool refreshed) {
  int rc = CLS_OK;
  for (size_t i = r->first; i < r->first + r->n; i++) {
    int e = refreshed ? CLS_OK : refresh(ctx, &cap->e[i], params, swap);
    if (e >= 0)
      e = run_one(ctx, &cap->e[i]);
    if (e < 0 && rc == CLS_OK)
      rc = e;
  }
  return rc;
}

/* Says once per context that a run cannot be one command. */
static void say_no_run(cls_context *ctx, const struct run *r, cl_int st) {
  if (ctx->said_no_cb)
    return;
  ctx->said_no_cb = true;
  cls__log(&ctx->logger, CLS_LOG_ERRORS,
           "capture: %s on stream %d cannot be %s (%s, %d): it replays command by command",
           r->label, r->stream, r->direct ? "one command" : "a command buffer",
           st == CL_INVALID_DEVICE ? "no cl_khr_command_buffer" : "recording failed", st);
}

/* A command buffer's run: its entries refreshed, then one command of the
 * command path whose enqueue is the command buffer's -- or, where its
 * inputs are tainted (exact F2 skips), where it cannot be recorded, or
 * where the stream gives no queue, its entries one by one as the plan
 * does. */
static int replay_run(cls_context *ctx, struct cls_capture *cap, struct run *r,
                      const cls_param *params, struct cls__slot *const *swap) {
  int rc = CLS_OK;
  for (size_t i = r->first; i < r->first + r->n; i++)
    if ((rc = refresh(ctx, &cap->e[i], params, swap)) < 0)
      return rc;
  struct cls__stream *s = cap->e[r->first].cmd.stream;
  cl_command_queue q = r->off || !s->backend ? NULL : cls__factory_queue(ctx->pool.factory)(s->backend);
  struct cls__cmd cmd;
  run_bindings(cap, r, &cmd);
  /* After a foreign command, command by command: an event it handed back
   * may fail later, and a command buffer's commands have no events the
   * program holds (PoCL 3.1 aborts failing them: opencl.c, any_outside). */
  bool plan = !q || ctx->guard || ctx->foreign_seen ||
              cls__read_failure(ctx, s->id, cmd.bind, cmd.nbind);
  if (!plan && __builtin_expect(stale(cap, r, q, params), 0)) {
    if (cap->retired >= 8) {
      /* Recordings replaced: released once their replays are done. */
      cls__poll_all(ctx, true);
      release_recs(cap, true);
    }
    cl_int st = record(ctx, cap, r, q, params);
    if (st != CL_SUCCESS) {
      r->off = true;
      say_no_run(ctx, r, st);
      plan = true;
    }
  }
  if (plan)
    return run_each(ctx, cap, r, params, swap, true);
  return run_as_one(ctx, r, s, &cmd, "command buffer", run_enqueue, r->rec);
}

/* A plan run over several streams (capture-multi.c), its recording
 * brought to this replay's values, its bindings' union in cmd: one
 * command of the command path on its first member's stream s, which
 * orders it (F7) after what any member waits for, checks its inputs once
 * (F2) and takes the union of the members' writes (F3, F4); around it,
 * cls__multi_before and cls__multi_after (the other streams' records,
 * positions and counts).  Command by command where the streams are not
 * all on s's device now. */
static int replay_multi(cls_context *ctx, struct cls_capture *cap, struct run *r,
                        struct cls__stream *s, struct cls__cmd *cmd, const cls_param *params,
                        struct cls__slot *const *swap) {
  struct cls__stream *st[RUN_STREAMS];
  int go = cls__multi_before(ctx, r, s, st);
  if (go <= 0)
    return go < 0 ? go : run_each(ctx, cap, r, params, swap, false);
  uint64_t accepted = s->stats.enqueues, issued = s->issued;
  atomic_fetch_add_explicit(&r->rec->held, 1, memory_order_relaxed);
  int rc = run_as_one(ctx, r, s, cmd, "run", cls__multi_enqueue, r->rec);
  cls__multi_after(ctx, r, st, s->issued != issued, s->stats.enqueues != accepted);
  return rc;
}

/* A plan run: one command of the command path whose enqueue is its
 * members' (direct_enqueue), with this replay's values -- or, where its
 * inputs are tainted (exact F2 skips) or it cannot be prepared, its
 * entries one by one.  Each member takes its position, as uncaptured
 * (positions in reports do not depend on the plan), and counts as an
 * enqueue of its own. */
static int replay_plan_run(cls_context *ctx, struct cls_capture *cap, struct run *r,
                           const cls_param *params, struct cls__slot *const *swap) {
  int rc = CLS_OK;
  if (r->swaps)
    for (size_t i = r->first; i < r->first + r->n; i++)
      if (cap->e[i].swaps)
        bind_params(&cap->e[i], params, swap);
  struct cls__stream *s = cls__stream_get(ctx, r->stream, &rc);
  if (!s)
    return rc;
  struct cls__cmd cmd;
  run_bindings(cap, r, &cmd);
  bool plan = r->off || cls__read_failure(ctx, s->id, cmd.bind, cmd.nbind);
  if (!plan) {
    cl_int st = direct_rec(ctx, cap, r, params);
    if (st != CL_SUCCESS) {
      r->off = true;
      say_no_run(ctx, r, st);
      plan = true;
    }
  }
  if (plan)
    return run_each(ctx, cap, r, params, swap, false);
  r->rec->keep = ctx->foreign_seen;
  if (r->multi)
    return replay_multi(ctx, cap, r, s, &cmd, params, swap);
  uint64_t accepted = s->stats.enqueues, issued = s->issued;
  atomic_fetch_add_explicit(&r->rec->held, 1, memory_order_relaxed);
  rc = run_as_one(ctx, r, s, &cmd, "run", direct_enqueue, r->rec);
  if (s->issued != issued)
    s->issued += r->n - 1;
  if (s->stats.enqueues != accepted) {
    s->stats.enqueues += r->n - 1;
    s->stats.launches += r->nlaunch;
  }
  return rc;
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
  for (size_t i = 0; i < cap->n;) {
    struct run *run = cap->e[i].run;
    int r = !run         ? replay_one(ctx, &cap->e[i], params, swap)
            : run->direct ? replay_plan_run(ctx, cap, run, params, swap)
                          : replay_run(ctx, cap, run, params, swap);
    if (r < 0 && rc == CLS_OK)
      rc = r;
    i += run ? run->n : 1;
  }
out:
  cls__unlock(ctx);
  return rc;
}
