#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole life of a VS through the real binaries on the real kernel:
# create, list, show, set, exec, attach, destroy; nothing left behind.
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }

check "create www1 at 50%" vsctl create www1 --cpu 50%
check "create www2 at 25% with limits" vsctl create www2 --cpu 25% --cpu-max 40% --mem 256M --pids 64
out=$(vsctl list)
like "$out" '^NAME +CPU' "list prints a header"
like "$out" 'www1 +50% +- ' "list shows www1"
like "$out" 'www2 +25% +40% +256M +64 ' "list shows www2's limits"
is "$(vsctl list --json | json 'len(d)')" 2 "list --json is an array of two"

js=$(vsctl show www1 --json)
for k in name cpu cpu_max mem_max pids_max cgroups procs usage; do
	is "$(echo "$js" | json "'$k' in d")" True "show --json has $k"
done
is "$(echo "$js" | json 'd["cpu"]')" 50 "cpu is the number 50"
is "$(echo "$js" | json 'd["cpu_max"]')" null "cpu_max null when unset"
is "$(echo "$js" | json 'sorted(d["usage"])')" '["cpu_usec", "mem_bytes", "pids"]' "usage fields"
case $(cg_layout) in
hybrid) want=5 ;; unified) want=1 ;; *) want=4 ;;
esac
is "$(echo "$js" | json 'len(d["cgroups"])')" "$want" "one cgroup per hierarchy ($(cg_layout))"
dirs=$(echo "$js" | json '" ".join(d["cgroups"])')
missing=0
for d in $dirs; do
	[ -d "$d" ] || missing=$((missing + 1))
	case $d in */$VSD_ROOT/www1) ;; *) missing=$((missing + 1)) ;; esac
done
is "$missing" 0 "every cgroup directory exists under <own>/$VSD_ROOT/www1"
is "$(vsctl show www2 --json | json 'd["mem_max"], d["pids_max"], d["cpu_max"]')" "(268435456, 64, 40)" \
	"show --json reports the limits"

# exec: the command runs in the VS in every hierarchy, its status passes through.
out=$(vsctl exec www1 -- cat /proc/self/cgroup)
n=$(printf '%s\n' "$out" | grep -cE "/$VSD_ROOT/www1\$")
is "$n" "$want" "exec lands in www1 in all $want hierarchies"
vsctl exec www1 -- sh -c 'exit 7'
is "$?" 7 "exec passes the exit status through"
vsctl exec www1 -- /nonexistent/cmd 2>/dev/null
is "$?" 127 "exec of a missing command exits 127"
vsctl exec nosuch -- true 2>/dev/null
is "$?" 5 "exec into an unknown VS fails (no such VS)"

# attach: a running process moves in, in every hierarchy.
sleep 300 &
p1=$!
on_exit "kill $p1"
check "attach a running process" vsctl attach www2 $p1
check "the process is in www2 everywhere" in_vs $p1 www2
is "$(vsctl show www2 --json | json "$p1 in d['procs']")" True "show lists the pid"
is "$(vsctl show www2 --json | json 'd["usage"]["pids"]')" 1 "usage counts the process"

# set changes limits in place; processes stay.
check "set www2 --cpu 30% --mem 128M" vsctl set www2 --cpu 30% --mem 128M
is "$(vsctl show www2 --json | json 'd["cpu"], d["mem_max"]')" "(30, 134217728)" "set took effect"
check "the process stayed in www2" in_vs $p1 www2
check "set --cpu-max none clears the cap" vsctl set www2 --cpu-max none
is "$(vsctl show www2 --json | json 'd["cpu_max"]')" null "cap cleared"

# destroy refuses while processes live, unless --force.
vsctl destroy www2 2>/dev/null
is "$?" 6 "destroy refuses a VS with processes (conflict)"
check "the process is still alive" kill -0 $p1
www2dirs=$(vsctl show www2 --json | json '" ".join(d["cgroups"])')
check "destroy --force" vsctl destroy www2 --force
sleep 0.2
kill -0 $p1 2>/dev/null
is "$?" 1 "--force killed the process"
left=0
for d in $www2dirs; do [ -e "$d" ] && left=$((left + 1)); done
is "$left" 0 "no cgroup of www2 left after destroy"
check "destroy www1" vsctl destroy www1
is "$(vsctl list --json)" "[]" "nothing listed"

vsd_stop
left=0
for d in $(cg_root_dirs "$VSD_ROOT"); do [ -e "$d" ] && left=$((left + 1)); done
is "$left" 0 "vsd with no VSs removes its cgroup root on exit"
# Under systemd the scope too, before vsd has exited (vsd waits for systemd).
is "$(vsh_dirs | tr '\n' ' ')" "" "nothing of the instance is left once vsd has exited (scope included)"
done_testing
