#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Limits changed behind vsd's back: root inside a VS can
# rewrite its cgroup files, so `vsctl show` once said 10% while cpu.shares
# was 262144. Here the test writes other values into the files of a VS of
# its own private vsd; vsctl show (text and --json) reports each one with
# what vsd set and what the kernel holds, vsctl list marks the VS, vsd logs
# it once, and vsctl set and vsctl apply write the limits again.
. "$(dirname "$0")/lib.sh"
need_root

R=$(mktemp -d /tmp/vsd-drift.XXXXXX)
chmod 0755 "$R"
on_exit "rm -rf $R"

vsd_start || { fail "vsd starts"; done_testing; }
check "create www1 with every limit" quiet vsctl create www1 --cpu 10% --cpu-max 20% --mem 64M --pids 50
check "create www2" quiet vsctl create www2 --cpu 10%

# The files vsd set, by layout: KIND FILE NEWVALUE (KIND as vs_cgroup takes it)
if [ "$(cg_layout)" = unified ]; then
	FILES="cpu:cpu.weight:10000 cpu:cpu.max:max@100000 memory:memory.max:134217728 pids:pids.max:7"
else
	FILES="cpu:cpu.shares:262144 cpu:cpu.cfs_quota_us:-1 memory:memory.limit_in_bytes:134217728 pids:pids.max:7"
fi
file_of() { echo "$(vs_cgroup www1 "$1")/$2"; }
drift() { vsctl show www1 --json | json "sorted((x['name'], x['want'], x['have']) for x in d['drift'])"; }

is "$(drift)" "[]" "no drift after create"
like "$(vsctl list)" "^www1 .* ok$" "vsctl list: www1 is ok"

# what vsd wrote (the kernel's reading of it), then something else
want="[]"
for f in $FILES; do
	IFS=: read -r kind name new <<<"$f"
	new=${new/@/ }
	path=$(file_of "$kind" "$name")
	case $path in */"$VSD_ROOT"/www1/*) ;; *) fail "$path is not in our private tree"; done_testing ;; esac
	old=$(cat "$path")
	echo "$new" >"$path" || fail "write $new into $path"
	want=$(python3 -c 'import json, sys
w = [tuple(x) for x in json.loads(sys.argv[1])] + [(sys.argv[2], sys.argv[3], sys.argv[4])]
print(json.dumps(sorted(w)))' "$want" "$name" "$old" "$new")
	diag "$name: vsd set '$old', now '$(cat "$path")'"
done

is "$(drift)" "$want" "vsctl show --json: each drifted file with what vsd set and what the kernel holds"
out=$(vsctl show www1)
like "$out" "www1 .* drift" "vsctl show: the status says drift"
like "$out" "drift: [a-z]+/pids.max is 7, vsd set 50" "vsctl show: one line per drifted file"
like "$(vsctl list)" "^www1 .* drift$" "vsctl list marks www1"
like "$(vsctl list)" "^www2 .* ok$" "and not www2"
is "$(vsctl list --json | json "[len(v['drift']) for v in d]")" "[4, 0]" "vsctl list --json: the drift of each VS"
# file_of asked for www1 (show --json) between the writes: each new drift is
# logged when seen, none twice
is "$(grep -c "VS www1: .*pids.max is '7', vsd set '50': changed behind vsd's back" "$VSD_TMP/vsd.log")" 1 \
	"vsd logs it once, for many looks"
# logged by whoever saw it first: a client's show, or vsd's background sweep
# (which runs whenever vsd's loop wakes, so under a slow VM or a busy host it
# may see all four writes before the show does; each drift is logged once)
grep -Eq "^vsd: (show|sweep): VS www1: .*changed behind" "$VSD_TMP/vsd.log" &&
	ok "when seen (by a show or the sweep)" || fail "when seen (by a show or the sweep)"
like "$(vsctl show www1 --json | json "d['cpu']")" "^10$" "the configured share is still 10%"

# vsctl set writes every limit again, not only the one it changes
check "vsctl set www1 --cpu 10%" quiet vsctl set www1 --cpu 10%
is "$(drift)" "[]" "vsctl set: no drift left"
is "$(cat "$(file_of pids pids.max)")" 50 "pids.max holds 50 again"
like "$(vsctl list)" "^www1 .* ok$" "vsctl list: www1 is ok again"
grep -q "set: VS www1: wrote its limits again (4 files had drifted)" "$VSD_TMP/vsd.log" &&
	ok "vsd logs the rewrite" || fail "vsd logs the rewrite"

# apply, with the same limits, does too; a dry run only says so
cat >"$R/same.rules" <<E
vs www1 cpu 10% cpu-max 20% mem 64M pids 50
vs www2 cpu 10%
E
chmod 0644 "$R/same.rules"
out=$(vsctl apply "$R/same.rules")
like "$out" "0 updated, 0 destroyed, 2 unchanged" "apply: nothing to do without drift"
n0=$(wc -l <"$VSD_TMP/vsd.log")
for f in $FILES; do
	IFS=: read -r kind name new <<<"$f"
	echo "${new/@/ }" >"$(file_of "$kind" "$name")"
done
# no client looks: vsd's own sweep finds it (every VS within 20 s; with two
# VSs, each second), and apply writes what vsd knows has drifted
# (each file: the sweep may run while they are written, and logs a drift
# again when it grows)
sweep_saw() {
	for f in $FILES; do
		IFS=: read -r kind name new <<<"$f"
		tail -n +"$((n0 + 1))" "$VSD_TMP/vsd.log" |
			grep -q "^vsd: sweep: VS www1: [a-z0-9]*/$name is" || return 1
	done
}
wait_until sweep_saw && ok "vsd's sweep finds the drift by itself" ||
	fail "vsd's sweep finds the drift by itself"
out=$(vsctl apply --dry-run "$R/same.rules")
like "$out" "update www1 \(4 limit files had drifted: all written again\)" "apply --dry-run: www1 would be written again"
is "$(vsctl show www1 --json | json "len(d['drift'])")" 4 "and the dry run changed nothing"
out=$(vsctl apply "$R/same.rules")
like "$out" "updated www1 \(4 limit files had drifted" "apply writes the drifted VS again"
like "$out" "1 updated, 0 destroyed, 1 unchanged" "only it"
is "$(drift)" "[]" "apply: no drift left"
is "$(cat "$(file_of pids pids.max)")" 50 "pids.max holds 50 again"
done_testing
