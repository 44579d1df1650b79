/* Kernels: looked up by name in a built program, with their argument
 * count, work-group limits and (where the platform gives argument info)
 * argument signatures: kinds, access and the F11/F11a type codes that a
 * launch's arguments are checked against; per-stream kernel copies. */
#include "core/kernel.h"
#include "device/quirks.h"
#include "failure/failure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cls__kernels_forget_args(cls_context *ctx) {
  for (struct cls_program *p = ctx->programs; p; p = p->next)
    for (struct cls_kernel *k = p->kernels; k; k = k->next) {
      k->memo.valid = 0;
      for (uint64_t m = k->made; m; m &= m - 1)
        k->lanes[__builtin_ctzll(m)]->memo.valid = 0;
    }
}

void cls__kernel_lane_new(cls_kernel *k, int stream) {
  /* Once per kernel and stream; a kernel of a program that failed to
   * build has nothing to copy (its launches are skipped). */
  struct cls__kernel_lane *l = k->kernel ? calloc(1, sizeof *l) : NULL;
  cl_int crc = CL_SUCCESS;
  if (l)
    l->kernel = clCreateKernel(k->prog->program, k->name, &crc);
  if (!l || crc != CL_SUCCESS || !l->kernel) {
    free(l);
    l = CLS__NO_LANE;
  } else {
    k->made |= 1ull << stream;
  }
  k->lanes[stream] = l;
}

/* Size of an OpenCL C built-in scalar or vector type by name ("uint",
 * "float4"); 0 for anything else (structs, typedefs): not checked. */
static size_t type_size(const char *t) {
  static const struct {
    const char *name;
    size_t size;
  } base[] = {{"uchar", 1}, {"char", 1},   {"bool", 1},   {"ushort", 2}, {"short", 2},
              {"half", 2},  {"uint", 4},   {"int", 4},    {"float", 4},  {"ulong", 8},
              {"long", 8},  {"double", 8}};
  if (strncmp(t, "unsigned ", 9) == 0)
    t += 9; /* "unsigned int": same size as "int" */
  for (size_t i = 0; i < sizeof base / sizeof *base; i++) {
    size_t n = strlen(base[i].name);
    if (strncmp(t, base[i].name, n) != 0)
      continue;
    const char *rest = t + n;
    if (!*rest)
      return base[i].size;
    char *end;
    long w = strtol(rest, &end, 10);
    if (*end)
      return 0;
    if (w == 2 || w == 4 || w == 8 || w == 16)
      return base[i].size * (size_t)w;
    if (w == 3)
      return base[i].size * 4; /* 3-vectors are stored as 4 */
    return 0;
  }
  return 0;
}

/* F11a: OpenCL C's built-in scalar types, in enum cls_type's order. */
static const struct {
  const char *name;
  size_t size;
} types[] = {{"", 0},      {"char", 1}, {"uchar", 1}, {"short", 2}, {"ushort", 2}, {"int", 4},
             {"uint", 4},  {"long", 8}, {"ulong", 8}, {"half", 2},  {"float", 4},  {"double", 8}};
enum { NTYPES = sizeof types / sizeof *types };

static bool width_ok(unsigned w) { return w == 1 || w == 2 || w == 3 || w == 4 || w == 8 || w == 16; }

size_t cls__type_size(int type) {
  unsigned base = (unsigned)type & 0xff, w = (unsigned)type >> 8;
  if (base == 0 || base >= NTYPES || !width_ok(w ? w : 1))
    return 0;
  return types[base].size * (w == 3 ? 4 : w ? w : 1);
}

void cls__type_name(int type, char *out, size_t cap) {
  unsigned base = (unsigned)type & 0xff, w = (unsigned)type >> 8;
  if (base == 0 || base >= NTYPES)
    snprintf(out, cap, "type %d", type);
  else if (w > 1)
    snprintf(out, cap, "%s%u", types[base].name, w);
  else
    snprintf(out, cap, "%s", types[base].name);
}

bool cls__type_fits(int want, int given) {
  unsigned wb = (unsigned)want & 0xff, gb = (unsigned)given & 0xff;
  unsigned ww = (unsigned)want >> 8, gw = (unsigned)given >> 8;
  ww = ww == 3 ? 4 : ww ? ww : 1;
  gw = gw == 3 ? 4 : gw ? gw : 1;
  /* The integer types come in signed/unsigned pairs: char, uchar, ... */
  bool sign_only = wb <= CLS_TYPE_ULONG && gb <= CLS_TYPE_ULONG && (wb + 1) / 2 == (gb + 1) / 2;
  return ww == gw && (wb == gb || sign_only);
}

/* The type code of an argument's type name ("float4", "unsigned int"),
 * 0 for anything else (a typedef, a struct): not checked. */
static uint16_t type_code(const char *t) {
  bool uns = strncmp(t, "unsigned ", 9) == 0;
  if (uns)
    t += 9;
  for (unsigned b = 1; b < NTYPES; b++) {
    size_t n = strlen(types[b].name);
    if (strncmp(t, types[b].name, n) != 0)
      continue;
    const char *rest = t + n;
    char *end;
    long w = *rest ? strtol(rest, &end, 10) : 1;
    if ((*rest && *end) || w < 1 || !width_ok((unsigned)w))
      continue; /* "uint" is not "u" + "int": the loop goes on */
    if (uns && b != CLS_TYPE_CHAR && b != CLS_TYPE_SHORT && b != CLS_TYPE_INT && b != CLS_TYPE_LONG)
      return 0;
    return (uint16_t)((b + uns) | (w > 1 ? (unsigned)w << 8 : 0));
  }
  return 0;
}

/* F11: whether a global pointer argument is const, where the platform
 * gives type qualifiers; where it does not, the declaration is trusted
 * (said once per context). */
static void access_unchecked(cls_context *ctx, const struct cls_kernel *k) {
  if (!ctx->said_no_access_info)
    cls__log(&ctx->logger, CLS_LOG_ERRORS,
             "kernel '%s': the device gives no argument info; declared buffer access is "
             "trusted, not checked (F11), and CLS_ARG means read-write",
             k->name);
  ctx->said_no_access_info = true;
}

static void access_of(cls_context *ctx, struct cls_kernel *k, cl_uint i) {
  /* An image's access is its access qualifier: the signature says it. */
  cl_kernel_arg_access_qualifier aq = CL_KERNEL_ARG_ACCESS_NONE;
  if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof aq, &aq, NULL) ==
          CL_SUCCESS &&
      aq != CL_KERNEL_ARG_ACCESS_NONE) {
    k->images |= 1u << i;
    if (aq == CL_KERNEL_ARG_ACCESS_READ_ONLY) {
      k->readonly |= 1u << i;
    } else {
      k->writable |= 1u << i;
      if (aq == CL_KERNEL_ARG_ACCESS_WRITE_ONLY)
        k->writeonly |= 1u << i;
      else
        k->readwrite |= 1u << i;
    }
    return;
  }
  cl_kernel_arg_type_qualifier tq = 0;
  if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL) !=
      CL_SUCCESS) {
    access_unchecked(ctx, k);
    return;
  }
  if (tq & CL_KERNEL_ARG_TYPE_CONST)
    k->readonly |= 1u << i;
  else
    k->writable |= 1u << i;
}

void cls__kernel_arg_name(const struct cls_kernel *k, size_t i, char *out, size_t cap) {
  out[0] = '\0';
  if (!k->kernel || i >= k->nargs ||
      clGetKernelArgInfo(k->kernel, (cl_uint)i, CL_KERNEL_ARG_NAME, cap, out, NULL) != CL_SUCCESS)
    out[0] = '\0';
  out[cap - 1] = '\0';
}

/* What the launch's one test per buffer argument refuses (see refuse in
 * kernel.h), from argq, images and writable: bits 1-3 for a buffer given
 * with that access, the same shifted by CLS__KIND_IMAGE for an image. */
static void refusals(struct cls_kernel *k) {
  const unsigned all = 1u << CLS_READ | 1u << CLS_WRITE | 1u << CLS_READ_WRITE;
  for (size_t i = 0; i < CLS_MAX_ARGS; i++) {
    bool image = k->images >> i & 1;
    /* What the argument's own kind refuses. */
    unsigned own = k->no_read_write && (k->readwrite >> i & 1) ? all
                   : k->writable >> i & 1                       ? 1u << CLS_READ
                                                                : 0;
    unsigned r;
    if (k->argq[i] > CLS__ARGQ_GLOBAL) /* not memory: neither kind */
      r = all | all << CLS__KIND_IMAGE;
    else if (k->argq[i] == CLS__ARGQ_UNKNOWN) /* no signature: nothing */
      r = 0;
    else if (image)
      r = all | own << CLS__KIND_IMAGE;
    else
      r = own | all << CLS__KIND_IMAGE;
    k->refuse[i] = (unsigned char)r;
  }
}

/* OpenCL 2.0's read_write images: where the device has none (below 2.0,
 * or CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS 0), a launch binding one is
 * refused (launch.c), not handed to a runtime that may misbehave. */
#ifndef CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS
#define CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS 0x104C
#endif
static void read_write_images(cls_context *ctx, struct cls_kernel *k) {
  if (!k->readwrite)
    return;
  cl_uint n = 0;
  k->no_read_write = ctx->info.cl_version < 200 ||
                     clGetDeviceInfo(ctx->device, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, sizeof n,
                                     &n, NULL) != CL_SUCCESS ||
                     n == 0;
}

/* Whether a launch checks its CLS_LOCAL sizes (launch.c): an argument
 * takes __local memory, or the arguments are not known. */
static bool takes_local(const struct cls_kernel *k) {
  bool any = k->nargs == CLS__NARGS_UNKNOWN;
  for (cl_uint i = 0; i < k->nargs && i < CLS_MAX_ARGS; i++)
    any |= k->argq[i] == CLS__ARGQ_LOCAL || k->argq[i] == CLS__ARGQ_UNKNOWN;
  return any;
}

/* What a skip's detail calls each argument (cls__skipped): made here,
 * once, so that a skip asks OpenCL nothing (F10). */
static void labels(struct cls_kernel *k) {
  if (k->nargs == 0 || k->nargs > CLS_MAX_ARGS || !(k->label = malloc(k->nargs * sizeof *k->label)))
    return;
  for (cl_uint i = 0; i < k->nargs; i++) {
    char name[64];
    cls__kernel_arg_name(k, i, name, sizeof name);
    snprintf(k->label[i], sizeof k->label[i], "argument %u%s%s%s", i, name[0] ? " ('" : "", name,
             name[0] ? "')" : "");
  }
}

/* Argument kinds and scalar sizes, where the platform gives argument info
 * (programs are built with -cl-kernel-arg-info): mistakes are then caught
 * before OpenCL, with one clstream code on every vendor. */
static void arg_info(cls_context *ctx, struct cls_kernel *k) {
  if (k->nargs == 0)
    return;
  if (ctx->info.cl_version < 120) {
    access_unchecked(ctx, k);
    return;
  }
  if (k->nargs > CLS_MAX_ARGS)
    return; /* no launch can give it its arguments (CLS_EINVAL) */
  k->argsize = calloc(k->nargs, sizeof *k->argsize);
  if (!k->argsize)
    return;
  for (cl_uint i = 0; i < k->nargs; i++) {
    cl_kernel_arg_address_qualifier q;
    if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL) !=
        CL_SUCCESS)
      goto unknown; /* not available: only the count is checked */
    k->argq[i] = q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT
                     ? CLS__ARGQ_GLOBAL
                 : q == CL_KERNEL_ARG_ADDRESS_LOCAL ? CLS__ARGQ_LOCAL
                                                    : CLS__ARGQ_PRIVATE;
    if (q == CL_KERNEL_ARG_ADDRESS_CONSTANT)
      k->readonly |= 1u << i;
    else if (q == CL_KERNEL_ARG_ADDRESS_GLOBAL)
      access_of(ctx, k, i);
    char tname[64];
    if (k->argq[i] == CLS__ARGQ_PRIVATE &&
        clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_TYPE_NAME, sizeof tname, tname, NULL) ==
            CL_SUCCESS) {
      tname[sizeof tname - 1] = '\0';
      k->argsize[i] = type_size(tname);
      k->argtype[i] = type_code(tname);
    }
  }
  return;
unknown:
  memset(k->argq, CLS__ARGQ_UNKNOWN, sizeof k->argq);
  memset(k->argtype, 0, sizeof k->argtype);
  k->writable = k->readonly = k->images = k->writeonly = k->readwrite = 0;
  access_unchecked(ctx, k);
  free(k->argsize);
  k->argsize = NULL;
}

/* What a CLS_ENOKERNEL detail offers instead: the program's kernels, as
 * OpenCL lists them, or why they cannot be listed. */
static void append_kernel_names(cl_program program) {
  size_t n = 0;
  char *names = NULL;
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n) != CL_SUCCESS || n == 0 ||
      !(names = malloc(n)) ||
      clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, n, names, NULL) != CL_SUCCESS) {
    free(names);
    cls__error_append("; the program's kernels cannot be listed on this platform");
    return;
  }
  names[n - 1] = '\0';
  if (!names[0])
    cls__error_append("; the program has no kernels");
  else
    cls__error_append("; the program has:");
  for (char *save = NULL, *k = strtok_r(names, ";", &save); k; k = strtok_r(NULL, ";", &save))
    cls__error_append(" %s%s", k, save && *save ? "," : "");
  free(names);
}

/* The work-group maximum launches of k are checked against: the
 * kernel's, or the device's where the vendor runs more than it reports
 * for every kernel (quirk wg_above_kernel_max, rusticl), unless this
 * kernel reports less than the probe's own kernel did (a limit of its
 * own) or requires a work-group size. */
static size_t enforced_wg(cls_context *ctx, const struct cls_kernel *k) {
  size_t dev = ctx->info.max_work_group_size;
  if (!k->kernel_wg || k->kernel_wg >= dev)
    return dev;
  size_t reqd[3] = {0, 0, 0};
  if (clGetKernelWorkGroupInfo(k->kernel, ctx->device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                               sizeof reqd, reqd, NULL) != CL_SUCCESS || reqd[0])
    return k->kernel_wg;
  size_t probed = 0;
  if (cls__quirks_wg(ctx->clctx, ctx->device, &ctx->info, &probed) == 1 && probed &&
      k->kernel_wg >= probed)
    return dev;
  return k->kernel_wg;
}

static void work_group_info(cls_context *ctx, struct cls_kernel *k) {
  cl_device_id d = ctx->device;
  clGetKernelWorkGroupInfo(k->kernel, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof k->kernel_wg,
                           &k->kernel_wg, NULL);
  clGetKernelWorkGroupInfo(k->kernel, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                           sizeof k->wg_multiple, &k->wg_multiple, NULL);
  clGetKernelWorkGroupInfo(k->kernel, d, CL_KERNEL_LOCAL_MEM_SIZE, sizeof k->local_mem,
                           &k->local_mem, NULL);
  clGetKernelWorkGroupInfo(k->kernel, d, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof k->private_mem,
                           &k->private_mem, NULL);
  k->max_wg = enforced_wg(ctx, k);
}

CLS_API int cls_kernel_get(cls_context *ctx, cls_program *prog, const char *name,
                           cls_kernel **out) {
  if (!ctx || !prog || !name || !out)
    return cls__error(CLS_EINVAL, 0, "cls_kernel_get: NULL argument");
  *out = NULL;
  CLS__LOCK(ctx);
  int rc = CLS_OK;
  if (!cls__program_of(ctx, prog)) {
    rc = cls__error(CLS_EFOREIGN, 0, "cls_kernel_get: not a program of this context");
    goto done;
  }
  if (prog->refs == 0) { /* kept for the kernels taken before, not for new ones */
    rc = cls__error(CLS_ESTALE, 0, "cls_kernel_get: the program was released");
    goto done;
  }
  for (struct cls_kernel *k = prog->kernels; k; k = k->next)
    if (strcmp(k->name, name) == 0) {
      *out = k;
      goto done;
    }
  /* A program that failed to build gives stand-ins (no cl_kernel): their
   * launches carry the build failure downstream. */
  cl_kernel kern = NULL;
  if (!prog->build_failure) {
    cl_int crc;
    kern = clCreateKernel(prog->program, name, &crc);
    if (crc != CL_SUCCESS) {
      rc = cls__error(crc == CL_INVALID_KERNEL_NAME ? CLS_ENOKERNEL : CLS_ECL, crc,
                      "kernel '%s': %s", name, cls_cl_status_name(crc));
      if (rc == CLS_ENOKERNEL)
        append_kernel_names(prog->program);
      goto done;
    }
  }
  struct cls_kernel *k = calloc(1, sizeof *k);
  if (!k || !(k->name = cls__dupstr(name, strlen(name)))) {
    free(k);
    if (kern)
      clReleaseKernel(kern);
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto done;
  }
  k->kernel = kern;
  k->home = -1;
  k->magic = CLS__KERNEL_MAGIC;
  k->ctx = ctx;
  k->prog = prog;
  k->nargs = CLS__NARGS_UNKNOWN;
  if (kern) {
    clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, sizeof k->nargs, &k->nargs, NULL);
    work_group_info(ctx, k);
    arg_info(ctx, k);
    labels(k);
    k->takes_local = takes_local(k);
    read_write_images(ctx, k);
    refusals(k); /* from what arg_info found, all zero where it found nothing */
  }
  k->next = prog->kernels;
  prog->kernels = k;
  *out = k;
done:
  cls__unlock(ctx);
  return rc;
}

CLS_API const char *cls_kernel_name(const cls_kernel *k) {
  return k && k->magic == CLS__KERNEL_MAGIC ? k->name : "";
}

CLS_API int cls_kernel_num_args(const cls_kernel *k) {
  cls__error_clear();
  if (!k || k->magic != CLS__KERNEL_MAGIC)
    return cls__error(CLS_EINVAL, 0, "cls_kernel_num_args: not a kernel");
  return (int)k->nargs;
}

/* The argument's name, cut to fit: cls__kernel_arg_name gives "" for a
 * name longer than its buffer. */
static void arg_name(const struct cls_kernel *k, cl_uint i, char *out, size_t cap) {
  out[0] = '\0';
  size_t len = 0;
  if (clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_NAME, 0, NULL, &len) != CL_SUCCESS || !len)
    return;
  if (len <= cap) {
    cls__kernel_arg_name(k, i, out, cap);
    return;
  }
  char *full = malloc(len);
  if (full && clGetKernelArgInfo(k->kernel, i, CL_KERNEL_ARG_NAME, len, full, NULL) == CL_SUCCESS) {
    memcpy(out, full, cap - 1);
    out[cap - 1] = '\0';
  }
  free(full);
}

CLS_API int cls_kernel_info(const cls_kernel *k, struct cls_kernel_info *out) {
  if (!k || !out)
    return cls__error(CLS_EINVAL, 0, "cls_kernel_info: NULL argument");
  if (k->magic != CLS__KERNEL_MAGIC)
    return cls__error(CLS_EINVAL, 0, "cls_kernel_info: not a kernel");
  if (out->version < 1 || out->version > CLS_KERNEL_INFO_VERSION)
    return cls__error(CLS_EVERSION, 0, "struct cls_kernel_info version %u (this library: 1..%d)",
                      out->version, CLS_KERNEL_INFO_VERSION);
  unsigned version = out->version;
  memset(out, 0, sizeof *out);
  out->version = version;
  if (!k->kernel) {
    out->nargs = -1;
    return cls__error(CLS_EBUILD, 0, "kernel '%s': its program failed to build", k->name);
  }
  CLS__LOCK(k->ctx); /* the kernel's argument queries, against a launch setting them */
  out->max_work_group_size = k->max_wg ? k->max_wg : k->ctx->info.max_work_group_size;
  out->kernel_work_group_size = k->kernel_wg;
  out->preferred_work_group_size_multiple = k->wg_multiple;
  out->local_mem_size = k->local_mem;
  out->private_mem_size = k->private_mem;
  out->nargs = (int)k->nargs;
  for (cl_uint i = 0; i < k->nargs && i < CLS_MAX_ARGS; i++) {
    struct cls_kernel_arg_info *a = &out->args[i];
    arg_name(k, i, a->name, sizeof a->name);
    switch (k->argq[i]) {
    case CLS__ARGQ_GLOBAL:
      a->kind = CLS_ARG_BUFFER;
      a->access = k->readonly >> i & 1    ? CLS_READ
                  : k->writeonly >> i & 1 ? CLS_WRITE
                  : k->writable >> i & 1  ? CLS_READ_WRITE
                                          : 0;
      break;
    case CLS__ARGQ_LOCAL:
      a->kind = CLS_ARG_LOCAL;
      break;
    case CLS__ARGQ_PRIVATE:
      a->kind = CLS_ARG_SCALAR;
      break;
    default:
      break; /* no argument info: unknown */
    }
  }
  cls__unlock(k->ctx);
  return CLS_OK;
}

void cls__kernels_fini(cls_context *ctx) {
  for (struct cls_program *p = ctx->programs; p; p = p->next) {
    struct cls_kernel *k = p->kernels;
    while (k) {
      struct cls_kernel *next = k->next;
      for (uint64_t m = k->made; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        clReleaseKernel(k->lanes[i]->kernel);
        free(k->lanes[i]);
      }
      if (k->kernel)
        clReleaseKernel(k->kernel);
      free(k->argsize);
      free(k->label);
      free(k->name);
      k->magic = 0;
      free(k);
      k = next;
    }
    p->kernels = NULL;
  }
}
