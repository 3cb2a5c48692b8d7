#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/migrating.md, followed literally in the VM tier's Debian 12 guest.
# First the guest is made into the guide's example server: Apache on port 80
# and nginx on 8080 with name-based sites of three accounts (alice, bob,
# carol), Debian's php8.2-fpm with its shared pool www and carol's own pool.
# Then each command block the guide marks <!-- step NAME --> runs, in the
# guide's order, in a clean root shell (bash -e), with the package built
# from this tree; after each step the test checks what the guide says is
# now true, and compares the output blocks it marks <!-- output NAME -->
# (and the rule file it shows) with what the step printed. The guide and
# this test cannot drift apart: a step the test does not know, or one it
# expects and the guide lacks, fails here.
# VM tier only: it installs the package and rewrites the guest's Apache,
# nginx and PHP-FPM configuration.
. "${top_srcdir:-.}/tests/lib.sh"
need_root
[ -n "${VSD_VM_BOOT:-}" ] ||
	skip_all "installs the package and rewrites /etc/apache2, /etc/nginx and /etc/php: only in the VM tier's throw-away guest"
GUIDE=$top_srcdir/docs/migrating.md
DEB=$(ls "$top_srcdir"/tests/vm/debs/vsd_*_amd64.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || skip_all "no package in tests/vm/debs (scripts/vm/deb.sh builds it)"
command -v curl >/dev/null || skip_all "curl is not installed (scripts/vm/image.sh adds it)"
dpkg -s vsd >/dev/null 2>&1 && skip_all "vsd is installed already: not the server the guide starts from"

W=$(mktemp -d /tmp/vsd-migrate.XXXXXX) || exit 99
chmod 0755 "$W"
on_exit "rm -rf $W"
# each step's output, for whoever reads a failed run
OUT=$top_srcdir/tests/vm/out/migrate
on_exit "rm -rf $OUT && mkdir -p $OUT && cp $W/*.out $OUT/"
# whatever happens, the package goes (a later test uses the tree's vsd)
on_exit "dpkg -s vsd && DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq vsd"
export LC_ALL=C

# The sites: host, front end (its port), account, PHP-FPM socket. Apache
# reaches the shared pool as Debian sets it up, through the handler
# a2enconf php8.2-fpm sets for the whole server; nginx names the socket in
# each server block.
SITES='alice.example      80   alice /run/php/php8.2-fpm.sock
shop.alice.example 80   alice /run/php/php8.2-fpm.sock
bob.example        80   bob   /run/php/php8.2-fpm.sock
blog.bob.example   8080 bob   /run/php/php8.2-fpm.sock
carol.example      8080 carol /run/php/php8.2-fpm-carol.sock'

# --- the existing server, as a provider runs it today ---
# (the image enables nginx, with its default site on port 80: stopped while
# the server is set up)
systemctl stop nginx
for u in alice bob carol; do
	useradd -m -s /bin/bash "$u" || { fail "useradd $u"; done_testing; }
done
while read -r host port acct sock; do
	mkdir -p "/var/www/$host"
	printf '<?php echo "%s\\n";\n' "$host" >"/var/www/$host/index.php"
	chown -R "$acct:$acct" "/var/www/$host"
	if [ "$port" = 80 ]; then
		cat >"/etc/apache2/sites-available/$host.conf" <<-EOF
		<VirtualHost *:80>
		    ServerName $host
		    ServerAlias www.$host
		    DocumentRoot /var/www/$host
		    DirectoryIndex index.php
		</VirtualHost>
		EOF
		a2ensite -q "$host" >/dev/null
	else
		cat >"/etc/nginx/sites-available/$host" <<-EOF
		server {
		    listen 8080;
		    server_name $host www.$host;
		    root /var/www/$host;
		    index index.php;
		    location ~ \.php\$ {
		        include snippets/fastcgi-php.conf;
		        fastcgi_pass unix:$sock;
		    }
		}
		EOF
		ln -s "../sites-available/$host" "/etc/nginx/sites-enabled/$host"
	fi
done <<<"$SITES"
# nginx's own default site would take Apache's port 80
rm -f /etc/nginx/sites-enabled/default
cat >/etc/php/8.2/fpm/pool.d/carol.conf <<'EOF'
[carol]
user = carol
group = carol
listen = /run/php/php8.2-fpm-carol.sock
listen.owner = www-data
listen.group = www-data
pm = dynamic
pm.max_children = 5
pm.start_servers = 2
pm.min_spare_servers = 1
pm.max_spare_servers = 3
EOF
a2enmod -q proxy_fcgi setenvif >/dev/null
a2enconf -q php8.2-fpm >/dev/null
check "the example server starts: php8.2-fpm, apache2, nginx" \
	systemctl enable --now php8.2-fpm apache2 nginx

# get HOST PORT PATH: the body a site serves
get() { curl -s --max-time 30 -H "Host: $1" "http://127.0.0.1:$2$3"; }
# A page of the test's own in each site: the cgroup its PHP runs in
while read -r host port acct sock; do
	printf '<?php readfile("/proc/thread-self/cgroup");\n' >"/var/www/$host/vsd-test.php"
	chown "$acct:$acct" "/var/www/$host/vsd-test.php"
	on_exit "rm -f /var/www/$host/vsd-test.php"
done <<<"$SITES"
# served: "HOST CGROUP" for each site, through its front end
served() {
	local host port acct sock
	while read -r host port acct sock; do
		echo "$host $(get "www.$host" "$port" /vsd-test.php)"
	done <<<"$SITES"
}
# where: "HOST CGROUP" as each site's PHP should run: in its account's VS
# ($1 = vs) or in Debian's php8.2-fpm.service ($1 = debian)
where() {
	local host port acct sock
	while read -r host port acct sock; do
		if [ "$1" = vs ]; then
			echo "$host 0::/vsd.slice/vsd-vsd.scope/vsd/$acct"
		else
			echo "$host 0::/system.slice/php8.2-fpm.service"
		fi
	done <<<"$SITES"
}
is "$(served)" "$(where debian)" "before: each site's PHP runs in Debian's php8.2-fpm.service"
check "before: carol's pool runs as carol" pgrep -u carol -f '^php-fpm: pool carol'

# --- the guide ---
# blocks KIND NAME: the lines of the ``` block after <!-- KIND NAME -->
block() {
	awk -v want="<!-- $1 $2 -->" '
		$0 == want { armed = 1; next }
		armed && /^```/ { if (inblk) exit; inblk = 1; next }
		inblk { print }' "$GUIDE"
}
STEPS="install import check dry-run install-rules switch verify-php verify rollback rollback-check purge"
is "$(sed -n 's/^<!-- step \([a-z-]*\) -->$/\1/p' "$GUIDE" | tr '\n' ' ')" "$STEPS " \
	"the guide's steps are the ones this test follows, in this order"

# step NAME DIR: run the step's commands in DIR as a provider would (a root
# login shell's environment, stopping at the first command that fails); its
# output in $W/NAME.out
step() {
	local code
	code=$(block step "$1")
	[ -n "$code" ] || { echo "no step $1 in $GUIDE"; return 1; }
	(cd "$2" && env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C TERM=dumb DEBIAN_FRONTEND=noninteractive \
		bash -e -o pipefail -c "$code") >"$W/$1.out" 2>&1 </dev/null
	local rc=$?
	cat "$W/$1.out"
	return $rc
}
# The guide's MiB figures are one run's; they differ in every run
mask() { sed -E 's/[0-9]+\.[0-9] MiB/N MiB/g'; }
# same_output NAME: the step printed what the guide's output block shows
same_output() {
	local want
	want=$(block output "$1" | mask)
	[ -n "$want" ] || { echo "no output $1 block in $GUIDE"; return 1; }
	diff -u <(echo "$want") <(mask <"$W/$1.out")
}
# wait_long CMD...: until CMD succeeds, up to 120 s (TCG)
wait_long() { local i; for i in $(seq 240); do "$@" && return 0; sleep 0.5; done; return 1; }
active() { [ "$(systemctl is-active vsd)" = active ] && /usr/bin/vsctl list >/dev/null 2>&1; }

cp "$DEB" "$W/"
check "step install: apt install ./vsd_*_amd64.deb" step install "$W"
check "the package is installed" dpkg -s vsd
check "vsd runs, with the package's (empty) rule file" wait_long active
is "$(/usr/bin/vsctl list --names | wc -l)" 0 "no VS yet: vsd has changed nothing"
is "$(served)" "$(where debian)" "the sites still run their PHP in php8.2-fpm.service"

check "step import" step import /root
cp /root/hosting.rules "$W/hosting.rules.out"
check "the report is the one the guide shows (MiB figures aside)" same_output import
like "$(grep '^pool www ' "$W/import.out")" "memory: [0-9]+\.[0-9] MiB PSS in [0-9]+ processes$" \
	"the report measures the running pool's PSS"
check "the rule file is the one the guide shows" \
	diff -u <(block file /root/hosting.rules) /root/hosting.rules
check "the import changed nothing: no VS" sh -c '[ -z "$(/usr/bin/vsctl list --names)" ]'

check "step check" step check /root
check "its output is the guide's" same_output check
check "step dry-run" step dry-run /root
check "its output is the guide's" same_output dry-run
check "the dry run changed nothing: no VS" sh -c '[ -z "$(/usr/bin/vsctl list --names)" ]'

check "step install-rules" step install-rules /root
check "/etc/vsd/vsd.rules is the imported file" cmp /root/hosting.rules /etc/vsd/vsd.rules
is "$(stat -c '%U %a' /etc/vsd/vsd.rules)" "root 644" "it belongs to root, mode 0644"

check "step switch" step switch /root
is "$(grep -E '^(started|/etc/vsd/vsd.rules:) ' "$W/switch.out")" "started service php82-fpm
/etc/vsd/vsd.rules: 4 created, 0 updated, 0 destroyed, 0 unchanged" \
	"vsctl reload says it started the gated pool and created the 4 VSs, as the guide says"
check "vsd is active" wait_long active
is "$(systemctl is-enabled vsd)" enabled "vsd starts at boot"
is "$(systemctl is-active php8.2-fpm) $(systemctl is-enabled php8.2-fpm)" "inactive disabled" \
	"Debian's php8.2-fpm.service is stopped and disabled"
is "$(/usr/bin/vsctl list --names | sort | tr '\n' ' ')" "alice bob carol php82 " \
	"the VSs of the rule file: one per account and the pool's home"
pool_up() {
	[ "$(/usr/bin/vsctl services --json | json "[s['state'] for s in d if s['name'] == 'php82-fpm']")" = '["running"]' ] &&
		pgrep -u carol -f '^php-fpm: pool carol' >/dev/null; }
check "the gated PHP 8.2 pools run (carol's too)" wait_long pool_up

check "step verify-php" step verify-php /root
check "its output is the guide's: the PHP of alice.example ran in VS alice, carol.example's in carol" \
	same_output verify-php
check "the guide's check pages are gone" \
	sh -c '! ls /var/www/*/vsd-check.php 2>/dev/null | grep -q .'
check "step verify" step verify /root
like "$(grep '^php82-fpm ' "$W/verify.out")" "^php82-fpm +running " "vsctl services: the gated pool runs"
is "$(grep '^php82-fpm ' "$W/verify.out" | grep -o '\b\(alice\|bob\|carol\)=[0-9]*' | sort | tr '\n' ' ')" \
	"alice=1 carol=1 " "it served the guide's two requests, one in alice and one in carol"
like "$(grep -E '^(alice|bob|carol|php82) ' "$W/verify.out" | awk '{ print $1 }' | tr '\n' ' ')" \
	"^php82 alice bob carol $" "vsctl list: the VSs of the rule file"
is "$(served)" "$(where vs)" "every site, through Apache and nginx: its PHP runs in its account's VS"
is "$(ps -o user= -p "$(pgrep -u carol -f '^php-fpm: pool carol' | head -1)")" carol \
	"carol's pool still runs as carol"

check "step rollback" step rollback /root
is "$(grep -E '^(stopped|/etc/vsd/vsd.rules:) ' "$W/rollback.out")" "stopped service php82-fpm
/etc/vsd/vsd.rules: 0 created, 0 updated, 4 destroyed, 0 unchanged" \
	"apply --prune of the package's file stopped the gated pool and destroyed the 4 VSs"
check "carol's pool runs as carol again, in php8.2-fpm.service" \
	sh -c 'p=$(pgrep -u carol -f "^php-fpm: pool carol" | head -1) && grep -qx "0::/system.slice/php8.2-fpm.service" /proc/$p/cgroup'
is "$(systemctl is-active vsd) $(systemctl is-enabled vsd)" "inactive disabled" "vsd is stopped and disabled"
is "$(systemctl is-active php8.2-fpm) $(systemctl is-enabled php8.2-fpm)" "active enabled" \
	"Debian's php8.2-fpm.service runs again, and at boot"
check "no vsd process (daemon or keeper), supervisor or gated pool left" \
	sh -c '! pgrep -x vsd && ! pgrep -f "[v]sd-gate" && ! pgrep -f "[p]hp-fpm: master process.*--nodaemonize"'
check "no VS cgroup left" sh -c '! ls -d /sys/fs/cgroup/vsd.slice/vsd-* 2>/dev/null | grep -q .'
is "$(served)" "$(where debian)" "every site serves again, its PHP in php8.2-fpm.service"
check "step rollback-check" step rollback-check /root
check "its output is the guide's" same_output rollback-check

check "step purge" step purge /root
check "the package is gone" sh -c '! dpkg -s vsd'
check "no vsd cgroup left" sh -c '! ls -d /sys/fs/cgroup/vsd.slice/vsd-* 2>/dev/null | grep -q .'
check "no pins, state or /etc/vsd left" \
	sh -c 'ls -d /sys/fs/bpf/vsd /var/lib/vsd /etc/vsd /etc/vsd/* 2>/dev/null; test ! -e /sys/fs/bpf/vsd && test ! -e /var/lib/vsd && test ! -e /etc/vsd'
is "$(served)" "$(where debian)" "the sites still serve, as before vsd"
done_testing
