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

# The mirror's main archive: the first URI that is Debian's and not its security archive.
mirror_main_uri() {
	mirror_uris | tr ' ' '\n' | sort -u | grep -v -- '-security' | grep -E '/debian/?$' | head -1 || true
}

apt_private() {
	local cache=$1 arch=$2 main_uri security_uri state keyring suite
	main_uri=$(mirror_main_uri)
	security_uri=$(mirror_uris | tr ' ' '\n' | sort -u | grep -- '-security' | head -1 || true)
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
	apt_opts=(-o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$state/lists" -o APT::Sandbox::User=root
		-o APT::Architectures::=amd64 -o APT::Architectures::="$arch")
	apt_state_refresh "$state" Packages "${apt_opts[@]}"
}

# The source packages of Debian 12 and 13 (apt-get source --download-only, hash-checked against
# the suites' Sources): a state of its own. Sets src_opts. usage: apt_private_src CACHE
apt_private_src() {
	local cache=$1 state=$1/apt-src main_uri suite
	main_uri=$(mirror_main_uri)
	[ -n "$main_uri" ] || { echo "apt-private: no Debian mirror in /etc/apt" >&2; return 1; }
	mkdir -p "$state/lists/partial"
	for suite in bookworm trixie; do
		echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $main_uri $suite main"
	done >"$state/sources.list.$$"
	src_opts=(-o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$state/lists" -o APT::Sandbox::User=root)
	apt_state_refresh "$state" Sources "${src_opts[@]}"
}

# STATE/sources.list.$$ made the state's list: lists read for other sources (an older cache)
# are read again, and lists older than a day too; a fresh cache reads them once.
# usage: apt_state_refresh STATE Packages|Sources APT_OPTION...
apt_state_refresh() {
	local state=$1 kind=$2
	shift 2
	if ! cmp -s "$state/sources.list.$$" "$state/sources.list"; then
		mv "$state/sources.list.$$" "$state/sources.list"
		rm -f "$state/lists/"*_"$kind"*
	else
		rm -f "$state/sources.list.$$"
	fi
	if ! find "$state/lists" -maxdepth 1 -name "*_${kind}*" -mmin -1440 2>/dev/null | grep -q .; then
		apt-get "$@" update -qq >/dev/null
	fi
}

