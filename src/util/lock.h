/* Internal: the context lock.
 *
 * Every public entry point takes it once for its whole duration, so the
 * uncontended case is the launch path's: a lock and an unlock are one
 * atomic operation each (a pthread mutex costs ~55 instructions for the
 * pair, a tenth of a skipped launch).  A contended lock sleeps on a
 * condition variable; it never spins, since a holder may be blocked in
 * OpenCL (cls_sync).  States: 0 free, 1 held, 2 held and a thread may be
 * waiting (its holder wakes one on unlock). */
#ifndef CLS_LOCK_H
#define CLS_LOCK_H

#include <pthread.h>
#include <stdatomic.h>

struct cls__lock {
  atomic_int state;
  pthread_mutex_t m; /* guards the sleep only, not the state */
  pthread_cond_t c;
};

/* 0, or -1 when the mutex or condition cannot be created (nothing left). */
int cls__lock_init(struct cls__lock *l);
void cls__lock_fini(struct cls__lock *l);
/* The contended paths (lock.c). */
void cls__lock_wait(struct cls__lock *l);
void cls__lock_wake(struct cls__lock *l);

static inline void cls__lock_take(struct cls__lock *l) {
  int free_ = 0;
  if (!atomic_compare_exchange_strong_explicit(&l->state, &free_, 1, memory_order_acquire,
                                               memory_order_relaxed))
    cls__lock_wait(l);
}

static inline void cls__lock_give(struct cls__lock *l) {
  if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2)
    cls__lock_wake(l);
}

#endif /* CLS_LOCK_H */
