/* Internal: probing what a vendor does where OpenCL leaves it open
 * (quirks.c).  The public answers are struct cls_quirks (clstream.h). */
#ifndef CLS_QUIRKS_H
#define CLS_QUIRKS_H

#include "util/util.h"

/* Fills *out with the quirks of the device of `clctx`: probed on the
 * first call for that device in this process, then taken from a cache
 * (thread-safe: one probe per device, whoever asks first).  Never fails: a
 * probe that cannot run leaves its answers at CLS_QUIRK_UNKNOWN.  Limits
 * and page_size are the caller's to fill. */
void cls__quirks_probe(cl_context clctx, cl_device_id device, struct cls_quirks *out);

/* The status the probe fails its user event with: a dependent that fails
 * with another status was given one of the vendor's own (PoCL: -1). */
#define CLS__QUIRK_PROBE_STATUS CL_OUT_OF_RESOURCES

/* Number of probes actually run in this process (tests: the cache). */
unsigned cls__quirks_probes_run(void);

/* The quirk wg_above_kernel_max of `device` (1, 0 or CLS_QUIRK_UNKNOWN),
 * and in *reported the probe kernel's CL_KERNEL_WORK_GROUP_SIZE (0 if
 * unknown).  Probed on the first call for that device in this process, on
 * `clctx` (it builds a kernel: not at context creation), then cached like
 * the others.  Never fails. */
int cls__quirks_wg(cl_context clctx, cl_device_id device, const struct cls_device_info *info,
                   size_t *reported);
/* Number of those probes run in this process (tests: the cache). */
unsigned cls__quirks_wg_probes_run(void);

#endif /* CLS_QUIRKS_H */
