/* Timed waits: a detached thread blocks in clWaitForEvents, the caller
 * waits on a condition variable until it signals or the deadline passes.
 * The thread also makes rusticl's statuses current (it marks an event
 * complete only when something waits for it), which a polling loop would
 * not.  The state is shared by the two and freed by the last to leave. */
#include "stream/deadline.h"
#include "util/settle.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct waiter {
  pthread_mutex_t m;
  pthread_cond_t c;
  cl_event ev;
  bool done;
  int refs;
};

int cls__timeout_parse(const char *text, uint64_t *ns) {
  const char *p = text;
  uint64_t whole = 0, frac = 0, scale = 1000000000u;
  bool digits = false;
  for (; *p >= '0' && *p <= '9'; p++, digits = true)
    if ((whole = whole * 10 + (uint64_t)(*p - '0')) > 1000000)
      goto bad;
  if (*p == '.') {
    bool fdigits = false;
    for (p++; *p >= '0' && *p <= '9'; p++, fdigits = true)
      if (scale >= 10) {
        scale /= 10;
        frac += (uint64_t)(*p - '0') * scale;
      }
    if (!fdigits)
      goto bad;
  }
  if (!digits || *p || (whole == 0 && frac == 0) || (whole == 1000000 && frac))
    goto bad;
  *ns = whole * 1000000000u + frac;
  return CLS_OK;
bad:
  return cls__error(CLS_ECONFIG, 0,
                    "CLS_SYNC_TIMEOUT '%s': seconds expected, as digits with an optional "
                    "fraction ('2', '0.5'), more than 0 and at most 1000000",
                    text);
}

static void leave(struct waiter *w) {
  pthread_mutex_lock(&w->m);
  bool last = --w->refs == 0;
  pthread_mutex_unlock(&w->m);
  if (!last)
    return;
  pthread_cond_destroy(&w->c);
  pthread_mutex_destroy(&w->m);
  free(w);
}

static void *wait_thread(void *arg) {
  struct waiter *w = arg;
  clWaitForEvents(1, &w->ev); /* an error status ends the wait too */
  clReleaseEvent(w->ev);
  pthread_mutex_lock(&w->m);
  w->done = true;
  pthread_cond_signal(&w->c);
  pthread_mutex_unlock(&w->m);
  leave(w);
  return NULL;
}

int cls__wait_event_for(cl_event ev, uint64_t timeout_ns) {
  struct waiter *w = calloc(1, sizeof *w);
  if (!w) {
    clReleaseEvent(ev);
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_mutex_init(&w->m, NULL);
  pthread_cond_init(&w->c, &ca);
  pthread_condattr_destroy(&ca);
  w->ev = ev;
  w->refs = 2;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int rc = pthread_create(&t, &a, wait_thread, w);
  pthread_attr_destroy(&a);
  if (rc != 0) {
    clReleaseEvent(ev);
    pthread_cond_destroy(&w->c);
    pthread_mutex_destroy(&w->m);
    free(w);
    return cls__error(CLS_ENOMEM, 0, "starting a thread to wait with a deadline failed: %s",
                      strerror(rc));
  }
  uint64_t end = cls__now_ns() + timeout_ns;
  struct timespec ts = {.tv_sec = (time_t)(end / 1000000000u),
                        .tv_nsec = (long)(end % 1000000000u)};
  pthread_mutex_lock(&w->m);
  while (!w->done && pthread_cond_timedwait(&w->c, &w->m, &ts) != ETIMEDOUT)
    ;
  bool done = w->done;
  pthread_mutex_unlock(&w->m);
  leave(w);
  return done ? CLS_OK : 1;
}
