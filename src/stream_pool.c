/* The stream pool: streams are created lazily through the factory, and
 * polled for completions, which is where failures found after the enqueue
 * enter the failure store (F8). */
#include "core.h"
#include "driver.h"
#include "failure.h"

#include <string.h>

struct cls__stream_pool *cls__pool(cls_context *ctx) {
  return ctx->driver_ops->pool(ctx->driver);
}

int cls__pool_init(cls_context *ctx, struct cls__stream_pool *pool,
                   const struct cls_stream_factory *f, void *fdata) {
  memset(pool, 0, sizeof *pool);
  if (!f || f->version < 1 || !f->create || !f->destroy || !f->flush || !f->launch ||
      !f->write || !f->read || !f->copy || !f->fill || !f->marker || !f->poll)
    return cls__error(CLS_EVERSION, 0, "stream factory '%s' lacks required members",
                      f && f->name ? f->name : "?");
  pool->factory = f;
  pool->factory_data = fdata;
  pool->backend.platform = ctx->platform;
  pool->backend.device = ctx->device;
  pool->backend.context = ctx->clctx;
  pool->backend.cl_version = ctx->info.cl_version;
  return CLS_OK;
}

void cls__pool_fini(cls_context *ctx, struct cls__stream_pool *pool) {
  for (int i = 0; i < pool->nstreams; i++) {
    struct cls__stream *s = &pool->streams[i];
    if (!s->created)
      continue;
    pool->factory->destroy(s->backend); /* waits for the stream's work */
    cls__memory_fini(ctx, s);
    s->created = false;
  }
  pool->nstreams = 0;
}

struct cls__stream *cls__stream_peek(cls_context *ctx, int id) {
  if (id < 0 || id >= CLS_MAX_STREAMS)
    return NULL;
  struct cls__stream *s = &cls__pool(ctx)->streams[id];
  return s->created ? s : NULL;
}

struct cls__stream *cls__stream_get(cls_context *ctx, int id, int *err) {
  if (id < 0 || id >= CLS_MAX_STREAMS) {
    *err = cls__error(CLS_ESTREAM, 0, "stream %d is not in 0..%d", id, CLS_MAX_STREAMS - 1);
    return NULL;
  }
  struct cls__stream_pool *pool = cls__pool(ctx);
  struct cls__stream *s = &pool->streams[id];
  if (s->created)
    return s;
  memset(s, 0, sizeof *s);
  cl_int rc = pool->factory->create(pool->factory_data, &pool->backend, id, &s->backend);
  if (rc != CL_SUCCESS) {
    *err = cls__error(CLS_ECL, rc, "creating stream %d (%s factory) failed: %s", id,
                      pool->factory->name, cls_cl_status_name(rc));
    return NULL;
  }
  s->id = id;
  s->created = true;
  s->mem.free_slot = -1;
  if (id >= pool->nstreams)
    pool->nstreams = id + 1;
  cls__log(&ctx->log, CLS_LOG_STREAMS, "stream %d created (%s)", id, pool->factory->name);
  return s;
}

struct poll_arg {
  cls_context *ctx;
  struct cls__stream *s;
};

static void on_failed(void *arg, uint64_t seq, cl_int status) {
  struct poll_arg *a = arg;
  a->s->failed_seq = seq;
  a->s->failed_status = status;
  cls__inflight_failed(a->ctx, a->s->id, seq, status);
}

int cls__stream_poll(cls_context *ctx, struct cls__stream *s, bool wait) {
  struct poll_arg a = {ctx, s};
  uint64_t completed = s->completed;
  cl_int rc = cls__pool(ctx)->factory->poll(s->backend, wait, on_failed, &a, &completed);
  if (completed > s->completed)
    s->completed = completed;
  cls__inflight_prune(ctx);
  if (rc != CL_SUCCESS)
    return cls__error(CLS_ECL, rc, "stream %d: %s failed: %s", s->id,
                      wait ? "waiting for completion" : "polling", cls_cl_status_name(rc));
  return CLS_OK;
}

int cls__poll_all(cls_context *ctx, bool wait) {
  struct cls__stream_pool *pool = cls__pool(ctx);
  int ret = CLS_OK;
  for (int i = 0; i < pool->nstreams; i++)
    if (pool->streams[i].created) {
      int rc = cls__stream_poll(ctx, &pool->streams[i], wait);
      if (rc < 0 && ret == CLS_OK)
        ret = rc;
    }
  return ret;
}
