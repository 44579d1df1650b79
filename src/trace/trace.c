/* The timeline trace writer (trace.h): events are formatted into one
 * buffer with no allocation and written out with pwrite, each flush
 * followed by the closing "]" that the next flush writes over. */
#include "trace/trace.h"
#include "util/settle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_SIZE ((size_t)64 << 10)
#define EVENT_MAX 1024 /* an event's longest text: messages are cut */
#define PID 1          /* the context's one device */
#define TID_CONTEXT 99
#define TID_DEVICE 100 /* + backend queue */
/* The closing text, written after the last event at every flush.  An
 * event starts with its separator (",\n{"), so a file cut anywhere
 * after an event's "}" is the array without its "]". */
#define TAIL "\n]\n"
#define TAIL_LEN (sizeof TAIL - 1)

struct cls__trace {
  int fd;
  bool broken;              /* a write failed: the trace went quiet */
  bool created;             /* the file is ours to remove (O_EXCL) */
  struct cls__logger *log;
  off_t end;                /* file offset after the last event written */
  char *buf;
  size_t len;
  char *path;
  int64_t device_offset;
  uint64_t named_streams;   /* bit s: stream s's track is named */
  uint64_t named_queues;
  uint64_t flows;           /* flow ids given out */
  uint64_t last_ts[CLS_MAX_STREAMS]; /* the middle of each stream's last
                                        command's slice (ns); 0: none */
};

static bool write_all(int fd, const char *p, size_t n, off_t off) {
  while (n) {
    ssize_t w = pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
    off += w;
  }
  return true;
}

void cls__trace_flush(struct cls__trace *t) {
  if (!t || t->broken)
    return;
  /* One write of the events and the "]": room() keeps space for it. */
  memcpy(t->buf + t->len, TAIL, TAIL_LEN);
  if (!write_all(t->fd, t->buf, t->len + TAIL_LEN, t->end)) {
    t->broken = true;
    cls__log(t->log, CLS_LOG_ERRORS, "trace: writing the file failed: %s; tracing stops",
             strerror(errno));
    return;
  }
  t->end += (off_t)t->len;
  t->len = 0;
}

/* Room for one event; flushes when the buffer is nearly full. */
static char *room(struct cls__trace *t) {
  if (BUF_SIZE - t->len < EVENT_MAX + TAIL_LEN)
    cls__trace_flush(t);
  return t->broken ? NULL : t->buf + t->len;
}

/* Appends `fmt` (an event without the separator), cut at EVENT_MAX. */
static void emit(struct cls__trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void emit(struct cls__trace *t, const char *fmt, ...) {
  char *p = room(t);
  if (!p)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(p, EVENT_MAX, fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < EVENT_MAX)
    t->len += (size_t)n;
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, nothing above U+10FFFF), 0 when it is not one.  The
 * string ends with NUL, which is no continuation byte: reading stops
 * there. */
static size_t utf8_len(const unsigned char *s) {
  unsigned c = s[0], lo = 0x80, hi = 0xbf;
  size_t n;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
  else
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if (s[i] < 0x80 || s[i] > 0xbf)
      return 0;
  return n;
}

/* `s` as the inside of a JSON string, at most cap-1 bytes: quotes and
 * backslashes escaped, control characters as the escape u00XX, each byte
 * that is not part of well-formed UTF-8 as the escape ufffd (U+FFFD): a
 * message may come from a wire record, any bytes at all.  A cut splits neither an escape nor a
 * UTF-8 sequence. */
static const char *esc(char *out, size_t cap, const char *str) {
  const unsigned char *s = (const unsigned char *)(str ? str : "");
  size_t n = 0;
  while (*s) {
    size_t len = utf8_len(s);
    const char *rep = NULL;
    char ctl[8];
    if (*s == '"' || *s == '\\') {
      ctl[0] = '\\', ctl[1] = (char)*s, ctl[2] = '\0';
      rep = ctl;
    } else if (*s < 0x20) {
      snprintf(ctl, sizeof ctl, "\\u%04x", *s);
      rep = ctl;
    } else if (!len) {
      rep = "\\ufffd";
      len = 1;
    }
    size_t need = rep ? strlen(rep) : len;
    if (n + need >= cap)
      break;
    memcpy(out + n, rep ? rep : (const char *)s, need);
    n += need;
    s += len;
  }
  out[n] = '\0';
  return out;
}

/* Microseconds with three decimals, from nanoseconds. */
#define US(ns) (unsigned long long)((ns) / 1000), (unsigned)((ns) % 1000)

static void name_track(struct cls__trace *t, int tid, const char *name, int sort) {
  emit(t,
       ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}"
       ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":"
       "{\"sort_index\":%d}}",
       PID, tid, name, PID, tid, sort);
}

static int track(struct cls__trace *t, int s) {
  if (s < 0 || s >= CLS_MAX_STREAMS)
    return TID_CONTEXT;
  cls__trace_stream(t, s);
  return s;
}

void cls__trace_stream(struct cls__trace *t, int s) {
  if (s < 0 || s >= CLS_MAX_STREAMS || (t->named_streams >> s & 1))
    return;
  t->named_streams |= 1ull << s;
  char name[32];
  snprintf(name, sizeof name, "stream %d", s);
  name_track(t, s, name, 2 * s);
}

void cls__trace_set_device_offset(struct cls__trace *t, int64_t offset) {
  t->device_offset = offset;
}

void cls__trace_cmd(struct cls__trace *t, int s, const char *cat, const char *name,
                    uint64_t seq, uint64_t t0, uint64_t t1) {
  int tid = track(t, s);
  if (tid == s)
    t->last_ts[s] = t0 + (t1 - t0) / 2;
  char n[128];
  emit(t,
       ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
       "\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"seq\":%llu}}",
       cat, esc(n, sizeof n, name), PID, tid, US(t0), US(t1 - t0), (unsigned long long)seq);
}

void cls__trace_device(struct cls__trace *t, int q, const char *name, uint64_t seq,
                       uint64_t start, uint64_t end) {
  if (q < 0 || q >= CLS_MAX_STREAMS)
    return;
  if (!(t->named_queues >> q & 1)) {
    t->named_queues |= 1ull << q;
    char qname[32];
    snprintf(qname, sizeof qname, "queue %d (device)", q);
    name_track(t, TID_DEVICE + q, qname, 2 * q + 1);
  }
  int64_t a = (int64_t)start + t->device_offset, b = (int64_t)end + t->device_offset;
  if (a < 0 || b < a)
    return; /* a clock that went backwards: nothing sensible to draw */
  char n[128];
  emit(t,
       ",\n{\"ph\":\"X\",\"cat\":\"device\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
       "\"ts\":%llu.%03u,\"dur\":%llu.%03u,\"args\":{\"queue\":%d,\"seq\":%llu}}",
       esc(n, sizeof n, name), PID, TID_DEVICE + q, US((uint64_t)a), US((uint64_t)(b - a)), q,
       (unsigned long long)seq);
}

void cls__trace_skip(struct cls__trace *t, int s, const char *name, uint64_t pos,
                     const char *root) {
  int tid = track(t, s);
  char n[128], m[512];
  uint64_t now = cls__now_ns();
  emit(t,
       ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"skip\",\"name\":\"skip %s\",\"pid\":%d,\"tid\":%d,"
       "\"ts\":%llu.%03u,\"args\":{\"position\":%llu,\"root\":\"%s\"}}",
       esc(n, sizeof n, name), PID, tid, US(now), (unsigned long long)pos,
       esc(m, sizeof m, root));
}

void cls__trace_failure(struct cls__trace *t, const char *cat, int s, const char *name,
                        uint64_t pos, const char *message) {
  int tid = track(t, s);
  char n[128], m[512];
  uint64_t now = cls__now_ns();
  emit(t,
       ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"%s\",\"name\":\"%s %s\",\"pid\":%d,\"tid\":%d,"
       "\"ts\":%llu.%03u,\"args\":{\"stream\":%d,\"position\":%llu,\"message\":\"%s\"}}",
       cat, cat, esc(n, sizeof n, name), PID, tid, US(now), s, (unsigned long long)pos,
       esc(m, sizeof m, message));
}

void cls__trace_wait(struct cls__trace *t, int producer, int consumer, uint64_t upto) {
  int from = track(t, producer), to = track(t, consumer);
  uint64_t now = cls__now_ns();
  /* The arrow leaves the producer's last command (bound to the slice
   * enclosing the middle of it), and ends in the consumer's command being
   * ordered now ("bp":"e": the enclosing slice). */
  uint64_t start = from == producer && t->last_ts[producer] ? t->last_ts[producer] : now;
  unsigned long long id = ++t->flows;
  emit(t,
       ",\n{\"ph\":\"s\",\"cat\":\"wait\",\"name\":\"wait\",\"id\":%llu,\"pid\":%d,\"tid\":%d,"
       "\"ts\":%llu.%03u,\"args\":{\"upto\":%llu}}"
       ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"wait\",\"name\":\"wait\",\"id\":%llu,\"pid\":%d,"
       "\"tid\":%d,\"ts\":%llu.%03u}",
       id, PID, from, US(start), (unsigned long long)upto, id, PID, to, US(now));
}

/* The file at `path` for writing, as a new file (t->created) or an
 * existing regular file truncated.  Anything else (a FIFO, a device, a
 * directory, a symbolic link) is refused before it is opened: opening a
 * FIFO for writing blocks until a reader comes, a trace has no business
 * in a device, and a link planted where a trace is written (in /tmp)
 * would have it truncate the file the link names.  O_NONBLOCK, O_NOFOLLOW
 * and the fstat after the open close the race with a file swapped in
 * between. */
static int open_file(struct cls__trace *t, const char *path) {
  t->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NONBLOCK | O_CLOEXEC, 0644);
  if (t->fd >= 0) {
    t->created = true;
    return CLS_OK;
  }
  struct stat st;
  bool regular = false;
  if (errno == EEXIST && lstat(path, &st) == 0) {
    if ((regular = S_ISREG(st.st_mode)) &&
        (t->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
      if (fstat(t->fd, &st) == 0 && (regular = S_ISREG(st.st_mode)) && ftruncate(t->fd, 0) == 0)
        return CLS_OK;
      int saved = errno;
      close(t->fd);
      t->fd = -1;
      errno = saved;
    }
    if (!regular)
      return cls__error(CLS_EINVAL, 0,
                        "CLS_TRACE: '%s' is not a regular file (a FIFO, a device, a "
                        "directory or a link): a trace is written to a file of its own",
                        path);
  }
  return cls__error(CLS_EINVAL, 0, "CLS_TRACE: cannot create the trace file '%s': %s", path,
                    strerror(errno));
}

/* Removes the file when this trace created it and `path` still names it:
 * never a file the user had, nor what was put in its place. */
static void remove_own(struct cls__trace *t) {
  struct stat mine, now;
  if (t->created && fstat(t->fd, &mine) == 0 && lstat(t->path, &now) == 0 &&
      S_ISREG(now.st_mode) && now.st_dev == mine.st_dev && now.st_ino == mine.st_ino)
    unlink(t->path);
}

int cls__trace_open(struct cls__trace **out, const char *path, const struct cls__trace_meta *meta,
                    struct cls__logger *log) {
  *out = NULL;
  int rc;
  struct cls__trace *t = calloc(1, sizeof *t);
  if (!t)
    return cls__error(CLS_ENOMEM, 0, "out of host memory");
  t->log = log;
  if (!(t->buf = malloc(BUF_SIZE)) || !(t->path = strdup(path))) {
    rc = cls__error(CLS_ENOMEM, 0, "out of host memory");
    goto fail_buf;
  }
  if ((rc = open_file(t, path)) < 0)
    goto fail_open;
  /* The array form of the format, not the object form: a file cut by a
   * crash (after any event) loads once "]" is added, which the viewers
   * do themselves.  What the object form kept in otherData is in the
   * process_name event's arguments. */
  char dev[256], drv[128], ver[64];
  esc(ver, sizeof ver, meta->version);
  esc(dev, sizeof dev, meta->device);
  esc(drv, sizeof drv, meta->driver);
  int n = snprintf(t->buf, BUF_SIZE,
                   "[\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":"
                   "\"clstream %s: %s (driver %s)\",\"clstream\":\"%s\",\"device\":\"%s\","
                   "\"driver\":\"%s\"}}",
                   PID, ver, dev, drv, ver, dev, drv);
  t->len = (size_t)n;
  name_track(t, TID_CONTEXT, "context", -1);
  cls__trace_flush(t);
  if (t->broken) {
    rc = cls__error(CLS_EINVAL, 0, "CLS_TRACE: cannot write the trace file '%s': %s", path,
                    strerror(errno));
    goto fail_write;
  }
  *out = t;
  return CLS_OK;
fail_write:
  remove_own(t);
  close(t->fd);
fail_open:
  free(t->path);
  free(t->buf);
fail_buf:
  free(t);
  return rc;
}

void cls__trace_close(struct cls__trace *t) {
  if (!t)
    return;
  cls__trace_flush(t);
  close(t->fd);
  free(t->path);
  free(t->buf);
  free(t);
}

void cls__trace_discard(struct cls__trace *t) {
  if (!t)
    return;
  remove_own(t);
  close(t->fd);
  free(t->path);
  free(t->buf);
  free(t);
}
