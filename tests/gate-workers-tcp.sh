#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gate-workers.sh with the pool on 127.0.0.1: under the default --fast
# on, a thread let through takes the kernel's next connection whatever its
# VS, so a worker limit turns the fast path off (vsctl-run(8), Workers).
WORKERS_TCP=1
. "${top_srcdir:-.}/tests/gate-workers.sh"
