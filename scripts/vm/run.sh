#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boot the VM tier's Debian 12 image (scripts/vm/image.sh) and run one script
# in it, as root under systemd:
#
#   scripts/vm/run.sh SCRIPT     SCRIPT is a path inside this tree
#
# The tree is shared with the guest over 9p at the same absolute path, so a
# build made on the host runs there as it is. The guest writes its output to
# tests/vm/out/boot-N.log, which is printed here. If the script leaves
# tests/vm/reboot-requested, the VM boots once more (VSD_VM_BOOT=2). Each run
# boots a throw-away copy-on-write overlay; the cached image stays clean.
# KVM where /dev/kvm works, TCG otherwise (these machines: TCG). No network.
# VSD_VM_TIMEOUT (default 3600 s) bounds each boot: then qemu is killed and
# the run ends. Exit status: 0 if every boot's script exited 0.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
script=${1:?usage: run.sh SCRIPT}
timeout=${VSD_VM_TIMEOUT:-3600}
img=$("$top/scripts/vm/image.sh")
work=$(mktemp -d /tmp/vsd-vm.XXXXXX)
qpid= watchdog=
cleanup() {
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	[ -n "$watchdog" ] && { pkill -P "$watchdog" sleep; kill "$watchdog"; } 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# KVM where it works: qemu -accel kvm started paused (-S) waits until the
# timeout (status 124); where KVM is unusable it aborts at once ("failed to
# set MSR 0x10a" on these machines). Then TCG, several times slower.
accel=tcg
case $(timeout 5 qemu-system-x86_64 -accel kvm -machine q35 -display none -nodefaults \
	-monitor none -serial none -S </dev/null 2>&1; echo "rc=$?") in
*"rc=124"*) [ -w /dev/kvm ] && accel=kvm ;;
esac
echo "run.sh: accel=$accel"

rm -rf "$top/tests/vm/out" "$top/tests/vm/reboot-requested"
mkdir -p "$top/tests/vm/out"
echo "$accel" >"$top/tests/vm/out/accel"
qemu-img create -q -f qcow2 -b "$img/base.img" -F raw "$work/disk.qcow2"
rc=0
for boot in 1 2; do
	start=$(date +%s)
	rm -f "$top/tests/vm/reboot-requested"
	qemu-system-x86_64 -accel "$accel" -machine q35 -cpu max -smp 2 -m 3072 \
		-display none -serial "file:$work/console-$boot.log" -monitor none -no-reboot \
		-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 quiet systemd.show_status=0 vsd.share=$top vsd.script=$script vsd.boot=$boot" \
		-drive "file=$work/disk.qcow2,if=virtio,format=qcow2,cache=unsafe" \
		-virtfs "local,path=$top,mount_tag=share,security_model=passthrough,id=share" \
		-nic none &
	qpid=$!
	# The watchdog holds none of our output open (a pipe reader would wait).
	( sleep "$timeout" && kill "$qpid" ) >/dev/null 2>&1 </dev/null &
	watchdog=$!
	wait "$qpid" || true
	qpid=
	# the watchdog gone before we stop it: it fired
	fired=yes
	pkill -P "$watchdog" sleep 2>/dev/null && fired=
	kill "$watchdog" 2>/dev/null || true
	watchdog=
	log=$top/tests/vm/out/boot-$boot.log
	echo "run.sh: boot $boot took $(( $(date +%s) - start )) s"
	if [ -n "$fired" ]; then
		echo "run.sh: boot $boot stopped by the watchdog after $timeout s (VSD_VM_TIMEOUT)" >&2
		rc=1
	fi
	if [ ! -f "$log" ]; then
		echo "run.sh: boot $boot ran no script; the console said:" >&2
		tail -40 "$work/console-$boot.log" >&2
		exit 1
	fi
	cat "$log"
	grep -q '^vsd-vm-run: exit 0$' "$log" || rc=1
	[ -z "$fired" ] || break
	[ -e "$top/tests/vm/reboot-requested" ] || break
	echo "run.sh: the guest asked for a reboot"
done
exit $rc
