// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The system calls unitmeter watches, from the raw sys_enter/sys_exit tracepoints:
 * - write family: bytes returned on regular files (output_bytes). The fd's type is checked on
 *   entry, since the file table may change before exit; the count is known only on exit.
 * - fork family: a tracked thread inside clone/fork/vfork gets an empty pending_mm slot, so the
 *   first unknown mm it touches is taken as its child's copy (rss.bpf.c).
 * - exit and exit_group: the pages the thread's CPU holds for it are charged now. Its final
 *   switch-out comes after the kernel has woken the thread that joins it, which may close a
 *   unit (or open the next) first; the baseline cannot take another CPU's pages at that edge.
 * Two raw tracepoints instead of one classic tracepoint per syscall: a classic tracepoint link
 * takes ~70 ms to close, which made start-up plus tear-down over a second.
 */
#include "model.bpf.h"

#if defined(__TARGET_ARCH_x86)
/* x86-64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl) */
#define NR_write 1
#define NR_pwrite64 18
#define NR_writev 20
#define NR_clone 56
#define NR_fork 57
#define NR_vfork 58
#define NR_exit 60
#define NR_exit_group 231
#define NR_pwritev 296
#define NR_pwritev2 328
#define NR_clone3 435
/* the syscall's number at its return (the ax register then holds the result) */
#define SYSCALL_NR(regs) ((regs)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
/*
 * arm64 syscall numbers (include/uapi/asm-generic/unistd.h). There is no fork or vfork syscall:
 * glibc's fork, vfork and posix_spawn are clone or clone3 there.
 */
#define NR_write 64
#define NR_pwrite64 68
#define NR_writev 66
#define NR_clone 220
#define NR_exit 93
#define NR_exit_group 94
#define NR_pwritev 70
#define NR_pwritev2 287
#define NR_clone3 435
/* the syscall's number at its return; -1 when a tracer skipped the call, which matches none */
#define SYSCALL_NR(regs) ((regs)->syscallno)
#else
#error "unitmeter's syscall numbers are known for x86 and arm64 only"
#endif

#define UM_S_IFMT 00170000
#define UM_S_IFREG 0100000

static __always_inline bool is_write(long id)
{
	return id == NR_write || id == NR_pwrite64 || id == NR_writev || id == NR_pwritev ||
	       id == NR_pwritev2;
}

static __always_inline bool is_fork(long id)
{
#ifdef NR_fork
	if (id == NR_fork || id == NR_vfork)
		return true;
#endif
	return id == NR_clone || id == NR_clone3;
}

static __always_inline bool fd_is_regular_file(unsigned long fd)
{
	/* probe reads in any case: the file table is not reachable by direct loads */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
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

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid;
	__u32 tgid, tid, mark;

	struct um_proc *proc;

	/* every write, fork and exit of the machine comes here: the mark before any hash lookup */
	if ((!is_write(id) && !is_fork(id) && id != NR_exit && id != NR_exit_group) ||
	    !current_tracked())
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	tgid = pid_tgid >> 32;
	tid = (__u32)pid_tgid;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc)
		return 0;
	if (id == NR_exit || id == NR_exit_group) {
		struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);

		cpu_pending_charge(bpf_get_smp_processor_id(), tid, proc);
		/* before the kernel wakes a joiner (at the exit's mm release): from now on a unit
		 * that opens does not count this thread; the syscall never returns, so once */
		if (th && !th->exit_called) {
			th->exit_called = 1;
			__sync_fetch_and_add(&proc->active_threads, -1);
		}
	} else if (is_fork(id)) {
		__u64 none = 0;

		bpf_map_update_elem(&pending_mm, &tid, &none, BPF_ANY);
	} else if (fd_is_regular_file(PT_REGS_PARM1_CORE_SYSCALL(regs))) {
		mark = 1;
		bpf_map_update_elem(&pending_write, &tid, &mark, BPF_ANY);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	long id = SYSCALL_NR(regs); /* a direct load: this runs at every syscall's return */
	__u64 pid_tgid;
	__u32 tgid, tid;
	struct um_proc *proc;

	/* only a tracked thread's enter left a pending entry to settle */
	if ((!is_write(id) && !is_fork(id)) || !current_tracked())
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	tid = (__u32)pid_tgid;
	if (is_fork(id)) {
		/* the child was bound in sched_process_fork, before this return */
		bpf_map_delete_elem(&pending_mm, &tid);
		return 0;
	}
	if (!bpf_map_lookup_elem(&pending_write, &tid))
		return 0;
	bpf_map_delete_elem(&pending_write, &tid);
	tgid = pid_tgid >> 32;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc || ret <= 0)
		return 0;
	__sync_fetch_and_add(&proc->output_bytes, ret);
	UNIT_ADD(proc->units[0], output_bytes, ret);
	UNIT_ADD(proc->units[1], output_bytes, ret);
	return 0;
}
