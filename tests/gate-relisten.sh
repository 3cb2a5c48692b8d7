#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A gated service that closes its listener and listens again on the same
# port, as a graceful reload does: on a new descriptor number (the new
# socket made before the old one is closed) and on the same number (made
# after; also with the old one shut down before its close). The
# supervisor's copy of the old listener kept the port (the service's bind
# failed, EADDRINUSE) or, shut down, its registration (the new listener's
# connections went unrecorded, served at home). In each fast mode the new
# listener is gated like the first: every request of www1 on it begins in
# www1 and is counted served there, none outside the gate's decision, at
# once and after the 5 s in which the gate drops a listener it sees unused;
# it alone is on the fast path (none with --fast off); and the supervisor
# holds no more descriptors than before the reload.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"

R=$(mktemp -d /tmp/vsd-relisten.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null ||
	{ fail "create the VSs"; done_testing; }


cat > "$R/relisten.py" <<'PY'
# relisten.py PORT same|other: one thread accepts, answering
# "cg=PATH req=LINE"; after answering a request that says "socket" it
# makes a socket and closes it; after one that says "relisten" it
# closes its listener and listens on the same port again, the new socket
# made after the close (same: the same descriptor number; shut: the same,
# the listener shut down before the close) or before it (other: another
# number), and prints "relisten OLDFD NEWFD"
import errno, socket, sys, time
port, how = int(sys.argv[1]), sys.argv[2]
def listener(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    return s
# the first bind waits while another program's connection has the port
# (PORT lies in the kernel's ephemeral range); the reload's does not
for i in range(100):
    try:
        l = listener(socket.socket())
        break
    except OSError as e:
        if e.errno != errno.EADDRINUSE or i == 99:
            raise
        time.sleep(0.1)
print("port %d" % port, flush=True)
def cg():
    # the cpu hierarchy's (v1), else cgroup2's: as tests/gate-where.h
    h = dict(x.strip().split(":", 2)[1:] for x in open("/proc/thread-self/cgroup"))
    return h.get("cpu", h.get("cpu,cpuacct", h.get("")))
while True:
    c, _ = l.accept()
    req = c.makefile().readline().strip()
    c.sendall(("cg=%s req=%s\n" % (cg(), req)).encode())
    c.close()
    if "socket" in req:
        socket.socket().close()
    if "relisten" not in req:
        continue
    old = l.fileno()
    if how != "other":
        if how == "shut":
            l.shutdown(socket.SHUT_RDWR)
        l.close()
        l = socket.socket()
    else:
        n = socket.socket()
        l.close()
        l = n
    try:
        listener(l)
    except OSError as e:
        print("relisten-error %s" % e, flush=True)
        sys.exit(1)
    print("relisten %d %d" % (old, l.fileno()), flush=True)
PY
port_free() { ! ss -Htln "( sport = :$PORT )" | grep -q .; }
for mode in "" exact off; do
	for how in other same shut; do
		n=${how}${mode:-default}
		"$VSCTL" run --home base --name "$n" ${mode:+--fast "$mode"} -- \
			python3 "$R/relisten.py" "$PORT" "$how" > "$R/$n.log" 2>&1 &
		RUN=$!
		wait_until running "$n" && wait_until quiet "$CLIENT" -p "$PORT" -n 1 ||
			{ fail "$n: the gated service starts"; diag "$(cat "$R/$n.log")"; }
		SUP=$(svc "$n" "['supervisor']")
		vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$R/$n.c0"
		is "$(count "$R/$n.c0" www1)" 20 "$n: before the reload, www1's 20 begin in www1"
		# a socket made in www1, as the reload's is: what the gate opens
		# for that once (the VS's cgroup2 on a hybrid host) is no leak
		vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -r socket > /dev/null
		f0=$(fds "$SUP")
		vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -r relisten > /dev/null
		wait_until grep -q '^relisten' "$R/$n.log"
		fdn=$(sed -n 's/^relisten \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$R/$n.log")
		diag "$n: $(grep '^relisten' "$R/$n.log")"
		if [ "$how" != other ]; then
			check "$n: the new listener has the old one's descriptor number ($fdn)" \
				sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' - $fdn
		else
			check "$n: the new listener has another descriptor number ($fdn)" \
				sh -c '[ -n "$2" ] && [ "$1" != "$2" ]' - $fdn
		fi
		# at once, and after the gate has dropped the old listener (5 s unused)
		for t in now later; do
			[ $t = now ] || sleep 5.5
			a0=$(served "$n" www1) o0=$(svc "$n" "['outside']")
			vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 16 -j 2 -v > "$R/$n.$t"
			diag "$n, $t: $(tail -1 "$R/$n.$t"); served www1 $a0 -> $(served "$n" www1), outside $o0 -> $(svc "$n" "['outside']"), fast listeners $(svc "$n" "['fast']['listeners']")"
			is "$(grep -c '^ok 16 bad 0' "$R/$n.$t")/$(count "$R/$n.$t" www1)" 1/16 \
				"$n, $t: on the new listener www1's 16 are each answered once, in www1"
			is "$(( $(served "$n" www1) - a0 ))/$(( $(svc "$n" "['outside']") - o0 ))" 16/0 \
				"$n, $t: the gate counts the 16 served in www1, none outside its decision"
		done
		want=1
		[ "$mode" != off ] || want=0
		is "$(svc "$n" "['fast']['listeners']")" $want \
			"$n: listeners on the fast path: the new one (none with --fast off)"
		same_fds() { [ "$(fds "$SUP")" = "$f0" ]; }
		check "$n: the supervisor holds as many descriptors as before the reload ($f0)" \
			wait_until same_fds
		diag "$n: supervisor descriptors $f0 -> $(fds "$SUP")"
		kill "$RUN" 2>/dev/null
		wait "$RUN" 2>/dev/null
		wait_until port_free
	done
done
done_testing
