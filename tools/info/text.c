/* clstream-info's text output: the facts for a person to read.  It stops
 * at the first fact that keeps the rest from being had (no device, a
 * $CLS_DEVICE that selects nothing, no context). */
#include "device/hints.h"
#include "info.h"

#include <string.h>

/* "7.6 GiB" style: the largest binary unit that keeps the value >= 1. */
const char *info_human_bytes(unsigned long long n, char *buf, size_t cap) {
  static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)n;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    u++;
  }
  if (u == 0)
    snprintf(buf, cap, "%llu bytes", n);
  else
    snprintf(buf, cap, "%.1f %s (%llu bytes)", v, units[u], n);
  return buf;
}

void info_text_error(FILE *out, const char *what, int code, const char *detail) {
  if (!detail)
    detail = "";
  fprintf(out, "%-22s %s: %s\n", what, cls_err_name(code), cls_strerror(code));
  if (detail[0])
    fprintf(out, "%s%s", detail, detail[strlen(detail) - 1] == '\n' ? "" : "\n");
}

static void print_error(FILE *out, const char *what, const struct info_error *e) {
  info_text_error(out, what, e->code, e->detail);
}

static void print_device(FILE *out, const struct cls_device_info *d) {
  char b[64];
  fprintf(out, "  [%d:%d] %s (%s)\n", d->platform_index, d->device_index, d->device_name,
          info_type_name(d->type));
  fprintf(out, "    device version     %s\n", d->device_version);
  fprintf(out, "    driver version     %s\n", d->driver_version);
  fprintf(out, "    compute units      %u\n", d->compute_units);
  fprintf(out, "    global memory      %s\n", info_human_bytes(d->global_mem_size, b, sizeof b));
  fprintf(out, "    max allocation     %s\n", info_human_bytes(d->max_alloc_size, b, sizeof b));
  fprintf(out, "    local memory       %s\n", info_human_bytes(d->local_mem_size, b, sizeof b));
  fprintf(out, "    max work-group     %zu\n", d->max_work_group_size);
  fprintf(out, "    work-item sizes    %zu x %zu x %zu\n", d->max_work_item_sizes[0],
          d->max_work_item_sizes[1], d->max_work_item_sizes[2]);
  fprintf(out, "    base address align %u bytes\n", d->base_addr_align);
}

/* Every platform, with clstream's devices of it, or why it has none. */
static void print_platforms(FILE *out, const struct info_facts *f) {
  if (f->nplatforms == 0) {
    char why[512];
    fprintf(out, "No OpenCL platform: %s.\n\n", cls__no_platform_hint(why, sizeof why));
    return;
  }
  fprintf(out, "%u OpenCL platform%s, %zu device%s:\n\n", f->nplatforms,
          f->nplatforms == 1 ? "" : "s", f->ndevs, f->ndevs == 1 ? "" : "s");
  for (unsigned p = 0; p < f->nplatforms; p++) {
    const struct info_platform *pl = &f->platforms[p];
    fprintf(out, "platform %u: %s (%s), %s\n", p, pl->name, pl->vendor, pl->version);
    for (size_t i = 0; i < f->ndevs; i++)
      if (f->devs[i].platform_index == (int)p)
        print_device(out, &f->devs[i]);
    if (!pl->ndevices)
      fprintf(out, "    no device: %s\n", pl->no_device);
    fprintf(out, "\n");
  }
}

static const char *answer(int v) {
  return v == 1 ? "yes" : v == 0 ? "no" : "unknown (handled as the worst case)";
}

/* The attribution mode in force (F8a) and why. */
static void print_attribution(FILE *out, const struct info_facts *f) {
  if (f->attribution_error.code != CLS_OK) {
    print_error(out, "attribution:", &f->attribution_error);
    return;
  }
  if (f->attribution_mode == CLS_ATTRIBUTION_RANGED)
    fprintf(out, "%-22s ranged (an OpenCL event every %u commands at most)\n", "attribution:",
            f->event_every);
  else
    fprintf(out, "%-22s exact (an OpenCL event per command)\n", "attribution:");
  fprintf(out, "%-22s %s\n", "", f->attribution_why ? f->attribution_why : "");
}

/* The context device's quirks, each with the workaround it selects
 * (README "Portability"). */
static void print_quirks(FILE *out, const struct info_facts *f) {
  const struct cls_quirks *q = &f->quirks;
  if (f->quirks_error.code != CLS_OK) {
    print_error(out, "quirks:", &f->quirks_error);
    return;
  }
  char b[64];
  fprintf(out, "\nquirks of the context device (%s in %.1f ms):\n",
          q->probed ? "probed" : "probe did not finish", q->probe_ms);
  fprintf(out, "  failed event calls its callback      %s\n", answer(q->failed_callback));
  fprintf(out, "      clstream polls event status; it never relies on callbacks\n");
  fprintf(out, "  command on a failed event fails      %s", answer(q->dependent_fails));
  if (q->dependent_fails == 1)
    fprintf(out, " (status %s)", cls_cl_status_name(q->dependent_status));
  fprintf(out, "\n      clstream never enqueues a command on an event known to have failed (F7)\n");
  fprintf(out, "  failure fails later commands (queue) %s\n", answer(q->queue_poisoned));
  fprintf(out, "      %s\n", q->queue_poisoned == 1
                                 ? "the last command's event tells whether any before it failed"
                                 : "each command's own event tells whether it failed");
  fprintf(out, "  clFinish returned before completion  %s\n", answer(q->finish_early));
  fprintf(out, "      after clFinish clstream waits for the last command's event (always)\n");
  fprintf(out, "  OpenCL version                       %d.%d\n", q->cl_version / 100,
          q->cl_version / 10 % 10);
  fprintf(out, "  max allocation                       %s\n",
          info_human_bytes(q->max_alloc_size, b, sizeof b));
  fprintf(out, "  max work-group                       %zu\n", q->max_work_group_size);
  fprintf(out, "  runs above the kernel's work-group   %s", answer(q->wg_above_kernel_max));
  if (q->kernel_work_group_size >= q->max_work_group_size)
    fprintf(out, " (nothing above: a probe kernel reports the device's %zu)",
            q->kernel_work_group_size);
  else if (q->kernel_work_group_size && q->wg_above_kernel_max == 1)
    fprintf(out, " (a probe kernel reports %zu; %zu ran right)", q->kernel_work_group_size,
            q->max_work_group_size);
  else if (q->kernel_work_group_size && q->wg_above_kernel_max == 0)
    fprintf(out, " (a probe kernel reports %zu; more did not run right)",
            q->kernel_work_group_size);
  fprintf(out, "\n      launches are checked against %s\n",
          q->wg_above_kernel_max == 1
              ? "the device's work-group maximum, not the kernel's"
              : "each kernel's CL_KERNEL_WORK_GROUP_SIZE (cls_kernel_info tells it)");
  fprintf(out, "  memory page                          %s\n",
          info_human_bytes(q->page_size, b, sizeof b));
  fprintf(out, "      sizes and work sizes are checked against these before OpenCL sees them\n");
}

/* One line naming a device: "[0:0] name (CPU, platform)". */
static void print_choice(FILE *out, const char *label, const struct cls_device_info *d) {
  fprintf(out, "%-22s [%d:%d] %s (%s, %s)\n", label, d->platform_index, d->device_index,
          d->device_name, info_type_name(d->type), d->platform_name);
}

static void print_drivers(FILE *out, const struct info_facts *f) {
  fprintf(out, "\nscheduler drivers (CLS_SCHEDULER=NAME[:PARAMS]; CLS_SCHEDULER=help lists the "
               "parameters):\n");
  for (size_t i = 0; i < f->ndrivers; i++)
    fprintf(out, "  %-10s %s%s\n", f->drivers[i].name, f->drivers[i].description,
            strcmp(f->drivers[i].name, f->default_driver) == 0 ? " (default)" : "");
}

/* The image formats the context device supports, by image type. */
static void print_images(FILE *out, const struct info_facts *f) {
  static const char *const types[] = {"2D", "3D", "2D array"};
  if (f->images_error.code != CLS_OK) {
    print_error(out, "image formats:", &f->images_error);
    return;
  }
  fprintf(out, "\nimage formats of the context device (read-write; cls_image_formats):\n");
  for (int t = 0; t < 3; t++) {
    fprintf(out, "  %-9s %zu%s", types[t], f->nimage_formats[t],
            f->nimage_formats[t] ? ":" : " (no image support)");
    for (size_t i = 0; i < f->nimage_formats[t]; i++)
      fprintf(out, "%s%s/%s", i % 4 ? ", " : "\n    ", f->image_formats[t][i].order_name,
              f->image_formats[t][i].type_name);
    fprintf(out, "\n");
  }
}

static void print_text(const struct info_facts *f, FILE *out) {
  fprintf(out, "clstream %s\n\n", f->version);
  if (f->list_oom) {
    fprintf(stderr, "clstream-info: out of memory\n");
    return;
  }
  if (f->list.code != CLS_OK) {
    print_error(out, "listing devices:", &f->list);
    return;
  }
  print_platforms(out, f);
  if (f->ndevs == 0) {
    fprintf(out, "No OpenCL device found.\n");
    if (f->icd_vendors)
      fprintf(out, "(OCL_ICD_VENDORS=%s restricts the ICD loader)\n", f->icd_vendors);
    return;
  }
  if (f->default_error.code == CLS_OK)
    print_choice(out, "default selection:", &f->default_pick);
  else
    print_error(out, "default selection:", &f->default_error);
  if (f->cls_device) {
    char label[64];
    snprintf(label, sizeof label, "CLS_DEVICE=\"%.30s\":", f->cls_device);
    if (f->env_error.code != CLS_OK) {
      print_error(out, label, &f->env_error);
      return;
    }
    print_choice(out, label, &f->env_pick);
  }
  if (f->context_error.code != CLS_OK) {
    print_error(out, "context:", &f->context_error);
    return;
  }
  size_t ndev = f->have_context_devices ? f->ncontext_devices : 0;
  for (size_t i = 0; i < ndev && i < CLS_MAX_DEVICES; i++) {
    char label[32];
    if (ndev == 1)
      snprintf(label, sizeof label, "context device:");
    else
      snprintf(label, sizeof label, "context device %zu:", i);
    print_choice(out, label, &f->context_devices[i]);
  }
  fprintf(out, "%-22s %s\n", "context driver:", f->driver);
  print_attribution(out, f);
  print_quirks(out, f);
  print_images(out, f);
  print_drivers(out, f);
}

const struct info_printer info_text_printer = {NULL, 0, print_text};
