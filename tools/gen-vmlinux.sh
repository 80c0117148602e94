#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF and record which kernel it
# came from, so a CO-RE relocation failure can be traced back to the header's origin.
set -eu
arch=${1:-x86}
top=$(cd "$(dirname "$0")/.." && pwd)
btf=/sys/kernel/btf/vmlinux
[ -r "$btf" ] || { echo "gen-vmlinux: $btf is missing: this kernel has no BTF (CONFIG_DEBUG_INFO_BTF)" >&2; exit 2; }
mkdir -p "$top/vmlinux/$arch"
bpftool btf dump file "$btf" format c > "$top/vmlinux/$arch/vmlinux.h.tmp"
mv "$top/vmlinux/$arch/vmlinux.h.tmp" "$top/vmlinux/$arch/vmlinux.h"
printf '%s %s\n' "$(uname -r)" "$(date -u +%Y-%m-%d)" > "$top/vmlinux/$arch/KERNEL"
echo "gen-vmlinux: wrote vmlinux/$arch/vmlinux.h from $(uname -r)"
