/* The public buffer operations: allocate, free, upload, download, copy,
 * fill, check.  Each validates everything before OpenCL sees it, then runs
 * through cls__run like every other command. */
#include "api/enter.h"
#include "core/command.h"
#include "core/refusal.h"
#include "core/relocate.h"
#include "failure/report.h"
#include "failure/kept.h"
#include "failure/poll.h"
#include "guard/guard.h"
#include "memory/memory.h"
#include "stream/pool.h"

#include <stdlib.h>
#include <string.h>

/* Offset and size within a buffer of `have` bytes, overflow-safe. */
static int check_range(const char *fn, size_t have, size_t offset, size_t size) {
  if (size == 0)
    return cls__error(CLS_EINVAL, 0, "%s: size 0", fn);
  if (offset > have || size > have - offset)
    return cls__error(CLS_ERANGE, 0, "%s: %zu bytes at offset %zu exceed the buffer's %zu", fn,
                      size, offset, have);
  return CLS_OK;
}

/* A buffer of bytes: an image is refused here (its pixels move by
 * region, src/api/image.c). */
static struct cls__slot *resolve(cls_context *ctx, const char *fn, cls_buffer h, int *rc) {
  struct cls__slot *s = cls__resolve(ctx, h);
  int err = s ? CLS_OK : cls__resolve_error(ctx, h);
  if (!s)
    *rc = cls__error(err, 0, "%s: buffer %#llx: %s", fn, (unsigned long long)h.bits,
                     cls_strerror(err));
  else if (s->image) {
    *rc = cls__error(CLS_EINVAL, 0,
                     "%s: handle %#llx names an image, not a buffer of bytes: move its pixels "
                     "with the cls_image_* calls",
                     fn, (unsigned long long)h.bits);
    return NULL;
  }
  return s;
}

CLS_API int cls_alloc(cls_context *ctx, int stream, size_t size, cls_buffer *out) {
  if (!out)
    return cls__error(CLS_EINVAL, 0, "cls_alloc: NULL out");
  *out = CLS_BUFFER_NULL;
  CLS__ENTER(ctx);
  int rc;
  struct cls__stream *s = cls__stream_get(ctx, stream, &rc);
  if (s)
    rc = cls__memory_alloc(ctx, s, size, out);
  cls__unlock(ctx);
  return rc;
}

/* Recovery: a command not proven complete that binds buf may turn out
 * lost after its enqueue and have to run again, which it cannot once buf
 * is freed.  So the free waits for those commands' streams, and runs
 * again what they lost (bounded, as any replay) before it frees: as for
 * any in-flight user, the free waits. */
static void settle_kept(cls_context *ctx, cls_buffer buf) {
  for (unsigned round = 0; round <= ctx->recover; round++) {
    uint64_t mask = cls__keep_streams_binding(ctx, buf);
    if (!mask)
      return;
    for (; mask; mask &= mask - 1) {
      struct cls__stream *s = cls__stream_peek(ctx, __builtin_ctzll(mask));
      if (s)
        cls__stream_poll(ctx, s, true);
    }
    cls__keep_prune(ctx);
    if (!ctx->lost_mask && !ctx->keep.nlost)
      return;
    cls__relocate_lost(ctx);
  }
}

CLS_API int cls_free(cls_context *ctx, cls_buffer buf) {
  CLS__ENTER(ctx);
  if (ctx->keep.len)
    settle_kept(ctx, buf);
  cls__relocate_pending(ctx); /* recovery: tasks kept for a fresh queue get it before the free settles them */
  int rc = cls__memory_free(ctx, buf);
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_buffer_size(cls_context *ctx, cls_buffer buf, size_t *size) {
  if (!size)
    return cls__error(CLS_EINVAL, 0, "cls_buffer_size: NULL out");
  CLS__ENTER(ctx);
  int rc = CLS_OK;
  struct cls__slot *s = resolve(ctx, __func__, buf, &rc);
  if (s)
    *size = s->size;
  cls__unlock(ctx);
  return rc;
}

/* Recovery: a blocking upload has written its bytes, but an earlier
 * command of its queue that wrote the same buffer may have failed behind
 * a command lost after its enqueue (PoCL runs what is enqueued after a
 * failure, so the upload itself ran).  That command runs again now (the
 * poll finds it, the safe point replays it), after the upload: the upload
 * is enqueued again behind it while the caller's bytes are still there,
 * at most once more than the recovery bound lets a command run again
 * (past that it fails rather than leave older bytes over the caller's).
 * Since the upload settles what binds its buffer first (below), this is
 * the fallback where that could not finish: a deadline that ran out
 * (CLS_SYNC_TIMEOUT), or a replay past the bound.  Neither the suite nor
 * the model's sweeps reach it now. */
static __attribute__((noinline)) int upload_again_after_recovery(cls_context *ctx,
                                                                 struct cls__cmd *cmd,
                                                                 cls_buffer dst) {
  int rc = CLS_OK;
  for (unsigned n = 0;; n++) {
    uint64_t wrote = cmd->bind[0].slot->write_stamp;
    if ((rc = cls__poll_all(ctx, false)) < 0)
      return rc;
    cls__relocate_pending(ctx);
    struct cls__slot *d = cls__resolve(ctx, dst); /* run again, perhaps on another device */
    if (!d)
      return cls__error(cls__resolve_error(ctx, dst), 0, "cls_upload: buffer %#llx: %s",
                        (unsigned long long)dst.bits, cls_strerror(cls__resolve_error(ctx, dst)));
    if (d->write_stamp <= wrote)
      return CLS_OK;
    if (n > ctx->recover)
      return cls__error(CLS_ECL, CL_DEVICE_NOT_AVAILABLE,
                        "upload on stream %d: what it wrote was written again by recovery "
                        "after each of %u uploads",
                        cmd->stream->id, n + 1);
    cmd->bind[0].slot = d;
    cmd->x.dst = d->mem;
    cmd->stream->stats.replays++;
    if ((rc = cls__run(ctx, cmd, NULL, NULL)) != CLS_OK)
      return rc;
  }
}

static int upload(cls_context *ctx, int stream, cls_buffer dst, size_t offset,
                  const void *src, size_t size, int blocking) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_WRITE, .op = "upload", .nbind = 1};
  struct cls__slot *d = resolve(ctx, "cls_upload", dst, &rc);
  if (!d)
    goto out;
  if (!src) {
    rc = cls__error(CLS_EINVAL, 0, "cls_upload: NULL source");
    goto refused;
  }
  if ((rc = check_range("cls_upload", d->size, offset, size)) < 0 ||
      !(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){dst, d, cls__dst_access(offset, size, d->size)};
  cmd.x = (struct cls_transfer){
      .dst = d->mem, .dst_offset = offset, .size = size, .host_src = src, .blocking = blocking};
  if (__builtin_expect(ctx->capture != NULL, 0)) {
    rc = blocking ? cls__capture_blocking("cls_upload")
                  : cls__capture_add(ctx, &cmd, NULL, NULL, NULL);
    goto out;
  }
  /* Recovery: an earlier command that binds dst may still fail behind a
   * lost one, and PoCL runs what is enqueued after a failed command: an
   * upload would then overwrite what that command is to read when it runs
   * again.  A blocking upload waits for what it comes after anyway, so it
   * waits for those first and lets them run again before it is enqueued
   * (found by the model, CLS_MODEL_LATE=1, context 0x777825d1e04a8674:
   * an upload behind a launch on its own stream that read it). */
  if (blocking && __builtin_expect(ctx->keep.len != 0, 0)) {
    settle_kept(ctx, dst);
    if (!(d = resolve(ctx, "cls_upload", dst, &rc)))
      goto out;
    cmd.bind[0].slot = d; /* run again, perhaps on another device */
    cmd.x.dst = d->mem;
  }
  rc = cls__run(ctx, &cmd, NULL, NULL);
  if (blocking && rc == CLS_OK && __builtin_expect(ctx->recover && ctx->relocate, 0))
    rc = upload_again_after_recovery(ctx, &cmd, dst);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}

CLS_API int cls_upload(cls_context *ctx, int stream, cls_buffer dst, size_t offset,
                       const void *src, size_t size) {
  return upload(ctx, stream, dst, offset, src, size, 1);
}

CLS_API int cls_upload_async(cls_context *ctx, int stream, cls_buffer dst, size_t offset,
                             const void *src, size_t size) {
  return upload(ctx, stream, dst, offset, src, size, 0);
}

static int download(cls_context *ctx, int stream, cls_buffer src, size_t offset, void *dst,
                    size_t size, cls_report **report, bool blocking) {
  if (report)
    *report = NULL;
  if (!dst)
    return cls__error(CLS_EINVAL, 0, "cls_download: NULL destination");
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_READ, .op = "download", .nbind = 1};
  if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto out;
  struct cls__slot *s = resolve(ctx, "cls_download", src, &rc);
  if (!s || (rc = check_range("cls_download", s->size, offset, size)) < 0)
    goto out;
  cmd.bind[0] = (struct cls__binding){src, s, CLS_READ};
  cmd.x = (struct cls_transfer){
      .src = s->mem, .src_offset = offset, .size = size, .host_dst = dst, .blocking = blocking};
  if (__builtin_expect(ctx->capture != NULL, 0)) {
    rc = blocking ? cls__capture_blocking("cls_download")
                  : cls__capture_add(ctx, &cmd, NULL, NULL, NULL);
    goto out;
  }
  rc = cls__download_run(ctx, &cmd, report);
out:
  cls__unlock(ctx);
  return rc;
}

CLS_API int cls_download(cls_context *ctx, int stream, cls_buffer src, size_t offset, void *dst,
                         size_t size, cls_report **report) {
  return download(ctx, stream, src, offset, dst, size, report, true);
}

CLS_API int cls_download_async(cls_context *ctx, int stream, cls_buffer src, size_t offset,
                               void *dst, size_t size) {
  return download(ctx, stream, src, offset, dst, size, NULL, false);
}

CLS_API int cls_copy(cls_context *ctx, int stream, cls_buffer src, size_t src_offset,
                     cls_buffer dst, size_t dst_offset, size_t size) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_COPY, .op = "copy", .nbind = 2};
  struct cls__slot *s, *d;
  if (!(d = resolve(ctx, "cls_copy", dst, &rc)))
    goto out;
  if (!(s = resolve(ctx, "cls_copy", src, &rc)) ||
      (rc = check_range("cls_copy (source)", s->size, src_offset, size)) < 0 ||
      (rc = check_range("cls_copy (destination)", d->size, dst_offset, size)) < 0)
    goto refused;
  if (s == d &&
      cls__ranges_overlap(src_offset, src_offset + size, dst_offset, dst_offset + size)) {
    rc = cls__error(CLS_EINVAL, 0, "cls_copy: source and destination ranges overlap");
    goto refused;
  }
  if (!(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){src, s, CLS_READ};
  cmd.bind[1] = (struct cls__binding){dst, d, cls__dst_access(dst_offset, size, d->size)};
  cmd.x = (struct cls_transfer){.src = s->mem,
                             .dst = d->mem,
                             .src_offset = src_offset,
                             .dst_offset = dst_offset,
                             .size = size};
  if (__builtin_expect(ctx->capture != NULL, 0)) {
    rc = cls__capture_add(ctx, &cmd, NULL, NULL, NULL);
    goto out;
  }
  rc = cls__run(ctx, &cmd, NULL, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}

CLS_API int cls_fill(cls_context *ctx, int stream, cls_buffer dst, size_t offset, size_t size,
                     const void *pattern, size_t pattern_size) {
  CLS__ENTER(ctx);
  int rc;
  struct cls__cmd cmd = {.kind = CLS__CMD_FILL, .op = "fill", .nbind = 1};
  struct cls__slot *d = resolve(ctx, "cls_fill", dst, &rc);
  if (!d)
    goto out;
  if (!pattern) {
    rc = cls__error(CLS_EINVAL, 0, "cls_fill: NULL pattern");
    goto refused;
  }
  if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1))) {
    rc = cls__error(CLS_EINVAL, 0, "cls_fill: pattern size %zu is not 1, 2, 4, ... 128",
                    pattern_size);
    goto refused;
  }
  if (offset % pattern_size || size % pattern_size) {
    rc = cls__error(CLS_EINVAL, 0,
                    "cls_fill: offset %zu and size %zu must be multiples of the pattern "
                    "size %zu",
                    offset, size, pattern_size);
    goto refused;
  }
  if ((rc = check_range("cls_fill", d->size, offset, size)) < 0 ||
      !(cmd.stream = cls__stream_get(ctx, stream, &rc)))
    goto refused;
  cmd.bind[0] = (struct cls__binding){dst, d, cls__dst_access(offset, size, d->size)};
  cmd.x = (struct cls_transfer){.dst = d->mem,
                             .dst_offset = offset,
                             .size = size,
                             .pattern = pattern,
                             .pattern_size = pattern_size};
  if (__builtin_expect(ctx->capture != NULL, 0)) {
    rc = cls__capture_add(ctx, &cmd, NULL, NULL, NULL);
    goto out;
  }
  rc = cls__run(ctx, &cmd, NULL, NULL);
out:
  cls__unlock(ctx);
  return rc;
refused:
  rc = cls__refused_write(ctx, cmd.kind, cmd.op, stream, dst, d, rc); /* F12 */
  goto out;
}

CLS_API int cls_check(cls_context *ctx, size_t n, const cls_buffer *bufs, cls_report **report) {
  if (report)
    *report = NULL;
  if (n && !bufs)
    return cls__error(CLS_EINVAL, 0, "cls_check: NULL buffers");
  CLS__ENTER(ctx);
  int rc = cls__poll_all(ctx, false);
  /* Recovery: what the poll found lost runs again first, so the check
   * says what a read would (a replay that failed is a failure). */
  cls__relocate_pending(ctx);
  if (rc == CLS_OK)
    rc = cls__read_report(ctx, "check", -1, bufs, n, report);
  cls__unlock(ctx);
  return rc;
}
