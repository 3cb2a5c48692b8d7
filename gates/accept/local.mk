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
	gates/accept/listener.c \
	gates/accept/drain.c \
	gates/accept/enqueue.c \
	gates/accept/handover.c \
	gates/accept/place.c \
	gates/accept/answer.c \
	gates/accept/install.c \
	gates/accept/queue.c \
	gates/accept/share.c \
	gates/accept/rebind.c \
	gates/accept/rcu-warm.c \
	gates/accept/sched.c \
	gates/accept/classify.c \
	gates/accept/fcgi.h \
	gates/accept/fcgi.c \
	gates/accept/hold.c \
	gates/accept/wakeup.c \
	gates/accept/vs-table.c \
	gates/accept/vs-table-vsd.c \
	gates/accept/vsd-ask.c \
	gates/accept/decide.c \
	gates/accept/decision.h \
	gates/accept/decision.c \
	gates/accept/fp-decision.c \
	gates/accept/trace.c \
	gates/accept/status.c \
	gates/accept/unixpeer.c \
	gates/accept/unixpeer.h \
	gates/accept/charge.c \
	gates/accept/fp.h \
	gates/accept/fastpath.c \
	gates/accept/thread-exit.c \
	gates/accept/fp-model.c \
	gates/accept/fp-ring.c \
	gates/accept/records.c \
	gates/accept/refuse.c \
	gates/accept/pmqos.c \
	gates/accept/workers.c \
	gates/accept/dbthreads.c \
	gates/accept/dbacct.c \
	gates/accept/dbcap.c \
	gates/accept/dbcap.h \
	gates/accept/dbtree.c \
	gates/accept/dbtree.h \
	gates/accept/dbthreads.h
nodist_gates_accept_libgateaccept_a_SOURCES = gates/accept/unixpeer.skel.h \
	gates/accept/dbthreads.skel.h
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

# The libFuzzer harness of the FastCGI param parser and the classifier by
# content (fuzz-fcgi.c), built as rules/fuzz-rules is; tests/fcgi-fuzz.sh
# runs it for a bounded time, benchmarks/fcgi-fuzz for 10 million inputs.
FCGI_FUZZ_SRCS = $(srcdir)/gates/accept/fuzz-fcgi.c $(srcdir)/gates/accept/fcgi.c \
	$(RULES_LIB_FUZZ_SRCS)
EXTRA_DIST += gates/accept/fuzz-fcgi.c
if HAVE_FUZZER
gates/accept/fuzz-fcgi$(EXEEXT): $(FCGI_FUZZ_SRCS) $(srcdir)/gates/accept/fcgi.h $(rules_librules_a_SOURCES) $(lib_libvsd_a_SOURCES)
	$(AM_V_CCLD)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) -o $@ $(FCGI_FUZZ_SRCS)
CLEANFILES += gates/accept/fuzz-fcgi$(EXEEXT)
endif

# The database mode's program (dbthreads.bpf.c), built like unixpeer's.
EXTRA_DIST += gates/accept/dbthreads.bpf.c
gates/accept/dbthreads.bpf.o: $(srcdir)/gates/accept/dbthreads.bpf.c \
		$(srcdir)/gates/accept/dbthreads.h $(srcdir)/gates/socket/gated.bpf.h \
		$(srcdir)/gates/socket/socket.h gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) gates/accept && $(CLANG) $(BPF_CFLAGS) $(BPF_INCLUDES) \
		-I$(srcdir)/gates/accept \
		-c $(srcdir)/gates/accept/dbthreads.bpf.c -o $@
gates/accept/dbthreads.skel.h: gates/accept/dbthreads.bpf.o
	$(AM_V_GEN)$(BPFTOOL) gen skeleton gates/accept/dbthreads.bpf.o name dbthreads_bpf > $@.tmp && \
	mv -f $@.tmp $@
BUILT_SOURCES += gates/accept/dbthreads.skel.h
CLEANFILES += gates/accept/dbthreads.bpf.o gates/accept/dbthreads.skel.h
