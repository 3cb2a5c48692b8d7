# SPDX-License-Identifier: GPL-2.0-or-later
# gates/accept: the accept gate. Everything but main() is one library,
# libgateaccept.a, that vsd-gate, the unit tests and the benchmarks link;
# vsd-gate is an internal helper, started by `vsctl run`, so it is installed
# in $(pkglibexecdir). The per-accept path starts at gate_notify() in gate.c.
# Tests: tests/gate-semantics.sh, tests/gate-policy.sh, tests/gate-vsd.sh,
# tests/gate-push.sh (the table vsd pushes),
# tests/unit/test-gate-*.c.
noinst_LIBRARIES += gates/accept/libgateaccept.a
gates_accept_libgateaccept_a_SOURCES = \
	gates/accept/gate.h \
	gates/accept/profile.h \
	gates/accept/seccomp-compat.h \
	gates/accept/gate.c \
	gates/accept/queue.c \
	gates/accept/share.c \
	gates/accept/rebind.c \
	gates/accept/rcu-warm.c \
	gates/accept/classify.c \
	gates/accept/fcgi.h \
	gates/accept/fcgi.c \
	gates/accept/hold.c \
	gates/accept/wakeup.c \
	gates/accept/vs-table.c \
	gates/accept/vs-table-vsd.c \
	gates/accept/decide.c \
	gates/accept/status.c \
	gates/accept/unixpeer.c \
	gates/accept/unixpeer.h \
	gates/accept/charge.c \
	gates/accept/fastpath.c \
	gates/accept/records.c \
	gates/accept/pmqos.c
nodist_gates_accept_libgateaccept_a_SOURCES = gates/accept/unixpeer.skel.h
gates_accept_libgateaccept_a_CFLAGS = $(AM_CFLAGS) $(LIBSECCOMP_CFLAGS) $(LIBBPF_CFLAGS)
GATEACCEPT_LIBS = gates/accept/libgateaccept.a rules/librules.a \
	gates/socket/libgatesocket.a lib/libvsd.a \
	$(LIBSECCOMP_LIBS) $(LIBBPF_LIBS) -lelf -lz -lm

# The Unix peer iterator (unixpeer.bpf.c), built like the socket gate's
# programs, with the same vmlinux.h (CO-RE).
EXTRA_DIST += gates/accept/unixpeer.bpf.c
gates/accept/unixpeer.bpf.o: $(srcdir)/gates/accept/unixpeer.bpf.c $(srcdir)/gates/accept/unixpeer.h \
		gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) gates/accept && $(CLANG) $(BPF_CFLAGS) $(BPF_INCLUDES) \
		-I$(srcdir)/gates/accept -c $(srcdir)/gates/accept/unixpeer.bpf.c -o $@
gates/accept/unixpeer.skel.h: gates/accept/unixpeer.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/accept/unixpeer.bpf.o name unixpeer_bpf > $@.tmp && \
	mv -f $@.tmp $@
BUILT_SOURCES += gates/accept/unixpeer.skel.h
CLEANFILES += gates/accept/unixpeer.bpf.o gates/accept/unixpeer.skel.h


pkglibexec_PROGRAMS += gates/accept/vsd-gate
gates_accept_vsd_gate_SOURCES = gates/accept/vsd-gate.c gates/accept/supervisor.h \
	gates/accept/service.c
gates_accept_vsd_gate_CFLAGS = $(AM_CFLAGS) $(LIBSECCOMP_CFLAGS)
gates_accept_vsd_gate_LDADD = $(GATEACCEPT_LIBS)

# The accept shim (shim.c), a shared object vsd-gate puts in the service's
# LD_PRELOAD; installed next to vsd-gate, where vsd-gate looks for it. Built
# without the sanitizers: it is loaded into services that are not.
pkglibexec_PROGRAMS += gates/accept/vsd-gate-shim.so
gates_accept_vsd_gate_shim_so_SOURCES = gates/accept/shim.c
gates_accept_vsd_gate_shim_so_CFLAGS = $(WARN_CFLAGS) -fPIC -fvisibility=default
gates_accept_vsd_gate_shim_so_LDFLAGS = -shared -Wl,-z,defs -Wl,-z,now
gates_accept_vsd_gate_shim_so_LDADD = -ldl
