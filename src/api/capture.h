/* Internal: what the rest of the library asks of captures (capture.c). */
#ifndef CLS_CAPTURE_H
#define CLS_CAPTURE_H

#include "util/util.h"

/* Context destroy, its work waited for: the captures still holding
 * command buffers release them and forget the context. */
void cls__capture_detach_all(cls_context *ctx);

/* Fault injection (fault.c, as cls__fault_data.members: the factory
 * layer calls no module above it): when fc is one command buffer of a replay,
 * *n and, per command inside it, *kinds (CLS__CMD_*), *names (kernel
 * names; NULL for transfers) and *streams (NULL: fc's own stream); *n 0
 * for a stream's record of a run over several streams.  False for any
 * other foreign command. */
struct cls_foreign_cmd;
bool cls__capture_run_members(const struct cls_foreign_cmd *fc, size_t *n,
                              const unsigned char **kinds, const char *const **names,
                              const int **streams);

#endif /* CLS_CAPTURE_H */
