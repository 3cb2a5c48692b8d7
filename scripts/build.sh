#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the dependencies (as root) and build vsd in the source tree.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
[ -x configure ] || ./autogen.sh
[ -f Makefile ] || ./configure --quiet
make -j"$(nproc)" --no-print-directory -s
