#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The NVIDIA driver's own libcuda.so.1 and libnvidia-ml.so.1, as this Debian release's non-free
# component ships them (libcuda1, libnvidia-ml1: 535 in Debian 12, 550 in 13), for ARCH:
# downloaded and unpacked into a cache, never installed. Prints the folder that holds both
# (LD_LIBRARY_PATH for a traced command), or says on stderr why not and exits 1.
#
# usage: nvidia-libs.sh [ARCH]      ARCH: amd64 (default) or arm64
set -euo pipefail

arch=${1:-amd64}
here=$(cd "$(dirname "$0")" && pwd)
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
release=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
case $release in bookworm | trixie) ;; *)
	echo "nvidia-libs: not a Debian 12 or 13 system ('$release')" >&2
	exit 1
	;;
esac
triple=$([ "$arch" = arm64 ] && echo aarch64-linux-gnu || echo x86_64-linux-gnu)
root=$cache/nvidia-$release-$arch
libs=$root/usr/lib/$triple/nvidia/current
mkdir -p "$cache"
# one fetch at a time: tests run two at once, and apt's state is shared
exec 9>"$cache/nvidia-libs.lock"
flock 9
if [ ! -f "$root/.complete" ]; then
	. "$here/../../vm/apt-private.sh"
	apt_private "$cache" "$arch" || exit 1
	debs=$(mktemp -d)
	trap 'rm -rf "$debs" "$root.partial"' EXIT
	(cd "$debs" && apt-get "${apt_opts[@]}" download -qq \
		"libcuda1:$arch/$release" "libnvidia-ml1:$arch/$release" >/dev/null 2>"$debs/log") ||
		{ echo "nvidia-libs: cannot download libcuda1 and libnvidia-ml1 ($arch, $release non-free): $(tail -1 "$debs/log")" >&2; exit 1; }
	rm -rf "$root.partial"
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$root.partial"
	done
	touch "$root.partial/.complete"
	mv "$root.partial" "$root"
fi
[ -e "$libs/libcuda.so.1" ] && [ -e "$libs/libnvidia-ml.so.1" ] ||
	{ echo "nvidia-libs: $libs lacks libcuda.so.1 or libnvidia-ml.so.1" >&2; exit 1; }
echo "$libs"
