/* Internal: waiting with a deadline (CLS_SYNC_TIMEOUT).  OpenCL has no
 * timed wait and cannot cancel a running command; this waits for an event
 * for at most a given time and, when the time runs out, leaves a thread
 * that keeps waiting for it (and releases it) in the background. */
#ifndef CLS_DEADLINE_H
#define CLS_DEADLINE_H

#include "util/util.h"

/* Parses CLS_SYNC_TIMEOUT's grammar (seconds: digits, optionally '.' and
 * digits, more than 0, at most 10^6) into nanoseconds; CLS_ECONFIG
 * otherwise. */
int cls__timeout_parse(const char *text, uint64_t *ns);
/* Waits for `ev` (the caller's reference, taken over) for at most
 * timeout_ns.  Returns CLS_OK when it finished (failed or not), 1 when the
 * time ran out, or a CLS_E* code (recorded) when no thread could wait. */
int cls__wait_event_for(cl_event ev, uint64_t timeout_ns);

#endif /* CLS_DEADLINE_H */
