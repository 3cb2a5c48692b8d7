#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Under systemd on pure cgroup v2, vsd starts a declared service's
# supervisor as the transient unit vsd-ROOT-NAME.service, the same name at
# every run, and systemd-run refuses that name while systemd still holds the
# unit of the last run: until it has taken note that the supervisor exited,
# or (as here, made to last) while it still stops what was left in the
# unit's cgroup. A service stopped by apply --prune and declared again at
# once (a benchmark's next mode, a provider's quick edit) must start all
# the same, once systemd lets go of the old unit, and serve.
. "$(dirname "$0")/lib.sh"
need_root
need_gate_server
[ "$(cg_layout)" = unified ] && [ -d /run/systemd/system ] ||
	skip_all "vsd starts services with systemd-run only under systemd on pure cgroup v2 (vsd/scope.c)"
command -v systemctl >/dev/null || skip_all "systemctl is missing"

rules_dir
vsd_start || { fail "vsd starts"; done_testing; }
on_exit "pkill -KILL -f -- '$SERVER -p $PORT'"
UNIT=vsd-$VSD_ROOT-echo.service
UNITCG=/sys/fs/cgroup/vsd.slice/$UNIT

w on.rules <<E
vs base cpu 10%
vs www1 cpu 30%
service echo home base command "$SERVER -p $PORT"
E
w off.rules <<E
vs base cpu 10%
vs www1 cpu 30%
E
check "apply starts the service" quiet vsctl apply "$R/on.rules"
check "it runs within 10 s" wait_until running echo
SUP=$(svc echo "['supervisor']")
is "$(systemctl is-active "$UNIT")" active "its supervisor runs as the unit $UNIT"

# What systemd has not finished with: a process in the unit's cgroup that
# ignores SIGTERM keeps the unit "deactivating" after its supervisor exits
# (until TimeoutStopSec, 90 s), as a systemd slow to reap does for a moment.
setsid sh -c 'trap "" TERM; exec sleep 600' </dev/null >/dev/null 2>&1 &
HOLD=$!
on_exit "kill -KILL $HOLD"
check "a process that ignores SIGTERM joins the unit's cgroup" \
	sh -c 'echo "$1" > "$2/cgroup.procs"' - "$HOLD" "$UNITCG"

check "apply --prune stops the service" quiet vsctl apply --prune "$R/off.rules"
check "its supervisor exits" wait_until sh -c "! kill -0 $SUP 2>/dev/null"
check "systemd still holds its unit (deactivating)" \
	wait_until sh -c "[ \"\$(systemctl is-active '$UNIT')\" = deactivating ]"

# declared again at once: systemd-run refuses the unit's name now
check "apply declares it again" quiet vsctl apply "$R/on.rules"
check "vsd says it will try again" wait_until sh -c "grep -q 'service echo: trying again in' '$VSD_TMP/vsd.log'"
diag "what systemd-run said: $(grep -m1 -i 'already loaded\|failed to start' "$VSD_TMP/vsd.log")"
{ kill -KILL "$HOLD"; wait "$HOLD"; } 2>/dev/null
# the unit goes; vsd's next try (back-off up to 30 s) starts the service
# (by the clock: under emulation each look takes a second)
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$end" ]; do running echo && break; sleep 0.5; done
running echo || diag "vsd's log:" "$(tail -6 "$VSD_TMP/vsd.log")"
check "the service runs again within 60 s of systemd letting the old unit go" running echo
check "under a new supervisor" sh -c '[ -n "$1" ] && [ "$1" != "$2" ]' - "$(svc echo "['supervisor']")" "$SUP"
is "$(systemctl is-active "$UNIT")" active "in its unit"
out=$(vsctl exec www1 -- "$CLIENT" -p "$PORT" -n 1 -v 2>&1)
like "$out" "cg=[^ ]*/$VSD_ROOT/www1 " "and serves www1's connection in www1"

check "apply --prune stops it for good" quiet vsctl apply --prune "$R/off.rules"
check "nothing of the service is left" \
	wait_until sh -c "! pgrep -f -- '[g]ate-server -p $PORT( |\$)' >/dev/null && [ \"\$(\"$VSCTL\" services --json)\" = '[]' ]"
done_testing
