#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# user/'s stages, earliest first (the Makefile's USER_STAGES): a file may include its own
# stage's headers and an earlier stage's, never a later one's. Data flows one way through the
# pipeline, and so do the dependencies. Prints each include that climbs; fails if any does.
#
# usage: layer-check.sh STAGE...      (run from the source tree's top)
set -u
stages=("$@")
rank() {
	for i in "${!stages[@]}"; do
		[ "${stages[$i]}" = "$1" ] && { echo "$i"; return; }
	done
	echo -1
}
bad=0
for ((s = 0; s < ${#stages[@]}; s++)); do
	stage=${stages[$s]}
	for file in user/"$stage"/*.c user/"$stage"/*.h user/"$stage"/*.cc; do
		[ -e "$file" ] || continue
		while IFS=: read -r line included; do
			to=${included%%/*}
			r=$(rank "$to")
			if [ "$r" -gt "$s" ]; then
				echo "$file:$line: includes $included: $stage (stage $s) may not include $to (stage $r)"
				bad=1
			fi
		done < <(grep -no '^#include "[a-z_]*/[^"]*"' "$file" | sed -E 's/:#include "/:/; s/"$//')
	done
done
[ "$bad" = 0 ] || echo "layer-check: a stage includes a later one (order: ${stages[*]})"
exit "$bad"
