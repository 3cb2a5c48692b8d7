# SPDX-License-Identifier: GPL-2.0-or-later
# One private vsd for a test or a benchmark: the only place that starts,
# stops and cleans up after one. POSIX sh, sourced by tests/lib.sh,
# tests/gate-lib.sh, benchmarks/lib-vsd.sh and benchmarks/lib-bench.sh;
# tests/socket-gate.sh and tests/insulation-tiny.sh use its cgroup helpers.
#
# An instance is named by VSH_ROOT (its cgroup root, and its pin directory
# /sys/fs/bpf/vsd/VSH_ROOT) and lives in VSH_DIR (socket, state, log; made
# under /tmp if unset). Set either before vsh_start; VSH_LAUNCH may name a
# function that ends in `exec "$@"`, to start vsd somewhere particular.
#
#   vsh_start [VSD OPTIONS]  start it, wait until it answers (VSH_PID; exports
#                            VSD_SOCKET, which vsctl reads); 1 if it did not
#   vsh_stop [SIGNAL]        send SIGNAL (TERM), wait for it; the VSs stay
#   vsh_dirs                 every cgroup directory of the instance that exists:
#                            VSH_ROOT in each hierarchy, and its systemd scope
#   vsh_own_cgroup HIER      the cgroup this shell runs in, as a directory of
#                            hierarchy HIER (a v1 controller, or unified); the
#                            one tree on a pure-v2 host. What a test makes
#                            without vsd goes below it, never at a root.
#   vsh_root_dirs            where vsd puts its root directories, existing or
#                            not: <mount><cgroup of this shell>/VSH_ROOT in each
#                            hierarchy, or in its scope under systemd (vsd(8))
#   vsh_remove_tree DIR      kill what is left in a cgroup tree and remove it
#   vsh_cleanup              stop vsd, kill what is left in its cgroups, remove
#                            them, its pins and VSH_DIR; status 1 if anything
#                            besides VSH_DIR had to be removed
#   vsh_check_roots          status 1, and a "# " line for each, if a cgroup
#                            of a finished test or benchmark (or of this one,
#                            after its cleanup) is at a hierarchy's root
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
VSD=${VSD:-$top_builddir/vsd/vsd}
VSCTL=${VSCTL:-$top_builddir/vsctl/vsctl}
VSH_ROOT=${VSH_ROOT:-vsd-t$$}
VSH_DIR=${VSH_DIR:-}
VSH_PID=
_vsh_own_dir=

vsh_start() {
	_vsh_i=0
	if [ -z "$VSH_DIR" ]; then
		VSH_DIR=$(mktemp -d "/tmp/$VSH_ROOT.XXXXXX") || return 1
		_vsh_own_dir=1
	fi
	mkdir -p "$VSH_DIR"
	VSD_SOCKET=$VSH_DIR/vsd.sock
	export VSD_SOCKET
	${VSH_LAUNCH:-} "$VSD" --foreground --socket "$VSD_SOCKET" --state-dir "$VSH_DIR/state" \
		--cgroup-root "$VSH_ROOT" "$@" >>"$VSH_DIR/vsd.log" 2>&1 &
	VSH_PID=$!
	# 10 s: under TCG (the VM tier) making the systemd scope takes seconds
	while [ $_vsh_i -lt 200 ]; do
		[ -S "$VSD_SOCKET" ] && "$VSCTL" list >/dev/null 2>&1 && return 0
		kill -0 "$VSH_PID" 2>/dev/null || break
		sleep 0.05
		_vsh_i=$((_vsh_i + 1))
	done
	return 1
}

vsh_stop() {
	[ -n "$VSH_PID" ] || return 0
	kill "-${1:-TERM}" "$VSH_PID" 2>/dev/null
	wait "$VSH_PID" 2>/dev/null
	VSH_PID=
}

vsh_scope() { echo "/sys/fs/cgroup/vsd.slice/vsd-$VSH_ROOT.scope"; }

# As vsd chooses (vsd/scope.c): systemd as PID 1 on a pure cgroup-v2 tree.
_vsh_scoped() {
	[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && [ -d /run/systemd/system ] &&
		[ -z "${VSD_NO_SCOPE:-}" ]
}

# From /proc/self/cgroup: "0::PATH" is the cgroup2 line, "N:ctl,ctl:PATH" a
# v1 hierarchy's (lib/cgroup.c reads it the same way).
vsh_own_cgroup() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		_vsh_own=$(sed -n 's/^0:://p' /proc/self/cgroup)
		echo "/sys/fs/cgroup${_vsh_own%/}"
	elif [ "$1" = unified ]; then
		_vsh_own=$(sed -n 's/^0:://p' /proc/self/cgroup)
		echo "/sys/fs/cgroup/unified${_vsh_own%/}"
	else
		_vsh_own=$(awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/self/cgroup)
		echo "$(readlink -f "/sys/fs/cgroup/$1")${_vsh_own%/}"
	fi
}

vsh_root_dirs() {
	if _vsh_scoped; then
		echo "$(vsh_scope)/$VSH_ROOT"
		return
	fi
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		_vsh_d=$(vsh_own_cgroup unified)
		echo "${_vsh_d%/*/.daemon}/$VSH_ROOT"
		return
	fi
	for _vsh_c in cpu cpuacct memory pids; do
		[ -d "/sys/fs/cgroup/$_vsh_c" ] && echo "$(vsh_own_cgroup "$_vsh_c")/$VSH_ROOT"
	done | sort -u
	if [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		echo "$(vsh_own_cgroup unified)/$VSH_ROOT"
	fi
}

vsh_dirs() {
	[ -d "$(vsh_scope)" ] && vsh_scope
	find /sys/fs/cgroup -maxdepth 6 -type d -name "$VSH_ROOT" 2>/dev/null
}

vsh_remove_tree() {	# leaves first
	for _vsh_i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ -d "$1" ] || return 0
		# cgroup.kill (Linux 5.14) where there is one; then one by one
		[ -e "$1/cgroup.kill" ] && echo 1 >"$1/cgroup.kill" 2>/dev/null
		for _vsh_d in $(find "$1" -depth -type d); do
			[ -f "$_vsh_d/cgroup.procs" ] && xargs -r kill -9 <"$_vsh_d/cgroup.procs" 2>/dev/null
		done
		for _vsh_d in $(find "$1" -depth -type d); do
			rmdir "$_vsh_d" 2>/dev/null
		done
		sleep 0.1
	done
	echo "# vsd-harness: could not remove $1" >&2
}

vsh_cleanup() {
	_vsh_left=0
	if [ -n "$VSH_PID" ] && kill -0 "$VSH_PID" 2>/dev/null; then
		kill -TERM "$VSH_PID" 2>/dev/null
		for _vsh_i in $(seq 50); do kill -0 "$VSH_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$VSH_PID" 2>/dev/null
		wait "$VSH_PID" 2>/dev/null
	fi
	VSH_PID=
	# The supervisors of the declared services (vsd/services.c) outlive vsd
	# by design; they answer on $VSH_DIR/gates/NAME.sock.
	if [ -n "$VSH_DIR" ] && pkill -TERM -f -- "--status $VSH_DIR/gates/" 2>/dev/null; then
		for _vsh_i in $(seq 50); do
			pgrep -f -- "--status $VSH_DIR/gates/" >/dev/null || break
			sleep 0.1
		done
		pkill -KILL -f -- "--status $VSH_DIR/gates/" 2>/dev/null
	fi
	# A scope whose keeper is gone is removed by systemd, not by rmdir.
	for _vsh_t in $(vsh_dirs); do
		_vsh_left=1
		vsh_remove_tree "$_vsh_t"
	done
	if [ -d "/sys/fs/bpf/vsd/$VSH_ROOT" ]; then
		_vsh_left=1
		rm -rf "/sys/fs/bpf/vsd/$VSH_ROOT"
	fi
	rmdir /sys/fs/bpf/vsd 2>/dev/null	# only if no other instance is in it
	[ -n "$_vsh_own_dir" ] && [ -n "$VSH_DIR" ] && rm -rf "$VSH_DIR"
	return $_vsh_left
}

# The roots: each v1 mount and cgroup2's on a hybrid host, the one tree on a
# pure-v2 host (where /sys/fs/cgroup/*/ are ordinary cgroups).
_vsh_hier_roots() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo /sys/fs/cgroup
		return
	fi
	for _vsh_d in /sys/fs/cgroup/*/; do
		mountpoint -q "$_vsh_d" && readlink -f "$_vsh_d"
	done | sort -u
}

# What tests and benchmarks make is named vsd-test-<pid>..., vsd-bench-...<pid>...
# or vsd-t<pid> (the pid of the shell or program that made it). A name whose
# pid still runs belongs to a test running now (on a host where a test's own
# cgroup is the root, its cgroups are there while it runs); any other is
# left behind. This shell's own are checked too: it calls this last.
vsh_check_roots() {
	_vsh_bad=0
	for _vsh_r in $(_vsh_hier_roots); do
		for _vsh_d in "$_vsh_r"/vsd-test-* "$_vsh_r"/vsd-bench-* "$_vsh_r"/vsd-t[0-9]*; do
			[ -d "$_vsh_d" ] || continue
			_vsh_p=$(basename "$_vsh_d" | sed 's/^[^0-9]*\([0-9]*\).*/\1/')
			[ -n "$_vsh_p" ] && [ "$_vsh_p" != $$ ] && kill -0 "$_vsh_p" 2>/dev/null && continue
			echo "# left behind at the root of a cgroup hierarchy: $_vsh_d"
			_vsh_bad=1
		done
	done
	return $_vsh_bad
}
