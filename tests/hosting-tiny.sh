#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A few seconds of benchmarks/hosting, end to end on Debian's own stack: one
# real front end with two name-based sites, Apache and then nginx (--front
# both), real PHP-FPM pools on Unix sockets, real cgroups. With each front
# end, every mode must serve both sites' static and PHP pages, the PHP must
# run, and be charged, where the mode says, and nothing is left behind. The
# ratios are NOT checked: timings at this length are noise.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/bench-tiny-lib.sh"
export top_srcdir top_builddir
need_root
[ -x "$top_builddir/benchmarks/loadgen" ] || { echo "Bail out! benchmarks/loadgen is not built"; exit 1; }
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] ||
	skip_all "apache2 is not installed (scripts/deps.sh --test installs it)"
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
	skip_all "nginx is not installed (scripts/deps.sh --test installs it)"
command -v php-fpm8.2 >/dev/null || [ -x /usr/sbin/php-fpm8.2 ] ||
	skip_all "php-fpm8.2 is not installed (scripts/deps.sh --test installs it)"
tmp=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
on_exit rm -rf "$tmp"

# 5 s a point, not --tiny's 1: under qemu TCG a site gets 4-6 requests a
# second, and 30% of them PHP: in 1 s a site sees none about 1 time in 5
PATH=$PATH:/usr/sbin "$top_srcdir/benchmarks/hosting" --tiny --front both --duration 5 \
    --out "$tmp/h" >"$tmp/h.log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/h.log"
check "hosting: exit status 0" test $rc = 0

# The CSV's columns (benchmarks/lib-bench.sh, bench_csv_header, then the
# memory): 1 mode, 5/6 A's and B's requests/s, 11/12 their PHP pages/s,
# 13/14 their errors, 15/16 the CPU www1 and www2 were charged (% of one
# CPU), 19/20 the PSS of the pools and of the front end (kB).
# served MODE: both sites' static and PHP pages served, without errors
served() {
	awk -F, -v m="$1" '$1 == m && $5 > 0 && $6 > 0 && $11 > 0 && $12 > 0 && $13 == 0 && $14 == 0 { ok = 1 }
	     END { exit !ok }' "$csv"
}
# charged MODE: www1 and www2 were each charged CPU time. Only PHP runs in
# them (the front end is in VS front), so in the gated mode this is the
# shared pool's work for each site, charged to the site.
charged() {
	awk -F, -v m="$1" '$1 == m && $15 > 0 && $16 > 0 { ok = 1 } END { exit !ok }' "$csv"
}
# One cgroup for both sites, and no VS: where the benchmark runs (its
# "outside" cgroup on hybrid hosts, its own cgroup on pure v2).
shared_outside() {
	local a b
	read -r a b < <(sed -n "s/.*: $front shared: site A's PHP ran in \([^,]*\), site B's in \(.*\)$/\1 \2/p" "$tmp/h.log")
	[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != none ] && ! [[ $a =~ /(www1|www2|front|loadgen)$ ]]
}
for front in apache nginx; do
	base=hosting
	[ $front = apache ] || base=hosting-$front
	csv=$tmp/h/$base.csv
	check "$front: CSV rows well formed" awk -F, 'NR == 1 { next }
	     NF != 20 || ($1 != "shared" && $1 != "gated" && $1 != "per-site") { bad = 1 }
	     { for (i = 2; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) bad = 1 }
	     END { exit bad || NR < 4 }' "$csv"
	for m in shared gated per-site; do
		check "$front $m: both sites' static and PHP pages served" served $m
	done
	check "$front shared: both sites' PHP ran in one pool outside every VS" shared_outside
	# one pool, and yet each site's PHP in its own VS: the sites' rules at work
	check "$front gated: each site's PHP ran in its own VS, from the one shared pool" \
	    grep -Eq ": $front gated: site A's PHP ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$tmp/h.log"
	check "$front gated: www1 and www2 were charged for their PHP" charged gated
	check "$front per-site: each site's PHP ran in its own VS" \
	    grep -Eq ": $front per-site: site A's PHP ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$tmp/h.log"
	check "$front per-site: www1 and www2 were charged for their PHP" charged per-site
	# The memory each mode took, a positive number of kB, in the CSV and the memory file.
	check "$front: the pools' and the front end's PSS on every row" \
	    awk -F, 'NR > 1 && !($19 > 0 && $20 > 0) { bad = 1 } END { exit bad || NR < 4 }' "$csv"
	check "$front: memory of the pools and the front end reported for each mode" eval \
	    'for m in shared gated per-site; do
		grep -Eq "^$m rep 1: PHP-FPM pools. PSS [1-9][0-9]* kB .*, front end \($front\) [1-9][0-9]* kB$" \
		    "$tmp/h/$base-memory.txt" || exit 1
	     done'
	check "$front: summary printed" eval \
	    'sed -n "/^Front end: $front\$/,/^CSV: /p" "$tmp/h.log" | grep -Eq "A\(gated\) / A\(per-site\).* [0-9]+\.[0-9]+ "'
done

bench_left_nothing "$tmp/h.log" "Apache, nginx, PHP-FPM"
done_testing
