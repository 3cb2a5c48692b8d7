#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A database service stopped the usual way, by applying a rule file without
# it (--prune), leaves its home VS as it found it, so that the VS can be
# destroyed without --force. On pure cgroup v2 the gate made the VS's
# cgroup a threaded subtree's root, with a child "home" and one per VS
# served (gates/accept/dbtree.c); the gate must remove them when the
# service stops, although the rules pushed before the stop no longer name
# the service (a left child makes every rmdir of the VS fail with EBUSY).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mariadb-lib.sh"
need_root
need_mariadb
mdb_setup

w db.rules <<E
vs db cpu 10%
vs www1 cpu 20%
service mariadb home db protocol mysql command "exec $MDB_CMD"
E
w nodb.rules <<E
vs db cpu 10%
vs www1 cpu 20%
E
check "the rule file with a mysql service applies" quiet vsctl apply "$R/db.rules"
# by the clock: under emulation MariaDB takes a while, and each look a second
end=$(($(date +%s) + 90))
while [ "$(date +%s)" -lt "$end" ]; do mdb_up && break; sleep 0.5; done
check "MariaDB runs under the gate" mdb_up
DBDIR=$(vs_cgroup db cpu)
check "a query from www1" quiet vsctl exec www1 -- "$MARIADB" --no-defaults -u root -N -B \
	-S "$MDB_SOCK" -e 'SELECT 1'
# children DIR: the cgroups below DIR, by name
children() { (cd "$1" && find . -mindepth 1 -type d -printf '%P\n' | sort | tr '\n' ' '); }
if [ "$(cg_layout)" = unified ]; then
	is "$(children "$DBDIR")" "home www1 " "pure v2: the gate made db a threaded subtree (home, and www1's child)"
fi

check "apply --prune of the file without it" quiet vsctl apply --prune "$R/nodb.rules"
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$end" ]; do [ "$(vsctl services --json)" = "[]" ] && break; sleep 0.5; done
is "$(vsctl services --json)" "[]" "the service stopped"
is "$(children "$DBDIR")" "" "no cgroup is left below the home VS's"
out=$(vsctl destroy db 2>&1)
st=$?
[ "$st" = 0 ] || diag "vsctl destroy db: $out"
is "$st" 0 "the home VS is destroyed without --force"
check "its cgroup is gone" sh -c '! [ -d "$1" ]' - "$DBDIR"
done_testing
