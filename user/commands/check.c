// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* `unitmeter check`: what the kernel offers, the build it takes, and a trial of the programs. */
#include <stdio.h>
#include "commands/check.h"
#include "common/log.h"
#include "trace/fault_hook.h"
#include "trace/kernel.h"
#include "trace/tracer.h"

static int ignore_record(void *ctx, void *data, size_t size, const struct gpu_nvml_unit *nvml)
{
	(void)ctx;
	(void)data;
	(void)size;
	(void)nvml;
	return 0;
}

int command_check(FILE *out)
{
	struct tracer_config cfg = { .own_programs = true };
	struct kernel_features k;
	struct tracer *t = NULL;
	const char *how;
	int err;

	kernel_features_fresh();
	kernel_features_read(&k);
	kernel_features_print(out, &k);
	if (k.root) {
		struct fault_hook_cost cost;

		/* measured here only: a run pays for no trial it does not need */
		fault_hook_measure(&cost);
		fault_hook_cost_print(out, &cost);
	}
	if (k.build == KERNEL_BUILD_NONE) {
		fprintf(out, "verdict: unitmeter cannot trace here\n");
		fflush(out);
		um_err("%s", k.refusal);
		return 2;
	}
	fflush(out);
	err = tracer__open(&t, &cfg, ignore_record, NULL);
	if (!err)
		err = tracer__attach(t);
	tracer__destroy(t);
	if (err) {
		fprintf(out, "verdict: the programs did not load or attach here (the line above says "
			"why)\n");
		return 2;
	}
	fprintf(out, "trial: loaded and attached, then detached\n");
	how = k.thread_rss_caches ? "each thread's RSS cache is read at the end of every fault" :
				    "mm counters are read at each change";
	if (k.build == KERNEL_BUILD_BASELINE)
		/* docs/limitations.md: the baseline's shared counters are under one lock */
		fprintf(out, "verdict: unitmeter works here; every figure is exact (%s), but for a "
			"peak where an update could not have the baseline build's lock in time "
			"(counted in the manifest's run.tracing.lock_timeouts; seen only in emulated "
			"machines)\n", how);
	else
		fprintf(out, "verdict: unitmeter works here; every figure is exact (%s)\n", how);
	return 0;
}
