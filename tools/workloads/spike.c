// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * spike: touch --mib MiB of anonymous memory, hold it for --hold-ms, unmap it, wait --gap-ms;
 * --repeat times.
 * Truth: VmRSS before and while holding each spike. A poller at 50 ms misses a 2 ms spike.
 */
#include "truth.h"

int main(int argc, char **argv)
{
	long mib = arg_long(argc, argv, "--mib", 64);
	long hold_ms = arg_long(argc, argv, "--hold-ms", 2);
	long repeat = arg_long(argc, argv, "--repeat", 1);
	long gap_ms = arg_long(argc, argv, "--gap-ms", 0);
	long long baseline = self_rss_bytes(), peak = 0;

	for (long r = 0; r < repeat; r++) {
		char *p = touch_anon(mib * MIB);
		long long held = self_rss_bytes();

		if (held > peak)
			peak = held;
		sleep_ms(hold_ms);
		munmap(p, mib * MIB);
		if (gap_ms)
			sleep_ms(gap_ms);
	}
	printf("{\"spike_bytes\": %ld, \"baseline_rss_bytes\": %lld, \"peak_rss_bytes\": %lld, "
	       "\"repeat\": %ld}\n", mib * (long)MIB, baseline, peak, repeat);
	return 0;
}
