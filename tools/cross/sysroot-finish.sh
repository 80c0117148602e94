# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced (bash) by the sysroot scripts (tools/cross/sysroot.sh, tools/dist/sysroot.sh): the
# unpacked ROOT.partial made ROOT, whole, so a build reading the old one is not torn.
# usage: sysroot_finish ROOT WANT      WANT: what it was made from, kept in ROOT/.complete;
#                                      prints ROOT

sysroot_finish() {
	local root=$1 want=$2 link rel
	# absolute links (a -dev package's libfoo.so -> /lib/...) would point into this machine: made
	# relative, so they resolve inside the sysroot
	find "$root.partial" -type l -lname '/*' | while read -r link; do
		rel=${link#"$root.partial"}
		ln -sfn "$(realpath -sm --relative-to="$(dirname "$rel")" "$(readlink "$link")")" "$link"
	done
	echo "$want" >"$root.partial/.complete"
	rm -rf "$root.old"
	[ ! -d "$root" ] || mv "$root" "$root.old"
	mv "$root.partial" "$root"
	rm -rf "$root.old"
	echo "$root"
}
