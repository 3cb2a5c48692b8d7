#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer harness (rules/fuzz-rules.c) for a bounded time on a
# seed corpus made of the examples and the golden files. Any crash, sanitizer
# report or leak fails the test. Skipped only where clang cannot build it.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
fuzz=$builddir/rules/fuzz-rules
secs=${RULES_FUZZ_SECONDS:-20}

. "$srcdir/tests/fuzz-lib.sh"
fuzz_setup "$fuzz" rules-fuzz
cp "$srcdir"/rules/examples/*.rules "$srcdir"/tests/rules/*.rules "$tmp/seeds/"
fuzz_run "$fuzz" "$secs" 4096 ""
