#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vsctl's bash completion (vsctl/bash-completion/vsctl): `make install` puts
# it where bash-completion loads it, and sourced under bash it completes
# commands, options (from vsctl's own help), VS names (from a real vsd,
# `vsctl list --names`) and rule files.
. "$(dirname "$0")/lib.sh"
need_root
command -v make >/dev/null || skip_all "make is missing"

# `make install` of just the completion, into a scratch DESTDIR
dest=$(mktemp -d /tmp/vsd-completion.XXXXXX)
on_exit "rm -rf $dest"
dir=$(make -s --no-print-directory -C "$top_builddir" print-bashcompletiondir)
like "$dir" "/bash-completion/completions$" "configure chose a bash-completion directory ($dir)"
make -s -C "$top_builddir" DESTDIR="$dest" install-dist_bashcompletionDATA >/dev/null 2>&1
check "make install puts the completion at $dir/vsctl" test -s "$dest$dir/vsctl"
check "it is plain bash" bash -n "$dest$dir/vsctl"

vsd_start || { fail "vsd starts"; done_testing; }
vsctl create www1 --cpu 5% >/dev/null
vsctl create www2 --cpu 5% >/dev/null
vsctl create shop --cpu 5% >/dev/null
is "$(vsctl list --names | tr '\n' ' ')" "www1 www2 shop " "vsctl list --names: one name a line"
R=$VSD_TMP/r
mkdir -p "$R/sub"
: >"$R/a.rules"
: >"$R/b.txt"

# comp LINE: the completions bash offers at the end of LINE (an empty last
# word if LINE ends in a space), sorted, on one line; vsctl is the binary
# under test, first in PATH, as a user's shell would find it
mkdir -p "$VSD_TMP/bin"
ln -sf "$VSCTL" "$VSD_TMP/bin/vsctl"
comp() {
	PATH="$VSD_TMP/bin:$PATH" bash -c '
		. "$1"
		read -r -a COMP_WORDS <<<"$2"
		case $2 in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE=$2
		COMP_POINT=${#2}
		_vsctl
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
		_ "$dest$dir/vsctl" "$1"
}

is "$(comp "vsctl cr")" "create " "a command from its start"
out=$(comp "vsctl ")
for c in create set destroy list show attach exec conns metrics top run services service check import apply reload help; do
	case " $out " in *" $c "*) ;; *) fail "vsctl <TAB> offers $c"; diag "$out" ;; esac
done
ok "vsctl <TAB> offers every command"
is "$(comp "vsctl --")" "--help --json --socket --version " "global options"
is "$(comp "vsctl show ")" "shop www1 www2 " "show: the VS names, from vsd"
is "$(comp "vsctl destroy ww")" "www1 www2 " "destroy: the names that match"
is "$(comp "vsctl --socket $VSD_SOCKET set sh")" "shop " "the names of the vsd --socket names"
is "$(comp "vsctl --socket $VSD_TMP/none.sock set ")" "" "no vsd there: no names, no noise"
is "$(comp "vsctl create www3 --c")" "--cpu --cpu-max " "create's options, from its usage"
like "$(comp "vsctl create www3 --")" "--cpu --cpu-max --dev --dev-rate --dscp --help --json --mark --mem --net-max --net-share --pids --priority --tos" "all of them"
is "$(comp "vsctl set www1 --mem ")" "none " "set --mem: none"
is "$(comp "vsctl destroy www1 --")" "--force --help --json " "destroy's options"
is "$(comp "vsctl run --home ")" "shop www1 www2 " "run --home: a VS"
like "$(comp "vsctl exec www1 --user ro")" "^root " "exec --user: users"
like "$(comp "vsctl exec www1 -- bas")" "(^| )bash " "exec ... --: a command"
is "$(comp "vsctl service ")" "restart start stop " "service: the actions"
is "$(comp "vsctl help se")" "service services set " "help: the commands"
is "$(comp "vsctl check $R/")" "$R/a.rules $R/sub " "check: rule files and directories"
is "$(comp "vsctl apply --dry-run $R/a")" "$R/a.rules " "apply: the same after an option"
is "$(comp "vsctl list --")" "--help --json --names " "list: --json and --names"
is "$(comp "vsctl import --")" "--apache --auto --help --nginx --per-site --root " "import: its options, from its usage, no --json"
is "$(comp "vsctl import -o $R/a")" "$R/a.rules " "import -o: a file"
is "$(comp "vsctl import --root $R/s")" "$R/sub " "import --root: a directory"
csort() { tr ' ' '\n' | grep . | LC_ALL=C sort | tr '\n' ' '; }
is "$(comp "vsctl top -" | csort)" "--help -b -d -n -s " "top: its one-letter options, no --json"
is "$(comp "vsctl top -s t")" "throttle " "top -s: the sort keys"
is "$(comp "vsctl metrics -")" "--help " "metrics: no --json"

vsctl destroy www1 >/dev/null
vsctl destroy www2 >/dev/null
vsctl destroy shop >/dev/null
done_testing
