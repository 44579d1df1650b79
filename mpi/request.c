/* libclstream-mpi: the public send and receive calls, blocking and not.
 * A blocking call is its non-blocking one and the wait: one path. */
#include "endpoint.h"

#include <sched.h>
#include <stdio.h>

CLS_API int cls_mpi_isend(cls_mpi *m, int stream, cls_buffer src, size_t offset, size_t size,
                          int dest, int tag, cls_mpi_request **req) {
  if (req)
    *req = NULL;
  if (!m || !req)
    return cls_wire_error(CLS_EINVAL, "cls_mpi_isend: NULL %s", m ? "req" : "endpoint");
  if (size > (size_t)INT32_MAX - CLS__MPI_HEADER)
    return cls_wire_error(CLS_ERANGE, "cls_mpi_isend: %zu bytes is more than one MPI message of "
                          "bytes holds", size);
  struct cls_mpi_request *r = cls__mpi_request_get(m, size);
  if (!r)
    return cls_wire_error(CLS_ENOMEM, "cls_mpi_isend: no staging memory: %s",
                          cls_last_error_detail());
  r->kind = CLS__REQ_SEND;
  r->stream = stream;
  r->buf = src;
  r->offset = offset;
  r->size = size;
  r->peer = dest;
  r->tag = tag;
  int rc = cls__mpi_post_send(m, r);
  if (rc < 0 && r->mreq == MPI_REQUEST_NULL) {
    cls__mpi_request_put(r);
    return rc;
  }
  *req = r;
  return CLS_OK;
}

CLS_API int cls_mpi_irecv(cls_mpi *m, int stream, cls_buffer dst, size_t offset, size_t size,
                          int source, int tag, cls_mpi_request **req) {
  if (req)
    *req = NULL;
  if (!m || !req)
    return cls_wire_error(CLS_EINVAL, "cls_mpi_irecv: NULL %s", m ? "req" : "endpoint");
  /* The receive is a write of dst: what a write would refuse is refused
   * here, and leaves its record on dst (F12). */
  size_t have = 0;
  int rc = cls_buffer_size(m->ctx, dst, &have);
  if (rc < 0)
    return rc;
  char why[128] = "";
  if (size == 0)
    snprintf(why, sizeof why, "size 0");
  else if (offset > have || size > have - offset)
    snprintf(why, sizeof why, "%zu bytes at offset %zu exceed the buffer's %zu", size, offset,
             have);
  else if (stream < 0 || stream >= CLS_MAX_STREAMS)
    snprintf(why, sizeof why, "stream %d is not 0..%d", stream, CLS_MAX_STREAMS - 1);
  else if (size > (size_t)INT32_MAX - CLS__MPI_HEADER)
    snprintf(why, sizeof why, "%zu bytes is more than one MPI message of bytes holds", size);
  if (why[0]) {
    int code = size == 0 ? CLS_EINVAL : stream < 0 || stream >= CLS_MAX_STREAMS ? CLS_ESTREAM
                                                                               : CLS_ERANGE;
    char text[192];
    snprintf(text, sizeof text, "cls_mpi_irecv refused: %s", why);
    return cls_wire_fail(m->ctx, stream, dst, code, "receive", text);
  }
  struct cls_mpi_request *r = cls__mpi_request_get(m, size);
  if (!r)
    return cls_wire_fail(m->ctx, stream, dst, CLS_ENOMEM, "receive",
                         "cls_mpi_irecv: no staging memory");
  r->kind = CLS__REQ_RECV;
  r->stream = stream;
  r->buf = dst;
  r->offset = offset;
  r->size = size;
  r->peer = source;
  r->tag = tag;
  r->result = CLS_OK;
  r->mreq = MPI_REQUEST_NULL;
  r->matched = false;
  r->order = ++m->orders;
  /* Matched now if its message is here, else by a later call's progress:
   * its size is known before anything is received into the staging. */
  if ((rc = cls__mpi_progress(m)) < 0) {
    cls__mpi_request_put(r);
    char text[256];
    snprintf(text, sizeof text, "receive from rank %d with tag %d: %s", source, tag,
             cls_last_error_detail());
    return cls_wire_fail(m->ctx, stream, dst, CLS_EMPI, "receive", text);
  }
  *req = r;
  return CLS_OK;
}

/* Until r completes.  Meanwhile the endpoint's receives are matched to
 * the messages that arrive, as posted MPI receives would be, so a peer's
 * send to one of them completes whatever this rank waits for.  CLS_OK, or
 * CLS_EMPI with the detail naming the MPI call. */
static int complete(cls_mpi *m, struct cls_mpi_request *r, MPI_Status *st) {
  const char *dir = r->kind == CLS__REQ_SEND ? "send to" : "receive from";
  char what[96];
  for (;;) {
    int done = 0, mrc = MPI_SUCCESS;
    if (r->kind == CLS__REQ_SEND)
      mrc = MPI_Test(&r->mreq, &done, st);
    else if (r->matched && r->mreq != MPI_REQUEST_NULL)
      mrc = MPI_Wait(&r->mreq, st);
    else if (r->matched) /* refused when matched: nothing was received */
      return CLS_OK;
    if (mrc != MPI_SUCCESS) {
      snprintf(what, sizeof what, "%s rank %d with tag %d: %s", dir, r->peer, r->tag,
               r->kind == CLS__REQ_SEND ? "MPI_Test" : "MPI_Wait");
      return cls__mpi_error(mrc, what);
    }
    if (r->kind == CLS__REQ_SEND ? done : r->matched)
      return CLS_OK;
    if (cls__mpi_progress(m) < 0) {
      snprintf(what, sizeof what, "%s rank %d with tag %d: %s", dir, r->peer, r->tag,
               cls_last_error_detail());
      return cls_wire_error(CLS_EMPI, "%s", what);
    }
    if (!r->matched)
      sched_yield(); /* ranks often outnumber cores */
  }
}

CLS_API int cls_mpi_wait(cls_mpi *m, cls_mpi_request *r) {
  if (!m || !r || !r->busy)
    return cls_wire_error(CLS_EINVAL, "cls_mpi_wait: %s",
                          !m ? "NULL endpoint" : !r ? "NULL request" : "request already ended");
  MPI_Status st;
  int rc = complete(m, r, &st);
  if (r->kind == CLS__REQ_SEND) {
    if (rc == CLS_OK && (rc = r->result) < 0) /* the read's detail: the root it names */
      cls_wire_error(rc, "send to rank %d with tag %d sent a failure record: %s", r->peer,
                     r->tag, r->detail);
  } else if (rc < 0) {
    char text[256];
    snprintf(text, sizeof text, "%s", cls_last_error_detail());
    rc = cls_wire_fail(m->ctx, r->stream, r->buf, CLS_EMPI, "receive", text);
  } else {
    rc = cls__mpi_finish_recv(m, r, &st);
  }
  cls__mpi_request_put(r);
  return rc;
}

CLS_API int cls_mpi_waitall(cls_mpi *m, size_t n, cls_mpi_request **reqs) {
  if (!m || (n && !reqs))
    return cls_wire_error(CLS_EINVAL, "cls_mpi_waitall: NULL argument");
  int first = CLS_OK;
  for (size_t i = 0; i < n; i++)
    if (reqs[i]) {
      int rc = cls_mpi_wait(m, reqs[i]);
      reqs[i] = NULL;
      if (rc != CLS_OK && first == CLS_OK)
        first = rc;
    }
  return first;
}

CLS_API int cls_mpi_send(cls_mpi *m, int stream, cls_buffer src, size_t offset, size_t size,
                         int dest, int tag) {
  cls_mpi_request *r;
  int rc = cls_mpi_isend(m, stream, src, offset, size, dest, tag, &r);
  return rc < 0 ? rc : cls_mpi_wait(m, r);
}

CLS_API int cls_mpi_recv(cls_mpi *m, int stream, cls_buffer dst, size_t offset, size_t size,
                         int source, int tag) {
  cls_mpi_request *r;
  int rc = cls_mpi_irecv(m, stream, dst, offset, size, source, tag, &r);
  return rc < 0 ? rc : cls_mpi_wait(m, r);
}
