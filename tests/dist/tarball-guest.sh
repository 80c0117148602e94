#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The arm64 tarball on an arm64 kernel: a guest of Debian's arm64 kernel under qemu
# (tools/vm/vm-boot.sh, its root Debian 12's arm64 packages) runs tests/dist/tarball-in-root.sh
# on it: unitmeter check, the demo, a python: fit, the readers, install.sh.
#   tests/dist/tarball-guest.sh TARBALL RELEASE     (as root: qemu's shares)
set -euo pipefail
tarball=$(realpath "$1")
release=$2
src=$(realpath "$(dirname "$0")/../..")
fail() { echo "tarball-guest: $*"; exit 1; }
[ "$(id -u)" = 0 ] || fail "run as root (the guest's shares keep the files' owners)"
out=$(mktemp -d /tmp/unitmeter-dist-guest.XXXXXX)
trap 'rm -rf "$out"' EXIT
# unpacked here: the guest's root has no gzip
mkdir "$out/unpacked"
tar -xzf "$tarball" -C "$out/unpacked"
cp "$src/tests/dist/tarball-in-root.sh" "$out/"
echo "tarball-guest: booting $release (emulated: minutes)"
rc=0
"$src/tools/vm/vm-boot.sh" -c v2 -t 900 "$release" "$out" -- \
	"uname -m; sh /tmp/out/tarball-in-root.sh /tmp/out/unpacked" >"$out/console.log" 2>&1 || rc=$?
tr -d '\r' <"$out/console.log" >"$out/console.txt"
grep -q '^tarball-in-root: passed' "$out/console.txt" && [ "$rc" = 0 ] ||
	{ tail -40 "$out/console.txt"; fail "the tarball failed in the $release guest (status $rc)"; }
grep -E '^(aarch64|x86_64)$|^== |^verdict:|^tarball-in-root' "$out/console.txt"
