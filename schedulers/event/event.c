/* The event-based driver: one backend queue per stream; streams are
 * ordered with events only where the bindings require it (the core's
 * ordering: each stream knows how far it is already ordered after every
 * other one, so a second consumer of the same producer state adds no
 * wait).  Every command is enqueued at the call, so the driver keeps no
 * state of its own.  Written against <clstream/driver.h> alone, like any
 * driver outside the library. */
#include <clstream/driver.h>

#include <stdlib.h>

static int ev_create(cls_context *ctx, const char *params, struct cls_driver **out) {
  (void)ctx;
  if (params)
    return cls_driver_param_error("event", params, "the event driver takes no parameters");
  struct cls_driver *d = calloc(1, sizeof *d);
  if (!d)
    return cls_driver_error(CLS_ENOMEM, 0, "out of host memory");
  *out = d;
  return CLS_OK;
}

static void ev_destroy(struct cls_driver *d) { free(d); }

static int ev_open(struct cls_driver *d, struct cls_driver_stream *s) {
  return cls_driver_factory_create_on(d, s->id, s->device, &s->backend);
}

static void ev_close(struct cls_driver *d, struct cls_driver_stream *s) {
  d->factory->destroy(s->backend);
  s->backend = NULL;
}

static int ev_poll(struct cls_driver *d, struct cls_driver_stream *s, bool wait) {
  return cls_driver_factory_poll(d, s, s->backend, wait);
}

static void *ev_queue_of(struct cls_driver *d, struct cls_driver_stream *s,
                         struct cls_driver_stream *p) {
  (void)d;
  (void)s;
  return p->backend; /* every stream has its own queue */
}

/* ev_submit enqueues right after ordering: waits may be lent events. */
static const struct cls_driver_orderer ev_orderer = {.queue_of = ev_queue_of,
                                                     .enqueues_now = true};

static int ev_order(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  return cls_driver_order_after(d, cmd, &ev_orderer);
}

static cl_int ev_submit(struct cls_driver *d, struct cls_driver_cmd *cmd) {
  cl_int rc = cls_driver_enqueue_cmd(d, cmd->stream->backend, cmd, cmd->seq);
  if (rc == CL_SUCCESS)
    cmd->stream->stats.submissions++;
  return rc;
}

extern const struct cls_driver_ops cls__event_driver;
const struct cls_driver_ops cls__event_driver = {
    .version = CLS_DRIVER_OPS_VERSION,
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
