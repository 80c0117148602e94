#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The README's commands as a new user meets them: in a fresh minimal Debian root (debootstrap
# --variant=minbase from the mirror this machine's apt uses), entered with chroot on this
# machine's kernel, the tree copied to /root/unitmeter as a clone would be. Only make and git are
# installed first (what a user needs to clone and start); every other package is the Makefile's
# to install. The pristine root is cached; every run gets a copy of it, removed afterwards.
#
# A chroot, not a guest: the kernel under test is this machine's (the guests of make vmtest boot
# the releases' kernels); what this proves is the userland: the release's compiler, libraries,
# Python and SLURM, and that nothing is taken from a machine that happened to have it.
#
# usage: fresh-root.sh RELEASE [COMMAND]    RELEASE: bookworm (12) or trixie (13); bullseye (11)
#                                           for the portable tarball (make dist), whose glibc is
#                                           the oldest the mirror has
#                                           COMMAND run in the tree (default: make demo && make test)
# Environment: UNITMETER_VM_CACHE (default /var/tmp/unitmeter-vm), FRESH_ROOT_KEEP=1 keeps the copy,
# FRESH_ROOT_COPY="FILE..." copies those files into the root's /root (a tarball to try there).
set -euo pipefail

release=${1:?usage: fresh-root.sh bookworm|trixie|bullseye [COMMAND]}
command=${2:-make demo && make test}
case $release in bookworm | trixie | bullseye) ;; *)
	echo "fresh-root: RELEASE is bookworm, trixie or bullseye, not '$release'" >&2
	exit 2
	;;
esac
[ "$(id -u)" = 0 ] || { echo "fresh-root: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${UNITMETER_VM_CACHE:-/var/tmp/unitmeter-vm}
pristine=$cache/fresh-$release
mkdir -p "$cache"
. "$here/apt-private.sh"

if [ ! -f "$pristine/.complete" ]; then
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	mirror=$(mirror_uris | tr ' ' '\n' | grep -v -- '-security' | grep -E '/debian/?$' | head -1)
	[ -n "$mirror" ] || { echo "fresh-root: no Debian mirror in /etc/apt" >&2; exit 1; }
	rm -rf "$pristine.partial"
	echo "fresh-root: debootstrap --variant=minbase $release from $mirror"
	debootstrap --variant=minbase "$release" "$pristine.partial" "$mirror" \
		>"$cache/fresh-$release.log" 2>&1 ||
		{ tail -20 "$cache/fresh-$release.log"; exit 1; }
	# what a user runs before the README: the tools to clone and to start make
	chroot "$pristine.partial" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update -qq && apt-get install -y -qq make git >/dev/null' \
		>>"$cache/fresh-$release.log" 2>&1 ||
		{ tail -20 "$cache/fresh-$release.log"; exit 1; }
	chroot "$pristine.partial" apt-get clean
	touch "$pristine.partial/.complete"
	mv "$pristine.partial" "$pristine"
fi

root=$(mktemp -d "$cache/fresh-$release-run.XXXXXX")
cleanup() {
	local proc
	# what the run left behind (a daemon a package started, a test's cluster): its root is ours
	for proc in /proc/[0-9]*; do
		[ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -9 "${proc#/proc/}" 2>/dev/null
	done
	# lazily: a process still exiting may hold a mount; the copy goes with the mounts
	for m in dev sys proc; do umount -R -l "$root/$m" 2>/dev/null || true; done
	[ "${FRESH_ROOT_KEEP:-0}" = 1 ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT
cp -a "$pristine/." "$root/"
# the tree as a clone has it: tracked files and new ones git does not ignore, no build output
mkdir -p "$root/root/unitmeter"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$root/root/unitmeter" -xf -
for f in ${FRESH_ROOT_COPY:-}; do cp "$f" "$root/root/"; done
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"
# /sys and /dev with the mounts below them (the cgroup hierarchies, tracefs where this machine
# has it mounted), as a booted system has them; make mounts tracefs where it is absent
mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
echo "fresh-root: $release in $root: $command"
chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	bash -c "cd /root/unitmeter && $command"
