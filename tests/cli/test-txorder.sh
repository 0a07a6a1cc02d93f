#!/usr/bin/env bash
# test-txorder.sh: out-of-order transactions, both definitions (docs/txorder.md, "Out-of-order transactions"):
#  1. the real Rinkeby logs: `sim replay`'s out-of-order and arrival figures equal those that
#     tests/study/txorder.py computes independently from the raw TxMsg.log;
#  2. a hand-built log of three senders (nonces 1, 2, 10 received in order; a millisecond tie; a replacement)
#     whose answer is worked out below; where pandas is installed, the study's own Step-7-Set-In-Order.py marks
#     the same transaction out of order as sim's "as published" figure;
#  3. simulated runs whose answer is known: with in-order connections (peer_fifo, the default) and the gap hold
#     at every node, no vantage point receives a sender's transactions out of nonce order unless a per-peer
#     queue drops ("region" never drops; "flood" with max_queued_lists=0 never drops): the intended share is
#     exactly 0, even with bursts entering at two nodes; without peer_fifo (a latency draw per message) two
#     entry nodes reorder; a queue of one list drops and counts its drops; and a replay of the run's own logs
#     gives the run's "as published" figures exactly (the logs' milliseconds are the run's times floored);
#     the region trees stopped once every target has its time give the same files as trees over the network.
. "$(dirname "$0")/lib.sh" "$@"

py=$(command -v python3 || true)
num() { "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[k]
print(repr(d))' "$1" "$2"; }
near() { # GOT WANT DESC: equal within 1e-12
  if [ -n "$1" ] && "$py" -c "import sys; sys.exit(abs(float('$1') - eval('$2')) > 1e-12)"; then ok; else
    bad "$3: got '$1', expected '$2'"; fi
}

# ---- 1. the real logs ----
R=tests/data/emc-rinkeby-2018-09
expect_rc 0 "replay of the Rinkeby logs" -- "$SIM" replay "$R" --quiet --out "$tmp/rk"
if [ -n "$py" ]; then
  "$py" tests/study/txorder.py "$R/TxMsg.log" >"$tmp/ref"
  while read -r key want; do
    got=$(num "$tmp/rk/summary.json" "tx.$key")
    near "$got" "$want" "Rinkeby tx.$key (replay against txorder.py)"
  done <"$tmp/ref"
  is "$(wc -l <"$tmp/ref")" 5 "txorder.py printed every figure"
  # committed: 242 transactions in main blocks, 0 out of order as intended, 2 as the study's script
  # computed (nonces crossing a power of ten sort before lower ones as text)
  is "$(num "$tmp/rk/summary.json" tx.committed)" 242 "Rinkeby committed"
  near "$(num "$tmp/rk/summary.json" tx.out_of_order_share)" 0 "Rinkeby committed out of order, intended"
  near "$(num "$tmp/rk/summary.json" tx.out_of_order_share_as_published)" "2/242" \
    "Rinkeby committed out of order, as published"
fi

# ---- 2. a hand-built log ----
# Block 0xb2 (number 101, parent 0xb1) includes every tx but 0x..a4's replacement; 0xb1 has none.
# Sender 0x11..: nonces 1, 2, 10 at .100, .200, .300 s -> intended in order; as text (1, 10, 2) nonce 2 is
#   received before 10: out of order.
# Sender 0x22..: nonces 3 and 4 in the same millisecond (.400): in order in both.
# Sender 0x33..: nonce 7 at .500, then a replacement of nonce 7 (never mined) at .450, nonce 8 at .600: the
#   replacement is not lower than nonce 7; every tx in order.
# Committed 7: intended 0, as published 1/7. Received 8: intended 0, as published 1/8. Consecutive nonces
# received: (1,2), (3,4) in the same ms, (7,8) with 7 first received at .450 (its replacement): 1/3.
L="$tmp/hand"
mkdir -p "$L"
h() { printf '0x%016x%048x' "$1" 0; }
a() { printf '0x%016x%024x' "$1" 0; }
tx() { # TIME_MS ID NONCE SENDER
  echo "2018-09-18T15:14:15.$1+0100,$(h "$2"),21000,1000000000,0,$3,TX,21000000000000,110,$(a 9),$(a "$4"),nil"
}
{
  tx 100 161 1 17; tx 200 162 2 17; tx 300 163 10 17
  tx 400 164 3 34; tx 400 165 4 34
  tx 500 166 7 51; tx 450 167 7 51; tx 600 168 8 51
} >"$L/TxMsg.log"
U=0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347
{
  echo "2018-09-18T15:14:14.000+0100,$(h 177),100,8000000,0,2,1537280054,$(a 0),$(h 176),$U,600,,"
  echo "2018-09-18T15:14:16.000+0100,$(h 178),101,8000000,126000,2,1537280056,$(a 0),$(h 177),$U,1200,$(h 161);$(h 162);$(h 163);$(h 164);$(h 165);$(h 166);$(h 168);,"
} >"$L/NewBlockMsg.log"
expect_rc 0 "replay of the hand-built log" -- "$SIM" replay "$L" --quiet --out "$tmp/hr"
S="$tmp/hr/summary.json"
if [ -n "$py" ]; then
  is "$(num "$S" tx.committed)" 7 "hand-built: committed"
  near "$(num "$S" tx.out_of_order_share)" 0 "hand-built: committed out of order, intended"
  near "$(num "$S" tx.out_of_order_share_as_published)" 1/7 "hand-built: committed out of order, as published"
  near "$(num "$S" tx.out_of_order_seen_share.intended)" 0 "hand-built: received out of order, intended"
  near "$(num "$S" tx.out_of_order_seen_share.as_published)" 1/8 "hand-built: received out of order, as published"
  near "$(num "$S" tx.arrival.same_ms_share)" 1/3 "hand-built: consecutive nonces in the same ms"
  "$py" tests/study/txorder.py "$L/TxMsg.log" >"$tmp/href"
  near "$(awk '$1 == "out_of_order_seen_share.as_published" {print $2}' "$tmp/href")" 1/8 "hand-built: txorder.py"
  # The study's own script, on the stage-6 table of these transactions (its 22 columns; committed ones
  # "Committed"): the transaction it marks InOrder False is nonce 2 of sender 0x11.
  if "$py" -c 'import pandas' 2>/dev/null; then
    while IFS= read -r line; do
      hash=$(echo "$line" | cut -d, -f2)
      st=Committed
      [ "$hash" = "$(h 167)" ] && st=NeverCommitting
      echo "$line,,,,,,$st,,,,"
    done <"$L/TxMsg.log" >"$tmp/txs-stage-6.log"
    (cd "$tmp" && "$py" "$ROOT/tests/study/upstream/log-pre-processing/txs/Step-7-Set-In-Order.py" txs-stage-6.log) \
      >"$tmp/out" 2>&1 || bad "Step-7-Set-In-Order.py failed: $(tail -c 600 "$tmp/out")"
    is "$(awk -F, '$17 == "False" {print $2 "/" $6}' "$tmp/txs-stage-7.log")" "$(h 162)/2" \
      "the study's script marks nonce 2 of 0x11 out of order"
    is "$(awk -F, '$17 == "True"' "$tmp/txs-stage-7.log" | wc -l)" 6 "the study's script: 6 in order"
  fi
fi

# ---- 3. simulated runs whose answer is known ----
run() { # OUT ENTRY_NODES [--set ...]
  out=$1 entries=$2
  shift 2
  "$SIM" run scenarios/pools-2019.json --set network.nodes=2000 --set stop.heights=30 --seed 3 --quiet \
    --set transactions.rate_per_s=2 --set transactions.burst_share=0.5 --set transactions.burst_txs=40 \
    --set transactions.burst_entry_nodes="$entries" "$@" --emc-logs --out "$out" >"$tmp/out" 2>&1 ||
    bad "sim run ($entries entry nodes $*): $(tail -c 600 "$tmp/out")"
}
flood() { # OUT [--set ...]: the small scenario, one flood per transaction
  out=$1
  shift
  "$SIM" run scenarios/geo-small.json --set stop.heights=20 --seed 5 --quiet --set chain.tx_rate_per_s=0 \
    --set transactions.rate_per_s=2 \
    --set transactions.burst_share=0.5 --set transactions.burst_txs=40 --set transactions.propagation=flood \
    "$@" --out "$out" >"$tmp/out" 2>&1 || bad "sim run flood $*: $(tail -c 600 "$tmp/out")"
}
run "$tmp/one" 1
# The region trees stop once every vantage point and pool has its time (tree_stop): exact, so the run with
# every tree spanning the network writes the same files, its logs included (summary.json: but for the setting).
run "$tmp/one-full" 1 --set transactions.tree_stop=false
(cd "$tmp/one" && find . -type f ! -name summary.json ! -name .sim-result | sort) >"$tmp/one.files"
[ -s "$tmp/one.files" ] && grep -q emc/ "$tmp/one.files" && ok || bad "the run wrote its logs"
while read -r f; do
  same_file "$tmp/one/$f" "$tmp/one-full/$f" "tree_stop=false: $f as with the trees stopped"
done <"$tmp/one.files"
if [ -n "$py" ]; then
  strip_stop() { # summary.json without the run's own figures, the command line and the setting itself (the
    # event queue's largest size: a pipelined run, the default at 2 threads, holds it as its relays' timing has it)
    "$py" -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in ("wall_s","events_per_s","peak_rss_bytes","peak_pending"): d["sim"].pop(k)
for k in ("threads","command_line"): d["header"].pop(k)
d["header"]["scenario"]["transactions"].pop("tree_stop")
print(json.dumps(d))' "$1" >"$2"
  }
  strip_stop "$tmp/one/summary.json" "$tmp/one.json"
  strip_stop "$tmp/one-full/summary.json" "$tmp/one-full.json"
  same_file "$tmp/one.json" "$tmp/one-full.json" "tree_stop=false: summary.json as with the trees stopped"
fi
run "$tmp/two" 2
run "$tmp/two-nofifo" 2 --set transactions.peer_fifo=false
flood "$tmp/f-fifo" --set transactions.max_queued_lists=0
flood "$tmp/f-nofifo" --set transactions.peer_fifo=false
flood "$tmp/f-q1" --set transactions.max_queued_lists=1
# Three accounts for every session, sessions of 20 transactions 10 ms apart: sessions of one account overlap,
# from different nodes; the gap hold is the account's, so still nothing out of order (a hold per session
# reorders 4.4% here).
flood "$tmp/r-few" --set transactions.propagation=region --set transactions.senders=3 --set transactions.burst_share=0 \
  --set transactions.sender_gap_s=0.01 --set transactions.txs_per_sender=20 --set transactions.rate_per_s=20
if [ -n "$py" ]; then
  near "$(num "$tmp/one/summary.json" tx.out_of_order_seen_share.intended)" 0 "one entry node: nothing out of order"
  near "$(num "$tmp/two/summary.json" tx.out_of_order_seen_share.intended)" 0 \
    "two entry nodes, in-order connections: nothing out of order"
  "$py" -c "import json,sys; sys.exit(not json.load(open('$tmp/two-nofifo/summary.json'))['tx']['out_of_order_seen_share']['intended'] > 0)" &&
    ok || bad "two entry nodes without peer_fifo: some transactions out of order"
  near "$(num "$tmp/f-fifo/summary.json" tx.out_of_order_seen_share.intended)" 0 \
    "flood, in-order connections, no drops: nothing out of order"
  is "$(num "$tmp/f-fifo/summary.json" tx.lists_dropped)" 0 "flood, unbounded queues: no list dropped"
  near "$(num "$tmp/r-few/summary.json" tx.out_of_order_seen_share.intended)" 0 \
    "three accounts, overlapping sessions: nothing out of order"
  is "$(num "$tmp/r-few/summary.json" tx.evicted)" 0 "three accounts: no eviction (no nonce reused)"
  "$py" -c "import json,sys; sys.exit(not json.load(open('$tmp/f-nofifo/summary.json'))['tx']['out_of_order_seen_share']['intended'] > 0)" &&
    ok || bad "flood without peer_fifo: a latency draw per message reorders"
  "$py" -c "import json,sys; sys.exit(not json.load(open('$tmp/f-q1/summary.json'))['tx']['lists_dropped'] > 0)" &&
    ok || bad "flood, a queue of one list: bursts' lists dropped and counted"
  "$py" -c "import json,sys; sys.exit(not json.load(open('$tmp/one/summary.json'))['tx']['arrival']['same_ms_share'] > 0.8)" &&
    ok || bad "bursts signed 0.1 ms apart (a pair straddles a millisecond about 10% of the time): most consecutive nonces in the same millisecond"
  E="$tmp/one/emc"
  expect_rc 0 "replay of the run's logs" -- "$SIM" replay "$E/WE" "$E/CE" "$E/NA" "$E/EA" --pools "$E/pools.csv" \
    --heights 30 --quiet --out "$tmp/rr"
  for k in out_of_order_share_as_published out_of_order_share_as_published_by_vantage.CE \
    out_of_order_seen_share.as_published arrival.same_ms_share arrival.txs_per_sender_mean; do
    near "$(num "$tmp/rr/summary.json" "tx.$k")" "$(num "$tmp/one/summary.json" "tx.$k")" "replay of the run's logs: tx.$k as the run's"
  done
fi

echo "test-txorder: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
