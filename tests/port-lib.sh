# SPDX-License-Identifier: GPL-2.0-or-later
# POSIX sh, sourced by tests/lib.sh and tests/gate-lib.sh.

# test_port: a base port for this test's listeners (it may use the next 20),
# below the kernel's ephemeral range: a port there may be any client's own
# at that moment (a load generator beside the suite holds thousands), and a
# listener's bind then fails with EADDRINUSE
test_port() {
	local lo
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ "${lo:-0}" -ge 12000 ] 2>/dev/null || lo=32768
	echo $((10000 + $$ % (lo - 10000 - 20)))
}
