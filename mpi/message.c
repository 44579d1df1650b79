/* libclstream-mpi: the message of one send (endpoint.h): the region's
 * bytes, or the failure record that replaces them, behind a header; and
 * what a receive makes of it. */
#include "endpoint.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Whether a message from `src` with `tag` matches receive q. */
static bool matches(const struct cls_mpi_request *q, int src, int tag) {
  return (q->peer == MPI_ANY_SOURCE || q->peer == src) && (q->tag == MPI_ANY_TAG || q->tag == tag);
}

static bool unmatched(const struct cls_mpi_request *q) {
  return q->busy && q->kind == CLS__REQ_RECV && !q->matched;
}

/* Receive q takes the message from `src` with `tag`, of `count` bytes (the
 * probe's); 1 when it did, 0 when the message was gone, or an error:
 * posted into q's staging when it fits what a clstream send of
 * q's size can be, else received into memory of its own, dropped, and q
 * refused naming both sizes (MPI would truncate it, and a truncated
 * receive has been seen to write past its buffer). */
static int take_message(cls_mpi *m, struct cls_mpi_request *q, int src, int tag, int count) {
  size_t takes = CLS__MPI_HEADER + (q->size > CLS_WIRE_RECORD_MAX ? q->size : CLS_WIRE_RECORD_MAX);
  unsigned char *whole = NULL;
  if ((size_t)count > takes && !(whole = malloc((size_t)count))) {
    /* Left for a later receive: nothing was matched. */
    q->matched = true;
    q->result = CLS_ENOMEM;
    snprintf(q->detail, sizeof q->detail, "no host memory for the message of %d bytes from "
             "rank %d, more than a receive of %zu bytes takes", count, src, q->size);
    return 1;
  }
  MPI_Message msg;
  MPI_Status st;
  int flag = 0;
  int mrc = MPI_Improbe(src, tag, m->comm, &flag, &msg, &st);
  if (mrc != MPI_SUCCESS || !flag) { /* !flag: taken by another thread */
    free(whole);
    return mrc != MPI_SUCCESS ? cls__mpi_error(mrc, "MPI_Improbe") : 0;
  }
  q->matched = true;
  if (!whole) {
    if ((mrc = MPI_Imrecv(q->stage, count, MPI_BYTE, &msg, &q->mreq)) != MPI_SUCCESS) {
      q->mreq = MPI_REQUEST_NULL;
      q->result = cls__mpi_error(mrc, "MPI_Imrecv");
      snprintf(q->detail, sizeof q->detail, "%s", cls_last_error_detail());
    }
    return 1;
  }
  mrc = MPI_Mrecv(whole, count, MPI_BYTE, &msg, &st);
  struct cls__mpi_header h;
  memcpy(&h, whole, sizeof h);
  free(whole);
  q->result = CLS_EMPI;
  if (mrc != MPI_SUCCESS) {
    cls__mpi_error(mrc, "MPI_Mrecv");
    snprintf(q->detail, sizeof q->detail, "a message of %d bytes, more than a receive of %zu "
             "bytes takes: %s", count, q->size, cls_last_error_detail());
  } else if ((size_t)count >= CLS__MPI_HEADER && h.magic == CLS__MPI_MAGIC &&
             h.version == CLS__MPI_VERSION) {
    snprintf(q->detail, sizeof q->detail, "the sender (rank %d) sent %llu bytes (a message of "
             "%d bytes), more than the %zu bytes of this receive: the message was dropped",
             src, (unsigned long long)h.size, count, q->size);
  } else {
    snprintf(q->detail, sizeof q->detail, "a message of %d bytes from rank %d, more than a "
             "receive of %zu bytes takes, is no clstream send: it was dropped", count, src,
             q->size);
  }
  return 1;
}

int cls__mpi_progress(cls_mpi *m) {
  for (bool again = true; again;) {
    again = false;
    for (struct cls_mpi_request *r = m->requests; r; r = r->next) {
      if (!unmatched(r))
        continue;
      int flag = 0;
      MPI_Status st;
      int mrc = MPI_Iprobe(r->peer, r->tag, m->comm, &flag, &st);
      if (mrc != MPI_SUCCESS)
        return cls__mpi_error(mrc, "MPI_Iprobe");
      if (!flag)
        continue;
      /* The oldest receive it matches takes it (r, or one posted before);
       * what a receive from MPI_PROC_NULL finds is its own. */
      struct cls_mpi_request *q = r;
      for (struct cls_mpi_request *o = m->requests; o && st.MPI_SOURCE != MPI_PROC_NULL;
           o = o->next)
        if (unmatched(o) && o->order < q->order && matches(o, st.MPI_SOURCE, st.MPI_TAG))
          q = o;
      int count = 0;
      if ((mrc = MPI_Get_count(&st, MPI_BYTE, &count)) != MPI_SUCCESS || count == MPI_UNDEFINED)
        return cls__mpi_error(mrc != MPI_SUCCESS ? mrc : MPI_ERR_COUNT, "MPI_Get_count");
      int rc = take_message(m, q, st.MPI_SOURCE, st.MPI_TAG, count);
      if (rc < 0)
        return rc;
      if (rc > 0) {
        again = true; /* the list may hold a receive for the next message */
        break;
      }
    }
  }
  return CLS_OK;
}

int cls__mpi_finish_recv(cls_mpi *m, struct cls_mpi_request *r, const MPI_Status *st) {
  if (r->result < 0) /* refused when it was matched */
    return fail_recv(m, r, r->detail);
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
