/* Internal: kernels (kernel.c): each kernel's argument signature as the
 * launch checks take it (F11, F11a, F12), its per-stream copies and their
 * argument memos.  A kernel is taken from a program (core/program.h). */
#ifndef CLS_KERNEL_H
#define CLS_KERNEL_H

#include "core/program.h"

/* Ordered so that one compare, argq > CLS__ARGQ_GLOBAL, tells a buffer
 * argument it is in the wrong place. */
enum { CLS__ARGQ_UNKNOWN = 0, CLS__ARGQ_GLOBAL, CLS__ARGQ_LOCAL, CLS__ARGQ_PRIVATE };
/* nargs of a kernel taken from a failed build: not checked. */
#define CLS__NARGS_UNKNOWN ((cl_uint)-1)

_Static_assert(CLS_MAX_ARGS <= 32, "the argument memo has a bit per argument");

#define CLS__ARG_LABEL 80

struct cls_kernel {
  unsigned magic;          /* checked before use: a freed or foreign pointer
                              is rejected rather than dereferenced further */
  cls_context *ctx;
  cl_kernel kernel;
  char *name;
  /* Per argument, what a skip's detail calls it: "argument 3 ('dst')"
   * (made at the lookup; NULL where there was no memory, or more than
   * CLS_MAX_ARGS arguments). */
  char (*label)[CLS__ARG_LABEL];
  cl_uint nargs;
  unsigned char argq[CLS_MAX_ARGS]; /* address qualifier per arg, UNKNOWN
                              where the platform gives no argument info */
  size_t *argsize;         /* scalars: size of the type, 0 if unknown */
  /* Scalars: the argument's type as enum cls_type codes it (F11a), 0
   * where unknown (a typedef, a struct, no argument info): not checked. */
  uint16_t argtype[CLS_MAX_ARGS];
  /* F11, where the platform gives type qualifiers: bit i set when argument
   * i is a global pointer the kernel may write (not const, not
   * __constant), resp. one it only reads.  Both 0 where unknown. */
  uint32_t writable, readonly;
  /* The bindings a launch refuses, per argument: bit a + kind set refuses
   * access a (CLS_READ, CLS_WRITE, CLS_READ_WRITE) of a buffer (kind 0) or
   * an image (kind CLS__KIND_IMAGE).  All three of a kind the argument is
   * not, CLS_READ where F11 finds it writable (strict: refused; else said
   * once, then the bit is cleared), none where unknown: one test per
   * argument (refusals() in kernel.c). */
  unsigned char refuse[CLS_MAX_ARGS];
  size_t max_wg;           /* the work-group maximum launches are checked
                              against (cls_kernel_info); 0: the device's */
  struct cls_kernel *next;
  struct cls_program *prog;
  /* As reported at the lookup, for cls_kernel_info. */
  size_t kernel_wg;        /* CL_KERNEL_WORK_GROUP_SIZE */
  size_t wg_multiple;
  cl_ulong local_mem, private_mem;
  /* What factories last set on `kernel` (launches pass it on). */
  struct cls_kernel_args_memo memo;
  /* The stream that launches `kernel` itself (-1: none yet); any other
   * stream launches a copy of its own, made at its first launch, so that
   * streams giving one kernel different buffers do not overwrite each
   * other's arguments (the memo then spares the clSetKernelArg calls raw
   * code with a kernel object per queue does not make).  NULL: not made
   * yet, or CLS__NO_LANE where the copy could not be made (the shared
   * kernel serves). */
  int home;
  struct cls__kernel_lane *lanes[CLS_MAX_STREAMS];
  uint64_t made; /* bit i: lanes[i] holds a copy (cls__lane_made), so that
                    forgetting the memos walks the copies, not the slots */
  /* Images, from CL_KERNEL_ARG_ACCESS_QUALIFIER (0 where unknown): bit i
   * set when argument i is an image, one the kernel only writes
   * (__write_only; also in writable), one it reads and writes
   * (__read_write; also in writable); __read_only ones are in readonly.
   * no_read_write: the device has no read_write images (CLS_ENOSYS at a
   * launch binding one). */
  uint32_t images, writeonly, readwrite;
  bool no_read_write;
  /* An argument takes __local memory, or the arguments are not known:
   * launches check the CLS_LOCAL sizes against the device's (launch.c). */
  bool takes_local;
};

struct cls__kernel_lane {
  cl_kernel kernel;
  struct cls_kernel_args_memo memo;
};
#define CLS__NO_LANE ((struct cls__kernel_lane *)1)
/* Whether lane slot l holds a copy (neither not made nor CLS__NO_LANE). */
static inline bool cls__lane_made(const struct cls__kernel_lane *l) {
  return l && l != CLS__NO_LANE;
}

/* The kernel and memo stream `stream` launches k with (cls_kernel_cmd). */
void cls__kernel_lane_new(cls_kernel *k, int stream);
static inline void cls__kernel_for(cls_kernel *k, int stream, cl_kernel *kernel,
                                   struct cls_kernel_args_memo **memo) {
  if (k->home != stream) {
    if (k->home < 0) {
      k->home = stream;
    } else {
      if (!k->lanes[stream])
        cls__kernel_lane_new(k, stream);
      struct cls__kernel_lane *l = k->lanes[stream];
      if (l != CLS__NO_LANE) {
        *kernel = l->kernel;
        *memo = &l->memo;
        return;
      }
    }
  }
  *kernel = k->kernel;
  *memo = &k->memo;
}

/* The access a binding of argument i takes: `declared`, or for
 * CLS_ACCESS_INFER the signature's (read for a const global pointer, else
 * read-write, the safe choice where the signature is unknown). */
static inline int cls__kernel_access(const struct cls_kernel *k, size_t i, int declared) {
  if (declared != CLS_ACCESS_INFER)
    return declared;
  if (i < CLS_MAX_ARGS && (k->writeonly >> i & 1))
    return CLS_WRITE; /* a __write_only image */
  return i < CLS_MAX_ARGS && (k->readonly >> i & 1) ? CLS_READ : CLS_READ_WRITE;
}
/* Argument i's name where the platform gives it, else "" (error paths). */
/* The OpenCL C name of an enum cls_type code ("float", "uint4") into out. */
void cls__type_name(int type, char *out, size_t cap);
/* F11a: whether a scalar typed `given` may bind an argument of type
 * `want` (both known): the same type up to signedness, and a width of 3
 * against 4. */
bool cls__type_fits(int want, int given);
/* The byte size of a type code, 0 for an invalid one. */
size_t cls__type_size(int type);
void cls__kernel_arg_name(const struct cls_kernel *k, size_t i, char *out, size_t cap);
#define CLS__KERNEL_MAGIC 0x6b726e6cu /* "krnl" */
static inline bool cls__kernel_valid(const cls_context *ctx, const cls_kernel *k) {
  return k && k->magic == CLS__KERNEL_MAGIC && k->ctx == ctx;
}

/* A cl_mem was released: a new one may take its address, and a kernel
 * argument the memo says holds it would then be skipped, while the
 * runtime may keep what it resolved of the old one (PoCL does).  So every
 * kernel's argument memo is forgotten (a release is no hot path). */
void cls__kernels_forget_args(cls_context *ctx);
/* Releases every kernel of every program of ctx (context destroy, before
 * cls__programs_fini). */
void cls__kernels_fini(cls_context *ctx);

#endif /* CLS_KERNEL_H */
