#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# CPU split under contention: two hogs in each of two VSs at 50% and 25%;
# the measured usage ratio is 2:1 within +-0.3. The shares are what the
# kernel's weights enforce, so other load on the machine does not change
# the ratio between the two VSs.
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
check "create big at 50%" vsctl create big --cpu 50%
check "create small at 25%" vsctl create small --cpu 25%
for vs in big big small small; do
	vsctl exec $vs -- sh -c 'while :; do :; done' &
	on_exit "kill $!"
done
sleep 1
b0=$(vsctl show big --json | json 'd["usage"]["cpu_usec"]')
s0=$(vsctl show small --json | json 'd["usage"]["cpu_usec"]')
sleep 6
b1=$(vsctl show big --json | json 'd["usage"]["cpu_usec"]')
s1=$(vsctl show small --json | json 'd["usage"]["cpu_usec"]')
ratio=$(python3 -c "print('%.2f' % (($b1 - $b0) / max(1, $s1 - $s0)))")
diag "big used $(( (b1 - b0) / 1000 )) ms, small $(( (s1 - s0) / 1000 )) ms: ratio $ratio (want 2.00)"
if python3 -c "import sys; sys.exit(0 if abs($ratio - 2.0) <= 0.3 else 1)"; then
	ok "usage ratio $ratio is 2:1 within 0.3"
else
	fail "usage ratio $ratio is 2:1 within 0.3"
fi
check "destroy big --force" vsctl destroy big --force
check "destroy small --force" vsctl destroy small --force
done_testing
