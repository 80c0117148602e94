#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The kernel matrix: boot each of Debian's kernels under qemu (vm-boot.sh), with cgroup v1 and
# v2, and run there, as root, `unitmeter check` and the tests that depend on the kernel; run the
# same on this machine's own kernel; print one line per cell and fail when any cell fails.
#
# usage: vmtest.sh [CELL...]     CELL is RELEASE:v1 or RELEASE:v2, or host; default every cell
# Environment: the test suite's (UNITMETER, WORKLOADS, DEMO, FIXTURES, TEST_BIN) as `make vmtest`
# sets it; VMTEST_FILTER (Criterion's --filter), VMTEST_JOBS (cells at once; each guest is one
# host thread), VMTEST_OUT (logs; default /var/tmp/unitmeter-vm/results); UNITMETER_BUILD and
# UNITMETER_FAULT_HOOK force a build or a fault hook in every cell (user/trace/kernel.c).
# VMTEST_SLURM=1 (`make vmtest-slurm`): each cell runs the SLURM suite's limits array on a
# one-node SLURM of its own (SPANK_PLUGIN, SLURM_TOOLS), the guest set up as systemd would leave
# a node: loopback up, and under cgroup v2 the controllers SLURM's cgroup/v2 needs delegated.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# arm64 after x86 (the cells share the two cores): the per-CPU build, the thread-cache build
# with the kretprobe fault hook (no ftrace direct calls before 6.4), and 16 KiB pages
default_cells="host 5.10.0-46-amd64:v1 5.10.0-46-amd64:v2 6.1.0-57-amd64:v1 6.1.0-57-amd64:v2
6.12.117+deb13-amd64:v1 6.12.117+deb13-amd64:v2
6.12.118+deb12-arm64:v2 6.1.0-57-arm64:v2 6.12.118+deb12-arm64-16k:v2"
cells=${*:-$default_cells}
# the tests whose figures depend on the kernel: whole runs, units, the memory charge, Python fits
# and pools, the skeleton's own state (bpf_skel: each build the guest's kernel loads), device
# memory through the CUDA driver's probes (gpu: against the fake driver), and check's verdict
# with what each fault hook costs there; and the node's one set of programs
python_tests="debian_numpy_array_peak|pyenv_313_bytearray_peak|counts_recursion_and_exceptions_debian"
python_tests="$python_tests|pool_fork|pool_spawn|process_pool_executor|other_calls_are_not_units"
# runs side by side on the node's one set of programs (issue #34): its builds and the cookie
# that tells runs' probes apart differ by kernel
node_tests="concurrent_runs_keep_their_own_units|a_run_killed_mid_unit_leaves_its_neighbour_exact"
node_tests="$node_tests|runs_starting_at_once_load_the_programs_once|own_programs_when_asked"
node_tests="$node_tests|attach_to_another_runs_process_is_refused"
filter=${VMTEST_FILTER:-@(run/*|units/*|charge/*|timeline/*|bpf_skel/*|gpu/*|python/@($python_tests)|kernel/check_*|reliability/@($node_tests))}
# An arm64 cell costs two to three x86 cells under TCG, and CI runs three of them: they run every
# BPF program's suites in full, and of the GPU and Python suites (user space the x86 cells run
# whole) the tests whose probes read a call's arguments or the interpreter's registers another
# way on arm64: the driver's allocation, context and VMM calls, a NumPy peak and a forked pool.
arm64_gpu="calls_through_the_plt|calls_through_cuGetProcAddress_per_thread_stream"
arm64_gpu="$arm64_gpu|devices_from_the_current_context|vmm_create_and_release_device_located_only"
arm64_filter=${VMTEST_ARM64_FILTER:-${VMTEST_FILTER:-@(run/*|units/*|charge/*|timeline/*|bpf_skel/*|gpu/@($arm64_gpu)|python/@(debian_numpy_array_peak|pool_fork)|kernel/check_*|reliability/@($node_tests))}}
jobs=${VMTEST_JOBS:-2}
out=${VMTEST_OUT:-/var/tmp/unitmeter-vm/results}
: "${TEST_BIN:?TEST_BIN (the Criterion binary) must be set: run make vmtest}"
: "${UNITMETER:?UNITMETER must be set: run make vmtest}"
mkdir -p "$out"

# The guests read the build through 9p while they run, for many minutes: they get a copy, so a
# rebuild meanwhile cannot change a binary under them. Paths into the checkout point into it.
# It lives under /var/cache: the guests' /tmp, /var/tmp and /run are their own tmpfs, and the
# checkout itself may be under one of them.
top=$(cd "$here/../.." && pwd)
mkdir -p /var/cache/unitmeter-vm
snap=$(mktemp -d /var/cache/unitmeter-vm/build.XXXXXX) || exit 1
trap 'rm -rf "$snap"' EXIT
chmod 755 "$snap" # some tests run unitmeter as nobody
# the build the suite names (.output/, or another: make vmtest OUTPUT=.output-clang-19 CLANG=...)
build=$(dirname "$UNITMETER")
build=${build#"$top"/}
(cd "$top" && cp -a --parents "$build/unitmeter" "$build/libunitmeter_marker.so" "$build/workloads" \
	"$build/demo" "$build/tests/unitmeter_tests" python tests/fixtures tools/workloads \
	man/unitmeter.1 "$snap/") || exit 1
slurm=${VMTEST_SLURM:-0}
if [ "$slurm" = 1 ]; then
	: "${SPANK_PLUGIN:?SPANK_PLUGIN must be set: run make vmtest-slurm}"
	: "${SLURM_TOOLS:?SLURM_TOOLS must be set: run make vmtest-slurm}"
	(cd "$top" && cp -a --parents .output/unitmeter_spank.so tools/slurm "$snap/") || exit 1
fi
for var in UNITMETER WORKLOADS DEMO FIXTURES TEST_BIN SPANK_PLUGIN SLURM_TOOLS; do
	value=${!var:-}
	case $value in "$top"/*) printf -v "$var" '%s' "$snap/${value#"$top"/}" ;; esac
done

# arm64 guests run in a root folder of arm64 packages (guest-root.sh): the arm64 build
# (make ARCH=arm64) goes there, at the snapshot's own path, so the cells' commands are the same.
arm64_root=
case " $cells " in
*-arm64:* | *-arm64-*:*)
	[ -x "$top/.output-arm64/unitmeter" ] ||
		{ echo "vmtest: arm64 cells need the arm64 build: make ARCH=arm64" >&2; exit 1; }
	arm64_root=$("$here/guest-root.sh" arm64) || exit 1
	trap 'rm -rf "$snap" "$arm64_root$snap"' EXIT
	mkdir -p "$arm64_root$snap/$build"
	(cd "$top/.output-arm64" && cp -a --parents unitmeter libunitmeter_marker.so workloads demo \
		tests/unitmeter_tests "$arm64_root$snap/$build/") || exit 1
	(cd "$top" && cp -a --parents python tests/fixtures tools/workloads man/unitmeter.1 \
		"$arm64_root$snap/") || exit 1
	chmod 755 "$arm64_root$snap"
	;;
esac

# What runs in each cell, guest or host: the tracer's own verdict, then the tests.
cell_script() { # FILTER
	local filter=$1
	cat <<SCRIPT
set -u
uname -r
export UNITMETER='$UNITMETER' WORKLOADS='$WORKLOADS' DEMO='$DEMO' FIXTURES='$FIXTURES'
${UNITMETER_BUILD:+export UNITMETER_BUILD='$UNITMETER_BUILD'}
${UNITMETER_FAULT_HOOK:+export UNITMETER_FAULT_HOOK='$UNITMETER_FAULT_HOOK'}
'$UNITMETER' check || exit 2
$([ "$slurm" = 1 ] && slurm_setup)
# one job: the guest's two vCPUs are one host thread, and the CPU tests want a CPU each
'$TEST_BIN' --jobs 1 --verbose --filter '$filter'
SCRIPT
}

# The SLURM cell's guest (no network card): slurmctld and slurmd talk over loopback, and SLURM
# resolves its listening addresses with AI_ADDRCONFIG, which glibc answers only when some IPv4
# address other than 127.0.0.1 is configured: one more on lo.
slurm_setup() {
	cat <<SCRIPT
# under TCG a tracer loads its BPF programs in tens of seconds, not the plugin's default 15
export SPANK_PLUGIN='$SPANK_PLUGIN' SLURM_TOOLS='$SLURM_TOOLS' SLURM_LIMITS_ONLY=1 SPANK_READY_TIMEOUT=150
ip link set lo up && ip addr add 10.254.0.1/32 dev lo || exit 2
SCRIPT
}

run_cell() { # CELL LOGDIR
	local cell=$1 dir=$2 release cgroup cell_filter
	rm -rf "$dir"
	mkdir -p "$dir"
	if [ "$cell" = host ]; then
		cell_script "$filter" >"$dir/cmd.sh"
		(cd "$dir" && bash cmd.sh) >"$dir/console.log" 2>&1
	else
		release=${cell%:*} cgroup=${cell##*:}
		case $release in
		*-arm64*) cell_filter=$arm64_filter ;;
		*) cell_filter=$filter ;;
		esac
		# UM_GUEST: the tests that size their work to the machine take an emulated CPU's share
		"$here/vm-boot.sh" -c "$cgroup" -t 2400 "$release" "$dir" -- \
			"export UM_GUEST=1; $(cell_script "$cell_filter")" \
			>"$dir/console.log" 2>&1
	fi
	echo $? >"$dir/status"
}

started=$(date +%s)
running=0
for cell in $cells; do
	dir=$out/${cell//[:+]/_}
	run_cell "$cell" "$dir" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
printf '\n%-26s %-7s %-8s %s\n' kernel cgroup result tests
for cell in $cells; do
	dir=$out/${cell//[:+]/_}
	status=$(cat "$dir/status" 2>/dev/null || echo 3)
	# Criterion colours its lines
	sed 's/\x1b\[[0-9;]*m//g' "$dir/console.log" >"$dir/console.txt"
	synthesis=$(grep -a 'Synthesis:' "$dir/console.txt" | tail -1 | sed 's/.*Synthesis: //')
	if [ "$cell" = host ]; then
		kernel="$(uname -r) (host)" cgroup=$([ -f /sys/fs/cgroup/cgroup.controllers ] && echo v2 || echo v1)
	else
		kernel=${cell%:*} cgroup=${cell##*:}
	fi
	if [ "$status" = 0 ]; then result=pass; else result=FAIL; failed=$((failed + 1)); fi
	printf '%-26s %-7s %-8s %s\n' "$kernel" "$cgroup" "$result" "${synthesis:-no test summary (status $status): see $dir/console.log}"
	if [ "$status" != 0 ]; then
		grep -a -B4 '^\[FAIL\]' "$dir/console.txt" | head -40 | sed 's/^/    /'
	fi
done
echo "matrix: $(( $(echo $cells | wc -w) - failed )) of $(echo $cells | wc -w) cells passed in $(( $(date +%s) - started )) s (logs: $out)"
[ "$failed" = 0 ]
