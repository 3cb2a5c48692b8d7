#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Malformed, truncated and oversized messages on the live control socket get
# an error reply (or a closed connection) and never crash vsd or change state.
. "$(dirname "$0")/lib.sh"
need_root
vsd_start || { fail "vsd starts"; done_testing; }
check "create www1" vsctl create www1 --cpu 10%
before=$(cat "$VSD_STATE/state")

L() { echo "struct.pack('=I', $1)"; }
cases=(
	"empty|b''|"
	"short header|b'\\x05\\x00'|truncated request header"
	"zero length|$(L 0)|empty request"
	"huge length|$(L 0xffffffff)|request too large"
	"just over the limit|$(L 65537) + b'x' * 65537|request too large"
	"truncated body|$(L 100) + b'list\\0'|truncated request"
	"no NUL at the end|$(L 4) + b'list'|not NUL-terminated"
	"empty command|$(L 1) + b'\\0'|empty command"
	"argument without =|F(b'create\\0name\\0')|not key=value"
	"bad key|F(b'create\\0N A=b\\0')|not key=value"
	"unknown command|F(b'boom\\0')|unknown command 'boom'"
	"too many arguments|F(b'list\\0' + b'a=b\\0' * 1100)|too many arguments"
	"binary garbage|bytes(range(256)) * 4|"
	"create without name|F(b'create\\0cpu=5\\0')|no VS name"
	"name with a slash|F(b'create\\0name=../x\\0cpu=5\\0')|bad VS name"
	"exec-self without pidfd|F(b'exec-self\\0name=www1\\0')|did not carry the caller's pidfd"
)
for c in "${cases[@]}"; do
	IFS='|' read -r name bytes want <<<"$c"
	out=$(ctl_send "$bytes")
	if [ -z "$want" ]; then
		case $out in closed|2\ *) ok "$name: refused ($out)" ;; *) fail "$name: $out" ;; esac
	else
		# the status is the error class (lib/exitcode.h): a malformed
		# request is a usage error (2), a bad name a bad value (7)
		like "$out" "^[1-7] .*$want" "$name: error reply"
		case $want in
		"no VS name"|"bad VS name") cls=7 ;;
		*pidfd) cls=4 ;;
		*) cls=2 ;;
		esac
		like "$out" "^$cls " "$name: class $cls"
	fi
	kill -0 "$VSD_PID" 2>/dev/null || { fail "vsd died after: $name"; break; }
done
check "vsd still answers" vsctl list
is "$(cat "$VSD_STATE/state")" "$before" "state unchanged"

# A client that connects and says nothing is dropped after the timeout, and
# vsd serves others afterwards.
python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX); s.connect('$VSD_SOCKET'); time.sleep(3)" &
silent=$!
sleep 0.2
check "vsd serves again after a silent client" vsctl show www1
wait $silent
check "destroy www1" vsctl destroy www1
done_testing
