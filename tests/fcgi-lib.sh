# SPDX-License-Identifier: GPL-2.0-or-later
# The real FastCGI service behind a front end, for the tests that classify
# by request content (tests/gate-fcgi.sh, tests/classify-hostile.sh):
# Debian's PHP-FPM pool, a script that prints the cgroups of the thread that
# runs it, and how to read the VS back from that. Sourced after lib.sh.
APACHE=$(command -v apache2 || echo /usr/sbin/apache2)
PHP_FPM=$(command -v php-fpm8.2 || echo /usr/sbin/php-fpm8.2)
MODDIR=/usr/lib/apache2/modules
POOL=/etc/php/8.2/fpm/pool.d/www.conf

# need_fpm: skip unless php8.2-fpm is installed
need_fpm() {
	[ -x "$PHP_FPM" ] && [ -r "$POOL" ] ||
		skip_all "php8.2-fpm is not installed (scripts/deps.sh --test installs it)"
}
need_apache() {
	[ -x "$APACHE" ] && [ -e "$MODDIR/mod_proxy_fcgi.so" ] ||
		skip_all "apache2 with mod_proxy_fcgi is not installed (scripts/deps.sh --test installs it)"
}

# fpm_conf DIR SOCK: DIR/fpm.conf, Debian's pool but for its socket path
# and pool size (4 static workers)
fpm_conf() {
	sed -e "s|^listen = .*|listen = $2|" -e "s|^pm = .*|pm = static|" \
	    -e "s|^pm.max_children = .*|pm.max_children = 4|" "$POOL" > "$1/pool.conf"
	cat > "$1/fpm.conf" <<E
[global]
pid = $1/fpm.pid
error_log = $1/fpm.log
daemonize = no
include = $1/pool.conf
E
}

# fpm_service_up SOCK: the rule file's service fpm runs, its socket there
fpm_service_up() { running fpm && [ -S "$1" ]; }

# apache_conf RUN PORT SOCK: RUN/front/httpd.conf, the hosting benchmark's
# front end (Debian's apache2, mpm_event): a.example (docroot RUN/a) and
# b.example (RUN/b) by name on PORT, PHP to PHP-FPM on SOCK
apache_conf() {
	sed -e "s|@RUNDIR@|$1/front|g" -e "s|@PORT@|$2|g" -e "s|@MODDIR@|$MODDIR|g" \
	    -e "s|@USER@|www-data|g" -e "s|@GROUP@|www-data|g" \
	    -e "s|@DOCROOT_A@|$1/a|g" -e "s|@DOCROOT_B@|$1/b|g" \
	    -e "s|@HOST_A@|a.example|g" -e "s|@HOST_B@|b.example|g" \
	    -e "s|@SOCK_A@|$3|g" -e "s|@SOCK_B@|$3|g" \
	    "$top_srcdir/benchmarks/hosting-front.conf.in" > "$1/front/httpd.conf"
}

# cg_script DIR...: DIR/cg.php prints the cgroups of the thread that runs it
cg_script() {
	local d
	for d in "$@"; do
		printf '<?php\nheader("Content-Type: text/plain");\nreadfile("/proc/thread-self/cgroup");\n' > "$d/cg.php"
	done
}

# cg_vs: the VS in the cgroup lines on stdin (the v1 cpu hierarchy on
# hybrid hosts, the cgroup2 line on pure v2); "none" without either
cg_vs() {
	# only /proc/PID/cgroup lines (ID:CONTROLLERS:PATH): a chunked body's
	# size lines, which nginx may send, have no colon
	awk -F: '{ sub(/\r$/, "") } NF < 3 { next } $2 ~ /(^|,)cpu(,|$)/ { c = $3 } $2 == "" { u = $3 }
	     END { p = c != "" ? c : u; sub(".*/", "", p); print p == "" ? "none" : p }'
}
