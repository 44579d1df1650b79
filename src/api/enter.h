/* Internal: the prologue the public calls on a context open with, one
 * definition for every file of src/api/: a NULL context (or NULL out
 * argument) is refused with CLS_EINVAL naming the call, a stream id is
 * checked (CLS_ESTREAM, recorded by cls__stream_check_id), then the
 * context's lock is taken (CLS__LOCK: a destroyed context is CLS_ESTALE).
 * Each returns from the caller on a refusal; the caller unlocks. */
#ifndef CLS_ENTER_H
#define CLS_ENTER_H

#include "stream/pool.h"

/* A NULL context refused, then the lock. */
#define CLS__ENTER(ctx)                                                   \
  do {                                                                    \
    if (!(ctx))                                                           \
      return cls__error(CLS_EINVAL, 0, "%s: NULL context", __func__);     \
    CLS__LOCK(ctx);                                                       \
  } while (0)

/* A NULL context refused, the stream id checked, then the lock. */
#define CLS__ENTER_STREAM(ctx, stream)                                    \
  do {                                                                    \
    if (!(ctx))                                                           \
      return cls__error(CLS_EINVAL, 0, "%s: NULL context", __func__);     \
    if (cls__stream_check_id(stream) < 0)                                 \
      return CLS_ESTREAM;                                                 \
    CLS__LOCK(ctx);                                                       \
  } while (0)

/* A NULL context or out argument refused, the stream id checked, then
 * the lock. */
#define CLS__ENTER_OUT(ctx, out, stream)                                  \
  do {                                                                    \
    if (!(ctx) || !(out))                                                 \
      return cls__error(CLS_EINVAL, 0, "%s: NULL argument", __func__);    \
    if (cls__stream_check_id(stream) < 0)                                 \
      return CLS_ESTREAM;                                                 \
    CLS__LOCK(ctx);                                                       \
  } while (0)

struct cls__cmd;
/* Capture (src/api/capture.c): records cmd, checked in full by its
 * caller, in ctx's capture instead of running it (a launch's range and
 * arguments given too; else NULLs).  Lock held. */
int cls__capture_add(cls_context *ctx, const struct cls__cmd *cmd, const size_t *global,
                     const size_t *local, const cls_arg *args);
/* The refusal of a blocking transfer inside a capture. */
int cls__capture_blocking(const char *call);

#endif /* CLS_ENTER_H */
