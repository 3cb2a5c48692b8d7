#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The cgroup2 "favordynmods" mount option on Debian 12 as shipped, for
# operators (vsd(8), KERNEL AND SYSTEMD). VM tier only: the remount is
# host-wide, and Linux 6.1 cannot undo it without a reboot (checked below),
# so tests/vm/guest.sh runs this after everything else in the VM's last boot.
# Checks: vsd --check reports the option as the mount has it, the remount
# works on Debian's 6.1 and systemd 252 mount, the accept gate re-binds under
# it, and a remount with systemd's own options leaves it set. The re-binding
# times with and without it are measured by benchmarks/rebind-favordynmods,
# not here (no timing decides a test).
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
[ -n "${VSD_VM_BOOT:-}" ] ||
	skip_all "remounts /sys/fs/cgroup for good: only in the VM tier's throw-away guest"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] ||
	skip_all "/sys/fs/cgroup is not a cgroup2 mount (hybrid host): no such mount option"
plan 9

VSD=$top_builddir/vsd/vsd
opts() { awk '$5 == "/sys/fs/cgroup" { print $NF }' /proc/self/mountinfo; }
has_fdm() { opts | tr , '\n' | grep -qx favordynmods; }
reported() { "$VSD" --check | grep -q "^cgroup2 favordynmods  *$1 "; }

BEFORE=$(opts)
diag "cgroup2 mount options before: $BEFORE"
if has_fdm; then
	diag "favordynmods is on already (this boot ran the test before): no 'before' state"
	check "before: vsd --check says yes (already on)" reported yes
else
	check "before: Debian 12 mounts cgroup2 without it, and vsd --check says no" reported no
fi

mount -o remount,favordynmods /sys/fs/cgroup
check "mount -o remount,favordynmods /sys/fs/cgroup succeeds" [ $? = 0 ]
check "the mount has it now" has_fdm
check "vsd --check says yes" reported yes

# the gate re-binds under it: requests from two VSs served in each
vs_create "home 10%" "www1 40%" "www2 40%" || exit 1
run_start fdm --home home -- "$SERVER" || { nok "vsctl run starts the service"; exit 1; }
for r in 1 2 3; do
	"$VSCTL" exec www1 -- "$CLIENT" -p "$PORT" -n 5 -v > "$W/w1.$r"
	"$VSCTL" exec www2 -- "$CLIENT" -p "$PORT" -n 5 -v > "$W/w2.$r"
done
check "under favordynmods: www1's requests served in www1" only_in "$W/w1.3" www1
check "under favordynmods: www2's requests served in www2" only_in "$W/w2.3" www2
moves=$(stat_field moves)
diag "moves: ${moves:-none}; $(status | grep -o '"rebind": {[^}]*}')"
check "the gate moved the service between the VSs" [ "${moves:-0}" -ge 5 ]
gate_stop

# what operators are told: a remount without the option does not clear it
mount -o remount,nsdelegate,memory_recursiveprot /sys/fs/cgroup
check "a remount with systemd's options succeeds" [ $? = 0 ]
check "and leaves favordynmods set (Linux 6.1: only a reboot clears it)" has_fdm
diag "cgroup2 mount options after: $(opts)"
