/* Internal: choosing the context's device (rules in clstream.h,
 * cls_device_select). */
#ifndef CLS_DEVICE_H
#define CLS_DEVICE_H

#include "util/util.h"

struct cls__device_choice {
  cl_platform_id platform;
  cl_device_id device;
  struct cls_device_info info;
};

/* CLS_ENODEV with the list of devices in the error detail when nothing
 * matches; CLS_ECONFIG for a malformed spec. */
int cls__device_choose(const char *spec, struct cls__device_choice *out);

#endif
