/* The context lock's contended paths and lifetime (lock.h). */
#include "util/lock.h"

int cls__lock_init(struct cls__lock *l) {
  atomic_init(&l->state, 0);
  atomic_init(&l->owner, NULL);
  if (pthread_mutex_init(&l->m, NULL) != 0)
    return -1;
  if (pthread_cond_init(&l->c, NULL) != 0) {
    pthread_mutex_destroy(&l->m);
    return -1;
  }
  return 0;
}

void cls__lock_fini(struct cls__lock *l) {
  pthread_cond_destroy(&l->c);
  pthread_mutex_destroy(&l->m);
}

/* Marks the lock contended and sleeps until it is free.  The state goes to
 * 2 under `m`, so a holder that sees 2 on unlock takes `m` and signals only
 * once this thread sleeps: no wake-up is lost.  A thread woken here takes
 * the lock with the state at 2, which at worst wakes nobody once. */
int cls__lock_wait(struct cls__lock *l, const void *self) {
  if (atomic_load_explicit(&l->owner, memory_order_relaxed) == self)
    return -1;
  pthread_mutex_lock(&l->m);
  while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0)
    pthread_cond_wait(&l->c, &l->m);
  pthread_mutex_unlock(&l->m);
  atomic_store_explicit(&l->owner, self, memory_order_relaxed);
  return 0;
}

void cls__lock_wake(struct cls__lock *l) {
  pthread_mutex_lock(&l->m);
  pthread_cond_signal(&l->c);
  pthread_mutex_unlock(&l->m);
}
