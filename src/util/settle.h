/* Internal: waiting for OpenCL work with a deadline, by polling event
 * status, never blocking inside OpenCL (a queue may hold a command that
 * never finishes: behind a user event, or on a stuck device).  Used by
 * the device probes and by fault injection. */
#ifndef CLS_SETTLE_H
#define CLS_SETTLE_H

#include "util/util.h"

/* Nanoseconds of CLOCK_MONOTONIC: the one clock of the library's
 * deadlines (these, and CLS_SYNC_TIMEOUT's, src/stream/deadline.c). */
uint64_t cls__now_ns(void);

/* Sleeps 0.1 ms, the polling step below. */
void cls__nap(void);

/* True once every event of evs (NULL entries ignored) has finished,
 * failed or not; false when `deadline` (cls__now_ns) came first. */
bool cls__settle_events(const cl_event *evs, size_t n, uint64_t deadline);

/* cls__settle_events for what queue q holds, through a marker behind it
 * (an in-order queue).  True when the marker finished (it is released);
 * false when the deadline came first, or no marker could be enqueued
 * (*left NULL): the unfinished marker is then the caller's, in *left. */
bool cls__settle_queue(cl_command_queue q, uint64_t deadline, cl_event *left);

#endif /* CLS_SETTLE_H */
