#!/usr/bin/env bash
# test-badlogs.sh: duplicates, reorderings, clock steps and gaps in measured logs (docs/measured-logs.md,
# "Order, duplicates, clock steps and gaps"): each counted in summary.json (replay.*), reported as
# FILE:LINE: why, the duplicates skipped, --strict refusing reorderings and clock steps with exit 2. Built
# from an excerpt of the real Rinkeby logs with one defect injected at a known line per copy; then the real
# logs' own counts. Run from the source root: `bash tests/cli/test-badlogs.sh build/sim/sim`.
. "$(dirname "$0")/lib.sh" "$@"
RK=tests/data/emc-rinkeby-2018-09
# is_text FILE DESC LINE...: FILE holds exactly these lines.
is_text() {
  local f=$1 desc=$2
  shift 2
  if [ $# -eq 0 ]; then : >"$tmp/want"; else printf '%s\n' "$@" >"$tmp/want"; fi
  same_file "$f" "$tmp/want" "$desc"
}
# key DIR NAME: replay.NAME in DIR/summary.json.
key() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["replay"][sys.argv[2]])' "$1/summary.json" "$2"; }
# counts DIR: duplicates reordered clock_steps gaps gap_heights bad_lines.
counts() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["replay"]; print(*(r[k] for k in ("duplicates","reordered","clock_steps","gaps","gap_heights","bad_lines")))' "$1/summary.json"; }
# excerpt DIR: the first 40 block lines, 40 announcement lines and 300 transaction lines of the real logs.
excerpt() {
  rm -rf "$1"
  mkdir -p "$1"
  head -n 40 "$RK/NewBlockMsg.log" >"$1/NewBlockMsg.log"
  head -n 40 "$RK/NewBlockHashesMsg.log" >"$1/NewBlockHashesMsg.log"
  head -n 300 "$RK/TxMsg.log" >"$1/TxMsg.log"
}

# ---- The clean excerpt: one real duplicate (block lines 33 and 34, the same millisecond) and two real gaps ----
c=$tmp/clean
excerpt "$c"
expect_rc 0 "replay of the clean excerpt" -- "$SIM" replay --vantage EMC="$c" --out "$tmp/r0"
is_text "$tmp/err" "clean excerpt: its own notes" \
  "$c/NewBlockMsg.log:34: duplicate of line 33 (same BlockHash and LocalTimestamp): skipped" \
  "$c/NewBlockMsg.log:7: gap: Number 3010208 follows 3010201 in this vantage point's blocks (6 heights missing)" \
  "$c/NewBlockMsg.log:1: gap: Number 3010218 follows 3010208 in this vantage point's blocks (9 heights missing)"
is "$(counts "$tmp/r0")" "1 0 0 2 15 0" "clean excerpt: counts"
expect_rc 0 "strict replay of the clean excerpt (duplicates and gaps are not fatal)" -- \
  "$SIM" replay "$c" --strict --quiet --out "$tmp/r0s"

# ---- A duplicate: block line 10 repeated as line 11. Skipped: every output but the line counts the same ----
d=$tmp/dup
excerpt "$d"
sed -i '10p' "$d/NewBlockMsg.log"
expect_rc 0 "replay, duplicate" -- "$SIM" replay --vantage EMC="$d" --out "$tmp/r1"
contains "$tmp/err" "$d/NewBlockMsg.log:11: duplicate of line 10 (same BlockHash and LocalTimestamp): skipped" "duplicate: message"
contains "$tmp/err" "$d/NewBlockMsg.log:35: duplicate of line 34 (same BlockHash and LocalTimestamp): skipped" "duplicate: the real one, one line down"
is "$(counts "$tmp/r1")" "2 0 0 2 15 0" "duplicate: counts"
is "$(key "$tmp/r1" block_lines)" "$(($(key "$tmp/r0" block_lines) + 1))" "duplicate: read as a line"
for f in blocks.csv observations.csv pools.csv runs.csv tx_commit.csv; do
  same_file "$tmp/r0/$f" "$tmp/r1/$f" "duplicate: $f as without it"
done

# ---- A reordering: transaction lines 10 and 11 (0.059 s apart) swapped. Kept: outputs the same ----
d=$tmp/reorder
excerpt "$d"
sed -i '10{h;d};11{G}' "$d/TxMsg.log"
cmp -s <(sort "$d/TxMsg.log") <(sort "$c/TxMsg.log") && ok || bad "reorder: the swap changed the lines"
expect_rc 0 "replay, reordering" -- "$SIM" replay --vantage EMC="$d" --out "$tmp/r2"
contains "$tmp/err" "$d/TxMsg.log:11: LocalTimestamp 0.059 s before line 10's: out of order (kept)" "reordering: message"
is "$(counts "$tmp/r2")" "1 1 0 2 15 0" "reordering: counts"
for f in blocks.csv observations.csv tx_commit.csv tx_commit_samples.csv; do
  same_file "$tmp/r0/$f" "$tmp/r2/$f" "reordering: $f as without it"
done
expect_rc 2 "strict replay, reordering" -- "$SIM" replay "$d" --strict --out "$tmp/r2s"
tail -n 1 "$tmp/err" >"$tmp/err1"
is_text "$tmp/err1" "strict replay, reordering: the first fatal defect named, last" \
  "sim replay: $d/TxMsg.log:11: LocalTimestamp 0.059 s before line 10's: out of order (kept)"
[ ! -e "$tmp/r2s" ] && ok || bad "a strict replay that failed wrote $tmp/r2s"

# ---- A clock step back: transaction lines from 200 on an hour earlier ----
d=$tmp/back
excerpt "$d"
sed -i '200,$ s/T15:/T14:/' "$d/TxMsg.log"
expect_rc 0 "replay, clock step back" -- "$SIM" replay --vantage EMC="$d" --out "$tmp/r3"
line199=$(sed -n 199p "$c/TxMsg.log" | cut -c12-23)
line200=$(sed -n 200p "$c/TxMsg.log" | cut -c12-23)
back=$(python3 -c 'import sys; f=lambda s: sum(float(x)*m for x, m in zip(s.split(":"), (3600, 60, 1))); print("%.3f" % (3600 - (f(sys.argv[2]) - f(sys.argv[1]))))' "$line199" "$line200")
contains "$tmp/err" "$d/TxMsg.log:200: clock step back: LocalTimestamp $back s before line 199's (kept)" "clock step back: message"
is "$(counts "$tmp/r3")" "1 0 1 2 15 0" "clock step back: counts"
same_file "$tmp/r0/blocks.csv" "$tmp/r3/blocks.csv" "clock step back in the tx log: blocks.csv as without it"
expect_rc 2 "strict replay, clock step back" -- "$SIM" replay "$d" --strict --out "$tmp/r3s"
tail -n 1 "$tmp/err" >"$tmp/err1"
is_text "$tmp/err1" "strict replay, clock step back: message, last" \
  "sim replay: $d/TxMsg.log:200: clock step back: LocalTimestamp $back s before line 199's (kept)"

# ---- A clock step forward: block lines from 20 on an hour later (their header Times do not move) ----
d=$tmp/fwd
excerpt "$d"
sed -i '20,$ s/T15:/T16:/' "$d/NewBlockMsg.log"
expect_rc 0 "replay, clock step forward" -- "$SIM" replay --vantage EMC="$d" --out "$tmp/r4"
contains "$tmp/err" "$d/NewBlockMsg.log:20: clock step forward: LocalTimestamp 3600.512 s after line 19's with no line between, while the header Time advanced 0 s (kept)" "clock step forward: message"
is "$(counts "$tmp/r4")" "1 0 1 2 15 0" "clock step forward: counts"
same_file "$tmp/r0/blocks.csv" "$tmp/r4/blocks.csv" "clock step forward: blocks.csv (header times) as without it"
expect_rc 2 "strict trace-driven run, clock step forward" -- "$SIM" run scenarios/tiny.json \
  --set 'pools=[{"name":"Others","hash_share":1}]' --mining-from "$d" --strict --out "$tmp/t4"
contains "$tmp/err" "$d/NewBlockMsg.log:20: clock step forward:" "strict trace-driven run: message"

# ---- A gap: every line of block 3010225 (lines 17 to 20) removed ----
d=$tmp/gap
excerpt "$d"
is "$(sed -n '17,20p' "$c/NewBlockMsg.log" | cut -d, -f3 | sort -u)" "3010225" "gap: lines 17-20 are block 3010225"
sed -i '17,20d' "$d/NewBlockMsg.log"
expect_rc 0 "replay, gap" -- "$SIM" replay --vantage EMC="$d" --out "$tmp/r5"
contains "$tmp/err" "$d/NewBlockMsg.log:17: gap: Number 3010226 follows 3010224 in this vantage point's blocks (1 height missing)" "gap: message"
is "$(counts "$tmp/r5")" "1 0 0 3 16 0" "gap: counts"
is "$(key "$tmp/r5" placeholder_blocks)" "$(($(key "$tmp/r0" placeholder_blocks) + 1))" "gap: one placeholder more"
expect_rc 0 "strict replay, gap: not fatal" -- "$SIM" replay "$d" --strict --quiet --out "$tmp/r5s"

# ---- Per vantage point, and the first fatal defect of several ----
expect_rc 0 "replay, two vantage points" -- "$SIM" replay --vantage A="$c" --vantage B="$tmp/reorder" --out "$tmp/r6"
is "$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["replay"]["by_vantage"]; print(*[(v["name"],v["duplicates"],v["reordered"],v["clock_steps"],v["gaps"],v["gap_heights"]) for v in r])' "$tmp/r6/summary.json")" \
  "('A', 1, 0, 0, 2, 15) ('B', 1, 1, 0, 2, 15)" "by_vantage"
d=$tmp/all
excerpt "$d"
sed -i '10p' "$d/NewBlockMsg.log"
sed -i '20,$ s/T15:/T16:/' "$d/NewBlockHashesMsg.log"
sed -i '10{h;d};11{G}' "$d/TxMsg.log"
expect_rc 2 "strict replay, several defects" -- "$SIM" replay "$d" --strict --out "$tmp/r7"
is_text "$tmp/err" "strict replay names the first fatal defect (the duplicates before it are not fatal, but reported)" \
  "$d/NewBlockMsg.log:11: duplicate of line 10 (same BlockHash and LocalTimestamp): skipped" \
  "$d/NewBlockMsg.log:35: duplicate of line 34 (same BlockHash and LocalTimestamp): skipped" \
  "sim replay: $d/TxMsg.log:11: LocalTimestamp 0.059 s before line 10's: out of order (kept)"

# ---- The real logs: 6 duplicates (1 block line, 5 announcements), no reordering or clock step, 2 gaps ----
expect_rc 0 "replay of the real logs" -- "$SIM" replay "$RK" --out "$tmp/rk"
is "$(counts "$tmp/rk")" "6 0 0 2 15 0" "real logs: counts"
is_text "$tmp/err" "real logs: notes" \
  "$RK/NewBlockMsg.log:34: duplicate of line 33 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockHashesMsg.log:46: duplicate of line 45 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockHashesMsg.log:60: duplicate of line 59 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockHashesMsg.log:82: duplicate of line 81 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockHashesMsg.log:87: duplicate of line 86 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockHashesMsg.log:142: duplicate of line 141 (same BlockHash and LocalTimestamp): skipped" \
  "$RK/NewBlockMsg.log:7: gap: Number 3010208 follows 3010201 in this vantage point's blocks (6 heights missing)" \
  "$RK/NewBlockMsg.log:1: gap: Number 3010218 follows 3010208 in this vantage point's blocks (9 heights missing)"
expect_rc 0 "strict replay of the real logs (their duplicates and gaps are not fatal)" -- \
  "$SIM" replay "$RK" --strict --quiet --out "$tmp/rks"

echo "test-badlogs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
