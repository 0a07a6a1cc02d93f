#!/usr/bin/env bash
# test-wrong-a.sh: inputs that used to exit 0 with a wrong or meaningless answer (issue 13 §3) are refused
# with exit 2 and a message naming the value, or computed right: block intervals that round to 0 ns,
# runaway runs, --set values that are broken JSON, problems a --set caused, thousands of pools, sync rates
# of 1e-300. Run from the source root.
. "$(dirname "$0")/lib.sh" "$@"
# is_text FILE TEXT DESC: FILE holds exactly TEXT (plus its final newline).
is_text() {
  if [ "$(cat "$1")" = "$2" ]; then ok; else bad "$3: got '$(head -c 600 "$1")', expected '$2'"; fi
}
# refused DESC MESSAGE -- CMD...: CMD exits 2 within 30 s, prints exactly MESSAGE and writes no output.
refused() {
  local desc=$1 msg=$2
  shift 3
  expect_rc 2 "$desc" -- timeout 30 "$@"
  is_text "$tmp/err" "$msg" "$desc message"
  [ ! -s "$tmp/out" ] && ok || bad "$desc: wrote to stdout: $(head -c 200 "$tmp/out")"
}
summary() { # FILE PYTHON-EXPRESSION-OF-d
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# --- 1. block intervals: the clock must move ---
# 1e-12 s used to give one pool every block at t = 0; 1e-300 with stop.time_s ran forever past 2 GB.
refused "interval 1e-12" "--set chain.target_interval_s: must be in [0.001, 1e+06] (got 1e-12)" -- \
  "$SIM" run scenarios/tiny.json --set chain.target_interval_s=1e-12 --out "$tmp/never"
[ ! -e "$tmp/never" ] && ok || bad "a refused run created its output directory"
refused "interval 1e-300 with stop.time_s" "--set chain.target_interval_s: must be in [0.001, 1e+06] (got 1e-300)" -- \
  "$SIM" run scenarios/tiny.json --set stop.heights=0 --set stop.time_s=100 --set chain.target_interval_s=1e-300 \
  --out "$tmp/never"
refused "interval just below 1 ms" "--set \$.chain.target_interval_s: must be in [0.001, 1e+06] (got 0.000999)" -- \
  "$SIM" validate scenarios/tiny.json --set '$.chain.target_interval_s=0.000999'
# Byzantium: the first interval is initial_difficulty / hashrate_hps.
refused "byzantium at 1e30 H/s" \
  "--set chain.hashrate_hps: initial_difficulty / hashrate_hps, the first blocks' mean interval, must be in [0.001, 1e+06] s (got 2.09e-15 s)" -- \
  "$SIM" validate scenarios/geo-small.json --set chain.hashrate_hps=1e30
refused "byzantium at 1e-300 H/s" \
  "--set chain.hashrate_hps: initial_difficulty / hashrate_hps, the first blocks' mean interval, must be in [0.001, 1e+06] s (got inf s)" -- \
  "$SIM" validate scenarios/geo-small.json --set chain.hashrate_hps=1e-300
# At the bound time moves: 1 ms blocks over 300 heights end near 0.3 s, and every pool mines.
expect_rc 0 "interval 1 ms" -- "$SIM" run scenarios/tiny.json --set chain.target_interval_s=0.001 \
  --set stop.heights=300 --set network.delay.median_ms=0.1 --out "$tmp/fast" --quiet
[ "$(summary "$tmp/fast/summary.json" '0.15 < d["sim"]["end_time_s"] < 0.6')" = True ] && ok ||
  bad "1 ms blocks: end time $(summary "$tmp/fast/summary.json" 'd["sim"]["end_time_s"]')"
[ "$(summary "$tmp/fast/summary.json" 'all(p["blocks"] > 0 for p in d["pools"])')" = True ] && ok ||
  bad "1 ms blocks: a pool mined nothing"

# --- 2. runs that could never end ---
refused "stop.time_s rounds to 0 ns" "--set stop.time_s: must be 0 (unset) or at least 1e-09 s, one tick of the ns clock (got 1e-300)" -- \
  "$SIM" validate scenarios/tiny.json --set stop.time_s=1e-300
refused "stop.time_s beyond the clock" "--set stop.time_s: must be in [0, 1e+09] (got 1e+12)" -- \
  "$SIM" validate scenarios/tiny.json --set stop.time_s=1e12
refused "1e9 s of 1 ms blocks" \
  "--set chain.target_interval_s: with stop.time_s 1e+09 s the run would mine about 1e+12 blocks, more than 1e+09 (the bound of stop.heights): raise the interval, lower stop.time_s or set stop.heights" -- \
  "$SIM" run scenarios/tiny.json --set stop.heights=0 --set stop.time_s=1e9 --set chain.target_interval_s=0.001 --out "$tmp/never"
refused "a million transactions a second for 1e6 heights" \
  "--set transactions: \$.transactions.rate_per_s: 1e+06 per second over a run of about 1.33e+07 s would create about 1.33e+13 transactions, more than 1e+09: lower the rate or stop the run earlier" -- \
  "$SIM" validate scenarios/tiny.json --set stop.heights=1000000 --set 'transactions={"rate_per_s": 1e6}'
refused "sender gap of 1 ns" "--set transactions.sender_gap_s: must be in [0.001, 1e+06] (got 1e-09)" -- \
  "$SIM" validate scenarios/tiny.json --set 'transactions={}' --set transactions.sender_gap_s=1e-9

# --- 3. --set: broken JSON, and problems named after the --set ---
refused "--set broken array" "--set pools: invalid JSON value (1:10: '}' expected near end of file); a value that starts with '{', '[' or '\"' must be valid JSON" -- \
  "$SIM" run scenarios/tiny.json --set 'pools=[{"name":1' --out "$tmp/never"
refused "--set broken object" "--set chain.x: invalid JSON value (1:4: string or '}' expected near 'bad'); a value that starts with '{', '[' or '\"' must be valid JSON" -- \
  "$SIM" validate scenarios/tiny.json --set 'chain.x={bad'
refused "--set unterminated string at a string key" "--set name: invalid JSON value (1:5: premature end of input near '\"tiny'); a value that starts with '{', '[' or '\"' must be valid JSON" -- \
  "$SIM" validate scenarios/tiny.json --set 'name="tiny'
refused "--set duplicate key" "--set network.delay: invalid JSON value (1:30: duplicate object key near '\"median_ms\"'); a value that starts with '{', '[' or '\"' must be valid JSON" -- \
  "$SIM" validate scenarios/tiny.json --set 'network.delay={"median_ms": 100, "median_ms": 200}'
refused "--set out of bounds" "--set chain.target_interval_s: must be in [0.001, 1e+06] (got -1)" -- \
  "$SIM" run scenarios/tiny.json --set chain.target_interval_s=-1 --out "$tmp/never"
refused "--set a word at a number" "--set chain.target_interval_s: must be a number (got string)" -- \
  "$SIM" validate scenarios/tiny.json --set chain.target_interval_s=13s
refused "--set a whole array" "--set pools: \$.pools[0].hash_share: must be in (0, 1] (got 2)" -- \
  "$SIM" validate scenarios/tiny.json --set 'pools=[{"name": "A", "hash_share": 2}]'
# The file's own problems still name the file, beside the --set's.
refused "--set beside a bad file" "tests/data/bad/negative.json: \$.chain.block_reward_eth: must be >= 0 (got -2)
tests/data/bad/negative.json: \$.network.delay.median_ms: must be in (0, 3.6e+06] (got 0)
tests/data/bad/negative.json: \$.network.delay.sigma: must be in [0, 10] (got -1)
--set pools[1].hash_share: must be in (0, 1] (got -0.5)" -- \
  "$SIM" validate tests/data/bad/negative.json --set chain.target_interval_s=13 --set 'pools[1].hash_share=-0.5'
# A word that is not JSON is still a string where strings are wanted.
expect_rc 0 "--set a plain word" -- "$SIM" validate scenarios/tiny.json --set name=tiny-2
is_text "$tmp/out" "scenarios/tiny.json: ok" "--set a plain word output"

# --- 4. many pools: linear setup, every pool in the outputs ---
python3 - "$tmp" <<'PY'
import json, sys
n = 20000
pools = [{"name": "p%d" % i, "hash_share": 1.0 / n} for i in range(n)]
json.dump({"name": "many", "seed": 3, "stop": {"heights": 3}, "pools": pools}, open(sys.argv[1] + "/many.json", "w"))
pools[-1]["name"] = "p17"
json.dump({"name": "dup", "stop": {"heights": 3}, "pools": pools}, open(sys.argv[1] + "/dup.json", "w"))
PY
expect_rc 0 "validate 20,000 pools" -- timeout 120 "$SIM" validate "$tmp/many.json"
is_text "$tmp/out" "$tmp/many.json: ok" "validate 20,000 pools output"
refused "a duplicate among 20,000 pools" "$tmp/dup.json: \$.pools[19999].name: duplicate pool name \"p17\" (also \$.pools[17])" -- \
  "$SIM" validate "$tmp/dup.json"
expect_rc 0 "run 20,000 pools" -- timeout 300 "$SIM" run "$tmp/many.json" --out "$tmp/many" --quiet
[ "$(wc -l <"$tmp/many/pools.csv")" -eq 20001 ] && ok || bad "pools.csv of 20,000 pools: $(wc -l <"$tmp/many/pools.csv") lines"
[ "$(summary "$tmp/many/summary.json" 'len(d["pools"]) == len(d["runs"]["by_pool"]) == 20000 and sum(p["blocks"] for p in d["pools"]) == d["chain"]["blocks_total"] >= 3')" = True ] && ok ||
  bad "summary of 20,000 pools"
[ "$(summary "$tmp/many/summary.json" 'sum(p["count_ge"]["1"] for p in d["runs"]["by_pool"]) == sum(n for l, n in d["runs"]["histogram"])')" = True ] && ok ||
  bad "per-pool runs of 20,000 pools do not add up to the histogram"

# --- 5. sim sync: every printed time finite and >= 0 ---
sed 's/"disk_iops": 10000/"disk_iops": 1e-300/' scenarios/sync/mid-end.json >"$tmp/m-iops.json"
refused "sync at 1e-300 IOPS" "$tmp/m-iops.json: \$.disk_iops: must be in [1, 1e+09] (got 1e-300)" -- "$SIM" sync "$tmp/m-iops.json"
sed 's/"net_mbps": 1000/"net_mbps": 1e-300/' scenarios/sync/high-end.json >"$tmp/m-net.json"
refused "sync at 1e-300 Mb/s" "$tmp/m-net.json: \$.net_mbps: must be in [0.001, 1e+07] (got 1e-300)" -- "$SIM" sync "$tmp/m-net.json"
echo '{"phases": {"snap": {"peer_mbps": 1e-300}}}' >"$tmp/c-peer.json"
refused "sync chain at 1e-300 Mb/s" "$tmp/c-peer.json: \$.phases.snap.peer_mbps: must be in [0.001, 1e+09] (got 1e-300)" -- \
  "$SIM" sync scenarios/sync/mid-end.json --chain "$tmp/c-peer.json"
refused "sync ibd at 1e-300 Mb/s" "sim sync ibd: --mbps must be in [0.001, 1e9) (got 1e-300)
Try 'sim sync ibd --help'." -- "$SIM" sync ibd --mbps 1e-300
refused "sync ibd of 1e-300 min" "sim sync ibd: --ibd-min must be in [0.001, 1e9) (got 1e-300)
Try 'sim sync ibd --help'." -- "$SIM" sync ibd --ibd-min 1e-300 --serial-s 0
# The slowest machine and the heaviest chain the files allow: huge, finite, positive times; h:mm past a long.
echo '{"name": "slowest", "vcpus": 1, "disk_iops": 1, "single_thread_iops": 1, "disk_write_mbps": 0.001,
 "net_mbps": 0.001, "published_min": {"snap": 0, "full": 0}}' >"$tmp/slow.json"
python3 -c '
import json, sys
w = {"download_gb": 1e9, "peer_mbps": 0.001, "read_mops": 1e9, "write_gb": 1e9, "cpu_core_h": 1e9}
ph = {p: dict(w) for p in ["snap", "healing", "old_headers", "old_bodies", "old_receipts"]}
ph["healing"]["change_reads_per_s"] = 1e9
json.dump({"name": "heaviest", "phases": ph}, open(sys.argv[1], "w"))' "$tmp/heavy.json"
expect_rc 0 "sync at the bounds" -- "$SIM" sync "$tmp/slow.json" --chain "$tmp/heavy.json" --csv
python3 - "$tmp/out" <<'PY' && ok || bad "sync at the bounds: a printed time is not finite and >= 0"
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
assert [r["phase"] for r in rows] == ["snap", "healing", "old_headers", "old_bodies", "old_receipts", "head", "full"]
# The chain changes faster (1e9 reads/s) than 1 IOPS repairs: healing never converges (the model's answer).
for r in rows[1:2] + rows[5:]:
    assert r["time_min"] == "inf" and r["time_hmm"] == "never" and r["error_pct"] == "", r
    if r["phase"] == "healing": assert r["reads_min"] == "inf" and r["bound"] == "reads", r
rows = rows[:1] + rows[2:5]
for r in rows:
    for k in ("network_min", "reads_min", "writes_min", "cpu_min", "time_min"):
        if r[k]:
            assert math.isfinite(float(r[k])) and float(r[k]) >= 0, (r["phase"], k, r[k])
    h, m = r["time_hmm"].split(":")
    assert h.isdigit() and m.isdigit() and int(m) < 60, r["time_hmm"]
    assert abs(int(h) * 60 + int(m) - float(r["time_min"])) <= 1e-12 * float(r["time_min"]) + 1, r
snap = rows[0]
assert snap["time_hmm"] == "2222222222222:13" and snap["published_min"] == "0" and snap["error_pct"] == "", snap
PY
expect_rc 0 "sync table at the bounds" -- "$SIM" sync "$tmp/slow.json" --chain "$tmp/heavy.json"
if grep -v -E '^(healing|head|full) ' "$tmp/out" | grep -Eqi 'inf|nan|:-|  -[0-9]'; then bad "sync table at the bounds prints inf, nan or a negative: $(grep -Ei 'inf|nan|:-' "$tmp/out")"; else ok; fi
contains "$tmp/out" ": R <= a, never converges" "sync table at the bounds says healing never converges"
contains "$tmp/out" "# machine: slowest: 1 vCPU, disk 1 IOPS (1 per reader thread), writes 0.001 MB/s, network 0.001 Mb/s" \
  "sync header shows rates below 1"

echo "wrong-a: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
