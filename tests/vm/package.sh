#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# VM tier, run inside the Debian 12 guest as root with systemd as PID 1 (see
# scripts/vm/run.sh): the .deb as a provider installs it, vsd under systemd
# on pure cgroup v2, restarts, kills, reloads, a reboot, an upgrade, a purge.
#
#   package.sh DEB_DIR    boot 1: everything up to the reboot
#   (VSD_VM_BOOT=2)       boot 2: what must be back after it, then the purge
# TAP on stdout.
set -u
DEB_DIR=${1:?usage: package.sh DEB_DIR}
BOOT=${VSD_VM_BOOT:-1}
STATE=$DEB_DIR/package-state	# carried across the reboot
export LC_ALL=C

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '# %s\n' "$@"; }
is() { if [ "$1" = "$2" ]; then ok "$3"; else fail "$3"; diag "got:  '$1'" "want: '$2'"; fi; }
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else fail "$name"; diag "command: $*"; printf '%s\n' "$out" | head -20 | sed 's/^/#   /'; fi
}

main_pid() { systemctl show -p MainPID --value vsd; }
# Wait until vsd is active with a main pid other than $1 (up to 120 s: TCG).
wait_active() {
	local old=${1:-0} i
	for i in $(seq 1 240); do
		if [ "$(systemctl is-active vsd)" = active ] && [ "$(main_pid)" != 0 ] &&
		   [ "$(main_pid)" != "$old" ] && vsctl list >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	systemctl status vsd --no-pager | sed 's/^/#   /'
	return 1
}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
# A field of a service's status (vsctl services --json), "" if none.
svc() {
	vsctl services --json 2>/dev/null | python3 -c '
import json, sys
s = [s for s in json.load(sys.stdin) if s["name"] == sys.argv[1]]
print(s[0][sys.argv[2]] if s else "")' "$1" "$2"
}
# Wait (up to 120 s: TCG) until the service runs.
wait_service() {
	local i
	for i in $(seq 1 240); do
		[ "$(svc "$1" state)" = running ] && [ "$(svc "$1" pid)" != 0 ] && return 0
		sleep 0.5
	done
	vsctl services
	return 1
}
vs_dir() { echo "/sys/fs/cgroup/vsd.slice/vsd-vsd.scope/vsd/$1"; }
# The VS a process sits in, from its cgroup2 path.
vs_of() { sed -n 's|^0::/vsd.slice/vsd-vsd.scope/vsd/||p' "/proc/$1/cgroup"; }
# What must not change: each VS's name, limits and processes as vsd reports
# them, and the limits as the kernel has them.
snapshot() {
	vsctl list --json | python3 -c '
import json, sys
for v in sorted(json.load(sys.stdin), key=lambda v: v["name"]):
    print(v["name"], v["status"], v["cpu"], v["cpu_max"], v["mem_max"], v["pids_max"], sorted(v["procs"]))'
	for v in www1 www2 www3; do
		printf '%s %s %s\n' "$v" "$(cat "$(vs_dir $v)/cpu.weight" 2>/dev/null)" \
			"$(cat "$(vs_dir $v)/memory.max" 2>/dev/null)"
	done
}

if [ "$BOOT" = 1 ]; then
	deb=$(ls "$DEB_DIR"/vsd_*.deb | head -1)
	check "the package installs" dpkg -i "$deb"
	for f in /usr/sbin/vsd /usr/bin/vsctl /usr/libexec/vsd/vsd-gate /lib/systemd/system/vsd.service \
		 /etc/vsd/vsd.rules /usr/share/man/man8/vsd.8.gz /usr/share/man/man5/vsrules.5.gz; do
		check "installed: $f" test -e "$f"
	done
	# The image's dpkg leaves out /usr/share/doc (path-exclude): ask dpkg.
	check "the package ships the examples" grep -qx /usr/share/doc/vsd/examples/hosting.rules \
		<(dpkg -L vsd)
	check "/etc/vsd/vsd.rules is a conffile" grep -qx ' /etc/vsd/vsd.rules [0-9a-f]*' \
		<(dpkg-query -W -f='${Conffiles}\n' vsd)
	check "systemctl enable --now vsd" systemctl enable --now vsd
	check "vsd is active (Type=notify: ready after adoption)" wait_active 0
	like=$(systemctl show -p StatusText --value vsd)
	case $like in *"0 VSs"*) ok "STATUS= says how many VSs" ;; *) fail "STATUS= says how many VSs"; diag "got '$like'" ;; esac

	check "create www1 (50%)" vsctl create www1 --cpu 50% --mem 512M
	check "create www2 (25%)" vsctl create www2 --cpu 25%
	check "create www3 (no process)" vsctl create www3 --cpu 5%
	setsid vsctl exec www1 -- sleep 100000 </dev/null >/dev/null 2>&1 &
	setsid vsctl exec www2 -- sleep 100000 </dev/null >/dev/null 2>&1 &
	sleep 2
	p1=$(pgrep -f 'sleep 100000' | while read -r p; do [ "$(vs_of "$p")" = www1 ] && echo "$p"; done | head -1)
	p2=$(pgrep -f 'sleep 100000' | while read -r p; do [ "$(vs_of "$p")" = www2 ] && echo "$p"; done | head -1)
	[ -n "$p1" ] && [ -n "$p2" ] && ok "a process in www1 ($p1) and in www2 ($p2)" || fail "a process in www1 and www2"
	is "$(cat "$(vs_dir www1)/cpu.weight")" 5000 "www1's cpu.weight is what vsctl set"
	before=$(snapshot)

	old=$(main_pid)
	check "systemctl restart vsd" systemctl restart vsd
	check "vsd is back" wait_active "$old"
	is "$(snapshot)" "$before" "after restart: same VSs, limits and pids"

	check "systemctl daemon-reload" systemctl daemon-reload
	is "$(snapshot)" "$before" "after daemon-reload: unchanged"
	check "systemctl daemon-reexec" systemctl daemon-reexec
	sleep 2
	is "$(snapshot)" "$before" "after daemon-reexec: unchanged"

	old=$(main_pid)
	kill -9 "$old"
	check "after kill -9, systemd restarts vsd" wait_active "$old"
	is "$(snapshot)" "$before" "after kill -9: adopted, unchanged"

	old=$(main_pid)
	check "systemctl kill vsd (SIGTERM)" systemctl kill vsd
	check "vsd is back after systemctl kill (Restart=always)" wait_active "$old"
	is "$(snapshot)" "$before" "after systemctl kill: unchanged"

	check "systemctl stop vsd" systemctl stop vsd
	kill -0 "$p1" 2>/dev/null && [ "$(vs_of "$p1")" = www1 ] && ok "stopped vsd: www1's process runs on, in www1" ||
		fail "stopped vsd: www1's process runs on, in www1"
	check "systemctl start vsd" systemctl start vsd
	check "vsd is back after stop+start" wait_active 0
	is "$(snapshot)" "$before" "after stop+start: unchanged (www3, with no process, too)"

	# A service systemd starts itself (Debian's php8.2-fpm.service) placed in
	# a VS by a drop-in, as vsd(8) "Under systemd" shows: every process of
	# the unit joins the VS after each start; the unit stays systemd's.
	php_in_vs() {
		local p n=0
		for p in $(pgrep -x php-fpm8.2); do
			[ "$(vs_of "$p")" = php ] || return 1
			n=$((n + 1))
		done
		[ "$n" -ge 2 ]	# the master and at least one worker
	}
	check "create php (10%)" vsctl create php --cpu 10%
	mkdir -p /etc/systemd/system/php8.2-fpm.service.d
	cat >/etc/systemd/system/php8.2-fpm.service.d/vsd.conf <<-'EOF'
	[Service]
	ExecStartPost=/bin/sh -c 'for p in $$(pgrep -x php-fpm8.2); do vsctl attach php $$p || exit 1; done'
	EOF
	systemctl daemon-reload
	check "php8.2-fpm starts with the drop-in" systemctl restart php8.2-fpm
	check "all its processes are in VS php" php_in_vs
	check "systemd still runs the unit" test "$(systemctl is-active php8.2-fpm)" = active
	check "a restart puts them back in php" sh -c 'systemctl restart php8.2-fpm && sleep 1'
	check "all its processes are in VS php again" php_in_vs
	check "systemctl stop php8.2-fpm stops them all" sh -c 'systemctl stop php8.2-fpm; sleep 1; ! pgrep -x php-fpm8.2'
	rm -r /etc/systemd/system/php8.2-fpm.service.d
	systemctl daemon-reload
	check "destroy php" vsctl destroy php
	before=$(snapshot)

	# Upgrade to a rebuilt package with VSs running: they survive.
	old=$(main_pid)
	check "upgrade (dpkg -i of the rebuilt package)" dpkg -i "$deb"
	check "vsd runs after the upgrade" wait_active "$old"
	is "$(snapshot)" "$before" "after the upgrade: unchanged"

	# A rule file in /etc, applied at boot, with a declared service (the
	# tests' echo server, copied onto the VM's own disk).
	install -m 0755 "$TOP/tests/gate-server" /usr/local/bin/vsd-test-echo
	cat >/etc/vsd/vsd.rules <<-'EOF'
	vs booted cpu 10%
	service echo home booted command "/usr/local/bin/vsd-test-echo -p 9100"
	EOF
	check "vsctl reload applies /etc/vsd/vsd.rules" vsctl reload
	check "the declared VS exists" vsctl show booted
	check "the declared service runs" wait_service echo
	sp=$(svc echo pid)
	is "$(vs_of "$sp")" booted "it sits in its home VS"
	is "$(systemctl is-active vsd-vsd-echo.service)" active "its supervisor is the unit vsd-vsd-echo.service"
	check "it answers" "$TOP/tests/gate-client" -p 9100 -n 2
	check "its output is in its unit's journal" sh -c \
		"journalctl -u vsd-vsd-echo.service --no-pager | grep -q 'echo: port 9100'"
	old=$(main_pid)
	check "systemctl restart vsd, with the service running" systemctl restart vsd
	check "vsd is back" wait_active "$old"
	is "$(svc echo pid)" "$sp" "the service keeps its pid across the vsd restart"
	echo "$p1 $p2" >"$STATE"
	diag "rebooting"
	touch "$DEB_DIR/reboot-requested"
else
	read -r p1 p2 <"$STATE"
	check "after the reboot vsd is active" wait_active 0
	check "the VS declared in /etc/vsd/vsd.rules is back" vsctl show booted
	is "$(cat "$(vs_dir booted)/cpu.weight" 2>/dev/null)" 1000 "its limit is set in the kernel"
	# The VSs made with vsctl are recreated from the state file after a
	# reboot (their processes are gone with it), not reported missing.
	check "www1, made with vsctl, is back after the reboot" vsctl show www1
	is "$(cat "$(vs_dir www1)/cpu.weight" 2>/dev/null)" 5000 "www1's share is set again"
	is "$(cat "$(vs_dir www1)/memory.max" 2>/dev/null)" 536870912 "www1's memory limit is set again"
	check "www3 is back too" vsctl show www3
	check "the declared service is back after the reboot" wait_service echo
	is "$(vs_of "$(svc echo pid)")" booted "in its home VS"
	check "and answers" "$TOP/tests/gate-client" -p 9100 -n 2

	check "apt purge vsd" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq vsd
	# the keeper is the vsd binary too
	check "no vsd process left (daemon or keeper)" sh -c '! pgrep -x vsd'
	check "no supervisor or service left" sh -c '! pgrep -f "[v]sd-gate|[v]sd-test-echo"'
	check "no cgroup left" sh -c '! ls -d /sys/fs/cgroup/vsd.slice/vsd-* 2>/dev/null | grep -q .'
	check "no pins left" test ! -e /sys/fs/bpf/vsd
	check "no state left" sh -c 'test ! -e /var/lib/vsd && test ! -e /etc/vsd && test ! -e /run/vsd'
fi
echo "1..$n"
exit $((failed > 0))
