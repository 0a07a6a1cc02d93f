#!/usr/bin/env bash
# test-options.sh: the option tables of the subcommands (sim/cli.h, SimOpt) reject values out of their
# bounds with the exact message, exit 2 and the hint, at the bounds themselves too; values inside pass the check.
. "$(dirname "$0")/lib.sh" "$@"
D=tests/data/emc-rinkeby-2018-09

# rejected DESC MESSAGE -- CMD...: CMD exits 2 and stderr is exactly "sim CMD: MESSAGE" and the hint.
rejected() {
  local desc=$1 msg=$2 cmd=$4
  expect_rc 2 "$desc" -- "${@:5}"
  local want
  want=$(printf 'sim %s: %s\nTry '"'"'sim %s --help'"'"'.' "$cmd" "$msg" "$cmd")
  is "$(cat "$tmp/err")" "$want" "$desc"
  is "$(wc -c <"$tmp/out")" 0 "$desc: nothing on stdout"
}
rejected "replay reward 0" "--block-reward must be in (0, 1e6] ETH (got 0)" -- replay "$SIM" replay "$D" --block-reward 0 --out "$tmp/r"
rejected "replay reward nan" "--block-reward must be in (0, 1e6] ETH (got nan)" -- replay "$SIM" replay "$D" --block-reward nan --out "$tmp/r"
rejected "replay reward above" "--block-reward must be in (0, 1e6] ETH (got 1.5e+06)" -- replay "$SIM" replay "$D" --block-reward 1.5e6 --out "$tmp/r"
rejected "replay heights -1" "--heights must be in [0, 1e9] (got -1)" -- replay "$SIM" replay "$D" --heights -1 --out "$tmp/r"
rejected "replay heights above" "--heights must be in [0, 1e9] (got 1000000001)" -- replay "$SIM" replay "$D" --heights 1000000001 --out "$tmp/r"
rejected "calibrate level 1" "--level must be in (0, 1) (got 1)" -- calibrate "$SIM" calibrate "$D" -o "$tmp/c.json" --level 1
rejected "calibrate level 0" "--level must be in (0, 1) (got 0)" -- calibrate "$SIM" calibrate "$D" -o "$tmp/c.json" --level 0
rejected "run threads -1" "--threads must be in [0, 256] (got -1)" -- run "$SIM" run scenarios/tiny.json --threads -1 --out "$tmp/t"
rejected "run threads 257" "--threads must be in [0, 256] (got 257)" -- run "$SIM" run scenarios/tiny.json --threads 257 --out "$tmp/t"
# The subcommands converted to tables: one value out of its bounds each, at the bounds too.
rejected "sweep jobs 0" "--jobs must be in [1, 2147483647] (got 0)" -- sweep "$SIM" sweep "$tmp/none.json" --jobs 0
rejected "sweep jobs -5" "--jobs must be in [1, 2147483647] (got -5)" -- sweep "$SIM" sweep "$tmp/none.json" -j -5
rejected "bench phold lps 0" "--lps must be in [1, 2147483647] (got 0)" -- "bench phold" "$SIM" bench phold --lps 0
rejected "bench phold pending 0" "--pending must be in [1, 9223372036854775807] (got 0)" -- "bench phold" "$SIM" bench phold --pending 0
rejected "bench phold events 0" "--events must be in [1, 9223372036854775807] (got 0)" -- "bench phold" "$SIM" bench phold --events 0
rejected "bench phold repeat 102" "--repeat must be in [1, 101] (got 102)" -- "bench phold" "$SIM" bench phold --repeat 102
rejected "bench phold threads 257" "--threads must be in [0, 256] (got 257)" -- "bench phold" "$SIM" bench phold --threads 257
rejected "bench scaling threads-max 0" "--threads-max must be in [1, 256] (got 0)" -- "bench scaling" "$SIM" bench scaling --threads-max 0
rejected "bench scaling repeat 0" "--repeat must be in [1, 101] (got 0)" -- "bench scaling" "$SIM" bench scaling --repeat 0
rejected "bench scenarios repeat 0" "--repeat must be in [1, 101] (got 0)" -- "bench scenarios" "$SIM" bench scenarios --repeat 0
rejected "bench scenarios repeat 102" "--repeat must be in [1, 101] (got 102)" -- "bench scenarios" "$SIM" bench scenarios --repeat 102
rejected "report block 0" "--block: '0' is not a height (an integer >= 1)" -- report "$SIM" report "$tmp" --block 0
rejected "report block 2^32" "--block: '4294967296' is not a height (an integer >= 1)" -- report "$SIM" report "$tmp" --block 4294967296
rejected "compare empty filter" "--filter must not be empty" -- compare "$SIM" compare a b --filter ''
rejected "models unknown family" "unknown family 'nosuch' (expected one of: scenario, $("$SIM" models --help | sed -n 's/^Families: \(.*\); .scenario. lists.*/\1/p'))" -- models "$SIM" models nosuch
# --seed is read one way by every subcommand: a decimal integer >= 0 (GOption's int64 took 0x10 and 010 too).
for cmd in "run scenarios/tiny.json" "bench phold"; do
  for bad in -1 0x10 1e3 '' 9223372036854775808; do
    # shellcheck disable=SC2086
    rejected "$cmd seed '$bad'" "--seed must be an integer >= 0" -- "${cmd%% scenarios*}" "$SIM" $cmd --seed "$bad"
  done
done
# The bounds themselves pass and the seed is used: the same checksum for --seed 7 and --seed 007.
expect_rc 0 "bench phold at the bounds" -- "$SIM" bench phold --lps 1 --pending 1 --events 1 --repeat 1 --seed 0
contains "$tmp/out" "events=1 " "bench phold events 1"
"$SIM" bench phold --events 20000 --seed 7 | sed 's/wall_s=[^ ]* events_per_s=[^ ]* //' >"$tmp/s7"
"$SIM" bench phold --events 20000 --seed 007 | sed 's/wall_s=[^ ]* events_per_s=[^ ]* //' >"$tmp/s007"
"$SIM" bench phold --events 20000 --seed 8 | sed 's/wall_s=[^ ]* events_per_s=[^ ]* //' >"$tmp/s8"
same_file "$tmp/s7" "$tmp/s007" "bench phold --seed 007 is seed 7"
if cmp -s "$tmp/s7" "$tmp/s8"; then bad "bench phold --seed 8 gives seed 7's checksum"; else ok; fi
# The order of the checks is the command's: a missing LOGDIR is reported before a bad reward.
rejected "replay order" "missing LOGDIR (or --vantage NAME=DIR)" -- replay "$SIM" replay --block-reward 0
# The bounds themselves pass (closed ends), and the value is used.
expect_rc 0 "replay reward 1e6" -- "$SIM" replay "$D" --block-reward 1e6 --heights 1000000000 --quiet --out "$tmp/ok"
contains "$tmp/ok/summary.json" '"heights": 45,' "replay heights 1e9: all 45"
expect_rc 0 "replay heights 10" -- "$SIM" replay "$D" --heights 10 --block-reward 0.001 --quiet --out "$tmp/ok10"
contains "$tmp/ok10/summary.json" '"heights": 10,' "replay heights 10 used"
expect_rc 0 "run threads 0" -- "$SIM" run scenarios/tiny.json --threads 0 --set stop.heights=5 --quiet --out "$tmp/t0"
contains "$tmp/t0/summary.json" '"stop_reason": "height"' "run threads 0 ran"

echo "options: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
