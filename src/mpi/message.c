/* libclstream-mpi: the message of one send (endpoint.h): the region's
 * bytes, or the failure record that replaces them, behind a header; and
 * what a receive makes of it. */
#include "mpi/endpoint.h"

#include <stdio.h>
#include <string.h>

int cls__mpi_post_send(cls_mpi *m, struct cls_mpi_request *r) {
  unsigned char *payload = r->stage + CLS__MPI_HEADER;
  size_t reclen = 0;
  /* The read waits for the buffer's producer and polls every stream:
   * what it returns is final (F8 included). */
  int rc = cls_wire_read(m->ctx, r->stream, r->buf, r->offset, payload, r->size, payload,
                         &reclen);
  if (rc < 0 && reclen == 0)
    return rc; /* nothing to tell the receiver (not even a record) */
  struct cls__mpi_header h = {.magic = CLS__MPI_MAGIC,
                              .version = CLS__MPI_VERSION,
                              .kind = reclen ? CLS__MPI_RECORD : CLS__MPI_BYTES,
                              .size = r->size,
                              .len = reclen ? reclen : r->size,
                              .code = rc};
  memcpy(r->stage, &h, sizeof h);
  r->result = rc;
  snprintf(r->detail, sizeof r->detail, "%s", rc < 0 ? cls_last_error_detail() : "");
  /* The detail of the read (the root a tainted send names) stays the
   * thread's: MPI_Isend does not touch it. */
  int mrc = MPI_Isend(r->stage, (int)(CLS__MPI_HEADER + h.len), MPI_BYTE, r->peer, r->tag,
                      m->comm, &r->mreq);
  if (mrc != MPI_SUCCESS) {
    r->mreq = MPI_REQUEST_NULL;
    char what[96];
    snprintf(what, sizeof what, "send to rank %d with tag %d: MPI_Isend", r->peer, r->tag);
    return cls__mpi_error(mrc, what);
  }
  return CLS_OK;
}

/* dst takes a CLS_EMPI failure saying why the receive failed. */
static int fail_recv(cls_mpi *m, struct cls_mpi_request *r, const char *why) {
  char text[256];
  snprintf(text, sizeof text, "receive of %zu bytes from rank %d with tag %d on rank %d: %s",
           r->size, r->peer, r->tag, m->rank, why);
  return cls_wire_fail(m->ctx, r->stream, r->buf, CLS_EMPI, "receive", text);
}

int cls__mpi_finish_recv(cls_mpi *m, struct cls_mpi_request *r, const MPI_Status *st) {
  int count = 0;
  MPI_Get_count(st, MPI_BYTE, &count);
  struct cls__mpi_header h;
  char why[160];
  if (count < CLS__MPI_HEADER) {
    snprintf(why, sizeof why, "a message of %d bytes is no clstream send", count);
    return fail_recv(m, r, why);
  }
  memcpy(&h, r->stage, sizeof h);
  if (h.magic != CLS__MPI_MAGIC || h.version != CLS__MPI_VERSION ||
      (size_t)count != CLS__MPI_HEADER + h.len) {
    snprintf(why, sizeof why, "a message of %d bytes is no clstream send of version %d", count,
             CLS__MPI_VERSION);
    return fail_recv(m, r, why);
  }
  if (h.size != r->size) {
    snprintf(why, sizeof why, "the sender (rank %d) sent %llu bytes", st->MPI_SOURCE,
             (unsigned long long)h.size);
    return fail_recv(m, r, why);
  }
  const unsigned char *payload = r->stage + CLS__MPI_HEADER;
  if (h.kind == CLS__MPI_RECORD)
    return cls_wire_taint(m->ctx, r->stream, r->buf, payload, (size_t)h.len);
  if (h.kind != CLS__MPI_BYTES || h.len != h.size) {
    snprintf(why, sizeof why, "a malformed message (kind %u, %llu bytes)", h.kind,
             (unsigned long long)h.len);
    return fail_recv(m, r, why);
  }
  return cls_upload(m->ctx, r->stream, r->buf, r->offset, payload, r->size);
}
