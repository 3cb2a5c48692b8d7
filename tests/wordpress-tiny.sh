#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A few seconds of benchmarks/wordpress, end to end on Debian's own stack:
# one Apache with two name-based sites, real PHP-FPM pools, real MariaDB
# servers with real tables, real cgroups. In every mode A's front pages,
# and B's front pages and searches (A's pages search nothing), must be served, each site's PHP and each site's
# queries must run where the mode says (read by the page itself from
# /proc/thread-self/cgroup and from /proc/TID/cgroup of the MariaDB thread
# serving its connection), the database mode must charge each site's VS
# for its queries, the page must be written, and nothing is left behind.
# The ratios are NOT checked: timings at this length are noise.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"
. "$top_srcdir/tests/bench-tiny-lib.sh"
. "$top_srcdir/tests/mariadb-lib.sh"
export top_srcdir top_builddir
need_root
need_mariadb
[ -x "$top_builddir/benchmarks/loadgen" ] || { echo "Bail out! benchmarks/loadgen is not built"; exit 1; }
command -v apache2 >/dev/null || [ -x /usr/sbin/apache2 ] ||
	skip_all "apache2 is not installed (scripts/deps.sh --test installs it)"
command -v php-fpm8.2 >/dev/null || [ -x /usr/sbin/php-fpm8.2 ] ||
	skip_all "php-fpm8.2 is not installed (scripts/deps.sh --test installs it)"
PATH=$PATH:/usr/sbin php-fpm8.2 -m 2>/dev/null | grep -qx mysqli ||
	skip_all "PHP's mysqli is not installed (scripts/deps.sh --test installs php8.2-mysql)"
tmp=$(mktemp -d /tmp/vsd-test-$$.XXXXXX)
on_exit rm -rf "$tmp"

PATH=$PATH:/usr/sbin "$top_srcdir/benchmarks/wordpress" --tiny --duration 4 \
    --out "$tmp/w" >"$tmp/w.log" 2>&1
rc=$?
sed 's/^/# /' "$tmp/w.log"
check "wordpress: exit status 0" test $rc = 0
csv=$tmp/w/wordpress.csv
MODES="shared php-gated db-gated workers per-site"

# The CSV's columns (benchmarks/lib-bench.sh, bench_csv_header, then the
# benchmark's): 1 mode, 5/6 A's and B's pages/s, 11/12 their searches/s,
# 13/14 their errors, 19/20 the database CPU A and B caused, 21/22 what
# www1 and www2 were charged for it, 25/26 a query's and a connection's
# cost, 27-29 the PSS of the pools, the servers and the front end.
check "CSV rows well formed, one for each mode" awk -F, -v modes="$MODES" '
	BEGIN { n = split(modes, m, " "); for (i = 1; i <= n; i++) want[m[i]] }
	NR == 1 { next }
	NF != 31 || !($1 in want) { bad = 1 }
	{ seen[$1]; for (i = 2; i <= NF; i++) if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) bad = 1 }
	END { for (k in want) if (!(k in seen)) bad = 1; exit bad }' "$csv"
# row MODE COND: MODE has a row on which the awk condition COND holds
row() { awk -F, -v m="$1" "\$1 == m && ($2) { ok = 1 } END { exit !ok }" "$csv"; }
for m in $MODES; do
	check "$m: A's front pages, B's front pages and searches served, without errors" \
	    row "$m" '$5 > 0 && $11 == 0 && $6 > $12 && $12 > 0 && $13 == 0 && $14 == 0'
	check "$m: MariaDB counted CPU for both sites' users" row "$m" '$19 > 0 && $20 > 0'
	check "$m: a query's and a connection's cost from PHP measured" row "$m" '$25 > 0 && $26 > 0'
	check "$m: the PSS of the pools, the MariaDB servers and Apache" row "$m" '$27 > 0 && $28 > 0 && $29 > 0'
done

# where MODE: "PHP-A DB-A PHP-B DB-B", the cgroups the mode's probe reported
where() {
	sed -n "s/.*: $1: site A's PHP ran in \([^,]*\), its query in \([^;]*\); site B's PHP in \([^,]*\), its query in \(.*\)$/\1 \2 \3 \4/p" "$tmp/w.log"
}
# outside P1 P2: one cgroup, known, and no VS's
outside() { [ "$1" = "$2" ] && [ "$1" != none ] && ! [[ $1 =~ /(www1|www2|front|loadgen|php|db)$ ]]; }
inside() { [[ $1 =~ ^/[^\ ]*/$2$ ]]; }
read -r pa da pb db < <(where shared)
check "shared: both sites' PHP, and both sites' queries, ran outside every VS" \
    eval 'outside "$pa" "$pb" && outside "$da" "$db"'
read -r pa da pb db < <(where php-gated)
check "php-gated: each site's PHP in its VS; both sites' queries outside every VS" \
    eval 'inside "$pa" www1 && inside "$pb" www2 && outside "$da" "$db"'
for m in db-gated workers per-site; do
	read -r pa da pb db < <(where $m)
	check "$m: each site's PHP, and each site's queries, ran in the site's VS" \
	    eval 'inside "$pa" www1 && inside "$da" www1 && inside "$pb" www2 && inside "$db" www2'
done
for m in db-gated workers; do
	check "$m: www1 and www2 were charged for their sites' queries" row $m '$21 > 0 && $22 > 0'
done
check "shared, php-gated: no VS was charged for the database" \
    eval 'row shared "\$21 == 0 && \$22 == 0" && row php-gated "\$21 == 0 && \$22 == 0"'
check "workers: the rule file applied limits www1 and www2" \
    grep -Eq "workers: the pool's 5 workers, the rule file's sites: vs www1 cpu 35% workers 4;vs www2 cpu 35% workers 4$" "$tmp/w.log"

page=$tmp/w/wordpress.md
check "the page names the machine, the load and the command" \
    grep -Eq '^\*\*On what, when\.\*\* [0-9]+ CPUs, Linux .*load average .*Command: `benchmarks/wordpress --tiny' "$page"
check "the page has its verdict tables, filled from the CSV" eval \
    '[ "$(grep -c "^| .* | target [<>]= " "$page")" = 3 ] && grep -q "^| db-gated | [0-9]* | [0-9.]* " "$page"'
check "no report block left empty" eval \
    '! grep -B1 -- "^<!-- end report -->" "$page" | grep -q "^<!-- report"'

bench_left_nothing "$tmp/w.log" "Apache, PHP-FPM, MariaDB"
done_testing
