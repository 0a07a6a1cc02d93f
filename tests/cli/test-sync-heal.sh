#!/usr/bin/env bash
# test-sync-heal.sh: `sim sync threshold` and the healing rows of `sim sync` on the real binary: the threshold,
# the curve's exact values, the lock case, "never" rows, and bad options and files (exit 2, exact messages).
# Expected values: healing = a * snap / (R - a), a = 10000 * 80 / 355 (fitted on mid-end), R = min(disk IOPS,
# readers * 12500); snap = max(118 min of network, 165e6 / R s of reads, ...). Worked in python3:
#   a = 10000 * 80 / 355                                             # 2253.521127
#   R = 3000; snap = 165e6 / R / 60; heal = a * snap / (R - a)          # 916.667, 2767.296 min
#   R = min(40000, 12500); heal = a * 118 / (R - a)                     # high-end, one reader: 25.952 min
#   old-spec: R = min(44000, 2 * 12500); heal = a * 269 / (R - a)       # 26.650 min; head 295.650
#   W0 = a * 269 * 60 / 1e6                                             # 36.3718 M reads
. "$(dirname "$0")/lib.sh" "$@"

expect_rc 0 "threshold mid-end" -- "$SIM" sync threshold scenarios/sync/mid-end.json --iops 2000,3000,10000 --csv
contains "$tmp/out" "# threshold: healing never converges below 2253.521127 disk IOPS" "threshold line"
contains "$tmp/out" "# machine: mid-end: 8 vCPU, 12500 IOPS per reader thread; healing readers: 8 (100000 reads/s at most)" "threshold machine line"
is "$(grep -v '^#' "$tmp/out" | head -1)" "disk_iops,repair_iops,snap_min,healing_min,head_min,head_hmm,catches_up" "threshold csv header"
is "$(grep '^2000,' "$tmp/out")" "2000,2000,1375.000,inf,inf,never,no" "below the threshold: never"
is "$(grep '^3000,' "$tmp/out")" "3000,3000,916.667,2767.296,3683.962,61:24,yes" "3000 IOPS row"
is "$(grep '^10000,' "$tmp/out")" "10000,10000,275.000,80.000,355.000,5:55,yes" "mid-end's own disk: the fit"

# Behind one lock (one reader): high-end's repair rate is 12.5 k, not 40 k.
expect_rc 0 "threshold high-end, one reader" -- "$SIM" sync threshold scenarios/sync/high-end.json --readers 1 --iops 40000 --csv
is "$(grep '^40000,' "$tmp/out")" "40000,12500,118.000,25.952,143.952,2:24,yes" "high-end behind one lock"
# A reader slower than the chain's change rate: no disk helps.
sed 's/"single_thread_iops": 12500/"single_thread_iops": 2000/' scenarios/sync/mid-end.json >"$tmp/slow-reader.json"
expect_rc 0 "threshold with one slow reader" -- "$SIM" sync threshold "$tmp/slow-reader.json" --readers 1 --iops 1000000
contains "$tmp/out" "# threshold: never catches up at any disk IOPS (the readers' 2000 reads/s <= a)" "no disk helps"
is "$(awk '$1=="1000000"{print $2, $4, $7}' "$tmp/out")" "2000 inf no" "1 M IOPS behind a 2 k reader"

# The machine table's healing rows: old-spec is a check (+6.6%), and the header gives W0, R and a.
expect_rc 0 "sync old-spec" -- "$SIM" sync scenarios/sync/old-spec.json --csv
contains "$tmp/out" "healing,0.000,26.650,0.000,0.000,26.650,0:27,reads,25,+6.6" "old-spec healing row"
contains "$tmp/out" "head,,,,,295.650,4:56,,355,-16.7" "old-spec head row"
contains "$tmp/out" "# healing: 36.3718 M reads left by snap, repaired at R = 25000 reads/s while the chain adds a = 2253.52/s: reads = W0 / (R - a)" "old-spec healing line"
# A chain that changes faster than the machine repairs: never, in the table too.
echo '{"phases": {"healing": {"change_reads_per_s": 10000}}}' >"$tmp/fast.json"
expect_rc 0 "sync mid-end, chain faster than its disk" -- "$SIM" sync scenarios/sync/mid-end.json --chain "$tmp/fast.json"
is "$(awk '$1=="healing"{print $3, $6, $7, $8}' "$tmp/out")" "inf inf never reads" "never: healing row"
is "$(awk '$1=="full"{print $2, $3}' "$tmp/out")" "inf never" "never: full row"
contains "$tmp/out" "R <= a, never converges" "never: header line"

# Bad input: exit 2 with the message.
expect_rc 2 "threshold --iops 0" -- "$SIM" sync threshold scenarios/sync/mid-end.json --iops 0
contains "$tmp/err" "sim sync threshold: --iops must be >= 1 (got 0)" "--iops 0 message"
expect_rc 2 "threshold --readers -2" -- "$SIM" sync threshold scenarios/sync/mid-end.json --readers -2
contains "$tmp/err" "sim sync threshold: --readers must be in [0, 1000000] (got -2)" "--readers message"
expect_rc 2 "threshold no machine" -- "$SIM" sync threshold
contains "$tmp/err" "sim sync threshold: missing MACHINE (a JSON file)" "no machine message"
echo '{"phases": {"healing": {"change_reads_per_s": -1, "read_mops_per_snap_min": 1}}}' >"$tmp/bad.json"
expect_rc 2 "threshold bad chain" -- "$SIM" sync threshold scenarios/sync/mid-end.json --chain "$tmp/bad.json"
contains "$tmp/err" "$tmp/bad.json: \$.phases.healing.change_reads_per_s: must be in [0, 1e+09] (got -1)" "bad chain: bound"
contains "$tmp/err" "$tmp/bad.json: \$.phases.healing.read_mops_per_snap_min: unknown key" "bad chain: the old key"
[ ! -s "$tmp/out" ] && ok || bad "bad chain printed a table"

echo "sync-heal: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
