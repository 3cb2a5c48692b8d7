# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by benchmarks/hosting and benchmarks/wordpress, after lib-bench.sh:
# Debian's PHP-FPM pools (alone, or one under the accept gate as a service
# of a rule file applied to the benchmark's vsd), one front end with two
# name-based sites, and the memory of the servers. The caller sets
# PHP_FPM, WORKERS, USER_ and GROUP_ (the pools' user), PORT, HOST_A and
# HOST_B, front (apache or nginx), and the sites' document roots
# $BENCH_RUN/srv/a and $BENCH_RUN/srv/b.

declare -gA BENCH_VS_KEYS=()	# VS -> more keys for its vs line ("workers 4")

# pool_conf NAME SOCK: the pool's configuration, checked; prints its path.
pool_conf() {
	local name=$1 conf=$BENCH_RUN/php-fpm-$1.conf
	sed -e "s|@RUNDIR@|$BENCH_RUN|g" -e "s|@NAME@|$name|g" -e "s|@SOCK@|$2|g" \
	    -e "s|@USER@|$USER_|g" -e "s|@GROUP@|$GROUP_|g" -e "s|@WORKERS@|$WORKERS|g" \
	    "$top_srcdir/benchmarks/hosting-fpm.conf.in" > "$conf"
	"$PHP_FPM" -t -y "$conf" >"$BENCH_RUN/php-fpm-$name.test" 2>&1 ||
		bench_die "pool $name: bad PHP-FPM configuration: $(cat "$BENCH_RUN/php-fpm-$name.test")"
	echo "$conf"
}

# pool_start NAME VS: a PHP-FPM pool on $BENCH_RUN/php/NAME.sock ("" VS: outside every VS).
pool_start() {
	local name=$1 vs=$2 conf sock=$BENCH_RUN/php/$1.sock i
	conf=$(pool_conf "$name" "$sock") || exit 1
	bench_spawn "$BENCH_RUN/php-fpm-$name.stderr" "$vs" "$PHP_FPM" -F -y "$conf"
	eval "POOL_PID_$name=$BENCH_LAST_PID"
	for i in $(seq 100); do
		[ -S "$sock" ] && [ "$(pgrep -c -P "$BENCH_LAST_PID")" -ge "$WORKERS" ] && return 0
		sleep 0.1
	done
	bench_die "pool $name: PHP-FPM did not start: $(tail -3 "$BENCH_RUN/php-fpm-$name.log" "$BENCH_RUN/php-fpm-$name.stderr" 2>/dev/null)"
}

pool_stop() {
	local pidvar=POOL_PID_$1
	[ -n "${!pidvar:-}" ] && bench_stop "${!pidvar}"
	eval "POOL_PID_$1="
}

# The sites as a rule file: the benchmark's VSs (with BENCH_VS_KEYS), and
# (gated_rules FILE SERVICE-LINE...) the services with the two sites.
gated_rules() {
	local file=$1 spec name
	shift
	{
		for spec in "${BENCH_SPECS[@]}"; do
			name=${spec%%:*}
			echo "vs $name cpu ${spec#*:}%${BENCH_VS_KEYS[$name]:+ ${BENCH_VS_KEYS[$name]}}"
		done
		if [ $# -gt 0 ]; then
			printf '%s\n' "$@"
			echo "site $HOST_A docroot \"$BENCH_RUN/srv/a\" vs www1"
			echo "site $HOST_B docroot \"$BENCH_RUN/srv/b\" vs www2"
		fi
	} > "$file"
	chmod 0644 "$file"
}

# gated_start [SERVICE-LINE...]: the shared pool under the accept gate, as a
# provider runs it: a service "fpm" of the rule file, which vsd starts (at
# home in VS php), pinned like the other pools; the sites classify its
# requests. The other services given go in the same file. POOL_PID_gated:
# the pool's master.
gated_start() {
	local conf sock=$BENCH_RUN/php/gated.sock i pin=
	if ! bench_gate_available; then
		bench_log "gated: $BENCH_GATE_MISSING"
		return 1
	fi
	conf=$(pool_conf gated "$sock") || exit 1
	[ -n "$BENCH_SITE_CPUS" ] && pin="taskset -c $BENCH_SITE_CPUS "
	gated_rules "$BENCH_RUN/gated.rules" "service fpm home php command \"$pin$PHP_FPM -F -y $conf\"" "$@"
	"$VSCTL" apply "$BENCH_RUN/gated.rules" >&2 || bench_die "gated: vsctl apply of the sites' rule file failed"
	GATED_ON=1
	# 60 s: vsd tries a supervisor that could not start again with back-off
	for i in $(seq 600); do
		POOL_PID_gated=$(cat "$BENCH_RUN/php-fpm-gated.pid" 2>/dev/null)
		[ -S "$sock" ] && [ -n "$POOL_PID_gated" ] &&
			[ "$(pgrep -c -P "$POOL_PID_gated")" -ge "$WORKERS" ] && return 0
		sleep 0.1
	done
	bench_die "pool gated: PHP-FPM did not start within 60 s; $(gated_why fpm "$BENCH_RUN/php-fpm-gated.log")"
}

# gated_why SERVICE LOG: why a gated service is not up, for a message: its
# supervisor's state, the service's own log, vsd's lines about it and, under
# systemd, the journal of its supervisor's unit (vsd/services.c)
gated_why() {
	local unit=vsd-$BENCH_CG-$1.service
	printf 'services: %s; its log: %s; vsd: %s' \
	    "$("$VSCTL" services 2>&1 | tr '\n' ';')" \
	    "$(tail -3 "$2" 2>/dev/null | tr '\n' ';')" \
	    "$(grep -i "service $1\|$unit" "$BENCH_RUN/vsd.log" 2>/dev/null | tail -4 | tr '\n' ';')"
	[ -d /run/systemd/system ] && command -v journalctl >/dev/null &&
		printf '; %s: %s' "$unit" "$(journalctl -q --no-pager -o cat -u "$unit" 2>/dev/null | tail -4 | tr '\n' ';')"
	return 0
}

# Stop it: apply the file without services (vsd stops them and waits);
# whenever gated_start applied them, also if the pool never came up (the
# database service may be running; left declared, it is restarted into
# its home VS while that VS is destroyed).
gated_stop() {
	local i
	[ -n "${GATED_ON:-}" ] || return 0
	gated_rules "$BENCH_RUN/nogate.rules"
	"$VSCTL" apply --prune "$BENCH_RUN/nogate.rules" >/dev/null || bench_log "warning: could not stop the services"
	# a supervisor takes up to its 10 s stop timeout, then reaps what it killed
	for i in $(seq 300); do
		"$VSCTL" services --json | grep -q '"name": ' || break
		sleep 0.1
	done
	"$VSCTL" services --json | grep -q '"name": ' &&
		bench_log "warning: services still stopping after 30 s: $("$VSCTL" services 2>&1 | tr '\n' ';')"
	POOL_PID_gated= GATED_ON=
}

# The memory of a server: the sum of the PSS (proportional set size, from
# /proc/PID/smaps_rollup) of PID and its children, in kB. PSS divides each
# shared page among the processes that map it, so the sums of several
# servers add up without counting a page twice. pss_tree_kb PID.
pss_tree_kb() {
	local p sum=0 v
	[ -n "${1:-}" ] || { echo 0; return; }
	for p in $1 $(pgrep -P "$1"); do
		v=$(awk '/^Pss:/ { print $2 }' "/proc/$p/smaps_rollup" 2>/dev/null)
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

# A pool's memory: its master and workers (pool_pss_kb NAME).
pool_pss_kb() {
	local pidvar=POOL_PID_$1
	pss_tree_kb "${!pidvar:-}"
}

# front_conf TEMPLATE DIR SOCK_A SOCK_B: the front end's configuration.
front_conf() {
	sed -e "s|@RUNDIR@|$2|g" -e "s|@PORT@|$PORT|g" -e "s|@MODDIR@|$APACHE_MODDIR|g" \
	    -e "s|@USER@|$USER_|g" -e "s|@GROUP@|$GROUP_|g" \
	    -e "s|@DOCROOT_A@|$BENCH_RUN/srv/a|g" -e "s|@DOCROOT_B@|$BENCH_RUN/srv/b|g" \
	    -e "s|@HOST_A@|$HOST_A|g" -e "s|@HOST_B@|$HOST_B|g" \
	    -e "s|@SOCK_A@|$3|g" -e "s|@SOCK_B@|$4|g" "$top_srcdir/benchmarks/$1"
}

# front_start SOCK_A SOCK_B: the front end ($front) in VS front, in a fresh
# directory of its own under the scratch directory.
front_start() {
	local dir=$BENCH_RUN/front-$front name
	rm -rf "$dir" && mkdir -p "$dir/tmp" && chmod 755 "$dir"
	case $front in
	apache)
		name=Apache
		front_conf hosting-front.conf.in "$dir" "$1" "$2" > "$dir/httpd.conf"
		"$APACHE" -t -f "$dir/httpd.conf" >"$dir/configtest.log" 2>&1 ||
			bench_die "front end: bad Apache configuration: $(cat "$dir/configtest.log")"
		bench_spawn "$dir/stderr.log" front "$APACHE" -f "$dir/httpd.conf" -DFOREGROUND ;;
	nginx)
		name=nginx
		front_conf hosting-nginx.conf.in "$dir" "$1" "$2" > "$dir/nginx.conf"
		# -e: the shipped error log is /var/log/nginx/error.log
		"$NGINX" -t -q -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" >"$dir/configtest.log" 2>&1 ||
			bench_die "front end: bad nginx configuration: $(cat "$dir/configtest.log")"
		bench_spawn "$dir/stderr.log" front "$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" ;;
	esac
	FRONT_PID=$BENCH_LAST_PID
	bench_wait_port "$PORT" ||
		bench_die "front end: $name did not listen on $PORT: $(tail -3 "$dir/error.log" "$dir/stderr.log" 2>/dev/null)"
}

# probe HOST [PATH [HEADER...]]: one GET of PATH (/ad.php) on site HOST;
# prints the value of each HEADER (X-VS-Cgroup: the cgroup the PHP ran
# in), "none" for one missing, on one line.
probe() {
	local host=$1 path=${2:-/ad.php} line h out=
	shift $(($# < 2 ? $# : 2))
	[ $# -gt 0 ] || set -- X-VS-Cgroup
	declare -A got=()
	exec 9<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$host" >&9
	while IFS= read -r -t 30 line <&9; do
		line=${line%$'\r'}
		[ -z "$line" ] && break
		got[${line%%: *}]=${line#*: }
	done
	exec 9<&-
	for h in "$@"; do out="$out${out:+ }${got[$h]:-none}"; done
	echo "$out"
}
