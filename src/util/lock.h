/* Internal: the context lock.
 *
 * Every public entry point takes it once for its whole duration, so the
 * uncontended case is the launch path's: a lock and an unlock are one
 * atomic operation each (a pthread mutex costs ~55 instructions for the
 * pair, a tenth of a skipped launch).  A contended lock sleeps on a
 * condition variable; it never spins, since a holder may be blocked in
 * OpenCL (cls_sync).  States: 0 free, 1 held, 2 held and a thread may be
 * waiting (its holder wakes one on unlock).
 *
 * `owner` names the holding thread (an address unique to it, the caller's
 * choice), set after the lock is taken and cleared before it is given:
 * the contended path tells a thread that already holds the lock (a call
 * from inside one of the context's callbacks) from one that must wait.
 * A thread reads its own owner only when it holds the lock: another
 * thread's value, or NULL, otherwise. */
#ifndef CLS_LOCK_H
#define CLS_LOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct cls__lock {
  atomic_int state;
  _Atomic(const void *) owner; /* see above; NULL: free, or being taken */
  pthread_mutex_t m; /* guards the sleep only, not the state */
  pthread_cond_t c;
};

/* 0, or -1 when the mutex or condition cannot be created (nothing left). */
int cls__lock_init(struct cls__lock *l);
void cls__lock_fini(struct cls__lock *l);
/* The contended path (lock.c): takes the lock for `self`, sleeping while
 * another thread holds it.  -1, without waiting, when `self` holds it
 * already (it would wait for itself forever). */
int cls__lock_wait(struct cls__lock *l, const void *self);
void cls__lock_wake(struct cls__lock *l);

/* The uncontended path: false when the lock is held (by anyone). */
static inline bool cls__lock_try(struct cls__lock *l, const void *self) {
  int free_ = 0;
  if (!atomic_compare_exchange_strong_explicit(&l->state, &free_, 1, memory_order_acquire,
                                               memory_order_relaxed))
    return false;
  atomic_store_explicit(&l->owner, self, memory_order_relaxed);
  return true;
}

static inline void cls__lock_give(struct cls__lock *l) {
  atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
  if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2)
    cls__lock_wake(l);
}

#endif /* CLS_LOCK_H */
