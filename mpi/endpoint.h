/* Internal to libclstream-mpi: an endpoint (struct cls_mpi: a context
 * bound to a duplicated communicator), its requests, and the message a
 * send makes.  libclstream-mpi sees the core only through the public API
 * and <clstream/wire.h>.
 *
 * One message per send, on the endpoint's own communicator, with the
 * user's tag: a header, then either the region's bytes or the failure
 * record that replaces them.  The message is posted once the read that
 * fills it has completed and every stream was polled, so what it says is
 * final (a failure found after the send was called travels in it). */
#ifndef CLS_MPI_ENDPOINT_H
#define CLS_MPI_ENDPOINT_H

#include <clstream/mpi.h>
#include <clstream/wire.h>

#include <stdbool.h>
#include <stdint.h>

/* The message header; the payload starts CLS__MPI_HEADER bytes in (cache
 * line aligned in the staging memory). */
#define CLS__MPI_HEADER 64
#define CLS__MPI_MAGIC 0x434c534du /* "CLSM" */
#define CLS__MPI_VERSION 1
enum { CLS__MPI_BYTES = 1, CLS__MPI_RECORD = 2 };
struct cls__mpi_header {
  uint32_t magic;
  uint16_t version;
  uint16_t kind;     /* CLS__MPI_BYTES or CLS__MPI_RECORD */
  uint64_t size;     /* the region the sender sent */
  uint64_t len;      /* payload bytes after the header */
  int32_t code;      /* the sender's status for the region (0 for bytes) */
  int32_t pad;
};
_Static_assert(sizeof(struct cls__mpi_header) <= CLS__MPI_HEADER, "the header fits");

enum { CLS__REQ_SEND = 1, CLS__REQ_RECV = 2 };

struct cls_mpi_request {
  struct cls_mpi_request *next; /* the endpoint's list of every request */
  bool busy;                    /* handed out, not yet waited for */
  int kind;                     /* CLS__REQ_SEND or CLS__REQ_RECV */
  MPI_Request mreq;
  int result;                   /* sends: the status decided at the read */
  char detail[256];             /* sends: its detail, given again by the wait */
  int stream;
  cls_buffer buf;
  size_t offset, size;
  int peer, tag;
  /* Receives: matched to their message (MPI_Improbe) only once its size
   * is known, so a message larger than the staging is never received into
   * it.  `order` ranks the endpoint's receives as posted: a message goes
   * to the oldest one it matches, as with MPI_Irecv. */
  bool matched;
  uint64_t order;
  /* Staging: pinned host memory, kept and reused by later requests. */
  cls_wire_host *host;
  unsigned char *stage;
  size_t cap;
};

struct cls_mpi {
  cls_context *ctx;
  MPI_Comm comm;                /* the duplicate */
  int rank, size;
  struct cls_mpi_request *requests; /* all of them, busy or free */
  uint64_t orders;                  /* receives posted so far */
};

/* A free request with staging for `payload` bytes after the header (grown
 * when the largest so far is smaller); NULL with the error recorded. */
struct cls_mpi_request *cls__mpi_request_get(cls_mpi *m, size_t payload);
/* The request is free again (its staging stays). */
static inline void cls__mpi_request_put(struct cls_mpi_request *r) { r->busy = false; }
/* Records an MPI error: CLS_EMPI, "what: MPI's error string". */
int cls__mpi_error(int mpi_rc, const char *what);

/* Reads the region into the request's staging and posts its message
 * (message.c).  CLS_OK: posted (r->result says what it carries). */
int cls__mpi_post_send(cls_mpi *m, struct cls_mpi_request *r);
/* Matches the endpoint's unmatched receives to the messages that have
 * arrived, oldest receive first (message.c); each matched one is posted
 * with its message's size, or refused when that is more than it takes.
 * Returns CLS_OK or CLS_EMPI (an MPI error). */
int cls__mpi_progress(cls_mpi *m);
/* The request's receive completed with `st`: dst takes the bytes or the
 * record (message.c).  Returns what cls_mpi_recv() returns. */
int cls__mpi_finish_recv(cls_mpi *m, struct cls_mpi_request *r, const MPI_Status *st);

#endif /* CLS_MPI_ENDPOINT_H */
