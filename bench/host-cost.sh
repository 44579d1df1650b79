#!/bin/sh
# make bench-host-cost: instructions the host thread executes per launch,
# raw OpenCL and clstream, for the workloads where the host's work is the
# cost (tiny-chain, ping-pong, fan), under callgrind.  Unlike times on a
# shared machine, these counts repeat; the OpenCL runtime's instructions on
# the host thread are included (they are what a layer's extra calls cost),
# its worker threads' are not.  clstream is measured in both attribution
# modes (F8a): ranged (where the device allows it) and exact (precise=1),
# each against the same raw run; the attrib column is the mode in force.
# The *-args workloads (arguments given as users give them) also measure
# the peers built in (peer boost: Boost.Compute), against the same raw run;
# their attrib column names the peer.
# Usage: host-cost.sh BUILDDIR [DRIVERS [WORKLOADS]]
set -eu
b=${1:-.}
drivers=${2:-event scheduler:sequential scheduler:interleave}
workloads=${3:-tiny-chain ping-pong fan tiny-chain-args ping-pong-args fan-args}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-15s %-22s %-6s %14s %14s %8s\n' workload driver attrib "raw instr/l" "cls instr/l" ratio
for d in $drivers; do
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg.%p" \
    "$b/bench/clstream-bench" --callgrind --reps 5 --drivers "$d" \
    --workloads "$(printf '%s' "$workloads" | tr ' ' ',')" > "$out/stdout" 2> "$out/stderr" || {
    cat "$out/stderr" >&2
    exit 1
  }
  # One dump per measured run; its thread 1 file (the host thread) holds
  # "desc: Trigger: Client Request: host WORKLOAD DRIVER SIDE LAUNCHES",
  # SIDE raw, the clstream context's attribution (ranged or exact), or a
  # peer's name (boost).
  for f in "$out"/cg.*-01; do
    awk '/^desc: Trigger: Client Request: host / { w = $6; d = $7; s = $8; n = $9 }
         /^summary:/ { if (w != "") printf "%s %s %s %.0f\n", w, d, s, $2 / n }' "$f"
  done > "$out/rows"
  for w in $workloads; do
    raw=$(awk -v w="$w" '$1 == w && $3 == "raw" { print $4; exit }' "$out/rows")
    # Both contexts, ranged first (a device without ranged attribution
    # gives two "exact" rows), then the peers.
    sides=$(awk -v w="$w" '$1 == w && ($3 == "ranged" || $3 == "exact") {
                             printf "%s:%s\n", $3, $4 }' "$out/rows" | sort -r
      awk -v w="$w" '$1 == w && $3 != "raw" && $3 != "ranged" && $3 != "exact" {
                       printf "%s:%s\n", $3, $4 }' "$out/rows")
    if [ -z "$raw" ] || [ "$(printf '%s\n' "$sides" | grep -c -E '^(ranged|exact):')" != 2 ]; then
      echo "host-cost.sh: no dump for $w under $d" >&2
      exit 1
    fi
    for side in $sides; do
      printf '%-15s %-22s %-6s %14s %14s %8s\n' "$w" "$d" "${side%%:*}" "$raw" "${side#*:}" \
        "$(awk -v a="${side#*:}" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')"
    done
  done
  rm -f "$out"/cg.*
done
