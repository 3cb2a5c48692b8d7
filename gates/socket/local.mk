# SPDX-License-Identifier: GPL-2.0-or-later
# gates/socket: the socket gate. socket.bpf.c (kernel side, with the layout
# it shares with user space in socket.h) -> socket.bpf.o -> socket.skel.h ->
# the loader library (socket*.c) that vsd links, plus the reader of its
# connection table (conntab.c) that the accept gate links.
# Tests: tests/socket-gate.sh, tests/socket-gate-vsd.sh,
# tests/unit/test-conntab.c, tests/unit/test-tos.c.

noinst_HEADERS += gates/socket/socket.h
EXTRA_DIST += gates/socket/socket.bpf.c gates/socket/gated.bpf.h gates/socket/records.bpf.c

# CO-RE: vmlinux.h comes from the running kernel's BTF at build time.
# -mcpu=v3: the atomic compare-and-swap of the connection table (Linux 5.12+).
BPF_CFLAGS = -g -O2 -target bpf -mcpu=v3 -Wall -Wno-unused-function
BPF_INCLUDES = -I$(builddir)/gates/socket -I$(srcdir)/gates/socket $(LIBBPF_CFLAGS)

gates/socket/vmlinux.h:
	$(AM_V_GEN)$(MKDIR_P) gates/socket && \
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && \
	mv -f $@.tmp $@

gates/socket/socket.bpf.o: $(srcdir)/gates/socket/socket.bpf.c $(srcdir)/gates/socket/socket.h \
		$(srcdir)/gates/socket/gated.bpf.h gates/socket/vmlinux.h
	$(AM_V_GEN)$(CLANG) $(BPF_CFLAGS) $(BPF_INCLUDES) -c $(srcdir)/gates/socket/socket.bpf.c -o $@

gates/socket/socket.skel.h: gates/socket/socket.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/socket/socket.bpf.o name socket_bpf > $@.tmp && \
	mv -f $@.tmp $@

# The accept gates' accept records (records.bpf.c), loaded with the gate.
gates/socket/records.bpf.o: $(srcdir)/gates/socket/records.bpf.c $(srcdir)/gates/socket/socket.h \
		$(srcdir)/gates/socket/gated.bpf.h gates/socket/vmlinux.h
	$(AM_V_GEN)$(CLANG) $(BPF_CFLAGS) $(BPF_INCLUDES) -c $(srcdir)/gates/socket/records.bpf.c -o $@

gates/socket/records.skel.h: gates/socket/records.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/socket/records.bpf.o name records_bpf > $@.tmp && \
	mv -f $@.tmp $@

BUILT_SOURCES += gates/socket/vmlinux.h gates/socket/socket.skel.h gates/socket/records.skel.h
CLEANFILES += gates/socket/vmlinux.h gates/socket/socket.bpf.o gates/socket/socket.skel.h \
	gates/socket/records.bpf.o gates/socket/records.skel.h

# The loader and the table reader as one library; a program that needs only
# the reader (the accept gate) pulls in only conntab.o.
noinst_LIBRARIES += gates/socket/libgatesocket.a
gates_socket_libgatesocket_a_SOURCES = \
	gates/socket/gate-socket.h gates/socket/socket-priv.h \
	gates/socket/socket.c gates/socket/socket-attach.c gates/socket/socket-conns.c \
	gates/socket/conntab.c gates/socket/conntab.h gates/socket/bpf-log.c \
	gates/socket/tos.c gates/socket/tos.h
nodist_gates_socket_libgatesocket_a_SOURCES = gates/socket/socket.skel.h \
	gates/socket/records.skel.h
gates_socket_libgatesocket_a_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
GATESOCKET_LIBS = gates/socket/libgatesocket.a lib/libvsd.a $(LIBBPF_LIBS) -lelf -lz
