# SPDX-License-Identifier: GPL-2.0-or-later
# Socket gate cost: connection rate with and without the gate (issue 3).
noinst_PROGRAMS += benchmarks/connrate
benchmarks_connrate_SOURCES = benchmarks/connrate.c
benchmarks_connrate_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
benchmarks_connrate_LDADD = $(GATESOCKET_LIBS) -lm

# How full the connection table gets before an insert is refused (RESULTS.md).
noinst_PROGRAMS += benchmarks/conntab-fill
benchmarks_conntab_fill_SOURCES = benchmarks/conntab-fill.c
