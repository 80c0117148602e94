// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Output: bytes returned by write-family syscalls on regular files. The fd's type is checked on
 * entry (the file table may change before exit); the byte count is known only on exit.
 */
#include "state.bpf.h"

#define UM_S_IFMT 00170000
#define UM_S_IFREG 0100000

static __always_inline bool fd_is_regular_file(unsigned long fd)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;
	umode_t mode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return false;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return false;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	return (mode & UM_S_IFMT) == UM_S_IFREG;
}

static __always_inline void write_enter(unsigned long fd)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, one = 1;

	if (!bpf_map_lookup_elem(&procs, &tgid) || !fd_is_regular_file(fd))
		return;
	bpf_map_update_elem(&pending_write, &tid, &one, BPF_ANY);
}

static __always_inline void write_exit(long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct um_proc *proc;

	if (!bpf_map_lookup_elem(&pending_write, &tid))
		return;
	bpf_map_delete_elem(&pending_write, &tid);
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc || ret <= 0)
		return;
	__sync_fetch_and_add(&proc->output_bytes, ret);
	UNIT_ADD(proc->units[0], output_bytes, ret);
	UNIT_ADD(proc->units[1], output_bytes, ret);
}

#define WRITE_SYSCALL(name)                                                         \
	SEC("tracepoint/syscalls/sys_enter_" #name)                                \
	int handle_##name##_enter(struct trace_event_raw_sys_enter *ctx)           \
	{                                                                          \
		write_enter(ctx->args[0]);                                         \
		return 0;                                                          \
	}                                                                          \
	SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
	int handle_##name##_exit(struct trace_event_raw_sys_exit *ctx)             \
	{                                                                          \
		write_exit(ctx->ret);                                              \
		return 0;                                                          \
	}

WRITE_SYSCALL(write)
WRITE_SYSCALL(pwrite64)
WRITE_SYSCALL(writev)
WRITE_SYSCALL(pwritev)
WRITE_SYSCALL(pwritev2)
