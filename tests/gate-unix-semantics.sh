#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# accept(2)'s semantics under the gate (tests/gate-semantics.sh: blocking,
# non-blocking, an event loop woken by the gate, accept4 flags, the peer
# address, EINTR, exactly once x 10,000) on a Unix stream listener.
GATE_UNIX=1
export GATE_UNIX
exec sh "${top_srcdir:-.}/tests/gate-semantics.sh"
