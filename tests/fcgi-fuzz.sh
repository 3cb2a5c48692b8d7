#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs the libFuzzer harness of the FastCGI param parser and the classifier
# (gates/accept/fuzz-fcgi.c) for a bounded time on the seeds
# tests/fcgi-seeds.py makes (the captured records, a request with 48 KB of
# headers first). Any crash, sanitizer report, leak, disagreement between
# the stream fed at once and in chunks, or a host name beating a document
# root fails the test. Skipped only where clang cannot build it.
set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${top_builddir:-.}
fuzz=$builddir/gates/accept/fuzz-fcgi
secs=${FCGI_FUZZ_SECONDS:-20}

. "$srcdir/tests/fuzz-lib.sh"
fuzz_setup "$fuzz" fcgi-fuzz
python3 "$srcdir/tests/fcgi-seeds.py" "$srcdir" "$tmp/seeds" || exit 99
fuzz_run "$fuzz" "$secs" 65536 ", no disagreement"
