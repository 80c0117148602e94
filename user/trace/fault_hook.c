// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>
#include "fault_hook.skel.h"
#include "trace/fault_hook.h"

/* Load only the program of this hook and attach it: the link, or NULL where the kernel refuses
 * it (*skel then destroyed). */
static struct bpf_link *attach_hook(struct fault_hook_bpf **skel, bool fexit)
{
	struct bpf_link *link = NULL;

	*skel = fault_hook_bpf__open();
	if (!*skel)
		return NULL;
	bpf_program__set_autoload((*skel)->progs.try_fexit, fexit);
	bpf_program__set_autoload((*skel)->progs.try_kretprobe, !fexit);
	if (fault_hook_bpf__load(*skel) == 0)
		link = bpf_program__attach(fexit ? (*skel)->progs.try_fexit
						 : (*skel)->progs.try_kretprobe);
	if (!link) {
		fault_hook_bpf__destroy(*skel);
		*skel = NULL;
	}
	return link;
}

static bool attaches(bool fexit)
{
	struct fault_hook_bpf *skel;
	struct bpf_link *link = attach_hook(&skel, fexit);

	bpf_link__destroy(link);
	fault_hook_bpf__destroy(skel);
	return link != NULL;
}

/* A refused attach is an answer here, not an error: libbpf's warning is not shown. */
static bool attaches_quietly(bool fexit)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	bool ok = attaches(fexit);

	libbpf_set_print(print);
	return ok;
}

bool fault_hook_fexit_attaches(void)
{
	return attaches_quietly(true);
}

enum fault_hook fault_hook_try(bool fexit_attaches)
{
	return fexit_attaches		? FAULT_HOOK_FEXIT :
	       attaches_quietly(false) ? FAULT_HOOK_KRETPROBE : FAULT_HOOK_NONE;
}

const char *fault_hook_name(enum fault_hook hook)
{
	switch (hook) {
	case FAULT_HOOK_FEXIT:
		return "fexit";
	case FAULT_HOOK_KRETPROBE:
		return "kretprobe";
	default:
		return "none";
	}
}

#define MEASURED_BYTES (32L << 20)
#define ROUNDS 5

/* One round: the faults of a fresh mapping of MEASURED_BYTES, in ns a fault; NAN where memory
 * cannot be mapped. Huge pages off: each fault one page. */
static double fault_ns(long page)
{
	volatile char *at = mmap(NULL, MEASURED_BYTES, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct timespec a, b;

	if (at == MAP_FAILED)
		return NAN;
	madvise((void *)at, MEASURED_BYTES, MADV_NOHUGEPAGE);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long off = 0; off < MEASURED_BYTES; off += page)
		at[off] = 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	munmap((void *)at, MEASURED_BYTES);
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (MEASURED_BYTES / page);
}

void fault_hook_measure(struct fault_hook_cost *c)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	long page = sysconf(_SC_PAGESIZE);
	/* by hook, FAULT_HOOK_NONE the unhooked faults: the fastest round of each */
	double best[FAULT_HOOK_KRETPROBE + 1] = { NAN, NAN, NAN };
	bool refused[FAULT_HOOK_KRETPROBE + 1] = { false };

	c->faults = MEASURED_BYTES / page;
	/* rounds in turn, none, fexit, kretprobe, so a drift of the machine's speed reaches each;
	 * a hook attached anew for each round (5.10 attaches a tracing program once only) */
	for (int r = 0; r < ROUNDS; r++) {
		for (int h = FAULT_HOOK_NONE; h <= FAULT_HOOK_KRETPROBE; h++) {
			struct fault_hook_bpf *skel = NULL;
			struct bpf_link *link = NULL;
			double ns;

			if (refused[h])
				continue;
			if (h != FAULT_HOOK_NONE) {
				link = attach_hook(&skel, h == FAULT_HOOK_FEXIT);
				if (!link) {
					refused[h] = true;
					continue;
				}
			}
			ns = fault_ns(page);
			if (!(ns >= best[h]))
				best[h] = ns;
			bpf_link__destroy(link);
			fault_hook_bpf__destroy(skel);
		}
		if (refused[FAULT_HOOK_FEXIT] && refused[FAULT_HOOK_KRETPROBE])
			break;
	}
	libbpf_set_print(print);
	c->fault_ns = refused[FAULT_HOOK_FEXIT] && refused[FAULT_HOOK_KRETPROBE] ? NAN
										 : best[FAULT_HOOK_NONE];
	c->added_ns[FAULT_HOOK_NONE] = NAN;
	for (int h = FAULT_HOOK_FEXIT; h <= FAULT_HOOK_KRETPROBE; h++)
		c->added_ns[h] = refused[h] ? NAN : best[h] - c->fault_ns;
}

void fault_hook_cost_print(FILE *out, const struct fault_hook_cost *c)
{
	fprintf(out, "  %-44s ", "a page fault; what a hook adds (empty body)");
	if (isnan(c->fault_ns)) {
		fputs("neither hook attaches\n", out);
		return;
	}
	fprintf(out, "%.0f ns", c->fault_ns);
	for (int h = FAULT_HOOK_FEXIT; h <= FAULT_HOOK_KRETPROBE; h++) {
		fprintf(out, "; %s ", fault_hook_name(h));
		if (isnan(c->added_ns[h]))
			fputs("refused", out);
		else
			fprintf(out, "%+.0f ns (%.2fx)", c->added_ns[h],
				(c->fault_ns + c->added_ns[h]) / c->fault_ns);
	}
	fprintf(out, " (fastest of %d rounds of %ld faults each)\n", ROUNDS, c->faults);
}
