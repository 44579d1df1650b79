/* The event-based driver: one backend queue per stream; streams are
 * ordered with events only where the bindings require it (src/order:
 * each stream knows how far it is already ordered after every other one,
 * so a second consumer of the same producer state adds no wait).  Every
 * command is enqueued at the call, so the driver keeps no state of its
 * own. */
#include "driver/driver.h"
#include "util/parse.h"

#include <stdlib.h>

static int ev_create(cls_context *ctx, const char *params, struct cls__driver **out) {
  (void)ctx;
  if (params)
    return cls__parse_fail(&(struct cls__parser){"CLS_SCHEDULER", params, "event:"},
                           "the event driver takes no parameters");
  struct cls__driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  *out = d;
  return CLS_OK;
}

static void ev_destroy(struct cls__driver *d) { free(d); }

static int ev_open(struct cls__driver *d, struct cls__stream *s) {
  return cls__factory_create_on(d->ctx, s->id, s->device, &s->backend);
}

static void ev_close(struct cls__driver *d, struct cls__stream *s) {
  cls__factory(d->ctx)->destroy(s->backend);
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

static int ev_poll(struct cls__driver *d, struct cls__stream *s, bool wait) {
  struct poll_arg a = {d->ctx, s};
  uint64_t completed = s->completed;
  cl_int rc = cls__factory(d->ctx)->poll(s->backend, wait, on_failed, &a, &completed);
  if (completed > s->completed)
    s->completed = completed;
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "stream %d: %s failed: %s", s->id,
                      wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}

static void *ev_queue_of(struct cls__driver *d, struct cls__stream *s, struct cls__stream *p) {
  (void)d;
  (void)s;
  return p->backend; /* every stream has its own queue */
}

/* ev_submit enqueues right after ordering: waits may be lent events. */
static const struct cls__orderer ev_orderer = {.queue_of = ev_queue_of, .enqueues_now = true};

static int ev_order(struct cls__driver *d, struct cls__cmd *cmd) {
  return cls__order_after(d, cmd, &ev_orderer);
}

static cl_int ev_submit(struct cls__driver *d, struct cls__cmd *cmd) {
  cl_int rc = cls__enqueue_cmd(cls__factory(d->ctx), cmd->stream->backend, cmd, cmd->seq);
  if (rc == CL_SUCCESS)
    cmd->stream->stats.submissions++;
  return rc;
}

const struct cls__driver_ops cls__event_driver = {
    .version = CLS__DRIVER_OPS_VERSION,
    .name = "event",
    .description = "one OpenCL queue per stream, ordered by events where bindings require",
    .create = ev_create,
    .destroy = ev_destroy,
    .open = ev_open,
    .close = ev_close,
    .poll = ev_poll,
    .order = ev_order,
    .submit = ev_submit,
};
