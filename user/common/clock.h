/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* CLOCK_MONOTONIC in ns: the clock of bpf_ktime_get_ns(), so loader and programs share times. */
#ifndef UM_CLOCK_H
#define UM_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t um_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif
