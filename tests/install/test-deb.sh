#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The packages make deb built, as a machine would take them: their dependencies resolved by apt
# (simulated, nothing is installed), then unpacked in a scratch root, where the packaged
# unitmeter runs the demo (make demo's script) and traces python: units with the packaged
# marker library and bootstrap (stripped by the package build: the probes must still attach).
# The packages of another architecture (ARCH: arm64 on amd64) cannot run here: their dependencies
# are resolved by apt against that architecture's Debian 12 (a private apt state, an empty dpkg
# status: a fresh machine of it), and their files are checked where they are: every ELF file is
# of ARCH's machine, the plugin and the plugstack.conf line are in ARCH's multiarch directory.
#   tests/install/test-deb.sh DEB_DIR ARCH FIT_DEMO     (ARCH this machine's: as root, BPF)
#   tests/install/test-deb.sh DEB_DIR ARCH              (another ARCH: the checks of the files)
set -euo pipefail
debs=$(realpath "$1")
arch=$2
src=$(realpath "$(dirname "$0")/../..")
native=$([ "$arch" = "$(dpkg --print-architecture)" ] && echo 1 || echo 0)
if [ "$native" = 1 ]; then
    demo=$(realpath "${3:?usage: test-deb.sh DEB_DIR ARCH FIT_DEMO}")
    [ "$(id -u)" = 0 ] || { echo "deb-test: run as root (the packaged unitmeter loads BPF)"; exit 1; }
fi
multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)
scratch=$(mktemp -d /tmp/unitmeter-deb-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "deb-test: $*"; exit 1; }

shopt -s nullglob
packages=("$debs"/unitmeter_*_"$arch".deb "$debs"/unitmeter-spank_*_"$arch".deb)
((${#packages[@]} == 2)) || fail "expected unitmeter and unitmeter-spank for $arch in $debs, found: ${packages[*]}"

if [ "$native" = 1 ]; then
    # what apt would do with them on this machine (Debian's own packages satisfy every Depends)
    apt-get install -s "${packages[@]}" >"$scratch/apt.log" 2>&1 ||
        { cat "$scratch/apt.log"; fail "apt cannot satisfy the packages' dependencies"; }
else
    # what apt would do on a fresh machine of ARCH: Debian 12's packages, nothing installed (the
    # binary caches are not written, the system's stay as they are)
    . "$src/tools/vm/apt-private.sh"
    apt_private "${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}" "$arch"
    : >"$scratch/status"
    apt-get "${apt_opts[@]}" -o APT::Default-Release=bookworm -o APT::Architecture="$arch" \
        -o Dir::State::status="$scratch/status" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
        install -s "${packages[@]}" >"$scratch/apt.log" 2>&1 ||
        { cat "$scratch/apt.log"; fail "apt cannot satisfy the packages' dependencies on $arch"; }
    # the libraries the binary links come from ARCH's packages, not another architecture's
    for lib in libbpf1 libc6 libelf1 libjansson4 libsimdjson14 libstdc++6 zlib1g slurm-wlm-basic-plugins; do
        grep -q "^Inst $lib (.*\[$arch\])" "$scratch/apt.log" ||
            { cat "$scratch/apt.log"; fail "apt does not install $lib:$arch for the packages"; }
    done
fi
echo "deb-test: apt resolves the dependencies of ${packages[*]##*/}"

root=$scratch/root
for p in "${packages[@]}"; do dpkg-deb -x "$p" "$root"; done
for f in usr/bin/unitmeter usr/lib/unitmeter/libunitmeter_marker.so \
    usr/lib/unitmeter/python/unitmeter_boot/sitecustomize.py usr/share/man/man1/unitmeter.1.gz \
    usr/share/bash-completion/completions/unitmeter \
    "usr/lib/$multiarch/slurm-wlm/unitmeter_spank.so" etc/slurm/plugstack.conf.d/unitmeter.conf; do
    [ -f "$root/$f" ] || fail "the packages lack /$f"
done
dpkg-deb --ctrl-tarfile "$debs"/unitmeter-spank_*_"$arch".deb | tar -xO ./conffiles |
    grep -qx /etc/slurm/plugstack.conf.d/unitmeter.conf || fail "the plugstack.conf snippet is not a conffile"
grep -qx "optional /usr/lib/$multiarch/slurm-wlm/unitmeter_spank.so unitmeter=/usr/bin/unitmeter" \
    "$root/etc/slurm/plugstack.conf.d/unitmeter.conf" || fail "the plugstack.conf snippet does not name the packaged files"
# ELF's e_machine name for the architecture's machine, as readelf -h prints it
machine=$(case $arch in amd64) echo "Advanced Micro Devices X86-64" ;; arm64) echo AArch64 ;; *) fail "no ELF machine known for $arch" ;; esac)
elfs=0
while read -r f; do
    head -c4 "$f" | grep -q $'^\x7fELF' || continue
    readelf -h "$f" | grep -qE "^ +Machine: +$machine\$" || fail "/${f#"$root"/} is not an ELF file for $machine"
    elfs=$((elfs + 1))
done < <(find "$root" -type f)
((elfs == 3)) || fail "$elfs ELF files in the packages, expected 3 (unitmeter, the marker library, the plugin)"
echo "deb-test: the packages' files are where $arch's machine looks for them, their 3 ELF files for $machine"

if [ "$native" = 0 ]; then
    echo "deb-test: passed ($arch: the packaged binary cannot run on this $(dpkg --print-architecture) machine)"
    exit 0
fi

# the demo, as make demo runs it, with the packaged binary
DEMO_OUT=$scratch/demo "$src/tools/demo/run-demo.sh" "$root/usr/bin/unitmeter" "$demo" >"$scratch/demo.log" 2>&1 ||
    { cat "$scratch/demo.log"; fail "the packaged unitmeter does not run the demo"; }
# the truth: one file per fit, written by the fit itself
fits=$("$src/tests/install/check-demo-output.sh" "$scratch/demo") || fail "the demo's output is wrong"
grep -q '<svg class="memory"' "$scratch/demo/demo-report.html" || fail "the demo wrote no report with its memory chart"
echo "deb-test: the packaged unitmeter ran the demo: $fits fits, $fits complete units, a SLURM request, the report"
"$src/tests/install/check-python-units.sh" "$root/usr/bin/unitmeter"
man --warnings -l "$root/usr/share/man/man1/unitmeter.1.gz" 2>&1 >/dev/null | { ! grep .; } ||
    fail "man warns about the packaged page"
echo "deb-test: passed"
