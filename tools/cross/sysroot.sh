#!/bin/bash
# A sysroot of Debian's arm64 libraries for cross-building unitmeter here: the .debs are
# downloaded from the mirror (a private apt state, tools/vm/apt-private.sh) and unpacked with
# dpkg-deb -x, never installed, so the amd64 libraries the tests link stay as they are
# (installing libcriterion-dev:arm64 would remove the amd64 one).
#
# usage: sysroot.sh [ARCH]     ARCH: arm64 (the default); prints the sysroot's path
# The sysroot is CACHE/sysroot-ARCH, CACHE being $UNITMETER_VM_CACHE, else /var/tmp/unitmeter-vm.
set -euo pipefail

arch=${1:-arm64}
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
root=$cache/sysroot-$arch
# what the build links (Makefile LDLIBS, -lcriterion) with the libraries those link
packages="libc6 libc6-dev linux-libc-dev libbpf1 libbpf-dev libelf1 libelf-dev zlib1g zlib1g-dev
libjansson4 libjansson-dev libsimdjson14 libsimdjson-dev libstdc++6 libstdc++-12-dev libgcc-s1
libgcc-12-dev libcrypt1 libcrypt-dev libcriterion3 libcriterion-dev libboxfort-dev libffi8
libgit2-1.5 libnanomsg5"

if [ -f "$root/.complete" ]; then
	echo "$root"
	exit 0
fi
. "$(dirname "$0")/../vm/apt-private.sh"
apt_private "$cache" "$arch"
debs=$cache/debs-$arch
mkdir -p "$debs"
# shellcheck disable=SC2086 # one word a package
# Debian 12's versions, as this machine's own libraries (the private state lists newer suites too)
(cd "$debs" && apt-get "${apt_opts[@]}" -o APT::Default-Release=bookworm download -qq $(printf "%s:$arch " $packages) >/dev/null)
rm -rf "$root.partial"
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$root.partial"
done
# absolute links (a -dev package's libfoo.so -> /lib/...) would point into this machine: made
# relative, so they resolve inside the sysroot
find "$root.partial" -type l -lname '/*' | while read -r link; do
	rel=${link#"$root.partial"}
	ln -sfn "$(realpath -sm --relative-to="$(dirname "$rel")" "$(readlink "$link")")" "$link"
done
touch "$root.partial/.complete"
mv "$root.partial" "$root"
echo "$root"
