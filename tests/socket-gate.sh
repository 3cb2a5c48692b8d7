#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The socket gate against the real kernel, driven through vsd's loader
# (tests/socket-gate-ctl, one process per step, so every step after the first
# also checks adoption).  Real cgroup2 directories, real packets on lo.
set -u

B=${top_builddir:-.}/tests
n=0
failed=0
plan() { echo "1..$1"; }
ok() { n=$((n + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# check NAME EXPECTED-REGEX OUTPUT
check() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then ok "$1"; else fail "$1" "wanted /$2/ in:" "$3"; fi
}
check_not() {
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then fail "$1" "did not want /$2/ in:" "$3"; else ok "$1"; fi
}

[ "$(id -u)" = 0 ] || skip_all "needs root (cgroups, BPF)"
grep -Eq ' /sys/fs/cgroup(/unified)? cgroup2 ' /proc/mounts || skip_all "no cgroup2 hierarchy mounted"
[ -r /sys/kernel/btf/vmlinux ] || skip_all "kernel without BTF (/sys/kernel/btf/vmlinux)"
# vsh_own_cgroup, vsh_remove_tree, vsh_check_roots
. "${top_srcdir:-.}/tests/vsd-harness.sh"

ROOT=vsd-test-$$
# Our cgroups go below the cgroup this test runs in, never at the root:
# the gate needs no controller, so nothing else is written there.
CGBASE=$(vsh_own_cgroup unified)/$ROOT
CG1=$CGBASE/a
CG2=$CGBASE/b
TMP=$(mktemp -d /tmp/vsd-test-sg.XXXXXX)
PIDS=

cleanup() {
	st=$?
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	[ -d "/sys/fs/bpf/vsd/$ROOT" ] && "$B/socket-gate-ctl" "$ROOT" purge >/dev/null 2>&1
	rm -rf "/sys/fs/bpf/vsd/$ROOT-small"
	rmdir /sys/fs/bpf/vsd 2>/dev/null	# only if no other instance is in it
	vsh_remove_tree "$CGBASE"
	rm -rf "$TMP"
	vsh_check_roots || st=1
	exit $st
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkdir "$CGBASE" "$CG1" "$CG2" || { echo "Bail out! cannot create cgroups under $CGBASE"; exit 1; }
echo "# cgroups: $CGBASE/{a,b,c}"

# in_cg CGDIR|- CMD...: run CMD as a child moved into CGDIR (- : stay).
in_cg() {
	cg=$1; shift
	# exec: run in the background, $! is then the helper itself.
	if [ "$cg" = - ]; then exec "$@"; fi
	exec sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
# serve NAME CGDIR|- ADDR: start an echo server, set $port.
serve() {
	out=$TMP/serve-$1
	in_cg "$2" "$B/net-probe" serve "$3" 0 > "$out" &
	PIDS="$PIDS $!"
	i=0
	while ! grep -q ready "$out" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	port=$(sed -n 's/^ready //p' "$out")
}
val() { printf '%s\n' "$2" | sed -n "s/^$1=//p"; }
# hold_conn NAME CGDIR ADDR PORT [peerclosed]: open a connection and keep it
# open until release NAME; with peerclosed, after the server closed its end.
hold_conn() {
	in_cg "$2" "$B/net-probe" "${5:-tcp}" "$3" "$4" "$TMP/release-$1" > "$TMP/hold-$1" &
	PIDS="$PIDS $!"
	eval "holdpid_$1=$!"
	i=0
	while ! grep -q connected "$TMP/hold-$1" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
}
release() { touch "$TMP/release-$1"; eval "wait \$holdpid_$1"; }
# local_of NAME: the local address of hold_conn NAME's connection
local_of() { val local "$(cat "$TMP/hold-$1")"; }
conns() { "$B/socket-gate-ctl" "$ROOT" conns 2>&1; }

plan 66

out=$("$B/socket-gate-ctl" "$ROOT" open 2>&1)
check "first open loads the programs" '^adopted=0$' "$out"
# The table itself is the point here: every connection of a VS recorded
# (vsd --record-conns all); gated mode has its own checks further down.
"$B/socket-gate-ctl" "$ROOT" record all
out=$("$B/socket-gate-ctl" "$ROOT" attach "$CG1" 1 tos=0x28 mark=42 prio=5 2>&1) &&
	"$B/socket-gate-ctl" "$ROOT" attach "$CG2" 2 tos=0xb8 2>&1 && ok "attach two VSs" ||
	fail "attach two VSs" "$out"
pins=$(ls "/sys/fs/bpf/vsd/$ROOT/vs1" 2>&1 | tr '\n' ' ')
check "links pinned per VS" 'connect4 connect6 sendmsg4 sendmsg6 setsockopt sock_create sockops' "$pins"

# Faults: a verifier refusal is logged with the verifier's words and
# changes nothing; a failed attach leaves nothing of the VS behind.
before=$(ls -R "/sys/fs/bpf/vsd/$ROOT")
out=$(VSD_SOCKET_BPF_OBJ=$B/sg-broken.bpf.o "$B/socket-gate-ctl" "$ROOT" open 2>&1)
check "verifier refusal logs the verifier's message" "invalid mem access" "$out"
after=$(ls -R "/sys/fs/bpf/vsd/$ROOT")
if [ "$before" = "$after" ]; then ok "verifier refusal leaves the pins as they were"; else
	fail "verifier refusal leaves the pins as they were" "$before" "$after"; fi
out=$("$B/socket-gate-ctl" "$ROOT" attach "$TMP" 3 tos=0x28 2>&1)
if [ $? -ne 0 ] && [ ! -e "/sys/fs/bpf/vsd/$ROOT/vs3" ]; then
	ok "attach to a non-cgroup fails and leaves nothing"
	printf '%s\n' "$out" | sed 's/^/# /'
else
	fail "attach to a non-cgroup fails and leaves nothing" "$out" "$(ls -R "/sys/fs/bpf/vsd/$ROOT")"
fi

serve s4 - 127.0.0.1; p4=$port
serve s6 - ::1; p6=$port

# Wire level: TOS on the SYN and on data, for IPv4 and IPv6.
out=$(in_cg "$CG1" "$B/net-probe" tcp 127.0.0.1 "$p4" 2>&1)
check "IPv4 SYN from the VS carries TOS 0x28" '^syn_tos=40$' "$out"
check "IPv4 data from the VS carries TOS 0x28" '^data_tos=40$' "$out"
check "SO_MARK of the VS's socket is 42" '^mark=42$' "$out"
check "SO_PRIORITY of the VS's socket is 5 (kept after IP_TOS)" '^priority=5$' "$out"
out=$(in_cg "$CG1" "$B/net-probe" tcp ::1 "$p6" 2>&1)
check "IPv6 SYN from the VS carries traffic class 0x28" '^syn_tos=40$' "$out"
check "IPv6 data from the VS carries traffic class 0x28" '^data_tos=40$' "$out"
out=$(in_cg "$CG1" "$B/net-probe" tcp ::ffff:127.0.0.1 "$p4" 2>&1)
check "IPv4-mapped SYN from an IPv6 socket carries TOS 0x28" '^syn_tos=40$' "$out"
out=$("$B/net-probe" tcp 127.0.0.1 "$p4" 2>&1)
check "a process outside any VS sends TOS 0 and no mark" '^syn_tos=0$' "$out"
check "... and no mark" '^mark=0$' "$out"

# UDP: connect() and unconnected sendto().
# The first datagram of an unconnected socket leaves before the sendmsg
# hook has set the socket's TOS (Linux 6.x copies it first; vsd.8, BUGS).
for a in 127.0.0.1 ::1; do
	out=$(in_cg "$CG1" "$B/net-probe" udp "$a" 0 connect 2>&1)
	check "UDP $a connect: first datagram from the VS carries TOS 0x28" '^udp_tos=40$' "$out"
	out=$(in_cg "$CG1" "$B/net-probe" udp "$a" 0 sendto 2>&1)
	check "UDP $a sendto: later datagrams from the VS carry TOS 0x28" '^udp_tos_last=40$' "$out"
done
out=$("$B/net-probe" udp 127.0.0.1 0 sendto 2>&1)
check "UDP from outside any VS carries TOS 0" '^udp_tos=0$' "$out"

# Attribution while open, gone after close.
hold_conn a "$CG1" 127.0.0.1 "$p4"
local_a=$(val local "$(cat "$TMP/hold-a")")
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check "open connection recorded for VS 1 (active)" "^vs=1 .*dir=active local=$local_a remote=127.0.0.1:$p4\$" "$out"
release a
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check_not "entry gone after close" "local=$local_a " "$out"
# The server closed first: the entry goes at CLOSE_WAIT, while the client
# still holds the socket (the acceptor had accepted; gates/socket/socket.bpf.c).
hold_conn pc "$CG1" 127.0.0.1 "$p4" peerclosed
local_pc=$(val local "$(cat "$TMP/hold-pc")")
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check_not "entry gone when the other end closed first (CLOSE_WAIT)" "local=$local_pc " "$out"
release pc

# Passive side: a server in VS 2, a client outside; the accept gate's
# lookup (src = peer, dst = local, dir = active) is for the client's VS,
# this entry is the server's own.
serve s2 "$CG2" 127.0.0.1; pb=$port
hold_conn b - 127.0.0.1 "$pb"
local_b=$(val local "$(cat "$TMP/hold-b")")
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check "accepted connection recorded for VS 2 (passive)" "^vs=2 .*dir=passive local=127.0.0.1:$pb remote=$local_b\$" "$out"
release b
out=$(cat "$TMP/hold-b")
check "a server in VS 2 answers with TOS 0xb8 on its SYN-ACK" '^synack_tos=184$' "$out"
check "... and on its data" '^reply_tos=184$' "$out"
# The accepting side's entry goes when either end closes first.
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check_not "passive entry gone after the client closed first" "dir=passive local=127.0.0.1:$pb " "$out"
"$B/net-probe" many 127.0.0.1 "$pb" 100 >/dev/null 2>&1
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check_not "passive entries gone after the server closed first" "dir=passive local=127.0.0.1:$pb " "$out"

# The accept gate's lookup, from another process, read-only: an accepted
# socket's (getpeername, getsockname, ACTIVE) finds the connecting VS.
# acc LISTEN-ADDR CONNECT-ADDR CGDIR|- [gated]: prints what the lookup
# found; gated: the listener's port counts as gated (vsd_gports) meanwhile.
acc() {
	# a fresh file: the last call's "listening PORT" must not be read as
	# this one's (the client went to a closed port and the helper waited)
	rm -f "$TMP/acc"
	"$B/socket-gate-ctl" "$ROOT" accept "$1" ${4:+"$4"} > "$TMP/acc" 2>&1 &
	accpid=$!
	i=0
	while ! grep -q listening "$TMP/acc" 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
	(in_cg "$3" "$B/net-probe" tcp "$2" "$(sed -n 's/^listening //p' "$TMP/acc")") >/dev/null 2>&1
	# bounded: a client that never arrives fails the check, not the suite
	i=0
	while kill -0 $accpid 2>/dev/null && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
	kill $accpid 2>/dev/null
	wait $accpid
	grep -v listening "$TMP/acc"
}
check "accept-side lookup finds VS 1 (IPv4)" '^vs=1$' "$(acc 127.0.0.1 127.0.0.1 "$CG1")"
check "accept-side lookup finds VS 1 (IPv6)" '^vs=1$' "$(acc ::1 ::1 "$CG1")"
check "accept-side lookup finds VS 2 (IPv4 client, dual-stack listener)" '^vs=2$' "$(acc :: 127.0.0.1 "$CG2")"
check "accept-side lookup finds no VS for a client outside" '^vs=none$' "$(acc 127.0.0.1 127.0.0.1 -)"

# 10,000 connections later the map is empty again.
out=$(in_cg "$CG1" "$B/net-probe" many 127.0.0.1 "$p4" 10000 2>&1)
check "10,000 connections from the VS" '^done=10000$' "$out"
# The last socket may still wait in LAST_ACK for the server's ACK for a moment.
i=0
while out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1) && [ -n "$out" ] && [ $i -lt 100 ]; do
	sleep 0.02; i=$((i + 1))
done
if [ -z "$out" ]; then ok "map empty after 10,000 connections"; else fail "map empty after 10,000 connections" "$out"; fi
out=$("$B/socket-gate-ctl" "$ROOT" stats 2>&1)
added=$(echo "$out" | sed -n 's/.*added=\([0-9]*\).*/\1/p')
removed=$(echo "$out" | sed -n 's/.*removed=\([0-9]*\).*/\1/p')
if [ -n "$added" ] && [ "$added" -ge 10000 ] && [ "$added" = "$removed" ]; then
	ok "every recorded connection was removed ($out)"
else
	fail "every recorded connection was removed" "$out"
fi
check "no full-map failures" 'full=0$' "$out"

# Gated mode (vsd's default, --record-conns gated): only a connection to a
# port with a gated listener (vsd_gports) is recorded, and only its
# connecting side.  Any other leaves no entry, so no state callback and no
# delete either: the added and removed counters stay as they were.
"$B/socket-gate-ctl" "$ROOT" record gated
stat_ar() { "$B/socket-gate-ctl" "$ROOT" stats 2>&1 | sed -n 's/^added=\([0-9]*\) removed=\([0-9]*\) .*/\1 \2/p'; }
before=$(stat_ar)
out=$(in_cg "$CG1" "$B/net-probe" many 127.0.0.1 "$p4" 100 2>&1)
check "gated mode: 100 connections from VS 1 to an ungated port" '^done=100$' "$out"
hold_conn gu "$CG1" 127.0.0.1 "$p4"
local_gu=$(local_of gu)
out=$(conns)
check_not "gated mode: an open connection to an ungated port has no entry" "local=$local_gu " "$out"
release gu
check "gated mode: the accept-side lookup on an ungated port finds no VS" '^vs=none$' \
	"$(acc 127.0.0.1 127.0.0.1 "$CG1")"
after=$(stat_ar)
if [ -n "$before" ] && [ "$before" = "$after" ]; then
	ok "gated mode: nothing added or removed for 102 ungated connections ($after)"
else
	fail "gated mode: nothing added or removed for 102 ungated connections" "$before -> $after"
fi
check "gated mode: a gated port's connection from VS 1 is recorded and found (IPv4)" '^vs=1$' \
	"$(acc 127.0.0.1 127.0.0.1 "$CG1" gated)"
check "gated mode: ... (IPv6, dual-stack listener, IPv4-mapped client)" '^vs=1$' \
	"$(acc :: ::ffff:127.0.0.1 "$CG1" gated)"
# added_removed BEFORE N: N more added and as many removed (closing takes a moment)
added_removed() {
	i=0
	while [ $i -lt 200 ]; do
		# shellcheck disable=SC2046
		set -- "$1" "$2" $(stat_ar)
		[ "$3 $4" = "$((${1% *} + $2)) $((${1#* } + $2))" ] && return 0
		sleep 0.01; i=$((i + 1))
	done
	return 1
}
if added_removed "$after" 2; then ok "gated mode: those two added, and removed when closed ($(stat_ar))"; else
	fail "gated mode: those two added, and removed when closed" "$after -> $(stat_ar)"; fi
# A server in VS 2 on a gated port: the client's entry, not the server's.
out=$("$B/socket-gate-ctl" "$ROOT" gport "$pb" 1 2>&1)
check "a port is gated by hand, as an accept gate registers its listener" '^gport=1$' "$out"
hold_conn gp "$CG1" 127.0.0.1 "$pb"
local_gp=$(local_of gp)
out=$(conns)
check "gated mode, gated port: the connecting side's entry (VS 1)" \
	"^vs=1 .*dir=active local=$local_gp remote=127.0.0.1:$pb\$" "$out"
check_not "gated mode, gated port: no accepting side's entry (VS 2)" "dir=passive .*remote=$local_gp\$" "$out"
release gp
# All mode: the same connection is recorded on both sides, and so is one
# to an ungated port.
"$B/socket-gate-ctl" "$ROOT" record all
hold_conn ga "$CG1" 127.0.0.1 "$pb"
local_ga=$(local_of ga)
hold_conn gb "$CG1" 127.0.0.1 "$p4"
local_gb=$(local_of gb)
out=$(conns)
check "all mode: the connecting side's entry (VS 1)" "^vs=1 .*dir=active local=$local_ga remote=127.0.0.1:$pb\$" "$out"
check "all mode: the accepting side's entry (VS 2)" "^vs=2 .*dir=passive local=127.0.0.1:$pb remote=$local_ga\$" "$out"
check "all mode: a connection to an ungated port is recorded" "^vs=1 .*dir=active local=$local_gb " "$out"
release ga
release gb
out=$("$B/socket-gate-ctl" "$ROOT" gport "$pb" -1 2>&1)
check "the port is ungated again" '^gport=0$' "$out"

# A full table is counted, not silently ignored: the real gate built with
# an 8-slot table (tests/sg-small.bpf.o), its own pins, a third cgroup.
CG3=$CGBASE/c
mkdir "$CG3"
VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" attach "$CG3" 1 >/dev/null 2>&1
VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" record all
(in_cg "$CG3" "$B/net-probe" hold 127.0.0.1 "$p4" 10 "$TMP/release-full") > "$TMP/hold-full" &
fullpid=$!
i=0
while ! grep -q connected "$TMP/hold-full" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
out=$(VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" stats 2>&1)
check "10 connections into an 8-slot table: 2 counted as not recorded" 'added=8 .*full=2$' "$out"
touch "$TMP/release-full"
wait $fullpid

# Collisions, through the kernel side's insert and delete: three
# connections whose keys share one home slot of the 8 (tests/conntab-ctl picks
# the source ports with the gate's own hash) sit in three slots in a row;
# closing the one at home must not hide the two behind it.
sconns() { VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" conns 2>&1; }
# nrec PORT...: how many of these source ports the small table records
nrec() { _o=$(sconns); _c=0; for _p in "$@"; do
	printf '%s\n' "$_o" | grep -q "local=127.0.0.1:$_p " && _c=$((_c + 1)); done; echo $_c; }
# gone PORT: wait (up to 2 s) until PORT's entry has left the small table
gone() { _i=0; while [ "$(nrec "$1")" != 0 ] && [ $_i -lt 200 ]; do sleep 0.01; _i=$((_i + 1)); done; }
i=0
while [ -n "$(sconns)" ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
# Below the ephemeral range: the 10,000 connections above left the server
# side's TIME_WAIT sockets on many ephemeral ports.
cports=$("$B/conntab-ctl" collide 8 127.0.0.1 "$p4" 3 $((21000 + $$ % 500 * 20)))
# shellcheck disable=SC2086
set -- $cports
(in_cg "$CG3" "$B/net-probe" ports 127.0.0.1 "$p4" "$TMP/release-col" "$@") > "$TMP/hold-col" 2>&1 &
colpid=$!
i=0
while ! grep -q connected "$TMP/hold-col" && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
out=$(nrec "$@"); [ "$out" = 3 ] || out="$out (ports $*: $(cat "$TMP/hold-col"))"
check "three connections with one home slot are all recorded" '^3$' "$out"
touch "$TMP/release-col.1"; gone "$1"
check "the one at home closed: the two behind it are still recorded" '^2$' "$(nrec "$@")"
touch "$TMP/release-col.2"; gone "$2"
check "the second closed: the third is still recorded" '^1$' "$(nrec "$3")"
touch "$TMP/release-col.3"; gone "$3"
wait $colpid
out=$(VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" stats 2>&1)
check "all closed: every entry removed, no more counted full" 'added=11 removed=11 full=2$' "$out"
VSD_SOCKET_BPF_OBJ=$B/sg-small.bpf.o "$B/socket-gate-ctl" "$ROOT-small" purge >/dev/null 2>&1
rmdir "$CG3"

# New settings reach new sockets.
"$B/socket-gate-ctl" "$ROOT" update "$CG1" 1 tos=0x10 >/dev/null 2>&1
out=$(in_cg "$CG1" "$B/net-probe" tcp 127.0.0.1 "$p4" 2>&1)
check "updated TOS 0x10 on the SYN" '^syn_tos=16$' "$out"
"$B/socket-gate-ctl" "$ROOT" update "$CG1" 1 tos=0x28 mark=42 prio=5 >/dev/null 2>&1

# Restart: no loader process runs now; the pinned links keep working.
hold_conn c "$CG1" 127.0.0.1 "$p4"
out=$(cat "$TMP/hold-c")
check "with no loader running, new connection still marked" '^mark=42$' "$out"
local_c=$(val local "$out")
out=$("$B/socket-gate-ctl" "$ROOT" open 2>&1)
check "re-open adopts the pinned programs" '^adopted=1$' "$out"
# The ids of VS 1's pinned links (counting every link on the host would
# also count those of tests and benchmarks running meanwhile).
link_ids() { for f in "/sys/fs/bpf/vsd/$ROOT/vs1"/*; do bpftool link show pinned "$f" | sed -n 's/^\([0-9]*\):.*/\1/p'; done | sort | tr '\n' ' '; }
ids_before=$(link_ids)
"$B/socket-gate-ctl" "$ROOT" attach "$CG1" 1 tos=0x28 mark=42 prio=5 >/dev/null 2>&1
ids_after=$(link_ids)
if [ -n "$ids_before" ] && [ "$ids_before" = "$ids_after" ]; then ok "re-attach adopts the pinned links (no new link)"; else
	fail "re-attach adopts the pinned links (no new link)" "links: $ids_before -> $ids_after"; fi
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check "connection opened with no loader running is recorded" "dir=active local=$local_c " "$out"
release c

# Detach: nothing of VS 1 left; its sockets are plain again.
hold_conn d "$CG1" 127.0.0.1 "$p4"
"$B/socket-gate-ctl" "$ROOT" detach 1 >/dev/null 2>&1
if [ ! -e "/sys/fs/bpf/vsd/$ROOT/vs1" ]; then ok "detach removes the VS's pins"; else
	fail "detach removes the VS's pins" "$(ls -R "/sys/fs/bpf/vsd/$ROOT")"; fi
out=$("$B/socket-gate-ctl" "$ROOT" conns 2>&1)
check_not "detach drops the VS's open connections from the map" '^vs=1 ' "$out"
release d
out=$(in_cg "$CG1" "$B/net-probe" tcp 127.0.0.1 "$p4" 2>&1)
check "after detach the VS's SYN has TOS 0" '^syn_tos=0$' "$out"

# Missing pieces, each in a private mount namespace so nothing else sees
# it: no bpffs (the loader mounts one), no BTF (a clear error).
if command -v unshare >/dev/null; then
	out=$(unshare -m --propagation private sh -c '
		umount /sys/fs/bpf 2>/dev/null
		"$1/socket-gate-ctl" "$2" open && grep " /sys/fs/bpf bpf " /proc/self/mounts &&
			"$1/socket-gate-ctl" "$2" purge' sh "$B" "$ROOT-ns" 2>&1)
	check "without bpffs the loader mounts it" 'mounted bpffs on /sys/fs/bpf' "$out"
	out=$(unshare -m --propagation private sh -c '
		mount -t tmpfs vsd-test-nobtf /sys/kernel/btf && "$1/socket-gate-ctl" "$2" open' \
		sh "$B" "$ROOT-nobtf" 2>&1)
	check "without BTF the loader says what is missing" 'the kernel has no BTF' "$out"
else
	ok "# SKIP unshare(1) missing"
	ok "# SKIP unshare(1) missing"
fi

# Purge removes the instance's whole pin directory.
"$B/socket-gate-ctl" "$ROOT" purge >/dev/null 2>&1
if [ ! -e "/sys/fs/bpf/vsd/$ROOT" ]; then ok "purge leaves nothing under /sys/fs/bpf/vsd/$ROOT"; else
	fail "purge leaves nothing under /sys/fs/bpf/vsd/$ROOT" "$(ls -R "/sys/fs/bpf/vsd/$ROOT")"; fi

exit $failed
