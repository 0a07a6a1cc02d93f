#!/bin/sh
# run-pipeline.sh: runs the measurement study's own log processing (tests/study/upstream, unmodified) on the
# EMC logs of `sim run --emc-logs`, step by step as its READMEs say, with path arguments only.
# Usage: sh tests/study/run-pipeline.sh EMCDIR WORKDIR ANG FALC S1 S2 [LAST_NUMBER]
#   EMCDIR       a run's emc/ directory: one directory per vantage point holding blocks.log,
#                blocksAnnouncements.log, txs.log, heads.log and txgasused.log
#   ANG ... S2   the four vantage points (directory names) in the roles of the study's machines Angainor,
#                Falcon, S1-US and S2-CN (for pools-2019: WE CE NA EA)
#   WORKDIR      created (an existing non-empty one is refused: the study's scripts refuse to overwrite);
#                one folder per role (ANG, FALC, S1, S2), as the study's four machines had
#   LAST_NUMBER  optional: also cut the typed blocks to Number <= LAST_NUMBER (the run's window) and build the
#                study's join tables from the cut, as summary.json counts the window only
# Everything the study's scripts print goes to WORKDIR/log. Needs a Python 3 with pandas and sortedcontainers
# (Debian: python3-pandas python3-sortedcontainers): $PYTHON, else python3 on the PATH, else /usr/bin/python3;
# the study's shell scripts call it as python3, so WORKDIR/bin/python3 points to it and leads the PATH.
set -eu
[ $# -ge 6 ] || { echo "usage: run-pipeline.sh EMCDIR WORKDIR ANG FALC S1 S2 [LAST_NUMBER]" >&2; exit 2; }
emc=$1 work=$2 order="$3 $4 $5 $6" last=${7:-}
up=$(cd "$(dirname "$0")/upstream" && pwd)
pre=$up/log-pre-processing
[ -d "$emc" ] || { echo "run-pipeline.sh: $emc: no such directory" >&2; exit 2; }
for v in $order; do
  [ -f "$emc/$v/blocks.log" ] || { echo "run-pipeline.sh: $emc/$v/blocks.log: no such file" >&2; exit 2; }
done
if [ -d "$work" ] && [ -n "$(ls -A "$work")" ]; then echo "run-pipeline.sh: $work: not empty" >&2; exit 2; fi
mkdir -p "$work/bin"
work=$(cd "$work" && pwd)
py=
for c in ${PYTHON:-} python3 /usr/bin/python3; do
  if "$c" -c 'import pandas, sortedcontainers' 2>/dev/null; then py=$(command -v "$c"); break; fi
done
[ -n "$py" ] || { echo "run-pipeline.sh: no python3 with pandas and sortedcontainers (Debian: apt-get install python3-pandas python3-sortedcontainers)" >&2; exit 3; }
ln -sf "$py" "$work/bin/python3"
PATH=$work/bin:$PATH
export PATH
log=$work/log
: >"$log"
roles="ANG FALC S1 S2"
set -- $order
for r in $roles; do
  v=$1; shift
  mkdir -p "$work/$r"
  cp "$emc/$v"/*.log "$work/$r/"
  # README-BLOCKS (2) and README-TXS (2): copy the scripts into the folder with the logs.
  cp "$pre/concatLogs.sh" "$pre"/blocks/*.py "$pre"/blocks/*.sh "$pre"/txs/*.py "$pre"/txs/*.sh "$work/$r/"
  echo "$r = $v" >>"$log"
done

step() { # step DIR COMMAND...: run one documented step in DIR, its output to the log
  d=$1; shift
  echo "== $(basename "$d"): $*" >>"$log"
  (cd "$d" && "$@") >>"$log" 2>&1 || { echo "run-pipeline.sh: step failed in $d: $* (see $log)" >&2; tail -20 "$log" >&2; exit 1; }
}

for r in $roles; do
  d=$work/$r
  # README-BLOCKS (3)-(6)
  step "$d" sh dropDuplicates.sh blocks
  step "$d" sh dropDuplicates.sh blocksAnnouncements
  step "$d" python3 showHoles-Blocks.py unique-unique-blocks.log.FINAL
  range=$(cut -d, -f3 "$d/unique-unique-blocks.log.FINAL" | sort -n | sed -n '1p;$p' | tr '\n' ' ')
  step "$d" python3 extractWeirdBlocks.py unique-unique-blocks.log.FINAL $range
  step "$d" mv unique-unique-blocks.log.FINAL.withoutWeirdBlocks blocks-stage-0.log
  step "$d" python3 Step-0-Timestamps.py
  # README-TXS (3)-(5)
  step "$d" sh txs-dropDuplicates.sh
  step "$d" sh concatLogs.sh txgasused.log
  step "$d" python3 Step-0-Txs-Add-Columns.py unique-unique-txs.log.FINAL
done

A=$work/ANG
# README-BLOCKS (7a), (7b), (7c): Angainor imports the blocks it missed from the others, the others from it.
step "$A" python3 Step-1-Import-Missing-Blocks.py blocks-stage-1.log ../FALC/blocks-stage-1.log tmp-blcks-A-F
step "$A" python3 Step-1-Import-Missing-Blocks.py tmp-blcks-A-F ../S1/blocks-stage-1.log tmp-blcks-A-F-S1
step "$A" python3 Step-1-Import-Missing-Blocks.py tmp-blcks-A-F-S1 ../S2/blocks-stage-1.log tmp-blcks-A-F-S1-S2
step "$A" mv tmp-blcks-A-F-S1-S2 blocks-stage-2.log.ANGAINOR
for r in FALC S1 S2; do
  step "$work/$r" python3 Step-1-Import-Missing-Blocks.py blocks-stage-1.log ../ANG/blocks-stage-2.log.ANGAINOR blocks-stage-2.log
done
step "$A" python3 Step-1-B-Verify-Holes.py blocks-stage-2.log.ANGAINOR
# (8)-(10), on Angainor only
step "$A" python3 Step-2-Set-Main-Blocks.py blocks-stage-2.log.ANGAINOR
step "$A" python3 Step-3-Set-Recognized-Uncles-and-Fork-Lengths.py blocks-stage-3.log
step "$A" python3 BlockTypes.py blocks-stage-4.log
# (12)
step "$A" python3 Step-4-Propagation-Delays.py blocks-stage-4.log ../FALC/blocks-stage-2.log ../S1/blocks-stage-2.log ../S2/blocks-stage-2.log

# README-TXS (8a), (8b)
step "$A" python3 Step-1-Import-Missing-Txs.py txs-stage-0.log ../FALC/txs-stage-0.log tmp-txs-A-F
step "$A" python3 Step-1-Import-Missing-Txs.py tmp-txs-A-F ../S1/txs-stage-0.log tmp-txs-A-F-S1
step "$A" python3 Step-1-Import-Missing-Txs.py tmp-txs-A-F-S1 ../S2/txs-stage-0.log tmp-txs-A-F-S1-S2
step "$A" mv tmp-txs-A-F-S1-S2 txs-stage-1.log
for r in FALC S1 S2; do
  step "$work/$r" python3 Step-1-Import-Missing-Txs.py txs-stage-0.log ../ANG/txs-stage-1.log txs-stage-1.log
done
# (9)-(15), on Angainor only
step "$A" python3 Step-2-Set-Gas-Used.py txs-stage-1.log txgasused.log.FINAL
step "$A" python3 Step-3-Set-Gas-Used-AFTER.py txs-stage-2.log ../FALC/txgasused.log.FINAL tmp-gas-A-F
step "$A" python3 Step-3-Set-Gas-Used-AFTER.py tmp-gas-A-F ../S1/txgasused.log.FINAL tmp-gas-A-F-S1
step "$A" python3 Step-3-Set-Gas-Used-AFTER.py tmp-gas-A-F-S1 ../S2/txgasused.log.FINAL tmp-gas-A-F-S1-S2
step "$A" mv tmp-gas-A-F-S1-S2 txs-stage-3.log
step "$A" python3 Step-4-Assign-Blocks-To-Txs.py txs-stage-3.log blocks-stage-4.log
step "$A" python3 Step-5-Commit-Times.py txs-stage-4.log blocks-stage-4.log
step "$A" python3 Step-6-Never-Commiting.py txs-stage-5.log
step "$A" python3 Step-7-Set-In-Order.py txs-stage-6.log
# (16)
step "$A" python3 Step-8-Set-Propagation-Delays.py txs-stage-7.log ../FALC/txs-stage-1.log ../S1/txs-stage-1.log ../S2/txs-stage-1.log

# The join tables of the study's post-thesis scripts (pool, runs, inter-block times), from the typed blocks:
# all of them, or cut to the window.
cp "$pre/post-thesis"/*.py "$A/"
b4=blocks-stage-4.log bp=blocks-propagation-times.log
if [ -n "$last" ]; then
  awk -F, -v last="$last" '$3 <= last' "$A/blocks-stage-4.log" >"$A/blocks-stage-4.window.log"
  awk -F, -v last="$last" '$2 <= last' "$A/blocks-propagation-times.log" >"$A/blocks-propagation-times.window.log"
  b4=blocks-stage-4.window.log bp=blocks-propagation-times.window.log
fi
step "$A" python3 blcks-propag-delays-updated.py "$b4" "$bp"
step "$A" python3 blcks-propag-delays-updated-2.py blocks-propagation-times-v2.log
echo "run-pipeline.sh: done; the study's tables are in $A" >>"$log"
