#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install everything vsd needs to build, test and run its demo, from Debian 12.
set -eu
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: run as root (it installs packages with apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential autoconf automake libtool pkg-config clang llvm
      libbpf-dev bpftool libelf-dev zlib1g-dev libseccomp-dev libfcgi-dev
      libclang-rt-14-dev
      apache2 tcpdump iproute2 procps psmisc util-linux passwd python3
      gnuplot-nox"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi
