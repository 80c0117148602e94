// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The system calls unitmeter watches:
 * - write family: bytes returned on regular files (output_bytes), and of those, the bytes on
 *   files under the node-local tmp dir (tmp_output_bytes, what SLURM's --tmp asks for).
 * - fork family: a tracked thread inside clone/fork/vfork gets an empty pending_mm slot, so the
 *   first unknown mm it touches is taken as its child's copy (rss.bpf.c).
 * - exit: the pages the thread's CPU holds for it are charged now. Its final switch-out comes
 *   after the kernel has woken the thread that joins it, which may close a unit (or open the
 *   next) first; the baseline cannot take another CPU's pages at that edge.
 *
 * Two ways in, the loader loading one (user/trace/kernel.c, syscall_hooks):
 * - The kernel functions the calls go through: fexit of vfs_write and vfs_writev (the file is
 *   an argument, the count the return), fentry and fexit of kernel_clone, fentry of do_exit.
 *   Only those calls pay, each a trampoline's few tens of ns.
 * - The raw sys_enter/sys_exit tracepoints, where trampolines do not attach (no ftrace direct
 *   calls: arm64 before 6.4, kernels without fentry). While a program is attached to them,
 *   every system call of every process on the node takes the kernel's slow path, ~175 ns a
 *   call here with empty programs (BENCHMARKS.md, issue #34). The fd's file is checked on
 *   entry, since the file table may change before exit; the count is known only on exit. Two
 *   raw tracepoints, not one classic tracepoint per syscall: a classic tracepoint link takes
 *   ~70 ms to close, which made start-up plus tear-down over a second.
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

/* The file an fd names in the current task, or NULL. */
static __always_inline struct file *fd_file(unsigned long fd)
{
	/* probe reads in any case: the file table is not reachable by direct loads */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *file = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]))
		return NULL;
	return file;
}

/*
 * Whether the file lies under the group's tmp dir (tmp_dir_dev, tmp_dir_ino: its superblock's
 * s_dev in the kernel's encoding and its inode number, set by the loader). Walks the dentry's parents up
 * to UM_TMP_DIR_DEPTH levels with a bounded loop (a 5.10 verifier takes it; bpf_loop is 5.17).
 * What the walk cannot see: a file deeper than that below the dir; and since a dentry's parents
 * end at its filesystem's root, a file on a filesystem or bind mount mounted inside the dir
 * (its walk stops at that mount's root, below the dir). A bind mount of the dir itself (SLURM's
 * job_container/tmpfs) is seen: its files' parents are the source directory's dentries.
 */
static __always_inline bool file_under_tmp_dir(struct file *file, const struct um_group *g)
{
	__u64 tmp_dir_ino = g->tmp_dir_ino, tmp_dir_dev = g->tmp_dir_dev;
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry), *parent;

	if (!d)
		return false;
	for (int i = 0; i <= UM_TMP_DIR_DEPTH; i++) {
		parent = BPF_CORE_READ(d, d_parent);
		/* the file itself is not the dir: start the comparison at its parent */
		if (!parent || parent == d)
			return false;
		d = parent;
		if (BPF_CORE_READ(d, d_inode, i_ino) == tmp_dir_ino &&
		    BPF_CORE_READ(d, d_sb, s_dev) == tmp_dir_dev)
			return true;
	}
	return false;
}

/* What a write on file is for group: 0 (not a regular file), UM_WRITE_REGULAR, or
 * UM_WRITE_TMP_DIR. */
static __always_inline __u32 file_write_kind(struct file *file, __u32 group)
{
	struct um_group *g = group_get(group);
	struct um_file_key key;
	struct inode *inode;
	__u32 kind, *known;
	umode_t mode;

	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	mode = BPF_CORE_READ(inode, i_mode);
	if ((mode & UM_S_IFMT) != UM_S_IFREG)
		return 0;
	if (!g || !g->tmp_dir_ino)
		return UM_WRITE_REGULAR;
	key.inode = (__u64)inode;
	key.generation = BPF_CORE_READ(inode, i_generation);
	key.group = group;
	known = bpf_map_lookup_elem(&write_kinds, &key);
	if (known)
		return *known;
	/* another filesystem than the tmp dir's (a home or a cluster's shared one): not under it */
	kind = BPF_CORE_READ(inode, i_sb, s_dev) == g->tmp_dir_dev && file_under_tmp_dir(file, g) ?
		       UM_WRITE_TMP_DIR : UM_WRITE_REGULAR;
	bpf_map_update_elem(&write_kinds, &key, &kind, BPF_ANY);
	return kind;
}

/* Bytes a tracked process wrote, of kind (file_write_kind), to it and its open units. */
static __always_inline void write_count(struct um_proc *proc, __u32 kind, long bytes)
{
	if (!kind || bytes <= 0)
		return;
	__sync_fetch_and_add(&proc->output_bytes, bytes);
	UNIT_ADD(proc->units[0], output_bytes, bytes);
	UNIT_ADD(proc->units[1], output_bytes, bytes);
	if (kind == UM_WRITE_TMP_DIR) {
		__sync_fetch_and_add(&proc->tmp_output_bytes, bytes);
		UNIT_ADD(proc->units[0], tmp_output_bytes, bytes);
		UNIT_ADD(proc->units[1], tmp_output_bytes, bytes);
	}
}

/* The current task's process, where it may be tracked (current_tracked) and is. */
static __always_inline struct um_proc *current_proc(void)
{
	__u32 tgid;

	if (!current_tracked())
		return NULL;
	tgid = bpf_get_current_pid_tgid() >> 32;
	return bpf_map_lookup_elem(&procs, &tgid);
}

/*
 * The current thread of proc begins its exit: the pages its CPU holds for it are charged, and,
 * before the kernel wakes a joiner (at the exit's mm release), a unit that opens from now on
 * does not count it; once, however many ways in.
 */
static __always_inline void exit_begins(struct um_proc *proc)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct um_thread *th = bpf_map_lookup_elem(&threads, &tid);

	cpu_pending_charge(bpf_get_smp_processor_id(), tid, proc);
	if (th && !th->exit_called) {
		th->exit_called = 1;
		__sync_fetch_and_add(&proc->active_threads, -1);
	}
}

/* A tracked thread begins a fork: the first unknown mm it touches is its child's (rss.bpf.c). */
static __always_inline void fork_begins(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 none = 0;

	bpf_map_update_elem(&pending_mm, &tid, &none, BPF_ANY);
}

/* The fork returned: the child was bound in sched_process_fork, before this. */
static __always_inline void fork_ends(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&pending_mm, &tid);
}

/* The functions the calls go through (loaded where trampolines attach). */

/* A write returned: its bytes, where the file is a regular one and the writer tracked. */
static __always_inline int write_returned(struct file *file, ssize_t ret)
{
	struct um_proc *proc;

	/* every write of the machine comes here: the count and the mark before any lookup */
	if (ret <= 0 || !(proc = current_proc()))
		return 0;
	write_count(proc, file_write_kind(file, proc->group), ret);
	return 0;
}

SEC("fexit/vfs_write")
int BPF_PROG(handle_vfs_write, struct file *file, const char *buf, size_t count, loff_t *pos,
	     ssize_t ret)
{
	return write_returned(file, ret);
}

SEC("fexit/vfs_writev")
int BPF_PROG(handle_vfs_writev, struct file *file, const void *vec, unsigned long vlen,
	     loff_t *pos, int flags, ssize_t ret)
{
	return write_returned(file, ret);
}

SEC("fentry/kernel_clone")
int BPF_PROG(handle_clone_entry)
{
	if (current_proc())
		fork_begins();
	return 0;
}

SEC("fexit/kernel_clone")
int BPF_PROG(handle_clone_return)
{
	if (current_tracked())
		fork_ends();
	return 0;
}

/* every way a thread ends: exit, exit_group, a fatal signal, another thread's exit_group or exec */
SEC("fentry/do_exit")
int BPF_PROG(handle_exit_entry)
{
	struct um_proc *proc = current_proc();

	if (proc)
		exit_begins(proc);
	return 0;
}

/* The system call tracepoints (loaded where trampolines do not attach). */

SEC("tp_btf/sys_enter")
int BPF_PROG(handle_sys_enter, struct pt_regs *regs, long id)
{
	struct um_proc *proc;
	__u32 mark;

	/* a tracked thread running where its CPU's entry names another: a switch-in not seen */
	if (trust_marks && cpu_running_current(bpf_get_smp_processor_id()) < 0 && current_marked())
		thread_switch_in_late();
	/* every write, fork and exit of the machine comes here: the mark before any hash lookup */
	if (!is_write(id) && !is_fork(id) && id != NR_exit && id != NR_exit_group)
		return 0;
	proc = current_proc();
	if (!proc)
		return 0;
	if (id == NR_exit || id == NR_exit_group) {
		exit_begins(proc);
	} else if (is_fork(id)) {
		fork_begins();
	} else {
		__u32 tid = (__u32)bpf_get_current_pid_tgid();

		mark = file_write_kind(fd_file(PT_REGS_PARM1_CORE_SYSCALL(regs)), proc->group);
		if (mark)
			bpf_map_update_elem(&pending_write, &tid, &mark, BPF_ANY);
	}
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	long id = SYSCALL_NR(regs); /* a direct load: this runs at every syscall's return */
	__u32 tgid, tid, *pending, kind;
	struct um_proc *proc;

	/* only a tracked thread's enter left a pending entry to settle */
	if ((!is_write(id) && !is_fork(id)) || !current_tracked())
		return 0;
	if (is_fork(id)) {
		fork_ends();
		return 0;
	}
	tid = (__u32)bpf_get_current_pid_tgid();
	pending = bpf_map_lookup_elem(&pending_write, &tid);
	if (!pending)
		return 0;
	kind = *pending;
	bpf_map_delete_elem(&pending_write, &tid);
	tgid = bpf_get_current_pid_tgid() >> 32;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc)
		write_count(proc, kind, ret);
	return 0;
}
