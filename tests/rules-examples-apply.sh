#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in rules/examples/ applied to a real vsd, and its effect
# checked: the VSs it declares with their shares, its services running under
# the accept gate in their home VS; fcgi-insulation.rules starts the real ad
# server (fcgi-demo/adserver) and FastCGI requests from www1 and www2 are
# served in www1 and www2. The copies differ from the examples only in what
# the test machine has: the ad server from the build tree on a port of the
# test's, and a test server in place of PHP-FPM (the Unix-socket PHP-FPM
# stack is not gated yet). Between examples, apply --prune of an empty file
# must leave nothing: no service, no VS. A file with sites (debian-php-fpm.rules)
# must reach the gates with all of them.
. "$(dirname "$0")/lib.sh"
need_root
SERVER=$top_builddir/tests/gate-server
ADSERVER=$top_builddir/fcgi-demo/adserver
[ -x "$ADSERVER" ] || skip_all "fcgi-demo/adserver is not built (no FastCGI devkit: scripts/deps.sh --test)"
R=$(mktemp -d /tmp/vsd-examples.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"
PORT=$(test_port)
on_exit "pkill -KILL -f '[a]dserver --listen 127.0.0.1:$PORT'; pkill -KILL -f '[g]ate-server -p $((PORT + 1))'"

# the VSs of a file as "name cpu%" lines, from the checker's dump
declared() { vsctl check --dump "$1" 2>/dev/null | sed -n 's/^vs \([^ ]*\) .*cpu \([0-9.]*\)%.*/\1 \2/p' | sort; }
# the VSs vsd has, the same way
have() { vsctl list --json | json '"\n".join("%s %s" % (v["name"], ("%g" % v["cpu"])) for v in d)' | sort; }

vsd_start || { fail "vsd starts"; done_testing; }
cp "$top_srcdir"/rules/examples/*.rules "$R"/
for f in "$R"/*.rules; do
	sed -i -e "s|/usr/libexec/vsd/fcgi-adserver --listen 127.0.0.1:9000|$ADSERVER --listen 127.0.0.1:$PORT|" \
		-e "s|\"/usr/sbin/php-fpm8.2 [^\"]*\"|\"$SERVER -p $((PORT + 1))\"|" "$f"
	chmod 0644 "$f"
done

for f in "$R"/*.rules; do
	name=$(basename "$f")
	check "$name: vsctl check" quiet vsctl check "$f"
	check "$name: vsctl apply" quiet vsctl apply "$f"
	is "$(have)" "$(declared "$f")" "$name: vsd has exactly the declared VSs and shares ($(declared "$f" | wc -l))"
	for s in $(vsctl check --dump "$f" | sed -n 's/^service \([^ ]*\) home \([^ ]*\) .*/\1:\2/p'); do
		check "$name: service ${s%%:*} runs" wait_until running "${s%%:*}"
		is "$(svc "${s%%:*}" "['home']")" "${s#*:}" "$name: service ${s%%:*} in its home VS ${s#*:}"
	done
	# the gates get the applied rules as rules_write() wrote them (vsd's
	# applied.rules, handed out by "gaterules"): with every site and binding
	sites=$(vsctl check "$f" | sed -n 's/.*, \([0-9]* sites, [0-9]* content bindings\)$/\1/p')
	if [ -n "$sites" ]; then
		cp "$VSD_STATE/applied.rules" "$R/applied.rules" && chmod 0644 "$R/applied.rules"
		like "$(vsctl check "$R/applied.rules")" ", $sites\$" \
			"$name: the gates' copy of the rules has the $sites"
	fi
	if [ "$name" = fcgi-insulation.rules ]; then
		for vs in www1 www2; do
			out=$(vsctl exec $vs -- python3 "$top_srcdir/tests/fcgi-get.py" 127.0.0.1 "$PORT")
			like "$out" "Your ad here" "$name: a FastCGI request from $vs is answered"
			like "$out" "X-VS-Cgroup: [^ ]*/$VSD_ROOT/$vs" "$name: and served in $vs"
		done
		is "$(svc fcgi-ads "['vs']" | json '",".join("%s=%d" % (v["name"], v["served"]) for v in d if v["served"])')" \
			"www1=1,www2=1" "$name: vsctl services counts one request each"
	fi
	# one apply stops the services, then destroys the VSs they lived in
	: > "$R/empty"; chmod 0644 "$R/empty"
	check "$name: apply --prune of an empty file" quiet vsctl apply --prune "$R/empty"
	is "$(vsctl services --json)" "[]" "$name: no service left"
	is "$(vsctl list --json)" "[]" "$name: no VS left"
done
done_testing
