// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* callstorm: call fit_unit(), a function of a few microseconds, --calls times (the per-call cost
 * of unit probes). Truth: the number of calls, and the loop's own wall time, so a tracer's
 * per-call cost is read the same way for every tracer, without its start-up or tear-down. */
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
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	double sum = 0;

	for (long i = 0; i < calls; i++)
		sum += fit_unit(work);
	printf("{\"calls\": %ld, \"checksum\": %.1f, \"loop_s\": %.6f}\n", calls,
	       sum > 0 ? 1.0 : 0.0, (clock_ns(CLOCK_MONOTONIC) - start) / 1e9);
	return 0;
}
