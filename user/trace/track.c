// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The tracked processes: one run's command from its exec, attach's target as it is now (its
 * threads and RSS read from /proc, each thread marked for the kernel), and a process another
 * live run measures refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "common/clock.h"
#include "common/fileio.h"
#include "common/log.h"
#include "trace/tracer_internal.h"

/* "RssAnon:    1234 kB" from /proc/PID/status, in bytes; 0 when absent. */
static uint64_t status_kib(const char *status, const char *key)
{
	const char *line = strstr(status, key);

	return line ? strtoull(line + strlen(key), NULL, 10) * 1024 : 0;
}

/* The first field of /proc/PID/task/TID/schedstat: on-CPU time in ns, as se.sum_exec_runtime. */
int task_runtime_ns(pid_t pid, pid_t tid, __u64 *ns)
{
	char path[64], *text;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	text = um_read_text(path);
	if (!text)
		return -errno;
	*ns = strtoull(text, NULL, 10);
	free(text);
	return 0;
}

#define PIDFD_THREAD O_EXCL /* linux/pidfd.h, 6.9: a pidfd for one thread, not its group */

/* The system call itself: glibc's wrapper is 2.36's, newer than the portable build's floor. */
static int pidfd_of(pid_t pid, unsigned int flags)
{
	return (int)syscall(__NR_pidfd_open, pid, flags);
}

/*
 * Put the kernel's tracked mark (tracked_tasks, task storage keyed by a pidfd) on one thread;
 * threads forked later get it in BPF. A thread without it would be skipped by the per-fault
 * programs, so a failure here turns the marks off altogether (tracer__attach).
 */
static int mark_tracked(struct tracer *t, pid_t tid)
{
	int fd, err = 0;
	__u32 mark = 1;

	/* no task storage (the baseline build): the threads map is the mark */
	if (!kernel_build_has_bpf_of_5_17(t->kernel.build))
		return 0;
	fd = pidfd_of(tid, PIDFD_THREAD);
	if (fd < 0)
		fd = pidfd_of(tid, 0); /* before 6.9: a thread-group leader only */
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.tracked_tasks), &fd, &mark, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Enter each thread of pid in the threads map and mark it. While the programs run (an adopted
 * process), only threads no program has entered are added (one the fork program took meanwhile
 * keeps its entry), and a mark that cannot be set turns the marks off at once.
 */
static int track_threads(struct tracer *t, pid_t pid, struct um_proc *proc, bool programs_live)
{
	int fd = bpf_map__fd(t->skel->maps.threads);
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct um_thread th = { .tgid = pid, .group = t->group.tag };
		__u32 tid = strtoul(de->d_name, NULL, 10);

		if (!tid || task_runtime_ns(pid, tid, &th.runtime_seen_ns))
			continue;
		if (mark_tracked(t, tid)) {
			t->marks_failed = true;
			if (programs_live)
				t->skel->bss->trust_marks = 0;
		}
		if (bpf_map_update_elem(fd, &tid, &th, programs_live ? BPF_NOEXIST : BPF_ANY) == 0) {
			proc->live_threads++;
			proc->active_threads++;
			proc->threads_seen++;
		}
	}
	closedir(d);
	return proc->live_threads ? 0 : -ESRCH;
}

/*
 * A process found running (attach, adopted): its RSS members as /proc/PID/status has them, as the
 * figures it starts from and its peak so far. 0, or -errno when it is gone.
 */
static int rss_from_proc(pid_t pid, struct um_proc *proc)
{
	char path[64], *status;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = um_read_text(path);
	if (!status)
		return -errno;
	proc->initial_member_bytes[UM_MM_ANONPAGES] = status_kib(status, "RssAnon:");
	proc->initial_member_bytes[UM_MM_FILEPAGES] = status_kib(status, "RssFile:");
	proc->initial_member_bytes[UM_MM_SHMEMPAGES] = status_kib(status, "RssShmem:");
	free(status);
	proc->peak_rss_bytes = proc->initial_member_bytes[UM_MM_ANONPAGES] +
			       proc->initial_member_bytes[UM_MM_FILEPAGES] +
			       proc->initial_member_bytes[UM_MM_SHMEMPAGES];
	return 0;
}

/* Add bytes to a figure the programs update at the same time (a mapped map: shared memory). */
static void figure_add(__s64 *figure, __s64 bytes)
{
	__atomic_fetch_add(figure, bytes, __ATOMIC_RELAXED);
}

static void figure_raise(__u64 *peak, __u64 value)
{
	__u64 seen = __atomic_load_n(peak, __ATOMIC_RELAXED);

	while (value > seen &&
	       !__atomic_compare_exchange_n(peak, &seen, value, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

/* The run whose group tracks pid: 0 none, else its tag. */
static __u32 tracking_group(const struct tracer *t, pid_t pid)
{
	__u32 key = pid;
	struct um_proc proc;

	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc) ? 0 : proc.group;
}

bool tracer__tracked(const struct tracer *t, pid_t pid)
{
	return tracking_group(t, pid) == t->group.tag;
}

/*
 * A process is one run's: another live run of the node's set that tracks it keeps it. Its
 * group, or NULL (none, this run, or a run that is gone, whose process this run may take).
 */
static const struct um_group *other_owner(const struct tracer *t, pid_t pid)
{
	__u32 group = tracking_group(t, pid);
	const struct um_group *g;

	if (!group || group == t->group.tag || !t->group.groups)
		return NULL;
	g = &t->group.groups[UM_GROUP_SLOT(group)];
	return g->tag == group && !run_group_owner_gone(g) ? g : NULL;
}

int tracer__track(struct tracer *t, pid_t pid, pid_t ppid, bool from_exec)
{
	struct um_proc proc = { .ppid = ppid, .group = t->group.tag, .start_ns = um_monotonic_ns() };
	/* the run's own child is its own; an attach target may be another run's */
	const struct um_group *other = from_exec ? NULL : other_owner(t, pid);
	__u32 key = pid;
	int err;

	if (other) {
		um_err("process %d is traced by another unitmeter run (process %u): a process is "
		       "measured by one run at a time", pid, other->owner_pid);
		return -EBUSY;
	}
	if (from_exec) {
		/* the held child is single-threaded until it execs */
		struct um_thread th = { .tgid = pid, .group = t->group.tag };

		proc.flags = UM_PROC_AWAIT_EXEC;
		proc.live_threads = proc.active_threads = proc.threads_seen = 1;
		err = task_runtime_ns(pid, pid, &th.runtime_seen_ns);
		if (!err && mark_tracked(t, pid))
			t->marks_failed = true;
		if (!err && bpf_map_update_elem(bpf_map__fd(t->skel->maps.threads), &key, &th, BPF_ANY))
			err = -errno;
	} else {
		uint64_t rss;

		err = rss_from_proc(pid, &proc);
		if (err < 0) {
			um_err("cannot start tracking process %d: %s", pid,
			       err == -ENOENT ? "it has exited" : strerror(-err));
			return err;
		}
		rss = proc.peak_rss_bytes;
		/* the process's mm is learned on its next RSS change; until then /proc stands in */
		figure_add(&t->group.me->rss_bytes, (__s64)rss);
		figure_raise(&t->group.me->peak_rss_bytes, (__u64)__atomic_load_n(&t->group.me->rss_bytes,
									   __ATOMIC_RELAXED));
		err = track_threads(t, pid, &proc, false);
	}
	if (!err && bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc, BPF_ANY))
		err = -errno;
	if (err)
		um_err("cannot start tracking process %d: %s", pid, strerror(-err));
	return err;
}

int tracer__adopt(struct tracer *t, pid_t pid, pid_t ppid)
{
	struct um_proc proc = { .ppid = ppid, .group = t->group.tag, .start_ns = um_monotonic_ns() };
	struct um_proc_start rec = { .type = UM_REC_PROC_START, .pid = pid, .ppid = ppid };
	char path[64], *comm;
	__u32 key = pid;
	uint64_t rss;
	int err;

	/* this run's already, or another live run's (which keeps it) */
	if (tracer__tracked(t, pid) || other_owner(t, pid))
		return 0;
	err = rss_from_proc(pid, &proc);
	if (err < 0)
		return err;
	rss = proc.peak_rss_bytes;
	err = track_threads(t, pid, &proc, true);
	if (err)
		return err;
	/* the fork program took it meanwhile (its parent was adopted first): that entry stands */
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.procs), &key, &proc, BPF_NOEXIST))
		return errno == EEXIST ? 0 : -errno;
	/* as tracer__track: /proc stands in for the mm until its next RSS change */
	figure_add(&t->group.me->rss_bytes, (__s64)rss);
	figure_raise(&t->group.me->peak_rss_bytes, (__u64)__atomic_load_n(&t->group.me->rss_bytes, __ATOMIC_RELAXED));
	rec.ts_ns = proc.start_ns;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm = um_read_text(path);
	if (comm) {
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(rec.comm, sizeof(rec.comm), "%s", comm);
		free(comm);
	}
	/* the record the fork program would have sent */
	t->record_fn(t->record_ctx, &rec, sizeof(rec), NULL);
	return 1;
}

size_t tracer__joined(struct tracer *t, pid_t **pids)
{
	size_t n = t->n_joined;

	*pids = t->joined;
	t->n_joined = 0;
	return n;
}
