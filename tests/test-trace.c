/* The timeline trace (CLS_TRACE, docs/trace.md): the file is strict JSON
 * in UTF-8 (a validator below parses it), after a sync without destroy as
 * well as after destroy, and cut after any event it loads once "]" is
 * added (what the viewers do); every string is escaped; it has a named
 * track per stream used, an event per accepted command, an instant per
 * skip (with its root's message), per failure and per refusal, and a
 * flow per cross-stream wait, in the numbers cls_stream_stats gives; tracing is chosen by the context option
 * or the variable, and a file that cannot be created fails the create; a
 * path that is not a regular file is refused without blocking, and a
 * failed create removes only a file the trace created. */
#include "common.h"
#include "gate.h"
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>

/* ------------------------------------------------------------------ */
/* A strict JSON parser (RFC 8259): a tree of values, or NULL            */
/* ------------------------------------------------------------------ */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
  int type;
  double num;
  char *str;         /* J_STR */
  struct jv **items; /* J_ARR, J_OBJ (values) */
  char **keys;       /* J_OBJ */
  size_t n;
};

struct jp {
  const char *p, *end;
  const char *err;
};

static void jv_free(struct jv *v) {
  if (!v)
    return;
  for (size_t i = 0; i < v->n; i++) {
    jv_free(v->items[i]);
    if (v->keys)
      free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  free(v);
}

static void ws(struct jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

static struct jv *jfail(struct jp *j, const char *why) {
  if (!j->err)
    j->err = why;
  return NULL;
}

static int hex4(const char *p) {
  int v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v = v * 16 + (isdigit((unsigned char)c) ? c - '0'
                  : c >= 'a' && c <= 'f'    ? c - 'a' + 10
                  : c >= 'A' && c <= 'F'    ? c - 'A' + 10
                                            : -1000000);
  }
  return v;
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629), 0 when
 * there is none: JSON text is UTF-8 (RFC 8259 section 8.1). */
static size_t utf8_at(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                         : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n <= 1 || (size_t)(end - p) < n)
    return n == 1 ? 1 : 0;
  unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (p[i] < 0x80 || p[i] > 0xbf)
      return 0;
  return n;
}

/* A string at j->p (the opening quote); *out its bytes, \u escapes
 * decoded to UTF-8 (a surrogate pair to one character). */
static bool parse_string(struct jp *j, char **out) {
  const char *p = j->p + 1;
  size_t cap = 16, n = 0;
  char *s = malloc(cap);
  for (;;) {
    if (p >= j->end) {
      jfail(j, "unterminated string");
      break;
    }
    unsigned char c = (unsigned char)*p++;
    if (c == '"') {
      s[n] = '\0';
      *out = s;
      j->p = p;
      return true;
    }
    if (c < 0x20) {
      jfail(j, "control character in a string");
      break;
    }
    unsigned char u8[4];
    size_t u8n = 0;
    if (c >= 0x80) {
      size_t len = utf8_at((const unsigned char *)p - 1, (const unsigned char *)j->end);
      if (!len) {
        jfail(j, "a string that is not UTF-8");
        break;
      }
      memcpy(u8, p - 1, len);
      u8n = len;
      p += len - 1;
    }
    if (c == '\\') {
      if (p >= j->end) {
        jfail(j, "unterminated escape");
        break;
      }
      char e = *p++;
      if (e == 'u') {
        if (j->end - p < 4 || hex4(p) < 0) {
          jfail(j, "bad \\u escape");
          break;
        }
        unsigned cp = (unsigned)hex4(p);
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff && j->end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
            hex4(p + 2) >= 0xdc00 && hex4(p + 2) <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + ((unsigned)hex4(p + 2) - 0xdc00);
          p += 6;
        }
        if (cp < 0x80) {
          u8[0] = (unsigned char)cp, u8n = 1;
        } else if (cp < 0x800) {
          u8[0] = (unsigned char)(0xc0 | cp >> 6), u8[1] = (unsigned char)(0x80 | (cp & 63));
          u8n = 2;
        } else if (cp < 0x10000) {
          u8[0] = (unsigned char)(0xe0 | cp >> 12);
          u8[1] = (unsigned char)(0x80 | (cp >> 6 & 63));
          u8[2] = (unsigned char)(0x80 | (cp & 63));
          u8n = 3;
        } else {
          u8[0] = (unsigned char)(0xf0 | cp >> 18);
          u8[1] = (unsigned char)(0x80 | (cp >> 12 & 63));
          u8[2] = (unsigned char)(0x80 | (cp >> 6 & 63));
          u8[3] = (unsigned char)(0x80 | (cp & 63));
          u8n = 4;
        }
      } else if (strchr("\"\\/bfnrt", e)) {
        c = (unsigned char)(e == 'n'   ? '\n'
                            : e == 't' ? '\t'
                            : e == 'r' ? '\r'
                            : e == 'b' ? '\b'
                            : e == 'f' ? '\f'
                                       : e);
      } else {
        jfail(j, "bad escape");
        break;
      }
    }
    if (!u8n)
      u8[0] = c, u8n = 1;
    while (n + u8n + 1 > cap)
      s = realloc(s, cap *= 2);
    memcpy(s + n, u8, u8n);
    n += u8n;
  }
  free(s);
  return false;
}

static bool parse_number(struct jp *j, double *out) {
  const char *p = j->p, *start = p;
  if (p < j->end && *p == '-')
    p++;
  if (p >= j->end || !isdigit((unsigned char)*p))
    return false;
  if (*p == '0')
    p++;
  else
    while (p < j->end && isdigit((unsigned char)*p))
      p++;
  if (p < j->end && *p == '.') {
    if (++p >= j->end || !isdigit((unsigned char)*p))
      return false;
    while (p < j->end && isdigit((unsigned char)*p))
      p++;
  }
  if (p < j->end && (*p == 'e' || *p == 'E')) {
    if (++p < j->end && (*p == '+' || *p == '-'))
      p++;
    if (p >= j->end || !isdigit((unsigned char)*p))
      return false;
    while (p < j->end && isdigit((unsigned char)*p))
      p++;
  }
  char buf[64];
  size_t len = (size_t)(p - start);
  if (len >= sizeof buf)
    return false;
  memcpy(buf, start, len);
  buf[len] = '\0';
  *out = strtod(buf, NULL);
  j->p = p;
  return true;
}

static struct jv *parse_value(struct jp *j, int depth);

/* An array or object at j->p ('[' or '{'). */
static struct jv *parse_container(struct jp *j, struct jv *v, int depth) {
  bool obj = *j->p == '{';
  char close = obj ? '}' : ']';
  v->type = obj ? J_OBJ : J_ARR;
  j->p++;
  ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return v;
  }
  size_t cap = 0;
  for (;;) {
    char *key = NULL;
    if (obj) {
      ws(j);
      if (j->p >= j->end || *j->p != '"' || !parse_string(j, &key))
        return jfail(j, "object key expected");
      ws(j);
      if (j->p >= j->end || *j->p != ':') {
        free(key);
        return jfail(j, "':' expected");
      }
      j->p++;
    }
    struct jv *item = parse_value(j, depth + 1);
    if (!item) {
      free(key);
      return NULL;
    }
    if (v->n == cap) {
      cap = cap ? 2 * cap : 8;
      v->items = realloc(v->items, cap * sizeof *v->items);
      if (obj)
        v->keys = realloc(v->keys, cap * sizeof *v->keys);
    }
    if (obj)
      v->keys[v->n] = key;
    v->items[v->n++] = item;
    ws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == close) {
      j->p++;
      return v;
    }
    return jfail(j, obj ? "',' or '}' expected" : "',' or ']' expected");
  }
}

static struct jv *parse_value(struct jp *j, int depth) {
  ws(j);
  if (depth > 64)
    return jfail(j, "nested too deep");
  if (j->p >= j->end)
    return jfail(j, "value expected");
  struct jv *v = calloc(1, sizeof *v);
  struct jv *r = v;
  char c = *j->p;
  if (c == '{' || c == '[') {
    r = parse_container(j, v, depth);
  } else if (c == '"') {
    v->type = J_STR;
    if (!parse_string(j, &v->str))
      r = NULL;
  } else if (j->end - j->p >= 4 && !strncmp(j->p, "true", 4)) {
    v->type = J_BOOL, v->num = 1, j->p += 4;
  } else if (j->end - j->p >= 5 && !strncmp(j->p, "false", 5)) {
    v->type = J_BOOL, j->p += 5;
  } else if (j->end - j->p >= 4 && !strncmp(j->p, "null", 4)) {
    v->type = J_NULL, j->p += 4;
  } else {
    v->type = J_NUM;
    if (!parse_number(j, &v->num))
      r = jfail(j, "bad value");
  }
  if (!r)
    jv_free(v);
  return r;
}

/* The whole text as one value, nothing after it but whitespace. */
static struct jv *json_parse(const char *text, size_t len, const char **err) {
  struct jp j = {text, text + len, NULL};
  struct jv *v = parse_value(&j, 0);
  ws(&j);
  if (v && j.p != j.end) {
    jv_free(v);
    v = jfail(&j, "text after the value");
  }
  *err = j.err ? j.err : "";
  return v;
}

static const struct jv *get(const struct jv *o, const char *key) {
  if (!o || o->type != J_OBJ)
    return NULL;
  for (size_t i = 0; i < o->n; i++)
    if (!strcmp(o->keys[i], key))
      return o->items[i];
  return NULL;
}
static const char *get_str(const struct jv *o, const char *key) {
  const struct jv *v = get(o, key);
  return v && v->type == J_STR ? v->str : NULL;
}
static double get_num(const struct jv *o, const char *key) {
  const struct jv *v = get(o, key);
  return v && v->type == J_NUM ? v->num : NAN;
}

/* ------------------------------------------------------------------ */
/* The trace file                                                      */
/* ------------------------------------------------------------------ */

static char path[512];

static void new_path(void) { ct_temp_file(path, sizeof path, "cls-trace"); }

static char text[8 << 20];

/* The file at `path` into text; its length. */
static size_t read_text(void) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
  size_t len = fread(text, 1, sizeof text - 8, f);
  fclose(f);
  ck_assert_uint_lt(len, sizeof text - 8);
  return len;
}

/* The file at `path`, parsed strictly (the test fails when it is not
 * JSON): the array of events (the format's array form). */
static struct jv *load(const struct jv **events) {
  size_t len = read_text();
  const char *err;
  struct jv *root = json_parse(text, len, &err);
  ck_assert_msg(root != NULL, "trace file is not JSON: %s", err);
  ck_assert_msg(root->type == J_ARR, "the trace is not an array of events");
  *events = root;
  return root;
}

/* text[0..len) as a viewer loads a trace cut short (the format's array
 * form, "the ] at the end is optional"): trailing whitespace and one
 * trailing comma dropped, "]" added when it is missing; then parsed
 * strictly.  NULL when it does not load. */
static struct jv *load_cut(size_t len) {
  static char cut[sizeof text];
  memcpy(cut, text, len);
  while (len && isspace((unsigned char)cut[len - 1]))
    len--;
  if (len && cut[len - 1] == ',')
    len--;
  if (len && cut[len - 1] != ']')
    cut[len++] = ']';
  const char *err;
  struct jv *v = json_parse(cut, len, &err);
  if (v && v->type != J_ARR) {
    jv_free(v);
    v = NULL;
  }
  return v;
}

/* How many events have phase `ph`, category `cat` (NULL: any) and track
 * `tid` (-1: any). */
static int count(const struct jv *events, const char *ph, const char *cat, int tid) {
  int n = 0;
  for (size_t i = 0; i < events->n; i++) {
    const struct jv *e = events->items[i];
    const char *p = get_str(e, "ph"), *c = get_str(e, "cat");
    if (p && !strcmp(p, ph) && (!cat || (c && !strcmp(c, cat))) &&
        (tid < 0 || get_num(e, "tid") == tid))
      n++;
  }
  return n;
}

/* The thread_name of track tid, or NULL. */
static const char *track_name(const struct jv *events, int tid) {
  for (size_t i = 0; i < events->n; i++) {
    const struct jv *e = events->items[i];
    const char *p = get_str(e, "ph"), *name = get_str(e, "name");
    if (p && !strcmp(p, "M") && name && !strcmp(name, "thread_name") &&
        get_num(e, "tid") == tid)
      return get_str(get(e, "args"), "name");
  }
  return NULL;
}

/* A directory of the test's own under /tmp, removed by teardown. */
static char tmpdir[64];

static void in_tmpdir(char *out, size_t cap, const char *name) {
  if (!tmpdir[0]) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/cls-trace-dir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
  }
  snprintf(out, cap, "%s/%s", tmpdir, name);
}

static void remove_tmpdir(void) {
  if (!tmpdir[0])
    return;
  const char *names[] = {"new.json", "old.json", "fifo", "link.json"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char p[128];
    snprintf(p, sizeof p, "%s/%s", tmpdir, names[i]);
    unlink(p);
  }
  rmdir(tmpdir);
  tmpdir[0] = '\0';
}

static cls_context *ctx;
static cls_program *prog;
static cls_kernel *fill_k, *copy_k, *add_k;

/* A traced context (option, version 2) with a fault spec, and the
 * kernels. */
static void open_traced(const char *fault) {
  new_path();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .fault = fault,
                                  .trace = path};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  add_k = ct_get_kernel(ctx, prog, "add_k");
}

/* The cross-stream test's gate: opened by teardown too, so a failed
 * check does not leave work held. */
static struct gate gate;

static void teardown(void) {
  gate_open(&gate);
  if (ctx)
    cls_context_destroy(ctx);
  ctx = NULL;
  gate_release(&gate);
  if (path[0])
    unlink(path);
  path[0] = '\0';
  remove_tmpdir();
}

static struct cls_stream_stats stats_of(int s) {
  struct cls_stream_stats st;
  CT_OK(cls_stream_stats(ctx, s, &st));
  return st;
}

static void fill(int s, cls_buffer b, int v) {
  cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
  ct_launch1(ctx, s, fill_k, 64, 2, a);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

START_TEST(each_stream_used_gets_one_named_track_and_the_metadata_names_the_run) {
  open_traced(NULL);
  const int used[] = {0, 2, 5};
  for (size_t i = 0; i < 3; i++) {
    cls_buffer b = ct_alloc(ctx, used[i], 64 * sizeof(int));
    fill(used[i], b, (int)i);
  }
  CT_OK(cls_sync(ctx, NULL));
  struct cls_device_info info = ct_context_info(ctx);
  char driver[64];
  snprintf(driver, sizeof driver, "%s", cls_context_driver(ctx));
  cls_context_destroy(ctx);
  ctx = NULL;
  const struct jv *ev;
  struct jv *root = load(&ev);
  for (int s = 0; s < CLS_MAX_STREAMS; s++) {
    const char *name = track_name(ev, s);
    bool is_used = s == 0 || s == 2 || s == 5;
    ck_assert_msg(!name == !is_used, "stream %d: track %s", s, name ? name : "missing");
    if (is_used) {
      char want[32];
      snprintf(want, sizeof want, "stream %d", s);
      ck_assert_str_eq(name, want);
    }
  }
  int tracks = 0;
  for (size_t i = 0; i < ev->n; i++) {
    const char *n = get_str(ev->items[i], "name");
    const char *tn = get_str(get(ev->items[i], "args"), "name");
    tracks += n && !strcmp(n, "thread_name") && tn && !strncmp(tn, "stream ", 7);
  }
  ck_assert_int_eq(tracks, 3);
  ck_assert_str_eq(get_str(ev->items[0], "name"), "process_name");
  const struct jv *other = get(ev->items[0], "args");
  ck_assert_str_eq(get_str(other, "clstream"), cls_version_string());
  ck_assert_str_eq(get_str(other, "device"), info.device_name);
  ck_assert_msg(!strncmp(get_str(other, "driver"), driver, strlen(driver)), "driver %s",
                get_str(other, "driver"));
  ck_assert_int_eq(count(ev, "M", NULL, -1) > 0, 1);
  jv_free(root);
}
END_TEST

START_TEST(every_accepted_command_is_one_event_with_device_times) {
  open_traced(NULL);
  int host[64];
  for (int i = 0; i < 64; i++)
    host[i] = i;
  cls_buffer a = ct_alloc(ctx, 0, sizeof host), b = ct_alloc(ctx, 1, sizeof host);
  cls_buffer c = ct_alloc(ctx, 1, sizeof host), d = ct_alloc(ctx, 2, sizeof host);
  CT_OK(cls_upload(ctx, 0, a, 0, host, sizeof host));
  int z = 0;
  CT_OK(cls_fill(ctx, 1, b, 0, sizeof host, &z, sizeof z));
  for (int r = 0; r < 5; r++) {
    cls_arg args[] = {CLS_IN(a), CLS_IN(b), CLS_OUT(c)};
    ct_launch1(ctx, 1, add_k, 64, 3, args);
    CT_OK(cls_copy(ctx, 2, c, 0, d, 0, sizeof host));
  }
  CT_OK(cls_download(ctx, 2, d, 0, host, sizeof host, NULL));
  CT_OK(cls_sync(ctx, NULL));
  uint64_t launches[3], enqueues[3], total = 0;
  for (int s = 0; s < 3; s++) {
    struct cls_stream_stats st = stats_of(s);
    launches[s] = st.launches;
    enqueues[s] = st.enqueues;
    total += st.enqueues;
  }
  ck_assert_uint_eq(launches[1], 5);
  cls_context_destroy(ctx);
  ctx = NULL;
  const struct jv *ev;
  struct jv *root = load(&ev);
  const char *kinds[] = {"launch", "upload", "download", "copy", "fill"};
  for (int s = 0; s < 3; s++) {
    ck_assert_int_eq(count(ev, "X", "launch", s), (int)launches[s]);
    int all = 0;
    for (size_t k = 0; k < 5; k++)
      all += count(ev, "X", kinds[k], s);
    ck_assert_int_eq(all, (int)enqueues[s]);
  }
  ck_assert_int_eq(count(ev, "X", "upload", 0), 1);
  ck_assert_int_eq(count(ev, "X", "fill", 1), 1);
  ck_assert_int_eq(count(ev, "X", "copy", 2), 5);
  ck_assert_int_eq(count(ev, "X", "download", 2), 1);
  /* The OpenCL factory profiles while tracing: each command's device
   * start and end, on its queue's track, once it finished. */
  ck_assert_int_eq(count(ev, "X", "device", -1), (int)total);
  for (size_t i = 0; i < ev->n; i++) {
    const struct jv *e = ev->items[i];
    const char *p = get_str(e, "ph");
    if (p && !strcmp(p, "X")) {
      ck_assert(get_num(e, "ts") > 0);
      ck_assert(get_num(e, "dur") >= 0);
    }
  }
  jv_free(root);
}
END_TEST

START_TEST(skips_carry_the_root_message_and_the_failure_is_marked) {
  /* copy_k's enqueue fails; the failure is known at the sync (every
   * driver: the scheduler enqueues at its list's submission), so the
   * consumers on two streams are skipped. */
  open_traced("enqueue:kernel=copy_k");
  cls_buffer a = ct_written(ctx, 0, 64, 1), b = ct_alloc(ctx, 0, 64 * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 1, 64 * sizeof(int)), d = ct_alloc(ctx, 2, 64 * sizeof(int));
  cls_arg cp[] = {CLS_IN(a), CLS_OUT(b)};
  size_t g[1] = {64};
  int rc = cls_launch(ctx, 0, copy_k, 1, g, NULL, 2, cp);
  ck_assert_msg(rc == CLS_ELAUNCH || rc == CLS_OK, "copy_k: %s", cls_err_name(rc));
  cls_sync(ctx, NULL);
  cls_report *rep = NULL;
  ck_assert_int_eq(cls_check(ctx, 1, &b, &rep), CLS_ETAINTED);
  struct cls_failure_info fi;
  CT_OK(cls_report_failure(rep, 0, &fi));
  char root_msg[256];
  snprintf(root_msg, sizeof root_msg, "%s", fi.message);
  ck_assert_msg(strstr(root_msg, "copy_k") != NULL, "root: %s", root_msg);
  cls_report_free(rep);
  for (int i = 0; i < 3; i++) {
    cls_arg add1[] = {CLS_IN(b), CLS_IN(a), CLS_OUT(c)};
    ck_assert_int_eq(cls_launch(ctx, 1, add_k, 1, g, NULL, 3, add1), CLS_ESKIPPED);
    cls_arg add2[] = {CLS_IN(c), CLS_IN(a), CLS_OUT(d)};
    ck_assert_int_eq(cls_launch(ctx, 2, add_k, 1, g, NULL, 3, add2), CLS_ESKIPPED);
  }
  ck_assert_int_eq(cls_copy(ctx, 2, d, 0, a, 0, 64 * sizeof(int)), CLS_ETAINTED);
  CT_OK(cls_sync(ctx, NULL));
  uint64_t skips[3], failures = 0;
  for (int s = 0; s < 3; s++) {
    struct cls_stream_stats st = stats_of(s);
    skips[s] = st.skips;
    failures += st.failures;
  }
  ck_assert_uint_eq(skips[1], 3);
  ck_assert_uint_eq(skips[2], 4);
  /* Valid before destroy too: the sync flushed it. */
  const struct jv *ev;
  struct jv *root = load(&ev);
  for (int s = 0; s < 3; s++)
    ck_assert_int_eq(count(ev, "i", "skip", s), (int)skips[s]);
  for (size_t i = 0; i < ev->n; i++) {
    const struct jv *e = ev->items[i];
    const char *cat = get_str(e, "cat");
    if (cat && !strcmp(cat, "skip"))
      ck_assert_str_eq(get_str(get(e, "args"), "root"), root_msg);
  }
  ck_assert_int_eq(count(ev, "i", "failure", 0), 1);
  ck_assert_int_eq(count(ev, "i", "failure", -1), (int)failures);
  jv_free(root);
}
END_TEST

START_TEST(cross_stream_waits_are_flow_arrows_from_producer_to_consumer) {
  /* The producer is held by the gate (tests/gate.h) until the sync, so
   * the consumers must wait for it whatever the device's speed. */
  gate = (struct gate){.gated = "slow_k"};
  new_path();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .factory = &gate_factory,
                                  .factory_data = &gate,
                                  .trace = path};
  ctx = ct_context_opts(&o);
  if (ct_icontains(ct_context_info(ctx).platform_name, "oclgrind"))
    gate.gated = NULL; /* it runs a queue inside clFlush (test-streams.c) */
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  cls_kernel *slow_k = ct_get_kernel(ctx, prog, "slow_k");
  copy_k = ct_get_kernel(ctx, prog, "copy_k");
  add_k = ct_get_kernel(ctx, prog, "add_k");
  cls_buffer x = ct_written(ctx, 0, 64, 3);
  cls_buffer a = ct_alloc(ctx, 0, 64 * sizeof(int)), b = ct_alloc(ctx, 1, 64 * sizeof(int));
  cls_buffer c = ct_alloc(ctx, 2, 64 * sizeof(int)), d = ct_alloc(ctx, 2, 64 * sizeof(int));
  int iters = 10;
  cls_arg sl[] = {CLS_IN(x), CLS_OUT(a), CLS_SCALAR(iters)};
  ct_launch1(ctx, 0, slow_k, 64, 3, sl);
  cls_arg c1[] = {CLS_IN(a), CLS_OUT(b)};
  ct_launch1(ctx, 1, copy_k, 64, 2, c1);
  cls_arg c2[] = {CLS_IN(a), CLS_OUT(c)};
  ct_launch1(ctx, 2, copy_k, 64, 2, c2);
  cls_arg ad[] = {CLS_IN(b), CLS_IN(c), CLS_OUT(d)};
  ct_launch1(ctx, 2, add_k, 64, 3, ad);
  gate_open(&gate);
  CT_OK(cls_sync(ctx, NULL));
  uint64_t waits[3], total = 0;
  for (int s = 0; s < 3; s++) {
    waits[s] = stats_of(s).waits;
    total += waits[s];
  }
  /* The interleave strategy puts every stream on one queue: no waits. */
  const char *sched = getenv("CLS_SCHEDULER");
  if (!(sched && strstr(sched, "interleave")))
    ck_assert_uint_ge(total, 2);
  cls_context_destroy(ctx);
  ctx = NULL;
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "s", "wait", -1), (int)total);
  for (int s = 0; s < 3; s++)
    ck_assert_int_eq(count(ev, "f", "wait", s), (int)waits[s]);
  /* Each arrow: one start and one end with its id, from another stream. */
  for (size_t i = 0; i < ev->n; i++) {
    const char *p = get_str(ev->items[i], "ph");
    if (!p || strcmp(p, "s"))
      continue;
    double id = get_num(ev->items[i], "id"), from = get_num(ev->items[i], "tid");
    int ends = 0;
    for (size_t k = 0; k < ev->n; k++) {
      const char *q = get_str(ev->items[k], "ph");
      if (q && !strcmp(q, "f") && get_num(ev->items[k], "id") == id) {
        ends++;
        ck_assert(get_num(ev->items[k], "tid") != from);
        ck_assert(get_num(ev->items[k], "ts") >= get_num(ev->items[i], "ts"));
      }
    }
    ck_assert_int_eq(ends, 1);
  }
  jv_free(root);
}
END_TEST

START_TEST(refusals_are_marked_with_their_message) {
  open_traced(NULL);
  cls_buffer b = ct_alloc(ctx, 3, 64 * sizeof(int));
  int v = 1;
  cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
  size_t g[1] = {64}, l[1] = {5};
  ck_assert_int_eq(cls_launch(ctx, 3, fill_k, 1, g, l, 2, a), CLS_EWORKSIZE);
  CT_OK(cls_stream_sync(ctx, 3, NULL));
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "i", "refusal", 3), 1);
  for (size_t i = 0; i < ev->n; i++) {
    const char *c = get_str(ev->items[i], "cat");
    if (c && !strcmp(c, "refusal")) {
      const char *m = get_str(get(ev->items[i], "args"), "message");
      ck_assert_msg(m && strstr(m, "refused") && strstr(m, "CLS_EWORKSIZE"), "message %s", m);
    }
  }
  ck_assert_int_eq(count(ev, "X", "launch", 3), 0);
  /* The record it left is the stream's one failure. */
  ck_assert_uint_eq(stats_of(3).failures, 1);
  jv_free(root);
}
END_TEST

START_TEST(a_never_written_input_is_marked_where_it_is_first_read) {
  open_traced(NULL);
  cls_buffer a = ct_alloc(ctx, 4, 64 * sizeof(int)), b = ct_alloc(ctx, 4, 64 * sizeof(int));
  cls_arg cp[] = {CLS_IN(a), CLS_OUT(b)};
  size_t g[1] = {64};
  ck_assert_int_eq(cls_launch(ctx, 4, copy_k, 1, g, NULL, 2, cp), CLS_ESKIPPED);
  CT_OK(cls_sync(ctx, NULL));
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "i", "failure", 4), (int)stats_of(4).failures);
  ck_assert_int_eq(count(ev, "i", "failure", 4), 1);
  ck_assert_int_eq(count(ev, "i", "skip", 4), 1);
  for (size_t i = 0; i < ev->n; i++) {
    const char *c = get_str(ev->items[i], "cat");
    if (c && !strcmp(c, "skip"))
      ck_assert_msg(strstr(get_str(get(ev->items[i], "args"), "root"), "never written"),
                    "root: %s", get_str(get(ev->items[i], "args"), "root"));
  }
  jv_free(root);
}
END_TEST

START_TEST(a_tainted_download_is_marked) {
  open_traced(NULL);
  cls_buffer a = ct_alloc(ctx, 0, 64 * sizeof(int));
  int host[64];
  ck_assert_int_eq(cls_download(ctx, 0, a, 0, host, sizeof host, NULL), CLS_ETAINTED);
  CT_OK(cls_sync(ctx, NULL));
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "i", "tainted", 0), 1);
  ck_assert_int_eq(count(ev, "X", "download", 0), 0);
  jv_free(root);
}
END_TEST

START_TEST(trace_is_valid_json_when_the_program_exits_after_a_sync) {
  new_path();
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    /* The variable names the file; the context is never destroyed. */
    setenv("CLS_TRACE", path, 1);
    cls_context *c = NULL;
    if (cls_context_create(&c, NULL) != 0)
      _exit(2);
    cls_program *p = NULL;
    cls_kernel *k = NULL;
    if (cls_program_build(c, CT_FILL_SRC, NULL, &p) || cls_kernel_get(c, p, "fill_k", &k))
      _exit(3);
    cls_buffer b;
    if (cls_alloc(c, 0, 64 * sizeof(int), &b))
      _exit(4);
    int v = 7;
    size_t g[1] = {64};
    for (int i = 0; i < 10; i++) {
      cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(v)};
      if (cls_launch(c, 0, k, 1, g, NULL, 2, a))
        _exit(5);
    }
    if (cls_sync(c, NULL))
      _exit(6);
    _exit(0);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: status %d", st);
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "X", "launch", 0), 10);
  jv_free(root);
}
END_TEST

START_TEST(trace_stays_valid_json_across_syncs_and_grows) {
  open_traced(NULL);
  cls_buffer b = ct_alloc(ctx, 0, 64 * sizeof(int));
  int launched = 0;
  for (int round = 1; round <= 3; round++) {
    /* Enough events to fill the writer's buffer more than once. */
    for (int i = 0; i < 400; i++, launched++)
      fill(0, b, i);
    CT_OK(cls_stream_sync(ctx, 0, NULL));
    const struct jv *ev;
    struct jv *root = load(&ev);
    ck_assert_int_eq(count(ev, "X", "launch", 0), launched);
    jv_free(root);
  }
  cls_context_destroy(ctx);
  ctx = NULL;
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "X", "launch", 0), launched);
  jv_free(root);
}
END_TEST

/* A child that traces 1000 launches (the 64 KiB buffer is written out
 * when full, several times) and is killed without a sync or a destroy:
 * the file loads, and so does the file cut after any of its events, or
 * inside the separator that follows one. */
START_TEST(a_trace_cut_after_any_event_loads_as_the_array_form) {
  new_path();
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    setenv("CLS_TRACE", path, 1);
    cls_context *c = NULL;
    cls_program *p = NULL;
    cls_kernel *k = NULL;
    cls_buffer b;
    if (cls_context_create(&c, NULL) || cls_program_build(c, CT_FILL_SRC, NULL, &p) ||
        cls_kernel_get(c, p, "fill_k", &k) || cls_alloc(c, 0, 64 * sizeof(int), &b))
      _exit(2);
    size_t g[1] = {64};
    for (int i = 0; i < 1000; i++) {
      cls_arg a[] = {CLS_OUT(b), CLS_SCALAR(i)};
      if (cls_launch(c, 0, k, 1, g, NULL, 2, a))
        _exit(3);
    }
    kill(getpid(), SIGKILL);
    _exit(4);
  }
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "child: status %d", st);
  size_t len = read_text();
  struct jv *all = load_cut(len);
  ck_assert_msg(all != NULL, "the file left by the killed child does not load");
  ck_assert_int_ge(count(all, "X", "launch", 0), 400); /* a full buffer was written */
  size_t events = all->n;
  jv_free(all);
  /* Each event ends with "}" followed by ",\n{" (the next) or "\n]". */
  size_t cuts = 0;
  for (size_t at = 1; at < len; at++) {
    if (text[at - 1] != '}' || !(text[at] == ',' || (text[at] == '\n' && text[at + 1] == ']')))
      continue;
    for (size_t extra = 0; extra < 3 && at + extra <= len; extra++) {
      struct jv *v = load_cut(at + extra);
      ck_assert_msg(v != NULL, "cut at byte %zu of %zu does not load", at + extra, len);
      ck_assert_uint_eq(v->n, cuts + 1);
      jv_free(v);
    }
    cuts++;
  }
  ck_assert_uint_eq(cuts, events);
}
END_TEST

/* The message of the first event of category `cat` whose name is `name`. */
static const char *message_of(const struct jv *ev, const char *cat, const char *name) {
  for (size_t i = 0; i < ev->n; i++) {
    const char *c = get_str(ev->items[i], "cat"), *n = get_str(ev->items[i], "name");
    if (c && !strcmp(c, cat) && n && !strcmp(n, name))
      return get_str(get(ev->items[i], "args"), "message");
  }
  return NULL;
}

/* Names and messages hold any bytes (a wire record's message comes from
 * another process): the file stays strict JSON in UTF-8, control
 * characters, quotes and backslashes come back as they were, well-formed
 * UTF-8 as it was, and each byte of an ill-formed sequence as U+FFFD. */
START_TEST(every_string_is_escaped_and_ill_formed_utf8_becomes_u_fffd) {
  new_path();
  struct cls__logger lg;
  cls__logger_init(&lg);
  struct cls__trace_meta meta = {"dev\x01\xff\"", "drv\\\x7f", "1\xc3\xa9"};
  struct cls__trace *t = NULL;
  CT_OK(cls__trace_open(&t, path, &meta, &lg));
  const char *mixed = "ctl \x01\x1f\t\n\r quote \" bs \\ ok "
                      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                      " overlong \xc0\xaf surrogate \xed\xa0\x80 above \xf4\x90\x80\x80 cut \xe2\x82";
  const char *want_mixed = "ctl \x01\x1f\t\n\r quote \" bs \\ ok "
                           "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
                           " overlong \xef\xbf\xbd\xef\xbf\xbd surrogate \xef\xbf\xbd\xef\xbf\xbd"
                           "\xef\xbf\xbd above \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                           " cut \xef\xbf\xbd\xef\xbf\xbd";
  /* Every byte 0x80..0xff in a row: none of them is well-formed there. */
  char high[2][65], want_high[2][64 * 3 + 1];
  for (int h = 0; h < 2; h++) {
    for (int i = 0; i < 64; i++) {
      high[h][i] = (char)(0x80 + 64 * h + i);
      memcpy(want_high[h] + 3 * i, "\xef\xbf\xbd", 3);
    }
    high[h][64] = '\0';
    want_high[h][64 * 3] = '\0';
  }
  cls__trace_failure(t, "failure", 0, "mixed", 1, mixed);
  cls__trace_failure(t, "failure", 0, "high0", 2, high[0]);
  cls__trace_failure(t, "refusal", 0, "high1", 3, high[1]);
  cls__trace_skip(t, 0, "k\x80\"", 4, mixed);
  cls__trace_close(t);
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_str_eq(message_of(ev, "failure", "failure mixed"), want_mixed);
  ck_assert_str_eq(message_of(ev, "failure", "failure high0"), want_high[0]);
  ck_assert_str_eq(message_of(ev, "refusal", "refusal high1"), want_high[1]);
  const struct jv *args = get(ev->items[0], "args");
  ck_assert_str_eq(get_str(args, "device"), "dev\x01\xef\xbf\xbd\"");
  ck_assert_str_eq(get_str(args, "driver"), "drv\\\x7f");
  ck_assert_str_eq(get_str(args, "clstream"), "1\xc3\xa9");
  int skips = 0;
  for (size_t i = 0; i < ev->n; i++) {
    const char *c = get_str(ev->items[i], "cat");
    if (c && !strcmp(c, "skip")) {
      skips++;
      ck_assert_str_eq(get_str(ev->items[i], "name"), "skip k\xef\xbf\xbd\"");
      ck_assert_str_eq(get_str(get(ev->items[i], "args"), "root"), want_mixed);
    }
  }
  ck_assert_int_eq(skips, 1);
  jv_free(root);
}
END_TEST

/* A context create that fails after the trace was opened (the scheduler
 * driver refuses its parameter in create) with the trace at `p`. */
static int create_failing_after_the_trace(const char *p) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .scheduler = "scheduler:max_tasks=0",
                                  .trace = p};
  cls_context *c = NULL;
  int rc = cls_context_create(&c, &o);
  ck_assert_ptr_null(c);
  return rc;
}

static mode_t type_of(const char *p) {
  struct stat st;
  return lstat(p, &st) == 0 ? st.st_mode & S_IFMT : 0;
}

START_TEST(a_failed_create_removes_only_a_trace_file_it_created) {
  char fresh[128], old[128], fifo[128], link[128];
  in_tmpdir(fresh, sizeof fresh, "new.json");
  in_tmpdir(old, sizeof old, "old.json");
  in_tmpdir(fifo, sizeof fifo, "fifo");
  in_tmpdir(link, sizeof link, "link.json");
  /* A file the trace created: removed, nothing is left behind. */
  ck_assert_int_eq(create_failing_after_the_trace(fresh), CLS_ECONFIG);
  ck_assert_int_eq(type_of(fresh), 0);
  /* The user's file stays; a symbolic link to it is refused (a link
   * planted in /tmp would truncate what it names), and both stay. */
  FILE *f = fopen(old, "w");
  ck_assert_ptr_nonnull(f);
  fputs("the user's\n", f);
  fclose(f);
  ck_assert_int_eq(symlink(old, link), 0);
  ck_assert_int_eq(create_failing_after_the_trace(old), CLS_ECONFIG);
  ck_assert_int_eq(type_of(old), S_IFREG);
  ck_assert_ptr_nonnull(f = fopen(old, "w"));
  fputs("the user's\n", f);
  fclose(f);
  ck_assert_int_eq(create_failing_after_the_trace(link), CLS_EINVAL);
  ck_assert_msg(strstr(cls_last_error_detail(), "not a regular file"), "detail: %s",
                cls_last_error_detail());
  ck_assert_int_eq(type_of(link), S_IFLNK);
  ck_assert_int_eq(type_of(old), S_IFREG);
  struct stat st;
  ck_assert_int_eq(stat(old, &st), 0);
  ck_assert_int_eq(st.st_size, strlen("the user's\n")); /* not truncated through the link */
  /* A FIFO with a reader (so that opening it does not block): refused as
   * no regular file, and left where it is. */
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  int rd = open(fifo, O_RDONLY | O_NONBLOCK);
  ck_assert_int_ge(rd, 0);
  alarm(20); /* a hang fails the test early */
  int rc = create_failing_after_the_trace(fifo);
  alarm(0);
  ck_assert_int_eq(type_of(fifo), S_IFIFO);
  ck_assert_int_eq(rc, CLS_EINVAL);
  char byte;
  ck_assert_int_le(read(rd, &byte, 1), 0); /* nothing was written into it */
  close(rd);
}
END_TEST

START_TEST(a_fifo_as_the_trace_path_is_refused_without_blocking) {
  char fifo[128];
  in_tmpdir(fifo, sizeof fifo, "fifo");
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION, .trace = fifo};
  cls_context *c = NULL;
  alarm(20); /* opening a FIFO with no reader for writing blocks */
  int rc = cls_context_create(&c, &o);
  alarm(0);
  ck_assert_int_eq(rc, CLS_EINVAL);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(cls_last_error_detail(), "not a regular file") &&
                    strstr(cls_last_error_detail(), fifo),
                "detail: %s", cls_last_error_detail());
  ck_assert_int_eq(type_of(fifo), S_IFIFO);
  /* The variable's way too. */
  setenv("CLS_TRACE", fifo, 1);
  alarm(20);
  rc = cls_context_create(&c, NULL);
  alarm(0);
  unsetenv("CLS_TRACE");
  ck_assert_int_eq(rc, CLS_EINVAL);
  ck_assert_int_eq(type_of(fifo), S_IFIFO);
}
END_TEST

START_TEST(a_trace_file_that_cannot_be_created_fails_the_create) {
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .trace = "/nonexistent-dir/trace.json"};
  cls_context *c = (cls_context *)&o;
  ck_assert_int_eq(cls_context_create(&c, &o), CLS_EINVAL);
  ck_assert_ptr_null(c);
  ck_assert_msg(strstr(cls_last_error_detail(), "/nonexistent-dir/trace.json") != NULL,
                "detail: %s", cls_last_error_detail());
}
END_TEST

START_TEST(a_version_1_caller_has_no_trace_member_and_traces_nothing) {
  /* A version-1 struct ends at page_size: what lies after it is not read. */
  unsetenv("CLS_TRACE");
  struct cls_context_options o = {.version = 1, .trace = "/nonexistent-dir/trace.json"};
  cls_context *c = NULL;
  CT_OK(cls_context_create(&c, &o));
  cls_context_destroy(c);
}
END_TEST

START_TEST(the_null_factory_traces_host_times_only) {
  new_path();
  struct cls_context_options o = {.version = CLS_CONTEXT_OPTIONS_VERSION,
                                  .factory = cls_null_stream_factory(),
                                  .trace = path};
  ctx = ct_context_opts(&o);
  prog = ct_build(ctx, CT_ALL_SRC, NULL);
  fill_k = ct_get_kernel(ctx, prog, "fill_k");
  cls_buffer b = ct_alloc(ctx, 0, 64 * sizeof(int));
  for (int i = 0; i < 5; i++)
    fill(0, b, i);
  cls_context_destroy(ctx);
  ctx = NULL;
  const struct jv *ev;
  struct jv *root = load(&ev);
  ck_assert_int_eq(count(ev, "X", "launch", 0), 5);
  ck_assert_int_eq(count(ev, "X", "device", -1), 0);
  jv_free(root);
}
END_TEST

/* The validator itself: what it must refuse. */
START_TEST(json_checker_refuses_what_is_not_json) {
  const char *bad[] = {"", "[", "[1,]", "{\"a\":1,}", "{a:1}", "[01]", "[1.]", "[.5]",
                       "\"\\x\"", "\"a\tb\"", "[1] 2", "{\"a\"}", "[tru]", "[-]", "[1e]",
                       "\"\x80\"", "\"\xc3\"", "\"\xed\xa0\x80\"", "\"\xc0\xaf\""};
  const char *good[] = {"[]", "{}", "[1,-2.5e+3,\"\\u00e9\\n\",true,false,null]",
                        "{\"a\":{\"b\":[{}]}} \n"};
  const char *err;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    struct jv *v = json_parse(bad[i], strlen(bad[i]), &err);
    ck_assert_msg(v == NULL, "accepted: %s", bad[i]);
  }
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    struct jv *v = json_parse(good[i], strlen(good[i]), &err);
    ck_assert_msg(v != NULL, "refused: %s (%s)", good[i], err);
    jv_free(v);
  }
}
END_TEST

int main(void) {
  ct_require_device();
  Suite *s = suite_create("trace");
#define ADD(fn) CT_ADD_FIXTURE(s, fn, NULL, teardown)
  ADD(each_stream_used_gets_one_named_track_and_the_metadata_names_the_run);
  ADD(every_accepted_command_is_one_event_with_device_times);
  ADD(skips_carry_the_root_message_and_the_failure_is_marked);
  ADD(cross_stream_waits_are_flow_arrows_from_producer_to_consumer);
  ADD(refusals_are_marked_with_their_message);
  ADD(a_never_written_input_is_marked_where_it_is_first_read);
  ADD(a_tainted_download_is_marked);
  ADD(trace_is_valid_json_when_the_program_exits_after_a_sync);
  ADD(trace_stays_valid_json_across_syncs_and_grows);
  ADD(a_trace_cut_after_any_event_loads_as_the_array_form);
  ADD(every_string_is_escaped_and_ill_formed_utf8_becomes_u_fffd);
  ADD(a_failed_create_removes_only_a_trace_file_it_created);
  ADD(a_fifo_as_the_trace_path_is_refused_without_blocking);
  ADD(a_trace_file_that_cannot_be_created_fails_the_create);
  ADD(a_version_1_caller_has_no_trace_member_and_traces_nothing);
  ADD(the_null_factory_traces_host_times_only);
  ADD(json_checker_refuses_what_is_not_json);
#undef ADD
  return ct_run(s);
}
