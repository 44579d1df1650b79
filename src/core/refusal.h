/* Internal: F12, the record a refused call leaves (refusal.c).  A call
 * that would have written buffers and is refused by clstream's own checks
 * (kernel handle, work sizes, arguments, access, ranges, patterns) marks
 * each destination it can identify with a synchronous failure, as the
 * runtime's refusal of an enqueue does: a program that checks only its
 * reads never receives the previous contents as if the call had written
 * them.  Every refusal of a writing call goes through cls__refused, so a new
 * check cannot forget the record. */
#ifndef CLS_REFUSAL_H
#define CLS_REFUSAL_H

#include "base/context.h"

struct cls__binding;

/* What was refused: the command's kind (enum cls__cmd_kind; 0 for none
 * of them, e.g. a receive), the operation ("launch", "upload", "copy",
 * "fill"), the kernel's name for a launch (NULL: not known, e.g. an
 * invalid kernel handle), and the stream as the caller gave it (it may be
 * invalid). */
struct cls__refusal {
  int kind;
  const char *op;
  const char *kernel;
  int stream;
};

/* `rc` is the refusal's code, already recorded with its detail by
 * cls__error.  Mints one failure naming the call and that detail, sets it
 * on every write binding of dst[0..n) (the slots are resolved), and
 * returns rc with the thread's error detail as it was.  The call takes a
 * position on its stream when the stream is valid, as a refused enqueue
 * does.  Out of host memory, the destinations keep the never-written
 * sentinel where they had nothing better: reads still fail. */
int cls__refused(cls_context *ctx, const struct cls__refusal *r, const struct cls__binding *dst,
                 size_t n, int rc);

/* For a transfer, copy or fill of `cmd` (its kind and op) on `stream`:
 * the one destination, handle `dst`, slot `d` (resolved: a bad
 * destination is no refusal to record). */
int cls__refused_write(cls_context *ctx, int kind, const char *op, int stream, cls_buffer dst,
                       struct cls__slot *d, int rc);

/* For a launch: the destinations a refused launch may have written, from
 * its arguments as given: declared writes, arguments whose access is to be
 * inferred or is not a valid access, and reads of arguments the kernel's
 * signature says it may write (F11).  `k` may be NULL (an invalid kernel
 * handle).  Bad handles are left out. */
int cls__refused_launch(cls_context *ctx, const struct cls_kernel *k, int stream, size_t nargs,
                        const cls_arg *args, int rc);

/* For a foreign command (cls_foreign): its declared writes, and arguments
 * whose access is not a valid one (no signature tells more).  `label`
 * may be NULL (refused for its label). */
int cls__refused_foreign(cls_context *ctx, const char *label, int stream, size_t nargs,
                         const cls_arg *args, int rc);

#endif /* CLS_REFUSAL_H */
