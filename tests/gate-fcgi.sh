#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Classification by request content: ONE Apache
# (Debian's apache2, mpm_event, unmodified) with two name-based vhosts in VS
# front, ONE PHP-FPM pool (Debian's own pool config, changed only in its
# listen address and pool size) under the accept gate with home VS php, and
# the rule file's sites: each vhost's PHP runs in that vhost's VS, although
# every request comes from the same front end. The PHP script prints
# /proc/thread-self/cgroup. Then a FastCGI client that connects and sends
# nothing: the requests behind it are served while it waits, and it is
# served from home once the bound has passed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fcgi-lib.sh"
need_root
need_apache
need_fpm

rules_dir
RUN=$R/run
mkdir -p "$RUN/a" "$RUN/b" "$RUN/front" && chmod -R 0755 "$RUN"
PORT=$(test_port)
BOUND_MS=10000	# the most a rule file may say: room for a slow VM (TCG)

vsd_start || { fail "vsd starts"; done_testing; }

# --- Debian's pool, but for its socket path and pool size
SOCK=$RUN/php8.2-fpm.sock
fpm_conf "$RUN" "$SOCK"
cg_script "$RUN/a" "$RUN/b"
chmod -R a+rX "$RUN"

# --- the sites: a.example by its host name, b.example by its document root;
# the pool a declared service of the file, with a long bound for the test
w sites.rules <<E
vs php cpu 10%
vs front cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service fpm home php attrs-timeout ${BOUND_MS}ms command "$PHP_FPM -F -y $RUN/fpm.conf"
site a.example vs www1
(accept, *, docroot = "$RUN/b") => (www2)
E
out=$(vsctl apply "$R/sites.rules" 2>&1)
check "the sites' rule file applies" test $? = 0
check "PHP-FPM runs under the gate, on its Unix socket" wait_until fpm_service_up "$SOCK"
on_exit "vsctl service stop fpm"

# --- one Apache, two name-based vhosts, in VS front
apache_conf "$RUN" "$PORT" "$SOCK"
check "Apache's configuration is valid" "$APACHE" -t -f "$RUN/front/httpd.conf"
vsctl exec front -- "$APACHE" -f "$RUN/front/httpd.conf" -k start
on_exit "$APACHE -f $RUN/front/httpd.conf -k stop; sleep 1; kill -KILL \$(cat $RUN/front/httpd.pid)"
check "Apache listens" wait_until bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"

# get HOST PATH: the body of an HTTP/1.0 GET with that Host header
get() {
	exec 9<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$2" "$1" >&9
	timeout 20 sed '1,/^\r$/d' <&9
	exec 9<&-
}
# where HOST N: the VSs N requests for HOST's script ran in, counted
# (the v1 cpu hierarchy on hybrid hosts, the cgroup2 line on pure v2)
where() {
	local i
	for i in $(seq "$2"); do
		get "$1" /cg.php | cg_vs
	done | sort | uniq -c | awk '{ printf "%s%s:%s", n++ ? " " : "", $2, $1 } END { print "" }'
}
is "$(where a.example 20)" "www1:20" "20 requests for a.example ran in www1 (by its host name)"
is "$(where b.example 20)" "www2:20" "20 requests for b.example ran in www2 (by its document root)"
is "$(where A.Example.:$PORT 5)" "www1:5" "host names compare without case, trailing dot and port"
is "$(where c.example 5)" "front:5" "a host no site names, served by the first vhost: the requester's VS (front)"
# attr F: a figure of the gate's classification by params; attr_is F V
attr() { svc fpm "['attrs']['$1']"; }
attr_is() { [ "$(attr "$1")" = "$2" ]; }
by=$(attr by_content)
is "$by" 45 "the gate counts 45 connections classified by their params"

# --- a FastCGI client that connects and sends nothing
python3 - "$SOCK" > "$RUN/silent.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
print("connected", flush=True)
s.settimeout(30)
try:
    d = s.recv(1)	# PHP-FPM waits for a request that never comes
except OSError:
    pass
print("done", flush=True)
PY
SILENT=$!
on_exit "kill $SILENT"
check "the silent client connects" wait_until grep -q connected "$RUN/silent.out"
check "the gate holds it, waiting for its params" wait_until attr_is held 1
# home_served: connections the gate served in the home VS
home_served() { svc fpm "['vs']" | python3 -c 'import json, sys
print(sum(v["served"] for v in json.load(sys.stdin) if v["name"] == "php"))'; }
home0=$(home_served)
# one request passes it while it is held (the bound not reached: it did not
# wait for the silent one), then 20 more; a VM under TCG takes seconds for
# those, so only the first is checked against the bound
is "$(where a.example 1):$(attr held):$(attr timed_out)" "www1:1:1:0" \
    "a request behind it is served in its site's VS while it is still held"
is "$(where a.example 10) $(where b.example 10)" "www1:10 www2:10" "20 requests more are served, each in its site's VS"
check "after the bound it is handed over" wait_until attr_is timed_out 1
home1=$(home_served)
is "$((home1 - home0))" 1 "served from the home VS (php)"
kill "$SILENT" 2>/dev/null
is "$(where a.example 3)" "www1:3" "and the pool serves on"
done_testing
