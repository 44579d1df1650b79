/* cls_launch: validates a launch completely before anything reaches
 * OpenCL, so a mistake gets the same clstream code on every vendor (PoCL
 * and the others disagree on the OpenCL code for a too-large local size),
 * then runs it through cls__run. */
#include "api/enter.h"
#include "core/command.h"
#include "core/kernel.h"
#include "core/refusal.h"
#include "base/handle.h"
#include "stream/pool.h"

/* The work-items of one launch must be countable in the device's size_t:
 * a product that wrapped gave a launch that never ran but counted as a
 * write, or an abort inside the runtime. */
static __attribute__((noinline)) int check_items(cls_context *ctx, const cls_kernel *k,
                                                 unsigned dims, const size_t *global) {
  size_t items = 1;
  for (unsigned i = 0; i < dims; i++)
    if (__builtin_mul_overflow(items, global[i], &items) || items > ctx->max_work_items)
      return cls__error(CLS_EWORKSIZE, 0,
                        "launch of '%s': global size %zu in dimension %u makes more work-items "
                        "than the device can count (%zu)",
                        k->name, global[i], i, ctx->max_work_items);
  return CLS_OK;
}

static int check_range(cls_context *ctx, const cls_kernel *k, unsigned dims,
                       const size_t *global, const size_t *local) {
  /* The usual launch, one dimension and no local size, in one test (a
   * global size of 0 wraps and takes the checks below). */
  if (dims == 1 && global && !local && global[0] - 1 < ctx->max_work_items)
    return CLS_OK;
  if (dims < 1 || dims > 3)
    return cls__error(CLS_EWORKSIZE, 0, "launch of '%s': %u dimensions (1 to 3)", k->name, dims);
  if (!global)
    return cls__error(CLS_EINVAL, 0, "launch of '%s': NULL global size", k->name);
  for (unsigned i = 0; i < dims; i++)
    if (global[i] == 0)
      return cls__error(CLS_EWORKSIZE, 0, "launch of '%s': global size 0 (dimension %u)",
                        k->name, i);
  if (dims > 1 || global[0] > ctx->max_work_items) {
    int rc = check_items(ctx, k, dims, global);
    if (rc < 0)
      return rc;
  }
  if (!local)
    return CLS_OK;
  size_t group = 1;
  for (unsigned i = 0; i < dims; i++) {
    if (local[i] == 0 || global[i] % local[i])
      return cls__error(CLS_EWORKSIZE, 0,
                        "launch of '%s': local size %zu does not divide global size %zu "
                        "(dimension %u)",
                        k->name, local[i], global[i], i);
    if (local[i] > ctx->info.max_work_item_sizes[i])
      return cls__error(CLS_EWORKSIZE, 0,
                        "launch of '%s': local size %zu exceeds the device's %zu (dimension %u)",
                        k->name, local[i], ctx->info.max_work_item_sizes[i], i);
    group *= local[i];
  }
  /* k->max_wg: the kernel's limit, or the device's where the vendor runs
   * more than the kernel reports (quirk wg_above_kernel_max, kernel.c). */
  bool own = k->max_wg && k->max_wg < ctx->info.max_work_group_size;
  size_t max = own ? k->max_wg : ctx->info.max_work_group_size;
  if (group > max)
    return cls__error(CLS_EWORKSIZE, 0,
                      "launch of '%s': work-group of %zu items exceeds the maximum of %zu (%s)",
                      k->name, group, max,
                      own ? "the kernel's CL_KERNEL_WORK_GROUP_SIZE; see cls_kernel_info"
                          : "the device's CL_DEVICE_MAX_WORK_GROUP_SIZE");
  return CLS_OK;
}

static const char *kind_name(int q) {
  return q == CLS__ARGQ_GLOBAL ? "a buffer" : q == CLS__ARGQ_LOCAL ? "local memory" : "a scalar";
}

/* What CLS_NULL_PTR binds: a NULL cl_mem, as clSetKernelArg takes it. */
static const cl_mem null_mem = NULL;

/* F11a: a typed scalar is refused where its type is not the argument's
 * (both named), or where its size is not its type's. */
static __attribute__((noinline)) int check_type(const cls_kernel *k, size_t i, const cls_arg *a) {
  char given[16], want[16], name[64];
  cls__type_name(a->access, given, sizeof given);
  size_t size = cls__type_size(a->access);
  if (!size)
    return cls__error(CLS_EINVAL, 0, "kernel '%s' argument %zu: scalar type %d is not a cls_type",
                      k->name, i, a->access);
  if (size != a->size)
    return cls__error(CLS_EINVAL, 0,
                      "kernel '%s' argument %zu: typed as %s (%zu bytes), but %zu bytes given",
                      k->name, i, given, size, a->size);
  if (!k->argtype[i] || cls__type_fits(k->argtype[i], a->access))
    return CLS_OK;
  cls__type_name(k->argtype[i], want, sizeof want);
  cls__kernel_arg_name(k, i, name, sizeof name);
  return cls__error(CLS_EARGKIND, 0, "kernel '%s' argument %zu%s%s%s is %s, %s %s was given",
                    k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "", want,
                    strchr("aeiou", given[0]) ? "an" : "a", given);
}

/* A scalar, local-memory or NULL pointer argument (buffers take the fast
 * path below). */
static int check_value_arg(const cls_kernel *k, struct cls__cmd *cmd, size_t i,
                           const cls_arg *a) {
  int want, rc;
  switch (a->kind) {
  case CLS_ARG_SCALAR:
    if (!a->value || a->size == 0)
      return cls__error(CLS_EINVAL, 0, "kernel '%s' argument %zu: scalar without a value",
                        k->name, i);
    if (a->access && (rc = check_type(k, i, a)) < 0)
      return rc;
    if (k->argsize && k->argsize[i] && k->argsize[i] != a->size)
      return cls__error(CLS_EARGKIND, 0,
                        "kernel '%s' argument %zu: a scalar of %zu bytes given, %zu expected",
                        k->name, i, a->size, k->argsize[i]);
    want = CLS__ARGQ_PRIVATE;
    break;
  case CLS_ARG_LOCAL:
    if (a->size == 0)
      return cls__error(CLS_EINVAL, 0, "kernel '%s' argument %zu: local size 0", k->name, i);
    want = CLS__ARGQ_LOCAL;
    break;
  case CLS_ARG_NULL: /* a pointer, never an image: OpenCL has no NULL image */
    if (i < CLS_MAX_ARGS && (k->images >> i & 1))
      return cls__error(CLS_EARGKIND, 0,
                        "kernel '%s' argument %zu: a NULL pointer given, an image expected",
                        k->name, i);
    if (k->argq[i] != CLS__ARGQ_UNKNOWN && k->argq[i] != CLS__ARGQ_GLOBAL)
      return cls__error(CLS_EARGKIND, 0, "kernel '%s' argument %zu: a NULL pointer given, %s "
                        "expected", k->name, i, kind_name(k->argq[i]));
    cmd->kargs[i].size = sizeof(cl_mem);
    cmd->kargs[i].value = &null_mem;
    return CLS_OK;
  default:
    return cls__error(CLS_EINVAL, 0, "kernel '%s' argument %zu: kind %d", k->name, i, a->kind);
  }
  if (k->argq[i] != CLS__ARGQ_UNKNOWN && k->argq[i] != want)
    return cls__error(CLS_EARGKIND, 0, "kernel '%s' argument %zu: %s given, %s expected",
                      k->name, i, kind_name(want), kind_name(k->argq[i]));
  cmd->kargs[i].size = a->size;
  cmd->kargs[i].value = a->kind == CLS_ARG_SCALAR ? a->value : NULL;
  return CLS_OK;
}

/* F11, strict (the user's choice): a read-only binding of an argument the
 * kernel may write is refused. */
static __attribute__((noinline)) int access_refused(const cls_kernel *k, size_t i) {
  char name[128];
  cls__kernel_arg_name(k, i, name, sizeof name);
  if (k->images >> i & 1)
    return cls__error(CLS_EACCESS, 0,
                      "kernel '%s' argument %zu%s%s%s: declare it CLS_OUT or CLS_INOUT (CLS_ARG "
                      "infers): declared CLS_IN, it is an image the kernel writes (%s), which "
                      "strict mode (CLS_STRICT=1) refuses",
                      k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "",
                      k->writeonly >> i & 1 ? "__write_only" : "__read_write");
  /* The fix right after the names, the explanation last. */
  return cls__error(CLS_EACCESS, 0,
                    "kernel '%s' argument %zu%s%s%s: declare it CLS_INOUT, or const "
                    "in the kernel (CLS_ARG infers): declared CLS_IN, it is a __global pointer "
                    "the kernel may write, which strict mode (CLS_STRICT=1) refuses",
                    k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "");
}

/* F11, not strict: the declaration stands, as raw OpenCL would run the
 * kernel.  Said once per kernel and argument (then the argument takes the
 * fast path again); guard mode checks each such launch (command.c). */
static __attribute__((noinline)) void access_trusted(cls_context *ctx, cls_kernel *k, size_t i,
                                                     unsigned kind) {
  char name[128];
  cls__kernel_arg_name(k, i, name, sizeof name);
  if (k->images >> i & 1)
    cls__log(&ctx->logger, CLS_LOG_ERRORS,
             "F11: kernel '%s' argument %zu%s%s%s is declared CLS_IN, but it is a %s image the "
             "kernel writes; clstream trusts the declaration and orders it as a read. Declare it "
             "CLS_OUT (CLS_ARG infers)",
             k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "",
             k->writeonly >> i & 1 ? "__write_only" : "__read_write");
  else
    cls__log(&ctx->logger, CLS_LOG_ERRORS,
           "F11: kernel '%s' argument %zu%s%s%s is declared CLS_IN, but its signature lets the "
           "kernel write it (a __global pointer that is not const); clstream trusts the "
           "declaration and orders it as a read. If the kernel only reads it, make it const "
           "in the kernel; if it writes it, declare it CLS_INOUT. CLS_GUARD=1 checks it",
           k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "");
  k->refuse[i] &= (unsigned char)~(1u << (CLS_READ + kind));
}

/* The access of a binding that is not a plain read, write or read-write:
 * CLS_ARG's, inferred, or the refusal of an invalid one. */
static __attribute__((noinline)) int odd_access(const cls_kernel *k, size_t i, int access) {
  if (access == CLS_ACCESS_INFER)
    return cls__kernel_access(k, i, access);
  return cls__error(CLS_EINVAL, 0, "kernel '%s' argument %zu: access %d", k->name, i, access);
}

/* A buffer given where the kernel refuses it with this access: the wrong
 * kind of argument (an error), or F11 (1: decided by f11_decide once every
 * binding of the launch is known). */
static __attribute__((noinline)) int image_kind_refused(const cls_kernel *k, size_t i,
                                                        bool image);
static __attribute__((noinline)) int buffer_refused(cls_context *ctx, cls_kernel *k, size_t i,
                                                    unsigned kind) {
  if (k->no_read_write && (k->readwrite >> i & 1))
    return cls__error(CLS_ENOSYS, 0,
                      "kernel '%s' argument %zu is a __read_write image, which device '%s' "
                      "(OpenCL %d.%d) does not support (OpenCL 2.0 read_write images, "
                      "CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS)",
                      k->name, i, ctx->info.device_name, ctx->info.cl_version / 100,
                      ctx->info.cl_version % 100 / 10);
  if (k->argq[i] > CLS__ARGQ_GLOBAL) /* neither unknown nor a buffer */
    return cls__error(CLS_EARGKIND, 0, "kernel '%s' argument %zu: %s given, %s expected",
                      k->name, i, kind_name(CLS__ARGQ_GLOBAL), kind_name(k->argq[i]));
  bool image = kind == CLS__KIND_IMAGE;
  if (image != (bool)(k->images >> i & 1))
    return image_kind_refused(k, i, image);
  return 1;
}

/* F11 for the launch's buffer bindings whose refuse bit is still set (the
 * kind of argument passed already: what is left is F11): refused when
 * strict, else said once -- but for a buffer the launch declares it
 * writes through another argument, whose order and failures are a
 * writer's already: nothing to refuse or say (and the bit stays, as the
 * next launch may bind the argument alone).  Binding b is the b-th
 * buffer argument (check_args). */
static __attribute__((noinline)) int f11_decide(cls_context *ctx, const struct cls__cmd *cmd,
                                                cls_kernel *k, size_t nargs,
                                                const cls_arg *args) {
  for (size_t i = 0, b = 0; i < nargs; i++) {
    if (args[i].kind != CLS_ARG_BUFFER)
      continue;
    const struct cls__binding *bd = &cmd->bind[b];
    const struct cls__slot *s = bd->slot;
    if ((k->refuse[i] >> (bd->access + s->kind) & 1) &&
        (s->image || !cls__cmd_binds_elsewhere(cmd, b, CLS_WRITE))) {
      if (ctx->strict)
        return access_refused(k, i);
      access_trusted(ctx, k, i, s->kind);
    }
    b++;
  }
  return CLS_OK;
}

/* An image where the kernel takes a pointer, or a buffer where it takes
 * an image: both named. */
static __attribute__((noinline)) int image_kind_refused(const cls_kernel *k, size_t i,
                                                        bool image) {
  char name[128];
  cls__kernel_arg_name(k, i, name, sizeof name);
  return cls__error(CLS_EARGKIND, 0, "kernel '%s' argument %zu%s%s%s: %s given, %s expected",
                    k->name, i, name[0] ? " ('" : "", name, name[0] ? "')" : "",
                    image ? "an image" : "a buffer", image ? "a buffer" : "an image");
}

/* The CLS_LOCAL arguments together, within the device's local memory;
 * asked only of a kernel that takes local memory (or whose arguments are
 * not known).  OpenCL fails such an enqueue (oclgrind:
 * CL_OUT_OF_RESOURCES), PoCL 3.1 aborts the process on an assertion,
 * rusticl runs it: the device's own limit is enforced, as for allocations
 * and work-groups.  The kernel's own __local variables are left out:
 * vendors count them differently (rusticl reports twice the size), and no
 * check may refuse what fits. */
static __attribute__((noinline)) int check_locals(cls_context *ctx, const cls_kernel *k,
                                                  size_t nargs, const cls_arg *args) {
  unsigned long long have = ctx->info.local_mem_size;
  size_t local = 0;
  for (size_t i = 0; have && i < nargs; i++) {
    if (args[i].kind != CLS_ARG_LOCAL)
      continue;
    bool over = __builtin_add_overflow(local, args[i].size, &local);
    if (!over && local <= have)
      continue;
    char asked[48];
    if (over)
      snprintf(asked, sizeof asked, "more than %zu", SIZE_MAX);
    else
      snprintf(asked, sizeof asked, "%zu", local);
    return cls__error(CLS_ETOOBIG, 0,
                      "kernel '%s' argument %zu: CLS_LOCAL(%zu) brings the work-group's local "
                      "memory arguments to %s bytes, above the device's %llu "
                      "(CL_DEVICE_LOCAL_MEM_SIZE)",
                      k->name, i, args[i].size, asked, have);
  }
  return CLS_OK;
}

static int check_args(cls_context *ctx, struct cls__cmd *cmd, cls_kernel *k,
                      size_t nargs, const cls_arg *args) {
  if (k->nargs != CLS__NARGS_UNKNOWN && nargs != k->nargs)
    return cls__error(CLS_EARGCOUNT, 0, "kernel '%s' takes %u arguments, %zu given", k->name,
                      k->nargs, nargs);
  if (nargs > CLS_MAX_ARGS)
    return cls__error(CLS_EINVAL, 0, "kernel '%s': more than %d arguments", k->name,
                      CLS_MAX_ARGS);
  if (nargs && !args)
    return cls__error(CLS_EINVAL, 0, "kernel '%s': NULL arguments", k->name);
  const unsigned char *refuse = k->refuse;
  size_t nb = 0;
  uintptr_t carried = 0; /* above 1: a binding carries a failure (records
                            are aligned); bit 0: F11 to decide */
  for (size_t i = 0; i < nargs; i++) {
    const cls_arg *a = &args[i];
    if (a->kind != CLS_ARG_BUFFER) {
      int rc = check_value_arg(k, cmd, i, a);
      if (rc < 0)
        return rc;
      continue;
    }
    /* A declared read, write or read-write passes with one compare; the
     * kind of argument and F11 with one test of refuse[i]. */
    unsigned acc = (unsigned)a->access;
    if (acc - CLS_READ > (unsigned)(CLS_READ_WRITE - CLS_READ)) {
      int rc = odd_access(k, i, a->access);
      if (rc < 0)
        return rc;
      acc = (unsigned)rc;
    }
    struct cls__slot *s = cls__resolve(ctx, a->buffer);
    if (!s) {
      int err = cls__resolve_error(ctx, a->buffer);
      return cls__error(err, 0, "kernel '%s' argument %zu: %s", k->name, i, cls_strerror(err));
    }
    /* One test: the kind of argument (a buffer or an image where the
     * signature says another), and F11. */
    if (refuse[i] >> (acc + s->kind) & 1) {
      int rc = buffer_refused(ctx, k, i, s->kind);
      if (rc < 0)
        return rc;
      carried |= 1; /* F11: decided once every binding is known */
    }
    cmd->kargs[i].size = sizeof(cl_mem);
    cmd->kargs[i].value = &s->mem; /* slots stay put for the call */
    struct cls__binding *b = &cmd->bind[nb++];
    b->handle = a->buffer;
    b->slot = s;
    b->access = (int)acc;
    carried |= (uintptr_t)s->failure; /* a write-only one too: rare, and only slower */
  }
  cmd->nbind = nb;
  /* A clean launch pays one test; a skip (a failure carried) two. */
  if (__builtin_expect(carried == 0, 1))
    return 0;
  if (__builtin_expect(!(carried & 1), 1))
    return 1;
  int rc = f11_decide(ctx, cmd, k, nargs, args);
  return rc < 0 ? rc : carried > 1;
}

/* A global offset (cls_launch_offset): all zero is none (NULL), so the
 * usual launch reaches every factory and driver as before; otherwise each
 * offset[i] + global[i] fits the device's size_t (CL_INVALID_GLOBAL_OFFSET
 * on some vendors, a wrapped id on others), and the factory is one that
 * passes it on (version 6), since an older one would drop it silently. */
static __attribute__((noinline)) int check_offset(cls_context *ctx, const cls_kernel *k,
                                                  unsigned dims, const size_t *global,
                                                  const size_t **offset) {
  const size_t *o = *offset;
  bool any = false;
  for (unsigned i = 0; i < dims; i++) {
    if (o[i] > ctx->max_work_items - global[i])
      return cls__error(CLS_EWORKSIZE, 0,
                        "launch of '%s': offset %zu plus global size %zu in dimension %u "
                        "passes what the device's size_t holds (%zu)",
                        k->name, o[i], global[i], i, ctx->max_work_items);
    any |= o[i] != 0;
  }
  if (!any) {
    *offset = NULL;
    return CLS_OK;
  }
  const struct cls_stream_factory *f = ctx->pool.factory;
  if (f == &cls__fault_factory) /* fault injection passes it to the one it wraps */
    f = ctx->fault_data.inner;
  if (f->version < 6)
    return cls__error(CLS_EVERSION, 0,
                      "launch of '%s': a global offset, and stream factory '%s' has version "
                      "%u (offsets from 6)",
                      k->name, f->name ? f->name : "?", f->version);
  return CLS_OK;
}

/* cls_launch and cls_launch_offset: one body, its checks inlined into it
 * once; the offset comes last, so cls_launch passes its own arguments
 * through (724 instructions a launch, 716 before offsets: the body
 * inlined into both entries, 727; GCC's own choice there, 753). */
static __attribute__((noinline)) int launch(cls_context *ctx, int stream, cls_kernel *kernel,
                                            unsigned dims, const size_t *global,
                                            const size_t *local, size_t nargs,
                                            const cls_arg *args, const size_t *offset) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd;
  cmd.kind = CLS__CMD_LAUNCH;
  cmd.op = "launch";
  cmd.kcmd.offset = offset; /* check_offset makes all zero NULL */
  if (!cls__kernel_valid(ctx, kernel)) {
    rc = cls__error(CLS_EINVAL, 0, "cls_launch: not a kernel of this context");
    goto refused;
  }
  /* check_args tells whether an input carries a failure, so a clean
   * launch skips the F2 walk of cls__run.  Opening a stream runs no
   * command, but a fresh stream takes the full check all the same. */
  int carried;
  if ((rc = check_range(ctx, kernel, dims, global, local)) < 0 ||
      (offset && (rc = check_offset(ctx, kernel, dims, global, &cmd.kcmd.offset)) < 0) ||
      (rc = carried = check_args(ctx, &cmd, kernel, nargs, args)) < 0 ||
      (kernel->takes_local && (rc = check_locals(ctx, kernel, nargs, args)) < 0))
    goto refused;
  if (!(cmd.stream = cls__stream_peek(ctx, stream))) {
    carried = 1;
    if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)))
      goto refused;
  }
  cmd.kernel = kernel;
  cmd.kcmd.name = kernel->name;
  cmd.kcmd.nargs = (cl_uint)nargs; /* a skip's detail names an argument */
  if (__builtin_expect(ctx->capture != NULL, 0)) { /* checked: recorded, not run */
    cmd.kcmd.dims = dims;
    rc = cls__capture_add(ctx, &cmd, global, local, args);
    goto out;
  }
  /* A skip (F2) needs no more of the command than its name. */
  if (carried && cls__f2_refuses(ctx, &cmd, NULL, &rc))
    goto out;
  cmd.nwait = 0;
  cmd.x.blocking = 0; /* drivers test it for every command */
  cls__kernel_for(kernel, cmd.stream->id, &cmd.kcmd.kernel, &cmd.kcmd.memo);
  cmd.kcmd.dims = dims;
  cmd.kcmd.global = global;
  cmd.kcmd.local = local;
  cmd.kcmd.args = cmd.kargs;
  rc = cls__run_checked(ctx, &cmd, NULL, NULL);
  if (__builtin_expect(ctx->guard != NULL, 0))
    cls__guard_launched(ctx, &cmd, rc);
out:
  cls__unlock(ctx);
  return rc;
refused: /* F12: what it would have written says why it was not */
  rc = cls__refused_launch(ctx, cls__kernel_valid(ctx, kernel) ? kernel : NULL, stream, nargs,
                           args, rc);
  goto out;
}

CLS_API int cls_launch(cls_context *ctx, int stream, cls_kernel *kernel, unsigned dims,
                       const size_t *global, const size_t *local, size_t nargs,
                       const cls_arg *args) {
  return launch(ctx, stream, kernel, dims, global, local, nargs, args, NULL);
}

CLS_API int cls_launch_offset(cls_context *ctx, int stream, cls_kernel *kernel, unsigned dims,
                              const size_t *offset, const size_t *global, const size_t *local,
                              size_t nargs, const cls_arg *args) {
  return launch(ctx, stream, kernel, dims, global, local, nargs, args, offset);
}
