#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# accept(2)'s semantics under the gate (tests/gate-semantics.sh: blocking,
# non-blocking, an event loop woken by the gate, accept4 flags, the peer
# address, EINTR, exactly once x 10,000) while the rules have a site, so
# that every connection is held until its first bytes say what it is
# (gates/accept/hold.c).
GATE_ATTRS=1
export GATE_ATTRS
exec sh "${top_srcdir:-.}/tests/gate-semantics.sh"
