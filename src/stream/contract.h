/* Internal: the core's calls of a driver's ops, checked (the contract of
 * <clstream/driver.h>): what a driver returns is validated, and a breach
 * gets CLS_EDRIVER naming the driver, recorded, never a crash or a hang
 * of the core.  Here, below the pool, because opening a stream is such a
 * call; it needs nothing above src/base/ and the deadline clock. */
#ifndef CLS_CONTRACT_H
#define CLS_CONTRACT_H

#include "base/context.h"

/* cls__driver_status: a member's non-success return `rc` as the core
 * returns it (a CLS_E* code as is, anything else CLS_EDRIVER).
 * cls__driver_create: the context's driver, created and filled in.
 * cls__driver_open: opens s, which then has a backend, or none and an
 * error. */
int cls__driver_status(cls_context *ctx, const char *member, int rc);
int cls__driver_create(cls_context *ctx, const char *params,
                       const struct cls_stream_factory *factory, bool wrapped);
int cls__driver_open(cls_context *ctx, struct cls__stream *s);
/* One more CLS_DRIVER_RETRY from order() without a failure found on the
 * command's inputs: CLS_EDRIVER once the driver asked for longer than the
 * sync deadline, or, without one, too often in a row without any new
 * failure found.  r->n is 0 before a command's first retry. */
struct cls__retry {
  unsigned n, idle;
  uint64_t minted, start_ns;
};
int cls__driver_order_retry(cls_context *ctx, struct cls__retry *r);

#endif /* CLS_CONTRACT_H */
