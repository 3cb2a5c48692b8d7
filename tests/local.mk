# SPDX-License-Identifier: GPL-2.0-or-later
# Unit tests: no root needed.
UNIT_TESTS = tests/unit/test-util tests/unit/test-state tests/unit/test-proto \
	tests/unit/test-cgroup-v2
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
noinst_HEADERS += tests/unit/tap.h
tests_unit_test_util_LDADD = vsd/libvsd.a
tests_unit_test_state_LDADD = vsd/libvsd.a
tests_unit_test_proto_LDADD = vsd/libvsd.a
tests_unit_test_cgroup_v2_LDADD = vsd/libvsd.a
