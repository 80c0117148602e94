#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The portable build's promise, checked on its files: every glibc symbol version they ask is at
# most the floor (RHEL 8's glibc, 2.28), and the only libraries they load are glibc's own, which
# every glibc distribution has. readelf reads either architecture's ELF.
#
# usage: glibc-floor.sh FILE...      prints each file's highest version; fails on any above
set -euo pipefail

floor=2.28
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
status=0
for f in "$@"; do
	versions=$(readelf --dyn-syms -W "$f" | grep -o '@GLIBC_[0-9.]*' | sed 's/@GLIBC_//' | sort -uV)
	highest=$(echo "$versions" | tail -1)
	above=$(readelf --dyn-syms -W "$f" | awk -v floor="$floor" '
		match($0, /@GLIBC_[0-9.]+/) {
			v = substr($0, RSTART + 7, RLENGTH - 7); split(v, a, "."); split(floor, b, ".")
			if (a[1] > b[1] || (a[1] == b[1] && a[2] + 0 > b[2] + 0)) print $8
		}' | sort -u)
	needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	others=$(echo "$needed" | grep -Ev "$allowed" || true)
	echo "$f: glibc symbols up to ${highest:-none} (floor $floor); loads $(echo $needed)"
	if [ -n "$above" ]; then
		echo "  above the floor: $(echo $above)" >&2
		status=1
	fi
	if [ -n "$others" ]; then
		echo "  loads libraries that are not glibc's: $(echo $others)" >&2
		status=1
	fi
done
exit $status
