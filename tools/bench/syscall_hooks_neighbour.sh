#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# What one idle traced run costs an untraced context-switch storm beside it, with the programs
# seeing writes, forks and exits at the kernel's functions (fexit) and at the syscall
# tracepoints in turn (UNITMETER_SYSCALL_HOOKS), against the storm alone: tools/workloads/
# pingpong pinned to CPU 1, so every round is two switches and four system calls on one CPU
# and the machine's wake-up latency (most of an unpinned round) does not hide the hooks. For
# a kernel where fexit attaches (this machine's does not: there, the tracepoints alone),
# booted under qemu:
#
#   mkdir -p /var/cache/unitmeter-vm/hooks && cp .output/unitmeter .output/workloads/pingpong \
#       tools/bench/syscall_hooks_neighbour.sh /var/cache/unitmeter-vm/hooks/
#   tools/vm/vm-boot.sh -c v2 6.12.117+deb13-amd64 /tmp/hooks -- \
#       /var/cache/unitmeter-vm/hooks/syscall_hooks_neighbour.sh /var/cache/unitmeter-vm/hooks
#
# usage: syscall_hooks_neighbour.sh DIR [ROUNDS [PINGPONG_ROUNDS [CPUS]]]
#   DIR holds unitmeter and pingpong; CPUS the storm's (taskset -c), default 1, "all": unpinned
# Prints each wall time, then the medians and their ratios to the storm alone. Needs root and
# /usr/bin/python3.
set -u
dir=$1
rounds=${2:-5}
pings=${3:-200000}
cpus=${4:-1}
pin=(taskset -c "$cpus")
[ "$cpus" = all ] && pin=()
ready=$(mktemp -u /tmp/hooks-ready.XXXXXX)
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
seen_at=$("$dir/unitmeter" check | grep -E "writes, forks and exits")
echo "$seen_at"
# where fexit does not attach (this machine), the tracepoints alone
hooks=(functions tracepoints)
case $seen_at in *fexit/fentry*) ;; *) hooks=(tracepoints) ;; esac

storm() {
	/usr/bin/time -f "$1 %e" "${pin[@]}" "$dir/pingpong" --rounds "$pings" 2>&1 >/dev/null | tail -1
}

# the storm beside a traced `sleep` with the hooks given, the run past its attach
beside_idle_run() {
	local hooks=$1 run
	rm -f "$ready"
	UNITMETER_SYSCALL_HOOKS=$hooks "$dir/unitmeter" run -q -o /tmp/hooks-idle.json -- \
		/bin/sh -c "touch $ready; exec sleep 600" >/dev/null 2>&1 &
	run=$!
	for _ in $(seq 600); do [ -e "$ready" ] && break; sleep 0.1; done
	storm "$hooks"
	kill -INT "$run"
	wait "$run"
}

for _ in $(seq "$rounds"); do
	storm alone
	for h in "${hooks[@]}"; do beside_idle_run "$h"; done
done | tee /tmp/hooks-walls.txt
/usr/bin/python3 - /tmp/hooks-walls.txt <<'EOF'
import statistics, sys
walls = {}
for line in open(sys.argv[1]):
    name, wall = line.split()
    walls.setdefault(name, []).append(float(wall))
alone = statistics.median(walls["alone"])
for name in ("alone", "functions", "tracepoints"):
    if name not in walls:
        continue
    median = statistics.median(walls[name])
    print("%-12s median %.2f s (%.2fx) of %d" % (name, median, median / alone, len(walls[name])))
EOF
