// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdbool.h>
#include <bpf/libbpf.h>
#include "fault_hook.skel.h"
#include "trace/fault_hook.h"

/* Load only the program of this hook and attach it: whether this kernel takes it. */
static bool attaches(bool fexit)
{
	struct fault_hook_bpf *skel = fault_hook_bpf__open();
	struct bpf_link *link = NULL;

	if (!skel)
		return false;
	bpf_program__set_autoload(skel->progs.try_fexit, fexit);
	bpf_program__set_autoload(skel->progs.try_kretprobe, !fexit);
	if (fault_hook_bpf__load(skel) == 0)
		link = bpf_program__attach(fexit ? skel->progs.try_fexit : skel->progs.try_kretprobe);
	bpf_link__destroy(link);
	fault_hook_bpf__destroy(skel);
	return link != NULL;
}

enum fault_hook fault_hook_try(void)
{
	/* a refused attach is an answer here, not an error: libbpf's warning is not shown */
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	enum fault_hook hook = attaches(true)  ? FAULT_HOOK_FEXIT :
			       attaches(false) ? FAULT_HOOK_KRETPROBE : FAULT_HOOK_NONE;

	libbpf_set_print(print);
	return hook;
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
