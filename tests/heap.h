/* Heap accounting for tests: every malloc, calloc, realloc and free of the
 * process is interposed (the executable's definitions win over libc's for
 * every library it loads) and forwarded to glibc's own entry points; only
 * the calls the test's own thread makes while ct_heap_watch is set are
 * counted (PoCL's worker threads are not the path under test).
 *   ct_heap_allocs  allocation calls (F10: a skip makes none)
 *   ct_heap_net     blocks taken minus blocks given back (a rejected call
 *                   leaves nothing behind)
 * Under AddressSanitizer or ThreadSanitizer the allocator is theirs: their
 * allocation hooks count instead.  Include from one file per program. */
#ifndef CLS_TESTS_HEAP_H
#define CLS_TESTS_HEAP_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CT_SANITIZED 1
#endif
#endif

static _Thread_local int ct_heap_watch;
static _Thread_local unsigned long ct_heap_allocs;
static _Thread_local long ct_heap_net;

/* Starts counting from zero on this thread. */
static inline void ct_heap_start(void) {
  ct_heap_allocs = 0;
  ct_heap_net = 0;
  ct_heap_watch = 1;
}

static inline void ct_heap_stop(void) { ct_heap_watch = 0; }

#ifdef CT_SANITIZED
int __sanitizer_install_malloc_and_free_hooks(void (*)(const volatile void *, size_t),
                                              void (*)(const volatile void *));

static void ct_on_malloc(const volatile void *p, size_t n) {
  (void)n;
  if (ct_heap_watch && p) {
    ct_heap_allocs++;
    ct_heap_net++;
  }
}

static void ct_on_free(const volatile void *p) {
  if (ct_heap_watch && p)
    ct_heap_net--;
}

__attribute__((constructor)) static void ct_heap_hooks(void) {
  __sanitizer_install_malloc_and_free_hooks(ct_on_malloc, ct_on_free);
}
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  if (ct_heap_watch) {
    ct_heap_allocs++;
    ct_heap_net += p != NULL;
  }
  return p;
}

void *calloc(size_t n, size_t m) {
  void *p = __libc_calloc(n, m);
  if (ct_heap_watch) {
    ct_heap_allocs++;
    ct_heap_net += p != NULL;
  }
  return p;
}

void *realloc(void *old, size_t n) {
  void *p = __libc_realloc(old, n);
  if (ct_heap_watch) {
    ct_heap_allocs++;
    if (!old && p)
      ct_heap_net++;
    else if (old && n == 0 && !p)
      ct_heap_net--; /* glibc: realloc(p, 0) frees p */
  }
  return p;
}

void free(void *p) {
  if (ct_heap_watch && p)
    ct_heap_net--;
  __libc_free(p);
}
#endif

#endif /* CLS_TESTS_HEAP_H */
