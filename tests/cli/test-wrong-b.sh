#!/usr/bin/env bash
# test-wrong-b.sh: no silent wrong results from the measured-log commands (issue 13 §3): damaged EMC logs
# (built here from the real Rinkeby logs) are reported line by line or refused, never half used in silence;
# trace-driven runs say what they used; names that JSON cannot hold are refused where they enter; numeric
# options without meaning are refused; a report figure without data is no failure; --quiet never hides a
# warning. Run from the source root: `bash tests/cli/test-wrong-b.sh build/sim/sim`.
. "$(dirname "$0")/lib.sh" "$@"
# is_text FILE DESC LINE...: FILE holds exactly these lines, besides the notes every copy of the real logs
# gives (their 6 same-millisecond duplicates and 2 gaps; test-badlogs.sh checks those exactly).
is_text() {
  local f=$1 desc=$2
  shift 2
  if [ $# -eq 0 ]; then : >"$tmp/want"; else printf '%s\n' "$@" >"$tmp/want"; fi
  LC_ALL=C grep -a -v -e ': duplicate of line [0-9]* (same BlockHash and LocalTimestamp): skipped$' \
    -e ": gap: Number [0-9]* follows [0-9]* in this vantage point's blocks (" \
    "$f" >"$tmp/is_text" || true
  same_file "$tmp/is_text" "$tmp/want" "$desc"
}
# py DESC FILE... <<'PY': a Python check of the files (sys.argv[1:]); its assertion message on failure.
py() {
  local desc=$1
  shift
  if python3 - "$@" >"$tmp/py" 2>&1; then ok; else bad "$desc: $(tail -c 600 "$tmp/py")"; fi
}

RK=tests/data/emc-rinkeby-2018-09
# logs DIR: a copy of the Rinkeby logs to damage.
logs() {
  rm -rf "$1"
  mkdir -p "$1"
  cp "$RK"/*.log "$1/"
}
X=0xc26739054129cb52 # block 3010219: lines 2, 4, 5 and 6 of NewBlockMsg.log; its parent is line 1, a child line 8

# ---- 1. Damaged block lines: reported as FILE:LINE: why, fatal with --strict; the rest of the chain kept ----

# The undamaged logs: 37 blocks on 45 heights (16 placeholders), 53 blocks in the chain, 8 unreferenced.
expect_rc 0 "replay rinkeby" -- "$SIM" replay "$RK" --out "$tmp/r0"
is_text "$tmp/err" "replay rinkeby: no warning"
contains "$tmp/out" "blocks 37 (heights 45 from number 3010201; 16 placeholders for blocks not in the logs, 0 left out as inconsistent)" "replay report counts placeholders and blocks left out"

# One block's Number damaged on all its 4 lines: it contradicts its parent and its children. It used to
# detach 22 blocks without a word (--strict too).
d=$tmp/num
logs "$d"
sed -i "/$X/ s/,3010219,/,3010300,/" "$d/NewBlockMsg.log"
expect_rc 2 "strict replay, damaged Number" -- "$SIM" replay "$d" --strict --out "$tmp/rs"
is_text "$tmp/err" "strict replay, damaged Number: message" \
  "sim replay: $d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8)"
[ ! -e "$tmp/rs" ] && ok || bad "a strict replay that failed wrote $tmp/rs"
expect_rc 0 "replay, damaged Number" -- "$SIM" replay "$d" --out "$tmp/r1"
is_text "$tmp/err" "replay, damaged Number: the block left out, at its first line" \
  "$d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8): block left out (4 lines)"
contains "$tmp/out" "blocks 36 (heights 45 from number 3010201; 17 placeholders for blocks not in the logs, 1 left out as inconsistent)" "replay report, damaged Number"
contains "$tmp/out" "bad lines 4" "replay report counts the block's lines as bad"
# The chain is the undamaged one: the block left out is stood for by a placeholder, its children stay.
py "replay, damaged Number: counts and chain" "$tmp/r1/summary.json" "$tmp/r0/summary.json" <<'PY'
import json, sys
d, u = (json.load(open(p)) for p in sys.argv[1:3])
r = {k: d["replay"][k] for k in ("bad_lines", "blocks", "detached_blocks", "placeholder_blocks", "first_number")}
assert r == {"bad_lines": 4, "blocks": 36, "detached_blocks": 1, "placeholder_blocks": 17, "first_number": 3010201}, r
keys = ("heights", "blocks_total", "main", "forks_unreferenced", "uncles_included")
assert {k: d["chain"][k] for k in keys} == {k: u["chain"][k] for k in keys} == \
    {"heights": 45, "blocks_total": 53, "main": 45, "forks_unreferenced": 8, "uncles_included": 0}, d["chain"]
assert d["propagation"]["blocks_seen_by_all"] == 36, d["propagation"]
PY
# --quiet silences the report, not the warning.
expect_rc 0 "quiet replay, damaged Number" -- "$SIM" replay "$d" --out "$tmp/r1q" --quiet
is_text "$tmp/out" "quiet replay prints no report"
is_text "$tmp/err" "quiet replay still warns" \
  "$d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8): block left out (4 lines)"
# So does calibrate, which reads the logs as replay does.
expect_rc 0 "quiet calibrate, damaged Number" -- "$SIM" calibrate "$d" -o "$tmp/cal.json" --quiet
is_text "$tmp/out" "quiet calibrate prints no table"
is_text "$tmp/err" "quiet calibrate still warns" \
  "$d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8): block left out (4 lines)"
py "calibrate counts the block left out" "$tmp/cal.json" <<'PY'
import json, sys
logs = json.load(open(sys.argv[1]))["calibration"]["header"]["calibrate"]["logs"]
assert (logs["bad_lines"], logs["detached_blocks"], logs["blocks"]) == (4, 1, 36), logs
PY

# Only the block's first line damaged: the 3 later lines disagree with it (the first line is the one used),
# then the chain rejects it.
d=$tmp/num1
logs "$d"
sed -i "2 s/,3010219,/,3010300,/" "$d/NewBlockMsg.log"
expect_rc 0 "replay, first line's Number damaged" -- "$SIM" replay "$d" --out "$tmp/r2" --quiet
is_text "$tmp/err" "replay, first line's Number damaged: messages" \
  "$d/NewBlockMsg.log:4: Number 3010219 differs from the same block's first line ($d/NewBlockMsg.log:2: 3010300)" \
  "$d/NewBlockMsg.log:5: Number 3010219 differs from the same block's first line ($d/NewBlockMsg.log:2: 3010300)" \
  "$d/NewBlockMsg.log:6: Number 3010219 differs from the same block's first line ($d/NewBlockMsg.log:2: 3010300)" \
  "$d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8): block left out (1 line)"
py "replay, first line's Number damaged: counts" "$tmp/r2/summary.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
assert (r["bad_lines"], r["detached_blocks"], r["blocks"], r["placeholder_blocks"]) == (4, 1, 36, 17), r
PY

# A later line of the block damaged: that line alone is bad; the block stays. (block_lines counts the lines
# that parse, bad or not.)
d=$tmp/num4
logs "$d"
sed -i "4 s/,3010219,/,3010300,/" "$d/NewBlockMsg.log"
expect_rc 2 "strict replay, a duplicate line's Number damaged" -- "$SIM" replay "$d" --strict --out "$tmp/rs"
is_text "$tmp/err" "strict replay, a duplicate line's Number damaged: message" \
  "sim replay: $d/NewBlockMsg.log:4: Number 3010300 differs from the same block's first line ($d/NewBlockMsg.log:2: 3010219)"
expect_rc 0 "replay, a duplicate line's Number damaged" -- "$SIM" replay "$d" --out "$tmp/r3" --quiet
is_text "$tmp/err" "replay, a duplicate line's Number damaged: message" \
  "$d/NewBlockMsg.log:4: Number 3010300 differs from the same block's first line ($d/NewBlockMsg.log:2: 3010219)"
py "replay, a duplicate line's Number damaged: counts" "$tmp/r3/summary.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
assert (r["bad_lines"], r["detached_blocks"], r["blocks"], r["placeholder_blocks"], r["block_lines"]) == (1, 0, 37, 16, 66), r
PY

# A leaf's Number damaged (block 3010236 at line 39, whose parent at line 37 agrees with its own parent):
# the child is the one that contradicts.
d=$tmp/leaf
logs "$d"
sed -i "39 s/,3010236,/,3010290,/" "$d/NewBlockMsg.log"
expect_rc 0 "replay, a leaf's Number damaged" -- "$SIM" replay "$d" --out "$tmp/r4" --quiet
is_text "$tmp/err" "replay, a leaf's Number damaged: message" \
  "$d/NewBlockMsg.log:39: Number 3010290 does not follow its parent's (3010235 at $d/NewBlockMsg.log:37): block left out (1 line)"
py "replay, a leaf's Number damaged: the heights stay" "$tmp/r4/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["replay"]["detached_blocks"], d["replay"]["bad_lines"], d["chain"]["heights"]) == (1, 1, 45), d["replay"]
PY

# A parent hash whose first 8 bytes are zero is the genesis's: only block 1 can have it.
d=$tmp/gen
logs "$d"
sed -i "/$X/ s/,0xaf2426c2fb81c3c2\([0-9a-f]*\),/,0x0000000000000000\1,/" "$d/NewBlockMsg.log"
expect_rc 0 "replay, parent is the genesis" -- "$SIM" replay "$d" --out "$tmp/r5" --quiet
is_text "$tmp/err" "replay, parent is the genesis: message" \
  "$d/NewBlockMsg.log:2: Number 3010219 is not 1, but ParentHash is the genesis's (its first 8 bytes are zero): block left out (4 lines)"

# A block that is its own parent (line 12, one line): impossible on its own.
d=$tmp/self
logs "$d"
awk -F, 'BEGIN { OFS = "," } NR == 12 { $9 = $2 } { print }' "$RK/NewBlockMsg.log" >"$d/NewBlockMsg.log"
expect_rc 2 "strict replay, own parent" -- "$SIM" replay "$d" --strict --out "$tmp/rs"
is_text "$tmp/err" "strict replay, own parent: message" "sim replay: $d/NewBlockMsg.log:12: ParentHash: the block is its own parent"
expect_rc 0 "replay, own parent" -- "$SIM" replay "$d" --out "$tmp/r6" --quiet
is_text "$tmp/err" "replay, own parent: message" "$d/NewBlockMsg.log:12: ParentHash: the block is its own parent"
py "replay, own parent: the line is bad, its child stands on a placeholder" "$tmp/r6/summary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["replay"]
assert (r["bad_lines"], r["blocks"], r["detached_blocks"], r["placeholder_blocks"]) == (1, 36, 0, 17), r
assert (d["chain"]["heights"], d["chain"]["blocks_total"]) == (45, 53), d["chain"]
PY

# Difficulty 0 on every line (Rinkeby is Clique: 1 or 2; proof of work has more): every line is bad.
d=$tmp/diff0
logs "$d"
awk -F, 'BEGIN { OFS = "," } { $6 = 0; print }' "$RK/NewBlockMsg.log" >"$d/NewBlockMsg.log"
expect_rc 2 "strict replay, difficulty 0" -- "$SIM" replay "$d" --strict --out "$tmp/rs"
is_text "$tmp/err" "strict replay, difficulty 0: message" \
  "sim replay: $d/NewBlockMsg.log:1: Difficulty: 0 (a proof-of-work or Clique block has at least 1)"
# 65 lines, not 66: line 34 repeats line 33 (the same millisecond) and is skipped as a duplicate first.
expect_rc 2 "replay, difficulty 0 everywhere" -- "$SIM" replay "$d" --out "$tmp/rs"
is_text "$tmp/err" "replay, difficulty 0 everywhere: messages" \
  "$d/NewBlockMsg.log:1: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log:2: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log:3: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log:4: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log:5: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log: 65 lines in all that cannot be right (skipped)" \
  "sim replay: no block in the logs (every block line is bad: see above)"
[ ! -e "$tmp/rs" ] && ok || bad "a replay with no usable block wrote $tmp/rs"

# Every check of one line, on six one-line blocks: the first five reported, then the count.
d=$tmp/lines
logs "$d"
awk -F, 'BEGIN { OFS = "," }
  NR == 3 { $3 = 0 }
  NR == 7 { $6 = 0 }
  NR == 12 { $13 = $2 ";" }
  NR == 21 { $13 = $9 ";" }
  NR == 22 { $2 = "0x0000000000000000" substr($2, 19) }
  NR == 27 { $9 = $2 }
  { print }' "$RK/NewBlockMsg.log" >"$d/NewBlockMsg.log"
expect_rc 0 "replay, one of each impossible line" -- "$SIM" replay "$d" --out "$tmp/r7" --quiet
is_text "$tmp/err" "replay, one of each impossible line: messages" \
  "$d/NewBlockMsg.log:3: Number: 0 is the genesis, which no node receives as a block" \
  "$d/NewBlockMsg.log:7: Difficulty: 0 (a proof-of-work or Clique block has at least 1)" \
  "$d/NewBlockMsg.log:12: ListOfUncles: the block lists itself" \
  "$d/NewBlockMsg.log:21: ListOfUncles: the block lists its parent" \
  "$d/NewBlockMsg.log:22: BlockHash: its first 8 bytes are zero (the genesis's id here)" \
  "$d/NewBlockMsg.log: 6 lines in all that cannot be right (skipped)"
py "replay, one of each impossible line: counts" "$tmp/r7/summary.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["replay"]
# Line 3 held the lowest number: the chain now starts at the next one.
assert (r["bad_lines"], r["blocks"], r["detached_blocks"], r["first_number"]) == (6, 31, 0, 3010218), r
PY

# ---- 2. sim run --mining-from: what was used, left out and why (it said "1 of 1 logged blocks mined" when 36
# of the 37 were dropped, because the logs have gaps) ----
OTHERS='pools=[{"name":"Others","hash_share":1}]'
expect_rc 0 "trace-driven run on the Rinkeby logs" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$RK" --out "$tmp/t0"
contains "$tmp/out" "trace-driven: 37 of 37 logged blocks mined (0 left out as inconsistent, 0 bad lines skipped); 16 stand-ins mined for ancestors not in the logs" "trace-driven report: used and dropped"
contains "$tmp/out" "trace-driven: no block compared: no log directory is named like a vantage point of the scenario" "trace-driven report: why nothing was compared"
contains "$tmp/out" "heights 45  blocks 53  " "trace-driven chain: the logs' 45 heights"
py "trace-driven summary" "$tmp/t0/summary.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
want = {"logged_blocks": 37, "blocks": 37, "mined": 37, "left_out": 0, "bad_lines": 0, "stand_ins": 16,
        "stand_ins_mined": 16, "vantage_points_shared": 0, "compared": 0, "by_vantage": {}}
assert t == want, t
PY
# Named like a vantage point of geo-small: every logged block compared, and only those (no stand-in row).
expect_rc 0 "trace-driven run, one shared vantage point" -- "$SIM" run scenarios/geo-small.json --mining-from WE="$RK" --out "$tmp/t1"
contains "$tmp/out" "trace-driven: 37 blocks compared; first observer agrees on 100.0% (trace_compare.csv)" "trace-driven report: blocks compared"
py "trace-driven comparison rows" "$tmp/t1/summary.json" "$tmp/t1/trace_compare.csv" <<'PY'
import csv, json, sys
t = json.load(open(sys.argv[1]))["trace"]
assert (t["compared"], t["vantage_points_shared"], t["mined"]) == (37, 1, 37), t
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 37 and all(r["WE_measured_ms"] for r in rows), len(rows)
PY
# Damaged logs: the block left out is said on stderr (also --quiet) and counted.
d=$tmp/num
expect_rc 0 "quiet trace-driven run, damaged Number" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$d" --out "$tmp/t2" --quiet
is_text "$tmp/out" "quiet trace-driven run prints no report"
is_text "$tmp/err" "quiet trace-driven run still warns" \
  "$d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8): block left out (4 lines)"
py "trace-driven summary, damaged Number" "$tmp/t2/summary.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["trace"]
got = {k: t[k] for k in ("logged_blocks", "blocks", "mined", "left_out", "bad_lines", "stand_ins")}
assert got == {"logged_blocks": 37, "blocks": 36, "mined": 36, "left_out": 1, "bad_lines": 4, "stand_ins": 17}, got
PY
expect_rc 0 "trace-driven run, damaged Number" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$d" --out "$tmp/t3"
contains "$tmp/out" "trace-driven: 36 of 37 logged blocks mined (1 left out as inconsistent, 4 bad lines skipped); 17 stand-ins mined for ancestors not in the logs" "trace-driven report, damaged Number"
expect_rc 2 "strict trace-driven run, damaged Number" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$d" --strict --out "$tmp/t4"
is_text "$tmp/err" "strict trace-driven run: message" \
  "sim run: --mining-from: $d/NewBlockMsg.log:2: Number 3010300 does not precede its child's (3010220 at $d/NewBlockMsg.log:8)"
[ ! -e "$tmp/t4" ] && ok || bad "a strict trace-driven run that failed wrote $tmp/t4"

# ---- 3. Text that JSON cannot hold is refused where it enters ----
printf 'address,name\n0x0000000000000000000000000000000000000000,Bad\xffPool\n' >"$tmp/pool-utf8.csv"
printf 'address,name\n0x0000000000000000000000000000000000000000,Nul\0Pool\n' >"$tmp/pool-nul.csv"
printf 'address,name\n0x0000000000000000000000000000000000000000,"Tab\tPool"\n' >"$tmp/pool-ctl.csv"
printf 'address,n\0ame\n' >"$tmp/pool-nulhead.csv"
for p in utf8 nul ctl nulhead; do
  expect_rc 2 "replay pools $p" -- "$SIM" replay "$RK" --pools "$tmp/pool-$p.csv" --out "$tmp/rp"
  cp "$tmp/err" "$tmp/err-replay-$p"
  expect_rc 2 "trace-driven pools $p" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$RK" --pools "$tmp/pool-$p.csv" --out "$tmp/rp"
  cp "$tmp/err" "$tmp/err-run-$p"
done
is_text "$tmp/err-replay-utf8" "replay: pool name not UTF-8" "sim replay: $tmp/pool-utf8.csv:2: pool name not valid UTF-8"
is_text "$tmp/err-replay-nul" "replay: NUL in a pool name" "sim replay: $tmp/pool-nul.csv:2: NUL byte in field 2"
is_text "$tmp/err-replay-ctl" "replay: control character in a pool name" "sim replay: $tmp/pool-ctl.csv:2: pool name has a control character"
is_text "$tmp/err-replay-nulhead" "replay: NUL in the header" "sim replay: $tmp/pool-nulhead.csv:1: NUL byte in field 2"
is_text "$tmp/err-run-utf8" "run: pool name not UTF-8" "sim run: --mining-from: $tmp/pool-utf8.csv:2: pool name not valid UTF-8"
is_text "$tmp/err-run-nul" "run: NUL in a pool name" "sim run: --mining-from: $tmp/pool-nul.csv:2: NUL byte in field 2"
[ ! -e "$tmp/rp" ] && ok || bad "a refused pool map left $tmp/rp behind"
# An empty name maps nothing (the study's pool_addresses.csv leaves unknown pools' names empty): "Others",
# not a pool called "".
printf 'address,name\n0x0000000000000000000000000000000000000000,\n' >"$tmp/pool-empty.csv"
printf 'address,name\n0x0000000000000000000000000000000000000000,Clique\n' >"$tmp/pool-named.csv"
expect_rc 0 "replay pools, empty name" -- "$SIM" replay "$RK" --pools "$tmp/pool-empty.csv" --out "$tmp/rpe" --quiet
expect_rc 0 "replay pools, a name" -- "$SIM" replay "$RK" --pools "$tmp/pool-named.csv" --out "$tmp/rpn" --quiet
py "pool names" "$tmp/rpe/summary.json" "$tmp/rpn/summary.json" <<'PY'
import json, sys
e, n = (json.load(open(p))["pools"] for p in sys.argv[1:3])
assert [p["name"] for p in e] == ["Others"] and [p["name"] for p in n] == ["Clique"], (e, n)
assert e[0]["blocks"] == n[0]["blocks"] == 37
PY
# Vantage names and log directories (their base names are the names, and the paths go into summary.json).
expect_rc 2 "replay vantage name not UTF-8" -- "$SIM" replay --vantage $'A\xff'="$RK" --out "$tmp/rv"
is_text "$tmp/err" "replay vantage name not UTF-8: message" "sim replay: vantage point name '"$'A\xff'"' not valid UTF-8"
expect_rc 2 "replay vantage name with a tab" -- "$SIM" replay --vantage $'A\tB'="$RK" --out "$tmp/rv"
is_text "$tmp/err" "replay vantage name with a tab: message" "sim replay: vantage point name '"$'A\tB'"' has a control character"
bd="$tmp/logs"$'\xff'
logs "$bd"
expect_rc 2 "replay directory not UTF-8" -- "$SIM" replay "$bd" --out "$tmp/rv"
is_text "$tmp/err" "replay directory not UTF-8: message" "sim replay: $bd: path not valid UTF-8 (summary.json records it)"
expect_rc 2 "calibrate directory not UTF-8" -- "$SIM" calibrate "$bd" -o "$tmp/rv.json"
is_text "$tmp/err" "calibrate directory not UTF-8: message" "sim calibrate: $bd: path not valid UTF-8 (summary.json records it)"
expect_rc 2 "trace-driven directory not UTF-8" -- "$SIM" run scenarios/tiny.json --set "$OTHERS" --mining-from "$bd" --out "$tmp/rv"
is_text "$tmp/err" "trace-driven directory not UTF-8: message" "sim run: --mining-from: $bd: path not valid UTF-8 (summary.json records it)"
expect_rc 2 "replay pools path not UTF-8" -- "$SIM" replay "$RK" --pools "$tmp/p"$'\xff'".csv" --out "$tmp/rv"
is_text "$tmp/err" "replay pools path not UTF-8: message" "sim replay: $tmp/p"$'\xff'".csv: path not valid UTF-8 (summary.json records it)"
[ ! -e "$tmp/rv" ] && ok || bad "a refused name left $tmp/rv behind"
# sim compare: names from observations.csv and tx_commit_samples.csv, and run paths, become JSON keys.
expect_rc 0 "replay two vantages" -- "$SIM" replay --vantage A="$RK" --vantage B="$RK" --out "$tmp/c0" --quiet
cp -r "$tmp/c0" "$tmp/c1"
sed -i "1 s/ADiff/A\xffDiff/; 1 s/ATimeStamp/A\xffTimeStamp/" "$tmp/c1/observations.csv"
expect_rc 2 "compare observations vantage not UTF-8" -- "$SIM" compare "$tmp/c1" "$tmp/c0" --json "$tmp/cmp.json"
is_text "$tmp/err" "compare observations vantage not UTF-8: message" "$tmp/c1/observations.csv:1: column 7: vantage name not valid UTF-8"
cp -r "$tmp/c0" "$tmp/c2"
sed -i "2 s/,A,/,A\xff,/" "$tmp/c2/tx_commit_samples.csv"
expect_rc 2 "compare commit samples vantage not UTF-8" -- "$SIM" compare "$tmp/c2" "$tmp/c0"
is_text "$tmp/err" "compare commit samples vantage not UTF-8: message" "$tmp/c2/tx_commit_samples.csv:2: k or vantage not valid UTF-8"
cp -r "$tmp/c0" "$tmp/c"$'\xff'
expect_rc 2 "compare path not UTF-8" -- "$SIM" compare "$tmp/c"$'\xff' "$tmp/c0"
is_text "$tmp/err" "compare path not UTF-8: message" "$tmp/c"$'\xff'"/summary.json: path not valid UTF-8"
[ ! -e "$tmp/cmp.json" ] && ok || bad "a refused comparison wrote $tmp/cmp.json"

# ---- 4. Numeric options without meaning are refused (--block-reward inf printed -nan and lost keys) ----
for vg in inf:inf nan:nan -1:-1 0:0 1e308:1e+308 1000001:1e+06; do
  v=${vg%%:*} g=${vg#*:}
  expect_rc 2 "replay --block-reward $v" -- "$SIM" replay "$RK" --block-reward "$v" --out "$tmp/rb"
  is_text "$tmp/err" "replay --block-reward $v: message" "sim replay: --block-reward must be in (0, 1e6] ETH (got $g)" "Try 'sim replay --help'."
done
[ ! -e "$tmp/rb" ] && ok || bad "a refused --block-reward left $tmp/rb behind"
expect_rc 0 "replay --block-reward 1e6" -- "$SIM" replay "$RK" --block-reward 1e6 --out "$tmp/rb" --quiet
py "replay --block-reward 1e6: reward shares" "$tmp/rb/summary.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["pools"]
# 29 main blocks of 45 heights (the placeholders' rewards go to no pool)
assert len(p) == 1 and p[0]["reward_eth"] == 29e6 and abs(p[0]["reward_share"] - 29 / 45) < 1e-12, p
PY
for v in nan inf -inf 1 0; do
  expect_rc 2 "calibrate --level $v" -- "$SIM" calibrate "$RK" -o "$tmp/cl.json" --level "$v"
  is_text "$tmp/err" "calibrate --level $v: message" "sim calibrate: --level must be in (0, 1) (got $v)" "Try 'sim calibrate --help'."
done

# ---- 5. A report figure without data is left out with a note, not a failure ----
d=$tmp/notx
logs "$d"
rm "$d/TxMsg.log"
expect_rc 0 "replay without TxMsg.log" -- "$SIM" replay "$d" --out "$tmp/rn" --quiet
expect_rc 0 "report of a replay without transactions" -- env -u SIM_GNUPLOT "$SIM" report "$tmp/rn"
if command -v gnuplot >/dev/null; then
  is_text "$tmp/err" "report of a replay without transactions: no warning, no failure"
  is_text "$tmp/out" "report of a replay without transactions: figures" "wrote $tmp/rn/report.html (run, 3 figures)"
else
  is_text "$tmp/err" "report without gnuplot: only that warning" "sim report: warning: gnuplot not found: figures omitted"
fi
contains "$tmp/rn/report.html" '<p class="omitted">tx_commit.csv has no commit time (no transaction was seen and committed): figure omitted.</p>' "report: the commit figure left out with a note"
contains "$tmp/rn/report.html" '<p class="omitted">One vantage point only: no delay after the first observation.</p>' "report: the propagation figure left out with a note"
if LC_ALL=C grep -q "gnuplot failed" "$tmp/rn/report.html"; then bad "report of a replay without transactions: a figure failed"; else ok; fi

echo "test-wrong-b: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
