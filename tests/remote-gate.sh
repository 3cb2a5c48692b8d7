#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Remote gating (vsrules(5) REMOTE): two hosts, each a
# network namespace of this test's with its own vsd, joined by a veth pair.
# Host A (198.18.0.1) runs the sites' VSs www1 (DSCP AF11) and www2 (AF21),
# and www3 (AF31), which host B does not know. Host B (198.18.0.2) runs the
# shared ad server (fcgi-demo/adserver) under the accept gate, home VS ads,
# with "remote dscp af11 from 198.18.0.1 => www1" and the same for af21 and
# www2: requests
# from A's www1 must run in B's www1, from www2 in B's www2, and from www3
# or from outside every VS in B's home VS. Also: the remote lines are
# refused, with the reason and nothing changed, while tcp_fwmark_accept is
# 0 in B's namespace; the table vsd owns is there while the lines are and
# gone once a file without them is applied.
. "$(dirname "$0")/lib.sh"
need_root
ADSERVER=$top_builddir/fcgi-demo/adserver
[ -x "$ADSERVER" ] || skip_all "fcgi-demo/adserver is not built (no FastCGI devkit: scripts/deps.sh --test)"
. "$top_srcdir/tests/remote-lib.sh"
VSD_TMP=$(mktemp -d /tmp/vsd-test.XXXXXX)
rules_dir

host_add a && host_add b && link_add a 198.18.0.1 b 198.18.0.2 ||
	{ fail "two hosts joined by a veth pair"; done_testing; }
# a refused connection is an answer from B: the link works
check "host A reaches host B" on a python3 -c '
import socket
try:
    socket.create_connection(("198.18.0.2", 1), 5)
except ConnectionRefusedError:
    pass' 
host_vsd a || { fail "vsd starts in host A"; done_testing; }
host_vsd b || { fail "vsd starts in host B"; done_testing; }
TABLE="inet vsd-t$$-b"

w sites.rules <<'R'
vs www1 cpu 30% dscp af11
vs www2 cpu 30% dscp af21
vs www3 cpu 10% dscp af31
R
w shared.rules <<'R'
vs ads cpu 10%
vs www1 cpu 40%
vs www2 cpu 40%
remote dscp af11 from 198.18.0.1 => www1
remote dscp af21 from 198.18.0.1 => www2
R
check "host A: apply the sites" at a vsctl apply "$R/sites.rules"

# without tcp_fwmark_accept the accepted socket would not carry the mark:
# refused, nothing made
on b sh -c 'echo 0 > /proc/sys/net/ipv4/tcp_fwmark_accept'
out=$(at b vsctl apply "$R/shared.rules" 2>&1)
is "$?" 6 "host B: remote lines are refused while tcp_fwmark_accept is 0 (exit 6, refused)"
like "$out" "tcp_fwmark_accept = 1" "and the error says what to set"
is "$(at b vsctl list --json)" "[]" "and no VS was made"
if on b nft list table $TABLE >/dev/null 2>&1; then fail "and no table"; else ok "and no table"; fi

# only inside B's namespace (never this host's own)
on b sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_fwmark_accept'
check "host B: apply the shared service's rules" at b vsctl apply "$R/shared.rules"
nft=$(on b nft list table $TABLE 2>&1)
like "$nft" "ip saddr 198.18.0.1 ip dscp af11 meta mark set 0x76" \
	"host B: vsd's table marks AF11 SYNs from host A (IPv4)"
if printf '%s' "$nft" | grep -q ip6; then fail "and no IPv6 rule: the lines trust no IPv6 source"
else ok "and no IPv6 rule: the lines trust no IPv6 source"; fi

# the ad server in B, under the gate, started in B's namespace
# not in check's $(...): its cleanup must be registered in this shell
if ads_up b 198.18.0.2:9000 a 198.18.0.2; then ok "host B: the ad server runs under the gate"
else fail "host B: the ad server runs under the gate"; fi

get() {	# get VS: one FastCGI request from VS (or "none") on A; prints B's cgroup
	local out
	if [ "$1" = none ]; then
		out=$(on a python3 "$top_srcdir/tests/fcgi-get.py" 198.18.0.2 9000)
	else
		out=$(at a vsctl exec "$1" -- python3 "$top_srcdir/tests/fcgi-get.py" 198.18.0.2 9000)
	fi
	printf '%s\n' "$out" | sed -n 's/^X-VS-Cgroup: *//p' | tr -d '\r'
}
for i in 1 2 3; do
	for vs in www1 www2; do
		like "$(get $vs)" "/vsd-t$$-b/$vs\$" "request $i from A's $vs runs in B's $vs"
	done
done
like "$(get www3)" "/vsd-t$$-b/ads\$" "A's www3 (AF31, no remote line in B) runs in B's home VS"
like "$(get none)" "/vsd-t$$-b/ads\$" "a process in no VS on A (no DSCP) runs in B's home VS"
served=$(VSD_SOCKET=$SOCK_b svc ads "['vs']" |
	json '",".join("%s=%d" % (v["name"], v["served"]) for v in sorted(d, key=lambda v: v["name"]) if v["served"])')
# ads also served the readiness probes of up(): at least the 2 requests
like "$served" "^ads=([2-9]|[1-9][0-9]+),www1=3,www2=3\$" "host B's gate counts them per VS"

# vsd restarted: the table is written again, the gate keeps classifying
on b nft delete table $TABLE
kill "$PID_b"
wait "$PID_b"
host_vsd b || fail "vsd starts again in host B"
check "host B: a restarted vsd writes the table again" on b nft list table $TABLE
like "$(get www2)" "/vsd-t$$-b/www2\$" "and a request from A's www2 still runs in B's www2"

# a file without remote lines removes the table
w plain.rules <<'R'
vs ads cpu 10%
vs www1 cpu 40%
vs www2 cpu 40%
R
check "host B: apply a file without remote lines" at b vsctl apply "$R/plain.rules"
if on b nft list table $TABLE >/dev/null 2>&1; then
	fail "and vsd's table is gone"
else
	ok "and vsd's table is gone"
fi
like "$(get www1)" "/vsd-t$$-b/ads\$" "then a request from A's www1 runs in B's home VS"
done_testing
