/* What the core checks of what a driver returns (the contract of
 * <clstream/driver.h>): a driver that breaks it gets CLS_EDRIVER naming
 * it, never a crash or a hang of the core.  None of this is on the hot
 * path: each check runs only once a member returned something other than
 * success. */
#include "stream/contract.h"
#include "stream/deadline.h"
#include "util/settle.h"

#include <string.h>

static const char *name_of(const cls_context *ctx) {
  return ctx->driver_ops && ctx->driver_ops->name ? ctx->driver_ops->name : "?";
}

int cls__driver_status(cls_context *ctx, const char *member, int rc) {
  if (rc < 0 && strcmp(cls_err_name(rc), "UNKNOWN") != 0)
    return rc; /* the driver's own code, with the detail it recorded */
  return cls__error(CLS_EDRIVER, 0,
                    "driver '%s': %s() returned %d, which is not a clstream status (CLS_OK or "
                    "a negative CLS_E* code)",
                    name_of(ctx), member, rc);
}

int cls__driver_create(cls_context *ctx, const char *params,
                       const struct cls_stream_factory *factory, bool wrapped) {
  struct cls_driver *d = NULL;
  int rc = ctx->driver_ops->create(ctx, params, &d);
  if (rc < 0)
    return cls__driver_status(ctx, "create", rc); /* it left nothing behind */
  if (d) {
    d->ops = ctx->driver_ops;
    d->ctx = ctx;
    d->factory = factory;
    d->wrapped = wrapped;
  }
  if (rc == CLS_OK && d) {
    ctx->driver = d;
    return CLS_OK;
  }
  if (d) /* a status that is not one: what it made goes */
    ctx->driver_ops->destroy(d);
  if (rc != CLS_OK)
    return cls__driver_status(ctx, "create", rc);
  return cls__error(CLS_EDRIVER, 0, "driver '%s': create() returned CLS_OK and no driver (*out "
                    "NULL)", name_of(ctx));
}

int cls__driver_open(cls_context *ctx, struct cls__stream *s) {
  s->backend = NULL;
  int rc = ctx->driver_ops->open(ctx->driver, &s->pub);
  if (rc == CLS_OK && s->backend)
    return CLS_OK;
  if (rc < 0) {
    s->backend = NULL; /* a failed open leaves no queue behind */
    return cls__driver_status(ctx, "open", rc);
  }
  if (s->backend) /* a status that is not one: what it opened is closed */
    ctx->driver_ops->close(ctx->driver, &s->pub);
  s->backend = NULL;
  if (rc != CLS_OK)
    return cls__driver_status(ctx, "open", rc);
  return cls__error(CLS_EDRIVER, 0, "driver '%s': open() of stream %d returned CLS_OK and no "
                    "backend (it must set the stream's backend)", name_of(ctx), s->id);
}

/* Retries of order() in a row that found no new failure, without a sync
 * deadline: a driver that asks for more breaks the contract
 * (CLS_DRIVER_RETRY means "a poll found a failure").  Far more than any
 * real cascade needs: each new failure found starts the count again.
 * With a deadline, the deadline bounds the retries instead. */
#define MAX_IDLE_RETRIES 1000

int cls__driver_order_retry(cls_context *ctx, struct cls__retry *r) {
  uint64_t minted = cls__failures_minted(ctx);
  if (r->n++ == 0) {
    r->start_ns = ctx->sync_timeout_ns ? cls__now_ns() : 0;
    r->minted = minted;
    r->idle = 0;
  }
  if (ctx->sync_timeout_ns) {
    if (cls__now_ns() - r->start_ns <= ctx->sync_timeout_ns)
      return CLS_OK;
    return cls__error(CLS_EDRIVER, 0, "driver '%s': order() kept asking for a retry for longer "
                      "than the sync deadline (%u times)", name_of(ctx), r->n);
  }
  if (minted != r->minted) {
    r->minted = minted;
    r->idle = 0;
  }
  if (++r->idle < MAX_IDLE_RETRIES)
    return CLS_OK;
  return cls__error(CLS_EDRIVER, 0, "driver '%s': order() asked for a retry %u times in a row "
                    "without a failure found (CLS_DRIVER_RETRY means a poll found one)",
                    name_of(ctx), r->idle);
}
