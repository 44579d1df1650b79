/* Internal: the two lock calls of context.h that leave the hot path:
 * the contended lock and a destroyed context.  Here, beside the type, so
 * that every layer that takes the lock stays below the API that defines
 * the rest of a context's life (src/api/context.c). */
#include "base/context.h"

#include <clstream/driver.h>
#include <clstream/stream.h>

int cls__context_gone(cls_context *ctx, const char *call) {
  return cls__error(CLS_ESTALE, 0, "%s: context %p was destroyed (cls_context_destroy)", call,
                    (void *)ctx);
}

int cls__lock_slow(cls_context *ctx, const char *call) {
  /* A destroyed context's lock stays held: every later call comes here. */
  if (atomic_load_explicit(&ctx->live, memory_order_relaxed) != CLS__CONTEXT_LIVE)
    return cls__context_gone(ctx, call);
  if (cls__lock_wait(&ctx->lock, &cls__last) < 0)
    return cls__error(CLS_EDRIVER, 0,
                      "%s: a call on context %p from inside one of its own callbacks (its driver "
                      "'%s', its stream factory '%s' or its logger), on the thread that holds "
                      "the context's lock: a callback may not call the public API on its own "
                      "context (<clstream/driver.h>)",
                      call, (void *)ctx, ctx->driver_ops ? ctx->driver_ops->name : "?",
                      ctx->pool.factory && ctx->pool.factory->name ? ctx->pool.factory->name
                                                                   : "?");
  return CLS_OK;
}
