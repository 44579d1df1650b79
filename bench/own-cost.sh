#!/bin/sh
# make bench-own-cost: runs bench/own-cost under callgrind for each driver
# setting and prints instructions per launch, per skipped launch while
# launches are in flight, and per skipped launch with nothing in flight
# (counts of instructions are repeatable here, unlike times).
# Usage: own-cost.sh BUILDDIR [N]
set -eu
b=${1:-.}
n=${2:-20000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-24s %14s %14s %14s %10s %10s %10s %14s %10s\n' driver "instr/launch" "instr/skip" \
  "instr/idle-skip" "allocs/l" "allocs/s" "allocs/i" "instr/replayed" "allocs/r"
for d in event scheduler:sequential scheduler:interleave; do
  valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg.%p" \
    "$b/bench/own-cost" --launches "$n" --driver "$d" > "$out/stdout" 2> "$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
  }
  # Each dump's "summary:" line is the instructions of that phase.
  launches=$(grep -l 'Client Request: launches' "$out"/cg.* | head -n 1)
  skips=$(grep -l 'Client Request: skips' "$out"/cg.* | head -n 1)
  il=$(awk '/^summary:/ {print $2}' "$launches")
  idle=$(grep -l 'Client Request: idle-skips' "$out"/cg.* | head -n 1)
  is=$(awk '/^summary:/ {print $2}' "$skips")
  ii=$(awk '/^summary:/ {print $2}' "$idle")
  al=$(awk '/^launch:/ {print $4}' "$out/stdout")
  as=$(awk '/^skip:/ {print $4}' "$out/stdout")
  ai=$(awk '/^idle:/ {print $4}' "$out/stdout")
  replays=$(grep -l 'Client Request: replays' "$out"/cg.* | head -n 1)
  ir=$(awk '/^summary:/ {print $2}' "$replays")
  ar=$(awk '/^replay:/ {print $4}' "$out/stdout")
  printf '%-24s %14s %14s %14s %10s %10s %10s %14s %10s\n' "$d" \
    "$(awk -v a="$il" -v n="$n" 'BEGIN { printf "%.0f", a / n }')" \
    "$(awk -v a="$is" -v n="$n" 'BEGIN { printf "%.0f", a / n }')" \
    "$(awk -v a="$ii" -v n="$n" 'BEGIN { printf "%.0f", a / n }')" "$al" "$as" "$ai" \
    "$(awk -v a="$ir" -v n="$n" 'BEGIN { printf "%.0f", a / (int(n / 100) * 100) }')" "$ar"
  rm -f "$out"/cg.*
done
