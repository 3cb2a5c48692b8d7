#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A few seconds of `benchmarks/insulation --remote` end to end (hosts A and
# B as network namespaces, B's vsd classifying A's sites by DSCP): every
# mode must serve both sites, the ad server on host B must run in B's www1
# and www2 for sites A and B under the gate and replicated, the hop's
# latency must be measured, and the run must leave no namespace behind.
# The ratios are NOT checked: timings on a shared 2-core machine are noise
# at this length. 4 s per point, not --tiny's 1 s: under the VM tier's TCG a
# request over the veth to the second vsd's host takes tens of ms, and 1 s
# served nothing there; load-generator errors (timeouts under TCG) are not
# counted against it.
. "$(dirname "$0")/lib.sh"
need_root
for f in "$top_builddir/fcgi-demo/adserver" "$top_builddir/benchmarks/loadgen"; do
	[ -x "$f" ] || skip_all "$f is not built"
done
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] ||
	skip_all "apache2 is not installed (scripts/deps.sh installs it)"
command -v nsenter >/dev/null || skip_all "nsenter is missing (util-linux)"
out=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
on_exit "rm -rf $out"

PATH=$PATH:/usr/sbin top_srcdir=$top_srcdir top_builddir=$top_builddir \
	"$top_srcdir/benchmarks/insulation" --remote --tiny --duration 4 --warmup 1 \
	--out "$out" >"$out/log" 2>&1
rc=$?
sed 's/^/# /' "$out/log"
is "$rc" 0 "insulation --remote: exit status 0"
for m in insulation-only gate replicated; do
	like "$(awk -F, -v m=$m '$1 == m && $5 > 0 && $6 > 0 { print "served" }' \
		"$out/insulation.csv")" "^served" "$m: both sites served requests"
done
b=vsd-bench-[0-9]*-b
like "$(grep "gate: site A's ad ran in" "$out/log")" "A's ad ran in /[^ ]*/$b/www1, site B's in /[^ ]*/$b/www2\$" \
	"gate: the ad server on host B ran in B's www1 and www2"
like "$(grep "replicated: site A's ad ran in" "$out/log")" "/$b/www1, site B's in /[^ ]*/$b/www2\$" \
	"replicated: each copy on host B in its site's VS"
like "$(grep "extra latency of the hop" "$out/log")" "median [-+][0-9]" "the hop's latency is measured"
like "$(grep "A(gate) / A(replicated)" "$out/log")" "[0-9]\\.[0-9]{3}" "the summary ratios are printed"
is "$(ip netns list | grep -c "^vsd-bench-")" "$(ip netns list | grep "^vsd-bench-" | while read -r n _; do
	p=${n#vsd-bench-}; p=${p%-*}; kill -0 "$p" 2>/dev/null && echo x; done | grep -c x)" \
	"no network namespace of a finished run is left"
done_testing
