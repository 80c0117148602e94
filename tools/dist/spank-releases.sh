#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The SPANK plugin as a site builds it from the portable tarball (share/unitmeter/spank/: make
# SLURM_PREFIX=...), against each of Debian's two SLURM releases (Debian 12's 22.05, Debian 13's
# 24.11): their headers and their libslurmfull unpacked from the mirror, never installed. Each
# build must compile without a warning, carry that release's plugin_version (SLURM loads only a
# plugin of its own release), and every SLURM symbol it calls must be one that release's
# libslurmfull exports.
#
# usage: spank-releases.sh TARBALL
set -euo pipefail
tarball=$(realpath "$1")
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../vm/apt-private.sh"
apt_private "$cache" amd64
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
spank_src=$(echo "$work"/unitmeter-*-linux/share/unitmeter/spank)
status=0
for release in bookworm trixie; do
	slurm=$cache/slurm-$release
	if [ ! -f "$slurm/.complete" ]; then
		rm -rf "$slurm" && mkdir -p "$slurm/debs"
		(cd "$slurm/debs" && apt-get "${apt_opts[@]}" download -qq libslurm-dev/$release \
			slurm-wlm-basic-plugins/$release >/dev/null)
		for deb in "$slurm"/debs/*.deb; do dpkg-deb -x "$deb" "$slurm"; done
		touch "$slurm/.complete"
	fi
	build=$work/build-$release
	cp -r "$spank_src" "$build"
	make -s -C "$build" SLURM_PREFIX="$slurm/usr" CFLAGS="-O2 -Werror" >"$work/log" 2>&1 ||
		{ cat "$work/log"; echo "spank-releases: the plugin does not build against $release's SLURM" >&2; status=1; continue; }
	want=$(sed -n 's/^#define SLURM_VERSION_NUMBER \(0x[0-9a-fA-F]*\).*/\1/p' "$slurm/usr/include/slurm/slurm_version.h")
	have=$(python3 - "$build/unitmeter_spank.so" <<'PY'
import ctypes, os, sys
# lazily: the SLURM functions it calls are resolved when slurmstepd loads it
lib = ctypes.CDLL(sys.argv[1], mode=os.RTLD_LAZY)
print(hex(ctypes.c_uint32.in_dll(lib, "plugin_version").value))
PY
)
	missing=$(comm -23 <(nm -D --undefined-only "$build/unitmeter_spank.so" | awk '$2 !~ /@/ && $1 == "U" {print $2}' | sort -u) \
		<(nm -D --defined-only "$(find "$slurm" -name libslurmfull.so | head -1)" | awk '{print $3}' | sort -u) |
		grep -E '^(slurm|spank)_' || true)
	echo "spank-releases: $release (SLURM $(printf '%d.%02d.%d' $((want >> 16)) $((want >> 8 & 255)) $((want & 255)))): plugin_version $have (the release's $want); SLURM symbols it calls: ${missing:+missing }${missing:-all exported}"
	if [ "$((have))" != "$((want))" ] || [ -n "$missing" ]; then status=1; fi
done
exit $status
