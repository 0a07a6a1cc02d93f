#!/usr/bin/env bash
# test-study.sh: the measurement study's own processing scripts (tests/study/upstream, unmodified) run on
# `sim run --emc-logs` output with path arguments only, and what they make of it is what sim reports (issue 15
# part A). First each format point the scripts depend on, then the whole pipeline (tests/study/run-pipeline.sh)
# and the comparison of its tables with summary.json, tx_commit.csv and the run's own join table
# (tests/study/compare.py says what is compared and how exactly). The pipeline needs Python 3 with pandas and
# sortedcontainers (Debian: python3-pandas python3-sortedcontainers, which `.ci/install-deps --ci` installs);
# without them that part is skipped with a note, except under CI, where it fails.
# Run from the source root: `bash tests/cli/test-study.sh build/sim/sim`.
. "$(dirname "$0")/lib.sh" "$@"
# py DESC FILE... <<'PY': a Python check of the files (sys.argv[1:]); its assertion message on failure.
py() {
  local desc=$1
  shift
  if python3 - "$@" >"$tmp/py" 2>&1; then ok; else bad "$desc: $(tail -c 600 "$tmp/py")"; fi
}
RK=tests/data/emc-rinkeby-2018-09
UP=tests/study/upstream/log-pre-processing

# ---- The run: the 2019 scenario, 300 heights. Seed 2 has one block at the first height: the study's
# Step-2-Set-Main-Blocks.py walks the main chain down to "the" lowest-numbered block and fails when the first
# height has a fork (a limitation of the script, not of the logs). 0.3 transactions per second keep every
# per-vantage sample below 4096, where sim's quantiles are exact (analysis/txmetrics.h), and the pipeline short.
R=$tmp/run
expect_rc 0 "run pools-2019 with EMC logs" -- "$SIM" run scenarios/pools-2019.json --set stop.heights=300 \
  --set transactions.rate_per_s=0.3 --seed 2 --emc-logs --out "$R" --quiet
is "$(awk -F, '$2 == 1' "$R/blocks.csv" | wc -l)" 1 "one block at the first height (see above)"

# ---- File names: the study's 2019 layout (its rsyslog.conf), not the 2018 one.
for v in WE CE NA EA; do
  for f in blocks.log blocksAnnouncements.log heads.log txs.log txgasused.log; do
    [ -s "$R/emc/$v/$f" ] && ok || bad "emc/$v/$f missing or empty"
  done
done
is "$(cd "$R/emc" && ls -d */ | tr -d / | tr '\n' ' ')" "CE EA NA WE " "one directory per vantage point"
is "$(ls "$R/emc/WE" | tr '\n' ' ')" "blocks.log blocksAnnouncements.log heads.log txgasused.log txs.log " "the 2019 names only"
is "$(ls "$R/emc" | grep -v / | grep -v -x -e CE -e EA -e NA -e WE | tr '\n' ' ')" \
  "blocks-propagation-times-v3.log pools.csv " "emc/ also holds the join table and pools.csv"
grep -q 'LOG_NAME="txs.log"' "$UP/txs/txs-dropDuplicates.sh" && ok || bad "the study's txs script reads txs.log"

# ---- Every field shaped as in the real logs (Rinkeby, 2018), column by column.
py "fields shaped as in the real logs" "$RK" "$R/emc/WE" <<'PY'
import re, sys, os
rk, we = sys.argv[1:3]
T = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}"
H, A, N = r"0x[0-9a-f]{64}", r"0x[0-9a-fA-F]{40}", r"\d+"
L = rf"(?:{H};)*"
shapes = {
    ("NewBlockMsg.log", "blocks.log"): [T, H, N, N, N, N, N, A, H, H, N, L, L],
    ("NewBlockHashesMsg.log", "blocksAnnouncements.log"): [T, H],
    ("NewBlockHead.log", "heads.log"): [T, H, N],
    ("TxMsg.log", "txs.log"): [T, H, N, N, N, N, "TX|MC|CC", N, N, rf"{A}|nil", A, r'nil|"[^"]*"'],
}
for (real, ours), cols in shapes.items():
    for path in (os.path.join(rk, real), os.path.join(we, ours)):
        for n, line in enumerate(open(path), 1):
            f = line.rstrip("\n").split(",")
            assert len(f) == len(cols), (path, n, len(f))
            for i, (v, c) in enumerate(zip(f, cols)):
                assert re.fullmatch(c, v), (path, n, i + 1, v)
# UncleHash: Keccak-256 of the empty RLP list for a block without uncles, as in every real line.
EMPTY = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347"
real = [l.split(",") for l in open(os.path.join(rk, "NewBlockMsg.log"))]
ours = [l.rstrip("\n").split(",") for l in open(os.path.join(we, "blocks.log"))]
assert {f[9] for f in real} == {EMPTY}
assert all(f[9] == EMPTY for f in ours if f[12] == ""), "no uncles: the empty-list hash"
with_uncles = [f for f in ours if f[12]]
assert with_uncles and all(f[9] != EMPTY and f[9] != "0x" + "0" * 64 for f in with_uncles)
assert len({f[12]: f[9] for f in with_uncles}) == len({f[9] for f in with_uncles}), "one UncleHash per uncle set"
PY

# ---- Coinbase: the pools' real addresses, written as the study's scripts compare them (EIP-55, byte for byte);
# "Others" (40 miners) keeps one synthetic address per miner.
contains "$R/emc/WE/blocks.log" ",0xEA674fdDe714fd979de3EdF0F56AA9716B898ec8," "an Ethermine block carries Ethermine's address"
grep -q '"0xEA674fdDe714fd979de3EdF0F56AA9716B898ec8"' tests/study/upstream/log-pre-processing/post-thesis/blcks-propag-delays-updated.py \
  && ok || bad "the study's script names that address"
py "pools.csv: real addresses for the named pools, synthetic ones per Others miner" "$R/emc/pools.csv" scenarios/data/ethereum-2019-04/pool_addresses.csv <<'PY'
import csv, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
real = {r["address"] for r in csv.DictReader(open(sys.argv[2]))}
by = collections.defaultdict(list)
for r in rows:
    by[r["name"]].append(r["address"].lower())
assert len(by) == 16 and len(by["Others"]) == 40, {k: len(v) for k, v in by.items()}
assert all(len(v) == 1 and v[0] in real for k, v in by.items() if k != "Others"), by
assert not set(by["Others"]) & real and all(a.endswith("0" * 24) for a in by["Others"])
assert by["MiningPoolHub"] == ["0xb2930b35844a230f00e51431acae96fe543a0347"]
PY

# ---- Numbers: from chain.first_block_number (the 2019 scenarios: 7479573, the month's first block), in the
# blocks, heads and join table alike; the simulator's own tables keep heights.
is "$(cut -d, -f3 "$R/emc/WE/blocks.log" | sort -n | sed -n '1p;$p' | tr '\n' ' ')" "7479573 7479878 " "blocks.log numbers: the 300 heights and those mined past them to settle"
is "$(head -1 "$R/emc/WE/heads.log" | cut -d, -f3)" 7479573 "heads.log numbers"
is "$(cut -d, -f2 "$R/emc/blocks-propagation-times-v3.log" | sort -n | sed -n '1p;$p' | tr '\n' ' ')" "7479573 7479872 " "the join table: the window's numbers"
is "$(awk -F, '$2 == 1 { print $1 }' "$R/blocks.csv")" "$(awk -F, '$3 == 7479573 { print substr($2, 1, 18) }' "$R/emc/WE/blocks.log")" "blocks.csv keeps heights from 1"
# The first block's parent stands for the real block below (a zero parent means block 1's, the genesis).
is "$(awk -F, '$3 == 7479573 { print $9 }' "$R/emc/WE/blocks.log" | sort -u | wc -l)" 1 "one parent for the first height"
awk -F, '$3 == 7479573 { print $9 }' "$R/emc/WE/blocks.log" | grep -qv '^0x0000000000000000' && ok || bad "a first block's parent is not zero"
# Default 1: a scenario without it numbers from 1, block 1's parent is the zero hash, as before.
expect_rc 0 "geo-small with EMC logs" -- "$SIM" run scenarios/geo-small.json --set stop.heights=20 --emc-logs --out "$tmp/gs" --quiet
is "$(cut -d, -f3 "$tmp/gs/emc/WE/blocks.log" | sort -n | head -1)" 1 "default first number"
is "$(awk -F, '$3 == 1 { print $9 }' "$tmp/gs/emc/WE/blocks.log" | sort -u)" "0x0000000000000000000000000000000000000000000000000000000000000000" "block 1's parent"
[ ! -e "$tmp/gs/emc/WE/txgasused.log" ] && ok || bad "no txgasused.log without a transactions section"

# ---- txgasused.log: each transaction of each block received in full, its gas limit as Geth logged it.
py "txgasused.log" "$R/emc/WE" <<'PY'
import sys, os
d = sys.argv[1]
blocks = [l.rstrip("\n").split(",") for l in open(os.path.join(d, "blocks.log"))]
want = [(b[0], b[1], t) for b in blocks for t in b[11].split(";") if t]
gas = [l.rstrip("\n").split(",") for l in open(os.path.join(d, "txgasused.log"))]
assert [tuple(g[:3]) for g in gas] == want, (len(gas), len(want))
limit = {}
for l in open(os.path.join(d, "txs.log")):
    f = l.split(",")
    limit[f[1]] = f[2]
assert all(g[3] == limit[g[2]] for g in gas if g[2] in limit) and sum(g[2] in limit for g in gas) > 1000
# Transaction hashes sort as randomly as real ones (ids in creation order made the study's Step-2 fail).
hashes = [l.split(",")[1] for l in open(os.path.join(d, "txs.log"))]
assert sorted(hashes) != hashes and max(hashes)[:4] != "0x00", max(hashes)
PY

# ---- The join table in the study's own format (what its scripts wrote as blocks-propagation-times-v3.log and
# its geography script reads); observations.csv stays sim's own table with a header.
py "the study's join table" "$R/emc/blocks-propagation-times-v3.log" "$R/observations.csv" "$R/summary.json" <<'PY'
import csv, sys, json, re
rows = list(csv.reader(open(sys.argv[1])))
s = json.load(open(sys.argv[3]))
assert len(rows) == s["propagation"]["blocks_seen_by_all"] and all(len(r) == 20 for r in rows)
assert not rows[0][0].startswith("BlockHash"), "no header"
for r in rows:
    assert re.fullmatch(r"0x[0-9a-f]{64}", r[0]) and r[2] in ("Main", "Recognized", "Uncle"), r
    assert re.fullmatch(r"2019-04-01 \d\d:\d\d:\d\d(\.\d{3}000)?\+00:00", r[7]), r[7]
    assert all(re.fullmatch(r"\d+\.\d+", x) for x in r[8:12]) and "0.0" in r[8:12], r
main = [r for r in rows if r[2] == "Main"]
assert len(main) == s["chain"]["main"] and sum(r[2] == "Recognized" for r in rows) == s["chain"]["uncles_included"]
assert next(csv.reader(open(sys.argv[2])))[:3] == ["BlockHash", "Number", "BlockType"]
PY

# ---- Both layouts are read: the 2019 names as written, and the same logs under the 2018 names.
expect_rc 0 "replay the 2019 layout" -- "$SIM" replay "$R/emc/WE" "$R/emc/CE" "$R/emc/NA" "$R/emc/EA" \
  --pools "$R/emc/pools.csv" --heights 300 --out "$tmp/replay" --quiet
for v in WE CE NA EA; do
  mkdir -p "$tmp/old/$v"
  cp "$R/emc/$v/blocks.log" "$tmp/old/$v/NewBlockMsg.log"
  cp "$R/emc/$v/blocksAnnouncements.log" "$tmp/old/$v/NewBlockHashesMsg.log"
  cp "$R/emc/$v/txs.log" "$tmp/old/$v/TxMsg.log"
  cp "$R/emc/$v/heads.log" "$tmp/old/$v/NewBlockHead.log"
done
expect_rc 0 "replay the 2018 layout" -- "$SIM" replay "$tmp/old/WE" "$tmp/old/CE" "$tmp/old/NA" "$tmp/old/EA" \
  --pools "$R/emc/pools.csv" --heights 300 --out "$tmp/replay-old" --quiet
py "replay: the run's chain and transactions from either layout" "$R/summary.json" "$tmp/replay/summary.json" "$tmp/replay-old/summary.json" <<'PY'
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:4])
drop = lambda d: {k: v for k, v in d.items() if k != "mean_interval_s"}  # header times are whole seconds
assert drop(a["chain"]) == drop(b["chain"]) == drop(c["chain"]), (a["chain"], b["chain"])
assert b["replay"]["first_number"] == 7479573 and b["replay"]["placeholder_blocks"] == 0, b["replay"]
assert a["tx"]["committed"] == b["tx"]["committed"] == c["tx"]["committed"]
assert b["propagation"] == c["propagation"] and b["tx"] == c["tx"]
PY

# ---- Bad input: where the scenario gives these fields, FILE: $.path: why, exit 2.
expect_rc 2 "coinbase not an address" -- "$SIM" validate scenarios/pools-2019.json --set 'pools[0].coinbase=0x12'
is "$(cat "$tmp/err")" '--set pools[0].coinbase: must be an address: 0x followed by 40 hex digits (got "0x12")' "coinbase message"
expect_rc 2 "coinbase for a pool of many miners" -- "$SIM" validate scenarios/pools-2019.json --set 'pools[15].coinbase=0xea674fdde714fd979de3edf0f56aa9716b898ec9'
is "$(cat "$tmp/err")" "--set pools[15].coinbase: a pool of 40 independent miners has one synthetic address per miner; coinbase is for a pool of one miner" "coinbase many miners message"
expect_rc 2 "the same coinbase twice" -- "$SIM" validate scenarios/pools-2019.json --set 'pools[1].coinbase=0xEA674FDDE714FD979DE3EDF0F56AA9716B898EC8'
is "$(cat "$tmp/err")" "--set pools[1].coinbase: the same address as \$.pools[0].coinbase (a block names one pool)" "duplicate coinbase message"
expect_rc 2 "first block number 0" -- "$SIM" validate scenarios/pools-2019.json --set chain.first_block_number=0
contains "$tmp/err" "chain.first_block_number" "first block number message names the path"
expect_rc 0 "sim models lists both" -- "$SIM" models
contains "$tmp/out" "first_block_number" "sim models: first_block_number"
contains "$tmp/out" "coinbase" "sim models: coinbase"

# ---- The study's pipeline on these logs, path arguments only, and its figures against sim's.
have_py=
for c in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$c" -c 'import pandas, numpy, sortedcontainers' 2>/dev/null; then have_py=$(command -v "$c"); break; fi
done
if [ -z "$have_py" ]; then
  if [ "${CI:-}" = true ]; then
    bad "no python3 with pandas and sortedcontainers (.ci/install-deps --ci installs python3-pandas python3-sortedcontainers)"
  else
    echo "note: no python3 with pandas and sortedcontainers: the study's pipeline was not run"
  fi
else
  if PYTHON=$have_py sh tests/study/run-pipeline.sh "$R/emc" "$tmp/work" WE CE NA EA 7479872 >"$tmp/out" 2>&1; then ok; else
    bad "the study's pipeline failed: $(tail -c 1500 "$tmp/out")"
  fi
  if [ -f "$tmp/work/ANG/blocks-propagation-times-v3.log" ]; then
    if "$have_py" tests/study/compare.py "$R" "$tmp/work" "$tmp/replay" scenarios/data/ethereum-2019-04/pool_addresses.csv >"$tmp/out" 2>&1; then
      ok
    else
      bad "the study's figures against sim's: $(tail -c 1500 "$tmp/out")"
    fi
    contains "$tmp/out" "compare.py: all" "compare.py ran every check"
  fi
fi

echo "test-study: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
