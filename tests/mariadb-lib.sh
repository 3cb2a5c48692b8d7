# SPDX-License-Identifier: GPL-2.0-or-later
# Debian's MariaDB as a gated service, for tests/gate-mariadb*.sh: a private
# data directory, Unix socket and TCP port, the server run as root in the
# foreground (the rule file's service runs it). Sourced after lib.sh.
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
MARIADB=$(command -v mariadb || echo /usr/bin/mariadb)

# need_mariadb: skip unless mariadb-server and mariadb-client are installed
need_mariadb() {
	[ -x "$MARIADBD" ] && [ -x "$MARIADB" ] && command -v mariadb-install-db >/dev/null ||
		skip_all "mariadb-server is not installed (scripts/deps.sh --test installs it)"
}

# mdb_init DIR PORT: a data directory DIR/data; sets MDB_SOCK and MDB_CMD,
# the server's command line (small buffers, no binary log, loopback only).
# --force: a host whose name resolves nowhere (the VM guest has no
# /etc/hosts) fails mariadb-install-db's resolveip check, which the server
# (--skip-name-resolve) never needs.
mdb_init() {
	MDB_SOCK=$1/mysqld.sock
	MDB_PORT=$2
	mariadb-install-db --no-defaults --datadir="$1/data" --user=root \
	    --auth-root-authentication-method=normal --skip-test-db --force \
	    > "$1/install.log" 2>&1 || {
		sed 's/^/# /' "$1/install.log"
		return 1
	}
	MDB_CMD="$MARIADBD --no-defaults --user=root --datadir=$1/data --socket=$MDB_SOCK"
	MDB_CMD="$MDB_CMD --port=$2 --bind-address=127.0.0.1 --pid-file=$1/mysqld.pid"
	MDB_CMD="$MDB_CMD --log-error=$1/mysqld.err --skip-log-bin --innodb-buffer-pool-size=16M"
	MDB_CMD="$MDB_CMD --innodb-log-file-size=4M --skip-name-resolve ${MDB_ARGS:-}"
}

# sql_unix ARGS...: the mariadb client over the Unix socket, as root;
# sql_tcp likewise over TCP to 127.0.0.1
sql_unix() { "$MARIADB" --no-defaults -u root -S "$MDB_SOCK" -N -B "$@"; }
sql_tcp() { "$MARIADB" --no-defaults -u root -h 127.0.0.1 -P "$MDB_PORT" --protocol=tcp -N -B "$@"; }

# mdb_up: the server answers a query on its socket
mdb_up() { [ "$(sql_unix -e 'select 1' 2>/dev/null)" = 1 ]; }

# mdb_setup: R (rules_dir), a data directory in RUN=$R/run for the server
# (MDB_ARGS: its extra arguments) and a private vsd; else the test ends
mdb_setup() {
	rules_dir
	RUN=$R/run
	mkdir -p "$RUN" && chmod 0755 "$RUN"
	mdb_init "$RUN" "$(test_port)" || { fail "mariadb-install-db"; done_testing; }
	vsd_start || { fail "vsd starts"; done_testing; }
}
