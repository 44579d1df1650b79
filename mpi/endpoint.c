/* libclstream-mpi: an endpoint, a context bound to a private duplicate of
 * a communicator, with its requests and their pinned staging memory
 * (endpoint.h).  Requests are reused: after the first few, a transfer
 * allocates nothing. */
#include "endpoint.h"

#include <stdio.h>
#include <stdlib.h>

int cls__mpi_error(int mpi_rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(mpi_rc, text, &len) != MPI_SUCCESS)
    snprintf(text, sizeof text, "MPI error %d", mpi_rc);
  return cls_wire_error(CLS_EMPI, "%s: %s", what, text);
}

CLS_API int cls_mpi_create(cls_context *ctx, MPI_Comm comm, cls_mpi **out) {
  if (out)
    *out = NULL;
  if (!ctx || !out)
    return cls_wire_error(CLS_EINVAL, "cls_mpi_create: NULL %s", ctx ? "out" : "context");
  int inited = 0, rc;
  MPI_Initialized(&inited);
  if (!inited)
    return cls_wire_error(CLS_EMPI, "cls_mpi_create: MPI is not initialised (MPI_Init first)");
  cls_mpi *m = calloc(1, sizeof *m);
  if (!m)
    return cls_wire_error(CLS_ENOMEM, "out of host memory");
  m->ctx = ctx;
  m->comm = MPI_COMM_NULL;
  if ((rc = MPI_Comm_dup(comm, &m->comm)) != MPI_SUCCESS) {
    rc = cls__mpi_error(rc, "cls_mpi_create: MPI_Comm_dup");
    goto fail;
  }
  if ((rc = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
      (rc = MPI_Comm_rank(m->comm, &m->rank)) != MPI_SUCCESS ||
      (rc = MPI_Comm_size(m->comm, &m->size)) != MPI_SUCCESS) {
    rc = cls__mpi_error(rc, "cls_mpi_create");
    goto fail;
  }
  if ((rc = cls_wire_set_rank(ctx, m->rank)) < 0)
    goto fail;
  *out = m;
  return CLS_OK;
fail: /* in reverse order */
  if (m->comm != MPI_COMM_NULL)
    MPI_Comm_free(&m->comm);
  free(m);
  return rc;
}

CLS_API void cls_mpi_destroy(cls_mpi *m) {
  if (!m)
    return;
  struct cls_mpi_request *r = m->requests;
  while (r) {
    struct cls_mpi_request *next = r->next;
    if (r->busy && r->mreq != MPI_REQUEST_NULL) {
      MPI_Cancel(&r->mreq);
      MPI_Wait(&r->mreq, MPI_STATUS_IGNORE);
    }
    cls_wire_host_free(r->host);
    free(r);
    r = next;
  }
  MPI_Comm_free(&m->comm);
  free(m);
}

CLS_API int cls_mpi_rank(const cls_mpi *m) { return m ? m->rank : -1; }
CLS_API int cls_mpi_size(const cls_mpi *m) { return m ? m->size : 0; }

struct cls_mpi_request *cls__mpi_request_get(cls_mpi *m, size_t payload) {
  size_t need = CLS__MPI_HEADER + (payload > CLS_WIRE_RECORD_MAX ? payload : CLS_WIRE_RECORD_MAX);
  /* A free request whose staging is big enough, else any free one (its
   * staging grows), else a new one. */
  struct cls_mpi_request *best = NULL;
  for (struct cls_mpi_request *r = m->requests; r; r = r->next)
    if (!r->busy && (!best || (best->cap < need && r->cap >= need)))
      best = r;
  if (!best) {
    if (!(best = calloc(1, sizeof *best))) {
      cls_wire_error(CLS_ENOMEM, "out of host memory");
      return NULL;
    }
    best->next = m->requests;
    m->requests = best;
  }
  if (best->cap < need) {
    cls_wire_host *h;
    void *p;
    if (cls_wire_host_alloc(m->ctx, need, &h, &p) < 0)
      return NULL; /* the request stays free, with its old staging */
    cls_wire_host_free(best->host);
    best->host = h;
    best->stage = p;
    best->cap = need;
  }
  best->busy = true;
  best->mreq = MPI_REQUEST_NULL;
  return best;
}
