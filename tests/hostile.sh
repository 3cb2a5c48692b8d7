#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile inputs, as a table (tests/hostile.tab): each row is a command run
# against a private vsd holding a few VSs and a declared service. After every
# row: the exit status is the expected one, the error is non-empty and
# matches the row's regex, vsd's view (vsctl list --json without the live
# usage counters, the state file, the services) is byte-identical to the one
# before, and vsd still answers.
. "$(dirname "$0")/lib.sh"
need_root
SERVER=$top_builddir/tests/gate-server
[ -x "$SERVER" ] || skip_all "tests/gate-server is not built"
TAB=$top_srcdir/tests/hostile.tab

R=$(mktemp -d /tmp/vsd-hostile.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
PORT=$(test_port)

# --- what a row may call --------------------------------------------------
# rules NAME TEXT [MODE]: write TEXT (printf's escapes are NOT expanded: use
# $'...' in the table) to $R/NAME, mode MODE (0644); prints the path.
rules() { printf '%s' "$2" >"$R/$1" && chmod "${3:-0644}" "$R/$1" && echo "$R/$1"; }
# apply NAME TEXT [MODE]: vsctl apply of that file.
apply() { local f; f=$(rules "$@") && vsctl apply "$f"; }
# raw PYTHON-BYTES [NFDS]: send these bytes (F(b) frames a body, L(n) is a
# length header) with NFDS descriptors of /dev/null; the reply's body goes
# to stderr and its status is the exit status; a connection closed without
# a reply prints "closed without a reply" and exits 3.
raw() {
	python3 - "$VSD_SOCKET" "$1" "${2:-0}" <<'PY'
import os, socket, struct, sys
F = lambda b: struct.pack("=I", len(b)) + b
L = lambda n: struct.pack("=I", n)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(5)
s.connect(sys.argv[1])
data, nfd = eval(sys.argv[2]), int(sys.argv[3])
try:
    if nfd:
        fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(nfd)]
        n = socket.send_fds(s, [data[:4]], fds)
        s.sendall(data[4:])
    else:
        s.sendall(data)
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
reply = b""
try:
    while True:
        c = s.recv(65536)
        if not c:
            break
        reply += c
except OSError:
    pass
if len(reply) < 8:
    print("closed without a reply", file=sys.stderr)
    sys.exit(3)
st, n = struct.unpack("=II", reply[:8])
print(reply[8:8 + n].decode(errors="replace").strip(), file=sys.stderr)
sys.exit(min(st, 255))
PY
}
# stall N CMD...: run CMD (a program, not a shell function) while N clients
# hold connections to vsd open, each having sent half a request header; CMD
# must finish within 5 s.
stall() {
	local n=$1 p rc
	shift
	python3 - "$VSD_SOCKET" "$n" <<'PY' &
import socket, sys, time
held = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.send(b"\x05\x00")
    held.append(s)
time.sleep(10)
PY
	p=$!
	sleep 0.5
	timeout 5 "$@"
	rc=$?
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	return $rc
}

# A row that moves init (attach www1 1, where vsd lets it) must not leave
# it in a VS: put it back in every hierarchy at once, and fail the row.
init_cgroups=$(cat /proc/1/cgroup)
init_home() {
	local ctl path mnt
	[ "$(cat /proc/1/cgroup)" = "$init_cgroups" ] && return 0
	while IFS=: read -r _ ctl path; do
		if [ -z "$ctl" ]; then
			mnt=/sys/fs/cgroup/unified
			[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && mnt=/sys/fs/cgroup
		elif [ -d "/sys/fs/cgroup/$ctl" ]; then
			mnt=/sys/fs/cgroup/$ctl
		else
			continue
		fi
		echo 1 >"$mnt$path/cgroup.procs"
	done <<<"$init_cgroups"
	return 1
}

# --- the vsd under attack -----------------------------------------------------
vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '$SERVER -p $PORT( |\$)'"
cat >"$R/site.rules" <<E
vs base cpu 10%
vs www1 cpu 30% cpu-max 50% mem 64M pids 100
vs www2 cpu 20% dscp AF11 mark 7
service echo home base command "$SERVER -p $PORT"
(accept, base, req = www*) => (requester)
E
chmod 0644 "$R/site.rules"
check "apply the site: 3 VSs and a declared service" vsctl apply "$R/site.rules"
check "create www3 by hand" vsctl create www3 --cpu 5% --mem 32M --pids 20
running() {
	vsctl services --json | json '[s["state"] for s in d if s["name"] == "echo"] == ["running"] and 1 or exit(1)' >/dev/null
}
for _i in $(seq 200); do running && break; sleep 0.05; done
check "the service runs" running
sleep 100000 &	# outlives the test under TCG too; killed on exit
on_exit "kill $!"
check "a process in www2" vsctl attach www2 $!

# vsd's view, without what moves by itself (CPU time, memory in use, the
# kernel's limit-event counters).
view() {
	vsctl list --json | json '[{k: v for k, v in x.items() if k not in ("usage", "events")} for x in d]'
	cat "$VSD_STATE/state"
	vsctl services --json | json '[(s["name"], s["state"], s["pid"], s["home"]) for s in d]'
}
before=$(view)
[ -n "$before" ] && [[ $before == *www3* ]] || { fail "vsctl list --json shows the VSs"; done_testing; }

# --- the table ------------------------------------------------------------------
# STATUS <tab> REGEX <tab> COMMAND; '#' starts a comment line.
n=0
while IFS=$'\t' read -r want pat cmd; do
	case $want in '#'* | '') continue ;; esac
	n=$((n + 1))
	shown=$(printf '%s' "$cmd" | cat -v)
	err=$(eval "$cmd" 2>&1 >/dev/null)
	rc=$?
	why=
	[ "$rc" = "$want" ] || why="exit status $rc, not $want"
	[ -z "$why" ] && [ -z "$err" ] && why="no error message"
	[ -z "$why" ] && ! printf '%s' "$err" | grep -Eq -- "$pat" && why="error does not match /$pat/"
	[ -z "$why" ] && printf '%s' "$err" | grep -Eq 'Sanitizer|runtime error|Segmentation|core dumped' &&
		why="a crash or sanitizer report"
	init_home || why="${why:-init was moved (and is back)}"
	if [ -z "$why" ] && ! kill -0 "$VSD_PID" 2>/dev/null; then
		why="vsd died"
	elif [ -z "$why" ] && ! timeout 10 "$VSCTL" list >/dev/null 2>&1; then
		why="vsd does not answer"
	elif [ -z "$why" ]; then
		after=$(view)
		[ "$after" = "$before" ] || why="vsd's view changed"
	fi
	if [ -z "$why" ]; then
		ok "$shown"
	else
		fail "$shown: $why"
		printf '%s\n' "$err" | head -5 | cat -v | sed 's/^/#   got: /'
		[ "$why" = "vsd's view changed" ] && diff <(echo "$before") <(echo "$after") | sed 's/^/#   /'
		# later rows compare with what is there now, to report each fault once
		kill -0 "$VSD_PID" 2>/dev/null || break
		before=$(view)
	fi
done <"$TAB"
[ "$n" -ge 50 ] || fail "the table has at least 50 rows ($n)"

check "vsd's log has no sanitizer report" sh -c "! grep -Eq 'Sanitizer|runtime error' '$VSD_TMP/vsd.log'"
check "destroy www3" vsctl destroy www3
done_testing
