# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# For the tests that run a benchmark of benchmarks/lib-bench.sh for a few
# seconds (hosting-tiny.sh, wordpress-tiny.sh). Sourced after lib.sh.

# bench_left_nothing LOG SERVERS: the benchmark whose output is LOG left
# no cgroup of its instance and no process or file of its scratch
# directory (SERVERS names them in the tests' output)
bench_left_nothing() {
	local bench_log=$1 cg run
	read -r cg run < <(sed -n 's/.*cgroups: \([^;]*\); scratch: \(.*\)/\1 \2/p' "$bench_log")
	check "no cgroups left behind" eval '[ -n "$cg" ] && ! VSH_ROOT=$cg vsh_dirs | grep -q . &&
	    ! grep -q "is left behind" "$bench_log"'
	check "no $2 or scratch directory left behind" eval \
	    '[ -n "$run" ] && [ ! -e "$run" ] && ! pgrep -f "$run" >/dev/null'
}
