/* cls_foreign_run (<clstream/stream.h>): what a stream factory's foreign()
 * does with an OpenCL queue, the same for every factory that has one: the
 * wait list as a barrier, the user's callback, and a check of what it
 * returned (a status that is one, an event of this context that has not
 * failed).  Knows nothing of the context: a factory sees only the public
 * headers. */
#include "util/util.h"

/* A status is an OpenCL one when it is CL_SUCCESS or negative; anything
 * else is garbage the callback returned. */
CLS_API cl_int cls_foreign_run(const struct cls_foreign_cmd *cmd, cl_command_queue q,
                               cl_uint nwait, const cl_event *wait, cl_event *barrier,
                               cl_event *out) {
  *out = NULL;
  *barrier = NULL;
  /* The wait list as a barrier: a library that takes none is ordered. */
  cl_int rc = nwait ? clEnqueueBarrierWithWaitList(q, nwait, wait, barrier) : CL_SUCCESS;
  if (rc != CL_SUCCESS)
    return rc;
  struct cls_foreign_call call = {.queue = q,
                                  .label = cmd->label,
                                  .data = cmd->data,
                                  .stream = cmd->stream,
                                  .nbuffers = cmd->nbuffers,
                                  .buffers = cmd->buffers,
                                  .nwait = nwait,
                                  .wait = nwait ? wait : NULL};
  cl_event ev = NULL;
  cl_int st = cmd->fn(&call, &ev);
  if (st > 0)
    return CLS_FOREIGN_BAD_STATUS;
  if (st < 0)
    return st; /* the event is not read on an error */
  if (!ev)
    return CL_SUCCESS;
  /* Only an event of this context is waited on or kept: another
   * context's cannot order this queue, and one the runtime does not know
   * is not an event. */
  cl_context mine = NULL, its = NULL;
  if (clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof mine, &mine, NULL) != CL_SUCCESS ||
      clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof its, &its, NULL) != CL_SUCCESS)
    return CLS_FOREIGN_BAD_EVENT;
  if (its != mine) {
    clReleaseEvent(ev);
    return CLS_FOREIGN_BAD_EVENT;
  }
  /* Failed already: never waited on (PoCL hangs a command that waits on a
   * failed event); the command fails now. */
  cl_int status = CL_QUEUED;
  if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) !=
      CL_SUCCESS)
    status = CLS_FOREIGN_BAD_EVENT;
  if (status < 0) {
    clReleaseEvent(ev);
    return status;
  }
  *out = ev;
  return CL_SUCCESS;
}
