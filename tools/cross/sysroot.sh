#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# A sysroot of Debian's arm64 libraries for cross-building unitmeter here: the .debs are
# downloaded from the mirror (a private apt state, tools/vm/apt-private.sh) and unpacked with
# dpkg-deb -x, never installed, so the amd64 libraries the tests link stay as they are
# (installing libcriterion-dev:arm64 would remove the amd64 one).
#
# usage: sysroot.sh [ARCH]     ARCH: arm64 (the default); prints the sysroot's path
# The sysroot is CACHE/sysroot-ARCH, CACHE being $UNITMETER_VM_CACHE, else /var/tmp/unitmeter-vm.
#
# SYSROOT/.dpkg is a dpkg database of the unpacked packages (their control files, from dpkg-deb
# -e, and file lists naming the files where they are, under SYSROOT): dpkg-shlibdeps
# --admindir=SYSROOT/.dpkg -lSYSROOT/usr/lib/TRIPLE finds the package of each library the
# package build links and its symbols file, as it would on a machine of that architecture.
set -euo pipefail

arch=${1:-arm64}
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
root=$cache/sysroot-$arch
# what the build links (Makefile LDLIBS, -lcriterion) with the libraries those link
packages="libc6 libc6-dev linux-libc-dev libbpf1 libbpf-dev libelf1 libelf-dev zlib1g zlib1g-dev
libjansson4 libjansson-dev libsimdjson14 libsimdjson-dev libstdc++6 libstdc++-12-dev libgcc-s1
libgcc-12-dev libcrypt1 libcrypt-dev libcriterion3 libcriterion-dev libboxfort-dev libffi8
libgit2-1.5 libnanomsg5
libslurm-dev"
# libslurm-dev: the SPANK plugin's headers (slurm/spank.h); the plugin does not link libslurm

# .complete records the package list it was made from: a sysroot made from another list is
# made again (the new one is swapped in whole, so a build reading the old one is not torn)
want=$(echo $packages)
if [ -f "$root/.complete" ] && [ "$(cat "$root/.complete")" = "$want" ]; then
	echo "$root"
	exit 0
fi
. "$(dirname "$0")/../vm/apt-private.sh"
. "$(dirname "$0")/sysroot-finish.sh"
apt_private "$cache" "$arch"
debs=$cache/debs-$arch
# emptied first: the database below takes every .deb here, so one version of each package
rm -rf "$debs"
mkdir -p "$debs"
# shellcheck disable=SC2086 # one word a package
# Debian 12's versions, as this machine's own libraries (the private state lists newer suites too)
(cd "$debs" && apt-get "${apt_opts[@]}" -o APT::Default-Release=bookworm download -qq $(printf "%s:$arch " $packages) >/dev/null)
rm -rf "$root.partial"
db=$root.partial/.dpkg
mkdir -p "$db/info" "$db/updates"
# the multiarch layout of the info directory: a Multi-Arch: same package's files are PKG:ARCH.*
echo 1 >"$db/info/format"
echo "$arch" >"$db/arch"
: >"$db/status"
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$root.partial"
	pkg=$(dpkg-deb -f "$deb" Package)
	[ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ] && pkg=$pkg:$arch
	{ echo "Status: install ok installed"; dpkg-deb -f "$deb"; echo; } >>"$db/status"
	dpkg-deb -e "$deb" "$db/ctrl"
	# what dpkg-shlibdeps reads; the maintainer scripts would never run here
	for f in shlibs symbols; do
		[ ! -f "$db/ctrl/$f" ] || mv "$db/ctrl/$f" "$db/info/$pkg.$f"
	done
	rm -rf "$db/ctrl"
	# the paths as they are in the sysroot once it is in place
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed "s|^\./|$root/|; s|/\$||" >"$db/info/$pkg.list"
done
sysroot_finish "$root" "$want"
