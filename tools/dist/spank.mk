# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The SPANK plugin from the portable tarball's source, built against the site's SLURM: SLURM loads
# only plugins built for its own release, so the tarball cannot carry a binary of it.
#
#   make SLURM_PREFIX=/opt/slurm      the prefix whose include/slurm/spank.h is the site's
#                                     (default /usr: the distribution's slurm-devel/libslurm-dev)
#
# Then install unitmeter_spank.so where that SLURM keeps its plugins and add to plugstack.conf:
#   optional /path/to/unitmeter_spank.so unitmeter=/path/to/bin/unitmeter
SLURM_PREFIX ?= /usr
CC ?= cc
CFLAGS ?= -O2

unitmeter_spank.so: unitmeter_spank.c
	$(CC) -std=gnu11 $(CFLAGS) -D_GNU_SOURCE -Wall -Wextra -I$(SLURM_PREFIX)/include -shared -fPIC \
		$< -o $@ -ldl

clean:
	rm -f unitmeter_spank.so
.PHONY: clean
