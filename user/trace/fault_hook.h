/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The hook on the end of a page fault, where a kernel whose threads cache their RSS changes is
 * read (the thread-cache and baseline builds): chosen by attaching it, since the function is in
 * BTF either way and only the attach says whether the kernel can take it (fexit needs ftrace
 * direct calls: arm64 has them from 6.4).
 */
#ifndef UM_FAULT_HOOK_H
#define UM_FAULT_HOOK_H

#include <stdbool.h>
#include <stdio.h>

enum fault_hook {
	FAULT_HOOK_NONE = 0, /* neither attaches: the builds with thread caches cannot be exact */
	FAULT_HOOK_FEXIT,    /* fexit/handle_mm_fault: a direct call from the function's end */
	FAULT_HOOK_KRETPROBE /* kretprobe/handle_mm_fault: a trap at the return, slower per fault */
};

/*
 * Whether an fexit program attaches here (ftrace direct calls: a trampoline), tried on
 * handle_mm_fault with an empty program detached at once; root. Every fexit and fentry of the
 * programs needs the same, so the one trial answers for them all.
 */
bool fault_hook_fexit_attaches(void);

/* The hook where the thread caches need one: fexit where it attaches (fexit_attaches, from
 * the trial above), else a kretprobe, tried the same way; root. */
enum fault_hook fault_hook_try(bool fexit_attaches);

const char *fault_hook_name(enum fault_hook hook);

/*
 * What each hook adds to a page fault, with an empty body: the mechanism's own cost (fexit's
 * trampoline, kretprobe's trap), which the builds with thread caches pay on every fault of the
 * machine.
 * Faults of a fresh anonymous mapping timed with the hook attached and without, the fastest of
 * several rounds each; NAN where a hook does not attach (fault_ns too where neither does). root.
 */
struct fault_hook_cost {
	double fault_ns;		  /* one fault, no hook */
	double added_ns[FAULT_HOOK_KRETPROBE + 1]; /* by hook; [FAULT_HOOK_NONE] unused */
	long faults;			  /* faults a round */
};
void fault_hook_measure(struct fault_hook_cost *c);
/* One line of `unitmeter check`: the fault, and each hook's addition or its refusal. */
void fault_hook_cost_print(FILE *out, const struct fault_hook_cost *c);

#endif
