#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The VM tier checks itself (scripts/vm/run.sh tests/vm/selftest.sh): the
# guest is Debian 12 as shipped, the share works, and so does a reboot.
n=0 f=0
t() { n=$((n + 1)); if eval "$2" >/dev/null 2>&1; then echo "ok $n - $1"; else f=$((f + 1)); echo "not ok $n - $1"; fi; }
if [ "${VSD_VM_BOOT:-1}" = 1 ]; then
	t "PID 1 is systemd" '[ "$(cat /proc/1/comm)" = systemd ]'
	t "cgroup2 only" '[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]'
	t "kernel 6.1" 'uname -r | grep -q "^6\.1\."'
	t "systemd 252" 'systemctl --version | head -1 | grep -q "systemd 252"'
	t "systemd-run --scope -p Delegate=yes" 'systemd-run --scope -p Delegate=yes --quiet true'
	t "the share is writable" 'touch tests/vm/out/selftest-mark'
	touch tests/vm/reboot-requested
else
	t "second boot after the reboot" '[ -e tests/vm/out/selftest-mark ]'
fi
echo "$n checks, $f failed"
exit $((f > 0))
