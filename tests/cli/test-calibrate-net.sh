#!/usr/bin/env bash
# test-calibrate-net.sh: `sim calibrate --fit-network` closes the loop on the link latencies: a geo run with a
# known network.latency_scale writes EMC logs, the fit simulates geo-small at a grid of scales and matches the
# vantage points' median delays, and its 95% interval must hold the generating scale, leave out scales 20% off
# and be narrower than a stated bound (so the check can fail: NETFIT_TRUTH=1.2 makes it fail). The models file
# carries the scale and a scenario that includes it runs with it. Bad input exits 2 with a clear message.
# About 10 s.
. "$(dirname "$0")/lib.sh" "$@"
truth_run=1.5                      # the scale the logs are generated with
truth=${NETFIT_TRUTH:-$truth_run}  # the scale the interval must hold (set it elsewhere to see the test fail)

expect_rc 0 "run with EMC logs at scale $truth_run" -- "$SIM" run scenarios/geo-small.json --seed 101 \
  --set network.latency_scale=$truth_run --out "$tmp/sc" --emc-logs --quiet
# The directories in another order than the scenario's vantage points: they are matched by name.
expect_rc 0 "fit the network" -- "$SIM" calibrate "$tmp"/sc/emc/*/ --pools "$tmp/sc/emc/pools.csv" \
  --fit-network scenarios/geo-small.json -o "$tmp/cal.json" --report "$tmp/rep.json"
contains "$tmp/out" "network fit (network.latency_scale by simulated moments; 3 seeds from 1, 300 heights, 33 runs)" \
  "calibrate prints the network fit"
python3 - "$tmp/cal.json" "$tmp/rep.json" "$truth" >"$tmp/keys" 2>&1 <<'PY' && ok || bad "loop: $(cat "$tmp/keys")"
import json, sys
m, r, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), float(sys.argv[3])
f = m["calibration"]["network_fit"]
assert r["network_fit"] == f, "the report and the models file disagree"
ls = f["latency_scale"]
lo, hi, est = ls["lo"], ls["hi"], ls["value"]
assert m["network"] == {"latency_scale": est}, m["network"]
assert lo <= truth <= hi, f"truth {truth} not in [{lo}, {hi}] (estimate {est})"
# Power: scales 20% off the generating one are outside, and the interval is narrower than 0.5 (a third of 1.5).
assert hi < 1.2 * 1.5 and lo > 0.8 * 1.5, f"[{lo}, {hi}] holds a scale 20% off 1.5"
assert hi - lo < 0.5, f"interval [{lo}, {hi}] wider than 0.5"
assert not ls["lo_extrapolated"] and not ls["hi_extrapolated"], ls
# The vantage points are matched by name; each has a KS comparison at the fit, and none is a gross misfit.
assert [(v["log"], v["scenario"]) for v in f["vantage_points"]] == [(n, n) for n in ["CE", "EA", "NA", "WE"]]
g = f["gof_blocks"]
assert [v["name"] for v in g] == ["CE", "EA", "NA", "WE"] and all(v["n_measured"] > 100 for v in g), g
assert all(0 <= v["ks"]["d"] < 0.2 and v["ks"]["p"] > 0.001 for v in g), g
# The curve rises with the scale, over the grid 0.25..4 and its refinement.
c = f["curve"]
assert c[0]["scale"] == 0.25 and c[-1]["scale"] == 4 and len(c) == 10, [p["scale"] for p in c]
assert all(a["median_ms"] < b["median_ms"] for a, b in zip(c, c[1:])), [p["median_ms"] for p in c]
assert f["error_ms"]["total_se"] >= f["error_ms"]["measured_se"] > 0, f["error_ms"]
assert any(l.startswith("network.latency_scale: ") for l in m["comment"]), m["comment"]
PY
# A scenario that includes geo-small and then the models file runs with the fitted scale (its own pools win
# over the models file's, which leave out the pools without a main block in 300 heights).
python3 - "$ROOT/scenarios/geo-small.json" "$tmp/cal.json" >"$tmp/loop.json" <<'PY'
import json, sys
print(json.dumps({"name": "netloop", "stop": {"heights": 20}, "include": sys.argv[1:3],
                  "pools": json.load(open(sys.argv[1]))["pools"]}))
PY
expect_rc 0 "run a scenario including the models file" -- "$SIM" run "$tmp/loop.json" --out "$tmp/loop" --quiet
python3 - "$tmp/loop/summary.json" "$tmp/cal.json" >"$tmp/keys" 2>&1 <<'PY' && ok || bad "include: $(cat "$tmp/keys")"
import json, sys
s, m = json.load(open(sys.argv[1]))["header"]["scenario"], json.load(open(sys.argv[2]))
assert s["network"]["latency_scale"] == m["network"]["latency_scale"] and s["network"]["nodes"] == 400, s["network"]
PY

# The same command twice gives the same file (the fit's runs and bootstrap are seeded). A small fit.
small=(--fit-network scenarios/geo-small.json --fit-heights 100 --seeds 2 --grid 4 --refine 1 --seed 7)
expect_rc 0 "small fit" -- "$SIM" calibrate "$tmp"/sc/emc/*/ "${small[@]}" -o "$tmp/a.json" -q
cp "$tmp/a.json" "$tmp/a1.json"
expect_rc 0 "small fit again" -- "$SIM" calibrate "$tmp"/sc/emc/*/ "${small[@]}" -o "$tmp/a.json" -q
same_file "$tmp/a1.json" "$tmp/a.json" "the fit is deterministic"

# ---- bad input: exit 2, a message, nothing written
fit() { expect_rc 2 "$1" -- "$SIM" calibrate "${@:2}" -o "$tmp/x.json" -q; }
fit "scale bound hit" "$tmp"/sc/emc/*/ --fit-network scenarios/geo-small.json --scale-range 2.5,4 --grid 3 --refine 0
contains "$tmp/err" "sim calibrate: --fit-network: scale bound hit: the measured mean of the vantage points' median delays, " \
  "bound message"
contains "$tmp/err" "lower the bottom of --scale-range" "bound message: what to do"
fit "not a geo network" "$tmp"/sc/emc/*/ --fit-network scenarios/tiny.json
contains "$tmp/err" 'sim calibrate: --fit-network: scenarios/tiny.json: $.network.model: the fit needs a geo network (its latency_scale); got "pool-delay"' \
  "non-geo message"
printf '{"name": "novp", "include": ["%s"], "network": {"vantage_points": []}}\n' "$ROOT/scenarios/geo-small.json" >"$tmp/novp.json"
fit "no vantage points" "$tmp"/sc/emc/*/ --fit-network "$tmp/novp.json"
contains "$tmp/err" "\$.network.vantage_points: the fit needs the scenario's vantage points to stand for the logs' (none given)" \
  "no-vantage message"
fit "two logs, four vantage points" "$tmp/sc/emc/WE" "$tmp/sc/emc/CE" --fit-network scenarios/geo-small.json
contains "$tmp/err" '$.network.vantage_points: 4 vantage points, but 2 log directories were given' "count message"
fit "one vantage point (Rinkeby)" tests/data/emc-rinkeby-2018-09 --fit-network scenarios/geo-small.json
contains "$tmp/err" "sim calibrate: --fit-network: the logs have 1 vantage point; delays between vantage points need two or more" \
  "one-vantage message"
fit "fit options without --fit-network" "$tmp"/sc/emc/*/ --seeds 4
contains "$tmp/err" "need --fit-network" "options message"
fit "bad --scale-range" "$tmp"/sc/emc/*/ --fit-network scenarios/geo-small.json --scale-range 3,1
contains "$tmp/err" "sim calibrate: --scale-range must be LO,HI with 0 < LO < HI <= 100 (got '3,1')" "range message"
expect_rc 2 "latency_scale 0 refused" -- "$SIM" validate scenarios/geo-small.json --set network.latency_scale=0
contains "$tmp/err" "latency_scale" "latency_scale bound message"
[ ! -e "$tmp/x.json" ] && ok || bad "a refused calibrate wrote its file"

# Interrupted (SIGINT during a run): exit 130, no models file, and no run's files left in the temporary
# directory (the runs write there: TMPDIR below).
mkdir -p "$tmp/tmpdir"
TMPDIR="$tmp/tmpdir" "$SIM" calibrate "$tmp"/sc/emc/*/ --pools "$tmp/sc/emc/pools.csv" \
  --fit-network scenarios/geo-small.json --fit-heights 3000 -o "$tmp/int.json" -q 2>"$tmp/int.err" &
pid=$!
for _ in $(seq 100); do # until a run has started (its directory exists), at most 10 s
  [ -n "$(ls -A "$tmp/tmpdir")" ] && break
  sleep 0.1
done
kill -INT "$pid"
wait "$pid"
is "$?" 130 "interrupted fit: exit 130"
[ ! -e "$tmp/int.json" ] && ok || bad "an interrupted fit wrote its models file"
is "$(ls -A "$tmp/tmpdir")" "" "an interrupted fit left no run files"
is "$(cat "$tmp/int.err")" "sim calibrate: --fit-network: interrupted; no output written" "interrupted fit: message"

echo "calibrate-net: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
