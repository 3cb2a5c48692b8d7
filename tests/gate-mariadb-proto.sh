#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A server-speaks-first service under the accept gate: Debian's MariaDB,
# declared "protocol mysql", with a site line in force. The gate must not
# hold its connections for request params (the client sends nothing until
# the server's handshake): each connection is handed over at once, by its
# opener's VS, over TCP and the Unix socket. Asserted by the gate's own
# counters (held, timed out), not by a timing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mariadb-lib.sh"
need_root
need_mariadb

rules_dir
RUN=$R/run
mkdir -p "$RUN" && chmod 0755 "$RUN"
mdb_init "$RUN" $(test_port) || { fail "mariadb-install-db"; done_testing; }

vsd_start || { fail "vsd starts"; done_testing; }

# attrs-timeout at its largest: an old gate would hold each connection 10 s
w db.rules <<E
vs db cpu 10%
vs www1 cpu 30%
vs www2 cpu 30%
service mariadb home db protocol mysql attrs-timeout 10s command "exec $MDB_CMD"
site a.example vs www1
E
out=$(vsctl apply "$R/db.rules" 2>&1)
check "the rule file with a mysql service and a site applies" test $? = 0
on_exit "vsctl service stop mariadb"
check "MariaDB runs under the gate and answers on its socket" wait_until mdb_up
attr() { svc mariadb "['attrs']['$1']"; }
is "$(attr on)" False "the gate does not classify a mysql service's connections by params"

# from each VS, over TCP and the Unix socket; every query must answer
q1=$(vsctl exec www1 -- "$MARIADB" --no-defaults -u root -h 127.0.0.1 -P "$MDB_PORT" \
	--protocol=tcp -N -B -e 'select 41+1' 2>&1)
is "$q1" 42 "a TCP connection from www1 is served"
q2=$(vsctl exec www2 -- "$MARIADB" --no-defaults -u root -S "$MDB_SOCK" -N -B -e 'select 43' 2>&1)
is "$q2" 43 "a Unix-socket connection from www2 is served"
is "$(attr total)" 0 "no connection was held for params"
is "$(attr timed_out)" 0 "none waited out the bound"
served() { svc mariadb "['vs']" | python3 -c "
import ast, sys
print(sum(v['served'] for v in ast.literal_eval(sys.stdin.read()) if v['name'] == '$1'))"; }
check "the gate served www1's TCP connection by its opener" test "$(served www1)" -ge 1
check "the gate served www2's Unix connection by its opener" test "$(served www2)" -ge 1
done_testing
