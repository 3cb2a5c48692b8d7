#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Remote classification against those who would forge it (vsrules(5)
# REMOTE, vsd(8) SECURITY). Three hosts, each a network namespace of this
# test's: A (198.18.0.1) is a site host with its own vsd, trusted by B's
# remote lines: www1 (DSCP AF11), www2 (AF21) and www0 (no DSCP). B
# (198.18.0.2, 198.18.1.2) runs the shared ad server under the accept gate,
# home VS ads, with "remote dscp af11 from 198.18.0.1 ... => www1". C
# (198.18.1.1) is any other host on B's network. The ad server reports the
# cgroup it served a request in, so each request shows which VS B charged.
#
# As attackers:
#   (a) host C puts www1's DSCP on its SYNs: served in B's home VS;
#   (b) the same DSCP from trusted host A is still www1's;
#   (c) an unprivileged process on B itself, outside every VS, sets
#       IP_TOS=AF11 and connects over loopback and to B's own address:
#       home VS;
#   (d) a process in A's www0 (no DSCP) sets IP_TOS=AF11: its SYN and data
#       leave with TOS 0 (seen on the wire, IPv4 and IPv6), getsockopt says
#       0, and B serves it in its home VS;
#   (e) a process in A's www2 (AF21) sets AF11, or an empty IP_TOS (0 to
#       the kernel): its packets keep AF21, and B charges www2;
#   (f) a remote line without "from" is refused with FILE:LINE:COLUMN and
#       nothing changes.
. "$(dirname "$0")/lib.sh"
need_root
ADSERVER=$top_builddir/fcgi-demo/adserver
[ -x "$ADSERVER" ] || skip_all "fcgi-demo/adserver is not built (no FastCGI devkit: scripts/deps.sh --test)"
PROBE=$top_builddir/tests/net-probe
command -v setpriv >/dev/null || skip_all "setpriv is missing (util-linux)"
[ -x /usr/bin/python3 ] || skip_all "/usr/bin/python3 is missing (the unprivileged client runs it)"
. "$top_srcdir/tests/remote-lib.sh"
VSD_TMP=$(mktemp -d /tmp/vsd-test.XXXXXX)
chmod 755 "$VSD_TMP"
rules_dir
# the client, readable by the unprivileged attacker of (c)
cp "$top_srcdir/tests/fcgi-get.py" "$VSD_TMP/fcgi-get.py" && chmod 0755 "$VSD_TMP/fcgi-get.py"
AF11=0x28 AF21=0x48

host_add a && host_add b && host_add c &&
	link_add a 198.18.0.1 b 198.18.0.2 && link_add c 198.18.1.1 b 198.18.1.2 ||
	{ fail "three hosts, A and C each joined to B"; done_testing; }
host_vsd a || { fail "vsd starts in host A"; done_testing; }
host_vsd b || { fail "vsd starts in host B"; done_testing; }
on b sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_fwmark_accept'
TABLE="inet vsd-t$$-b"

w sites.rules <<'R'
vs www0 cpu 10%
vs www1 cpu 30% dscp af11
vs www2 cpu 30% dscp af21
R
w shared.rules <<'R'
vs ads cpu 10%
vs www1 cpu 40%
vs www2 cpu 40%
remote dscp af11 from 198.18.0.1 2001:db8:5::1 => www1
remote dscp af21 from 198.18.0.1/32 => www2
R
check "host A: apply the sites" at a vsctl apply "$R/sites.rules"

# (f) first, on a B that has nothing yet
w nofrom.rules <<'R'
vs ads cpu 10%
vs www1 cpu 40%
remote dscp af11 => www1
R
out=$(at b vsctl apply "$R/nofrom.rules" 2>&1)
is "$?" 7 "(f) a remote line without 'from' is refused (exit 7)"
like "$out" "nofrom.rules:3:18: expected 'from PREFIX\.\.\.' after remote dscp 10" \
	"(f) and the error names FILE:LINE:COLUMN and what is missing"
is "$(at b vsctl list --json)" "[]" "(f) and no VS was made"
if on b nft list table $TABLE >/dev/null 2>&1; then fail "(f) and no table"; else ok "(f) and no table"; fi

check "host B: apply the shared service's rules" at b vsctl apply "$R/shared.rules"
nft=$(on b nft list table $TABLE 2>&1)
like "$nft" "ip saddr 198\.18\.0\.1 ip dscp af11 meta mark set 0x76" \
	"host B: the AF11 rule matches only SYNs from host A (IPv4)"
like "$nft" "ip6 saddr 2001:db8:5::1 ip6 dscp af11 meta mark set 0x76" "and the IPv6 source named"
like "$nft" "ip saddr 198\.18\.0\.1 ip dscp af21 meta mark set 0x76" "the AF21 rule too"
if printf '%s\n' "$nft" | grep 'dscp' | grep -qv 'saddr'; then
	fail "no rule marks a DSCP from any source"
else
	ok "no rule marks a DSCP from any source"
fi

# (f) again, once B has rules in force: they stay as they were
before=$(at b vsctl list --json; on b nft list table $TABLE)
out=$(at b vsctl apply "$R/nofrom.rules" 2>&1)
is "$?" 7 "(f) refused again while rules are in force"
is "$(at b vsctl list --json; on b nft list table $TABLE)" "$before" \
	"(f) and the VSs and vsd's table are unchanged"

# the ad server in B, under the gate, on every address (loopback too)
# not in check's $(...): its cleanup must be registered in this shell
if ads_up b 0.0.0.0:9000 a 198.18.0.2; then ok "host B: the ad server runs under the gate"
else fail "host B: the ad server runs under the gate"; fi

served_in() {	# served_in OUTPUT: B's cgroup the request ran in
	printf '%s\n' "$1" | sed -n 's/^X-VS-Cgroup: *//p' | tr -d '\r'
}
get() {	# get HOST [--vs VS] [--user] TOS ADDR: one request; prints B's cgroup
	local h=$1 pre=() py=python3
	shift
	case $1 in
	--vs) pre=(at "$h" vsctl exec "$2" --); shift 2 ;;
	# the system's python: a python3 in root's PATH may be root's own
	--user) pre=(on "$h" setpriv --reuid=65534 --regid=65534 --clear-groups)
		py=/usr/bin/python3; shift ;;
	*) pre=(on "$h") ;;
	esac
	served_in "$("${pre[@]}" "$py" "$VSD_TMP/fcgi-get.py" --tos "$1" "$2" 9000)"
}
HOME_VS="/vsd-t$$-b/ads\$"

# (b) the trusted host: its VSs, and the DSCP alone from it
like "$(get a --vs www1 0 198.18.0.2)" "/vsd-t$$-b/www1\$" "(b) a request from A's www1 runs in B's www1"
like "$(get a --vs www2 0 198.18.0.2)" "/vsd-t$$-b/www2\$" "(b) and from A's www2 in B's www2"
like "$(get a $AF11 198.18.0.2)" "/vsd-t$$-b/www1\$" \
	"(b) AF11 from host A is www1's, whoever set it there (A is trusted whole)"

# (a) another host sets the trusted DSCPs itself
like "$(get c $AF11 198.18.1.2)" "$HOME_VS" "(a) AF11 from host C (not trusted) runs in B's home VS"
like "$(get c $AF21 198.18.1.2)" "$HOME_VS" "(a) AF21 from host C runs in B's home VS"

# (c) B itself: a user outside every VS sets the DSCP, over loopback and
# to B's own address
like "$(get b --user $AF11 127.0.0.1)" "$HOME_VS" \
	"(c) an unprivileged process on B outside every VS, AF11 to 127.0.0.1: home VS"
like "$(get b --user $AF11 198.18.0.2)" "$HOME_VS" \
	"(c) the same to B's own address 198.18.0.2: home VS"

# (d) a tenant in a VS without a DSCP sets another VS's
like "$(get a --vs www0 $AF11 198.18.0.2)" "$HOME_VS" \
	"(d) AF11 set by a process in A's www0 (no DSCP): B's home VS, not www1"
# on the wire, on A's loopback: IPv4 TOS and IPv6 traffic class
serve_probe() {	# serve_probe ADDR: a net-probe echo server on A; sets port
	local f=$VSD_TMP/serve-$1
	# nsenter itself, so $! is the server (remote-lib.sh)
	nsenter --net="/run/netns/$a_NS" "$PROBE" serve "$1" 0 >"$f" 2>&1 &
	on_exit "kill $!; wait $!"
	wait_until grep -q '^ready' "$f"
	port=$(sed -n 's/^ready //p' "$f")
}
probe() {	# probe VS TOS ADDR PORT: net-probe tcp in VS on A, setting TOS itself
	at a vsctl exec "$1" -- env NET_PROBE_TOS="$2" "$PROBE" tcp "$3" "$4" 2>&1
}
serve_probe 127.0.0.1; p4=$port
serve_probe ::1; p6=$port
out=$(probe www0 $AF11 127.0.0.1 "$p4")
like "$out" "syn_tos=0$" "(d) www0's IPv4 SYN leaves with TOS 0 although it set AF11"
like "$out" "data_tos=0$" "(d) and its data, after a setsockopt(IP_TOS) on the connected socket"
like "$out" "tos_get=0$" "(d) and getsockopt(IP_TOS) says 0"
out=$(probe www0 $AF11 ::1 "$p6")
like "$out" "syn_tos=0$" "(d) www0's IPv6 SYN leaves with traffic class 0"
like "$out" "data_tos=0$" "(d) and its data, after a setsockopt(IPV6_TCLASS)"

# (e) a tenant with a DSCP sets another one
like "$(get a --vs www2 $AF11 198.18.0.2)" "/vsd-t$$-b/www2\$" \
	"(e) AF11 set by a process in A's www2 (AF21): still B's www2"
out=$(probe www2 $AF11 127.0.0.1 "$p4")
like "$out" "syn_tos=72$" "(e) www2's SYN carries AF21 (0x48)"
like "$out" "data_tos=72$" "(e) and its data after the setsockopt on the connected socket"
like "$out" "tos_get=72$" "(e) and getsockopt(IP_TOS) says 0x48"
out=$(probe www2 $AF11 ::1 "$p6")
like "$out" "data_tos=72$" "(e) the same for IPv6's traffic class"
# an empty value is TOS 0 to the kernel: a VS that could drop its DSCP
# would be served in the remote service's home VS instead of its own
out=$(probe www2 empty 127.0.0.1 "$p4")
like "$out" "data_tos=72$" "(e) setsockopt(IP_TOS) with an empty value leaves AF21 too"

# the setsockopt hook is one more pinned link per VS, and goes with it
pins() { ls -d /sys/fs/bpf/vsd/vsd-t$$-a/vs*/setsockopt 2>/dev/null | wc -l; }
is "$(pins)" 3 "host A: a pinned setsockopt link per VS"
check "host A: destroy www0" at a vsctl destroy www0
is "$(pins)" 2 "and its link is gone with it"
done_testing
