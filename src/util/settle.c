/* Waiting with a deadline (settle.h). */
#include "util/settle.h"

#include <time.h>

uint64_t cls__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cls__nap(void) {
  struct timespec ts = {0, 100000};
  nanosleep(&ts, NULL);
}

bool cls__settle_events(const cl_event *evs, size_t n, uint64_t deadline) {
  for (;;) {
    bool all = true;
    for (size_t i = 0; i < n && all; i++)
      all = !evs[i] || cls__event_state(evs[i]) <= CL_COMPLETE;
    if (all)
      return true;
    if (cls__now_ns() > deadline)
      return false;
    cls__nap();
  }
}

bool cls__settle_queue(cl_command_queue q, uint64_t deadline, cl_event *left) {
  cl_event m = NULL;
  *left = NULL;
  if (clEnqueueMarkerWithWaitList(q, 0, NULL, &m) != CL_SUCCESS)
    return false;
  clFlush(q);
  if (cls__settle_events(&m, 1, deadline)) {
    clReleaseEvent(m);
    return true;
  }
  *left = m;
  return false;
}
