# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared by benchmarks/insulation, benchmarks/vhosts and tests/insulation-tiny.sh:
# virtual servers, Apache sites, FastCGI servers and the load generator.
# Everything started here is recorded and torn down by bench_cleanup.

: "${top_srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
ADSERVER=${ADSERVER:-$top_builddir/fcgi-demo/adserver}
LOADGEN=${LOADGEN:-$top_builddir/benchmarks/loadgen}
SITE_CONF_IN=${SITE_CONF_IN:-$top_srcdir/benchmarks/site.conf.in}
APACHE=${APACHE:-$(command -v apache2 || echo /usr/sbin/apache2)}
APACHE_MODDIR=${APACHE_MODDIR:-/usr/lib/apache2/modules}
CG_V1=/sys/fs/cgroup

BENCH_PIDS=()		# processes we started, stopped in reverse order
BENCH_CG=		# our cgroup subtree's name (phase 1 backend)
BENCH_RUN=		# scratch directory

bench_die() { echo "${0##*/}: $*" >&2; exit 1; }
bench_log() { echo "${0##*/}: $*" >&2; }

# Which hierarchies hold a process's VS membership: on a hybrid host the v1
# cpu and cpuacct controllers (cpu decides scheduling, cpuacct measures) and
# the cgroup2 directory (the BPF gates look there); on a pure v2 host one dir.
bench_cg_dirs() {
	local vs=$1 sub=$BENCH_CG${1:+/$1}
	if [ -d "$CG_V1/cpu" ] && [ ! -e "$CG_V1/cgroup.controllers" ]; then
		echo "$CG_V1/cpu/$sub" "$CG_V1/cpuacct/$sub"
		[ -d "$CG_V1/unified" ] && echo "$CG_V1/unified/$sub"
	else
		echo "$CG_V1/$sub"
	fi
	: "$vs"
}

# bench_vs_setup NAME:SHARE...  -- plain cgroups for now (the vsd backend
# replaces this once vsd is merged).  SHARE is a percentage of the machine;
# v1 cpu.shares and v2 cpu.weight are relative, so we write SHARE*10.24 /
# SHARE (weights only need the right ratios).
bench_vs_setup() {
	local spec d
	BENCH_CG=vsd-bench-$$
	bench_log "cgroups: $BENCH_CG; scratch: $BENCH_RUN"
	if [ -e "$CG_V1/cgroup.controllers" ]; then
		mkdir "$CG_V1/$BENCH_CG" || bench_die "cannot create cgroup $CG_V1/$BENCH_CG"
		echo "+cpu" > "$CG_V1/$BENCH_CG/cgroup.subtree_control" ||
			bench_die "cannot enable the cpu controller in $CG_V1/$BENCH_CG"
	else
		for d in $(bench_cg_dirs ""); do
			mkdir "$d" || bench_die "cannot create cgroup $d"
		done
	fi
	for spec in "$@"; do
		bench_vs_setup_one "${spec%%:*}" "${spec#*:}"
	done
}

bench_vs_setup_one() {
	local vs=$1 share=$2 d
	for d in $(bench_cg_dirs "$vs"); do
		mkdir "$d" || bench_die "cannot create cgroup $d"
	done
	if [ -e "$CG_V1/cgroup.controllers" ]; then
		echo "$share" > "$CG_V1/$BENCH_CG/$vs/cpu.weight"
	else
		echo $((share * 1024 / 100)) > "$CG_V1/cpu/$BENCH_CG/$vs/cpu.shares"
	fi
}

# bench_vs_exec VS CMD...: exec CMD inside VS ("" = the benchmark's own
# parent cgroup, outside every VS).  Call it in a subshell.
bench_vs_exec() {
	local vs=$1 d
	shift
	for d in $(bench_cg_dirs "$vs"); do
		echo "$BASHPID" > "$d/cgroup.procs" || bench_die "cannot move into $d"
	done
	if declare -F "$1" >/dev/null; then
		"$@"	# a function of ours that execs
		exit
	fi
	exec "$@"
}

# CPU time (µs) used so far by a VS ("" = the whole subtree).
bench_vs_cpu_us() {
	local sub=$BENCH_CG${1:+/$1}
	if [ -e "$CG_V1/cgroup.controllers" ]; then
		awk '/^usage_usec/ {print $2}' "$CG_V1/$sub/cpu.stat"
	else
		echo $(($(cat "$CG_V1/cpuacct/$sub/cpuacct.usage") / 1000))
	fi
}

bench_vs_teardown() {
	local d pid i
	[ -n "$BENCH_CG" ] || return 0
	# Anything still inside (a crashed Apache child...) is killed, then the
	# leaves go before their parent.
	for d in $(find $(bench_cg_dirs "") -depth -type d 2>/dev/null); do
		for i in 1 2 3 4 5 6 7 8 9 10; do
			pid=$(cat "$d/cgroup.procs" 2>/dev/null)
			[ -z "$pid" ] && break
			# shellcheck disable=SC2086
			kill -KILL $pid 2>/dev/null
			sleep 0.1
		done
		rmdir "$d" 2>/dev/null || bench_log "warning: could not remove $d"
	done
	BENCH_CG=
}

# CPU pinning (see RESULTS.md): the sites and their FastCGI servers share
# the last CPU, the load generator gets CPU 0.  bench_pin 0 turns it off.
BENCH_SITE_CPUS= BENCH_LG_CPUS=
bench_pin() {
	local n
	n=$(nproc)
	if [ "$1" = 1 ] && [ "$n" -ge 2 ] && command -v taskset >/dev/null; then
		BENCH_SITE_CPUS=$((n - 1)) BENCH_LG_CPUS=0
	else
		BENCH_SITE_CPUS= BENCH_LG_CPUS=
	fi
}

bench_pinned() {
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then
		exec taskset -c "$cpus" "$@"
	fi
	exec "$@"
}

# Background a command and remember it.  bench_spawn LOG VS CMD...
bench_spawn() {
	local log=$1 vs=$2
	shift 2
	( bench_vs_exec "$vs" bench_pinned "$BENCH_SITE_CPUS" "$@" ) >>"$log" 2>&1 &
	BENCH_PIDS+=($!)
	BENCH_LAST_PID=$!
}

bench_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

bench_wait_port() {
	local port=$1 i
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# A static mix in DIR and the list of its paths (weighted by repetition) in
# DIR.paths: mostly small pages, some larger ones, like a 2000-era site.
bench_make_docroot() {
	local dir=$1 n size i
	mkdir -p "$dir"
	: > "$dir.paths"
	for spec in 1:4 4:3 16:2 64:1; do
		size=${spec%%:*} n=${spec#*:}
		for i in $(seq "$n"); do
			head -c $((size * 1024)) /dev/zero | tr '\0' 'x' > "$dir/f${size}k-$i.html"
			echo "/f${size}k-$i.html" >> "$dir.paths"
		done
	done
	echo "ok" > "$dir/index.html"
	chmod -R a+rX "$dir"
}

# bench_site_start NAME PORT FCGI_ADDR VS: one Apache instance in VS.
bench_site_start() {
	local name=$1 port=$2 fcgi=$3 vs=$4 dir=$BENCH_RUN/$1 user group
	mkdir -p "$dir"
	chmod 755 "$dir"
	[ -d "$BENCH_RUN/docroot" ] || bench_make_docroot "$BENCH_RUN/docroot"
	user=www-data group=www-data
	id "$user" >/dev/null 2>&1 || user=nobody group=nogroup
	sed -e "s|@NAME@|$name|g" -e "s|@PORT@|$port|g" -e "s|@RUNDIR@|$dir|g" \
	    -e "s|@DOCROOT@|$BENCH_RUN/docroot|g" -e "s|@MODDIR@|$APACHE_MODDIR|g" \
	    -e "s|@USER@|$user|g" -e "s|@GROUP@|$group|g" -e "s|@FCGI@|$fcgi|g" \
	    "$SITE_CONF_IN" > "$dir/httpd.conf"
	"$APACHE" -t -f "$dir/httpd.conf" >"$dir/configtest.log" 2>&1 ||
		bench_die "$name: bad Apache configuration: $(cat "$dir/configtest.log")"
	bench_spawn "$dir/stderr.log" "$vs" "$APACHE" -f "$dir/httpd.conf" -DFOREGROUND
	eval "SITE_PID_$name=$BENCH_LAST_PID"
	bench_wait_port "$port" ||
		bench_die "$name: Apache did not listen on $port: $(tail -3 "$dir/error.log" "$dir/stderr.log" 2>/dev/null)"
}

bench_site_stop() {
	local pidvar=SITE_PID_$1
	[ -n "${!pidvar:-}" ] && bench_stop "${!pidvar}"
	eval "SITE_PID_$1="
}

# bench_fcgi_start NAME ADDR VS [adserver options]: a plain adserver in VS.
bench_fcgi_start() {
	local name=$1 addr=$2 vs=$3
	shift 3
	bench_spawn "$BENCH_RUN/$name.log" "$vs" "$ADSERVER" --listen "$addr" "$@"
	eval "FCGI_PID_$name=$BENCH_LAST_PID"
	bench_wait_port "${addr##*:}" || bench_die "$name: adserver did not listen on $addr: $(tail -3 "$BENCH_RUN/$name.log")"
}

bench_fcgi_stop() {
	local pidvar=FCGI_PID_$1
	[ -n "${!pidvar:-}" ] && bench_stop "${!pidvar}"
	eval "FCGI_PID_$1="
}

# The load generator's own VS.  It is closed-loop and light (one thread, a
# few % of a CPU at these rates); its VS guarantees it enough CPU to keep
# the offered load independent of how busy the sites are, and the pinning
# (bench_pin) keeps it off the sites' CPU.
bench_loadgen_vs() {
	bench_vs_setup_one loadgen 50
}

# bench_loadgen LOADGEN-ARGS...: run it in its VS, CSV on stdout.
bench_loadgen() {
	( bench_vs_exec loadgen bench_pinned "$BENCH_LG_CPUS" "$LOADGEN" "$@" )
}

# The accept gate comes from vsctl (another issue); never fake it.
BENCH_GATE_MISSING=
bench_gate_available() {
	if [ -z "${VSCTL:-}" ] || [ ! -x "$VSCTL" ]; then
		BENCH_GATE_MISSING="the accept gate is missing: no vsctl with \"run --gate accept\" in this build"
		return 1
	fi
	if ! "$VSCTL" run --help 2>&1 | grep -q -- '--gate'; then
		BENCH_GATE_MISSING="the accept gate is missing: $VSCTL has no \"run --gate accept\""
		return 1
	fi
	return 0
}

bench_gate_fcgi_start() {
	bench_log "gate: $BENCH_GATE_MISSING"
	return 1
}

bench_cleanup() {
	local i
	for ((i = ${#BENCH_PIDS[@]} - 1; i >= 0; i--)); do
		bench_stop "${BENCH_PIDS[i]}"
	done
	BENCH_PIDS=()
	bench_vs_teardown
	[ -n "$BENCH_RUN" ] && [ -z "${BENCH_KEEP:-}" ] && rm -rf "$BENCH_RUN"
	return 0
}

bench_init() {
	[ "$(id -u)" = 0 ] || bench_die "needs root (it creates cgroups and starts Apache as www-data)"
	[ -x "$ADSERVER" ] || bench_die "$ADSERVER is missing; run make first"
	[ -x "$LOADGEN" ] || bench_die "$LOADGEN is missing; run make first"
	[ -x "$APACHE" ] || bench_die "apache2 not found (Debian: apt-get install apache2)"
	[ -e "$APACHE_MODDIR/mod_proxy_fcgi.so" ] ||
		bench_die "$APACHE_MODDIR/mod_proxy_fcgi.so is missing"
	BENCH_RUN=$(mktemp -d /tmp/vsd-bench.XXXXXX) || bench_die "mktemp failed"
	chmod 755 "$BENCH_RUN"
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM
}

# Medians over the repetitions: "mode b_conns a_rps b_rps a_p50 a_p99 n" per
# mode and B load, from a CSV with the columns mode,rep,b_conns,a_conns,
# a_rps,b_rps,a_p50_ms,a_p99_ms.
bench_medians() {
	awk -F, 'NR > 1 { k = $1 SUBSEP $3; n[k]++; A[k, n[k]] = $5; B[k, n[k]] = $6
		P[k, n[k]] = $7; Q[k, n[k]] = $8; if (!(k in seen)) { seen[k]; order[++no] = k } }
	function med(arr, k, c,   i, j, t, v) {
		for (i = 1; i <= c; i++) v[i] = arr[k, i]
		for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++)
			if (v[j] + 0 < v[i] + 0) { t = v[i]; v[i] = v[j]; v[j] = t }
		return c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2
	}
	END { for (i = 1; i <= no; i++) { k = order[i]; split(k, p, SUBSEP)
		printf "%s %d %.1f %.1f %.2f %.2f %d\n", p[1], p[2], med(A, k, n[k]),
		    med(B, k, n[k]), med(P, k, n[k]), med(Q, k, n[k]), n[k] } }' "$1"
}

# bench_report CSV PNG TITLE "MODES": the table of medians and the plot of
# A's throughput against B's load, one line per mode (paper Figures 11/12).
bench_report() {
	local csv=$1 png=$2 title=$3 modes=$4 med m plot= dat
	med=$(bench_medians "$csv")
	echo
	echo "Medians over repetitions ($csv):"
	printf '%-16s %6s %9s %9s %9s %9s %4s\n' mode b_conns a_rps b_rps a_p50_ms a_p99_ms reps
	awk '{ printf "%-16s %6d %9.1f %9.1f %9.2f %9.2f %4d\n", $1, $2, $3, $4, $5, $6, $7 }' <<<"$med"
	if ! command -v gnuplot >/dev/null; then
		bench_log "gnuplot not found (Debian: apt-get install gnuplot-nox); no plot"
		return 0
	fi
	for m in $modes; do
		dat=$BENCH_RUN/plot-$m.dat
		awk -v m="$m" '$1 == m { print $2, $3 }' <<<"$med" > "$dat"
		[ -s "$dat" ] || continue
		plot="$plot${plot:+, }'$dat' using 1:2 with linespoints lw 2 pt 7 title '$m'"
	done
	[ -n "$plot" ] || return 0
	gnuplot <<EOF || bench_log "gnuplot failed; no plot"
set terminal pngcairo size 800,520 font ',11' noenhanced
set output '$png'
set title '$title'
set xlabel "site B's load (simultaneous connections)"
set ylabel "site A's throughput (requests/s)"
set yrange [0:*]
set grid
set key bottom left
plot $plot
EOF
	[ -s "$png" ] && echo "Plot: $png"
}

bench_csv_header() {
	echo mode,rep,b_conns,a_conns,a_rps,b_rps,a_p50_ms,a_p99_ms,b_p50_ms,b_p99_ms,a_ad_rps,b_ad_rps,a_errors,b_errors,www1_cpu_pct,www2_cpu_pct,outside_cpu_pct,loadgen_cpu_pct > "$1"
}

# bench_run_point MODE REP B [loadgen options]: one point, appended to $CSV:
# sites A ($PORT_A, $A_CONNS connections) and B ($PORT_B, B connections)
# driven by the load generator in its own VS, and the CPU every VS used.
bench_run_point() {
	local mode=$1 rep=$2 b=$3 out t0 t1 u0 u1 w10 w11 w20 w21 l0 l1 a bb
	shift 3
	t0=$(date +%s%N) u0=$(bench_vs_cpu_us "") w10=$(bench_vs_cpu_us www1)
	w20=$(bench_vs_cpu_us www2) l0=$(bench_vs_cpu_us loadgen)
	out=$(bench_loadgen --site "A=127.0.0.1:$PORT_A:$A_CONNS" --site "B=127.0.0.1:$PORT_B:$b" \
	    --paths "$BENCH_RUN/docroot.paths" --duration "$DURATION" --warmup "$WARMUP" "$@") ||
		{ bench_log "$mode: the load generator failed"; return 1; }
	t1=$(date +%s%N) u1=$(bench_vs_cpu_us "") w11=$(bench_vs_cpu_us www1)
	w21=$(bench_vs_cpu_us www2) l1=$(bench_vs_cpu_us loadgen)
	a=$(grep '^A,' <<<"$out") bb=$(grep '^B,' <<<"$out")
	# loadgen CSV: site,conns,duration_s,requests,errors,rps,p50_ms,p99_ms,ad_requests,ad_p50_ms,ad_p99_ms
	awk -F, -v mode="$mode" -v rep="$rep" -v b="$b" -v a_conns="$A_CONNS" \
	    -v wall=$(((t1 - t0) / 1000)) -v tot=$((u1 - u0)) -v w1=$((w11 - w10)) \
	    -v w2=$((w21 - w20)) -v lg=$((l1 - l0)) -v A="$a" -v B="$bb" 'BEGIN {
		split(A, x); split(B, y)
		pct = 100 / wall
		printf "%s,%d,%d,%d,%.1f,%.1f,%.2f,%.2f,%.2f,%.2f,%.1f,%.1f,%d,%d,%.1f,%.1f,%.1f,%.1f\n",
		    mode, rep, b, a_conns, x[6], y[6], x[7], x[8], y[7], y[8],
		    x[9] / x[3], y[9] / y[3], x[5], y[5],
		    w1 * pct, w2 * pct, (tot - w1 - w2 - lg) * pct, lg * pct
	}' >> "$CSV"
	tail -1 "$CSV" | awk -F, '{ printf "  %-16s rep %d  B=%2d  A %7.1f rps (p50 %6.2f ms, p99 %7.2f ms)  B %7.1f rps  cpu%% www1 %5.1f www2 %5.1f outside %5.1f loadgen %5.1f\n",
	    $1, $2, $3, $5, $7, $8, $6, $15, $16, $17, $18 }' >&2
}

