# SPDX-License-Identifier: GPL-2.0-or-later
# Socket gate tests (issue 3); included from gates/local.mk.
check_PROGRAMS += tests/sg-helper tests/sg-loader tests/sg-table
tests_sg_helper_SOURCES = tests/sg-helper.c
tests_sg_loader_SOURCES = tests/sg-loader.c
tests_sg_loader_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_sg_loader_LDADD = $(GATESOCKET_LIBS)
# Makes, fills and probes connection tables (also for the accept-gate tests).
tests_sg_table_SOURCES = tests/sg-table.c
tests_sg_table_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_sg_table_LDADD = vsd/libvsd.a $(LIBBPF_LIBS)

TESTS += tests/socket-gate.sh tests/socket-gate-vsd.sh
dist_noinst_SCRIPTS += tests/socket-gate.sh tests/socket-gate-vsd.sh

# The real gate with a fault the verifier refuses, for the "verifier error" test.
check_DATA = tests/sg-broken.bpf.o
tests/sg-broken.bpf.o: $(srcdir)/gates/socket.bpf.c $(srcdir)/gates/socket.h gates/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) tests && $(CLANG) $(BPF_CFLAGS) -DVSD_VERIFIER_FAULT \
		-I$(builddir)/gates -I$(srcdir)/gates $(LIBBPF_CFLAGS) \
		-c $(srcdir)/gates/socket.bpf.c -o $@
CLEANFILES += tests/sg-broken.bpf.o

# The real gate with an 8-slot connection table, for the collision and
# "table full" tests.
check_DATA += tests/sg-small.bpf.o
tests/sg-small.bpf.o: $(srcdir)/gates/socket.bpf.c $(srcdir)/gates/socket.h gates/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) tests && $(CLANG) $(BPF_CFLAGS) -DVSD_CONNS_MAX=8 \
		-I$(builddir)/gates -I$(srcdir)/gates $(LIBBPF_CFLAGS) \
		-c $(srcdir)/gates/socket.bpf.c -o $@
CLEANFILES += tests/sg-small.bpf.o

# The connection table from user space (vsd/conntab.c) on a real BPF array.
check_PROGRAMS += tests/unit/test-conntab
tests_unit_test_conntab_SOURCES = tests/unit/test-conntab.c
tests_unit_test_conntab_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_unit_test_conntab_LDADD = vsd/libvsd.a $(LIBBPF_LIBS)
TESTS += tests/unit/test-conntab

# TOS / DSCP / mark parsing (vsd/util.c) and DSCP names (vsd/tos.c).
check_PROGRAMS += tests/unit/test-tos
tests_unit_test_tos_SOURCES = tests/unit/test-tos.c
tests_unit_test_tos_LDADD = vsd/libgatesocket.a vsd/libvsd.a
TESTS += tests/unit/test-tos
