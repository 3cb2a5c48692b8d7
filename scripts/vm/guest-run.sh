#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# In the guest (vsd-vm-run.service): mount the host's tree over 9p at the path
# it has on the host, say what booted, run the script as root with the boot
# number in VSD_VM_BOOT, keep its output and status in the tree, power off.
set -u
arg() { tr ' ' '\n' </proc/cmdline | sed -n "s/^vsd\.$1=//p" | head -1; }
share=$(arg share)
script=$(arg script)
boot=$(arg boot)
mkdir -p "$share"
modprobe 9pnet_virtio 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,access=any share "$share" || {
	echo "vsd-vm-run: cannot mount the share at $share" >/dev/console
	systemctl poweroff
	exit 1
}
out=$share/tests/vm/out
mkdir -p "$out"
{
	echo "booted: kernel $(uname -r); $(systemctl --version | head -1); /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"
	cd "$share" && VSD_VM_BOOT=$boot "$share/$script"
	echo "vsd-vm-run: exit $?"
} >"$out/boot-$boot.log" 2>&1
sync
umount "$share"
systemctl poweroff
