#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A root folder for guests of another architecture than this machine's (arm64 on amd64): they
# cannot run this machine's own root, which vm-boot.sh shares with guests of its own kind. Made
# from Debian 12's packages on the mirror: downloaded with a private, empty dpkg status (nothing
# is installed here) and unpacked with dpkg-deb -x; debootstrap's second stage would run the
# maintainer scripts under emulation, far too slowly. Cached; the build is copied in per run.
#
# usage: guest-root.sh ARCH        prints the folder (CACHE/root-ARCH)
set -euo pipefail

arch=${1:?usage: guest-root.sh ARCH}
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
root=$cache/root-$arch
# a shell and the tools the suites call (busybox also for the initramfs), the tracer's
# libraries, Python and numpy
packages="base-files base-passwd dash bash coreutils libc-bin util-linux procps grep sed findutils
gawk mawk hostname diffutils busybox-static bpftool libcap2 libbpf1 libelf1 zlib1g libjansson4 libsimdjson14 libstdc++6
libcriterion3 python3 python3-numpy"

if [ -f "$root/.complete" ]; then
	echo "$root"
	exit 0
fi
. "$(dirname "$0")/apt-private.sh"
apt_private "$cache" "$arch"
debs=$cache/debs-root-$arch
state=$cache/dpkg-empty-$arch
mkdir -p "$debs/partial" "$state"
: >"$state/status"
# shellcheck disable=SC2086 # one word a package
apt-get "${apt_opts[@]}" -o APT::Default-Release=bookworm -o APT::Architecture="$arch" \
	-o Dir::State::status="$state/status" -o Dir::Cache::archives="$debs" \
	--download-only -y -qq install $packages >/dev/null
rm -rf "$root.partial"
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$root.partial"
done
# users and groups as base-passwd installs them (some tests run as nobody)
cp "$root.partial/usr/share/base-passwd/passwd.master" "$root.partial/etc/passwd"
cp "$root.partial/usr/share/base-passwd/group.master" "$root.partial/etc/group"
# merged /usr: base-files ships no /bin, /lib links on Debian 12 (usrmerge makes them)
for d in bin sbin lib; do
	[ -e "$root.partial/$d" ] || ln -s "usr/$d" "$root.partial/$d"
done
# the links update-alternatives would make (no maintainer script runs): numpy's BLAS and LAPACK
for lib in blas lapack; do
	for dir in "$root.partial"/usr/lib/*-linux-gnu; do
		[ -e "$dir/$lib/lib$lib.so.3" ] && ln -sfn "$lib/lib$lib.so.3" "$dir/lib$lib.so.3"
	done
done
touch "$root.partial/.complete"
mv "$root.partial" "$root"
echo "$root"
