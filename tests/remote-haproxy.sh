#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scale-out in one test (docs/scale-out.md): Debian's
# HAProxy in front of two site hosts and one shared-service host, each a
# network namespace of this test's. Every host but the balancer runs its
# own vsd from the SAME rule file (sites www1 and www2 with their DSCPs,
# the shared service's home VS, the remote lines).
#
#   client, HAProxy (lb) --198.18.1.0/24--> s1: Apache in www1 (AF11) --198.18.3.0/24--+
#                        --198.18.2.0/24--> s2: Apache in www2 (AF21) --198.18.4.0/24--+-> svc:
#                                                 the ad server under the accept gate, home ads
#
# HAProxy routes each site to its host by the Host header (hop 1); the
# site's Apache (mod_proxy_fcgi) asks the shared host's ad server, and its
# socket gate puts the site's DSCP on the connection (hop 2); the shared
# host's remote lines map the DSCP to the site's VS. A request for site1
# must be served in svc's www1, for site2 in svc's www2: the identity
# survives both hops. The ad server reports its cgroup (X-VS-Cgroup), which
# Apache and HAProxy pass back to the client.
. "$(dirname "$0")/lib.sh"
need_root
ADSERVER=$top_builddir/fcgi-demo/adserver
[ -x "$ADSERVER" ] || skip_all "fcgi-demo/adserver is not built (no FastCGI devkit: scripts/deps.sh --test)"
APACHE=$(command -v apache2 || echo /usr/sbin/apache2)
[ -x "$APACHE" ] || skip_all "apache2 is not installed (scripts/deps.sh --test installs it)"
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[ -x "$HAPROXY" ] || skip_all "haproxy is not installed (scripts/deps.sh --test installs it)"
. "$top_srcdir/tests/remote-lib.sh"
VSD_TMP=$(mktemp -d /tmp/vsd-test.XXXXXX)
chmod 755 "$VSD_TMP"
rules_dir

for h in lb s1 s2 svc; do host_add $h || { fail "host $h"; done_testing; }; done
link_add lb 198.18.1.1 s1 198.18.1.2 && link_add lb 198.18.2.1 s2 198.18.2.2 &&
link_add s1 198.18.3.1 svc 198.18.3.2 && link_add s2 198.18.4.1 svc 198.18.4.2 ||
	{ fail "the links"; done_testing; }
ok "four hosts: a balancer, two site hosts, a shared-service host"

# one rule file for every vsd; tcp_fwmark_accept in our namespaces only
w hosting.rules <<'R'
vs ads cpu 10%
vs www1 cpu 40% dscp af11
vs www2 cpu 40% dscp af21
remote dscp af11 from 198.18.3.1 => www1
remote dscp af21 from 198.18.4.1 => www2
R
for h in s1 s2 svc; do
	on $h sh -c 'echo 1 > /proc/sys/net/ipv4/tcp_fwmark_accept'
	host_vsd $h || { fail "vsd starts in host $h"; done_testing; }
	check "host $h: apply the one rule file" at $h vsctl apply "$R/hosting.rules"
done

# the shared host: the ad server under the gate, on every address
(at svc vsctl run --home ads --name ads -- "$ADSERVER" --listen 0.0.0.0:9000 \
	--busy-max-ms 2 >"$VSD_TMP/ads.out" 2>&1) &
on_exit "kill $!; wait $!"
fcgi_up() { on "$1" python3 -c "import socket; socket.create_connection(('$2', 9000), 2).close()"; }
check "host svc: the ad server runs under the gate" wait_until fcgi_up s1 198.18.3.2

# the site hosts: Debian's Apache in the site's VS, /ad from the shared host
mkdir -p "$VSD_TMP/docroot" && echo ok >"$VSD_TMP/docroot/index.html"
chmod -R a+rX "$VSD_TMP/docroot"
user=www-data group=www-data
id $user >/dev/null 2>&1 || user=nobody group=nogroup
site() {	# site HOST VS ADDR FCGI
	local dir=$VSD_TMP/$1-apache
	mkdir -p "$dir" && chmod 755 "$dir"
	sed -e "s|@NAME@|$2|g" -e "s|@RUNDIR@|$dir|g" -e "s|@DOCROOT@|$VSD_TMP/docroot|g" \
	    -e "s|@MODDIR@|/usr/lib/apache2/modules|g" -e "s|@USER@|$user|g" \
	    -e "s|@GROUP@|$group|g" -e "s|@FCGI@|$4:9000|g" -e "s|@MPM@|event|g" \
	    -e "s|^Listen .*|Listen $3:8080|" \
	    -e "s|StartServers 2|StartServers 1|; s|ThreadsPerChild 64|ThreadsPerChild 8|" \
	    "$top_srcdir/benchmarks/site.conf.in" >"$dir/httpd.conf"
	(at "$1" vsctl exec "$2" -- "$APACHE" -f "$dir/httpd.conf" -DFOREGROUND \
		>"$dir/stderr.log" 2>&1) &
	on_exit "kill $!; wait $!"
}
site s1 www1 198.18.1.2 198.18.3.2
site s2 www2 198.18.2.2 198.18.4.2
http_up() { on lb python3 -c "import socket; socket.create_connection(('$1', 8080), 2).close()"; }
check "host s1: Apache listens" wait_until http_up 198.18.1.2
check "host s2: Apache listens" wait_until http_up 198.18.2.2

# the balancer: Debian's HAProxy, sites routed to hosts by the Host header
cat >"$VSD_TMP/haproxy.cfg" <<CFG
global
	pidfile $VSD_TMP/haproxy.pid
defaults
	mode http
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend web
	bind 127.0.0.1:8080
	use_backend site1 if { req.hdr(host),field(1,:) -i site1.example }
	use_backend site2 if { req.hdr(host),field(1,:) -i site2.example }
backend site1
	server s1 198.18.1.2:8080
backend site2
	server s2 198.18.2.2:8080
CFG
check "haproxy accepts the configuration" on lb "$HAPROXY" -c -f "$VSD_TMP/haproxy.cfg"
# nsenter itself, not the function: $! must be HAProxy (nsenter execs it)
nsenter --net="/run/netns/vsd-t$$-lb" "$HAPROXY" -db -f "$VSD_TMP/haproxy.cfg" \
	>"$VSD_TMP/haproxy.log" 2>&1 &
on_exit "kill $!; wait $!"
lb_up() { on lb python3 -c "import socket; socket.create_connection(('127.0.0.1', 8080), 2).close()"; }
check "host lb: HAProxy listens" wait_until lb_up

get() {	# get SITE PATH: the client's request through HAProxy; "STATUS CGROUP"
	on lb python3 - "$1" "$2" <<'PY'
import http.client, sys
c = http.client.HTTPConnection("127.0.0.1", 8080, timeout=20)
c.request("GET", sys.argv[2], headers={"Host": sys.argv[1]})
r = c.getresponse()
r.read()
print(r.status, r.getheader("X-VS-Cgroup", "-"))
PY
}
is "$(get site1.example /index.html)" "200 -" "a static page of site1 through HAProxy"
for i in 1 2 3; do
	like "$(get site1.example /ad)" "^200 .*/vsd-t$$-svc/www1\$" \
		"request $i for site1: HAProxy -> s1's www1 -> svc's www1"
	like "$(get site2.example /ad)" "^200 .*/vsd-t$$-svc/www2\$" \
		"request $i for site2: HAProxy -> s2's www2 -> svc's www2"
done
served=$(VSD_SOCKET=$SOCK_svc svc ads "['vs']" |
	json '",".join("%s=%d" % (v["name"], v["served"]) for v in sorted(d, key=lambda v: v["name"]) if v["served"] and v["name"] != "ads")')
is "$served" "www1=3,www2=3" "host svc's gate counts three requests for each site"
# the sites' work on their own hosts stays in their VSs too
like "$(at s1 vsctl show www1 --json | json 'len(d["procs"])')" "^[1-9]" \
	"host s1: Apache's processes are in www1"
done_testing
