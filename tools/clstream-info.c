/* clstream-info: lists every OpenCL platform and device clstream can see,
 * the device the default selection and $CLS_DEVICE pick, the driver a
 * context runs on, and the quirks probed on its device.
 *
 * Exit status: 0 on success, 1 when no device is found (or the selection or
 * the context fails), 2 on a usage error. */
#include <clstream.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *to) {
  fprintf(to,
          "Usage: clstream-info [--help] [--version]\n"
          "\n"
          "Lists the OpenCL platforms and devices clstream can use, the device\n"
          "the default selection picks, the device $CLS_DEVICE picks (when set)\n"
          "and the driver a context runs on.\n"
          "\n"
          "Environment:\n"
          "  CLS_DEVICE     device selection: \"P:D\", \"cpu\", \"gpu\", \"accelerator\",\n"
          "                 or part of a platform or device name (\"pocl\")\n"
          "  CLS_SCHEDULER  driver: \"event\" or \"scheduler\"\n"
          "  OCL_ICD_VENDORS  restricts the OpenCL ICD loader to these vendors\n");
}

static const char *type_name(int type) {
  switch (type) {
  case CLS_DEVICE_CPU: return "CPU";
  case CLS_DEVICE_GPU: return "GPU";
  case CLS_DEVICE_ACCELERATOR: return "accelerator";
  default: return "other";
  }
}

/* "7.6 GiB" style: the largest binary unit that keeps the value >= 1. */
static const char *human_bytes(unsigned long long n, char *buf, size_t cap) {
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

static void print_device(const struct cls_device_info *d) {
  char b[64];
  printf("[%d:%d] %s (%s)\n", d->platform_index, d->device_index,
         d->device_name, type_name(d->type));
  printf("    platform           %s, %s\n", d->platform_name, d->platform_version);
  printf("    device version     %s\n", d->device_version);
  printf("    driver version     %s\n", d->driver_version);
  printf("    compute units      %u\n", d->compute_units);
  printf("    global memory      %s\n", human_bytes(d->global_mem_size, b, sizeof b));
  printf("    max allocation     %s\n", human_bytes(d->max_alloc_size, b, sizeof b));
  printf("    local memory       %s\n", human_bytes(d->local_mem_size, b, sizeof b));
  printf("    max work-group     %zu\n", d->max_work_group_size);
  printf("    work-item sizes    %zu x %zu x %zu\n", d->max_work_item_sizes[0],
         d->max_work_item_sizes[1], d->max_work_item_sizes[2]);
  printf("    base address align %u bytes\n", d->base_addr_align);
}

static void print_error(const char *what, int rc) {
  const char *detail = cls_last_error_detail();
  printf("%-22s %s: %s\n", what, cls_err_name(rc), cls_strerror(rc));
  if (detail[0])
    printf("%s%s", detail, detail[strlen(detail) - 1] == '\n' ? "" : "\n");
}

static const char *answer(int v) {
  return v == 1 ? "yes" : v == 0 ? "no" : "unknown (handled as the worst case)";
}

/* The context device's quirks, each with the workaround it selects
 * (README "Portability"). */
static void print_quirks(cls_context *ctx) {
  struct cls_quirks q = {.version = CLS_QUIRKS_VERSION};
  if (cls_context_quirks(ctx, &q) != CLS_OK) {
    print_error("quirks:", cls_context_quirks(ctx, &q));
    return;
  }
  char b[64];
  printf("\nquirks of the context device (%s in %.1f ms):\n",
         q.probed ? "probed" : "probe did not finish", q.probe_ms);
  printf("  failed event calls its callback      %s\n", answer(q.failed_callback));
  printf("      clstream polls event status; it never relies on callbacks\n");
  printf("  command on a failed event fails      %s", answer(q.dependent_fails));
  if (q.dependent_fails == 1)
    printf(" (status %s)", cls_cl_status_name(q.dependent_status));
  printf("\n      clstream never enqueues a command on an event known to have failed (F7)\n");
  printf("  failure fails later commands (queue) %s\n", answer(q.queue_poisoned));
  printf("      %s\n", q.queue_poisoned == 1
                          ? "the last command's event tells whether any before it failed"
                          : "each command's own event tells whether it failed");
  printf("  clFinish returned before completion  %s\n", answer(q.finish_early));
  printf("      after clFinish clstream waits for the last command's event (always)\n");
  printf("  OpenCL version                       %d.%d\n", q.cl_version / 100,
         q.cl_version / 10 % 10);
  printf("  max allocation                       %s\n", human_bytes(q.max_alloc_size, b, sizeof b));
  printf("  max work-group                       %zu\n", q.max_work_group_size);
  printf("  runs above the kernel's work-group   %s", answer(q.wg_above_kernel_max));
  if (q.kernel_work_group_size >= q.max_work_group_size)
    printf(" (nothing above: a probe kernel reports the device's %zu)", q.kernel_work_group_size);
  else if (q.kernel_work_group_size && q.wg_above_kernel_max == 1)
    printf(" (a probe kernel reports %zu; %zu ran right)", q.kernel_work_group_size,
           q.max_work_group_size);
  else if (q.kernel_work_group_size && q.wg_above_kernel_max == 0)
    printf(" (a probe kernel reports %zu; more did not run right)", q.kernel_work_group_size);
  printf("\n      launches are checked against %s\n",
         q.wg_above_kernel_max == 1
             ? "the device's work-group maximum, not the kernel's"
             : "each kernel's CL_KERNEL_WORK_GROUP_SIZE (cls_kernel_info tells it)");
  printf("  memory page                          %s\n",
         human_bytes(q.page_size, b, sizeof b));
  printf("      sizes and work sizes are checked against these before OpenCL sees them\n");
}

/* One line naming a device: "[0:0] name (CPU, platform)". */
static void print_choice(const char *label, const struct cls_device_info *d) {
  printf("%-22s [%d:%d] %s (%s, %s)\n", label, d->platform_index,
         d->device_index, d->device_name, type_name(d->type), d->platform_name);
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (strcmp(argv[i], "--version") == 0) {
      printf("clstream-info (clstream) %s\n", cls_version_string());
      return 0;
    }
    fprintf(stderr, "clstream-info: unknown option '%s'\n", argv[i]);
    usage(stderr);
    return 2;
  }

  printf("clstream %s\n\n", cls_version_string());

  /* Ask for the count first, then for every entry. */
  size_t count = 0;
  int rc = cls_device_list(NULL, 0, &count);
  if (rc != CLS_OK) {
    print_error("listing devices:", rc);
    return 1;
  }
  if (count == 0) {
    printf("No OpenCL device found.\n");
    const char *vendors = getenv("OCL_ICD_VENDORS");
    if (vendors)
      printf("(OCL_ICD_VENDORS=%s restricts the ICD loader)\n", vendors);
    return 1;
  }
  struct cls_device_info *devs = calloc(count, sizeof *devs);
  if (!devs) {
    fprintf(stderr, "clstream-info: out of memory\n");
    return 1;
  }
  size_t listed = 0;
  rc = cls_device_list(devs, count, &listed);
  if (rc != CLS_OK) {
    print_error("listing devices:", rc);
    free(devs);
    return 1;
  }
  if (listed < count) /* a device went away between the two calls */
    count = listed;

  int platforms = 0;
  for (size_t i = 0; i < count; i++)
    if (i == 0 || devs[i].platform_index != devs[i - 1].platform_index)
      platforms++;
  printf("%zu OpenCL device%s on %d platform%s:\n\n", count,
         count == 1 ? "" : "s", platforms, platforms == 1 ? "" : "s");
  for (size_t i = 0; i < count; i++) {
    print_device(&devs[i]);
    printf("\n");
  }
  free(devs);

  int status = 0;
  struct cls_device_info pick;
  rc = cls_device_select(NULL, &pick);
  if (rc == CLS_OK) {
    print_choice("default selection:", &pick);
  } else {
    print_error("default selection:", rc);
    status = 1;
  }

  const char *env = getenv("CLS_DEVICE");
  if (env) {
    char label[64];
    snprintf(label, sizeof label, "CLS_DEVICE=\"%.30s\":", env);
    rc = cls_device_select(env, &pick);
    if (rc == CLS_OK) {
      print_choice(label, &pick);
    } else {
      print_error(label, rc);
      return 1; /* a context would fail the same way */
    }
  }

  /* A context honours $CLS_DEVICE and $CLS_SCHEDULER. */
  cls_context *ctx = NULL;
  rc = cls_context_create(&ctx, NULL);
  if (rc != CLS_OK) {
    print_error("context:", rc);
    return 1;
  }
  if (cls_context_device(ctx, &pick) == CLS_OK)
    print_choice("context device:", &pick);
  printf("%-22s %s\n", "context driver:", cls_context_driver(ctx));
  print_quirks(ctx);
  cls_context_destroy(ctx);

  printf("\nscheduler drivers (CLS_SCHEDULER=NAME[:PARAMS]):\n");
  for (size_t i = 0; i < cls_driver_count(); i++) {
    const char *name = NULL, *desc = NULL;
    if (cls_driver_info(i, &name, &desc) == CLS_OK)
      printf("  %-10s %s%s\n", name, desc,
             strcmp(name, cls_default_driver()) == 0 ? " (default)" : "");
  }
  return status;
}
