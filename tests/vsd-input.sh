#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Unclear or inconsistent input handling, on a real vsd:
# names of cgroup control files refused as VS names, a default service name
# made from any command's base name, messages that name the vsctl command
# (exec, not the protocol's exec-self), too many passed descriptors, duplicate
# and unknown protocol keys, and an invalid pid after "--".
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
check "create www1" vsctl create www1 --cpu 10%
state() { cat "$VSD_STATE/state"; }
before=$(state)

# --- names of cgroup control files --------------------------------------------
for n in tasks notify_on_release release_agent; do
	out=$(vsctl create $n --cpu 1% 2>&1)
	is "$?" 7 "create $n fails (a bad value)"
	like "$out" "create: bad VS name '$n': it is the name of a cgroup control file" \
		"and says $n is a cgroup file's name"
	left=0
	for d in $(vsh_dirs); do [ -d "$d/$n" ] && left=1; done
	is "$left" 0 "no cgroup directory $n was made"
done
printf 'vs www1 cpu 10%%\nvs notify_on_release cpu 1%%\n' >"$VSD_TMP/n.rules"
chmod 0644 "$VSD_TMP/n.rules"
out=$(vsctl check "$VSD_TMP/n.rules" 2>&1)
like "$out" "n.rules:2:4: invalid VS name 'notify_on_release': is the name of a cgroup control file" \
	"vsctl check refuses it with file:line:column, as vsd does"
is "$(state)" "$before" "nothing changed"

# --- vsctl run: the default name from any command's base name ---------------------
cp "$(command -v sleep)" "$VSD_TMP/PHP-fpm8.2"
"$VSCTL" run --home www1 -- "$VSD_TMP/PHP-fpm8.2" 60 >"$VSD_TMP/run.out" 2>&1 &
runpid=$!
on_exit "kill $runpid"
name=
for i in $(seq 50); do
	name=$(vsctl services --json 2>/dev/null | json '" ".join(s["name"] for s in d)')
	[ -n "$name" ] && break
	kill -0 $runpid 2>/dev/null || break
	sleep 0.1
done
is "$name" "php-fpm8-2" "vsctl run -- .../PHP-fpm8.2 runs as service php-fpm8-2"
[ -n "$name" ] || diag "vsctl run said: $(cat "$VSD_TMP/run.out")"
kill $runpid 2>/dev/null
wait $runpid 2>/dev/null
out=$("$VSCTL" run --home www1 -- /nonexistent/9lives 2>&1)
like "$out" "bad service name '9lives': it must start with a lower-case letter \(use --name\)" \
	"a base name that cannot be made a name asks for --name"

# --- messages name the vsctl command ------------------------------------------------
out=$(vsctl exec nosuch -- true 2>&1)
is "$?" 5 "exec into a missing VS fails (no such VS)"
like "$out" "^vsctl: exec: no VS named 'nosuch'" "the message says exec"
case $out in *exec-self*) fail "and not exec-self: $out" ;; *) ok "and not exec-self" ;; esac

# --- vsctl attach NAME -- -1 ---------------------------------------------------------
out=$(vsctl attach www1 -- -1 2>&1)
is "$?" 7 "attach www1 -- -1 fails (a bad value)"
like "$out" "attach: pid '-1' is not a whole number" "and says the pid is invalid"
out=$(vsctl create dup --cpu 1% --cpu 2% 2>&1)
like "$out" "create: option --cpu given twice" "vsctl refuses an option given twice"

# --- the raw protocol ------------------------------------------------------------------
# NFDS|BODY|REPLY|NAME: what vsd answers to each raw request
cases=(
	"5|b'list\\0'|2 too many file descriptors (5, at most 4)|five descriptors: too many, and how many"
	"200|b'list\\0'|2 too many file descriptors (200, at most 4)|two hundred: too many too"
	"0|b'create\\0name=twice\\0cpu=1\\0cpu=2\\0'|2 create: key 'cpu' given twice|a key given twice is refused"
	"0|b'create\\0name=a\\0name=b\\0cpu=1\\0'|2 create: key 'name' given twice|so is a second name"
	"0|b'create\\0name=typo\\0cpu=1\\0cpux=2\\0'|2 create: unknown key 'cpux'|an unknown key is refused, not ignored"
	"0|b'list\\0verbose=1\\0'|2 list: unknown key 'verbose'|on every command"
	"0|b'exec-self\\0name=www1\\0pid=1\\0'|2 exec: unknown key 'pid'|exec-self's errors say exec"
)
for c in "${cases[@]}"; do
	IFS='|' read -r nfd body want name <<<"$c"
	is "$(ctl_send "F($body)" "$nfd")" "$want" "$name"
done
like "$(ctl_send "F(b'list\\0')" 1)" "^0 " "one descriptor along with list is fine"
sleep 300 &
sp=$!
on_exit "kill $sp"
check "attach takes several pids (pid may repeat)" vsctl attach www1 $sp $sp
out=$(ctl_send "F(b'list\\0json=1\\0')")
like "$out" "^0 \[" "list json=1 is still fine"
is "$(state)" "$before" "none of the refused requests changed anything"
check "vsd is still running" kill -0 "$VSD_PID"

done_testing
