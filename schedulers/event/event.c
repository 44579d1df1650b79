/* The event-based driver: one backend queue per stream; streams are
 * ordered with events only where the bindings require it (src/order.c:
 * each stream knows how far it is already ordered after every other one,
 * so a second consumer of the same producer state adds no wait).  Every
 * command is enqueued at the call. */
#include "core.h"
#include "driver.h"
#include "failure.h"

#include <stdlib.h>
#include <string.h>

struct event_driver {
  struct cls__driver base;
  struct cls__stream_pool pool;
  struct cls__failures failures;
};

static struct event_driver *ed(struct cls__driver *d) { return (struct event_driver *)d; }

static int ev_create(cls_context *ctx, const char *params, const struct cls_stream_factory *f,
                     void *fdata, struct cls__driver **out) {
  if (params && *params)
    return cls__error(CLS_ECONFIG, 0, "the event driver takes no parameters ('%s' given)",
                      params);
  struct event_driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  int rc = cls__pool_init(ctx, &d->pool, f, fdata);
  if (rc < 0) {
    free(d);
    return rc;
  }
  d->base.ops = &cls__event_driver;
  d->base.ctx = ctx;
  cls__failures_init(&d->failures, &ctx->log);
  *out = &d->base;
  return CLS_OK;
}

static void ev_destroy(struct cls__driver *base) {
  struct event_driver *d = ed(base);
  cls__poll_all(base->ctx, true);
  cls__pool_fini(base->ctx, &d->pool);
  cls__failures_fini(&d->failures);
  free(d);
}

static int ev_open(struct cls__driver *base, struct cls__stream *s) {
  struct cls__stream_pool *pool = &ed(base)->pool;
  cl_int rc = pool->factory->create(pool->factory_data, &pool->backend, s->id, &s->backend);
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "creating stream %d (%s factory) failed: %s", s->id,
                      pool->factory->name, cls_cl_status_name(rc));
  return CLS_OK;
}

static void ev_close(struct cls__driver *base, struct cls__stream *s) {
  ed(base)->pool.factory->destroy(s->backend);
  s->backend = NULL;
}

struct poll_arg {
  cls_context *ctx;
  struct cls__stream *s;
};

static void on_failed(void *arg, uint64_t seq, cl_int status) {
  struct poll_arg *a = arg;
  cls__stream_failed(a->ctx, a->s, seq, status, false);
}

static int ev_poll(struct cls__driver *base, struct cls__stream *s, bool wait) {
  struct poll_arg a = {base->ctx, s};
  uint64_t completed = s->completed;
  cl_int rc = ed(base)->pool.factory->poll(s->backend, wait, on_failed, &a, &completed);
  if (completed > s->completed)
    s->completed = completed;
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "stream %d: %s failed: %s", s->id,
                      wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}

static struct cls__stream_pool *ev_pool(struct cls__driver *d) { return &ed(d)->pool; }
static struct cls__failures *ev_failures(struct cls__driver *d) { return &ed(d)->failures; }

static void *ev_queue_of(struct cls__driver *d, struct cls__stream *s, struct cls__stream *p) {
  return p->backend; /* every stream has its own queue */
}

/* ev_submit enqueues right after ordering: waits may be lent events. */
static const struct cls__orderer ev_orderer = {.queue_of = ev_queue_of, .enqueues_now = true};

static int ev_order(struct cls__driver *base, struct cls__cmd *cmd) {
  return cls__order_after(base, cmd, &ev_orderer);
}

static cl_int ev_submit(struct cls__driver *base, struct cls__cmd *cmd) {
  struct cls__stream *s = cmd->stream;
  const struct cls_stream_factory *f = ed(base)->pool.factory;
  uint64_t seq = s->submitted + 1;
  cl_int rc = cls__enqueue_cmd(f, s->backend, cmd, seq);
  if (rc != CL_SUCCESS)
    return rc;
  s->submitted = seq;
  cmd->seq = seq;
  s->stats.enqueues++;
  s->stats.submissions++;
  if (cmd->kind == CLS__CMD_LAUNCH)
    s->stats.launches++;
  return CL_SUCCESS;
}

static void ev_cancel(struct cls__driver *base, struct cls__cmd *cmd) { cls__order_drop(cmd); }

static int ev_sync(struct cls__driver *base, struct cls__stream *s) {
  if (!s)
    return cls__poll_all(base->ctx, true);
  return cls__stream_poll(base->ctx, s, true);
}

const struct cls_driver_ops cls__event_driver = {
    .version = CLS__DRIVER_OPS_VERSION,
    .name = "event",
    .description = "one OpenCL queue per stream, ordered by events where bindings require",
    .create = ev_create,
    .destroy = ev_destroy,
    .open = ev_open,
    .close = ev_close,
    .poll = ev_poll,
    .pool = ev_pool,
    .failures = ev_failures,
    .order = ev_order,
    .submit = ev_submit,
    .cancel = ev_cancel,
    .sync = ev_sync,
};
