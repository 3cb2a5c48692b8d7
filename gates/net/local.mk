# SPDX-License-Identifier: GPL-2.0-or-later
# gates/net: the kernel side of the VSs' network shares. netcls.bpf.c (a
# cls_bpf classifier by cgroup, its map layout in netcls.h) -> netcls.skel.h
# -> its loader (netcls.c); tc.c makes the HTB qdisc, classes and filter
# over rtnetlink (libmnl). vsd/netshare.c decides what they hold.
# Tests: tests/net-share.sh.

noinst_HEADERS += gates/net/netcls.h
EXTRA_DIST += gates/net/netcls.bpf.c

# vmlinux.h is the socket gate's (gates/socket/local.mk).
gates/net/netcls.bpf.o: $(srcdir)/gates/net/netcls.bpf.c $(srcdir)/gates/net/netcls.h \
		gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) gates/net && \
	$(CLANG) $(BPF_CFLAGS) -I$(builddir)/gates/socket -I$(srcdir)/gates/net $(LIBBPF_CFLAGS) \
		-c $(srcdir)/gates/net/netcls.bpf.c -o $@

gates/net/netcls.skel.h: gates/net/netcls.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/net/netcls.bpf.o name netcls_bpf > $@.tmp && \
	mv -f $@.tmp $@

BUILT_SOURCES += gates/net/netcls.skel.h
CLEANFILES += gates/net/netcls.bpf.o gates/net/netcls.skel.h

noinst_LIBRARIES += gates/net/libgatenet.a
gates_net_libgatenet_a_SOURCES = \
	gates/net/netcls.c gates/net/netcls-load.h \
	gates/net/tc.c gates/net/tc.h
nodist_gates_net_libgatenet_a_SOURCES = gates/net/netcls.skel.h
gates_net_libgatenet_a_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS) $(LIBMNL_CFLAGS)
GATENET_LIBS = gates/net/libgatenet.a $(LIBMNL_LIBS)
