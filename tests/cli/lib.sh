#!/usr/bin/env bash
# lib.sh: what every CLI test script shares, sourced first: `. "$(dirname "$0")/lib.sh" "$@"`. Sets SIM (the
# binary given as $1, if any), ROOT (the source root: scripts run from it), a temp directory $tmp removed on
# exit (with the script's own `cleanup` first, if it defines one), the pass/fail counters, and the checks below.
set -u
SIM=${1:+$(realpath "$1")}
ROOT=$(pwd)
tmp=$(mktemp -d)
trap 'if declare -F cleanup >/dev/null; then cleanup; fi; rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect_rc WANT DESC -- CMD...: runs CMD with stdout/stderr in $tmp/out, $tmp/err.
expect_rc() {
  local want=$1 desc=$2
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$desc: exit $rc, expected $want; stderr: $(head -c 400 "$tmp/err")"; fi
}
contains() { # FILE TEXT DESC
  if LC_ALL=C grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi
}
same_file() { # A B DESC
  if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ: $(diff "$1" "$2" 2>&1 | head -c 600)"; fi
}
is() { # GOT WANT DESC
  if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', expected '$2'"; fi
}
