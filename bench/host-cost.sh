#!/bin/sh
# make bench-host-cost: instructions the host thread executes per launch,
# raw OpenCL and clstream, for the workloads where the host's work is the
# cost (tiny-chain, ping-pong, fan), under callgrind.  Unlike times on a
# shared machine, these counts repeat; the OpenCL runtime's instructions on
# the host thread are included (they are what a layer's extra calls cost),
# its worker threads' are not.
# Usage: host-cost.sh BUILDDIR [DRIVERS]
set -eu
b=${1:-.}
drivers=${2:-event scheduler:sequential scheduler:interleave}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-11s %-22s %14s %14s %8s\n' workload driver "raw instr/l" "cls instr/l" ratio
for d in $drivers; do
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg.%p" \
    "$b/bench/clstream-bench" --callgrind --reps 5 --drivers "$d" \
    --workloads tiny-chain,ping-pong,fan > "$out/stdout" 2> "$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
  }
  # One dump per measured run; its thread 1 file (the host thread) holds
  # "desc: Trigger: Client Request: host WORKLOAD DRIVER SIDE LAUNCHES".
  for f in "$out"/cg.*-01; do
    awk '/^desc: Trigger: Client Request: host / { w = $6; d = $7; s = $8; n = $9 }
         /^summary:/ { if (w != "") printf "%s %s %s %.0f\n", w, d, s, $2 / n }' "$f"
  done > "$out/rows"
  for w in tiny-chain ping-pong fan; do
    raw=$(awk -v w="$w" '$1 == w && $3 == "raw" { print $4 }' "$out/rows")
    cls=$(awk -v w="$w" '$1 == w && $3 == "clstream" { print $4 }' "$out/rows")
    if [ -z "$raw" ] || [ -z "$cls" ]; then
      echo "host-cost.sh: no dump for $w under $d" >&2
      exit 1
    fi
    printf '%-11s %-22s %14s %14s %8s\n' "$w" "$d" "$raw" "$cls" \
      "$(awk -v a="$cls" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')"
  done
  rm -f "$out"/cg.*
done
