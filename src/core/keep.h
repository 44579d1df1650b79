/* Internal: recovery's replay at completion (docs/devices.md,
 * "Recovery").  What failure/kept.h keeps and a poll marks lost runs
 * again here, through the command path, once the lost streams moved. */
#ifndef CLS_KEEP_H
#define CLS_KEEP_H

#include "failure/kept.h"

/* The marked commands run again, in their submission order, through the
 * command path (F2 first, then ordering on their stream's fresh queue).
 * Called where no driver call is in progress, after the lost streams
 * moved (cls__relocate_lost). */
void cls__keep_replay(cls_context *ctx);

#endif /* CLS_KEEP_H */
