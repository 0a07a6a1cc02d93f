#!/usr/bin/env bash
# simblock-side-by-side.sh: times SimBlock and sim on one of BENCH.md's workloads in interleaved pairs on this
# machine and prints each pair and the median ratio. On shared machines speed drifts 2-3x within minutes, so
# only ratios of runs taken next to each other mean anything; pairs alternate which of the two goes first.
#
# Usage: scenarios/bench/simblock-side-by-side.sh SIMBLOCK_SRC SIM_BINARY [a|b|c] [PAIRS]
#   SIMBLOCK_SRC  SimBlock's source (github.com/dsg-titech/simblock, BENCH.md: commit 5fc7f9f): a checkout,
#                 or a bare git directory (its HEAD is extracted)
#   SIM_BINARY    a release build of sim (meson setup build-rel --buildtype=release -Db_ndebug=true)
#   a|b|c         the workload (default b); sim runs scenarios/bench/<w>.json beside this script
#   PAIRS         interleaved pairs (default 3)
#
# SimBlock is patched in a temporary copy: its four workload constants in SimulationConfiguration.java
# (NUM_OF_NODES, INTERVAL, END_BLOCK_HEIGHT, BLOCK_SIZE), nothing else; its other settings are the ones
# scenarios/bench/<w>.json reproduces. It is built with plain javac (Debian: default-jdk-headless) and run as
# its users run it, outputs on (output.json, static.json, graph/, blockList.txt; its per-block propagation
# listing on stdout goes to /dev/null). sim runs `sim run <w>.json --quiet --out DIR`, all outputs on.
# Columns: wall, user+sys CPU (s) and peak RSS (MB) of each, the wall ratio SimBlock/sim, and the stale
# share each reports (SimBlock: Orphan lines of blockList.txt; sim: chain.stale_share of summary.json).
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
src=$1
sim=$2
w=${3:-b}
pairs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/$w.json
case $w in
  a) nodes=1000 interval='1000 * 60 * 10' height=1000 size=535000 ;;
  b) nodes=1000 interval='1000 * 13' height=1000 size=50000 ;;
  c) nodes=10000 interval='1000 * 60 * 10' height=100 size=535000 ;;
  *) echo "workload must be a, b or c (got '$w')" >&2; exit 2 ;;
esac
[ -f "$scen" ] || { echo "$scen: no such workload file" >&2; exit 2; }
case $pairs in '' | *[!0-9]* | 0) echo "PAIRS must be a positive integer (got '$pairs')" >&2; exit 2 ;; esac
[ -x "$sim" ] || { echo "$sim: not an executable sim binary" >&2; exit 2; }
for tool in javac java python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool missing (Debian: default-jdk-headless, python3, time)" >&2; exit 2; }
done
sim=$(cd "$(dirname "$sim")" && pwd)/$(basename "$sim")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sb"
if [ -d "$src/.git" ] || [ -f "$src/.git" ]; then
  cp -r "$src/." "$work/sb"
elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  git --git-dir="$src" archive HEAD | tar -x -C "$work/sb"
elif [ -d "$src" ]; then
  cp -r "$src/." "$work/sb"
else
  echo "$src: neither a SimBlock checkout nor a git directory" >&2
  exit 2
fi
cfg=$(find "$work/sb" -name SimulationConfiguration.java | head -n 1)
[ -n "$cfg" ] || { echo "no SimulationConfiguration.java under $src" >&2; exit 2; }
sed -i -E "s/(int NUM_OF_NODES = )[^;]*;/\1$nodes;/; s/(long INTERVAL = )[^;]*;/\1$interval;/; \
s/(int END_BLOCK_HEIGHT = )[^;]*;/\1$height;/; s/(long BLOCK_SIZE = )[^;]*;/\1$size;/" "$cfg"
for want in "NUM_OF_NODES = $nodes;" "INTERVAL = $interval;" "END_BLOCK_HEIGHT = $height;" "BLOCK_SIZE = $size;"; do
  grep -qF "$want" "$cfg" || { echo "could not set '$want' in $cfg (SimBlock's source changed?)" >&2; exit 1; }
done
(cd "$work/sb" && find . -name '*.java' -path '*src/main/java*' >srcs && mkdir -p classes &&
  javac -nowarn -encoding UTF-8 -d classes @srcs)
conf=$(dirname "$(find "$work/sb" -name simulator.conf | head -n 1)")
[ -f "$conf/simulator.conf" ] || { echo "no simulator.conf under $src" >&2; exit 2; }
run=$work/run
mkdir -p "$run"
cp -r "$work/sb/classes" "$run/classes"
cp -r "$conf" "$run/conf" # SimBlock writes to conf/../output

run_simblock() {
  rm -rf "$run/output" && mkdir -p "$run/output/graph"
  (cd "$run" && /usr/bin/time -f '%e %U %S %M' -o "$work/t.sb" \
    java -Dfile.encoding=UTF-8 -cp classes:conf simblock.simulator.Main >/dev/null 2>"$work/sb.err") ||
    { echo "SimBlock failed: $(tail -n 3 "$work/sb.err")" >&2; exit 1; }
}
run_sim() {
  rm -rf "$work/out"
  /usr/bin/time -f '%e %U %S %M' -o "$work/t.sim" "$sim" run "$scen" --quiet --out "$work/out" >/dev/null 2>"$work/sim.err" ||
    { echo "sim failed: $(tail -n 3 "$work/sim.err")" >&2; exit 1; }
}
# wall cpu rss_mb from a /usr/bin/time -f '%e %U %S %M' file (its last line: time may add a status line)
times() { tail -n 1 "$1" | awk '{printf "%s %.2f %.0f", $1, $2 + $3, $4 / 1024}'; }
sb_stale() { awk '/^OnChain/ {m++} /^Orphan/ {o++} END {printf "%.4f", (m + o) ? o / (m + o) : 0}' "$run/output/blockList.txt"; }
sim_stale() { python3 -c 'import json, sys; print("%.4f" % json.load(open(sys.argv[1]))["chain"]["stale_share"])' "$work/out/summary.json"; }

echo "workload $w: SimBlock $(git --git-dir="$src" rev-parse --short HEAD 2>/dev/null || git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'), $("$sim" --version | head -n 1), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-4s %-5s %9s %8s %7s %9s %8s %7s %7s %9s %9s\n' pair first sb_wall sb_cpu sb_mb sim_wall sim_cpu sim_mb ratio sb_stale sim_stale
ratios=()
for i in $(seq 1 "$pairs"); do
  if [ $((i % 2)) -eq 1 ]; then first=sb; run_simblock; run_sim; else first=sim; run_sim; run_simblock; fi
  read -r a ac am <<<"$(times "$work/t.sb")"
  read -r b bc bm <<<"$(times "$work/t.sim")"
  r=$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", (b > 0 ? a / b : 0)}')
  ratios+=("$r")
  printf '%-4s %-5s %9s %8s %7s %9s %8s %7s %7s %9s %9s\n' "$i" "$first" "$a" "$ac" "$am" "$b" "$bc" "$bm" "$r" "$(sb_stale)" "$(sim_stale)"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
echo "median wall ratio SimBlock/sim on $w over $pairs pairs: ${median}x"
