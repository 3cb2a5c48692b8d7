#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the dependencies (as root) and build vsd in the source tree.
#   build.sh [--demo | --test]   the packages deps.sh installs for that job
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh "$@"
[ -x configure ] || ./autogen.sh
# configure again whenever the packages deps.sh installs changed since the
# last configure, as when --test follows --demo: what configure finds
# depends on them (the FastCGI devkit builds fcgi-demo/, clang's fuzzer
# runtime rules/fuzz-rules). config.deps keeps their state as it was then.
state=$(./scripts/deps.sh --state)
if [ ! -f Makefile ] || [ "$state" != "$(cat config.deps 2>/dev/null)" ]; then
	./configure --quiet
	printf '%s\n' "$state" >config.deps
fi
make -j"$(nproc)" --no-print-directory -s
