/* Failure records (F1): allocation, reference counts reaching zero, the
 * skip chain's slow path, and the context's failure table. */
#include "base/record.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* A fresh buffer points here until something writes it: nothing wrote its
 * bytes, so reading them must fail.  Never counted, never freed; the first
 * check that meets it mints a real record for that buffer. */
struct cls__failure cls__never_written = {.status = CLS_ETAINTED};

static atomic_size_t alive;

size_t cls__failures_alive(void) { return atomic_load(&alive); }

struct cls__failure *cls__failure_new(void) {
  struct cls__failure *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  atomic_init(&f->refs, 1);
  atomic_fetch_add(&alive, 1);
  static atomic_uint_least64_t serials;
  f->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
  return f;
}

void cls__failure_free(struct cls__failure *f) {
  free(f->build_log);
  free(f);
  atomic_fetch_sub(&alive, 1);
}

void cls__copy_name(char *dst, const char *src) {
  if (!src)
    src = "";
  size_t n = strlen(src);
  if (n >= CLS__NAME_MAX)
    n = CLS__NAME_MAX - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

void cls__failures_init(struct cls__failures *ft, const struct cls__logger *log) {
  ft->spare = NULL;
  ft->seen = NULL;
  ft->seen_next = 0;
  ft->log = log;
  ft->minted = 0;
}

void cls__failures_fini(struct cls__failures *ft) {
  cls__failure_unref(ft->spare);
  ft->spare = NULL;
  if (ft->seen)
    for (size_t i = 0; i < CLS__SEEN_MAX; i++)
      cls__failure_unref(ft->seen[i].f);
  free(ft->seen);
  ft->seen = NULL;
}

/* A skip that does not extend the chain's last entry by pointer (see
 * cls__failure_add_skip in failure.h): compare by name, else a new entry. */
void cls__failure_add_skip_slow(struct cls__failure *f, int kind, const char *kernel, int stream,
                                uint64_t position, uint64_t stamp) {
  if (f->nskips) {
    struct cls__skip *last = &f->skips[f->nskips - 1];
    if (last->kind == kind && last->stream == stream && !last->origin && !last->movable &&
        strncmp(last->kernel, kernel ? kernel : "", CLS__NAME_MAX - 1) == 0) {
      last->count++;
      return;
    }
  }
  if (f->nskips == CLS__MAX_SKIP_ENTRIES) {
    f->dropped++;
    return;
  }
  struct cls__skip *e = &f->skips[f->nskips++];
  e->key = kernel;
  e->kind = kind;
  e->stream = stream;
  e->position = position;
  e->count = 1;
  e->stamp = e->last = stamp;
  e->movable = false;
  e->origin = 0; /* here */
  cls__copy_name(e->kernel, kernel);
}

void cls__failure_add_skip_run(struct cls__failure *f, int kind, const char *name, int stream,
                               uint64_t position, uint64_t stamp, uint64_t count) {
  f->skipped += count;
  if (f->nskips == CLS__MAX_SKIP_ENTRIES) {
    f->dropped += count;
    return;
  }
  f->skips[f->nskips++] = (struct cls__skip){.key = name, .kind = kind, .stream = stream,
                                             .position = position, .count = count,
                                             .stamp = stamp, .last = stamp};
  cls__copy_name(f->skips[f->nskips - 1].kernel, name);
}

/* One failure in a line of the detail, worded as a report's first line
 * of it and its log line. */
void cls__error_append_root(const struct cls__failure *f) {
  if (f->origin > 0)
    cls__error_append("on rank %d: ", f->origin - 1);
  else if (f->origin < 0)
    cls__error_append("in another process: ");
  cls__error_append("%s", cls_err_name(f->status));
  if (f->cl_status)
    cls__error_append(" (%s)", cls_cl_status_name(f->cl_status));
  cls__error_append("%s in %s", f->async ? ", found after the call returned," : "",
                    f->operation ? f->operation : "?");
  if (f->kernel[0])
    cls__error_append(" of '%s'", f->kernel);
  if (f->stream >= 0)
    cls__error_append(" on stream %d", f->stream);
  if (f->position)
    cls__error_append(" at position %llu", (unsigned long long)f->position);
  cls__error_append(": %s", f->message);
  if (f->skipped)
    cls__error_append("; skip chain: %llu launch%s", (unsigned long long)f->skipped,
                      f->skipped == 1 ? "" : "es");
}
