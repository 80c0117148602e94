# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced (bash): a private apt state under the cache, listing Debian's suites from the mirror
# this machine's apt already uses, so the system's apt configuration is never touched and
# nothing is installed. Sets apt_opts for apt-get/apt-cache; refreshes lists older than a day.
#
# usage: apt_private CACHE ARCH        ARCH: amd64, or arm64 (amd64 and it)

# The mirror's base URIs, from deb822 sources or a classic sources.list.
mirror_uris() {
	sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
	sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' \
		/etc/apt/sources.list 2>/dev/null || true
}

apt_private() {
	local cache=$1 arch=$2 uris main_uri security_uri state keyring suite
	uris=$(mirror_uris | tr ' ' '\n' | sort -u)
	main_uri=$(echo "$uris" | grep -v -- '-security' | grep -E '/debian/?$' | head -1 || true)
	security_uri=$(echo "$uris" | grep -- '-security' | head -1 || true)
	if [ -z "$main_uri" ]; then
		echo "apt-private: no Debian mirror in /etc/apt (sources.list or sources.list.d/*.sources)" >&2
		return 1
	fi
	# one state per architecture: the lists differ, and a fresh amd64 state is not read again
	state=$cache/apt
	[ "$arch" = amd64 ] || state=$cache/apt-$arch
	mkdir -p "$state/lists/partial"
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	{
		# non-free: the NVIDIA driver's libraries, downloaded (never installed) by the GPU tests
		for suite in bullseye bookworm bookworm-updates trixie; do
			echo "deb [signed-by=$keyring] $main_uri $suite main non-free"
		done
		if [ -n "$security_uri" ]; then
			for suite in bullseye-security bookworm-security trixie-security; do
				echo "deb [signed-by=$keyring] $security_uri $suite main"
			done
		fi
	} >"$state/sources.list.$$"
	# lists read for other sources (an older cache) are read again
	if ! cmp -s "$state/sources.list.$$" "$state/sources.list"; then
		mv "$state/sources.list.$$" "$state/sources.list"
		rm -f "$state/lists/"*_Packages*
	else
		rm -f "$state/sources.list.$$"
	fi
	apt_opts=(-o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$state/lists" -o APT::Sandbox::User=root
		-o APT::Architectures::=amd64 -o APT::Architectures::="$arch")
	# Package lists older than a day are read again; a fresh cache reads them once.
	if ! find "$state/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null | grep -q .; then
		apt-get "${apt_opts[@]}" update -qq >/dev/null
	fi
}
