/* Internal: the core's side of the driver interface.
 *
 * A driver decides when, and onto which backend queue, the commands of the
 * context's streams go.  Its ops struct, the views of streams and
 * commands it is handed and every core function it may call are public
 * (include/clstream/driver.h, implemented in entry.c); a driver includes
 * nothing else.  The context owns the stream pool, the failure table and
 * the F8 log, and applies the failure rules (F1-F12) before and after a
 * command reaches the driver.
 *
 * Built-in drivers live in schedulers/NAME/ and are listed in the registry
 * (registry.c), with those the application registers. */
#ifndef CLS_DRIVER_H
#define CLS_DRIVER_H

#include "base/cmd.h"
#include "stream/pool.h"

/* The registry: built-in and registered drivers, and selection by name
 * ("help" lists them).  `given` (the context options' driver) or else
 * `spec` NULL: $CLS_SCHEDULER, then the configure-time default.  *params
 * points into spec after ':' or is NULL. */
int cls__driver_find(const char *spec, const struct cls_driver_ops *given,
                     const struct cls_driver_ops **out, const char **params);
/* CLS_EINVAL / CLS_EVERSION, recorded, unless d is a driver this library
 * can run: a known version, a name, every required member. */
int cls__driver_check(const struct cls_driver_ops *d);
/* The contract checks (contract.c): what a driver returns is validated,
 * and a breach gets CLS_EDRIVER naming the driver, recorded.
 * cls__driver_status: a member's non-success return `rc` as the core
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
extern const struct cls_driver_ops cls__event_driver;
extern const struct cls_driver_ops cls__scheduler_driver;

#endif /* CLS_DRIVER_H */
