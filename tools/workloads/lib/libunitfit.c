// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A fit function in a shared library, for units in a library loaded with dlopen() after start. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Touch `mib` MiB for a millisecond, then release them. */
__attribute__((noinline)) long lib_fit_unit(long mib)
{
	size_t bytes = (size_t)mib << 20;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long sum = 0;

	if (p == MAP_FAILED)
		return -1;
	for (size_t off = 0; off < bytes; off += 4096)
		p[off] = 1;
	usleep(1000);
	for (size_t off = 0; off < bytes; off += 4096)
		sum += p[off];
	munmap(p, bytes);
	return sum;
}
