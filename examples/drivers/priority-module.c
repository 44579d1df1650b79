/* The priority driver as a shared object (priority.so): the one symbol
 * clstream looks for, CLS_SCHEDULER=/path/to/priority.so[:PARAMETERS]. */
#include "priority.h"

const struct cls_driver_ops *cls_driver_entry(void);
const struct cls_driver_ops *cls_driver_entry(void) { return &priority_driver; }
