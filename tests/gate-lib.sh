# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the accept-gate tests: TAP output, private VS cgroups
# (vsd-test-$$, removed on exit), a private connection map, and starting the
# test server under vsd-gate. Sourced by tests/gate-*.sh.
: "${top_builddir:=.}"
GATE=$top_builddir/vsd/vsd-gate
SERVER=$top_builddir/tests/gate-server
CLIENT=$top_builddir/tests/gate-client
T=vsd-test-$$
W=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
TAB=$W/vstab
MAP=/sys/fs/bpf/$T/vsd_conns
: > "$TAB"
tap_n=0
tap_failed=0
GATE_PIDS=
CG_DIRS=

plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
nok() { tap_n=$((tap_n + 1)); echo "not ok $tap_n - $*"; tap_failed=1; }
# check NAME CMD...: ok if CMD succeeds
check() { _name=$1; shift; if "$@"; then ok "$_name"; else nok "$_name"; fi; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
diag() { echo "# $*"; }

need_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root: cgroups, a seccomp listener, BPF maps"
	[ -x "$GATE" ] || skip_all "vsd-gate is not built"
}

pure_v2() { [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; }
cg_hiers() { if pure_v2; then echo .; else echo cpu cpuacct unified; fi; }
cg_path() { if [ "$1" = . ]; then echo "/sys/fs/cgroup/$T/$2"; else echo "/sys/fs/cgroup/$1/$T/$2"; fi; }

# mk_vs NAME ID SHARE_BP: a VS of our own, and its line in the table
mk_vs() {
	_line="$2 $1 $3"
	for _h in $(cg_hiers); do
		_d=$(cg_path "$_h" "$1")
		mkdir -p "$_d" || return 1
		CG_DIRS="$_d $CG_DIRS"
		case $_h in
		.) if [ -z "$_v2on" ]; then
			echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
			echo +cpu > "/sys/fs/cgroup/$T/cgroup.subtree_control"; _v2on=1; fi
		   _line="$_line unified=$_d" ;;
		*) _line="$_line $_h=$_d" ;;
		esac
	done
	echo "$_line" >> "$TAB"
}

# rm_vs NAME: destroy a VS (its cgroups must hold no task) and drop it from the table
rm_vs() {
	for _h in $(cg_hiers); do rmdir "$(cg_path "$_h" "$1")"; done
	grep -v " $1 " "$TAB" > "$TAB.new"; mv "$TAB.new" "$TAB"
}

mk_map() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || return 1
	mkdir -p "/sys/fs/bpf/$T"
	bpftool map create "$MAP" type hash key 40 value 16 entries 4096 name vsd_conns
}

# map_put SPORT DPORT VS_ID: what the socket gate records for a 127.0.0.1 connection
# (struct vsd_conn_key/val in gates/socket.h; ports in host byte order)
le16() { printf '%02x %02x' $(($1 & 255)) $(($1 >> 8)); }
le32() { printf '%02x %02x %02x %02x' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }
map_put() {
	_lo="7f 00 00 01 00 00 00 00 00 00 00 00 00 00 00 00"
	# shellcheck disable=SC2046
	bpftool map update pinned "$MAP" key hex 02 00 00 00 $(le16 "$1") $(le16 "$2") $_lo $_lo \
		value hex 00 00 00 00 00 00 00 00 $(le32 "$3") 00 00 00 00
}

# gate_start NAME [vsd-gate options] -- server args: sets PORT, GPID, SPID, OUT
gate_start() {
	_name=$1; shift
	OUT=$W/$_name.out
	STATUS=$W/$_name.sock
	"$GATE" --home home --vs-table "$TAB" --status "$STATUS" "$@" > "$OUT" 2> "$W/$_name.err" &
	GPID=$!
	GATE_PIDS="$GATE_PIDS $GPID"
	for _i in $(seq 100); do
		PORT=$(awk '/^port /{print $2; exit}' "$OUT")
		[ -n "$PORT" ] && [ -S "$STATUS" ] && break
		sleep 0.05
	done
	SPID=$(status | sed -n 's/^{"name": "[^"]*", "pid": \([0-9]*\).*/\1/p')
	[ -n "$PORT" ] && [ -n "$SPID" ]
}

status() { "$CLIENT" -u "$STATUS" 2>/dev/null; }
quiet() { "$@" > /dev/null; }
# stat_field NAME: a top-level number from the status JSON
stat_field() { status | grep -o "\"$1\": [0-9]*" | tail -1 | awk '{print $2}'; }
# wait_for CMD...: up to 5 s
wait_for() { for _i in $(seq 100); do "$@" && return 0; sleep 0.05; done; return 1; }
waiting() { status | grep -q "\"waiting\": [1-9]"; }

gate_stop() {
	kill "$GPID" 2>/dev/null
	wait "$GPID" 2>/dev/null
	GSTATUS=$?
}

cleanup() {
	for _p in $GATE_PIDS; do kill "$_p" 2>/dev/null; done
	for _p in $GATE_PIDS; do wait "$_p" 2>/dev/null; done
	for _d in $CG_DIRS; do
		[ -d "$_d" ] || continue
		for _p in $(cat "$_d/cgroup.procs" 2>/dev/null); do kill -9 "$_p" 2>/dev/null; done
	done
	sleep 0.1
	for _d in $CG_DIRS; do [ -d "$_d" ] && rmdir "$_d" 2>/dev/null; done
	for _h in $(cg_hiers); do
		_d=$(cg_path "$_h" "")
		[ -d "$_d" ] && rmdir "$_d" 2>/dev/null
	done
	rm -rf "/sys/fs/bpf/$T" "$W"
}
trap 'cleanup' EXIT
trap 'exit 1' INT TERM
