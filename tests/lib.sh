# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the integration tests (bash): TAP output, a private vsd instance,
# JSON field access, and a cleanup that runs even when a test fails.
# Everything a test makes lives under its own cgroup root (vsd-t<pid>) and its
# own temporary directory; the trap removes both.

set -u
: "${top_builddir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_srcdir:=$top_builddir}"
VSD=$top_builddir/vsd/vsd
VSCTL=$top_builddir/vsctl/vsctl
export LC_ALL=C

_tap_n=0
_tap_fail=0
_cleanups=()
VSD_PID=
VSD_TMP=
VSD_ROOT=${VSD_ROOT:-vsd-t$$}
VSH_ROOT=$VSD_ROOT
. "$top_srcdir/tests/vsd-harness.sh"
. "$top_srcdir/tests/port-lib.sh"

diag() { printf '# %s\n' "$@"; }
ok() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $*"; }
fail() { _tap_n=$((_tap_n + 1)); _tap_fail=$((_tap_fail + 1)); echo "not ok $_tap_n - $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }

# check NAME CMD...: passes when CMD succeeds; shows its output when not.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		fail "$name"
		diag "command: $*"
		printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
	fi
}

# is GOT WANT NAME
is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		fail "$3"
		diag "got:  '$1'" "want: '$2'"
	fi
}

# like TEXT REGEX NAME
like() {
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		ok "$3"
	else
		fail "$3"
		diag "got:  '$1'" "want: /$2/"
	fi
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_fail" -eq 0 ]
	exit $?
}

# Integration tests need root and the kernel features; skip only when truly missing.
need_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root: it creates cgroups"
	[ -d /sys/fs/cgroup ] || skip_all "no /sys/fs/cgroup on this host"
	[ -x "$VSD" ] && [ -x "$VSCTL" ] || skip_all "vsd and vsctl are not built"
	command -v python3 >/dev/null || skip_all "python3 is missing (scripts/deps.sh installs it)"
}

on_exit() { _cleanups+=("$*"); }

# cg_root_dirs ROOT: where vsd puts ROOT's directories (tests/vsd-harness.sh)
cg_root_dirs() { VSH_ROOT=$1 vsh_root_dirs; }
cg_remove_tree() { vsh_remove_tree "$1"; }

_cleanup() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[$i]}" >/dev/null 2>&1
	done
	# vsd, its cgroups (or systemd scope), its pins (tests/vsd-harness.sh);
	# a test may end with VSs in place, so leftovers are not an error here.
	vsh_cleanup
	[ -n "$VSD_TMP" ] && rm -rf "$VSD_TMP"
	# but nothing of ours, nor of a test that has ended, at a hierarchy's
	# root: the exit status makes the TAP driver report an error
	vsh_check_roots || exit 1
}
trap _cleanup EXIT
trap 'exit 1' INT TERM

# vsd_start [VSD ARGS...]: a private vsd for this test; exports VSD_SOCKET.
vsd_start() {
	if [ -z "$VSD_TMP" ]; then
		VSD_TMP=$(mktemp -d /tmp/vsd-test.XXXXXX)
		VSD_STATE=$VSD_TMP/state
	fi
	VSH_DIR=$VSD_TMP
	if vsh_start "$@"; then
		VSD_PID=$VSH_PID
		return 0
	fi
	VSD_PID=$VSH_PID
	diag "vsd did not start:"
	sed 's/^/#   /' "$VSD_TMP/vsd.log"
	return 1
}

# vsd_stop [SIGNAL]: stop it and wait; the VSs stay.
vsd_stop() {
	vsh_stop "$@"
	VSD_PID=
}

vsctl() { "$VSCTL" "$@"; }

# ctl_send PYTHON-BYTES-EXPR [NFDS]: write raw bytes to vsd's control socket
# (F(body) frames a body), passing NFDS descriptors with the first 4 bytes;
# print the reply's status and body, or "closed". $CTL_AS, if set, is a
# command prefix to send as another user (setpriv ...), with Debian's python3
# (root's own may be in a directory that user cannot enter).
ctl_send() {
	${CTL_AS:-} ${CTL_AS:+/usr/bin/}python3 - "$VSD_SOCKET" "$1" "${2:-0}" <<'PY'
import os, socket, struct, sys
F = lambda b: struct.pack("=I", len(b)) + b	# a correctly framed body
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
raw = eval(sys.argv[2])
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(int(sys.argv[3]))]
try:
    if fds:
        socket.send_fds(s, [raw[:4]], fds)
        raw = raw[4:]
    s.sendall(raw)
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass	# vsd answers a bad header at once and closes; its reply waits
data = b""
try:
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
except OSError:
    pass	# ECONNRESET after the reply: vsd closed with our bytes unread
if len(data) >= 8:
    st, n = struct.unpack("=II", data[:8])
    print(st, data[8:8 + n].decode(errors="replace").strip())
else:
    print("closed")
PY
}
quiet() { "$@" >/dev/null 2>&1; }
# wait_until CMD...: until CMD succeeds, up to 10 s (the VM tier is slow)
wait_until() { for _i in $(seq 200); do "$@" && return 0; sleep 0.05; done; return 1; }

# json EXPR: evaluate a Python expression on the JSON read from stdin (as d).
json() {
	python3 -c 'import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if isinstance(v, (dict, list)) or v is None else v)' "$1"
}

# rules_dir: R, a private directory for rule files, removed on exit (0755:
# vsd reads them as root, vsctl check as anyone); w NAME writes stdin to
# $R/NAME, mode 0644 (apply refuses group- or world-writable files)
rules_dir() {
	R=$(mktemp -d "/tmp/vsd-$(basename "$0" .sh).XXXXXX") || exit 99
	chmod 0755 "$R"
	on_exit "rm -rf $R"
}
w() { cat >"$R/$1"; chmod 0644 "$R/$1"; }

# need_gate_server: SERVER and CLIENT, the accept gate's test service and
# client (tests/gate-server.c, gate-client.c), and PORT, one for this test
need_gate_server() {
	SERVER=$top_builddir/tests/gate-server
	CLIENT=$top_builddir/tests/gate-client
	[ -x "$SERVER" ] && [ -x "$CLIENT" ] || skip_all "tests/gate-server is not built"
	PORT=$(test_port)
}
# need_gate_escape: need_gate_server, a socket gate to classify connections
# (cgroup2), and ESC, the absolute path of tests/gate-escape (a tenant's
# program trying ways past the gate, tests/gate-escape.c)
need_gate_escape() {
	need_root
	need_gate_server
	[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"
	ESC=$top_builddir/tests/gate-escape
	[ -x "$ESC" ] || skip_all "tests/gate-escape is not built"
	ESC=$(cd "$(dirname "$ESC")" && pwd)/gate-escape
}

# escape_start NAME CMD: a service under the gate, default options, as
# nobody, running `gate-escape serve $PORT CMD` (after need_gate_escape):
# CMD is its tenant's program, run with sh -c and the listener as fd 3; its
# log is $R/NAME.log, and RUN its pid until escape_stop
escape_start() {
	"$VSCTL" run --gate accept --home base --user nobody --name "$1" -- \
		"$ESC" serve "$PORT" "$2" > "$R/$1.log" 2>&1 &
	RUN=$!
	on_exit "kill $RUN 2>/dev/null"
	wait_until running "$1"
}
escape_stop() {
	kill "$RUN" 2>/dev/null
	wait "$RUN" 2>/dev/null
}

# svc NAME EXPR: a field of a service's status (vsctl services --json)
svc() {
	vsctl services --json | json "[s for s in d if s['name'] == '$1'][0]$2" 2>/dev/null
}
# count FILE VS: the answers in FILE (gate-client -v) to requests that
# began in VS (the server reads its cgroup as soon as it has the request line)
count() { grep -c "cg=[^ ]*/$VSD_ROOT/$2 " "$1"; }
# fast NAME KEY: a field of service NAME's fast-path status
fast() { svc "$1" "['fast']['$2']"; }
# served NAME VS: the connections service NAME served for VS, by its status
served() { svc "$1" "['vs']" | json "sum(v['served'] for v in d if v['name'] == '$2')"; }
# fds PID: how many descriptors PID holds
fds() { ls "/proc/$1/fd" | wc -l; }
running() { [ "$(svc "$1" "['state']")" = running ] && [ "$(svc "$1" "['pid']")" -gt 0 ]; }
# logs NAME: where a service's output and its supervisor's messages go:
# vsd's log, or under systemd the journal of its unit (vsd/services.c)
logs() {
	cat "$VSD_TMP/vsd.log"
	command -v journalctl >/dev/null && [ -d /run/systemd/system ] &&
		journalctl -q --no-pager -o cat -u "vsd-$VSD_ROOT-$1.service" 2>/dev/null
}
# tests/gate-server's processes on the test's $PORT (the [g] keeps a shell
# running this pattern from matching itself)
server_procs() { pgrep -f "[g]ate-server -p $PORT( |\$)"; }
no_server() { ! server_procs >/dev/null; }

# vs_cgroup NAME KIND: the VS's directory in hierarchy KIND (cpu, cpuacct,
# memory, pids, unified); on a pure-v2 host every KIND is the same directory.
vs_cgroup() {
	vsctl show "$1" --json | json "
[p for p in d['cgroups'] if '/$2/' in p] or d['cgroups'][:1]" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0])'
}

cg_layout() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo unified
	elif [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		echo hybrid
	else
		echo legacy
	fi
}

# in_vs PID NAME: the process is in NAME's cgroup in every hierarchy.
in_vs() {
	local n
	n=$(grep -cE "/$VSD_ROOT/$2\$" "/proc/$1/cgroup" 2>/dev/null)
	case $(cg_layout) in
	unified) [ "$n" -eq 1 ] ;;
	hybrid) [ "$n" -eq 5 ] ;;
	*) [ "$n" -eq 4 ] ;;
	esac
}
