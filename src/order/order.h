/* Internal: ordering between streams, and rule F7 (never wait on a known
 * failure), for every driver.  A command is ordered after the last write
 * of each buffer it binds and, when it writes, after the reads since; the
 * streams it depends on are polled first (F8 finds their failures) unless
 * what it needs is still running, and it waits only on events that have
 * not failed.  Drivers reach it through <clstream/driver.h>
 * (cls_driver_order_after, cls_driver_live_waits: src/driver/entry.c). */
#ifndef CLS_ORDER_H
#define CLS_ORDER_H

#include "base/cmd.h"

struct cls_driver;

/* order(): returned when ordering polled a stream and learnt of a failure;
 * the core re-checks the command's inputs and calls order() again. */
#define CLS__RETRY CLS_DRIVER_RETRY

/* s is now ordered after p up to p's command `upto`, and after everything p
 * was ordered after. */
void cls__order_synced(struct cls__stream *s, const struct cls__stream *p, uint64_t upto);

/* struct cls_driver_orderer, how a driver's streams reach their queues,
 * is public (<clstream/driver.h>). */

/* The ordering every driver does: the streams cmd depends on are polled
 * (F8, and F7: CLS__RETRY when a failure was found, so the core checks the
 * inputs again), then cmd waits on each one not already ordered that far
 * and not finished: on an event of the other queue, after a flush.
 * Nothing after the polls learns of a failure.  Fills cmd->wait. */
int cls__order_after(struct cls_driver *d, struct cls__cmd *cmd, const struct cls_driver_orderer *o);
/* Waits that order() took are dropped without a command carrying them
 * (its enqueue failed, or it is ordered again): what order() recorded (the
 * stream is after those producers) must still hold for the stream's next
 * commands, so the waits happen on the host. */
void cls__order_unsent(cl_uint nwait, const cl_event *wait);
/* Releases the events of cmd's wait list (inline: most commands have
 * none). */
void cls__order_release_waits(struct cls__cmd *cmd);
static inline void cls__order_release(struct cls__cmd *cmd) {
  if (cmd->nwait)
    cls__order_release_waits(cmd);
}
/* Makes cmd's waits its own: the events order() lent (a driver that
 * enqueues at once borrows the producer's last event) are retained, so the
 * command may be held past its producers' next calls. */
void cls__order_own(struct cls__cmd *cmd);
/* Drops cmd's waits without it being enqueued: on the host, then released
 * (a failed enqueue, a command ordered again, a cancelled one). */
static inline void cls__order_drop(struct cls__cmd *cmd) {
  cls__order_unsent(cmd->nwait, cmd->wait);
  cls__order_release(cmd);
}

/* F7 for a command whose enqueue was deferred after it was ordered (a
 * driver that batches): of its waits `w`, those whose event has failed
 * since are left out -- a failed event is final, so there is nothing left
 * to wait for, and a command enqueued on it may never run (PoCL); what the
 * command read from it is F8's.  Writes the rest into keep and returns
 * their number. */
cl_uint cls__order_live_waits(const cl_event *w, size_t nw, cl_event *keep);

#endif /* CLS_ORDER_H */
