# SPDX-License-Identifier: GPL-2.0-or-later
# Hosts as network namespaces for the remote-gating tests (sourced after
# tests/lib.sh): each host is a netns of this test's, with its own vsd when
# asked; the links are veth pairs made inside the namespaces, the addresses
# from 198.18.0.0/15 (RFC 2544's benchmarking range), which exist only
# there. Nothing is made in this host's own network namespace, and every
# sysctl a test sets is set inside a namespace of its own.
#
#   host_add NAME                 a netns $NAME_NS (lo up), removed on exit
#   link_add A ADDR_A B ADDR_B    a veth pair between hosts A and B, with
#                                 ADDR/24 on each end
#   on NAME CMD...                run CMD in host NAME's network namespace only
#                                 (nsenter --net: `ip netns exec` would mount
#                                 a new /sys and hide the cgroup and bpffs mounts);
#                                 in the background, $! is a subshell: start
#                                 what must be killed by pid with nsenter itself
#   host_vsd NAME [OPTS]          start a vsd in host NAME (cgroup root
#                                 vsd-t<pid>-NAME); sets SOCK_NAME, PID_NAME; stopped and
#                                 cleaned up on exit
#   at NAME vsctl ARGS...         vsctl of host NAME's vsd, in its namespace
#   ads_up NAME LISTEN FROM ADDR  fcgi-demo's ad server under host NAME's
#                                 accept gate (service ads, home VS ads),
#                                 listening on LISTEN; returns once it runs
#                                 and host FROM connects to ADDR:9000
command -v nsenter >/dev/null || skip_all "nsenter is missing (util-linux)"
command -v ip >/dev/null || skip_all "ip is missing (iproute2)"

_links=0
host_add() {
	local ns=vsd-t$$-$1
	ip netns add "$ns" || return 1
	on_exit "ip netns del $ns"
	eval "${1}_NS=$ns"
	on "$1" ip link set lo up
}

on() {
	local h=$1
	shift
	nsenter --net="/run/netns/vsd-t$$-$h" "$@"
}

link_add() {
	local a=vt$$-$_links-a b=vt$$-$_links-b
	_links=$((_links + 1))
	# made in A's namespace, so no device ever exists in ours
	on "$1" ip link add "$a" type veth peer name "$b" netns "vsd-t$$-$3" || return 1
	on "$1" ip addr add "$2/24" dev "$a" && on "$1" ip link set "$a" up &&
	on "$3" ip addr add "$4/24" dev "$b" && on "$3" ip link set "$b" up
}

_launch_in() { exec nsenter --net="/run/netns/$_launch_ns" "$@"; }

host_vsd() {
	local h=$1 pid
	shift
	VSH_ROOT=vsd-t$$-$h
	VSH_DIR=$VSD_TMP/$h
	_launch_ns=vsd-t$$-$h
	VSH_LAUNCH=_launch_in
	vsh_start "$@"
	local r=$?
	pid=$VSH_PID
	VSH_LAUNCH=
	eval "SOCK_$h=$VSD_SOCKET PID_$h=$pid"
	on_exit "VSH_ROOT=vsd-t$$-$h VSH_DIR=$VSD_TMP/$h VSH_PID=$pid; vsh_cleanup"
	if [ $r -ne 0 ]; then
		diag "vsd of host $h did not start:"
		sed 's/^/#   /' "$VSD_TMP/$h/vsd.log"
	fi
	return $r
}

at() {
	local h=$1 sock
	shift
	eval "sock=\$SOCK_$h"
	shift	# "vsctl"
	VSD_SOCKET=$sock on "$h" "$VSCTL" "$@"
}

ads_up() {
	local h=$1 listen=$2 from=$3 addr=$4 sock
	eval "sock=\$SOCK_$h"
	(at "$h" vsctl run --home ads --name ads -- "$ADSERVER" --listen "$listen" \
		--busy-max-ms 2 >"$VSD_TMP/ads-$h.out" 2>&1) &
	on_exit "kill $!; wait $!"
	_ads_ready() { [ "$(VSD_SOCKET=$sock svc ads "['state']")" = running ] &&
		on "$from" python3 -c "import socket; socket.create_connection(('$addr', 9000), 2).close()"; }
	wait_until _ads_ready
}
