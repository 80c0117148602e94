#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# slurm-up.sh - start a private one-node SLURM (munged, slurmctld, slurmd on loopback) without
# systemd, for the SLURM tests and for trying the SPANK plugin by hand. Needs root and the
# Debian packages slurm-wlm and munge (`make deps` installs them). slurm-down.sh stops it.
#
# Everything the cluster writes lives under $SLURM_TEST_DIR (required: a directory you own,
# e.g. `SLURM_TEST_DIR=$(mktemp -d)`; a fixed name in /tmp could be planted by another user):
#   etc/slurm.conf, etc/cgroup.conf, etc/plugstack.conf   configuration (SLURM_CONF)
#   run/*.pid                                             pid files of what this script started
#   log/slurmctld.log, log/slurmd.log, log/jobcomp.txt    daemon logs, one line per finished job
#   spool/ctld, spool/d                                   controller state, slurmd spool
#   tmp/                                                  TmpFS: what --tmp is checked against
#   env.sh                                                `. env.sh` points the clients at it
#
# Knobs (environment):
#   SLURM_TEST_CGROUP     auto|yes|no  proctrack/cgroup + task/cgroup, so --mem is enforced by
#                         the kernel's memory cgroup; auto falls back to proctrack/linuxproc
#                         when cgroup mode cannot run a probe step                      (auto)
#   SLURM_TEST_PLUGSTACK  plugstack.conf to use, e.g. one naming unitmeter_spank.so; slurmstepd,
#                         srun and sbatch read it at every step, so it can change later
#                         (default: an empty etc/plugstack.conf)
#   SLURM_TEST_DEFMEM     DefMemPerCPU in MB for jobs without --mem                     (1024)
#   SLURM_TEST_CTLD_PORT, SLURM_TEST_SLURMD_PORT                                (6817, 6818)
#   SLURM_TEST_TIMEOUT    seconds to wait for the node to become idle                     (60)
#
# Starting it again while it runs is a no-op. Exit 0 once the node is idle. One such cluster per
# machine at a time: the ports, the node's cgroups and munged are the machine's (a second one
# would use the first one's munged, and lose it when the first one's slurm-down.sh stops it).
set -euo pipefail

log() { printf '[slurm-up] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ -n "${SLURM_TEST_DIR:-}" ] || die "SLURM_TEST_DIR is not set: give a directory for the cluster's state, e.g. SLURM_TEST_DIR=\$(mktemp -d)"
D=$SLURM_TEST_DIR
CGROUP=${SLURM_TEST_CGROUP:-auto}
DEFMEM=${SLURM_TEST_DEFMEM:-1024}
CTLD_PORT=${SLURM_TEST_CTLD_PORT:-6817}
SLURMD_PORT=${SLURM_TEST_SLURMD_PORT:-6818}
WAIT=${SLURM_TEST_TIMEOUT:-60}
CONF=$D/etc/slurm.conf
export SLURM_CONF=$CONF

[ "$(id -u)" = 0 ] || die "must run as root (the daemons and munged are started here)"
case "$CGROUP" in auto|yes|no) ;; *) die "SLURM_TEST_CGROUP must be auto, yes or no" ;; esac
for b in slurmctld slurmd sinfo scontrol srun munged munge unmunge runuser; do
	command -v "$b" >/dev/null || die "$b not found: apt-get install slurm-wlm munge (or make deps)"
done

# A pid file names our process only while that pid is alive and still that program: a pid
# reused by something else after a crash must never be signalled.
alive() { # PIDFILE COMM
	local pid
	[ -s "$1" ] || return 1
	pid=$(cat "$1" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}

# The state dir is ours: root-owned, and its parts readable by job users (they read the config
# through SLURM_CONF); tmp/ is the world-writable TmpFS jobs may use.
mkdir -p "$D"/etc "$D"/run "$D"/log "$D"/spool/ctld "$D"/spool/d "$D"/tmp
chmod 755 "$D" "$D"/etc "$D"/run "$D"/log "$D"/spool
chmod 1777 "$D"/tmp
NODE=$(hostname -s 2>/dev/null || true)
[ -n "$NODE" ] || NODE=localhost

# ------------------------------------------------------------------------------------ munge
start_munge() {
	# Any munged that answers will do (the machine's own, say); we stop only the one we start.
	if timeout 5 munge -n 2>/dev/null | timeout 5 unmunge >/dev/null 2>&1; then
		return 0
	fi
	if [ ! -s /etc/munge/munge.key ]; then
		# the Debian package creates the key at install; a key removed since is recreated
		log "creating /etc/munge/munge.key"
		mkdir -p /etc/munge
		mungekey --create --keyfile=/etc/munge/munge.key
	fi
	# the key as munged demands it, changed only where it is not: the kernel matrix's guests
	# (tools/vm/) see this machine's root read-only, with /run a tmpfs of their own
	[ "$(stat -c %U:%a /etc/munge)" = munge:700 ] || { chown munge:munge /etc/munge; chmod 700 /etc/munge; }
	[ "$(stat -c %U:%a /etc/munge/munge.key)" = munge:600 ] ||
		{ chown munge:munge /etc/munge/munge.key; chmod 600 /etc/munge/munge.key; }
	mkdir -p /run/munge "$D"/munge
	chown munge:munge /run/munge "$D"/munge
	chmod 755 /run/munge
	chmod 700 "$D"/munge
	rm -f /run/munge/munged.pid
	# munged refuses to run as root; run it as its own user, as its unit file does. Its log and
	# seed go under $D, not /var (read-only in a guest). It daemonises, so its pid comes from its
	# pid file, which we copy to run/ as proof it is ours.
	timeout 20 runuser -u munge -- /usr/sbin/munged --force --log-file="$D/munge/munged.log" \
		--seed-file="$D/munge/munged.seed" || die "munged did not start (see $D/munge/munged.log)"
	for _ in $(seq 1 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
	cp /run/munge/munged.pid "$D/run/munged.pid"
	timeout 5 munge -n | timeout 5 unmunge >/dev/null || die "munge credential round-trip failed after starting munged"
}

# ---------------------------------------------------------------------------- configuration
node_hw() {
	# the node line slurmd registers with; a mismatch with slurm.conf drains the node
	local l
	l=$(timeout 20 slurmd -C 2>/dev/null | head -1 || true)
	if [[ "$l" == NodeName=* ]]; then
		echo "${l#NodeName=* }"
	else
		echo "CPUs=$(nproc) RealMemory=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 256 ))"
	fi
}

write_conf() { # cgroup: yes|no
	local pstack track tmpmb
	pstack=${SLURM_TEST_PLUGSTACK:-$D/etc/plugstack.conf}
	[ -n "${SLURM_TEST_PLUGSTACK:-}" ] || [ -e "$D/etc/plugstack.conf" ] || : > "$D/etc/plugstack.conf"
	# free MiB rounded down: slurmd registers the size rounded down, and drains the node (Low
	# TmpDisk) when it is below this; df -m rounds up, a MiB over on an empty tmpfs
	tmpmb=$(df -Pk "$D/tmp" | awk 'NR==2{print int($4/1024)}')
	if [ "$1" = yes ]; then
		# slurmd 22.05 exits with "Hybrid mode is not supported" under cgroup/v2 when
		# /sys/fs/cgroup is a tmpfs of v1 hierarchies plus a v2 one; use v1 unless it is pure v2.
		local plugin=cgroup/v1 nosystemd=
		[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] && plugin=cgroup/v2
		# cgroup/v2 asks systemd over dbus for slurmstepd's scope; with no systemd running
		# (a container, the kernel matrix's guests) slurmd makes the cgroups itself, the
		# scope in systemd's system.slice, which it expects to exist with the controllers
		# task/cgroup uses delegated down to it, as systemd leaves them
		if [ "$plugin" = cgroup/v2 ] && [ ! -d /run/systemd/system ]; then
			nosystemd=IgnoreSystemd=yes
			mkdir -p /sys/fs/cgroup/system.slice
			for c in cpuset cpu memory pids; do
				echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control
				echo "+$c" > /sys/fs/cgroup/system.slice/cgroup.subtree_control
			done
		fi
		cat > "$D/etc/cgroup.conf" <<-EOF
		$nosystemd
		CgroupPlugin=$plugin
		CgroupMountpoint=/sys/fs/cgroup
		ConstrainCores=yes
		ConstrainRAMSpace=yes
		ConstrainSwapSpace=no
		ConstrainDevices=no
		EOF
		# the memory cgroup enforces --mem (the kernel's OOM killer, state OUT_OF_MEMORY);
		# jobacct_gather's own kill would race it
		track="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
JobAcctGatherParams=NoOverMemoryKill"
	else
		rm -f "$D/etc/cgroup.conf"
		# without cgroups only jobacct_gather's 1 s polling can enforce --mem
		track="ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherParams=OverMemoryKill"
	fi
	cat > "$CONF.new" <<-EOF
	# written by slurm-up.sh (cgroup mode: $1)
	ClusterName=unitmeter-test
	SlurmctldHost=$NODE(127.0.0.1)
	SlurmctldPort=$CTLD_PORT
	SlurmdPort=$SLURMD_PORT
	SlurmUser=root
	SlurmdUser=root
	AuthType=auth/munge
	CredType=cred/munge
	StateSaveLocation=$D/spool/ctld
	SlurmdSpoolDir=$D/spool/d
	SlurmctldPidFile=$D/run/slurmctld.pid
	SlurmdPidFile=$D/run/slurmd.pid
	SlurmctldLogFile=$D/log/slurmctld.log
	SlurmdLogFile=$D/log/slurmd.log
	SlurmctldDebug=info
	SlurmdDebug=info
	PlugStackConfig=$pstack
	SwitchType=switch/none
	# no PMIx library is installed; srun steps need no MPI here
	MpiDefault=none
	# the default MailProg is absent and slurmctld complains at every start
	MailProg=/bin/true
	$track
	JobAcctGatherType=jobacct_gather/linux
	JobAcctGatherFrequency=task=1
	# no slurmdbd: finished jobs go to one line each in jobcomp.txt (sacct -c reads it)
	AccountingStorageType=accounting_storage/none
	JobCompType=jobcomp/filetxt
	JobCompLoc=$D/log/jobcomp.txt
	SchedulerType=sched/backfill
	# the default batch_sched_delay=3 starts consecutive batch jobs and array tasks 3 s apart
	SchedulerParameters=batch_sched_delay=0
	# reject at submit what the node can never satisfy, instead of leaving it PENDING forever
	EnforcePartLimits=ALL
	SelectType=select/cons_tres
	SelectTypeParameters=CR_Core_Memory
	DefMemPerCPU=$DEFMEM
	ReturnToService=2
	SlurmctldTimeout=30
	SlurmdTimeout=30
	MessageTimeout=10
	InactiveLimit=0
	# finished jobs stay visible to scontrol for 5 minutes, long enough for a test to read them
	MinJobAge=300
	KillWait=5
	OverTimeLimit=0
	TmpFS=$D/tmp
	NodeName=$NODE NodeAddr=127.0.0.1 $(node_hw) TmpDisk=$tmpmb State=UNKNOWN
	PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	EOF
	mv "$CONF.new" "$CONF"
	printf 'export SLURM_CONF=%s\n' "$CONF" > "$D/env.sh"
}

# ------------------------------------------------------------------------------------ daemons
stop_daemons() { # the half-started leftovers of a failed attempt, by pid file only
	local n pid
	for n in slurmd slurmctld; do
		if alive "$D/run/$n.pid" "$n"; then
			pid=$(cat "$D/run/$n.pid")
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 1 100); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
			[ ! -d "/proc/$pid" ] || kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$D/run/$n.pid"
	done
}

node_state() { timeout 10 sinfo -h -N -n "$NODE" -o '%T' 2>/dev/null | head -1; }

wait_idle() {
	local t0=$SECONDS st=""
	while [ $((SECONDS - t0)) -lt "$WAIT" ]; do
		st=$(node_state || true)
		case "$st" in
		idle|mixed|allocated) return 0 ;;
		# a node that was down when slurmctld started its clean state is resumed by hand
		down*|drain*) timeout 10 scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true ;;
		esac
		sleep 0.2
	done
	log "node $NODE not idle after $WAIT s (state: '${st:-none}')"
	return 1
}

start_daemons() { # cgroup: yes|no; 0 once the node is idle
	write_conf "$1"
	# -c: a clean state, no jobs recovered from an earlier test run
	timeout 30 slurmctld -c -f "$CONF" || { log "slurmctld failed:"; tail -20 "$D/log/slurmctld.log" >&2; return 1; }
	for _ in $(seq 1 100); do alive "$D/run/slurmctld.pid" slurmctld && break; sleep 0.1; done
	alive "$D/run/slurmctld.pid" slurmctld || { log "slurmctld exited:"; tail -20 "$D/log/slurmctld.log" >&2; return 1; }
	timeout 30 slurmd -f "$CONF" -N "$NODE" || { log "slurmd failed:"; tail -20 "$D/log/slurmd.log" >&2; return 1; }
	for _ in $(seq 1 100); do alive "$D/run/slurmd.pid" slurmd && break; sleep 0.1; done
	alive "$D/run/slurmd.pid" slurmd || { log "slurmd exited:"; tail -20 "$D/log/slurmd.log" >&2; return 1; }
	wait_idle
}

# cgroup mode can start and still fail at the first step (a controller missing): run one
probe_step() {
	timeout 60 srun -N1 -n1 -t1 --mem=16 -o /dev/null /bin/true 2>>"$D/log/probe.err"
}

# slurmd creates a cgroup "slurm_NODE" (or "slurm", depending on the build) in each hierarchy it
# uses (cpuset, freezer, memory here) and never removes it; record those absent now, so that
# slurm-down.sh removes only the ones this cluster made.
note_cgroups() {
	[ -e "$D/run/cgroups-made" ] && return 0
	local h n
	for h in /sys/fs/cgroup/* /sys/fs/cgroup; do
		[ -e "$h/cgroup.procs" ] || continue
		for n in "slurm_$NODE" slurm; do
			if [ ! -d "$h/$n" ]; then echo "$h/$n"; fi
		done
	done > "$D/run/cgroups-made"
	# cgroup/v2 without systemd (write_conf): the slice slurm-up.sh makes, or the scope slurmd
	# makes in one that was there
	if [ ! -d /run/systemd/system ] && [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		h=/sys/fs/cgroup/system.slice
		[ -d "$h" ] || echo "$h"
		[ -d "$h/${NODE}_slurmstepd.scope" ] || echo "$h/${NODE}_slurmstepd.scope"
	fi >> "$D/run/cgroups-made"
}

# ------------------------------------------------------------------------------------- main
t0=$(date +%s.%N)
start_munge
if alive "$D/run/slurmctld.pid" slurmctld && alive "$D/run/slurmd.pid" slurmd; then
	wait_idle || die "the running cluster in $D is not healthy: run slurm-down.sh first"
	exit 0
fi
stop_daemons
note_cgroups
case "$CGROUP" in
yes) start_daemons yes || die "cgroup mode failed (logs in $D/log)" ;;
no) start_daemons no || die "linuxproc mode failed (logs in $D/log)" ;;
auto)
	if ! { start_daemons yes && probe_step; }; then
		log "cgroup mode did not work; using proctrack/linuxproc (--mem enforced by polling)"
		stop_daemons
		start_daemons no || die "linuxproc mode failed too (logs in $D/log)"
	fi ;;
esac
log "node $NODE idle, $(grep -m1 '^ProctrackType' "$CONF"), in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s; clients: . $D/env.sh"
