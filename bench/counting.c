/* clstream-bench's counting factory: the OpenCL stream factory wrapped so
 * that every call the core makes into it is counted (skip-chain: the
 * OpenCL work done for launches that are skipped). */
#include "common.h"

/* Counts every call the core makes into the OpenCL stream factory: the
 * OpenCL work done on a stream's behalf. */
unsigned long factory_calls;
const struct cls_stream_factory *inner;

static cl_int c_create(void *d, const struct cls_backend *b, int id, void **out) {
  return inner->create(d, b, id, out);
}
static void c_destroy(void *s) { inner->destroy(s); }
static cl_int c_flush(void *s) {
  factory_calls++;
  return inner->flush(s);
}
static cl_int c_launch(void *s, const struct cls_kernel_cmd *c, uint64_t q, cl_uint n,
                       const cl_event *w) {
  factory_calls++;
  return inner->launch(s, c, q, n, w);
}
static cl_int c_write(void *s, cl_mem m, size_t o, size_t z, const void *p, int b, uint64_t q,
                      cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->write(s, m, o, z, p, b, q, n, w);
}
static cl_int c_read(void *s, cl_mem m, size_t o, size_t z, void *p, int b, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->read(s, m, o, z, p, b, q, n, w);
}
static cl_int c_copy(void *s, cl_mem a, size_t ao, cl_mem b, size_t bo, size_t z, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->copy(s, a, ao, b, bo, z, q, n, w);
}
static cl_int c_fill(void *s, cl_mem m, size_t o, size_t z, const void *p, size_t pz, uint64_t q,
                     cl_uint n, const cl_event *w) {
  factory_calls++;
  return inner->fill(s, m, o, z, p, pz, q, n, w);
}
static cl_int c_marker(void *s, cl_event *e) {
  factory_calls++;
  return inner->marker(s, e);
}
static cl_int c_poll(void *s, int wait, cls_failed_fn f, void *a, uint64_t *done) {
  return inner->poll(s, wait, f, a, done);
}

/* Ranged attribution needs the inner factory's ranges and its event count
 * (the OpenCL factory has both). */
static cl_int c_poll_range(void *s, int wait, cls_failed_range_fn f, void *a, uint64_t *done) {
  return inner->poll_range(s, wait, f, a, done);
}
static uint64_t c_events(void *s) { return inner->events(s); }

const struct cls_stream_factory counting = {
    .version = CLS_STREAM_FACTORY_VERSION,
    .name = "counting",
    .description = "the OpenCL factory, counting the commands it is given",
    .create = c_create,
    .destroy = c_destroy,
    .flush = c_flush,
    .launch = c_launch,
    .write = c_write,
    .read = c_read,
    .copy = c_copy,
    .fill = c_fill,
    .marker = c_marker,
    .poll = c_poll,
    .poll_range = c_poll_range,
    .events = c_events,
};
