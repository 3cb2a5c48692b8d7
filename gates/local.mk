# SPDX-License-Identifier: GPL-2.0-or-later
# gates: the socket gate (issue 3).  BPF object -> skeleton -> loader
# library that vsd links; its tests and benchmark keep their rules in files
# of their own, included at the end.

noinst_HEADERS += gates/socket.h
EXTRA_DIST += gates/socket.bpf.c

# CO-RE: vmlinux.h comes from the running kernel's BTF at build time.
# -mcpu=v3: the atomic compare-and-swap of the connection table (Linux 5.12+).
BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -Wall -Wno-unused-function

gates/vmlinux.h:
	$(AM_V_GEN)$(MKDIR_P) gates && \
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && \
	mv -f $@.tmp $@

gates/socket.bpf.o: $(srcdir)/gates/socket.bpf.c $(srcdir)/gates/socket.h gates/vmlinux.h
	$(AM_V_GEN)$(CLANG) $(BPF_CFLAGS) -I$(builddir)/gates -I$(srcdir)/gates \
		$(LIBBPF_CFLAGS) -c $(srcdir)/gates/socket.bpf.c -o $@

gates/socket.skel.h: gates/socket.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/socket.bpf.o name socket_bpf > $@.tmp && \
	mv -f $@.tmp $@

BUILT_SOURCES += gates/vmlinux.h gates/socket.skel.h
CLEANFILES += gates/vmlinux.h gates/socket.bpf.o gates/socket.skel.h

# The loader (vsd/gate-socket*.c) as a library: vsd and the tests link it.
noinst_LIBRARIES += vsd/libgatesocket.a
vsd_libgatesocket_a_SOURCES = \
	vsd/gate-socket.c vsd/gate-socket.h vsd/gate-socket-priv.h \
	vsd/gate-socket-attach.c vsd/gate-socket-conns.c \
	vsd/tos.c vsd/tos.h
nodist_vsd_libgatesocket_a_SOURCES = gates/socket.skel.h
vsd_libgatesocket_a_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
GATESOCKET_LIBS = vsd/libgatesocket.a vsd/libvsd.a $(LIBBPF_LIBS) -lelf -lz


# vsd itself: the daemon side of the gate (the core's rules are in vsd/local.mk).
vsd_vsd_SOURCES += vsd/gate-vs.c vsd/gate-vs.h vsd/cmd-conns.c
vsd_vsd_LDADD += $(GATESOCKET_LIBS)

include tests/socket-gate.mk
include benchmarks/connrate.mk
