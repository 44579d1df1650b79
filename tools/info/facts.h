/* clstream-info's model: every fact it reports, gathered once by
 * info_facts_gather() and printed by a printer (info.h) that makes no
 * OpenCL or clstream call of its own beyond naming codes.  A fact that
 * could not be had keeps its error (code and detail) instead. */
#ifndef CLS_TOOLS_INFO_FACTS_H
#define CLS_TOOLS_INFO_FACTS_H

#include <clstream.h>

#include <stddef.h>

/* As clstream's device list (src/device/device.c): it numbers platforms
 * in the loader's order, up to this many. */
#define INFO_MAX_PLATFORMS 16

/* Why a fact is missing: code CLS_OK when it was had.  detail is
 * cls_last_error_detail() as the failing call left it (NULL only when
 * copying it ran out of memory). */
struct info_error {
  int code;
  char *detail;
};

/* A platform as OpenCL reports it. */
struct info_platform {
  char name[128], vendor[128], version[256];
  size_t ndevices;     /* clstream's devices of it (in facts.devs) */
  char no_device[256]; /* when ndevices is 0: why, where that can be known */
};

/* The facts that cost a build, gathered only for a printer that asks. */
enum { INFO_ARGUMENT_INFO = 1 << 0 };

struct info_facts {
  const char *version;      /* cls_version_string() */
  const char *icd_vendors;  /* $OCL_ICD_VENDORS, NULL when unset */
  const char *cls_device;   /* $CLS_DEVICE, NULL when unset */

  /* clstream's device list; list_oom: the list could not be allocated. */
  struct info_error list;
  int list_oom;
  struct cls_device_info *devs;
  size_t ndevs;

  /* Every platform of the ICD loader (none when clGetPlatformIDs fails). */
  unsigned nplatforms;
  struct info_platform platforms[INFO_MAX_PLATFORMS];

  /* The rest is gathered only when the list has a device (have_device). */
  int have_device;
  struct info_error default_error; /* the default selection */
  struct cls_device_info default_pick;
  struct info_error env_error; /* $CLS_DEVICE's, when set */
  struct cls_device_info env_pick;

  /* The context (it honours $CLS_DEVICE and $CLS_SCHEDULER); not made when
   * $CLS_DEVICE selects nothing (context_error is the selection's then). */
  struct info_error context_error;
  int have_context_device; /* cls_context_device() answered */
  struct cls_device_info context_device;
  int have_context_devices; /* cls_context_devices() answered */
  size_t ncontext_devices;  /* as it answered: may exceed CLS_MAX_DEVICES */
  struct cls_device_info context_devices[CLS_MAX_DEVICES];
  const char *driver; /* static strings */
  struct info_error attribution_error;
  int attribution_mode; /* enum cls_attribution */
  const char *attribution_why;
  unsigned event_every;
  struct info_error quirks_error;
  struct cls_quirks quirks;

  /* Whether the device gives kernel argument info (clGetKernelArgInfo):
   * without it CLS_ARG cannot infer an access and F11 trusts the
   * declaration.  Only with INFO_ARGUMENT_INFO. */
  int argument_info_asked;
  struct info_error argument_info_error;
  int argument_access, argument_names;

  /* The drivers built in (static strings), and the default. */
  const char *default_driver;
  size_t ndrivers;
  struct info_driver {
    const char *name, *description;
  } *drivers;

  /* The image formats of the context device, by enum cls_image_type - 1
   * (cls_image_formats on stream 0; none without image support). */
  struct info_error images_error;
  size_t nimage_formats[3];
  struct cls_image_format *image_formats[3];

  /* The persistent program cache as the context sees it (dir is a copy). */
  int have_cache;
  struct cls_cache_info cache;
};

/* Gathers every fact into *f (zeroed first); `extras`: INFO_ARGUMENT_INFO
 * or 0.  Returns the exit status the facts call for: 0, or 1 when no
 * device is found or the selection or the context fails. */
int info_facts_gather(struct info_facts *f, unsigned extras);
void info_facts_free(struct info_facts *f);

/* "CPU", "GPU", "accelerator" or "other" for an enum cls_device_type. */
const char *info_type_name(int type);

#endif
