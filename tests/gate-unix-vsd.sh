#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gate-vsd.sh on a Unix stream listener: `vsctl run`, re-binding,
# charging, reordering, a VS destroyed with queued connections, exactly once
# across a vsd restart and while vsd hangs.
GATE_UNIX=1
export GATE_UNIX
exec sh "${top_srcdir:-.}/tests/gate-vsd.sh"
