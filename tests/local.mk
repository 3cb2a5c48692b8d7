# SPDX-License-Identifier: GPL-2.0-or-later
# tests: every test of the tree, run by 'make check' through automake's TAP
# driver. Unit tests (tests/unit/, C, no root) first; then the integration
# tests, which run the real binaries against the real kernel as root, each
# with its own private vsd (tests/lib.sh).

# --- Unit tests: no root needed.
UNIT_TESTS = tests/unit/test-util tests/unit/test-state tests/unit/test-proto \
	tests/unit/test-cgroup-v2 tests/unit/test-cgroup-handle tests/unit/test-rules \
	tests/unit/test-tos \
	tests/unit/test-conntab tests/unit/test-gate-queue tests/unit/test-gate-share \
	tests/unit/test-gate-workers \
	tests/unit/test-gate-vs-table tests/unit/test-rules-write \
	tests/unit/test-rules-attrs tests/unit/test-fcgi tests/unit/test-buf \
	tests/unit/test-import-fold tests/unit/test-gate-decide
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
noinst_HEADERS += tests/unit/tap.h tests/unit/attrs-oracle.h tests/unit/cgh-peek.h
tests_unit_test_util_LDADD = lib/libvsd.a
tests_unit_test_state_LDADD = vsd/libregistry.a lib/libvsd.a
tests_unit_test_proto_LDADD = lib/libvsd.a
# The JSON string writer: valid UTF-8 whatever it is given (lib/buf.c).
tests_unit_test_buf_LDADD = lib/libvsd.a
tests_unit_test_cgroup_v2_LDADD = lib/libvsd.a
# The accept gate's cgroup handle, on a fake tree, as on hybrid and pure v2.
tests_unit_test_cgroup_handle_LDADD = lib/libvsd.a
tests_unit_test_rules_LDADD = rules/librules.a lib/libvsd.a
tests_unit_test_rules_write_LDADD = rules/librules.a lib/libvsd.a
# vsctl import's name expressions, read back by the rule library.
tests_unit_test_import_fold_SOURCES = tests/unit/test-import-fold.c vsctl/import-fold.c
tests_unit_test_import_fold_LDADD = rules/librules.a lib/libvsd.a
# Sites and content rules: the accept gate's query by request content.
tests_unit_test_rules_attrs_LDADD = rules/librules.a lib/libvsd.a
# TOS / DSCP / mark parsing (lib/util.c) and DSCP names (gates/socket/tos.c).
tests_unit_test_tos_LDADD = gates/socket/libgatesocket.a lib/libvsd.a
# The connection table from user space (gates/socket/conntab.c) on a real BPF array.
tests_unit_test_conntab_SOURCES = tests/unit/test-conntab.c tests/conntab-write.c tests/conntab-write.h
tests_unit_test_conntab_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_unit_test_conntab_LDADD = gates/socket/libgatesocket.a lib/libvsd.a $(LIBBPF_LIBS)
# The accept gate's queues and aging, the remaining share, the VS table and
# the accepted connection's key (gates/accept/, gates/socket/conntab.c).
tests_unit_test_gate_queue_LDADD = $(GATEACCEPT_LIBS)
# The accept gate's decision replaying traces of the real gate and traces
# that state one property each (gates/accept/decision.c).
tests_unit_test_gate_decide_LDADD = $(GATEACCEPT_LIBS)
GATE_DECIDE_TRACES = tests/unit/gate-decide/rec-two-vs.trace \
	tests/unit/gate-decide/rec-share.trace tests/unit/gate-decide/rec-prefork.trace \
	tests/unit/gate-decide/rec-insulation.trace tests/unit/gate-decide/rec-hosting.trace \
	tests/unit/gate-decide/share-order.trace tests/unit/gate-decide/empty-vs.trace \
	tests/unit/gate-decide/dead-skipped.trace tests/unit/gate-decide/rule-change.trace \
	tests/unit/gate-decide/unknown-vs.trace tests/unit/gate-decide/requeue-head.trace \
	tests/unit/gate-decide/aging.trace tests/unit/gate-decide/stay.trace \
	tests/unit/gate-decide/sites.rules tests/unit/gate-decide/sites-home.rules \
	tests/unit/gate-decide/stay.rules \
	tests/unit/gate-decide/fast-head.trace tests/unit/gate-decide/fast-direct.trace \
	tests/unit/gate-decide/fast-late-record.trace tests/unit/gate-decide/fast-reset.trace \
	tests/unit/gate-decide/workers-limit.trace \
	tests/unit/gate-decide/workers.rules tests/unit/gate-decide/rec-workers.trace \
	tests/unit/gate-decide/gate-workers.rules
dist_noinst_DATA += $(GATE_DECIDE_TRACES)
dist_noinst_SCRIPTS += tests/unit/gate-decide/record.sh
tests_unit_test_gate_share_LDADD = $(GATEACCEPT_LIBS)
tests_unit_test_gate_vs_table_LDADD = $(GATEACCEPT_LIBS)
# A VS's limit on the pool's workers (gates/accept/workers.c).
tests_unit_test_gate_workers_LDADD = $(GATEACCEPT_LIBS)
# The FastCGI records the accept gate peeks at (gates/accept/fcgi.c): real
# captures from Apache and cgi-fcgi, built corner cases, malformed input.
tests_unit_test_fcgi_LDADD = $(GATEACCEPT_LIBS)
noinst_HEADERS += tests/unit/fcgi-records.h

# --- The test scripts themselves: each condition inside its assertion.
TESTS += tests/lint-tests.sh
dist_noinst_SCRIPTS += tests/lint-tests.sh

# --- vsd and vsctl against the real kernel.
VSD_TESTS = tests/vsd-lifecycle.sh tests/vsd-limits.sh tests/vsd-restart.sh \
	tests/vsd-security.sh tests/vsd-badinput.sh tests/vsd-protocol.sh tests/vsd-input.sh \
	tests/vsd-member-apply.sh \
	tests/vsd-cpu-split.sh tests/services.sh tests/vsd-ctl-flood.sh \
	tests/services-prune.sh tests/services-unit.sh tests/service-user.sh tests/vsd-drift.sh \
	tests/hostile.sh \
	tests/vsd-events.sh tests/vsd-metrics.sh tests/vsd-metrics-dir.sh \
	tests/vsctl-cli.sh tests/vsctl-completion.sh tests/import.sh
TESTS += $(VSD_TESTS)
dist_noinst_SCRIPTS += $(VSD_TESTS) tests/ctl-attack.py
dist_noinst_DATA += tests/lib.sh tests/vsd-harness.sh tests/port-lib.sh
# hostile.sh's table of hostile inputs
dist_noinst_DATA += tests/hostile.tab
# The VM tier's guest side (scripts/test --vm).
dist_noinst_SCRIPTS += tests/vm/guest.sh tests/vm/package.sh tests/vm/selftest.sh \
	tests/vm/favordynmods.sh tests/vm/migrate.sh

# --- The socket gate (gates/socket/).
# net-probe makes real traffic on loopback and reads it back off the wire;
# socket-gate-ctl drives the loader without vsd; conntab-ctl makes, fills
# and probes connection tables (also for the accept-gate tests).
check_PROGRAMS += tests/net-probe tests/socket-gate-ctl tests/conntab-ctl
tests_net_probe_SOURCES = tests/net-probe.c
tests_socket_gate_ctl_SOURCES = tests/socket-gate-ctl.c
tests_socket_gate_ctl_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_socket_gate_ctl_LDADD = $(GATESOCKET_LIBS)
tests_conntab_ctl_SOURCES = tests/conntab-ctl.c tests/conntab-write.c tests/conntab-write.h
tests_conntab_ctl_CFLAGS = $(AM_CFLAGS) $(LIBBPF_CFLAGS)
tests_conntab_ctl_LDADD = gates/socket/libgatesocket.a lib/libvsd.a $(LIBBPF_LIBS)
TESTS += tests/socket-gate.sh tests/socket-gate-vsd.sh
dist_noinst_SCRIPTS += tests/socket-gate.sh tests/socket-gate-vsd.sh

# --- Network shares (vsd/netshare.c, gates/net/): two namespaces, a veth,
# iperf3 in two VSs.
TESTS += tests/net-share.sh
dist_noinst_SCRIPTS += tests/net-share.sh
dist_noinst_DATA += tests/netns-pair.sh

# The real gate with a fault the verifier refuses, for the "verifier error"
# test, with an 8-slot connection table, for the collision and "table
# full" tests, and with a 256-slot one, which one VS can fill in a test
# while the others' shares are still a few entries each.
check_DATA += tests/sg-broken.bpf.o tests/sg-small.bpf.o tests/sg-mid.bpf.o
tests/sg-broken.bpf.o: $(srcdir)/gates/socket/socket.bpf.c $(srcdir)/gates/socket/socket.h $(srcdir)/gates/socket/gated.bpf.h \
		gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) tests && $(CLANG) $(BPF_CFLAGS) -DVSD_VERIFIER_FAULT $(BPF_INCLUDES) \
		-c $(srcdir)/gates/socket/socket.bpf.c -o $@
tests/sg-small.bpf.o: $(srcdir)/gates/socket/socket.bpf.c $(srcdir)/gates/socket/socket.h $(srcdir)/gates/socket/gated.bpf.h \
		gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) tests && $(CLANG) $(BPF_CFLAGS) -DVSD_CONNS_MAX=8 $(BPF_INCLUDES) \
		-c $(srcdir)/gates/socket/socket.bpf.c -o $@
tests/sg-mid.bpf.o: $(srcdir)/gates/socket/socket.bpf.c $(srcdir)/gates/socket/socket.h $(srcdir)/gates/socket/gated.bpf.h \
		gates/socket/vmlinux.h
	$(AM_V_GEN)$(MKDIR_P) tests && $(CLANG) $(BPF_CFLAGS) -DVSD_CONNS_MAX=256 $(BPF_INCLUDES) \
		-c $(srcdir)/gates/socket/socket.bpf.c -o $@
CLEANFILES += tests/sg-broken.bpf.o tests/sg-small.bpf.o tests/sg-mid.bpf.o

# --- The accept gate (gates/accept/): the "unmodified service" and the
# client the tests drive it with.
check_PROGRAMS += tests/gate-server tests/gate-client tests/cgroup-usage
# A small allocator the limit-events test runs out of memory (vsd-events.sh).
check_PROGRAMS += tests/memhog
tests_gate_server_SOURCES = tests/gate-server.c tests/gate-where.h
tests_gate_server_LDADD = -lpthread
tests_gate_client_SOURCES = tests/gate-client.c
tests_gate_client_LDADD = -lpthread
# A tenant's program trying ways past the gate (gate-escape.sh).
check_PROGRAMS += tests/gate-escape
tests_gate_escape_SOURCES = tests/gate-escape.c tests/gate-where.h
tests_gate_escape_LDADD = -lpthread
# A tenant's seccomp filter stacked on the gate's (gate-nested-notify.sh).
check_PROGRAMS += tests/gate-nested-notify
tests_gate_nested_notify_SOURCES = tests/gate-nested-notify.c tests/gate-where.h
# A cgroup's CPU usage through the backend (lib/cgroup-fast.c), for the
# charging checks on any cgroup layout.
tests_cgroup_usage_LDADD = lib/libvsd.a
GATE_TESTS = tests/gate-semantics.sh tests/gate-policy.sh tests/gate-vsd.sh \
	tests/gate-fair.sh tests/gate-status.sh tests/gate-recreate.sh tests/gate-fast.sh \
	tests/gate-push.sh tests/gate-push-exact.sh tests/gate-trace.sh \
	tests/conntab-quota.sh tests/gate-destroy.sh \
	tests/gate-unix-semantics.sh tests/gate-unix.sh tests/gate-unix-vsd.sh \
	tests/gate-php-fpm.sh tests/gate-fcgi.sh tests/gate-attrs-semantics.sh \
	tests/vsctl-top.sh tests/gate-pmqos.sh tests/gate-sched.sh tests/record-conns.sh tests/gate-escape.sh \
	tests/gate-tfo.sh tests/gate-races.sh \
	tests/gate-workers.sh tests/gate-workers-tcp.sh \
	tests/gate-mariadb-proto.sh tests/gate-mariadb.sh tests/gate-mariadb-acct.sh \
	tests/gate-mariadb-cap.sh tests/gate-mariadb-stop.sh \
	tests/gate-relisten.sh tests/gate-tid.sh tests/gate-nested-notify.sh
TESTS += $(GATE_TESTS)
dist_noinst_SCRIPTS += $(GATE_TESTS)
dist_noinst_DATA += tests/gate-lib.sh

# --- Rule files (rules/, vsd/apply.c, vsctl/check.c).
RULES_GOLDEN = \
	tests/rules/err-arity.out \
	tests/rules/err-arity.rules \
	tests/rules/err-net.out \
	tests/rules/err-net.rules \
	tests/rules/good-net.out \
	tests/rules/good-net.rules \
	tests/rules/good-workers.out \
	tests/rules/good-workers.rules \
	tests/rules/err-workers.out \
	tests/rules/err-workers.rules \
	tests/rules/good-db-cpu.out \
	tests/rules/good-db-cpu.rules \
	tests/rules/err-db-cpu.out \
	tests/rules/err-db-cpu.rules \
	tests/rules/err-cgroup-names.out \
	tests/rules/err-cgroup-names.rules \
	tests/rules/err-duplicate-vs.out \
	tests/rules/err-duplicate-vs.rules \
	tests/rules/warn-group-writable.out \
	tests/rules/warn-group-writable.rules \
	tests/rules/err-include-cycle.inc \
	tests/rules/err-include-cycle.out \
	tests/rules/err-include-cycle.rules \
	tests/rules/err-include-missing.out \
	tests/rules/err-include-missing.rules \
	tests/rules/err-include-proc.out \
	tests/rules/err-include-proc.rules \
	tests/rules/err-include-self.out \
	tests/rules/err-include-self.rules \
	tests/rules/warn-include-writable.inc \
	tests/rules/warn-include-writable.out \
	tests/rules/warn-include-writable.rules \
	tests/rules/err-missing-file.out \
	tests/rules/warn-owner.out \
	tests/rules/warn-owner.rules \
	tests/rules/err-plans.out \
	tests/rules/err-plans.rules \
	tests/rules/err-service.out \
	tests/rules/err-service.rules \
	tests/rules/err-service-user.out \
	tests/rules/err-service-user.rules \
	tests/rules/good-service-protocol.out \
	tests/rules/good-service-protocol.rules \
	tests/rules/err-share-sum.out \
	tests/rules/err-share-sum.rules \
	tests/rules/err-site-eof.out \
	tests/rules/err-site-eof.rules \
	tests/rules/err-sites.out \
	tests/rules/err-sites.rules \
	tests/rules/err-syntax.out \
	tests/rules/err-syntax.rules \
	tests/rules/err-tie.out \
	tests/rules/err-tie.rules \
	tests/rules/err-undeclared-vs.out \
	tests/rules/err-undeclared-vs.rules \
	tests/rules/err-unknown-gate.out \
	tests/rules/err-unknown-gate.rules \
	tests/rules/err-unterminated-tuple.out \
	tests/rules/err-unterminated-tuple.rules \
	tests/rules/err-values.out \
	tests/rules/err-values.rules \
	tests/rules/warn-world-writable.out \
	tests/rules/warn-world-writable.rules \
	tests/rules/good-empty.out \
	tests/rules/good-empty.rules \
	tests/rules/good-paper.out \
	tests/rules/good-paper.rules \
	tests/rules/good-plans.inc \
	tests/rules/good-plans.out \
	tests/rules/good-plans.rules \
	tests/rules/good-priority.out \
	tests/rules/good-priority.rules \
	tests/rules/err-remote.out \
	tests/rules/err-remote.rules \
	tests/rules/good-remote.out \
	tests/rules/good-remote.rules \
	tests/rules/good-reseller.out \
	tests/rules/good-reseller.rules \
	tests/rules/good-service-user.out \
	tests/rules/good-service-user.rules \
	tests/rules/good-sites.out \
	tests/rules/good-sites.rules
dist_noinst_DATA += $(RULES_GOLDEN) tests/rules-lib.sh
RULES_TESTS = tests/rules-golden.sh tests/rules-examples.sh tests/rules-robust.sh \
	tests/rules-socket.sh tests/rules-examples-apply.sh tests/rules-fork.sh \
	tests/rules-fuzz.sh tests/rules-apply.sh tests/rules-path.sh tests/rules-layers.sh
TESTS += $(RULES_TESTS)
dist_noinst_SCRIPTS += $(RULES_TESTS)
dist_noinst_SCRIPTS += tests/fcgi-get.py
# The FastCGI param parser and the classifier under libFuzzer, 20 s.
TESTS += tests/fcgi-fuzz.sh
dist_noinst_SCRIPTS += tests/fcgi-fuzz.sh tests/fcgi-seeds.py
# Classification by content against a hostile client, through real Apache
# and nginx in front of PHP-FPM (tests/fcgi-lib.sh: the pool and its script).
TESTS += tests/classify-hostile.sh
dist_noinst_SCRIPTS += tests/classify-hostile.sh
EXTRA_DIST += tests/fcgi-lib.sh tests/fuzz-lib.sh tests/mariadb-lib.sh tests/bench-tiny-lib.sh
if HAVE_FUZZER
tests/rules-fuzz.log: rules/fuzz-rules$(EXEEXT)
tests/fcgi-fuzz.log: gates/accept/fuzz-fcgi$(EXEEXT)
endif

# --- A few seconds of the insulation and virtual-host benchmarks end to end
# (benchmarks/insulation, benchmarks/vhosts): real Apache, FastCGI, cgroups.
TESTS += tests/insulation-tiny.sh tests/hosting-tiny.sh tests/wordpress-tiny.sh
# Remote gating: hosts as network namespaces (tests/remote-lib.sh)
TESTS += tests/remote-gate.sh tests/remote-haproxy.sh tests/insulation-remote-tiny.sh tests/remote-spoof.sh
dist_noinst_SCRIPTS += tests/remote-gate.sh tests/remote-haproxy.sh tests/insulation-remote-tiny.sh tests/remote-spoof.sh
EXTRA_DIST += tests/remote-lib.sh
dist_noinst_SCRIPTS += tests/insulation-tiny.sh tests/hosting-tiny.sh tests/wordpress-tiny.sh

# The release tarball and the Debian package: complete, and as lintian wants.
TESTS += tests/dist-complete.sh tests/package-lint.sh
dist_noinst_SCRIPTS += tests/dist-complete.sh tests/package-lint.sh

# The unit tests alone (no root, no kernel features) and the integration
# tests alone: the VM tier (tests/vm/guest.sh) runs each list on Debian 12's
# kernel and systemd.
print-unit-tests:
	@echo $(UNIT_TESTS)
print-integration-tests:
	@for t in $(TESTS); do case " $(UNIT_TESTS) " in *" $$t "*) ;; *) echo $$t ;; esac; done
# Where `make install` puts vsctl's bash completion (tests/vsctl-completion.sh).
print-bashcompletiondir:
	@echo $(bashcompletiondir)
# The TAP output of the Python lints (lint-man, lint-gate-*, lint-names, lint-dead).
dist_noinst_DATA += tests/lint_tap.py
# Each measured figure on its benchmark's result page only (no root).
TESTS += tests/lint-figures.sh
dist_noinst_SCRIPTS += tests/lint-figures.sh
# The man pages name every vsctl command, vsd option and rule keyword, and
# stay within their line limits (no root).
TESTS += tests/lint-man.sh
dist_noinst_SCRIPTS += tests/lint-man.sh
# The accept gate's files call downwards only, none over 800 lines (no root).
TESTS += tests/lint-gate-calls.sh
dist_noinst_SCRIPTS += tests/lint-gate-calls.sh
# No file of the accept gate names a cgroup layout: lib/cgroup-handle.h does.
TESTS += tests/lint-gate-layout.sh
dist_noinst_SCRIPTS += tests/lint-gate-layout.sh
# Every path of the tree that a source, script or document names exists, and
# no work-log label (no root).
TESTS += tests/lint-names.sh
dist_noinst_SCRIPTS += tests/lint-names.sh
# Every function of the product is used by it or a benchmark (no root).
TESTS += tests/lint-dead.sh
dist_noinst_SCRIPTS += tests/lint-dead.sh
