#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make install as a user would do it, from a copy of the tree that is deleted before the
# installed unitmeter runs:
#   1. DESTDIR with Debian's directories: exactly the expected files; the staged (relocated)
#      binary traces python: units; make uninstall removes every file;
#   2. PREFIX: the copy deleted, the installed binary traces python: units, `man` finds and
#      renders the installed page without a warning, the installed completion completes.
#   tests/install/test-install.sh SOURCE_TREE FIT_DEMO          (as root: BPF)
set -euo pipefail
src=$(realpath "$1")
demo=$(realpath "$2")
tests=$src/tests
[ "$(id -u)" = 0 ] || { echo "install-test: run as root (the installed unitmeter loads BPF)"; exit 1; }
scratch=$(mktemp -d /tmp/unitmeter-install-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "install-test: $*"; exit 1; }

copy=$scratch/src
mkdir "$copy"
tar -C "$src" --exclude=./.git --exclude='./.output*' --exclude=./unitmeter --exclude=./demo-output \
    -cf - . | tar -C "$copy" -xf -
echo "install-test: building a copy of the tree in $copy"
make -C "$copy" -j2 --no-print-directory unitmeter spank >"$scratch/build.log" 2>&1 ||
    { cat "$scratch/build.log"; fail "the copy does not build"; }

# 1. DESTDIR, with Debian's directories for this machine's architecture (the copy builds for it)
stage=$scratch/stage
# the compiler says it (dpkg-architecture is dpkg-dev's, which make test does not need)
multiarch=$(gcc -print-multiarch)
debian_dirs=(PREFIX=/usr SYSCONFDIR=/etc SLURM_PLUGINDIR=/usr/lib/$multiarch/slurm-wlm)
make -C "$copy" --no-print-directory install DESTDIR="$stage" "${debian_dirs[@]}" >/dev/null
expected="./etc/slurm/plugstack.conf.d/unitmeter.conf
./usr/bin/unitmeter
./usr/lib/unitmeter/libunitmeter_marker.so
./usr/lib/unitmeter/python/unitmeter_boot/sitecustomize.py
./usr/lib/$multiarch/slurm-wlm/unitmeter_spank.so
./usr/share/bash-completion/completions/unitmeter
./usr/share/man/man1/unitmeter.1.gz"
got=$(cd "$stage" && find . ! -type d | LC_ALL=C sort)
[ "$got" = "$expected" ] || fail "DESTDIR install put:
$got
expected:
$expected"
grep -qx "optional /usr/lib/$multiarch/slurm-wlm/unitmeter_spank.so unitmeter=/usr/bin/unitmeter" \
    "$stage/etc/slurm/plugstack.conf.d/unitmeter.conf" || fail "the plugstack.conf snippet does not name the installed files"
echo "install-test: DESTDIR install: the $(wc -l <<<"$expected") expected files"
"$tests/install/check-python-units.sh" "$stage/usr/bin/unitmeter"
make -C "$copy" --no-print-directory uninstall DESTDIR="$stage" "${debian_dirs[@]}" >/dev/null
left=$(cd "$stage" && find . ! -type d)
[ -z "$left" ] || fail "make uninstall left: $left"
echo "install-test: make uninstall removed every file"

# 2. PREFIX, the tree deleted
prefix=$scratch/prefix
make -C "$copy" --no-print-directory install PREFIX="$prefix" >/dev/null
rm -rf "$copy"
"$tests/install/check-python-units.sh" "$prefix/bin/unitmeter"
page=$(MANPATH=$prefix/share/man man -w unitmeter) || fail "man does not find the installed page"
[ "$page" = "$prefix/share/man/man1/unitmeter.1.gz" ] || fail "man found $page, not the installed page"
rendered=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>"$scratch/man.err") || fail "man cannot render $page"
[ ! -s "$scratch/man.err" ] || { cat "$scratch/man.err"; fail "man warns about the installed page"; }
for section in SYNOPSIS COMMANDS OPTIONS 'UNIT SPECS' OUTPUT 'EXIT STATUS' EXAMPLES; do
    grep -q "^$section" <<<"$rendered" || fail "the rendered page has no $section section"
done
echo "install-test: man renders the installed page, no warning"
out=$("$tests/completion/test-completion.sh" "$prefix/share/bash-completion/completions/unitmeter" \
    "$demo" 2>&1) || { echo "$out"; fail "the installed completion fails"; }
tail -1 <<<"$out"
echo "install-test: passed"
