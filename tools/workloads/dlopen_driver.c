// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dlopen_driver LIB N MIB: sleep, then dlopen LIB (which was not mapped when tracing began) and
 * call its lib_fit_unit(MIB) N times. Truth: the number of calls and the bytes each touched.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long (*fit)(long);
	void *lib;
	long n, mib;

	if (argc < 4)
		return 2;
	n = atol(argv[2]);
	mib = atol(argv[3]);
	usleep(50000);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen_driver: %s\n", dlerror());
		return 1;
	}
	*(void **)&fit = dlsym(lib, "lib_fit_unit");
	for (long i = 0; i < n; i++)
		if (fit(mib) < 0)
			return 1;
	printf("{\"calls\": %ld, \"bytes\": %ld}\n", n, mib << 20);
	return 0;
}
