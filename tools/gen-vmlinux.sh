#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Regenerate vmlinux/<arch>/vmlinux.h and record which kernel it came from, so a CO-RE
# relocation failure can be traced back to the header's origin.
#
# usage: gen-vmlinux.sh [ARCH]            from the running kernel's BTF (ARCH: x86 by default)
#        gen-vmlinux.sh ARCH RELEASE      from Debian's kernel package of RELEASE, fetched from
#                                         the mirror (tools/vm/kernel-fetch.sh), e.g.
#                                         gen-vmlinux.sh arm64 6.12.118+deb12-arm64
set -eu
arch=${1:-x86}
release=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/vmlinux/$arch"
tmp=$top/vmlinux/$arch/vmlinux.h.tmp
if [ -n "$release" ]; then
	# a kernel this machine does not run: its BTF is cut out of the packaged image
	tree=$("$top/tools/vm/kernel-fetch.sh" "$release")
	btf=$top/vmlinux/$arch/btf.tmp
	"$top/tools/btf-from-image.py" "$tree/boot/vmlinuz-$release" "$btf"
	bpftool btf dump file "$btf" format c >"$tmp"
	rm -f "$btf"
else
	release=$(uname -r)
	btf=/sys/kernel/btf/vmlinux
	[ -r "$btf" ] || { echo "gen-vmlinux: $btf is missing: this kernel has no BTF (CONFIG_DEBUG_INFO_BTF)" >&2; exit 2; }
	bpftool btf dump file "$btf" format c >"$tmp"
fi
mv "$tmp" "$top/vmlinux/$arch/vmlinux.h"
printf '%s %s\n' "$release" "$(date -u +%Y-%m-%d)" > "$top/vmlinux/$arch/KERNEL"
echo "gen-vmlinux: wrote vmlinux/$arch/vmlinux.h from $release"
