#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Workers as a share (vsrules(5) `workers`, vsctl-run(8) Workers): Debian's
# PHP-FPM pool (pm = static, 4 workers: fcgi-lib.sh's fpm_conf) under the
# accept gate, on its Unix socket; VS a sends 6 slow requests at once (each holds its worker 0.5 s)
# and VS b quick ones while they run. The slow script counts, under
# flock(2), how many of a's requests run at once and the most there were.
#  - Without the key (the default), a's requests run side by side.
#  - With `workers 1` on a's vs line: at most one of a's requests ran at
#    once, none failed, b's were served while a's waited, and the waits the
#    gate counted (its status) are > 0, at most 5, and what vsd's metric says.
# WORKERS_TCP=1 (tests/gate-workers-tcp.sh): the pool on 127.0.0.1, where
# the gate's fast path would otherwise let a thread take the kernel's next
# connection whatever its VS.
[ -n "${WORKERS_TCP:-}" ] || GATE_UNIX=1
. "${top_srcdir:-.}/tests/gate-lib.sh"
need_root
. "${top_srcdir:-.}/tests/fcgi-lib.sh"
need_fpm
command -v cgi-fcgi > /dev/null || skip_all "cgi-fcgi is not installed (Debian: libfcgi-bin)"
id www-data > /dev/null 2>&1 || skip_all "no user www-data"
plan 10

vsd_start || { nok "vsd starts"; exit 1; }
rules() {
	printf 'vs base cpu 10%%\nvs a cpu 40%%%s\nvs b cpu 40%%\n' "$1" > "$W/w.rules"
	"$VSCTL" apply "$W/w.rules" > "$W/apply.out" 2>&1 || { cat "$W/apply.out" >&2; return 1; }
}
check "apply: VSs base, a and b, no worker limit" rules ""

if [ -n "${WORKERS_TCP:-}" ]; then
	SOCK=127.0.0.1:$(test_port)
	up() { ss -Hltn "sport = :${SOCK#*:}" | grep -q LISTEN; }
else
	SOCK=$W/php8.2-fpm.sock
	up() { [ -S "$SOCK" ]; }
fi
fpm_conf "$W" "$SOCK"
mkdir "$W/www" "$W/cnt"
# slow.php: one of a's requests; running/most/done are its counters
cat > "$W/www/slow.php" <<'PHP'
<?php
function bump($d, $delta) {
	$f = fopen("$d/running", "c+");
	flock($f, LOCK_EX);
	$n = (int)stream_get_contents($f) + $delta;
	ftruncate($f, 0); rewind($f); fwrite($f, "$n"); fflush($f);
	$m = (int)@file_get_contents("$d/most");
	if ($n > $m)
		file_put_contents("$d/most", "$n");
	if ($delta < 0)
		file_put_contents("$d/done", (int)@file_get_contents("$d/done") + 1);
	flock($f, LOCK_UN);
	fclose($f);
}
$d = $_SERVER["CNT"];
bump($d, 1);
usleep(500000);
bump($d, -1);
echo "served\n";
PHP
# quick.php: one of b's requests; how many of a's had finished then
cat > "$W/www/quick.php" <<'PHP'
<?php
echo "a_done=", (int)@file_get_contents($_SERVER["CNT"] . "/done"), "\n";
PHP
chown www-data "$W/cnt"
chmod 0755 "$W" "$W/www"
chmod 0644 "$W/www/slow.php" "$W/www/quick.php"

"$VSCTL" run --name fpm --home base -- "$PHP_FPM" -y "$W/fpm.conf" > "$W/fpm.out" 2> "$W/fpm.err" &
GPID=$!
GATE_PIDS="$GATE_PIDS $GPID"
STATUS=$W/run/gates/fpm.sock
workers_up() { up && [ -S "$STATUS" ] && [ "$(pgrep -c -P "$(cat "$W/fpm.pid" 2>/dev/null || echo 0)")" -ge 4 ]; }
check "PHP-FPM (4 workers) runs under vsctl run on $SOCK" wait_for workers_up

# req VS SCRIPT: one request from VS, its answer on stdout
req() {
	"$VSCTL" exec "$1" -- env CNT="$W/cnt" SCRIPT_FILENAME="$W/www/$2" SCRIPT_NAME="/$2" \
		REQUEST_METHOD=GET cgi-fcgi -bind -connect "$SOCK"
}
# round TAG: 6 slow requests from a: one, and once it runs (the other
# workers idle: with the fast path they wait in the kernel) 5 at once; then
# 4 quick ones from b, one after the other, while a's run
round() {
	rm -f "$W/cnt/running" "$W/cnt/most" "$W/cnt/done"
	req a slow.php > "$W/$1.a1" 2>&1 &
	wait_for sh -c "[ \"\$(cat '$W/cnt/running' 2>/dev/null)\" = 1 ]"
	sleep 0.1
	for i in 2 3 4 5 6; do req a slow.php > "$W/$1.a$i" 2>&1 & done
	sleep 0.2
	for i in 1 2 3 4; do req b quick.php > "$W/$1.b$i" 2>&1; done
	wait_for sh -c "[ \"\$(cat '$W/cnt/done' 2>/dev/null)\" = 6 ]"
	sleep 0.2
}

# --- the default: no limit
round off
check "no worker limit: a's 6 requests were all served" \
	[ "$(cat "$W"/off.a* | grep -cx served)" = 6 ]
diag "no limit: at most $(cat "$W/cnt/most") of a's requests ran at once"
check "no worker limit (the default): more than one of a's requests ran at once" \
	[ "$(cat "$W/cnt/most")" -ge 2 ]

# --- workers 1
check "apply: a gets workers 1" rules " workers 1"
round lim
check "workers 1: a's 6 requests were all served" \
	[ "$(cat "$W"/lim.a* | grep -cx served)" = 6 ]
diag "workers 1: at most $(cat "$W/cnt/most") of a's requests ran at once"
check "workers 1: at most one of a's requests ran at once" [ "$(cat "$W/cnt/most")" = 1 ]
diag "b's requests saw a's finished: $(cat "$W"/lim.b* | sed -n 's/^a_done=//p' | tr '\n' ' ')"
check "workers 1: b's 4 requests were served while a's still waited" sh -c '
	[ "$(cat "$@" | grep -c "^a_done=[0-5]$")" = 4 ]' - "$W"/lim.b*
status > "$W/st"
waits=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(v.get("worker_waits", 0) for v in d["vs"] if v["name"] == "a"))' "$W/st")
metric=$("$VSCTL" metrics | sed -n 's/^vsd_service_worker_waits_total{service="fpm",vs="a"} //p')
diag "the gate counted $waits waits of a's; the metric says ${metric:-nothing}"
check "the waits: > 0, at most one per waiting request (5), the same in the metric" sh -c '
	[ "$1" -gt 0 ] && [ "$1" -le 5 ] && [ "$1" = "$2" ]' - "$waits" "$metric"

kill -TERM "$GPID"
wait "$GPID" 2>/dev/null
down() { ! up; }
check "PHP-FPM stops with the supervisor, its listener gone" wait_for down
exit 0
