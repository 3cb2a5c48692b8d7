#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install from Debian 12 what vsd needs, as root:
#   deps.sh          to build vsd, vsctl and the gates
#   deps.sh --demo   and to run the insulation demo (Apache, the FastCGI
#                    devkit for fcgi-demo/, gnuplot for its plot)
#   deps.sh --test   and to run the test suite (the demo's packages, plus
#                    tcpdump, python3, clang's fuzzer runtime, nginx, debhelper
#                    and lintian for the package test, MariaDB for the gated
#                    database tests, ...)
#   deps.sh --state  print the state and version of every package above,
#                    installing nothing (scripts/build.sh configures again
#                    when it changes)
set -eu
build="build-essential autoconf automake libtool pkg-config clang llvm
       libbpf-dev bpftool libelf-dev zlib1g-dev libseccomp-dev libmnl-dev
       libnftables-dev libjson-c-dev"
demo="libfcgi-dev apache2 gnuplot-nox procps psmisc util-linux iproute2"
test="$demo tcpdump python3 passwd libclang-rt-14-dev strace php8.2-fpm
      libfcgi-bin iperf3 haproxy nftables python3-prometheus-client nginx
      debhelper lintian mariadb-server mariadb-client php8.2-mysql"
if [ "${1:-}" = --state ]; then
	# one line each, missing ones too (dpkg-query says so on stderr)
	# shellcheck disable=SC2086
	dpkg-query -W -f='${Package} ${db:Status-Abbrev} ${Version}\n' $build $test 2>/dev/null |
		sort -u
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: run as root (it installs packages with apt-get)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
case "${1:-}" in
"") pkgs=$build ;;
--demo) pkgs="$build $demo" ;;
--test) pkgs="$build $test" ;;
*) echo "usage: deps.sh [--demo | --test | --state]" >&2; exit 2 ;;
esac
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
