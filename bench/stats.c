/* clstream-bench's statistics and table: a row per workload, driver and
 * attribution mode, from the paired timings (each pair's ratio, their
 * median and its 95 % interval, bench.h), the targets and their verdict;
 * printed as the run goes, and as JSON at the end (--json). */
#include "common.h"

#include <stdio.h>
#include <string.h>

struct row rows[CLS_BENCH_MAX_ROWS];
int nrows;
int reps = 21;

/* The targets, as clstream/raw time ratios (saxpy's is on throughput:
 * >= 0.98x of raw, i.e. time <= 1/0.98). */
double target_of(const char *workload) {
  size_t n = strlen(workload);
  if (n > 5 && strcmp(workload + n - 5, "-args") == 0)
    return 1.03; /* issue 34: every launch-bound row, arguments as users give them */
  if (n > 7 && strcmp(workload + n - 7, "-replay") == 0)
    return 1.00; /* issue 34: captured, clstream's own cost gone */
  if (strcmp(workload, "tiny-chain") == 0)
    return 1.03;
  if (strcmp(workload, "saxpy") == 0)
    return 1 / 0.98;
  if (strcmp(workload, "ping-pong") == 0 || strcmp(workload, "fan") == 0)
    return 1.05;
  if (strncmp(workload, "real", 4) == 0 || strcmp(workload, "image-blur") == 0)
    return 1.02;
  return 0;
}

/* The workloads whose cost is the host's work per launch. */
bool launch_bound(const char *workload) {
  static const char *const lb[] = {"tiny-chain",      "ping-pong",      "fan",
                                   "tiny-chain-args", "ping-pong-args", "fan-args",
                                   "tiny-chain-replay", "ping-pong-replay", "fan-replay"};
  for (size_t i = 0; i < sizeof lb / sizeof *lb; i++)
    if (strcmp(workload, lb[i]) == 0)
      return true;
  return false;
}

/* "met" only when the whole interval [lo, hi] is at or under the target,
 * "missed" only when it is all above; otherwise this run cannot tell. */
static const char *verdict_of(double lo, double hi, double target) {
  if (target <= 0)
    return "-";
  if (hi <= target)
    return "met";
  if (lo > target)
    return "missed";
  return "unclear";
}

static const char *verdict(const struct row *row) {
  return verdict_of(row->lo, row->hi, row->target);
}

struct row *new_row(const char *name, const char *driver, const char *kind) {
  if (nrows == (int)(sizeof rows / sizeof rows[0]))
    die("too many rows (fewer --drivers)");
  struct row *row = &rows[nrows++];
  *row = (struct row){.workload = name, .driver = driver, .kind = kind, .events = -1};
  return row;
}

/* A row from the alternating timings of both sides. */
struct row *add_row(const char *name, const char *driver, const char *kind,
                           double *tr, double *tl) {
  struct row *row = new_row(name, driver, kind);
  pair_stats(row, tr, tl);
  return row;
}

/* row's medians, ratio and paired ratio from both sides' timings (sorted
 * in place). */
void pair_stats(struct row *row, double *tr, double *tl) {
  double pr[MAX_REPS];
  for (int i = 0; i < reps; i++)
    pr[i] = tl[i] / tr[i];
  row->paired = bench_median_ci(pr, reps, &row->lo, &row->hi);
  row->raw = bench_median(tr, reps);
  row->lib = bench_median(tl, reps);
  row->ratio = row->lib / row->raw;
}

void print_header(void) {
  printf("%-17s %-22s %-6s %9s %9s %6s %6s %-13s %-13s %9s %s\n", "workload", "driver",
         "attrib", "raw ms", "cls ms", "ratio", "paired", "95% interval", "target", "ev/launch",
         "notes");
}

/* The attribution and events columns of a row ("-" where none). */
const char *attrib_col(const struct row *row) {
  return row->attribution ? row->attribution : "-";
}
const char *events_col(const struct row *row, char *buf, size_t n) {
  if (row->events < 0)
    return "-";
  snprintf(buf, n, "%.4f", row->events);
  return buf;
}

void print_row(const struct row *row) {
  char ci[32], tg[32], ev[32];
  snprintf(ci, sizeof ci, "[%.3f,%.3f]", row->lo, row->hi);
  if (row->target > 0)
    snprintf(tg, sizeof tg, "<=%.3f %s", row->target, verdict(row));
  else
    snprintf(tg, sizeof tg, "-");
  printf("%-17s %-22s %-6s %9.2f %9.2f %6.3f %6.3f %-13s %-13s %9s %s\n", row->workload,
         row->driver, attrib_col(row), row->raw * 1e3, row->lib * 1e3, row->ratio, row->paired,
         ci, tg, events_col(row, ev, sizeof ev), row->note);
  fflush(stdout);
}

/* For each launch-bound clstream row, issue 34's target: at most the
 * row's target times raw, and no slower than the best peer (clstream /
 * peer <= 1 in the same rounds); both met: met, either missed: missed. */
void print_targets(void) {
  bool any = false;
  for (int i = 0; i < nrows; i++) {
    const struct row *row = &rows[i];
    if (strcmp(row->kind, "workload") != 0 || !row->attribution || !launch_bound(row->workload))
      continue;
    if (!any)
      printf("\nlaunch-bound targets: clstream <= target x raw, and no slower than the best peer\n"
             "(the median of the rounds' clstream / peer times <= 1, its 95%% interval)\n"
             "%-17s %-22s %-6s %-22s %-34s %s\n",
             "workload", "driver", "attrib", "vs raw", "vs best peer", "verdict");
    any = true;
    char vr[48], vp[64];
    const char *a = verdict(row), *b = "-", *all;
    snprintf(vr, sizeof vr, "%.3f <=%.3f %s", row->paired, row->target, a);
    if (row->peer) {
      b = verdict_of(row->vs_lo, row->vs_hi, 1.0);
      snprintf(vp, sizeof vp, "%s %.3f [%.3f,%.3f] %s", row->peer, row->vs_peer, row->vs_lo,
               row->vs_hi, b);
    } else {
      /* Peers run the *-args workloads only. */
      snprintf(vp, sizeof vp, "%s",
               strstr(row->workload, "-args") ? "- (no peer built)" : "- (no peer row)");
    }
    if (strcmp(a, "missed") == 0 || strcmp(b, "missed") == 0)
      all = "missed";
    else if (strcmp(a, "met") == 0 && (!row->peer || strcmp(b, "met") == 0))
      all = "met";
    else
      all = "unclear";
    printf("%-17s %-22s %-6s %-22s %-34s %s\n", row->workload, row->driver, attrib_col(row), vr,
           vp, all);
  }
}

void write_json(const char *path, const struct cls_device_info *dev) {
  FILE *f = fopen(path, "w");
  if (!f)
    die("cannot write %s", path);
  fprintf(f, "{\n  \"device\": \"%s\",\n  \"platform\": \"%s\",\n  \"reps\": %d,\n  \"rows\": [\n",
          dev->device_name, dev->platform_name, reps);
  for (int i = 0; i < nrows; i++) {
    /* null where a row has no clstream side (calibration). */
    char attrib[16] = "null", events[32] = "null";
    if (rows[i].attribution)
      snprintf(attrib, sizeof attrib, "\"%s\"", rows[i].attribution);
    if (rows[i].events >= 0)
      snprintf(events, sizeof events, "%.6g", rows[i].events);
    /* clstream rows with a peer: the comparison with it; peer rows: the
     * driver whose rounds they shared. */
    char peer[160] = "";
    if (rows[i].peer)
      snprintf(peer, sizeof peer,
               "\"best_peer\": \"%s\", \"vs_best_peer\": %.6g, \"vs_best_peer_ci95\": [%.6g, "
               "%.6g], \"vs_best_peer_verdict\": \"%s\", ",
               rows[i].peer, rows[i].vs_peer, rows[i].vs_lo, rows[i].vs_hi,
               verdict_of(rows[i].vs_lo, rows[i].vs_hi, 1.0));
    else if (rows[i].rounds)
      snprintf(peer, sizeof peer, "\"rounds\": \"%s\", ", rows[i].rounds);
    fprintf(f,
            "    {\"workload\": \"%s\", \"kind\": \"%s\", \"driver\": \"%s\", \"attribution\": %s, "
            "\"raw_s\": %.9g, \"clstream_s\": %.9g, \"ratio\": %.6g, \"paired_ratio\": %.6g, "
            "\"ci95\": [%.6g, %.6g], \"target\": %.6g, \"verdict\": \"%s\", "
            "\"events_per_launch\": %s, %s\"note\": \"%s\"}%s\n",
            rows[i].workload, rows[i].kind, rows[i].driver, attrib, rows[i].raw, rows[i].lib,
            rows[i].ratio, rows[i].paired, rows[i].lo, rows[i].hi, rows[i].target,
            verdict(&rows[i]), events, peer, rows[i].note, i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
}
