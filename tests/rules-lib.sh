# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the offline rule-file tests (rules-examples, -golden, -robust):
# no daemon, no root.  Sets srcdir, builddir, vsctl, rules_check and $tmp, a
# private directory removed on exit.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
vsctl=${VSCTL:-$builddir/vsctl/vsctl}
case $vsctl in /*) ;; *) vsctl=$(pwd)/$vsctl ;; esac
rules_check() { "$vsctl" check "$@"; }

tmp=$(mktemp -d "/tmp/vsd-$(basename "$0" .sh).XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
