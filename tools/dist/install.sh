#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Install the portable unitmeter under a prefix: ./install.sh [PREFIX]   (default /usr/local)
# The layout is the tarball's own (bin/, lib/unitmeter/, share/): unitmeter finds its marker
# library and Python bootstrap at ../lib/unitmeter/ from its binary, so it also runs from where
# the tarball was unpacked, without installing.
set -eu
prefix=${1:-/usr/local}
here=$(cd "$(dirname "$0")" && pwd)
for d in bin lib/unitmeter/python/unitmeter_boot share/man/man1 share/bash-completion/completions \
	share/unitmeter; do
	mkdir -p "$prefix/$d"
done
install -m 755 "$here/bin/unitmeter" "$prefix/bin/unitmeter"
install -m 644 "$here/lib/unitmeter/libunitmeter_marker.so" "$prefix/lib/unitmeter/"
install -m 644 "$here"/lib/unitmeter/python/unitmeter_boot/*.py "$prefix/lib/unitmeter/python/unitmeter_boot/"
install -m 644 "$here/share/man/man1/unitmeter.1.gz" "$prefix/share/man/man1/"
install -m 644 "$here/share/bash-completion/completions/unitmeter" \
	"$prefix/share/bash-completion/completions/"
cp -R "$here/share/unitmeter/." "$prefix/share/unitmeter/"
echo "unitmeter installed under $prefix: $prefix/bin/unitmeter check   (as root) says what this kernel offers"
