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
for c in run validate models bench bft sync; do contains "$tmp/out" "  $c" "sim --help lists $c"; done
expect_rc 0 "sim --version" -- "$SIM" --version
contains "$tmp/out" "sim 0.1.0" "version"
for c in run validate models "bench phold" bft sync "sync ibd"; do
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
contains "$tmp/err" "sim models: unknown family 'nosuch' (expected one of: scenario, network, uncle_rule, delay, relay, jitter, stack)" "models unknown family message"
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

# --- bft: PBFT ordering per messaging stack ---
expect_rc 0 "models stack" -- "$SIM" models stack
for w in "family stack:" "rdma-channel" "signal_every" "ib_send_lat" "Cai et al."; do contains "$tmp/out" "$w" "models stack lists $w"; done
# One client, one request, batch 1: the messages of one instance, 2n^2 - n + 1 (29 for n = 4, 92 for n = 7).
expect_rc 0 "bft one request" -- "$SIM" bft --stack tcp --n 4,7 --clients 1 --requests 1 --batch 1 --csv
got=$(awk -F, '$1=="tcp"{printf "%s:%s ", $2, $7}' "$tmp/out")
[ "$got" = "4:29 7:92 " ] && ok || bad "bft message counts: '$got'"
contains "$tmp/out" "# messages per instance of one request, n = 4: request 1, pre-prepare 3, prepare 9, commit 12, reply 4, total 29" "bft per-phase counts"
expect_rc 0 "bft hybrid" -- "$SIM" bft --stack rdma-channel --hybrid --n 3 --clients 1 --requests 1 --batch 1 --csv
got=$(awk -F, '$1=="rdma-channel"{print $7}' "$tmp/out")
[ "$got" = "10" ] && ok || bad "bft hybrid message count: '$got'"
expect_rc 0 "bft all stacks" -- "$SIM" bft --clients 4 --requests 20
for s in tcp rdma-send rdma-write rdma-channel; do contains "$tmp/out" "$s " "bft all lists $s"; done
contains "$tmp/out" "lat_p99_us" "bft table header"
"$SIM" bft --clients 4 --requests 20 >"$tmp/bft2" 2>&1
same_file "$tmp/out" "$tmp/bft2" "bft twice gives the same table"
# TCP is slower than the RDMA channel (throughput column 12).
tp=$(awk '$1=="tcp"{t=$12} $1=="rdma-channel"{c=$12} END{print (c > 2*t) ? "yes" : "no"}' "$tmp/out")
[ "$tp" = "yes" ] && ok || bad "bft: rdma-channel throughput not above 2x tcp"
expect_rc 0 "bft gbps and set" -- "$SIM" bft --stack tcp --gbps 10 --set tcp.o_s_us=4 --clients 1 --requests 2
contains "$tmp/out" "# tcp: o_s 4 us, o_r 3 us, O 0.19 ns/B, L 5 us, G 0.8 ns/B (10 Gb/s)" "bft --gbps and --set echoed"
bft_err() { # WANT_MESSAGE ARGS...
  local want=$1
  shift
  expect_rc 2 "bft $*" -- "$SIM" bft "$@"
  if [ "$(head -n 1 "$tmp/err")" = "$want" ]; then ok; else bad "bft $*: got '$(head -n 1 "$tmp/err")', expected '$want'"; fi
}
bft_err "sim bft: n must be >= 4 for PBFT (n = 3f+1 with f >= 1) (got 3)" --n 3
bft_err "sim bft: n must be 3f+1 for PBFT: 4, 7, 10, ... (got 5); the hybrid protocol takes n = 2f+1" --n 4,5
bft_err "sim bft: n must be 2f+1 >= 3 for the hybrid protocol: 3, 5, 7, ... (got 4)" --hybrid --n 4
bft_err "sim bft: --payload must be >= 0 bytes (got -1)" --payload -1
bft_err "sim bft: --payload must be <= 16777216 bytes (got 99999999)" --payload 99999999
bft_err "sim bft: --payload: '1k' is not an integer" --payload 1k
bft_err "sim bft: --n must be >= 1 (got 0)" --n 0
bft_err "sim bft: unknown stack 'udp' (expected one of: tcp, rdma-send, rdma-write, rdma-channel, all)" --stack udp
bft_err "sim bft: --clients must be >= 1 (got 0)" --clients 0
bft_err "sim bft: batch must be in [1, 128] (got 500)" --batch 500
bft_err "sim bft: \$.tcp.o_s_us: must be in [0, 1e+06] (got -1)" --set tcp.o_s_us=-1
bft_err "sim bft: \$.rdma-channel.bogus: unknown key (expected one of: post_send_us, poll_cq_us, g_us, dma_read_us, inline_bytes, post_recv_us, signal_every, recv_batch, copy_ns_per_byte, buffer_bytes, L_us, G_ns_per_byte, dma_ns_per_byte, mtu_bytes, model, comment)" --set rdma-channel.bogus=1
bft_err "sim bft: --set udp.L_us=1: unknown stack 'udp' (expected one of: tcp, rdma-send, rdma-write, rdma-channel)" --set udp.L_us=1
bft_err "sim bft: --gbps must be in (0, 1e6] (got -10)" --gbps -10
[ ! -s "$tmp/out" ] && ok || bad "bft bad input printed a table"

# --- sync: node sync time ---
expect_rc 0 "sync high-end" -- "$SIM" sync scenarios/sync/high-end.json
contains "$tmp/out" "# pipeline on the published phase times: full = 419 min (published 423, -0.9%)" "sync pipeline check line"
row=$(awk '$1=="full"{print $2, $3, $4, $5}' "$tmp/out")
[ "$row" = "423.6 7:04 423 +0.1" ] && ok || bad "sync high-end full row: '$row'"
row=$(awk '$1=="snap"{print $6, $8}' "$tmp/out")
[ "$row" = "118.0 network" ] && ok || bad "sync high-end snap row: '$row'"
expect_rc 0 "sync old-spec csv with chain" -- "$SIM" sync scenarios/sync/old-spec.json --chain scenarios/sync/mainnet-2023.json --csv
contains "$tmp/out" "old_receipts,182.000,107.200,3.333,483.000,483.000,8:03,cpu,483,+0.0" "sync old-spec receipts row"
contains "$tmp/out" "# chain: ethereum-mainnet-2023-09" "sync chain name"
expect_rc 0 "sync describe" -- "$SIM" sync describe
for w in "disk_iops" "single_thread_iops" "phases.healing" "read_mops_per_snap_min"; do contains "$tmp/out" "$w" "sync describe lists $w"; done
expect_rc 0 "sync ibd" -- "$SIM" sync ibd --machines 1,2,4,8
contains "$tmp/out" "parallel fraction 0.999828 (Utreexo report: 0.99982)" "sync ibd parallel fraction"
row=$(awk '$1=="8"{print $2, $3, $7}' "$tmp/out")
[ "$row" = "53.31 7.990 amdahl" ] && ok || bad "sync ibd 8 machines: '$row'"
expect_rc 0 "sync ibd slow links" -- "$SIM" sync ibd --machines 4 --mbps 100
row=$(awk '$1=="4"{print $2, $7}' "$tmp/out")
[ "$row" = "166.67 bandwidth" ] && ok || bad "sync ibd bandwidth floor: '$row'"
printf '{"name": "z", "vcpus": 4,\n "disk_iops": 0, "net_mbps": -100}\n' >"$tmp/zero.json"
expect_rc 2 "sync zero iops" -- "$SIM" sync "$tmp/zero.json"
printf '%s\n' "$tmp/zero.json: \$.disk_iops: must be in (0, 1e+09] (got 0)" "$tmp/zero.json: \$.net_mbps: must be in (0, 1e+07] (got -100)" >"$tmp/want"
if diff -u "$tmp/want" "$tmp/err" >"$tmp/diff"; then ok; else bad "sync bad machine message: $(cat "$tmp/diff")"; fi
[ ! -s "$tmp/out" ] && ok || bad "sync bad machine printed a table"
printf '{"vcpus": 4, "disk_iops": 100,}\n' >"$tmp/syntax.json"
expect_rc 2 "sync syntax error" -- "$SIM" sync "$tmp/syntax.json"
if [ "$(cat "$tmp/err")" = "$tmp/syntax.json: 1:31: string or '}' expected near '}'" ]; then ok; else bad "sync syntax message: $(cat "$tmp/err")"; fi
printf '{"phases": {"snap": {"peer_mbps": 0}}}\n' >"$tmp/chain.json"
expect_rc 2 "sync bad chain" -- "$SIM" sync scenarios/sync/mid-end.json --chain "$tmp/chain.json"
if [ "$(cat "$tmp/err")" = "$tmp/chain.json: \$.phases.snap.peer_mbps: must be in (0, 1e+09] (got 0)" ]; then ok; else bad "sync bad chain message: $(cat "$tmp/err")"; fi
expect_rc 2 "sync missing file" -- "$SIM" sync "$tmp/none.json"
if [ "$(cat "$tmp/err")" = "$tmp/none.json: cannot open: No such file or directory" ]; then ok; else bad "sync missing file message: $(cat "$tmp/err")"; fi
expect_rc 2 "sync no machine" -- "$SIM" sync
contains "$tmp/err" "sim sync: missing MACHINE (a JSON file), 'ibd' or 'describe'" "sync no machine message"
expect_rc 2 "sync ibd zero machines" -- "$SIM" sync ibd --machines 0,2
contains "$tmp/err" "sim sync ibd: --machines must be >= 1 (got 0)" "sync ibd zero machines message"
expect_rc 2 "sync ibd negative bandwidth" -- "$SIM" sync ibd --mbps -5
contains "$tmp/err" "sim sync ibd: --mbps must be > 0 (got -5)" "sync ibd negative bandwidth message"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
