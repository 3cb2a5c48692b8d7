#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The database mode's cap: the rule file's db-cpu holds the CPU MariaDB's
# threads spend on a VS's queries to its cap, with db-burst as the kernel's
# burst. Checked on Debian's MariaDB as a gated "protocol mysql" service:
# where a capped VS's queries run (hybrid: a child of the service's own v1
# cpu cgroup; pure v2: the VS's threaded child), its cgroup's quota; a
# CPU-bound query of a capped VS gets about its cap over seconds while an
# uncapped VS's runs in its own cgroup and is not held to it; a rule change
# moves and re-caps threads without restarting MariaDB; capped VSs together
# get no more than the service's own cap. CPU is read from the serving
# threads' schedstat; the bounds are functional, with their tolerance and
# its reason beside each, not a benchmark.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mariadb-lib.sh"
need_root
need_mariadb

mdb_setup
NCPU=$(getconf _NPROCESSORS_ONLN)
# rules DB-CAP WWW1 WWW3: the home VS's cpu-max (or none) and www1's and
# www3's database settings
rules() {
	w db.rules <<E
vs db cpu 10% ${1:+cpu-max $1}
vs www1 cpu 20% $2
vs www2 cpu 20%
vs www3 cpu 20% $3
service mariadb home db protocol mysql command "exec $MDB_CMD"
E
	vsctl apply "$R/db.rules"
}
check "a rule file with db-cpu and db-burst applies" quiet rules "" "db-cpu 10%" "db-cpu 40% db-burst 200ms"
on_exit "vsctl service stop mariadb"
# nothing below can pass without it
if ! check "MariaDB runs under the gate" wait_until mdb_up; then done_testing; fi
MPID=$(svc mariadb "['pid']")
V2=; [ "$(cg_layout)" = unified ] && V2=1
DBDIR=$(vs_cgroup db cpu)
# where a capped VS's threads run
kid() { if [ -n "$V2" ]; then echo "$DBDIR/$1"; else echo "$DBDIR/db.mariadb/$1"; fi; }
# cpu_path TID: the thread's cgroup in the cpu hierarchy (pure v2: cgroup2),
# relative to the hierarchy's mount
cpu_path() {
	awk -F: '$2 ~ /(^|,)cpu(,|$)/ { c = $3 } $2 == "" { u = $3 } END { print (c != "" ? c : u) }' \
		"/proc/$MPID/task/$1/cgroup" 2>/dev/null
}
# the cpu hierarchy's mount as DBDIR names it: the main thread sits in DBDIR
# (pure v2: in its child "home")
MNT=/sys/fs/cgroup
[ -z "$V2" ] && MNT=${DBDIR%"$(cpu_path "$MPID")"}
# in_dir TID DIR: the thread sits in the cgroup DIR
in_dir() { [ "$MNT$(cpu_path "$1")" = "$2" ]; }
# quota DIR: "QUOTA PERIOD BURST" of the cgroup (v1 or v2 files)
quota() {
	if [ -n "$V2" ]; then
		echo "$(cat "$1/cpu.max") $(cat "$1/cpu.max.burst" 2>/dev/null || echo 0)"
	else
		echo "$(cat "$1/cpu.cfs_quota_us") $(cat "$1/cpu.cfs_period_us") $(cat "$1/cpu.cfs_burst_us" 2>/dev/null || echo 0)"
	fi
}
throttled() { awk '$1 == "nr_throttled" { print $2 }' "$1/cpu.stat"; }

# open_client VS FD: a client of VS on a connection of its own, fed from a
# fifo on FD, its answers unbuffered (--force: a killed query does not end
# it); TID_VS its thread, ID_VS its connection
open_client() {
	rm -f "$RUN/$1.in"
	mkfifo "$RUN/$1.in"
	vsctl exec "$1" -- "$MARIADB" --no-defaults -u root -N -B -n --force -h 127.0.0.1 \
		-P "$MDB_PORT" --protocol=tcp < "$RUN/$1.in" > "$RUN/$1.out" 2>&1 &
	eval "CPID_$1=\$!"
	eval "exec $2> \"\$RUN/\$1.in\""
	echo "SELECT 'tid', TID, ID FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID();" >&"$2"
	wait_until grep -q '^tid' "$RUN/$1.out"
	eval "TID_$1=\$(awk '\$1 == \"tid\" { print \$2 }' \"\$RUN/\$1.out\")"
	eval "ID_$1=\$(awk '\$1 == \"tid\" { print \$3 }' \"\$RUN/\$1.out\")"
}
# stop VS...: end the VSs' running queries (each answers long-done once more)
stop() {
	local v id n
	for v in "$@"; do
		eval "id=\$ID_$v"
		n=$(grep -c long-done "$RUN/$v.out")
		sql_unix -e "KILL QUERY $id" 2>/dev/null
		for _i in $(seq 300); do [ "$(grep -c long-done "$RUN/$v.out")" -gt "$n" ] && break; sleep 0.1; done
	done
}
sched() { cut -d' ' -f1 "/proc/$MPID/task/$1/schedstat"; }

# SHA2 iterations for about 20 s of one CPU here (a loaded host is slower):
# longer than any measurement, ended by stop
us=$(sql_unix -e "SET @t = NOW(6); DO BENCHMARK(300000, SHA2('x', 256));
	SELECT TIMESTAMPDIFF(MICROSECOND, @t, NOW(6))")
N=$(( 300000 * 20000000 / (${us:-100000} + 1) ))
LONG="DO BENCHMARK($N, SHA2('x', 256)); SELECT 'long-done';"

open_client www1 7
open_client www2 8
open_client www3 9
echo "SELECT 1;" >&7; echo "SELECT 1;" >&8; echo "SELECT 1;" >&9
sleep 0.5
diag "threads: www1 $TID_www1, www2 $TID_www2, www3 $TID_www3"
check "a capped VS's query runs in its child under the service ($(kid www1))" \
	wait_until in_dir "$TID_www1" "$(kid www1)"
# pure v2: every VS's queries run in its threaded child; hybrid: in its own cgroup
own2=$(vs_cgroup www2 cpu); [ -n "$V2" ] && own2=$DBDIR/www2
check "an uncapped VS's query runs where it did before caps ($own2)" wait_until in_dir "$TID_www2" "$own2"
q10=$(( 1000 * NCPU * 100000 / 10000 ))
if [ -n "$V2" ]; then
	is "$(quota "$(kid www1)")" "$q10 100000 0" "www1's child: cpu.max is 10% of $NCPU CPUs a 100 ms period, no burst"
else
	is "$(quota "$(kid www1)")" "$q10 100000 0" "www1's child: cfs quota 10% of $NCPU CPUs a 100 ms period, no burst"
	is "$(cat "$(kid www1)/cpu.shares")" "$(cat "$(vs_cgroup www1 cpu)/cpu.shares")" \
		"www1's child has www1's cpu.shares"
fi
# a burst takes a 1 s period: a burst is at most one period's quota
is "$(quota "$(kid www3)")" "$(( 4000 * NCPU * 1000000 / 10000 )) 1000000 200000" \
	"www3's child: 40% over a 1 s period, a 200 ms burst"

# --- a CPU-bound query of capped www1 beside one of uncapped www2
th0=$(throttled "$(kid www1)"); tw0=$(throttled "$own2")
echo "$LONG" >&7; echo "$LONG" >&8
sleep 0.5
a1=$(sched "$TID_www1"); a2=$(sched "$TID_www2"); t0=$(date +%s%N)
sleep 2
b1=$(sched "$TID_www1"); b2=$(sched "$TID_www2"); t1=$(date +%s%N)
r1=$(( (b1 - a1) * 100 / (t1 - t0) )) r2=$(( (b2 - a2) * 100 / (t1 - t0) ))
cap=$(( 10 * NCPU ))	# 10% of the machine, in % of one CPU
diag "over 2 s: capped www1's query used $r1% of a CPU (cap $cap%), uncapped www2's $r2%"
# CFS bandwidth holds the cap to a period's slack: +25% is far above it; the
# lower bound only shows the query ran (a loaded host gives it less)
check "capped www1 got no more than its cap (+25%)" test "$r1" -le $(( cap * 125 / 100 ))
check "capped www1 ran (> 30% of its cap)" test "$r1" -gt $(( cap * 30 / 100 ))
check "www1's child was throttled meanwhile" test "$(throttled "$(kid www1)")" -gt "$th0"
# www2, beside it, is held by nothing: its cgroup was never throttled, and
# under the same load on the host it got more than capped www1
check "uncapped www2's cgroup was not throttled meanwhile" test "$(throttled "$own2")" -eq "$tw0"
check "uncapped www2 got more CPU than capped www1 beside it" test "$r2" -gt "$r1"
stop www1 www2

# --- a rule change: no restart; the cap follows, and threads move at once
check "a new cap for www1 applies" quiet rules "" "db-cpu 5%" "db-cpu 40% db-burst 200ms"
is "$(svc mariadb "['pid']")" "$MPID" "MariaDB was not restarted"
check "www1's child follows its new cap (5%)" \
	wait_until sh -c '[ "$(cat "$1")" = "$2" ]' - \
	"$(kid www1)/$([ -n "$V2" ] && echo cpu.max || echo cpu.cfs_quota_us)" \
	"$(( 500 * NCPU * 100000 / 10000 ))$([ -n "$V2" ] && echo " 100000")"
if [ -z "$V2" ]; then
	check "www1's cap removed: its idle thread moves to www1's own cgroup" quiet rules "" "" \
		"db-cpu 40% db-burst 200ms"
	check "its thread is in www1's own cgroup now" wait_until in_dir "$TID_www1" "$(vs_cgroup www1 cpu)"
	check "and www1's child is removed" wait_until test ! -e "$(kid www1)"
	check "www1 capped again" quiet rules "" "db-cpu 10%" "db-cpu 40% db-burst 200ms"
	check "its idle thread moves into the new child" wait_until in_dir "$TID_www1" "$(kid www1)"
fi

# --- the children together within the service's own cap: the home VS
# capped at 20% of the machine, www1 and www3 each allowed 40% of it
check "the service's home VS capped at 20%" rules 20% "db-cpu 40%" "db-cpu 40%"
svc_cap=$(( 20 * NCPU ))
if [ -z "$V2" ]; then
	hq=$(cat "$DBDIR/cpu.cfs_quota_us")
	check "hybrid: each child's quota within the service's ($hq a 100 ms period)" wait_until sh -c \
		'[ "$(cat "$1/cpu.cfs_quota_us")" -le "$3" ] && [ "$(cat "$2/cpu.cfs_quota_us")" -le "$3" ]' - \
		"$(kid www1)" "$(kid www3)" "$hq"
fi
echo "$LONG" >&7; echo "$LONG" >&9
sleep 0.5
a1=$(sched "$TID_www1"); a3=$(sched "$TID_www3"); t0=$(date +%s%N)
sleep 2
b1=$(sched "$TID_www1"); b3=$(sched "$TID_www3"); t1=$(date +%s%N)
sum=$(( (b1 - a1 + b3 - a3) * 100 / (t1 - t0) ))
diag "over 2 s: www1 $(( (b1 - a1) * 100 / (t1 - t0) ))%, www3 $(( (b3 - a3) * 100 / (t1 - t0) ))% of a CPU; the service's cap $svc_cap%"
check "capped www1 and www3 together got no more than the service's cap (+25%)" \
	test "$sum" -le $(( svc_cap * 125 / 100 ))
check "both ran" test $((b1 - a1)) -gt 0 -a $((b3 - a3)) -gt 0
stop www1 www3
check "caps lifted: the rule file without db-cpu applies" quiet rules "" "" ""
if [ -z "$V2" ]; then
	check "hybrid: no child is left under the service" \
		wait_until sh -c '[ -z "$(ls -d "$1"/*/ 2>/dev/null)" ]' - "$DBDIR/db.mariadb"
fi
exec 7>&- 8>&- 9>&-
wait "$CPID_www1" "$CPID_www2" "$CPID_www3"
done_testing
