#!/usr/bin/env bash
# The packages make deb built, as a machine would take them: their dependencies resolved by apt
# (simulated, nothing is installed), then unpacked in a scratch root, where the packaged
# unitmeter runs the demo (make demo's script) and traces python: units with the packaged
# marker library and bootstrap (stripped by the package build: the probes must still attach).
#   tests/install/test-deb.sh DEB_DIR FIT_DEMO          (as root: BPF)
set -euo pipefail
debs=$(realpath "$1")
demo=$(realpath "$2")
src=$(realpath "$(dirname "$0")/../..")
[ "$(id -u)" = 0 ] || { echo "deb-test: run as root (the packaged unitmeter loads BPF)"; exit 1; }
scratch=$(mktemp -d /tmp/unitmeter-deb-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
fail() { echo "deb-test: $*"; exit 1; }

shopt -s nullglob
packages=("$debs"/unitmeter_*_amd64.deb "$debs"/unitmeter-spank_*_amd64.deb)
((${#packages[@]} == 2)) || fail "expected unitmeter and unitmeter-spank in $debs, found: ${packages[*]}"

# what apt would do with them on this machine (Debian's own packages satisfy every Depends)
apt-get install -s "${packages[@]}" >"$scratch/apt.log" 2>&1 ||
    { cat "$scratch/apt.log"; fail "apt cannot satisfy the packages' dependencies"; }
echo "deb-test: apt resolves the dependencies of ${packages[*]##*/}"

root=$scratch/root
for p in "${packages[@]}"; do dpkg-deb -x "$p" "$root"; done
for f in usr/bin/unitmeter usr/lib/unitmeter/libunitmeter_marker.so \
    usr/lib/unitmeter/python/unitmeter_boot/sitecustomize.py usr/share/man/man1/unitmeter.1.gz \
    usr/share/bash-completion/completions/unitmeter \
    usr/lib/x86_64-linux-gnu/slurm-wlm/unitmeter_spank.so etc/slurm/plugstack.conf.d/unitmeter.conf; do
    [ -f "$root/$f" ] || fail "the packages lack /$f"
done
dpkg-deb --ctrl-tarfile "$debs"/unitmeter-spank_*_amd64.deb | tar -xO ./conffiles |
    grep -qx /etc/slurm/plugstack.conf.d/unitmeter.conf || fail "the plugstack.conf snippet is not a conffile"

# the demo, as make demo runs it, with the packaged binary
DEMO_OUT=$scratch/demo "$src/tools/demo/run-demo.sh" "$root/usr/bin/unitmeter" "$demo" >"$scratch/demo.log" 2>&1 ||
    { cat "$scratch/demo.log"; fail "the packaged unitmeter does not run the demo"; }
# the truth: one file per fit, written by the fit itself
fits=$(ls "$scratch/demo/fits" | wc -l)
python3 - "$scratch/demo/demo-run.json" "$fits" <<'PY' || fail "the demo's manifest is wrong"
import json, sys
m = json.load(open(sys.argv[1]))
units, fits = m["units"], int(sys.argv[2])
assert fits > 0 and len(units) == fits, "%d units for %d fits" % (len(units), fits)
assert all(u["status"] == "complete" and u["spec"] == "fit_unit" for u in units), units
PY
grep -q '^#SBATCH --mem=' "$scratch/demo/job-header.sh" || fail "the demo printed no SLURM request"
grep -q '<svg class="memory"' "$scratch/demo/demo-report.html" || fail "the demo wrote no report with its memory chart"
echo "deb-test: the packaged unitmeter ran the demo: $fits fits, $fits complete units, a SLURM request, the report"
"$src/tests/install/check-python-units.sh" "$root/usr/bin/unitmeter"
man --warnings -l "$root/usr/share/man/man1/unitmeter.1.gz" 2>&1 >/dev/null | { ! grep .; } ||
    fail "man warns about the packaged page"
echo "deb-test: passed"
