// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* callstorm: call fit_unit(), a function of a few microseconds, --calls times (the per-call cost
 * of unit probes). Truth: the number of calls. */
#include "truth.h"

__attribute__((noinline, used)) double fit_unit(int n)
{
	volatile double x = 1.0;

	for (int i = 0; i < n; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

int main(int argc, char **argv)
{
	long calls = arg_long(argc, argv, "--calls", 1000000);
	int work = (int)arg_long(argc, argv, "--work", 1000);
	double sum = 0;

	for (long i = 0; i < calls; i++)
		sum += fit_unit(work);
	printf("{\"calls\": %ld, \"checksum\": %.1f}\n", calls, sum > 0 ? 1.0 : 0.0);
	return 0;
}
