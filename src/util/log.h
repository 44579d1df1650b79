/* Internal: logging, one line per event, to stderr or the user's callback. */
#ifndef CLS_LOG_H
#define CLS_LOG_H

#include "util/util.h"

/* A log line: a failure's message (CLS__MESSAGE_MAX, base/record.h)
 * with the words around it. */
#define CLS__LOG_LINE_MAX 2048

struct cls__logger {
  int level;
  cls_log_fn fn; /* NULL: stderr */
  void *user;
};
void cls__logger_init(struct cls__logger *lg);
/* Writes one line when `level` is enabled.  A macro so that a line not
 * logged costs one compare, not a variadic call (the ordering code logs
 * every cross-stream wait). */
#define cls__log(lg, lvl, ...)                                   \
  do {                                                           \
    const struct cls__logger *lg_ = (lg);                        \
    int lvl_ = (lvl);                                            \
    if (lvl_ <= lg_->level && lvl_ > CLS_LOG_OFF)                \
      cls__log_line(lg_, lvl_, __VA_ARGS__);                     \
  } while (0)
void cls__log_line(const struct cls__logger *lg, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int cls__log_level_parse(const char *s, int *level);

#endif /* CLS_LOG_H */
