#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Fail unless two bpftool skeletons declare the same struct (programs, maps, links and global
# sections at the same offsets), names aside: the loader opens the second object through the
# first one's struct (user/trace/load.c).
# usage: skel-layout.sh FIRST.skel.h FIRST_NAME SECOND.skel.h SECOND_NAME
set -eu
layout() { # the skeleton struct's declaration, with its name made neutral
	sed -n "/^struct $2 {/,/^};/p" "$1" | sed "s/$2/SKEL/g"
}
a=$(layout "$1" "$2")
b=$(layout "$3" "$4")
if [ -z "$a" ] || [ "$a" != "$b" ]; then
	echo "skel-layout: $3 does not match $1:" >&2
	printf '%s\n' "$a" >/tmp/skel-layout.$$.a
	printf '%s\n' "$b" | diff /tmp/skel-layout.$$.a - >&2 || true
	rm -f /tmp/skel-layout.$$.a
	exit 1
fi
