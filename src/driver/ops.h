/* Internal: the driver ops struct, as the core calls it.  The struct, the
 * views the core hands a driver and what a driver may call of the core are
 * public (include/clstream/driver.h); this adds how the core reaches the
 * context's driver. */
#ifndef CLS_OPS_H
#define CLS_OPS_H

#include "driver/cmd.h"

#include <clstream/driver.h>

#endif /* CLS_OPS_H */
