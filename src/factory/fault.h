/* Internal: deterministic fault injection (fault.c; its grammar in
 * fault-spec.c).  A stream factory that wraps another and fails chosen
 * commands at enqueue or at completion, the "alloc" faults cls_alloc
 * consults, and the grammar of CLS_FAULT.  Sees only the public factory
 * contract and util.h. */
#ifndef CLS_FAULT_H
#define CLS_FAULT_H

#include "util/util.h"

struct cls__fault_config;
struct cls_transfer;
struct cls_foreign_cmd;

/* Parses a CLS_FAULT spec into *out (owned by the caller); CLS_ECONFIG
 * with the offending text in the detail. */
int cls__fault_parse(const char *spec, struct cls__fault_config **out);
void cls__fault_config_free(struct cls__fault_config *cfg);
/* This process's MPI rank, for rank=R faults (cls_wire_set_rank); NULL
 * cfg: nothing to do. */
void cls__fault_set_rank(struct cls__fault_config *cfg, int rank);

/* The fault factory's data: the factory it wraps and the faults.  Owned
 * by the context, valid for the lifetime of every stream created with it. */
struct cls__fault_data {
  const struct cls_stream_factory *inner;
  void *inner_data;
  struct cls__fault_config *cfg;
  /* Set by the layer that makes foreign commands standing for several
   * (a replay's command buffer, src/api/capture.c), so that faults count
   * the commands inside one: true with *n and, per command, *kinds
   * (CLS__CMD_*), *names (kernel names, NULL for transfers) and
   * *streams (the logical stream each runs on; NULL: fc's own) when fc
   * is such a command (n 0: it stands for none, a stream's record of a
   * run over several streams).  NULL: every foreign command is one. */
  bool (*members)(const struct cls_foreign_cmd *fc, size_t *n, const unsigned char **kinds,
                  const char *const **names, const int **streams);
};
extern const struct cls_stream_factory cls__fault_factory;

/* Whether cfg has a "lost" fault (at enqueue or at completion): it acts
 * on a backend queue as a whole, so whatever enqueues on a queue without
 * its stream's fault layer (a capture's run over several streams) must
 * not be used. */
bool cls__fault_loses(const struct cls__fault_config *cfg);
/* Whether cfg loses a queue after the enqueue (lost:...,at=complete): its
 * gate is a user event that fails later, as a foreign command's may. */
bool cls__fault_gates(const struct cls__fault_config *cfg);

/* Before the host waits for events outside the stream factory (a
 * command's waits dropped, cls__order_unsent): where one of them belongs
 * to a context with a closed gate of a loss after the enqueue, that
 * context's gates open first, as before any wait -- else a command
 * behind a gate would never finish.  Costs one atomic load where no gate
 * is closed in the process. */
void cls__fault_before_host_wait(cl_uint nwait, const cl_event *wait);
/* Lets go of what cfg holds behind gates, and takes it off the list of
 * configurations with a closed gate; before cls__fault_config_free
 * (nothing is held once every stream has ended; NULL: nothing). */
void cls__fault_forget_behind(struct cls__fault_config *cfg);

/* A command enqueued on a fault stream for logical stream `logical`: a
 * driver whose backend streams are shared by several logical streams
 * passes the one the command belongs to, so "stream=N" faults name
 * logical streams on every driver (cls__enqueue calls it). */
cl_int cls__fault_enqueue(void *stream, int logical, int kind, const struct cls_kernel_cmd *k,
                          const struct cls_transfer *x, uint64_t seq, cl_uint nwait,
                          const cl_event *wait);

/* The same for a foreign command (its logical stream is fc->stream). */
cl_int cls__fault_foreign(void *stream, const struct cls_foreign_cmd *fc, uint64_t seq,
                          cl_uint nwait, const cl_event *wait);

/* Consulted by cls_alloc: a non-zero OpenCL status when an "alloc" fault
 * fires for this allocation. */
cl_int cls__fault_alloc(struct cls__fault_config *cfg, int stream);

#endif /* CLS_FAULT_H */
