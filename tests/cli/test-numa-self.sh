#!/usr/bin/env bash
# test-numa-self.sh: the NUMA model on the simulator's own memory. (1) `sim run --numa-report` says how the
# engine placed each byte and how much of the process's anonymous memory it did not place, and the figures
# add up; (2) `sim numa predict` with the simulator's access mix (docs/threads.md "The simulator's own memory": mlp 4.5,
# latency sensitivity 0.18, 8 relay threads on a 20-CPU socket) gives, on the 2-socket and 4-socket (8-node)
# machine files, the application throughputs of an independent python3 implementation of docs/perf-numa.md's
# equations, and the picks docs/threads.md gives.
. "$(dirname "$0")/lib.sh" "$@"

expect_rc 0 "run --numa-report" -- "$SIM" run scenarios/geo-small.json --set stop.heights=20 --threads 2 \
  --numa-report --quiet --out "$tmp/o"
contains "$tmp/out" "numa: how: " "numa-report: how"
contains "$tmp/out" "numa: process anonymous memory per node (numa_maps): node0 " "numa-report: process memory"
python3 - "$tmp/out" <<'PY' && ok || bad "numa-report: placed + not placed != process total, or how != placed"
import re, sys
t = open(sys.argv[1]).read()
placed = int(re.search(r"^total +(\d+)", t, re.M).group(1))
how = sum(int(x) for x in re.findall(r"^numa: how: (\d+) bytes all on node", t, re.M))
how += sum(int(x) for x in re.findall(r"^numa: how: .*, (\d+) bytes: weighted interleave", t, re.M))
total = int(re.search(r"; total (\d+)$", t, re.M).group(1))
rest = int(re.search(r"^numa: not placed by the engine: (\d+) bytes", t, re.M).group(1))
assert how == placed, (how, placed)
assert total >= placed and rest == total - placed, (total, placed, rest)
PY

# The access mix: one dependent miss per relay step (3742 a block), one independent miss per message
# (17,000 a block): sensitivity 3742 / 20742 = 0.18, mlp 17000 / 3742 = 4.5; 8 threads on a 20-CPU node.
mix=(--mlp 4.5 --latency-sensitivity 0.18 --set threads_per_cpu=0.4)
for w in 0 0,1; do
  expect_rc 0 "predict 2-socket workers $w" -- "$SIM" numa predict models/machines/intel-xeon-2s.json --workers $w "${mix[@]}" --json
  cp "$tmp/out" "$tmp/2s-$w.json"
done
mix8=(--mlp 4.5 --latency-sensitivity 0.18 --set threads_per_cpu=1)
for w in 0 0,1,2,3 all; do
  expect_rc 0 "predict 8-node workers $w" -- "$SIM" numa predict models/machines/amd-opteron-8node.json --workers $w "${mix8[@]}" --json
  cp "$tmp/out" "$tmp/8n-$w.json"
done
python3 - "$tmp" <<'PY' && ok || bad "numa predict with the simulator's mix: app throughputs or picks differ from the independent model"
import json, sys
d = sys.argv[1]

def app(mach, W, w, mlp, s, tpc):
    """docs/perf-numa.md's application model, written from its equations (not from the C code)."""
    n, B, C, L, cpus = mach["nodes"], mach["bandwidth_gbps"], mach["capacity_gbps"], mach["latency_ns"], mach["cpus_per_node"]
    tot = sum(w); w = [x / tot for x in w]
    m = [min(min(B[i][j] for j in W), C[i] / len(W)) for i in range(n)]
    hi = min(m[i] / w[i] for i in range(n) if w[i] > 0)
    eff = 1 / ((1 - s) / mlp + s)
    def f(u):
        u = min(max(u, 0), 1)
        if u <= 0.4: return 1
        if u <= 0.8: return 1 + 0.3 * (u - 0.4) / 0.4
        return 1.3 + 0.7 * (u - 0.8) / 0.2
    def demand(x):
        out = []
        for j in W:
            lat = sum(w[i] * L[i][j] * f(max(len(W) * x * w[i] / C[i], x * w[i] / B[i][j])) for i in range(n) if w[i] > 0)
            out.append(tpc * cpus[j] * eff * 64 / lat)
        return min(out)
    if demand(hi) >= hi: return len(W) * hi
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if demand(mid) >= mid: lo = mid
        else: hi = mid
    return len(W) * lo

picks = {}
for name, mfile, W, tpc in [("2s-0", "intel-xeon-2s", [0], 0.4), ("2s-0,1", "intel-xeon-2s", [0, 1], 0.4),
                            ("8n-0", "amd-opteron-8node", [0], 1), ("8n-0,1,2,3", "amd-opteron-8node", [0, 1, 2, 3], 1),
                            ("8n-all", "amd-opteron-8node", list(range(8)), 1)]:
    doc = json.load(open(f"{d}/{name}.json"))
    mach = json.load(open(f"models/machines/{mfile}.json"))
    assert doc["workers"] == W, (name, doc["workers"])
    best = max(p["app_gbps"] for p in doc["policies"])
    for p in doc["policies"]:
        want = app(mach, W, p["weights"], 4.5, 0.18, tpc)
        assert abs(p["app_gbps"] / want - 1) < 1e-9, (name, p["policy"], p["app_gbps"], want)
    picks[name] = sorted(p["policy"] for p in doc["policies"] if p["app_gbps"] >= best * (1 - 1e-12))
    print(name, {p["policy"]: round(p["app_gbps"], 2) for p in doc["policies"]}, file=sys.stderr)
# docs/threads.md's picks: one socket busy -> keep pages local (first-touch); several -> spread over them.
assert picks["2s-0"] == ["first-touch", "uniform-workers"], picks
assert picks["2s-0,1"] == ["canonical", "kernel-auto", "sum-rule", "uniform-all", "uniform-workers"], picks
assert picks["8n-0"] == ["first-touch", "uniform-workers"], picks
assert picks["8n-0,1,2,3"] == ["canonical"], picks
assert picks["8n-all"] == ["canonical"], picks
PY

# --mix sim is that mix by name (threads_per_cpu = 8 / the worker nodes' CPUs, at most 1): the same
# application throughputs as the explicit options, and its "pick" is the picks above.
for spec in "2s-0:intel-xeon-2s:0:first-touch uniform-workers" \
            "2s-0,1:intel-xeon-2s:0,1:canonical kernel-auto sum-rule uniform-all uniform-workers" \
            "8n-0:amd-opteron-8node:0:first-touch uniform-workers" "8n-0,1,2,3:amd-opteron-8node:0,1,2,3:canonical" \
            "8n-all:amd-opteron-8node:all:canonical"; do
  IFS=: read -r name mfile w want <<<"$spec"
  expect_rc 0 "predict --mix sim $name" -- "$SIM" numa predict "models/machines/$mfile.json" --workers "$w" --mix sim --json
  python3 - "$tmp/out" "$tmp/$name.json" "$want" <<'PY' && ok || bad "--mix sim $name: not the explicit mix, or the pick differs"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["mix"] == "sim"
assert [p["app_gbps"] for p in a["policies"]] == [p["app_gbps"] for p in b["policies"]], (a["policies"], b["policies"])
assert sorted(a["pick"]) == sorted(sys.argv[3].split()), a["pick"]
assert sorted(b["pick"]) == sorted(sys.argv[3].split()), b["pick"]
PY
done
expect_rc 0 "predict --mix sim text" -- "$SIM" numa predict models/machines/intel-xeon-2s.json --workers 0 --mix sim
contains "$tmp/out" "pick: first-touch, uniform-workers (16.63 GB/s, the best application throughput)" "--mix sim: the pick, in words"
expect_rc 0 "predict --mix sim, mlp overridden" -- "$SIM" numa predict models/machines/intel-xeon-2s.json --workers 0 --mix sim --mlp 10
contains "$tmp/out" '"mlp":10,"latency_sensitivity":0.18,"threads_per_cpu":0.4' "--mix sim: --mlp applies after the mix"
expect_rc 2 "predict --mix unknown" -- "$SIM" numa predict models/machines/intel-xeon-2s.json --mix bogus
is "$(head -n 1 "$tmp/err")" "sim numa predict: --mix: unknown mix 'bogus' (expected: sim)" "--mix unknown message"

echo "numa-self: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
