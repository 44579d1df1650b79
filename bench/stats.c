/* clstream-bench's statistics and table: a row per workload, driver and
 * attribution mode, from the paired timings (each pair's ratio, their
 * median and its 95 % interval, bench.h), the targets and their verdict;
 * printed as the run goes, and as JSON at the end (--json). */
#include "clstream-bench.h"

#include <stdio.h>
#include <string.h>

struct row rows[CLS_BENCH_MAX_ROWS];
int nrows;
int reps = 21;

/* The targets, as clstream/raw time ratios (saxpy's is on throughput:
 * >= 0.98x of raw, i.e. time <= 1/0.98). */
double target_of(const char *workload) {
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

/* "met" only when the whole interval is at or under the target, "missed"
 * only when it is all above; otherwise this run cannot tell. */
static const char *verdict(const struct row *row) {
  if (row->target <= 0)
    return "-";
  if (row->hi <= row->target)
    return "met";
  if (row->lo > row->target)
    return "missed";
  return "unclear";
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
  double pr[MAX_REPS];
  for (int i = 0; i < reps; i++)
    pr[i] = tl[i] / tr[i];
  row->paired = bench_median_ci(pr, reps, &row->lo, &row->hi);
  row->raw = bench_median(tr, reps);
  row->lib = bench_median(tl, reps);
  row->ratio = row->lib / row->raw;
  return row;
}

void print_header(void) {
  printf("%-11s %-22s %-6s %9s %9s %6s %6s %-13s %-13s %9s %s\n", "workload", "driver",
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
  printf("%-11s %-22s %-6s %9.2f %9.2f %6.3f %6.3f %-13s %-13s %9s %s\n", row->workload,
         row->driver, attrib_col(row), row->raw * 1e3, row->lib * 1e3, row->ratio, row->paired,
         ci, tg, events_col(row, ev, sizeof ev), row->note);
  fflush(stdout);
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
    fprintf(f,
            "    {\"workload\": \"%s\", \"kind\": \"%s\", \"driver\": \"%s\", \"attribution\": %s, "
            "\"raw_s\": %.9g, \"clstream_s\": %.9g, \"ratio\": %.6g, \"paired_ratio\": %.6g, "
            "\"ci95\": [%.6g, %.6g], \"target\": %.6g, \"verdict\": \"%s\", "
            "\"events_per_launch\": %s, \"note\": \"%s\"}%s\n",
            rows[i].workload, rows[i].kind, rows[i].driver, attrib, rows[i].raw, rows[i].lib,
            rows[i].ratio, rows[i].paired, rows[i].lo, rows[i].hi, rows[i].target,
            verdict(&rows[i]), events, rows[i].note, i + 1 < nrows ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  fclose(f);
}
