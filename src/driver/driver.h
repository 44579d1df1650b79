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
#include "stream/contract.h"
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
extern const struct cls_driver_ops cls__event_driver;
extern const struct cls_driver_ops cls__scheduler_driver;

#endif /* CLS_DRIVER_H */
