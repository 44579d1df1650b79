/* Internal: the failure record on the wire (wire.c, <clstream/wire.h>):
 * plain data, one byte order, one build.  Here so that tests/test-wire.c
 * can forge records field by field. */
#ifndef CLS_WIRE_RECORD_H
#define CLS_WIRE_RECORD_H

#include "base/record.h"

#include <clstream/wire.h>
#include <stddef.h>
#include <stdint.h>

#define CLS__WIRE_MAGIC 0x434c5352u /* "CLSR" */
#define CLS__WIRE_VERSION 4 /* 2: the generation; 3: a message of CLS__MESSAGE_MAX bytes;
                               4: skip kind CLS_SKIP_REPLAY */

struct cls__wire_skip {
  int32_t kind, stream, origin; /* origin: rank + 1 it ran on, 0: unknown */
  int32_t pad;
  uint64_t position, count;
  char kernel[CLS__NAME_MAX];
};

struct cls__wire_record {
  uint32_t magic;
  uint16_t version;
  uint16_t nskips;
  int32_t status, cl_status, stream, origin; /* origin: rank + 1; 0: the
                                                sender knew no rank */
  uint32_t async, pad;
  uint64_t position, skipped, dropped;
  uint64_t generation; /* of the root's stream: with origin, stream and
                          position, the failure's identity */
  char operation[16];
  char kernel[CLS__NAME_MAX];
  char message[sizeof ((struct cls__failure *)0)->message];
  struct cls__wire_skip skips[CLS__MAX_SKIP_ENTRIES];
};
_Static_assert(sizeof(struct cls__wire_record) <= CLS_WIRE_RECORD_MAX,
               "a record fits CLS_WIRE_RECORD_MAX");

/* The size of a record with `nskips` chain entries. */
#define CLS__WIRE_RECORD_SIZE(nskips)                                                       \
  (offsetof(struct cls__wire_record, skips) + (nskips) * sizeof(struct cls__wire_skip))

#endif /* CLS_WIRE_RECORD_H */
