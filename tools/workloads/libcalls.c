// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcalls N: calls glibc's realpath N times, as a program built now does: its default version
 * (realpath@@GLIBC_2.3), one of two versions glibc exports at different addresses. The truth is
 * the number of calls: {"calls": N}.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	char resolved[PATH_MAX];

	for (int i = 0; i < n; i++)
		if (!realpath("/tmp/../tmp", resolved))
			return 1;
	printf("{\"calls\": %d}\n", n);
	return 0;
}
