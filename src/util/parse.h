/* Internal: the one parser of clstream's configuration text -- CLS_DEVICE,
 * CLS_SCHEDULER, CLS_FAULT and the context options that take the same
 * strings.  One rule for all of them, so a string is refused or accepted
 * for the same reasons whichever grammar reads it:
 *   - no whitespace (nor control character) anywhere;
 *   - no empty item in a list, no empty key, no empty value;
 *   - a number is an unsigned decimal: digits only (no sign, never empty),
 *     checked against its range before it is used, never wrapped;
 *   - a key is one the grammar knows, given at most once, and only where it
 *     applies.
 * Every refusal is CLS_ECONFIG with the whole text and the offending piece
 * quoted in cls_last_error_detail(). */
#ifndef CLS_PARSE_H
#define CLS_PARSE_H

#include "util/util.h"

/* A piece of the text being parsed (not NUL-terminated). */
struct cls__span {
  const char *p;
  size_t n;
};

static inline struct cls__span cls__span_of(const char *s) {
  return (struct cls__span){s, strlen(s)};
}
static inline bool cls__span_is(struct cls__span s, const char *word) {
  return strlen(word) == s.n && memcmp(s.p, word, s.n) == 0;
}
/* Splits s at its first `c`: *head before it, *tail after it (empty when
 * absent).  Whether `c` was there. */
bool cls__span_split(struct cls__span s, char c, struct cls__span *head, struct cls__span *tail);

/* What is being parsed: `what` names the grammar in the detail
 * ("CLS_FAULT"), `text` is the string (quoted in every refusal, after
 * `before`, what preceded it in the whole string -- "scheduler:" for a
 * driver's parameters -- or NULL). */
struct cls__parser {
  const char *what;
  const char *text;
  const char *before;
};

/* CLS_ECONFIG with the detail "WHAT 'TEXT': " and the printf-style rest. */
int cls__parse_fail(const struct cls__parser *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends s to this thread's detail, quoted, cut short when long. */
void cls__parse_append_quoted(struct cls__span s);

/* The whole text: refused when it holds whitespace or a control
 * character. */
int cls__parse_text(const struct cls__parser *ps);

/* The whole text, one of words[0..n): its index into *out.  Refused
 * (CLS_ECONFIG) with "WHAT 'TEXT': " and `expect` in the detail when it
 * holds whitespace or is none of them. */
int cls__parse_word(const struct cls__parser *ps, const char *const *words, int n, int *out,
                    const char *expect);

/* An unsigned decimal in lo..hi into *out; `name` names it in the detail
 * (the parameter or key it is the value of). */
int cls__parse_uint(const struct cls__parser *ps, const char *name, struct cls__span s,
                    uint64_t lo, uint64_t hi, uint64_t *out);

/* The items of `list`, separated by `sep`: cls__items_next gives 1 and the
 * next item, 0 after the last, or CLS_ECONFIG for an empty item (two
 * separators in a row, or one at an end).  An empty list has one empty
 * item: callers that allow nothing test for it first. */
struct cls__items {
  const struct cls__parser *ps;
  const char *end, *at;
  char sep;
};
void cls__items_init(struct cls__items *it, const struct cls__parser *ps, struct cls__span list,
                     char sep);
int cls__items_next(struct cls__items *it, struct cls__span *item);

/* A grammar's keys: names[0..n), and which were seen (duplicates are
 * refused).  At most 32 keys. */
struct cls__keys {
  const char *const *names;
  size_t n;
  uint32_t seen;
};
/* An item KEY=VALUE: the index of KEY in keys->names, *value.  CLS_ECONFIG
 * (as a negative return) for an item without '=', an empty key or value,
 * an unknown key (the detail lists the known ones), or a key given
 * before. */
int cls__parse_kv(const struct cls__parser *ps, struct cls__span item, struct cls__keys *keys,
                  struct cls__span *value);

#endif /* CLS_PARSE_H */
