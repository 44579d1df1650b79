/* Learning what finished: where failures found after the enqueue enter
 * the failure store (F8).  The driver polls a stream's backend; each
 * command it reports failed is replayed over the in-flight log
 * (inflight.c), and entries known complete leave the log. */
#include "failure/inflight.h"
#include "driver/ops.h"
#include "guard/guard.h"

void cls__stream_failed(cls_context *ctx, struct cls__stream *s, uint64_t seq, cl_int status,
                        bool deferred) {
  s->failed_seq = seq;
  s->failed_status = status;
  cls__inflight_failed(ctx, s->id, seq, status, deferred);
}

int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait) {
  int rc = ctx->driver_ops->poll(ctx->driver, s, wait);
  if (ctx->guard)
    cls__guard_check(ctx); /* before the log forgets the launches checked */
  cls__inflight_prune(ctx);
  return rc;
}

int cls__poll_all(cls_context *ctx, bool wait) {
  struct cls__stream_pool *pool = &ctx->pool;
  int ret = CLS_OK;
  for (int i = 0; i < pool->nstreams; i++)
    if (pool->streams[i].created) {
      int rc = cls__stream_poll(ctx, &pool->streams[i], wait);
      if (rc < 0 && ret == CLS_OK)
        ret = rc;
    }
  return ret;
}
