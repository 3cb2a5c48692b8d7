# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the accept-gate tests: TAP output, VSs of a private vsd
# (cgroup root vsd-test-$$, removed on exit), a private connection table, and
# starting the test server under vsd-gate. Sourced by tests/gate-*.sh.
: "${top_builddir:=.}"
: "${top_srcdir:=$top_builddir}"
GATE=$top_builddir/gates/accept/vsd-gate
SERVER=$top_builddir/tests/gate-server
CLIENT=$top_builddir/tests/gate-client
T=vsd-test-$$
W=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
TAB=$W/vstab
MAP=/sys/fs/bpf/$T/vsd_conns
: > "$TAB"
# GATE_UNIX=1 (tests/gate-unix-*.sh): the same tests on a Unix stream
# listener. gate-server then listens on a socket in $W and prints its path
# as its "port"; gate-client takes a path for -p.
if [ -n "${GATE_UNIX:-}" ]; then
	GATE_SERVER_UNIX=$W
	export GATE_SERVER_UNIX
fi
tap_n=0
tap_failed=0
GATE_PIDS=

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

# usage_ns VS: CPU time the VS's cgroup has used, through the cgroup backend
# (cpuacct on v1 and hybrid hosts, cpu.stat on pure v2); 0 if unreadable
usage_ns() {
	_d=$("$VSCTL" show "$1" --json 2>/dev/null | python3 -c 'import json, sys
c = json.load(sys.stdin)["cgroups"]
print(([p for p in c if "cpuacct" in p] or c)[0])' 2>/dev/null)
	"$top_builddir/tests/cgroup-usage" "$_d" 2>/dev/null || echo 0
}

# The VSs of the tests that run vsd-gate with a table file (--vs-table)
# are a private vsd's (vsd_start below), made with vsctl: so everything
# lives in that vsd's subtree, and on a pure-v2 host vsd delegates the
# controllers (a test never writes a cgroup file outside it).

# put_in VS PID: move a (single-threaded) process into one of our VSs
put_in() { "$VSCTL" attach "$1" "$2" > /dev/null; }

# mk_vs NAME ID SHARE_BP: a VS of the private vsd (started on first use),
# which must get id ID (vsd numbers them 1, 2, ... in order), and its line
# in the table: "id name share_bp key=dir...", keys as vsd's gatetable
mk_vs() {
	[ -n "$VSD_PID" ] || vsd_start || return 1
	"$VSCTL" create "$1" --cpu "$(($3 / 100)).$(printf %02d $(($3 % 100)))%" > /dev/null || return 1
	"$VSCTL" show "$1" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
if d["id"] != int(sys.argv[1]):
    sys.exit("VS %s has id %d, want %s" % (d["name"], d["id"], sys.argv[1]))
keys = []
for p in d["cgroups"]:
    # /sys/fs/cgroup/<controller or unified>/... on hybrid hosts
    k = "unified" if sys.argv[3] == "v2" else p.split("/")[4]
    keys.append("%s=%s" % (k, p))
print(sys.argv[1], d["name"], sys.argv[2], " ".join(keys))' "$2" "$3" "$(pure_v2 && echo v2)" >> "$TAB"
}

# vs_create "NAME SHARE%" ...: VSs of the private vsd (started on first
# use), through vsctl only; says "not ok" and fails on the first error
vs_create() {
	[ -n "$VSD_PID" ] || vsd_start || { nok "start vsd"; return 1; }
	for _v; do
		set -- $_v
		"$VSCTL" create "$1" --cpu "$2" > /dev/null || { nok "create VS $1"; return 1; }
	done
}

# rm_vs NAME: destroy a VS (it must hold no task) and drop it from the table
rm_vs() {
	"$VSCTL" destroy "$1" > /dev/null || return 1
	grep -v " $1 " "$TAB" > "$TAB.new"; mv "$TAB.new" "$TAB"
}

# A table of the socket gate's layout (gates/socket/socket.h), filled by tests/conntab-ctl.
SGTABLE=$top_builddir/tests/conntab-ctl
mk_map() {
	mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf || return 1
	mkdir -p "/sys/fs/bpf/$T"
	"$SGTABLE" create "$MAP" 4096
}

# map_put SPORT DPORT VS_ID: what the socket gate records for a 127.0.0.1 connection
map_put() { "$SGTABLE" put "$MAP" "$1" "$2" "$3"; }
# map_range BASE N VS: source ports BASE..BASE+N-1 -> VS, for server port $PORT
map_range() { "$SGTABLE" put "$MAP" "$1" "$PORT" "$3" "$2"; }

# started: the service just put in the background prints its port and answers status
started() {
	GPID=$!
	GATE_PIDS="$GATE_PIDS $GPID"
	for _i in $(seq 100); do
		PORT=$(awk '/^port /{print $2; exit}' "$OUT" 2>/dev/null)
		[ -n "$PORT" ] && [ -S "$STATUS" ] && break
		sleep 0.05
	done
	SPID=$(status | sed -n 's/^{"name": "[^"]*", "pid": \([0-9]*\).*/\1/p')
	[ -n "$PORT" ] && [ -n "$SPID" ]
}

# answered_before A B: how many answers in file A came before the one in file B
answered_before() {
	_s=$(sed -n 's/.*seq=\([0-9]*\).*/\1/p' "$2")
	sed -n 's/.*seq=\([0-9]*\).*/\1/p' "$1" | awk -v s="$_s" '$1 < s' | wc -l
}

# reorder_check NAME: the reordering scenario of both gate tests. With a
# CPU hog ($HOG, killed here) in www1, a 300 ms request ties the server up
# while 8 requests from www1 (ro_a) and then one from www2 (ro_b) queue;
# the test defines ro_a and ro_b (the client of that VS, extra args after).
reorder_check() {
	sleep 0.6
	"$CLIENT" -p "$PORT" -n 1 -r "spin 300" > /dev/null &
	sleep 0.05
	ro_a -n 8 -j 8 -r "spin 5" -v > "$W/ro1" &
	_r1=$!
	sleep 0.05
	ro_b -n 1 -v > "$W/ro2"
	wait $_r1
	kill $HOG
	_before=$(answered_before "$W/ro1" "$W/ro2")
	_s2=$(sed -n 's/.*seq=\([0-9]*\).*/\1/p' "$W/ro2")
	diag "reordering: www2's request was answer #$_s2; www1 answers before it: $_before of 8"
	check "$1" [ "$_before" -le 1 ]
}

# gate_start NAME [vsd-gate options] -- server args: sets PORT, GPID, SPID, OUT
# GATE_ATTRS=1 (tests/gate-attrs-semantics.sh): with rules that have a site,
# so the gate holds every connection until its FastCGI params arrive
# (gates/accept/hold.c); the test clients send no FastCGI, so each is
# classified by its requester once its first bytes are there.
gate_start() {
	_name=$1; shift
	OUT=$W/$_name.out
	STATUS=$W/$_name.sock
	if [ -n "${GATE_ATTRS:-}" ]; then
		# (the table's home VS cannot be declared: "home" is a keyword)
		printf '%s\n' "vs www1 cpu 40%" "vs www2 cpu 40%" \
		    "site nowhere.example vs www2" > "$W/attrs.rules"
		set -- --rules "$W/attrs.rules" "$@"
	fi
	"$GATE" --home home --vs-table "$TAB" --status "$STATUS" "$@" > "$OUT" 2> "$W/$_name.err" &
	started || return 1
	[ -z "${GATE_ATTRS:-}" ] || status | grep -q '"attrs": {"on": true'
}

status() { "$CLIENT" -u "$STATUS" 2>/dev/null; }
quiet() { "$@" > /dev/null; }
# only_in FILE VS: every answer in FILE (gate-client -v) came from VS's cgroup
only_in() { [ -s "$1" ] && ! grep -v "cg=[^ ]*/$T/$2 " "$1" | grep -q "^[0-9]"; }
# stat_field NAME: a top-level number from the status JSON
stat_field() { status | grep -o "\"$1\": [0-9]*" | tail -1 | awk '{print $2}'; }
# wait_for CMD...: up to 5 s
wait_for() { for _i in $(seq 100); do "$@" && return 0; sleep 0.05; done; return 1; }
waiting() { status | grep -q "\"waiting\": [1-9]"; }

# vsd_start: a private vsd (socket, state and cgroup root of our own), from
# tests/vsd-harness.sh; its instance name is $T, like our own cgroups.
VSH_ROOT=$T
VSH_DIR=$W/run
. "$top_srcdir/tests/vsd-harness.sh"
. "$top_srcdir/tests/port-lib.sh"
VSD_PID=
vsd_start() {
	vsh_start "$@"
	_r=$?
	VSD_PID=$VSH_PID
	return $_r
}
vsd_stop() {
	vsh_stop
	VSD_PID=
}

# run_start NAME [vsctl run options] -- CMD: a service under `vsctl run`
run_start() {
	_name=$1; shift
	OUT=$W/$_name.out
	STATUS=$W/run/gates/$_name.sock
	"$VSCTL" run --name "$_name" "$@" > "$OUT" 2> "$W/$_name.err" &
	started
}

gate_stop() {
	kill "$GPID" 2>/dev/null
	wait "$GPID" 2>/dev/null
	GSTATUS=$?
}

cleanup() {
	for _p in $GATE_PIDS; do kill "$_p" 2>/dev/null; done
	for _p in $GATE_PIDS; do wait "$_p" 2>/dev/null; done
	# vsd and every cgroup named $T (ours and vsd's), in every hierarchy, and
	# the pins; a test may end with VSs in place, so that is no error here
	vsh_cleanup
	# the private connection table of the tests that run without vsd
	rm -rf "/sys/fs/bpf/$T" "$W"
	# nothing of ours, nor of a test that has ended, at a hierarchy's root
	vsh_check_roots || exit 1
}
trap 'cleanup' EXIT
trap 'exit 1' INT TERM
