# SPDX-License-Identifier: GPL-2.0-or-later
# benchmarks/experiments: measurements behind design choices, not product
# figures. Each file says which choice it informed; the figures are in
# benchmarks/results/ (linked from benchmarks/RESULTS.md).
#   gate-window        the accept gate's usage window (remaining share)
#   gate-bind-choice   per-thread vs. whole-process re-binding
#   seccomp-floor      the cost of seccomp user notification itself
#   conntab-fill       how full the connection table gets before a refusal
#   supervisor-profile where the accept gate's supervisor spends its time per
#                      accept, against the mechanism's floor (perf)
#   system-profile     where both CPUs' time goes per connection, ungated,
#                      under the floor and under the gate (perf -a)
noinst_PROGRAMS += benchmarks/experiments/gate-window benchmarks/experiments/seccomp-floor \
	benchmarks/experiments/conntab-fill
benchmarks_experiments_gate_window_SOURCES = benchmarks/experiments/gate-window.c
benchmarks_experiments_gate_window_LDADD = $(GATEACCEPT_LIBS)
benchmarks_experiments_seccomp_floor_SOURCES = benchmarks/experiments/seccomp-floor.c
benchmarks_experiments_conntab_fill_SOURCES = benchmarks/experiments/conntab-fill.c
dist_noinst_SCRIPTS += benchmarks/experiments/gate-bind-choice.sh \
	benchmarks/experiments/supervisor-profile.sh benchmarks/experiments/system-profile.sh
