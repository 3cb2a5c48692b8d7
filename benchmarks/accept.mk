# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate's cost per accept (issue 4): benchmarks/accept-cost drives
# benchmarks/acceptbench (accept-and-close server, sequential and concurrent
# clients) with and without the gate. Figures: benchmarks/RESULTS.md.
noinst_PROGRAMS += benchmarks/acceptbench benchmarks/seccomp-floor
benchmarks_seccomp_floor_SOURCES = benchmarks/seccomp-floor.c vsd/seccomp-compat.h
benchmarks_acceptbench_SOURCES = benchmarks/acceptbench.c
benchmarks_acceptbench_LDADD = -lpthread
dist_noinst_SCRIPTS += benchmarks/accept-cost
CLEANFILES += accept-cost.csv
