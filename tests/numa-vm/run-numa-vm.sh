#!/usr/bin/env bash
# run-numa-vm.sh: runs the NUMA placement code on a real multi-node kernel: a qemu guest with two NUMA nodes
# (2 CPUs and 1 GiB each, SLIT distance 21), booted from a Debian kernel and a minimal initramfs holding
# busybox, the given binaries and the libraries they load. In the guest: test-numa (the staircase applied
# with mbind and read back with move_pages over two nodes), test-parallel (workers pinned node by node,
# queues and mailboxes first-touched on their node, entity records moved, a shared table spread), then
# `sim run --numa-report` and `sim numa place`. Passes when the guest prints NUMA-VM-RESULT rc=0.
#
# Usage: run-numa-vm.sh SIM TEST_NUMA TEST_PARALLEL (from the source root). Needs qemu-system-x86_64,
# busybox (static), cpio, gzip and a kernel: $SIM_NUMA_VM_KERNEL, else the newest /boot/vmlinuz-*. Without
# them it exits 77 (meson: skipped). Uses KVM when /dev/kvm is usable, else TCG (slower). The guest's
# console goes to $SIM_NUMA_VM_LOG (default: a temp file, printed on failure).
set -u
SIM=$(realpath "$1")
TEST_NUMA=$(realpath "$2")
TEST_PARALLEL=$(realpath "$3")
ROOT=$(pwd)

skip() { echo "numa-vm: skipped: $*"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
command -v cpio >/dev/null || skip "no cpio"
BUSYBOX=$(command -v busybox) || skip "no busybox (apt-get install busybox-static)"
file -L "$BUSYBOX" 2>/dev/null | grep -q "dynamically linked" && skip "$BUSYBOX is not static (busybox-static)"
KERNEL=${SIM_NUMA_VM_KERNEL:-}
if [ -z "$KERNEL" ]; then KERNEL=$(ls -1 /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1); fi
[ -n "$KERNEL" ] && [ -r "$KERNEL" ] || skip "no kernel: set SIM_NUMA_VM_KERNEL (e.g. from apt-get download linux-image-amd64's package, dpkg-deb -x)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
init=$tmp/root
mkdir -p "$init"/{bin,sim,proc,sys,dev,tmp,src}
cp "$BUSYBOX" "$init/bin/busybox"
# The binaries and every library they load, at the same absolute paths (the guest has no other files).
for exe in "$SIM" "$TEST_NUMA" "$TEST_PARALLEL"; do
  cp "$exe" "$init/sim/"
  ldd "$exe" | awk '/=>/ {print $3} /^[ \t]*\// {print $1}' | while read -r lib; do
    [ -n "$lib" ] && [ -e "$lib" ] || continue
    mkdir -p "$init$(dirname "$lib")"
    cp -L "$lib" "$init$lib"
  done
done
cp -r "$ROOT/models" "$ROOT/scenarios" "$init/src/"   # scenarios/data/perf-models.json: test-numa's figures

cat >"$init/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
cd /src
export SIM_SOURCE_ROOT=/src G_SLICE=always-malloc
echo "NUMA-VM: $(ls -d /sys/devices/system/node/node* | wc -l) nodes, $(nproc) CPUs, kernel $(uname -r)"
for n in /sys/devices/system/node/node*; do echo "NUMA-VM: $(basename $n) cpus $(cat $n/cpulist) distance $(cat $n/distance)"; done
rc=0
step() { # NAME CMD...: runs CMD, prints its output's tail, counts a failure
  name=$1; shift
  "$@" >/tmp/out 2>&1; r=$?
  if [ $r -ne 0 ]; then rc=1; echo "NUMA-VM: FAIL $name (exit $r)"; cat /tmp/out; else echo "NUMA-VM: ok $name"; tail -6 /tmp/out; fi
}
step test-numa /sim/test-numa
step test-parallel /sim/test-parallel
step phold-4-threads /sim/sim bench phold --lookahead 0.1 --lps 4000 --pending 4000 --events 2000000 --threads 4
step numa-report /sim/sim run scenarios/geo-small.json --set stop.heights=20 --threads 2 --numa-report --quiet --out /tmp/o
cat /tmp/out
step numa-place /sim/sim numa place --weights 3,1 --size 16
# 16 MiB = 4096 pages at 3:1: exactly 3072 on node 0 and 1024 on node 1, transparent huge pages or not.
grep -Eq '^0 +0\.7500 +3072\.0 +3072 +3072 ' /tmp/out && grep -Eq '^1 +0\.2500 +1024\.0 +1024 +1024 ' /tmp/out ||
  { rc=1; echo "NUMA-VM: FAIL numa-place page counts"; }
# Diagnostic only (not counted): the same without transparent huge pages.
echo never >/sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null && /sim/sim numa place --weights 3,1 --size 16 | tail -3 | sed 's/^/NUMA-VM: no THP: /'
echo "NUMA-VM-RESULT rc=$rc"
poweroff -f
EOF
chmod +x "$init/init"
(cd "$init" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initrd.gz" || { echo "numa-vm: cannot build the initramfs"; exit 1; }

accel=(-accel tcg -cpu max)
if [ "${SIM_NUMA_VM_KVM:-0}" = 1 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel=(-accel kvm -cpu host,-arch-capabilities); fi
log=${SIM_NUMA_VM_LOG:-$tmp/console.log}
timeout "${SIM_NUMA_VM_TIMEOUT:-540}" qemu-system-x86_64 "${accel[@]}" -m 2G -smp 4,sockets=2,cores=2,threads=1 \
  -object memory-backend-ram,size=1G,id=m0 -object memory-backend-ram,size=1G,id=m1 \
  -numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1 \
  -numa dist,src=0,dst=1,val=21 \
  -kernel "$KERNEL" -initrd "$tmp/initrd.gz" -append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init" \
  -nographic -monitor none -no-reboot >"$log" 2>&1
qrc=$?
tr -d '\r' <"$log" | grep "^NUMA-VM" || true
if tr -d '\r' <"$log" | grep -q "^NUMA-VM-RESULT rc=0"; then
  echo "numa-vm: passed (${accel[1]})"
  exit 0
fi
echo "numa-vm: FAILED (qemu exit $qrc, ${accel[1]}); console:"
tr -d '\r' <"$log" | tail -150
exit 1
