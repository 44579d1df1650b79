/* The priority driver (priority.c): an example of a clstream driver
 * written outside the library, against <clstream/driver.h> alone. */
#ifndef PRIORITY_DRIVER_H
#define PRIORITY_DRIVER_H

#include <clstream/driver.h>

/* Register it (cls_driver_register(&priority_driver)), then select it
 * with CLS_SCHEDULER=priority[:high=S+S...][,batch=N]; or pass it in
 * cls_context_options.driver. */
extern const struct cls_driver_ops priority_driver;

#endif /* PRIORITY_DRIVER_H */
