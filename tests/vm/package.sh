#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# VM tier, run inside the Debian 12 guest as root with systemd as PID 1 (see
# scripts/vm/run.sh): the .deb as a provider installs it, vsd under systemd
# on pure cgroup v2, an upgrade, restarts, kills, reloads, a reboot, a purge.
#
# The upgrade starts from the previous release's package: VSs with limits
# and processes, a rule file with a gated service and a socket rule, served
# requests; then apt-get installs this tree's package, and nothing may be
# lost (VSs, limits, pids, the service and where it charges, /etc/vsd, the
# rules in force, the state, the metrics). Without that package (a release
# tarball given neither the previous one's tarball nor its cached package:
# scripts/vm/deb-previous.sh says why) it installs this tree's and skips
# the upgrade, saying why.
#
#   package.sh DEB_DIR    boot 1: everything up to the reboot
#   (VSD_VM_BOOT=2)       boot 2: what must be back after it, then the purge
# DEB_DIR holds this tree's vsd_*.deb, and previous/ the previous release's
# vsd_*.deb or a file why-not. TAP on stdout.
set -u
DEB_DIR=${1:?usage: package.sh DEB_DIR}
BOOT=${VSD_VM_BOOT:-1}
STATE=$DEB_DIR/package-state	# carried across the reboot
export LC_ALL=C

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
diag() { printf '# %s\n' "$@"; }
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
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

# How many connections a service's gate has served for a VS.
served() {
	vsctl services --json 2>/dev/null | python3 -c '
import json, sys
print(sum(v.get("served", 0) for s in json.load(sys.stdin) if s["name"] == sys.argv[1]
          for v in s.get("vs", []) if v.get("name") == sys.argv[2]))' "$1" "$2"
}
# The answers of gate-client -v ($1) but the first not served in VS $2's
# cgroup (the default mode may begin a VS's first request where the worker
# sat; the gate moves it on).
elsewhere() { grep "^[0-9]" <<<"$1" | sed 1d | grep -vc " cg2=/vsd.slice/vsd-vsd.scope/vsd/$2 "; }
# The gated service serves, and charges, each client in its VS: a client in
# www1 in www1; one in guest, whose sockets the socket rule gives to owner,
# in owner. And guest's sockets carry owner's mark.
served_ok() {
	local n0 out
	n0=$(served echo www1)
	out=$(vsctl exec www1 -- "$TOP/tests/gate-client" -p 9100 -n 4 -v 2>&1)
	is "$(grep -c '^[0-9]' <<<"$out") $(( $(served echo www1) - n0 ))" "4 4" \
		"$1: www1's 4 requests answered, and served by the gate for www1"
	is "$(elsewhere "$out" www1)" 0 "$1: they ran in www1's cgroup"
	n0=$(served echo owner)
	out=$(vsctl exec guest -- "$TOP/tests/gate-client" -p 9100 -n 4 -v 2>&1)
	is "$(grep -c '^[0-9]' <<<"$out") $(( $(served echo owner) - n0 ))" "4 4" \
		"$1: guest's 4 requests answered, and served for owner (socket rule)"
	is "$(elsewhere "$out" owner)" 0 "$1: they ran in owner's cgroup"
	out=$(vsctl exec guest -- "$TOP/tests/net-probe" tcp 127.0.0.1 "$pport" 2>&1)
	case $out in *"mark=7"*) ok "$1: a socket made in guest carries owner's mark" ;;
	*) fail "$1: a socket made in guest carries owner's mark"; diag "net-probe: $out" ;; esac
}
# /etc/vsd as it is: each entry's mode and owner, each file's content.
conf_sums() {
	(cd /etc/vsd && find . -printf '%p %m %u:%g\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

if [ "$BOOT" = 1 ]; then
	deb=$(ls "$DEB_DIR"/vsd_*.deb | head -1)
	version=$(dpkg-deb -f "$deb" Version)
	# The previous release's package (scripts/vm/deb-previous.sh), to
	# upgrade from with everything running; without it, this tree's.
	prev=$(ls "$DEB_DIR"/previous/vsd_*.deb 2>/dev/null | head -1)
	why=$(cat "$DEB_DIR/previous/why-not" 2>/dev/null)
	first=${prev:-$deb}
	check "the package installs ($(basename "$first"))" dpkg -i "$first"
	check "systemctl enable --now vsd" systemctl enable --now vsd
	check "vsd is active (Type=notify: ready after adoption)" wait_active 0
	like=$(systemctl show -p StatusText --value vsd)
	case $like in *"0 VSs"*) ok "STATUS= says how many VSs" ;; *) fail "STATUS= says how many VSs"; diag "got '$like'" ;; esac

	# What the upgrade must keep: VSs made with vsctl, with limits and
	# processes; a rule file in /etc with VSs, a gated service and a socket
	# rule. Only what the previous release has: its vsd and vsctl make it.
	check "create www1 (50%)" vsctl create www1 --cpu 50% --mem 512M
	check "create www2 (25%)" vsctl create www2 --cpu 25%
	check "create www3 (no process)" vsctl create www3 --cpu 5%
	setsid vsctl exec www1 -- sleep 100000 </dev/null >/dev/null 2>&1 &
	setsid vsctl exec www2 -- sleep 100000 </dev/null >/dev/null 2>&1 &
	sleep 2
	p1=$(pgrep -f 'sleep 100000' | while read -r p; do [ "$(vs_of "$p")" = www1 ] && echo "$p"; done | head -1)
	p2=$(pgrep -f 'sleep 100000' | while read -r p; do [ "$(vs_of "$p")" = www2 ] && echo "$p"; done | head -1)
	check "a process in www1 ($p1) and in www2 ($p2)" test -n "$p1" -a -n "$p2"
	is "$(cat "$(vs_dir www1)/cpu.weight")" 5000 "www1's cpu.weight is what vsctl set"
	is "$(cat "$(vs_dir www1)/memory.max")" 536870912 "www1's memory.max is what vsctl set"

	install -m 0755 "$TOP/tests/gate-server" /usr/local/bin/vsd-test-echo
	cat >/etc/vsd/vsd.rules <<-'EOF'
	vs booted cpu 5%
	vs guest cpu 1%
	vs owner cpu 2% mem 256M mark 7
	service echo home booted command "/usr/local/bin/vsd-test-echo -p 9100"
	# sockets made in guest are owner's: its mark, and served in owner
	(socket, guest, *) => (owner)
	EOF
	check "vsctl reload applies /etc/vsd/vsd.rules" vsctl reload
	check "the declared VS exists" vsctl show booted
	check "the declared service runs" wait_service echo
	sp=$(svc echo pid)
	is "$(vs_of "$sp")" booted "it sits in its home VS"
	is "$(systemctl is-active vsd-vsd-echo.service)" active "its supervisor is the unit vsd-vsd-echo.service"
	check "its output is in its unit's journal" sh -c \
		"journalctl -u vsd-vsd-echo.service --no-pager | grep -q 'echo: port 9100'"
	"$TOP/tests/net-probe" serve 127.0.0.1 0 >"$DEB_DIR/probe" 2>&1 &
	probe=$!
	for i in $(seq 100); do grep -q ready "$DEB_DIR/probe" && break; sleep 0.1; done
	pport=$(sed -n 's/^ready //p' "$DEB_DIR/probe")
	served_ok "before the upgrade"
	etc=$(conf_sums)
	applied=$(sha256sum /var/lib/vsd/applied.rules)
	before=$(snapshot)

	if [ -n "$prev" ]; then
		prev_version=$(dpkg-deb -f "$prev" Version)
		old=$(main_pid) since=$(date '+%Y-%m-%d %H:%M:%S')
		sleep 1	# journalctl --since has whole seconds
		# As a provider upgrades, without answering a conffile question
		# (stdin is /dev/null: a question would fail the upgrade).
		check "upgrade $prev_version -> $version with VSs and services running (apt-get install ./$(basename "$deb"))" \
			env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$deb" </dev/null
		is "$(dpkg-query -W -f='${Version} ${db:Status-Abbrev}' vsd)" "$version ii " \
			"dpkg: vsd $version is installed and configured"
		check "dpkg's log: an upgrade from $prev_version, then configure" sh -c \
			"grep -q ' upgrade vsd:[a-z0-9]* $prev_version $version\$' /var/log/dpkg.log &&
			 grep -q ' configure vsd:[a-z0-9]* $version ' /var/log/dpkg.log"
		is "$(vsctl --version)" "vsctl $version" "vsctl is the new version"
		check "vsd runs after the upgrade, restarted" wait_active "$old"
		is "$(journalctl -u vsd --since "$since" --no-pager -o cat | grep -c '^Started vsd')" 1 \
			"the upgrade started vsd once"
		# started after the unpack: not the old binary, deleted under it
		is "$(readlink "/proc/$(main_pid)/exe")" /usr/sbin/vsd "vsd runs the new binary"
		is "$(snapshot)" "$before" "after the upgrade: same VSs, limits and pids"
		is "$(svc echo pid)" "$sp" "the declared service kept its pid"
		is "$(systemctl is-active vsd-vsd-echo.service)" active "its supervisor's unit is active"
		served_ok "after the upgrade"
		is "$(conf_sums)" "$etc" "/etc/vsd unchanged (the changed conffile kept, nothing added)"
		is "$(sha256sum /var/lib/vsd/applied.rules)" "$applied" "the rules in force unchanged"
		check "the state files are there" test -s /var/lib/vsd/state -a -s /var/lib/vsd/services
		check "the metrics have www1's memory limit" grep -q \
			'^vsd_vs_memory_limit_bytes{.*vs="www1".*} 536870912$' <(vsctl metrics)
	else
		skip "upgrade from the previous release: ${why:-no package of the previous release}"
	fi

	for f in /usr/sbin/vsd /usr/bin/vsctl /usr/libexec/vsd/vsd-gate /lib/systemd/system/vsd.service \
		 /etc/vsd/vsd.rules /usr/share/man/man8/vsd.8.gz /usr/share/man/man5/vsrules.5.gz; do
		check "installed: $f" test -e "$f"
	done
	# The image's dpkg leaves out /usr/share/doc (path-exclude): ask dpkg.
	check "the package ships the examples" grep -qx /usr/share/doc/vsd/examples/hosting.rules \
		<(dpkg -L vsd)
	check "/etc/vsd/vsd.rules is a conffile" grep -qx ' /etc/vsd/vsd.rules [0-9a-f]*' \
		<(dpkg-query -W -f='${Conffiles}\n' vsd)
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

	# The same version again (dpkg -i of the same package): a reinstall
	# with VSs running leaves them too.
	old=$(main_pid)
	check "reinstall (dpkg -i of the same package)" dpkg -i "$deb"
	check "vsd runs after the reinstall" wait_active "$old"
	is "$(snapshot)" "$before" "after the reinstall: unchanged"
	is "$(svc echo pid)" "$sp" "the declared service kept its pid"

	check "the declared service answers" "$TOP/tests/gate-client" -p 9100 -n 2
	old=$(main_pid)
	check "systemctl restart vsd, with the service running" systemctl restart vsd
	check "vsd is back" wait_active "$old"
	is "$(svc echo pid)" "$sp" "the service keeps its pid across the vsd restart"
	kill "$probe"
	echo "$p1 $p2" >"$STATE"
	diag "rebooting"
	touch "$DEB_DIR/reboot-requested"
else
	read -r p1 p2 <"$STATE"
	check "after the reboot vsd is active" wait_active 0
	check "the VS declared in /etc/vsd/vsd.rules is back" vsctl show booted
	is "$(cat "$(vs_dir booted)/cpu.weight" 2>/dev/null)" 500 "its limit is set in the kernel"
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
