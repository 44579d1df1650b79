/* Internal: why OpenCL offers no device, where that can be known -- the
 * vendor hints of the library's CLS_ENODEV detail (src/device/device.c) and
 * of clstream-info (tools/clstream-info.c includes this header), from one
 * place.  Static functions over the public OpenCL API and getenv() only. */
#ifndef CLS_DEVICE_HINTS_H
#define CLS_DEVICE_HINTS_H

#include <clstream.h>
#include <clstream/cl.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static inline int cls__hint_has(const char *hay, const char *needle) {
  for (; hay && *hay; hay++) {
    size_t i = 0;
    while (needle[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (!needle[i])
      return 1;
  }
  return 0;
}

/* Mesa's rusticl lists its platform but offers no device until
 * RUSTICL_ENABLE names a driver; NULL when that is not the reason. */
static inline const char *cls__rusticl_hint(char *buf, size_t cap) {
  const char *enable = getenv("RUSTICL_ENABLE");
  if (!enable || !*enable)
    return "Mesa's rusticl offers no device until RUSTICL_ENABLE names a driver "
           "(RUSTICL_ENABLE=llvmpipe for the CPU)";
  snprintf(buf, cap,
           "RUSTICL_ENABLE=%.40s names no driver that found a device "
           "(RUSTICL_ENABLE=llvmpipe for the CPU)",
           enable);
  return buf;
}

/* Why platform `name` offers no device; `status` is clGetDeviceIDs'. */
static inline const char *cls__no_device_hint(const char *name, cl_int status, char *buf,
                                              size_t cap) {
  if (cls__hint_has(name, "rusticl"))
    return cls__rusticl_hint(buf, cap);
  if (cls__hint_has(name, "clover"))
    return "Mesa's Clover drives some GPUs only (radeonsi, r600, nouveau), and found none";
  if (status == CL_DEVICE_NOT_FOUND || status == CL_SUCCESS)
    return "the platform reports none (CL_DEVICE_NOT_FOUND)";
  snprintf(buf, cap, "clGetDeviceIDs failed: %s", cls_cl_status_name(status));
  return buf;
}

/* Why the loader offers no platform at all. */
static inline const char *cls__no_platform_hint(char *buf, size_t cap) {
  const char *vendors = getenv("OCL_ICD_VENDORS");
  if (!vendors)
    return "the ICD loader found no platform: is an ICD installed (an .icd file in "
           "/etc/OpenCL/vendors)?";
  /* A rusticl that lists no platform without RUSTICL_ENABLE */
  int rusticl = cls__hint_has(vendors, "rusticl") && !getenv("RUSTICL_ENABLE");
  char why[160];
  snprintf(buf, cap, "the ICD loader found no platform in OCL_ICD_VENDORS=%.200s%s%s", vendors,
           rusticl ? "; " : "", rusticl ? cls__rusticl_hint(why, sizeof why) : "");
  return buf;
}

#endif
