#!/bin/sh
# clstream-info --json (issue 18): valid JSON (python3 -m json.tool, from
# configure's PYTHON3), the context's device and driver in it, strings
# escaped (a $CLS_DEVICE with a quote, a backslash and a tab matches no
# device: its text comes back in the error), exit 1 then.
#
# Run by `make check` from the build directory with $top_builddir exported.
# Exit 0 pass, 1 fail, 77 skip (no python3, or no OpenCL device at all).

top_builddir=${top_builddir:-.}
info=$top_builddir/tools/clstream-info
out=${TMPDIR:-/tmp}/clstream-info-json.$$
trap 'rm -f "$out" "$out.err"' 0

if [ -z "${PYTHON3:-}" ]; then
  echo "SKIP: configure found no python3 to validate the JSON with"
  exit 77
fi
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# check WHAT EXPECTED_RC PYTHON_ASSERTION: $out must parse, the exit status
# must be EXPECTED_RC and the assertion (on `d`, the parsed object) hold.
check() {
  "$PYTHON3" -m json.tool "$out" >/dev/null 2>"$out.err" ||
    { fail "$1: not valid JSON:"; cat "$out.err"; cat "$out"; return; }
  [ "$rc" = "$2" ] || fail "$1: exit status $rc, not $2"
  "$PYTHON3" -c "import json, sys
d = json.load(open(sys.argv[1]))
assert $3, 'assertion failed: ' + sys.argv[2]" "$out" "$3" ||
    { fail "$1: $3"; cat "$out"; }
}

unset CLS_DEVICE
"$info" --json >"$out"
rc=$?
if [ "$rc" = 1 ] && grep -q '"no OpenCL device found"' "$out"; then
  echo "SKIP: no OpenCL device"
  exit 77
fi
check "--json" 0 "d['clstream'] and d['platforms'] and d['context']['driver'] and d['context']['device']['name'] and 'quirks' in d and d['drivers']['default'] and d['context']['attribution']['mode'] in ('ranged', 'exact') and d['context']['attribution']['why'] and d['context']['attribution']['event_every'] >= 1"
cat "$out"

# The context device's image formats (issue 33): three lists, each entry
# "ORDER/TYPE", CL_RGBA/CL_FLOAT among them where the device has images.
check "image formats" 0 "all(t in d['image_formats'] for t in ('2d', '3d', '2d_array')) and all('/' in x for x in d['image_formats']['2d']) and (not d['image_formats']['2d'] or 'CL_RGBA/CL_FLOAT' in d['image_formats']['2d'])"

# F8a: exact on request, and said so.
CLS_PRECISE=1 "$info" --json >"$out"
rc=$?
check "CLS_PRECISE=1" 0 "d['context']['attribution']['mode'] == 'exact' and 'CLS_PRECISE' in d['context']['attribution']['why']"

CLS_DEVICE="we\"ird\\	name" "$info" --json >"$out"
rc=$?
check "CLS_DEVICE with a quote, a backslash and a tab" 1 "d['selection']['CLS_DEVICE'] == 'we\"ird\\\\\\tname' and d['context']['error']['code'] in ('CLS_ENODEV', 'CLS_ECONFIG')"

[ "$failures" = 0 ] || exit 1
echo "PASS: clstream-info --json"
