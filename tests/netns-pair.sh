# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced (POSIX sh) by tests/net-share.sh and benchmarks/netshare: two hosts
# as network namespaces, a veth pair between them and iperf3, all made and
# removed by the caller. The addresses are of the benchmarking range
# 198.18.0.0/24 and exist only inside the two namespaces.
#   pair_make A B      namespaces A (198.18.0.1, nbw0) and B (198.18.0.2, nbw1)
#   pair_del A B       remove them (the veth pair goes with them)
#   inA/inB CMD...     run CMD with only the network namespace changed:
#                      `ip netns exec` would mount a fresh /sys and hide
#                      /sys/fs/cgroup, which vsd and vsctl exec need
#   pair_servers PORT...   an iperf3 server in B per port; their pids in
#                      PAIR_SRV; returns once all listen (ss, not a
#                      connection: an iperf3 server takes one client at a time)
#   pair_mbit PORT SECONDS LAUNCHER...  what B received, Mbit/s, from
#                      iperf3 -P 2 run by LAUNCHER (inA, or a vsctl exec VS --)

pair_make() {
	PAIR_A=$1 PAIR_B=$2
	ip netns add "$1" && ip netns add "$2" &&
		ip link add nbw0 netns "$1" type veth peer name nbw1 netns "$2" &&
		ip -n "$1" addr add 198.18.0.1/24 dev nbw0 &&
		ip -n "$2" addr add 198.18.0.2/24 dev nbw1 &&
		ip -n "$1" link set lo up && ip -n "$2" link set lo up &&
		ip -n "$1" link set nbw0 up && ip -n "$2" link set nbw1 up
}

pair_del() {
	for _p in ${PAIR_SRV:-}; do kill "$_p" 2>/dev/null; done
	ip netns del "$1" 2>/dev/null
	ip netns del "$2" 2>/dev/null
}

inA() { nsenter --net="/run/netns/$PAIR_A" "$@"; }
inB() { nsenter --net="/run/netns/$PAIR_B" "$@"; }

pair_servers() {
	_want=0
	_filter=
	for _port in "$@"; do
		# not through inB: $! must be iperf3 itself (nsenter execs it), or
		# pair_del would kill a subshell and leave the server running
		nsenter --net="/run/netns/$PAIR_B" iperf3 -s -p "$_port" -B 198.18.0.2 \
			>/dev/null 2>&1 &
		PAIR_SRV="${PAIR_SRV:-} $!"
		_want=$((_want + 1))
		_filter="${_filter:+$_filter or }sport = :$_port"
	done
	_i=0
	until [ "$(inB ss -Hltn "$_filter" | wc -l)" = "$_want" ]; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || return 1
		sleep 0.05
	done
}

pair_mbit() {
	_port=$1 _secs=$2
	shift 2
	"$@" iperf3 -c 198.18.0.2 -p "$_port" -t "$_secs" -O 1 -P 2 -J | python3 -c 'import json, sys
print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e6))'
}
