#!/usr/bin/env bash
# test-journey.sh: sim run --trace-blocks and the report's map and journey, without a browser: the trace changes
# no other output (any thread count), its tables agree with blocks.csv, both relay models are traced, the
# static map is the same with and without the node table, and bad input is refused with its message.
. "$(dirname "$0")/lib.sh" "$@"

geo=(scenarios/geo-small.json --set stop.heights=40 --quiet)
expect_rc 0 "run without trace" -- "$SIM" run "${geo[@]}" --out "$tmp/a"
expect_rc 0 "run with trace" -- "$SIM" run "${geo[@]}" --trace-blocks 12,30,25,900 --out "$tmp/b"
contains "$tmp/err" "sim run: warning: --trace-blocks: no block at height 900" "unreached height warned"
expect_rc 0 "run with trace, 2 threads" -- "$SIM" run "${geo[@]}" --trace-blocks 12,30,25 --threads 2 --out "$tmp/c"
for f in blocks.csv pools.csv runs.csv observations.csv; do same_file "$tmp/a/$f" "$tmp/b/$f" "$f with and without --trace-blocks"; done
same_file "$tmp/b/trace_blocks.csv" "$tmp/c/trace_blocks.csv" "trace_blocks.csv at 1 and 2 threads"
same_file "$tmp/b/trace_nodes.csv" "$tmp/c/trace_nodes.csv" "trace_nodes.csv at 1 and 2 threads"
# summary.json: equal but for the command line and the wall-clock fields (and the event queue's largest size:
# at 2 threads a run pipelines its relay, one that traces blocks does not, docs/outputs.md)
is "$(python3 - "$tmp/a/summary.json" "$tmp/b/summary.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    d["header"].pop("command_line")
    for k in ("wall_s", "events_per_s", "peak_rss_bytes", "peak_pending"):
        d["sim"].pop(k)
print("same" if a == b else "differ")
PY
)" same "summary.json with and without --trace-blocks"
# the tables: every node once; blocks of the traced heights with their heights as blocks.csv has them; each
# block at 0 s at its miner's gateways and later elsewhere; every node reached on this connected network
is "$(python3 - "$tmp/b" <<'PY'
import csv, sys
d = sys.argv[1]
nodes = list(csv.DictReader(open(d + "/trace_nodes.csv")))
blocks = {r["id"]: r for r in csv.DictReader(open(d + "/blocks.csv"))}
rows = list(csv.DictReader(open(d + "/trace_blocks.csv")))
bad = []
if [int(r["node"]) for r in nodes] != list(range(len(nodes))): bad.append("node ids")
roles = [r["role"] for r in nodes]
if roles.count("vantage") != 4 or roles.count("gateway") != 33 or roles.count("node") != 400: bad.append("roles %s" % {x: roles.count(x) for x in set(roles)})
per = {}
for r in rows:
    per.setdefault(r["block"], []).append(r)
want = {b for b, r in blocks.items() if r["height"] in ("12", "25", "30")}
if set(per) != want: bad.append("blocks %s vs %s" % (sorted(per), sorted(want)))
for b, rs in per.items():
    if any(r["height"] != blocks[b]["height"] for r in rs): bad.append("height of " + b)
    t = [float(r["arrive_s"]) for r in rs]
    if len(rs) != len(nodes): bad.append("%s reached %d of %d" % (b, len(rs), len(nodes)))
    src = [int(r["node"]) for r in rs if float(r["arrive_s"]) == 0]
    if not src or any(nodes[i]["role"] != "gateway" or nodes[i]["pool"] != blocks[b]["pool"] for i in src): bad.append("sources of " + b)
    if min(t) < 0 or max(t) <= 0: bad.append("times of " + b)
print("; ".join(bad) or "ok")
PY
)" ok "trace tables"
# The month's network: a traced block is relayed again to its end, and what the run's stopped relay gave the
# rest of the run (each miner's first gateway, the vantage points' first messages: both of them with
# --emc-logs, else the earlier) must agree with it (sim warns of any traced block that disagrees). The stop
# once lost vantage points' announcements that came after their block: about a quarter of traced blocks
# disagreed.
heights=$(seq -s, 20 5 115)
for logs in "" --emc-logs; do
  expect_rc 0 "month cut traced $logs" -- "$SIM" run scenarios/pools-2019.json --set stop.heights=120 --quiet $logs \
    --trace-blocks "$heights" --out "$tmp/m$logs"
  is "$(grep -c "disagreed" "$tmp/err")" 0 "month cut traced $logs: the stopped relay agrees with the full one"
  is "$(awk -F, 'NR > 1 {print $2}' "$tmp/m$logs/trace_blocks.csv" | sort -u | wc -l)" 20 "month cut traced $logs: 20 heights traced"
done
# bitcoin-compact (SimBlock's relay, miners on the nodes): traced too
expect_rc 0 "bench a with trace" -- "$SIM" run scenarios/bench/a.json --set stop.heights=4 --trace-blocks 3 --quiet --out "$tmp/btc"
is "$(awk -F, 'NR > 1 {n[$1]++} END {for (b in n) print n[b]}' "$tmp/btc/trace_blocks.csv" | sort -u | tr '\n' ' ')" "1000 " "bitcoin-compact: every node of each traced block"
# bad input
expect_rc 2 "--trace-blocks x" -- "$SIM" run "${geo[@]}" --trace-blocks 3,x --out "$tmp/never"
contains "$tmp/err" "sim run: --trace-blocks: 'x' is not a height (an integer >= 1)" "bad height message"
expect_rc 2 "--trace-blocks on pool-delay" -- "$SIM" run scenarios/tiny.json --set stop.heights=20 --quiet --trace-blocks 3 --out "$tmp/never"
contains "$tmp/err" "sim run: --trace-blocks: the \"pool-delay\" network has no nodes to trace" "pool-delay message"
[ ! -e "$tmp/never" ] && ok || bad "a refused run wrote its directory"

# the report: static map without the trace, with a note naming a height; the map is the same with the node table
expect_rc 0 "report without trace" -- "$SIM" report "$tmp/a" --quiet
contains "$tmp/a/report.html" 'id="journey-howto"' "no-trace note"
contains "$tmp/a/report.html" "--trace-blocks</code>" "no-trace note names the option"
expect_rc 0 "report with trace" -- "$SIM" report "$tmp/b" --quiet
is "$(python3 - "$tmp/a/report.html" "$tmp/b/report.html" <<'PY'
import re, sys
a, b = (open(p).read() for p in sys.argv[1:3])
# the same circles (their order follows the node ids, which the scenario does not give)
dots = [sorted(re.findall(r"<circle[^>]*>", re.search(r'<g id="map-dots".*?</g>', x, re.S).group(0))) for x in (a, b)]
print("same %d" % len(dots[1]) if dots[0] == dots[1] else "differ: %d vs %d circles, %d in common" % (len(dots[0]), len(dots[1]), len(set(dots[0]) & set(dots[1]))))
PY
)" "same 437" "map dots from the scenario and from trace_nodes.csv"
contains "$tmp/b/report.html" 'id="journey-data"' "journey data"
contains "$tmp/b/report.html" 'id="journey-slider" min="0" max="120"' "slider"
contains "$tmp/b/report.html" "the median-delay block of those traced" "default block"
expect_rc 0 "report --block 30" -- "$SIM" report "$tmp/b" --block 30 --out "$tmp/b30.html" --quiet
contains "$tmp/b30.html" " at height 30 (main" "--block picks the main block at that height"
expect_rc 2 "report --block not traced" -- "$SIM" report "$tmp/b" --block 13 --out "$tmp/never.html"
contains "$tmp/err" "$tmp/b/trace_blocks.csv: --block 13: not traced (traced heights: " "untraced --block message"
expect_rc 2 "report --block x" -- "$SIM" report "$tmp/b" --block x --out "$tmp/never.html"
contains "$tmp/err" "sim report: --block: 'x' is not a height" "bad --block message"
[ ! -e "$tmp/never.html" ] && ok || bad "a refused report wrote its page"
# a malformed trace table is bad input with its line
cp -r "$tmp/b" "$tmp/bad"
printf '0x1,1,99999,0.5\n' >>"$tmp/bad/trace_blocks.csv"
expect_rc 2 "report of a bad trace_blocks.csv" -- "$SIM" report "$tmp/bad" --out "$tmp/never.html"
contains "$tmp/err" "trace_blocks.csv: line " "bad trace table names the line"
# pool-delay: pools only; a replay: the vantage points' view, and beside a run with --measured
expect_rc 0 "run tiny" -- "$SIM" run scenarios/tiny.json --set stop.heights=20 --quiet --out "$tmp/tiny"
expect_rc 0 "report tiny" -- "$SIM" report "$tmp/tiny" --quiet
contains "$tmp/tiny/report.html" 'class="map pools-only"' "pool-delay: pools only"
expect_rc 0 "run with emc logs" -- "$SIM" run "${geo[@]}" --emc-logs --seed 3 --out "$tmp/e"
expect_rc 0 "replay" -- "$SIM" replay --vantage WE="$tmp/e/emc/WE" --vantage CE="$tmp/e/emc/CE" \
  --vantage NA="$tmp/e/emc/NA" --vantage EA="$tmp/e/emc/EA" --quiet --out "$tmp/rp"
expect_rc 0 "report of the replay" -- "$SIM" report "$tmp/rp" --quiet
contains "$tmp/rp/report.html" "A block's journey, as the vantage points saw it" "replay journey"
if grep -q 'id="map-svg"' "$tmp/rp/report.html"; then bad "a replay got a map"; else ok; fi
expect_rc 0 "report with --measured" -- "$SIM" report "$tmp/b" --measured "$tmp/rp" --out "$tmp/cmp.html" --quiet
contains "$tmp/cmp.html" '"measured":[{"name":"WE"' "measured journey beside the simulated one"
expect_rc 2 "report --measured missing" -- "$SIM" report "$tmp/b" --measured "$tmp/nosuch" --out "$tmp/never.html"
contains "$tmp/err" "$tmp/nosuch: not a directory" "missing --measured message"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
