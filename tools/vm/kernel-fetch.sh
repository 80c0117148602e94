#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fetch one of Debian's kernel packages and unpack it (dpkg -x: nothing is installed) for
# vm-boot.sh. The packages come from the mirror this machine's apt already uses; the suites
# other than this machine's own are listed in a private apt state under the cache, so the
# system's apt configuration is never touched.
#
# usage: kernel-fetch.sh RELEASE        e.g. 5.10.0-46-amd64, 6.1.0-57-amd64, 6.12.117+deb13-amd64,
#                                       6.12.118+deb12-arm64, 6.12.118+deb12-arm64-16k
#        kernel-fetch.sh --list [ARCH]  the kernel releases the mirror offers (amd64, or arm64)
# Prints the unpacked tree (CACHE/RELEASE). CACHE is $UNITMETER_VM_CACHE, else /var/tmp/unitmeter-vm:
# outside the source tree, so a clean clone and `git clean` keep the downloads.
set -euo pipefail

cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
list=false
if [ "${1:-}" = --list ]; then
	list=true
elif [ $# -ne 1 ]; then
	echo "usage: kernel-fetch.sh RELEASE | --list [ARCH]" >&2
	exit 2
fi
release=${1:-}
# the package's architecture, from the flavour at the release's end (-arm64, -arm64-16k)
if $list; then
	arch=${2:-amd64}
else
	case $release in *-arm64 | *-arm64-*) arch=arm64 ;; *) arch=amd64 ;; esac
fi

if ! $list && [ -f "$cache/$release/boot/vmlinuz-$release" ]; then
	echo "$cache/$release"
	exit 0
fi

mkdir -p "$cache/debs"
. "$(dirname "$0")/apt-private.sh"
apt_private "$cache" "$arch"

if $list; then
	apt-cache "${apt_opts[@]}" pkgnames linux-image- |
		grep -E "^linux-image-[0-9][^ ]*-$arch(-[0-9a-z]+)?\$" | grep -v -e '-dbg' -e '-unsigned' |
		sed 's/^linux-image-//' | sort -V
	exit 0
fi

(cd "$cache/debs" && apt-get "${apt_opts[@]}" download -qq "linux-image-$release:$arch" >/dev/null)
deb=$(ls "$cache/debs/linux-image-${release}_"*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { echo "kernel-fetch: linux-image-$release was not downloaded" >&2; exit 1; }
rm -rf "$cache/$release.partial"
dpkg-deb -x "$deb" "$cache/$release.partial"
mv "$cache/$release.partial" "$cache/$release"
echo "$cache/$release"
