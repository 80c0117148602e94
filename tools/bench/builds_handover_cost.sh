#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The hot programs' own cost a run (the kernel's bpf_stats: run_time_ns / run_cnt) and the
# handover's counted timeouts, under two builds of the programs in turn (UNITMETER_BUILD), while
# units of tools/workloads/handover open and close among four switching threads. For a kernel
# that takes more than one build: Debian 12's 6.1 takes the thread-cache build and the baseline
# when forced, booted under qemu:
#
#   mkdir -p /var/cache/unitmeter-vm/cost && cp .output/unitmeter .output/workloads/handover \
#       tools/bench/builds_handover_cost.sh /var/cache/unitmeter-vm/cost/
#   tools/vm/vm-boot.sh -c v2 6.1.0-57-amd64 /tmp/cost -- \
#       /var/cache/unitmeter-vm/cost/builds_handover_cost.sh /var/cache/unitmeter-vm/cost
#
# usage: builds_handover_cost.sh DIR [ROUNDS [BUILD...]]   (DIR holds unitmeter and handover)
# Prints, per build and round, each program's ns a run and the manifest's counts. Needs root,
# bpftool and python3; turns kernel.bpf_stats_enabled on (it costs every program a clock read).
set -u
dir=$1
rounds=${2:-3}
shift $(($# < 2 ? $# : 2))
builds=("$@")
[ ${#builds[@]} -gt 0 ] || builds=(thread-cache baseline)
out=${OUT:-/tmp/out}
mkdir -p "$out"
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing
sysctl -qw kernel.bpf_stats_enabled=1
for round in $(seq 1 "$rounds"); do
	for build in "${builds[@]}"; do
		manifest=$out/handover-$build-$round
		UNITMETER_BUILD=$build "$dir/unitmeter" run -q -o "$manifest" --unit "$dir/handover:fit_unit" \
			-- /bin/sh -c "'$dir/handover' --units 3000 --threads 4 --body-us 20 --yield-us 2 \
			>/dev/null; sleep 1" >/dev/null 2>&1 &
		tracer=$!
		# the statistics as of the 1 s sleep after the storm, before the programs go
		last=
		while kill -0 "$tracer" 2>/dev/null; do
			now=$(bpftool prog show 2>/dev/null |
				grep -E 'name (handle_sched_switch|unit_enter[_0-9]*|unit_return) ')
			case $now in *run_cnt*) last=$now ;; esac
			sleep 0.1
		done
		wait "$tracer"
		status=$?
		echo "== $build, round $round"
		if [ "$status" != 0 ] || [ ! -s "$manifest" ]; then
			echo "the traced run failed (exit $status): UNITMETER_BUILD=$build may not load here"
			continue
		fi
		if [ -z "$last" ]; then
			echo "no statistics read (bpftool, kernel.bpf_stats_enabled)"
		fi
		echo "$last" |
			sed -E 's/.*name ([a-z_0-9]+) .*run_time_ns ([0-9]+) run_cnt ([0-9]+).*/\1 \2 \3/' |
			awk 'NF == 3 && $3 > 0 { printf "%s %.0f ns a run (%d runs)\n", $1, $2 / $3, $3 }'
		python3 - "$manifest" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["run"]
units = sum(1 for _ in open(sys.argv[1] + ".units.jsonl"))
print("build %s: %d units, lock_timeouts %s, handover_timeouts %s" % (
    run["tracing"]["build"], units, run["tracing"].get("lock_timeouts"),
    run["bpf"].get("handover_timeouts")))
PY
	done
done
