#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What the VM tier needs on the host, from Debian 12: mmdebstrap to make the
# image, qemu to boot it, debhelper and the package's build dependencies
# beyond scripts/deps.sh's (libfcgi-dev) to build it, lintian to check it.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "vm/deps.sh: run as root (it installs packages with apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
missing=
for p in mmdebstrap qemu-system-x86 qemu-utils e2fsprogs debhelper libfcgi-dev lintian; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi
