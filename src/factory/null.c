/* The null stream factory: streams that do no work.  Every command
 * "completes" at once and nothing is ever enqueued, so what remains of a
 * launch's cost is clstream's own: benchmarks (bench/own-cost) and fuzzing
 * use it.  Memory pages are still real cl_mem objects (buffers must be
 * valid sub-buffers), markers are completed user events, and downloads
 * leave the destination untouched. */
#include "util/util.h"

#include <clstream/driver.h>

#include <stdlib.h>

struct null_stream {
  const struct cls_backend *backend;
  uint64_t seq;
};

static cl_int null_create(void *fdata, const struct cls_backend *be, int id, void **out) {
  struct null_stream *s = calloc(1, sizeof *s);
  if (!s)
    return CL_OUT_OF_HOST_MEMORY;
  s->backend = be;
  *out = s;
  return CL_SUCCESS;
}

static void null_destroy(void *stream) { free(stream); }

static cl_int null_flush(void *stream) { return CL_SUCCESS; }

static cl_int null_alloc(void *stream, size_t size, cl_mem *out) {
  struct null_stream *s = stream;
  cl_int rc;
  *out = clCreateBuffer(s->backend->context, CL_MEM_READ_WRITE, size, NULL, &rc);
  return rc;
}

static cl_int done(void *stream, uint64_t seq) {
  ((struct null_stream *)stream)->seq = seq;
  return CL_SUCCESS;
}

static cl_int null_launch(void *stream, const struct cls_kernel_cmd *cmd, uint64_t seq,
                          cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

static cl_int null_write(void *stream, cl_mem dst, size_t off, size_t size, const void *src,
                         int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

static cl_int null_read(void *stream, cl_mem src, size_t off, size_t size, void *dst,
                        int blocking, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

static cl_int null_copy(void *stream, cl_mem src, size_t soff, cl_mem dst, size_t doff,
                        size_t size, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

static cl_int null_fill(void *stream, cl_mem dst, size_t off, size_t size, const void *pat,
                        size_t psize, uint64_t seq, cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

/* Nothing runs here: the callback is not called, the command completes
 * at once like every other (its writes count as done, F4).  No queue. */
static cl_int null_foreign(void *stream, const struct cls_foreign_cmd *cmd, uint64_t seq,
                           cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

static cl_int null_image(void *stream, int kind, const struct cls_transfer *x, uint64_t seq,
                         cl_uint nwait, const cl_event *wait) {
  return done(stream, seq);
}

/* A real event, already complete: other streams may wait on it. */
static cl_int null_marker(void *stream, cl_event *out) {
  struct null_stream *s = stream;
  cl_int rc;
  *out = clCreateUserEvent(s->backend->context, &rc);
  if (rc != CL_SUCCESS)
    return rc;
  rc = clSetUserEventStatus(*out, CL_COMPLETE);
  if (rc != CL_SUCCESS)
    clReleaseEvent(*out);
  return rc;
}

static cl_int null_poll(void *stream, int wait, cls_failed_fn on_failed, void *arg,
                        uint64_t *completed) {
  *completed = ((struct null_stream *)stream)->seq;
  return CL_SUCCESS;
}

static const struct cls_stream_factory null_factory = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "null",
    .description = "does no work: every command completes at once (benchmarks, fuzzing)",
    .create = null_create,
    .destroy = null_destroy,
    .flush = null_flush,
    .alloc = null_alloc,
    .launch = null_launch,
    .write = null_write,
    .read = null_read,
    .copy = null_copy,
    .fill = null_fill,
    .marker = null_marker,
    .poll = null_poll,
    .foreign = null_foreign,
    .queue = NULL,
    .image = null_image,
};

CLS_API const struct cls_stream_factory *cls_null_stream_factory(void) { return &null_factory; }
