// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pingpong: two threads hand a byte back and forth over pipes --rounds times (a context-switch
 * storm). Truth: the rounds and the process's CPU clock. */
#include <pthread.h>
#include "truth.h"

static int ab[2], ba[2];
static long rounds;

static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	char c = 'x';

	rounds = arg_long(argc, argv, "--rounds", 100000);
	if (pipe(ab) || pipe(ba))
		return 1;
	pthread_create(&t, NULL, echo, NULL);
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	printf("{\"rounds\": %ld, \"process_cpu_ns\": %llu}\n", rounds,
	       (unsigned long long)clock_ns(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
