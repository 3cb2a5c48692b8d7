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

# Integration tests: root, the real binaries, the real kernel. Each starts its
# own vsd with its own socket, state directory and cgroup root.
INTEGRATION_TESTS = tests/vsd-lifecycle.sh tests/vsd-limits.sh tests/vsd-restart.sh \
	tests/vsd-security.sh tests/vsd-badinput.sh tests/vsd-protocol.sh \
	tests/vsd-cpu-split.sh
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib.sh
