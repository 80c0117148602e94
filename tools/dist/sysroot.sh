#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The sysroot the portable build (make dist) compiles and links against: the oldest C library
# Debian's mirror serves (Debian 11's glibc 2.31, with its GCC 10 runtime), so the binary asks
# no symbol a newer glibc added, and the libraries it links in statically: libelf, zlib and
# jansson as Debian 11 ships them; libbpf and simdjson compiled here from Debian's source
# packages (Debian 13's libbpf 1.5 with the kernel's UAPI headers of 6.12, as the Debian 13 build
# has them; Debian 12's simdjson 3.0, as the Debian 12 build has it): Debian ships no static
# simdjson, and a libbpf.a of a newer release was compiled against a newer glibc and GCC runtime
# than this one (arm64's asks GCC 12's outline atomics). The packages come from the mirror through a
# private apt state (tools/vm/apt-private.sh), hash-checked by apt, and are unpacked, never
# installed.
#
# usage: sysroot.sh ARCH        ARCH: amd64 or arm64; prints the sysroot's path
# The sysroot is CACHE/dist-sysroot-ARCH, CACHE being $UNITMETER_VM_CACHE, else /var/tmp/unitmeter-vm.
set -euo pipefail

arch=${1:?usage: sysroot.sh amd64|arm64}
case $arch in
amd64) triple=x86_64-linux-gnu ;;
arm64) triple=aarch64-linux-gnu ;;
*) echo "sysroot.sh: no portable build for $arch" >&2; exit 2 ;;
esac
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
root=$cache/dist-sysroot-$arch
# the C library and the compiler's runtime: Debian 11's (glibc 2.31, GCC 10)
old="libc6 libc6-dev libcrypt1 libcrypt-dev libgcc-s1 libgcc-10-dev libstdc++-10-dev
libelf1 libelf-dev zlib1g zlib1g-dev libjansson4 libjansson-dev"
# headers only (Debian 13 makes them one package for every architecture)
new="linux-libc-dev"
# source packages, built below: Debian 13's libbpf, Debian 12's simdjson (the mirror keeps the
# sources of each suite's own versions)
libbpf_version=1.5.0-3
simdjson_version=3.0.1-1

want="$(echo $old) | $(echo $new) | libbpf $libbpf_version simdjson $simdjson_version"
if [ -f "$root/.complete" ] && [ "$(cat "$root/.complete")" = "$want" ]; then
	echo "$root"
	exit 0
fi
. "$(dirname "$0")/../vm/apt-private.sh"
. "$(dirname "$0")/../cross/sysroot-finish.sh"
apt_private "$cache" "$arch" >&2
debs=$cache/dist-debs-$arch
rm -rf "$debs" "$root.partial"
mkdir -p "$debs" "$root.partial"
# shellcheck disable=SC2086 # one word a package
(cd "$debs" && apt-get "${apt_opts[@]}" download -qq $(printf "%s:$arch/bullseye " $old) \
	$(printf "%s/trixie " $new) >/dev/null)
for deb in "$debs"/*.deb; do
	dpkg-deb -x "$deb" "$root.partial"
done

# the two source packages, hash-checked by apt against the suites' Sources indexes
apt_private_src "$cache"
mkdir -p "$cache/dist-src"
(cd "$cache/dist-src" && apt-get "${src_opts[@]}" source --download-only -qq \
	"libbpf=$libbpf_version" "simdjson=$simdjson_version" >/dev/null)
cc=(clang --target=$triple --sysroot="$root.partial" -Wno-unused-command-line-argument)
src=$root.partial/.src
unpack() { # PACKAGE VERSION: its upstream tarball into $src/PACKAGE
	local upstream=${2#*:}
	mkdir -p "$src/$1"
	tar -xf "$cache"/dist-src/"$1"_"${upstream%-*}".orig.tar.* -C "$src/$1" --strip-components=1
}

# libbpf: its own Makefile, static only, installed into the sysroot as a -dev package would
unpack libbpf "$libbpf_version"
make -s -C "$src/libbpf/src" BUILD_STATIC_ONLY=1 OBJDIR="$src/libbpf/obj" CC="${cc[*]}" \
	AR=llvm-ar DESTDIR="$root.partial" PREFIX=/usr LIBDIR=/usr/lib/$triple \
	install install_uapi_headers >/dev/null

# simdjson: its one-file amalgamation, as a static library
unpack simdjson "$simdjson_version"
clang++ "${cc[@]:1}" -std=c++17 -O2 -fPIC -c "$src/simdjson/singleheader/simdjson.cpp" \
	-o "$src/simdjson.o"
cp "$src/simdjson/singleheader/simdjson.h" "$root.partial/usr/include/"
llvm-ar rcs "$root.partial/usr/lib/$triple/libsimdjson.a" "$src/simdjson.o"
rm -rf "$src"

sysroot_finish "$root" "$want"
