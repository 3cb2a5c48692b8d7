#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the dependencies (as root) and build vsd in the source tree.
#   build.sh [--demo | --test]   the packages deps.sh installs for that job
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh "$@"
[ -x configure ] || ./autogen.sh
# configure again if the FastCGI devkit arrived after the last configure:
# fcgi-demo/ is built only where it was found
if [ ! -f Makefile ] ||
   { [ -f /usr/include/fcgiapp.h ] && ! grep -q 'HAVE_FCGIAPP_H 1' config.h; }; then
	./configure --quiet
fi
make -j"$(nproc)" --no-print-directory -s
