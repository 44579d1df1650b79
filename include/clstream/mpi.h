/** \file clstream/mpi.h
 * \brief Buffers, and their failure records, across MPI ranks
 * (libclstream-mpi; docs/scale-out.md).
 *
 * clstream invents no transport: a program that outgrows one machine runs
 * under MPI, and these calls send and receive a buffer region to or from
 * a rank, on a stream, with a tag.  A send is a read of the buffer (ordered
 * after its producer, as cls_download()); a receive is a write (later
 * launches order after it, as after cls_upload()).  The bytes travel
 * through pinned host staging memory (no GPU-aware MPI is assumed).
 *
 * The failure record travels with the buffer: the send of a tainted region
 * sends its failure instead of its bytes (the root cause with the rank it
 * happened on, and the skip chain, bounded as locally), and the receiving
 * buffer takes that failure, so a launch there that reads it is skipped
 * (F2) and a read reports the root as "on rank 0: CLS_ELAUNCH in launch
 * of 'blur' on stream 0 at position 2".  A failure found after the send was
 * called (F8: the producer fails when it completes) is what the message
 * carries.  An MPI error is a failure like any other (#CLS_EMPI, with the
 * MPI error string): the buffer a receive was to write carries it.
 *
 * Link with -lclstream-mpi -lclstream and MPI (pkg-config clstream-mpi).
 *
 * \par Threading
 * One #cls_mpi is used by one thread at a time (as an MPI communicator
 * usually is); its context's calls take the context's lock as usual.
 */
#ifndef CLSTREAM_MPI_H
#define CLSTREAM_MPI_H

#include <clstream.h>
#include <clstream/wire.h>
/* C++ programs get MPI's C interface only: the deprecated C++ bindings
 * that Open MPI and MPICH pull in otherwise do not compile under
 * -pedantic -Werror.  (Not API: hidden from Doxygen.) */
/** \cond CLS_MPI_CXX */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
/** \endcond */
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/** clstream over one MPI communicator for one context: the communicator
 * (a private duplicate, so clstream's messages never match the program's
 * own), this process's rank, and reusable staging memory and requests.
 * Opaque; made by cls_mpi_create(), freed by cls_mpi_destroy(). */
typedef struct cls_mpi cls_mpi;

/** A non-blocking send or receive, from cls_mpi_isend() or
 * cls_mpi_irecv() until cls_mpi_wait() ends it.  Opaque; owned by its
 * #cls_mpi (recycled by the wait, never freed by the caller). */
typedef struct cls_mpi_request cls_mpi_request;

/** Binds context `ctx` to communicator `comm`: duplicates it (collective
 * over comm, like MPI_Comm_dup), with MPI_ERRORS_RETURN on the duplicate,
 * and names this process's rank in comm as the context's rank
 * (cls_wire_set_rank(): failures minted here say "on rank R" when they
 * travel, and CLS_FAULT's rank=R fires here).  MPI must be initialised.
 * On failure nothing is left behind and *out is NULL.
 * \return #CLS_OK; #CLS_EINVAL for a NULL argument; #CLS_EMPI when MPI
 * fails (or is not initialised); #CLS_ENOMEM. */
CLS_API int cls_mpi_create(cls_context *ctx, MPI_Comm comm, cls_mpi **out);
/** Frees the duplicate communicator, the staging memory and the requests.
 * Requests not waited for are cancelled.  Call it before
 * cls_context_destroy() of its context and before MPI_Finalize().  NULL
 * is accepted. */
CLS_API void cls_mpi_destroy(cls_mpi *m);
/** This process's rank in the communicator (-1 for NULL). */
CLS_API int cls_mpi_rank(const cls_mpi *m);
/** The number of ranks of the communicator (0 for NULL). */
CLS_API int cls_mpi_size(const cls_mpi *m);

/** Sends `size` bytes of `src` at `offset` to rank `dest` with `tag`,
 * read on `stream` (after the buffer's producer, on any stream).  Returns
 * when the message may be reused (MPI_Send's completion).  When the
 * region cannot be sent good (it carries a failure, now or found when the
 * read completes, or the read is refused) the failure's record is sent
 * instead, and the receiver's buffer takes it.
 * \return #CLS_OK (the bytes were sent); #CLS_ETAINTED (the buffer carries
 * a failure: its record was sent; the detail names the root);
 * #CLS_ESTALE, #CLS_EFOREIGN, #CLS_ENULL, #CLS_ERANGE, #CLS_ESTREAM,
 * #CLS_EINVAL (size 0) for a send refused as cls_download() refuses it:
 * a record saying so was sent; #CLS_EINVAL for a NULL m (nothing sent);
 * #CLS_EMPI when MPI fails (the detail has its error string);
 * #CLS_ECL, #CLS_ENOMEM. */
CLS_API int cls_mpi_send(cls_mpi *m, int stream, cls_buffer src, size_t offset, size_t size,
                         int dest, int tag);
/** Receives `size` bytes from rank `source` (or MPI_ANY_SOURCE) with `tag`
 * (or MPI_ANY_TAG) into `dst` at `offset`, written on `stream`: later
 * launches that read dst, on any stream, are ordered after it.  When the
 * message is a failure record, dst takes that failure (the whole buffer,
 * as any failure), and when the receive fails (an MPI error, or a message
 * that is not a send of `size` bytes) dst takes a #CLS_EMPI failure.
 * \return #CLS_OK (the bytes are in dst); #CLS_ETAINTED (dst took the
 * sender's failure; the detail names the root and its rank); #CLS_EMPI
 * as above; #CLS_ESTALE, #CLS_EFOREIGN or #CLS_ENULL for a bad dst;
 * #CLS_ERANGE, #CLS_ESTREAM, #CLS_EINVAL (NULL m, size 0): refused, and
 * dst (when valid) carries the refusal; #CLS_ECL, #CLS_ENOMEM. */
CLS_API int cls_mpi_recv(cls_mpi *m, int stream, cls_buffer dst, size_t offset, size_t size,
                         int source, int tag);
/** cls_mpi_send() that returns once the message is posted: the region is
 * read at the call (the read waits for its producer; the record, if any,
 * is decided then), and the transfer proceeds while the program goes on.
 * cls_mpi_wait() ends it and returns what cls_mpi_send() would have.
 * \return #CLS_OK with *req when a message (bytes or record) was posted;
 * #CLS_EINVAL for a NULL m or req; #CLS_EMPI when posting failed (*req is
 * NULL then); #CLS_ENOMEM. */
CLS_API int cls_mpi_isend(cls_mpi *m, int stream, cls_buffer src, size_t offset, size_t size,
                          int dest, int tag, cls_mpi_request **req);
/** cls_mpi_recv() that returns once the receive is posted; dst is written
 * (or takes the sender's failure) by cls_mpi_wait(), and, as with MPI, it
 * must not be used before then.  The receive learns its message's size
 * before receiving it: it is matched to its message here if that has
 * arrived, else by the endpoint's next cls_mpi_irecv() or cls_mpi_wait()
 * (on any request), oldest receive first, as MPI matches posted receives;
 * a message larger than a send of `size` bytes can be is dropped and the
 * receive fails with #CLS_EMPI naming both sizes (docs/scale-out.md).
 * \return #CLS_OK with *req; #CLS_EINVAL for a NULL m or req; the
 * refusals of cls_mpi_recv() (dst carries them; *req is NULL); #CLS_EMPI
 * when posting failed (dst carries it); #CLS_ENOMEM. */
CLS_API int cls_mpi_irecv(cls_mpi *m, int stream, cls_buffer dst, size_t offset, size_t size,
                          int source, int tag, cls_mpi_request **req);
/** Waits for a request of cls_mpi_isend() or cls_mpi_irecv() and ends it
 * (the request is recycled; it must not be used again).
 * \return what cls_mpi_send() or cls_mpi_recv() returns for it;
 * #CLS_EINVAL for a NULL argument. */
CLS_API int cls_mpi_wait(cls_mpi *m, cls_mpi_request *req);
/** cls_mpi_wait() on each of the `n` requests, in order (NULL entries are
 * skipped and every request is ended whatever the others return).
 * \return #CLS_OK when every one did; else the first code that was not
 * #CLS_OK. */
CLS_API int cls_mpi_waitall(cls_mpi *m, size_t n, cls_mpi_request **reqs);

#ifdef __cplusplus
}
#endif
#endif /* CLSTREAM_MPI_H */
