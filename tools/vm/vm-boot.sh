#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Boot one of Debian's kernels under qemu with this machine's root read-only inside (an arm64
# kernel: a root folder of arm64 packages), run a command there as root, print the console, and
# exit with the command's status.
#
# usage: vm-boot.sh [-c v1|v2] [-m MiB] [-s CPUS] [-t SECONDS] RELEASE OUTDIR -- CMD...
#   RELEASE  a Debian kernel release (kernel-fetch.sh --list), fetched and cached on first use
#   OUTDIR   a host directory, writable in the guest as /tmp/out, where CMD runs
#   -c       cgroup v1 (memory, cpu, pids hierarchies) or the unified v2 hierarchy; default v1
#   -t       bound on the whole boot and run; default 1800
# Exit: CMD's status; 3 when the guest gave none (it did not boot, or the time bound ended it).
#
# Emulation is TCG, one host thread: nested KVM hangs at boot on these machines, and
# multi-threaded TCG oopsed in kernel text patching. UNITMETER_VM_ACCEL="-enable-kvm -cpu host"
# selects KVM where it works.
set -euo pipefail
cgroup=v1 mem=4096 cpus=2 limit=1800
while getopts c:m:s:t: opt; do
	case $opt in
	c) cgroup=$OPTARG ;;
	m) mem=$OPTARG ;;
	s) cpus=$OPTARG ;;
	t) limit=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 3 ] || [ "$3" != -- ]; then
	echo "usage: vm-boot.sh [-c v1|v2] [-m MiB] [-s CPUS] [-t SECONDS] RELEASE OUTDIR -- CMD..." >&2
	exit 2
fi
release=$1 out=$2
shift 3
case $cgroup in v1 | v2) ;; *) echo "vm-boot: -c takes v1 or v2" >&2; exit 2 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
tree=$("$here/kernel-fetch.sh" "$release")
# An arm64 kernel boots under qemu-system-aarch64 into a root folder of Debian's arm64 packages
# (guest-root.sh): this machine's root holds x86 binaries. Multi-threaded TCG is sound for an
# arm64 guest on an x86 host; pauth-impdef=on avoids the slow emulated pointer authentication.
case $release in
*-arm64 | *-arm64-*)
	root=$("$here/guest-root.sh" arm64)
	busybox=$root/bin/busybox
	qemu=(qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -accel tcg,thread=multi)
	console=ttyAMA0 clock=
	;;
*)
	root=/ busybox=/bin/busybox
	# shellcheck disable=SC2206 # the accelerator options are words
	qemu=(qemu-system-x86_64 ${UNITMETER_VM_ACCEL:--accel tcg,thread=single -cpu max})
	# tsc=reliable: under TCG the vCPUs' TSCs look unsynchronized, the guest falls back to
	# HPET for the wall clock while the scheduler's thread clocks keep a filtered TSC, and
	# the two disagree by several percent; a real machine reads both from one stable TSC.
	console=ttyS0 clock=tsc=reliable
	;;
esac
initrd=$tree/unitmeter-initramfs.cpio.gz
if [ ! -f "$initrd" ] || [ "$here/mkinitramfs.py" -nt "$initrd" ]; then
	PATH=$PATH:/sbin:/usr/sbin python3 "$here/mkinitramfs.py" "$tree" "$release" "$initrd" "$busybox"
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
printf '%s\n' "$*" >"$out/cmd.sh"
echo "$cgroup" >"$out/cgroup"
rm -f "$out/rc"
append="console=$console quiet loglevel=3 panic=-1${clock:+ $clock}"
# v2 alone: systemd's switch and no v1 hierarchy at all
[ "$cgroup" = v2 ] && append="$append systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all"
timeout --foreground "$limit" "${qemu[@]}" \
	-smp "$cpus" -m "$mem" -nographic -no-reboot -nic none \
	-kernel "$tree/boot/vmlinuz-$release" -initrd "$initrd" -append "$append" \
	-virtfs local,path="$root",mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap \
	-virtfs local,path="$out",mount_tag=out,security_model=passthrough </dev/null || true
if [ ! -s "$out/rc" ]; then
	echo "vm-boot: $release gave no exit status (no boot, or the ${limit} s bound ended it)" >&2
	exit 3
fi
exit "$(cat "$out/rc")"
