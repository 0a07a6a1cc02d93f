#!/usr/bin/env bash
# test-outputs.sh: results you can trust. Drives the real `sim` binary on the ways a results directory or an output
# file can be mixed, half-written, misplaced or taken from a device: each case with its exact expected outcome
# (sim/app/output.h, sim/core/outfile.h; docs/outputs.md "Outputs"). Run from the source root.
. "$(dirname "$0")/lib.sh" "$@"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; }
listing() { (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | tr '\n' ' '); }
# The seed in a summary.json and its block count against blocks.csv's rows: one run's files or not.
consistent() { # DIR DESC
  python3 - "$1" <<'EOF' && ok || bad "$2: files of different runs in $1"
import csv, json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
rows = list(csv.DictReader(open(d + "/blocks.csv")))
blocks = s["chain"]["blocks_total"]
sys.exit(0 if len(rows) == blocks else 1)
EOF
}
# Waits until the lock file of results directory DIR names a pid (a writer holds it); at most ~20 s.
wait_lock() { # DIR
  local lock
  lock="$(dirname "$1")/.$(basename "$1").sim-lock"
  for _ in $(seq 200); do
    [ -s "$lock" ] && return 0
    sleep 0.1
  done
  return 1
}

cd "$tmp"
cp "$ROOT/scenarios/tiny.json" "$ROOT/scenarios/geo-small.json" .

# --- 1. a results directory holds one run's files: the second run replaces the first whole ---
expect_rc 0 "geo-small with EMC logs into mix" -- "$SIM" run geo-small.json -o mix -q --set stop.heights=50 --emc-logs
[ -d mix/emc ] && [ -f mix/observations.csv ] && ok || bad "geo-small wrote no emc/ or observations.csv: $(listing mix)"
expect_rc 0 "tiny into the same mix" -- "$SIM" run tiny.json -o mix -q --set stop.heights=50
is "$(listing mix)" "./.sim-result ./blocks.csv ./pools.csv ./runs.csv ./summary.json " "mix after tiny: tiny's files only"
contains mix/summary.json '"scenario_file": "tiny.json"' "mix/summary.json is tiny's"
consistent mix "mix"
is "$(ls -A . | grep -c '^\.mix\.')" "0" "nothing left beside mix (staging, lock)"
contains mix/.sim-result "A complete result of \`sim run\`." "marker text"

# make run twice: the default results/<name>/ is replaced, not refused
expect_rc 0 "default directory, first run" -- "$SIM" run tiny.json -q --set stop.heights=20
expect_rc 0 "default directory, second run" -- "$SIM" run tiny.json -q --set stop.heights=30
contains results/tiny/summary.json '"stop.heights=30"' "second run's summary in results/tiny"
consistent results/tiny "results/tiny"

# results of an older sim (no marker; a summary.json whose header names sim) are recognised and replaced
mkdir old && cp mix/summary.json mix/blocks.csv old/ && echo stale >old/stale.txt
expect_rc 0 "run into an older result" -- "$SIM" run tiny.json -o old -q --set stop.heights=20
[ ! -e old/stale.txt ] && ok || bad "older result not replaced whole"

# --- a directory sim did not make is refused, untouched ---
mkdir mine && echo "my notes" >mine/notes.txt && mkdir mine/sub && echo x >mine/sub/y
before=$(listing mine)
expect_rc 2 "run into a directory of other files" -- "$SIM" run tiny.json -o mine -q --set stop.heights=20
is "$(cat "$tmp/err")" "sim run: mine: not empty and not a results directory of sim (no .sim-result in it); nothing in it was touched: choose another output directory or remove it" "refusal message"
is "$(listing mine)" "$before" "refused directory untouched"
is "$(cat mine/notes.txt)" "my notes" "refused directory's file untouched"
expect_rc 2 "replay into a directory of other files" -- "$SIM" replay "$ROOT/tests/data/emc-rinkeby-2018-09" -o mine -q
contains "$tmp/err" "mine: not empty and not a results directory of sim" "replay refusal message"
is "$(listing mine)" "$before" "replay left the refused directory untouched"
echo data >afile
expect_rc 2 "run into a regular file" -- "$SIM" run tiny.json -o afile -q
is "$(cat "$tmp/err")" "sim run: afile: exists and is not a directory; nothing was written" "file refusal message"
is "$(cat afile)" "data" "file untouched"
mkdir empty
expect_rc 0 "run into an empty directory" -- "$SIM" run tiny.json -o empty -q --set stop.heights=20
consistent empty "empty"

# a link to a results directory: the directory is replaced, the link stays
ln -s empty link
expect_rc 0 "run through a link" -- "$SIM" run tiny.json -o link -q --set stop.heights=25 --seed 3
[ -L link ] && ok || bad "the link was replaced"
contains empty/summary.json '"seed": 3' "the linked directory holds the new run"
ln -s nowhere dangling
expect_rc 2 "run into a dangling link" -- "$SIM" run tiny.json -o dangling -q
contains "$tmp/err" "sim run: dangling: a symbolic link to nothing" "dangling link message"

# --- 2. two writers of one directory: the second is refused at once, naming the other ---
"$SIM" run "$ROOT/scenarios/pools-2019.json" -o busy -q >/dev/null 2>"$tmp/busy.err" &
first=$!
pids+=("$first")
if wait_lock "$tmp/busy"; then
  expect_rc 2 "second writer" -- timeout 20 "$SIM" run tiny.json -o busy -q --set stop.heights=20
  is "$(cat "$tmp/err")" "sim run: busy: another sim process (pid $first) is writing this results directory; nothing was written" "busy message"
  [ ! -e busy ] && ok || bad "the refused writer wrote busy/"
  expect_rc 2 "replay as second writer" -- timeout 20 "$SIM" replay "$ROOT/tests/data/emc-rinkeby-2018-09" -o busy -q
  contains "$tmp/err" "busy: another sim process (pid $first)" "replay busy message"
else
  bad "the first writer never took the lock"
fi
# --- killed mid-write: nothing of it at the target, its staging directory removed by the next writer ---
kill -9 "$first"
wait "$first" 2>/dev/null
[ ! -e busy ] && ok || bad "a killed run left busy/: $(listing busy)"
ls -A | grep -q '^\.busy\.sim-new-' && ok || bad "no staging directory left by the killed run (the test needs one)"
expect_rc 0 "next writer after a kill" -- "$SIM" run tiny.json -o busy -q --set stop.heights=20
is "$(ls -A | grep -c '^\.busy\.')" "0" "the next writer removed the killed run's leftovers"
consistent busy "busy"

# killed while replacing an older result: the old result stays whole
cp -r busy busy-before
"$SIM" run "$ROOT/scenarios/pools-2019.json" -o busy -q --emc-logs >/dev/null 2>&1 &
k=$!
pids+=("$k")
wait_lock "$tmp/busy" && sleep 1
kill -9 "$k"
wait "$k" 2>/dev/null
diff -r busy-before busy >/dev/null && ok || bad "a killed run changed the old result"
# SIGINT: exit 130, the old result untouched, no leftovers
"$SIM" run "$ROOT/scenarios/pools-2019.json" -o busy -q >/dev/null 2>"$tmp/int.err" &
k=$!
pids+=("$k")
wait_lock "$tmp/busy" && sleep 0.5
kill -INT "$k"
wait "$k"
is "$?" "130" "interrupted run's exit code"
diff -r busy-before busy >/dev/null && ok || bad "an interrupted run changed the old result"
is "$(ls -A | grep '^\.busy\.' | grep -vc '^\.busy\.sim-new-')" "0" "an interrupted run left its lock"
expect_rc 0 "after the kills" -- "$SIM" run tiny.json -o busy -q --set stop.heights=20
is "$(ls -A | grep -c '^\.busy\.')" "0" "no leftovers after the next run"

# four runs of different seeds at once into one directory: each either refused or whole; the result is one run's
for s in 1 2 3 4; do
  "$SIM" run geo-small.json -o four -q --set stop.heights=300 --seed $s >/dev/null 2>"$tmp/four$s.err" &
  pids+=($!)
done
won=0
for s in 1 2 3 4; do
  wait "${pids[-1]}" 2>/dev/null
  unset 'pids[-1]'
done
for s in 1 2 3 4; do
  if [ -s "$tmp/four$s.err" ]; then
    grep -qF "sim run: four: another sim process (pid " "$tmp/four$s.err" && ok || bad "four: run $s: $(cat "$tmp/four$s.err")"
  else
    won=$((won + 1))
  fi
done
[ "$won" -ge 1 ] && ok || bad "four: no run succeeded"
consistent four "four concurrent runs"
seed=$(python3 -c 'import json; print(json.load(open("four/summary.json"))["header"]["seed"])')
python3 - "$seed" <<'EOF' && ok || bad "four: observations.csv is not of the summary's run"
import csv, json, sys
s = json.load(open("four/summary.json"))
rows = sum(1 for _ in csv.DictReader(open("four/observations.csv")))
sys.exit(0 if rows == s["chain"]["blocks_total"] else 1)
EOF

# --- sim sweep never writes into (or deletes from) a directory that is not its sweep directory ---
printf '%s\n' '{"name": "s", "base": "tiny.json", "replicates": 1, "sets": ["stop.heights=30"],' \
  ' "parameters": [{"path": "network.delay.median_ms", "values": [100, 300]}]}' >s.json
mkdir -p notsweep/runs/p0-r0 && echo keep >notsweep/runs/p0-r0/mine.txt && echo keep >notsweep/table.csv
before=$(listing notsweep)
expect_rc 2 "sweep into a directory that is not a sweep's" -- "$SIM" sweep s.json --out notsweep --quiet
is "$(cat "$tmp/err")" "sim sweep: notsweep: not empty and has no sweep.json: not a sweep results directory; nothing in it was touched: use another --out" "sweep refusal message"
is "$(listing notsweep)" "$before" "sweep left the directory untouched"
expect_rc 2 "sweep --merge-only on it" -- "$SIM" sweep s.json --out notsweep --merge-only --quiet
is "$(listing notsweep)" "$before" "sweep --merge-only left the directory untouched"
expect_rc 0 "sweep into a new directory" -- "$SIM" sweep s.json --out sw --quiet
is "$(ls -A sw/runs | tr '\n' ' ')" "p0-r0 p1-r0 " "sweep runs, no temp directories left"
is "$(ls -A sw/runs/p0-r0 | tr '\n' ' ')" ".sim-result blocks.csv pools.csv runs.csv summary.json " "a sweep run is a complete result"

# --- 3. single output files: a device or FIFO written in place, a link's target replaced, regular files atomic ---
"$SIM" run tiny.json -o a -q --set stop.heights=40 && "$SIM" run tiny.json -o b -q --set stop.heights=40 --seed 9
if mknod null c 1 3 2>/dev/null; then
  expect_rc 0 "compare --json to a device" -- "$SIM" compare a b --json null
  [ -c null ] && ok || bad "compare replaced the device null"
  expect_rc 0 "report --out to a device" -- "$SIM" report a --out null --quiet
  [ -c null ] && ok || bad "report replaced the device null"
  expect_rc 0 "calibrate -o and --report to a device" -- "$SIM" calibrate "$ROOT/tests/data/emc-rinkeby-2018-09" -o null --report null --quiet
  [ -c null ] && ok || bad "calibrate replaced the device null"
else
  echo "note: mknod not permitted here: device cases skipped"
fi
mkfifo fifo
(timeout 30 cat fifo >fifo.got) &
reader=$!
expect_rc 0 "compare --json to a FIFO" -- timeout 30 "$SIM" compare a b --json fifo
wait "$reader"
[ -p fifo ] && ok || bad "compare replaced the FIFO"
contains fifo.got '"command": "compare"' "what came through the FIFO"
echo old >target.json
ln -s target.json link.json
expect_rc 0 "compare --json to a link" -- "$SIM" compare a b --json link.json
[ -L link.json ] && ok || bad "compare replaced the link"
is "$(readlink link.json)" "target.json" "link unchanged"
contains target.json '"command": "compare"' "the link's target holds the JSON"
ln -s sub/new.json dangling.json
expect_rc 0 "calibrate -o to a dangling link" -- "$SIM" calibrate "$ROOT/tests/data/emc-rinkeby-2018-09" -o dangling.json -q
[ -L dangling.json ] && [ -f sub/new.json ] && ok || bad "a dangling link's target was not created"
"$SIM" compare a b --json /dev/stdout >stdout.txt 2>"$tmp/err"
is "$?" "0" "compare --json /dev/stdout"
is "$(head -c 1 stdout.txt)" "{" "JSON first on stdout"
contains stdout.txt "shared metrics" "the table after it"
chmod 0600 target.json
"$SIM" compare a b --json target.json >/dev/null
is "$(stat -c %a target.json)" "600" "a replaced file keeps its mode"
expect_rc 2 "compare --json to a directory" -- "$SIM" compare a b --json a
is "$(cat "$tmp/err")" "sim compare: a: is a directory (a file belongs here)" "directory message"
[ -z "$(ls -A | grep '\.tmp-')" ] && ok || bad "temp files left: $(ls -A | grep '\.tmp-')"
# report --out into a results directory of sim's adds the page; the next run replaces both
expect_rc 0 "report into the run directory" -- "$SIM" report a --quiet
[ -f a/report.html ] && ok || bad "report.html not written"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
