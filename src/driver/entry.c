/* The core functions a driver may call (<clstream/driver.h>): each one
 * turns the driver's view back into the core's stream or command and
 * hands it to the layer that owns the work -- ordering (src/order), F8
 * (src/failure), the stream factory (src/factory). */
#include "driver/driver.h"
#include "factory/enqueue.h"
#include "failure/poll.h"
#include "order/order.h"
#include "util/parse.h"

#include <stdarg.h>
#include <stdio.h>

CLS_API int cls_driver_order_after(struct cls_driver *d, struct cls_driver_cmd *cmd,
                                   const struct cls_driver_orderer *o) {
  return cls__order_after(d, cls__cmd_of(cmd), o);
}

CLS_API void cls_driver_unsent(cl_uint nwait, const cl_event *wait) {
  cls__order_unsent(nwait, wait);
}

CLS_API void cls_driver_release_waits(struct cls_driver_cmd *cmd) {
  cls__order_release(cls__cmd_of(cmd));
}

CLS_API void cls_driver_own_waits(struct cls_driver_cmd *cmd) {
  cls__order_own(cls__cmd_of(cmd));
}

CLS_API void cls_driver_drop_waits(struct cls_driver_cmd *cmd) {
  cls__order_drop(cls__cmd_of(cmd));
}

CLS_API cl_uint cls_driver_live_waits(const cl_event *w, size_t nw, cl_event *keep) {
  return cls__order_live_waits(w, nw, keep);
}

CLS_API int cls_driver_factory_create(struct cls_driver *d, int id, void **out) {
  return cls__factory_create(d->ctx, id, out);
}

CLS_API int cls_driver_factory_create_on(struct cls_driver *d, int id, int device, void **out) {
  if (device < 0 || device >= d->ctx->ndevices)
    return cls__error(CLS_EINVAL, 0, "driver: device %d of a context of %d", device,
                      d->ctx->ndevices);
  return cls__factory_create_on(d->ctx, id, device, out);
}

CLS_API int cls_driver_devices(const struct cls_driver *d) { return d->ctx->ndevices; }

CLS_API cl_int cls_driver_enqueue(struct cls_driver *d, void *q, int logical, int kind,
                                  const struct cls_kernel_cmd *k, const struct cls_transfer *x,
                                  uint64_t bseq, cl_uint nwait, const cl_event *wait) {
  return cls__enqueue(d->factory, q, logical, kind, k, x, bseq, nwait, nwait ? wait : NULL);
}

CLS_API cl_int cls_driver_enqueue_foreign(struct cls_driver *d, void *q,
                                          const struct cls_foreign_cmd *f, uint64_t bseq,
                                          cl_uint nwait, const cl_event *wait) {
  return cls__enqueue_foreign(d->factory, q, f, bseq, nwait, nwait ? wait : NULL);
}

CLS_API cl_int cls_driver_enqueue_any(struct cls_driver *d, void *q, struct cls_driver_cmd *pub,
                                      uint64_t bseq) {
  struct cls__cmd *cmd = cls__cmd_of(pub);
  cl_int rc = cmd->kind == CLS__CMD_FOREIGN
                  ? cls__enqueue_foreign(d->factory, q, cmd->foreign, bseq, cmd->nwait,
                                         cmd->nwait ? cmd->wait : NULL)
                  : cls__enqueue(d->factory, q, cmd->stream->id, cmd->kind, &cmd->kcmd, &cmd->x,
                                 bseq, cmd->nwait, cmd->nwait ? cmd->wait : NULL);
  if (rc != CL_SUCCESS)
    cls__order_drop(cmd);
  else
    cls__order_release(cmd);
  return rc;
}

CLS_API struct cls_driver_stream *cls_driver_stream_at(struct cls_driver *d, int id) {
  struct cls__stream *s = cls__stream_peek(d->ctx, id);
  return s ? &s->pub : NULL;
}

CLS_API void cls_driver_failed(struct cls_driver *d, struct cls_driver_stream *s, uint64_t seq,
                               cl_int status, bool deferred) {
  cls__stream_failed(d->ctx, cls__stream_of(s), seq, status, deferred);
}

CLS_API void cls_driver_failed_range(struct cls_driver *d, struct cls_driver_stream *s,
                                     uint64_t first, uint64_t last, cl_int status) {
  cls__stream_failed_range(d->ctx, cls__stream_of(s), first, last, status);
}

CLS_API void cls_driver_failed_parts(struct cls_driver *d, struct cls_driver_stream *const *streams,
                                     const uint64_t *first, const uint64_t *last, size_t n,
                                     cl_int status) {
  if (!n || n > CLS_MAX_STREAMS)
    return;
  struct cls__stream *s[CLS_MAX_STREAMS];
  for (size_t i = 0; i < n; i++)
    s[i] = cls__stream_of(streams[i]);
  cls__stream_failed_parts(d->ctx, s, first, last, n, status);
}

struct poll_arg {
  struct cls_driver *d;
  struct cls_driver_stream *s;
};

/* A range of one command is that command: the queue is the stream's own. */
static void on_failed_range(void *arg, uint64_t first, uint64_t last, cl_int status) {
  struct poll_arg *a = arg;
  if (first == last)
    cls_driver_failed(a->d, a->s, last, status, false);
  else
    cls_driver_failed_range(a->d, a->s, first, last, status);
}

CLS_API int cls_driver_factory_poll(struct cls_driver *d, struct cls_driver_stream *s,
                                    void *backend, bool wait) {
  struct poll_arg a = {d, s};
  uint64_t completed = s->completed;
  cl_int rc = cls__poll_ranges(d->factory, backend, wait, on_failed_range, &a, &completed);
  if (completed > s->completed)
    s->completed = completed;
  if (rc != CL_SUCCESS)
    return cls_driver_error(CLS_ECL, rc, "stream %d: %s failed: %s", s->id,
                            wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}

CLS_API uint64_t cls_driver_failures_seen(struct cls_driver *d) {
  return cls__failures_minted(d->ctx);
}

CLS_API bool cls_driver_recovers(struct cls_driver *d, cl_int status, unsigned losses) {
  cls_context *ctx = d->ctx;
  return ctx->relocate && cls__lost_status(status) && losses <= ctx->recover;
}

CLS_API void cls_driver_kept(struct cls_driver *d, struct cls_driver_stream *pub, size_t kept) {
  cls_context *ctx = d->ctx;
  struct cls__stream *s = cls__stream_of(pub);
  s->replay_pending += kept;
  ctx->lost_mask |= 1ull << s->id;
  ctx->losses_kept++; /* the ordering in progress retries (cls__failures_minted) */
}

CLS_API int cls_driver_error(int err, cl_int cl_status, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return cls__error(err, cl_status, "%s", detail);
}

CLS_API int cls_driver_param_error(const char *name, const char *params, const char *fmt, ...) {
  char before[64], rest[512];
  snprintf(before, sizeof before, "%s:", name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rest, sizeof rest, fmt, ap);
  va_end(ap);
  return cls__parse_fail(&(struct cls__parser){"CLS_SCHEDULER", params, before}, "%s", rest);
}

CLS_API void cls_driver_log_error(struct cls_driver *d, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  cls__log(&d->ctx->logger, CLS_LOG_ERRORS, "%s", line);
}

/* The public reader keeps the position and the keys seen; each call
 * rebuilds the parser's state around them (src/util/parse.h). */
static size_t count_keys(const char *const *keys) {
  size_t n = 0;
  while (keys && keys[n] && n < 32)
    n++;
  return n;
}

CLS_API int cls_driver_params_next(struct cls_driver_params *ps,
                                   struct cls_driver_param_item *item) {
  char before[64];
  snprintf(before, sizeof before, "%s:", ps->driver ? ps->driver : "");
  struct cls__parser p = {"CLS_SCHEDULER", ps->text ? ps->text : "", before};
  struct cls__items it;
  cls__items_init(&it, &p, cls__span_of(p.text), ',');
  if (!ps->started) {
    ps->started = 1;
    int rc = cls__parse_text(&p);
    if (rc < 0) {
      ps->at = NULL;
      return rc;
    }
    ps->at = p.text;
  }
  it.at = ps->at;
  struct cls__span span;
  int rc = cls__items_next(&it, &span);
  ps->at = it.at;
  if (rc <= 0)
    return rc;
  *item = (struct cls_driver_param_item){span.p, span.n, -1, NULL, 0};
  if (!memchr(span.p, '=', span.n))
    return 1;
  struct cls__keys keys = {ps->keys, count_keys(ps->keys), ps->seen};
  struct cls__span value;
  int key = cls__parse_kv(&p, span, &keys, &value);
  ps->seen = keys.seen;
  if (key < 0)
    return key;
  item->key = key;
  item->value = value.p;
  item->nvalue = value.n;
  return 1;
}

CLS_API int cls_driver_params_uint(struct cls_driver_params *ps,
                                   const struct cls_driver_param_item *item, uint64_t lo,
                                   uint64_t hi, uint64_t *out) {
  char before[64];
  snprintf(before, sizeof before, "%s:", ps->driver ? ps->driver : "");
  struct cls__parser p = {"CLS_SCHEDULER", ps->text ? ps->text : "", before};
  const char *name = item->key >= 0 ? ps->keys[item->key] : "value";
  return cls__parse_uint(&p, name, (struct cls__span){item->value, item->nvalue}, lo, hi, out);
}
