/* Internal: what every layer of the library may use -- the per-thread
 * error record, growing arrays and rings, and an event's status.  Depends
 * on nothing of clstream but its public headers, so a stream factory may
 * use it as well as the core. */
#ifndef CLS_UTIL_H
#define CLS_UTIL_H

#include "config.h"

#include <clstream.h>
#include <clstream/stream.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Records `err` (and the OpenCL status behind it, 0 if none) as the last
 * error of this thread, with an optional printf-style detail, and returns
 * err so callers can `return cls__error(...)`. */
int cls__error(int err, cl_int cl_status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Appends to this thread's detail text. */
void cls__error_append(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The head of this thread's last error (errors.c): inline, because every
 * public entry point clears it and a skipped launch sets it. */
struct cls__last_error {
  int cl_status;
  bool has_detail; /* else the detail is "" */
  /* While has_detail: a detail not yet written, that this writes (with
   * cls__error_append) when cls_last_error_detail() asks for it. */
  void (*deferred)(void);
  /* What a deferred detail is about (a skip: cls__skipped, failure.h): the
   * call's operation, stream and position; and, compared only, the name,
   * the argument's text and the record whose texts the failure layer
   * keeps. */
  const char *op;
  int stream;
  uint64_t position;
  const char *name_of;
  uint64_t serial;
  const char *input_of;
};
extern _Thread_local struct cls__last_error cls__last;
static inline void cls__error_clear(void) {
  cls__last.cl_status = 0;
  cls__last.has_detail = false;
}
/* cls__error without detail: for the frequent, expected codes. */
static inline int cls__error_code(int err) {
  cls__error_clear();
  return err;
}

/* Makes room for `need` elements of `size` bytes in the growing array *p of
 * capacity *cap (doubled, from `first`).  False when out of memory, the
 * array unchanged.  The library's arrays are reused, never shrunk. */
static inline bool cls__grow(void **p, size_t *cap, size_t need, size_t size, size_t first) {
  if (need <= *cap)
    return true;
  size_t ncap = *cap ? *cap : first;
  while (ncap < need)
    ncap *= 2;
  void *n = realloc(*p, ncap * size);
  if (!n)
    return false;
  *p = n;
  *cap = ncap;
  return true;
}

/* Doubles the ring *p (`len` elements of `size` bytes from *head; capacity
 * *cap, a power of two, or 0 and then `first`), unwrapped to start at 0.
 * False when out of memory, the ring unchanged.  Off the hot paths: rings
 * grow only when more is in flight than ever before. */
static inline bool cls__ring_grow(void **p, size_t *cap, size_t *head, size_t len, size_t size,
                                  size_t first) {
  size_t ncap = *cap ? *cap * 2 : first;
  unsigned char *n = malloc(ncap * size);
  if (!n)
    return false;
  if (len) {
    size_t upper = *cap - *head < len ? *cap - *head : len; /* before the wrap */
    memcpy(n, (unsigned char *)*p + *head * size, upper * size);
    memcpy(n + upper * size, *p, (len - upper) * size);
  }
  free(*p);
  *p = n;
  *cap = ncap;
  *head = 0;
  return true;
}

/* Whether byte ranges [alo, ahi) and [blo, bhi) share a byte. */
static inline bool cls__ranges_overlap(size_t alo, size_t ahi, size_t blo, size_t bhi) {
  return alo < bhi && blo < ahi;
}

/* Reads ev's execution status into *st; false when it cannot be read (the
 * caller then knows nothing of the event). */
static inline bool cls__event_status(cl_event ev, cl_int *st) {
  return clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof *st, st, NULL) ==
         CL_SUCCESS;
}

/* ev's execution status, or the error clGetEventInfo gave where it
 * cannot be read: negative either way, so an event that cannot be
 * queried counts as failed. */
static inline cl_int cls__event_state(cl_event ev) {
  cl_int st = CL_QUEUED;
  cl_int rc = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
  return rc != CL_SUCCESS ? rc : st;
}

/* f's last_event member, or NULL: members past version 1 are read only
 * from a factory that has them. */
static inline cl_event (*cls__factory_last_event(const struct cls_stream_factory *f))(void *) {
  return f->version >= 2 ? f->last_event : NULL;
}
/* The same for the version 4 members (NULL below 4). */
static inline cl_int (*cls__factory_poll_range(const struct cls_stream_factory *f))(
    void *, int, cls_failed_range_fn, void *, uint64_t *) {
  return f->version >= 4 ? f->poll_range : NULL;
}
static inline uint64_t (*cls__factory_events(const struct cls_stream_factory *f))(void *) {
  return f->version >= 4 ? f->events : NULL;
}
/* The same for the version 5 members (NULL below 5). */
static inline cl_int (*cls__factory_foreign(const struct cls_stream_factory *f))(
    void *, const struct cls_foreign_cmd *, uint64_t, cl_uint, const cl_event *) {
  return f->version >= 5 ? f->foreign : NULL;
}
static inline cl_command_queue (*cls__factory_queue(const struct cls_stream_factory *f))(void *) {
  return f->version >= 5 ? f->queue : NULL;
}

static inline cl_int (*cls__factory_image(const struct cls_stream_factory *f))(
    void *, int, const struct cls_transfer *, uint64_t, cl_uint, const cl_event *) {
  return f->version >= 5 ? f->image : NULL;
}

/* Whether `needle` occurs in `hay`, ignoring ASCII case (an empty needle
 * does).  Device and platform names are matched this way. */
static inline bool cls__icontains(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (i == n)
      return true;
  }
  return n == 0;
}

#endif /* CLS_UTIL_H */
