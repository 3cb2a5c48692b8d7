# SPDX-License-Identifier: GPL-2.0-or-later
# rules: the rule-file library (vsrules(5)), its check driver, tests and fuzzer.
noinst_LIBRARIES += rules/librules.a
rules_librules_a_SOURCES = \
	rules/rules.h rules/rules.c \
	rules/ctx.h rules/ctx.c \
	rules/names.h rules/names.c \
	rules/lex.h rules/lex.c \
	rules/parse.h rules/parse.c rules/parse-decl.c rules/parse-rule.c \
	rules/expand.c \
	rules/file.c \
	rules/check.c rules/budget.c \
	rules/compile.c \
	rules/query.c \
	rules/dump.c \
	rules/check-main.c

# vsd applies rule files (apply, reload, SIGHUP, --rules); vsctl checks them.
# libvsd again after librules: librules uses it, and static libraries link in order.
vsd_vsd_SOURCES += rules/apply.c rules/apply.h
vsd_vsd_LDADD += rules/librules.a vsd/libvsd.a
vsd_vsctl_LDADD += rules/librules.a vsd/libvsd.a

dist_man_MANS += man/vsrules.5

RULES_EXAMPLES = \
	rules/examples/fcgi-insulation.rules \
	rules/examples/hosting.rules \
	rules/examples/hosting-plans.rules \
	rules/examples/reseller.rules
dist_noinst_DATA += $(RULES_EXAMPLES)

RULES_GOLDEN = \
	tests/rules/err-arity.out \
	tests/rules/err-arity.rules \
	tests/rules/err-duplicate-vs.out \
	tests/rules/err-duplicate-vs.rules \
	tests/rules/err-group-writable.out \
	tests/rules/err-group-writable.rules \
	tests/rules/err-include-cycle.inc \
	tests/rules/err-include-cycle.out \
	tests/rules/err-include-cycle.rules \
	tests/rules/err-include-missing.out \
	tests/rules/err-include-missing.rules \
	tests/rules/err-include-self.out \
	tests/rules/err-include-self.rules \
	tests/rules/err-include-writable.inc \
	tests/rules/err-include-writable.out \
	tests/rules/err-include-writable.rules \
	tests/rules/err-missing-file.out \
	tests/rules/err-owner.out \
	tests/rules/err-owner.rules \
	tests/rules/err-plans.out \
	tests/rules/err-plans.rules \
	tests/rules/err-service.out \
	tests/rules/err-service.rules \
	tests/rules/err-share-sum.out \
	tests/rules/err-share-sum.rules \
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
	tests/rules/err-world-writable.out \
	tests/rules/err-world-writable.rules \
	tests/rules/good-empty.out \
	tests/rules/good-empty.rules \
	tests/rules/good-paper.out \
	tests/rules/good-paper.rules \
	tests/rules/good-plans.inc \
	tests/rules/good-plans.out \
	tests/rules/good-plans.rules \
	tests/rules/good-priority.out \
	tests/rules/good-priority.rules \
	tests/rules/good-reseller.out \
	tests/rules/good-reseller.rules
dist_noinst_DATA += $(RULES_GOLDEN)

TESTS += tests/rules-golden.sh tests/rules-examples.sh tests/rules-robust.sh tests/rules-fuzz.sh \
	tests/rules-apply.sh
dist_noinst_SCRIPTS += tests/rules-golden.sh tests/rules-examples.sh tests/rules-robust.sh \
	tests/rules-fuzz.sh tests/rules-apply.sh

# The libFuzzer harness: the library's sources built again with clang's
# fuzzer and address sanitizer (the gcc-built librules.a has no coverage).
RULES_FUZZ_SRCS = \
	$(srcdir)/rules/fuzz-rules.c \
	$(srcdir)/rules/rules.c $(srcdir)/rules/ctx.c $(srcdir)/rules/names.c \
	$(srcdir)/rules/lex.c $(srcdir)/rules/parse.c $(srcdir)/rules/parse-decl.c \
	$(srcdir)/rules/parse-rule.c $(srcdir)/rules/expand.c $(srcdir)/rules/file.c \
	$(srcdir)/rules/check.c $(srcdir)/rules/budget.c $(srcdir)/rules/compile.c \
	$(srcdir)/rules/query.c $(srcdir)/rules/dump.c \
	$(srcdir)/vsd/util.c $(srcdir)/vsd/buf.c $(srcdir)/vsd/log.c
EXTRA_DIST += rules/fuzz-rules.c rules/README.md tests/rules-lib.sh
if HAVE_FUZZER
rules/fuzz-rules$(EXEEXT): $(RULES_FUZZ_SRCS) $(rules_librules_a_SOURCES)
	$(AM_V_CCLD)$(CLANG) -g -O1 -fsanitize=fuzzer,address $(DEFS) $(DEFAULT_INCLUDES) \
		$(AM_CPPFLAGS) $(CPPFLAGS) -o $@ $(RULES_FUZZ_SRCS)
tests/rules-fuzz.log: rules/fuzz-rules$(EXEEXT)
CLEANFILES += rules/fuzz-rules$(EXEEXT)
endif

# benchmarks/rules-scale: check and apply 1,000 sites; rules-query: the gate's decision cost.
noinst_PROGRAMS += benchmarks/rules-query
benchmarks_rules_query_SOURCES = benchmarks/rules-query.c
benchmarks_rules_query_LDADD = rules/librules.a vsd/libvsd.a
dist_noinst_SCRIPTS += benchmarks/rules-scale

check_PROGRAMS += tests/unit/test-rules
TESTS += tests/unit/test-rules
tests_unit_test_rules_LDADD = rules/librules.a vsd/libvsd.a
