/* Internal: the driver (scheduler) interface.
 *
 * A driver decides when, and onto which backend queue, the commands of the
 * context's streams go.  It owns nothing of the core's state: the context
 * owns the stream pool, the failure table and the F8 log, and applies the
 * failure rules (F1-F10) before and after a command reaches the driver.  A
 * driver orders and submits, reports what finished and what failed, and
 * reaches the core only through the functions this header lists.
 *
 * One ops struct per driver, one folder per driver (schedulers/NAME/),
 * listed in the registry (registry.c).  Every member is called with the
 * context lock held, on the thread of the public call that needs it; no
 * member is called concurrently for one context. */
#ifndef CLS_DRIVER_H
#define CLS_DRIVER_H

#include "driver/ops.h"
#include "failure/inflight.h"
#include "order/order.h"
#include "stream/pool.h"

/* What a driver may call of the core, besides ordering (order.h) and F8's
 * cls__stream_failed (inflight.h). */

/* The context's stream factory (fault injection included when enabled),
 * its data, and the backend the factory's streams are created on. */
static inline const struct cls_stream_factory *cls__factory(const cls_context *ctx) {
  return ctx->pool.factory;
}
/* Creates factory stream `id` (the driver's numbering: a logical stream,
 * or a shared queue); CLS_ECL recorded on failure. */
int cls__factory_create(cls_context *ctx, int id, void **out);
/* The same on device `device` of the context (0 .. ndevices-1): a
 * stream's backend goes on the device the stream is placed on
 * (s->device). */
int cls__factory_create_on(cls_context *ctx, int id, int device, void **out);
/* Enqueues cmd now, as command `bseq` of the factory stream `q` (its
 * logical stream travels with it): its waits are released, or dropped
 * (cls__order_drop) when the enqueue failed.  Returns the factory's
 * status. */
static inline cl_int cls__enqueue_cmd(const struct cls_stream_factory *f, void *q,
                                      struct cls__cmd *cmd, uint64_t bseq) {
  cl_int rc = cls__enqueue(f, q, cmd->stream->id, cmd->kind, &cmd->kcmd, &cmd->x, bseq,
                           cmd->nwait, cmd->nwait ? cmd->wait : NULL);
  if (rc != CL_SUCCESS)
    cls__order_drop(cmd);
  else
    cls__order_release(cmd);
  return rc;
}

/* The registry: drivers built into this library, and selection by name
 * ("event", "help" lists them).  `spec` NULL: $CLS_SCHEDULER, then the
 * configure-time default.  *params points into spec after ':' or is NULL. */
int cls__driver_find(const char *spec, const struct cls__driver_ops **out,
                     const char **params);
extern const struct cls__driver_ops cls__event_driver;
extern const struct cls__driver_ops cls__scheduler_driver;

#endif /* CLS_DRIVER_H */
