#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# slurm-down.sh - stop the cluster slurm-up.sh started in $SLURM_TEST_DIR: its jobs first (so
# no slurmstepd outlives slurmd), then slurmd, slurmctld and munged if it started munged. Every
# process is named by a pid file that slurm-up.sh or the daemon wrote, never by a program name:
# another SLURM or munged on the machine is left alone. The directory itself (logs included) is
# the caller's to remove. Safe to run twice, or after a failed slurm-up.sh.
set -uo pipefail

log() { printf '[slurm-down] %s\n' "$*" >&2; }
[ -n "${SLURM_TEST_DIR:-}" ] || { log "error: SLURM_TEST_DIR is not set: name the directory slurm-up.sh used"; exit 1; }
D=$SLURM_TEST_DIR
export SLURM_CONF=$D/etc/slurm.conf

alive() { # PIDFILE COMM
	local pid
	[ -s "$1" ] || return 1
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

stop_pidfile() { # PIDFILE COMM
	local pid
	if alive "$1" "$2"; then
		pid=$(cat "$1")
		kill -TERM "$pid" 2>/dev/null
		# slurmctld saves its state on SIGTERM, which takes it about 4 s
		for _ in $(seq 1 150); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
		if [ -d "/proc/$pid" ]; then
			log "$2 ($pid) still running 15 s after SIGTERM: SIGKILL"
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	rm -f "$1"
}

if alive "$D/run/slurmctld.pid" slurmctld; then
	jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u)
	if [ -n "$jobs" ]; then
		# shellcheck disable=SC2086 # one argument per job id
		timeout 10 scancel --full --quiet $jobs 2>/dev/null || true
		for _ in $(seq 1 60); do
			[ -z "$(timeout 10 squeue -h -o %A 2>/dev/null)" ] && break
			sleep 0.5
		done
	fi
fi
# Each live slurmstepd owns a unix socket NODE_JOB.STEP in the spool dir until its step's
# processes are gone (only sockets: the spool also holds ordinary state files).
for _ in $(seq 1 40); do
	[ -n "$(find "$D/spool/d" -maxdepth 1 -type s 2>/dev/null)" ] || break
	sleep 0.25
done

# A step whose job's kill never reached it (slurmctld cancelled the job, but slurmd stopped
# first) would outlive the cluster, and its job's processes with it: its slurmstepd is found by
# the socket it listens on in our spool (never by name), and SIGKILLed with its descendants.
stepds_in_spool() {
	ss -xlpn 2>/dev/null | awk -v spool="$D/spool/d/" 'index($0, spool) {
		while (match($0, /pid=[0-9]+/)) {
			print substr($0, RSTART + 4, RLENGTH - 4)
			$0 = substr($0, RSTART + RLENGTH)
		}
	}' | sort -u
}
kill_tree() { # PID: its children first, so none is reparented out of reach
	local child
	for child in $(pgrep -P "$1"); do kill_tree "$child"; done
	kill -KILL "$1" 2>/dev/null
}
for pid in $(stepds_in_spool); do
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmstepd ] || continue
	log "slurmstepd $pid ($(tr '\0' ' ' < "/proc/$pid/cmdline")) outlived its job's cancel: SIGKILL, with its processes"
	kill_tree "$pid"
done

stop_pidfile "$D/run/slurmd.pid" slurmd
stop_pidfile "$D/run/slurmctld.pid" slurmctld
# slurm-up.sh copies munged's pid file into run/ only when it started munged itself
stop_pidfile "$D/run/munged.pid" munged

# The "slurm" cgroups slurmd made (slurm-up.sh listed those that did not exist before it): its
# job cgroups are gone once the steps are, and rmdir removes only empty cgroups, deepest first.
if [ -s "$D/run/cgroups-made" ]; then
	while read -r cg; do
		[ -d "$cg" ] || continue
		find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
		[ ! -d "$cg" ] || log "cgroup $cg is still in use; left in place"
	done < "$D/run/cgroups-made"
	rm -f "$D/run/cgroups-made"
fi
exit 0
