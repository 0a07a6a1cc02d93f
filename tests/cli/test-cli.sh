#!/usr/bin/env bash
# test-cli.sh: drives the real `sim` binary: help, validate on good and bad files (exit code and exact
# message), runs that must be byte-identical, bad output directories, interruption. Run from the source root.
set -u
SIM=$(realpath "$1")
ROOT=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
  if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi
}
same_file() { # A B DESC
  if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi
}
# JSON without the wall-clock fields, the only ones allowed to differ between runs of one seed.
strip_wallclock() {
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in ("wall_s","events_per_s","peak_rss_bytes"): d["sim"].pop(k)
print(json.dumps(d, sort_keys=False))' "$1"
}

# --- help and usage ---
expect_rc 0 "sim --help" -- "$SIM" --help
contains "$tmp/out" "Usage: sim" "sim --help"
for c in run validate models bench numa; do contains "$tmp/out" "  $c" "sim --help lists $c"; done
expect_rc 0 "sim --version" -- "$SIM" --version
contains "$tmp/out" "sim 0.1.0" "version"
for c in run validate models "bench phold" "numa predict" "numa tune" "numa measure" "numa place"; do
  expect_rc 0 "sim $c --help" -- "$SIM" $c --help
  contains "$tmp/out" "Usage:" "sim $c --help"
done
expect_rc 2 "no command" -- "$SIM"
expect_rc 2 "unknown command" -- "$SIM" frobnicate
contains "$tmp/err" "sim: unknown command 'frobnicate'" "unknown command message"
expect_rc 2 "run without scenario" -- "$SIM" run
contains "$tmp/err" "sim run: missing SCENARIO" "run without scenario message"
expect_rc 2 "run with unknown option" -- "$SIM" run --bogus scenarios/tiny.json
contains "$tmp/err" "Unknown option --bogus" "unknown option message"
expect_rc 2 "bad seed" -- "$SIM" run scenarios/tiny.json --seed -3
contains "$tmp/err" "sim run: --seed must be an integer >= 0" "bad seed message"

# --- models ---
expect_rc 0 "models" -- "$SIM" models
for w in "family delay:" "lognormal" "median_ms" "no-self-uncle" "pool-delay" "hash_share" "settle_heights"; do
  contains "$tmp/out" "$w" "sim models lists $w"
done
expect_rc 2 "models unknown family" -- "$SIM" models nosuch
contains "$tmp/err" "sim models: unknown family 'nosuch' (expected one of: scenario, network, uncle_rule, delay, relay, jitter, numa_policy, numa_app)" "models unknown family message"
expect_rc 0 "models relay" -- "$SIM" models relay
contains "$tmp/out" "geth-1.8.23" "models relay lists geth"
contains "$tmp/out" "bitcoin-compact" "models relay lists bitcoin-compact"

# --- validate ---
expect_rc 0 "validate shipped scenarios" -- "$SIM" validate scenarios/*.json
contains "$tmp/out" "scenarios/pools-2019.json: ok" "validate ok line"
for f in tests/data/bad/*.json; do
  expect_rc 2 "validate $f" -- "$SIM" validate "$f"
  if diff -u "${f%.json}.err" "$tmp/err" >"$tmp/diff"; then ok; else bad "message for $f: $(cat "$tmp/diff")"; fi
done
expect_rc 2 "validate missing file" -- "$SIM" validate "$tmp/nope.json"
if [ "$(cat "$tmp/err")" = "$tmp/nope.json: cannot open: No such file or directory" ]; then ok; else bad "missing file message: $(cat "$tmp/err")"; fi
expect_rc 2 "validate one good one bad" -- "$SIM" validate scenarios/tiny.json tests/data/bad/negative.json
contains "$tmp/out" "scenarios/tiny.json: ok" "good file still reported ok"

# --- run: outputs, determinism ---
mkdir -p "$tmp/a" "$tmp/b" "$tmp/c"
cp scenarios/tiny.json "$tmp/tiny.json"
(cd "$tmp/a" && "$SIM" run ../tiny.json --out out --quiet) >"$tmp/out" 2>"$tmp/err"
rc=$?; [ $rc -eq 0 ] && ok || bad "run tiny (a): exit $rc $(cat "$tmp/err")"
(cd "$tmp/b" && "$SIM" run ../tiny.json --out out --quiet) >"$tmp/out" 2>"$tmp/err"
rc=$?; [ $rc -eq 0 ] && ok || bad "run tiny (b): exit $rc"
[ ! -s "$tmp/out" ] && ok || bad "--quiet printed on stdout: $(cat "$tmp/out")"
for f in blocks.csv pools.csv runs.csv; do same_file "$tmp/a/out/$f" "$tmp/b/out/$f" "same seed $f"; done
strip_wallclock "$tmp/a/out/summary.json" >"$tmp/sa"
strip_wallclock "$tmp/b/out/summary.json" >"$tmp/sb"
same_file "$tmp/sa" "$tmp/sb" "same seed summary.json (without wall-clock fields)"
(cd "$tmp/c" && "$SIM" run ../tiny.json --out out --quiet --seed 8) >/dev/null 2>&1
if cmp -s "$tmp/a/out/blocks.csv" "$tmp/c/out/blocks.csv"; then bad "different seed gave the same blocks.csv"; else ok; fi
contains "$tmp/c/out/summary.json" '"seed": 8' "seed recorded in header"
ls -A "$tmp/a/out" >"$tmp/ls"
if [ "$(tr '\n' ' ' <"$tmp/ls")" = "blocks.csv pools.csv runs.csv summary.json " ]; then ok; else bad "output files: $(cat "$tmp/ls")"; fi
head -1 "$tmp/a/out/blocks.csv" >"$tmp/h"
if [ "$(cat "$tmp/h")" = "id,height,parent,miner,pool,mined_s,type,difficulty,n_uncles,uncles,n_tx,gas_used,size_bytes,empty" ]; then ok; else bad "blocks.csv header: $(cat "$tmp/h")"; fi
# The contract keys of DESIGN.md that this version fills.
python3 - "$tmp/a/out/summary.json" >"$tmp/keys" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
need = {"header": ["version", "git_describe", "libraries", "seed", "threads", "command_line", "scenario"],
        "sim": ["events", "wall_s", "events_per_s", "peak_rss_bytes"],
        "chain": ["heights", "blocks_total", "main", "uncles_included", "forks_unreferenced", "uncle_rate",
                  "stale_share", "empty_share", "mean_interval_s"],
        "runs": ["max", "count_ge"]}
missing = [f"{s}.{k}" for s, ks in need.items() for k in ks if k not in d.get(s, {})]
missing += [f"runs.count_ge.{k}" for k in range(5, 15) if str(k) not in d["runs"]["count_ge"]]
for p in d["pools"]:
    missing += [f"pools[].{k}" for k in ["name", "hash_share", "main_share", "blocks", "uncles", "empty",
                                         "max_run", "reward_share"] if k not in p]
if d["chain"]["heights"] != 2000: missing.append("chain.heights != 2000")
if d["header"]["scenario"]["stop"]["settle_heights"] != 7: missing.append("defaults not echoed")
print("missing:", missing) if missing else print("ok")
EOF
[ "$(cat "$tmp/keys")" = "ok" ] && ok || bad "summary keys: $(cat "$tmp/keys")"

# The geo network: same seed, same bytes (observations.csv included); the files a geo run writes.
cp scenarios/geo-small.json "$tmp/geo.json"
mkdir -p "$tmp/ga" "$tmp/gb"
(cd "$tmp/ga" && "$SIM" run ../geo.json --out out --quiet) >/dev/null 2>"$tmp/err" || bad "geo run (a): $(cat "$tmp/err")"
(cd "$tmp/gb" && "$SIM" run ../geo.json --out out --quiet) >/dev/null 2>"$tmp/err" || bad "geo run (b): $(cat "$tmp/err")"
for f in blocks.csv pools.csv runs.csv observations.csv; do same_file "$tmp/ga/out/$f" "$tmp/gb/out/$f" "geo same seed $f"; done
strip_wallclock "$tmp/ga/out/summary.json" >"$tmp/sa"
strip_wallclock "$tmp/gb/out/summary.json" >"$tmp/sb"
same_file "$tmp/sa" "$tmp/sb" "geo same seed summary.json (without wall-clock fields)"
contains "$tmp/ga/out/summary.json" '"vantage_delay_ms"' "geo summary has propagation keys"
contains "$tmp/ga/out/summary.json" '"node_block_deliveries"' "geo summary counts deliveries"

# --set and the default output directory
(cd "$tmp" && "$SIM" run tiny.json --set stop.heights=300 --set 'pools[0].hash_share=0.45' \
   --set 'pools[1].hash_share=0.25' >"$tmp/out" 2>"$tmp/err")
rc=$?; [ $rc -eq 0 ] && ok || bad "run with --set: exit $rc $(cat "$tmp/err")"
contains "$tmp/out" "wrote results/tiny/" "default output directory"
contains "$tmp/results/tiny/summary.json" '"heights": 300' "--set stop.heights applied"
expect_rc 2 "--set bad path" -- "$SIM" run scenarios/tiny.json --set 'pools[9].name=x' --out "$tmp/never"
contains "$tmp/err" "scenarios/tiny.json: --set pools[9].name: index 9 out of range (array has 4 elements)" "--set bad path message"
[ ! -e "$tmp/never" ] && ok || bad "bad --set created the output directory"

# --- bad inputs to run: exit 2, nothing written ---
expect_rc 2 "run bad scenario" -- "$SIM" run tests/data/bad/shares-sum.json --out "$tmp/never"
contains "$tmp/err" '$.pools: hash_share values must sum to 1 (within 0.001), got 0.9' "run bad scenario message"
[ ! -e "$tmp/never" ] && ok || bad "bad scenario created the output directory"
expect_rc 2 "run missing file" -- "$SIM" run "$tmp/missing.json" --out "$tmp/never"
contains "$tmp/err" "cannot open: No such file or directory" "run missing file message"
touch "$tmp/plainfile"
expect_rc 2 "unwritable output directory" -- "$SIM" run scenarios/tiny.json --out "$tmp/plainfile/sub" --quiet
contains "$tmp/err" "sim run: cannot create output directory $tmp/plainfile/sub: Not a directory" "unwritable dir message"

# --- interruption: exit 130, nothing (not even a temp file) left behind ---
mkdir -p "$tmp/int"
"$SIM" run scenarios/pools-2019.json --out "$tmp/int/out" --quiet >/dev/null 2>"$tmp/err" &
pid=$!
sleep 0.3
kill -INT $pid
wait $pid
rc=$?
if [ $rc -eq 130 ]; then ok; else bad "interrupted run: exit $rc, expected 130"; fi
contains "$tmp/err" "interrupted; no output written" "interrupted message"
left=$(ls -A "$tmp/int/out" 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] && ok || bad "interrupted run left files: $left"

# --- bench ---
expect_rc 0 "bench phold" -- "$SIM" bench phold --events 200000 --pending 1000 --lps 100
contains "$tmp/out" "events=200000" "phold processed the requested events"
contains "$tmp/out" "events_per_s=" "phold prints events/s"
expect_rc 0 "bench scenarios" -- "$SIM" bench scenarios scenarios/bench/b.json
contains "$tmp/out" "bench-b" "bench scenarios names the workload"
contains "$tmp/out" "deliveries_per_s=" "bench scenarios prints deliveries/s"
expect_rc 2 "bench scenarios missing file" -- "$SIM" bench scenarios "$tmp/none.json"
contains "$tmp/err" "$tmp/none.json: cannot open: No such file or directory" "bench scenarios missing file message"
expect_rc 2 "bench scenarios bad repeat" -- "$SIM" bench scenarios --repeat 0
contains "$tmp/err" "sim bench scenarios: --repeat must be in [1, 101]" "bench scenarios bad repeat message"
expect_rc 2 "bench phold bad lps" -- "$SIM" bench phold --lps 0
contains "$tmp/err" "sim bench phold: --lps, --pending, --events must be >= 1" "bench phold bad lps message"
expect_rc 2 "bench without name" -- "$SIM" bench
contains "$tmp/err" "sim bench: missing benchmark name (phold, scenarios)" "bench without name message"
expect_rc 2 "bench unknown" -- "$SIM" bench nosuch

# --- numa: the model on machine files, this machine's matrix and placement ---
expect_rc 0 "sim numa --help" -- "$SIM" numa --help
contains "$tmp/out" "predict MACHINE.json" "sim numa --help"
expect_rc 2 "numa without subcommand" -- "$SIM" numa
contains "$tmp/err" "sim numa: missing subcommand (predict, tune, measure, place)" "numa without subcommand message"
for f in models/machines/*.json; do
  expect_rc 0 "numa predict $f" -- "$SIM" numa predict "$f"
  contains "$tmp/out" "canonical" "numa predict $f lists canonical"
done
# The published DRAM+CXL machine: kernel auto weights 28:3; 1:1 predicted 48.97 (measured 48.73), 9:1 231.69.
expect_rc 0 "numa predict cxl 1:1" -- "$SIM" numa predict models/machines/dram-cxl.json --weights 1,1
contains "$tmp/out" "(28:3)" "kernel auto weights 28:3"
contains "$tmp/out" "weights              48.97" "1:1 interleave predicted 48.97 GB/s"
expect_rc 0 "numa predict cxl 9:1" -- "$SIM" numa predict models/machines/dram-cxl.json --weights 9,1 --policy canonical
contains "$tmp/out" "weights             231.69" "9:1 predicted 231.69 GB/s"
expect_rc 0 "numa predict json" -- "$SIM" numa predict models/machines/amd-opteron-8node.json --workers 0,1 --json
python3 - "$tmp/out" >"$tmp/chk" 2>&1 <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
g = {p["policy"]: p["gbps"] for p in d["policies"]}
ok = d["header"]["tool"] == "sim" and d["workers"] == [0, 1]
ok = ok and abs(g["canonical"] - 49.8) < 1e-9 and g["canonical"] >= g["uniform-workers"] >= g["first-touch"]
print("ok" if ok else "bad: %s" % g)
EOF2
[ "$(cat "$tmp/chk")" = "ok" ] && ok || bad "numa predict --json: $(cat "$tmp/chk")"
for f in tests/data/numa-bad/*.json; do
  expect_rc 2 "numa predict $f" -- "$SIM" numa predict "$f"
  if diff -u "${f%.json}.err" "$tmp/err" >"$tmp/diff"; then ok; else bad "message for $f: $(cat "$tmp/diff")"; fi
done
expect_rc 2 "numa predict missing file" -- "$SIM" numa predict "$tmp/nope.json"
if [ "$(cat "$tmp/err")" = "$tmp/nope.json: cannot open: No such file or directory" ]; then ok; else bad "numa missing file: $(cat "$tmp/err")"; fi
expect_rc 2 "numa empty worker set" -- "$SIM" numa predict models/machines/intel-xeon-2s.json --workers ''
if [ "$(head -1 "$tmp/err")" = "sim numa predict: --workers: empty worker set" ]; then ok; else bad "empty workers: $(cat "$tmp/err")"; fi
expect_rc 2 "numa worker without CPUs" -- "$SIM" numa predict models/machines/dram-cxl.json --workers 1
contains "$tmp/err" "sim numa predict: --workers: node 1 has no CPUs" "worker without CPUs message"
expect_rc 2 "numa unknown policy" -- "$SIM" numa predict models/machines/dram-cxl.json --policy nosuch
contains "$tmp/err" "unknown policy 'nosuch' (expected one of: all, first-touch, uniform-workers" "unknown policy message"
# The tuner moves a latency-bound application's pages home and matches the oracle.
expect_rc 0 "numa tune latency-bound" -- "$SIM" numa tune models/machines/intel-xeon-2s.json --workers 0 --mlp 1 --latency-sensitivity 1
contains "$tmp/out" "tuner:  share 1.000" "tuner moves to local pages"
contains "$tmp/out" "the tuner reaches 100.0% of the oracle" "tuner matches the oracle"
expect_rc 2 "numa tune bad mlp and sensitivity" -- "$SIM" numa tune models/machines/intel-xeon-2s.json --mlp 0 --latency-sensitivity 2
if [ "$(cat "$tmp/err")" = "sim numa tune: app.mlp: must be in [1, 1000] (got 0)
sim numa tune: app.latency_sensitivity: must be in [0, 1] (got 2)" ]; then ok; else bad "bad mlp message: $(cat "$tmp/err")"; fi
expect_rc 2 "numa tune cross-field check" -- "$SIM" numa tune models/machines/intel-xeon-2s.json --set util_flat=0.9
contains "$tmp/err" "sim numa tune: app: need util_flat < util_linear < 1 (got 0.9 and 0.8)" "cross-field message"
expect_rc 2 "numa tune unknown parameter" -- "$SIM" numa tune models/machines/intel-xeon-2s.json --set nosuch=1
contains "$tmp/err" "--set nosuch=1: unknown parameter 'nosuch'" "unknown parameter message"
# This machine: a short measurement gives a machine file the model reads back.
expect_rc 0 "numa measure" -- "$SIM" numa measure --size 8 --repeat 1 --loads 20000 --out "$tmp/here.json"
contains "$tmp/out" "wrote $tmp/here.json" "numa measure wrote the file"
expect_rc 0 "numa predict measured" -- "$SIM" numa predict "$tmp/here.json"
contains "$tmp/out" "machine: measured" "measured machine loads"
expect_rc 2 "numa measure unwritable" -- "$SIM" numa measure --out "$tmp/plainfile/m.json"
contains "$tmp/err" "sim numa measure: cannot write $tmp/plainfile/m.json: Not a directory" "numa measure unwritable message"
expect_rc 2 "numa measure bad size" -- "$SIM" numa measure --size 0
contains "$tmp/err" "sim numa measure: --size must be in [1, 65536]" "numa measure bad size message"
# Placement: everything on node 0 with weight on node 0 only, on any machine.
expect_rc 0 "numa place" -- "$SIM" numa place --weights 1 --size 4
if grep -Eq '^0 +1\.0000 +1024\.0 +1024 +1024 +\+0\.0$' "$tmp/out"; then ok; else bad "numa place row: $(cat "$tmp/out")"; fi
expect_rc 2 "numa place bad weight" -- "$SIM" numa place --weights 1,-1
contains "$tmp/err" "sim numa place: --weights: weight 1 must be >= 0 (got -1)" "numa place bad weight message"
expect_rc 2 "numa place no weights" -- "$SIM" numa place
contains "$tmp/err" "sim numa place: missing --weights" "numa place without weights message"
expect_rc 0 "models numa_policy" -- "$SIM" models numa_policy
contains "$tmp/out" "canonical" "models numa_policy lists canonical"
expect_rc 0 "models numa_app" -- "$SIM" models numa_app
contains "$tmp/out" "latency_sensitivity" "models numa_app lists its parameters"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
