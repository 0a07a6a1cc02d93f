#!/usr/bin/env bash
# test-threads.sh: the determinism contract of `sim run --threads N` on the real binary: every shipped
# scenario (shortened) gives byte-identical CSVs and the same summary.json (but for the wall-clock fields,
# the thread count and the command line in the header) at 0 (the sequential engine), 1, 2 and 3 threads;
# `--stats` reports the layout; PHOLD's checksum is the same at every thread count and partitioning; a
# zero lookahead is refused with the offending declaration named. Run from the source root.
set -u
SIM=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# summary.json without what may differ between thread counts: wall-clock figures, threads, command line.
strip() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in ("wall_s","events_per_s","peak_rss_bytes"): d["sim"].pop(k)
for k in ("threads","command_line"): d["header"].pop(k)
print(json.dumps(d))' "$1"
}

# name file sets...
scenarios=(
  "tiny|scenarios/tiny.json|stop.heights=500"
  "geo-small|scenarios/geo-small.json|stop.heights=100"
  "pools-2019|scenarios/pools-2019.json|stop.heights=60"
  "pools-2019-pool-delay|scenarios/pools-2019-pool-delay.json|stop.heights=1500"
  "bench-a|scenarios/bench/a.json|stop.heights=40"
)
for entry in "${scenarios[@]}"; do
  IFS='|' read -r name file set <<<"$entry"
  for t in 0 1 2 3; do
    if ! "$SIM" run "$file" --set "$set" --threads "$t" --quiet --out "$tmp/$name-$t" >"$tmp/out" 2>"$tmp/err"; then
      bad "$name --threads $t: exit $?: $(head -c 300 "$tmp/err")"
      continue
    fi
    ok
  done
  ref="$tmp/$name-1"
  [ -f "$ref/summary.json" ] || continue
  strip "$ref/summary.json" >"$tmp/ref.json"
  # The run did something: blocks were mined.
  if [ "$(wc -l <"$ref/blocks.csv")" -gt 20 ]; then ok; else bad "$name: blocks.csv too short"; fi
  for t in 0 2 3; do
    dir="$tmp/$name-$t"
    [ -f "$dir/summary.json" ] || continue
    if [ "$(cd "$ref" && ls)" = "$(cd "$dir" && ls)" ]; then ok; else bad "$name --threads $t: other files"; fi
    for f in "$ref"/*.csv; do
      if cmp -s "$f" "$dir/$(basename "$f")"; then ok; else bad "$name --threads $t: $(basename "$f") differs"; fi
    done
    strip "$dir/summary.json" >"$tmp/t.json"
    if cmp -s "$tmp/ref.json" "$tmp/t.json"; then ok; else bad "$name --threads $t: summary.json differs"; fi
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["header"]["threads"])' "$dir/summary.json")
    want=$((t > 1 ? t : 1))
    if [ "$got" = "$want" ]; then ok; else bad "$name --threads $t: header.threads $got, expected $want"; fi
  done
done

# --stats: the scenarios are one group (the model says why), so one worker and no windows at any count.
"$SIM" run scenarios/tiny.json --set stop.heights=200 --threads 3 --stats --quiet --out "$tmp/st" >"$tmp/out" 2>&1
for w in "partitioned engine, 3 threads requested, 1 worker, 1 group; no windows" "partitioning: pow: one group" \
  "stop.heights must come right after" "barrier_wait_s"; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "--stats: '$w' not in $(head -c 600 "$tmp/out")"; fi
done
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 2 --stats --numa-report --quiet \
  --out "$tmp/st2" >"$tmp/out" 2>&1
for w in "the transaction world is changed by every miner's handler" "numa: " "topology adj" "entity records 0-" \
  "The relay kernel took " "no schedule on 2 threads can beat "; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "--stats --numa-report: '$w' not in $(head -c 900 "$tmp/out")"; fi
done
"$SIM" run scenarios/tiny.json --threads 999 --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 2 ] && grep -qF "sim run: --threads must be in [0, 256] (got 999)" "$tmp/err"; then ok; else
  bad "--threads 999: $(cat "$tmp/err")"
fi

# PHOLD on windows: the same checksum, events and windows at every thread count and partitioning.
phold() { "$SIM" bench phold --lps 3000 --pending 3000 --events 400000 --lookahead 0.05 "$@"; }
fields() { sed -E 's/.*(events=[0-9]+).*(checksum=[0-9a-f]+).*(windows=[0-9]+).*/\1 \2 \3/'; }
phold --threads 1 | fields >"$tmp/p1"
if grep -qE '^events=[0-9]+ checksum=[0-9a-f]{16} windows=[0-9]+$' "$tmp/p1"; then ok; else bad "phold: $(cat "$tmp/p1")"; fi
for args in "--threads 2" "--threads 3" "--threads 3 --partition round-robin" "--threads 4"; do
  # shellcheck disable=SC2086
  phold $args | fields >"$tmp/pn"
  if cmp -s "$tmp/p1" "$tmp/pn"; then ok; else bad "phold $args: $(cat "$tmp/pn") vs $(cat "$tmp/p1")"; fi
done
"$SIM" bench phold --threads 2 --events 1000 >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 2 ] && grep -qF "sim bench phold: --threads needs --lookahead S > 0 (the least delay of every event is the windows' length; with 0 the engine cannot make windows)" "$tmp/err"; then
  ok
else
  bad "phold without lookahead on threads: $(cat "$tmp/err")"
fi
"$SIM" bench scaling --threads-max 2 --lps 500 --pending 500 --events 50000 >"$tmp/out" 2>&1
for w in "# available parallelism now" "seq " "barrier_wait_s/worker"; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "bench scaling: '$w' not in $(head -c 600 "$tmp/out")"; fi
done
if [ "$(grep -cE '^[12] ' "$tmp/out")" -eq 2 ]; then ok; else bad "bench scaling rows: $(cat "$tmp/out")"; fi

echo "threads: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
