#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl as scripts use it: one exit status per kind of failure (lib/exitcode.h,
# vsctl(8) EXIT STATUS), chosen by vsd's reply and not guessed from its words;
# --json on every command, errors included, parsed by python3's json module;
# help, --help and --version.
. "$(dirname "$0")/lib.sh"
need_root
command -v setpriv >/dev/null || skip_all "setpriv (util-linux) is missing"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# st WANT NAME CMD...: CMD exits with WANT
st() {
	local want=$1 name=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ]; then
		ok "$name (exit $want)"
	else
		fail "$name: exit $rc, want $want"
		diag "command: $*" "$out"
	fi
}

# js NAME WANT-RC CMD...: CMD exits with WANT-RC, its stdout is one JSON value,
# its stderr is empty; an error (WANT-RC > 0) is {"error", "class", "exit"}
# with exit equal to the status
js() {
	local name=$1 want=$2 rc
	shift 2
	"$@" >"$VSD_TMP/js.out" 2>"$VSD_TMP/js.err"
	rc=$?
	if [ "$rc" = "$want" ] && [ ! -s "$VSD_TMP/js.err" ] && python3 - "$VSD_TMP/js.out" "$want" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
v = json.loads(raw.decode("utf-8"))	# strict: invalid UTF-8 fails too
want = int(sys.argv[2])
if want:
    assert isinstance(v, dict) and isinstance(v["error"], str) and v["error"], v
    assert v["exit"] == want and isinstance(v["class"], str), v
PY
	then
		ok "--json: $name (exit $want, one JSON value on stdout)"
	else
		fail "--json: $name: exit $rc, want $want"
		diag "command: $*"
		sed 's/^/#   stdout: /' "$VSD_TMP/js.out" | head -5
		sed 's/^/#   stderr: /' "$VSD_TMP/js.err" | head -5
	fi
}

vsd_start || { fail "vsd starts"; done_testing; }

# --- versions, from configure.ac's AC_INIT ----------------------------------------
ver=$(sed -n 's/^AC_INIT(\[vsd\], \[\([^]]*\)\].*/\1/p' "$top_srcdir/configure.ac")
is "$(vsctl --version)" "vsctl $ver" "vsctl --version says $ver"
is "$("$VSD" --version)" "vsd $ver" "vsd --version says $ver"
is "$(vsctl --json --version | json 'd["version"]')" "$ver" "vsctl --json --version"
is "$(vsctl --version --json | json 'd["version"]')" "$ver" "vsctl --version --json: either order"

# --- help ---------------------------------------------------------------------------
out=$(vsctl help)
st 0 "vsctl help" vsctl help
for c in create set destroy list show attach exec conns run services service check apply reload; do
	printf '%s\n' "$out" | grep -q "^  vsctl $c\b" || fail "vsctl help lists $c"
done
like "$(vsctl help create)" "^usage: vsctl create NAME --cpu P%" "vsctl help create shows its usage"
like "$(vsctl help create)" "--mem SIZE +memory limit" "and its options"
is "$(vsctl create --help)" "$(vsctl help create)" "vsctl create --help says the same"
is "$(vsctl exec www1 --help)" "$(vsctl help exec)" "so does exec NAME --help"
st 0 "vsctl check --help" vsctl check --help
st 2 "vsctl help nosuch" vsctl help nosuch
js "help" 0 vsctl help --json
js "help create" 0 vsctl help create --json
js "create --help" 0 vsctl create --help --json
js "--json --help" 0 vsctl --json --help
is "$(vsctl --help --json)" "$(vsctl help --json)" "vsctl --help --json is vsctl help --json"
is "$(vsctl --json help create | json 'd["usage"].split()[0:2]')" '["create", "NAME"]' "help --json: the usage"
like "$(vsctl --json help | json '" ".join(c["command"] for c in d["commands"])')" "^create set destroy list show" \
	"help --json: the commands"
is "$(vsctl list --json | json 'len(d)')" 0 "--help created nothing"

# --- exit statuses --------------------------------------------------------------------
st 2 "usage: no command" vsctl
st 2 "usage: unknown command" vsctl frobnicate
st 2 "usage: create without a name" vsctl create
st 2 "usage: an unknown option" vsctl create www1 --cpu 5% --cpux 1
like "$(vsctl --socket 2>&1)" "^vsctl: option --socket needs a value$" "usage: --socket without its path says so"
# run parses its own options, the same way: --opt=V, and each once
st 7 "run --home=9x: the value after '=' is read (a bad VS name)" vsctl run --home=9x -- true
st 2 "usage: run --home given twice" vsctl run --home base --home=www1 -- true
st 2 "usage: run --gate given twice" vsctl run --gate accept --gate=accept --home base -- true
# --gate accept once is the documented form, not a repeat of the default
st 7 "run --gate accept (once) is taken: the bad VS name is what is refused" \
	vsctl run --gate accept --home 9x -- true
st 7 "run --gate=nosuch: an unknown gate is a bad value" vsctl run --gate=nosuch --home base -- true
st 3 "no daemon: no socket file" env VSD_SOCKET="$VSD_TMP/none.sock" "$VSCTL" list
# top asks vsd on its own: the same classes
st 3 "no daemon: top" env VSD_SOCKET="$VSD_TMP/none.sock" "$VSCTL" top -b -n 1 -d 1
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$VSD_TMP/dead.sock"
st 3 "no daemon: a socket nobody listens on" env VSD_SOCKET="$VSD_TMP/dead.sock" "$VSCTL" list
out=$(VSD_SOCKET="$VSD_TMP/dead.sock" "$VSCTL" list 2>&1)
like "$out" "is vsd running\?" "and asks whether vsd runs"
# EACCES on connect: the socket's directory is 0700 root
st 4 "permission: nobody cannot reach the socket" as_nobody "$VSCTL" list
st 4 "permission: nor with top" as_nobody "$VSCTL" top -b -n 1 -d 1
out=$(as_nobody "$VSCTL" list 2>&1)
like "$out" "Permission denied" "says permission denied"
if printf '%s' "$out" | grep -q "is vsd running"; then
	fail "EACCES does not ask whether vsd is running"; diag "$out"
else
	ok "EACCES does not ask whether vsd is running"
fi
# vsd's own refusal (SO_PEERCRED) with the modes widened on purpose
chmod 0755 "$VSD_TMP"
chmod 0666 "$VSD_SOCKET"
st 4 "permission: vsd refuses nobody" as_nobody "$VSCTL" list
js "vsd refuses nobody" 4 as_nobody "$VSCTL" --json list
chmod 0700 "$VSD_TMP"
chmod 0600 "$VSD_SOCKET"

st 0 "create www1 --cpu 60%" vsctl create www1 --cpu 60%
st 5 "no such VS: show" vsctl show nosuch
st 5 "no such VS: set" vsctl set nosuch --cpu 1%
st 5 "no such VS: destroy" vsctl destroy nosuch
st 6 "conflict: share over 100%" vsctl create www2 --cpu 50%
st 6 "conflict: the name exists" vsctl create www1 --cpu 1%
sleep 300 &
sp=$!
on_exit "kill $sp"
vsctl attach www1 $sp
st 6 "conflict: destroy a VS with processes" vsctl destroy www1
st 7 "bad value: --cpu 150%" vsctl create www3 --cpu 150%
st 7 "bad value: --mem 1.5.5G" vsctl create www3 --cpu 1% --mem 1.5.5G
st 7 "bad value: a bad VS name" vsctl create 9lives --cpu 1%
st 7 "bad value: --cpu-max below --cpu" vsctl set www1 --cpu-max 10%
is "$(vsctl list --json | json '[(v["name"], v["cpu"]) for v in d]')" '[["www1", 60]]' \
	"none of the refused commands changed anything"

# --- sizes with fractions, the one parser of vsctl, vsd and rule files -------------
st 0 "create www6 --mem 1.5G" vsctl create www6 --cpu 1% --mem 1.5G
is "$(vsctl show www6 --json | json 'd["mem_max"]')" 1610612736 "1.5G is 1610612736 bytes"
# the kernel got it: memory.max (v2) or memory.limit_in_bytes (v1)
lim=
for dir in $(vsctl show www6 --json | json '" ".join(d["cgroups"])'); do
	for f in memory.max memory.limit_in_bytes; do
		[ -r "$dir/$f" ] && lim=$(cat "$dir/$f")
	done
done
is "$lim" 1610612736 "and so does the kernel's memory limit"
st 0 "set www6 --mem 512.5M" vsctl set www6 --mem 512.5M
is "$(vsctl show www6 --json | json 'd["mem_max"]')" 537395200 "512.5M is 537395200 bytes"
for bad in "1.5.5G|is not a size" "-1G|is negative" "1.G|is not a size" "99999999999T|is too large" \
	"8388608T|is too large" "0.0G|must be more than 0" "1.5X|is not a size"; do
	IFS='|' read -r v why <<<"$bad"
	out=$(vsctl set www6 --mem "$v" 2>&1)
	rc=$?
	is "$rc" 7 "--mem $v is refused as a bad value"
	like "$out" "^vsctl: set: --mem $v $why" "and says why ($why)"
done
is "$(vsctl show www6 --json | json 'd["mem_max"]')" 537395200 "none of them changed the limit"
vsctl destroy www6 >/dev/null

# --- --json everywhere, answers and errors ------------------------------------------
R=$VSD_TMP/rules
mkdir -p "$R"
printf 'vs www1 cpu 60%%\nvs www4 cpu 10%% mem 1.5G\n' >"$R/ok.rules"
printf 'vs www1 cpu 60%%\nvs www4 cpu 50%%\n' >"$R/over.rules"
chmod 0644 "$R"/*.rules
js "list" 0 vsctl list --json
js "show" 0 vsctl show www1 --json
js "create" 0 vsctl create www5 --cpu 1% --json
js "set" 0 vsctl set www5 --cpu 2% --json
js "destroy (nothing to say: {\"ok\": true})" 0 vsctl destroy www5 --json
js "attach" 0 vsctl attach www1 $sp --json
js "conns" 0 vsctl conns --json
js "services" 0 vsctl services --json
js "check" 0 vsctl check --json "$R/ok.rules"
js "check --dump" 0 vsctl check --json --dump "$R/ok.rules"
js "apply --dry-run" 0 vsctl apply --dry-run --json "$R/ok.rules"
js "error: show nosuch" 5 vsctl show nosuch --json
js "error: global --json" 5 vsctl --json show nosuch
js "error: conflict" 6 vsctl create www2 --cpu 50% --json
js "error: bad value" 7 vsctl create www3 --cpu 150% --json
js "error: usage (vsctl's own)" 2 vsctl create --json
js "error: unknown command" 2 vsctl --json frobnicate
js "error: no daemon" 3 env VSD_SOCKET="$VSD_TMP/none.sock" "$VSCTL" list --json
js "error: no command" 2 vsctl --json
js "error: an unknown global option (no usage on stderr)" 2 vsctl --json --frob
# a live table and Prometheus text have no JSON form: refused, as JSON
js "error: top --json" 2 vsctl top --json -b -n 1 -d 1
js "error: metrics --json" 2 vsctl metrics --json
js "error: check of a file with errors" 7 vsctl check --json "$R/over.rules"
js "error: check of a missing file" 5 vsctl check --json "$R/none.rules"
js "error: apply of a file with errors" 7 vsctl apply --json "$R/over.rules"
js "error: reload without a rule file" 5 vsctl reload --json
js "error: service nosuch" 5 vsctl service start nosuch --json
js "error: exec in no VS" 5 vsctl exec nosuch --json -- true
js "error: run with a bad home" 7 vsctl run --json --home 9x -- true
is "$(vsctl check --json --dump "$R/ok.rules" | json '"mem 1536M" in d["dump"]')" True \
	"a rule file's mem 1.5G is 1536M"
# a file apply would refuse for its mode: a warning, which --dump keeps
cp "$R/ok.rules" "$R/open.rules"
chmod 0666 "$R/open.rules"
like "$(vsctl check --json "$R/open.rules" | json 'd["warnings"][0]')" "world-writable" \
	"check --json: the mode is a warning"
like "$(vsctl check --json --dump "$R/open.rules" | json 'd["warnings"][0]')" "world-writable" \
	"check --json --dump keeps the warning"
printf 'vs www4 cpu 1%% mem 1.5.5G\n' >"$R/badsize.rules"
out=$(vsctl check "$R/badsize.rules" 2>&1)
like "$out" "badsize.rules:1:20: mem '1.5.5G' is not a size" "a rule file's 1.5.5G: file:line:column and why"
out=$(vsctl check --json "$R/over.rules" | json 'd["errors"][0]')
like "$out" "over.rules:2:[0-9]+: .*over 100%" "check's errors carry file:line:column"
out=$(vsctl apply --json "$R/over.rules" | json '"|".join([d["error"], d["errors"][0]])')
like "$out" "^apply: refused, nothing changed:\|.*over.rules:2:[0-9]+: .*over 100%" \
	"apply's errors too: the first line, then one string per error"

# --- valid UTF-8 JSON, whatever bytes come in ----------------------------------------
# A name is [a-z][a-z0-9_-]*: 0xff is refused at the door ...
st 7 "a name with 0xff is refused (bad value)" vsctl create $'w\xff' --cpu 1%
is "$(vsctl list --json | json '[v["name"] for v in d]')" '["www1"]' "and nothing was made"
# ... but messages quote what came in, and paths hold any byte: JSON gets U+FFFD
js "error quoting a name with 0xff" 7 vsctl show $'w\xff\x01' --json
is "$(vsctl show $'w\xff\x01' --json | json 'd["error"]')" $'show: bad VS name \'w\xef\xbf\xbd\x01\': it may hold only a-z, 0-9, \'_\' and \'-\'' \
	"0xff became U+FFFD and the control character stayed one character"
cp "$R/ok.rules" "$R/"$'\xff'".rules"
js "apply --dry-run of a file whose name has 0xff" 0 vsctl apply --dry-run --json "$R/"$'\xff'".rules"
is "$(vsctl apply --dry-run --json "$R/"$'\xff'".rules" | json 'd["file"]')" "$R/"$'\xef\xbf\xbd'".rules" \
	"its path is written with U+FFFD"
js "check of that file" 0 vsctl check --json "$R/"$'\xff'".rules"
js "check of a missing file whose name has 0xff" 5 vsctl check --json "$R/"$'\xfe'".rules"

# --- vsctl services reads a supervisor's status with a JSON parser -------------------
# A stand-in status socket (<socket dir>/gates/NAME.sock) answering compact
# JSON in another member order, with a quote in a string and a nested "name":
# a reader that looks for '"key": ' finds nothing or the wrong member.
mkdir -p "$VSD_TMP/gates"
python3 - "$VSD_TMP/gates/fake.sock" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(8); s.settimeout(30)
st = b'{"threads":[{"waiting":false,"bound":"www1","pid":7,"tid":8}],"vs":[{"queued":2,"served":5,"worker_waits":4,"name":"www1"}],"home":"base","restarts":3,"state":"running","pid":7,"user":{"name":"x"},"name":"fake"}\n'
try:
    while True:
        c, _ = s.accept(); c.recv(64); c.sendall(st); c.close()
except OSError:
    pass
PY
fake=$!
on_exit "kill $fake"
wait_until test -S "$VSD_TMP/gates/fake.sock"
out=$(vsctl services | awk '$1 == "fake"')
like "$out" "^fake +running +7 +3 +base +- +8:www1 +www1=5 +www1=4 +- +- +www1=2$" "services: name, state, pid, restarts, home, unclassified, binding, served, worker waits, refused, outside (- from a supervisor without the counts), queued"
js "services with the stand-in" 0 vsctl services --json
is "$(vsctl services --json | json '[v["name"] for v in d]')" '["fake"]' "--json: the supervisor's object"
kill $fake; wait $fake 2>/dev/null
printf 'not json' | python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
c, _ = s.accept(); c.recv(64); c.sendall(b"{\"name\": \"broken\", "); c.close()' "$VSD_TMP/gates/broken.sock" &
wait_until test -S "$VSD_TMP/gates/broken.sock"
out=$(vsctl services --json)
is "$(printf '%s' "$out" | json '[(v["name"], v["error"]) for v in d]')" '[["broken", "its status is not a JSON object"]]' \
	"--json: a supervisor that answers nonsense is an error entry, not broken output"
rm -rf "$VSD_TMP/gates"

# --- apply --dry-run: each field that changes, old -> new -------------------------------
printf 'vs www1 cpu 50%% cpu-max 80%% mem 1.5G pids 100 dscp AF11 mark 7\nvs www7 cpu 5%% mem 512M\n' \
	>"$R/plan.rules"
out=$(vsctl apply --dry-run "$R/plan.rules")
like "$out" "^update www1 cpu 60% -> 50%, cpu-max none -> 80%, mem none -> 1536M, pids none -> 100, tos none -> 40, mark none -> 7$" \
	"apply --dry-run: each changed field of www1, old -> new"
like "$out" "^create www7 cpu 5%, mem 512M$" "and a create's values"
js "apply --dry-run with changes" 0 vsctl apply --dry-run --json "$R/plan.rules"
is "$(vsctl apply --dry-run --json "$R/plan.rules" | json '[(c["name"], c["action"], c["fields"]) for c in d["changes"]]')" \
	'[["www1", "update", {"cpu": {"old": 60, "new": 50}, "cpu_max": {"old": null, "new": 80}, "mem_max": {"old": null, "new": 1610612736}, "pids_max": {"old": null, "new": 100}, "tos": {"old": null, "new": 40}, "mark": {"old": null, "new": 7}}], ["www7", "create", {"cpu": {"old": null, "new": 5}, "mem_max": {"old": null, "new": 536870912}}]]' \
	"--json: the same, as show --json names the fields"
is "$(vsctl list --json | json '[(v["name"], v["cpu"], v["mem_max"]) for v in d]')" '[["www1", 60, null]]' \
	"the dry run changed nothing"
st 0 "apply it" vsctl apply "$R/plan.rules"
sed -i 's/mem 1.5G/mem 2G/' "$R/plan.rules"
is "$(vsctl apply --dry-run "$R/plan.rules")" "update www1 mem 1536M -> 2G
$R/plan.rules: would be: 0 created, 1 updated, 0 destroyed, 1 unchanged" \
	"after it, only the field that differs"
printf 'vs www1 cpu 60%%\n' >"$R/plan.rules"
like "$(vsctl apply --dry-run --prune --json "$R/plan.rules" | json '[(c["name"], c["action"], c["fields"].get("mem_max")) for c in d["changes"]]')" \
	'\["www7", "destroy", \{"old": 536870912, "new": null\}\]' "--prune: a destroy's fields go to null"
vsctl destroy www7 >/dev/null

vsctl destroy www1 --force >/dev/null
done_testing
