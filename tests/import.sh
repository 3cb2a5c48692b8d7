#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl import on a generated hosting server: 200 Apache vhosts and the
# same 200 sites as nginx server blocks, their document roots owned by 60
# accounts (50 users made here, 10 uids with no passwd entry), three
# PHP-FPM 8.2 pools (one shared, two of one account each). The real
# apache2ctl -S and nginx -T read the generated configuration; the rule
# file is checked, applied to a private vsd (which runs the pools under the
# accept gate) and imported again: the same bytes; requests through the
# generated Apache and nginx then run each site's PHP in its owner's VS.
# Then hostile configurations: an error naming the file and line, and
# nothing written.
. "$(dirname "$0")/lib.sh"
need_root
for c in apache2ctl nginx php-fpm8.2 useradd setpriv; do
	command -v $c >/dev/null || [ -x /usr/sbin/$c ] || skip_all "$c is not installed (scripts/deps.sh --test)"
done
export PATH=$PATH:/usr/sbin
getent passwd www-data >/dev/null || skip_all "no www-data user"

T=$(mktemp -d /tmp/vsd-import.XXXXXX) || exit 99
chmod 0755 "$T"
on_exit "rm -rf $T"
PORT=$(test_port)

# The accounts: 50 users, 10 bare uids (u<uid> in the rule file)
P=imp$$
ACCT=()
for i in $(seq -w 0 49); do
	useradd -r -M -s /usr/sbin/nologin "${P}a$i" || { fail "useradd ${P}a$i"; done_testing; }
	on_exit "userdel -f ${P}a$i"
	ACCT+=("${P}a$i")
done
ubase=$((200000000 + $$ % 100000 * 100))
for i in $(seq 0 9); do
	getent passwd $((ubase + i)) >/dev/null && skip_all "uid $((ubase + i)) has a passwd entry"
	ACCT+=("$((ubase + i))")
done
owner_vs() { case $1 in [0-9]*) echo "u$1" ;; *) echo "$1" ;; esac; }

# The page a site's PHP runs: the cgroup its thread is charged in (the v1
# cpu hierarchy decides CPU on hybrid hosts; else cgroup v2), as
# benchmarks/hosting-ad.php.in says it
cat >"$T/cg.php" <<'EOF'
<?php
$cg = $cg2 = '';
foreach (@file('/proc/thread-self/cgroup') ?: [] as $line) {
	$f = explode(':', rtrim($line), 3);
	if (count($f) < 3)
		continue;
	if ($f[1] === '')
		$cg2 = $f[2];
	elseif (in_array('cpu', explode(',', $f[1])))
		$cg = $f[2];
}
echo ($cg !== '' ? $cg : $cg2), "\n";
EOF

# gen DIR NSITES: an Apache, an nginx and PHP-FPM configuration under DIR,
# the document roots under DIR/root; site N (001...) belongs to account
# (N-1) % 60, accounts 0 and 1 have pools of their own
gen() {
	local d=$1 n=$2 i j k sock
	local R=$d/root A=$d/apache2 N=$d/nginx
	mkdir -p "$A/sites" "$N/sites" "$d/www" "$R/etc/php/8.2/fpm/pool.d" "$R/run/php" "$R/log"
	# the document roots are real paths ($d/www/...), for the front ends to
	# serve; import reads them under --root: $R/tmp is /tmp, where $d is
	ln -s /tmp "$R/tmp"
	cat >"$A/apache2.conf" <<EOF
ServerRoot $A
ServerName localhost
PidFile $d/apache.pid
ErrorLog $d/apache-error.log
Mutex file:$d
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule proxy_module /usr/lib/apache2/modules/mod_proxy.so
LoadModule proxy_fcgi_module /usr/lib/apache2/modules/mod_proxy_fcgi.so
User www-data
Group www-data
Listen 127.0.0.1:$PORT
IncludeOptional sites/*.conf
EOF
	cat >"$N/nginx.conf" <<EOF
pid $d/nginx.pid;
error_log $d/nginx-error.log;
events { }
http {
	access_log off;
	include $N/sites/*.conf;
}
EOF
	for j in $(seq 1 "$n"); do
		i=$(printf %03d "$j")
		k=$(((j - 1) % 60))
		case $k in 0) sock=one ;; 1) sock=two ;; *) sock=shared ;; esac
		sock=$R/run/php/$sock.sock
		mkdir -p "$d/www/site$i"
		cp "$T/cg.php" "$d/www/site$i/cg.php"
		chown "${ACCT[$k]}" "$d/www/site$i"
		cat >"$A/sites/site$i.conf" <<EOF
# site$i
<VirtualHost 127.0.0.1:$PORT>
	ServerName site$i.example
	ServerAlias www.site$i.example
	DocumentRoot $d/www/site$i
	<FilesMatch \.php$>
		SetHandler "proxy:unix:$sock|fcgi://localhost"
	</FilesMatch>
</VirtualHost>
EOF
		cat >"$N/sites/site$i.conf" <<EOF
server {
	listen 127.0.0.1:$((PORT + 1));
	server_name site$i.example www.site$i.example;
	root $d/www/site$i;
	location ~ \.php$ {
		include /etc/nginx/fastcgi_params;
		fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
		fastcgi_pass unix:$sock;
	}
}
EOF
	done
	cat >"$R/etc/php/8.2/fpm/php-fpm.conf" <<EOF
[global]
pid = $R/run/php/fpm.pid
error_log = $R/log/fpm.log
include = $R/etc/php/8.2/fpm/pool.d/*.conf
EOF
	printf '[shared]\nuser = www-data\ngroup = www-data\nlisten = %s\nlisten.mode = 0666\npm = static\npm.max_children = 2\n' \
		"$R/run/php/shared.sock" >"$R/etc/php/8.2/fpm/pool.d/shared.conf"
	printf '; account 0\n[one]\nuser = %s\nlisten = %s\nlisten.mode = 0666\npm = static\npm.max_children = 1\n' \
		"${ACCT[0]}" "$R/run/php/one.sock" >"$R/etc/php/8.2/fpm/pool.d/one.conf"
	printf '[two]\nuser = %s\nlisten = %s\nlisten.mode = 0666\npm = static\npm.max_children = 1\n' \
		"${ACCT[1]}" "$R/run/php/two.sock" >"$R/etc/php/8.2/fpm/pool.d/two.conf"
}

# imp DIR [ARGS...]: vsctl import of DIR's configuration (the report on
# DIR/report, the exit status in RC), run through $IMP_AS if set
imp() {
	local d=$1
	shift
	APACHE_CONFDIR=$d/apache2 VSCTL_NGINX="nginx -c $d/nginx/nginx.conf -p $d/" \
		${IMP_AS:-} "$VSCTL" import --root "$d/root" "$@" 2>"$d/report"
	RC=$?
}

S=$T/s
gen "$S" 200

# The default: both front ends found, one VS per account
imp "$S" -o "$T/auto.rules"
is "$RC" 0 "import exits 0"
like "$(head -1 "$S/report")" "^vsctl import: 200 sites, 60 accounts, 3 pools \(read: 200 Apache vhosts, 200 nginx server blocks\)$" \
	"the report counts 200 sites, 60 accounts, 3 pools, from both front ends"
like "$(grep '^pool shared ' "$S/report")" "serves 58 accounts: gate it; memory: not running$" \
	"the shared pool serves 58 accounts: gate it (not running yet)"
like "$(grep '^pool one ' "$S/report")" "^pool one \(PHP 8.2, /etc/php/8.2/fpm/pool.d/one.conf:2; user ${ACCT[0]}, listen $S/root/run/php/one.sock, pm static, max_children 1\): serves one account, ${ACCT[0]}: keep it, in VS ${ACCT[0]};" \
	"pool one, of one account: keep it, in that account's VS (its file:line, user, listen, pm)"
like "$(grep '^pool two ' "$S/report")" "serves one account, ${ACCT[1]}: keep it" "pool two, of one account: keep it"
# The saving's basis, computed here from the benchmark's results (python's
# median, not vsctl's build): one gated pool's and the two per-site pools'
# PSS, and a pool's processes, its master and the run's workers
read -r GATED PER_SITE < <(python3 - "$top_srcdir/benchmarks/results/hosting.csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(*(round(statistics.median(int(r['pools_pss_kb']) for r in rows if r['mode'] == m))
        for m in ('gated', 'per-site')))
PY
)
WORKERS=$(sed -n 's/.*`benchmarks\/hosting [^`]*--workers \([0-9]*\).*/\1/p' "$top_srcdir/benchmarks/results/hosting.md")
[ -n "$WORKERS" ] || WORKERS=$(sed -n 's/.*[ 	]WORKERS=\([0-9]*\).*/\1/p' "$top_srcdir/benchmarks/hosting")
# mib KIB: as the report writes it
mib() { echo "$(($1 / 1024)).$(($1 % 1024 * 10 / 1024)) MiB"; }
# basis WORKERS_THAT_GO: the saving, what it rests on
basis() {
	local per=$(((PER_SITE - GATED) / (WORKERS + 1)))
	echo "saves $(mib $(($1 * (PER_SITE - GATED) / (WORKERS + 1)))), $1 workers (pm.max_children of all pools but the largest) at $(mib $per) a process (basis: benchmarks/results/hosting.csv, where 2 per-site pools took $(mib "$PER_SITE") PSS and one gated pool $(mib "$GATED"), $((WORKERS + 1)) processes a pool)"
}
is "$(grep '^consolidating' "$S/report")" "consolidating PHP 8.2's 3 pools into one gated pool: $(basis 2); now: 2 of those pools not running" \
	"the saving of one gated pool: the workers of the two smaller pools, at the hosting benchmark's figure a process, even with the pools not running"

imp "$S" --apache -o "$T/apache.rules"
is "$RC" 0 "import --apache exits 0"
imp "$S" --nginx >"$T/nginx.rules"
is "$RC" 0 "import --nginx (to stdout) exits 0"
check "--apache, --nginx (stdout) and the default (both) write the same bytes" \
	sh -c "cmp '$T/apache.rules' '$T/auto.rules' && cmp '$T/nginx.rules' '$T/auto.rules'"

check "vsctl check takes it" vsctl check "$T/auto.rules"
is "$(vsctl check --json "$T/auto.rules" | json '[d["vs"], d["sites"], d["services"]]')" "[61, 200, 1]" \
	"61 VSs (60 accounts and the shared pool's home), 200 sites, 1 service"
like "$(grep -c '^site ' "$T/auto.rules")" "^60$" "site lines folded: one per account"
like "$(grep '^vs ' "$T/auto.rules" | tr '\n' ' ')" "^vs php82 cpu 5%	# home of the gated PHP 8.2 pools vs ${P}a\[00..49\] plan imported vs u\[$ubase..$((ubase + 9))\] plan imported $" \
	"vs lines folded into ranges; bare uids are u<uid>"
like "$(grep "vs ${ACCT[2]}\$" "$T/auto.rules")" "^site site\[003\|063\|123\|183\]\.example alias www\.site\[003\|063\|123\|183\]\.example docroot $S/www/site\[003\|063\|123\|183\] vs ${ACCT[2]}$" \
	"an account's sites in one line"
like "$(grep '^service' -A1 "$T/auto.rules" | tr -d '\n\t\\')" "^service php82-fpm home php82 attrs-timeout 200ms command \"/usr/sbin/php-fpm8.2 --nodaemonize --fpm-config $S/root/etc/php/8.2/fpm/php-fpm.conf\"$" \
	"one gated service for PHP 8.2"

# every account's first site and last site, in its VS (the compiled file)
vsctl check --dump "$T/auto.rules" | grep '^site ' >"$T/dump"
want= got=
for k in $(seq 0 59); do
	for n in $((k + 1)) $((k + 121 <= 200 ? k + 121 : k + 61)); do
		i=$(printf %03d $n)
		want+="site site$i.example alias www.site$i.example docroot $S/www/site$i vs $(owner_vs "${ACCT[$k]}")"$'\n'
		got+=$(grep "^site site$i\.example " "$T/dump")$'\n'
	done
done
is "$got" "$want" "two sites of each of the 60 accounts, each in its owner's VS"
is "$(wc -l <"$T/dump")" 200 "200 sites in the compiled file"

# --per-site: a VS per site
imp "$S" --per-site -o "$T/per-site.rules"
is "$(vsctl check --json "$T/per-site.rules" | json '[d["vs"], d["sites"]]')" "[201, 200]" "--per-site: 200 site VSs and the pool's home"
like "$(grep '^vs site' "$T/per-site.rules")" "^vs site\[001\.\.200\]-example plan imported$" "--per-site: one range of VSs"
like "$(grep '^site' "$T/per-site.rules")" "^site site\[001\.\.200\]\.example alias www\.site\[001\.\.200\]\.example docroot $S/www/site\[001\.\.200\] vs site\[001\.\.200\]-example$" \
	"--per-site: the 200 sites in one line"

# apply to a private vsd: it starts the pools under the gate; import again
vsd_start || { fail "vsd starts"; done_testing; }
: >"$T/empty.rules"
on_exit "'$VSCTL' --socket '$VSD_SOCKET' apply --prune '$T/empty.rules'"
check "vsctl apply --dry-run takes it" vsctl apply --dry-run "$T/auto.rules"
check "vsctl apply takes it" vsctl apply "$T/auto.rules"
is "$(vsctl list --names | sort | tr '\n' ' ')" "$( (echo php82; for a in "${ACCT[@]}"; do owner_vs "$a"; done) | sort | tr '\n' ' ')" \
	"vsd runs the 61 VSs"
pools_up() {
	local m
	m=$(pgrep -f "^php-fpm: master process \\($S/root/etc/php/8.2/fpm/php-fpm.conf\\)") &&
		[ "$(pgrep -c -P "$m" -f '^php-fpm: pool (shared|one|two)$')" -ge 4 ]
}
check "the PHP 8.2 pools run under vsd" wait_until pools_up
imp "$S" -o "$T/again.rules"
is "$RC" 0 "import again exits 0"
sed 's/^/# /' "$S/report"
check "import again after apply: the same file" cmp "$T/auto.rules" "$T/again.rules"
like "$(grep '^pool shared ' "$S/report")" "memory: [0-9]+\.[0-9] MiB PSS in 2 processes$" "the shared pool's PSS, from its 2 workers"
like "$(grep '^consolidating' "$S/report")" "^consolidating PHP 8.2's 3 pools into one gated pool: $(basis 2 | sed 's/[().]/\\&/g'); now: [0-9]+\.[0-9] MiB PSS in those pools$" \
	"the saving, on the same basis, and the PSS of the pools that would go now"

# Requests through each front end: each site's PHP runs in its owner's VS,
# whichever pool serves it (the shared one, or its account's own)
apache2 -d "$S/apache2" -f "$S/apache2/apache2.conf" -DFOREGROUND >"$S/apache.out" 2>&1 &
on_exit "kill $!"
nginx -c "$S/nginx/nginx.conf" -p "$S/" -g 'daemon off;' >"$S/nginx.out" 2>&1 &
on_exit "kill $!"
up() { curl -s -o /dev/null "http://127.0.0.1:$1/"; }
check "Apache serves" wait_until up "$PORT"
check "nginx serves" wait_until up "$((PORT + 1))"
# served PORT: for the first two sites of each account, by their aliases,
# "siteN VS" where VS is the VS their PHP ran in
served() {
	local k n vs
	for k in $(seq 0 59); do
		for n in $((k + 1)) $((k + 61)); do
			n=$(printf %03d $n)
			vs=$(curl -s -H "Host: www.site$n.example" "http://127.0.0.1:$1/cg.php" |
				sed 's|.*/||')
			echo "site$n $vs "
		done
	done
}
want=$(for k in $(seq 0 59); do
	for n in $((k + 1)) $((k + 61)); do echo "site$(printf %03d $n) $(owner_vs "${ACCT[$k]}") "; done
done)
is "$(served "$PORT")" "$want" "through Apache, two sites of each account: PHP in the owner's VS"
is "$(served "$((PORT + 1))")" "$want" "through nginx, the same"
check "apply --prune of an empty file stops the pools" vsctl apply --prune "$T/empty.rules"

"$VSCTL" import --bogus 2>/dev/null
is "$?" 2 "import --bogus: usage error"
like "$("$VSCTL" --json import)" '^\{"error": "import: no --json output' "import under --json: a JSON error, no rule file"

# Hostile configurations: exit 7, FILE:LINE: in the error, nothing written
# refused NAME DIR WANT [ARGS]: import DIR -o out; WANT is a line of stderr
refused() {
	local name=$1 d=$2 want=$3
	shift 3
	rm -f "$d/out.rules"
	imp "$d" -o "$d/out.rules" "$@"
	is "$RC" 7 "$name: exit 7"
	check "$name: the error names the file and line" grep -qxF -- "$want" "$d/report"
	is "$(ls "$d" | grep -c '^out\.rules')" 0 "$name: nothing written, no temp file left"
}

H=$T/h1
gen "$H" 3
echo "Include $H/apache2/missing.conf" >>"$H/apache2/apache2.conf"
refused "a missing Include" "$H" "$H/apache2/apache2.conf:14: Could not open configuration file $H/apache2/missing.conf: No such file or directory" --apache

# An include only root may read, imported by another user: the whole
# configuration readable but that file, and DIR writable by that user (so
# "nothing written" is the import's doing)
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
H=$T/h2
gen "$H" 3
chmod -R a+rX "$H"
chmod a+w "$H"
chmod 0600 "$H/apache2/sites/site002.conf"
IMP_AS=$NOBODY refused "an unreadable Include (not root)" "$H" \
	"$H/apache2/apache2.conf:13: Could not open configuration file $H/apache2/sites/site002.conf: Permission denied" --apache

H=$T/h2n
gen "$H" 3
chmod -R a+rX "$H"
chmod a+w "$H"
chmod 0600 "$H/nginx/sites/site002.conf"
IMP_AS=$NOBODY refused "nginx: an unreadable include (not root)" "$H" \
	"$H/nginx/nginx.conf:6: open() \"$H/nginx/sites/site002.conf\" failed (13: Permission denied)" --nginx

H=$T/h3
gen "$H" 3
sed -i '/DocumentRoot/d' "$H/apache2/sites/site002.conf"
refused "a vhost with no DocumentRoot" "$H" "$H/apache2/sites/site002.conf:2: site002.example: no DocumentRoot" --apache
echo "# the provider's own" >"$H/keep.rules"
imp "$H" --apache -o "$H/keep.rules"
is "$RC $(cat "$H/keep.rules")" "7 # the provider's own" "refused: a file already at -o FILE stays as it was"
sed -i '/root /d' "$H/nginx/sites/site003.conf"
refused "a server block with no root" "$H" "$H/nginx/sites/site003.conf:1: site003.example: no root" --nginx

H=$T/h4
gen "$H" 3
sed -i 's/ServerName site003/ServerName site002/' "$H/apache2/sites/site003.conf"
refused "a duplicate ServerName" "$H" \
	"$H/apache2/sites/site003.conf:2: duplicate ServerName site002.example: $H/apache2/sites/site002.conf:2 has it on port $PORT too" --apache
sed -i 's/server_name site003.example/server_name site001.example/' "$H/nginx/sites/site003.conf"
refused "an nginx server_name twice" "$H" \
	"$H/nginx/sites/site003.conf:1: duplicate server_name site001.example: $H/nginx/sites/site001.conf:1 has it on port $((PORT + 1)) too" --nginx

H=$T/h5
gen "$H" 3
sed -i "s|^http {|include $H/nginx/missing.conf;\nhttp {|" "$H/nginx/nginx.conf"
refused "nginx: a missing include" "$H" \
	"$H/nginx/nginx.conf:4: open() \"$H/nginx/missing.conf\" failed (2: No such file or directory)" --nginx

# A handler for the whole server (Debian's a2enconf php8.2-fpm), in a file
# apache2.conf includes: the vhosts with none of their own use it; a vhost's
# own handler wins
H=$T/hs
gen "$H" 3
sed -i '/FilesMatch\|SetHandler/d' "$H/apache2/sites/site001.conf" "$H/apache2/sites/site002.conf"
sed -i "s|$H/root/run/php/shared.sock|$H/root/run/php/one.sock|" "$H/apache2/sites/site003.conf"
mkdir "$H/apache2/conf"
printf '<FilesMatch ".+\\.ph(?:ar|p|tml)$">\n\tSetHandler "proxy:unix:%s|fcgi://localhost"\n</FilesMatch>\n' \
	"$H/root/run/php/shared.sock" >"$H/apache2/conf/php8.2-fpm.conf"
sed -i 's|^IncludeOptional sites|IncludeOptional conf/*.conf\nIncludeOptional sites|' "$H/apache2/apache2.conf"
imp "$H" --apache -o "$H/out.rules"
is "$RC" 0 "a server-wide handler: exit 0"
like "$(grep '^pool shared ' "$H/report")" "serves 2 accounts: gate it;" \
	"the two vhosts with no handler of their own use the server's: the shared pool serves 2 accounts"
like "$(grep '^pool one ' "$H/report")" "serves one account, ${ACCT[2]}: keep it" \
	"the vhost with its own handler keeps it"
check "the file gates the shared pool" grep -q '^service php82-fpm ' "$H/out.rules"

# nginx's fastcgi_pass naming an upstream block: the pool its server listens
# on serves the sites that pass to it (here all three, of three accounts)
H=$T/hu
gen "$H" 3
printf 'upstream php82 {\n\tserver unix:%s;\n}\n' "$H/root/run/php/shared.sock" >"$H/nginx/sites/0-upstream.conf"
sed -i 's|fastcgi_pass unix:.*;|fastcgi_pass php82;|' "$H"/nginx/sites/site00[123].conf
imp "$H" --nginx -o "$H/out.rules"
is "$RC" 0 "fastcgi_pass to an upstream: exit 0"
like "$(grep '^pool shared ' "$H/report")" "serves 3 accounts: gate it;" \
	"the upstream's server is the shared pool's socket: it serves the three accounts"
is "$(grep -c '^pool \(one\|two\) .*: serves no site found;' "$H/report")" 2 \
	"the pools no site passes to serve none"

# PHP-FPM of every installed version: sites 3 to 6 on pools of PHP 5.6,
# 7.0, 7.4 and 8.1 (one each), sites 1 and 2 on 8.2's pools of one account
# each. Every version is then run by vsd, each request's PHP charged to its
# account (keep it, in VS ...), though no pool serves several accounts;
# the five homes share 20% of the machine
H=$T/hv
gen "$H" 6
VERSIONS="5.6 7.0 7.4 8.1"
n=3
for v in $VERSIONS; do
	mkdir -p "$H/root/etc/php/$v/fpm/pool.d"
	printf '[p%s]\nuser = www-data\nlisten = %s\npm = ondemand\npm.max_children = 3\n' "${v/./}" \
		"$H/root/run/php/php$v-fpm.sock" >"$H/root/etc/php/$v/fpm/pool.d/www.conf"
	sed -i "s|$H/root/run/php/shared.sock|$H/root/run/php/php$v-fpm.sock|" "$H/apache2/sites/site00$n.conf"
	n=$((n + 1))
done
imp "$H" --apache -o "$H/out.rules"
is "$RC" 0 "five PHP versions: exit 0"
n=3 want=
for v in $VERSIONS; do
	want+="pool p${v/./} (PHP $v, /etc/php/$v/fpm/pool.d/www.conf:1; user www-data, listen $H/root/run/php/php$v-fpm.sock, pm ondemand, max_children 3): serves one account, ${ACCT[$((n - 1))]}: keep it, in VS ${ACCT[$((n - 1))]}; memory: not running"$'\n'
	n=$((n + 1))
done
is "$(grep '^pool p[0-9]' "$H/report")" "${want%$'\n'}" "the pool of each version, each serving its one account"
is "$(grep '^vs php' "$H/out.rules" | tr '\t' ' ')" "$(for v in $VERSIONS 8.2; do echo "vs php${v/./} cpu 4% # home of the gated PHP $v pools"; done)" \
	"a home VS for each version, 4% each: 20% for the five"
is "$(grep -A1 '^service' "$H/out.rules" | tr -d '\t\\' | grep -v '^--$' | paste -d' ' - -)" \
	"$(for v in $VERSIONS 8.2; do echo "service php${v/./}-fpm home php${v/./} attrs-timeout 200ms  command \"/usr/sbin/php-fpm$v --nodaemonize --fpm-config $H/root/etc/php/$v/fpm/php-fpm.conf\""; done)" \
	"each version's master run by vsd under the gate, 8.2 too, whose pools serve one account each"
is "$(vsctl check --json "$H/out.rules" | json '[d["ok"], d["vs"], d["services"]]')" "[true, 11, 5]" \
	"vsctl check takes it: 6 accounts and 5 homes, 5 services"
is "$(grep -c 'has one pool: nothing to consolidate$' "$H/report")" 4 "four versions with one pool: nothing to consolidate"

# Names that are not VS names: mapped, reported, and the file is written
H=$T/h6
gen "$H" 4
B1="Imp$$.Dot" B2="imp$$-dot"
useradd -r -M -s /usr/sbin/nologin --badname "$B1" && on_exit "userdel -f $B1"
useradd -r -M -s /usr/sbin/nologin "$B2" && on_exit "userdel -f $B2"
chown "$B1" "$H/www/site003"
chown "$B2" "$H/www/site004"
sed -i 's/server_name site001.example/server_name _/' "$H/nginx/sites/site001.conf"
sed -i 's/server_name site002.example www.site002.example/server_name site002.example ~^w+\\.site002\\.example$/' \
	"$H/nginx/sites/site002.conf"
printf 'server {\n\tserver_name site005.example;\n\troot /var/www/gone;\n}\n' >"$H/nginx/sites/site005.conf"
imp "$H" --nginx -o "$H/out.rules"
is "$RC" 0 "names that are not VS names: exit 0"
check "the owner with a valid name keeps it; the other is mapped and reported" \
	grep -qxF "owner \"$B1\" is VS imp$$-dot-2" "$H/report"
check "a catch-all server block is reported, not mapped" \
	grep -qxF "$H/nginx/sites/site001.conf:1: _: a catch-all server name" "$H/report"
check "a regular expression alias is reported, not mapped" \
	grep -qxF "$H/nginx/sites/site002.conf:1: alias ~^w+\\.site002\\.example\$ of site002.example: a regular expression server name" "$H/report"
check "a document root that does not exist is reported, not mapped" \
	grep -qxF "$H/nginx/sites/site005.conf:1: site005.example: document root /var/www/gone: No such file or directory" "$H/report"
vsctl check --dump "$H/out.rules" | grep '^site ' >"$H/dump"
is "$(grep -c . "$H/dump") $(grep -c "site003.* vs imp$$-dot-2$" "$H/dump") $(grep -c "site004.* vs imp$$-dot$" "$H/dump")" "3 1 1" \
	"the checked file binds each site to its owner's VS"

# --per-site: host names that are not VS names, mapped as vsctl(8) says,
# each mapping reported, and the file written
H=$T/h7
gen "$H" 4
LONG=a-very-long-host-name-for-one-site.example
sed -i 's/server_name site001.example www.site001.example/server_name 1st.example/' "$H/nginx/sites/site001.conf"
sed -i 's/server_name site002.example www.site002.example/server_name home/' "$H/nginx/sites/site002.conf"
sed -i "s/server_name site003.example www.site003.example/server_name $LONG/" "$H/nginx/sites/site003.conf"
sed -i "s/server_name site004.example www.site004.example/server_name ${LONG}2/" "$H/nginx/sites/site004.conf"
imp "$H" --nginx --per-site -o "$H/out.rules"
is "$RC" 0 "--per-site, host names that are not VS names: exit 0"
V31=${LONG:0:31} V29=${LONG:0:29}
is "$(sed -n '/^renamed:$/,$p' "$H/report")" "renamed:
site \"1st.example\" is VS u1st-example
site \"$LONG\" is VS $V31
site \"${LONG}2\" is VS $V29-2
site \"home\" is VS vs-home" \
	"each mapping reported: a u before a digit, cut to 31, -2 after a name taken, vs- before a reserved word"
vsctl check --dump "$H/out.rules" | grep '^site ' | sed 's/ docroot [^ ]*//' | sort >"$H/dump"
is "$(cat "$H/dump")" "site 1st.example vs u1st-example
site $LONG vs $V31
site ${LONG}2 vs $V29-2
site home vs vs-home" "the checked file binds each site to its mapped VS"
done_testing
