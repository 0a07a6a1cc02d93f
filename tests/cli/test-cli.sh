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
for c in run validate models report bench; do contains "$tmp/out" "  $c" "sim --help lists $c"; done
expect_rc 0 "sim --version" -- "$SIM" --version
contains "$tmp/out" "sim 0.1.0" "version"
for c in run validate models report "bench phold"; do
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
contains "$tmp/err" "sim models: unknown family 'nosuch' (expected one of: scenario, network, uncle_rule, delay, relay, jitter)" "models unknown family message"
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

# --- report: one self-contained HTML page from the geo run (and from a sweep table) ---
# check_page FILE N_SVG TITLE...: one document, N_SVG inline figures, each TITLE as an SVG <title>, and no
# URI but the SVG namespace.
check_page() {
  local f=$1 n=$2
  shift 2
  python3 - "$f" "$n" "$@" >"$tmp/page" 2>&1 <<'PY'
import re, sys
h = open(sys.argv[1]).read()
n, titles = int(sys.argv[2]), sys.argv[3:]
bad = []
if h.count("<html") != 1 or not h.rstrip().endswith("</html>"): bad.append("not one <html> document")
if h.count("<svg") != n or h.count("</svg>") != n: bad.append(f"{h.count('<svg')} <svg>, expected {n}")
for t in titles:
    if not re.search(r"<svg[^>]*>\s*<title>" + re.escape(t) + "</title>", h): bad.append("no svg titled " + t)
uris = set(re.findall(r"https?://[^\s\"'<>]*", h))
if uris - {"http://www.w3.org/2000/svg"}: bad.append(f"external references: {uris}")
print("bad: " + "; ".join(bad) if bad else "ok")
PY
  [ "$(cat "$tmp/page")" = "ok" ] && ok || bad "page $f: $(cat "$tmp/page")"
}
cp -r "$tmp/ga/out" "$tmp/rep"
expect_rc 0 "report" -- "$SIM" report "$tmp/rep"
contains "$tmp/out" "wrote $tmp/rep/report.html (run, 4 figures)" "report names the page"
[ ! -s "$tmp/err" ] && ok || bad "report printed on stderr: $(cat "$tmp/err")"
check_page "$tmp/rep/report.html" 4 "Block propagation: delay after the first observation, CDF per vantage point" \
  "First-seen shares per pool and vantage point" "Run lengths against the i.i.d. expectation" \
  "Main share against hash share and reward share, per pool"
contains "$tmp/rep/report.html" "<title>sim report: geo-small</title>" "report title"
left=$(ls -A "$tmp/rep" | grep -v -E '^(summary\.json|blocks\.csv|pools\.csv|runs\.csv|observations\.csv|report\.html)$')
[ -z "$left" ] && ok || bad "report left files: $left"
expect_rc 0 "report --out" -- "$SIM" report "$tmp/rep" --out "$tmp/rep2/r.html" --quiet
same_file "$tmp/rep/report.html" "$tmp/rep2/r.html" "report is deterministic"
[ ! -s "$tmp/out" ] && ok || bad "report --quiet printed: $(cat "$tmp/out")"
SIM_GNUPLOT=/nonexistent expect_rc 0 "report without gnuplot" -- "$SIM" report "$tmp/rep" --out "$tmp/nognuplot.html"
contains "$tmp/err" "sim report: warning: gnuplot not found: figures omitted" "no-gnuplot warning"
contains "$tmp/nognuplot.html" '<p class="notice">gnuplot not found: figures omitted.</p>' "no-gnuplot notice"
contains "$tmp/nognuplot.html" "<caption>Pools (pools.csv)</caption>" "no-gnuplot page keeps the tables"
check_page "$tmp/nognuplot.html" 0
expect_rc 0 "report of a sweep" -- "$SIM" report tests/data/report/sweep --out "$tmp/sweep.html"
check_page "$tmp/sweep.html" 4 "chain.uncle_rate against pools.top_share" "chain.stale_share against pools.top_share" \
  "runs.max against pools.top_share" "pools.largest_main_share against pools.top_share"
expect_rc 0 "report of a sweep, one metric" -- "$SIM" report tests/data/report/sweep --metric sim.wall_s --out "$tmp/sweep1.html"
check_page "$tmp/sweep1.html" 1 "sim.wall_s against pools.top_share"
expect_rc 2 "report without DIR" -- "$SIM" report
contains "$tmp/err" "sim report: missing DIR" "report without DIR message"
expect_rc 2 "report of a missing directory" -- "$SIM" report "$tmp/nosuchdir"
if [ "$(cat "$tmp/err")" = "$tmp/nosuchdir: No such file or directory" ]; then ok; else bad "missing dir message: $(cat "$tmp/err")"; fi
mkdir -p "$tmp/nosummary"
expect_rc 2 "report without summary.json" -- "$SIM" report "$tmp/nosummary"
if [ "$(cat "$tmp/err")" = "$tmp/nosummary/summary.json: No such file or directory" ]; then ok; else bad "no summary message: $(cat "$tmp/err")"; fi
expect_rc 2 "report of a malformed CSV" -- "$SIM" report tests/data/report/bad-runs --out "$tmp/never.html"
if [ "$(cat "$tmp/err")" = "tests/data/report/bad-runs/runs.csv: line 3: 3 fields, expected 4 (as in the header)" ]; then ok; else bad "malformed CSV message: $(cat "$tmp/err")"; fi
[ ! -e "$tmp/never.html" ] && ok || bad "bad input wrote a page"
expect_rc 2 "report of a sweep, unknown metric" -- "$SIM" report tests/data/report/sweep --metric nope --out "$tmp/never.html"
contains "$tmp/err" "tests/data/report/sweep/table.csv: no metric 'nope' (no column 'nope.mean')" "unknown metric message"
# The page in a real browser engine, when there is one: the figures must be in the DOM it builds. Counted
# only when it ran.
if command -v chromium >/dev/null 2>&1; then
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-crash-reporter --no-first-run \
    --user-data-dir="$tmp/chromium" --dump-dom "file://$tmp/rep/report.html" >"$tmp/dom" 2>"$tmp/chromium.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    bad "chromium --dump-dom: exit $rc: $(tail -3 "$tmp/chromium.err")"
  else
    python3 - "$tmp/dom" >"$tmp/domcheck" 2>&1 <<'PY'
import re, sys
d = open(sys.argv[1]).read()
bad = []
for fid in ("fig-propagation", "fig-first-seen", "fig-runs", "fig-pools"):
    m = re.search(r'<figure id="' + fid + r'">(.*?)</figure>', d, re.S)
    if not m:
        bad.append("no figure " + fid)
        continue
    svg = re.search(r"<svg[^>]*>(.*?)</svg>", m.group(1), re.S)
    if not svg: bad.append(fid + " has no <svg> in the DOM")
    elif len(re.findall(r"<path", svg.group(1))) < 5: bad.append(fid + " has almost no <path> in the DOM")
if d.count("<svg") != 4: bad.append(f"{d.count('<svg')} <svg> in the DOM")
print("bad: " + "; ".join(bad) if bad else "ok")
PY
    [ "$(cat "$tmp/domcheck")" = "ok" ] && ok || bad "chromium DOM: $(cat "$tmp/domcheck")"
  fi
else
  echo "skipped: chromium not on PATH: the headless-browser check of the report did not run"
fi

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

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
