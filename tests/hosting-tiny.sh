#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A few seconds of benchmarks/hosting, end to end on Debian's own stack: one
# real Apache front end with two name-based sites, real PHP-FPM pools on
# Unix sockets, real cgroups. Every mode must serve both sites' static and
# PHP pages, the PHP must run where the mode says, and nothing is left
# behind. The ratios are NOT checked: timings at this length are noise.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
export top_srcdir top_builddir
need_root
[ -x "$top_builddir/benchmarks/loadgen" ] || { echo "Bail out! benchmarks/loadgen is not built"; exit 1; }
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] ||
	skip_all "apache2 is not installed (scripts/deps.sh --test installs it)"
command -v php-fpm8.2 >/dev/null || [ -x /usr/sbin/php-fpm8.2 ] ||
	skip_all "php-fpm8.2 is not installed (scripts/deps.sh --test installs it)"
tmp=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
on_exit rm -rf "$tmp"

# 5 s a point, not --tiny's 1: under qemu TCG a site gets 4-6 requests a
# second, and 30% of them PHP: in 1 s a site sees none about 1 time in 5
PATH=$PATH:/usr/sbin "$top_srcdir/benchmarks/hosting" --tiny --duration 5 --out "$tmp/h" >"$tmp/h.log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/h.log"
csv=$tmp/h/hosting.csv
check "hosting: exit status 0" test $rc = 0
check "hosting: CSV rows well formed" awk -F, 'NR == 1 { next }
     NF != 18 || ($1 != "shared" && $1 != "gated" && $1 != "per-site") { bad = 1 }
     { for (i = 2; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) bad = 1 }
     END { exit bad || NR < 3 }' "$csv"
# both sites served, static and PHP pages, without errors
served() {
	awk -F, -v m="$1" '$1 == m && $5 > 0 && $6 > 0 && $11 > 0 && $12 > 0 && $13 == 0 && $14 == 0 { ok = 1 }
	     END { exit !ok }' "$csv"
}
check "shared: both sites' static and PHP pages served" served shared
check "gated: both sites' static and PHP pages served" served gated
check "per-site: both sites' static and PHP pages served" served per-site
# One cgroup for both sites, and no VS: where the benchmark runs (its
# "outside" cgroup on hybrid hosts, its own cgroup on pure v2).
shared_outside() {
	local a b
	read -r a b < <(sed -n "s/.*shared: site A's PHP ran in \([^,]*\), site B's in \(.*\)$/\1 \2/p" "$tmp/h.log")
	[ -n "$a" ] && [ "$a" = "$b" ] && [ "$a" != none ] && ! [[ $a =~ /(www1|www2|front|loadgen)$ ]]
}
check "shared: both sites' PHP ran in one pool outside every VS" shared_outside
# one pool, and yet each site's PHP in its own VS: the sites' rules at work
check "gated: each site's PHP ran in its own VS, from the one shared pool" \
    grep -Eq "gated: site A's PHP ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$tmp/h.log"
check "per-site: each site's PHP ran in its own VS" \
    grep -Eq "per-site: site A's PHP ran in /[^ ]*/www1, site B's in /[^ ]*/www2$" "$tmp/h.log"
# The memory each mode's pools took, a positive number of kB.
check "memory of the pools reported for each mode" eval \
    'grep -Eq "^shared rep 1: PHP-FPM pools. PSS [1-9][0-9]* kB" "$tmp/h/hosting-memory.txt" &&
     grep -Eq "^gated rep 1: PHP-FPM pools. PSS [1-9][0-9]* kB" "$tmp/h/hosting-memory.txt" &&
     grep -Eq "^per-site rep 1: PHP-FPM pools. PSS [1-9][0-9]* kB" "$tmp/h/hosting-memory.txt"'
check "hosting: summary printed" grep -q "A(per-site) / A(shared)" "$tmp/h.log"
check "hosting: the gated ratios printed" grep -Eq "A\(gated\) / A\(per-site\).* [0-9]+\.[0-9]+ " "$tmp/h.log"

read -r cg run < <(sed -n 's/.*cgroups: \([^;]*\); scratch: \(.*\)/\1 \2/p' "$tmp/h.log")
check "no cgroups left behind" eval '[ -n "$cg" ] && ! VSH_ROOT=$cg vsh_dirs | grep -q . &&
    ! grep -q "is left behind" "$tmp/h.log"'
check "no Apache, PHP-FPM or scratch directory left behind" eval \
    '[ -n "$run" ] && [ ! -e "$run" ] && ! pgrep -f "$run" >/dev/null'
done_testing
