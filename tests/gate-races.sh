#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate's races (gates/accept/fastpath.c and gate.c, their header
# comments), provoked for real in the default mode, with --fast exact
# (whose answers differ: a thread may wait in the kernel, or never) and
# with --fast off (every connection drained and handed over):
# - a client of www2 that resets while queued behind a busy service, with
#   www1's clients queued after it. The kernel keeps the reset connection
#   queued, and accept returns it; the gate must neither serve one of
#   www1's connections outside www1 nor lose one, and the supervisor must
#   hold no more descriptors afterwards than before;
# - a listener shut down while two threads wait in accept on it: each gets
#   EINVAL, as without the gate, and the supervisor lets go of it.
# (tests/gate-tfo.sh has Fast Open, the other race fastpath.c names.)
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" != legacy ] || skip_all "no cgroup2: no socket gate to classify connections"

R=$(mktemp -d /tmp/vsd-races.XXXXXX)
on_exit "rm -rf $R"
vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '[g]ate-server -p $PORT'"
vsctl create base --cpu 10% >/dev/null && vsctl create www1 --cpu 40% >/dev/null &&
	vsctl create www2 --cpu 40% >/dev/null || { fail "create the VSs"; done_testing; }


for mode in "" exact off; do
	n=reset${mode:-default}
	"$VSCTL" run --home base --name "$n" ${mode:+--fast "$mode"} -- "$SERVER" -p "$PORT" \
		> "$R/$n.log" 2>&1 &
	RUN=$!
	wait_until running "$n" && wait_until quiet "$CLIENT" -p "$PORT" -n 1 ||
		fail "$n: the gated service starts"
	SUP=$(svc "$n" "['supervisor']")
	# the ring is fed; the gate has met both VSs (what it opens for a VS
	# it has not served yet is no leak)
	vsctl exec www2 -- "$CLIENT" -p "$PORT" -n 1 > /dev/null
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$R/$n.warm"
	f0=$(fds "$SUP") a0=$(served "$n" www1) mo=$(fast "$n" misordered)
	# the service busy with one request of www1 ...
	touch "$R/$n.hold"
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -r "hold $R/$n.hold" > /dev/null &
	c1=$!
	wait_until sh -c "[ \$(ss -Htn state established '( sport = :$PORT )' | wc -l) -ge 1 ]"
	# ... a client of www2 connects and resets while queued ...
	vsctl exec www2 -- python3 -c 'import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()' "$PORT"
	# ... and www1's five queue behind it
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 5 -j 5 -v > "$R/$n.c" &
	c2=$!
	sleep 0.3
	rm -f "$R/$n.hold"
	wait "$c1" "$c2"
	mis=$(( $(fast "$n" misordered) - ${mo:-0} ))
	diag "$n: served www1 $a0 -> $(served "$n" www1); misordered +$mis; models dropped $(fast "$n" resync); outside $(svc "$n" "['outside']"); supervisor fds $f0 -> $(fds "$SUP")"
	is "$(grep -c '^ok 5 bad 0' "$R/$n.c")/$(count "$R/$n.c" www1)" 1/5 \
		"$n: behind a client of www2 that reset while queued, www1's 5 are each answered once, in www1"
	is "$(( $(served "$n" www1) - a0 ))/$mis/$(svc "$n" "['outside']")" 6/0/0 \
		"$n: the gate counts www1's 6 served there, none misordered, none outside its decision"
	same_fds() { [ "$(fds "$SUP")" = "$f0" ]; }
	check "$n: the supervisor holds as many descriptors as before ($f0)" wait_until same_fds
	kill "$RUN" 2>/dev/null
	wait "$RUN" 2>/dev/null
	wait_until no_server
done
# --- a listener shut down while two threads wait in accept on it (one in
# the kernel, or both held by the supervisor): each gets the kernel's
# EINVAL, as without the gate (before, a thread held by the supervisor
# waited for good: no readiness comes for a listener that no longer
# listens); and the supervisor lets go of the listener then
cat > "$R/lsrv.py" <<'PY'
# lsrv.py PORT FLAG: two threads accept on a listener, answering
# "cg=PATH req=LINE"; once FLAG exists the main thread shuts the listener
# down, waits for both threads, closes it and sleeps
import os, socket, sys, threading, time
port, flag = int(sys.argv[1]), sys.argv[2]
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", port))
l.listen(64)
print("port %d" % port, flush=True)
def cg():
    # the cpu hierarchy's (v1), else cgroup2's: as tests/gate-where.h
    h = dict(x.strip().split(":", 2)[1:] for x in open("/proc/thread-self/cgroup"))
    return h.get("cpu", h.get("cpu,cpuacct", h.get("")))
def serve():
    while True:
        try:
            c, _ = l.accept()
        except OSError as e:
            print("accept-error %d" % e.errno, flush=True)
            return
        req = c.makefile().readline().strip()
        c.sendall(("cg=%s req=%s\n" % (cg(), req)).encode())
        c.close()
ts = [threading.Thread(target=serve) for i in range(2)]
for t in ts: t.start()
while not os.path.exists(flag):
    time.sleep(0.02)
l.shutdown(socket.SHUT_RDWR)
for t in ts: t.join()
l.close()
print("closed", flush=True)
time.sleep(600)
PY
port_free() { ! ss -Htln "( sport = :$PORT )" | grep -q .; }
for mode in "" exact off; do
	n=shut${mode:-default}
	"$VSCTL" run --home base --name "$n" ${mode:+--fast "$mode"} -- \
		python3 "$R/lsrv.py" "$PORT" "$R/$n.flag" > "$R/$n.log" 2>&1 &
	RUN=$!
	wait_until running "$n" && wait_until quiet "$CLIENT" -p "$PORT" -n 1 ||
		fail "$n: the gated service starts"
	SUP=$(svc "$n" "['supervisor']")
	vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 20 -v > "$R/$n.c"
	is "$(grep -c '^ok 20 bad 0' "$R/$n.c")/$(count "$R/$n.c" www1)" 1/20 \
		"$n: www1's 20 are each answered once, in www1"
	f0=$(fds "$SUP")
	touch "$R/$n.flag"
	both_failed() { [ "$(grep -c '^accept-error 22$' "$R/$n.log")" = 2 ]; }
	check "$n: both threads waiting in accept on the shut listener get EINVAL" wait_until both_failed
	wait_until grep -q '^closed' "$R/$n.log"
	# the gate drops a listener the service no longer has after 5 s
	fewer_fds() { [ "$(fds "$SUP")" -lt "$f0" ]; }
	check "$n: the supervisor lets go of the closed listener ($f0 descriptors before)" \
		wait_until fewer_fds
	kill "$RUN" 2>/dev/null
	wait "$RUN" 2>/dev/null
	wait_until port_free
done
done_testing
