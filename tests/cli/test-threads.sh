#!/usr/bin/env bash
# test-threads.sh: the determinism contract of `sim run --threads N` on the real binary: every shipped
# scenario (scenarios/*.json, scenarios/bench/*.json; the studies' bases are among the first), shortened,
# gives byte-identical CSVs and the same summary.json (but for the wall-clock fields, the thread count and
# the command line in the header) at 0 (the sequential engine), 1, 2, 3, 4 and 8 threads, and without
# --threads (the default: the CPUs this process may use); each block's relay then runs on that many threads
# of its own; `--stats` reports the engine's layout and the relay's; PHOLD's checksum is the same at every
# thread count and partitioning; a zero lookahead is refused with the offending declaration named. Run from
# the source root.
set -u
SIM=$(realpath "$1")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# summary.json without what may differ between thread counts: wall-clock figures, threads, command line
# (and, to compare a --relay-pipeline run, the queue's largest size: that of the run's own queue).
strip() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in ("wall_s","events_per_s","peak_rss_bytes"): d["sim"].pop(k)
if len(sys.argv) > 2: d["sim"].pop("peak_pending")
for k in ("threads","command_line"): d["header"].pop(k)
print(json.dumps(d))' "$@"
}

# name file sets...
scenarios=(
  "tiny|scenarios/tiny.json|stop.heights=500"
  "geo-small|scenarios/geo-small.json|stop.heights=100"
  "pools-2019|scenarios/pools-2019.json|stop.heights=300"
  "pools-2019-pool-delay|scenarios/pools-2019-pool-delay.json|stop.heights=1500"
  "bench-a|scenarios/bench/a.json|stop.heights=40"
  "bench-b|scenarios/bench/b.json|stop.heights=40"
  "bench-c|scenarios/bench/c.json|stop.heights=25"
  "bench-d|scenarios/bench/d.json|stop.heights=40"
)
# Every shipped scenario is in the list (a new one must be added here).
for f in scenarios/*.json scenarios/bench/*.json; do
  if printf '%s\n' "${scenarios[@]}" | grep -qF "|$f|"; then ok; else bad "$f is not in test-threads.sh's list"; fi
done
for b in $(sed -n 's/.*"base": *"\([^"]*\)".*/\1/p' scenarios/studies/*.json | sort -u); do
  f="scenarios/${b#../}"
  if printf '%s\n' "${scenarios[@]}" | grep -qF "|$f|"; then ok; else bad "study base $f is not in the list"; fi
done
# pN: --threads N --relay-pipeline (successive blocks' relays at once; the outputs are the same); s2: --threads 2
# --relay-split (each block's relay over both threads). At exactly 2 threads, --threads 2 and the default (on a
# 2-CPU machine) pipeline the scenarios that allow it and split the others.
counts="0 1 2 3 4 8 default s2 p2 p3 p8"
for entry in "${scenarios[@]}"; do
  IFS='|' read -r name file set <<<"$entry"
  for t in $counts; do
    targ=(--threads "$t")
    [ "$t" = default ] && targ=()
    case $t in p*) targ=(--threads "${t#p}" --relay-pipeline) ;; s*) targ=(--threads "${t#s}" --relay-split) ;; esac
    if ! "$SIM" run "$file" --set "$set" "${targ[@]}" --quiet --out "$tmp/$name-$t" >"$tmp/out" 2>"$tmp/err"; then
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
  for t in $counts; do
    [ "$t" = 1 ] && continue
    dir="$tmp/$name-$t"
    [ -f "$dir/summary.json" ] || continue
    if [ "$(cd "$ref" && ls)" = "$(cd "$dir" && ls)" ]; then ok; else bad "$name --threads $t: other files"; fi
    for f in "$ref"/*.csv; do
      if cmp -s "$f" "$dir/$(basename "$f")"; then ok; else bad "$name --threads $t: $(basename "$f") differs"; fi
    done
    case $t in
    p* | 2 | default)
      strip "$ref/summary.json" pipeline >"$tmp/refp.json"
      strip "$dir/summary.json" pipeline >"$tmp/t.json"
      if cmp -s "$tmp/refp.json" "$tmp/t.json"; then ok; else bad "$name --threads $t: summary.json differs"; fi
      ;;
    *)
      strip "$dir/summary.json" >"$tmp/t.json"
      if cmp -s "$tmp/ref.json" "$tmp/t.json"; then ok; else bad "$name --threads $t: summary.json differs"; fi
      ;;
    esac
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["header"]["threads"])' "$dir/summary.json")
    n=${t#[ps]}
    if [ "$t" = default ]; then want=$(nproc); want=$((want > 256 ? 256 : want)); else want=$((n > 1 ? n : 1)); fi
    if [ "$got" = "$want" ]; then ok; else bad "$name --threads $t: header.threads $got, expected $want"; fi
  done
done

# --stats: the scenarios are one group (the model says why), so one worker and no windows at any count.
"$SIM" run scenarios/tiny.json --set stop.heights=200 --threads 3 --stats --quiet --out "$tmp/st" >"$tmp/out" 2>&1
for w in "partitioned engine, 3 threads requested, 1 worker, 1 group; no windows" "partitioning: pow: one group" \
  "stop.heights must come right after" "barrier_wait_s"; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "--stats: '$w' not in $(head -c 600 "$tmp/out")"; fi
done
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 2 --relay-split --stats --numa-report --quiet \
  --out "$tmp/st2" >"$tmp/out" 2>&1
for w in "the transaction world is changed by every miner's handler" "numa: " "topology adj" "entity records 0-" \
  "The relay kernel took "; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "--stats --numa-report: '$w' not in $(head -c 900 "$tmp/out")"; fi
done
# The relay's line: its threads, the month's groups and lookahead (a 6-ms European link), its windows.
rl=$(grep '^relay: ' "$tmp/out")
if printf '%s' "$rl" | grep -qE "^relay: each block's relay on 2 threads over 82[0-9][0-9] fixed groups \(largest [0-9]+ nodes\), lookahead 6\.000 ms \(link node [0-9]+ -> node [0-9]+\); [0-9.]+ windows per block, [0-9.]+ steps per window \([0-9.]+% skipped: they could not change what the run reads; [0-9]+ block-size classes with bounds of their own\), [0-9.]+% of messages between groups; work balance [0-9.]+ .*barrier wait s per thread: [0-9.]+,[0-9.]+$"; then
  ok
else
  bad "--stats relay line: $rl"
fi
# Without --threads: as many relay threads as CPUs (this process's affinity): at 2, the pipeline (the month
# allows it); else each block's relay over them, used adaptively.
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --stats --quiet --out "$tmp/st5" >"$tmp/out" 2>&1
n=$(nproc)
n=$((n > 64 ? 64 : n))
if [ "$n" = 2 ]; then want="^relay: pipelined on 2 threads \(the engine's among them: it runs relays while it waits\), each block's relay on one: "; else
  want="^relay: each block's relay on $n threads? over "; fi
if grep -qE "$want" "$tmp/out"; then ok; else bad "default threads: $(grep '^relay' "$tmp/out")"; fi
# --threads 2 pipelines the month; a network that cannot (pool-delay: no relay over nodes) runs as before, and
# nothing is said (it was not asked).
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 2 --stats --quiet --out "$tmp/st6" >"$tmp/out" 2>&1
if grep -qE "^relay: pipelined on 2 threads" "$tmp/out"; then ok; else bad "--threads 2: $(grep '^relay' "$tmp/out")"; fi
"$SIM" run scenarios/pools-2019-pool-delay.json --set stop.heights=20 --threads 2 --stats --quiet --out "$tmp/st7" \
  >"$tmp/out" 2>&1
if [ $? -eq 0 ] && ! grep -q "^relay: pipelined" "$tmp/out" && ! grep -q -- "--relay-pipeline" "$tmp/out"; then
  ok
else
  bad "--threads 2 on pool-delay: $(head -c 600 "$tmp/out")"
fi
# A relay that gives up on miners (an uplink so slow that no transfer ends within its 18 minutes): the pipeline
# leaves them without the block as the split and one thread do, with the same bytes.
slow=(scenarios/geo-small.json --set stop.heights=30 --set network.dc_upload_bps=5e-324 --quiet)
"$SIM" run "${slow[@]}" --threads 1 --out "$tmp/sl1" >/dev/null 2>&1
"$SIM" run "${slow[@]}" --threads 2 --relay-split --out "$tmp/sl2" >/dev/null 2>&1
"$SIM" run "${slow[@]}" --threads 2 --stats --out "$tmp/sl3" >"$tmp/out" 2>&1
if [ $? -eq 0 ] && grep -q "^relay: pipelined on 2 threads" "$tmp/out" &&
  cmp -s "$tmp/sl1/blocks.csv" "$tmp/sl2/blocks.csv" && cmp -s "$tmp/sl1/blocks.csv" "$tmp/sl3/blocks.csv" &&
  cmp -s "$tmp/sl1/observations.csv" "$tmp/sl3/observations.csv"; then ok; else
  bad "unreached miners, pipelined: $(head -c 600 "$tmp/out")"
fi
# Tracing blocks relays each block on its own: not pipelined by default (the split's line), refused when asked.
"$SIM" run scenarios/geo-small.json --set stop.heights=20 --threads 2 --trace-blocks 5 --stats --quiet \
  --out "$tmp/tr1" >"$tmp/out" 2>&1
if grep -qE "^relay: each block's relay on 2 threads over " "$tmp/out" && ! grep -q -- "--relay-pipeline" "$tmp/out"; then
  ok
else
  bad "--threads 2 --trace-blocks: $(head -c 600 "$tmp/out")"
fi
"$SIM" run scenarios/geo-small.json --set stop.heights=20 --threads 2 --trace-blocks 5 --relay-pipeline --quiet \
  --out "$tmp/tr2" >"$tmp/out" 2>&1
if grep -qxF "sim: --relay-pipeline: not with --trace-blocks (the network relays each block on its own when it traces blocks); the run goes on without it" "$tmp/out" &&
  cmp -s "$tmp/tr1/trace_blocks.csv" "$tmp/tr2/trace_blocks.csv"; then ok; else
  bad "--relay-pipeline --trace-blocks: $(head -c 600 "$tmp/out")"
fi
"$SIM" run scenarios/tiny.json --relay-pipeline --relay-split --out "$tmp/both" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 2 ] && grep -qF "sim run: --relay-pipeline and --relay-split: choose one" "$tmp/err"; then ok; else
  bad "--relay-pipeline --relay-split: $(cat "$tmp/err")"
fi
# The same windows and steps at 1 and 3 threads (they do not depend on the thread count).
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 1 --stats --quiet --out "$tmp/st3" >"$tmp/out1" 2>&1
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 3 --stats --quiet --out "$tmp/st4" >"$tmp/out3" 2>&1
w1=$(grep -oE '[0-9.]+ windows per block, [0-9.]+ steps per window \([^)]*\), [0-9.]+% of messages' "$tmp/out1")
w3=$(grep -oE '[0-9.]+ windows per block, [0-9.]+ steps per window \([^)]*\), [0-9.]+% of messages' "$tmp/out3")
if [ -n "$w1" ] && [ "$w1" = "$w3" ] && grep -qF "relay on 1 thread over" "$tmp/out1" && grep -qF "work balance 1.00 " "$tmp/out1"; then
  ok
else
  bad "--stats relay at 1 and 3 threads: '$w1' vs '$w3'"
fi
# --relay-pipeline: engaged on the month (blocks start while an earlier block's relay still runs), refused
# with a reason where the network cannot, and with one thread.
"$SIM" run scenarios/pools-2019.json --set stop.heights=300 --threads 2 --relay-pipeline --stats --quiet \
  --out "$tmp/pl" >"$tmp/out" 2>&1
pl=$(grep '^relay: pipelined' "$tmp/out")
pct=$(printf '%s' "$pl" | sed -nE "s/.* blocks \([0-9]+ of them run in parts on the engine's thread\), ([0-9.]+)% of them started while an earlier block's relay still ran.*/\1/p")
if printf '%s' "$pl" | grep -qE "^relay: pipelined on 2 threads \(the engine's among them: it runs relays while it waits\), each block's relay on one: [0-9]+ blocks \([0-9]+ of them run in parts on the engine's thread\)" &&
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 5 else 1)' "${pct:-0}"; then ok; else bad "--relay-pipeline --stats: $pl"; fi
"$SIM" run scenarios/pools-2019-pool-delay.json --set stop.heights=20 --threads 2 --relay-pipeline --quiet \
  --out "$tmp/pl2" >"$tmp/out" 2>&1
if grep -qF -- "--relay-pipeline: this scenario's network relays each block on its own" "$tmp/out"; then ok; else
  bad "--relay-pipeline on pool-delay: $(cat "$tmp/out")"
fi
"$SIM" run scenarios/pools-2019.json --set stop.heights=20 --threads 1 --relay-pipeline --quiet \
  --out "$tmp/pl3" >"$tmp/out" 2>&1
if grep -qF -- "--relay-pipeline: needs --threads 2 or more" "$tmp/out"; then ok; else bad "--relay-pipeline at 1 thread: $(cat "$tmp/out")"; fi
# With an event budget: refused (it would count a different set of events), and the run is the sequential one.
"$SIM" run scenarios/pools-2019.json --set stop.heights=0 --set stop.events=60000 --threads 1 --quiet \
  --out "$tmp/pe1" >/dev/null 2>&1
"$SIM" run scenarios/pools-2019.json --set stop.heights=0 --set stop.events=60000 --threads 2 --relay-pipeline \
  --quiet --out "$tmp/pe2" >"$tmp/out" 2>&1
if grep -qxF -- "sim: --relay-pipeline: not with stop.events (the event budget counts events in the order the run handles them, and the pipeline handles some later than the sequential run does); the run goes on without it" "$tmp/out" && cmp -s "$tmp/pe1/blocks.csv" "$tmp/pe2/blocks.csv" &&
  cmp -s "$tmp/pe1/observations.csv" "$tmp/pe2/observations.csv"; then ok; else
  bad "--relay-pipeline with stop.events: $(cat "$tmp/out")"
fi
# Not asked for, the pipeline is not used with a budget either, and nothing is said.
"$SIM" run scenarios/pools-2019.json --set stop.heights=0 --set stop.events=60000 --threads 2 --stats --quiet \
  --out "$tmp/pe3" >"$tmp/out" 2>&1
if grep -qE "^relay: each block's relay on 2 threads over " "$tmp/out" && ! grep -q -- "--relay-pipeline" "$tmp/out" &&
  cmp -s "$tmp/pe1/blocks.csv" "$tmp/pe3/blocks.csv"; then ok; else
  bad "--threads 2 with stop.events: $(head -c 600 "$tmp/out")"
fi
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
"$SIM" bench scaling --scenario scenarios/geo-small.json --set stop.heights=30 --threads-max 2 >"$tmp/out" 2>&1
for w in "# workload: scenario scenarios/geo-small.json" "relay_s  relay_speedup  relay_threads  windows/block"; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "bench scaling --scenario: '$w' not in $(head -c 900 "$tmp/out")"; fi
done
# Rows seq, 1, 2: the relay's threads (1, 1, 2), the same windows per block and steps per window in each.
rows=$(grep -E '^(seq|1|2) ' "$tmp/out" | awk '{print $1, $7, $8, $9}')
if [ "$(printf '%s\n' "$rows" | awk '{print $2}' | tr '\n' ' ')" = "1 1 2 " ] &&
  [ "$(printf '%s\n' "$rows" | awk '{print $3, $4}' | sort -u | wc -l)" -eq 1 ]; then
  ok
else
  bad "bench scaling --scenario rows: $rows"
fi
# Last, the pipeline at 2 threads: one relay thread a block, the same windows and steps, no barrier wait.
p2=$(grep -E '^p2 ' "$tmp/out" | awk '{print $7, $8, $9, $11}')
if [ "$p2" = "1 $(printf '%s
' "$rows" | awk 'NR==1 {print $3, $4}') 0.000" ]; then ok; else
  bad "bench scaling --scenario p2 row: '$p2' (rows: $rows)"
fi
"$SIM" bench scaling --threads-max 2 --lps 500 --pending 500 --events 50000 >"$tmp/out" 2>&1
for w in "# available parallelism now" "seq " "barrier_wait_s/worker"; do
  if grep -qF -- "$w" "$tmp/out"; then ok; else bad "bench scaling: '$w' not in $(head -c 600 "$tmp/out")"; fi
done
if [ "$(grep -cE '^[12] ' "$tmp/out")" -eq 2 ]; then ok; else bad "bench scaling rows: $(cat "$tmp/out")"; fi
# The core-to-core round trip, before and after the table: a positive number of ns each time, or n/a where the
# other thread did not answer in time (a busy machine: CI runs two tests at once). One CPU: no line at all.
if [ "$(grep -cE '^# core-to-core round trip (now|after): ([1-9][0-9]* ns|n/a \(the other thread)' "$tmp/out")" -eq 2 ]; then
  ok
else
  bad "bench scaling round trip lines: $(grep 'round trip' "$tmp/out")"
fi
"$SIM" bench scaling --threads-max 1 --lps 500 --pending 500 --events 50000 >"$tmp/out" 2>&1
if grep -q "round trip" "$tmp/out"; then bad "bench scaling --threads-max 1 prints a round trip"; else ok; fi
if command -v taskset >/dev/null; then
  taskset -c 0 "$SIM" bench scaling --threads-max 2 --lps 500 --pending 500 --events 50000 >"$tmp/out" 2>&1
  if grep -q "round trip" "$tmp/out"; then bad "bench scaling on one CPU prints a round trip"; else ok; fi
fi

echo "threads: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
