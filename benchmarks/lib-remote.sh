# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# benchmarks/insulation --remote: Figure 12 across two hosts.
#
# Host A, the sites, and host B, the FastCGI server(s), are network
# namespaces this run makes and removes, joined by a veth pair with
# 198.18.0.1 (A) and 198.18.0.2 (B) (RFC 2544's benchmarking range, only
# inside them). The whole benchmark re-runs itself inside A, so its
# loopback, Apache, the load generator and A's vsd work as on one host;
# host B has a vsd of its own (cgroup root vsd-bench-PID-b, inside the
# benchmark's cgroup), whose rule file maps A's DSCPs to B's www1 and www2
# (vsrules(5) REMOTE) and sets net.ipv4.tcp_fwmark_accept in B only.
# Both hosts share this machine's CPUs: what differs from one host is the
# network path (veth, a second network stack, nftables, a second vsd) and
# the classification by mark, not the CPU; the sites and the FastCGI
# servers share the last CPU as on one host (bench_pin).
#
#   remote_enter "$@"     in the parent: make A and B, run "$0" "$@" in A,
#                         remove both; exits with the run's status
#   remote_setup          in A: B's vsd and VSs (www1 www2 fcgi), A's DSCPs
#   remote_mode_start M   start mode M's FastCGI server(s) on B; sets FA FB
#   remote_mode_stop      stop them
#   remote_hop            the hop's own latency: FastCGI requests with no
#                         work, from A over the veth and from B over its
#                         loopback, in turn; prints the medians and p99s
REMOTE_A=198.18.0.1 REMOTE_B=198.18.0.2

remote_ns() { echo "vsd-bench-$REMOTE_ID-$1"; }

remote_enter() {
	local a b st
	REMOTE_ID=$$
	a=$(remote_ns a) b=$(remote_ns b)
	ip netns add "$a" && ip netns add "$b" || { echo "insulation: cannot make the hosts" >&2; exit 1; }
	trap 'ip netns del '"$a"' 2>/dev/null; ip netns del '"$b"' 2>/dev/null' EXIT
	trap 'exit 130' INT TERM
	nsenter --net="/run/netns/$a" sh -e -c "
		ip link set lo up
		ip link add veth-a type veth peer name veth-b netns $b
		ip addr add $REMOTE_A/24 dev veth-a
		ip link set veth-a up" &&
	nsenter --net="/run/netns/$b" sh -e -c "
		ip link set lo up
		ip addr add $REMOTE_B/24 dev veth-b
		ip link set veth-b up
		echo 1 > /proc/sys/net/ipv4/tcp_fwmark_accept" ||
		{ echo "insulation: cannot link the hosts" >&2; exit 1; }
	REMOTE_INNER=$REMOTE_ID nsenter --net="/run/netns/$a" "$0" "$@"
	st=$?
	exit $st
}


# For B's vsd: into our cgroup (bench_move), into B's network namespace.
_remote_exec_b() {
	bench_move ""
	exec nsenter --net="/run/netns/$(remote_ns b)" "$@"
}

remote_setup() {
	local dir=$BENCH_RUN/b i
	REMOTE_ID=$REMOTE_INNER
	mkdir -p "$dir"
	REMOTE_SOCK=$dir/vsd.sock
	( _remote_exec_b "$VSD" --foreground --socket "$REMOTE_SOCK" --state-dir "$dir/state" \
		--cgroup-root "$BENCH_CG-b" ) >>"$dir/vsd.log" 2>&1 &
	REMOTE_VSD_PID=$!
	for i in $(seq 100); do
		VSD_SOCKET=$REMOTE_SOCK "$VSCTL" list >/dev/null 2>&1 && break
		sleep 0.1
	done
	# the sites' marks on A: www1 AF11, www2 AF21
	"$VSCTL" set www1 --dscp AF11 >&2 && "$VSCTL" set www2 --dscp AF21 >&2 ||
		bench_die "remote: cannot set the sites' DSCPs"
	remote_rules "$dir/b.rules"
	VSD_SOCKET=$REMOTE_SOCK "$VSCTL" apply "$dir/b.rules" >&2 ||
		bench_die "remote: host B's vsd refused its rule file: $(tail -3 "$dir/vsd.log")"
}

# B's rule file: its VSs as on one host, the paper's rules, the remote lines
remote_rules() {
	{
		echo "vs www1 cpu 45%"
		echo "vs www2 cpu 45%"
		echo "vs fcgi cpu 5%"
		echo "remote dscp af11 from $REMOTE_A => www1"
		echo "remote dscp af21 from $REMOTE_A => www2"
		echo "(accept, www[1|2], req = www[2|1]) => (www[2|1])"
		echo "(accept, *, req = *) => (requester)"
	} >"$1"
	chmod 0644 "$1"
}

# remote_spawn NAME VS CMD...: CMD on B in B's VS ("" = outside every VS:
# our outside cgroup), pinned with the sites; remembered for cleanup.
remote_spawn() {
	local name=$1 vs=$2 pin=()
	shift 2
	[ -n "$BENCH_SITE_CPUS" ] && pin=(taskset -c "$BENCH_SITE_CPUS")
	if [ -n "$vs" ]; then
		( VSD_SOCKET=$REMOTE_SOCK exec nsenter --net="/run/netns/$(remote_ns b)" \
			"$VSCTL" exec "$vs" -- "${pin[@]}" "$@" ) >>"$BENCH_RUN/$name.log" 2>&1 &
	else
		( bench_move outside
		  exec nsenter --net="/run/netns/$(remote_ns b)" "${pin[@]}" "$@" ) \
			>>"$BENCH_RUN/$name.log" 2>&1 &
	fi
	BENCH_PIDS+=($!)
	eval "REMOTE_PID_$name=$!"
}

remote_mode_start() {
	case $1 in
	insulation-only)
		remote_spawn fcgi "" "$ADSERVER" --listen "0.0.0.0:$PORT_F" --busy-max-ms "$BUSY"
		BENCH_OUTSIDE_PIDS=$REMOTE_PID_fcgi
		FA=$REMOTE_B:$PORT_F FB=$REMOTE_B:$PORT_F ;;
	gate)
		remote_spawn fcgi "" env VSD_SOCKET="$REMOTE_SOCK" "$VSCTL" run --home fcgi \
			--name fcgi -- "$ADSERVER" --listen "0.0.0.0:$PORT_F" --busy-max-ms "$BUSY"
		FA=$REMOTE_B:$PORT_F FB=$REMOTE_B:$PORT_F ;;
	replicated)
		remote_spawn fcgi1 www1 "$ADSERVER" --listen "0.0.0.0:$PORT_F1" --busy-max-ms "$BUSY"
		remote_spawn fcgi2 www2 "$ADSERVER" --listen "0.0.0.0:$PORT_F2" --busy-max-ms "$BUSY"
		FA=$REMOTE_B:$PORT_F1 FB=$REMOTE_B:$PORT_F2 ;;
	esac
	bench_wait_port "${FA##*:}" "$REMOTE_B" 60 && bench_wait_port "${FB##*:}" "$REMOTE_B" 60 ||
		{ bench_log "$1: the FastCGI server on host B does not answer"; return 1; }
}

remote_mode_stop() {
	local n v
	for n in fcgi fcgi1 fcgi2; do
		v=REMOTE_PID_$n
		[ -n "${!v:-}" ] && bench_stop "${!v}"
		eval "REMOTE_PID_$n="
	done
}

remote_cleanup() {
	[ -n "${REMOTE_VSD_PID:-}" ] || return 0
	remote_mode_stop
	for vs in www1 www2 fcgi; do
		VSD_SOCKET=$REMOTE_SOCK "$VSCTL" destroy "$vs" --force >/dev/null 2>&1
	done
	kill -TERM "$REMOTE_VSD_PID" 2>/dev/null
	wait "$REMOTE_VSD_PID" 2>/dev/null
	REMOTE_VSD_PID=
	# whatever B's instance left (cgroups, pins): the harness removes it
	( VSH_ROOT=$BENCH_CG-b VSH_DIR=$BENCH_RUN/b VSH_PID= ; vsh_cleanup )
}

# The hop alone: N FastCGI requests that burn no CPU, one at a time, to an
# ad server on B, from A (veth, B's nftables, the mark) and from B itself
# (loopback), alternating in rounds of 50 so both see the same machine.
# Single-threaded Python clients: what they add is in both figures alike.
# The ad server is outside every VS on B (no gate): the hop, not the gate.
remote_hop() {
	local log=$BENCH_RUN/hop.log port=$((PORT_F + 10))
	remote_spawn hop "" "$ADSERVER" --listen "0.0.0.0:$port" --busy-max-ms 0
	bench_wait_port "$port" "$REMOTE_B" 60 || { bench_log "hop: the ad server on B does not answer"; return 1; }
	local py='
import socket, struct, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def rec(kind, body):
    return struct.pack("!BBHHBx", 1, kind, 1, len(body), 0) + body
msg = (rec(1, struct.pack("!HB5x", 1, 0)) + rec(4, b"") + rec(5, b""))
for i in range(n):
    t = time.perf_counter()
    s = socket.create_connection((host, port), 5)
    s.sendall(msg)
    while s.recv(65536):
        pass
    s.close()
    print("%.1f" % ((time.perf_counter() - t) * 1e6))
'
	# Both clients alike: in A's www1 (so the SYN carries AF11 and B's
	# table marks it, on lo too), on the load generator's CPU; they differ
	# only in the path: A's stack and the veth, or B's loopback.
	local pin=()
	[ -n "$BENCH_LG_CPUS" ] && pin=(taskset -c "$BENCH_LG_CPUS")
	for r in 1 2 3 4 5 6; do
		"$VSCTL" exec www1 -- "${pin[@]}" python3 -c "$py" "$REMOTE_B" "$port" 50 |
			sed 's/^/veth /' >>"$log"
		"$VSCTL" exec www1 -- nsenter --net="/run/netns/$(remote_ns b)" "${pin[@]}" \
			python3 -c "$py" 127.0.0.1 "$port" 50 | sed 's/^/lo /' >>"$log"
	done
	bench_stop "$REMOTE_PID_hop"
	awk '{ v[$1, ++n[$1]] = $2 }
	function q(k, p,   i, j, t, a, c) { c = n[k]
		for (i = 1; i <= c; i++) a[i] = v[k, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((c - 1) * p) + 1] }
	END {
		printf "The hop (one FastCGI request with no work, connect to answer, %d each):\n", n["lo"]
		printf "  B to B over loopback:  median %7.1f us  p99 %7.1f us\n", q("lo", 0.5), q("lo", 0.99)
		printf "  A to B over the veth:  median %7.1f us  p99 %7.1f us\n", q("veth", 0.5), q("veth", 0.99)
		printf "  extra latency of the hop: median %+.1f us  (ratio %.2f)\n", q("veth", 0.5) - q("lo", 0.5), q("veth", 0.5) / q("lo", 0.5)
	}' "$log"
}
