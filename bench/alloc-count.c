/* Counts heap allocations: malloc, calloc and realloc are interposed (the
 * executable's definitions win over libc's for every library it loads) and
 * forwarded to glibc's own entry points.  Counting is on only between
 * bench_count_start() and bench_count_stop(), so setup does not blur the
 * steady state being measured. */
#include "bench.h"

#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static atomic_int counting;
static atomic_ulong allocations;

void *malloc(size_t n) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_malloc(n);
}

void *calloc(size_t n, size_t m) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
  return __libc_realloc(p, n);
}

void bench_count_start(void) {
  atomic_store(&allocations, 0);
  atomic_store(&counting, 1);
}

unsigned long bench_count_stop(void) {
  atomic_store(&counting, 0);
  return atomic_load(&allocations);
}
