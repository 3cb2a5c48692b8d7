#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The rules library's files call each other in one direction only (layers in
# rules/README.md): each file may call files of lower layers; only the parser
# and file loading (layer 3), which recurse through "include", call each
# other. Checked on the built library's symbol tables.
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
lib=$top_builddir/rules/librules.a
[ -f "$lib" ] || { echo "1..0 # SKIP $lib is not built"; exit 0; }
command -v nm >/dev/null || { echo "1..0 # SKIP no nm"; exit 0; }
nm -A "$lib" 2>/dev/null | awk '
BEGIN {
	split("words:0 names:0 nexpr:0 pat:0 norm:0 prefix:0 ctx:1 expand:2 lex:2 open:2 net:2 parse:3 parse-decl:3 parse-rule:3 parse-site:3 parse-remote:3 file:3 query:4 attrs:4 budget:4 check:5 check-remote:5 compile:5 content:5 write:5 rules:6 dump:6", L, " ")
	for (i in L) { split(L[i], kv, ":"); layer[kv[1]] = kv[2] }
}
{
	split($1, p, ":"); obj = p[2]; sub(/\.o$/, "", obj)
	if ($2 == "U") use[obj, $3] = 1
	else if ($2 ~ /^[TDRB]$/) def[$3] = obj
	files[obj] = 1
}
END {
	n = 0
	for (f in files) {
		if (!(f in layer)) { printf "not ok %d - %s.c has no layer in this test (add it)\n", ++n, f; bad = 1; continue }
		msg = ""
		for (k in use) {
			split(k, q, SUBSEP)
			if (q[1] != f || !(q[2] in def)) continue
			g = def[q[2]]
			if (g == f) continue
			if (layer[g] > layer[f] || (layer[g] == layer[f] && layer[f] != 3))
				msg = msg " " q[2] "() in " g ".c"
		}
		if (msg == "") printf "ok %d - %s.c (layer %d) calls only below itself\n", ++n, f, layer[f]
		else { printf "not ok %d - %s.c (layer %d) calls up or sideways:%s\n", ++n, f, layer[f], msg; bad = 1 }
	}
	printf "1..%d\n", n
	exit bad
}'
