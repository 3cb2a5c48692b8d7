#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Classification by request content against a client that chooses every
# header, through the real front ends: Debian's apache2 (mod_proxy_fcgi)
# and nginx, each in VS front, in front of a PHP-FPM pool (Debian's pool) on
# a Unix socket, and a second one on TCP for Apache, each under the accept
# gate, home VS php. Site A (a.example, docroot a/) is VS
# www1; site B (b.example, docroot b/) is VS www2 with priority 10. The PHP
# script prints the cgroups of the thread that runs it: the VS the request
# was charged to.
#  (a) six headers of 8,000 bytes (each under Apache's 8,190-byte line
#      limit) before Host: the request for A is still A's; on TCP, 99 of them
#      (Apache's most) too;
#  (b) A's document root with Host: b.example: A's, whatever B's priority;
#  (c) nginx with an absolute-form request line naming one site and Host
#      the other: the server block nginx chose (its DOCUMENT_ROOT) decides;
#  (d) a request whose params the gate cannot read (more headers than the
#      kernel lets it peek at on a Unix socket; not FastCGI at all) goes to
#      the VS the rule file names with `unclassified`, never to the front
#      end, and is counted in vsctl services, vsctl top and the metrics.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fcgi-lib.sh"
need_root
need_apache
need_fpm
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || skip_all "nginx is not installed (scripts/deps.sh --test installs it)"

rules_dir
RUN=$R/run
mkdir -p "$RUN/a" "$RUN/b" "$RUN/front" "$RUN/ng" "$RUN/tcp" && chmod -R 0755 "$RUN"
PORT=$(test_port)	# Apache: A and B by name
PORT_A=$((PORT + 1))		# Apache: A alone on its own port
NPORT=$((PORT + 2))		# nginx: A and B by name
NPORT_A=$((PORT + 3))		# nginx: A alone on its own port
PORT_T=$((PORT + 4))		# Apache: A alone, its PHP over TCP
FPM_T=$((PORT + 5))		# the second pool's TCP port
BOUND_MS=3000

vsd_start || { fail "vsd starts"; done_testing; }

SOCK=$RUN/php8.2-fpm.sock
fpm_conf "$RUN" "$SOCK"
fpm_conf "$RUN/tcp" "127.0.0.1:$FPM_T"	# a second pool, on TCP
cg_script "$RUN/a" "$RUN/b"
chmod -R a+rX "$RUN"

w sites.rules <<E
vs php cpu 10%
vs front cpu 10%
vs www1 cpu 30%
vs www2 cpu 30% priority 10
vs unk cpu 5%
service fpm home php attrs-timeout ${BOUND_MS}ms unclassified unk command "$PHP_FPM -F -y $RUN/fpm.conf"
service fpmt home php attrs-timeout ${BOUND_MS}ms unclassified unk command "$PHP_FPM -F -y $RUN/tcp/fpm.conf"
site a.example docroot "$RUN/a" vs www1
site b.example docroot "$RUN/b" vs www2
E
out=$(vsctl apply "$R/sites.rules" 2>&1)
is "$?" 0 "the sites' rule file applies${out:+: $out}"
check "PHP-FPM runs under the gate, on its Unix socket" wait_until fpm_service_up "$SOCK"
on_exit "vsctl service stop fpm"
fpmt_up() { running fpmt && bash -c "exec 3<>/dev/tcp/127.0.0.1/$FPM_T" 2>/dev/null; }
check "the second pool runs under the gate, on TCP" wait_until fpmt_up
on_exit "vsctl service stop fpmt"

# --- Apache: the hosting benchmark's front end, in VS front, with copies of
# site A's vhost alone on two ports of their own: one with PHP on the Unix
# socket, one with PHP on the TCP pool
apache_conf "$RUN" "$PORT" "$SOCK"
awk -v p="$PORT" -v pa="$PORT_A" -v pt="$PORT_T" -v sock="$SOCK" -v tcp="127.0.0.1:$FPM_T" '
	/^<VirtualHost / && !n++ { grab = 1 }
	grab { a = a $0 "\n" }
	/^<\/VirtualHost>/ { grab = 0 }
	{ print }
	END {
		t = a
		sub("\\*:" p, "*:" pa, a)
		sub("\\*:" p, "*:" pt, t)
		sub("proxy:unix:" sock "\\|fcgi://localhost", "proxy:fcgi://" tcp, t)
		printf "Listen 127.0.0.1:%s\n%sListen 127.0.0.1:%s\n%s", pa, a, pt, t
	}
' "$RUN/front/httpd.conf" > "$RUN/front/httpd2.conf" && mv "$RUN/front/httpd2.conf" "$RUN/front/httpd.conf"
check "Apache's configuration is valid" "$APACHE" -t -f "$RUN/front/httpd.conf"
vsctl exec front -- "$APACHE" -f "$RUN/front/httpd.conf" -k start
on_exit "$APACHE -f $RUN/front/httpd.conf -k stop; sleep 1; kill -KILL \$(cat $RUN/front/httpd.pid) 2>/dev/null"

# --- nginx: two server blocks by name on one port, A's alone on another
mkdir -p "$RUN/ng/tmp"
php_loc="location ~ \\.php\$ { include /etc/nginx/fastcgi.conf; fastcgi_pass unix:$SOCK; }"
cat > "$RUN/ng/nginx.conf" <<E
user www-data;
worker_processes 1;
pid $RUN/ng/nginx.pid;
error_log $RUN/ng/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path $RUN/ng/tmp/body;
	fastcgi_temp_path $RUN/ng/tmp/fcgi;
	proxy_temp_path $RUN/ng/tmp/proxy;
	uwsgi_temp_path $RUN/ng/tmp/uwsgi;
	scgi_temp_path $RUN/ng/tmp/scgi;
	server { listen 127.0.0.1:$NPORT; server_name a.example; root $RUN/a; $php_loc }
	server { listen 127.0.0.1:$NPORT; server_name b.example; root $RUN/b; $php_loc }
	server { listen 127.0.0.1:$NPORT_A; server_name a.example; root $RUN/a; $php_loc }
}
E
ng() { "$NGINX" -p "$RUN/ng" -e "$RUN/ng/error.log" -c "$RUN/ng/nginx.conf" "$@"; }
check "nginx's configuration is valid" ng -t -q
vsctl exec front -- "$NGINX" -p "$RUN/ng" -e "$RUN/ng/error.log" -c "$RUN/ng/nginx.conf"
on_exit "kill \$(cat $RUN/ng/nginx.pid) 2>/dev/null"
for p in "$PORT" "$PORT_A" "$PORT_T" "$NPORT" "$NPORT_A"; do
	check "the front end on port $p listens" wait_until bash -c "exec 3<>/dev/tcp/127.0.0.1/$p"
done

# req PORT HEAD: send the request head HEAD (lines without the final empty
# one) and print the VS the script ran in ("none": no script output)
req() {
	exec 9<>"/dev/tcp/127.0.0.1/$1" || { echo noconn; return; }
	printf '%s\r\n' "$2" >&9
	timeout 20 sed '1,/^\r$/d' <&9 | cg_vs
	exec 9<&-
}
CRLF=$'\r\n'
# pad N: N header lines of 8,000 bytes each, with their CRLFs
pad() {
	local i v
	v=$(head -c 8000 /dev/zero | tr '\0' p)
	for ((i = 1; i <= $1; i++)); do printf 'X-Pad-%d: %s\r\n' "$i" "$v"; done
	printf .	# command substitution keeps the last CRLF before it
}

P3=$(pad 3) P6=$(pad 6) P99=$(pad 99)
is "$(req "$PORT" "GET /cg.php HTTP/1.0${CRLF}Host: a.example$CRLF")" www1 \
    "Apache: a plain request for A is charged to www1"
is "$(req "$PORT" "GET /cg.php HTTP/1.0${CRLF}Host: b.example$CRLF")" www2 \
    "Apache: a plain request for B is charged to www2"
is "$(req "$NPORT" "GET /cg.php HTTP/1.0${CRLF}Host: a.example$CRLF")" www1 \
    "nginx: a plain request for A is charged to www1"

# (a) padding before Host. Apache passes the headers in the client's order
# before SERVER_NAME and DOCUMENT_ROOT; nginx after its fastcgi_params, and
# takes only what fits in large_client_header_buffers (4 x 8k): three.
is "$(req "$PORT" "GET /cg.php HTTP/1.0$CRLF${P6%.}Host: a.example$CRLF")" www1 \
    "(a) Apache: six 8,000-byte headers before Host: the request for A is charged to www1"
is "$(req "$NPORT" "GET /cg.php HTTP/1.0$CRLF${P3%.}Host: a.example$CRLF")" www1 \
    "(a) nginx: three 8,000-byte headers before Host: charged to www1"

# ... and on TCP, where the gate raises the connection's receive buffer to
# its 1 MiB bound: Apache's most (LimitRequestFields 100, so 99 headers of
# 8,000 bytes and Host, 0.8 MB of params before DOCUMENT_ROOT) is read whole
is "$(req "$PORT_T" "GET /cg.php HTTP/1.0${CRLF}Host: a.example$CRLF")" www1 \
    "Apache over TCP: a plain request for A is charged to www1"
is "$(req "$PORT_T" "GET /cg.php HTTP/1.0$CRLF${P99%.}Host: a.example$CRLF")" www1 \
    "(a) Apache over TCP: 99 headers of 8,000 bytes before Host: charged to www1"
is "$(svc fpmt "['vs']" | json '",".join("%s=%d" % (v["name"], v["served"]) for v in d if v["served"])'):$(svc fpmt "['unclassified']")" \
    "www1=2:0" "(a) ... both served by the TCP pool, in www1, none unclassified"

# (b) A's document root, B's host name (B has the higher priority)
is "$(req "$PORT_A" "GET /cg.php HTTP/1.0${CRLF}Host: b.example$CRLF")" www1 \
    "(b) Apache: A's vhost (its own port) with Host: b.example is charged to www1"
is "$(req "$NPORT_A" "GET /cg.php HTTP/1.0${CRLF}Host: b.example$CRLF")" www1 \
    "(b) nginx: A's server block (its own port) with Host: b.example is charged to www1"

# (c) nginx chooses the server block by the absolute-form request line; the
# raw Host header still reaches the params as HTTP_HOST
is "$(req "$NPORT" "GET http://b.example/cg.php HTTP/1.1${CRLF}Host: a.example${CRLF}Connection: close$CRLF")" \
    www2 "(c) nginx: GET http://b.example/ with Host: a.example is B's server block: www2"
is "$(req "$NPORT" "GET http://a.example/cg.php HTTP/1.1${CRLF}Host: b.example${CRLF}Connection: close$CRLF")" \
    www1 "(c) nginx: GET http://a.example/ with Host: b.example is A's server block: www1"

# (d) unclassifiable: the gate counts it and serves it from unk
unclassified() { svc fpm "['unclassified']"; }
u0=$(unclassified)
# 99 headers of 8,000 bytes (Apache's LimitRequestFields is 100): more than
# a Unix socket lets the gate peek at (the front end's send buffer), so
# the params never all arrive while the gate only peeks
is "$(req "$PORT" "GET /cg.php HTTP/1.0$CRLF${P99%.}Host: a.example$CRLF")" unk \
    "(d) Apache: 99 headers of 8,000 bytes: past what the gate can read, charged to unk (named by 'unclassified'), not front"
is "$(($(unclassified) - u0))" 1 \
    "(d) counted once in vsctl services (unclassified)"
# not FastCGI at all, straight to the pool's socket
u1=$(unclassified)
python3 - "$SOCK" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"GET / HTTP/1.0\r\nHost: a.example\r\n\r\n")
s.settimeout(10)
try:
    s.recv(100)
except OSError:
    pass
PY
unclassified_is() { [ "$(unclassified)" = "$1" ]; }
check "(d) a connection that is not FastCGI is counted as unclassified" \
    wait_until unclassified_is $((u1 + 1))
is "$(svc fpm "['attrs']['malformed']")" 1 "(d) ... as malformed"
is "$(svc fpm "['attrs']['unclassified_vs']")" unk "(d) vsctl services names the unclassified VS"
n=$((u1 + 1))
is "$("$VSCTL" services | awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "UNCLASS") c = i }
    $1 == "fpm" && c { print $c }'):$(unclassified)" "$n:$n" \
    "(d) the services table's UNCLASS column shows the count"
like "$("$VSCTL" top -b -n 1)" "^fpm +\\(unclassified\\) +$n " "(d) vsctl top shows it"
like "$("$VSCTL" metrics)" "^vsd_service_unclassified_total\\{service=\"fpm\"\\} $n\$" "(d) and the metrics"
done_testing
