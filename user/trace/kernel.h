/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers the BPF programs, read from its BTF and with libbpf's feature
 * probes (never from its version number), and which build of the programs it takes:
 * - the per-CPU build, where mm counters are per CPU (mm->rss_stat is percpu_counter[]) and every
 *   newer feature it uses is there;
 * - the thread-cache build, for kernels whose mm counters are atomics with per-thread caches
 *   (before 6.2), every cache read where it changes, at the end of each page fault, by programs
 *   with the BPF of 5.17 (fetching atomics, bpf_loop, task storage, cookies);
 * - the baseline build, the same counters read by programs with what 5.10's BPF offers: one
 *   lock where the others have atomics.
 */
#ifndef UM_KERNEL_H
#define UM_KERNEL_H

#include <stdbool.h>
#include <stdio.h>
#include "trace/fault_hook.h"

/* Where the programs see a tracked thread's writes, forks and exits (bpf/syscalls.bpf.c). */
enum syscall_hooks {
	SYSCALL_HOOKS_FUNCTIONS = 0, /* fexit/fentry of vfs_write(v), kernel_clone, do_exit */
	SYSCALL_HOOKS_TRACEPOINTS,   /* sys_enter/sys_exit: every syscall of the node pays */
};

enum kernel_build {
	KERNEL_BUILD_NONE = 0, /* the kernel cannot be served: kernel_features.refusal says why */
	KERNEL_BUILD_PER_CPU,
	KERNEL_BUILD_THREAD_CACHE,
	KERNEL_BUILD_BASELINE,
};

struct kernel_features {
	char release[65];
	bool root;               /* root, or CAP_BPF and CAP_PERFMON */
	bool btf;                /* /sys/kernel/btf/vmlinux */
	bool tracefs;            /* kmem:rss_stat under /sys/kernel/tracing */
	char lockdown[32];       /* the lockdown mode in force: none, integrity, confidentiality */
	bool ringbuf;            /* BPF_MAP_TYPE_RINGBUF (5.8) */
	bool per_cpu_mm_counters;/* mm_struct.rss_stat is an array of percpu_counter (6.2) */
	bool thread_rss_caches;  /* task_struct.rss_stat: each thread caches its RSS changes */
	bool fetch_atomics;      /* atomic fetch-add, exchange, compare-exchange in BPF (5.12) */
	bool task_storage;       /* BPF_MAP_TYPE_TASK_STORAGE (5.11) */
	bool current_task_btf;   /* bpf_get_current_task_btf (5.11) */
	bool attach_cookie;      /* bpf_get_attach_cookie (5.15) */
	bool bpf_loop;           /* the bpf_loop helper (5.17) */
	bool percpu_lookup;      /* bpf_map_lookup_percpu_elem (5.19) */
	bool kfunc_rdonly_cast;  /* kfunc bpf_rdonly_cast (6.2) */
	bool uprobe_multi;       /* multi-uprobe links, BPF_TRACE_UPROBE_MULTI (6.6) */
	bool fexit;              /* fexit programs attach (ftrace direct calls; tried once a boot) */
	bool syscall_functions;  /* vfs_write, vfs_writev, kernel_clone, do_exit in the BTF */
	enum fault_hook fault_hook; /* what attaches to handle_mm_fault's end (tried where needed) */
	enum syscall_hooks syscall_hooks; /* the functions where fexit attaches to them all */
	enum kernel_build build;
	char refusal[512];       /* one line: what is missing and what would serve */
	char forced[160];        /* the UNITMETER_* settings that overrode a choice, or "" */
};

/*
 * Read everything, once per process; never fails (what cannot be read counts as absent). What
 * the probes and the kernel's BTF say is kept per boot in /run/unitmeter (root only).
 */
void kernel_features_read(struct kernel_features *k);
/* Probe afresh, not from the per-boot record (`unitmeter check`); call before the first read. */
void kernel_features_fresh(void);

/* Set build (or refusal: the first thing missing, and what would serve) from the features. */
void kernel_choose_build(struct kernel_features *k);

const char *kernel_build_name(enum kernel_build build);
/* "functions" or "tracepoints" (the manifest's run.tracing.syscall_hooks) */
const char *syscall_hooks_name(enum syscall_hooks hooks);

/*
 * Whether the build's programs have the BPF of 5.17, which the baseline's lack
 * (bpf/compat.bpf.h): attach cookies, task storage, fetching atomics, bpf_loop.
 */
bool kernel_build_has_bpf_of_5_17(enum kernel_build build);

/* `unitmeter check`: the features, the build chosen and whether figures are exact, as text. */
void kernel_features_print(FILE *out, const struct kernel_features *k);

#endif
