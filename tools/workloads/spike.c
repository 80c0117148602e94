// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spike: touch --mib MiB of anonymous memory, hold it for --hold-ms, unmap it, wait --gap-ms;
 * --repeat times.
 * Truth: VmRSS before and while holding each spike, and how long from the first spike held to
 * the last one's unmap (CLOCK_MONOTONIC). A poller at 50 ms misses a 2 ms spike.
 */
#include "truth.h"

int main(int argc, char **argv)
{
	long mib = arg_long(argc, argv, "--mib", 64);
	long hold_ms = arg_long(argc, argv, "--hold-ms", 2);
	long repeat = arg_long(argc, argv, "--repeat", 1);
	long gap_ms = arg_long(argc, argv, "--gap-ms", 0);
	long long baseline = self_rss_bytes(), peak = 0;
	uint64_t first_held_ns = 0, last_unmap_ns = 0;

	for (long r = 0; r < repeat; r++) {
		char *p = touch_anon(mib * MIB);
		long long held = self_rss_bytes();

		if (held > peak)
			peak = held;
		if (!r)
			first_held_ns = clock_ns(CLOCK_MONOTONIC);
		sleep_ms(hold_ms);
		last_unmap_ns = clock_ns(CLOCK_MONOTONIC);
		munmap(p, mib * MIB);
		if (gap_ms)
			sleep_ms(gap_ms);
	}
	printf("{\"spike_bytes\": %ld, \"baseline_rss_bytes\": %lld, \"peak_rss_bytes\": %lld, "
	       "\"repeat\": %ld, \"held_span_ns\": %llu}\n", mib * (long)MIB, baseline, peak, repeat,
	       (unsigned long long)(last_unmap_ns - first_held_ns));
	return 0;
}
