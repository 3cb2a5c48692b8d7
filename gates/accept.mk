# SPDX-License-Identifier: GPL-2.0-or-later
# The accept gate (issue 4): the vsd-gate supervisor, its test server/client
# and its tests. Included from the top-level Makefile.am.
bin_PROGRAMS += vsd/vsd-gate
vsd_vsd_gate_SOURCES = \
	vsd/gate-accept.h \
	vsd/gate-accept-prof.h \
	vsd/gate-accept.c \
	vsd/gate-accept-bind.c \
	vsd/gate-accept-conns.c \
	vsd/gate-accept-kick.c \
	vsd/gate-accept-queue.c \
	vsd/gate-accept-share.c \
	vsd/gate-accept-status.c \
	vsd/gate-accept-vsd.c \
	vsd/gate-accept-vstab.c \
	vsd/gate-accept-warm.c \
	vsd/seccomp-compat.h \
	vsd/supervisor.c
vsd_vsd_gate_CFLAGS = $(AM_CFLAGS) $(LIBSECCOMP_CFLAGS) $(LIBBPF_CFLAGS)
vsd_vsd_gate_LDADD = vsd/libvsd.a $(LIBSECCOMP_LIBS) $(LIBBPF_LIBS) -lm

# The "unmodified service" and the client the tests drive it with.
check_PROGRAMS += tests/gate-server tests/gate-client
tests_gate_server_SOURCES = tests/gate-server.c
tests_gate_server_LDADD = -lpthread
tests_gate_client_SOURCES = tests/gate-client.c
tests_gate_client_LDADD = -lpthread

TESTS += tests/gate-semantics.sh tests/gate-policy.sh tests/gate-vsd.sh
dist_noinst_SCRIPTS += tests/gate-semantics.sh tests/gate-policy.sh tests/gate-vsd.sh
dist_noinst_DATA += tests/gate-lib.sh

# vsd answers the supervisors' "gatetable" request; vsctl has run/services.
vsd_vsd_SOURCES += vsd/cmd-gate.c
vsd_vsctl_SOURCES += vsd/vsctl-run.c vsd/vsctl-run.h

# How the usage window was chosen (benchmarks/RESULTS.md, "accept gate window").
noinst_PROGRAMS += benchmarks/gate-window
benchmarks_gate_window_SOURCES = benchmarks/gate-window.c vsd/gate-accept-share.c \
	vsd/gate-accept-vstab.c
benchmarks_gate_window_CFLAGS = $(AM_CFLAGS)
benchmarks_gate_window_LDADD = vsd/libvsd.a -lm
dist_noinst_SCRIPTS += benchmarks/gate-bind-choice.sh
noinst_PROGRAMS += benchmarks/gate-decision
benchmarks_gate_decision_SOURCES = benchmarks/gate-decision.c vsd/gate-accept-queue.c \
	vsd/gate-accept-share.c vsd/gate-accept-vstab.c
benchmarks_gate_decision_LDADD = vsd/libvsd.a -lm
# the connection map's layout, read by the gate (owned by the socket gate)
noinst_HEADERS += gates/socket.h
include benchmarks/accept.mk
