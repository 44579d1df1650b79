/* Private to fault injection: a parsed CLS_FAULT spec, as fault-spec.c
 * parses it and matches events against it, and as the wrapping stream
 * factory (fault.c) consults it. */
#ifndef CLS_FAULT_SPEC_H
#define CLS_FAULT_SPEC_H

#include "factory/fault.h"

/* W_GONE: "lost" with at=complete (a separate count from at=enqueue). */
enum cls__fault_when { W_ENQUEUE, W_COMPLETE, W_ALLOC, W_LOST, W_GONE };

struct cls__fault {
  int when;
  char *kernel;  /* NULL: any */
  char *op;      /* NULL: any */
  int stream;    /* -1: any */
  uint64_t nth;  /* 0: every match */
  uint64_t times;/* 0: unlimited */
  cl_int status;
  int rank;      /* -1: any */
  uint64_t seen, fired;
  uint64_t hold; /* 0: found when it finishes */
};

struct cls__fault_config {
  size_t n;
  struct cls__fault *faults;
  uint64_t draws; /* hold=N's sequence: deterministic, so a run repeats */
  uint64_t waits; /* waits so far on any stream (a poll that waits, a
                     blocking download): each releases every hold */
  int rank;      /* this process's MPI rank; -1: not known */
  /* fault.c: the streams whose at=complete gate is closed (a list through
   * them): anything that waits opens them all first, since a command of
   * another queue may wait behind a gated one. */
  void *gated;
  /* fault.c, while a gate is closed: the events behind one (they cannot
   * finish before it opens), and for each queue the newest such command
   * on it (a queue after it is behind the gate too), each retained; for
   * PoCL 3.1's race (fault.c, settle_deps).  Let go when the last gate
   * opens. */
  cl_event *behind;
  size_t nbehind, capbehind;
  struct cls__fault_queue_behind {
    cl_command_queue q;
    cl_event last;
  } *behind_q;
  size_t nbehind_q, capbehind_q;
  /* fault.c, while a gate is closed: the OpenCL context of its commands,
   * and the process's list of such configurations (next_closed), for a
   * wait on the host outside the factory (cls__fault_before_host_wait). */
  cl_context context;
  struct cls__fault_config *next_closed;
};

/* Does a fault fire for this event?  Counts the event either way.  *hold:
 * how many polls that do not wait its discovery is held for. */
cl_int cls__fault_fires(struct cls__fault_config *cfg, int when, const char *op,
                        const char *kernel, int stream, uint64_t *hold);

#endif /* CLS_FAULT_SPEC_H */
