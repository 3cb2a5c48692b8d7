#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's own PHP-FPM pool under the accept gate (`vsctl run`), on its Unix
# socket: PHP requests from two VSs each run in their requester's VS. The
# pool is /etc/php/8.2/fpm/pool.d/www.conf as installed, copied and changed
# only in its socket path and pool size (pm = static, 3 workers: the prefork
# model), and the master's pid file, log and include path so that this
# private instance touches nothing of the system's. The client is cgi-fcgi
# (Debian's libfcgi-bin), run inside each VS; the PHP script prints
# /proc/thread-self/cgroup of the worker that runs it.
GATE_UNIX=1
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
FPM=$(command -v php-fpm8.2 || echo /usr/sbin/php-fpm8.2)
POOL=/etc/php/8.2/fpm/pool.d/www.conf
MAIN=/etc/php/8.2/fpm/php-fpm.conf
[ -x "$FPM" ] && [ -f "$POOL" ] && [ -f "$MAIN" ] ||
	skip_all "php8.2-fpm is not installed (scripts/deps.sh --test installs it)"
command -v cgi-fcgi > /dev/null || skip_all "cgi-fcgi is not installed (Debian: libfcgi-bin)"
id www-data > /dev/null 2>&1 || skip_all "no user www-data"
plan 9

vs_create "home 10%" "www1 40%" "www2 40%" || exit 1

# the private instance: Debian's files with only these lines changed
SOCK=$W/php8.2-fpm.sock
sed -e "s|^listen = .*|listen = $SOCK|" \
    -e "s|^pm = .*|pm = static|" -e "s|^pm.max_children = .*|pm.max_children = 3|" \
    "$POOL" > "$W/www.conf"
sed -e "s|^pid = .*|pid = $W/php-fpm.pid|" -e "s|^error_log = .*|error_log = $W/php-fpm.log|" \
    -e "s|^include=.*|include=$W/www.conf|" "$MAIN" > "$W/php-fpm.conf"
diff "$POOL" "$W/www.conf" | grep '^>' > "$W/pool.diff"
_all=1
[ "$(wc -l < "$W/pool.diff")" = 3 ] && grep -q "^> listen = $SOCK\$" "$W/pool.diff" &&
	grep -q '^> pm = static$' "$W/pool.diff" && grep -q '^> pm.max_children = 3$' "$W/pool.diff" && _all=0
check "the pool differs from Debian's in its socket path and pool size only" [ $_all = 0 ]
# the script, readable by the pool's user (www-data)
mkdir "$W/www"
cat > "$W/www/cg.php" <<'PHP'
<?php
header("Content-Type: text/plain");
echo "pid=", getmypid(), "\n";
readfile("/proc/thread-self/cgroup");
PHP
chmod 0755 "$W" "$W/www"
chmod 0644 "$W/www/cg.php"
"$FPM" -t -y "$W/php-fpm.conf" > "$W/fpm-t.log" 2>&1
check "php-fpm8.2 -t accepts the configuration" [ $? = 0 ]

"$VSCTL" run --name fpm --home home -- "$FPM" -F -y "$W/php-fpm.conf" > "$W/fpm.out" 2> "$W/fpm.err" &
GPID=$!
GATE_PIDS="$GATE_PIDS $GPID"
STATUS=$W/run/gates/fpm.sock
wait_for sh -c "[ -S '$SOCK' ] && [ -S '$STATUS' ] && [ \$(pgrep -c -P \$(cat '$W/php-fpm.pid' 2>/dev/null || echo 0)) -ge 3 ]"
check "PHP-FPM runs under vsctl run, listening on its Unix socket" [ -S "$SOCK" ]

# php VS OUT: one PHP request from VS (or from no VS with "-"), its answer
php() {
	_cmd="env SCRIPT_FILENAME=$W/www/cg.php SCRIPT_NAME=/cg.php REQUEST_METHOD=GET cgi-fcgi -bind -connect $SOCK"
	if [ "$1" = - ]; then $_cmd; else "$VSCTL" exec "$1" -- $_cmd; fi
}
# where FILE: the VS the answers' worker ran in, one line per answer, from
# the v1 cpu hierarchy on hybrid hosts (where the scheduler acts; cgroup2
# moves lazily), cgroup2 on pure-v2 hosts
where() {
	if pure_v2; then
		sed -n "s|^0::.*/$T/\([^/]*\)\$|\1|p" "$1"
	else
		sed -n "s|^[0-9]*:[^:]*\bcpu\b[^:]*:.*/$T/\([^/]*\)\$|\1|p" "$1"
	fi
}
: > "$W/a1"; : > "$W/a2"
for i in $(seq 10); do
	php www1 >> "$W/a1"
	php www2 >> "$W/a2"
done
php - > "$W/a0"
diag "www1's answers ran in: $(where "$W/a1" | sort | uniq -c | tr -s ' \n' ' ')"
diag "www2's answers ran in: $(where "$W/a2" | sort | uniq -c | tr -s ' \n' ' ')"
check "10 PHP requests from www1 ran in www1" [ "$(where "$W/a1" | grep -cx www1)" = 10 ]
check "10 PHP requests from www2 ran in www2" [ "$(where "$W/a2" | grep -cx www2)" = 10 ]
check "a request from no VS ran in the home VS" [ "$(where "$W/a0")" = home ]
npids=$(cat "$W/a1" "$W/a2" | sed -n 's/^pid=//p' | sort -u | wc -l)
check "several PHP-FPM workers served (prefork: $npids)" [ "$npids" -ge 2 ]
status > "$W/st"
check "the gate charged 10 requests to each VS" sh -c '
	grep -q "\"name\": \"www1\", \"id\": [0-9]*, \"served\": 10," "$1" &&
	grep -q "\"name\": \"www2\", \"id\": [0-9]*, \"served\": 10," "$1"' - "$W/st"

kill -TERM "$GPID"
wait "$GPID" 2>/dev/null
check "PHP-FPM stops with the supervisor, its socket removed" wait_for sh -c "[ ! -S '$SOCK' ]"
exit 0
