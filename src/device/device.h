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
/* The devices of a context: one (the rules above), or several of one
 * platform: "all" (every device of the default device's platform, at most
 * CLS_MAX_DEVICES) or a list "ITEM,ITEM,..." of single selections, each
 * naming another device of the same platform.  Fills out[0..*n-1].
 * CLS_ECONFIG for a malformed list, a device named twice or devices of
 * two platforms; CLS_ENODEV as above. */
int cls__device_choose_many(const char *spec, struct cls__device_choice *out, int *n);

#endif
