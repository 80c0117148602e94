// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The two ways to hook the end of a page fault, with empty bodies: the loader attaches each in
 * turn to learn which this kernel takes (user/trace/fault_hook.c) before it loads the programs
 * that need one (rss.bpf.c: handle_fault_done, handle_fault_done_kretprobe). A separate object,
 * not linked into unitmeter.bpf.o: trying it costs one small load, not the whole set.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fexit/handle_mm_fault")
int BPF_PROG(try_fexit)
{
	return 0;
}

SEC("kretprobe/handle_mm_fault")
int BPF_KRETPROBE(try_kretprobe)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
