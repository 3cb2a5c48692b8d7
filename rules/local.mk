# SPDX-License-Identifier: GPL-2.0-or-later
# rules: the rule-file library (vsrules(5)): load, check, compile, query,
# dump; and its libFuzzer harness. vsctl checks files with it, vsd applies
# them (vsd/apply.c).
# Tests: tests/rules-*.sh with the golden files in tests/rules/,
# tests/unit/test-rules.c.
noinst_LIBRARIES += rules/librules.a
rules_librules_a_SOURCES = \
	rules/rules.h rules/rules.c \
	rules/ctx.h rules/ctx.c \
	rules/names.h rules/names.c \
	rules/nexpr.c rules/words.c rules/pat.h rules/pat.c \
	rules/attrs.h rules/norm.c rules/parse-site.c rules/content.c rules/attrs.c \
	rules/lex.h rules/lex.c \
	rules/parse.h rules/parse.c rules/parse-decl.c rules/parse-rule.c \
	rules/parse-remote.c rules/check-remote.c rules/prefix.c \
	rules/expand.c \
	rules/open.c rules/file.c \
	rules/check.c rules/budget.c rules/net.c rules/net.h \
	rules/compile.c \
	rules/query.c \
	rules/dump.c rules/write.c

RULES_EXAMPLES = \
	rules/examples/debian-php-fpm.rules \
	rules/examples/fcgi-insulation.rules \
	rules/examples/hosting.rules \
	rules/examples/hosting-plans.rules \
	rules/examples/reseller.rules
dist_noinst_DATA += $(RULES_EXAMPLES)

# The libFuzzer harness: the library's sources built again with clang's
# fuzzer, address and undefined-behaviour sanitizers (the gcc-built
# librules.a has no coverage); UBSan aborts, so libFuzzer keeps the input.
RULES_FUZZ_SRCS = $(srcdir)/rules/fuzz-rules.c $(RULES_LIB_FUZZ_SRCS)
RULES_LIB_FUZZ_SRCS = \
	$(srcdir)/rules/rules.c $(srcdir)/rules/ctx.c $(srcdir)/rules/names.c \
	$(srcdir)/rules/lex.c $(srcdir)/rules/parse.c $(srcdir)/rules/parse-decl.c \
	$(srcdir)/rules/parse-rule.c $(srcdir)/rules/parse-remote.c $(srcdir)/rules/check-remote.c $(srcdir)/rules/prefix.c $(srcdir)/rules/expand.c $(srcdir)/rules/file.c $(srcdir)/rules/open.c \
	$(srcdir)/rules/check.c $(srcdir)/rules/budget.c $(srcdir)/rules/net.c $(srcdir)/rules/compile.c \
	$(srcdir)/rules/query.c $(srcdir)/rules/dump.c $(srcdir)/rules/write.c \
	$(srcdir)/rules/nexpr.c $(srcdir)/rules/words.c $(srcdir)/rules/pat.c \
	$(srcdir)/rules/norm.c $(srcdir)/rules/parse-site.c $(srcdir)/rules/content.c \
	$(srcdir)/rules/attrs.c \
	$(srcdir)/lib/util.c $(srcdir)/lib/buf.c $(srcdir)/lib/log.c $(srcdir)/lib/privs.c \
	$(srcdir)/lib/netrate.c $(srcdir)/lib/file-replace.c
EXTRA_DIST += rules/fuzz-rules.c rules/README.md
if HAVE_FUZZER
rules/fuzz-rules$(EXEEXT): $(RULES_FUZZ_SRCS) $(rules_librules_a_SOURCES) $(lib_libvsd_a_SOURCES)
	$(AM_V_CCLD)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined $(DEFS) $(DEFAULT_INCLUDES) $(AM_CPPFLAGS) $(CPPFLAGS) -o $@ $(RULES_FUZZ_SRCS)
CLEANFILES += rules/fuzz-rules$(EXEEXT)
endif

