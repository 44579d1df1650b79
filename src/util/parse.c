/* The configuration parser (parse.h): one set of rules for every grammar,
 * and one wording for every refusal. */
#include "util/parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Longer text is cut in the detail: a 100 KB variable must not fill it. */
#define QUOTE_MAX 96

bool cls__span_split(struct cls__span s, char c, struct cls__span *head, struct cls__span *tail) {
  const char *at = memchr(s.p, c, s.n);
  if (!at) {
    *head = s;
    *tail = (struct cls__span){s.p + s.n, 0};
    return false;
  }
  *head = (struct cls__span){s.p, (size_t)(at - s.p)};
  *tail = (struct cls__span){at + 1, s.n - head->n - 1};
  return true;
}

void cls__parse_append_quoted(struct cls__span s) {
  if (s.n <= QUOTE_MAX)
    cls__error_append("'%.*s'", (int)s.n, s.p);
  else
    cls__error_append("'%.*s...' (%zu characters)", QUOTE_MAX, s.p, s.n);
}

/* Offsets in the detail count from the start of the whole string. */
static size_t offset(const struct cls__parser *ps, const char *at) {
  return (ps->before ? strlen(ps->before) : 0) + (size_t)(at - ps->text);
}

/* The start of every refusal's detail: "WHAT 'WHOLE TEXT': ". */
static void start(const struct cls__parser *ps) {
  const char *before = ps->before ? ps->before : "";
  size_t nb = strlen(before), n = nb + strlen(ps->text);
  cls__error(CLS_ECONFIG, 0, "%s ", ps->what);
  if (n <= QUOTE_MAX)
    cls__error_append("'%s%s': ", before, ps->text);
  else if (nb >= QUOTE_MAX)
    cls__error_append("'%.*s...' (%zu characters): ", QUOTE_MAX, before, n);
  else
    cls__error_append("'%s%.*s...' (%zu characters): ", before, (int)(QUOTE_MAX - nb), ps->text,
                      n);
}

int cls__parse_fail(const struct cls__parser *ps, const char *fmt, ...) {
  start(ps);
  char rest[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rest, sizeof rest, fmt, ap);
  va_end(ap);
  cls__error_append("%s", rest);
  return CLS_ECONFIG;
}

int cls__parse_text(const struct cls__parser *ps) {
  for (const char *c = ps->text; *c; c++)
    if (isspace((unsigned char)*c) || iscntrl((unsigned char)*c))
      return cls__parse_fail(ps, "%s at offset %zu (no whitespace is allowed anywhere)",
                             isspace((unsigned char)*c) ? "whitespace" : "a control character",
                             offset(ps, c));
  return CLS_OK;
}

int cls__parse_word(const struct cls__parser *ps, const char *const *words, int n, int *out,
                    const char *expect) {
  int rc = cls__parse_text(ps);
  if (rc < 0)
    return rc;
  for (int i = 0; i < n; i++)
    if (strcmp(ps->text, words[i]) == 0) {
      *out = i;
      return CLS_OK;
    }
  return cls__parse_fail(ps, "%s", expect);
}

int cls__parse_uint(const struct cls__parser *ps, const char *name, struct cls__span s,
                    uint64_t lo, uint64_t hi, uint64_t *out) {
  bool digits = s.n > 0;
  for (size_t i = 0; i < s.n; i++)
    digits &= s.p[i] >= '0' && s.p[i] <= '9';
  if (!digits) {
    start(ps);
    cls__error_append("%s ", name);
    cls__parse_append_quoted(s);
    cls__error_append(" is not a number (digits only: no sign, no space)");
    return CLS_ECONFIG;
  }
  /* Checked before each step, so no value wraps into the range. */
  uint64_t v = 0;
  bool over = false;
  for (size_t i = 0; i < s.n && !over; i++) {
    unsigned d = (unsigned)(s.p[i] - '0');
    over = v > (UINT64_MAX - d) / 10;
    v = v * 10 + d;
  }
  if (over || v < lo || v > hi) {
    start(ps);
    cls__error_append("%s ", name);
    cls__parse_append_quoted(s);
    cls__error_append(" is out of range (%llu..%llu)", (unsigned long long)lo,
                      (unsigned long long)hi);
    return CLS_ECONFIG;
  }
  *out = v;
  return CLS_OK;
}

void cls__items_init(struct cls__items *it, const struct cls__parser *ps, struct cls__span list,
                     char sep) {
  it->ps = ps;
  it->at = list.p;
  it->end = list.p + list.n;
  it->sep = sep;
}

int cls__items_next(struct cls__items *it, struct cls__span *item) {
  if (!it->at)
    return 0;
  const char *sep = memchr(it->at, it->sep, (size_t)(it->end - it->at));
  const char *stop = sep ? sep : it->end;
  *item = (struct cls__span){it->at, (size_t)(stop - it->at)};
  if (item->n == 0)
    return cls__parse_fail(it->ps, "empty item at offset %zu (a '%c' at an end, or two in a row)",
                           offset(it->ps, it->at), it->sep);
  it->at = sep ? sep + 1 : NULL;
  return 1;
}

int cls__parse_kv(const struct cls__parser *ps, struct cls__span item, struct cls__keys *keys,
                  struct cls__span *value) {
  struct cls__span key;
  bool eq = cls__span_split(item, '=', &key, value);
  if (!eq || key.n == 0 || value->n == 0) {
    start(ps);
    cls__parse_append_quoted(item);
    cls__error_append(!eq ? " is not KEY=VALUE" : key.n == 0 ? " has no key" : " has no value");
    return CLS_ECONFIG;
  }
  for (size_t i = 0; i < keys->n; i++) {
    if (!cls__span_is(key, keys->names[i]))
      continue;
    if (keys->seen & (UINT32_C(1) << i))
      return cls__parse_fail(ps, "%s given twice", keys->names[i]);
    keys->seen |= UINT32_C(1) << i;
    return (int)i;
  }
  start(ps);
  cls__error_append("unknown key ");
  cls__parse_append_quoted(key);
  cls__error_append(" (");
  for (size_t i = 0; i < keys->n; i++)
    cls__error_append("%s%s", i ? ", " : "", keys->names[i]);
  cls__error_append(")");
  return CLS_ECONFIG;
}
