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
